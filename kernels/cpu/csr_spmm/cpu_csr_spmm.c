/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU backend: scalar CSR SpMM in a fixed summation order (entries of a row in stored order), so
 * results are deterministic. Arguments are checked by the front end (csr_ops.c). */
#include "cpu_backend.h"

/* ---------------------------------------------------------------------------------------- */
/* SpMM: C = alpha*A*B + beta*C                                                             */
/* ---------------------------------------------------------------------------------------- */

/* Both layouts work on strips of columns whose accumulators live in registers: row-major takes
 * strips of 8, 4, 2, 1 contiguous columns of B's rows (compile-time widths, so the inner loop
 * unrolls and vectorises); column-major takes 8 columns at once, so A is read ncols/8 times
 * rather than ncols times. No workspace, hence no failure path. */
#define SBM__SPMM_STRIP_COL 8

/* One row of C, W consecutive columns. */
#define SBM__SPMM_ROW_STRIP(W)                                                                  \
    static void sbm__spmm_row_strip_##W(const int64_t *restrict Ap, const int32_t *restrict Aj, \
                                        const double *restrict Ax, int64_t i, double alpha,     \
                                        const double *restrict B, int64_t ldb, int64_t j0,      \
                                        double beta, double *restrict c)                        \
    {                                                                                           \
        double acc[W] = {0};                                                                    \
        for (int64_t p = Ap[i]; p < Ap[i + 1]; p++) {                                           \
            const double a = Ax[p];                                                             \
            const double *restrict b = B + (int64_t)Aj[p] * ldb + j0;                           \
            for (int t = 0; t < W; t++) acc[t] += a * b[t];                                     \
        }                                                                                       \
        if (beta == 0.0)                                                                        \
            for (int t = 0; t < W; t++) c[t] = alpha * acc[t];                                  \
        else                                                                                    \
            for (int t = 0; t < W; t++) c[t] = alpha * acc[t] + beta * c[t];                    \
    }
SBM__SPMM_ROW_STRIP(8)
SBM__SPMM_ROW_STRIP(4)
SBM__SPMM_ROW_STRIP(2)
SBM__SPMM_ROW_STRIP(1)
#undef SBM__SPMM_ROW_STRIP

/* B is addressed only through entries of A: it may be NULL when A has no columns. */
static void sbm__spmm_row_major(double alpha, const sbm_csr *A, int64_t ncols, const double *B,
                                int64_t ldb, double beta, double *C, int64_t ldc)
{
    const int64_t *Ap = A->rowptr;
    const int32_t *Aj = A->colind;
    const double *Ax = A->values;
    for (int64_t i = 0; i < A->m; i++) {
        double *crow = C + i * ldc;
        int64_t j0 = 0;
        for (; j0 + 8 <= ncols; j0 += 8)
            sbm__spmm_row_strip_8(Ap, Aj, Ax, i, alpha, B, ldb, j0, beta, crow + j0);
        if (j0 + 4 <= ncols) {
            sbm__spmm_row_strip_4(Ap, Aj, Ax, i, alpha, B, ldb, j0, beta, crow + j0);
            j0 += 4;
        }
        if (j0 + 2 <= ncols) {
            sbm__spmm_row_strip_2(Ap, Aj, Ax, i, alpha, B, ldb, j0, beta, crow + j0);
            j0 += 2;
        }
        if (j0 < ncols) sbm__spmm_row_strip_1(Ap, Aj, Ax, i, alpha, B, ldb, j0, beta, crow + j0);
    }
}

/* All rows of C, w <= 8 consecutive columns; W is w, at compile time for the full strips. */
#define SBM__SPMM_COL_STRIP(NAME, W)                                                            \
    static void NAME(const sbm_csr *A, int w, double alpha, const double *restrict B,          \
                     int64_t ldb, int64_t j0, double beta, double *restrict C, int64_t ldc)     \
    {                                                                                           \
        const int64_t *restrict Ap = A->rowptr;                                                 \
        const int32_t *restrict Aj = A->colind;                                                 \
        const double *restrict Ax = A->values;                                                  \
        for (int64_t i = 0; i < A->m; i++) {                                                    \
            double acc[SBM__SPMM_STRIP_COL] = {0};                                              \
            for (int64_t p = Ap[i]; p < Ap[i + 1]; p++) {                                       \
                const double a = Ax[p];                                                         \
                const double *b = B + j0 * ldb + Aj[p];                                         \
                for (int t = 0; t < (W); t++) acc[t] += a * b[t * ldb];                         \
            }                                                                                   \
            if (beta == 0.0)                                                                    \
                for (int t = 0; t < (W); t++) C[i + t * ldc] = alpha * acc[t];                  \
            else                                                                                \
                for (int t = 0; t < (W); t++)                                                   \
                    C[i + t * ldc] = alpha * acc[t] + beta * C[i + t * ldc];                    \
        }                                                                                       \
    }
SBM__SPMM_COL_STRIP(sbm__spmm_col_strip_full, SBM__SPMM_STRIP_COL)
SBM__SPMM_COL_STRIP(sbm__spmm_col_strip_rest, w)
#undef SBM__SPMM_COL_STRIP

static void sbm__spmm_col_major(double alpha, const sbm_csr *A, int64_t ncols, const double *B,
                                int64_t ldb, double beta, double *C, int64_t ldc)
{
    int64_t j0 = 0;
    for (; j0 + SBM__SPMM_STRIP_COL <= ncols; j0 += SBM__SPMM_STRIP_COL)
        sbm__spmm_col_strip_full(A, SBM__SPMM_STRIP_COL, alpha, B, ldb, j0, beta, C + j0 * ldc,
                                 ldc);
    if (j0 < ncols)
        sbm__spmm_col_strip_rest(A, (int)(ncols - j0), alpha, B, ldb, j0, beta, C + j0 * ldc, ldc);
}

sbm_status sbm__cpu_csr_spmm(sbm_ctx *ctx, double alpha, const sbm_csr *A, int64_t ncols,
                             sbm_layout layout, const double *B, int64_t ldb, double beta,
                             double *C, int64_t ldc)
{
    if (layout == SBM_LAYOUT_ROW_MAJOR)
        sbm__spmm_row_major(alpha, A, ncols, B, ldb, beta, C, ldc);
    else
        sbm__spmm_col_major(alpha, A, ncols, B, ldb, beta, C, ldc);
    return SBM_SUCCESS;
}

