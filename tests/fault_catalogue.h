/* SPDX-License-Identifier: BSD-3-Clause */
/* The fault-injection catalogue: one list of operations, with their inputs, that both fault
 * suites run with an allocator hook failing one allocation at a time (test_fault_injection.c:
 * host memory on the CPU backend; test_cuda_faults.c: device memory on the CUDA backend). Each
 * suite runs the entries marked for its backend. Also the counting allocator of the CPU suites. */
#ifndef SBM_FAULT_CATALOGUE_H
#define SBM_FAULT_CATALOGUE_H

#include "test_util.h"

/* An allocator hook on malloc that counts and fails the k-th allocation (fail_at = 0: never). */
typedef struct fault_counting {
    long calls;   /* allocations requested since the last reset */
    long fail_at; /* the allocation to fail (1-based; 0 = never) */
    long live;    /* allocations not yet freed */
} fault_counting;
void *fault_counting_alloc(void *user, size_t bytes);
void fault_counting_free(void *user, void *ptr);

#define FAULT_NX 64 /* length of the host vectors (covers every operand size below) */

typedef struct fault_fixture {
    sbm_ctx *ctx;  /* context the operation runs in (CPU: base, with the hook; CUDA: fresh per call) */
    sbm_ctx *base; /* the suite's context: owner of the inputs */
    sbm_ctx *host; /* CPU context for downloads (no hook) */
    char dir[512]; /* temporary directory for files */
    char mtx_in[600];  /* a small Matrix Market file */
    char mtx_out[600]; /* where writes go */
    char bal_in[600];  /* a small BAL file */
    char bal_out[600]; /* where BAL writes go */
    char g2o_in[600];  /* a small g2o file */
    sbm_cbc *A, *B, *Bsq, *U, *D, *Dinv, *Y, *A2, *C, *S1, *S2;
    sbm_cbc *Spd;  /* upper block triangle of an SPD matrix (fault_catalogue_chol.c) */
    sbm_csr *P, *Q, *Pc;
    sbm_gemm_plan *plan;  /* A2 * Bsq */
    sbm_csr_plan *cplan;  /* P * Q (NULL where the backend has no CSR SpGEMM) */
    double *x, *y, *Bd, *Cd;          /* vectors in base's memory */
    double *h_x, *h_y, *h_Bd, *h_Cd;  /* their host values (y, Cd: reset before each call) */
    int64_t *h_colptr;                /* host copy of A's arrays */
    int32_t *h_rowind;
    double *h_values;
    int64_t *bsr_rowptr;              /* BSR arrays of A in base's memory */
    int32_t *bsr_colind;
    double *bsr_values;
    sbm_bal_problem *bal;
    sbm_ba_system *ba;
    sbm_g2o_graph *g2o;
    sbm_slam_system *slam;
    uint64_t out_hash;                /* hash of the last successful call's output */
} fault_fixture;

/* The inputs, made in e->ctx with the default allocator; f->ctx starts as e->ctx. */
void fault_fixture_make(fault_fixture *f, sbm_test_env *e);
void fault_fixture_free(fault_fixture *f);
/* Hash of everything an operation may read (not the outputs it writes in place: C, Dinv, Y, y,
 * Cd, the BSR arrays, the BA and SLAM systems), downloaded through f->host. */
uint64_t fault_hash_inputs(fault_fixture *f);

/* Byte hashes (FNV-1a): h continued over n bytes; a matrix's shape and arrays (copied to the
 * host context first); n bytes of dev's memory d. */
uint64_t fault_fnv(uint64_t h, const void *p, size_t n);
uint64_t fault_hash_cbc(sbm_ctx *host, uint64_t h, const sbm_cbc *A);
uint64_t fault_hash_csr(sbm_ctx *host, uint64_t h, const sbm_csr *A);
uint64_t fault_hash_dev(sbm_ctx *dev, uint64_t h, const void *d, size_t n);

/* Backends an entry runs on. */
#define FAULT_CPU 1u
#define FAULT_CUDA 2u

/* One operation: makes its call(s) in f->ctx, checks its output handles (NULL on failure),
 * hashes its output on success into f->out_hash (results must not depend on earlier calls) and
 * frees what it made. */
typedef struct fault_op {
    const char *name;
    sbm_status (*fn)(fault_fixture *f);
    unsigned backends; /* FAULT_CPU | FAULT_CUDA */
} fault_op;

/* The sparse block Cholesky's input and entries (fault_catalogue_chol.c). */
sbm_cbc *fault_chol_input(sbm_ctx *ctx);
sbm_status fault_op_chol_amd(fault_fixture *f);
sbm_status fault_op_chol_natural(fault_fixture *f);
sbm_status fault_op_chol_dense_fronts(fault_fixture *f); /* CUDA: every front to cuSOLVER */
sbm_status fault_op_chol_inverse(fault_fixture *f);      /* plan, factor, selected inverse */
sbm_status fault_op_slam_covariance(fault_fixture *f);   /* sbm_slam_covariance of g2o */

extern const fault_op fault_ops[];
extern const size_t fault_op_count;

#endif /* SBM_FAULT_CATALOGUE_H */
