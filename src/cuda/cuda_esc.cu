/* The expand-sort-compress layer of the block SpGEMM plan (cuda_gemm_plan.cu): the sort variant
 * and the cut of the expansion into slices whose sort workspace fits the memory budget. */
#include "cuda_esc.cuh"

#include <stdlib.h>

/* Sort variant (see the header): the segmented sort for short output columns, the packed-key
 * radix sort for long ones, where its few full passes beat the segmented sort's per-segment
 * work. Measured on an H100 (bench/RESULTS.md, plan ms segmented / radix): 2D Poisson (25
 * entries per column) 0.86-1.19 / 1.02-1.32; BA 1000 cameras (2100 per column) 1.07 / 0.92;
 * BA 5000 cameras (2900 per column) 4.80 / 4.52. The tuning's gemm_sort overrides. */
int sbm__esc_use_radix(const sbm_ctx *ctx, int64_t entries, int64_t nbc)
{
    if (ctx->tuning.gemm_sort == SBM_TUNE_GEMM_SORT_RADIX) return 1;
    if (ctx->tuning.gemm_sort == SBM_TUNE_GEMM_SORT_SEGMENTED) return 0;
    return nbc > 0 && entries / nbc >= 256;
}

/* Workspace of sorting a slice of n entries in ns columns (keys in/out, values in, segment
 * offsets, CUB's temporary storage). */
sbm_status sbm__esc_slice_bytes(sbm_ctx *ctx, int radix, int key_bytes, int64_t n, int64_t ns,
                                size_t *bytes)
{
    size_t temp = 0;
    sbm__carve cv = {0};
    sbm__carve_add(&cv, (size_t)n * key_bytes);
    sbm__carve_add(&cv, (size_t)n * key_bytes);
    sbm__carve_add(&cv, (size_t)n * sizeof(uint64_t));
    sbm__carve_add(&cv, (size_t)(ns + 1) * sizeof(int64_t));
    if (radix)
        SBM__TRY(sbm__cuda_radix_pairs_temp(ctx, key_bytes, n, &temp));
    else
        SBM__TRY(sbm__cuda_segsort_pairs_temp(ctx, n, ns, NULL, &temp));
    *bytes = cv.total + temp;
    return SBM_SUCCESS;
}

/* Cut columns [0, nbc) into slices whose sort workspace fits the budget; cuts[0..ns] on the
 * host (malloc'd). A column is the smallest slice: one whose workspace alone exceeds the budget
 * is sorted on its own (the budget is then exceeded by that column's minimum, as the CPU
 * backend's scatter mode exceeds a budget smaller than its row map); if the device cannot
 * provide even that, the allocation fails with SBM_ERR_OUT_OF_MEMORY. */
sbm_status sbm__esc_plan_slices(sbm_ctx *ctx, int radix, int key_bytes, int64_t nbc,
                                const int64_t *coloff, size_t budget, int64_t **cuts_out,
                                int64_t *nslices)
{
    const int64_t total = coloff[nbc];
    size_t need = 0;
    int64_t *cuts = NULL;
    *cuts_out = NULL;
    *nslices = 0;
    SBM__TRY(sbm__esc_slice_bytes(ctx, radix, key_bytes, total, nbc, &need));
    cuts = (int64_t *)malloc((size_t)(nbc + 2) * sizeof(int64_t));
    if (!cuts)
        return sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory "
                          "for the slice table", (size_t)(nbc + 2) * sizeof(int64_t));
    cuts[0] = 0;
    if (need <= budget || total == 0 || nbc <= 1) {
        cuts[1] = nbc;
        *cuts_out = cuts;
        *nslices = 1;
        return SBM_SUCCESS;
    }
    /* entries per slice in proportion to the budget; shrink until every slice of more than one
     * column fits */
    double cap = (double)total * ((double)budget / (double)need) * 0.9;
    for (int attempt = 0; attempt < 40; attempt++, cap *= 0.75) {
        int64_t ns = 0, j = 0;
        int ok = 1;
        while (j < nbc) {
            int64_t j1 = j + 1;
            while (j1 < nbc && (double)(coloff[j1 + 1] - coloff[j]) <= cap) j1++;
            if (j1 > j + 1) {
                size_t b = 0;
                sbm_status st = sbm__esc_slice_bytes(ctx, radix, key_bytes, coloff[j1] - coloff[j],
                                                     j1 - j, &b);
                if (st != SBM_SUCCESS) {
                    free(cuts);
                    return st;
                }
                if (b > budget) {
                    ok = 0;
                    break;
                }
            }
            cuts[++ns] = j1;
            j = j1;
        }
        if (ok) {
            *cuts_out = cuts;
            *nslices = ns;
            return SBM_SUCCESS;
        }
    }
    /* one column per slice always qualifies */
    for (int64_t j = 0; j <= nbc; j++) cuts[j] = j;
    *cuts_out = cuts;
    *nslices = nbc;
    return SBM_SUCCESS;
}
