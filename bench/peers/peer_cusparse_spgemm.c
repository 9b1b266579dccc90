/* SPDX-License-Identifier: BSD-3-Clause */
/* cuSPARSE peer of sbm-bench-gpu, SpGEMM (see peer_cusparse.h): cusparseSpGEMM with each
 * algorithm, all phases, and the structure-reuse variant. */
#include "peer_cusparse.h"
#include "peer_cusparse_internal.h"

#include "common/bench_util.h"

#include <cuda_runtime.h>
#include <cusparse.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* SpGEMM                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static const cusparseSpGEMMAlg_t spgemm_algs[PEER_SPGEMM_ALGS] = {
    CUSPARSE_SPGEMM_DEFAULT, CUSPARSE_SPGEMM_ALG2, CUSPARSE_SPGEMM_ALG3};

const char *peer_spgemm_alg_name(int i)
{
    static const char *const names[PEER_SPGEMM_ALGS] = {"default", "alg2", "alg3"};
    return i >= 0 && i < PEER_SPGEMM_ALGS ? names[i] : "unknown";
}

/* A call slower than this (its warm-up) is timed once, so that a slow variant cannot take the
 * benchmark's time budget. */
#define PEER_SLOW_MS 1000.0

/* Host copy of C's arrays into res (keep_c); on a failed download the arrays stay NULL. */
static void keep_result(peer_spgemm_result *res, int64_t m, int64_t nnz, const int32_t *cp,
                        const int32_t *cc, const double *cv)
{
    res->c_rowptr = malloc((size_t)(m + 1) * sizeof(int32_t));
    res->c_colind = malloc((size_t)nnz * sizeof(int32_t) + 1);
    res->c_values = malloc((size_t)nnz * sizeof(double) + 1);
    if (!res->c_rowptr || !res->c_colind || !res->c_values ||
        cudaMemcpy(res->c_rowptr, cp, (size_t)(m + 1) * sizeof(int32_t), cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(res->c_colind, cc, (size_t)nnz * sizeof(int32_t), cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(res->c_values, cv, (size_t)nnz * sizeof(double), cudaMemcpyDeviceToHost) != cudaSuccess) {
        (void)cudaGetLastError();
        peer_spgemm_result_free(res);
    }
}

void peer_spgemm_result_free(peer_spgemm_result *res)
{
    free(res->c_rowptr);
    free(res->c_colind);
    free(res->c_values);
    res->c_rowptr = res->c_colind = NULL;
    res->c_values = NULL;
}

/* Work buffers of one algorithm, sized by its warm-up call and reused by the timed ones (sbm's
 * timed calls reuse its workspace pool likewise), and C, allocated by each call (as sbm's). */
typedef struct sg_bufs {
    void *b1, *b2, *b3;  /* work estimation, compute, memory estimation (ALG2/3) */
    size_t s1, s2, s3;   /* their sizes */
    int32_t *cp, *cc;    /* C's row pointers (m + 1) and columns */
    double *cv;          /* C's values */
    int64_t cap;         /* entries cc and cv hold */
} sg_bufs;

/* Free C's arrays (a timed call allocates them; the caller frees them outside the timing). */
static void sg_free_c(tracker *t, sg_bufs *B, int64_t m)
{
    tfree(t, B->cp, B->cp ? (size_t)(m + 1) * sizeof(int32_t) : 0);
    tfree(t, B->cc, (size_t)B->cap * sizeof(int32_t));
    tfree(t, B->cv, (size_t)B->cap * sizeof(double));
    B->cp = B->cc = NULL;
    B->cv = NULL;
    B->cap = 0;
}

static void sg_free(tracker *t, sg_bufs *B, int64_t m)
{
    sg_free_c(t, B, m);
    tfree(t, B->b1, B->s1);
    tfree(t, B->b2, B->s2);
    tfree(t, B->b3, B->s3);
    memset(B, 0, sizeof *B);
}

/* *p of *cap bytes must hold need bytes: the warm-up (grow) allocates it, a timed call fails
 * rather than allocate. */
#define NEED(p, cap, need, what)                                                              \
    do {                                                                                      \
        if ((need) > (cap) || !(p)) {                                                         \
            if (!grow) {                                                                      \
                snprintf(msg, sizeof msg, "%s grew from %zu to %zu bytes between calls",      \
                         (what), (size_t)(cap), (size_t)(need));                              \
                goto fail;                                                                    \
            }                                                                                 \
            tfree(tr, (p), (cap));                                                            \
            (cap) = 0;                                                                        \
            (p) = tmalloc(tr, (need));                                                        \
            if (!(p)) {                                                                       \
                snprintf(msg, sizeof msg, "cudaMalloc of %zu bytes for %s: %s",               \
                         (size_t)(need), (what), cudaGetErrorName(tr->err));                  \
                goto fail;                                                                    \
            }                                                                                 \
            (cap) = (need);                                                                   \
        }                                                                                     \
    } while (0)

/* Every phase of one cusparseSpGEMM C = A*B (m x n) with algorithm alg into B's buffers.
 * @return 0, or -1 with the failing call and its status in msg_out. */
static int spgemm_call(cusparseHandle_t h, cusparseSpMatDescr_t mA, cusparseSpMatDescr_t mB,
                       int64_t m, int64_t n, cusparseSpGEMMAlg_t alg, int grow, sg_bufs *Bf,
                       tracker *tr, int64_t *nnz_out, char *msg_out, size_t msg_size)
{
    char msg[128] = "";
    const double alpha = 1.0, beta = 0.0;
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const cudaDataType ct = CUDA_R_64F;
    cusparseSpMatDescr_t mC = NULL;
    cusparseSpGEMMDescr_t sd = NULL;
    size_t need = 0, need2 = 0;
    int64_t rows = 0, cols = 0, nnz = 0;
    int rc = -1;
    CS(cusparseCreateCsr(&mC, m, n, 0, NULL, NULL, NULL, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_BASE_ZERO, ct), "cusparseCreateCsr(C)");
    CS(cusparseSpGEMM_createDescr(&sd), "cusparseSpGEMM_createDescr");
    CS(cusparseSpGEMM_workEstimation(h, op, op, &alpha, mA, mB, &beta, mC, ct, alg, sd, &need, NULL),
       "cusparseSpGEMM_workEstimation (size)");
    NEED(Bf->b1, Bf->s1, need, "SpGEMM buffer 1");
    need = Bf->s1;
    CS(cusparseSpGEMM_workEstimation(h, op, op, &alpha, mA, mB, &beta, mC, ct, alg, sd, &need, Bf->b1),
       "cusparseSpGEMM_workEstimation");
    if (alg == CUSPARSE_SPGEMM_ALG2 || alg == CUSPARSE_SPGEMM_ALG3) {
        int64_t prods = 0; /* the documented sequence of the memory-saving algorithms asks for it */
        CS(cusparseSpGEMM_getNumProducts(sd, &prods), "cusparseSpGEMM_getNumProducts");
        CS(cusparseSpGEMM_estimateMemory(h, op, op, &alpha, mA, mB, &beta, mC, ct, alg, sd,
                                         PEER_SPGEMM_CHUNK, &need, NULL, NULL),
           "cusparseSpGEMM_estimateMemory (size)");
        NEED(Bf->b3, Bf->s3, need, "SpGEMM buffer 3");
        need = Bf->s3;
        CS(cusparseSpGEMM_estimateMemory(h, op, op, &alpha, mA, mB, &beta, mC, ct, alg, sd,
                                         PEER_SPGEMM_CHUNK, &need, Bf->b3, &need2),
           "cusparseSpGEMM_estimateMemory");
    } else {
        CS(cusparseSpGEMM_compute(h, op, op, &alpha, mA, mB, &beta, mC, ct, alg, sd, &need2, NULL),
           "cusparseSpGEMM_compute (size)");
    }
    NEED(Bf->b2, Bf->s2, need2, "SpGEMM buffer 2");
    need2 = Bf->s2;
    CS(cusparseSpGEMM_compute(h, op, op, &alpha, mA, mB, &beta, mC, ct, alg, sd, &need2, Bf->b2),
       "cusparseSpGEMM_compute");
    CS(cusparseSpMatGetSize(mC, &rows, &cols, &nnz), "cusparseSpMatGetSize");
    /* C is allocated by every call, as sbm allocates its C in every timed one-shot and plan */
    sg_free_c(tr, Bf, m);
    {
        size_t cap_p = 0, cap_c = 0, cap_v = 0;
        const int grow_saved = grow;
        grow = 1;
        NEED(Bf->cp, cap_p, (size_t)(m + 1) * sizeof(int32_t), "C row pointers");
        NEED(Bf->cc, cap_c, (size_t)nnz * sizeof(int32_t), "C columns");
        NEED(Bf->cv, cap_v, (size_t)nnz * sizeof(double), "C values");
        grow = grow_saved;
        Bf->cap = nnz;
    }
    CS(cusparseCsrSetPointers(mC, Bf->cp, Bf->cc, Bf->cv), "cusparseCsrSetPointers");
    CS(cusparseSpGEMM_copy(h, op, op, &alpha, mA, mB, &beta, mC, ct, alg, sd), "cusparseSpGEMM_copy");
    *nnz_out = nnz;
    rc = 0;
fail:
    if (rc != 0) snprintf(msg_out, msg_size, "%s", msg);
    if (sd) cusparseSpGEMM_destroyDescr(sd);
    if (mC) cusparseDestroySpMat(mC);
    return rc;
}

/* One algorithm: warm-up (sizes and allocates), then reps timed calls. */
static void spgemm_alg(cusparseHandle_t h, cusparseSpMatDescr_t mA, cusparseSpMatDescr_t mB,
                       int64_t m, int64_t n, int ai, int reps, int keep_c, int64_t keep_c_max,
                       tracker *tr, peer_spgemm_result *res)
{
    peer_time *r = &res->alg[ai];
    char msg[160] = "";
    sg_bufs bf;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double *times = calloc((size_t)reps + 1, sizeof *times);
    int64_t nnz = 0;
    int n_t = 0, once = 0;
    const size_t base = tr->live;
    memset(&bf, 0, sizeof bf);
    tr->peak = tr->live;
    if (!times || cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) {
        snprintf(r->status, sizeof r->status, "cudaEventCreate or host memory failed");
        goto done;
    }
    for (int rep = 0; rep <= reps; rep++) {
        float ms = 0.0f;
        sg_free_c(tr, &bf, m); /* the previous call's C, outside the timing */
        if (cudaEventRecord(e0, 0) != cudaSuccess) {
            snprintf(r->status, sizeof r->status, "cudaEventRecord: %s", cudaGetErrorName(cudaGetLastError()));
            goto done;
        }
        if (spgemm_call(h, mA, mB, m, n, spgemm_algs[ai], rep == 0, &bf, tr, &nnz, msg, sizeof msg) != 0) {
            snprintf(r->status, sizeof r->status, "%s", msg);
            (void)cudaDeviceSynchronize();
            (void)cudaGetLastError();
            goto done;
        }
        if (cudaEventRecord(e1, 0) != cudaSuccess || cudaEventSynchronize(e1) != cudaSuccess ||
            cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess) {
            snprintf(r->status, sizeof r->status, "CUDA event timing failed: %s",
                     cudaGetErrorName(cudaGetLastError()));
            goto done;
        }
        if (rep == 0 && ms > PEER_SLOW_MS) { /* the warm-up is the only measurement */
            times[n_t++] = ms;
            once = 1;
            break;
        }
        if (rep > 0) times[n_t++] = ms;
    }
    {
        bench_stat st = bench_stat_of(times, n_t);
        r->ok = 1;
        r->med = st.med;
        r->min = st.min;
        r->max = st.max;
        r->peak_bytes = tr->peak - base;
        if (once)
            snprintf(r->status, sizeof r->status,
                     "ok; timed once (its warm-up, allocation included: one call > %.0f ms)", PEER_SLOW_MS);
        else
            snprintf(r->status, sizeof r->status, "ok");
    }
    if (res->nnz_c == 0) res->nnz_c = nnz;
    if (keep_c && !res->c_rowptr && nnz <= keep_c_max) keep_result(res, m, nnz, bf.cp, bf.cc, bf.cv);
done:
    sg_free(tr, &bf, m);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    free(times);
}

/* The reuse variant: symbolic phases once, then reps timed cusparseSpGEMMreuse_compute. */
static void spgemm_reuse(cusparseHandle_t h, cusparseSpMatDescr_t mA, cusparseSpMatDescr_t mB,
                         int64_t m, int64_t n, int reps, tracker *tr, peer_spgemm_result *res)
{
    char msg[128] = "";
    const double alpha = 1.0, beta = 0.0;
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const cudaDataType ct = CUDA_R_64F;
    const cusparseSpGEMMAlg_t alg = CUSPARSE_SPGEMM_DEFAULT;
    cusparseSpMatDescr_t mC = NULL;
    cusparseSpGEMMDescr_t sd = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    int32_t *cp = NULL, *cc = NULL;
    double *cv = NULL;
    void *b1 = NULL, *b2 = NULL, *b3 = NULL, *b4 = NULL, *b5 = NULL;
    size_t s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0;
    int64_t rows = 0, cols = 0, nnz = 0;
    double *times = calloc((size_t)reps + 1, sizeof *times);
    tracker tr_local = *tr;
    if (!times) return;
#define ALLOC_R(ptr, bytes, what)                                                             \
    do {                                                                                      \
        (ptr) = tmalloc(&tr_local, (bytes));                                                  \
        if (!(ptr)) {                                                                         \
            snprintf(msg, sizeof msg, "cudaMalloc of %zu bytes for %s: %s", (size_t)(bytes), \
                     (what), cudaGetErrorName(tr_local.err));                                 \
            goto fail;                                                                        \
        }                                                                                     \
    } while (0)
    CU(cudaEventCreate(&e0), "cudaEventCreate");
    CU(cudaEventCreate(&e1), "cudaEventCreate");
    CS(cusparseCreateCsr(&mC, m, n, 0, NULL, NULL, NULL, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_BASE_ZERO, ct), "cusparseCreateCsr(C)");
    CS(cusparseSpGEMM_createDescr(&sd), "cusparseSpGEMM_createDescr");
    CU(cudaEventRecord(e0, 0), "cudaEventRecord");
    CS(cusparseSpGEMMreuse_workEstimation(h, op, op, mA, mB, mC, alg, sd, &s1, NULL),
       "cusparseSpGEMMreuse_workEstimation");
    ALLOC_R(b1, s1, "reuse buffer 1");
    CS(cusparseSpGEMMreuse_workEstimation(h, op, op, mA, mB, mC, alg, sd, &s1, b1),
       "cusparseSpGEMMreuse_workEstimation");
    CS(cusparseSpGEMMreuse_nnz(h, op, op, mA, mB, mC, alg, sd, &s2, NULL, &s3, NULL, &s4, NULL),
       "cusparseSpGEMMreuse_nnz");
    ALLOC_R(b2, s2, "reuse buffer 2");
    ALLOC_R(b3, s3, "reuse buffer 3");
    ALLOC_R(b4, s4, "reuse buffer 4");
    CS(cusparseSpGEMMreuse_nnz(h, op, op, mA, mB, mC, alg, sd, &s2, b2, &s3, b3, &s4, b4),
       "cusparseSpGEMMreuse_nnz");
    tfree(&tr_local, b1, s1);
    tfree(&tr_local, b2, s2);
    b1 = b2 = NULL;
    CS(cusparseSpMatGetSize(mC, &rows, &cols, &nnz), "cusparseSpMatGetSize");
    ALLOC_R(cp, (size_t)(m + 1) * sizeof(int32_t), "C row pointers");
    ALLOC_R(cc, (size_t)nnz * sizeof(int32_t), "C columns");
    ALLOC_R(cv, (size_t)nnz * sizeof(double), "C values");
    CS(cusparseCsrSetPointers(mC, cp, cc, cv), "cusparseCsrSetPointers");
    CS(cusparseSpGEMMreuse_copy(h, op, op, mA, mB, mC, alg, sd, &s5, NULL), "cusparseSpGEMMreuse_copy");
    ALLOC_R(b5, s5, "reuse buffer 5");
    CS(cusparseSpGEMMreuse_copy(h, op, op, mA, mB, mC, alg, sd, &s5, b5), "cusparseSpGEMMreuse_copy");
    tfree(&tr_local, b3, s3);
    b3 = NULL;
    CU(cudaEventRecord(e1, 0), "cudaEventRecord");
    CU(cudaEventSynchronize(e1), "cudaEventSynchronize");
    {
        float ms = 0.0f;
        CU(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
        res->reuse_setup_ms = ms;
    }
    for (int rep = 0; rep <= reps; rep++) {
        CU(cudaEventRecord(e0, 0), "cudaEventRecord");
        CS(cusparseSpGEMMreuse_compute(h, op, op, &alpha, mA, mB, &beta, mC, ct, alg, sd),
           "cusparseSpGEMMreuse_compute");
        CU(cudaEventRecord(e1, 0), "cudaEventRecord");
        CU(cudaEventSynchronize(e1), "cudaEventSynchronize");
        float ms = 0.0f;
        CU(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
        if (rep > 0) times[rep - 1] = ms;
    }
    {
        bench_stat st = bench_stat_of(times, reps);
        res->reuse_ok = 1;
        res->reuse_exec_ms = st.med;
        res->reuse_min_ms = st.min;
        res->reuse_max_ms = st.max;
        snprintf(res->reuse_status, sizeof res->reuse_status, "ok");
    }
    if (res->nnz_c == 0) res->nnz_c = nnz;
    goto done;
fail:
    snprintf(res->reuse_status, sizeof res->reuse_status, "%s", msg);
done:
#undef ALLOC_R
    tfree(&tr_local, b1, s1);
    tfree(&tr_local, b2, s2);
    tfree(&tr_local, b3, s3);
    tfree(&tr_local, b4, s4);
    tfree(&tr_local, b5, s5);
    tfree(&tr_local, cp, 0);
    tfree(&tr_local, cc, 0);
    tfree(&tr_local, cv, 0);
    if (sd) cusparseSpGEMM_destroyDescr(sd);
    if (mC) cusparseDestroySpMat(mC);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    (void)cudaGetLastError();
    free(times);
}

int peer_cusparse_spgemm(const sbm_csr *A, const sbm_csr *B, int reps, int keep_c,
                         int64_t keep_c_max, peer_spgemm_result *res)
{
    sbm_csr_info a = sbm_csr_get_info(A), b = sbm_csr_get_info(B);
    memset(res, 0, sizeof *res);
    res->best = -1;
    snprintf(res->status, sizeof res->status, "not run");
    snprintf(res->reuse_status, sizeof res->reuse_status, "not run");
    for (int i = 0; i < PEER_SPGEMM_ALGS; i++) snprintf(res->alg[i].status, sizeof res->alg[i].status, "not run");
    if (a.nnz > INT_MAX || b.nnz > INT_MAX || a.m > INT_MAX || b.n > INT_MAX) {
        snprintf(res->status, sizeof res->status, "more than 2^31 entries: beyond cuSPARSE SpGEMM's 32-bit indices");
        snprintf(res->reuse_status, sizeof res->reuse_status, "%.100s", res->status);
        for (int i = 0; i < PEER_SPGEMM_ALGS; i++)
            snprintf(res->alg[i].status, sizeof res->alg[i].status, "%.100s", res->status);
        return -1;
    }
    tracker tr = {0, 0, cudaSuccess};
    char msg[128] = "";
    const cudaDataType ct = CUDA_R_64F;
    cusparseHandle_t h = NULL;
    cusparseSpMatDescr_t mA = NULL, mB = NULL;
    int32_t *ap = NULL, *bp = NULL;

    CS(cusparseCreate(&h), "cusparseCreate");
    ap = offsets32(&tr, a.rowptr, a.m);
    bp = offsets32(&tr, b.rowptr, b.m);
    if (!ap || !bp) {
        snprintf(msg, sizeof msg, "int32 row pointers could not be made");
        goto fail;
    }
    CS(cusparseCreateCsr(&mA, a.m, a.n, a.nnz, ap, (void *)a.colind, a.values, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, ct), "cusparseCreateCsr(A)");
    CS(cusparseCreateCsr(&mB, b.m, b.n, b.nnz, bp, (void *)b.colind, b.values, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, ct), "cusparseCreateCsr(B)");
    /* every algorithm (the int32 offset copies above are not counted as cuSPARSE's memory) */
    {
        res->status[0] = '\0';
        for (int i = 0; i < PEER_SPGEMM_ALGS; i++) {
            spgemm_alg(h, mA, mB, a.m, b.n, i, reps, keep_c, keep_c_max, &tr, res);
            if (res->alg[i].ok && (res->best < 0 || res->alg[i].med < res->alg[res->best].med)) res->best = i;
            const size_t len = strlen(res->status);
            if (!res->alg[i].ok)
                snprintf(res->status + len, sizeof res->status - len, "%s%s: %s", len ? "; " : "",
                         peer_spgemm_alg_name(i), res->alg[i].status);
        }
    }
    if (res->best >= 0) {
        const peer_time *t = &res->alg[res->best];
        char fails[256];
        snprintf(fails, sizeof fails, "%s", res->status);
        res->ok = 1;
        res->full_ms = t->med;
        res->full_min_ms = t->min;
        res->full_max_ms = t->max;
        res->peak_bytes = t->peak_bytes;
        snprintf(res->status, sizeof res->status, "ok (best %s)%s%.200s", peer_spgemm_alg_name(res->best),
                 fails[0] ? "; " : "", fails);
        /* the reuse API takes the default algorithm; run it where that one ran */
        if (res->alg[0].ok) spgemm_reuse(h, mA, mB, a.m, b.n, reps, &tr, res);
        else snprintf(res->reuse_status, sizeof res->reuse_status, "not run (the default algorithm failed)");
    } else {
        snprintf(res->reuse_status, sizeof res->reuse_status, "not run (every algorithm failed)");
    }
    goto done;

fail:
    snprintf(res->status, sizeof res->status, "%s", msg);
    snprintf(res->reuse_status, sizeof res->reuse_status, "not run (%s)", msg);
done:
    tfree(&tr, ap, 0);
    tfree(&tr, bp, 0);
    if (mB) cusparseDestroySpMat(mB);
    if (mA) cusparseDestroySpMat(mA);
    if (h) cusparseDestroy(h);
    (void)cudaGetLastError();
    return 0;
}
