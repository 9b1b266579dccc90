/* SPDX-License-Identifier: BSD-3-Clause */
/* SLAM commands of the sbm command-line tool. Public API only.
 *
 *   sbm slam-info  --g2o FILE [--information refuse|repair] [--backend ...] -o L.mtx [--rhs b.txt]
 *   sbm slam-solve --g2o FILE [--information refuse|repair] [--backend ...] [--method lm|gn]
 *                  [--iterations N] [--linear-solver auto|sparse|dense|pcg] [--pcg-iterations N]
 *                  [--pcg-tolerance T] [--loss none|huber:A|cauchy:A] [-o optimised.g2o]
 *                  [--covariance cov.mtx]
 *
 * Lambda is written as a full symmetric scalar Matrix Market file, b one value per line
 * ("%.17g"). Every output appears only when the whole command succeeded. */
#define _POSIX_C_SOURCE 200809L /* lstat */

#include "sbm_cli_ba.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_ba_common.h"

static const char *const usage_slam_info =
    "usage: sbm slam-info [--g2o] FILE [--information refuse|repair] [--backend cpu|cuda|auto]\n"
    "                     -o L.mtx [--rhs b.txt]\n"
    "\n"
    "Information matrix Lambda = J^T Omega J of a g2o pose graph at its initial estimate (the\n"
    "spanning-tree start for files without VERTEX lines), fixed vertices removed.\n"
    "\n"
    "  --g2o FILE          the pose graph: SE2 or SE3:QUAT vertices and edges, FIX lines (plain,\n"
    "                      gzip or bzip2: told by the first bytes); --g2o may be left out\n"
    "  --information M     an indefinite edge information matrix: refuse (default: the file is\n"
    "                      an error naming its first such edge and their count) or repair (each\n"
    "                      projected to the nearest positive semidefinite matrix, counted)\n"
    "  --backend B         cpu (default), cuda, auto\n"
    "  -o, --output FILE   Lambda as a full symmetric scalar Matrix Market file: 3 (2D) or 6\n"
    "                      (3D) unknowns per free vertex, vertices in the file's order\n"
    "  --rhs FILE          b = J^T Omega e, one value per line (the step solves Lambda dx = -b)\n";

static const char *const usage_slam_solve =
    "usage: sbm slam-solve [--g2o] FILE [--information refuse|repair] [--backend cpu|cuda|auto]\n"
    "                      [--method lm|gn] [--iterations N] [--linear-solver auto|sparse|dense|pcg]\n"
    "                      [--pcg-iterations N] [--pcg-tolerance T] [--lambda L] [--min-lambda L]\n"
    "                      [--pcg-forcing fixed|ew[:ETA_MAX]]\n"
    "                      [--loss none|huber:A|cauchy:A] [-o optimised.g2o]\n"
    "                      [--covariance cov.mtx]\n"
    "\n"
    "Optimises a g2o pose graph from its poses (the spanning-tree start for files without VERTEX\n"
    "lines). The cost is 0.5 chi2 = 0.5 sum e^T Omega e (half g2o's chi2), or with --loss\n"
    "0.5 sum rho(e^T Omega e) over the edges. One line per\n"
    "iteration: the cost before and after (12 digits), lambda (LM) or the step length (GN),\n"
    "accepted / rejected / linear failure (Lambda + damping not positive definite: a rejected\n"
    "step, the vertex named below it), max |gradient|, |step|, PCG iterations, seconds spent\n"
    "linearising, forming Lambda, solving, updating. Then why it stopped: 'converged (function\n"
    "tolerance)' etc. or 'NOT converged: iteration limit' / 'NOT converged: no progress'.\n"
    "\n"
    "  --information M     an indefinite edge information matrix: refuse (default: the file is\n"
    "                      an error naming its first such edge and their count) or repair (each\n"
    "                      projected to the nearest positive semidefinite matrix, counted)\n"
    "  --method M          lm (default): Levenberg-Marquardt, gain-ratio damping of Lambda's\n"
    "                      diagonal; gn: Gauss-Newton with a backtracking line search\n"
    "  --iterations N      iterations at most (default 200); the run also stops when the cost\n"
    "                      falls by at most 1e-10 of itself, max |gradient| <= 1e-10 or\n"
    "                      |step| <= 1e-10 (|x| + 1e-10)\n"
    "  --linear-solver S   auto (default: sparse), sparse (block Cholesky, planned once,\n"
    "                      factored every iteration), dense (LAPACK on the host), pcg\n"
    "                      (block-Jacobi; inexact when it hits its iteration cap)\n"
    "  --pcg-iterations N  PCG iterations per step at most (default 500)\n"
    "  --pcg-tolerance T   PCG relative residual (default 1e-8; with ew the tightest)\n"
    "  --pcg-forcing F     each step's PCG tolerance: ew (default: Eisenstat-Walker inexact\n"
    "                      steps, from ETA_MAX, default 0.1, down to T as the gradient\n"
    "                      falls) or fixed (T every step)\n"
    "  --lambda L          Levenberg-Marquardt's first damping, relative to the diagonal\n"
    "                      (default 1e-12)\n"
    "  --min-lambda L      the floor an accepted step lowers the damping to at most (default\n"
    "                      1e-12; 0: none). These two are slam-solve's own: Gauss-Newton-like\n"
    "                      steps, damped only when they fail; the library's default is 1e-4, no floor\n"
    "  --loss L            robust loss of every edge, on its chi2 s = e^T Omega e, Ceres'\n"
    "                      definitions, A the scale (from " CLI_LOSS_SCALE_RANGE "):\n"
    "                      none (default), huber:A (rho(s) = s up to s = A^2, then\n"
    "                      2 A sqrt(s) - A^2), cauchy:A (rho(s) = A^2 log(1 + s / A^2));\n"
    "                      the summary names it\n"
    "  -o, --output FILE   write the optimised graph in g2o format (the types read, %.17g, a\n"
    "                      FIX line for every vertex held fixed; \".bz2\": compressed)\n"
    "  --covariance FILE   the pose covariances at the optimum: the d x d diagonal blocks of\n"
    "                      Lambda^-1 (d = 3 or 6; with --loss, of the loss-corrected Lambda), as\n"
    "                      a coordinate real symmetric Matrix Market file in the scalar index\n"
    "                      space of slam-info's Lambda (free vertices in the file's order; the\n"
    "                      fixed ones, the gauge, have none). A pose the graph does not\n"
    "                      determine is an error naming its vertex\n";

/* ---------------------------------------------------------------------------------------- */
/* slam-info and slam-solve                                                                 */
/* ---------------------------------------------------------------------------------------- */

int sbm_cli_slam_info(int argc, char **argv)
{
    cli_opts o;
    int rc = cli_ba_parse(argc, argv, OPT_BACKEND | OPT_G2O | OPT_OUT | OPT_RHS, "slam-info",
                   usage_slam_info, &o);
    if (rc >= 0) return rc;
    if (!o.g2o) return cli_ba_needs(usage_slam_info, "slam-info", "a graph: --g2o FILE");
    if (!o.out || !o.out[0])
        return cli_ba_needs(usage_slam_info, "slam-info", "an output file: -o L.mtx");

    ba_cmd c;
    sbm_slam_system *sys = NULL;
    sbm_cbc *hL = NULL;
    double *b = NULL;
    rc = EXIT_FAILURE;
    if (cli_ba_open(&o, NULL, &c) != 0) goto done;
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
    if (cli_ba_write_system(c.host, hL, o.out, o.rhs, b, n) != 0) goto done;
    const sbm_g2o_info gi = sbm_g2o_get_info(c.g);
    cli_printf("%s: %dD, %lld vertices (%lld fixed), %lld edges%s, chi2 %.6e\n", o.g2o, gi.dim,
               (long long)gi.vertices, (long long)gi.fixed, (long long)gi.edges,
               gi.from_edges ? ", poses from a spanning tree" : "", si.chi2);
    cli_printf("Lambda: %lld x %lld (%lld blocks of %dx%d in the upper triangle), backend %s -> "
               "%s%s%s\n",
               (long long)n, (long long)n, (long long)sbm_cbc_get_info(hL).nnzb, si.error_dim,
               si.error_dim, cli_backend_name(c.ctx), o.out, o.rhs ? ", b -> " : "",
               o.rhs ? o.rhs : "");
    rc = 0;
done:
    free(b);
    sbm_cbc_destroy(hL);
    sbm_slam_system_destroy(sys);
    cli_ba_close(&c);
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
        cli_printf("%4s  %19s  %19s  %9s  %-8s  %9s  %9s  %5s  %8s  %9s  %8s  %9s  %8s\n", "iter",
                   "cost", "new cost", sp->lm ? "lambda" : "step", "result", "|gradient|", "|step|",
                   "pcg", "lin(s)", "Lambda(s)", "solve(s)", "update(s)", "total(s)");
    const char *result = r->accepted ? "accepted" : r->linear_failed ? "lin-fail" : "rejected";
    char pcg[16] = "-";
    if (sp->iterative)
        snprintf(pcg, sizeof pcg, "%d%s", r->linear_iterations, r->linear_capped ? "*" : "");
    cli_printf("%4d  %19.12e  %19.12e  %9.2e  %-8s  %9.2e  %9.2e  %5s  %8.4f  %9.4f  %8.4f  %9.4f  "
               "%8.4f\n",
               r->iteration, r->cost_before, r->cost, r->lambda, result, r->gradient_norm,
               r->step_norm, pcg, r->time_linearize, r->time_schur, r->time_solve, r->time_update,
               r->time_total);
    if (r->linear_failed) cli_printf("      step rejected: %s\n", sbm_ctx_last_error(sp->ctx));
    fflush(cli_report());
}

/* --covariance: the pose covariances at the graph's poses, written to o->cov. @return 0 or
 * EXIT_FAILURE (reported). */
static int slam_covariance(const cli_opts *o, const ba_cmd *c, const sbm_loss *loss)
{
    const sbm_g2o_info gi = sbm_g2o_get_info(c->g);
    const int64_t nf = gi.vertices - gi.fixed;
    double *cov = malloc((size_t)(nf * gi.error_dim * gi.error_dim + 1) * sizeof(double));
    if (!cov) {
        fprintf(stderr, "sbm: out of memory\n");
        return EXIT_FAILURE;
    }
    const double t0 = cli_seconds();
    int rc = EXIT_FAILURE;
    if (sbm_slam_covariance(c->ctx, c->g, loss, cov) != SBM_SUCCESS)
        cli_lib_error(c->ctx, o->g2o);
    else if (cli_ba_write_block_diagonal(c->host, o->cov, nf, gi.error_dim, cov) == 0)
        rc = 0;
    if (rc == 0)
        cli_printf("covariance: %lld free vertices, %dx%d blocks of Lambda^-1 (%.3f s) -> %s\n",
                   (long long)nf, gi.error_dim, gi.error_dim, cli_seconds() - t0, o->cov);
    free(cov);
    return rc;
}

/* Solve the graph with the options of o; -o writes the result. @return 0 or EXIT_FAILURE. */
static int slam_solve_run(const cli_opts *o, const ba_cmd *c)
{
    sbm_solver_options so = sbm_solver_default_options();
    so.pcg_max_iterations = 500;
    /* pose graphs: Gauss-Newton-like steps, damped only when they fail (docs/CONVERGENCE.md) */
    so.initial_lambda = so.min_lambda = 1e-12;
    cli_ba_solver_options(o, &so);
    char loss[64];
    cli_ba_loss_text(so.loss, loss, sizeof loss);
    const int lm = so.method == SBM_METHOD_LEVENBERG_MARQUARDT;
    slam_print sp = {c->ctx, lm, so.linear_solver == SBM_LINEAR_PCG};
    so.callback = slam_print_iteration;
    so.user = &sp;
    if (so.loss.type == SBM_LOSS_NONE)
        cli_printf("%s, cost 0.5 chi2\n", lm ? "Levenberg-Marquardt" : "Gauss-Newton");
    else
        cli_printf("%s, cost 0.5 sum rho(e^T Omega e), loss %s\n",
                   lm ? "Levenberg-Marquardt" : "Gauss-Newton", loss);
    sbm_solver_summary s;
    if (sbm_slam_solve(c->ctx, c->g, &so, &s) != SBM_SUCCESS) return cli_lib_error(c->ctx, o->g2o);
    cli_printf("cost %.12e -> %.12e in %d iterations (%d accepted), %s, loss %s; max |gradient| "
               "%.3e\n",
               s.initial_cost, s.final_cost, s.iterations, s.accepted,
               sbm_linear_solver_name(s.linear_solver), loss, s.final_gradient_norm);
    cli_ba_print_times(&s, "Lambda");
    if (s.linear_failures > 0)
        cli_printf("%d of %d steps rejected: Lambda + damping was not positive definite\n",
                   s.linear_failures, s.iterations);
    if (s.linear_capped > 0)
        cli_printf(
            "warning: PCG hit its %d-iteration cap in %d of %d solves; the steps were inexact\n",
            so.pcg_max_iterations, s.linear_capped, s.iterations);
    cli_ba_print_stop(&s, "every vertex is fixed");
    if (o->cov && slam_covariance(o, c, &so.loss) != 0) return EXIT_FAILURE;
    if (o->out) {
        if (sbm_g2o_write(c->host, o->out, c->g) != SBM_SUCCESS) {
            cli_lib_error(c->host, NULL);
            /* both outputs or neither: the covariance file just written goes */
            struct stat sb;
            if (o->cov && lstat(o->cov, &sb) == 0 && S_ISREG(sb.st_mode)) unlink(o->cov);
            return EXIT_FAILURE;
        }
        cli_printf("wrote %s\n", o->out);
    }
    return 0;
}

int sbm_cli_slam_solve(int argc, char **argv)
{
    cli_opts o;
    int rc = cli_ba_parse(argc, argv,
                          OPT_BACKEND | OPT_G2O | OPT_SOLVER | OPT_METHOD | OPT_OUT | OPT_COV,
                          "slam-solve", usage_slam_solve, &o);
    if (rc >= 0) return rc;
    if (!o.g2o)
        return cli_ba_needs(usage_slam_solve, "slam-solve", "a graph: --g2o FILE");
    if (o.out && !o.out[0])
        return cli_ba_needs(usage_slam_solve, "slam-solve", "an output file name: -o FILE");
    if (o.cov && !o.cov[0])
        return cli_ba_needs(usage_slam_solve, "slam-solve",
                            "an output file name: --covariance FILE");
    ba_cmd c;
    rc = EXIT_FAILURE;
    if (cli_ba_open(&o, NULL, &c) != 0) goto done;
    const sbm_g2o_info gi = sbm_g2o_get_info(c.g);
    cli_printf("graph: %s: %dD, %lld vertices (%lld fixed), %lld edges%s; backend %s\n", o.g2o,
               gi.dim, (long long)gi.vertices, (long long)gi.fixed, (long long)gi.edges,
               gi.from_edges ? ", poses from a spanning tree" : "", cli_backend_name(c.ctx));
    if (slam_solve_run(&o, &c) != 0) goto done;
    rc = 0;
done:
    cli_ba_close(&c);
    return rc;
}
