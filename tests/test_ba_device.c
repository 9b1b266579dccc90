/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm_ba_solve on the device, with every linear solver: the copies between host and device
 * inside the iterations (scalars only, read from the context's counters by the iteration
 * callback), CUDA against the CPU backend cost by cost with and without a robust loss, bitwise
 * repeatable runs, the problem's parameters written once at the end (the best estimate, also
 * after a failure) or before every callback when asked. The operations it relies on (the
 * Schur-Jacobi blocks, the dense Cholesky on the device): test_ba_solve_ops.c. */
#define _POSIX_C_SOURCE 200809L

#include "ba_internal.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* sbm_ba_solve on the device                                                               */
/* ---------------------------------------------------------------------------------------- */

#define MAX_ITS 16

/* SBM_TEST_QUICK=1 (the sanitizer runs): every path still runs, on a smaller generated problem
 * only, with fewer iterations, each solver with one of the losses. */
static int quick(void)
{
    const char *q = getenv("SBM_TEST_QUICK");
    return q && *q && strcmp(q, "0") != 0;
}

/* What the iteration callback saw: the reports, and the context's copy counters between two
 * callbacks (one whole iteration each, from the second on: the first also holds the setup). */
typedef struct probe {
    sbm_ctx *ctx;
    const sbm_bal_problem *problem;
    const double *x0;          /* the parameters before the solve (NULL: not checked) */
    int64_t nx;                /* their count */
    sbm__stats last;
    int n;
    sbm_iteration_report rep[MAX_ITS];
    sbm__stats delta[MAX_ITS];
    int moved;                 /* the problem's parameters changed during the solve */
} probe;

static void probe_record(void *user, const sbm_iteration_report *r)
{
    probe *p = user;
    const sbm__stats now = sbm__stats_get(p->ctx);
    if (p->n >= MAX_ITS) fail_msg("more than %d iterations", MAX_ITS);
    p->rep[p->n] = *r;
    p->delta[p->n].h2d_copies = now.h2d_copies - p->last.h2d_copies;
    p->delta[p->n].h2d_bytes = now.h2d_bytes - p->last.h2d_bytes;
    p->delta[p->n].d2h_copies = now.d2h_copies - p->last.d2h_copies;
    p->delta[p->n].d2h_bytes = now.d2h_bytes - p->last.d2h_bytes;
    p->n++;
    p->last = now;
    if (p->x0) {
        const sbm_bal_info pi = sbm_bal_get_info(p->problem);
        if (memcmp(pi.camera_params, p->x0, 9 * (size_t)pi.cameras * sizeof(double)) != 0)
            p->moved = 1;
    }
}

static sbm_bal_problem *small_problem(sbm_ctx *ctx, int which)
{
    sbm_bal_problem *p = NULL;
    if (which == 0) {
        /* QUICK: a smaller problem (the sanitizers' racecheck walks every access) */
        sbm_bal_generate_options g = quick() ? sbm_bal_generate_defaults(6, 30, 3, 11)
                                             : sbm_bal_generate_defaults(8, 100, 4, 11);
        g.perturbation = 2.0;
        SBM_ASSERT_OK(ctx, sbm_bal_generate(ctx, &g, &p));
    } else {
        SBM_ASSERT_OK(ctx, sbm_bal_read(ctx, sbm_test_data_path("bal/problem-21-11315-pre.txt.bz2"),
                                        &p));
    }
    return p;
}

/* The problems of the solve tests (the generated one, with file the BAL file too), read once,
 * with their starting parameters. */
typedef struct problems {
    sbm_bal_problem *p[2];
    double *x0[2];
} problems;

static void problems_load(sbm_ctx *ctx, problems *ps, int file)
{
    memset(ps, 0, sizeof *ps);
    for (int w = 0; w < 1 + file; w++) {
        ps->p[w] = small_problem(ctx, w);
        const sbm_bal_info pi = sbm_bal_get_info(ps->p[w]);
        const size_t nc = 9 * (size_t)pi.cameras, np = 3 * (size_t)pi.points;
        ps->x0[w] = malloc((nc + np) * sizeof(double));
        assert_non_null(ps->x0[w]);
        memcpy(ps->x0[w], pi.camera_params, nc * sizeof(double));
        memcpy(ps->x0[w] + nc, pi.point_params, np * sizeof(double));
    }
}

/* Problem w at its start again. */
static sbm_bal_problem *problems_reset(problems *ps, int w)
{
    const sbm_bal_info pi = sbm_bal_get_info(ps->p[w]);
    const size_t nc = 9 * (size_t)pi.cameras, np = 3 * (size_t)pi.points;
    memcpy(pi.camera_params, ps->x0[w], nc * sizeof(double));
    memcpy(pi.point_params, ps->x0[w] + nc, np * sizeof(double));
    return ps->p[w];
}

static void problems_free(problems *ps)
{
    for (int w = 0; w < 2; w++) {
        sbm_bal_destroy(ps->p[w]);
        free(ps->x0[w]);
    }
}

static const sbm_linear_solver all_solvers[] = {SBM_LINEAR_DENSE_CHOLESKY,
                                                SBM_LINEAR_SPARSE_CHOLESKY, SBM_LINEAR_PCG,
                                                SBM_LINEAR_PCG_MATRIX_FREE};

static sbm_solver_options probe_options(sbm_linear_solver ls, int iterations, probe *pr)
{
    sbm_solver_options o = sbm_solver_default_options();
    o.linear_solver = ls;
    o.max_iterations = iterations;
    o.function_tolerance = o.gradient_tolerance = o.parameter_tolerance = 0.0;
    o.pcg_max_iterations = 500;
    o.pcg_tolerance = 1e-12; /* every step solved tightly: the backends agree to 1e-10 */
    o.pcg_forcing = SBM_PCG_FORCING_FIXED;
    o.callback = probe_record;
    o.user = pr;
    return o;
}

/* One solve with the probe: the problem's parameters untouched until the end, then the best
 * estimate (its cost the summary's). */
static void probed_solve(sbm_ctx *ctx, sbm_bal_problem *p, const sbm_solver_options *o,
                         probe *pr, sbm_solver_summary *s)
{
    const sbm_bal_info pi = sbm_bal_get_info(p);
    double *x0 = malloc(9 * (size_t)pi.cameras * sizeof(double) + 1);
    assert_non_null(x0);
    memcpy(x0, pi.camera_params, 9 * (size_t)pi.cameras * sizeof(double));
    memset(pr, 0, sizeof *pr);
    pr->ctx = ctx, pr->problem = p, pr->x0 = x0;
    pr->last = sbm__stats_get(ctx);
    SBM_ASSERT_OK(ctx, sbm_ba_solve(ctx, p, o, s));
    assert_int_equal(pr->n, s->iterations);
    assert_false(pr->moved);
    double cost = 0.0;
    SBM_ASSERT_OK(ctx, sbm_bal_evaluate(ctx, p, NULL, &cost));
    if (o->loss.type == SBM_LOSS_NONE && !(fabs(cost - s->final_cost) <= 1e-9 * cost))
        fail_msg("the returned estimate costs %.17g, the summary says %.17g", cost,
                 s->final_cost);
    assert_true(s->accepted == 0 ||
                memcmp(pi.camera_params, x0, 9 * (size_t)pi.cameras * sizeof(double)) != 0);
    free(x0);
}

/* Inside the iterations only scalars cross: on CUDA no copy to the device, and the copies to
 * the host bounded by a constant plus three per PCG iteration, 8 bytes each but the
 * linearisation's 32-byte result; on the CPU backend none at all. Every linear solver, a
 * generated problem and (on a device, where the copies exist) a BAL file. */
static void test_solve_transfers(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const int files = e->backend != SBM_BACKEND_CPU && !quick();
    const int its = quick() ? 2 : 5;
    problems ps;
    problems_load(e->ctx, &ps, files);
    for (int which = 0; which < 1 + files; which++)
        for (int k = 0; k < 4; k++) {
            sbm_bal_problem *p = problems_reset(&ps, which);
            probe pr;
            sbm_solver_options o = probe_options(all_solvers[k], its, &pr);
            sbm_solver_summary s;
            probed_solve(e->ctx, p, &o, &pr, &s);
            assert_int_equal(s.linear_solver, all_solvers[k]);
            assert_true(pr.n == its && s.accepted >= its / 2);
            for (int it = 1; it < pr.n; it++) {
                const sbm__stats *d = &pr.delta[it];
                const uint64_t pcg = (uint64_t)pr.rep[it].linear_iterations;
                print_message("  %s, %d: iteration %d: %llu copies to the host (%llu bytes), "
                              "%d PCG iterations\n",
                              which ? "trafalgar" : "generated", (int)all_solvers[k], it + 1,
                              (unsigned long long)d->d2h_copies,
                              (unsigned long long)d->d2h_bytes, (int)pcg);
                assert_int_equal(d->h2d_copies, 0);
                if (e->backend == SBM_BACKEND_CPU) {
                    assert_int_equal(d->d2h_copies, 0);
                    continue;
                }
                /* V^-1's and the factorisations' failure words, two norms, the trial cost, the
                 * predicted decrease, the linearisation; PCG: |b|, r.z, 3 per iteration */
                const uint64_t least = pr.rep[it].linear_failed ? 1 : 5;
                if (d->d2h_copies < least || d->d2h_copies > 12 + 3 * pcg)
                    fail_msg("iteration %d: %llu copies to the host", it + 1,
                             (unsigned long long)d->d2h_copies);
                if (d->d2h_bytes > 8 * d->d2h_copies + 24)
                    fail_msg("iteration %d: %llu bytes in %llu copies to the host", it + 1,
                             (unsigned long long)d->d2h_bytes,
                             (unsigned long long)d->d2h_copies);
            }
        }
    problems_free(&ps);
}

/* CUDA against the CPU backend, cost by cost to 1e-10 relative, every linear solver, without
 * and with a robust loss, on both problems; two runs on the context give the same bits (on the
 * CPU backend that check alone, on the generated problem: the CUDA run's reference). */
static void test_solve_against_cpu(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const sbm_loss losses[] = {{SBM_LOSS_NONE, 1.0}, {SBM_LOSS_HUBER, 2.0}, {SBM_LOSS_CAUCHY, 1.0}};
    const int cuda = e->backend != SBM_BACKEND_CPU, files = cuda && !quick();
    problems ps[2];
    problems_load(e->ctx, &ps[0], files);
    if (cuda) problems_load(e->host, &ps[1], files);
    for (int which = 0; which < 1 + files; which++)
        for (int l = 0; l < 3; l++)
            for (int k = 0; k < 4; k++) {
                /* QUICK: each solver with one loss (every solver, every loss, once) */
                if (quick() && l != k % 3) continue;
                /* runs: the context, again (QUICK: for the first solver only), the CPU backend */
                const int again = !quick() || k == 0;
                sbm_ctx *cs[3] = {e->ctx, e->ctx, e->host};
                probe pr[3];
                sbm_solver_summary s[3];
                double *pts[2] = {NULL, NULL};
                for (int r = 0; r < 2 + cuda; r++) {
                    if (r == 1 && !again) continue;
                    sbm_bal_problem *p = problems_reset(&ps[r == 2], which);
                    sbm_solver_options o = probe_options(all_solvers[k], quick() ? 2 : 4, &pr[r]);
                    o.loss = losses[l];
                    probed_solve(cs[r], p, &o, &pr[r], &s[r]);
                    const sbm_bal_info pi = sbm_bal_get_info(p);
                    if (r < 2) {
                        pts[r] = malloc(3 * (size_t)pi.points * sizeof(double));
                        memcpy(pts[r], pi.point_params, 3 * (size_t)pi.points * sizeof(double));
                    }
                }
                assert_true(s[0].final_cost < s[0].initial_cost);
                if (again) assert_int_equal(pr[0].n, pr[1].n);
                for (int it = 0; it < pr[0].n; it++) {
                    /* bitwise repeatable on the context */
                    if (again) {
                        assert_memory_equal(&pr[0].rep[it].cost, &pr[1].rep[it].cost,
                                            sizeof(double));
                        assert_memory_equal(&pr[0].rep[it].step_norm, &pr[1].rep[it].step_norm,
                                            sizeof(double));
                    }
                    if (!cuda) continue;
                    const sbm_iteration_report *a = &pr[0].rep[it], *b = &pr[2].rep[it];
                    assert_int_equal(a->accepted, b->accepted);
                    if (!(fabs(a->cost - b->cost) <= 1e-10 * fabs(b->cost)))
                        fail_msg("%s, loss %s, solver %d, iteration %d: cost %.17g on %s, "
                                 "%.17g on the CPU backend",
                                 which ? "trafalgar" : "generated", sbm_loss_name(losses[l].type),
                                 (int)all_solvers[k], it + 1, a->cost, e->ctx->ops->name,
                                 b->cost);
                }
                if (cuda) assert_int_equal(pr[0].n, pr[2].n);
                const int64_t np = sbm_bal_get_info(ps[0].p[which]).points;
                if (again) assert_memory_equal(pts[0], pts[1], 3 * (size_t)np * sizeof(double));
                free(pts[0]), free(pts[1]);
            }
    problems_free(&ps[0]);
    if (cuda) problems_free(&ps[1]);
}

/* A failing allocation inside the solve: the status and message of the failure, and the
 * problem holding the best estimate so far: the start when nothing was accepted yet, a lower
 * cost when the last allocation (the second iteration's PCG vectors) fails. */
typedef struct fail_after {
    long calls, fail_at, live;
} fail_after;

static void *fail_alloc(void *user, size_t bytes)
{
    fail_after *f = user;
    if (++f->calls == f->fail_at) return NULL;
    void *ptr = malloc(bytes);
    if (ptr) f->live++;
    return ptr;
}

static void fail_free(void *user, void *ptr)
{
    fail_after *f = user;
    if (ptr) f->live--;
    free(ptr);
}

static void test_solve_failure_keeps_best(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    if (e->backend != SBM_BACKEND_CPU) skip(); /* the CPU backend's allocator sees every one */
    fail_after f = {0, 0, 0};
    const sbm_allocator a = {fail_alloc, fail_free, &f};
    sbm_solver_options o = sbm_solver_default_options();
    o.max_iterations = 2;
    o.linear_solver = SBM_LINEAR_PCG;
    double c0 = 0.0, c = 0.0;
    long n = -1;
    for (long k = 0; k <= n || n < 0; k++) {
        sbm_bal_problem *p = small_problem(e->ctx, 0);
        SBM_ASSERT_OK(e->ctx, sbm_bal_evaluate(e->ctx, p, NULL, &c0));
        f = (fail_after){0, k, 0};
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, &a));
        sbm_solver_summary s;
        const sbm_status st = sbm_ba_solve(e->ctx, p, &o, &s);
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, NULL));
        SBM_ASSERT_OK(e->ctx, sbm_bal_evaluate(e->ctx, p, NULL, &c));
        if (k == 0) {
            SBM_ASSERT_OK(e->ctx, st);
            n = f.calls;
        } else {
            assert_int_equal(st, SBM_ERR_OUT_OF_MEMORY);
            assert_non_null(strstr(sbm_ctx_last_error(e->ctx), "cannot allocate"));
            assert_int_equal(sbm_ctx_last_status(e->ctx), SBM_ERR_OUT_OF_MEMORY);
            assert_true(c <= c0);
            if (k == n && !(c < c0))
                fail_msg("the last allocation failed after an accepted step, but the problem "
                         "costs %.17g, its start %.17g", c, c0);
        }
        assert_int_equal(f.live, 0);
        sbm_bal_destroy(p);
    }
}

/* options->update_state_every_iteration: the estimate of every iteration in the problem when
 * the callback runs; a value other than 0 or 1 refused. */
static void test_update_state(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_problem *p = small_problem(e->ctx, 0);
    probe pr;
    sbm_solver_options o = probe_options(SBM_LINEAR_DENSE_CHOLESKY, 3, &pr);
    o.update_state_every_iteration = 2;
    SBM_ASSERT_FAILS(e->ctx, sbm_ba_solve(e->ctx, p, &o, NULL), SBM_ERR_INVALID_ARGUMENT,
                     "sbm_ba_solve: argument options: update_state_every_iteration = 2 must be 0 "
                     "or 1");
    o.update_state_every_iteration = 1;
    const sbm_bal_info pi = sbm_bal_get_info(p);
    memset(&pr, 0, sizeof pr);
    pr.ctx = e->ctx, pr.problem = p;
    double *x0 = malloc(9 * (size_t)pi.cameras * sizeof(double));
    memcpy(x0, pi.camera_params, 9 * (size_t)pi.cameras * sizeof(double));
    pr.x0 = x0;
    sbm_solver_summary s;
    SBM_ASSERT_OK(e->ctx, sbm_ba_solve(e->ctx, p, &o, &s));
    assert_true(s.accepted >= 1 && pr.moved);
    free(x0);
    sbm_bal_destroy(p);
}

/* A problem built in memory with a constant camera, a constant point and a camera prior,
 * solved with each linear solver: the backend against the CPU backend cost by cost (1e-9
 * relative), the constant blocks bitwise unchanged (sbm_bal_problem_create and the kernels'
 * constant blocks and priors). */
static void test_inmem_held(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_generate_options go = sbm_bal_generate_defaults(8, 80, 4, 5);
    sbm_bal_problem *gen = NULL;
    SBM_ASSERT_OK(e->host, sbm_bal_generate(e->host, &go, &gen));
    const sbm_bal_info gi = sbm_bal_get_info(gen);
    const sbm_bal_problem_desc d = {gi.cameras, gi.points, gi.observations, gi.obs_camera,
                                    gi.obs_point, gi.obs_xy, gi.camera_params, gi.point_params};
    const sbm_linear_solver ls[4] = {SBM_LINEAR_DENSE_CHOLESKY, SBM_LINEAR_SPARSE_CHOLESKY,
                                     SBM_LINEAR_PCG, SBM_LINEAR_PCG_MATRIX_FREE};
    double info[81] = {0};
    for (int a = 0; a < 6; a++) info[10 * a] = 1e3;
    for (int l = 0; l < 4; l++) {
        probe pr[2];
        for (int run = 0; run < 2; run++) {
            sbm_ctx *c = run == 0 ? e->ctx : e->host;
            sbm_bal_problem *p = NULL;
            SBM_ASSERT_OK(c, sbm_bal_problem_create(c, &d, &p));
            SBM_ASSERT_OK(c, sbm_bal_set_camera_constant(c, p, 2, 1));
            SBM_ASSERT_OK(c, sbm_bal_set_point_constant(c, p, 11, 1));
            SBM_ASSERT_OK(c, sbm_bal_set_camera_prior(c, p, 5, gi.camera_params + 45, info));
            sbm_solver_options o = probe_options(ls[l], 6, &pr[run]);
            memset(&pr[run], 0, sizeof pr[run]);
            pr[run].ctx = c, pr[run].problem = p;
            sbm_solver_summary s;
            SBM_ASSERT_OK(c, sbm_ba_solve(c, p, &o, &s));
            const sbm_bal_info pi = sbm_bal_get_info(p);
            assert_memory_equal(pi.camera_params + 18, gi.camera_params + 18, 9 * sizeof(double));
            assert_memory_equal(pi.point_params + 33, gi.point_params + 33, 3 * sizeof(double));
            assert_true(s.final_cost < s.initial_cost);
            sbm_bal_destroy(p);
        }
        assert_int_equal(pr[0].n, pr[1].n);
        for (int k = 0; k < pr[0].n; k++)
            assert_true(fabs(pr[0].rep[k].cost - pr[1].rep[k].cost) <= 1e-9 * pr[1].rep[k].cost);
    }
    sbm_bal_destroy(gen);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_solve_transfers),
        SBM_TEST_BOTH(test_solve_against_cpu),
        SBM_TEST_BOTH(test_solve_failure_keeps_best),
        SBM_TEST_BOTH(test_update_state),
        SBM_TEST_BOTH(test_inmem_held),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
