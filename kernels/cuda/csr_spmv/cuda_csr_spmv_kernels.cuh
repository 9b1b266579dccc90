/* SPDX-License-Identifier: BSD-3-Clause */
/* Scalar CSR SpMV kernel templates and their device helpers (definitions; instantiated in
 * cuda_csr_spmv_kernels.cu for the compiled configurations). Included by that file only. */
#ifndef SBM_CUDA_CSR_SPMV_KERNELS_CUH
#define SBM_CUDA_CSR_SPMV_KERNELS_CUH

#include "cuda_csr_spmv.cuh"

#include <cub/block/block_scan.cuh>

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

#endif /* SBM_CUDA_CSR_SPMV_KERNELS_CUH */
