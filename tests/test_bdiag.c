/* SPDX-License-Identifier: BSD-3-Clause */
/* Block-diagonal operations: inverse of SPD blocks and D*A / A*D scaling, every block size,
 * in place and out of place, against dense references; every error path. */
#include "test_util.h"
#include "sbm_blocks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef sbm_test_shape shape;

static const shape shapes[] = SBM_TEST_SHAPES({2, 5}, {11, 4}, {16, 16}, {1, 3}, {32, 2});
static const int nshapes = (int)(sizeof shapes / sizeof shapes[0]);

/* Square block sizes for the inverse: every square fast-path size, then generic ones. */
static const int inv_sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 16, 32};
static const int ninv = (int)(sizeof inv_sizes / sizeof inv_sizes[0]);

/* Host arrays -> matrix in ctx. */
static sbm_cbc *from_host(sbm_ctx *ctx, int64_t nbr, int64_t nbc, int r, int c, const int64_t *cp,
                          const int32_t *ri, const double *v)
{
    sbm_cbc *A = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_create(ctx, &A, nbr, nbc, r, c, cp, ri, v));
    return A;
}

/* The same pattern with the values edited by a callback on the host copy. */
static sbm_cbc *edit_values(sbm_ctx *ctx, const sbm_cbc *X, void (*edit)(double *v, int64_t n, void *u),
                            void *user)
{
    sbm_cbc *H = sbm_test_cbc_to_host(X);
    sbm_cbc_info h = sbm_cbc_get_info(H);
    edit(h.values, h.nnzb * h.r * h.c, user);
    sbm_cbc *Y = from_host(ctx, h.nbr, h.nbc, h.r, h.c, h.colptr, h.rowind, h.values);
    sbm_cbc_destroy(H);
    return Y;
}

/* Random block-diagonal matrix (not SPD) of nb blocks b x b, each present with probability
 * density. */
static sbm_cbc *make_bdiag(sbm_ctx *ctx, uint64_t seed, int64_t nb, int b, double density)
{
    sbm_test_rng g = sbm_test_rng_seed(seed);
    int64_t *cp = malloc((size_t)(nb + 1) * sizeof *cp);
    int32_t *ri = malloc((size_t)(nb + 1) * sizeof *ri);
    double *v = malloc((size_t)(nb * b * b + 1) * sizeof *v);
    int64_t k = 0;
    cp[0] = 0;
    for (int64_t j = 0; j < nb; j++) {
        if (sbm_test_rng_uniform(&g) < density) ri[k++] = (int32_t)j;
        cp[j + 1] = k;
    }
    for (int64_t t = 0; t < k * b * b; t++) v[t] = sbm_test_rng_value(&g);
    sbm_cbc *D = from_host(ctx, nb, nb, b, b, cp, ri, v);
    free(v);
    free(ri);
    free(cp);
    return D;
}

static void assert_same_values(const sbm_cbc *X, const sbm_cbc *Y)
{
    double *x = sbm_test_cbc_dense(X), *y = sbm_test_cbc_dense(Y);
    sbm_cbc_info xi = sbm_cbc_get_info(X);
    assert_memory_equal(x, y, (size_t)(xi.nbr * xi.r * xi.nbc * xi.c) * sizeof(double));
    free(x);
    free(y);
}

/* ---------------------------------------------------------------------------------------- */
/* Inverse                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static void test_bdiag_inverse(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const int64_t nbs[] = {0, 1, 6};
    for (int s = 0; s < ninv; s++)
        for (int t = 0; t < 3; t++) {
            const int b = inv_sizes[s];
            const int64_t nb = nbs[t], n = nb * b;
            sbm_cbc *D = sbm_test_random_bdiag_spd(e->ctx, 10 * s + t, nb, b);
            sbm_cbc *Dinv = NULL;
            SBM_ASSERT_OK(e->ctx, sbm_cbc_copy(e->ctx, D, &Dinv));
            sbm_status st = sbm_bdiag_inverse(e->ctx, D, Dinv);
            SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
            SBM_ASSERT_OK(e->ctx, st);
            /* D * Dinv = I */
            double *d = sbm_test_cbc_dense(D), *di = sbm_test_cbc_dense(Dinv);
            double *p = sbm_test_dense_gemm(0, d, n, n, 0, di, n, n);
            double *eye = calloc((size_t)(n * n + 1), sizeof *eye);
            for (int64_t i = 0; i < n; i++) eye[i + i * n] = 1.0;
            sbm_test_assert_near(p, eye, n * n, 1e-12 * b, "D * Dinv");
            /* every block exactly symmetric, and nothing outside the diagonal blocks */
            for (int64_t j = 0; j < n; j++)
                for (int64_t i = 0; i < n; i++) {
                    assert_true(di[i + j * n] == di[j + i * n]);
                    if (i / b != j / b) assert_true(di[i + j * n] == 0.0);
                }
            /* in place gives bitwise the same */
            sbm_cbc *D2 = NULL;
            SBM_ASSERT_OK(e->ctx, sbm_cbc_copy(e->ctx, D, &D2));
            SBM_ASSERT_OK(e->ctx, sbm_bdiag_inverse(e->ctx, D2, D2));
            assert_same_values(D2, Dinv);
            /* D untouched */
            sbm_test_assert_cbc_dense(D, d, 0.0);
            free(eye);
            free(p);
            free(di);
            free(d);
            sbm_cbc_destroy(D2);
            sbm_cbc_destroy(Dinv);
            sbm_cbc_destroy(D);
        }
}

/* The strict upper triangle of D's blocks is never read: garbage there changes nothing. */
static void poison_upper(double *v, int64_t n, void *user)
{
    const int b = *(const int *)user;
    for (int64_t q = 0; q < n / (b * b); q++)
        for (int j = 1; j < b; j++)
            for (int i = 0; i < j; i++) v[q * b * b + i + j * b] = (i + j) % 2 ? NAN : 1e300;
}

static void test_bdiag_inverse_lower_only(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (int s = 1; s < ninv; s++) {
        int b = inv_sizes[s];
        sbm_cbc *D = sbm_test_random_bdiag_spd(e->ctx, 77 + s, 4, b);
        sbm_cbc *P = edit_values(e->ctx, D, poison_upper, &b);
        sbm_cbc *I1 = NULL, *I2 = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_cbc_copy(e->ctx, D, &I1));
        SBM_ASSERT_OK(e->ctx, sbm_cbc_copy(e->ctx, D, &I2));
        sbm_status st = sbm_bdiag_inverse(e->ctx, D, I1);
        SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
        SBM_ASSERT_OK(e->ctx, st);
        SBM_ASSERT_OK(e->ctx, sbm_bdiag_inverse(e->ctx, P, I2));
        assert_same_values(I1, I2);
        sbm_cbc_destroy(I2);
        sbm_cbc_destroy(I1);
        sbm_cbc_destroy(P);
        sbm_cbc_destroy(D);
    }
}

typedef struct edit_at {
    int64_t index;
    double value;
} edit_at;

static void set_value(double *v, int64_t n, void *user)
{
    const edit_at *a = user;
    assert_true(a->index < n);
    v[a->index] = a->value;
}

static void test_bdiag_inverse_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    const int b = 3;
    sbm_cbc *D = sbm_test_random_bdiag_spd(ctx, 5, 5, b);
    sbm_cbc *Dinv = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, D, &Dinv));
    double *d0 = sbm_test_cbc_dense(D);

    SBM_ASSERT_FAILS(NULL, sbm_bdiag_inverse(NULL, D, Dinv), SBM_ERR_NULL_ARGUMENT,
                     "sbm_bdiag_inverse: argument ctx is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_inverse(ctx, NULL, Dinv), SBM_ERR_NULL_ARGUMENT,
                     "sbm_bdiag_inverse: argument D is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_inverse(ctx, D, NULL), SBM_ERR_NULL_ARGUMENT,
                     "argument Dinv is NULL");

    /* not block-diagonal in shape */
    int64_t cp3[4] = {0, 1, 2, 3};
    int32_t ri3[3] = {0, 1, 2};
    double v[3 * 9];
    for (int t = 0; t < 27; t++) v[t] = (t % 4 == 0) ? 4.0 : 0.5;
    sbm_cbc *Rect = from_host(ctx, 3, 3, 3, 2, cp3, ri3, v);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_inverse(ctx, Rect, Rect), SBM_ERR_BLOCK_SHAPE,
                     "argument D: blocks are 3x2, a block-diagonal matrix needs square blocks");
    sbm_cbc *Wide = from_host(ctx, 2, 3, 3, 3, cp3, (int32_t[]){0, 1, 1}, v);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_inverse(ctx, Wide, Wide), SBM_ERR_DIMENSION_MISMATCH,
                     "argument D: 2 x 3 blocks, a block-diagonal matrix is square in blocks");
    /* a block off the diagonal, a missing diagonal block */
    sbm_cbc *Off = from_host(ctx, 3, 3, 3, 3, (int64_t[]){0, 2, 3, 4}, (int32_t[]){0, 2, 1, 2}, NULL);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_inverse(ctx, Off, Off), SBM_ERR_INVALID_ARGUMENT,
                     "argument D: block (2, 0) is off the diagonal");
    sbm_cbc *Miss = from_host(ctx, 3, 3, 3, 3, (int64_t[]){0, 1, 1, 2}, (int32_t[]){0, 2}, v);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_inverse(ctx, Miss, Miss), SBM_ERR_NOT_POSITIVE_DEFINITE,
                     "argument D: diagonal block 1 is not stored");

    /* Dinv without D's pattern */
    sbm_cbc *Dshape = sbm_test_random_bdiag_spd(ctx, 6, 5, 2);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_inverse(ctx, D, Dshape), SBM_ERR_BLOCK_SHAPE,
                     "argument Dinv: blocks are 2x2 but D has 3x3 blocks");
    sbm_cbc *Ddim = sbm_test_random_bdiag_spd(ctx, 7, 4, 3);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_inverse(ctx, D, Ddim), SBM_ERR_DIMENSION_MISMATCH,
                     "argument Dinv: 4 x 4 blocks but D is 5 x 5 blocks");
    sbm_cbc *Dnnz = from_host(ctx, 5, 5, 3, 3, (int64_t[]){0, 1, 2, 3, 4, 4}, (int32_t[]){0, 1, 2, 3}, NULL);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_inverse(ctx, D, Dnnz), SBM_ERR_INVALID_ARGUMENT,
                     "argument Dinv: 4 stored blocks but D has 5 (it must have D's pattern)");
    sbm_cbc *Dperm = from_host(ctx, 5, 5, 3, 3, (int64_t[]){0, 1, 2, 3, 4, 5},
                               (int32_t[]){1, 0, 2, 3, 4}, NULL);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_inverse(ctx, D, Dperm), SBM_ERR_INVALID_ARGUMENT,
                     "argument Dinv: its pattern differs from D's (block 0 of column 0 is in block "
                     "row 1, in D 0)");
    sbm_cbc *Dcol = from_host(ctx, 5, 5, 3, 3, (int64_t[]){0, 2, 2, 3, 4, 5},
                              (int32_t[]){0, 1, 2, 3, 4}, NULL);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_inverse(ctx, D, Dcol), SBM_ERR_INVALID_ARGUMENT,
                     "(column pointer 1 is 2, in D 1)");

    /* a block that is not positive definite: block 3, element (1,1) made very negative */
    edit_at bad = {3 * 9 + 1 + 1 * 3, -50.0};
    sbm_cbc *Dnpd = edit_values(ctx, D, set_value, &bad);
    double *sentinel = sbm_test_cbc_dense(Dinv);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_inverse(ctx, Dnpd, Dinv), SBM_ERR_NOT_POSITIVE_DEFINITE,
                     "argument D: diagonal block 3 (3x3) is not positive definite (its leading "
                     "minor of order 2 is not)");
    sbm_test_assert_cbc_dense(Dinv, sentinel, 0.0); /* output unchanged */
    double *npd0 = sbm_test_cbc_dense(Dnpd);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_inverse(ctx, Dnpd, Dnpd), SBM_ERR_NOT_POSITIVE_DEFINITE,
                     "diagonal block 3");
    sbm_test_assert_cbc_dense(Dnpd, npd0, 0.0); /* in place: unchanged too */
    /* NaN and Inf in the lower triangle */
    edit_at nan_at = {2 * 9 + 1 + 0 * 3, NAN};
    sbm_cbc *Dnan = edit_values(ctx, D, set_value, &nan_at);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_inverse(ctx, Dnan, Dinv), SBM_ERR_NOT_FINITE,
                     "argument D: value nan at (1, 0) of diagonal block 2 is not finite");
    edit_at inf_at = {4 * 9 + 2 + 2 * 3, -INFINITY};
    sbm_cbc *Dinf = edit_values(ctx, D, set_value, &inf_at);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_inverse(ctx, Dinf, Dinv), SBM_ERR_NOT_FINITE,
                     "value -inf at (2, 2) of diagonal block 4");
    sbm_test_assert_cbc_dense(Dinv, sentinel, 0.0);
    sbm_test_assert_cbc_dense(D, d0, 0.0);

    free(npd0);
    free(sentinel);
    free(d0);
    sbm_cbc *all[] = {D, Dinv, Rect, Wide, Off, Miss, Dshape, Ddim, Dnnz, Dperm, Dcol, Dnpd, Dnan, Dinf};
    for (size_t t = 0; t < sizeof all / sizeof all[0]; t++) sbm_cbc_destroy(all[t]);
}

/* ---------------------------------------------------------------------------------------- */
/* Scaling                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static void test_bdiag_scale(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const int64_t dims[][2] = {{0, 0}, {0, 3}, {4, 0}, {1, 1}, {5, 3}, {3, 7}};
    for (int s = 0; s < nshapes; s++)
        for (int d = 0; d < 6; d++)
            for (int side = 0; side < 2; side++) {
                const int r = shapes[s].r, c = shapes[s].c, left = side == 0;
                const int64_t nbr = dims[d][0], nbc = dims[d][1];
                const int b = left ? r : c;
                const int64_t nb = left ? nbr : nbc;
                const uint64_t seed = 1000 + 20 * s + 2 * d + side;
                sbm_cbc *A = sbm_test_random_cbc(e->ctx, seed, nbr, nbc, r, c, 0.5);
                /* some diagonal blocks missing: they count as zero */
                sbm_cbc *D = make_bdiag(e->ctx, seed + 7, nb, b, 0.7);
                sbm_cbc *B = NULL;
                SBM_ASSERT_OK(e->ctx, sbm_cbc_copy(e->ctx, A, &B));
                sbm_status st = sbm_bdiag_scale(e->ctx, left ? SBM_SIDE_LEFT : SBM_SIDE_RIGHT, D, A, B);
                SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
                SBM_ASSERT_OK(e->ctx, st);
                const int64_t m = nbr * r, n = nbc * c;
                double *da = sbm_test_cbc_dense(A), *dd = sbm_test_cbc_dense(D);
                double *want = left ? sbm_test_dense_gemm(0, dd, m, m, 0, da, m, n)
                                    : sbm_test_dense_gemm(0, da, m, n, 0, dd, n, n);
                sbm_test_assert_cbc_dense(B, want, 1e-13 * b);
                assert_int_equal(sbm_cbc_get_info(B).nnzb, sbm_cbc_get_info(A).nnzb);
                sbm_test_assert_cbc_dense(A, da, 0.0);
                /* in place: B == A, bitwise the same result */
                SBM_ASSERT_OK(e->ctx, sbm_bdiag_scale(e->ctx, left ? SBM_SIDE_LEFT : SBM_SIDE_RIGHT, D, A, A));
                assert_same_values(A, B);
                free(want);
                free(dd);
                free(da);
                sbm_cbc_destroy(B);
                sbm_cbc_destroy(D);
                sbm_cbc_destroy(A);
            }
}

static void test_bdiag_scale_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    sbm_cbc *A = sbm_test_random_cbc(ctx, 1, 4, 6, 6, 3, 0.5); /* 4x6 blocks of 6x3 */
    sbm_cbc *B = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, A, &B));
    sbm_cbc *Dl = make_bdiag(ctx, 2, 4, 6, 1.0);  /* left: 4 blocks 6x6 */
    sbm_cbc *Dr = make_bdiag(ctx, 3, 6, 3, 1.0);  /* right: 6 blocks 3x3 */
    double *a0 = sbm_test_cbc_dense(A), *b0 = sbm_test_cbc_dense(B);

    SBM_ASSERT_FAILS(NULL, sbm_bdiag_scale(NULL, SBM_SIDE_LEFT, Dl, A, B), SBM_ERR_NULL_ARGUMENT,
                     "sbm_bdiag_scale: argument ctx is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_scale(ctx, SBM_SIDE_LEFT, NULL, A, B), SBM_ERR_NULL_ARGUMENT,
                     "sbm_bdiag_scale: argument D is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_scale(ctx, SBM_SIDE_LEFT, Dl, NULL, B), SBM_ERR_NULL_ARGUMENT,
                     "argument A is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_scale(ctx, SBM_SIDE_LEFT, Dl, A, NULL), SBM_ERR_NULL_ARGUMENT,
                     "argument B is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_scale(ctx, (sbm_side)7, Dl, A, B), SBM_ERR_INVALID_ARGUMENT,
                     "argument side: 7 is not a side");
    /* the wrong D for the side */
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_scale(ctx, SBM_SIDE_LEFT, Dr, A, B), SBM_ERR_BLOCK_SHAPE,
                     "argument D: 3x3 blocks cannot scale the rows of A's 6x3 blocks");
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_scale(ctx, SBM_SIDE_RIGHT, Dl, A, B), SBM_ERR_BLOCK_SHAPE,
                     "argument D: 6x6 blocks cannot scale the columns of A's 6x3 blocks");
    sbm_cbc *D5 = make_bdiag(ctx, 4, 5, 6, 1.0);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_scale(ctx, SBM_SIDE_LEFT, D5, A, B), SBM_ERR_DIMENSION_MISMATCH,
                     "argument D: 5 x 5 blocks but A has 4 block rows");
    sbm_cbc *Dns = sbm_test_random_cbc(ctx, 5, 4, 4, 6, 5, 0.5);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_scale(ctx, SBM_SIDE_LEFT, Dns, A, B), SBM_ERR_BLOCK_SHAPE,
                     "argument D: blocks are 6x5, a block-diagonal matrix needs square blocks");
    sbm_cbc *Doff = from_host(ctx, 4, 4, 6, 6, (int64_t[]){0, 1, 2, 3, 4}, (int32_t[]){0, 1, 3, 3}, NULL);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_scale(ctx, SBM_SIDE_LEFT, Doff, A, B), SBM_ERR_INVALID_ARGUMENT,
                     "argument D: block (3, 2) is off the diagonal");
    /* B aliasing D, B without A's pattern */
    sbm_cbc *Sq = make_bdiag(ctx, 6, 4, 6, 1.0);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_scale(ctx, SBM_SIDE_LEFT, Sq, Sq, Sq), SBM_ERR_ALIASING,
                     "argument B is the same matrix as (or shares values with) argument D");
    sbm_cbc *Bp = sbm_test_random_cbc(ctx, 9, 4, 6, 6, 3, 0.95);
    sbm_cbc_info ai = sbm_cbc_get_info(A), bpi = sbm_cbc_get_info(Bp);
    assert_true(ai.nnzb != bpi.nnzb);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_scale(ctx, SBM_SIDE_LEFT, Dl, A, Bp), SBM_ERR_INVALID_ARGUMENT,
                     "(it must have A's pattern)");
    sbm_cbc *Bs = sbm_test_random_cbc(ctx, 1, 4, 6, 3, 6, 0.5);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_scale(ctx, SBM_SIDE_LEFT, Dl, A, Bs), SBM_ERR_BLOCK_SHAPE,
                     "argument B: blocks are 3x6 but A has 6x3 blocks");
    sbm_cbc *Bd = sbm_test_random_cbc(ctx, 1, 4, 5, 6, 3, 0.5);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_scale(ctx, SBM_SIDE_LEFT, Dl, A, Bd), SBM_ERR_DIMENSION_MISMATCH,
                     "argument B: 4 x 5 blocks but A is 4 x 6 blocks");
    sbm_test_assert_cbc_dense(A, a0, 0.0);
    sbm_test_assert_cbc_dense(B, b0, 0.0);
    /* and the right calls work */
    sbm_status st = sbm_bdiag_scale(ctx, SBM_SIDE_RIGHT, Dr, A, B);
    SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
    SBM_ASSERT_OK(ctx, st);

    free(a0);
    free(b0);
    sbm_cbc *all[] = {A, B, Dl, Dr, D5, Dns, Doff, Sq, Bp, Bs, Bd};
    for (size_t t = 0; t < sizeof all / sizeof all[0]; t++) sbm_cbc_destroy(all[t]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_bdiag_inverse),        SBM_TEST_BOTH(test_bdiag_inverse_lower_only),
        SBM_TEST_BOTH(test_bdiag_inverse_errors), SBM_TEST_BOTH(test_bdiag_scale),
        SBM_TEST_BOTH(test_bdiag_scale_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
