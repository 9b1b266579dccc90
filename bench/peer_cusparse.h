/* Peer for sbm-bench-gpu: cuSPARSE on the scalar CSR form of the same products.
 *
 * SpGEMM through the generic API (cusparseSpGEMM: work estimation, compute, copy, with its
 * buffers and C allocated as a user would) and its structure-reuse variant
 * (cusparseSpGEMMreuse_*: the symbolic phases once, then cusparseSpGEMMreuse_compute, the
 * counterpart of sbm's execute). BSR SpMV through cusparseDbsrmv. CSR SpMV and SpMM through
 * cusparseSpMV / cusparseSpMM (default algorithms, buffers allocated once before timing).
 * cuSPARSE's failures are reported as its status name (e.g.
 * CUSPARSE_STATUS_INSUFFICIENT_RESOURCES), never hidden. */
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
    /* with keep_c: host copy of the full SpGEMM's C (malloc'd; peer_spgemm_result_free) */
    int32_t *c_rowptr;   /* size m+1 */
    int32_t *c_colind;   /* size nnz_c */
    double *c_values;    /* size nnz_c */
} peer_spgemm_result;

/* C = A*B for scalar CSR matrices living in a CUDA context (device arrays; int64 row pointers
 * are converted to the int32 cuSPARSE's SpGEMM needs). reps timed repetitions after a warm-up.
 * keep_c: download the full SpGEMM's C into res (for a check of another result against it).
 * @return 0 when measured (see ok/reuse_ok), -1 when the inputs cannot be given to cuSPARSE. */
int peer_cusparse_spgemm(const sbm_csr *A, const sbm_csr *B, int reps, int keep_c,
                         peer_spgemm_result *res);
/* Free the host copy of C that keep_c made (safe on a result without one). */
void peer_spgemm_result_free(peer_spgemm_result *res);

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

/* cuSPARSE's view of one scalar CSR matrix for repeated SpMV / SpMM: a handle bound to a
 * stream, int32 row pointers (cuSPARSE's generic API takes one index type for both arrays) and
 * the matrix descriptor. Made once per matrix, outside every timing. */
typedef struct peer_csr peer_csr;

/* @return 0, or -1 with the reason in msg (a cuSPARSE or CUDA status name). */
int peer_csr_create(const sbm_csr *A, struct CUstream_st *stream, peer_csr **P, char *msg,
                    size_t msg_size);
void peer_csr_destroy(peer_csr *P);

typedef struct peer_op_result {
    int ok;
    char status[128];    /* "ok", or the failing call and its status name */
    double setup_ms;     /* descriptors, buffer-size query and buffer allocation (not timed below) */
    double ms;           /* median of the timed calls (CUDA events on the stream) */
} peer_op_result;

/* y = A*x (alpha 1, beta 0) with cusparseSpMV, CUSPARSE_SPMV_ALG_DEFAULT; one warm-up call,
 * then reps timed. x, y device arrays of A's columns / rows. */
int peer_csr_spmv(peer_csr *P, const double *d_x, double *d_y, int reps, peer_op_result *res);
/* C = A*B (alpha 1, beta 0) with cusparseSpMM, CUSPARSE_SPMM_ALG_DEFAULT, B (n x ncols) and C
 * (m x ncols) dense row-major with leading dimension ncols. */
int peer_csr_spmm(peer_csr *P, int64_t ncols, const double *d_B, double *d_C, int reps,
                  peer_op_result *res);

#endif /* SBM_PEER_CUSPARSE_H */
