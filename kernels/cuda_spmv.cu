/* Block SpMV on the GPU: y = alpha*op(A)*x + beta*y for CBC A. Deterministic: every y entry is
 * owned by one thread that sums in a fixed order (no floating-point atomics). The summation
 * order and the treatment of alpha and beta are the CPU backend's (src/cpu_spmv.c).
 *
 *   op N  one thread per scalar row of y, over the row's blocks in column order. A is stored by
 *         columns, so the row view (block-row pointers, the blocks' columns, the permutation to
 *         stored blocks) is built once per pattern and cached in the context.
 *   op T  one thread per scalar entry of y = one column of a stored block column, reading the
 *         CSC storage directly. */
#include "cuda_internal.cuh"
#include "sbm_blocks.h"

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

sbm_status sbm__cuda_cbc_spmv(sbm_ctx *ctx, sbm_op op, double alpha, const sbm_cbc *A,
                              const double *x, double beta, double *y)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    const int64_t *rowptr = NULL, *perm = NULL;
    const int32_t *colind = NULL;
    const int64_t m = op == SBM_OP_N ? A->nbr * A->r : A->nbc * A->c;
    const unsigned g = sbm__grid(m, 256);
    SBM__CK(sbm__cuda_enter(ctx));
    if (m == 0) goto done;
    if (op == SBM_OP_N) {
        SBM__CK(sbm__cuda_cbc_rows(ctx, A, &rowptr, &colind, &perm));
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
