/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench-ba's shared declarations (bench/results/NOTES-ba-gpu.md): one solve of a BA or SLAM
 * problem with its per-iteration reports and its CSV / table output (run.c), and the minimum
 * DRAM traffic of each BA phase (floor.c); the copy-bandwidth yardstick is in
 * common/bench_util.h (common/bench_copy.c). */
#ifndef SBM_BENCH_BA_H
#define SBM_BENCH_BA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/bench_util.h"
#include "sbm_ba.h"
#include "sbm_slam.h"

#define BA_MAX_REPORTS 512

/* The minimum bytes each BA phase must read and write (ba/floor.c; NOTES-ba-gpu.md gives
 * the formulas). A negative figure: not determined. */
typedef struct ba_bytes {
    double lin;        /* linearisation: parameters, observations -> U, V, W, gc, gp, cost */
    double schur;      /* V^-1, Y = W V^-1, rhs (and S when it is formed) */
    double pcg_iter;   /* one PCG iteration (matrix-free or on the explicit S) */
    double pcg_setup;  /* the preconditioner (block diagonal of S) once per solve */
    double update;     /* back-substitution, new parameters, their cost */
} ba_bytes;

/* The dimensions the floors need. s_blocks: stored blocks of S's upper triangle (-1: unknown). */
typedef struct ba_dims {
    int64_t cameras;       /* nc */
    int64_t points;        /* np */
    int64_t observations;  /* no */
    int64_t w_blocks;      /* nw: distinct camera-point pairs (-1: unknown) */
    int64_t s_blocks;      /* ns: stored blocks of S, upper triangle with the diagonal (-1) */
} ba_dims;

/* Dimensions of a problem: W's blocks (distinct camera-point pairs) and S's (distinct camera
 * pairs sharing a point, i <= j; counted when cameras^2 bits fit in 512 MB, else -1). */
ba_dims ba_dims_of(const sbm_bal_problem *p);
/* Minimum bytes per phase for the linear solver used (sbm_solver_summary.linear_solver). */
ba_bytes ba_bytes_of(const ba_dims *d, sbm_linear_solver ls);
/* The solve phase's bytes for pcg_its PCG iterations (Cholesky: -1, flop-bound). */
double ba_solve_bytes(const ba_bytes *b, sbm_linear_solver ls, double pcg_its);
/* ms to move bytes at gbs GB/s (-1 if either is unknown). */
double ba_floor_ms(double bytes, double gbs);

/* ---- one solve (ba/run.c) ---- */

typedef struct ba_run {
    char section[16];      /* "ba", "bal", "e2e", "slam", "scaling", "oom", "warm-up" */
    char problem[96];      /* "synthetic C,P,K,SEED", a file's base name, "poses3d-N" */
    sbm_backend backend;   /* the context's backend */
    char device[128];      /* the CUDA device's name, or the host CPU's */
    int64_t cameras;       /* BA problems (0 for SLAM) */
    int64_t points;
    int64_t observations;
    int64_t vertices;      /* pose graphs (0 for BA) */
    int64_t edges;
    ba_dims dims;          /* BA: for the floors */
    int max_iterations;    /* the solver's cap */
    size_t cap_bytes;      /* allocator cap (0: none) */
    size_t budget_bytes;   /* sbm_ctx_set_memory_budget (0: default) */
    /* results */
    sbm_status status;     /* of the solve (or of the context's creation) */
    char message[480];     /* the context's last error when status is not SBM_SUCCESS */
    sbm_solver_summary sum;
    int nrep;              /* reports received (at most BA_MAX_REPORTS kept) */
    sbm_iteration_report rep[BA_MAX_REPORTS];
    double wall_s;         /* the sbm_ba_solve / sbm_slam_solve call, host clock */
    double peak_bytes;     /* the context's allocations, most live at once (-1: unknown) */
    char note[200];        /* what the table and the CSV should say about the run */
} ba_run;

/* A run of the section/problem on backend, with nothing measured yet. */
void ba_run_init(ba_run *r, const char *section, const char *problem, sbm_backend backend,
                 int max_iterations);
/* Solve p (its parameters are restored afterwards) on a fresh context of r->backend with the
 * default options, max_iterations and linear solver AUTO; fills r. @return 0, or -1 when the
 * context could not be made (r->message says why). */
int ba_run_bal(ba_run *r, sbm_bal_problem *p);
/* The same for a pose graph (its poses restored afterwards). */
int ba_run_slam(ba_run *r, sbm_g2o_graph *g);

/* Medians over the iterations (ms): lin over the iterations that relinearised (else the
 * setup's linearisation), the other phases over all, total over the full cycles (iterations
 * that relinearised; else the sum of the phase medians). pcg: median PCG iterations. */
typedef struct ba_medians {
    double lin;       /* ms */
    double schur;
    double solve;
    double update;
    double total;     /* ms per iteration (a full cycle) */
    double pcg;       /* PCG iterations per solve */
    int linearizations; /* iterations that relinearised */
    double setup_s;   /* wall_s minus the iterations' totals: contexts, patterns, plans, upload */
} ba_medians;
ba_medians ba_medians_of(const ba_run *r);

/* ---- output (ba/run.c) ---- */

extern const char *const ba_cols[];
/* The CSV rows of a run (one "run" row of medians, one "iter" row per iteration) and its table
 * line on stdout; copy_gbs for the floors (BA runs). */
void ba_report(const ba_run *r, double copy_gbs, bench_csv_row *cr, FILE *csv);
/* A row saying a run was skipped and why (visible in the table and the CSV). */
void ba_report_skip(const char *section, const char *problem, sbm_backend backend,
                    int64_t observations, const char *why, bench_csv_row *cr, FILE *csv);
/* The yardstick's CSV row and line. */
void ba_report_yardstick(const char *device, double gbs, const char *what, double device_bytes,
                         bench_csv_row *cr, FILE *csv);

#endif /* SBM_BENCH_BA_H */
