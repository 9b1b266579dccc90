/* Shared machinery of the BA and SLAM solvers: memory and transfers, the symmetric product with
 * an upper-stored block matrix, preconditioned conjugate gradients, dense Cholesky (LAPACKE) and
 * a host block-Jacobi preconditioner.
 *
 * PCG keeps its vectors on the host: the unknowns of a reduced camera system or a pose graph
 * number thousands to tens of thousands, so moving x and A*x once per iteration costs little next
 * to the block SpMV, which runs on the context's backend. */
#define _POSIX_C_SOURCE 199309L

#include "solve_internal.h"

#include <inttypes.h>
#include <lapacke.h>
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
    if (opt->callback) opt->callback(opt->user, rep);
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
        const char *fn = ctx->fn;
        st = sbm__nested(ctx, fn,
                            sbm_cbc_from_triplets(ctx, &s->D, A->nbr, A->nbc, A->r, A->c, ndiag,
                                                  drow, dcol, zeros));
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
    const char *fn = ctx->fn;
    if (s->block_diagonal)
        return sbm__nested(ctx, fn, sbm_cbc_spmv(ctx, SBM_OP_N, 1.0, s->A, x, 0.0, y));
    /* y = A x + A^T x - D x, accumulated in y through the SpMV's beta */
    SBM__TRY(sbm__nested(ctx, fn, sbm_cbc_spmv(ctx, SBM_OP_N, 1.0, s->A, x, 0.0, y)));
    SBM__TRY(sbm__nested(ctx, fn, sbm_cbc_spmv(ctx, SBM_OP_T, 1.0, s->A, x, 1.0, y)));
    return sbm__nested(ctx, fn, sbm_cbc_spmv(ctx, SBM_OP_N, -1.0, s->D, x, 1.0, y));
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

static double dot(int64_t n, const double *a, const double *b)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

sbm_status sbm__pcg(sbm_ctx *ctx, int64_t n, sbm__apply_fn apply, void *apply_data,
                    sbm__apply_fn precond, void *precond_data, const double *h_b, double *h_x,
                    int max_it, double tol, int *iterations, double *rel_residual)
{
    *iterations = 0;
    *rel_residual = 0.0;
    for (int64_t i = 0; i < n; i++) h_x[i] = 0.0;
    const double bnorm = sqrt(dot(n, h_b, h_b));
    if (n == 0 || bnorm == 0.0) return SBM_SUCCESS;
    double *r = sbm__host_alloc(ctx, (size_t)n * 4 * sizeof(double), "PCG vectors");
    if (!r) return SBM_ERR_OUT_OF_MEMORY;
    double *z = r + n, *p = z + n, *q = p + n;
    sbm_status st = SBM_SUCCESS;
    memcpy(r, h_b, (size_t)n * sizeof(double));
    if (precond) {
        if ((st = precond(ctx, precond_data, r, z)) != SBM_SUCCESS) goto done;
    } else {
        memcpy(z, r, (size_t)n * sizeof(double));
    }
    memcpy(p, z, (size_t)n * sizeof(double));
    double rz = dot(n, r, z);
    double rnorm = bnorm;
    int it = 0;
    while (it < max_it) {
        if ((st = apply(ctx, apply_data, p, q)) != SBM_SUCCESS) goto done;
        it++;
        const double pq = dot(n, p, q);
        if (!(pq > 0.0)) break; /* breakdown: the matrix is not positive definite along p */
        const double alpha = rz / pq;
        for (int64_t i = 0; i < n; i++) h_x[i] += alpha * p[i], r[i] -= alpha * q[i];
        rnorm = sqrt(dot(n, r, r));
        if (rnorm <= tol * bnorm) break;
        if (precond) {
            if ((st = precond(ctx, precond_data, r, z)) != SBM_SUCCESS) goto done;
        } else {
            memcpy(z, r, (size_t)n * sizeof(double));
        }
        const double rz_new = dot(n, r, z);
        const double beta = rz_new / rz;
        rz = rz_new;
        for (int64_t i = 0; i < n; i++) p[i] = z[i] + beta * p[i];
    }
    *iterations = it;
    *rel_residual = rnorm / bnorm;
done:
    sbm__host_free(ctx, r);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Dense Cholesky                                                                           */
/* ---------------------------------------------------------------------------------------- */

/* The largest n for which n*n doubles are formed (8 GB would be the caller's mistake). */
#define DENSE_MAX_N 30000

sbm_status sbm__dense_spd_solve(sbm_ctx *ctx, const sbm_cbc *A, const double *h_b, double *h_x)
{
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
    const int r = A->r;
    const size_t bs = (size_t)r * (size_t)r;
    const int64_t *cp;
    const int32_t *ri;
    SBM__TRY(sbm__cbc_pattern_to_host(ctx, A, &cp, &ri));
    sbm_status st = SBM_SUCCESS;
    double *vals = NULL;
    double *M = sbm__host_alloc(ctx, (size_t)n * (size_t)n * sizeof(double), "dense matrix");
    if (!M) {
        st = SBM_ERR_OUT_OF_MEMORY;
        goto done;
    }
    if (A->backend == SBM_BACKEND_CPU) {
        vals = A->values;
    } else {
        vals = sbm__host_alloc(ctx, (size_t)A->nnzb * bs * sizeof(double), "matrix values");
        if (!vals) {
            st = SBM_ERR_OUT_OF_MEMORY;
            goto done;
        }
        if ((st = sbm__vec_download(ctx, vals, A->values, A->nnzb * (int64_t)bs)) != SBM_SUCCESS)
            goto done;
    }
    memset(M, 0, (size_t)n * (size_t)n * sizeof(double));
    /* The lower triangle is what dpotrf('L') reads: diagonal blocks as stored, the transposes
     * of the upper blocks below the diagonal. */
    for (int64_t j = 0; j < A->nbc; j++)
        for (int64_t k = cp[j]; k < cp[j + 1]; k++) {
            const int64_t i = ri[k];
            const double *blk = vals + (size_t)k * bs;
            for (int c = 0; c < r; c++)
                for (int q = 0; q < r; q++) {
                    const int64_t row = i * r + q, col = j * r + c;
                    M[row + col * n] = blk[q + c * r];
                    M[col + row * n] = blk[q + c * r];
                }
        }
    lapack_int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (lapack_int)n, M, (lapack_int)n);
    if (info != 0) {
        st = sbm__error(ctx, SBM_ERR_NOT_POSITIVE_DEFINITE,
                        "dense Cholesky of the %" PRId64 " x %" PRId64
                        " system failed at column %d (dpotrf info %d)",
                        n, n, (int)info, (int)info);
        goto done;
    }
    memcpy(h_x, h_b, (size_t)n * sizeof(double));
    info = LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', (lapack_int)n, 1, M, (lapack_int)n, h_x,
                          (lapack_int)n);
    if (info != 0)
        st = sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "dpotrs failed (info %d)", (int)info);
done:
    if (vals && vals != A->values) sbm__host_free(ctx, vals);
    if (M) sbm__host_free(ctx, M);
    sbm__cbc_pattern_release(ctx, A, cp, ri);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Small dense blocks                                                                       */
/* ---------------------------------------------------------------------------------------- */

int sbm__chol(int n, double *a)
{
    for (int j = 0; j < n; j++) {
        double d = a[j + j * n];
        for (int k = 0; k < j; k++) d -= a[j + k * n] * a[j + k * n];
        if (!(d > 0.0) || !isfinite(d)) return -1;
        d = sqrt(d);
        a[j + j * n] = d;
        for (int i = j + 1; i < n; i++) {
            double s = a[i + j * n];
            for (int k = 0; k < j; k++) s -= a[i + k * n] * a[j + k * n];
            a[i + j * n] = s / d;
        }
        for (int i = 0; i < j; i++) a[i + j * n] = 0.0;
    }
    return 0;
}

void sbm__chol_inverse(int n, const double *l, double *inv)
{
    /* Columns of (L L^T)^-1 by forward and back substitution of unit vectors. */
    for (int c = 0; c < n; c++) {
        double *x = inv + c * n;
        for (int i = 0; i < n; i++) {
            double s = i == c ? 1.0 : 0.0;
            for (int k = 0; k < i; k++) s -= l[i + k * n] * x[k];
            x[i] = s / l[i + i * n];
        }
        for (int i = n - 1; i >= 0; i--) {
            double s = x[i];
            for (int k = i + 1; k < n; k++) s -= l[k + i * n] * x[k];
            x[i] = s / l[i + i * n];
        }
    }
}

sbm_status sbm__host_bjacobi_init(sbm_ctx *ctx, int64_t nb, int b, const double *blocks,
                                  sbm__host_bjacobi *p)
{
    memset(p, 0, sizeof *p);
    p->nb = nb;
    p->b = b;
    p->a = sbm__host_allocator_of(ctx);
    const size_t bs = (size_t)b * (size_t)b;
    p->inv = sbm__alloc_with(ctx, &p->a, (size_t)nb, bs * sizeof(double), "preconditioner blocks");
    if (!p->inv) return ctx->last_status;
    double l[SBM_MAX_BLOCK_DIM * SBM_MAX_BLOCK_DIM];
    for (int64_t k = 0; k < nb; k++) {
        const double *blk = blocks + (size_t)k * bs;
        double dmax = 0.0;
        for (int i = 0; i < b; i++) dmax = fmax(dmax, fabs(blk[i + i * b]));
        double shift = 0.0;
        int ok = 0;
        for (int attempt = 0; attempt < 30 && !ok; attempt++) {
            memcpy(l, blk, bs * sizeof(double));
            for (int i = 0; i < b; i++) l[i + i * b] += shift;
            ok = sbm__chol(b, l) == 0;
            shift = shift == 0.0 ? 1e-12 * (dmax > 0.0 ? dmax : 1.0) : shift * 10.0;
        }
        double *inv = p->inv + (size_t)k * bs;
        if (ok) {
            sbm__chol_inverse(b, l, inv);
        } else {
            memset(inv, 0, bs * sizeof(double));
            for (int i = 0; i < b; i++) inv[i + i * b] = 1.0;
        }
    }
    return SBM_SUCCESS;
}

sbm_status sbm__host_bjacobi_apply(sbm_ctx *ctx, void *data, const double *h_x, double *h_y)
{
    (void)ctx;
    const sbm__host_bjacobi *p = data;
    const int b = p->b;
    const size_t bs = (size_t)b * (size_t)b;
    for (int64_t k = 0; k < p->nb; k++) {
        const double *inv = p->inv + (size_t)k * bs;
        const double *x = h_x + k * b;
        double *y = h_y + k * b;
        for (int i = 0; i < b; i++) {
            double s = 0.0;
            for (int c = 0; c < b; c++) s += inv[i + c * b] * x[c];
            y[i] = s;
        }
    }
    return SBM_SUCCESS;
}

void sbm__host_bjacobi_free(sbm__host_bjacobi *p)
{
    sbm__free_with(&p->a, p->inv);
    memset(p, 0, sizeof *p);
}
