/* Peer for sbm-bench-gpu: cuSPARSE on the scalar CSR form of the same products.
 *
 * SpGEMM through the generic API (cusparseSpGEMM: work estimation, compute, copy, with its
 * buffers and C allocated as a user would) and its structure-reuse variant
 * (cusparseSpGEMMreuse_*: the symbolic phases once, then cusparseSpGEMMreuse_compute, the
 * counterpart of sbm's execute). BSR SpMV through cusparseDbsrmv. cuSPARSE's failures are
 * reported as its status name (e.g. CUSPARSE_STATUS_INSUFFICIENT_RESOURCES), never hidden. */
#ifndef SBM_PEER_CUSPARSE_H
#define SBM_PEER_CUSPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "sbm.h"

typedef struct peer_spgemm_result {
    int ok;              /* full SpGEMM measured */
    char status[128];    /* "ok", or what failed and its status name */
    double full_ms;      /* median of the full SpGEMM (all phases, buffers and C allocated) */
    int reuse_ok;        /* reuse variant measured */
    char reuse_status[128];
    double reuse_setup_ms; /* the reuse variant's symbolic phases, once */
    double reuse_exec_ms;  /* median of cusparseSpGEMMreuse_compute */
    int64_t nnz_c;       /* scalar entries of C */
    size_t peak_bytes;   /* peak device memory cuSPARSE used (buffers + C), measured per phase */
    double sumsq;        /* sum of squares of C's values (cross-check with sbm) */
} peer_spgemm_result;

/* C = A*B for scalar CSR matrices living in a CUDA context (device arrays; int64 row pointers
 * are converted to the int32 cuSPARSE's SpGEMM needs). reps timed repetitions after a warm-up.
 * @return 0 when measured (see ok/reuse_ok), -1 when the inputs cannot be given to cuSPARSE. */
int peer_cusparse_spgemm(const sbm_csr *A, const sbm_csr *B, int reps, peer_spgemm_result *res);

typedef struct peer_spmv_result {
    int ok;
    char status[128];
    double ms;           /* median of cusparseDbsrmv */
} peer_spmv_result;

/* y = A*x with cuSPARSE's BSR SpMV (blocks of b x b, block_layout as stored by
 * sbm_cbc_to_bsr); all arrays device arrays. */
int peer_cusparse_bsrmv(int64_t nbr, int64_t nbc, int64_t nnzb, int b, const int64_t *d_rowptr,
                        const int32_t *d_colind, const double *d_values, int col_major,
                        const double *d_x, double *d_y, int reps, peer_spmv_result *res);

#endif /* SBM_PEER_CUSPARSE_H */
