/* SPDX-License-Identifier: BSD-3-Clause */
/* The operations of the device-resident BA iteration: the Schur-Jacobi blocks
 * (sbm_ba_schur_diagonal) against a dense reference and the CPU backend, bitwise repeatable, and
 * its argument errors; the dense Cholesky where the matrix lives (sbm__dense_spd_solve_device)
 * against LAPACK and the CPU backend, in place, repeatable, and its failures (a pivot that is not
 * positive or NaN, a missing block column: SBM_ERR_NOT_POSITIVE_DEFINITE naming the scalar and
 * block column; shapes; the size limit). sbm_ba_solve itself: test_ba_device.c. */
#define _POSIX_C_SOURCE 200809L

#include "ba_internal.h"
#include "solve_kernels.h"
#include "test_util.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Helpers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* SBM_TEST_QUICK=1 (the sanitizer runs): every path, the largest cases left out. */
static int quick(void)
{
    const char *q = getenv("SBM_TEST_QUICK");
    return q && *q && strcmp(q, "0") != 0;
}

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
    const int shapes[][4] = {{2, 5, 7, 11}, {9, 3, 1, 1}, {3, 3, 4, 0}, {6, 3, 5, 20}};
    for (int t = 0; t < (quick() ? 3 : 4); t++) {
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

/* The Schur plan checks V's block-diagonal pattern once: an execute with another V of that
 * pattern (a new object) works without the check; a V of another pattern (a diagonal block
 * missing) gets sbm_bdiag_inverse's full check and message. */
static void test_schur_v_pattern(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    sbm_cbc *U = sbm_test_random_cbc_upper(ctx, 1, 3, 3, 2, 2, 1.0, 1);
    sbm_cbc *V = sbm_test_random_bdiag_spd(ctx, 2, 4, 3);
    sbm_cbc *V2 = sbm_test_random_bdiag_spd(ctx, 3, 4, 3);
    sbm_cbc *W = sbm_test_random_cbc(ctx, 4, 3, 4, 2, 3, 0.6);
    const int64_t cp[] = {0, 1, 2, 2, 3};
    const int32_t ri[] = {0, 1, 3};
    const double v9[27] = {2, 0, 0, 0, 2, 0, 0, 0, 2, 2, 0, 0, 0, 2, 0, 0, 0, 2,
                           2, 0, 0, 0, 2, 0, 0, 0, 2};
    sbm_cbc *Vgap = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_create(ctx, &Vgap, 4, 4, 3, 3, cp, ri, v9));
    sbm_schur_plan *plan = NULL;
    SBM_ASSERT_OK(ctx, sbm_ba_schur_plan(ctx, U, V, W, SBM_SCHUR_MATRIX_FREE, &plan, NULL));
    SBM_ASSERT_OK(ctx, sbm_ba_schur_execute(ctx, plan, U, V2, W, NULL, NULL, NULL, NULL));
    /* V2's inverse is the plan's now: the diagonal follows V2, not V */
    sbm_cbc *D = NULL;
    SBM_ASSERT_OK(ctx, sbm__bdiag_pattern_create(ctx, 3, 2, &D));
    SBM_ASSERT_OK(ctx, sbm_ba_schur_diagonal(ctx, plan, U, W, D));
    double *want = malloc(3 * 4 * sizeof(double)), *got = sbm_test_cbc_dense(D);
    dense_schur_diagonal(U, V2, W, want);
    for (int b = 0; b < 3; b++)
        for (int c = 0; c < 2; c++)
            for (int r = 0; r < 2; r++) {
                const double g = got[(2 * b + r) + (2 * b + c) * 6], w = want[4 * b + r + 2 * c];
                if (!(fabs(g - w) <= 1e-12 * (1.0 + fabs(w))))
                    fail_msg("block %d (%d, %d): %.17g, reference %.17g", b, r, c, g, w);
            }
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur_execute(ctx, plan, U, Vgap, W, NULL, NULL, NULL, NULL),
                     SBM_ERR_NOT_POSITIVE_DEFINITE,
                     "sbm_ba_schur_execute: sbm_bdiag_inverse: argument D: diagonal block 2 is "
                     "not stored");
    free(want), free(got);
    sbm_cbc_destroy(D);
    sbm_schur_plan_destroy(plan);
    sbm_cbc_destroy(Vgap), sbm_cbc_destroy(W), sbm_cbc_destroy(V2), sbm_cbc_destroy(V),
        sbm_cbc_destroy(U);
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
    const int sizes[][2] = {{1, 1}, {5, 9}, {13, 6}, {40, 3}};
    const double density[] = {1.0, 1.0, 0.5, 0.2};
    for (int t = 0; t < (quick() ? 3 : 4); t++) {
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
    /* nothing to solve: also the kernel itself (LAPACK refuses lda = 0) */
    SBM_ASSERT_OK(ctx, sbm_cbc_create(ctx, &Big, 0, 0, 3, 3, zero_cp, NULL, NULL));
    SBM_ASSERT_OK(ctx, sbm__dense_spd_solve_device(ctx, Big, d, x, NULL));
    if (e->backend == SBM_BACKEND_CPU) {
        int64_t failed = 0;
        SBM_ASSERT_OK(ctx, sbm__cpu_dense_spd_solve(ctx, Big, d, x, &failed));
        assert_int_equal(failed, -1);
    }
    sbm_cbc_destroy(Big);
    /* a right-hand side that is not finite, named by its row (CPU: it was "dpotrs rejected
     * argument 7") */
    if (e->backend == SBM_BACKEND_CPU) {
        double *M = NULL;
        sbm_cbc *A = spd_upper(ctx, 91, nb, b, 0.5, &M);
        h[5] = INFINITY;
        SBM_ASSERT_OK(ctx, sbm__vec_upload(ctx, d, h, n));
        SBM_ASSERT_FAILS(ctx, sbm__dense_spd_solve_device(ctx, A, d, x, NULL),
                         SBM_ERR_INVALID_ARGUMENT,
                         "argument b: value inf at row 5 of the right-hand side is not finite");
        free(M);
        sbm_cbc_destroy(A);
    }
    sbm__free(ctx, d), sbm__free(ctx, x);
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_schur_diagonal),
        SBM_TEST_BOTH(test_schur_diagonal_errors),
        SBM_TEST_BOTH(test_schur_v_pattern),
        SBM_TEST_BOTH(test_dense_solve),
        SBM_TEST_BOTH(test_dense_solve_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
