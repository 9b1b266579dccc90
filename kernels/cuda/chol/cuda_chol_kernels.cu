/* SPDX-License-Identifier: BSD-3-Clause */
/* Kernels of the GPU sparse block Cholesky (layout and conventions: cuda_chol.cuh).
 *
 * Factor, per level of the supernodal tree: the batched kernel takes one thread block per small
 * front, adds its children's update matrices (children in ascending order, one after the other,
 * so every entry sums in a fixed order), and factors the front right-looking, column by column,
 * in shared memory when it fits. The large fronts get the same extend-add from their own kernel
 * and are factored by cuSOLVER/cuBLAS (cuda_chol.cu), then checked here.
 * Solve: the same tree, with one front vector per supernode; the forward pass gathers the
 * right-hand side and the children's updates, the backward pass the solution of the ancestors. */
#include "cuda_chol.cuh"

#include "sbm_internal.h"
#include "sbm_damp.h"

/* ---------------------------------------------------------------------------------------- */
/* Assembly                                                                                 */
/* ---------------------------------------------------------------------------------------- */

__device__ __forceinline__ int64_t sbm__chol_rows(const sbm__chol_dev &d, int64_t s)
{
    return (d.rowptr[s + 1] - d.rowptr[s]) * d.b;
}

__device__ __forceinline__ int64_t sbm__chol_cols(const sbm__chol_dev &d, int64_t s)
{
    return (d.sup_col[s + 1] - d.sup_col[s]) * d.b;
}

/* F = A's blocks at their destinations (the fronts were zeroed; destinations are distinct). */
__global__ void sbm__k_chol_assemble(sbm__chol_dev d, int64_t nnzb, const double *__restrict__ Av)
{
    const int b = d.b;
    const int64_t bb = (int64_t)b * b;
    SBM__GRID_STRIDE(idx, nnzb * bb)
    {
        const int64_t t = idx / bb;
        const int e = (int)(idx - t * bb), ri = e % b, ci = e / b;
        const uint8_t fl = d.a_flags[t];
        int dr = ri, dc = ci;
        if (fl & SBM__CHOL_A_DIAG) {
            if (ri < ci) continue; /* lower triangle of a diagonal block only */
        } else if (fl & SBM__CHOL_A_TRANS) {
            dr = ci;
            dc = ri;
        }
        const int64_t M = sbm__chol_rows(d, d.a_sup[t]);
        d.F[d.a_front[t] + dr + (int64_t)dc * M] = Av[idx];
    }
}

/* The damping on every diagonal entry (a column without a stored diagonal block has d = 0). */
__global__ void sbm__k_chol_damp(sbm__chol_dev d, int damping, double lambda)
{
    SBM__GRID_STRIDE(i, d.n)
    {
        const int64_t k = i / d.b, s = d.col_sup[k];
        const int64_t M = sbm__chol_rows(d, s);
        const int64_t lc = (k - d.sup_col[s]) * d.b + (i - k * d.b);
        double *p = d.F + d.f_ptr[s] + lc + lc * M;
        const double v = *p;
        if (damping == SBM_DAMPING_IDENTITY) *p = v + lambda;
        else if (damping == SBM_DAMPING_DIAGONAL)
            *p = sbm_blk_marquardt(v, lambda);
    }
}

void sbm__chol_launch_assemble(const sbm__chol_dev &d, int64_t nnzb, const double *A_values,
                               int damping, double lambda, cudaStream_t s)
{
    const int64_t items = nnzb * d.b * d.b;
    if (items > 0) sbm__k_chol_assemble<<<sbm__grid(items, 256), 256, 0, s>>>(d, nnzb, A_values);
    if (damping != SBM_DAMPING_NONE && d.n > 0)
        sbm__k_chol_damp<<<sbm__grid(d.n, 256), 256, 0, s>>>(d, damping, lambda);
}

/* ---------------------------------------------------------------------------------------- */
/* Extend-add and the dense front factorisation (one thread block per front)               */
/* ---------------------------------------------------------------------------------------- */

/* Fp (leading dimension Mp, shared or global memory) += the update matrices of p's children,
 * lower triangles. Within one child the destinations are distinct (rel is increasing); the
 * children follow one another, so each entry sums its contributions in child order. */
__device__ void sbm__chol_extend_add(const sbm__chol_dev &d, int64_t p, double *Fp, int64_t Mp)
{
    const int b = d.b;
    for (int64_t ci = d.child_ptr[p]; ci < d.child_ptr[p + 1]; ci++) {
        const int64_t c = d.child[ci];
        const int64_t Mc = sbm__chol_rows(d, c), Kc = sbm__chol_cols(d, c), U = Mc - Kc;
        const double *Fc = d.F + d.f_ptr[c] + Kc + Kc * Mc;
        const int64_t *rel = d.rel + d.rel_ptr[c];
        for (int64_t idx = threadIdx.x; idx < U * U; idx += blockDim.x) {
            const int64_t j = idx / U, i = idx - j * U;
            if (i < j) continue;
            const int64_t pi = rel[i / b] * b + i % b, pj = rel[j / b] * b + j % b;
            Fp[pi + pj * Mp] += Fc[i + j * Mc];
        }
        __syncthreads();
    }
}

/* Right-looking Cholesky of the first K columns of the M x M front F (lower triangle), the
 * trailing update matrix updated with them. @return the first column whose pivot is not
 * positive or not finite (the same for every thread), or -1. Entry at the barrier. */
__device__ int64_t sbm__chol_front_factor(double *F, int64_t M, int64_t K)
{
    for (int64_t j = 0; j < K; j++) {
        __syncthreads(); /* the previous column's update is complete */
        const double djj = F[j + j * M];
        if (!(djj > 0.0) || !isfinite(djj)) return j; /* uniform: every thread read djj */
        const double ljj = sqrt(djj);
        for (int64_t i = j + 1 + threadIdx.x; i < M; i += blockDim.x) F[i + j * M] /= ljj;
        __syncthreads(); /* column j of L is complete; nobody reads F[j, j] below */
        if (threadIdx.x == 0) F[j + j * M] = ljj;
        const int64_t T = M - j - 1;
        const double *Lj = F + j * M + j + 1; /* L[j+1 .., j] */
        for (int64_t idx = threadIdx.x; idx < T * T; idx += blockDim.x) {
            const int64_t c = idx / T, i = idx - c * T;
            if (i < c) continue;
            F[(j + 1 + i) + (j + 1 + c) * M] -= Lj[i] * Lj[c];
        }
    }
    __syncthreads();
    return -1;
}

__device__ __forceinline__ void sbm__chol_record(const sbm__chol_dev &d, int64_t s, int64_t col)
{
    atomicMin(d.failed, (unsigned long long)(d.sup_col[s] + col / d.b));
}

__global__ void __launch_bounds__(SBM__CHOL_THREADS)
    sbm__k_chol_factor_small(sbm__chol_dev d, const int64_t *__restrict__ list, int64_t m_lo,
                             int64_t m_hi, int use_shared)
{
    extern __shared__ double sh[];
    const int64_t s = list[blockIdx.x];
    const int64_t M = sbm__chol_rows(d, s), K = sbm__chol_cols(d, s);
    if (M < m_lo || M >= m_hi) return; /* another launch's or the dense path's */
    double *Fg = d.F + d.f_ptr[s];
    double *F = use_shared ? sh : Fg;
    if (use_shared) {
        for (int64_t i = threadIdx.x; i < M * M; i += blockDim.x) sh[i] = Fg[i];
        __syncthreads();
    }
    sbm__chol_extend_add(d, s, F, M);
    const int64_t bad = sbm__chol_front_factor(F, M, K);
    if (bad >= 0 && threadIdx.x == 0) sbm__chol_record(d, s, bad);
    if (use_shared)
        for (int64_t i = threadIdx.x; i < M * M; i += blockDim.x) Fg[i] = sh[i];
}

cudaError_t sbm__chol_factor_small_smem(size_t smem)
{
    return cudaFuncSetAttribute(sbm__k_chol_factor_small,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
}

void sbm__chol_launch_factor_small(const sbm__chol_dev &d, const int64_t *list, int64_t count,
                                   int64_t m_lo, int64_t m_hi, size_t smem, cudaStream_t s)
{
    if (count > 0)
        sbm__k_chol_factor_small<<<(unsigned)count, SBM__CHOL_THREADS, smem, s>>>(
            d, list, m_lo, m_hi, smem > 0);
}

__global__ void __launch_bounds__(SBM__CHOL_THREADS)
    sbm__k_chol_extend_add(sbm__chol_dev d, const int64_t *__restrict__ list, int64_t dense_front)
{
    const int64_t s = list[blockIdx.x];
    const int64_t M = sbm__chol_rows(d, s);
    if (M < dense_front) return; /* the batched kernel's */
    sbm__chol_extend_add(d, s, d.F + d.f_ptr[s], M);
}

void sbm__chol_launch_extend_add(const sbm__chol_dev &d, const int64_t *list, int64_t count,
                                 int64_t dense_front, cudaStream_t s)
{
    if (count > 0)
        sbm__k_chol_extend_add<<<(unsigned)count, SBM__CHOL_THREADS, 0, s>>>(d, list, dense_front);
}

/* After cuSOLVER: the first column it reported (devInfo) or whose pivot is not positive or not
 * finite (a non-finite input does not always raise devInfo), the smallest of them per front. */
__global__ void __launch_bounds__(SBM__CHOL_THREADS)
    sbm__k_chol_check(sbm__chol_dev d, const int64_t *__restrict__ list, int64_t dense_front)
{
    __shared__ unsigned long long first;
    const int64_t s = list[blockIdx.x];
    const int64_t M = sbm__chol_rows(d, s), K = sbm__chol_cols(d, s);
    if (M < dense_front) return;
    if (threadIdx.x == 0) {
        const int info = d.info[s];
        first = info > 0 ? (unsigned long long)(info - 1) : SBM__CHOL_NO_FAILURE;
    }
    __syncthreads();
    const double *F = d.F + d.f_ptr[s];
    for (int64_t j = threadIdx.x; j < K; j += blockDim.x) {
        const double v = F[j + j * M];
        if (!(v > 0.0) || !isfinite(v)) atomicMin(&first, (unsigned long long)j);
    }
    __syncthreads();
    if (threadIdx.x == 0 && first != SBM__CHOL_NO_FAILURE) sbm__chol_record(d, s, (int64_t)first);
}

void sbm__chol_launch_check(const sbm__chol_dev &d, const int64_t *list, int64_t count,
                            int64_t dense_front, cudaStream_t s)
{
    if (count > 0)
        sbm__k_chol_check<<<(unsigned)count, SBM__CHOL_THREADS, 0, s>>>(d, list, dense_front);
}

/* ---------------------------------------------------------------------------------------- */
/* Solve                                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* Forward, L w = b per front: gather the own rows of B (permuted) and the children's updates,
 * then (batched path) w[0:K] = L11^-1 w[0:K], w[K:M] -= L21 w[0:K]; w[K:M] is then s's update. */
__global__ void __launch_bounds__(SBM__CHOL_THREADS)
    sbm__k_chol_forward(sbm__chol_dev d, const int64_t *__restrict__ list, int64_t dense_front,
                        int gather_only, int64_t nrhs, const double *__restrict__ B, int64_t ldb,
                        double *__restrict__ W)
{
    const int b = d.b;
    const int64_t s = list[blockIdx.x];
    const int64_t M = sbm__chol_rows(d, s), K = sbm__chol_cols(d, s);
    if ((M >= dense_front) != (gather_only != 0)) return;
    double *w = W + d.w_rows[s] * nrhs;
    const int64_t g0 = d.sup_col[s] * b; /* own rows are consecutive new rows */
    for (int64_t idx = threadIdx.x; idx < M * nrhs; idx += blockDim.x) {
        const int64_t q = idx / M, r = idx - q * M;
        double v = 0.0;
        if (r < K) {
            const int64_t g = g0 + r, k = g / b;
            v = B[d.perm[k] * b + (g - k * b) + q * ldb];
        }
        w[r + q * M] = v;
    }
    __syncthreads();
    for (int64_t ci = d.child_ptr[s]; ci < d.child_ptr[s + 1]; ci++) {
        const int64_t c = d.child[ci];
        const int64_t Mc = sbm__chol_rows(d, c), Kc = sbm__chol_cols(d, c), U = Mc - Kc;
        const double *wc = W + d.w_rows[c] * nrhs;
        const int64_t *rel = d.rel + d.rel_ptr[c];
        for (int64_t idx = threadIdx.x; idx < U * nrhs; idx += blockDim.x) {
            const int64_t q = idx / U, u = idx - q * U;
            w[rel[u / b] * b + u % b + q * M] += wc[Kc + u + q * Mc];
        }
        __syncthreads();
    }
    if (gather_only) return;
    const double *F = d.F + d.f_ptr[s];
    for (int64_t j = 0; j < K; j++) {
        const double ljj = F[j + j * M];
        const int64_t T = M - j - 1;
        for (int64_t idx = threadIdx.x; idx < T * nrhs; idx += blockDim.x) {
            const int64_t q = idx / T, i = j + 1 + (idx - q * T);
            w[i + q * M] -= F[i + j * M] * (w[j + q * M] / ljj);
        }
        __syncthreads();
        for (int64_t q = threadIdx.x; q < nrhs; q += blockDim.x) w[j + q * M] /= ljj;
        __syncthreads();
    }
}

void sbm__chol_launch_forward(const sbm__chol_dev &d, const int64_t *list, int64_t count,
                              int64_t dense_front, int gather_only, int64_t nrhs, const double *B,
                              int64_t ldb, double *W, cudaStream_t s)
{
    if (count > 0)
        sbm__k_chol_forward<<<(unsigned)count, SBM__CHOL_THREADS, 0, s>>>(
            d, list, dense_front, gather_only, nrhs, B, ldb, W);
}

/* Backward, L^T x = y per front, root first: gather x of the rows below (ancestors' own rows,
 * already solved), then (batched path) w[0:K] -= L21^T w[K:M], w[0:K] = L11^-T w[0:K]. */
__global__ void __launch_bounds__(SBM__CHOL_THREADS)
    sbm__k_chol_backward(sbm__chol_dev d, const int64_t *__restrict__ list, int64_t dense_front,
                         int gather_only, int64_t nrhs, double *__restrict__ W)
{
    const int b = d.b;
    const int64_t s = list[blockIdx.x];
    const int64_t M = sbm__chol_rows(d, s), K = sbm__chol_cols(d, s), U = M - K;
    if ((M >= dense_front) != (gather_only != 0)) return;
    double *w = W + d.w_rows[s] * nrhs;
    const int64_t *rows = d.rows + d.rowptr[s];
    for (int64_t idx = threadIdx.x; idx < U * nrhs; idx += blockDim.x) {
        const int64_t q = idx / U, u = idx - q * U, r = K + u;
        const int64_t k = rows[r / b], p = d.col_sup[k];
        const int64_t lp = (k - d.sup_col[p]) * b + r % b;
        const int64_t Mp = sbm__chol_rows(d, p);
        w[r + q * M] = W[d.w_rows[p] * nrhs + lp + q * Mp];
    }
    __syncthreads();
    if (gather_only) return;
    const double *F = d.F + d.f_ptr[s];
    for (int64_t idx = threadIdx.x; idx < K * nrhs; idx += blockDim.x) {
        const int64_t q = idx / K, c = idx - q * K;
        double acc = 0.0;
        for (int64_t i = K; i < M; i++) acc += F[i + c * M] * w[i + q * M];
        w[c + q * M] -= acc;
    }
    __syncthreads();
    for (int64_t j = K - 1; j >= 0; j--) {
        const double ljj = F[j + j * M];
        for (int64_t idx = threadIdx.x; idx < j * nrhs; idx += blockDim.x) {
            const int64_t q = idx / j, i = idx - q * j;
            w[i + q * M] -= F[j + i * M] * (w[j + q * M] / ljj);
        }
        __syncthreads();
        for (int64_t q = threadIdx.x; q < nrhs; q += blockDim.x) w[j + q * M] /= ljj;
        __syncthreads();
    }
}

void sbm__chol_launch_backward(const sbm__chol_dev &d, const int64_t *list, int64_t count,
                               int64_t dense_front, int gather_only, int64_t nrhs, double *W,
                               cudaStream_t s)
{
    if (count > 0)
        sbm__k_chol_backward<<<(unsigned)count, SBM__CHOL_THREADS, 0, s>>>(
            d, list, dense_front, gather_only, nrhs, W);
}

/* X (A's numbering) = the own rows of every front vector after the backward pass. */
__global__ void sbm__k_chol_scatter(sbm__chol_dev d, int64_t nrhs, const double *__restrict__ W,
                                    double *__restrict__ X, int64_t ldx)
{
    const int b = d.b;
    SBM__GRID_STRIDE(idx, d.n * nrhs)
    {
        const int64_t q = idx / d.n, g = idx - q * d.n, k = g / b, s = d.col_sup[k];
        const int64_t M = sbm__chol_rows(d, s), lr = g - d.sup_col[s] * b;
        X[d.perm[k] * b + (g - k * b) + q * ldx] = W[d.w_rows[s] * nrhs + lr + q * M];
    }
}

void sbm__chol_launch_scatter(const sbm__chol_dev &d, int64_t nrhs, const double *W, double *X,
                              int64_t ldx, cudaStream_t s)
{
    const int64_t items = d.n * nrhs;
    if (items > 0) sbm__k_chol_scatter<<<sbm__grid(items, 256), 256, 0, s>>>(d, nrhs, W, X, ldx);
}
