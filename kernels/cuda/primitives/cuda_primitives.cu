/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared device-wide primitives: scans, radix and segmented sorts (CUB), and the pattern
 * transpose every conversion builds on. One implementation used by the block and (later) the
 * scalar paths alike. All CUB instantiations live in this
 * file so that the other translation units compile quickly. */
#include "cuda_internal.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

/* ---------------------------------------------------------------------------------------- */
/* Scan and sum                                                                             */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm__cuda_scan_i64(sbm_ctx *ctx, const int64_t *d_in, int64_t *d_out, int64_t n)
{
    sbm_status st = SBM_SUCCESS;
    size_t temp = 0;
    void *d_temp = NULL;
    cudaStream_t s = sbm__cuda_stream(ctx);
    if (n <= 0) return SBM_SUCCESS;
    SBM__CU(ctx, cub::DeviceScan::ExclusiveSum(NULL, temp, d_in, d_out, n, s), "CUB scan (size query)");
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_CUB, temp, &d_temp));
    SBM__CU(ctx, cub::DeviceScan::ExclusiveSum(d_temp, temp, d_in, d_out, n, s), "CUB exclusive scan");
done:
    return st;
}

sbm_status sbm__cuda_sum_i64(sbm_ctx *ctx, const int64_t *d_in, int64_t *d_out, int64_t n)
{
    sbm_status st = SBM_SUCCESS;
    size_t temp = 0;
    void *d_temp = NULL;
    cudaStream_t s = sbm__cuda_stream(ctx);
    SBM__CU(ctx, cub::DeviceReduce::Sum(NULL, temp, d_in, d_out, n, s), "CUB sum (size query)");
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_CUB, temp, &d_temp));
    SBM__CU(ctx, cub::DeviceReduce::Sum(d_temp, temp, d_in, d_out, n, s), "CUB sum");
done:
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Sorts                                                                                    */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm__cuda_radix_pairs_temp(sbm_ctx *ctx, int key_bytes, int64_t n, size_t *bytes)
{
    sbm_status st = SBM_SUCCESS;
    size_t temp = 0;
    *bytes = 0;
    if (n <= 0) return SBM_SUCCESS;
    if (key_bytes == 4)
        SBM__CU(ctx, cub::DeviceRadixSort::SortPairs(NULL, temp, (const uint32_t *)NULL,
                                                     (uint32_t *)NULL, (const uint64_t *)NULL,
                                                     (uint64_t *)NULL, n, 0, 32,
                                                     sbm__cuda_stream(ctx)),
                "CUB radix sort (size query)");
    else
        SBM__CU(ctx, cub::DeviceRadixSort::SortPairs(NULL, temp, (const uint64_t *)NULL,
                                                     (uint64_t *)NULL, (const uint64_t *)NULL,
                                                     (uint64_t *)NULL, n, 0, 64,
                                                     sbm__cuda_stream(ctx)),
                "CUB radix sort (size query)");
    *bytes = temp;
done:
    return st;
}

template <class K>
static sbm_status sbm__radix_pairs(sbm_ctx *ctx, const K *keys_in, K *keys_out,
                                   const uint64_t *vals_in, uint64_t *vals_out, int64_t n, int bits)
{
    sbm_status st = SBM_SUCCESS;
    size_t temp = 0;
    void *d_temp = NULL;
    cudaStream_t s = sbm__cuda_stream(ctx);
    if (n <= 0) return SBM_SUCCESS;
    if (bits < 1) bits = 1;
    if (bits > (int)(8 * sizeof(K))) bits = (int)(8 * sizeof(K));
    SBM__CU(ctx, cub::DeviceRadixSort::SortPairs(NULL, temp, keys_in, keys_out, vals_in, vals_out,
                                                 n, 0, bits, s),
            "CUB radix sort (size query)");
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_CUB, temp, &d_temp));
    SBM__CU(ctx, cub::DeviceRadixSort::SortPairs(d_temp, temp, keys_in, keys_out, vals_in,
                                                 vals_out, n, 0, bits, s),
            "CUB radix sort");
done:
    return st;
}

sbm_status sbm__cuda_radix_pairs_u32(sbm_ctx *ctx, const uint32_t *keys_in, uint32_t *keys_out,
                                     const uint64_t *vals_in, uint64_t *vals_out, int64_t n,
                                     int bits)
{
    return sbm__radix_pairs<uint32_t>(ctx, keys_in, keys_out, vals_in, vals_out, n, bits);
}

sbm_status sbm__cuda_radix_pairs_u64(sbm_ctx *ctx, const uint64_t *keys_in, uint64_t *keys_out,
                                     const uint64_t *vals_in, uint64_t *vals_out, int64_t n,
                                     int bits)
{
    return sbm__radix_pairs<uint64_t>(ctx, keys_in, keys_out, vals_in, vals_out, n, bits);
}

sbm_status sbm__cuda_segsort_pairs_temp(sbm_ctx *ctx, int64_t n, int64_t nseg,
                                        const int64_t *d_offsets, size_t *bytes)
{
    sbm_status st = SBM_SUCCESS;
    size_t temp = 0;
    *bytes = 0;
    if (n <= 0 || nseg <= 0) return SBM_SUCCESS;
    SBM__CU(ctx, cub::DeviceSegmentedSort::StableSortPairs(
                     NULL, temp, (const int32_t *)NULL, (int32_t *)NULL, (const uint64_t *)NULL,
                     (uint64_t *)NULL, n, nseg, d_offsets, d_offsets + 1, sbm__cuda_stream(ctx)),
            "CUB segmented sort (size query)");
    *bytes = temp;
done:
    return st;
}

sbm_status sbm__cuda_segsort_pairs(sbm_ctx *ctx, const int32_t *keys_in, int32_t *keys_out,
                                   const uint64_t *vals_in, uint64_t *vals_out, int64_t n,
                                   int64_t nseg, const int64_t *d_offsets)
{
    sbm_status st = SBM_SUCCESS;
    size_t temp = 0;
    void *d_temp = NULL;
    cudaStream_t s = sbm__cuda_stream(ctx);
    if (n <= 0 || nseg <= 0) return SBM_SUCCESS;
    SBM__CU(ctx, cub::DeviceSegmentedSort::StableSortPairs(NULL, temp, keys_in, keys_out, vals_in,
                                                           vals_out, n, nseg, d_offsets,
                                                           d_offsets + 1, s),
            "CUB segmented sort (size query)");
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_CUB, temp, &d_temp));
    SBM__CU(ctx, cub::DeviceSegmentedSort::StableSortPairs(d_temp, temp, keys_in, keys_out,
                                                           vals_in, vals_out, n, nseg, d_offsets,
                                                           d_offsets + 1, s),
            "CUB segmented sort");
done:
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Pattern transpose                                                                        */
/* ---------------------------------------------------------------------------------------- */

__global__ void sbm__k_iota_keys(int64_t nnz, const int32_t *ind, uint32_t *keys, uint64_t *vals)
{
    SBM__GRID_STRIDE(e, nnz)
    {
        keys[e] = (uint32_t)ind[e];
        vals[e] = (uint64_t)e;
    }
}

/* tptr[i] = number of entries with minor index < i: a lower bound in the sorted keys. */
__global__ void sbm__k_tptr(int64_t nminor, int64_t nnz, const uint32_t *sorted, int64_t *tptr)
{
    SBM__GRID_STRIDE(i, nminor + 1)
    {
        tptr[i] = i == nminor ? nnz : sbm__lower_bound(sorted, 0, nnz, (uint32_t)i);
    }
}

/* tind[q] = major line of the original entry perm[q] (a search in ptr). */
__global__ void sbm__k_tind(int64_t nmajor, int64_t nnz, const int64_t *ptr, const uint64_t *perm,
                            int32_t *tind)
{
    SBM__GRID_STRIDE(q, nnz)
    {
        int64_t e = (int64_t)perm[q];
        tind[q] = (int32_t)(sbm__upper_bound(ptr, 0, nmajor + 1, e) - 1);
    }
}

sbm_status sbm__cuda_pattern_transpose(sbm_ctx *ctx, int slot, int64_t nmajor, int64_t nminor,
                                       int64_t nnz, const int64_t *ptr, const int32_t *ind,
                                       int64_t *tptr, int32_t *tind, int64_t *perm)
{
    /* A stable radix sort of the entries by minor index keeps each minor line in increasing
     * major order, which is the sorted transposed pattern; integer-only, so deterministic. */
    sbm_status st = SBM_SUCCESS;
    sbm__carve cv = {0};
    size_t o_kin = sbm__carve_add(&cv, (size_t)nnz * sizeof(uint32_t));
    size_t o_kout = sbm__carve_add(&cv, (size_t)nnz * sizeof(uint32_t));
    size_t o_vin = sbm__carve_add(&cv, (size_t)nnz * sizeof(uint64_t));
    char *base = NULL;
    uint32_t *kin, *kout;
    uint64_t *vin;
    cudaStream_t s = sbm__cuda_stream(ctx);
    SBM__CK(sbm__cuda_workspace(ctx, slot, cv.total, (void **)&base));
    kin = (uint32_t *)(base + o_kin);
    kout = (uint32_t *)(base + o_kout);
    vin = (uint64_t *)(base + o_vin);
    if (nnz > 0) {
        sbm__k_iota_keys<<<sbm__grid(nnz, 256), 256, 0, s>>>(nnz, ind, kin, vin);
        SBM__LAUNCHED(ctx, "pattern transpose (keys)");
        SBM__CK(sbm__cuda_radix_pairs_u32(ctx, kin, kout, vin, (uint64_t *)perm, nnz,
                                          sbm__bits_for(nminor)));
    }
    sbm__k_tptr<<<sbm__grid(nminor + 1, 256), 256, 0, s>>>(nminor, nnz, kout, tptr);
    SBM__LAUNCHED(ctx, "pattern transpose (pointers)");
    if (nnz > 0) {
        sbm__k_tind<<<sbm__grid(nnz, 256), 256, 0, s>>>(nmajor, nnz, ptr, (const uint64_t *)perm,
                                                       tind);
        SBM__LAUNCHED(ctx, "pattern transpose (indices)");
    }
done:
    return st;
}
