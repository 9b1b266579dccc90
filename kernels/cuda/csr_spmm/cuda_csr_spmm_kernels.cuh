/* SPDX-License-Identifier: BSD-3-Clause */
/* Scalar CSR SpMM kernel templates and their device helpers (definitions; instantiated in
 * cuda_csr_spmm_kernels.cu for every shape). Included by that file only. */
#ifndef SBM_CUDA_CSR_SPMM_KERNELS_CUH
#define SBM_CUDA_CSR_SPMM_KERNELS_CUH

#include "cuda_csr_spmm.cuh"

namespace {

/* Entries of A whose B rows are in flight at once, per lane: U*VEC*CPT = 8 doubles of
 * registers. 16 doubles spilled at the register limits below (ptxas -v, sm_90); 8 keep every
 * instance under 64 (row-split) or 74 (merge) registers without spills, so that 3 to 4 CTAs of
 * 256 threads stay resident per SM, with 4 to 8 loads of B in flight per lane. */
template <int VEC, int CPT>
struct spmm_batch {
    static constexpr int U = 8 / (VEC * CPT);
};
constexpr int SPMM_MINB_ROWSPLIT = 4; /* CTAs per SM the register allocation must allow */
constexpr int SPMM_MINB_MERGE = 3;

/* Broadcast from lane src of the group (a no-op for one-lane groups). */
template <int G, class T>
__device__ __forceinline__ T group_bcast(unsigned mask, T x, int src)
{
    if (G == 1) return x;
    return __shfl_sync(mask, x, src, G);
}

/* Lanes of the calling thread's group, for the shuffles: groups of one warp may run different
 * trip counts, so a full-warp mask would be wrong. */
template <int G>
__device__ __forceinline__ unsigned group_mask()
{
    const unsigned lane = threadIdx.x & 31u;
    return G == 32 ? 0xffffffffu : ((1u << (G & 31)) - 1u) << (lane & ~(unsigned)(G - 1));
}

/* VEC consecutive doubles at p, of which nvalid (possibly <= 0) are inside the matrix; the rest
 * read as 0 and are not touched. VEC == 2 needs p 16-byte aligned (checked by the dispatch). */
template <int VEC>
__device__ __forceinline__ void load_b(const double *__restrict__ p, int64_t nvalid, double *out)
{
    if (VEC == 2 && nvalid >= 2) {
        const double2 v = __ldg(reinterpret_cast<const double2 *>(p));
        out[0] = v.x;
        out[1] = v.y;
        return;
    }
#pragma unroll
    for (int e = 0; e < VEC; e++) out[e] = e < nvalid ? __ldg(p + e) : 0.0;
}

/* C entries p[0..min(VEC, nvalid)) = alpha*acc + beta*C; beta == 0 does not read C (it may
 * hold NaN). */
template <int VEC>
__device__ __forceinline__ void store_c(double *p, int64_t nvalid, const double *acc, double alpha,
                                        double beta)
{
    if (VEC == 2 && nvalid >= 2) {
        double2 o;
        if (beta == 0.0) {
            o.x = alpha * acc[0];
            o.y = alpha * acc[1];
        } else {
            const double2 c = *reinterpret_cast<const double2 *>(p);
            o.x = alpha * acc[0] + beta * c.x;
            o.y = alpha * acc[1] + beta * c.y;
        }
        *reinterpret_cast<double2 *>(p) = o;
        return;
    }
#pragma unroll
    for (int e = 0; e < VEC; e++)
        if (e < nvalid) p[e] = beta == 0.0 ? alpha * acc[e] : alpha * acc[e] + beta * p[e];
}

/* The group's columns: slot s of lane l holds columns col0 + s*G*VEC + [0, VEC), where
 * col0 = tile*W + l*VEC and W = G*VEC*CPT. */
template <int G, int VEC, int CPT>
struct spmm_cols {
    static constexpr int W = G * VEC * CPT;
    int64_t col0;
    int64_t ncols;
    __device__ __forceinline__ int64_t col(int s) const { return col0 + (int64_t)s * G * VEC; }
    __device__ __forceinline__ void load(const double *__restrict__ B, int64_t ldb, int32_t j,
                                         double *out) const
    {
        const double *row = B + (int64_t)j * ldb;
#pragma unroll
        for (int s = 0; s < CPT; s++) load_b<VEC>(row + col(s), ncols - col(s), out + s * VEC);
    }
    __device__ __forceinline__ void store(double *C, int64_t ldc, int64_t i, const double *acc,
                                          double alpha, double beta) const
    {
        double *row = C + i * ldc;
#pragma unroll
        for (int s = 0; s < CPT; s++)
            store_c<VEC>(row + col(s), ncols - col(s), acc + s * VEC, alpha, beta);
    }
};

/* The group's cooperative load of entries [p, p + n) of A, n <= CH = S*G: lane l holds entries
 * l, l + G, ... (0 beyond n). */
template <int G, int S>
__device__ __forceinline__ void load_entries(const int32_t *__restrict__ colind,
                                             const double *__restrict__ av, int64_t p, int n,
                                             int lane, int32_t *c, double *v)
{
#pragma unroll
    for (int s = 0; s < S; s++) {
        const int e = s * G + lane;
        c[s] = e < n ? __ldg(colind + p + e) : 0;
        v[s] = e < n ? __ldg(av + p + e) : 0.0;
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Row-split                                                                                */
/* ---------------------------------------------------------------------------------------- */

template <int G, int VEC, int CPT>
__global__ void __launch_bounds__(SPMM_THREADS, SPMM_MINB_ROWSPLIT)
    sbm__k_spmm_rowsplit(int64_t m, const int64_t *__restrict__ rowptr,
                         const int32_t *__restrict__ colind, const double *__restrict__ av,
                         int64_t ncols, int64_t ntiles, double alpha,
                         const double *__restrict__ B, int64_t ldb, double beta,
                         double *__restrict__ C, int64_t ldc)
{
    constexpr int U = spmm_batch<VEC, CPT>::U;
    constexpr int CH = G > U ? G : U; /* entries loaded per round */
    constexpr int S = CH / G;         /* of them per lane */
    constexpr int NV = VEC * CPT;     /* doubles per lane per row of B */
    typedef spmm_cols<G, VEC, CPT> cols_t;
    const int lane = (int)(threadIdx.x % G);
    const unsigned mask = group_mask<G>();
    const int64_t per_block = SPMM_THREADS / G;
    const int64_t stride = (int64_t)gridDim.x * per_block;
    for (int64_t tile = blockIdx.y; tile < ntiles; tile += gridDim.y) {
        const cols_t cl = {tile * cols_t::W + (int64_t)lane * VEC, ncols};
        for (int64_t i = blockIdx.x * per_block + threadIdx.x / G; i < m; i += stride) {
            const int64_t p1 = rowptr[i + 1];
            double acc[NV];
#pragma unroll
            for (int q = 0; q < NV; q++) acc[q] = 0.0;
            for (int64_t p = rowptr[i]; p < p1; p += CH) {
                const int n = p1 - p < CH ? (int)(p1 - p) : CH;
                int32_t c[S];
                double v[S];
                load_entries<G, S>(colind, av, p, n, lane, c, v);
#pragma unroll
                for (int jb = 0; jb < CH; jb += U) {
                    if (jb >= n) break;
                    double b[U][NV], w[U];
#pragma unroll
                    for (int j = 0; j < U; j++) {
                        const int e = jb + j;
                        const int32_t col = group_bcast<G>(mask, c[e / G], e % G);
                        w[j] = group_bcast<G>(mask, v[e / G], e % G);
                        if (e < n) {
                            cl.load(B, ldb, col, b[j]);
                        } else {
#pragma unroll
                            for (int q = 0; q < NV; q++) b[j][q] = 0.0;
                        }
                    }
#pragma unroll
                    for (int j = 0; j < U; j++)
                        if (jb + j < n) {
#pragma unroll
                            for (int q = 0; q < NV; q++) acc[q] += w[j] * b[j][q];
                        }
                }
            }
            cl.store(C, ldc, i, acc, alpha, beta);
        }
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Merge-based                                                                              */
/* ---------------------------------------------------------------------------------------- */

/* Merge-path coordinate of diagonal d: the number of row ends among the first d items of the
 * merge of the row ends end[0..nr) with the nonzero indices 0..nk-1, where row end r precedes
 * nonzero k when end[r] <= k (CUB's MergePathSearch). */
template <class T>
__device__ __forceinline__ int64_t merge_path(const T *end, int64_t nr, int64_t nk, int64_t d)
{
    int64_t lo = d - nk > 0 ? d - nk : 0, hi = d < nr ? d : nr;
    while (lo < hi) {
        const int64_t mid = (lo + hi) >> 1;
        if ((int64_t)end[mid] <= d - mid - 1) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* PartitionSpmm: the row where each CTA tile starts (tile_row[0..ntiles]). */
__global__ void sbm__k_spmm_partition(int64_t m, int64_t nnz, const int64_t *__restrict__ rowptr,
                                      int64_t tile_items, int64_t ntiles,
                                      int64_t *__restrict__ tile_row)
{
    SBM__GRID_STRIDE(t, ntiles + 1)
    {
        const int64_t d = t * tile_items < m + nnz ? t * tile_items : m + nnz;
        tile_row[t] = merge_path(rowptr + 1, m, nnz, d);
    }
}

/* One CTA per tile of TILE = (SPMM_THREADS/G) * items items; group g walks items
 * [g*items, (g+1)*items) of it. carry_row[unit] is the row whose partial sum the unit left in
 * carry[unit*ncols ...], or -1 when the unit ended on a row it had added nothing to. */
template <int G, int VEC, int CPT>
__global__ void __launch_bounds__(SPMM_THREADS, SPMM_MINB_MERGE)
    sbm__k_spmm_merge(int64_t m, int64_t nnz, const int64_t *__restrict__ rowptr,
                      const int32_t *__restrict__ colind, const double *__restrict__ av,
                      int64_t ncols, int64_t ntiles_c, double alpha, const double *__restrict__ B,
                      int64_t ldb, double beta, double *__restrict__ C, int64_t ldc, int items,
                      int64_t ntiles,
                      const int64_t *__restrict__ tile_row, int64_t *__restrict__ carry_row,
                      double *__restrict__ carry)
{
    constexpr int U = spmm_batch<VEC, CPT>::U;
    constexpr int CH = G > U ? G : U;
    constexpr int S = CH / G;
    constexpr int NV = VEC * CPT;
    constexpr int GROUPS = SPMM_THREADS / G;
    typedef spmm_cols<G, VEC, CPT> cols_t;
    /* ends of the tile's rows relative to its first nonzero; row i1, in progress at the tile's
     * end (or past the last row), reads as nk, which no nonzero of the tile reaches */
    extern __shared__ int32_t s_end[];
    const int lane = (int)(threadIdx.x % G), g = (int)(threadIdx.x / G);
    const unsigned mask = group_mask<G>();
    const int64_t tile_items = (int64_t)GROUPS * items;
    for (int64_t tc = blockIdx.y; tc < ntiles_c; tc += gridDim.y) {
        const cols_t cl = {tc * cols_t::W + (int64_t)lane * VEC, ncols};
        for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
            const int64_t d0 = t * tile_items;
            const int64_t d1 = d0 + tile_items < m + nnz ? d0 + tile_items : m + nnz;
            const int64_t i0 = tile_row[t], i1 = tile_row[t + 1];
            const int64_t k0 = d0 - i0;
            const int nr = (int)(i1 - i0), nk = (int)((d1 - i1) - k0), len = (int)(d1 - d0);
            __syncthreads(); /* the previous tile's walks are done with s_end */
            for (int r = threadIdx.x; r <= nr; r += SPMM_THREADS) {
                const int64_t e = i0 + r < m ? rowptr[i0 + r + 1] - k0 : nk;
                s_end[r] = (int32_t)(e < nk ? e : nk);
            }
            __syncthreads();

            const int dd = g * items < len ? g * items : len;
            const int de = dd + items < len ? dd + items : len;
            int row = (int)merge_path(s_end, nr, nk, dd);
            const int row_e = (int)merge_path(s_end, nr, nk, de);
            const int ke = de - row_e;
            int rend = s_end[row];
            bool live = false; /* acc holds products of row since its last store */
            double acc[NV];
#pragma unroll
            for (int q = 0; q < NV; q++) acc[q] = 0.0;
            for (int k = dd - row; k < ke; k += CH) {
                const int n = ke - k < CH ? ke - k : CH;
                int32_t c[S];
                double v[S];
                load_entries<G, S>(colind, av, k0 + k, n, lane, c, v);
#pragma unroll
                for (int jb = 0; jb < CH; jb += U) {
                    if (jb >= n) break;
                    double b[U][NV], w[U];
#pragma unroll
                    for (int j = 0; j < U; j++) {
                        const int e = jb + j;
                        const int32_t col = group_bcast<G>(mask, c[e / G], e % G);
                        w[j] = group_bcast<G>(mask, v[e / G], e % G);
                        if (e < n) {
                            cl.load(B, ldb, col, b[j]);
                        } else {
#pragma unroll
                            for (int q = 0; q < NV; q++) b[j][q] = 0.0;
                        }
                    }
#pragma unroll
                    for (int j = 0; j < U; j++) {
                        if (jb + j >= n) break;
                        /* rows (empty ones too) that end before this nonzero */
                        while (k + jb + j >= rend) {
                            cl.store(C, ldc, i0 + row, acc, alpha, beta);
#pragma unroll
                            for (int q = 0; q < NV; q++) acc[q] = 0.0;
                            live = false;
                            rend = s_end[++row];
                        }
#pragma unroll
                        for (int q = 0; q < NV; q++) acc[q] += w[j] * b[j][q];
                        live = true;
                    }
                }
            }
            /* rows that end after the range's last nonzero but inside the range */
            for (; row < row_e; row++) {
                cl.store(C, ldc, i0 + row, acc, alpha, beta);
#pragma unroll
                for (int q = 0; q < NV; q++) acc[q] = 0.0;
                live = false;
            }
            const int64_t unit = t * GROUPS + g;
            if (live) {
                double *dst = carry + unit * ncols;
#pragma unroll
                for (int s = 0; s < CPT; s++)
#pragma unroll
                    for (int e = 0; e < VEC; e++)
                        if (cl.col(s) + e < ncols) dst[cl.col(s) + e] = acc[s * VEC + e];
            }
            if (tc == 0 && lane == 0) carry_row[unit] = live ? i0 + row_e : -1;
        }
    }
}

/* Column j of the carry-outs of row r >= 0 summed in unit order from unit u, whose carry is
 * row r, to the end of the run of units carrying r. The row ids and values of 8 units are loaded
 * before any is added, so a row split over many units (a long row) costs one memory round trip
 * per 8 units rather than one per unit; the additions are the one-by-one loop's, in its order. */
__device__ __forceinline__ double spmm_carry_sum(int64_t u, int64_t j, int64_t r, int64_t nunits,
                                                int64_t ncols,
                                                const int64_t *__restrict__ carry_row,
                                                const double *__restrict__ carry)
{
    constexpr int K = 8;
    double sum = carry[u * ncols + j];
    for (int64_t w = u + 1; w < nunits; w += K) {
        int64_t rr[K];
        double cv[K];
#pragma unroll
        for (int t = 0; t < K; t++) rr[t] = w + t < nunits ? carry_row[w + t] : -1;
#pragma unroll
        for (int t = 0; t < K; t++) cv[t] = rr[t] == r ? carry[(w + t) * ncols + j] : 0.0;
        bool run = true;
#pragma unroll
        for (int t = 0; t < K; t++) {
            run = run && rr[t] == r;
            if (run) sum += cv[t];
        }
        if (!run) break;
    }
    return sum;
}

/* FixCarryout: C(r,:) += alpha * (sum of the carry-outs of row r, in unit order). The units that
 * carry row r are consecutive: a unit between two of them would lie inside row r, so it holds
 * nonzeros of r and carries r too (units with no items exist only past the last row). The
 * first unit of each run sums the run. */
__global__ void sbm__k_spmm_fixup(int64_t nunits, int64_t ncols,
                                  const int64_t *__restrict__ carry_row,
                                  const double *__restrict__ carry, double alpha,
                                  double *__restrict__ C, int64_t ldc)
{
    SBM__GRID_STRIDE(idx, nunits * ncols)
    {
        const int64_t u = idx / ncols, j = idx - u * ncols;
        const int64_t r = carry_row[u];
        if (r < 0 || (u > 0 && carry_row[u - 1] == r)) continue;
        C[r * ldc + j] += alpha * spmm_carry_sum(u, j, r, nunits, ncols, carry_row, carry);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Column-major                                                                             */
/* ---------------------------------------------------------------------------------------- */

__global__ void __launch_bounds__(SPMM_THREADS)
    sbm__k_spmm_colmajor(int64_t m, const int64_t *__restrict__ rowptr,
                         const int32_t *__restrict__ colind, const double *__restrict__ av,
                         int64_t ncols, double alpha, const double *__restrict__ B, int64_t ldb,
                         double beta, double *__restrict__ C, int64_t ldc)
{
    constexpr int W = SPMM_COLMAJOR_STRIP;
    for (int64_t j0 = (int64_t)blockIdx.y * W; j0 < ncols; j0 += (int64_t)gridDim.y * W) {
        const int w = ncols - j0 < W ? (int)(ncols - j0) : W;
        SBM__GRID_STRIDE(i, m)
        {
            double acc[W];
#pragma unroll
            for (int t = 0; t < W; t++) acc[t] = 0.0;
            const int64_t p1 = rowptr[i + 1];
            for (int64_t p = rowptr[i]; p < p1; p++) {
                const double a = __ldg(av + p);
                const double *b = B + j0 * ldb + __ldg(colind + p);
#pragma unroll
                for (int t = 0; t < W; t++)
                    if (t < w) acc[t] += a * __ldg(b + t * ldb);
            }
#pragma unroll
            for (int t = 0; t < W; t++)
                if (t < w) {
                    double *c = C + i + (j0 + t) * ldc;
                    *c = beta == 0.0 ? alpha * acc[t] : alpha * acc[t] + beta * *c;
                }
        }
    }
}

} // namespace

#endif /* SBM_CUDA_CSR_SPMM_KERNELS_CUH */
