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
 * Sparse matrices are Matrix Market coordinate files; dense vectors and matrices are Matrix
 * Market array files (cli_common.h). Every output appears only when the whole command
 * succeeded. Exit status: 0 success, 1 the library (or a file) failed, 2 the command line is
 * wrong. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbm.h"
#include "sbm_ba.h"
#include "sbm_io.h"
#include "sbm_slam.h"
#include "cli_common.h"
#include "sbm_cli_ba.h"

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
    "  --version   show the library version and whether the CUDA backend is available\n";

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

static const char *const usage_spmv =
    "usage: sbm spmv [--backend cpu|cuda|auto] [--format F] [--alpha A] [--beta B]\n"
    "                [--x FILE | --seed S] [--y FILE] [--repeat N] -o Y.mtx A.mtx\n"
    "\n"
    "Computes y = alpha*A*x + beta*y for A (m x n, a Matrix Market coordinate file) and writes y\n"
    "as a dense Matrix Market array file (m x 1).\n"
    "\n"
    "  --backend B         cpu (default), cuda, auto (cuda when a GPU is present)\n"
    "  --format F          A's storage for the multiply: auto (default), csr-scalar, csr-vector,\n"
    "                      csr-merge, coo, ell, hyb, dia. With a format other than auto, or with\n"
    "                      --repeat, a plan converts A once (sbm_csr_spmv_plan) and each multiply\n"
    "                      runs from it (auto: the backend chooses); otherwise one sbm_csr_spmv\n"
    "                      call (format 'default'). The CPU backend computes every format\n"
    "                      from a CSR copy (reported as csr-scalar); ELL and DIA plans are\n"
    "                      refused on every backend when their padding exceeds the limit.\n"
    "  --alpha A           default 1\n"
    "  --beta B            default 0 (y's old values are then ignored)\n"
    "  --x FILE            x, a dense array file (n x 1)\n"
    "  --seed S            x from the seeded generator (default without --x: seed 1), value k\n"
    "                      (k = 0..n-1) = 2*(z_k >> 11)*2^-53 - 1 with z_k the k-th output of\n"
    "                      SplitMix64 from state S (arithmetic mod 2^64):\n"
    "                        state += 0x9E3779B97F4A7C15; z = state;\n"
    "                        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;\n"
    "                        z = (z ^ (z >> 27)) * 0x94D049BB133111EB; z ^= z >> 31\n"
    "  --y FILE            y's initial values, a dense array file (m x 1; default zero)\n"
    "  --repeat N          multiply N times for the timing (default 1); the result is that of\n"
    "                      one multiply, the others run on a scratch y\n"
    "  -o, --output FILE   y; written only when everything succeeded\n"
    "\n"
    "Prints the format used and the time per multiply (the context synchronised).\n"
    "Dense array files: '%%MatrixMarket matrix array real general', the size line 'rows cols',\n"
    "then one value per line, column by column; NaN and infinities are refused, in input files\n"
    "and in results (a file sbm could not read back is not written).\n";

static const char *const usage_spmm =
    "usage: sbm spmm [--backend cpu|cuda|auto] [--alpha A] [--beta B]\n"
    "                (--b FILE | --cols K [--seed S]) [--c FILE] [--col-major] [--repeat N]\n"
    "                -o C.mtx A.mtx\n"
    "\n"
    "Computes C = alpha*A*B + beta*C for A (m x n, a Matrix Market coordinate file) and a dense\n"
    "B (n x K), and writes C as a dense Matrix Market array file (m x K).\n"
    "\n"
    "  --backend B         cpu (default), cuda, auto (cuda when a GPU is present)\n"
    "  --alpha A           default 1\n"
    "  --beta B            default 0 (C's old values are then ignored)\n"
    "  --b FILE            B, a dense array file (n x K)\n"
    "  --cols K            B with K columns from the seeded generator of sbm spmv --help,\n"
    "                      filled column by column: value k is B(k mod n, k / n)\n"
    "  --seed S            the generator's seed (default 1)\n"
    "  --c FILE            C's initial values, a dense array file (m x K; default zero)\n"
    "  --col-major         B and C column-major in memory (default row-major); the files are\n"
    "                      column-major either way\n"
    "  --repeat N          multiply N times for the timing (default 1); the result is that of\n"
    "                      one multiply, the others run on a scratch C\n"
    "  -o, --output FILE   C; written only when everything succeeded\n"
    "\n"
    "Prints the time per multiply (the context synchronised). Dense array files as in\n"
    "sbm spmv --help.\n";

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
    if (g->out_path == NULL || g->out_path[0] == '\0')
        return cli_usage_error(usage_gemm, "gemm: %s", "needs an output file: -o C.mtx");
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
    if (sbm_csr_read_mtx(host, g.a_path, &A) != SBM_SUCCESS ||
        sbm_csr_read_mtx(host, g.b_path, &B) != SBM_SUCCESS) {
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
        printf("C = %s%s * %s%s: %lld x %lld, %lld entries (scalar CSR SpGEMM, backend %s) -> %s\n",
               g.a_path, g.ta ? "^T" : "", g.b_path, g.tb ? "^T" : "", (long long)ci.m,
               (long long)ci.n, (long long)ci.nnz, cli_backend_name(ctx), g.out_path);
    } else {
        if (gemm_block(host, ctx, &g, A, B, &C) != 0) goto done;
        if (sbm_cbc_write_mtx(host, g.out_path, C) != SBM_SUCCESS) {
            cli_lib_error(host, NULL);
            goto done;
        }
        const sbm_cbc_info ci = sbm_cbc_get_info(C);
        printf("C = %s%s * %s%s: %lld x %lld, %lld x %lld blocks of %dx%d, %lld blocks%s (backend "
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

/* A host context and the Matrix Market file at path read into it. @return 0 or EXIT_FAILURE
 * (reported); the caller destroys *A and *host either way. */
static int open_host_matrix(const char *path, sbm_ctx **host, sbm_csr **A)
{
    if (sbm_ctx_create(host, SBM_BACKEND_CPU, 0) != SBM_SUCCESS) return cli_lib_error(NULL, NULL);
    if (sbm_csr_read_mtx(*host, path, A) != SBM_SUCCESS) return cli_lib_error(*host, NULL);
    return 0;
}

/* The compute context for backend (*ctx: host itself on the CPU, else the new *dev) and A in
 * its memory (*dA == A on the CPU, else a copy the caller destroys). @return 0 or EXIT_FAILURE
 * (reported). */
static int compute_operand(cli_backend backend, sbm_ctx *host, sbm_csr *A, sbm_ctx **dev,
                           sbm_ctx **ctx, sbm_csr **dA)
{
    if (cli_make_context(backend, dev) != 0) return EXIT_FAILURE;
    *ctx = sbm_ctx_backend(*dev) == SBM_BACKEND_CPU ? host : *dev;
    if (*ctx == host) {
        *dA = A;
        return 0;
    }
    if (sbm_csr_copy(*ctx, A, dA) != SBM_SUCCESS) return cli_lib_error(*ctx, NULL);
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Dense arrays in the compute context                                                      */
/* ---------------------------------------------------------------------------------------- */

/* A dense array in the memory of the compute context (sbm_array_*). */
typedef struct dense_buf {
    sbm_ctx *ctx;  /* the context whose memory holds it */
    double *data;  /* the array */
    int64_t count; /* elements */
} dense_buf;

/* b = a copy of h_values[0..count) in ctx's memory. @return 0 or EXIT_FAILURE (reported). */
static int dense_create(sbm_ctx *ctx, const double *h_values, int64_t count, dense_buf *b)
{
    memset(b, 0, sizeof(*b));
    if (sbm_array_create(ctx, count, &b->data) != SBM_SUCCESS) return cli_lib_error(ctx, NULL);
    b->ctx = ctx;
    b->count = count;
    if (sbm_array_upload(ctx, b->data, h_values, count) != SBM_SUCCESS)
        return cli_lib_error(ctx, NULL);
    return 0;
}

/* h_values[0..count) = b's array. @return 0 or EXIT_FAILURE (reported). */
static int dense_download(const dense_buf *b, double *h_values)
{
    if (sbm_array_download(b->ctx, h_values, b->data, b->count) != SBM_SUCCESS)
        return cli_lib_error(b->ctx, NULL);
    return 0;
}

static void dense_destroy(dense_buf *b)
{
    sbm_array_destroy(b->ctx, b->data);
    memset(b, 0, sizeof(*b));
}

/* A dense operand on the host: read from a file by the library, or made here. */
typedef struct host_array {
    double *v;      /* column-major values */
    sbm_ctx *owner; /* the context that read them (sbm_dense_free); NULL: malloc'ed here */
} host_array;

static void host_array_free(host_array *a)
{
    if (a->owner)
        sbm_dense_free(a->owner, a->v);
    else
        free(a->v);
    a->v = NULL;
}

/* count values: from the seeded generator (seed not NULL) or zeros. @return 0 or EXIT_FAILURE
 * (reported). */
static int host_array_make(host_array *a, int64_t count, const uint64_t *seed, const char *what)
{
    a->owner = NULL;
    a->v = calloc((size_t)(count > 0 ? count : 1), sizeof(double));
    if (!a->v) {
        fprintf(stderr, "sbm: out of memory for %s (%lld values)\n", what, (long long)count);
        return EXIT_FAILURE;
    }
    if (seed) cli_random_fill(*seed, a->v, count);
    return 0;
}

/* A dense array file read by the library into host. @return 0 or EXIT_FAILURE (reported). */
static int read_dense(sbm_ctx *host, const char *path, int64_t *rows, int64_t *cols,
                      host_array *a)
{
    a->owner = host;
    if (sbm_dense_read_mtx(host, path, rows, cols, &a->v) != SBM_SUCCESS)
        return cli_lib_error(host, NULL);
    return 0;
}

/* Operand what ("x", "y", "C"; A is m x n, from o->a_path), rows x cols: read from path (it must
 * have that shape) when given, else seeded (seeded != 0) or zeros. @return 0 or EXIT_FAILURE
 * (reported). */
static int operand(sbm_ctx *host, const char *path, const char *what, int64_t rows, int64_t cols,
                   const char *a_path, const sbm_csr_info *ai, const uint64_t *seed, host_array *a)
{
    if (!path) return host_array_make(a, rows * cols, seed, what);
    int64_t r = 0, c = 0;
    if (read_dense(host, path, &r, &c, a) != 0) return EXIT_FAILURE;
    if (r != rows || c != cols) {
        fprintf(stderr, "sbm: %s: %s is %lld x %lld; A (%s) is %lld x %lld, so %s must be %lld x "
                        "%lld\n",
                path, what, (long long)r, (long long)c, a_path, (long long)ai->m, (long long)ai->n,
                what, (long long)rows, (long long)cols);
        host_array_free(a);
        return EXIT_FAILURE;
    }
    return 0;
}

/* values (column-major rows x cols) to path through the library's atomic writer.
 * @return 0 or EXIT_FAILURE (reported). */
static int write_dense(sbm_ctx *host, const char *path, int64_t rows, int64_t cols,
                       const double *values)
{
    if (sbm_dense_write_mtx(host, path, rows, cols, values, rows > 1 ? rows : 1) != SBM_SUCCESS)
        return cli_lib_error(host, NULL);
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* sbm spmv / sbm spmm: options                                                             */
/* ---------------------------------------------------------------------------------------- */

static const struct {
    const char *name;
    sbm_spmv_format format;
} spmv_formats[] = {
    {"auto", SBM_SPMV_AUTO},         {"csr-scalar", SBM_SPMV_CSR_SCALAR},
    {"csr-vector", SBM_SPMV_CSR_VECTOR}, {"csr-merge", SBM_SPMV_CSR_MERGE},
    {"coo", SBM_SPMV_COO},           {"ell", SBM_SPMV_ELL},
    {"hyb", SBM_SPMV_HYB},           {"dia", SBM_SPMV_DIA},
};
#define N_SPMV_FORMATS (sizeof(spmv_formats) / sizeof(spmv_formats[0]))

static const char *spmv_format_name(sbm_spmv_format f)
{
    for (size_t k = 0; k < N_SPMV_FORMATS; k++)
        if (spmv_formats[k].format == f) return spmv_formats[k].name;
    return sbm_spmv_format_name(f);
}

/* The options of spmv and spmm (spmm = 1: --b, --cols, --c, --col-major; else --format, --x,
 * --y). */
typedef struct mult_args {
    cli_backend backend;
    sbm_spmv_format format; /* spmv */
    double alpha, beta;
    const char *in_path;    /* --x / --b */
    const char *init_path;  /* --y / --c */
    uint64_t seed;
    int seed_set;
    int64_t cols;           /* spmm: --cols (0: not given) */
    int col_major;          /* spmm */
    int64_t repeat;
    int repeat_set;
    const char *a_path;
    const char *out_path;
} mult_args;

/* Parse spmv's (spmm = 0) or spmm's options; --help prints the usage.
 * @return -1 to run the command, else the exit status. */
static int parse_mult(int argc, char **argv, int spmm, mult_args *o)
{
    const char *const usage = spmm ? usage_spmm : usage_spmv;
    const char *const cmd = spmm ? "spmm" : "spmv";
    const char *const in_opt = spmm ? "--b" : "--x";
    const char *const init_opt = spmm ? "--c" : "--y";
    int only_positional = 0;
    memset(o, 0, sizeof(*o));
    o->backend = CLI_BACKEND_CPU;
    o->format = SBM_SPMV_AUTO;
    o->alpha = 1.0;
    o->beta = 0.0;
    o->seed = 1;
    o->repeat = 1;

#define MULT_USAGE(fmt, arg) return cli_command_error(usage, cmd, fmt, arg)

    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        int m;
        if (only_positional || a[0] != '-' || a[1] == '\0') {
            if (o->a_path != NULL) MULT_USAGE("unexpected argument '%s'", a);
            o->a_path = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_positional = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        } else if (spmm && strcmp(a, "--col-major") == 0) {
            o->col_major = 1;
        } else if ((m = cli_match_option(argc, argv, &i, "--backend", 1, &v)) != 0) {
            if (m < 0) MULT_USAGE("option %s needs a value", a);
            if (!cli_parse_backend(v, &o->backend))
                MULT_USAGE("unknown backend '%s' (cpu, cuda or auto)", v);
        } else if (!spmm && (m = cli_match_option(argc, argv, &i, "--format", 1, &v)) != 0) {
            if (m < 0) MULT_USAGE("option %s needs a value", a);
            size_t k = 0;
            while (k < N_SPMV_FORMATS && strcmp(v, spmv_formats[k].name) != 0) k++;
            if (k == N_SPMV_FORMATS)
                MULT_USAGE("unknown format '%s' (auto, csr-scalar, csr-vector, csr-merge, coo, "
                           "ell, hyb or dia)", v);
            o->format = spmv_formats[k].format;
        } else if ((m = cli_match_option(argc, argv, &i, "--alpha", 1, &v)) != 0 ||
                   (m = cli_match_option(argc, argv, &i, "--beta", 1, &v)) != 0) {
            if (m < 0) MULT_USAGE("option %s needs a value", a);
            if (!cli_parse_double(v, strncmp(a, "--alpha", 7) == 0 ? &o->alpha : &o->beta))
                MULT_USAGE("invalid number '%s' (a finite real)", v);
        } else if ((m = cli_match_option(argc, argv, &i, in_opt, 1, &v)) != 0) {
            if (m < 0) MULT_USAGE("option %s needs a value", a);
            o->in_path = v;
        } else if ((m = cli_match_option(argc, argv, &i, init_opt, 1, &v)) != 0) {
            if (m < 0) MULT_USAGE("option %s needs a value", a);
            o->init_path = v;
        } else if ((m = cli_match_option(argc, argv, &i, "--seed", 1, &v)) != 0) {
            if (m < 0) MULT_USAGE("option %s needs a value", a);
            if (!cli_parse_u64(v, &o->seed))
                MULT_USAGE("invalid seed '%s' (an integer from 0 to 2^64-1)", v);
            o->seed_set = 1;
        } else if (spmm && (m = cli_match_option(argc, argv, &i, "--cols", 1, &v)) != 0) {
            if (m < 0) MULT_USAGE("option %s needs a value", a);
            if (!cli_parse_int64(v, 1, INT32_MAX, &o->cols))
                MULT_USAGE("invalid column count '%s' (1 to 2^31-1)", v);
        } else if ((m = cli_match_option(argc, argv, &i, "--repeat", 1, &v)) != 0) {
            if (m < 0) MULT_USAGE("option %s needs a value", a);
            if (!cli_parse_int64(v, 1, 1000000000, &o->repeat))
                MULT_USAGE("invalid repeat count '%s' (1 to 10^9)", v);
            o->repeat_set = 1;
        } else if ((m = cli_match_option(argc, argv, &i, "--output", 1, &v)) != 0 ||
                   (m = cli_match_option(argc, argv, &i, "-o", 1, &v)) != 0) {
            if (m < 0) MULT_USAGE("option %s needs a value", a);
            o->out_path = v;
        } else {
            MULT_USAGE("unknown option '%s'", a);
        }
    }
    if (o->in_path && o->seed_set) MULT_USAGE("%s and --seed exclude each other", in_opt);
    if (spmm && o->in_path && o->cols) MULT_USAGE("%s and --cols exclude each other", in_opt);
    if (spmm && !o->in_path && !o->cols)
        MULT_USAGE("%s", "needs B: --b FILE or --cols K [--seed S]");
    if (o->a_path == NULL) MULT_USAGE("%s", "needs an input file A.mtx");
    if (o->out_path == NULL || o->out_path[0] == '\0')
        MULT_USAGE("needs an output file: -o %s", spmm ? "C.mtx" : "Y.mtx");
#undef MULT_USAGE
    return -1;
}

/* ---------------------------------------------------------------------------------------- */
/* sbm spmv                                                                                 */
/* ---------------------------------------------------------------------------------------- */

static int cmd_spmv(int argc, char **argv)
{
    mult_args o;
    int rc = parse_mult(argc, argv, 0, &o);
    if (rc >= 0) return rc;

    sbm_ctx *host = NULL, *dev = NULL;
    sbm_csr *A = NULL, *dA = NULL;
    sbm_spmv_plan *plan = NULL;
    host_array hx = {0}, hy = {0};
    dense_buf dx = {0}, dy = {0}, dyw = {0};
    rc = EXIT_FAILURE;

    if (open_host_matrix(o.a_path, &host, &A) != 0) goto done;
    const sbm_csr_info ai = sbm_csr_get_info(A);
    if (operand(host, o.in_path, "x", ai.n, 1, o.a_path, &ai, &o.seed, &hx) != 0 ||
        operand(host, o.init_path, "y", ai.m, 1, o.a_path, &ai, NULL, &hy) != 0)
        goto done;
    double *const x = hx.v, *const y = hy.v;

    sbm_ctx *ctx = NULL;
    if (compute_operand(o.backend, host, A, &dev, &ctx, &dA) != 0) goto done;
    if (dense_create(ctx, x, ai.n, &dx) != 0 || dense_create(ctx, y, ai.m, &dy) != 0) goto done;
    if (o.repeat > 1 && dense_create(ctx, y, ai.m, &dyw) != 0) goto done;

    const int use_plan = o.format != SBM_SPMV_AUTO || o.repeat_set;
    double plan_s = 0.0;
    if (use_plan) {
        const double t0 = cli_seconds();
        if (sbm_csr_spmv_plan(ctx, dA, o.format, &plan) != SBM_SUCCESS ||
            sbm_ctx_synchronize(ctx) != SBM_SUCCESS) {
            cli_lib_error(ctx, o.a_path);
            goto done;
        }
        plan_s = cli_seconds() - t0;
    }
    /* the first multiply gives the result; the others (--repeat) run on a scratch y that
     * starts from the same values, so every multiply does the same work */
    const double t0 = cli_seconds();
    for (int64_t r = 0; r < o.repeat; r++) {
        double *yr = r == 0 ? dy.data : dyw.data;
        const sbm_status st = use_plan
                                  ? sbm_spmv_plan_execute(ctx, plan, o.alpha, dx.data, o.beta, yr)
                                  : sbm_csr_spmv(ctx, o.alpha, dA, dx.data, o.beta, yr);
        if (st != SBM_SUCCESS) {
            cli_lib_error(ctx, o.a_path);
            goto done;
        }
    }
    if (sbm_ctx_synchronize(ctx) != SBM_SUCCESS) {
        cli_lib_error(ctx, NULL);
        goto done;
    }
    const double per = (cli_seconds() - t0) / (double)o.repeat;

    if (dense_download(&dy, y) != 0) goto done;
    if (write_dense(host, o.out_path, ai.m, 1, y) != 0) goto done;

    char source[64];
    snprintf(source, sizeof(source), "seed %llu", (unsigned long long)o.seed);
    printf("y = %g*A*x + %g*y: %s is %lld x %lld with %lld entries, x from %s; backend %s, "
           "format %s",
           o.alpha, o.beta, o.a_path, (long long)ai.m, (long long)ai.n, (long long)ai.nnz,
           o.in_path ? o.in_path : source, cli_backend_name(ctx),
           use_plan ? spmv_format_name(sbm_spmv_plan_format(plan)) : "default (sbm_csr_spmv)");
    if (use_plan) printf(" (plan %.3f ms)", 1e3 * plan_s);
    printf("; %lld multipl%s, %.4f ms each (%.2f GFLOP/s) -> %s\n", (long long)o.repeat,
           o.repeat == 1 ? "y" : "ies", 1e3 * per, per > 0 ? 2e-9 * (double)ai.nnz / per : 0.0,
           o.out_path);
    rc = 0;

done:
    dense_destroy(&dyw);
    dense_destroy(&dy);
    dense_destroy(&dx);
    sbm_spmv_plan_destroy(plan);
    if (dA != A) sbm_csr_destroy(dA);
    sbm_csr_destroy(A);
    host_array_free(&hy);
    host_array_free(&hx);
    sbm_ctx_destroy(dev);
    sbm_ctx_destroy(host);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* sbm spmm                                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* dst (rows x cols, row-major) = src (column-major), or the reverse with to_row = 0. */
static void relayout(const double *src, double *dst, int64_t rows, int64_t cols, int to_row)
{
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++) {
            if (to_row)
                dst[i * cols + j] = src[i + j * rows];
            else
                dst[i + j * rows] = src[i * cols + j];
        }
}

static int cmd_spmm(int argc, char **argv)
{
    mult_args o;
    int rc = parse_mult(argc, argv, 1, &o);
    if (rc >= 0) return rc;

    sbm_ctx *host = NULL, *dev = NULL;
    sbm_csr *A = NULL, *dA = NULL;
    host_array hB = {0}, hC = {0};
    double *tmp = NULL;
    dense_buf dB = {0}, dC = {0}, dCw = {0};
    rc = EXIT_FAILURE;

    if (open_host_matrix(o.a_path, &host, &A) != 0) goto done;
    const sbm_csr_info ai = sbm_csr_get_info(A);
    int64_t k = o.cols;
    if (o.in_path) {
        int64_t r = 0;
        if (read_dense(host, o.in_path, &r, &k, &hB) != 0) goto done;
        if (r != ai.n) {
            fprintf(stderr, "sbm: %s: B is %lld x %lld; A (%s) is %lld x %lld, so B must have %lld "
                            "rows\n",
                    o.in_path, (long long)r, (long long)k, o.a_path, (long long)ai.m,
                    (long long)ai.n, (long long)ai.n);
            goto done;
        }
        if (k > INT32_MAX) {
            fprintf(stderr, "sbm: %s: B has %lld columns, at most 2^31-1 are accepted\n", o.in_path,
                    (long long)k);
            goto done;
        }
    }
    /* element counts of B and C (k <= 2^31-1, so only a huge n or m overflows) */
    const int64_t limit = INT64_MAX / (int64_t)sizeof(double);
    if (k > 0 && (ai.n > limit / k || ai.m > limit / k)) {
        fprintf(stderr, "sbm: B or C with %lld columns does not fit in memory (A is %lld x %lld)\n",
                (long long)k, (long long)ai.m, (long long)ai.n);
        goto done;
    }
    const int64_t nb = ai.n * k, nc = ai.m * k;
    if ((!o.in_path && host_array_make(&hB, nb, &o.seed, "B") != 0) ||
        operand(host, o.init_path, "C", ai.m, k, o.a_path, &ai, NULL, &hC) != 0)
        goto done;
    double *const B = hB.v, *const C = hC.v;
    /* the files are column-major; the multiply reads B and C in the chosen layout */
    const sbm_layout layout = o.col_major ? SBM_LAYOUT_COL_MAJOR : SBM_LAYOUT_ROW_MAJOR;
    const int64_t ldb = o.col_major ? ai.n : k, ldc = o.col_major ? ai.m : k;
    if (!o.col_major) {
        tmp = malloc((size_t)((nb > nc ? nb : nc) > 0 ? (nb > nc ? nb : nc) : 1) * sizeof(double));
        if (!tmp) {
            fprintf(stderr, "sbm: out of memory for a copy of B or C\n");
            goto done;
        }
        relayout(B, tmp, ai.n, k, 1);
        memcpy(B, tmp, (size_t)nb * sizeof(double));
        relayout(C, tmp, ai.m, k, 1);
        memcpy(C, tmp, (size_t)nc * sizeof(double));
    }

    sbm_ctx *ctx = NULL;
    if (compute_operand(o.backend, host, A, &dev, &ctx, &dA) != 0) goto done;
    if (dense_create(ctx, B, nb, &dB) != 0 || dense_create(ctx, C, nc, &dC) != 0) goto done;
    if (o.repeat > 1 && dense_create(ctx, C, nc, &dCw) != 0) goto done;

    /* the first multiply gives the result; the others (--repeat) run on a scratch C */
    const double t0 = cli_seconds();
    for (int64_t r = 0; r < o.repeat; r++) {
        if (sbm_csr_spmm(ctx, o.alpha, dA, k, layout, dB.data, ldb, o.beta,
                         r == 0 ? dC.data : dCw.data, ldc) != SBM_SUCCESS) {
            cli_lib_error(ctx, o.a_path);
            goto done;
        }
    }
    if (sbm_ctx_synchronize(ctx) != SBM_SUCCESS) {
        cli_lib_error(ctx, NULL);
        goto done;
    }
    const double per = (cli_seconds() - t0) / (double)o.repeat;

    if (dense_download(&dC, C) != 0) goto done;
    if (!o.col_major) {
        relayout(C, tmp, ai.m, k, 0);
        memcpy(C, tmp, (size_t)nc * sizeof(double));
    }
    if (write_dense(host, o.out_path, ai.m, k, C) != 0) goto done;

    char source[64];
    snprintf(source, sizeof(source), "seed %llu", (unsigned long long)o.seed);
    printf("C = %g*A*B + %g*C: %s is %lld x %lld with %lld entries, B %lld x %lld from %s "
           "(%s); backend %s; %lld multipl%s, %.4f ms each (%.2f GFLOP/s) -> %s\n",
           o.alpha, o.beta, o.a_path, (long long)ai.m, (long long)ai.n, (long long)ai.nnz,
           (long long)ai.n, (long long)k, o.in_path ? o.in_path : source,
           o.col_major ? "column-major" : "row-major", cli_backend_name(ctx), (long long)o.repeat,
           o.repeat == 1 ? "y" : "ies", 1e3 * per,
           per > 0 ? 2e-9 * (double)ai.nnz * (double)k / per : 0.0, o.out_path);
    rc = 0;

done:
    dense_destroy(&dCw);
    dense_destroy(&dC);
    dense_destroy(&dB);
    if (dA != A) sbm_csr_destroy(dA);
    sbm_csr_destroy(A);
    free(tmp);
    host_array_free(&hC);
    host_array_free(&hB);
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
    if (open_host_matrix(path, &host, &A) != 0) goto done;
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

    printf("file: %s\n", path);
    printf("rows: %lld\n", (long long)ai.m);
    printf("columns: %lld\n", (long long)ai.n);
    printf("nnz: %lld\n", (long long)ai.nnz);
    printf("block: %dx%d\n", bi.r, bi.c);
    printf("block rows: %lld\n", (long long)bi.nbr);
    printf("block columns: %lld\n", (long long)bi.nbc);
    printf("nnzb: %lld\n", (long long)bi.nnzb);
    if (ai.nnz > 0)
        printf("fill ratio: %.4f\n", (double)bi.nnzb * bi.r * bi.c / (double)ai.nnz);
    else
        printf("fill ratio: -\n");
    printf("blocks per column: min %lld, mean %.2f, max %lld\n", (long long)cmin, cmean,
           (long long)cmax);
    printf("symmetric: %s\n", symmetric ? "yes" : "no");
    printf("pattern symmetric: %s\n", pattern_symmetric ? "yes" : "no");
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

int main(int argc, char **argv)
{
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
        printf("sbm %d.%d.%d\n", SBM_VERSION_MAJOR, SBM_VERSION_MINOR, SBM_VERSION_PATCH);
        printf("cuda backend: %s (%d device%s)\n", sbm_has_cuda() ? "yes" : "no",
               sbm_cuda_device_count(), sbm_cuda_device_count() == 1 ? "" : "s");
        return 0;
    }
    if (strcmp(cmd, "gemm") == 0) return cmd_gemm(argc - 2, argv + 2);
    if (strcmp(cmd, "spmv") == 0) return cmd_spmv(argc - 2, argv + 2);
    if (strcmp(cmd, "spmm") == 0) return cmd_spmm(argc - 2, argv + 2);
    if (strcmp(cmd, "info") == 0) return cmd_info(argc - 2, argv + 2);
    if (strcmp(cmd, "ba-schur") == 0) return sbm_cli_ba_schur(argc - 2, argv + 2);
    if (strcmp(cmd, "ba-solve") == 0) return sbm_cli_ba_solve(argc - 2, argv + 2);
    if (strcmp(cmd, "slam-info") == 0) return sbm_cli_slam_info(argc - 2, argv + 2);
    if (strcmp(cmd, "slam-solve") == 0) return sbm_cli_slam_solve(argc - 2, argv + 2);
    if (strcmp(cmd, "bal-generate") == 0) return sbm_cli_bal_generate(argc - 2, argv + 2);
    if (cmd[0] == '-') return cli_usage_error(usage_main, "unknown option '%s'", cmd);
    return cli_usage_error(usage_main, "unknown command '%s'", cmd);
}
