/* SPDX-License-Identifier: BSD-3-Clause */
/* The global ESC path of the scalar CSR SpGEMM plan for long rows: expansion, sort per slice under
 * the memory budget (the ESC layer shared with the block SpGEMM, cuda_esc.cuh), row lengths,
 * columns (Dalton et al. Algorithm 3). */
#include "cuda_csr_gemm.cuh"
#include "cuda_esc.cuh"

#include <inttypes.h>
#include <stdlib.h>

/* ---------------------------------------------------------------------------------------- */
/* Long rows: the global ESC path                                                           */
/* ---------------------------------------------------------------------------------------- */

/* Exclusive prefix sum over the CTA (NT threads, all must call); *total gets the sum. */
template <int NT>
__device__ __forceinline__ int64_t sbm__cg_block_scan(int64_t v, int64_t *s_warp, int64_t *total)
{
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    int64_t x = v;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const int64_t y = __shfl_up_sync(0xFFFFFFFFu, x, d);
        if (lane >= d) x += y;
    }
    if (lane == 31) s_warp[w] = x;
    __syncthreads();
    if (w == 0) {
        int64_t t = lane < NT / 32 ? s_warp[lane] : 0;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const int64_t y = __shfl_up_sync(0xFFFFFFFFu, t, d);
            if (lane >= d) t += y;
        }
        if (lane < NT / 32) s_warp[lane] = t;
    }
    __syncthreads();
    const int64_t before = w > 0 ? s_warp[w - 1] : 0;
    *total = s_warp[NT / 32 - 1];
    __syncthreads(); /* s_warp is reused by the next call */
    return before + x - v;
}

/* Expansion of global rows g0..g1-1 (Dalton et al. Algorithm 3): one CTA per row; batches of
 * NT entries of A, scanned, and their products written in expansion order at the row's offset
 * in the slice (gP[g] - gP[g0]) as (key, A entry << 32 | B entry). */
template <int KEY>
__global__ void __launch_bounds__(SBM__CG_NT)
    sbm__k_cg_expand(int64_t g0, int64_t g1, const uint64_t *__restrict__ grows,
                     const int64_t *__restrict__ gP, const int64_t *__restrict__ Ap,
                     const int32_t *__restrict__ Aj, const int64_t *__restrict__ Bp,
                     const int32_t *__restrict__ Bj, int cbits, void *keys, uint64_t *vals)
{
    __shared__ int64_t s_off[SBM__CG_NT], s_b0[SBM__CG_NT], s_warp[SBM__CG_NT / 32];
    const int tid = threadIdx.x;
    const int64_t base = gP[g0];
    for (int64_t g = g0 + blockIdx.x; g < g1; g += gridDim.x) {
        const int64_t r = (int64_t)grows[g], a0 = Ap[r], a1 = Ap[r + 1];
        int64_t out = gP[g] - base;
        for (int64_t pb = a0; pb < a1; pb += SBM__CG_NT) {
            const int64_t p = pb + tid;
            int64_t len = 0, b0 = 0, total = 0;
            if (p < a1) {
                const int32_t k = Aj[p];
                b0 = Bp[k];
                len = Bp[k + 1] - b0;
            }
            const int64_t excl = sbm__cg_block_scan<SBM__CG_NT>(len, s_warp, &total);
            s_off[tid] = excl;
            s_b0[tid] = b0;
            __syncthreads();
            const int nvalid = a1 - pb < SBM__CG_NT ? (int)(a1 - pb) : SBM__CG_NT;
            for (int64_t e = tid; e < total; e += SBM__CG_NT) {
                const int j = (int)sbm__upper_bound(s_off, 0, nvalid, e) - 1;
                const int64_t q = s_b0[j] + (e - s_off[j]);
                const int32_t col = Bj[q];
                const int64_t pos = out + e;
                if (KEY == SBM__CG_KEY_COL)
                    ((int32_t *)keys)[pos] = col;
                else if (KEY == SBM__CG_KEY_PACK32)
                    ((uint32_t *)keys)[pos] = ((uint32_t)(g - g0) << cbits) | (uint32_t)col;
                else
                    ((uint64_t *)keys)[pos] = ((uint64_t)(g - g0) << cbits) | (uint64_t)col;
                vals[pos] = ((uint64_t)(pb + j) << 32) | (uint64_t)q;
            }
            out += total;
            __syncthreads(); /* s_off, s_b0 are overwritten by the next batch */
        }
    }
}

/* Segment offsets of a slice: off[s] = gP[g0+s] - gP[g0]. */
__global__ void sbm__k_cg_seg_offsets(int64_t ns, int64_t g0, const int64_t *gP, int64_t *off)
{
    SBM__GRID_STRIDE(s, ns + 1) { off[s] = gP[g0 + s] - gP[g0]; }
}

/* Length of each global row of C in the slice: the run heads of its sorted keys (Dalton et al.
 * section Contraction: J[j] != J[j+1] marks a new entry). One CTA per row. */
template <class K>
__global__ void __launch_bounds__(SBM__CG_NT)
    sbm__k_cg_heads(int64_t g0, int64_t g1, const uint64_t *__restrict__ grows,
                    const int64_t *__restrict__ gP, const K *__restrict__ keys,
                    int64_t *__restrict__ clen)
{
    const int64_t base = gP[g0];
    for (int64_t g = g0 + blockIdx.x; g < g1; g += gridDim.x) {
        const int64_t s = gP[g] - base, e1 = gP[g + 1] - base;
        int64_t count = 0;
        for (int64_t c = s; c < e1; c += SBM__CG_NT) {
            const int64_t e = c + threadIdx.x;
            const int head = e < e1 && (e == s || keys[e] != keys[e - 1]);
            count += __syncthreads_count(head);
        }
        if (threadIdx.x == 0) clen[grows[g]] = count;
    }
}

/* The sorted pairs of global rows g0..g1-1 (sorted, slice order) to their rows' places in the
 * plan's expansion (row order, poff). One CTA per row. */
__global__ void __launch_bounds__(SBM__CG_NT)
    sbm__k_cg_place(int64_t g0, int64_t g1, const uint64_t *__restrict__ grows,
                    const int64_t *__restrict__ gP, const int64_t *__restrict__ poff,
                    const uint64_t *__restrict__ sorted, uint64_t *__restrict__ pairs)
{
    const int64_t base = gP[g0];
    for (int64_t g = g0 + blockIdx.x; g < g1; g += gridDim.x) {
        const uint64_t *src = sorted + (gP[g] - base);
        uint64_t *dst = pairs + poff[grows[g]];
        const int64_t n = gP[g + 1] - gP[g];
        for (int64_t e = threadIdx.x; e < n; e += SBM__CG_NT) dst[e] = src[e];
    }
}

/* Columns of the global rows and the first pair of each of their entries: the column of a pair
 * is Bj of its B entry. One CTA per row. */
__global__ void __launch_bounds__(SBM__CG_NT)
    sbm__k_cg_fill_global(int64_t ng, const uint64_t *__restrict__ grows,
                          const int64_t *__restrict__ poff, const uint64_t *__restrict__ pairs,
                          const int32_t *__restrict__ Bj, const int64_t *__restrict__ Cp,
                          int32_t *__restrict__ Cj, int64_t *__restrict__ seg)
{
    __shared__ int64_t s_warp[SBM__CG_NT / 32];
    for (int64_t g = blockIdx.x; g < ng; g += gridDim.x) {
        const int64_t r = (int64_t)grows[g];
        const int64_t s = poff[r], e1 = poff[r + 1], c0 = Cp[r];
        int64_t run = 0;
        for (int64_t c = s; c < e1; c += SBM__CG_NT) {
            const int64_t e = c + threadIdx.x;
            int32_t col = -1, prev = -1;
            if (e < e1) {
                col = Bj[(uint32_t)pairs[e]];
                if (e > s) prev = Bj[(uint32_t)pairs[e - 1]];
            }
            const int head = e < e1 && col != prev;
            int64_t total = 0;
            const int64_t pos = run + sbm__cg_block_scan<SBM__CG_NT>(head, s_warp, &total);
            if (head) {
                Cj[c0 + pos] = col;
                seg[c0 + pos] = e;
            }
            run += total;
        }
    }
}

/* The global path of the plan: expansion and sort per slice, the sorted pairs placed at poff
 * (row order) in P->pairs, row lengths into clen. grows (ng) are the global rows, gP (ng+1,
 * device) their offsets in a compact expansion of the global rows alone. */
sbm_status sbm__cg_global_symbolic(sbm_ctx *ctx, sbm__csr_gpu_plan *P, const sbm_csr *A,
                                   const sbm_csr *B, int64_t ng, const uint64_t *grows,
                                   const int64_t *gP, const int64_t *poff, int64_t *clen)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    const int cbits = sbm__bits_for(B->n);
    int64_t *cuts = NULL, *h_gP = NULL, nslices = 0, over = -1;
    uint64_t *h_grows = NULL;
    int kmode = SBM__CG_KEY_COL;
    size_t budget = 0, need = 0;
    sbm__esc_sort so;
    sbm__esc_buffers buf;

    /* host copies of the offsets (to cut slices) and of the rows (for messages) */
    h_gP = (int64_t *)malloc((size_t)(ng + 1) * sizeof(int64_t));
    h_grows = (uint64_t *)malloc((size_t)ng * sizeof(uint64_t));
    if (!h_gP || !h_grows) {
        st = sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory for "
                        "the global rows", (size_t)(2 * ng + 1) * sizeof(int64_t));
        goto done;
    }
    SBM__CK(sbm__cuda_d2h(ctx, h_gP, gP, (size_t)(ng + 1) * sizeof(int64_t)));
    SBM__CK(sbm__cuda_d2h(ctx, h_grows, grows, (size_t)ng * sizeof(uint64_t)));
    /* every global row is long, so the radix sort unless the global path is forced on short
     * rows (the rule of the block SpGEMM, sbm__esc_use_radix) */
    so.radix = sbm__esc_use_radix(h_gP[ng] - h_gP[0], ng);
    so.key_bytes = !so.radix ? 4 : cbits + sbm__bits_for(ng) <= 32 ? 4 : 8;
    so.vals_out = 1; /* the sorted pairs are placed into the plan by rows afterwards */
    kmode = !so.radix ? SBM__CG_KEY_COL : so.key_bytes == 4 ? SBM__CG_KEY_PACK32 : SBM__CG_KEY_PACK64;
    SBM__CK(sbm__cuda_budget(ctx, &budget));
    st = sbm__esc_plan_slices(ctx, &so, ng, h_gP, budget, &over, &need, &cuts, &nslices);
    if (st == SBM_ERR_OUT_OF_MEMORY && over >= 0)
        st = sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY,
                        "row %" PRIu64 " of C has %" PRId64 " products, whose expansion and "
                        "sort need %zu bytes of workspace; the memory budget is %zu bytes",
                        h_grows[over], h_gP[over + 1] - h_gP[over], need, budget);
    if (st != SBM_SUCCESS) goto done;
    P->h.info.slices = nslices;
    SBM__CK(sbm__esc_workspace(ctx, &so, h_gP, cuts, nslices, &buf));
    for (int64_t t = 0; t < nslices; t++) {
        const int64_t g0 = cuts[t], g1 = cuts[t + 1], ns = g1 - g0;
        const int64_t n = h_gP[g1] - h_gP[g0];
        void *kin = buf.kin, *kout = buf.kout;
        uint64_t *vin = buf.vin, *vout = buf.vout;
        const unsigned grid = ns < (1 << 20) ? (unsigned)ns : (1u << 20);
        const int sbits = cbits + sbm__bits_for(ns);
        if (kmode == SBM__CG_KEY_COL)
            sbm__k_cg_expand<SBM__CG_KEY_COL><<<grid, SBM__CG_NT, 0, s>>>(
                g0, g1, grows, gP, A->rowptr, A->colind, B->rowptr, B->colind, cbits, kin, vin);
        else if (kmode == SBM__CG_KEY_PACK32)
            sbm__k_cg_expand<SBM__CG_KEY_PACK32><<<grid, SBM__CG_NT, 0, s>>>(
                g0, g1, grows, gP, A->rowptr, A->colind, B->rowptr, B->colind, cbits, kin, vin);
        else
            sbm__k_cg_expand<SBM__CG_KEY_PACK64><<<grid, SBM__CG_NT, 0, s>>>(
                g0, g1, grows, gP, A->rowptr, A->colind, B->rowptr, B->colind, cbits, kin, vin);
        SBM__LAUNCHED(ctx, "CSR SpGEMM expansion");
        if (kmode == SBM__CG_KEY_COL) {
            sbm__k_cg_seg_offsets<<<sbm__grid(ns + 1, 256), 256, 0, s>>>(ns, g0, gP, buf.off);
            SBM__LAUNCHED(ctx, "CSR SpGEMM segment offsets");
        }
        SBM__CK(sbm__esc_sort_slice(ctx, &so, kin, kout, vin, vout, n, ns, buf.off, sbits));
        if (kmode == SBM__CG_KEY_COL)
            sbm__k_cg_heads<int32_t><<<grid, SBM__CG_NT, 0, s>>>(g0, g1, grows, gP,
                                                                 (const int32_t *)kout, clen);
        else if (kmode == SBM__CG_KEY_PACK32)
            sbm__k_cg_heads<uint32_t><<<grid, SBM__CG_NT, 0, s>>>(g0, g1, grows, gP,
                                                                  (const uint32_t *)kout, clen);
        else
            sbm__k_cg_heads<uint64_t><<<grid, SBM__CG_NT, 0, s>>>(g0, g1, grows, gP,
                                                                  (const uint64_t *)kout, clen);
        SBM__LAUNCHED(ctx, "CSR SpGEMM row lengths (global rows)");
        sbm__k_cg_place<<<grid, SBM__CG_NT, 0, s>>>(g0, g1, grows, gP, poff, vout, P->pairs);
        SBM__LAUNCHED(ctx, "CSR SpGEMM sorted pairs of the global rows");
    }
done:
    free(cuts);
    free(h_gP);
    free(h_grows);
    return st;
}

sbm_status sbm__cg_global_columns(sbm_ctx *ctx, int64_t ng, const uint64_t *grows,
                                  const int64_t *poff, const uint64_t *pairs, const sbm_csr *B,
                                  sbm_csr *C, int64_t *seg)
{
    sbm_status st = SBM_SUCCESS;
    sbm__k_cg_fill_global<<<ng < (1 << 20) ? (unsigned)ng : (1u << 20), SBM__CG_NT, 0,
                            sbm__cuda_stream(ctx)>>>(ng, grows, poff, pairs, B->colind, C->rowptr,
                                                     C->colind, seg);
    SBM__LAUNCHED(ctx, "CSR SpGEMM columns of the global rows");
done:
    return st;
}
