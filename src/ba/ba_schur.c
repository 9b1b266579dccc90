/* SPDX-License-Identifier: BSD-3-Clause */
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
    uint64_t v_hash;         /* V's, when V was block diagonal with every block stored (the
                              * execute's inverse then skips that check, a download); else 0 */
    double *t;               /* context memory, np*q */
    int64_t *rows;           /* context memory: the Schur diagonal's index lists, nc + (nc+1)
                              * + nnzb(W): U's diagonal block of every block row (-1: none),
                              * then W's blocks row by row (pointers, block indices) */
    uint64_t d_hash;         /* fingerprint of the block-diagonal pattern of nc p x p blocks */
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
    sbm__free_with(&plan->dev_a, plan->rows);
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

/* The fingerprint of the pattern of nc diagonal p x p blocks (colptr[j] = j, rowind[k] = k), as
 * sbm__hash_cbc_pattern_host computes it. */
static uint64_t bdiag_hash(int64_t nc, int p)
{
    uint64_t sp = 0, si = 0;
    for (int64_t j = 0; j <= nc; j++) sp += sbm__fp_term(SBM__FP_SALT_PTR, (uint64_t)j, (uint64_t)j);
    for (int64_t k = 0; k < nc; k++) si += sbm__fp_term(SBM__FP_SALT_IND, (uint64_t)k, (uint64_t)k);
    return sbm__fp_finish(nc, nc, p, p, sp, si);
}

/* plan->v_hash: V's fingerprint when V stores exactly its diagonal blocks, else 0 (the
 * execute then checks V at every call, with sbm_bdiag_inverse's messages). */
static sbm_status plan_v(sbm_ctx *ctx, sbm_schur_plan *p, const sbm_cbc *V)
{
    const int64_t *cp;
    const int32_t *ri;
    SBM__TRY(sbm__cbc_pattern_to_host(ctx, V, &cp, &ri));
    int full = V->nnzb == V->nbc;
    for (int64_t j = 0; j < V->nbc && full; j++)
        full = cp[j + 1] == j + 1 && ri[j] == j;
    sbm__cbc_pattern_release(ctx, V, cp, ri);
    p->v_hash = 0;
    return full ? ctx->ops->cbc_pattern_hash(ctx, V, &p->v_hash) : SBM_SUCCESS;
}

/* The index lists of sbm_ba_schur_diagonal (plan->rows), built on the host from U's diagonal
 * blocks (plan->usym) and W's pattern, and uploaded once. */
static sbm_status plan_rows(sbm_ctx *ctx, sbm_schur_plan *p, const sbm_cbc *W)
{
    const int64_t nc = p->nc, nnzb = W->nnzb, len = 2 * nc + 1 + nnzb;
    const int64_t *cp;
    const int32_t *ri;
    SBM__TRY(sbm__cbc_pattern_to_host(ctx, W, &cp, &ri));
    sbm_status st = SBM_SUCCESS;
    int64_t *h = sbm__host_alloc(ctx, (size_t)len * sizeof(int64_t), "the Schur diagonal's lists");
    p->rows = h ? (int64_t *)sbm__alloc(ctx, (size_t)len * sizeof(int64_t),
                                        "the Schur diagonal's lists")
                : NULL;
    if (!p->rows) {
        st = ctx->last_status;
        goto done;
    }
    int64_t *udiag = h, *ptr = h + nc, *blk = h + 2 * nc + 1;
    memset(ptr, 0, (size_t)(nc + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < nc; i++) udiag[i] = p->usym.diag_block[i];
    for (int64_t k = 0; k < nnzb; k++) ptr[ri[k] + 1]++;
    for (int64_t i = 0; i < nc; i++) ptr[i + 1] += ptr[i];
    /* block columns in increasing order: each row's list increases too */
    for (int64_t j = 0; j < W->nbc; j++)
        for (int64_t k = cp[j]; k < cp[j + 1]; k++) blk[ptr[ri[k]]++] = k;
    for (int64_t i = nc; i > 0; i--) ptr[i] = ptr[i - 1];
    ptr[0] = 0;
    st = sbm__upload(ctx, p->rows, h, (size_t)len * sizeof(int64_t));
    p->d_hash = bdiag_hash(nc, p->p);
done:
    if (h) sbm__host_free(ctx, h);
    sbm__cbc_pattern_release(ctx, W, cp, ri);
    return st;
}

sbm_status sbm__ba_schur_plan(sbm_ctx *ctx, const sbm_cbc *U, const sbm_cbc *V, const sbm_cbc *W,
                              unsigned flags, sbm_schur_plan **plan, sbm_cbc **S)
{
    *plan = NULL;
    if (S) *S = NULL;
    const int matrix_free = (flags & SBM_SCHUR_MATRIX_FREE) != 0;
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
    if ((st = SBM__INNER(ctx, "sbm_cbc_copy", sbm__cbc_copy(ctx, V, &p->Vinv))) != SBM_SUCCESS)
        goto fail;
    if ((st = SBM__INNER(ctx, "sbm_cbc_copy", sbm__cbc_copy(ctx, W, &p->Y))) != SBM_SUCCESS)
        goto fail;
    /* the SpGEMM's plan checks that U is upper block triangular, which nothing here does */
    if (!matrix_free &&
        (st = SBM__NESTED(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, p->Y, SBM_OP_T, W, U,
                                                 SBM_GEMM_UPPER, &p->gemm, &Sm))) !=
            SBM_SUCCESS)
        goto fail;
    if ((st = sbm__symup_init(ctx, U, &p->usym)) != SBM_SUCCESS) goto fail;
    if ((st = ctx->ops->cbc_pattern_hash(ctx, U, &p->u_hash)) != SBM_SUCCESS) goto fail;
    if ((st = plan_rows(ctx, p, W)) != SBM_SUCCESS) goto fail;
    if ((st = plan_v(ctx, p, V)) != SBM_SUCCESS) goto fail;
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
    return sbm__ba_schur_plan(ctx, U, V, W, flags, plan, S);
}

sbm_status sbm__ba_schur_execute(sbm_ctx *ctx, sbm_schur_plan *plan, const sbm_cbc *U,
                                 const sbm_cbc *V, const sbm_cbc *W, const double *gc,
                                 const double *gp, sbm_cbc *S, double *rhs)
{
    const int matrix_free = (plan->flags & SBM_SCHUR_MATRIX_FREE) != 0;
    plan->executed = 0;
    /* V with the planned block-diagonal pattern needs no new check of it */
    uint64_t vh = 0;
    if (plan->v_hash) SBM__TRY(ctx->ops->cbc_pattern_hash(ctx, V, &vh));
    /* Vinv is a copy of the V planned, whose pattern V then still has */
    sbm_status st = plan->v_hash && vh == plan->v_hash
                        ? SBM__INNER(ctx, "sbm_bdiag_inverse",
                                     sbm__bdiag_inverse(ctx, V, plan->Vinv))
                        : SBM__NESTED(ctx, sbm_bdiag_inverse(ctx, V, plan->Vinv));
    if (st == SBM_ERR_NOT_POSITIVE_DEFINITE) {
        /* name the BA meaning of the failing block */
        sbm__ba_append_message(ctx, " (argument V: its blocks must be SPD; the block of a point "
                                    "seen by a single camera is singular without damping)");
    }
    if (st != SBM_SUCCESS) return st;
    /* Vinv has V's pattern, which sbm_bdiag_inverse has just checked; the scaling checks that
     * Y (a copy of the W planned) has W's pattern */
    SBM__TRY(SBM__INNER(ctx, "sbm_bdiag_scale",
                        sbm__bdiag_scale(ctx, SBM_SIDE_RIGHT, plan->Vinv, W, plan->Y)));
    if (!matrix_free)
        SBM__TRY(SBM__INNER(ctx, "sbm_cbc_gemm_execute",
                            sbm__cbc_gemm_execute(ctx, plan->gemm, -1.0, plan->Y, W, U, S)));
    if (rhs) {
        /* rhs = gc - Y gp; the caller's gp and rhs, which the SpMV's checks keep apart */
        SBM__TRY(sbm__vec_copy(ctx, rhs, gc, plan->nc * plan->p));
        SBM__TRY(SBM__NESTED(ctx, sbm_cbc_spmv(ctx, SBM_OP_N, -1.0, plan->Y, gp, 1.0, rhs)));
    }
    plan->usym.A = U;
    SBM__TRY(sbm__symup_refresh(ctx, &plan->usym));
    plan->executed = 1;
    return SBM_SUCCESS;
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
    return sbm__ba_schur_execute(ctx, plan, U, V, W, gc, gp, S, rhs);
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
    return sbm__ba_schur(ctx, U, V, W, gc, gp, S, rhs);
}

sbm_status sbm__ba_schur(sbm_ctx *ctx, const sbm_cbc *U, const sbm_cbc *V, const sbm_cbc *W,
                         const double *gc, const double *gp, sbm_cbc **S, double *rhs)
{
    *S = NULL;
    sbm_schur_plan *plan = NULL;
    sbm_cbc *Sm = NULL;
    /* the operands are checked; the plan is made from them, and Sm by the plan */
    sbm_status st =
        SBM__INNER(ctx, "sbm_ba_schur_plan", sbm__ba_schur_plan(ctx, U, V, W, 0, &plan, &Sm));
    if (st == SBM_SUCCESS)
        st = SBM__INNER(ctx, "sbm_ba_schur_execute",
                        sbm__ba_schur_execute(ctx, plan, U, V, W, gc, gp, Sm, rhs));
    sbm_schur_plan_destroy(plan);
    if (st != SBM_SUCCESS) {
        sbm_cbc_destroy(Sm);
        return st;
    }
    *S = Sm;
    return SBM_SUCCESS;
}

sbm_status sbm__ba_back_substitute(sbm_ctx *ctx, sbm_schur_plan *plan, const sbm_cbc *W,
                                   const double *gp, const double *dc, double *dp)
{
    /* t = gp - W^T dc; dp = V^-1 t (t is the plan's, apart from the caller's vectors) */
    SBM__TRY(sbm__vec_copy(ctx, plan->t, gp, plan->np * plan->q));
    SBM__TRY(SBM__INNER(ctx, "sbm_cbc_spmv",
                        sbm__cbc_spmv(ctx, SBM_OP_T, -1.0, W, dc, 1.0, plan->t)));
    return SBM__INNER(ctx, "sbm_cbc_spmv",
                      sbm__cbc_spmv(ctx, SBM_OP_N, 1.0, plan->Vinv, plan->t, 0.0, dp));
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
    return sbm__ba_back_substitute(ctx, plan, W, gp, dc, dp);
}

sbm_status sbm__ba_schur_multiply(sbm_ctx *ctx, sbm_schur_plan *plan, const sbm_cbc *U,
                                  const sbm_cbc *W, const double *x, double *y)
{
    /* y = U x - Y (W^T x); t is the plan's, apart from x and y */
    SBM__TRY(SBM__INNER(ctx, "sbm_cbc_spmv",
                        sbm__cbc_spmv(ctx, SBM_OP_T, 1.0, W, x, 0.0, plan->t)));
    plan->usym.A = U;
    SBM__TRY(sbm__symup_multiply(ctx, &plan->usym, x, y));
    return SBM__INNER(ctx, "sbm_cbc_spmv",
                      sbm__cbc_spmv(ctx, SBM_OP_N, -1.0, plan->Y, plan->t, 1.0, y));
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
    /* x and y apart, as the product with U (sbm__symup_multiply) needs; named as that product */
    SBM__TRY(SBM__INNER(ctx, "sbm_cbc_spmv", sbm__cbc_spmv_check(ctx, SBM_OP_N, U, x, y)));
    return sbm__ba_schur_multiply(ctx, plan, U, W, x, y);
}

sbm_status sbm_ba_schur_diagonal(sbm_ctx *ctx, sbm_schur_plan *plan, const sbm_cbc *U,
                                 const sbm_cbc *W, sbm_cbc *D)
{
    SBM__ENTER(ctx, "sbm_ba_schur_diagonal");
    if (!plan) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument plan is NULL");
    SBM__TRY(check_plan_w(ctx, plan, W));
    SBM__TRY(check_plan_u(ctx, plan, U));
    SBM__TRY(sbm__check_cbc_arg(ctx, "D", D));
    uint64_t h = 0;
    if (D->nbr != plan->nc || D->nbc != plan->nc || D->r != plan->p || D->c != plan->p ||
        D->nnzb != plan->nc)
        return sbm__error(ctx, SBM_ERR_DIMENSION_MISMATCH,
                          "argument D: %" PRId64 " x %" PRId64 " blocks of %dx%d, %" PRId64
                          " stored; it must be block diagonal with all %" PRId64
                          " diagonal blocks of %dx%d",
                          D->nbr, D->nbc, D->r, D->c, D->nnzb, plan->nc, plan->p, plan->p);
    SBM__TRY(sbm__cbc_pattern_hash(ctx, D, &h));
    if (h != plan->d_hash)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument D: its pattern is not the block diagonal (every block (j, j) "
                          "stored, nothing else)");
    if (!plan->executed)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument plan: no successful sbm_ba_schur_execute yet (Y unknown)");
    return sbm__ba_schur_diagonal(ctx, plan, U, W, D);
}

void sbm__ba_schur_parts(sbm_schur_plan *plan, const sbm_cbc **Vinv, const sbm_cbc **Y,
                         double **t, sbm__symup **usym)
{
    *Vinv = plan->Vinv, *Y = plan->Y, *t = plan->t, *usym = &plan->usym;
}

sbm_status sbm__ba_schur_diagonal(sbm_ctx *ctx, sbm_schur_plan *plan, const sbm_cbc *U,
                                  const sbm_cbc *W, sbm_cbc *D)
{
    const sbm__ba_kernels *k = sbm__ba_kernels_of(ctx);
    if (!k || !k->ba_schur_diagonal)
        return sbm__error(ctx, SBM_ERR_NOT_SUPPORTED,
                          "the Schur complement's diagonal is not available on the %s backend",
                          ctx->ops->name);
    const int64_t nc = plan->nc;
    return k->ba_schur_diagonal(ctx, U, plan->rows, plan->Y, W, plan->rows + nc,
                                plan->rows + 2 * nc + 1, D);
}
