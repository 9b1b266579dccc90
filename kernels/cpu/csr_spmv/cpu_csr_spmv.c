/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU backend: scalar CSR SpMV, the test oracle and the CPU baseline of the benchmarks: a
 * straightforward loop in a fixed summation order (entries of a row in stored order), so results
 * are deterministic. Arguments are checked by the front end (csr_ops.c). */
#include "cpu_backend.h"

/* ---------------------------------------------------------------------------------------- */
/* SpMV: y = alpha*A*x + beta*y                                                             */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm__cpu_csr_spmv(sbm_ctx *ctx, double alpha, const sbm_csr *A, const double *x,
                             double beta, double *y)
{
    const int64_t *restrict Ap = A->rowptr;
    const int32_t *restrict Aj = A->colind;
    const double *restrict Ax = A->values;
    double *restrict yy = y;
    for (int64_t i = 0; i < A->m; i++) {
        double sum = 0.0;
        for (int64_t p = Ap[i]; p < Ap[i + 1]; p++) sum += Ax[p] * x[Aj[p]];
        /* beta == 0 must not read y: it may hold NaN or garbage */
        yy[i] = beta == 0.0 ? alpha * sum : alpha * sum + beta * yy[i];
    }
    return SBM_SUCCESS;
}

