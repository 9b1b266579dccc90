/* SPDX-License-Identifier: BSD-3-Clause */
/* The communicator over NCCL (src/dist/dist_comm.h), built only with SBM_NCCL.
 *
 * One process drives `nlocal` ranks (one GPU each, the contexts' devices): every call is one
 * NCCL group over the local ranks' communicators, each on its context's stream, so it is
 * ordered with the kernels around it without a host synchronisation. A reduction gathers every
 * rank's values (ncclAllGather into a small device buffer), copies them to the host and applies
 * the op in rank order: the same bits on every rank and every run, whatever algorithm NCCL
 * picks. An exchange is ncclSend / ncclRecv with every peer the rank shares points with. */
#include "cuda_internal.cuh"
#include "dist_comm.h"

#include <math.h>
#include <nccl.h>
#include <stdlib.h>
#include <string.h>

typedef struct nccl_state {
    ncclComm_t *comm; /* nlocal */
    int own;          /* 1: made here (ncclCommInitAll), destroyed here */
    double **dbuf;    /* nlocal device buffers: SBM__COMM_MAX_REDUCE + size * that doubles */
    double *hbuf;     /* host: size * SBM__COMM_MAX_REDUCE doubles */
} nccl_state;

static sbm_status nccl_ck(sbm_ctx *ctx, ncclResult_t r, const char *what)
{
    if (r == ncclSuccess) return SBM_SUCCESS;
    return sbm__error(ctx, SBM_ERR_CUDA, "NCCL: %s failed: %s", what, ncclGetErrorString(r));
}

static sbm_status nccl_reduce(sbm__comm *c, const double *in, double *out, int n,
                              sbm__reduce_op op)
{
    nccl_state *s = (nccl_state *)c->impl;
    const int P = c->size;
    for (int l = 0; l < c->nlocal; l++)
        SBM__TRY(sbm__vec_upload(c->ctx[l], s->dbuf[l], in + (size_t)l * n, n));
    SBM__TRY(nccl_ck(c->ctx[0], ncclGroupStart(), "ncclGroupStart"));
    ncclResult_t r = ncclSuccess;
    for (int l = 0; l < c->nlocal && r == ncclSuccess; l++)
        r = ncclAllGather(s->dbuf[l], s->dbuf[l] + SBM__COMM_MAX_REDUCE, (size_t)n, ncclDouble,
                          s->comm[l], sbm__cuda_stream(c->ctx[l]));
    const ncclResult_t e = ncclGroupEnd();
    SBM__TRY(nccl_ck(c->ctx[0], r != ncclSuccess ? r : e, "ncclAllGather"));
    /* every local rank gathered the same values: rank 0's are read */
    SBM__TRY(sbm__cuda_enter(c->ctx[0]));
    if (cudaStreamSynchronize(sbm__cuda_stream(c->ctx[0])) != cudaSuccess)
        return sbm__error(c->ctx[0], SBM_ERR_CUDA, "the reduction's NCCL all-gather failed");
    SBM__TRY(sbm__vec_download(c->ctx[0], s->hbuf, s->dbuf[0] + SBM__COMM_MAX_REDUCE,
                               (int64_t)P * n));
    for (int i = 0; i < n; i++) {
        double v = s->hbuf[i];
        for (int q = 1; q < P; q++) {
            const double x = s->hbuf[(size_t)q * n + i];
            v = op == SBM__REDUCE_SUM ? v + x : (x > v || isnan(x) ? x : v);
        }
        out[i] = v;
    }
    c->bytes_sent += 8.0 * n * (double)c->nlocal * (P - 1);
    return SBM_SUCCESS;
}

static sbm_status nccl_exchange(sbm__comm *c, const sbm__xchg *x, double *const *send,
                                double *const *recv)
{
    nccl_state *s = (nccl_state *)c->impl;
    SBM__TRY(nccl_ck(c->ctx[0], ncclGroupStart(), "ncclGroupStart"));
    ncclResult_t r = ncclSuccess;
    for (int l = 0; l < c->nlocal && r == ncclSuccess; l++) {
        const cudaStream_t st = sbm__cuda_stream(c->ctx[l]);
        for (int p = 0; p < c->size && r == ncclSuccess; p++) {
            const int64_t n = x[l].count[p];
            if (p == c->rank[l] || n == 0) continue;
            r = ncclSend(send[l] + x[l].off[p], (size_t)n, ncclDouble, p, s->comm[l], st);
            if (r == ncclSuccess)
                r = ncclRecv(recv[l] + x[l].off[p], (size_t)n, ncclDouble, p, s->comm[l], st);
            c->bytes_sent += 8.0 * (double)n;
        }
    }
    const ncclResult_t e = ncclGroupEnd();
    return nccl_ck(c->ctx[0], r != ncclSuccess ? r : e, "the halo exchange (ncclSend/ncclRecv)");
}

static sbm_status nccl_barrier(sbm__comm *c)
{
    double in[1024], out = 0.0;
    const int nl = c->nlocal < 1024 ? c->nlocal : 1024;
    for (int l = 0; l < nl; l++) in[l] = 0.0;
    return nccl_reduce(c, in, &out, 1, SBM__REDUCE_SUM);
}

static void nccl_destroy(sbm__comm *c)
{
    nccl_state *s = (nccl_state *)c->impl;
    if (!s) return;
    for (int l = 0; l < c->nlocal; l++) {
        if (s->dbuf && s->dbuf[l]) sbm__free(c->ctx[l], s->dbuf[l]);
        if (s->own && s->comm && s->comm[l]) ncclCommDestroy(s->comm[l]);
    }
    free(s->dbuf);
    free(s->comm);
    free(s->hbuf);
    free(s);
    c->impl = NULL;
}

static const sbm__comm_ops nccl_ops = {"NCCL", nccl_reduce, nccl_exchange, nccl_barrier,
                                       nccl_destroy};

/* The communicators: ncclCommInitAll over the contexts' devices, or the caller's one. */
static sbm_status nccl_init(sbm__comm *c, nccl_state *s, void *nccl_comm)
{
    sbm_ctx *ctx = c->ctx[0];
    if (nccl_comm) {
        s->comm[0] = (ncclComm_t)nccl_comm;
        int size = 0, rank = 0;
        SBM__TRY(nccl_ck(ctx, ncclCommCount(s->comm[0], &size), "ncclCommCount"));
        SBM__TRY(nccl_ck(ctx, ncclCommUserRank(s->comm[0], &rank), "ncclCommUserRank"));
        c->size = size, c->rank[0] = rank;
        return SBM_SUCCESS;
    }
    int *dev = (int *)malloc((size_t)c->nlocal * sizeof(int));
    if (!dev) return sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "out of host memory");
    for (int l = 0; l < c->nlocal; l++) dev[l] = c->ctx[l]->device, c->rank[l] = l;
    const sbm_status st =
        nccl_ck(ctx, ncclCommInitAll(s->comm, c->nlocal, dev), "ncclCommInitAll");
    free(dev);
    s->own = st == SBM_SUCCESS;
    c->size = c->nlocal;
    return st;
}

extern "C" sbm_status sbm__comm_nccl_create(sbm_ctx *const *ctxs, int nlocal, void *nccl_comm,
                                            sbm__comm **comm)
{
    *comm = NULL;
    sbm__comm *c = (sbm__comm *)calloc(1, sizeof *c);
    nccl_state *s = (nccl_state *)calloc(1, sizeof *s);
    if (c) c->rank = (int *)calloc((size_t)nlocal, sizeof(int));
    if (c) c->ctx = (sbm_ctx **)calloc((size_t)nlocal, sizeof(sbm_ctx *));
    if (s) s->comm = (ncclComm_t *)calloc((size_t)nlocal, sizeof(ncclComm_t));
    if (s) s->dbuf = (double **)calloc((size_t)nlocal, sizeof(double *));
    if (!c || !s || !c->rank || !c->ctx || !s->comm || !s->dbuf) {
        if (s) free(s->comm), free(s->dbuf), free(s);
        sbm__comm_destroy(c);
        return sbm__error(ctxs[0], SBM_ERR_OUT_OF_MEMORY, "out of host memory for NCCL");
    }
    c->nlocal = nlocal;
    c->impl = s;
    c->ops = &nccl_ops;
    for (int l = 0; l < nlocal; l++) c->ctx[l] = ctxs[l];
    sbm_status st = nccl_init(c, s, nccl_comm);
    const int64_t nbuf = (int64_t)SBM__COMM_MAX_REDUCE * (1 + c->size);
    if (st == SBM_SUCCESS) {
        s->hbuf = (double *)malloc((size_t)nbuf * sizeof(double));
        if (!s->hbuf) st = sbm__error(ctxs[0], SBM_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    for (int l = 0; l < nlocal && st == SBM_SUCCESS; l++)
        if (!(s->dbuf[l] = sbm__vec_alloc(ctxs[l], nbuf, "the reductions' buffer")))
            st = ctxs[l]->last_status;
    if (st != SBM_SUCCESS) {
        sbm__comm_destroy(c);
        return st;
    }
    *comm = c;
    return SBM_SUCCESS;
}
