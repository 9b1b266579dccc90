/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench-gpu, scalar CSR section: the matrices, the CSV row, the timing and check helpers
 * shared by its SpMV, SpMM and SpGEMM parts (csr*.c; method: main.c). */
#ifndef SBM_BENCH_GPU_CSR_H
#define SBM_BENCH_GPU_CSR_H

#include "gpu.h"

typedef enum csr_gen { GEN_POISSON2D, GEN_POISSON3D, GEN_BA_W, GEN_BA_WT, GEN_BA_SCHUR, GEN_RMAT, GEN_MTX } csr_gen;

typedef struct csr_mat {
    char name[64];
    char family[24];     /* csr-poisson2d, csr-poisson3d, csr-ba, csr-rmat, csr-mtx */
    csr_gen gen;
    int64_t p1, p2, p3;  /* grid side | cameras, points, observations | scale, edge factor */
    char path[1024];     /* GEN_MTX */
    const char *no_gemm; /* why SpGEMM is not run on this matrix (NULL: it is) */
    sbm_csr *H;          /* host (CPU context) matrix */
    int64_t maxrow;      /* longest row */
    uint64_t print;      /* fingerprint of the matrix up to the order of its entries */
    char dup_of[64];     /* an earlier matrix with the same fingerprint: left out of geomeans */
} csr_mat;

/* Geometric mean accumulator (ratios and percentages). */
typedef struct gmean {
    double logsum;
    int n;
    double min;
} gmean;

void gm_add(gmean *g, double v);
const char *gm_str(char *buf, size_t n, const gmean *g, const char *fmt);

/* One CSR CSV row (columns in the file header; a negative number is written as empty). */
typedef struct csr_row {
    const char *op, *variant;
    int64_t ncols, products, nnz_c;
    int short_rows; /* -1: not applicable */
    int once;       /* timed once: the call is slower than CSR_SLOW_MS */
    double ms, min_ms, max_ms, setup_ms, rate, pct_copy, cus_ms, ratio, maxdiff;
    double bytes;   /* spmv: the bytes the format reads and writes (see format_bytes) */
    const char *rate_unit;
    const char *cus_best; /* the cuSPARSE algorithm cus_ms is from */
    char status[320];
} csr_row;

#define CSR_CHECK_TOL BENCH_CHECK_TOL

/* A call slower than this is timed once (its warm-up) rather than reps times, so that a slow
 * variant cannot take the section's time budget. */
#define CSR_SLOW_MS 1000.0

/* --size of the run, for the CSV's sizable column. */
extern int csr_large;

/* The inputs whose times are not dominated by launch latency, on which the targets are stated
 * beside the all-matrix geomeans: >= 1M nonzeros (SpMV, SpMM) or >= 1M products (SpGEMM);
 * 100k at --size small. */
int is_sizable(const csr_mat *c, int large);
int is_sizable_gemm(double products, int large);

/* One CSV row of c (columns in gpu/main.c's header comment); nothing without f. */
void csr_csv(FILE *f, const csr_mat *c, const csr_row *r);
/* A row with every number unset (written as empty). */
csr_row row_init(const char *op, const char *variant);
/* Status of a failed sbm call for the CSV, and its table cell: "n/a" (not supported in this
 * build yet), "-" (a plan format refused by its padding limit), "err" (anything else). */
const char *fail_note(sbm_ctx *ctx, sbm_status st, int plan_refusal, char *status, size_t n);
/* Device buffers (a failure ends the program): uninitialised, and of seeded random values. */
void *dev_alloc(size_t bytes);
double *dev_random(size_t count, uint64_t seed);
/* A host copy of count device doubles (malloc'ed). */
double *host_copy(const double *d, size_t count);
/* Elementwise check against cuSPARSE's result (bench_util.h: max relative difference per
 * entry, floored at 1e-3 of the largest entry); -1 without a reference. */
double max_rel_diff(const double *got, const double *ref, size_t count);
/* Appends the check's verdict and the single-timing note to a successful row's status. */
void note_check(csr_row *r);
/* A result that may be counted: checked and right, or not checkable (no cuSPARSE run). */
int check_passed(const csr_row *r);
/* r's ms, min_ms and max_ms from s. */
void row_times(csr_row *r, bench_stat s);
/* A device copy of the host matrix H on ctx (synchronised). */
sbm_csr *upload(sbm_ctx *ctx, const sbm_csr *H);

/* Time reps calls of `call` (an sbm_status expression) with CUDA events on the stream, after a
 * warm-up call, into the row r (ms = median, min_ms, max_ms); st is its first failure; a
 * warm-up slower than CSR_SLOW_MS is the only measurement (r->once = 1). */
#define TIME_SBM(st, r, stream, reps, call)                                                   \
    do {                                                                                      \
        cudaEvent_t e0_, e1_;                                                                 \
        double *t_ = calloc((size_t)(reps) + 1, sizeof *t_);                                  \
        int n_ = (reps);                                                                      \
        CHECK_CU(cudaEventCreate(&e0_));                                                      \
        CHECK_CU(cudaEventCreate(&e1_));                                                      \
        (st) = SBM_SUCCESS;                                                                   \
        (r)->once = 0;                                                                        \
        for (int rep_ = 0; rep_ <= (reps) && (st) == SBM_SUCCESS; rep_++) {                   \
            CHECK_CU(cudaEventRecord(e0_, (stream)));                                         \
            (st) = (call);                                                                    \
            CHECK_CU(cudaEventRecord(e1_, (stream)));                                         \
            CHECK_CU(cudaEventSynchronize(e1_));                                              \
            float f_ = 0.0f;                                                                  \
            CHECK_CU(cudaEventElapsedTime(&f_, e0_, e1_));                                    \
            if (rep_ > 0) t_[rep_ - 1] = f_;                                                  \
            if (rep_ == 0 && f_ > CSR_SLOW_MS) {                                              \
                t_[0] = f_;                                                                   \
                n_ = 1;                                                                       \
                (r)->once = 1;                                                                \
                break;                                                                        \
            }                                                                                 \
        }                                                                                     \
        row_times((r), (st) == SBM_SUCCESS ? bench_stat_of(t_, n_) : bench_stat_none());      \
        CHECK_CU(cudaEventDestroy(e0_));                                                      \
        CHECK_CU(cudaEventDestroy(e1_));                                                      \
        free(t_);                                                                             \
    } while (0)

/* The best of a peer's algorithms: the fastest that ran and passed the check. */
typedef struct peer_best {
    int ok;
    double ms;
    const char *name;
    char status[512];    /* the failures, for the table's notes */
} peer_best;

/* Every cuSPARSE algorithm of SpMV (k = 0: y = A*x, reps calls) or SpMM (width k: C = A*B),
 * one CSV row each (variant cusparse-ALG): *ref is the first one's result (host), the others
 * are checked against it. bytes: the SpMV's traffic, for its GB/s. */
peer_best cus_all(cudaStream_t stream, const csr_mat *c, const csr_opts *o, const sbm_csr *D, int64_t k,
                  const double *in, double *out, int reps, double bytes, double **ref);

/* The three parts, each a table with its targets (gpu/csr_spmv.c, _spmm.c, _gemm.c). */
void csr_spmv(sbm_ctx *ctx, cudaStream_t stream, const csr_mat *ms, int n, const csr_opts *o);
void csr_spmm(sbm_ctx *ctx, cudaStream_t stream, const csr_mat *ms, int n, const csr_opts *o);
void csr_gemm(sbm_ctx *host, sbm_ctx *ctx, cudaStream_t stream, const csr_mat *ms, int n,
              const csr_opts *o);

#endif /* SBM_BENCH_GPU_CSR_H */
