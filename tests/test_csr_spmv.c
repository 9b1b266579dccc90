/* SPDX-License-Identifier: BSD-3-Clause */
/* Scalar CSR SpMV y = alpha*A*x + beta*y: seeded random matrices of several row-length
 * distributions and shapes against a dense reference (a sparse one where the dense form would
 * be large), alpha/beta combinations (beta = 0 with NaN in y), through sbm_csr_spmv with every
 * CUDA kernel forced (the context's tuning) and through a plan of every format (with value
 * updates); every Matrix Market file of the data directory; determinism (every product is
 * computed twice and compared bitwise); every error path. */
#include "csr_test_common.h"

#include <dirent.h>
#include <stdio.h>

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

/* Force the CSR kernel named like "scalar", "vector:W:R" or "merge:NT:IPT:csS:pfP" (the names
 * the messages print) through the context's tuning; NULL: the library's choice. */
static void force_kernel(sbm_ctx *ctx, const char *name)
{
    sbm_tuning t = sbm_tuning_default();
    int a = 0, b = 0, cs = 0, pf = 0;
    if (name && strncmp(name, "scalar", 6) == 0) {
        t.csr_spmv = SBM_TUNE_CSR_SPMV_SCALAR;
    } else if (name && strncmp(name, "vector", 6) == 0) {
        t.csr_spmv = SBM_TUNE_CSR_SPMV_VECTOR;
        if (sscanf(name, "vector:%d:%d", &a, &b) == 2) {
            t.csr_spmv_vector_width = a;
            t.csr_spmv_vector_rows = b;
        }
    } else if (name) {
        assert_int_equal(strncmp(name, "merge", 5), 0);
        t.csr_spmv = SBM_TUNE_CSR_SPMV_MERGE;
        if (sscanf(name, "merge:%d:%d:cs%d:pf%d", &a, &b, &cs, &pf) >= 2) {
            t.csr_spmv_merge_threads = a;
            t.csr_spmv_merge_items = b;
            t.csr_spmv_merge_streaming = cs;
            t.csr_spmv_merge_prefetch = pf;
        }
    }
    SBM_ASSERT_OK(ctx, sbm_ctx_set_tuning(ctx, name ? &t : NULL));
}

typedef struct spmv_case {
    int64_t m, n;
    csr_kind kind;
    double density;
} spmv_case;

/* The first twelve are small enough for a dense reference; the rest give the GPU kernels many
 * tiles, rows longer than a tile, empty rows between tiles, long rows in few rows. */
static const spmv_case cases[] = {
    {1, 1, CSR_UNIFORM, 1.0},        {40, 40, CSR_UNIFORM, 0.1},        {300, 300, CSR_POWER, 0},
    {60, 45, CSR_EMPTY_ROWS, 0.2},   {50, 80, CSR_DENSE_ROW, 0.05},     {7, 200, CSR_UNIFORM, 0.3},
    {200, 7, CSR_UNIFORM, 0.3},      {30, 30, CSR_UNIFORM, 0.0},        {0, 9, CSR_UNIFORM, 0.5},
    {9, 0, CSR_UNIFORM, 0.5},        {0, 0, CSR_UNIFORM, 0.5},          {500, 1000, CSR_POWER, 0},
    {3000, 3000, CSR_POWER, 0},      {300, 20000, CSR_DENSE_ROW, 5e-4}, {20000, 500, CSR_UNIFORM, 0.012},
    {30, 2000, CSR_UNIFORM, 0.9},    {5000, 5000, CSR_EMPTY_ROWS, 2e-3},
};
#define NCASES (sizeof cases / sizeof cases[0])

static const double alphas[] = {1.0, -2.5, 0.0, 0.75};
static const double betas[] = {0.0, 1.0, -0.5, 2.0};

/* Kernels of sbm_csr_spmv forced on the GPU (the CPU ignores the tuning): the three kinds,
 * then other compiled configurations. */
static const char *const kernels[] = {"scalar",          "vector",         "merge",
                                      "vector:2:1",      "vector:32:4",    "vector:8:2",
                                      "merge:64:5",      "merge:256:7",    "merge:128:11",
                                      "merge:256:5",     "merge:128:7:cs1", "merge:128:7:cs1:pf1",
                                      "merge:128:5:cs1:pf1"};
#define NKERNELS (sizeof kernels / sizeof kernels[0])

static int64_t hcsr_max_row(const hcsr *a)
{
    int64_t w = 0;
    for (int64_t i = 0; i < a->m; i++)
        if (a->rowptr[i + 1] - a->rowptr[i] > w) w = a->rowptr[i + 1] - a->rowptr[i];
    return w;
}

static int64_t hcsr_diagonals(const hcsr *a)
{
    if (a->rowptr[a->m] == 0) return 0;
    char *seen = calloc((size_t)(a->m + a->n), 1);
    assert_non_null(seen);
    int64_t count = 0;
    for (int64_t i = 0; i < a->m; i++)
        for (int64_t p = a->rowptr[i]; p < a->rowptr[i + 1]; p++) {
            int64_t d = a->colind[p] - i + a->m - 1;
            count += !seen[d];
            seen[d] = 1;
        }
    free(seen);
    return count;
}

/* The padding rule of sbm_csr_spmv_plan (sbm.h): ELL and DIA may store at most 3*nnz + 4096
 * slots. Computed here independently of the library. */
static int format_fits(sbm_spmv_format f, const hcsr *a)
{
    const int64_t nnz = a->rowptr[a->m];
    if (f == SBM_SPMV_ELL) return a->m * hcsr_max_row(a) <= 3 * nnz + 4096;
    if (f == SBM_SPMV_DIA) return a->m * hcsr_diagonals(a) <= 3 * nnz + 4096;
    return 1;
}

/* want = alpha*A*x + beta*y0 from a's rows (or the dense form ad when given). */
static void reference(const hcsr *a, const double *ad, const double *x, double alpha, double beta,
                      const double *y0, double *want)
{
    for (int64_t i = 0; i < a->m; i++) {
        double s = 0;
        if (ad) {
            for (int64_t j = 0; j < a->n; j++) s += ad[i + j * a->m] * x[j];
        } else {
            for (int64_t p = a->rowptr[i]; p < a->rowptr[i + 1]; p++) s += a->values[p] * x[a->colind[p]];
        }
        want[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y0[i];
    }
}

/* y0 uploaded, y = alpha*A*x + beta*y through the plan (or sbm_csr_spmv when plan is NULL),
 * downloaded into got. */
static void run_once(sbm_test_env *e, const sbm_csr *A, const sbm_spmv_plan *plan, double alpha,
                     const double *dx, double beta, const double *y0, int64_t m, double *got)
{
    double *dy = sbm_test_vec_upload(e->ctx, y0, m);
    if (plan)
        SBM_ASSERT_OK(e->ctx, sbm_spmv_plan_execute(e->ctx, plan, alpha, dx, beta, dy));
    else
        SBM_ASSERT_OK(e->ctx, sbm_csr_spmv(e->ctx, alpha, A, dx, beta, dy));
    sbm_test_vec_download_into(e->ctx, got, dy, m);
    dev_free(e->ctx, dy);
}

/* Every alpha/beta pair against the reference, each product twice and bitwise equal.
 * SBM_TEST_QUICK=1 (for the sanitizer runs) keeps two pairs: (1, 0) and (-2.5, -0.5). */
static void check_products(sbm_test_env *e, const sbm_csr *A, const sbm_spmv_plan *plan,
                           const hcsr *a, const double *ad, const double *x, const double *dx,
                           uint64_t seed, const char *what)
{
    const int64_t m = a->m;
    double *want = malloc(((size_t)m + 1) * sizeof *want);
    double *got = malloc(((size_t)m + 1) * sizeof *got);
    double *again = malloc(((size_t)m + 1) * sizeof *again);
    assert_true(want && got && again);
    const double tol = 1e-15 * (double)(hcsr_max_row(a) + 4);
    const char *quick = getenv("SBM_TEST_QUICK");
    const int all = !(quick && *quick && strcmp(quick, "0") != 0);
    for (size_t ia = 0; ia < sizeof alphas / sizeof alphas[0]; ia++)
        for (size_t ib = 0; ib < sizeof betas / sizeof betas[0]; ib++) {
            if (!all && !(ia == 0 && ib == 0) && !(ia == 1 && ib == 2)) continue;
            const double alpha = alphas[ia], beta = betas[ib];
            double *y0 = sbm_test_random_vector(seed + 4 * ia + ib, m);
            /* beta == 0 must ignore y: poison it */
            if (beta == 0.0)
                for (int64_t i = 0; i < m; i++) y0[i] = i % 2 ? NAN : INFINITY;
            reference(a, ad, x, alpha, beta, y0, want);
            run_once(e, A, plan, alpha, dx, beta, y0, m, got);
            if (!(m == 0)) {
                char label[512];
                snprintf(label, sizeof label, "%s, alpha %g, beta %g", what, alpha, beta);
                sbm_test_assert_near(got, want, m, tol, label);
            }
            run_once(e, A, plan, alpha, dx, beta, y0, m, again);
            assert_same_bits(got, again, m, "a second run of the same product");
            free(y0);
        }
    free(want);
    free(got);
    free(again);
}

/* A random matrix of case c, its dense form (NULL when large) and x, in host and ctx memory. */
typedef struct spmv_input {
    hcsr a;
    double *ad;
    sbm_csr *A;
    double *x, *dx;
} spmv_input;

static spmv_input input_make(sbm_ctx *ctx, size_t c)
{
    const spmv_case *k = &cases[c];
    spmv_input in;
    in.a = hcsr_random(1000 + c, k->m, k->n, k->kind, k->density);
    in.ad = k->m * k->n <= 1000000 ? hcsr_dense(&in.a) : NULL;
    in.A = hcsr_upload(ctx, &in.a);
    in.x = sbm_test_random_vector(2000 + c, k->n);
    in.dx = sbm_test_vec_upload(ctx, in.x, k->n);
    return in;
}

static void input_free(sbm_ctx *ctx, spmv_input *in)
{
    dev_free(ctx, in->dx);
    free(in->x);
    free(in->ad);
    sbm_csr_destroy(in->A);
    hcsr_free(&in->a);
}

/* ---------------------------------------------------------------------------------------- */
/* sbm_csr_spmv                                                                             */
/* ---------------------------------------------------------------------------------------- */

/* The automatic kernel choice on every case; x is not changed. */
static void test_csr_spmv_random(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_spmv(e);
    force_kernel(e->ctx, NULL);
    for (size_t c = 0; c < NCASES; c++) {
        spmv_input in = input_make(e->ctx, c);
        char what[64];
        snprintf(what, sizeof what, "case %zu, automatic kernel", c);
        check_products(e, in.A, NULL, &in.a, in.ad, in.x, in.dx, 3000 + 16 * c, what);
        double *x_after = sbm_test_vec_download(e->ctx, in.dx, in.a.n);
        assert_same_bits(in.x, x_after, in.a.n, "x");
        free(x_after);
        input_free(e->ctx, &in);
    }
    force_kernel(e->ctx, NULL);
}

/* Every kernel forced in turn, on every case. */
static void test_csr_spmv_kernels(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_spmv(e);
    for (size_t c = 0; c < NCASES; c++) {
        spmv_input in = input_make(e->ctx, c);
        for (size_t k = 0; k < NKERNELS; k++) {
            force_kernel(e->ctx, kernels[k]);
            char what[64];
            snprintf(what, sizeof what, "case %zu, kernel %s", c, kernels[k]);
            check_products(e, in.A, NULL, &in.a, in.ad, in.x, in.dx, 3000 + 16 * c, what);
            force_kernel(e->ctx, NULL);
        }
        input_free(e->ctx, &in);
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

    /* the same through plans of every format */
    for (int f = SBM_SPMV_AUTO; f <= SBM_SPMV_DIA; f++) {
        sbm_spmv_plan *p0 = NULL, *p1 = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_csr_spmv_plan(e->ctx, A0, (sbm_spmv_format)f, &p0));
        SBM_ASSERT_OK(e->ctx, sbm_csr_spmv_plan(e->ctx, A1, (sbm_spmv_format)f, &p1));
        SBM_ASSERT_OK(e->ctx, sbm_spmv_plan_execute(e->ctx, p0, 1.0, dx, 0.0, NULL));
        SBM_ASSERT_FAILS(e->ctx, sbm_spmv_plan_execute(e->ctx, p0, 1.0, NULL, 0.0, NULL),
                         SBM_ERR_NULL_ARGUMENT, "argument x is NULL (the plan's A is 0x5, x needs 5");
        double y2[4] = {1, NAN, 3, 4};
        dev_free(e->ctx, dy);
        dy = sbm_test_vec_upload(e->ctx, y2, 4);
        SBM_ASSERT_OK(e->ctx, sbm_spmv_plan_execute(e->ctx, p1, 1.0, NULL, 2.0, dy));
        sbm_test_vec_download_into(e->ctx, got, dy, 4);
        assert_true(got[0] == 2.0 && isnan(got[1]) && got[2] == 6.0 && got[3] == 8.0);
        SBM_ASSERT_OK(e->ctx, sbm_spmv_plan_execute(e->ctx, p1, 1.0, NULL, 0.0, dy));
        sbm_test_vec_download_into(e->ctx, got, dy, 4);
        for (int i = 0; i < 4; i++) assert_true(got[i] == 0.0);
        sbm_spmv_plan_destroy(p0);
        sbm_spmv_plan_destroy(p1);
    }
    dev_free(e->ctx, dx);
    dev_free(e->ctx, dy);
    sbm_csr_destroy(A0);
    sbm_csr_destroy(A1);
    hcsr_free(&a0);
    hcsr_free(&a1);
}

/* ---------------------------------------------------------------------------------------- */
/* Plans                                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* The stored format: the requested one on the GPU (AUTO resolved), CSR scalar on the CPU. */
static void check_plan_format(sbm_test_env *e, const sbm_spmv_plan *plan, sbm_spmv_format f)
{
    sbm_spmv_format got = sbm_spmv_plan_format(plan);
    if (e->backend == SBM_BACKEND_CPU) assert_int_equal(got, SBM_SPMV_CSR_SCALAR);
    else if (f == SBM_SPMV_AUTO) assert_true(got > SBM_SPMV_AUTO && got <= SBM_SPMV_DIA);
    else assert_int_equal(got, f);
}

/* Every format on every case: refused exactly when the padding rule says so (with the fill in
 * the message); otherwise the products, then an update with new values through a new matrix of
 * the same pattern, then through A's own values written in place. The plan owns its copy: A is
 * destroyed before the last products. */
static void test_csr_spmv_plan_formats(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_spmv(e);
    force_kernel(e->ctx, NULL);
    for (size_t c = 0; c < NCASES; c++) {
        for (int f = SBM_SPMV_AUTO; f <= SBM_SPMV_DIA; f++) {
            spmv_input in = input_make(e->ctx, c);
            const sbm_spmv_format fmt = (sbm_spmv_format)f;
            char what[96];
            snprintf(what, sizeof what, "case %zu, format %s", c, sbm_spmv_format_name(fmt));
            sbm_spmv_plan *plan = (sbm_spmv_plan *)&in; /* must be reset to NULL on failure */
            if (!format_fits(fmt, &in.a)) {
                SBM_ASSERT_FAILS(e->ctx, sbm_csr_spmv_plan(e->ctx, in.A, fmt, &plan),
                                 SBM_ERR_INVALID_ARGUMENT,
                                 fmt == SBM_SPMV_ELL ? "argument format: ELL would store"
                                                     : "argument format: DIA would store");
                assert_null(plan);
                assert_non_null(strstr(sbm_ctx_last_error(e->ctx), "fill"));
                input_free(e->ctx, &in);
                continue;
            }
            SBM_ASSERT_OK(e->ctx, sbm_csr_spmv_plan(e->ctx, in.A, fmt, &plan));
            check_plan_format(e, plan, fmt);
            check_products(e, in.A, plan, &in.a, in.ad, in.x, in.dx, 5000 + 16 * c, what);

            /* new values, same pattern, new matrix */
            const int64_t nnz = in.a.rowptr[in.a.m];
            for (int64_t p = 0; p < nnz; p++) in.a.values[p] = 0.5 - in.a.values[p] * 1.5;
            free(in.ad);
            in.ad = in.a.m * in.a.n <= 1000000 ? hcsr_dense(&in.a) : NULL;
            sbm_csr *A2 = hcsr_upload(e->ctx, &in.a);
            SBM_ASSERT_OK(e->ctx, sbm_spmv_plan_update(e->ctx, plan, A2));
            check_products(e, A2, plan, &in.a, in.ad, in.x, in.dx, 6000 + 16 * c, what);

            /* new values written into A's own array, then A destroyed */
            for (int64_t p = 0; p < nnz; p++) in.a.values[p] = (double)(p % 7) - 3.0;
            free(in.ad);
            in.ad = in.a.m * in.a.n <= 1000000 ? hcsr_dense(&in.a) : NULL;
            sbm_csr_info info = sbm_csr_get_info(in.A);
            if (nnz > 0)
                SBM_ASSERT_OK(e->ctx, e->ctx->ops->copy(e->ctx, info.values, in.a.values,
                                                        (size_t)nnz * sizeof(double), 0));
            SBM_ASSERT_OK(e->ctx, sbm_spmv_plan_update(e->ctx, plan, in.A));
            sbm_csr_destroy(A2);
            sbm_csr_destroy(in.A);
            in.A = NULL;
            check_products(e, NULL, plan, &in.a, in.ad, in.x, in.dx, 7000 + 16 * c, what);
            sbm_spmv_plan_destroy(plan);
            input_free(e->ctx, &in);
        }
    }
    force_kernel(e->ctx, NULL);
}

/* A plan's CSR kernel follows the format, whatever the tuning's csr_spmv says; a configuration in
 * the tuning applies to a plan of that kernel's format. */
static void test_csr_spmv_plan_tuning(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_spmv(e);
    static const char *const settings[] = {"scalar", "merge:64:5", "vector:4:1"};
    for (size_t s = 0; s < sizeof settings / sizeof settings[0]; s++) {
        force_kernel(e->ctx, settings[s]);
        for (size_t c = 12; c < 14; c++) {
            spmv_input in = input_make(e->ctx, c);
            for (int f = SBM_SPMV_CSR_SCALAR; f <= SBM_SPMV_CSR_MERGE; f++) {
                sbm_spmv_plan *plan = NULL;
                SBM_ASSERT_OK(e->ctx, sbm_csr_spmv_plan(e->ctx, in.A, (sbm_spmv_format)f, &plan));
                check_plan_format(e, plan, (sbm_spmv_format)f);
                char what[96];
                snprintf(what, sizeof what, "case %zu, format %s, tuning %s", c,
                         sbm_spmv_format_name((sbm_spmv_format)f), settings[s]);
                check_products(e, in.A, plan, &in.a, in.ad, in.x, in.dx, 8000 + 16 * c, what);
                sbm_spmv_plan_destroy(plan);
            }
            input_free(e->ctx, &in);
        }
        force_kernel(e->ctx, NULL);
    }
}

/* A matrix with more merge-path tiles than a persistent grid has CTAs (so CTAs take several
 * tiles and load ahead), rows of 0..6 entries and every 1000th row of 3000: the persistent and
 * the one-tile-per-CTA merge kernels, the COO and HYB plans, against a sparse reference. */
static void test_csr_spmv_many_tiles(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_spmv(e);
    const int64_t m = 300000, n = 250000;
    hcsr a = {m, n, malloc(((size_t)m + 1) * sizeof(int64_t)), NULL, NULL};
    assert_non_null(a.rowptr);
    a.rowptr[0] = 0;
    for (int64_t i = 0; i < m; i++) a.rowptr[i + 1] = a.rowptr[i] + (i % 1000 == 999 ? 3000 : i % 7);
    const int64_t nnz = a.rowptr[m];
    a.colind = malloc((size_t)nnz * sizeof(int32_t));
    a.values = malloc((size_t)nnz * sizeof(double));
    assert_true(a.colind && a.values);
    sbm_test_rng g = sbm_test_rng_seed(77);
    for (int64_t i = 0; i < m; i++) {
        const int64_t len = a.rowptr[i + 1] - a.rowptr[i];
        const int64_t step = len > 0 ? n / len : 1, off = len > 0 ? (i * 7919) % step : 0;
        for (int64_t k = 0; k < len; k++) {
            a.colind[a.rowptr[i] + k] = (int32_t)(off + k * step); /* increasing, distinct */
            a.values[a.rowptr[i] + k] = sbm_test_rng_value(&g);
        }
    }
    sbm_csr *A = hcsr_upload(e->ctx, &a);
    double *x = sbm_test_random_vector(78, n);
    double *dx = sbm_test_vec_upload(e->ctx, x, n);
    static const char *const modes[] = {"merge", "merge:128:7:cs1:pf1", "merge:128:5:cs1:pf1",
                                        "merge:256:7:cs1:pf1"};
    for (size_t k = 0; k < sizeof modes / sizeof modes[0]; k++) {
        force_kernel(e->ctx, modes[k]);
        char what[96];
        snprintf(what, sizeof what, "many tiles, kernel %s", modes[k]);
        check_products(e, A, NULL, &a, NULL, x, dx, 900 + 8 * k, what);
        sbm_spmv_plan *plan = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_csr_spmv_plan(e->ctx, A, SBM_SPMV_CSR_MERGE, &plan));
        snprintf(what, sizeof what, "many tiles, merge plan under %s", modes[k]);
        check_products(e, A, plan, &a, NULL, x, dx, 950 + 8 * k, what);
        sbm_spmv_plan_destroy(plan);
        force_kernel(e->ctx, NULL);
    }
    static const sbm_spmv_format formats[] = {SBM_SPMV_COO, SBM_SPMV_HYB};
    for (size_t f = 0; f < 2; f++) {
        sbm_spmv_plan *plan = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_csr_spmv_plan(e->ctx, A, formats[f], &plan));
        check_plan_format(e, plan, formats[f]);
        check_products(e, A, plan, &a, NULL, x, dx, 990 + f, sbm_spmv_format_name(formats[f]));
        sbm_spmv_plan_destroy(plan);
    }
    dev_free(e->ctx, dx);
    free(x);
    sbm_csr_destroy(A);
    hcsr_free(&a);
}

/* ---------------------------------------------------------------------------------------- */
/* Matrix Market files                                                                      */
/* ---------------------------------------------------------------------------------------- */

/* 1 if name (length len) ends in ".mtx", ".mtx.gz" or ".mtx.bz2". */
static int is_mtx_name(const char *name, size_t len)
{
    static const char *const suffix[] = {".mtx", ".mtx.gz", ".mtx.bz2"};
    for (int k = 0; k < 3; k++) {
        const size_t n = strlen(suffix[k]);
        if (len > n && strcmp(name + len - n, suffix[k]) == 0) return 1;
    }
    return 0;
}

/* Every .mtx file (plain or compressed) of tests/data/mtx (sorted names), through every forced kernel and every
 * format that fits. */
static void test_csr_spmv_mtx(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_spmv(e);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/mtx", sbm_test_data_dir());
    DIR *h = opendir(dir);
    if (!h) fail_msg("cannot open the data directory %s", dir);
    char names[64][256];
    int count = 0;
    struct dirent *ent;
    while ((ent = readdir(h)) != NULL && count < 64) {
        const size_t len = strlen(ent->d_name);
        if (len < 256 && is_mtx_name(ent->d_name, len))
            snprintf(names[count++], sizeof names[0], "%s", ent->d_name);
    }
    closedir(h);
    assert_true(count > 0);
    qsort(names, (size_t)count, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    force_kernel(e->ctx, NULL);
    for (int fi = 0; fi < count; fi++) {
        char rel[300];
        snprintf(rel, sizeof rel, "mtx/%.255s", names[fi]);
        sbm_csr *A = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_csr_read_mtx(e->ctx, sbm_test_data_path(rel), &A));
        sbm_csr *H = sbm_test_csr_to_host(A);
        sbm_csr_info hi = sbm_csr_get_info(H);
        hcsr a = {hi.m, hi.n, (int64_t *)hi.rowptr, (int32_t *)hi.colind, hi.values}; /* H's */
        double *x = sbm_test_random_vector(91 + (uint64_t)fi, a.n);
        double *dx = sbm_test_vec_upload(e->ctx, x, a.n);
        for (size_t k = 0; k < 3; k++) { /* scalar, vector, merge */
            force_kernel(e->ctx, kernels[k]);
            char what[400];
            snprintf(what, sizeof what, "%.255s, kernel %s", names[fi], kernels[k]);
            check_products(e, A, NULL, &a, NULL, x, dx, 400 + (uint64_t)fi, what);
            force_kernel(e->ctx, NULL);
        }
        for (int f = SBM_SPMV_AUTO; f <= SBM_SPMV_DIA; f++) {
            sbm_spmv_plan *plan = NULL;
            sbm_status st = sbm_csr_spmv_plan(e->ctx, A, (sbm_spmv_format)f, &plan);
            if (!format_fits((sbm_spmv_format)f, &a)) {
                assert_int_equal(st, SBM_ERR_INVALID_ARGUMENT);
                continue;
            }
            SBM_ASSERT_OK(e->ctx, st);
            check_plan_format(e, plan, (sbm_spmv_format)f);
            char what[400];
            snprintf(what, sizeof what, "%.255s, format %s", names[fi],
                     sbm_spmv_format_name((sbm_spmv_format)f));
            check_products(e, A, plan, &a, NULL, x, dx, 500 + (uint64_t)fi, what);
            sbm_spmv_plan_destroy(plan);
        }
        dev_free(e->ctx, dx);
        free(x);
        sbm_csr_destroy(H);
        sbm_csr_destroy(A);
    }
    force_kernel(e->ctx, NULL);
}

/* ---------------------------------------------------------------------------------------- */
/* Errors                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Every error path of sbm_csr_spmv: status, message, and y, x, A unchanged. */
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

/* A 3x3 matrix with entries at (i, cols[i]). */
static sbm_csr *three_by_three(sbm_ctx *ctx, const int32_t cols[3])
{
    const int64_t rowptr[4] = {0, 1, 2, 3};
    const double values[3] = {1.0, 2.0, 3.0};
    sbm_csr *A = NULL;
    SBM_ASSERT_OK(ctx, sbm_csr_create(ctx, &A, 3, 3, rowptr, cols, values));
    return A;
}

/* Every error path of the plan calls: status, message; y and the plan unchanged. */
static void test_csr_spmv_plan_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_spmv(e);
    sbm_ctx *ctx = e->ctx;
    hcsr a = hcsr_random(5, 6, 4, CSR_UNIFORM, 0.5);
    hcsr a4 = hcsr_random(6, 7, 4, CSR_UNIFORM, 0.5); /* one more row */
    sbm_csr *A = hcsr_upload(ctx, &a), *A4 = hcsr_upload(ctx, &a4);
    double hx[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, hy[6] = {-1, -2, -3, -4, -5, -6};
    double *dx = sbm_test_vec_upload(ctx, hx, 10), *dy = sbm_test_vec_upload(ctx, hy, 6);
    sbm_spmv_plan *plan = NULL, *other = (sbm_spmv_plan *)dx;

    /* plan */
    assert_int_equal(sbm_csr_spmv_plan(NULL, A, SBM_SPMV_AUTO, &plan), SBM_ERR_NULL_ARGUMENT);
    assert_non_null(strstr(sbm_ctx_last_error(NULL), "sbm_csr_spmv_plan: argument ctx is NULL"));
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmv_plan(ctx, A, SBM_SPMV_AUTO, NULL), SBM_ERR_NULL_ARGUMENT,
                     "sbm_csr_spmv_plan: argument plan is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmv_plan(ctx, NULL, SBM_SPMV_AUTO, &other),
                     SBM_ERR_NULL_ARGUMENT, "sbm_csr_spmv_plan: argument A is NULL");
    assert_null(other);
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmv_plan(ctx, A, (sbm_spmv_format)8, &plan),
                     SBM_ERR_INVALID_ARGUMENT, "argument format: 8 is not an sbm_spmv_format");
    SBM_ASSERT_FAILS(ctx, sbm_csr_spmv_plan(ctx, A, (sbm_spmv_format)-1, &plan),
                     SBM_ERR_INVALID_ARGUMENT, "argument format: -1 is not an sbm_spmv_format");
    assert_null(plan);
    if (e->backend == SBM_BACKEND_CUDA) {
        sbm_csr *H = hcsr_upload(e->host, &a);
        SBM_ASSERT_FAILS(ctx, sbm_csr_spmv_plan(ctx, H, SBM_SPMV_AUTO, &plan),
                         SBM_ERR_BACKEND_MISMATCH, "argument A lives on the CPU backend");
        sbm_csr_destroy(H);
    }
    /* padding limits: one row of 10000 entries among 100 (ELL), a uniform 200x200 (DIA) */
    {
        hcsr l = hcsr_random(7, 100, 10000, CSR_DENSE_ROW, 0.0);
        hcsr u = hcsr_random(8, 200, 200, CSR_UNIFORM, 0.1);
        sbm_csr *L = hcsr_upload(ctx, &l), *U = hcsr_upload(ctx, &u);
        char msg[256];
        snprintf(msg, sizeof msg,
                 "sbm_csr_spmv_plan: argument format: ELL would store 1000000 slots (100 rows x "
                 "10000 entries in the longest row) for 10000 entries, fill 100.00; the limit is "
                 "3 x entries + 4096 slots");
        SBM_ASSERT_FAILS(ctx, sbm_csr_spmv_plan(ctx, L, SBM_SPMV_ELL, &plan), SBM_ERR_INVALID_ARGUMENT, msg);
        const int64_t nd = hcsr_diagonals(&u), nnz = u.rowptr[u.m];
        assert_true(200 * nd > 3 * nnz + 4096);
        snprintf(msg, sizeof msg,
                 "argument format: DIA would store %lld slots (200 rows x %lld occupied diagonals) "
                 "for %lld entries, fill %.2f",
                 (long long)(200 * nd), (long long)nd, (long long)nnz, 200.0 * (double)nd / (double)nnz);
        SBM_ASSERT_FAILS(ctx, sbm_csr_spmv_plan(ctx, U, SBM_SPMV_DIA, &plan), SBM_ERR_INVALID_ARGUMENT, msg);
        assert_null(plan);
        /* the other formats take them */
        SBM_ASSERT_OK(ctx, sbm_csr_spmv_plan(ctx, L, SBM_SPMV_HYB, &plan));
        sbm_spmv_plan_destroy(plan);
        SBM_ASSERT_OK(ctx, sbm_csr_spmv_plan(ctx, U, SBM_SPMV_ELL, &plan));
        sbm_spmv_plan_destroy(plan);
        plan = NULL;
        sbm_csr_destroy(L);
        sbm_csr_destroy(U);
        hcsr_free(&l);
        hcsr_free(&u);
    }

    SBM_ASSERT_OK(ctx, sbm_csr_spmv_plan(ctx, A, SBM_SPMV_AUTO, &plan));

    /* update */
    assert_int_equal(sbm_spmv_plan_update(NULL, plan, A), SBM_ERR_NULL_ARGUMENT);
    assert_non_null(strstr(sbm_ctx_last_error(NULL), "sbm_spmv_plan_update: argument ctx is NULL"));
    SBM_ASSERT_FAILS(ctx, sbm_spmv_plan_update(ctx, NULL, A), SBM_ERR_NULL_ARGUMENT,
                     "sbm_spmv_plan_update: argument plan is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_spmv_plan_update(ctx, plan, NULL), SBM_ERR_NULL_ARGUMENT,
                     "sbm_spmv_plan_update: argument A is NULL");
    char msg[256];
    snprintf(msg, sizeof msg, "argument A is 7x4 with %lld entries, the plan was made for 6x4 with %lld entries",
             (long long)a4.rowptr[7], (long long)a.rowptr[6]);
    SBM_ASSERT_FAILS(ctx, sbm_spmv_plan_update(ctx, plan, A4), SBM_ERR_PLAN_MISMATCH, msg);
    {
        const int32_t diag[3] = {0, 1, 2}, shifted[3] = {1, 1, 2};
        sbm_csr *D = three_by_three(ctx, diag), *S = three_by_three(ctx, shifted);
        sbm_spmv_plan *pd = NULL;
        SBM_ASSERT_OK(ctx, sbm_csr_spmv_plan(ctx, D, SBM_SPMV_CSR_SCALAR, &pd));
        SBM_ASSERT_FAILS(ctx, sbm_spmv_plan_update(ctx, pd, S), SBM_ERR_PLAN_MISMATCH,
                         "argument A: its sparsity pattern (3x3, 3 entries, fingerprint");
        assert_non_null(strstr(sbm_ctx_last_error(ctx), "is not the one the plan was made with"));
        /* an equal pattern in a new matrix is accepted */
        sbm_csr *D2 = three_by_three(ctx, diag);
        SBM_ASSERT_OK(ctx, sbm_spmv_plan_update(ctx, pd, D2));
        sbm_csr_destroy(D2);
        sbm_spmv_plan_destroy(pd);
        sbm_csr_destroy(D);
        sbm_csr_destroy(S);
    }

    /* execute */
    assert_int_equal(sbm_spmv_plan_execute(NULL, plan, 1.0, dx, 0.0, dy), SBM_ERR_NULL_ARGUMENT);
    assert_non_null(strstr(sbm_ctx_last_error(NULL), "sbm_spmv_plan_execute: argument ctx is NULL"));
    SBM_ASSERT_FAILS(ctx, sbm_spmv_plan_execute(ctx, NULL, 1.0, dx, 0.0, dy), SBM_ERR_NULL_ARGUMENT,
                     "sbm_spmv_plan_execute: argument plan is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_spmv_plan_execute(ctx, plan, 1.0, NULL, 0.0, dy), SBM_ERR_NULL_ARGUMENT,
                     "argument x is NULL (the plan's A is 6x4, x needs 4 elements)");
    SBM_ASSERT_FAILS(ctx, sbm_spmv_plan_execute(ctx, plan, 1.0, dx, 0.0, NULL), SBM_ERR_NULL_ARGUMENT,
                     "argument y is NULL (the plan's A is 6x4, y needs 6 elements)");
    SBM_ASSERT_FAILS(ctx, sbm_spmv_plan_execute(ctx, plan, 1.0, dx, 0.0, dx), SBM_ERR_ALIASING,
                     "arguments x (4 elements at");
    SBM_ASSERT_FAILS(ctx, sbm_spmv_plan_execute(ctx, plan, 1.0, dx + 4, 1.0, dx), SBM_ERR_ALIASING,
                     "overlap");

    /* a plan of another backend */
    if (e->backend == SBM_BACKEND_CUDA) {
        sbm_csr *H = hcsr_upload(e->host, &a);
        sbm_spmv_plan *hp = NULL;
        SBM_ASSERT_OK(e->host, sbm_csr_spmv_plan(e->host, H, SBM_SPMV_AUTO, &hp));
        SBM_ASSERT_FAILS(ctx, sbm_spmv_plan_execute(ctx, hp, 1.0, dx, 0.0, dy), SBM_ERR_BACKEND_MISMATCH,
                         "argument plan: made on the CPU backend (device 0), the context is CUDA");
        SBM_ASSERT_FAILS(ctx, sbm_spmv_plan_update(ctx, hp, A), SBM_ERR_BACKEND_MISMATCH,
                         "argument plan: made on the CPU backend");
        SBM_ASSERT_FAILS(e->host, sbm_spmv_plan_execute(e->host, plan, 1.0, hx, 0.0, hy),
                         SBM_ERR_BACKEND_MISMATCH, "argument plan: made on the CUDA backend");
        sbm_spmv_plan_destroy(hp);
        sbm_csr_destroy(H);
    }

    /* y untouched by every failure; the plan still works */
    double *y_after = sbm_test_vec_download(ctx, dy, 6);
    assert_same_bits(hy, y_after, 6, "y");
    free(y_after);
    double want[6], got[6];
    double *ad = hcsr_dense(&a);
    reference(&a, ad, hx, 1.0, 0.0, hy, want);
    SBM_ASSERT_OK(ctx, sbm_spmv_plan_execute(ctx, plan, 1.0, dx, 0.0, dy));
    sbm_test_vec_download_into(ctx, got, dy, 6);
    sbm_test_assert_near(got, want, 6, 1e-14, "y after the failures");
    free(ad);

    /* queries */
    assert_int_equal(sbm_spmv_plan_format(NULL), SBM_SPMV_AUTO);
    static const char *const names[] = {"auto", "csr-scalar", "csr-vector", "csr-merge",
                                        "coo",  "ell",        "hyb",        "dia"};
    for (int f = 0; f < 8; f++) assert_string_equal(sbm_spmv_format_name((sbm_spmv_format)f), names[f]);
    assert_string_equal(sbm_spmv_format_name((sbm_spmv_format)8), "unknown");
    assert_string_equal(sbm_spmv_format_name((sbm_spmv_format)-1), "unknown");
    sbm_spmv_plan_destroy(NULL);

    sbm_spmv_plan_destroy(plan);
    dev_free(ctx, dx);
    dev_free(ctx, dy);
    sbm_csr_destroy(A);
    sbm_csr_destroy(A4);
    hcsr_free(&a);
    hcsr_free(&a4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_csr_spmv_random),      SBM_TEST_BOTH(test_csr_spmv_kernels),
        SBM_TEST_BOTH(test_csr_spmv_empty_null),  SBM_TEST_BOTH(test_csr_spmv_plan_formats),
        SBM_TEST_BOTH(test_csr_spmv_plan_tuning),    SBM_TEST_BOTH(test_csr_spmv_many_tiles),
        SBM_TEST_BOTH(test_csr_spmv_mtx),
        SBM_TEST_BOTH(test_csr_spmv_errors),      SBM_TEST_BOTH(test_csr_spmv_plan_errors),
    };
    /* SBM_TEST_FILTER=pattern runs only the matching tests (cmocka wildcards * and ?). */
    const char *filter = getenv("SBM_TEST_FILTER");
    if (filter && *filter) cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
