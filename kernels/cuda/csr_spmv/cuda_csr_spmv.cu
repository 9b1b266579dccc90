/* SPDX-License-Identifier: BSD-3-Clause */
/* Scalar CSR SpMV on the GPU, y = alpha*A*x + beta*y, after Bell & Garland, "Efficient Sparse
 * Matrix-Vector Multiplication on CUDA" (NVIDIA technical report, 2008), plus a
 * merge-path CSR kernel (Merrill & Garland, "Merge-based parallel sparse matrix-vector
 * multiplication", SC'16; the split CUB's DeviceSpmv uses).
 *
 * Kernels (section 4 of the paper):
 *   CSR scalar  one thread per row (4.3, Figure 20); the summation order is the CPU's.
 *   CSR vector  W lanes per row (4.3, Figure 22), W the power of two >= the mean row length,
 *               2..32 (the CUSP rule); each group of W lanes takes R consecutive rows and issues
 *               the first loads of all R before summing, so short rows keep more loads in flight.
 *   CSR merge   the merge path of the row ends and the entry indices is cut into equal tiles of
 *               rows + entries (one CTA each, NT threads x IPT items); a tile stages its entries'
 *               products and row ends in shared memory, each thread consumes IPT merge items, a
 *               block scan by row carries partial sums between threads, and the partial sum of
 *               the row a tile ends in (its carry-out) is added by a fix-up kernel that sums the
 *               carry-outs of one row in tile order. Rows of any length cost the same.
 *   COO         segmented reduction (4.4) over tiles of entries, with the same block scan and
 *               carry-out fix-up; y is scaled by beta first.
 *   ELL         one thread per row over the column-major padded arrays (4.2); padding has
 *               column -1 and is skipped, so the summation order is the CPU's.
 *   HYB         the ELL kernel over the first K entries of each row, then the COO kernel adding
 *               the rest (4.5); K is the paper's (3.5): the largest K such that at least a third
 *               of the rows have K or more entries.
 *   DIA         one thread per row over the occupied diagonals (4.1), column-major; slots that
 *               hold 0 (padding, or an explicit zero of A) are skipped.
 * Every y entry is written by one thread (plus one fix-up add for a row that crosses tiles), in
 * a fixed order: results are deterministic, no floating-point atomics. Integer atomics only count.
 *
 * Choice (sbm_csr_spmv uses the CSR kernels only; a plan with SBM_SPMV_AUTO may convert), from
 * row statistics computed once per pattern and cached in the context (sbm__cuda_scache): the
 * longest row and the "warp fill" (sum over groups of 32 rows of 32 x their longest row, over
 * nnz: how much a row-per-lane kernel pads). See sbm__choose_csr and sbm__csr_choose_format.
 * The context's tuning (sbm_tuning::csr_spmv) forces the kernel of sbm_csr_spmv; its vector and
 * merge fields also pick a compiled configuration, for sbm_csr_spmv and for plans of that CSR
 * format made while it is set (measurements). */
#include "cuda_csr_spmv.cuh"

#include <stdlib.h>
#include <string.h>

int sbm__csr_merge_items(int cfg)
{
#define SBM_X_(I, NT, IPT, CS, PF) if (cfg == (I)) return (NT) * (IPT);
    SBM__MERGE_CONFIGS(SBM_X_)
#undef SBM_X_
    return 0;
}

/* Rows per lane group for W lanes: with 2 or 4 lanes, four rows per group keep loads in flight;
 * from 8 lanes one row (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). */
int sbm__csr_vector_rows(int w) { return w <= 4 ? 4 : 1; }

/* Lanes per row from the mean row length (CUSP's csr_vector rule: the power of two >= mean). */
int sbm__csr_vector_width(int64_t m, int64_t nnz)
{
    const double mean = m > 0 ? (double)nnz / (double)m : 0.0;
    int w = 2;
    while (w < 32 && (double)w < mean) w *= 2;
    return w;
}

/* The CSR kernel from the statistics (warp fill = warp_slots / nnz: how much a row-per-lane kernel
 * pads the work). Merge where rows are irregular (fill > 2), a row is so long that one group of
 * lanes would dominate the run (> 16384 entries), or there are too few rows to fill the device
 * (fewer than 16 lane groups of 32 per SM) while there is work enough for it; with 34 warps per SM
 * vector still won. Scalar (thread per row) for short regular rows (fill <= 1.25, mean <= 16),
 * which it streams closest to copy bandwidth. Otherwise vector
 * (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). */
sbm__csr_kernel sbm__choose_csr(sbm_ctx *ctx, const sbm__cuda_scache *e)
{
    sbm__csr_kernel k = {SBM__CSR_VECTOR, 2, 4, SBM__MERGE_DEFAULT};
    const int sms = sbm__cuda_st(ctx)->prop.multiProcessorCount;
    k.w = sbm__csr_vector_width(e->m, e->nnz);
    k.r = sbm__csr_vector_rows(k.w);
    const double fill = e->nnz > 0 ? (double)e->warp_slots / (double)e->nnz : 1.0;
    const double mean = e->m > 0 ? (double)e->nnz / (double)e->m : 0.0;
    const int few_rows = (double)e->m * k.w < 512.0 * sms && e->nnz > 4096LL * sms;
    if (mean > 32.0 && mean <= 64.0) {
        /* rows of 33-64 entries: 16 lanes and two rows per group keep 4-8 loads in flight per lane
         * where 32 lanes had 1-2 (see docs/DESIGN-NOTES.md, "Measurements behind code choices") */
        k.w = 16;
        k.r = 2;
    }
    if (fill > 2.0 || e->max_row > 16384 || few_rows) k.kind = SBM__CSR_MERGE;
    else if (fill <= 1.25 && mean <= 16.0) k.kind = SBM__CSR_SCALAR;
    return k;
}

/* The kernel forced by the context's tuning (csr_spmv and its configuration fields, checked by
 * sbm_ctx_set_tuning): a forced vector kernel without a width takes the width from the mean row
 * length, a forced merge kernel without threads the default configuration.
 * @return 1 if a kernel is forced. */
int sbm__csr_forced(const sbm_ctx *ctx, int64_t m, int64_t nnz, sbm__csr_kernel *k)
{
    const sbm_tuning *t = &ctx->tuning;
    switch (t->csr_spmv) {
    case SBM_TUNE_CSR_SPMV_SCALAR:
        k->kind = SBM__CSR_SCALAR;
        return 1;
    case SBM_TUNE_CSR_SPMV_VECTOR:
        k->kind = SBM__CSR_VECTOR;
        k->w = t->csr_spmv_vector_width ? t->csr_spmv_vector_width : sbm__csr_vector_width(m, nnz);
        k->r = t->csr_spmv_vector_rows ? t->csr_spmv_vector_rows : sbm__csr_vector_rows(k->w);
        return 1;
    case SBM_TUNE_CSR_SPMV_MERGE:
        k->kind = SBM__CSR_MERGE;
        k->cfg = SBM__MERGE_DEFAULT;
#define SBM_X_(I, NT, IPT, CS, PF)                                                              \
    if (t->csr_spmv_merge_threads == (NT) && t->csr_spmv_merge_items == (IPT) &&                \
        t->csr_spmv_merge_streaming == (CS) && t->csr_spmv_merge_prefetch == (PF))              \
        k->cfg = (I);
        SBM__MERGE_CONFIGS(SBM_X_)
#undef SBM_X_
        return 1;
    default: return 0;
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Row statistics cache                                                                     */
/* ---------------------------------------------------------------------------------------- */

static void sbm__scache_free_tiles(sbm__cuda_scache *e)
{
    if (e->tiles && e->allocator.free) e->allocator.free(e->allocator.user, e->tiles);
    e->tiles = NULL;
    e->ntiles = 0;
    e->tile_items = 0;
}

void sbm__cuda_scache_clear(sbm_ctx *ctx)
{
    sbm__cuda_state *S = sbm__cuda_st(ctx);
    for (int i = 0; i < SBM__SCACHE_SIZE; i++) {
        sbm__scache_free_tiles(&S->scache[i]);
        memset(&S->scache[i], 0, sizeof S->scache[i]);
    }
}

/* The cache entry of A's pattern, computing its statistics on a miss. */
sbm_status sbm__csr_stats(sbm_ctx *ctx, const sbm_csr *A, sbm__cuda_scache **out)
{
    sbm__cuda_state *S = sbm__cuda_st(ctx);
    sbm__cuda_scache *slot = &S->scache[0];
    for (int i = 0; i < SBM__SCACHE_SIZE; i++) {
        sbm__cuda_scache *e = &S->scache[i];
        if (e->pattern_id != 0 && e->pattern_id == A->pattern_id && e->m == A->m && e->nnz == A->nnz) {
            e->last_use = ++S->scache_clock;
            *out = e;
            return SBM_SUCCESS;
        }
        if (e->last_use < slot->last_use) slot = e;
    }
    int64_t max_row = 0, slots = 0;
    SBM__TRY(sbm__csr_row_stats_pass(ctx, A->m, A->rowptr, &max_row, &slots));
    /* the evicted split may still be read by queued work (sbm__csr_row_stats_pass waited for the stream) */
    sbm__scache_free_tiles(slot);
    slot->pattern_id = A->pattern_id;
    slot->m = A->m;
    slot->nnz = A->nnz;
    slot->max_row = max_row;
    slot->warp_slots = slots;
    slot->last_use = ++S->scache_clock;
    *out = slot;
    return SBM_SUCCESS;
}

sbm_status sbm__cuda_csr_row_stats(sbm_ctx *ctx, const sbm_csr *A, int64_t *max_row,
                                   int64_t *warp_slots)
{
    sbm__cuda_scache *e = NULL;
    SBM__TRY(sbm__csr_stats(ctx, A, &e));
    *max_row = e->max_row;
    *warp_slots = e->warp_slots;
    return SBM_SUCCESS;
}

/* The format AUTO stands for: on matrices with rows enough to fill the device, DIA when the
 * diagonals pad A by at most 25% (no column indices to read), else ELL when the longest row pads
 * it by at most 25% (no row pointers); otherwise the CSR kernel sbm_csr_spmv would run. */
sbm_status sbm__csr_choose_format(sbm_ctx *ctx, const sbm_csr *A, const sbm__cuda_scache *e,
                                     sbm_spmv_format *f)
{
    const double nnz = (double)A->nnz;
    const double fill = A->nnz > 0 ? (double)e->warp_slots / nnz : 1.0;
    *f = sbm__choose_csr(ctx, e).kind == SBM__CSR_MERGE ? SBM_SPMV_CSR_MERGE : SBM_SPMV_CSR_VECTOR;
    /* ELL and DIA run a thread per row: with fewer rows than about 1024 per SM they leave the
     * device idle (the 9000-row expanded BA matrix W ran ELL at 10% of copy bandwidth, against
     * 71% for the vector CSR kernel) */
    const int sms = sbm__cuda_st(ctx)->prop.multiProcessorCount;
    if (A->nnz == 0 || fill > 1.25 || (double)A->m < 1024.0 * sms) return SBM_SUCCESS;
    int64_t nd = 0, *idx = NULL;
    SBM__TRY(sbm__csr_dia_scan(ctx, A, &nd, &idx));
    if ((double)nd * (double)A->m <= 1.25 * nnz) *f = SBM_SPMV_DIA;
    else if ((double)e->max_row * (double)A->m <= 1.25 * nnz) *f = SBM_SPMV_ELL;
    return SBM_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* sbm_csr_spmv                                                                             */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm__cuda_csr_spmv(sbm_ctx *ctx, double alpha, const sbm_csr *A, const double *x,
                              double beta, double *y)
{
    sbm_status st = SBM_SUCCESS;
    sbm__cuda_scache *e = NULL;
    sbm__csr_kernel k;
    SBM__CK(sbm__cuda_enter(ctx));
    if (A->m == 0) goto done;
    if (A->nnz == 0) {
        SBM__CK(sbm__csr_launch_scale_y(ctx, A->m, alpha, beta, y));
        goto done;
    }
    SBM__CK(sbm__csr_stats(ctx, A, &e));
    k = sbm__choose_csr(ctx, e);
    (void)sbm__csr_forced(ctx, A->m, A->nnz, &k);
    if (k.kind == SBM__CSR_MERGE && (!e->tiles || e->tile_items != sbm__csr_merge_items(k.cfg))) {
        int64_t *coord = NULL, nt = 0;
        SBM__CK(sbm__csr_merge_split(ctx, A->m, A->nnz, A->rowptr, sbm__csr_merge_items(k.cfg), &coord, &nt));
        if (e->tiles) {
            /* a split for another tile shape may still be read by queued work */
            st = sbm__cuda_sync(ctx);
            if (st != SBM_SUCCESS) {
                sbm__free(ctx, coord);
                goto done;
            }
        }
        sbm__scache_free_tiles(e);
        e->tiles = coord;
        e->ntiles = nt;
        e->tile_items = sbm__csr_merge_items(k.cfg);
        e->allocator = ctx->allocator;
    }
    SBM__CK(sbm__csr_launch(ctx, k, A->m, A->rowptr, A->colind, A->values, e->tiles, e->ntiles,
                            alpha, x, beta, y));
done:
    return st;
}
