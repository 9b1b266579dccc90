/* SPDX-License-Identifier: BSD-3-Clause */
/* Vector operations of the CUDA backend for the solvers (src/solve): dot, max |x|, axpy, xpay, scale, on
 * the context's stream.
 *
 * The dot product is deterministic: a fixed grid of SBM__DOT_BLOCKS blocks, whatever the device,
 * each thread summing its grid-stride entries in order, each block reducing its threads by a
 * fixed tree into one partial, and a second one-block pass reducing the partials by the same
 * tree. No atomics: the order depends on n alone, so two runs agree bitwise. The result is the
 * only thing copied to the host (8 bytes, which waits for the stream). max |x| takes the same
 * two passes with max for the sum. */
#include "cuda_internal.cuh"

#define SBM__DOT_BLOCKS 256
#define SBM__DOT_THREADS 256

/* The two reductions: MODE 0 sums x[i]*y[i], 1 takes max |x[i]| (a NaN wins, so a non-finite
 * vector is seen). */
enum { SBM__RED_DOT = 0, SBM__RED_AMAX = 1 };

template <int MODE> __device__ __forceinline__ double sbm__red_join(double a, double b)
{
    if (MODE == SBM__RED_DOT) return a + b;
    return (a > b || a != a) ? a : b;
}

/* sh[0..SBM__DOT_THREADS) joined into sh[0] by a fixed halving tree (every thread calls it). */
template <int MODE> __device__ __forceinline__ void sbm__red_tree(double *sh)
{
    for (int w = SBM__DOT_THREADS / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w)
            sh[threadIdx.x] = sbm__red_join<MODE>(sh[threadIdx.x], sh[threadIdx.x + w]);
        __syncthreads();
    }
}

template <int MODE>
__global__ void __launch_bounds__(SBM__DOT_THREADS)
    sbm__k_red_partial(int64_t n, const double *__restrict__ x, const double *__restrict__ y,
                       double *__restrict__ partial)
{
    __shared__ double sh[SBM__DOT_THREADS];
    double s = 0.0;
    for (int64_t i = (int64_t)blockIdx.x * SBM__DOT_THREADS + threadIdx.x; i < n;
         i += (int64_t)SBM__DOT_BLOCKS * SBM__DOT_THREADS)
        s = MODE == SBM__RED_DOT ? s + x[i] * y[i] : sbm__red_join<MODE>(s, fabs(x[i]));
    sh[threadIdx.x] = s;
    __syncthreads();
    sbm__red_tree<MODE>(sh);
    if (threadIdx.x == 0) partial[blockIdx.x] = sh[0];
}

template <int MODE>
__global__ void __launch_bounds__(SBM__DOT_THREADS)
    sbm__k_red_final(const double *__restrict__ partial, double *__restrict__ out)
{
    __shared__ double sh[SBM__DOT_THREADS];
    double s = 0.0;
    for (int i = threadIdx.x; i < SBM__DOT_BLOCKS; i += SBM__DOT_THREADS)
        s = sbm__red_join<MODE>(s, partial[i]);
    sh[threadIdx.x] = s;
    __syncthreads();
    sbm__red_tree<MODE>(sh);
    if (threadIdx.x == 0) *out = sh[0];
}

/* The element-wise updates, one kernel: MODE 0 y += a x, 1 y = x + a y, 2 y *= a (x unused). */
enum { SBM__AXPY = 0, SBM__XPAY = 1, SBM__SCALE = 2 };

template <int MODE>
__global__ void sbm__k_update(int64_t n, double a, const double *__restrict__ x,
                              double *__restrict__ y)
{
    SBM__GRID_STRIDE(i, n)
    {
        if (MODE == SBM__AXPY) y[i] += a * x[i];
        else if (MODE == SBM__XPAY) y[i] = x[i] + a * y[i];
        else y[i] *= a;
    }
}

template <int MODE>
static sbm_status vec_update(sbm_ctx *ctx, int64_t n, double a, const double *x, double *y,
                             const char *what)
{
    sbm_status st = SBM_SUCCESS;
    SBM__CK(sbm__cuda_enter(ctx));
    sbm__k_update<MODE><<<sbm__grid(n, 256), 256, 0, sbm__cuda_stream(ctx)>>>(n, a, x, y);
    SBM__LAUNCHED(ctx, what);
done:
    return st;
}

/* The reduction MODE of x (and y) into *h_out: the only copy to the host, 8 bytes. */
template <int MODE>
static sbm_status vec_reduce(sbm_ctx *ctx, int64_t n, const double *x, const double *y,
                             double *h_out, const char *what)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    void *ws = NULL;
    double *partial = NULL;
    *h_out = 0.0;
    SBM__CK(sbm__cuda_enter(ctx));
    /* the partials and the result; the pool slot is reused, so a solver loop allocates nothing */
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, (SBM__DOT_BLOCKS + 1) * sizeof(double), &ws));
    partial = (double *)ws;
    sbm__k_red_partial<MODE><<<SBM__DOT_BLOCKS, SBM__DOT_THREADS, 0, s>>>(n, x, y, partial);
    SBM__LAUNCHED(ctx, what);
    sbm__k_red_final<MODE><<<1, SBM__DOT_THREADS, 0, s>>>(partial, partial + SBM__DOT_BLOCKS);
    SBM__LAUNCHED(ctx, what);
    SBM__CK(sbm__cuda_d2h(ctx, h_out, partial + SBM__DOT_BLOCKS, sizeof(double)));
done:
    return st;
}

sbm_status sbm__cuda_vec_dot(sbm_ctx *ctx, int64_t n, const double *x, const double *y,
                             double *h_dot)
{
    return vec_reduce<SBM__RED_DOT>(ctx, n, x, y, h_dot, "dot product");
}

sbm_status sbm__cuda_vec_amax(sbm_ctx *ctx, int64_t n, const double *x, double *h_max)
{
    return vec_reduce<SBM__RED_AMAX>(ctx, n, x, x, h_max, "max |x|");
}

sbm_status sbm__cuda_vec_axpy(sbm_ctx *ctx, int64_t n, double a, const double *x, double *y)
{
    return vec_update<SBM__AXPY>(ctx, n, a, x, y, "axpy");
}

sbm_status sbm__cuda_vec_xpay(sbm_ctx *ctx, int64_t n, const double *x, double a, double *y)
{
    return vec_update<SBM__XPAY>(ctx, n, a, x, y, "xpay");
}

sbm_status sbm__cuda_vec_scale(sbm_ctx *ctx, int64_t n, double a, double *x)
{
    return vec_update<SBM__SCALE>(ctx, n, a, NULL, x, "vector scaling");
}
