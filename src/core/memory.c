/* SPDX-License-Identifier: BSD-3-Clause */
/* Allocation through the context's allocator hook, with sizes checked and failures reported. */
#include "sbm_internal.h"

#include <stdlib.h>

static void *sbm__malloc_hook(void *user, size_t bytes)
{
    (void)user;
    return malloc(bytes);
}

static void sbm__free_hook(void *user, void *ptr)
{
    (void)user;
    free(ptr);
}

const sbm_allocator sbm__malloc_allocator = {sbm__malloc_hook, sbm__free_hook, NULL};

void *sbm__alloc(sbm_ctx *ctx, size_t bytes, const char *what)
{
    /* the allocator (cudaMalloc by default) allocates on the current device: the context's,
     * whatever another context on another device made current before */
    if (ctx->ops->enter && ctx->ops->enter(ctx) != SBM_SUCCESS) return NULL;
    void *p = ctx->allocator.alloc(ctx->allocator.user, bytes ? bytes : 1);
    if (p) sbm__stats_alloc(ctx, bytes);
    if (!p)
        sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes for %s on the %s backend",
                   bytes, what, ctx->ops->name);
    return p;
}

void sbm__free(sbm_ctx *ctx, void *ptr)
{
    if (!ptr) return;
    if (ctx->ops->enter) (void)ctx->ops->enter(ctx);
    ctx->allocator.free(ctx->allocator.user, ptr);
}

void *sbm__host_alloc(sbm_ctx *ctx, size_t bytes, const char *what)
{
    if (ctx->backend == SBM_BACKEND_CPU) return sbm__alloc(ctx, bytes, what);
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory for %s",
                   bytes, what);
    return p;
}

void sbm__host_free(sbm_ctx *ctx, void *ptr)
{
    if (ctx->backend == SBM_BACKEND_CPU)
        sbm__free(ctx, ptr);
    else
        free(ptr);
}

size_t sbm__mul_size(sbm_ctx *ctx, size_t n, size_t size, const char *what, int *ok)
{
    if (size != 0 && n > SIZE_MAX / size) {
        sbm__error(ctx, SBM_ERR_OVERFLOW, "size of %s (%zu x %zu bytes) overflows size_t", what, n,
                   size);
        *ok = 0;
        return 0;
    }
    *ok = 1;
    return n * size;
}

sbm_status sbm__copy_between(sbm_ctx *ctx, const sbm__backend_ops *src_ops, sbm_backend src_backend,
                             void *dst, const void *src, size_t bytes)
{
    /* the side that is not the host does the copy */
    if (bytes == 0) return SBM_SUCCESS;
    if (src_backend == SBM_BACKEND_CPU) return ctx->ops->copy(ctx, dst, src, bytes, 0);
    if (ctx->backend == SBM_BACKEND_CPU) return src_ops->copy(ctx, dst, src, bytes, 1);
    return ctx->ops->copy(ctx, dst, src, bytes, 2);
}
