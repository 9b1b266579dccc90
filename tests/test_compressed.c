/* SPDX-License-Identifier: BSD-3-Clause */
/* Compressed input through the one stream layer (src/io/stream.c), for all three readers: gzip
 * and bzip2 copies of real files read equal to the plain file, whatever their names (the kind
 * is told by the magic bytes); concatenated streams read as their concatenation; a FIFO reads
 * (nothing seeks); truncated, corrupt and trailing-garbage files fail with SBM_ERR_IO and a
 * message naming the file, the line being read and the reason; the writer compresses by name.
 * The copies are made here with zlib and libbz2 directly (sbm_test_recode), independently of
 * the library. */
#define _POSIX_C_SOURCE 200809L

#include "test_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* The whole file as malloc'd bytes. */
static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    const long n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    unsigned char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

static void spill(const char *path, const unsigned char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

/* The readers, behind one signature: read path, return the status; on success *out is a
 * comparable host summary (malloc'd doubles, count in *n). */
typedef sbm_status (*reader_fn)(sbm_ctx *ctx, const char *path, double **out, size_t *n);

static double *append(double *v, size_t *n, const double *src, size_t k)
{
    v = realloc(v, (*n + k + 1) * sizeof *v);
    assert_non_null(v);
    if (k) memcpy(v + *n, src, k * sizeof *v);
    *n += k;
    return v;
}

static sbm_status read_mtx(sbm_ctx *ctx, const char *path, double **out, size_t *n)
{
    sbm_csr *A = NULL;
    const sbm_status st = sbm_csr_read_mtx(ctx, path, &A);
    if (st != SBM_SUCCESS) return st;
    sbm_csr *H = sbm_test_csr_to_host(A);
    sbm_csr_info a = sbm_csr_get_info(H);
    double *v = NULL;
    *n = 0;
    const double dims[3] = {(double)a.m, (double)a.n, (double)a.nnz};
    v = append(v, n, dims, 3);
    for (int64_t i = 0; i <= a.m; i++) v = append(v, n, &(double){(double)a.rowptr[i]}, 1);
    for (int64_t p = 0; p < a.nnz; p++) v = append(v, n, &(double){(double)a.colind[p]}, 1);
    v = append(v, n, a.values, (size_t)a.nnz);
    sbm_csr_destroy(H);
    sbm_csr_destroy(A);
    *out = v;
    return SBM_SUCCESS;
}

static sbm_status read_bal(sbm_ctx *ctx, const char *path, double **out, size_t *n)
{
    sbm_bal_problem *p = NULL;
    const sbm_status st = sbm_bal_read(ctx, path, &p);
    if (st != SBM_SUCCESS) return st;
    sbm_bal_info b = sbm_bal_get_info(p);
    double *v = NULL;
    *n = 0;
    const double dims[3] = {(double)b.cameras, (double)b.points, (double)b.observations};
    v = append(v, n, dims, 3);
    for (int64_t k = 0; k < b.observations; k++) {
        const double o[2] = {(double)b.obs_camera[k], (double)b.obs_point[k]};
        v = append(v, n, o, 2);
    }
    v = append(v, n, b.obs_xy, (size_t)(2 * b.observations));
    v = append(v, n, b.camera_params, (size_t)(9 * b.cameras));
    v = append(v, n, b.point_params, (size_t)(3 * b.points));
    sbm_bal_destroy(p);
    *out = v;
    return SBM_SUCCESS;
}

static sbm_status read_g2o(sbm_ctx *ctx, const char *path, double **out, size_t *n)
{
    sbm_g2o_graph *g = NULL;
    const sbm_status st = sbm_g2o_read(ctx, path, &g);
    if (st != SBM_SUCCESS) return st;
    sbm_g2o_info gi = sbm_g2o_get_info(g);
    double *v = NULL;
    *n = 0;
    const double dims[3] = {(double)gi.dim, (double)gi.vertices, (double)gi.edges};
    v = append(v, n, dims, 3);
    v = append(v, n, gi.poses, (size_t)(gi.pose_size * gi.vertices));
    for (int64_t k = 0; k < gi.edges; k++) {
        const double e[2] = {(double)gi.edge_from[k], (double)gi.edge_to[k]};
        v = append(v, n, e, 2);
    }
    v = append(v, n, gi.edge_measurement, (size_t)(gi.pose_size * gi.edges));
    v = append(v, n, gi.edge_information, (size_t)(gi.error_dim * gi.error_dim * gi.edges));
    sbm_g2o_destroy(g);
    *out = v;
    return SBM_SUCCESS;
}

typedef struct format_case {
    const char *what;
    const char *data; /* relative to tests/data; NULL: a generated BAL problem */
    reader_fn read;
} format_case;

/* The real BAL files are large (1.8 MB of text); a generated problem of 200 KB exercises the
 * same reader in a fraction of the time (test_bal reads the real ones, compressed). */
static const format_case formats[] = {
    {"mtx (gzip in the repository)", "mtx/west0067.mtx", read_mtx},
    {"mtx (bzip2 in the repository)", "mtx/cryg2500.mtx", read_mtx},
    {"bal (generated)", NULL, read_bal},
    {"g2o 2D", "g2o/CSAIL.g2o", read_g2o},
    {"g2o 3D", "g2o/smallGrid3D.g2o", read_g2o},
};
#define NFORMATS (sizeof formats / sizeof formats[0])

/* The file a case starts from: in tests/data, or a generated BAL problem written plain. */
static const char *source_path(sbm_test_env *e, const format_case *fc)
{
    if (fc->data) return sbm_test_data_path(fc->data);
    static char path[1024];
    snprintf(path, sizeof path, "%s/generated.txt", sbm_test_tmp_dir);
    const sbm_bal_generate_options o = sbm_bal_generate_defaults(30, 2000, 3, 11);
    sbm_bal_problem *p = NULL;
    SBM_ASSERT_OK(e->host, sbm_bal_generate(e->host, &o, &p));
    SBM_ASSERT_OK(e->host, sbm_bal_write(e->host, path, p));
    sbm_bal_destroy(p);
    return path;
}

static void assert_reads_equal(sbm_test_env *e, const format_case *fc, const double *want,
                               size_t nwant, const char *path)
{
    double *got = NULL;
    size_t n = 0;
    SBM_ASSERT_OK(e->ctx, fc->read(e->ctx, path, &got, &n));
    if (n != nwant) fail_msg("%s: %s reads %zu numbers, the plain file %zu", fc->what, path, n, nwant);
    /* bitwise: the same bytes must parse to the same values */
    if (memcmp(got, want, n * sizeof *got) != 0)
        fail_msg("%s: %s reads differently from the plain file", fc->what, path);
    free(got);
}

/* Plain, gzip and bzip2 copies, under the usual names and under misleading ones, read alike;
 * so do two gzip members and two bzip2 streams back to back. */
static void test_same_as_plain(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (size_t f = 0; f < NFORMATS; f++) {
        const format_case *fc = &formats[f];
        const char *src = source_path(e, fc);
        char plain[1024]; /* tmp_path's buffers are reused */
        snprintf(plain, sizeof plain, "%s", sbm_test_tmp_path("plain.txt"));
        sbm_test_recode(src, plain, "plain");
        double *want = NULL;
        size_t nwant = 0;
        SBM_ASSERT_OK(e->ctx, fc->read(e->ctx, plain, &want, &nwant));
        assert_true(nwant > 3);

        static const struct {
            const char *kind, *name;
        } copies[] = {
            {"gz", "copy.gz"},  {"bz2", "copy.bz2"},  /* the usual names */
            {"gz", "copy.bz2"}, {"bz2", "copy.gz"},   /* the other kind's name */
            {"gz", "copy.txt"}, {"bz2", "copy"},      /* no compression suffix */
            {"plain", "copy.gz"}, {"plain", "copy.bz2"}, /* plain text under a compressed name */
        };
        for (size_t c = 0; c < sizeof copies / sizeof copies[0]; c++) {
            const char *path = sbm_test_tmp_path(copies[c].name);
            sbm_test_recode(src, path, copies[c].kind);
            assert_reads_equal(e, fc, want, nwant, path);
            unlink(path);
        }

        /* concatenated streams: the first 1000 bytes and the rest, each compressed alone */
        size_t len;
        unsigned char *b = slurp(plain, &len);
        assert_true(len > 2000);
        const char *head = sbm_test_tmp_path("head.txt"), *tail = sbm_test_tmp_path("tail.txt");
        spill(head, b, 1000);
        spill(tail, b + 1000, len - 1000);
        free(b);
        static const char *const kinds[] = {"gz", "bz2"};
        for (int k = 0; k < 2; k++) {
            const char *h = sbm_test_tmp_path("head.z"), *t = sbm_test_tmp_path("tail.z"), *cat = sbm_test_tmp_path("cat.z");
            sbm_test_recode(head, h, kinds[k]);
            sbm_test_recode(tail, t, kinds[k]);
            size_t nh, nt;
            unsigned char *bh = slurp(h, &nh), *bt = slurp(t, &nt);
            unsigned char *both = malloc(nh + nt);
            assert_non_null(both);
            memcpy(both, bh, nh);
            memcpy(both + nh, bt, nt);
            spill(cat, both, nh + nt);
            assert_reads_equal(e, fc, want, nwant, cat);
            free(both);
            free(bh);
            free(bt);
        }
        print_message("  %s: plain, gzip, bzip2, misnamed and concatenated copies read alike\n",
                      fc->what);
        free(want);
    }
}

/* A gzip file through a FIFO: the stream never seeks back over the magic bytes. */
static void test_fifo(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const format_case *fc = &formats[0];
    const char *src = source_path(e, fc);
    const char *plain = sbm_test_tmp_path("fifo_plain.mtx"), *gz = sbm_test_tmp_path("fifo.mtx.gz");
    sbm_test_recode(src, plain, "plain");
    sbm_test_recode(src, gz, "gz");
    double *want = NULL;
    size_t nwant = 0;
    SBM_ASSERT_OK(e->ctx, fc->read(e->ctx, plain, &want, &nwant));
    size_t len;
    unsigned char *b = slurp(gz, &len);
    const char *fifo = sbm_test_tmp_path("pipe");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* the writer */
        const int fd = open(fifo, O_WRONLY);
        size_t off = 0;
        while (fd >= 0 && off < len) {
            const ssize_t w = write(fd, b + off, len - off);
            if (w <= 0) break;
            off += (size_t)w;
        }
        free(b);
        free(want);
        _exit(off == len ? 0 : 1);
    }
    assert_reads_equal(e, fc, want, nwant, fifo);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    unlink(fifo);
    free(b);
    free(want);
}

/* Damaged compressed files: SBM_ERR_IO, never a silently shorter file, and a message naming the
 * file, the line being read and the reason; for every reader. */
static void test_damaged(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (size_t f = 0; f < NFORMATS; f++) {
        const format_case *fc = &formats[f];
        const char *src = source_path(e, fc);
        static const char *const kinds[] = {"gz", "bz2"};
        for (int k = 0; k < 2; k++) {
            const char *good = sbm_test_tmp_path(k == 0 ? "good.gz" : "good.bz2");
            sbm_test_recode(src, good, kinds[k]);
            size_t len;
            unsigned char *b = slurp(good, &len);
            assert_true(len > 64);
            const char *bad = sbm_test_tmp_path(k == 0 ? "bad.gz" : "bad.bz2");
            double *got = NULL;
            size_t n = 0;
            char want[1200];

            /* cut in the middle, and cut just before the end (the gzip trailer, or the end of
             * the last bzip2 block) */
            const size_t cuts[2] = {len / 2, len - 4};
            for (int c = 0; c < 2; c++) {
                spill(bad, b, cuts[c]);
                SBM_ASSERT_FAILS(e->ctx, fc->read(e->ctx, bad, &got, &n), SBM_ERR_IO,
                                 "the compressed file ends early");
                snprintf(want, sizeof want, "%s:", bad);
                SBM_ASSERT_FAILS(e->ctx, fc->read(e->ctx, bad, &got, &n), SBM_ERR_IO, want);
            }

            /* a flipped byte in the final checksum (gzip: the CRC-32 of the trailer; bzip2:
             * the combined CRC of the end-of-stream record), after all the text was delivered */
            unsigned char *c = malloc(len);
            assert_non_null(c);
            memcpy(c, b, len);
            c[k == 0 ? len - 6 : len - 2] ^= 0x55;
            spill(bad, c, len);
            SBM_ASSERT_FAILS(e->ctx, fc->read(e->ctx, bad, &got, &n), SBM_ERR_IO,
                             k == 0 ? "corrupt gzip data" : "corrupt bzip2 data");
            SBM_ASSERT_FAILS(e->ctx, fc->read(e->ctx, bad, &got, &n), SBM_ERR_IO, bad);
            /* a flipped byte in the middle: the decoder may hand out damaged text before its
             * checksum catches it, so the parser may stop first (with its own status); either
             * way an error naming the file, never a success */
            memcpy(c, b, len);
            c[len / 2] ^= 0x55;
            spill(bad, c, len);
            const sbm_status st = fc->read(e->ctx, bad, &got, &n);
            if (st == SBM_SUCCESS)
                fail_msg("%s, %s flipped in the middle: %s (%s)", fc->what, kinds[k],
                         sbm_status_name(st), sbm_ctx_last_error(e->ctx));
            assert_non_null(strstr(sbm_ctx_last_error(e->ctx), bad));

            /* bytes after the last stream that start no other */
            unsigned char *t = malloc(len + 8);
            assert_non_null(t);
            memcpy(t, b, len);
            memcpy(t + len, "garbage\n", 8);
            spill(bad, t, len + 8);
            SBM_ASSERT_FAILS(e->ctx, fc->read(e->ctx, bad, &got, &n), SBM_ERR_IO,
                             k == 0 ? "trailing data after the gzip stream is not gzip data"
                                    : "trailing data after the bzip2 stream is not bzip2 data");
            free(t);
            free(c);
            free(b);
        }
    }
    /* only the magic bytes: ends early on line 1 */
    const char *magic = sbm_test_tmp_path("magic_only.mtx");
    spill(magic, (const unsigned char *)"\x1f\x8b", 2);
    sbm_csr *A = (sbm_csr *)&A;
    char want[1200];
    snprintf(want, sizeof want, "%s:1: cannot decompress: the compressed file ends early", magic);
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_read_mtx(e->ctx, magic, &A), SBM_ERR_IO, want);
    assert_null(A);
    /* gzip's magic and then no gzip header */
    spill(magic, (const unsigned char *)"\x1f\x8bnot a gzip header\n", 20);
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_read_mtx(e->ctx, magic, &A), SBM_ERR_IO, "corrupt gzip data");
    assert_null(A);
}

/* The line in the message is the one being read when the data broke off. */
static void test_damaged_line(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    /* 200000 lines of a valid Matrix Market file, gzip-compressed, cut at two thirds: the
     * message names a line past the first buffer (64 KiB of text) */
    const char *plain = sbm_test_tmp_path("long.mtx"), *gz = sbm_test_tmp_path("long.mtx.gz");
    FILE *f = fopen(plain, "wb");
    assert_non_null(f);
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n200000 1 200000\n");
    for (int i = 1; i <= 200000; i++) fprintf(f, "%d 1 %d.5\n", i, i);
    assert_int_equal(fclose(f), 0);
    sbm_test_recode(plain, gz, "gz");
    size_t len;
    unsigned char *b = slurp(gz, &len);
    spill(gz, b, len * 2 / 3);
    free(b);
    sbm_csr *A = NULL;
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_read_mtx(e->ctx, gz, &A), SBM_ERR_IO, "ends early");
    const char *msg = sbm_ctx_last_error(e->ctx);
    const char *at = strstr(msg, gz);
    assert_non_null(at);
    const long line = strtol(at + strlen(gz) + 1, NULL, 10);
    if (!(line > 10000 && line < 200002))
        fail_msg("the message names line %ld: %s", line, msg);
}

/* The writer compresses by name (".gz": gzip, ".bz2": bzip2, else plain); every form holds the
 * same text (decompressed here independently) and reads back bitwise. */
static void test_write_by_name(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const sbm_bal_generate_options o = sbm_bal_generate_defaults(30, 2000, 3, 12);
    sbm_bal_problem *p = NULL;
    SBM_ASSERT_OK(e->host, sbm_bal_generate(e->host, &o, &p));
    static const struct {
        const char *name;
        unsigned char magic[3];
        size_t nmagic;
    } outs[] = {
        {"w.txt", {0, 0, 0}, 0},
        {"w.txt.gz", {0x1f, 0x8b, 0}, 2},
        {"w.txt.bz2", {'B', 'Z', 'h'}, 3},
    };
    size_t nplain = 0;
    unsigned char *plain = NULL;
    double *want = NULL;
    size_t nwant = 0;
    for (size_t k = 0; k < sizeof outs / sizeof outs[0]; k++) {
        const char *path = sbm_test_tmp_path(outs[k].name);
        SBM_ASSERT_OK(e->host, sbm_bal_write(e->host, path, p));
        size_t len;
        unsigned char *b = slurp(path, &len);
        if (outs[k].nmagic) assert_memory_equal(b, outs[k].magic, outs[k].nmagic);
        else assert_true(b[0] >= '0' && b[0] <= '9'); /* text */
        free(b);
        const char *text = sbm_test_tmp_path("w.decompressed");
        sbm_test_recode(path, text, "plain");
        unsigned char *t = slurp(text, &len);
        if (k == 0) {
            plain = t;
            nplain = len;
            SBM_ASSERT_OK(e->ctx, read_bal(e->ctx, path, &want, &nwant));
        } else {
            assert_int_equal(len, nplain);
            assert_memory_equal(t, plain, len);
            free(t);
            const format_case fc = {outs[k].name, NULL, read_bal};
            assert_reads_equal(e, &fc, want, nwant, path);
        }
    }
    free(plain);
    free(want);
    sbm_bal_destroy(p);
}

/* A write that fails midway (a file size limit, in a child process) fails the call with
 * SBM_ERR_IO naming the file, for each kind, and leaves neither the file nor a temporary. */
static void test_write_failure(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const sbm_bal_generate_options o = sbm_bal_generate_defaults(30, 2000, 3, 13);
    sbm_bal_problem *p = NULL;
    SBM_ASSERT_OK(e->host, sbm_bal_generate(e->host, &o, &p));
    static const char *const names[] = {"limited.txt", "limited.txt.gz", "limited.txt.bz2"};
    for (size_t k = 0; k < 3; k++) {
        const char *path = sbm_test_tmp_path(names[k]);
        fflush(NULL);
        const pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            signal(SIGXFSZ, SIG_IGN); /* a write past the limit fails with EFBIG instead */
            const struct rlimit lim = {4096, 4096};
            if (setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(2);
            const sbm_status st = sbm_bal_write(e->host, path, p);
            const char *msg = sbm_ctx_last_error(e->host);
            const int good = st == SBM_ERR_IO && strstr(msg, path) && strstr(msg, "cannot ");
            if (!good) fprintf(stderr, "%s: %s\n", sbm_status_name(st), msg);
            sbm_bal_destroy(p); /* nothing left for a leak checker in the child either */
            _exit(good ? 0 : 1);
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0))
            fail_msg("%s: the write past the size limit did not fail with SBM_ERR_IO naming the "
                     "file (child status %d)", names[k], status);
        struct stat sb;
        assert_int_not_equal(stat(path, &sb), 0);
    }
    DIR *d = opendir(sbm_test_tmp_dir);
    assert_non_null(d);
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL)
        if (strstr(ent->d_name, ".tmp.")) fail_msg("temporary file %s left behind", ent->d_name);
    closedir(d);
    sbm_bal_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_same_as_plain),
        SBM_TEST_BOTH(test_fifo),
        SBM_TEST_BOTH(test_damaged),
        SBM_TEST_BOTH(test_damaged_line),
        SBM_TEST_BOTH(test_write_by_name),
        SBM_TEST_BOTH(test_write_failure),
    };
    return cmocka_run_group_tests(tests, sbm_test_make_tmp_dir, sbm_test_remove_tmp_dir);
}
