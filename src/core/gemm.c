/* SPDX-License-Identifier: BSD-3-Clause */
/* Front end of the block SpGEMM C = U + alpha*op(A)*op(B): argument and plan checks, dispatch. */
#include "sbm_internal.h"

#include <inttypes.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Checks                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* op(X) is nbr x nbc blocks of r x c. */
typedef struct op_shape {
    int64_t nbr;
    int64_t nbc;
    int r;
    int c;
} op_shape;

static op_shape shape_of(sbm_op op, const sbm_cbc *X)
{
    op_shape s;
    if (op == SBM_OP_N) {
        s.nbr = X->nbr, s.nbc = X->nbc, s.r = X->r, s.c = X->c;
    } else {
        s.nbr = X->nbc, s.nbc = X->nbr, s.r = X->c, s.c = X->r;
    }
    return s;
}

static const char *op_name(sbm_op op) { return op == SBM_OP_N ? "N" : "T"; }

static sbm_status check_op(sbm_ctx *ctx, const char *arg, sbm_op op)
{
    if (op != SBM_OP_N && op != SBM_OP_T)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument %s: %d is not an operation (SBM_OP_N or SBM_OP_T)", arg, (int)op);
    return SBM_SUCCESS;
}

/* Operands, operations, flags and shapes of C = U + op(A)*op(B). */
static sbm_status check_operands(sbm_ctx *ctx, sbm_op op_a, const sbm_cbc *A, sbm_op op_b,
                                 const sbm_cbc *B, const sbm_cbc *U, unsigned flags)
{
    SBM__TRY(sbm__check_cbc_arg(ctx, "A", A));
    SBM__TRY(sbm__check_cbc_arg(ctx, "B", B));
    if (U) SBM__TRY(sbm__check_cbc_arg(ctx, "U", U));
    SBM__TRY(check_op(ctx, "op_a", op_a));
    SBM__TRY(check_op(ctx, "op_b", op_b));
    if (flags & ~SBM_GEMM_UPPER)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument flags: unknown bits 0x%x (only SBM_GEMM_UPPER = 0x%x is defined)",
                          flags & ~SBM_GEMM_UPPER, SBM_GEMM_UPPER);
    const op_shape a = shape_of(op_a, A), b = shape_of(op_b, B);
    if (a.c != b.r)
        return sbm__error(ctx, SBM_ERR_BLOCK_SHAPE,
                          "inner block sizes differ: op_a(A) has %dx%d blocks, op_b(B) has %dx%d "
                          "blocks: a block of op_a(A) has %d columns, one of op_b(B) %d rows "
                          "(A is %dx%d with op %s, B is %dx%d with op %s)",
                          a.r, a.c, b.r, b.c, a.c, b.r, A->r, A->c, op_name(op_a), B->r, B->c,
                          op_name(op_b));
    if (a.nbc != b.nbr)
        return sbm__error(ctx, SBM_ERR_DIMENSION_MISMATCH,
                          "inner dimensions differ: op_a(A) is %" PRId64 " x %" PRId64
                          " blocks, op_b(B) is %" PRId64 " x %" PRId64 " blocks",
                          a.nbr, a.nbc, b.nbr, b.nbc);
    if (U) {
        if (U->r != a.r || U->c != b.c)
            return sbm__error(ctx, SBM_ERR_BLOCK_SHAPE,
                              "argument U: blocks are %dx%d but op_a(A)*op_b(B) has %dx%d blocks",
                              U->r, U->c, a.r, b.c);
        if (U->nbr != a.nbr || U->nbc != b.nbc)
            return sbm__error(ctx, SBM_ERR_DIMENSION_MISMATCH,
                              "argument U: %" PRId64 " x %" PRId64 " blocks but op_a(A)*op_b(B) is %" PRId64
                              " x %" PRId64 " blocks",
                              U->nbr, U->nbc, a.nbr, b.nbc);
    }
    if (flags & SBM_GEMM_UPPER) {
        if (a.r != b.c)
            return sbm__error(ctx, SBM_ERR_BLOCK_SHAPE,
                              "argument flags: SBM_GEMM_UPPER needs square blocks in C, but C would "
                              "have %dx%d blocks",
                              a.r, b.c);
        if (a.nbr != b.nbc)
            return sbm__error(ctx, SBM_ERR_DIMENSION_MISMATCH,
                              "argument flags: SBM_GEMM_UPPER needs C square in blocks, but C would "
                              "be %" PRId64 " x %" PRId64 " blocks",
                              a.nbr, b.nbc);
    }
    return SBM_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Plan, execute                                                                            */
/* ---------------------------------------------------------------------------------------- */

/* The plan without SBM__ENTER, so that sbm_cbc_gemm's messages carry its own name.
 * once = 1 (sbm_cbc_gemm): the plan is executed once with the same objects, so no fingerprints,
 * and the backend is told (SBM__GEMM_ONCE) that C's values need not be zeroed. */
static sbm_status gemm_plan(sbm_ctx *ctx, sbm_op op_a, const sbm_cbc *A, sbm_op op_b,
                            const sbm_cbc *B, const sbm_cbc *U, unsigned flags, int once,
                            sbm_gemm_plan **plan, sbm_cbc **C)
{
    SBM__TRY(check_operands(ctx, op_a, A, op_b, B, U, flags));
    if (U && (flags & SBM_GEMM_UPPER))
        SBM__TRY(sbm__cbc_check_upper(ctx, "U", U,
                                      "with SBM_GEMM_UPPER U must be upper block triangular"));
    if (!ctx->ops->gemm_plan || !ctx->ops->gemm_execute || !ctx->ops->gemm_plan_destroy)
        return sbm__error(ctx, SBM_ERR_NOT_SUPPORTED,
                          "the block SpGEMM is not available on the %s backend", ctx->ops->name);
    uint64_t ha = 0, hb = 0, hu = 0;
    if (!once) {
        /* A*A and W*W^T are common: hash a shared pattern once */
        SBM__TRY(sbm__cbc_pattern_hash(ctx, A, &ha));
        if (B->pattern_id == A->pattern_id)
            hb = ha;
        else
            SBM__TRY(sbm__cbc_pattern_hash(ctx, B, &hb));
        if (U) SBM__TRY(sbm__cbc_pattern_hash(ctx, U, &hu));
    }
    SBM__TRY(ctx->ops->gemm_plan(ctx, op_a, A, op_b, B, U, once ? flags | SBM__GEMM_ONCE : flags,
                                 plan, C));
    sbm__plan_header *h = (sbm__plan_header *)*plan;
    h->backend = ctx->backend;
    h->device = ctx->device;
    h->ops = ctx->ops;
    h->pattern_a = A->pattern_id;
    h->pattern_b = B->pattern_id;
    h->pattern_u = U ? U->pattern_id : 0;
    h->pattern_c = (*C)->pattern_id;
    h->hash_a = ha;
    h->hash_b = hb;
    h->hash_u = hu;
    return SBM_SUCCESS;
}

sbm_status sbm_cbc_gemm_plan(sbm_ctx *ctx, sbm_op op_a, const sbm_cbc *A, sbm_op op_b,
                             const sbm_cbc *B, const sbm_cbc *U, unsigned flags,
                             sbm_gemm_plan **plan, sbm_cbc **C)
{
    SBM__ENTER(ctx, "sbm_cbc_gemm_plan");
    if (plan) *plan = NULL;
    if (C) *C = NULL;
    if (!plan) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument plan (output handle) is NULL");
    if (!C) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument C (output handle) is NULL");
    return gemm_plan(ctx, op_a, A, op_b, B, U, flags, 0, plan, C);
}

sbm_status sbm__cbc_gemm_execute(sbm_ctx *ctx, const sbm_gemm_plan *plan, double alpha,
                                 const sbm_cbc *A, const sbm_cbc *B, const sbm_cbc *U, sbm_cbc *C)
{
    const sbm__plan_header *h = (const sbm__plan_header *)plan;
    if (h->backend != ctx->backend || (h->backend == SBM_BACKEND_CUDA && h->device != ctx->device))
        return sbm__error(ctx, SBM_ERR_BACKEND_MISMATCH,
                          "argument plan was made on the %s backend (device %d), the context is %s "
                          "(device %d)",
                          h->ops->name, h->device, ctx->ops->name, ctx->device);
    if ((U != NULL) != (h->pattern_u != 0))
        return sbm__error(ctx, SBM_ERR_PLAN_MISMATCH,
                          "argument U is %s but the plan was made %s U",
                          U ? "given" : "NULL", h->pattern_u ? "with" : "without");
    const void *ins[3] = {A, B, U};
    const char *names[3] = {"A", "B", "U"};
    for (int t = 0; t < 3; t++)
        if (ins[t] && (ins[t] == (const void *)C ||
                       ((const sbm_cbc *)ins[t])->values == C->values))
            return sbm__error(ctx, SBM_ERR_ALIASING,
                              "argument C is the same matrix as (or shares values with) argument %s",
                              names[t]);
    SBM__TRY(sbm__cbc_check_pattern(ctx, "A", A, h->pattern_a, h->hash_a));
    SBM__TRY(sbm__cbc_check_pattern(ctx, "B", B, h->pattern_b, h->hash_b));
    if (U) SBM__TRY(sbm__cbc_check_pattern(ctx, "U", U, h->pattern_u, h->hash_u));
    if (C->pattern_id != h->pattern_c)
        return sbm__error(ctx, SBM_ERR_PLAN_MISMATCH,
                          "argument C (%" PRId64 " x %" PRId64 " blocks, %" PRId64
                          " stored) is not the matrix this plan created (or a copy of it)",
                          C->nbr, C->nbc, C->nnzb);
    return ctx->ops->gemm_execute(ctx, plan, alpha, A, B, U, C);
}

sbm_status sbm_cbc_gemm_execute(sbm_ctx *ctx, const sbm_gemm_plan *plan, double alpha,
                                const sbm_cbc *A, const sbm_cbc *B, const sbm_cbc *U, sbm_cbc *C)
{
    SBM__ENTER(ctx, "sbm_cbc_gemm_execute");
    if (!plan) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument plan is NULL");
    SBM__TRY(sbm__check_cbc_arg(ctx, "A", A));
    SBM__TRY(sbm__check_cbc_arg(ctx, "B", B));
    SBM__TRY(sbm__check_cbc_arg(ctx, "C", C));
    if (U) SBM__TRY(sbm__check_cbc_arg(ctx, "U", U));
    return sbm__cbc_gemm_execute(ctx, plan, alpha, A, B, U, C);
}

sbm_status sbm_cbc_gemm(sbm_ctx *ctx, double alpha, sbm_op op_a, const sbm_cbc *A, sbm_op op_b,
                        const sbm_cbc *B, const sbm_cbc *U, unsigned flags, sbm_cbc **C)
{
    SBM__ENTER(ctx, "sbm_cbc_gemm");
    if (!C) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument C (output handle) is NULL");
    *C = NULL;
    sbm_gemm_plan *plan = NULL;
    sbm_cbc *M = NULL;
    SBM__TRY(gemm_plan(ctx, op_a, A, op_b, B, U, flags, 1, &plan, &M));
    /* A, B and U are checked by the plan, M is the plan's */
    sbm_status st = sbm__cbc_gemm_execute(ctx, plan, alpha, A, B, U, M);
    sbm_gemm_plan_destroy(plan);
    if (st != SBM_SUCCESS) {
        sbm_cbc_destroy(M);
        return st;
    }
    *C = M;
    return SBM_SUCCESS;
}

void sbm_gemm_plan_destroy(sbm_gemm_plan *plan)
{
    if (!plan) return;
    const sbm__plan_header *h = (const sbm__plan_header *)plan;
    h->ops->gemm_plan_destroy(plan);
}

sbm_gemm_plan_info sbm_gemm_plan_get_info(const sbm_gemm_plan *plan)
{
    sbm_gemm_plan_info info;
    memset(&info, 0, sizeof info);
    if (plan) info = ((const sbm__plan_header *)plan)->info;
    return info;
}
