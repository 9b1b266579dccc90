/* SPDX-License-Identifier: BSD-3-Clause */
/* The expand-sort-compress (ESC) layer shared by the block SpGEMM plan (cuda_gemm_plan.cu) and
 * the global path of the scalar CSR SpGEMM plan (cuda_csr_gemm_plan_esc.cu), section 4 of the
 * design card: the sort variant of an expansion, its cut into slices of whole segments (output
 * columns or rows) whose sort workspace fits the memory budget, that workspace, and the sort of
 * a slice over the CUB wrappers of cuda_primitives.cu. Each operation expands and compresses with
 * its own kernels. */
#ifndef SBM_CUDA_ESC_CUH
#define SBM_CUDA_ESC_CUH

#include "cuda_internal.cuh"

/* How the slices of one expansion are sorted. */
typedef struct sbm__esc_sort {
    int radix;     /* 1: stable LSD radix sort of packed keys, 0: segmented sort of int32 keys */
    int key_bytes; /* 4 or 8 (8 only with radix) */
    int vals_out;  /* 1: the sorted values go to a buffer of the workspace, 0: to the caller's */
} sbm__esc_sort;

/* The workspace of a slice, carved from pool slot OP_B for the largest slice: keys in and out,
 * values in (and out when vals_out), segment offsets (segmented sort). */
typedef struct sbm__esc_buffers {
    void *kin;
    void *kout;
    uint64_t *vin;
    uint64_t *vout; /* NULL unless vals_out */
    int64_t *off;
} sbm__esc_buffers;

/* @return 1 to sort an expansion of `entries` entries in `segments` segments with the radix
 * sort, 0 with the segmented sort: the radix sort's few full passes win on long segments, the
 * segmented sort's per-segment work on short ones (measurements at sbm__gemm_use_radix). */
int sbm__esc_use_radix(int64_t entries, int64_t segments);
/* *bytes = workspace of sorting a slice of n entries in ns segments, CUB's temporary storage
 * included. */
sbm_status sbm__esc_slice_bytes(sbm_ctx *ctx, const sbm__esc_sort *so, int64_t n, int64_t ns,
                                size_t *bytes);
/* Cut segments [0, nseg), entries off[j] .. off[j+1]-1 of segment j (host array), into slices
 * whose workspace fits budget, each the longest run of segments from its first that fits:
 * slice t is segments cuts[t] .. cuts[t+1]-1, *cuts_out malloc'd. A segment that does not fit
 * alone: with oversize NULL it is a slice of its own (the budget is then exceeded by that
 * segment's minimum), and there is one slice when nothing is to be sorted or nseg <= 1;
 * otherwise the call returns SBM_ERR_OUT_OF_MEMORY with *oversize = the segment and *need = its
 * workspace, and the caller writes the message (it knows what a segment is). */
sbm_status sbm__esc_plan_slices(sbm_ctx *ctx, const sbm__esc_sort *so, int64_t nseg,
                                const int64_t *off, size_t budget, int64_t *oversize, size_t *need,
                                int64_t **cuts_out, int64_t *nslices);
/* The workspace of the largest of the slices cuts[0..nslices] into *buf. */
sbm_status sbm__esc_workspace(sbm_ctx *ctx, const sbm__esc_sort *so, const int64_t *off,
                              const int64_t *cuts, int64_t nslices, sbm__esc_buffers *buf);
/* Sort a slice of n entries (keys kin, values vin) in ns segments (offsets off, device; the
 * segmented sort) or on the low sbits bits of the packed keys (the radix sort): keys to kout,
 * values to vout. Stable either way: equal keys keep their expansion order. */
sbm_status sbm__esc_sort_slice(sbm_ctx *ctx, const sbm__esc_sort *so, const void *kin, void *kout,
                               const uint64_t *vin, uint64_t *vout, int64_t n, int64_t ns,
                               const int64_t *off, int sbits);

#endif /* SBM_CUDA_ESC_CUH */
