/* SPDX-License-Identifier: BSD-3-Clause */
/* Contexts: backend selection, stream, memory budget, allocator hook. */
#include "sbm_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SBM_HAVE_CUDA
const sbm__backend_ops *sbm__cuda_ops(void) { return NULL; }
int sbm__cuda_device_count(void) { return 0; }
int64_t sbm__cuda_graphs_live(void) { return 0; }
#endif

int sbm_has_cuda(void) { return sbm__cuda_ops() != NULL; }

int sbm_cuda_device_count(void) { return sbm__cuda_device_count(); }

/* The default of sbm_tuning.num_threads, read once per context: SBM_NUM_THREADS (a number; what
 * strtol makes of it, clamped), else the online cores, 1 to SBM__MAX_THREADS. */
static int sbm__default_threads(void)
{
    const char *env = getenv("SBM_NUM_THREADS");
    long t = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    if (t < 1) t = 1;
    if (t > SBM__MAX_THREADS) t = SBM__MAX_THREADS;
    return (int)t;
}

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
    c->default_threads = sbm__default_threads();
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

/* ---------------------------------------------------------------------------------------- */
/* Tuning                                                                                   */
/* ---------------------------------------------------------------------------------------- */

sbm_tuning sbm_tuning_default(void)
{
    sbm_tuning t;
    memset(&t, 0, sizeof t);
    return t;
}

/* An enum field holds 0..last. */
static sbm_status sbm__tuning_enum(sbm_ctx *ctx, const char *field, int v, const char *type, int last)
{
    if (v >= 0 && v <= last) return SBM_SUCCESS;
    return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "argument tuning: %s is %d, not an %s (0 to %d)",
                      field, v, type, last);
}

/* Two fields that only mean something together are both zero or both set. */
static sbm_status sbm__tuning_pair(sbm_ctx *ctx, const char *a, int va, const char *b, int vb)
{
    if ((va == 0) == (vb == 0)) return SBM_SUCCESS;
    return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                      "argument tuning: %s is %d but %s is %d: set both or neither", a, va, b, vb);
}

/* A configuration field is set only for the kernel it configures. */
static sbm_status sbm__tuning_scope(sbm_ctx *ctx, const char *field, int v, int kernel, int want,
                                    const char *want_name)
{
    if (v == 0 || kernel == want) return SBM_SUCCESS;
    return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                      "argument tuning: %s is %d but csr_spmv is %d, not %s (%d)", field, v, kernel,
                      want_name, want);
}

static sbm_status sbm__tuning_csr_spmv(sbm_ctx *ctx, const sbm_tuning *t)
{
    const int k = (int)t->csr_spmv, w = t->csr_spmv_vector_width, r = t->csr_spmv_vector_rows;
    const int nt = t->csr_spmv_merge_threads, ipt = t->csr_spmv_merge_items;
    const int cs = t->csr_spmv_merge_streaming, pf = t->csr_spmv_merge_prefetch;
    SBM__TRY(sbm__tuning_enum(ctx, "csr_spmv", k, "sbm_tune_csr_spmv", SBM_TUNE_CSR_SPMV_MERGE));
    if (w != 0 && w != 2 && w != 4 && w != 8 && w != 16 && w != 32)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument tuning: csr_spmv_vector_width is %d, not 2, 4, 8, 16 or 32", w);
    if (r != 0 && r != 1 && r != 2 && r != 4)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument tuning: csr_spmv_vector_rows is %d, not 1, 2 or 4", r);
    SBM__TRY(sbm__tuning_pair(ctx, "csr_spmv_vector_width", w, "csr_spmv_vector_rows", r));
    SBM__TRY(sbm__tuning_pair(ctx, "csr_spmv_merge_threads", nt, "csr_spmv_merge_items", ipt));
    if (nt == 0 && (cs != 0 || pf != 0))
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument tuning: csr_spmv_merge_streaming is %d and csr_spmv_merge_prefetch "
                          "%d without csr_spmv_merge_threads and csr_spmv_merge_items", cs, pf);
    if (nt != 0) {
        int known = 0;
#define SBM_X_(I, NT, IPT, CS, PF) known |= nt == (NT) && ipt == (IPT) && cs == (CS) && pf == (PF);
        SBM__CSR_MERGE_CONFIGS(SBM_X_)
#undef SBM_X_
        if (!known)
            return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                              "argument tuning: csr_spmv_merge_threads, _items, _streaming, _prefetch "
                              "are %d, %d, %d, %d: not a compiled merge configuration (sbm.h lists them)",
                              nt, ipt, cs, pf);
    }
    SBM__TRY(sbm__tuning_scope(ctx, "csr_spmv_vector_width", w, k, SBM_TUNE_CSR_SPMV_VECTOR,
                               "SBM_TUNE_CSR_SPMV_VECTOR"));
    return sbm__tuning_scope(ctx, "csr_spmv_merge_threads", nt, k, SBM_TUNE_CSR_SPMV_MERGE,
                             "SBM_TUNE_CSR_SPMV_MERGE");
}

static sbm_status sbm__tuning_gemm(sbm_ctx *ctx, const sbm_tuning *t)
{
    const int nb = t->gemm_tile_blocks, ec = t->gemm_tile_entries, grid = t->gemm_tile_grid;
    SBM__TRY(sbm__tuning_enum(ctx, "gemm_numeric", (int)t->gemm_numeric, "sbm_tune_gemm_numeric",
                              SBM_TUNE_GEMM_SDMMA_ONE_TILE));
    SBM__TRY(sbm__tuning_enum(ctx, "gemm_sort", (int)t->gemm_sort, "sbm_tune_gemm_sort",
                              SBM_TUNE_GEMM_SORT_RADIX));
    if (nb < 0)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "argument tuning: gemm_tile_blocks is %d, negative",
                          nb);
    if (ec < 0 || ec > 4096)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument tuning: gemm_tile_entries is %d, not 0 or 1 to 4096", ec);
    if (grid < 0)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "argument tuning: gemm_tile_grid is %d, negative",
                          grid);
    return sbm__tuning_pair(ctx, "gemm_tile_blocks", nb, "gemm_tile_entries", ec);
}

sbm_status sbm_ctx_set_tuning(sbm_ctx *ctx, const sbm_tuning *tuning)
{
    SBM__ENTER(ctx, "sbm_ctx_set_tuning");
    if (!tuning) {
        ctx->tuning = sbm_tuning_default();
        return SBM_SUCCESS;
    }
    SBM__TRY(sbm__tuning_enum(ctx, "spmv", (int)tuning->spmv, "sbm_tune_spmv", SBM_TUNE_SPMV_BATCHED_SMALL));
    SBM__TRY(sbm__tuning_csr_spmv(ctx, tuning));
    SBM__TRY(sbm__tuning_enum(ctx, "csr_spmm", (int)tuning->csr_spmm, "sbm_tune_csr_spmm",
                              SBM_TUNE_CSR_SPMM_MERGE));
    SBM__TRY(sbm__tuning_enum(ctx, "csr_gemm", (int)tuning->csr_gemm, "sbm_tune_csr_gemm",
                              SBM_TUNE_CSR_GEMM_GLOBAL));
    SBM__TRY(sbm__tuning_gemm(ctx, tuning));
    if (tuning->chol_dense_front < 0)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument tuning: chol_dense_front is %d, negative", tuning->chol_dense_front);
    if (tuning->num_threads < 0 || tuning->num_threads > SBM__MAX_THREADS)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument tuning: num_threads is %d, not 0 or 1 to %d",
                          tuning->num_threads, SBM__MAX_THREADS);
    SBM__TRY(sbm__tuning_enum(ctx, "cuda_graphs", (int)tuning->cuda_graphs, "sbm_tune_cuda_graphs",
                              SBM_TUNE_CUDA_GRAPHS_CUT));
    ctx->tuning = *tuning;
    return SBM_SUCCESS;
}

sbm_status sbm_ctx_get_tuning(sbm_ctx *ctx, sbm_tuning *tuning)
{
    SBM__ENTER(ctx, "sbm_ctx_get_tuning");
    if (!tuning) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument tuning is NULL");
    *tuning = ctx->tuning;
    return SBM_SUCCESS;
}
