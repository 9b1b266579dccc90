/* Bundle adjustment normal equations and the Schur complement.
 *
 * The system: for every observation the 2x9 camera and 2x3 point Jacobian blocks of the BAL
 * model (src/geometry/geometry.c) are accumulated on the host into U = Jc^T Jc, V = Jp^T Jp, W = Jc^T Jp
 * and g = -J^T r (one pass, in observation order, so the sums are deterministic), then uploaded
 * into CBC matrices of fixed pattern in the context's memory. The Schur complement of the system
 * is in ba_schur.c. */
#include "ba_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Marquardt's scaling of the damping, clamped as Ceres does: a parameter the data does not
 * constrain still gets some damping, and a huge diagonal cannot overflow. */
#define DAMP_MIN 1e-6
#define DAMP_MAX 1e32

struct sbm_ba_system {
    int64_t nc;            /* cameras */
    int64_t np;            /* points */
    int64_t nobs;          /* observations */
    sbm_cbc *U;            /* nc x nc blocks of 9x9, block diagonal (context memory) */
    sbm_cbc *V;            /* np x np blocks of 3x3, block diagonal */
    sbm_cbc *W;            /* nc x np blocks of 9x3 */
    double *gc;            /* context memory, 9*nc */
    double *gp;            /* context memory, 3*np */
    double *h_U;           /* host: undamped U values (81*nc) */
    double *h_V;           /* host: undamped V values (9*np) */
    double *h_W;           /* host: W values (27*nnzb) */
    double *h_g;           /* host: [gc; gp] */
    double *h_scratch;     /* host: damped values before the upload */
    int32_t *obs_block;    /* W block of each observation */
    int64_t *w_colptr;     /* host pattern of W */
    int32_t *w_rowind;
    double cost;           /* at the linearisation point */
    double lambda;         /* current damping */
    int valid;             /* 0 after a linearisation that failed half-way */
    sbm_allocator host_a;  /* allocator of the host arrays and the struct */
    sbm_allocator dev_a;   /* allocator of gc, gp */
};

void sbm_ba_system_destroy(sbm_ba_system *s)
{
    if (!s) return;
    sbm_cbc_destroy(s->U);
    sbm_cbc_destroy(s->V);
    sbm_cbc_destroy(s->W);
    sbm__free_with(&s->dev_a, s->gc);
    sbm__free_with(&s->dev_a, s->gp);
    sbm_allocator a = s->host_a;
    sbm__free_with(&a, s->h_U);
    sbm__free_with(&a, s->h_V);
    sbm__free_with(&a, s->h_W);
    sbm__free_with(&a, s->h_g);
    sbm__free_with(&a, s->h_scratch);
    sbm__free_with(&a, s->obs_block);
    sbm__free_with(&a, s->w_colptr);
    sbm__free_with(&a, s->w_rowind);
    sbm__free_with(&a, s);
}

sbm_ba_system_info sbm_ba_system_get_info(const sbm_ba_system *s)
{
    sbm_ba_system_info info;
    memset(&info, 0, sizeof info);
    if (!s) return info;
    info.U = s->U;
    info.V = s->V;
    info.W = s->W;
    info.gc = s->gc;
    info.gp = s->gp;
    info.cost = s->cost;
    info.lambda = s->lambda;
    info.cameras = s->nc;
    info.points = s->np;
    return info;
}

sbm_status sbm_ba_system_create(sbm_ctx *ctx, const sbm_bal_problem *problem,
                                sbm_ba_system **system)
{
    SBM__ENTER(ctx, "sbm_ba_system_create");
    if (!system) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument system is NULL");
    *system = NULL;
    if (!problem) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument problem is NULL");
    const sbm_bal_info pi = sbm_bal_get_info(problem);
    const int64_t nc = pi.cameras, np = pi.points, nobs = pi.observations;

    sbm_allocator ha = sbm__host_allocator_of(ctx);
    sbm_ba_system *s = sbm__alloc_with(ctx, &ha, 1, sizeof *s, "the BA system");
    if (!s) return SBM_ERR_OUT_OF_MEMORY;
    memset(s, 0, sizeof *s);
    s->host_a = ha;
    s->dev_a = ctx->allocator;
    s->nc = nc, s->np = np, s->nobs = nobs;
    s->valid = 1; /* all zero until the first linearisation */
    sbm_status st = SBM_SUCCESS;
    int64_t *cnt = NULL;

    /* W's pattern: the distinct cameras of every point, increasing. */
    s->w_colptr = sbm__alloc_with(ctx, &ha, (size_t)np + 1, sizeof(int64_t), "W column pointers");
    s->obs_block = s->w_colptr ? sbm__alloc_with(ctx, &ha, (size_t)nobs, sizeof(int32_t),
                                               "observation blocks") : NULL;
    s->w_rowind = s->obs_block ? sbm__alloc_with(ctx, &ha, (size_t)nobs, sizeof(int32_t),
                                               "W block rows") : NULL;
    cnt = s->w_rowind ? sbm__host_alloc(ctx, (size_t)(np + 1) * sizeof(int64_t), "point counts")
                      : NULL;
    if (!cnt) {
        st = ctx->last_status;
        goto fail;
    }
    memset(cnt, 0, (size_t)(np + 1) * sizeof(int64_t));
    for (int64_t k = 0; k < nobs; k++) cnt[pi.obs_point[k] + 1]++;
    for (int64_t j = 0; j < np; j++) cnt[j + 1] += cnt[j];
    /* bucket the cameras by point (obs_block temporarily holds observation ids) */
    for (int64_t k = 0; k < nobs; k++) {
        const int64_t at = cnt[pi.obs_point[k]]++;
        s->w_rowind[at] = pi.obs_camera[k];
        s->obs_block[k] = (int32_t)at;
    }
    /* cnt[j] is now the end of bucket j; sort each bucket and drop repeated cameras */
    int64_t nnzb = 0, begin = 0;
    s->w_colptr[0] = 0;
    for (int64_t j = 0; j < np; j++) {
        const int64_t end = cnt[j];
        int32_t *b = s->w_rowind + begin;
        const int64_t m = end - begin;
        for (int64_t a = 1; a < m; a++) { /* insertion sort: a point has a few cameras */
            int32_t v = b[a];
            int64_t c = a - 1;
            while (c >= 0 && b[c] > v) b[c + 1] = b[c], c--;
            b[c + 1] = v;
        }
        for (int64_t a = 0; a < m; a++)
            if (a == 0 || b[a] != b[a - 1]) s->w_rowind[nnzb++] = b[a];
        s->w_colptr[j + 1] = nnzb;
        begin = end;
    }
    /* block of every observation: binary search of its camera within its point's column */
    for (int64_t k = 0; k < nobs; k++) {
        const int64_t j = pi.obs_point[k];
        int64_t lo = s->w_colptr[j], hi = s->w_colptr[j + 1] - 1;
        const int32_t c = pi.obs_camera[k];
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (s->w_rowind[mid] < c)
                lo = mid + 1;
            else
                hi = mid;
        }
        s->obs_block[k] = (int32_t)lo;
    }

    if ((st = SBM__NESTED(ctx, sbm_cbc_create(ctx, &s->W, nc, np, 9, 3, s->w_colptr,
                                              s->w_rowind, NULL))) != SBM_SUCCESS)
        goto fail;
    if ((st = sbm__bdiag_pattern_create(ctx, nc, 9, &s->U)) != SBM_SUCCESS) goto fail;
    if ((st = sbm__bdiag_pattern_create(ctx, np, 3, &s->V)) != SBM_SUCCESS) goto fail;
    s->gc = sbm__vec_alloc(ctx, 9 * nc, "gc");
    s->gp = s->gc ? sbm__vec_alloc(ctx, 3 * np, "gp") : NULL;
    s->h_U = s->gp ? sbm__alloc_with(ctx, &ha, (size_t)nc, 81 * sizeof(double), "U values") : NULL;
    s->h_V = s->h_U ? sbm__alloc_with(ctx, &ha, (size_t)np, 9 * sizeof(double), "V values") : NULL;
    s->h_W = s->h_V ? sbm__alloc_with(ctx, &ha, (size_t)nnzb, 27 * sizeof(double), "W values")
                    : NULL;
    s->h_g = s->h_W ? sbm__alloc_with(ctx, &ha, (size_t)(9 * nc + 3 * np), sizeof(double),
                                    "gradient") : NULL;
    s->h_scratch = s->h_g ? sbm__alloc_with(ctx, &ha, (size_t)(81 * nc > 9 * np ? 81 * nc : 9 * np),
                                          sizeof(double), "damped values") : NULL;
    if (!s->h_scratch) {
        st = ctx->last_status;
        goto fail;
    }
    memset(s->h_U, 0, (size_t)nc * 81 * sizeof(double));
    memset(s->h_V, 0, (size_t)np * 9 * sizeof(double));
    memset(s->h_W, 0, (size_t)nnzb * 27 * sizeof(double));
    memset(s->h_g, 0, (size_t)(9 * nc + 3 * np) * sizeof(double));
    if ((st = sbm__vec_upload(ctx, s->gc, s->h_g, 9 * nc)) != SBM_SUCCESS ||
        (st = sbm__vec_upload(ctx, s->gp, s->h_g + 9 * nc, 3 * np)) != SBM_SUCCESS)
        goto fail;
    sbm__host_free(ctx, cnt);
    *system = s;
    return SBM_SUCCESS;

fail:
    if (cnt) sbm__host_free(ctx, cnt);
    sbm_ba_system_destroy(s);
    return st;
}

/* Upload U and V with damping lambda. */
static sbm_status upload_damped(sbm_ctx *ctx, sbm_ba_system *s, double lambda)
{
    double *d = s->h_scratch;
    memcpy(d, s->h_U, (size_t)s->nc * 81 * sizeof(double));
    if (lambda != 0.0)
        for (int64_t i = 0; i < s->nc; i++)
            for (int a = 0; a < 9; a++) {
                double *e = d + 81 * i + 10 * a;
                *e += lambda * fmin(fmax(*e, DAMP_MIN), DAMP_MAX);
            }
    SBM__TRY(sbm__vec_upload(ctx, s->U->values, d, 81 * s->nc));
    memcpy(d, s->h_V, (size_t)s->np * 9 * sizeof(double));
    if (lambda != 0.0)
        for (int64_t j = 0; j < s->np; j++)
            for (int a = 0; a < 3; a++) {
                double *e = d + 9 * j + 4 * a;
                *e += lambda * fmin(fmax(*e, DAMP_MIN), DAMP_MAX);
            }
    SBM__TRY(sbm__vec_upload(ctx, s->V->values, d, 9 * s->np));
    s->lambda = lambda;
    return SBM_SUCCESS;
}

sbm_status sbm_ba_linearize(sbm_ctx *ctx, sbm_ba_system *s, const sbm_bal_problem *problem)
{
    SBM__ENTER(ctx, "sbm_ba_linearize");
    if (!s) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument system is NULL");
    if (!problem) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument problem is NULL");
    SBM__TRY(sbm__check_cbc_arg(ctx, "system", s->U));
    const sbm_bal_info pi = sbm_bal_get_info(problem);
    if (pi.cameras != s->nc || pi.points != s->np || pi.observations != s->nobs)
        return sbm__error(ctx, SBM_ERR_DIMENSION_MISMATCH,
                          "argument problem has %" PRId64 " cameras, %" PRId64 " points, %" PRId64
                          " observations; the system was made for %" PRId64 ", %" PRId64
                          ", %" PRId64,
                          pi.cameras, pi.points, pi.observations, s->nc, s->np, s->nobs);
    for (int64_t k = 0; k < s->nobs; k++) {
        const int64_t j = pi.obs_point[k], b = s->obs_block[k];
        if (b < s->w_colptr[j] || b >= s->w_colptr[j + 1] || s->w_rowind[b] != pi.obs_camera[k])
            return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                              "argument problem: observation %" PRId64
                              " (camera %d, point %" PRId64
                              ") is not the one the system was made with",
                              k, (int)pi.obs_camera[k], j);
    }
    /* First the residuals alone: a point on a camera's image plane (or a non-finite
     * parameter) is refused before anything in the system changes. */
    for (int64_t k = 0; k < s->nobs; k++) {
        double pred[2];
        sbm__bal_project(pi.camera_params + 9 * (int64_t)pi.obs_camera[k],
                         pi.point_params + 3 * (int64_t)pi.obs_point[k], pred, NULL, NULL);
        if (!isfinite(pred[0]) || !isfinite(pred[1]))
            return sbm__error(ctx, SBM_ERR_NOT_FINITE,
                              "observation %" PRId64 " (camera %d, point %d): the prediction is "
                              "not finite (a non-finite parameter, or the point lies on the "
                              "camera's image plane)",
                              k, (int)pi.obs_camera[k], (int)pi.obs_point[k]);
    }
    const int64_t nc = s->nc, np = s->np;
    double *hU = s->h_U, *hV = s->h_V, *hW = s->h_W, *gc = s->h_g, *gp = s->h_g + 9 * nc;
    memset(hU, 0, (size_t)nc * 81 * sizeof(double));
    memset(hV, 0, (size_t)np * 9 * sizeof(double));
    memset(hW, 0, (size_t)s->w_colptr[np] * 27 * sizeof(double));
    memset(s->h_g, 0, (size_t)(9 * nc + 3 * np) * sizeof(double));
    double cost = 0.0;
    for (int64_t k = 0; k < s->nobs; k++) {
        const int64_t c = pi.obs_camera[k], j = pi.obs_point[k];
        double pred[2], Jc[18], Jp[6];
        sbm__bal_project(pi.camera_params + 9 * c, pi.point_params + 3 * j, pred, Jc, Jp);
        const double r0 = pred[0] - pi.obs_xy[2 * k], r1 = pred[1] - pi.obs_xy[2 * k + 1];
        int finite = isfinite(r0) && isfinite(r1);
        for (int a = 0; a < 18 && finite; a++) finite = isfinite(Jc[a]);
        if (!finite) {
            /* only a Jacobian overflowing (a point within ~1e-150 of the image plane) gets
             * here; the host sums are partial, so the system has no linearisation now */
            s->valid = 0;
            return sbm__error(ctx, SBM_ERR_NOT_FINITE,
                              "observation %" PRId64 " (camera %" PRId64 ", point %" PRId64
                              "): the Jacobian is not finite (the point lies on the camera's "
                              "image plane); the system must be linearised again",
                              k, c, j);
        }
        cost += r0 * r0 + r1 * r1;
        double *u = hU + 81 * c, *v = hV + 9 * j, *w = hW + 27 * (int64_t)s->obs_block[k];
        for (int b = 0; b < 9; b++) {
            const double jb0 = Jc[2 * b], jb1 = Jc[2 * b + 1];
            for (int a = 0; a < 9; a++) u[a + 9 * b] += Jc[2 * a] * jb0 + Jc[2 * a + 1] * jb1;
            for (int a = 0; a < 3; a++) {
                /* W block (9x3): (Jc^T Jp)(b, a), column-major b + 9a */
                w[b + 9 * a] += jb0 * Jp[2 * a] + jb1 * Jp[2 * a + 1];
            }
            gc[9 * c + b] -= jb0 * r0 + jb1 * r1;
        }
        for (int b = 0; b < 3; b++) {
            for (int a = 0; a < 3; a++)
                v[a + 3 * b] += Jp[2 * a] * Jp[2 * b] + Jp[2 * a + 1] * Jp[2 * b + 1];
            gp[3 * j + b] -= Jp[2 * b] * r0 + Jp[2 * b + 1] * r1;
        }
    }
    s->cost = 0.5 * cost;
    s->valid = 1;
    SBM__TRY(sbm__vec_upload(ctx, s->W->values, hW, 27 * s->w_colptr[np]));
    SBM__TRY(sbm__vec_upload(ctx, s->gc, gc, 9 * nc));
    SBM__TRY(sbm__vec_upload(ctx, s->gp, gp, 3 * np));
    return upload_damped(ctx, s, 0.0);
}

sbm_status sbm_ba_set_damping(sbm_ctx *ctx, sbm_ba_system *s, double lambda)
{
    SBM__ENTER(ctx, "sbm_ba_set_damping");
    if (!s) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument system is NULL");
    SBM__TRY(sbm__check_cbc_arg(ctx, "system", s->U));
    if (!s->valid)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument system: its last linearisation failed; linearise it again");
    if (!(lambda >= 0.0) || !isfinite(lambda))
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument lambda = %g must be finite and >= 0", lambda);
    return upload_damped(ctx, s, lambda);
}

const double *sbm__ba_system_host_gradient(const sbm_ba_system *s) { return s->h_g; }

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

void sbm__ba_damping_diagonal(const sbm_ba_system *s, double *out)
{
    for (int64_t i = 0; i < s->nc; i++)
        for (int a = 0; a < 9; a++)
            out[9 * i + a] = fmin(fmax(s->h_U[81 * i + 10 * a], DAMP_MIN), DAMP_MAX);
    double *o = out + 9 * s->nc;
    for (int64_t j = 0; j < s->np; j++)
        for (int a = 0; a < 3; a++)
            o[3 * j + a] = fmin(fmax(s->h_V[9 * j + 4 * a], DAMP_MIN), DAMP_MAX);
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
static void damped_v_block(const sbm_ba_system *s, int64_t j, double v[9])
{
    memcpy(v, s->h_V + 9 * j, 9 * sizeof(double));
    for (int a = 0; a < 3; a++)
        v[4 * a] += s->lambda * fmin(fmax(v[4 * a], DAMP_MIN), DAMP_MAX);
}

int64_t sbm__ba_npd_point(const sbm_ba_system *s)
{
    for (int64_t j = 0; j < s->np; j++) {
        double v[9], vinv[9];
        damped_v_block(s, j, v);
        if (sbm__host_spd_inverse(3, v, vinv) != 0) return j;
    }
    return -1;
}

/* Block diagonal of S = U - W V^-1 W^T at damping lambda, on the host (the block-Jacobi
 * preconditioner of matrix-free PCG): nc blocks of 9x9 into out. */
sbm_status sbm__ba_schur_diagonal_host(sbm_ctx *ctx, const sbm_ba_system *s, double *out)
{
    const double lambda = s->lambda;
    memcpy(out, s->h_U, (size_t)s->nc * 81 * sizeof(double));
    for (int64_t i = 0; i < s->nc; i++)
        for (int a = 0; a < 9; a++) {
            double *e = out + 81 * i + 10 * a;
            *e += lambda * fmin(fmax(*e, DAMP_MIN), DAMP_MAX);
        }
    for (int64_t j = 0; j < s->np; j++) {
        double v[9], vinv[9];
        damped_v_block(s, j, v);
        if (sbm__host_spd_inverse(3, v, vinv) != 0) continue; /* the Schur step reports it */
        for (int64_t k = s->w_colptr[j]; k < s->w_colptr[j + 1]; k++) {
            const double *w = s->h_W + 27 * k;
            double y[27]; /* W_k V^-1 */
            for (int a = 0; a < 3; a++)
                for (int r = 0; r < 9; r++)
                    y[r + 9 * a] = w[r] * vinv[3 * a] + w[r + 9] * vinv[1 + 3 * a] +
                                   w[r + 18] * vinv[2 + 3 * a];
            double *d = out + 81 * (int64_t)s->w_rowind[k];
            for (int c = 0; c < 9; c++)
                for (int r = 0; r < 9; r++)
                    d[r + 9 * c] -= y[r] * w[c] + y[r + 9] * w[c + 9] + y[r + 18] * w[c + 18];
        }
    }
    (void)ctx;
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
    double *rhs = NULL;
    if (h_rhs) {
        rhs = sbm__vec_alloc(ctx, 9 * s->nc, "rhs");
        if (!rhs) return SBM_ERR_OUT_OF_MEMORY;
    }
    sbm_cbc *Sm = NULL;
    sbm_status st = SBM__NESTED(ctx, sbm_ba_schur(ctx, s->U, s->V, s->W, s->gc, s->gp, &Sm,
                                                  rhs));
    if (st == SBM_SUCCESS && h_rhs) st = sbm__vec_download(ctx, h_rhs, rhs, 9 * s->nc);
    sbm__free(ctx, rhs);
    if (st != SBM_SUCCESS) {
        sbm_cbc_destroy(Sm);
        return st;
    }
    *S = Sm;
    return SBM_SUCCESS;
}
