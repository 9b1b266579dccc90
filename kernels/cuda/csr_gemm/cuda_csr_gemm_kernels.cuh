/* SPDX-License-Identifier: BSD-3-Clause */
/* Short-row kernel templates of the scalar CSR SpGEMM (definitions; instantiated in
 * cuda_csr_gemm_kernels.cu for every bin's group size and capacity). Included by that file only. */
#ifndef SBM_CUDA_CSR_GEMM_ROWS_CUH
#define SBM_CUDA_CSR_GEMM_ROWS_CUH

#include "cuda_csr_gemm.cuh"

/* Shared memory of one group (bytes from the group's base): the A-entry batch (product offsets,
 * B row starts), then the hash table (count: int32[2*CAP]) or, per product in expansion order,
 * the sort key, the B entry and the A entry relative to the row (fill: uint64[CAP],
 * uint32[CAP], uint16[CAP]). */
template <int G, int CAP, int MODE>
struct sbm__cg_layout {
    static constexpr int OFF = 0;           /* int64[G] */
    static constexpr int B0 = OFF + 8 * G;  /* int64[G] */
    static constexpr int BODY = B0 + 8 * G; /* hash, or keys */
    static constexpr int Q = BODY + 8 * CAP;
    static constexpr int PL = Q + 4 * CAP;
    static constexpr int BYTES = MODE == 0 ? BODY + 8 * CAP : PL + 2 * CAP;
};

/* Insert col into the open-addressing table (2*CAP slots, -1 empty; at most CAP distinct keys,
 * so a free slot always exists). @return 1 if col was new. */
template <int CAP>
__device__ __forceinline__ int sbm__cg_insert(int32_t *table, int32_t col)
{
    constexpr int H = 2 * CAP;
    constexpr int HB = CAP == 16 ? 5 : CAP == 32 ? 6 : CAP == 64 ? 7 : CAP == 128 ? 8
                     : CAP == 256 ? 9 : 10;
    static_assert((1 << HB) == H, "hash table size");
    unsigned h = ((unsigned)col * 2654435761u) >> (32 - HB); /* Fibonacci hashing */
    for (;;) {
        const int32_t old = atomicCAS(&table[h], -1, col);
        if (old == -1) return 1;
        if (old == col) return 0;
        h = (h + 1) & (H - 1);
    }
}

/* Ascending bitonic sort of a[0..N) (N a power of two) by the G lanes of a group. */
template <int G>
__device__ __forceinline__ void sbm__cg_bitonic(uint64_t *a, int N, int lane, unsigned gmask)
{
    for (int k = 2; k <= N; k <<= 1)
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int i = lane; i < (N >> 1); i += G) {
                const int lo = 2 * i - (i & (j - 1));
                const int hi = lo + j;
                const uint64_t x = a[lo], y = a[hi];
                if ((x > y) == ((lo & k) == 0)) {
                    a[lo] = y;
                    a[hi] = x;
                }
            }
            __syncwarp(gmask);
        }
}

/* Expansion of one row into its group's shared memory, in batches of G entries of A: lane l
 * takes entry pb+l, an inclusive scan of the B row lengths gives each entry's first product,
 * and the batch's products are dealt G at a time in expansion order (Dalton et al. section
 * Expansion; Liu et al. Fig. 4). COUNT inserts the columns into the hash table and counts the
 * new ones in *count; otherwise every product's key (column, expansion index), B entry and A
 * entry relative to the row are stored, and *ebase ends at the row's products. */
template <int G, int CAP, int MODE>
__device__ __forceinline__ void sbm__cg_row_expand(int64_t a0, int64_t a1, int lane, unsigned gmask,
                                                   const int32_t *__restrict__ Aj,
                                                   const int64_t *__restrict__ Bp,
                                                   const int32_t *__restrict__ Bj, int64_t *s_off,
                                                   int64_t *s_b0, int32_t *s_hash, uint64_t *s_key,
                                                   uint32_t *s_q, uint16_t *s_pl, int &count,
                                                   int64_t &ebase)
{
    for (int64_t pb = a0; pb < a1; pb += G) {
        const int64_t p = pb + lane;
        int64_t len = 0, b0 = 0;
        if (p < a1) {
            const int32_t k = Aj[p];
            b0 = Bp[k];
            len = Bp[k + 1] - b0;
        }
        int64_t incl = len;
#pragma unroll
        for (int d = 1; d < G; d <<= 1) {
            const int64_t y = __shfl_up_sync(gmask, incl, d, G);
            if (lane >= d) incl += y;
        }
        const int64_t total = __shfl_sync(gmask, incl, G - 1, G);
        const int nvalid = a1 - pb < G ? (int)(a1 - pb) : G;
        s_off[lane] = incl - len;
        s_b0[lane] = b0;
        __syncwarp(gmask);
        for (int64_t e0 = 0; e0 < total; e0 += G) {
            const int64_t e = e0 + lane;
            const bool act = e < total;
            int32_t col = 0;
            int j = 0;
            int64_t ql = 0;
            if (act) {
                j = (int)sbm__upper_bound(s_off, 0, nvalid, e) - 1;
                ql = e - s_off[j];
                col = Bj[s_b0[j] + ql];
            }
            if (MODE == SBM__CG_COUNT) {
                const int ins = act ? sbm__cg_insert<CAP>(s_hash, col) : 0;
                count += __popc(__ballot_sync(gmask, ins));
            } else if (act) {
                /* ties of a column sort by expansion index: expansion order */
                const int x = (int)(ebase + e);
                s_key[x] = ((uint64_t)(uint32_t)col << 32) | (uint64_t)x;
                s_q[x] = (uint32_t)(s_b0[j] + ql);
                s_pl[x] = (uint16_t)(pb + j - a0);
            }
        }
        ebase += total;
        __syncwarp(gmask); /* the batch arrays are overwritten next */
    }
}

/* Contraction of one sorted row (n products; Dalton et al. section Contraction): the run heads
 * are C's columns, written at Cp[row]; FILL writes the first pair of each entry to seg and the
 * pairs to the plan at poff[row], DIRECT the values, each summed by its run head's lane in
 * sorted order. */
template <int G, int MODE>
__device__ __forceinline__ void sbm__cg_row_contract(int64_t row, int64_t a0, int n, int lane,
                                                     unsigned gmask, int gbase, unsigned below,
                                                     const int64_t *__restrict__ poff,
                                                     const int64_t *__restrict__ Cp,
                                                     int32_t *__restrict__ Cj, int64_t *__restrict__ seg,
                                                     uint64_t *__restrict__ pairs,
                                                     const double *__restrict__ Ax,
                                                     const double *__restrict__ Bx,
                                                     double *__restrict__ Cx, uint64_t *s_key,
                                                     const uint32_t *s_q, const uint16_t *s_pl)
{
    /* sort, then the run heads are C's columns (Dalton et al. section Contraction) */
    int N = 1;
    while (N < n) N <<= 1;
    for (int s = n + lane; s < N; s += G) s_key[s] = ~(uint64_t)0;
    __syncwarp(gmask);
    sbm__cg_bitonic<G>(s_key, N, lane, gmask);
    const int64_t c0 = Cp[row], base = poff[row];
    int64_t run = 0;
    for (int r0 = 0; r0 < n; r0 += G) {
        const int r = r0 + lane;
        const bool act = r < n;
        const uint64_t key = act ? s_key[r] : 0;
        const uint32_t col = (uint32_t)(key >> 32);
        const bool head = act && (r == 0 || (uint32_t)(s_key[r - 1] >> 32) != col);
        const unsigned bal = __ballot_sync(gmask, head) >> gbase;
        if (head) {
            const int64_t pos = c0 + run + __popc(bal & below);
            Cj[pos] = (int32_t)col;
            if (MODE == SBM__CG_FILL) {
                seg[pos] = base + r;
            } else {
                double acc = 0.0;
                for (int q = r; q < n && (uint32_t)(s_key[q] >> 32) == col; q++) {
                    const uint32_t x = (uint32_t)s_key[q];
                    acc = __dadd_rn(acc, __dmul_rn(Ax[a0 + s_pl[x]], Bx[s_q[x]]));
                }
                Cx[pos] = acc;
            }
        }
        run += __popc(bal);
        if (MODE == SBM__CG_FILL && act) {
            const uint32_t x = (uint32_t)key;
            pairs[base + r] = ((uint64_t)(a0 + s_pl[x]) << 32) | (uint64_t)s_q[x];
        }
    }
}

/* One group of G lanes (4, 8, 16 or 32; never across warps) per row of rows[0..nrows), every row
 * with at most CAP products. COUNT writes the row's length in C to clen[row]. FILL writes its
 * columns to Cj, the first pair of each entry to seg (both at Cp[row]), and its pairs sorted by
 * column to pairs at poff[row] (the rows' offsets in the expansion, in row order). DIRECT
 * writes the columns to Cj and the values to Cx: the lane of each run head adds the run's
 * products in sorted order, which is the order sbm__k_cg_numeric adds a plan's pairs in, so
 * the one-shot product is bitwise the planned one. */
template <int G, int CAP, int MODE>
__global__ void sbm__k_cg_rows(int64_t nrows, const uint64_t *__restrict__ rows,
                               const int64_t *__restrict__ poff, const int64_t *__restrict__ Ap,
                               const int32_t *__restrict__ Aj, const int64_t *__restrict__ Bp,
                               const int32_t *__restrict__ Bj, const int64_t *__restrict__ Cp,
                               int32_t *__restrict__ Cj, int64_t *__restrict__ seg,
                               uint64_t *__restrict__ pairs, int64_t *__restrict__ clen,
                               const double *__restrict__ Ax, const double *__restrict__ Bx,
                               double *__restrict__ Cx)
{
    typedef sbm__cg_layout<G, CAP, MODE> Lay;
    extern __shared__ __align__(16) unsigned char sbm__cg_smem[];
    const int gpc = blockDim.x / G;
    const int grp = threadIdx.x / G, lane = threadIdx.x % G;
    const int gbase = (threadIdx.x & 31) & ~(G - 1); /* the group's first lane in its warp */
    const unsigned gmask = (0xFFFFFFFFu >> (32 - G)) << gbase;
    const unsigned below = (1u << lane) - 1u; /* group lanes before this one */
    unsigned char *sm = sbm__cg_smem + (size_t)grp * Lay::BYTES;
    int64_t *s_off = (int64_t *)(sm + Lay::OFF);
    int64_t *s_b0 = (int64_t *)(sm + Lay::B0);
    int32_t *s_hash = (int32_t *)(sm + Lay::BODY);
    uint64_t *s_key = (uint64_t *)(sm + Lay::BODY);
    uint32_t *s_q = (uint32_t *)(sm + Lay::Q);
    uint16_t *s_pl = (uint16_t *)(sm + Lay::PL);

    for (int64_t t = (int64_t)blockIdx.x * gpc + grp; t < nrows; t += (int64_t)gridDim.x * gpc) {
        const int64_t row = (int64_t)rows[t];
        const int64_t a0 = Ap[row], a1 = Ap[row + 1];
        if (MODE == SBM__CG_COUNT)
            for (int s = lane; s < 2 * CAP; s += G) s_hash[s] = -1;
        __syncwarp(gmask);
        int count = 0;   /* COUNT: distinct columns so far */
        int64_t ebase = 0; /* FILL: products of the earlier batches */
        sbm__cg_row_expand<G, CAP, MODE>(a0, a1, lane, gmask, Aj, Bp, Bj, s_off, s_b0, s_hash, s_key,
                                         s_q, s_pl, count, ebase);
        if (MODE == SBM__CG_COUNT) {
            if (lane == 0) clen[row] = count;
        } else {
            sbm__cg_row_contract<G, MODE>(row, a0, (int)ebase, lane, gmask, gbase, below, poff, Cp, Cj,
                                          seg, pairs, Ax, Bx, Cx, s_key, s_q, s_pl);
        }
        __syncwarp(gmask); /* shared memory is reused by the next row */
    }
}

#endif /* SBM_CUDA_CSR_GEMM_ROWS_CUH */
