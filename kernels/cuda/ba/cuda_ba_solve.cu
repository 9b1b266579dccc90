/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA backend's operation of the device-resident BA iteration (semantics of
 * kernels/cpu/ba/cpu_ba_solve.c): the block diagonal of the Schur complement, one thread per entry
 * of D summing its row of W's blocks in the row list's order (deterministic, no atomics). */
#include "ba_kernels.h"
#include "cuda_internal.cuh"

/* ---------------------------------------------------------------------------------------- */
/* Block diagonal of S = U - Y W^T                                                          */
/* ---------------------------------------------------------------------------------------- */

/* Thread t: entry (r, c) of block i, t = i p^2 + r + p c. */
__global__ void sbm__k_ba_schur_diagonal(int64_t nc, int p, int q, const double *__restrict__ uval,
                                         const int64_t *__restrict__ udiag,
                                         const double *__restrict__ yval,
                                         const double *__restrict__ wval,
                                         const int64_t *__restrict__ wrow_ptr,
                                         const int64_t *__restrict__ wrow_blk,
                                         double *__restrict__ dval)
{
    const int64_t pp = (int64_t)p * p, pq = (int64_t)p * q;
    SBM__GRID_STRIDE(t, nc * pp)
    {
        const int64_t i = t / pp;
        const int e = (int)(t - i * pp);
        const int r = e % p, c = e / p;
        double s = 0.0;
        for (int64_t k = wrow_ptr[i]; k < wrow_ptr[i + 1]; k++) {
            const double *y = yval + wrow_blk[k] * pq;
            const double *w = wval + wrow_blk[k] * pq;
            for (int a = 0; a < q; a++) s += y[r + p * a] * w[c + p * a];
        }
        const int64_t u = udiag[i];
        dval[t] = (u >= 0 ? uval[u * pp + e] : 0.0) - s;
    }
}

sbm_status sbm__cuda_ba_schur_diagonal(sbm_ctx *ctx, const sbm_cbc *U, const int64_t *udiag,
                                       const sbm_cbc *Y, const sbm_cbc *W,
                                       const int64_t *wrow_ptr, const int64_t *wrow_blk,
                                       sbm_cbc *D)
{
    sbm_status st = SBM_SUCCESS;
    const int64_t nc = W->nbr, total = nc * W->r * W->r;
    SBM__CK(sbm__cuda_enter(ctx));
    if (total == 0) goto done;
    sbm__k_ba_schur_diagonal<<<sbm__grid(total, 128), 128, 0, sbm__cuda_stream(ctx)>>>(
        nc, W->r, W->c, U->values, udiag, Y->values, W->values, wrow_ptr, wrow_blk, D->values);
    SBM__LAUNCHED(ctx, "block diagonal of the Schur complement");
done:
    return st;
}
