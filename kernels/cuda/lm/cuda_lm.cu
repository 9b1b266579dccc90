/* SPDX-License-Identifier: BSD-3-Clause */
/* Levenberg-Marquardt's predicted decrease on the CUDA backend (lm_predicted of the solve layer's
 * table, solve_kernels.h), shared by BA's and SLAM's iterations: a fixed grid of LM_BLOCKS
 * partial sums, each block's joined by a fixed halving tree, then one block joining the
 * partials the same way, so two runs agree bitwise; 8 bytes come back. Compiled with
 * -fmad=false (CMakeLists.txt), as the BA model is: no a*b+c contracted into an FMA. */
#include "cuda_internal.cuh"
#include "solve_kernels.h"

#define LM_THREADS 256 /* threads of both kernels */
#define LM_BLOCKS 256  /* sbm__k_lm_partial's fixed grid */

/* sh[0..LM_THREADS) summed into sh[0] by a fixed halving tree. */
__device__ __forceinline__ void lm_tree(double *sh)
{
    __syncthreads();
    for (int w = LM_THREADS / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w) sh[threadIdx.x] = sh[threadIdx.x] + sh[threadIdx.x + w];
        __syncthreads();
    }
}

/* One partial per block of sum step_i (lambda D_i step_i + gsign g_i). */
__global__ void __launch_bounds__(LM_THREADS)
    sbm__k_lm_partial(int64_t n, double lambda, double gsign, const double *__restrict__ step,
                      const double *__restrict__ D, const double *__restrict__ g,
                      double *__restrict__ part)
{
    __shared__ double sh[LM_THREADS];
    double s = 0.0;
    for (int64_t i = (int64_t)blockIdx.x * LM_THREADS + threadIdx.x; i < n;
         i += (int64_t)LM_BLOCKS * LM_THREADS)
        s = s + step[i] * (lambda * D[i] * step[i] + gsign * g[i]);
    sh[threadIdx.x] = s;
    lm_tree(sh);
    if (threadIdx.x == 0) part[blockIdx.x] = sh[0];
}

/* The partials of sbm__k_lm_partial, halved, into *out. */
__global__ void __launch_bounds__(LM_THREADS)
    sbm__k_lm_final(const double *__restrict__ part, double *out)
{
    __shared__ double sh[LM_THREADS];
    double s = 0.0;
    for (int i = threadIdx.x; i < LM_BLOCKS; i += LM_THREADS) s = s + part[i];
    sh[threadIdx.x] = s;
    lm_tree(sh);
    if (threadIdx.x == 0) *out = 0.5 * sh[0];
}

sbm_status sbm__cuda_lm_predicted(sbm_ctx *ctx, int64_t n, double lambda, const double *D,
                                  double gsign, const double *g, const double *step,
                                  double *h_pred)
{
    sbm_status st = SBM_SUCCESS;
    const cudaStream_t s = sbm__cuda_stream(ctx);
    sbm__carve cv = {0};
    const size_t o_part = sbm__carve_add(&cv, LM_BLOCKS * sizeof(double));
    const size_t o_out = sbm__carve_add(&cv, sizeof(double));
    char *base = NULL;
    double *part, *out;
    SBM__CK(sbm__cuda_enter(ctx));
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, cv.total, (void **)&base));
    part = (double *)(base + o_part);
    out = (double *)(base + o_out);
    sbm__k_lm_partial<<<LM_BLOCKS, LM_THREADS, 0, s>>>(n, lambda, gsign, step, D, g, part);
    SBM__LAUNCHED(ctx, "the predicted decrease");
    sbm__k_lm_final<<<1, LM_THREADS, 0, s>>>(part, out);
    SBM__LAUNCHED(ctx, "the predicted decrease");
    SBM__CK(sbm__cuda_d2h(ctx, h_pred, out, sizeof *h_pred));
done:
    return st;
}
