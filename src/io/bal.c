/* SPDX-License-Identifier: BSD-3-Clause */
/* BAL (Bundle Adjustment in the Large) problems: reading (plain or compressed) and writing.
 *
 * Decisions recorded here:
 *   - The reader is token based after the header: BAL writers differ in how they break lines
 *     (one parameter per line, or several), so any whitespace separates values; every message
 *     still names the line of the offending token.
 *   - Counts in the header are checked against the int32 indices; arrays grow as the file is
 *     read (capped by the header's counts), so a corrupt header cannot ask for terabytes before
 *     the file has shown that it holds the data.
 *   - Every value must be finite; camera and point indices must be in range. Content after the
 *     last point parameter is an error (a truncated or concatenated file is not silently
 *     half-read). */
#define _POSIX_C_SOURCE 200809L

#include "io_internal.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void sbm_bal_destroy(sbm_bal_problem *p)
{
    if (!p) return;
    sbm_allocator a = p->a;
    sbm__free_with(&a, p->obs_cam);
    sbm__free_with(&a, p->obs_pt);
    sbm__free_with(&a, p->obs_xy);
    sbm__free_with(&a, p->cam);
    sbm__free_with(&a, p->pts);
    sbm__free_with(&a, p->cam_const);
    sbm__free_with(&a, p->pt_const);
    sbm__free_with(&a, p->cam_prior);
    sbm__free_with(&a, p->prior_mean);
    sbm__free_with(&a, p->prior_info);
    sbm__free_with(&a, p);
}

sbm_bal_info sbm_bal_get_info(const sbm_bal_problem *p)
{
    sbm_bal_info info;
    memset(&info, 0, sizeof info);
    if (!p) return info;
    info.cameras = p->ncam;
    info.points = p->npts;
    info.observations = p->nobs;
    info.obs_camera = p->obs_cam;
    info.obs_point = p->obs_pt;
    info.obs_xy = p->obs_xy;
    info.camera_params = p->cam;
    info.point_params = p->pts;
    info.camera_constant = p->cam_const;
    info.point_constant = p->pt_const;
    info.camera_priors = p->nprior;
    info.camera_has_prior = p->nprior ? p->cam_prior : NULL;
    info.prior_mean = p->nprior ? p->prior_mean : NULL;
    info.prior_information = p->nprior ? p->prior_info : NULL;
    info.in_memory = p->in_memory;
    return info;
}

/* A problem with arrays for the given counts (uninitialised). */
sbm_status sbm__bal_alloc(sbm_ctx *ctx, int64_t ncam, int64_t npts, int64_t nobs,
                           sbm_bal_problem **out)
{
    *out = NULL;
    sbm_allocator a = sbm__host_allocator_of(ctx);
    sbm_bal_problem *p = sbm__alloc_with(ctx, &a, 1, sizeof *p, "the BAL problem");
    if (!p) return SBM_ERR_OUT_OF_MEMORY;
    memset(p, 0, sizeof *p);
    p->a = a;
    p->ncam = ncam;
    p->npts = npts;
    p->nobs = nobs;
    p->obs_cam = sbm__alloc_with(ctx, &a, (size_t)nobs, sizeof(int32_t), "observation cameras");
    p->obs_pt = p->obs_cam ? sbm__alloc_with(ctx, &a, (size_t)nobs, sizeof(int32_t),
                                           "observation points") : NULL;
    p->obs_xy = p->obs_pt ? sbm__alloc_with(ctx, &a, (size_t)nobs, 2 * sizeof(double),
                                          "observations") : NULL;
    p->cam = p->obs_xy ? sbm__alloc_with(ctx, &a, (size_t)ncam, 9 * sizeof(double),
                                       "camera parameters") : NULL;
    p->pts = p->cam ? sbm__alloc_with(ctx, &a, (size_t)npts, 3 * sizeof(double),
                                    "point parameters") : NULL;
    if (!p->pts) {
        sbm_status st = ctx->last_status;
        sbm_bal_destroy(p);
        return st;
    }
    *out = p;
    return SBM_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading                                                                                  */
/* ---------------------------------------------------------------------------------------- */

typedef struct bal_reader {
    sbm__text_reader rd; /* lines */
    char *cur;           /* next unread character of the current line (NULL: need a line) */
} bal_reader;

/* Next whitespace-separated token (NUL-terminated in place), or *tok = NULL at the end. */
static sbm_status bal_token(bal_reader *br, char **tok)
{
    *tok = NULL;
    for (;;) {
        if (br->cur) {
            char *s = br->cur;
            while (*s && isspace((unsigned char)*s)) s++;
            if (*s) {
                char *e = s;
                while (*e && !isspace((unsigned char)*e)) e++;
                br->cur = *e ? e + 1 : e;
                *e = '\0';
                *tok = s;
                return SBM_SUCCESS;
            }
        }
        SBM__TRY(sbm__text_next_line(&br->rd));
        if (!br->rd.text) {
            br->cur = NULL;
            return SBM_SUCCESS;
        }
        br->cur = br->rd.text;
    }
}

/* A token that must be there: what names it for the message. */
static sbm_status bal_expect(bal_reader *br, char **tok, const char *what)
{
    SBM__TRY(bal_token(br, tok));
    if (!*tok) return sbm__text_error(&br->rd, SBM_ERR_PARSE, "the file ends before %s", what);
    return SBM_SUCCESS;
}

static sbm_status bal_int(bal_reader *br, const char *what, int64_t lo, int64_t hi, int64_t *v)
{
    char *tok, *end;
    SBM__TRY(bal_expect(br, &tok, what));
    errno = 0;
    long long x = strtoll(tok, &end, 10);
    if (end == tok || *end != '\0')
        return sbm__text_error(&br->rd, SBM_ERR_PARSE, "%s: '%s' is not an integer", what, tok);
    if (errno == ERANGE || x < lo || x > hi)
        return sbm__text_error(&br->rd, SBM_ERR_PARSE,
                               "%s: %s is out of range (%" PRId64 " to %" PRId64 ")", what, tok, lo,
                               hi);
    *v = (int64_t)x;
    return SBM_SUCCESS;
}

static sbm_status bal_double(bal_reader *br, const char *what, double *v)
{
    char *tok, *end;
    SBM__TRY(bal_expect(br, &tok, what));
    double x = strtod(tok, &end);
    if (end == tok || *end != '\0')
        return sbm__text_error(&br->rd, SBM_ERR_PARSE, "%s: '%s' is not a number", what, tok);
    if (!isfinite(x))
        return sbm__text_error(&br->rd, SBM_ERR_PARSE, "%s: '%s' is not finite", what, tok);
    *v = x;
    return SBM_SUCCESS;
}

/* Grow a host array to hold at least need elements (capped at max). */
static sbm_status grow(sbm_ctx *ctx, void **arr, int64_t *cap, int64_t need, int64_t max,
                       size_t elem, const char *what)
{
    if (need <= *cap) return SBM_SUCCESS;
    int64_t nc = *cap < 4096 ? 4096 : *cap * 2;
    if (nc > max) nc = max;
    if (nc < need) nc = need;
    int ok;
    size_t bytes = sbm__mul_size(ctx, (size_t)nc, elem, what, &ok);
    if (!ok) return SBM_ERR_OVERFLOW;
    void *p = sbm__host_alloc(ctx, bytes, what);
    if (!p) return SBM_ERR_OUT_OF_MEMORY;
    if (*arr) {
        memcpy(p, *arr, (size_t)*cap * elem);
        sbm__host_free(ctx, *arr);
    }
    *arr = p;
    *cap = nc;
    return SBM_SUCCESS;
}

sbm_status sbm_bal_read(sbm_ctx *ctx, const char *path, sbm_bal_problem **problem)
{
    SBM__ENTER(ctx, "sbm_bal_read");
    if (!problem) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument problem is NULL");
    *problem = NULL;
    if (!path) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument path is NULL");

    bal_reader br;
    memset(&br, 0, sizeof br);
    int32_t *oc = NULL, *op = NULL;
    double *oxy = NULL, *par = NULL;
    int64_t coc = 0, cop = 0, coxy = 0, cpar = 0;
    sbm_bal_problem *p = NULL;
    char what[160];
    int64_t ncam = 0, npts = 0, nobs = 0;

    sbm_status st = sbm__text_open(ctx, path, &br.rd);
    if (st != SBM_SUCCESS) return st;
    if ((st = bal_int(&br, "the camera count", 0, INT32_MAX, &ncam)) != SBM_SUCCESS) goto done;
    if ((st = bal_int(&br, "the point count", 0, INT32_MAX, &npts)) != SBM_SUCCESS) goto done;
    if ((st = bal_int(&br, "the observation count", 0, INT64_MAX / 64, &nobs)) != SBM_SUCCESS)
        goto done;
    const int64_t header_line = br.rd.line;

    for (int64_t k = 0; k < nobs; k++) {
        int64_t c, q;
        double x, y;
        if ((st = grow(ctx, (void **)&oc, &coc, k + 1, nobs, sizeof(int32_t),
                       "observation cameras")) != SBM_SUCCESS ||
            (st = grow(ctx, (void **)&op, &cop, k + 1, nobs, sizeof(int32_t),
                       "observation points")) != SBM_SUCCESS ||
            (st = grow(ctx, (void **)&oxy, &coxy, 2 * (k + 1), 2 * nobs, sizeof(double),
                       "observations")) != SBM_SUCCESS)
            goto done;
        snprintf(what, sizeof what, "observation %" PRId64 " of %" PRId64 ": the camera index",
                 k + 1, nobs);
        if ((st = bal_int(&br, what, INT64_MIN, INT64_MAX, &c)) != SBM_SUCCESS) goto done;
        if (c < 0 || c >= ncam) {
            st = sbm__text_error(&br.rd, SBM_ERR_PARSE,
                                 "observation %" PRId64 ": camera index %" PRId64
                                 " is out of range (the header says %" PRId64 " cameras)",
                                 k + 1, c, ncam);
            goto done;
        }
        snprintf(what, sizeof what, "observation %" PRId64 " of %" PRId64 ": the point index",
                 k + 1, nobs);
        if ((st = bal_int(&br, what, INT64_MIN, INT64_MAX, &q)) != SBM_SUCCESS) goto done;
        if (q < 0 || q >= npts) {
            st = sbm__text_error(&br.rd, SBM_ERR_PARSE,
                                 "observation %" PRId64 ": point index %" PRId64
                                 " is out of range (the header says %" PRId64 " points)",
                                 k + 1, q, npts);
            goto done;
        }
        snprintf(what, sizeof what, "observation %" PRId64 " of %" PRId64 ": x", k + 1, nobs);
        if ((st = bal_double(&br, what, &x)) != SBM_SUCCESS) goto done;
        snprintf(what, sizeof what, "observation %" PRId64 " of %" PRId64 ": y", k + 1, nobs);
        if ((st = bal_double(&br, what, &y)) != SBM_SUCCESS) goto done;
        oc[k] = (int32_t)c;
        op[k] = (int32_t)q;
        oxy[2 * k] = x;
        oxy[2 * k + 1] = y;
    }
    const int64_t npar = 9 * ncam + 3 * npts;
    for (int64_t k = 0; k < npar; k++) {
        if ((st = grow(ctx, (void **)&par, &cpar, k + 1, npar, sizeof(double), "parameters")) !=
            SBM_SUCCESS)
            goto done;
        if (k < 9 * ncam)
            snprintf(what, sizeof what, "parameter %d of camera %" PRId64 " (of %" PRId64 ")",
                     (int)(k % 9) + 1, k / 9, ncam);
        else
            snprintf(what, sizeof what, "coordinate %d of point %" PRId64 " (of %" PRId64 ")",
                     (int)((k - 9 * ncam) % 3) + 1, (k - 9 * ncam) / 3, npts);
        if ((st = bal_double(&br, what, &par[k])) != SBM_SUCCESS) goto done;
    }
    char *extra;
    if ((st = bal_token(&br, &extra)) != SBM_SUCCESS) goto done;
    if (extra) {
        st = sbm__text_error(&br.rd, SBM_ERR_PARSE,
                             "unexpected '%.40s' after the last point (the header on line %" PRId64
                             " says %" PRId64 " cameras, %" PRId64 " points, %" PRId64
                             " observations)",
                             extra, header_line, ncam, npts, nobs);
        goto done;
    }

    if ((st = sbm__bal_alloc(ctx, ncam, npts, nobs, &p)) != SBM_SUCCESS) goto done;
    if (nobs > 0) {
        memcpy(p->obs_cam, oc, (size_t)nobs * sizeof(int32_t));
        memcpy(p->obs_pt, op, (size_t)nobs * sizeof(int32_t));
        memcpy(p->obs_xy, oxy, (size_t)nobs * 2 * sizeof(double));
    }
    if (ncam > 0) memcpy(p->cam, par, (size_t)ncam * 9 * sizeof(double));
    if (npts > 0) memcpy(p->pts, par + 9 * ncam, (size_t)npts * 3 * sizeof(double));
    *problem = p;
    st = SBM_SUCCESS;

done:
    sbm__text_close(&br.rd);
    if (oc) sbm__host_free(ctx, oc);
    if (op) sbm__host_free(ctx, op);
    if (oxy) sbm__host_free(ctx, oxy);
    if (par) sbm__host_free(ctx, par);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Writing                                                                                  */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm_bal_write(sbm_ctx *ctx, const char *path, const sbm_bal_problem *p)
{
    SBM__ENTER(ctx, "sbm_bal_write");
    if (!path) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument path is NULL");
    if (!p) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument problem is NULL");
    for (int64_t k = 0; k < 2 * p->nobs; k++)
        if (!isfinite(p->obs_xy[k]))
            return sbm__error(ctx, SBM_ERR_NOT_FINITE,
                              "argument problem: coordinate %d of observation %" PRId64 " is %g",
                              (int)(k % 2) + 1, k / 2, p->obs_xy[k]);
    for (int64_t k = 0; k < 9 * p->ncam; k++)
        if (!isfinite(p->cam[k]))
            return sbm__error(ctx, SBM_ERR_NOT_FINITE,
                              "argument problem: parameter %d of camera %" PRId64 " is %g",
                              (int)(k % 9) + 1, k / 9, p->cam[k]);
    for (int64_t k = 0; k < 3 * p->npts; k++)
        if (!isfinite(p->pts[k]))
            return sbm__error(ctx, SBM_ERR_NOT_FINITE,
                              "argument problem: coordinate %d of point %" PRId64 " is %g",
                              (int)(k % 3) + 1, k / 3, p->pts[k]);
    sbm__text_writer w;
    SBM__TRY(sbm__text_create(ctx, path, &w));
    sbm_status st = sbm__text_printf(&w, "%" PRId64 " %" PRId64 " %" PRId64 "\n", p->ncam, p->npts,
                                     p->nobs);
    for (int64_t k = 0; k < p->nobs && st == SBM_SUCCESS; k++)
        st = sbm__text_printf(&w, "%d %d %.17g %.17g\n", (int)p->obs_cam[k], (int)p->obs_pt[k],
                              p->obs_xy[2 * k], p->obs_xy[2 * k + 1]);
    for (int64_t k = 0; k < 9 * p->ncam && st == SBM_SUCCESS; k++)
        st = sbm__text_printf(&w, "%.17g\n", p->cam[k]);
    for (int64_t k = 0; k < 3 * p->npts && st == SBM_SUCCESS; k++)
        st = sbm__text_printf(&w, "%.17g\n", p->pts[k]);
    if (st != SBM_SUCCESS) {
        sbm__text_abort(&w);
        return st;
    }
    return sbm__text_commit(&w);
}
