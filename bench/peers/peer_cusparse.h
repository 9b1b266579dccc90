/* SPDX-License-Identifier: BSD-3-Clause */
/* Peer for sbm-bench-gpu: cuSPARSE on the scalar CSR form of the same products.
 *
 * SpGEMM through the generic API (cusparseSpGEMM: work estimation, compute, copy; the default
 * algorithm and the memory-saving ALG2 and ALG3; work buffers allocated once before timing, C by
 * every call as sbm's)
 * and its structure-reuse variant (cusparseSpGEMMreuse_*: the symbolic phases once, then
 * cusparseSpGEMMreuse_compute, the counterpart of sbm's execute). BSR SpMV through
 * cusparseDbsrmv. CSR SpMV and SpMM through cusparseSpMV / cusparseSpMM, every CSR algorithm,
 * buffers allocated and preprocessed once before timing. Each variant is reported; the callers
 * compare sbm with the best one.
 * cuSPARSE's failures are reported as its status name (e.g.
 * CUSPARSE_STATUS_INSUFFICIENT_RESOURCES), never hidden. */
#ifndef SBM_PEER_CUSPARSE_H
#define SBM_PEER_CUSPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "sbm.h"

/* cuSPARSE's SpGEMM algorithms timed by the peer: the default (ALG1) and the memory-saving
 * ALG2 and ALG3 (ALG3 splits the work in chunks of PEER_SPGEMM_CHUNK of the products). */
#define PEER_SPGEMM_ALGS 3
#define PEER_SPGEMM_CHUNK 0.2f
const char *peer_spgemm_alg_name(int alg_index);

typedef struct peer_time {
    int ok;              /* measured */
    char status[128];    /* "ok", or what failed and its status name */
    double med, min, max; /* ms over the timed repetitions */
    size_t peak_bytes;   /* device memory this variant used (buffers + C) */
} peer_time;

typedef struct peer_spgemm_result {
    peer_time alg[PEER_SPGEMM_ALGS]; /* all phases of cusparseSpGEMM with each algorithm */
    int best;            /* index of the fastest alg[] that ran, -1 if none did */
    int ok;              /* some algorithm measured: full_ms etc. are the best one's */
    char status[256];    /* "ok (best NAME)", or every algorithm's failure */
    double full_ms;      /* median of the best algorithm (all phases, buffers preallocated) */
    double full_min_ms, full_max_ms;
    int reuse_ok;        /* reuse variant measured */
    char reuse_status[128];
    double reuse_setup_ms; /* the reuse variant's symbolic phases, once */
    double reuse_exec_ms;  /* median of cusparseSpGEMMreuse_compute */
    double reuse_min_ms, reuse_max_ms;
    int64_t nnz_c;       /* scalar entries of C */
    size_t peak_bytes;   /* peak device memory of the best algorithm (buffers + C) */
    /* with keep_c: host copy of C from the first algorithm that ran (malloc'd;
     * peer_spgemm_result_free) */
    int32_t *c_rowptr;   /* size m+1 */
    int32_t *c_colind;   /* size nnz_c */
    double *c_values;    /* size nnz_c */
} peer_spgemm_result;

/* C = A*B for scalar CSR matrices living in a CUDA context (device arrays; int64 row pointers
 * are converted to the int32 cuSPARSE's SpGEMM needs). Every algorithm of PEER_SPGEMM_ALGS:
 * one warm-up call that sizes and allocates the work buffers, then reps timed calls of every
 * phase (work estimation, memory estimation for ALG2/3, compute, C's allocation, copy) into
 * those buffers: the same allocation policy as sbm, whose timed calls reuse a workspace pool
 * grown beforehand and allocate their C (each C is freed outside the timing). A
 * call slower than 1 s is timed once. The reuse variant (cusparseSpGEMMreuse_compute, default
 * algorithm) gives the execute-only figure. keep_c: download C into res (keep_c_max: not above
 * that many entries). @return 0 when measured or failed visibly (see the statuses), -1 when the
 * inputs cannot be given to cuSPARSE. */
int peer_cusparse_spgemm(const sbm_csr *A, const sbm_csr *B, int reps, int keep_c,
                         int64_t keep_c_max, peer_spgemm_result *res);
/* Free the host copy of C that keep_c made (safe on a result without one). */
void peer_spgemm_result_free(peer_spgemm_result *res);

typedef struct peer_spmv_result {
    int ok;
    char status[128];
    double ms;           /* median of cusparseDbsrmv */
    double min_ms, max_ms;
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

/* cuSPARSE's CSR algorithms timed by the peer. */
#define PEER_SPMV_ALGS 3 /* DEFAULT, CSR_ALG1, CSR_ALG2 */
#define PEER_SPMM_ALGS 4 /* DEFAULT, CSR_ALG1, CSR_ALG2, CSR_ALG3 */
const char *peer_spmv_alg_name(int alg_index);
const char *peer_spmm_alg_name(int alg_index);

typedef struct peer_op_result {
    int ok;
    char status[160];    /* "ok", or the failing call and its status name */
    double setup_ms;     /* descriptors, buffer-size query, buffer allocation and preprocess */
    double ms;           /* median of the timed calls (CUDA events on the stream) */
    double min_ms, max_ms;
} peer_op_result;

/* y = A*x (alpha 1, beta 0) with cusparseSpMV and algorithm alg_index: the buffer allocated
 * and cusparseSpMV_preprocess called before timing (sbm's SpMV caches are warm too), one
 * warm-up call, then reps timed. x, y device arrays of A's columns / rows. */
int peer_csr_spmv(peer_csr *P, int alg_index, const double *d_x, double *d_y, int reps,
                  peer_op_result *res);
/* C = A*B (alpha 1, beta 0) with cusparseSpMM and algorithm alg_index, B (n x ncols) and C
 * (m x ncols) dense row-major with leading dimension ncols; buffer and cusparseSpMM_preprocess
 * before timing as for SpMV. */
int peer_csr_spmm(peer_csr *P, int alg_index, int64_t ncols, const double *d_B, double *d_C,
                  int reps, peer_op_result *res);

#endif /* SBM_PEER_CUSPARSE_H */
