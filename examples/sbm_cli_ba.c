/* Bundle adjustment and SLAM commands of the sbm command-line tool. Public API only.
 *
 *   sbm ba-schur   --bal FILE [--backend cpu|cuda|auto] -o S.mtx [--rhs rhs.txt]
 *   sbm ba-solve   (--bal FILE | --generate C,P,K[,SEED]) [--backend ...] [--iterations N]
 *                  [--linear-solver auto|dense|pcg|pcg-matrix-free] [--pcg-iterations N]
 *                  [--pcg-tolerance T] [-o refined.txt]
 *   sbm slam-info  --g2o FILE [--backend ...] -o L.mtx [--rhs b.txt]
 *   sbm slam-solve --g2o FILE [--backend ...] [--iterations N] [--linear-solver auto|dense|pcg]
 *                  [--pcg-iterations N] [--pcg-tolerance T]
 *   sbm bal-generate --cameras N --points N [--obs-per-point K] [--seed S] [--noise PX]
 *                  [--perturbation X] -o FILE
 *
 * Matrices are written as full symmetric scalar Matrix Market files (coordinate real general,
 * both triangles), vectors one value per line ("%.17g"). Every output appears only when the
 * whole command succeeded. */
#define _POSIX_C_SOURCE 200809L

#include "sbm_cli_ba.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
    "                    [--iterations N] [--linear-solver auto|dense|pcg|pcg-matrix-free]\n"
    "                    [--pcg-iterations N] [--pcg-tolerance T] [-o refined.txt]\n"
    "\n"
    "Levenberg-Marquardt bundle adjustment on the reduced camera system; one line per\n"
    "iteration (cost, damping, PCG iterations, seconds spent linearising, forming S, solving,\n"
    "updating), then where the time went.\n"
    "\n"
    "  --bal FILE          a BAL problem (plain or .bz2)\n"
    "  --generate C,P,K[,SEED]  a seeded synthetic problem: C cameras, P points, each seen by K\n"
    "                      cameras (SEED default 1)\n"
    "  --backend B         cpu (default), cuda, auto (cuda when a GPU is present)\n"
    "  --iterations N      iterations at most (default 10)\n"
    "  --linear-solver S   auto (default: dense Cholesky up to 2000 unknowns, else pcg), dense,\n"
    "                      pcg (block-Jacobi on the explicit S), pcg-matrix-free\n"
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
    "usage: sbm slam-solve --g2o FILE [--backend cpu|cuda|auto] [--iterations N]\n"
    "                      [--linear-solver auto|dense|pcg] [--pcg-iterations N]\n"
    "                      [--pcg-tolerance T]\n"
    "\n"
    "Gauss-Newton with a backtracking line search; chi2 per iteration.\n"
    "\n"
    "  --iterations N      iterations at most (default 10)\n"
    "  --linear-solver S   auto (default: dense Cholesky up to 2000 unknowns, else pcg), dense, pcg\n"
    "  --pcg-iterations N  PCG iterations per step at most (default 500)\n"
    "  --pcg-tolerance T   PCG relative residual (default 1e-8)\n";

static const char *const usage_bal_generate =
    "usage: sbm bal-generate --cameras N --points N [--obs-per-point K] [--seed S]\n"
    "                        [--noise PIXELS] [--perturbation X] -o FILE\n"
    "\n"
    "Writes a seeded synthetic BAL problem (\".bz2\": compressed): cameras around a cloud of\n"
    "points, each point seen by K cameras (default 4), observations with Gaussian noise (default\n"
    "0.5 px), parameters perturbed from the truth (default scale 1).\n";

/* ---------------------------------------------------------------------------------------- */
/* Helpers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *e = NULL;
    errno = 0;
    const long v = strtol(s, &e, 10);
    if (e == s || *e != '\0' || errno != 0 || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

static int parse_double(const char *s, double *out)
{
    char *e = NULL;
    errno = 0;
    const double v = strtod(s, &e);
    if (e == s || *e != '\0' || errno != 0 || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

/* Shared options of the commands. */
typedef struct cli_opts {
    int backend;               /* 0 cpu, 1 cuda, 2 auto */
    const char *bal;           /* --bal */
    const char *g2o;           /* --g2o */
    const char *generate;      /* --generate */
    const char *out;           /* -o */
    const char *rhs;           /* --rhs */
    int iterations;            /* --iterations (-1: default) */
    int linear_solver;         /* sbm_linear_solver, -1: default */
    int pcg_iterations;        /* -1: default */
    double pcg_tolerance;      /* 0: default */
    long cameras, points, obs; /* bal-generate */
    long seed;
    double noise, perturbation;
    int help;
} cli_opts;

enum {
    OPT_BACKEND = 1 << 0,
    OPT_BAL = 1 << 1,
    OPT_G2O = 1 << 2,
    OPT_GENERATE = 1 << 3,
    OPT_OUT = 1 << 4,
    OPT_RHS = 1 << 5,
    OPT_SOLVER = 1 << 6, /* --iterations, --linear-solver, --pcg-* */
    OPT_GEN = 1 << 7     /* bal-generate's options */
};

/* Parse the options a command accepts (mask). @return 0 or an exit status. */
static int parse(int argc, char **argv, unsigned mask, const char *cmd, const char *usage,
                 cli_opts *o)
{
    memset(o, 0, sizeof *o);
    o->iterations = -1;
    o->linear_solver = -1;
    o->pcg_iterations = -1;
    o->obs = 4;
    o->seed = 1;
    o->noise = 0.5;
    o->perturbation = 1.0;
    char what[96];
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        int m;
        snprintf(what, sizeof what, "%s: option %%s needs a value", cmd);
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            o->help = 1;
            return 0;
        } else if ((mask & OPT_BACKEND) && (m = cli_match_option(argc, argv, &i, "--backend", 1, &v))) {
            if (m < 0) return cli_usage_error(usage, what, a);
            if (!strcmp(v, "cpu")) o->backend = 0;
            else if (!strcmp(v, "cuda")) o->backend = 1;
            else if (!strcmp(v, "auto")) o->backend = 2;
            else {
                snprintf(what, sizeof what, "%s: unknown backend '%%s' (cpu, cuda or auto)", cmd);
                return cli_usage_error(usage, what, v);
            }
        } else if ((mask & OPT_BAL) && (m = cli_match_option(argc, argv, &i, "--bal", 1, &v))) {
            if (m < 0) return cli_usage_error(usage, what, a);
            o->bal = v;
        } else if ((mask & OPT_G2O) && (m = cli_match_option(argc, argv, &i, "--g2o", 1, &v))) {
            if (m < 0) return cli_usage_error(usage, what, a);
            o->g2o = v;
        } else if ((mask & OPT_GENERATE) && (m = cli_match_option(argc, argv, &i, "--generate", 1, &v))) {
            if (m < 0) return cli_usage_error(usage, what, a);
            o->generate = v;
        } else if ((mask & OPT_OUT) && ((m = cli_match_option(argc, argv, &i, "--output", 1, &v)) ||
                                        (m = cli_match_option(argc, argv, &i, "-o", 1, &v)))) {
            if (m < 0) return cli_usage_error(usage, what, a);
            o->out = v;
        } else if ((mask & OPT_RHS) && (m = cli_match_option(argc, argv, &i, "--rhs", 1, &v))) {
            if (m < 0) return cli_usage_error(usage, what, a);
            o->rhs = v;
        } else if ((mask & OPT_SOLVER) && (m = cli_match_option(argc, argv, &i, "--iterations", 1, &v))) {
            long n;
            if (m < 0) return cli_usage_error(usage, what, a);
            snprintf(what, sizeof what, "%s: invalid iteration count '%%s' (0 to 100000)", cmd);
            if (!parse_long(v, 0, 100000, &n)) return cli_usage_error(usage, what, v);
            o->iterations = (int)n;
        } else if ((mask & OPT_SOLVER) &&
                   (m = cli_match_option(argc, argv, &i, "--linear-solver", 1, &v))) {
            if (m < 0) return cli_usage_error(usage, what, a);
            if (!strcmp(v, "auto")) o->linear_solver = SBM_LINEAR_AUTO;
            else if (!strcmp(v, "dense")) o->linear_solver = SBM_LINEAR_DENSE_CHOLESKY;
            else if (!strcmp(v, "pcg")) o->linear_solver = SBM_LINEAR_PCG;
            else if (!strcmp(v, "pcg-matrix-free") && (mask & OPT_GENERATE))
                o->linear_solver = SBM_LINEAR_PCG_MATRIX_FREE;
            else {
                snprintf(what, sizeof what, "%s: unknown linear solver '%%s' (auto, dense, pcg%s)",
                         cmd, (mask & OPT_GENERATE) ? ", pcg-matrix-free" : "");
                return cli_usage_error(usage, what, v);
            }
        } else if ((mask & OPT_SOLVER) &&
                   (m = cli_match_option(argc, argv, &i, "--pcg-iterations", 1, &v))) {
            long n;
            if (m < 0) return cli_usage_error(usage, what, a);
            snprintf(what, sizeof what, "%s: invalid PCG iteration count '%%s' (1 to 10000000)", cmd);
            if (!parse_long(v, 1, 10000000, &n)) return cli_usage_error(usage, what, v);
            o->pcg_iterations = (int)n;
        } else if ((mask & OPT_SOLVER) &&
                   (m = cli_match_option(argc, argv, &i, "--pcg-tolerance", 1, &v))) {
            if (m < 0) return cli_usage_error(usage, what, a);
            snprintf(what, sizeof what, "%s: invalid PCG tolerance '%%s' (between 0 and 1)", cmd);
            if (!parse_double(v, &o->pcg_tolerance) || !(o->pcg_tolerance > 0.0) ||
                !(o->pcg_tolerance < 1.0))
                return cli_usage_error(usage, what, v);
        } else if ((mask & OPT_GEN) && ((m = cli_match_option(argc, argv, &i, "--cameras", 1, &v)) ||
                                        (m = cli_match_option(argc, argv, &i, "--points", 1, &v)) ||
                                        (m = cli_match_option(argc, argv, &i, "--obs-per-point", 1, &v)) ||
                                        (m = cli_match_option(argc, argv, &i, "--seed", 1, &v)))) {
            if (m < 0) return cli_usage_error(usage, what, a);
            const int is_seed = strncmp(a, "--seed", 6) == 0;
            long n;
            snprintf(what, sizeof what, "%s: invalid count '%%s'", cmd);
            if (!parse_long(v, is_seed ? 0 : 1, is_seed ? LONG_MAX : INT32_MAX, &n))
                return cli_usage_error(usage, what, v);
            if (!strncmp(a, "--cameras", 9)) o->cameras = n;
            else if (!strncmp(a, "--points", 8)) o->points = n;
            else if (!strncmp(a, "--obs", 5)) o->obs = n;
            else o->seed = n;
        } else if ((mask & OPT_GEN) && ((m = cli_match_option(argc, argv, &i, "--noise", 1, &v)) ||
                                        (m = cli_match_option(argc, argv, &i, "--perturbation", 1, &v)))) {
            if (m < 0) return cli_usage_error(usage, what, a);
            double x;
            snprintf(what, sizeof what, "%s: invalid value '%%s' (a number >= 0)", cmd);
            if (!parse_double(v, &x) || x < 0.0) return cli_usage_error(usage, what, v);
            if (!strncmp(a, "--noise", 7)) o->noise = x;
            else o->perturbation = x;
        } else if (a[0] == '-') {
            snprintf(what, sizeof what, "%s: unknown option '%%s'", cmd);
            return cli_usage_error(usage, what, a);
        } else {
            snprintf(what, sizeof what, "%s: unexpected argument '%%s'", cmd);
            return cli_usage_error(usage, what, a);
        }
    }
    return 0;
}

/* The compute context of --backend (auto: CUDA when a device is present). */
static int make_context(int backend, sbm_ctx **ctx)
{
    sbm_backend b = SBM_BACKEND_CPU;
    if (backend == 1 || (backend == 2 && sbm_cuda_device_count() > 0)) b = SBM_BACKEND_CUDA;
    if (sbm_ctx_create(ctx, b, 0) != SBM_SUCCESS)
        return cli_lib_error(NULL, b == SBM_BACKEND_CUDA ? "--backend cuda" : NULL);
    return 0;
}

static const char *backend_name(const sbm_ctx *ctx)
{
    return sbm_ctx_backend(ctx) == SBM_BACKEND_CUDA ? "cuda" : "cpu";
}

static const char *solver_name(sbm_linear_solver s)
{
    switch (s) {
    case SBM_LINEAR_DENSE_CHOLESKY: return "dense Cholesky";
    case SBM_LINEAR_PCG: return "PCG (block-Jacobi)";
    case SBM_LINEAR_PCG_MATRIX_FREE: return "matrix-free PCG (block-Jacobi)";
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
    int rc = parse(argc, argv, OPT_BACKEND | OPT_BAL | OPT_OUT | OPT_RHS, "ba-schur", usage_ba_schur, &o);
    if (rc) return rc;
    if (o.help) {
        fputs(usage_ba_schur, stdout);
        return 0;
    }
    if (!o.bal) return cli_usage_error(usage_ba_schur, "ba-schur: %s", "needs a problem: --bal FILE");
    if (!o.out || !o.out[0])
        return cli_usage_error(usage_ba_schur, "ba-schur: %s", "needs an output file: -o S.mtx");

    sbm_ctx *host = NULL, *ctx = NULL;
    sbm_bal_problem *p = NULL;
    sbm_ba_system *sys = NULL;
    sbm_cbc *S = NULL, *hS = NULL;
    double *rhs = NULL;
    rc = EXIT_FAILURE;
    if (sbm_ctx_create(&host, SBM_BACKEND_CPU, 0) != SBM_SUCCESS) {
        cli_lib_error(NULL, NULL);
        goto done;
    }
    if (sbm_bal_read(host, o.bal, &p) != SBM_SUCCESS) {
        cli_lib_error(host, NULL);
        goto done;
    }
    if (make_context(o.backend, &ctx) != 0) goto done;
    const sbm_bal_info pi = sbm_bal_get_info(p);
    rhs = malloc((size_t)(9 * pi.cameras + 1) * sizeof(double));
    if (!rhs) {
        fprintf(stderr, "sbm: out of memory\n");
        goto done;
    }
    if (sbm_ba_system_create(ctx, p, &sys) != SBM_SUCCESS ||
        sbm_ba_linearize(ctx, sys, p) != SBM_SUCCESS ||
        sbm_ba_system_reduce(ctx, sys, &S, rhs) != SBM_SUCCESS) {
        cli_lib_error(ctx, o.bal);
        goto done;
    }
    if (sbm_cbc_copy(host, S, &hS) != SBM_SUCCESS) {
        cli_lib_error(host, NULL);
        goto done;
    }
    if (write_system(host, hS, o.out, o.rhs, rhs, 9 * pi.cameras) != 0) goto done;
    const sbm_cbc_info si = sbm_cbc_get_info(hS);
    printf("%s: %lld cameras, %lld points, %lld observations, cost %.6e\n", o.bal,
           (long long)pi.cameras, (long long)pi.points, (long long)pi.observations,
           sbm_ba_system_get_info(sys).cost);
    printf("S: %lld x %lld (%lld x %lld blocks of 9x9, %lld in the upper triangle), backend %s -> %s%s%s\n",
           (long long)(9 * pi.cameras), (long long)(9 * pi.cameras), (long long)si.nbr,
           (long long)si.nbc, (long long)si.nnzb, backend_name(ctx), o.out, o.rhs ? ", rhs -> " : "",
           o.rhs ? o.rhs : "");
    rc = 0;
done:
    free(rhs);
    sbm_cbc_destroy(hS);
    sbm_cbc_destroy(S);
    sbm_ba_system_destroy(sys);
    sbm_bal_destroy(p);
    sbm_ctx_destroy(ctx);
    sbm_ctx_destroy(host);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* ba-solve and slam-solve                                                                  */
/* ---------------------------------------------------------------------------------------- */

typedef struct print_state {
    int slam; /* chi2 and step length instead of cost and lambda */
} print_state;

static void print_iteration(void *user, const sbm_iteration_report *r)
{
    const print_state *ps = user;
    if (r->iteration == 1) {
        printf("%4s  %13s  %13s  %-8s  %9s  %5s  %9s  %9s  %9s  %9s  %9s\n", "iter",
               ps->slam ? "chi2" : "cost", ps->slam ? "new chi2" : "new cost", "step",
               ps->slam ? "length" : "lambda", "pcg", "lin(s)", ps->slam ? "Lambda(s)" : "Schur(s)",
               "solve(s)", "update(s)", "total(s)");
    }
    printf("%4d  %13.6e  %13.6e  %-8s  %9.2e  %5d  %9.4f  %9.4f  %9.4f  %9.4f  %9.4f\n", r->iteration,
           r->cost_before, r->cost, r->accepted ? "accepted" : "rejected", r->lambda,
           r->linear_iterations, r->time_linearize, r->time_schur, r->time_solve, r->time_update,
           r->time_total);
    fflush(stdout);
}

static void print_summary(const sbm_solver_summary *s, const char *what, int slam)
{
    const double tot = s->time_total > 0 ? s->time_total : 1e-300;
    printf("%s %.6e -> %.6e (%.3g times lower) in %d iterations (%d accepted), %s\n", what,
           s->initial_cost, s->final_cost,
           s->final_cost > 0 ? s->initial_cost / s->final_cost : INFINITY, s->iterations, s->accepted,
           solver_name(s->linear_solver));
    printf("time %.3f s: linearize %.3f s (%.0f%%), %s %.3f s (%.0f%%), solve %.3f s (%.0f%%), "
           "update %.3f s (%.0f%%)\n",
           s->time_total, s->time_linearize, 100 * s->time_linearize / tot, slam ? "Lambda" : "Schur",
           s->time_schur, 100 * s->time_schur / tot, s->time_solve, 100 * s->time_solve / tot,
           s->time_update, 100 * s->time_update / tot);
}

static void apply_solver_options(const cli_opts *o, sbm_solver_options *so)
{
    if (o->iterations >= 0) so->max_iterations = o->iterations;
    if (o->linear_solver >= 0) so->linear_solver = (sbm_linear_solver)o->linear_solver;
    if (o->pcg_iterations > 0) so->pcg_max_iterations = o->pcg_iterations;
    if (o->pcg_tolerance > 0) so->pcg_tolerance = o->pcg_tolerance;
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
    int rc = parse(argc, argv, OPT_BACKEND | OPT_BAL | OPT_GENERATE | OPT_SOLVER | OPT_OUT, "ba-solve",
                   usage_ba_solve, &o);
    if (rc) return rc;
    if (o.help) {
        fputs(usage_ba_solve, stdout);
        return 0;
    }
    if (!o.bal == !o.generate)
        return cli_usage_error(usage_ba_solve, "ba-solve: %s",
                           "needs one problem: --bal FILE or --generate C,P,K[,SEED]");
    sbm_bal_generate_options g;
    if (o.generate && !parse_generate(o.generate, &g))
        return cli_usage_error(usage_ba_solve, "ba-solve: invalid --generate '%s' (C,P,K[,SEED])", o.generate);

    sbm_ctx *host = NULL, *ctx = NULL;
    sbm_bal_problem *p = NULL;
    rc = EXIT_FAILURE;
    if (sbm_ctx_create(&host, SBM_BACKEND_CPU, 0) != SBM_SUCCESS) {
        cli_lib_error(NULL, NULL);
        goto done;
    }
    if ((o.bal ? sbm_bal_read(host, o.bal, &p) : sbm_bal_generate(host, &g, &p)) != SBM_SUCCESS) {
        cli_lib_error(host, o.generate ? "--generate" : NULL);
        goto done;
    }
    if (make_context(o.backend, &ctx) != 0) goto done;
    const sbm_bal_info pi = sbm_bal_get_info(p);
    if (o.bal)
        printf("problem: %s", o.bal);
    else
        printf("problem: synthetic (seed %llu, noise %g px)", (unsigned long long)g.seed, g.pixel_noise);
    printf(": %lld cameras, %lld points, %lld observations; backend %s\n", (long long)pi.cameras,
           (long long)pi.points, (long long)pi.observations, backend_name(ctx));
    sbm_solver_options so = sbm_solver_default_options();
    apply_solver_options(&o, &so);
    print_state ps = {0};
    so.callback = print_iteration;
    so.user = &ps;
    sbm_solver_summary s;
    if (sbm_ba_solve(ctx, p, &so, &s) != SBM_SUCCESS) {
        cli_lib_error(ctx, o.bal);
        goto done;
    }
    print_summary(&s, "cost", 0);
    if (o.out) {
        if (sbm_bal_write(host, o.out, p) != SBM_SUCCESS) {
            cli_lib_error(host, NULL);
            goto done;
        }
        printf("refined problem -> %s\n", o.out);
    }
    rc = 0;
done:
    sbm_bal_destroy(p);
    sbm_ctx_destroy(ctx);
    sbm_ctx_destroy(host);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* slam-info and slam-solve                                                                 */
/* ---------------------------------------------------------------------------------------- */

int sbm_cli_slam_info(int argc, char **argv)
{
    cli_opts o;
    int rc = parse(argc, argv, OPT_BACKEND | OPT_G2O | OPT_OUT | OPT_RHS, "slam-info", usage_slam_info, &o);
    if (rc) return rc;
    if (o.help) {
        fputs(usage_slam_info, stdout);
        return 0;
    }
    if (!o.g2o) return cli_usage_error(usage_slam_info, "slam-info: %s", "needs a graph: --g2o FILE");
    if (!o.out || !o.out[0])
        return cli_usage_error(usage_slam_info, "slam-info: %s", "needs an output file: -o L.mtx");

    sbm_ctx *host = NULL, *ctx = NULL;
    sbm_g2o_graph *g = NULL;
    sbm_slam_system *sys = NULL;
    sbm_cbc *hL = NULL;
    double *b = NULL;
    rc = EXIT_FAILURE;
    if (sbm_ctx_create(&host, SBM_BACKEND_CPU, 0) != SBM_SUCCESS) {
        cli_lib_error(NULL, NULL);
        goto done;
    }
    if (sbm_g2o_read(host, o.g2o, &g) != SBM_SUCCESS) {
        cli_lib_error(host, NULL);
        goto done;
    }
    if (make_context(o.backend, &ctx) != 0) goto done;
    if (sbm_slam_system_create(ctx, g, &sys) != SBM_SUCCESS ||
        sbm_slam_linearize(ctx, sys, g) != SBM_SUCCESS) {
        cli_lib_error(ctx, o.g2o);
        goto done;
    }
    const sbm_slam_system_info si = sbm_slam_system_get_info(sys);
    const int64_t n = si.free_vertices * si.error_dim;
    b = malloc((size_t)(n + 1) * sizeof(double));
    if (!b) {
        fprintf(stderr, "sbm: out of memory\n");
        goto done;
    }
    if (sbm_slam_system_get_b(ctx, sys, b) != SBM_SUCCESS) {
        cli_lib_error(ctx, NULL);
        goto done;
    }
    if (sbm_cbc_copy(host, si.Lambda, &hL) != SBM_SUCCESS) {
        cli_lib_error(host, NULL);
        goto done;
    }
    if (write_system(host, hL, o.out, o.rhs, b, n) != 0) goto done;
    const sbm_g2o_info gi = sbm_g2o_get_info(g);
    printf("%s: %dD, %lld vertices (%lld fixed), %lld edges%s, chi2 %.6e\n", o.g2o, gi.dim,
           (long long)gi.vertices, (long long)gi.fixed, (long long)gi.edges,
           gi.from_edges ? ", poses from a spanning tree" : "", si.chi2);
    printf("Lambda: %lld x %lld (%lld blocks of %dx%d in the upper triangle), backend %s -> %s%s%s\n",
           (long long)n, (long long)n, (long long)sbm_cbc_get_info(hL).nnzb, si.error_dim,
           si.error_dim, backend_name(ctx), o.out, o.rhs ? ", b -> " : "", o.rhs ? o.rhs : "");
    rc = 0;
done:
    free(b);
    sbm_cbc_destroy(hL);
    sbm_slam_system_destroy(sys);
    sbm_g2o_destroy(g);
    sbm_ctx_destroy(ctx);
    sbm_ctx_destroy(host);
    return rc;
}

int sbm_cli_slam_solve(int argc, char **argv)
{
    cli_opts o;
    int rc = parse(argc, argv, OPT_BACKEND | OPT_G2O | OPT_SOLVER, "slam-solve", usage_slam_solve, &o);
    if (rc) return rc;
    if (o.help) {
        fputs(usage_slam_solve, stdout);
        return 0;
    }
    if (!o.g2o) return cli_usage_error(usage_slam_solve, "slam-solve: %s", "needs a graph: --g2o FILE");
    sbm_ctx *host = NULL, *ctx = NULL;
    sbm_g2o_graph *g = NULL;
    rc = EXIT_FAILURE;
    if (sbm_ctx_create(&host, SBM_BACKEND_CPU, 0) != SBM_SUCCESS) {
        cli_lib_error(NULL, NULL);
        goto done;
    }
    if (sbm_g2o_read(host, o.g2o, &g) != SBM_SUCCESS) {
        cli_lib_error(host, NULL);
        goto done;
    }
    if (make_context(o.backend, &ctx) != 0) goto done;
    const sbm_g2o_info gi = sbm_g2o_get_info(g);
    printf("graph: %s: %dD, %lld vertices (%lld fixed), %lld edges%s; backend %s\n", o.g2o, gi.dim,
           (long long)gi.vertices, (long long)gi.fixed, (long long)gi.edges,
           gi.from_edges ? ", poses from a spanning tree" : "", backend_name(ctx));
    sbm_solver_options so = sbm_solver_default_options();
    so.pcg_max_iterations = 500;
    apply_solver_options(&o, &so);
    print_state ps = {1};
    so.callback = print_iteration;
    so.user = &ps;
    sbm_solver_summary s;
    if (sbm_slam_solve(ctx, g, &so, &s) != SBM_SUCCESS) {
        cli_lib_error(ctx, o.g2o);
        goto done;
    }
    print_summary(&s, "chi2", 1);
    rc = 0;
done:
    sbm_g2o_destroy(g);
    sbm_ctx_destroy(ctx);
    sbm_ctx_destroy(host);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* bal-generate                                                                             */
/* ---------------------------------------------------------------------------------------- */

int sbm_cli_bal_generate(int argc, char **argv)
{
    cli_opts o;
    int rc = parse(argc, argv, OPT_GEN | OPT_OUT, "bal-generate", usage_bal_generate, &o);
    if (rc) return rc;
    if (o.help) {
        fputs(usage_bal_generate, stdout);
        return 0;
    }
    if (o.cameras == 0 || o.points == 0)
        return cli_usage_error(usage_bal_generate, "bal-generate: %s", "needs --cameras N and --points N");
    if (!o.out || !o.out[0])
        return cli_usage_error(usage_bal_generate, "bal-generate: %s", "needs an output file: -o FILE");
    sbm_ctx *host = NULL;
    sbm_bal_problem *p = NULL;
    rc = EXIT_FAILURE;
    sbm_bal_generate_options g = sbm_bal_generate_defaults(o.cameras, o.points, (int)o.obs, (uint64_t)o.seed);
    g.pixel_noise = o.noise;
    g.perturbation = o.perturbation;
    if (sbm_ctx_create(&host, SBM_BACKEND_CPU, 0) != SBM_SUCCESS) {
        cli_lib_error(NULL, NULL);
        goto done;
    }
    if (sbm_bal_generate(host, &g, &p) != SBM_SUCCESS || sbm_bal_write(host, o.out, p) != SBM_SUCCESS) {
        cli_lib_error(host, NULL);
        goto done;
    }
    printf("%s: %ld cameras, %ld points, %lld observations (seed %ld)\n", o.out, o.cameras, o.points,
           (long long)sbm_bal_get_info(p).observations, o.seed);
    rc = 0;
done:
    sbm_bal_destroy(p);
    sbm_ctx_destroy(host);
    return rc;
}
