/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the sparse block Cholesky suites (test_chol.c, test_chol_errors.c,
 * test_chol_real.c): seeded random SPD block matrices with their dense form, a dense Cholesky
 * reference, and plan + factor + solve in a context. */
#ifndef SBM_CHOL_TEST_COMMON_H
#define SBM_CHOL_TEST_COMMON_H

#include "test_util.h"
#include "sbm_internal.h"
#include "chol_symbolic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Random SPD block matrices and the dense reference                                        */
/* ---------------------------------------------------------------------------------------- */

enum { PAT_RANDOM, PAT_BANDED, PAT_ARROW, PAT_GRID, PAT_PIECES, NPATTERNS };

/* An SPD matrix: its dense full form and the triplets of its upper block triangle. */
typedef struct spd_matrix {
    int64_t nb, n;
    int b;
    double *dense;     /* n x n, full symmetric */
    int64_t nt;        /* stored blocks */
    int32_t *brow, *bcol;
    double *vals;      /* nt b x b blocks */
} spd_matrix;

static inline int in_pattern(int pattern, int64_t i, int64_t j, int64_t nb, sbm_test_rng *g)
{
    const int64_t side = (int64_t)ceil(sqrt((double)nb));
    switch (pattern) {
    case PAT_RANDOM: return sbm_test_rng_uniform(g) < 0.15;
    case PAT_BANDED: return j - i <= 2;
    case PAT_ARROW: return i == 0; /* column 0 dense: much fill in the natural order */
    case PAT_GRID: return (j == i + 1 && j % side != 0) || j == i + side;
    default: return i % 3 == j % 3 && sbm_test_rng_uniform(g) < 0.4; /* three pieces */
    }
}

static inline void spd_free(spd_matrix *m)
{
    free(m->dense);
    free(m->brow);
    free(m->bcol);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* Blocks (i, j), i < j, of the pattern with random values, diagonal blocks (with_diag) random
 * symmetric and made diagonally dominant, so that the matrix is SPD. */
static inline spd_matrix spd_make(uint64_t seed, int64_t nb, int b, int pattern, int with_diag)
{
    spd_matrix m;
    memset(&m, 0, sizeof m);
    sbm_test_rng g = sbm_test_rng_seed(seed);
    m.nb = nb, m.b = b, m.n = nb * b;
    m.dense = calloc((size_t)(m.n * m.n + 1), sizeof(double));
    m.brow = malloc((size_t)(nb * nb + 1) * sizeof(int32_t));
    m.bcol = malloc((size_t)(nb * nb + 1) * sizeof(int32_t));
    const int64_t n = m.n;
    for (int64_t j = 0; j < nb; j++)
        for (int64_t i = 0; i <= j; i++) {
            if (i == j ? !with_diag : !in_pattern(pattern, i, j, nb, &g)) continue;
            m.brow[m.nt] = (int32_t)i;
            m.bcol[m.nt++] = (int32_t)j;
            for (int c = 0; c < b; c++)
                for (int r = 0; r < b; r++) {
                    if (i == j && r > c) continue;
                    const double v = sbm_test_rng_value(&g);
                    m.dense[(i * b + r) + (j * b + c) * n] = v;
                    m.dense[(j * b + c) + (i * b + r) * n] = v;
                }
        }
    for (int64_t r = 0; r < n && with_diag; r++) {
        double s = 0;
        for (int64_t c = 0; c < n; c++)
            if (c != r) s += fabs(m.dense[r + c * n]);
        m.dense[r + r * n] = s + 0.5 + sbm_test_rng_uniform(&g);
    }
    m.vals = malloc((size_t)(m.nt * b * b + 1) * sizeof(double));
    for (int64_t t = 0; t < m.nt; t++)
        for (int c = 0; c < b; c++)
            for (int r = 0; r < b; r++)
                m.vals[t * b * b + r + c * b] =
                    m.dense[(m.brow[t] * b + r) + (m.bcol[t] * b + c) * n];
    return m;
}

static inline sbm_cbc *spd_cbc(sbm_ctx *ctx, const spd_matrix *m)
{
    sbm_cbc *A = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_from_triplets(ctx, &A, m->nb, m->nb, m->b, m->b, m->nt, m->brow,
                                             m->bcol, m->vals));
    return A;
}

/* X = (M + damping)^-1 B by a dense Cholesky (n x n, column-major). @return 0, or -1 if not
 * positive definite. */
static inline int dense_solve(const double *M, int64_t n, int damping, double lambda, int64_t nrhs,
                       const double *B, double *X)
{
    double *L = malloc((size_t)(n * n + 1) * sizeof(double));
    memcpy(L, M, (size_t)(n * n) * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        const double d = M[i + i * n];
        if (damping == SBM_DAMPING_IDENTITY) L[i + i * n] += lambda;
        if (damping == SBM_DAMPING_DIAGONAL) L[i + i * n] += lambda * fmin(fmax(d, 1e-6), 1e32);
    }
    for (int64_t j = 0; j < n; j++) {
        double d = L[j + j * n];
        for (int64_t k = 0; k < j; k++) d -= L[j + k * n] * L[j + k * n];
        if (!(d > 0)) {
            free(L);
            return -1;
        }
        L[j + j * n] = sqrt(d);
        for (int64_t i = j + 1; i < n; i++) {
            double s = L[i + j * n];
            for (int64_t k = 0; k < j; k++) s -= L[i + k * n] * L[j + k * n];
            L[i + j * n] = s / L[j + j * n];
        }
    }
    for (int64_t r = 0; r < nrhs; r++) {
        double *x = X + r * n;
        memcpy(x, B + r * n, (size_t)n * sizeof(double));
        for (int64_t i = 0; i < n; i++) {
            for (int64_t k = 0; k < i; k++) x[i] -= L[i + k * n] * x[k];
            x[i] /= L[i + i * n];
        }
        for (int64_t i = n - 1; i >= 0; i--) {
            for (int64_t k = i + 1; k < n; k++) x[i] -= L[k + i * n] * x[k];
            x[i] /= L[i + i * n];
        }
    }
    free(L);
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Plan, factor and solve in a context                                                      */
/* ---------------------------------------------------------------------------------------- */

typedef struct solve_case {
    sbm_chol_options opt;
    int damping;
    double lambda;
    int64_t nrhs;
    int64_t ld_extra; /* ldb = ldx = n + ld_extra */
    int in_place;
} solve_case;

/* X (host, n x nrhs packed) = A^-1 B in ctx through sbm_chol_*. */
static inline void chol_solve_in(sbm_ctx *ctx, const sbm_cbc *A, const solve_case *c, const double *B,
                          int64_t n, double *X)
{
    const int64_t ld = n + c->ld_extra, nrhs = c->nrhs;
    sbm_chol *chol = NULL;
    SBM_ASSERT_OK(ctx, sbm_chol_plan(ctx, A, &c->opt, &chol));
    SBM_ASSERT_OK(ctx, sbm_chol_factor(ctx, chol, A, (sbm_damping)c->damping, c->lambda));
    const sbm_chol_info info = sbm_chol_get_info(chol);
    assert_int_equal(info.factored, 1);
    assert_int_equal(info.failed_column, -1);
    double *hb = calloc((size_t)(ld * nrhs + 1), sizeof(double));
    for (int64_t r = 0; r < nrhs; r++) memcpy(hb + r * ld, B + r * n, (size_t)n * sizeof(double));
    double *dB = sbm_test_vec_upload(ctx, hb, ld * nrhs);
    double *dX = c->in_place ? dB : sbm_test_vec_upload(ctx, hb, ld * nrhs);
    SBM_ASSERT_OK(ctx, sbm_chol_solve(ctx, chol, nrhs, dB, ld, dX, ld));
    double *hx = sbm_test_vec_download(ctx, dX, ld * nrhs);
    for (int64_t r = 0; r < nrhs; r++) memcpy(X + r * n, hx + r * ld, (size_t)n * sizeof(double));
    free(hx);
    free(hb);
    if (dX != dB) sbm__free(ctx, dX);
    sbm__free(ctx, dB);
    sbm_chol_destroy(chol);
}

/* The solution in e->ctx agrees with the dense reference and, on a device, with the CPU
 * backend's to 1e-10. */
static inline void check_case(sbm_test_env *e, const spd_matrix *m, const solve_case *c, const char *what)
{
    const int64_t n = m->n, nrhs = c->nrhs;
    double *B = sbm_test_random_vector(77 + (uint64_t)n, n * nrhs);
    double *X = malloc((size_t)(n * nrhs + 1) * sizeof(double));
    double *R = malloc((size_t)(n * nrhs + 1) * sizeof(double));
    assert_int_equal(dense_solve(m->dense, n, c->damping, c->lambda, nrhs, B, R), 0);
    sbm_cbc *A = spd_cbc(e->ctx, m);
    chol_solve_in(e->ctx, A, c, B, n, X);
    sbm_test_assert_near(X, R, n * nrhs, 1e-9, what);
    if (e->backend != SBM_BACKEND_CPU) {
        sbm_cbc *H = spd_cbc(e->host, m);
        double *XH = malloc((size_t)(n * nrhs + 1) * sizeof(double));
        chol_solve_in(e->host, H, c, B, n, XH);
        sbm_test_assert_near(X, XH, n * nrhs, 1e-10, what);
        free(XH);
        sbm_cbc_destroy(H);
    }
    sbm_cbc_destroy(A);
    free(B);
    free(X);
    free(R);
}

static inline solve_case default_case(void)
{
    solve_case c;
    memset(&c, 0, sizeof c);
    c.opt = sbm_chol_default_options();
    c.nrhs = 1;
    return c;
}

#endif /* SBM_CHOL_TEST_COMMON_H */
