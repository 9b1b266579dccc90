/* The device-resident BA iteration: the Schur-Jacobi blocks (sbm_ba_schur_diagonal) against a
 * dense reference and the CPU backend, the dense Cholesky where the matrix lives
 * (sbm__dense_spd_solve_device) against LAPACK and its failures, and sbm_ba_solve with every
 * linear solver: the copies between host and device inside the iterations (scalars only, read
 * from the context's counters by the iteration callback), CUDA against the CPU backend cost by
 * cost with and without a robust loss, and bitwise repeatable runs. */
#define _POSIX_C_SOURCE 200809L

#include "ba_internal.h"
#include "test_util.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Helpers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static double *ctx_vec(sbm_ctx *ctx, const double *h, int64_t n)
{
    double *d = sbm__vec_alloc(ctx, n > 0 ? n : 1, "test vector");
    assert_non_null(d);
    SBM_ASSERT_OK(ctx, sbm__vec_upload(ctx, d, h, n));
    return d;
}

static double *host_vec(sbm_ctx *ctx, const double *d, int64_t n)
{
    double *h = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    assert_non_null(h);
    SBM_ASSERT_OK(ctx, sbm__vec_download(ctx, h, d, n));
    return h;
}

/* X = A^-1 B for SPD A (n x n, column-major; only its lower triangle is read), m columns, by
 * LAPACK's dposv on copies. */
static void lapack_spd_solve(const double *A, int64_t n, const double *B, int64_t m, double *X)
{
    double *L = malloc((size_t)(n * n) * sizeof(double));
    assert_non_null(L);
    memcpy(L, A, (size_t)(n * n) * sizeof(double));
    memcpy(X, B, (size_t)(n * m) * sizeof(double));
    assert_int_equal(LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', (lapack_int)n, (lapack_int)m, L,
                                   (lapack_int)n, X, (lapack_int)n),
                     0);
    free(L);
}

/* ---------------------------------------------------------------------------------------- */
/* The Schur-Jacobi blocks                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* The diagonal blocks of U - W V^-1 W^T from the dense forms (U as stored: its diagonal blocks
 * are what the product uses), nc blocks of p x p into out. */
static void dense_schur_diagonal(const sbm_cbc *U, const sbm_cbc *V, const sbm_cbc *W,
                                 double *out)
{
    const sbm_cbc_info wi = sbm_cbc_get_info(W);
    const int64_t m = wi.nbr * wi.r, n = wi.nbc * wi.c, p = wi.r;
    double *u = sbm_test_cbc_dense(U), *v = sbm_test_cbc_dense(V), *w = sbm_test_cbc_dense(W);
    double *wt = malloc((size_t)(n * (m > 0 ? m : 1)) * sizeof(double));
    double *x = malloc((size_t)(n * (m > 0 ? m : 1)) * sizeof(double));
    assert_true(wt && x);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) wt[j + i * n] = w[i + j * m];
    if (n > 0 && m > 0) lapack_spd_solve(v, n, wt, m, x); /* x = V^-1 W^T */
    for (int64_t b = 0; b < wi.nbr; b++)
        for (int64_t c = 0; c < p; c++)
            for (int64_t r = 0; r < p; r++) {
                const int64_t row = b * p + r, col = b * p + c;
                double s = 0.0;
                for (int64_t k = 0; k < n; k++) s += w[row + k * m] * x[k + col * n];
                out[b * p * p + r + c * p] = u[row + col * m] - s;
            }
    free(u), free(v), free(w), free(wt), free(x);
}

/* One case: U (upper, nc x nc of p x p), V (block-diagonal SPD), W; the plan executed; the
 * diagonal against the dense reference, twice bitwise the same. @return the blocks (host). */
static double *schur_diagonal_case(sbm_ctx *ctx, const sbm_cbc *U, const sbm_cbc *V,
                                   const sbm_cbc *W, unsigned flags)
{
    const sbm_cbc_info wi = sbm_cbc_get_info(W);
    const int64_t nc = wi.nbr, p = wi.r, len = nc * p * p;
    sbm_schur_plan *plan = NULL;
    sbm_cbc *S = NULL, *D = NULL;
    SBM_ASSERT_OK(ctx, sbm_ba_schur_plan(ctx, U, V, W, flags, &plan, &S));
    SBM_ASSERT_OK(ctx, sbm__bdiag_pattern_create(ctx, nc, (int)p, &D));
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur_diagonal(ctx, plan, U, W, D), SBM_ERR_INVALID_ARGUMENT,
                     "sbm_ba_schur_diagonal: argument plan: no successful sbm_ba_schur_execute");
    SBM_ASSERT_OK(ctx, sbm_ba_schur_execute(ctx, plan, U, V, W, NULL, NULL, S, NULL));
    SBM_ASSERT_OK(ctx, sbm_ba_schur_diagonal(ctx, plan, U, W, D));
    double *got = sbm_test_cbc_dense(D), *want = malloc((size_t)(len + 1) * sizeof(double));
    assert_non_null(want);
    dense_schur_diagonal(U, V, W, want);
    /* the dense form of D is block diagonal: its diagonal blocks, in order */
    double *blocks = malloc((size_t)(len + 1) * sizeof(double));
    assert_non_null(blocks);
    for (int64_t b = 0; b < nc; b++)
        for (int64_t c = 0; c < p; c++)
            for (int64_t r = 0; r < p; r++)
                blocks[b * p * p + r + c * p] = got[(b * p + r) + (b * p + c) * nc * p];
    sbm_test_assert_near(blocks, want, len, 1e-12, "Schur diagonal against the dense reference");
    if (S) {
        /* the explicit S's diagonal blocks are the same numbers */
        double *s = sbm_test_cbc_dense(S);
        for (int64_t b = 0; b < nc; b++)
            for (int64_t c = 0; c < p; c++)
                for (int64_t r = 0; r < p; r++)
                    want[b * p * p + r + c * p] = s[(b * p + r) + (b * p + c) * nc * p];
        sbm_test_assert_near(blocks, want, len, 1e-12, "Schur diagonal against the explicit S");
        free(s);
    }
    /* repeatable bitwise */
    SBM_ASSERT_OK(ctx, sbm_ba_schur_diagonal(ctx, plan, U, W, D));
    double *again = sbm_test_cbc_dense(D);
    assert_memory_equal(got, again, (size_t)(len * nc + (len == 0)) * sizeof(double));
    free(again), free(got), free(want);
    sbm_cbc_destroy(D);
    sbm_cbc_destroy(S);
    sbm_schur_plan_destroy(plan);
    return blocks;
}

/* A BA system (cameras 9 x 9, points 3 x 3) and generic shapes with U missing some diagonal
 * blocks, each with and without forming S; the device's blocks against the CPU backend's. */
static void test_schur_diagonal(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    /* the BA system of a generated problem, damped */
    sbm_bal_generate_options g = sbm_bal_generate_defaults(8, 100, 4, 3);
    sbm_bal_problem *prob = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &g, &prob));
    sbm_ba_system *sys = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_ba_system_create(e->ctx, prob, &sys));
    SBM_ASSERT_OK(e->ctx, sbm_ba_linearize(e->ctx, sys, prob));
    SBM_TEST_OK_OR_SKIP(e, sbm_ba_set_damping(e->ctx, sys, 0.25));
    const sbm_ba_system_info si = sbm_ba_system_get_info(sys);
    for (unsigned flags = 0; flags <= SBM_SCHUR_MATRIX_FREE; flags++)
        free(schur_diagonal_case(e->ctx, si.U, si.V, si.W, flags));
    sbm_ba_system_destroy(sys);
    sbm_bal_destroy(prob);

    /* generic shapes: U random upper (diagonal blocks missing at density 0.5), W sparse */
    const int shapes[][4] = {{2, 5, 7, 11}, {6, 3, 5, 20}, {9, 3, 1, 1}, {3, 3, 4, 0}};
    for (int t = 0; t < 4; t++) {
        const int p = shapes[t][0], q = shapes[t][1];
        const int64_t nc = shapes[t][2], np = shapes[t][3];
        sbm_ctx *cs[2] = {e->ctx, e->host};
        double *blocks[2];
        for (int k = 0; k < 2; k++) {
            sbm_cbc *U = sbm_test_random_cbc_upper(cs[k], 40 + t, nc, nc, p, p, 0.5, 1);
            sbm_cbc *V = sbm_test_random_bdiag_spd(cs[k], 50 + t, np, q);
            sbm_cbc *W = sbm_test_random_cbc(cs[k], 60 + t, nc, np, p, q, 0.4);
            blocks[k] = schur_diagonal_case(cs[k], U, V, W, SBM_SCHUR_MATRIX_FREE);
            sbm_cbc_destroy(U), sbm_cbc_destroy(V), sbm_cbc_destroy(W);
        }
        sbm_test_assert_near(blocks[0], blocks[1], nc * p * p, 1e-13,
                             "Schur diagonal against the CPU backend");
        free(blocks[0]), free(blocks[1]);
    }
}

/* Every argument error, with its message. */
static void test_schur_diagonal_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    sbm_cbc *U = sbm_test_random_cbc_upper(ctx, 1, 4, 4, 2, 2, 1.0, 1);
    sbm_cbc *V = sbm_test_random_bdiag_spd(ctx, 2, 6, 3);
    sbm_cbc *W = sbm_test_random_cbc(ctx, 3, 4, 6, 2, 3, 0.5);
    sbm_cbc *W2 = sbm_test_random_cbc(ctx, 3, 4, 5, 2, 3, 0.5);
    sbm_schur_plan *plan = NULL;
    sbm_cbc *D = NULL, *D3 = NULL, *Doff = NULL;
    SBM_ASSERT_OK(ctx, sbm_ba_schur_plan(ctx, U, V, W, SBM_SCHUR_MATRIX_FREE, &plan, NULL));
    SBM_ASSERT_OK(ctx, sbm_ba_schur_execute(ctx, plan, U, V, W, NULL, NULL, NULL, NULL));
    SBM_ASSERT_OK(ctx, sbm__bdiag_pattern_create(ctx, 4, 2, &D));
    SBM_ASSERT_OK(ctx, sbm__bdiag_pattern_create(ctx, 3, 2, &D3));
    /* four blocks of 2x2, but (1, 0) instead of (1, 1) */
    const int64_t cp[] = {0, 2, 2, 3, 4};
    const int32_t ri[] = {0, 1, 2, 3};
    SBM_ASSERT_OK(ctx, sbm_cbc_create(ctx, &Doff, 4, 4, 2, 2, cp, ri, NULL));
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur_diagonal(ctx, NULL, U, W, D), SBM_ERR_NULL_ARGUMENT,
                     "sbm_ba_schur_diagonal: argument plan is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur_diagonal(ctx, plan, U, W, NULL), SBM_ERR_NULL_ARGUMENT,
                     "argument D");
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur_diagonal(ctx, plan, U, W2, D), SBM_ERR_PLAN_MISMATCH,
                     "argument W: 4 x 5 blocks of 2x3, the plan was made for 4 x 6");
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur_diagonal(ctx, plan, W, W, D), SBM_ERR_PLAN_MISMATCH,
                     "argument U");
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur_diagonal(ctx, plan, U, W, D3), SBM_ERR_DIMENSION_MISMATCH,
                     "argument D: 3 x 3 blocks of 2x2, 3 stored; it must be block diagonal with "
                     "all 4 diagonal blocks of 2x2");
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur_diagonal(ctx, plan, U, W, Doff), SBM_ERR_INVALID_ARGUMENT,
                     "argument D: its pattern is not the block diagonal");
    SBM_ASSERT_OK(ctx, sbm_ba_schur_diagonal(ctx, plan, U, W, D));
    sbm_cbc_destroy(Doff), sbm_cbc_destroy(D3), sbm_cbc_destroy(D);
    sbm_schur_plan_destroy(plan);
    sbm_cbc_destroy(W2), sbm_cbc_destroy(W), sbm_cbc_destroy(V), sbm_cbc_destroy(U);
}

/* ---------------------------------------------------------------------------------------- */
/* Dense Cholesky where the matrix lives                                                    */
/* ---------------------------------------------------------------------------------------- */

/* A seeded SPD matrix of nb x nb blocks of b x b, stored as its upper block triangle (each
 * block above the diagonal present with probability density; diagonally dominant), in ctx;
 * its dense symmetric form into *dense (malloc'd). */
static sbm_cbc *spd_upper(sbm_ctx *ctx, uint64_t seed, int64_t nb, int b, double density,
                          double **dense)
{
    sbm_test_rng g = sbm_test_rng_seed(seed);
    const int64_t n = nb * b, bs = (int64_t)b * b;
    int64_t *cp = malloc((size_t)(nb + 1) * sizeof *cp);
    int32_t *ri = malloc((size_t)(nb * (nb + 1) / 2 + 1) * sizeof *ri);
    double *v = malloc((size_t)((nb * (nb + 1) / 2 + 1) * bs) * sizeof *v);
    double *M = calloc((size_t)(n * n + 1), sizeof(double));
    assert_true(cp && ri && v && M);
    int64_t k = 0;
    cp[0] = 0;
    for (int64_t j = 0; j < nb; j++) {
        for (int64_t i = 0; i <= j; i++) {
            if (i < j && !(sbm_test_rng_uniform(&g) < density)) continue;
            double *d = v + k * bs;
            for (int c = 0; c < b; c++)
                for (int r = 0; r < b; r++) {
                    if (i == j && r > c) continue;
                    double x = sbm_test_rng_value(&g);
                    if (i == j && r == c) x = (double)n + 1.0 + fabs(x);
                    d[r + c * b] = x;
                    if (i == j) d[c + r * b] = x;
                    M[(i * b + r) + (j * b + c) * n] = M[(j * b + c) + (i * b + r) * n] = x;
                }
            ri[k++] = (int32_t)i;
        }
        cp[j + 1] = k;
    }
    sbm_cbc *A = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_create(ctx, &A, nb, nb, b, b, cp, ri, v));
    free(cp), free(ri), free(v);
    *dense = M;
    return A;
}

/* Against LAPACK on the dense form; the CPU backend's solution; in place; twice bitwise. */
static void test_dense_solve(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const int sizes[][2] = {{1, 1}, {5, 9}, {40, 3}, {13, 6}};
    const double density[] = {1.0, 1.0, 0.2, 0.5};
    for (int t = 0; t < 4; t++) {
        const int64_t nb = sizes[t][0], n = nb * sizes[t][1];
        double *M = NULL, *Mh = NULL;
        sbm_cbc *A = spd_upper(e->ctx, 70 + t, nb, sizes[t][1], density[t], &M);
        sbm_cbc *Ah = spd_upper(e->host, 70 + t, nb, sizes[t][1], density[t], &Mh);
        double *hb = sbm_test_random_vector(80 + t, n), *want = malloc((size_t)n * sizeof(double));
        lapack_spd_solve(M, n, hb, 1, want);
        double *b = ctx_vec(e->ctx, hb, n), *x = ctx_vec(e->ctx, hb, n);
        int64_t failed = 7;
        SBM_ASSERT_OK(e->ctx, sbm__dense_spd_solve_device(e->ctx, A, b, x, &failed));
        assert_int_equal(failed, -1);
        double *hx = host_vec(e->ctx, x, n);
        sbm_test_assert_near(hx, want, n, 1e-12, "dense Cholesky against LAPACK");
        /* in place, and the same bits again */
        SBM_ASSERT_OK(e->ctx, sbm__dense_spd_solve_device(e->ctx, A, b, b, NULL));
        double *hb2 = host_vec(e->ctx, b, n);
        assert_memory_equal(hx, hb2, (size_t)n * sizeof(double));
        /* the CPU backend, and the host-vector entry */
        double *xh = malloc((size_t)n * sizeof(double));
        SBM_ASSERT_OK(e->host, sbm__dense_spd_solve(e->host, Ah, hb, xh));
        sbm_test_assert_near(hx, xh, n, 1e-13, "dense Cholesky against the CPU backend");
        SBM_ASSERT_OK(e->ctx, sbm__dense_spd_solve(e->ctx, A, hb, xh));
        assert_memory_equal(hx, xh, (size_t)n * sizeof(double));
        free(xh), free(hb2), free(hx), free(want), free(hb), free(M), free(Mh);
        sbm__free(e->ctx, b), sbm__free(e->ctx, x);
        sbm_cbc_destroy(A), sbm_cbc_destroy(Ah);
    }
}

/* A matrix that is not positive definite (a negative pivot, a NaN on the diagonal, a zero
 * block column): SBM_ERR_NOT_POSITIVE_DEFINITE naming the scalar and the block column; the
 * shape errors; nothing to solve for n = 0. */
static void test_dense_solve_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    const int b = 3;
    const int64_t nb = 6, n = nb * b;
    double *h = sbm_test_random_vector(5, n);
    double *d = ctx_vec(ctx, h, n), *x = ctx_vec(ctx, h, n);
    /* scalar column 13 (block column 4, its second column) */
    const double bad[] = {-1.0, NAN};
    for (int k = 0; k < 2; k++) {
        double *M = NULL;
        sbm_cbc *A = spd_upper(ctx, 90, nb, b, 0.5, &M);
        const sbm_cbc_info ai = sbm_cbc_get_info(A);
        /* the diagonal block of column 4 is the last block of that column */
        sbm_cbc *Ahost = sbm_test_cbc_to_host(A);
        const int64_t blk = sbm_cbc_get_info(Ahost).colptr[5] - 1;
        sbm_cbc_destroy(Ahost);
        SBM_ASSERT_OK(ctx, sbm__vec_upload(ctx, ai.values + blk * b * b + 1 + b, &bad[k], 1));
        int64_t failed = -2;
        SBM_ASSERT_FAILS(ctx, sbm__dense_spd_solve_device(ctx, A, d, x, &failed),
                         SBM_ERR_NOT_POSITIVE_DEFINITE,
                         "dense Cholesky of the 18 x 18 system failed at column 13 (block column "
                         "4): the matrix is not positive definite");
        assert_int_equal(failed, 13);
        double *hx = malloc((size_t)n * sizeof(double));
        SBM_ASSERT_FAILS(ctx, sbm__dense_spd_solve_at(ctx, A, h, hx, &failed),
                         SBM_ERR_NOT_POSITIVE_DEFINITE, "failed at column 13 (block column 4)");
        assert_int_equal(failed, 13);
        free(hx), free(M);
        sbm_cbc_destroy(A);
    }
    /* a zero block column (no diagonal block stored): the first scalar of column 2 */
    const int64_t cp0[] = {0, 1, 2, 2};
    const int32_t ri0[] = {0, 1};
    const double v0[] = {4, 0, 0, 0, 4, 0, 0, 0, 4, 4, 0, 0, 0, 4, 0, 0, 0, 4};
    sbm_cbc *Z = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_create(ctx, &Z, 3, 3, 3, 3, cp0, ri0, v0));
    SBM_ASSERT_FAILS(ctx, sbm__dense_spd_solve_device(ctx, Z, d, x, NULL),
                     SBM_ERR_NOT_POSITIVE_DEFINITE, "failed at column 6 (block column 2)");
    sbm_cbc_destroy(Z);
    /* shapes */
    sbm_cbc *R = sbm_test_random_cbc(ctx, 3, 2, 2, 2, 3, 1.0);
    SBM_ASSERT_FAILS(ctx, sbm__dense_spd_solve_device(ctx, R, d, x, NULL), SBM_ERR_BLOCK_SHAPE,
                     "dense Cholesky needs a square matrix with square blocks (it is 2 x 2 "
                     "blocks of 2x3)");
    sbm_cbc_destroy(R);
    sbm_cbc *Big = NULL;
    const int64_t zero_cp[] = {0, 0};
    SBM_ASSERT_OK(ctx, sbm_cbc_create(ctx, &Big, 1, 1, 1, 1, zero_cp, NULL, NULL));
    sbm_cbc_destroy(Big);
    int64_t *bcp = calloc(30002, sizeof(int64_t));
    SBM_ASSERT_OK(ctx, sbm_cbc_create(ctx, &Big, 30001, 30001, 1, 1, bcp, NULL, NULL));
    SBM_ASSERT_FAILS(ctx, sbm__dense_spd_solve_device(ctx, Big, d, x, NULL),
                     SBM_ERR_INVALID_ARGUMENT,
                     "dense Cholesky on 30001 unknowns (at most 30000): use PCG");
    sbm_cbc_destroy(Big);
    free(bcp);
    /* nothing to solve */
    SBM_ASSERT_OK(ctx, sbm_cbc_create(ctx, &Big, 0, 0, 3, 3, zero_cp, NULL, NULL));
    SBM_ASSERT_OK(ctx, sbm__dense_spd_solve_device(ctx, Big, d, x, NULL));
    sbm_cbc_destroy(Big);
    sbm__free(ctx, d), sbm__free(ctx, x);
    free(h);
}

/* ---------------------------------------------------------------------------------------- */
/* sbm_ba_solve on the device                                                               */
/* ---------------------------------------------------------------------------------------- */

#define MAX_ITS 16

/* What the iteration callback saw: the reports, and the context's copy counters between two
 * callbacks (one whole iteration each, from the second on: the first also holds the setup). */
typedef struct probe {
    sbm_ctx *ctx;
    const sbm_bal_problem *problem;
    const double *x0;          /* the parameters before the solve (NULL: not checked) */
    int64_t nx;                /* their count */
    sbm__stats last;
    int n;
    sbm_iteration_report rep[MAX_ITS];
    sbm__stats delta[MAX_ITS];
    int moved;                 /* the problem's parameters changed during the solve */
} probe;

static void probe_record(void *user, const sbm_iteration_report *r)
{
    probe *p = user;
    const sbm__stats now = sbm__stats_get(p->ctx);
    if (p->n >= MAX_ITS) fail_msg("more than %d iterations", MAX_ITS);
    p->rep[p->n] = *r;
    p->delta[p->n].h2d_copies = now.h2d_copies - p->last.h2d_copies;
    p->delta[p->n].h2d_bytes = now.h2d_bytes - p->last.h2d_bytes;
    p->delta[p->n].d2h_copies = now.d2h_copies - p->last.d2h_copies;
    p->delta[p->n].d2h_bytes = now.d2h_bytes - p->last.d2h_bytes;
    p->n++;
    p->last = now;
    if (p->x0) {
        const sbm_bal_info pi = sbm_bal_get_info(p->problem);
        if (memcmp(pi.camera_params, p->x0, 9 * (size_t)pi.cameras * sizeof(double)) != 0)
            p->moved = 1;
    }
}

static sbm_bal_problem *small_problem(sbm_ctx *ctx, int which)
{
    sbm_bal_problem *p = NULL;
    if (which == 0) {
        sbm_bal_generate_options g = sbm_bal_generate_defaults(8, 100, 4, 11);
        g.perturbation = 2.0;
        SBM_ASSERT_OK(ctx, sbm_bal_generate(ctx, &g, &p));
    } else {
        SBM_ASSERT_OK(ctx, sbm_bal_read(ctx, sbm_test_data_path("bal/problem-21-11315-pre.txt.bz2"),
                                        &p));
    }
    return p;
}

/* The two problems of the solve tests, read once, with their starting parameters. */
typedef struct problems {
    sbm_bal_problem *p[2];
    double *x0[2];
} problems;

static void problems_load(sbm_ctx *ctx, problems *ps)
{
    for (int w = 0; w < 2; w++) {
        ps->p[w] = small_problem(ctx, w);
        const sbm_bal_info pi = sbm_bal_get_info(ps->p[w]);
        const size_t nc = 9 * (size_t)pi.cameras, np = 3 * (size_t)pi.points;
        ps->x0[w] = malloc((nc + np) * sizeof(double));
        assert_non_null(ps->x0[w]);
        memcpy(ps->x0[w], pi.camera_params, nc * sizeof(double));
        memcpy(ps->x0[w] + nc, pi.point_params, np * sizeof(double));
    }
}

/* Problem w at its start again. */
static sbm_bal_problem *problems_reset(problems *ps, int w)
{
    const sbm_bal_info pi = sbm_bal_get_info(ps->p[w]);
    const size_t nc = 9 * (size_t)pi.cameras, np = 3 * (size_t)pi.points;
    memcpy(pi.camera_params, ps->x0[w], nc * sizeof(double));
    memcpy(pi.point_params, ps->x0[w] + nc, np * sizeof(double));
    return ps->p[w];
}

static void problems_free(problems *ps)
{
    for (int w = 0; w < 2; w++) {
        sbm_bal_destroy(ps->p[w]);
        free(ps->x0[w]);
    }
}

static const sbm_linear_solver all_solvers[] = {SBM_LINEAR_DENSE_CHOLESKY,
                                                SBM_LINEAR_SPARSE_CHOLESKY, SBM_LINEAR_PCG,
                                                SBM_LINEAR_PCG_MATRIX_FREE};

static sbm_solver_options probe_options(sbm_linear_solver ls, int iterations, probe *pr)
{
    sbm_solver_options o = sbm_solver_default_options();
    o.linear_solver = ls;
    o.max_iterations = iterations;
    o.function_tolerance = o.gradient_tolerance = o.parameter_tolerance = 0.0;
    o.pcg_max_iterations = 500;
    o.pcg_tolerance = 1e-12;
    o.callback = probe_record;
    o.user = pr;
    return o;
}

/* One solve with the probe: the problem's parameters untouched until the end, then the best
 * estimate (its cost the summary's). */
static void probed_solve(sbm_ctx *ctx, sbm_bal_problem *p, const sbm_solver_options *o,
                         probe *pr, sbm_solver_summary *s)
{
    const sbm_bal_info pi = sbm_bal_get_info(p);
    double *x0 = malloc(9 * (size_t)pi.cameras * sizeof(double) + 1);
    assert_non_null(x0);
    memcpy(x0, pi.camera_params, 9 * (size_t)pi.cameras * sizeof(double));
    memset(pr, 0, sizeof *pr);
    pr->ctx = ctx, pr->problem = p, pr->x0 = x0;
    pr->last = sbm__stats_get(ctx);
    SBM_ASSERT_OK(ctx, sbm_ba_solve(ctx, p, o, s));
    assert_int_equal(pr->n, s->iterations);
    assert_false(pr->moved);
    double cost = 0.0;
    SBM_ASSERT_OK(ctx, sbm_bal_evaluate(ctx, p, NULL, &cost));
    if (o->loss.type == SBM_LOSS_NONE && !(fabs(cost - s->final_cost) <= 1e-9 * cost))
        fail_msg("the returned estimate costs %.17g, the summary says %.17g", cost,
                 s->final_cost);
    assert_true(s->accepted == 0 ||
                memcmp(pi.camera_params, x0, 9 * (size_t)pi.cameras * sizeof(double)) != 0);
    free(x0);
}

/* Inside the iterations only scalars cross: on CUDA no copy to the device, and the copies to
 * the host bounded by a constant plus three per PCG iteration, 8 bytes each but the
 * linearisation's 32-byte result; on the CPU backend none at all. Every linear solver, a
 * generated problem and a BAL file. */
static void test_solve_transfers(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    problems ps;
    problems_load(e->ctx, &ps);
    for (int which = 0; which < 2; which++)
        for (int k = 0; k < 4; k++) {
            sbm_bal_problem *p = problems_reset(&ps, which);
            probe pr;
            sbm_solver_options o = probe_options(all_solvers[k], 5, &pr);
            sbm_solver_summary s;
            probed_solve(e->ctx, p, &o, &pr, &s);
            assert_int_equal(s.linear_solver, all_solvers[k]);
            assert_true(pr.n == 5 && s.accepted >= 2);
            for (int it = 1; it < pr.n; it++) {
                const sbm__stats *d = &pr.delta[it];
                const uint64_t pcg = (uint64_t)pr.rep[it].linear_iterations;
                print_message("  %s, %d: iteration %d: %llu copies to the host (%llu bytes), "
                              "%d PCG iterations\n",
                              which ? "trafalgar" : "generated", (int)all_solvers[k], it + 1,
                              (unsigned long long)d->d2h_copies,
                              (unsigned long long)d->d2h_bytes, (int)pcg);
                assert_int_equal(d->h2d_copies, 0);
                if (e->backend == SBM_BACKEND_CPU) {
                    assert_int_equal(d->d2h_copies, 0);
                    continue;
                }
                /* V^-1's and the factorisations' failure words, two norms, the trial cost, the
                 * predicted decrease, the linearisation; PCG: |b|, r.z, 3 per iteration */
                if (d->d2h_copies < 5 || d->d2h_copies > 12 + 3 * pcg)
                    fail_msg("iteration %d: %llu copies to the host", it + 1,
                             (unsigned long long)d->d2h_copies);
                if (d->d2h_bytes > 8 * d->d2h_copies + 24)
                    fail_msg("iteration %d: %llu bytes in %llu copies to the host", it + 1,
                             (unsigned long long)d->d2h_bytes,
                             (unsigned long long)d->d2h_copies);
            }
        }
    problems_free(&ps);
}

/* CUDA against the CPU backend, cost by cost to 1e-10 relative, every linear solver, without
 * and with a robust loss, on both problems; two runs on the context give the same bits (on the
 * CPU backend that check alone, on the generated problem: the CUDA run's reference). */
static void test_solve_against_cpu(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const sbm_loss losses[] = {{SBM_LOSS_NONE, 1.0}, {SBM_LOSS_HUBER, 2.0}, {SBM_LOSS_CAUCHY, 1.0}};
    const int cuda = e->backend != SBM_BACKEND_CPU;
    problems ps[2];
    problems_load(e->ctx, &ps[0]);
    if (cuda) problems_load(e->host, &ps[1]);
    for (int which = 0; which < 1 + cuda; which++)
        for (int l = 0; l < 3; l++)
            for (int k = 0; k < 4; k++) {
                /* runs: the context, again, the CPU backend */
                sbm_ctx *cs[3] = {e->ctx, e->ctx, e->host};
                probe pr[3];
                sbm_solver_summary s[3];
                double *pts[2] = {NULL, NULL};
                for (int r = 0; r < 2 + cuda; r++) {
                    sbm_bal_problem *p = problems_reset(&ps[r == 2], which);
                    sbm_solver_options o = probe_options(all_solvers[k], 4, &pr[r]);
                    o.loss = losses[l];
                    probed_solve(cs[r], p, &o, &pr[r], &s[r]);
                    const sbm_bal_info pi = sbm_bal_get_info(p);
                    if (r < 2) {
                        pts[r] = malloc(3 * (size_t)pi.points * sizeof(double));
                        memcpy(pts[r], pi.point_params, 3 * (size_t)pi.points * sizeof(double));
                    }
                }
                assert_true(s[0].final_cost < s[0].initial_cost);
                assert_int_equal(pr[0].n, pr[1].n);
                for (int it = 0; it < pr[0].n; it++) {
                    /* bitwise repeatable on the context */
                    assert_memory_equal(&pr[0].rep[it].cost, &pr[1].rep[it].cost, sizeof(double));
                    assert_memory_equal(&pr[0].rep[it].step_norm, &pr[1].rep[it].step_norm,
                                        sizeof(double));
                    if (!cuda) continue;
                    const sbm_iteration_report *a = &pr[0].rep[it], *b = &pr[2].rep[it];
                    assert_int_equal(a->accepted, b->accepted);
                    if (!(fabs(a->cost - b->cost) <= 1e-10 * fabs(b->cost)))
                        fail_msg("%s, loss %s, solver %d, iteration %d: cost %.17g on %s, "
                                 "%.17g on the CPU backend",
                                 which ? "trafalgar" : "generated", sbm_loss_name(losses[l].type),
                                 (int)all_solvers[k], it + 1, a->cost, e->ctx->ops->name,
                                 b->cost);
                }
                if (cuda) assert_int_equal(pr[0].n, pr[2].n);
                const int64_t np = sbm_bal_get_info(ps[0].p[which]).points;
                assert_memory_equal(pts[0], pts[1], 3 * (size_t)np * sizeof(double));
                free(pts[0]), free(pts[1]);
            }
    problems_free(&ps[0]);
    if (cuda) problems_free(&ps[1]);
}

/* A failing allocation inside the solve: the status and message of the failure, and the
 * problem holding the best estimate so far: the start when nothing was accepted yet, a lower
 * cost when the last allocation (the second iteration's PCG vectors) fails. */
typedef struct fail_after {
    long calls, fail_at, live;
} fail_after;

static void *fail_alloc(void *user, size_t bytes)
{
    fail_after *f = user;
    if (++f->calls == f->fail_at) return NULL;
    void *ptr = malloc(bytes);
    if (ptr) f->live++;
    return ptr;
}

static void fail_free(void *user, void *ptr)
{
    fail_after *f = user;
    if (ptr) f->live--;
    free(ptr);
}

static void test_solve_failure_keeps_best(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    if (e->backend != SBM_BACKEND_CPU) skip(); /* the CPU backend's allocator sees every one */
    fail_after f = {0, 0, 0};
    const sbm_allocator a = {fail_alloc, fail_free, &f};
    sbm_solver_options o = sbm_solver_default_options();
    o.max_iterations = 2;
    o.linear_solver = SBM_LINEAR_PCG;
    double c0 = 0.0, c = 0.0;
    long n = -1;
    for (long k = 0; k <= n || n < 0; k++) {
        sbm_bal_problem *p = small_problem(e->ctx, 0);
        SBM_ASSERT_OK(e->ctx, sbm_bal_evaluate(e->ctx, p, NULL, &c0));
        f = (fail_after){0, k, 0};
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, &a));
        sbm_solver_summary s;
        const sbm_status st = sbm_ba_solve(e->ctx, p, &o, &s);
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, NULL));
        SBM_ASSERT_OK(e->ctx, sbm_bal_evaluate(e->ctx, p, NULL, &c));
        if (k == 0) {
            SBM_ASSERT_OK(e->ctx, st);
            n = f.calls;
        } else {
            assert_int_equal(st, SBM_ERR_OUT_OF_MEMORY);
            assert_non_null(strstr(sbm_ctx_last_error(e->ctx), "cannot allocate"));
            assert_int_equal(sbm_ctx_last_status(e->ctx), SBM_ERR_OUT_OF_MEMORY);
            assert_true(c <= c0);
            if (k == n && !(c < c0))
                fail_msg("the last allocation failed after an accepted step, but the problem "
                         "costs %.17g, its start %.17g", c, c0);
        }
        assert_int_equal(f.live, 0);
        sbm_bal_destroy(p);
    }
}

/* options->update_state_every_iteration: the estimate of every iteration in the problem when
 * the callback runs; a value other than 0 or 1 refused. */
static void test_update_state(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_problem *p = small_problem(e->ctx, 0);
    probe pr;
    sbm_solver_options o = probe_options(SBM_LINEAR_DENSE_CHOLESKY, 3, &pr);
    o.update_state_every_iteration = 2;
    SBM_ASSERT_FAILS(e->ctx, sbm_ba_solve(e->ctx, p, &o, NULL), SBM_ERR_INVALID_ARGUMENT,
                     "sbm_ba_solve: argument options: update_state_every_iteration = 2 must be 0 "
                     "or 1");
    o.update_state_every_iteration = 1;
    const sbm_bal_info pi = sbm_bal_get_info(p);
    memset(&pr, 0, sizeof pr);
    pr.ctx = e->ctx, pr.problem = p;
    double *x0 = malloc(9 * (size_t)pi.cameras * sizeof(double));
    memcpy(x0, pi.camera_params, 9 * (size_t)pi.cameras * sizeof(double));
    pr.x0 = x0;
    sbm_solver_summary s;
    SBM_ASSERT_OK(e->ctx, sbm_ba_solve(e->ctx, p, &o, &s));
    assert_true(s.accepted >= 1 && pr.moved);
    free(x0);
    sbm_bal_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_schur_diagonal),
        SBM_TEST_BOTH(test_schur_diagonal_errors),
        SBM_TEST_BOTH(test_dense_solve),
        SBM_TEST_BOTH(test_dense_solve_errors),
        SBM_TEST_BOTH(test_solve_transfers),
        SBM_TEST_BOTH(test_solve_against_cpu),
        SBM_TEST_BOTH(test_solve_failure_keeps_best),
        SBM_TEST_BOTH(test_update_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
