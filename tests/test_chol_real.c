/* SPDX-License-Identifier: BSD-3-Clause */
/* Sparse block Cholesky (sbm_chol_*) on real matrices: Lambda of g2o graphs and S of a BAL
 * problem, by backward error, against the dense reference where small, and on a device against
 * the CPU backend. */
#include "chol_test_common.h"

/* ---------------------------------------------------------------------------------------- */
/* Real matrices                                                                            */
/* ---------------------------------------------------------------------------------------- */

/* Normwise backward error |A x - b|_inf / (|A|_inf |x|_inf + |b|_inf) of x for the symmetric A
 * given by its upper block triangle (host matrix). */
static double backward_error(const sbm_cbc *H, const double *x, const double *bvec)
{
    const sbm_cbc_info hi = sbm_cbc_get_info(H);
    const int64_t b = hi.r, n = hi.nbc * b;
    double *r = calloc((size_t)n + 1, sizeof(double)), *rowabs = calloc((size_t)n + 1, sizeof(double));
    for (int64_t j = 0; j < hi.nbc; j++)
        for (int64_t p = hi.colptr[j]; p < hi.colptr[j + 1]; p++) {
            const int64_t i = hi.rowind[p];
            const double *v = hi.values + p * b * b;
            for (int64_t c = 0; c < b; c++)
                for (int64_t q = 0; q < b; q++) {
                    const double a = v[q + c * b];
                    r[i * b + q] += a * x[j * b + c];
                    rowabs[i * b + q] += fabs(a);
                    if (i != j) {
                        r[j * b + c] += a * x[i * b + q];
                        rowabs[j * b + c] += fabs(a);
                    }
                }
        }
    double rn = 0, an = 0, xn = 0, bn = 0;
    for (int64_t i = 0; i < n; i++) {
        rn = fmax(rn, fabs(r[i] - bvec[i]));
        an = fmax(an, rowabs[i]);
        xn = fmax(xn, fabs(x[i]));
        bn = fmax(bn, fabs(bvec[i]));
    }
    free(r);
    free(rowabs);
    return rn / (an * xn + bn);
}

/* Solve H x = rhs (H on the host) in e->ctx; backward error below 1e-12; against the dense
 * reference when dense (n small); on a device, against the CPU backend. */
static void check_real(sbm_test_env *e, const sbm_cbc *H, const double *rhs, int dense,
                       const char *what)
{
    const sbm_cbc_info hi = sbm_cbc_get_info(H);
    const int64_t n = hi.nbc * hi.r;
    sbm_cbc *A = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_cbc_copy(e->ctx, H, &A));
    solve_case c = default_case();
    double *x = malloc((size_t)n * sizeof(double));
    chol_solve_in(e->ctx, A, &c, rhs, n, x);
    const double be = backward_error(H, x, rhs);
    print_message("[  INFO    ] %s: n = %lld, backward error %.2e\n", what, (long long)n, be);
    if (!(be < 1e-12)) fail_msg("%s: backward error %.3e", what, be);
    if (dense) {
        double *U = sbm_test_cbc_dense(H), *ref = malloc((size_t)n * sizeof(double));
        for (int64_t j = 0; j < n; j++) /* the full symmetric matrix from its upper blocks */
            for (int64_t i = 0; i < n; i++)
                if (i / hi.r > j / hi.r) U[i + j * n] = U[j + i * n];
        assert_int_equal(dense_solve(U, n, 0, 0.0, 1, rhs, ref), 0);
        sbm_test_assert_near(x, ref, n, 1e-8, what);
        free(U);
        free(ref);
    }
    if (e->backend != SBM_BACKEND_CPU) {
        /* these matrices are ill-conditioned: a mere change of summation order moves the
         * solution by more than 1e-10 (manhattan: ~3e-9 between amalgamation on and off), so
         * the device may differ from the CPU by 100 times the CPU's own spread */
        double *xh = malloc((size_t)n * sizeof(double)), *xh0 = malloc((size_t)n * sizeof(double));
        chol_solve_in(e->host, H, &c, rhs, n, xh);
        solve_case c0 = c;
        c0.opt.relax_zeros = 0.0;
        chol_solve_in(e->host, H, &c0, rhs, n, xh0);
        double spread = 0, mx = 0;
        for (int64_t i = 0; i < n; i++) {
            spread = fmax(spread, fabs(xh[i] - xh0[i]));
            mx = fmax(mx, fabs(xh[i]));
        }
        const double tol = fmax(1e-10, 100 * spread / mx);
        print_message("[  INFO    ] %s: device against the CPU backend to %.1e\n", what, tol);
        sbm_test_assert_near(x, xh, n, tol, what);
        free(xh);
        free(xh0);
    }
    free(x);
    sbm_cbc_destroy(A);
}

/* Lambda of g2o graphs (J^T Omega J with the fixed vertices removed), rhs b. */
static void test_chol_g2o(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const char *const files[] = {"g2o/tinyGrid3D.g2o", "g2o/smallGrid3D.g2o", "g2o/intel.g2o",
                                        "g2o/sphere2500.g2o", "g2o/manhattan.g2o"};
    for (int f = 0; f < 5; f++) {
        sbm_g2o_graph *g = NULL;
        sbm_slam_system *sys = NULL;
        SBM_ASSERT_OK(e->host, sbm_g2o_read(e->host, sbm_test_data_path(files[f]), &g));
        SBM_ASSERT_OK(e->host, sbm_slam_system_create(e->host, g, &sys));
        SBM_ASSERT_OK(e->host, sbm_slam_linearize(e->host, sys, g));
        const sbm_cbc *H = sbm_slam_system_get_info(sys).Lambda;
        const int64_t n = sbm_cbc_get_info(H).nbc * sbm_cbc_get_info(H).r;
        double *rhs = malloc((size_t)n * sizeof(double));
        SBM_ASSERT_OK(e->host, sbm_slam_system_get_b(e->host, sys, rhs));
        check_real(e, H, rhs, n <= 800, files[f]);
        free(rhs);
        sbm_slam_system_destroy(sys);
        sbm_g2o_destroy(g);
    }
}

/* S = U - W V^-1 W^T of a BAL problem (damped as sbm_ba_set_damping does), rhs from the
 * reduction. */
static void test_chol_bal(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_problem *p = NULL;
    sbm_ba_system *sys = NULL;
    sbm_cbc *S = NULL;
    SBM_ASSERT_OK(e->host, sbm_bal_read(e->host, sbm_test_data_path("bal/problem-21-11315-pre.txt"), &p));
    SBM_ASSERT_OK(e->host, sbm_ba_system_create(e->host, p, &sys));
    SBM_ASSERT_OK(e->host, sbm_ba_linearize(e->host, sys, p));
    SBM_ASSERT_OK(e->host, sbm_ba_set_damping(e->host, sys, 1e-4));
    const int64_t n = 9 * sbm_cbc_get_info(sbm_ba_system_get_info(sys).U).nbc;
    double *rhs = malloc((size_t)n * sizeof(double));
    SBM_ASSERT_OK(e->host, sbm_ba_system_reduce(e->host, sys, &S, rhs));
    check_real(e, S, rhs, 1, "S of problem-21-11315");
    free(rhs);
    sbm_cbc_destroy(S);
    sbm_ba_system_destroy(sys);
    sbm_bal_destroy(p);
}
int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_chol_g2o), SBM_TEST_BOTH(test_chol_bal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
