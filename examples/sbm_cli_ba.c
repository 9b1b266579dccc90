/* Bundle adjustment and SLAM commands of the sbm command-line tool. Public API only.
 *
 *   sbm ba-schur   --bal FILE [--backend cpu|cuda|auto] -o S.mtx [--rhs rhs.txt]
 *   sbm ba-solve   (--bal FILE | --generate C,P,K[,SEED]) [--backend ...] [--iterations N]
 *                  [--linear-solver auto|dense|sparse|pcg|pcg-matrix-free] [--pcg-iterations N]
 *                  [--pcg-tolerance T] [-o refined.txt]
 *   sbm slam-info  --g2o FILE [--backend ...] -o L.mtx [--rhs b.txt]
 *   sbm slam-solve --g2o FILE [--backend ...] [--method lm|gn] [--iterations N]
 *                  [--linear-solver auto|sparse|dense|pcg] [--pcg-iterations N]
 *                  [--pcg-tolerance T] [-o optimised.g2o]
 *   sbm bal-generate --cameras N --points N [--obs-per-point K] [--seed S] [--noise PX]
 *                  [--perturbation X] -o FILE
 *
 * Matrices are written as full symmetric scalar Matrix Market files (coordinate real general,
 * both triangles), vectors one value per line ("%.17g"). Every output appears only when the
 * whole command succeeded. */
#define _POSIX_C_SOURCE 200809L

#include "sbm_cli_ba.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sbm.h"
#include "sbm_ba.h"
#include "sbm_io.h"
#include "sbm_slam.h"
#include "cli_common.h"

static const char *const usage_ba_schur =
    "usage: sbm ba-schur --bal FILE [--backend cpu|cuda|auto] -o S.mtx [--rhs rhs.txt]\n"
    "\n"
    "Reduced camera system of a BAL problem (plain or .bz2) at the file's parameters, without\n"
    "damping: S = U - W V^-1 W^T with U = Jc^T Jc, V = Jp^T Jp, W = Jc^T Jp.\n"
    "\n"
    "  --bal FILE          the problem\n"
    "  --backend B         where S is formed: cpu (default), cuda, auto (cuda when a GPU is present)\n"
    "  -o, --output FILE   S as a full symmetric scalar Matrix Market file: 9 unknowns per\n"
    "                      camera in BAL order (angle-axis, translation, f, k1, k2), cameras as\n"
    "                      in the file\n"
    "  --rhs FILE          the reduced rhs gc - W V^-1 gp (g = -J^T r), one value per line\n";

static const char *const usage_ba_solve =
    "usage: sbm ba-solve (--bal FILE | --generate C,P,K[,SEED]) [--backend cpu|cuda|auto]\n"
    "                    [--iterations N]\n"
    "                    [--linear-solver auto|dense|sparse|pcg|pcg-matrix-free]\n"
    "                    [--pcg-iterations N] [--pcg-tolerance T] [-o refined.txt]\n"
    "\n"
    "Levenberg-Marquardt bundle adjustment on the reduced camera system; one line per\n"
    "iteration (cost 0.5 |r|^2 before and after to 12 digits, damping, accepted / rejected /\n"
    "lin-fail, max |gradient|, |step|, PCG iterations (* at the cap), seconds spent\n"
    "linearising, forming S, solving, updating; a failed factorisation, a rejected step, is\n"
    "followed by the failure, naming the camera or point as numbered in the file), then where\n"
    "the time went and why the solve stopped: \"converged (function tolerance)\" (or gradient,\n"
    "parameter tolerance, zero cost) or \"NOT converged: iteration limit\" (or no progress),\n"
    "with a warning when PCG stopped at its iteration cap.\n"
    "\n"
    "  --bal FILE          a BAL problem (plain or .bz2)\n"
    "  --generate C,P,K[,SEED]  a seeded synthetic problem: C cameras, P points, each seen by K\n"
    "                      cameras (SEED default 1)\n"
    "  --backend B         cpu (default), cuda, auto (cuda when a GPU is present)\n"
    "  --iterations N      iterations at most (default 200); the run also stops when the cost\n"
    "                      falls by at most 1e-10 of itself, max |gradient| <= 1e-10 or\n"
    "                      |step| <= 1e-10 (|x| + 1e-10)\n"
    "  --linear-solver S   auto (default: dense Cholesky up to 2000 unknowns of S; above,\n"
    "                      sparse, or pcg / pcg-matrix-free where S is nearly dense), dense,\n"
    "                      sparse (supernodal Cholesky of S, planned once), pcg (block-Jacobi\n"
    "                      on the explicit S), pcg-matrix-free (S never formed)\n"
    "  --pcg-iterations N  PCG iterations per step at most (default 200)\n"
    "  --pcg-tolerance T   PCG relative residual (default 1e-8)\n"
    "  -o, --output FILE   write the refined problem in BAL format\n";

static const char *const usage_slam_info =
    "usage: sbm slam-info --g2o FILE [--backend cpu|cuda|auto] -o L.mtx [--rhs b.txt]\n"
    "\n"
    "Information matrix Lambda = J^T Omega J of a g2o pose graph at its initial estimate (the\n"
    "spanning-tree start for files without VERTEX lines), fixed vertices removed.\n"
    "\n"
    "  --g2o FILE          the graph (VERTEX_SE2/EDGE_SE2 or VERTEX_SE3:QUAT/EDGE_SE3:QUAT, FIX)\n"
    "  --backend B         cpu (default), cuda, auto\n"
    "  -o, --output FILE   Lambda as a full symmetric scalar Matrix Market file: 3 (2D) or 6\n"
    "                      (3D) unknowns per free vertex, vertices in the file's order\n"
    "  --rhs FILE          b = J^T Omega e, one value per line (the step solves Lambda dx = -b)\n";

static const char *const usage_slam_solve =
    "usage: sbm slam-solve --g2o FILE [--backend cpu|cuda|auto] [--method lm|gn]\n"
    "                      [--iterations N] [--linear-solver auto|sparse|dense|pcg]\n"
    "                      [--pcg-iterations N] [--pcg-tolerance T] [-o optimised.g2o]\n"
    "\n"
    "Optimises a g2o pose graph from its poses (the spanning-tree start for files without VERTEX\n"
    "lines). The cost is 0.5 chi2 = 0.5 sum e^T Omega e (half g2o's chi2). One line per\n"
    "iteration: the cost before and after (12 digits), lambda (LM) or the step length (GN),\n"
    "accepted / rejected / linear failure (Lambda + damping not positive definite: a rejected\n"
    "step, the vertex named below it), max |gradient|, |step|, PCG iterations, seconds spent\n"
    "linearising, forming Lambda, solving, updating. Then why it stopped: 'converged (function\n"
    "tolerance)' etc. or 'NOT converged: iteration limit' / 'NOT converged: no progress'.\n"
    "\n"
    "  --method M          lm (default): Levenberg-Marquardt, gain-ratio damping of Lambda's\n"
    "                      diagonal; gn: Gauss-Newton with a backtracking line search\n"
    "  --iterations N      iterations at most (default 100); the run also stops when the cost\n"
    "                      falls by at most 1e-10 of itself, max |gradient| <= 1e-10 or\n"
    "                      |step| <= 1e-10 (|x| + 1e-10)\n"
    "  --linear-solver S   auto (default: sparse), sparse (block Cholesky, planned once,\n"
    "                      factored every iteration), dense (LAPACK on the host), pcg\n"
    "                      (block-Jacobi; inexact when it hits its iteration cap)\n"
    "  --pcg-iterations N  PCG iterations per step at most (default 500)\n"
    "  --pcg-tolerance T   PCG relative residual (default 1e-8)\n"
    "  -o, --output FILE   write the optimised graph in g2o format (the types read, %.17g, a\n"
    "                      FIX line for every vertex held fixed; \".bz2\": compressed)\n";

static const char *const usage_bal_generate =
    "usage: sbm bal-generate --cameras N --points N [--obs-per-point K] [--seed S]\n"
    "                        [--noise PIXELS] [--perturbation X] -o FILE\n"
    "\n"
    "Writes a seeded synthetic BAL problem (\".bz2\": compressed): cameras around a cloud of\n"
    "points, each point seen by K cameras (default 4), observations with Gaussian noise (default\n"
    "0.5 px), parameters perturbed from the truth (default scale 1).\n";

/* ---------------------------------------------------------------------------------------- */
/* Options                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Options of the commands (each command accepts a subset, see parse). */
typedef struct cli_opts {
    cli_backend backend;             /* --backend */
    const char *bal;                 /* --bal */
    const char *g2o;                 /* --g2o */
    const char *generate;            /* --generate */
    const char *out;                 /* -o */
    const char *rhs;                 /* --rhs */
    int iterations;                  /* --iterations (-1: default) */
    int linear_solver;               /* sbm_linear_solver, -1: default */
    int method;                      /* slam-solve --method: sbm_solver_method, -1: default */
    int pcg_iterations;              /* -1: default */
    double pcg_tolerance;            /* 0: default */
    int64_t cameras, points, obs;    /* bal-generate */
    int64_t seed;                    /* bal-generate --seed */
    double noise, perturbation;      /* bal-generate */
} cli_opts;

/* Option groups: a command accepts those in its mask. */
enum {
    OPT_BACKEND = 1 << 0,
    OPT_BAL = 1 << 1,
    OPT_G2O = 1 << 2,
    OPT_GENERATE = 1 << 3,
    OPT_OUT = 1 << 4,
    OPT_RHS = 1 << 5,
    OPT_SOLVER = 1 << 6, /* --iterations, --linear-solver, --pcg-* */
    OPT_GEN = 1 << 7,    /* bal-generate's options */
    OPT_METHOD = 1 << 8  /* slam-solve --method */
};

static const struct {
    const char *name;
    unsigned group;
} options[] = {
    {"--backend", OPT_BACKEND},       {"--bal", OPT_BAL},
    {"--g2o", OPT_G2O},               {"--generate", OPT_GENERATE},
    {"--output", OPT_OUT},            {"-o", OPT_OUT},
    {"--rhs", OPT_RHS},               {"--iterations", OPT_SOLVER},
    {"--linear-solver", OPT_SOLVER},  {"--pcg-iterations", OPT_SOLVER},
    {"--pcg-tolerance", OPT_SOLVER},  {"--cameras", OPT_GEN},
    {"--points", OPT_GEN},            {"--obs-per-point", OPT_GEN},
    {"--seed", OPT_GEN},              {"--noise", OPT_GEN},
    {"--perturbation", OPT_GEN},      {"--method", OPT_METHOD},
};
#define N_OPTIONS (sizeof options / sizeof options[0])

/* The value v of option name into o. @return NULL, or the message (with '%s' for v) of an
 * invalid value. */
static const char *set_option(cli_opts *o, const char *name, const char *v, unsigned mask)
{
    double x;
    int64_t n;
    if (!strcmp(name, "--backend"))
        return cli_parse_backend(v, &o->backend) ? NULL
                                                  : "unknown backend '%s' (cpu, cuda or auto)";
    if (!strcmp(name, "--bal")) o->bal = v;
    else if (!strcmp(name, "--g2o")) o->g2o = v;
    else if (!strcmp(name, "--generate")) o->generate = v;
    else if (!strcmp(name, "--output") || !strcmp(name, "-o")) o->out = v;
    else if (!strcmp(name, "--rhs")) o->rhs = v;
    else if (!strcmp(name, "--iterations")) {
        if (!cli_parse_int64(v, 0, 100000, &n)) return "invalid iteration count '%s' (0 to 100000)";
        o->iterations = (int)n;
    } else if (!strcmp(name, "--linear-solver")) {
        if (!strcmp(v, "auto")) o->linear_solver = SBM_LINEAR_AUTO;
        else if (!strcmp(v, "dense")) o->linear_solver = SBM_LINEAR_DENSE_CHOLESKY;
        else if (!strcmp(v, "pcg")) o->linear_solver = SBM_LINEAR_PCG;
        else if (!strcmp(v, "pcg-matrix-free") && (mask & OPT_GENERATE))
            o->linear_solver = SBM_LINEAR_PCG_MATRIX_FREE;
        else if (!strcmp(v, "sparse") && (mask & (OPT_GENERATE | OPT_METHOD)))
            o->linear_solver = SBM_LINEAR_SPARSE_CHOLESKY;
        else if (mask & OPT_GENERATE)
            return "unknown linear solver '%s' (auto, dense, sparse, pcg, pcg-matrix-free)";
        else
            return "unknown linear solver '%s' (auto, sparse, dense, pcg)";
    } else if (!strcmp(name, "--method")) {
        if (!strcmp(v, "lm")) o->method = SBM_METHOD_LEVENBERG_MARQUARDT;
        else if (!strcmp(v, "gn")) o->method = SBM_METHOD_GAUSS_NEWTON;
        else return "unknown method '%s' (lm or gn)";
    } else if (!strcmp(name, "--pcg-iterations")) {
        if (!cli_parse_int64(v, 1, 10000000, &n))
            return "invalid PCG iteration count '%s' (1 to 10000000)";
        o->pcg_iterations = (int)n;
    } else if (!strcmp(name, "--pcg-tolerance")) {
        if (!cli_parse_double(v, &x) || !(x > 0.0) || !(x < 1.0))
            return "invalid PCG tolerance '%s' (between 0 and 1)";
        o->pcg_tolerance = x;
    } else if (!strcmp(name, "--noise") || !strcmp(name, "--perturbation")) {
        if (!cli_parse_double(v, &x) || x < 0.0) return "invalid value '%s' (a number >= 0)";
        *(name[2] == 'n' ? &o->noise : &o->perturbation) = x;
    } else { /* the counts of bal-generate */
        const int is_seed = !strcmp(name, "--seed");
        if (!cli_parse_int64(v, is_seed ? 0 : 1, is_seed ? INT64_MAX : INT32_MAX, &n))
            return "invalid count '%s'";
        *(is_seed ? &o->seed : !strcmp(name, "--cameras") ? &o->cameras
                             : !strcmp(name, "--points")  ? &o->points
                                                          : &o->obs) = n;
    }
    return NULL;
}

/* Parse the options a command accepts (mask); --help prints its usage.
 * @return -1 to run the command, else the exit status. */
static int parse(int argc, char **argv, unsigned mask, const char *cmd, const char *usage,
                 cli_opts *o)
{
    memset(o, 0, sizeof *o);
    o->backend = CLI_BACKEND_CPU;
    o->iterations = -1;
    o->linear_solver = -1;
    o->method = -1;
    o->pcg_iterations = -1;
    o->obs = 4;
    o->seed = 1;
    o->noise = 0.5;
    o->perturbation = 1.0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        }
        int m = 0;
        size_t k = 0;
        while (k < N_OPTIONS &&
               (!(mask & options[k].group) ||
                (m = cli_match_option(argc, argv, &i, options[k].name, 1, &v)) == 0))
            k++;
        if (k == N_OPTIONS)
            return cli_command_error(usage, cmd, a[0] == '-' ? "unknown option '%s'"
                                                             : "unexpected argument '%s'", a);
        if (m < 0) return cli_command_error(usage, cmd, "option %s needs a value", a);
        const char *bad = set_option(o, options[k].name, v, mask);
        if (bad) return cli_command_error(usage, cmd, bad, v);
    }
    return -1;
}

/* ---------------------------------------------------------------------------------------- */
/* Helpers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* "sbm: cmd: needs what" and the usage. @return EXIT_USAGE. */
static int needs(const char *usage, const char *cmd, const char *what)
{
    return cli_command_error(usage, cmd, "needs %s", what);
}

/* What every command works with: the host context (files, host copies), the input read or
 * generated into it, and the compute context of --backend. */
typedef struct ba_cmd {
    sbm_ctx *host;       /* CPU context */
    sbm_ctx *ctx;        /* compute context */
    sbm_bal_problem *p;  /* --bal or generated */
    sbm_g2o_graph *g;    /* --g2o */
} ba_cmd;

/* The host context, the input (--bal, gen when not NULL, or --g2o) and the compute context.
 * @return 0 or EXIT_FAILURE (reported); cmd_close releases c either way. */
static int cmd_open(const cli_opts *o, const sbm_bal_generate_options *gen, ba_cmd *c)
{
    memset(c, 0, sizeof *c);
    if (sbm_ctx_create(&c->host, SBM_BACKEND_CPU, 0) != SBM_SUCCESS)
        return cli_lib_error(NULL, NULL);
    sbm_status st = SBM_SUCCESS;
    if (o->bal)
        st = sbm_bal_read(c->host, o->bal, &c->p);
    else if (gen)
        st = sbm_bal_generate(c->host, gen, &c->p);
    else if (o->g2o)
        st = sbm_g2o_read(c->host, o->g2o, &c->g);
    if (st != SBM_SUCCESS) return cli_lib_error(c->host, o->generate ? "--generate" : NULL);
    return cli_make_context(o->backend, &c->ctx);
}

static void cmd_close(ba_cmd *c)
{
    sbm_bal_destroy(c->p);
    sbm_g2o_destroy(c->g);
    sbm_ctx_destroy(c->ctx);
    sbm_ctx_destroy(c->host);
}

static const char *solver_name(sbm_linear_solver s)
{
    switch (s) {
    case SBM_LINEAR_DENSE_CHOLESKY: return "dense Cholesky";
    case SBM_LINEAR_PCG: return "PCG (block-Jacobi)";
    case SBM_LINEAR_PCG_MATRIX_FREE: return "matrix-free PCG (block-Jacobi)";
    case SBM_LINEAR_SPARSE_CHOLESKY: return "sparse Cholesky";
    default: return "auto";
    }
}

/* The full symmetric scalar form *C of an upper-stored block matrix (host). */
static int symmetric_csr(sbm_ctx *host, const sbm_cbc *A, sbm_csr **C)
{
    sbm_cbc_info ai = sbm_cbc_get_info(A);
    const int64_t n = ai.nbr * ai.r;
    const int64_t bs = (int64_t)ai.r * ai.c;
    int64_t cap = 2 * ai.nnzb * bs + 1;
    int32_t *ri = malloc((size_t)cap * sizeof(int32_t)), *ci = malloc((size_t)cap * sizeof(int32_t));
    double *v = malloc((size_t)cap * sizeof(double));
    int rc = EXIT_FAILURE;
    if (!ri || !ci || !v) {
        fprintf(stderr, "sbm: out of memory for %lld entries\n", (long long)cap);
        goto done;
    }
    int64_t t = 0;
    for (int64_t j = 0; j < ai.nbc; j++)
        for (int64_t k = ai.colptr[j]; k < ai.colptr[j + 1]; k++) {
            const int64_t i = ai.rowind[k];
            const double *b = ai.values + k * bs;
            /* the upper triangle defines the matrix: inside a diagonal block too (its two
             * triangles agree only to rounding), so the file is exactly symmetric */
            for (int c = 0; c < ai.c; c++)
                for (int r = 0; r < ai.r; r++) {
                    if (i == j && r > c) continue;
                    const int32_t row = (int32_t)(i * ai.r + r), col = (int32_t)(j * ai.c + c);
                    ri[t] = row, ci[t] = col, v[t] = b[r + c * ai.r], t++;
                    if (row != col) ri[t] = col, ci[t] = row, v[t] = b[r + c * ai.r], t++;
                }
        }
    if (sbm_csr_from_triplets(host, C, n, n, t, ri, ci, v) != SBM_SUCCESS) {
        cli_lib_error(host, NULL);
        goto done;
    }
    rc = 0;
done:
    free(ri), free(ci), free(v);
    return rc;
}

/* The symmetric matrix A to out and, with vec_path, the vector x (n values, one per line)
 * beside it, each through the library's atomic writer, so that either both files appear or
 * neither does: everything that can fail but I/O is done first, then the vector is written (a
 * failing --rhs leaves -o untouched), then the matrix; should that write fail, the new vector
 * is removed (an older file at --rhs is then gone: the price of two files without a shared
 * commit). */
static int write_system(sbm_ctx *host, const sbm_cbc *A, const char *out, const char *vec_path,
                        const double *x, int64_t n)
{
    sbm_csr *C = NULL;
    int rc = EXIT_FAILURE;
    if (symmetric_csr(host, A, &C) != 0) goto done;
    if (vec_path && sbm_dense_write_txt(host, vec_path, n, x) != SBM_SUCCESS) {
        cli_lib_error(host, NULL);
        goto done;
    }
    if (sbm_csr_write_mtx(host, out, C) != SBM_SUCCESS) {
        cli_lib_error(host, NULL);
        if (vec_path) unlink(vec_path);
        goto done;
    }
    rc = 0;
done:
    sbm_csr_destroy(C);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* ba-schur                                                                                 */
/* ---------------------------------------------------------------------------------------- */

int sbm_cli_ba_schur(int argc, char **argv)
{
    cli_opts o;
    int rc = parse(argc, argv, OPT_BACKEND | OPT_BAL | OPT_OUT | OPT_RHS, "ba-schur",
                   usage_ba_schur, &o);
    if (rc >= 0) return rc;
    if (!o.bal) return needs(usage_ba_schur, "ba-schur", "a problem: --bal FILE");
    if (!o.out || !o.out[0])
        return needs(usage_ba_schur, "ba-schur", "an output file: -o S.mtx");

    ba_cmd c;
    sbm_ba_system *sys = NULL;
    sbm_cbc *S = NULL, *hS = NULL;
    double *rhs = NULL;
    rc = EXIT_FAILURE;
    if (cmd_open(&o, NULL, &c) != 0) goto done;
    const sbm_bal_info pi = sbm_bal_get_info(c.p);
    rhs = malloc((size_t)(9 * pi.cameras + 1) * sizeof(double));
    if (!rhs) {
        fprintf(stderr, "sbm: out of memory\n");
        goto done;
    }
    if (sbm_ba_system_create(c.ctx, c.p, &sys) != SBM_SUCCESS ||
        sbm_ba_linearize(c.ctx, sys, c.p) != SBM_SUCCESS ||
        sbm_ba_system_reduce(c.ctx, sys, &S, rhs) != SBM_SUCCESS) {
        cli_lib_error(c.ctx, o.bal);
        goto done;
    }
    if (sbm_cbc_copy(c.host, S, &hS) != SBM_SUCCESS) {
        cli_lib_error(c.host, NULL);
        goto done;
    }
    if (write_system(c.host, hS, o.out, o.rhs, rhs, 9 * pi.cameras) != 0) goto done;
    const sbm_cbc_info si = sbm_cbc_get_info(hS);
    printf("%s: %lld cameras, %lld points, %lld observations, cost %.6e\n", o.bal,
           (long long)pi.cameras, (long long)pi.points, (long long)pi.observations,
           sbm_ba_system_get_info(sys).cost);
    printf("S: %lld x %lld (%lld x %lld blocks of 9x9, %lld in the upper triangle), backend %s -> "
           "%s%s%s\n",
           (long long)(9 * pi.cameras), (long long)(9 * pi.cameras), (long long)si.nbr,
           (long long)si.nbc, (long long)si.nnzb, cli_backend_name(c.ctx), o.out,
           o.rhs ? ", rhs -> " : "", o.rhs ? o.rhs : "");
    rc = 0;
done:
    free(rhs);
    sbm_cbc_destroy(hS);
    sbm_cbc_destroy(S);
    sbm_ba_system_destroy(sys);
    cmd_close(&c);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* ba-solve and slam-solve                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* ba-solve's report: one line per iteration, the failure of a rejected factorisation below
 * its line (user: the context, which holds the message). */
static void ba_print_iteration(void *user, const sbm_iteration_report *r)
{
    if (r->iteration == 1)
        printf("%4s  %19s  %19s  %9s  %-8s  %9s  %9s  %5s  %8s  %8s  %8s  %9s  %8s\n", "iter",
               "cost", "new cost", "lambda", "result", "|gradient|", "|step|", "pcg", "lin(s)",
               "Schur(s)", "solve(s)", "update(s)", "total(s)");
    const char *result = r->accepted ? "accepted" : r->linear_failed ? "lin-fail" : "rejected";
    char pcg[16];
    snprintf(pcg, sizeof pcg, "%d%s", r->linear_iterations, r->linear_capped ? "*" : "");
    printf("%4d  %19.12e  %19.12e  %9.2e  %-8s  %9.2e  %9.2e  %5s  %8.4f  %8.4f  %8.4f  %9.4f  "
           "%8.4f\n",
           r->iteration, r->cost_before, r->cost, r->lambda, result, r->gradient_norm,
           r->step_norm, pcg, r->time_linearize, r->time_schur, r->time_solve, r->time_update,
           r->time_total);
    if (r->linear_failed)
        printf("      step rejected: %s\n", sbm_ctx_last_error((sbm_ctx *)user));
    fflush(stdout);
}

/* Solve the problem with the options of o: a line per iteration, where the time went, why it
 * stopped. @return 0 or EXIT_FAILURE (reported). */
static int ba_solve_run(const cli_opts *o, const ba_cmd *c)
{
    sbm_solver_options so = sbm_solver_default_options();
    if (o->iterations >= 0) so.max_iterations = o->iterations;
    if (o->linear_solver >= 0) so.linear_solver = (sbm_linear_solver)o->linear_solver;
    if (o->pcg_iterations > 0) so.pcg_max_iterations = o->pcg_iterations;
    if (o->pcg_tolerance > 0) so.pcg_tolerance = o->pcg_tolerance;
    so.callback = ba_print_iteration;
    so.user = c->ctx;
    sbm_solver_summary s;
    if (sbm_ba_solve(c->ctx, c->p, &so, &s) != SBM_SUCCESS) return cli_lib_error(c->ctx, o->bal);
    const double tot = s.time_total > 0 ? s.time_total : 1e-300;
    printf("cost %.12e -> %.12e (%.3g times lower) in %d iterations (%d accepted), %s; "
           "max |gradient| %.3e\n",
           s.initial_cost, s.final_cost, s.final_cost > 0 ? s.initial_cost / s.final_cost : INFINITY,
           s.iterations, s.accepted, solver_name(s.linear_solver), s.final_gradient_norm);
    printf("time %.3f s: linearize %.3f s (%.0f%%), Schur %.3f s (%.0f%%), solve %.3f s (%.0f%%), "
           "update %.3f s (%.0f%%)\n",
           s.time_total, s.time_linearize, 100 * s.time_linearize / tot, s.time_schur,
           100 * s.time_schur / tot, s.time_solve, 100 * s.time_solve / tot, s.time_update,
           100 * s.time_update / tot);
    if (s.linear_failures > 0)
        printf("%d of %d steps rejected: the factorisation failed\n", s.linear_failures,
               s.iterations);
    if (s.linear_capped > 0)
        printf("warning: PCG hit its %d-iteration cap in %d of %d solves; the steps were inexact "
               "(raise --pcg-iterations or use --linear-solver sparse)\n",
               so.pcg_max_iterations, s.linear_capped, s.iterations);
    if (sbm_stop_reason_converged(s.stop_reason))
        printf("converged (%s)\n", sbm_stop_reason_name(s.stop_reason));
    else
        printf("NOT converged: %s\n", sbm_stop_reason_name(s.stop_reason));
    return 0;
}

/* "C,P,K[,SEED]" */
static int parse_generate(const char *s, sbm_bal_generate_options *g)
{
    long v[4] = {0, 0, 0, 1};
    int n = 0;
    const char *p = s;
    while (n < 4) {
        char *e = NULL;
        errno = 0;
        const long x = strtol(p, &e, 10);
        if (e == p || errno != 0 || x < 0) return 0;
        v[n++] = x;
        if (*e == '\0') break;
        if (*e != ',') return 0;
        p = e + 1;
    }
    if (n < 3) return 0;
    *g = sbm_bal_generate_defaults(v[0], v[1], (int)(v[2] > INT32_MAX ? INT32_MAX : v[2]), (uint64_t)v[3]);
    return 1;
}

int sbm_cli_ba_solve(int argc, char **argv)
{
    cli_opts o;
    int rc = parse(argc, argv, OPT_BACKEND | OPT_BAL | OPT_GENERATE | OPT_SOLVER | OPT_OUT,
                   "ba-solve", usage_ba_solve, &o);
    if (rc >= 0) return rc;
    if (!o.bal == !o.generate)
        return needs(usage_ba_solve, "ba-solve", "one problem: --bal FILE or --generate C,P,K[,SEED]");
    sbm_bal_generate_options g;
    if (o.generate && !parse_generate(o.generate, &g))
        return cli_command_error(usage_ba_solve, "ba-solve",
                                 "invalid --generate '%s' (C,P,K[,SEED])", o.generate);

    ba_cmd c;
    rc = EXIT_FAILURE;
    if (cmd_open(&o, o.generate ? &g : NULL, &c) != 0) goto done;
    const sbm_bal_info pi = sbm_bal_get_info(c.p);
    if (o.bal)
        printf("problem: %s", o.bal);
    else
        printf("problem: synthetic (seed %llu, noise %g px)", (unsigned long long)g.seed,
               g.pixel_noise);
    printf(": %lld cameras, %lld points, %lld observations; backend %s\n", (long long)pi.cameras,
           (long long)pi.points, (long long)pi.observations, cli_backend_name(c.ctx));
    if (ba_solve_run(&o, &c) != 0) goto done;
    if (o.out) {
        if (sbm_bal_write(c.host, o.out, c.p) != SBM_SUCCESS) {
            cli_lib_error(c.host, NULL);
            goto done;
        }
        printf("refined problem -> %s\n", o.out);
    }
    rc = 0;
done:
    cmd_close(&c);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* slam-info and slam-solve                                                                 */
/* ---------------------------------------------------------------------------------------- */

int sbm_cli_slam_info(int argc, char **argv)
{
    cli_opts o;
    int rc = parse(argc, argv, OPT_BACKEND | OPT_G2O | OPT_OUT | OPT_RHS, "slam-info",
                   usage_slam_info, &o);
    if (rc >= 0) return rc;
    if (!o.g2o) return needs(usage_slam_info, "slam-info", "a graph: --g2o FILE");
    if (!o.out || !o.out[0])
        return needs(usage_slam_info, "slam-info", "an output file: -o L.mtx");

    ba_cmd c;
    sbm_slam_system *sys = NULL;
    sbm_cbc *hL = NULL;
    double *b = NULL;
    rc = EXIT_FAILURE;
    if (cmd_open(&o, NULL, &c) != 0) goto done;
    if (sbm_slam_system_create(c.ctx, c.g, &sys) != SBM_SUCCESS ||
        sbm_slam_linearize(c.ctx, sys, c.g) != SBM_SUCCESS) {
        cli_lib_error(c.ctx, o.g2o);
        goto done;
    }
    const sbm_slam_system_info si = sbm_slam_system_get_info(sys);
    const int64_t n = si.free_vertices * si.error_dim;
    b = malloc((size_t)(n + 1) * sizeof(double));
    if (!b) {
        fprintf(stderr, "sbm: out of memory\n");
        goto done;
    }
    if (sbm_slam_system_get_b(c.ctx, sys, b) != SBM_SUCCESS) {
        cli_lib_error(c.ctx, NULL);
        goto done;
    }
    if (sbm_cbc_copy(c.host, si.Lambda, &hL) != SBM_SUCCESS) {
        cli_lib_error(c.host, NULL);
        goto done;
    }
    if (write_system(c.host, hL, o.out, o.rhs, b, n) != 0) goto done;
    const sbm_g2o_info gi = sbm_g2o_get_info(c.g);
    printf("%s: %dD, %lld vertices (%lld fixed), %lld edges%s, chi2 %.6e\n", o.g2o, gi.dim,
           (long long)gi.vertices, (long long)gi.fixed, (long long)gi.edges,
           gi.from_edges ? ", poses from a spanning tree" : "", si.chi2);
    printf("Lambda: %lld x %lld (%lld blocks of %dx%d in the upper triangle), backend %s -> "
           "%s%s%s\n",
           (long long)n, (long long)n, (long long)sbm_cbc_get_info(hL).nnzb, si.error_dim,
           si.error_dim, cli_backend_name(c.ctx), o.out, o.rhs ? ", b -> " : "",
           o.rhs ? o.rhs : "");
    rc = 0;
done:
    free(b);
    sbm_cbc_destroy(hL);
    sbm_slam_system_destroy(sys);
    cmd_close(&c);
    return rc;
}

/* slam-solve's report: one line per iteration, the failure of a rejected factorisation below
 * its line. */
typedef struct slam_print {
    sbm_ctx *ctx;    /* holds the message of a failed factorisation */
    int lm;          /* Levenberg-Marquardt: lambda; Gauss-Newton: the step length */
    int iterative;   /* PCG: its iterations */
} slam_print;

static void slam_print_iteration(void *user, const sbm_iteration_report *r)
{
    const slam_print *sp = user;
    if (r->iteration == 1)
        printf("%4s  %19s  %19s  %9s  %-8s  %9s  %9s  %5s  %8s  %9s  %8s  %9s  %8s\n", "iter",
               "cost", "new cost", sp->lm ? "lambda" : "step", "result", "|gradient|", "|step|",
               "pcg", "lin(s)", "Lambda(s)", "solve(s)", "update(s)", "total(s)");
    const char *result = r->accepted ? "accepted" : r->linear_failed ? "lin-fail" : "rejected";
    char pcg[16] = "-";
    if (sp->iterative)
        snprintf(pcg, sizeof pcg, "%d%s", r->linear_iterations, r->linear_capped ? "*" : "");
    printf("%4d  %19.12e  %19.12e  %9.2e  %-8s  %9.2e  %9.2e  %5s  %8.4f  %9.4f  %8.4f  %9.4f  "
           "%8.4f\n",
           r->iteration, r->cost_before, r->cost, r->lambda, result, r->gradient_norm,
           r->step_norm, pcg, r->time_linearize, r->time_schur, r->time_solve, r->time_update,
           r->time_total);
    if (r->linear_failed) printf("      step rejected: %s\n", sbm_ctx_last_error(sp->ctx));
    fflush(stdout);
}

/* Solve the graph with the options of o; -o writes the result. @return 0 or EXIT_FAILURE. */
static int slam_solve_run(const cli_opts *o, const ba_cmd *c)
{
    sbm_solver_options so = sbm_solver_default_options();
    so.pcg_max_iterations = 500;
    if (o->iterations >= 0) so.max_iterations = o->iterations;
    if (o->linear_solver >= 0) so.linear_solver = (sbm_linear_solver)o->linear_solver;
    if (o->method >= 0) so.method = (sbm_solver_method)o->method;
    if (o->pcg_iterations > 0) so.pcg_max_iterations = o->pcg_iterations;
    if (o->pcg_tolerance > 0) so.pcg_tolerance = o->pcg_tolerance;
    const int lm = so.method == SBM_METHOD_LEVENBERG_MARQUARDT;
    slam_print sp = {c->ctx, lm, so.linear_solver == SBM_LINEAR_PCG};
    so.callback = slam_print_iteration;
    so.user = &sp;
    printf("%s, cost 0.5 chi2\n", lm ? "Levenberg-Marquardt" : "Gauss-Newton");
    sbm_solver_summary s;
    if (sbm_slam_solve(c->ctx, c->g, &so, &s) != SBM_SUCCESS) return cli_lib_error(c->ctx, o->g2o);
    const double tot = s.time_total > 0 ? s.time_total : 1e-300;
    printf("cost %.12e -> %.12e in %d iterations (%d accepted), %s; max |gradient| %.3e\n",
           s.initial_cost, s.final_cost, s.iterations, s.accepted,
           solver_name(s.linear_solver), s.final_gradient_norm);
    printf("time %.3f s: linearize %.3f s (%.0f%%), Lambda %.3f s (%.0f%%), solve %.3f s (%.0f%%), "
           "update %.3f s (%.0f%%)\n",
           s.time_total, s.time_linearize, 100 * s.time_linearize / tot, s.time_schur,
           100 * s.time_schur / tot, s.time_solve, 100 * s.time_solve / tot, s.time_update,
           100 * s.time_update / tot);
    if (s.linear_failures > 0)
        printf("%d of %d steps rejected: Lambda + damping was not positive definite\n",
               s.linear_failures, s.iterations);
    if (s.linear_capped > 0)
        printf("warning: PCG hit its %d-iteration cap in %d of %d solves; the steps were inexact\n",
               so.pcg_max_iterations, s.linear_capped, s.iterations);
    if (sbm_stop_reason_converged(s.stop_reason))
        printf("converged (%s)\n", sbm_stop_reason_name(s.stop_reason));
    else if (s.stop_reason == SBM_STOP_NONE)
        printf("nothing to optimise (every vertex is fixed)\n");
    else
        printf("NOT converged: %s\n", sbm_stop_reason_name(s.stop_reason));
    if (o->out) {
        if (sbm_g2o_write(c->host, c->g, o->out) != SBM_SUCCESS)
            return cli_lib_error(c->host, NULL);
        printf("wrote %s\n", o->out);
    }
    return 0;
}

int sbm_cli_slam_solve(int argc, char **argv)
{
    cli_opts o;
    int rc = parse(argc, argv, OPT_BACKEND | OPT_G2O | OPT_SOLVER | OPT_METHOD | OPT_OUT,
                   "slam-solve", usage_slam_solve, &o);
    if (rc >= 0) return rc;
    if (!o.g2o)
        return needs(usage_slam_solve, "slam-solve", "a graph: --g2o FILE");
    if (o.out && !o.out[0])
        return needs(usage_slam_solve, "slam-solve", "an output file name: -o FILE");
    ba_cmd c;
    rc = EXIT_FAILURE;
    if (cmd_open(&o, NULL, &c) != 0) goto done;
    const sbm_g2o_info gi = sbm_g2o_get_info(c.g);
    printf("graph: %s: %dD, %lld vertices (%lld fixed), %lld edges%s; backend %s\n", o.g2o, gi.dim,
           (long long)gi.vertices, (long long)gi.fixed, (long long)gi.edges,
           gi.from_edges ? ", poses from a spanning tree" : "", cli_backend_name(c.ctx));
    if (slam_solve_run(&o, &c) != 0) goto done;
    rc = 0;
done:
    cmd_close(&c);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* bal-generate                                                                             */
/* ---------------------------------------------------------------------------------------- */

int sbm_cli_bal_generate(int argc, char **argv)
{
    cli_opts o;
    int rc = parse(argc, argv, OPT_GEN | OPT_OUT, "bal-generate", usage_bal_generate, &o);
    if (rc >= 0) return rc;
    if (o.cameras == 0 || o.points == 0)
        return needs(usage_bal_generate, "bal-generate", "--cameras N and --points N");
    if (!o.out || !o.out[0])
        return needs(usage_bal_generate, "bal-generate", "an output file: -o FILE");
    sbm_bal_generate_options g =
        sbm_bal_generate_defaults(o.cameras, o.points, (int)o.obs, (uint64_t)o.seed);
    g.pixel_noise = o.noise;
    g.perturbation = o.perturbation;
    ba_cmd c;
    rc = EXIT_FAILURE;
    if (cmd_open(&o, &g, &c) != 0) goto done;
    if (sbm_bal_write(c.host, o.out, c.p) != SBM_SUCCESS) {
        cli_lib_error(c.host, NULL);
        goto done;
    }
    printf("%s: %lld cameras, %lld points, %lld observations (seed %lld)\n", o.out,
           (long long)o.cameras, (long long)o.points, (long long)sbm_bal_get_info(c.p).observations,
           (long long)o.seed);
    rc = 0;
done:
    cmd_close(&c);
    return rc;
}
