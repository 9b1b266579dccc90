/* cuSPARSE peer of sbm-bench-gpu (see peer_cusparse.h). */
#include "peer_cusparse.h"

#include <cuda_runtime.h>
#include <cusparse.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Helpers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Device allocations of the peer, counted for its peak memory. */
typedef struct tracker {
    size_t live, peak;
} tracker;

static void *tmalloc(tracker *t, size_t bytes)
{
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    t->live += bytes;
    if (t->live > t->peak) t->peak = t->live;
    return p;
}

static void tfree(tracker *t, void *p, size_t bytes)
{
    if (!p) return;
    cudaFree(p);
    t->live -= bytes;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* int32 copy of a device int64 offset array (cuSPARSE's SpGEMM takes 32-bit indices only). */
static int32_t *offsets32(tracker *t, const int64_t *d64, int64_t n)
{
    int64_t *h = malloc((size_t)(n + 1) * sizeof *h);
    int32_t *h32 = malloc((size_t)(n + 1) * sizeof *h32);
    int32_t *d = NULL;
    if (h && h32 && cudaMemcpy(h, d64, (size_t)(n + 1) * sizeof *h, cudaMemcpyDeviceToHost) == cudaSuccess) {
        for (int64_t i = 0; i <= n; i++) h32[i] = (int32_t)h[i];
        d = tmalloc(t, (size_t)(n + 1) * sizeof *d);
        if (d && cudaMemcpy(d, h32, (size_t)(n + 1) * sizeof *d, cudaMemcpyHostToDevice) != cudaSuccess) {
            tfree(t, d, (size_t)(n + 1) * sizeof *d);
            d = NULL;
        }
    }
    free(h32);
    free(h);
    return d;
}

static double sumsq_device(const double *d, int64_t n)
{
    double s = 0.0;
    double *h = malloc((size_t)(n + 1) * sizeof *h);
    if (!h) return -1.0;
    if (cudaMemcpy(h, d, (size_t)n * sizeof *h, cudaMemcpyDeviceToHost) == cudaSuccess)
        for (int64_t i = 0; i < n; i++) s += h[i] * h[i];
    free(h);
    return s;
}

#define CS(call, what)                                                                        \
    do {                                                                                      \
        cusparseStatus_t cs_ = (call);                                                        \
        if (cs_ != CUSPARSE_STATUS_SUCCESS) {                                                 \
            snprintf(msg, sizeof msg, "%s: %s", (what), cusparseGetErrorName(cs_));           \
            goto fail;                                                                        \
        }                                                                                     \
    } while (0)
#define CU(call, what)                                                                        \
    do {                                                                                      \
        cudaError_t ce_ = (call);                                                             \
        if (ce_ != cudaSuccess) {                                                             \
            snprintf(msg, sizeof msg, "%s: %s", (what), cudaGetErrorName(ce_));               \
            (void)cudaGetLastError();                                                         \
            goto fail;                                                                        \
        }                                                                                     \
    } while (0)
#define ALLOC(ptr, bytes, what)                                                               \
    do {                                                                                      \
        (ptr) = tmalloc(&tr, (bytes));                                                        \
        if (!(ptr)) {                                                                         \
            snprintf(msg, sizeof msg, "cudaMalloc of %zu bytes for %s failed",                \
                     (size_t)(bytes), (what));                                                \
            goto fail;                                                                        \
        }                                                                                     \
    } while (0)

/* ---------------------------------------------------------------------------------------- */
/* SpGEMM                                                                                   */
/* ---------------------------------------------------------------------------------------- */

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

int peer_cusparse_spgemm(const sbm_csr *A, const sbm_csr *B, int reps, int keep_c,
                         peer_spgemm_result *res)
{
    sbm_csr_info a = sbm_csr_get_info(A), b = sbm_csr_get_info(B);
    memset(res, 0, sizeof *res);
    snprintf(res->status, sizeof res->status, "not run");
    snprintf(res->reuse_status, sizeof res->reuse_status, "not run");
    if (a.nnz > INT_MAX || b.nnz > INT_MAX || a.m > INT_MAX || b.n > INT_MAX) {
        snprintf(res->status, sizeof res->status, "more than 2^31 entries: beyond cuSPARSE SpGEMM's 32-bit indices");
        snprintf(res->reuse_status, sizeof res->reuse_status, "%s", res->status);
        return -1;
    }
    tracker tr = {0, 0};
    char msg[128] = "";
    const double alpha = 1.0, beta = 0.0;
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const cudaDataType ct = CUDA_R_64F;
    const cusparseSpGEMMAlg_t alg = CUSPARSE_SPGEMM_DEFAULT;
    cusparseHandle_t h = NULL;
    cusparseSpMatDescr_t mA = NULL, mB = NULL, mC = NULL;
    cusparseSpGEMMDescr_t sd = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    int32_t *ap = NULL, *bp = NULL, *cp = NULL, *cc = NULL;
    double *cv = NULL;
    void *b1 = NULL, *b2 = NULL, *b3 = NULL, *b4 = NULL, *b5 = NULL;
    size_t s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0;
    int64_t rows = 0, cols = 0, nnz = 0;
    double *times = calloc((size_t)reps + 1, sizeof *times);
    int phase = 0; /* 0 full, 1 reuse */
    size_t base_bytes = 0;
    if (!times) return -1;

    CS(cusparseCreate(&h), "cusparseCreate");
    CU(cudaEventCreate(&e0), "cudaEventCreate");
    CU(cudaEventCreate(&e1), "cudaEventCreate");
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
    base_bytes = tr.live; /* the int32 offset copies: not cuSPARSE's own memory */

    /* full SpGEMM: one warm-up, then reps timed, everything a user allocates included */
    for (int rep = 0; rep <= reps; rep++) {
        CS(cusparseCreateCsr(&mC, a.m, b.n, 0, NULL, NULL, NULL, CUSPARSE_INDEX_32I,
                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, ct), "cusparseCreateCsr(C)");
        CS(cusparseSpGEMM_createDescr(&sd), "cusparseSpGEMM_createDescr");
        CU(cudaEventRecord(e0, 0), "cudaEventRecord");
        CS(cusparseSpGEMM_workEstimation(h, op, op, &alpha, mA, mB, &beta, mC, ct, alg, sd, &s1, NULL),
           "cusparseSpGEMM_workEstimation");
        ALLOC(b1, s1, "SpGEMM buffer 1");
        CS(cusparseSpGEMM_workEstimation(h, op, op, &alpha, mA, mB, &beta, mC, ct, alg, sd, &s1, b1),
           "cusparseSpGEMM_workEstimation");
        CS(cusparseSpGEMM_compute(h, op, op, &alpha, mA, mB, &beta, mC, ct, alg, sd, &s2, NULL),
           "cusparseSpGEMM_compute");
        ALLOC(b2, s2, "SpGEMM buffer 2");
        CS(cusparseSpGEMM_compute(h, op, op, &alpha, mA, mB, &beta, mC, ct, alg, sd, &s2, b2),
           "cusparseSpGEMM_compute");
        CS(cusparseSpMatGetSize(mC, &rows, &cols, &nnz), "cusparseSpMatGetSize");
        ALLOC(cp, (size_t)(a.m + 1) * sizeof(int32_t), "C row pointers");
        ALLOC(cc, (size_t)nnz * sizeof(int32_t), "C columns");
        ALLOC(cv, (size_t)nnz * sizeof(double), "C values");
        CS(cusparseCsrSetPointers(mC, cp, cc, cv), "cusparseCsrSetPointers");
        CS(cusparseSpGEMM_copy(h, op, op, &alpha, mA, mB, &beta, mC, ct, alg, sd), "cusparseSpGEMM_copy");
        CU(cudaEventRecord(e1, 0), "cudaEventRecord");
        CU(cudaEventSynchronize(e1), "cudaEventSynchronize");
        float ms = 0.0f;
        CU(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
        if (rep > 0) times[rep - 1] = ms;
        if (rep == reps) {
            res->nnz_c = nnz;
            res->sumsq = sumsq_device(cv, nnz);
            if (keep_c) keep_result(res, a.m, nnz, cp, cc, cv);
        }
        tfree(&tr, b1, s1);
        tfree(&tr, b2, s2);
        tfree(&tr, cp, (size_t)(a.m + 1) * sizeof(int32_t));
        tfree(&tr, cc, (size_t)nnz * sizeof(int32_t));
        tfree(&tr, cv, (size_t)nnz * sizeof(double));
        b1 = b2 = NULL;
        cp = cc = NULL;
        cv = NULL;
        cusparseSpGEMM_destroyDescr(sd);
        cusparseDestroySpMat(mC);
        sd = NULL;
        mC = NULL;
    }
    res->ok = 1;
    res->full_ms = median(times, reps);
    snprintf(res->status, sizeof res->status, "ok");

    /* reuse variant: symbolic phases once, then the numeric compute timed */
    phase = 1;
    CS(cusparseCreateCsr(&mC, a.m, b.n, 0, NULL, NULL, NULL, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_BASE_ZERO, ct), "cusparseCreateCsr(C)");
    CS(cusparseSpGEMM_createDescr(&sd), "cusparseSpGEMM_createDescr");
    CU(cudaEventRecord(e0, 0), "cudaEventRecord");
    CS(cusparseSpGEMMreuse_workEstimation(h, op, op, mA, mB, mC, alg, sd, &s1, NULL),
       "cusparseSpGEMMreuse_workEstimation");
    ALLOC(b1, s1, "reuse buffer 1");
    CS(cusparseSpGEMMreuse_workEstimation(h, op, op, mA, mB, mC, alg, sd, &s1, b1),
       "cusparseSpGEMMreuse_workEstimation");
    CS(cusparseSpGEMMreuse_nnz(h, op, op, mA, mB, mC, alg, sd, &s2, NULL, &s3, NULL, &s4, NULL),
       "cusparseSpGEMMreuse_nnz");
    ALLOC(b2, s2, "reuse buffer 2");
    ALLOC(b3, s3, "reuse buffer 3");
    ALLOC(b4, s4, "reuse buffer 4");
    CS(cusparseSpGEMMreuse_nnz(h, op, op, mA, mB, mC, alg, sd, &s2, b2, &s3, b3, &s4, b4),
       "cusparseSpGEMMreuse_nnz");
    tfree(&tr, b1, s1);
    tfree(&tr, b2, s2);
    b1 = b2 = NULL;
    CS(cusparseSpMatGetSize(mC, &rows, &cols, &nnz), "cusparseSpMatGetSize");
    ALLOC(cp, (size_t)(a.m + 1) * sizeof(int32_t), "C row pointers");
    ALLOC(cc, (size_t)nnz * sizeof(int32_t), "C columns");
    ALLOC(cv, (size_t)nnz * sizeof(double), "C values");
    CS(cusparseCsrSetPointers(mC, cp, cc, cv), "cusparseCsrSetPointers");
    CS(cusparseSpGEMMreuse_copy(h, op, op, mA, mB, mC, alg, sd, &s5, NULL), "cusparseSpGEMMreuse_copy");
    ALLOC(b5, s5, "reuse buffer 5");
    CS(cusparseSpGEMMreuse_copy(h, op, op, mA, mB, mC, alg, sd, &s5, b5), "cusparseSpGEMMreuse_copy");
    tfree(&tr, b3, s3);
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
    res->reuse_ok = 1;
    res->reuse_exec_ms = median(times, reps);
    snprintf(res->reuse_status, sizeof res->reuse_status, "ok");
    if (!res->ok || res->nnz_c == 0) {
        res->nnz_c = nnz;
        res->sumsq = sumsq_device(cv, nnz);
    }
    goto done;

fail:
    if (phase == 0) {
        snprintf(res->status, sizeof res->status, "%s", msg);
        /* the reuse variant needs the same resources; say so rather than try again */
        snprintf(res->reuse_status, sizeof res->reuse_status, "not run (full SpGEMM failed)");
    } else {
        snprintf(res->reuse_status, sizeof res->reuse_status, "%s", msg);
    }
done:
    res->peak_bytes = tr.peak > base_bytes ? tr.peak - base_bytes : 0;
    tfree(&tr, b1, s1);
    tfree(&tr, b2, s2);
    tfree(&tr, b3, s3);
    tfree(&tr, b4, s4);
    tfree(&tr, b5, s5);
    tfree(&tr, cp, 0);
    tfree(&tr, cc, 0);
    tfree(&tr, cv, 0);
    tfree(&tr, ap, 0);
    tfree(&tr, bp, 0);
    if (sd) cusparseSpGEMM_destroyDescr(sd);
    if (mC) cusparseDestroySpMat(mC);
    if (mB) cusparseDestroySpMat(mB);
    if (mA) cusparseDestroySpMat(mA);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (h) cusparseDestroy(h);
    (void)cudaGetLastError();
    free(times);
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* BSR SpMV                                                                                 */
/* ---------------------------------------------------------------------------------------- */

int peer_cusparse_bsrmv(int64_t nbr, int64_t nbc, int64_t nnzb, int b, const int64_t *d_rowptr,
                        const int32_t *d_colind, const double *d_values, int col_major,
                        const double *d_x, double *d_y, int reps, peer_spmv_result *res)
{
    tracker tr = {0, 0};
    char msg[128] = "";
    cusparseHandle_t h = NULL;
    cusparseMatDescr_t descr = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    int32_t *rp = NULL;
    const double alpha = 1.0, beta = 0.0;
    double *times = calloc((size_t)reps + 1, sizeof *times);
    memset(res, 0, sizeof *res);
    snprintf(res->status, sizeof res->status, "not run");
    if (!times) return -1;
    if (nnzb > INT_MAX || nbr > INT_MAX || nbc > INT_MAX) {
        snprintf(res->status, sizeof res->status, "beyond cuSPARSE BSR's 32-bit indices");
        free(times);
        return -1;
    }
    CS(cusparseCreate(&h), "cusparseCreate");
    CS(cusparseCreateMatDescr(&descr), "cusparseCreateMatDescr");
    CU(cudaEventCreate(&e0), "cudaEventCreate");
    CU(cudaEventCreate(&e1), "cudaEventCreate");
    rp = offsets32(&tr, d_rowptr, nbr);
    if (!rp) {
        snprintf(msg, sizeof msg, "int32 row pointers could not be made");
        goto fail;
    }
    for (int rep = 0; rep <= reps; rep++) {
        CU(cudaEventRecord(e0, 0), "cudaEventRecord");
        CS(cusparseDbsrmv(h, col_major ? CUSPARSE_DIRECTION_COLUMN : CUSPARSE_DIRECTION_ROW,
                          CUSPARSE_OPERATION_NON_TRANSPOSE, (int)nbr, (int)nbc, (int)nnzb, &alpha,
                          descr, d_values, rp, d_colind, b, d_x, &beta, d_y),
           "cusparseDbsrmv");
        CU(cudaEventRecord(e1, 0), "cudaEventRecord");
        CU(cudaEventSynchronize(e1), "cudaEventSynchronize");
        float ms = 0.0f;
        CU(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
        if (rep > 0) times[rep - 1] = ms;
    }
    res->ok = 1;
    res->ms = median(times, reps);
    snprintf(res->status, sizeof res->status, "ok");
    goto done;
fail:
    snprintf(res->status, sizeof res->status, "%s", msg);
done:
    tfree(&tr, rp, 0);
    if (descr) cusparseDestroyMatDescr(descr);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (h) cusparseDestroy(h);
    (void)cudaGetLastError();
    free(times);
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* CSR SpMV and SpMM (generic API)                                                          */
/* ---------------------------------------------------------------------------------------- */

struct peer_csr {
    cusparseHandle_t handle;
    cudaStream_t stream;
    cusparseSpMatDescr_t mat;
    int32_t *rowptr;     /* int32 copy of A's row pointers */
    int64_t m, n, nnz;
    tracker tr;
};

int peer_csr_create(const sbm_csr *A, struct CUstream_st *stream, peer_csr **out, char *msg_out,
                    size_t msg_size)
{
    sbm_csr_info a = sbm_csr_get_info(A);
    char msg[128] = "";
    peer_csr *P = calloc(1, sizeof *P);
    *out = NULL;
    if (!P) {
        snprintf(msg, sizeof msg, "out of host memory");
        goto fail;
    }
    if (a.nnz > INT_MAX || a.m > INT_MAX || a.n > INT_MAX) {
        snprintf(msg, sizeof msg, "more than 2^31 entries: beyond cuSPARSE's 32-bit indices");
        goto fail;
    }
    P->stream = stream;
    P->m = a.m;
    P->n = a.n;
    P->nnz = a.nnz;
    CS(cusparseCreate(&P->handle), "cusparseCreate");
    CS(cusparseSetStream(P->handle, stream), "cusparseSetStream");
    P->rowptr = offsets32(&P->tr, a.rowptr, a.m);
    if (!P->rowptr) {
        snprintf(msg, sizeof msg, "int32 row pointers could not be made");
        goto fail;
    }
    CS(cusparseCreateCsr(&P->mat, a.m, a.n, a.nnz, P->rowptr, (void *)a.colind, a.values,
                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F),
       "cusparseCreateCsr");
    *out = P;
    return 0;
fail:
    snprintf(msg_out, msg_size, "%s", msg);
    peer_csr_destroy(P);
    return -1;
}

void peer_csr_destroy(peer_csr *P)
{
    if (!P) return;
    if (P->mat) cusparseDestroySpMat(P->mat);
    tfree(&P->tr, P->rowptr, 0);
    if (P->handle) cusparseDestroy(P->handle);
    (void)cudaGetLastError();
    free(P);
}

/* Events on the peer's stream around each call: one warm-up, then reps timed (median). The
 * call is the statement `body`, which may `goto fail` through CS. */
#define TIME_REPS(body, what)                                                                 \
    do {                                                                                      \
        for (int rep_ = 0; rep_ <= reps; rep_++) {                                            \
            CU(cudaEventRecord(e0, P->stream), "cudaEventRecord");                            \
            body;                                                                             \
            CU(cudaEventRecord(e1, P->stream), "cudaEventRecord");                            \
            CU(cudaEventSynchronize(e1), what);                                               \
            float ms_ = 0.0f;                                                                 \
            CU(cudaEventElapsedTime(&ms_, e0, e1), "cudaEventElapsedTime");                   \
            if (rep_ > 0) times[rep_ - 1] = ms_;                                              \
        }                                                                                     \
    } while (0)

static double elapsed_ms(cudaEvent_t e0, cudaEvent_t e1)
{
    float ms = 0.0f;
    if (cudaEventSynchronize(e1) != cudaSuccess || cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1.0;
    }
    return ms;
}

int peer_csr_spmv(peer_csr *P, const double *d_x, double *d_y, int reps, peer_op_result *res)
{
    char msg[128] = "";
    const double alpha = 1.0, beta = 0.0;
    cusparseDnVecDescr_t vx = NULL, vy = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    void *buf = NULL;
    size_t bytes = 0;
    double *times = calloc((size_t)reps + 1, sizeof *times);
    memset(res, 0, sizeof *res);
    snprintf(res->status, sizeof res->status, "not run");
    if (!times) return -1;
    CU(cudaEventCreate(&e0), "cudaEventCreate");
    CU(cudaEventCreate(&e1), "cudaEventCreate");
    CU(cudaEventRecord(e0, P->stream), "cudaEventRecord");
    CS(cusparseCreateDnVec(&vx, P->n, (void *)d_x, CUDA_R_64F), "cusparseCreateDnVec(x)");
    CS(cusparseCreateDnVec(&vy, P->m, d_y, CUDA_R_64F), "cusparseCreateDnVec(y)");
    CS(cusparseSpMV_bufferSize(P->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, P->mat, vx, &beta,
                               vy, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes),
       "cusparseSpMV_bufferSize");
    CU(cudaMalloc(&buf, bytes ? bytes : 1), "cudaMalloc (SpMV buffer)");
    CU(cudaEventRecord(e1, P->stream), "cudaEventRecord");
    res->setup_ms = elapsed_ms(e0, e1);
    TIME_REPS(CS(cusparseSpMV(P->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, P->mat, vx, &beta,
                              vy, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, buf),
                 "cusparseSpMV"),
              "cusparseSpMV (synchronize)");
    res->ok = 1;
    res->ms = median(times, reps);
    snprintf(res->status, sizeof res->status, "ok");
    goto done;
fail:
    snprintf(res->status, sizeof res->status, "%s", msg);
done:
    if (buf) cudaFree(buf);
    if (vx) cusparseDestroyDnVec(vx);
    if (vy) cusparseDestroyDnVec(vy);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    (void)cudaGetLastError();
    free(times);
    return 0;
}

int peer_csr_spmm(peer_csr *P, int64_t ncols, const double *d_B, double *d_C, int reps,
                  peer_op_result *res)
{
    char msg[128] = "";
    const double alpha = 1.0, beta = 0.0;
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    cusparseDnMatDescr_t mB = NULL, mC = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    void *buf = NULL;
    size_t bytes = 0;
    double *times = calloc((size_t)reps + 1, sizeof *times);
    memset(res, 0, sizeof *res);
    snprintf(res->status, sizeof res->status, "not run");
    if (!times) return -1;
    CU(cudaEventCreate(&e0), "cudaEventCreate");
    CU(cudaEventCreate(&e1), "cudaEventCreate");
    CU(cudaEventRecord(e0, P->stream), "cudaEventRecord");
    CS(cusparseCreateDnMat(&mB, P->n, ncols, ncols, (void *)d_B, CUDA_R_64F, CUSPARSE_ORDER_ROW),
       "cusparseCreateDnMat(B)");
    CS(cusparseCreateDnMat(&mC, P->m, ncols, ncols, d_C, CUDA_R_64F, CUSPARSE_ORDER_ROW),
       "cusparseCreateDnMat(C)");
    CS(cusparseSpMM_bufferSize(P->handle, op, op, &alpha, P->mat, mB, &beta, mC, CUDA_R_64F,
                               CUSPARSE_SPMM_ALG_DEFAULT, &bytes),
       "cusparseSpMM_bufferSize");
    CU(cudaMalloc(&buf, bytes ? bytes : 1), "cudaMalloc (SpMM buffer)");
    CU(cudaEventRecord(e1, P->stream), "cudaEventRecord");
    res->setup_ms = elapsed_ms(e0, e1);
    TIME_REPS(CS(cusparseSpMM(P->handle, op, op, &alpha, P->mat, mB, &beta, mC, CUDA_R_64F,
                              CUSPARSE_SPMM_ALG_DEFAULT, buf),
                 "cusparseSpMM"),
              "cusparseSpMM (synchronize)");
    res->ok = 1;
    res->ms = median(times, reps);
    snprintf(res->status, sizeof res->status, "ok");
    goto done;
fail:
    snprintf(res->status, sizeof res->status, "%s", msg);
done:
    if (buf) cudaFree(buf);
    if (mB) cusparseDestroyDnMat(mB);
    if (mC) cusparseDestroyDnMat(mC);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    (void)cudaGetLastError();
    free(times);
    return 0;
}
