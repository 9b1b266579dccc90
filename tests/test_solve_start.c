/* SPDX-License-Identifier: BSD-3-Clause */
/* What the solvers refuse before their first step: an initial cost that is not
 * finite (poses, parameters or measurements so large that a squared error overflows) is
 * SBM_ERR_NOT_FINITE naming the edge and its vertices (sbm_slam_solve, both methods) or the
 * observation, camera and point (sbm_ba_solve); the input is unchanged. Files are read from
 * text written here. */
#define _POSIX_C_SOURCE 200809L

#include "test_util.h"

#include <math.h>
#include <string.h>

static void test_slam_cost_not_finite(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const char *path = sbm_test_write_text("big.g2o", "VERTEX_SE2 0 0 0 0\n"
                                                      "VERTEX_SE2 -4 1e308 0 0\n"
                                                      "VERTEX_SE2 2 2 0 0\n"
                                                      "EDGE_SE2 2 0 1 0 0 1 0 0 1 0 1\n"
                                                      "EDGE_SE2 0 -4 1 0 0 1 0 0 1 0 1\n");
    sbm_g2o_graph *g = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, path, &g));
    for (int m = 0; m < 2; m++) {
        sbm_solver_options o = sbm_solver_default_options();
        o.method = m ? SBM_METHOD_GAUSS_NEWTON : SBM_METHOD_LEVENBERG_MARQUARDT;
        sbm_solver_summary s;
        SBM_ASSERT_FAILS(e->ctx, sbm_slam_solve(e->ctx, g, &o, &s), SBM_ERR_NOT_FINITE,
                         "the initial cost is inf: edge 1 (vertex 0 to vertex -4)");
        SBM_ASSERT_FAILS(e->ctx, sbm_slam_solve(e->ctx, g, &o, &s), SBM_ERR_NOT_FINITE,
                         "vertex -4 at (1e+308, 0, ...)");
    }
    assert_true(sbm_g2o_get_info(g).poses[3] == 1e308);
    sbm_g2o_destroy(g);
}

static void test_ba_cost_not_finite(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    /* two cameras, one point, three observations: the third measured at 1e200 pixels */
    const char *path = sbm_test_write_text("big.bal", "2 2 3\n"
                                                      "0 0 0.5 0.5\n"
                                                      "1 0 -0.5 0.5\n"
                                                      "1 1 1e200 0\n"
                                                      "0\n0\n0\n0\n0\n0\n500\n0\n0\n"
                                                      "0\n0\n0\n1\n0\n0\n500\n0\n0\n"
                                                      "0\n0\n-5\n"
                                                      "1\n0\n-6\n");
    sbm_bal_problem *p = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_read(e->ctx, path, &p));
    sbm_solver_options o = sbm_solver_default_options();
    sbm_solver_summary s;
    SBM_ASSERT_FAILS(e->ctx, sbm_ba_solve(e->ctx, p, &o, &s), SBM_ERR_NOT_FINITE,
                     "the initial cost is inf: observation 2 (camera 1, point 1)");
    SBM_ASSERT_FAILS(e->ctx, sbm_ba_solve(e->ctx, p, &o, &s), SBM_ERR_NOT_FINITE,
                     "measurement (1e+200, 0)");
    sbm_bal_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_slam_cost_not_finite),
        SBM_TEST_BOTH(test_ba_cost_not_finite),
    };
    return cmocka_run_group_tests(tests, sbm_test_make_tmp_dir, sbm_test_remove_tmp_dir);
}
