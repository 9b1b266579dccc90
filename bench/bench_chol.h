/* sbm-bench-chol's shared declarations: the matrices it factors (bench_chol_inputs.c), the
 * figures of one factorisation (sbm's in sbm_bench_chol.c, CHOLMOD's in peer_cholmod.c) and the
 * residual check both are held to. */
#ifndef SBM_BENCH_CHOL_H
#define SBM_BENCH_CHOL_H

#include <stddef.h>
#include <stdint.h>

#include "bench_util.h"
#include "sbm.h"

/* One symmetric positive definite matrix to factor. */
typedef struct chol_matrix {
    char name[64];     /* "intel", "problem-49-7776-pre", "ba-1000", "poses3d-100000", ... */
    char kind[16];     /* "Lambda" (pose graph) or "S" (BA reduced camera system) */
    sbm_cbc *A;        /* upper block triangle, b x b blocks, on the host context */
    int b;             /* block size */
    int64_t nb;        /* block columns */
    int64_t nnzb;      /* stored blocks of the upper block triangle */
    double build_s;    /* seconds to read / generate and linearise it */
    /* the same matrix as a scalar CSC of its upper triangle (entries i <= j), the input of the
     * CHOLMOD peer and of the residual check */
    int64_t n;         /* nb * b */
    int64_t nnz;       /* entries of the scalar upper triangle */
    int64_t *colptr;   /* [n+1] */
    int64_t *rowind;   /* [nnz], ascending in each column */
    double *val;       /* [nnz] */
} chol_matrix;

/* The figures of one factorisation (times in ms: median [min-max] after a warm-up). */
typedef struct chol_run {
    int ok;            /* 1: measured; 0: failed or not available, note says why */
    char note[200];
    bench_stat analyze;  /* sbm_chol_plan / cholmod_analyze */
    bench_stat factor;   /* sbm_chol_factor / cholmod_factorize */
    bench_stat solve;    /* one right-hand side */
    double factor_values; /* doubles stored for L (sbm: factor_values; CHOLMOD: L->xsize) */
    double lnz;          /* CHOLMOD: nonzeros of L (Common->lnz); sbm: -1 */
    double flops;        /* one factorisation, by the library's own count */
    double supernodes;
    double peak_bytes;   /* most bytes in use at once above the input matrix, or -1 */
    double residual;     /* |A x - b| / |b| of a solve */
} chol_run;

/* A run with nothing measured (every figure "not measured"). */
chol_run chol_run_none(void);

/* Seconds on the monotonic clock. */
double chol_now_s(void);

/* y = A x for the symmetric matrix of m's upper-triangle CSC. */
void chol_sym_multiply(const chol_matrix *m, const double *x, double *y);
/* |A x - b| / |b| (2-norms). work: n doubles. */
double chol_residual(const chol_matrix *m, const double *x, const double *b, double *work);
/* The seeded right-hand side of every solve (n values in [-1, 1)). */
void chol_rhs(int64_t n, double *b);

/* The timing of one phase (the same rule for sbm and CHOLMOD): an untimed warm-up call, then
 * up to reps timed calls, fewer when the warm-up shows that reps would exceed budget seconds
 * (at least 1); a warm-up call longer than budget is itself the one timed call (its first-touch
 * effects are small against its length; this halves the time of the largest factorisations).
 *     chol_timing tm; chol_timing_start(&tm, reps, budget);
 *     do { t0 = now; call...; } while (chol_timing_next(&tm, now - t0));
 *     stat = chol_timing_stat(&tm); */
#define CHOL_MAX_REPS 64

typedef struct chol_timing {
    double t[CHOL_MAX_REPS]; /* ms of the timed calls */
    int want, done, calls;
    double budget;
} chol_timing;

void chol_timing_start(chol_timing *tm, int reps, double budget);
/* Record a call of s seconds; 1 if another call is wanted. */
int chol_timing_next(chol_timing *tm, double s);
bench_stat chol_timing_stat(chol_timing *tm);

/* CHOLMOD's supernodal factorisation of m (AMD ordering only, postordered), each phase timed
 * as chol_timing says. Without CHOLMOD: a result that says so (ok = 0). */
void run_cholmod(const chol_matrix *m, int reps, double budget, chol_run *r);
/* "CHOLMOD x.y.z (supernodal, AMD)" or "CHOLMOD: skipped (...)". */
const char *cholmod_describe(void);
/* 1 when the bench was built with CHOLMOD. */
int cholmod_available(void);

/* ---- the counting allocator (bench_chol_memory.c): an sbm_allocator with user = a counter ---- */

#define TRACK_SLOTS (1 << 16)

typedef struct counter {
    int device;        /* 1: cudaMalloc; 0: malloc */
    size_t cap;        /* refuse an allocation that would take live above cap (0: no cap) */
    size_t live, peak;
    int lost;          /* the table overflowed: peak unknown */
    void *ptr[TRACK_SLOTS];
    size_t size[TRACK_SLOTS];
} counter;

void *counting_alloc(void *user, size_t bytes);
void counting_free(void *user, void *p);

/* ---- inputs (bench_chol_inputs.c) ---- */

/* Lambda of a g2o file at its poses (sbm_slam_system_create / sbm_slam_linearize). */
int chol_input_g2o(sbm_ctx *host, const char *path, chol_matrix *m, char *err, size_t errsize);
/* S of a BAL file after one linearisation with the solver's first damping (1e-4, Marquardt's
 * diagonal scaling of U and V), as sbm_ba_solve factors it. */
int chol_input_bal(sbm_ctx *host, const char *path, chol_matrix *m, char *err, size_t errsize);
/* The same for a synthetic BAL problem of cameras x points, obs observations per point. */
int chol_input_ba_generated(sbm_ctx *host, int64_t cameras, int64_t points, int obs,
                            chol_matrix *m, char *err, size_t errsize);
/* Lambda of a seeded synthetic pose graph of poses poses (dim 2: a grid in the plane; dim 3:
 * rings on a sphere), odometry plus loop closures to the previous row (see the .c file),
 * written as a g2o file into dir and read back. */
int chol_input_pose_graph(sbm_ctx *host, int dim, int64_t poses, const char *dir,
                          chol_matrix *m, char *err, size_t errsize);
void chol_matrix_free(chol_matrix *m);
/* The seed of chol_input_pose_graph's graph of poses poses (sbm-bench-ba solves the same). */
#define CHOL_POSE_GRAPH_SEED(poses) (20261127u + (uint64_t)(poses))
/* Write that synthetic pose graph (dim 2 or 3, seeded) as a g2o file. @return 0 or -1 (errno
 * set). */
int chol_write_pose_graph(const char *path, int dim, int64_t poses, uint64_t seed);

#endif /* SBM_BENCH_CHOL_H */
