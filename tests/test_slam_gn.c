/* SPDX-License-Identifier: BSD-3-Clause */
/* Control flow of sbm_slam_solve's Gauss-Newton (src/slam/slam_gn.c), through the public API:
 * the line search halves the step until the cost falls, every accepted cost is 0.5 chi2 of the
 * poses returned (reference errors of solver_reference.h), a failed search restores the poses
 * bitwise and stops (no progress), Lambda not positive definite is an error that leaves the
 * poses untouched, and every stop rule gives its stop_reason. tests/README-mutations.md records
 * which injected control-flow bugs these tests catch. */
#define _POSIX_C_SOURCE 200809L

#include "slam_trace.h"

/* ---------------------------------------------------------------------------------------- */
/* Gauss-Newton                                                                             */
/* ---------------------------------------------------------------------------------------- */

/* The line-search invariants: an accepted iteration lowers chi2 (the poses returned cost what
 * the report says) with a step length 2^-k, k <= 10; a failed search restores the poses bitwise
 * and ends the solve. */
static run_stats check_gn(const sbm_g2o_graph *g, const trace *t, const sbm_solver_summary *s)
{
    const sbm_g2o_info gi = sbm_g2o_get_info(g);
    const size_t bytes = (size_t)t->np * sizeof(double);
    run_stats rs = {0, 0, 0, 0, 0, INFINITY, 0};
    assert_int_equal(s->iterations, t->n);
    assert_cost(s->initial_cost, ref_slam_cost(&gi, t->x[0]), "initial cost", 0);
    double chi2 = s->initial_cost;
    for (int k = 0; k < t->n; k++) {
        const sbm_iteration_report *r = &t->rep[k];
        print_message("    %2d  step %-10.6g %s  cost %.9e -> %.9e\n", r->iteration, r->lambda,
                      r->accepted ? "accepted" : "rejected", r->cost_before, r->cost);
        assert_int_equal(r->iteration, k + 1);
        assert_true(r->cost_before == chi2);
        if (r->accepted) {
            int ex;
            const double m = frexp(r->lambda, &ex);
            if (!(m == 0.5 && ex <= 1 && ex >= -9)) fail_msg("step length %.17g", r->lambda);
            if (!(r->cost < r->cost_before)) fail_msg("iteration %d accepted no decrease", k + 1);
            assert_cost(r->cost, ref_slam_cost(&gi, t->x[k + 1]), "cost", k + 1);
            rs.min_factor = fmin(rs.min_factor, r->lambda);
            rs.accepted++;
        } else {
            assert_true(r->cost == r->cost_before);
            if (memcmp(t->x[k + 1], t->x[k], bytes) != 0)
                fail_msg("iteration %d: the failed line search did not restore the poses", k + 1);
            assert_int_equal(k, t->n - 1);
            rs.rejected++;
        }
        chi2 = r->cost;
    }
    assert_int_equal(s->accepted, rs.accepted);
    assert_true(s->final_cost == chi2);
    assert_memory_equal(t->x[t->n], gi.poses, bytes);
    assert_cost(s->final_cost, ref_slam_cost(&gi, t->x[t->n]), "final cost", t->n);
    return rs;
}

static run_stats run_gn(sbm_test_env *e, sbm_g2o_graph *g, sbm_linear_solver ls, int iterations,
                        double ftol, sbm_solver_summary *s)
{
    trace t;
    sbm_solver_options o = trace_start(&t, g, ls, 0.0, iterations);
    o.method = SBM_METHOD_GAUSS_NEWTON;
    o.function_tolerance = ftol;
    o.pcg_tolerance = 1e-12;
    o.pcg_forcing = SBM_PCG_FORCING_FIXED; /* the Gauss-Newton steps solved to 1e-12 */
    SBM_TEST_OK_OR_SKIP(e, sbm_slam_solve(e->ctx, g, &o, s));
    assert_int_equal(s->linear_solver, ls);
    const run_stats rs = check_gn(g, &t, s);
    trace_free(&t);
    return rs;
}

/* Far from the minimum (poses off by up to 3 m and 3 rad) full steps overshoot and the search
 * halves them; the solve ends on the function tolerance. */
static void test_gn_line_search(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const sbm_linear_solver kinds[] = {SBM_LINEAR_DENSE_CHOLESKY, SBM_LINEAR_PCG};
    for (int k = 0; k < 2; k++) {
        sbm_g2o_graph *g = noisy_se2_loop(e, 32, 3.0, 3.0);
        sbm_solver_summary s;
        const run_stats rs = run_gn(e, g, kinds[k], 30, 1e-9, &s);
        print_message("  %d accepted, shortest step %g\n", rs.accepted, rs.min_factor);
        assert_true(rs.min_factor <= 0.5 && rs.rejected == 0 && s.iterations < 30);
        sbm_g2o_destroy(g);
    }
}

/* Vertex 1 is rotated by pi - 1e-3 about x from where the edge wants it: the error's quaternion
 * part is nearly (1, 0, 0) with w ~ 5e-4, its Jacobian along x is ~w, and the Gauss-Newton
 * step is ~2000 there. Every trial length down to 2^-10 keeps |d_rot| > 1, so the increment's
 * rotation is the identity (g2o's rule) while the coupled translation step moves the pose
 * away: chi2 rises at every length, and the poses must come back bitwise. */
static void test_gn_restore(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const double h = 0.5 * (3.14159265358979323846 - 1e-3);
    char text[1024];
    snprintf(text, sizeof text,
             "VERTEX_SE3:QUAT 0 0 0 0 0 0 0 1\n"
             "VERTEX_SE3:QUAT 1 0 1 0 %.17g 0 0 %.17g\n"
             "EDGE_SE3:QUAT 1 0 0 0 0 0 0 0 1 1 0 0 0 0 0 1 0 0 0 0 1 0 0 0 1 0 0 1 0 1\n",
             sin(h), cos(h));
    const sbm_linear_solver kinds[] = {SBM_LINEAR_DENSE_CHOLESKY, SBM_LINEAR_PCG};
    for (int k = 0; k < 2; k++) {
        sbm_g2o_graph *g = g2o_from_text(e, "half_turn", text);
        sbm_solver_summary s;
        const run_stats rs = run_gn(e, g, kinds[k], 10, 1e-10, &s);
        assert_int_equal(rs.rejected, 1);
        assert_int_equal(s.iterations, 1);
        assert_true(s.final_cost == s.initial_cost && s.initial_cost > 0.5);
        assert_int_equal(s.stop_reason, SBM_STOP_NO_PROGRESS);
        sbm_g2o_destroy(g);
    }
}

/* Vertex 11 hangs on an edge with a zero information matrix: its block of Lambda is exactly 0.
 * Gauss-Newton has no damping to fall back on, so the solve fails with the status, the message
 * names the vertex by its file id (and its free-vertex index), and the poses are left as they
 * were, with each linear solver. */
static void test_gn_npd(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const char text[] = "VERTEX_SE2 10 0 0 0\nVERTEX_SE2 11 1 0 0\nVERTEX_SE2 12 0 1 0.1\n"
                               "EDGE_SE2 10 11 1 0 0 0 0 0 0 0 0\n"
                               "EDGE_SE2 10 12 0 1 0 1 0 0 1 0 1\n";
    const sbm_linear_solver kinds[] = {SBM_LINEAR_DENSE_CHOLESKY, SBM_LINEAR_SPARSE_CHOLESKY,
                                       SBM_LINEAR_PCG};
    const char *const msgs[] = {
        "sbm_slam_solve: Lambda is not positive definite at vertex 11 (free vertex 0; dense",
        "sbm_slam_solve: Lambda is not positive definite at vertex 11 (free vertex 0; sparse",
        "sbm_slam_solve: Lambda is not positive definite at vertex 11 (free vertex 0; its diagonal"};
    for (int k = 0; k < 3; k++) {
        sbm_g2o_graph *g = g2o_from_text(e, "zero_information", text);
        trace t;
        sbm_solver_options o = trace_start(&t, g, kinds[k], 0.0, 5);
        o.method = SBM_METHOD_GAUSS_NEWTON;
        sbm_solver_summary s;
        const sbm_status st = sbm_slam_solve(e->ctx, g, &o, &s);
        SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
        SBM_ASSERT_FAILS(e->ctx, st, SBM_ERR_NOT_POSITIVE_DEFINITE, msgs[k]);
        assert_int_equal(t.n, 0);
        assert_int_equal(s.iterations, 0);
        assert_int_equal(s.linear_failures, 1);
        assert_memory_equal(t.x[0], sbm_g2o_get_info(g).poses, 9 * sizeof(double));
        trace_free(&t);
        sbm_g2o_destroy(g);
    }
}

static void test_gn_stop_rules(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_solver_summary s;
    /* chi2 exactly 0, and a graph whose vertices are all fixed: no iteration */
    sbm_g2o_graph *g = g2o_from_text(e, "exact", "VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 1 0 0\n"
                                                 "EDGE_SE2 0 1 1 0 0 1 0 0 1 0 1\n");
    run_gn(e, g, SBM_LINEAR_DENSE_CHOLESKY, 10, 1e-10, &s);
    assert_true(s.iterations == 0 && s.initial_cost == 0.0);
    assert_int_equal(s.stop_reason, SBM_STOP_ZERO_COST);
    sbm_g2o_destroy(g);
    g = g2o_from_text(e, "fixed", "VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 1 0 0.5\n"
                                  "EDGE_SE2 0 1 1 0 0 1 0 0 1 0 1\nFIX 0 1\n");
    run_gn(e, g, SBM_LINEAR_DENSE_CHOLESKY, 10, 1e-10, &s);
    assert_true(s.iterations == 0 && s.initial_cost == 0.125);
    assert_int_equal(s.stop_reason, SBM_STOP_NONE); /* no unknowns */
    sbm_g2o_destroy(g);

    /* max_iterations: the last step is not linearised again */
    g = noisy_se2_loop(e, 32, 3.0, 3.0);
    trace t;
    sbm_solver_options o = trace_start(&t, g, SBM_LINEAR_DENSE_CHOLESKY, 0.0, 2);
    o.method = SBM_METHOD_GAUSS_NEWTON;
    SBM_TEST_OK_OR_SKIP(e, sbm_slam_solve(e->ctx, g, &o, &s));
    check_gn(g, &t, &s);
    assert_int_equal(s.iterations, 2);
    assert_int_equal(s.stop_reason, SBM_STOP_MAX_ITERATIONS);
    assert_true(t.rep[0].accepted && t.rep[0].time_linearize > 0.0);
    assert_true(t.rep[1].accepted && t.rep[1].time_linearize == 0.0);
    trace_free(&t);
    sbm_g2o_destroy(g);

    /* function tolerance: only the last step lowers chi2 by at most tol*chi2 */
    g = noisy_se2_loop(e, 32, 3.0, 3.0);
    o = trace_start(&t, g, SBM_LINEAR_DENSE_CHOLESKY, 0.0, 30);
    o.method = SBM_METHOD_GAUSS_NEWTON;
    o.function_tolerance = 1e-4;
    SBM_TEST_OK_OR_SKIP(e, sbm_slam_solve(e->ctx, g, &o, &s));
    check_gn(g, &t, &s);
    assert_true(s.iterations < 30);
    assert_int_equal(s.stop_reason, SBM_STOP_FUNCTION_TOLERANCE);
    for (int k = 0; k < t.n; k++) {
        const sbm_iteration_report *r = &t.rep[k];
        assert_int_equal(r->cost_before - r->cost <= 1e-4 * r->cost_before, k == t.n - 1);
    }
    assert_true(t.rep[t.n - 1].time_linearize == 0.0);
    trace_free(&t);
    sbm_g2o_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_gn_line_search),
        SBM_TEST_BOTH(test_gn_restore),
        SBM_TEST_BOTH(test_gn_npd),
        SBM_TEST_BOTH(test_gn_stop_rules),
    };
    return cmocka_run_group_tests(tests, sbm_test_make_tmp_dir, sbm_test_remove_tmp_dir);
}
