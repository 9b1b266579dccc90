/* SPDX-License-Identifier: BSD-3-Clause */
/* The text readers' limits and odd-but-valid starts, for every reader (Matrix
 * Market, BAL, g2o): a UTF-8 byte-order mark at the start is skipped; a line longer than the
 * readers' limit (16 MiB) is SBM_ERR_PARSE naming the file and line, at once, also for a
 * file without any newline (/dev/zero); header sizes that cannot fit the machine's memory are
 * refused with their size before anything is allocated. Host files: the CPU backend. */
#define _POSIX_C_SOURCE 200809L

#include "test_util.h"

#include "io_internal.h" /* sbm__host_memory_bytes */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A file of the given text followed by `fill` bytes 'x' without a newline. */
static const char *write_long(const char *name, const char *head, size_t fill)
{
    const char *path = sbm_test_tmp_path(name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(head, f);
    char chunk[4096];
    memset(chunk, 'x', sizeof chunk);
    for (size_t k = 0; k < fill; k += sizeof chunk)
        fwrite(chunk, 1, fill - k < sizeof chunk ? fill - k : sizeof chunk, f);
    assert_int_equal(fclose(f), 0);
    return path;
}

static void test_byte_order_mark(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_csr *A = NULL;
    const char *p = sbm_test_write_text("bom.mtx", "\xEF\xBB\xBF%%MatrixMarket matrix coordinate "
                                                   "real symmetric\n2 2 2\n1 1 4\n2 1 -1.5\n");
    SBM_ASSERT_OK(e->ctx, sbm_csr_read_mtx(e->ctx, p, &A));
    const double want[4] = {4, -1.5, -1.5, 0};
    sbm_test_assert_csr_dense(A, want, 0.0);
    sbm_csr_destroy(A);
    /* without a banner: the size line first */
    p = sbm_test_write_text("bom-nobanner.mtx", "\xEF\xBB\xBF" "1 1 1\n1 1 2.5\n");
    SBM_ASSERT_OK(e->ctx, sbm_csr_read_mtx(e->ctx, p, &A));
    sbm_csr_destroy(A);

    sbm_bal_problem *b = NULL;
    p = sbm_test_write_text("bom.bal", "\xEF\xBB\xBF" "1 1 1\n0 0 0.5 -0.5\n"
                                       "0\n0\n0\n0\n0\n-1\n500\n0\n0\n0\n0\n5\n");
    SBM_ASSERT_OK(e->ctx, sbm_bal_read(e->ctx, p, &b));
    assert_int_equal(sbm_bal_get_info(b).observations, 1);
    sbm_bal_destroy(b);
    /* only at the start of the file: elsewhere it is not a number */
    p = sbm_test_write_text("bom2.bal", "1 1 1\n\xEF\xBB\xBF" "0 0 0.5 -0.5\n");
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_read(e->ctx, p, &b), SBM_ERR_PARSE, "bom2.bal:2:");
}

static void test_long_lines(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const size_t over = ((size_t)1 << 24) + 10;
    char where[64];
    sbm_csr *A = NULL;
    const char *p = write_long("long.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                           "2 2 1\n%", over);
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_read_mtx(e->ctx, p, &A), SBM_ERR_PARSE,
                     "long.mtx:3: the line is longer than 16777216 bytes");
    assert_null(A);
    sbm_bal_problem *b = NULL;
    p = write_long("long.bal", "1 1 1\n0 0 ", over);
    snprintf(where, sizeof where, "long.bal:2: the line is longer");
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_read(e->ctx, p, &b), SBM_ERR_PARSE, where);
    sbm_g2o_graph *g = NULL;
    p = write_long("long.g2o", "", over);
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read(e->ctx, p, &g), SBM_ERR_PARSE,
                     "long.g2o:1: the line is longer");
    /* a line just under the limit still reads (a comment) */
    p = write_long("under.mtx", "%%MatrixMarket matrix coordinate real general\n%", (1u << 23));
    FILE *f = fopen(p, "ab");
    assert_non_null(f);
    fputs("\n1 1 1\n1 1 3\n", f);
    fclose(f);
    SBM_ASSERT_OK(e->ctx, sbm_csr_read_mtx(e->ctx, p, &A));
    sbm_csr_destroy(A);

    /* /dev/zero: no newline ever; refused after 16 MiB, not after memory runs out */
    FILE *z = fopen("/dev/zero", "rb");
    if (!z) return;
    fclose(z);
    const clock_t t0 = clock();
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_read_mtx(e->ctx, "/dev/zero", &A), SBM_ERR_PARSE,
                     "/dev/zero:1: the line is longer");
    SBM_ASSERT_FAILS(e->ctx, sbm_bal_read(e->ctx, "/dev/zero", &b), SBM_ERR_PARSE,
                     "/dev/zero:1: the line is longer");
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read(e->ctx, "/dev/zero", &g), SBM_ERR_PARSE,
                     "/dev/zero:1: the line is longer");
    assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 20.0);
}

/* Sizes whose arrays cannot fit the machine's memory are refused at the size line, before
 * anything that large is allocated (the context's allocator sees nothing above 1 MiB). */
static void test_header_sizes(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_csr *A = NULL;
    /* a compressed file's entry count is not bounded by its size: 2^62 entries */
    const char *plain = sbm_test_write_text("many.txt", "%%MatrixMarket matrix coordinate real "
                                                        "general\n3 3 4611686018427387904\n");
    const char *gz = sbm_test_tmp_path("many.mtx.gz");
    sbm_test_recode(plain, gz, "gz");
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_read_mtx(e->ctx, gz, &A), SBM_ERR_OUT_OF_MEMORY,
                     "many.mtx.gz:2: size line: a 3 x 3 matrix with 4611686018427387904 entries "
                     "needs at least");
    SBM_ASSERT_FAILS(e->ctx, sbm_csr_read_mtx(e->ctx, gz, &A), SBM_ERR_OUT_OF_MEMORY,
                     "more than this machine's memory");
    assert_null(A);
    /* 2^31 - 1 rows in a 67-byte file: 51 GB of row pointers and counts, refused where the
     * machine has less */
    const char *tall = sbm_test_write_text("tall.mtx", "%%MatrixMarket matrix coordinate real "
                                                       "general\n2147483647 3 1\n1 1 1\n");
    const double have = sbm__host_memory_bytes();
    if (have > 0 && have < 5e10)
        SBM_ASSERT_FAILS(e->ctx, sbm_csr_read_mtx(e->ctx, tall, &A), SBM_ERR_OUT_OF_MEMORY,
                         "tall.mtx:2: size line: a 2147483647 x 3 matrix with 1 entries needs "
                         "at least 51539607600 bytes");
    else
        print_message("  (skipped the 2^31-row file: this machine has %.0f bytes)\n", have);
}

/* A CPU context's memory budget bounds the reader's workspace: a 3 x 3 file of 4 entries needs
 * 8 (m + 1) + 8 (max(m, n) + 1) + 36 nnz = 208 bytes besides the matrix (the size line's
 * count; a symmetric file's entries twice: 352). Refused above the budget with the numbers, read
 * at exactly it and without one. A CUDA context's budget (device memory) does not apply. */
static void test_memory_budget(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const char *gen = sbm_test_write_text("budget.mtx", "%%MatrixMarket matrix coordinate real "
                                                        "general\n3 3 4\n1 1 1\n2 2 2\n3 3 3\n1 3 4\n");
    const char *sym = sbm_test_write_text("budget_sym.mtx", "%%MatrixMarket matrix coordinate "
                                                            "real symmetric\n3 3 4\n1 1 1\n2 2 2\n"
                                                            "3 3 3\n3 1 4\n");
    const char *paths[2] = {gen, sym};
    const double need[2] = {208, 352};
    sbm_csr *A = NULL;
    for (int k = 0; k < 2; k++) {
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, (size_t)need[k] - 1));
        if (e->backend == SBM_BACKEND_CPU) {
            char want[1200];
            snprintf(want, sizeof want, "%s:2: size line: reading a 3 x 3 matrix with 4 entries "
                     "needs at least %.0f bytes of workspace, more than the context's memory "
                     "budget (%.0f bytes, sbm_ctx_set_memory_budget)", paths[k], need[k], need[k] - 1);
            SBM_ASSERT_FAILS(e->ctx, sbm_csr_read_mtx(e->ctx, paths[k], &A), SBM_ERR_OUT_OF_MEMORY, want);
            assert_null(A);
        } else {
            SBM_ASSERT_OK(e->ctx, sbm_csr_read_mtx(e->ctx, paths[k], &A));
            sbm_csr_destroy(A);
        }
        for (int b = 0; b < 2; b++) {
            SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, b ? 0 : (size_t)need[k]));
            SBM_ASSERT_OK(e->ctx, sbm_csr_read_mtx(e->ctx, paths[k], &A));
            assert_int_equal(sbm_csr_get_info(A).nnz, k ? 5 : 4);
            sbm_csr_destroy(A);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_CPU(test_byte_order_mark),
        SBM_TEST_CPU(test_long_lines),
        SBM_TEST_CPU(test_header_sizes),
        SBM_TEST_BOTH(test_memory_budget),
    };
    return cmocka_run_group_tests(tests, sbm_test_make_tmp_dir, sbm_test_remove_tmp_dir);
}
