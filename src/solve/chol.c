/* SPDX-License-Identifier: BSD-3-Clause */
/* Front end of the sparse block Cholesky (sbm_chol_*): argument checks, the symbolic analysis
 * (chol_order.c, chol_symbolic.c) and dispatch of the numeric phase to the backend. */
#include "chol_symbolic.h"
#include "solve_internal.h"
#include "solve_kernels.h"

#include <inttypes.h>
#include <math.h>

struct sbm_chol {
    sbm_backend backend;           /* backend that planned it */
    int device;                    /* its device */
    const char *backend_name;      /* its name, for messages */
    const sbm__solve_kernels *kernels; /* that backend's solve table (numeric phase, destroy) */
    sbm__chol_symbolic *sym;       /* symbolic structure (host) */
    sbm__chol_numeric *num;        /* the backend's factor */
    uint64_t pattern_id;           /* A's pattern at plan time */
    uint64_t pattern_hash;         /* its fingerprint */
    int64_t failed_column;         /* A's block column of the last failure, or -1 */
    int factored;                  /* 1 after a successful factorisation not followed by a failure */
    double *Z;                     /* host: the selected inverse of the factor (chol_selinv's
                                    * layout), allocated at the first sbm_chol_inverse_* */
    int z_valid;                   /* Z is that of the current factor */
    sbm_allocator alloc;           /* allocator of this struct and of Z */
};

sbm_chol_options sbm_chol_default_options(void)
{
    sbm_chol_options o;
    o.ordering = SBM_CHOL_ORDERING_AMD;
    o.relax_zeros = 0.2;
    o.relax_max_columns = 64;
    return o;
}

static sbm_status check_options(sbm_ctx *ctx, const sbm_chol_options *o)
{
    if (o->ordering != SBM_CHOL_ORDERING_AMD && o->ordering != SBM_CHOL_ORDERING_NATURAL)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "options->ordering: %d is not an ordering (SBM_CHOL_ORDERING_AMD or "
                          "SBM_CHOL_ORDERING_NATURAL)",
                          (int)o->ordering);
    if (!(o->relax_zeros >= 0 && o->relax_zeros <= 1))
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "options->relax_zeros: %g is outside [0, 1]", o->relax_zeros);
    if (o->relax_max_columns < 1)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "options->relax_max_columns: %" PRId64 " is less than 1",
                          o->relax_max_columns);
    return SBM_SUCCESS;
}

/* A is a square block matrix with square blocks whose scalar size fits the BLAS indices. */
static sbm_status check_square(sbm_ctx *ctx, const sbm_cbc *A)
{
    SBM__TRY(sbm__check_cbc_arg(ctx, "A", A));
    if (A->r != A->c)
        return sbm__error(ctx, SBM_ERR_BLOCK_SHAPE,
                          "argument A: blocks are %dx%d, the Cholesky needs square blocks", A->r,
                          A->c);
    if (A->nbr != A->nbc)
        return sbm__error(ctx, SBM_ERR_DIMENSION_MISMATCH,
                          "argument A: %" PRId64 " x %" PRId64 " blocks is not square", A->nbr,
                          A->nbc);
    if (A->nbc > INT32_MAX / A->c)
        return sbm__error(ctx, SBM_ERR_OVERFLOW,
                          "argument A: %" PRId64 " block columns of %d exceed 2^31-1 scalar rows",
                          A->nbc, A->c);
    return SBM_SUCCESS;
}

void sbm_chol_destroy(sbm_chol *chol)
{
    if (!chol) return;
    if (chol->num) chol->kernels->chol_numeric_destroy(chol->num);
    sbm__chol_symbolic_free(chol->sym);
    sbm__free_with(&chol->alloc, chol->Z);
    chol->alloc.free(chol->alloc.user, chol);
}

static sbm_status plan(sbm_ctx *ctx, const sbm_cbc *A, const sbm_chol_options *o,
                       sbm_chol **out)
{
    SBM__TRY(check_square(ctx, A));
    SBM__TRY(check_options(ctx, o));
    SBM__TRY(sbm__cbc_check_upper(ctx, "A", A,
                                  "sbm_chol_plan takes the upper block triangle of A"));
    const sbm__solve_kernels *k = sbm__solve_kernels_of(ctx);
    if (!k || !k->chol_numeric_create || !k->chol_factor || !k->chol_solve ||
        !k->chol_selinv || !k->chol_numeric_destroy)
        return sbm__error(ctx, SBM_ERR_NOT_SUPPORTED,
                          "the sparse block Cholesky is not available on the %s backend",
                          ctx->ops->name);
    const sbm_allocator al = sbm__host_allocator_of(ctx);
    sbm_chol *c = sbm__alloc_with(ctx, &al, 1, sizeof *c, "Cholesky plan");
    if (!c) return SBM_ERR_OUT_OF_MEMORY;
    memset(c, 0, sizeof *c);
    c->alloc = al;
    c->backend = ctx->backend;
    c->device = ctx->device;
    c->backend_name = ctx->ops->name;
    c->kernels = k;
    c->pattern_id = A->pattern_id;
    c->failed_column = -1;
    sbm_status st = sbm__cbc_pattern_hash(ctx, A, &c->pattern_hash);
    const int64_t *cp = NULL;
    const int32_t *ri = NULL;
    if (st == SBM_SUCCESS) st = sbm__cbc_pattern_to_host(ctx, A, &cp, &ri);
    if (st == SBM_SUCCESS) {
        st = sbm__chol_analyse(ctx, A->nbc, A->r, cp, ri, o, &c->sym);
        sbm__cbc_pattern_release(ctx, A, cp, ri);
    }
    if (st == SBM_SUCCESS) st = k->chol_numeric_create(ctx, c->sym, &c->num);
    if (st != SBM_SUCCESS) {
        sbm_chol_destroy(c);
        return st;
    }
    *out = c;
    return SBM_SUCCESS;
}

sbm_status sbm_chol_plan(sbm_ctx *ctx, const sbm_cbc *A, const sbm_chol_options *options,
                         sbm_chol **chol)
{
    SBM__ENTER(ctx, "sbm_chol_plan");
    if (!chol) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument chol (output handle) is NULL");
    *chol = NULL;
    const sbm_chol_options defaults = sbm_chol_default_options();
    return plan(ctx, A, options ? options : &defaults, chol);
}

/* The context is the backend (and device) chol was planned on. */
static sbm_status check_backend(sbm_ctx *ctx, const sbm_chol *chol)
{
    if (chol->backend != ctx->backend ||
        (chol->backend == SBM_BACKEND_CUDA && chol->device != ctx->device))
        return sbm__error(ctx, SBM_ERR_BACKEND_MISMATCH,
                          "argument chol was planned on the %s backend (device %d), the context "
                          "is %s (device %d)",
                          chol->backend_name, chol->device, ctx->ops->name, ctx->device);
    return SBM_SUCCESS;
}

static const char *damping_name(sbm_damping d)
{
    return d == SBM_DAMPING_NONE ? "none" : d == SBM_DAMPING_IDENTITY ? "identity" : "diagonal";
}

sbm_status sbm__chol_factor(sbm_ctx *ctx, sbm_chol *chol, const sbm_cbc *A, sbm_damping damping,
                            double lambda)
{
    const sbm__chol_symbolic *s = chol->sym;
    int64_t failed = -1;
    chol->factored = 0;
    chol->z_valid = 0;
    chol->failed_column = -1;
    const sbm_status st = chol->kernels->chol_factor(ctx, s, chol->num, A, damping, lambda, &failed);
    if (st == SBM_ERR_NOT_POSITIVE_DEFINITE) {
        const int64_t col = failed >= 0 && failed < s->nb ? s->perm[failed] : -1;
        chol->failed_column = col;
        return sbm__error(ctx, SBM_ERR_NOT_POSITIVE_DEFINITE,
                          "A is not positive definite: block column %" PRId64 " (%dx%d blocks; "
                          "elimination step %" PRId64 " of %" PRId64 "; damping %s, lambda %g)",
                          col, s->b, s->b, failed + 1, s->nb, damping_name(damping), lambda);
    }
    if (st == SBM_SUCCESS) chol->factored = 1;
    return st;
}

sbm_status sbm_chol_factor(sbm_ctx *ctx, sbm_chol *chol, const sbm_cbc *A, sbm_damping damping,
                           double lambda)
{
    SBM__ENTER(ctx, "sbm_chol_factor");
    if (!chol) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument chol is NULL");
    SBM__TRY(check_backend(ctx, chol));
    SBM__TRY(check_square(ctx, A));
    if (damping != SBM_DAMPING_NONE && damping != SBM_DAMPING_IDENTITY &&
        damping != SBM_DAMPING_DIAGONAL)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument damping: %d is not a damping (SBM_DAMPING_NONE, "
                          "SBM_DAMPING_IDENTITY or SBM_DAMPING_DIAGONAL)",
                          (int)damping);
    if (!(lambda >= 0) || !isfinite(lambda))
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument lambda: %g is not a finite value >= 0", lambda);
    const sbm__chol_symbolic *s = chol->sym;
    if (A->nbc != s->nb || A->r != s->b)
        return sbm__error(ctx, SBM_ERR_PLAN_MISMATCH,
                          "argument A (%" PRId64 " x %" PRId64 " blocks of %dx%d) is not the size "
                          "the plan was made for (%" PRId64 " x %" PRId64 " blocks of %dx%d)",
                          A->nbr, A->nbc, A->r, A->c, s->nb, s->nb, s->b, s->b);
    SBM__TRY(sbm__cbc_check_pattern(ctx, "A", A, chol->pattern_id, chol->pattern_hash));
    return sbm__chol_factor(ctx, chol, A, damping, lambda);
}

/* Leading dimension ld of the n x nrhs array arg. */
static sbm_status check_ld(sbm_ctx *ctx, const char *arg, int64_t ld, int64_t n)
{
    if (ld < n || ld < 1 || ld > INT32_MAX)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument %s: %" PRId64 " is not a leading dimension for n = %" PRId64
                          " (needs n <= %s <= 2^31-1, and >= 1)",
                          arg, ld, n, arg);
    return SBM_SUCCESS;
}

sbm_status sbm__chol_solve(sbm_ctx *ctx, const sbm_chol *chol, int64_t nrhs, const double *B,
                           int64_t ldb, double *X, int64_t ldx)
{
    if (nrhs == 0 || chol->sym->n == 0) return SBM_SUCCESS;
    return chol->kernels->chol_solve(ctx, chol->sym, chol->num, nrhs, B, ldb, X, ldx);
}

sbm_status sbm_chol_solve(sbm_ctx *ctx, const sbm_chol *chol, int64_t nrhs, const double *B,
                          int64_t ldb, double *X, int64_t ldx)
{
    SBM__ENTER(ctx, "sbm_chol_solve");
    if (!chol) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument chol is NULL");
    SBM__TRY(check_backend(ctx, chol));
    const int64_t n = chol->sym->n;
    if (nrhs < 0 || nrhs > INT32_MAX)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument nrhs: %" PRId64 " is outside [0, 2^31-1]", nrhs);
    SBM__TRY(check_ld(ctx, "ldb", ldb, n));
    SBM__TRY(check_ld(ctx, "ldx", ldx, n));
    if (!chol->factored)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument chol has no factor: %s",
                          chol->failed_column >= 0 ? "the last sbm_chol_factor failed"
                                                   : "sbm_chol_factor was not called");
    if (nrhs == 0 || n == 0) return SBM_SUCCESS;
    if (!B) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument B is NULL");
    if (!X) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument X is NULL");
    const int64_t span_b = (nrhs - 1) * ldb + n, span_x = (nrhs - 1) * ldx + n;
    if ((X != B || ldx != ldb) &&
        sbm__ranges_overlap(B, sbm__dbytes(span_b), X, sbm__dbytes(span_x)))
        return sbm__error(ctx, SBM_ERR_ALIASING,
                          "argument X overlaps B without being B with the same leading dimension "
                          "(ldb %" PRId64 ", ldx %" PRId64 ")",
                          ldb, ldx);
    return sbm__chol_solve(ctx, chol, nrhs, B, ldb, X, ldx);
}

const sbm__chol_symbolic *sbm__chol_symbolic_of(const sbm_chol *chol) { return chol->sym; }

sbm_chol_info sbm_chol_get_info(const sbm_chol *chol)
{
    sbm_chol_info info;
    memset(&info, 0, sizeof info);
    info.failed_column = -1;
    if (!chol) return info;
    const sbm__chol_symbolic *s = chol->sym;
    info.block_columns = s->nb;
    info.block_size = s->b;
    info.supernodes = s->nsuper;
    info.factor_values = s->L_ptr[s->nsuper];
    info.max_front = s->max_front;
    info.flops = s->flops;
    info.perm = s->perm;
    info.failed_column = chol->failed_column;
    info.factored = chol->factored;
    return info;
}

/* ---------------------------------------------------------------------------------------- */
/* Selected inverse                                                                         */
/* ---------------------------------------------------------------------------------------- */

/* Offset in the factor values of the (0,0) scalar of block (r, c) of the new numbering, r >= c,
 * and its leading dimension; -1 when the block is outside the pattern of L. */
static int64_t inverse_block_at(const sbm__chol_symbolic *s, int64_t r, int64_t c, int64_t *ld)
{
    const int64_t p = s->col_sup[c];
    const int64_t *rows = s->sup_rows + s->sup_rowptr[p];
    int64_t lo = c - s->sup_col[p], hi = s->sup_rowptr[p + 1] - s->sup_rowptr[p];
    while (lo < hi) { /* rows ascending: the first >= r */
        const int64_t mid = lo + (hi - lo) / 2;
        if (rows[mid] < r) lo = mid + 1;
        else hi = mid;
    }
    if (lo == s->sup_rowptr[p + 1] - s->sup_rowptr[p] || rows[lo] != r) return -1;
    *ld = (s->sup_rowptr[p + 1] - s->sup_rowptr[p]) * s->b;
    return s->L_ptr[p] + (c - s->sup_col[p]) * s->b * *ld + lo * s->b;
}

int sbm_chol_inverse_in_pattern(const sbm_chol *chol, int64_t i, int64_t j)
{
    if (!chol) return 0;
    const sbm__chol_symbolic *s = chol->sym;
    if (i < 0 || j < 0 || i >= s->nb || j >= s->nb) return 0;
    const int64_t ni = s->iperm[i], nj = s->iperm[j];
    int64_t ld;
    return inverse_block_at(s, ni > nj ? ni : nj, ni > nj ? nj : ni, &ld) >= 0;
}

/* The checks every sbm_chol_inverse_* call shares, then the selected inverse of the current
 * factor into chol->Z unless it is there already. */
static sbm_status inverse_ready(sbm_ctx *ctx, sbm_chol *chol)
{
    if (!chol) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument chol is NULL");
    SBM__TRY(check_backend(ctx, chol));
    if (!chol->factored)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument chol has no factor: %s",
                          chol->failed_column >= 0 ? "the last sbm_chol_factor failed"
                                                   : "sbm_chol_factor was not called");
    const sbm__chol_symbolic *s = chol->sym;
    if (chol->z_valid || s->nb == 0) return SBM_SUCCESS;
    if (!chol->Z) {
        chol->Z = sbm__alloc_with(ctx, &chol->alloc, (size_t)s->L_ptr[s->nsuper], sizeof(double),
                                  "selected inverse of the Cholesky factor");
        if (!chol->Z) return SBM_ERR_OUT_OF_MEMORY;
    }
    SBM__TRY(chol->kernels->chol_selinv(ctx, s, chol->num, chol->Z));
    chol->z_valid = 1;
    return SBM_SUCCESS;
}

/* Block (i, j) of A^-1 (A's numbering, inside the pattern: checked) into the b x b column-major
 * out. */
static void inverse_block(const sbm_chol *chol, int64_t i, int64_t j, double *out)
{
    const sbm__chol_symbolic *s = chol->sym;
    const int64_t b = s->b, ni = s->iperm[i], nj = s->iperm[j];
    int64_t ld = 0;
    const int64_t at = inverse_block_at(s, ni > nj ? ni : nj, ni > nj ? nj : ni, &ld);
    const double *Zb = chol->Z + at; /* block (max, min) of the new numbering */
    for (int64_t c = 0; c < b; c++)
        for (int64_t r = 0; r < b; r++)
            out[c * b + r] = ni >= nj ? Zb[c * ld + r] : Zb[r * ld + c];
}

sbm_status sbm_chol_inverse_blocks(sbm_ctx *ctx, sbm_chol *chol, int64_t npairs,
                                   const int64_t *block_rows, const int64_t *block_cols,
                                   double *out)
{
    SBM__ENTER(ctx, "sbm_chol_inverse_blocks");
    if (!chol) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument chol is NULL");
    if (npairs < 0)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument npairs: %" PRId64 " is negative", npairs);
    if (npairs > 0 && !block_rows)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument block_rows is NULL");
    if (npairs > 0 && !block_cols)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument block_cols is NULL");
    if (npairs > 0 && !out) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument out is NULL");
    const int64_t nb = chol->sym->nb;
    for (int64_t t = 0; t < npairs; t++) {
        const int64_t i = block_rows[t], j = block_cols[t];
        if (i < 0 || i >= nb || j < 0 || j >= nb)
            return sbm__error(ctx, SBM_ERR_INDEX_OUT_OF_RANGE,
                              "pair %" PRId64 ": block (%" PRId64 ", %" PRId64 ") is outside the "
                              "%" PRId64 " x %" PRId64 " blocks of A",
                              t, i, j, nb, nb);
        if (!sbm_chol_inverse_in_pattern(chol, i, j))
            return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                              "pair %" PRId64 ": block (%" PRId64 ", %" PRId64 ") of A^-1 is "
                              "outside the pattern of the factor L (in its elimination order), "
                              "where the selected inverse is not computed",
                              t, i, j);
    }
    SBM__TRY(inverse_ready(ctx, chol));
    const int64_t bb = (int64_t)chol->sym->b * chol->sym->b;
    for (int64_t t = 0; t < npairs; t++)
        inverse_block(chol, block_rows[t], block_cols[t], out + t * bb);
    return SBM_SUCCESS;
}

sbm_status sbm_chol_inverse_diagonal(sbm_ctx *ctx, sbm_chol *chol, double *out)
{
    SBM__ENTER(ctx, "sbm_chol_inverse_diagonal");
    if (!chol) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument chol is NULL");
    const int64_t nb = chol->sym->nb, bb = (int64_t)chol->sym->b * chol->sym->b;
    if (nb > 0 && !out) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument out is NULL");
    SBM__TRY(inverse_ready(ctx, chol));
    for (int64_t i = 0; i < nb; i++) inverse_block(chol, i, i, out + i * bb);
    return SBM_SUCCESS;
}
