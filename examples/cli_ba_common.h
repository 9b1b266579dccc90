/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the bundle adjustment and SLAM commands of the sbm command-line tool
 * (sbm_cli_ba.c: ba-schur, ba-solve, bal-generate; sbm_cli_slam.c: slam-info, slam-solve):
 * their options, the input and contexts a command works with, and the solvers' report lines.
 * Public API only. */
#ifndef SBM_CLI_BA_COMMON_H
#define SBM_CLI_BA_COMMON_H

#include "cli_common.h"
#include "sbm_dist.h"

/* Options of the commands (each command accepts a subset, see parse). */
typedef struct cli_opts {
    cli_backend backend;             /* --backend */
    const char *bal;                 /* --bal */
    const char *g2o;                 /* --g2o */
    sbm_g2o_information information; /* --information (0: refuse) */
    const char *generate;            /* --generate */
    const char *out;                 /* -o */
    const char *rhs;                 /* --rhs */
    const char *cov;                 /* --covariance */
    int iterations;                  /* --iterations (-1: default) */
    int linear_solver;               /* sbm_linear_solver, -1: default */
    int method;                      /* slam-solve --method: sbm_solver_method, -1: default */
    int pcg_iterations;              /* -1: default */
    double pcg_tolerance;            /* 0: default */
    int pcg_forcing;                 /* -1: default, else an sbm_pcg_forcing */
    double pcg_forcing_max;          /* 0: default */
    sbm_loss loss;                   /* --loss (default none) */
    double lambda, min_lambda;       /* --lambda, --min-lambda (-1: default) */
    int64_t cameras, points, obs;    /* bal-generate */
    int64_t seed;                    /* bal-generate --seed */
    double noise, perturbation;      /* bal-generate */
    int gpus;                        /* ba-solve --gpus (0: one context) */
    int partition;                   /* ba-solve --partition: sbm_partition_method */
    int layout;                      /* --layout: sbm_bal_layout */
} cli_opts;

/* Option groups: a command accepts those in its mask. */
enum {
    OPT_BACKEND = 1 << 0,
    OPT_BAL = 1 << 1,
    OPT_G2O = 1 << 2,    /* --g2o, --information */
    OPT_GENERATE = 1 << 3,
    OPT_OUT = 1 << 4,
    OPT_RHS = 1 << 5,
    OPT_SOLVER = 1 << 6, /* --iterations, --linear-solver, --pcg-*, --loss, --*lambda */
    OPT_GEN = 1 << 7,    /* bal-generate's options */
    OPT_METHOD = 1 << 8, /* slam-solve --method */
    OPT_DIST = 1 << 9,   /* ba-solve --gpus, --partition */
    OPT_COV = 1 << 10     /* slam-solve --covariance */
};

/* What every command works with: the host context (files, host copies), the input read or
 * generated into it, and the compute context of --backend. */
typedef struct ba_cmd {
    sbm_ctx *host;       /* CPU context */
    sbm_ctx *ctx;        /* compute context */
    sbm_bal_problem *p;  /* --bal or generated */
    sbm_g2o_graph *g;    /* --g2o */
} ba_cmd;

/* Parse the options a command accepts (mask); --help prints its usage.
 * @return -1 to run the command, else the exit status. */
int cli_ba_parse(int argc, char **argv, unsigned mask, const char *cmd, const char *usage,
                 cli_opts *o);
/* "sbm: cmd: needs what" and the usage. @return EXIT_USAGE. */
/* The solver options the command line set, over base (the command's defaults): iterations,
 * linear solver, PCG cap, tolerance and forcing, damping and its floor, the loss. One place, so
 * that every solve (BA, distributed BA, SLAM) honours every option. */
void cli_ba_solver_options(const cli_opts *o, sbm_solver_options *so);
int cli_ba_needs(const char *usage, const char *cmd, const char *what);
/* The host context, the input (--bal, gen when not NULL, or --g2o, with --information) and the
 * compute context. @return 0 or EXIT_FAILURE (reported); cli_ba_close releases c either way. */
int cli_ba_open(const cli_opts *o, const sbm_bal_generate_options *gen, ba_cmd *c);
void cli_ba_close(ba_cmd *c);
/* The range of --loss's scale as text ("1e-6 to 1e150"), from sbm_solve.h's macros. */
#define CLI_STR_(x) #x
#define CLI_STR(x) CLI_STR_(x)
#define CLI_LOSS_SCALE_RANGE CLI_STR(SBM_LOSS_SCALE_MIN) " to " CLI_STR(SBM_LOSS_SCALE_MAX)
/* --loss's value: "none", "huber:A" or "cauchy:A" with A a number from SBM_LOSS_SCALE_MIN to
 * SBM_LOSS_SCALE_MAX (sbm_solver_options.loss). @return NULL, or the message of an invalid
 * value with '%s' for *bad (the whole value or its scale). */
const char *cli_ba_parse_loss(const char *v, sbm_loss *loss, const char **bad);
/* The loss as --loss takes it ("none", "huber:1.5"): the scale to the digits that read back
 * exactly. */
void cli_ba_loss_text(sbm_loss loss, char *buf, size_t size);
/* Warnings on stderr, before a solve, naming what no residual determines: cameras without an
 * observation, points seen by fewer than 2 cameras, fewer residuals than parameters. */
void cli_ba_warn_unconstrained(const sbm_bal_problem *p, const char *name);
/* The symmetric matrix A (upper block triangle) to out as full scalar Matrix Market and, with
 * vec_path, the vector x (n values) beside it: both files appear or neither does.
 * @return 0 or EXIT_FAILURE (reported). */
int cli_ba_write_system(sbm_ctx *host, const sbm_cbc *A, const char *out, const char *vec_path,
                        const double *x, int64_t n);
/* nblocks d x d blocks (column-major, one after the other) as the block diagonal of a
 * (nblocks d) x (nblocks d) matrix, to path as a coordinate real symmetric Matrix Market file
 * (the lower triangle of every block). @return 0 or EXIT_FAILURE (reported). */
int cli_ba_write_block_diagonal(sbm_ctx *host, const char *path, int64_t nblocks, int d,
                                const double *blocks);
/* The solvers' time line (system: "Schur" or "Lambda") and stop line (none: what
 * SBM_STOP_NONE means for the command). */
void cli_ba_print_times(const sbm_solver_summary *s, const char *system);
void cli_ba_print_stop(const sbm_solver_summary *s, const char *none);

#endif /* SBM_CLI_BA_COMMON_H */
