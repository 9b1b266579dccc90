/* The Schur complement of the BA normal equations (the reduced camera system).
 *
 * V^-1 by sbm_bdiag_inverse, Y = W V^-1 by sbm_bdiag_scale, S = U - Y W^T by the block SpGEMM
 * with accumulate (alpha = -1, SBM_GEMM_UPPER) whose plan is made once and executed every
 * iteration, rhs = gc - Y gp and the back-substitution dp = V^-1 (gp - W^T dc) by block SpMVs.
 * Everything runs on the context's backend. */
#include "ba_internal.h"

#include <inttypes.h>
#include <string.h>
struct sbm_schur_plan {
    unsigned flags;          /* SBM_SCHUR_MATRIX_FREE or 0 */
    int64_t nc;              /* block rows of W */
    int64_t np;              /* block columns of W */
    int p;                   /* rows of W's blocks */
    int q;                   /* columns of W's blocks */
    sbm_cbc *Vinv;           /* V^-1 of the last execute */
    sbm_cbc *Y;              /* W V^-1 of the last execute */
    sbm_gemm_plan *gemm;     /* S = U - Y W^T (NULL when matrix-free) */
    sbm__symup usym;         /* the symmetric product with U (matrix-free S*x) */
    uint64_t u_hash;         /* U's pattern fingerprint */
    double *t;               /* context memory, np*q */
    int executed;            /* 1 after a successful execute */
    sbm_allocator host_a;    /* allocator of the struct */
    sbm_allocator dev_a;     /* allocator of t */
};

void sbm_schur_plan_destroy(sbm_schur_plan *plan)
{
    if (!plan) return;
    sbm_cbc_destroy(plan->Vinv);
    sbm_cbc_destroy(plan->Y);
    sbm_gemm_plan_destroy(plan->gemm);
    sbm__symup_free(&plan->usym);
    sbm__free_with(&plan->dev_a, plan->t);
    sbm_allocator a = plan->host_a;
    sbm__free_with(&a, plan);
}

static sbm_status check_schur_operands(sbm_ctx *ctx, const sbm_cbc *U, const sbm_cbc *V,
                                       const sbm_cbc *W)
{
    SBM__TRY(sbm__check_cbc_arg(ctx, "U", U));
    SBM__TRY(sbm__check_cbc_arg(ctx, "V", V));
    SBM__TRY(sbm__check_cbc_arg(ctx, "W", W));
    if (U->nbr != W->nbr || U->nbc != W->nbr)
        return sbm__error(ctx, SBM_ERR_DIMENSION_MISMATCH,
                          "argument U: %" PRId64 " x %" PRId64 " blocks, but W has %" PRId64
                          " block rows (U must be %" PRId64 " x %" PRId64 ")",
                          U->nbr, U->nbc, W->nbr, W->nbr, W->nbr);
    if (U->r != W->r || U->c != W->r)
        return sbm__error(ctx, SBM_ERR_BLOCK_SHAPE,
                          "argument U: blocks are %dx%d, but W's %dx%d blocks need %dx%d", U->r,
                          U->c, W->r, W->c, W->r, W->r);
    if (V->nbr != W->nbc || V->nbc != W->nbc)
        return sbm__error(ctx, SBM_ERR_DIMENSION_MISMATCH,
                          "argument V: %" PRId64 " x %" PRId64 " blocks, but W has %" PRId64
                          " block columns (V must be %" PRId64 " x %" PRId64 ")",
                          V->nbr, V->nbc, W->nbc, W->nbc, W->nbc);
    if (V->r != W->c || V->c != W->c)
        return sbm__error(ctx, SBM_ERR_BLOCK_SHAPE,
                          "argument V: blocks are %dx%d, but W's %dx%d blocks need %dx%d", V->r,
                          V->c, W->r, W->c, W->c, W->c);
    return SBM_SUCCESS;
}

static sbm_status check_plan_w(sbm_ctx *ctx, const sbm_schur_plan *plan, const sbm_cbc *W)
{
    SBM__TRY(sbm__check_cbc_arg(ctx, "W", W));
    if (W->nbr != plan->nc || W->nbc != plan->np || W->r != plan->p || W->c != plan->q)
        return sbm__error(ctx, SBM_ERR_PLAN_MISMATCH,
                          "argument W: %" PRId64 " x %" PRId64 " blocks of %dx%d, the plan was "
                          "made for %" PRId64 " x %" PRId64 " blocks of %dx%d",
                          W->nbr, W->nbc, W->r, W->c, plan->nc, plan->np, plan->p, plan->q);
    return SBM_SUCCESS;
}

static sbm_status check_plan_u(sbm_ctx *ctx, const sbm_schur_plan *plan, const sbm_cbc *U)
{
    SBM__TRY(sbm__check_cbc_arg(ctx, "U", U));
    uint64_t h = 0;
    if (U->nbr != plan->nc || U->nbc != plan->nc || U->r != plan->p || U->c != plan->p)
        return sbm__error(ctx, SBM_ERR_PLAN_MISMATCH,
                          "argument U: %" PRId64 " x %" PRId64 " blocks of %dx%d, the plan was "
                          "made for %" PRId64 " x %" PRId64 " blocks of %dx%d",
                          U->nbr, U->nbc, U->r, U->c, plan->nc, plan->nc, plan->p, plan->p);
    SBM__TRY(ctx->ops->cbc_pattern_hash(ctx, U, &h));
    if (h != plan->u_hash)
        return sbm__error(ctx, SBM_ERR_PLAN_MISMATCH,
                          "argument U: its pattern differs from the one the plan was made with");
    return SBM_SUCCESS;
}

sbm_status sbm_ba_schur_plan(sbm_ctx *ctx, const sbm_cbc *U, const sbm_cbc *V, const sbm_cbc *W,
                             unsigned flags, sbm_schur_plan **plan, sbm_cbc **S)
{
    SBM__ENTER(ctx, "sbm_ba_schur_plan");
    if (!plan) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument plan is NULL");
    *plan = NULL;
    const int matrix_free = (flags & SBM_SCHUR_MATRIX_FREE) != 0;
    if (S) *S = NULL;
    if (flags & ~SBM_SCHUR_MATRIX_FREE)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument flags: unknown bits 0x%x (only SBM_SCHUR_MATRIX_FREE = 0x%x "
                          "is defined)",
                          flags & ~SBM_SCHUR_MATRIX_FREE, SBM_SCHUR_MATRIX_FREE);
    if (!S && !matrix_free)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT,
                          "argument S is NULL (it may be NULL only with SBM_SCHUR_MATRIX_FREE)");
    SBM__TRY(check_schur_operands(ctx, U, V, W));
    if (!ctx->ops->cbc_pattern_hash)
        return sbm__error(ctx, SBM_ERR_NOT_SUPPORTED,
                          "pattern fingerprints are not available on the %s backend",
                          ctx->ops->name);

    sbm_allocator ha = sbm__host_allocator_of(ctx);
    sbm_schur_plan *p = sbm__alloc_with(ctx, &ha, 1, sizeof *p, "the Schur plan");
    if (!p) return SBM_ERR_OUT_OF_MEMORY;
    memset(p, 0, sizeof *p);
    p->host_a = ha;
    p->dev_a = ctx->allocator;
    p->flags = flags;
    p->nc = W->nbr, p->np = W->nbc, p->p = W->r, p->q = W->c;
    sbm_cbc *Sm = NULL;
    sbm_status st;
    if ((st = SBM__NESTED(ctx, sbm_cbc_copy(ctx, V, &p->Vinv))) != SBM_SUCCESS) goto fail;
    if ((st = SBM__NESTED(ctx, sbm_cbc_copy(ctx, W, &p->Y))) != SBM_SUCCESS) goto fail;
    if (!matrix_free &&
        (st = SBM__NESTED(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, p->Y, SBM_OP_T, W, U,
                                                 SBM_GEMM_UPPER, &p->gemm, &Sm))) !=
            SBM_SUCCESS)
        goto fail;
    if ((st = sbm__symup_init(ctx, U, &p->usym)) != SBM_SUCCESS) goto fail;
    if ((st = ctx->ops->cbc_pattern_hash(ctx, U, &p->u_hash)) != SBM_SUCCESS) goto fail;
    p->t = sbm__vec_alloc(ctx, p->np * p->q, "the Schur plan's point vector");
    if (!p->t) {
        st = ctx->last_status;
        goto fail;
    }
    *plan = p;
    if (S) *S = Sm;
    return SBM_SUCCESS;
fail:
    sbm_cbc_destroy(Sm);
    sbm_schur_plan_destroy(p);
    return st;
}

sbm_status sbm_ba_schur_execute(sbm_ctx *ctx, sbm_schur_plan *plan, const sbm_cbc *U,
                                const sbm_cbc *V, const sbm_cbc *W, const double *gc,
                                const double *gp, sbm_cbc *S, double *rhs)
{
    SBM__ENTER(ctx, "sbm_ba_schur_execute");
    if (!plan) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument plan is NULL");
    SBM__TRY(check_schur_operands(ctx, U, V, W));
    SBM__TRY(check_plan_w(ctx, plan, W));
    SBM__TRY(check_plan_u(ctx, plan, U));
    const int matrix_free = (plan->flags & SBM_SCHUR_MATRIX_FREE) != 0;
    if (!matrix_free) SBM__TRY(sbm__check_cbc_arg(ctx, "S", S));
    if (rhs && (!gc || !gp))
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument %s is NULL (rhs needs gc and gp)",
                          !gc ? "gc" : "gp");
    plan->executed = 0;
    sbm_status st = SBM__NESTED(ctx, sbm_bdiag_inverse(ctx, V, plan->Vinv));
    if (st == SBM_ERR_NOT_POSITIVE_DEFINITE) {
        /* name the BA meaning of the failing block */
        sbm__ba_append_message(ctx, " (argument V: its blocks must be SPD; the block of a point "
                                    "seen by a single camera is singular without damping)");
    }
    if (st != SBM_SUCCESS) return st;
    /* Vinv has V's pattern, which sbm_bdiag_inverse has just checked */
    SBM__TRY(SBM__NESTED(
        ctx, sbm__bdiag_scale_checked(ctx, SBM_SIDE_RIGHT, plan->Vinv, W, plan->Y)));
    if (!matrix_free)
        SBM__TRY(SBM__NESTED(ctx, sbm_cbc_gemm_execute(ctx, plan->gemm, -1.0, plan->Y, W, U,
                                                       S)));
    if (rhs) {
        /* rhs = gc - Y gp */
        SBM__TRY(sbm__vec_copy(ctx, rhs, gc, plan->nc * plan->p));
        SBM__TRY(SBM__NESTED(ctx, sbm_cbc_spmv(ctx, SBM_OP_N, -1.0, plan->Y, gp, 1.0, rhs)));
    }
    plan->usym.A = U;
    SBM__TRY(sbm__symup_refresh(ctx, &plan->usym));
    plan->executed = 1;
    return SBM_SUCCESS;
}

sbm_status sbm_ba_schur(sbm_ctx *ctx, const sbm_cbc *U, const sbm_cbc *V, const sbm_cbc *W,
                        const double *gc, const double *gp, sbm_cbc **S, double *rhs)
{
    SBM__ENTER(ctx, "sbm_ba_schur");
    if (!S) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument S is NULL");
    *S = NULL;
    SBM__TRY(check_schur_operands(ctx, U, V, W));
    if (rhs && (!gc || !gp))
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument %s is NULL (rhs needs gc and gp)",
                          !gc ? "gc" : "gp");
    sbm_schur_plan *plan = NULL;
    sbm_cbc *Sm = NULL;
    sbm_status st = SBM__NESTED(ctx, sbm_ba_schur_plan(ctx, U, V, W, 0, &plan, &Sm));
    if (st == SBM_SUCCESS)
        st = SBM__NESTED(ctx, sbm_ba_schur_execute(ctx, plan, U, V, W, gc, gp, Sm, rhs));
    sbm_schur_plan_destroy(plan);
    if (st != SBM_SUCCESS) {
        sbm_cbc_destroy(Sm);
        return st;
    }
    *S = Sm;
    return SBM_SUCCESS;
}

sbm_status sbm_ba_back_substitute(sbm_ctx *ctx, sbm_schur_plan *plan, const sbm_cbc *W,
                                  const double *gp, const double *dc, double *dp)
{
    SBM__ENTER(ctx, "sbm_ba_back_substitute");
    if (!plan) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument plan is NULL");
    SBM__TRY(check_plan_w(ctx, plan, W));
    if (!gp || !dc || !dp)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument %s is NULL",
                          !gp ? "gp" : !dc ? "dc" : "dp");
    if (!plan->executed)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument plan: no successful sbm_ba_schur_execute yet (V^-1 unknown)");
    /* t = gp - W^T dc; dp = V^-1 t */
    SBM__TRY(sbm__vec_copy(ctx, plan->t, gp, plan->np * plan->q));
    SBM__TRY(SBM__NESTED(ctx, sbm_cbc_spmv(ctx, SBM_OP_T, -1.0, W, dc, 1.0, plan->t)));
    return SBM__NESTED(ctx, sbm_cbc_spmv(ctx, SBM_OP_N, 1.0, plan->Vinv, plan->t, 0.0, dp));
}

sbm_status sbm_ba_schur_multiply(sbm_ctx *ctx, sbm_schur_plan *plan, const sbm_cbc *U,
                                 const sbm_cbc *W, const double *x, double *y)
{
    SBM__ENTER(ctx, "sbm_ba_schur_multiply");
    if (!plan) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument plan is NULL");
    SBM__TRY(check_plan_w(ctx, plan, W));
    SBM__TRY(check_plan_u(ctx, plan, U));
    if (!x || !y) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument %s is NULL", !x ? "x" : "y");
    if (x == y)
        return sbm__error(ctx, SBM_ERR_ALIASING, "arguments x and y are the same array");
    if (!plan->executed)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument plan: no successful sbm_ba_schur_execute yet (Y unknown)");
    /* y = U x - Y (W^T x) */
    SBM__TRY(SBM__NESTED(ctx, sbm_cbc_spmv(ctx, SBM_OP_T, 1.0, W, x, 0.0, plan->t)));
    plan->usym.A = U;
    SBM__TRY(sbm__symup_multiply(ctx, &plan->usym, x, y));
    return SBM__NESTED(ctx, sbm_cbc_spmv(ctx, SBM_OP_N, -1.0, plan->Y, plan->t, 1.0, y));
}
