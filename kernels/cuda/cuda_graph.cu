/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA graphs of fixed launch sequences (declarations and the rules: cuda_internal.cuh).
 *
 * A sequence whose launches depend only on a fixed structure (the sparse Cholesky's walk of its
 * tree levels: thousands of small launches and cuBLAS/cuSOLVER calls) is captured once into a
 * graph and replayed with one cudaGraphLaunch, so that the launch latency is paid once per call
 * rather than once per launch. The captured kernels are the plain path's, in the plain path's
 * order on one stream, so both give bitwise the same results. */
#include "cuda_internal.cuh"

#include <atomic>
#include <stdlib.h>
#include <string.h>

static std::atomic<uint64_t> sbm__cuda_serials{0};
static std::atomic<int64_t> sbm__cuda_live{0};

extern "C" int64_t sbm__cuda_graphs_live(void) { return sbm__cuda_live.load(); }

sbm_status sbm__cuda_graphs_init(sbm_ctx *ctx, sbm__cuda_state *S)
{
    const char *v = getenv("SBM_CUDA_GRAPHS");
    S->serial = ++sbm__cuda_serials;
    if (!v || !*v || strcmp(v, "1") == 0) S->graphs = 1;
    else if (strcmp(v, "0") == 0) S->graphs = 0;
    else if (strcmp(v, "2") == 0) S->graphs = 2;
    else
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "environment variable SBM_CUDA_GRAPHS: "
                          "\"%.64s\" is neither 0 (plain launches), 1 (CUDA graphs) nor 2 "
                          "(graphs cut at every cuSOLVER call)", v);
    return SBM_SUCCESS;
}

void sbm__cuda_graphs_release(sbm__cuda_state *S)
{
    if (S->capture_stream) cudaStreamDestroy((cudaStream_t)S->capture_stream);
    S->capture_stream = NULL;
}

void sbm__cuda_graph_reset(sbm__cuda_graph *g)
{
    if (g->exec) {
        cudaGraphExecDestroy(g->exec);
        --sbm__cuda_live;
    }
    memset(g, 0, sizeof *g);
}

/* Captures record into g (g->exec set), or marks g failed; the context's last error is kept.
 * @return a status only for what is not the capture's fault (the capture stream's creation). */
static sbm_status sbm__cuda_graph_capture(sbm_ctx *ctx, sbm__cuda_graph *g,
                                          sbm__cuda_record_fn record, void *data)
{
    sbm_status st = SBM_SUCCESS;
    sbm__cuda_state *S = sbm__cuda_st(ctx);
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    char msg[SBM__MSG_SIZE];
    const sbm_status last = ctx->last_status;
    if (!S->capture_stream) {
        cudaStream_t cs = NULL;
        /* non-blocking: work another thread queues on the legacy default stream must not join
         * (and so break) the capture */
        SBM__CU(ctx, cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking),
                "cudaStreamCreateWithFlags (the stream of the CUDA graph captures)");
        S->capture_stream = cs;
    }
    memcpy(msg, ctx->message, sizeof msg);
    {
        cudaStream_t cs = (cudaStream_t)S->capture_stream;
        struct CUstream_st *own = ctx->stream;
        int ok = cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
        if (ok) {
            /* meanwhile the context's stream is the capture stream: work that record queues
             * through sbm__cuda_stream(ctx) (the vector operations...) is captured too */
            ctx->stream = (struct CUstream_st *)cs;
            const sbm_status rs = record(ctx, cs, data);
            ctx->stream = own;
            /* the capture always ends, whatever record did */
            ok = cudaStreamEndCapture(cs, &graph) == cudaSuccess && rs == SBM_SUCCESS && graph;
        }
        ok = ok && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
        if (graph) cudaGraphDestroy(graph);
        (void)cudaGetLastError(); /* a failed capture is not an error of the next call */
        if (ok) {
            g->exec = exec;
            g->owner = S->serial;
            ++sbm__cuda_live;
        } else {
            if (exec) cudaGraphExecDestroy(exec);
            g->failed = 1;
        }
    }
    /* record's messages during a failed capture say nothing about the call */
    ctx->last_status = last;
    memcpy(ctx->message, msg, sizeof msg);
done:
    return st;
}

sbm_status sbm__cuda_graph_run(sbm_ctx *ctx, sbm__cuda_graph *g, sbm__cuda_record_fn record,
                               void *data)
{
    sbm_status st = SBM_SUCCESS;
    sbm__cuda_state *S = sbm__cuda_st(ctx);
    const cudaStream_t s = sbm__cuda_stream(ctx);
    /* a graph captured by another context uses that context's cuBLAS workspace; a replay of it
     * may still be queued on that context's stream */
    if (g->exec && g->owner != S->serial) {
        SBM__CU(ctx, cudaDeviceSynchronize(), "cudaDeviceSynchronize (a graph of another context)");
        sbm__cuda_graph_reset(g);
    }
    if (!sbm__cuda_graphs_on(ctx) || g->failed) return record(ctx, s, data);
    if (!g->exec) {
        if (!g->warm) {
            st = record(ctx, s, data);
            g->warm = st == SBM_SUCCESS;
            return st;
        }
        SBM__CK(sbm__cuda_graph_capture(ctx, g, record, data));
        if (!g->exec) return record(ctx, s, data);
    }
    SBM__CU(ctx, cudaGraphLaunch(g->exec, s), "cudaGraphLaunch");
    ctx->stats.graph_launches++;
done:
    return st;
}
