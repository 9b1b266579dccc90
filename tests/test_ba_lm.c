/* SPDX-License-Identifier: BSD-3-Clause */
/* Levenberg-Marquardt on BAL problems (sbm_ba_solve): the sparse Cholesky path of the reduced
 * camera system, its failed factorisations, every stop reason and the report fields. Each run
 * is traced and checked as in test_solver_control.c (solver_trace.h): the damping rule on the
 * steps taken, the bitwise restore of rejected steps, every cost, gradient norm and step norm
 * against the reference model of solver_reference.h, and the stop rule the summary names. */
#define _POSIX_C_SOURCE 200809L

#include "ba_internal.h"
#include "solver_trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Traced options that run until the iteration limit unless the test sets a tolerance. */
static sbm_solver_options lm_options(sbm_linear_solver ls, int iterations, trace *t)
{
    sbm_solver_options o = traced(ls, iterations, t);
    o.function_tolerance = 0.0;
    o.gradient_tolerance = 0.0;
    o.parameter_tolerance = 0.0;
    return o;
}

/* One traced solve of a fresh problem; the invariants checked. */
static void solve_traced(sbm_test_env *e, sbm_bal_problem *p, const sbm_solver_options *o,
                         trace *t, sbm_solver_summary *s)
{
    SBM_TEST_OK_OR_SKIP(e, sbm_ba_solve(e->ctx, p, o, s));
    check_lm(p, t, o, s);
}

/* ---------------------------------------------------------------------------------------- */
/* The sparse Cholesky path                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* The same steps as dense Cholesky on a problem both can solve: every report (acceptance,
 * lambda, costs, norms) and every estimate agree to 1e-10. The far start gives rejections,
 * consecutive ones and acceptances (the whole damping rule). */
static void test_sparse_same_steps(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const sbm_linear_solver kinds[] = {SBM_LINEAR_DENSE_CHOLESKY, SBM_LINEAR_SPARSE_CHOLESKY};
    trace t[2];
    sbm_solver_summary s[2];
    sbm_bal_problem *p[2];
    for (int k = 0; k < 2; k++) {
        p[k] = generated(e, 8, 100, 4, 20.0, 0.5, 1);
        trace_start_bal(&t[k], p[k]);
        const sbm_solver_options o = lm_options(kinds[k], 12, &t[k]);
        solve_traced(e, p[k], &o, &t[k], &s[k]);
        assert_int_equal(s[k].linear_solver, kinds[k]);
    }
    assert_int_equal(t[0].n, t[1].n);
    int rejected = 0;
    const int64_t nall = t[0].na + t[0].nb;
    for (int k = 0; k < t[0].n; k++) {
        const sbm_iteration_report *a = &t[0].rep[k], *b = &t[1].rep[k];
        assert_int_equal(a->accepted, b->accepted);
        rejected += !a->accepted;
        const double pairs[][2] = {{a->lambda, b->lambda},
                                   {a->cost, b->cost},
                                   {a->step_norm, b->step_norm},
                                   {a->gradient_norm, b->gradient_norm}};
        for (int q = 0; q < 4; q++)
            if (!(fabs(pairs[q][0] - pairs[q][1]) <= 1e-10 * fabs(pairs[q][0])))
                fail_msg("iteration %d, field %d: dense %.17g, sparse %.17g", k + 1, q,
                         pairs[q][0], pairs[q][1]);
        const double xn = norm_of(t[0].x[k + 1], nall);
        for (int64_t i = 0; i < nall; i++)
            if (!(fabs(t[0].x[k + 1][i] - t[1].x[k + 1][i]) <= 1e-10 * xn))
                fail_msg("iteration %d: parameter %lld, dense %.17g, sparse %.17g", k + 1,
                         (long long)i, t[0].x[k + 1][i], t[1].x[k + 1][i]);
    }
    assert_true(rejected >= 2 && t[0].n - rejected >= 2);
    assert_true(fabs(s[0].final_cost - s[1].final_cost) <= 1e-10 * s[0].final_cost);
    for (int k = 0; k < 2; k++) {
        trace_free(&t[k]);
        sbm_bal_destroy(p[k]);
    }
}

/* AUTO: dense Cholesky up to dense_max_dim unknowns of S, the sparse Cholesky above, unless S
 * is so dense that PCG is cheaper. 400 cameras, each pair sharing a point: the factor is dense
 * (3600^3 / 3 flops, 2400 per value of S) and S holds 0.67 times the values of W and Y: PCG on
 * the explicit S (a device: matrix-free PCG); with 3000 points S holds 2.9 times their values
 * (34 759 upper blocks against 18 000 of W): matrix-free PCG, S never formed. */
static void test_sparse_auto(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const int64_t points[] = {30000, 3000};
    for (int k = 0; k < 2; k++) {
        sbm_bal_problem *p = generated(e, 400, points[k], 6, 1.0, 0.5, 4);
        sbm_solver_options o = sbm_solver_default_options();
        o.max_iterations = 1;
        sbm_solver_summary s;
        SBM_TEST_OK_OR_SKIP(e, sbm_ba_solve(e->ctx, p, &o, &s));
        /* the explicit S's PCG on the CPU only; a device takes matrix-free PCG there too */
        const int cpu = e->backend == SBM_BACKEND_CPU;
        assert_int_equal(s.linear_solver,
                         k == 0 && cpu ? SBM_LINEAR_PCG : SBM_LINEAR_PCG_MATRIX_FREE);
        assert_true(s.final_cost < s.initial_cost);
        sbm_bal_destroy(p);
    }
    const int64_t dims[] = {72, 71, 0};
    for (int k = 0; k < 3; k++) {
        sbm_bal_problem *p = generated(e, 8, 100, 4, 1.0, 0.5, 2);
        trace t;
        trace_start_bal(&t, p);
        sbm_solver_options o = lm_options(SBM_LINEAR_AUTO, 3, &t);
        o.dense_max_dim = dims[k];
        sbm_solver_summary s;
        solve_traced(e, p, &o, &t, &s);
        assert_int_equal(s.linear_solver,
                         k == 0 ? SBM_LINEAR_DENSE_CHOLESKY : SBM_LINEAR_SPARSE_CHOLESKY);
        assert_int_equal(s.linear_failures, 0);
        trace_free(&t);
        sbm_bal_destroy(p);
    }
}

/* The size of S counted from W's pattern (AUTO's first test) is the size of the S formed. */
static void test_schur_block_count(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const int64_t shapes[][3] = {{8, 100, 4}, {40, 60, 3}, {6, 2, 2}, {400, 3000, 6}};
    for (int k = 0; k < 4; k++) {
        sbm_bal_problem *p = generated(e, shapes[k][0], shapes[k][1], (int)shapes[k][2], 1.0,
                                       0.5, 7);
        sbm_ba_system *sys = NULL;
        sbm_cbc *S = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_ba_system_create(e->ctx, p, &sys));
        SBM_ASSERT_OK(e->ctx, sbm_ba_linearize(e->ctx, sys, p));
        SBM_TEST_OK_OR_SKIP(e, sbm_ba_set_damping(e->ctx, sys, 1.0));
        SBM_ASSERT_OK(e->ctx, sbm_ba_system_reduce(e->ctx, sys, &S, NULL));
        int64_t bs = -1, bw = -1;
        SBM_ASSERT_OK(e->ctx, sbm__ba_schur_blocks(e->ctx, sys, &bs, &bw));
        assert_int_equal(bs, sbm_cbc_get_info(S).nnzb);
        assert_int_equal(bw, sbm_cbc_get_info(sbm_ba_system_get_info(sys).W).nnzb);
        sbm_cbc_destroy(S);
        sbm_ba_system_destroy(sys);
        sbm_bal_destroy(p);
    }
}

/* The camera named by a failure message ("camera J as numbered"), or -1. */
static long named(const char *m, const char *what)
{
    const char *at = strstr(m, what);
    return at ? strtol(at + strlen(what), NULL, 10) : -1;
}

/* Two points seen by two cameras each: of six cameras at least two see nothing, their blocks
 * of S are exactly zero without damping, and with lambda 1e-320 their damping (lambda * 1e-6)
 * underflows to zero too. Every factorisation fails at such a camera: a rejected step, the
 * estimate untouched, lambda rising by nu = 2, 4, 8 (exactly, in the subnormal range), the
 * failure counted and its message naming the camera. */
static void test_sparse_failed_factorisation(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const double lambdas[] = {0.0, 1e-320};
    for (int k = 0; k < 2; k++) {
        sbm_bal_problem *p = generated(e, 6, 2, 2, 1.0, 0.5, 5);
        const sbm_bal_info pi = sbm_bal_get_info(p);
        int seen[6] = {0};
        for (int64_t q = 0; q < pi.observations; q++) seen[pi.obs_camera[q]] = 1;
        trace t;
        trace_start_bal(&t, p);
        sbm_solver_options o = lm_options(SBM_LINEAR_SPARSE_CHOLESKY, 4, &t);
        o.initial_lambda = lambdas[k];
        sbm_solver_summary s;
        sbm_ctx_clear_error(e->ctx);
        solve_traced(e, p, &o, &t, &s);
        assert_int_equal(t.n, 4);
        for (int q = 0; q < 4; q++) {
            assert_true(t.rep[q].linear_failed && !t.rep[q].accepted);
            assert_true(t.rep[q].lambda == lambdas[k] * (q == 0 ? 1 : 1 << (q * (q + 1) / 2)));
        }
        assert_true(k == 0 || t.rep[3].lambda > t.rep[0].lambda);
        assert_int_equal(s.linear_failures, 4);
        assert_int_equal(s.stop_reason, SBM_STOP_MAX_ITERATIONS);
        assert_true(s.final_cost == s.initial_cost);
        assert_int_equal(sbm_ctx_last_status(e->ctx), SBM_ERR_NOT_POSITIVE_DEFINITE);
        const char *m = sbm_ctx_last_error(e->ctx);
        print_message("  %s\n", m);
        const long cam = named(m, "camera ");
        if (!strstr(m, "sbm_ba_solve: sbm_chol_factor") || cam < 0 || cam >= 6 || seen[cam])
            fail_msg("message \"%s\" does not name a camera that sees nothing", m);
        trace_free(&t);
        sbm_bal_destroy(p);
    }
}

/* A block of V not positive definite (focal length 0: every point's Jacobian is 0) is a
 * rejected step of the sparse path too; the message names the point. */
static void test_sparse_failed_point(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_problem *p = generated(e, 6, 40, 3, 1.0, 0.5, 3);
    const sbm_bal_info pi = sbm_bal_get_info(p);
    for (int64_t c = 0; c < pi.cameras; c++) pi.camera_params[9 * c + 6] = 0.0;
    trace t;
    trace_start_bal(&t, p);
    sbm_solver_options o = lm_options(SBM_LINEAR_SPARSE_CHOLESKY, 2, &t);
    o.initial_lambda = 0.0;
    sbm_solver_summary s;
    solve_traced(e, p, &o, &t, &s);
    assert_int_equal(s.linear_failures, 2);
    const char *m = sbm_ctx_last_error(e->ctx);
    print_message("  %s\n", m);
    if (named(m, "point ") != 0 || !strstr(m, "as numbered in the BAL file"))
        fail_msg("message \"%s\" does not name point 0", m);
    trace_free(&t);
    sbm_bal_destroy(p);
}

/* ---------------------------------------------------------------------------------------- */
/* Stop reasons                                                                             */
/* ---------------------------------------------------------------------------------------- */

/* A traced solve of the seeded problem with the tolerances given; its stop reason. */
static sbm_stop_reason stop_run(sbm_test_env *e, sbm_linear_solver ls, double perturbation,
                                double lambda0, int iterations, double ftol, double gtol,
                                double ptol, trace *t, sbm_solver_summary *s)
{
    sbm_bal_problem *p = generated(e, 8, 100, 4, perturbation, perturbation > 0 ? 0.5 : 0.0, 2);
    trace_start_bal(t, p);
    sbm_solver_options o = lm_options(ls, iterations, t);
    o.initial_lambda = lambda0;
    o.function_tolerance = ftol;
    o.gradient_tolerance = gtol;
    o.parameter_tolerance = ptol;
    solve_traced(e, p, &o, t, s);
    sbm_bal_destroy(p);
    return s->stop_reason;
}

static void test_stop_reasons(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const sbm_linear_solver ls = SBM_LINEAR_SPARSE_CHOLESKY;
    trace t;
    sbm_solver_summary s;
    /* the exact start: zero cost, no iteration (the CPU backend, whose model made the
     * observations); a device's sin, cos and contractions leave a round-off cost, which no step
     * lowers: the parameter tolerance stops the first step there (test_solver_control.c) */
    if (e->backend == SBM_BACKEND_CPU) {
        assert_int_equal(stop_run(e, ls, 0.0, 1e-4, 10, 0, 0, 0, &t, &s), SBM_STOP_ZERO_COST);
        assert_true(t.n == 0 && s.final_gradient_norm == 0.0);
    } else {
        assert_true(sbm_stop_reason_converged(stop_run(e, ls, 0.0, 1e-4, 10, 0, 0, 1e-10, &t,
                                                       &s)));
        assert_true(t.n <= 1 && s.initial_cost <= 1e-20);
    }
    trace_free(&t);
    /* the iteration limit; a reference trajectory for the tolerances below */
    assert_int_equal(stop_run(e, ls, 2.0, 1e-4, 8, 0, 0, 0, &t, &s), SBM_STOP_MAX_ITERATIONS);
    const double g3 = t.rep[3].gradient_norm, g0 = t.rep[0].gradient_norm;
    assert_true(g3 < t.rep[2].gradient_norm && g3 < t.rep[1].gradient_norm && g3 < g0);
    trace_free(&t);
    /* the gradient tolerance: at the start, and where the trajectory reaches it */
    assert_int_equal(stop_run(e, ls, 2.0, 1e-4, 8, 0, 2.0 * g0, 0, &t, &s),
                     SBM_STOP_GRADIENT_TOLERANCE);
    assert_int_equal(t.n, 0);
    trace_free(&t);
    assert_int_equal(stop_run(e, ls, 2.0, 1e-4, 8, 0, g3, 0, &t, &s),
                     SBM_STOP_GRADIENT_TOLERANCE);
    assert_int_equal(t.n, 3);
    trace_free(&t);
    /* the function and the parameter tolerance */
    assert_int_equal(stop_run(e, ls, 2.0, 1e-4, 30, 1e-3, 0, 0, &t, &s),
                     SBM_STOP_FUNCTION_TOLERANCE);
    assert_true(t.n < 30);
    trace_free(&t);
    assert_int_equal(stop_run(e, ls, 2.0, 1e-4, 30, 0, 0, 1e-6, &t, &s),
                     SBM_STOP_PARAMETER_TOLERANCE);
    assert_true(t.n < 30);
    trace_free(&t);
    /* lambda 1e30: nothing moves; with a parameter tolerance the first step is too short,
     * without one lambda passes 1e32 (1e30, 2e30, 8e30, 6.4e31) */
    assert_int_equal(stop_run(e, ls, 1.0, 1e30, 20, 0, 0, 1e-8, &t, &s),
                     SBM_STOP_PARAMETER_TOLERANCE);
    assert_true(t.n == 1 && !t.rep[0].accepted);
    trace_free(&t);
    assert_int_equal(stop_run(e, ls, 1.0, 1e30, 20, 0, 0, 0, &t, &s), SBM_STOP_NO_PROGRESS);
    assert_int_equal(t.n, 4);
    trace_free(&t);
    assert_string_equal(sbm_stop_reason_name(SBM_STOP_NO_PROGRESS), "no progress");
}

/* PCG stopped by its cap: every step says so and the summary counts them; with room to
 * converge none is capped. */
static void test_pcg_capped(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const int caps[] = {2, 1000};
    for (int k = 0; k < 2; k++) {
        sbm_bal_problem *p = generated(e, 8, 100, 4, 1.0, 0.5, 2);
        trace t;
        trace_start_bal(&t, p);
        sbm_solver_options o = lm_options(k ? SBM_LINEAR_PCG_MATRIX_FREE : SBM_LINEAR_PCG, 3, &t);
        o.pcg_max_iterations = caps[k];
        o.pcg_tolerance = 1e-10;
        o.pcg_forcing = SBM_PCG_FORCING_FIXED; /* every solve to 1e-10: the cap binds */
        sbm_solver_summary s;
        solve_traced(e, p, &o, &t, &s);
        for (int q = 0; q < t.n; q++) {
            assert_int_equal(t.rep[q].linear_capped, k == 0);
            assert_true(k == 1 || t.rep[q].linear_iterations == caps[k]);
        }
        assert_int_equal(s.linear_capped, k == 0 ? t.n : 0);
        trace_free(&t);
        sbm_bal_destroy(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_sparse_same_steps),
        SBM_TEST_BOTH(test_sparse_auto),
        SBM_TEST_BOTH(test_schur_block_count),
        SBM_TEST_BOTH(test_sparse_failed_factorisation),
        SBM_TEST_BOTH(test_sparse_failed_point),
        SBM_TEST_BOTH(test_stop_reasons),
        SBM_TEST_BOTH(test_pcg_capped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
