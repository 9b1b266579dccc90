/* Block-diagonal operations on the GPU: batched inverse of SPD diagonal blocks (Cholesky, one
 * thread per block, sbm_blk_spd_inverse of src/blocks/sbm_blocks.h) and D*A / A*D scaling (a team of
 * threads per block). The front end has checked that D is block-diagonal with every block
 * present (inverse) and that the patterns agree. Semantics follow src/cpu/cpu_bdiag.c. */
#include "cuda_internal.cuh"
#include "sbm_blocks.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

/* ---------------------------------------------------------------------------------------- */
/* Inverse                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Block q: copy its lower triangle into the scratch l, check it is finite, factor, invert into
 * inv and mirror the lower triangle so the result is exactly symmetric (as LAPACK's dpotri plus
 * the CPU backend's mirroring give). A failing block records its index in *first (minimum over
 * blocks: an integer atomic, so the reported block is deterministic). N_ > 0: compile-time
 * size. */
template <int N_>
__global__ void sbm__k_spd_inverse(int64_t nnzb, int n_rt, const double *__restrict__ d,
                                   double *__restrict__ l, double *__restrict__ inv,
                                   unsigned long long *first)
{
    const int n = N_ ? N_ : n_rt;
    const int64_t nn = (int64_t)n * n;
    SBM__GRID_STRIDE(q, nnzb)
    {
        const double *a = d + q * nn;
        double *w = l + q * nn;
        double *x = inv + q * nn;
        int bad = 0;
        for (int cc = 0; cc < n; cc++)
            for (int i = 0; i < n; i++) {
                const double v = i >= cc ? a[i + cc * n] : 0.0;
                if (!isfinite(v)) bad = 1;
                w[i + cc * n] = v;
            }
        if (!bad) bad = sbm_blk_spd_inverse(n, w, x) != 0;
        if (bad) {
            atomicMin(first, (unsigned long long)q);
        } else {
            for (int cc = 0; cc < n; cc++)
                for (int i = cc + 1; i < n; i++) x[cc + i * n] = x[i + cc * n];
        }
    }
}

sbm_status sbm__cuda_bdiag_inverse(sbm_ctx *ctx, const sbm_cbc *D, sbm_cbc *Dinv)
{
    sbm_status st = SBM_SUCCESS;
    const int b = D->r;
    const int64_t bb = (int64_t)b * b, nnzb = D->nnzb;
    unsigned long long h_first = ~0ull, *d_first;
    double *work, *lwork, *h_blk = NULL;
    char *base = NULL;
    sbm__carve cv = {0};
    const size_t o_first = sbm__carve_add(&cv, sizeof(unsigned long long));
    const size_t o_work = sbm__carve_add(&cv, (size_t)nnzb * bb * sizeof(double));
    const size_t o_l = sbm__carve_add(&cv, (size_t)nnzb * bb * sizeof(double));
    cudaStream_t s = sbm__cuda_stream(ctx);
    SBM__CK(sbm__cuda_enter(ctx));
    if (nnzb == 0) goto done;
    /* into scratch first: on failure Dinv (possibly D itself) is left as it was */
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, cv.total, (void **)&base));
    d_first = (unsigned long long *)(base + o_first);
    work = (double *)(base + o_work);
    lwork = (double *)(base + o_l);
    SBM__CK(sbm__cuda_h2d(ctx, d_first, &h_first, sizeof h_first));
    {
        const unsigned g = sbm__grid(nnzb, 128);
        switch (b) {
#define SBM_X_(N)                                                                               \
    case N:                                                                                     \
        sbm__k_spd_inverse<N><<<g, 128, 0, s>>>(nnzb, b, D->values, lwork, work, d_first);      \
        break;
            SBM_X_(1) SBM_X_(2) SBM_X_(3) SBM_X_(4) SBM_X_(5) SBM_X_(6) SBM_X_(7) SBM_X_(8) SBM_X_(9)
#undef SBM_X_
        default:
            sbm__k_spd_inverse<0><<<g, 128, 0, s>>>(nnzb, b, D->values, lwork, work, d_first);
        }
        SBM__LAUNCHED(ctx, "batched SPD inverse");
    }
    SBM__CK(sbm__cuda_d2h(ctx, &h_first, d_first, sizeof h_first));
    if (h_first != ~0ull) {
        /* Diagnose the first failing block on the host with the CPU backend's wording: the
         * first non-finite value of its lower triangle, else the order of its first leading
         * minor that is not positive. */
        const int64_t q = (int64_t)h_first;
        int32_t j = 0;
        h_blk = (double *)malloc((size_t)(2 * bb) * sizeof(double));
        if (!h_blk) {
            st = sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory",
                            (size_t)(2 * bb) * sizeof(double));
            goto done;
        }
        SBM__CK(sbm__cuda_d2h(ctx, h_blk, D->values + q * bb, (size_t)bb * sizeof(double)));
        SBM__CK(sbm__cuda_d2h(ctx, &j, D->rowind + q, sizeof j));
        for (int cc = 0; cc < b; cc++)
            for (int i = cc; i < b; i++)
                if (!isfinite(h_blk[i + cc * b])) {
                    st = sbm__error(ctx, SBM_ERR_NOT_FINITE,
                                    "argument D: value %g at (%d, %d) of diagonal block %" PRId32
                                    " is not finite",
                                    h_blk[i + cc * b], i, cc, j);
                    goto done;
                }
        for (int cc = 0; cc < b; cc++)
            for (int i = 0; i < cc; i++) h_blk[i + cc * b] = 0.0;
        {
            const int minor = sbm_blk_spd_inverse(b, h_blk, h_blk + bb);
            st = sbm__error(ctx, SBM_ERR_NOT_POSITIVE_DEFINITE,
                            "argument D: diagonal block %" PRId32 " (%dx%d) is not positive "
                            "definite (its leading minor of order %d is not)",
                            j, b, b, minor > 0 ? minor : 1);
        }
        goto done;
    }
    SBM__CK(sbm__cuda_d2d(ctx, Dinv->values, work, (size_t)nnzb * bb * sizeof(double)));
done:
    free(h_blk);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Scaling                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* B_q = D_ii * A_q (left; i = block row of q) or A_q * D_jj (right; j = block column). A team
 * of R*C threads per block, one per element; every thread of the CTA reads its element's sum
 * before any writes (barrier), so B may be A. A missing diagonal block of D counts as zero. */
template <int R_, int C_>
__global__ void sbm__k_bdiag_scale(int64_t nbc, int64_t nnzb, int r_rt, int c_rt, int left,
                                   const int64_t *__restrict__ dptr,
                                   const double *__restrict__ dval, const int64_t *__restrict__ aptr,
                                   const int32_t *__restrict__ arow, const double *av, double *bv)
{
    const int R = R_ ? R_ : r_rt, C = C_ ? C_ : c_rt;
    const int T = R * C, K = left ? R : C;
    const int teams = blockDim.x / T;
    const int team = threadIdx.x / T;
    const int o = threadIdx.x - team * T;
    const int i = o % R, j = o / R;
    const int64_t rc = (int64_t)T, kk = (int64_t)K * K;
    /* every thread runs the same number of rounds, so the barriers match */
    for (int64_t q0 = (int64_t)blockIdx.x * teams; q0 < nnzb; q0 += (int64_t)gridDim.x * teams) {
        const int64_t q = q0 + team;
        const bool active = team < teams && q < nnzb;
        double acc = 0.0;
        if (active) {
            const int64_t col = sbm__upper_bound(aptr, 0, nbc + 1, q) - 1;
            const int64_t dj = left ? arow[q] : col;
            const int64_t d0 = dptr[dj];
            if (dptr[dj + 1] > d0) {
                const double *dblk = dval + d0 * kk;
                const double *ablk = av + q * rc;
                if (left)
                    for (int p = 0; p < K; p++) acc += dblk[i + p * K] * ablk[p + j * R];
                else
                    for (int p = 0; p < K; p++) acc += ablk[i + p * R] * dblk[p + j * K];
            }
        }
        __syncthreads();
        if (active) bv[q * rc + o] = acc;
        __syncthreads();
    }
}

sbm_status sbm__cuda_bdiag_scale(sbm_ctx *ctx, sbm_side side, const sbm_cbc *D, const sbm_cbc *A,
                                 sbm_cbc *B)
{
    sbm_status st = SBM_SUCCESS;
    const int left = side == SBM_SIDE_LEFT;
    const int T = A->r * A->c;
    const int teams = T >= 256 ? 1 : 256 / T;
    const int threads = teams * T;
    const unsigned g = sbm__grid((A->nnzb + teams - 1) / teams, 1);
    cudaStream_t s = sbm__cuda_stream(ctx);
    SBM__CK(sbm__cuda_enter(ctx));
    if (A->nnzb == 0) goto done;
#define SBM_X_(R, C)                                                                            \
    if (A->r == (R) && A->c == (C)) {                                                           \
        sbm__k_bdiag_scale<R, C><<<g, threads, 0, s>>>(A->nbc, A->nnzb, A->r, A->c, left,       \
                                                       D->colptr, D->values, A->colptr,         \
                                                       A->rowind, A->values, B->values);        \
        SBM__LAUNCHED(ctx, "block-diagonal scaling");                                           \
        goto done;                                                                              \
    }
    SBM_BLOCK_SHAPES(SBM_X_)
#undef SBM_X_
    sbm__k_bdiag_scale<0, 0><<<g, threads, 0, s>>>(A->nbc, A->nnzb, A->r, A->c, left, D->colptr,
                                                   D->values, A->colptr, A->rowind, A->values,
                                                   B->values);
    SBM__LAUNCHED(ctx, "block-diagonal scaling");
done:
    return st;
}
