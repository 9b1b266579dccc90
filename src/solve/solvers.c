/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared machinery of the BA and SLAM solvers: the symmetric product with an upper-stored block
 * matrix, preconditioned conjugate gradients, dense Cholesky and block-diagonal helpers.
 *
 * PCG keeps its vectors in the context's memory, where the matrix lives, and moves them with the
 * backend's vector operations: an iteration sends nothing to the device and brings back only
 * the three scalars its dot products make. Dense Cholesky runs where the matrix lives too (the
 * backend's dense_spd_solve: LAPACKE on the CPU, cuSOLVER on CUDA): only the word naming a
 * failed column comes back. */
#define _POSIX_C_SOURCE 199309L

#include "solve_internal.h"
#include "solve_kernels.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void sbm__solver_end_iteration(sbm_ctx *ctx, const sbm_solver_options *opt, int it, double cost,
                               double t_it, sbm_iteration_report *rep, sbm_solver_summary *summary)
{
    rep->time_total = sbm__now(ctx, 1) - t_it;
    if (summary) {
        summary->iterations = it;
        summary->accepted += rep->accepted;
        summary->final_cost = cost;
        summary->time_linearize += rep->time_linearize;
        summary->time_schur += rep->time_schur;
        summary->time_solve += rep->time_solve;
        summary->time_update += rep->time_update;
    }
    if (!opt->callback) return;
    /* The callback may call the library with this context: those are the user's own calls,
     * named by themselves, and the solver's name and nesting come back afterwards. */
    const char *fn = ctx->fn;
    const int depth = ctx->depth;
    const char *nest_fn[SBM__NEST_MAX];
    memcpy(nest_fn, ctx->nest_fn, sizeof nest_fn);
    ctx->depth = 0;
    opt->callback(opt->user, rep);
    ctx->fn = fn;
    ctx->depth = depth;
    memcpy(ctx->nest_fn, nest_fn, sizeof nest_fn);
}

/* ---------------------------------------------------------------------------------------- */
/* Symmetric product with an upper-stored matrix                                            */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm__symup_init(sbm_ctx *ctx, const sbm_cbc *A, sbm__symup *s)
{
    memset(s, 0, sizeof *s);
    s->A = A;
    s->host_alloc = sbm__host_allocator_of(ctx);
    if (A->nbr != A->nbc || A->r != A->c)
        return sbm__error(ctx, SBM_ERR_BLOCK_SHAPE,
                          "a symmetric matrix needs square blocks and as many block rows as "
                          "columns (it is %" PRId64 " x %" PRId64 " blocks of %dx%d)",
                          A->nbr, A->nbc, A->r, A->c);
    const int64_t *cp;
    const int32_t *ri;
    SBM__TRY(sbm__cbc_pattern_to_host(ctx, A, &cp, &ri));
    sbm_status st = SBM_SUCCESS;
    int32_t *drow = NULL, *dcol = NULL;
    double *zeros = NULL;
    s->diag_block = sbm__alloc_with(ctx, &s->host_alloc, (size_t)A->nbc + 1, sizeof(int64_t),
                                  "diagonal block positions");
    if (!s->diag_block) {
        st = ctx->last_status;
        goto done;
    }
    int64_t ndiag = 0;
    s->complete = 1;
    for (int64_t j = 0; j < A->nbc; j++) {
        s->diag_block[j] = -1;
        for (int64_t k = cp[j]; k < cp[j + 1]; k++) {
            if (ri[k] > j) {
                st = sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                                "the symmetric matrix must be stored as its upper block triangle, "
                                "but block column %" PRId64 " has a block in row %" PRId32,
                                j, ri[k]);
                goto done;
            }
            if (ri[k] == j) s->diag_block[j] = k, ndiag++;
        }
        if (s->diag_block[j] < 0) s->complete = 0;
    }
    s->block_diagonal = ndiag == A->nnzb;
    if (s->block_diagonal) {
        s->D = (sbm_cbc *)A;
    } else {
        drow = sbm__host_alloc(ctx, (size_t)(ndiag + 1) * sizeof(int32_t), "diagonal rows");
        dcol = drow ? sbm__host_alloc(ctx, (size_t)(ndiag + 1) * sizeof(int32_t), "diagonal cols")
                    : NULL;
        if (!dcol) {
            st = ctx->last_status;
            goto done;
        }
        const size_t bs = (size_t)A->r * (size_t)A->c;
        zeros = sbm__host_alloc(ctx, (size_t)(ndiag + 1) * bs * sizeof(double), "diagonal values");
        if (!zeros) {
            st = ctx->last_status;
            goto done;
        }
        memset(zeros, 0, (size_t)(ndiag + 1) * bs * sizeof(double));
        int64_t t = 0;
        for (int64_t j = 0; j < A->nbc; j++)
            if (s->diag_block[j] >= 0) drow[t] = dcol[t] = (int32_t)j, t++;
        st = SBM__NESTED(ctx, sbm_cbc_from_triplets(ctx, &s->D, A->nbr, A->nbc, A->r, A->c,
                                                    ndiag, drow, dcol, zeros));
        if (st != SBM_SUCCESS) goto done;
    }
done:
    if (zeros) sbm__host_free(ctx, zeros);
    if (drow) sbm__host_free(ctx, drow);
    if (dcol) sbm__host_free(ctx, dcol);
    sbm__cbc_pattern_release(ctx, A, cp, ri);
    if (st != SBM_SUCCESS) sbm__symup_free(s);
    return st;
}

sbm_status sbm__symup_refresh(sbm_ctx *ctx, sbm__symup *s)
{
    if (s->block_diagonal) return SBM_SUCCESS;
    const size_t bs = (size_t)s->A->r * (size_t)s->A->c;
    int64_t t = 0;
    /* One copy per diagonal block, from where A stores it to D's consecutive slots. */
    for (int64_t j = 0; j < s->A->nbc; j++) {
        if (s->diag_block[j] < 0) continue;
        SBM__TRY(sbm__vec_copy(ctx, s->D->values + (size_t)t * bs,
                                  s->A->values + (size_t)s->diag_block[j] * bs, (int64_t)bs));
        t++;
    }
    return SBM_SUCCESS;
}

sbm_status sbm__symup_multiply(sbm_ctx *ctx, sbm__symup *s, const double *x, double *y)
{
    /* A is square and D has its size; x and y are apart (the callers' own vectors) */
    if (s->block_diagonal)
        return SBM__INNER(ctx, "sbm_cbc_spmv", sbm__cbc_spmv(ctx, SBM_OP_N, 1.0, s->A, x, 0.0, y));
    /* y = A x + A^T x - D x, accumulated in y through the SpMV's beta */
    SBM__TRY(SBM__INNER(ctx, "sbm_cbc_spmv", sbm__cbc_spmv(ctx, SBM_OP_N, 1.0, s->A, x, 0.0, y)));
    SBM__TRY(SBM__INNER(ctx, "sbm_cbc_spmv", sbm__cbc_spmv(ctx, SBM_OP_T, 1.0, s->A, x, 1.0, y)));
    return SBM__INNER(ctx, "sbm_cbc_spmv", sbm__cbc_spmv(ctx, SBM_OP_N, -1.0, s->D, x, 1.0, y));
}

sbm_status sbm__symup_diag_inverse(sbm_ctx *ctx, const sbm__symup *s, sbm_cbc *Dinv)
{
    /* complete: D holds every diagonal block; Dinv is a copy of D */
    if (s->complete)
        return SBM__INNER(ctx, "sbm_bdiag_inverse", sbm__bdiag_inverse(ctx, s->D, Dinv));
    return SBM__NESTED(ctx, sbm_bdiag_inverse(ctx, s->D, Dinv));
}

void sbm__symup_free(sbm__symup *s)
{
    if (s->D && !s->block_diagonal) sbm_cbc_destroy(s->D);
    sbm__free_with(&s->host_alloc, s->diag_block);
    memset(s, 0, sizeof *s);
}

/* ---------------------------------------------------------------------------------------- */
/* Preconditioned conjugate gradients                                                       */
/* ---------------------------------------------------------------------------------------- */

/* z = M^-1 r, or z = r without a preconditioner. */
static sbm_status pcg_precond(sbm_ctx *ctx, int64_t n, sbm__apply_fn precond, void *data,
                              const double *r, double *z)
{
    if (precond) return precond(ctx, data, r, z);
    return sbm__vec_copy(ctx, z, r, n);
}

sbm_status sbm__pcg(sbm_ctx *ctx, int64_t n, sbm__apply_fn apply, void *apply_data,
                    sbm__apply_fn precond, void *precond_data, const double *b, double *x,
                    int max_it, double tol, int *iterations, double *rel_residual)
{
    *iterations = 0;
    *rel_residual = 0.0;
    double bnorm = 0.0;
    SBM__TRY(sbm__vec_zero(ctx, x, n));
    SBM__TRY(sbm__vec_nrm2(ctx, n, b, &bnorm));
    if (n == 0 || bnorm == 0.0) return SBM_SUCCESS;
    /* r, z, p, q: one allocation per solve, none per iteration */
    double *r = sbm__vec_alloc(ctx, 4 * n, "PCG vectors");
    if (!r) return ctx->last_status;
    double *z = r + n, *p = z + n, *q = p + n;
    sbm_status st;
    double rz = 0.0, rnorm = bnorm;
    int it = 0;
#define PCG_TRY(expr)                                     \
    do {                                                  \
        if ((st = (expr)) != SBM_SUCCESS) goto done;      \
    } while (0)
    PCG_TRY(sbm__vec_copy(ctx, r, b, n));
    PCG_TRY(pcg_precond(ctx, n, precond, precond_data, r, z));
    PCG_TRY(sbm__vec_copy(ctx, p, z, n));
    PCG_TRY(sbm__vec_dot(ctx, n, r, z, &rz));
    while (it < max_it) {
        double pq = 0.0, rz_new = 0.0;
        PCG_TRY(apply(ctx, apply_data, p, q));
        it++;
        PCG_TRY(sbm__vec_dot(ctx, n, p, q, &pq));
        if (!(pq > 0.0)) break; /* breakdown: the matrix is not positive definite along p */
        const double alpha = rz / pq;
        PCG_TRY(sbm__vec_axpy(ctx, n, alpha, p, x));
        PCG_TRY(sbm__vec_axpy(ctx, n, -alpha, q, r));
        PCG_TRY(sbm__vec_nrm2(ctx, n, r, &rnorm));
        if (rnorm <= tol * bnorm) break;
        PCG_TRY(pcg_precond(ctx, n, precond, precond_data, r, z));
        PCG_TRY(sbm__vec_dot(ctx, n, r, z, &rz_new));
        const double beta = rz_new / rz;
        rz = rz_new;
        PCG_TRY(sbm__vec_xpay(ctx, n, z, beta, p)); /* p = z + beta p */
    }
#undef PCG_TRY
    *iterations = it;
    *rel_residual = rnorm / bnorm;
done:
    sbm__free(ctx, r);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Dense Cholesky                                                                           */
/* ---------------------------------------------------------------------------------------- */

/* The largest n for which n*n doubles are formed (8 GB would be the caller's mistake). */
#define DENSE_MAX_N 30000

sbm_status sbm__dense_spd_solve_device(sbm_ctx *ctx, const sbm_cbc *A, const double *b,
                                       double *x, int64_t *failed)
{
    int64_t f = -1;
    if (failed) *failed = -1;
    const int64_t n = A->nbr * A->r;
    if (A->nbr != A->nbc || A->r != A->c)
        return sbm__error(ctx, SBM_ERR_BLOCK_SHAPE,
                          "dense Cholesky needs a square matrix with square blocks (it is %" PRId64
                          " x %" PRId64 " blocks of %dx%d)",
                          A->nbr, A->nbc, A->r, A->c);
    if (n > DENSE_MAX_N)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "dense Cholesky on %" PRId64 " unknowns (at most %d): use PCG", n,
                          DENSE_MAX_N);
    if (n == 0) return SBM_SUCCESS;
    const sbm__solve_kernels *k = sbm__solve_kernels_of(ctx);
    if (!k || !k->dense_spd_solve)
        return sbm__error(ctx, SBM_ERR_NOT_SUPPORTED,
                          "dense Cholesky is not available on the %s backend", ctx->ops->name);
    const sbm_status st = k->dense_spd_solve(ctx, A, b, x, &f);
    if (st != SBM_ERR_NOT_POSITIVE_DEFINITE) return st;
    if (failed) *failed = f;
    return sbm__error(ctx, SBM_ERR_NOT_POSITIVE_DEFINITE,
                      "dense Cholesky of the %" PRId64 " x %" PRId64
                      " system failed at column %" PRId64 " (block column %" PRId64
                      "): the matrix is not positive definite",
                      n, n, f, f / A->r);
}

sbm_status sbm__dense_spd_solve(sbm_ctx *ctx, const sbm_cbc *A, const double *h_b, double *h_x)
{
    int64_t failed;
    return sbm__dense_spd_solve_at(ctx, A, h_b, h_x, &failed);
}

sbm_status sbm__dense_spd_solve_at(sbm_ctx *ctx, const sbm_cbc *A, const double *h_b, double *h_x,
                                   int64_t *failed)
{
    *failed = -1;
    const int64_t n = A->nbr * A->r;
    /* b up, the solve where A lives, x down */
    double *d = sbm__vec_alloc(ctx, n > 0 ? n : 1, "dense Cholesky's vector");
    if (!d) return ctx->last_status;
    sbm_status st = sbm__vec_upload(ctx, d, h_b, n);
    if (st == SBM_SUCCESS) st = sbm__dense_spd_solve_device(ctx, A, d, d, failed);
    if (st == SBM_SUCCESS) st = sbm__vec_download(ctx, h_x, d, n);
    sbm__free(ctx, d);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Small dense blocks                                                                       */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm__bdiag_pattern_create(sbm_ctx *ctx, int64_t n, int b, sbm_cbc **D)
{
    int64_t *cp = sbm__host_alloc(ctx, (size_t)(n + 1) * sizeof(int64_t), "diagonal pattern");
    int32_t *ri = cp ? sbm__host_alloc(ctx, (size_t)(n + 1) * sizeof(int32_t), "diagonal rows")
                     : NULL;
    if (!ri) {
        if (cp) sbm__host_free(ctx, cp);
        return SBM_ERR_OUT_OF_MEMORY;
    }
    for (int64_t j = 0; j <= n; j++) cp[j] = j;
    for (int64_t j = 0; j < n; j++) ri[j] = (int32_t)j;
    sbm_status st = SBM__NESTED(ctx, sbm_cbc_create(ctx, D, n, n, b, b, cp, ri, NULL));
    sbm__host_free(ctx, cp);
    sbm__host_free(ctx, ri);
    return st;
}

sbm_status sbm__bdiag_apply(sbm_ctx *ctx, void *data, const double *x, double *y)
{
    /* PCG's vectors, apart, of Dinv's size */
    const sbm_cbc *Dinv = data;
    return SBM__INNER(ctx, "sbm_cbc_spmv", sbm__cbc_spmv(ctx, SBM_OP_N, 1.0, Dinv, x, 0.0, y));
}
