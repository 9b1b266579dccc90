/* SPDX-License-Identifier: BSD-3-Clause */
/* Matrix Market I/O: sbm_csr_read_mtx, sbm_csr_write_mtx, sbm_cbc_write_mtx.
 *
 * The real files in tests/data/mtx are checked against a small independent parser written
 * here (sscanf + qsort), round-tripped bitwise, and multiplied (scalar CSR and CBC SpGEMM)
 * against a reference product computed here. Tiny files pin every header variant to an exact
 * dense result; malformed files check every error path by status and message (file:line). */
#define _POSIX_C_SOURCE 200809L

#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------------------- */
/* Temporary directories and files                                                          */
/* ---------------------------------------------------------------------------------------- */

typedef struct tmpdir {
    char path[512];
} tmpdir;

static void tmpdir_make(tmpdir *d)
{
    const char *base = getenv("TMPDIR");
    snprintf(d->path, sizeof d->path, "%s/sbm_test_mtx_XXXXXX", base && *base ? base : "/tmp");
    assert_non_null(mkdtemp(d->path));
}

/* Remove the directory and everything in it (one level of subdirectories). */
static void tmpdir_remove_path(const char *dir)
{
    DIR *h = opendir(dir);
    if (!h) return;
    struct dirent *ent;
    char p[1024];
    while ((ent = readdir(h)) != NULL) {
        if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, ent->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            tmpdir_remove_path(p);
        else
            unlink(p);
    }
    closedir(h);
    rmdir(dir);
}

static void tmpdir_remove(tmpdir *d) { tmpdir_remove_path(d->path); }

/* Full path of name in d (static ring of buffers, so a few can be alive at once). */
static const char *tmp_path(const tmpdir *d, const char *name)
{
    static char buf[8][1024];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, sizeof buf[0], "%s/%s", d->path, name);
    return p;
}

static const char *write_bytes(const tmpdir *d, const char *name, const char *text, size_t len)
{
    const char *p = tmp_path(d, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    return p;
}

static const char *write_text(const tmpdir *d, const char *name, const char *text)
{
    return write_bytes(d, name, text, strlen(text));
}

/* Whole file as a malloc'd NUL-terminated string. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap + 1);
    assert_non_null(s);
    size_t got;
    while ((got = fread(s + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            s = realloc(s, cap + 1);
            assert_non_null(s);
        }
    }
    fclose(f);
    s[n] = '\0';
    if (len) *len = n;
    return s;
}

/* Number of directory entries whose name contains sub. */
static int count_entries(const char *dir, const char *sub)
{
    DIR *h = opendir(dir);
    assert_non_null(h);
    int k = 0;
    struct dirent *ent;
    while ((ent = readdir(h)) != NULL)
        if (strcmp(ent->d_name, ".") && strcmp(ent->d_name, "..") && strstr(ent->d_name, sub)) k++;
    closedir(h);
    return k;
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Independent reference: a plain sscanf reader for well-formed files, sorted with qsort      */
/* ---------------------------------------------------------------------------------------- */

typedef struct ref_entry {
    int64_t i, j; /* 0-based */
    double v;
    int64_t order; /* position in the expanded list, for a stable sort */
} ref_entry;

/* Host CSR built by the test, independent of the library. */
typedef struct ref_csr {
    int64_t m, n, nnz;
    int64_t *rowptr;
    int64_t *colind;
    double *values;
} ref_csr;

static void ref_free(ref_csr *r)
{
    free(r->rowptr);
    free(r->colind);
    free(r->values);
    memset(r, 0, sizeof *r);
}

static int ref_entry_cmp(const void *a, const void *b)
{
    const ref_entry *x = a, *y = b;
    if (x->i != y->i) return x->i < y->i ? -1 : 1;
    if (x->j != y->j) return x->j < y->j ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Sorted, duplicate-summed CSR of the entries. */
static ref_csr ref_from_entries(int64_t m, int64_t n, ref_entry *e, int64_t cnt)
{
    qsort(e, (size_t)cnt, sizeof *e, ref_entry_cmp);
    ref_csr r = {m, n, 0, calloc((size_t)m + 1, sizeof(int64_t)),
                 malloc(((size_t)cnt + 1) * sizeof(int64_t)),
                 malloc(((size_t)cnt + 1) * sizeof(double))};
    assert_non_null(r.rowptr);
    assert_non_null(r.colind);
    assert_non_null(r.values);
    for (int64_t k = 0; k < cnt; k++) {
        if (r.nnz > 0 && k > 0 && e[k].i == e[k - 1].i && e[k].j == e[k - 1].j) {
            r.values[r.nnz - 1] += e[k].v;
            continue;
        }
        r.colind[r.nnz] = e[k].j;
        r.values[r.nnz] = e[k].v;
        r.rowptr[e[k].i + 1]++;
        r.nnz++;
    }
    for (int64_t i = 0; i < m; i++) r.rowptr[i + 1] += r.rowptr[i];
    return r;
}

static ref_csr ref_read(const char *path)
{
    FILE *f = sbm_test_open_plain(path); /* the data files are compressed */
    char line[4096];
    int sym = 0, skew = 0, pattern = 0, have_size = 0;
    long long m = 0, n = 0, nnz = 0, cnt = 0;
    ref_entry *e = NULL;
    int first = 1;
    while (fgets(line, sizeof line, f)) {
        if (first) {
            for (char *p = line; *p; p++)
                if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
            if (strstr(line, "matrixmarket")) {
                pattern = strstr(line, "pattern") != NULL;
                skew = strstr(line, "skew-symmetric") != NULL;
                sym = !skew && strstr(line, "symmetric") != NULL;
            }
            first = 0;
        }
        if (line[0] == '%' || strspn(line, " \t\r\n") == strlen(line)) continue;
        if (!have_size) {
            assert_int_equal(sscanf(line, "%lld %lld %lld", &m, &n, &nnz), 3);
            e = malloc(((size_t)nnz * 2 + 1) * sizeof *e);
            assert_non_null(e);
            have_size = 1;
            continue;
        }
        long long i, j;
        double v = 1.0;
        if (pattern)
            assert_int_equal(sscanf(line, "%lld %lld", &i, &j), 2);
        else
            assert_int_equal(sscanf(line, "%lld %lld %lf", &i, &j, &v), 3);
        e[cnt] = (ref_entry){i - 1, j - 1, v, cnt};
        cnt++;
        if ((sym || skew) && i != j) {
            e[cnt] = (ref_entry){j - 1, i - 1, skew ? -v : v, cnt};
            cnt++;
        }
    }
    fclose(f);
    assert_true(have_size);
    ref_csr r = ref_from_entries(m, n, e, cnt);
    free(e);
    return r;
}

static ref_csr ref_transpose(const ref_csr *a)
{
    ref_entry *e = malloc(((size_t)a->nnz + 1) * sizeof *e);
    assert_non_null(e);
    for (int64_t i = 0; i < a->m; i++)
        for (int64_t q = a->rowptr[i]; q < a->rowptr[i + 1]; q++)
            e[q] = (ref_entry){a->colind[q], i, a->values[q], q};
    ref_csr t = ref_from_entries(a->n, a->m, e, a->nnz);
    free(e);
    return t;
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* C = A*B row by row with a dense accumulator; absum holds sum |a_ik * b_kj| per entry (the
 * scale of the rounding error). Every structurally possible entry is kept, zero or not. */
static ref_csr ref_gemm(const ref_csr *a, const ref_csr *b, double **absum)
{
    assert_int_equal(a->n, b->m);
    const int64_t m = a->m, n = b->n;
    double *acc = calloc((size_t)n + 1, sizeof *acc), *abs_acc = calloc((size_t)n + 1, sizeof *acc);
    int64_t *mark = malloc(((size_t)n + 1) * sizeof *mark);
    int64_t *cols = malloc(((size_t)n + 1) * sizeof *cols);
    assert_true(acc && abs_acc && mark && cols);
    for (int64_t j = 0; j < n; j++) mark[j] = -1;
    int64_t cap = a->nnz + b->nnz + 16, nnz = 0;
    ref_csr c = {m, n, 0, calloc((size_t)m + 1, sizeof(int64_t)),
                 malloc((size_t)cap * sizeof(int64_t)),
                 malloc((size_t)cap * sizeof(double))};
    double *s = malloc((size_t)cap * sizeof(double));
    assert_true(c.rowptr && c.colind && c.values && s);
    for (int64_t i = 0; i < m; i++) {
        int64_t nc = 0;
        for (int64_t p = a->rowptr[i]; p < a->rowptr[i + 1]; p++) {
            const int64_t k = a->colind[p];
            for (int64_t q = b->rowptr[k]; q < b->rowptr[k + 1]; q++) {
                const int64_t j = b->colind[q];
                if (mark[j] != i) {
                    mark[j] = i;
                    acc[j] = 0;
                    abs_acc[j] = 0;
                    cols[nc++] = j;
                }
                acc[j] += a->values[p] * b->values[q];
                abs_acc[j] += fabs(a->values[p] * b->values[q]);
            }
        }
        qsort(cols, (size_t)nc, sizeof *cols, cmp_i64);
        if (nnz + nc > cap) {
            while (nnz + nc > cap) cap *= 2;
            c.colind = realloc(c.colind, (size_t)cap * sizeof(int64_t));
            c.values = realloc(c.values, (size_t)cap * sizeof(double));
            s = realloc(s, (size_t)cap * sizeof(double));
            assert_true(c.colind && c.values && s);
        }
        for (int64_t x = 0; x < nc; x++) {
            c.colind[nnz] = cols[x];
            c.values[nnz] = acc[cols[x]];
            s[nnz] = abs_acc[cols[x]];
            nnz++;
        }
        c.rowptr[i + 1] = nnz;
    }
    c.nnz = nnz;
    free(acc);
    free(abs_acc);
    free(mark);
    free(cols);
    *absum = s;
    return c;
}

/* ---------------------------------------------------------------------------------------- */
/* Comparisons                                                                              */
/* ---------------------------------------------------------------------------------------- */

/* The matrix (any backend) equals the reference exactly: same pattern, bitwise values. */
static void assert_csr_equals_ref(const sbm_csr *A, const ref_csr *r, const char *what)
{
    sbm_csr *H = sbm_test_csr_to_host(A);
    sbm_csr_info a = sbm_csr_get_info(H);
    if (a.m != r->m || a.n != r->n || a.nnz != r->nnz)
        fail_msg("%s: %lld x %lld with %lld entries, expected %lld x %lld with %lld", what,
                 (long long)a.m, (long long)a.n, (long long)a.nnz, (long long)r->m,
                 (long long)r->n, (long long)r->nnz);
    for (int64_t i = 0; i <= a.m; i++)
        if (a.rowptr[i] != r->rowptr[i])
            fail_msg("%s: rowptr[%lld] = %lld, expected %lld", what, (long long)i,
                     (long long)a.rowptr[i], (long long)r->rowptr[i]);
    for (int64_t q = 0; q < a.nnz; q++) {
        if (a.colind[q] != r->colind[q])
            fail_msg("%s: colind[%lld] = %d, expected %lld", what, (long long)q, (int)a.colind[q],
                     (long long)r->colind[q]);
        if (memcmp(&a.values[q], &r->values[q], sizeof(double)) != 0)
            fail_msg("%s: values[%lld] = %.17g, expected %.17g", what, (long long)q, a.values[q],
                     r->values[q]);
    }
    sbm_csr_destroy(H);
}

/* Two matrices (any backends) are bitwise identical. */
static void assert_csr_identical(const sbm_csr *A, const sbm_csr *B, const char *what)
{
    sbm_csr *HA = sbm_test_csr_to_host(A), *HB = sbm_test_csr_to_host(B);
    sbm_csr_info a = sbm_csr_get_info(HA), b = sbm_csr_get_info(HB);
    if (a.m != b.m || a.n != b.n || a.nnz != b.nnz)
        fail_msg("%s: %lld x %lld (%lld entries) vs %lld x %lld (%lld entries)", what,
                 (long long)a.m, (long long)a.n, (long long)a.nnz, (long long)b.m, (long long)b.n,
                 (long long)b.nnz);
    if (memcmp(a.rowptr, b.rowptr, (size_t)(a.m + 1) * sizeof(int64_t)) != 0)
        fail_msg("%s: row pointers differ", what);
    if (a.nnz > 0 && memcmp(a.colind, b.colind, (size_t)a.nnz * sizeof(int32_t)) != 0)
        fail_msg("%s: column indices differ", what);
    for (int64_t q = 0; q < a.nnz; q++)
        if (memcmp(&a.values[q], &b.values[q], sizeof(double)) != 0)
            fail_msg("%s: values[%lld] %.17g vs %.17g", what, (long long)q, a.values[q],
                     b.values[q]);
    sbm_csr_destroy(HA);
    sbm_csr_destroy(HB);
}

/* A product computed by the library against the reference: every reference entry is present
 * and within tol * sum|terms|; block products may store more entries (zeros inside blocks),
 * which must then be exactly zero (exact_pattern = 0); the scalar product stores exactly the
 * reference pattern (exact_pattern = 1). */
static void assert_product(const sbm_csr *C, const ref_csr *r, const double *absum,
                           int exact_pattern, const char *what)
{
    const double tol = 1e-12; /* relative to sum |a_ik b_kj|: generous for sums of <= 10^4 terms */
    sbm_csr *H = sbm_test_csr_to_host(C);
    sbm_csr_info c = sbm_csr_get_info(H);
    assert_int_equal(c.m, r->m);
    assert_int_equal(c.n, r->n);
    if (exact_pattern && c.nnz != r->nnz)
        fail_msg("%s: %lld entries, expected %lld", what, (long long)c.nnz, (long long)r->nnz);
    for (int64_t i = 0; i < c.m; i++) {
        int64_t q = r->rowptr[i];
        for (int64_t p = c.rowptr[i]; p < c.rowptr[i + 1]; p++) {
            if (q < r->rowptr[i + 1] && r->colind[q] == c.colind[p]) {
                const double d = fabs(c.values[p] - r->values[q]);
                if (d > tol * absum[q] + 1e-300)
                    fail_msg("%s: (%lld,%d) = %.17g, expected %.17g (scale %g)", what,
                             (long long)i, (int)c.colind[p], c.values[p], r->values[q], absum[q]);
                q++;
            } else if (q < r->rowptr[i + 1] && r->colind[q] < c.colind[p]) {
                fail_msg("%s: entry (%lld,%lld) of the reference is missing", what, (long long)i,
                         (long long)r->colind[q]);
            } else if (exact_pattern) {
                fail_msg("%s: (%lld,%d) is stored but not in the product's pattern", what,
                         (long long)i, (int)c.colind[p]);
            } else if (c.values[p] != 0.0) {
                fail_msg("%s: (%lld,%d) = %g outside the product's pattern", what, (long long)i,
                         (int)c.colind[p], c.values[p]);
            }
        }
        if (q != r->rowptr[i + 1])
            fail_msg("%s: row %lld: entry (%lld,%lld) of the reference is missing", what,
                     (long long)i, (long long)i, (long long)r->colind[q]);
    }
    sbm_csr_destroy(H);
}

/* ---------------------------------------------------------------------------------------- */
/* The data files                                                                           */
/* ---------------------------------------------------------------------------------------- */

/* Dimensions and entries after symmetric expansion, counted independently (awk over the files:
 * distinct (i,j) pairs, mirrored for symmetric storage). */
typedef struct data_file {
    const char *name;
    int64_t m, n, nnz;
} data_file;

static const data_file data_files[] = {
    {"LFAT5", 14, 14, 46},          {"bcsstk13", 2003, 2003, 83883},
    {"ca-CondMat", 21363, 21363, 182572}, {"cryg2500", 2500, 2500, 12349},
    {"karate", 34, 34, 156},        {"lp_afiro", 27, 51, 102},
    {"west0067", 67, 67, 294},      {"west0067_jumbled", 67, 67, 294},
};
#define NDATA ((int)(sizeof data_files / sizeof data_files[0]))

static const char *data_path(const data_file *f)
{
    static char rel[256];
    snprintf(rel, sizeof rel, "mtx/%s.mtx", f->name);
    return sbm_test_data_path(rel);
}

static sbm_csr *read_ok(sbm_ctx *ctx, const char *path)
{
    sbm_csr *A = NULL;
    SBM_ASSERT_OK(ctx, sbm_csr_read_mtx(ctx, path, &A));
    assert_non_null(A);
    SBM_ASSERT_OK(ctx, sbm_csr_check(ctx, A, 1));
    return A;
}

static void test_read_data_files(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (int f = 0; f < NDATA; f++) {
        const data_file *df = &data_files[f];
        sbm_csr *A = read_ok(e->ctx, data_path(df));
        sbm_csr_info a = sbm_csr_get_info(A);
        assert_int_equal(a.backend, e->backend);
        if (a.m != df->m || a.n != df->n || a.nnz != df->nnz)
            fail_msg("%s: read %lld x %lld with %lld entries, expected %lld x %lld with %lld",
                     df->name, (long long)a.m, (long long)a.n, (long long)a.nnz,
                     (long long)df->m, (long long)df->n, (long long)df->nnz);
        ref_csr r = ref_read(data_path(df));
        assert_int_equal(r.nnz, df->nnz); /* the two independent counts agree */
        assert_csr_equals_ref(A, &r, df->name);
        ref_free(&r);
        sbm_csr_destroy(A);
    }
}

static void test_jumbled_equals_original(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_csr *A = read_ok(e->ctx, sbm_test_data_path("mtx/west0067.mtx"));
    sbm_csr *B = read_ok(e->ctx, sbm_test_data_path("mtx/west0067_jumbled.mtx"));
    assert_csr_identical(A, B, "west0067_jumbled vs west0067");
    sbm_csr_destroy(A);
    sbm_csr_destroy(B);
}

/* Largest block size <= 32 (SBM_MAX_BLOCK_DIM) that divides both dimensions, other than 1 if
 * possible. */
static int common_block(int64_t m, int64_t n)
{
    for (int b = 8; b >= 2; b--)
        if (m % b == 0 && n % b == 0) return b;
    return 1;
}

static void test_roundtrip_data_files(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    tmpdir d;
    tmpdir_make(&d);
    for (int f = 0; f < NDATA; f++) {
        const data_file *df = &data_files[f];
        sbm_csr *A = read_ok(e->ctx, data_path(df));
        const char *out = tmp_path(&d, "roundtrip.mtx");
        SBM_ASSERT_OK(e->ctx, sbm_csr_write_mtx(e->ctx, out, A));
        assert_int_equal(count_entries(d.path, ".tmp."), 0);
        sbm_csr *B = read_ok(e->ctx, out);
        assert_csr_identical(A, B, df->name);
        /* Writing what was read back gives the same bytes: the format is canonical. */
        char *t1 = slurp(out, NULL);
        SBM_ASSERT_OK(e->ctx, sbm_csr_write_mtx(e->ctx, tmp_path(&d, "again.mtx"), B));
        char *t2 = slurp(tmp_path(&d, "again.mtx"), NULL);
        assert_string_equal(t1, t2);
        free(t1);
        free(t2);

        /* CBC writer: the scalar form of the blocked matrix, explicit zeros inside blocks kept. */
        const int b = common_block(df->m, df->n);
        sbm_cbc *Ab = NULL;
        sbm_status st = sbm_csr_to_cbc(e->ctx, A, b, b, &Ab);
        if (st == SBM_ERR_NOT_SUPPORTED && e->backend == SBM_BACKEND_CUDA) {
            sbm_csr_destroy(A);
            sbm_csr_destroy(B);
            tmpdir_remove(&d);
            skip();
        }
        SBM_ASSERT_OK(e->ctx, st);
        sbm_csr *S = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_cbc_to_csr(e->ctx, Ab, &S));
        const char *cout = tmp_path(&d, "cbc.mtx");
        SBM_ASSERT_OK(e->ctx, sbm_cbc_write_mtx(e->ctx, cout, Ab));
        sbm_csr *R = read_ok(e->ctx, cout);
        assert_csr_identical(S, R, df->name);
        sbm_csr_info s = sbm_csr_get_info(S);
        assert_int_equal(s.nnz, sbm_cbc_get_info(Ab).nnzb * b * b);
        sbm_csr_destroy(R);
        sbm_csr_destroy(S);
        sbm_cbc_destroy(Ab);
        sbm_csr_destroy(B);
        sbm_csr_destroy(A);
    }
    tmpdir_remove(&d);
}

/* ---------------------------------------------------------------------------------------- */
/* Products of the data files                                                               */
/* ---------------------------------------------------------------------------------------- */

static void test_csr_gemm_data_files(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (int f = 0; f < NDATA; f++) {
        const data_file *df = &data_files[f];
        sbm_csr *A = read_ok(e->ctx, data_path(df));
        ref_csr ra = ref_read(data_path(df));
        /* A*A for square matrices, A*A^T for rectangular ones. */
        const int rect = df->m != df->n;
        sbm_csr *B = A;
        ref_csr rb = rect ? ref_transpose(&ra) : ra;
        if (rect) SBM_ASSERT_OK(e->ctx, sbm_csr_transpose(e->ctx, A, &B));
        double *absum;
        ref_csr rc = ref_gemm(&ra, &rb, &absum);
        sbm_csr *C = NULL;
        const sbm_status st = sbm_csr_gemm(e->ctx, A, B, &C);
        if (st == SBM_ERR_NOT_SUPPORTED && e->backend == SBM_BACKEND_CUDA) {
            /* a build whose CUDA backend lacks the scalar SpGEMM: skip visibly, on CUDA only */
            print_message("sbm_csr_gemm not available: %s\n", sbm_ctx_last_error(e->ctx));
            free(absum);
            ref_free(&rc);
            if (rect) {
                ref_free(&rb);
                sbm_csr_destroy(B);
            }
            ref_free(&ra);
            sbm_csr_destroy(A);
            skip();
        }
        SBM_ASSERT_OK(e->ctx, st);
        SBM_ASSERT_OK(e->ctx, sbm_csr_check(e->ctx, C, 1));
        char what[128];
        snprintf(what, sizeof what, "%s: %s", df->name, rect ? "A*A^T" : "A*A");
        assert_product(C, &rc, absum, 1, what);
        sbm_csr_destroy(C);
        free(absum);
        ref_free(&rc);
        if (rect) {
            ref_free(&rb);
            sbm_csr_destroy(B);
        }
        ref_free(&ra);
        sbm_csr_destroy(A);
    }
}

/* Block shapes for the CBC products: A viewed with r x k blocks times B with k x c blocks.
 * Every size divides the dimensions it blocks (karate 34 = 2*17, cryg2500 = 2^2*5^4,
 * LFAT5 14 = 2*7, ca-CondMat 21363 = 3*7121; bcsstk13 2003 and west0067 67 are prime). */
typedef struct cbc_case {
    const char *name;
    int op_a, op_b; /* 0 = N, 1 = T (rectangular lp_afiro: A*A^T and A^T*A) */
    int r, k, c;    /* A: r x k blocks (op_a = T: A stored with k x r blocks) */
} cbc_case;

static const cbc_case cbc_cases[] = {
    {"LFAT5", 0, 0, 1, 1, 1},      {"LFAT5", 0, 0, 2, 2, 2},     {"LFAT5", 0, 0, 7, 7, 7},
    {"LFAT5", 0, 0, 7, 2, 14},     {"bcsstk13", 0, 0, 1, 1, 1},  {"ca-CondMat", 0, 0, 3, 3, 3},
    {"ca-CondMat", 0, 0, 3, 1, 3}, {"cryg2500", 0, 0, 2, 2, 2},  {"cryg2500", 0, 0, 4, 4, 4},
    {"cryg2500", 0, 0, 5, 5, 5},   {"cryg2500", 0, 0, 10, 10, 10}, {"cryg2500", 0, 0, 5, 2, 4},
    {"cryg2500", 0, 0, 25, 20, 25}, {"karate", 0, 0, 1, 1, 1},   {"karate", 0, 0, 2, 2, 2},
    {"karate", 0, 0, 17, 2, 17},   {"karate", 0, 0, 2, 17, 2},   {"lp_afiro", 0, 1, 3, 3, 3},
    {"lp_afiro", 0, 1, 9, 17, 9},  {"lp_afiro", 0, 1, 27, 3, 27}, {"lp_afiro", 1, 0, 3, 3, 3},
    {"lp_afiro", 1, 0, 17, 9, 17}, {"west0067", 0, 0, 1, 1, 1},
};
#define NCBC ((int)(sizeof cbc_cases / sizeof cbc_cases[0]))

static void test_cbc_gemm_data_files(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (int t = 0; t < NCBC; t++) {
        const cbc_case *cc = &cbc_cases[t];
        char rel[256], what[256];
        snprintf(rel, sizeof rel, "mtx/%s.mtx", cc->name);
        snprintf(what, sizeof what, "%s: %s(A, %dx%d) * %s(B, %dx%d)", cc->name,
                 cc->op_a ? "T" : "N", cc->r, cc->k, cc->op_b ? "T" : "N", cc->k, cc->c);
        sbm_csr *A = read_ok(e->ctx, sbm_test_data_path(rel));
        ref_csr ra = ref_read(sbm_test_data_path(rel));
        ref_csr rat = ref_transpose(&ra);
        /* Reference operands: op(A) and op(B), both scalar. */
        const ref_csr *ro_a = cc->op_a ? &rat : &ra, *ro_b = cc->op_b ? &rat : &ra;
        double *absum;
        ref_csr rc = ref_gemm(ro_a, ro_b, &absum);

        /* Stored blocks: op(A) has r x k blocks, so A itself has (op_a ? k x r : r x k). */
        sbm_cbc *Ab = NULL, *Bb = NULL, *C = NULL;
        sbm_status st = cc->op_a ? sbm_csr_to_cbc(e->ctx, A, cc->k, cc->r, &Ab)
                                 : sbm_csr_to_cbc(e->ctx, A, cc->r, cc->k, &Ab);
        if (st == SBM_SUCCESS)
            st = cc->op_b ? sbm_csr_to_cbc(e->ctx, A, cc->c, cc->k, &Bb)
                          : sbm_csr_to_cbc(e->ctx, A, cc->k, cc->c, &Bb);
        if (st == SBM_SUCCESS)
            st = sbm_cbc_gemm(e->ctx, 1.0, cc->op_a ? SBM_OP_T : SBM_OP_N, Ab,
                              cc->op_b ? SBM_OP_T : SBM_OP_N, Bb, NULL, 0, &C);
        if (st == SBM_ERR_NOT_SUPPORTED && e->backend == SBM_BACKEND_CUDA) {
            /* an operation not yet on the GPU: skip visibly, on CUDA only */
            print_message("%s: not available: %s\n", what, sbm_ctx_last_error(e->ctx));
            sbm_cbc_destroy(Ab);
            sbm_cbc_destroy(Bb);
            free(absum);
            ref_free(&rc);
            ref_free(&rat);
            ref_free(&ra);
            sbm_csr_destroy(A);
            skip();
        }
        SBM_ASSERT_OK(e->ctx, st);
        SBM_ASSERT_OK(e->ctx, sbm_cbc_check(e->ctx, C, 1));
        sbm_cbc_info ci = sbm_cbc_get_info(C);
        assert_int_equal(ci.r, cc->r);
        assert_int_equal(ci.c, cc->c);
        sbm_csr *Cs = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_cbc_to_csr(e->ctx, C, &Cs));
        assert_product(Cs, &rc, absum, cc->r == 1 && cc->k == 1 && cc->c == 1, what);
        sbm_csr_destroy(Cs);
        sbm_cbc_destroy(C);
        sbm_cbc_destroy(Bb);
        sbm_cbc_destroy(Ab);
        free(absum);
        ref_free(&rc);
        ref_free(&rat);
        ref_free(&ra);
        sbm_csr_destroy(A);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Larger files: buffer boundaries, long lines, pipes                                       */
/* ---------------------------------------------------------------------------------------- */

/* A random matrix written and read back: the file (several MiB) crosses the reader's 1 MiB
 * buffer many times, so entries split across refills are covered. */
static void test_roundtrip_random_large(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    tmpdir d;
    tmpdir_make(&d);
    sbm_csr *A = sbm_test_random_csr(e->ctx, 1234, 3000, 2500, 0.02);
    assert_non_null(A);
    const char *p = tmp_path(&d, "random.mtx");
    SBM_ASSERT_OK(e->ctx, sbm_csr_write_mtx(e->ctx, p, A));
    size_t len;
    free(slurp(p, &len));
    assert_true(len > 3 * ((size_t)1 << 20));
    sbm_csr *B = read_ok(e->ctx, p);
    assert_csr_identical(A, B, "random 3000 x 2500");
    sbm_csr_destroy(B);
    sbm_csr_destroy(A);
    tmpdir_remove(&d);
}

/* Text of a general real file with n x n entries on a grid (values with 17 digits). */
static char *grid_text(int n, size_t *len)
{
    size_t cap = (size_t)n * n * 48 + 256, k = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    k += (size_t)snprintf(s + k, cap - k,
                          "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", n, n,
                          n * n);
    for (int j = n; j >= 1; j--) /* column-major, descending: nothing comes sorted */
        for (int i = 1; i <= n; i++)
            k += (size_t)snprintf(s + k, cap - k, "%d %d %.17g\n", i, j, (i * 1000.0 + j) / 7.0);
    *len = k;
    return s;
}

static void test_pipe_and_long_lines(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    tmpdir d;
    tmpdir_make(&d);
    size_t len;
    char *text = grid_text(300, &len); /* 90000 entries: more than the reader's first reserve */
    const char *reg = write_bytes(&d, "grid.mtx", text, len);
    sbm_csr *A = read_ok(e->ctx, reg);
    assert_int_equal(sbm_csr_get_info(A).nnz, 90000);

    /* The same bytes through a FIFO: no file size, so the entry arrays grow while reading. */
    const char *fifo = tmp_path(&d, "grid.fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    fflush(NULL);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *w = fopen(fifo, "wb");
        if (!w) _exit(1);
        const size_t put = fwrite(text, 1, len, w);
        _exit(fclose(w) == 0 && put == len ? 0 : 1);
    }
    sbm_csr *B = NULL;
    const sbm_status st = sbm_csr_read_mtx(e->ctx, fifo, &B);
    int wstatus = 0;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    SBM_ASSERT_OK(e->ctx, st);
    assert_true(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
    assert_csr_identical(A, B, "grid through a FIFO");
    sbm_csr_destroy(B);

    /* A 3 MiB comment line before the size line and another among the entries: the line
     * buffer grows instead of cutting the line. */
    const size_t big = (size_t)3 << 20;
    char *longtext = malloc(2 * big + 512);
    assert_non_null(longtext);
    size_t k = (size_t)sprintf(longtext, "%%%%MatrixMarket matrix coordinate real general\n%%");
    memset(longtext + k, 'x', big);
    k += big;
    k += (size_t)sprintf(longtext + k, "\n2 2 2\n1 1 0.5\n%%");
    memset(longtext + k, 'y', big);
    k += big;
    k += (size_t)sprintf(longtext + k, "\n2 2 -1.25\n");
    sbm_csr *L = read_ok(e->ctx, write_bytes(&d, "long.mtx", longtext, k));
    const double want[4] = {0.5, 0, 0, -1.25};
    sbm_test_assert_csr_dense(L, want, 0);
    sbm_csr_destroy(L);

    free(longtext);
    free(text);
    sbm_csr_destroy(A);
    tmpdir_remove(&d);
}

/* ---------------------------------------------------------------------------------------- */
/* Tiny files with exact results                                                            */
/* ---------------------------------------------------------------------------------------- */

/* Read text as a file and compare with the column-major dense want (m x n) and nnz. */
static void check_tiny(sbm_test_env *e, const tmpdir *d, const char *name, const char *text,
                       int64_t m, int64_t n, int64_t nnz, const double *want)
{
    sbm_csr *A = read_ok(e->ctx, write_text(d, name, text));
    sbm_csr_info a = sbm_csr_get_info(A);
    if (a.m != m || a.n != n || a.nnz != nnz)
        fail_msg("%s: %lld x %lld with %lld entries, expected %lld x %lld with %lld", name,
                 (long long)a.m, (long long)a.n, (long long)a.nnz, (long long)m, (long long)n,
                 (long long)nnz);
    if (m * n > 0) sbm_test_assert_csr_dense(A, want, 0);
    sbm_csr_destroy(A);
}

static void test_tiny_variants(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    tmpdir d;
    tmpdir_make(&d);

    /* One percent sign and mixed-case keywords (as in ca-CondMat.mtx). */
    const double w1[6] = {1.5, 0, 0.25, 0, 0, -2}; /* 2 x 3 column-major */
    check_tiny(e, &d, "onepercent.mtx",
               "%MatrixMarket MATRIX Coordinate REAL General\n2 3 3\n1 1 1.5\n2 3 -2\n1 2 0.25\n",
               2, 3, 3, w1);
    /* No banner: comments, then a size line -> real general. */
    const double w2[4] = {0, 4, 3, 0};
    check_tiny(e, &d, "nobanner.mtx", "% just a comment\n\n2 2 2\n1 2 3\n2 1 4\n", 2, 2, 2, w2);
    check_tiny(e, &d, "nobanner2.mtx", "2 2 2\n1 2 3\n2 1 4", 2, 2, 2, w2);
    /* Comments and blank lines between entries, CRLF, tabs, signs, exponents, no final newline. */
    const double w3[9] = {1, 0, -0.7, 0, 2.5, 0, 0, 0, 0.5};
    check_tiny(e, &d, "messy.mtx",
               "%%MatrixMarket matrix coordinate real general\r\n% c\r\n\r\n  3 3 4 \r\n"
               "1\t1\t1e0\r\n% mid comment\r\n\r\n   \t\r\n2 2 +2.5\r\n   3 1 -7E-1\r\n"
               "% another\n+3 +3 .5",
               3, 3, 4, w3);
    /* Symmetric: lower-triangle entries mirrored; an upper-triangle entry is mirrored too. */
    const double w4[9] = {2, -1, 7, -1, 0, 5, 7, 5, 0};
    check_tiny(e, &d, "sym.mtx",
               "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 2\n2 1 -1\n3 2 5\n"
               "1 3 7\n",
               3, 3, 7, w4);
    /* Skew-symmetric: mirrored negated. */
    const double w5[9] = {0, 3, -4, -3, 0, 0, 4, 0, 0};
    check_tiny(e, &d, "skew.mtx",
               "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 3\n3 1 -4\n", 3,
               3, 4, w5);
    /* Pattern general and symmetric: entries are 1. */
    const double w6[6] = {1, 0, 0, 1, 0, 1};
    check_tiny(e, &d, "pattern.mtx",
               "%%MatrixMarket matrix coordinate pattern general\n2 3 3\n1 1\n2 2\n2 3\n", 2, 3,
               3, w6);
    const double w7[9] = {1, 1, 0, 1, 0, 1, 0, 1, 0};
    check_tiny(e, &d, "patsym.mtx",
               "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n2 1\n3 2\n", 3, 3,
               5, w7);
    /* Integer symmetric, and the 'double' alias of real. */
    const double w8[4] = {-3, 7, 7, 12};
    check_tiny(e, &d, "int.mtx",
               "%%MatrixMarket matrix coordinate integer symmetric\n2 2 3\n1 1 -3\n2 1 7\n2 2 12\n",
               2, 2, 4, w8);
    check_tiny(e, &d, "double.mtx",
               "%%matrixmarket matrix coordinate double symmetric\n2 2 3\n1 1 -3\n2 1 7\n2 2 12\n",
               2, 2, 4, w8);
    /* Duplicates are summed; a sum that cancels stays stored (no numeric dropping). */
    const double w9[4] = {3.5, 0, 0, 0};
    check_tiny(e, &d, "dups.mtx",
               "%%MatrixMarket matrix coordinate real general\n2 2 4\n1 1 1\n2 1 1\n1 1 2.5\n"
               "2 1 -1\n",
               2, 2, 2, w9);
    /* Symmetric file that stores both (2,1) and (1,2): mirroring each would add them into
     * twice the value, silently; refused, naming both lines. */
    sbm_csr *B = (sbm_csr *)&B;
    SBM_ASSERT_FAILS(e->ctx,
                     sbm_csr_read_mtx(e->ctx,
                                      write_text(&d, "bothtri.mtx",
                                                 "%%MatrixMarket matrix coordinate real "
                                                 "symmetric\n2 2 2\n2 1 1\n1 2 2\n"),
                                      &B),
                     SBM_ERR_PARSE, "bothtri.mtx:4: entry (1,2) mirrors the entry (2,1) on line 3");
    assert_null(B);
    /* Empty matrices. */
    check_tiny(e, &d, "empty0.mtx", "%%MatrixMarket matrix coordinate real general\n0 0 0\n", 0, 0,
               0, NULL);
    const double w11[12] = {0};
    check_tiny(e, &d, "empty34.mtx", "%%MatrixMarket matrix coordinate real general\n3 4 0\n", 3,
               4, 0, w11);
    /* Subnormal values and negative zero survive. */
    sbm_csr *S = read_ok(e->ctx, write_text(&d, "tiny.mtx",
                                            "%%MatrixMarket matrix coordinate real general\n"
                                            "1 2 2\n1 1 4.9406564584124654e-324\n1 2 -0\n"));
    sbm_csr *Sh = sbm_test_csr_to_host(S);
    sbm_csr_info s = sbm_csr_get_info(Sh);
    assert_int_equal(s.nnz, 2);
    assert_true(s.values[0] > 0 && s.values[0] < 1e-320);
    assert_true(s.values[1] == 0 && signbit(s.values[1]));
    sbm_csr_destroy(Sh);
    /* ... and through the writer, bitwise. */
    const char *p = tmp_path(&d, "tiny_out.mtx");
    SBM_ASSERT_OK(e->ctx, sbm_csr_write_mtx(e->ctx, p, S));
    sbm_csr *S2 = read_ok(e->ctx, p);
    assert_csr_identical(S, S2, "subnormal and -0");
    sbm_csr_destroy(S2);
    sbm_csr_destroy(S);
    tmpdir_remove(&d);
}

/* Host allocator that records the largest single request and refuses those above a cap. */
typedef struct capped_alloc {
    size_t cap, largest;
} capped_alloc;

static void *capped_malloc(void *user, size_t bytes)
{
    capped_alloc *c = (capped_alloc *)user;
    if (bytes > c->largest) c->largest = bytes;
    return bytes > c->cap ? NULL : malloc(bytes ? bytes : 1);
}

static void capped_free(void *user, void *ptr)
{
    (void)user;
    free(ptr);
}

/* Small files announcing huge dimensions (fuzz_mtx found the first: 2 x 222222222 took 15 s and
 * 1.8 GB of column counts under ASan). A general matrix much wider than its rows and entries is
 * read in memory independent of n: on the CPU backend no single allocation exceeds the reader's
 * 1 MiB line buffer for 2 x 2e9. A header of 2e9 rows needs 16 GB of row pointers, which CSR cannot avoid: with an
 * allocator that refuses it, the read fails with SBM_ERR_OUT_OF_MEMORY and a message. */
static void test_huge_dimensions(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    tmpdir d;
    tmpdir_make(&d);
    capped_alloc cap = {(size_t)1 << 30, 0};
    const sbm_allocator al = {capped_malloc, capped_free, &cap};
    if (e->backend == SBM_BACKEND_CPU) SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, &al));

    /* row 1: (1, 2e9) = 1.5, (1, 7) = -1 and its duplicate 0.25; row 2: (2, 7) = 2 */
    sbm_csr *A = read_ok(e->ctx, write_text(&d, "wide.mtx",
                                            "%%MatrixMarket matrix coordinate real general\n"
                                            "2 2000000000 4\n1 2000000000 1.5\n2 7 2\n1 7 -1\n"
                                            "1 7 0.25\n"));
    sbm_csr *Ah = sbm_test_csr_to_host(A);
    sbm_csr_info a = sbm_csr_get_info(Ah);
    assert_int_equal(a.m, 2);
    assert_int_equal(a.n, 2000000000);
    assert_int_equal(a.nnz, 3);
    const int64_t rp[3] = {0, 2, 3};
    const int32_t ci[3] = {6, 1999999999, 6};
    const double v[3] = {-0.75, 1.5, 2};
    assert_memory_equal(a.rowptr, rp, sizeof rp);
    assert_memory_equal(a.colind, ci, sizeof ci);
    assert_memory_equal(a.values, v, sizeof v);
    sbm_csr_destroy(Ah);
    sbm_csr_destroy(A);
    if (e->backend == SBM_BACKEND_CPU) {
        /* the largest is the reader's 1 MiB line buffer (+1); n = 2e9 would need 16 GB */
        assert_true(cap.largest <= ((size_t)1 << 20) + 1);
        SBM_ASSERT_FAILS(e->ctx,
                         sbm_csr_read_mtx(e->ctx,
                                          write_text(&d, "tall.mtx",
                                                     "%%MatrixMarket matrix coordinate real general\n"
                                                     "2000000000 2 0\n"),
                                          &A),
                         SBM_ERR_OUT_OF_MEMORY, "sbm_csr_read_mtx");
        assert_null(A);
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, NULL));
    }
    tmpdir_remove(&d);
}

/* The writer's exact output for a small matrix, empty matrices, and the CBC writer. */
static void test_write_format(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    tmpdir d;
    tmpdir_make(&d);
    const int64_t rowptr[3] = {0, 2, 3};
    const int32_t colind[3] = {0, 1, 2};
    const double values[3] = {1.5, 0.1, -2};
    sbm_csr *A = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_csr_create(e->ctx, &A, 2, 3, rowptr, colind, values));
    const char *p = tmp_path(&d, "small.mtx");
    SBM_ASSERT_OK(e->ctx, sbm_csr_write_mtx(e->ctx, p, A));
    char *text = slurp(p, NULL);
    assert_string_equal(text, "%%MatrixMarket matrix coordinate real general\n2 3 3\n1 1 1.5\n"
                              "1 2 0.10000000000000001\n2 3 -2\n");
    free(text);
    /* Overwriting an existing file replaces it. */
    const int64_t rp1[3] = {0, 0, 1};
    sbm_csr *A1 = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_csr_create(e->ctx, &A1, 2, 3, rp1, colind + 2, values + 2));
    SBM_ASSERT_OK(e->ctx, sbm_csr_write_mtx(e->ctx, p, A1));
    text = slurp(p, NULL);
    assert_string_equal(text, "%%MatrixMarket matrix coordinate real general\n2 3 1\n2 3 -2\n");
    free(text);
    assert_int_equal(count_entries(d.path, ".tmp."), 0);
    sbm_csr_destroy(A1);

    /* Empty: 0 x 0 and 3 x 4 without entries. */
    const int64_t zero[5] = {0, 0, 0, 0, 0};
    sbm_csr *Z = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_csr_create(e->ctx, &Z, 0, 0, zero, NULL, NULL));
    SBM_ASSERT_OK(e->ctx, sbm_csr_write_mtx(e->ctx, p, Z));
    text = slurp(p, NULL);
    assert_string_equal(text, "%%MatrixMarket matrix coordinate real general\n0 0 0\n");
    free(text);
    sbm_csr *Z2 = read_ok(e->ctx, p);
    assert_csr_identical(Z, Z2, "0 x 0");
    sbm_csr_destroy(Z2);
    sbm_csr_destroy(Z);
    SBM_ASSERT_OK(e->ctx, sbm_csr_create(e->ctx, &Z, 3, 4, zero, NULL, NULL));
    SBM_ASSERT_OK(e->ctx, sbm_csr_write_mtx(e->ctx, p, Z));
    Z2 = read_ok(e->ctx, p);
    assert_csr_identical(Z, Z2, "3 x 4 empty");
    sbm_csr_destroy(Z2);
    sbm_csr_destroy(Z);

    /* CBC: 2 x 2 blocks of 2 x 3, block (0,0) and (1,1) stored; zeros inside blocks are
     * written as stored entries. Blocks are column-major. */
    const int64_t colptr[3] = {0, 1, 2};
    const int32_t rowind[2] = {0, 1};
    const double bvals[12] = {1, 2, 0, 4, 5, 6, /* block (0,0) */ -1, 0, -3, -4, -5, -6};
    sbm_cbc *B = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_cbc_create(e->ctx, &B, 2, 2, 2, 3, colptr, rowind, bvals));
    const char *pb = tmp_path(&d, "cbc.mtx");
    SBM_ASSERT_OK(e->ctx, sbm_cbc_write_mtx(e->ctx, pb, B));
    sbm_csr *R = read_ok(e->ctx, pb);
    assert_int_equal(sbm_csr_get_info(R).m, 4);
    assert_int_equal(sbm_csr_get_info(R).n, 6);
    assert_int_equal(sbm_csr_get_info(R).nnz, 12);
    double *want = sbm_test_cbc_dense(B);
    sbm_test_assert_csr_dense(R, want, 0);
    free(want);
    text = slurp(pb, NULL);
    assert_non_null(strstr(text, "\n4 6 12\n1 1 1\n1 2 0\n1 3 5\n2 1 2\n2 2 4\n2 3 6\n3 4 -1\n"));
    free(text);
    sbm_csr_destroy(R);
    sbm_cbc_destroy(B);

    sbm_csr_destroy(A);
    tmpdir_remove(&d);
}

/* ---------------------------------------------------------------------------------------- */
/* Malformed files                                                                          */
/* ---------------------------------------------------------------------------------------- */

/* Reading text as name fails with status and a message containing "name:<substr>". */
static void check_bad(sbm_test_env *e, const tmpdir *d, const char *name, const char *text,
                      size_t len, sbm_status status, const char *substr)
{
    const char *p = write_bytes(d, name, text, len);
    sbm_csr *A = (sbm_csr *)&A; /* not NULL: the call must clear it */
    char want[512];
    snprintf(want, sizeof want, "%s:%s", name, substr);
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_read_mtx(e->ctx, p, &A), status, want);
    assert_null(A);
    /* the message starts with the call name, then the full path */
    const char *msg = sbm_ctx_last_error(e->ctx);
    assert_non_null(strstr(msg, "sbm_csr_read_mtx"));
    assert_non_null(strstr(msg, p));
}

#define BAD(name, text, status, substr) check_bad(e, &d, name, text, strlen(text), status, substr)
#define MM "%%MatrixMarket matrix coordinate real general\n"

static void test_malformed(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    tmpdir d;
    tmpdir_make(&d);

    /* Empty, truncated, missing size line */
    BAD("empty.mtx", "", SBM_ERR_PARSE, "1: the file is empty");
    BAD("blank.mtx", "  \n\n\t\n", SBM_ERR_PARSE, "3: the file is empty");
    BAD("trunc.mtx", MM "3 3 3\n1 1 1\n2 2 2\n3 3", SBM_ERR_PARSE,
        "5: entry has 2 numbers, expected 3 (row column value)");
    BAD("trunc2.mtx", MM "3 3 3\n1 1 1\n", SBM_ERR_PARSE,
        "3: the file ends after 1 of the 3 entries announced on line 2");
    BAD("trunc3.mtx", MM "3 3", SBM_ERR_PARSE, "2: size line has 2 numbers, expected 3");
    BAD("nosize.mtx", MM "% only comments\n\n", SBM_ERR_PARSE,
        "3: the file ends before the size line");
    BAD("banneronly.mtx", MM, SBM_ERR_PARSE, "1: the file ends before the size line");
    BAD("nosize2.mtx", MM "1 1 2.5\n2 2 1\n", SBM_ERR_PARSE,
        "2: size line: entry count '2.5' is not an integer");
    BAD("garbage.mtx", "hello world\n", SBM_ERR_PARSE,
        "1: size line: row count 'hello' is not an integer (expected 'rows columns entries') "
        "(the file has no %%MatrixMarket banner)");

    /* Banner words */
    BAD("field.mtx", "%%MatrixMarket matrix coordinate reel general\n1 1 0\n", SBM_ERR_PARSE,
        "1: unknown field 'reel'");
    BAD("format.mtx", "%%MatrixMarket matrix coordinat real general\n1 1 0\n", SBM_ERR_PARSE,
        "1: unknown format 'coordinat'");
    BAD("symmetry.mtx", "%%MatrixMarket matrix coordinate real symetric\n1 1 0\n", SBM_ERR_PARSE,
        "1: unknown symmetry 'symetric'");
    BAD("object.mtx", "%%MatrixMarket vector coordinate real general\n1 1 0\n", SBM_ERR_PARSE,
        "1: unknown object 'vector'");
    BAD("short.mtx", "%%MatrixMarket matrix coordinate real\n1 1 0\n", SBM_ERR_PARSE,
        "1: the banner has 3 words after MatrixMarket, expected 4");
    BAD("bare.mtx", "%%MatrixMarket\n1 1 0\n", SBM_ERR_PARSE, "1: the banner has 0 words");
    BAD("extra.mtx", "%%MatrixMarket matrix coordinate real general more\n1 1 0\n", SBM_ERR_PARSE,
        "1: unexpected word 'more' in the banner");
    BAD("patskew.mtx", "%%MatrixMarket matrix coordinate pattern skew-symmetric\n1 1 0\n",
        SBM_ERR_PARSE, "1: 'pattern skew-symmetric' is not a valid combination");
    BAD("complex.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 2\n",
        SBM_ERR_NOT_SUPPORTED, "1: the 'complex' field is not supported");
    BAD("hermitian.mtx", "%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n",
        SBM_ERR_NOT_SUPPORTED, "1: the 'hermitian' symmetry is not supported");
    BAD("array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n",
        SBM_ERR_NOT_SUPPORTED, "1: the 'array' (dense) format is not supported");
    BAD("arraycx.mtx", "%%MATRIXMARKET MATRIX ARRAY COMPLEX HERMITIAN\n", SBM_ERR_NOT_SUPPORTED,
        "1: the 'array'");

    /* Entry counts */
    BAD("many.mtx", MM "2 2 1\n1 1 1\n% fine\n2 2 2\n", SBM_ERR_PARSE,
        "5: more entries than the 1 announced on line 2");
    BAD("many0.mtx", MM "2 2 0\n1 1 1\n", SBM_ERR_PARSE, "3: more entries than the 0 announced");

    /* Indices */
    BAD("row0.mtx", MM "3 4 1\n0 1 1\n", SBM_ERR_PARSE, "3: row index 0 is outside 1..3");
    BAD("col0.mtx", MM "3 4 1\n1 0 1\n", SBM_ERR_PARSE, "3: column index 0 is outside 1..4");
    BAD("rowbig.mtx", MM "3 4 2\n1 1 1\n4 1 1\n", SBM_ERR_PARSE, "4: row index 4 is outside 1..3");
    BAD("colbig.mtx", MM "3 4 1\n% c\n1 5 1\n", SBM_ERR_PARSE,
        "4: column index 5 is outside 1..4");
    BAD("rowneg.mtx", MM "3 4 1\n-1 1 1\n", SBM_ERR_PARSE, "3: row index -1 is outside 1..3");
    BAD("rowhuge.mtx", MM "3 4 1\n99999999999999999999 1 1\n", SBM_ERR_PARSE,
        "3: row index 99999999999999999999 is outside 1..3");
    BAD("nocols.mtx", MM "3 0 1\n1 1 1\n", SBM_ERR_PARSE,
        "3: column index 1 is outside the matrix (it has 0 columns)");
    BAD("rowtxt.mtx", MM "3 4 1\n1x 1 1\n", SBM_ERR_PARSE, "3: row index '1x' is not an integer");
    BAD("colflt.mtx", MM "3 4 1\n1 1.5 1\n", SBM_ERR_PARSE,
        "3: column index '1.5' is not an integer");
    BAD("onlyrow.mtx", MM "3 4 1\n1\n", SBM_ERR_PARSE, "3: entry has 1 number, expected 3");

    /* Size line */
    BAD("negrows.mtx", MM "-3 3 1\n1 1 1\n", SBM_ERR_PARSE,
        "2: size line: row count -3 is negative");
    BAD("negcols.mtx", MM "3 -3 1\n1 1 1\n", SBM_ERR_PARSE,
        "2: size line: column count -3 is negative");
    BAD("negnnz.mtx", MM "3 3 -1\n", SBM_ERR_PARSE, "2: size line: entry count -1 is negative");
    BAD("bigrows.mtx", MM "3000000000 3 0\n", SBM_ERR_OVERFLOW,
        "2: size line: row count 3000000000 exceeds the int32 index limit 2147483647");
    BAD("bigcols.mtx", MM "3 2147483648 0\n", SBM_ERR_OVERFLOW,
        "2: size line: column count 2147483648 exceeds the int32 index limit");
    BAD("hugecols.mtx", MM "3 99999999999999999999 0\n", SBM_ERR_OVERFLOW,
        "2: size line: column count '99999999999999999999' does not fit in 64 bits");
    BAD("hugennz.mtx", MM "3 3 1000000000000\n1 1 1\n", SBM_ERR_PARSE,
        "2: size line announces 1000000000000 entries, but the whole file has only");
    BAD("size4.mtx", MM "3 3 1 5\n1 1 1\n", SBM_ERR_PARSE, "2: size line: unexpected '5' after");
    BAD("symrect.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n", SBM_ERR_PARSE,
        "2: size line: a symmetric matrix must be square, not 2 x 3");
    BAD("skewrect.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 2 0\n",
        SBM_ERR_PARSE, "2: size line: a skew-symmetric matrix must be square, not 3 x 2");

    /* Values */
    BAD("nonnum.mtx", MM "2 2 1\n1 1 abc\n", SBM_ERR_PARSE, "3: value 'abc' is not a number");
    BAD("suffix.mtx", MM "2 2 1\n1 1 1.5x\n", SBM_ERR_PARSE, "3: value '1.5x' is not a number");
    BAD("comma.mtx", MM "2 2 1\n1 1 1,5\n", SBM_ERR_PARSE, "3: value '1,5' is not a number");
    BAD("nan.mtx", MM "2 2 2\n1 1 1\n2 2 nan\n", SBM_ERR_PARSE, "4: value 'nan' is not finite");
    BAD("inf.mtx", MM "2 2 1\n1 1 -Inf\n", SBM_ERR_PARSE, "3: value '-Inf' is not finite");
    BAD("ovf.mtx", MM "2 2 1\n1 1 1e999\n", SBM_ERR_PARSE, "3: value '1e999' is not finite");
    BAD("extra4.mtx", MM "2 2 1\n1 1 1 2\n", SBM_ERR_PARSE,
        "3: unexpected '2' after the entry (expected 3 numbers: row column value)");
    BAD("patval.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n",
        SBM_ERR_PARSE, "3: unexpected '1' after the entry (expected 2 numbers: row column)");
    BAD("intflt.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n",
        SBM_ERR_PARSE, "3: value '1.5' is not an integer");
    BAD("intbig.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1e3\n",
        SBM_ERR_PARSE, "3: value '1e3' is not an integer");
    BAD("skewdiag.mtx",
        "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 2\n2 1 1\n2 2 3\n",
        SBM_ERR_PARSE, "4: diagonal entry (2,2) in a skew-symmetric matrix");
    check_bad(e, &d, "nul.mtx", MM "2 2 1\n1 1 1\0junk\n", sizeof(MM "2 2 1\n1 1 1\0junk\n") - 1,
              SBM_ERR_PARSE, "3: the line contains a NUL byte");

    tmpdir_remove(&d);
}

/* ---------------------------------------------------------------------------------------- */
/* I/O errors and arguments                                                                 */
/* ---------------------------------------------------------------------------------------- */

static void test_io_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    tmpdir d;
    tmpdir_make(&d);
    sbm_csr *A = (sbm_csr *)&A;

    /* Reading */
    const char *missing = tmp_path(&d, "missing.mtx");
    char want[1100];
    snprintf(want, sizeof want, "cannot open '%s' for reading: %s", missing, strerror(ENOENT));
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_read_mtx(e->ctx, missing, &A), SBM_ERR_IO, want);
    assert_null(A);
    A = (sbm_csr *)&A;
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_read_mtx(e->ctx, d.path, &A), SBM_ERR_IO, strerror(EISDIR));
    assert_null(A);
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_read_mtx(e->ctx, NULL, &A), SBM_ERR_NULL_ARGUMENT, "path");
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_read_mtx(e->ctx, missing, NULL), SBM_ERR_NULL_ARGUMENT,
                     "argument A");
    assert_int_equal(sbm_csr_read_mtx(NULL, missing, &A), SBM_ERR_NULL_ARGUMENT);

    /* Writing */
    const int64_t rowptr[3] = {0, 1, 2};
    const int32_t colind[2] = {0, 1};
    const double values[2] = {1, 2};
    SBM_ASSERT_OK(e->ctx, sbm_csr_create(e->ctx, &A, 2, 2, rowptr, colind, values));
    const char *nodir = tmp_path(&d, "no/such/dir/out.mtx");
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_write_mtx(e->ctx, nodir, A), SBM_ERR_IO,
                     "cannot create the temporary file");
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_write_mtx(e->ctx, nodir, A), SBM_ERR_IO, strerror(ENOENT));
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_write_mtx(e->ctx, nodir, A), SBM_ERR_IO, nodir);

    /* The target is a directory: the rename fails and the temporary file is removed. */
    const char *sub = tmp_path(&d, "subdir");
    assert_int_equal(mkdir(sub, 0700), 0);
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_write_mtx(e->ctx, sub, A), SBM_ERR_IO, "cannot rename");
    assert_int_equal(count_entries(d.path, ".tmp."), 0);
    sbm_cbc *Ab = NULL;
    const sbm_status cst = sbm_csr_to_cbc(e->ctx, A, 1, 1, &Ab);
    if (cst == SBM_SUCCESS) {
        SBM_ASSERT_FAILS(e->ctx, sbm_cbc_write_mtx(e->ctx, sub, Ab), SBM_ERR_IO, "cannot rename");
        SBM_ASSERT_FAILS(e->ctx, sbm_cbc_write_mtx(e->ctx, NULL, Ab), SBM_ERR_NULL_ARGUMENT,
                         "path");
        assert_int_equal(count_entries(d.path, ".tmp."), 0);
        sbm_cbc_destroy(Ab);
    } else {
        assert_int_equal(e->backend, SBM_BACKEND_CUDA);
        assert_int_equal(cst, SBM_ERR_NOT_SUPPORTED); /* only where the GPU lacks the conversion */
    }

    /* NULL arguments */
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_write_mtx(e->ctx, NULL, A), SBM_ERR_NULL_ARGUMENT, "path");
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_write_mtx(e->ctx, nodir, NULL), SBM_ERR_NULL_ARGUMENT, "A");
    SBM_ASSERT_FAILS(e->ctx, sbm_cbc_write_mtx(e->ctx, nodir, NULL), SBM_ERR_NULL_ARGUMENT, "A");
    assert_int_equal(sbm_csr_write_mtx(NULL, nodir, A), SBM_ERR_NULL_ARGUMENT);
    assert_int_equal(sbm_cbc_write_mtx(NULL, nodir, NULL), SBM_ERR_NULL_ARGUMENT);

    /* A matrix of another backend. */
    if (e->backend != SBM_BACKEND_CPU) {
        sbm_csr *H = sbm_test_csr_to_host(A);
        SBM_ASSERT_FAILS(e->ctx, sbm_csr_write_mtx(e->ctx, tmp_path(&d, "x.mtx"), H),
                         SBM_ERR_BACKEND_MISMATCH, "A");
        sbm_csr_destroy(H);
    }

    /* Non-finite values are refused before anything is written; an existing file stays. */
    const char *keep = tmp_path(&d, "keep.mtx");
    SBM_ASSERT_OK(e->ctx, sbm_csr_write_mtx(e->ctx, keep, A));
    char *before = slurp(keep, NULL);
    const double bad[2] = {1, NAN};
    sbm_csr *N = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_csr_create(e->ctx, &N, 2, 2, rowptr, colind, bad));
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_write_mtx(e->ctx, keep, N), SBM_ERR_NOT_FINITE,
                     "argument A: entry (2,2) (1-based) is nan");
    char *after = slurp(keep, NULL);
    assert_string_equal(before, after);
    free(before);
    free(after);
    const char *fresh = tmp_path(&d, "fresh.mtx");
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_write_mtx(e->ctx, fresh, N), SBM_ERR_NOT_FINITE, "nan");
    assert_false(file_exists(fresh));
    assert_int_equal(count_entries(d.path, ".tmp."), 0);
    /* The matrix is unchanged by the failed write. */
    const double wantn[4] = {1, 0, 0, NAN};
    double *got = sbm_test_csr_dense(N);
    assert_true(got[0] == wantn[0] && got[1] == 0 && got[2] == 0 && isnan(got[3]));
    free(got);
    sbm_csr_destroy(N);

    sbm_csr_destroy(A);
    tmpdir_remove(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_read_data_files),
        SBM_TEST_BOTH(test_jumbled_equals_original),
        SBM_TEST_BOTH(test_roundtrip_data_files),
        SBM_TEST_BOTH(test_csr_gemm_data_files),
        SBM_TEST_BOTH(test_cbc_gemm_data_files),
        SBM_TEST_BOTH(test_roundtrip_random_large),
        SBM_TEST_BOTH(test_pipe_and_long_lines),
        SBM_TEST_BOTH(test_tiny_variants),
        SBM_TEST_BOTH(test_huge_dimensions),
        SBM_TEST_BOTH(test_write_format),
        SBM_TEST_BOTH(test_malformed),
        SBM_TEST_BOTH(test_io_errors),
    };
    /* SBM_TEST_FILTER=pattern runs only the matching tests (cmocka wildcards * and ?). */
    const char *filter = getenv("SBM_TEST_FILTER");
    if (filter && *filter) cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
