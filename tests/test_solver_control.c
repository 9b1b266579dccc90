/* SPDX-License-Identifier: BSD-3-Clause */
/* Control flow of sbm_ba_solve (Levenberg-Marquardt), through the public API: rejected steps,
 * the damping trajectory, the not-positive-definite paths and the stop rules. Each run is
 * checked from its per-iteration reports (tests/solver_trace.h):
 *   - lambda after a rejection is exactly lambda*nu with nu = 2, 4, 8, ... since the last
 *     acceptance; after an acceptance it is lambda*max(1/3, 1 - (2 rho - 1)^3) with
 *     rho = actual / predicted decrease, the prediction 0.5 dx^T (lambda D dx + g) recomputed
 *     here from the step taken and central differences of the model;
 *   - a rejected step leaves the estimate bitwise as it was before the iteration;
 *   - every reported cost, the final one included, is the cost of the estimate the solver
 *     returns, evaluated by the BAL projection of solver_reference.h (not sbm_bal_evaluate);
 *   - the gradient and step norms, the failure and cap counts and the stop reason.
 * The trajectory tests use dense Cholesky, whose steps do not depend on PCG's round-off; the
 * sparse Cholesky path and each stop reason are in test_ba_lm.c, the SLAM solvers in
 * test_slam_control.c and test_slam_gn.c. tests/README-mutations.md records which injected
 * control-flow bugs these tests catch. */
#define _POSIX_C_SOURCE 200809L

#include "solver_trace.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Levenberg-Marquardt: rejections and the damping trajectory                               */
/* ---------------------------------------------------------------------------------------- */

/* One traced dense-Cholesky solve of p from initial_lambda; the invariants checked. */
static run_stats run_lm(sbm_test_env *e, sbm_bal_problem *p, double lambda0, int iterations,
                        sbm_solver_summary *s)
{
    trace t;
    trace_start_bal(&t, p);
    sbm_solver_options o = traced(SBM_LINEAR_DENSE_CHOLESKY, iterations, &t);
    o.initial_lambda = lambda0;
    /* the trajectories run on until the iteration limit or lambda's */
    o.gradient_tolerance = 0.0;
    o.parameter_tolerance = 0.0;
    SBM_TEST_OK_OR_SKIP(e, sbm_ba_solve(e->ctx, p, &o, s));
    assert_int_equal(s->linear_solver, SBM_LINEAR_DENSE_CHOLESKY);
    const run_stats rs = check_lm(p, &t, &o, s);
    trace_free(&t);
    return rs;
}

/* A run that exercises the whole rule: steps taken with a Nielsen factor away from its 1/3
 * floor, consecutive rejections (nu doubling) and a rejection after an acceptance (nu back to
 * 2). Fails loudly if a scenario stops exercising it. */
static void assert_full_trajectory(const run_stats *rs, const char *what)
{
    print_message("  %s: %d accepted, %d rejected (longest run %d), factors %.3f..%.3f\n", what,
                  rs->accepted, rs->rejected, rs->max_run, rs->min_factor, rs->max_factor);
    if (rs->accepted < 2 || rs->max_run < 2 || !rs->reject_after_ok || !(rs->max_factor > 0.4))
        fail_msg("%s no longer exercises the damping rule (see the trajectory above)", what);
}

/* A traced solve from lambda0 of a problem started twenty times the usual perturbation away,
 * with one observation moved by (3000, -2000) pixels if outlier (the quadratic loss chases it). */
static run_stats lm_scenario(sbm_test_env *e, double lambda0, int outlier, const char *what)
{
    sbm_bal_problem *p = generated(e, 8, 100, 4, 20.0, 0.5, 1);
    if (outlier) {
        double *xy = (double *)sbm_bal_get_info(p).obs_xy; /* the problem's own array */
        xy[2 * 17] += 3000.0;
        xy[2 * 17 + 1] -= 2000.0;
    }
    sbm_solver_summary s;
    const run_stats rs = run_lm(e, p, lambda0, 12, &s);
    assert_full_trajectory(&rs, what);
    assert_true(s.final_cost < s.initial_cost);
    sbm_bal_destroy(p);
    return rs;
}

/* the first steps overshoot: five rejections in a row */
static void test_lm_far_start(void **state) { lm_scenario(sbm_test_begin(state), 1e-4, 0, "far start"); }

/* almost no damping: Gauss-Newton steps, rejected until lambda has grown by ~1e13 */
static void test_lm_tiny_lambda(void **state)
{
    assert_true(lm_scenario(sbm_test_begin(state), 1e-12, 0, "tiny initial lambda").max_run >= 6);
}

static void test_lm_outlier(void **state) { lm_scenario(sbm_test_begin(state), 1e-4, 1, "outlier"); }

/* The other linear solvers follow the same control flow: PCG and matrix-free PCG; the rule
 * is checked on the steps they took (the sparse Cholesky: test_ba_lm.c). */
static void test_lm_pcg_trajectories(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const sbm_linear_solver kinds[] = {SBM_LINEAR_PCG, SBM_LINEAR_PCG_MATRIX_FREE};
    for (int k = 0; k < 2; k++) {
        sbm_bal_problem *p = generated(e, 8, 100, 4, 20.0, 0.5, 1);
        trace t;
        trace_start_bal(&t, p);
        sbm_solver_options o = traced(kinds[k], 12, &t);
        o.pcg_tolerance = 1e-10;
        o.pcg_max_iterations = 500;
        sbm_solver_summary s;
        SBM_TEST_OK_OR_SKIP(e, sbm_ba_solve(e->ctx, p, &o, &s));
        assert_int_equal(s.linear_solver, kinds[k]);
        const run_stats rs = check_lm(p, &t, &o, &s);
        assert_true(rs.rejected >= 2 && rs.accepted >= 2);
        trace_free(&t);
        sbm_bal_destroy(p);
    }
}

/* lambda 1e30: every step is below the parameters' last bit, so the cost cannot drop; lambda
 * doubles with nu until it passes 1e32 (1e30, 2e30, 8e30, 6.4e31), and the solve stops there. */
static void test_lm_huge_lambda(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_problem *p = generated(e, 6, 40, 3, 1.0, 0.5, 3);
    sbm_solver_summary s;
    const run_stats rs = run_lm(e, p, 1e30, 20, &s);
    assert_int_equal(s.iterations, 4);
    assert_int_equal(rs.rejected, 4);
    assert_true(s.final_cost == s.initial_cost);
    sbm_bal_destroy(p);
}

/* A damping that overflows the damped diagonal is an error, not a step: SBM_ERR_NOT_FINITE,
 * the estimate untouched. */
static void test_lm_overflowing_lambda(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_problem *p = generated(e, 6, 40, 3, 1.0, 0.5, 3);
    trace t;
    trace_start_bal(&t, p);
    sbm_solver_options o = traced(SBM_LINEAR_DENSE_CHOLESKY, 5, &t);
    o.initial_lambda = DBL_MAX;
    sbm_status st = sbm_ba_solve(e->ctx, p, &o, NULL);
    SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
    SBM_ASSERT_FAILS(e->ctx, st, SBM_ERR_NOT_FINITE, "sbm_ba_solve");
    assert_int_equal(t.n, 0);
    const sbm_bal_info pi = sbm_bal_get_info(p);
    assert_memory_equal(t.x[0], pi.camera_params, 9 * pi.cameras * sizeof(double));
    assert_memory_equal(t.x[0] + 9 * pi.cameras, pi.point_params, 3 * pi.points * sizeof(double));
    trace_free(&t);
    sbm_bal_destroy(p);
}

/* ---------------------------------------------------------------------------------------- */
/* Levenberg-Marquardt: the not-positive-definite paths                                     */
/* ---------------------------------------------------------------------------------------- */

/* Without damping (lambda 0) a singular system fails to factor; the solver treats that as a
 * rejected step (the estimate untouched, lambda * nu, still 0) and keeps the failure's status
 * and message in the context while the solve itself succeeds. */
static void run_npd(sbm_test_env *e, sbm_bal_problem *p, sbm_linear_solver ls, const char *msg)
{
    trace t;
    trace_start_bal(&t, p);
    sbm_solver_options o = traced(ls, 3, &t);
    o.initial_lambda = 0.0;
    sbm_solver_summary s;
    sbm_ctx_clear_error(e->ctx);
    SBM_TEST_OK_OR_SKIP(e, sbm_ba_solve(e->ctx, p, &o, &s));
    const run_stats rs = check_lm(p, &t, &o, &s);
    assert_int_equal(rs.rejected, 3);
    assert_true(s.final_cost == s.initial_cost && s.initial_cost > 0.0);
    assert_int_equal(sbm_ctx_last_status(e->ctx), SBM_ERR_NOT_POSITIVE_DEFINITE);
    const char *m = sbm_ctx_last_error(e->ctx);
    print_message("  %s\n", m);
    if (!strstr(m, "sbm_ba_solve") || !strstr(m, msg))
        fail_msg("message \"%s\" does not name sbm_ba_solve and \"%s\"", m, msg);
    trace_free(&t);
}

static void test_lm_npd_schur(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_problem *p = generated(e, 6, 40, 3, 1.0, 0.5, 3);
    /* focal length 0: every prediction is 0, every point's Jacobian and V block exactly 0 */
    const sbm_bal_info pi = sbm_bal_get_info(p);
    for (int64_t c = 0; c < pi.cameras; c++) pi.camera_params[9 * c + 6] = 0.0;
    run_npd(e, p, SBM_LINEAR_DENSE_CHOLESKY, "argument V");
    sbm_bal_destroy(p);
}

static void test_lm_npd_reduced(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    /* two points seen by two cameras each: at least two of the six cameras see nothing, and
     * their blocks of S are exactly 0 */
    const sbm_linear_solver kinds[] = {SBM_LINEAR_DENSE_CHOLESKY, SBM_LINEAR_PCG};
    const char *const msgs[] = {"dense Cholesky", "not positive definite"};
    for (int k = 0; k < 2; k++) {
        sbm_bal_problem *p = generated(e, 6, 2, 2, 1.0, 0.5, 5);
        run_npd(e, p, kinds[k], msgs[k]);
        sbm_bal_destroy(p);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Levenberg-Marquardt: stop rules                                                          */
/* ---------------------------------------------------------------------------------------- */

static void test_lm_stop_rules(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_solver_summary s;
    /* a zero cost is the minimum: no iteration. The CPU backend's model made the observations
     * and reproduces them exactly; a device's sin, cos and contractions leave a round-off cost
     * (~1e-26), where no step can lower the cost: there the parameter tolerance (the default)
     * stops the first step, a converged rule, not the iteration limit. */
    sbm_bal_problem *p = generated(e, 6, 40, 3, 0.0, 0.0, 3);
    if (e->backend == SBM_BACKEND_CPU) {
        run_lm(e, p, 1e-4, 10, &s);
        assert_int_equal(s.iterations, 0);
        assert_true(s.initial_cost == 0.0 && s.final_cost == 0.0);
    } else {
        trace t0;
        trace_start_bal(&t0, p);
        sbm_solver_options o0 = traced(SBM_LINEAR_DENSE_CHOLESKY, 10, &t0);
        SBM_TEST_OK_OR_SKIP(e, sbm_ba_solve(e->ctx, p, &o0, &s));
        print_message("  exact start on the device: cost %.3e, %d iterations, %s\n",
                      s.initial_cost, s.iterations, sbm_stop_reason_name(s.stop_reason));
        assert_true(s.initial_cost <= 1e-20 && s.iterations <= 1);
        assert_true(sbm_stop_reason_converged(s.stop_reason));
        trace_free(&t0);
    }
    sbm_bal_destroy(p);

    /* max_iterations: the last step is not linearised again */
    trace t;
    p = generated(e, 8, 100, 4, 2.0, 0.5, 2);
    trace_start_bal(&t, p);
    sbm_solver_options o = traced(SBM_LINEAR_DENSE_CHOLESKY, 2, &t);
    SBM_TEST_OK_OR_SKIP(e, sbm_ba_solve(e->ctx, p, &o, &s));
    check_lm(p, &t, &o, &s);
    assert_int_equal(s.iterations, 2);
    assert_true(t.rep[0].accepted && t.rep[0].time_linearize > 0.0);
    assert_true(t.rep[1].accepted && t.rep[1].time_linearize == 0.0);
    trace_free(&t);
    sbm_bal_destroy(p);

    /* function tolerance: the first step that lowers the cost by at most tol*cost is the last,
     * and is not linearised again */
    p = generated(e, 8, 100, 4, 2.0, 0.5, 2);
    trace_start_bal(&t, p);
    o = traced(SBM_LINEAR_DENSE_CHOLESKY, 30, &t);
    o.function_tolerance = 1e-3;
    SBM_TEST_OK_OR_SKIP(e, sbm_ba_solve(e->ctx, p, &o, &s));
    check_lm(p, &t, &o, &s);
    assert_true(s.iterations < 30);
    for (int k = 0; k < t.n; k++) {
        const sbm_iteration_report *r = &t.rep[k];
        const int small = r->accepted && r->cost_before - r->cost <= 1e-3 * r->cost_before;
        assert_int_equal(small, k == t.n - 1);
    }
    assert_true(t.rep[t.n - 1].time_linearize == 0.0);
    trace_free(&t);
    sbm_bal_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_lm_far_start),
        SBM_TEST_BOTH(test_lm_tiny_lambda),
        SBM_TEST_BOTH(test_lm_outlier),
        SBM_TEST_BOTH(test_lm_pcg_trajectories),
        SBM_TEST_BOTH(test_lm_huge_lambda),
        SBM_TEST_BOTH(test_lm_overflowing_lambda),
        SBM_TEST_BOTH(test_lm_npd_schur),
        SBM_TEST_BOTH(test_lm_npd_reduced),
        SBM_TEST_BOTH(test_lm_stop_rules),
    };
    return cmocka_run_group_tests(tests, sbm_test_make_tmp_dir, sbm_test_remove_tmp_dir);
}
