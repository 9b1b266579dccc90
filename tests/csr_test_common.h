/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the scalar CSR suites (test_csr_spmv.c, test_csr_spmm.c, test_csr_gemm.c):
 * seeded random CSR matrices with controlled row-length distributions, and dense arrays in a
 * context's memory (the public API has no vector type, so the suites use the backend's copy). */
#ifndef SBM_CSR_TEST_COMMON_H
#define SBM_CSR_TEST_COMMON_H

#include "test_util.h"

#include "sbm_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Row-length distributions of the random matrices. */
typedef enum csr_kind {
    CSR_UNIFORM,    /* each entry present with probability density */
    CSR_POWER,      /* Pareto-distributed row lengths (a few long rows, many short or empty) */
    CSR_EMPTY_ROWS, /* uniform, with every third row empty */
    CSR_DENSE_ROW   /* uniform, with one full row in the middle */
} csr_kind;

/* A CSR matrix in host arrays (malloc'd). */
typedef struct hcsr {
    int64_t m, n;
    int64_t *rowptr;
    int32_t *colind;
    double *values;
} hcsr;

static inline void hcsr_free(hcsr *h)
{
    free(h->rowptr);
    free(h->colind);
    free(h->values);
    memset(h, 0, sizeof *h);
}

/* Seeded random matrix of a kind; about 5% of the stored values are explicit zeros, so
 * structural zeros travel through every operation. */
static inline hcsr hcsr_random(uint64_t seed, int64_t m, int64_t n, csr_kind kind, double density)
{
    sbm_test_rng g = sbm_test_rng_seed(seed);
    hcsr h = {m, n, calloc((size_t)m + 1, sizeof(int64_t)), NULL, NULL};
    int32_t *perm = malloc(((size_t)n + 1) * sizeof *perm);
    int32_t *row = malloc(((size_t)n + 1) * sizeof *row);
    size_t cap = 16;
    h.colind = malloc(cap * sizeof *h.colind);
    assert_non_null(h.rowptr);
    assert_non_null(perm);
    assert_non_null(row);
    assert_non_null(h.colind);
    for (int64_t j = 0; j < n; j++) perm[j] = (int32_t)j;
    for (int64_t i = 0; i < m; i++) {
        int64_t len = 0;
        if (kind == CSR_POWER) {
            /* Pareto with exponent 1.2: mean about 5, tail up to n */
            double u = sbm_test_rng_uniform(&g);
            double l = floor(pow(1.0 - u, -1.0 / 1.2)) - 1.0;
            len = l > (double)n ? n : (int64_t)l;
            /* partial Fisher-Yates over a persistent permutation, then sort */
            for (int64_t t = 0; t < len; t++) {
                int64_t s = t + sbm_test_rng_below(&g, n - t);
                int32_t tmp = perm[t];
                perm[t] = perm[s];
                perm[s] = tmp;
                row[t] = perm[t];
            }
            for (int64_t a = 1; a < len; a++) {
                int32_t v = row[a];
                int64_t b = a;
                for (; b > 0 && row[b - 1] > v; b--) row[b] = row[b - 1];
                row[b] = v;
            }
        } else if (!(kind == CSR_EMPTY_ROWS && i % 3 == 1)) {
            int full = kind == CSR_DENSE_ROW && i == m / 2;
            for (int64_t j = 0; j < n; j++)
                if (full || sbm_test_rng_uniform(&g) < density) row[len++] = (int32_t)j;
        }
        while ((size_t)(h.rowptr[i] + len) > cap) {
            cap *= 2;
            h.colind = realloc(h.colind, cap * sizeof *h.colind);
            assert_non_null(h.colind);
        }
        memcpy(h.colind + h.rowptr[i], row, (size_t)len * sizeof *row);
        h.rowptr[i + 1] = h.rowptr[i] + len;
    }
    int64_t nnz = h.rowptr[m];
    h.values = malloc(((size_t)nnz + 1) * sizeof *h.values);
    assert_non_null(h.values);
    for (int64_t p = 0; p < nnz; p++)
        h.values[p] = sbm_test_rng_uniform(&g) < 0.05 ? 0.0 : sbm_test_rng_value(&g);
    free(perm);
    free(row);
    return h;
}

/* The matrix h in ctx's memory. */
static inline sbm_csr *hcsr_upload(sbm_ctx *ctx, const hcsr *h)
{
    sbm_csr *A = NULL;
    SBM_ASSERT_OK(ctx, sbm_csr_create(ctx, &A, h->m, h->n, h->rowptr, h->colind, h->values));
    return A;
}

/* Column-major dense form of h (m x n). */
static inline double *hcsr_dense(const hcsr *h)
{
    double *d = calloc((size_t)(h->m * h->n) + 1, sizeof *d);
    assert_non_null(d);
    for (int64_t i = 0; i < h->m; i++)
        for (int64_t p = h->rowptr[i]; p < h->rowptr[i + 1]; p++)
            d[i + h->colind[p] * h->m] = h->values[p];
    return d;
}

static inline void dev_free(sbm_ctx *ctx, double *d) { sbm__free(ctx, d); }

/* Bitwise equality of n doubles (NaN payloads included): "inputs unchanged" checks. */
static inline void assert_same_bits(const double *a, const double *b, int64_t n, const char *what)
{
    if (n > 0 && memcmp(a, b, (size_t)n * sizeof *a) != 0) {
        for (int64_t t = 0; t < n; t++)
            if (memcmp(a + t, b + t, sizeof *a) != 0)
                fail_msg("%s changed at element %lld: %.17g became %.17g", what, (long long)t,
                         a[t], b[t]);
    }
}

/* The dense form of A equals the one taken before (A unchanged by a failed call). */
static inline void assert_csr_unchanged(const sbm_csr *A, const double *before, const char *what)
{
    sbm_csr_info info = sbm_csr_get_info(A);
    double *now = sbm_test_csr_dense(A);
    assert_same_bits(before, now, info.m * info.n, what);
    free(now);
}

#endif /* SBM_CSR_TEST_COMMON_H */
