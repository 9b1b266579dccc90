/* Host arrays owned by objects, vectors in the context's memory and their transfers, a clock,
 * and calls to public functions from inside the library. */
#define _POSIX_C_SOURCE 199309L

#include "sbm_internal.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------------------------------- */
/* Memory and transfers                                                                     */
/* ---------------------------------------------------------------------------------------- */

sbm_allocator sbm__host_allocator_of(const sbm_ctx *ctx)
{
    return ctx->backend == SBM_BACKEND_CPU ? ctx->allocator : sbm__malloc_allocator;
}

void *sbm__alloc_with(sbm_ctx *ctx, const sbm_allocator *a, size_t n, size_t size, const char *what)
{
    int ok;
    const size_t bytes = sbm__mul_size(ctx, n, size, what, &ok);
    if (!ok) return NULL;
    void *p = a->alloc(a->user, bytes ? bytes : 1);
    if (!p) sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes for %s", bytes, what);
    return p;
}

void sbm__free_with(const sbm_allocator *a, void *ptr)
{
    if (ptr) a->free(a->user, ptr);
}

double *sbm__vec_alloc(sbm_ctx *ctx, int64_t n, const char *what)
{
    int ok;
    const size_t bytes = sbm__mul_size(ctx, (size_t)(n > 0 ? n : 0), sizeof(double), what, &ok);
    if (!ok) return NULL;
    return sbm__alloc(ctx, bytes, what);
}

sbm_status sbm__vec_upload(sbm_ctx *ctx, double *dst, const double *h_src, int64_t n)
{
    if (n <= 0 || dst == h_src) return SBM_SUCCESS;
    return ctx->ops->copy(ctx, dst, h_src, (size_t)n * sizeof(double), 0);
}

sbm_status sbm__vec_download(sbm_ctx *ctx, double *h_dst, const double *src, int64_t n)
{
    if (n <= 0 || h_dst == src) return SBM_SUCCESS;
    return ctx->ops->copy(ctx, h_dst, src, (size_t)n * sizeof(double), 1);
}

sbm_status sbm__vec_copy(sbm_ctx *ctx, double *dst, const double *src, int64_t n)
{
    if (n <= 0 || dst == src) return SBM_SUCCESS;
    return ctx->ops->copy(ctx, dst, src, (size_t)n * sizeof(double), 2);
}

sbm_status sbm__nested(sbm_ctx *ctx, const char *outer, sbm_status st)
{
    if (st != SBM_SUCCESS && ctx->fn != outer) {
        char inner[SBM__MSG_SIZE];
        memcpy(inner, ctx->message, sizeof inner);
        inner[SBM__MSG_SIZE - 1] = '\0';
        snprintf(ctx->message, SBM__MSG_SIZE, "%s: %.*s", outer, SBM__MSG_SIZE - 64, inner);
        ctx->last_status = st;
    }
    ctx->fn = outer;
    return st;
}

double sbm__now(sbm_ctx *ctx, int sync)
{
    if (sync && ctx->ops->synchronize) ctx->ops->synchronize(ctx);
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

