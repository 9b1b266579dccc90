/* SPDX-License-Identifier: BSD-3-Clause */
/* Scalar CSR SpMM on the GPU: C = alpha*A*B + beta*C with dense B (n x ncols) and C (m x ncols).
 *
 * The two kernels of Yang, Buluc & Owens, "Design Principles for Sparse Matrix Multiplication on
 * the GPU", for row-major B and C:
 *
 *   row-split (section 4.1, "Algorithm I: Row-splitting SpMM")  one group of G lanes per row of
 *       A. The group loads the row's entries cooperatively (one or more per lane, coalesced) and
 *       broadcasts each column index and value with a shuffle ("3. Shared memory"); every lane
 *       then reads VEC consecutive doubles of that row of B, so the group reads whole rows of B
 *       coalesced ("2. Memory access pattern"). The paper uses a warp per row and 32 columns; G
 *       is chosen from ncols instead (the smallest power of two whose lanes cover the columns,
 *       so narrow B keeps all lanes busy: one lane for 1 column, a warp for 33..64 with 16-byte
 *       loads), and two column slots per lane cover wider B in one pass (more columns run as
 *       tiles in grid.y). The B loads of U entries are issued before their products are summed,
 *       the instruction-level parallelism of section 3.1.
 *   merge (section 4.2, "Algorithm II: Merge-based SpMM")  equal work per group regardless of
 *       row lengths. Work items are the rows and the nonzeros of A (the merge-path split of
 *       Merrill & Garland, which the paper names as the variant that also balances empty rows);
 *       a CTA takes a tile of TILE items, found by a binary search per tile boundary in a first
 *       kernel (PartitionSpmm), stages the row ends of its tile in shared memory
 *       (GlobalToShared), and each group searches its share of the tile there and walks it. A
 *       row that ends inside a group's range is written by that group; the partial sum of the
 *       row in progress where the range ends is written as a carry-out, and a second kernel
 *       (FixCarryout) adds the carry-outs of each row to C in unit order. There are no
 *       floating-point atomics, so results are deterministic.
 *
 * Choice. The paper (section 5.4, "Heuristic") picks merge when the mean row length nnz/m is below
 * 9.35 and row-split otherwise. On the H100 that rule chose wrong both ways: row-split is faster on
 * the short regular rows of 2D/3D Poisson (mean 5-7), and merge is needed on power-law rows
 * whatever their mean (R-MAT, mean 15)
 * (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). What hurts row-split is
 * irregularity, not the mean, so the choice uses the row statistics the SpMV path caches per
 * pattern: merge when the rows of a warp-sized group differ so much that padding each to the
 * group's longest would more than double the work (warp fill > 2, the SpMV kernel's rule) and
 * either a row is longer than 64 entries or the matrix has at least one merge tile per SM, or when
 * one row is longer than 16384 entries; row-split otherwise (a small matrix of short rows, however
 * irregular, is a few CTAs of row-split, while merge adds a second kernel and the carry-outs). The
 * tuning's csr_spmm forces one.
 *
 * Column-major B and C (accepted by the API, not the fast path): a dedicated kernel rather than
 * transposes through workspace, so that no temporary of the size of B or C is needed. One thread
 * per row of C and a strip of 8 columns: consecutive threads write consecutive entries of a
 * column of C (coalesced), and A is read once per strip.
 *
 * Every element of C is summed in the row's stored order (row-split, column-major) or as
 * fixed partial sums added in a fixed order (merge); beta == 0 never reads C.
 *
 * This file: the choice of kernel and shape, the merge workspace and the order of the launches;
 * the kernels are in cuda_csr_spmm_kernels.cuh, their launches in cuda_csr_spmm_kernels.cu. */
#include "cuda_csr_spmm.cuh"

#include <stdlib.h>
#include <string.h>

namespace {

/* The shape for ncols columns and loads of vec doubles (see sbm__spmm_shape). */
sbm__spmm_shape spmm_pick_shape(int64_t ncols, int vec)
{
    sbm__spmm_shape s = {32, vec, 2};
    const int64_t slots = (ncols + vec - 1) / vec;
    if (slots <= 32) {
        s.CPT = 1;
        s.G = 1;
        while (s.G < slots) s.G *= 2;
    }
    return s;
}

/* The tuning's csr_spmm (ROWSPLIT or MERGE) forces a kernel; otherwise the row statistics decide
 * (see the file comment). */
sbm_status spmm_choose(sbm_ctx *ctx, const sbm_csr *A, sbm__spmm_kernel *kind)
{
    if (ctx->tuning.csr_spmm == SBM_TUNE_CSR_SPMM_ROWSPLIT) {
        *kind = SBM__SPMM_ROWSPLIT;
        return SBM_SUCCESS;
    }
    if (ctx->tuning.csr_spmm == SBM_TUNE_CSR_SPMM_MERGE) {
        *kind = SBM__SPMM_MERGE;
        return SBM_SUCCESS;
    }
    int64_t max_row = 0, warp_slots = 0;
    SBM__TRY(sbm__cuda_csr_row_stats(ctx, A, &max_row, &warp_slots));
    const double fill = A->nnz > 0 ? (double)warp_slots / (double)A->nnz : 1.0;
    const int sms = sbm__cuda_st(ctx)->prop.multiProcessorCount;
    /* irregular rows matter when one of them is long, or when there are tiles enough for
     * every SM; below both, merge's second kernel and carry-outs cost more than they balance */
    const int sizable = max_row > SPMM_MERGE_SHORT || A->m + A->nnz >= (int64_t)SPMM_MERGE_TILE * sms;
    *kind = (fill > SPMM_MERGE_FILL && sizable) || max_row > SPMM_MERGE_ROW ? SBM__SPMM_MERGE
                                                                              : SBM__SPMM_ROWSPLIT;
    return SBM_SUCCESS;
}

} // namespace

sbm_status sbm__cuda_csr_spmm(sbm_ctx *ctx, double alpha, const sbm_csr *A, int64_t ncols,
                              sbm_layout layout, const double *B, int64_t ldb, double beta,
                              double *C, int64_t ldc)
{
    sbm_status st = SBM_SUCCESS;
    SBM__CK(sbm__cuda_enter(ctx));
    if (A->m == 0 || ncols == 0) goto done;

    if (layout == SBM_LAYOUT_COL_MAJOR) {
        SBM__CK(sbm__csr_spmm_launch_colmajor(ctx, A, ncols, alpha, B, ldb, beta, C, ldc));
        goto done;
    }

    {
        /* 16-byte loads and stores where every row of B and C starts 16-byte aligned */
        const int vec = ncols >= 2 && ((uintptr_t)B % 16) == 0 && ((uintptr_t)C % 16) == 0 &&
                                ldb % 2 == 0 && ldc % 2 == 0
                            ? 2
                            : 1;
        const sbm__spmm_shape sh = spmm_pick_shape(ncols, vec);
        const int64_t width = (int64_t)sh.G * sh.VEC * sh.CPT;
        sbm__spmm_args a;
        memset(&a, 0, sizeof a);
        a.m = A->m;
        a.nnz = A->nnz;
        a.ncols = ncols;
        a.ntiles_c = (ncols + width - 1) / width;
        a.rowptr = A->rowptr;
        a.colind = A->colind;
        a.av = A->values;
        a.alpha = alpha;
        a.beta = beta;
        a.B = B;
        a.ldb = ldb;
        a.C = C;
        a.ldc = ldc;
        sbm__spmm_kernel kind = SBM__SPMM_ROWSPLIT;
        SBM__CK(spmm_choose(ctx, A, &kind));

        if (kind == SBM__SPMM_MERGE) {
            const int groups = SPMM_THREADS / sh.G;
            a.items = SPMM_MERGE_TILE / groups;
            const int64_t tile_items = (int64_t)groups * a.items;
            a.ntiles = (A->m + A->nnz + tile_items - 1) / tile_items;
            const int64_t nunits = a.ntiles * groups;
            /* carry-outs need nunits*ncols doubles: where that exceeds the context's memory
             * budget (or size_t), row-split, which needs no workspace, runs instead */
            const double need = (double)nunits * ((double)ncols + 1) * 8.0 +
                                (double)(a.ntiles + 1) * 8.0 + 1024.0;
            if (need > (double)SIZE_MAX / 2 ||
                (ctx->memory_budget > 0 && need > (double)ctx->memory_budget)) {
                kind = SBM__SPMM_ROWSPLIT;
            } else {
                sbm__carve cv = {0};
                const size_t o_tile = sbm__carve_add(&cv, (size_t)(a.ntiles + 1) * sizeof(int64_t));
                const size_t o_row = sbm__carve_add(&cv, (size_t)nunits * sizeof(int64_t));
                const size_t o_carry =
                    sbm__carve_add(&cv, (size_t)nunits * (size_t)ncols * sizeof(double));
                void *ws = NULL;
                SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, cv.total, &ws));
                a.tile_row = (int64_t *)((char *)ws + o_tile);
                a.carry_row = (int64_t *)((char *)ws + o_row);
                a.carry = (double *)((char *)ws + o_carry);
                SBM__CK(sbm__csr_spmm_launch_partition(ctx, a, tile_items));
            }
        }
        SBM__CK(sbm__csr_spmm_launch(ctx, a, kind, sh));
        if (kind == SBM__SPMM_MERGE)
            SBM__CK(sbm__csr_spmm_launch_fixup(ctx, a, a.ntiles * (SPMM_THREADS / sh.G)));
    }
done:
    return st;
}
