/* SPDX-License-Identifier: BSD-3-Clause */
/* The BA linearisation's transfers (a linearisation, a cost, a damping and a predicted
 * decrease move only scalars between host and device) and its error paths: the loss setter,
 * problems that are not the system's, a non-finite prediction (refused, the system unchanged,
 * the observation, camera and point named) and an overflowing Jacobian (the system must be
 * linearised again). The values themselves: tests/test_ba_lin.c. Its problems are small (at
 * most 1600 observations), so SBM_TEST_QUICK (the sanitizer runs) changes nothing here. */
#define _POSIX_C_SOURCE 200809L

#include "ba_lin_check.h"

#include <math.h>
#include <stdio.h>

/* One linearisation, one cost, one damping and one predicted decrease move only scalars. */
static void test_lin_transfers(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    sbm_bal_generate_options o = sbm_bal_generate_defaults(20, 400, 4, 3);
    sbm_bal_problem *p = NULL;
    SBM_ASSERT_OK(ctx, sbm_bal_generate(ctx, &o, &p));
    sbm_ba_system *s = NULL;
    SBM_ASSERT_OK(ctx, sbm_ba_system_create(ctx, p, &s));
    const sbm_loss cauchy = {SBM_LOSS_CAUCHY, 2.0};
    SBM_ASSERT_OK(ctx, sbm_ba_system_set_loss(ctx, s, &cauchy));
    const int64_t n = sbm__ba_nparams(s);
    double *d = sbm__vec_alloc(ctx, n, "test parameters"), *step = sbm__vec_alloc(ctx, n, "step");
    assert_true(d && step);
    SBM_ASSERT_OK(ctx, sbm__ba_params_upload(ctx, s, p, d));
    SBM_ASSERT_OK(ctx, sbm__vec_zero(ctx, step, n));
    for (int round = 0; round < 2; round++) {
        sbm__stats_reset(ctx);
        SBM_TEST_OK_OR_SKIP(e, sbm__ba_linearize_at(ctx, s, d));
        sbm__stats st = sbm__stats_get(ctx);
        assert_true(st.h2d_copies == 0 && st.d2h_copies <= 1 && st.d2h_bytes <= 32);
        if (e->backend != SBM_BACKEND_CPU && round == 1) assert_true(st.allocs == 0);
        sbm__stats_reset(ctx);
        double c = 0.0, pr = 1.0;
        SBM_ASSERT_OK(ctx, sbm__ba_cost_at(ctx, s, d, &c));
        st = sbm__stats_get(ctx);
        assert_true(st.h2d_copies == 0 && st.d2h_copies <= 1 && st.d2h_bytes <= 8);
        /* bitwise the linearisation's cost: the same expressions, uncontracted on every
         * backend (cuda_ba.cu is compiled with -fmad=false), summed in the same order */
        assert_true(c == sbm_ba_system_get_info(s).cost);
        sbm__stats_reset(ctx);
        SBM_ASSERT_OK(ctx, sbm_ba_set_damping(ctx, s, 0.5));
        SBM_ASSERT_OK(ctx, sbm__ba_predicted_decrease(ctx, s, step, 0.5, &pr));
        st = sbm__stats_get(ctx);
        assert_true(st.h2d_copies == 0 && st.d2h_copies <= 1 && st.d2h_bytes <= 8);
        assert_true(pr == 0.0);
    }
    /* the parameters back into a problem: one download */
    sbm_bal_problem *q = NULL;
    SBM_ASSERT_OK(ctx, sbm_bal_generate(ctx, &o, &q));
    memset(sbm_bal_get_info(q).camera_params, 0, 9 * 20 * sizeof(double));
    SBM_ASSERT_OK(ctx, sbm__ba_params_download(ctx, s, d, q));
    assert_memory_equal(sbm_bal_get_info(q).camera_params, sbm_bal_get_info(p).camera_params,
                        9 * 20 * sizeof(double));
    assert_memory_equal(sbm_bal_get_info(q).point_params, sbm_bal_get_info(p).point_params,
                        3 * 400 * sizeof(double));
    sbm__free(ctx, d), sbm__free(ctx, step);
    sbm_ba_system_destroy(s);
    sbm_bal_destroy(p), sbm_bal_destroy(q);
}

static void test_lin_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    sbm_bal_generate_options o = sbm_bal_generate_defaults(4, 9, 3, 12);
    sbm_bal_problem *p = NULL, *q = NULL;
    SBM_ASSERT_OK(ctx, sbm_bal_generate(ctx, &o, &p));
    sbm_ba_system *s = NULL;
    SBM_ASSERT_OK(ctx, sbm_ba_system_create(ctx, p, &s));

    /* the loss setter */
    sbm_loss l = {SBM_LOSS_HUBER, 0.0};
    SBM_ASSERT_FAILS(ctx, sbm_ba_system_set_loss(ctx, NULL, &l), SBM_ERR_NULL_ARGUMENT, "argument system is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_ba_system_set_loss(ctx, s, NULL), SBM_ERR_NULL_ARGUMENT, "sbm_ba_system_set_loss: argument loss is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_ba_system_set_loss(ctx, s, &l), SBM_ERR_INVALID_ARGUMENT,
                     "sbm_ba_system_set_loss: argument loss.scale = 0 must be finite and > 0 (loss huber)");
    l.scale = -1.0;
    SBM_ASSERT_FAILS(ctx, sbm_ba_system_set_loss(ctx, s, &l), SBM_ERR_INVALID_ARGUMENT, "scale = -1");
    l.type = SBM_LOSS_CAUCHY, l.scale = INFINITY;
    SBM_ASSERT_FAILS(ctx, sbm_ba_system_set_loss(ctx, s, &l), SBM_ERR_INVALID_ARGUMENT, "loss.scale = inf must be finite and > 0 (loss cauchy)");
    l.scale = NAN;
    SBM_ASSERT_FAILS(ctx, sbm_ba_system_set_loss(ctx, s, &l), SBM_ERR_INVALID_ARGUMENT, "scale = nan");
    l.type = (sbm_loss_type)7, l.scale = 1.0;
    SBM_ASSERT_FAILS(ctx, sbm_ba_system_set_loss(ctx, s, &l), SBM_ERR_INVALID_ARGUMENT,
                     "argument loss.type = 7 is not an sbm_loss_type");
    assert_int_equal(sbm_ba_system_set_loss(NULL, s, &l), SBM_ERR_NULL_ARGUMENT);
    l.type = SBM_LOSS_NONE, l.scale = 0.0; /* no scale without a loss */
    SBM_ASSERT_OK(ctx, sbm_ba_system_set_loss(ctx, s, &l));
    /* the same check of the solver's options */
    sbm_solver_options so = sbm_solver_default_options();
    so.loss.type = (sbm_loss_type)9;
    SBM_ASSERT_FAILS(ctx, sbm_ba_solve(ctx, p, &so, NULL), SBM_ERR_INVALID_ARGUMENT,
                     "sbm_ba_solve: argument options: loss.type = 9 is not an sbm_loss_type");
    so.loss.type = SBM_LOSS_HUBER, so.loss.scale = -2.0;
    SBM_ASSERT_FAILS(ctx, sbm_ba_solve(ctx, p, &so, NULL), SBM_ERR_INVALID_ARGUMENT,
                     "argument options: loss.scale = -2 must be finite and > 0 (loss huber)");

    /* problems that are not the system's */
    o = sbm_bal_generate_defaults(5, 9, 3, 12);
    SBM_ASSERT_OK(ctx, sbm_bal_generate(ctx, &o, &q));
    SBM_ASSERT_FAILS(ctx, sbm_ba_linearize(ctx, s, q), SBM_ERR_DIMENSION_MISMATCH,
                     "argument problem has 5 cameras, 9 points, 27 observations; the system was made for 4, 9, 27");
    sbm_bal_destroy(q);
    o = sbm_bal_generate_defaults(4, 9, 3, 13);
    SBM_ASSERT_OK(ctx, sbm_bal_generate(ctx, &o, &q));
    SBM_ASSERT_FAILS(ctx, sbm_ba_linearize(ctx, s, q), SBM_ERR_INVALID_ARGUMENT,
                     "is not the one the system was made with");
    sbm_bal_destroy(q);
    SBM_ASSERT_FAILS(ctx, sbm_ba_linearize(ctx, s, NULL), SBM_ERR_NULL_ARGUMENT, "argument problem is NULL");

    /* a non-finite prediction: refused, the system unchanged */
    SBM_TEST_OK_OR_SKIP(e, sbm_ba_linearize(ctx, s, p));
    lin_got before = fetch(ctx, s);
    sbm_bal_info pi = sbm_bal_get_info(p);
    /* the first observation k > 0 that is its point's first (the point made bad must not be
     * seen before it) */
    int64_t k = 1;
    for (;; k++) {
        int64_t t = 0;
        while (t < k && pi.obs_point[t] != pi.obs_point[k]) t++;
        if (t == k) break;
    }
    const int c5 = pi.obs_camera[k], j5 = pi.obs_point[k];
    const double saved = pi.point_params[3 * j5 + 1];
    pi.point_params[3 * j5 + 1] = NAN;
    char msg[200];
    snprintf(msg, sizeof msg, "sbm_ba_linearize: observation %d (camera %d, point %d): the prediction is not finite", (int)k, c5, j5);
    SBM_ASSERT_FAILS(ctx, sbm_ba_linearize(ctx, s, p), SBM_ERR_NOT_FINITE, msg);
    lin_got after = fetch(ctx, s);
    assert_same(&before, &after, s, "after a refused linearisation");
    got_free(&after);
    /* the same at device parameters; the cost there is +inf, not an error */
    const int64_t n = sbm__ba_nparams(s);
    double *d = sbm__vec_alloc(ctx, n, "test parameters");
    assert_non_null(d);
    SBM_ASSERT_OK(ctx, sbm__ba_params_upload(ctx, s, p, d));
    ctx->fn = "the contract"; /* internal calls keep the caller's name */
    SBM_ASSERT_FAILS(ctx, sbm__ba_linearize_at(ctx, s, d), SBM_ERR_NOT_FINITE, msg + strlen("sbm_ba_linearize: "));
    double c = 0.0;
    SBM_ASSERT_OK(ctx, sbm__ba_cost_at(ctx, s, d, &c));
    assert_true(isinf(c) && c > 0);
    pi.point_params[3 * j5 + 1] = saved;
    SBM_ASSERT_OK(ctx, sbm_ba_set_damping(ctx, s, 1.0));

    /* a Jacobian that overflows with a finite prediction: camera c5 at the origin without
     * rotation or distortion, its point 1e-200 in front of it and 1e-50 aside */
    double cam[9], X[3];
    memcpy(cam, pi.camera_params + 9 * c5, sizeof cam);
    memcpy(X, pi.point_params + 3 * j5, sizeof X);
    const double bad_cam[9] = {0, 0, 0, 0, 0, 0, 1.0, 0, 0}, bad_X[3] = {1e-50, 0, 1e-200};
    memcpy(pi.camera_params + 9 * c5, bad_cam, sizeof cam);
    memcpy(pi.point_params + 3 * j5, bad_X, sizeof X);
    snprintf(msg, sizeof msg, "observation %d (camera %d, point %d): the Jacobian is not finite", (int)k, c5, j5);
    SBM_ASSERT_FAILS(ctx, sbm_ba_linearize(ctx, s, p), SBM_ERR_NOT_FINITE, msg);
    SBM_ASSERT_FAILS(ctx, sbm_ba_set_damping(ctx, s, 1.0), SBM_ERR_INVALID_ARGUMENT, "its last linearisation failed");
    sbm_cbc *S = NULL;
    SBM_ASSERT_FAILS(ctx, sbm_ba_system_reduce(ctx, s, &S, NULL), SBM_ERR_INVALID_ARGUMENT, "linearise it again");
    memcpy(pi.camera_params + 9 * c5, cam, sizeof cam);
    memcpy(pi.point_params + 3 * j5, X, sizeof X);
    SBM_ASSERT_OK(ctx, sbm_ba_linearize(ctx, s, p));
    after = fetch(ctx, s);
    assert_same(&before, &after, s, "linearised again");
    SBM_ASSERT_OK(ctx, sbm_ba_set_damping(ctx, s, 1.0));
    got_free(&after), got_free(&before);
    sbm__free(ctx, d);
    sbm_ba_system_destroy(s);
    sbm_bal_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_lin_transfers),
        SBM_TEST_BOTH(test_lin_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
