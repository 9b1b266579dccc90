/* SPDX-License-Identifier: BSD-3-Clause */
/* The multiply commands of the sbm command-line tool: spmv and spmm on a Matrix Market
 * coordinate matrix and dense Matrix Market array operands. Public API only.
 *
 *   sbm spmv [--backend cpu|cuda|auto] [--format F] [--alpha A] [--beta B]
 *            [--x FILE | --seed S] [--y FILE] [--repeat N] -o Y.mtx A.mtx
 *   sbm spmm [--backend cpu|cuda|auto] [--alpha A] [--beta B] (--b FILE | --cols K [--seed S])
 *            [--c FILE] [--col-major] [--repeat N] -o C.mtx A.mtx
 *
 * Dense operands are read and written by the library (sbm_dense_read_mtx, sbm_dense_write_mtx:
 * the result appears only when the whole command succeeded); seeded ones come from
 * cli_random_fill (SplitMix64). */
#include "sbm_cli_mult.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"

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

/* ---------------------------------------------------------------------------------------- */
/* The compute context                                                                      */
/* ---------------------------------------------------------------------------------------- */

/* A and the contexts of a multiply command. */
typedef struct mult_matrix {
    sbm_ctx *host; /* CPU context: files and host operands */
    sbm_ctx *dev;  /* the context of --backend */
    sbm_ctx *ctx;  /* where the multiply runs: host on the CPU, else dev */
    sbm_csr *A;    /* A in host */
    sbm_csr *dA;   /* A in ctx (A itself on the CPU) */
} mult_matrix;

/* The compute context of backend and A in its memory. @return 0 or EXIT_FAILURE (reported). */
static int mult_matrix_compute(mult_matrix *m, cli_backend backend)
{
    if (cli_make_context(backend, &m->dev) != 0) return EXIT_FAILURE;
    m->ctx = sbm_ctx_backend(m->dev) == SBM_BACKEND_CPU ? m->host : m->dev;
    if (m->ctx == m->host) {
        m->dA = m->A;
        return 0;
    }
    if (sbm_csr_copy(m->ctx, m->A, &m->dA) != SBM_SUCCESS) return cli_lib_error(m->ctx, NULL);
    return 0;
}

static void mult_matrix_close(mult_matrix *m)
{
    if (m->dA != m->A) sbm_csr_destroy(m->dA);
    sbm_csr_destroy(m->A);
    sbm_ctx_destroy(m->dev);
    sbm_ctx_destroy(m->host);
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
    cli_outputs(o->out_path, NULL);
    if (cli_output_folder_error(o->out_path)) return EXIT_FAILURE;
#undef MULT_USAGE
    return -1;
}

/* ---------------------------------------------------------------------------------------- */
/* Timed multiplies                                                                         */
/* ---------------------------------------------------------------------------------------- */

/* out = alpha*A*in + beta*out: spmv (through plan when not NULL) or spmm. */
typedef struct multiply {
    sbm_ctx *ctx;         /* the compute context */
    const mult_args *o;   /* alpha, beta, repeat, the file of A for messages */
    const sbm_csr *A;     /* in ctx's memory */
    int spmm;             /* 1: spmm, 0: spmv */
    sbm_spmv_plan *plan;  /* spmv from a plan, or NULL */
    int64_t k;            /* spmm: columns of B and C */
    sbm_layout layout;    /* spmm: layout of B and C */
    int64_t ldb, ldc;     /* spmm: their leading dimensions */
    const double *in;     /* x or B, in ctx's memory */
} multiply;

static sbm_status multiply_once(const multiply *m, double *out)
{
    const double alpha = m->o->alpha, beta = m->o->beta;
    if (m->spmm)
        return sbm_csr_spmm(m->ctx, alpha, m->A, m->k, m->layout, m->in, m->ldb, beta, out, m->ldc);
    if (m->plan) return sbm_spmv_plan_execute(m->ctx, m->plan, alpha, m->in, beta, out);
    return sbm_csr_spmv(m->ctx, alpha, m->A, m->in, beta, out);
}

/* --repeat multiplies: the first gives the result (out), the others run on scratch, which starts
 * from the same values, so every multiply does the same work. *per: seconds per multiply, the
 * context synchronised. @return 0 or EXIT_FAILURE (reported). */
static int multiply_timed(const multiply *m, double *out, double *scratch, double *per)
{
    const double t0 = cli_seconds();
    for (int64_t r = 0; r < m->o->repeat; r++)
        if (multiply_once(m, r == 0 ? out : scratch) != SBM_SUCCESS)
            return cli_lib_error(m->ctx, m->o->a_path);
    if (sbm_ctx_synchronize(m->ctx) != SBM_SUCCESS) return cli_lib_error(m->ctx, NULL);
    *per = (cli_seconds() - t0) / (double)m->o->repeat;
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* sbm spmv                                                                                 */
/* ---------------------------------------------------------------------------------------- */

int sbm_cli_spmv(int argc, char **argv)
{
    mult_args o;
    int rc = parse_mult(argc, argv, 0, &o);
    if (rc >= 0) return rc;

    mult_matrix mm = {0};
    sbm_spmv_plan *plan = NULL;
    host_array hx = {0}, hy = {0};
    dense_buf dx = {0}, dy = {0}, dyw = {0};
    rc = EXIT_FAILURE;

    if (cli_open_matrix(o.a_path, &mm.host, &mm.A) != 0) goto done;
    const sbm_csr_info ai = sbm_csr_get_info(mm.A);
    if (operand(mm.host, o.in_path, "x", ai.n, 1, o.a_path, &ai, &o.seed, &hx) != 0 ||
        operand(mm.host, o.init_path, "y", ai.m, 1, o.a_path, &ai, NULL, &hy) != 0)
        goto done;
    double *const x = hx.v, *const y = hy.v;

    if (mult_matrix_compute(&mm, o.backend) != 0) goto done;
    sbm_ctx *const ctx = mm.ctx;
    if (dense_create(ctx, x, ai.n, &dx) != 0 || dense_create(ctx, y, ai.m, &dy) != 0) goto done;
    if (o.repeat > 1 && dense_create(ctx, y, ai.m, &dyw) != 0) goto done;

    const int use_plan = o.format != SBM_SPMV_AUTO || o.repeat_set;
    double plan_s = 0.0;
    if (use_plan) {
        const double t0 = cli_seconds();
        if (sbm_csr_spmv_plan(ctx, mm.dA, o.format, &plan) != SBM_SUCCESS ||
            sbm_ctx_synchronize(ctx) != SBM_SUCCESS) {
            cli_lib_error(ctx, o.a_path);
            goto done;
        }
        plan_s = cli_seconds() - t0;
    }
    const multiply mul = {ctx, &o, mm.dA, 0, plan, 0, SBM_LAYOUT_COL_MAJOR, 0, 0, dx.data};
    double per = 0.0;
    if (multiply_timed(&mul, dy.data, dyw.data, &per) != 0) goto done;

    if (dense_download(&dy, y) != 0) goto done;
    if (write_dense(mm.host, o.out_path, ai.m, 1, y) != 0) goto done;

    char source[64];
    snprintf(source, sizeof(source), "seed %llu", (unsigned long long)o.seed);
    cli_printf("y = %g*A*x + %g*y: %s is %lld x %lld with %lld entries, x from %s; backend %s, "
               "format %s",
               o.alpha, o.beta, o.a_path, (long long)ai.m, (long long)ai.n, (long long)ai.nnz,
               o.in_path ? o.in_path : source, cli_backend_name(ctx),
               use_plan ? spmv_format_name(sbm_spmv_plan_format(plan)) : "default (sbm_csr_spmv)");
    if (use_plan) cli_printf(" (plan %.3f ms)", 1e3 * plan_s);
    cli_printf("; %lld multipl%s, %.4f ms each (%.2f GFLOP/s) -> %s\n", (long long)o.repeat,
               o.repeat == 1 ? "y" : "ies", 1e3 * per, per > 0 ? 2e-9 * (double)ai.nnz / per : 0.0,
               o.out_path);
    rc = 0;

done:
    dense_destroy(&dyw);
    dense_destroy(&dy);
    dense_destroy(&dx);
    sbm_spmv_plan_destroy(plan);
    host_array_free(&hy);
    host_array_free(&hx);
    mult_matrix_close(&mm);
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

int sbm_cli_spmm(int argc, char **argv)
{
    mult_args o;
    int rc = parse_mult(argc, argv, 1, &o);
    if (rc >= 0) return rc;

    mult_matrix mm = {0};
    host_array hB = {0}, hC = {0};
    double *tmp = NULL;
    dense_buf dB = {0}, dC = {0}, dCw = {0};
    rc = EXIT_FAILURE;

    if (cli_open_matrix(o.a_path, &mm.host, &mm.A) != 0) goto done;
    const sbm_csr_info ai = sbm_csr_get_info(mm.A);
    int64_t k = o.cols;
    if (o.in_path) {
        int64_t r = 0;
        if (read_dense(mm.host, o.in_path, &r, &k, &hB) != 0) goto done;
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
        operand(mm.host, o.init_path, "C", ai.m, k, o.a_path, &ai, NULL, &hC) != 0)
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

    if (mult_matrix_compute(&mm, o.backend) != 0) goto done;
    sbm_ctx *const ctx = mm.ctx;
    if (dense_create(ctx, B, nb, &dB) != 0 || dense_create(ctx, C, nc, &dC) != 0) goto done;
    if (o.repeat > 1 && dense_create(ctx, C, nc, &dCw) != 0) goto done;

    const multiply mul = {ctx, &o, mm.dA, 1, NULL, k, layout, ldb, ldc, dB.data};
    double per = 0.0;
    if (multiply_timed(&mul, dC.data, dCw.data, &per) != 0) goto done;

    if (dense_download(&dC, C) != 0) goto done;
    if (!o.col_major) {
        relayout(C, tmp, ai.m, k, 0);
        memcpy(C, tmp, (size_t)nc * sizeof(double));
    }
    if (write_dense(mm.host, o.out_path, ai.m, k, C) != 0) goto done;

    char source[64];
    snprintf(source, sizeof(source), "seed %llu", (unsigned long long)o.seed);
    cli_printf("C = %g*A*B + %g*C: %s is %lld x %lld with %lld entries, B %lld x %lld from %s "
               "(%s); backend %s; %lld multipl%s, %.4f ms each (%.2f GFLOP/s) -> %s\n",
               o.alpha, o.beta, o.a_path, (long long)ai.m, (long long)ai.n, (long long)ai.nnz,
               (long long)ai.n, (long long)k, o.in_path ? o.in_path : source,
               o.col_major ? "column-major" : "row-major", cli_backend_name(ctx),
               (long long)o.repeat, o.repeat == 1 ? "y" : "ies", 1e3 * per,
               per > 0 ? 2e-9 * (double)ai.nnz * (double)k / per : 0.0, o.out_path);
    rc = 0;

done:
    dense_destroy(&dCw);
    dense_destroy(&dC);
    dense_destroy(&dB);
    free(tmp);
    host_array_free(&hC);
    host_array_free(&hB);
    mult_matrix_close(&mm);
    return rc;
}

