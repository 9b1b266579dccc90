/* SPDX-License-Identifier: BSD-3-Clause */
/* Dense arrays in a context's memory space: the x, y, B and C operands of SpMV and SpMM for
 * programs that do not include CUDA headers (the CLI, language bindings). */
#include "sbm_internal.h"

#include <inttypes.h>

/* Bytes of count doubles; records the error naming the call's argument. */
static sbm_status sbm__array_bytes(sbm_ctx *ctx, int64_t count, size_t *bytes)
{
    if (count < 0)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "argument count is negative (%" PRId64 ")",
                          count);
    if ((uint64_t)count > SIZE_MAX / sizeof(double))
        return sbm__error(ctx, SBM_ERR_OVERFLOW,
                          "argument count: %" PRId64 " doubles do not fit in size_t bytes", count);
    *bytes = (size_t)count * sizeof(double);
    return SBM_SUCCESS;
}

sbm_status sbm_array_create(sbm_ctx *ctx, int64_t count, double **array)
{
    SBM__ENTER(ctx, "sbm_array_create");
    if (!array) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument array is NULL");
    *array = NULL;
    size_t bytes = 0;
    SBM__TRY(sbm__array_bytes(ctx, count, &bytes));
    double *p = sbm__alloc(ctx, bytes, "a dense array");
    if (!p) return SBM_ERR_OUT_OF_MEMORY;
    *array = p;
    return SBM_SUCCESS;
}

void sbm_array_destroy(sbm_ctx *ctx, double *array)
{
    if (ctx && array) sbm__free(ctx, array);
}

/* The shared part of upload and download: checks, then one copy (kind 0: to the context's
 * memory, 1: to the host). */
static sbm_status sbm__array_copy(sbm_ctx *ctx, void *dst, const char *dst_name, const void *src,
                                  const char *src_name, int64_t count, int kind)
{
    size_t bytes = 0;
    SBM__TRY(sbm__array_bytes(ctx, count, &bytes));
    if (bytes == 0) return SBM_SUCCESS;
    if (!dst) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument %s is NULL", dst_name);
    if (!src) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument %s is NULL", src_name);
    return ctx->ops->copy(ctx, dst, src, bytes, kind);
}

sbm_status sbm_array_upload(sbm_ctx *ctx, double *array, const double *h_src, int64_t count)
{
    SBM__ENTER(ctx, "sbm_array_upload");
    return sbm__array_copy(ctx, array, "array", h_src, "h_src", count, 0);
}

sbm_status sbm_array_download(sbm_ctx *ctx, double *h_dst, const double *array, int64_t count)
{
    SBM__ENTER(ctx, "sbm_array_download");
    return sbm__array_copy(ctx, h_dst, "h_dst", array, "array", count, 1);
}
