/* SPDX-License-Identifier: BSD-3-Clause */
/* Block SpMV on the GPU: y = alpha*op(A)*x + beta*y for CBC A. Deterministic: every y entry is
 * owned by one thread that sums in a fixed order (no floating-point atomics). The summation
 * order and the treatment of alpha and beta are the CPU backend's (kernels/cpu/spmv/cpu_spmv.c).
 *
 *   op N  one thread per scalar row of y, over the row's blocks in column order. A is stored by
 *         columns, so the row view (block-row pointers, the blocks' columns, the permutation to
 *         stored blocks) is built once per pattern and cached in the context.
 *   op T  one thread per scalar entry of y = one column of a stored block column, reading the
 *         CSC storage directly.
 *
 * Versions of each, compiled for the shapes of SBM_BLOCK_SHAPES: v1 walks the blocks one after
 * the other, each a chain of dependent loads (index -> block values and x); v2 and v3 load the
 * indices of a batch of U blocks first, then all their values and x entries, then sum them in
 * the same order, so a thread has U blocks' loads in flight instead of one (same results
 * bitwise); v2 with larger batches than v3, which leaves room for more resident threads. Which
 * one runs is decided per shape and op in sbm__spmv_version from H100 measurements. Shapes
 * outside the list use the runtime-size v1. */
#include "cuda_spmv_kernels.cuh"
#include "sbm_blocks.h"

#include <stdlib.h>
#include <string.h>


/* Kernel version for this shape and op: 1 (one block after the other), 2 (batched, large batches)
 * or 3 (batched, small batches), the fastest measured on an H100
 * (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). Batching pays from 5x5 (its
 * larger register footprint costs resident threads, which the small blocks need more); shapes not
 * measured keep v1. The tuning's spmv (ONE_BY_ONE, BATCHED, BATCHED_SMALL) overrides. */
static int sbm__spmv_version(const sbm_ctx *ctx, int r, int c, sbm_op op)
{
    switch (ctx->tuning.spmv) {
    case SBM_TUNE_SPMV_ONE_BY_ONE: return 1;
    case SBM_TUNE_SPMV_BATCHED: return 2;
    case SBM_TUNE_SPMV_BATCHED_SMALL: return 3;
    default: break;
    }
    if (r == c && r >= 5 && r <= 8) return op == SBM_OP_N ? 3 : 2;
    return 1;
}

sbm_status sbm__cuda_cbc_spmv(sbm_ctx *ctx, sbm_op op, double alpha, const sbm_cbc *A,
                              const double *x, double beta, double *y)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    const int64_t *rowptr = NULL, *perm = NULL;
    const int32_t *colind = NULL;
    const int64_t m = op == SBM_OP_N ? A->nbr * A->r : A->nbc * A->c;
    const unsigned g = sbm__grid(m, 256);
    const int ver = sbm__spmv_version(ctx, A->r, A->c, op);
    SBM__CK(sbm__cuda_enter(ctx));
    if (m == 0) goto done;
    if (op == SBM_OP_N) {
        SBM__CK(sbm__cuda_cbc_rows(ctx, A, &rowptr, &colind, &perm));
        /* x read 16 bytes at a time where every block's slice of it is 16-byte aligned */
        const int vx = A->c % 2 == 0 && ((uintptr_t)x & 15) == 0;
        sbm_blk_select_shape(A->r, A->c, [&](auto shape) {
            constexpr int R = decltype(shape)::r, C = decltype(shape)::c;
            if constexpr (R > 0) {
                if (ver > 1) {
                    if (vx && ver == 2)
                        sbm__k_spmv_n2<R, C, 2, 1><<<g, 256, 0, s>>>(A->nbr, alpha, rowptr, colind,
                                                                     perm, A->values, x, beta, y);
                    else if (ver == 2)
                        sbm__k_spmv_n2<R, C, 1, 1><<<g, 256, 0, s>>>(A->nbr, alpha, rowptr, colind,
                                                                     perm, A->values, x, beta, y);
                    else if (vx)
                        sbm__k_spmv_n2<R, C, 2, 0><<<g, 256, 0, s>>>(A->nbr, alpha, rowptr, colind,
                                                                     perm, A->values, x, beta, y);
                    else
                        sbm__k_spmv_n2<R, C, 1, 0><<<g, 256, 0, s>>>(A->nbr, alpha, rowptr, colind,
                                                                     perm, A->values, x, beta, y);
                    return;
                }
            }
            sbm__k_spmv_n<R, C><<<g, 256, 0, s>>>(A->nbr, A->r, A->c, alpha, rowptr, colind, perm,
                                                  A->values, x, beta, y);
        });
        SBM__LAUNCHED(ctx, "block SpMV");
    } else {
        /* block columns and x slices 16-byte aligned when r is even and the arrays are */
        const int v = A->r % 2 == 0 && ((uintptr_t)x & 15) == 0 && ((uintptr_t)A->values & 15) == 0;
        sbm_blk_select_shape(A->r, A->c, [&](auto shape) {
            constexpr int R = decltype(shape)::r, C = decltype(shape)::c;
            if constexpr (R > 0) {
                if (ver > 1) {
                    if (v && ver == 2)
                        sbm__k_spmv_t2<R, C, 2, 1><<<g, 256, 0, s>>>(A->nbc, alpha, A->colptr,
                                                                     A->rowind, A->values, x, beta, y);
                    else if (ver == 2)
                        sbm__k_spmv_t2<R, C, 1, 1><<<g, 256, 0, s>>>(A->nbc, alpha, A->colptr,
                                                                     A->rowind, A->values, x, beta, y);
                    else if (v)
                        sbm__k_spmv_t2<R, C, 2, 0><<<g, 256, 0, s>>>(A->nbc, alpha, A->colptr,
                                                                     A->rowind, A->values, x, beta, y);
                    else
                        sbm__k_spmv_t2<R, C, 1, 0><<<g, 256, 0, s>>>(A->nbc, alpha, A->colptr,
                                                                     A->rowind, A->values, x, beta, y);
                    return;
                }
            }
            sbm__k_spmv_t<R, C><<<g, 256, 0, s>>>(A->nbc, A->r, A->c, alpha, A->colptr, A->rowind,
                                                  A->values, x, beta, y);
        });
        SBM__LAUNCHED(ctx, "block SpMV (transposed)");
    }
done:
    return st;
}
