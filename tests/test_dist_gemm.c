/* SPDX-License-Identifier: BSD-3-Clause */
/* The block SpGEMM over a group (sbm_cbc_gemm_dist) on CPU ranks: the gathered product bitwise
 * equal to sbm_cbc_gemm on one context for 1 to 5 ranks, every op pair, with and without U and
 * SBM_GEMM_UPPER (the (W V^-1) W^T product of BA); the ranks' parts holding exactly their
 * columns; empty and degenerate shapes; every error path. */
#define _POSIX_C_SOURCE 200809L

#include "sbm_dist.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

/* Bitwise equality of two matrices (pattern and values). */
static void same_bits(const sbm_cbc *X, const sbm_cbc *Y)
{
    sbm_cbc *x = sbm_test_cbc_to_host(X), *y = sbm_test_cbc_to_host(Y);
    const sbm_cbc_info a = sbm_cbc_get_info(x), b = sbm_cbc_get_info(y);
    assert_int_equal(a.nbr, b.nbr);
    assert_int_equal(a.nbc, b.nbc);
    assert_int_equal(a.nnzb, b.nnzb);
    assert_memory_equal(a.colptr, b.colptr, (size_t)(a.nbc + 1) * sizeof(int64_t));
    if (a.nnzb) {
        assert_memory_equal(a.rowind, b.rowind, (size_t)a.nnzb * sizeof(int32_t));
        assert_memory_equal(a.values, b.values, (size_t)a.nnzb * a.r * a.c * sizeof(double));
    }
    sbm_cbc_destroy(x), sbm_cbc_destroy(y);
}

static void check(sbm_ctx *ctx, int P, sbm_op oa, sbm_op ob, int with_u, unsigned flags,
                  int64_t m, int64_t k, int64_t n, double density, uint64_t seed)
{
    const int upper = (flags & SBM_GEMM_UPPER) != 0;
    if (upper) n = m;
    const int bc = upper ? 3 : 4, bs = 3 * bc; /* C's blocks: 3 x bc, square when upper */
    sbm_cbc *A = sbm_test_random_cbc_op(ctx, seed, oa, m, k, 3, 2, density);
    sbm_cbc *B = sbm_test_random_cbc_op(ctx, seed + 1, ob, k, n, 2, bc, density);
    sbm_cbc *U = with_u ? sbm_test_random_cbc_upper(ctx, seed + 2, m, n, 3, bc, density, upper) : NULL;
    sbm_cbc *C1 = NULL, *C2 = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_gemm(ctx, -1.5, oa, A, ob, B, U, flags, &C1));
    sbm_group *g = NULL;
    assert_int_equal(sbm_group_create_cpu(P, &g), SBM_SUCCESS);
    sbm_cbc *parts[8] = {NULL};
    SBM_ASSERT_OK(ctx, sbm_cbc_gemm_dist(g, -1.5, oa, A, ob, B, U, flags, ctx, &C2, parts));
    same_bits(C1, C2);
    /* the parts: each column of C in exactly one part, the same bits */
    sbm_cbc *h1 = sbm_test_cbc_to_host(C1);
    const sbm_cbc_info c1 = sbm_cbc_get_info(h1);
    int64_t total = 0;
    for (int l = 0; l < P; l++) {
        sbm_cbc *hp = sbm_test_cbc_to_host(parts[l]);
        const sbm_cbc_info pi = sbm_cbc_get_info(hp);
        assert_int_equal(pi.nbc, c1.nbc);
        total += pi.nnzb;
        for (int64_t j = 0; j < pi.nbc; j++) {
            const int64_t cnt = pi.colptr[j + 1] - pi.colptr[j];
            if (cnt == 0) continue;
            assert_int_equal(cnt, c1.colptr[j + 1] - c1.colptr[j]);
            assert_memory_equal(pi.values + pi.colptr[j] * bs, c1.values + c1.colptr[j] * bs,
                                (size_t)cnt * bs * sizeof(double));
        }
        sbm_cbc_destroy(hp);
        sbm_cbc_destroy(parts[l]);
    }
    assert_int_equal(total, c1.nnzb);
    sbm_cbc_destroy(h1);
    sbm_group_destroy(g);
    sbm_cbc_destroy(A), sbm_cbc_destroy(B), sbm_cbc_destroy(U), sbm_cbc_destroy(C1), sbm_cbc_destroy(C2);
}

static void test_gemm_dist_bitwise(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const sbm_op ops[2] = {SBM_OP_N, SBM_OP_T};
    uint64_t seed = 10;
    for (int P = 1; P <= 5; P++)
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++)
                for (int u = 0; u < 2; u++) {
                    check(e->ctx, P, ops[a], ops[b], u, 0, 13, 9, 17, 0.3, seed += 3);
                    check(e->ctx, P, ops[a], ops[b], u, SBM_GEMM_UPPER, 12, 9, 12, 0.3, seed += 3);
                }
    /* more ranks than columns, an empty B, a single column */
    check(e->ctx, 5, SBM_OP_N, SBM_OP_N, 0, 0, 4, 3, 2, 0.6, 1);
    check(e->ctx, 3, SBM_OP_N, SBM_OP_T, 1, 0, 5, 4, 6, 0.0, 2);
    check(e->ctx, 4, SBM_OP_N, SBM_OP_N, 1, 0, 6, 5, 1, 0.8, 3);
}

/* The BA product (W V^-1) W^T, upper, as the Schur complement forms it. */
static void test_gemm_dist_schur(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_cbc *Y = sbm_test_random_cbc(e->ctx, 5, 30, 400, 9, 3, 0.05);
    sbm_cbc *W = sbm_test_random_cbc(e->ctx, 5, 30, 400, 9, 3, 0.05);
    sbm_cbc *C1 = NULL, *C2 = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm(e->ctx, 1.0, SBM_OP_N, Y, SBM_OP_T, W, NULL, SBM_GEMM_UPPER, &C1));
    for (int P = 2; P <= 4; P++) {
        sbm_group *g = NULL;
        assert_int_equal(sbm_group_create_cpu(P, &g), SBM_SUCCESS);
        SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_dist(g, 1.0, SBM_OP_N, Y, SBM_OP_T, W, NULL,
                                                SBM_GEMM_UPPER, e->ctx, &C2, NULL));
        same_bits(C1, C2);
        sbm_cbc_destroy(C2);
        sbm_group_destroy(g);
    }
    sbm_cbc_destroy(Y), sbm_cbc_destroy(W), sbm_cbc_destroy(C1);
}

static void test_gemm_dist_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_cbc *A = sbm_test_random_cbc(e->ctx, 1, 4, 5, 2, 2, 0.5);
    sbm_cbc *B = sbm_test_random_cbc(e->ctx, 2, 6, 3, 2, 2, 0.5);
    sbm_cbc *C = (sbm_cbc *)&A;
    sbm_group *g = NULL;
    assert_int_equal(sbm_group_create_cpu(2, &g), SBM_SUCCESS);
    assert_int_equal(sbm_cbc_gemm_dist(g, 1.0, SBM_OP_N, A, SBM_OP_N, B, NULL, 0, NULL, &C, NULL),
                     SBM_ERR_NULL_ARGUMENT);
    SBM_ASSERT_FAILS(e->ctx, sbm_cbc_gemm_dist(NULL, 1.0, SBM_OP_N, A, SBM_OP_N, B, NULL, 0, e->ctx, &C, NULL),
                     SBM_ERR_NULL_ARGUMENT, "sbm_cbc_gemm_dist: argument group is NULL");
    assert_null(C);
    SBM_ASSERT_FAILS(e->ctx, sbm_cbc_gemm_dist(g, 1.0, SBM_OP_N, A, SBM_OP_N, B, NULL, 0, e->ctx, NULL, NULL),
                     SBM_ERR_NULL_ARGUMENT, "arguments C and parts are both NULL");
    SBM_ASSERT_FAILS(e->ctx, sbm_cbc_gemm_dist(g, 1.0, SBM_OP_N, NULL, SBM_OP_N, B, NULL, 0, e->ctx, &C, NULL),
                     SBM_ERR_NULL_ARGUMENT, "argument A");
    SBM_ASSERT_FAILS(e->ctx, sbm_cbc_gemm_dist(g, 1.0, SBM_OP_N, A, (sbm_op)7, B, NULL, 0, e->ctx, &C, NULL),
                     SBM_ERR_INVALID_ARGUMENT, "argument op_b = 7 is not SBM_OP_N or SBM_OP_T");
    /* 4 x 5 times 6 x 3: the ranks' product fails, named by rank */
    SBM_ASSERT_FAILS(e->ctx, sbm_cbc_gemm_dist(g, 1.0, SBM_OP_N, A, SBM_OP_N, B, NULL, 0, e->ctx, &C, NULL),
                     SBM_ERR_DIMENSION_MISMATCH, "sbm_cbc_gemm_dist: rank 0: ");
    assert_null(C);
    sbm_group_destroy(g);
    sbm_cbc_destroy(A), sbm_cbc_destroy(B);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_CPU(test_gemm_dist_bitwise),
        SBM_TEST_CPU(test_gemm_dist_schur),
        SBM_TEST_CPU(test_gemm_dist_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
