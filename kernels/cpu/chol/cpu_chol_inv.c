/* SPDX-License-Identifier: BSD-3-Clause */
/* Selected inversion of the sparse block Cholesky factor (the Takahashi recurrences): Z = A^-1
 * restricted to the pattern of L, supernode by supernode from the last (the root) to the first.
 * For a supernode s with panel [L_SS; L_RS] (L_SS its k x k lower triangle, L_RS the u x k rows
 * R below it) and Y = L_RS L_SS^-1:
 *     Z_RS = -Z_RR Y,        Z_SS = (L_SS L_SS^T)^-1 - Y^T Z_RS,
 * where Z_RR (the rows R against themselves) lies in the panels of s's ancestors, already
 * computed: the rows R of a supernode form a clique of the filled graph, so every block (r1,
 * r2) of R x R, r1 >= r2, is a block of L's pattern in the supernode of column r2.
 * Z is stored like L (chol_internal.h: panel s at L_ptr[s], m_s b x k_s b, leading dimension
 * m_s b), but its top k_s b x k_s b part is full (both triangles, exactly symmetric).
 * The CUDA backend runs this routine on a host copy of its factor (kernels/cuda/chol). */
#include "cpu_backend.h"
#include "solve_kernels.h"

#include <cblas.h>
#include <lapacke.h>
#include <string.h>

/* The lower triangle of the k x k top of the panel P (ld) mirrored into its upper triangle. */
static void mirror_lower(double *P, int64_t k, int64_t ld)
{
    for (int64_t j = 0; j < k; j++)
        for (int64_t i = j + 1; i < k; i++) P[i * ld + j] = P[j * ld + i];
}

/* Z_RR (u x u scalars, full, leading dimension u) of supernode s gathered from the panels of its
 * ancestors in Z. pos: ub entries of workspace. */
static void gather_zrr(const sbm__chol_symbolic *s, int64_t t, const double *Z, double *Zrr,
                       int64_t *pos)
{
    const int64_t b = s->b;
    const int64_t kb = s->sup_col[t + 1] - s->sup_col[t];
    const int64_t ub = s->sup_rowptr[t + 1] - s->sup_rowptr[t] - kb, u = ub * b;
    const int64_t *rows = s->sup_rows + s->sup_rowptr[t] + kb;
    for (int64_t v0 = 0; v0 < ub;) {
        const int64_t p = s->col_sup[rows[v0]];
        const int64_t *prow = s->sup_rows + s->sup_rowptr[p];
        const int64_t mp = (s->sup_rowptr[p + 1] - s->sup_rowptr[p]) * b;
        int64_t v1 = v0;
        while (v1 < ub && s->col_sup[rows[v1]] == p) v1++;
        /* rows[v0 ..] are rows of p's front (ascending in both lists) */
        for (int64_t w = v0, j = rows[v0] - s->sup_col[p]; w < ub; w++) {
            while (prow[j] < rows[w]) j++;
            pos[w] = j;
        }
        for (int64_t v = v0; v < v1; v++) {
            const double *Zp = Z + s->L_ptr[p] + (rows[v] - s->sup_col[p]) * b * mp;
            for (int64_t jj = 0; jj < b; jj++)
                for (int64_t w = v; w < ub; w++)
                    for (int64_t ii = 0; ii < b; ii++) {
                        const double z = Zp[jj * mp + pos[w] * b + ii];
                        Zrr[(v * b + jj) * u + w * b + ii] = z;
                        Zrr[(w * b + ii) * u + v * b + jj] = z;
                    }
        }
        v0 = v1;
    }
}

sbm_status sbm__chol_selinv_host(sbm_ctx *ctx, const sbm__chol_symbolic *s, const double *L,
                                 double *Z)
{
    const int64_t b = s->b;
    int64_t kmax = 0;
    for (int64_t t = 0; t < s->nsuper; t++)
        if ((s->sup_col[t + 1] - s->sup_col[t]) * b > kmax) kmax = (s->sup_col[t + 1] - s->sup_col[t]) * b;
    const int64_t mu = s->max_update;
    /* Zrr (mu^2), Y (mu x kmax), pos (mu / b int64) */
    const size_t cnt = (size_t)(mu * mu + mu * kmax + mu + 1);
    double *W = sbm__host_alloc(ctx, cnt * sizeof(double), "selected inversion workspace");
    if (!W) return SBM_ERR_OUT_OF_MEMORY;
    double *Zrr = W, *Y = W + mu * mu;
    int64_t *pos = (int64_t *)(Y + mu * kmax);
    for (int64_t t = s->nsuper - 1; t >= 0; t--) {
        const int64_t k = (s->sup_col[t + 1] - s->sup_col[t]) * b;
        const int64_t m = (s->sup_rowptr[t + 1] - s->sup_rowptr[t]) * b, u = m - k;
        const double *F = L + s->L_ptr[t];
        double *Zs = Z + s->L_ptr[t];
        for (int64_t j = 0; j < k; j++) memcpy(Zs + j * m + j, F + j * m + j, (size_t)(k - j) * sizeof(double));
        /* (L_SS L_SS^T)^-1, lower triangle; L_SS has a positive diagonal: dpotri cannot fail */
        LAPACKE_dpotri_work(LAPACK_COL_MAJOR, 'L', (lapack_int)k, Zs, (lapack_int)m);
        mirror_lower(Zs, k, m);
        if (u > 0) {
            gather_zrr(s, t, Z, Zrr, pos);
            for (int64_t j = 0; j < k; j++) memcpy(Y + j * u, F + j * m + k, (size_t)u * sizeof(double));
            cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasNoTrans, CblasNonUnit, (int)u,
                        (int)k, 1.0, F, (int)m, Y, (int)u);
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)u, (int)k, (int)u, -1.0, Zrr,
                        (int)u, Y, (int)u, 0.0, Zs + k, (int)m);
            cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int)k, (int)k, (int)u, -1.0, Y,
                        (int)u, Zs + k, (int)m, 1.0, Zs, (int)m);
            mirror_lower(Zs, k, m); /* exactly symmetric: the lower triangle wins */
        }
    }
    sbm__host_free(ctx, W);
    return SBM_SUCCESS;
}
