/* Scalar CSR SpMV y = alpha*A*x + beta*y: seeded random matrices of several row-length
 * distributions and shapes against a dense reference, alpha/beta combinations (beta = 0 with NaN
 * in y), and every error path. */
#include "csr_test_common.h"

/* Skip on a backend without CSR SpMV (the only status that skips), before allocating. */
static void require_spmv(sbm_test_env *e)
{
    int64_t zero = 0;
    sbm_csr *Z = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_csr_create(e->ctx, &Z, 0, 0, &zero, NULL, NULL));
    sbm_status st = sbm_csr_spmv(e->ctx, 1.0, Z, NULL, 0.0, NULL);
    sbm_csr_destroy(Z);
    SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
    SBM_ASSERT_OK(e->ctx, st);
}

typedef struct spmv_case {
    int64_t m, n;
    csr_kind kind;
    double density;
} spmv_case;

static const spmv_case cases[] = {
    {1, 1, CSR_UNIFORM, 1.0},      {40, 40, CSR_UNIFORM, 0.1},     {300, 300, CSR_POWER, 0},
    {60, 45, CSR_EMPTY_ROWS, 0.2}, {50, 80, CSR_DENSE_ROW, 0.05},  {7, 200, CSR_UNIFORM, 0.3},
    {200, 7, CSR_UNIFORM, 0.3},    {30, 30, CSR_UNIFORM, 0.0},     {0, 9, CSR_UNIFORM, 0.5},
    {9, 0, CSR_UNIFORM, 0.5},      {0, 0, CSR_UNIFORM, 0.5},       {500, 1000, CSR_POWER, 0},
};

static const double alphas[] = {1.0, -2.5, 0.0, 0.75};
static const double betas[] = {0.0, 1.0, -0.5, 2.0};

static void test_csr_spmv_random(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_spmv(e);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const spmv_case *k = &cases[c];
        hcsr a = hcsr_random(1000 + c, k->m, k->n, k->kind, k->density);
        sbm_csr *A = hcsr_upload(e->ctx, &a);
        double *ad = hcsr_dense(&a);
        double *x = sbm_test_random_vector(2000 + c, k->n);
        double *dx = sbm_test_vec_upload(e->ctx, x, k->n);
        double *want = malloc(((size_t)k->m + 1) * sizeof *want);
        double *got = malloc(((size_t)k->m + 1) * sizeof *got);
        assert_true(want && got);

        for (size_t ia = 0; ia < sizeof alphas / sizeof alphas[0]; ia++)
            for (size_t ib = 0; ib < sizeof betas / sizeof betas[0]; ib++) {
                const double alpha = alphas[ia], beta = betas[ib];
                double *y0 = sbm_test_random_vector(3000 + 16 * c + 4 * ia + ib, k->m);
                /* beta == 0 must ignore y: poison it */
                if (beta == 0.0)
                    for (int64_t i = 0; i < k->m; i++) y0[i] = i % 2 ? NAN : INFINITY;
                for (int64_t i = 0; i < k->m; i++) {
                    double s = 0;
                    for (int64_t j = 0; j < k->n; j++) s += ad[i + j * k->m] * x[j];
                    want[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y0[i];
                }
                double *dy = sbm_test_vec_upload(e->ctx, y0, k->m);
                SBM_ASSERT_OK(e->ctx, sbm_csr_spmv(e->ctx, alpha, A, dx, beta, dy));
                sbm_test_vec_download_into(e->ctx, got, dy, k->m);
                sbm_test_assert_near(got, want, k->m, 1e-15 * (double)(k->n + 4), "y");
                dev_free(e->ctx, dy);
                free(y0);
            }

        /* x unchanged */
        double *x_after = sbm_test_vec_download(e->ctx, dx, k->n);
        assert_same_bits(x, x_after, k->n, "x");
        free(x_after);
        free(want);
        free(got);
        dev_free(e->ctx, dx);
        free(x);
        free(ad);
        sbm_csr_destroy(A);
        hcsr_free(&a);
    }
}

/* Zero-length vectors may be NULL: y of a matrix without rows, x of one without columns. */
static void test_csr_spmv_empty_null(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_spmv(e);
    hcsr a0 = hcsr_random(1, 0, 5, CSR_UNIFORM, 0.5), a1 = hcsr_random(2, 4, 0, CSR_UNIFORM, 0.5);
    sbm_csr *A0 = hcsr_upload(e->ctx, &a0), *A1 = hcsr_upload(e->ctx, &a1);
    double x[5] = {1, 2, 3, 4, 5}, y[4] = {1, NAN, 3, 4}, got[4];
    double *dx = sbm_test_vec_upload(e->ctx, x, 5), *dy = sbm_test_vec_upload(e->ctx, y, 4);
    SBM_ASSERT_OK(e->ctx, sbm_csr_spmv(e->ctx, 1.0, A0, dx, 0.0, NULL));
    /* x is still required for a 0x5 matrix: its length is 5 */
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_spmv(e->ctx, 1.0, A0, NULL, 0.0, NULL),
                     SBM_ERR_NULL_ARGUMENT, "argument x is NULL (A is 0x5, x needs 5 elements)");
    /* 4x0: y = beta*y (NaN * 2 stays NaN), then y = 0 for beta = 0 */
    SBM_ASSERT_OK(e->ctx, sbm_csr_spmv(e->ctx, 1.0, A1, NULL, 2.0, dy));
    sbm_test_vec_download_into(e->ctx, got, dy, 4);
    assert_true(got[0] == 2.0 && isnan(got[1]) && got[2] == 6.0 && got[3] == 8.0);
    SBM_ASSERT_OK(e->ctx, sbm_csr_spmv(e->ctx, 1.0, A1, NULL, 0.0, dy));
    sbm_test_vec_download_into(e->ctx, got, dy, 4);
    for (int i = 0; i < 4; i++) assert_true(got[i] == 0.0);
    dev_free(e->ctx, dx);
    dev_free(e->ctx, dy);
    sbm_csr_destroy(A0);
    sbm_csr_destroy(A1);
    hcsr_free(&a0);
    hcsr_free(&a1);
}

/* Every error path: status, message, and y, x, A unchanged. */
static void test_csr_spmv_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    hcsr a = hcsr_random(5, 6, 4, CSR_UNIFORM, 0.5);
    sbm_csr *A = hcsr_upload(ctx, &a);
    double *a_before = sbm_test_csr_dense(A);
    double hx[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, hy[6] = {-1, -2, -3, -4, -5, -6};
    double *dx = sbm_test_vec_upload(ctx, hx, 10), *dy = sbm_test_vec_upload(ctx, hy, 6);

    assert_int_equal(sbm_csr_spmv(NULL, 1.0, A, dx, 0.0, dy), SBM_ERR_NULL_ARGUMENT);
    assert_non_null(strstr(sbm_ctx_last_error(NULL), "sbm_csr_spmv: argument ctx is NULL"));
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmv(ctx, 1.0, NULL, dx, 0.0, dy), SBM_ERR_NULL_ARGUMENT,
                     "sbm_csr_spmv: argument A is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmv(ctx, 1.0, A, NULL, 0.0, dy), SBM_ERR_NULL_ARGUMENT,
                     "argument x is NULL (A is 6x4, x needs 4 elements)");
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmv(ctx, 1.0, A, dx, 0.0, NULL), SBM_ERR_NULL_ARGUMENT,
                     "argument y is NULL (A is 6x4, y needs 6 elements)");
    /* x == y, and partial overlaps either way */
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmv(ctx, 1.0, A, dx, 0.0, dx), SBM_ERR_ALIASING,
                     "arguments x (4 elements at");
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmv(ctx, 1.0, A, dx, 1.0, dx + 3), SBM_ERR_ALIASING,
                     "overlap");
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmv(ctx, 1.0, A, dx + 4, 1.0, dx), SBM_ERR_ALIASING,
                     "and y (6 elements at");
    /* adjacent, not overlapping: accepted (a backend without SpMV gets past the checks too) */
    double *dxy = sbm_test_vec_upload(ctx, hx, 10);
    sbm_status st = sbm_csr_spmv(ctx, 1.0, A, dxy, 0.0, dxy + 4);
    if (!(st == SBM_ERR_NOT_SUPPORTED && e->backend == SBM_BACKEND_CUDA)) SBM_ASSERT_OK(ctx, st);
    dev_free(ctx, dxy);
    /* y over A's own values */
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmv(ctx, 1.0, A, dx, 0.0, sbm_csr_get_info(A).values),
                     SBM_ERR_ALIASING, "argument y overlaps the values of A");
    if (e->backend == SBM_BACKEND_CUDA) {
        sbm_csr *H = hcsr_upload(e->host, &a);
        SBM_ASSERT_FAILS(ctx, sbm_csr_spmv(ctx, 1.0, H, dx, 0.0, dy), SBM_ERR_BACKEND_MISMATCH,
                         "argument A lives on the CPU backend");
        sbm_csr_destroy(H);
    }

    double *x_after = sbm_test_vec_download(ctx, dx, 10), *y_after = sbm_test_vec_download(ctx, dy, 6);
    assert_same_bits(hx, x_after, 10, "x");
    assert_same_bits(hy, y_after, 6, "y");
    assert_csr_unchanged(A, a_before, "A");
    free(x_after);
    free(y_after);
    free(a_before);
    dev_free(ctx, dx);
    dev_free(ctx, dy);
    sbm_csr_destroy(A);
    hcsr_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_csr_spmv_random),
        SBM_TEST_BOTH(test_csr_spmv_empty_null),
        SBM_TEST_BOTH(test_csr_spmv_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
