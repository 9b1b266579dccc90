/* SPDX-License-Identifier: BSD-3-Clause */
/* Host arrays owned by objects, vectors in the context's memory and their transfers, a clock,
 * and vector operations dispatched to the backend. */
#define _POSIX_C_SOURCE 199309L

#include "sbm_internal.h"

#include <math.h>
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

sbm_status sbm__upload(sbm_ctx *ctx, void *dst, const void *h_src, size_t bytes)
{
    if (bytes == 0) return SBM_SUCCESS;
    return ctx->ops->copy(ctx, dst, h_src, bytes, 0);
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

sbm_status sbm__vec_zero(sbm_ctx *ctx, double *x, int64_t n)
{
    if (n <= 0) return SBM_SUCCESS;
    return ctx->ops->memset0(ctx, x, (size_t)n * sizeof(double));
}

sbm_status sbm__vec_dot(sbm_ctx *ctx, int64_t n, const double *x, const double *y, double *h_dot)
{
    *h_dot = 0.0;
    if (n <= 0) return SBM_SUCCESS;
    return ctx->ops->vec_dot(ctx, n, x, y, h_dot);
}

sbm_status sbm__vec_nrm2(sbm_ctx *ctx, int64_t n, const double *x, double *h_nrm)
{
    double d = 0.0;
    sbm_status st = sbm__vec_dot(ctx, n, x, x, &d);
    *h_nrm = sqrt(d);
    return st;
}

sbm_status sbm__vec_amax(sbm_ctx *ctx, int64_t n, const double *x, double *h_max)
{
    *h_max = 0.0;
    if (n <= 0) return SBM_SUCCESS;
    return ctx->ops->vec_amax(ctx, n, x, h_max);
}

sbm_status sbm__vec_axpy(sbm_ctx *ctx, int64_t n, double a, const double *x, double *y)
{
    if (n <= 0) return SBM_SUCCESS;
    return ctx->ops->vec_axpy(ctx, n, a, x, y);
}

sbm_status sbm__vec_xpay(sbm_ctx *ctx, int64_t n, const double *x, double a, double *y)
{
    if (n <= 0) return SBM_SUCCESS;
    return ctx->ops->vec_xpay(ctx, n, x, a, y);
}

sbm_status sbm__vec_scale(sbm_ctx *ctx, int64_t n, double a, double *x)
{
    if (n <= 0) return SBM_SUCCESS;
    return ctx->ops->vec_scale(ctx, n, a, x);
}

double sbm__now(sbm_ctx *ctx, int sync)
{
    if (sync && ctx->ops->synchronize) ctx->ops->synchronize(ctx);
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

