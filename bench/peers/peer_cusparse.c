/* SPDX-License-Identifier: BSD-3-Clause */
/* cuSPARSE peer of sbm-bench-gpu (see peer_cusparse.h): the shared helpers, BSR SpMV, and CSR
 * SpMV and SpMM; SpGEMM is in peer_cusparse_spgemm.c. */
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
/* Helpers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

void *tmalloc(tracker *t, size_t bytes)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        t->err = e;
        (void)cudaGetLastError();
        return NULL;
    }
    t->live += bytes;
    if (t->live > t->peak) t->peak = t->live;
    return p;
}

void tfree(tracker *t, void *p, size_t bytes)
{
    if (!p) return;
    cudaFree(p);
    t->live -= bytes;
}

/* int32 copy of a device int64 offset array (cuSPARSE's SpGEMM takes 32-bit indices only). */
int32_t *offsets32(tracker *t, const int64_t *d64, int64_t n)
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

/* ---------------------------------------------------------------------------------------- */
/* BSR SpMV                                                                                 */
/* ---------------------------------------------------------------------------------------- */

int peer_cusparse_bsrmv(int64_t nbr, int64_t nbc, int64_t nnzb, int b, const int64_t *d_rowptr,
                        const int32_t *d_colind, const double *d_values, int col_major,
                        const double *d_x, double *d_y, int reps, peer_spmv_result *res)
{
    tracker tr = {0, 0, cudaSuccess};
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
    {
        bench_stat st = bench_stat_of(times, reps);
        res->ok = 1;
        res->ms = st.med;
        res->min_ms = st.min;
        res->max_ms = st.max;
    }
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

static const cusparseSpMVAlg_t spmv_algs[PEER_SPMV_ALGS] = {
    CUSPARSE_SPMV_ALG_DEFAULT, CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2};
static const cusparseSpMMAlg_t spmm_algs[PEER_SPMM_ALGS] = {
    CUSPARSE_SPMM_ALG_DEFAULT, CUSPARSE_SPMM_CSR_ALG1, CUSPARSE_SPMM_CSR_ALG2, CUSPARSE_SPMM_CSR_ALG3};

const char *peer_spmv_alg_name(int i)
{
    static const char *const names[PEER_SPMV_ALGS] = {"default", "csr-alg1", "csr-alg2"};
    return i >= 0 && i < PEER_SPMV_ALGS ? names[i] : "unknown";
}

const char *peer_spmm_alg_name(int i)
{
    static const char *const names[PEER_SPMM_ALGS] = {"default", "csr-alg1", "csr-alg2", "csr-alg3"};
    return i >= 0 && i < PEER_SPMM_ALGS ? names[i] : "unknown";
}

/* Median, min and max of the timed calls into res. */
static void op_times(peer_op_result *res, double *times, int reps)
{
    bench_stat st = bench_stat_of(times, reps);
    res->ok = 1;
    res->ms = st.med;
    res->min_ms = st.min;
    res->max_ms = st.max;
}

/* Both peers below allocate their buffer and preprocess once, outside the timed calls, as sbm's
 * timed calls find their workspace pool grown and their caches warm. */
int peer_csr_spmv(peer_csr *P, int alg_index, const double *d_x, double *d_y, int reps,
                  peer_op_result *res)
{
    char msg[128] = "";
    const double alpha = 1.0, beta = 0.0;
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    cusparseDnVecDescr_t vx = NULL, vy = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    void *buf = NULL;
    size_t bytes = 0;
    cusparseStatus_t pre = CUSPARSE_STATUS_SUCCESS;
    double *times = calloc((size_t)reps + 1, sizeof *times);
    memset(res, 0, sizeof *res);
    snprintf(res->status, sizeof res->status, "not run");
    if (!times) return -1;
    if (alg_index < 0 || alg_index >= PEER_SPMV_ALGS) {
        free(times);
        return -1;
    }
    const cusparseSpMVAlg_t alg = spmv_algs[alg_index];
    CU(cudaEventCreate(&e0), "cudaEventCreate");
    CU(cudaEventCreate(&e1), "cudaEventCreate");
    CU(cudaEventRecord(e0, P->stream), "cudaEventRecord");
    CS(cusparseCreateDnVec(&vx, P->n, (void *)d_x, CUDA_R_64F), "cusparseCreateDnVec(x)");
    CS(cusparseCreateDnVec(&vy, P->m, d_y, CUDA_R_64F), "cusparseCreateDnVec(y)");
    CS(cusparseSpMV_bufferSize(P->handle, op, &alpha, P->mat, vx, &beta, vy, CUDA_R_64F, alg, &bytes),
       "cusparseSpMV_bufferSize");
    CU(cudaMalloc(&buf, bytes ? bytes : 1), "cudaMalloc (SpMV buffer)");
    /* an algorithm without a preprocess step may refuse it: say so and time it anyway */
    pre = cusparseSpMV_preprocess(P->handle, op, &alpha, P->mat, vx, &beta, vy, CUDA_R_64F, alg, buf);
    CU(cudaEventRecord(e1, P->stream), "cudaEventRecord");
    res->setup_ms = elapsed_ms(e0, e1);
    TIME_REPS(CS(cusparseSpMV(P->handle, op, &alpha, P->mat, vx, &beta, vy, CUDA_R_64F, alg, buf),
                 "cusparseSpMV"),
              "cusparseSpMV (synchronize)");
    op_times(res, times, reps);
    if (pre == CUSPARSE_STATUS_SUCCESS) snprintf(res->status, sizeof res->status, "ok");
    else snprintf(res->status, sizeof res->status, "ok (cusparseSpMV_preprocess: %s)", cusparseGetErrorName(pre));
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

int peer_csr_spmm(peer_csr *P, int alg_index, int64_t ncols, const double *d_B, double *d_C,
                  int reps, peer_op_result *res)
{
    char msg[128] = "";
    const double alpha = 1.0, beta = 0.0;
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    cusparseDnMatDescr_t mB = NULL, mC = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    void *buf = NULL;
    size_t bytes = 0;
    cusparseStatus_t pre = CUSPARSE_STATUS_SUCCESS;
    double *times = calloc((size_t)reps + 1, sizeof *times);
    memset(res, 0, sizeof *res);
    snprintf(res->status, sizeof res->status, "not run");
    if (!times) return -1;
    if (alg_index < 0 || alg_index >= PEER_SPMM_ALGS) {
        free(times);
        return -1;
    }
    const cusparseSpMMAlg_t alg = spmm_algs[alg_index];
    CU(cudaEventCreate(&e0), "cudaEventCreate");
    CU(cudaEventCreate(&e1), "cudaEventCreate");
    CU(cudaEventRecord(e0, P->stream), "cudaEventRecord");
    CS(cusparseCreateDnMat(&mB, P->n, ncols, ncols, (void *)d_B, CUDA_R_64F, CUSPARSE_ORDER_ROW),
       "cusparseCreateDnMat(B)");
    CS(cusparseCreateDnMat(&mC, P->m, ncols, ncols, d_C, CUDA_R_64F, CUSPARSE_ORDER_ROW),
       "cusparseCreateDnMat(C)");
    CS(cusparseSpMM_bufferSize(P->handle, op, op, &alpha, P->mat, mB, &beta, mC, CUDA_R_64F, alg, &bytes),
       "cusparseSpMM_bufferSize");
    CU(cudaMalloc(&buf, bytes ? bytes : 1), "cudaMalloc (SpMM buffer)");
    /* an algorithm without a preprocess step may refuse it: say so and time it anyway */
    pre = cusparseSpMM_preprocess(P->handle, op, op, &alpha, P->mat, mB, &beta, mC, CUDA_R_64F, alg, buf);
    CU(cudaEventRecord(e1, P->stream), "cudaEventRecord");
    res->setup_ms = elapsed_ms(e0, e1);
    TIME_REPS(CS(cusparseSpMM(P->handle, op, op, &alpha, P->mat, mB, &beta, mC, CUDA_R_64F, alg, buf),
                 "cusparseSpMM"),
              "cusparseSpMM (synchronize)");
    op_times(res, times, reps);
    if (pre == CUSPARSE_STATUS_SUCCESS) snprintf(res->status, sizeof res->status, "ok");
    else snprintf(res->status, sizeof res->status, "ok (cusparseSpMM_preprocess: %s)", cusparseGetErrorName(pre));
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
