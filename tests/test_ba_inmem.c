// SPDX-License-Identifier: BSD-3-Clause
/* BAL problems built in memory (sbm_bal_problem_create), constant cameras and points, camera
 * priors: the copy and every validation error; the linearisation with constant blocks against a
 * dense reference of the problem without them (the damped step of the free parameters is the
 * reduced problem's); the prior's terms in U, gc and the cost; solves that leave constant blocks
 * bitwise as they were, with the CUDA backend against the CPU one ([cuda] skips without a
 * GPU); the strict check of untouched blocks. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A seeded generated problem's arrays (owned by the returned generated problem). */
static sbm_bal_problem *generated(sbm_ctx *ctx, int64_t nc, int64_t np, int k, uint64_t seed,
                                  sbm_bal_problem_desc *d)
{
    sbm_bal_generate_options g = sbm_bal_generate_defaults(nc, np, k, seed);
    g.perturbation = 0.5;
    sbm_bal_problem *p = NULL;
    SBM_ASSERT_OK(ctx, sbm_bal_generate(ctx, &g, &p));
    const sbm_bal_info pi = sbm_bal_get_info(p);
    memset(d, 0, sizeof *d);
    d->cameras = pi.cameras, d->points = pi.points, d->observations = pi.observations;
    d->obs_camera = pi.obs_camera, d->obs_point = pi.obs_point, d->obs_xy = pi.obs_xy;
    d->camera_params = pi.camera_params, d->point_params = pi.point_params;
    return p;
}

static void test_create_copies(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_problem_desc d;
    sbm_bal_problem *g = generated(e->ctx, 5, 40, 3, 7, &d), *p = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_problem_create(e->ctx, &d, &p));
    const sbm_bal_info a = sbm_bal_get_info(g), b = sbm_bal_get_info(p);
    assert_int_equal(b.cameras, 5);
    assert_int_equal(b.points, 40);
    assert_int_equal(b.observations, 120);
    assert_true(b.camera_params != a.camera_params && b.in_memory == 1 && a.in_memory == 0);
    assert_memory_equal(b.obs_camera, a.obs_camera, 120 * sizeof(int32_t));
    assert_memory_equal(b.obs_point, a.obs_point, 120 * sizeof(int32_t));
    assert_memory_equal(b.obs_xy, a.obs_xy, 240 * sizeof(double));
    assert_memory_equal(b.camera_params, a.camera_params, 45 * sizeof(double));
    assert_memory_equal(b.point_params, a.point_params, 120 * sizeof(double));
    assert_null(b.camera_constant);
    assert_null(b.camera_has_prior);
    double ca, cb;
    SBM_ASSERT_OK(e->ctx, sbm_bal_evaluate(e->ctx, g, NULL, &ca));
    SBM_ASSERT_OK(e->ctx, sbm_bal_evaluate(e->ctx, p, NULL, &cb));
    assert_true(ca == cb);
    sbm_bal_destroy(p);
    /* empty: no cameras, points or observations (NULL arrays allowed) */
    sbm_bal_problem_desc z;
    memset(&z, 0, sizeof z);
    SBM_ASSERT_OK(e->ctx, sbm_bal_problem_create(e->ctx, &z, &p));
    assert_int_equal(sbm_bal_get_info(p).cameras, 0);
    sbm_bal_destroy(p);
    sbm_bal_destroy(g);
}

static void test_create_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *c = e->ctx;
    sbm_bal_problem_desc d;
    sbm_bal_problem *g = generated(c, 3, 10, 2, 3, &d), *p = (sbm_bal_problem *)1;
    SBM_ASSERT_FAILS(c, sbm_bal_problem_create(c, NULL, &p), SBM_ERR_NULL_ARGUMENT,
                     "sbm_bal_problem_create: argument desc is NULL");
    assert_null(p);
    SBM_ASSERT_FAILS(c, sbm_bal_problem_create(c, &d, NULL), SBM_ERR_NULL_ARGUMENT,
                     "argument problem is NULL");
    sbm_bal_problem_desc x = d;
    x.points = -1;
    SBM_ASSERT_FAILS(c, sbm_bal_problem_create(c, &x, &p), SBM_ERR_INVALID_ARGUMENT,
                     "desc->points = -1 is out of range");
    x = d, x.cameras = (int64_t)INT32_MAX + 1;
    SBM_ASSERT_FAILS(c, sbm_bal_problem_create(c, &x, &p), SBM_ERR_INVALID_ARGUMENT,
                     "desc->cameras = 2147483648 is out of range");
    x = d, x.obs_xy = NULL;
    SBM_ASSERT_FAILS(c, sbm_bal_problem_create(c, &x, &p), SBM_ERR_NULL_ARGUMENT,
                     "desc->obs_xy is NULL (20 entries)");
    int32_t cam[20], pt[20];
    memcpy(cam, d.obs_camera, sizeof cam);
    memcpy(pt, d.obs_point, sizeof pt);
    cam[4] = 7;
    x = d, x.obs_camera = cam;
    SBM_ASSERT_FAILS(c, sbm_bal_problem_create(c, &x, &p), SBM_ERR_INVALID_ARGUMENT,
                     "obs_camera[4] = 7 is not a camera: 0 <= index < 3");
    pt[19] = -2;
    x = d, x.obs_point = pt;
    SBM_ASSERT_FAILS(c, sbm_bal_problem_create(c, &x, &p), SBM_ERR_INVALID_ARGUMENT,
                     "obs_point[19] = -2 is not a point: 0 <= index < 10");
    double cp[27], xy[40];
    memcpy(cp, d.camera_params, sizeof cp);
    memcpy(xy, d.obs_xy, sizeof xy);
    cp[15] = NAN;
    x = d, x.camera_params = cp;
    SBM_ASSERT_FAILS(c, sbm_bal_problem_create(c, &x, &p), SBM_ERR_NOT_FINITE,
                     "camera_params[15] (camera 1, value 6) is nan");
    xy[3] = -INFINITY;
    x = d, x.obs_xy = xy;
    SBM_ASSERT_FAILS(c, sbm_bal_problem_create(c, &x, &p), SBM_ERR_NOT_FINITE,
                     "obs_xy[3] (observation 1, value 1) is -inf");
    assert_null(p);
    sbm_bal_destroy(g);
}

static void test_setter_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *c = e->ctx;
    sbm_bal_problem_desc d;
    sbm_bal_problem *g = generated(c, 3, 10, 2, 3, &d), *p = NULL;
    SBM_ASSERT_OK(c, sbm_bal_problem_create(c, &d, &p));
    SBM_ASSERT_FAILS(c, sbm_bal_set_camera_constant(c, NULL, 0, 1), SBM_ERR_NULL_ARGUMENT,
                     "sbm_bal_set_camera_constant: argument problem is NULL");
    SBM_ASSERT_FAILS(c, sbm_bal_set_camera_constant(c, p, 3, 1), SBM_ERR_INVALID_ARGUMENT,
                     "argument camera = 3 is out of range (0 <= camera < 3)");
    SBM_ASSERT_FAILS(c, sbm_bal_set_point_constant(c, p, -1, 1), SBM_ERR_INVALID_ARGUMENT,
                     "argument point = -1 is out of range (0 <= point < 10)");
    SBM_ASSERT_FAILS(c, sbm_bal_set_point_constant(c, p, 0, 2), SBM_ERR_INVALID_ARGUMENT,
                     "argument constant = 2 is not 0 or 1");
    double mean[9] = {0}, info[81] = {0};
    for (int a = 0; a < 9; a++) info[10 * a] = 1.0;
    SBM_ASSERT_FAILS(c, sbm_bal_set_camera_prior(c, p, 5, mean, info), SBM_ERR_INVALID_ARGUMENT,
                     "sbm_bal_set_camera_prior: argument camera = 5 is out of range");
    SBM_ASSERT_FAILS(c, sbm_bal_set_camera_prior(c, p, 0, NULL, info), SBM_ERR_NULL_ARGUMENT,
                     "argument mean is NULL");
    mean[4] = INFINITY;
    SBM_ASSERT_FAILS(c, sbm_bal_set_camera_prior(c, p, 0, mean, info), SBM_ERR_NOT_FINITE,
                     "mean[4] (camera parameter block 0, value 4) is inf");
    mean[4] = 0.0;
    info[1] = 0.5; /* (1, 0) without (0, 1) */
    SBM_ASSERT_FAILS(c, sbm_bal_set_camera_prior(c, p, 0, mean, info), SBM_ERR_INVALID_ARGUMENT,
                     "argument information is not symmetric: entry (1, 0) = 0.5");
    info[1] = 0.0, info[40] = -1.0;
    SBM_ASSERT_FAILS(c, sbm_bal_set_camera_prior(c, p, 0, mean, info), SBM_ERR_INVALID_ARGUMENT,
                     "argument information is not positive semidefinite: smallest eigenvalue -1");
    info[40] = 0.0; /* singular PSD: a prior on some parameters only is accepted */
    SBM_ASSERT_OK(c, sbm_bal_set_camera_prior(c, p, 0, mean, info));
    assert_int_equal(sbm_bal_get_info(p).camera_priors, 1);
    SBM_ASSERT_OK(c, sbm_bal_set_camera_prior(c, p, 0, mean, info)); /* replaces */
    assert_int_equal(sbm_bal_get_info(p).camera_priors, 1);
    SBM_ASSERT_OK(c, sbm_bal_set_camera_prior(c, p, 0, NULL, NULL)); /* removes */
    assert_int_equal(sbm_bal_get_info(p).camera_priors, 0);
    assert_null(sbm_bal_get_info(p).camera_has_prior);
    /* freeing what was never held allocates nothing */
    SBM_ASSERT_OK(c, sbm_bal_set_point_constant(c, p, 2, 0));
    assert_null(sbm_bal_get_info(p).point_constant);
    SBM_ASSERT_OK(c, sbm_bal_set_point_constant(c, p, 2, 1));
    assert_int_equal(sbm_bal_get_info(p).point_constant[2], 1);
    sbm_bal_destroy(p);
    sbm_bal_destroy(g);
}

/* Dense [U W; W^T V] (n x n, column-major) and g of a linearised system. */
static void dense_system(sbm_test_env *e, const sbm_ba_system *s, double *H, double *g)
{
    const sbm_ba_system_info si = sbm_ba_system_get_info(s);
    const int64_t nc = si.cameras, np = si.points, n = 9 * nc + 3 * np;
    double *U = sbm_test_cbc_dense(si.U), *V = sbm_test_cbc_dense(si.V);
    double *W = sbm_test_cbc_dense(si.W);
    memset(H, 0, (size_t)(n * n) * sizeof(double));
    for (int64_t c = 0; c < 9 * nc; c++)
        for (int64_t r = 0; r < 9 * nc; r++) H[r + n * c] = U[r + 9 * nc * c];
    for (int64_t c = 0; c < 3 * np; c++)
        for (int64_t r = 0; r < 3 * np; r++) H[9 * nc + r + n * (9 * nc + c)] = V[r + 3 * np * c];
    for (int64_t c = 0; c < 3 * np; c++)
        for (int64_t r = 0; r < 9 * nc; r++) {
            H[r + n * (9 * nc + c)] = W[r + 9 * nc * c];
            H[9 * nc + c + n * r] = W[r + 9 * nc * c];
        }
    sbm_test_vec_download_into(e->ctx, g, si.gc, 9 * nc);
    sbm_test_vec_download_into(e->ctx, g + 9 * nc, si.gp, 3 * np);
    free(U), free(V), free(W);
}

/* x = A^-1 b by Gaussian elimination with partial pivoting (A n x n, overwritten). */
static void dense_solve(int64_t n, double *A, double *b)
{
    for (int64_t k = 0; k < n; k++) {
        int64_t piv = k;
        for (int64_t i = k + 1; i < n; i++)
            if (fabs(A[i + n * k]) > fabs(A[piv + n * k])) piv = i;
        for (int64_t j = 0; j < n; j++) {
            const double t = A[k + n * j];
            A[k + n * j] = A[piv + n * j], A[piv + n * j] = t;
        }
        const double t = b[k];
        b[k] = b[piv], b[piv] = t;
        for (int64_t i = k + 1; i < n; i++) {
            const double f = A[i + n * k] / A[k + n * k];
            for (int64_t j = k; j < n; j++) A[i + n * j] -= f * A[k + n * j];
            b[i] -= f * b[k];
        }
    }
    for (int64_t k = n - 1; k >= 0; k--) {
        double s = b[k];
        for (int64_t j = k + 1; j < n; j++) s -= A[k + n * j] * b[j];
        b[k] = s / A[k + n * k];
    }
}

/* Camera 1 and points 2, 5 constant: the damped system's step is zero for them and, for the
 * free parameters, the step of the full system restricted to the free rows and columns (the
 * problem without the constant blocks); the cost is the full one. */
static void test_constant_step_is_reduced(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *c = e->ctx;
    sbm_bal_problem_desc d;
    sbm_bal_problem *g = generated(c, 4, 20, 3, 21, &d), *full = NULL, *held = NULL;
    SBM_ASSERT_OK(c, sbm_bal_problem_create(c, &d, &full));
    SBM_ASSERT_OK(c, sbm_bal_problem_create(c, &d, &held));
    SBM_ASSERT_OK(c, sbm_bal_set_camera_constant(c, held, 1, 1));
    SBM_ASSERT_OK(c, sbm_bal_set_point_constant(c, held, 2, 1));
    SBM_ASSERT_OK(c, sbm_bal_set_point_constant(c, held, 5, 1));
    const int64_t n = 9 * 4 + 3 * 20;
    double *H = malloc((size_t)(n * n) * sizeof(double)), *G = malloc((size_t)n * sizeof(double));
    double *Hr = malloc((size_t)(n * n) * sizeof(double)), *gr = malloc((size_t)n * sizeof(double));
    sbm_ba_system *sf = NULL, *sh = NULL;
    SBM_ASSERT_OK(c, sbm_ba_system_create(c, full, &sf));
    SBM_ASSERT_OK(c, sbm_ba_system_create(c, held, &sh));
    SBM_ASSERT_OK(c, sbm_ba_linearize(c, sf, full));
    SBM_ASSERT_OK(c, sbm_ba_linearize(c, sh, held));
    assert_true(sbm_ba_system_get_info(sf).cost == sbm_ba_system_get_info(sh).cost);
    SBM_ASSERT_OK(c, sbm_ba_set_damping(c, sf, 1e-2));
    SBM_ASSERT_OK(c, sbm_ba_set_damping(c, sh, 1e-2));
    dense_system(e, sf, H, G);
    dense_system(e, sh, Hr, gr);
    dense_solve(n, Hr, gr); /* the step with constants */
    int free_[96];
    int64_t nf = 0;
    for (int64_t i = 0; i < n; i++) {
        const int fixed = (i >= 9 && i < 18) || (i >= 36 + 6 && i < 36 + 9) ||
                          (i >= 36 + 15 && i < 36 + 18);
        if (fixed)
            assert_true(gr[i] == 0.0);
        else
            free_[nf++] = (int)i;
    }
    assert_int_equal(nf, n - 9 - 6);
    double *Hf = malloc((size_t)(nf * nf) * sizeof(double)), *gf = malloc((size_t)nf * sizeof(double));
    for (int64_t b = 0; b < nf; b++) {
        gf[b] = G[free_[b]];
        for (int64_t a = 0; a < nf; a++) Hf[a + nf * b] = H[free_[a] + n * free_[b]];
    }
    dense_solve(nf, Hf, gf); /* the reduced problem's step */
    double scale = 0.0;
    for (int64_t b = 0; b < nf; b++) scale = fmax(scale, fabs(gf[b]));
    for (int64_t b = 0; b < nf; b++) assert_true(fabs(gr[free_[b]] - gf[b]) <= 1e-8 * scale);
    free(Hf), free(gf), free(H), free(G), free(Hr), free(gr);
    sbm_ba_system_destroy(sf);
    sbm_ba_system_destroy(sh);
    sbm_bal_destroy(full);
    sbm_bal_destroy(held);
    sbm_bal_destroy(g);
}

/* A camera prior adds Omega to U's block, -Omega (x - mean) to gc and 0.5 d^T Omega d to the
 * cost; nothing else changes. */
static void test_prior_terms(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *c = e->ctx;
    sbm_bal_problem_desc d;
    sbm_bal_problem *g = generated(c, 4, 20, 3, 5, &d), *full = NULL, *pr = NULL;
    SBM_ASSERT_OK(c, sbm_bal_problem_create(c, &d, &full));
    SBM_ASSERT_OK(c, sbm_bal_problem_create(c, &d, &pr));
    sbm_test_rng rng = sbm_test_rng_seed(99);
    double mean[9], L[81], info[81], dx[9];
    for (int a = 0; a < 9; a++) mean[a] = d.camera_params[18 + a] + 0.1 * sbm_test_rng_value(&rng);
    for (int k = 0; k < 81; k++) L[k] = sbm_test_rng_value(&rng);
    for (int j = 0; j < 9; j++) /* info = L L^T, exactly symmetric */
        for (int i = 0; i <= j; i++) {
            double s = 0.0;
            for (int k = 0; k < 9; k++) s += L[i + 9 * k] * L[j + 9 * k];
            info[i + 9 * j] = info[j + 9 * i] = s;
        }
    SBM_ASSERT_OK(c, sbm_bal_set_camera_prior(c, pr, 2, mean, info));
    double want_cost = 0.0, want_g[9];
    for (int a = 0; a < 9; a++) dx[a] = d.camera_params[18 + a] - mean[a];
    for (int a = 0; a < 9; a++) {
        double s = 0.0;
        for (int b = 0; b < 9; b++) s += info[a + 9 * b] * dx[b];
        want_g[a] = -s, want_cost += 0.5 * dx[a] * s;
    }
    const int64_t n = 96;
    double *H0 = malloc(n * n * sizeof(double)), *g0 = malloc(n * sizeof(double));
    double *H1 = malloc(n * n * sizeof(double)), *g1 = malloc(n * sizeof(double));
    sbm_ba_system *s0 = NULL, *s1 = NULL;
    SBM_ASSERT_OK(c, sbm_ba_system_create(c, full, &s0));
    SBM_ASSERT_OK(c, sbm_ba_system_create(c, pr, &s1));
    SBM_ASSERT_OK(c, sbm_ba_linearize(c, s0, full));
    SBM_ASSERT_OK(c, sbm_ba_linearize(c, s1, pr));
    const double c0 = sbm_ba_system_get_info(s0).cost, c1 = sbm_ba_system_get_info(s1).cost;
    assert_true(fabs(c1 - c0 - want_cost) <= 1e-10 * (c1 + want_cost));
    dense_system(e, s0, H0, g0);
    dense_system(e, s1, H1, g1);
    for (int64_t j = 0; j < n; j++) {
        const int in_j = j >= 18 && j < 27;
        for (int64_t i = 0; i < n; i++) {
            const int in_i = i >= 18 && i < 27;
            const double add = in_i && in_j ? info[(i - 18) + 9 * (j - 18)] : 0.0;
            assert_true(fabs(H1[i + n * j] - H0[i + n * j] - add) <=
                        1e-12 * (fabs(H0[i + n * j]) + fabs(add) + 1.0));
        }
        const double add = in_j ? want_g[j - 18] : 0.0;
        assert_true(fabs(g1[j] - g0[j] - add) <= 1e-12 * (fabs(g0[j]) + fabs(add) + 1.0));
    }
    free(H0), free(g0), free(H1), free(g1);
    sbm_ba_system_destroy(s0);
    sbm_ba_system_destroy(s1);
    sbm_bal_destroy(full);
    sbm_bal_destroy(pr);
    sbm_bal_destroy(g);
}

/* A solve with constants and a prior: the constant blocks bitwise as given, the cost lower and
 * converged; a strong prior holds its camera near the mean. On CUDA the final cost is the CPU
 * backend's to 1e-8. */
static void test_solve_held(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *c = e->ctx;
    sbm_bal_problem_desc d;
    sbm_bal_problem *g = generated(c, 6, 60, 3, 17, &d);
    double fc[2];
    for (int run = 0; run < 2; run++) {
        sbm_ctx *rc = run == 0 ? c : e->host;
        sbm_bal_problem *p = NULL;
        SBM_ASSERT_OK(rc, sbm_bal_problem_create(rc, &d, &p));
        SBM_ASSERT_OK(rc, sbm_bal_set_camera_constant(rc, p, 0, 1));
        SBM_ASSERT_OK(rc, sbm_bal_set_point_constant(rc, p, 7, 1));
        double info[81] = {0};
        for (int a = 0; a < 9; a++) info[10 * a] = 1e8;
        SBM_ASSERT_OK(rc, sbm_bal_set_camera_prior(rc, p, 3, d.camera_params + 27, info));
        sbm_solver_options o = sbm_solver_default_options();
        o.linear_solver = SBM_LINEAR_DENSE_CHOLESKY;
        o.max_iterations = 30;
        sbm_solver_summary s;
        SBM_ASSERT_OK(rc, sbm_ba_solve(rc, p, &o, &s));
        const sbm_bal_info pi = sbm_bal_get_info(p);
        assert_memory_equal(pi.camera_params, d.camera_params, 9 * sizeof(double));
        assert_memory_equal(pi.point_params + 21, d.point_params + 21, 3 * sizeof(double));
        for (int a = 0; a < 9; a++)
            assert_true(fabs(pi.camera_params[27 + a] - d.camera_params[27 + a]) < 1e-3);
        assert_true(s.final_cost < 0.1 * s.initial_cost);
        assert_true(s.stop_reason == SBM_STOP_FUNCTION_TOLERANCE ||
                    s.stop_reason == SBM_STOP_GRADIENT_TOLERANCE ||
                    s.stop_reason == SBM_STOP_PARAMETER_TOLERANCE);
        fc[run] = s.final_cost;
        sbm_bal_destroy(p);
    }
    assert_true(fabs(fc[0] - fc[1]) <= 1e-8 * fc[1]);
    sbm_bal_destroy(g);
}

/* A problem built in memory: a camera or point that nothing touches is refused by name unless
 * it is held constant (or, a camera, has a prior); a file's problem is not checked. */
static void test_untouched_blocks(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *c = e->ctx;
    sbm_bal_problem_desc d;
    sbm_bal_problem *g = generated(c, 3, 10, 2, 3, &d), *p = NULL;
    double cam[36], pts[33];
    memcpy(cam, d.camera_params, 27 * sizeof(double));
    memcpy(cam + 27, d.camera_params, 9 * sizeof(double));
    memcpy(pts, d.point_params, 30 * sizeof(double));
    pts[30] = pts[31] = pts[32] = 0.5;
    sbm_bal_problem_desc x = d;
    x.cameras = 4, x.camera_params = cam; /* camera 3: no observation */
    SBM_ASSERT_OK(c, sbm_bal_problem_create(c, &x, &p));
    sbm_ba_system *s = NULL;
    SBM_ASSERT_FAILS(c, sbm_ba_system_create(c, p, &s), SBM_ERR_INVALID_ARGUMENT,
                     "argument problem: camera 3 has no observation and no prior");
    sbm_solver_options o = sbm_solver_default_options();
    SBM_ASSERT_FAILS(c, sbm_ba_solve(c, p, &o, NULL), SBM_ERR_INVALID_ARGUMENT,
                     "camera 3 has no observation and no prior");
    double info[81] = {0};
    info[0] = 1.0;
    SBM_ASSERT_OK(c, sbm_bal_set_camera_prior(c, p, 3, cam, info));
    SBM_ASSERT_OK(c, sbm_ba_system_create(c, p, &s));
    sbm_ba_system_destroy(s);
    sbm_bal_destroy(p);
    x.cameras = 3, x.camera_params = d.camera_params;
    x.points = 11, x.point_params = pts; /* point 10: no observation */
    SBM_ASSERT_OK(c, sbm_bal_problem_create(c, &x, &p));
    SBM_ASSERT_FAILS(c, sbm_ba_system_create(c, p, &s), SBM_ERR_INVALID_ARGUMENT,
                     "argument problem: point 10 has no observation");
    SBM_ASSERT_OK(c, sbm_bal_set_point_constant(c, p, 10, 1));
    SBM_ASSERT_OK(c, sbm_ba_system_create(c, p, &s));
    sbm_ba_system_destroy(s);
    sbm_bal_destroy(p);
    sbm_bal_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_CPU(test_create_copies),
        SBM_TEST_CPU(test_create_errors),
        SBM_TEST_CPU(test_setter_errors),
        SBM_TEST_BOTH(test_constant_step_is_reduced),
        SBM_TEST_BOTH(test_prior_terms),
        SBM_TEST_BOTH(test_solve_held),
        SBM_TEST_BOTH(test_untouched_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
