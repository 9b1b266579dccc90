/* SPDX-License-Identifier: BSD-3-Clause */
/* Scalar CSR operations, front end: argument checks, messages and dispatch for SpMV, SpMM and
 * SpGEMM (plan / execute). The kernels live behind ctx->ops (kernels/cpu/csr_{spmv,spmm,gemm}/, kernels/cuda/).
 *
 * Decisions recorded here:
 *   - A dense array of zero length (x or y of a matrix with no columns / rows, B or C with no
 *     columns) may be NULL; every other array argument must not be.
 *   - Aliasing is judged on the address ranges the arrays span (with their leading dimensions),
 *     so two interleaved arrays in one buffer count as overlapping.
 *   - beta == 0 ignores the old contents of y / C (NaN included), as in BLAS.
 *   - The SpGEMM plan is allocated by the backend with an sbm__plan_header first; the front end
 *     fills that header (backend, ops, pattern ids, fingerprints), so every backend's plans are
 *     checked the same way. */
#include "sbm_internal.h"

#include <inttypes.h>

/* ---------------------------------------------------------------------------------------- */
/* Helpers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static sbm_status sbm__not_available(sbm_ctx *ctx, const char *what)
{
    return sbm__error(ctx, SBM_ERR_NOT_SUPPORTED, "%s is not available on the %s backend", what,
                      ctx->ops->name);
}

/* Elements a dense rows x cols array in layout with leading dimension ld spans:
 * (rows-1)*ld + cols (row-major) or (cols-1)*ld + rows (column-major); 0 if it is empty.
 * Records SBM_ERR_OVERFLOW (naming arg) when that does not fit int64. */
static sbm_status sbm__dense_extent(sbm_ctx *ctx, const char *arg, int64_t rows, int64_t cols,
                                    sbm_layout layout, int64_t ld, int64_t *extent)
{
    *extent = 0;
    if (rows == 0 || cols == 0) return SBM_SUCCESS;
    const int64_t outer = layout == SBM_LAYOUT_ROW_MAJOR ? rows : cols;
    const int64_t inner = layout == SBM_LAYOUT_ROW_MAJOR ? cols : rows;
    /* ld >= inner >= 1 is checked before, so ld > 0 */
    if (outer - 1 > (INT64_MAX - inner) / ld)
        return sbm__error(ctx, SBM_ERR_OVERFLOW,
                          "argument %s: %" PRId64 "x%" PRId64 " with leading dimension %" PRId64
                          " spans more than 2^63 elements",
                          arg, rows, cols, ld);
    *extent = (outer - 1) * ld + inner;
    return SBM_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* SpMV: y = alpha*A*x + beta*y                                                             */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm_csr_spmv(sbm_ctx *ctx, double alpha, const sbm_csr *A, const double *x, double beta,
                        double *y)
{
    SBM__ENTER(ctx, "sbm_csr_spmv");
    SBM__TRY(sbm__check_csr_arg(ctx, "A", A));
    if (!x && A->n > 0)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT,
                          "argument x is NULL (A is %" PRId64 "x%" PRId64 ", x needs %" PRId64
                          " elements)",
                          A->m, A->n, A->n);
    if (!y && A->m > 0)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT,
                          "argument y is NULL (A is %" PRId64 "x%" PRId64 ", y needs %" PRId64
                          " elements)",
                          A->m, A->n, A->m);
    if (sbm__ranges_overlap(x, sbm__dbytes(A->n), y, sbm__dbytes(A->m)))
        return sbm__error(ctx, SBM_ERR_ALIASING,
                          "arguments x (%" PRId64 " elements at %p) and y (%" PRId64
                          " elements at %p) overlap",
                          A->n, (const void *)x, A->m, (void *)y);
    if (sbm__ranges_overlap(A->values, sbm__dbytes(A->nnz), y, sbm__dbytes(A->m)))
        return sbm__error(ctx, SBM_ERR_ALIASING, "argument y overlaps the values of A");
    if (!ctx->ops->csr_spmv) return sbm__not_available(ctx, "CSR SpMV");
    if (A->m == 0) return SBM_SUCCESS;
    return ctx->ops->csr_spmv(ctx, alpha, A, x, beta, y);
}

/* ---------------------------------------------------------------------------------------- */
/* SpMM: C = alpha*A*B + beta*C, B and C dense                                              */
/* ---------------------------------------------------------------------------------------- */

/* Leading dimension of a rows x cols array in layout: at least cols (row-major) or rows
 * (column-major). */
static sbm_status sbm__check_ld(sbm_ctx *ctx, const char *arg, const char *ldname, int64_t rows,
                                int64_t cols, sbm_layout layout, int64_t ld)
{
    if (layout == SBM_LAYOUT_ROW_MAJOR && ld < cols)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument %s: %" PRId64 " is less than ncols = %" PRId64
                          " (%s is row-major %" PRId64 "x%" PRId64 ")",
                          ldname, ld, cols, arg, rows, cols);
    if (layout == SBM_LAYOUT_COL_MAJOR && ld < rows)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument %s: %" PRId64 " is less than the %" PRId64 " rows of %s (%s is "
                          "column-major %" PRId64 "x%" PRId64 ")",
                          ldname, ld, rows, arg, arg, rows, cols);
    return SBM_SUCCESS;
}

sbm_status sbm_csr_spmm(sbm_ctx *ctx, double alpha, const sbm_csr *A, int64_t ncols,
                        sbm_layout layout, const double *B, int64_t ldb, double beta, double *C,
                        int64_t ldc)
{
    SBM__ENTER(ctx, "sbm_csr_spmm");
    SBM__TRY(sbm__check_csr_arg(ctx, "A", A));
    if (ncols < 0)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "argument ncols: %" PRId64 " is negative",
                          ncols);
    if (layout != SBM_LAYOUT_ROW_MAJOR && layout != SBM_LAYOUT_COL_MAJOR)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument layout: %d is neither SBM_LAYOUT_ROW_MAJOR (0) nor "
                          "SBM_LAYOUT_COL_MAJOR (1)",
                          (int)layout);
    if (!B && A->n > 0 && ncols > 0)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT,
                          "argument B is NULL (B is %" PRId64 "x%" PRId64 ")", A->n, ncols);
    if (!C && A->m > 0 && ncols > 0)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT,
                          "argument C is NULL (C is %" PRId64 "x%" PRId64 ")", A->m, ncols);
    SBM__TRY(sbm__check_ld(ctx, "B", "ldb", A->n, ncols, layout, ldb));
    SBM__TRY(sbm__check_ld(ctx, "C", "ldc", A->m, ncols, layout, ldc));
    int64_t ext_b, ext_c;
    SBM__TRY(sbm__dense_extent(ctx, "B", A->n, ncols, layout, ldb, &ext_b));
    SBM__TRY(sbm__dense_extent(ctx, "C", A->m, ncols, layout, ldc, &ext_c));
    if (sbm__ranges_overlap(B, sbm__dbytes(ext_b), C, sbm__dbytes(ext_c)))
        return sbm__error(ctx, SBM_ERR_ALIASING,
                          "arguments B (%" PRId64 " elements at %p) and C (%" PRId64
                          " elements at %p) overlap",
                          ext_b, (const void *)B, ext_c, (void *)C);
    if (sbm__ranges_overlap(A->values, sbm__dbytes(A->nnz), C, sbm__dbytes(ext_c)))
        return sbm__error(ctx, SBM_ERR_ALIASING, "argument C overlaps the values of A");
    if (!ctx->ops->csr_spmm) return sbm__not_available(ctx, "CSR SpMM");
    if (A->m == 0 || ncols == 0) return SBM_SUCCESS;
    return ctx->ops->csr_spmm(ctx, alpha, A, ncols, layout, B, ldb, beta, C, ldc);
}

/* ---------------------------------------------------------------------------------------- */
/* SpGEMM: C = A*B with a reusable plan                                                     */
/* ---------------------------------------------------------------------------------------- */

static sbm_status sbm__check_gemm_dims(sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B)
{
    if (A->n != B->m)
        return sbm__error(ctx, SBM_ERR_DIMENSION_MISMATCH,
                          "arguments A and B: A is %" PRId64 "x%" PRId64 ", B is %" PRId64
                          "x%" PRId64 " (A's %" PRId64 " columns must equal B's %" PRId64 " rows)",
                          A->m, A->n, B->m, B->n, A->n, B->m);
    return SBM_SUCCESS;
}

/* Fingerprint of A's pattern through the backend; 0 when the backend has none (then only the
 * pattern id identifies a pattern). */
static sbm_status sbm__csr_fingerprint(sbm_ctx *ctx, const sbm_csr *A, uint64_t *hash)
{
    *hash = 0;
    return ctx->ops->csr_pattern_hash ? ctx->ops->csr_pattern_hash(ctx, A, hash) : SBM_SUCCESS;
}

/* The checks and dispatch of sbm_csr_gemm_plan, without naming the call (sbm_csr_gemm reuses
 * them under its own name). */
static sbm_status sbm__csr_gemm_plan(sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B,
                                     sbm_csr_plan **plan, sbm_csr **C)
{
    SBM__TRY(sbm__check_csr_arg(ctx, "A", A));
    SBM__TRY(sbm__check_csr_arg(ctx, "B", B));
    SBM__TRY(sbm__check_gemm_dims(ctx, A, B));
    if (!ctx->ops->csr_gemm_plan || !ctx->ops->csr_gemm_execute ||
        !ctx->ops->csr_gemm_plan_destroy)
        return sbm__not_available(ctx, "CSR SpGEMM");

    /* fingerprints first: nothing to undo if they fail */
    uint64_t hash_a, hash_b;
    SBM__TRY(sbm__csr_fingerprint(ctx, A, &hash_a));
    if (B == A)
        hash_b = hash_a; /* A*A: hash once */
    else
        SBM__TRY(sbm__csr_fingerprint(ctx, B, &hash_b));

    sbm_csr_plan *p = NULL;
    sbm_csr *c = NULL;
    SBM__TRY(ctx->ops->csr_gemm_plan(ctx, A, B, &p, &c));
    sbm__plan_header *h = (sbm__plan_header *)p;
    h->backend = ctx->backend;
    h->device = ctx->device;
    h->ops = ctx->ops;
    h->pattern_a = A->pattern_id;
    h->pattern_b = B->pattern_id;
    h->pattern_u = 0;
    h->pattern_c = c->pattern_id;
    h->hash_a = hash_a;
    h->hash_b = hash_b;
    h->hash_u = 0;
    *plan = p;
    *C = c;
    return SBM_SUCCESS;
}

sbm_status sbm_csr_gemm_plan(sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B,
                             sbm_csr_plan **plan, sbm_csr **C)
{
    SBM__ENTER(ctx, "sbm_csr_gemm_plan");
    if (plan) *plan = NULL;
    if (C) *C = NULL;
    if (!plan) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument plan is NULL");
    if (!C) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument C is NULL");
    return sbm__csr_gemm_plan(ctx, A, B, plan, C);
}

/* arg's pattern must be the one the plan recorded: the same pattern id, or else the same
 * fingerprint (a new matrix with an equal pattern, e.g. rebuilt from new values). */
static sbm_status sbm__check_plan_operand(sbm_ctx *ctx, const char *arg, const sbm_csr *X,
                                          uint64_t pattern_id, uint64_t hash)
{
    if (X->pattern_id == pattern_id) return SBM_SUCCESS;
    uint64_t h = 0;
    if (ctx->ops->csr_pattern_hash) {
        SBM__TRY(ctx->ops->csr_pattern_hash(ctx, X, &h));
        if (h == hash) return SBM_SUCCESS;
    }
    return sbm__error(ctx, SBM_ERR_PLAN_MISMATCH,
                      "argument %s: its sparsity pattern (%" PRId64 "x%" PRId64 ", %" PRId64
                      " entries, fingerprint %016" PRIx64 ") is not the one the plan was made "
                      "with (fingerprint %016" PRIx64 ")",
                      arg, X->m, X->n, X->nnz, h, hash);
}

static sbm_status sbm__csr_gemm_execute(sbm_ctx *ctx, const sbm_csr_plan *plan,
                                        const sbm_csr *A, const sbm_csr *B, sbm_csr *C)
{
    if (!plan) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument plan is NULL");
    SBM__TRY(sbm__check_csr_arg(ctx, "A", A));
    SBM__TRY(sbm__check_csr_arg(ctx, "B", B));
    SBM__TRY(sbm__check_csr_arg(ctx, "C", C));
    const sbm__plan_header *h = (const sbm__plan_header *)plan;
    if (h->backend != ctx->backend || h->device != ctx->device)
        return sbm__error(ctx, SBM_ERR_BACKEND_MISMATCH,
                          "argument plan: made on the %s backend (device %d), the context is %s "
                          "(device %d)",
                          h->ops ? h->ops->name : "?", h->device, ctx->ops->name, ctx->device);
    SBM__TRY(sbm__check_gemm_dims(ctx, A, B));
    if (C == A || C == B ||
        sbm__ranges_overlap(C->values, sbm__dbytes(C->nnz), A->values, sbm__dbytes(A->nnz)) ||
        sbm__ranges_overlap(C->values, sbm__dbytes(C->nnz), B->values, sbm__dbytes(B->nnz)))
        return sbm__error(ctx, SBM_ERR_ALIASING, "argument C shares its values with A or B");
    if (C->pattern_id != h->pattern_c)
        return sbm__error(ctx, SBM_ERR_PLAN_MISMATCH,
                          "argument C (%" PRId64 "x%" PRId64 ", %" PRId64
                          " entries) is not the matrix the plan created",
                          C->m, C->n, C->nnz);
    SBM__TRY(sbm__check_plan_operand(ctx, "A", A, h->pattern_a, h->hash_a));
    SBM__TRY(sbm__check_plan_operand(ctx, "B", B, h->pattern_b, h->hash_b));
    /* equal patterns imply this; checked anyway so that a fingerprint collision cannot take a
     * backend out of bounds */
    if (A->m != C->m || B->n != C->n)
        return sbm__error(ctx, SBM_ERR_DIMENSION_MISMATCH,
                          "argument C is %" PRId64 "x%" PRId64 ", A*B is %" PRId64 "x%" PRId64,
                          C->m, C->n, A->m, B->n);
    return ctx->ops->csr_gemm_execute(ctx, plan, A, B, C);
}

sbm_status sbm_csr_gemm_execute(sbm_ctx *ctx, const sbm_csr_plan *plan, const sbm_csr *A,
                                const sbm_csr *B, sbm_csr *C)
{
    SBM__ENTER(ctx, "sbm_csr_gemm_execute");
    return sbm__csr_gemm_execute(ctx, plan, A, B, C);
}

sbm_status sbm_csr_gemm(sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B, sbm_csr **C)
{
    SBM__ENTER(ctx, "sbm_csr_gemm");
    if (C) *C = NULL;
    if (!C) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument C is NULL");
    if (ctx->ops->csr_gemm) {
        /* no plan outlives the call: no fingerprints needed */
        SBM__TRY(sbm__check_csr_arg(ctx, "A", A));
        SBM__TRY(sbm__check_csr_arg(ctx, "B", B));
        SBM__TRY(sbm__check_gemm_dims(ctx, A, B));
        return ctx->ops->csr_gemm(ctx, A, B, C);
    }
    sbm_csr_plan *plan = NULL;
    sbm_csr *c = NULL;
    sbm_status st = sbm__csr_gemm_plan(ctx, A, B, &plan, &c);
    if (st == SBM_SUCCESS) st = sbm__csr_gemm_execute(ctx, plan, A, B, c);
    sbm_csr_gemm_plan_destroy(plan);
    if (st != SBM_SUCCESS) {
        sbm_csr_destroy(c);
        return st;
    }
    *C = c;
    return SBM_SUCCESS;
}

void sbm_csr_gemm_plan_destroy(sbm_csr_plan *plan)
{
    if (!plan) return;
    const sbm__plan_header *h = (const sbm__plan_header *)plan;
    if (h->ops && h->ops->csr_gemm_plan_destroy) h->ops->csr_gemm_plan_destroy(plan);
}
