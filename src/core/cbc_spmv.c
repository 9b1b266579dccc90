/* SPDX-License-Identifier: BSD-3-Clause */
/* Front end of the block SpMV y = alpha*op(A)*x + beta*y. */
#include "sbm_internal.h"

#include <inttypes.h>

sbm_status sbm__cbc_spmv(sbm_ctx *ctx, sbm_op op, double alpha, const sbm_cbc *A, const double *x,
                         double beta, double *y)
{
    if (!ctx->ops->cbc_spmv)
        return sbm__error(ctx, SBM_ERR_NOT_SUPPORTED,
                          "the block SpMV is not available on the %s backend", ctx->ops->name);
    return ctx->ops->cbc_spmv(ctx, op, alpha, A, x, beta, y);
}

sbm_status sbm__cbc_spmv_check(sbm_ctx *ctx, sbm_op op, const sbm_cbc *A, const double *x,
                               const double *y)
{
    SBM__TRY(sbm__check_cbc_arg(ctx, "A", A));
    if (!x) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument x is NULL");
    if (!y) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument y is NULL");
    if (op != SBM_OP_N && op != SBM_OP_T)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument op: %d is not an operation (SBM_OP_N or SBM_OP_T)", (int)op);
    /* x has op(A)'s column count, y its row count; y must not overlap x (y is written while x is
     * still read). */
    const int64_t m = op == SBM_OP_N ? A->nbr * A->r : A->nbc * A->c;
    const int64_t n = op == SBM_OP_N ? A->nbc * A->c : A->nbr * A->r;
    const uintptr_t xb = (uintptr_t)x, xe = xb + (uintptr_t)n * sizeof(double);
    const uintptr_t yb = (uintptr_t)y, ye = yb + (uintptr_t)m * sizeof(double);
    if (x == y || (m > 0 && n > 0 && xb < ye && yb < xe))
        return sbm__error(ctx, SBM_ERR_ALIASING,
                          "arguments x (%" PRId64 " entries) and y (%" PRId64
                          " entries) overlap; y must be a separate array",
                          n, m);
    return SBM_SUCCESS;
}

sbm_status sbm_cbc_spmv(sbm_ctx *ctx, sbm_op op, double alpha, const sbm_cbc *A, const double *x,
                        double beta, double *y)
{
    SBM__ENTER(ctx, "sbm_cbc_spmv");
    SBM__TRY(sbm__cbc_spmv_check(ctx, op, A, x, y));
    return sbm__cbc_spmv(ctx, op, alpha, A, x, beta, y);
}
