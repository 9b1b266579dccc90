/* Scalar CSR SpMM C = alpha*A*B + beta*C with dense B and C: seeded random matrices of several
 * row-length distributions and shapes, ncols 1, 4, 16, 33 (and a strip-crossing 70), both layouts,
 * padded leading dimensions (padding must stay untouched), alpha/beta combinations including
 * beta = 0 with NaN in C, and every error path. */
#include "csr_test_common.h"

/* Skip on a backend without CSR SpMM (the only status that skips), before allocating. */
static void require_spmm(sbm_test_env *e)
{
    int64_t zero = 0;
    sbm_csr *Z = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_csr_create(e->ctx, &Z, 0, 0, &zero, NULL, NULL));
    sbm_status st =
        sbm_csr_spmm(e->ctx, 1.0, Z, 1, SBM_LAYOUT_ROW_MAJOR, NULL, 1, 0.0, NULL, 1);
    sbm_csr_destroy(Z);
    SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
    SBM_ASSERT_OK(e->ctx, st);
}

/* Offset of element (i, j) in a dense array of layout with leading dimension ld. */
static int64_t at(sbm_layout layout, int64_t ld, int64_t i, int64_t j)
{
    return layout == SBM_LAYOUT_ROW_MAJOR ? i * ld + j : j * ld + i;
}

/* Elements a rows x cols array spans (0 when empty). */
static int64_t span(sbm_layout layout, int64_t ld, int64_t rows, int64_t cols)
{
    if (rows == 0 || cols == 0) return 0;
    return layout == SBM_LAYOUT_ROW_MAJOR ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
}

typedef struct spmm_case {
    int64_t m, n;
    csr_kind kind;
    double density;
} spmm_case;

static const spmm_case cases[] = {
    {1, 1, CSR_UNIFORM, 1.0},      {40, 40, CSR_UNIFORM, 0.1},    {150, 150, CSR_POWER, 0},
    {45, 30, CSR_EMPTY_ROWS, 0.2}, {30, 60, CSR_DENSE_ROW, 0.05}, {5, 120, CSR_UNIFORM, 0.3},
    {120, 5, CSR_UNIFORM, 0.3},    {25, 25, CSR_UNIFORM, 0.0},    {0, 9, CSR_UNIFORM, 0.5},
    {9, 0, CSR_UNIFORM, 0.5},
};

static const int64_t ncols_list[] = {1, 4, 16, 33, 70};

/* alpha, beta pairs */
static const double ab[][2] = {{1.0, 0.0}, {-1.5, 0.5}, {0.5, -2.0}, {0.0, 3.0}, {2.0, 1.0}};

static void test_csr_spmm_random(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_spmm(e);
    int run = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const spmm_case *k = &cases[c];
        hcsr a = hcsr_random(4000 + c, k->m, k->n, k->kind, k->density);
        sbm_csr *A = hcsr_upload(e->ctx, &a);
        double *ad = hcsr_dense(&a);
        for (size_t nc = 0; nc < sizeof ncols_list / sizeof ncols_list[0]; nc++)
            for (int lay = 0; lay < 2; lay++)
                for (int pad = 0; pad < 2; pad++) {
                    const int64_t ncols = ncols_list[nc];
                    const sbm_layout layout = lay ? SBM_LAYOUT_COL_MAJOR : SBM_LAYOUT_ROW_MAJOR;
                    const int64_t ldb = (lay ? k->n : ncols) + 3 * pad;
                    const int64_t ldc = (lay ? k->m : ncols) + 5 * pad;
                    const int64_t nb = span(layout, ldb, k->n, ncols);
                    const int64_t ncc = span(layout, ldc, k->m, ncols);
                    /* B: random with NaN in the padding, which must never be read */
                    double *B = sbm_test_random_vector(5000 + run, nb);
                    double *bval = calloc((size_t)(k->n * ncols) + 1, sizeof *bval);
                    assert_non_null(bval);
                    for (int64_t t = 0; t < nb; t++) B[t] = NAN;
                    sbm_test_rng g = sbm_test_rng_seed(6000 + run);
                    for (int64_t i = 0; i < k->n; i++)
                        for (int64_t j = 0; j < ncols; j++)
                            B[at(layout, ldb, i, j)] = bval[i + j * k->n] = sbm_test_rng_value(&g);
                    double *dB = sbm_test_vec_upload(e->ctx, B, nb);

                    for (size_t s = 0; s < sizeof ab / sizeof ab[0]; s++, run++) {
                        const double alpha = ab[s][0], beta = ab[s][1];
                        /* C: padding holds a sentinel that must survive; beta == 0 -> NaN */
                        double *C0 = malloc(((size_t)ncc + 1) * sizeof *C0);
                        double *want = malloc(((size_t)ncc + 1) * sizeof *want);
                        double *got = malloc(((size_t)ncc + 1) * sizeof *got);
                        assert_true(C0 && want && got);
                        for (int64_t t = 0; t < ncc; t++) C0[t] = -777.0;
                        sbm_test_rng h = sbm_test_rng_seed(7000 + run);
                        for (int64_t i = 0; i < k->m; i++)
                            for (int64_t j = 0; j < ncols; j++)
                                C0[at(layout, ldc, i, j)] =
                                    beta == 0.0 ? NAN : sbm_test_rng_value(&h);
                        memcpy(want, C0, (size_t)ncc * sizeof *want);
                        for (int64_t i = 0; i < k->m; i++)
                            for (int64_t j = 0; j < ncols; j++) {
                                double sum = 0;
                                for (int64_t p = 0; p < k->n; p++)
                                    sum += ad[i + p * k->m] * bval[p + j * k->n];
                                double *w = &want[at(layout, ldc, i, j)];
                                *w = beta == 0.0 ? alpha * sum : alpha * sum + beta * *w;
                            }
                        double *dC = sbm_test_vec_upload(e->ctx, C0, ncc);
                        SBM_ASSERT_OK(e->ctx, sbm_csr_spmm(e->ctx, alpha, A, ncols, layout, dB,
                                                           ldb, beta, dC, ldc));
                        sbm_test_vec_download_into(e->ctx, got, dC, ncc);
                        /* padding untouched (bitwise); values within tolerance */
                        for (int64_t t = 0; t < ncc; t++)
                            if (want[t] == -777.0 && got[t] != -777.0)
                                fail_msg("padding of C changed at %lld (%dx%d, ncols %d, %s)",
                                         (long long)t, (int)k->m, (int)k->n, (int)ncols,
                                         lay ? "col-major" : "row-major");
                        sbm_test_assert_near(got, want, ncc, 1e-15 * (double)(k->n + 4), "C");
                        dev_free(e->ctx, dC);
                        free(C0);
                        free(want);
                        free(got);
                    }
                    /* B unchanged */
                    double *b_after = sbm_test_vec_download(e->ctx, dB, nb);
                    assert_same_bits(B, b_after, nb, "B");
                    free(b_after);
                    dev_free(e->ctx, dB);
                    free(B);
                    free(bval);
                }
        free(ad);
        sbm_csr_destroy(A);
        hcsr_free(&a);
    }
}

/* ncols == 0 is a no-op (C untouched, NULL arrays accepted); empty arrays may be NULL. */
static void test_csr_spmm_degenerate(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_spmm(e);
    hcsr a = hcsr_random(8, 5, 4, CSR_UNIFORM, 0.5), z = hcsr_random(9, 3, 0, CSR_UNIFORM, 0.5);
    sbm_csr *A = hcsr_upload(e->ctx, &a), *Z = hcsr_upload(e->ctx, &z);
    double c0[15], got[15];
    for (int t = 0; t < 15; t++) c0[t] = t + 0.5;
    double *dC = sbm_test_vec_upload(e->ctx, c0, 15);
    SBM_ASSERT_OK(e->ctx, sbm_csr_spmm(e->ctx, 1.0, A, 0, SBM_LAYOUT_ROW_MAJOR, NULL, 0, 0.0, dC, 0));
    SBM_ASSERT_OK(e->ctx, sbm_csr_spmm(e->ctx, 1.0, A, 0, SBM_LAYOUT_COL_MAJOR, NULL, 4, 0.0, NULL, 5));
    sbm_test_vec_download_into(e->ctx, got, dC, 15);
    assert_same_bits(c0, got, 15, "C after ncols = 0");
    /* 3x0 times 0x5: C = beta*C, B may be NULL */
    SBM_ASSERT_OK(e->ctx, sbm_csr_spmm(e->ctx, 1.0, Z, 5, SBM_LAYOUT_ROW_MAJOR, NULL, 5, 2.0, dC, 5));
    sbm_test_vec_download_into(e->ctx, got, dC, 15);
    for (int t = 0; t < 15; t++) assert_true(got[t] == 2.0 * c0[t]);
    dev_free(e->ctx, dC);
    sbm_csr_destroy(A);
    sbm_csr_destroy(Z);
    hcsr_free(&a);
    hcsr_free(&z);
}

/* Every error path: status, message, and A, B, C unchanged. */
static void test_csr_spmm_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    const sbm_layout R = SBM_LAYOUT_ROW_MAJOR, K = SBM_LAYOUT_COL_MAJOR;
    hcsr a = hcsr_random(10, 6, 4, CSR_UNIFORM, 0.5); /* A 6x4, B 4x3, C 6x3 */
    sbm_csr *A = hcsr_upload(ctx, &a);
    double *a_before = sbm_test_csr_dense(A);
    double hb[40], hc[40];
    for (int t = 0; t < 40; t++) {
        hb[t] = t + 1;
        hc[t] = -t - 1;
    }
    double *dB = sbm_test_vec_upload(ctx, hb, 40), *dC = sbm_test_vec_upload(ctx, hc, 40);

    assert_int_equal(sbm_csr_spmm(NULL, 1.0, A, 3, R, dB, 3, 0.0, dC, 3), SBM_ERR_NULL_ARGUMENT);
    assert_non_null(strstr(sbm_ctx_last_error(NULL), "sbm_csr_spmm: argument ctx is NULL"));
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmm(ctx, 1.0, NULL, 3, R, dB, 3, 0.0, dC, 3),
                     SBM_ERR_NULL_ARGUMENT, "sbm_csr_spmm: argument A is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmm(ctx, 1.0, A, -1, R, dB, 3, 0.0, dC, 3),
                     SBM_ERR_INVALID_ARGUMENT, "argument ncols: -1 is negative");
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmm(ctx, 1.0, A, 3, (sbm_layout)7, dB, 3, 0.0, dC, 3),
                     SBM_ERR_INVALID_ARGUMENT, "argument layout: 7 is neither");
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmm(ctx, 1.0, A, 3, R, NULL, 3, 0.0, dC, 3),
                     SBM_ERR_NULL_ARGUMENT, "argument B is NULL (B is 4x3)");
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmm(ctx, 1.0, A, 3, R, dB, 3, 0.0, NULL, 3),
                     SBM_ERR_NULL_ARGUMENT, "argument C is NULL (C is 6x3)");
    /* leading dimensions */
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmm(ctx, 1.0, A, 3, R, dB, 2, 0.0, dC, 3),
                     SBM_ERR_INVALID_ARGUMENT,
                     "argument ldb: 2 is less than ncols = 3 (B is row-major 4x3)");
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmm(ctx, 1.0, A, 3, R, dB, 3, 0.0, dC, 2),
                     SBM_ERR_INVALID_ARGUMENT,
                     "argument ldc: 2 is less than ncols = 3 (C is row-major 6x3)");
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmm(ctx, 1.0, A, 3, K, dB, 3, 0.0, dC, 6),
                     SBM_ERR_INVALID_ARGUMENT,
                     "argument ldb: 3 is less than the 4 rows of B (B is column-major 4x3)");
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmm(ctx, 1.0, A, 3, K, dB, 4, 0.0, dC, 5),
                     SBM_ERR_INVALID_ARGUMENT,
                     "argument ldc: 5 is less than the 6 rows of C (C is column-major 6x3)");
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmm(ctx, 1.0, A, 3, R, dB, -3, 0.0, dC, 3),
                     SBM_ERR_INVALID_ARGUMENT, "argument ldb: -3 is less than ncols = 3");
    /* extents that overflow int64 */
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmm(ctx, 1.0, A, 3, R, dB, INT64_MAX / 2, 0.0, dC, 3),
                     SBM_ERR_OVERFLOW, "argument B: 4x3 with leading dimension");
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmm(ctx, 1.0, A, 3, K, dB, 4, 0.0, dC, INT64_MAX / 2),
                     SBM_ERR_OVERFLOW, "spans more than 2^63 elements");
    /* aliasing: B and C overlapping (equal, partial, through padding), C over A's values */
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmm(ctx, 1.0, A, 3, R, dB, 3, 0.0, dB, 3), SBM_ERR_ALIASING,
                     "arguments B (12 elements at");
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmm(ctx, 1.0, A, 3, R, dB, 3, 0.0, dB + 11, 3),
                     SBM_ERR_ALIASING, "and C (18 elements at");
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmm(ctx, 1.0, A, 2, K, dB + 6, 4, 1.0, dB, 6),
                     SBM_ERR_ALIASING, "overlap");
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmm(ctx, 1.0, A, 1, K, dB, 4, 0.0, sbm_csr_get_info(A).values, 6),
                     SBM_ERR_ALIASING, "argument C overlaps the values of A");
    if (e->backend == SBM_BACKEND_CUDA) {
        sbm_csr *H = hcsr_upload(e->host, &a);
        SBM_ASSERT_FAILS(ctx, sbm_csr_spmm(ctx, 1.0, H, 3, R, dB, 3, 0.0, dC, 3),
                         SBM_ERR_BACKEND_MISMATCH, "argument A lives on the CPU backend");
        sbm_csr_destroy(H);
    }

    double *b_after = sbm_test_vec_download(ctx, dB, 40), *c_after = sbm_test_vec_download(ctx, dC, 40);
    assert_same_bits(hb, b_after, 40, "B");
    assert_same_bits(hc, c_after, 40, "C");
    assert_csr_unchanged(A, a_before, "A");
    free(b_after);
    free(c_after);
    free(a_before);
    dev_free(ctx, dB);
    dev_free(ctx, dC);
    sbm_csr_destroy(A);
    hcsr_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_csr_spmm_random),
        SBM_TEST_BOTH(test_csr_spmm_degenerate),
        SBM_TEST_BOTH(test_csr_spmm_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
