/* SPDX-License-Identifier: BSD-3-Clause */
/* Seeded block-matrix generators for sbm-bench (see generators.h). */
#include "generators.h"

#include <stdlib.h>
#include <string.h>

/* [-1, 1), from the library's SplitMix64 (2*u - 1 is exact, so the same as before) */
static double rng_value(uint64_t *s) { return 2.0 * sbm_splitmix64_uniform(s) - 1.0; }

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Fill values for the pattern and create the matrix; takes ownership of colptr and rowind. */
static sbm_status finish(sbm_ctx *ctx, int64_t nbr, int64_t nbc, int r, int c, int64_t *colptr,
                         int32_t *rowind, uint64_t seed, sbm_cbc **A)
{
    const int64_t nnzb = colptr[nbc];
    const size_t nval = (size_t)nnzb * (size_t)r * (size_t)c;
    double *values = malloc(nval * sizeof(double) + 1);
    sbm_status st = SBM_ERR_OUT_OF_MEMORY;
    if (values != NULL) {
        uint64_t s = seed;
        for (size_t k = 0; k < nval; k++) values[k] = rng_value(&s);
        st = sbm_cbc_create(ctx, A, nbr, nbc, r, c, colptr, rowind, values);
    }
    free(values);
    free(colptr);
    free(rowind);
    return st;
}

/* Stencil pattern on a grid of n nodes: column j holds j + offs[t] for every in-range t, where
 * in_range decides (offsets sorted ascending). */
typedef int (*stencil_fn)(int64_t g, int64_t j, int t);

static int in2d(int64_t g, int64_t j, int t)
{
    const int64_t x = j % g, y = j / g;
    switch (t) {
    case 0: return y > 0;
    case 1: return x > 0;
    case 2: return 1;
    case 3: return x < g - 1;
    default: return y < g - 1;
    }
}

static int in3d(int64_t g, int64_t j, int t)
{
    const int64_t x = j % g, y = (j / g) % g, z = j / (g * g);
    switch (t) {
    case 0: return z > 0;
    case 1: return y > 0;
    case 2: return x > 0;
    case 3: return 1;
    case 4: return x < g - 1;
    case 5: return y < g - 1;
    default: return z < g - 1;
    }
}

static sbm_status stencil(sbm_ctx *ctx, int64_t g, int64_t n, int npts, const int64_t *offs,
                          stencil_fn in, int b, uint64_t seed, sbm_cbc **A)
{
    int64_t *colptr = malloc(sizeof(int64_t) * (size_t)(n + 1));
    int32_t *rowind = malloc(sizeof(int32_t) * (size_t)(n * npts) + 1);
    if (colptr == NULL || rowind == NULL) {
        free(colptr);
        free(rowind);
        return SBM_ERR_OUT_OF_MEMORY;
    }
    int64_t k = 0;
    colptr[0] = 0;
    for (int64_t j = 0; j < n; j++) {
        for (int t = 0; t < npts; t++)
            if (in(g, j, t)) rowind[k++] = (int32_t)(j + offs[t]);
        colptr[j + 1] = k;
    }
    return finish(ctx, n, n, b, b, colptr, rowind, seed, A);
}

sbm_status gen_poisson2d(sbm_ctx *ctx, int64_t g, int b, uint64_t seed, sbm_cbc **A)
{
    const int64_t offs[5] = {-g, -1, 0, 1, g};
    return stencil(ctx, g, g * g, 5, offs, in2d, b, seed, A);
}

sbm_status gen_poisson3d(sbm_ctx *ctx, int64_t g, int b, uint64_t seed, sbm_cbc **A)
{
    const int64_t offs[7] = {-g * g, -g, -1, 0, 1, g, g * g};
    return stencil(ctx, g, g * g * g, 7, offs, in3d, b, seed, A);
}

/* per_col distinct sorted random rows in [0, nbr) for each of nbc columns. */
static sbm_status random_pattern(int64_t nbr, int64_t nbc, int per_col, uint64_t seed,
                                 int64_t **colptr_out, int32_t **rowind_out)
{
    int64_t *colptr = malloc(sizeof(int64_t) * (size_t)(nbc + 1));
    int32_t *rowind = malloc(sizeof(int32_t) * (size_t)(nbc * per_col) + 1);
    if (colptr == NULL || rowind == NULL || per_col > nbr) {
        free(colptr);
        free(rowind);
        return per_col > nbr ? SBM_ERR_INVALID_ARGUMENT : SBM_ERR_OUT_OF_MEMORY;
    }
    uint64_t s = seed;
    colptr[0] = 0;
    for (int64_t j = 0; j < nbc; j++) {
        int32_t *c = rowind + j * per_col;
        for (int t = 0; t < per_col; t++) {
            int dup;
            do { /* rejection: per_col is small next to nbr in every bench case */
                c[t] = (int32_t)(sbm_splitmix64(&s) % (uint64_t)nbr);
                dup = 0;
                for (int u = 0; u < t; u++) dup |= c[u] == c[t];
            } while (dup);
        }
        qsort(c, (size_t)per_col, sizeof(int32_t), cmp_i32);
        colptr[j + 1] = (j + 1) * per_col;
    }
    *colptr_out = colptr;
    *rowind_out = rowind;
    return SBM_SUCCESS;
}

sbm_status gen_ba_w(sbm_ctx *ctx, int64_t cameras, int64_t points, int obs, int p,
                    uint64_t pattern_seed, uint64_t value_seed, sbm_cbc **W)
{
    int64_t *colptr = NULL;
    int32_t *rowind = NULL;
    sbm_status st = random_pattern(cameras, points, obs, pattern_seed, &colptr, &rowind);
    if (st != SBM_SUCCESS) return st;
    return finish(ctx, cameras, points, p, 3, colptr, rowind, value_seed, W);
}

sbm_status gen_random_cbc(sbm_ctx *ctx, int64_t nbr, int64_t nbc, int r, int c, int per_col,
                          uint64_t seed, sbm_cbc **A)
{
    int64_t *colptr = NULL;
    int32_t *rowind = NULL;
    sbm_status st = random_pattern(nbr, nbc, per_col, seed, &colptr, &rowind);
    if (st != SBM_SUCCESS) return st;
    return finish(ctx, nbr, nbc, r, c, colptr, rowind, seed ^ 0x5DEECE66Dull, A);
}

/* LSD radix sort of 64-bit keys on their low `bits` bits, 16 bits per pass; the result is in
 * keys (tmp is scratch of the same size). */
static void radix_sort_u64(uint64_t *keys, uint64_t *tmp, size_t n, int bits)
{
    size_t *count = malloc(sizeof(size_t) * 65536);
    if (count == NULL) return;
    for (int shift = 0; shift < bits; shift += 16) {
        memset(count, 0, sizeof(size_t) * 65536);
        for (size_t i = 0; i < n; i++) count[(keys[i] >> shift) & 0xFFFF]++;
        size_t sum = 0;
        for (size_t d = 0; d < 65536; d++) {
            const size_t t = count[d];
            count[d] = sum;
            sum += t;
        }
        for (size_t i = 0; i < n; i++) tmp[count[(keys[i] >> shift) & 0xFFFF]++] = keys[i];
        uint64_t *sw = keys;
        keys = tmp;
        tmp = sw;
    }
    /* after an odd number of passes the sorted keys are in the caller's tmp: copy them back */
    if (((bits + 15) / 16) % 2) memcpy(tmp, keys, n * sizeof *keys);
    free(count);
}

sbm_status gen_rmat_csr(sbm_ctx *ctx, int scale, int edge_factor, double a, double b, double c,
                        uint64_t seed, sbm_csr **A)
{
    if (scale < 1 || scale > 30 || edge_factor < 1 || a < 0 || b < 0 || c < 0 || a + b + c > 1)
        return SBM_ERR_INVALID_ARGUMENT;
    const int64_t n = (int64_t)1 << scale, ne = n * edge_factor;
    uint64_t *key = malloc(sizeof(uint64_t) * (size_t)ne), *tmp = malloc(sizeof(uint64_t) * (size_t)ne);
    int32_t *perm = malloc(sizeof(int32_t) * (size_t)n);
    int64_t *rowptr = malloc(sizeof(int64_t) * (size_t)(n + 1));
    sbm_status st = SBM_ERR_OUT_OF_MEMORY;
    if (key == NULL || tmp == NULL || perm == NULL || rowptr == NULL) goto out;
    /* quadrant thresholds on 16-bit uniforms: four levels per 64-bit draw */
    const uint32_t ta = (uint32_t)(a * 65536.0), tb = (uint32_t)((a + b) * 65536.0),
                   tc = (uint32_t)((a + b + c) * 65536.0);
    uint64_t s = seed;
    for (int64_t v = 0; v < n; v++) perm[v] = (int32_t)v;
    for (int64_t v = n - 1; v > 0; v--) { /* Fisher-Yates */
        const int64_t w = (int64_t)(sbm_splitmix64(&s) % (uint64_t)(v + 1));
        const int32_t t = perm[v];
        perm[v] = perm[w];
        perm[w] = t;
    }
    for (int64_t e = 0; e < ne; e++) {
        uint64_t r = 0, col = 0, bitsrc = 0;
        for (int l = 0; l < scale; l++) {
            if (l % 4 == 0) bitsrc = sbm_splitmix64(&s);
            const uint32_t u = (uint32_t)(bitsrc & 0xFFFF);
            bitsrc >>= 16;
            const uint64_t bit = (uint64_t)1 << (scale - 1 - l);
            if (u >= tc) {
                r |= bit;
                col |= bit;
            } else if (u >= tb) {
                r |= bit;
            } else if (u >= ta) {
                col |= bit;
            }
        }
        key[e] = (uint64_t)perm[r] << 32 | (uint64_t)(uint32_t)perm[col];
    }
    /* sort by (row, column): row sits at bit 32, so 32 + scale key bits */
    radix_sort_u64(key, tmp, (size_t)ne, 32 + scale);
    free(tmp);
    tmp = NULL;
    int64_t nnz = 0;
    for (int64_t e = 0; e < ne; e++)
        if (e == 0 || key[e] != key[e - 1]) key[nnz++] = key[e];
    int32_t *colind = malloc(sizeof(int32_t) * (size_t)nnz + 1);
    double *values = malloc(sizeof(double) * (size_t)nnz + 1);
    if (colind == NULL || values == NULL) {
        free(colind);
        free(values);
        goto out;
    }
    memset(rowptr, 0, sizeof(int64_t) * (size_t)(n + 1));
    for (int64_t k = 0; k < nnz; k++) {
        rowptr[(key[k] >> 32) + 1]++;
        colind[k] = (int32_t)(key[k] & 0xFFFFFFFFu);
        values[k] = rng_value(&s);
    }
    for (int64_t i = 0; i < n; i++) rowptr[i + 1] += rowptr[i];
    st = sbm_csr_create(ctx, A, n, n, rowptr, colind, values);
    free(values);
    free(colind);
out:
    free(rowptr);
    free(perm);
    free(tmp);
    free(key);
    return st;
}
