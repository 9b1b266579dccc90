/* SPDX-License-Identifier: BSD-3-Clause */
/* CBC patterns for the front ends' checks: a host view of a pattern, the upper-triangle check,
 * fingerprints and the check that an operand has the pattern a plan recorded. Used by the SpGEMM,
 * the block-diagonal operations, the Cholesky, BA, SLAM and the solvers. */
#include "sbm_internal.h"

#include <inttypes.h>

/* ---------------------------------------------------------------------------------------- */
/* Host view of a pattern                                                                   */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm__cbc_pattern_to_host(sbm_ctx *ctx, const sbm_cbc *A, const int64_t **colptr,
                                    const int32_t **rowind)
{
    *colptr = NULL;
    *rowind = NULL;
    if (A->backend == SBM_BACKEND_CPU) {
        *colptr = A->colptr;
        *rowind = A->rowind;
        return SBM_SUCCESS;
    }
    int64_t *p = sbm__host_alloc(ctx, (size_t)(A->nbc + 1) * sizeof(int64_t), "host column pointers");
    if (!p) return SBM_ERR_OUT_OF_MEMORY;
    int32_t *r = sbm__host_alloc(ctx, (size_t)A->nnzb * sizeof(int32_t), "host block rows");
    if (!r) {
        sbm__host_free(ctx, p);
        return SBM_ERR_OUT_OF_MEMORY;
    }
    sbm_status st = ctx->ops->copy(ctx, p, A->colptr, (size_t)(A->nbc + 1) * sizeof(int64_t), 1);
    if (st == SBM_SUCCESS && A->nnzb > 0)
        st = ctx->ops->copy(ctx, r, A->rowind, (size_t)A->nnzb * sizeof(int32_t), 1);
    if (st != SBM_SUCCESS) {
        sbm__host_free(ctx, p);
        sbm__host_free(ctx, r);
        return st;
    }
    *colptr = p;
    *rowind = r;
    return SBM_SUCCESS;
}

void sbm__cbc_pattern_release(sbm_ctx *ctx, const sbm_cbc *A, const int64_t *colptr,
                              const int32_t *rowind)
{
    if (A->backend == SBM_BACKEND_CPU) return;
    sbm__host_free(ctx, (void *)colptr);
    sbm__host_free(ctx, (void *)rowind);
}

/* ---------------------------------------------------------------------------------------- */
/* Checks                                                                                   */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm__cbc_check_upper(sbm_ctx *ctx, const char *arg, const sbm_cbc *U, const char *why)
{
    const int64_t *cp;
    const int32_t *ri;
    SBM__TRY(sbm__cbc_pattern_to_host(ctx, U, &cp, &ri));
    sbm_status st = SBM_SUCCESS;
    for (int64_t j = 0; j < U->nbc && st == SBM_SUCCESS; j++) {
        /* rows increase within a column: only the last one can be the first below the diagonal */
        if (cp[j + 1] > cp[j] && ri[cp[j + 1] - 1] > j) {
            int64_t p = cp[j];
            while (ri[p] <= j) p++;
            st = sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                            "argument %s: block (%" PRId32 ", %" PRId64 ") is below the diagonal, but "
                            "%s",
                            arg, ri[p], j, why);
        }
    }
    sbm__cbc_pattern_release(ctx, U, cp, ri);
    return st;
}

sbm_status sbm__cbc_pattern_hash(sbm_ctx *ctx, const sbm_cbc *X, uint64_t *hash)
{
    if (!ctx->ops->cbc_pattern_hash)
        return sbm__error(ctx, SBM_ERR_NOT_SUPPORTED,
                          "pattern fingerprints are not available on the %s backend", ctx->ops->name);
    return ctx->ops->cbc_pattern_hash(ctx, X, hash);
}

sbm_status sbm__cbc_check_pattern(sbm_ctx *ctx, const char *arg, const sbm_cbc *X, uint64_t id,
                                uint64_t hash)
{
    if (X->pattern_id == id) return SBM_SUCCESS;
    uint64_t hx;
    SBM__TRY(sbm__cbc_pattern_hash(ctx, X, &hx));
    if (hx != hash)
        return sbm__error(ctx, SBM_ERR_PLAN_MISMATCH,
                          "argument %s (%" PRId64 " x %" PRId64 " blocks of %dx%d, %" PRId64
                          " stored) does not have the pattern the plan was made with",
                          arg, X->nbr, X->nbc, X->r, X->c, X->nnzb);
    return SBM_SUCCESS;
}
