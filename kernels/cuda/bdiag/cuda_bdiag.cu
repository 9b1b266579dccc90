/* SPDX-License-Identifier: BSD-3-Clause */
/* Block-diagonal operations on the GPU: batched inverse of SPD diagonal blocks (Cholesky, one
 * thread per block, sbm_blk_spd_inverse of blocks/sbm_blocks.h) and D*A / A*D scaling (a team of
 * threads per block). The front end has checked that D is block-diagonal with every block
 * present (inverse) and that the patterns agree. Semantics follow kernels/cpu/bdiag/cpu_bdiag.c. */
#include "cuda_bdiag_kernels.cuh"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

/* ---------------------------------------------------------------------------------------- */
/* Inverse                                                                                  */
/* ---------------------------------------------------------------------------------------- */

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
    /* ~0 set on the device: an iteration that inverts V sends nothing to the device */
    SBM__CU(ctx, cudaMemsetAsync(d_first, 0xff, sizeof *d_first, s), "cudaMemsetAsync (first failed block)");
    {
        const unsigned g = sbm__grid(nnzb, 128);
        /* the square shapes of the list; sbm_blk_spd_inverse unrolled for them */
        sbm_blk_select_shape(b, b, [&](auto shape) {
            using S = decltype(shape);
            constexpr int N = S::r == S::c ? S::r : 0;
            sbm__k_spd_inverse<N><<<g, 128, 0, s>>>(nnzb, b, D->values, lwork, work, d_first);
        });
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
    sbm_blk_select_shape(A->r, A->c, [&](auto shape) {
        constexpr int R = decltype(shape)::r, C = decltype(shape)::c;
        sbm__k_bdiag_scale<R, C><<<g, threads, 0, s>>>(A->nbc, A->nnzb, A->r, A->c, left, D->colptr,
                                                       D->values, A->colptr, A->rowind, A->values,
                                                       B->values);
    });
    SBM__LAUNCHED(ctx, "block-diagonal scaling");
done:
    return st;
}
