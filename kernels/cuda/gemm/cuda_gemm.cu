/* SPDX-License-Identifier: BSD-3-Clause */
/* Block SpGEMM on the GPU: C = U + alpha*op(A)*op(B) for CBC matrices by expand-sort-compress
 * with operand pointers (Polok, Ila, Smrz, "Fast Sparse Matrix Multiplication on GPU").
 *
 * plan (symbolic; all integer work, deterministic)
 *   setup       Algorithm 1: per op(B) block (k, j) the number of products op(A)_ik*op(B)_kj
 *               (with SBM_GEMM_UPPER only the rows i <= j, a prefix of the sorted column k);
 *               CUB exclusive scan -> product offsets and the exact int64 expansion size.
 *               U's blocks join the expansion as entries of their own (they take part in the
 *               pattern of C but carry no product), placed first in their column.
 *   expansion   Algorithm 2 lines 19-38: every thread expands the same number of products,
 *               locating its first op(B) block by binary search (UPPER_BOUND) in the offsets.
 *               Each entry holds (A-block index, B-block index) packed in 64 bits with the
 *               output row as sort key; the output column is implied by the position. Never
 *               values ("store only the pointers to the operands", section Compression Stage).
 *   sort        Algorithm 2 line 39, segmented by output column (section Sorting Stage). Two
 *               variants are implemented: CUB's stable segmented sort on the row key, and a
 *               stable LSD radix sort on a packed key (column in slice << row bits | row) with
 *               only as many bits as the slice needs. The segmented sort wins on
 *               short output columns (2D/3D Poisson), the radix sort on long ones (BA); the
 *               plan picks by the mean column length of the expansion (sbm__gemm_use_radix).
 *   compress    Algorithm 3: tails (row changes within a column) -> scan -> C.colptr, C.rowind,
 *               and the start of every output block's run of entries.
 *   slicing     when the sort's workspace for the whole expansion exceeds the memory budget, B's
 *               columns are cut into slices, each expanded and sorted on its own into its range
 *               of the plan's entry array (section Expansion Stage, last paragraph); the
 *               compression then runs once over the concatenated result.
 * execute (numeric only; no allocation)
 *   every output block sums the dense block products of its run of entries in sorted order
 *   (op(B) block, then op(A) block: the CPU backend's order), so the result is deterministic
 *   and no floating-point atomics are used. Kernels compiled for every triple of
 *   SBM_GEMM_TRIPLES: tiles of output blocks staged through shared memory by persistent,
 *   software-pipelined CTAs (cp.async), computed either one thread per output element or one
 *   warp per output block on the FP64 tensor cores (mma.sync m8n8k4); and, unstaged, the same
 *   two ways from global memory. The one-team-of-r*c-threads kernel is also the generic
 *   runtime-size path for any other shape up to SBM_MAX_BLOCK_DIM. The default per triple is
 *   in sbm__gemm_numeric_kind. op T is handled by indexing the stored block transposed.
 *
 * Files (declarations shared in cuda_gemm.cuh): cuda_gemm_plan.cu the plan (symbolic phase),
 * cuda_gemm_kernels.cuh the numeric kernel templates, cuda_gemm_kernels.cu their instantiations
 * and launches, this file the dispatch: numeric kernel choice, tile geometry, execute. */
#include "cuda_internal.cuh"
#include "cuda_gemm.cuh"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

/* Most entries of one output block (max of seg[q+1] - seg[q]) into *out (zeroed before). */
__global__ void sbm__k_gemm_max_run(int64_t nnzb_c, const int64_t *seg, unsigned long long *out)
{
    unsigned long long m = 0;
    SBM__GRID_STRIDE(q, nnzb_c)
    {
        const unsigned long long n = (unsigned long long)(seg[q + 1] - seg[q]);
        if (n > m) m = n;
    }
    for (int o = 16; o > 0; o >>= 1) {
        const unsigned long long v = __shfl_down_sync(0xffffffffu, m, o);
        if (v > m) m = v;
    }
    if ((threadIdx.x & 31) == 0) atomicMax(out, m);
}

/* ---------------------------------------------------------------------------------------- */
/* Numeric kernel choice                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* Numeric kernel for a fast triple (the generic path is always SBM__NUM_TEAM), from H100
 * measurements (see docs/DESIGN-NOTES.md, "Measurements behind code choices"): staged tiles, one
 * thread per element up to 16 elements per block and the tensor cores above; 1x1x1 stays one thread
 * per element from global memory, and 7x7x7 on the unstaged tensor-core kernel (staged not faster).
 * Small products (fewer tiles than resident CTAs) keep the unstaged kernels too: see
 * sbm__stage_setup. The context's tuning (gemm_numeric) overrides, for measurements and tests:
 * team, dmma, stage, sdmma (persistent grid), stage and sdmma one tile per CTA. *persist: 1 or 0
 * when forced, else -1 (decided in sbm__stage_setup); *forced: the kernel was forced. */
static int sbm__gemm_numeric_kind(sbm_ctx *ctx, int r, int k, int c, int *persist, int *forced)
{
    *persist = -1;
    *forced = 1;
    if (!sbm_blk_is_fast_triple(r, k, c) || sbm__cuda_st(ctx)->prop.major < 8) return SBM__NUM_TEAM;
    switch (ctx->tuning.gemm_numeric) {
    case SBM_TUNE_GEMM_TEAM: return SBM__NUM_TEAM;
    case SBM_TUNE_GEMM_DMMA: return SBM__NUM_DMMA;
    case SBM_TUNE_GEMM_STAGE: *persist = 1; return SBM__NUM_STAGE;
    case SBM_TUNE_GEMM_SDMMA: *persist = 1; return SBM__NUM_SDMMA;
    case SBM_TUNE_GEMM_STAGE_ONE_TILE: *persist = 0; return SBM__NUM_STAGE;
    case SBM_TUNE_GEMM_SDMMA_ONE_TILE: *persist = 0; return SBM__NUM_SDMMA;
    default: break;
    }
    *forced = 0;
    if (r * k * c == 1) return SBM__NUM_TEAM;
    if (r == 7 && k == 7 && c == 7) return SBM__NUM_DMMA;
    return r * c > 16 ? SBM__NUM_SDMMA : SBM__NUM_STAGE;
}

/* The unstaged kernel for a fast triple (the rule before the staged kernels): the tensor cores
 * for output blocks of 25 elements and more, else one thread per element. */
static int sbm__gemm_unstaged_kind(int r, int c)
{
    return r * c >= 25 ? SBM__NUM_DMMA : SBM__NUM_TEAM;
}

/* Tile geometry of the staged kernels: as many output blocks per tile as the compute mode holds
 * (sbm__st_cfg::NBMAX), with room for 1.25 times their mean number of entries, unless the operand
 * blocks of that many entries exceed SBM__ST_VBYTES: then fewer blocks per tile. Tiles with more
 * entries are processed in chunks. Unless forced (tuning gemm_numeric), a product with fewer tiles
 * than CTAs resident at once goes back to the unstaged kernel: the staged ones need several tiles
 * per CTA to overlap their phases, and the g2o products (4-8 k blocks of C, 76-345 tiles) ran
 * faster unstaged (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). The grid:
 * persistent (as many CTAs as are resident at once, occupancy API), unless some output block has
 * more entries than a chunk, then one CTA per tile (see below). The tuning's gemm_tile_blocks,
 * _entries and _grid override the geometry (for tests: tiny tiles, chunks and grids reach every
 * path of the kernels). */
static sbm_status sbm__stage_setup(sbm_ctx *ctx, sbm__gpu_plan *P, int persist, int forced)
{
    sbm_status st = SBM_SUCCESS;
    unsigned long long *d_max = NULL, maxrun = 0;
    const int dm = P->numeric == SBM__NUM_SDMMA;
    const int nbmax = sbm__st_nbmax(P->r, P->k, P->c, dm);
    const int op_bytes = (P->r * P->k + P->k * P->c) * (int)sizeof(double);
    const double mean = (double)P->entries / (double)P->nnzb_c;
    const int sms = sbm__cuda_st(ctx)->prop.multiProcessorCount;
    const sbm_tuning *tune = &ctx->tuning;
    sbm__staged_kernel kern = sbm__gemm_select_staged(P->r, P->k, P->c, dm);
    int ecmax = SBM__ST_VBYTES / op_bytes, nb = nbmax, ec, nblk = 0;
    long long grid = 0;
    if (ecmax > 1024) ecmax = 1024; /* small blocks: bound the entry buffers too */
    if (ecmax < 2) ecmax = 2;
    if (nb * mean * 1.25 > ecmax) {
        nb = (int)(ecmax / (mean * 1.25));
        if (nb < 1) nb = 1;
        ec = ecmax;
    } else {
        ec = (int)ceil(nb * mean * 1.25);
        if (ec < 2) ec = 2;
    }
    if (tune->gemm_tile_blocks > 0) { /* with gemm_tile_entries, 1..4096 (sbm_ctx_set_tuning) */
        nb = tune->gemm_tile_blocks > nbmax ? nbmax : tune->gemm_tile_blocks;
        ec = tune->gemm_tile_entries;
    }
    grid = tune->gemm_tile_grid;
    P->st_nb = nb;
    P->st_ec = ec;
    P->st_tiles = (P->nnzb_c + nb - 1) / nb;
    P->st_smem = sbm__st_smem(P->r, P->k, P->c, ec, nbmax);
    if (P->st_smem > 48 * 1024)
        SBM__CU(ctx, cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)P->st_smem),
                "shared memory of the staged block products");
    SBM__CU(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nblk, kern, SBM__ST_THREADS,
                                                               P->st_smem),
            "occupancy of the staged block products");
    if (nblk < 1) nblk = 1;
    if (!forced && P->st_tiles < (int64_t)nblk * sms) {
        P->numeric = sbm__gemm_unstaged_kind(P->r, P->c);
        goto done;
    }
    if (persist < 0) {
        /* The persistent grid deals tiles round-robin, which assumes tiles of similar cost; an
         * output block with more entries than a chunk makes its tile several times slower (BA:
         * camera blocks of ~600 entries), and one tile per CTA lets the hardware balance
         * (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). */
        SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_PRIM, sizeof *d_max, (void **)&d_max));
        SBM__CK(sbm__cuda_zero(ctx, d_max, sizeof *d_max));
        sbm__k_gemm_max_run<<<sbm__grid(P->nnzb_c, 256), 256, 0, sbm__cuda_stream(ctx)>>>(
            P->nnzb_c, P->seg, d_max);
        SBM__LAUNCHED(ctx, "longest output block");
        SBM__CK(sbm__cuda_d2h(ctx, &maxrun, d_max, sizeof maxrun));
        persist = maxrun <= (unsigned long long)ec;
    }
    if (grid < 1) grid = persist ? (long long)nblk * sms : P->st_tiles;
    if (grid > P->st_tiles) grid = P->st_tiles;
    if (grid > 0x7fffffffLL) grid = 0x7fffffffLL; /* the persistent loop covers the rest */
    P->st_grid = (unsigned)grid;
done:
    return st;
}

sbm_status sbm__gemm_choose_numeric(sbm_ctx *ctx, sbm__gpu_plan *P)
{
    int persist = -1, forced = 0;
    P->numeric = sbm__gemm_numeric_kind(ctx, P->r, P->k, P->c, &persist, &forced);
    if (P->numeric >= SBM__NUM_STAGE && P->nnzb_c > 0) return sbm__stage_setup(ctx, P, persist, forced);
    return SBM_SUCCESS;
}

void sbm__cuda_gemm_plan_destroy(sbm_gemm_plan *plan)
{
    sbm__gpu_plan *P = (sbm__gpu_plan *)plan;
    if (!P) return;
    int cur = -1;
    if (cudaGetDevice(&cur) == cudaSuccess && cur != P->h.device) cudaSetDevice(P->h.device);
    if (P->pairs) P->al.free(P->al.user, P->pairs);
    if (P->seg) P->al.free(P->al.user, P->seg);
    (void)cudaGetLastError();
    free(P);
}

/* ---------------------------------------------------------------------------------------- */
/* Execute                                                                                  */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm__cuda_gemm_execute(sbm_ctx *ctx, const sbm_gemm_plan *plan, double alpha,
                                  const sbm_cbc *A, const sbm_cbc *B, const sbm_cbc *U, sbm_cbc *C)
{
    const sbm__gpu_plan *P = (const sbm__gpu_plan *)plan;
    sbm_status st = SBM_SUCCESS;
    SBM__CK(sbm__cuda_enter(ctx));
    if ((U != NULL) != (P->has_u != 0)) {
        st = sbm__error(ctx, SBM_ERR_PLAN_MISMATCH, "argument U is %s but the plan was made %s U",
                        U ? "given" : "NULL", P->has_u ? "with" : "without");
        goto done;
    }
    if (C->nnzb != P->nnzb_c) {
        st = sbm__error(ctx, SBM_ERR_PLAN_MISMATCH, "argument C holds %" PRId64 " blocks, the "
                        "plan made %" PRId64, C->nnzb, P->nnzb_c);
        goto done;
    }
    if (P->nnzb_c == 0) goto done;
    SBM__CK(sbm__gemm_launch(ctx, P, alpha, A, B, U, C));
done:
    return st;
}
