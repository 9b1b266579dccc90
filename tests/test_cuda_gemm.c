/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU-only checks of the block ESC SpGEMM (kernels/cuda/gemm/cuda_gemm.cu): the CUDA result against the
 * CPU backend's on the same inputs for every block-shape triple and variant; column slicing
 * under a tiny memory budget (at least 3 slices) equal to the one-pass result; both sort
 * variants; both numeric kernels (thread per element, FP64 tensor cores); determinism (bitwise
 * equal executes and plans); plan reuse; larger products; bad input on device objects. Every test is registered for the CUDA backend only and skips
 * visibly without a GPU. */
#include "test_util.h"
#include "sbm_blocks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef sbm_test_triple triple;

static const triple triples[] =
    SBM_TEST_TRIPLES({2, 5, 3}, {11, 4, 7}, {16, 16, 16}, {17, 2, 19}, {1, 6, 1});
static const int ntriples = (int)(sizeof triples / sizeof triples[0]);

/* ---------------------------------------------------------------------------------------- */
/* Helpers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* 2D 5-point stencil on an n x n grid with dense b x b blocks of random values. */
static sbm_cbc *make_poisson2d(sbm_ctx *ctx, uint64_t seed, int n, int b)
{
    sbm_test_rng g = sbm_test_rng_seed(seed);
    const int64_t N = (int64_t)n * n, bb = (int64_t)b * b;
    int64_t *colptr = malloc((size_t)(N + 1) * sizeof *colptr);
    int32_t *rowind = malloc((size_t)(5 * N) * sizeof *rowind);
    double *values = malloc((size_t)(5 * N * bb) * sizeof *values);
    assert_true(colptr && rowind && values);
    int64_t k = 0;
    colptr[0] = 0;
    for (int64_t j = 0; j < N; j++) {
        const int64_t x = j % n, y = j / n;
        const int64_t nb[5] = {y > 0 ? j - n : -1, x > 0 ? j - 1 : -1, j, x < n - 1 ? j + 1 : -1,
                               y < n - 1 ? j + n : -1};
        for (int t = 0; t < 5; t++)
            if (nb[t] >= 0) rowind[k++] = (int32_t)nb[t];
        colptr[j + 1] = k;
    }
    for (int64_t t = 0; t < k * bb; t++) values[t] = sbm_test_rng_value(&g);
    sbm_cbc *A = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_create(ctx, &A, N, N, b, b, colptr, rowind, values));
    free(values);
    free(rowind);
    free(colptr);
    return A;
}

/* C = U + alpha*op(A)*op(B) in ctx (plan + execute), with the plan's info. */
static sbm_cbc *gemm(sbm_ctx *ctx, double alpha, sbm_op oa, const sbm_cbc *A, sbm_op ob,
                     const sbm_cbc *B, const sbm_cbc *U, unsigned flags, sbm_gemm_plan_info *info)
{
    sbm_gemm_plan *p = NULL;
    sbm_cbc *C = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_gemm_plan(ctx, oa, A, ob, B, U, flags, &p, &C));
    SBM_ASSERT_OK(ctx, sbm_cbc_gemm_execute(ctx, p, alpha, A, B, U, C));
    if (info) *info = sbm_gemm_plan_get_info(p);
    sbm_gemm_plan_destroy(p);
    return C;
}

/* ---------------------------------------------------------------------------------------- */
/* Against the CPU backend                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Every triple (fast and generic), every op combination, with and without U and the upper
 * triangle: the same pattern as the CPU backend, values equal to rounding (both sum in the
 * same order; the GPU contracts multiply-adds into FMAs). */
static void test_cuda_gemm_vs_cpu(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    uint64_t seed = 100;
    for (int t = 0; t < ntriples; t++) {
        const triple tr = triples[t];
        for (int v = 0; v < 16; v++) {
            const sbm_op oa = (v & 1) ? SBM_OP_T : SBM_OP_N, ob = (v & 2) ? SBM_OP_T : SBM_OP_N;
            const int with_u = (v & 4) != 0, upper = (v & 8) != 0;
            if (upper && tr.r != tr.c) continue;
            const int64_t nbr = 9, nbk = 7, nbc = upper ? 9 : 11;
            const unsigned flags = upper ? SBM_GEMM_UPPER : 0u;
            seed += 3;
            sbm_cbc *A = sbm_test_random_cbc_op(e->ctx, seed, oa, nbr, nbk, tr.r, tr.k, 0.35);
            sbm_cbc *B = sbm_test_random_cbc_op(e->ctx, seed + 1, ob, nbk, nbc, tr.k, tr.c, 0.35);
            sbm_cbc *U = with_u ? sbm_test_random_cbc_upper(e->ctx, seed + 2, nbr, nbc, tr.r, tr.c, 0.3, upper) : NULL;
            sbm_cbc *hA = sbm_test_cbc_to_host(A), *hB = sbm_test_cbc_to_host(B);
            sbm_cbc *hU = U ? sbm_test_cbc_to_host(U) : NULL;
            sbm_gemm_plan_info gi, ci;
            sbm_cbc *C = gemm(e->ctx, 0.75, oa, A, ob, B, U, flags, &gi);
            sbm_cbc *R = gemm(e->host, 0.75, oa, hA, ob, hB, hU, flags, &ci);
            assert_int_equal(gi.products, ci.products);
            assert_int_equal(gi.nnzb_c, ci.nnzb_c);
            assert_int_equal(gi.fast_path, ci.fast_path);
            assert_int_equal(gi.slices, 1);
            sbm_test_assert_same_cbc(C, R, 1e-13 * tr.k * nbk);
            sbm_cbc_destroy(R);
            sbm_cbc_destroy(C);
            sbm_cbc_destroy(hU);
            sbm_cbc_destroy(hB);
            sbm_cbc_destroy(hA);
            sbm_cbc_destroy(U);
            sbm_cbc_destroy(B);
            sbm_cbc_destroy(A);
        }
    }
}

/* Every numeric kernel (one thread per element; one warp per block on the FP64 tensor cores;
 * their staged, shared-memory-tiled forms, persistent or not) forced for every fast triple, every op combination, with U and alpha: each against the CPU
 * backend, and each deterministic. */
static void test_cuda_gemm_numeric_variants(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    /* the staged kernels with tiny tiles (5 blocks per tile, 3 entries per chunk, 2 CTAs), so
     * that these small products cross tile and chunk boundaries */
    static const sbm_tune_gemm_numeric variants[6] = {
        SBM_TUNE_GEMM_TEAM,  SBM_TUNE_GEMM_DMMA,           SBM_TUNE_GEMM_STAGE,
        SBM_TUNE_GEMM_SDMMA, SBM_TUNE_GEMM_STAGE_ONE_TILE, SBM_TUNE_GEMM_SDMMA_ONE_TILE};
    sbm_tuning tune = sbm_tuning_default();
    tune.gemm_tile_blocks = 5;
    tune.gemm_tile_entries = 3;
    tune.gemm_tile_grid = 2;
    uint64_t seed = 900;
    for (int t = 0; t < ntriples; t++) {
        const triple tr = triples[t];
        if (!sbm_blk_is_fast_triple(tr.r, tr.k, tr.c)) continue;
        for (int v = 0; v < 4; v++) {
            const sbm_op oa = (v & 1) ? SBM_OP_T : SBM_OP_N, ob = (v & 2) ? SBM_OP_T : SBM_OP_N;
            seed += 3;
            sbm_cbc *A = sbm_test_random_cbc_op(e->ctx, seed, oa, 12, 9, tr.r, tr.k, 0.3);
            sbm_cbc *B = sbm_test_random_cbc_op(e->ctx, seed + 1, ob, 9, 10, tr.k, tr.c, 0.3);
            sbm_cbc *U = sbm_test_random_cbc_upper(e->ctx, seed + 2, 12, 10, tr.r, tr.c, 0.2, 0);
            sbm_cbc *hA = sbm_test_cbc_to_host(A), *hB = sbm_test_cbc_to_host(B), *hU = sbm_test_cbc_to_host(U);
            sbm_cbc *R = gemm(e->host, -0.5, oa, hA, ob, hB, hU, 0, NULL);
            for (int n = 0; n < 6; n++) {
                tune.gemm_numeric = variants[n];
                SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, &tune));
                sbm_gemm_plan *p = NULL;
                sbm_cbc *C = NULL;
                SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_plan(e->ctx, oa, A, ob, B, U, 0, &p, &C));
                SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_execute(e->ctx, p, -0.5, A, B, U, C));
                sbm_cbc *C1 = sbm_test_cbc_to_host(C);
                SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_execute(e->ctx, p, -0.5, A, B, U, C));
                sbm_test_assert_same_cbc(C, C1, -1.0);
                sbm_test_assert_same_cbc(C, R, 1e-13 * tr.k * 9);
                sbm_cbc_destroy(C1);
                sbm_cbc_destroy(C);
                sbm_gemm_plan_destroy(p);
            }
            sbm_cbc_destroy(R);
            sbm_cbc_destroy(hU);
            sbm_cbc_destroy(hB);
            sbm_cbc_destroy(hA);
            sbm_cbc_destroy(U);
            sbm_cbc_destroy(B);
            sbm_cbc_destroy(A);
        }
    }
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, NULL));
}

/* alpha == 0 gives U exactly (products not computed); alpha == 1 skips the scaling. */
static void test_cuda_gemm_alpha(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_cbc *A = sbm_test_random_cbc_upper(e->ctx, 1, 20, 15, 3, 3, 0.3, 0);
    sbm_cbc *B = sbm_test_random_cbc_upper(e->ctx, 2, 15, 20, 3, 3, 0.3, 0);
    sbm_cbc *U = sbm_test_random_cbc_upper(e->ctx, 3, 20, 20, 3, 3, 0.2, 0);
    sbm_cbc *hA = sbm_test_cbc_to_host(A), *hB = sbm_test_cbc_to_host(B), *hU = sbm_test_cbc_to_host(U);
    const double alphas[3] = {0.0, 1.0, -2.5};
    for (int t = 0; t < 3; t++) {
        sbm_cbc *C = gemm(e->ctx, alphas[t], SBM_OP_N, A, SBM_OP_N, B, U, 0, NULL);
        sbm_cbc *R = gemm(e->host, alphas[t], SBM_OP_N, hA, SBM_OP_N, hB, hU, 0, NULL);
        sbm_test_assert_same_cbc(C, R, alphas[t] == 0.0 ? -1.0 : 1e-13);
        sbm_cbc_destroy(R);
        sbm_cbc_destroy(C);
    }
    sbm_cbc_destroy(hU);
    sbm_cbc_destroy(hB);
    sbm_cbc_destroy(hA);
    sbm_cbc_destroy(U);
    sbm_cbc_destroy(B);
    sbm_cbc_destroy(A);
}

/* Empty operands and degenerate shapes: no blocks, empty columns, 0 block rows or columns. */
static void test_cuda_gemm_empty(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const int64_t dims[][3] = {{0, 5, 4}, {5, 0, 4}, {5, 4, 0}, {0, 0, 0}, {6, 5, 7}};
    for (int t = 0; t < 5; t++) {
        for (int dens = 0; dens < 2; dens++) {
            const double d = dens ? 0.3 : 0.0;
            sbm_cbc *A = sbm_test_random_cbc_upper(e->ctx, 10 + t, dims[t][0], dims[t][1], 2, 3, d, 0);
            sbm_cbc *B = sbm_test_random_cbc_upper(e->ctx, 20 + t, dims[t][1], dims[t][2], 3, 4, d, 0);
            sbm_cbc *hA = sbm_test_cbc_to_host(A), *hB = sbm_test_cbc_to_host(B);
            sbm_gemm_plan_info gi;
            sbm_cbc *C = gemm(e->ctx, 1.5, SBM_OP_N, A, SBM_OP_N, B, NULL, 0, &gi);
            sbm_cbc *R = gemm(e->host, 1.5, SBM_OP_N, hA, SBM_OP_N, hB, NULL, 0, NULL);
            sbm_test_assert_same_cbc(C, R, 1e-13);
            assert_true(gi.slices >= 1);
            sbm_cbc_destroy(R);
            sbm_cbc_destroy(C);
            sbm_cbc_destroy(hB);
            sbm_cbc_destroy(hA);
            sbm_cbc_destroy(B);
            sbm_cbc_destroy(A);
        }
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Slicing, sort variants, determinism, reuse                                               */
/* ---------------------------------------------------------------------------------------- */

/* A tiny budget forces >= 3 column slices; the result equals the one-pass result bitwise (the
 * same entries in the same order). Also with U, upper triangle and transposed operands. */
static void test_cuda_gemm_slices(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (int variant = 0; variant < 2; variant++) {
        const int upper = variant == 1;
        const sbm_op ob = upper ? SBM_OP_T : SBM_OP_N;
        sbm_cbc *A = sbm_test_random_cbc_upper(e->ctx, 31, 60, 80, 3, 3, 0.06, 0);
        sbm_cbc *B = upper ? sbm_test_random_cbc_upper(e->ctx, 32, 60, 80, 3, 3, 0.06, 0)
                           : sbm_test_random_cbc_upper(e->ctx, 32, 80, 120, 3, 3, 0.06, 0);
        const int64_t nbc = upper ? 60 : 120;
        sbm_cbc *U = sbm_test_random_cbc_upper(e->ctx, 33, 60, nbc, 3, 3, 0.05, upper);
        const unsigned flags = upper ? SBM_GEMM_UPPER : 0u;
        sbm_gemm_plan_info i1, i2;
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, 0));
        sbm_cbc *C1 = gemm(e->ctx, 0.5, SBM_OP_N, A, ob, B, U, flags, &i1);
        assert_int_equal(i1.slices, 1);
        const size_t budgets[] = {1u << 16, 1u << 14, 1u << 12, 1u << 10, 256, 1};
        sbm_cbc *C2 = NULL;
        for (int t = 0; t < 6; t++) {
            SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, budgets[t]));
            C2 = gemm(e->ctx, 0.5, SBM_OP_N, A, ob, B, U, flags, &i2);
            if (i2.slices >= 3) break;
            sbm_cbc_destroy(C2);
            C2 = NULL;
        }
        assert_non_null(C2);
        print_message("[  INFO    ] %s: %lld slices, %lld products\n", upper ? "upper, A*B^T" : "A*B",
                      (long long)i2.slices, (long long)i2.products);
        assert_true(i2.slices >= 3);
        assert_int_equal(i1.products, i2.products);
        assert_int_equal(i1.nnzb_c, i2.nnzb_c);
        sbm_test_assert_same_cbc(C1, C2, -1.0);
        /* the smallest budget: one column per slice */
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, 1));
        sbm_cbc *C3 = gemm(e->ctx, 0.5, SBM_OP_N, A, ob, B, U, flags, &i2);
        assert_int_equal(i2.slices, nbc);
        sbm_test_assert_same_cbc(C1, C3, -1.0);
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, 0));
        sbm_cbc_destroy(C3);
        sbm_cbc_destroy(C2);
        sbm_cbc_destroy(C1);
        sbm_cbc_destroy(U);
        sbm_cbc_destroy(B);
        sbm_cbc_destroy(A);
    }
}

/* The radix-sort variant (packed column/row keys) and the segmented sort give the same plan:
 * both are stable, so the same entry order and bitwise equal values. */
static void test_cuda_gemm_sort_variants(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_cbc *A = sbm_test_random_cbc_upper(e->ctx, 41, 70, 50, 6, 3, 0.08, 0);
    sbm_cbc *B = sbm_test_random_cbc_upper(e->ctx, 42, 70, 50, 6, 3, 0.08, 0);
    sbm_cbc *U = sbm_test_random_cbc_upper(e->ctx, 43, 70, 70, 6, 6, 0.05, 1);
    sbm_gemm_plan_info i1, i2;
    sbm_tuning tune = sbm_tuning_default();
    tune.gemm_sort = SBM_TUNE_GEMM_SORT_SEGMENTED;
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, &tune));
    sbm_cbc *C1 = gemm(e->ctx, -1.0, SBM_OP_N, A, SBM_OP_T, B, U, SBM_GEMM_UPPER, &i1);
    tune.gemm_sort = SBM_TUNE_GEMM_SORT_RADIX;
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, &tune));
    sbm_cbc *C2 = gemm(e->ctx, -1.0, SBM_OP_N, A, SBM_OP_T, B, U, SBM_GEMM_UPPER, &i2);
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, 4096));
    sbm_cbc *C3 = gemm(e->ctx, -1.0, SBM_OP_N, A, SBM_OP_T, B, U, SBM_GEMM_UPPER, NULL);
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, 0));
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, NULL));
    assert_int_equal(i1.products, i2.products);
    sbm_test_assert_same_cbc(C1, C2, -1.0);
    sbm_test_assert_same_cbc(C1, C3, -1.0);
    sbm_cbc_destroy(C3);
    sbm_cbc_destroy(C2);
    sbm_cbc_destroy(C1);
    sbm_cbc_destroy(U);
    sbm_cbc_destroy(B);
    sbm_cbc_destroy(A);
}

/* Two executes of one plan, and two plans, give bitwise equal values. */
static void test_cuda_gemm_determinism(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    /* many products per output block: long sums where an unordered reduction would show */
    sbm_cbc *A = sbm_test_random_cbc_upper(e->ctx, 51, 40, 400, 4, 4, 0.5, 0);
    sbm_gemm_plan *p = NULL;
    sbm_cbc *C = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_plan(e->ctx, SBM_OP_N, A, SBM_OP_T, A, NULL, SBM_GEMM_UPPER, &p, &C));
    SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_execute(e->ctx, p, 1.0, A, A, NULL, C));
    sbm_cbc *C1 = sbm_test_cbc_to_host(C);
    SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_execute(e->ctx, p, 1.0, A, A, NULL, C));
    sbm_cbc *C2 = sbm_test_cbc_to_host(C);
    sbm_test_assert_same_cbc(C1, C2, -1.0);
    sbm_cbc *C3 = gemm(e->ctx, 1.0, SBM_OP_N, A, SBM_OP_T, A, NULL, SBM_GEMM_UPPER, NULL);
    sbm_test_assert_same_cbc(C1, C3, -1.0);
    sbm_cbc_destroy(C3);
    sbm_cbc_destroy(C2);
    sbm_cbc_destroy(C1);
    sbm_cbc_destroy(C);
    sbm_gemm_plan_destroy(p);
    sbm_cbc_destroy(A);
}

/* New values with the same pattern (new objects): execute only, against the CPU backend. */
static void test_cuda_gemm_plan_reuse(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_cbc *W = sbm_test_random_cbc_upper(e->ctx, 61, 30, 200, 9, 3, 0.1, 0);
    sbm_gemm_plan *p = NULL;
    sbm_cbc *C = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_plan(e->ctx, SBM_OP_N, W, SBM_OP_T, W, NULL, SBM_GEMM_UPPER, &p, &C));
    for (int it = 0; it < 3; it++) {
        sbm_cbc *H = sbm_test_cbc_to_host(W);
        sbm_cbc_info h = sbm_cbc_get_info(H);
        for (int64_t t = 0; t < h.nnzb * h.r * h.c; t++) h.values[t] = h.values[t] * (1.0 + it) - 0.25 * it;
        sbm_cbc *W2 = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_cbc_create(e->ctx, &W2, h.nbr, h.nbc, h.r, h.c, h.colptr, h.rowind, h.values));
        SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm_execute(e->ctx, p, 2.0, W2, W2, NULL, C));
        sbm_cbc *R = gemm(e->host, 2.0, SBM_OP_N, H, SBM_OP_T, H, NULL, SBM_GEMM_UPPER, NULL);
        sbm_test_assert_same_cbc(C, R, 1e-13 * 200);
        sbm_cbc_destroy(R);
        sbm_cbc_destroy(W2);
        sbm_cbc_destroy(H);
    }
    sbm_cbc_destroy(C);
    sbm_gemm_plan_destroy(p);
    sbm_cbc_destroy(W);
}

/* Larger products: 2D Poisson A*A and A^T*A (upper) with 4x4 blocks on a 120 x 120 grid, and a
 * BA-shaped (W V^-1) W^T upper product. Against the CPU backend. */
static void test_cuda_gemm_large(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_cbc *A = make_poisson2d(e->ctx, 71, 120, 4);
    sbm_cbc *hA = sbm_test_cbc_to_host(A);
    for (int v = 0; v < 2; v++) {
        const sbm_op oa = v ? SBM_OP_T : SBM_OP_N;
        const unsigned flags = v ? SBM_GEMM_UPPER : 0u;
        sbm_gemm_plan_info gi, ci;
        sbm_cbc *C = gemm(e->ctx, 1.0, oa, A, SBM_OP_N, A, NULL, flags, &gi);
        sbm_cbc *R = gemm(e->host, 1.0, oa, hA, SBM_OP_N, hA, NULL, flags, &ci);
        assert_int_equal(gi.products, ci.products);
        sbm_test_assert_same_cbc(C, R, 1e-13 * 20);
        sbm_cbc_destroy(R);
        sbm_cbc_destroy(C);
    }
    sbm_cbc_destroy(hA);
    sbm_cbc_destroy(A);

    /* BA: 60 cameras, 4000 points, each point seen by 5 random cameras */
    const int64_t ncam = 60, npt = 4000, obs = 5;
    int64_t *colptr = malloc((size_t)(npt + 1) * sizeof *colptr);
    int32_t *rowind = malloc((size_t)(npt * obs) * sizeof *rowind);
    double *values = malloc((size_t)(npt * obs * 27) * sizeof *values);
    assert_true(colptr && rowind && values);
    sbm_test_rng g = sbm_test_rng_seed(72);
    int64_t k = 0;
    colptr[0] = 0;
    for (int64_t p = 0; p < npt; p++) {
        unsigned char seen[60] = {0};
        for (int64_t o = 0; o < obs; o++) seen[sbm_test_rng_below(&g, ncam)] = 1;
        for (int64_t i = 0; i < ncam; i++)
            if (seen[i]) rowind[k++] = (int32_t)i;
        colptr[p + 1] = k;
    }
    for (int64_t t = 0; t < k * 27; t++) values[t] = sbm_test_rng_value(&g);
    sbm_cbc *W = NULL, *hW = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_cbc_create(e->ctx, &W, ncam, npt, 9, 3, colptr, rowind, values));
    SBM_ASSERT_OK(e->host, sbm_cbc_create(e->host, &hW, ncam, npt, 9, 3, colptr, rowind, values));
    sbm_gemm_plan_info gi, ci;
    sbm_cbc *S = gemm(e->ctx, -1.0, SBM_OP_N, W, SBM_OP_T, W, NULL, SBM_GEMM_UPPER, &gi);
    sbm_cbc *R = gemm(e->host, -1.0, SBM_OP_N, hW, SBM_OP_T, hW, NULL, SBM_GEMM_UPPER, &ci);
    assert_int_equal(gi.products, ci.products);
    assert_int_equal(gi.fast_path, 1);
    sbm_test_assert_same_cbc(S, R, 1e-12);
    sbm_cbc_destroy(R);
    sbm_cbc_destroy(S);
    sbm_cbc_destroy(hW);
    sbm_cbc_destroy(W);
    free(values);
    free(rowind);
    free(colptr);
}

/* ---------------------------------------------------------------------------------------- */
/* Bad input on device objects                                                              */
/* ---------------------------------------------------------------------------------------- */

static void test_cuda_bad_input(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    sbm_cbc *A = sbm_test_random_cbc_upper(ctx, 81, 6, 5, 3, 3, 0.5, 0);
    sbm_cbc *hA = sbm_test_cbc_to_host(A);
    sbm_gemm_plan *p = NULL;
    sbm_cbc *C = NULL;

    /* a CPU matrix in a CUDA context, and the reverse */
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, hA, SBM_OP_T, A, NULL, 0, &p, &C),
                     SBM_ERR_BACKEND_MISMATCH, "argument A lives on the CPU backend");
    assert_null(p);
    assert_null(C);
    SBM_ASSERT_FAILS(e->host, sbm_cbc_gemm_plan(e->host, SBM_OP_N, hA, SBM_OP_T, A, NULL, 0, &p, &C),
                     SBM_ERR_BACKEND_MISMATCH, "argument B lives on the CUDA backend");
    double x[18] = {0}, y[15] = {0};
    SBM_ASSERT_FAILS(ctx, sbm_cbc_spmv(ctx, SBM_OP_N, 1.0, hA, x, 0.0, y), SBM_ERR_BACKEND_MISMATCH,
                     "lives on the CPU backend");

    /* a plan made on the CPU executed in the CUDA context */
    SBM_ASSERT_OK(e->host, sbm_cbc_gemm_plan(e->host, SBM_OP_N, hA, SBM_OP_T, hA, NULL, 0, &p, &C));
    sbm_cbc *Cd = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, C, &Cd));
    SBM_ASSERT_FAILS(ctx, sbm_cbc_gemm_execute(ctx, p, 1.0, A, A, NULL, Cd), SBM_ERR_BACKEND_MISMATCH,
                     "made on the CPU backend");
    sbm_cbc_destroy(Cd);
    sbm_cbc_destroy(C);
    sbm_gemm_plan_destroy(p);
    p = NULL;
    C = NULL;

    /* a device that does not exist */
    sbm_ctx *bad = NULL;
    SBM_ASSERT_FAILS(NULL, sbm_ctx_create(&bad, SBM_BACKEND_CUDA, sbm_cuda_device_count() + 3),
                     SBM_ERR_NO_DEVICE, "does not exist");
    assert_null(bad);

    /* device arrays with unsorted rows, wrapped: the device validation finds them. Device
     * memory holding {0, 3} and {2, 0, 1} comes from valid CSR matrices (rowptr of a 1-row
     * matrix, colind of a 3-row matrix). */
    int64_t rp1[2] = {0, 3}, rp3[4] = {0, 1, 2, 3};
    int32_t ci1[3] = {0, 1, 2}, ci3[3] = {2, 0, 1};
    double v3[3] = {1, 2, 3};
    sbm_csr *S1 = NULL, *S3 = NULL;
    SBM_ASSERT_OK(ctx, sbm_csr_create(ctx, &S1, 1, 3, rp1, ci1, v3));
    SBM_ASSERT_OK(ctx, sbm_csr_create(ctx, &S3, 3, 3, rp3, ci3, v3));
    sbm_csr_info s1 = sbm_csr_get_info(S1), s3 = sbm_csr_get_info(S3);
    sbm_cbc *Wr = NULL;
    SBM_ASSERT_FAILS(ctx, sbm_cbc_wrap(ctx, &Wr, 3, 1, 1, 1, (int64_t *)s1.rowptr, (int32_t *)s3.colind, s3.values),
                     SBM_ERR_UNSORTED_INDICES, "block row 0 at position 1 follows block row 2");
    assert_null(Wr);
    SBM_ASSERT_FAILS(ctx, sbm_cbc_wrap(ctx, &Wr, 2, 1, 1, 1, (int64_t *)s1.rowptr, (int32_t *)s1.colind, s3.values),
                     SBM_ERR_INDEX_OUT_OF_RANGE, "is outside [0, 2)");
    /* rowptr of S3 read as CBC column pointers with a matching count: a valid wrap */
    SBM_ASSERT_OK(ctx, sbm_cbc_wrap(ctx, &Wr, 3, 3, 1, 1, (int64_t *)s3.rowptr, (int32_t *)s1.colind, s3.values));
    SBM_ASSERT_OK(ctx, sbm_cbc_check(ctx, Wr, 1));
    sbm_cbc_destroy(Wr);
    sbm_csr_destroy(S3);
    sbm_csr_destroy(S1);

    /* a non-finite value on the device */
    double nanv[4] = {1.0, NAN, 2.0, 3.0};
    int64_t cp2[3] = {0, 2, 4};
    int32_t ri2[4] = {0, 1, 0, 1};
    sbm_cbc *N = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_create(ctx, &N, 2, 2, 1, 1, cp2, ri2, nanv));
    SBM_ASSERT_OK(ctx, sbm_cbc_check(ctx, N, 0));
    SBM_ASSERT_FAILS(ctx, sbm_cbc_check(ctx, N, 1), SBM_ERR_NOT_FINITE, "value nan at entry 1");
    sbm_cbc_destroy(N);

    /* a block that is not positive definite: reported by index, Dinv unchanged */
    sbm_cbc *D = sbm_test_random_bdiag_spd(ctx, 82, 5, 3);
    sbm_cbc *hD = sbm_test_cbc_to_host(D);
    sbm_cbc_info hd = sbm_cbc_get_info(hD);
    for (int t = 0; t < 9; t++) hd.values[2 * 9 + t] = (t == 0 || t == 4) ? 1.0 : (t == 8 ? -1.0 : 0.0);
    sbm_cbc *Dbad = NULL, *Dinv = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, hD, &Dbad));
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, hD, &Dinv));
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_inverse(ctx, Dbad, Dinv), SBM_ERR_NOT_POSITIVE_DEFINITE,
                     "diagonal block 2 (3x3) is not positive definite (its leading minor of order 3");
    sbm_test_assert_same_cbc(Dinv, hD, -1.0);
    SBM_ASSERT_FAILS(ctx, sbm_bdiag_inverse(ctx, Dbad, Dbad), SBM_ERR_NOT_POSITIVE_DEFINITE,
                     "diagonal block 2");
    sbm_test_assert_same_cbc(Dbad, hD, -1.0);
    sbm_cbc_destroy(Dinv);
    sbm_cbc_destroy(Dbad);
    sbm_cbc_destroy(hD);
    sbm_cbc_destroy(D);
    sbm_cbc_destroy(hA);
    sbm_cbc_destroy(A);
}

int main(void)
{
    sbm_test_require_gpu("test_cuda_gemm");
    const struct CMUnitTest tests[] = {
        SBM_TEST_CUDA(test_cuda_gemm_vs_cpu),       SBM_TEST_CUDA(test_cuda_gemm_alpha),
        SBM_TEST_CUDA(test_cuda_gemm_empty),        SBM_TEST_CUDA(test_cuda_gemm_slices),
        SBM_TEST_CUDA(test_cuda_gemm_sort_variants), SBM_TEST_CUDA(test_cuda_gemm_determinism),
        SBM_TEST_CUDA(test_cuda_gemm_plan_reuse),   SBM_TEST_CUDA(test_cuda_gemm_large),
        SBM_TEST_CUDA(test_cuda_bad_input),         SBM_TEST_CUDA(test_cuda_gemm_numeric_variants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
