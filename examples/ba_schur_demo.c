/* SPDX-License-Identifier: BSD-3-Clause */
/* Bundle adjustment reduced camera system with sbm.
 *
 * Generates a seeded BA-shaped problem (each point seen by a few distinct random cameras, random
 * 2 x p camera and 2 x 3 point Jacobian blocks per observation) and forms the normal equations
 *
 *     [U  W] [dc]   [gc]        U = sum Jc^T Jc + lambda I   (cameras x cameras, p x p blocks)
 *     [W' V] [dp] = [gp]        V = sum Jp^T Jp + lambda I   (points x points, 3 x 3 blocks)
 *                               W = Jc^T Jp                  (cameras x points, p x 3 blocks)
 *
 * then the reduced camera system S = U - W V^-1 W^T (upper block triangle) with the library:
 *
 *     V      sbm_cbc_from_triplets (one triplet per observation: duplicates are summed)
 *     V^-1   sbm_bdiag_inverse
 *     Y      = W V^-1           sbm_bdiag_scale (right)
 *     S      = U - Y W^T        sbm_cbc_gemm_plan + sbm_cbc_gemm_execute (alpha = -1, op_b = T,
 *                               accumulate U, SBM_GEMM_UPPER) -- what sbm_cbc_gemm does in one
 *                               call, split here to time and count the symbolic and numeric phases
 *
 * Small problems (or --check) are compared against a dense S computed here from the raw
 * Jacobians without the library.
 *
 * usage: ba_schur_demo [--cameras N] [--points N] [--obs-per-point N] [--camera-params 6|9]
 *                      [--seed S] [--backend cpu|cuda|auto] [--check | --no-check] */
#define _POSIX_C_SOURCE 199309L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbm.h"
#include "sbm_ba.h"
#include "sbm_io.h"
#include "sbm_slam.h"
#include "cli_common.h" /* option parsing and the clock, shared with the sbm tool */

/* Levenberg-Marquardt damping added to U and V; keeps V's 3x3 blocks well conditioned even for
 * points seen by a single camera (rank-2 Jp^T Jp). */
#define LAMBDA 0.5

/* Problems at most this large are checked against the dense reference by default. */
#define AUTO_CHECK_MAX_CAMERAS 64
#define AUTO_CHECK_MAX_OBS 100000
/* Relative error (max |S - S_ref| / max |S_ref|) accepted by the check. */
#define CHECK_TOL 1e-11

typedef struct options {
    int64_t cameras;
    int64_t points;
    int obs_per_point;
    int p;             /* camera parameters: 9 or 6 */
    uint64_t seed;
    cli_backend backend; /* --backend */
    int check;         /* -1 auto, 0 off, 1 on */
    int sizes_given;   /* --cameras/--points/--obs-per-point given: run only that case */
} options;

/* ---------------------------------------------------------------------------------------- */
/* Helpers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static double now_s(void) { return cli_seconds(); }

/* [-1, 1), from the library's SplitMix64 (2*u - 1 is exact, so the same as before) */
static double rng_value(uint64_t *s) { return 2.0 * sbm_splitmix64_uniform(s) - 1.0; }
static int64_t rng_below(uint64_t *s, int64_t n)
{
    return (int64_t)(sbm_splitmix64(s) % (uint64_t)n);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* ---------------------------------------------------------------------------------------- */
/* The generated problem (host)                                                             */
/* ---------------------------------------------------------------------------------------- */

typedef struct problem {
    int64_t ncam, npts, nobs;
    int p;            /* camera parameters */
    int32_t *cam;     /* camera of observation o (observations grouped by point) */
    int32_t *pt;      /* point of observation o */
    double *Jc;       /* 2 x p per observation, column-major */
    double *Jp;       /* 2 x 3 per observation */
} problem;

static void problem_free(problem *P)
{
    free(P->cam);
    free(P->pt);
    free(P->Jc);
    free(P->Jp);
    memset(P, 0, sizeof(*P));
}

static int problem_generate(problem *P, const options *o)
{
    memset(P, 0, sizeof(*P));
    P->ncam = o->cameras;
    P->npts = o->points;
    P->p = o->p;
    P->nobs = o->points * o->obs_per_point;
    const int64_t n = P->nobs;
    P->cam = malloc((size_t)n * sizeof(int32_t) + 1);
    P->pt = malloc((size_t)n * sizeof(int32_t) + 1);
    P->Jc = malloc((size_t)n * 2 * (size_t)P->p * sizeof(double) + 1);
    P->Jp = malloc((size_t)n * 6 * sizeof(double) + 1);
    if (!P->cam || !P->pt || !P->Jc || !P->Jp) {
        problem_free(P);
        fprintf(stderr, "ba_schur_demo: out of memory generating %lld observations\n",
                (long long)n);
        return 1;
    }
    uint64_t s = o->seed;
    int64_t k = 0;
    for (int64_t j = 0; j < P->npts; j++) {
        int32_t *c = P->cam + k;
        /* distinct cameras by rejection: obs_per_point <= cameras, usually much smaller */
        for (int t = 0; t < o->obs_per_point; t++) {
            int32_t cand;
            int dup;
            do {
                cand = (int32_t)rng_below(&s, P->ncam);
                dup = 0;
                for (int u = 0; u < t; u++) dup |= (c[u] == cand);
            } while (dup);
            c[t] = cand;
        }
        qsort(c, (size_t)o->obs_per_point, sizeof(int32_t), cmp_i32);
        for (int t = 0; t < o->obs_per_point; t++, k++) {
            P->pt[k] = (int32_t)j;
            for (int e = 0; e < 2 * P->p; e++) P->Jc[k * 2 * P->p + e] = rng_value(&s);
            for (int e = 0; e < 6; e++) P->Jp[k * 6 + e] = rng_value(&s);
        }
    }
    return 0;
}

/* out (m x n, column-major) = X^T Y for X (2 x m), Y (2 x n), both column-major. */
static void atb2(int m, int n, const double *X, const double *Y, double *out)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) out[i + j * m] = X[2 * i] * Y[2 * j] + X[2 * i + 1] * Y[2 * j + 1];
}

/* ---------------------------------------------------------------------------------------- */
/* Dense reference: S_ref = U - sum_points W_:p V_p^-1 W_:p^T, from the raw Jacobians         */
/* ---------------------------------------------------------------------------------------- */

/* Inverse of a symmetric 3x3 matrix by cofactors (independent of the library's Cholesky). */
static void inv3(const double *a, double *inv)
{
    const double c00 = a[4] * a[8] - a[5] * a[7];
    const double c01 = a[5] * a[6] - a[3] * a[8];
    const double c02 = a[3] * a[7] - a[4] * a[6];
    const double det = a[0] * c00 + a[1] * c01 + a[2] * c02;
    inv[0] = c00 / det;
    inv[1] = c01 / det;
    inv[2] = c02 / det;
    inv[3] = (a[2] * a[7] - a[1] * a[8]) / det;
    inv[4] = (a[0] * a[8] - a[2] * a[6]) / det;
    inv[5] = (a[1] * a[6] - a[0] * a[7]) / det;
    inv[6] = (a[1] * a[5] - a[2] * a[4]) / det;
    inv[7] = (a[2] * a[3] - a[0] * a[5]) / det;
    inv[8] = (a[0] * a[4] - a[1] * a[3]) / det;
}

/* Dense S (n x n column-major, n = ncam*p), full (both triangles). NULL if out of memory. */
static double *dense_reference(const problem *P)
{
    const int p = P->p;
    const int64_t n = P->ncam * p;
    double *S = calloc((size_t)(n * n), sizeof(double));
    double *W = malloc(sizeof(double) * 64 * 27 + 1); /* W blocks of one point (p x 3 each) */
    int64_t cap = 64;
    if (!S || !W) goto oom;
    double blk[81], V[9], Vi[9], Y[27];

    for (int64_t o = 0; o < P->nobs; o++) { /* U */
        atb2(p, p, P->Jc + o * 2 * p, P->Jc + o * 2 * p, blk);
        const int64_t c0 = (int64_t)P->cam[o] * p;
        for (int j = 0; j < p; j++)
            for (int i = 0; i < p; i++) S[(c0 + i) + (c0 + j) * n] += blk[i + j * p];
    }
    for (int64_t i = 0; i < n; i++) S[i + i * n] += LAMBDA;

    for (int64_t o0 = 0; o0 < P->nobs;) { /* one point at a time */
        int64_t o1 = o0;
        while (o1 < P->nobs && P->pt[o1] == P->pt[o0]) o1++;
        const int64_t k = o1 - o0;
        if (k > cap) {
            double *w2 = realloc(W, sizeof(double) * (size_t)(k * 27));
            if (!w2) goto oom;
            W = w2;
            cap = k;
        }
        memset(V, 0, sizeof(V));
        for (int64_t o = o0; o < o1; o++) {
            atb2(3, 3, P->Jp + o * 6, P->Jp + o * 6, blk);
            for (int e = 0; e < 9; e++) V[e] += blk[e];
            atb2(p, 3, P->Jc + o * 2 * p, P->Jp + o * 6, W + (o - o0) * 3 * p);
        }
        V[0] += LAMBDA;
        V[4] += LAMBDA;
        V[8] += LAMBDA;
        inv3(V, Vi);
        for (int64_t a = 0; a < k; a++) {
            const double *Wa = W + a * 3 * p;
            for (int j = 0; j < 3; j++) /* Y = W_a V^-1 (p x 3) */
                for (int i = 0; i < p; i++)
                    Y[i + j * p] = Wa[i] * Vi[3 * j] + Wa[i + p] * Vi[3 * j + 1] + Wa[i + 2 * p] * Vi[3 * j + 2];
            for (int64_t b = 0; b < k; b++) {
                const double *Wb = W + b * 3 * p;
                const int64_t r0 = (int64_t)P->cam[o0 + a] * p, c0 = (int64_t)P->cam[o0 + b] * p;
                for (int j = 0; j < p; j++)
                    for (int i = 0; i < p; i++)
                        S[(r0 + i) + (c0 + j) * n] -= Y[i] * Wb[j] + Y[i + p] * Wb[j + p] + Y[i + 2 * p] * Wb[j + 2 * p];
            }
        }
        o0 = o1;
    }
    free(W);
    return S;
oom:
    free(S);
    free(W);
    return NULL;
}

/* max |S - S_ref| / max |S_ref| over the upper block triangle; also verifies that S has no block
 * below the diagonal and that every upper block it lacks is zero in S_ref. @return -1 on a
 * structural failure (message printed). */
static double compare_upper(const sbm_cbc_info *si, const double *ref, int p)
{
    const int64_t n = si->nbc * p;
    double *got = calloc((size_t)(n * n), sizeof(double));
    if (!got) {
        fprintf(stderr, "ba_schur_demo: out of memory for the check\n");
        return -1;
    }
    for (int64_t j = 0; j < si->nbc; j++) {
        for (int64_t k = si->colptr[j]; k < si->colptr[j + 1]; k++) {
            const int64_t bi = si->rowind[k];
            if (bi > j) {
                fprintf(stderr, "check: S has block (%lld,%lld) below the diagonal\n",
                        (long long)bi, (long long)j);
                free(got);
                return -1;
            }
            const double *blk = si->values + k * p * p;
            for (int c = 0; c < p; c++)
                for (int r = 0; r < p; r++) got[(bi * p + r) + (j * p + c) * n] = blk[r + c * p];
        }
    }
    double maxref = 0.0, maxdiff = 0.0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) {
            if (i / p > j / p) continue; /* lower block triangle: not part of S */
            const double d = fabs(got[i + j * n] - ref[i + j * n]);
            if (fabs(ref[i + j * n]) > maxref) maxref = fabs(ref[i + j * n]);
            if (d > maxdiff || d != d) maxdiff = d;
        }
    free(got);
    return maxref > 0.0 ? maxdiff / maxref : maxdiff;
}

/* ---------------------------------------------------------------------------------------- */
/* The library part                                                                         */
/* ---------------------------------------------------------------------------------------- */

#define TRY(ctx, call)                                                                \
    do {                                                                              \
        if ((call) != SBM_SUCCESS) {                                                  \
            fprintf(stderr, "ba_schur_demo: %s\n", sbm_ctx_last_error(ctx));          \
            goto done;                                                                \
        }                                                                             \
    } while (0)

/* Host triplets. U: accumulated per camera here (p*p values per camera); V: one triplet per
 * observation plus lambda*I per point, summed by sbm_cbc_from_triplets; W: one per observation. */
typedef struct triplets {
    int64_t nv;                  /* V's triplets: nobs + npts */
    int32_t *ubr, *vbr, *wbr, *wbc;
    double *uval, *vval, *wval;
} triplets;

static void triplets_free(triplets *T)
{
    free(T->ubr);
    free(T->uval);
    free(T->vbr);
    free(T->vval);
    free(T->wbr);
    free(T->wbc);
    free(T->wval);
}

/* @return 0, or -1 out of memory (said on stderr; T freed by triplets_free either way). */
static int triplets_build(const problem *P, triplets *T)
{
    const int p = P->p;
    const int64_t nobs = P->nobs;
    memset(T, 0, sizeof *T);
    T->nv = nobs + P->npts;
    T->ubr = malloc(sizeof(int32_t) * (size_t)P->ncam + 1);
    T->uval = calloc((size_t)(P->ncam * p * p) + 1, sizeof(double));
    T->vbr = malloc(sizeof(int32_t) * (size_t)T->nv + 1);
    T->vval = malloc(sizeof(double) * 9 * (size_t)T->nv + 1);
    T->wbr = malloc(sizeof(int32_t) * (size_t)nobs + 1);
    T->wbc = malloc(sizeof(int32_t) * (size_t)nobs + 1);
    T->wval = malloc(sizeof(double) * (size_t)(3 * p) * (size_t)nobs + 1);
    if (!T->ubr || !T->uval || !T->vbr || !T->vval || !T->wbr || !T->wbc || !T->wval) {
        fprintf(stderr, "ba_schur_demo: out of memory for the triplets\n");
        return -1;
    }
    double blk[81];
    for (int64_t c = 0; c < P->ncam; c++) {
        T->ubr[c] = (int32_t)c;
        for (int i = 0; i < p; i++) T->uval[c * p * p + i + i * p] = LAMBDA;
    }
    for (int64_t k = 0; k < nobs; k++) {
        atb2(p, p, P->Jc + k * 2 * p, P->Jc + k * 2 * p, blk);
        for (int e = 0; e < p * p; e++) T->uval[(int64_t)P->cam[k] * p * p + e] += blk[e];
        T->vbr[k] = P->pt[k];
        atb2(3, 3, P->Jp + k * 6, P->Jp + k * 6, T->vval + k * 9);
        T->wbr[k] = P->cam[k];
        T->wbc[k] = P->pt[k];
        atb2(p, 3, P->Jc + k * 2 * p, P->Jp + k * 6, T->wval + k * 3 * p);
    }
    for (int64_t j = 0; j < P->npts; j++) {
        T->vbr[nobs + j] = (int32_t)j;
        double *d = T->vval + (nobs + j) * 9;
        memset(d, 0, 9 * sizeof(double));
        d[0] = d[4] = d[8] = LAMBDA;
    }
    return 0;
}

/* The library's objects of one case and the clock after each step (t[0]: start). */
typedef struct schur {
    sbm_cbc *U, *V, *W, *Vinv, *Y, *S;
    sbm_gemm_plan *plan;
    double t[7];
} schur;

static void schur_free(schur *s)
{
    sbm_gemm_plan_destroy(s->plan);
    sbm_cbc_destroy(s->S);
    sbm_cbc_destroy(s->Y);
    sbm_cbc_destroy(s->Vinv);
    sbm_cbc_destroy(s->W);
    sbm_cbc_destroy(s->V);
    sbm_cbc_destroy(s->U);
}

/* Assemble U, V, W; V^-1; Y = W V^-1; S = U - Y W^T (plan, execute, execute again), each step
 * synchronised and timed. @return 0, or 1 on an error (said on stderr). */
static int schur_compute(sbm_ctx *ctx, const problem *P, const triplets *T, schur *s)
{
    const int p = P->p;
    int rc = 1;
    s->t[0] = now_s();
    TRY(ctx, sbm_cbc_from_triplets(ctx, &s->U, P->ncam, P->ncam, p, p, P->ncam, T->ubr, T->ubr, T->uval));
    TRY(ctx, sbm_cbc_from_triplets(ctx, &s->V, P->npts, P->npts, 3, 3, T->nv, T->vbr, T->vbr, T->vval));
    TRY(ctx, sbm_cbc_from_triplets(ctx, &s->W, P->ncam, P->npts, p, 3, P->nobs, T->wbr, T->wbc, T->wval));
    TRY(ctx, sbm_ctx_synchronize(ctx));
    s->t[1] = now_s();
    TRY(ctx, sbm_cbc_copy(ctx, s->V, &s->Vinv));
    TRY(ctx, sbm_bdiag_inverse(ctx, s->V, s->Vinv));
    TRY(ctx, sbm_ctx_synchronize(ctx));
    s->t[2] = now_s();
    TRY(ctx, sbm_cbc_copy(ctx, s->W, &s->Y));
    TRY(ctx, sbm_bdiag_scale(ctx, SBM_SIDE_RIGHT, s->Vinv, s->W, s->Y));
    TRY(ctx, sbm_ctx_synchronize(ctx));
    s->t[3] = now_s();
    TRY(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, s->Y, SBM_OP_T, s->W, s->U, SBM_GEMM_UPPER, &s->plan, &s->S));
    TRY(ctx, sbm_ctx_synchronize(ctx));
    s->t[4] = now_s();
    TRY(ctx, sbm_cbc_gemm_execute(ctx, s->plan, -1.0, s->Y, s->W, s->U, s->S));
    TRY(ctx, sbm_ctx_synchronize(ctx));
    s->t[5] = now_s();
    /* An LM iteration changes values, not the pattern: a second execute reuses the plan. */
    TRY(ctx, sbm_cbc_gemm_execute(ctx, s->plan, -1.0, s->Y, s->W, s->U, s->S));
    TRY(ctx, sbm_ctx_synchronize(ctx));
    s->t[6] = now_s();
    rc = 0;
done:
    return rc;
}

/* The shapes of W and S, the product's size and each step's time. */
static void schur_report(int p, const schur *s)
{
    const double *t = s->t;
    sbm_gemm_plan_info pi = sbm_gemm_plan_get_info(s->plan);
    sbm_cbc_info wi = sbm_cbc_get_info(s->W);
    sbm_cbc_info si = sbm_cbc_get_info(s->S);
    const double flops = 2.0 * p * 3 * p * (double)pi.products;
    printf("  W: %lld x %lld blocks of %dx3, nnzb %lld\n", (long long)wi.nbr, (long long)wi.nbc, p,
           (long long)wi.nnzb);
    printf("  S: %lld x %lld blocks of %dx%d, nnzb %lld (upper block triangle)\n",
           (long long)si.nbr, (long long)si.nbc, p, p, (long long)si.nnzb);
    printf("  block products %lld (%dx3 * 3x%d, %s path, %lld slice%s), %.3f GFLOP\n",
           (long long)pi.products, p, p, pi.fast_path ? "fast" : "generic", (long long)pi.slices,
           pi.slices == 1 ? "" : "s", flops * 1e-9);
    printf("  %-34s %10s\n", "step", "time [ms]");
    printf("  %-34s %10.3f\n", "assemble U, V, W (from triplets)", 1e3 * (t[1] - t[0]));
    printf("  %-34s %10.3f\n", "V^-1 (bdiag_inverse)", 1e3 * (t[2] - t[1]));
    printf("  %-34s %10.3f\n", "Y = W V^-1 (bdiag_scale)", 1e3 * (t[3] - t[2]));
    printf("  %-34s %10.3f\n", "S = U - Y W^T: plan", 1e3 * (t[4] - t[3]));
    printf("  %-34s %10.3f   %.2f GFLOP/s\n", "S = U - Y W^T: execute", 1e3 * (t[5] - t[4]),
           t[5] > t[4] ? flops * 1e-9 / (t[5] - t[4]) : 0.0);
    printf("  %-34s %10.3f   %.2f GFLOP/s\n", "  again (plan reused)", 1e3 * (t[6] - t[5]),
           t[6] > t[5] ? flops * 1e-9 / (t[6] - t[5]) : 0.0);
    printf("  %-34s %10.3f\n", "total (first pass)", 1e3 * (t[5] - t[0]));
}

/* S (on any backend) against the dense U - W V^-1 W^T. @return 0 passed, 1 failed or error. */
static int schur_check(const problem *P, const sbm_cbc *S)
{
    sbm_ctx *host = NULL;
    sbm_cbc *Sh = NULL;
    double *ref = dense_reference(P);
    int rc = 1;
    if (!ref) {
        fprintf(stderr, "ba_schur_demo: out of memory for the dense reference\n");
        goto done;
    }
    if (sbm_ctx_create(&host, SBM_BACKEND_CPU, 0) != SBM_SUCCESS) {
        fprintf(stderr, "ba_schur_demo: %s\n", sbm_ctx_last_error(NULL));
        goto done;
    }
    TRY(host, sbm_cbc_copy(host, S, &Sh)); /* a download for CUDA, a copy on CPU */
    sbm_cbc_info hi = sbm_cbc_get_info(Sh);
    double err = compare_upper(&hi, ref, P->p);
    if (err >= 0.0 && err <= CHECK_TOL) {
        printf("  check against dense U - W V^-1 W^T: max relative error %.3e\n", err);
        printf("check: PASSED\n");
    } else {
        if (err >= 0.0 || err != err) /* NaN: print it too */
            printf("  check against dense U - W V^-1 W^T: max relative error %.3e (tolerance "
                   "%.0e)\n", err, CHECK_TOL);
        printf("check: FAILED\n");
        goto done;
    }
    rc = 0;
done:
    sbm_cbc_destroy(Sh);
    sbm_ctx_destroy(host);
    free(ref);
    return rc;
}

/* Run one case. @return 0 ok, 1 check failed or error. */
static int run_case(const options *o, sbm_backend backend, int check)
{
    problem P;
    if (problem_generate(&P, o) != 0) return 1;
    sbm_ctx *ctx = NULL;
    triplets T;
    schur s;
    memset(&s, 0, sizeof s);
    int rc = 1;

    printf("BA problem: %lld cameras (%d parameters), %lld points, %lld observations, seed %llu, "
           "backend %s\n",
           (long long)P.ncam, P.p, (long long)P.npts, (long long)P.nobs, (unsigned long long)o->seed,
           backend == SBM_BACKEND_CUDA ? "cuda" : "cpu");
    if (triplets_build(&P, &T) != 0) goto done;
    if (sbm_ctx_create(&ctx, backend, 0) != SBM_SUCCESS) {
        fprintf(stderr, "ba_schur_demo: %s\n", sbm_ctx_last_error(NULL));
        goto done;
    }
    if (schur_compute(ctx, &P, &T, &s) != 0) goto done;
    schur_report(P.p, &s);
    if (check && schur_check(&P, s.S) != 0) goto done;
    rc = 0;
done:
    schur_free(&s);
    sbm_ctx_destroy(ctx);
    triplets_free(&T);
    problem_free(&P);
    return rc;
}

/* ---------------------------------------------------------------------------------------- */
/* main                                                                                     */
/* ---------------------------------------------------------------------------------------- */

static const char *const usage =
    "usage: ba_schur_demo [--cameras N] [--points N] [--obs-per-point N] [--camera-params 6|9]\n"
    "                     [--seed S] [--backend cpu|cuda|auto] [--check | --no-check]\n"
    "\n"
    "Forms the BA reduced camera system S = U - W V^-1 W^T (upper block triangle) of a generated\n"
    "problem. Without size options: a small checked case (8 cameras, 60 points), then 200 cameras,\n"
    "20000 points, 6 observations per point. --check compares S with a dense reference (default:\n"
    "only for small problems). auto backend: CUDA when a device is available, else CPU.\n";

int main(int argc, char **argv)
{
    options o = {200, 20000, 6, 9, 1, CLI_BACKEND_AUTO, -1, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        int64_t x = 0;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        } else if (strcmp(a, "--check") == 0) {
            o.check = 1;
        } else if (strcmp(a, "--no-check") == 0) {
            o.check = 0;
        } else if (strcmp(a, "--cameras") == 0 || strcmp(a, "--points") == 0 ||
                   strcmp(a, "--obs-per-point") == 0 || strcmp(a, "--camera-params") == 0 ||
                   strcmp(a, "--seed") == 0 || strcmp(a, "--backend") == 0) {
            if (v == NULL) {
                fprintf(stderr, "ba_schur_demo: option %s needs a value\n%s", a, usage);
                return 2;
            }
            i++;
            if (strcmp(a, "--backend") == 0) {
                if (!cli_parse_backend(v, &o.backend)) {
                    fprintf(stderr, "ba_schur_demo: unknown backend '%s'\n%s", v, usage);
                    return 2;
                }
                continue;
            }
            const int64_t hi = strcmp(a, "--seed") == 0 ? INT64_MAX : INT32_MAX;
            if (!cli_parse_int64(v, strcmp(a, "--seed") == 0 ? 0 : 1, hi, &x)) {
                fprintf(stderr, "ba_schur_demo: invalid value '%s' for %s\n%s", v, a, usage);
                return 2;
            }
            if (strcmp(a, "--cameras") == 0) o.cameras = x, o.sizes_given = 1;
            else if (strcmp(a, "--points") == 0) o.points = x, o.sizes_given = 1;
            else if (strcmp(a, "--obs-per-point") == 0) o.obs_per_point = (int)x, o.sizes_given = 1;
            else if (strcmp(a, "--seed") == 0) o.seed = (uint64_t)x;
            else if (x == 6 || x == 9) o.p = (int)x;
            else {
                fprintf(stderr, "ba_schur_demo: --camera-params must be 6 or 9\n%s", usage);
                return 2;
            }
        } else {
            fprintf(stderr, "ba_schur_demo: unknown option '%s'\n%s", a, usage);
            return 2;
        }
    }
    if (o.obs_per_point > o.cameras) {
        fprintf(stderr, "ba_schur_demo: --obs-per-point %d exceeds --cameras %lld (each point is "
                "seen by distinct cameras)\n", o.obs_per_point, (long long)o.cameras);
        return 2;
    }
    if (o.points * o.obs_per_point > INT32_MAX) {
        fprintf(stderr, "ba_schur_demo: %lld observations is too many for this demo\n",
                (long long)(o.points * o.obs_per_point));
        return 2;
    }

    const sbm_backend backend = cli_backend_resolve(o.backend);

    int rc = 0;
    if (!o.sizes_given) {
        options small = o;
        small.cameras = 8;
        small.points = 60;
        small.obs_per_point = o.obs_per_point < 8 ? o.obs_per_point : 8;
        rc |= run_case(&small, backend, o.check != 0);
        printf("\n");
    }
    const int auto_check = o.cameras <= AUTO_CHECK_MAX_CAMERAS &&
                           o.points * o.obs_per_point <= AUTO_CHECK_MAX_OBS;
    rc |= run_case(&o, backend, o.check == 1 || (o.check == -1 && auto_check));
    return rc ? 1 : 0;
}
