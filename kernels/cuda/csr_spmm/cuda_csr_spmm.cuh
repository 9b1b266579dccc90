/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared declarations of the scalar CSR SpMM (cuda_csr_spmm.cu describes the kernels and the
 * choice): tuning constants, the launch shape and arguments, and the launches --
 *   cuda_csr_spmm.cu              the choice and sbm__cuda_csr_spmm (shape, workspace, order)
 *   cuda_csr_spmm_kernels.cuh     kernel templates and their device helpers (definitions)
 *   cuda_csr_spmm_kernels.cu      their instantiations (every shape) and launches */
#ifndef SBM_CUDA_CSR_SPMM_CUH
#define SBM_CUDA_CSR_SPMM_CUH

#include "cuda_internal.cuh"

constexpr int SPMM_THREADS = 256;      /* threads per CTA, every kernel */
/* merge: items (rows + nonzeros) per CTA tile
 * (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). Smaller tiles balance better, but
 * split R-MAT's long rows into more carry-outs, whose sums FixCarryout now fetches 8 at a time. */
constexpr int SPMM_MERGE_TILE = 2048;
constexpr int SPMM_COLMAJOR_STRIP = 8; /* column-major: columns per thread */
constexpr double SPMM_MERGE_FILL = 2.0;     /* warp fill above which rows count as irregular */
constexpr int64_t SPMM_MERGE_ROW = 16384;   /* a row longer than this: merge */
/* irregular rows none longer than this, in a matrix of fewer than one merge tile per SM: row-split
 * (see docs/DESIGN-NOTES.md, "Measurements behind code choices") */
constexpr int64_t SPMM_MERGE_SHORT = 64;

enum sbm__spmm_kernel { SBM__SPMM_ROWSPLIT, SBM__SPMM_MERGE };

/* Lanes per group G, doubles per load VEC and column slots per lane CPT for ncols columns: the
 * smallest group whose lanes cover the columns once, up to a warp; wider B takes two slots per
 * lane and column tiles of W = 32*VEC*2. */
struct sbm__spmm_shape {
    int G, VEC, CPT;
};

/* The operands of one launch (the merge fields: its tiles and carry-out workspace). */
struct sbm__spmm_args {
    int64_t m, nnz, ncols, ntiles_c;
    const int64_t *rowptr;
    const int32_t *colind;
    const double *av;
    double alpha, beta;
    const double *B;
    int64_t ldb;
    double *C;
    int64_t ldc;
    /* merge only */
    int items;
    int64_t ntiles;
    const int64_t *tile_row;
    int64_t *carry_row;
    double *carry;
};

/* ---- cuda_csr_spmm_kernels.cu: launches, each on the context's stream and checked ---- */

/* Column-major B and C: one thread per row and strip of SPMM_COLMAJOR_STRIP columns. */
sbm_status sbm__csr_spmm_launch_colmajor(sbm_ctx *ctx, const sbm_csr *A, int64_t ncols, double alpha,
                                         const double *B, int64_t ldb, double beta, double *C,
                                         int64_t ldc);
/* Merge: the row where each tile of tile_items starts, into a.tile_row[0..a.ntiles]. */
sbm_status sbm__csr_spmm_launch_partition(sbm_ctx *ctx, const sbm__spmm_args &a, int64_t tile_items);
/* Row-major B and C: the row-split or merge kernel of shape sh. */
sbm_status sbm__csr_spmm_launch(sbm_ctx *ctx, const sbm__spmm_args &a, sbm__spmm_kernel kind,
                                sbm__spmm_shape sh);
/* Merge: the carry-outs of a's nunits units added to C. */
sbm_status sbm__csr_spmm_launch_fixup(sbm_ctx *ctx, const sbm__spmm_args &a, int64_t nunits);

#endif /* SBM_CUDA_CSR_SPMM_CUH */
