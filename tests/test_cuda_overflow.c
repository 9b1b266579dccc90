/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
/* Overflow on the GPU (CUDA only; skips visibly without a GPU, or where the device has too
 * little memory: the products below hold 17 and 34 GB of plan, the conversion 41 GB).
 *
 *   - Block SpGEMM expansions beyond 2^31 and 2^32 block products with a small output: 1x1
 *     blocks, A dense m x K and B dense K x n stored as sparse matrices of ones, m = n = 1024,
 *     K = 2049 (2^31 + 2^20 products) and K = 4097 (2^32 + 2^20). Every entry of C equals K
 *     exactly (K + 1/2 on the diagonal where U = I/2 is added); the plan's 64-bit counts are
 *     checked, and a memory budget of 8 GiB makes the plan sort the expansion in slices.
 *   - A scalar conversion whose nnz exceeds 2^31: CBC -> CSR of a block-diagonal matrix of
 *     2^21 + 1 blocks of 32x32 (2^31 + 1024 scalars). The conversion works (64-bit row pointers,
 *     int32 column indices within range); the result passes sbm_csr_check, every row pointer
 *     is checked, and whole rows are checked around and beyond entry 2^31.
 * Each step's wall time is printed. */
#include "test_util.h"
#include "sbm_internal.h" /* white-box: device copies for filling and sampling */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* An OOM status from the device means this GPU is too small for the test: skip visibly. */
static void skip_if_no_memory(sbm_ctx *ctx, sbm_status st, const char *what)
{
    if (st == SBM_ERR_OUT_OF_MEMORY) {
        print_message("[  SKIP    ] %s: not enough device memory: %s\n", what, sbm_ctx_last_error(ctx));
        skip();
    }
}

/* A dense rows x cols matrix of 1x1 blocks, every value 1. */
static sbm_cbc *dense_ones(sbm_ctx *ctx, int64_t rows, int64_t cols)
{
    int64_t *colptr = malloc((size_t)(cols + 1) * sizeof *colptr);
    int32_t *rowind = malloc((size_t)(rows * cols) * sizeof *rowind);
    double *values = malloc((size_t)(rows * cols) * sizeof *values);
    assert_true(colptr && rowind && values);
    for (int64_t j = 0; j <= cols; j++) colptr[j] = j * rows;
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++) {
            rowind[j * rows + i] = (int32_t)i;
            values[j * rows + i] = 1.0;
        }
    sbm_cbc *A = NULL;
    sbm_status st = sbm_cbc_create(ctx, &A, rows, cols, 1, 1, colptr, rowind, values);
    free(values);
    free(rowind);
    free(colptr);
    skip_if_no_memory(ctx, st, "dense operand");
    SBM_ASSERT_OK(ctx, st);
    return A;
}

/* C = U + op(A) * B with A of ones (m x K, stored transposed for op T), B of ones (K x n), U the
 * diagonal I/2 or none; m = n = 1024. */
static void big_product(sbm_test_env *e, int64_t K, sbm_op op_a, int with_u)
{
    sbm_ctx *ctx = e->ctx;
    const int64_t m = 1024, n = 1024;
    sbm_cbc *A = op_a == SBM_OP_N ? dense_ones(ctx, m, K) : dense_ones(ctx, K, m);
    sbm_cbc *B = dense_ones(ctx, K, n);
    sbm_cbc *U = NULL;
    if (with_u) {
        int64_t *cp = malloc((size_t)(n + 1) * sizeof *cp);
        int32_t *ri = malloc((size_t)n * sizeof *ri);
        double *v = malloc((size_t)n * sizeof *v);
        assert_true(cp && ri && v);
        for (int64_t j = 0; j <= n; j++) cp[j] = j;
        for (int64_t j = 0; j < n; j++) {
            ri[j] = (int32_t)j;
            v[j] = 0.5;
        }
        SBM_ASSERT_OK(ctx, sbm_cbc_create(ctx, &U, n, n, 1, 1, cp, ri, v));
        free(v);
        free(ri);
        free(cp);
    }
    /* 8 GiB for the sort's workspace: the expansion (16 bytes per product in flight) is sorted in
     * slices */
    SBM_ASSERT_OK(ctx, sbm_ctx_set_memory_budget(ctx, (size_t)8 << 30));
    sbm_gemm_plan *plan = NULL;
    sbm_cbc *C = NULL;
    double t0 = seconds();
    sbm_status st = sbm_cbc_gemm_plan(ctx, op_a, A, SBM_OP_N, B, U, 0, &plan, &C);
    const double t_plan = seconds() - t0;
    SBM_ASSERT_OK(ctx, sbm_ctx_set_memory_budget(ctx, 0));
    if (st == SBM_ERR_OUT_OF_MEMORY) {
        sbm_cbc_destroy(U);
        sbm_cbc_destroy(B);
        sbm_cbc_destroy(A);
    }
    skip_if_no_memory(ctx, st, "block SpGEMM plan");
    SBM_ASSERT_OK(ctx, st);
    const sbm_gemm_plan_info pi = sbm_gemm_plan_get_info(plan);
    assert_int_equal(pi.products, m * n * K);
    assert_int_equal(pi.nnzb_c, m * n);
    assert_true(pi.slices > 1);
    t0 = seconds();
    SBM_ASSERT_OK(ctx, sbm_cbc_gemm_execute(ctx, plan, 1.0, A, B, U, C));
    SBM_ASSERT_OK(ctx, sbm_ctx_synchronize(ctx));
    const double t_exec = seconds() - t0;
    /* every entry */
    sbm_cbc *H = sbm_test_cbc_to_host(C);
    sbm_cbc_info h = sbm_cbc_get_info(H);
    assert_int_equal(h.nnzb, m * n);
    for (int64_t j = 0; j < n; j++) {
        if (h.colptr[j] != j * m) fail_msg("C.colptr[%lld] = %lld, want %lld", (long long)j,
                                           (long long)h.colptr[j], (long long)(j * m));
        for (int64_t i = 0; i < m; i++) {
            const int64_t p = j * m + i;
            const double want = (double)K + (with_u && i == j ? 0.5 : 0.0);
            if (h.rowind[p] != i || h.values[p] != want)
                fail_msg("C(%lld, %lld): row %d value %.17g, want row %lld value %.17g",
                         (long long)i, (long long)j, h.rowind[p], h.values[p], (long long)i, want);
        }
    }
    assert_int_equal(h.colptr[n], m * n);
    print_message("[  INFO    ] K = %lld%s%s: %lld block products (2^31 = %lld, 2^32 = %lld), %lld "
                  "slices, plan %.0f MB, plan %.2f s, execute %.2f s; all %lld entries of C exact\n",
                  (long long)K, op_a == SBM_OP_T ? ", op(A) = T" : "", with_u ? ", U = I/2" : "",
                  (long long)pi.products, 1ll << 31, 1ll << 32, (long long)pi.slices,
                  (double)pi.plan_bytes / 1e6, t_plan, t_exec, (long long)(m * n));
    sbm_cbc_destroy(H);
    sbm_cbc_destroy(C);
    sbm_gemm_plan_destroy(plan);
    sbm_cbc_destroy(U);
    sbm_cbc_destroy(B);
    sbm_cbc_destroy(A);
}

static void test_cuda_gemm_expansion_2p31(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    /* op(A) = A^T from a stored K x m matrix, and U: the transposed-operand and U paths */
    big_product(e, 2049, SBM_OP_T, 1);
}

static void test_cuda_gemm_expansion_2p32(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    big_product(e, 4097, SBM_OP_N, 0);
}

/* CBC -> CSR with more than 2^31 scalar entries. */
static void test_cuda_to_csr_2p31(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    const int b = 32;
    const int64_t nb = ((int64_t)1 << 21) + 1, bb = (int64_t)b * b, total = nb * bb, m = nb * b;
    int64_t *colptr = malloc((size_t)(nb + 1) * sizeof *colptr);
    int32_t *rowind = malloc((size_t)nb * sizeof *rowind);
    assert_true(colptr && rowind);
    for (int64_t j = 0; j <= nb; j++) colptr[j] = j;
    for (int64_t j = 0; j < nb; j++) rowind[j] = (int32_t)j;
    sbm_cbc *A = NULL;
    double t0 = seconds();
    sbm_status st = sbm_cbc_create(ctx, &A, nb, nb, b, b, colptr, rowind, NULL);
    free(rowind);
    free(colptr);
    skip_if_no_memory(ctx, st, "a matrix of 2^31 + 1024 scalars");
    SBM_ASSERT_OK(ctx, st);
    /* values: entry t of the value array holds t (exact in a double) */
    sbm_cbc_info ai = sbm_cbc_get_info(A);
    const int64_t chunk = (int64_t)1 << 24;
    double *buf = malloc((size_t)chunk * sizeof *buf);
    assert_non_null(buf);
    for (int64_t off = 0; off < total; off += chunk) {
        const int64_t len = total - off < chunk ? total - off : chunk;
        for (int64_t t = 0; t < len; t++) buf[t] = (double)(off + t);
        SBM_ASSERT_OK(ctx, ctx->ops->copy(ctx, ai.values + off, buf, (size_t)len * sizeof(double), 0));
    }
    free(buf);
    const double t_fill = seconds() - t0;
    sbm_csr *S = NULL;
    t0 = seconds();
    st = sbm_cbc_to_csr(ctx, A, &S);
    if (st == SBM_ERR_OUT_OF_MEMORY) sbm_cbc_destroy(A);
    skip_if_no_memory(ctx, st, "CBC -> CSR of 2^31 + 1024 scalars");
    SBM_ASSERT_OK(ctx, st);
    SBM_ASSERT_OK(ctx, sbm_ctx_synchronize(ctx));
    const double t_conv = seconds() - t0;
    sbm_cbc_destroy(A);
    sbm_csr_info si = sbm_csr_get_info(S);
    assert_int_equal(si.m, m);
    assert_int_equal(si.n, m);
    assert_int_equal(si.nnz, total);
    assert_true(si.nnz > ((int64_t)1 << 31));
    t0 = seconds();
    SBM_ASSERT_OK(ctx, sbm_csr_check(ctx, S, 1));
    const double t_check = seconds() - t0;
    /* every row pointer: 32 entries per row */
    int64_t *rp = malloc((size_t)(m + 1) * sizeof *rp);
    assert_non_null(rp);
    SBM_ASSERT_OK(ctx, ctx->ops->copy(ctx, rp, si.rowptr, (size_t)(m + 1) * sizeof *rp, 1));
    for (int64_t i = 0; i <= m; i++)
        if (rp[i] != i * b) fail_msg("rowptr[%lld] = %lld, want %lld", (long long)i, (long long)rp[i], (long long)(i * b));
    /* whole rows: the first, those around entry 2^31, the last, and a stride through the rest */
    const int64_t r31 = ((int64_t)1 << 31) / b;
    int64_t rows_checked = 0;
    for (int64_t i = 0; i < m; i++) {
        const int near = i < 64 || (i >= r31 - 64 && i < r31 + 64) || i >= m - 64;
        if (!near && i % 100003 != 0) continue;
        int32_t ci[32];
        double v[32];
        SBM_ASSERT_OK(ctx, ctx->ops->copy(ctx, ci, si.colind + rp[i], sizeof ci, 1));
        SBM_ASSERT_OK(ctx, ctx->ops->copy(ctx, v, si.values + rp[i], sizeof v, 1));
        const int64_t d = i / b, ii = i % b;
        for (int jj = 0; jj < b; jj++) {
            const double want = (double)(d * bb + ii + (int64_t)jj * b);
            if (ci[jj] != d * b + jj || v[jj] != want)
                fail_msg("row %lld, entry %d (position %lld): column %d value %.17g, want column "
                         "%lld value %.17g", (long long)i, jj, (long long)(rp[i] + jj), ci[jj], v[jj],
                         (long long)(d * b + jj), want);
        }
        rows_checked++;
    }
    print_message("[  INFO    ] CBC -> CSR: %lld scalars (2^31 = %lld), %lld rows; fill %.2f s, "
                  "conversion %.2f s, sbm_csr_check %.2f s; %lld row pointers and %lld whole "
                  "rows checked\n", (long long)si.nnz, 1ll << 31, (long long)m, t_fill, t_conv,
                  t_check, (long long)(m + 1), (long long)rows_checked);
    free(rp);
    sbm_csr_destroy(S);
}

int main(void)
{
    sbm_test_require_gpu("test_cuda_overflow");
    const struct CMUnitTest tests[] = {
        SBM_TEST_CUDA(test_cuda_gemm_expansion_2p31),
        SBM_TEST_CUDA(test_cuda_gemm_expansion_2p32),
        SBM_TEST_CUDA(test_cuda_to_csr_2p31),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
