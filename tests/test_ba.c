/* SPDX-License-Identifier: BSD-3-Clause */
/* Bundle adjustment: the BAL camera model and its Jacobians (against central finite
 * differences), the normal equations (sbm_ba_system_*), the Schur complement, rhs,
 * back-substitution and matrix-free S*x (against dense references computed here), and the
 * Levenberg-Marquardt solver on the real Ladybug and Trafalgar problems. */
#define _POSIX_C_SOURCE 200809L

#include "test_util.h"

#include "ba_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Dense helpers (column-major)                                                             */
/* ---------------------------------------------------------------------------------------- */

static double *dalloc(int64_t n)
{
    double *p = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    assert_non_null(p);
    return p;
}

/* C (m x p) = A^T B with A (k x m), B (k x p). */
static double *dense_tn(const double *A, const double *B, int64_t k, int64_t m, int64_t p)
{
    double *C = dalloc(m * p);
    for (int64_t j = 0; j < p; j++)
        for (int64_t i = 0; i < m; i++) {
            double s = 0.0;
            for (int64_t t = 0; t < k; t++) s += A[t + i * k] * B[t + j * k];
            C[i + j * m] = s;
        }
    return C;
}

/* Inverse of an n x n matrix by Gauss-Jordan with partial pivoting (a small reference). */
static double *dense_inverse(const double *A, int64_t n)
{
    double *M = dalloc(n * n), *I = dalloc(n * n);
    memcpy(M, A, (size_t)(n * n) * sizeof(double));
    for (int64_t i = 0; i < n; i++) I[i + i * n] = 1.0;
    for (int64_t c = 0; c < n; c++) {
        int64_t piv = c;
        for (int64_t r = c + 1; r < n; r++)
            if (fabs(M[r + c * n]) > fabs(M[piv + c * n])) piv = r;
        assert_true(M[piv + c * n] != 0.0);
        for (int64_t j = 0; j < n; j++) {
            double t = M[c + j * n];
            M[c + j * n] = M[piv + j * n], M[piv + j * n] = t;
            t = I[c + j * n];
            I[c + j * n] = I[piv + j * n], I[piv + j * n] = t;
        }
        const double d = M[c + c * n];
        for (int64_t j = 0; j < n; j++) M[c + j * n] /= d, I[c + j * n] /= d;
        for (int64_t r = 0; r < n; r++) {
            if (r == c) continue;
            const double f = M[r + c * n];
            if (f == 0.0) continue;
            for (int64_t j = 0; j < n; j++) M[r + j * n] -= f * M[c + j * n], I[r + j * n] -= f * I[c + j * n];
        }
    }
    free(M);
    return I;
}

/* y = A x, A m x n. */
static void dense_mv(const double *A, int64_t m, int64_t n, const double *x, double *y)
{
    for (int64_t i = 0; i < m; i++) y[i] = 0.0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) y[i] += A[i + j * m] * x[j];
}

/* The upper block triangle of a dense n x n matrix with b x b blocks (lower blocks zeroed). */
static double *upper_blocks(const double *A, int64_t n, int b)
{
    double *U = dalloc(n * n);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++)
            if (i / b <= j / b) U[i + j * n] = A[i + j * n];
    return U;
}

/* Symmetric dense matrix of an upper-stored CBC (on any backend). */
static double *sym_dense(const sbm_cbc *A)
{
    sbm_cbc_info ai = sbm_cbc_get_info(A);
    const int64_t n = ai.nbr * ai.r;
    double *D = sbm_test_cbc_dense(A);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++)
            if (i / ai.r > j / ai.c) D[i + j * n] = D[j + i * n];
    return D;
}

static double *dev_vec(sbm_ctx *ctx, const double *h, int64_t n)
{
    double *d = sbm__vec_alloc(ctx, n, "a test vector");
    assert_non_null(d);
    if (h) SBM_ASSERT_OK(ctx, sbm__vec_upload(ctx, d, h, n));
    return d;
}

static double *host_vec(sbm_ctx *ctx, const double *d, int64_t n)
{
    double *h = dalloc(n);
    SBM_ASSERT_OK(ctx, sbm__vec_download(ctx, h, d, n));
    return h;
}

/* ---------------------------------------------------------------------------------------- */
/* Camera model                                                                             */
/* ---------------------------------------------------------------------------------------- */

/* Central differences of the projection w.r.t. the 9 camera and 3 point parameters. */
static void fd_jacobian(const double cam[9], const double X[3], double Jc[18], double Jp[6])
{
    double c[9], x[3], pp[2], pm[2];
    for (int a = 0; a < 12; a++) {
        memcpy(c, cam, sizeof c);
        memcpy(x, X, sizeof x);
        double *v = a < 9 ? c + a : x + (a - 9);
        const double h = 1e-6 * fmax(1.0, fabs(*v)), v0 = *v;
        *v = v0 + h;
        sbm__bal_project(c, x, pp, NULL, NULL);
        *v = v0 - h;
        sbm__bal_project(c, x, pm, NULL, NULL);
        double *col = a < 9 ? Jc + 2 * a : Jp + 2 * (a - 9);
        col[0] = (pp[0] - pm[0]) / (2 * h);
        col[1] = (pp[1] - pm[1]) / (2 * h);
    }
}

static void assert_jac_near(const double *J, const double *F, int n, double tol, const char *what)
{
    double scale = 0.0;
    for (int k = 0; k < n; k++) scale = fmax(scale, fabs(F[k]));
    for (int k = 0; k < n; k++)
        if (fabs(J[k] - F[k]) > tol * (scale + fabs(F[k])))
            fail_msg("%s: entry %d (row %d, column %d) is %.12g, finite differences give %.12g", what,
                     k, k % 2, k / 2, J[k], F[k]);
}

static void test_camera_jacobian(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    (void)e;
    sbm_test_rng g = sbm_test_rng_seed(11);
    for (int t = 0; t < 200; t++) {
        double cam[9], X[3];
        /* rotations from exactly zero and 1e-9 rad up to about 3 rad */
        const double mag = t == 0 ? 0.0 : t == 1 ? 1e-9 : t == 2 ? 1e-5 : 3.0 * sbm_test_rng_uniform(&g);
        double axis[3] = {sbm_test_rng_value(&g), sbm_test_rng_value(&g), sbm_test_rng_value(&g)};
        const double an = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
        for (int a = 0; a < 3; a++) cam[a] = mag * axis[a] / an;
        for (int a = 3; a < 6; a++) cam[a] = sbm_test_rng_value(&g);
        cam[6] = 300.0 + 400.0 * sbm_test_rng_uniform(&g);
        cam[7] = 0.2 * sbm_test_rng_value(&g);
        cam[8] = 0.05 * sbm_test_rng_value(&g);
        /* a point in front of the camera: X = R^T (P - t) with P.z in [-8, -3] */
        double P[3] = {2 * sbm_test_rng_value(&g), 2 * sbm_test_rng_value(&g), -3 - 5 * sbm_test_rng_uniform(&g)};
        double R[9], mw[3] = {-cam[0], -cam[1], -cam[2]}, d[3];
        for (int a = 0; a < 3; a++) d[a] = P[a] - cam[3 + a];
        sbm__angle_axis_to_matrix(mw, R);
        for (int a = 0; a < 3; a++) X[a] = R[a] * d[0] + R[a + 3] * d[1] + R[a + 6] * d[2];

        double pred[2], pred2[2], Jc[18], Jp[6], Fc[18], Fp[6];
        sbm__bal_project(cam, X, pred, Jc, Jp);
        sbm__bal_project(cam, X, pred2, NULL, NULL);
        assert_true(pred[0] == pred2[0] && pred[1] == pred2[1]);
        fd_jacobian(cam, X, Fc, Fp);
        assert_jac_near(Jc, Fc, 18, 1e-5, "camera Jacobian");
        assert_jac_near(Jp, Fp, 6, 1e-5, "point Jacobian");
    }
}

static void test_rotations(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    (void)e;
    sbm_test_rng g = sbm_test_rng_seed(5);
    for (int t = 0; t < 300; t++) {
        /* angles up to just below pi, tiny ones included */
        const double mag = t < 3 ? (t == 0 ? 0.0 : t == 1 ? 1e-12 : 3.14159) : 3.1 * sbm_test_rng_uniform(&g);
        double w[3] = {sbm_test_rng_value(&g), sbm_test_rng_value(&g), sbm_test_rng_value(&g)};
        const double n = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
        for (int a = 0; a < 3; a++) w[a] *= mag / n;
        double R[9], w2[3], x[3] = {0.3, -1.2, 2.0}, y1[3], y2[3];
        sbm__angle_axis_to_matrix(w, R);
        /* orthonormal with determinant 1 */
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                double s = 0.0;
                for (int k = 0; k < 3; k++) s += R[k + 3 * a] * R[k + 3 * b];
                assert_true(fabs(s - (a == b)) < 1e-14);
            }
        sbm__matrix_to_angle_axis(R, w2);
        for (int a = 0; a < 3; a++) assert_true(fabs(w2[a] - w[a]) < 1e-9);
        sbm__angle_axis_rotate(w, x, y1);
        for (int a = 0; a < 3; a++) y2[a] = R[a] * x[0] + R[a + 3] * x[1] + R[a + 6] * x[2];
        for (int a = 0; a < 3; a++) assert_true(fabs(y1[a] - y2[a]) < 1e-13);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Normal equations and the Schur complement against dense references                       */
/* ---------------------------------------------------------------------------------------- */

typedef struct dense_ba {
    int64_t n1, n2, n;  /* camera unknowns, point unknowns, all */
    double *H;          /* n x n, J^T J (damped) */
    double *g;          /* n, -J^T r */
    double *S;          /* n1 x n1 */
    double *rhs;        /* n1 */
    double *Vinv;       /* n2 x n2 */
} dense_ba;

/* The dense normal equations of a problem at its parameters, damped with lambda as the
 * library documents it; fd: Jacobians by finite differences instead of the analytic ones. */
static dense_ba dense_reference(const sbm_bal_problem *p, double lambda, int fd)
{
    sbm_bal_info pi = sbm_bal_get_info(p);
    dense_ba d;
    d.n1 = 9 * pi.cameras, d.n2 = 3 * pi.points, d.n = d.n1 + d.n2;
    const int64_t m = 2 * pi.observations;
    double *J = dalloc(m * d.n), *r = dalloc(m);
    for (int64_t k = 0; k < pi.observations; k++) {
        const int64_t c = pi.obs_camera[k], j = pi.obs_point[k];
        double pred[2], Jc[18], Jp[6];
        sbm__bal_project(pi.camera_params + 9 * c, pi.point_params + 3 * j, pred, Jc, Jp);
        if (fd) fd_jacobian(pi.camera_params + 9 * c, pi.point_params + 3 * j, Jc, Jp);
        r[2 * k] = pred[0] - pi.obs_xy[2 * k];
        r[2 * k + 1] = pred[1] - pi.obs_xy[2 * k + 1];
        for (int a = 0; a < 9; a++)
            for (int q = 0; q < 2; q++) J[(2 * k + q) + (9 * c + a) * m] = Jc[q + 2 * a];
        for (int a = 0; a < 3; a++)
            for (int q = 0; q < 2; q++) J[(2 * k + q) + (d.n1 + 3 * j + a) * m] = Jp[q + 2 * a];
    }
    d.H = dense_tn(J, J, m, d.n, d.n);
    d.g = dense_tn(J, r, m, d.n, 1);
    for (int64_t i = 0; i < d.n; i++) d.g[i] = -d.g[i];
    for (int64_t i = 0; i < d.n; i++) {
        double *h = d.H + i + i * d.n;
        *h += lambda * fmin(fmax(*h, 1e-6), 1e32);
    }
    /* S = U - W V^-1 W^T, rhs = gc - W V^-1 gp */
    double *V = dalloc(d.n2 * d.n2), *W = dalloc(d.n1 * d.n2);
    for (int64_t j = 0; j < d.n2; j++) {
        for (int64_t i = 0; i < d.n2; i++) V[i + j * d.n2] = d.H[(d.n1 + i) + (d.n1 + j) * d.n];
        for (int64_t i = 0; i < d.n1; i++) W[i + j * d.n1] = d.H[i + (d.n1 + j) * d.n];
    }
    d.Vinv = dense_inverse(V, d.n2);
    double *Y = dalloc(d.n1 * d.n2); /* W V^-1 */
    for (int64_t j = 0; j < d.n2; j++)
        for (int64_t t = 0; t < d.n2; t++)
            for (int64_t i = 0; i < d.n1; i++) Y[i + j * d.n1] += W[i + t * d.n1] * d.Vinv[t + j * d.n2];
    d.S = dalloc(d.n1 * d.n1);
    d.rhs = dalloc(d.n1);
    for (int64_t j = 0; j < d.n1; j++) {
        for (int64_t i = 0; i < d.n1; i++) {
            double s = d.H[i + j * d.n];
            for (int64_t t = 0; t < d.n2; t++) s -= Y[i + t * d.n1] * W[j + t * d.n1];
            d.S[i + j * d.n1] = s;
        }
    }
    for (int64_t i = 0; i < d.n1; i++) {
        double s = d.g[i];
        for (int64_t t = 0; t < d.n2; t++) s -= Y[i + t * d.n1] * d.g[d.n1 + t];
        d.rhs[i] = s;
    }
    free(J), free(r), free(V), free(W), free(Y);
    return d;
}

static void dense_free(dense_ba *d)
{
    free(d->H), free(d->g), free(d->S), free(d->rhs), free(d->Vinv);
}

static void check_system(sbm_test_env *e, const sbm_bal_problem *p, double lambda)
{
    sbm_ctx *ctx = e->ctx;
    sbm_ba_system *sys = NULL;
    SBM_ASSERT_OK(ctx, sbm_ba_system_create(ctx, p, &sys));
    SBM_ASSERT_OK(ctx, sbm_ba_linearize(ctx, sys, p));
    SBM_ASSERT_OK(ctx, sbm_ba_set_damping(ctx, sys, lambda));
    sbm_ba_system_info si = sbm_ba_system_get_info(sys);
    dense_ba d = dense_reference(p, lambda, 0);
    const int64_t n1 = d.n1, n2 = d.n2;
    double cost;
    SBM_ASSERT_OK(ctx, sbm_bal_evaluate(ctx, p, NULL, &cost));
    assert_true(fabs(si.cost - cost) <= 1e-12 * cost);
    assert_true(si.lambda == lambda);

    /* U, V, W, gc, gp against the blocks of the dense J^T J */
    double *U = dalloc(n1 * n1), *V = dalloc(n2 * n2), *W = dalloc(n1 * n2);
    for (int64_t j = 0; j < n1; j++)
        for (int64_t i = 0; i < n1; i++)
            if (i / 9 == j / 9) U[i + j * n1] = d.H[i + j * d.n];
    for (int64_t j = 0; j < n2; j++) {
        for (int64_t i = 0; i < n2; i++)
            if (i / 3 == j / 3) V[i + j * n2] = d.H[(n1 + i) + (n1 + j) * d.n];
        for (int64_t i = 0; i < n1; i++) W[i + j * n1] = d.H[i + (n1 + j) * d.n];
    }
    sbm_test_assert_cbc_dense(si.U, U, 1e-12);
    sbm_test_assert_cbc_dense(si.V, V, 1e-12);
    sbm_test_assert_cbc_dense(si.W, W, 1e-12);
    double *hgc = host_vec(ctx, si.gc, n1), *hgp = host_vec(ctx, si.gp, n2);
    sbm_test_assert_near(hgc, d.g, n1, 1e-12, "gc");
    sbm_test_assert_near(hgp, d.g + n1, n2, 1e-12, "gp");

    /* S and rhs */
    sbm_cbc *S = NULL;
    double *drhs = dev_vec(ctx, NULL, n1);
    SBM_TEST_OK_OR_SKIP(e, sbm_ba_schur(ctx, si.U, si.V, si.W, si.gc, si.gp, &S, drhs));
    double *Sup = upper_blocks(d.S, n1, 9);
    sbm_test_assert_cbc_dense(S, Sup, 1e-9);
    double *hrhs = host_vec(ctx, drhs, n1);
    sbm_test_assert_near(hrhs, d.rhs, n1, 1e-9, "rhs");

    /* the convenience call: S and the rhs on the host */
    {
        sbm_cbc *S3 = NULL;
        double *hr = dalloc(n1);
        SBM_TEST_OK_OR_SKIP(e, sbm_ba_system_reduce(ctx, sys, &S3, hr));
        sbm_test_assert_cbc_dense(S3, Sup, 1e-9);
        sbm_test_assert_near(hr, d.rhs, n1, 1e-9, "rhs of sbm_ba_system_reduce");
        sbm_cbc_destroy(S3);
        SBM_ASSERT_OK(ctx, sbm_ba_system_reduce(ctx, sys, &S3, NULL));
        sbm_cbc_destroy(S3);
        SBM_ASSERT_FAILS(ctx, sbm_ba_system_reduce(ctx, sys, NULL, hr), SBM_ERR_NULL_ARGUMENT, "argument S");
        SBM_ASSERT_FAILS(ctx, sbm_ba_system_reduce(ctx, NULL, &S3, hr), SBM_ERR_NULL_ARGUMENT, "system");
        assert_null(S3);
        free(hr);
    }

    /* the same S from finite-difference Jacobians (independent of the analytic model) */
    dense_ba f = dense_reference(p, lambda, 1);
    double *Sfd = upper_blocks(f.S, n1, 9);
    sbm_test_assert_cbc_dense(S, Sfd, 1e-5);

    /* plan / execute: back-substitution and matrix-free S x */
    sbm_schur_plan *plan = NULL, *mf = NULL;
    sbm_cbc *S2 = NULL, *none = (sbm_cbc *)&plan;
    SBM_ASSERT_OK(ctx, sbm_ba_schur_plan(ctx, si.U, si.V, si.W, 0, &plan, &S2));
    SBM_ASSERT_OK(ctx, sbm_ba_schur_execute(ctx, plan, si.U, si.V, si.W, si.gc, si.gp, S2, drhs));
    sbm_test_assert_cbc_dense(S2, Sup, 1e-9);
    SBM_ASSERT_OK(ctx, sbm_ba_schur_plan(ctx, si.U, si.V, si.W, SBM_SCHUR_MATRIX_FREE, &mf, &none));
    assert_null(none);
    SBM_ASSERT_OK(ctx, sbm_ba_schur_execute(ctx, mf, si.U, si.V, si.W, si.gc, si.gp, NULL, drhs));
    free(hrhs);
    hrhs = host_vec(ctx, drhs, n1);
    sbm_test_assert_near(hrhs, d.rhs, n1, 1e-9, "matrix-free rhs");
    double *x = sbm_test_random_vector(3, n1), *want = dalloc(n1);
    double *dx = dev_vec(ctx, x, n1), *dy = dev_vec(ctx, NULL, n1);
    dense_mv(d.S, n1, n1, x, want);
    SBM_ASSERT_OK(ctx, sbm_ba_schur_multiply(ctx, mf, si.U, si.W, dx, dy));
    double *got = host_vec(ctx, dy, n1);
    sbm_test_assert_near(got, want, n1, 1e-9, "matrix-free S x");
    free(got);
    SBM_ASSERT_OK(ctx, sbm_ba_schur_multiply(ctx, plan, si.U, si.W, dx, dy));
    got = host_vec(ctx, dy, n1);
    sbm_test_assert_near(got, want, n1, 1e-9, "S x with the explicit plan");
    free(got);
    /* dp = V^-1 (gp - W^T dc) */
    double *dp = dev_vec(ctx, NULL, n2), *t = dalloc(n2), *wantp = dalloc(n2);
    for (int64_t j = 0; j < n2; j++) {
        double s = d.g[n1 + j];
        for (int64_t i = 0; i < n1; i++) s -= W[i + j * n1] * x[i];
        t[j] = s;
    }
    dense_mv(d.Vinv, n2, n2, t, wantp);
    SBM_ASSERT_OK(ctx, sbm_ba_back_substitute(ctx, mf, si.W, si.gp, dx, dp));
    got = host_vec(ctx, dp, n2);
    sbm_test_assert_near(got, wantp, n2, 1e-9, "back-substitution");
    free(got);

    /* GPU equals CPU: the same S through the host context */
    if (sbm_ctx_backend(ctx) != SBM_BACKEND_CPU) {
        sbm_cbc *hU = NULL, *hV = NULL, *hW = NULL, *hS = NULL;
        SBM_ASSERT_OK(e->host, sbm_cbc_copy(e->host, si.U, &hU));
        SBM_ASSERT_OK(e->host, sbm_cbc_copy(e->host, si.V, &hV));
        SBM_ASSERT_OK(e->host, sbm_cbc_copy(e->host, si.W, &hW));
        SBM_ASSERT_OK(e->host, sbm_ba_schur(e->host, hU, hV, hW, NULL, NULL, &hS, NULL));
        double *a = sbm_test_cbc_dense(S), *b = sbm_test_cbc_dense(hS);
        sbm_test_assert_near(a, b, n1 * n1, 1e-12, "S on the device vs the host");
        free(a), free(b);
        sbm_cbc_destroy(hU), sbm_cbc_destroy(hV), sbm_cbc_destroy(hW), sbm_cbc_destroy(hS);
    }

    sbm__free(ctx, dx), sbm__free(ctx, dy), sbm__free(ctx, dp), sbm__free(ctx, drhs);
    free(x), free(want), free(t), free(wantp), free(hgc), free(hgp), free(hrhs);
    free(U), free(V), free(W), free(Sup), free(Sfd);
    sbm_cbc_destroy(S);
    sbm_cbc_destroy(S2);
    sbm_schur_plan_destroy(plan);
    sbm_schur_plan_destroy(mf);
    dense_free(&d);
    dense_free(&f);
    sbm_ba_system_destroy(sys);
}

/* A generated problem of dubrovnik-3-7's size (3 cameras, 7 points), undamped and damped. */
static void test_schur_dubrovnik_sized(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_generate_options o = sbm_bal_generate_defaults(3, 7, 3, 2024);
    sbm_bal_problem *p = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &o, &p));
    check_system(e, p, 0.0);
    check_system(e, p, 1e-3);
    sbm_bal_destroy(p);
    /* 2 observations per point, 10 cameras, damped (an undamped V would be singular) */
    o = sbm_bal_generate_defaults(10, 40, 2, 7);
    SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &o, &p));
    check_system(e, p, 0.1);
    sbm_bal_destroy(p);
}

/* The Schur operations on generic shapes: U upper with off-diagonal blocks, empty W columns,
 * no points at all. */
static void test_schur_generic(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const int shapes[][2] = {{9, 3}, {6, 3}, {3, 3}, {2, 5}, {4, 4}, {1, 1}, {11, 4}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        for (int np = 0; np <= 9; np += 9) {
            const int p = shapes[s][0], q = shapes[s][1];
            const int64_t nc = 5;
            const uint64_t seed = 100 + 10 * s + (uint64_t)np;
            sbm_cbc *W = sbm_test_random_cbc(e->ctx, seed, nc, np, p, q, 0.4);
            sbm_cbc *V = sbm_test_random_bdiag_spd(e->ctx, seed + 1, np, q);
            /* U: upper triangle of a random matrix plus SPD diagonal blocks */
            sbm_cbc *R = sbm_test_random_cbc(e->host, seed + 2, nc, nc, p, p, 0.5);
            sbm_cbc *Dg = sbm_test_random_bdiag_spd(e->host, seed + 3, nc, p);
            sbm_cbc *RD = NULL, *Uh = NULL, *U = NULL;
            SBM_ASSERT_OK(e->host, sbm_cbc_add(e->host, 1.0, R, 1.0, Dg, &RD));
            {
                /* keep the blocks with row <= column */
                sbm_cbc_info ri = sbm_cbc_get_info(RD);
                int32_t *br = malloc((size_t)(ri.nnzb + 1) * sizeof(int32_t)),
                        *bc = malloc((size_t)(ri.nnzb + 1) * sizeof(int32_t));
                double *bv = malloc((size_t)(ri.nnzb + 1) * (size_t)(p * p) * sizeof(double));
                int64_t t = 0;
                for (int64_t j = 0; j < ri.nbc; j++)
                    for (int64_t k = ri.colptr[j]; k < ri.colptr[j + 1]; k++)
                        if (ri.rowind[k] <= j) {
                            br[t] = ri.rowind[k], bc[t] = (int32_t)j;
                            const double *src = ri.values + k * p * p;
                            double *dst = bv + t * p * p;
                            /* a symmetric matrix: its diagonal blocks are symmetric */
                            for (int c2 = 0; c2 < p; c2++)
                                for (int r2 = 0; r2 < p; r2++)
                                    dst[r2 + c2 * p] = ri.rowind[k] < j ? src[r2 + c2 * p]
                                                       : 0.5 * (src[r2 + c2 * p] + src[c2 + r2 * p]);
                            t++;
                        }
                SBM_ASSERT_OK(e->host, sbm_cbc_from_triplets(e->host, &Uh, nc, nc, p, p, t, br, bc, bv));
                free(br), free(bc), free(bv);
            }
            SBM_ASSERT_OK(e->ctx, sbm_cbc_copy(e->ctx, Uh, &U));
            const int64_t n1 = nc * p, n2 = np * q;
            double *Ud = sym_dense(U), *Vd = sbm_test_cbc_dense(V), *Wd = sbm_test_cbc_dense(W);
            double *Vi = dense_inverse(Vd, n2);
            double *Sd = dalloc(n1 * n1);
            for (int64_t j = 0; j < n1; j++)
                for (int64_t i = 0; i < n1; i++) {
                    double acc = Ud[i + j * n1];
                    for (int64_t a = 0; a < n2; a++)
                        for (int64_t b = 0; b < n2; b++)
                            acc -= Wd[i + a * n1] * Vi[a + b * n2] * Wd[j + b * n1];
                    Sd[i + j * n1] = acc;
                }
            double *gc = sbm_test_random_vector(seed + 4, n1), *gp = sbm_test_random_vector(seed + 5, n2);
            double *rw = dalloc(n1), *vg = dalloc(n2);
            dense_mv(Vi, n2, n2, gp, vg);
            dense_mv(Wd, n1, n2, vg, rw);
            for (int64_t i = 0; i < n1; i++) rw[i] = gc[i] - rw[i];
            double *dgc = dev_vec(e->ctx, gc, n1), *dgp = dev_vec(e->ctx, gp, n2), *drhs = dev_vec(e->ctx, NULL, n1);
            sbm_cbc *S = NULL;
            SBM_TEST_OK_OR_SKIP(e, sbm_ba_schur(e->ctx, U, V, W, dgc, dgp, &S, drhs));
            double *Sup = upper_blocks(Sd, n1, p);
            sbm_test_assert_cbc_dense(S, Sup, 1e-10);
            double *h = host_vec(e->ctx, drhs, n1);
            sbm_test_assert_near(h, rw, n1, 1e-10, "rhs");
            free(h);
            /* matrix-free S x with the general U */
            sbm_schur_plan *mf = NULL;
            SBM_ASSERT_OK(e->ctx, sbm_ba_schur_plan(e->ctx, U, V, W, SBM_SCHUR_MATRIX_FREE, &mf, NULL));
            SBM_ASSERT_OK(e->ctx, sbm_ba_schur_execute(e->ctx, mf, U, V, W, NULL, NULL, NULL, NULL));
            double *x = sbm_test_random_vector(seed + 6, n1), *want = dalloc(n1);
            dense_mv(Sd, n1, n1, x, want);
            double *dx = dev_vec(e->ctx, x, n1), *dy = dev_vec(e->ctx, NULL, n1);
            SBM_ASSERT_OK(e->ctx, sbm_ba_schur_multiply(e->ctx, mf, U, W, dx, dy));
            h = host_vec(e->ctx, dy, n1);
            sbm_test_assert_near(h, want, n1, 1e-10, "matrix-free S x");
            free(h);
            sbm_schur_plan_destroy(mf);
            sbm__free(e->ctx, dgc), sbm__free(e->ctx, dgp), sbm__free(e->ctx, drhs);
            sbm__free(e->ctx, dx), sbm__free(e->ctx, dy);
            free(Ud), free(Vd), free(Wd), free(Vi), free(Sd), free(gc), free(gp), free(rw), free(vg);
            free(Sup), free(x), free(want);
            sbm_cbc_destroy(S), sbm_cbc_destroy(U), sbm_cbc_destroy(Uh), sbm_cbc_destroy(RD);
            sbm_cbc_destroy(R), sbm_cbc_destroy(Dg), sbm_cbc_destroy(V), sbm_cbc_destroy(W);
        }
    }
}

static void test_schur_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    sbm_cbc *W = sbm_test_random_cbc(ctx, 1, 4, 6, 9, 3, 0.5);
    sbm_cbc *V = sbm_test_random_bdiag_spd(ctx, 2, 6, 3);
    sbm_cbc *U = sbm_test_random_bdiag_spd(ctx, 3, 4, 9);
    sbm_cbc *V5 = sbm_test_random_bdiag_spd(ctx, 4, 5, 3);
    sbm_cbc *V2 = sbm_test_random_bdiag_spd(ctx, 5, 6, 2);
    sbm_cbc *U6 = sbm_test_random_bdiag_spd(ctx, 6, 4, 6);
    sbm_cbc *Ulow = sbm_test_random_cbc(ctx, 7, 4, 4, 9, 9, 1.0);
    double *wv = sbm_test_cbc_dense(W), *vv = sbm_test_cbc_dense(V), *uv = sbm_test_cbc_dense(U);
    sbm_cbc *S = NULL;
    sbm_schur_plan *plan = NULL;
    double *gc = dev_vec(ctx, NULL, 36), *gp = dev_vec(ctx, NULL, 18), *rhs = dev_vec(ctx, NULL, 36);

    SBM_ASSERT_FAILS(ctx, sbm_ba_schur(ctx, U, V, W, gc, gp, NULL, rhs), SBM_ERR_NULL_ARGUMENT, "argument S");
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur(ctx, NULL, V, W, gc, gp, &S, rhs), SBM_ERR_NULL_ARGUMENT, "U");
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur(ctx, U, V5, W, gc, gp, &S, rhs), SBM_ERR_DIMENSION_MISMATCH,
                     "argument V: 5 x 5 blocks, but W has 6 block columns");
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur(ctx, U, V2, W, gc, gp, &S, rhs), SBM_ERR_BLOCK_SHAPE,
                     "argument V: blocks are 2x2, but W's 9x3 blocks need 3x3");
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur(ctx, U6, V, W, gc, gp, &S, rhs), SBM_ERR_BLOCK_SHAPE,
                     "argument U: blocks are 6x6");
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur(ctx, V, V, W, gc, gp, &S, rhs), SBM_ERR_DIMENSION_MISMATCH,
                     "argument U: 6 x 6 blocks, but W has 4 block rows");
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur(ctx, Ulow, V, W, gc, gp, &S, rhs), SBM_ERR_INVALID_ARGUMENT,
                     "upper");
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur(ctx, U, V, W, NULL, gp, &S, rhs), SBM_ERR_NULL_ARGUMENT, "gc");
    assert_null(S);
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur_plan(ctx, U, V, W, 0, &plan, NULL), SBM_ERR_NULL_ARGUMENT,
                     "SBM_SCHUR_MATRIX_FREE");
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur_plan(ctx, U, V, W, 4u, &plan, &S), SBM_ERR_INVALID_ARGUMENT,
                     "unknown bits 0x4");
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur_plan(ctx, U, V, W, 0, NULL, &S), SBM_ERR_NULL_ARGUMENT, "plan");
    assert_int_equal(sbm_ba_schur(NULL, U, V, W, gc, gp, &S, rhs), SBM_ERR_NULL_ARGUMENT);

    /* a V block that is not SPD */
    sbm_cbc *Vbad = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, V, &Vbad));
    {
        double *h = host_vec(ctx, sbm_cbc_get_info(Vbad).values, 54);
        h[9 * 4] = -1.0; /* block 4, entry (0,0) */
        SBM_ASSERT_OK(ctx, sbm__vec_upload(ctx, sbm_cbc_get_info(Vbad).values, h, 54));
        free(h);
    }
    SBM_TEST_OK_OR_SKIP(e, sbm_ba_schur_plan(ctx, U, V, W, 0, &plan, &S));
    SBM_ASSERT_FAILS(ctx, sbm_ba_back_substitute(ctx, plan, W, gp, gc, gp), SBM_ERR_INVALID_ARGUMENT,
                     "no successful sbm_ba_schur_execute");
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur_execute(ctx, plan, U, Vbad, W, gc, gp, S, rhs),
                     SBM_ERR_NOT_POSITIVE_DEFINITE, "sbm_ba_schur_execute: sbm_bdiag_inverse");
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur_execute(ctx, plan, U, V, W, gc, NULL, S, rhs),
                     SBM_ERR_NULL_ARGUMENT, "gp");
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur_execute(ctx, plan, U6, V, W, gc, gp, S, rhs),
                     SBM_ERR_BLOCK_SHAPE, "argument U");
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur_execute(ctx, NULL, U, V, W, gc, gp, S, rhs),
                     SBM_ERR_NULL_ARGUMENT, "plan");
    sbm_cbc *Ufull = sbm_test_random_cbc(ctx, 8, 4, 4, 9, 9, 0.0); /* empty pattern */
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur_execute(ctx, plan, Ufull, V, W, gc, gp, S, rhs),
                     SBM_ERR_PLAN_MISMATCH, "pattern differs");
    SBM_ASSERT_OK(ctx, sbm_ba_schur_execute(ctx, plan, U, V, W, gc, gp, S, rhs));
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur_multiply(ctx, plan, U, W, rhs, rhs), SBM_ERR_ALIASING, "same array");
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur_multiply(ctx, plan, U, W, NULL, rhs), SBM_ERR_NULL_ARGUMENT, "x");
    SBM_ASSERT_FAILS(ctx, sbm_ba_back_substitute(ctx, plan, V, gp, gc, gp), SBM_ERR_PLAN_MISMATCH,
                     "argument W: 6 x 6 blocks of 3x3");
    SBM_ASSERT_FAILS(ctx, sbm_ba_back_substitute(ctx, plan, W, gp, NULL, gp), SBM_ERR_NULL_ARGUMENT, "dc");
    /* the inputs are unchanged by the failures */
    double *w2 = sbm_test_cbc_dense(W), *v2 = sbm_test_cbc_dense(V), *u2 = sbm_test_cbc_dense(U);
    assert_memory_equal(w2, wv, 36 * 18 * sizeof(double));
    assert_memory_equal(v2, vv, 18 * 18 * sizeof(double));
    assert_memory_equal(u2, uv, 36 * 36 * sizeof(double));
    free(w2), free(v2), free(u2), free(wv), free(vv), free(uv);

    /* objects of another backend */
    if (sbm_ctx_backend(ctx) != SBM_BACKEND_CPU) {
        sbm_cbc *hW = NULL;
        SBM_ASSERT_OK(e->host, sbm_cbc_copy(e->host, W, &hW));
        SBM_ASSERT_FAILS(ctx, sbm_ba_schur(ctx, U, V, hW, gc, gp, &S, rhs), SBM_ERR_BACKEND_MISMATCH, "W");
        sbm_cbc_destroy(hW);
    }
    sbm_schur_plan_destroy(plan);
    sbm_schur_plan_destroy(NULL);
    sbm_cbc_destroy(S), sbm_cbc_destroy(Vbad), sbm_cbc_destroy(Ufull);
    sbm_cbc_destroy(W), sbm_cbc_destroy(V), sbm_cbc_destroy(U), sbm_cbc_destroy(V5);
    sbm_cbc_destroy(V2), sbm_cbc_destroy(U6), sbm_cbc_destroy(Ulow);
    sbm__free(ctx, gc), sbm__free(ctx, gp), sbm__free(ctx, rhs);
}

static void test_system_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    sbm_bal_generate_options o = sbm_bal_generate_defaults(3, 7, 3, 1);
    sbm_bal_problem *p = NULL, *q = NULL;
    SBM_ASSERT_OK(ctx, sbm_bal_generate(ctx, &o, &p));
    o = sbm_bal_generate_defaults(4, 7, 3, 1);
    SBM_ASSERT_OK(ctx, sbm_bal_generate(ctx, &o, &q));
    sbm_ba_system *s = (sbm_ba_system *)&o;
    SBM_ASSERT_FAILS(ctx, sbm_ba_system_create(ctx, NULL, &s), SBM_ERR_NULL_ARGUMENT, "problem");
    assert_null(s);
    SBM_ASSERT_FAILS(ctx, sbm_ba_system_create(ctx, p, NULL), SBM_ERR_NULL_ARGUMENT, "system");
    SBM_ASSERT_OK(ctx, sbm_ba_system_create(ctx, p, &s));
    SBM_ASSERT_FAILS(ctx, sbm_ba_linearize(ctx, s, q), SBM_ERR_DIMENSION_MISMATCH, "4 cameras");
    SBM_ASSERT_FAILS(ctx, sbm_ba_set_damping(ctx, s, -1.0), SBM_ERR_INVALID_ARGUMENT, "lambda");
    SBM_ASSERT_FAILS(ctx, sbm_ba_set_damping(ctx, s, NAN), SBM_ERR_INVALID_ARGUMENT, "lambda");
    SBM_ASSERT_FAILS(ctx, sbm_ba_linearize(ctx, NULL, p), SBM_ERR_NULL_ARGUMENT, "system");
    /* a point on the image plane of its camera: refused, the system unchanged */
    SBM_ASSERT_OK(ctx, sbm_ba_linearize(ctx, s, p));
    double *u0 = sbm_test_cbc_dense(sbm_ba_system_get_info(s).U);
    const double cost0 = sbm_ba_system_get_info(s).cost;
    sbm_bal_info pi = sbm_bal_get_info(p);
    const int64_t c = pi.obs_camera[0];
    /* camera c without rotation (R = I exactly, whatever the arithmetic: the series of the
     * small angle) and t.z = -X.z of point 0: P.z = X.z + t.z is exactly 0 on every backend
     * (a rotated point would be on the plane only up to the rounding of R X) */
    for (int a = 0; a < 3; a++) pi.camera_params[9 * c + a] = 0.0;
    pi.camera_params[9 * c + 5] = -pi.point_params[2];
    SBM_ASSERT_FAILS(ctx, sbm_ba_linearize(ctx, s, p), SBM_ERR_NOT_FINITE,
                     "observation 0 (camera 0, point 0): the prediction is not finite");
    double *u1 = sbm_test_cbc_dense(sbm_ba_system_get_info(s).U);
    assert_memory_equal(u0, u1, 27 * 27 * sizeof(double));
    assert_true(sbm_ba_system_get_info(s).cost == cost0);
    SBM_ASSERT_OK(ctx, sbm_ba_set_damping(ctx, s, 0.5));
    free(u0), free(u1);
    sbm_ba_system_destroy(s);
    sbm_ba_system_destroy(NULL);
    sbm_ba_system_info z = sbm_ba_system_get_info(NULL);
    assert_null(z.U);
    sbm_bal_destroy(p);
    sbm_bal_destroy(q);
}

/* ---------------------------------------------------------------------------------------- */
/* Levenberg-Marquardt                                                                      */
/* ---------------------------------------------------------------------------------------- */

typedef struct trace {
    int n;
    double before[32], after[32];
    int accepted[32];
    double schur[32];
} trace;

static void record(void *user, const sbm_iteration_report *r)
{
    trace *t = user;
    if (t->n < 32) {
        t->before[t->n] = r->cost_before;
        t->after[t->n] = r->cost;
        t->accepted[t->n] = r->accepted;
        t->schur[t->n] = r->time_schur;
        t->n++;
    }
}

static void run_lm(sbm_test_env *e, const char *file, int iterations, double factor)
{
    sbm_bal_problem *p = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_read(e->ctx, sbm_test_data_path(file), &p));
    sbm_solver_options o = sbm_solver_default_options();
    o.initial_lambda = 1e-4, o.min_lambda = 0.0; /* the damping these factors were pinned with */
    trace t;
    memset(&t, 0, sizeof t);
    o.max_iterations = iterations;
    o.callback = record;
    o.user = &t;
    sbm_solver_summary s;
    SBM_TEST_OK_OR_SKIP(e, sbm_ba_solve(e->ctx, p, &o, &s));
    double cost;
    SBM_ASSERT_OK(e->ctx, sbm_bal_evaluate(e->ctx, p, NULL, &cost));
    assert_true(fabs(cost - s.final_cost) <= 1e-9 * cost);
    assert_int_equal(s.linear_solver, SBM_LINEAR_DENSE_CHOLESKY);
    assert_int_equal(t.n, s.iterations);
    for (int k = 0; k < t.n; k++) {
        assert_true(t.after[k] <= t.before[k]);
        assert_true(t.schur[k] > 0.0);
        print_message("  %s iteration %d: cost %.6e -> %.6e%s (Schur %.3f s)\n", file, k + 1,
                      t.before[k], t.after[k], t.accepted[k] ? "" : " rejected", t.schur[k]);
    }
    /* orders of magnitude in a few iterations */
    if (!(s.final_cost * factor < s.initial_cost))
        fail_msg("%s: cost %.6e -> %.6e in %d iterations, expected a factor %g", file,
                 s.initial_cost, s.final_cost, s.iterations, factor);
    sbm_bal_destroy(p);
}

static void test_lm_ladybug(void **state)
{
    /* 8.51e5 -> 1.48e4 after two iterations */
    run_lm(sbm_test_begin(state), "bal/problem-49-7776-pre.txt", 3, 50.0);
}

static void test_lm_trafalgar(void **state)
{
    /* 4.41e6 -> 3.5e4 after one iteration */
    run_lm(sbm_test_begin(state), "bal/problem-21-11315-pre.txt.bz2", 2, 100.0);
}

static void test_lm_linear_solvers(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const sbm_linear_solver kinds[] = {SBM_LINEAR_DENSE_CHOLESKY, SBM_LINEAR_PCG, SBM_LINEAR_PCG_MATRIX_FREE};
    double first[3];
    for (int k = 0; k < 3; k++) {
        sbm_bal_generate_options g = sbm_bal_generate_defaults(12, 300, 4, 99);
        sbm_bal_problem *p = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &g, &p));
        sbm_solver_options o = sbm_solver_default_options();
        o.initial_lambda = 1e-4, o.min_lambda = 0.0; /* pinned with the old damping */
        trace t;
        memset(&t, 0, sizeof t);
        o.max_iterations = 3;
        o.linear_solver = kinds[k];
        o.pcg_max_iterations = 500;
        o.pcg_tolerance = 1e-12;
        o.pcg_forcing = SBM_PCG_FORCING_FIXED; /* the first step solved to 1e-12 */
        o.callback = record;
        o.user = &t;
        sbm_solver_summary s;
        SBM_TEST_OK_OR_SKIP(e, sbm_ba_solve(e->ctx, p, &o, &s));
        assert_int_equal(s.linear_solver, kinds[k]);
        assert_true(s.final_cost * 20.0 < s.initial_cost);
        first[k] = t.after[0];
        sbm_bal_destroy(p);
    }
    /* the same first step whichever way the reduced system is solved */
    assert_true(fabs(first[1] - first[0]) <= 1e-6 * first[0]);
    assert_true(fabs(first[2] - first[0]) <= 1e-6 * first[0]);
}

static void test_lm_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_generate_options g = sbm_bal_generate_defaults(3, 7, 3, 5);
    sbm_bal_problem *p = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &g, &p));
    double *before = malloc(27 * sizeof(double));
    memcpy(before, sbm_bal_get_info(p).camera_params, 27 * sizeof(double));
    sbm_solver_options o = sbm_solver_default_options();
    SBM_ASSERT_FAILS(e->ctx, sbm_ba_solve(e->ctx, NULL, &o, NULL), SBM_ERR_NULL_ARGUMENT, "problem");
    o.max_iterations = -1;
    SBM_ASSERT_FAILS(e->ctx, sbm_ba_solve(e->ctx, p, &o, NULL), SBM_ERR_INVALID_ARGUMENT, "max_iterations");
    o = sbm_solver_default_options();
    o.linear_solver = (sbm_linear_solver)9;
    SBM_ASSERT_FAILS(e->ctx, sbm_ba_solve(e->ctx, p, &o, NULL), SBM_ERR_INVALID_ARGUMENT, "linear_solver = 9");
    o = sbm_solver_default_options();
    o.pcg_tolerance = 0.0;
    SBM_ASSERT_FAILS(e->ctx, sbm_ba_solve(e->ctx, p, &o, NULL), SBM_ERR_INVALID_ARGUMENT, "pcg_tolerance");
    o = sbm_solver_default_options();
    o.initial_lambda = -1.0;
    SBM_ASSERT_FAILS(e->ctx, sbm_ba_solve(e->ctx, p, &o, NULL), SBM_ERR_INVALID_ARGUMENT, "initial_lambda");
    o = sbm_solver_default_options();
    o.min_lambda = -1.0;
    SBM_ASSERT_FAILS(e->ctx, sbm_ba_solve(e->ctx, p, &o, NULL), SBM_ERR_INVALID_ARGUMENT,
                     "argument options: min_lambda = -1 must be finite and >= 0");
    assert_memory_equal(before, sbm_bal_get_info(p).camera_params, 27 * sizeof(double));
    /* zero iterations: nothing changes, the summary has the cost */
    o = sbm_solver_default_options();
    o.max_iterations = 0;
    sbm_solver_summary s;
    SBM_TEST_OK_OR_SKIP(e, sbm_ba_solve(e->ctx, p, &o, &s));
    assert_int_equal(s.iterations, 0);
    assert_true(s.initial_cost == s.final_cost && s.initial_cost > 0.0);
    assert_memory_equal(before, sbm_bal_get_info(p).camera_params, 27 * sizeof(double));
    /* NULL options: the defaults */
    SBM_ASSERT_OK(e->ctx, sbm_ba_solve(e->ctx, p, NULL, &s));
    assert_true(s.final_cost < s.initial_cost);
    free(before);
    sbm_bal_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_camera_jacobian),
        SBM_TEST_BOTH(test_rotations),
        SBM_TEST_BOTH(test_schur_dubrovnik_sized),
        SBM_TEST_BOTH(test_schur_generic),
        SBM_TEST_BOTH(test_schur_errors),
        SBM_TEST_BOTH(test_system_errors),
        SBM_TEST_BOTH(test_lm_ladybug),
        SBM_TEST_BOTH(test_lm_trafalgar),
        SBM_TEST_BOTH(test_lm_linear_solvers),
        SBM_TEST_BOTH(test_lm_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
