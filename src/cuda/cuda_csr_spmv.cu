/* Scalar CSR SpMV on the GPU, y = alpha*A*x + beta*y, after Bell & Garland, "Efficient Sparse
 * Matrix-Vector Multiplication on CUDA" (../shared/papers/spmv-cuda-bell-garland.txt), plus a
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
 * nnz: how much a row-per-lane kernel pads). See sbm__choose_csr and sbm__choose_format.
 * The context's tuning (sbm_tuning::csr_spmv) forces the kernel of sbm_csr_spmv; its vector and
 * merge fields also pick a compiled configuration, for sbm_csr_spmv and for plans of that CSR
 * format made while it is set (measurements). */
#include "cuda_internal.cuh"

#include <cub/block/block_scan.cuh>

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Device helpers                                                                           */
/* ---------------------------------------------------------------------------------------- */

/* y[i] = alpha*s + beta*y[i], not reading y when beta == 0 (the CPU backend's expression). */
__device__ __forceinline__ void sbm__yset(double *y, int64_t i, double alpha, double s, double beta)
{
    y[i] = beta == 0.0 ? alpha * s : alpha * s + beta * y[i];
}

/* A partial row sum tagged with its row, for the block scan that carries sums between the
 * threads of a tile (reduce-by-key as a scan: equal keys add, a new key restarts). Keys are
 * non-decreasing across threads, which makes the operator associative. */
struct sbm__kv {
    int key;
    double val;
};
struct sbm__kv_op {
    __device__ __forceinline__ sbm__kv operator()(const sbm__kv &a, const sbm__kv &b) const
    {
        sbm__kv r;
        r.key = b.key;
        r.val = a.key == b.key ? a.val + b.val : b.val;
        return r;
    }
};

/* ---------------------------------------------------------------------------------------- */
/* CSR kernels                                                                              */
/* ---------------------------------------------------------------------------------------- */

/* y = alpha*0 + beta*y: a matrix without entries; with alpha = 0 the first pass of COO, which
 * then adds alpha*A*x. */
__global__ void sbm__k_scale_y(int64_t m, double alpha, double beta, double *__restrict__ y)
{
    SBM__GRID_STRIDE(i, m) sbm__yset(y, i, alpha, 0.0, beta);
}

__global__ void __launch_bounds__(256)
    sbm__k_csr_scalar(int64_t m, double alpha, const int64_t *__restrict__ rowptr,
                      const int32_t *__restrict__ colind, const double *__restrict__ val,
                      const double *__restrict__ x, double beta, double *__restrict__ y)
{
    SBM__GRID_STRIDE(i, m)
    {
        const int64_t p1 = __ldg(rowptr + i + 1);
        double s = 0.0;
        for (int64_t p = __ldg(rowptr + i); p < p1; p++) s += __ldg(val + p) * __ldg(x + __ldg(colind + p));
        sbm__yset(y, i, alpha, s, beta);
    }
}

/* W lanes per row, R consecutive rows per group of W lanes. The first entry of each of the R
 * rows is loaded before any is summed (loads in flight: R per lane instead of one); longer rows
 * continue W entries at a time (4W where four or more remain per lane). Lane sums are combined by a butterfly within the W lanes; lane
 * r % W writes row r of the group (a fixed lane: deterministic). */
template <int W, int R>
__global__ void __launch_bounds__(256)
    sbm__k_csr_vector(int64_t m, double alpha, const int64_t *__restrict__ rowptr,
                      const int32_t *__restrict__ colind, const double *__restrict__ val,
                      const double *__restrict__ x, double beta, double *__restrict__ y)
{
    const int lane = threadIdx.x & (W - 1);
    const unsigned mask = W == 32 ? 0xffffffffu : ((1u << W) - 1u) << ((threadIdx.x & 31) & ~(W - 1));
    const int64_t groups = (m + R - 1) / R;
    const int64_t stride = (int64_t)gridDim.x * (blockDim.x / W);
    for (int64_t g = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / W; g < groups; g += stride) {
        const int64_t row0 = g * R;
        int64_t b[R + 1];
#pragma unroll
        for (int r = 0; r <= R; r++) b[r] = __ldg(rowptr + (row0 + r < m ? row0 + r : m));
        int32_t c[R];
        double v[R], s[R];
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int64_t p = b[r] + lane;
            const bool ok = p < b[r + 1];
            c[r] = ok ? __ldg(colind + p) : 0;
            v[r] = ok ? __ldg(val + p) : 0.0;
        }
#pragma unroll
        for (int r = 0; r < R; r++) s[r] = b[r] + lane < b[r + 1] ? v[r] * __ldg(x + c[r]) : 0.0;
#pragma unroll
        for (int r = 0; r < R; r++) {
            int64_t p = b[r] + lane + W;
            /* long rows: four entries per lane loaded before any is summed (the sums stay in
             * entry order), so that each lane has four gathers of x in flight */
            for (; p + 3 * W < b[r + 1]; p += 4 * W) {
                const int32_t c0 = __ldg(colind + p), c1 = __ldg(colind + p + W),
                              c2 = __ldg(colind + p + 2 * W), c3 = __ldg(colind + p + 3 * W);
                const double v0 = __ldg(val + p), v1 = __ldg(val + p + W), v2 = __ldg(val + p + 2 * W),
                             v3 = __ldg(val + p + 3 * W);
                const double x0 = __ldg(x + c0), x1 = __ldg(x + c1), x2 = __ldg(x + c2), x3 = __ldg(x + c3);
                s[r] += v0 * x0;
                s[r] += v1 * x1;
                s[r] += v2 * x2;
                s[r] += v3 * x3;
            }
            for (; p < b[r + 1]; p += W) s[r] += __ldg(val + p) * __ldg(x + __ldg(colind + p));
        }
#pragma unroll
        for (int r = 0; r < R; r++) {
#pragma unroll
            for (int o = W / 2; o > 0; o >>= 1) s[r] += __shfl_xor_sync(mask, s[r], o, W);
        }
#pragma unroll
        for (int r = 0; r < R; r++)
            if (lane == r % W && row0 + r < m) sbm__yset(y, row0 + r, alpha, s[r], beta);
    }
}

/* Merge-path coordinates of every tile start (and the end): the row and entry index where
 * diagonal t*tile_items of the merge of the row ends (rowptr[1..m]) and the entry indices
 * (0..nnz-1) crosses the path (Merrill & Garland, Algorithm 2). A row end sorts before the
 * entry at the same offset. */
__global__ void sbm__k_merge_search(int64_t ntiles, int64_t m, int64_t nnz, int tile_items,
                                    const int64_t *__restrict__ rowptr, int64_t *__restrict__ coord)
{
    SBM__GRID_STRIDE(t, ntiles + 1)
    {
        const int64_t total = m + nnz;
        const int64_t d = t * (int64_t)tile_items < total ? t * (int64_t)tile_items : total;
        int64_t lo = d - nnz > 0 ? d - nnz : 0, hi = d < m ? d : m;
        while (lo < hi) {
            const int64_t mid = (lo + hi) >> 1;
            if (__ldg(rowptr + mid + 1) <= d - mid - 1) lo = mid + 1;
            else hi = mid;
        }
        coord[2 * t] = lo;
        coord[2 * t + 1] = d - lo;
    }
}

template <int NT, int IPT>
struct sbm__merge_smem {
    int32_t rowend[NT * IPT + 1]; /* row ends relative to the tile's first entry (capped) */
    double prod[NT * IPT];        /* products of the tile's entries */
    typename cub::BlockScan<sbm__kv, NT>::TempStorage scan;
};

/* Streaming (evict-first) or read-only loads of the matrix arrays: CS = 1 leaves the caches to
 * x, which the gathers reuse. */
template <int CS, class T>
__device__ __forceinline__ T sbm__ld_stream(const T *p)
{
    return CS ? __ldcs(p) : __ldg(p);
}

/* Loads of a tile's entry indices and values (c, v) and row ends (re), issued together. */
template <int NT, int IPT, int CS>
__device__ __forceinline__ void sbm__merge_load(int64_t m, int64_t r0, int64_t k0, int nrows, int nents,
                                                const int64_t *__restrict__ rowptr,
                                                const int32_t *__restrict__ colind,
                                                const double *__restrict__ val, int32_t c[IPT],
                                                double v[IPT], int64_t re[IPT + 1])
{
#pragma unroll
    for (int j = 0; j < IPT; j++) {
        const int i = j * NT + (int)threadIdx.x;
        c[j] = i < nents ? sbm__ld_stream<CS>(colind + k0 + i) : 0;
        v[j] = i < nents ? sbm__ld_stream<CS>(val + k0 + i) : 0.0;
    }
#pragma unroll
    for (int j = 0; j <= IPT; j++) { /* nrows + 1 <= (IPT + 1) * NT row ends */
        const int i = j * NT + (int)threadIdx.x;
        re[j] = i <= nrows && r0 + i < m ? sbm__ld_stream<CS>(rowptr + r0 + i + 1) - k0 : (int64_t)INT32_MAX;
    }
}

/* The loaded tile into shared memory: products (x gathered now) and capped row ends. */
template <int NT, int IPT>
__device__ __forceinline__ void sbm__merge_stage(sbm__merge_smem<NT, IPT> &sm, int nrows, int nents,
                                                 const double *__restrict__ x, const int32_t c[IPT],
                                                 const double v[IPT], const int64_t re[IPT + 1])
{
#pragma unroll
    for (int j = 0; j < IPT; j++) {
        const int i = j * NT + (int)threadIdx.x;
        if (i < nents) sm.prod[i] = v[j] * __ldg(x + c[j]);
    }
#pragma unroll
    for (int j = 0; j <= IPT; j++) {
        const int i = j * NT + (int)threadIdx.x;
        if (i <= nrows) sm.rowend[i] = (int32_t)(re[j] < INT32_MAX ? re[j] : INT32_MAX);
    }
}

/* Tile t (first row r0, nrows rows ending in it, nents entries) from shared memory: each thread
 * consumes IPT merge items, a block scan by row carries partial sums between threads, rows that
 * end in the tile are written (the tile's share of the row: what earlier tiles hold of its first
 * row comes through the fix-up), and the tile's carry-out is the partial sum of the row it ends
 * in. */
template <int NT, int IPT>
__device__ __forceinline__ void sbm__merge_compute(sbm__merge_smem<NT, IPT> &sm, int64_t t, int64_t r0,
                                                   int nrows, int nents, double alpha, double beta,
                                                   double *__restrict__ y, int64_t *__restrict__ carry_row,
                                                   double *__restrict__ carry_val)
{
    const int items = nrows + nents;
    /* this thread's start on the tile's merge path */
    const int d0 = (int)threadIdx.x * IPT < items ? (int)threadIdx.x * IPT : items;
    const int d1 = d0 + IPT < items ? d0 + IPT : items;
    int lo = d0 - nents > 0 ? d0 - nents : 0, hi = d0 < nrows ? d0 : nrows;
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (sm.rowend[mid] <= d0 - mid - 1) lo = mid + 1;
        else hi = mid;
    }
    int ri = lo, ki = d0 - lo;
    const int rstart = ri;
    double run = 0.0;
    int ek[IPT];
    double ev[IPT];
#pragma unroll
    for (int it = 0; it < IPT; it++) {
        ek[it] = -1;
        ev[it] = 0.0;
        if (ri + ki < d1) {
            if (ki < sm.rowend[ri]) {
                run += sm.prod[ki];
                ki++;
            } else {
                ek[it] = ri;
                ev[it] = run;
                run = 0.0;
                ri++;
            }
        }
    }
    sbm__kv mine, before, total;
    mine.key = ri;
    mine.val = run;
    cub::BlockScan<sbm__kv, NT>(sm.scan).ExclusiveScan(mine, before, sbm__kv_op(), total);
    const double cin = threadIdx.x > 0 ? before.val : 0.0;
#pragma unroll
    for (int it = 0; it < IPT; it++)
        if (ek[it] >= 0) sbm__yset(y, r0 + ek[it], alpha, ev[it] + (ek[it] == rstart ? cin : 0.0), beta);
    if (threadIdx.x == 0) {
        carry_row[t] = r0 + total.key;
        carry_val[t] = total.val;
    }
}

/* Merge-path SpMV, one tile of NT*IPT merge items per CTA iteration. The staging issues all of
 * a thread's loads before it uses any (indices and values, row ends, then the x gathers): one
 * memory round trip per kind instead of one per entry. */
template <int NT, int IPT, int CS>
__global__ void __launch_bounds__(NT)
    sbm__k_csr_merge(int64_t ntiles, int64_t m, const int64_t *__restrict__ coord,
                     const int64_t *__restrict__ rowptr, const int32_t *__restrict__ colind,
                     const double *__restrict__ val, const double *__restrict__ x, double alpha,
                     double beta, double *__restrict__ y, int64_t *__restrict__ carry_row,
                     double *__restrict__ carry_val)
{
    __shared__ sbm__merge_smem<NT, IPT> sm;
    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const int64_t r0 = __ldg(coord + 2 * t), k0 = __ldg(coord + 2 * t + 1);
        const int nrows = (int)(__ldg(coord + 2 * t + 2) - r0);
        const int nents = (int)(__ldg(coord + 2 * t + 3) - k0);
        int32_t c[IPT];
        double v[IPT];
        int64_t re[IPT + 1];
        sbm__merge_load<NT, IPT, CS>(m, r0, k0, nrows, nents, rowptr, colind, val, c, v, re);
        sbm__merge_stage<NT, IPT>(sm, nrows, nents, x, c, v, re);
        __syncthreads();
        sbm__merge_compute<NT, IPT>(sm, t, r0, nrows, nents, alpha, beta, y, carry_row, carry_val);
        __syncthreads(); /* shared memory is refilled for the next tile */
    }
}

/* The same on a persistent grid that loads the next tile's indices, values and row ends into
 * registers while it computes the current one from shared memory. */
template <int NT, int IPT, int CS>
__global__ void __launch_bounds__(NT)
    sbm__k_csr_merge_pf(int64_t ntiles, int64_t m, const int64_t *__restrict__ coord,
                        const int64_t *__restrict__ rowptr, const int32_t *__restrict__ colind,
                        const double *__restrict__ val, const double *__restrict__ x, double alpha,
                        double beta, double *__restrict__ y, int64_t *__restrict__ carry_row,
                        double *__restrict__ carry_val)
{
    __shared__ sbm__merge_smem<NT, IPT> sm;
    int64_t t = blockIdx.x;
    if (t >= ntiles) return;
    int64_t r0 = __ldg(coord + 2 * t), k0 = __ldg(coord + 2 * t + 1);
    int nrows = (int)(__ldg(coord + 2 * t + 2) - r0), nents = (int)(__ldg(coord + 2 * t + 3) - k0);
    int32_t c[IPT];
    double v[IPT];
    int64_t re[IPT + 1];
    sbm__merge_load<NT, IPT, CS>(m, r0, k0, nrows, nents, rowptr, colind, val, c, v, re);
    for (;;) {
        sbm__merge_stage<NT, IPT>(sm, nrows, nents, x, c, v, re);
        __syncthreads();
        const int64_t tr0 = r0, tn = t + gridDim.x;
        const int trows = nrows, tents = nents;
        if (tn < ntiles) {
            r0 = __ldg(coord + 2 * tn);
            k0 = __ldg(coord + 2 * tn + 1);
            nrows = (int)(__ldg(coord + 2 * tn + 2) - r0);
            nents = (int)(__ldg(coord + 2 * tn + 3) - k0);
            sbm__merge_load<NT, IPT, CS>(m, r0, k0, nrows, nents, rowptr, colind, val, c, v, re);
        }
        sbm__merge_compute<NT, IPT>(sm, t, tr0, trows, tents, alpha, beta, y, carry_row, carry_val);
        __syncthreads(); /* shared memory is refilled for the next tile */
        if (tn >= ntiles) break;
        t = tn;
    }
}

/* y[r] += alpha * (carry-outs of row r, in tile order), one thread per run of equal rows. */
__global__ void sbm__k_carry_fixup(int64_t ntiles, int64_t m, const int64_t *__restrict__ crow,
                                   const double *__restrict__ cval, double alpha,
                                   double *__restrict__ y)
{
    SBM__GRID_STRIDE(t, ntiles)
    {
        const int64_t r = crow[t];
        if (r >= m || (t > 0 && crow[t - 1] == r)) continue;
        double s = 0.0;
        for (int64_t u = t; u < ntiles && crow[u] == r; u++) s += cval[u];
        if (s != 0.0) y[r] += alpha * s;
    }
}

/* ---------------------------------------------------------------------------------------- */
/* COO, ELL, DIA kernels                                                                    */
/* ---------------------------------------------------------------------------------------- */

template <int NT, int IPT>
struct sbm__coo_smem {
    int32_t row[NT * IPT + 1]; /* rows of the tile's entries, then the next tile's first */
    double prod[NT * IPT];
    typename cub::BlockScan<sbm__kv, NT>::TempStorage scan;
};

/* y[r] += alpha * (row r of the COO entries), entries sorted by row (m < 2^31): segmented
 * reduction over tiles of NT*IPT entries, IPT consecutive entries per thread; a thread's open
 * row is the row of the first entry after its range, so the scan's keys never decrease. */
template <int NT, int IPT>
__global__ void __launch_bounds__(NT)
    sbm__k_coo(int64_t nnz, int64_t m, const int32_t *__restrict__ row,
               const int32_t *__restrict__ col, const double *__restrict__ val,
               const double *__restrict__ x, double alpha, double *__restrict__ y,
               int64_t *__restrict__ carry_row, double *__restrict__ carry_val)
{
    constexpr int TILE = NT * IPT;
    __shared__ sbm__coo_smem<NT, IPT> sm;
    const int64_t ntiles = (nnz + TILE - 1) / TILE;
    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const int64_t k0 = t * TILE;
        const int cnt = nnz - k0 < TILE ? (int)(nnz - k0) : TILE;
        int32_t c[IPT];
        double v[IPT];
#pragma unroll
        for (int j = 0; j < IPT; j++) {
            const int i = j * NT + (int)threadIdx.x;
            c[j] = i < cnt ? __ldg(col + k0 + i) : 0;
            v[j] = i < cnt ? __ldg(val + k0 + i) : 0.0;
            if (i < cnt) sm.row[i] = __ldg(row + k0 + i);
        }
#pragma unroll
        for (int j = 0; j < IPT; j++) {
            const int i = j * NT + (int)threadIdx.x;
            if (i < cnt) sm.prod[i] = v[j] * __ldg(x + c[j]);
        }
        if (threadIdx.x == 0) sm.row[cnt] = k0 + cnt < nnz ? __ldg(row + k0 + cnt) : (int32_t)m;
        __syncthreads();
        const int i0 = (int)threadIdx.x * IPT < cnt ? (int)threadIdx.x * IPT : cnt;
        const int i1 = i0 + IPT < cnt ? i0 + IPT : cnt;
        const int first = sm.row[i0];
        double run = 0.0;
        int ek[IPT];
        double ev[IPT];
#pragma unroll
        for (int it = 0; it < IPT; it++) {
            const int i = i0 + it;
            ek[it] = -1;
            ev[it] = 0.0;
            if (i < i1) {
                run += sm.prod[i];
                if (sm.row[i + 1] != sm.row[i]) {
                    ek[it] = sm.row[i];
                    ev[it] = run;
                    run = 0.0;
                }
            }
        }
        sbm__kv mine, before, total;
        mine.key = sm.row[i1];
        mine.val = run;
        cub::BlockScan<sbm__kv, NT>(sm.scan).ExclusiveScan(mine, before, sbm__kv_op(), total);
        const double cin = threadIdx.x > 0 ? before.val : 0.0;
#pragma unroll
        for (int it = 0; it < IPT; it++)
            if (ek[it] >= 0) y[ek[it]] += alpha * (ev[it] + (ek[it] == first ? cin : 0.0));
        if (threadIdx.x == 0) {
            carry_row[t] = total.key;
            carry_val[t] = total.val;
        }
        __syncthreads();
    }
}

/* ELL, column-major with leading dimension ld; a row's padding (column -1) is at its end. */
__global__ void __launch_bounds__(256)
    sbm__k_ell(int64_t m, int64_t K, int64_t ld, const int32_t *__restrict__ col,
               const double *__restrict__ val, const double *__restrict__ x, double alpha,
               double beta, double *__restrict__ y)
{
    SBM__GRID_STRIDE(i, m)
    {
        double s = 0.0;
        for (int64_t k = 0; k < K; k += 4) {
            int32_t c[4];
            double v[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const bool in = k + u < K;
                c[u] = in ? __ldg(col + (k + u) * ld + i) : -1;
                v[u] = in ? __ldg(val + (k + u) * ld + i) : 0.0;
            }
#pragma unroll
            for (int u = 0; u < 4; u++)
                if (c[u] >= 0) s += v[u] * __ldg(x + c[u]);
            if (c[3] < 0) break;
        }
        sbm__yset(y, i, alpha, s, beta);
    }
}

/* DIA: diagonal d (offset off[d] = column - row, increasing) stored column-major, data[d*ld+i]
 * for row i. x is loaded for every slot inside the matrix (independent of the value, so the
 * loads of all diagonals are in flight together); a slot holding 0 adds nothing. */
__global__ void __launch_bounds__(256)
    sbm__k_dia(int64_t m, int64_t n, int64_t nd, int64_t ld, const int64_t *__restrict__ off,
               const double *__restrict__ data, const double *__restrict__ x, double alpha,
               double beta, double *__restrict__ y)
{
    SBM__GRID_STRIDE(i, m)
    {
        double s = 0.0;
#pragma unroll 4
        for (int64_t d = 0; d < nd; d++) {
            const int64_t j = i + __ldg(off + d);
            if (j >= 0 && j < n) {
                const double v = __ldg(data + d * ld + i), xj = __ldg(x + j);
                if (v != 0.0) s += v * xj;
            }
        }
        sbm__yset(y, i, alpha, s, beta);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Statistics and conversions                                                               */
/* ---------------------------------------------------------------------------------------- */

/* out[0] = longest row, out[1] = sum over aligned groups of 32 rows of 32 x their longest row.
 * Grid-stride over m rounded up to 32 with a stride that is a multiple of 32, so every warp
 * covers one whole group per step. */
__global__ void __launch_bounds__(256)
    sbm__k_row_stats(int64_t m, const int64_t *__restrict__ rowptr, unsigned long long *out)
{
    const int64_t mpad = (m + 31) & ~(int64_t)31;
    unsigned long long mx = 0, slots = 0;
    SBM__GRID_STRIDE(i, mpad)
    {
        unsigned long long len = i < m ? (unsigned long long)(__ldg(rowptr + i + 1) - __ldg(rowptr + i)) : 0ull;
        for (int o = 16; o > 0; o >>= 1) {
            const unsigned long long other = __shfl_xor_sync(0xffffffffu, len, o);
            len = other > len ? other : len;
        }
        mx = len > mx ? len : mx;
        /* the rows that exist in this warp (all 32 but in the last, partial warp) */
        slots += (unsigned long long)__popc(__ballot_sync(0xffffffffu, i < m)) * len;
    }
    /* every lane holds the same warp totals */
    if ((threadIdx.x & 31) == 0) {
        atomicMax(out, mx);
        atomicAdd(out + 1, slots);
    }
}

/* Thresholds for one pass of the HYB width search. */
typedef struct sbm__thresholds {
    int64_t th[32]; /* increasing */
    int n;
} sbm__thresholds;

/* counts[q] += rows whose length is >= th[q] but < th[q+1] (the last: >= th[n-1]). */
__global__ void __launch_bounds__(256)
    sbm__k_count_lengths(int64_t m, const int64_t *__restrict__ rowptr, sbm__thresholds t,
                         unsigned long long *counts)
{
    __shared__ unsigned long long bins[32];
    if (threadIdx.x < 32) bins[threadIdx.x] = 0;
    __syncthreads();
    SBM__GRID_STRIDE(i, m)
    {
        const int64_t len = __ldg(rowptr + i + 1) - __ldg(rowptr + i);
        int b = 0;
        while (b < t.n && t.th[b] <= len) b++;
        if (b > 0) atomicAdd(&bins[b - 1], 1ull);
    }
    __syncthreads();
    if (threadIdx.x < t.n && bins[threadIdx.x]) atomicAdd(counts + threadIdx.x, bins[threadIdx.x]);
}

/* COO row index of every entry (one thread per row). */
__global__ void sbm__k_coo_rows(int64_t m, const int64_t *__restrict__ rowptr, int32_t *__restrict__ row)
{
    SBM__GRID_STRIDE(i, m)
    {
        const int64_t p1 = rowptr[i + 1];
        for (int64_t p = rowptr[i]; p < p1; p++) row[p] = (int32_t)i;
    }
}

/* Entries beyond the ELL width K of each row (HYB's COO part), for the offsets scan. */
__global__ void sbm__k_hyb_counts(int64_t m, int64_t K, const int64_t *__restrict__ rowptr,
                                  int64_t *__restrict__ cnt)
{
    SBM__GRID_STRIDE(i, m)
    {
        const int64_t len = rowptr[i + 1] - rowptr[i];
        cnt[i] = len > K ? len - K : 0;
    }
}

/* The first K entries of each row into ELL slots (k*ld + i), the rest (coo_off != NULL) into
 * COO from coo_off[i] on. Index arrays may be NULL (values-only update). Bounds are checked
 * against the plan's sizes, so a matrix whose pattern differs cannot write outside them. */
__global__ void sbm__k_ell_fill(int64_t m, int64_t K, int64_t ld, const int64_t *__restrict__ rowptr,
                                const int32_t *__restrict__ colind, const double *__restrict__ values,
                                int32_t *__restrict__ ell_col, double *__restrict__ ell_val,
                                const int64_t *__restrict__ coo_off, int64_t coo_nnz,
                                int32_t *__restrict__ coo_row, int32_t *__restrict__ coo_col,
                                double *__restrict__ coo_val)
{
    SBM__GRID_STRIDE(i, m)
    {
        const int64_t p0 = rowptr[i], p1 = rowptr[i + 1];
        const int64_t e = p1 - p0 < K ? p1 : p0 + K;
        for (int64_t p = p0; p < e; p++) {
            if (ell_col) ell_col[(p - p0) * ld + i] = colind[p];
            ell_val[(p - p0) * ld + i] = values[p];
        }
        if (!coo_off) continue;
        int64_t q = coo_off[i];
        for (int64_t p = e; p < p1 && q < coo_nnz; p++, q++) {
            if (coo_row) {
                coo_row[q] = (int32_t)i;
                coo_col[q] = colind[p];
            }
            coo_val[q] = values[p];
        }
    }
}

/* flag[j - i + m - 1] = 1 for every entry (i, j) (plain stores of the same value). */
__global__ void sbm__k_dia_flags(int64_t m, const int64_t *__restrict__ rowptr,
                                 const int32_t *__restrict__ colind, int64_t *__restrict__ flag)
{
    SBM__GRID_STRIDE(i, m)
    {
        const int64_t p1 = rowptr[i + 1];
        for (int64_t p = rowptr[i]; p < p1; p++) flag[(int64_t)colind[p] - i + m - 1] = 1;
    }
}

/* Offsets of the occupied diagonals from the exclusive scan idx of the flags (span + 1 entries). */
__global__ void sbm__k_dia_offsets(int64_t span, int64_t m, const int64_t *__restrict__ idx,
                                   int64_t *__restrict__ off)
{
    SBM__GRID_STRIDE(s, span)
    {
        if (idx[s + 1] != idx[s]) off[idx[s]] = s - (m - 1);
    }
}

/* Entry (i, j) into slot d*ld + i of its diagonal d (binary search of the sorted offsets). */
__global__ void sbm__k_dia_fill(int64_t m, int64_t nd, int64_t ld, const int64_t *__restrict__ off,
                                const int64_t *__restrict__ rowptr, const int32_t *__restrict__ colind,
                                const double *__restrict__ values, double *__restrict__ data)
{
    SBM__GRID_STRIDE(i, m)
    {
        const int64_t p1 = rowptr[i + 1];
        for (int64_t p = rowptr[i]; p < p1; p++) {
            const int64_t o = (int64_t)colind[p] - i;
            const int64_t d = sbm__lower_bound(off, 0, nd, o);
            if (d < nd && off[d] == o) data[d * ld + i] = values[p];
        }
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Kernel configurations and choice                                                         */
/* ---------------------------------------------------------------------------------------- */

enum { SBM__CSR_SCALAR = 0, SBM__CSR_VECTOR = 1, SBM__CSR_MERGE = 2 };

/* Merge-path tile shapes compiled (SBM__CSR_MERGE_CONFIGS) (threads, items per thread, streaming loads of A, persistent
 * grid loading ahead), and the default. H100, ms per SpMV (run of 2026-11-22 13:50): R-MAT
 * scale 21 128x7 0.1893, 256x7 0.1881, 256x5 0.1871, 128x7 streaming 0.1854, 256x7 streaming
 * 0.1835 (cuSPARSE 0.1956); random rows of 1..15 entries 0.1929 / 0.1919 / 0.1907 / 0.1842 /
 * 0.1834 (cuSPARSE 0.1695). Loading ahead on a persistent grid was slower (R-MAT 128x7 0.1909,
 * 256x7 0.1941, 128x5 0.1903; its 72-123 registers cost more resident CTAs than the overlap
 * gains); those stay selectable for measurements. */
#define SBM__MERGE_CONFIGS SBM__CSR_MERGE_CONFIGS /* the list is in sbm_internal.h */
#define SBM__MERGE_DEFAULT SBM__CSR_MERGE_DEFAULT
#define SBM__COO_NT 128
#define SBM__COO_IPT 7

typedef struct sbm__csr_kernel {
    int kind;  /* SBM__CSR_* */
    int w, r;  /* vector: lanes per row, rows per lane group */
    int cfg;   /* merge: index into SBM__MERGE_CONFIGS */
} sbm__csr_kernel;

static int sbm__merge_items(int cfg)
{
#define SBM_X_(I, NT, IPT, CS, PF) if (cfg == (I)) return (NT) * (IPT);
    SBM__MERGE_CONFIGS(SBM_X_)
#undef SBM_X_
    return 0;
}

/* Rows per lane group for W lanes: with 2 or 4 lanes, four rows per group keep loads in
 * flight (H100, rows of 0..3 entries: 4 lanes x 4 rows 0.362 ms, x 1 row 0.387); from 8 lanes
 * one row (random rows of 1..15 entries: 8 x 1 0.186 ms, 8 x 4 0.209). */
static int sbm__vector_rows(int w) { return w <= 4 ? 4 : 1; }

/* Lanes per row from the mean row length (CUSP's csr_vector rule: the power of two >= mean). */
static int sbm__vector_width(int64_t m, int64_t nnz)
{
    const double mean = m > 0 ? (double)nnz / (double)m : 0.0;
    int w = 2;
    while (w < 32 && (double)w < mean) w *= 2;
    return w;
}

/* The CSR kernel from the statistics (warp fill = warp_slots / nnz: how much a row-per-lane
 * kernel pads the work). Merge where rows are irregular (fill > 2), a row is so long that one
 * group of lanes would dominate the run (> 16384 entries), or there are too few rows to fill
 * the device (fewer than 16 lane groups of 32 per SM) while there is work enough for it; with
 * 34 warps per SM vector still won (BA Schur complement expanded, 4500 rows of ~2800 entries:
 * vector 70% of copy bandwidth, merge 63%). Scalar (thread per row) for short regular rows
 * (fill <= 1.25, mean <= 16): on an H100 it streams them at 98% of copy bandwidth on 2D Poisson
 * (vector 4x4 92%, 8x4 82%; merge 67%) and 90% on 3D Poisson. Otherwise vector. */
static sbm__csr_kernel sbm__choose_csr(sbm_ctx *ctx, const sbm__cuda_scache *e)
{
    sbm__csr_kernel k = {SBM__CSR_VECTOR, 2, 4, SBM__MERGE_DEFAULT};
    const int sms = sbm__cuda_st(ctx)->prop.multiProcessorCount;
    k.w = sbm__vector_width(e->m, e->nnz);
    k.r = sbm__vector_rows(k.w);
    const double fill = e->nnz > 0 ? (double)e->warp_slots / (double)e->nnz : 1.0;
    const double mean = e->m > 0 ? (double)e->nnz / (double)e->m : 0.0;
    const int few_rows = (double)e->m * k.w < 512.0 * sms && e->nnz > 4096LL * sms;
    if (mean > 32.0 && mean <= 64.0) {
        /* rows of 33-64 entries: 16 lanes and two rows per group keep 4-8 loads in flight per
         * lane where 32 lanes had 1-2 (H100, BA W^T expanded, 300000 rows of 54: 32x1 69% of
         * copy bandwidth, 16x1 76%, 16x2 82%, 16x4 79%, 8x1 77%) */
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
static int sbm__csr_forced(const sbm_ctx *ctx, int64_t m, int64_t nnz, sbm__csr_kernel *k)
{
    const sbm_tuning *t = &ctx->tuning;
    switch (t->csr_spmv) {
    case SBM_TUNE_CSR_SPMV_SCALAR:
        k->kind = SBM__CSR_SCALAR;
        return 1;
    case SBM_TUNE_CSR_SPMV_VECTOR:
        k->kind = SBM__CSR_VECTOR;
        k->w = t->csr_spmv_vector_width ? t->csr_spmv_vector_width : sbm__vector_width(m, nnz);
        k->r = t->csr_spmv_vector_rows ? t->csr_spmv_vector_rows : sbm__vector_rows(k->w);
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

/* Longest row and warp slots of a pattern (one pass over rowptr and a download). */
static sbm_status sbm__row_stats(sbm_ctx *ctx, int64_t m, const int64_t *rowptr, int64_t *max_row,
                                 int64_t *warp_slots)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    unsigned long long *d = NULL, h[2] = {0, 0};
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_B, sizeof h, (void **)&d));
    SBM__CU(ctx, cudaMemsetAsync(d, 0, sizeof h, s), "clearing the row statistics");
    sbm__k_row_stats<<<sbm__grid((m + 31) & ~(int64_t)31, 256), 256, 0, s>>>(m, rowptr, d);
    SBM__LAUNCHED(ctx, "the CSR row statistics kernel");
    SBM__CK(sbm__cuda_d2h(ctx, h, d, sizeof h));
    *max_row = (int64_t)h[0];
    *warp_slots = (int64_t)h[1];
done:
    return st;
}

/* The cache entry of A's pattern, computing its statistics on a miss. */
static sbm_status sbm__csr_stats(sbm_ctx *ctx, const sbm_csr *A, sbm__cuda_scache **out)
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
    SBM__TRY(sbm__row_stats(ctx, A->m, A->rowptr, &max_row, &slots));
    /* the evicted split may still be read by queued work (sbm__row_stats waited for the stream) */
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

/* Merge-path tile coordinates (2 per tile start and the end) into *coord, allocated with the
 * context's allocator. */
static sbm_status sbm__merge_split(sbm_ctx *ctx, int64_t m, int64_t nnz, const int64_t *rowptr,
                                   int tile_items, int64_t **coord, int64_t *ntiles)
{
    sbm_status st = SBM_SUCCESS;
    const int64_t nt = (m + nnz + tile_items - 1) / tile_items;
    int64_t *c = (int64_t *)sbm__alloc(ctx, (size_t)(nt + 1) * 2 * sizeof(int64_t), "the merge-path split");
    *coord = NULL;
    *ntiles = 0;
    if (!c) return SBM_ERR_OUT_OF_MEMORY;
    sbm__k_merge_search<<<sbm__grid(nt + 1, 256), 256, 0, sbm__cuda_stream(ctx)>>>(nt, m, nnz, tile_items,
                                                                                rowptr, c);
    SBM__LAUNCHED(ctx, "the merge-path search kernel");
    *coord = c;
    *ntiles = nt;
    c = NULL;
done:
    sbm__free(ctx, c);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Launchers                                                                                */
/* ---------------------------------------------------------------------------------------- */

/* Carry-out arrays of ntiles tiles from the pool. */
static sbm_status sbm__carries(sbm_ctx *ctx, int64_t ntiles, int64_t **crow, double **cval)
{
    sbm__carve cv = {0};
    const size_t o_row = sbm__carve_add(&cv, (size_t)ntiles * sizeof(int64_t));
    const size_t o_val = sbm__carve_add(&cv, (size_t)ntiles * sizeof(double));
    char *base = NULL;
    SBM__TRY(sbm__cuda_workspace(ctx, SBM__WS_OP_A, cv.total, (void **)&base));
    *crow = (int64_t *)(base + o_row);
    *cval = (double *)(base + o_val);
    return SBM_SUCCESS;
}

/* At most this many CTAs for the tile loops (grid-stride beyond). */
static unsigned sbm__tile_grid(int64_t ntiles)
{
    return (unsigned)(ntiles < (int64_t)INT_MAX ? (ntiles > 0 ? ntiles : 1) : INT_MAX);
}

static sbm_status sbm__launch_csr(sbm_ctx *ctx, sbm__csr_kernel k, int64_t m, const int64_t *rowptr,
                                  const int32_t *colind, const double *values, const int64_t *tiles,
                                  int64_t ntiles, double alpha, const double *x, double beta, double *y)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    if (k.kind == SBM__CSR_SCALAR) {
        sbm__k_csr_scalar<<<sbm__grid(m, 256), 256, 0, s>>>(m, alpha, rowptr, colind, values, x, beta, y);
        SBM__LAUNCHED(ctx, "the CSR scalar SpMV kernel");
    } else if (k.kind == SBM__CSR_VECTOR) {
        const int64_t threads = (m + k.r - 1) / k.r * k.w;
#define SBM_X_(W, R)                                                                             \
    if (k.w == (W) && k.r == (R))                                                                \
        sbm__k_csr_vector<W, R><<<sbm__grid(threads, 256), 256, 0, s>>>(m, alpha, rowptr, colind, \
                                                                       values, x, beta, y);
#define SBM_W_(W) SBM_X_(W, 1) SBM_X_(W, 2) SBM_X_(W, 4)
        SBM_W_(2) SBM_W_(4) SBM_W_(8) SBM_W_(16) SBM_W_(32)
#undef SBM_W_
#undef SBM_X_
        SBM__LAUNCHED(ctx, "the CSR vector SpMV kernel");
    } else {
        int64_t *crow = NULL;
        double *cval = NULL;
        const int sms = sbm__cuda_st(ctx)->prop.multiProcessorCount;
        SBM__CK(sbm__carries(ctx, ntiles, &crow, &cval));
#define SBM_X_(I, NT, IPT, CS, PF)                                                               \
    if (k.cfg == (I)) {                                                                          \
        unsigned grid = sbm__tile_grid(ntiles);                                                  \
        if (PF) {                                                                                \
            int per_sm = 0;                                                                      \
            SBM__CU(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(                          \
                             &per_sm, sbm__k_csr_merge_pf<NT, IPT, CS>, NT, 0),                  \
                    "the merge-path occupancy query");                                           \
            const int64_t resident = (int64_t)(per_sm > 0 ? per_sm : 1) * sms;                   \
            if ((int64_t)grid > resident) grid = (unsigned)resident;                             \
            sbm__k_csr_merge_pf<NT, IPT, CS><<<grid, NT, 0, s>>>(ntiles, m, tiles, rowptr,       \
                                                                 colind, values, x, alpha, beta, \
                                                                 y, crow, cval);                 \
        } else {                                                                                 \
            sbm__k_csr_merge<NT, IPT, CS><<<grid, NT, 0, s>>>(ntiles, m, tiles, rowptr, colind,  \
                                                              values, x, alpha, beta, y, crow,   \
                                                              cval);                             \
        }                                                                                        \
    }
        SBM__MERGE_CONFIGS(SBM_X_)
#undef SBM_X_
        SBM__LAUNCHED(ctx, "the CSR merge-path SpMV kernel");
        sbm__k_carry_fixup<<<sbm__grid(ntiles, 256), 256, 0, s>>>(ntiles, m, crow, cval, alpha, y);
        SBM__LAUNCHED(ctx, "the merge-path carry fix-up kernel");
    }
done:
    return st;
}

/* y += alpha * (COO entries) after y was set (scaled by beta, or by the ELL part of HYB). */
static sbm_status sbm__launch_coo_add(sbm_ctx *ctx, int64_t m, int64_t nnz, const int32_t *row,
                                      const int32_t *col, const double *val, double alpha,
                                      const double *x, double *y)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    const int64_t tile = (int64_t)SBM__COO_NT * SBM__COO_IPT;
    const int64_t ntiles = (nnz + tile - 1) / tile;
    int64_t *crow = NULL;
    double *cval = NULL;
    if (nnz == 0) return SBM_SUCCESS;
    SBM__CK(sbm__carries(ctx, ntiles, &crow, &cval));
    sbm__k_coo<SBM__COO_NT, SBM__COO_IPT><<<sbm__tile_grid(ntiles), SBM__COO_NT, 0, s>>>(
        nnz, m, row, col, val, x, alpha, y, crow, cval);
    SBM__LAUNCHED(ctx, "the COO SpMV kernel");
    sbm__k_carry_fixup<<<sbm__grid(ntiles, 256), 256, 0, s>>>(ntiles, m, crow, cval, alpha, y);
    SBM__LAUNCHED(ctx, "the COO carry fix-up kernel");
done:
    return st;
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
        sbm__k_scale_y<<<sbm__grid(A->m, 256), 256, 0, sbm__cuda_stream(ctx)>>>(A->m, alpha, beta, y);
        SBM__LAUNCHED(ctx, "the SpMV scaling kernel");
        goto done;
    }
    SBM__CK(sbm__csr_stats(ctx, A, &e));
    k = sbm__choose_csr(ctx, e);
    (void)sbm__csr_forced(ctx, A->m, A->nnz, &k);
    if (k.kind == SBM__CSR_MERGE && (!e->tiles || e->tile_items != sbm__merge_items(k.cfg))) {
        int64_t *coord = NULL, nt = 0;
        SBM__CK(sbm__merge_split(ctx, A->m, A->nnz, A->rowptr, sbm__merge_items(k.cfg), &coord, &nt));
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
        e->tile_items = sbm__merge_items(k.cfg);
        e->allocator = ctx->allocator;
    }
    SBM__CK(sbm__launch_csr(ctx, k, A->m, A->rowptr, A->colind, A->values, e->tiles, e->ntiles,
                            alpha, x, beta, y));
done:
    return st;
}

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

void sbm__cuda_spmv_plan_destroy(sbm_spmv_plan *plan)
{
    sbm__cuda_spmv_plan *P = (sbm__cuda_spmv_plan *)plan;
    if (!P) return;
    int cur = -1;
    if (cudaGetDevice(&cur) == cudaSuccess && cur != P->b.h.device) cudaSetDevice(P->b.h.device);
    void *arrays[] = {P->rowptr,  P->colind,  P->values,  P->tiles,   P->coo_row, P->coo_col,
                      P->coo_val, P->ell_col, P->ell_val, P->dia_off, P->dia_val};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        if (arrays[i]) P->al.free(P->al.user, arrays[i]);
    (void)cudaGetLastError();
    free(P);
}

/* count elements of size bytes each in device memory, or an overflow / out-of-memory status. */
static sbm_status sbm__plan_alloc(sbm_ctx *ctx, int64_t count, size_t size, const char *what, void **p)
{
    int ok = 1;
    *p = NULL;
    const size_t bytes = sbm__mul_size(ctx, (size_t)(count > 0 ? count : 0), size, what, &ok);
    if (!ok) return SBM_ERR_OVERFLOW;
    *p = sbm__alloc(ctx, bytes, what);
    return *p ? SBM_SUCCESS : SBM_ERR_OUT_OF_MEMORY;
}

/* Rows rounded up to 32, the leading dimension of the column-major ELL and DIA arrays. */
static int64_t sbm__pad32(int64_t m) { return (m + 31) & ~(int64_t)31; }

static sbm_status sbm__check_rows32(sbm_ctx *ctx, const sbm_csr *A, sbm_spmv_format f)
{
    if (A->m > INT32_MAX)
        return sbm__error(ctx, SBM_ERR_OVERFLOW,
                          "argument format: %s stores 32-bit row indices; A has %" PRId64 " rows",
                          sbm_spmv_format_name(f), A->m);
    return SBM_SUCCESS;
}

/* HYB's ELL width K (section 3.5): the largest K such that at least a third of the rows have
 * K or more entries, by a search over thresholds (32 per pass over the row lengths). */
static sbm_status sbm__hyb_width(sbm_ctx *ctx, const sbm_csr *A, int64_t max_row, int64_t *K)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    unsigned long long *d = NULL, h[32];
    int64_t lo = 0, hi = max_row + 1; /* 3*count(len >= lo) >= m holds; at hi it does not */
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_B, sizeof h, (void **)&d));
    while (hi - lo > 1) {
        sbm__thresholds t;
        const int64_t gap = hi - lo - 1;
        t.n = gap < 32 ? (int)gap : 32;
        for (int q = 0; q < t.n; q++) t.th[q] = lo + 1 + (int64_t)q * gap / t.n;
        SBM__CU(ctx, cudaMemsetAsync(d, 0, sizeof h, s), "clearing the row-length counts");
        sbm__k_count_lengths<<<sbm__grid(A->m, 256), 256, 0, s>>>(A->m, A->rowptr, t, d);
        SBM__LAUNCHED(ctx, "the row-length count kernel");
        SBM__CK(sbm__cuda_d2h(ctx, h, d, sizeof h));
        unsigned long long ge = 0;
        int64_t new_lo = lo, new_hi = hi;
        for (int q = t.n - 1; q >= 0; q--) {
            ge += h[q]; /* rows with length >= th[q] */
            if (3.0 * (double)ge >= (double)A->m) {
                new_lo = t.th[q];
                break;
            }
            new_hi = t.th[q];
        }
        lo = new_lo;
        hi = new_hi;
    }
    *K = lo;
done:
    return st;
}

/* Occupied diagonals of A: their number, and in *idx_out (pool slot OP_A, span + 1 entries) the
 * exclusive scan of the flags of the diagonals j - i + m - 1 (the index of each occupied one). */
static sbm_status sbm__dia_scan(sbm_ctx *ctx, const sbm_csr *A, int64_t *ndiag, int64_t **idx_out)
{
    sbm_status st = SBM_SUCCESS;
    const int64_t span = A->m + A->n - 1;
    int64_t *idx = NULL;
    *ndiag = 0;
    *idx_out = NULL;
    if (A->nnz == 0) return SBM_SUCCESS;
    int ok = 1;
    const size_t bytes = sbm__mul_size(ctx, (size_t)span + 1, sizeof(int64_t), "the diagonal flags", &ok);
    if (!ok) return SBM_ERR_OVERFLOW;
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, bytes, (void **)&idx));
    SBM__CK(sbm__cuda_zero(ctx, idx, bytes));
    sbm__k_dia_flags<<<sbm__grid(A->m, 256), 256, 0, sbm__cuda_stream(ctx)>>>(A->m, A->rowptr, A->colind, idx);
    SBM__LAUNCHED(ctx, "the diagonal flag kernel");
    SBM__CK(sbm__cuda_scan_i64(ctx, idx, idx, span + 1));
    SBM__CK(sbm__cuda_d2h(ctx, ndiag, idx + span, sizeof(int64_t)));
    *idx_out = idx;
done:
    return st;
}

/* The format AUTO stands for: on matrices with rows enough to fill the device, DIA when the
 * diagonals pad A by at most 25% (no column indices to read), else ELL when the longest row pads
 * it by at most 25% (no row pointers); otherwise the CSR kernel sbm_csr_spmv would run. */
static sbm_status sbm__choose_format(sbm_ctx *ctx, const sbm_csr *A, const sbm__cuda_scache *e,
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
    SBM__TRY(sbm__dia_scan(ctx, A, &nd, &idx));
    if ((double)nd * (double)A->m <= 1.25 * nnz) *f = SBM_SPMV_DIA;
    else if ((double)e->max_row * (double)A->m <= 1.25 * nnz) *f = SBM_SPMV_ELL;
    return SBM_SUCCESS;
}

/* Fill P's arrays for format f from A. */
static sbm_status sbm__plan_build(sbm_ctx *ctx, sbm__cuda_spmv_plan *P, const sbm_csr *A,
                                  const sbm__cuda_scache *e)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    const int64_t m = A->m, nnz = A->nnz;
    const sbm_spmv_format f = P->b.format;
    if (f == SBM_SPMV_CSR_SCALAR || f == SBM_SPMV_CSR_VECTOR || f == SBM_SPMV_CSR_MERGE) {
        SBM__CK(sbm__plan_alloc(ctx, m + 1, sizeof(int64_t), "the plan's row pointers", (void **)&P->rowptr));
        SBM__CK(sbm__plan_alloc(ctx, nnz, sizeof(int32_t), "the plan's column indices", (void **)&P->colind));
        SBM__CK(sbm__plan_alloc(ctx, nnz, sizeof(double), "the plan's values", (void **)&P->values));
        SBM__CK(sbm__cuda_d2d(ctx, P->rowptr, A->rowptr, (size_t)(m + 1) * sizeof(int64_t)));
        SBM__CK(sbm__cuda_d2d(ctx, P->colind, A->colind, (size_t)nnz * sizeof(int32_t)));
        SBM__CK(sbm__cuda_d2d(ctx, P->values, A->values, (size_t)nnz * sizeof(double)));
        if (f == SBM_SPMV_CSR_MERGE)
            SBM__CK(sbm__merge_split(ctx, m, nnz, P->rowptr, sbm__merge_items(P->k.cfg), &P->tiles, &P->ntiles));
    } else if (f == SBM_SPMV_COO) {
        SBM__CK(sbm__check_rows32(ctx, A, f));
        P->coo_nnz = nnz;
        SBM__CK(sbm__plan_alloc(ctx, nnz, sizeof(int32_t), "the plan's COO rows", (void **)&P->coo_row));
        SBM__CK(sbm__plan_alloc(ctx, nnz, sizeof(int32_t), "the plan's COO columns", (void **)&P->coo_col));
        SBM__CK(sbm__plan_alloc(ctx, nnz, sizeof(double), "the plan's COO values", (void **)&P->coo_val));
        sbm__k_coo_rows<<<sbm__grid(m, 256), 256, 0, s>>>(m, A->rowptr, P->coo_row);
        SBM__LAUNCHED(ctx, "the COO row kernel");
        SBM__CK(sbm__cuda_d2d(ctx, P->coo_col, A->colind, (size_t)nnz * sizeof(int32_t)));
        SBM__CK(sbm__cuda_d2d(ctx, P->coo_val, A->values, (size_t)nnz * sizeof(double)));
    } else if (f == SBM_SPMV_ELL || f == SBM_SPMV_HYB) {
        int64_t *off = NULL;
        if (f == SBM_SPMV_ELL) {
            SBM__CK(sbm__spmv_check_fill(ctx, f, m, nnz, e->max_row));
            P->ell_k = e->max_row;
        } else {
            SBM__CK(sbm__check_rows32(ctx, A, f));
            SBM__CK(sbm__hyb_width(ctx, A, e->max_row, &P->ell_k));
        }
        P->ell_ld = sbm__pad32(m);
        int ok = 1;
        const int64_t slots = (int64_t)sbm__mul_size(ctx, (size_t)P->ell_ld, (size_t)P->ell_k, "the ELL slots", &ok);
        if (!ok) {
            st = SBM_ERR_OVERFLOW;
            goto done;
        }
        SBM__CK(sbm__plan_alloc(ctx, slots, sizeof(int32_t), "the plan's ELL columns", (void **)&P->ell_col));
        SBM__CK(sbm__plan_alloc(ctx, slots, sizeof(double), "the plan's ELL values", (void **)&P->ell_val));
        SBM__CU(ctx, cudaMemsetAsync(P->ell_col, 0xFF, (size_t)slots * sizeof(int32_t), s), "clearing the ELL columns");
        SBM__CK(sbm__cuda_zero(ctx, P->ell_val, (size_t)slots * sizeof(double)));
        if (f == SBM_SPMV_HYB) {
            /* entries beyond K per row, scanned into COO offsets (m + 1, the last one the total) */
            SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, (size_t)(m + 1) * sizeof(int64_t), (void **)&off));
            sbm__k_hyb_counts<<<sbm__grid(m, 256), 256, 0, s>>>(m, P->ell_k, A->rowptr, off);
            SBM__LAUNCHED(ctx, "the HYB count kernel");
            SBM__CK(sbm__cuda_zero(ctx, off + m, sizeof(int64_t)));
            SBM__CK(sbm__cuda_scan_i64(ctx, off, off, m + 1));
            SBM__CK(sbm__cuda_d2h(ctx, &P->coo_nnz, off + m, sizeof(int64_t)));
            SBM__CK(sbm__plan_alloc(ctx, P->coo_nnz, sizeof(int32_t), "the plan's COO rows", (void **)&P->coo_row));
            SBM__CK(sbm__plan_alloc(ctx, P->coo_nnz, sizeof(int32_t), "the plan's COO columns", (void **)&P->coo_col));
            SBM__CK(sbm__plan_alloc(ctx, P->coo_nnz, sizeof(double), "the plan's COO values", (void **)&P->coo_val));
        }
        sbm__k_ell_fill<<<sbm__grid(m, 256), 256, 0, s>>>(m, P->ell_k, P->ell_ld, A->rowptr, A->colind, A->values,
                                                          P->ell_col, P->ell_val, off, P->coo_nnz, P->coo_row,
                                                          P->coo_col, P->coo_val);
        SBM__LAUNCHED(ctx, "the ELL fill kernel");
    } else { /* DIA */
        int64_t *idx = NULL;
        SBM__CK(sbm__dia_scan(ctx, A, &P->ndiag, &idx));
        SBM__CK(sbm__spmv_check_fill(ctx, f, m, nnz, P->ndiag));
        P->dia_ld = sbm__pad32(m);
        int ok = 1;
        const int64_t slots = (int64_t)sbm__mul_size(ctx, (size_t)P->dia_ld, (size_t)P->ndiag, "the DIA slots", &ok);
        if (!ok) {
            st = SBM_ERR_OVERFLOW;
            goto done;
        }
        SBM__CK(sbm__plan_alloc(ctx, P->ndiag, sizeof(int64_t), "the plan's diagonal offsets", (void **)&P->dia_off));
        SBM__CK(sbm__plan_alloc(ctx, slots, sizeof(double), "the plan's diagonals", (void **)&P->dia_val));
        SBM__CK(sbm__cuda_zero(ctx, P->dia_val, (size_t)slots * sizeof(double)));
        if (P->ndiag > 0) {
            const int64_t span = m + A->n - 1;
            sbm__k_dia_offsets<<<sbm__grid(span, 256), 256, 0, s>>>(span, m, idx, P->dia_off);
            SBM__LAUNCHED(ctx, "the diagonal offset kernel");
            sbm__k_dia_fill<<<sbm__grid(m, 256), 256, 0, s>>>(m, P->ndiag, P->dia_ld, P->dia_off, A->rowptr,
                                                              A->colind, A->values, P->dia_val);
            SBM__LAUNCHED(ctx, "the DIA fill kernel");
        }
    }
    /* a plan is made once: wait, so that a failing conversion kernel fails this call */
    SBM__CK(sbm__cuda_sync(ctx));
done:
    return st;
}

sbm_status sbm__cuda_csr_spmv_plan(sbm_ctx *ctx, const sbm_csr *A, sbm_spmv_format format,
                                   sbm_spmv_plan **plan)
{
    sbm_status st = SBM_SUCCESS;
    sbm__cuda_scache empty, *e = NULL;
    sbm__cuda_spmv_plan *P = NULL;
    sbm__csr_kernel forced = {SBM__CSR_VECTOR, 2, 1, 0};
    int forced_set = 0;
    SBM__CK(sbm__cuda_enter(ctx));
    P = (sbm__cuda_spmv_plan *)calloc(1, sizeof *P);
    if (!P) {
        st = sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory for an SpMV plan",
                        sizeof *P);
        goto done;
    }
    P->al = ctx->allocator;
    P->b.h.device = ctx->device;
    memset(&empty, 0, sizeof empty);
    e = &empty;
    if (A->m > 0) SBM__CK(sbm__csr_stats(ctx, A, &e));
    if (format == SBM_SPMV_AUTO) SBM__CK(sbm__choose_format(ctx, A, e, &format));
    /* a CSR format runs its own kernel; the tuning may pick that kernel's configuration */
    forced_set = sbm__csr_forced(ctx, A->m, A->nnz, &forced);
    P->k.kind = format == SBM_SPMV_CSR_SCALAR ? SBM__CSR_SCALAR
                : format == SBM_SPMV_CSR_MERGE ? SBM__CSR_MERGE
                                               : SBM__CSR_VECTOR;
    P->k.w = sbm__vector_width(A->m, A->nnz);
    P->k.r = sbm__vector_rows(P->k.w);
    P->k.cfg = SBM__MERGE_DEFAULT;
    if (forced_set && forced.kind == P->k.kind) P->k = forced;
    P->b.format = format;
    SBM__CK(sbm__plan_build(ctx, P, A, e));
    *plan = (sbm_spmv_plan *)P;
    P = NULL;
done:
    if (P) sbm__cuda_spmv_plan_destroy((sbm_spmv_plan *)P);
    return st;
}

sbm_status sbm__cuda_csr_spmv_plan_update(sbm_ctx *ctx, sbm_spmv_plan *plan, const sbm_csr *A)
{
    sbm_status st = SBM_SUCCESS;
    sbm__cuda_spmv_plan *P = (sbm__cuda_spmv_plan *)plan;
    cudaStream_t s = sbm__cuda_stream(ctx);
    const int64_t m = A->m, nnz = A->nnz;
    const size_t vbytes = (size_t)nnz * sizeof(double);
    int64_t *off = NULL;
    SBM__CK(sbm__cuda_enter(ctx));
    if (m == 0 || nnz == 0) goto done;
    switch (P->b.format) {
    case SBM_SPMV_CSR_SCALAR:
    case SBM_SPMV_CSR_VECTOR:
    case SBM_SPMV_CSR_MERGE:
        SBM__CK(sbm__cuda_d2d(ctx, P->values, A->values, vbytes));
        break;
    case SBM_SPMV_COO:
        SBM__CK(sbm__cuda_d2d(ctx, P->coo_val, A->values, vbytes));
        break;
    case SBM_SPMV_HYB:
        SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, (size_t)(m + 1) * sizeof(int64_t), (void **)&off));
        sbm__k_hyb_counts<<<sbm__grid(m, 256), 256, 0, s>>>(m, P->ell_k, A->rowptr, off);
        SBM__LAUNCHED(ctx, "the HYB count kernel");
        SBM__CK(sbm__cuda_zero(ctx, off + m, sizeof(int64_t)));
        SBM__CK(sbm__cuda_scan_i64(ctx, off, off, m + 1));
        /* the ELL part and the COO values, as for ELL */
        [[fallthrough]];
    case SBM_SPMV_ELL:
        sbm__k_ell_fill<<<sbm__grid(m, 256), 256, 0, s>>>(m, P->ell_k, P->ell_ld, A->rowptr, NULL, A->values,
                                                          NULL, P->ell_val, off, P->coo_nnz, NULL, NULL,
                                                          P->coo_val);
        SBM__LAUNCHED(ctx, "the ELL fill kernel");
        break;
    case SBM_SPMV_DIA:
        sbm__k_dia_fill<<<sbm__grid(m, 256), 256, 0, s>>>(m, P->ndiag, P->dia_ld, P->dia_off, A->rowptr, A->colind,
                                                          A->values, P->dia_val);
        SBM__LAUNCHED(ctx, "the DIA fill kernel");
        break;
    default:
        break;
    }
done:
    return st;
}

sbm_status sbm__cuda_csr_spmv_plan_execute(sbm_ctx *ctx, const sbm_spmv_plan *plan, double alpha,
                                           const double *x, double beta, double *y)
{
    sbm_status st = SBM_SUCCESS;
    const sbm__cuda_spmv_plan *P = (const sbm__cuda_spmv_plan *)plan;
    cudaStream_t s = sbm__cuda_stream(ctx);
    const int64_t m = P->b.m;
    SBM__CK(sbm__cuda_enter(ctx));
    if (m == 0) goto done;
    if (P->b.nnz == 0) {
        sbm__k_scale_y<<<sbm__grid(m, 256), 256, 0, s>>>(m, alpha, beta, y);
        SBM__LAUNCHED(ctx, "the SpMV scaling kernel");
        goto done;
    }
    switch (P->b.format) {
    case SBM_SPMV_CSR_SCALAR:
    case SBM_SPMV_CSR_VECTOR:
    case SBM_SPMV_CSR_MERGE:
        SBM__CK(sbm__launch_csr(ctx, P->k, m, P->rowptr, P->colind, P->values, P->tiles, P->ntiles, alpha, x,
                                beta, y));
        break;
    case SBM_SPMV_COO:
        sbm__k_scale_y<<<sbm__grid(m, 256), 256, 0, s>>>(m, 0.0, beta, y);
        SBM__LAUNCHED(ctx, "the SpMV scaling kernel");
        SBM__CK(sbm__launch_coo_add(ctx, m, P->coo_nnz, P->coo_row, P->coo_col, P->coo_val, alpha, x, y));
        break;
    case SBM_SPMV_ELL:
    case SBM_SPMV_HYB:
        sbm__k_ell<<<sbm__grid(m, 256), 256, 0, s>>>(m, P->ell_k, P->ell_ld, P->ell_col, P->ell_val, x, alpha,
                                                     beta, y);
        SBM__LAUNCHED(ctx, "the ELL SpMV kernel");
        if (P->b.format == SBM_SPMV_HYB)
            SBM__CK(sbm__launch_coo_add(ctx, m, P->coo_nnz, P->coo_row, P->coo_col, P->coo_val, alpha, x, y));
        break;
    case SBM_SPMV_DIA:
        sbm__k_dia<<<sbm__grid(m, 256), 256, 0, s>>>(m, P->b.n, P->ndiag, P->dia_ld, P->dia_off, P->dia_val, x,
                                                     alpha, beta, y);
        SBM__LAUNCHED(ctx, "the DIA SpMV kernel");
        break;
    default:
        st = sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "argument plan: format %d is not a stored format",
                        (int)P->b.format);
        break;
    }
done:
    return st;
}
