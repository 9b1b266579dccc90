/* Scalar CSR SpMM on the GPU: C = alpha*A*B + beta*C with dense B (n x ncols) and C (m x ncols).
 *
 * The two kernels of Yang, Buluc & Owens, "Design Principles for Sparse Matrix Multiplication on
 * the GPU", for row-major B and C:
 *
 *   row-split (section 4.1, "Algorithm I: Row-splitting SpMM")  one group of G lanes per row of
 *       A. The group loads the row's entries cooperatively (one or more per lane, coalesced) and
 *       broadcasts each column index and value with a shuffle ("3. Shared memory"); every lane
 *       then reads VEC consecutive doubles of that row of B, so the group reads whole rows of B
 *       coalesced ("2. Memory access pattern"). The paper uses a warp per row and 32 columns; G
 *       is chosen from ncols instead (the smallest power of two whose lanes cover the columns,
 *       so narrow B keeps all lanes busy: one lane for 1 column, a warp for 33..64 with 16-byte
 *       loads), and two column slots per lane cover wider B in one pass (more columns run as
 *       tiles in grid.y). The B loads of U entries are issued before their products are summed,
 *       the instruction-level parallelism of section 3.1.
 *   merge (section 4.2, "Algorithm II: Merge-based SpMM")  equal work per group regardless of
 *       row lengths. Work items are the rows and the nonzeros of A (the merge-path split of
 *       Merrill & Garland, which the paper names as the variant that also balances empty rows);
 *       a CTA takes a tile of TILE items, found by a binary search per tile boundary in a first
 *       kernel (PartitionSpmm), stages the row ends of its tile in shared memory
 *       (GlobalToShared), and each group searches its share of the tile there and walks it. A
 *       row that ends inside a group's range is written by that group; the partial sum of the
 *       row in progress where the range ends is written as a carry-out, and a second kernel
 *       (FixCarryout) adds the carry-outs of each row to C in unit order. There are no
 *       floating-point atomics, so results are deterministic.
 *
 * Choice. The paper (section 5.4, "Heuristic") picks merge when the mean row length nnz/m is
 * below 9.35 and row-split otherwise. On the H100 that rule chose wrong both ways: row-split is
 * faster on the short regular rows of 2D/3D Poisson (mean 5-7: 2.04x / 2.49x cuSPARSE at 16
 * columns against merge's 1.48x / 1.89x), and merge is needed on power-law rows whatever their
 * mean (R-MAT scale 20 with edge factor 16, mean 15, longest row 39582: row-split 0.13x
 * cuSPARSE, merge 1.68x). What hurts row-split is irregularity, not the mean, so the choice
 * uses the row statistics the SpMV path caches per pattern: merge when the rows of a warp-sized
 * group differ so much that padding each to the group's longest would more than double the work
 * (warp fill > 2, the SpMV kernel's rule) and either a row is longer than 64 entries or the
 * matrix has at least one merge tile per SM, or when one row is longer than 16384 entries;
 * row-split otherwise (a small matrix of short rows, however irregular, is a few CTAs of
 * row-split, while merge adds a second kernel and the carry-outs). The tuning's csr_spmm forces one.
 *
 * Column-major B and C (accepted by the API, not the fast path): a dedicated kernel rather than
 * transposes through workspace, so that no temporary of the size of B or C is needed. One thread
 * per row of C and a strip of 8 columns: consecutive threads write consecutive entries of a
 * column of C (coalesced), and A is read once per strip.
 *
 * Every element of C is summed in the row's stored order (row-split, column-major) or as
 * fixed partial sums added in a fixed order (merge); beta == 0 never reads C. */
#include "cuda_internal.cuh"

#include <stdlib.h>
#include <string.h>

namespace {

constexpr int SPMM_THREADS = 256;      /* threads per CTA, every kernel */
/* merge: items (rows + nonzeros) per CTA tile. H100, alpha = 1, beta = 0, ms for 2048 / 4096 /
 * 8192 (16 | 64 columns): 2D Poisson 1500^2 0.49 / 0.56 / 0.57 | 1.61 / 1.75 / 1.84, 3D Poisson
 * 100^3 0.249 / 0.258 / 0.250 | 0.70 / 0.88 / 1.07, R-MAT scale 20 0.45 / 0.37 / 0.35 | 0.96 /
 * 0.95 / 1.03 (measured with a FixCarryout that fetched one carry-out per round trip). Smaller
 * tiles balance better, but split R-MAT's long rows into more carry-outs, whose sums FixCarryout
 * now fetches 8 at a time. */
constexpr int SPMM_MERGE_TILE = 2048;
constexpr int SPMM_COLMAJOR_STRIP = 8; /* column-major: columns per thread */
constexpr double SPMM_MERGE_FILL = 2.0;     /* warp fill above which rows count as irregular */
constexpr int64_t SPMM_MERGE_ROW = 16384;   /* a row longer than this: merge */
/* irregular rows none longer than this, in a matrix of fewer than one merge tile per SM:
 * row-split (H100, 64 columns: karate, longest row 17 of 34, merge 0.53x cuSPARSE, row-split
 * 2.22x; lp_afiro 0.66x / 2.37x) */
constexpr int64_t SPMM_MERGE_SHORT = 64;

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
    k_spmm_rowsplit(int64_t m, const int64_t *__restrict__ rowptr,
                    const int32_t *__restrict__ colind, const double *__restrict__ av,
                    int64_t ncols, int64_t ntiles, double alpha, const double *__restrict__ B,
                    int64_t ldb, double beta, double *__restrict__ C, int64_t ldc)
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
__global__ void k_spmm_partition(int64_t m, int64_t nnz, const int64_t *__restrict__ rowptr,
                                 int64_t tile_items, int64_t ntiles, int64_t *__restrict__ tile_row)
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
    k_spmm_merge(int64_t m, int64_t nnz, const int64_t *__restrict__ rowptr,
                 const int32_t *__restrict__ colind, const double *__restrict__ av, int64_t ncols,
                 int64_t ntiles_c, double alpha, const double *__restrict__ B, int64_t ldb,
                 double beta, double *__restrict__ C, int64_t ldc, int items, int64_t ntiles,
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
__global__ void k_spmm_fixup(int64_t nunits, int64_t ncols, const int64_t *__restrict__ carry_row,
                             const double *__restrict__ carry, double alpha, double *__restrict__ C,
                             int64_t ldc)
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
    k_spmm_colmajor(int64_t m, const int64_t *__restrict__ rowptr,
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

/* ---------------------------------------------------------------------------------------- */
/* Dispatch                                                                                 */
/* ---------------------------------------------------------------------------------------- */

enum spmm_kernel { SPMM_ROWSPLIT, SPMM_MERGE };

/* Lanes per group G, doubles per load VEC and column slots per lane CPT for ncols columns: the
 * smallest group whose lanes cover the columns once, up to a warp; wider B takes two slots per
 * lane and column tiles of W = 32*VEC*2. */
struct spmm_shape {
    int G, VEC, CPT;
};

static spmm_shape spmm_pick_shape(int64_t ncols, int vec)
{
    spmm_shape s = {32, vec, 2};
    const int64_t slots = (ncols + vec - 1) / vec;
    if (slots <= 32) {
        s.CPT = 1;
        s.G = 1;
        while (s.G < slots) s.G *= 2;
    }
    return s;
}

struct spmm_args {
    int64_t m, nnz, ncols, ntiles_c;
    const int64_t *rowptr;
    const int32_t *colind;
    const double *av;
    double alpha, beta;
    const double *B;
    int64_t ldb;
    double *C;
    int64_t ldc;
    /* merge only */
    int items;
    int64_t ntiles;
    const int64_t *tile_row;
    int64_t *carry_row;
    double *carry;
};

template <int G, int VEC, int CPT>
static void spmm_launch(const spmm_args &a, spmm_kernel kind, cudaStream_t s)
{
    const unsigned gy = (unsigned)(a.ntiles_c < 65535 ? a.ntiles_c : 65535);
    if (kind == SPMM_ROWSPLIT) {
        const dim3 grid(sbm__grid(a.m, SPMM_THREADS / G), gy);
        k_spmm_rowsplit<G, VEC, CPT><<<grid, SPMM_THREADS, 0, s>>>(
            a.m, a.rowptr, a.colind, a.av, a.ncols, a.ntiles_c, a.alpha, a.B, a.ldb, a.beta, a.C,
            a.ldc);
    } else {
        const int64_t gx = a.ntiles < (int64_t)1 << 30 ? a.ntiles : (int64_t)1 << 30;
        const size_t smem = ((size_t)(SPMM_THREADS / G) * a.items + 1) * sizeof(int32_t);
        k_spmm_merge<G, VEC, CPT><<<dim3((unsigned)gx, gy), SPMM_THREADS, smem, s>>>(
            a.m, a.nnz, a.rowptr, a.colind, a.av, a.ncols, a.ntiles_c, a.alpha, a.B, a.ldb,
            a.beta, a.C, a.ldc, a.items, a.ntiles, a.tile_row, a.carry_row, a.carry);
    }
}

template <int VEC>
static void spmm_launch_vec(const spmm_args &a, spmm_kernel kind, spmm_shape sh, cudaStream_t s)
{
    if (sh.CPT == 2) return spmm_launch<32, VEC, 2>(a, kind, s);
    switch (sh.G) {
    case 1: return spmm_launch<1, VEC, 1>(a, kind, s);
    case 2: return spmm_launch<2, VEC, 1>(a, kind, s);
    case 4: return spmm_launch<4, VEC, 1>(a, kind, s);
    case 8: return spmm_launch<8, VEC, 1>(a, kind, s);
    case 16: return spmm_launch<16, VEC, 1>(a, kind, s);
    default: return spmm_launch<32, VEC, 1>(a, kind, s);
    }
}

/* The tuning's csr_spmm (ROWSPLIT or MERGE) forces a kernel; otherwise the row statistics decide
 * (see the file comment). */
static sbm_status spmm_choose(sbm_ctx *ctx, const sbm_csr *A, spmm_kernel *kind)
{
    if (ctx->tuning.csr_spmm == SBM_TUNE_CSR_SPMM_ROWSPLIT) {
        *kind = SPMM_ROWSPLIT;
        return SBM_SUCCESS;
    }
    if (ctx->tuning.csr_spmm == SBM_TUNE_CSR_SPMM_MERGE) {
        *kind = SPMM_MERGE;
        return SBM_SUCCESS;
    }
    int64_t max_row = 0, warp_slots = 0;
    SBM__TRY(sbm__cuda_csr_row_stats(ctx, A, &max_row, &warp_slots));
    const double fill = A->nnz > 0 ? (double)warp_slots / (double)A->nnz : 1.0;
    const int sms = sbm__cuda_st(ctx)->prop.multiProcessorCount;
    /* irregular rows matter when one of them is long, or when there are tiles enough for
     * every SM; below both, merge's second kernel and carry-outs cost more than they balance */
    const int sizable = max_row > SPMM_MERGE_SHORT || A->m + A->nnz >= (int64_t)SPMM_MERGE_TILE * sms;
    *kind = (fill > SPMM_MERGE_FILL && sizable) || max_row > SPMM_MERGE_ROW ? SPMM_MERGE
                                                                              : SPMM_ROWSPLIT;
    return SBM_SUCCESS;
}

} // namespace

sbm_status sbm__cuda_csr_spmm(sbm_ctx *ctx, double alpha, const sbm_csr *A, int64_t ncols,
                              sbm_layout layout, const double *B, int64_t ldb, double beta,
                              double *C, int64_t ldc)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    SBM__CK(sbm__cuda_enter(ctx));
    if (A->m == 0 || ncols == 0) goto done;

    if (layout == SBM_LAYOUT_COL_MAJOR) {
        const int64_t strips = (ncols + SPMM_COLMAJOR_STRIP - 1) / SPMM_COLMAJOR_STRIP;
        const dim3 grid(sbm__grid(A->m, SPMM_THREADS), (unsigned)(strips < 65535 ? strips : 65535));
        k_spmm_colmajor<<<grid, SPMM_THREADS, 0, s>>>(A->m, A->rowptr, A->colind, A->values, ncols,
                                                      alpha, B, ldb, beta, C, ldc);
        SBM__LAUNCHED(ctx, "CSR SpMM kernel (column-major)");
        goto done;
    }

    {
        /* 16-byte loads and stores where every row of B and C starts 16-byte aligned */
        const int vec = ncols >= 2 && ((uintptr_t)B % 16) == 0 && ((uintptr_t)C % 16) == 0 &&
                                ldb % 2 == 0 && ldc % 2 == 0
                            ? 2
                            : 1;
        const spmm_shape sh = spmm_pick_shape(ncols, vec);
        const int64_t width = (int64_t)sh.G * sh.VEC * sh.CPT;
        spmm_args a;
        memset(&a, 0, sizeof a);
        a.m = A->m;
        a.nnz = A->nnz;
        a.ncols = ncols;
        a.ntiles_c = (ncols + width - 1) / width;
        a.rowptr = A->rowptr;
        a.colind = A->colind;
        a.av = A->values;
        a.alpha = alpha;
        a.beta = beta;
        a.B = B;
        a.ldb = ldb;
        a.C = C;
        a.ldc = ldc;
        spmm_kernel kind = SPMM_ROWSPLIT;
        SBM__CK(spmm_choose(ctx, A, &kind));

        if (kind == SPMM_MERGE) {
            const int groups = SPMM_THREADS / sh.G;
            a.items = SPMM_MERGE_TILE / groups;
            const int64_t tile_items = (int64_t)groups * a.items;
            a.ntiles = (A->m + A->nnz + tile_items - 1) / tile_items;
            const int64_t nunits = a.ntiles * groups;
            /* carry-outs need nunits*ncols doubles: where that exceeds the context's memory
             * budget (or size_t), row-split, which needs no workspace, runs instead */
            const double need = (double)nunits * ((double)ncols + 1) * 8.0 +
                                (double)(a.ntiles + 1) * 8.0 + 1024.0;
            if (need > (double)SIZE_MAX / 2 ||
                (ctx->memory_budget > 0 && need > (double)ctx->memory_budget)) {
                kind = SPMM_ROWSPLIT;
            } else {
                sbm__carve cv = {0};
                const size_t o_tile = sbm__carve_add(&cv, (size_t)(a.ntiles + 1) * sizeof(int64_t));
                const size_t o_row = sbm__carve_add(&cv, (size_t)nunits * sizeof(int64_t));
                const size_t o_carry =
                    sbm__carve_add(&cv, (size_t)nunits * (size_t)ncols * sizeof(double));
                void *ws = NULL;
                SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, cv.total, &ws));
                a.tile_row = (int64_t *)((char *)ws + o_tile);
                a.carry_row = (int64_t *)((char *)ws + o_row);
                a.carry = (double *)((char *)ws + o_carry);
                k_spmm_partition<<<sbm__grid(a.ntiles + 1, SPMM_THREADS), SPMM_THREADS, 0, s>>>(
                    A->m, A->nnz, A->rowptr, tile_items, a.ntiles, (int64_t *)a.tile_row);
                SBM__LAUNCHED(ctx, "CSR SpMM partition kernel");
            }
        }
        if (sh.VEC == 2) spmm_launch_vec<2>(a, kind, sh, s);
        else spmm_launch_vec<1>(a, kind, sh, s);
        SBM__LAUNCHED(ctx, kind == SPMM_MERGE ? "CSR SpMM kernel (merge)"
                                              : "CSR SpMM kernel (row-split)");
        if (kind == SPMM_MERGE) {
            const int64_t nunits = a.ntiles * (SPMM_THREADS / sh.G);
            k_spmm_fixup<<<sbm__grid(nunits * ncols, SPMM_THREADS), SPMM_THREADS, 0, s>>>(
                nunits, ncols, a.carry_row, a.carry, alpha, C, ldc);
            SBM__LAUNCHED(ctx, "CSR SpMM carry-out kernel");
        }
    }
done:
    return st;
}
