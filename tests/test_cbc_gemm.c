/* SPDX-License-Identifier: BSD-3-Clause */
/* Block SpGEMM C = U + alpha*op(A)*op(B): every block-shape triple, op combination, upper
 * triangle and accumulate variant against dense references; plans reused with new values;
 * plan mismatches; every error path. */
#include "test_util.h"
#include "sbm_blocks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef sbm_test_triple triple;

/* Every triple with a fast path, then generic ones. */
static const triple triples[] =
    SBM_TEST_TRIPLES({2, 5, 3}, {11, 4, 7}, {16, 16, 16}, {1, 4, 1}, {5, 1, 5});
static const int ntriples = (int)(sizeof triples / sizeof triples[0]);

/* ---------------------------------------------------------------------------------------- */
/* Helpers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* The same matrix as a new object (new pattern identity, equal arrays) with every value
 * multiplied by f and shifted by s. */
static sbm_cbc *reshape_values(sbm_ctx *ctx, const sbm_cbc *X, double f, double s)
{
    sbm_cbc *H = sbm_test_cbc_to_host(X);
    sbm_cbc_info h = sbm_cbc_get_info(H);
    for (int64_t t = 0; t < h.nnzb * h.r * h.c; t++) h.values[t] = f * h.values[t] + s;
    sbm_cbc *Y = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_create(ctx, &Y, h.nbr, h.nbc, h.r, h.c, h.colptr, h.rowind, h.values));
    sbm_cbc_destroy(H);
    return Y;
}

/* Block pattern of op(X) as a dense 0/1 array (nbr x nbc, column-major). */
static unsigned char *op_pattern(const sbm_cbc *X, sbm_op op, int64_t *nbr, int64_t *nbc)
{
    sbm_cbc *H = sbm_test_cbc_to_host(X);
    sbm_cbc_info h = sbm_cbc_get_info(H);
    *nbr = op == SBM_OP_N ? h.nbr : h.nbc;
    *nbc = op == SBM_OP_N ? h.nbc : h.nbr;
    unsigned char *p = calloc((size_t)(h.nbr * h.nbc + 1), 1);
    assert_non_null(p);
    for (int64_t j = 0; j < h.nbc; j++)
        for (int64_t q = h.colptr[j]; q < h.colptr[j + 1]; q++) {
            int64_t i = h.rowind[q];
            if (op == SBM_OP_N)
                p[i + j * *nbr] = 1;
            else
                p[j + i * *nbr] = 1;
        }
    sbm_cbc_destroy(H);
    return p;
}

/* Reference of the whole operation: dense values and block pattern of C, product count. */
typedef struct reference {
    double *dense;          /* (nbr*r) x (nbc*c) */
    unsigned char *pattern; /* nbr x nbc */
    int64_t nbr, nbc;
    int64_t products;
    int64_t nnzb;
} reference;

static reference make_reference(double alpha, sbm_op op_a, const sbm_cbc *A, sbm_op op_b,
                                const sbm_cbc *B, const sbm_cbc *U, int upper)
{
    reference ref;
    sbm_cbc_info a = sbm_cbc_get_info(A), b = sbm_cbc_get_info(B);
    int64_t an, ak, bk, bn;
    unsigned char *pa = op_pattern(A, op_a, &an, &ak);
    unsigned char *pb = op_pattern(B, op_b, &bk, &bn);
    assert_int_equal(ak, bk);
    int r = op_a == SBM_OP_N ? a.r : a.c, c = op_b == SBM_OP_N ? b.c : b.r;
    ref.nbr = an;
    ref.nbc = bn;
    ref.pattern = calloc((size_t)(an * bn + 1), 1);
    ref.products = 0;
    for (int64_t j = 0; j < bn; j++)
        for (int64_t k = 0; k < ak; k++)
            if (pb[k + j * bk])
                for (int64_t i = 0; i < an; i++)
                    if (pa[i + k * an] && (!upper || i <= j)) {
                        ref.pattern[i + j * an] = 1;
                        ref.products++;
                    }
    double *da = sbm_test_cbc_dense(A), *db = sbm_test_cbc_dense(B);
    ref.dense = sbm_test_dense_gemm(op_a == SBM_OP_T, da, a.nbr * a.r, a.nbc * a.c, op_b == SBM_OP_T,
                                    db, b.nbr * b.r, b.nbc * b.c);
    const int64_t m = an * r, n = bn * c;
    for (int64_t t = 0; t < m * n; t++) ref.dense[t] *= alpha;
    if (U) {
        double *du = sbm_test_cbc_dense(U);
        for (int64_t t = 0; t < m * n; t++) ref.dense[t] += du[t];
        free(du);
        int64_t un, uc;
        unsigned char *pu = op_pattern(U, SBM_OP_N, &un, &uc);
        for (int64_t t = 0; t < an * bn; t++) ref.pattern[t] |= pu[t];
        free(pu);
    }
    if (upper)
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++)
                if (i / r > j / c) ref.dense[i + j * m] = 0.0;
    ref.nnzb = 0;
    for (int64_t t = 0; t < an * bn; t++) ref.nnzb += ref.pattern[t];
    free(da);
    free(db);
    free(pa);
    free(pb);
    return ref;
}

static void free_reference(reference *ref)
{
    free(ref->dense);
    free(ref->pattern);
}

/* C equals the reference: values (tolerance), shape and exactly the expected block pattern
 * (structural zeros kept, nothing below the diagonal with UPPER). */
static void assert_matches(const sbm_cbc *C, const reference *ref, int r, int c, double tol)
{
    sbm_cbc_info ci = sbm_cbc_get_info(C);
    assert_int_equal(ci.nbr, ref->nbr);
    assert_int_equal(ci.nbc, ref->nbc);
    assert_int_equal(ci.r, r);
    assert_int_equal(ci.c, c);
    assert_int_equal(ci.nnzb, ref->nnzb);
    sbm_test_assert_cbc_dense(C, ref->dense, tol);
    sbm_cbc *H = sbm_test_cbc_to_host(C);
    sbm_cbc_info h = sbm_cbc_get_info(H);
    for (int64_t j = 0; j < h.nbc; j++)
        for (int64_t q = h.colptr[j]; q < h.colptr[j + 1]; q++)
            assert_true(ref->pattern[h.rowind[q] + j * ref->nbr]);
    sbm_cbc_destroy(H);
}

/* Bitwise equality of two matrices' values (determinism, plan reuse). */
static void assert_same_values(const sbm_cbc *X, const sbm_cbc *Y)
{
    double *x = sbm_test_cbc_dense(X), *y = sbm_test_cbc_dense(Y);
    sbm_cbc_info xi = sbm_cbc_get_info(X);
    assert_memory_equal(x, y, (size_t)(xi.nbr * xi.r * xi.nbc * xi.c) * sizeof(double));
    free(x);
    free(y);
}

static const double tol = 1e-12;

/* ---------------------------------------------------------------------------------------- */
/* Products                                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* Every triple x op combination x upper on/off x with/without U, alpha 1 and not 1. */
static void test_gemm_all_variants(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    uint64_t seed = 1000;
    for (int t = 0; t < ntriples; t++) {
        const int r = triples[t].r, k = triples[t].k, c = triples[t].c;
        const int big = r * k * c > 1000;
        for (int ops = 0; ops < 4; ops++) {
            const sbm_op op_a = (ops & 1) ? SBM_OP_T : SBM_OP_N;
            const sbm_op op_b = (ops & 2) ? SBM_OP_T : SBM_OP_N;
            for (int variant = 0; variant < 4; variant++) {
                const int upper = variant & 1, with_u = (variant & 2) != 0;
                if (upper && r != c) continue;
                const int64_t nbr = big ? 3 : 6, nbk = big ? 3 : 5;
                const int64_t nbc = upper ? nbr : (big ? 2 : 7);
                const double alpha = (variant == 1 || variant == 2) ? -0.75 : 1.0;
                seed += 3;
                sbm_cbc *A = sbm_test_random_cbc_op(e->ctx, seed, op_a, nbr, nbk, r, k, 0.45);
                sbm_cbc *B = sbm_test_random_cbc_op(e->ctx, seed + 1, op_b, nbk, nbc, k, c, 0.45);
                sbm_cbc *U = with_u ? sbm_test_random_cbc_upper(e->ctx, seed + 2, nbr, nbc, r, c, 0.3, upper) : NULL;
                const unsigned flags = upper ? SBM_GEMM_UPPER : 0u;

                sbm_gemm_plan *plan = NULL;
                sbm_cbc *C = NULL;
                sbm_status st = sbm_cbc_gemm_plan(e->ctx, op_a, A, op_b, B, U, flags, &plan, &C);
                SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
                SBM_ASSERT_OK(e->ctx, st);
                SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_execute(e->ctx, plan, alpha, A, B, U, C));
                reference ref = make_reference(alpha, op_a, A, op_b, B, U, upper);
                assert_matches(C, &ref, r, c, tol);

                sbm_gemm_plan_info info = sbm_gemm_plan_get_info(plan);
                assert_int_equal(info.products, ref.products);
                assert_int_equal(info.nnzb_c, ref.nnzb);
                assert_int_equal(info.fast_path, sbm_blk_is_fast_triple(r, k, c));
                assert_true(info.slices >= 1);
                if (e->backend == SBM_BACKEND_CPU) assert_int_equal(info.slices, 1);
                assert_true(info.plan_bytes > 0);

                /* the one-shot call gives bitwise the same result (deterministic order) */
                sbm_cbc *C1 = NULL;
                SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm(e->ctx, alpha, op_a, A, op_b, B, U, flags, &C1));
                assert_int_equal(sbm_cbc_get_info(C1).nnzb, ref.nnzb);
                assert_same_values(C, C1);

                free_reference(&ref);
                sbm_cbc_destroy(C1);
                sbm_cbc_destroy(C);
                sbm_gemm_plan_destroy(plan);
                sbm_cbc_destroy(U);
                sbm_cbc_destroy(B);
                sbm_cbc_destroy(A);
            }
        }
    }
}

/* A plan is reused with new values: in place (host memory), through new objects with equal
 * patterns, through copies; transposed operands are re-transposed each time. */
static void test_gemm_plan_reuse(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (int ops = 0; ops < 4; ops++) {
        const sbm_op op_a = (ops & 1) ? SBM_OP_T : SBM_OP_N;
        const sbm_op op_b = (ops & 2) ? SBM_OP_T : SBM_OP_N;
        const int r = 6, k = 3, c = 6;
        sbm_cbc *A = sbm_test_random_cbc_op(e->ctx, 50 + ops, op_a, 8, 9, r, k, 0.35);
        sbm_cbc *B = sbm_test_random_cbc_op(e->ctx, 60 + ops, op_b, 9, 8, k, c, 0.35);
        sbm_cbc *U = sbm_test_random_cbc_upper(e->ctx, 70 + ops, 8, 8, r, c, 0.2, 1);
        sbm_gemm_plan *plan = NULL;
        sbm_cbc *C = NULL;
        sbm_status st = sbm_cbc_gemm_plan(e->ctx, op_a, A, op_b, B, U, SBM_GEMM_UPPER, &plan, &C);
        SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
        SBM_ASSERT_OK(e->ctx, st);
        SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_execute(e->ctx, plan, 2.0, A, B, U, C));
        reference ref = make_reference(2.0, op_a, A, op_b, B, U, 1);
        assert_matches(C, &ref, r, c, tol);
        free_reference(&ref);

        /* executing again gives bitwise the same result */
        sbm_cbc *C0 = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_cbc_copy(e->ctx, C, &C0));
        SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_execute(e->ctx, plan, 2.0, A, B, U, C));
        assert_same_values(C, C0);

        /* new objects with equal patterns and new values */
        sbm_cbc *A2 = reshape_values(e->ctx, A, -1.5, 0.25);
        sbm_cbc *B2 = reshape_values(e->ctx, B, 0.5, -1.0);
        sbm_cbc *U2 = reshape_values(e->ctx, U, 3.0, 0.0);
        SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_execute(e->ctx, plan, -1.0, A2, B2, U2, C));
        ref = make_reference(-1.0, op_a, A2, op_b, B2, U2, 1);
        assert_matches(C, &ref, r, c, tol);
        free_reference(&ref);

        /* copies keep their source's pattern identity: accepted, and so is a copy of C */
        sbm_cbc *Ac = NULL, *Cc = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_cbc_copy(e->ctx, A2, &Ac));
        SBM_ASSERT_OK(e->ctx, sbm_cbc_copy(e->ctx, C, &Cc));
        SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_execute(e->ctx, plan, -1.0, Ac, B2, U2, Cc));
        assert_same_values(C, Cc);

        /* values changed in place through the info view (host memory only) */
        if (e->backend == SBM_BACKEND_CPU) {
            sbm_cbc_info ai = sbm_cbc_get_info(A);
            for (int64_t t = 0; t < ai.nnzb * ai.r * ai.c; t++) ai.values[t] = 1.0 - 0.5 * ai.values[t];
            sbm_cbc_info bi = sbm_cbc_get_info(B);
            for (int64_t t = 0; t < bi.nnzb * bi.r * bi.c; t++) bi.values[t] *= -2.0;
            SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_execute(e->ctx, plan, 0.5, A, B, U, C));
            ref = make_reference(0.5, op_a, A, op_b, B, U, 1);
            assert_matches(C, &ref, r, c, tol);
            free_reference(&ref);
        }
        sbm_cbc_destroy(Cc);
        sbm_cbc_destroy(Ac);
        sbm_cbc_destroy(U2);
        sbm_cbc_destroy(B2);
        sbm_cbc_destroy(A2);
        sbm_cbc_destroy(C0);
        sbm_cbc_destroy(C);
        sbm_gemm_plan_destroy(plan);
        sbm_cbc_destroy(U);
        sbm_cbc_destroy(B);
        sbm_cbc_destroy(A);
    }
}

/* alpha == 0 gives C = U on C's pattern (the products are not needed). */
static void test_gemm_alpha_zero(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_cbc *A = sbm_test_random_cbc_upper(e->ctx, 1, 5, 4, 3, 2, 0.5, 0);
    sbm_cbc *B = sbm_test_random_cbc_upper(e->ctx, 2, 4, 6, 2, 4, 0.5, 0);
    sbm_cbc *U = sbm_test_random_cbc_upper(e->ctx, 3, 5, 6, 3, 4, 0.3, 0);
    for (int with_u = 0; with_u < 2; with_u++) {
        sbm_cbc *C = NULL;
        sbm_status st = sbm_cbc_gemm(e->ctx, 0.0, SBM_OP_N, A, SBM_OP_N, B, with_u ? U : NULL, 0, &C);
        SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
        SBM_ASSERT_OK(e->ctx, st);
        reference ref = make_reference(0.0, SBM_OP_N, A, SBM_OP_N, B, with_u ? U : NULL, 0);
        assert_matches(C, &ref, 3, 4, 0.0);
        free_reference(&ref);
        sbm_cbc_destroy(C);
    }
    sbm_cbc_destroy(U);
    sbm_cbc_destroy(B);
    sbm_cbc_destroy(A);
}

/* Long output columns merged from several op(A) columns (both ways of ordering a column's rows
 * in the symbolic phase, and the growth of its row buffer), in both plan modes. */
static void test_gemm_long_columns(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const triple shapes[] = {{1, 1, 1}, {2, 3, 2}};
    /* {nbr, density of A}: columns of C dense in their rows, or long but sparse */
    static const struct {
        int64_t nbr;
        double density;
    } heights[] = {{120, 0.5}, {2000, 0.02}};
    for (int s = 0; s < 2; s++)
        for (int h = 0; h < 2; h++)
            for (int ops = 0; ops < 4; ops++)
                for (int variant = 0; variant < 4; variant++) {
                    const int r = shapes[s].r, k = shapes[s].k, c = shapes[s].c;
                    const sbm_op op_a = (ops & 1) ? SBM_OP_T : SBM_OP_N;
                    const sbm_op op_b = (ops & 2) ? SBM_OP_T : SBM_OP_N;
                    const int upper = variant & 1, budget = (variant & 2) != 0;
                    const int64_t nbr = heights[h].nbr, nbk = 4, nbc = upper ? nbr : 40;
                    if (upper && (r != c || nbr > 200)) continue;
                    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, budget ? 16 : 0));
                    const uint64_t seed = 700 + 100 * h + 10 * s + ops;
                    sbm_cbc *A = sbm_test_random_cbc_op(e->ctx, seed, op_a, nbr, nbk, r, k, heights[h].density);
                    sbm_cbc *B = sbm_test_random_cbc_op(e->ctx, seed + 1, op_b, nbk, nbc, k, c, 0.6);
                    sbm_cbc *U = sbm_test_random_cbc_upper(e->ctx, seed + 2, nbr, nbc, r, c, 0.05 * heights[h].density, upper);
                    sbm_cbc *C = NULL;
                    sbm_status st = sbm_cbc_gemm(e->ctx, 0.5, op_a, A, op_b, B, U,
                                                 upper ? SBM_GEMM_UPPER : 0u, &C);
                    SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
                    SBM_ASSERT_OK(e->ctx, st);
                    reference ref = make_reference(0.5, op_a, A, op_b, B, U, upper);
                    assert_true(ref.nnzb > 2 * (sbm_cbc_get_info(A).nnzb + sbm_cbc_get_info(B).nnzb));
                    assert_matches(C, &ref, r, c, tol);
                    free_reference(&ref);
                    sbm_cbc_destroy(C);
                    sbm_cbc_destroy(U);
                    sbm_cbc_destroy(B);
                    sbm_cbc_destroy(A);
                }
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, 0));
}

/* Empty matrices and columns, a zero inner dimension, single blocks. */
static void test_gemm_degenerate(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    /* {nbr, nbk, nbc, r, k, c, density} */
    static const struct {
        int64_t nbr, nbk, nbc;
        int r, k, c;
        double density;
    } cases[] = {
        {0, 0, 0, 3, 3, 3, 0.5}, {0, 4, 3, 2, 2, 2, 0.5}, {4, 3, 0, 3, 3, 3, 0.5},
        {4, 0, 3, 3, 2, 3, 0.5}, {3, 4, 5, 3, 3, 3, 0.0}, {1, 1, 1, 1, 1, 1, 1.0},
        {1, 1, 1, 16, 16, 16, 1.0}, {1, 1, 1, 5, 7, 2, 1.0}, {9, 7, 8, 2, 2, 2, 0.08},
        {1, 6, 1, 6, 3, 6, 0.7}, {7, 1, 7, 4, 4, 4, 1.0},
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        for (int variant = 0; variant < 4; variant++) {
            const int with_u = variant & 1, upper = (variant & 2) != 0;
            if (upper && (cases[t].nbr != cases[t].nbc || cases[t].r != cases[t].c)) continue;
            sbm_cbc *A = sbm_test_random_cbc_upper(e->ctx, 300 + t, cases[t].nbr, cases[t].nbk, cases[t].r, cases[t].k,
                                  cases[t].density, 0);
            sbm_cbc *B = sbm_test_random_cbc_upper(e->ctx, 400 + t, cases[t].nbk, cases[t].nbc, cases[t].k, cases[t].c,
                                  cases[t].density, 0);
            sbm_cbc *U = with_u ? sbm_test_random_cbc_upper(e->ctx, 500 + t, cases[t].nbr, cases[t].nbc, cases[t].r,
                                           cases[t].c, 0.5, upper)
                                : NULL;
            sbm_cbc *C = NULL;
            sbm_status st = sbm_cbc_gemm(e->ctx, 1.5, SBM_OP_N, A, SBM_OP_N, B, U,
                                         upper ? SBM_GEMM_UPPER : 0u, &C);
            SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
            SBM_ASSERT_OK(e->ctx, st);
            reference ref = make_reference(1.5, SBM_OP_N, A, SBM_OP_N, B, U, upper);
            assert_matches(C, &ref, cases[t].r, cases[t].c, tol);
            free_reference(&ref);
            sbm_cbc_destroy(C);
            sbm_cbc_destroy(U);
            sbm_cbc_destroy(B);
            sbm_cbc_destroy(A);
        }
    }
}

/* Inverse of a dense n x n matrix (column-major) by Gauss-Jordan elimination with partial
 * pivoting: the test's own V^-1, so that the Schur reference does not use the library's. */
static double *dense_inverse(const double *a, int64_t n)
{
    double *w = malloc((size_t)(n * n) * sizeof *w), *inv = calloc((size_t)(n * n), sizeof *inv);
    assert_non_null(w);
    assert_non_null(inv);
    memcpy(w, a, (size_t)(n * n) * sizeof *w);
    for (int64_t i = 0; i < n; i++) inv[i + i * n] = 1.0;
    for (int64_t k = 0; k < n; k++) {
        int64_t p = k;
        for (int64_t i = k + 1; i < n; i++)
            if (fabs(w[i + k * n]) > fabs(w[p + k * n])) p = i;
        assert_true(fabs(w[p + k * n]) > 0.0);
        for (int64_t j = 0; j < n; j++) {
            double t = w[k + j * n];
            w[k + j * n] = w[p + j * n];
            w[p + j * n] = t;
            t = inv[k + j * n];
            inv[k + j * n] = inv[p + j * n];
            inv[p + j * n] = t;
        }
        const double d = w[k + k * n];
        for (int64_t j = 0; j < n; j++) {
            w[k + j * n] /= d;
            inv[k + j * n] /= d;
        }
        for (int64_t i = 0; i < n; i++) {
            const double f = w[i + k * n];
            if (i == k || f == 0.0) continue;
            for (int64_t j = 0; j < n; j++) {
                w[i + j * n] -= f * w[k + j * n];
                inv[i + j * n] -= f * inv[k + j * n];
            }
        }
    }
    free(w);
    return inv;
}

/* Dense U - W V^-1 W^T with the blocks below the diagonal (b x b) zeroed, from dense copies of
 * W, V and U and the test's own inverse of V. */
static double *dense_schur(const sbm_cbc *W, const sbm_cbc *V, const sbm_cbc *U, int b)
{
    sbm_cbc_info w = sbm_cbc_get_info(W);
    const int64_t m = w.nbr * w.r, p = w.nbc * w.c;
    double *dw = sbm_test_cbc_dense(W), *dv = sbm_test_cbc_dense(V), *du = sbm_test_cbc_dense(U);
    double *vinv = dense_inverse(dv, p);
    double *x = sbm_test_dense_gemm(0, vinv, p, p, 1, dw, m, p); /* V^-1 W^T, p x m */
    double *s = sbm_test_dense_gemm(0, dw, m, p, 0, x, p, m);    /* W V^-1 W^T, m x m */
    for (int64_t j = 0; j < m; j++)
        for (int64_t i = 0; i < m; i++)
            s[i + j * m] = i / b > j / b ? 0.0 : du[i + j * m] - s[i + j * m];
    free(x);
    free(vinv);
    free(du);
    free(dv);
    free(dw);
    return s;
}

/* The bundle-adjustment shapes: S = U - (W V^-1) W^T, upper triangle, for 6x3 and 9x3 W. */
static void test_gemm_ba_schur(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (int cam = 6; cam <= 9; cam += 3) {
        const int64_t ncam = 5, npt = 12;
        sbm_cbc *W = sbm_test_random_cbc_upper(e->ctx, 90 + cam, ncam, npt, cam, 3, 0.4, 0);
        sbm_cbc *V = sbm_test_random_bdiag_spd(e->ctx, 91 + cam, npt, 3);
        sbm_cbc *U = sbm_test_random_cbc_upper(e->ctx, 92 + cam, ncam, ncam, cam, cam, 0.5, 1);
        sbm_cbc *Vinv = NULL, *WV = NULL, *S = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_cbc_copy(e->ctx, V, &Vinv));
        SBM_ASSERT_OK(e->ctx, sbm_cbc_copy(e->ctx, W, &WV));
        sbm_status st = sbm_bdiag_inverse(e->ctx, V, Vinv);
        SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
        SBM_ASSERT_OK(e->ctx, st);
        st = sbm_bdiag_scale(e->ctx, SBM_SIDE_RIGHT, Vinv, W, WV);
        SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
        SBM_ASSERT_OK(e->ctx, st);
        st = sbm_cbc_gemm(e->ctx, -1.0, SBM_OP_N, WV, SBM_OP_T, W, U, SBM_GEMM_UPPER, &S);
        SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
        SBM_ASSERT_OK(e->ctx, st);
        /* reference independent of the library's inverse and scaling: the pattern from W's
         * (W V^-1 has it), the values U - W V^-1 W^T from a Gauss-Jordan inverse of dense V */
        reference ref = make_reference(-1.0, SBM_OP_N, W, SBM_OP_T, W, U, 1);
        free(ref.dense);
        ref.dense = dense_schur(W, V, U, cam);
        assert_matches(S, &ref, cam, cam, 1e-11);
        free_reference(&ref);
        /* the same through W * (W V^-1)^T (V^-1 symmetric): op_a N, op_b T of WV */
        sbm_cbc *S2 = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm(e->ctx, -1.0, SBM_OP_N, W, SBM_OP_T, WV, U,
                                           SBM_GEMM_UPPER, &S2));
        double *s1 = sbm_test_cbc_dense(S);
        sbm_test_assert_cbc_dense(S2, s1, 1e-11);
        free(s1);
        sbm_cbc_destroy(S2);
        sbm_cbc_destroy(S);
        sbm_cbc_destroy(WV);
        sbm_cbc_destroy(Vinv);
        sbm_cbc_destroy(U);
        sbm_cbc_destroy(V);
        sbm_cbc_destroy(W);
    }
}

/* A memory budget too small for the per-product positions: the plan falls back to per-column
 * scatter and gives the same result. */
static void test_gemm_memory_budget(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (int upper = 0; upper < 2; upper++) {
        sbm_cbc *A = sbm_test_random_cbc_upper(e->ctx, 11, 12, 10, 3, 3, 0.4, 0);
        sbm_cbc *B = sbm_test_random_cbc_upper(e->ctx, 12, 12, 10, 3, 3, 0.4, 0); /* used as B^T */
        sbm_cbc *U = sbm_test_random_cbc_upper(e->ctx, 13, 12, 12, 3, 3, 0.2, upper);
        const unsigned flags = upper ? SBM_GEMM_UPPER : 0u;
        sbm_gemm_plan *p1 = NULL, *p2 = NULL;
        sbm_cbc *C1 = NULL, *C2 = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, 0));
        sbm_status st = sbm_cbc_gemm_plan(e->ctx, SBM_OP_N, A, SBM_OP_T, B, U, flags, &p1, &C1);
        SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
        SBM_ASSERT_OK(e->ctx, st);
        SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_execute(e->ctx, p1, 0.5, A, B, U, C1));
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, 64));
        SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_plan(e->ctx, SBM_OP_N, A, SBM_OP_T, B, U, flags, &p2, &C2));
        SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_execute(e->ctx, p2, 0.5, A, B, U, C2));
        /* twice: the scatter map is reused across executes */
        SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_execute(e->ctx, p2, 0.5, A, B, U, C2));
        sbm_gemm_plan_info i1 = sbm_gemm_plan_get_info(p1), i2 = sbm_gemm_plan_get_info(p2);
        assert_int_equal(i1.products, i2.products);
        assert_int_equal(i1.nnzb_c, i2.nnzb_c);
        reference ref = make_reference(0.5, SBM_OP_N, A, SBM_OP_T, B, U, upper);
        assert_matches(C2, &ref, 3, 3, tol);
        free_reference(&ref);
        if (e->backend == SBM_BACKEND_CPU) {
            assert_true(i2.plan_bytes < i1.plan_bytes);
            assert_same_values(C1, C2);
        }
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, 0));
        sbm_cbc_destroy(C2);
        sbm_cbc_destroy(C1);
        sbm_gemm_plan_destroy(p2);
        sbm_gemm_plan_destroy(p1);
        sbm_cbc_destroy(U);
        sbm_cbc_destroy(B);
        sbm_cbc_destroy(A);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Errors                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static void test_gemm_plan_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    sbm_cbc *A = sbm_test_random_cbc_upper(ctx, 1, 4, 5, 3, 2, 0.5, 0);   /* 4x5 blocks of 3x2 */
    sbm_cbc *B = sbm_test_random_cbc_upper(ctx, 2, 5, 4, 2, 3, 0.5, 0);   /* 5x4 blocks of 2x3 */
    sbm_cbc *U = sbm_test_random_cbc_upper(ctx, 3, 4, 4, 3, 3, 0.5, 0);   /* 4x4 blocks of 3x3 */
    sbm_cbc *Bk = sbm_test_random_cbc_upper(ctx, 4, 5, 4, 4, 3, 0.5, 0);  /* inner block size 4 */
    sbm_cbc *Bn = sbm_test_random_cbc_upper(ctx, 5, 6, 4, 2, 3, 0.5, 0);  /* inner dimension 6 */
    sbm_cbc *Ur = sbm_test_random_cbc_upper(ctx, 6, 4, 4, 3, 2, 0.5, 0);  /* wrong block shape */
    sbm_cbc *Ud = sbm_test_random_cbc_upper(ctx, 7, 4, 5, 3, 3, 0.5, 0);  /* wrong dimensions */
    sbm_cbc *Bw = sbm_test_random_cbc_upper(ctx, 8, 5, 3, 2, 3, 0.5, 0);  /* C would be 4x3 blocks */
    sbm_cbc *Bs = sbm_test_random_cbc_upper(ctx, 9, 5, 4, 2, 2, 0.5, 0);  /* C would have 3x2 blocks */
    double *a0 = sbm_test_cbc_dense(A), *b0 = sbm_test_cbc_dense(B), *u0 = sbm_test_cbc_dense(U);
    sbm_gemm_plan *plan = (sbm_gemm_plan *)0x1;
    sbm_cbc *C = (sbm_cbc *)0x1;

    SBM_ASSERT_FAILS(NULL, sbm_cbc_gemm_plan(NULL, SBM_OP_N, A, SBM_OP_N, B, NULL, 0, &plan, &C),
                     SBM_ERR_NULL_ARGUMENT, "sbm_cbc_gemm_plan: argument ctx is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, A, SBM_OP_N, B, NULL, 0, NULL, &C),
                     SBM_ERR_NULL_ARGUMENT, "sbm_cbc_gemm_plan: argument plan (output handle) is NULL");
    assert_null(C);
    C = (sbm_cbc *)0x1;
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, A, SBM_OP_N, B, NULL, 0, &plan, NULL),
                     SBM_ERR_NULL_ARGUMENT, "argument C (output handle) is NULL");
    assert_null(plan);
    plan = (sbm_gemm_plan *)0x1;
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, NULL, SBM_OP_N, B, NULL, 0, &plan, &C),
                     SBM_ERR_NULL_ARGUMENT, "argument A is NULL");
    assert_null(plan);
    assert_null(C);
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, A, SBM_OP_N, NULL, NULL, 0, &plan, &C),
                     SBM_ERR_NULL_ARGUMENT, "argument B is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_plan(ctx, (sbm_op)2, A, SBM_OP_N, B, NULL, 0, &plan, &C),
                     SBM_ERR_INVALID_ARGUMENT, "argument op_a: 2 is not an operation");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, A, (sbm_op)-1, B, NULL, 0, &plan, &C),
                     SBM_ERR_INVALID_ARGUMENT, "argument op_b: -1 is not an operation");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, A, SBM_OP_N, B, NULL, 6u, &plan, &C),
                     SBM_ERR_INVALID_ARGUMENT, "argument flags: unknown bits 0x6");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, A, SBM_OP_N, Bk, NULL, 0, &plan, &C),
                     SBM_ERR_BLOCK_SHAPE,
                     "inner block sizes differ: op_a(A) has 3x2 blocks, op_b(B) has 4x3 blocks: a "
                     "block of op_a(A) has 2 columns, one of op_b(B) 4 rows");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_T, A, SBM_OP_N, B, NULL, 0, &plan, &C),
                     SBM_ERR_BLOCK_SHAPE, "op_a(A) has 2x3 blocks, op_b(B) has 2x3 blocks: a block of op_a(A) has 3 "
                     "columns, one of op_b(B) 2 rows (A is 3x2 with op T");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, A, SBM_OP_N, Bn, NULL, 0, &plan, &C),
                     SBM_ERR_DIMENSION_MISMATCH,
                     "inner dimensions differ: op_a(A) is 4 x 5 blocks, op_b(B) is 6 x 4 blocks");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, A, SBM_OP_N, B, Ur, 0, &plan, &C),
                     SBM_ERR_BLOCK_SHAPE, "argument U: blocks are 3x2 but op_a(A)*op_b(B) has 3x3 blocks");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, A, SBM_OP_N, B, Ud, 0, &plan, &C),
                     SBM_ERR_DIMENSION_MISMATCH, "argument U: 4 x 5 blocks but op_a(A)*op_b(B) is 4 x 4");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, A, SBM_OP_N, Bs, NULL, SBM_GEMM_UPPER, &plan, &C),
                     SBM_ERR_BLOCK_SHAPE, "SBM_GEMM_UPPER needs square blocks in C, but C would have 3x2");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, A, SBM_OP_N, Bw, NULL, SBM_GEMM_UPPER, &plan, &C),
                     SBM_ERR_DIMENSION_MISMATCH, "needs C square in blocks, but C would be 4 x 3 blocks");
    /* U has blocks below the diagonal (random, density 0.5 on a 4x4: find the first) */
    sbm_cbc *Uh = sbm_test_cbc_to_host(U);
    sbm_cbc_info uh = sbm_cbc_get_info(Uh);
    int64_t low_j = -1, low_i = -1;
    for (int64_t j = 0; j < uh.nbc && low_j < 0; j++)
        for (int64_t q = uh.colptr[j]; q < uh.colptr[j + 1]; q++)
            if (uh.rowind[q] > j) {
                low_i = uh.rowind[q];
                low_j = j;
                break;
            }
    assert_true(low_j >= 0);
    char msg[128];
    snprintf(msg, sizeof msg, "argument U: block (%d, %d) is below the diagonal", (int)low_i, (int)low_j);
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, A, SBM_OP_N, B, U, SBM_GEMM_UPPER, &plan, &C),
                     SBM_ERR_INVALID_ARGUMENT, msg);
    assert_null(plan);
    assert_null(C);
    sbm_cbc_destroy(Uh);

    /* the one-shot call: same checks, its own name, output handle NULL on failure */
    sbm_cbc *C1 = (sbm_cbc *)0x1;
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm(ctx, 1.0, SBM_OP_N, A, SBM_OP_N, Bn, NULL, 0, &C1),
                     SBM_ERR_DIMENSION_MISMATCH, "sbm_cbc_gemm: inner dimensions differ");
    assert_null(C1);
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm(ctx, 1.0, SBM_OP_N, A, SBM_OP_N, B, NULL, 0, NULL),
                     SBM_ERR_NULL_ARGUMENT, "sbm_cbc_gemm: argument C (output handle) is NULL");
    SBM_ASSERT_FAILS(NULL, sbm_cbc_gemm(NULL, 1.0, SBM_OP_N, A, SBM_OP_N, B, NULL, 0, &C1),
                     SBM_ERR_NULL_ARGUMENT, "argument ctx is NULL");

    /* inputs unchanged */
    sbm_test_assert_cbc_dense(A, a0, 0.0);
    sbm_test_assert_cbc_dense(B, b0, 0.0);
    sbm_test_assert_cbc_dense(U, u0, 0.0);
    /* destroy and info accept NULL */
    sbm_gemm_plan_destroy(NULL);
    sbm_gemm_plan_info none = sbm_gemm_plan_get_info(NULL);
    assert_int_equal(none.products, 0);
    assert_int_equal(none.plan_bytes, 0);

    free(a0);
    free(b0);
    free(u0);
    sbm_cbc *all[] = {A, B, U, Bk, Bn, Ur, Ud, Bw, Bs};
    for (size_t t = 0; t < sizeof all / sizeof all[0]; t++) sbm_cbc_destroy(all[t]);
}

static void test_gemm_execute_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    sbm_cbc *A = sbm_test_random_cbc_upper(ctx, 21, 6, 5, 3, 3, 0.5, 0);
    sbm_cbc *B = sbm_test_random_cbc_upper(ctx, 22, 5, 6, 3, 3, 0.5, 0);
    sbm_cbc *U = sbm_test_random_cbc_upper(ctx, 23, 6, 6, 3, 3, 0.3, 1);
    sbm_gemm_plan *plan = NULL, *plan_nou = NULL;
    sbm_cbc *C = NULL, *Cnou = NULL;
    sbm_status st = sbm_cbc_gemm_plan(ctx, SBM_OP_N, A, SBM_OP_N, B, U, SBM_GEMM_UPPER, &plan, &C);
    SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
    SBM_ASSERT_OK(ctx, st);
    SBM_ASSERT_OK(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, A, SBM_OP_N, B, NULL, 0, &plan_nou, &Cnou));
    SBM_ASSERT_OK(ctx, sbm_cbc_gemm_execute(ctx, plan, 1.0, A, B, U, C));
    double *c0 = sbm_test_cbc_dense(C);

    /* same dimensions, other patterns */
    sbm_cbc *A2 = sbm_test_random_cbc_upper(ctx, 31, 6, 5, 3, 3, 0.5, 0);
    sbm_cbc *B2 = sbm_test_random_cbc_upper(ctx, 32, 5, 6, 3, 3, 0.5, 0);
    sbm_cbc *U2 = sbm_test_random_cbc_upper(ctx, 33, 6, 6, 3, 3, 0.3, 1);
    /* other dimensions or block shape */
    sbm_cbc *A3 = sbm_test_random_cbc_upper(ctx, 21, 7, 5, 3, 3, 0.5, 0);
    sbm_cbc *A4 = sbm_test_random_cbc_upper(ctx, 21, 6, 5, 3, 3, 0.5, 0); /* A's pattern, new object: accepted */

    SBM_ASSERT_FAILS(NULL, sbm_cbc_gemm_execute(NULL, plan, 1.0, A, B, U, C), SBM_ERR_NULL_ARGUMENT,
                     "sbm_cbc_gemm_execute: argument ctx is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_execute(ctx, NULL, 1.0, A, B, U, C), SBM_ERR_NULL_ARGUMENT,
                     "argument plan is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_execute(ctx, plan, 1.0, NULL, B, U, C), SBM_ERR_NULL_ARGUMENT,
                     "argument A is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_execute(ctx, plan, 1.0, A, NULL, U, C), SBM_ERR_NULL_ARGUMENT,
                     "argument B is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_execute(ctx, plan, 1.0, A, B, U, NULL), SBM_ERR_NULL_ARGUMENT,
                     "argument C is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_execute(ctx, plan, 1.0, A2, B, U, C), SBM_ERR_PLAN_MISMATCH,
                     "argument A (6 x 5 blocks of 3x3");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_execute(ctx, plan, 1.0, A3, B, U, C), SBM_ERR_PLAN_MISMATCH,
                     "argument A (7 x 5 blocks of 3x3");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_execute(ctx, plan, 1.0, A, B2, U, C), SBM_ERR_PLAN_MISMATCH,
                     "argument B (5 x 6 blocks of 3x3");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_execute(ctx, plan, 1.0, A, B, U2, C), SBM_ERR_PLAN_MISMATCH,
                     "argument U (6 x 6 blocks of 3x3");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_execute(ctx, plan, 1.0, A, B, NULL, C), SBM_ERR_PLAN_MISMATCH,
                     "argument U is NULL but the plan was made with U");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_execute(ctx, plan_nou, 1.0, A, B, U, Cnou), SBM_ERR_PLAN_MISMATCH,
                     "argument U is given but the plan was made without U");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_execute(ctx, plan, 1.0, A, B, U, Cnou), SBM_ERR_PLAN_MISMATCH,
                     "argument C (6 x 6 blocks");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_execute(ctx, plan, 1.0, A, B, U, Cnou), SBM_ERR_PLAN_MISMATCH,
                     "is not the matrix this plan created");
    /* C as an input of its own product */
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_execute(ctx, plan, 1.0, C, B, U, C), SBM_ERR_ALIASING,
                     "argument C is the same matrix as (or shares values with) argument A");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_execute(ctx, plan, 1.0, A, B, C, C), SBM_ERR_ALIASING,
                     "argument U");
    /* C untouched by the failures */
    sbm_test_assert_cbc_dense(C, c0, 0.0);
    /* an equal pattern in a new object is accepted */
    SBM_ASSERT_OK(ctx, sbm_cbc_gemm_execute(ctx, plan, 1.0, A4, B, U, C));
    sbm_test_assert_cbc_dense(C, c0, 0.0);

    /* a plan from another backend */
    if (e->backend != SBM_BACKEND_CPU) {
        sbm_cbc *hA = sbm_test_random_cbc_upper(e->host, 21, 6, 5, 3, 3, 0.5, 0);
        sbm_cbc *hB = sbm_test_random_cbc_upper(e->host, 22, 5, 6, 3, 3, 0.5, 0);
        sbm_gemm_plan *hplan = NULL;
        sbm_cbc *hC = NULL, *dC = NULL;
        SBM_ASSERT_OK(e->host, sbm_cbc_gemm_plan(e->host, SBM_OP_N, hA, SBM_OP_N, hB, NULL, 0, &hplan, &hC));
        SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, hC, &dC));
        SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_execute(ctx, hplan, 1.0, A, B, NULL, dC),
                         SBM_ERR_BACKEND_MISMATCH, "argument plan was made on the CPU backend");
        sbm_cbc_destroy(dC);
        sbm_cbc_destroy(hC);
        sbm_gemm_plan_destroy(hplan);
        sbm_cbc_destroy(hB);
        sbm_cbc_destroy(hA);
    }

    free(c0);
    sbm_cbc *all[] = {A, B, U, A2, B2, U2, A3, A4, C, Cnou};
    for (size_t t = 0; t < sizeof all / sizeof all[0]; t++) sbm_cbc_destroy(all[t]);
    sbm_gemm_plan_destroy(plan_nou);
    sbm_gemm_plan_destroy(plan);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_gemm_all_variants),  SBM_TEST_BOTH(test_gemm_plan_reuse),
        SBM_TEST_BOTH(test_gemm_alpha_zero),    SBM_TEST_BOTH(test_gemm_degenerate),
        SBM_TEST_BOTH(test_gemm_long_columns),
        SBM_TEST_BOTH(test_gemm_ba_schur),      SBM_TEST_BOTH(test_gemm_memory_budget),
        SBM_TEST_BOTH(test_gemm_plan_errors),   SBM_TEST_BOTH(test_gemm_execute_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
