/* SPDX-License-Identifier: BSD-3-Clause */
/* Scalar CSR SpGEMM on the GPU: C = A*B with a reusable plan.
 *
 * Row-wise ESC with the per-row analysis of Dalton, Olson, Bell, "Optimizing Sparse Matrix-Matrix
 * Multiplication for the GPU" and the binning and on-chip sorts of Liu, He, Liu, Tan,
 * "Register-Aware Optimizations for Parallel Sparse Matrix-Matrix Multiplication".
 *
 * plan (symbolic; integer work only, so the plan is deterministic)
 *   setup       Dalton et al. section Setup (Algorithm 2): the exact int64 number of products of
 *               every row of C, sum of nnz(B_k*) over the row's entries of A, and each row's
 *               offset in the plan's expansion (exclusive scan, row order); rows are binned by
 *               that count (Liu et al. section Implementation Details: power-of-two bins) with a
 *               stable radix sort of (bin, row), so each bin is a list of increasing rows.
 *   short rows  bins of at most 16, 32, ..., 512 products: a group of 4-32 threads per row
 *               (Dalton et al. section Sorting: thread/warp groups scaled with the row) enumerates
 *               the row's products from batches of A's entries (one entry per lane, scanned in
 *               registers; section Expansion). Pass 1 counts the row's columns with a
 *               shared-memory hash table (integer atomicCAS: the set does not depend on timing).
 *               Pass 2, once C is allocated, sorts (column, expansion index) keys with a bitonic
 *               network in shared memory; the run heads are C's columns, and the products'
 *               (A entry, B entry) pairs in sorted order and each entry's first pair go to the
 *               plan.
 *   long rows   the global ESC path (Dalton et al. sections Expansion and Sorting, the rows that
 *               "violate the space constraint"): one CTA per row expands (column, pair) in
 *               expansion order, a stable CUB segmented sort (short segments) or a stable radix
 *               sort on packed (row, column) keys (long ones) orders them, the run heads give
 *               the row's columns and the sorted pairs are placed at the row's offset. Rows are
 *               cut into slices whose sort workspace fits the memory budget; a row whose own
 *               workspace does not fit is SBM_ERR_OUT_OF_MEMORY.
 *   the tuning's csr_gemm = SBM_TUNE_CSR_GEMM_GLOBAL sends every nonempty row through the global
 *   path (tests, measurements); AUTO bins by product count.
 * one-shot (sbm_csr_gemm)
 *   Where every row is short, the second pass of the row kernels writes C's values beside its
 *   columns (each run head's lane adds the run in sorted order) and no plan is stored, which leaves
 *   out the pairs and runs and their traffic
 *   (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). With long rows: plan, execute,
 *   destroy.
 * execute (numeric only; no allocation, no synchronisation)
 *   The plan holds, for every entry of C, its run of (A entry, B entry) pairs sorted by column,
 *   ties in expansion order (A's entries of the row in order, then B's): operand pointers, not
 *   values, as in the block SpGEMM (cuda_gemm.cu); 8 bytes per product and per entry of C. One
 *   thread per entry of C adds its products one at a time in that order (Dalton et al. Algorithm 5,
 *   sequential per entry): the CPU backend's order, no floating-point atomics, and bitwise the same
 *   result from both paths, with or without slicing. __dmul_rn/__dadd_rn keep FMA contraction out
 *   of the rounding. A first version accumulated short rows in shared memory at execute time
 *   (binary search of each product's slot, __match_any_sync to order equal slots) and kept no
 *   pairs; it stayed well behind cuSPARSE's reuse compute, latency-bound on the per-step searches
 *   and warp synchronisation, which moved into the plan here
 *   (see docs/DESIGN-NOTES.md, "Measurements behind code choices").
 */
#include "cuda_csr_gemm.cuh"

#include <inttypes.h>
#include <stdlib.h>

/* ---------------------------------------------------------------------------------------- */
/* Execute                                                                                  */
/* ---------------------------------------------------------------------------------------- */


/* One thread per entry of C sums its run of products in order; loads four pairs and their
 * operands ahead of the additions, which stay in order. */
__global__ void sbm__k_cg_numeric(int64_t nnz, const int64_t *__restrict__ seg,
                                  const uint64_t *__restrict__ pairs,
                                  const double *__restrict__ Ax, const double *__restrict__ Bx,
                                  double *__restrict__ Cx)
{
    SBM__GRID_STRIDE(c, nnz)
    {
        int64_t e = seg[c];
        const int64_t e1 = seg[c + 1];
        double acc = 0.0;
        for (; e + 4 <= e1; e += 4) {
            const uint64_t p0 = pairs[e], p1 = pairs[e + 1], p2 = pairs[e + 2], p3 = pairs[e + 3];
            const double v0 = __dmul_rn(Ax[p0 >> 32], Bx[(uint32_t)p0]);
            const double v1 = __dmul_rn(Ax[p1 >> 32], Bx[(uint32_t)p1]);
            const double v2 = __dmul_rn(Ax[p2 >> 32], Bx[(uint32_t)p2]);
            const double v3 = __dmul_rn(Ax[p3 >> 32], Bx[(uint32_t)p3]);
            acc = __dadd_rn(__dadd_rn(__dadd_rn(__dadd_rn(acc, v0), v1), v2), v3);
        }
        for (; e < e1; e++) {
            const uint64_t pr = pairs[e];
            acc = __dadd_rn(acc, __dmul_rn(Ax[pr >> 32], Bx[(uint32_t)pr]));
        }
        Cx[c] = acc;
    }
}

sbm_status sbm__cuda_csr_gemm_execute(sbm_ctx *ctx, const sbm_csr_plan *plan, const sbm_csr *A,
                                      const sbm_csr *B, sbm_csr *C)
{
    const sbm__csr_gpu_plan *P = (const sbm__csr_gpu_plan *)plan;
    sbm_status st = SBM_SUCCESS;
    SBM__CK(sbm__cuda_enter(ctx));
    if (C->nnz != P->nnz_c || C->m != P->m) {
        st = sbm__error(ctx, SBM_ERR_PLAN_MISMATCH, "argument C holds %" PRId64 "x%" PRId64
                        " with %" PRId64 " entries, the plan made %" PRId64 " rows with %" PRId64,
                        C->m, C->n, C->nnz, P->m, P->nnz_c);
        goto done;
    }
    if (P->nnz_c > 0) {
        sbm__k_cg_numeric<<<sbm__grid(P->nnz_c, 256), 256, 0, sbm__cuda_stream(ctx)>>>(
            P->nnz_c, P->seg, P->pairs, A->values, B->values, C->values);
        SBM__LAUNCHED(ctx, "CSR SpGEMM values");
    }
done:
    return st;
}

/* sbm_csr_gemm: where every row of C is short, the columns and values come from one pass of
 * the row kernels and no plan is stored (no pairs or runs allocated, written or read back);
 * otherwise plan, execute and destroy. Bitwise the same C either way. */
sbm_status sbm__cuda_csr_gemm(sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B, sbm_csr **C)
{
    sbm_csr_plan *plan = NULL;
    sbm_csr *c = NULL;
    *C = NULL;
    sbm_status st = sbm__cg_plan(ctx, A, B, 1, &plan, &c);
    if (st == SBM_SUCCESS && plan) st = sbm__cuda_csr_gemm_execute(ctx, plan, A, B, c);
    sbm__cuda_csr_gemm_plan_destroy(plan);
    if (st != SBM_SUCCESS) {
        sbm_csr_destroy(c);
        return st;
    }
    *C = c;
    return SBM_SUCCESS;
}
