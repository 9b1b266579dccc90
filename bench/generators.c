/* Seeded block-matrix generators for sbm-bench (see generators.h). */
#include "generators.h"

#include <stdlib.h>
#include <string.h>

/* splitmix64 */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double rng_value(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

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
                c[t] = (int32_t)(rng_next(&s) % (uint64_t)nbr);
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
