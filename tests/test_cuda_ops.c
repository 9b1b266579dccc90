/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU-only checks of the CUDA block operations other than the SpGEMM (kernels/cuda/matrix/cuda_matrix.cu,
 * cuda_bdiag.cu, cuda_spmv.cu): each against the CPU backend on the same inputs, for every block
 * shape of SBM_BLOCK_SHAPES plus generic ones, with empty and degenerate shapes; integer results
 * (patterns, conversions, transposes) bitwise, floating-point ones to rounding; determinism of
 * the SpMV; the row-view cache of the SpMV across many matrices. Registered for the CUDA backend
 * only; skips visibly without a GPU. */
#include "test_util.h"
#include "sbm_blocks.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef sbm_test_shape shape;

static const shape shapes[] = SBM_TEST_SHAPES({2, 5}, {11, 4}, {16, 16}, {1, 7}, {32, 3});
static const int nshapes = (int)(sizeof shapes / sizeof shapes[0]);

static void assert_same_csr(const sbm_csr *X, const sbm_csr *Y)
{
    sbm_csr *hx = sbm_test_csr_to_host(X), *hy = sbm_test_csr_to_host(Y);
    sbm_csr_info x = sbm_csr_get_info(hx), y = sbm_csr_get_info(hy);
    assert_int_equal(x.m, y.m);
    assert_int_equal(x.n, y.n);
    assert_int_equal(x.nnz, y.nnz);
    assert_memory_equal(x.rowptr, y.rowptr, (size_t)(x.m + 1) * sizeof(int64_t));
    if (x.nnz > 0) {
        assert_memory_equal(x.colind, y.colind, (size_t)x.nnz * sizeof(int32_t));
        assert_memory_equal(x.values, y.values, (size_t)x.nnz * sizeof(double));
    }
    sbm_csr_destroy(hx);
    sbm_csr_destroy(hy);
}

/* Download n doubles of device memory through a wrapped 1-column matrix's copy. */
static double *download(sbm_ctx *ctx, const double *d, int64_t n)
{
    /* a CSR row whose values are the array: copy it to the host and read the values */
    int64_t *rp = malloc(2 * sizeof *rp);
    int32_t *ci = malloc((size_t)(n + 1) * sizeof *ci);
    assert_true(rp && ci);
    rp[0] = 0;
    rp[1] = n;
    for (int64_t t = 0; t < n; t++) ci[t] = (int32_t)t;
    sbm_csr *P = NULL;
    SBM_ASSERT_OK(ctx, sbm_csr_create(ctx, &P, 1, n, rp, ci, NULL));
    sbm_csr_info p = sbm_csr_get_info(P);
    sbm_csr *W = NULL;
    SBM_ASSERT_OK(ctx, sbm_csr_wrap(ctx, &W, 1, n, (int64_t *)p.rowptr, (int32_t *)p.colind, (double *)d));
    sbm_csr *H = sbm_test_csr_to_host(W);
    sbm_csr_info h = sbm_csr_get_info(H);
    double *out = malloc((size_t)(n + 1) * sizeof *out);
    assert_non_null(out);
    if (n > 0) memcpy(out, h.values, (size_t)n * sizeof *out);
    sbm_csr_destroy(H);
    sbm_csr_destroy(W);
    sbm_csr_destroy(P);
    free(ci);
    free(rp);
    return out;
}

/* Device copy of a host vector (the values of a 1-row CSR matrix); *owner keeps it alive. */
static double *upload(sbm_ctx *ctx, const double *h, int64_t n, sbm_csr **owner)
{
    int64_t *rp = malloc(2 * sizeof *rp);
    int32_t *ci = malloc((size_t)(n + 1) * sizeof *ci);
    assert_true(rp && ci);
    rp[0] = 0;
    rp[1] = n;
    for (int64_t t = 0; t < n; t++) ci[t] = (int32_t)t;
    SBM_ASSERT_OK(ctx, sbm_csr_create(ctx, owner, 1, n, rp, ci, h));
    free(ci);
    free(rp);
    return sbm_csr_get_info(*owner).values;
}

/* ---------------------------------------------------------------------------------------- */
/* Conversions, transposes, add                                                             */
/* ---------------------------------------------------------------------------------------- */

static void test_cuda_conversions(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const int64_t dims[][2] = {{13, 9}, {0, 4}, {5, 0}, {1, 1}, {40, 70}};
    for (int s = 0; s < nshapes; s++) {
        for (int d = 0; d < 5; d++) {
            const int r = shapes[s].r, c = shapes[s].c;
            const uint64_t seed = 1000 + 10 * s + d;
            const double dens = d == 3 ? 1.0 : 0.3;
            sbm_cbc *A = sbm_test_random_cbc(e->ctx, seed, dims[d][0], dims[d][1], r, c, dens);
            sbm_cbc *H = sbm_test_random_cbc(e->host, seed, dims[d][0], dims[d][1], r, c, dens);
            sbm_cbc *AT = NULL, *HT = NULL;
            SBM_ASSERT_OK(e->ctx, sbm_cbc_transpose(e->ctx, A, &AT));
            SBM_ASSERT_OK(e->host, sbm_cbc_transpose(e->host, H, &HT));
            sbm_test_assert_same_cbc(AT, HT, -1.0);
            sbm_csr *S = NULL, *HS = NULL;
            SBM_ASSERT_OK(e->ctx, sbm_cbc_to_csr(e->ctx, A, &S));
            SBM_ASSERT_OK(e->host, sbm_cbc_to_csr(e->host, H, &HS));
            assert_same_csr(S, HS);
            sbm_csr *ST = NULL, *HST = NULL;
            SBM_ASSERT_OK(e->ctx, sbm_csr_transpose(e->ctx, S, &ST));
            SBM_ASSERT_OK(e->host, sbm_csr_transpose(e->host, HS, &HST));
            assert_same_csr(ST, HST);
            /* back to blocks, also with another block shape (reblocking) */
            sbm_cbc *B = NULL, *HB = NULL;
            SBM_ASSERT_OK(e->ctx, sbm_csr_to_cbc(e->ctx, S, r, c, &B));
            SBM_ASSERT_OK(e->host, sbm_csr_to_cbc(e->host, HS, r, c, &HB));
            sbm_test_assert_same_cbc(B, HB, -1.0);
            sbm_test_assert_same_cbc(B, A, -1.0);
            sbm_cbc_destroy(HB);
            sbm_cbc_destroy(B);
            if (r % 2 == 0 || c == 1) {
                const int r2 = r % 2 == 0 ? r / 2 : r, c2 = c;
                SBM_ASSERT_OK(e->ctx, sbm_csr_to_cbc(e->ctx, S, r2, c2, &B));
                SBM_ASSERT_OK(e->host, sbm_csr_to_cbc(e->host, HS, r2, c2, &HB));
                sbm_test_assert_same_cbc(B, HB, -1.0);
                sbm_cbc_destroy(HB);
                sbm_cbc_destroy(B);
            }
            /* BSR in both layouts */
            sbm_cbc_info a = sbm_cbc_get_info(A);
            for (int lay = 0; lay < 2; lay++) {
                const sbm_layout layout = lay ? SBM_LAYOUT_COL_MAJOR : SBM_LAYOUT_ROW_MAJOR;
                int64_t *hrp = malloc((size_t)(a.nbr + 1) * sizeof *hrp);
                int32_t *hci = malloc((size_t)(a.nnzb + 1) * sizeof *hci);
                double *hv = malloc((size_t)(a.nnzb * r * c + 1) * sizeof *hv);
                assert_true(hrp && hci && hv);
                SBM_ASSERT_OK(e->host, sbm_cbc_to_bsr(e->host, H, layout, hrp, hci, hv));
                /* device arrays: the BSR arrays are written into a scratch matrix's arrays of
                 * the right sizes (a transpose has nbr+1 column pointers and nnzb blocks) */
                sbm_cbc *T = NULL;
                SBM_ASSERT_OK(e->ctx, sbm_cbc_transpose(e->ctx, A, &T));
                sbm_cbc_info t = sbm_cbc_get_info(T);
                SBM_ASSERT_OK(e->ctx, sbm_cbc_to_bsr(e->ctx, A, layout, (int64_t *)t.colptr,
                                                     (int32_t *)t.rowind, t.values));
                sbm_cbc *HT2 = sbm_test_cbc_to_host(T);
                sbm_cbc_info h2 = sbm_cbc_get_info(HT2);
                assert_memory_equal(h2.colptr, hrp, (size_t)(a.nbr + 1) * sizeof *hrp);
                if (a.nnzb > 0) {
                    assert_memory_equal(h2.rowind, hci, (size_t)a.nnzb * sizeof *hci);
                    assert_memory_equal(h2.values, hv, (size_t)a.nnzb * r * c * sizeof *hv);
                }
                sbm_cbc_destroy(HT2);
                sbm_cbc_destroy(T);
                free(hv);
                free(hci);
                free(hrp);
            }
            /* add: union pattern, structural zeros kept */
            sbm_cbc *A2 = sbm_test_random_cbc(e->ctx, seed + 5000, dims[d][0], dims[d][1], r, c, 0.25);
            sbm_cbc *H2 = sbm_test_random_cbc(e->host, seed + 5000, dims[d][0], dims[d][1], r, c, 0.25);
            sbm_cbc *Cs = NULL, *HCs = NULL;
            SBM_ASSERT_OK(e->ctx, sbm_cbc_add(e->ctx, 0.5, A, -2.0, A2, &Cs));
            SBM_ASSERT_OK(e->host, sbm_cbc_add(e->host, 0.5, H, -2.0, H2, &HCs));
            sbm_test_assert_same_cbc(Cs, HCs, -1.0);
            sbm_cbc_destroy(HCs);
            sbm_cbc_destroy(Cs);
            sbm_cbc_destroy(H2);
            sbm_cbc_destroy(A2);
            sbm_csr_destroy(HST);
            sbm_csr_destroy(ST);
            sbm_csr_destroy(HS);
            sbm_csr_destroy(S);
            sbm_cbc_destroy(HT);
            sbm_cbc_destroy(AT);
            sbm_cbc_destroy(H);
            sbm_cbc_destroy(A);
        }
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Block-diagonal operations                                                                */
/* ---------------------------------------------------------------------------------------- */

static void test_cuda_bdiag(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (int s = 0; s < nshapes; s++) {
        const int r = shapes[s].r, c = shapes[s].c;
        for (int side = 0; side < 2; side++) {
            const int b = side == 0 ? r : c;
            const uint64_t seed = 2000 + 10 * s + side;
            const int64_t nbr = 17, nbc = 13, nd = side == 0 ? nbr : nbc;
            sbm_cbc *D = sbm_test_random_bdiag_spd(e->ctx, seed, nd, b);
            sbm_cbc *HD = sbm_test_random_bdiag_spd(e->host, seed, nd, b);
            /* inverse, out of place and in place */
            sbm_cbc *Di = NULL, *HDi = NULL;
            SBM_ASSERT_OK(e->ctx, sbm_cbc_copy(e->ctx, D, &Di));
            SBM_ASSERT_OK(e->host, sbm_cbc_copy(e->host, HD, &HDi));
            SBM_ASSERT_OK(e->ctx, sbm_bdiag_inverse(e->ctx, D, Di));
            SBM_ASSERT_OK(e->host, sbm_bdiag_inverse(e->host, HD, HDi));
            sbm_test_assert_same_cbc(Di, HDi, 1e-12 * b);
            SBM_ASSERT_OK(e->ctx, sbm_bdiag_inverse(e->ctx, D, D));
            sbm_test_assert_same_cbc(D, Di, -1.0);
            /* scaling with a D that misses some diagonal blocks (zero) */
            sbm_cbc *A = sbm_test_random_cbc(e->ctx, seed + 7, nbr, nbc, r, c, 0.3);
            sbm_cbc *HA = sbm_test_random_cbc(e->host, seed + 7, nbr, nbc, r, c, 0.3);
            sbm_cbc *B = NULL, *HB = NULL;
            SBM_ASSERT_OK(e->ctx, sbm_cbc_copy(e->ctx, A, &B));
            SBM_ASSERT_OK(e->host, sbm_cbc_copy(e->host, HA, &HB));
            const sbm_side sd = side == 0 ? SBM_SIDE_LEFT : SBM_SIDE_RIGHT;
            SBM_ASSERT_OK(e->ctx, sbm_bdiag_scale(e->ctx, sd, Di, A, B));
            SBM_ASSERT_OK(e->host, sbm_bdiag_scale(e->host, sd, HDi, HA, HB));
            sbm_test_assert_same_cbc(B, HB, 1e-13 * b);
            SBM_ASSERT_OK(e->ctx, sbm_bdiag_scale(e->ctx, sd, Di, A, A)); /* in place */
            sbm_test_assert_same_cbc(A, B, -1.0);
            sbm_cbc *Dz = sbm_test_random_cbc(e->ctx, seed + 9, nd, nd, b, b, 0.0);
            SBM_ASSERT_OK(e->ctx, sbm_bdiag_scale(e->ctx, sd, Dz, B, B));
            double *zero = calloc((size_t)(nbr * r * nbc * c + 1), sizeof *zero);
            sbm_test_assert_cbc_dense(B, zero, 0.0);
            free(zero);
            sbm_cbc_destroy(Dz);
            sbm_cbc_destroy(HB);
            sbm_cbc_destroy(B);
            sbm_cbc_destroy(HA);
            sbm_cbc_destroy(A);
            sbm_cbc_destroy(HDi);
            sbm_cbc_destroy(Di);
            sbm_cbc_destroy(HD);
            sbm_cbc_destroy(D);
        }
    }
}

/* ---------------------------------------------------------------------------------------- */
/* SpMV                                                                                     */
/* ---------------------------------------------------------------------------------------- */

static void test_cuda_spmv(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const double ab[][2] = {{1.0, 0.0}, {-0.5, 1.0}, {2.0, 0.25}, {0.0, 3.0}, {0.0, 0.0}};
    for (int s = 0; s < nshapes; s++) {
        const int r = shapes[s].r, c = shapes[s].c;
        const uint64_t seed = 3000 + s;
        const int64_t nbr = 23, nbc = 19;
        sbm_cbc *A = sbm_test_random_cbc(e->ctx, seed, nbr, nbc, r, c, 0.2);
        sbm_cbc *H = sbm_test_random_cbc(e->host, seed, nbr, nbc, r, c, 0.2);
        for (int op = 0; op < 2; op++) {
            const sbm_op o = op ? SBM_OP_T : SBM_OP_N;
            const int64_t m = op ? nbc * c : nbr * r, n = op ? nbr * r : nbc * c;
            double *x = sbm_test_random_vector(seed + 1, n);
            double *y0 = sbm_test_random_vector(seed + 2, m);
            for (int t = 0; t < 5; t++) {
                sbm_csr *ox = NULL, *oy = NULL;
                double *hy = malloc((size_t)(m + 1) * sizeof *hy);
                assert_non_null(hy);
                memcpy(hy, y0, (size_t)m * sizeof *hy);
                if (ab[t][1] == 0.0) hy[0] = NAN; /* beta == 0 ignores y, NaN included */
                double *dx = upload(e->ctx, x, n, &ox);
                double *dy = upload(e->ctx, hy, m, &oy);
                SBM_ASSERT_OK(e->host, sbm_cbc_spmv(e->host, o, ab[t][0], H, x, ab[t][1], hy));
                SBM_ASSERT_OK(e->ctx, sbm_cbc_spmv(e->ctx, o, ab[t][0], A, dx, ab[t][1], dy));
                double *got = download(e->ctx, dy, m);
                sbm_test_assert_near(got, hy, m, 1e-14 * (r + c) * 8, "y");
                free(got);
                free(hy);
                sbm_csr_destroy(oy);
                sbm_csr_destroy(ox);
            }
            free(y0);
            free(x);
        }
        sbm_cbc_destroy(H);
        sbm_cbc_destroy(A);
    }
}

/* Bitwise equal results across calls, and across more matrices than the row-view cache holds
 * (entries are evicted and rebuilt). */
static void test_cuda_spmv_determinism(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const int nmat = 7;
    sbm_cbc *A[7];
    for (int t = 0; t < nmat; t++) A[t] = sbm_test_random_cbc(e->ctx, 4000 + t, 300, 200, 3, 3, 0.05);
    double *x = sbm_test_random_vector(4100, 600);
    double *y = sbm_test_random_vector(4101, 900);
    sbm_csr *ox = NULL, *oy = NULL;
    double *dx = upload(e->ctx, x, 600, &ox);
    double *dy = upload(e->ctx, y, 900, &oy); /* contents overwritten (beta = 0) */
    double *first[7];
    for (int round = 0; round < 2; round++)
        for (int t = 0; t < nmat; t++) {
            SBM_ASSERT_OK(e->ctx, sbm_cbc_spmv(e->ctx, SBM_OP_N, 1.0, A[t], dx, 0.0, dy));
            double *got = download(e->ctx, dy, 900);
            if (round == 0) {
                first[t] = got;
            } else {
                assert_memory_equal(got, first[t], 900 * sizeof(double));
                free(got);
                free(first[t]);
            }
        }
    sbm_csr_destroy(oy);
    sbm_csr_destroy(ox);
    free(y);
    free(x);
    for (int t = 0; t < nmat; t++) sbm_cbc_destroy(A[t]);
}

/* The context: stream switch (default stream), synchronisation, copies both ways. */
static void test_cuda_context(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_stream(e->ctx, NULL));
    assert_null(sbm_ctx_stream(e->ctx));
    SBM_ASSERT_OK(e->ctx, sbm_ctx_synchronize(e->ctx));
    assert_int_equal(sbm_ctx_backend(e->ctx), SBM_BACKEND_CUDA);
    sbm_cbc *H = sbm_test_random_cbc(e->host, 5000, 30, 20, 6, 3, 0.3);
    sbm_cbc *D = NULL, *D2 = NULL, *H2 = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_cbc_copy(e->ctx, H, &D));
    SBM_ASSERT_OK(e->ctx, sbm_cbc_copy(e->ctx, D, &D2));
    SBM_ASSERT_OK(e->host, sbm_cbc_copy(e->host, D2, &H2));
    sbm_test_assert_same_cbc(H, H2, -1.0);
    SBM_ASSERT_OK(e->ctx, sbm_cbc_check(e->ctx, D2, 1));
    sbm_cbc_destroy(H2);
    sbm_cbc_destroy(D2);
    sbm_cbc_destroy(D);
    sbm_cbc_destroy(H);
}

/* Two contexts on two devices used in turn from one thread: each one's matrices on its own
 * device, whatever device the other made current (every allocation used to follow the current
 * device: a product on device 1 then read device 0's memory, an illegal address). */
static void test_cuda_two_devices(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    if (sbm_cuda_device_count() < 2) {
        print_message("[  SKIP    ] two GPUs needed, %d present\n", sbm_cuda_device_count());
        skip();
    }
    sbm_ctx *d1 = NULL;
    assert_int_equal(sbm_ctx_create(&d1, SBM_BACKEND_CUDA, 1), SBM_SUCCESS);
    sbm_cbc *H = sbm_test_random_cbc(e->host, 5001, 40, 40, 3, 3, 0.2);
    sbm_cbc *A0 = NULL, *A1 = NULL, *C0 = NULL, *C1 = NULL, *C = NULL;
    /* device 0 current (its copy), then device 1's copy; then device 0's product (device 0
     * current again), then device 1's, whose allocations follow */
    SBM_ASSERT_OK(e->ctx, sbm_cbc_copy(e->ctx, H, &A0));
    SBM_ASSERT_OK(d1, sbm_cbc_copy(d1, H, &A1));
    SBM_ASSERT_OK(e->ctx, sbm_cbc_gemm(e->ctx, 1.0, SBM_OP_N, A0, SBM_OP_T, A0, NULL, 0, &C0));
    SBM_ASSERT_OK(d1, sbm_cbc_gemm(d1, 1.0, SBM_OP_N, A1, SBM_OP_T, A1, NULL, 0, &C1));
    SBM_ASSERT_OK(e->host, sbm_cbc_gemm(e->host, 1.0, SBM_OP_N, H, SBM_OP_T, H, NULL, 0, &C));
    SBM_ASSERT_OK(d1, sbm_ctx_synchronize(d1));
    sbm_test_assert_same_cbc(C0, C1, -1.0);
    sbm_test_assert_same_cbc(C, C1, 1e-13);
    sbm_cbc_destroy(C), sbm_cbc_destroy(C1), sbm_cbc_destroy(C0);
    sbm_cbc_destroy(A1), sbm_cbc_destroy(A0), sbm_cbc_destroy(H);
    sbm_ctx_destroy(d1);
}


int main(void)
{
    sbm_test_require_gpu("test_cuda_ops");
    const struct CMUnitTest tests[] = {
        SBM_TEST_CUDA(test_cuda_conversions), SBM_TEST_CUDA(test_cuda_bdiag),
        SBM_TEST_CUDA(test_cuda_spmv),        SBM_TEST_CUDA(test_cuda_spmv_determinism),
        SBM_TEST_CUDA(test_cuda_context),     SBM_TEST_CUDA(test_cuda_two_devices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
