/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared declarations of the scalar CSR SpGEMM (the algorithm is described in cuda_csr_gemm.cu):
 * bins, the plan, and the functions that cross its files --
 *   cuda_csr_gemm_kernels.cuh   short-row kernel templates (definitions)
 *   cuda_csr_gemm_kernels.cu    their instantiations (one per bin and mode) and launches
 *   cuda_csr_gemm_plan_esc.cu  the global ESC path for long rows
 *   cuda_csr_gemm_plan.cu    the plan: setup, bins, C
 *   cuda_csr_gemm.cu         the numeric phase (execute) and the one-shot product */
#ifndef SBM_CUDA_CSR_GEMM_CUH
#define SBM_CUDA_CSR_GEMM_CUH

#include "cuda_internal.cuh"

/* ---------------------------------------------------------------------------------------- */
/* Bins                                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* Bin 0: rows without products (empty in C). Bins 1..SBM__CG_SHORT: at most 16 << (bin-1)
 * products, shared-memory groups. Bin SBM__CG_GLOBAL: the global ESC path. */
#define SBM__CG_SHORT 6
#define SBM__CG_GLOBAL (SBM__CG_SHORT + 1)
#define SBM__CG_NBINS (SBM__CG_GLOBAL + 1)
/* 512 products: one warp per row is latency-bound on longer rows when there are few of them, where
 * the global path is faster; 2D Poisson with 4x4 blocks (400 products a row) stays in shared memory
 * (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). */
#define SBM__CG_SHORT_MAX (16 << (SBM__CG_SHORT - 1))

/* Short rows keep the A entry of each product relative to the row in 16 bits: rows of A with
 * 2^16 or more entries go to the global path. */
#define SBM__CG_PLOCAL_MAX 65536

/* Threads of the CTA-per-row kernels of the global path. */
#define SBM__CG_NT 256

typedef struct sbm__csr_gpu_plan {
    sbm__plan_header h; /* first: the front end reads it */
    sbm_allocator al;   /* allocator of the device arrays below */
    int64_t m;          /* rows of C */
    int64_t nnz_c;      /* entries of C */
    int64_t products;   /* scalar products, = entries of pairs */
    int64_t *seg;       /* entry c of C sums pairs seg[c] .. seg[c+1]-1 (size nnz_c+1) */
    uint64_t *pairs;    /* (A entry << 32 | B entry), sorted by entry of C (size products) */
} sbm__csr_gpu_plan;

/* ---------------------------------------------------------------------------------------- */
/* Short rows: one group of G threads per row, everything in shared memory                   */
/* ---------------------------------------------------------------------------------------- */

/* COUNT: the lengths of C's rows. FILL: C's columns and the plan's runs and pairs. DIRECT
 * (sbm_csr_gemm, where every row is short): C's columns and values, no plan. */
enum { SBM__CG_COUNT = 0, SBM__CG_FILL = 1, SBM__CG_DIRECT = 2 };

/* Sort keys: the column (segmented sort), or (row in slice << cbits | column) packed into 32
 * or 64 bits (radix sort). */
enum { SBM__CG_KEY_COL = 0, SBM__CG_KEY_PACK32 = 1, SBM__CG_KEY_PACK64 = 2 };

/* Short rows of bin `bin` (1..SBM__CG_SHORT) in mode `mode` (cuda_csr_gemm_kernels.cu). */
sbm_status sbm__cg_short_bin(sbm_ctx *ctx, int bin, int mode, int64_t nrows, const uint64_t *rows,
                             const int64_t *poff, const sbm_csr *A, const sbm_csr *B,
                             const int64_t *Cp, int32_t *Cj, int64_t *seg, uint64_t *pairs,
                             int64_t *clen, double *Cx);
/* The global rows' expansion and sort per slice, their row lengths (cuda_csr_gemm_plan_esc.cu). */
sbm_status sbm__cg_global_symbolic(sbm_ctx *ctx, sbm__csr_gpu_plan *P, const sbm_csr *A,
                                   const sbm_csr *B, int64_t ng, const uint64_t *grows,
                                   const int64_t *gP, const int64_t *poff, int64_t *clen);
/* The global rows' columns of C and the first pair of each entry (cuda_csr_gemm_plan_esc.cu). */
sbm_status sbm__cg_global_columns(sbm_ctx *ctx, int64_t ng, const uint64_t *grows,
                                  const int64_t *poff, const uint64_t *pairs, const sbm_csr *B,
                                  sbm_csr *C, int64_t *seg);
/* The plan and C (values zero), or with direct set and every row short, C with its values and
 * no plan (cuda_csr_gemm_plan.cu). */
sbm_status sbm__cg_plan(sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B, int direct,
                        sbm_csr_plan **plan, sbm_csr **Cout);

#endif /* SBM_CUDA_CSR_GEMM_CUH */
