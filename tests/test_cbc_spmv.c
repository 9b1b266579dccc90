/* SPDX-License-Identifier: BSD-3-Clause */
/* Block SpMV y = alpha*op(A)*x + beta*y: every block shape, both ops, alpha/beta cases, empty
 * and degenerate matrices, against dense references; every error path.
 * White-box: vectors are placed in the context's memory through the backend's copy. */
#include "test_util.h"
#include "sbm_blocks.h"
#include "sbm_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef sbm_test_shape shape;

static const shape shapes[] = SBM_TEST_SHAPES({2, 5}, {11, 4}, {16, 16}, {1, 7}, {32, 3});
static const int nshapes = (int)(sizeof shapes / sizeof shapes[0]);

static const int64_t dims[][2] = {{0, 0}, {0, 3}, {4, 0}, {1, 1}, {5, 3}, {3, 7}, {9, 9}};
static const int ndims = (int)(sizeof dims / sizeof dims[0]);

static void test_spmv_all(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const double ab[][2] = {{1.0, 0.0}, {-0.5, 1.0}, {2.0, -0.25}, {0.0, 0.5}, {0.0, 0.0}};
    for (int s = 0; s < nshapes; s++)
        for (int d = 0; d < ndims; d++) {
            const int r = shapes[s].r, c = shapes[s].c;
            const int64_t nbr = dims[d][0], nbc = dims[d][1], m = nbr * r, n = nbc * c;
            const uint64_t seed = 100 * s + d;
            sbm_cbc *A = sbm_test_random_cbc(e->ctx, seed, nbr, nbc, r, c, 0.4);
            double *dense = sbm_test_cbc_dense(A);
            for (int op = 0; op < 2; op++) {
                const int64_t xl = op ? m : n, yl = op ? n : m;
                double *hx = sbm_test_random_vector(seed + 1, xl);
                double *hy = sbm_test_random_vector(seed + 2, yl);
                for (int t = 0; t < 5; t++) {
                    const double alpha = ab[t][0], beta = ab[t][1];
                    /* beta == 0: y's old contents are ignored, NaN included */
                    double *hy0 = malloc((size_t)(yl + 1) * sizeof *hy0);
                    for (int64_t i = 0; i < yl; i++) hy0[i] = beta == 0.0 ? NAN : hy[i];
                    double *x = sbm_test_vec_upload(e->ctx, hx, xl), *y = sbm_test_vec_upload(e->ctx, hy0, yl);
                    sbm_status st = sbm_cbc_spmv(e->ctx, op ? SBM_OP_T : SBM_OP_N, alpha, A, x, beta, y);
                    SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
                    SBM_ASSERT_OK(e->ctx, st);
                    double *got = sbm_test_vec_download(e->ctx, y, yl);
                    double *want = malloc((size_t)(yl + 1) * sizeof *want);
                    for (int64_t i = 0; i < yl; i++) {
                        double acc = 0.0;
                        for (int64_t k = 0; k < xl; k++)
                            acc += (op ? dense[k + i * m] : dense[i + k * m]) * hx[k];
                        want[i] = alpha * acc + (beta == 0.0 ? 0.0 : beta * hy0[i]);
                    }
                    sbm_test_assert_near(got, want, yl, 1e-13 * (xl + 1), "y");
                    /* x untouched */
                    double *xa = sbm_test_vec_download(e->ctx, x, xl);
                    if (xl > 0) assert_memory_equal(xa, hx, (size_t)xl * sizeof(double));
                    free(xa);
                    free(want);
                    free(got);
                    sbm__free(e->ctx, y);
                    sbm__free(e->ctx, x);
                    free(hy0);
                }
                free(hy);
                free(hx);
            }
            free(dense);
            sbm_cbc_destroy(A);
        }
}

static void test_spmv_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    sbm_cbc *A = sbm_test_random_cbc(ctx, 3, 4, 5, 3, 2, 0.5); /* 12 x 10 */
    double *hx = sbm_test_random_vector(1, 12), *hy = sbm_test_random_vector(2, 12);
    double *x = sbm_test_vec_upload(ctx, hx, 12), *y = sbm_test_vec_upload(ctx, hy, 12);
    double *buf = sbm_test_vec_upload(ctx, hy, 12);

    SBM_ASSERT_FAILS(NULL, sbm_cbc_spmv(NULL, SBM_OP_N, 1.0, A, x, 0.0, y), SBM_ERR_NULL_ARGUMENT,
                     "sbm_cbc_spmv: argument ctx is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_spmv(ctx, SBM_OP_N, 1.0, NULL, x, 0.0, y), SBM_ERR_NULL_ARGUMENT,
                     "sbm_cbc_spmv: argument A is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_spmv(ctx, SBM_OP_N, 1.0, A, NULL, 0.0, y), SBM_ERR_NULL_ARGUMENT,
                     "argument x is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_spmv(ctx, SBM_OP_N, 1.0, A, x, 0.0, NULL), SBM_ERR_NULL_ARGUMENT,
                     "argument y is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_spmv(ctx, (sbm_op)3, 1.0, A, x, 0.0, y), SBM_ERR_INVALID_ARGUMENT,
                     "argument op: 3 is not an operation");
    SBM_ASSERT_FAILS(ctx, sbm_cbc_spmv(ctx, SBM_OP_N, 1.0, A, x, 0.0, x), SBM_ERR_ALIASING,
                     "arguments x (10 entries) and y (12 entries) overlap");
    /* partial overlap: y starts inside x */
    SBM_ASSERT_FAILS(ctx, sbm_cbc_spmv(ctx, SBM_OP_T, 1.0, A, buf, 0.0, buf + 4), SBM_ERR_ALIASING,
                     "arguments x (12 entries) and y (10 entries) overlap");
    /* a matrix of another backend */
    sbm_ctx *other = e->backend == SBM_BACKEND_CPU ? NULL : e->host;
    if (other) {
        sbm_cbc *H = sbm_test_random_cbc(other, 3, 4, 5, 3, 2, 0.5);
        SBM_ASSERT_FAILS(ctx, sbm_cbc_spmv(ctx, SBM_OP_N, 1.0, H, x, 0.0, y), SBM_ERR_BACKEND_MISMATCH,
                         "argument A lives on the CPU backend");
        sbm_cbc_destroy(H);
    }
    /* inputs and outputs untouched by the failures */
    double *xa = sbm_test_vec_download(ctx, x, 12), *ya = sbm_test_vec_download(ctx, y, 12);
    assert_memory_equal(xa, hx, 12 * sizeof(double));
    assert_memory_equal(ya, hy, 12 * sizeof(double));
    /* adjacent, non-overlapping halves of one buffer are fine */
    double *big = sbm_test_vec_upload(ctx, hy, 12);
    sbm_cbc *S = sbm_test_random_cbc(ctx, 4, 3, 3, 2, 2, 0.8); /* 6 x 6 */
    sbm_status st = sbm_cbc_spmv(ctx, SBM_OP_N, 1.0, S, big, 0.0, big + 6);
    SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
    SBM_ASSERT_OK(ctx, st);
    sbm_cbc_destroy(S);
    sbm__free(ctx, big);
    free(xa);
    free(ya);
    sbm__free(ctx, buf);
    sbm__free(ctx, y);
    sbm__free(ctx, x);
    free(hy);
    free(hx);
    sbm_cbc_destroy(A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_spmv_all),
        SBM_TEST_BOTH(test_spmv_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
