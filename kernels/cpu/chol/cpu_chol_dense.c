/* SPDX-License-Identifier: BSD-3-Clause */
/* The CPU backend's dense Cholesky solve of a small system (dense_spd_solve of the solve layer's
 * table, solve_kernels.h: LAPACKE dpotrf / dpotrs), used by the dense linear solver of BA's and
 * SLAM's iterations. Arguments are checked by the front end (src/solve/solvers.c). */
#include "cpu_backend.h"
#include "solve_kernels.h"

#include <inttypes.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Dense Cholesky                                                                           */
/* ---------------------------------------------------------------------------------------- */

/* The lower triangle of the dense n x n form of A (upper block triangle, r x r blocks) into M
 * (column-major, zeroed): the transposes of the blocks above the diagonal and the lower
 * triangles of the diagonal blocks mirrored, each entry written once (what dpotrf('L') reads). The CUDA
 * backend scatters the same entries. */
static void dense_lower(const sbm_cbc *A, int64_t n, double *M)
{
    const int r = A->r;
    const int64_t rr = (int64_t)r * r;
    for (int64_t j = 0; j < A->nbc; j++)
        for (int64_t k = A->colptr[j]; k < A->colptr[j + 1]; k++) {
            const int64_t i = A->rowind[k];
            const double *blk = A->values + k * rr;
            for (int c = 0; c < r; c++)
                for (int q = 0; q < r; q++) {
                    if (i == j && q > c) continue;
                    const int64_t row = i * r + q, col = j * r + c;
                    /* (row, col) is in the upper triangle or on the diagonal: store its mirror */
                    M[col + row * n] = blk[q + c * r];
                }
        }
}

sbm_status sbm__cpu_dense_spd_solve(sbm_ctx *ctx, const sbm_cbc *A, const double *b, double *x,
                                    int64_t *failed)
{
    *failed = -1;
    const int64_t n = A->nbr * A->r;
    if (n == 0) return SBM_SUCCESS; /* nothing to solve (LAPACK would refuse lda = 0) */
    const sbm_status room = sbm__cpu_blas_room(ctx);
    if (room != SBM_SUCCESS) return room;
    double *M = sbm__host_alloc(ctx, (size_t)n * (size_t)n * sizeof(double), "dense matrix");
    if (!M) return ctx->last_status;
    memset(M, 0, (size_t)n * (size_t)n * sizeof(double));
    dense_lower(A, n, M);
    sbm_status st = SBM_SUCCESS;
    lapack_int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (lapack_int)n, M, (lapack_int)n);
    /* dpotrf stops at a pivot that is not positive; a NaN pivot passes some implementations'
     * test, so the factor's diagonal is checked before the failure column dpotrf gives */
    const int64_t lim = info > 0 ? (int64_t)info - 1 : n;
    for (int64_t c = 0; c < lim && *failed < 0; c++)
        if (!(M[c + c * n] > 0.0) || !isfinite(M[c + c * n])) *failed = c;
    if (*failed < 0 && info > 0) *failed = lim;
    if (*failed >= 0) {
        st = SBM_ERR_NOT_POSITIVE_DEFINITE;
    } else if (info < 0) {
        st = sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "dpotrf rejected argument %d (n = %" PRId64
                        ")", (int)-info, n);
    } else {
        if (x != b) memcpy(x, b, (size_t)n * sizeof(double));
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(x[i])) {
                sbm__host_free(ctx, M);
                return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                                  "argument b: value %g at row %" PRId64 " of the right-hand "
                                  "side is not finite", x[i], i);
            }
        info = LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', (lapack_int)n, 1, M, (lapack_int)n, x,
                              (lapack_int)n);
        if (info != 0)
            st = sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "dpotrs rejected argument %d (n = %"
                            PRId64 ")", (int)-info, n);
    }
    sbm__host_free(ctx, M);
    return st;
}
