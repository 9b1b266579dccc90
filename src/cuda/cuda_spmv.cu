/* Block SpMV on the GPU: y = alpha*op(A)*x + beta*y for CBC A. Deterministic: every y entry is
 * owned by one thread that sums in a fixed order (no floating-point atomics). The summation
 * order and the treatment of alpha and beta are the CPU backend's (src/cpu_spmv.c).
 *
 *   op N  one thread per scalar row of y, over the row's blocks in column order. A is stored by
 *         columns, so the row view (block-row pointers, the blocks' columns, the permutation to
 *         stored blocks) is built once per pattern and cached in the context.
 *   op T  one thread per scalar entry of y = one column of a stored block column, reading the
 *         CSC storage directly.
 *
 * Versions of each, compiled for the shapes of SBM_BLOCK_SHAPES: v1 walks the blocks one after
 * the other, each a chain of dependent loads (index -> block values and x); v2 and v3 load the
 * indices of a batch of U blocks first, then all their values and x entries, then sum them in
 * the same order, so a thread has U blocks' loads in flight instead of one (same results
 * bitwise); v2 with larger batches than v3, which leaves room for more resident threads. Which
 * one runs is decided per shape and op in sbm__spmv_version from H100 measurements
 * (bench/NOTES-gpu.md). Shapes outside the list use the runtime-size v1. */
#include "cuda_internal.cuh"
#include "sbm_blocks.h"

#include <stdlib.h>
#include <string.h>

/* R_, C_: compile-time block shape (0: runtime). */
template <int R_, int C_>
__global__ void sbm__k_spmv_n(int64_t nbr, int r_rt, int c_rt, double alpha,
                              const int64_t *__restrict__ rowptr, const int32_t *__restrict__ colind,
                              const int64_t *__restrict__ perm, const double *__restrict__ av,
                              const double *__restrict__ x, double beta, double *__restrict__ y)
{
    const int R = R_ ? R_ : r_rt, C = C_ ? C_ : c_rt;
    const int64_t rc = (int64_t)R * C;
    SBM__GRID_STRIDE(row, nbr * R)
    {
        const int64_t i = row / R;
        const int ii = (int)(row - i * R);
        double acc = beta == 0.0 ? 0.0 : beta == 1.0 ? y[row] : beta * y[row];
        if (alpha != 0.0) {
            const int64_t t1 = rowptr[i + 1];
            for (int64_t t = rowptr[i]; t < t1; t++) {
                const double *a = av + perm[t] * rc + ii;
                const double *xj = x + (int64_t)colind[t] * C;
                if (C_) {
#pragma unroll
                    for (int jj = 0; jj < C_; jj++) acc += __ldg(a + jj * R) * (alpha * __ldg(xj + jj));
                } else {
                    for (int jj = 0; jj < C; jj++) acc += __ldg(a + jj * R) * (alpha * __ldg(xj + jj));
                }
            }
        }
        y[row] = acc;
    }
}

template <int R_, int C_>
__global__ void sbm__k_spmv_t(int64_t nbc, int r_rt, int c_rt, double alpha,
                              const int64_t *__restrict__ colptr, const int32_t *__restrict__ rowind,
                              const double *__restrict__ av, const double *__restrict__ x,
                              double beta, double *__restrict__ y)
{
    const int R = R_ ? R_ : r_rt, C = C_ ? C_ : c_rt;
    const int64_t rc = (int64_t)R * C;
    SBM__GRID_STRIDE(idx, nbc * C)
    {
        const int64_t j = idx / C;
        const int e = (int)(idx - j * C);
        double acc = 0.0;
        if (alpha != 0.0) {
            const int64_t p1 = colptr[j + 1];
            for (int64_t p = colptr[j]; p < p1; p++) {
                const double *a = av + p * rc + (int64_t)e * R;
                const double *xi = x + (int64_t)rowind[p] * R;
                double s = 0.0;
                if (R_) {
#pragma unroll
                    for (int i = 0; i < R_; i++) s += __ldg(a + i) * __ldg(xi + i);
                } else {
                    for (int i = 0; i < R; i++) s += __ldg(a + i) * __ldg(xi + i);
                }
                acc += 1.0 * s;
            }
        }
        y[idx] = (beta == 0.0 ? 0.0 : beta * y[idx]) + alpha * acc;
    }
}

/* Loads n consecutive doubles (n compile-time), 16 bytes at a time when V == 2 (the caller
 * guarantees 16-byte alignment then). */
template <int N, int V>
__device__ __forceinline__ void sbm__ldv(const double *__restrict__ p, double *out)
{
    if (V == 2) {
#pragma unroll
        for (int h = 0; h < N / 2; h++) {
            const double2 v = __ldg((const double2 *)p + h);
            out[2 * h] = v.x;
            out[2 * h + 1] = v.y;
        }
        if (N % 2) out[N - 1] = __ldg(p + N - 1);
    } else {
#pragma unroll
        for (int h = 0; h < N; h++) out[h] = __ldg(p + h);
    }
}

/* Blocks per batch of the batched kernels, whose values (2*U*n doubles) are held in registers:
 * more blocks per batch put more loads in flight per thread (BIG = 1: v2), fewer leave room for
 * more resident threads (BIG = 0: v3). */
template <int N, int BIG>
struct sbm__spmv_batch {
    static constexpr int U = BIG ? (N <= 3 ? 8 : N == 4 ? 6 : N <= 6 ? 4 : 3) : (N <= 4 ? 4 : 2);
};

/* op N, batched (v2, v3): as sbm__k_spmv_n, with the indices of U blocks loaded before their
 * values; VX = 2: x read 16 bytes at a time. */
template <int R, int C, int VX, int BIG>
__global__ void __launch_bounds__(256)
    sbm__k_spmv_n2(int64_t nbr, double alpha, const int64_t *__restrict__ rowptr,
                   const int32_t *__restrict__ colind, const int64_t *__restrict__ perm,
                   const double *__restrict__ av, const double *__restrict__ x, double beta,
                   double *__restrict__ y)
{
    constexpr int U = sbm__spmv_batch<C, BIG>::U;
    constexpr int64_t rc = (int64_t)R * C;
    SBM__GRID_STRIDE(row, nbr * R)
    {
        const int64_t i = row / R;
        const int ii = (int)(row - i * R);
        double acc = beta == 0.0 ? 0.0 : beta == 1.0 ? y[row] : beta * y[row];
        if (alpha != 0.0) {
            const int64_t t1 = rowptr[i + 1];
            for (int64_t t = rowptr[i]; t < t1; t += U) {
                int64_t pp[U];
                int32_t cc[U];
#pragma unroll
                for (int u = 0; u < U; u++) {
                    const bool ok = t + u < t1;
                    pp[u] = ok ? __ldg(perm + t + u) : 0;
                    cc[u] = ok ? __ldg(colind + t + u) : 0;
                }
                double a[U][C], xv[U][C];
#pragma unroll
                for (int u = 0; u < U; u++) {
                    if (t + u < t1) {
#pragma unroll
                        for (int jj = 0; jj < C; jj++) a[u][jj] = __ldg(av + pp[u] * rc + ii + jj * R);
                        sbm__ldv<C, VX>(x + (int64_t)cc[u] * C, xv[u]);
                    }
                }
#pragma unroll
                for (int u = 0; u < U; u++) {
                    if (t + u < t1) {
#pragma unroll
                        for (int jj = 0; jj < C; jj++) acc += a[u][jj] * (alpha * xv[u][jj]);
                    }
                }
            }
        }
        y[row] = acc;
    }
}

/* op T, batched (v2, v3): as sbm__k_spmv_t, with the row indices of U blocks loaded before
 * their values; V = 2: block columns and x read 16 bytes at a time. */
template <int R, int C, int V, int BIG>
__global__ void __launch_bounds__(256)
    sbm__k_spmv_t2(int64_t nbc, double alpha, const int64_t *__restrict__ colptr,
                   const int32_t *__restrict__ rowind, const double *__restrict__ av,
                   const double *__restrict__ x, double beta, double *__restrict__ y)
{
    constexpr int U = sbm__spmv_batch<R, BIG>::U;
    constexpr int64_t rc = (int64_t)R * C;
    SBM__GRID_STRIDE(idx, nbc * C)
    {
        const int64_t j = idx / C;
        const int e = (int)(idx - j * C);
        double acc = 0.0;
        if (alpha != 0.0) {
            const int64_t p1 = colptr[j + 1];
            for (int64_t p = colptr[j]; p < p1; p += U) {
                int32_t rr[U];
#pragma unroll
                for (int u = 0; u < U; u++) rr[u] = p + u < p1 ? __ldg(rowind + p + u) : 0;
                double a[U][R], xv[U][R];
#pragma unroll
                for (int u = 0; u < U; u++) {
                    if (p + u < p1) {
                        sbm__ldv<R, V>(av + (p + u) * rc + (int64_t)e * R, a[u]);
                        sbm__ldv<R, V>(x + (int64_t)rr[u] * R, xv[u]);
                    }
                }
#pragma unroll
                for (int u = 0; u < U; u++) {
                    if (p + u < p1) {
                        double s = 0.0;
#pragma unroll
                        for (int i = 0; i < R; i++) s += a[u][i] * xv[u][i];
                        acc += 1.0 * s;
                    }
                }
            }
        }
        y[idx] = (beta == 0.0 ? 0.0 : beta * y[idx]) + alpha * acc;
    }
}

/* Kernel version for this shape and op: 1 (one block after the other), 2 (batched, large
 * batches) or 3 (batched, small batches). Measured on an H100 (bench/NOTES-gpu.md, run 1 of
 * 2026-11-22 11:27, 2D Poisson, ms v1 / v2 / v3): op N 2x2 0.0114 / 0.0124 / 0.0124, 3x3 0.0217 /
 * 0.0273 / 0.0234, 4x4 0.0336 / 0.0337 / 0.0351, 5x5 0.0494 / 0.0460 / 0.0447, 6x6 0.0626 /
 * 0.0602 / 0.0594, 7x7 0.0862 / 0.0809 / 0.0763, 8x8 0.1019 / 0.0975 / 0.0962; op T 2x2 0.0104 /
 * 0.0120 / 0.0115, 3x3 0.0171 / 0.0208 / 0.0197, 4x4 0.0313 / 0.0318 / 0.0319, 5x5 0.0468 /
 * 0.0444 / 0.0439, 6x6 0.0590 / 0.0560 / 0.0564, 7x7 0.0784 / 0.0729 / 0.0767, 8x8 0.1015 /
 * 0.0888 / 0.0907. Batching pays from 5x5 (its larger register footprint costs resident
 * threads, which the small blocks need more); shapes not measured keep v1. The tuning's spmv
 * (ONE_BY_ONE, BATCHED, BATCHED_SMALL) overrides. */
static int sbm__spmv_version(const sbm_ctx *ctx, int r, int c, sbm_op op)
{
    switch (ctx->tuning.spmv) {
    case SBM_TUNE_SPMV_ONE_BY_ONE: return 1;
    case SBM_TUNE_SPMV_BATCHED: return 2;
    case SBM_TUNE_SPMV_BATCHED_SMALL: return 3;
    default: break;
    }
    if (r == c && r >= 5 && r <= 8) return op == SBM_OP_N ? 3 : 2;
    return 1;
}

sbm_status sbm__cuda_cbc_spmv(sbm_ctx *ctx, sbm_op op, double alpha, const sbm_cbc *A,
                              const double *x, double beta, double *y)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    const int64_t *rowptr = NULL, *perm = NULL;
    const int32_t *colind = NULL;
    const int64_t m = op == SBM_OP_N ? A->nbr * A->r : A->nbc * A->c;
    const unsigned g = sbm__grid(m, 256);
    const int ver = sbm__spmv_version(ctx, A->r, A->c, op);
    SBM__CK(sbm__cuda_enter(ctx));
    if (m == 0) goto done;
    if (op == SBM_OP_N) {
        SBM__CK(sbm__cuda_cbc_rows(ctx, A, &rowptr, &colind, &perm));
        if (ver > 1) {
            /* x read 16 bytes at a time where every block's slice of it is 16-byte aligned */
            const int vx = A->c % 2 == 0 && ((uintptr_t)x & 15) == 0;
#define SBM_X_(R, C)                                                                            \
    if (A->r == (R) && A->c == (C)) {                                                           \
        if (vx && ver == 2)                                                                     \
            sbm__k_spmv_n2<R, C, 2, 1><<<g, 256, 0, s>>>(A->nbr, alpha, rowptr, colind, perm,   \
                                                         A->values, x, beta, y);                \
        else if (ver == 2)                                                                      \
            sbm__k_spmv_n2<R, C, 1, 1><<<g, 256, 0, s>>>(A->nbr, alpha, rowptr, colind, perm,   \
                                                         A->values, x, beta, y);                \
        else if (vx)                                                                            \
            sbm__k_spmv_n2<R, C, 2, 0><<<g, 256, 0, s>>>(A->nbr, alpha, rowptr, colind, perm,   \
                                                         A->values, x, beta, y);                \
        else                                                                                    \
            sbm__k_spmv_n2<R, C, 1, 0><<<g, 256, 0, s>>>(A->nbr, alpha, rowptr, colind, perm,   \
                                                         A->values, x, beta, y);                \
        SBM__LAUNCHED(ctx, "block SpMV");                                                       \
        goto done;                                                                              \
    }
            SBM_BLOCK_SHAPES(SBM_X_)
#undef SBM_X_
        }
#define SBM_X_(R, C)                                                                            \
    if (A->r == (R) && A->c == (C)) {                                                           \
        sbm__k_spmv_n<R, C><<<g, 256, 0, s>>>(A->nbr, A->r, A->c, alpha, rowptr, colind, perm,  \
                                              A->values, x, beta, y);                           \
        SBM__LAUNCHED(ctx, "block SpMV");                                                       \
        goto done;                                                                              \
    }
        SBM_BLOCK_SHAPES(SBM_X_)
#undef SBM_X_
        sbm__k_spmv_n<0, 0><<<g, 256, 0, s>>>(A->nbr, A->r, A->c, alpha, rowptr, colind, perm,
                                              A->values, x, beta, y);
        SBM__LAUNCHED(ctx, "block SpMV");
    } else {
        if (ver > 1) {
            /* block columns and x slices 16-byte aligned when r is even and the arrays are */
            const int v = A->r % 2 == 0 && ((uintptr_t)x & 15) == 0 && ((uintptr_t)A->values & 15) == 0;
#define SBM_X_(R, C)                                                                            \
    if (A->r == (R) && A->c == (C)) {                                                           \
        if (v && ver == 2)                                                                      \
            sbm__k_spmv_t2<R, C, 2, 1><<<g, 256, 0, s>>>(A->nbc, alpha, A->colptr, A->rowind,   \
                                                         A->values, x, beta, y);                \
        else if (ver == 2)                                                                      \
            sbm__k_spmv_t2<R, C, 1, 1><<<g, 256, 0, s>>>(A->nbc, alpha, A->colptr, A->rowind,   \
                                                         A->values, x, beta, y);                \
        else if (v)                                                                             \
            sbm__k_spmv_t2<R, C, 2, 0><<<g, 256, 0, s>>>(A->nbc, alpha, A->colptr, A->rowind,   \
                                                         A->values, x, beta, y);                \
        else                                                                                    \
            sbm__k_spmv_t2<R, C, 1, 0><<<g, 256, 0, s>>>(A->nbc, alpha, A->colptr, A->rowind,   \
                                                         A->values, x, beta, y);                \
        SBM__LAUNCHED(ctx, "block SpMV (transposed)");                                          \
        goto done;                                                                              \
    }
            SBM_BLOCK_SHAPES(SBM_X_)
#undef SBM_X_
        }
#define SBM_X_(R, C)                                                                            \
    if (A->r == (R) && A->c == (C)) {                                                           \
        sbm__k_spmv_t<R, C><<<g, 256, 0, s>>>(A->nbc, A->r, A->c, alpha, A->colptr, A->rowind,  \
                                              A->values, x, beta, y);                           \
        SBM__LAUNCHED(ctx, "block SpMV (transposed)");                                          \
        goto done;                                                                              \
    }
        SBM_BLOCK_SHAPES(SBM_X_)
#undef SBM_X_
        sbm__k_spmv_t<0, 0><<<g, 256, 0, s>>>(A->nbc, A->r, A->c, alpha, A->colptr, A->rowind,
                                              A->values, x, beta, y);
        SBM__LAUNCHED(ctx, "block SpMV (transposed)");
    }
done:
    return st;
}
