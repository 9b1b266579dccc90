/* SPDX-License-Identifier: BSD-3-Clause */
/* Overflow: sizes whose scalar dimensions or array sizes do not fit the index types are refused
 * with SBM_ERR_OVERFLOW and a message naming the argument and the values; conversions whose
 * scalar column count exceeds the int32 column index are refused; headers announcing absurd
 * counts do not make a reader allocate them; and the block SpGEMM counts its expansion
 * (products and blocks of C) in 64 bits.
 *
 * Limitation: a product whose expansion really exceeds 2^31 block products (the target)
 * needs minutes and tens of GiB on the host; here the counting is checked with a dense block
 * column times a dense block row (n^2 products, n = 2048 with 1x1 blocks: 4.2 million) against
 * the closed form, and the 2^31 and 2^32 cases are left to the GPU runs of the reliability
 * issue. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include "test_util.h"
#include "sbm_internal.h" /* white-box: sbm__cbc_alloc */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_dimension_overflow(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const int64_t colptr[2] = {0, 0};
    sbm_cbc *A = (sbm_cbc *)0x1;
    /* block rows past the int32 row index */
    SBM_ASSERT_FAILS(e->ctx, sbm_cbc_create(e->ctx, &A, (int64_t)INT32_MAX + 1, 1, 1, 1, colptr, NULL, NULL),
                     SBM_ERR_OVERFLOW, "2147483648 block rows exceed the int32 row index range");
    assert_null(A);
    /* scalar columns nbc*c past int64 */
    A = (sbm_cbc *)0x1;
    SBM_ASSERT_FAILS(e->ctx, sbm_cbc_create(e->ctx, &A, 1, INT64_MAX / 16, 1, 32, colptr, NULL, NULL),
                     SBM_ERR_OVERFLOW, "overflows int64");
    assert_null(A);
    /* scalar rows nbr*r fit, but only just: INT32_MAX block rows of 32 rows is allowed */
    const int64_t cp1[2] = {0, 0};
    A = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_cbc_create(e->ctx, &A, INT32_MAX, 1, 32, 32, cp1, NULL, NULL));
    sbm_cbc_info ai = sbm_cbc_get_info(A);
    assert_int_equal(ai.nbr * ai.r, (int64_t)INT32_MAX * 32);
    sbm_cbc_destroy(A);
    /* CSR: columns past the int32 column index */
    const int64_t rowptr[2] = {0, 0};
    sbm_csr *S = (sbm_csr *)0x1;
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_create(e->ctx, &S, 1, (int64_t)INT32_MAX + 2, rowptr, NULL, NULL),
                     SBM_ERR_OVERFLOW, "at most 2^31 columns");
    assert_null(S);
    S = (sbm_csr *)0x1;
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_create(e->ctx, &S, INT64_MAX, 1, rowptr, NULL, NULL),
                     SBM_ERR_OVERFLOW, "exceeds the index range");
    assert_null(S);
}

/* The value array of a matrix (nnzb * r*c doubles) overflows size_t. No valid call reaches this
 * on a 64-bit host (the index arrays would not fit the address space first, and the public
 * functions read them before sizing the values), so the guard every allocation goes through is
 * tested white-box. */
static void test_value_array_overflow(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_cbc *A = (sbm_cbc *)0x1;
    assert_int_equal(sbm__cbc_alloc(e->ctx, 1, 1, 32, 32, (int64_t)1 << 60, &A), SBM_ERR_OVERFLOW);
    assert_null(A);
    assert_non_null(strstr(sbm_ctx_last_error(e->ctx), "size of block values"));
    assert_non_null(strstr(sbm_ctx_last_error(e->ctx), "overflows size_t"));
    sbm_csr *S = (sbm_csr *)0x1;
    assert_int_equal(sbm__csr_alloc(e->ctx, 1, 1, (int64_t)1 << 62, &S), SBM_ERR_OVERFLOW);
    assert_null(S);
    assert_non_null(strstr(sbm_ctx_last_error(e->ctx), "overflows size_t"));
    /* the context is usable */
    sbm_cbc *B = sbm_test_random_cbc(e->ctx, 1, 3, 3, 2, 2, 0.5);
    assert_non_null(B);
    sbm_cbc_destroy(B);
}

/* A CBC matrix whose scalar column count exceeds 2^31 (2^26 + 1 block columns of 32 columns,
 * no blocks: the column pointers are one lazily zeroed allocation) cannot become CSR or be
 * reblocked (both have int32 column indices). */
static void test_conversion_overflow(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    if (e->backend != SBM_BACKEND_CPU) skip(); /* wraps host memory */
    const int64_t nbc = ((int64_t)1 << 26) + 1;
    int64_t *colptr = calloc((size_t)nbc + 1, sizeof *colptr);
    int32_t rowind[1] = {0};
    double values[1] = {0};
    assert_non_null(colptr);
    sbm_cbc *A = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_cbc_wrap(e->ctx, &A, 1, nbc, 1, 32, colptr, rowind, values));
    sbm_csr *S = (sbm_csr *)0x1;
    SBM_ASSERT_FAILS(e->ctx, sbm_cbc_to_csr(e->ctx, A, &S), SBM_ERR_OVERFLOW,
                     "2147483680 scalar columns exceed the int32 column index range");
    assert_null(S);
    sbm_cbc *B = (sbm_cbc *)0x1;
    SBM_ASSERT_FAILS(e->ctx, sbm_cbc_reblock(e->ctx, A, 1, 1, &B), SBM_ERR_OVERFLOW,
                     "2147483680 scalar columns");
    assert_null(B);
    sbm_cbc_destroy(A);
    free(colptr);
}

/* Headers that announce absurd counts: the readers grow their arrays with what they read, so
 * the file ends (a parse error) before anything large is allocated. */
static void test_header_counts(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    char dir[512], path[600];
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/sbm_test_overflow_XXXXXX", base && *base ? base : "/tmp");
    assert_non_null(mkdtemp(dir));
    static const struct {
        const char *name, *text;
        sbm_status status;
        const char *substring;
    } rows[] = {
        {"a.mtx", "%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 4000000000000000000\n1 1 1\n",
         SBM_ERR_PARSE, "size line announces 4000000000000000000 entries, but the whole file has only"},
        {"s.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2000000000 2000000000 4611686018427387904\n1 1 1\n",
         SBM_ERR_PARSE, "size line announces 4611686018427387904 entries"},
        {"b.txt", "2000000000 2000000000 9000000000000000000\n0 0 1 1\n", SBM_ERR_PARSE,
         "the observation count: 9000000000000000000 is out of range"},
        {"c.txt", "2000000000 2000000000 100000000000\n0 0 1 1\n", SBM_ERR_PARSE,
         "the file ends before observation 2 of 100000000000"},
    };
    for (size_t t = 0; t < sizeof rows / sizeof rows[0]; t++) {
        snprintf(path, sizeof path, "%s/%s", dir, rows[t].name);
        FILE *fp = fopen(path, "wb");
        assert_non_null(fp);
        fputs(rows[t].text, fp);
        fclose(fp);
        if (strstr(rows[t].name, ".mtx")) {
            sbm_csr *A = (sbm_csr *)0x1;
            SBM_ASSERT_FAILS(e->ctx, sbm_csr_read_mtx(e->ctx, path, &A), rows[t].status,
                             rows[t].substring);
            assert_null(A);
        } else {
            sbm_bal_problem *p = (sbm_bal_problem *)0x1;
            SBM_ASSERT_FAILS(e->ctx, sbm_bal_read(e->ctx, path, &p), rows[t].status,
                             rows[t].substring);
            assert_null(p);
        }
        remove(path);
    }
    remove(dir);
}

/* A dense block column (n x 1 blocks) times a dense block row (1 x n): n^2 products and n^2
 * blocks of C, counted by the plan in 64 bits; values spot-checked. With op T on both sides
 * the same product is formed from the transposed storage. */
static void test_expansion_count(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const int64_t n = 2048;
    int64_t *cp_col = malloc(2 * sizeof(int64_t)), *cp_row = malloc((size_t)(n + 1) * sizeof(int64_t));
    int32_t *ri_col = malloc((size_t)n * sizeof(int32_t)), *ri_row = malloc((size_t)n * sizeof(int32_t));
    double *a = malloc((size_t)n * sizeof(double)), *b = malloc((size_t)n * sizeof(double));
    cp_col[0] = 0;
    cp_col[1] = n;
    for (int64_t i = 0; i < n; i++) {
        ri_col[i] = (int32_t)i;
        ri_row[i] = 0;
        cp_row[i] = i;
        a[i] = 1.0 + (double)i;
        b[i] = 1.0 / (1.0 + (double)i);
    }
    cp_row[n] = n;
    sbm_cbc *Acol = NULL, *Brow = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_cbc_create(e->ctx, &Acol, n, 1, 1, 1, cp_col, ri_col, a));
    SBM_ASSERT_OK(e->ctx, sbm_cbc_create(e->ctx, &Brow, 1, n, 1, 1, cp_row, ri_row, b));
    for (int variant = 0; variant < 2; variant++) {
        /* variant 0: Acol * Brow; variant 1: (Brow)^T * (Acol)^T = the transpose product */
        sbm_gemm_plan *plan = NULL;
        sbm_cbc *C = NULL;
        if (variant == 0)
            SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_plan(e->ctx, SBM_OP_N, Acol, SBM_OP_N, Brow, NULL, 0,
                                                    &plan, &C));
        else
            SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_plan(e->ctx, SBM_OP_T, Brow, SBM_OP_T, Acol, NULL, 0,
                                                    &plan, &C));
        sbm_gemm_plan_info pi = sbm_gemm_plan_get_info(plan);
        assert_int_equal(pi.products, n * n);
        assert_int_equal(pi.nnzb_c, n * n);
        SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_execute(e->ctx, plan, 1.0,
                                                   variant == 0 ? Acol : Brow,
                                                   variant == 0 ? Brow : Acol, NULL, C));
        sbm_cbc *H = sbm_test_cbc_to_host(C);
        sbm_cbc_info ci = sbm_cbc_get_info(H);
        assert_int_equal(ci.nnzb, n * n);
        assert_int_equal(ci.colptr[n], n * n);
        /* C(i,j) = a_i * b_j (variant 0) or b_i * a_j (variant 1); column j is dense */
        for (int64_t j = 0; j < n; j += 511)
            for (int64_t i = 0; i < n; i += 257) {
                const double want = variant == 0 ? a[i] * b[j] : b[i] * a[j];
                const int64_t k = ci.colptr[j] + i;
                assert_int_equal(ci.rowind[k], i);
                assert_true(fabs(ci.values[k] - want) <= 1e-14 * fabs(want));
            }
        sbm_cbc_destroy(H);
        sbm_cbc_destroy(C);
        sbm_gemm_plan_destroy(plan);
    }
    sbm_cbc_destroy(Acol);
    sbm_cbc_destroy(Brow);
    free(cp_col);
    free(cp_row);
    free(ri_col);
    free(ri_row);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_dimension_overflow),
        SBM_TEST_BOTH(test_value_array_overflow),
        SBM_TEST_BOTH(test_conversion_overflow),
        SBM_TEST_BOTH(test_header_counts),
        SBM_TEST_BOTH(test_expansion_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
