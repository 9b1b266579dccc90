/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory: the context allocator, copies between memory spaces, host arrays owned by objects, vectors in the context's memory and transfer counters (src/core/memory.c, host_util.c). */
#ifndef SBM_CORE_MEMORY_H
#define SBM_CORE_MEMORY_H

#include "core_errors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------- */
/* Memory (src/core/memory.c)                                                               */
/* ---------------------------------------------------------------------------------------- */

/* Allocate bytes in the context's memory space through its allocator; on failure records
 * SBM_ERR_OUT_OF_MEMORY naming what and the size and returns NULL. bytes == 0 allocates 1 byte
 * so that a valid pointer is returned. */
void *sbm__alloc(sbm_ctx *ctx, size_t bytes, const char *what);
void sbm__free(sbm_ctx *ctx, void *ptr);
/* Host memory in a CPU context goes through the context allocator; in other contexts through
 * malloc (host scratch of device backends). Same error behaviour as sbm__alloc. */
void *sbm__host_alloc(sbm_ctx *ctx, size_t bytes, const char *what);
void sbm__host_free(sbm_ctx *ctx, void *ptr);
/* n*size with overflow check; on overflow records SBM_ERR_OVERFLOW and returns 0 with *ok = 0. */
size_t sbm__mul_size(sbm_ctx *ctx, size_t n, size_t size, const char *what, int *ok);
/* Copy bytes from memory of src_backend (ops src_ops) into ctx's memory space. A device-to-host
 * copy is done by the source backend's copy with ctx (a CPU context): device backends must accept
 * that (kind 1, the default stream, synchronous). */
sbm_status sbm__copy_between(sbm_ctx *ctx, const struct sbm__backend_ops *src_ops,
                             sbm_backend src_backend, void *dst, const void *src, size_t bytes);
/* The default host allocator (malloc/free). */
extern const sbm_allocator sbm__malloc_allocator;


/* ---------------------------------------------------------------------------------------- */
/* Host arrays owned by objects, vectors and transfers (host_util.c)                        */
/* ---------------------------------------------------------------------------------------- */

/* The allocator for host arrays that outlive the call (objects remember it, like matrices do):
 * the context's hook on the CPU backend, malloc otherwise. */
sbm_allocator sbm__host_allocator_of(const sbm_ctx *ctx);
/* n*size bytes through allocator a, overflow checked; failures recorded in ctx. */
void *sbm__alloc_with(sbm_ctx *ctx, const sbm_allocator *a, size_t n, size_t size, const char *what);
void sbm__free_with(const sbm_allocator *a, void *ptr);
/* n doubles in the context's memory (freed with ctx->allocator, which the owner records). */
double *sbm__vec_alloc(sbm_ctx *ctx, int64_t n, const char *what);

/* bytes from host memory into the context's memory, through the context's table (the front
 * ends above the core never name a backend's table). */
sbm_status sbm__upload(sbm_ctx *ctx, void *dst, const void *h_src, size_t bytes);
/* Copies between host arrays and arrays in the context's memory (n doubles). */
sbm_status sbm__vec_upload(sbm_ctx *ctx, double *dst, const double *h_src, int64_t n);
sbm_status sbm__vec_download(sbm_ctx *ctx, double *h_dst, const double *src, int64_t n);
sbm_status sbm__vec_copy(sbm_ctx *ctx, double *dst, const double *src, int64_t n);

/* Vector operations on n doubles in the context's memory, through the backend's table. Sums
 * run in a fixed order on every backend (two runs agree bitwise); a scalar result is the only
 * thing that leaves the device. */
sbm_status sbm__vec_zero(sbm_ctx *ctx, double *x, int64_t n);
sbm_status sbm__vec_dot(sbm_ctx *ctx, int64_t n, const double *x, const double *y, double *h_dot);
/* sqrt(x.x) */
sbm_status sbm__vec_nrm2(sbm_ctx *ctx, int64_t n, const double *x, double *h_nrm);
/* *h_max = max |x[i]| (0 for n <= 0; NaN when an entry is NaN). */
sbm_status sbm__vec_amax(sbm_ctx *ctx, int64_t n, const double *x, double *h_max);
/* y += a x */
sbm_status sbm__vec_axpy(sbm_ctx *ctx, int64_t n, double a, const double *x, double *y);
/* y = x + a y */
sbm_status sbm__vec_xpay(sbm_ctx *ctx, int64_t n, const double *x, double a, double *y);
/* x *= a */
sbm_status sbm__vec_scale(sbm_ctx *ctx, int64_t n, double a, double *x);

/* Transfer and allocation counters of a context (struct sbm__stats). */
static inline void sbm__stats_reset(sbm_ctx *ctx) { memset(&ctx->stats, 0, sizeof ctx->stats); }
static inline sbm__stats sbm__stats_get(const sbm_ctx *ctx) { return ctx->stats; }
/* A copy of kind 0 (host -> device) or 1 (device -> host); kind 2 stays on the device. */
static inline void sbm__stats_copy(sbm_ctx *ctx, int kind, size_t bytes)
{
    if (!ctx || kind == 2) return;
    if (kind == 0) ctx->stats.h2d_copies++, ctx->stats.h2d_bytes += bytes;
    else ctx->stats.d2h_copies++, ctx->stats.d2h_bytes += bytes;
}
static inline void sbm__stats_alloc(sbm_ctx *ctx, size_t bytes)
{
    ctx->stats.allocs++;
    ctx->stats.alloc_bytes += bytes;
}

/* Monotonic wall clock in seconds; with sync, the context's queued work is waited for first. */
double sbm__now(sbm_ctx *ctx, int sync);

#ifdef __cplusplus
}
#endif

#endif /* SBM_CORE_MEMORY_H */
