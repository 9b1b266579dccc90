/* SPDX-License-Identifier: BSD-3-Clause */
/* Vector operations of the CPU backend for the solvers (src/solve): dot, max |x|, axpy, xpay,
 * scale.
 *
 * The dot product sums in an order fixed by n alone. The vector is cut into chunks whose size
 * depends on n only (CHUNK entries, more where n would give more than MAX_CHUNKS chunks); each
 * chunk sums with four interleaved partial sums (lane k takes the entries i = k mod 4), combined
 * as (s0 + s1) + (s2 + s3), and the chunks' sums are added in chunk order. Threads
 * (sbm__cpu_parallel_for) take whole chunks, so every run gives the same bits whatever the number
 * of threads; a vector of at most CHUNK entries sums as one chunk, as before threads. The
 * elementwise operations write each entry from one thread: their bits never depend on it. */
#include "cpu_backend.h"

#include <math.h>

#define CHUNK 16384
#define MAX_CHUNKS 1024
/* A thread is worth its start (tens of microseconds) from this many entries on. */
#define MIN_PER_THREAD 131072

/* The chunking of n entries: *size entries per chunk (the last one shorter); returns the count. */
static int64_t chunks_of(int64_t n, int64_t *size)
{
    int64_t s = CHUNK;
    if ((n + s - 1) / s > MAX_CHUNKS) s = (n + MAX_CHUNKS - 1) / MAX_CHUNKS;
    *size = s;
    return (n + s - 1) / s;
}

static double dot_serial(int64_t n, const double *x, const double *y)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += x[i] * y[i];
        s1 += x[i + 1] * y[i + 1];
        s2 += x[i + 2] * y[i + 2];
        s3 += x[i + 3] * y[i + 3];
    }
    if (i < n) s0 += x[i] * y[i];
    if (i + 1 < n) s1 += x[i + 1] * y[i + 1];
    if (i + 2 < n) s2 += x[i + 2] * y[i + 2];
    return (s0 + s1) + (s2 + s3);
}

static double amax_serial(int64_t n, const double *x)
{
    double m = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double a = fabs(x[i]);
        if (a > m || a != a) m = a; /* a NaN wins: a non-finite vector is seen */
        if (m != m) break;
    }
    return m;
}

typedef struct vec_job {
    int64_t n, size;   /* entries; entries per chunk */
    double a;
    const double *x;
    double *y;         /* axpy, xpay: y; scale: x */
    const double *yc;  /* dot: the second vector */
    double *part;      /* dot, amax: one result per chunk */
} vec_job;

static void dot_chunks(void *data, int64_t b, int64_t e)
{
    vec_job *j = data;
    for (int64_t k = b; k < e; k++) {
        const int64_t lo = k * j->size, hi = lo + j->size < j->n ? lo + j->size : j->n;
        j->part[k] = dot_serial(hi - lo, j->x + lo, j->yc + lo);
    }
}

static void amax_chunks(void *data, int64_t b, int64_t e)
{
    vec_job *j = data;
    for (int64_t k = b; k < e; k++) {
        const int64_t lo = k * j->size, hi = lo + j->size < j->n ? lo + j->size : j->n;
        j->part[k] = amax_serial(hi - lo, j->x + lo);
    }
}

sbm_status sbm__cpu_vec_dot(sbm_ctx *ctx, int64_t n, const double *x, const double *y,
                            double *h_dot)
{
    double part[MAX_CHUNKS];
    vec_job j = {.n = n, .x = x, .yc = y, .part = part};
    const int64_t nc = chunks_of(n, &j.size);
    sbm__cpu_parallel_for(ctx, nc, (MIN_PER_THREAD + j.size - 1) / j.size, dot_chunks, &j);
    double s = nc > 0 ? part[0] : 0.0;
    for (int64_t k = 1; k < nc; k++) s += part[k];
    *h_dot = s;
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_vec_amax(sbm_ctx *ctx, int64_t n, const double *x, double *h_max)
{
    double part[MAX_CHUNKS];
    vec_job j = {.n = n, .x = x, .part = part};
    const int64_t nc = chunks_of(n, &j.size);
    sbm__cpu_parallel_for(ctx, nc, (MIN_PER_THREAD + j.size - 1) / j.size, amax_chunks, &j);
    /* in chunk order, the first NaN winning: the one-pass result */
    double m = 0.0;
    for (int64_t k = 0; k < nc; k++) {
        if (part[k] > m || part[k] != part[k]) m = part[k];
        if (m != m) break;
    }
    *h_max = m;
    return SBM_SUCCESS;
}

static void axpy_range(void *data, int64_t b, int64_t e)
{
    vec_job *j = data;
    for (int64_t i = b; i < e; i++) j->y[i] += j->a * j->x[i];
}

static void xpay_range(void *data, int64_t b, int64_t e)
{
    vec_job *j = data;
    for (int64_t i = b; i < e; i++) j->y[i] = j->x[i] + j->a * j->y[i];
}

static void scale_range(void *data, int64_t b, int64_t e)
{
    vec_job *j = data;
    for (int64_t i = b; i < e; i++) j->y[i] *= j->a;
}

sbm_status sbm__cpu_vec_axpy(sbm_ctx *ctx, int64_t n, double a, const double *x, double *y)
{
    vec_job j = {.n = n, .a = a, .x = x, .y = y};
    sbm__cpu_parallel_for(ctx, n, MIN_PER_THREAD, axpy_range, &j);
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_vec_xpay(sbm_ctx *ctx, int64_t n, const double *x, double a, double *y)
{
    vec_job j = {.n = n, .a = a, .x = x, .y = y};
    sbm__cpu_parallel_for(ctx, n, MIN_PER_THREAD, xpay_range, &j);
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_vec_scale(sbm_ctx *ctx, int64_t n, double a, double *x)
{
    vec_job j = {.n = n, .a = a, .y = x};
    sbm__cpu_parallel_for(ctx, n, MIN_PER_THREAD, scale_range, &j);
    return SBM_SUCCESS;
}
