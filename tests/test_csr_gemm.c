/* SPDX-License-Identifier: BSD-3-Clause */
/* Scalar CSR SpGEMM C = A*B (plan / execute): seeded random operands of several row-length
 * distributions (one very long row, rows in every product bin of the GPU kernels) against dense
 * references and an exact symbolic pattern; plan reuse; pattern mismatches; every error path;
 * A*A on the square Matrix Market files. On the GPU also: both paths (the tuning's csr_gemm AUTO
 * and GLOBAL) bitwise equal, row slices under a tiny memory budget equal to one pass, a row too
 * large for the budget, determinism of independent plans. */
#include "csr_test_common.h"

#include <stdio.h>

/* X and Y (any backends) have the same shape and pattern and bitwise equal values. */
static void assert_same_csr(const sbm_csr *X, const sbm_csr *Y, const char *what)
{
    sbm_csr *Xh = sbm_test_csr_to_host(X), *Yh = sbm_test_csr_to_host(Y);
    sbm_csr_info xi = sbm_csr_get_info(Xh), yi = sbm_csr_get_info(Yh);
    assert_int_equal(xi.m, yi.m);
    assert_int_equal(xi.n, yi.n);
    assert_int_equal(xi.nnz, yi.nnz);
    assert_memory_equal(xi.rowptr, yi.rowptr, (size_t)(xi.m + 1) * sizeof(int64_t));
    if (xi.nnz > 0) assert_memory_equal(xi.colind, yi.colind, (size_t)xi.nnz * sizeof(int32_t));
    assert_same_bits(xi.values, yi.values, xi.nnz, what);
    sbm_csr_destroy(Xh);
    sbm_csr_destroy(Yh);
}

/* Rows of growing length: row i holds about 1.25^i distinct random columns (at most n), so
 * that with B rows of about ten entries the products per row pass through every bin of the
 * GPU kernels, 1..16 up to more than 4096 (the global path). */
static hcsr hcsr_ladder(uint64_t seed, int64_t m, int64_t n)
{
    sbm_test_rng g = sbm_test_rng_seed(seed);
    hcsr h = {m, n, calloc((size_t)m + 1, sizeof(int64_t)), NULL, NULL};
    int64_t cap = 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t len = (int64_t)pow(1.25, (double)i);
        cap += len < n ? len : n;
    }
    h.colind = malloc((size_t)cap * sizeof *h.colind + 1);
    h.values = malloc((size_t)cap * sizeof *h.values + 1);
    unsigned char *used = calloc((size_t)n + 1, 1);
    assert_true(h.rowptr && h.colind && h.values && used);
    for (int64_t i = 0; i < m; i++) {
        int64_t len = (int64_t)pow(1.25, (double)i), t = 0;
        if (len > n) len = n;
        memset(used, 0, (size_t)n);
        for (int64_t c = 0; c < len;) {
            int64_t j = sbm_test_rng_below(&g, n);
            if (!used[j]) {
                used[j] = 1;
                c++;
            }
        }
        for (int64_t j = 0; j < n; j++)
            if (used[j]) {
                h.colind[h.rowptr[i] + t] = (int32_t)j;
                h.values[h.rowptr[i] + t] = sbm_test_rng_value(&g);
                t++;
            }
        h.rowptr[i + 1] = h.rowptr[i] + len;
    }
    free(used);
    return h;
}

/* Every long_every-th row with density dlong, the others dshort. */
static hcsr hcsr_mixed(uint64_t seed, int64_t m, int64_t n, int long_every, double dlong,
                       double dshort)
{
    sbm_test_rng g = sbm_test_rng_seed(seed);
    hcsr h = {m, n, calloc((size_t)m + 1, sizeof(int64_t)), malloc((size_t)(m * n) * 4 + 4),
              malloc((size_t)(m * n) * 8 + 8)};
    assert_true(h.rowptr && h.colind && h.values);
    for (int64_t i = 0; i < m; i++) {
        const double d = i % long_every == 0 ? dlong : dshort;
        int64_t t = h.rowptr[i];
        for (int64_t j = 0; j < n; j++)
            if (sbm_test_rng_uniform(&g) < d) {
                h.colind[t] = (int32_t)j;
                h.values[t++] = sbm_test_rng_value(&g);
            }
        h.rowptr[i + 1] = t;
    }
    return h;
}

/* Skip on a backend without CSR SpGEMM (the only status that skips), before anything is
 * allocated that a skip would leak. */
static void require_gemm(sbm_test_env *e)
{
    int64_t zero = 0;
    sbm_csr *Z = NULL, *C = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_csr_create(e->ctx, &Z, 0, 0, &zero, NULL, NULL));
    sbm_status st = sbm_csr_gemm(e->ctx, Z, Z, &C);
    sbm_csr_destroy(C);
    sbm_csr_destroy(Z);
    SBM_TEST_SKIP_IF_UNSUPPORTED(e, st);
    SBM_ASSERT_OK(e->ctx, st);
}

/* C (on any backend) is valid, has exactly the symbolic pattern of A*B (structural zeros kept,
 * sorted, no duplicates) and the values of the dense product. */
static void check_product(const sbm_csr *C, const hcsr *a, const hcsr *b)
{
    const int64_t m = a->m, k = a->n, n = b->n;
    sbm_csr *Ch = sbm_test_csr_to_host(C);
    sbm_csr_info ci = sbm_csr_get_info(Ch);
    assert_int_equal(ci.m, m);
    assert_int_equal(ci.n, n);

    /* symbolic reference: row i of C holds column j iff some A(i,p) meets a B(p,j) */
    unsigned char *flag = calloc((size_t)(m * n) + 1, 1);
    assert_non_null(flag);
    for (int64_t i = 0; i < m; i++)
        for (int64_t p = a->rowptr[i]; p < a->rowptr[i + 1]; p++) {
            int32_t kk = a->colind[p];
            for (int64_t q = b->rowptr[kk]; q < b->rowptr[kk + 1]; q++)
                flag[i * n + b->colind[q]] = 1;
        }
    int64_t t = 0;
    for (int64_t i = 0; i < m; i++) {
        assert_int_equal(ci.rowptr[i], t);
        for (int64_t j = 0; j < n; j++)
            if (flag[i * n + j]) {
                if (t >= ci.nnz || ci.colind[t] != j)
                    fail_msg("row %lld of C: expected column %lld at position %lld", (long long)i,
                             (long long)j, (long long)t);
                t++;
            }
    }
    assert_int_equal(ci.rowptr[m], t);
    assert_int_equal(ci.nnz, t);
    free(flag);
    sbm_csr_destroy(Ch);

    double *ad = hcsr_dense(a), *bd = hcsr_dense(b);
    double *want = sbm_test_dense_gemm(0, ad, m, k, 0, bd, k, n);
    sbm_test_assert_csr_dense(C, want, 1e-15 * (double)(k + 4));
    free(want);
    free(ad);
    free(bd);
}

typedef struct gemm_case {
    int64_t m, k, n;
    csr_kind ka;
    double da;
    csr_kind kb;
    double db;
} gemm_case;

static const gemm_case cases[] = {
    {1, 1, 1, CSR_UNIFORM, 1.0, CSR_UNIFORM, 1.0},
    {30, 40, 25, CSR_UNIFORM, 0.1, CSR_UNIFORM, 0.15},
    {200, 200, 200, CSR_POWER, 0, CSR_POWER, 0},
    {60, 50, 70, CSR_EMPTY_ROWS, 0.1, CSR_EMPTY_ROWS, 0.1},
    {50, 50, 50, CSR_DENSE_ROW, 0.05, CSR_DENSE_ROW, 0.05},
    {7, 90, 3, CSR_UNIFORM, 0.3, CSR_UNIFORM, 0.3},
    {90, 7, 120, CSR_UNIFORM, 0.2, CSR_UNIFORM, 0.1},
    {300, 300, 300, CSR_UNIFORM, 0.05, CSR_UNIFORM, 0.05}, /* long rows, narrow span: scan */
    {100, 50, 5000, CSR_UNIFORM, 0.04, CSR_UNIFORM, 0.004}, /* long rows, wide span: qsort */
    {120, 80, 60, CSR_POWER, 0, CSR_UNIFORM, 0.1},
    {40, 40, 40, CSR_UNIFORM, 0.0, CSR_UNIFORM, 0.2},      /* A has no entries */
    {0, 5, 7, CSR_UNIFORM, 0.5, CSR_UNIFORM, 0.5},         /* 0 x N */
    {5, 0, 7, CSR_UNIFORM, 0.5, CSR_UNIFORM, 0.5},         /* inner dimension 0 */
    {5, 7, 0, CSR_UNIFORM, 0.5, CSR_UNIFORM, 0.5},         /* N x 0 */
    {0, 0, 0, CSR_UNIFORM, 0.5, CSR_UNIFORM, 0.5},
    /* one very long row: a full row of A times B's 600 rows of about 24 entries (14400
     * products, the global path on the GPU) */
    {30, 600, 80, CSR_DENSE_ROW, 0.02, CSR_UNIFORM, 0.3},
    {400, 400, 400, CSR_POWER, 0, CSR_UNIFORM, 0.03},
};
static const int ncases = (int)(sizeof cases / sizeof cases[0]);

/* The operands of case c (c == ncases: the ladder of growing rows). */
static void case_operands(int c, hcsr *a, hcsr *b)
{
    if (c == ncases) {
        *a = hcsr_ladder(300, 48, 3000);
        *b = hcsr_random(301, 3000, 500, CSR_UNIFORM, 0.02);
        return;
    }
    const gemm_case *g = &cases[c];
    *a = hcsr_random(100 + c, g->m, g->k, g->ka, g->da);
    *b = hcsr_random(200 + c, g->k, g->n, g->kb, g->db);
}

static void test_csr_gemm_random(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_gemm(e);
    for (int c = 0; c <= ncases; c++) {
        hcsr a, b;
        case_operands(c, &a, &b);
        sbm_csr *A = hcsr_upload(e->ctx, &a), *B = hcsr_upload(e->ctx, &b);

        /* one-shot */
        sbm_csr *C = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_csr_gemm(e->ctx, A, B, &C));
        check_product(C, &a, &b);

        /* plan + execute: same result */
        sbm_csr_plan *plan = NULL;
        sbm_csr *C2 = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_csr_gemm_plan(e->ctx, A, B, &plan, &C2));
        assert_non_null(plan);
        assert_non_null(C2);
        SBM_ASSERT_OK(e->ctx, sbm_csr_gemm_execute(e->ctx, plan, A, B, C2));
        check_product(C2, &a, &b);
        /* the GPU one-shot computes the values without a plan where every row is short (the
         * cases of short rows), or plans (the rest): bitwise the planned product either way */
        assert_same_csr(C, C2, "C of the one-shot against plan + execute");

        sbm_csr_gemm_plan_destroy(plan);
        sbm_csr_destroy(C2);
        sbm_csr_destroy(C);
        sbm_csr_destroy(A);
        sbm_csr_destroy(B);
        hcsr_free(&a);
        hcsr_free(&b);
    }
}

/* C = A*B through plan + execute in the context's current csr_gemm path; the plan's statistics
 * (GPU: slices of the global path) into *info when given. */
static sbm_csr *plan_execute(sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B,
                             sbm_gemm_plan_info *info)
{
    sbm_csr_plan *plan = NULL;
    sbm_csr *C = NULL;
    SBM_ASSERT_OK(ctx, sbm_csr_gemm_plan(ctx, A, B, &plan, &C));
    SBM_ASSERT_OK(ctx, sbm_csr_gemm_execute(ctx, plan, A, B, C));
    if (info) *info = ((const sbm__plan_header *)plan)->info; /* white-box */
    sbm_csr_gemm_plan_destroy(plan);
    return C;
}

/* The GPU path through the context's tuning: auto (bins) or global (every row through ESC). */
static void set_path(sbm_ctx *ctx, sbm_tune_csr_gemm path)
{
    sbm_tuning t = sbm_tuning_default();
    t.csr_gemm = path;
    SBM_ASSERT_OK(ctx, sbm_ctx_set_tuning(ctx, &t));
}

/* Both GPU paths on every case: the shared-memory bins with the global path for long rows
 * (auto), and every row through the global ESC path (global). Each is checked against the
 * dense reference, and the two are bitwise equal: both sum every entry's products one at a
 * time in expansion order. */
static void test_csr_gemm_paths(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_gemm(e);
    for (int c = 0; c <= ncases; c++) {
        hcsr a, b;
        case_operands(c, &a, &b);
        sbm_csr *A = hcsr_upload(e->ctx, &a), *B = hcsr_upload(e->ctx, &b);
        set_path(e->ctx, SBM_TUNE_CSR_GEMM_AUTO);
        sbm_csr *C1 = plan_execute(e->ctx, A, B, NULL);
        set_path(e->ctx, SBM_TUNE_CSR_GEMM_GLOBAL);
        sbm_csr *C2 = plan_execute(e->ctx, A, B, NULL);
        sbm_csr *C3 = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_csr_gemm(e->ctx, A, B, &C3));
        check_product(C1, &a, &b);
        check_product(C2, &a, &b);
        assert_same_csr(C1, C2, "C of the global path");
        assert_same_csr(C1, C3, "C of the one-shot global path");
        sbm_csr_destroy(C3);
        sbm_csr_destroy(C2);
        sbm_csr_destroy(C1);
        sbm_csr_destroy(A);
        sbm_csr_destroy(B);
        hcsr_free(&a);
        hcsr_free(&b);
    }
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, NULL));
}

/* A tiny memory budget cuts the global path into row slices (at least 3); the result is
 * bitwise the one-pass result. A budget below what one row needs is SBM_ERR_OUT_OF_MEMORY
 * naming the row and the sizes. In both modes (auto: only the long rows are global). */
static void test_csr_gemm_slices(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_gemm(e);
    /* every 4th row about 1000 entries times B rows of about 8: 8000 products, global */
    hcsr a = hcsr_mixed(61, 40, 2000, 4, 0.5, 0.01);
    hcsr b = hcsr_random(62, 2000, 400, CSR_UNIFORM, 0.02);
    sbm_csr *A = hcsr_upload(e->ctx, &a), *B = hcsr_upload(e->ctx, &b);
    static const char *modes[] = {"auto", "global"};
    static const sbm_tune_csr_gemm paths[] = {SBM_TUNE_CSR_GEMM_AUTO, SBM_TUNE_CSR_GEMM_GLOBAL};
    for (int mode = 0; mode < 2; mode++) {
        set_path(e->ctx, paths[mode]);
        sbm_gemm_plan_info i1, i2 = {0};
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, 0));
        sbm_csr *C1 = plan_execute(e->ctx, A, B, &i1);
        check_product(C1, &a, &b);
        assert_int_equal(i1.slices, 1);
        sbm_csr *C2 = NULL;
        for (size_t budget = (size_t)1 << 24; budget >= 1024 && !C2; budget /= 2) {
            sbm_csr_plan *plan = NULL;
            sbm_csr *C = NULL;
            SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, budget));
            sbm_status st = sbm_csr_gemm_plan(e->ctx, A, B, &plan, &C);
            if (st == SBM_ERR_OUT_OF_MEMORY) break; /* below one row: checked below */
            SBM_ASSERT_OK(e->ctx, st);
            i2 = ((const sbm__plan_header *)plan)->info;
            SBM_ASSERT_OK(e->ctx, sbm_csr_gemm_execute(e->ctx, plan, A, B, C));
            sbm_csr_gemm_plan_destroy(plan);
            if (i2.slices >= 3) {
                print_message("[  INFO    ] %s: %lld slices at a budget of %zu bytes\n",
                              modes[mode], (long long)i2.slices, budget);
                C2 = C;
            } else {
                sbm_csr_destroy(C);
            }
        }
        assert_non_null(C2);
        assert_int_equal(i1.products, i2.products);
        assert_int_equal(i1.nnzb_c, i2.nnzb_c);
        assert_same_csr(C1, C2, "C from row slices");

        /* one byte: not even one row fits; the outputs stay NULL */
        sbm_csr_plan *plan = (sbm_csr_plan *)(uintptr_t)1;
        sbm_csr *C3 = (sbm_csr *)(uintptr_t)1;
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, 1));
        SBM_ASSERT_FAILS(e->ctx, sbm_csr_gemm_plan(e->ctx, A, B, &plan, &C3),
                         SBM_ERR_OUT_OF_MEMORY, "products, whose expansion and sort need");
        assert_null(plan);
        assert_null(C3);
        SBM_ASSERT_FAILS(e->ctx, sbm_csr_gemm(e->ctx, A, B, &C3), SBM_ERR_OUT_OF_MEMORY,
                         "the memory budget is 1 bytes");
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, 0));
        sbm_csr_destroy(C2);
        sbm_csr_destroy(C1);
    }
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, NULL));
    sbm_csr_destroy(A);
    sbm_csr_destroy(B);
    hcsr_free(&a);
    hcsr_free(&b);
}

/* Two independent plans and executes of the same product give bitwise the same C (pattern and
 * values), for power-law rows of every length and the ladder. */
static void test_csr_gemm_determinism(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_gemm(e);
    hcsr a[2], b[2];
    a[0] = hcsr_random(71, 700, 700, CSR_POWER, 0);
    b[0] = hcsr_random(72, 700, 600, CSR_POWER, 0);
    case_operands(ncases, &a[1], &b[1]);
    for (int t = 0; t < 2; t++) {
        sbm_csr *A = hcsr_upload(e->ctx, &a[t]), *B = hcsr_upload(e->ctx, &b[t]);
        sbm_csr *C1 = plan_execute(e->ctx, A, B, NULL);
        sbm_csr *C2 = plan_execute(e->ctx, A, B, NULL);
        check_product(C1, &a[t], &b[t]);
        assert_same_csr(C1, C2, "C of a second plan");
        sbm_csr_destroy(C2);
        sbm_csr_destroy(C1);
        sbm_csr_destroy(A);
        sbm_csr_destroy(B);
        hcsr_free(&a[t]);
        hcsr_free(&b[t]);
    }
}

/* A*A with the same handle twice. */
static void test_csr_gemm_same_operand(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_gemm(e);
    hcsr a = hcsr_random(7, 150, 150, CSR_POWER, 0);
    sbm_csr *A = hcsr_upload(e->ctx, &a), *C = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_csr_gemm(e->ctx, A, A, &C));
    check_product(C, &a, &a);
    sbm_csr_destroy(C);
    sbm_csr_destroy(A);
    hcsr_free(&a);
}

/* Cancellation and zero values keep their entries: no numeric dropping. */
static void test_csr_gemm_structural_zeros(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_gemm(e);
    /* [1 1] * [1; -1] = [0], stored */
    int64_t ap[2] = {0, 2}, bp[3] = {0, 1, 2};
    int32_t aj[2] = {0, 1}, bj[2] = {0, 0};
    double av[2] = {1, 1}, bv[2] = {1, -1};
    hcsr a = {1, 2, ap, aj, av}, b = {2, 1, bp, bj, bv};
    sbm_csr *A = hcsr_upload(e->ctx, &a), *B = hcsr_upload(e->ctx, &b), *C = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_csr_gemm(e->ctx, A, B, &C));
    assert_int_equal(sbm_csr_get_info(C).nnz, 1);
    check_product(C, &a, &b);
    sbm_csr_destroy(C);
    sbm_csr_destroy(A);
    sbm_csr_destroy(B);

    /* all-zero values: full symbolic pattern, zero values */
    hcsr z = hcsr_random(11, 20, 20, CSR_UNIFORM, 0.2);
    memset(z.values, 0, (size_t)z.rowptr[z.m] * sizeof(double));
    sbm_csr *Z = hcsr_upload(e->ctx, &z);
    SBM_ASSERT_OK(e->ctx, sbm_csr_gemm(e->ctx, Z, Z, &C));
    assert_true(sbm_csr_get_info(C).nnz > 0);
    check_product(C, &z, &z);
    sbm_csr_destroy(C);
    sbm_csr_destroy(Z);
    hcsr_free(&z);
}

/* New values with the same patterns: in place (same pattern ids), in new matrices (equal
 * fingerprints), in copies. Repeated executes are bitwise identical. */
static void test_csr_gemm_plan_reuse(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_gemm(e);
    hcsr a = hcsr_random(21, 80, 60, CSR_POWER, 0);
    hcsr b = hcsr_random(22, 60, 70, CSR_UNIFORM, 0.08);
    sbm_csr *A = hcsr_upload(e->ctx, &a), *B = hcsr_upload(e->ctx, &b), *C = NULL;
    sbm_csr_plan *plan = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_csr_gemm_plan(e->ctx, A, B, &plan, &C));

    /* the plan's C has the pattern and zero values */
    sbm_csr_info ci = sbm_csr_get_info(C);
    double *vals = sbm_test_vec_download(e->ctx, ci.values, ci.nnz);
    for (int64_t p = 0; p < ci.nnz; p++) assert_true(vals[p] == 0.0);
    free(vals);

    SBM_ASSERT_OK(e->ctx, sbm_csr_gemm_execute(e->ctx, plan, A, B, C));
    check_product(C, &a, &b);
    double *first = sbm_test_vec_download(e->ctx, ci.values, ci.nnz);
    SBM_ASSERT_OK(e->ctx, sbm_csr_gemm_execute(e->ctx, plan, A, B, C));
    double *second = sbm_test_vec_download(e->ctx, ci.values, ci.nnz);
    assert_same_bits(first, second, ci.nnz, "C after a repeated execute");
    free(first);
    free(second);

    /* new values in place, through the info views */
    for (int round = 0; round < 3; round++) {
        sbm_test_rng g = sbm_test_rng_seed(500 + round);
        for (int64_t p = 0; p < a.rowptr[a.m]; p++) a.values[p] = 3.0 * sbm_test_rng_value(&g);
        for (int64_t p = 0; p < b.rowptr[b.m]; p++) b.values[p] = sbm_test_rng_value(&g) - 2.0;
        SBM_ASSERT_OK(e->ctx, e->ctx->ops->copy(e->ctx, sbm_csr_get_info(A).values, a.values,
                                                (size_t)a.rowptr[a.m] * sizeof(double), 0));
        SBM_ASSERT_OK(e->ctx, e->ctx->ops->copy(e->ctx, sbm_csr_get_info(B).values, b.values,
                                                (size_t)b.rowptr[b.m] * sizeof(double), 0));
        SBM_ASSERT_OK(e->ctx, sbm_csr_gemm_execute(e->ctx, plan, A, B, C));
        check_product(C, &a, &b);
    }

    /* new matrices with equal patterns (new pattern ids) and new values */
    for (int64_t p = 0; p < a.rowptr[a.m]; p++) a.values[p] = -a.values[p] + 0.5;
    sbm_csr *A2 = hcsr_upload(e->ctx, &a), *B2 = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_csr_copy(e->ctx, B, &B2));
    SBM_ASSERT_OK(e->ctx, sbm_csr_gemm_execute(e->ctx, plan, A2, B2, C));
    check_product(C, &a, &b);

    sbm_csr_destroy(A2);
    sbm_csr_destroy(B2);
    sbm_csr_gemm_plan_destroy(plan);
    sbm_csr_destroy(C);
    sbm_csr_destroy(A);
    sbm_csr_destroy(B);
    hcsr_free(&a);
    hcsr_free(&b);
}

/* Operands whose patterns differ from the plan's are refused, and nothing changes. */
static void test_csr_gemm_plan_mismatch(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_gemm(e);
    hcsr a = hcsr_random(31, 40, 30, CSR_UNIFORM, 0.1);
    hcsr b = hcsr_random(32, 30, 35, CSR_UNIFORM, 0.1);
    hcsr a3 = hcsr_random(33, 40, 30, CSR_UNIFORM, 0.1); /* same shape, other pattern */
    hcsr b3 = hcsr_random(34, 30, 35, CSR_UNIFORM, 0.1);
    hcsr a4 = hcsr_random(35, 41, 30, CSR_UNIFORM, 0.1); /* one more row */
    hcsr b4 = hcsr_random(36, 31, 35, CSR_UNIFORM, 0.1); /* one more inner row */
    sbm_csr *A = hcsr_upload(e->ctx, &a), *B = hcsr_upload(e->ctx, &b);
    sbm_csr *A3 = hcsr_upload(e->ctx, &a3), *B3 = hcsr_upload(e->ctx, &b3);
    sbm_csr *A4 = hcsr_upload(e->ctx, &a4), *B4 = hcsr_upload(e->ctx, &b4);
    sbm_csr *C = NULL, *Cother = NULL;
    sbm_csr_plan *plan = NULL, *plan2 = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_csr_gemm_plan(e->ctx, A, B, &plan, &C));
    SBM_ASSERT_OK(e->ctx, sbm_csr_gemm_execute(e->ctx, plan, A, B, C));
    SBM_ASSERT_OK(e->ctx, sbm_csr_gemm_plan(e->ctx, A, B, &plan2, &Cother)); /* same pattern */
    double *c_before = sbm_test_csr_dense(C);

    SBM_ASSERT_FAILS(e->ctx, sbm_csr_gemm_execute(e->ctx, plan, A3, B, C), SBM_ERR_PLAN_MISMATCH,
                     "sbm_csr_gemm_execute: argument A: its sparsity pattern (40x30");
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_gemm_execute(e->ctx, plan, A, B3, C), SBM_ERR_PLAN_MISMATCH,
                     "argument B: its sparsity pattern (30x35");
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_gemm_execute(e->ctx, plan, A4, B, C), SBM_ERR_PLAN_MISMATCH,
                     "argument A: its sparsity pattern (41x30");
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_gemm_execute(e->ctx, plan, A, B4, C),
                     SBM_ERR_DIMENSION_MISMATCH, "A is 40x30, B is 31x35");
    /* an output with the right pattern that the plan did not create */
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_gemm_execute(e->ctx, plan, A, B, Cother),
                     SBM_ERR_PLAN_MISMATCH, "argument C (40x35");
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_gemm_execute(e->ctx, plan, A, B, Cother),
                     SBM_ERR_PLAN_MISMATCH, "is not the matrix the plan created");
    assert_csr_unchanged(C, c_before, "C");
    free(c_before);

    /* the other plan still drives its own C */
    SBM_ASSERT_OK(e->ctx, sbm_csr_gemm_execute(e->ctx, plan2, A, B, Cother));
    check_product(Cother, &a, &b);

    sbm_csr_gemm_plan_destroy(plan);
    sbm_csr_gemm_plan_destroy(plan2);
    sbm_csr *all[] = {A, B, A3, B3, A4, B4, C, Cother};
    for (size_t t = 0; t < sizeof all / sizeof all[0]; t++) sbm_csr_destroy(all[t]);
    hcsr *hs[] = {&a, &b, &a3, &b3, &a4, &b4};
    for (size_t t = 0; t < sizeof hs / sizeof hs[0]; t++) hcsr_free(hs[t]);
}

/* Every error path: status, message, outputs NULL, inputs unchanged. */
static void test_csr_gemm_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    hcsr a = hcsr_random(41, 3, 4, CSR_UNIFORM, 0.5);
    hcsr b = hcsr_random(42, 5, 6, CSR_UNIFORM, 0.5);
    hcsr s = hcsr_random(43, 4, 4, CSR_UNIFORM, 0.5);
    sbm_csr *A = hcsr_upload(ctx, &a), *B = hcsr_upload(ctx, &b), *S = hcsr_upload(ctx, &s);
    double *a_before = sbm_test_csr_dense(A), *b_before = sbm_test_csr_dense(B);
    sbm_csr *C = (sbm_csr *)(uintptr_t)1;
    sbm_csr_plan *plan = (sbm_csr_plan *)(uintptr_t)1;

    /* NULL context */
    assert_int_equal(sbm_csr_gemm_plan(NULL, S, S, &plan, &C), SBM_ERR_NULL_ARGUMENT);
    assert_non_null(strstr(sbm_ctx_last_error(NULL), "sbm_csr_gemm_plan: argument ctx is NULL"));
    assert_int_equal(sbm_csr_gemm_execute(NULL, NULL, S, S, S), SBM_ERR_NULL_ARGUMENT);
    assert_non_null(strstr(sbm_ctx_last_error(NULL), "sbm_csr_gemm_execute: argument ctx"));
    assert_int_equal(sbm_csr_gemm(NULL, S, S, &C), SBM_ERR_NULL_ARGUMENT);
    assert_non_null(strstr(sbm_ctx_last_error(NULL), "sbm_csr_gemm: argument ctx"));
    sbm_csr_gemm_plan_destroy(NULL);

    /* NULL outputs and operands; outputs are NULL after every failure */
    SBM_ASSERT_FAILS(ctx, sbm_csr_gemm_plan(ctx, S, S, NULL, &C), SBM_ERR_NULL_ARGUMENT,
                     "sbm_csr_gemm_plan: argument plan is NULL");
    assert_null(C);
    plan = (sbm_csr_plan *)(uintptr_t)1;
    SBM_ASSERT_FAILS(ctx, sbm_csr_gemm_plan(ctx, S, S, &plan, NULL), SBM_ERR_NULL_ARGUMENT,
                     "argument C is NULL");
    assert_null(plan);
    C = (sbm_csr *)(uintptr_t)1;
    SBM_ASSERT_FAILS(ctx, sbm_csr_gemm_plan(ctx, NULL, S, &plan, &C), SBM_ERR_NULL_ARGUMENT,
                     "argument A is NULL");
    assert_null(C);
    SBM_ASSERT_FAILS(ctx, sbm_csr_gemm_plan(ctx, S, NULL, &plan, &C), SBM_ERR_NULL_ARGUMENT,
                     "argument B is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_csr_gemm(ctx, S, S, NULL), SBM_ERR_NULL_ARGUMENT,
                     "sbm_csr_gemm: argument C is NULL");
    C = (sbm_csr *)(uintptr_t)1;
    SBM_ASSERT_FAILS(ctx, sbm_csr_gemm(ctx, NULL, S, &C), SBM_ERR_NULL_ARGUMENT,
                     "sbm_csr_gemm: argument A is NULL");
    assert_null(C);
    SBM_ASSERT_FAILS(ctx, sbm_csr_gemm(ctx, S, NULL, &C), SBM_ERR_NULL_ARGUMENT,
                     "sbm_csr_gemm: argument B is NULL");

    /* dimension mismatch: both shapes in the message */
    C = (sbm_csr *)(uintptr_t)1;
    plan = (sbm_csr_plan *)(uintptr_t)1;
    SBM_ASSERT_FAILS(ctx, sbm_csr_gemm_plan(ctx, A, B, &plan, &C), SBM_ERR_DIMENSION_MISMATCH,
                     "sbm_csr_gemm_plan: arguments A and B: A is 3x4, B is 5x6 (A's 4 columns "
                     "must equal B's 5 rows)");
    assert_null(C);
    assert_null(plan);
    C = (sbm_csr *)(uintptr_t)1;
    SBM_ASSERT_FAILS(ctx, sbm_csr_gemm(ctx, A, B, &C), SBM_ERR_DIMENSION_MISMATCH,
                     "sbm_csr_gemm: arguments A and B: A is 3x4, B is 5x6");
    assert_null(C);
    SBM_ASSERT_FAILS(ctx, sbm_csr_gemm(ctx, B, A, &C), SBM_ERR_DIMENSION_MISMATCH,
                     "A is 5x6, B is 3x4");

    /* operands of another backend (only a CUDA context can be given a CPU matrix here) */
    if (e->backend == SBM_BACKEND_CUDA) {
        sbm_csr *H = hcsr_upload(e->host, &s);
        SBM_ASSERT_FAILS(ctx, sbm_csr_gemm_plan(ctx, H, S, &plan, &C), SBM_ERR_BACKEND_MISMATCH,
                         "argument A lives on the CPU backend");
        SBM_ASSERT_FAILS(ctx, sbm_csr_gemm(ctx, S, H, &C), SBM_ERR_BACKEND_MISMATCH,
                         "argument B lives on the CPU backend");
        sbm_csr_destroy(H);
    }

    assert_csr_unchanged(A, a_before, "A");
    assert_csr_unchanged(B, b_before, "B");
    free(a_before);
    free(b_before);
    sbm_csr_destroy(A);
    sbm_csr_destroy(B);
    sbm_csr_destroy(S);
    hcsr_free(&a);
    hcsr_free(&b);
    hcsr_free(&s);
}

/* The error paths of execute (they need a plan). */
static void test_csr_gemm_execute_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_gemm(e);
    sbm_ctx *ctx = e->ctx;
    hcsr s = hcsr_random(43, 4, 4, CSR_UNIFORM, 0.5);
    sbm_csr *S = hcsr_upload(ctx, &s), *C = NULL;
    sbm_csr_plan *plan = NULL;
    double *s_before = sbm_test_csr_dense(S);
    SBM_ASSERT_OK(ctx, sbm_csr_gemm_plan(ctx, S, S, &plan, &C));
    SBM_ASSERT_FAILS(ctx, sbm_csr_gemm_execute(ctx, NULL, S, S, C), SBM_ERR_NULL_ARGUMENT,
                     "sbm_csr_gemm_execute: argument plan is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_csr_gemm_execute(ctx, plan, NULL, S, C), SBM_ERR_NULL_ARGUMENT,
                     "argument A is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_csr_gemm_execute(ctx, plan, S, NULL, C), SBM_ERR_NULL_ARGUMENT,
                     "argument B is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_csr_gemm_execute(ctx, plan, S, S, NULL), SBM_ERR_NULL_ARGUMENT,
                     "argument C is NULL");
    /* C given as an operand: its values would be overwritten while read */
    SBM_ASSERT_FAILS(ctx, sbm_csr_gemm_execute(ctx, plan, C, S, C), SBM_ERR_ALIASING,
                     "argument C shares its values with A or B");
    SBM_ASSERT_FAILS(ctx, sbm_csr_gemm_execute(ctx, plan, S, C, C), SBM_ERR_ALIASING,
                     "argument C shares its values with A or B");
    SBM_ASSERT_OK(ctx, sbm_csr_gemm_execute(ctx, plan, S, S, C));
    check_product(C, &s, &s);

    /* a plan from another backend */
    if (e->backend == SBM_BACKEND_CUDA) {
        sbm_csr *H = hcsr_upload(e->host, &s), *HC = NULL;
        sbm_csr_plan *hplan = NULL;
        SBM_ASSERT_OK(e->host, sbm_csr_gemm_plan(e->host, H, H, &hplan, &HC));
        SBM_ASSERT_FAILS(ctx, sbm_csr_gemm_execute(ctx, hplan, S, S, C), SBM_ERR_BACKEND_MISMATCH,
                         "argument plan: made on the CPU backend");
        sbm_csr_gemm_plan_destroy(hplan);
        sbm_csr_destroy(HC);
        sbm_csr_destroy(H);
    }

    assert_csr_unchanged(S, s_before, "S");
    free(s_before);
    sbm_csr_gemm_plan_destroy(plan);
    sbm_csr_destroy(C);
    sbm_csr_destroy(S);
    hcsr_free(&s);
}

/* An allocator that fails from the n-th allocation on and otherwise hands out the backend's
 * default memory (device memory on the GPU). Static: the context's workspace pool may free
 * through it after the test returns. */
typedef struct failing_alloc {
    int left;                       /* allocations still granted */
    const sbm__backend_ops *ops;    /* the backend whose default allocator serves them */
} failing_alloc;

static failing_alloc failing;

static void *failing_alloc_fn(void *user, size_t bytes)
{
    failing_alloc *f = user;
    if (f->left <= 0) return NULL;
    f->left--;
    return f->ops->default_alloc(NULL, bytes);
}

static void failing_free_fn(void *user, void *ptr)
{
    failing_alloc *f = user;
    f->ops->default_free(NULL, ptr);
}

/* Out of memory at every allocation of plan, execute and the one-shot call: the status says so,
 * outputs are NULL and nothing leaks (the sanitizer build checks the last part). */
static void test_csr_gemm_out_of_memory(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_gemm(e);
    hcsr a = hcsr_random(51, 30, 30, CSR_POWER, 0);
    sbm_csr *A = hcsr_upload(e->ctx, &a);
    failing.ops = e->ctx->ops;
    const sbm_allocator hook = {failing_alloc_fn, failing_free_fn, &failing};
    int succeeded = 0;
    for (int n = 0; n < 64 && !succeeded; n++) {
        failing.left = n;
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, &hook));
        sbm_csr *C = (sbm_csr *)(uintptr_t)1;
        sbm_status st = sbm_csr_gemm(e->ctx, A, A, &C);
        if (st == SBM_SUCCESS) {
            check_product(C, &a, &a);
            sbm_csr_destroy(C);
            succeeded = 1;
        } else {
            SBM_ASSERT_FAILS(e->ctx, st, SBM_ERR_OUT_OF_MEMORY, "cannot allocate");
            assert_null(C);
        }
        /* the same through plan + execute, failing inside execute too */
        failing.left = n;
        sbm_csr_plan *plan = (sbm_csr_plan *)(uintptr_t)1;
        C = (sbm_csr *)(uintptr_t)1;
        st = sbm_csr_gemm_plan(e->ctx, A, A, &plan, &C);
        if (st == SBM_SUCCESS) {
            sbm_status st2 = sbm_csr_gemm_execute(e->ctx, plan, A, A, C);
            if (st2 != SBM_SUCCESS)
                SBM_ASSERT_FAILS(e->ctx, st2, SBM_ERR_OUT_OF_MEMORY, "cannot allocate");
            sbm_csr_gemm_plan_destroy(plan);
            sbm_csr_destroy(C);
        } else {
            SBM_ASSERT_FAILS(e->ctx, st, SBM_ERR_OUT_OF_MEMORY, "cannot allocate");
            assert_null(plan);
            assert_null(C);
        }
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, NULL));
    }
    assert_true(succeeded);
    sbm_csr_destroy(A);
    hcsr_free(&a);
}

/* A*A on the square Matrix Market files, against the product formed from all scalar products
 * as triplets (duplicates summed by sbm_csr_from_triplets: an independent path). */
static void mtx_squares(sbm_test_env *e)
{
    static const char *files[] = {"mtx/LFAT5.mtx",    "mtx/karate.mtx",   "mtx/west0067.mtx",
                                  "mtx/bcsstk13.mtx", "mtx/cryg2500.mtx", "mtx/ca-CondMat.mtx"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        sbm_csr *A = NULL, *C = NULL, *R = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_csr_read_mtx(e->ctx, sbm_test_data_path(files[f]), &A));
        sbm_csr *Ah = sbm_test_csr_to_host(A);
        sbm_csr_info ai = sbm_csr_get_info(Ah);
        assert_int_equal(ai.m, ai.n);
        SBM_ASSERT_OK(e->ctx, sbm_csr_gemm(e->ctx, A, A, &C));

        int64_t np = 0;
        for (int64_t p = 0; p < ai.nnz; p++) {
            int32_t k = ai.colind[p];
            np += ai.rowptr[k + 1] - ai.rowptr[k];
        }
        int32_t *ti = malloc((size_t)np * sizeof *ti + 1), *tj = malloc((size_t)np * sizeof *tj + 1);
        double *tv = malloc((size_t)np * sizeof *tv + 1);
        assert_true(ti && tj && tv);
        int64_t t = 0;
        for (int64_t i = 0; i < ai.m; i++)
            for (int64_t p = ai.rowptr[i]; p < ai.rowptr[i + 1]; p++) {
                int32_t k = ai.colind[p];
                for (int64_t q = ai.rowptr[k]; q < ai.rowptr[k + 1]; q++) {
                    ti[t] = (int32_t)i;
                    tj[t] = ai.colind[q];
                    tv[t++] = ai.values[p] * ai.values[q];
                }
            }
        SBM_ASSERT_OK(e->host, sbm_csr_from_triplets(e->host, &R, ai.m, ai.n, np, ti, tj, tv));

        sbm_csr *Ch = sbm_test_csr_to_host(C);
        sbm_csr_info ci = sbm_csr_get_info(Ch), ri = sbm_csr_get_info(R);
        assert_int_equal(ci.nnz, ri.nnz);
        assert_memory_equal(ci.rowptr, ri.rowptr, (size_t)(ri.m + 1) * sizeof(int64_t));
        assert_memory_equal(ci.colind, ri.colind, (size_t)ri.nnz * sizeof(int32_t));
        /* the tolerance is relative to each row's largest product (bcsstk13 spans 10 decades) */
        for (int64_t i = 0; i < ri.m; i++) {
            double big = 0;
            for (int64_t p = ai.rowptr[i]; p < ai.rowptr[i + 1]; p++) {
                int32_t k = ai.colind[p];
                for (int64_t q = ai.rowptr[k]; q < ai.rowptr[k + 1]; q++)
                    big = fmax(big, fabs(ai.values[p] * ai.values[q]));
            }
            int64_t len = ai.rowptr[i + 1] - ai.rowptr[i];
            for (int64_t p = ri.rowptr[i]; p < ri.rowptr[i + 1]; p++)
                if (fabs(ci.values[p] - ri.values[p]) > 1e-15 * (double)(len + 4) * big)
                    fail_msg("%s: C(%lld,%d) = %.17g, reference %.17g", files[f], (long long)i,
                             ri.colind[p], ci.values[p], ri.values[p]);
        }
        SBM_ASSERT_OK(e->ctx, sbm_csr_check(e->ctx, C, 1));
        free(ti);
        free(tj);
        free(tv);
        sbm_csr_destroy(Ch);
        sbm_csr_destroy(R);
        sbm_csr_destroy(Ah);
        sbm_csr_destroy(C);
        sbm_csr_destroy(A);
    }
}

static void test_csr_gemm_mtx(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_gemm(e);
    mtx_squares(e);
}

/* The same with every row through the GPU's global ESC path. */
static void test_csr_gemm_mtx_global(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_gemm(e);
    set_path(e->ctx, SBM_TUNE_CSR_GEMM_GLOBAL);
    mtx_squares(e);
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_csr_gemm_random),
        SBM_TEST_BOTH(test_csr_gemm_same_operand),
        SBM_TEST_BOTH(test_csr_gemm_structural_zeros),
        SBM_TEST_BOTH(test_csr_gemm_plan_reuse),
        SBM_TEST_BOTH(test_csr_gemm_plan_mismatch),
        SBM_TEST_BOTH(test_csr_gemm_errors),
        SBM_TEST_BOTH(test_csr_gemm_execute_errors),
        SBM_TEST_BOTH(test_csr_gemm_out_of_memory),
        SBM_TEST_BOTH(test_csr_gemm_mtx),
        SBM_TEST_CUDA(test_csr_gemm_paths),
        SBM_TEST_CUDA(test_csr_gemm_slices),
        SBM_TEST_BOTH(test_csr_gemm_determinism),
        SBM_TEST_CUDA(test_csr_gemm_mtx_global),
    };
    /* SBM_TEST_FILTER=pattern runs only the matching tests (cmocka wildcards * and ?). */
    const char *filter = getenv("SBM_TEST_FILTER");
    if (filter && *filter) cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
