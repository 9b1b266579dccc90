/* The CPU backend's operations of the device-resident BA iteration: the block diagonal of the
 * Schur complement (the Schur-Jacobi preconditioner of matrix-free PCG) and the dense Cholesky
 * solve of a small reduced system (LAPACKE dpotrf / dpotrs). Arguments are checked by the front
 * end (src/ba/ba_schur.c, src/solve/solvers.c). */
#include "cpu_backend.h"

#include <inttypes.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Block diagonal of S = U - Y W^T                                                          */
/* ---------------------------------------------------------------------------------------- */

typedef struct schur_diag_job {
    const sbm_cbc *U, *Y, *W;
    const int64_t *udiag, *wrow_ptr, *wrow_blk;
    sbm_cbc *D;
} schur_diag_job;

/* Block rows [begin, end): each block of D belongs to one row, summed in the row list's order
 * (the CUDA kernel's order), so the result does not depend on the threads. */
static void schur_diag_rows(void *data, int64_t begin, int64_t end)
{
    const schur_diag_job *j = data;
    const int p = j->W->r, q = j->W->c;
    const int64_t pp = (int64_t)p * p, pq = (int64_t)p * q;
    double acc[SBM_MAX_BLOCK_DIM * SBM_MAX_BLOCK_DIM];
    for (int64_t i = begin; i < end; i++) {
        memset(acc, 0, (size_t)pp * sizeof(double));
        for (int64_t t = j->wrow_ptr[i]; t < j->wrow_ptr[i + 1]; t++) {
            const double *y = j->Y->values + j->wrow_blk[t] * pq;
            const double *w = j->W->values + j->wrow_blk[t] * pq;
            for (int c = 0; c < p; c++)
                for (int r = 0; r < p; r++) {
                    double s = acc[r + p * c];
                    for (int a = 0; a < q; a++) s += y[r + p * a] * w[c + p * a];
                    acc[r + p * c] = s;
                }
        }
        const double *u = j->udiag[i] >= 0 ? j->U->values + j->udiag[i] * pp : NULL;
        double *d = j->D->values + i * pp;
        for (int64_t e = 0; e < pp; e++) d[e] = (u ? u[e] : 0.0) - acc[e];
    }
}

sbm_status sbm__cpu_ba_schur_diagonal(sbm_ctx *ctx, const sbm_cbc *U, const int64_t *udiag,
                                      const sbm_cbc *Y, const sbm_cbc *W, const int64_t *wrow_ptr,
                                      const int64_t *wrow_blk, sbm_cbc *D)
{
    (void)ctx;
    schur_diag_job j = {U, Y, W, udiag, wrow_ptr, wrow_blk, D};
    /* a camera row costs ~p*p*q flops per point it sees: a few rows per thread already pay */
    sbm__cpu_parallel_for(W->nbr, 16, schur_diag_rows, &j);
    return SBM_SUCCESS;
}

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
        info = LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', (lapack_int)n, 1, M, (lapack_int)n, x,
                              (lapack_int)n);
        if (info != 0)
            st = sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "dpotrs rejected argument %d (n = %"
                            PRId64 ")", (int)-info, n);
    }
    sbm__host_free(ctx, M);
    return st;
}
