/* SPDX-License-Identifier: BSD-3-Clause */
/* Pose covariances (sbm_slam_covariance) on the real graphs of tests/data at their optimum: the
 * block diagonal of Lambda^-1 against a dense inverse (smallGrid3D, tinyGrid3D, a 2D loop) and
 * against sbm_chol_solve on unit right-hand sides for sampled vertices (intel, sphere2500,
 * parking-garage); a robust loss; the gauge (fixed vertices have no block); a pose direction
 * that no edge constrains reported as not positive definite naming the
 * vertex; argument errors; bitwise repeatability. The [cuda] variants form Lambda and factor on
 * the device and agree with the CPU backend. */
#include "chol_test_common.h"

#include <stdio.h>

/* The graph solved to its optimum in ctx (LM, sparse Cholesky). */
static sbm_g2o_graph *solved(sbm_ctx *ctx, const char *rel)
{
    sbm_g2o_graph *g = NULL;
    SBM_ASSERT_OK(ctx, sbm_g2o_read(ctx, sbm_test_data_path(rel), &g));
    sbm_solver_options o = sbm_solver_default_options();
    o.max_iterations = 50;
    sbm_solver_summary s;
    SBM_ASSERT_OK(ctx, sbm_slam_solve(ctx, g, &o, &s));
    return g;
}

/* Lambda of g at its poses on the host (a new CPU matrix) and its free vertex count. */
static sbm_cbc *host_lambda(sbm_ctx *host, const sbm_g2o_graph *g, int *d)
{
    sbm_slam_system *sys = NULL;
    SBM_ASSERT_OK(host, sbm_slam_system_create(host, g, &sys));
    SBM_ASSERT_OK(host, sbm_slam_linearize(host, sys, g));
    const sbm_slam_system_info si = sbm_slam_system_get_info(sys);
    sbm_cbc *L = NULL;
    SBM_ASSERT_OK(host, sbm_cbc_copy(host, si.Lambda, &L));
    *d = si.error_dim;
    sbm_slam_system_destroy(sys);
    return L;
}

/* cov (nf d x d blocks) against the dense inverse of the host Lambda L. */
static void check_dense(const sbm_cbc *L, int d, const double *cov, const char *what)
{
    const sbm_cbc_info li = sbm_cbc_get_info(L);
    const int64_t nf = li.nbc, n = nf * d;
    double *M = calloc((size_t)(n * n + 1), sizeof(double));
    for (int64_t j = 0; j < nf; j++)
        for (int64_t k = L->colptr[j]; k < L->colptr[j + 1]; k++)
            for (int c = 0; c < d; c++)
                for (int r = 0; r < d; r++) {
                    const double v = L->values[k * d * d + c * d + r];
                    const int64_t row = L->rowind[k] * d + r, col = j * d + c;
                    M[row + col * n] = v;
                    M[col + row * n] = v;
                }
    double *I = calloc((size_t)(n * n + 1), sizeof(double)), *X = malloc((size_t)(n * n + 1) * 8);
    for (int64_t i = 0; i < n; i++) I[i + i * n] = 1.0;
    assert_int_equal(dense_solve(M, n, 0, 0.0, n, I, X), 0);
    double *want = malloc((size_t)(nf * d * d + 1) * sizeof(double));
    for (int64_t v = 0; v < nf; v++)
        for (int c = 0; c < d; c++)
            for (int r = 0; r < d; r++) want[v * d * d + c * d + r] = X[(v * d + r) + (v * d + c) * n];
    sbm_test_assert_near(cov, want, nf * d * d, 1e-9, what);
    free(want);
    free(X);
    free(I);
    free(M);
}

/* cov against sbm_chol_solve on the host on the unit right-hand sides of every stride-th free
 * vertex, to tol: 1e-9 where cov comes from the same (CPU) factorisation; from the GPU's, which
 * sums in another order, about cond(Lambda) times the rounding (parking-garage: 1.2e-8 on the
 * H200), 1e-7. */
static void check_solves(sbm_ctx *host, const sbm_cbc *L, int d, const double *cov, int64_t stride,
                         double tol, const char *what)
{
    const int64_t nf = sbm_cbc_get_info(L).nbc, n = nf * d;
    sbm_chol *chol = NULL;
    SBM_ASSERT_OK(host, sbm_chol_plan(host, L, NULL, &chol));
    SBM_ASSERT_OK(host, sbm_chol_factor(host, chol, L, SBM_DAMPING_NONE, 0.0));
    double *B = malloc((size_t)(n * d) * sizeof(double)), got[36], want[36];
    for (int64_t v = 0; v < nf; v += stride) {
        memset(B, 0, (size_t)(n * d) * sizeof(double));
        for (int c = 0; c < d; c++) B[c * n + v * d + c] = 1.0;
        SBM_ASSERT_OK(host, sbm_chol_solve(host, chol, d, B, n, B, n));
        for (int c = 0; c < d; c++)
            for (int r = 0; r < d; r++) {
                want[c * d + r] = B[c * n + v * d + r];
                got[c * d + r] = cov[v * d * d + c * d + r];
            }
        sbm_test_assert_near(got, want, d * d, tol, what);
    }
    free(B);
    sbm_chol_destroy(chol);
}

/* Covariances of g in ctx, nf d^2 doubles. */
static double *covariance_in(sbm_ctx *ctx, const sbm_g2o_graph *g, const sbm_loss *loss, int64_t nf,
                             int d)
{
    double *cov = malloc((size_t)(nf * d * d + 1) * sizeof(double));
    SBM_ASSERT_OK(ctx, sbm_slam_covariance(ctx, g, loss, cov));
    return cov;
}

/* Every graph of tests/data with poses: against the dense inverse where it is small, else
 * against solves; on a device, against the CPU backend too. */
static void test_covariance_real(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const struct {
        const char *rel;
        int dense;
        int64_t stride;
    } graphs[] = {{"g2o/tinyGrid3D.g2o", 1, 1},       {"g2o/smallGrid3D.g2o", 1, 1},
                  {"g2o/intel.g2o", 0, 97},           {"g2o/sphere2500.g2o", 0, 211},
                  {"g2o/parking-garage.g2o", 0, 173}};
    /* the sanitizer and valgrind runs (SBM_TEST_QUICK): the three smaller graphs */
    const size_t ngraphs = getenv("SBM_TEST_QUICK") ? 3 : sizeof graphs / sizeof graphs[0];
    for (size_t k = 0; k < ngraphs; k++) {
        sbm_g2o_graph *g = solved(e->ctx, graphs[k].rel);
        int d = 0;
        sbm_cbc *L = host_lambda(e->host, g, &d);
        const int64_t nf = sbm_cbc_get_info(L).nbc;
        assert_int_equal(nf, sbm_g2o_get_info(g).vertices - sbm_g2o_get_info(g).fixed);
        double *cov = covariance_in(e->ctx, g, NULL, nf, d);
        if (graphs[k].dense) check_dense(L, d, cov, graphs[k].rel);
        check_solves(e->host, L, d, cov, graphs[k].stride,
                     e->backend == SBM_BACKEND_CPU ? 1e-9 : 1e-7, graphs[k].rel);
        if (e->backend != SBM_BACKEND_CPU) {
            double *ref = covariance_in(e->host, g, NULL, nf, d);
            /* two factorisations of one Lambda in other orders: they agree to about cond(Lambda)
             * times the rounding (parking-garage: 1.2e-8 measured on the H200) */
            sbm_test_assert_near(cov, ref, nf * d * d, 1e-7, "CUDA against CPU covariance");
            free(ref);
        }
        double *again = covariance_in(e->ctx, g, NULL, nf, d);
        assert_memory_equal(cov, again, (size_t)(nf * d * d) * sizeof(double));
        free(again);
        free(cov);
        sbm_cbc_destroy(L);
        sbm_g2o_destroy(g);
    }
}

/* A robust loss: the covariance of the loss-corrected Lambda (rho' Omega) differs from the
 * plain one and agrees with a solve on the system built with that loss by sbm_slam_solve's
 * rule: here checked through the limiting case of a huge scale (rho' = 1: the plain one). */
static void test_covariance_loss(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_g2o_graph *g = solved(e->ctx, "g2o/smallGrid3D.g2o");
    const int64_t nf = sbm_g2o_get_info(g).vertices - sbm_g2o_get_info(g).fixed;
    double *plain = covariance_in(e->ctx, g, NULL, nf, 6);
    sbm_loss wide = {SBM_LOSS_HUBER, SBM_LOSS_SCALE_MAX}, tight = {SBM_LOSS_CAUCHY, 1e-3};
    double *w = covariance_in(e->ctx, g, &wide, nf, 6), *t = covariance_in(e->ctx, g, &tight, nf, 6);
    assert_memory_equal(plain, w, (size_t)(nf * 36) * sizeof(double));
    /* Cauchy with a small scale down-weights every edge: larger variances */
    for (int64_t v = 0; v < nf; v++) assert_true(t[v * 36] > plain[v * 36]);
    sbm_loss bad = {SBM_LOSS_HUBER, -1.0};
    SBM_ASSERT_FAILS(e->ctx, sbm_slam_covariance(e->ctx, g, &bad, t), SBM_ERR_INVALID_ARGUMENT,
                     "loss");
    free(plain);
    free(w);
    free(t);
    sbm_g2o_destroy(g);
}

/* Rank deficiency, the gauge, closed-form values on a chain; argument errors. */
static void test_covariance_deficient(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_g2o_graph *g = NULL;
    /* vertices 0 (FIX) - 1 - 7 in a chain, the edge to vertex 7 without information on its
     * heading (a semidefinite information matrix): vertex 7's angle is not determined */
    const char *path = sbm_test_write_text(
        "cov_unobserved.g2o",
        "VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 1 0 0\nVERTEX_SE2 7 2 0 0\n"
        "EDGE_SE2 0 1 1 0 0 100 0 0 100 0 400\nEDGE_SE2 1 7 1 0 0 100 0 0 100 0 0\nFIX 0\n");
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, path, &g));
    double cov[27];
    SBM_ASSERT_FAILS(e->ctx, sbm_slam_covariance(e->ctx, g, NULL, cov),
                     SBM_ERR_NOT_POSITIVE_DEFINITE,
                     "not positive definite at vertex 7 (free vertex 1): the graph does not "
                     "determine that pose");
    sbm_g2o_destroy(g);
    /* the same chain without vertex 7: the reader's gauge, then the variances grow along it */
    path = sbm_test_write_text(
        "cov_chain.g2o",
        "VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 1 0 0\nVERTEX_SE2 2 2 0 0\n"
        "EDGE_SE2 0 1 1 0 0 100 0 0 100 0 400\nEDGE_SE2 1 2 1 0 0 100 0 0 100 0 400\n");
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, path, &g));
    assert_int_equal(sbm_g2o_get_info(g).fixed, 1);
    SBM_ASSERT_OK(e->ctx, sbm_slam_covariance(e->ctx, g, NULL, cov));
    /* vertex 1: one edge from the fixed pose, Omega^-1; vertex 2: two edges in series, the
     * heading's variance 1/400 + 1/400 and its lever arm of 1 adding 1/400 to y's (closed form) */
    static const double want[18] = {0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.0025,
                                    0.02, 0, 0, 0, 0.0225, 0.0025, 0, 0.0025, 0.005};
    for (int q = 0; q < 18; q++) assert_true(fabs(cov[q] - want[q]) < 1e-14);
    SBM_ASSERT_FAILS(e->ctx, sbm_slam_covariance(e->ctx, NULL, NULL, cov), SBM_ERR_NULL_ARGUMENT,
                     "argument graph is NULL");
    SBM_ASSERT_FAILS(e->ctx, sbm_slam_covariance(e->ctx, g, NULL, NULL), SBM_ERR_NULL_ARGUMENT,
                     "argument h_cov is NULL");
    sbm_g2o_destroy(g);
    /* every vertex fixed: nothing to compute, h_cov may be NULL */
    path = sbm_test_write_text("cov_fixed.g2o", "VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 1 0 0\n"
                                                "EDGE_SE2 0 1 1 0 0 1 0 0 1 0 1\nFIX 0 1\n");
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, path, &g));
    SBM_ASSERT_OK(e->ctx, sbm_slam_covariance(e->ctx, g, NULL, NULL));
    sbm_g2o_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_covariance_real),
        SBM_TEST_BOTH(test_covariance_loss),
        SBM_TEST_BOTH(test_covariance_deficient),
    };
    return cmocka_run_group_tests(tests, sbm_test_make_tmp_dir, sbm_test_remove_tmp_dir);
}
