/* SPDX-License-Identifier: BSD-3-Clause */
/* Concurrency: contexts used at the same time give the results of a single-threaded run, bit
 * for bit.
 *   - two host threads, each with its own context (created in the thread), run the same
 *     operations on their own copies of the inputs, several times (both backends; on CUDA the
 *     two contexts share the legacy default stream);
 *   - CUDA: two contexts bound to two non-blocking streams in one thread, their calls
 *     interleaved (every operation queued on both streams before either is collected);
 *   - CUDA: two threads, each with its own context bound to its own non-blocking stream.
 * The operations: block SpGEMM plan + execute (twice, plan reused) and one-shot upper product
 * with U, transpose, add, CBC -> CSR, block-diagonal inverse and scaling, CBC SpMV (op N and T),
 * CSR SpGEMM plan + execute, CSR SpMV and SpMM. A backend other than the CPU that answers
 * SBM_ERR_NOT_SUPPORTED for one of them skips that operation visibly; the others still run.
 *
 * cmocka's assertions longjmp to the test, so worker threads never assert: they record the first
 * failure or mismatch, and the test asserts after joining them. With SBM_TEST_NO_THREADS set the
 * threaded tests skip (for compute-sanitizer racecheck, see .ci/device-run.sh). */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"
#include "sbm_internal.h" /* white-box: vectors in a context's memory without cmocka asserts */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SBM_TEST_HAVE_CUDA
#include <cuda_runtime.h>
#endif

/* ---------------------------------------------------------------------------------------- */
/* Operations                                                                               */
/* ---------------------------------------------------------------------------------------- */

enum {
    OP_GEMM,        /* plan A*B, execute twice (new alpha), plan reused */
    OP_GEMM_UPPER,  /* one-shot U - W W^T, upper triangle */
    OP_TRANSPOSE,   /* A^T */
    OP_ADD,         /* 2 A - 0.5 A2 */
    OP_TO_CSR,      /* scalar CSR of A */
    OP_BDIAG_INV,   /* D^-1 */
    OP_BDIAG_SCALE, /* A D */
    OP_SPMV_N,      /* 1.5 A x + 0.5 y */
    OP_SPMV_T,      /* -1 A^T xt + 0.25 yt */
    OP_CSR_GEMM,    /* plan P*Q, execute */
    OP_CSR_SPMV,    /* 0.5 P xp - 0.25 yp */
    OP_CSR_SPMM,    /* P Bd + 0.5 Cd, 4 columns, column-major */
    NOPS
};

static const char *const op_names[NOPS] = {
    "block SpGEMM plan+execute", "block SpGEMM U - W W^T (upper)", "CBC transpose", "CBC add",
    "CBC -> CSR", "bdiag inverse", "bdiag scale", "CBC SpMV op N", "CBC SpMV op T",
    "CSR SpGEMM plan+execute", "CSR SpMV", "CSR SpMM"};

#define NCOLS 4 /* columns of the SpMM operands */

/* Inputs, in host memory, made once by the test and only read by the workers. */
typedef struct inputs {
    sbm_cbc *A, *A2, *B, *W, *U, *D; /* A, A2: nbr x nbc of 3x3; B: nbc x nbc2; W: 9x3; D: bdiag */
    sbm_csr *P, *Q;                  /* P: pm x pn, Q: pn x qn */
    double *x, *y, *xt, *yt;         /* CBC SpMV operands (op N: x, y; op T: xt, yt) */
    double *xp, *yp, *Bd, *Cd;       /* CSR SpMV and SpMM operands */
    int64_t m, n, pm, pn;            /* scalar sizes of A and P */
} inputs;

static void inputs_make(inputs *in, sbm_ctx *host)
{
    const int64_t nbr = 160, nbc = 120;
    in->A = sbm_test_random_cbc(host, 1, nbr, nbc, 3, 3, 0.06);
    in->A2 = sbm_test_random_cbc(host, 2, nbr, nbc, 3, 3, 0.06);
    in->B = sbm_test_random_cbc(host, 3, nbc, 140, 3, 3, 0.06);
    in->W = sbm_test_random_cbc(host, 4, 30, 600, 9, 3, 0.12);
    in->U = sbm_test_random_cbc_upper(host, 5, 30, 30, 9, 9, 0.3, 1);
    in->D = sbm_test_random_bdiag_spd(host, 6, nbc, 3);
    in->m = nbr * 3;
    in->n = nbc * 3;
    in->pm = 700;
    in->pn = 500;
    in->P = sbm_test_random_csr(host, 7, in->pm, in->pn, 0.02);
    in->Q = sbm_test_random_csr(host, 8, in->pn, 600, 0.02);
    in->x = sbm_test_random_vector(11, in->n);
    in->y = sbm_test_random_vector(12, in->m);
    in->xt = sbm_test_random_vector(13, in->m);
    in->yt = sbm_test_random_vector(14, in->n);
    in->xp = sbm_test_random_vector(15, in->pn);
    in->yp = sbm_test_random_vector(16, in->pm);
    in->Bd = sbm_test_random_vector(17, in->pn * NCOLS);
    in->Cd = sbm_test_random_vector(18, in->pm * NCOLS);
}

static void inputs_free(inputs *in)
{
    sbm_cbc *cbcs[] = {in->A, in->A2, in->B, in->W, in->U, in->D};
    for (size_t t = 0; t < sizeof cbcs / sizeof cbcs[0]; t++) sbm_cbc_destroy(cbcs[t]);
    sbm_csr_destroy(in->P);
    sbm_csr_destroy(in->Q);
    double *v[] = {in->x, in->y, in->xt, in->yt, in->xp, in->yp, in->Bd, in->Cd};
    for (size_t t = 0; t < sizeof v / sizeof v[0]; t++) free(v[t]);
}

/* ---------------------------------------------------------------------------------------- */
/* A worker: one context, its copies of the inputs, its results                             */
/* ---------------------------------------------------------------------------------------- */

typedef struct worker {
    sbm_backend backend;    /* backend of ctx */
    sbm_ctx *ctx;           /* the context under test */
    sbm_ctx *host;          /* CPU context for downloads */
    struct CUstream_st *stream; /* stream ctx is bound to (NULL: default) */
    int want_stream;        /* threads: 1 = make a non-blocking stream and bind ctx to it */
    const inputs *in;
    unsigned enabled;       /* bit per operation */
    int iterations;         /* repetitions of all operations (threads) */
    const struct worker *ref; /* reference results to compare against (threads), or NULL */
    /* inputs in ctx's memory */
    sbm_cbc *A, *A2, *B, *W, *U, *D;
    sbm_csr *P, *Q;
    double *x, *xt, *xp, *Bd;
    /* outputs in ctx's memory */
    sbm_gemm_plan *plan;
    sbm_csr_plan *cplan;
    sbm_cbc *cbc_out[NOPS];
    sbm_csr *csr_out[NOPS];
    double *vec_out[NOPS];
    int64_t vec_len[NOPS];
    /* results in host memory (collected) */
    sbm_cbc *cbc_res[NOPS];
    sbm_csr *csr_res[NOPS];
    double *vec_res[NOPS];
    /* first failure */
    int failed;
    char msg[SBM__MSG_SIZE + 256];
    long compared; /* results compared bitwise against the reference */
} worker;

static int fail_w(worker *w, const char *what, sbm_status st)
{
    if (!w->failed) {
        w->failed = 1;
        snprintf(w->msg, sizeof w->msg, "%s: %s \"%s\"", what, sbm_status_name(st),
                 w->ctx ? sbm_ctx_last_error(w->ctx) : sbm_ctx_last_error(NULL));
    }
    return 0;
}

/* n doubles of host memory h copied into a new array in ctx's memory. */
static sbm_status vec_upload(sbm_ctx *ctx, const double *h, int64_t n, double **d)
{
    *d = sbm__alloc(ctx, (size_t)n * sizeof(double), "a test vector");
    if (!*d) return SBM_ERR_OUT_OF_MEMORY;
    return n > 0 ? ctx->ops->copy(ctx, *d, h, (size_t)n * sizeof(double), 0) : SBM_SUCCESS;
}

#define W_TRY(what, call)                                                                    \
    do {                                                                                     \
        sbm_status st_ = (call);                                                             \
        if (st_ != SBM_SUCCESS) return fail_w(w, (what), st_), st_;                          \
    } while (0)

static sbm_status worker_setup(worker *w)
{
    const inputs *in = w->in;
    sbm_ctx *ctx = w->ctx;
    W_TRY("copy A", sbm_cbc_copy(ctx, in->A, &w->A));
    W_TRY("copy A2", sbm_cbc_copy(ctx, in->A2, &w->A2));
    W_TRY("copy B", sbm_cbc_copy(ctx, in->B, &w->B));
    W_TRY("copy W", sbm_cbc_copy(ctx, in->W, &w->W));
    W_TRY("copy U", sbm_cbc_copy(ctx, in->U, &w->U));
    W_TRY("copy D", sbm_cbc_copy(ctx, in->D, &w->D));
    W_TRY("copy P", sbm_csr_copy(ctx, in->P, &w->P));
    W_TRY("copy Q", sbm_csr_copy(ctx, in->Q, &w->Q));
    W_TRY("upload x", vec_upload(ctx, in->x, in->n, &w->x));
    W_TRY("upload xt", vec_upload(ctx, in->xt, in->m, &w->xt));
    W_TRY("upload xp", vec_upload(ctx, in->xp, in->pn, &w->xp));
    W_TRY("upload Bd", vec_upload(ctx, in->Bd, in->pn * NCOLS, &w->Bd));
    const struct {
        int op;
        const double *h;
        int64_t n;
    } outs[] = {{OP_SPMV_N, in->y, in->m},
                {OP_SPMV_T, in->yt, in->n},
                {OP_CSR_SPMV, in->yp, in->pm},
                {OP_CSR_SPMM, in->Cd, in->pm * NCOLS}};
    for (size_t t = 0; t < sizeof outs / sizeof outs[0]; t++) {
        w->vec_len[outs[t].op] = outs[t].n;
        W_TRY("allocate an output vector", vec_upload(ctx, outs[t].h, outs[t].n, &w->vec_out[outs[t].op]));
        w->vec_res[outs[t].op] = malloc(((size_t)outs[t].n + 1) * sizeof(double));
        if (!w->vec_res[outs[t].op]) return fail_w(w, "host result vector", SBM_ERR_OUT_OF_MEMORY), SBM_ERR_OUT_OF_MEMORY;
    }
    return SBM_SUCCESS;
}

static void worker_teardown(worker *w)
{
    sbm_cbc *cbcs[] = {w->A, w->A2, w->B, w->W, w->U, w->D};
    for (size_t t = 0; t < sizeof cbcs / sizeof cbcs[0]; t++) sbm_cbc_destroy(cbcs[t]);
    sbm_csr_destroy(w->P);
    sbm_csr_destroy(w->Q);
    sbm_gemm_plan_destroy(w->plan);
    sbm_csr_gemm_plan_destroy(w->cplan);
    for (int op = 0; op < NOPS; op++) {
        sbm_cbc_destroy(w->cbc_out[op]);
        sbm_csr_destroy(w->csr_out[op]);
        sbm_cbc_destroy(w->cbc_res[op]);
        sbm_csr_destroy(w->csr_res[op]);
        if (w->ctx) sbm__free(w->ctx, w->vec_out[op]);
        free(w->vec_res[op]);
    }
    if (w->ctx) {
        sbm__free(w->ctx, w->x);
        sbm__free(w->ctx, w->xt);
        sbm__free(w->ctx, w->xp);
        sbm__free(w->ctx, w->Bd);
    }
}

/* Queue operation op on the worker's context (asynchronous where the backend is); the previous
 * output of op is replaced. */
static sbm_status worker_compute(worker *w, int op)
{
    const inputs *in = w->in;
    sbm_ctx *ctx = w->ctx;
    const char *name = op_names[op];
    sbm_status st = SBM_SUCCESS;
    sbm_cbc_destroy(w->cbc_out[op]);
    w->cbc_out[op] = NULL;
    sbm_csr_destroy(w->csr_out[op]);
    w->csr_out[op] = NULL;
    switch (op) {
    case OP_GEMM:
        sbm_gemm_plan_destroy(w->plan);
        w->plan = NULL;
        st = sbm_cbc_gemm_plan(ctx, SBM_OP_N, w->A, SBM_OP_N, w->B, NULL, 0, &w->plan, &w->cbc_out[op]);
        if (st == SBM_SUCCESS) st = sbm_cbc_gemm_execute(ctx, w->plan, 0.75, w->A, w->B, NULL, w->cbc_out[op]);
        if (st == SBM_SUCCESS) st = sbm_cbc_gemm_execute(ctx, w->plan, -1.25, w->A, w->B, NULL, w->cbc_out[op]);
        break;
    case OP_GEMM_UPPER:
        st = sbm_cbc_gemm(ctx, -1.0, SBM_OP_N, w->W, SBM_OP_T, w->W, w->U, SBM_GEMM_UPPER, &w->cbc_out[op]);
        break;
    case OP_TRANSPOSE: st = sbm_cbc_transpose(ctx, w->A, &w->cbc_out[op]); break;
    case OP_ADD: st = sbm_cbc_add(ctx, 2.0, w->A, -0.5, w->A2, &w->cbc_out[op]); break;
    case OP_TO_CSR: st = sbm_cbc_to_csr(ctx, w->A, &w->csr_out[op]); break;
    case OP_BDIAG_INV:
        st = sbm_cbc_copy(ctx, w->D, &w->cbc_out[op]);
        if (st == SBM_SUCCESS) st = sbm_bdiag_inverse(ctx, w->D, w->cbc_out[op]);
        break;
    case OP_BDIAG_SCALE:
        st = sbm_cbc_copy(ctx, w->A, &w->cbc_out[op]);
        if (st == SBM_SUCCESS) st = sbm_bdiag_scale(ctx, SBM_SIDE_RIGHT, w->D, w->A, w->cbc_out[op]);
        break;
    case OP_SPMV_N:
        st = ctx->ops->copy(ctx, w->vec_out[op], in->y, (size_t)in->m * sizeof(double), 0);
        if (st == SBM_SUCCESS) st = sbm_cbc_spmv(ctx, SBM_OP_N, 1.5, w->A, w->x, 0.5, w->vec_out[op]);
        break;
    case OP_SPMV_T:
        st = ctx->ops->copy(ctx, w->vec_out[op], in->yt, (size_t)in->n * sizeof(double), 0);
        if (st == SBM_SUCCESS) st = sbm_cbc_spmv(ctx, SBM_OP_T, -1.0, w->A, w->xt, 0.25, w->vec_out[op]);
        break;
    case OP_CSR_GEMM:
        sbm_csr_gemm_plan_destroy(w->cplan);
        w->cplan = NULL;
        st = sbm_csr_gemm_plan(ctx, w->P, w->Q, &w->cplan, &w->csr_out[op]);
        if (st == SBM_SUCCESS) st = sbm_csr_gemm_execute(ctx, w->cplan, w->P, w->Q, w->csr_out[op]);
        break;
    case OP_CSR_SPMV:
        st = ctx->ops->copy(ctx, w->vec_out[op], in->yp, (size_t)in->pm * sizeof(double), 0);
        if (st == SBM_SUCCESS) st = sbm_csr_spmv(ctx, 0.5, w->P, w->xp, -0.25, w->vec_out[op]);
        break;
    case OP_CSR_SPMM:
        st = ctx->ops->copy(ctx, w->vec_out[op], in->Cd, (size_t)(in->pm * NCOLS) * sizeof(double), 0);
        if (st == SBM_SUCCESS)
            st = sbm_csr_spmm(ctx, 1.0, w->P, NCOLS, SBM_LAYOUT_COL_MAJOR, w->Bd, in->pn, 0.5,
                              w->vec_out[op], in->pm);
        break;
    default: break;
    }
    if (st != SBM_SUCCESS) fail_w(w, name, st);
    return st;
}

/* Wait for op's output and copy it to host memory. */
static sbm_status worker_collect(worker *w, int op)
{
    W_TRY("sbm_ctx_synchronize", sbm_ctx_synchronize(w->ctx));
    if (w->cbc_out[op]) {
        sbm_cbc_destroy(w->cbc_res[op]);
        w->cbc_res[op] = NULL;
        W_TRY(op_names[op], sbm_cbc_copy(w->host, w->cbc_out[op], &w->cbc_res[op]));
    } else if (w->csr_out[op]) {
        sbm_csr_destroy(w->csr_res[op]);
        w->csr_res[op] = NULL;
        W_TRY(op_names[op], sbm_csr_copy(w->host, w->csr_out[op], &w->csr_res[op]));
    } else if (w->vec_out[op]) {
        W_TRY(op_names[op], w->ctx->ops->copy(w->ctx, w->vec_res[op], w->vec_out[op],
                                              (size_t)w->vec_len[op] * sizeof(double), 1));
    }
    return SBM_SUCCESS;
}

/* Bitwise comparison of op's collected result with the reference's; a mismatch is recorded. */
static int same_bits(const void *a, const void *b, size_t bytes) { return bytes == 0 || memcmp(a, b, bytes) == 0; }

static int worker_compare(worker *w, int op, int iteration)
{
    const worker *r = w->ref;
    int same = 1;
    if (r->cbc_res[op]) {
        sbm_cbc_info x = sbm_cbc_get_info(w->cbc_res[op]), y = sbm_cbc_get_info(r->cbc_res[op]);
        same = w->cbc_res[op] && x.nbr == y.nbr && x.nbc == y.nbc && x.r == y.r && x.c == y.c &&
               x.nnzb == y.nnzb &&
               same_bits(x.colptr, y.colptr, (size_t)(x.nbc + 1) * sizeof(int64_t)) &&
               same_bits(x.rowind, y.rowind, (size_t)x.nnzb * sizeof(int32_t)) &&
               same_bits(x.values, y.values, (size_t)(x.nnzb * x.r * x.c) * sizeof(double));
    } else if (r->csr_res[op]) {
        sbm_csr_info x = sbm_csr_get_info(w->csr_res[op]), y = sbm_csr_get_info(r->csr_res[op]);
        same = w->csr_res[op] && x.m == y.m && x.n == y.n && x.nnz == y.nnz &&
               same_bits(x.rowptr, y.rowptr, (size_t)(x.m + 1) * sizeof(int64_t)) &&
               same_bits(x.colind, y.colind, (size_t)x.nnz * sizeof(int32_t)) &&
               same_bits(x.values, y.values, (size_t)x.nnz * sizeof(double));
    } else if (r->vec_res[op]) {
        same = same_bits(w->vec_res[op], r->vec_res[op], (size_t)r->vec_len[op] * sizeof(double));
    }
    w->compared++;
    if (!same && !w->failed) {
        w->failed = 1;
        snprintf(w->msg, sizeof w->msg, "%s, iteration %d: result differs from the single-thread run",
                 op_names[op], iteration);
    }
    return same;
}

/* ---------------------------------------------------------------------------------------- */
/* Streams (CUDA builds)                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* A non-blocking stream: it does not synchronise with the legacy default stream, so nothing
 * orders its work with other contexts' except what the library does itself. */
static int stream_create(struct CUstream_st **s, char *msg, size_t len)
{
#ifdef SBM_TEST_HAVE_CUDA
    cudaStream_t cs = NULL;
    cudaError_t e = cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        snprintf(msg, len, "cudaStreamCreateWithFlags: %s", cudaGetErrorString(e));
        return 0;
    }
    *s = (struct CUstream_st *)cs;
    return 1;
#else
    snprintf(msg, len, "this build has no CUDA backend");
    *s = NULL;
    return 0;
#endif
}

static void stream_destroy(struct CUstream_st *s)
{
#ifdef SBM_TEST_HAVE_CUDA
    if (s) cudaStreamDestroy((cudaStream_t)s);
#else
    (void)s;
#endif
}

/* ---------------------------------------------------------------------------------------- */
/* Threads                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static void *thread_main(void *arg)
{
    worker *w = arg;
    sbm_status st = sbm_ctx_create(&w->ctx, w->backend, 0);
    if (st != SBM_SUCCESS) return fail_w(w, "sbm_ctx_create", st), NULL;
    st = sbm_ctx_create(&w->host, SBM_BACKEND_CPU, 0);
    if (st != SBM_SUCCESS) return fail_w(w, "sbm_ctx_create (host)", st), NULL;
    if (w->want_stream) {
        if (!stream_create(&w->stream, w->msg, sizeof w->msg)) {
            w->failed = 1;
            return NULL;
        }
        st = sbm_ctx_set_stream(w->ctx, w->stream);
        if (st != SBM_SUCCESS) return fail_w(w, "sbm_ctx_set_stream", st), NULL;
    }
    if (worker_setup(w) == SBM_SUCCESS)
        for (int it = 0; it < w->iterations && !w->failed; it++)
            for (int op = 0; op < NOPS && !w->failed; op++) {
                if (!(w->enabled & (1u << op))) continue;
                if (worker_compute(w, op) != SBM_SUCCESS || worker_collect(w, op) != SBM_SUCCESS) break;
                worker_compare(w, op, it);
            }
    return NULL;
}

/* Release what thread_main made (after join, in the test's thread). */
static void thread_cleanup(worker *w)
{
    worker_teardown(w);
    sbm_ctx_destroy(w->ctx);
    sbm_ctx_destroy(w->host);
    stream_destroy(w->stream);
    w->ctx = w->host = NULL;
    w->stream = NULL;
}

/* The single-thread reference on the fixture's context: every operation once; an operation a
 * non-CPU backend does not support is reported and left out. */
static void reference_run(sbm_test_env *e, const inputs *in, worker *ref)
{
    memset(ref, 0, sizeof *ref);
    ref->backend = e->backend;
    ref->ctx = e->ctx;
    ref->host = e->host;
    ref->in = in;
    if (worker_setup(ref) != SBM_SUCCESS) fail_msg("reference setup: %s", ref->msg);
    for (int op = 0; op < NOPS; op++) {
        sbm_status st = worker_compute(ref, op);
        if (st == SBM_ERR_NOT_SUPPORTED && e->backend != SBM_BACKEND_CPU) {
            print_message("[  SKIP    ] %s: %s\n", op_names[op], sbm_ctx_last_error(e->ctx));
            ref->failed = 0;
            continue;
        }
        if (st != SBM_SUCCESS || worker_collect(ref, op) != SBM_SUCCESS)
            fail_msg("reference run: %s", ref->msg);
        ref->enabled |= 1u << op;
    }
}

static int count_ops(unsigned enabled)
{
    int n = 0;
    for (int op = 0; op < NOPS; op++) n += (enabled >> op) & 1u;
    return n;
}

/* Two threads, each with its own context (and its own stream with streams = 1). */
static void run_two_threads(sbm_test_env *e, int streams)
{
    /* compute-sanitizer racecheck loses track of kernels launched from two host threads at once
     * (.ci/device-run.sh): it runs this suite with the threads left out */
    if (getenv("SBM_TEST_NO_THREADS")) {
        print_message("[  SKIP    ] host threads disabled (SBM_TEST_NO_THREADS is set)\n");
        skip();
    }
    inputs in;
    inputs_make(&in, e->host);
    worker ref;
    reference_run(e, &in, &ref);
    worker w[2];
    pthread_t th[2];
    for (int t = 0; t < 2; t++) {
        memset(&w[t], 0, sizeof w[t]);
        w[t].backend = e->backend;
        w[t].in = &in;
        w[t].enabled = ref.enabled;
        w[t].iterations = e->backend == SBM_BACKEND_CPU ? 16 : 4;
        w[t].ref = &ref;
        w[t].want_stream = streams;
        assert_int_equal(pthread_create(&th[t], NULL, thread_main, &w[t]), 0);
    }
    for (int t = 0; t < 2; t++) assert_int_equal(pthread_join(th[t], NULL), 0);
    for (int t = 0; t < 2; t++) {
        if (w[t].failed) fail_msg("thread %d: %s", t, w[t].msg);
        assert_int_equal(w[t].compared, (long)w[t].iterations * count_ops(ref.enabled));
    }
    print_message("[  INFO    ] 2 threads%s x %d iterations x %d operations: %ld results, each "
                  "bitwise equal to the single-thread run\n",
                  streams ? " (own non-blocking streams)" : "", w[0].iterations,
                  count_ops(ref.enabled), w[0].compared + w[1].compared);
    for (int t = 0; t < 2; t++) thread_cleanup(&w[t]);
    worker_teardown(&ref);
    inputs_free(&in);
}

/* ---------------------------------------------------------------------------------------- */
/* Tests                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static void test_two_threads(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    run_two_threads(e, 0);
}

static void test_two_threads_two_streams(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    run_two_threads(e, 1);
}

/* Two contexts on two streams in one thread: every operation is queued on both streams before
 * either result is collected, so their kernels may overlap on the device. */
static void test_two_streams_interleaved(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    inputs in;
    inputs_make(&in, e->host);
    worker ref;
    reference_run(e, &in, &ref);
    worker w[2];
    for (int t = 0; t < 2; t++) {
        memset(&w[t], 0, sizeof w[t]);
        w[t].backend = e->backend;
        w[t].in = &in;
        w[t].enabled = ref.enabled;
        w[t].ref = &ref;
        w[t].host = e->host;
        SBM_ASSERT_OK(NULL, sbm_ctx_create(&w[t].ctx, e->backend, 0));
        char msg[256];
        if (!stream_create(&w[t].stream, msg, sizeof msg)) fail_msg("%s", msg);
        SBM_ASSERT_OK(w[t].ctx, sbm_ctx_set_stream(w[t].ctx, w[t].stream));
        assert_ptr_equal(sbm_ctx_stream(w[t].ctx), w[t].stream);
    }
    for (int t = 0; t < 2; t++)
        if (worker_setup(&w[t]) != SBM_SUCCESS) fail_msg("setup %d: %s", t, w[t].msg);
    const int iterations = 3;
    for (int it = 0; it < iterations; it++) {
        for (int op = 0; op < NOPS; op++) {
            if (!(ref.enabled & (1u << op))) continue;
            for (int t = 0; t < 2; t++)
                if (worker_compute(&w[t], op) != SBM_SUCCESS) fail_msg("context %d: %s", t, w[t].msg);
        }
        for (int op = 0; op < NOPS; op++) {
            if (!(ref.enabled & (1u << op))) continue;
            for (int t = 0; t < 2; t++) {
                if (worker_collect(&w[t], op) != SBM_SUCCESS) fail_msg("context %d: %s", t, w[t].msg);
                worker_compare(&w[t], op, it);
                if (w[t].failed) fail_msg("context %d: %s", t, w[t].msg);
            }
        }
    }
    print_message("[  INFO    ] 2 contexts on 2 streams, interleaved, %d iterations x %d "
                  "operations: %ld results bitwise equal to the single-stream run\n",
                  iterations, count_ops(ref.enabled), w[0].compared + w[1].compared);
    for (int t = 0; t < 2; t++) {
        w[t].host = NULL;
        worker_teardown(&w[t]);
        sbm_ctx_destroy(w[t].ctx);
        w[t].ctx = NULL;
        stream_destroy(w[t].stream);
    }
    worker_teardown(&ref);
    inputs_free(&in);
}

/* A context's stream can be changed between calls: work continues on the new stream with the
 * same results (the library waits for the old stream, whose work may still use the pool). */
static void test_stream_switch(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    inputs in;
    inputs_make(&in, e->host);
    worker ref;
    reference_run(e, &in, &ref);
    worker w;
    memset(&w, 0, sizeof w);
    w.backend = e->backend;
    w.in = &in;
    w.enabled = ref.enabled;
    w.ref = &ref;
    w.host = e->host;
    struct CUstream_st *s[2] = {NULL, NULL};
    char msg[256];
    for (int t = 0; t < 2; t++)
        if (!stream_create(&s[t], msg, sizeof msg)) fail_msg("%s", msg);
    SBM_ASSERT_OK(NULL, sbm_ctx_create(&w.ctx, e->backend, 0));
    if (worker_setup(&w) != SBM_SUCCESS) fail_msg("setup: %s", w.msg);
    int k = 0;
    for (int op = 0; op < NOPS; op++) {
        if (!(ref.enabled & (1u << op))) continue;
        /* queue on one stream, switch, collect on the next (NULL, s0, s1, NULL, ...) */
        if (worker_compute(&w, op) != SBM_SUCCESS) fail_msg("%s", w.msg);
        k = (k + 1) % 3;
        SBM_ASSERT_OK(w.ctx, sbm_ctx_set_stream(w.ctx, k == 0 ? NULL : s[k - 1]));
        if (worker_collect(&w, op) != SBM_SUCCESS) fail_msg("%s", w.msg);
        worker_compare(&w, op, 0);
        if (w.failed) fail_msg("%s", w.msg);
    }
    SBM_ASSERT_OK(w.ctx, sbm_ctx_set_stream(w.ctx, NULL));
    w.host = NULL;
    worker_teardown(&w);
    sbm_ctx_destroy(w.ctx);
    for (int t = 0; t < 2; t++) stream_destroy(s[t]);
    worker_teardown(&ref);
    inputs_free(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_two_threads),
        SBM_TEST_CUDA(test_two_streams_interleaved),
        SBM_TEST_CUDA(test_two_threads_two_streams),
        SBM_TEST_CUDA(test_stream_switch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
