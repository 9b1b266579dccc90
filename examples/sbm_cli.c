/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm: command-line front end to the library.
 *
 *   sbm gemm [--backend cpu|cuda|auto] [--block-a RxK] [--block-b KxC] [--block B] [--ta] [--tb]
 *            [--upper] A.mtx B.mtx -o C.mtx
 *   sbm spmv [--backend cpu|cuda|auto] [--format F] [--alpha A] [--beta B]
 *            [--x FILE | --seed S] [--y FILE] [--repeat N] -o Y.mtx A.mtx
 *   sbm spmm [--backend cpu|cuda|auto] [--alpha A] [--beta B] (--b FILE | --cols K [--seed S])
 *            [--c FILE] [--col-major] [--repeat N] -o C.mtx A.mtx
 *   sbm info [--block B | --block RxC] A.mtx
 *   sbm --help | --version
 *
 * gemm and info are here, spmv and spmm in sbm_cli_mult.c, the BA/SLAM commands in
 * sbm_cli_ba.c. Sparse matrices are Matrix Market coordinate files; dense vectors and matrices
 * are Matrix Market array files (sbm_dense_read_mtx). Every output appears only when the whole
 * command succeeded. Exit status: 0 success, 1 the library (or a file) failed, 2 the command
 * line is wrong. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sbm.h"
#include "sbm_ba.h"
#include "sbm_io.h"
#include "sbm_slam.h"
#include "cli_common.h"
#include "sbm_cli_ba.h"
#include "sbm_cli_mult.h"

static const char *const usage_main =
    "usage: sbm <command> [options]\n"
    "\n"
    "commands:\n"
    "  gemm          multiply two Matrix Market matrices viewed as sparse block matrices\n"
    "  spmv          sparse matrix times a dense vector, y = alpha*A*x + beta*y\n"
    "  spmm          sparse matrix times a dense matrix, C = alpha*A*B + beta*C\n"
    "  info          describe a Matrix Market matrix viewed with a block shape\n"
    SBM_CLI_BA_COMMANDS
    "\n"
    "options:\n"
    "  --help      show this help (sbm <command> --help: help on a command)\n"
    "  --version   show the library version and whether the CUDA backend is available\n"
    "  --threads N the CPU backend's threads, 1 to 64, with any command (default: SBM_NUM_THREADS,\n"
    "              else the online cores); results are bitwise the same for any N\n"
    "\n"
    "output files (-o, --rhs): a regular file (or a new name, or a symbolic link to a regular\n"
    "file, whose target is replaced) is written to a temporary beside it and renamed into place;\n"
    "a device, a FIFO, /dev/stdout or /dev/fd/N is written in place, and '-' is the standard\n"
    "output (the report lines then go to stderr). A file with hard links (other names) is\n"
    "refused: the rename would replace this name only. A write error, a full disk included,\n"
    "fails the command. Two outputs of one command must name different files.\n";

static const char *const usage_gemm =
    "usage: sbm gemm [--backend cpu|cuda|auto] [--block-a RxK] [--block-b KxC] [--block B]\n"
    "                [--ta] [--tb] [--upper] A.mtx B.mtx -o C.mtx\n"
    "\n"
    "Computes C = op(A) * op(B) and writes it as a scalar Matrix Market file (real general).\n"
    "With 1x1 blocks for both (the default) and without --upper, the scalar CSR SpGEMM\n"
    "(sbm_csr_gemm) computes C, --ta/--tb transposing A/B first (sbm_csr_transpose); otherwise\n"
    "the block SpGEMM (sbm_cbc_gemm) does, --upper included.\n"
    "\n"
    "  --backend B         cpu (default), cuda, auto (cuda when a GPU is present)\n"
    "  --block-a RxK       block shape of A as stored in its file (default 1x1)\n"
    "  --block-b KxC       block shape of B as stored in its file (default 1x1)\n"
    "  --block B           B x B blocks for both A and B (RxC also accepted)\n"
    "  --ta, --tb          use the transpose of A, of B (blocks transposed too)\n"
    "  --upper             keep only the upper block triangle of C (C must be square in blocks)\n"
    "  -o, --output FILE   the result; written only when everything succeeded\n"
    "\n"
    "Every stored block of C is written in full (r*c entries, explicit zeros included); the\n"
    "scalar path writes every entry of C's structural pattern, explicit zeros included.\n";

static const char *const usage_info =
    "usage: sbm info [--block B | --block RxC] A.mtx\n"
    "\n"
    "Prints the dimensions, stored entries, block dimensions, stored blocks, fill ratio\n"
    "(scalars stored in blocks / stored entries), blocks per block column and symmetry.\n";

/* ---------------------------------------------------------------------------------------- */
/* Command-line helpers                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* A positive int. @return 1 on success. */
static int parse_positive(const char *s, const char **end, int *out)
{
    char *e = NULL;
    errno = 0;
    long v = strtol(s, &e, 10);
    if (e == s || errno != 0 || v < 1 || v > INT_MAX || *s == '+' || *s == '-') return 0;
    *out = (int)v;
    *end = e;
    return 1;
}

/* "B" (B x B) or "RxC". @return 1 on success. */
static int parse_shape(const char *s, int *r, int *c)
{
    const char *e = NULL;
    if (!parse_positive(s, &e, r)) return 0;
    if (*e == '\0') {
        *c = *r;
        return 1;
    }
    if (*e != 'x' && *e != 'X') return 0;
    if (!parse_positive(e + 1, &e, c)) return 0;
    return *e == '\0';
}

/* ---------------------------------------------------------------------------------------- */
/* sbm gemm                                                                                 */
/* ---------------------------------------------------------------------------------------- */

typedef struct gemm_args {
    cli_backend backend;
    int ra, ka; /* A's blocks as stored */
    int kb, cb; /* B's blocks as stored */
    int ta, tb, upper;
    const char *a_path;
    const char *b_path;
    const char *out_path;
} gemm_args;

static int parse_gemm(int argc, char **argv, gemm_args *g, int *help)
{
    int block_set = 0, block_r = 1, block_c = 1;
    int a_set = 0, b_set = 0;
    int npos = 0, only_positional = 0;
    const char *pos[2] = {NULL, NULL};
    memset(g, 0, sizeof(*g));
    g->backend = CLI_BACKEND_CPU;
    *help = 0;

    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        int m;
        if (only_positional || a[0] != '-' || a[1] == '\0') {
            if (npos == 2) return cli_usage_error(usage_gemm, "gemm: unexpected argument '%s'", a);
            pos[npos++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_positional = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            *help = 1;
            return 0;
        } else if (strcmp(a, "--ta") == 0) {
            g->ta = 1;
        } else if (strcmp(a, "--tb") == 0) {
            g->tb = 1;
        } else if (strcmp(a, "--upper") == 0) {
            g->upper = 1;
        } else if ((m = cli_match_option(argc, argv, &i, "--backend", 1, &v)) != 0) {
            if (m < 0) return cli_usage_error(usage_gemm, "gemm: option %s needs a value", a);
            if (!cli_parse_backend(v, &g->backend))
                return cli_usage_error(usage_gemm,
                                       "gemm: unknown backend '%s' (cpu, cuda or auto)", v);
        } else if ((m = cli_match_option(argc, argv, &i, "--block-a", 1, &v)) != 0) {
            if (m < 0) return cli_usage_error(usage_gemm, "gemm: option %s needs a value", a);
            if (!parse_shape(v, &g->ra, &g->ka))
                return cli_usage_error(usage_gemm, "gemm: invalid block shape '%s' (RxC or B)", v);
            a_set = 1;
        } else if ((m = cli_match_option(argc, argv, &i, "--block-b", 1, &v)) != 0) {
            if (m < 0) return cli_usage_error(usage_gemm, "gemm: option %s needs a value", a);
            if (!parse_shape(v, &g->kb, &g->cb))
                return cli_usage_error(usage_gemm, "gemm: invalid block shape '%s' (RxC or B)", v);
            b_set = 1;
        } else if ((m = cli_match_option(argc, argv, &i, "--block", 1, &v)) != 0) {
            if (m < 0) return cli_usage_error(usage_gemm, "gemm: option %s needs a value", a);
            if (!parse_shape(v, &block_r, &block_c))
                return cli_usage_error(usage_gemm, "gemm: invalid block shape '%s' (RxC or B)", v);
            block_set = 1;
        } else if ((m = cli_match_option(argc, argv, &i, "--output", 1, &v)) != 0 ||
                   (m = cli_match_option(argc, argv, &i, "-o", 1, &v)) != 0) {
            if (m < 0) return cli_usage_error(usage_gemm, "gemm: option %s needs a value", a);
            g->out_path = v;
        } else {
            return cli_usage_error(usage_gemm, "gemm: unknown option '%s'", a);
        }
    }
    /* --block-a / --block-b win over --block whatever their order. */
    if (!a_set) {
        g->ra = block_set ? block_r : 1;
        g->ka = block_set ? block_c : 1;
    }
    if (!b_set) {
        g->kb = block_set ? block_r : 1;
        g->cb = block_set ? block_c : 1;
    }
    if (npos < 2) return cli_usage_error(usage_gemm, "gemm: %s", "needs two input files A.mtx B.mtx");
    if (strcmp(pos[0], "-") == 0 && strcmp(pos[1], "-") == 0)
        return cli_usage_error(usage_gemm, "gemm: %s",
                               "one input at most can be '-' (the standard input)");
    if (g->out_path == NULL || g->out_path[0] == '\0')
        return cli_usage_error(usage_gemm, "gemm: %s", "needs an output file: -o C.mtx");
    cli_outputs(g->out_path, NULL);
    if (cli_output_folder_error(g->out_path)) return EXIT_FAILURE;
    g->a_path = pos[0];
    g->b_path = pos[1];
    return 0;
}

/* A's CBC view with r x c blocks (host); the message names the file and the shape. */
static int to_cbc(sbm_ctx *host, const char *path, const sbm_csr *A, int r, int c, sbm_cbc **out)
{
    char context[512];
    *out = NULL;
    if (sbm_csr_to_cbc(host, A, r, c, out) != SBM_SUCCESS) {
        snprintf(context, sizeof(context), "%s with %dx%d blocks", path, r, c);
        return cli_lib_error(host, context);
    }
    return 0;
}

/* A replaced by its transpose (host). */
static int transpose_in_place(sbm_ctx *host, sbm_csr **A)
{
    sbm_csr *AT = NULL;
    if (sbm_csr_transpose(host, *A, &AT) != SBM_SUCCESS) return cli_lib_error(host, NULL);
    sbm_csr_destroy(*A);
    *A = AT;
    return 0;
}

/* C = op(A)*op(B) by the scalar CSR SpGEMM: the transposes are formed first on the host (the
 * scalar API has no op argument). *C is on the host. @return 0 or EXIT_FAILURE (reported). */
static int gemm_scalar(sbm_ctx *host, sbm_ctx *ctx, const gemm_args *g, sbm_csr **A, sbm_csr **B,
                       sbm_csr **C)
{
    sbm_csr *dA = NULL, *dB = NULL, *dC = NULL;
    const sbm_ctx *failed = ctx;
    int rc = EXIT_FAILURE;
    if (g->ta && transpose_in_place(host, A) != 0) return EXIT_FAILURE;
    if (g->tb && transpose_in_place(host, B) != 0) return EXIT_FAILURE;
    if (ctx == host) {
        if (sbm_csr_gemm(host, *A, *B, C) != SBM_SUCCESS) goto fail;
        return 0;
    }
    if (sbm_csr_copy(ctx, *A, &dA) != SBM_SUCCESS) goto fail;
    if (sbm_csr_copy(ctx, *B, &dB) != SBM_SUCCESS) goto fail;
    if (sbm_csr_gemm(ctx, dA, dB, &dC) != SBM_SUCCESS) goto fail;
    failed = host;
    if (sbm_csr_copy(host, dC, C) != SBM_SUCCESS) goto fail;
    rc = 0;
    goto done;
fail:
    cli_lib_error(failed, NULL);
done:
    sbm_csr_destroy(dC);
    sbm_csr_destroy(dB);
    sbm_csr_destroy(dA);
    return rc;
}

/* C = op(A)*op(B) by the block SpGEMM; *C is on the host. @return 0 or EXIT_FAILURE (reported). */
static int gemm_block(sbm_ctx *host, sbm_ctx *ctx, const gemm_args *g, const sbm_csr *A,
                      const sbm_csr *B, sbm_cbc **C)
{
    sbm_cbc *Ab = NULL, *Bb = NULL, *dA = NULL, *dB = NULL, *dC = NULL;
    const sbm_ctx *failed = ctx;
    int rc = EXIT_FAILURE;
    if (to_cbc(host, g->a_path, A, g->ra, g->ka, &Ab) != 0) goto done;
    if (to_cbc(host, g->b_path, B, g->kb, g->cb, &Bb) != 0) goto done;

    const sbm_op op_a = g->ta ? SBM_OP_T : SBM_OP_N;
    const sbm_op op_b = g->tb ? SBM_OP_T : SBM_OP_N;
    const unsigned flags = g->upper ? SBM_GEMM_UPPER : 0u;
    if (ctx == host) {
        if (sbm_cbc_gemm(host, 1.0, op_a, Ab, op_b, Bb, NULL, flags, C) != SBM_SUCCESS) goto fail;
    } else {
        if (sbm_cbc_copy(ctx, Ab, &dA) != SBM_SUCCESS) goto fail;
        if (sbm_cbc_copy(ctx, Bb, &dB) != SBM_SUCCESS) goto fail;
        if (sbm_cbc_gemm(ctx, 1.0, op_a, dA, op_b, dB, NULL, flags, &dC) != SBM_SUCCESS) goto fail;
        failed = host;
        if (sbm_cbc_copy(host, dC, C) != SBM_SUCCESS) goto fail;
    }
    rc = 0;
    goto done;
fail:
    cli_lib_error(failed, NULL);
done:
    sbm_cbc_destroy(dC);
    sbm_cbc_destroy(dB);
    sbm_cbc_destroy(dA);
    sbm_cbc_destroy(Bb);
    sbm_cbc_destroy(Ab);
    return rc;
}

static int cmd_gemm(int argc, char **argv)
{
    gemm_args g;
    int help = 0;
    int rc = parse_gemm(argc, argv, &g, &help);
    if (rc != 0) return rc;
    if (help) {
        fputs(usage_gemm, stdout);
        return 0;
    }

    sbm_ctx *host = NULL, *dev = NULL;
    sbm_csr *A = NULL, *B = NULL, *Cs = NULL;
    sbm_cbc *C = NULL;
    rc = EXIT_FAILURE;

    if (sbm_ctx_create(&host, SBM_BACKEND_CPU, 0) != SBM_SUCCESS) {
        cli_lib_error(NULL, NULL);
        goto done;
    }
    if (cli_apply_threads(host)) goto done;
    if (sbm_csr_read_mtx(host, cli_input(g.a_path), &A) != SBM_SUCCESS ||
        sbm_csr_read_mtx(host, cli_input(g.b_path), &B) != SBM_SUCCESS) {
        cli_lib_error(host, NULL);
        goto done;
    }
    if (cli_make_context(g.backend, &dev) != 0) goto done;
    sbm_ctx *ctx = sbm_ctx_backend(dev) == SBM_BACKEND_CPU ? host : dev;

    /* 1x1 blocks are scalar CSR; --upper (a block-triangle flag the scalar API lacks) stays on
     * the block path */
    const int scalar = g.ra == 1 && g.ka == 1 && g.kb == 1 && g.cb == 1 && !g.upper;
    if (scalar) {
        if (gemm_scalar(host, ctx, &g, &A, &B, &Cs) != 0) goto done;
        /* the library writes to a temporary file and renames it: C.mtx appears only complete */
        if (sbm_csr_write_mtx(host, g.out_path, Cs) != SBM_SUCCESS) {
            cli_lib_error(host, NULL);
            goto done;
        }
        const sbm_csr_info ci = sbm_csr_get_info(Cs);
        cli_printf(
            "C = %s%s * %s%s: %lld x %lld, %lld entries (scalar CSR SpGEMM, backend %s) -> %s\n",
            g.a_path, g.ta ? "^T" : "", g.b_path, g.tb ? "^T" : "", (long long)ci.m,
            (long long)ci.n, (long long)ci.nnz, cli_backend_name(ctx), g.out_path);
    } else {
        if (gemm_block(host, ctx, &g, A, B, &C) != 0) goto done;
        if (sbm_cbc_write_mtx(host, g.out_path, C) != SBM_SUCCESS) {
            cli_lib_error(host, NULL);
            goto done;
        }
        const sbm_cbc_info ci = sbm_cbc_get_info(C);
        cli_printf(
            "C = %s%s * %s%s: %lld x %lld, %lld x %lld blocks of %dx%d, %lld blocks%s (backend "
            "%s) -> %s\n",
            g.a_path, g.ta ? "^T" : "", g.b_path, g.tb ? "^T" : "", (long long)(ci.nbr * ci.r),
            (long long)(ci.nbc * ci.c), (long long)ci.nbr, (long long)ci.nbc, ci.r, ci.c,
            (long long)ci.nnzb, g.upper ? " (upper block triangle)" : "", cli_backend_name(ctx),
            g.out_path);
    }
    rc = 0;

done:
    sbm_cbc_destroy(C);
    sbm_csr_destroy(Cs);
    sbm_csr_destroy(B);
    sbm_csr_destroy(A);
    sbm_ctx_destroy(dev);
    sbm_ctx_destroy(host);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* sbm info                                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* 1 if the patterns (and, with values, the values) of A and AT agree exactly. */
static int same_csr(const sbm_csr_info *a, const sbm_csr_info *b, int values)
{
    if (a->m != b->m || a->n != b->n || a->nnz != b->nnz) return 0;
    if (memcmp(a->rowptr, b->rowptr, (size_t)(a->m + 1) * sizeof(int64_t)) != 0) return 0;
    if (a->nnz == 0) return 1;
    if (memcmp(a->colind, b->colind, (size_t)a->nnz * sizeof(int32_t)) != 0) return 0;
    if (!values) return 1;
    for (int64_t k = 0; k < a->nnz; k++)
        if (a->values[k] != b->values[k]) return 0;
    return 1;
}

static int cmd_info(int argc, char **argv)
{
    int r = 1, c = 1;
    const char *path = NULL;
    int only_positional = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        int m;
        if (only_positional || a[0] != '-' || a[1] == '\0') {
            if (path != NULL) return cli_usage_error(usage_info, "info: unexpected argument '%s'", a);
            path = a;
        } else if (strcmp(a, "--") == 0) {
            only_positional = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_info, stdout);
            return 0;
        } else if ((m = cli_match_option(argc, argv, &i, "--block", 1, &v)) != 0) {
            if (m < 0) return cli_usage_error(usage_info, "info: option %s needs a value", a);
            if (!parse_shape(v, &r, &c))
                return cli_usage_error(usage_info, "info: invalid block shape '%s' (RxC or B)", v);
        } else {
            return cli_usage_error(usage_info, "info: unknown option '%s'", a);
        }
    }
    if (path == NULL) return cli_usage_error(usage_info, "info: %s", "needs an input file A.mtx");

    sbm_ctx *host = NULL;
    sbm_csr *A = NULL, *AT = NULL;
    sbm_cbc *Ab = NULL;
    int rc = EXIT_FAILURE;
    char context[512];
    if (cli_open_matrix(path, &host, &A) != 0) goto done;
    if (sbm_csr_to_cbc(host, A, r, c, &Ab) != SBM_SUCCESS) {
        snprintf(context, sizeof(context), "%s with %dx%d blocks", path, r, c);
        cli_lib_error(host, context);
        goto done;
    }
    sbm_csr_info ai = sbm_csr_get_info(A);
    sbm_cbc_info bi = sbm_cbc_get_info(Ab);

    int symmetric = 0, pattern_symmetric = 0;
    if (ai.m == ai.n) {
        if (sbm_csr_transpose(host, A, &AT) != SBM_SUCCESS) {
            cli_lib_error(host, NULL);
            goto done;
        }
        sbm_csr_info ti = sbm_csr_get_info(AT);
        pattern_symmetric = same_csr(&ai, &ti, 0);
        symmetric = pattern_symmetric && same_csr(&ai, &ti, 1);
    }

    int64_t cmin = 0, cmax = 0;
    for (int64_t j = 0; j < bi.nbc; j++) {
        int64_t n = bi.colptr[j + 1] - bi.colptr[j];
        if (j == 0 || n < cmin) cmin = n;
        if (j == 0 || n > cmax) cmax = n;
    }
    const double cmean = bi.nbc > 0 ? (double)bi.nnzb / (double)bi.nbc : 0.0;

    cli_printf("file: %s\n", path);
    cli_printf("rows: %lld\n", (long long)ai.m);
    cli_printf("columns: %lld\n", (long long)ai.n);
    cli_printf("nnz: %lld\n", (long long)ai.nnz);
    cli_printf("block: %dx%d\n", bi.r, bi.c);
    cli_printf("block rows: %lld\n", (long long)bi.nbr);
    cli_printf("block columns: %lld\n", (long long)bi.nbc);
    cli_printf("nnzb: %lld\n", (long long)bi.nnzb);
    if (ai.nnz > 0)
        cli_printf("fill ratio: %.4f\n", (double)bi.nnzb * bi.r * bi.c / (double)ai.nnz);
    else
        cli_printf("fill ratio: -\n");
    cli_printf("blocks per column: min %lld, mean %.2f, max %lld\n", (long long)cmin, cmean,
               (long long)cmax);
    cli_printf("symmetric: %s\n", symmetric ? "yes" : "no");
    cli_printf("pattern symmetric: %s\n", pattern_symmetric ? "yes" : "no");
    rc = 0;

done:
    sbm_csr_destroy(AT);
    sbm_cbc_destroy(Ab);
    sbm_csr_destroy(A);
    sbm_ctx_destroy(host);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* main                                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* The command's exit status. OpenBLAS's worker threads each map a work buffer (128 MiB) when
 * they start, and where an address-space limit (ulimit -v) leaves no room for it they retry for
 * ever; OpenBLAS's exit handler then waits for them, and the process would never end (even
 * `sbm info` at 80 MB). Under such a limit the CLI flushes its output and ends without running
 * the exit handlers; every output file is complete and closed by then. */
static int cli_finish(int rc)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        if (fflush(NULL) != 0 && rc == 0) rc = EXIT_FAILURE;
        _exit(rc);
    }
    return rc;
}

static int cli_main(int argc, char **argv);

int main(int argc, char **argv)
{
    return cli_finish(cli_main(argc, argv));
}

static int cli_main(int argc, char **argv)
{
    /* one line at a time into a pipe too, so that progress shows as it happens and a report
     * line never arrives after an error printed below it */
    setvbuf(stdout, NULL, _IOLBF, 0);
    const int trc = cli_take_threads(&argc, argv, usage_main);
    if (trc) return trc;
    if (argc < 2) {
        fputs(usage_main, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage_main, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("sbm %s\n", sbm_version());
        printf("cuda backend: %s (%d device%s)\n", sbm_has_cuda() ? "yes" : "no",
               sbm_cuda_device_count(), sbm_cuda_device_count() == 1 ? "" : "s");
        return 0;
    }
    if (strcmp(cmd, "gemm") == 0) return cmd_gemm(argc - 2, argv + 2);
    if (strcmp(cmd, "spmv") == 0) return sbm_cli_spmv(argc - 2, argv + 2);
    if (strcmp(cmd, "spmm") == 0) return sbm_cli_spmm(argc - 2, argv + 2);
    if (strcmp(cmd, "info") == 0) return cmd_info(argc - 2, argv + 2);
    if (strcmp(cmd, "ba-schur") == 0) return sbm_cli_ba_schur(argc - 2, argv + 2);
    if (strcmp(cmd, "ba-solve") == 0) return sbm_cli_ba_solve(argc - 2, argv + 2);
    if (strcmp(cmd, "slam-info") == 0) return sbm_cli_slam_info(argc - 2, argv + 2);
    if (strcmp(cmd, "slam-solve") == 0) return sbm_cli_slam_solve(argc - 2, argv + 2);
    if (strcmp(cmd, "bal-generate") == 0) return sbm_cli_bal_generate(argc - 2, argv + 2);
    if (cmd[0] == '-') return cli_usage_error(usage_main, "unknown option '%s'", cmd);
    return cli_usage_error(usage_main, "unknown command '%s'", cmd);
}
