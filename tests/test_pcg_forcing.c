/* SPDX-License-Identifier: BSD-3-Clause */
/* Inexact Newton steps (sbm_solver_options.pcg_forcing): the Eisenstat-Walker tolerance sequence
 * on a given gradient sequence (first step, retried step, tightening, the safeguard, the clamps),
 * the option checks and their messages, and whole solves: BA (PCG and matrix-free PCG on a BAL
 * file) and SLAM (PCG on a pose graph) reach the fixed-tolerance run's final cost to 1e-8
 * relative with fewer PCG iterations in total. */
#include "test_util.h"
#include "solve_internal.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* eta for each gradient norm of g under o, from a fresh forcing state */
static void sequence(const sbm_solver_options *o, const double *g, int n, double *eta)
{
    sbm__forcing f;
    memset(&f, 0, sizeof f);
    for (int k = 0; k < n; k++) eta[k] = sbm__pcg_forcing_tolerance(o, &f, g[k]);
}

static void test_forcing_sequence(void **state)
{
    (void)state;
    sbm_solver_options o = sbm_solver_default_options();
    static const double g[] = {100.0, 100.0, 50.0, 10.0, 0.1, 1e-6, NAN};
    double eta[7];
    /* fixed: pcg_tolerance every step */
    o.pcg_forcing = SBM_PCG_FORCING_FIXED;
    sequence(&o, g, 7, eta);
    for (int k = 0; k < 7; k++) assert_true(eta[k] == o.pcg_tolerance);
    /* Eisenstat-Walker, eta_max 0.1: eta_max first and on the retried step; 0.9 * 0.5^2 =
     * 0.225 clamped to 0.1; 0.9 * 0.2^2; 0.9 * 0.01^2; 0.9 * 1e-10 clamped to pcg_tolerance; a
     * NaN gradient gives eta_max */
    o.pcg_forcing = SBM_PCG_FORCING_EISENSTAT_WALKER;
    o.pcg_forcing_max = 0.1;
    sequence(&o, g, 7, eta);
    const double want[] = {0.1, 0.1, 0.1, 0.9 * 0.2 * 0.2, 0.9 * 0.01 * 0.01, 1e-8, 0.1};
    for (int k = 0; k < 7; k++)
        if (fabs(eta[k] - want[k]) > 1e-15 * want[k])
            fail_msg("step %d: eta %.17g, want %.17g", k, eta[k], want[k]);
    /* eta_max 0.9: the safeguard 0.9 eta^2 holds eta up where it exceeds 0.1 */
    o.pcg_forcing_max = 0.9;
    static const double g2[] = {100.0, 99.0, 10.0, 1.0};
    sequence(&o, g2, 4, eta);
    const double e1 = 0.9 * 0.99 * 0.99, e2 = 0.9 * e1 * e1, e3 = 0.9 * e2 * e2;
    assert_true(eta[0] == 0.9);
    assert_true(fabs(eta[1] - e1) <= 1e-15);
    assert_true(fabs(eta[2] - e2) <= 1e-15); /* 0.9 (10/99)^2 = 0.0092 < e2 */
    assert_true(fabs(eta[3] - e3) <= 1e-15); /* 0.9 * 0.1^2 = 0.009 < e3 */
    assert_string_equal(sbm_pcg_forcing_name(SBM_PCG_FORCING_FIXED), "fixed");
    assert_string_equal(sbm_pcg_forcing_name(SBM_PCG_FORCING_EISENSTAT_WALKER), "Eisenstat-Walker");
    assert_string_equal(sbm_pcg_forcing_name((sbm_pcg_forcing)9), "unknown forcing");
}

/* The options are checked by both solvers, naming the field and value. */
static void test_forcing_options(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_problem *p = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_read(e->ctx, sbm_test_data_path("bal/problem-21-11315-pre.txt"),
                                       &p));
    sbm_g2o_graph *g = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, sbm_test_data_path("g2o/tinyGrid3D.g2o"), &g));
    sbm_solver_options o = sbm_solver_default_options();
    o.pcg_forcing = (sbm_pcg_forcing)5;
    SBM_ASSERT_FAILS(e->ctx, sbm_ba_solve(e->ctx, p, &o, NULL), SBM_ERR_INVALID_ARGUMENT,
                     "argument options: pcg_forcing = 5 is not an sbm_pcg_forcing");
    SBM_ASSERT_FAILS(e->ctx, sbm_slam_solve(e->ctx, g, &o, NULL), SBM_ERR_INVALID_ARGUMENT,
                     "argument options: pcg_forcing = 5 is not an sbm_pcg_forcing");
    o.pcg_forcing = SBM_PCG_FORCING_EISENSTAT_WALKER;
    static const double bad[] = {1.0, 1e-9, NAN};
    static const char *msg[] = {"argument options: pcg_forcing_max = 1 must be in [pcg_tolerance "
                                "= 1e-08, 1) with the Eisenstat-Walker forcing",
                                "pcg_forcing_max = 1e-09 must be in [pcg_tolerance = 1e-08, 1)",
                                "pcg_forcing_max = nan must be"};
    for (int k = 0; k < 3; k++) {
        o.pcg_forcing_max = bad[k];
        SBM_ASSERT_FAILS(e->ctx, sbm_ba_solve(e->ctx, p, &o, NULL), SBM_ERR_INVALID_ARGUMENT,
                         msg[k]);
        SBM_ASSERT_FAILS(e->ctx, sbm_slam_solve(e->ctx, g, &o, NULL), SBM_ERR_INVALID_ARGUMENT,
                         msg[k]);
    }
    /* with the fixed tolerance the loosest one is not used, nor checked */
    o.pcg_forcing = SBM_PCG_FORCING_FIXED;
    o.pcg_forcing_max = 2.0;
    o.max_iterations = 1;
    o.linear_solver = SBM_LINEAR_PCG;
    SBM_TEST_OK_OR_SKIP(e, sbm_ba_solve(e->ctx, p, &o, NULL));
    sbm_g2o_destroy(g);
    sbm_bal_destroy(p);
}

static void count_pcg(void *user, const sbm_iteration_report *r)
{
    *(long *)user += r->linear_iterations;
}

/* A BAL file solved with each PCG kind, fixed and Eisenstat-Walker: the same final cost to
 * 1e-8, fewer PCG iterations with the forcing. */
static void test_forcing_ba(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const sbm_linear_solver kinds[] = {SBM_LINEAR_PCG, SBM_LINEAR_PCG_MATRIX_FREE};
    for (int k = 0; k < 2; k++) {
        double cost[2];
        long its[2] = {0, 0};
        for (int f = 0; f < 2; f++) {
            sbm_bal_problem *p = NULL;
            if (getenv("SBM_TEST_QUICK")) {
                /* the sanitizer and valgrind runs: a small synthetic problem (problem-21 to
                 * convergence with the fixed tolerance is 1684 PCG iterations) */
                const sbm_bal_generate_options go = sbm_bal_generate_defaults(12, 400, 4, 7);
                SBM_ASSERT_OK(e->host, sbm_bal_generate(e->host, &go, &p));
            } else {
                SBM_ASSERT_OK(e->ctx,
                              sbm_bal_read(e->ctx,
                                           sbm_test_data_path("bal/problem-21-11315-pre.txt"), &p));
            }
            sbm_solver_options o = sbm_solver_default_options();
            o.linear_solver = kinds[k];
            o.pcg_forcing = f ? SBM_PCG_FORCING_EISENSTAT_WALKER : SBM_PCG_FORCING_FIXED;
            o.callback = count_pcg;
            o.user = &its[f];
            sbm_solver_summary s;
            SBM_TEST_OK_OR_SKIP(e, sbm_ba_solve(e->ctx, p, &o, &s));
            assert_true(sbm_stop_reason_converged(s.stop_reason));
            cost[f] = s.final_cost;
            sbm_bal_destroy(p);
        }
        print_message("  %s: fixed %.12e (%ld PCG iterations), Eisenstat-Walker %.12e (%ld)\n",
                      sbm_linear_solver_name(kinds[k]), cost[0], its[0], cost[1], its[1]);
        assert_true(fabs(cost[1] - cost[0]) <= 1e-8 * cost[0]);
        assert_true(its[1] < its[0]);
    }
}

/* SLAM's PCG on a pose graph, likewise. */
static void test_forcing_slam(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    double cost[2];
    long its[2] = {0, 0};
    for (int f = 0; f < 2; f++) {
        sbm_g2o_graph *g = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, sbm_test_data_path("g2o/smallGrid3D.g2o"), &g));
        sbm_solver_options o = sbm_solver_default_options();
        o.linear_solver = SBM_LINEAR_PCG;
        o.pcg_max_iterations = 1000;
        o.pcg_forcing = f ? SBM_PCG_FORCING_EISENSTAT_WALKER : SBM_PCG_FORCING_FIXED;
        o.callback = count_pcg;
        o.user = &its[f];
        sbm_solver_summary s;
        SBM_TEST_OK_OR_SKIP(e, sbm_slam_solve(e->ctx, g, &o, &s));
        assert_true(sbm_stop_reason_converged(s.stop_reason));
        cost[f] = s.final_cost;
        sbm_g2o_destroy(g);
    }
    print_message("  smallGrid3D: fixed %.12e (%ld PCG iterations), Eisenstat-Walker %.12e (%ld)\n",
                  cost[0], its[0], cost[1], its[1]);
    assert_true(fabs(cost[1] - cost[0]) <= 1e-8 * cost[0]);
    assert_true(its[1] < its[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forcing_sequence),
        SBM_TEST_BOTH(test_forcing_options),
        SBM_TEST_BOTH(test_forcing_ba),
        SBM_TEST_BOTH(test_forcing_slam),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
