/* SPDX-License-Identifier: BSD-3-Clause */
/* SLAM: the SE2 / SE3 relative-pose errors (against homogeneous matrices computed here) and their
 * Jacobians (against central finite differences through g2o's increments), J, Omega,
 * Lambda = J^T Omega J and b = J^T Omega e against dense references (tinyGrid3D and a small 2D
 * graph), and Gauss-Newton lowering chi2 on every graph in tests/data/g2o. */
#define _POSIX_C_SOURCE 200809L

#include "test_util.h"

#include "slam_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const double PI = 3.14159265358979323846;

/* ---------------------------------------------------------------------------------------- */
/* Homogeneous references                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* 4x4 row-major homogeneous matrix of an SE3 pose (x y z qx qy qz qw). */
static void se3_matrix(const double p[7], double T[16])
{
    const double n = sqrt(p[3] * p[3] + p[4] * p[4] + p[5] * p[5] + p[6] * p[6]);
    const double x = p[3] / n, y = p[4] / n, z = p[5] / n, w = p[6] / n;
    const double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
                         2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
                         2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)};
    memset(T, 0, 16 * sizeof(double));
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++) T[4 * r + c] = R[3 * r + c];
        T[4 * r + 3] = p[r];
    }
    T[15] = 1.0;
}

static void mat4_mul(const double *A, const double *B, double *C)
{
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) {
            double s = 0.0;
            for (int k = 0; k < 4; k++) s += A[4 * r + k] * B[4 * k + c];
            C[4 * r + c] = s;
        }
}

static void mat4_inv_rigid(const double *T, double *I)
{
    memset(I, 0, 16 * sizeof(double));
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) I[4 * r + c] = T[4 * c + r];
    for (int r = 0; r < 3; r++) I[4 * r + 3] = -(I[4 * r] * T[3] + I[4 * r + 1] * T[7] + I[4 * r + 2] * T[11]);
    I[15] = 1.0;
}

static double rand_range(sbm_test_rng *g, double a) { return a * sbm_test_rng_value(g); }

static void rand_se3(sbm_test_rng *g, double p[7], double tscale)
{
    for (int a = 0; a < 3; a++) p[a] = rand_range(g, tscale);
    double n = 0.0;
    for (int a = 3; a < 7; a++) p[a] = sbm_test_rng_value(g), n += p[a] * p[a];
    n = sqrt(n);
    for (int a = 3; a < 7; a++) p[a] /= n;
}

/* ---------------------------------------------------------------------------------------- */
/* Errors and Jacobians                                                                     */
/* ---------------------------------------------------------------------------------------- */

static void assert_near_mat(const double *J, const double *F, int n, double tol, const char *what,
                            int t)
{
    double scale = 0.0;
    for (int k = 0; k < n; k++) scale = fmax(scale, fabs(F[k]));
    for (int k = 0; k < n; k++)
        if (fabs(J[k] - F[k]) > tol * (scale + fabs(F[k])))
            fail_msg("case %d, %s: entry %d is %.12g, expected %.12g", t, what, k, J[k], F[k]);
}

static void test_se2(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    (void)e;
    sbm_test_rng g = sbm_test_rng_seed(21);
    for (int t = 0; t < 300; t++) {
        double xi[3], xj[3], z[3];
        for (int a = 0; a < 2; a++) xi[a] = rand_range(&g, 10), xj[a] = rand_range(&g, 10), z[a] = rand_range(&g, 3);
        xi[2] = rand_range(&g, PI), xj[2] = rand_range(&g, PI), z[2] = rand_range(&g, PI);
        double err[3], Ji[9], Jj[9];
        sbm__se2_error(xi, xj, z, err, Ji, Jj);
        /* reference: 3x3 homogeneous matrices, e = (t, atan2) of Z^-1 Xi^-1 Xj */
        double M[3][9];
        const double *ps[3] = {z, xi, xj};
        for (int q = 0; q < 3; q++) {
            const double c = cos(ps[q][2]), s = sin(ps[q][2]);
            const double T[9] = {c, -s, ps[q][0], s, c, ps[q][1], 0, 0, 1};
            memcpy(M[q], T, sizeof T);
        }
        double Iz[9], Ii[9], A[9], E[9];
        for (int q = 0; q < 2; q++) {
            double *I = q == 0 ? Iz : Ii;
            const double *T = M[q];
            const double Inv[9] = {T[0], T[3], -(T[0] * T[2] + T[3] * T[5]), T[1], T[4],
                                   -(T[1] * T[2] + T[4] * T[5]), 0, 0, 1};
            memcpy(I, Inv, sizeof Inv);
        }
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) {
                A[3 * r + c] = 0;
                for (int k = 0; k < 3; k++) A[3 * r + c] += Ii[3 * r + k] * M[2][3 * k + c];
            }
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) {
                E[3 * r + c] = 0;
                for (int k = 0; k < 3; k++) E[3 * r + c] += Iz[3 * r + k] * A[3 * k + c];
            }
        assert_true(fabs(err[0] - E[2]) < 1e-11 && fabs(err[1] - E[5]) < 1e-11);
        const double th = atan2(E[3], E[0]);
        double dth = err[2] - th;
        assert_true(err[2] >= -PI && err[2] < PI);
        assert_true(fabs(dth) < 1e-11 || fabs(fabs(dth) - 2 * PI) < 1e-11);

        /* Jacobians through VertexSE2's oplus, central differences */
        double Fi[9], Fj[9];
        for (int v = 0; v < 2; v++)
            for (int a = 0; a < 3; a++) {
                const double h = 1e-6;
                double d[3] = {0, 0, 0}, p1[3], p2[3], ep[3], em[3];
                const double *x = v == 0 ? xi : xj;
                memcpy(p1, x, sizeof p1), memcpy(p2, x, sizeof p2);
                d[a] = h;
                sbm__se2_oplus(p1, d);
                d[a] = -h;
                sbm__se2_oplus(p2, d);
                if (v == 0) sbm__se2_error(p1, xj, z, ep, NULL, NULL), sbm__se2_error(p2, xj, z, em, NULL, NULL);
                else sbm__se2_error(xi, p1, z, ep, NULL, NULL), sbm__se2_error(xi, p2, z, em, NULL, NULL);
                double *F = v == 0 ? Fi : Fj;
                for (int r = 0; r < 3; r++) {
                    double df = ep[r] - em[r];
                    if (r == 2) df = sbm__normalize_angle(df); /* across the +-pi cut */
                    F[r + 3 * a] = df / (2 * h);
                }
            }
        assert_near_mat(Ji, Fi, 9, 1e-6, "SE2 Ji", t);
        assert_near_mat(Jj, Fj, 9, 1e-6, "SE2 Jj", t);
    }
    /* g2o's normalize_theta */
    assert_true(sbm__normalize_angle(PI) == -PI);
    assert_true(fabs(sbm__normalize_angle(7.0) - (7.0 - 2 * PI)) < 1e-15);
    assert_true(fabs(sbm__normalize_angle(-7.0) - (-7.0 + 2 * PI)) < 1e-15);
    assert_true(sbm__normalize_angle(0.25) == 0.25);
}

static void test_se3(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    (void)e;
    sbm_test_rng g = sbm_test_rng_seed(22);
    for (int t = 0; t < 300; t++) {
        double xi[7], xj[7], z[7];
        rand_se3(&g, xi, 10.0);
        rand_se3(&g, z, 2.0);
        if (t % 3 == 0) {
            /* the measured relative pose nearly agrees (the usual case): small errors */
            double c[7];
            sbm__se3_compose(xi, z, c);
            double d[6];
            for (int a = 0; a < 6; a++) d[a] = rand_range(&g, 0.05);
            sbm__se3_oplus(c, d);
            memcpy(xj, c, sizeof c);
        } else {
            rand_se3(&g, xj, 10.0);
        }
        double err[6], Ji[36], Jj[36];
        sbm__se3_error(xi, xj, z, err, Ji, Jj);
        /* reference with 4x4 matrices; the quaternion from the rotation (w >= 0) */
        double Tz[16], Ti[16], Tj[16], Iz[16], Ii[16], A[16], E[16];
        se3_matrix(z, Tz), se3_matrix(xi, Ti), se3_matrix(xj, Tj);
        mat4_inv_rigid(Tz, Iz), mat4_inv_rigid(Ti, Ii);
        mat4_mul(Ii, Tj, A);
        mat4_mul(Iz, A, E);
        for (int a = 0; a < 3; a++) assert_true(fabs(err[a] - E[4 * a + 3]) < 1e-10);
        const double w = 0.5 * sqrt(fmax(0.0, 1 + E[0] + E[5] + E[10]));
        if (w > 0.1) {
            const double qx = (E[9] - E[6]) / (4 * w), qy = (E[2] - E[8]) / (4 * w), qz = (E[4] - E[1]) / (4 * w);
            assert_true(fabs(err[3] - qx) < 1e-10 && fabs(err[4] - qy) < 1e-10 && fabs(err[5] - qz) < 1e-10);
        }
        /* Jacobians through VertexSE3's oplus (right-multiplied increment) */
        double Fi[36], Fj[36];
        for (int v = 0; v < 2; v++)
            for (int a = 0; a < 6; a++) {
                const double h = 1e-6;
                double d[6] = {0}, p1[7], p2[7], ep[6], em[6];
                const double *x = v == 0 ? xi : xj;
                memcpy(p1, x, sizeof p1), memcpy(p2, x, sizeof p2);
                d[a] = h;
                sbm__se3_oplus(p1, d);
                d[a] = -h;
                sbm__se3_oplus(p2, d);
                if (v == 0) sbm__se3_error(p1, xj, z, ep, NULL, NULL), sbm__se3_error(p2, xj, z, em, NULL, NULL);
                else sbm__se3_error(xi, p1, z, ep, NULL, NULL), sbm__se3_error(xi, p2, z, em, NULL, NULL);
                double *F = v == 0 ? Fi : Fj;
                for (int r = 0; r < 6; r++) F[r + 6 * a] = (ep[r] - em[r]) / (2 * h);
            }
        /* w_E near 0 flips the quaternion sign inside the difference: skip those */
        double we;
        {
            double tmp[7], zi[7], xin[7], D[7];
            sbm__se3_inverse(xi, xin);
            sbm__se3_inverse(z, zi);
            sbm__se3_compose(xin, xj, D);
            sbm__se3_compose(zi, D, tmp);
            we = fabs(tmp[6]);
        }
        if (we < 1e-3) continue;
        assert_near_mat(Ji, Fi, 36, 1e-5, "SE3 Ji", t);
        assert_near_mat(Jj, Fj, 36, 1e-5, "SE3 Jj", t);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Lambda and b against dense references                                                    */
/* ---------------------------------------------------------------------------------------- */

/* Dense J (m x n, column-major) of the graph at its poses: fd = 1 by central differences through
 * oplus, else from the analytic edge Jacobians. Columns of free vertices only. */
static double *dense_jacobian(const sbm_g2o_graph *graph, int fd, int64_t *m_out, int64_t *n_out)
{
    sbm_g2o_info gi = sbm_g2o_get_info(graph);
    const int d = gi.error_dim, ps = gi.pose_size;
    int64_t *col = malloc((size_t)gi.vertices * sizeof(int64_t)), nf = 0;
    for (int64_t v = 0; v < gi.vertices; v++) col[v] = gi.is_fixed[v] ? -1 : nf++;
    const int64_t m = d * gi.edges, n = d * nf;
    double *J = calloc((size_t)(m * n + 1), sizeof(double));
    for (int64_t k = 0; k < gi.edges; k++) {
        const int64_t vv[2] = {gi.edge_from[k], gi.edge_to[k]};
        double Ja[2][36], e0[6];
        sbm__g2o_edge_error(graph, k, e0, Ja[0], Ja[1]);
        for (int s = 0; s < 2; s++) {
            if (col[vv[s]] < 0) continue;
            for (int a = 0; a < d; a++) {
                double Fcol[6];
                if (fd) {
                    double *x = gi.poses + ps * vv[s], saved[7], dlt[6] = {0}, ep[6], em[6];
                    memcpy(saved, x, (size_t)ps * sizeof(double));
                    const double h = 1e-6;
                    dlt[a] = h;
                    if (ps == 3) sbm__se2_oplus(x, dlt); else sbm__se3_oplus(x, dlt);
                    sbm__g2o_edge_error(graph, k, ep, NULL, NULL);
                    memcpy(x, saved, (size_t)ps * sizeof(double));
                    dlt[a] = -h;
                    if (ps == 3) sbm__se2_oplus(x, dlt); else sbm__se3_oplus(x, dlt);
                    sbm__g2o_edge_error(graph, k, em, NULL, NULL);
                    memcpy(x, saved, (size_t)ps * sizeof(double));
                    for (int r = 0; r < d; r++) {
                        double df = ep[r] - em[r];
                        if (ps == 3 && r == 2) df = sbm__normalize_angle(df);
                        Fcol[r] = df / (2 * h);
                    }
                } else {
                    for (int r = 0; r < d; r++) Fcol[r] = Ja[s][r + d * a];
                }
                for (int r = 0; r < d; r++) J[(d * k + r) + (d * col[vv[s]] + a) * m] = Fcol[r];
            }
        }
    }
    free(col);
    *m_out = m;
    *n_out = n;
    return J;
}

static void check_lambda(sbm_test_env *e, sbm_g2o_graph *graph, int fd, double tol)
{
    sbm_ctx *ctx = e->ctx;
    sbm_g2o_info gi = sbm_g2o_get_info(graph);
    const int d = gi.error_dim;
    int64_t m, n;
    double *J = dense_jacobian(graph, fd, &m, &n);
    /* Omega J, Lambda, e, b */
    double *OJ = calloc((size_t)(m * n + 1), sizeof(double)), *err = calloc((size_t)m + 1, sizeof(double));
    double *Oe = calloc((size_t)m + 1, sizeof(double));
    double chi2 = 0.0;
    for (int64_t k = 0; k < gi.edges; k++) {
        const double *om = gi.edge_information + d * d * k;
        sbm__g2o_edge_error(graph, k, err + d * k, NULL, NULL);
        for (int r = 0; r < d; r++) {
            for (int c = 0; c < d; c++) Oe[d * k + r] += om[r + d * c] * err[d * k + c];
            chi2 += err[d * k + r] * Oe[d * k + r];
            for (int64_t j = 0; j < n; j++)
                for (int c = 0; c < d; c++) OJ[(d * k + r) + j * m] += om[r + d * c] * J[(d * k + c) + j * m];
        }
    }
    double *L = calloc((size_t)(n * n + 1), sizeof(double)), *b = calloc((size_t)n + 1, sizeof(double));
    for (int64_t j = 0; j < n; j++) {
        for (int64_t i = 0; i < n; i++)
            if (i / d <= j / d)
                for (int64_t t = 0; t < m; t++) L[i + j * n] += J[t + i * m] * OJ[t + j * m];
        for (int64_t t = 0; t < m; t++) b[j] += J[t + j * m] * Oe[t];
    }
    sbm_slam_system *s = NULL;
    SBM_ASSERT_OK(ctx, sbm_slam_system_create(ctx, graph, &s));
    SBM_TEST_OK_OR_SKIP(e, sbm_slam_linearize(ctx, s, graph));
    sbm_slam_system_info si = sbm_slam_system_get_info(s);
    assert_int_equal(si.error_dim, d);
    assert_int_equal(si.free_vertices * d, n);
    assert_true(fabs(si.chi2 - chi2) <= 1e-12 * chi2);
    sbm_test_assert_cbc_dense(si.Lambda, L, tol);
    if (!fd) sbm_test_assert_cbc_dense(si.J, J, 1e-14);
    double *hb = calloc((size_t)n + 1, sizeof(double)), *he = calloc((size_t)m + 1, sizeof(double));
    SBM_ASSERT_OK(ctx, sbm__vec_download(ctx, hb, si.b, n));
    SBM_ASSERT_OK(ctx, sbm__vec_download(ctx, he, si.e, m));
    sbm_test_assert_near(hb, b, n, tol, "b");
    memset(hb, 0, (size_t)n * sizeof(double));
    SBM_ASSERT_OK(ctx, sbm_slam_system_get_b(ctx, s, hb));
    sbm_test_assert_near(hb, b, n, tol, "sbm_slam_system_get_b");
    SBM_ASSERT_FAILS(ctx, sbm_slam_system_get_b(ctx, s, NULL), SBM_ERR_NULL_ARGUMENT, "h_b");
    SBM_ASSERT_FAILS(ctx, sbm_slam_system_get_b(ctx, NULL, hb), SBM_ERR_NULL_ARGUMENT, "system");
    sbm_test_assert_near(he, err, m, 1e-14, "e");
    /* GPU equals CPU */
    if (sbm_ctx_backend(ctx) != SBM_BACKEND_CPU) {
        sbm_slam_system *hs = NULL;
        SBM_ASSERT_OK(e->host, sbm_slam_system_create(e->host, graph, &hs));
        SBM_ASSERT_OK(e->host, sbm_slam_linearize(e->host, hs, graph));
        double *a = sbm_test_cbc_dense(si.Lambda), *c = sbm_test_cbc_dense(sbm_slam_system_get_info(hs).Lambda);
        sbm_test_assert_near(a, c, n * n, 1e-12, "Lambda on the device vs the host");
        free(a), free(c);
        sbm_slam_system_destroy(hs);
    }
    free(J), free(OJ), free(err), free(Oe), free(L), free(b), free(hb), free(he);
    sbm_slam_system_destroy(s);
}

static void test_lambda_tiny_grid(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_g2o_graph *g = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, sbm_test_data_path("g2o/tinyGrid3D.g2o"), &g));
    check_lambda(e, g, 0, 1e-12);
    check_lambda(e, g, 1, 1e-5);
    sbm_g2o_destroy(g);
}

static void test_lambda_2d(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    /* a small loop with two fixed vertices and an edge between them */
    char path[600];
    const char *base = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/sbm_test_slam_%d.g2o", base && *base ? base : "/tmp", (int)getpid());
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 1.1 0.1 0.2\nVERTEX_SE2 2 2 1 1.7\nVERTEX_SE2 3 0.9 2.1 3.1\n"
          "VERTEX_SE2 4 -0.1 1 -1.6\n"
          "EDGE_SE2 0 1 1 0 0 100 1 2 50 3 400\nEDGE_SE2 1 2 1 1 1.5 80 0 0 80 0 300\n"
          "EDGE_SE2 2 3 -1 1 1.6 20 -1 0 20 0 100\nEDGE_SE2 3 4 -1 -1 1.5 10 0 1 10 0 50\n"
          "EDGE_SE2 4 0 0 -1 1.6 30 2 0 30 0 30\nEDGE_SE2 1 3 0 2 2.9 5 0 0 5 0 5\n"
          "EDGE_SE2 0 2 2 1 1.5 1 0 0 1 0 1\nFIX 0 2\n", f);
    fclose(f);
    sbm_g2o_graph *g = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, path, &g));
    remove(path);
    assert_int_equal(sbm_g2o_get_info(g).fixed, 2);
    check_lambda(e, g, 0, 1e-12);
    check_lambda(e, g, 1, 1e-5);
    sbm_g2o_destroy(g);
}

/* ---------------------------------------------------------------------------------------- */
/* Gauss-Newton                                                                             */
/* ---------------------------------------------------------------------------------------- */

typedef struct trace {
    int n;
    double before[64], after[64];
} trace;

static void record(void *user, const sbm_iteration_report *r)
{
    trace *t = user;
    if (t->n < 64) t->before[t->n] = r->cost_before, t->after[t->n] = r->cost, t->n++;
}

/* Default options (Levenberg-Marquardt, sparse Cholesky) from the file's poses (a spanning
 * tree for the edge-only CSAIL and manhattan) reach the reference optimum of each graph, 0.5
 * chi2 (g2o's convention halved), to 1e-6 relative, and say so; the cost never rises; the final
 * cost is the graph's chi2 / 2 at the poses returned. optimum 0: no reference (converged and
 * lower is all that is asserted). */
static void solve_to_optimum(sbm_test_env *e, const char *path, const char *name, double optimum)
{
    sbm_g2o_graph *g = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, path, &g));
    sbm_solver_options o = sbm_solver_default_options();
    trace t;
    memset(&t, 0, sizeof t);
    o.callback = record;
    o.user = &t;
    sbm_solver_summary s;
    SBM_TEST_OK_OR_SKIP(e, sbm_slam_solve(e->ctx, g, &o, &s));
    double chi2;
    SBM_ASSERT_OK(e->ctx, sbm_g2o_chi2(e->ctx, g, &chi2));
    print_message("  %s: cost %.10e -> %.10e in %d iterations (%d accepted), %s, %.2f s\n", name,
                  s.initial_cost, s.final_cost, s.iterations, s.accepted,
                  sbm_stop_reason_name(s.stop_reason), s.time_total);
    /* the solver sums the edges' costs where the poses live (the backend's fixed-order dot),
     * sbm_g2o_chi2 on the host in file order: the same terms, rounded in another order */
    assert_true(fabs(2.0 * s.final_cost - chi2) <= 1e-12 * chi2);
    assert_int_equal(s.linear_solver, SBM_LINEAR_SPARSE_CHOLESKY);
    for (int i = 0; i < t.n; i++) assert_true(t.after[i] <= t.before[i]);
    if (!sbm_stop_reason_converged(s.stop_reason))
        fail_msg("%s: stopped on %s", name, sbm_stop_reason_name(s.stop_reason));
    if (optimum > 0.0 && !(fabs(s.final_cost - optimum) <= 1e-6 * optimum))
        fail_msg("%s: cost %.10e, the reference optimum is %.7g", name, s.final_cost, optimum);
    assert_true(s.final_cost < s.initial_cost);
    assert_true(s.final_gradient_norm >= 0.0 && isfinite(s.final_gradient_norm));
    sbm_g2o_destroy(g);
}

/* The reference optima (0.5 chi2, g2o's chi2 halved) of the graphs in tests/data. */
static const struct {
    const char *name;
    double optimum;
} reference_graphs[] = {
    {"CSAIL", 20.27756},        {"intel", 22.50235},       {"manhattan", 1774.518},
    {"parking-garage", 0.6193453}, {"smallGrid3D", 229.0769}, {"sphere2500", 363.5748},
    {"tinyGrid3D", 3.363941},
};

static void test_default_converges(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (size_t k = 0; k < sizeof reference_graphs / sizeof reference_graphs[0]; k++) {
        char rel[128];
        snprintf(rel, sizeof rel, "g2o/%s.g2o", reference_graphs[k].name);
        solve_to_optimum(e, sbm_test_data_path(rel), reference_graphs[k].name,
                         reference_graphs[k].optimum);
    }
}

/* The graphs only in the shared data folder (optional, skipped visibly when absent). */
static void test_default_converges_extra(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const char *const files[] = {"ais2klinik", "kitti_05", "sphere_bignoise_vertex3"};
    int found = 0;
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        char rel[128];
        snprintf(rel, sizeof rel, "g2o/%s.g2o", files[k]);
        const char *path = sbm_test_extra_data_find(rel);
        if (path) solve_to_optimum(e, path, files[k], 0.0);
        found += path != NULL;
    }
    sbm_test_extra_data_done(found, (int)(sizeof files / sizeof files[0]));
}

/* Gauss-Newton with each linear solver takes two steps on every graph (the cost falls). */
static void test_gn_every_graph(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (size_t k = 0; k < sizeof reference_graphs / sizeof reference_graphs[0]; k++) {
        char rel[128];
        snprintf(rel, sizeof rel, "g2o/%s.g2o", reference_graphs[k].name);
        sbm_g2o_graph *g = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, sbm_test_data_path(rel), &g));
        sbm_solver_options o = sbm_solver_default_options();
        o.method = SBM_METHOD_GAUSS_NEWTON;
        o.max_iterations = 2;
        o.pcg_max_iterations = 100; /* keeps the test short; the CLI runs longer */
        o.pcg_tolerance = 1e-6;
        o.linear_solver = sbm_g2o_get_info(g).vertices < 300 ? SBM_LINEAR_DENSE_CHOLESKY
                                                             : SBM_LINEAR_PCG;
        sbm_solver_summary s;
        SBM_TEST_OK_OR_SKIP(e, sbm_slam_solve(e->ctx, g, &o, &s));
        double chi2;
        SBM_ASSERT_OK(e->ctx, sbm_g2o_chi2(e->ctx, g, &chi2));
        assert_true(fabs(chi2 - 2.0 * s.final_cost) <= 1e-12 * chi2); /* summed in another order */
        if (!(s.final_cost < s.initial_cost))
            fail_msg("%s: cost %.6e -> %.6e", reference_graphs[k].name, s.initial_cost,
                     s.final_cost);
        print_message("  %s: Gauss-Newton cost %.6e -> %.6e in %d iterations (%s), %d capped\n",
                      reference_graphs[k].name, s.initial_cost, s.final_cost, s.iterations,
                      s.linear_solver == SBM_LINEAR_DENSE_CHOLESKY ? "dense Cholesky" : "PCG",
                      s.linear_capped);
        sbm_g2o_destroy(g);
    }
}

static void test_gn_converges(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    /* tinyGrid3D with dense Cholesky and with PCG reach the same minimum, where b vanishes */
    double finals[2];
    for (int k = 0; k < 2; k++) {
        sbm_g2o_graph *g = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, sbm_test_data_path("g2o/tinyGrid3D.g2o"), &g));
        double b0 = 0.0;
        {
            sbm_slam_system *sys = NULL;
            SBM_ASSERT_OK(e->ctx, sbm_slam_system_create(e->ctx, g, &sys));
            SBM_TEST_OK_OR_SKIP(e, sbm_slam_linearize(e->ctx, sys, g));
            sbm_slam_system_info si = sbm_slam_system_get_info(sys);
            double b[64];
            SBM_ASSERT_OK(e->ctx, sbm__vec_download(e->ctx, b, si.b, si.free_vertices * 6));
            for (int64_t i = 0; i < si.free_vertices * 6; i++) b0 = fmax(b0, fabs(b[i]));
            sbm_slam_system_destroy(sys);
        }
        sbm_solver_options o = sbm_solver_default_options();
        o.max_iterations = 20;
        o.method = SBM_METHOD_GAUSS_NEWTON;
        o.linear_solver = k == 0 ? SBM_LINEAR_DENSE_CHOLESKY : SBM_LINEAR_PCG;
        o.pcg_tolerance = 1e-12;
        sbm_solver_summary s;
        SBM_TEST_OK_OR_SKIP(e, sbm_slam_solve(e->ctx, g, &o, &s));
        assert_int_equal(s.linear_solver, o.linear_solver);
        finals[k] = s.final_cost;
        sbm_slam_system *sys = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_slam_system_create(e->ctx, g, &sys));
        SBM_ASSERT_OK(e->ctx, sbm_slam_linearize(e->ctx, sys, g));
        sbm_slam_system_info si = sbm_slam_system_get_info(sys);
        double b[64];
        SBM_ASSERT_OK(e->ctx, sbm__vec_download(e->ctx, b, si.b, si.free_vertices * 6));
        double bmax = 0.0;
        for (int64_t i = 0; i < si.free_vertices * 6; i++) bmax = fmax(bmax, fabs(b[i]));
        if (!(bmax <= 1e-7 * b0)) fail_msg("|b| went from %.3e to %.3e only", b0, bmax);
        sbm_slam_system_destroy(sys);
        sbm_g2o_destroy(g);
    }
    assert_true(fabs(finals[0] - finals[1]) <= 1e-9 * finals[0]);
    assert_true(finals[0] < 106.0 / 10.0); /* 106.53 at the file's poses */
}

static void test_slam_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_g2o_graph *g = NULL, *h = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, sbm_test_data_path("g2o/tinyGrid3D.g2o"), &g));
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, sbm_test_data_path("g2o/smallGrid3D.g2o"), &h));
    sbm_slam_system *s = (sbm_slam_system *)&g;
    SBM_ASSERT_FAILS(e->ctx, sbm_slam_system_create(e->ctx, NULL, &s), SBM_ERR_NULL_ARGUMENT, "graph");
    assert_null(s);
    SBM_ASSERT_FAILS(e->ctx, sbm_slam_system_create(e->ctx, g, NULL), SBM_ERR_NULL_ARGUMENT, "system");
    SBM_ASSERT_OK(e->ctx, sbm_slam_system_create(e->ctx, g, &s));
    SBM_ASSERT_FAILS(e->ctx, sbm_slam_linearize(e->ctx, s, h), SBM_ERR_DIMENSION_MISMATCH,
                     "125 vertices");
    SBM_ASSERT_FAILS(e->ctx, sbm_slam_linearize(e->ctx, NULL, g), SBM_ERR_NULL_ARGUMENT, "system");
    /* a non-finite pose and a zero quaternion are refused by vertex id */
    sbm_g2o_info gi = sbm_g2o_get_info(g);
    const double keep = gi.poses[7 * 3 + 1];
    gi.poses[7 * 3 + 1] = NAN;
    SBM_ASSERT_FAILS(e->ctx, sbm_slam_linearize(e->ctx, s, g), SBM_ERR_NOT_FINITE,
                     "the pose of vertex 3 (index 3) is not finite");
    gi.poses[7 * 3 + 1] = keep;
    double q[4];
    memcpy(q, gi.poses + 7 * 2 + 3, sizeof q);
    memset(gi.poses + 7 * 2 + 3, 0, sizeof q);
    SBM_ASSERT_FAILS(e->ctx, sbm_slam_linearize(e->ctx, s, g), SBM_ERR_NOT_FINITE, "a zero quaternion");
    memcpy(gi.poses + 7 * 2 + 3, q, sizeof q);
    SBM_TEST_OK_OR_SKIP(e, sbm_slam_linearize(e->ctx, s, g));
    sbm_slam_system_destroy(s);
    sbm_slam_system_destroy(NULL);
    assert_null(sbm_slam_system_get_info(NULL).Lambda);
    sbm_solver_options o = sbm_solver_default_options();
    o.linear_solver = SBM_LINEAR_PCG_MATRIX_FREE;
    SBM_ASSERT_FAILS(e->ctx, sbm_slam_solve(e->ctx, g, &o, NULL), SBM_ERR_INVALID_ARGUMENT,
                     "SBM_LINEAR_PCG_MATRIX_FREE");
    o = sbm_solver_default_options();
    o.pcg_max_iterations = 0;
    SBM_ASSERT_FAILS(e->ctx, sbm_slam_solve(e->ctx, g, &o, NULL), SBM_ERR_INVALID_ARGUMENT,
                     "pcg_max_iterations = 0");
    SBM_ASSERT_FAILS(e->ctx, sbm_slam_solve(e->ctx, NULL, NULL, NULL), SBM_ERR_NULL_ARGUMENT, "graph");
    sbm_g2o_destroy(g);
    sbm_g2o_destroy(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_se2),
        SBM_TEST_BOTH(test_se3),
        SBM_TEST_BOTH(test_lambda_tiny_grid),
        SBM_TEST_BOTH(test_lambda_2d),
        SBM_TEST_BOTH(test_default_converges),
        SBM_TEST_BOTH(test_default_converges_extra),
        SBM_TEST_BOTH(test_gn_every_graph),
        SBM_TEST_BOTH(test_gn_converges),
        SBM_TEST_BOTH(test_slam_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
