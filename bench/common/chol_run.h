/* SPDX-License-Identifier: BSD-3-Clause */
/* One factorisation's figures, and the rules sbm-bench-chol holds sbm (chol/main.c) and CHOLMOD
 * (peers/peer_cholmod.c) to alike: the timing of a phase (on bench_now_s's clock), the
 * right-hand side of a solve and its residual check (chol_run.c). */
#ifndef SBM_BENCH_CHOL_RUN_H
#define SBM_BENCH_CHOL_RUN_H

#include <stdint.h>

#include "bench_util.h"
#include "chol_inputs.h"

/* The figures of one factorisation (times in ms: median [min-max] after a warm-up). */
typedef struct chol_run {
    int ok;            /* 1: measured; 0: failed or not available, note says why */
    char note[200];
    bench_stat analyze;  /* sbm_chol_plan / cholmod_analyze */
    bench_stat factor;   /* sbm_chol_factor / cholmod_factorize */
    bench_stat solve;    /* one right-hand side */
    bench_stat inverse;  /* sbm: the block diagonal of A^-1 (sbm_chol_inverse_diagonal) after a
                          * factorisation; CHOLMOD: not measured */
    double factor_values; /* doubles stored for L (sbm: factor_values; CHOLMOD: L->xsize) */
    double lnz;          /* CHOLMOD: nonzeros of L (Common->lnz); sbm: -1 */
    double flops;        /* one factorisation, by the library's own count */
    double supernodes;
    double peak_bytes;   /* most bytes in use at once above the input matrix, or -1 */
    double residual;     /* |A x - b| / |b| of a solve */
} chol_run;

/* A run with nothing measured (every figure "not measured"). */
chol_run chol_run_none(void);

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

#endif /* SBM_BENCH_CHOL_RUN_H */
