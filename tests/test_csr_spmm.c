/* SPDX-License-Identifier: BSD-3-Clause */
/* Scalar CSR SpMM C = alpha*A*B + beta*C with dense B and C. On the CUDA backend every check runs
 * once per kernel (the tuning's csr_spmm = ROWSPLIT, MERGE, and AUTO for the automatic choice);
 * the CPU backend runs them once. Checked against a host reference summed from A's stored
 * entries, element by element, with a tolerance scaled by the sum of the magnitudes of the
 * element's terms:
 *   - seeded random matrices (uniform, power-law rows, empty rows, one dense row longer than a
 *     merge tile, many merge tiles, rectangular, no entries, empty shapes), ncols 1, 2, 3, 8, 16,
 *     31, 32, 33, 64, 100, both layouts, tight, odd and even padded leading dimensions, B not
 *     16-byte aligned (the scalar-load paths), alpha/beta pairs with NaN in C where beta = 0;
 *     padding of C untouched, B unchanged;
 *   - every Matrix Market file in the data directory's mtx/ folder;
 *   - determinism: two GPU runs bitwise equal;
 *   - the merge kernel under a memory budget too small for its carry-outs;
 *   - ncols = 0 and empty shapes, and every error path. */
#include "csr_test_common.h"

#include <dirent.h>
#include <stdio.h>

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

/* ---------------------------------------------------------------------------------------- */
/* Helpers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Kernels to force through the context's tuning (AUTO: the automatic choice); the CPU backend
 * has one. */
static const sbm_tune_csr_spmm kernels[] = {SBM_TUNE_CSR_SPMM_ROWSPLIT, SBM_TUNE_CSR_SPMM_MERGE,
                                            SBM_TUNE_CSR_SPMM_AUTO};
static const char *const kernel_names[] = {"rowsplit", "merge", "auto"};

static int nkernels(const sbm_test_env *e) { return e->backend == SBM_BACKEND_CUDA ? 3 : 1; }

static const char *kernel_name(const sbm_test_env *e, int k)
{
    if (e->backend != SBM_BACKEND_CUDA) return "cpu";
    return kernel_names[k];
}

/* Force kernel k (the CPU context stores the tuning and ignores it). */
static void force_kernel(sbm_test_env *e, int k)
{
    sbm_tuning t = sbm_tuning_default();
    t.csr_spmm = kernels[k];
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, &t));
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

/* One SpMM problem on the host: A, B's values (column-major n x ncols), the layout, leading
 * dimensions and alignment offset of B, the initial C (sentinel -777 in its padding, NaN in
 * the matrix where beta == 0), and the expected C with a bound per element. */
typedef struct problem {
    const hcsr *a;
    int64_t ncols;
    sbm_layout layout;
    int64_t ldb, ldc;
    int64_t boff;     /* elements between the allocation and B (1: B not 16-byte aligned) */
    double alpha, beta;
    double *bval;     /* B(i, j) = bval[i + j*n] */
    double *B;        /* B in layout, NaN in the padding (boff + span elements) */
    int64_t nb, nc;   /* spans of B and C */
    double *C0;       /* initial C */
    double *want;     /* expected C */
    double *tol;      /* bound on |C - want| per element (0 in the padding) */
} problem;

static void problem_free(problem *p)
{
    free(p->bval);
    free(p->B);
    free(p->C0);
    free(p->want);
    free(p->tol);
    memset(p, 0, sizeof *p);
}

/* The reference: C(i,j) = alpha * sum_p A(i,p) B(p,j) + beta * C(i,j) over the stored entries of
 * row i in order; the bound is 1e-15 * (row length + 4) times the sum of the terms' magnitudes,
 * which covers any summation order and fused multiply-adds. */
static problem problem_make(const hcsr *a, int64_t ncols, sbm_layout layout, int64_t ldb,
                            int64_t ldc, int64_t boff, double alpha, double beta, uint64_t seed)
{
    problem p = {a, ncols, layout, ldb, ldc, boff, alpha, beta, NULL, NULL, 0, 0, NULL, NULL, NULL};
    const int64_t m = a->m, n = a->n;
    p.nb = span(layout, ldb, n, ncols);
    p.nc = span(layout, ldc, m, ncols);
    p.bval = malloc(((size_t)(n * ncols) + 1) * sizeof *p.bval);
    p.B = malloc(((size_t)(p.nb + boff) + 1) * sizeof *p.B);
    p.C0 = malloc(((size_t)p.nc + 1) * sizeof *p.C0);
    p.want = malloc(((size_t)p.nc + 1) * sizeof *p.want);
    p.tol = calloc((size_t)p.nc + 1, sizeof *p.tol);
    assert_true(p.bval && p.B && p.C0 && p.want && p.tol);
    sbm_test_rng g = sbm_test_rng_seed(seed);
    for (int64_t t = 0; t < p.nb + boff; t++) p.B[t] = NAN;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < ncols; j++)
            p.B[boff + at(layout, ldb, i, j)] = p.bval[i + j * n] = sbm_test_rng_value(&g);
    for (int64_t t = 0; t < p.nc; t++) p.C0[t] = -777.0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < ncols; j++)
            p.C0[at(layout, ldc, i, j)] = beta == 0.0 ? NAN : sbm_test_rng_value(&g);
    memcpy(p.want, p.C0, (size_t)p.nc * sizeof *p.want);
    for (int64_t i = 0; i < m; i++) {
        const int64_t p0 = a->rowptr[i], p1 = a->rowptr[i + 1];
        for (int64_t j = 0; j < ncols; j++) {
            double sum = 0, mag = 0;
            for (int64_t q = p0; q < p1; q++) {
                const double term = a->values[q] * p.bval[a->colind[q] + j * n];
                sum += term;
                mag += fabs(term);
            }
            const int64_t o = at(layout, ldc, i, j);
            const double c = p.want[o];
            p.want[o] = beta == 0.0 ? alpha * sum : alpha * sum + beta * c;
            p.tol[o] = 1e-15 * (double)(p1 - p0 + 4) *
                       (fabs(alpha) * mag + (beta == 0.0 ? 0.0 : fabs(beta * c)));
        }
    }
    return p;
}

/* Runs the problem in e's context (B and C uploaded, C downloaded into got, nc elements). */
static void problem_run(sbm_test_env *e, const problem *p, const sbm_csr *A, double *got)
{
    double *dB = sbm_test_vec_upload(e->ctx, p->B, p->nb + p->boff);
    double *dC = sbm_test_vec_upload(e->ctx, p->C0, p->nc);
    SBM_ASSERT_OK(e->ctx, sbm_csr_spmm(e->ctx, p->alpha, A, p->ncols, p->layout, dB + p->boff,
                                       p->ldb, p->beta, dC, p->ldc));
    sbm_test_vec_download_into(e->ctx, got, dC, p->nc);
    double *b_after = sbm_test_vec_download(e->ctx, dB, p->nb + p->boff);
    assert_same_bits(p->B, b_after, p->nb + p->boff, "B");
    free(b_after);
    dev_free(e->ctx, dB);
    dev_free(e->ctx, dC);
}

/* got against the reference: padding bitwise untouched, values within the bound. */
static void problem_check(const problem *p, const double *got, const char *what)
{
    const char *lay = p->layout == SBM_LAYOUT_ROW_MAJOR ? "row-major" : "column-major";
    for (int64_t t = 0; t < p->nc; t++) {
        if (p->C0[t] == -777.0) { /* padding: entries of C start in [-1, 1) or NaN */
            if (got[t] != -777.0)
                fail_msg("%s: padding of C changed at %lld (%lldx%lld, ncols %lld, %s, ldc %lld)",
                         what, (long long)t, (long long)p->a->m, (long long)p->a->n,
                         (long long)p->ncols, lay, (long long)p->ldc);
            continue;
        }
        if (!(fabs(got[t] - p->want[t]) <= p->tol[t]))
            fail_msg("%s: C[%lld] = %.17g, expected %.17g (bound %.3g; %lldx%lld, ncols %lld, %s, "
                     "ldb %lld, ldc %lld, alpha %g, beta %g)",
                     what, (long long)t, got[t], p->want[t], p->tol[t], (long long)p->a->m,
                     (long long)p->a->n, (long long)p->ncols, lay, (long long)p->ldb,
                     (long long)p->ldc, p->alpha, p->beta);
    }
}

/* Runs and checks p with every kernel of e's backend. */
static void problem_check_kernels(sbm_test_env *e, const problem *p, const sbm_csr *A,
                                  const char *what)
{
    double *got = malloc(((size_t)p->nc + 1) * sizeof *got);
    assert_non_null(got);
    for (int k = 0; k < nkernels(e); k++) {
        force_kernel(e, k);
        problem_run(e, p, A, got);
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, NULL));
        char label[256];
        snprintf(label, sizeof label, "%s [%s]", what, kernel_name(e, k));
        problem_check(p, got, label);
    }
    free(got);
}

/* ---------------------------------------------------------------------------------------- */
/* Random matrices                                                                          */
/* ---------------------------------------------------------------------------------------- */

typedef struct spmm_case {
    int64_t m, n;
    csr_kind kind;
    double density;
} spmm_case;

/* The merge kernel's tiles hold 2048 rows + entries and its groups 8*G of them (G = 1..32
 * lanes): the dense row of 3000 entries and the 3000-row matrix cross both. The automatic choice
 * sees regular (uniform) and irregular (power-law, dense-row) rows, so it takes both kernels. */
static const spmm_case cases[] = {
    {1, 1, CSR_UNIFORM, 1.0},         {40, 40, CSR_UNIFORM, 0.1},
    {150, 150, CSR_POWER, 0},         {45, 30, CSR_EMPTY_ROWS, 0.2},
    {30, 60, CSR_DENSE_ROW, 0.05},    {5, 120, CSR_UNIFORM, 0.3},
    {120, 5, CSR_UNIFORM, 0.3},       {25, 25, CSR_UNIFORM, 0.0},
    {0, 9, CSR_UNIFORM, 0.5},         {9, 0, CSR_UNIFORM, 0.5},
    {20, 3000, CSR_DENSE_ROW, 0.002}, {3000, 2500, CSR_UNIFORM, 0.002},
    {1500, 1500, CSR_POWER, 0},       {600, 400, CSR_EMPTY_ROWS, 0.01},
    {64, 200, CSR_UNIFORM, 0.6},
};

static const int64_t ncols_list[] = {1, 2, 3, 8, 16, 31, 32, 33, 64, 100};

/* alpha, beta pairs */
static const double ab[][2] = {{1.0, 0.0}, {-1.5, 0.5}, {0.5, -2.0}, {0.0, 3.0}, {2.0, 1.0}};

/* Leading dimensions: 0 tight, 1 padded by an odd count, 2 padded by an even count with B one
 * element past a 16-byte boundary. */
static void leading_dims(int pad, sbm_layout layout, const spmm_case *k, int64_t ncols,
                         int64_t *ldb, int64_t *ldc, int64_t *boff)
{
    const int64_t b0 = layout == SBM_LAYOUT_COL_MAJOR ? k->n : ncols;
    const int64_t c0 = layout == SBM_LAYOUT_COL_MAJOR ? k->m : ncols;
    *ldb = b0 + (pad == 1 ? 3 : pad == 2 ? 2 : 0);
    *ldc = c0 + (pad == 1 ? 5 : pad == 2 ? 4 : 0);
    *boff = pad == 2;
}

static void test_csr_spmm_random(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_spmm(e);
    int run = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const spmm_case *k = &cases[c];
        hcsr a = hcsr_random(4000 + c, k->m, k->n, k->kind, k->density);
        sbm_csr *A = hcsr_upload(e->ctx, &a);
        for (size_t nc = 0; nc < sizeof ncols_list / sizeof ncols_list[0]; nc++)
            for (int lay = 0; lay < 2; lay++)
                for (int pad = 0; pad < 3; pad++, run++) {
                    const int64_t ncols = ncols_list[nc];
                    const sbm_layout layout = lay ? SBM_LAYOUT_COL_MAJOR : SBM_LAYOUT_ROW_MAJOR;
                    int64_t ldb, ldc, boff;
                    leading_dims(pad, layout, k, ncols, &ldb, &ldc, &boff);
                    /* every pair meets every shape class over the sweep */
                    const double *s = ab[(c + nc + 2 * lay + 3 * pad) % 5];
                    problem p =
                        problem_make(&a, ncols, layout, ldb, ldc, boff, s[0], s[1], 5000 + run);
                    char what[96];
                    snprintf(what, sizeof what, "case %d", (int)c);
                    problem_check_kernels(e, &p, A, what);
                    problem_free(&p);
                }
        sbm_csr_destroy(A);
        hcsr_free(&a);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Matrix Market files                                                                      */
/* ---------------------------------------------------------------------------------------- */

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Every .mtx file (plain or compressed) in tests/data/mtx, ncols 1, 5, 16, 64 in both layouts. */
static void test_csr_spmm_mtx(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_spmm(e);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/mtx", sbm_test_data_dir());
    DIR *h = opendir(dir);
    if (!h) fail_msg("cannot open the data directory %s", dir);
    char names[64][256];
    int nfiles = 0;
    struct dirent *ent;
    while ((ent = readdir(h)) != NULL)
        if ((has_suffix(ent->d_name, ".mtx") || has_suffix(ent->d_name, ".mtx.gz") ||
             has_suffix(ent->d_name, ".mtx.bz2")) && nfiles < 64)
            snprintf(names[nfiles++], sizeof names[0], "%s", ent->d_name);
    closedir(h);
    assert_true(nfiles > 0);

    static const int64_t ncols_mtx[] = {1, 5, 16, 64};
    for (int f = 0; f < nfiles; f++) {
        char rel[300], path[4400];
        snprintf(rel, sizeof rel, "mtx/%.255s", names[f]);
        snprintf(path, sizeof path, "%s", sbm_test_data_path(rel));
        sbm_csr *A = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_csr_read_mtx(e->ctx, path, &A));
        sbm_csr *H = sbm_test_csr_to_host(A);
        sbm_csr_info hi = sbm_csr_get_info(H);
        /* H's arrays, borrowed read-only (hcsr has no const members) */
        hcsr a = {hi.m, hi.n, (int64_t *)hi.rowptr, (int32_t *)hi.colind, hi.values};
        spmm_case k = {hi.m, hi.n, CSR_UNIFORM, 0};
        for (size_t nc = 0; nc < sizeof ncols_mtx / sizeof ncols_mtx[0]; nc++)
            for (int lay = 0; lay < 2; lay++) {
                const sbm_layout layout = lay ? SBM_LAYOUT_COL_MAJOR : SBM_LAYOUT_ROW_MAJOR;
                int64_t ldb, ldc, boff;
                leading_dims((int)nc % 2, layout, &k, ncols_mtx[nc], &ldb, &ldc, &boff);
                const double beta = (nc + lay) % 2 ? -0.5 : 0.0;
                problem p = problem_make(&a, ncols_mtx[nc], layout, ldb, ldc, boff, 1.5, beta,
                                         (uint64_t)(100 * f + 10 * nc + lay));
                problem_check_kernels(e, &p, A, names[f]);
                problem_free(&p);
            }
        sbm_csr_destroy(H);
        sbm_csr_destroy(A);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Determinism, memory budget                                                               */
/* ---------------------------------------------------------------------------------------- */

/* Power-law rows (the merge kernel splits the long ones across groups and tiles): each kernel
 * twice on the same inputs gives the same bits. */
static void test_csr_spmm_deterministic(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_spmm(e);
    hcsr a = hcsr_random(77, 20000, 6000, CSR_POWER, 0);
    sbm_csr *A = hcsr_upload(e->ctx, &a);
    static const int64_t ncols_det[] = {3, 16, 64};
    spmm_case k = {a.m, a.n, CSR_POWER, 0};
    for (size_t nc = 0; nc < sizeof ncols_det / sizeof ncols_det[0]; nc++)
        for (int lay = 0; lay < 2; lay++) {
            const sbm_layout layout = lay ? SBM_LAYOUT_COL_MAJOR : SBM_LAYOUT_ROW_MAJOR;
            int64_t ldb, ldc, boff;
            leading_dims(0, layout, &k, ncols_det[nc], &ldb, &ldc, &boff);
            problem p = problem_make(&a, ncols_det[nc], layout, ldb, ldc, boff, 0.75, -1.25,
                                     900 + nc);
            double *g1 = malloc(((size_t)p.nc + 1) * sizeof *g1);
            double *g2 = malloc(((size_t)p.nc + 1) * sizeof *g2);
            assert_true(g1 && g2);
            for (int kk = 0; kk < nkernels(e); kk++) {
                force_kernel(e, kk);
                problem_run(e, &p, A, g1);
                problem_run(e, &p, A, g2);
                SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, NULL));
                char what[96];
                snprintf(what, sizeof what, "second run [%s], ncols %lld, %s", kernel_name(e, kk),
                         (long long)p.ncols, lay ? "column-major" : "row-major");
                assert_same_bits(g1, g2, p.nc, what);
                problem_check(&p, g1, what);
            }
            free(g1);
            free(g2);
            problem_free(&p);
        }
    sbm_csr_destroy(A);
    hcsr_free(&a);
}

/* A memory budget too small for the merge kernel's carry-outs: the result is still right (the
 * backend may take another kernel). */
static void test_csr_spmm_budget(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    require_spmm(e);
    hcsr a = hcsr_random(78, 5000, 300, CSR_POWER, 0);
    sbm_csr *A = hcsr_upload(e->ctx, &a);
    spmm_case k = {a.m, a.n, CSR_POWER, 0};
    int64_t ldb, ldc, boff;
    leading_dims(0, SBM_LAYOUT_ROW_MAJOR, &k, 24, &ldb, &ldc, &boff);
    problem p = problem_make(&a, 24, SBM_LAYOUT_ROW_MAJOR, ldb, ldc, boff, 1.0, 0.5, 31);
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, 4096));
    problem_check_kernels(e, &p, A, "budget 4096 bytes");
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, 0));
    problem_free(&p);
    sbm_csr_destroy(A);
    hcsr_free(&a);
}

/* ---------------------------------------------------------------------------------------- */
/* Degenerate shapes and errors                                                             */
/* ---------------------------------------------------------------------------------------- */

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
    for (int k = 0; k < nkernels(e); k++) {
        force_kernel(e, k);
        SBM_ASSERT_OK(e->ctx,
                      sbm_csr_spmm(e->ctx, 1.0, A, 0, SBM_LAYOUT_ROW_MAJOR, NULL, 0, 0.0, dC, 0));
        SBM_ASSERT_OK(e->ctx,
                      sbm_csr_spmm(e->ctx, 1.0, A, 0, SBM_LAYOUT_COL_MAJOR, NULL, 4, 0.0, NULL, 5));
        sbm_test_vec_download_into(e->ctx, got, dC, 15);
        assert_same_bits(c0, got, 15, "C after ncols = 0");
        /* 3x0 times 0x5: C = beta*C, B may be NULL */
        SBM_ASSERT_OK(e->ctx,
                      sbm_csr_spmm(e->ctx, 1.0, Z, 5, SBM_LAYOUT_ROW_MAJOR, NULL, 5, 2.0, dC, 5));
        sbm_test_vec_download_into(e->ctx, got, dC, 15);
        for (int t = 0; t < 15; t++) assert_true(got[t] == 2.0 * c0[t]);
        /* and beta = 0 overwrites NaN with zeros */
        double nan15[15];
        for (int t = 0; t < 15; t++) nan15[t] = NAN;
        double *dN = sbm_test_vec_upload(e->ctx, nan15, 15);
        SBM_ASSERT_OK(e->ctx,
                      sbm_csr_spmm(e->ctx, 1.0, Z, 5, SBM_LAYOUT_COL_MAJOR, NULL, 1, 0.0, dN, 3));
        sbm_test_vec_download_into(e->ctx, got, dN, 15);
        for (int t = 0; t < 15; t++) assert_true(got[t] == 0.0);
        dev_free(e->ctx, dN);
        sbm_test_vec_download_into(e->ctx, c0, dC, 15); /* the next kernel starts from here */
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, NULL));
    }
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
        SBM_TEST_BOTH(test_csr_spmm_mtx),
        SBM_TEST_BOTH(test_csr_spmm_deterministic),
        SBM_TEST_BOTH(test_csr_spmm_budget),
        SBM_TEST_BOTH(test_csr_spmm_degenerate),
        SBM_TEST_BOTH(test_csr_spmm_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
