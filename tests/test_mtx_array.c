/* SPDX-License-Identifier: BSD-3-Clause */
/* Dense Matrix Market arrays (sbm_dense_read_mtx, sbm_dense_write_mtx, sbm_dense_write_txt)
 * and the seeded generator (sbm_splitmix64) against published reference values.
 *
 * Round trips are bitwise ("%.17g"); malformed files check every error path by status and by
 * a message naming file:line and the reason; writers are checked to leave no file (and no
 * temporary) behind on failure. */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700

#include "test_util.h"

#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------------------- */
/* Files: the suite runs inside its temporary folder, so names are paths                    */
/* ---------------------------------------------------------------------------------------- */

static int enter_tmp_dir(void **state)
{
    return sbm_test_make_tmp_dir(state) == 0 && chdir(sbm_test_tmp_dir) == 0 ? 0 : -1;
}

static int leave_tmp_dir(void **state)
{
    return chdir("/") == 0 ? sbm_test_remove_tmp_dir(state) : -1;
}

static const char *put(const char *name, const char *text)
{
    FILE *f = fopen(name, "wb");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
    return name;
}

/* The whole file as a string (static buffer). */
static const char *slurp(const char *path)
{
    static char buf[1 << 14];
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Number of entries of the folder whose name contains ".tmp." (leftover temporaries). */
static int temporaries;
static int count_tmp(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    if (strstr(p, ".tmp.")) temporaries++;
    return 0;
}
static int leftover_temporaries(void)
{
    temporaries = 0;
    nftw(".", count_tmp, 8, FTW_PHYS);
    return temporaries;
}

#define BANNER "%%MatrixMarket matrix array real general\n"

/* ---------------------------------------------------------------------------------------- */
/* Round trips                                                                              */
/* ---------------------------------------------------------------------------------------- */

static void test_roundtrip_bitwise(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    /* 7 x 5 in a 9-row buffer: awkward values, seeded ones and the padding never written */
    const int64_t m = 7, n = 5, ld = 9;
    double a[9 * 5];
    sbm_test_rng g = sbm_test_rng_seed(11);
    for (int64_t k = 0; k < ld * n; k++)
        a[k] = sbm_test_rng_value(&g) * pow(10.0, (double)(k % 9) - 4);
    const double special[] = {0.1, -0.0, 4.9e-324, 1.7976931348623157e308, -2.2250738585072014e-308,
                              1.0 / 3.0, 123456789012345678.0};
    for (int k = 0; k < 7; k++) a[k * 4 % (ld * n)] = special[k];
    for (int64_t j = 0; j < n; j++) a[m + j * ld] = a[m + 1 + j * ld] = NAN; /* padding */

    const char *names[] = {"a.mtx", "a.mtx.bz2"};
    for (int f = 0; f < 2; f++) {
        const char *p = names[f];
        SBM_ASSERT_OK(e->ctx, sbm_dense_write_mtx(e->ctx, p, m, n, a, ld));
        int64_t rm = -1, rn = -1;
        double *v = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_dense_read_mtx(e->ctx, p, &rm, &rn, &v));
        assert_int_equal(rm, m);
        assert_int_equal(rn, n);
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++)
                assert_memory_equal(&v[i + j * m], &a[i + j * ld], sizeof(double));
        sbm_dense_free(e->ctx, v);
    }
    /* the documented layout: banner, size line, one value per line, column by column */
    const double t[] = {1.5, -2, 0.25, 0.1};
    SBM_ASSERT_OK(e->ctx, sbm_dense_write_mtx(e->ctx, "t.mtx", 2, 2, t, 2));
    assert_string_equal(slurp("t.mtx"), BANNER "2 2\n1.5\n-2\n0.25\n0.10000000000000001\n");
    SBM_ASSERT_OK(e->ctx, sbm_dense_write_txt(e->ctx, "t.txt", 3, t));
    assert_string_equal(slurp("t.txt"), "1.5\n-2\n0.25\n");
    assert_int_equal(leftover_temporaries(), 0);
}

static void test_empty_arrays(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const int64_t shapes[3][2] = {{0, 4}, {3, 0}, {0, 0}};
    for (int s = 0; s < 3; s++) {
        const char *p = "empty.mtx";
        SBM_ASSERT_OK(e->ctx, sbm_dense_write_mtx(e->ctx, p, shapes[s][0], shapes[s][1], NULL,
                                                 shapes[s][0] > 1 ? shapes[s][0] : 1));
        char want[128];
        snprintf(want, sizeof want, "%s%d %d\n", BANNER, (int)shapes[s][0], (int)shapes[s][1]);
        assert_string_equal(slurp(p), want);
        int64_t rm = -1, rn = -1;
        double *v = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_dense_read_mtx(e->ctx, p, &rm, &rn, &v));
        assert_int_equal(rm, shapes[s][0]);
        assert_int_equal(rn, shapes[s][1]);
        assert_non_null(v); /* a valid pointer for 0 values */
        sbm_dense_free(e->ctx, v);
    }
    SBM_ASSERT_OK(e->ctx, sbm_dense_write_txt(e->ctx, "empty.txt", 0, NULL));
    assert_string_equal(slurp("empty.txt"), "");
    sbm_dense_free(e->ctx, NULL);
}

/* Header variants the reader has always accepted. */
static void test_accepted_variants(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const char *const files[] = {
        BANNER "2 1\n1\n-2.5\n",
        "%MatrixMarket MATRIX Array Integer GENERAL\n2 1\n1\n-2.5\n",
        "%%%MatrixMarket matrix array double general\r\n% comment\r\n\r\n"
        "  2   1 \r\n 1 \r\n\r\n-2.5",
        BANNER "%\n\n% two comments\n2 1\n\n0x1p0\n-25e-1\n\n\n",
    };
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        int64_t m = 0, n = 0;
        double *v = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_dense_read_mtx(e->ctx, put("ok.mtx", files[f]), &m, &n, &v));
        assert_int_equal(m, 2);
        assert_int_equal(n, 1);
        assert_true(v[0] == 1.0 && v[1] == -2.5);
        sbm_dense_free(e->ctx, v);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Errors                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Reading text fails with status and a message containing "bad.mtx:<where_what>"; the outputs
 * are cleared. */
static void check_bad(sbm_test_env *e, const char *text, sbm_status status, const char *where_what)
{
    const char *p = put("bad.mtx", text);
    int64_t m = 7, n = 7;
    double *v = (double *)&v; /* not NULL: the call must clear it */
    char want[512];
    snprintf(want, sizeof want, "bad.mtx:%s", where_what);
    SBM_ASSERT_FAILS(e->ctx, sbm_dense_read_mtx(e->ctx, p, &m, &n, &v), status, want);
    assert_null(v);
    assert_int_equal(m, 0);
    assert_int_equal(n, 0);
    const char *msg = sbm_ctx_last_error(e->ctx);
    assert_non_null(strstr(msg, "sbm_dense_read_mtx: "));
    assert_non_null(strstr(msg, p));
}

static void test_malformed(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const sbm_status P = SBM_ERR_PARSE, U = SBM_ERR_NOT_SUPPORTED, F = SBM_ERR_NOT_FINITE;
    const struct {
        const char *text;      /* the file */
        sbm_status status;     /* the status of reading it */
        const char *where_what; /* "line: reason" in the message */
    } bad[] = {
        {"", P, "1: the file is empty (expected '%%MatrixMarket matrix array real general')"},
        {"3 1\n1\n2\n3\n", P, "1: not a Matrix Market file"},
        {"MatrixMarket matrix array real general\n1 1\n1\n", P, "1: not a Matrix Market file"},
        {"%%MatrixMarket matrix coordinate real general\n1 1 0\n", U,
         "1: a sparse 'coordinate' file"},
        {"%%MatrixMarket matrix dense real general\n1 1\n1\n", P,
         "1: unknown format 'dense' (expected 'array')"},
        {"%%MatrixMarket vector array real general\n1 1\n1\n", U,
         "1: object 'vector' is not supported"},
        {"%%MatrixMarket matrix array complex general\n1 1\n1 0\n", U,
         "1: field 'complex' is not supported (real or integer)"},
        {"%%MatrixMarket matrix array pattern general\n1 1\n", U,
         "1: field 'pattern' is not supported"},
        {"%%MatrixMarket matrix array real symmetric\n1 1\n1\n", U,
         "1: symmetry 'symmetric' is not supported"},
        {"%%MatrixMarket matrix array real\n1 1\n1\n", P,
         "1: the banner needs object, format, field and symmetry"},
        {BANNER "% x\n", P, "2: ends before the size line 'rows columns'"},
        {BANNER "% c\n2 1 2\n1\n2\n", P, "3: expected the size line 'rows columns'"},
        {BANNER "2\n1\n2\n", P, "2: expected the size line"},
        {BANNER "-2 1\n1\n2\n", P, "2: expected the size line"},
        {BANNER "+2 1\n1\n2\n", P, "2: expected the size line"},
        {BANNER "2 one\n1\n2\n", P, "2: expected the size line"},
        {BANNER "99999999999999999999 1\n", P, "2: expected the size line"},
        {BANNER "4294967296 4294967296\n1\n", SBM_ERR_OVERFLOW,
         "2: 4294967296 x 4294967296 values do not fit in memory"},
        {BANNER "3 1\n1\n2\n", P, "4: truncated: 2 of the 3 values of a 3 x 1 array"},
        {BANNER "3 1\n", P, "2: truncated: 0 of the 3 values of a 3 x 1 array"},
        {BANNER "1 2\n1\n2\n3\n", P, "5: more than the 2 values of a 1 x 2 array"},
        {BANNER "0 2\n1\n", P, "3: more than the 0 values of a 0 x 2 array"},
        {BANNER "2 1\n1\nx3\n", P, "4: 'x3' is not a number"},
        {BANNER "2 1\n2.5.1\n1\n", P, "3: '2.5.1' is not a number"},
        {BANNER "2 1\n% late comment\n1\n2\n", P, "3: '%' is not a number"},
        {BANNER "2 1\nnan\n1\n", F, "3: value 'nan' is not finite"},
        {BANNER "2 1\n1\n-inf\n", F, "4: value '-inf' is not finite"},
        {BANNER "2 1\n1e400\n1\n", F, "3: value '1e400' is not finite"},
        {BANNER "2 1\n1 2\n1\n", P, "3: one value per line expected, found also '2'"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        check_bad(e, bad[k].text, bad[k].status, bad[k].where_what);
}

static void test_argument_and_io_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    int64_t m = 0, n = 0;
    double *v = NULL;
    const double a[4] = {1, 2, NAN, 4};

    SBM_ASSERT_FAILS(e->ctx, sbm_dense_read_mtx(e->ctx, NULL, &m, &n, &v), SBM_ERR_NULL_ARGUMENT,
                     "argument path is NULL");
    SBM_ASSERT_FAILS(e->ctx, sbm_dense_read_mtx(e->ctx, "x.mtx", &m, NULL, &v),
                     SBM_ERR_NULL_ARGUMENT, "argument cols (output) is NULL");
    SBM_ASSERT_FAILS(e->ctx, sbm_dense_read_mtx(e->ctx, "x.mtx", &m, &n, NULL),
                     SBM_ERR_NULL_ARGUMENT, "argument h_values (output) is NULL");
    SBM_ASSERT_FAILS(e->ctx, sbm_dense_read_mtx(e->ctx, "none.mtx", &m, &n, &v), SBM_ERR_IO,
                     "none.mtx: cannot open: No such file or directory");
    assert_int_equal(sbm_dense_read_mtx(NULL, "x.mtx", &m, &n, &v), SBM_ERR_NULL_ARGUMENT);

    /* writers: nothing is created on failure, and an existing file is left as it was */
    const char *keep = put("keep.mtx", "precious\n");
    SBM_ASSERT_FAILS(e->ctx, sbm_dense_write_mtx(e->ctx, keep, 2, 2, a, 2), SBM_ERR_NOT_FINITE,
                     "entry (1,2) (1-based) is nan");
    SBM_ASSERT_FAILS(e->ctx, sbm_dense_write_txt(e->ctx, keep, 4, a), SBM_ERR_NOT_FINITE,
                     "sbm_dense_write_txt: entry (3,1) (1-based) is nan");
    SBM_ASSERT_FAILS(e->ctx, sbm_dense_write_mtx(e->ctx, keep, 2, 2, a, 1),
                     SBM_ERR_INVALID_ARGUMENT, "argument ld = 1 is less than max(1, rows = 2)");
    SBM_ASSERT_FAILS(e->ctx, sbm_dense_write_mtx(e->ctx, keep, -1, 2, a, 2),
                     SBM_ERR_INVALID_ARGUMENT, "the array is -1 x 2; sizes must be >= 0");
    SBM_ASSERT_FAILS(e->ctx, sbm_dense_write_mtx(e->ctx, keep, 2, 2, NULL, 2),
                     SBM_ERR_NULL_ARGUMENT, "argument h_values is NULL");
    SBM_ASSERT_FAILS(e->ctx, sbm_dense_write_mtx(e->ctx, NULL, 2, 2, a, 2), SBM_ERR_NULL_ARGUMENT,
                     "argument path is NULL");
    SBM_ASSERT_FAILS(e->ctx, sbm_dense_write_mtx(e->ctx, keep, 2, INT64_MAX / 4, a, 2),
                     SBM_ERR_OVERFLOW, "does not fit in memory");
    assert_string_equal(slurp(keep), "precious\n");
    SBM_ASSERT_FAILS(e->ctx, sbm_dense_write_mtx(e->ctx, "no/such/dir/y.mtx", 1, 1, a, 1),
                     SBM_ERR_IO, "y.mtx: cannot create");
    assert_int_equal(sbm_dense_write_mtx(NULL, keep, 1, 1, a, 1), SBM_ERR_NULL_ARGUMENT);
    assert_int_equal(leftover_temporaries(), 0);
    /* success replaces the file */
    SBM_ASSERT_OK(e->ctx, sbm_dense_write_mtx(e->ctx, keep, 1, 1, a, 1));
    assert_string_equal(slurp(keep), BANNER "1 1\n1\n");
}

/* An allocator that records the largest request (seen[0]) and refuses those above seen[1]. */
static void *limited_alloc(void *user, size_t bytes)
{
    size_t *seen = user;
    seen[0] = bytes > seen[0] ? bytes : seen[0];
    return bytes <= seen[1] ? malloc(bytes) : NULL;
}
static void limited_free(void *user, void *ptr) { (void)user, free(ptr); }

/* The values array grows with the file, so a corrupt size line asks for nothing big; when the
 * file really is big and memory is not there, the read fails with the status and a message. The
 * CPU backend only: host scratch of device contexts does not go through the allocator. */
static void test_memory(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    size_t seen[2] = {0, (size_t)1 << 20};
    const sbm_allocator a = {limited_alloc, limited_free, seen};
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, &a));
    int64_t m = 0, n = 0;
    double *v = NULL;
    put("huge.mtx", BANNER "1000000000000 1\n1\n2\n");
    SBM_ASSERT_FAILS(e->ctx, sbm_dense_read_mtx(e->ctx, "huge.mtx", &m, &n, &v), SBM_ERR_PARSE,
                     "huge.mtx:4: truncated: 2 of the 1000000000000 values");
    assert_true(seen[0] <= (size_t)1 << 20); /* not 8 TB: nothing was refused either */

    FILE *f = fopen("big.mtx", "wb");
    assert_non_null(f);
    fprintf(f, BANNER "200000 1\n");
    for (int k = 0; k < 200000; k++) fprintf(f, "%d\n", k);
    assert_int_equal(fclose(f), 0);
    SBM_ASSERT_FAILS(e->ctx, sbm_dense_read_mtx(e->ctx, "big.mtx", &m, &n, &v),
                     SBM_ERR_OUT_OF_MEMORY, "bytes for the array's values");
    assert_null(v);
    seen[1] = (size_t)1 << 22; /* 200000 values fit now */
    SBM_ASSERT_OK(e->ctx, sbm_dense_read_mtx(e->ctx, "big.mtx", &m, &n, &v));
    assert_true(m == 200000 && n == 1 && v[199999] == 199999.0);
    sbm_dense_free(e->ctx, v);
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, NULL));
}

/* ---------------------------------------------------------------------------------------- */
/* SplitMix64                                                                               */
/* ---------------------------------------------------------------------------------------- */

static void test_splitmix64_reference(void **state)
{
    (void)state;
    /* Published: the first outputs for seed 1477776061723855037 in the test "reference" of
     * rand_xoshiro (rust-random/rngs, src/splitmix64.rs), made with Vigna's splitmix64.c. */
    static const uint64_t want[5] = {1985237415132408290ull, 2979275885539914483ull,
                                     13511426838097143398ull, 8488337342461049707ull,
                                     15141737807933549159ull};
    uint64_t s = 1477776061723855037ull;
    for (int k = 0; k < 5; k++) assert_true(sbm_splitmix64(&s) == want[k]);
    assert_true(s == 1477776061723855037ull + 5 * 0x9E3779B97F4A7C15ull);
    /* the uniform helper takes the top 53 bits of the same stream */
    s = 1477776061723855037ull;
    for (int k = 0; k < 5; k++) {
        const double u = sbm_splitmix64_uniform(&s);
        assert_true(u == (double)(want[k] >> 11) * 0x1.0p-53);
        assert_true(u >= 0.0 && u < 1.0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_roundtrip_bitwise),
        SBM_TEST_BOTH(test_empty_arrays),
        SBM_TEST_BOTH(test_accepted_variants),
        SBM_TEST_BOTH(test_malformed),
        SBM_TEST_BOTH(test_argument_and_io_errors),
        SBM_TEST_CPU(test_memory),
        cmocka_unit_test(test_splitmix64_reference),
    };
    return cmocka_run_group_tests(tests, enter_tmp_dir, leave_tmp_dir);
}
