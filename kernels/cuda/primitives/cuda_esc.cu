/* SPDX-License-Identifier: BSD-3-Clause */
/* The ESC layer shared by the SpGEMM plans (cuda_esc.cuh): sort variant, slices under the memory
 * budget, their workspace, the sort of a slice. */
#include "cuda_esc.cuh"

#include <stdlib.h>

int sbm__esc_use_radix(int64_t entries, int64_t segments)
{
    return segments > 0 && entries / segments >= 256;
}

sbm_status sbm__esc_slice_bytes(sbm_ctx *ctx, const sbm__esc_sort *so, int64_t n, int64_t ns,
                                size_t *bytes)
{
    size_t temp = 0;
    sbm__carve cv = {0};
    sbm__carve_add(&cv, (size_t)n * so->key_bytes);
    sbm__carve_add(&cv, (size_t)n * so->key_bytes);
    sbm__carve_add(&cv, (size_t)n * sizeof(uint64_t));
    if (so->vals_out) sbm__carve_add(&cv, (size_t)n * sizeof(uint64_t));
    sbm__carve_add(&cv, (size_t)(ns + 1) * sizeof(int64_t));
    if (so->radix)
        SBM__TRY(sbm__cuda_radix_pairs_temp(ctx, so->key_bytes, n, &temp));
    else
        SBM__TRY(sbm__cuda_segsort_pairs_temp(ctx, n, ns, NULL, &temp));
    *bytes = cv.total + temp;
    return SBM_SUCCESS;
}

/* The longest run of segments from g that fits budget (at least g + 1): doubling, then
 * bisection, since the workspace grows with the run. */
static sbm_status sbm__esc_longest_run(sbm_ctx *ctx, const sbm__esc_sort *so, int64_t nseg,
                                       const int64_t *off, size_t budget, int64_t g, int64_t *end)
{
    size_t need = 0;
    int64_t lo = g + 1, hi;
    for (int64_t step = 1;; step *= 2) {
        hi = g + 1 + step;
        if (hi > nseg) hi = nseg;
        if (hi == lo) break;
        SBM__TRY(sbm__esc_slice_bytes(ctx, so, off[hi] - off[g], hi - g, &need));
        if (need > budget) break; /* hi does not fit, lo does */
        lo = hi;
        if (hi == nseg) break;
    }
    while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        SBM__TRY(sbm__esc_slice_bytes(ctx, so, off[mid] - off[g], mid - g, &need));
        if (need <= budget)
            lo = mid;
        else
            hi = mid;
    }
    *end = lo;
    return SBM_SUCCESS;
}

sbm_status sbm__esc_plan_slices(sbm_ctx *ctx, const sbm__esc_sort *so, int64_t nseg,
                                const int64_t *off, size_t budget, int64_t *oversize, size_t *need,
                                int64_t **cuts_out, int64_t *nslices)
{
    sbm_status st = SBM_SUCCESS;
    int64_t ns = 0;
    int64_t *cuts = (int64_t *)malloc((size_t)(nseg + 2) * sizeof(int64_t));
    *cuts_out = NULL;
    *nslices = 0;
    if (!cuts)
        return sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory "
                          "for the slice table", (size_t)(nseg + 2) * sizeof(int64_t));
    cuts[0] = 0;
    if (nseg > 0) {
        /* one query where everything fits (the common case: the default budget) */
        size_t all = 0;
        SBM__CK(sbm__esc_slice_bytes(ctx, so, off[nseg] - off[0], nseg, &all));
        if (all <= budget || (!oversize && (off[nseg] == off[0] || nseg <= 1))) {
            cuts[++ns] = nseg;
            goto done;
        }
    }
    for (int64_t g = 0; g < nseg;) {
        size_t alone = 0;
        SBM__CK(sbm__esc_slice_bytes(ctx, so, off[g + 1] - off[g], 1, &alone));
        if (alone > budget && oversize) {
            *oversize = g;
            *need = alone;
            st = SBM_ERR_OUT_OF_MEMORY;
            goto done;
        }
        SBM__CK(sbm__esc_longest_run(ctx, so, nseg, off, budget, g, &g));
        cuts[++ns] = g;
    }
done:
    if (st != SBM_SUCCESS) {
        free(cuts);
        return st;
    }
    *cuts_out = cuts;
    *nslices = ns;
    return SBM_SUCCESS;
}

sbm_status sbm__esc_workspace(sbm_ctx *ctx, const sbm__esc_sort *so, const int64_t *off,
                              const int64_t *cuts, int64_t nslices, sbm__esc_buffers *buf)
{
    sbm__carve sc = {0};
    int64_t worst_n = 0, worst_ns = 0;
    char *base = NULL;
    for (int64_t t = 0; t < nslices; t++) {
        const int64_t n = off[cuts[t + 1]] - off[cuts[t]];
        if (n > worst_n) worst_n = n;
        if (cuts[t + 1] - cuts[t] > worst_ns) worst_ns = cuts[t + 1] - cuts[t];
    }
    const size_t o_kin = sbm__carve_add(&sc, (size_t)worst_n * so->key_bytes);
    const size_t o_kout = sbm__carve_add(&sc, (size_t)worst_n * so->key_bytes);
    const size_t o_vin = sbm__carve_add(&sc, (size_t)worst_n * sizeof(uint64_t));
    const size_t o_vout = so->vals_out ? sbm__carve_add(&sc, (size_t)worst_n * sizeof(uint64_t)) : 0;
    const size_t o_off = sbm__carve_add(&sc, (size_t)(worst_ns + 1) * sizeof(int64_t));
    SBM__TRY(sbm__cuda_workspace(ctx, SBM__WS_OP_B, sc.total, (void **)&base));
    buf->kin = base + o_kin;
    buf->kout = base + o_kout;
    buf->vin = (uint64_t *)(base + o_vin);
    buf->vout = so->vals_out ? (uint64_t *)(base + o_vout) : NULL;
    buf->off = (int64_t *)(base + o_off);
    return SBM_SUCCESS;
}

sbm_status sbm__esc_sort_slice(sbm_ctx *ctx, const sbm__esc_sort *so, const void *kin, void *kout,
                               const uint64_t *vin, uint64_t *vout, int64_t n, int64_t ns,
                               const int64_t *off, int sbits)
{
    if (!so->radix)
        return sbm__cuda_segsort_pairs(ctx, (const int32_t *)kin, (int32_t *)kout, vin, vout, n,
                                       ns, off);
    if (so->key_bytes == 4)
        return sbm__cuda_radix_pairs_u32(ctx, (const uint32_t *)kin, (uint32_t *)kout, vin, vout,
                                         n, sbits);
    return sbm__cuda_radix_pairs_u64(ctx, (const uint64_t *)kin, (uint64_t *)kout, vin, vout, n,
                                     sbits);
}
