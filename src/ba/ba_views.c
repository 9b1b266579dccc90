/* SPDX-License-Identifier: BSD-3-Clause */
/* Host views of the BA system for the solver (ba_lm.c): the first point whose damped V block is
 * not SPD (a failed step's message), S's size from W's pattern, and the one-shot reduction.
 *
 * The values live in the context's memory (ba.c); on a device backend the views download what
 * they read, once per linearisation, into a host mirror (sbm__ba_mirror_get). The device-resident
 * iteration (ba_internal.h: sbm__ba_gradient_max, sbm__ba_predicted_decrease) needs none of
 * this. */
#include "ba_system.h"
#include "sbm_damp.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One host array of n doubles, allocated at the first use. */
static int mirror_fetch(sbm_ctx *ctx, double **h, const double *src, int64_t n)
{
    if (!*h) *h = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!*h) {
        sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %" PRId64 " doubles of host "
                   "memory for a view of the BA system", n);
        return 0;
    }
    return sbm__vec_download(ctx, *h, src, n) == SBM_SUCCESS;
}

#define SBM__BA_MIRROR_V 2u

/* The host mirror with the arrays named by the SBM__BA_MIRROR_* bits of `what` up to date
 * (downloads on a device backend). @return NULL (error recorded in s->ctx) when a download
 * fails. */
static const sbm__ba_mirror *sbm__ba_mirror_get(const sbm_ba_system *s, unsigned what)
{
    sbm__ba_mirror *m = s->mirror;
    if (!m->owned) return m;
    sbm_ctx *ctx = s->ctx;
    const unsigned need = what & ~m->current;
    if ((need & SBM__BA_MIRROR_V) && !mirror_fetch(ctx, &m->V, s->V_und, 9 * s->np)) return NULL;
    m->current |= need;
    return m;
}

void sbm__ba_append_message(sbm_ctx *ctx, const char *fmt, ...)
{
    const size_t len = strlen(ctx->message);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->message + len, SBM__MSG_SIZE - len, fmt, ap);
    va_end(ap);
}

/* V's block j at the system's damping. */
static void damped_v_block(const sbm_ba_system *s, const double *hV, int64_t j, double v[9])
{
    memcpy(v, hV + 9 * j, 9 * sizeof(double));
    for (int a = 0; a < 3; a++)
        v[4 * a] = sbm_blk_marquardt(v[4 * a], s->lambda);
}

int64_t sbm__ba_npd_point(const sbm_ba_system *s)
{
    const sbm__ba_mirror *m = sbm__ba_mirror_get(s, SBM__BA_MIRROR_V);
    if (!m) return -1; /* the download failed: its error is recorded */
    for (int64_t j = 0; j < s->np; j++) {
        double v[9], vinv[9];
        damped_v_block(s, m->V, j, v);
        if (sbm__host_spd_inverse(3, v, vinv) != 0) return j;
    }
    return -1;
}

sbm_status sbm__ba_schur_blocks(sbm_ctx *ctx, const sbm_ba_system *s, int64_t *blocks_S,
                                int64_t *blocks_W)
{
    const int64_t nc = s->nc, np = s->np, nnzb = s->w_colptr[np];
    /* W by rows (the points of each camera), then one sweep per camera marking the cameras
     * that share a point with it */
    int64_t *rowptr = sbm__host_alloc(ctx, (size_t)(2 * nc + 1) * sizeof(int64_t), "W rows");
    int64_t *pts = rowptr ? sbm__host_alloc(ctx, (size_t)(nnzb + 1) * sizeof(int64_t), "W points")
                          : NULL;
    if (!pts) {
        if (rowptr) sbm__host_free(ctx, rowptr);
        return SBM_ERR_OUT_OF_MEMORY;
    }
    int64_t *mark = rowptr + nc + 1;
    memset(rowptr, 0, (size_t)(nc + 1) * sizeof(int64_t));
    for (int64_t k = 0; k < nnzb; k++) rowptr[s->w_rowind[k] + 1]++;
    for (int64_t i = 0; i < nc; i++) rowptr[i + 1] += rowptr[i], mark[i] = -1;
    for (int64_t j = 0; j < np; j++)
        for (int64_t k = s->w_colptr[j]; k < s->w_colptr[j + 1]; k++)
            pts[rowptr[s->w_rowind[k]]++] = j;
    for (int64_t i = nc; i > 0; i--) rowptr[i] = rowptr[i - 1];
    rowptr[0] = 0;
    int64_t count = nc; /* U's diagonal blocks */
    for (int64_t i = 0; i < nc; i++)
        for (int64_t a = rowptr[i]; a < rowptr[i + 1]; a++)
            for (int64_t k = s->w_colptr[pts[a]]; k < s->w_colptr[pts[a] + 1]; k++) {
                const int64_t c = s->w_rowind[k];
                if (c > i && mark[c] != i) mark[c] = i, count++;
            }
    sbm__host_free(ctx, pts);
    sbm__host_free(ctx, rowptr);
    *blocks_S = count;
    *blocks_W = nnzb;
    return SBM_SUCCESS;
}

sbm_status sbm_ba_system_reduce(sbm_ctx *ctx, const sbm_ba_system *s, sbm_cbc **S, double *h_rhs)
{
    SBM__ENTER(ctx, "sbm_ba_system_reduce");
    if (!S) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument S is NULL");
    *S = NULL;
    if (!s) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument system is NULL");
    SBM__TRY(sbm__check_cbc_arg(ctx, "system", s->U));
    if (!s->valid)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument system: its last linearisation failed; linearise it again");
    const sbm_ba_system_info si = sbm_ba_system_get_info(s);
    double *rhs = NULL;
    if (h_rhs) {
        rhs = sbm__vec_alloc(ctx, 9 * s->nc, "rhs");
        if (!rhs) return SBM_ERR_OUT_OF_MEMORY;
    }
    sbm_cbc *Sm = NULL;
    /* the system's own matrices and vectors, which fit together */
    sbm_status st = SBM__INNER(ctx, "sbm_ba_schur",
                               sbm__ba_schur(ctx, s->U, s->V, s->W, si.gc, si.gp, &Sm, rhs));
    if (st == SBM_SUCCESS && h_rhs) st = sbm__vec_download(ctx, h_rhs, rhs, 9 * s->nc);
    sbm__free(ctx, rhs);
    if (st != SBM_SUCCESS) {
        sbm_cbc_destroy(Sm);
        return st;
    }
    *S = Sm;
    return SBM_SUCCESS;
}
