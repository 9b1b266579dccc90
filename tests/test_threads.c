/* SPDX-License-Identifier: BSD-3-Clause */
/* The CPU backend's threaded kernels give the same bits for any number of threads: block SpMV
 * (both ops), the solvers' vector operations, the block-diagonal inverse and scaling, and the
 * block SpGEMM (positions and scatter modes), each run with 1, 2, 3 and 7 threads on every block
 * shape (and generic ones), empty matrices included, with the kernels' work thresholds off
 * (ctx->fine_grain) so that even small inputs are split. The one-thread result is checked against
 * a dense reference too; the inverse's errors name the first failing block for every count.
 * Whole BA (PCG, matrix-free PCG) and SLAM (PCG) solves end on the same bits too. */
#include "test_util.h"
#include "sbm_blocks.h"
#include "core_objects.h"
#include "core_memory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const sbm_test_shape shapes[] = SBM_TEST_SHAPES({2, 5}, {11, 4});
static const int nshapes = (int)(sizeof shapes / sizeof shapes[0]);
static const sbm_test_triple triples[] = SBM_TEST_TRIPLES({2, 5, 3}, {4, 4, 11});
static const int ntriples = (int)(sizeof triples / sizeof triples[0]);
static const int thread_counts[] = {1, 2, 3, 7};
#define NCOUNTS 4

/* A CPU context on t threads, with every parallel loop split down to single items. */
static sbm_ctx *ctx_threads(int t)
{
    sbm_ctx *ctx = NULL;
    SBM_ASSERT_OK(NULL, sbm_ctx_create(&ctx, SBM_BACKEND_CPU, 0));
    sbm_tuning tune = sbm_tuning_default();
    tune.num_threads = t;
    SBM_ASSERT_OK(ctx, sbm_ctx_set_tuning(ctx, &tune));
    ctx->fine_grain = 1;
    return ctx;
}

static void assert_bits(const double *a, const double *b, int64_t n, const char *what)
{
    if (n > 0 && memcmp(a, b, (size_t)n * sizeof(double)) != 0) {
        for (int64_t i = 0; i < n; i++)
            if (memcmp(a + i, b + i, sizeof(double)) != 0)
                fail_msg("%s: entry %lld differs: %.17g vs %.17g", what, (long long)i, a[i], b[i]);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Block SpMV                                                                               */
/* ---------------------------------------------------------------------------------------- */

static void test_spmv_threads(void **state)
{
    (void)state;
    sbm_ctx *ctx[NCOUNTS];
    for (int c = 0; c < NCOUNTS; c++) ctx[c] = ctx_threads(thread_counts[c]);
    static const int64_t dims[][2] = {{0, 0}, {0, 5}, {6, 0}, {1, 1}, {13, 9}, {40, 57}};
    static const double ab[][2] = {{1.5, 0.0}, {-1.0, 1.0}, {0.75, -0.5}, {0.0, 2.0}};
    for (int s = 0; s < nshapes; s++)
        for (int d = 0; d < 6; d++)
            for (int op = 0; op < 2; op++)
                for (int k = 0; k < 4; k++) {
                    const int r = shapes[s].r, cc = shapes[s].c;
                    const int64_t nbr = dims[d][0], nbc = dims[d][1];
                    const sbm_op o = op ? SBM_OP_T : SBM_OP_N;
                    const int64_t m = (op ? nbc * cc : nbr * r), n = (op ? nbr * r : nbc * cc);
                    const uint64_t seed = 1000u * (unsigned)s + 10u * (unsigned)d + (unsigned)op;
                    double *x = sbm_test_random_vector(seed + 1, n > 0 ? n : 1);
                    double *y0 = sbm_test_random_vector(seed + 2, m > 0 ? m : 1);
                    double *ref = NULL;
                    for (int c = 0; c < NCOUNTS; c++) {
                        sbm_cbc *A = sbm_test_random_cbc(ctx[c], seed, nbr, nbc, r, cc, 0.3);
                        double *y = malloc((size_t)(m > 0 ? m : 1) * sizeof(double));
                        memcpy(y, y0, (size_t)(m > 0 ? m : 1) * sizeof(double));
                        SBM_ASSERT_OK(ctx[c], sbm_cbc_spmv(ctx[c], o, ab[k][0], A, x, ab[k][1], y));
                        if (c == 0) {
                            /* the one-thread product against the dense one */
                            double *Ad = sbm_test_cbc_dense(A);
                            double *want = malloc((size_t)(m > 0 ? m : 1) * sizeof(double));
                            for (int64_t i = 0; i < m; i++) {
                                double t = 0.0;
                                for (int64_t j = 0; j < n; j++)
                                    t += (op ? Ad[j + i * (nbr * r)] : Ad[i + j * m]) * x[j];
                                want[i] = ab[k][0] * t + ab[k][1] * y0[i];
                            }
                            sbm_test_assert_near(y, want, m, 1e-12, "SpMV, one thread");
                            free(Ad);
                            free(want);
                            ref = y;
                        } else {
                            assert_bits(y, ref, m, "SpMV");
                            free(y);
                        }
                        sbm_cbc_destroy(A);
                    }
                    free(ref);
                    free(x);
                    free(y0);
                }
    for (int c = 0; c < NCOUNTS; c++) sbm_ctx_destroy(ctx[c]);
}

/* ---------------------------------------------------------------------------------------- */
/* Vector operations                                                                        */
/* ---------------------------------------------------------------------------------------- */

/* The one-chunk sum: four interleaved lanes, (s0 + s1) + (s2 + s3). */
static double dot_lanes(int64_t n, const double *x, const double *y)
{
    double s[4] = {0.0, 0.0, 0.0, 0.0};
    for (int64_t i = 0; i < n; i++) s[i % 4] += x[i] * y[i];
    return (s[0] + s[1]) + (s[2] + s[3]);
}

static void test_vector_threads(void **state)
{
    (void)state;
    sbm_ctx *ctx[NCOUNTS];
    for (int c = 0; c < NCOUNTS; c++) ctx[c] = ctx_threads(thread_counts[c]);
    static const int64_t sizes[] = {0, 1, 5, 16383, 16384, 16385, 100003};
    for (int z = 0; z < 7; z++) {
        const int64_t n = sizes[z], n1 = n > 0 ? n : 1;
        const size_t bytes = (size_t)n1 * sizeof(double);
        double *x = sbm_test_random_vector(7 + (uint64_t)z, n1);
        double *y0 = sbm_test_random_vector(70 + (uint64_t)z, n1);
        /* a NaN in the last chunk and a larger |x| before it: max |x| is the NaN */
        double *xn = malloc(bytes);
        memcpy(xn, x, bytes);
        if (n > 0) xn[0] = 5.0, xn[n - 1] = NAN;
        double dot[NCOUNTS], amax[NCOUNTS], amax_nan[NCOUNTS];
        double *out[NCOUNTS][3];
        for (int c = 0; c < NCOUNTS; c++) {
            SBM_ASSERT_OK(ctx[c], sbm__vec_dot(ctx[c], n, x, y0, &dot[c]));
            SBM_ASSERT_OK(ctx[c], sbm__vec_amax(ctx[c], n, x, &amax[c]));
            SBM_ASSERT_OK(ctx[c], sbm__vec_amax(ctx[c], n, xn, &amax_nan[c]));
            for (int k = 0; k < 3; k++) {
                out[c][k] = malloc(bytes);
                memcpy(out[c][k], y0, bytes);
            }
            SBM_ASSERT_OK(ctx[c], sbm__vec_axpy(ctx[c], n, 0.3, x, out[c][0]));
            SBM_ASSERT_OK(ctx[c], sbm__vec_xpay(ctx[c], n, x, -1.7, out[c][1]));
            SBM_ASSERT_OK(ctx[c], sbm__vec_scale(ctx[c], n, 2.5, out[c][2]));
        }
        /* one thread: the references (one chunk: the four-lane sum itself) */
        double want = 0.0, m = 0.0;
        for (int64_t i = 0; i < n; i++) m = fabs(x[i]) > m ? fabs(x[i]) : m;
        if (n <= 16384) {
            want = dot_lanes(n, x, y0);
            assert_memory_equal(&dot[0], &want, sizeof want);
        } else {
            for (int64_t i = 0; i < n; i++) want += x[i] * y0[i];
            assert_true(fabs(dot[0] - want) <= 1e-12 * (double)n);
        }
        assert_true(amax[0] == m);
        assert_true(n == 0 ? amax_nan[0] == 0.0 : isnan(amax_nan[0]));
        for (int64_t i = 0; i < n; i++) {
            assert_true(out[0][0][i] == y0[i] + 0.3 * x[i]);
            assert_true(out[0][1][i] == x[i] + -1.7 * y0[i]);
            assert_true(out[0][2][i] == y0[i] * 2.5);
        }
        for (int c = 1; c < NCOUNTS; c++) {
            assert_memory_equal(&dot[c], &dot[0], sizeof(double));
            assert_memory_equal(&amax[c], &amax[0], sizeof(double));
            assert_true(n == 0 ? amax_nan[c] == 0.0 : isnan(amax_nan[c]));
            for (int k = 0; k < 3; k++) assert_bits(out[c][k], out[0][k], n, "vector operation");
        }
        for (int c = 0; c < NCOUNTS; c++)
            for (int k = 0; k < 3; k++) free(out[c][k]);
        free(x);
        free(y0);
        free(xn);
    }
    for (int c = 0; c < NCOUNTS; c++) sbm_ctx_destroy(ctx[c]);
}

/* ---------------------------------------------------------------------------------------- */
/* Block-diagonal inverse and scaling                                                       */
/* ---------------------------------------------------------------------------------------- */

static void set_value(sbm_cbc *H, int64_t q, int e, double v)
{
    H->values[q * H->r * H->c + e] = v;
}

static void test_bdiag_threads(void **state)
{
    (void)state;
    sbm_ctx *ctx[NCOUNTS];
    for (int c = 0; c < NCOUNTS; c++) ctx[c] = ctx_threads(thread_counts[c]);
    static const int sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12};
    static const int64_t counts[] = {0, 1, 150};
    for (int s = 0; s < 10; s++)
        for (int k = 0; k < 3; k++) {
            const int b = sizes[s];
            const int64_t nb = counts[k];
            sbm_cbc *ref = NULL;
            for (int c = 0; c < NCOUNTS; c++) {
                sbm_cbc *D = sbm_test_random_bdiag_spd(ctx[c], 40 + (uint64_t)s, nb, b);
                sbm_cbc *Dinv = NULL;
                SBM_ASSERT_OK(ctx[c], sbm_cbc_copy(ctx[c], D, &Dinv));
                SBM_ASSERT_OK(ctx[c], sbm_bdiag_inverse(ctx[c], D, Dinv));
                if (c == 0) {
                    /* D * Dinv = I, blockwise */
                    for (int64_t q = 0; q < nb; q++) {
                        const double *a = D->values + q * b * b, *w = Dinv->values + q * b * b;
                        for (int i = 0; i < b; i++)
                            for (int j = 0; j < b; j++) {
                                double t = 0.0;
                                for (int p = 0; p < b; p++) t += a[i + p * b] * w[p + j * b];
                                assert_true(fabs(t - (i == j)) < 1e-9);
                            }
                    }
                    ref = Dinv;
                } else {
                    sbm_test_assert_same_cbc(Dinv, ref, -1.0);
                    sbm_cbc_destroy(Dinv);
                }
                if (nb == 150) {
                    /* blocks 70 and 140 fail: the message names 70 for every count */
                    sbm_cbc *H = sbm_test_cbc_to_host(D);
                    set_value(H, 140, 0, -1.0);
                    set_value(H, 70, 0, -1.0);
                    sbm_cbc *Bad = NULL, *Out = NULL;
                    SBM_ASSERT_OK(ctx[c], sbm_cbc_copy(ctx[c], H, &Bad));
                    SBM_ASSERT_OK(ctx[c], sbm_cbc_copy(ctx[c], H, &Out));
                    SBM_ASSERT_FAILS(ctx[c], sbm_bdiag_inverse(ctx[c], Bad, Out),
                                     SBM_ERR_NOT_POSITIVE_DEFINITE,
                                     "argument D: diagonal block 70 (");
                    /* a NaN in block 100 before the indefinite block 140: 70 still first, then
                     * 100 once 70 is repaired */
                    set_value(H, 100, 0, NAN);
                    set_value(H, 70, 0, 4.0 * b);
                    sbm_cbc_destroy(Bad);
                    SBM_ASSERT_OK(ctx[c], sbm_cbc_copy(ctx[c], H, &Bad));
                    SBM_ASSERT_FAILS(ctx[c], sbm_bdiag_inverse(ctx[c], Bad, Out), SBM_ERR_NOT_FINITE,
                                     "argument D: value nan at (0, 0) of diagonal block 100 is not "
                                     "finite");
                    sbm_cbc_destroy(Bad);
                    sbm_cbc_destroy(Out);
                    sbm_cbc_destroy(H);
                }
                sbm_cbc_destroy(D);
            }
            sbm_cbc_destroy(ref);
        }
    for (int c = 0; c < NCOUNTS; c++) sbm_ctx_destroy(ctx[c]);
}

static void test_scale_threads(void **state)
{
    (void)state;
    sbm_ctx *ctx[NCOUNTS];
    for (int c = 0; c < NCOUNTS; c++) ctx[c] = ctx_threads(thread_counts[c]);
    static const int64_t dims[][2] = {{0, 0}, {0, 4}, {5, 0}, {17, 23}};
    for (int s = 0; s < nshapes; s++)
        for (int d = 0; d < 4; d++)
            for (int left = 0; left < 2; left++) {
                const int r = shapes[s].r, cc = shapes[s].c, b = left ? r : cc;
                const int64_t nbr = dims[d][0], nbc = dims[d][1];
                sbm_cbc *ref = NULL;
                for (int c = 0; c < NCOUNTS; c++) {
                    sbm_cbc *A = sbm_test_random_cbc(ctx[c], 90 + (uint64_t)s, nbr, nbc, r, cc, 0.4);
                    sbm_cbc *D = sbm_test_random_bdiag_spd(ctx[c], 91, left ? nbr : nbc, b);
                    sbm_cbc *B = NULL;
                    SBM_ASSERT_OK(ctx[c], sbm_cbc_copy(ctx[c], A, &B));
                    SBM_ASSERT_OK(ctx[c], sbm_bdiag_scale(ctx[c], left ? SBM_SIDE_LEFT
                                                                       : SBM_SIDE_RIGHT,
                                                          D, A, B));
                    if (c == 0) {
                        ref = B;
                    } else {
                        sbm_test_assert_same_cbc(B, ref, -1.0);
                        sbm_cbc_destroy(B);
                    }
                    sbm_cbc_destroy(A);
                    sbm_cbc_destroy(D);
                }
                sbm_cbc_destroy(ref);
            }
    for (int c = 0; c < NCOUNTS; c++) sbm_ctx_destroy(ctx[c]);
}

/* ---------------------------------------------------------------------------------------- */
/* Block SpGEMM                                                                             */
/* ---------------------------------------------------------------------------------------- */

/* C = U + alpha op(A) op(B) by plan + execute (positions mode) and by sbm_cbc_gemm (scatter
 * mode), for every count; the one-thread C against the dense product. */
static void test_gemm_threads(void **state)
{
    (void)state;
    sbm_ctx *ctx[NCOUNTS];
    for (int c = 0; c < NCOUNTS; c++) ctx[c] = ctx_threads(thread_counts[c]);
    static const int64_t dims[][3] = {{0, 0, 0}, {3, 0, 4}, {0, 5, 2}, {14, 9, 21}};
    for (int s = 0; s < ntriples; s++)
        for (int d = 0; d < 4; d++)
            for (int ops = 0; ops < 4; ops++) {
                const int r = triples[s].r, k = triples[s].k, cc = triples[s].c;
                const int64_t m = dims[d][0], kk = dims[d][1], n = dims[d][2];
                const sbm_op oa = ops & 1 ? SBM_OP_T : SBM_OP_N, ob = ops & 2 ? SBM_OP_T : SBM_OP_N;
                const int with_u = ops == 1 || ops == 2;
                const uint64_t seed = 300u * (unsigned)s + 7u * (unsigned)d + (unsigned)ops;
                sbm_cbc *ref[2] = {NULL, NULL};
                for (int c = 0; c < NCOUNTS; c++) {
                    sbm_cbc *A = sbm_test_random_cbc_op(ctx[c], seed, oa, m, kk, r, k, 0.3);
                    sbm_cbc *B = sbm_test_random_cbc_op(ctx[c], seed + 1, ob, kk, n, k, cc, 0.3);
                    sbm_cbc *U = with_u ? sbm_test_random_cbc(ctx[c], seed + 2, m, n, r, cc, 0.2)
                                        : NULL;
                    sbm_gemm_plan *plan = NULL;
                    sbm_cbc *C[2] = {NULL, NULL};
                    SBM_ASSERT_OK(ctx[c], sbm_cbc_gemm_plan(ctx[c], oa, A, ob, B, U, 0, &plan, &C[0]));
                    SBM_ASSERT_OK(ctx[c], sbm_cbc_gemm_execute(ctx[c], plan, -0.75, A, B, U, C[0]));
                    SBM_ASSERT_OK(ctx[c], sbm_cbc_gemm(ctx[c], -0.75, oa, A, ob, B, U, 0, &C[1]));
                    if (c == 0) {
                        double *Ad = sbm_test_cbc_dense(A), *Bd = sbm_test_cbc_dense(B);
                        double *P = sbm_test_dense_gemm(oa == SBM_OP_T, Ad, A->nbr * A->r,
                                                        A->nbc * A->c, ob == SBM_OP_T, Bd,
                                                        B->nbr * B->r, B->nbc * B->c);
                        double *Ud = U ? sbm_test_cbc_dense(U) : NULL;
                        for (int64_t e = 0; e < m * r * n * cc; e++)
                            P[e] = -0.75 * P[e] + (Ud ? Ud[e] : 0.0);
                        sbm_test_assert_cbc_dense(C[0], P, 1e-12);
                        sbm_test_assert_same_cbc(C[1], C[0], -1.0);
                        free(Ad), free(Bd), free(P), free(Ud);
                        ref[0] = C[0], ref[1] = C[1];
                    } else {
                        for (int w = 0; w < 2; w++) {
                            sbm_test_assert_same_cbc(C[w], ref[w], -1.0);
                            sbm_cbc_destroy(C[w]);
                        }
                    }
                    sbm_gemm_plan_destroy(plan);
                    sbm_cbc_destroy(A), sbm_cbc_destroy(B), sbm_cbc_destroy(U);
                }
                sbm_cbc_destroy(ref[0]), sbm_cbc_destroy(ref[1]);
            }
    for (int c = 0; c < NCOUNTS; c++) sbm_ctx_destroy(ctx[c]);
}

/* ---------------------------------------------------------------------------------------- */
/* Whole solves                                                                             */
/* ---------------------------------------------------------------------------------------- */

static void sum_pcg(void *user, const sbm_iteration_report *r)
{
    *(long *)user += r->linear_iterations;
}

/* BA with each PCG kind (the Schur products, the Schur diagonal, the SpMVs and PCG's vector
 * operations all split) and SLAM's PCG: the same final cost, bit for bit, and the same PCG
 * iterations for every count. */
static void test_solves_threads(void **state)
{
    (void)state;
    const sbm_linear_solver kinds[] = {SBM_LINEAR_PCG, SBM_LINEAR_PCG_MATRIX_FREE};
    for (int k = 0; k < 3; k++) {
        double cost[NCOUNTS];
        long its[NCOUNTS];
        for (int c = 0; c < NCOUNTS; c++) {
            sbm_ctx *ctx = ctx_threads(thread_counts[c]);
            sbm_solver_options o = sbm_solver_default_options();
            o.max_iterations = 4;
            o.callback = sum_pcg;
            its[c] = 0;
            o.user = &its[c];
            sbm_solver_summary s;
            if (k < 2) {
                sbm_bal_generate_options g = sbm_bal_generate_defaults(20, 400, 4, 5);
                sbm_bal_problem *p = NULL;
                SBM_ASSERT_OK(ctx, sbm_bal_generate(ctx, &g, &p));
                o.linear_solver = kinds[k];
                SBM_ASSERT_OK(ctx, sbm_ba_solve(ctx, p, &o, &s));
                sbm_bal_destroy(p);
            } else {
                sbm_g2o_graph *g = NULL;
                SBM_ASSERT_OK(ctx, sbm_g2o_read(ctx, sbm_test_data_path("g2o/tinyGrid3D.g2o"), &g));
                o.linear_solver = SBM_LINEAR_PCG;
                SBM_ASSERT_OK(ctx, sbm_slam_solve(ctx, g, &o, &s));
                sbm_g2o_destroy(g);
            }
            assert_true(s.final_cost < s.initial_cost && its[c] > 0);
            cost[c] = s.final_cost;
            sbm_ctx_destroy(ctx);
        }
        for (int c = 1; c < NCOUNTS; c++) {
            assert_memory_equal(&cost[c], &cost[0], sizeof(double));
            assert_int_equal(its[c], its[0]);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spmv_threads),
        cmocka_unit_test(test_vector_threads),
        cmocka_unit_test(test_bdiag_threads),
        cmocka_unit_test(test_scale_threads),
        cmocka_unit_test(test_gemm_threads),
        cmocka_unit_test(test_solves_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
