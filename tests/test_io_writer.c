/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, symlink, mkfifo */
/* Where the writers of sbm_io.h write: a regular file, a new name, or a symbolic link
 * to a regular file through a temporary and a rename (the link stays a link, its target is
 * replaced, its mode kept); a file with hard links refused (the rename would replace one
 * name only); a character device, a link to one, and a FIFO in place, never
 * replaced; every write error (ENOSPC on /dev/full, plain and compressed) is SBM_ERR_IO with
 * the reason. The CLI's side (-o -, -o FIFO, two outputs naming one file) is
 * tests/cli/test_cli_output.sh. Host files: the CPU backend only. */
#include "test_util.h"

#include "io_internal.h" /* to plant a non-finite value in a const-viewed array */

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

typedef struct tmpdir {
    char path[512];
} tmpdir;

static void tmpdir_make(tmpdir *d)
{
    const char *base = getenv("TMPDIR");
    snprintf(d->path, sizeof d->path, "%s/sbm_test_writer_XXXXXX", base && *base ? base : "/tmp");
    assert_non_null(mkdtemp(d->path));
}

static void tmpdir_remove(tmpdir *d)
{
    DIR *h = opendir(d->path);
    if (!h) return;
    struct dirent *ent;
    char p[1024];
    while ((ent = readdir(h)) != NULL) {
        if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", d->path, ent->d_name);
        unlink(p);
    }
    closedir(h);
    rmdir(d->path);
}

static const char *tmp_path(const tmpdir *d, const char *name)
{
    static char buf[8][1024];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, sizeof buf[0], "%s/%s", d->path, name);
    return p;
}

/* Entries of dir whose name contains part. */
static int count_entries(const char *dir, const char *part)
{
    DIR *h = opendir(dir);
    assert_non_null(h);
    int n = 0;
    struct dirent *ent;
    while ((ent = readdir(h)) != NULL) n += strstr(ent->d_name, part) != NULL;
    closedir(h);
    return n;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *b = calloc(1 << 16, 1);
    assert_non_null(b);
    (void)fread(b, 1, (1 << 16) - 1, f);
    fclose(f);
    return b;
}

static int is_char_device(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0 && S_ISCHR(sb.st_mode);
}

static int is_link(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode);
}

static sbm_csr *small_csr(sbm_ctx *ctx)
{
    const int64_t rowptr[3] = {0, 1, 2};
    const int32_t colind[2] = {0, 1};
    const double values[2] = {1.5, -2};
    sbm_csr *A = NULL;
    SBM_ASSERT_OK(ctx, sbm_csr_create(ctx, &A, 2, 2, rowptr, colind, values));
    return A;
}

/* /dev/null and /dev/full are written in place and stay character devices; the ENOSPC of
 * /dev/full reaches the caller from every writer, compressed or not. */
static void test_devices(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    if (!is_char_device("/dev/null") || !is_char_device("/dev/full")) skip();
    sbm_csr *A = small_csr(e->ctx);
    SBM_ASSERT_OK(e->ctx, sbm_csr_write_mtx(e->ctx, "/dev/null", A));
    assert_true(is_char_device("/dev/null"));
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_write_mtx(e->ctx, "/dev/full", A), SBM_ERR_IO,
                     strerror(ENOSPC));
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_write_mtx(e->ctx, "/dev/full", A), SBM_ERR_IO, "/dev/full");
    const double x[3] = {1, 2, 3};
    SBM_ASSERT_FAILS(e->ctx, sbm_dense_write_mtx(e->ctx, "/dev/full", 3, 1, x, 3), SBM_ERR_IO,
                     strerror(ENOSPC));
    SBM_ASSERT_FAILS(e->ctx, sbm_dense_write_txt(e->ctx, "/dev/full", 3, x), SBM_ERR_IO,
                     strerror(ENOSPC));
    sbm_bal_problem *p = NULL;
    const sbm_bal_generate_options g = sbm_bal_generate_defaults(3, 7, 3, 5);
    SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &g, &p));
    SBM_ASSERT_OK(e->ctx, sbm_bal_write(e->ctx, "/dev/null", p));
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_write(e->ctx, "/dev/full", p), SBM_ERR_IO, strerror(ENOSPC));
    sbm_bal_destroy(p);
    assert_true(is_char_device("/dev/null"));
    assert_true(is_char_device("/dev/full"));

    /* compressed: the names end in .gz and .bz2 through links to /dev/full */
    tmpdir d;
    tmpdir_make(&d);
    const char *gz = tmp_path(&d, "full.mtx.gz"), *bz = tmp_path(&d, "full.mtx.bz2");
    assert_int_equal(symlink("/dev/full", gz), 0);
    assert_int_equal(symlink("/dev/full", bz), 0);
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_write_mtx(e->ctx, gz, A), SBM_ERR_IO, strerror(ENOSPC));
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_write_mtx(e->ctx, bz, A), SBM_ERR_IO, "cannot");
    assert_true(is_link(gz) && is_link(bz));
    assert_int_equal(count_entries(d.path, ".tmp."), 0);
    tmpdir_remove(&d);
    sbm_csr_destroy(A);
}

/* A link to a regular file: the target is replaced (mode kept), the link stays a link. A link
 * to a missing file creates the target. */
static void test_symlinks(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    tmpdir d;
    tmpdir_make(&d);
    sbm_csr *A = small_csr(e->ctx);
    const char *ref = tmp_path(&d, "ref.mtx");
    SBM_ASSERT_OK(e->ctx, sbm_csr_write_mtx(e->ctx, ref, A));
    char *want = slurp(ref);

    const char *target = tmp_path(&d, "target.mtx"), *link = tmp_path(&d, "link.mtx");
    FILE *f = fopen(target, "w");
    assert_non_null(f);
    fputs("old\n", f);
    fclose(f);
    assert_int_equal(chmod(target, 0640), 0);
    assert_int_equal(symlink("target.mtx", link), 0);
    SBM_ASSERT_OK(e->ctx, sbm_csr_write_mtx(e->ctx, link, A));
    assert_true(is_link(link));
    char *got = slurp(target);
    assert_string_equal(got, want);
    free(got);
    struct stat sb;
    assert_int_equal(stat(target, &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0640);

    const char *dangling = tmp_path(&d, "dangling.mtx");
    assert_int_equal(symlink("created.mtx", dangling), 0);
    SBM_ASSERT_OK(e->ctx, sbm_csr_write_mtx(e->ctx, dangling, A));
    assert_true(is_link(dangling));
    got = slurp(tmp_path(&d, "created.mtx"));
    assert_string_equal(got, want);
    free(got);
    assert_int_equal(count_entries(d.path, ".tmp."), 0);
    free(want);
    sbm_csr_destroy(A);
    tmpdir_remove(&d);
}

/* A regular file with a second name (a hard link), written through either name, through a
 * symbolic link to it, plain or compressed, by each writer: refused with SBM_ERR_IO naming the
 * path and the link count, both names still one file with the old contents, no temporary left.
 * Once the other name is removed the write goes through. */
static void test_hard_links(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    tmpdir d;
    tmpdir_make(&d);
    sbm_csr *A = small_csr(e->ctx);
    const char *a = tmp_path(&d, "a.mtx"), *b = tmp_path(&d, "b.mtx"), *sym = tmp_path(&d, "s.mtx");
    const char *agz = tmp_path(&d, "a.mtx.gz"), *bgz = tmp_path(&d, "b.mtx.gz");
    FILE *f = fopen(a, "w");
    assert_non_null(f);
    fputs("old\n", f);
    fclose(f);
    assert_int_equal(link(a, b), 0);
    assert_int_equal(symlink("a.mtx", sym), 0);
    f = fopen(agz, "w");
    assert_non_null(f);
    fputs("old\n", f);
    fclose(f);
    assert_int_equal(link(agz, bgz), 0);
    const char *names[4] = {a, b, sym, agz};
    const double x[3] = {1, 2, 3};
    for (int k = 0; k < 4; k++) {
        char want[1200];
        snprintf(want, sizeof want, "%s: %shas 2 hard links; writing it would replace this name only "
                 "and leave the other 1 with the old contents", names[k],
                 k == 2 ? "the file this symbolic link names " : "");
        SBM_ASSERT_FAILS(e->ctx, sbm_csr_write_mtx(e->ctx, names[k], A), SBM_ERR_IO, want);
        SBM_ASSERT_FAILS(e->ctx, sbm_dense_write_mtx(e->ctx, names[k], 3, 1, x, 3), SBM_ERR_IO, want);
        SBM_ASSERT_FAILS(e->ctx, sbm_dense_write_txt(e->ctx, names[k], 3, x), SBM_ERR_IO, want);
    }
    struct stat sa, sb;
    assert_int_equal(stat(a, &sa), 0);
    assert_int_equal(stat(b, &sb), 0);
    assert_true(sa.st_ino == sb.st_ino && sa.st_nlink == 2);
    assert_true(is_link(sym));
    char *got = slurp(b);
    assert_string_equal(got, "old\n");
    free(got);
    assert_int_equal(count_entries(d.path, ".tmp."), 0);
    /* one name again: written as any regular file */
    assert_int_equal(unlink(b), 0);
    SBM_ASSERT_OK(e->ctx, sbm_csr_write_mtx(e->ctx, a, A));
    got = slurp(a);
    assert_non_null(strstr(got, "%%MatrixMarket"));
    free(got);
    sbm_csr_destroy(A);
    tmpdir_remove(&d);
}

/* A FIFO is written in place to its reader (a child process) and stays a FIFO. */
static void test_fifo(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    tmpdir d;
    tmpdir_make(&d);
    sbm_csr *A = small_csr(e->ctx);
    const char *ref = tmp_path(&d, "ref.mtx"), *fifo = tmp_path(&d, "fifo");
    const char *copy = tmp_path(&d, "copy.mtx");
    SBM_ASSERT_OK(e->ctx, sbm_csr_write_mtx(e->ctx, ref, A));
    assert_int_equal(mkfifo(fifo, 0600), 0);
    const pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) { /* the reader: copy the FIFO into copy.mtx */
        FILE *in = fopen(fifo, "rb"), *out = fopen(copy, "wb");
        int c;
        while (in && out && (c = fgetc(in)) != EOF) fputc(c, out);
        _exit(in && out && fclose(out) == 0 ? 0 : 1);
    }
    SBM_ASSERT_OK(e->ctx, sbm_csr_write_mtx(e->ctx, fifo, A));
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct stat sb;
    assert_int_equal(lstat(fifo, &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    char *want = slurp(ref), *got = slurp(copy);
    assert_string_equal(got, want);
    free(want);
    free(got);
    sbm_csr_destroy(A);
    tmpdir_remove(&d);
}

/* No writer writes inf or NaN: each refuses before the file exists, naming the entry. */
static void test_refuse_non_finite(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    tmpdir d;
    tmpdir_make(&d);
    sbm_bal_problem *p = NULL;
    const sbm_bal_generate_options g = sbm_bal_generate_defaults(3, 7, 3, 5);
    SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &g, &p));
    p->obs_xy[5] = INFINITY;
    const char *out = tmp_path(&d, "p.txt");
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_write(e->ctx, out, p), SBM_ERR_NOT_FINITE,
                     "coordinate 2 of observation 2 is inf");
    sbm_bal_destroy(p);

    const char *in = tmp_path(&d, "g.g2o");
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    fputs("VERTEX_SE2 3 0 0 0\nVERTEX_SE2 4 1 0 0\nEDGE_SE2 3 4 1 0 0 1 0 0 1 0 1\n", f);
    fclose(f);
    sbm_g2o_graph *gr = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, in, &gr));
    gr->emeas[1] = NAN;
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_write(e->ctx, out, gr), SBM_ERR_NOT_FINITE,
                     "value 2 of the measurement of edge 0 (vertex 3 to vertex 4) is nan");
    gr->emeas[1] = 0;
    gr->einfo[4] = -INFINITY;
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_write(e->ctx, out, gr), SBM_ERR_NOT_FINITE,
                     "value 5 of the information matrix of edge 0 (vertex 3 to vertex 4) is -inf");
    sbm_g2o_destroy(gr);
    struct stat sb;
    assert_int_equal(stat(out, &sb), -1);
    assert_int_equal(count_entries(d.path, ".tmp."), 0);
    tmpdir_remove(&d);
}

/* sbm_csr_write_mtx_symmetric: the lower triangle under the "symmetric" banner, read back as
 * the full matrix; the entries above the diagonal are not read; a matrix that is not square,
 * a NULL path and a non-finite entry are refused before the file exists. */
static void test_symmetric_mtx(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    tmpdir d;
    tmpdir_make(&d);
    /* [[4, 1, 0], [1, 5, 2], [0, 2, 6]]; the (0,1) entry above the diagonal says 99: not read */
    const int64_t rowptr[4] = {0, 2, 5, 7};
    const int32_t colind[7] = {0, 1, 0, 1, 2, 1, 2};
    double values[7] = {4, 99, 1, 5, 2, 2, 6.25};
    sbm_csr *A = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_csr_create(e->ctx, &A, 3, 3, rowptr, colind, values));
    const char *out = tmp_path(&d, "s.mtx");
    SBM_ASSERT_OK(e->ctx, sbm_csr_write_mtx_symmetric(e->ctx, out, A));
    char *text = slurp(out);
    assert_string_equal(text, "%%MatrixMarket matrix coordinate real symmetric\n3 3 5\n"
                              "1 1 4\n2 1 1\n2 2 5\n3 2 2\n3 3 6.25\n");
    free(text);
    sbm_csr *B = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_csr_read_mtx(e->ctx, out, &B));
    assert_int_equal(B->nnz, 7);
    const double want[7] = {4, 1, 1, 5, 2, 2, 6.25};
    assert_memory_equal(B->values, want, sizeof want);
    sbm_csr_destroy(B);
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_write_mtx_symmetric(e->ctx, NULL, A), SBM_ERR_NULL_ARGUMENT,
                     "argument path is NULL");
    sbm_csr_destroy(A);
    values[2] = NAN;
    SBM_ASSERT_OK(e->ctx, sbm_csr_create(e->ctx, &A, 3, 3, rowptr, colind, values));
    const char *bad = tmp_path(&d, "nan.mtx");
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_write_mtx_symmetric(e->ctx, bad, A), SBM_ERR_NOT_FINITE,
                     "entry (2,1) (1-based) is nan");
    sbm_csr_destroy(A);
    SBM_ASSERT_OK(e->ctx, sbm_csr_create(e->ctx, &A, 2, 3, rowptr, colind, values));
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_write_mtx_symmetric(e->ctx, bad, A),
                     SBM_ERR_DIMENSION_MISMATCH,
                     "argument A: 2 x 3 is not square; '");
    sbm_csr_destroy(A);
    struct stat sb;
    assert_int_equal(stat(bad, &sb), -1);
    assert_int_equal(count_entries(d.path, ".tmp."), 0);
    tmpdir_remove(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_CPU(test_devices),
        SBM_TEST_CPU(test_symlinks),
        SBM_TEST_CPU(test_hard_links),
        SBM_TEST_CPU(test_fifo),
        SBM_TEST_CPU(test_refuse_non_finite),
        SBM_TEST_CPU(test_symmetric_mtx),
    };
    const char *filter = getenv("SBM_TEST_FILTER");
    if (filter && *filter) cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
