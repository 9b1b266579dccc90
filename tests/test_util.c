/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared test helpers: fixtures per backend, seeded random matrices, dense references. */
#define _POSIX_C_SOURCE 200809L

#include "test_util.h"

#include "sbm_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const sbm_backend sbm_test_backend_cpu = SBM_BACKEND_CPU;
const sbm_backend sbm_test_backend_cuda = SBM_BACKEND_CUDA;

int sbm_test_setup(void **state)
{
    const sbm_backend *b = *state;
    sbm_test_env *e = calloc(1, sizeof *e);
    if (!e) return -1;
    e->backend = *b;
    if (sbm_ctx_create(&e->host, SBM_BACKEND_CPU, 0) != SBM_SUCCESS) {
        free(e);
        return -1;
    }
    if (e->backend == SBM_BACKEND_CPU) {
        if (sbm_ctx_create(&e->ctx, SBM_BACKEND_CPU, 0) != SBM_SUCCESS) return -1;
    } else if (sbm_has_cuda() && sbm_cuda_device_count() > 0) {
        if (sbm_ctx_create(&e->ctx, SBM_BACKEND_CUDA, 0) != SBM_SUCCESS) {
            fprintf(stderr, "CUDA context: %s\n", sbm_ctx_last_error(NULL));
            return -1;
        }
    }
    *state = e;
    return 0;
}

int sbm_test_teardown(void **state)
{
    sbm_test_env *e = *state;
    if (e) {
        sbm_ctx_destroy(e->ctx);
        sbm_ctx_destroy(e->host);
        free(e);
    }
    return 0;
}

int sbm_test_gpu_required(void)
{
    const char *v = getenv("SBM_REQUIRE_GPU");
    return v && *v && strcmp(v, "0") != 0;
}

/* Why there is no CUDA context here. */
static const char *no_gpu_reason(void)
{
    return sbm_has_cuda() ? "no CUDA device on this machine" : "this build has no CUDA backend";
}

sbm_test_env *sbm_test_begin(void **state)
{
    sbm_test_env *e = *state;
    if (!e->ctx) {
        if (sbm_test_gpu_required())
            fail_msg("SBM_REQUIRE_GPU is set but the [cuda] case cannot run: %s", no_gpu_reason());
        print_message("[  SKIP    ] %s\n", no_gpu_reason());
        skip();
    }
    return e;
}

void sbm_test_require_gpu(const char *suite)
{
    if (sbm_has_cuda() && sbm_cuda_device_count() > 0) return;
    if (sbm_test_gpu_required()) {
        printf("%s: FAILED: SBM_REQUIRE_GPU is set but the suite cannot run: %s\n", suite,
               no_gpu_reason());
        fflush(stdout);
        exit(1);
    }
    printf("%s: skipped: %s\n", suite, no_gpu_reason());
    fflush(stdout);
    exit(SBM_TEST_SKIP_CODE);
}

sbm_test_rng sbm_test_rng_seed(uint64_t seed)
{
    sbm_test_rng g = {seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull};
    return g;
}

uint64_t sbm_test_rng_u64(sbm_test_rng *g) { return sbm_splitmix64(&g->s); }

double sbm_test_rng_uniform(sbm_test_rng *g) { return sbm_splitmix64_uniform(&g->s); }

double sbm_test_rng_value(sbm_test_rng *g)
{
    double v;
    do v = 2.0 * sbm_test_rng_uniform(g) - 1.0;
    while (v == 0.0);
    return v;
}

int64_t sbm_test_rng_below(sbm_test_rng *g, int64_t n)
{
    return n <= 0 ? 0 : (int64_t)(sbm_test_rng_u64(g) % (uint64_t)n);
}

sbm_cbc *sbm_test_random_cbc(sbm_ctx *ctx, uint64_t seed, int64_t nbr, int64_t nbc, int r, int c,
                             double density)
{
    return sbm_test_random_cbc_upper(ctx, seed, nbr, nbc, r, c, density, 0);
}

sbm_cbc *sbm_test_random_cbc_op(sbm_ctx *ctx, uint64_t seed, sbm_op op, int64_t nbr, int64_t nbc,
                                int r, int c, double density)
{
    return op == SBM_OP_N ? sbm_test_random_cbc_upper(ctx, seed, nbr, nbc, r, c, density, 0)
                          : sbm_test_random_cbc_upper(ctx, seed, nbc, nbr, c, r, density, 0);
}

sbm_cbc *sbm_test_random_cbc_upper(sbm_ctx *ctx, uint64_t seed, int64_t nbr, int64_t nbc, int r,
                                   int c, double density, int upper_only)
{
    sbm_test_rng g = sbm_test_rng_seed(seed);
    size_t rc = (size_t)r * c;
    int64_t *colptr = malloc((size_t)(nbc + 1) * sizeof *colptr);
    int32_t *rowind = malloc((size_t)(nbr * nbc + 1) * sizeof *rowind);
    assert_non_null(colptr);
    assert_non_null(rowind);
    int64_t k = 0;
    colptr[0] = 0;
    for (int64_t j = 0; j < nbc; j++) {
        for (int64_t i = 0; i < nbr; i++)
            /* the draw comes first: the same seed gives the same values with upper_only */
            if (sbm_test_rng_uniform(&g) < density && (!upper_only || i <= j))
                rowind[k++] = (int32_t)i;
        colptr[j + 1] = k;
    }
    double *values = malloc((size_t)(k * rc + 1) * sizeof *values);
    assert_non_null(values);
    for (size_t t = 0; t < (size_t)k * rc; t++) values[t] = sbm_test_rng_value(&g);
    sbm_cbc *A = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_create(ctx, &A, nbr, nbc, r, c, colptr, rowind, values));
    free(values);
    free(rowind);
    free(colptr);
    return A;
}

sbm_cbc *sbm_test_random_bdiag_spd(sbm_ctx *ctx, uint64_t seed, int64_t nb, int b)
{
    sbm_test_rng g = sbm_test_rng_seed(seed);
    size_t bb = (size_t)b * b;
    int64_t *colptr = malloc((size_t)(nb + 1) * sizeof *colptr);
    int32_t *rowind = malloc((size_t)(nb + 1) * sizeof *rowind);
    double *values = malloc((size_t)(nb * bb + 1) * sizeof *values);
    double *m = malloc(bb * sizeof *m);
    assert_true(colptr && rowind && values && m);
    colptr[0] = 0;
    for (int64_t k = 0; k < nb; k++) {
        colptr[k + 1] = k + 1;
        rowind[k] = (int32_t)k;
        /* M^T M + b I is SPD and well conditioned */
        for (size_t t = 0; t < bb; t++) m[t] = sbm_test_rng_value(&g);
        double *d = values + (size_t)k * bb;
        for (int i = 0; i < b; i++)
            for (int j = 0; j < b; j++) {
                double s = (i == j) ? (double)b : 0.0;
                for (int p = 0; p < b; p++) s += m[p + i * b] * m[p + j * b];
                d[i + j * b] = s;
            }
    }
    sbm_cbc *D = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_create(ctx, &D, nb, nb, b, b, colptr, rowind, values));
    free(m);
    free(values);
    free(rowind);
    free(colptr);
    return D;
}

sbm_csr *sbm_test_random_csr(sbm_ctx *ctx, uint64_t seed, int64_t m, int64_t n, double density)
{
    sbm_test_rng g = sbm_test_rng_seed(seed);
    int64_t *rowptr = malloc((size_t)(m + 1) * sizeof *rowptr);
    int32_t *colind = malloc((size_t)(m * n + 1) * sizeof *colind);
    double *values = malloc((size_t)(m * n + 1) * sizeof *values);
    assert_true(rowptr && colind && values);
    int64_t k = 0;
    rowptr[0] = 0;
    for (int64_t i = 0; i < m; i++) {
        for (int64_t j = 0; j < n; j++)
            if (sbm_test_rng_uniform(&g) < density) {
                colind[k] = (int32_t)j;
                values[k++] = sbm_test_rng_value(&g);
            }
        rowptr[i + 1] = k;
    }
    sbm_csr *A = NULL;
    SBM_ASSERT_OK(ctx, sbm_csr_create(ctx, &A, m, n, rowptr, colind, values));
    free(values);
    free(colind);
    free(rowptr);
    return A;
}

double *sbm_test_random_vector(uint64_t seed, int64_t n)
{
    sbm_test_rng g = sbm_test_rng_seed(seed);
    double *x = malloc((size_t)(n + 1) * sizeof *x);
    assert_non_null(x);
    for (int64_t i = 0; i < n; i++) x[i] = sbm_test_rng_value(&g);
    return x;
}

static sbm_ctx *sbm_test_host_ctx(void)
{
    static sbm_ctx *host;
    if (!host) assert_int_equal(sbm_ctx_create(&host, SBM_BACKEND_CPU, 0), SBM_SUCCESS);
    return host;
}

sbm_cbc *sbm_test_cbc_to_host(const sbm_cbc *A)
{
    sbm_ctx *host = sbm_test_host_ctx();
    sbm_cbc *H = NULL;
    SBM_ASSERT_OK(host, sbm_cbc_copy(host, A, &H));
    return H;
}

sbm_csr *sbm_test_csr_to_host(const sbm_csr *A)
{
    sbm_ctx *host = sbm_test_host_ctx();
    sbm_csr *H = NULL;
    SBM_ASSERT_OK(host, sbm_csr_copy(host, A, &H));
    return H;
}

double *sbm_test_cbc_dense(const sbm_cbc *A)
{
    sbm_cbc *H = sbm_test_cbc_to_host(A);
    sbm_cbc_info a = sbm_cbc_get_info(H);
    int64_t m = a.nbr * a.r, n = a.nbc * a.c;
    double *d = calloc((size_t)(m * n + 1), sizeof *d);
    assert_non_null(d);
    for (int64_t j = 0; j < a.nbc; j++)
        for (int64_t p = a.colptr[j]; p < a.colptr[j + 1]; p++)
            for (int jj = 0; jj < a.c; jj++)
                for (int ii = 0; ii < a.r; ii++)
                    d[(a.rowind[p] * a.r + ii) + (j * a.c + jj) * m] =
                        a.values[(size_t)p * a.r * a.c + ii + (size_t)jj * a.r];
    sbm_cbc_destroy(H);
    return d;
}

double *sbm_test_csr_dense(const sbm_csr *A)
{
    sbm_csr *H = sbm_test_csr_to_host(A);
    sbm_csr_info a = sbm_csr_get_info(H);
    double *d = calloc((size_t)(a.m * a.n + 1), sizeof *d);
    assert_non_null(d);
    for (int64_t i = 0; i < a.m; i++)
        for (int64_t p = a.rowptr[i]; p < a.rowptr[i + 1]; p++) d[i + a.colind[p] * a.m] += a.values[p];
    sbm_csr_destroy(H);
    return d;
}

double *sbm_test_dense_gemm(int ta, const double *A, int64_t am, int64_t an, int tb,
                            const double *B, int64_t bm, int64_t bn)
{
    int64_t m = ta ? an : am, k = ta ? am : an, k2 = tb ? bn : bm, n = tb ? bm : bn;
    assert_int_equal(k, k2);
    double *C = calloc((size_t)(m * n + 1), sizeof *C);
    assert_non_null(C);
    for (int64_t j = 0; j < n; j++)
        for (int64_t p = 0; p < k; p++) {
            double b = tb ? B[j + p * bm] : B[p + j * bm];
            if (b == 0.0) continue;
            for (int64_t i = 0; i < m; i++) C[i + j * m] += (ta ? A[p + i * am] : A[i + p * am]) * b;
        }
    return C;
}

void sbm_test_assert_near(const double *got, const double *want, int64_t n, double tol,
                          const char *what)
{
    double scale = 0.0;
    for (int64_t t = 0; t < n; t++) scale = fmax(scale, fabs(want[t]));
    for (int64_t t = 0; t < n; t++) {
        double err = fabs(got[t] - want[t]);
        if (!(err <= tol * (scale + fabs(want[t])))) {
            fail_msg("%s: element %" PRId64 " is %.17g, expected %.17g (error %.3g, tolerance %.3g)",
                     what, t, got[t], want[t], err, tol * (scale + fabs(want[t])));
        }
    }
}

void sbm_test_assert_cbc_dense(const sbm_cbc *A, const double *want, double tol)
{
    sbm_ctx *host = sbm_test_host_ctx();
    sbm_cbc *H = sbm_test_cbc_to_host(A);
    SBM_ASSERT_OK(host, sbm_cbc_check(host, H, 0));
    sbm_cbc_destroy(H);
    sbm_cbc_info a = sbm_cbc_get_info(A);
    double *got = sbm_test_cbc_dense(A);
    sbm_test_assert_near(got, want, a.nbr * a.r * a.nbc * a.c, tol, "CBC matrix");
    free(got);
}

void sbm_test_assert_csr_dense(const sbm_csr *A, const double *want, double tol)
{
    sbm_ctx *host = sbm_test_host_ctx();
    sbm_csr *H = sbm_test_csr_to_host(A);
    SBM_ASSERT_OK(host, sbm_csr_check(host, H, 0));
    sbm_csr_destroy(H);
    sbm_csr_info a = sbm_csr_get_info(A);
    double *got = sbm_test_csr_dense(A);
    sbm_test_assert_near(got, want, a.m * a.n, tol, "CSR matrix");
    free(got);
}

void sbm_test_assert_fails_(sbm_ctx *ctx, sbm_status got, sbm_status want, const char *substr,
                            const char *expr, const char *file, int line)
{
    const char *msg = sbm_ctx_last_error(ctx);
    if (got != want) {
        print_error("%s returned %s, expected %s (message: %s)\n", expr, sbm_status_name(got),
                    sbm_status_name(want), msg);
        _fail(file, line);
    }
    if (substr && !strstr(msg, substr)) {
        print_error("%s: message \"%s\" lacks \"%s\"\n", expr, msg, substr);
        _fail(file, line);
    }
}

void sbm_test_assert_ok_(sbm_ctx *ctx, sbm_status got, const char *expr, const char *file, int line)
{
    if (got != SBM_SUCCESS) {
        print_error("%s returned %s: %s\n", expr, sbm_status_name(got), sbm_ctx_last_error(ctx));
        _fail(file, line);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Temporary directories, vectors in the context's memory                                  */
/* ---------------------------------------------------------------------------------------- */

char sbm_test_tmp_dir[512];

int sbm_test_make_tmp_dir(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(sbm_test_tmp_dir, sizeof sbm_test_tmp_dir, "%s/sbm_test_XXXXXX",
             base && *base ? base : "/tmp");
    return mkdtemp(sbm_test_tmp_dir) ? 0 : -1;
}

const char *sbm_test_tmp_path(const char *name)
{
    static char buf[16][1024];
    static int next;
    char *p = buf[next++ % 16];
    snprintf(p, sizeof buf[0], "%s/%s", sbm_test_tmp_dir, name);
    return p;
}

const char *sbm_test_write_text(const char *name, const char *text)
{
    const char *p = sbm_test_tmp_path(name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
    return p;
}

int sbm_test_remove_tmp_dir(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", sbm_test_tmp_dir);
    return system(cmd) == 0 ? 0 : -1;
}

double *sbm_test_vec_upload(sbm_ctx *ctx, const double *h, int64_t n)
{
    size_t bytes = (size_t)n * sizeof(double);
    double *d = sbm__alloc(ctx, bytes, "a test array");
    assert_non_null(d);
    if (n > 0) SBM_ASSERT_OK(ctx, ctx->ops->copy(ctx, d, h, bytes, 0));
    return d;
}

void sbm_test_vec_download_into(sbm_ctx *ctx, double *h, const double *d, int64_t n)
{
    if (n > 0) SBM_ASSERT_OK(ctx, ctx->ops->copy(ctx, h, d, (size_t)n * sizeof(double), 1));
}

double *sbm_test_vec_download(sbm_ctx *ctx, const double *d, int64_t n)
{
    double *h = malloc(((size_t)n + 1) * sizeof *h);
    assert_non_null(h);
    sbm_test_vec_download_into(ctx, h, d, n);
    return h;
}

void sbm_test_assert_same_cbc(const sbm_cbc *X, const sbm_cbc *Y, double tol)
{
    sbm_cbc *hx = sbm_test_cbc_to_host(X), *hy = sbm_test_cbc_to_host(Y);
    sbm_cbc_info x = sbm_cbc_get_info(hx), y = sbm_cbc_get_info(hy);
    assert_int_equal(x.nbr, y.nbr);
    assert_int_equal(x.nbc, y.nbc);
    assert_int_equal(x.r, y.r);
    assert_int_equal(x.c, y.c);
    assert_int_equal(x.nnzb, y.nnzb);
    assert_memory_equal(x.colptr, y.colptr, (size_t)(x.nbc + 1) * sizeof(int64_t));
    if (x.nnzb > 0) assert_memory_equal(x.rowind, y.rowind, (size_t)x.nnzb * sizeof(int32_t));
    const int64_t n = x.nnzb * x.r * x.c;
    if (tol < 0.0) {
        if (n > 0) assert_memory_equal(x.values, y.values, (size_t)n * sizeof(double));
    } else {
        sbm_test_assert_near(x.values, y.values, n, tol, "values");
    }
    sbm_cbc_destroy(hx);
    sbm_cbc_destroy(hy);
}
