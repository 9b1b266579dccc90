/* SPDX-License-Identifier: BSD-3-Clause */
/* The CPU backend's operation of the device-resident BA iteration: the block diagonal of the
 * Schur complement (the Schur-Jacobi preconditioner of matrix-free PCG). Arguments are checked by
 * the front end (src/ba/ba_schur.c). */
#include "ba_kernels.h"
#include "cpu_backend.h"

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
    schur_diag_job j = {U, Y, W, udiag, wrow_ptr, wrow_blk, D};
    /* a camera row costs ~p*p*q flops per point it sees: a few rows per thread already pay */
    sbm__cpu_parallel_for(ctx, W->nbr, 16, schur_diag_rows, &j);
    return SBM_SUCCESS;
}
