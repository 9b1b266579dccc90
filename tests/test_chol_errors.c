/* SPDX-License-Identifier: BSD-3-Clause */
/* Sparse block Cholesky (sbm_chol_*): every error of the API, by status and message. */
#include "chol_test_common.h"
#include "solve_kernels.h" /* white-box: a table without chol_factor */

/* sbm_chol_plan: NULL arguments, shapes, options, a block below the diagonal, a backend without
 * the operation. */
static void test_chol_plan_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    spd_matrix m = spd_make(7, 6, 2, PAT_BANDED, 1);
    sbm_cbc *A = spd_cbc(ctx, &m);
    sbm_chol *chol = (sbm_chol *)&m; /* must be reset to NULL by a failing plan */
    SBM_ASSERT_FAILS(NULL, sbm_chol_plan(NULL, A, NULL, &chol), SBM_ERR_NULL_ARGUMENT,
                     "sbm_chol_plan: argument ctx is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, A, NULL, NULL), SBM_ERR_NULL_ARGUMENT,
                     "sbm_chol_plan: argument chol (output handle) is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, NULL, NULL, &chol), SBM_ERR_NULL_ARGUMENT, "A");
    assert_null(chol);
    sbm_cbc *R = sbm_test_random_cbc_upper(ctx, 3, 4, 4, 2, 3, 0.5, 1);
    SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, R, NULL, &chol), SBM_ERR_BLOCK_SHAPE,
                     "argument A: blocks are 2x3, the Cholesky needs square blocks");
    sbm_cbc_destroy(R);
    R = sbm_test_random_cbc_upper(ctx, 3, 4, 5, 2, 2, 0.5, 1);
    SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, R, NULL, &chol), SBM_ERR_DIMENSION_MISMATCH,
                     "argument A: 4 x 5 blocks is not square");
    sbm_cbc_destroy(R);
    sbm_chol_options o = sbm_chol_default_options();
    o.ordering = (sbm_chol_ordering)5;
    SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, A, &o, &chol), SBM_ERR_INVALID_ARGUMENT,
                     "options->ordering: 5 is not an ordering");
    static const double bad_relax[3] = {-0.1, 1.5, NAN};
    for (int i = 0; i < 3; i++) {
        o = sbm_chol_default_options();
        o.relax_zeros = bad_relax[i];
        SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, A, &o, &chol), SBM_ERR_INVALID_ARGUMENT,
                         "options->relax_zeros");
    }
    o = sbm_chol_default_options();
    o.relax_max_columns = 0;
    SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, A, &o, &chol), SBM_ERR_INVALID_ARGUMENT,
                     "options->relax_max_columns: 0 is less than 1");
    const int32_t lr[3] = {0, 3, 1};
    const int32_t lc[3] = {0, 1, 1};
    const double lv[12] = {4, 0, 0, 4, 1, 1, 1, 1, 4, 0, 0, 4};
    SBM_ASSERT_OK(ctx, sbm_cbc_from_triplets(ctx, &R, 5, 5, 2, 2, 3, lr, lc, lv));
    SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, R, NULL, &chol), SBM_ERR_INVALID_ARGUMENT,
                     "argument A: block (3, 1) is below the diagonal, but sbm_chol_plan takes the "
                     "upper block triangle");
    sbm_cbc_destroy(R);
    /* an operation the backend lacks (in the solve layer's table, solve_kernels.h) */
    sbm__solve_kernels fake = *sbm__solve_kernels_of(ctx);
    fake.chol_factor = NULL;
    sbm__solve_kernels_replace(e->backend, &fake);
    SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, A, NULL, &chol), SBM_ERR_NOT_SUPPORTED,
                     "the sparse block Cholesky is not available on the");
    sbm__solve_kernels_replace(e->backend, NULL);
    assert_null(chol);
    sbm_chol_destroy(chol);
    sbm_cbc_destroy(A);
    spd_free(&m);
}

/* sbm_chol_factor: NULL arguments, damping, lambda, another pattern or size, another backend. */
static void test_chol_factor_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    spd_matrix m = spd_make(7, 6, 2, PAT_BANDED, 1);
    sbm_cbc *A = spd_cbc(ctx, &m);
    sbm_chol *chol = NULL;
    SBM_ASSERT_OK(ctx, sbm_chol_plan(ctx, A, NULL, &chol));
    SBM_ASSERT_FAILS(NULL, sbm_chol_factor(NULL, chol, A, SBM_DAMPING_NONE, 0), SBM_ERR_NULL_ARGUMENT,
                     "sbm_chol_factor: argument ctx is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_factor(ctx, NULL, A, SBM_DAMPING_NONE, 0), SBM_ERR_NULL_ARGUMENT,
                     "sbm_chol_factor: argument chol is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_factor(ctx, chol, NULL, SBM_DAMPING_NONE, 0), SBM_ERR_NULL_ARGUMENT,
                     "A");
    SBM_ASSERT_FAILS(ctx, sbm_chol_factor(ctx, chol, A, (sbm_damping)3, 0), SBM_ERR_INVALID_ARGUMENT,
                     "argument damping: 3 is not a damping");
    static const double bad_lambda[3] = {-1.0, NAN, INFINITY};
    for (int i = 0; i < 3; i++)
        SBM_ASSERT_FAILS(ctx, sbm_chol_factor(ctx, chol, A, SBM_DAMPING_IDENTITY, bad_lambda[i]),
                         SBM_ERR_INVALID_ARGUMENT, "argument lambda:");
    spd_matrix other = spd_make(8, 6, 2, PAT_ARROW, 1); /* same size, another pattern */
    sbm_cbc *R = spd_cbc(ctx, &other);
    SBM_ASSERT_FAILS(ctx, sbm_chol_factor(ctx, chol, R, SBM_DAMPING_NONE, 0), SBM_ERR_PLAN_MISMATCH,
                     "argument A (6 x 6 blocks of 2x2, ");
    sbm_cbc_destroy(R);
    spd_free(&other);
    other = spd_make(8, 7, 2, PAT_BANDED, 1);
    R = spd_cbc(ctx, &other);
    SBM_ASSERT_FAILS(ctx, sbm_chol_factor(ctx, chol, R, SBM_DAMPING_NONE, 0), SBM_ERR_PLAN_MISMATCH,
                     "is not the size the plan was made for (6 x 6 blocks of 2x2)");
    sbm_cbc_destroy(R);
    spd_free(&other);
    if (e->backend != SBM_BACKEND_CPU) { /* a plan of one backend used with another */
        sbm_chol *hc = NULL;
        sbm_cbc *H = spd_cbc(e->host, &m);
        SBM_ASSERT_OK(e->host, sbm_chol_plan(e->host, H, NULL, &hc));
        SBM_ASSERT_FAILS(ctx, sbm_chol_factor(ctx, hc, A, SBM_DAMPING_NONE, 0), SBM_ERR_BACKEND_MISMATCH,
                         "argument chol was planned on the CPU backend");
        SBM_ASSERT_FAILS(e->host, sbm_chol_factor(e->host, chol, H, SBM_DAMPING_NONE, 0),
                         SBM_ERR_BACKEND_MISMATCH, "argument chol was planned on the");
        SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, hc, 0, NULL, 12, NULL, 12), SBM_ERR_BACKEND_MISMATCH,
                         "sbm_chol_solve: argument chol was planned on the CPU backend");
        /* A in the other backend's memory */
        sbm_chol *bad = (sbm_chol *)&m;
        SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, H, NULL, &bad), SBM_ERR_BACKEND_MISMATCH,
                         "sbm_chol_plan: argument A lives on the CPU backend");
        assert_null(bad);
        SBM_ASSERT_FAILS(ctx, sbm_chol_factor(ctx, chol, H, SBM_DAMPING_NONE, 0),
                         SBM_ERR_BACKEND_MISMATCH, "sbm_chol_factor: argument A lives on the CPU backend");
        sbm_chol_destroy(hc);
        sbm_cbc_destroy(H);
    }
    sbm_chol_destroy(chol);
    sbm_cbc_destroy(A);
    spd_free(&m);
}

/* sbm_chol_solve: no factor, NULL arguments, nrhs, leading dimensions, overlapping X and B;
 * sbm_chol_get_info and sbm_chol_destroy of NULL. */
static void test_chol_solve_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    spd_matrix m = spd_make(7, 6, 2, PAT_BANDED, 1);
    sbm_cbc *A = spd_cbc(ctx, &m);
    sbm_chol *chol = NULL;
    SBM_ASSERT_OK(ctx, sbm_chol_plan(ctx, A, NULL, &chol));
    const int64_t n = m.n;
    double *dB = sbm_test_vec_upload(ctx, m.dense, 3 * n);
    SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, chol, 1, dB, n, dB, n), SBM_ERR_INVALID_ARGUMENT,
                     "argument chol has no factor: sbm_chol_factor was not called");
    SBM_ASSERT_OK(ctx, sbm_chol_factor(ctx, chol, A, SBM_DAMPING_NONE, 0));
    SBM_ASSERT_FAILS(NULL, sbm_chol_solve(NULL, chol, 1, dB, n, dB, n), SBM_ERR_NULL_ARGUMENT,
                     "sbm_chol_solve: argument ctx is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, NULL, 1, dB, n, dB, n), SBM_ERR_NULL_ARGUMENT,
                     "sbm_chol_solve: argument chol is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, chol, -1, dB, n, dB, n), SBM_ERR_INVALID_ARGUMENT,
                     "argument nrhs: -1 is outside");
    SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, chol, 1, dB, n - 1, dB, n), SBM_ERR_INVALID_ARGUMENT,
                     "argument ldb: 11 is not a leading dimension for n = 12");
    SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, chol, 1, dB, n, dB + n, 0), SBM_ERR_INVALID_ARGUMENT,
                     "argument ldx: 0 is not a leading dimension");
    SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, chol, 1, NULL, n, dB, n), SBM_ERR_NULL_ARGUMENT,
                     "argument B is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, chol, 1, dB, n, NULL, n), SBM_ERR_NULL_ARGUMENT,
                     "argument X is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, chol, 2, dB, n, dB + 1, n), SBM_ERR_ALIASING,
                     "argument X overlaps B");
    SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, chol, 2, dB, n, dB, n + 1), SBM_ERR_ALIASING,
                     "(ldb 12, ldx 13)");
    SBM_ASSERT_OK(ctx, sbm_chol_solve(ctx, chol, 1, dB, n, dB + n, n)); /* adjacent, no overlap */
    /* info and destroy of NULL */
    const sbm_chol_info none = sbm_chol_get_info(NULL);
    assert_int_equal(none.failed_column, -1);
    assert_int_equal(none.block_columns, 0);
    assert_null(none.perm);
    sbm_chol_destroy(NULL);
    sbm__free(ctx, dB);
    sbm_chol_destroy(chol);
    sbm_cbc_destroy(A);
    spd_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_chol_plan_errors),
        SBM_TEST_BOTH(test_chol_factor_errors),
        SBM_TEST_BOTH(test_chol_solve_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
