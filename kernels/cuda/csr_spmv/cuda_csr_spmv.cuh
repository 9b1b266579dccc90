/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared declarations of the scalar CSR SpMV (cuda_csr_spmv.cu describes the kernels and the
 * choice): kernel configurations, the plan, and the functions that cross its files --
 *   cuda_csr_spmv.cu              the choice: row statistics cache, kernel and format choice,
 *                                 sbm_csr_spmv
 *   cuda_csr_spmv_kernels.cuh     kernel templates (definitions)
 *   cuda_csr_spmv_kernels.cu      their instantiations (the compiled configurations) and launches
 *   cuda_csr_spmv_plan_formats.cu      statistics and conversion kernels, a plan's format arrays
 *   cuda_csr_spmv_plan.cu         plans: make, update, execute */
#ifndef SBM_CUDA_CSR_SPMV_CUH
#define SBM_CUDA_CSR_SPMV_CUH

#include "cuda_internal.cuh"

/* ---------------------------------------------------------------------------------------- */
/* Kernel configurations and choice                                                         */
/* ---------------------------------------------------------------------------------------- */

enum { SBM__CSR_SCALAR = 0, SBM__CSR_VECTOR = 1, SBM__CSR_MERGE = 2 };

/* Merge-path tile shapes compiled (SBM__CSR_MERGE_CONFIGS: threads, items per thread, streaming
 * loads of A, persistent grid loading ahead), and the default, the fastest measured. Loading ahead
 * on a persistent grid was slower (its registers cost more resident CTAs than the overlap
 * gains); those stay selectable for measurements
 * (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). */
#define SBM__MERGE_CONFIGS SBM__CSR_MERGE_CONFIGS /* the list is in core_objects.h */
#define SBM__MERGE_DEFAULT SBM__CSR_MERGE_DEFAULT
#define SBM__COO_NT 128
#define SBM__COO_IPT 7

typedef struct sbm__csr_kernel {
    int kind;  /* SBM__CSR_* */
    int w, r;  /* vector: lanes per row, rows per lane group */
    int cfg;   /* merge: index into SBM__MERGE_CONFIGS */
} sbm__csr_kernel;

/* ---------------------------------------------------------------------------------------- */
/* Plans                                                                                    */
/* ---------------------------------------------------------------------------------------- */

typedef struct sbm__cuda_spmv_plan {
    sbm__spmv_plan_base b;   /* front-end header and format */
    sbm_allocator al;        /* made the device arrays below */
    sbm__csr_kernel k;       /* CSR formats: the kernel and its configuration */
    /* CSR (scalar, vector, merge): a copy of A, and the merge-path split */
    int64_t *rowptr;
    int32_t *colind;
    double *values;
    int64_t *tiles;
    int64_t ntiles;
    /* COO, and the remainder of HYB (rows sorted) */
    int32_t *coo_row;
    int32_t *coo_col;
    double *coo_val;
    int64_t coo_nnz;
    /* ELL, and the first part of HYB: K slots per row, column-major, leading dimension ld */
    int32_t *ell_col;
    double *ell_val;
    int64_t ell_k;
    int64_t ell_ld;
    /* DIA: offsets (increasing) and column-major diagonals, leading dimension ld */
    int64_t *dia_off;
    double *dia_val;
    int64_t ndiag;
    int64_t dia_ld;
} sbm__cuda_spmv_plan;

/* ---- cuda_csr_spmv.cu: configurations and choice ---- */

/* Merge items (rows + entries) per tile of configuration cfg. */
int sbm__csr_merge_items(int cfg);
/* Rows per lane group, lanes per row of the vector kernel (from the mean row length). */
int sbm__csr_vector_rows(int w);
int sbm__csr_vector_width(int64_t m, int64_t nnz);
/* The CSR kernel from the row statistics e. */
sbm__csr_kernel sbm__choose_csr(sbm_ctx *ctx, const sbm__cuda_scache *e);
/* The kernel the context's tuning forces, into *k. @return 1 if one is forced. */
int sbm__csr_forced(const sbm_ctx *ctx, int64_t m, int64_t nnz, sbm__csr_kernel *k);
/* The row statistics cache entry of A's pattern (computed on a miss). */
sbm_status sbm__csr_stats(sbm_ctx *ctx, const sbm_csr *A, sbm__cuda_scache **out);
/* The format SBM_SPMV_AUTO stands for. */
sbm_status sbm__csr_choose_format(sbm_ctx *ctx, const sbm_csr *A, const sbm__cuda_scache *e,
                                  sbm_spmv_format *f);

/* ---- cuda_csr_spmv_kernels.cu: launches ---- */

/* Merge-path tile coordinates of A's pattern for tiles of tile_items, allocated with the
 * context's allocator. */
sbm_status sbm__csr_merge_split(sbm_ctx *ctx, int64_t m, int64_t nnz, const int64_t *rowptr,
                                int tile_items, int64_t **coord, int64_t *ntiles);
/* y = alpha*A*x + beta*y with CSR kernel k (tiles: the merge split of a merge kernel). */
sbm_status sbm__csr_launch(sbm_ctx *ctx, sbm__csr_kernel k, int64_t m, const int64_t *rowptr,
                           const int32_t *colind, const double *values, const int64_t *tiles,
                           int64_t ntiles, double alpha, const double *x, double beta, double *y);
/* y += alpha * (COO entries), y already scaled. */
sbm_status sbm__csr_launch_coo_add(sbm_ctx *ctx, int64_t m, int64_t nnz, const int32_t *row,
                                   const int32_t *col, const double *val, double alpha,
                                   const double *x, double *y);
/* y = alpha*0 + beta*y. */
sbm_status sbm__csr_launch_scale_y(sbm_ctx *ctx, int64_t m, double alpha, double beta, double *y);
/* y = alpha*A*x + beta*y from P's padded arrays: DIA's diagonals, else the ELL slots (HYB:
 * its ELL part). */
sbm_status sbm__csr_launch_padded(sbm_ctx *ctx, const sbm__cuda_spmv_plan *P, double alpha,
                                  const double *x, double beta, double *y);

/* ---- cuda_csr_spmv_plan_formats.cu: statistics and conversions ---- */

/* Longest row and warp slots of a pattern. */
sbm_status sbm__csr_row_stats_pass(sbm_ctx *ctx, int64_t m, const int64_t *rowptr,
                                   int64_t *max_row, int64_t *warp_slots);
/* Occupied diagonals of A and the scan of their flags (pool slot OP_A). */
sbm_status sbm__csr_dia_scan(sbm_ctx *ctx, const sbm_csr *A, int64_t *ndiag, int64_t **idx_out);
/* P's arrays for its format from A (P->k set for the CSR formats). */
sbm_status sbm__csr_plan_build(sbm_ctx *ctx, sbm__cuda_spmv_plan *P, const sbm_csr *A,
                               const sbm__cuda_scache *e);
/* P's values from A, which has P's pattern. */
sbm_status sbm__csr_plan_refill(sbm_ctx *ctx, sbm__cuda_spmv_plan *P, const sbm_csr *A);

#endif /* SBM_CUDA_CSR_SPMV_CUH */
