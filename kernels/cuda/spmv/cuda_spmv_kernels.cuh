/* SPDX-License-Identifier: BSD-3-Clause */
/* Block SpMV kernels (definitions; instantiated in cuda_spmv.cu for the shapes of
 * SBM_BLOCK_SHAPES and the runtime-size shape through sbm_blk_select_shape). See cuda_spmv.cu
 * for the versions and the choice among them. */
#ifndef SBM_CUDA_SPMV_CUH
#define SBM_CUDA_SPMV_CUH

#include "cuda_internal.cuh"

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

#endif /* SBM_CUDA_SPMV_CUH */
