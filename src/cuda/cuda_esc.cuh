/* The expand-sort-compress (ESC) layer of the SpGEMM plans (DESIGN.md section 4): the sort
 * variant of an expansion and its cut into slices whose sort workspace fits the memory budget
 * (cuda_esc.cu). The sorts themselves are the CUB wrappers of cuda_primitives.cu. */
#ifndef SBM_CUDA_ESC_CUH
#define SBM_CUDA_ESC_CUH

#include "cuda_internal.cuh"

/* @return 1 to sort an expansion of `entries` entries in nbc segments (output columns) with the
 * packed-key radix sort, 0 with the segmented sort (the tuning's gemm_sort may force either). */
int sbm__esc_use_radix(const sbm_ctx *ctx, int64_t entries, int64_t nbc);
/* *bytes = workspace of sorting a slice of n entries in ns segments with the chosen variant and
 * key size (keys in and out, values in, segment offsets, CUB's temporary storage). */
sbm_status sbm__esc_slice_bytes(sbm_ctx *ctx, int radix, int key_bytes, int64_t n, int64_t ns,
                                size_t *bytes);
/* Cut segments [0, nbc), entries coloff[j]..coloff[j+1]-1 of segment j (host array), into
 * *nslices slices whose workspace fits budget: slice t is segments cuts[t]..cuts[t+1]-1, *cuts_out
 * malloc'd (nslices+1 entries used). A segment whose own workspace exceeds the budget is a slice
 * of its own. */
sbm_status sbm__esc_plan_slices(sbm_ctx *ctx, int radix, int key_bytes, int64_t nbc,
                                const int64_t *coloff, size_t budget, int64_t **cuts_out,
                                int64_t *nslices);

#endif /* SBM_CUDA_ESC_CUH */
