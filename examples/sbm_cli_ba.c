/* SPDX-License-Identifier: BSD-3-Clause */
/* Bundle adjustment commands of the sbm command-line tool (the SLAM ones are in
 * sbm_cli_slam.c, what they share in cli_ba_common.c). Public API only.
 *
 *   sbm ba-schur   --bal FILE [--backend cpu|cuda|auto] -o S.mtx [--rhs rhs.txt]
 *   sbm ba-solve   (--bal FILE | --generate C,P,K[,SEED]) [--backend ...] [--iterations N]
 *                  [--linear-solver auto|dense|sparse|pcg|pcg-matrix-free] [--pcg-iterations N]
 *                  [--pcg-tolerance T] [--loss none|huber:A|cauchy:A] [-o refined.txt]
 *   sbm bal-generate --cameras N --points N [--obs-per-point K] [--seed S] [--noise PX]
 *                  [--perturbation X] -o FILE
 *
 * Matrices are written as full symmetric scalar Matrix Market files (coordinate real general,
 * both triangles), vectors one value per line ("%.17g"). Every output appears only when the
 * whole command succeeded. */
#include "sbm_cli_ba.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_ba_common.h"

static const char *const usage_ba_schur =
    "usage: sbm ba-schur [--bal] FILE [--backend cpu|cuda|auto] -o S.mtx [--rhs rhs.txt]\n"
    "\n"
    "Reduced camera system of a BAL problem (plain, gzip or bzip2) at the file's parameters, without\n"
    "damping: S = U - W V^-1 W^T with U = Jc^T Jc, V = Jp^T Jp, W = Jc^T Jp.\n"
    "\n"
    "  --bal FILE          the problem (--bal may be left out)\n"
    "  --backend B         where S is formed: cpu (default), cuda, auto (cuda when a GPU is present)\n"
    "  -o, --output FILE   S as a full symmetric scalar Matrix Market file: 9 unknowns per\n"
    "                      camera in BAL order (angle-axis, translation, f, k1, k2), cameras as\n"
    "                      in the file\n"
    "  --rhs FILE          the reduced rhs gc - W V^-1 gp (g = -J^T r), one value per line\n";

static const char *const usage_ba_solve =
    "usage: sbm ba-solve ([--bal] FILE | --generate C,P,K[,SEED]) [--backend cpu|cuda|auto]\n"
    "                    [--iterations N]\n"
    "                    [--linear-solver auto|dense|sparse|pcg|pcg-matrix-free]\n"
    "                    [--pcg-iterations N] [--pcg-tolerance T] [--lambda L] [--min-lambda L]\n"
    "                    [--pcg-forcing fixed|ew[:ETA_MAX]]\n"
    "                    [--loss none|huber:A|cauchy:A] [--gpus N [--partition graph|index]]\n"
    "                    [-o refined.txt]\n"
    "\n"
    "Levenberg-Marquardt bundle adjustment on the reduced camera system; one line per\n"
    "iteration (cost 0.5 |r|^2, or 0.5 sum rho(|r_k|^2) over the observations with --loss,\n"
    "before and after to 12 digits, damping, accepted / rejected /\n"
    "lin-fail, max |gradient|, |step|, PCG iterations (* at the cap), seconds spent\n"
    "linearising, forming S, solving, updating; a failed factorisation, a rejected step, is\n"
    "followed by the failure, naming the camera or point as numbered in the file), then where\n"
    "the time went and why the solve stopped: \"converged (function tolerance)\" (or gradient,\n"
    "parameter tolerance, zero cost) or \"NOT converged: iteration limit\" (or no progress),\n"
    "with a warning when PCG stopped at its iteration cap.\n"
    "\n"
    "  --bal FILE          a BAL problem (plain, gzip or bzip2: told by the first bytes); --bal\n"
    "                      may be left out\n"
    "  --generate C,P,K[,SEED]  a seeded synthetic problem: C cameras, P points, each seen by K\n"
    "                      cameras (SEED default 1); --layout sphere|trajectory as bal-generate\n"
    "  --backend B         cpu (default), cuda, auto (cuda when a GPU is present)\n"
    "  --iterations N      iterations at most (default 200); the run also stops when the cost\n"
    "                      falls by at most 1e-10 of itself, max |gradient| <= 1e-10 or\n"
    "                      |step| <= 1e-10 (|x| + 1e-10)\n"
    "  --linear-solver S   auto (default: dense Cholesky up to 2000 unknowns of S; above,\n"
    "                      sparse, or pcg / pcg-matrix-free where S is nearly dense), dense,\n"
    "                      sparse (supernodal Cholesky of S, planned once), pcg (block-Jacobi\n"
    "                      on the explicit S), pcg-matrix-free (S never formed)\n"
    "  --pcg-iterations N  PCG iterations per step at most (default 200)\n"
    "  --pcg-tolerance T   PCG relative residual (default 1e-8; with ew the tightest)\n"
    "  --pcg-forcing F     each step's PCG tolerance: ew (default: Eisenstat-Walker inexact\n"
    "                      steps, from ETA_MAX, default 0.1, down to T as the gradient\n"
    "                      falls) or fixed (T every step)\n"
    "  --lambda L          Levenberg-Marquardt's first damping, relative to the diagonal\n"
    "                      (default 1e-4)\n"
    "  --min-lambda L      the floor an accepted step lowers the damping to at most (default\n"
    "                      0: none)\n"
    "  --loss L            robust loss of every observation, Ceres' definitions, A the scale\n"
    "                      in pixels (from " CLI_LOSS_SCALE_RANGE "): none (default),\n"
    "                      huber:A (rho(s) = s up to s = A^2, then 2 A sqrt(s) - A^2),\n"
    "                      cauchy:A (rho(s) = A^2 log(1 + s / A^2)); the summary names it\n"
    "  --gpus N            solve over N ranks (sbm_ba_solve_dist): N GPUs through NCCL with\n"
    "                      --backend cuda or auto, N CPU contexts over the host stand-in of the\n"
    "                      communicator with --backend cpu; cameras partitioned over the ranks,\n"
    "                      matrix-free PCG, the point halo exchanged; reports the bytes sent per\n"
    "                      PCG iteration beside MegBA's two full-vector all-reduces\n"
    "  --partition P       graph (default: parts grown over the cameras sharing points) or index\n"
    "                      (camera numbers cut into ranges)\n"
    "  -o, --output FILE   write the refined problem in BAL format\n";

static const char *const usage_bal_generate =
    "usage: sbm bal-generate --cameras N --points N [--obs-per-point K] [--seed S]\n"
    "                        [--noise PIXELS] [--perturbation X] [--layout sphere|trajectory]\n"
    "                        -o FILE\n"
    "\n"
    "Writes a seeded synthetic BAL problem (\".bz2\": compressed): cameras around a cloud of\n"
    "points, each point seen by K cameras (default 4), observations with Gaussian noise (default\n"
    "0.5 px), parameters perturbed from the truth (default scale 1).\n"
    "  --layout L  sphere (default: cameras on a sphere around the points, each point seen by\n"
    "              cameras drawn from all of them) or trajectory (cameras along a closed loop\n"
    "              looking outwards, each point seen by K of the 2K+1 cameras nearest to it, so\n"
    "              S is sparse as in real sequences; camera numbers shuffled)\n";

/* ---------------------------------------------------------------------------------------- */
/* ba-schur                                                                                 */
/* ---------------------------------------------------------------------------------------- */

int sbm_cli_ba_schur(int argc, char **argv)
{
    cli_opts o;
    int rc = cli_ba_parse(argc, argv, OPT_BACKEND | OPT_BAL | OPT_OUT | OPT_RHS, "ba-schur",
                   usage_ba_schur, &o);
    if (rc >= 0) return rc;
    if (!o.bal) return cli_ba_needs(usage_ba_schur, "ba-schur", "a problem: --bal FILE");
    if (!o.out || !o.out[0])
        return cli_ba_needs(usage_ba_schur, "ba-schur", "an output file: -o S.mtx");

    ba_cmd c;
    sbm_ba_system *sys = NULL;
    sbm_cbc *S = NULL, *hS = NULL;
    double *rhs = NULL;
    rc = EXIT_FAILURE;
    if (cli_ba_open(&o, NULL, &c) != 0) goto done;
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
    if (cli_ba_write_system(c.host, hS, o.out, o.rhs, rhs, 9 * pi.cameras) != 0) goto done;
    const sbm_cbc_info si = sbm_cbc_get_info(hS);
    cli_printf("%s: %lld cameras, %lld points, %lld observations, cost %.6e\n", o.bal,
               (long long)pi.cameras, (long long)pi.points, (long long)pi.observations,
               sbm_ba_system_get_info(sys).cost);
    cli_printf(
        "S: %lld x %lld (%lld x %lld blocks of 9x9, %lld in the upper triangle), backend %s -> "
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
    cli_ba_close(&c);
    return rc;
}

/* ba-solve's report: one line per iteration, the failure of a rejected factorisation below
 * its line (user: the context, which holds the message). */
static void ba_print_iteration(void *user, const sbm_iteration_report *r)
{
    if (r->iteration == 1)
        cli_printf("%4s  %19s  %19s  %9s  %-8s  %9s  %9s  %5s  %8s  %8s  %8s  %9s  %8s\n", "iter",
                   "cost", "new cost", "lambda", "result", "|gradient|", "|step|", "pcg", "lin(s)",
                   "Schur(s)", "solve(s)", "update(s)", "total(s)");
    const char *result = r->accepted ? "accepted" : r->linear_failed ? "lin-fail" : "rejected";
    char pcg[16];
    snprintf(pcg, sizeof pcg, "%d%s", r->linear_iterations, r->linear_capped ? "*" : "");
    cli_printf("%4d  %19.12e  %19.12e  %9.2e  %-8s  %9.2e  %9.2e  %5s  %8.4f  %8.4f  %8.4f  %9.4f  "
               "%8.4f\n",
               r->iteration, r->cost_before, r->cost, r->lambda, result, r->gradient_norm,
               r->step_norm, pcg, r->time_linearize, r->time_schur, r->time_solve, r->time_update,
               r->time_total);
    if (r->linear_failed)
        cli_printf("      step rejected: %s\n", sbm_ctx_last_error((sbm_ctx *)user));
    fflush(cli_report());
}

/* Solve the problem with the options of o: a line per iteration, where the time went, why it
 * stopped. @return 0 or EXIT_FAILURE (reported). */
static int ba_solve_run(const cli_opts *o, const ba_cmd *c)
{
    sbm_solver_options so = sbm_solver_default_options();
    cli_ba_solver_options(o, &so);
    so.callback = ba_print_iteration;
    so.user = c->ctx;
    sbm_solver_summary s;
    if (sbm_ba_solve(c->ctx, c->p, &so, &s) != SBM_SUCCESS) return cli_lib_error(c->ctx, o->bal);
    char loss[64];
    cli_ba_loss_text(so.loss, loss, sizeof loss);
    cli_printf(
        "cost %.12e -> %.12e (%.3g times lower) in %d iterations (%d accepted), %s, loss %s; "
        "max |gradient| %.3e\n",
        s.initial_cost, s.final_cost, s.final_cost > 0 ? s.initial_cost / s.final_cost : INFINITY,
        s.iterations, s.accepted, sbm_linear_solver_name(s.linear_solver), loss, s.final_gradient_norm);
    cli_ba_print_times(&s, "Schur");
    if (s.linear_failures > 0)
        cli_printf("%d of %d steps rejected: the factorisation failed\n", s.linear_failures,
                   s.iterations);
    if (s.linear_capped > 0)
        cli_printf(
            "warning: PCG hit its %d-iteration cap in %d of %d solves; the steps were inexact "
            "(raise --pcg-iterations or use --linear-solver sparse)\n",
            so.pcg_max_iterations, s.linear_capped, s.iterations);
    cli_ba_print_stop(&s, "no cameras or points");
    return 0;
}

/* The distributed solve of --gpus: a group of o->gpus ranks (GPUs, or CPU contexts with
 * --backend cpu), the same report as ba_solve_run plus the communication's. */
static int ba_solve_dist_run(const cli_opts *o, const ba_cmd *c)
{
    sbm_group *grp = NULL;
    const int cpu = o->backend == CLI_BACKEND_CPU;
    const sbm_status gs = cpu ? sbm_group_create_cpu(o->gpus, &grp)
                              : sbm_group_create_gpus(o->gpus, NULL, &grp);
    if (gs != SBM_SUCCESS) {
        fprintf(stderr, "sbm: ba-solve: --gpus %d: %s\n", o->gpus, sbm_ctx_last_error(NULL));
        return EXIT_FAILURE;
    }
    sbm_ctx *ctx0 = sbm_group_context(grp, 0);
    sbm_solver_options so = sbm_solver_default_options();
    cli_ba_solver_options(o, &so);
    so.callback = ba_print_iteration;
    so.user = ctx0;
    sbm_dist_options d = sbm_dist_default_options();
    d.partition = (sbm_partition_method)o->partition;
    sbm_solver_summary s;
    sbm_dist_report r;
    if (sbm_ba_solve_dist(grp, c->p, &so, &d, &s, &r) != SBM_SUCCESS) {
        const int rc = cli_lib_error(ctx0, o->bal);
        sbm_group_destroy(grp);
        return rc;
    }
    char loss[64];
    cli_ba_loss_text(so.loss, loss, sizeof loss);
    cli_printf("cost %.12e -> %.12e in %d iterations (%d accepted), %s over %d %s, loss %s; "
               "max |gradient| %.3e\n",
               s.initial_cost, s.final_cost, s.iterations, s.accepted,
               sbm_linear_solver_name(s.linear_solver), r.ranks, cpu ? "CPU ranks" : "GPUs", loss,
               s.final_gradient_norm);
    cli_ba_print_times(&s, "Schur");
    cli_printf("partition %s: largest part %lld cameras, %lld observations; %lld points shared "
               "between ranks\n",
               o->partition == SBM_PARTITION_INDEX ? "index" : "graph", (long long)r.max_cameras,
               (long long)r.max_observations, (long long)r.shared_points);
    cli_printf("communication: %.0f bytes per PCG iteration (MegBA's full-vector all-reduces: "
               "%.0f, %.3g times more) over %lld PCG iterations; %.0f bytes in all, %.4f s in "
               "the communicator\n",
               r.bytes_per_pcg_iteration, r.megba_bytes_per_pcg_iteration,
               r.bytes_per_pcg_iteration > 0 ? r.megba_bytes_per_pcg_iteration /
                                                   r.bytes_per_pcg_iteration
                                             : INFINITY,
               (long long)r.pcg_iterations, r.bytes_total, r.time_comm);
    if (s.linear_capped > 0)
        cli_printf("warning: PCG hit its %d-iteration cap in %d of %d solves; the steps were "
                   "inexact (raise --pcg-iterations)\n",
                   so.pcg_max_iterations, s.linear_capped, s.iterations);
    cli_ba_print_stop(&s, "no cameras or points");
    sbm_group_destroy(grp);
    return 0;
}

/* "C,P,K[,SEED]" */
static int parse_generate(const char *s, sbm_bal_generate_options *g)
{
    long v[4] = {0, 0, 0, 1};
    int n = 0;
    const char *p = s;
    for (;;) {
        char *e = NULL;
        errno = 0;
        /* digits only: strtol would also take blanks and a sign */
        if (n == 4 || *p < '0' || *p > '9') return 0;
        const long x = strtol(p, &e, 10);
        if (e == p || errno != 0 || x < 0) return 0;
        v[n++] = x;
        if (*e == '\0') break;
        if (*e != ',') return 0; /* a fifth value ("3,20,2,1,garbage") too */
        p = e + 1;
    }
    if (n < 3) return 0;
    *g = sbm_bal_generate_defaults(v[0], v[1], (int)(v[2] > INT32_MAX ? INT32_MAX : v[2]), (uint64_t)v[3]);
    return 1;
}

int sbm_cli_ba_solve(int argc, char **argv)
{
    cli_opts o;
    int rc = cli_ba_parse(argc, argv,
                          OPT_BACKEND | OPT_BAL | OPT_GENERATE | OPT_SOLVER | OPT_OUT | OPT_DIST,
                          "ba-solve", usage_ba_solve, &o);
    if (rc >= 0) return rc;
    if (!o.bal == !o.generate)
        return cli_ba_needs(usage_ba_solve, "ba-solve", "one problem: --bal FILE or --generate C,P,K[,SEED]");
    sbm_bal_generate_options g;
    if (o.generate && !parse_generate(o.generate, &g))
        return cli_command_error(usage_ba_solve, "ba-solve",
                                 "invalid --generate '%s' (C,P,K[,SEED])", o.generate);
    if (o.generate) g.layout = (sbm_bal_layout)o.layout;

    ba_cmd c;
    rc = EXIT_FAILURE;
    if (cli_ba_open(&o, o.generate ? &g : NULL, &c) != 0) goto done;
    const sbm_bal_info pi = sbm_bal_get_info(c.p);
    if (o.bal)
        cli_printf("problem: %s", o.bal);
    else
        cli_printf("problem: synthetic (seed %llu, noise %g px)", (unsigned long long)g.seed,
                   g.pixel_noise);
    cli_printf(": %lld cameras, %lld points, %lld observations; backend %s\n",
               (long long)pi.cameras, (long long)pi.points, (long long)pi.observations,
               cli_backend_name(c.ctx));
    cli_ba_warn_unconstrained(c.p, o.bal ? o.bal : "--generate");
    if ((o.gpus > 0 ? ba_solve_dist_run(&o, &c) : ba_solve_run(&o, &c)) != 0) goto done;
    if (o.out) {
        if (sbm_bal_write(c.host, o.out, c.p) != SBM_SUCCESS) {
            cli_lib_error(c.host, NULL);
            goto done;
        }
        cli_printf("refined problem -> %s\n", o.out);
    }
    rc = 0;
done:
    cli_ba_close(&c);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* bal-generate                                                                             */
/* ---------------------------------------------------------------------------------------- */

int sbm_cli_bal_generate(int argc, char **argv)
{
    cli_opts o;
    int rc = cli_ba_parse(argc, argv, OPT_GEN | OPT_OUT, "bal-generate", usage_bal_generate, &o);
    if (rc >= 0) return rc;
    if (o.cameras == 0 || o.points == 0)
        return cli_ba_needs(usage_bal_generate, "bal-generate", "--cameras N and --points N");
    if (!o.out || !o.out[0])
        return cli_ba_needs(usage_bal_generate, "bal-generate", "an output file: -o FILE");
    sbm_bal_generate_options g =
        sbm_bal_generate_defaults(o.cameras, o.points, (int)o.obs, (uint64_t)o.seed);
    g.pixel_noise = o.noise;
    g.perturbation = o.perturbation;
    g.layout = (sbm_bal_layout)o.layout;
    ba_cmd c;
    rc = EXIT_FAILURE;
    if (cli_ba_open(&o, &g, &c) != 0) goto done;
    if (sbm_bal_write(c.host, o.out, c.p) != SBM_SUCCESS) {
        cli_lib_error(c.host, NULL);
        goto done;
    }
    cli_printf("%s: %lld cameras, %lld points, %lld observations (seed %lld)\n", o.out,
               (long long)o.cameras, (long long)o.points,
               (long long)sbm_bal_get_info(c.p).observations, (long long)o.seed);
    rc = 0;
done:
    cli_ba_close(&c);
    return rc;
}
