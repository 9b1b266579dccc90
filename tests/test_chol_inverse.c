/* SPDX-License-Identifier: BSD-3-Clause */
/* Selected inverse of the sparse block Cholesky (sbm_chol_inverse_*): the block diagonal and
 * every block inside the pattern of L against a dense inverse (the dense Cholesky of
 * chol_test_common.h on the identity), for every block size 1..8, every pattern, both
 * orderings, amalgamation off and on, the three dampings; the pattern query; degenerate shapes
 * (empty, one block, block diagonal); every error path (status and message); bitwise
 * repeatability over plans and the context's thread counts (OpenBLAS's: to rounding); a refactorisation refreshes the inverse. The
 * [cuda] variants run on a CUDA context (its factor copied to the host) and agree with the CPU
 * backend. */
#include "chol_test_common.h"

static const char *const pattern_names[NPATTERNS] = {"random", "banded", "arrow", "grid", "pieces"};

/* The dense (M + damping)^-1, n x n column-major. */
static double *dense_inverse(const spd_matrix *m, int damping, double lambda)
{
    const int64_t n = m->n;
    double *I = calloc((size_t)(n * n + 1), sizeof(double));
    double *X = malloc((size_t)(n * n + 1) * sizeof(double));
    for (int64_t i = 0; i < n; i++) I[i + i * n] = 1.0;
    assert_int_equal(dense_solve(m->dense, n, damping, lambda, n, I, X), 0);
    free(I);
    return X;
}

/* Block (i, j) of the n x n dense D into out (b x b column-major). */
static void dense_block(const double *D, int64_t n, int b, int64_t i, int64_t j, double *out)
{
    for (int c = 0; c < b; c++)
        for (int r = 0; r < b; r++) out[c * b + r] = D[(i * b + r) + (j * b + c) * n];
}

/* The block diagonal and every pair inside the pattern (both (i, j) and (j, i)) of the factored
 * chol agree with the dense inverse D; every stored block of A is inside the pattern. */
static void check_inverse(sbm_ctx *ctx, sbm_chol *chol, const spd_matrix *m, const double *D,
                          const char *what)
{
    const int64_t nb = m->nb;
    const int b = m->b, bb = b * b;
    for (int64_t t = 0; t < m->nt; t++)
        assert_true(sbm_chol_inverse_in_pattern(chol, m->brow[t], m->bcol[t]) &&
                    sbm_chol_inverse_in_pattern(chol, m->bcol[t], m->brow[t]));
    double *got = malloc((size_t)(nb * nb * bb + 1) * sizeof(double));
    double *want = malloc((size_t)(nb * nb * bb + 1) * sizeof(double));
    SBM_ASSERT_OK(ctx, sbm_chol_inverse_diagonal(ctx, chol, got));
    for (int64_t i = 0; i < nb; i++) dense_block(D, m->n, b, i, i, want + i * bb);
    sbm_test_assert_near(got, want, nb * bb, 1e-9, what);
    int64_t *ri = malloc((size_t)(nb * nb + 1) * sizeof(int64_t));
    int64_t *ci = malloc((size_t)(nb * nb + 1) * sizeof(int64_t));
    int64_t np = 0;
    for (int64_t j = 0; j < nb; j++)
        for (int64_t i = 0; i < nb; i++)
            if (sbm_chol_inverse_in_pattern(chol, i, j)) {
                assert_true(sbm_chol_inverse_in_pattern(chol, j, i));
                ri[np] = i, ci[np] = j;
                dense_block(D, m->n, b, i, j, want + np * bb);
                np++;
            }
    SBM_ASSERT_OK(ctx, sbm_chol_inverse_blocks(ctx, chol, np, ri, ci, got));
    sbm_test_assert_near(got, want, np * bb, 1e-9, what);
    free(ri);
    free(ci);
    free(got);
    free(want);
}

/* Plan and factor m in ctx with c's options; the inverse checked against the dense one. */
static void check_case_inverse(sbm_ctx *ctx, const spd_matrix *m, const solve_case *c,
                               const char *what)
{
    double *D = dense_inverse(m, c->damping, c->lambda);
    sbm_cbc *A = spd_cbc(ctx, m);
    sbm_chol *chol = NULL;
    SBM_ASSERT_OK(ctx, sbm_chol_plan(ctx, A, &c->opt, &chol));
    SBM_ASSERT_OK(ctx, sbm_chol_factor(ctx, chol, A, (sbm_damping)c->damping, c->lambda));
    check_inverse(ctx, chol, m, D, what);
    sbm_chol_destroy(chol);
    sbm_cbc_destroy(A);
    free(D);
}

/* Every block size 1..8, every pattern, both orderings, amalgamation off / default / generous,
 * the three dampings. */
static void test_inverse_random(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const double relax[3] = {0.0, 0.2, 0.8};
    int idx = 0;
    for (int b = 1; b <= 8; b++)
        for (int p = 0; p < NPATTERNS; p++) {
            const int64_t nb = 8 + (b * 7 + p * 5) % 23;
            spd_matrix m = spd_make(2000 + (uint64_t)(b * 10 + p), nb, b, p, 1);
            for (int ord = 0; ord < 2; ord++)
                for (int rl = 0; rl < 3; rl++, idx++) {
                    solve_case c = default_case();
                    c.opt.ordering = ord ? SBM_CHOL_ORDERING_NATURAL : SBM_CHOL_ORDERING_AMD;
                    c.opt.relax_zeros = relax[rl];
                    c.opt.relax_max_columns = rl == 2 ? 4 : 64;
                    c.damping = idx % 3;
                    c.lambda = c.damping ? 0.25 * (idx % 5) : 0.0;
                    char what[160];
                    snprintf(what, sizeof what, "inverse: b %d, %s pattern, nb %lld, %s, relax %g, "
                             "damping %d", b, pattern_names[p], (long long)nb,
                             ord ? "natural" : "AMD", relax[rl], c.damping);
                    check_case_inverse(e->ctx, &m, &c, what);
                }
            spd_free(&m);
        }
}

/* Deeper trees: a 12 x 12 grid of 3x3 blocks and 150 blocks in random pieces. */
static void test_inverse_larger(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    spd_matrix g = spd_make(501, 144, 3, PAT_GRID, 1), r = spd_make(502, 150, 2, PAT_PIECES, 1);
    solve_case c = default_case();
    check_case_inverse(e->ctx, &g, &c, "inverse: 12 x 12 grid");
    c.opt.relax_zeros = 0.5;
    c.damping = SBM_DAMPING_DIAGONAL;
    c.lambda = 0.3;
    check_case_inverse(e->ctx, &r, &c, "inverse: pieces");
    spd_free(&g);
    spd_free(&r);
}

/* Empty, one block of every size, block diagonal (every off-diagonal pair outside the pattern). */
static void test_inverse_degenerate(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_cbc *E = NULL;
    const int64_t zero = 0;
    SBM_ASSERT_OK(e->ctx, sbm_cbc_create(e->ctx, &E, 0, 0, 3, 3, &zero, NULL, NULL));
    sbm_chol *chol = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_chol_plan(e->ctx, E, NULL, &chol));
    SBM_ASSERT_OK(e->ctx, sbm_chol_factor(e->ctx, chol, E, SBM_DAMPING_NONE, 0.0));
    SBM_ASSERT_OK(e->ctx, sbm_chol_inverse_diagonal(e->ctx, chol, NULL));
    SBM_ASSERT_OK(e->ctx, sbm_chol_inverse_blocks(e->ctx, chol, 0, NULL, NULL, NULL));
    assert_int_equal(sbm_chol_inverse_in_pattern(chol, 0, 0), 0);
    sbm_chol_destroy(chol);
    sbm_cbc_destroy(E);
    for (int b = 1; b <= 8; b++) {
        spd_matrix one = spd_make(40 + (uint64_t)b, 1, b, PAT_RANDOM, 1);
        solve_case c = default_case();
        check_case_inverse(e->ctx, &one, &c, "inverse: one block");
        spd_free(&one);
    }
    spd_matrix d = spd_make(77, 12, 4, PAT_RANDOM, 1);
    int64_t k = 0;
    for (int64_t t = 0; t < d.nt; t++)
        if (d.brow[t] == d.bcol[t]) {
            d.brow[k] = d.brow[t], d.bcol[k] = d.bcol[t];
            memmove(d.vals + k * 16, d.vals + t * 16, 16 * sizeof(double));
            k++;
        } else {
            for (int c2 = 0; c2 < 4; c2++)
                for (int r = 0; r < 4; r++)
                    d.dense[(d.brow[t] * 4 + r) + (d.bcol[t] * 4 + c2) * d.n] =
                        d.dense[(d.bcol[t] * 4 + c2) + (d.brow[t] * 4 + r) * d.n] = 0;
        }
    d.nt = k;
    solve_case c = default_case();
    check_case_inverse(e->ctx, &d, &c, "inverse: block diagonal");
    sbm_cbc *A = spd_cbc(e->ctx, &d);
    SBM_ASSERT_OK(e->ctx, sbm_chol_plan(e->ctx, A, NULL, &chol));
    SBM_ASSERT_OK(e->ctx, sbm_chol_factor(e->ctx, chol, A, SBM_DAMPING_NONE, 0.0));
    const int64_t ri[2] = {3, 5}, ci[2] = {3, 2};
    double out[32];
    assert_int_equal(sbm_chol_inverse_in_pattern(chol, 5, 2), 0);
    SBM_ASSERT_FAILS(e->ctx, sbm_chol_inverse_blocks(e->ctx, chol, 2, ri, ci, out),
                     SBM_ERR_INVALID_ARGUMENT,
                     "pair 1: block (5, 2) of A^-1 is outside the pattern of the factor L");
    sbm_chol_destroy(chol);
    sbm_cbc_destroy(A);
    spd_free(&d);
}

/* Every error: status and message. */
static void test_inverse_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    spd_matrix m = spd_make(61, 10, 2, PAT_BANDED, 1);
    sbm_cbc *A = spd_cbc(ctx, &m);
    sbm_chol *chol = NULL;
    double out[64];
    const int64_t ri[2] = {0, 1}, ci[2] = {0, 10}, neg[1] = {-1};
    SBM_ASSERT_FAILS(ctx, sbm_chol_inverse_diagonal(ctx, NULL, out), SBM_ERR_NULL_ARGUMENT,
                     "argument chol is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_inverse_blocks(ctx, NULL, 1, ri, ri, out),
                     SBM_ERR_NULL_ARGUMENT, "argument chol is NULL");
    sbm_chol_options o = sbm_chol_default_options();
    o.ordering = SBM_CHOL_ORDERING_NATURAL;
    SBM_ASSERT_OK(ctx, sbm_chol_plan(ctx, A, &o, &chol));
    SBM_ASSERT_FAILS(ctx, sbm_chol_inverse_diagonal(ctx, chol, out), SBM_ERR_INVALID_ARGUMENT,
                     "argument chol has no factor: sbm_chol_factor was not called");
    SBM_ASSERT_FAILS(ctx, sbm_chol_inverse_blocks(ctx, chol, 1, ri, ri, out),
                     SBM_ERR_INVALID_ARGUMENT,
                     "argument chol has no factor: sbm_chol_factor was not called");
    SBM_ASSERT_OK(ctx, sbm_chol_factor(ctx, chol, A, SBM_DAMPING_NONE, 0.0));
    SBM_ASSERT_FAILS(ctx, sbm_chol_inverse_diagonal(ctx, chol, NULL), SBM_ERR_NULL_ARGUMENT,
                     "argument out is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_inverse_blocks(ctx, chol, -1, ri, ri, out),
                     SBM_ERR_INVALID_ARGUMENT, "argument npairs: -1 is negative");
    SBM_ASSERT_FAILS(ctx, sbm_chol_inverse_blocks(ctx, chol, 1, NULL, ri, out),
                     SBM_ERR_NULL_ARGUMENT, "argument block_rows is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_inverse_blocks(ctx, chol, 1, ri, NULL, out),
                     SBM_ERR_NULL_ARGUMENT, "argument block_cols is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_inverse_blocks(ctx, chol, 1, ri, ri, NULL),
                     SBM_ERR_NULL_ARGUMENT, "argument out is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_inverse_blocks(ctx, chol, 2, ri, ci, out),
                     SBM_ERR_INDEX_OUT_OF_RANGE,
                     "pair 1: block (1, 10) is outside the 10 x 10 blocks of A");
    SBM_ASSERT_FAILS(ctx, sbm_chol_inverse_blocks(ctx, chol, 1, neg, ri, out),
                     SBM_ERR_INDEX_OUT_OF_RANGE,
                     "pair 0: block (-1, 0) is outside the 10 x 10 blocks of A");
    assert_int_equal(sbm_chol_inverse_in_pattern(chol, -1, 0), 0);
    assert_int_equal(sbm_chol_inverse_in_pattern(chol, 0, 10), 0);
    assert_int_equal(sbm_chol_inverse_in_pattern(NULL, 0, 0), 0);
    /* banded (j - i <= 2) in the natural order: no fill, (0, 3) is outside L */
    const int64_t r3[1] = {0}, c3[1] = {3};
    SBM_ASSERT_FAILS(ctx, sbm_chol_inverse_blocks(ctx, chol, 1, r3, c3, out),
                     SBM_ERR_INVALID_ARGUMENT,
                     "pair 0: block (0, 3) of A^-1 is outside the pattern of the factor L");
    SBM_ASSERT_OK(ctx, sbm_chol_inverse_diagonal(ctx, chol, out));
    /* not positive definite: the factor names the column, the inverse refuses */
    for (int64_t t = 0; t < m.nt; t++)
        if (m.brow[t] == 6 && m.bcol[t] == 6)
            for (int q = 0; q < 4; q++) m.vals[t * 4 + q] = -m.vals[t * 4 + q];
    sbm_cbc *N = spd_cbc(ctx, &m);
    SBM_ASSERT_FAILS(ctx, sbm_chol_factor(ctx, chol, N, SBM_DAMPING_NONE, 0.0),
                     SBM_ERR_NOT_POSITIVE_DEFINITE, "not positive definite: block column 6 ");
    SBM_ASSERT_FAILS(ctx, sbm_chol_inverse_diagonal(ctx, chol, out), SBM_ERR_INVALID_ARGUMENT,
                     "argument chol has no factor: the last sbm_chol_factor failed");
    sbm_chol_destroy(chol);
    /* a plan of another backend */
    if (e->backend != SBM_BACKEND_CPU) {
        sbm_cbc *H = spd_cbc(e->host, &m);
        SBM_ASSERT_OK(e->host, sbm_chol_plan(e->host, H, NULL, &chol));
        SBM_ASSERT_FAILS(ctx, sbm_chol_inverse_diagonal(ctx, chol, out), SBM_ERR_BACKEND_MISMATCH,
                         "argument chol was planned on the CPU backend");
        sbm_chol_destroy(chol);
        sbm_cbc_destroy(H);
    }
    sbm_cbc_destroy(N);
    sbm_cbc_destroy(A);
    spd_free(&m);
}

/* The inverse follows the factor: a new factorisation (new values, new lambda) replaces it. */
static void test_inverse_refactor(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    spd_matrix m = spd_make(81, 40, 3, PAT_GRID, 1);
    sbm_cbc *A = spd_cbc(e->ctx, &m);
    sbm_chol *chol = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_chol_plan(e->ctx, A, NULL, &chol));
    static const int damp[3] = {SBM_DAMPING_NONE, SBM_DAMPING_IDENTITY, SBM_DAMPING_DIAGONAL};
    for (int it = 0; it < 3; it++) {
        SBM_ASSERT_OK(e->ctx, sbm_chol_factor(e->ctx, chol, A, (sbm_damping)damp[it], 0.7 * it));
        double *D = dense_inverse(&m, damp[it], 0.7 * it);
        check_inverse(e->ctx, chol, &m, D, "inverse after a refactorisation");
        free(D);
    }
    sbm_chol_destroy(chol);
    sbm_cbc_destroy(A);
    spd_free(&m);
}

/* The diagonal of the inverse of A in ctx (a new plan and factor), nb b^2 doubles. */
static double *inverse_diagonal_in(sbm_ctx *ctx, const spd_matrix *m)
{
    sbm_cbc *A = spd_cbc(ctx, m);
    sbm_chol *chol = NULL;
    SBM_ASSERT_OK(ctx, sbm_chol_plan(ctx, A, NULL, &chol));
    SBM_ASSERT_OK(ctx, sbm_chol_factor(ctx, chol, A, SBM_DAMPING_DIAGONAL, 1e-3));
    double *out = malloc((size_t)(m->nb * m->b * m->b) * sizeof(double));
    SBM_ASSERT_OK(ctx, sbm_chol_inverse_diagonal(ctx, chol, out));
    sbm_chol_destroy(chol);
    sbm_cbc_destroy(A);
    return out;
}

/* OpenBLAS's thread count, where the library is OpenBLAS (weak: absent otherwise). */
extern void openblas_set_num_threads(int n) __attribute__((weak));
extern int openblas_get_num_threads(void) __attribute__((weak));

/* Two plans give the same bits; on the CPU with 1 and 4 context threads too; with 1 and 4
 * OpenBLAS threads (a random pattern whose fill makes fronts of hundreds of rows, where
 * OpenBLAS threads its calls) the same bits run to run and agreement to 1e-12 between the
 * counts; a CUDA context agrees with the CPU backend to 1e-10 (its factor
 * is computed on the device). */
static void test_inverse_repeatable(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    spd_matrix ms[2] = {spd_make(321, 150, 6, PAT_GRID, 1), spd_make(322, 160, 4, PAT_RANDOM, 1)};
    for (int k = 0; k < 2; k++) {
        const spd_matrix *m = &ms[k];
        const int64_t cnt = m->nb * m->b * m->b;
        const size_t bytes = (size_t)cnt * sizeof(double);
        double *Z0 = inverse_diagonal_in(e->ctx, m), *Z1 = inverse_diagonal_in(e->ctx, m);
        assert_memory_equal(Z0, Z1, bytes);
        free(Z1);
        if (e->backend == SBM_BACKEND_CPU) {
            for (int threads = 1; threads <= 4; threads += 3) {
                sbm_tuning t = sbm_tuning_default();
                t.num_threads = threads;
                SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, &t));
                Z1 = inverse_diagonal_in(e->ctx, m);
                assert_memory_equal(Z0, Z1, bytes);
                free(Z1);
            }
            SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, NULL));
            if (openblas_set_num_threads && openblas_get_num_threads) {
                /* OpenBLAS picks other kernels (other summation orders) for other thread
                 * counts: the factorisation itself, and so the inverse, agree to rounding only
                 * (docs/DESIGN-NOTES.md, Selected inverse) */
                const int was = openblas_get_num_threads();
                for (int threads = 1; threads <= 4; threads += 3) {
                    openblas_set_num_threads(threads);
                    Z1 = inverse_diagonal_in(e->ctx, m);
                    sbm_test_assert_near(Z1, Z0, cnt, 1e-12, "another OpenBLAS thread count");
                    double *Z2 = inverse_diagonal_in(e->ctx, m);
                    assert_memory_equal(Z1, Z2, bytes); /* bitwise at that count */
                    free(Z2);
                    free(Z1);
                }
                openblas_set_num_threads(was);
            }
        } else {
            Z1 = inverse_diagonal_in(e->host, m);
            sbm_test_assert_near(Z0, Z1, cnt, 1e-10, "CUDA against CPU inverse");
            free(Z1);
        }
        free(Z0);
    }
    spd_free(&ms[0]);
    spd_free(&ms[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_inverse_random),     SBM_TEST_BOTH(test_inverse_larger),
        SBM_TEST_BOTH(test_inverse_degenerate), SBM_TEST_BOTH(test_inverse_errors),
        SBM_TEST_BOTH(test_inverse_refactor),   SBM_TEST_BOTH(test_inverse_repeatable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
