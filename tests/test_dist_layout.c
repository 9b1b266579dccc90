/* SPDX-License-Identifier: BSD-3-Clause */
/* The trajectory layout of the synthetic generator (SBM_BAL_LAYOUT_TRAJECTORY): determinism,
 * exact projections without noise, local visibility (a graph partition shares far fewer points
 * than an index split), the layout's error path, and the distributed solver on it against the
 * one-context solver. */
#define _POSIX_C_SOURCE 200809L

#include "dist_internal.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double rel(double a, double b)
{
    const double d = fabs(a - b), m = fmax(fabs(a), fabs(b));
    return m > 0.0 ? d / m : d;
}

/* ---------------------------------------------------------------------------------------- */
/* The trajectory layout of the generator                                                   */
/* ---------------------------------------------------------------------------------------- */

static void test_generate_trajectory(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_generate_options g = sbm_bal_generate_defaults(60, 600, 3, 9);
    assert_int_equal(g.layout, SBM_BAL_LAYOUT_SPHERE);
    g.layout = SBM_BAL_LAYOUT_TRAJECTORY;
    sbm_bal_problem *a = NULL, *b = NULL, *exact = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &g, &a));
    SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &g, &b));
    const sbm_bal_info ia = sbm_bal_get_info(a), ib = sbm_bal_get_info(b);
    assert_int_equal(ia.observations, 1800);
    /* the same seed, the same problem */
    assert_memory_equal(ia.obs_camera, ib.obs_camera, 1800 * sizeof(int32_t));
    assert_memory_equal(ia.obs_xy, ib.obs_xy, 3600 * sizeof(double));
    assert_memory_equal(ia.camera_params, ib.camera_params, 540 * sizeof(double));
    /* grouped by point, distinct cameras increasing */
    for (int64_t k = 0; k < ia.observations; k++) {
        assert_int_equal(ia.obs_point[k], k / 3);
        if (k % 3) assert_true(ia.obs_camera[k] > ia.obs_camera[k - 1]);
    }
    /* no noise, no perturbation: the observations are the projections (cost 0) */
    g.pixel_noise = 0.0, g.perturbation = 0.0;
    SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &g, &exact));
    double cost = 1.0;
    SBM_ASSERT_OK(e->ctx, sbm_bal_evaluate(e->ctx, exact, NULL, &cost));
    assert_true(cost < 1e-18);
    /* visibility is local: 4 parts grown over the visibility graph share far fewer points than
     * ranges of the (shuffled) camera numbers (half as many at most) */
    int32_t part[60];
    sbm__dist_part sh;
    int64_t shared[2];
    for (int m = 0; m < 2; m++) {
        SBM_ASSERT_OK(e->ctx, sbm__dist_partition(e->ctx, &ia, 4, (sbm_partition_method)m, part));
        shared[m] = 0;
        for (int r = 0; r < 4; r++) {
            SBM_ASSERT_OK(e->ctx, sbm__dist_part_make(e->ctx, &ia, part, r, 4, &sh));
            shared[m] += sh.nshared;
            sbm__dist_part_free(&sh);
        }
    }
    if (!(2 * shared[SBM_PARTITION_GRAPH] < shared[SBM_PARTITION_INDEX]))
        fail_msg("shared points: graph %lld, index %lld", (long long)shared[0], (long long)shared[1]);
    g.layout = (sbm_bal_layout)7;
    sbm_bal_problem *bad = (sbm_bal_problem *)&g;
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_generate(e->ctx, &g, &bad), SBM_ERR_INVALID_ARGUMENT,
                     "layout = 7 (SBM_BAL_LAYOUT_SPHERE 0 or SBM_BAL_LAYOUT_TRAJECTORY 1)");
    assert_null(bad);
    /* a window wider than the loop: every camera may see every point */
    sbm_bal_generate_options small = sbm_bal_generate_defaults(3, 20, 2, 1);
    small.layout = SBM_BAL_LAYOUT_TRAJECTORY;
    sbm_bal_problem *sp = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &small, &sp));
    SBM_ASSERT_OK(e->ctx, sbm_bal_evaluate(e->ctx, sp, NULL, &cost));
    assert_true(isfinite(cost));
    sbm_bal_destroy(sp);
    sbm_bal_destroy(a), sbm_bal_destroy(b), sbm_bal_destroy(exact);
}

/* The distributed solver on the trajectory layout: the same steps as one context. */
static void test_dist_trajectory(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_generate_options g = sbm_bal_generate_defaults(40, 800, 3, 2);
    g.layout = SBM_BAL_LAYOUT_TRAJECTORY;
    sbm_bal_problem *p1 = NULL, *p2 = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &g, &p1));
    SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &g, &p2));
    sbm_solver_options o = sbm_solver_default_options();
    o.max_iterations = 6;
    o.linear_solver = SBM_LINEAR_PCG_MATRIX_FREE;
    o.pcg_tolerance = 1e-12; /* every step solved to 1e-12: the costs agree to 1e-10 */
    o.pcg_forcing = SBM_PCG_FORCING_FIXED;
    o.pcg_max_iterations = 2000;
    sbm_solver_summary s1, s2;
    SBM_ASSERT_OK(e->ctx, sbm_ba_solve(e->ctx, p1, &o, &s1));
    sbm_group *grp = NULL;
    assert_int_equal(sbm_group_create_cpu(4, &grp), SBM_SUCCESS);
    sbm_dist_report r;
    SBM_ASSERT_OK(sbm_group_context(grp, 0), sbm_ba_solve_dist(grp, p2, &o, NULL, &s2, &r));
    assert_int_equal(s1.stop_reason, s2.stop_reason);
    assert_int_equal(s1.iterations, s2.iterations);
    assert_true(rel(s1.final_cost, s2.final_cost) <= 1e-10);
    /* the halo is a small part of MegBA's traffic on a local visibility */
    assert_true(10.0 * r.bytes_per_pcg_iteration < r.megba_bytes_per_pcg_iteration);
    sbm_group_destroy(grp);
    sbm_bal_destroy(p1), sbm_bal_destroy(p2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_CPU(test_generate_trajectory),
        SBM_TEST_CPU(test_dist_trajectory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
