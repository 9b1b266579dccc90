/* Contexts: backend selection, stream, memory budget, allocator hook. */
#include "sbm_internal.h"

#include <stdlib.h>
#include <string.h>

#ifndef SBM_HAVE_CUDA
const sbm__backend_ops *sbm__cuda_ops(void) { return NULL; }
int sbm__cuda_device_count(void) { return 0; }
#endif

int sbm_has_cuda(void) { return sbm__cuda_ops() != NULL; }

int sbm_cuda_device_count(void) { return sbm__cuda_device_count(); }

sbm_status sbm_ctx_create(sbm_ctx **ctx, sbm_backend backend, int device)
{
    if (!ctx) return sbm__null_ctx_error("sbm_ctx_create");
    *ctx = NULL;
    const sbm__backend_ops *ops = NULL;
    if (backend == SBM_BACKEND_CPU) {
        ops = &sbm__cpu_ops;
    } else if (backend == SBM_BACKEND_CUDA) {
        ops = sbm__cuda_ops();
        if (!ops)
            return sbm__error(NULL, SBM_ERR_NOT_SUPPORTED,
                              "argument backend: this build of sbm has no CUDA backend "
                              "(configure with nvcc available)");
    } else {
        return sbm__error(NULL, SBM_ERR_INVALID_ARGUMENT,
                          "argument backend: %d is neither SBM_BACKEND_CPU (0) nor SBM_BACKEND_CUDA (1)",
                          (int)backend);
    }
    if (device < 0)
        return sbm__error(NULL, SBM_ERR_INVALID_ARGUMENT, "argument device: %d is negative", device);
    sbm_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return sbm__error(NULL, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes for the context",
                          sizeof *c);
    c->backend = backend;
    c->device = backend == SBM_BACKEND_CPU ? 0 : device;
    c->ops = ops;
    c->fn = "sbm_ctx_create";
    c->allocator.alloc = ops->default_alloc;
    c->allocator.free = ops->default_free;
    if (ops->ctx_init) {
        sbm_status st = ops->ctx_init(c, device);
        if (st != SBM_SUCCESS) {
            /* move the message to the per-thread buffer: the context is going away */
            sbm__error(NULL, st, "%s", c->message + strlen("sbm_ctx_create: "));
            free(c);
            return st;
        }
    }
    *ctx = c;
    return SBM_SUCCESS;
}

void sbm_ctx_destroy(sbm_ctx *ctx)
{
    if (!ctx) return;
    if (ctx->ops->ctx_destroy) ctx->ops->ctx_destroy(ctx);
    free(ctx);
}

sbm_backend sbm_ctx_backend(const sbm_ctx *ctx) { return ctx ? ctx->backend : SBM_BACKEND_CPU; }

sbm_status sbm_ctx_set_stream(sbm_ctx *ctx, struct CUstream_st *stream)
{
    SBM__ENTER(ctx, "sbm_ctx_set_stream");
    if (ctx->ops->set_stream) SBM__TRY(ctx->ops->set_stream(ctx, stream));
    ctx->stream = stream;
    return SBM_SUCCESS;
}

struct CUstream_st *sbm_ctx_stream(const sbm_ctx *ctx) { return ctx ? ctx->stream : NULL; }

sbm_status sbm_ctx_set_memory_budget(sbm_ctx *ctx, size_t bytes)
{
    SBM__ENTER(ctx, "sbm_ctx_set_memory_budget");
    ctx->memory_budget = bytes;
    return SBM_SUCCESS;
}

size_t sbm_ctx_memory_budget(const sbm_ctx *ctx) { return ctx ? ctx->memory_budget : 0; }

sbm_status sbm_ctx_set_allocator(sbm_ctx *ctx, const sbm_allocator *allocator)
{
    SBM__ENTER(ctx, "sbm_ctx_set_allocator");
    if (!allocator) {
        ctx->allocator.alloc = ctx->ops->default_alloc;
        ctx->allocator.free = ctx->ops->default_free;
        ctx->allocator.user = NULL;
        ctx->custom_allocator = 0;
        return SBM_SUCCESS;
    }
    if (!allocator->alloc || !allocator->free)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT,
                          "argument allocator: alloc (%p) and free (%p) must both be set",
                          (void *)(uintptr_t)allocator->alloc, (void *)(uintptr_t)allocator->free);
    ctx->allocator = *allocator;
    ctx->custom_allocator = 1;
    return SBM_SUCCESS;
}

sbm_status sbm_ctx_synchronize(sbm_ctx *ctx)
{
    SBM__ENTER(ctx, "sbm_ctx_synchronize");
    return ctx->ops->synchronize ? ctx->ops->synchronize(ctx) : SBM_SUCCESS;
}
