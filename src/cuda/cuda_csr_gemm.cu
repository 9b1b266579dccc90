/* Scalar CSR SpGEMM on the GPU: C = A*B with a reusable plan.
 *
 * Row-wise ESC with the per-row analysis of Dalton, Olson, Bell, "Optimizing Sparse Matrix-Matrix
 * Multiplication for the GPU" (papers/esc-spgemm-dalton-olson-bell.txt) and the binning and
 * on-chip sorts of Liu, He, Liu, Tan, "Register-Aware Optimizations for Parallel Sparse
 * Matrix-Matrix Multiplication" (papers/register-aware-spgemm-liu-he-liu-tan.txt).
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
 *   columns (each run head's lane adds the run in sorted order) and no plan is stored: on 2D
 *   Poisson 1500^2 that leaves out 680 MB of pairs and runs, and took the one-shot from 4.2 to
 *   2.7 ms on an H100 (cuSPARSE all phases 2.8-3.3 ms). With long rows: plan, execute, destroy.
 * execute (numeric only; no allocation, no synchronisation)
 *   The plan holds, for every entry of C, its run of (A entry, B entry) pairs sorted by column,
 *   ties in expansion order (A's entries of the row in order, then B's): operand pointers, not
 *   values, as in the block SpGEMM (kernels/cuda_gemm.cu); 8 bytes per product and per entry of
 *   C. One thread per entry of C adds its products one at a time in that order (Dalton et al.
 *   Algorithm 5, sequential per entry): the CPU backend's order, no floating-point atomics, and
 *   bitwise the same result from both paths, with or without slicing. __dmul_rn/__dadd_rn keep
 *   FMA contraction out of the rounding.
 *   A first version accumulated short rows in shared memory at execute time (binary search of
 *   each product's slot, __match_any_sync to order equal slots) and kept no pairs; on an H100
 *   it reached 0.38x of cuSPARSE's reuse compute (2D Poisson 1000^2: 0.446 ms against
 *   0.225 ms), latency-bound on the per-step searches and warp synchronisation, which moved
 *   into the plan here.
 */
#include "cuda_internal.cuh"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Bins                                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* Bin 0: rows without products (empty in C). Bins 1..SBM__CG_SHORT: at most 16 << (bin-1)
 * products, shared-memory groups. Bin SBM__CG_GLOBAL: the global ESC path. */
#define SBM__CG_SHORT 6
#define SBM__CG_GLOBAL (SBM__CG_SHORT + 1)
#define SBM__CG_NBINS (SBM__CG_GLOBAL + 1)
/* 512 products. Measured on an H100 (ncu, run 2 of the CSR SpGEMM work): one warp per row is
 * latency-bound on longer rows when there are few of them (bcsstk13: 466 rows of up to 4096
 * products took 352 us, 367 rows of up to 8192 took 741 us, where the global path sorted
 * ca-CondMat's long rows in about 130 us); 2D Poisson with 4x4 blocks (400 products a row) stays
 * in shared memory. */
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

/* The tuning's csr_gemm = SBM_TUNE_CSR_GEMM_GLOBAL forces the global path; AUTO bins by product
 * count. */
static int sbm__cg_force_global(const sbm_ctx *ctx)
{
    return ctx->tuning.csr_gemm == SBM_TUNE_CSR_GEMM_GLOBAL;
}

/* ---------------------------------------------------------------------------------------- */
/* Setup: products per row, bins, offsets                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Eight lanes per row sum the lengths of the rows of B the row's entries of A select (Dalton
 * et al. Algorithm 2); keys/vals are the (bin, row) pairs of the binning sort. */
__global__ void sbm__k_cg_products(int64_t m, const int64_t *Ap, const int32_t *Aj,
                                   const int64_t *Bp, int force_global, int64_t *prod,
                                   uint32_t *keys, uint64_t *vals)
{
    const int lane = threadIdx.x & 7;
    const unsigned gmask = 0xFFu << (threadIdx.x & 24);
    const int64_t stride = ((int64_t)gridDim.x * blockDim.x) >> 3;
    for (int64_t i = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 3; i < m; i += stride) {
        int64_t s = 0;
        for (int64_t p = Ap[i] + lane; p < Ap[i + 1]; p += 8) {
            const int32_t k = Aj[p];
            s += Bp[k + 1] - Bp[k];
        }
        s += __shfl_xor_sync(gmask, s, 4, 8);
        s += __shfl_xor_sync(gmask, s, 2, 8);
        s += __shfl_xor_sync(gmask, s, 1, 8);
        if (lane == 0) {
            uint32_t bin = 0;
            if (s > 0 && (force_global || s > SBM__CG_SHORT_MAX ||
                          Ap[i + 1] - Ap[i] >= SBM__CG_PLOCAL_MAX)) {
                bin = SBM__CG_GLOBAL;
            } else if (s > 0) {
                bin = 1;
                for (int64_t cap = 16; s > cap; cap <<= 1) bin++;
            }
            prod[i] = s;
            keys[i] = bin;
            vals[i] = (uint64_t)i;
        }
    }
}

/* boff[b] = first position of bin b in the sorted bin keys (b <= SBM__CG_NBINS), and
 * boff[SBM__CG_NBINS+1] = the total of products poff[m]: one download for the host. */
__global__ void sbm__k_cg_bin_offsets(int64_t m, const uint32_t *sorted, const int64_t *poff,
                                      int64_t *boff)
{
    const int b = threadIdx.x;
    if (b < SBM__CG_NBINS) boff[b] = sbm__lower_bound(sorted, 0, m, (uint32_t)b);
    if (b == SBM__CG_NBINS) boff[b] = m;
    if (b == SBM__CG_NBINS + 1) boff[b] = poff[m];
}

/* out[g] = prod[rows[g]] for the global rows, out[ng] = 0 (for the exclusive scan). */
__global__ void sbm__k_cg_gather_prod(int64_t ng, const uint64_t *rows, const int64_t *prod,
                                      int64_t *out)
{
    SBM__GRID_STRIDE(g, ng + 1) { out[g] = g < ng ? prod[rows[g]] : 0; }
}

/* ---------------------------------------------------------------------------------------- */
/* Short rows: one group of G threads per row, everything in shared memory                   */
/* ---------------------------------------------------------------------------------------- */

/* COUNT: the lengths of C's rows. FILL: C's columns and the plan's runs and pairs. DIRECT
 * (sbm_csr_gemm, where every row is short): C's columns and values, no plan. */
enum { SBM__CG_COUNT = 0, SBM__CG_FILL = 1, SBM__CG_DIRECT = 2 };

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
        /* Batches of G entries of A: lane l takes entry pb+l, an inclusive scan of the B row
         * lengths gives each entry's first product, and the batch's products are dealt G at a
         * time in expansion order (Dalton et al. section Expansion; Liu et al. Fig. 4). */
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
        if (MODE == SBM__CG_COUNT) {
            if (lane == 0) clen[row] = count;
        } else {
            /* sort, then the run heads are C's columns (Dalton et al. section Contraction) */
            const int n = (int)ebase;
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
        __syncwarp(gmask); /* shared memory is reused by the next row */
    }
}

/* Launch one short bin's kernel in one mode. Groups per CTA: 128 threads' worth, fewer where
 * the group's shared memory is large (at least one group; above 48 KiB by opt-in). */
template <int G, int CAP, int MODE>
static sbm_status sbm__cg_launch(sbm_ctx *ctx, int64_t nrows, const uint64_t *rows,
                                 const int64_t *poff, const sbm_csr *A, const sbm_csr *B,
                                 const int64_t *Cp, int32_t *Cj, int64_t *seg, uint64_t *pairs,
                                 int64_t *clen, double *Cx)
{
    sbm_status st = SBM_SUCCESS;
    const int bytes = sbm__cg_layout<G, CAP, MODE>::BYTES;
    int gpc = 128 / G;
    while (gpc > 1 && gpc * bytes > 48 * 1024) gpc--;
    const size_t smem = (size_t)gpc * bytes;
    int64_t blocks = (nrows + gpc - 1) / gpc;
    if (blocks > (1 << 22)) blocks = 1 << 22; /* grid-stride loop covers the rest */
    if (nrows <= 0) return SBM_SUCCESS;
    if (smem > 48 * 1024)
        SBM__CU(ctx, cudaFuncSetAttribute(sbm__k_cg_rows<G, CAP, MODE>,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
                "shared memory of the CSR SpGEMM row kernel");
    sbm__k_cg_rows<G, CAP, MODE><<<(unsigned)blocks, gpc * G, smem, sbm__cuda_stream(ctx)>>>(
        nrows, rows, poff, A->rowptr, A->colind, B->rowptr, B->colind, Cp, Cj, seg, pairs, clen,
        A->values, B->values, Cx);
    SBM__LAUNCHED(ctx, MODE == SBM__CG_COUNT  ? "CSR SpGEMM short rows (count)"
                       : MODE == SBM__CG_FILL ? "CSR SpGEMM short rows (columns and pairs)"
                                              : "CSR SpGEMM short rows (columns and values)");
done:
    return st;
}

template <int G, int CAP>
static sbm_status sbm__cg_launch_mode(sbm_ctx *ctx, int mode, int64_t nrows, const uint64_t *rows,
                                      const int64_t *poff, const sbm_csr *A, const sbm_csr *B,
                                      const int64_t *Cp, int32_t *Cj, int64_t *seg,
                                      uint64_t *pairs, int64_t *clen, double *Cx)
{
    if (mode == SBM__CG_COUNT)
        return sbm__cg_launch<G, CAP, SBM__CG_COUNT>(ctx, nrows, rows, poff, A, B, Cp, Cj, seg,
                                                     pairs, clen, Cx);
    if (mode == SBM__CG_FILL)
        return sbm__cg_launch<G, CAP, SBM__CG_FILL>(ctx, nrows, rows, poff, A, B, Cp, Cj, seg,
                                                    pairs, clen, Cx);
    return sbm__cg_launch<G, CAP, SBM__CG_DIRECT>(ctx, nrows, rows, poff, A, B, Cp, Cj, seg,
                                                  pairs, clen, Cx);
}

/* Group sizes per bin: a group per row with about four products per lane (Liu et al.: register
 * vectors of 8), a full warp from 128 products on. */
static sbm_status sbm__cg_short_bin(sbm_ctx *ctx, int bin, int mode, int64_t nrows,
                                    const uint64_t *rows, const int64_t *poff, const sbm_csr *A,
                                    const sbm_csr *B, const int64_t *Cp, int32_t *Cj,
                                    int64_t *seg, uint64_t *pairs, int64_t *clen, double *Cx)
{
#define SBM__CG_BIN(G, CAP)                                                                     \
    sbm__cg_launch_mode<G, CAP>(ctx, mode, nrows, rows, poff, A, B, Cp, Cj, seg, pairs, clen, Cx)
    switch (bin) {
    case 1: return SBM__CG_BIN(4, 16);
    case 2: return SBM__CG_BIN(8, 32);
    case 3: return SBM__CG_BIN(16, 64);
    case 4: return SBM__CG_BIN(32, 128);
    case 5: return SBM__CG_BIN(32, 256);
    default: return SBM__CG_BIN(32, 512);
    }
#undef SBM__CG_BIN
}

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

/* Sort keys: the column (segmented sort), or (row in slice << cbits | column) packed into 32
 * or 64 bits (radix sort). */
enum { SBM__CG_KEY_COL = 0, SBM__CG_KEY_PACK32 = 1, SBM__CG_KEY_PACK64 = 2 };

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

/* Workspace of sorting a slice of n products in ns rows: keys in and out, values in and out,
 * segment offsets, CUB's temporary storage. */
static sbm_status sbm__cg_slice_bytes(sbm_ctx *ctx, int radix, int key_bytes, int64_t n,
                                      int64_t ns, size_t *bytes)
{
    size_t temp = 0;
    sbm__carve cv = {0};
    sbm__carve_add(&cv, (size_t)n * key_bytes);
    sbm__carve_add(&cv, (size_t)n * key_bytes);
    sbm__carve_add(&cv, (size_t)n * sizeof(uint64_t));
    sbm__carve_add(&cv, (size_t)n * sizeof(uint64_t));
    sbm__carve_add(&cv, (size_t)(ns + 1) * sizeof(int64_t));
    if (radix)
        SBM__TRY(sbm__cuda_radix_pairs_temp(ctx, key_bytes, n, &temp));
    else
        SBM__TRY(sbm__cuda_segsort_pairs_temp(ctx, n, ns, NULL, &temp));
    *bytes = cv.total + temp;
    return SBM_SUCCESS;
}

/* Cut the global rows (products prefix h_gP[0..ng]) into slices whose workspace fits budget;
 * cuts[0..*nslices] (malloc'd). A row that does not fit alone is SBM_ERR_OUT_OF_MEMORY. */
static sbm_status sbm__cg_plan_slices(sbm_ctx *ctx, int radix, int key_bytes, int64_t ng,
                                      const int64_t *h_gP, const uint64_t *h_grows, size_t budget,
                                      int64_t **cuts_out, int64_t *nslices)
{
    size_t need = 0;
    int64_t ns = 0;
    int64_t *cuts = (int64_t *)malloc((size_t)(ng + 2) * sizeof(int64_t));
    *cuts_out = NULL;
    *nslices = 0;
    if (!cuts)
        return sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory "
                          "for the slice table", (size_t)(ng + 2) * sizeof(int64_t));
    cuts[0] = 0;
    for (int64_t g = 0; g < ng;) {
        /* the longest run of rows from g that fits: doubling, then bisection */
        int64_t lo = g + 1, hi;
        sbm_status st = sbm__cg_slice_bytes(ctx, radix, key_bytes, h_gP[g + 1] - h_gP[g], 1, &need);
        if (st == SBM_SUCCESS && need > budget)
            st = sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY,
                            "row %" PRIu64 " of C has %" PRId64 " products, whose expansion and "
                            "sort need %zu bytes of workspace; the memory budget is %zu bytes",
                            h_grows[g], h_gP[g + 1] - h_gP[g], need, budget);
        if (st != SBM_SUCCESS) {
            free(cuts);
            return st;
        }
        for (int64_t step = 1;; step *= 2) {
            hi = g + 1 + step;
            if (hi > ng) hi = ng;
            if (hi == lo) break;
            st = sbm__cg_slice_bytes(ctx, radix, key_bytes, h_gP[hi] - h_gP[g], hi - g, &need);
            if (st != SBM_SUCCESS) {
                free(cuts);
                return st;
            }
            if (need > budget) break; /* hi does not fit, lo does */
            lo = hi;
            if (hi == ng) break;
        }
        while (hi - lo > 1) {
            const int64_t mid = lo + (hi - lo) / 2;
            st = sbm__cg_slice_bytes(ctx, radix, key_bytes, h_gP[mid] - h_gP[g], mid - g, &need);
            if (st != SBM_SUCCESS) {
                free(cuts);
                return st;
            }
            if (need <= budget)
                lo = mid;
            else
                hi = mid;
        }
        cuts[++ns] = lo;
        g = lo;
    }
    *cuts_out = cuts;
    *nslices = ns;
    return SBM_SUCCESS;
}

/* Sort variant, as in the block SpGEMM (kernels/cuda_gemm.cu, sbm__gemm_use_radix): the
 * segmented sort for short rows, the packed-key radix sort where rows are long (every global
 * row is, unless the global path is forced). */
static int sbm__cg_use_radix(int64_t products, int64_t rows)
{
    return rows > 0 && products / rows >= 256;
}

/* The global path of the plan: expansion and sort per slice, the sorted pairs placed at poff
 * (row order) in P->pairs, row lengths into clen. grows (ng) are the global rows, gP (ng+1,
 * device) their offsets in a compact expansion of the global rows alone. */
static sbm_status sbm__cg_global_symbolic(sbm_ctx *ctx, sbm__csr_gpu_plan *P, const sbm_csr *A,
                                          const sbm_csr *B, int64_t ng, const uint64_t *grows,
                                          const int64_t *gP, const int64_t *poff, int64_t *clen)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    const int cbits = sbm__bits_for(B->n);
    int64_t *cuts = NULL, *h_gP = NULL, nslices = 0, worst_n = 0, worst_ns = 0;
    uint64_t *h_grows = NULL;
    int radix = 0, key_bytes = 4, kmode = SBM__CG_KEY_COL;
    size_t budget = 0;
    char *base = NULL;
    sbm__carve sc = {0};
    size_t o_kin, o_kout, o_vin, o_vout, o_off;

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
    radix = sbm__cg_use_radix(h_gP[ng] - h_gP[0], ng);
    key_bytes = !radix ? 4 : cbits + sbm__bits_for(ng) <= 32 ? 4 : 8;
    kmode = !radix ? SBM__CG_KEY_COL : key_bytes == 4 ? SBM__CG_KEY_PACK32 : SBM__CG_KEY_PACK64;
    SBM__CK(sbm__cuda_budget(ctx, &budget));
    SBM__CK(sbm__cg_plan_slices(ctx, radix, key_bytes, ng, h_gP, h_grows, budget, &cuts, &nslices));
    P->h.info.slices = nslices;
    for (int64_t t = 0; t < nslices; t++) {
        const int64_t n = h_gP[cuts[t + 1]] - h_gP[cuts[t]];
        if (n > worst_n) worst_n = n;
        if (cuts[t + 1] - cuts[t] > worst_ns) worst_ns = cuts[t + 1] - cuts[t];
    }
    o_kin = sbm__carve_add(&sc, (size_t)worst_n * key_bytes);
    o_kout = sbm__carve_add(&sc, (size_t)worst_n * key_bytes);
    o_vin = sbm__carve_add(&sc, (size_t)worst_n * sizeof(uint64_t));
    o_vout = sbm__carve_add(&sc, (size_t)worst_n * sizeof(uint64_t));
    o_off = sbm__carve_add(&sc, (size_t)(worst_ns + 1) * sizeof(int64_t));
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_B, sc.total, (void **)&base));
    for (int64_t t = 0; t < nslices; t++) {
        const int64_t g0 = cuts[t], g1 = cuts[t + 1], ns = g1 - g0;
        const int64_t n = h_gP[g1] - h_gP[g0];
        void *kin = base + o_kin, *kout = base + o_kout;
        uint64_t *vin = (uint64_t *)(base + o_vin), *vout = (uint64_t *)(base + o_vout);
        int64_t *off = (int64_t *)(base + o_off);
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
            sbm__k_cg_seg_offsets<<<sbm__grid(ns + 1, 256), 256, 0, s>>>(ns, g0, gP, off);
            SBM__LAUNCHED(ctx, "CSR SpGEMM segment offsets");
            SBM__CK(sbm__cuda_segsort_pairs(ctx, (const int32_t *)kin, (int32_t *)kout, vin, vout,
                                            n, ns, off));
            sbm__k_cg_heads<int32_t><<<grid, SBM__CG_NT, 0, s>>>(g0, g1, grows, gP,
                                                                 (const int32_t *)kout, clen);
        } else if (kmode == SBM__CG_KEY_PACK32) {
            SBM__CK(sbm__cuda_radix_pairs_u32(ctx, (const uint32_t *)kin, (uint32_t *)kout, vin,
                                              vout, n, sbits));
            sbm__k_cg_heads<uint32_t><<<grid, SBM__CG_NT, 0, s>>>(g0, g1, grows, gP,
                                                                  (const uint32_t *)kout, clen);
        } else {
            SBM__CK(sbm__cuda_radix_pairs_u64(ctx, (const uint64_t *)kin, (uint64_t *)kout, vin,
                                              vout, n, sbits));
            sbm__k_cg_heads<uint64_t><<<grid, SBM__CG_NT, 0, s>>>(g0, g1, grows, gP,
                                                                  (const uint64_t *)kout, clen);
        }
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

/* ---------------------------------------------------------------------------------------- */
/* Plan                                                                                     */
/* ---------------------------------------------------------------------------------------- */

void sbm__cuda_csr_gemm_plan_destroy(sbm_csr_plan *plan)
{
    sbm__csr_gpu_plan *P = (sbm__csr_gpu_plan *)plan;
    if (!P) return;
    int cur = -1;
    if (cudaGetDevice(&cur) == cudaSuccess && cur != P->h.device) cudaSetDevice(P->h.device);
    if (P->seg) P->al.free(P->al.user, P->seg);
    if (P->pairs) P->al.free(P->al.user, P->pairs);
    (void)cudaGetLastError();
    free(P);
}

/* A device array of the plan (n elements of size bytes), through the context's allocator. */
static sbm_status sbm__cg_plan_array(sbm_ctx *ctx, int64_t n, size_t size, const char *what,
                                     void **ptr)
{
    int ok = 1;
    const size_t bytes = sbm__mul_size(ctx, (size_t)(n > 0 ? n : 0), size, what, &ok);
    if (!ok) return SBM_ERR_OVERFLOW;
    *ptr = sbm__alloc(ctx, bytes, what);
    return *ptr ? SBM_SUCCESS : SBM_ERR_OUT_OF_MEMORY;
}

/* The plan and C (values zero), or with direct set and every row short, C with its values and
 * no plan (*plan NULL). */
static sbm_status sbm__cg_plan(sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B, int direct,
                               sbm_csr_plan **plan, sbm_csr **Cout)
{
    const int64_t m = A->m;
    const int force = sbm__cg_force_global(ctx);
    cudaStream_t s = sbm__cuda_stream(ctx);
    sbm_status st = SBM_SUCCESS;
    sbm__csr_gpu_plan *P = NULL;
    sbm_csr *C = NULL;
    int64_t boff[SBM__CG_NBINS + 2], products = 0, nnz_c = 0, ng = 0;
    char *base = NULL;
    sbm__carve cv = {0};
    const size_t o_prod = sbm__carve_add(&cv, (size_t)(m + 1) * sizeof(int64_t));
    const size_t o_kin = sbm__carve_add(&cv, (size_t)(m + 1) * sizeof(uint32_t));
    const size_t o_kout = sbm__carve_add(&cv, (size_t)(m + 1) * sizeof(uint32_t));
    const size_t o_vin = sbm__carve_add(&cv, (size_t)(m + 1) * sizeof(uint64_t));
    const size_t o_rows = sbm__carve_add(&cv, (size_t)(m + 1) * sizeof(uint64_t));
    const size_t o_poff = sbm__carve_add(&cv, (size_t)(m + 1) * sizeof(int64_t));
    const size_t o_gp = sbm__carve_add(&cv, (size_t)(m + 1) * sizeof(int64_t));
    const size_t o_clen = sbm__carve_add(&cv, (size_t)(m + 1) * sizeof(int64_t));
    const size_t o_boff = sbm__carve_add(&cv, (SBM__CG_NBINS + 2) * sizeof(int64_t));
    int64_t *prod, *poff, *gP, *clen, *d_boff;
    uint32_t *kin, *kout;
    uint64_t *vin, *rows;
    *plan = NULL;
    *Cout = NULL;
    memset(boff, 0, sizeof boff);
    SBM__CK(sbm__cuda_enter(ctx));

    P = (sbm__csr_gpu_plan *)calloc(1, sizeof *P);
    if (!P) {
        st = sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes for a plan", sizeof *P);
        goto done;
    }
    P->al = ctx->allocator;
    P->h.backend = ctx->backend;
    P->h.device = ctx->device;
    P->h.ops = ctx->ops;
    P->m = m;
    P->h.info.slices = 1;

    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, cv.total, (void **)&base));
    prod = (int64_t *)(base + o_prod);
    kin = (uint32_t *)(base + o_kin);
    kout = (uint32_t *)(base + o_kout);
    vin = (uint64_t *)(base + o_vin);
    rows = (uint64_t *)(base + o_rows);
    poff = (int64_t *)(base + o_poff);
    gP = (int64_t *)(base + o_gp);
    clen = (int64_t *)(base + o_clen);
    d_boff = (int64_t *)(base + o_boff);

    /* ---- setup: products per row and each row's offset in the expansion (row order, so that
     * the runs of consecutive entries of C are consecutive), bins (a stable sort keeps rows
     * increasing per bin) ---- */
    SBM__CK(sbm__cuda_zero(ctx, clen, (size_t)(m + 1) * sizeof(int64_t)));
    SBM__CK(sbm__cuda_zero(ctx, prod + m, sizeof(int64_t)));
    if (m > 0) {
        sbm__k_cg_products<<<sbm__grid(m * 8, 256), 256, 0, s>>>(m, A->rowptr, A->colind,
                                                                 B->rowptr, force, prod, kin, vin);
        SBM__LAUNCHED(ctx, "CSR SpGEMM products per row");
        SBM__CK(sbm__cuda_radix_pairs_u32(ctx, kin, kout, vin, rows, m,
                                          sbm__bits_for(SBM__CG_NBINS)));
        SBM__CK(sbm__cuda_scan_i64(ctx, prod, poff, m + 1));
        sbm__k_cg_bin_offsets<<<1, 32, 0, s>>>(m, kout, poff, d_boff);
        SBM__LAUNCHED(ctx, "CSR SpGEMM bin offsets");
        SBM__CK(sbm__cuda_d2h(ctx, boff, d_boff, sizeof boff));
        products = boff[SBM__CG_NBINS + 1];
    }
    if (products > 0 && (A->nnz > (int64_t)UINT32_MAX || B->nnz > (int64_t)UINT32_MAX)) {
        st = sbm__error(ctx, SBM_ERR_OVERFLOW,
                        "the plan stores 32-bit entry indices of A and B, but A has %" PRId64
                        " and B %" PRId64 " entries",
                        A->nnz, B->nnz);
        goto done;
    }
    ng = boff[SBM__CG_GLOBAL + 1] - boff[SBM__CG_GLOBAL];
    direct = direct && ng == 0; /* the global path sorts pairs into the plan */
    if (!direct)
        SBM__CK(sbm__cg_plan_array(ctx, products, sizeof(uint64_t),
                                   "the sorted expansion of the plan", (void **)&P->pairs));

    /* ---- global rows: expansion and sort per slice, lengths ---- */
    if (ng > 0) {
        const uint64_t *grows = rows + boff[SBM__CG_GLOBAL];
        sbm__k_cg_gather_prod<<<sbm__grid(ng + 1, 256), 256, 0, s>>>(ng, grows, prod, gP);
        SBM__LAUNCHED(ctx, "CSR SpGEMM products of the global rows");
        SBM__CK(sbm__cuda_scan_i64(ctx, gP, gP, ng + 1));
        SBM__CK(sbm__cg_global_symbolic(ctx, P, A, B, ng, grows, gP, poff, clen));
    }
    /* ---- short rows: lengths ---- */
    for (int b = 1; b <= SBM__CG_SHORT; b++)
        SBM__CK(sbm__cg_short_bin(ctx, b, SBM__CG_COUNT, boff[b + 1] - boff[b], rows + boff[b],
                                  poff, A, B, NULL, NULL, NULL, NULL, clen, NULL));

    /* ---- C: row pointers, then the columns, the runs and the sorted pairs (direct: the
     * columns and the values) ---- */
    SBM__CK(sbm__cuda_scan_i64(ctx, clen, clen, m + 1));
    SBM__CK(sbm__cuda_d2h(ctx, &nnz_c, clen + m, sizeof nnz_c));
    SBM__CK(sbm__csr_alloc(ctx, m, B->n, nnz_c, &C));
    if (!direct)
        SBM__CK(sbm__cg_plan_array(ctx, nnz_c + 1, sizeof(int64_t), "the output runs of the plan",
                                   (void **)&P->seg));
    SBM__CK(sbm__cuda_d2d(ctx, C->rowptr, clen, (size_t)(m + 1) * sizeof(int64_t)));
    for (int b = 1; b <= SBM__CG_SHORT; b++)
        SBM__CK(sbm__cg_short_bin(ctx, b, direct ? SBM__CG_DIRECT : SBM__CG_FILL,
                                  boff[b + 1] - boff[b], rows + boff[b], poff, A, B, C->rowptr,
                                  C->colind, P->seg, P->pairs, NULL, C->values));
    if (direct) {
        /* every entry of C is a run head of a short row: all values written */
        SBM__CK(sbm__cuda_sync(ctx));
        *Cout = C;
        C = NULL;
        goto done;
    }
    if (ng > 0) {
        sbm__k_cg_fill_global<<<ng < (1 << 20) ? (unsigned)ng : (1u << 20), SBM__CG_NT, 0, s>>>(
            ng, rows + boff[SBM__CG_GLOBAL], poff, P->pairs, B->colind, C->rowptr, C->colind,
            P->seg);
        SBM__LAUNCHED(ctx, "CSR SpGEMM columns of the global rows");
    }
    SBM__CK(sbm__cuda_h2d(ctx, P->seg + nnz_c, &products, sizeof products));
    SBM__CK(sbm__cuda_zero(ctx, C->values, (size_t)nnz_c * sizeof(double)));
    SBM__CK(sbm__cuda_sync(ctx)); /* surface asynchronous faults here, not in a later call */

    P->nnz_c = nnz_c;
    P->products = products;
    P->h.pattern_c = C->pattern_id;
    P->h.info.products = products;
    P->h.info.nnzb_c = nnz_c;
    P->h.info.plan_bytes = sizeof *P + (size_t)(nnz_c + 1) * sizeof(int64_t) +
                           (size_t)products * sizeof(uint64_t);
    P->h.info.fast_path = ng == 0; /* every row of C sorted in shared memory */
    *plan = (sbm_csr_plan *)P;
    *Cout = C;
    P = NULL;
    C = NULL;
done:
    sbm__cuda_csr_gemm_plan_destroy((sbm_csr_plan *)P);
    sbm_csr_destroy(C);
    return st;
}

sbm_status sbm__cuda_csr_gemm_plan(sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B,
                                   sbm_csr_plan **plan, sbm_csr **C)
{
    return sbm__cg_plan(ctx, A, B, 0, plan, C);
}

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
