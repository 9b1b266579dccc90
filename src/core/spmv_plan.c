/* SPDX-License-Identifier: BSD-3-Clause */
/* CSR SpMV plans, front end: argument checks, messages and dispatch for sbm_csr_spmv_plan,
 * sbm_spmv_plan_update, sbm_spmv_plan_execute (kernels behind ctx->ops: kernels/cpu/csr_spmv/cpu_csr_spmv_plan.c,
 * kernels/cuda/csr_spmv/cuda_csr_spmv.cu), and the ELL / DIA padding rule every backend applies.
 *
 * Decisions recorded here:
 *   - A plan is allocated by the backend with an sbm__spmv_plan_base first; the front end fills
 *     its header (backend, device, ops, pattern id and fingerprint of A) and A's shape, so every
 *     backend's plans are checked the same way (as the SpGEMM plans in src/core/csr_ops.c).
 *   - Update accepts A with the plan's pattern id at no cost, otherwise compares the shape, the
 *     number of entries and the pattern fingerprint; afterwards the plan remembers A's id.
 *   - Execute checks x and y as sbm_csr_spmv does (NULL, overlap); y cannot overlap the plan's
 *     own storage, which the caller never sees. */
#include "sbm_internal.h"

#include <inttypes.h>

/* ---------------------------------------------------------------------------------------- */
/* Helpers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static const char *const sbm__format_names[] = {"auto", "csr-scalar", "csr-vector", "csr-merge",
                                                "coo",  "ell",        "hyb",        "dia"};

const char *sbm_spmv_format_name(sbm_spmv_format format)
{
    const int f = (int)format;
    return f >= 0 && f < (int)(sizeof sbm__format_names / sizeof sbm__format_names[0])
               ? sbm__format_names[f]
               : "unknown";
}

sbm_status sbm__spmv_check_fill(sbm_ctx *ctx, sbm_spmv_format format, int64_t m, int64_t nnz,
                                int64_t width)
{
    /* slots = m * width may not fit int64; compare through the quotient instead */
    const int64_t limit = SBM__SPMV_MAX_FILL * nnz + SBM__SPMV_FILL_SLACK;
    if (width <= 0 || m <= limit / width) return SBM_SUCCESS;
    const double slots = (double)m * (double)width;
    const int dia = format == SBM_SPMV_DIA;
    return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                      "argument format: %s would store %.0f slots (%" PRId64 " rows x %" PRId64
                      " %s) for %" PRId64 " entries, fill %.2f; the limit is %d x entries + %d "
                      "slots",
                      dia ? "DIA" : "ELL", slots, m, width,
                      dia ? "occupied diagonals" : "entries in the longest row", nnz,
                      nnz > 0 ? slots / (double)nnz : slots, SBM__SPMV_MAX_FILL,
                      SBM__SPMV_FILL_SLACK);
}

static sbm_status sbm__plan_unavailable(sbm_ctx *ctx)
{
    return sbm__error(ctx, SBM_ERR_NOT_SUPPORTED, "CSR SpMV plans are not available on the %s backend",
                      ctx->ops->name);
}

/* The plan was made by ctx's backend and device. */
static sbm_status sbm__check_plan_backend(sbm_ctx *ctx, const sbm__spmv_plan_base *b)
{
    if (b->h.backend != ctx->backend || b->h.device != ctx->device)
        return sbm__error(ctx, SBM_ERR_BACKEND_MISMATCH,
                          "argument plan: made on the %s backend (device %d), the context is %s "
                          "(device %d)",
                          b->h.ops ? b->h.ops->name : "?", b->h.device, ctx->ops->name,
                          ctx->device);
    return SBM_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Plan, update, execute                                                                    */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm_csr_spmv_plan(sbm_ctx *ctx, const sbm_csr *A, sbm_spmv_format format,
                             sbm_spmv_plan **plan)
{
    SBM__ENTER(ctx, "sbm_csr_spmv_plan");
    if (plan) *plan = NULL;
    if (!plan) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument plan is NULL");
    SBM__TRY(sbm__check_csr_arg(ctx, "A", A));
    if ((int)format < (int)SBM_SPMV_AUTO || (int)format > (int)SBM_SPMV_DIA)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument format: %d is not an sbm_spmv_format (SBM_SPMV_AUTO = 0 .. "
                          "SBM_SPMV_DIA = 7)",
                          (int)format);
    if (!ctx->ops->csr_spmv_plan || !ctx->ops->csr_spmv_plan_update ||
        !ctx->ops->csr_spmv_plan_execute || !ctx->ops->spmv_plan_destroy)
        return sbm__plan_unavailable(ctx);
    uint64_t hash = 0;
    if (ctx->ops->csr_pattern_hash) SBM__TRY(ctx->ops->csr_pattern_hash(ctx, A, &hash));
    sbm_spmv_plan *p = NULL;
    SBM__TRY(ctx->ops->csr_spmv_plan(ctx, A, format, &p));
    sbm__spmv_plan_base *b = (sbm__spmv_plan_base *)p;
    b->h.backend = ctx->backend;
    b->h.device = ctx->device;
    b->h.ops = ctx->ops;
    b->h.pattern_a = A->pattern_id;
    b->h.hash_a = hash;
    b->m = A->m;
    b->n = A->n;
    b->nnz = A->nnz;
    *plan = p;
    return SBM_SUCCESS;
}

sbm_status sbm_spmv_plan_update(sbm_ctx *ctx, sbm_spmv_plan *plan, const sbm_csr *A)
{
    SBM__ENTER(ctx, "sbm_spmv_plan_update");
    if (!plan) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument plan is NULL");
    SBM__TRY(sbm__check_csr_arg(ctx, "A", A));
    sbm__spmv_plan_base *b = (sbm__spmv_plan_base *)plan;
    SBM__TRY(sbm__check_plan_backend(ctx, b));
    if (A->m != b->m || A->n != b->n || A->nnz != b->nnz)
        return sbm__error(ctx, SBM_ERR_PLAN_MISMATCH,
                          "argument A is %" PRId64 "x%" PRId64 " with %" PRId64
                          " entries, the plan was made for %" PRId64 "x%" PRId64 " with %" PRId64
                          " entries",
                          A->m, A->n, A->nnz, b->m, b->n, b->nnz);
    if (A->pattern_id != b->h.pattern_a) {
        uint64_t hash = 0;
        if (ctx->ops->csr_pattern_hash) SBM__TRY(ctx->ops->csr_pattern_hash(ctx, A, &hash));
        if (!ctx->ops->csr_pattern_hash || hash != b->h.hash_a)
            return sbm__error(ctx, SBM_ERR_PLAN_MISMATCH,
                              "argument A: its sparsity pattern (%" PRId64 "x%" PRId64 ", %" PRId64
                              " entries, fingerprint %016" PRIx64 ") is not the one the plan was "
                              "made with (fingerprint %016" PRIx64 ")",
                              A->m, A->n, A->nnz, hash, b->h.hash_a);
    }
    SBM__TRY(ctx->ops->csr_spmv_plan_update(ctx, plan, A));
    b->h.pattern_a = A->pattern_id;
    return SBM_SUCCESS;
}

sbm_status sbm_spmv_plan_execute(sbm_ctx *ctx, const sbm_spmv_plan *plan, double alpha,
                                 const double *x, double beta, double *y)
{
    SBM__ENTER(ctx, "sbm_spmv_plan_execute");
    if (!plan) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument plan is NULL");
    const sbm__spmv_plan_base *b = (const sbm__spmv_plan_base *)plan;
    SBM__TRY(sbm__check_plan_backend(ctx, b));
    if (!x && b->n > 0)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT,
                          "argument x is NULL (the plan's A is %" PRId64 "x%" PRId64
                          ", x needs %" PRId64 " elements)",
                          b->m, b->n, b->n);
    if (!y && b->m > 0)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT,
                          "argument y is NULL (the plan's A is %" PRId64 "x%" PRId64
                          ", y needs %" PRId64 " elements)",
                          b->m, b->n, b->m);
    if (sbm__ranges_overlap(x, sbm__dbytes(b->n), y, sbm__dbytes(b->m)))
        return sbm__error(ctx, SBM_ERR_ALIASING,
                          "arguments x (%" PRId64 " elements at %p) and y (%" PRId64
                          " elements at %p) overlap",
                          b->n, (const void *)x, b->m, (void *)y);
    if (b->m == 0) return SBM_SUCCESS;
    return ctx->ops->csr_spmv_plan_execute(ctx, plan, alpha, x, beta, y);
}

sbm_spmv_format sbm_spmv_plan_format(const sbm_spmv_plan *plan)
{
    return plan ? ((const sbm__spmv_plan_base *)plan)->format : SBM_SPMV_AUTO;
}

void sbm_spmv_plan_destroy(sbm_spmv_plan *plan)
{
    if (!plan) return;
    const sbm__spmv_plan_base *b = (const sbm__spmv_plan_base *)plan;
    if (b->h.ops && b->h.ops->spmv_plan_destroy) b->h.ops->spmv_plan_destroy(plan);
}
