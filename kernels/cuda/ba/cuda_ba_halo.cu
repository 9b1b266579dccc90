/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA backend's halo kernels of the distributed BA solver (semantics of
 * kernels/cpu/ba/cpu_ba_halo.c): one thread per entry, sums in the list's order (rank order),
 * no atomics, so every rank holding a shared point computes the same bits. */
#include "ba_kernels.h"
#include "cuda_internal.cuh"
#include "sbm_damp.h"

#define HALO_THREADS 256

__global__ void sbm__k_ba_halo_pack(int64_t n, int w, const int32_t *__restrict__ idx,
                                    const double *__restrict__ src, double *__restrict__ buf)
{
    SBM__GRID_STRIDE(t, n * w)
    {
        const int64_t e = t / w;
        buf[t] = src[(int64_t)idx[e] * w + (t - e * w)];
    }
}

__global__ void sbm__k_ba_halo_sum(int64_t nsum, int w, const int64_t *__restrict__ ptr,
                                   const int32_t *__restrict__ ent,
                                   const int32_t *__restrict__ pt,
                                   const double *__restrict__ buf, double *__restrict__ dst)
{
    SBM__GRID_STRIDE(t, nsum * w)
    {
        const int64_t s = t / w;
        const int c = (int)(t - s * w);
        double v = 0.0;
        for (int64_t e = ptr[s]; e < ptr[s + 1]; e++) v += buf[(int64_t)ent[e] * w + c];
        dst[(int64_t)pt[s] * w + c] = v;
    }
}

__global__ void sbm__k_ba_damp_scale(int64_t n, int b, const double *__restrict__ und,
                                     double *__restrict__ D)
{
    SBM__GRID_STRIDE(t, n)
    {
        const int64_t i = t / b;
        const int a = (int)(t - i * b);
        D[t] = sbm_blk_damp_scale(und[(int64_t)b * b * i + (b + 1) * a]);
    }
}

sbm_status sbm__cuda_ba_halo_pack(sbm_ctx *ctx, int64_t n, int w, const int32_t *idx,
                                  const double *src, double *buf)
{
    sbm_status st = SBM_SUCCESS;
    SBM__CK(sbm__cuda_enter(ctx));
    if (n > 0) {
        sbm__k_ba_halo_pack<<<sbm__grid(n * w, HALO_THREADS), HALO_THREADS, 0,
                              sbm__cuda_stream(ctx)>>>(n, w, idx, src, buf);
        SBM__LAUNCHED(ctx, "the halo packing");
    }
done:
    return st;
}

sbm_status sbm__cuda_ba_halo_sum(sbm_ctx *ctx, int64_t nsum, int w, const int64_t *ptr,
                                 const int32_t *ent, const int32_t *pt, const double *buf,
                                 double *dst)
{
    sbm_status st = SBM_SUCCESS;
    SBM__CK(sbm__cuda_enter(ctx));
    if (nsum > 0) {
        sbm__k_ba_halo_sum<<<sbm__grid(nsum * w, HALO_THREADS), HALO_THREADS, 0,
                             sbm__cuda_stream(ctx)>>>(nsum, w, ptr, ent, pt, buf, dst);
        SBM__LAUNCHED(ctx, "the halo sum");
    }
done:
    return st;
}

sbm_status sbm__cuda_ba_damp_scale(sbm_ctx *ctx, int64_t nblocks, int b, const double *und,
                                   double *D)
{
    sbm_status st = SBM_SUCCESS;
    const int64_t n = nblocks * b;
    SBM__CK(sbm__cuda_enter(ctx));
    if (n > 0) {
        sbm__k_ba_damp_scale<<<sbm__grid(n, HALO_THREADS), HALO_THREADS, 0,
                               sbm__cuda_stream(ctx)>>>(n, b, und, D);
        SBM__LAUNCHED(ctx, "the damping scale");
    }
done:
    return st;
}
