/* SPDX-License-Identifier: BSD-3-Clause */
/* Robust losses (blocks/sbm_geometry.h: sbm__loss_rho, sbm__loss_corrector; Ceres'
 * HuberLoss, CauchyLoss and Corrector) and their options: rho against Ceres' closed forms and
 * hand-computed values, rho' and rho'' against finite differences of rho, Huber's continuity at
 * a^2, no NaN over the accepted scales, the corrector's identities, sbm_loss_name, the defaults
 * and every loss error of sbm__check_solver_options (sbm__check_loss), directly and through
 * sbm_ba_solve and sbm_slam_solve. */
#include "test_util.h"
#include "sbm_geometry.h"
#include "solve_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* rho                                                                                      */
/* ---------------------------------------------------------------------------------------- */

/* Ceres' closed forms (loss_function.cc), written out here (Cauchy's rho in long double). */
static void ceres_rho(int type, double a, double s, double r[3])
{
    if (type == SBM__LOSS_HUBER && s > a * a) {
        r[0] = 2.0 * a * sqrt(s) - a * a;
        r[1] = fmax(DBL_MIN, a / sqrt(s));
        r[2] = -0.5 * (a / sqrt(s)) / s; /* -a s^-1.5 / 2 without overflow in s^1.5 */
    } else if (type == SBM__LOSS_CAUCHY) {
        /* long double: s / a^2 stays finite where a double's overflows (s 1e300, a 1e-100) */
        const long double b = (long double)a * a;
        r[0] = (double)(b * log1pl((long double)s / b));
        r[1] = fmax(DBL_MIN, 1.0 / (1.0 + s / (a * a)));
        r[2] = -1.0 / (a * a * (1.0 + s / (a * a)) * (1.0 + s / (a * a)));
    } else {
        r[0] = s, r[1] = 1.0, r[2] = 0.0;
    }
}

static void assert_rel(double got, double want, double tol, const char *what, int type, double a,
                       double s)
{
    if (!(fabs(got - want) <= tol * fabs(want)) && !(got == want))
        fail_msg("%s of loss %d, a = %.17g, s = %.17g: %.17g, expected %.17g", what, type, a, s,
                 got, want);
}

static const int loss_types[] = {SBM__LOSS_NONE, SBM__LOSS_HUBER, SBM__LOSS_CAUCHY};

/* rho, rho', rho'' against Ceres' formulas at s = 0, below, at and above a^2, far above, huge
 * s, for ordinary and tiny scales; and at points computed by hand. */
static void test_loss_closed_forms(void **state)
{
    (void)state;
    assert_int_equal(SBM__LOSS_NONE, SBM_LOSS_NONE);
    assert_int_equal(SBM__LOSS_HUBER, SBM_LOSS_HUBER);
    assert_int_equal(SBM__LOSS_CAUCHY, SBM_LOSS_CAUCHY);
    const double scales[] = {1.0, 0.5, 3.0, 1e-6, 1e-100, SBM_LOSS_SCALE_MIN, 1e100};
    const double ratios[] = {0.0, 1e-3, 0.25, 1.0, 1.0 + 1e-9, 4.0, 1e6, 1e100};
    for (int t = 0; t < 3; t++)
        for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++)
            for (size_t j = 0; j < sizeof ratios / sizeof ratios[0] + 1; j++) {
                const double a = scales[i];
                const double s = j < sizeof ratios / sizeof ratios[0] ? ratios[j] * a * a : 1e300;
                double got[3], want[3];
                sbm__loss_rho(loss_types[t], a, s, got);
                ceres_rho(loss_types[t], a, s, want);
                assert_rel(got[0], want[0], 1e-14, "rho", loss_types[t], a, s);
                assert_rel(got[1], want[1], 1e-14, "rho'", loss_types[t], a, s);
                assert_rel(got[2], want[2], 1e-13, "rho''", loss_types[t], a, s);
                /* a robust loss lies below the square and weighs down: 0 < rho' <= 1 */
                assert_true(got[0] <= s * (1.0 + 1e-15) && got[0] >= 0.0);
                assert_true(got[1] > 0.0 && got[1] <= 1.0 && got[2] <= 0.0);
            }
    /* by hand: Huber a = 2, s = 9: rho = 2*2*3 - 4, rho' = 2/3, rho'' = -2/(2*27) */
    double r[3];
    sbm__loss_rho(SBM__LOSS_HUBER, 2.0, 9.0, r);
    assert_rel(r[0], 8.0, 1e-15, "rho", 1, 2.0, 9.0);
    assert_rel(r[1], 2.0 / 3.0, 1e-15, "rho'", 1, 2.0, 9.0);
    assert_rel(r[2], -1.0 / 27.0, 1e-15, "rho''", 1, 2.0, 9.0);
    /* the quadratic side, boundary included: rho = s exactly */
    sbm__loss_rho(SBM__LOSS_HUBER, 2.0, 4.0, r);
    assert_true(r[0] == 4.0 && r[1] == 1.0 && r[2] == 0.0);
    /* Cauchy a = 1, s = e - 1: rho = log(e) = 1, rho' = 1/e, rho'' = -1/e^2 */
    const double e = exp(1.0);
    sbm__loss_rho(SBM__LOSS_CAUCHY, 1.0, e - 1.0, r);
    assert_rel(r[0], 1.0, 1e-15, "rho", 2, 1.0, e - 1.0);
    assert_rel(r[1], 1.0 / e, 1e-15, "rho'", 2, 1.0, e - 1.0);
    assert_rel(r[2], -1.0 / (e * e), 1e-15, "rho''", 2, 1.0, e - 1.0);
    /* Cauchy a = 3, s = 27: rho = 9 log 4, rho' = 1/4, rho'' = -1/(9*16) */
    sbm__loss_rho(SBM__LOSS_CAUCHY, 3.0, 27.0, r);
    assert_rel(r[0], 9.0 * log(4.0), 1e-15, "rho", 2, 3.0, 27.0);
    assert_rel(r[1], 0.25, 1e-15, "rho'", 2, 3.0, 27.0);
    assert_rel(r[2], -1.0 / 144.0, 1e-15, "rho''", 2, 3.0, 27.0);
    /* s = 0: every loss is the square there (rho = 0, rho' = 1); Cauchy's rho'' = -1/a^2 */
    for (int t = 0; t < 3; t++) {
        sbm__loss_rho(loss_types[t], 0.5, 0.0, r);
        assert_true(r[0] == 0.0 && r[1] == 1.0);
        assert_true(r[2] == (loss_types[t] == SBM__LOSS_CAUCHY ? -4.0 : 0.0));
    }
    /* no loss ignores the scale, whatever it holds */
    sbm__loss_rho(SBM__LOSS_NONE, NAN, 5.0, r);
    assert_true(r[0] == 5.0 && r[1] == 1.0 && r[2] == 0.0);
}

/* rho' and rho'' against central differences of rho (away from Huber's kink, where rho'' is
 * not defined); the step h = 1e-4 s keeps the differences' truncation error (h^2 rho''' / 6
 * relative to rho') near 1e-9 and their rounding (eps rho / h^2 for rho'') below 1e-5. */
static void test_loss_derivatives(void **state)
{
    (void)state;
    const double scales[] = {0.5, 1.0, 3.0, 1e-3};
    const double ratios[] = {0.3, 0.9, 1.1, 2.0, 10.0, 1e3};
    for (int t = 0; t < 3; t++)
        for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++)
            for (size_t j = 0; j < sizeof ratios / sizeof ratios[0]; j++) {
                const double a = scales[i], s = ratios[j] * a * a, h = 1e-4 * s;
                double r[3], rp[3], rm[3];
                sbm__loss_rho(loss_types[t], a, s, r);
                sbm__loss_rho(loss_types[t], a, s + h, rp);
                sbm__loss_rho(loss_types[t], a, s - h, rm);
                const double d1 = (rp[0] - rm[0]) / (2.0 * h);
                const double d2 = (rp[0] - 2.0 * r[0] + rm[0]) / (h * h);
                if (fabs(d1 - r[1]) > 1e-7 * r[1])
                    fail_msg("loss %d, a = %g, s = %g: rho' %.17g, central difference %.17g",
                             loss_types[t], a, s, r[1], d1);
                /* rho'' on the scale of rho' / s, the size of the curvature terms it enters */
                if (fabs(d2 - r[2]) > 1e-4 * (fabs(r[2]) + r[1] / s))
                    fail_msg("loss %d, a = %g, s = %g: rho'' %.17g, second difference %.17g",
                             loss_types[t], a, s, r[2], d2);
            }
}

/* Huber is C1 at s = a^2: rho and rho' meet from both sides (rho'' jumps from 0 to -1/(2a^2),
 * as Ceres' does). */
static void test_loss_huber_continuity(void **state)
{
    (void)state;
    const double scales[] = {1e-3, 0.5, 1.0, 7.0};
    for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++) {
        const double a = scales[i], b = a * a;
        for (double d = 1e-3; d >= 1e-12; d *= 1e-3) {
            double lo[3], hi[3], at[3];
            sbm__loss_rho(SBM__LOSS_HUBER, a, b * (1.0 - d), lo);
            sbm__loss_rho(SBM__LOSS_HUBER, a, b * (1.0 + d), hi);
            sbm__loss_rho(SBM__LOSS_HUBER, a, b, at);
            assert_true(at[0] == b && at[1] == 1.0);
            /* rho = b (1 -+ d) on either side to first order; rho' = 1 - d/2 above */
            if (fabs(lo[0] - b) > 1.01 * d * b || fabs(hi[0] - b) > 1.01 * d * b ||
                fabs(hi[1] - 1.0) > 0.51 * d || lo[1] != 1.0)
                fail_msg("Huber a = %g not continuous at a^2 (d = %g): rho %.17g | %.17g, rho' "
                         "%.17g | %.17g", a, d, lo[0], hi[0], lo[1], hi[1]);
            assert_rel(hi[2], -1.0 / (2.0 * b), 2.0 * d, "rho'' just above a^2", 1, a, b);
        }
    }
}

/* Over the accepted scales [SBM_LOSS_SCALE_MIN, SBM_LOSS_SCALE_MAX] no s >= 0 (infinity
 * included) gives a NaN; just outside, Ceres' Cauchy formula does (0 * inf), which is why
 * sbm__check_solver_options refuses those scales. */
static void test_loss_no_nan(void **state)
{
    (void)state;
    const double scales[] = {SBM_LOSS_SCALE_MIN, 1e-80, 1.0, 1e80, SBM_LOSS_SCALE_MAX};
    const double ss[] = {0.0, 4.9e-324, 1e-300, 1.0, 1e300, DBL_MAX, INFINITY};
    for (int t = 0; t < 3; t++)
        for (size_t i = 0; i < sizeof scales / sizeof scales[0]; i++)
            for (size_t j = 0; j < sizeof ss / sizeof ss[0]; j++) {
                double r[3];
                sbm__loss_rho(loss_types[t], scales[i], ss[j], r);
                if (isnan(r[0]) || isnan(r[1]) || isnan(r[2]) || !(r[1] > 0.0) || r[2] > 0.0)
                    fail_msg("loss %d, a = %g, s = %g: rho = {%g, %g, %g}", loss_types[t],
                             scales[i], ss[j], r[0], r[1], r[2]);
                double sr, rs, al;
                sbm__loss_corrector(ss[j], r, &sr, &rs, &al);
                assert_false(isnan(sr) || isnan(rs) || isnan(al));
            }
    double r[3];
    sbm__loss_rho(SBM__LOSS_CAUCHY, 1e-200, 0.0, r);
    assert_true(isnan(r[0]));
    sbm__loss_rho(SBM__LOSS_CAUCHY, 1e200, 1.0, r);
    assert_true(isnan(r[0]));
    /* rho' is held at DBL_MIN, as Ceres holds it, where it would underflow */
    sbm__loss_rho(SBM__LOSS_HUBER, 1.0, INFINITY, r);
    assert_true(r[1] == DBL_MIN);
    sbm__loss_rho(SBM__LOSS_CAUCHY, 1.0, INFINITY, r);
    assert_true(r[1] == DBL_MIN);
}

/* ---------------------------------------------------------------------------------------- */
/* Corrector                                                                                */
/* ---------------------------------------------------------------------------------------- */

/* J'^T J' and J'^T r' of the corrected block (r' = rs r, J' = sr (J - al r r^T J)) against
 * rho' J^T J + c J^T r r^T J and rho' J^T r: c = 2 rho'' where the corrector matches rho to
 * second order (rho'' > 0), 0 where it applies sqrt(rho') alone. J is m x n column-major. */
static void check_corrected(const double *r, const double *J, int m, int n, const double rho[3],
                            double c, const char *what)
{
    double s = 0.0;
    for (int i = 0; i < m; i++) s += r[i] * r[i];
    double sr, rs, al;
    sbm__loss_corrector(s, rho, &sr, &rs, &al);
    double rc[8], Jc[8 * 9], Jtr[9], rtJ[9]; /* m <= 8, n <= 9 */
    for (int k = 0; k < n; k++) {
        rtJ[k] = 0.0;
        for (int i = 0; i < m; i++) rtJ[k] += r[i] * J[i + k * m];
        Jtr[k] = rtJ[k];
    }
    for (int i = 0; i < m; i++) rc[i] = rs * r[i];
    for (int k = 0; k < n; k++)
        for (int i = 0; i < m; i++) Jc[i + k * m] = sr * (J[i + k * m] - al * r[i] * rtJ[k]);
    for (int k = 0; k < n; k++) {
        double g = 0.0, mag = 0.0;
        for (int i = 0; i < m; i++) g += Jc[i + k * m] * rc[i], mag += fabs(J[i + k * m] * r[i]);
        if (fabs(g - rho[1] * Jtr[k]) > 1e-13 * rho[1] * mag)
            fail_msg("%s: (J'^T r')[%d] = %.17g, rho' (J^T r) = %.17g", what, k, g,
                     rho[1] * Jtr[k]);
        for (int l = 0; l < n; l++) {
            double h = 0.0, jj = 0.0, jm = 0.0;
            for (int i = 0; i < m; i++) {
                h += Jc[i + k * m] * Jc[i + l * m];
                jj += J[i + k * m] * J[i + l * m];
                jm += fabs(J[i + k * m] * J[i + l * m]);
            }
            const double want = rho[1] * jj + c * Jtr[k] * Jtr[l];
            const double scale = rho[1] * jm + fabs(c) * fabs(Jtr[k] * Jtr[l]) + fabs(want);
            if (fabs(h - want) > 1e-12 * scale)
                fail_msg("%s: (J'^T J')[%d,%d] = %.17g, expected %.17g", what, k, l, h, want);
        }
    }
}

static void test_loss_corrector(void **state)
{
    (void)state;
    sbm_test_rng g = sbm_test_rng_seed(14);
    double r[8], J[64], rho[3], sr, rs, al;
    /* rho'' <= 0: the scale is sqrt(rho') for residual and Jacobian alike, no rank-one term */
    const double ss[] = {0.0, 0.3, 1.0, 2.0, 50.0};
    for (int t = 0; t < 3; t++)
        for (size_t j = 0; j < sizeof ss / sizeof ss[0]; j++) {
            sbm__loss_rho(loss_types[t], 1.0, ss[j], rho);
            sbm__loss_corrector(ss[j], rho, &sr, &rs, &al);
            assert_true(sr == sqrt(rho[1]) && rs == sr && al == 0.0);
        }
    /* s = 0 with rho'' > 0: Ceres takes the first-order branch too (alpha / s undefined) */
    const double up[3] = {0.0, 0.8, 0.1};
    sbm__loss_corrector(0.0, up, &sr, &rs, &al);
    assert_true(sr == sqrt(0.8) && rs == sr && al == 0.0);
    /* Ceres' identities on random blocks: 2x9 and 2x3 (BA), 3x3 and 6x6 (SLAM), 1x1 */
    const int dims[][2] = {{2, 9}, {2, 3}, {3, 3}, {6, 6}, {1, 1}, {4, 2}};
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
        for (int rep = 0; rep < 20; rep++) {
            const int m = dims[d][0], n = dims[d][1];
            for (int i = 0; i < m; i++) r[i] = 3.0 * sbm_test_rng_value(&g);
            for (int i = 0; i < m * n; i++) J[i] = sbm_test_rng_value(&g);
            double s = 0.0;
            for (int i = 0; i < m; i++) s += r[i] * r[i];
            /* synthetic rho'' > 0: the second-order branch */
            const double syn[][3] = {{s, 1.0, 0.1}, {s, 0.7, 0.05}, {s, 0.2, 3.0}};
            for (int k = 0; k < 3; k++)
                check_corrected(r, J, m, n, syn[k], 2.0 * syn[k][2], "synthetic rho'' > 0");
            /* the real losses: first order, J'^T J' = rho' J^T J */
            for (int t = 1; t < 3; t++) {
                sbm__loss_rho(loss_types[t], 0.5 + (double)rep / 10.0, s, rho);
                check_corrected(r, J, m, n, rho, 0.0, t == 1 ? "Huber" : "Cauchy");
            }
        }
}

/* ---------------------------------------------------------------------------------------- */
/* Options                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static void test_loss_names_defaults(void **state)
{
    (void)state;
    assert_string_equal(sbm_loss_name(SBM_LOSS_NONE), "none");
    assert_string_equal(sbm_loss_name(SBM_LOSS_HUBER), "huber");
    assert_string_equal(sbm_loss_name(SBM_LOSS_CAUCHY), "cauchy");
    assert_string_equal(sbm_loss_name((sbm_loss_type)3), "unknown loss");
    assert_string_equal(sbm_loss_name((sbm_loss_type)-1), "unknown loss");
    const sbm_solver_options o = sbm_solver_default_options();
    assert_int_equal(o.loss.type, SBM_LOSS_NONE);
    assert_true(o.loss.scale == 1.0);
}

/* One bad loss: the options' type and scale, the status-message substrings expected. */
typedef struct bad_loss {
    int type;
    double scale;
    const char *msg;
} bad_loss;

static const bad_loss bad_losses[] = {
    {3, 1.0, "argument options: loss.type = 3 is not an sbm_loss_type"},
    {-1, 1.0, "argument options: loss.type = -1 is not an sbm_loss_type"},
    {SBM_LOSS_HUBER, 0.0, "argument options: loss.scale = 0 must be finite and > 0 (loss huber)"},
    {SBM_LOSS_CAUCHY, -1.0, "loss.scale = -1 must be finite and > 0 (loss cauchy)"},
    {SBM_LOSS_HUBER, NAN, "loss.scale = nan must be finite and > 0 (loss huber)"},
    {SBM_LOSS_CAUCHY, INFINITY, "loss.scale = inf must be finite and > 0 (loss cauchy)"},
    {SBM_LOSS_HUBER, -INFINITY, "loss.scale = -inf must be finite and > 0"},
    {SBM_LOSS_CAUCHY, 1e-151, "loss.scale = 1e-151 is outside [1e-06, 1e+150] (loss cauchy"},
    {SBM_LOSS_CAUCHY, 9.9e-7, "loss.scale = 9.9e-07 is outside [1e-06, 1e+150] (loss cauchy"},
    {SBM_LOSS_HUBER, 1e-150, "loss.scale = 1e-150 is outside [1e-06, 1e+150] (loss huber"},
    {SBM_LOSS_HUBER, 2e150, "loss.scale = 2e+150 is outside [1e-06, 1e+150] (loss huber"},
    {SBM_LOSS_CAUCHY, 4.9e-324, "is outside [1e-06, 1e+150]"},
};
#define N_BAD_LOSSES (sizeof bad_losses / sizeof bad_losses[0])

static sbm_solver_options with_loss(int type, double scale)
{
    sbm_solver_options o = sbm_solver_default_options();
    o.loss.type = (sbm_loss_type)type;
    o.loss.scale = scale;
    return o;
}

static void test_loss_option_checks(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (size_t k = 0; k < N_BAD_LOSSES; k++) {
        const sbm_solver_options o = with_loss(bad_losses[k].type, bad_losses[k].scale);
        SBM_ASSERT_FAILS(e->host, sbm__check_solver_options(e->host, &o),
                         SBM_ERR_INVALID_ARGUMENT, bad_losses[k].msg);
    }
    /* sbm__check_loss names the loss as its caller does */
    const sbm_loss l0 = {SBM_LOSS_HUBER, 0.0}, lt = {(sbm_loss_type)5, 1.0};
    const sbm_loss lr = {SBM_LOSS_CAUCHY, 1e151};
    SBM_ASSERT_FAILS(e->host, sbm__check_loss(e->host, "loss", &l0), SBM_ERR_INVALID_ARGUMENT,
                     "argument loss.scale = 0 must be finite and > 0 (loss huber)");
    SBM_ASSERT_FAILS(e->host, sbm__check_loss(e->host, "loss", &lt), SBM_ERR_INVALID_ARGUMENT,
                     "argument loss.type = 5 is not an sbm_loss_type");
    SBM_ASSERT_FAILS(e->host, sbm__check_loss(e->host, "loss", &lr), SBM_ERR_INVALID_ARGUMENT,
                     "argument loss.scale = 1e+151 is outside [1e-06, 1e+150]");
    /* the ends of the range, and no loss with any scale (ignored) */
    const bad_loss good[] = {{SBM_LOSS_HUBER, SBM_LOSS_SCALE_MIN, NULL},
                             {SBM_LOSS_CAUCHY, SBM_LOSS_SCALE_MAX, NULL},
                             {SBM_LOSS_CAUCHY, 1.5, NULL},
                             {SBM_LOSS_NONE, 0.0, NULL},
                             {SBM_LOSS_NONE, NAN, NULL},
                             {SBM_LOSS_NONE, -INFINITY, NULL}};
    for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
        const sbm_solver_options o = with_loss(good[k].type, good[k].scale);
        SBM_ASSERT_OK(e->host, sbm__check_solver_options(e->host, &o));
    }
}

/* The public solvers check the loss before anything else: the error names the solver, and the
 * problem (the graph) keeps its parameters. */
static void test_loss_solver_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_problem *p = NULL;
    const sbm_bal_generate_options go = sbm_bal_generate_defaults(3, 12, 2, 7);
    SBM_ASSERT_OK(e->host, sbm_bal_generate(e->host, &go, &p));
    const sbm_bal_info pi = sbm_bal_get_info(p);
    const size_t ncp = (size_t)(9 * pi.cameras), npp = (size_t)(3 * pi.points);
    double *cams = malloc(ncp * sizeof(double)), *pts = malloc(npp * sizeof(double));
    memcpy(cams, pi.camera_params, ncp * sizeof(double));
    memcpy(pts, pi.point_params, npp * sizeof(double));

    const char *path = sbm_test_data_path("g2o/tinyGrid3D.g2o");
    sbm_g2o_graph *g = NULL;
    SBM_ASSERT_OK(e->host, sbm_g2o_read(e->host, path, &g));
    const sbm_g2o_info gi = sbm_g2o_get_info(g);
    const size_t nposes = (size_t)(gi.pose_size * gi.vertices);
    double *poses = malloc(nposes * sizeof(double));
    memcpy(poses, gi.poses, nposes * sizeof(double));

    char want[2][200];
    for (size_t k = 0; k < N_BAD_LOSSES; k++) {
        const sbm_solver_options o = with_loss(bad_losses[k].type, bad_losses[k].scale);
        const char *msg = bad_losses[k].msg;
        const int whole = strncmp(msg, "argument", 8) == 0; /* the message from its start */
        snprintf(want[0], sizeof want[0], "%s%s", whole ? "sbm_ba_solve: " : "", msg);
        snprintf(want[1], sizeof want[1], "%s%s", whole ? "sbm_slam_solve: " : "", msg);
        sbm_solver_summary sum;
        SBM_ASSERT_FAILS(e->ctx, sbm_ba_solve(e->ctx, p, &o, &sum), SBM_ERR_INVALID_ARGUMENT,
                         want[0]);
        SBM_ASSERT_FAILS(e->ctx, sbm_ba_solve(e->ctx, p, &o, NULL), SBM_ERR_INVALID_ARGUMENT,
                         want[0]);
        SBM_ASSERT_FAILS(e->ctx, sbm_slam_solve(e->ctx, g, &o, &sum), SBM_ERR_INVALID_ARGUMENT,
                         want[1]);
        assert_memory_equal(pi.camera_params, cams, ncp * sizeof(double));
        assert_memory_equal(pi.point_params, pts, npp * sizeof(double));
        assert_memory_equal(gi.poses, poses, nposes * sizeof(double));
    }
    free(cams), free(pts), free(poses);
    sbm_g2o_destroy(g);
    sbm_bal_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loss_closed_forms),
        cmocka_unit_test(test_loss_derivatives),
        cmocka_unit_test(test_loss_huber_continuity),
        cmocka_unit_test(test_loss_no_nan),
        cmocka_unit_test(test_loss_corrector),
        cmocka_unit_test(test_loss_names_defaults),
        SBM_TEST_CPU(test_loss_option_checks),
        SBM_TEST_BOTH(test_loss_solver_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
