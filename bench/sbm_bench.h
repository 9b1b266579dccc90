/* sbm-bench's shared declarations: the generated case, sbm's result of one case and backend,
 * the CSparse peer's (peer_csparse.c) and the clock both are timed with. */
#ifndef SBM_BENCH_H
#define SBM_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "bench_util.h"
#include "sbm.h"

typedef enum family { POISSON2D, POISSON3D, BA, RANDOM } family;

typedef struct case_spec {
    char name[48];
    family fam;
    int r, k, c;            /* block shape triple of the product */
    int64_t g;              /* grid size (Poisson) */
    int64_t cameras, points; /* BA */
    int obs;                /* BA observations per point */
    int64_t nb;             /* random: block rows = inner = block columns */
    int per_col;            /* random: blocks per column */
} case_spec;

/* A generated case: the operands on the host, as the product sees them. */
typedef struct bench_case {
    const case_spec *spec;
    sbm_op op_a, op_b;
    unsigned flags;
    sbm_cbc *A, *B;
} bench_case;

/* Wall clock by default. --clock cpu times the thread's CPU time instead: on a shared machine
 * it leaves out the time other processes held the core (CPU backend and CSparse only; a CUDA
 * wait does not show in it). */
extern clockid_t bench_clock;
/* Seconds on bench_clock. */
double now_s(void);

typedef struct sbm_result {
    int ok;              /* 1 measured; 0 failed or not available (note says why) */
    sbm_status status;   /* why not */
    char note[160];
    double plan_ms;      /* median */
    double exec_ms;      /* median */
    double oneshot_ms;   /* median of sbm_cbc_gemm */
    bench_stat plan, exec, oneshot; /* the same with min and max */
    int oneshot_same;    /* 1 if sbm_cbc_gemm gave bitwise the C of plan + execute */
    int64_t products;
    int64_t nnzb_c;
    int64_t slices;
    int fast_path;
    int64_t rows_c, cols_c;
    int rc_, cc_;        /* block shape of C */
    double flops;        /* 2*r*k*c*products */
    sbm_cbc *c_host;     /* C on the host, for the check against the peer (sbm_result_free) */
} sbm_result;

/* "STATUS: message" of a failed call on ctx (may be NULL). */
void note_error(char *note, size_t size, const sbm_ctx *ctx, sbm_status st);

typedef struct peer_result {
    int ok;           /* 1 measured */
    char note[160];   /* why not */
    double ms;        /* median time of one full call */
    bench_stat t;     /* the same with min and max */
    double flops;     /* the peer's own multiply-add count x 2 (it may compute more than sbm) */
    void *C;          /* its C (CSparse: a cs_di, CSC), for the check; peer_result_free */
    int r_c, c_c, upper; /* C's block shape; 1: only the upper block triangle is compared */
} peer_result;

/* max relative difference per entry (bench_util.h) of sbm's C against the peer's; -1 when
 * either is missing. */
double peer_diff(sbm_ctx *host, const peer_result *p, const sbm_result *s);
void peer_result_free(peer_result *p);

/* CSparse cs_multiply on the scalar expansion of bc's product (timed with now_s, reps calls after
 * a warm-up); r_c x c_c: C's block shape, for the upper-triangle check. Without CSparse: a
 * result saying so. */
void run_csparse(sbm_ctx *host, const bench_case *bc, int reps, int r_c, int c_c, peer_result *res);

#endif /* SBM_BENCH_H */
