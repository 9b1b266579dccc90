/* Vector operations of the CUDA backend for the solvers (src/solve): dot, axpy, xpay, scale, on
 * the context's stream.
 *
 * The dot product is deterministic: a fixed grid of SBM__DOT_BLOCKS blocks, whatever the device,
 * each thread summing its grid-stride entries in order, each block reducing its threads by a
 * fixed tree into one partial, and a second one-block pass reducing the partials by the same
 * tree. No atomics: the order depends on n alone, so two runs agree bitwise. The result is the
 * only thing copied to the host (8 bytes, which waits for the stream). */
#include "cuda_internal.cuh"

#define SBM__DOT_BLOCKS 256
#define SBM__DOT_THREADS 256

/* Sum of sh[0..SBM__DOT_THREADS) into sh[0] by a fixed halving tree (every thread calls it). */
__device__ __forceinline__ void sbm__dot_tree(double *sh)
{
    for (int w = SBM__DOT_THREADS / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
}

__global__ void __launch_bounds__(SBM__DOT_THREADS)
    sbm__k_dot_partial(int64_t n, const double *__restrict__ x, const double *__restrict__ y,
                       double *__restrict__ partial)
{
    __shared__ double sh[SBM__DOT_THREADS];
    double s = 0.0;
    for (int64_t i = (int64_t)blockIdx.x * SBM__DOT_THREADS + threadIdx.x; i < n;
         i += (int64_t)SBM__DOT_BLOCKS * SBM__DOT_THREADS)
        s += x[i] * y[i];
    sh[threadIdx.x] = s;
    __syncthreads();
    sbm__dot_tree(sh);
    if (threadIdx.x == 0) partial[blockIdx.x] = sh[0];
}

__global__ void __launch_bounds__(SBM__DOT_THREADS)
    sbm__k_dot_final(const double *__restrict__ partial, double *__restrict__ out)
{
    __shared__ double sh[SBM__DOT_THREADS];
    double s = 0.0;
    for (int i = threadIdx.x; i < SBM__DOT_BLOCKS; i += SBM__DOT_THREADS) s += partial[i];
    sh[threadIdx.x] = s;
    __syncthreads();
    sbm__dot_tree(sh);
    if (threadIdx.x == 0) *out = sh[0];
}

__global__ void sbm__k_axpy(int64_t n, double a, const double *__restrict__ x,
                            double *__restrict__ y)
{
    SBM__GRID_STRIDE(i, n) y[i] += a * x[i];
}

__global__ void sbm__k_xpay(int64_t n, const double *__restrict__ x, double a,
                            double *__restrict__ y)
{
    SBM__GRID_STRIDE(i, n) y[i] = x[i] + a * y[i];
}

__global__ void sbm__k_scale(int64_t n, double a, double *__restrict__ x)
{
    SBM__GRID_STRIDE(i, n) x[i] *= a;
}

sbm_status sbm__cuda_vec_dot(sbm_ctx *ctx, int64_t n, const double *x, const double *y,
                             double *h_dot)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    void *ws = NULL;
    double *partial = NULL;
    *h_dot = 0.0;
    SBM__CK(sbm__cuda_enter(ctx));
    /* the partials and the result; the pool slot is reused, so a solver loop allocates nothing */
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, (SBM__DOT_BLOCKS + 1) * sizeof(double), &ws));
    partial = (double *)ws;
    sbm__k_dot_partial<<<SBM__DOT_BLOCKS, SBM__DOT_THREADS, 0, s>>>(n, x, y, partial);
    SBM__LAUNCHED(ctx, "dot product (partial sums)");
    sbm__k_dot_final<<<1, SBM__DOT_THREADS, 0, s>>>(partial, partial + SBM__DOT_BLOCKS);
    SBM__LAUNCHED(ctx, "dot product (final sum)");
    SBM__CK(sbm__cuda_d2h(ctx, h_dot, partial + SBM__DOT_BLOCKS, sizeof(double)));
done:
    return st;
}

sbm_status sbm__cuda_vec_axpy(sbm_ctx *ctx, int64_t n, double a, const double *x, double *y)
{
    sbm_status st = SBM_SUCCESS;
    SBM__CK(sbm__cuda_enter(ctx));
    sbm__k_axpy<<<sbm__grid(n, 256), 256, 0, sbm__cuda_stream(ctx)>>>(n, a, x, y);
    SBM__LAUNCHED(ctx, "axpy");
done:
    return st;
}

sbm_status sbm__cuda_vec_xpay(sbm_ctx *ctx, int64_t n, const double *x, double a, double *y)
{
    sbm_status st = SBM_SUCCESS;
    SBM__CK(sbm__cuda_enter(ctx));
    sbm__k_xpay<<<sbm__grid(n, 256), 256, 0, sbm__cuda_stream(ctx)>>>(n, x, a, y);
    SBM__LAUNCHED(ctx, "xpay");
done:
    return st;
}

sbm_status sbm__cuda_vec_scale(sbm_ctx *ctx, int64_t n, double a, double *x)
{
    sbm_status st = SBM_SUCCESS;
    SBM__CK(sbm__cuda_enter(ctx));
    sbm__k_scale<<<sbm__grid(n, 256), 256, 0, sbm__cuda_stream(ctx)>>>(n, a, x);
    SBM__LAUNCHED(ctx, "vector scaling");
done:
    return st;
}
