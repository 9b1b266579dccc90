/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA backend's core table: device memory, the context (device, stream, workspace pool,
 * memory budget) and the dispatch of every core operation to the kernels of kernels/cuda/. */
#include "cuda_internal.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Errors                                                                                   */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm__cuda_fail(sbm_ctx *ctx, cudaError_t err, const char *what, const char *file,
                          int line)
{
    /* a non-sticky error must not surface again in the next unrelated check */
    (void)cudaGetLastError();
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    sbm_status st = err == cudaErrorMemoryAllocation ? SBM_ERR_OUT_OF_MEMORY : SBM_ERR_CUDA;
    return sbm__error(ctx, st, "%s failed on device %d: %s (%s, %s:%d)", what,
                      ctx ? ctx->device : -1, cudaGetErrorString(err), cudaGetErrorName(err),
                      base, line);
}

/* ---------------------------------------------------------------------------------------- */
/* Memory                                                                                   */
/* ---------------------------------------------------------------------------------------- */

void *sbm__cuda_default_alloc(void *user, size_t bytes)
{
    (void)user;
    void *p = NULL;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return p;
}

void sbm__cuda_default_free(void *user, void *ptr)
{
    (void)user;
    if (ptr) cudaFree(ptr);
}

sbm_status sbm__cuda_enter(sbm_ctx *ctx)
{
    sbm_status st = SBM_SUCCESS;
    int cur = -1;
    SBM__CU(ctx, cudaGetDevice(&cur), "cudaGetDevice");
    if (cur != ctx->device) SBM__CU(ctx, cudaSetDevice(ctx->device), "cudaSetDevice");
done:
    return st;
}

/* kind: 0 host -> device, 1 device -> host, 2 device -> device. The CPU front end also calls
 * this with a CPU context for device -> host copies (src/core/memory.c): then the default stream is
 * used, and every device -> host copy is complete on return. */
sbm_status sbm__cuda_copy(sbm_ctx *ctx, void *dst, const void *src, size_t bytes, int kind)
{
    sbm_status st = SBM_SUCCESS;
    if (bytes == 0) return SBM_SUCCESS;
    /* the stream is the context's device's: make that device current (contexts on several
     * devices share a thread) */
    if (ctx->backend == SBM_BACKEND_CUDA) SBM__TRY(sbm__cuda_enter(ctx));
    cudaStream_t s = sbm__cuda_stream(ctx);
    SBM__CU(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s),
            kind == 0 ? "host-to-device copy" : kind == 1 ? "device-to-host copy"
                                                          : "device-to-device copy");
    /* the caller reads host memory next (kind 1), or may free the host source (kind 0: a
     * pageable source is staged before return, a pinned one is not) */
    if (kind != 2) SBM__CU(ctx, cudaStreamSynchronize(s), "stream synchronisation after a copy");
    sbm__stats_copy(ctx, kind, bytes);
done:
    return st;
}

sbm_status sbm__cuda_memset0(sbm_ctx *ctx, void *dst, size_t bytes)
{
    sbm_status st = SBM_SUCCESS;
    if (bytes == 0) return SBM_SUCCESS;
    SBM__TRY(sbm__cuda_enter(ctx));
    SBM__CU(ctx, cudaMemsetAsync(dst, 0, bytes, sbm__cuda_stream(ctx)), "cudaMemsetAsync");
done:
    return st;
}

sbm_status sbm__cuda_sync(sbm_ctx *ctx)
{
    sbm_status st = SBM_SUCCESS;
    SBM__CU(ctx, cudaStreamSynchronize(sbm__cuda_stream(ctx)), "stream synchronisation");
done:
    return st;
}

sbm_status sbm__cuda_synchronize(sbm_ctx *ctx) { return sbm__cuda_sync(ctx); }

sbm_status sbm__cuda_d2h(sbm_ctx *ctx, void *h_dst, const void *d_src, size_t bytes)
{
    return sbm__cuda_copy(ctx, h_dst, d_src, bytes, 1);
}

sbm_status sbm__cuda_h2d(sbm_ctx *ctx, void *d_dst, const void *h_src, size_t bytes)
{
    return sbm__cuda_copy(ctx, d_dst, h_src, bytes, 0);
}

sbm_status sbm__cuda_d2d(sbm_ctx *ctx, void *d_dst, const void *d_src, size_t bytes)
{
    return sbm__cuda_copy(ctx, d_dst, d_src, bytes, 2);
}

sbm_status sbm__cuda_zero(sbm_ctx *ctx, void *d_dst, size_t bytes)
{
    return sbm__cuda_memset0(ctx, d_dst, bytes);
}

sbm_status sbm__cuda_free_memory(sbm_ctx *ctx, size_t *free_bytes)
{
    sbm_status st = SBM_SUCCESS;
    size_t fr = 0, total = 0;
    SBM__CU(ctx, cudaMemGetInfo(&fr, &total), "cudaMemGetInfo");
    *free_bytes = fr;
done:
    return st;
}

sbm_status sbm__cuda_budget(sbm_ctx *ctx, size_t *budget)
{
    if (ctx->memory_budget > 0) {
        *budget = ctx->memory_budget;
        return SBM_SUCCESS;
    }
    /* Default: half of what is free now. Temporaries of one operation then leave room for its
     * outputs (which are not counted against the budget) and for other users of the device. */
    size_t fr = 0;
    SBM__TRY(sbm__cuda_free_memory(ctx, &fr));
    *budget = fr / 2;
    return SBM_SUCCESS;
}

static void sbm__cuda_buffer_release(sbm__cuda_buffer *b)
{
    if (b->ptr && b->allocator.free) b->allocator.free(b->allocator.user, b->ptr);
    b->ptr = NULL;
    b->bytes = 0;
}

sbm_status sbm__cuda_workspace(sbm_ctx *ctx, int slot, size_t bytes, void **ptr)
{
    sbm__cuda_state *S = sbm__cuda_st(ctx);
    sbm__cuda_buffer *b = &S->ws[slot];
    *ptr = NULL;
    if (bytes == 0) bytes = 256;
    /* a buffer made by an allocator the context no longer uses is replaced, so that every live
     * allocation goes through the current hook */
    int same_alloc = b->allocator.alloc == ctx->allocator.alloc &&
                     b->allocator.free == ctx->allocator.free &&
                     b->allocator.user == ctx->allocator.user;
    if (b->ptr && b->bytes >= bytes && same_alloc) {
        *ptr = b->ptr;
        return SBM_SUCCESS;
    }
    if (b->ptr) {
        SBM__TRY(sbm__cuda_sync(ctx)); /* queued work may still use the old buffer */
        sbm__cuda_buffer_release(b);
    }
    /* grow geometrically so that a sequence of slightly larger requests does not reallocate
     * every time */
    size_t want = bytes + bytes / 4;
    if (want < bytes) want = bytes;
    void *p = ctx->allocator.alloc(ctx->allocator.user, want);
    if (p) {
        sbm__stats_alloc(ctx, want);
    } else {
        want = bytes; /* sbm__alloc counts this one */
        p = sbm__alloc(ctx, want, "workspace");
        if (!p) return SBM_ERR_OUT_OF_MEMORY;
    }
    b->ptr = p;
    b->bytes = want;
    b->allocator = ctx->allocator;
    *ptr = p;
    return SBM_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Context                                                                                  */
/* ---------------------------------------------------------------------------------------- */

extern "C" int sbm__cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* no driver or no device: not an error of a later call */
        return 0;
    }
    return n;
}

sbm_status sbm__cuda_ctx_init(sbm_ctx *ctx, int device)
{
    sbm_status st = SBM_SUCCESS;
    sbm__cuda_state *S = NULL;
    int n = sbm__cuda_device_count();
    if (device < 0 || device >= n)
        return sbm__error(ctx, SBM_ERR_NO_DEVICE,
                          "argument device: CUDA device %d does not exist (%d device%s found)",
                          device, n, n == 1 ? "" : "s");
    SBM__CU(ctx, cudaSetDevice(device), "cudaSetDevice");
    S = (sbm__cuda_state *)calloc(1, sizeof *S);
    if (!S) {
        st = sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes for the CUDA state",
                        sizeof *S);
        goto done;
    }
    S->device = device;
    SBM__CU(ctx, cudaGetDeviceProperties(&S->prop, device), "cudaGetDeviceProperties");
    SBM__CK(sbm__cuda_graphs_init(ctx, S));
    /* create the primary context now, so that its start-up cost and failures surface here */
    SBM__CU(ctx, cudaFree(0), "CUDA context initialisation");
    ctx->backend_data = S;
    S = NULL;
done:
    free(S);
    return st;
}

void sbm__cuda_ctx_destroy(sbm_ctx *ctx)
{
    sbm__cuda_state *S = sbm__cuda_st(ctx);
    if (!S) return;
    int cur = -1;
    if (cudaGetDevice(&cur) == cudaSuccess && cur != ctx->device) cudaSetDevice(ctx->device);
    /* queued work may still use the pool */
    cudaStreamSynchronize(sbm__cuda_stream(ctx));
    for (int i = 0; i < SBM__WS_SLOTS; i++) sbm__cuda_buffer_release(&S->ws[i]);
    sbm__cuda_tcache_clear(ctx);
    sbm__cuda_scache_clear(ctx);
    sbm__cuda_chol_release(ctx);
    sbm__cuda_graphs_release(S);
    (void)cudaGetLastError();
    free(S);
    ctx->backend_data = NULL;
}

sbm_status sbm__cuda_set_stream(sbm_ctx *ctx, struct CUstream_st *stream)
{
    /* work queued on the old stream may still use the workspace pool, which work on the new
     * stream would then overwrite */
    (void)stream;
    SBM__TRY(sbm__cuda_enter(ctx));
    return sbm__cuda_sync(ctx);
}

/* ---------------------------------------------------------------------------------------- */
/* Table                                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* In the list's order (core_backend.h); a constant aggregate, no code runs at load time. */
static const sbm__backend_ops sbm__cuda_ops_table = {
    "CUDA", SBM__CORE_KERNELS(SBM__KERNEL_CUDA_INIT, SBM__KERNEL_CUDA_INIT)};

extern "C" const sbm__backend_ops *sbm__cuda_ops(void) { return &sbm__cuda_ops_table; }
