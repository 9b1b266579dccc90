/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU numeric phase of the sparse block Cholesky: multifrontal factorisation in the supernodes'
 * postorder (A and the damping assembled into the panels, the children's update matrices added
 * by extend-add, dpotrf / dtrsm / dsyrk per front; update matrices on a stack), and the
 * supernodal forward and backward substitutions (dtrsm / dgemm on all right-hand sides at once).
 * Multithreading comes from OpenBLAS inside each call. */
#include "cpu_backend.h"
#include "solve_kernels.h"
#include "sbm_damp.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

struct sbm__chol_numeric {
    double *L;            /* the panels, L_ptr[nsuper] doubles */
    double *stack;        /* update matrices of the supernodes waiting for their parent */
    int64_t *entries;     /* [nsuper] supernodes on the stack, bottom first */
    int64_t *offsets;     /* [nsuper] their offsets in stack */
    sbm_allocator alloc;  /* of everything above and the struct */
};

/* Peak doubles of the update stack: a front's update is built above its children's, then moved
 * down over them once they are added. */
static int64_t stack_peak(const sbm__chol_symbolic *s, int64_t *entries, int64_t *offsets)
{
    int64_t top = 0, n = 0, peak = 0;
    for (int64_t t = 0; t < s->nsuper; t++) {
        const int64_t k = s->sup_col[t + 1] - s->sup_col[t];
        const int64_t u = (s->sup_rowptr[t + 1] - s->sup_rowptr[t] - k) * s->b;
        if (top + u * u > peak) peak = top + u * u;
        while (n > 0 && s->sup_parent[entries[n - 1]] == t) top = offsets[--n];
        if (u > 0) {
            entries[n] = t;
            offsets[n++] = top;
            top += u * u;
        }
    }
    return peak;
}

void sbm__cpu_chol_numeric_destroy(struct sbm__chol_numeric *num)
{
    if (!num) return;
    const sbm_allocator al = num->alloc;
    sbm__free_with(&al, num->L);
    sbm__free_with(&al, num->stack);
    sbm__free_with(&al, num->entries);
    sbm__free_with(&al, num->offsets);
    al.free(al.user, num);
}

sbm_status sbm__cpu_chol_numeric_create(sbm_ctx *ctx, const sbm__chol_symbolic *s,
                                        struct sbm__chol_numeric **out)
{
    *out = NULL;
    const sbm_allocator al = ctx->allocator;
    struct sbm__chol_numeric *num = sbm__alloc_with(ctx, &al, 1, sizeof *num, "Cholesky factor");
    if (!num) return SBM_ERR_OUT_OF_MEMORY;
    memset(num, 0, sizeof *num);
    num->alloc = al;
    const size_t ns = (size_t)s->nsuper;
    num->entries = sbm__alloc_with(ctx, &al, ns, sizeof(int64_t), "update stack entries");
    num->offsets = num->entries ? sbm__alloc_with(ctx, &al, ns, sizeof(int64_t), "update stack offsets")
                                : NULL;
    if (num->offsets) {
        const int64_t peak = stack_peak(s, num->entries, num->offsets);
        num->stack = sbm__alloc_with(ctx, &al, (size_t)peak, sizeof(double), "update matrices");
    }
    if (num->stack)
        num->L = sbm__alloc_with(ctx, &al, (size_t)s->L_ptr[s->nsuper], sizeof(double),
                                 "Cholesky factor values");
    if (!num->L) {
        sbm__cpu_chol_numeric_destroy(num);
        return SBM_ERR_OUT_OF_MEMORY;
    }
    *out = num;
    return SBM_SUCCESS;
}

/* L = A + damping, scattered into the zeroed panels. */
static void assemble_a(const sbm__chol_symbolic *s, double *L, const sbm_cbc *A,
                       sbm_damping damping, double lambda)
{
    const int b = s->b;
    memset(L, 0, (size_t)s->L_ptr[s->nsuper] * sizeof(double));
    for (int64_t t = 0; t < s->nnzb_A; t++) {
        const int64_t ld = (s->sup_rowptr[s->a_sup[t] + 1] - s->sup_rowptr[s->a_sup[t]]) * b;
        const double *src = A->values + t * b * b;
        double *dst = L + s->a_dst[t];
        for (int j = 0; j < b; j++)
            for (int i = 0; i < b; i++)
                dst[j * ld + i] += s->a_trans[t] ? src[i * b + j] : src[j * b + i];
    }
    if (damping == SBM_DAMPING_NONE) return;
    for (int64_t c = 0; c < s->nb; c++) {
        const int64_t t = s->col_sup[c], ld = (s->sup_rowptr[t + 1] - s->sup_rowptr[t]) * b;
        const int64_t o = (c - s->sup_col[t]) * b;
        double *d = L + s->L_ptr[t] + o * ld + o;
        for (int i = 0; i < b; i++) {
            const double v = d[i * ld + i];
            d[i * ld + i] = damping == SBM_DAMPING_IDENTITY ? v + lambda
                                                             : sbm_blk_marquardt(v, lambda);
        }
    }
}

/* Extend-add of child ch's update U (lower triangle) into front t: its panel F (in L) and its
 * update Ut. */
static void extend_add(const sbm__chol_symbolic *s, int64_t ch, const double *U, int64_t t,
                       double *F, double *Ut)
{
    const int64_t b = s->b;
    const int64_t kc = s->sup_col[ch + 1] - s->sup_col[ch];
    const int64_t uc = s->sup_rowptr[ch + 1] - s->sup_rowptr[ch] - kc; /* blocks */
    const int64_t kp = s->sup_col[t + 1] - s->sup_col[t];
    const int64_t mp = s->sup_rowptr[t + 1] - s->sup_rowptr[t];
    const int64_t *rel = s->rel + s->rel_ptr[ch];
    for (int64_t v = 0; v < uc; v++) {
        const int in_panel = rel[v] < kp;
        double *D = in_panel ? F : Ut;
        const int64_t ld = in_panel ? mp * b : (mp - kp) * b;
        const int64_t off = in_panel ? 0 : kp; /* block offset of D inside the front */
        for (int64_t jj = 0; jj < b; jj++) {
            const double *src = U + (v * b + jj) * (uc * b);
            double *col = D + ((rel[v] - off) * b + jj) * ld;
            for (int64_t u = v; u < uc; u++) {
                double *dst = col + (rel[u] - off) * b;
                for (int64_t ii = (u == v ? jj : 0); ii < b; ii++) dst[ii] += src[u * b + ii];
            }
        }
    }
}

/* First pivot of the k x k factored block F (ld) that is not finite, or -1. */
static int64_t nonfinite_pivot(const double *F, int64_t k, int64_t ld)
{
    for (int64_t i = 0; i < k; i++)
        if (!isfinite(F[i * ld + i])) return i;
    return -1;
}

sbm_status sbm__cpu_chol_factor(sbm_ctx *ctx, const sbm__chol_symbolic *s,
                                struct sbm__chol_numeric *num, const sbm_cbc *A,
                                sbm_damping damping, double lambda, int64_t *failed)
{
    *failed = -1;
    const sbm_status room = sbm__cpu_blas_room(ctx);
    if (room != SBM_SUCCESS) return room;
    const int64_t b = s->b;
    assemble_a(s, num->L, A, damping, lambda);
    int64_t top = 0, n = 0;
    for (int64_t t = 0; t < s->nsuper; t++) {
        const int64_t k = (s->sup_col[t + 1] - s->sup_col[t]) * b;
        const int64_t m = (s->sup_rowptr[t + 1] - s->sup_rowptr[t]) * b, u = m - k;
        double *F = num->L + s->L_ptr[t];
        double *Ut = num->stack + top;
        if (u > 0) memset(Ut, 0, (size_t)(u * u) * sizeof(double));
        int64_t base = top;
        while (n > 0 && s->sup_parent[num->entries[n - 1]] == t) {
            n--;
            extend_add(s, num->entries[n], num->stack + num->offsets[n], t, F, Ut);
            base = num->offsets[n];
        }
        if (u > 0 && base != top) memmove(num->stack + base, Ut, (size_t)(u * u) * sizeof(double));
        Ut = num->stack + base;
        top = base;
        lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', (lapack_int)k, F, (lapack_int)m);
        const int64_t bad = info > 0 ? (int64_t)info - 1 : nonfinite_pivot(F, k, m);
        if (bad >= 0) {
            *failed = s->sup_col[t] + bad / b;
            return SBM_ERR_NOT_POSITIVE_DEFINITE;
        }
        if (u == 0) continue;
        cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, (int)u,
                    (int)k, 1.0, F, (int)m, F + k, (int)m);
        cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, (int)u, (int)k, -1.0, F + k, (int)m,
                    1.0, Ut, (int)u);
        num->entries[n] = t;
        num->offsets[n++] = top;
        top += u * u;
    }
    return SBM_SUCCESS;
}

/* X (k x nrhs, ldx) = op(L)^-1 X for the lower triangular L (k x k, ld): the level-2 call for
 * one right-hand side (far less overhead on the small fronts of pose graphs). */
static void trsm(enum CBLAS_TRANSPOSE op, int64_t k, int64_t nrhs, const double *L, int64_t ld,
                 double *X, int64_t ldx)
{
    if (nrhs == 1)
        cblas_dtrsv(CblasColMajor, CblasLower, op, CblasNonUnit, (int)k, L, (int)ld, X, 1);
    else
        cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, op, CblasNonUnit, (int)k, (int)nrhs, 1.0,
                    L, (int)ld, X, (int)ldx);
}

/* C (m x nrhs) = alpha op(A) B + beta C, A stored m x k (op N) or k x m (op T). */
static void gemm(enum CBLAS_TRANSPOSE op, int64_t m, int64_t nrhs, int64_t k, double alpha,
                 const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C,
                 int64_t ldc)
{
    if (nrhs == 1)
        cblas_dgemv(CblasColMajor, op, (int)(op == CblasNoTrans ? m : k),
                    (int)(op == CblasNoTrans ? k : m), alpha, A, (int)lda, B, 1, beta, C, 1);
    else
        cblas_dgemm(CblasColMajor, op, CblasNoTrans, (int)m, (int)nrhs, (int)k, alpha, A, (int)lda,
                    B, (int)ldb, beta, C, (int)ldc);
}

sbm_status sbm__cpu_chol_solve(sbm_ctx *ctx, const sbm__chol_symbolic *s,
                               const struct sbm__chol_numeric *num, int64_t nrhs,
                               const double *B, int64_t ldb, double *X, int64_t ldx)
{
    const int64_t b = s->b, nn = s->n;
    if (nrhs == 0 || nn == 0) return SBM_SUCCESS;
    const sbm_status room = sbm__cpu_blas_room(ctx);
    if (room != SBM_SUCCESS) return room;
    int ok;
    const size_t cnt = sbm__mul_size(ctx, (size_t)(nn + s->max_update), (size_t)nrhs,
                                     "Cholesky solve workspace", &ok);
    if (!ok) return SBM_ERR_OVERFLOW;
    double *W = sbm__host_alloc(ctx, cnt * sizeof(double), "Cholesky solve workspace");
    if (!W) return SBM_ERR_OUT_OF_MEMORY;
    double *T = W + nn * nrhs; /* max_update x nrhs, gathered rows below a supernode */
    for (int64_t r = 0; r < nrhs; r++)
        for (int64_t k = 0; k < s->nb; k++)
            memcpy(W + r * nn + k * b, B + r * ldb + s->perm[k] * b, (size_t)b * sizeof(double));
    for (int64_t t = 0; t < s->nsuper; t++) { /* L y = P b */
        const int64_t k = (s->sup_col[t + 1] - s->sup_col[t]) * b;
        const int64_t m = (s->sup_rowptr[t + 1] - s->sup_rowptr[t]) * b, u = m - k;
        const double *F = num->L + s->L_ptr[t];
        double *Xs = W + s->sup_col[t] * b;
        trsm(CblasNoTrans, k, nrhs, F, m, Xs, nn);
        if (u == 0) continue;
        gemm(CblasNoTrans, u, nrhs, k, 1.0, F + k, m, Xs, nn, 0.0, T, u);
        const int64_t *rows = s->sup_rows + s->sup_rowptr[t] + k / b;
        for (int64_t r = 0; r < nrhs; r++)
            for (int64_t q = 0; q < u / b; q++)
                for (int64_t i = 0; i < b; i++) W[r * nn + rows[q] * b + i] -= T[r * u + q * b + i];
    }
    for (int64_t t = s->nsuper - 1; t >= 0; t--) { /* L^T z = y */
        const int64_t k = (s->sup_col[t + 1] - s->sup_col[t]) * b;
        const int64_t m = (s->sup_rowptr[t + 1] - s->sup_rowptr[t]) * b, u = m - k;
        const double *F = num->L + s->L_ptr[t];
        double *Xs = W + s->sup_col[t] * b;
        if (u > 0) {
            const int64_t *rows = s->sup_rows + s->sup_rowptr[t] + k / b;
            for (int64_t r = 0; r < nrhs; r++)
                for (int64_t q = 0; q < u / b; q++)
                    memcpy(T + r * u + q * b, W + r * nn + rows[q] * b, (size_t)b * sizeof(double));
            gemm(CblasTrans, k, nrhs, u, -1.0, F + k, m, T, u, 1.0, Xs, nn);
        }
        trsm(CblasTrans, k, nrhs, F, m, Xs, nn);
    }
    for (int64_t r = 0; r < nrhs; r++)
        for (int64_t k = 0; k < s->nb; k++)
            memcpy(X + r * ldx + s->perm[k] * b, W + r * nn + k * b, (size_t)b * sizeof(double));
    sbm__host_free(ctx, W);
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_chol_selinv(sbm_ctx *ctx, const sbm__chol_symbolic *s,
                                const struct sbm__chol_numeric *num, double *Z)
{
    return sbm__chol_selinv_host(ctx, s, num->L, Z); /* kernels/cpu/chol/cpu_chol_inv.c */
}
