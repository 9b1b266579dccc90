/* SPDX-License-Identifier: BSD-3-Clause */
/* Front end of the block-diagonal operations: inverse of SPD diagonal blocks and D*A / A*D
 * scaling. A block-diagonal D is a CBC matrix with square blocks, square in blocks, whose stored
 * blocks all lie on the diagonal. */
#include "sbm_internal.h"

#include <inttypes.h>
#include <string.h>

/* D's shape, and its pattern: blocks only on the diagonal; with need_all every diagonal block
 * stored (a missing block is zero, which is not positive definite). */
static sbm_status check_bdiag(sbm_ctx *ctx, const sbm_cbc *D, int need_all)
{
    if (D->r != D->c)
        return sbm__error(ctx, SBM_ERR_BLOCK_SHAPE,
                          "argument D: blocks are %dx%d, a block-diagonal matrix needs square blocks",
                          D->r, D->c);
    if (D->nbr != D->nbc)
        return sbm__error(ctx, SBM_ERR_DIMENSION_MISMATCH,
                          "argument D: %" PRId64 " x %" PRId64
                          " blocks, a block-diagonal matrix is square in blocks",
                          D->nbr, D->nbc);
    const int64_t *cp;
    const int32_t *ri;
    SBM__TRY(sbm__cbc_pattern_to_host(ctx, D, &cp, &ri));
    sbm_status st = SBM_SUCCESS;
    for (int64_t j = 0; j < D->nbc && st == SBM_SUCCESS; j++) {
        for (int64_t p = cp[j]; p < cp[j + 1]; p++) {
            if (ri[p] != j) {
                st = sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                                "argument D: block (%" PRId32 ", %" PRId64 ") is off the diagonal "
                                "(a block-diagonal matrix stores only blocks (j, j))",
                                ri[p], j);
                break;
            }
        }
        if (st == SBM_SUCCESS && need_all && cp[j + 1] == cp[j])
            st = sbm__error(ctx, SBM_ERR_NOT_POSITIVE_DEFINITE,
                            "argument D: diagonal block %" PRId64 " is not stored (a zero block is "
                            "not positive definite)",
                            j);
    }
    sbm__cbc_pattern_release(ctx, D, cp, ri);
    return st;
}

/* X must have the pattern and shape of R (X == R allowed). */
static sbm_status check_same_pattern(sbm_ctx *ctx, const char *xname, const sbm_cbc *X,
                                     const char *rname, const sbm_cbc *R)
{
    if (X == R || X->pattern_id == R->pattern_id) return SBM_SUCCESS;
    if (X->r != R->r || X->c != R->c)
        return sbm__error(ctx, SBM_ERR_BLOCK_SHAPE,
                          "argument %s: blocks are %dx%d but %s has %dx%d blocks", xname, X->r,
                          X->c, rname, R->r, R->c);
    if (X->nbr != R->nbr || X->nbc != R->nbc)
        return sbm__error(ctx, SBM_ERR_DIMENSION_MISMATCH,
                          "argument %s: %" PRId64 " x %" PRId64 " blocks but %s is %" PRId64
                          " x %" PRId64 " blocks",
                          xname, X->nbr, X->nbc, rname, R->nbr, R->nbc);
    if (X->nnzb != R->nnzb)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument %s: %" PRId64 " stored blocks but %s has %" PRId64
                          " (it must have %s's pattern)",
                          xname, X->nnzb, rname, R->nnzb, rname);
    const int64_t *xp = NULL, *rp = NULL;
    const int32_t *xi = NULL, *ri = NULL;
    sbm_status st = sbm__cbc_pattern_to_host(ctx, X, &xp, &xi);
    if (st != SBM_SUCCESS) return st;
    st = sbm__cbc_pattern_to_host(ctx, R, &rp, &ri);
    if (st != SBM_SUCCESS) {
        sbm__cbc_pattern_release(ctx, X, xp, xi);
        return st;
    }
    for (int64_t j = 0; j < X->nbc && st == SBM_SUCCESS; j++) {
        if (xp[j + 1] != rp[j + 1]) {
            st = sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                            "argument %s: its pattern differs from %s's (column pointer %" PRId64
                            " is %" PRId64 ", in %s %" PRId64 ")",
                            xname, rname, j + 1, xp[j + 1], rname, rp[j + 1]);
            break;
        }
        for (int64_t p = xp[j]; p < xp[j + 1]; p++) {
            if (xi[p] != ri[p]) {
                st = sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                                "argument %s: its pattern differs from %s's (block %" PRId64
                                " of column %" PRId64 " is in block row %" PRId32 ", in %s %" PRId32
                                ")",
                                xname, rname, p, j, xi[p], rname, ri[p]);
                break;
            }
        }
    }
    sbm__cbc_pattern_release(ctx, R, rp, ri);
    sbm__cbc_pattern_release(ctx, X, xp, xi);
    return st;
}

/* sbm__bdiag_inverse's assumptions, checked; known_bdiag: the caller (inside the library)
 * vouches that D is block diagonal with every diagonal block stored, so the pattern check, a
 * download on a device backend, is skipped. */
static sbm_status check_inverse(sbm_ctx *ctx, const sbm_cbc *D, sbm_cbc *Dinv, int known_bdiag)
{
    SBM__TRY(sbm__check_cbc_arg(ctx, "D", D));
    SBM__TRY(sbm__check_cbc_arg(ctx, "Dinv", Dinv));
    if (!known_bdiag) SBM__TRY(check_bdiag(ctx, D, 1));
    return check_same_pattern(ctx, "Dinv", Dinv, "D", D);
}

sbm_status sbm__bdiag_inverse(sbm_ctx *ctx, const sbm_cbc *D, sbm_cbc *Dinv)
{
    if (!ctx->ops->bdiag_inverse)
        return sbm__error(ctx, SBM_ERR_NOT_SUPPORTED,
                          "the block-diagonal inverse is not available on the %s backend",
                          ctx->ops->name);
    return ctx->ops->bdiag_inverse(ctx, D, Dinv);
}

sbm_status sbm_bdiag_inverse(sbm_ctx *ctx, const sbm_cbc *D, sbm_cbc *Dinv)
{
    SBM__ENTER(ctx, "sbm_bdiag_inverse");
    SBM__TRY(check_inverse(ctx, D, Dinv, 0));
    return sbm__bdiag_inverse(ctx, D, Dinv);
}

sbm_status sbm__bdiag_inverse_checked(sbm_ctx *ctx, const sbm_cbc *D, sbm_cbc *Dinv)
{
    SBM__ENTER(ctx, "sbm_bdiag_inverse");
    SBM__TRY(check_inverse(ctx, D, Dinv, 1));
    return sbm__bdiag_inverse(ctx, D, Dinv);
}

/* sbm__bdiag_scale's assumptions, checked; known_bdiag as for check_inverse (without the need
 * for every diagonal block). */
static sbm_status check_scale(sbm_ctx *ctx, sbm_side side, const sbm_cbc *D, const sbm_cbc *A,
                              const sbm_cbc *B, int known_bdiag)
{
    SBM__TRY(sbm__check_cbc_arg(ctx, "D", D));
    SBM__TRY(sbm__check_cbc_arg(ctx, "A", A));
    SBM__TRY(sbm__check_cbc_arg(ctx, "B", B));
    if (side != SBM_SIDE_LEFT && side != SBM_SIDE_RIGHT)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument side: %d is not a side (SBM_SIDE_LEFT or SBM_SIDE_RIGHT)",
                          (int)side);
    if (B == D || B->values == D->values)
        return sbm__error(ctx, SBM_ERR_ALIASING,
                          "argument B is the same matrix as (or shares values with) argument D");
    if (D->r != D->c)
        return sbm__error(ctx, SBM_ERR_BLOCK_SHAPE,
                          "argument D: blocks are %dx%d, a block-diagonal matrix needs square blocks",
                          D->r, D->c);
    const int left = side == SBM_SIDE_LEFT;
    const int a_dim = left ? A->r : A->c;
    const int64_t a_nb = left ? A->nbr : A->nbc;
    if (D->r != a_dim)
        return sbm__error(ctx, SBM_ERR_BLOCK_SHAPE,
                          "argument D: %dx%d blocks cannot scale the %s of A's %dx%d blocks "
                          "(side %s needs D's block size = A's block %s)",
                          D->r, D->c, left ? "rows" : "columns", A->r, A->c,
                          left ? "SBM_SIDE_LEFT" : "SBM_SIDE_RIGHT", left ? "rows" : "columns");
    if (D->nbr != a_nb || D->nbc != a_nb)
        return sbm__error(ctx, SBM_ERR_DIMENSION_MISMATCH,
                          "argument D: %" PRId64 " x %" PRId64 " blocks but A has %" PRId64
                          " block %s (A is %" PRId64 " x %" PRId64 " blocks, side %s)",
                          D->nbr, D->nbc, a_nb, left ? "rows" : "columns", A->nbr, A->nbc,
                          left ? "SBM_SIDE_LEFT" : "SBM_SIDE_RIGHT");
    if (!known_bdiag) SBM__TRY(check_bdiag(ctx, D, 0));
    return SBM_SUCCESS;
}

sbm_status sbm__bdiag_scale(sbm_ctx *ctx, sbm_side side, const sbm_cbc *D, const sbm_cbc *A,
                            sbm_cbc *B)
{
    SBM__TRY(check_same_pattern(ctx, "B", B, "A", A));
    if (!ctx->ops->bdiag_scale)
        return sbm__error(ctx, SBM_ERR_NOT_SUPPORTED,
                          "the block-diagonal scaling is not available on the %s backend",
                          ctx->ops->name);
    return ctx->ops->bdiag_scale(ctx, side, D, A, B);
}

sbm_status sbm_bdiag_scale(sbm_ctx *ctx, sbm_side side, const sbm_cbc *D, const sbm_cbc *A,
                           sbm_cbc *B)
{
    SBM__ENTER(ctx, "sbm_bdiag_scale");
    SBM__TRY(check_scale(ctx, side, D, A, B, 0));
    return sbm__bdiag_scale(ctx, side, D, A, B);
}

sbm_status sbm__bdiag_scale_checked(sbm_ctx *ctx, sbm_side side, const sbm_cbc *D,
                                    const sbm_cbc *A, sbm_cbc *B)
{
    SBM__ENTER(ctx, "sbm_bdiag_scale");
    SBM__TRY(check_scale(ctx, side, D, A, B, 1));
    return sbm__bdiag_scale(ctx, side, D, A, B);
}
