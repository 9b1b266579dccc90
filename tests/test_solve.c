/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L /* setenv */
/* The solver layer's machinery: the backends' vector operations (against host references, CUDA
 * against the CPU backend, determinism), PCG in the context's memory (against dense Cholesky),
 * the transfer counter across PCG iterations, and nested calls' messages. */
#include "test_util.h"
#include "sbm_internal.h"
#include "solve_internal.h"
#include "cpu_backend.h"

#include <float.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Vectors in a context's memory                                                            */
/* ---------------------------------------------------------------------------------------- */

static double *ctx_vec(sbm_ctx *ctx, const double *h, int64_t n)
{
    double *d = sbm__vec_alloc(ctx, n, "test vector");
    assert_non_null(d);
    SBM_ASSERT_OK(ctx, sbm__vec_upload(ctx, d, h, n));
    return d;
}

static double *host_vec(sbm_ctx *ctx, const double *d, int64_t n)
{
    double *h = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    SBM_ASSERT_OK(ctx, sbm__vec_download(ctx, h, d, n));
    return h;
}

static const int64_t vec_sizes[] = {1, 2, 3, 5, 8, 1000, 70001}; /* 70001 > the CUDA dot grid */
static const int nvec_sizes = (int)(sizeof vec_sizes / sizeof vec_sizes[0]);

/* dot, nrm2, max |x|, axpy, xpay, scale, zero against host loops; the dot's bits repeat; on CUDA the dot
 * agrees with the CPU backend's to round-off. */
static void test_vec_ops(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (int t = 0; t < nvec_sizes; t++) {
        const int64_t n = vec_sizes[t];
        double *hx = sbm_test_random_vector(100 + (uint64_t)t, n);
        double *hy = sbm_test_random_vector(200 + (uint64_t)t, n);
        double *x = ctx_vec(e->ctx, hx, n), *y = ctx_vec(e->ctx, hy, n);

        double ref = 0.0, mag = 0.0;
        for (int64_t i = 0; i < n; i++) ref += hx[i] * hy[i], mag += fabs(hx[i] * hy[i]);
        double d1 = 0.0, d2 = 0.0, dh = 0.0, nrm = 0.0;
        SBM_ASSERT_OK(e->ctx, sbm__vec_dot(e->ctx, n, x, y, &d1));
        SBM_ASSERT_OK(e->ctx, sbm__vec_dot(e->ctx, n, x, y, &d2));
        assert_memory_equal(&d1, &d2, sizeof d1); /* same order every run */
        /* any order of the sum lies within n ulps of the magnitude of its terms */
        const double tol = 2.0 * (double)n * DBL_EPSILON * mag;
        if (fabs(d1 - ref) > tol)
            fail_msg("n = %lld: dot %.17g, reference %.17g", (long long)n, d1, ref);
        SBM_ASSERT_OK(e->host, sbm__vec_dot(e->host, n, hx, hy, &dh));
        if (fabs(d1 - dh) > tol)
            fail_msg("n = %lld: dot %.17g on %s, %.17g on the CPU backend", (long long)n, d1,
                     e->ctx->ops->name, dh);
        SBM_ASSERT_OK(e->ctx, sbm__vec_nrm2(e->ctx, n, x, &nrm));
        double xx = 0.0;
        SBM_ASSERT_OK(e->host, sbm__vec_dot(e->host, n, hx, hx, &xx));
        assert_true(fabs(nrm - sqrt(xx)) <= 2.0 * (double)n * DBL_EPSILON * sqrt(xx));

        /* max |x|: exact (no rounding), the largest entry put last to see the whole range */
        double amax_ref = 0.0, amax = -1.0;
        for (int64_t i = 0; i < n; i++) amax_ref = fmax(amax_ref, fabs(hx[i]));
        SBM_ASSERT_OK(e->ctx, sbm__vec_amax(e->ctx, n, x, &amax));
        if (amax != amax_ref)
            fail_msg("n = %lld: max |x| %.17g, reference %.17g", (long long)n, amax, amax_ref);
        const double big = -(amax_ref + 1.0), nan_v = NAN;
        SBM_ASSERT_OK(e->ctx, sbm__vec_upload(e->ctx, x + n - 1, &big, 1));
        SBM_ASSERT_OK(e->ctx, sbm__vec_amax(e->ctx, n, x, &amax));
        assert_true(amax == -big);
        SBM_ASSERT_OK(e->ctx, sbm__vec_upload(e->ctx, x + n / 2, &nan_v, 1));
        SBM_ASSERT_OK(e->ctx, sbm__vec_amax(e->ctx, n, x, &amax));
        if (!isnan(amax)) fail_msg("n = %lld: max |x| %.17g misses a NaN", (long long)n, amax);
        SBM_ASSERT_OK(e->ctx, sbm__vec_upload(e->ctx, x, hx, n));

        /* y += a x, then y = x + b y, then y *= c: each step against the host */
        const double a = 0.75, b = -1.25, c = 3.5;
        double *want = malloc((size_t)n * sizeof(double));
        for (int64_t i = 0; i < n; i++) want[i] = ((hy[i] + a * hx[i]) * b + hx[i]) * c;
        SBM_ASSERT_OK(e->ctx, sbm__vec_axpy(e->ctx, n, a, x, y));
        SBM_ASSERT_OK(e->ctx, sbm__vec_xpay(e->ctx, n, x, b, y));
        SBM_ASSERT_OK(e->ctx, sbm__vec_scale(e->ctx, n, c, y));
        double *got = host_vec(e->ctx, y, n);
        sbm_test_assert_near(got, want, n, 1e-14, "axpy, xpay, scale");
        free(got);

        SBM_ASSERT_OK(e->ctx, sbm__vec_zero(e->ctx, y, n));
        got = host_vec(e->ctx, y, n);
        for (int64_t i = 0; i < n; i++) assert_true(got[i] == 0.0);
        free(got);
        free(want);
        sbm__free(e->ctx, x);
        sbm__free(e->ctx, y);
        free(hx);
        free(hy);
    }
    /* empty vectors: nothing runs, the dot is zero */
    double d = 1.0;
    SBM_ASSERT_OK(e->ctx, sbm__vec_dot(e->ctx, 0, NULL, NULL, &d));
    assert_true(d == 0.0);
    d = 1.0;
    SBM_ASSERT_OK(e->ctx, sbm__vec_amax(e->ctx, 0, NULL, &d));
    assert_true(d == 0.0);
    SBM_ASSERT_OK(e->ctx, sbm__vec_axpy(e->ctx, 0, 1.0, NULL, NULL));
}

static void *failing_alloc(void *user, size_t bytes)
{
    (void)user;
    (void)bytes;
    return NULL;
}

static void failing_free(void *user, void *ptr)
{
    (void)user;
    (void)ptr;
}

/* CUDA: the dot product's only allocation (the pool's partial sums) failing is reported with a
 * status and a message; the context works again once memory can be had. */
static void test_vec_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    double h[16];
    for (int i = 0; i < 16; i++) h[i] = 1.0;
    double *x = ctx_vec(ctx, h, 16);
    const sbm_allocator none = {failing_alloc, failing_free, NULL};
    SBM_ASSERT_OK(ctx, sbm_ctx_set_allocator(ctx, &none)); /* the pool must be remade */
    double d = -1.0;
    SBM_ASSERT_FAILS(ctx, sbm__vec_dot(ctx, 16, x, x, &d), SBM_ERR_OUT_OF_MEMORY, "workspace");
    assert_true(d == 0.0);
    SBM_ASSERT_OK(ctx, sbm_ctx_set_allocator(ctx, NULL));
    SBM_ASSERT_OK(ctx, sbm__vec_dot(ctx, 16, x, x, &d));
    assert_true(d == 16.0);
    sbm__free(ctx, x);
}

/* ---------------------------------------------------------------------------------------- */
/* PCG on a block-tridiagonal SPD system stored as its upper block triangle                 */
/* ---------------------------------------------------------------------------------------- */

typedef struct pcg_system {
    sbm_cbc *A;     /* upper block triangle, in the context */
    sbm__symup sym; /* y = A x */
    sbm_cbc *Dinv;  /* block Jacobi */
    double *b;      /* right-hand side, in the context */
    double *hb;     /* the same on the host */
    int64_t n;      /* unknowns */
} pcg_system;

/* nb blocks of b x b; diagonally dominant, hence SPD. */
static void pcg_system_make(sbm_ctx *ctx, uint64_t seed, int64_t nb, int b, pcg_system *s)
{
    memset(s, 0, sizeof *s);
    sbm_test_rng g = sbm_test_rng_seed(seed);
    const int64_t bs = (int64_t)b * b;
    int64_t *cp = malloc((size_t)(nb + 1) * sizeof *cp);
    int32_t *ri = malloc((size_t)(2 * nb) * sizeof *ri);
    double *v = malloc((size_t)(2 * nb * bs) * sizeof *v);
    int64_t k = 0;
    cp[0] = 0;
    for (int64_t j = 0; j < nb; j++) {
        if (j > 0) { /* the block above the diagonal */
            for (int64_t t = 0; t < bs; t++) v[k * bs + t] = 0.5 * sbm_test_rng_value(&g);
            ri[k++] = (int32_t)(j - 1);
        }
        double *d = v + k * bs;
        for (int c = 0; c < b; c++)
            for (int r = 0; r <= c; r++)
                d[r + c * b] = d[c + r * b] = r == c ? 2.0 * b + 2.0 + sbm_test_rng_uniform(&g)
                                                     : sbm_test_rng_value(&g);
        ri[k++] = (int32_t)j;
        cp[j + 1] = k;
    }
    SBM_ASSERT_OK(ctx, sbm_cbc_create(ctx, &s->A, nb, nb, b, b, cp, ri, v));
    SBM_ASSERT_OK(ctx, sbm__symup_init(ctx, s->A, &s->sym));
    SBM_ASSERT_OK(ctx, sbm__symup_refresh(ctx, &s->sym));
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, s->sym.D, &s->Dinv));
    SBM_ASSERT_OK(ctx, sbm__symup_diag_inverse(ctx, &s->sym, s->Dinv));
    s->n = nb * b;
    s->hb = sbm_test_random_vector(seed + 1, s->n);
    s->b = ctx_vec(ctx, s->hb, s->n);
    free(v);
    free(ri);
    free(cp);
}

static void pcg_system_free(sbm_ctx *ctx, pcg_system *s)
{
    sbm__free(ctx, s->b);
    free(s->hb);
    sbm_cbc_destroy(s->Dinv);
    sbm__symup_free(&s->sym);
    sbm_cbc_destroy(s->A);
}

static sbm_status apply_sym(sbm_ctx *ctx, void *data, const double *x, double *y)
{
    return sbm__symup_multiply(ctx, (sbm__symup *)data, x, y);
}

static void run_pcg(sbm_ctx *ctx, pcg_system *s, double *x, int max_it, double tol, int *its)
{
    double res = 0.0;
    SBM_ASSERT_OK(ctx, sbm__pcg(ctx, s->n, apply_sym, &s->sym, sbm__bdiag_apply, s->Dinv, s->b, x,
                                max_it, tol, its, &res));
    assert_true(res >= 0.0);
}

/* PCG's solution against dense Cholesky; on CUDA against the CPU backend's PCG, and two runs
 * bitwise equal. */
static void test_pcg_solves(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const int sizes[][2] = {{1, 1}, {40, 3}, {25, 9}, {60, 6}};
    for (int t = 0; t < 4; t++) {
        pcg_system s;
        pcg_system_make(e->ctx, 7 + (uint64_t)t, sizes[t][0], sizes[t][1], &s);
        double *x = sbm__vec_alloc(e->ctx, s.n, "x");
        int its = 0;
        run_pcg(e->ctx, &s, x, 500, 1e-13, &its);
        assert_true(its >= 1 && its < 500);
        double *hx = host_vec(e->ctx, x, s.n);
        double *want = malloc((size_t)s.n * sizeof(double));
        SBM_ASSERT_OK(e->ctx, sbm__dense_spd_solve(e->ctx, s.A, s.hb, want));
        sbm_test_assert_near(hx, want, s.n, 1e-10, "PCG against dense Cholesky");

        /* the same system on the CPU backend */
        pcg_system h;
        pcg_system_make(e->host, 7 + (uint64_t)t, sizes[t][0], sizes[t][1], &h);
        double *xh = sbm__vec_alloc(e->host, h.n, "x");
        int its_h = 0;
        run_pcg(e->host, &h, xh, 500, 1e-13, &its_h);
        sbm_test_assert_near(hx, xh, s.n, 1e-10, "PCG on this backend against the CPU backend");

        /* determinism: a second run gives the same bits */
        run_pcg(e->ctx, &s, x, 500, 1e-13, &its_h);
        assert_int_equal(its_h, its);
        double *hx2 = host_vec(e->ctx, x, s.n);
        assert_memory_equal(hx, hx2, (size_t)s.n * sizeof(double));

        free(hx2);
        sbm__free(e->host, xh);
        pcg_system_free(e->host, &h);
        free(want);
        free(hx);
        sbm__free(e->ctx, x);
        pcg_system_free(e->ctx, &s);
    }
}

/* Across PCG iterations nothing crosses between host and device but the dot products' scalars
 * (three per iteration, none on the CPU backend), and nothing is allocated per iteration. */
static void test_pcg_transfers(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    pcg_system s;
    pcg_system_make(ctx, 31, 80, 6, &s);
    double *x = sbm__vec_alloc(ctx, s.n, "x");
    const int k = 5;
    int its = 0;
    /* warm the backend's caches (pattern views, workspace) first */
    run_pcg(ctx, &s, x, k + 10, 1e-300, &its);
    sbm__stats st[2];
    for (int r = 0; r < 2; r++) {
        sbm__stats_reset(ctx);
        run_pcg(ctx, &s, x, k + 10 * r, 1e-300, &its);
        assert_int_equal(its, k + 10 * r); /* no early exit: the counts below are exact */
        st[r] = sbm__stats_get(ctx);
    }
    for (int r = 0; r < 2; r++) {
        assert_int_equal(st[r].h2d_copies, 0);
        assert_int_equal(st[r].allocs, 1); /* the PCG vectors, once per solve */
    }
    if (ctx->backend == SBM_BACKEND_CPU) {
        assert_int_equal(st[0].d2h_copies, 0);
        assert_int_equal(st[1].d2h_copies, 0);
    } else {
        /* |b| and r.z before the loop, then p.q, |r| and r.z per iteration */
        assert_int_equal(st[0].d2h_copies, 2 + 3 * k);
        assert_int_equal(st[1].d2h_copies - st[0].d2h_copies, 30);
        assert_int_equal(st[1].d2h_bytes - st[0].d2h_bytes, 30 * sizeof(double));
    }
    sbm__free(ctx, x);
    pcg_system_free(ctx, &s);
}

/* ---------------------------------------------------------------------------------------- */
/* Nested calls                                                                             */
/* ---------------------------------------------------------------------------------------- */

/* levels internal (unnamed) nestings around a failing public call. */
static sbm_status nest(sbm_ctx *ctx, const sbm_cbc *A, double *y, int levels)
{
    if (levels == 0) return SBM__NESTED(ctx, sbm_cbc_spmv(ctx, SBM_OP_N, 1.0, A, NULL, 0.0, y));
    return SBM__NESTED(ctx, nest(ctx, A, y, levels - 1));
}

/* A public-style entry point: a nested call, then optionally a failure of its own. */
static sbm_status outer_call(sbm_ctx *ctx, const sbm_cbc *A, double *x, double *y, int levels,
                             int own_failure)
{
    SBM__ENTER(ctx, "test_outer");
    if (!own_failure) return nest(ctx, A, y, levels);
    SBM__TRY(SBM__NESTED(ctx, sbm_cbc_spmv(ctx, SBM_OP_N, 1.0, A, x, 0.0, y)));
    return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "its own failure");
}

static void test_nested_messages(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    sbm_cbc *A = sbm_test_random_cbc(ctx, 5, 4, 4, 2, 2, 0.5);
    double h[8] = {0};
    double *x = ctx_vec(ctx, h, 8), *y = ctx_vec(ctx, h, 8);
    /* the outer name leads, the public call that failed follows; internal levels add nothing */
    for (int levels = 0; levels <= 2; levels += 2) {
        assert_int_equal(outer_call(ctx, A, x, y, levels, 0), SBM_ERR_NULL_ARGUMENT);
        assert_string_equal(sbm_ctx_last_error(ctx),
                            "test_outer: sbm_cbc_spmv: argument x is NULL");
        assert_int_equal(ctx->depth, 0);
    }
    /* deeper than the names kept: still under the outer name, nothing overflows */
    assert_int_equal(outer_call(ctx, A, x, y, SBM__NEST_MAX + 4, 0), SBM_ERR_NULL_ARGUMENT);
    assert_true(strncmp(sbm_ctx_last_error(ctx), "test_outer: ", 12) == 0);
    assert_non_null(strstr(sbm_ctx_last_error(ctx), "argument x is NULL"));
    assert_int_equal(ctx->depth, 0);
    /* after a nested call returns, the outer call's own failure names only itself */
    SBM_ASSERT_FAILS(ctx, outer_call(ctx, A, x, y, 0, 1), SBM_ERR_INVALID_ARGUMENT,
                     "test_outer: its own failure");
    assert_string_equal(sbm_ctx_last_error(ctx), "test_outer: its own failure");
    /* a call from the user afterwards is named by itself */
    SBM_ASSERT_FAILS(ctx, sbm_cbc_spmv(ctx, SBM_OP_N, 1.0, A, NULL, 0.0, y), SBM_ERR_NULL_ARGUMENT,
                     "argument x");
    assert_string_equal(sbm_ctx_last_error(ctx), "sbm_cbc_spmv: argument x is NULL");

    /* a library call: a V block that is not SPD fails two levels down, in sbm_bdiag_inverse
     * under sbm_ba_schur_execute, and is reported under sbm_ba_schur */
    const int64_t nc = 3, np = 4;
    sbm_cbc *U = sbm_test_random_bdiag_spd(ctx, 11, nc, 9);
    sbm_cbc *W = sbm_test_random_cbc(ctx, 12, nc, np, 9, 3, 1.0);
    int64_t cp[5] = {0, 1, 2, 3, 4};
    int32_t ri[4] = {0, 1, 2, 3};
    double v[36];
    for (int b = 0; b < 4; b++)
        for (int t = 0; t < 9; t++) v[9 * b + t] = t % 4 == 0 ? (b == 2 ? -1.0 : 1.0) : 0.0;
    sbm_cbc *V = NULL, *S = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_create(ctx, &V, np, np, 3, 3, cp, ri, v));
    SBM_ASSERT_FAILS(ctx, sbm_ba_schur(ctx, U, V, W, NULL, NULL, &S, NULL),
                     SBM_ERR_NOT_POSITIVE_DEFINITE, "sbm_bdiag_inverse: ");
    assert_true(strncmp(sbm_ctx_last_error(ctx), "sbm_ba_schur: sbm_ba_schur_execute: ", 36) == 0);
    assert_null(S);
    assert_int_equal(ctx->depth, 0);

    sbm_cbc_destroy(V);
    sbm_cbc_destroy(W);
    sbm_cbc_destroy(U);
    sbm__free(ctx, x);
    sbm__free(ctx, y);
    sbm_cbc_destroy(A);
}

/* The *_checked entries (the caller vouches for D's block-diagonal pattern): the public calls'
 * results bitwise, no pattern download, the other checks kept, named as the public calls. */
static sbm_status outer_scale(sbm_ctx *ctx, const sbm_cbc *D, const sbm_cbc *A, sbm_cbc *B)
{
    SBM__ENTER(ctx, "test_outer");
    return SBM__NESTED(ctx, sbm__bdiag_scale_checked(ctx, SBM_SIDE_LEFT, D, A, B));
}

static sbm_status outer_inverse(sbm_ctx *ctx, const sbm_cbc *D, sbm_cbc *Dinv)
{
    SBM__ENTER(ctx, "test_outer");
    return SBM__NESTED(ctx, sbm__bdiag_inverse_checked(ctx, D, Dinv));
}

static void test_checked_entries(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    sbm_cbc *D = sbm_test_random_bdiag_spd(ctx, 41, 6, 3);
    sbm_cbc *A = sbm_test_random_cbc(ctx, 42, 6, 5, 3, 2, 0.6);
    sbm_cbc *B1 = NULL, *B2 = NULL, *I1 = NULL, *I2 = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, A, &B1));
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, A, &B2));
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, D, &I1));
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, D, &I2));

    SBM_ASSERT_OK(ctx, sbm_bdiag_scale(ctx, SBM_SIDE_LEFT, D, A, B1));
    sbm__stats_reset(ctx);
    SBM_ASSERT_OK(ctx, outer_scale(ctx, D, A, B2));
    const sbm__stats st = sbm__stats_get(ctx);
    assert_int_equal(st.d2h_copies + st.h2d_copies, 0); /* the pattern stays where it is */
    sbm_test_assert_same_cbc(B1, B2, -1.0);

    SBM_ASSERT_OK(ctx, sbm_bdiag_inverse(ctx, D, I1));
    SBM_ASSERT_OK(ctx, outer_inverse(ctx, D, I2));
    sbm_test_assert_same_cbc(I1, I2, -1.0);

    /* the checks that remain report under the outer call */
    SBM_ASSERT_FAILS(ctx, outer_scale(ctx, D, A, NULL), SBM_ERR_NULL_ARGUMENT,
                     "test_outer: sbm_bdiag_scale: argument B is NULL");
    SBM_ASSERT_FAILS(ctx, outer_inverse(ctx, D, A), SBM_ERR_BLOCK_SHAPE,
                     "test_outer: sbm_bdiag_inverse: argument Dinv");
    assert_int_equal(ctx->depth, 0);

    sbm_cbc_destroy(I2);
    sbm_cbc_destroy(I1);
    sbm_cbc_destroy(B2);
    sbm_cbc_destroy(B1);
    sbm_cbc_destroy(A);
    sbm_cbc_destroy(D);
}

/* SBM__INNER: an internal entry point called under the public name fails with the message the
 * public call nested (SBM__NESTED) would give, and succeeds with its result bitwise. */
static sbm_status outer_inner_inverse(sbm_ctx *ctx, const sbm_cbc *D, sbm_cbc *Dinv)
{
    SBM__ENTER(ctx, "test_outer");
    return SBM__INNER(ctx, "sbm_bdiag_inverse", sbm__bdiag_inverse(ctx, D, Dinv));
}

static sbm_status outer_nested_inverse(sbm_ctx *ctx, const sbm_cbc *D, sbm_cbc *Dinv)
{
    SBM__ENTER(ctx, "test_outer");
    return SBM__NESTED(ctx, sbm_bdiag_inverse(ctx, D, Dinv));
}

static void test_inner_entries(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    sbm_cbc *D = sbm_test_random_bdiag_spd(ctx, 43, 5, 3);
    sbm_cbc *I1 = NULL, *I2 = NULL, *N = NULL, *N1 = NULL, *N2 = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, D, &I1));
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, D, &I2));
    SBM_ASSERT_OK(ctx, sbm_bdiag_inverse(ctx, D, I1));
    SBM_ASSERT_OK(ctx, outer_inner_inverse(ctx, D, I2));
    sbm_test_assert_same_cbc(I1, I2, -1.0);

    /* two 2x2 diagonal blocks, the second -I: not positive definite */
    const int64_t cp[3] = {0, 1, 2};
    const int32_t ri[2] = {0, 1};
    const double v[8] = {2, 0, 0, 2, -1, 0, 0, -1};
    SBM_ASSERT_OK(ctx, sbm_cbc_create(ctx, &N, 2, 2, 2, 2, cp, ri, v));
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, N, &N1));
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, N, &N2));
    SBM_ASSERT_FAILS(ctx, outer_nested_inverse(ctx, N, N1), SBM_ERR_NOT_POSITIVE_DEFINITE,
                     "test_outer: sbm_bdiag_inverse: ");
    char want[1024];
    snprintf(want, sizeof want, "%s", sbm_ctx_last_error(ctx));
    SBM_ASSERT_FAILS(ctx, outer_inner_inverse(ctx, N, N2), SBM_ERR_NOT_POSITIVE_DEFINITE,
                     "test_outer: sbm_bdiag_inverse: ");
    assert_string_equal(sbm_ctx_last_error(ctx), want);
    assert_int_equal(ctx->depth, 0);

    sbm_cbc_destroy(N2);
    sbm_cbc_destroy(N1);
    sbm_cbc_destroy(N);
    sbm_cbc_destroy(I2);
    sbm_cbc_destroy(I1);
    sbm_cbc_destroy(D);
}

/* A solver's iteration callback may call the library with the solver's context: those calls
 * are the user's (named by themselves), and the solver's name comes back afterwards. */
typedef struct callback_probe {
    sbm_ctx *ctx;
    int calls;      /* callbacks seen */
    int restored;   /* callbacks that found the solver's name and depth 0 */
    int own_name;   /* failing calls from the callback named by themselves */
} callback_probe;

static void probe(void *user, const sbm_iteration_report *rep)
{
    (void)rep;
    callback_probe *p = user;
    p->calls++;
    p->restored += strcmp(p->ctx->fn, "sbm_slam_solve") == 0 && p->ctx->depth == 0;
    if (sbm_cbc_spmv(p->ctx, SBM_OP_N, 1.0, NULL, NULL, 0.0, NULL) == SBM_ERR_NULL_ARGUMENT)
        p->own_name += strncmp(sbm_ctx_last_error(p->ctx), "sbm_cbc_spmv: ", 14) == 0;
}

static void test_callback_names(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_g2o_graph *g = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, sbm_test_data_path("g2o/tinyGrid3D.g2o"), &g));
    callback_probe p = {e->ctx, 0, 0, 0};
    sbm_solver_options o = sbm_solver_default_options();
    o.max_iterations = 3;
    o.function_tolerance = 1e-300; /* run every iteration */
    o.linear_solver = SBM_LINEAR_PCG;
    o.callback = probe;
    o.user = &p;
    SBM_ASSERT_OK(e->ctx, sbm_slam_solve(e->ctx, g, &o, NULL));
    assert_true(p.calls >= 2);
    assert_int_equal(p.restored, p.calls);
    assert_int_equal(p.own_name, p.calls);
    assert_int_equal(e->ctx->depth, 0);
    sbm_g2o_destroy(g);
}

/* The CPU backend's threads: every item of [0, n) visited once, by contiguous pieces in order,
 * whatever the context's count is, and n = 0. The count is the tuning's num_threads (1, 2, 7,
 * 64), else SBM_NUM_THREADS as read when the context was created (1, 2, 7, more threads than
 * items, nonsense; setting it afterwards changes nothing), and 0 restores that default. */
typedef struct par_log {
    int64_t *owner;  /* piece start that visited each item */
    int *visits;
} par_log;

static void par_mark(void *data, int64_t begin, int64_t end)
{
    par_log *l = data;
    for (int64_t i = begin; i < end; i++) l->owner[i] = begin, l->visits[i]++;
}

/* sbm__cpu_parallel_for on ctx over every size: each item once, pieces contiguous, at most t. */
static void check_pieces(const sbm_ctx *ctx, int t)
{
    static const int64_t sizes[] = {0, 1, 5, 1000};
    for (int z = 0; z < 4; z++) {
        const int64_t n = sizes[z];
        par_log l = {calloc((size_t)n + 1, sizeof(int64_t)), calloc((size_t)n + 1, sizeof(int))};
        sbm__cpu_parallel_for(ctx, n, 2, par_mark, &l);
        int64_t pieces = 0;
        for (int64_t i = 0; i < n; i++) {
            assert_int_equal(l.visits[i], 1);
            if (i == 0 || l.owner[i] != l.owner[i - 1]) {
                assert_int_equal(l.owner[i], i); /* a piece starts where the last ended */
                pieces++;
            }
        }
        assert_true(pieces <= t && pieces <= (n + 1) / 2 + 1);
        free(l.owner);
        free(l.visits);
    }
}

static void test_cpu_parallel_for(void **state)
{
    (void)state;
    const char *old = getenv("SBM_NUM_THREADS");
    char *saved = old ? strdup(old) : NULL;
    const char *counts[] = {"1", "2", "7", "100", "0", "junk"};
    for (int c = 0; c < 6; c++) {
        sbm_ctx *ctx = NULL;
        setenv("SBM_NUM_THREADS", counts[c], 1);
        SBM_ASSERT_OK(NULL, sbm_ctx_create(&ctx, SBM_BACKEND_CPU, 0));
        setenv("SBM_NUM_THREADS", c == 0 ? "2" : "1", 1); /* read once, at creation */
        const int t = sbm__cpu_threads(ctx);
        assert_true(t >= 1 && t <= 64);
        if (c < 4) assert_int_equal(t, atoi(counts[c]) < 64 ? atoi(counts[c]) : 64);
        check_pieces(ctx, t);
        /* the tuning's num_threads overrides the environment, 0 restores it */
        static const int fields[] = {1, 2, 7, 64};
        for (int f = 0; f < 4; f++) {
            sbm_tuning tune = sbm_tuning_default();
            tune.num_threads = fields[f];
            SBM_ASSERT_OK(ctx, sbm_ctx_set_tuning(ctx, &tune));
            assert_int_equal(sbm__cpu_threads(ctx), fields[f]);
            check_pieces(ctx, fields[f]);
        }
        SBM_ASSERT_OK(ctx, sbm_ctx_set_tuning(ctx, NULL));
        assert_int_equal(sbm__cpu_threads(ctx), t);
        sbm_ctx_destroy(ctx);
    }
    if (saved)
        setenv("SBM_NUM_THREADS", saved, 1);
    else
        unsetenv("SBM_NUM_THREADS");
    free(saved);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_vec_ops),
        SBM_TEST_CUDA(test_vec_errors),
        SBM_TEST_BOTH(test_pcg_solves),
        SBM_TEST_BOTH(test_pcg_transfers),
        SBM_TEST_BOTH(test_nested_messages),
        SBM_TEST_BOTH(test_checked_entries),
        SBM_TEST_BOTH(test_inner_entries),
        SBM_TEST_BOTH(test_callback_names),
        cmocka_unit_test(test_cpu_parallel_for),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
