/* Block SpGEMM on the GPU: C = U + alpha*op(A)*op(B) for CBC matrices by expand-sort-compress
 * with operand pointers (Polok, Ila, Smrz, "Fast Sparse Matrix Multiplication on GPU",
 * papers/block-spgemm-polok-ila-smrz.txt; DESIGN.md §4).
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
 *               only as many bits as the slice needs. Both were measured on an H100
 *               (bench/RESULTS.md): the segmented sort wins on short output columns (2D/3D
 *               Poisson), the radix sort on long ones (BA); the plan picks by the mean column
 *               length of the expansion (sbm__gemm_use_radix).
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
 *   in sbm__gemm_numeric_kind. op T is handled by indexing the stored block transposed. */
#include "cuda_internal.cuh"
#include "sbm_blocks.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Entries pack the A-block index in the low 32 bits and the B-block index in the high 32 bits;
 * a U entry has SBM__U_TAG as A index and U's block index as B index. */
#define SBM__U_TAG 0xFFFFFFFFu

typedef struct sbm__gpu_plan {
    sbm__plan_header h;      /* first: the front end reads it */
    sbm_allocator al;        /* allocator of the device arrays below */
    sbm_op op_a;             /* operations the plan was made for */
    sbm_op op_b;
    unsigned flags;          /* SBM_GEMM_UPPER or 0 */
    int r;                   /* op(A) blocks are r x k, op(B) blocks k x c */
    int k;
    int c;
    int has_u;               /* U took part in the plan */
    int numeric;             /* numeric kernel (SBM__NUM_*, see sbm__gemm_numeric_kind) */
    int st_nb;               /* staged kernels: output blocks per tile */
    int st_ec;               /* staged kernels: entries staged per chunk */
    unsigned st_grid;        /* staged kernels: CTAs */
    int64_t st_tiles;        /* staged kernels: tiles */
    size_t st_smem;          /* staged kernels: dynamic shared memory per CTA */
    int64_t nnzb_c;          /* blocks of C */
    int64_t entries;         /* products + U entries */
    uint64_t *pairs;         /* sorted entries (size entries) */
    int64_t *seg;            /* block q of C sums entries seg[q] .. seg[q+1]-1 (size nnzb_c+1) */
} sbm__gpu_plan;

/* ---------------------------------------------------------------------------------------- */
/* Setup (Algorithm 1)                                                                      */
/* ---------------------------------------------------------------------------------------- */

/* Per op(B) block e = (k, j): its column j, and its product count (op(A) column k, or only its
 * rows <= j under UPPER). cnt[nnzb] = 0 so that the exclusive scan yields the total there. */
__global__ void sbm__k_gemm_counts(int64_t nbc, int64_t nnzb, const int64_t *ptrB,
                                   const int32_t *indB, const int64_t *ptrA, const int32_t *indA,
                                   int upper, int32_t *bcol, int64_t *cnt)
{
    SBM__GRID_STRIDE(e, nnzb + 1)
    {
        if (e == nnzb) {
            cnt[e] = 0;
        } else {
            int64_t j = sbm__upper_bound(ptrB, 0, nbc + 1, e) - 1;
            int64_t k = indB[e];
            int64_t a0 = ptrA[k], a1 = ptrA[k + 1];
            if (upper) a1 = sbm__upper_bound(indA, a0, a1, (int32_t)j);
            bcol[e] = (int32_t)j;
            cnt[e] = a1 - a0;
        }
    }
}

/* U blocks kept per column (UPPER: rows <= j); ukeep[nbc] = 0 for the scan. */
__global__ void sbm__k_gemm_ukeep(int64_t nbc, const int64_t *up, const int32_t *ui, int upper,
                                  int64_t *ukeep)
{
    SBM__GRID_STRIDE(j, nbc + 1)
    {
        if (j == nbc || up == NULL) {
            ukeep[j] = 0;
        } else {
            int64_t u0 = up[j], u1 = up[j + 1];
            if (upper) u1 = sbm__upper_bound(ui, u0, u1, (int32_t)j);
            ukeep[j] = u1 - u0;
        }
    }
}

/* pcol[j]: products before column j; coloff[j]: entries before column j. */
__global__ void sbm__k_gemm_coloff(int64_t nbc, const int64_t *ptrB, const int64_t *bprods,
                                   const int64_t *ucum, int64_t *pcol, int64_t *coloff)
{
    SBM__GRID_STRIDE(j, nbc + 1)
    {
        int64_t p = bprods[ptrB[j]];
        pcol[j] = p;
        coloff[j] = p + ucum[j];
    }
}

/* Column of every stored block of A (op(A) row of a block when op_a == T). */
__global__ void sbm__k_block_cols(int64_t nbc, int64_t nnzb, const int64_t *ptr, int32_t *col)
{
    SBM__GRID_STRIDE(e, nnzb) { col[e] = (int32_t)(sbm__upper_bound(ptr, 0, nbc + 1, e) - 1); }
}

/* ---------------------------------------------------------------------------------------- */
/* Expansion (Algorithm 2)                                                                  */
/* ---------------------------------------------------------------------------------------- */

enum { SBM__KEY_ROW32 = 0, SBM__KEY_PACK32 = 1, SBM__KEY_PACK64 = 2 };

template <int KEY>
__device__ __forceinline__ void sbm__put_key(void *keys, int64_t pos, int64_t col_local, int rbits,
                                             int32_t row)
{
    if (KEY == SBM__KEY_ROW32)
        ((int32_t *)keys)[pos] = row;
    else if (KEY == SBM__KEY_PACK32)
        ((uint32_t *)keys)[pos] = ((uint32_t)col_local << rbits) | (uint32_t)row;
    else
        ((uint64_t *)keys)[pos] = ((uint64_t)col_local << rbits) | (uint64_t)row;
}

/* Products [P0, P1) of one slice; thread t expands `per` consecutive products (Algorithm 2,
 * lines 20-37; col_skip is `skip`). The op(B) blocks of the slice are [eb_lo, eb_hi). */
template <int KEY>
__global__ void sbm__k_gemm_expand(int64_t P0, int64_t P1, int64_t per, int64_t eb_lo,
                                   int64_t eb_hi, const int64_t *bprods, const int32_t *bcol,
                                   const int32_t *indB, const int64_t *permB, const int64_t *ptrA,
                                   const int32_t *indA, const int64_t *permA, const int64_t *ucum,
                                   int64_t E0, int64_t j0, int rbits, void *keys, uint64_t *vals)
{
    const int64_t nthreads = (int64_t)blockDim.x * gridDim.x;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;; t += nthreads) {
        const int64_t begin = P0 + t * per;
        if (begin >= P1) break;
        const int64_t end = begin + per < P1 ? begin + per : P1;
        /* UPPER_BOUND(b_prods, begin) - 1: the op(B) block holding product `begin` */
        int64_t eb = sbm__upper_bound(bprods, eb_lo, eb_hi + 1, begin) - 1;
        int64_t skip = begin - bprods[eb];
        int64_t p = begin;
        while (p < end) {
            const int64_t cnt = bprods[eb + 1] - bprods[eb];
            if (skip < cnt) {
                const int64_t j = bcol[eb];
                const int64_t kk = indB[eb];
                const int64_t a0 = ptrA[kk] + skip;
                int64_t n = cnt - skip;
                if (n > end - p) n = end - p;
                /* products of column j follow its U entries: entry = p + ucum[j+1] */
                const int64_t dst = p + ucum[j + 1] - E0;
                const uint64_t bo = (uint64_t)(permB ? permB[eb] : eb) << 32;
                for (int64_t q = 0; q < n; q++) {
                    const int64_t ea = a0 + q;
                    sbm__put_key<KEY>(keys, dst + q, j - j0, rbits, indA[ea]);
                    vals[dst + q] = bo | (uint64_t)(uint32_t)(permA ? permA[ea] : ea);
                }
                p += n;
            }
            skip = 0;
            eb++;
        }
    }
}

/* U's kept blocks of columns [j0, j1) (blocks [u_lo, u_hi)) as entries at the head of their
 * column. */
template <int KEY>
__global__ void sbm__k_gemm_expand_u(int64_t u_lo, int64_t u_hi, int64_t j0, int64_t j1,
                                     const int64_t *up, const int32_t *ui, const int64_t *ucum,
                                     const int64_t *coloff, int64_t E0, int rbits, void *keys,
                                     uint64_t *vals)
{
    SBM__GRID_STRIDE(t, u_hi - u_lo)
    {
        const int64_t u = u_lo + t;
        const int64_t j = sbm__upper_bound(up, j0, j1 + 1, u) - 1;
        const int64_t local = u - up[j];
        if (local < ucum[j + 1] - ucum[j]) {
            const int64_t dst = coloff[j] + local - E0;
            sbm__put_key<KEY>(keys, dst, j - j0, rbits, ui[u]);
            vals[dst] = ((uint64_t)u << 32) | (uint64_t)SBM__U_TAG;
        }
    }
}

/* Segment offsets of a slice: off[s] = coloff[j0+s] - E0. */
__global__ void sbm__k_gemm_seg_offsets(int64_t ns, int64_t j0, int64_t E0, const int64_t *coloff,
                                        int64_t *off)
{
    SBM__GRID_STRIDE(s, ns + 1) { off[s] = coloff[j0 + s] - E0; }
}

/* ---------------------------------------------------------------------------------------- */
/* Compression (Algorithm 3)                                                                */
/* ---------------------------------------------------------------------------------------- */

__device__ __forceinline__ int32_t sbm__entry_row(uint64_t v, const int32_t *arow,
                                                  const int32_t *urow)
{
    const uint32_t a = (uint32_t)v;
    return a == SBM__U_TAG ? urow[v >> 32] : arow[a];
}

/* One warp per column: walks the column's sorted entries in chunks of 32, flags tails by
 * comparing each row with its predecessor (ballot), and counts (FILL = 0) or writes C's rows
 * and the first entry of every output block (FILL = 1). */
template <int FILL>
__global__ void sbm__k_gemm_compress(int64_t nbc, const int64_t *coloff, const uint64_t *pairs,
                                     const int32_t *arow, const int32_t *urow, int64_t *ccnt,
                                     const int64_t *cptr, int32_t *crow, int64_t *seg)
{
    const int lane = threadIdx.x & 31;
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)blockDim.x * gridDim.x) >> 5;
    for (int64_t j = warp; j < nbc; j += nwarps) {
        const int64_t e0 = coloff[j], e1 = coloff[j + 1];
        int32_t carry = -1; /* row of the last entry of the previous chunk */
        int64_t count = FILL ? cptr[j] : 0;
        for (int64_t base = e0; base < e1; base += 32) {
            const int64_t e = base + lane;
            const bool valid = e < e1;
            const int32_t row = valid ? sbm__entry_row(pairs[e], arow, urow) : -1;
            int32_t prev = __shfl_up_sync(0xffffffffu, row, 1);
            if (lane == 0) prev = carry;
            const bool head = valid && row != prev;
            const unsigned mask = __ballot_sync(0xffffffffu, head);
            if (FILL && head) {
                const int64_t q = count + __popc(mask & ((1u << lane) - 1u));
                crow[q] = row;
                seg[q] = e;
            }
            count += __popc(mask);
            carry = __shfl_sync(0xffffffffu, row, 31);
        }
        if (!FILL && lane == 0) ccnt[j] = count;
    }
}

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
/* Numeric pass                                                                             */
/* ---------------------------------------------------------------------------------------- */

/* Team of R*C threads per output block; thread (i, j) of the team owns element (i, j). R_, K_,
 * C_ are compile-time sizes (0: the runtime r, k, c). Blocks of op(A) are read transposed from
 * A's storage when ta, the same for B. */
template <int R_, int K_, int C_>
__global__ void sbm__k_gemm_numeric(int64_t nnzb_c, int r_rt, int k_rt, int c_rt, int ta, int tb,
                                    const uint64_t *__restrict__ pairs,
                                    const int64_t *__restrict__ seg,
                                    const double *__restrict__ av, const double *__restrict__ bv,
                                    const double *__restrict__ uvals, double alpha,
                                    double *__restrict__ cv)
{
    const int R = R_ ? R_ : r_rt, K = K_ ? K_ : k_rt, C = C_ ? C_ : c_rt;
    const int T = R * C;
    const int teams = blockDim.x / T;
    const int team = threadIdx.x / T;
    if (team >= teams) return;
    const int o = threadIdx.x - team * T;
    const int i = o % R, j = o / R;
    const int64_t RK = (int64_t)R * K, KC = (int64_t)K * C;
    /* strides of element (i, p) of op(A) and (p, j) of op(B) in the stored blocks */
    const int64_t a_off = ta ? (int64_t)i * K : i, a_step = ta ? 1 : R;
    const int64_t b_off = tb ? j : (int64_t)j * K, b_step = tb ? C : 1;
    for (int64_t q = (int64_t)blockIdx.x * teams + team; q < nnzb_c; q += (int64_t)gridDim.x * teams) {
        const int64_t e0 = seg[q], e1 = seg[q + 1];
        double acc = 0.0;
        int64_t u = -1;
        for (int64_t e = e0; e < e1; e++) {
            const uint64_t v = pairs[e];
            const uint32_t a = (uint32_t)v;
            const int64_t b = (int64_t)(v >> 32);
            if (a == SBM__U_TAG) {
                u = b;
                continue;
            }
            const double *ap = av + (int64_t)a * RK + a_off;
            const double *bp = bv + b * KC + b_off;
            if (K_) {
#pragma unroll
                for (int p = 0; p < K_; p++) acc += __ldg(ap + p * a_step) * __ldg(bp + p * b_step);
            } else {
                for (int p = 0; p < K; p++) acc += __ldg(ap + p * a_step) * __ldg(bp + p * b_step);
            }
        }
        /* the CPU backend's order: scale the sum, then add U */
        if (alpha != 1.0) acc *= alpha;
        if (u >= 0) acc += uvals[u * T + o];
        cv[q * T + o] = acc;
    }
}

/* alpha == 0: C = U (zero where U has no block); the products are not computed, as in BLAS and
 * the CPU backend, so NaN in A or B does not reach C. */
__global__ void sbm__k_gemm_copy_u(int64_t nnzb_c, int T, const uint64_t *pairs, const int64_t *seg,
                                   const double *uvals, double *cv)
{
    SBM__GRID_STRIDE(idx, nnzb_c * T)
    {
        const int64_t q = idx / T;
        const int o = (int)(idx - q * T);
        double x = 0.0;
        const int64_t e0 = seg[q];
        if (uvals && e0 < seg[q + 1]) {
            const uint64_t v = pairs[e0]; /* a U entry sorts first within its block */
            if ((uint32_t)v == SBM__U_TAG) x = uvals[(int64_t)(v >> 32) * T + o];
        }
        cv[idx] = x;
    }
}

/* One warp per output block on the FP64 tensor cores (mma.sync m8n8k4, sm_80+): op(A) and
 * op(B) blocks are cut into 8x4 and 4x8 fragments (zero-padded to MT x NT tiles of 8x8 and KS
 * steps of 4), which each lane loads one double of per fragment straight from the stored block
 * (transposed or not). A warp-wide load then covers a whole block column range contiguously,
 * where the thread-per-element kernel issues one load per element and thread; the products of a
 * block are still accumulated in sorted order, with the hardware's fixed order inside each
 * fragment product, so results are deterministic. Fragment layout (PTX ISA, mma.m8n8k4 .f64):
 * A row = lane/4, col = lane%4; B row = lane%4, col = lane/4; D row = lane/4, cols
 * 2*(lane%4) + {0, 1}. */
__device__ __forceinline__ void sbm__dmma(double &d0, double &d1, double a, double b)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                 : "+d"(d0), "+d"(d1)
                 : "d"(a), "d"(b));
#endif
}

/* The fragment offsets of one lane for the m8n8k4 products of an R x K by K x C block pair
 * (op(A) element (8*mi + g, 4*s + t), op(B) element (4*s + t, 8*ni + g)), with the elements
 * outside the blocks masked; shared by the unstaged and the staged tensor-core kernels. */
template <int R, int K, int C, int MT, int NT, int KS>
__device__ __forceinline__ void sbm__dmma_offsets(int g, int t, int ta, int tb, int (&a_off)[MT][KS],
                                                  bool (&a_ok)[MT][KS], int (&b_off)[NT][KS],
                                                  bool (&b_ok)[NT][KS])
{
#pragma unroll
    for (int s = 0; s < KS; s++) {
        const int p = 4 * s + t;
#pragma unroll
        for (int mi = 0; mi < MT; mi++) {
            const int i = 8 * mi + g; /* element (i, p) of op(A) */
            a_ok[mi][s] = i < R && p < K;
            a_off[mi][s] = a_ok[mi][s] ? (ta ? p + i * K : i + p * R) : 0;
        }
#pragma unroll
        for (int ni = 0; ni < NT; ni++) {
            const int j = 8 * ni + g; /* element (p, j) of op(B) */
            b_ok[ni][s] = p < K && j < C;
            b_off[ni][s] = b_ok[ni][s] ? (tb ? j + p * C : p + j * K) : 0;
        }
    }
}

template <int R, int K, int C>
__global__ void __launch_bounds__(256)
    sbm__k_gemm_numeric_dmma(int64_t nnzb_c, int ta, int tb, const uint64_t *__restrict__ pairs,
                             const int64_t *__restrict__ seg, const double *__restrict__ av,
                             const double *__restrict__ bv, const double *__restrict__ uvals,
                             double alpha, double *__restrict__ cv)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    constexpr int MT = (R + 7) / 8, NT = (C + 7) / 8, KS = (K + 3) / 4;
    constexpr int64_t RK = (int64_t)R * K, KC = (int64_t)K * C, T = (int64_t)R * C;
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    int a_off[MT][KS], b_off[NT][KS];
    bool a_ok[MT][KS], b_ok[NT][KS];
    sbm__dmma_offsets<R, K, C>(g, t, ta, tb, a_off, a_ok, b_off, b_ok);
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    for (int64_t q = warp; q < nnzb_c; q += nwarps) {
        double d[MT][NT][2];
#pragma unroll
        for (int mi = 0; mi < MT; mi++)
#pragma unroll
            for (int ni = 0; ni < NT; ni++) d[mi][ni][0] = d[mi][ni][1] = 0.0;
        int64_t u = -1;
        const int64_t e1 = seg[q + 1];
        for (int64_t e = seg[q]; e < e1; e++) { /* warp-uniform: every lane reads entry e */
            const uint64_t v = pairs[e];
            if ((uint32_t)v == SBM__U_TAG) {
                u = (int64_t)(v >> 32);
                continue;
            }
            const double *ap = av + (int64_t)(uint32_t)v * RK;
            const double *bp = bv + (int64_t)(v >> 32) * KC;
            double fa[MT][KS], fb[NT][KS];
#pragma unroll
            for (int s = 0; s < KS; s++) {
#pragma unroll
                for (int mi = 0; mi < MT; mi++) fa[mi][s] = a_ok[mi][s] ? __ldg(ap + a_off[mi][s]) : 0.0;
#pragma unroll
                for (int ni = 0; ni < NT; ni++) fb[ni][s] = b_ok[ni][s] ? __ldg(bp + b_off[ni][s]) : 0.0;
            }
#pragma unroll
            for (int s = 0; s < KS; s++)
#pragma unroll
                for (int mi = 0; mi < MT; mi++)
#pragma unroll
                    for (int ni = 0; ni < NT; ni++) sbm__dmma(d[mi][ni][0], d[mi][ni][1], fa[mi][s], fb[ni][s]);
        }
        /* the CPU backend's order: scale the sum, then add U */
#pragma unroll
        for (int mi = 0; mi < MT; mi++)
#pragma unroll
            for (int ni = 0; ni < NT; ni++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int i = 8 * mi + g, j = 8 * ni + 2 * t + h;
                    if (i < R && j < C) {
                        double x = d[mi][ni][h];
                        if (alpha != 1.0) x *= alpha;
                        if (u >= 0) x += uvals[u * T + i + (int64_t)j * R];
                        cv[q * T + i + (int64_t)j * R] = x;
                    }
                }
    }
#else
    __trap(); /* never selected below sm_80 (see sbm__gemm_numeric_kind) */
#endif
}

typedef void (*sbm__dmma_kernel)(int64_t, int, int, const uint64_t *, const int64_t *,
                                 const double *, const double *, const double *, double, double *);

static sbm__dmma_kernel sbm__select_dmma(int r, int k, int c)
{
#define SBM_X_(R, K, C) \
    if (r == (R) && k == (K) && c == (C)) return sbm__k_gemm_numeric_dmma<R, K, C>;
    SBM_GEMM_TRIPLES(SBM_X_)
#undef SBM_X_
    return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Numeric pass, staged through shared memory                                               */
/* ---------------------------------------------------------------------------------------- */

/* Both kernels above walk an output block's entries one after the other, each a chain of
 * dependent loads (seg -> entry -> operand blocks), so a warp has at most one product's operands
 * in flight: on an H100 they are latency-bound (2D Poisson A*A: dmma flat at 0.45-0.59 ms for
 * b = 2..8, the thread-per-element kernel at 1.1-1.3 TB/s; bench/NOTES-gpu.md). The staged
 * kernels below give every CTA a tile of consecutive output blocks and copy, with cp.async
 * (global -> shared without registers, sm_80+), all the tile's entries and then all their
 * operand blocks into shared memory at once, so a CTA has a whole tile's loads in flight. The
 * CTAs are persistent and software-pipelined: while the operand blocks of tile t are loaded,
 * the entries of the next tile and the output-block offsets of the one after it are loaded
 * too, so each tile costs one round trip to memory, not three. Tiles whose entries exceed the
 * staging capacity are processed in chunks (the accumulators live in registers across chunks),
 * so the order of summation is the sorted order, as in the other kernels. Two ways to compute
 * from shared memory: one thread per output element (CUDA cores; small blocks) or one warp per
 * output block on the FP64 tensor cores (mma.sync m8n8k4), several blocks per warp. Measured
 * (H100, bench/NOTES-gpu.md): 1.05-1.5x faster than the unstaged kernels for b = 2..6, 1.7x on
 * BA; still latency-bound (Nsight Compute: memory and compute both under 45% at b = 6), since a
 * CTA's copy, wait, compute and store run one after the other and about 5 CTAs fit per SM;
 * overlapping them within a CTA (two operand stages) is the next step. */
#define SBM__ST_THREADS 128 /* threads per CTA */
#define SBM__ST_EPT 4       /* output elements per thread (thread-per-element mode) */
#define SBM__ST_VBYTES 32768 /* most bytes of staged operand blocks per chunk */

template <int R, int K, int C, int DMMA>
struct sbm__st_cfg {
    static constexpr int RK = R * K, KC = K * C, T = R * C;
    static constexpr int MT = (R + 7) / 8, NT = (C + 7) / 8, KS = (K + 3) / 4;
    static constexpr int BPW = 8 / (MT * NT) > 0 ? 8 / (MT * NT) : 1; /* blocks per warp */
    static constexpr int NW = SBM__ST_THREADS / 32;
    static constexpr int NB_ = DMMA ? NW * BPW : SBM__ST_THREADS * SBM__ST_EPT / T;
    static constexpr int NBMAX = NB_ > 0 ? NB_ : 1; /* output blocks per tile, at most */
};

/* Host mirror of sbm__st_cfg::NBMAX. */
static int sbm__st_nbmax(int r, int k, int c, int dmma)
{
    if (dmma) {
        const int mt = (r + 7) / 8, nt = (c + 7) / 8;
        const int bpw = 8 / (mt * nt) > 0 ? 8 / (mt * nt) : 1;
        return SBM__ST_THREADS / 32 * bpw;
    }
    const int nb = SBM__ST_THREADS * SBM__ST_EPT / (r * c);
    return nb > 0 ? nb : 1;
}

/* Dynamic shared memory of a tile: operand blocks of ec entries (op(A) blocks, then op(B)
 * blocks from a 16-byte boundary), two buffers of ec entries, three of nbmax+1 offsets. */
static size_t sbm__st_smem(int r, int k, int c, int ec, int nbmax)
{
    const size_t rk = (size_t)r * k, kc = (size_t)k * c;
    return (((size_t)ec * rk + 1) / 2 * 2 + (size_t)ec * kc) * sizeof(double) +
           2 * (size_t)ec * sizeof(uint64_t) + 3 * (size_t)(nbmax + 1) * sizeof(int64_t);
}

template <int BYTES>
__device__ __forceinline__ void sbm__cp_async(void *smem, const void *gmem)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(gmem), "n"(BYTES)
                 : "memory");
#else
    if (BYTES == 16) *(double2 *)smem = *(const double2 *)gmem;
    else *(uint64_t *)smem = *(const uint64_t *)gmem;
#endif
}

/* Wait for all of this thread's copies (the caller's __syncthreads then publishes them). */
__device__ __forceinline__ void sbm__cp_async_wait_all()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
#endif
}

/* Copy n 8-byte words src[0..n) to dst[0..n) (CTA-wide). */
__device__ __forceinline__ void sbm__st_copy_words(void *dst, const void *src, int n)
{
    for (int i = threadIdx.x; i < n; i += SBM__ST_THREADS)
        sbm__cp_async<8>((uint64_t *)dst + i, (const uint64_t *)src + i);
}

/* Copy the stored blocks of entries P[0..ne) (A index low, B index high) into s_a and s_b;
 * U entries have no operand blocks. 16-byte copies when the block size is even and the source
 * is 16-byte aligned. */
template <int RK, int KC>
__device__ __forceinline__ void sbm__st_stage(int ne, const uint64_t *P, const double *av,
                                              const double *bv, double *s_a, double *s_b,
                                              bool v16a, bool v16b)
{
    constexpr int HA = RK / 2 > 0 ? RK / 2 : 1, HB = KC / 2 > 0 ? KC / 2 : 1;
    const int tid = threadIdx.x;
    if (v16a) {
        for (int x = tid; x < ne * HA; x += SBM__ST_THREADS) {
            const int e = x / HA, w = x - e * HA;
            const uint32_t a = (uint32_t)P[e];
            if (a != SBM__U_TAG)
                sbm__cp_async<16>(s_a + e * RK + 2 * w, av + (int64_t)a * RK + 2 * w);
        }
    } else {
        for (int x = tid; x < ne * RK; x += SBM__ST_THREADS) {
            const int e = x / RK, w = x - e * RK;
            const uint32_t a = (uint32_t)P[e];
            if (a != SBM__U_TAG) sbm__cp_async<8>(s_a + e * RK + w, av + (int64_t)a * RK + w);
        }
    }
    if (v16b) {
        for (int x = tid; x < ne * HB; x += SBM__ST_THREADS) {
            const int e = x / HB, w = x - e * HB;
            const uint64_t v = P[e];
            if ((uint32_t)v != SBM__U_TAG)
                sbm__cp_async<16>(s_b + e * KC + 2 * w, bv + (int64_t)(v >> 32) * KC + 2 * w);
        }
    } else {
        for (int x = tid; x < ne * KC; x += SBM__ST_THREADS) {
            const int e = x / KC, w = x - e * KC;
            const uint64_t v = P[e];
            if ((uint32_t)v != SBM__U_TAG)
                sbm__cp_async<8>(s_b + e * KC + w, bv + (int64_t)(v >> 32) * KC + w);
        }
    }
}

/* Tile t is output blocks [t*nb, t*nb + nb) (fewer in the last tile), its entries
 * [seg[t*nb], seg[t*nb + nbt]) processed in chunks of at most ec. The grid is persistent: CTA
 * b takes tiles b, b + gridDim.x, ... DMMA selects the compute mode (see above). */
template <int R, int K, int C, int DMMA>
__global__ void __launch_bounds__(SBM__ST_THREADS, DMMA ? 6 : 8)
    sbm__k_gemm_staged(int64_t nnzb_c, int64_t ntiles, int nb, int ec, int ta, int tb,
                       const uint64_t *__restrict__ pairs, const int64_t *__restrict__ seg,
                       const double *__restrict__ av, const double *__restrict__ bv,
                       const double *__restrict__ uvals, double alpha, double *__restrict__ cv)
{
    typedef sbm__st_cfg<R, K, C, DMMA> cfg;
    constexpr int RK = cfg::RK, KC = cfg::KC, T = cfg::T, NBMAX = cfg::NBMAX;
    constexpr int MT = cfg::MT, NT = cfg::NT, KS = cfg::KS, BPW = cfg::BPW, NW = cfg::NW;
    constexpr int EPT = SBM__ST_EPT, NTH = SBM__ST_THREADS;
    extern __shared__ __align__(16) unsigned char sbm__st_mem[];
    double *s_a = (double *)sbm__st_mem;
    double *s_b = s_a + ((int64_t)ec * RK + 1) / 2 * 2;
    uint64_t *s_p = (uint64_t *)(s_b + (int64_t)ec * KC); /* 2 buffers of ec entries */
    int64_t *s_s = (int64_t *)(s_p + 2 * (int64_t)ec);    /* 3 buffers of NBMAX+1 offsets */
    const int tid = threadIdx.x;
    const bool v16a = RK % 2 == 0 && ((uintptr_t)av & 15) == 0;
    const bool v16b = KC % 2 == 0 && ((uintptr_t)bv & 15) == 0;
    const int64_t G = gridDim.x;
    int64_t tile = blockIdx.x;
    if (tile >= ntiles) return;

    /* per-thread constants of the compute modes */
    const int lane = tid & 31, warp = tid >> 5, g = lane >> 2, t4 = lane & 3;
    int a_off[MT][KS], b_off[NT][KS];
    bool a_ok[MT][KS], b_ok[NT][KS];
    if (DMMA) {
        sbm__dmma_offsets<R, K, C>(g, t4, ta, tb, a_off, a_ok, b_off, b_ok);
    }

    /* prologue: offsets of the first tile; then its first entries and the next tile's offsets */
    {
        const int64_t q0 = tile * nb;
        const int nbt = (int)(nnzb_c - q0 < nb ? nnzb_c - q0 : nb);
        sbm__st_copy_words(s_s, seg + q0, nbt + 1);
        sbm__cp_async_wait_all();
        __syncthreads();
        const int64_t E0 = s_s[0], E1 = s_s[nbt];
        sbm__st_copy_words(s_p, pairs + E0, (int)(E1 - E0 < ec ? E1 - E0 : ec));
        if (tile + G < ntiles) {
            const int64_t q1 = (tile + G) * nb;
            const int nbt1 = (int)(nnzb_c - q1 < nb ? nnzb_c - q1 : nb);
            sbm__st_copy_words(s_s + (NBMAX + 1), seg + q1, nbt1 + 1);
        }
        sbm__cp_async_wait_all();
        __syncthreads();
    }

    for (int it = 0;; it++) {
        /* here: S holds this tile's offsets, Pc its first chunk of entries, and (if any) the
         * next tile's offsets are in the following offset buffer */
        const int64_t *S = s_s + (it % 3) * (NBMAX + 1);
        uint64_t *Pc = s_p + (it & 1) * (int64_t)ec;
        const int64_t q0 = tile * nb;
        const int nbt = (int)(nnzb_c - q0 < nb ? nnzb_c - q0 : nb);
        const int64_t E0 = S[0], E1 = S[nbt];
        const int64_t next = tile + G;
        double acc[EPT];
        double d[BPW][MT][NT][2];
#pragma unroll
        for (int u = 0; u < EPT; u++) acc[u] = 0.0;
#pragma unroll
        for (int m = 0; m < BPW; m++)
#pragma unroll
            for (int mi = 0; mi < MT; mi++)
#pragma unroll
                for (int ni = 0; ni < NT; ni++) d[m][mi][ni][0] = d[m][mi][ni][1] = 0.0;

        for (int64_t c0 = E0; c0 < E1; c0 += ec) {
            const int ne = (int)(E1 - c0 < ec ? E1 - c0 : ec);
            if (c0 != E0) { /* a later chunk of a large tile: its entries were not prefetched */
                __syncthreads();
                sbm__st_copy_words(Pc, pairs + c0, ne);
                sbm__cp_async_wait_all();
                __syncthreads();
            }
            sbm__st_stage<RK, KC>(ne, Pc, av, bv, s_a, s_b, v16a, v16b);
            if (c0 == E0 && next < ntiles) {
                /* prefetch: the next tile's first entries, the offsets of the one after it */
                const int64_t *S1 = s_s + ((it + 1) % 3) * (NBMAX + 1);
                const int64_t q1 = next * nb;
                const int nbt1 = (int)(nnzb_c - q1 < nb ? nnzb_c - q1 : nb);
                const int64_t F0 = S1[0], F1 = S1[nbt1];
                sbm__st_copy_words(s_p + ((it + 1) & 1) * (int64_t)ec, pairs + F0,
                                   (int)(F1 - F0 < ec ? F1 - F0 : ec));
                if (next + G < ntiles) {
                    const int64_t q2 = (next + G) * nb;
                    const int nbt2 = (int)(nnzb_c - q2 < nb ? nnzb_c - q2 : nb);
                    sbm__st_copy_words(s_s + ((it + 2) % 3) * (NBMAX + 1), seg + q2, nbt2 + 1);
                }
            }
            sbm__cp_async_wait_all();
            __syncthreads();

            if (!DMMA) {
#pragma unroll
                for (int u = 0; u < EPT; u++) {
                    const int o = tid + u * NTH;
                    if (o < nbt * T) {
                        const int ql = o / T, w = o - ql * T, i = w % R, j = w / R;
                        const int a0 = ta ? i * K : i, as = ta ? 1 : R;
                        const int b0 = tb ? j : j * K, bs = tb ? C : 1;
                        const int lo = (int)((S[ql] > c0 ? S[ql] : c0) - c0);
                        const int hi = (int)((S[ql + 1] < c0 + ne ? S[ql + 1] : c0 + ne) - c0);
                        double x = acc[u];
                        for (int e = lo; e < hi; e++) {
                            if ((uint32_t)Pc[e] == SBM__U_TAG) continue;
                            const double *ap = s_a + e * RK + a0, *bp = s_b + e * KC + b0;
#pragma unroll
                            for (int p = 0; p < K; p++) x += ap[p * as] * bp[p * bs];
                        }
                        acc[u] = x;
                    }
                }
            } else {
#pragma unroll
                for (int m = 0; m < BPW; m++) {
                    const int ql = warp + m * NW;
                    if (ql < nbt) { /* warp-uniform */
                        const int lo = (int)((S[ql] > c0 ? S[ql] : c0) - c0);
                        const int hi = (int)((S[ql + 1] < c0 + ne ? S[ql + 1] : c0 + ne) - c0);
                        for (int e = lo; e < hi; e++) {
                            if ((uint32_t)Pc[e] == SBM__U_TAG) continue;
                            const double *ap = s_a + e * RK, *bp = s_b + e * KC;
                            double fa[MT][KS], fb[NT][KS];
#pragma unroll
                            for (int s = 0; s < KS; s++) {
#pragma unroll
                                for (int mi = 0; mi < MT; mi++) fa[mi][s] = a_ok[mi][s] ? ap[a_off[mi][s]] : 0.0;
#pragma unroll
                                for (int ni = 0; ni < NT; ni++) fb[ni][s] = b_ok[ni][s] ? bp[b_off[ni][s]] : 0.0;
                            }
#pragma unroll
                            for (int s = 0; s < KS; s++)
#pragma unroll
                                for (int mi = 0; mi < MT; mi++)
#pragma unroll
                                    for (int ni = 0; ni < NT; ni++)
                                        sbm__dmma(d[m][mi][ni][0], d[m][mi][ni][1], fa[mi][s], fb[ni][s]);
                        }
                    }
                }
            }
        }

        /* write the tile: the CPU backend's order, scale the sum, then add U (a U entry is the
         * first of its output block) */
        if (!DMMA) {
#pragma unroll
            for (int u = 0; u < EPT; u++) {
                const int o = tid + u * NTH;
                if (o < nbt * T) {
                    const int ql = o / T, w = o - ql * T;
                    double x = acc[u];
                    if (alpha != 1.0) x *= alpha;
                    if (uvals) {
                        const uint64_t v = pairs[S[ql]];
                        if ((uint32_t)v == SBM__U_TAG) x += uvals[(int64_t)(v >> 32) * T + w];
                    }
                    cv[q0 * T + o] = x;
                }
            }
        } else {
#pragma unroll
            for (int m = 0; m < BPW; m++) {
                const int ql = warp + m * NW;
                if (ql < nbt) {
                    const int64_t q = q0 + ql;
                    int64_t ub = -1;
                    if (uvals) {
                        const uint64_t v = pairs[S[ql]];
                        if ((uint32_t)v == SBM__U_TAG) ub = (int64_t)(v >> 32);
                    }
#pragma unroll
                    for (int mi = 0; mi < MT; mi++)
#pragma unroll
                        for (int ni = 0; ni < NT; ni++)
#pragma unroll
                            for (int h = 0; h < 2; h++) {
                                const int i = 8 * mi + g, j = 8 * ni + 2 * t4 + h;
                                if (i < R && j < C) {
                                    double x = d[m][mi][ni][h];
                                    if (alpha != 1.0) x *= alpha;
                                    if (ub >= 0) x += uvals[ub * T + i + (int64_t)j * R];
                                    cv[q * T + i + (int64_t)j * R] = x;
                                }
                            }
                }
            }
        }
        tile = next;
        if (tile >= ntiles) break;
        __syncthreads(); /* every thread is done with this tile's buffers */
    }
}

typedef void (*sbm__staged_kernel)(int64_t, int64_t, int, int, int, int, const uint64_t *,
                                   const int64_t *, const double *, const double *,
                                   const double *, double, double *);

static sbm__staged_kernel sbm__select_staged(int r, int k, int c, int dmma)
{
#define SBM_X_(R, K, C)                                                                        \
    if (r == (R) && k == (K) && c == (C))                                                      \
        return dmma ? sbm__k_gemm_staged<R, K, C, 1> : sbm__k_gemm_staged<R, K, C, 0>;
    SBM_GEMM_TRIPLES(SBM_X_)
#undef SBM_X_
    return NULL;
}

/* Numeric kernels of a plan (sbm__gpu_plan.numeric). */
enum {
    SBM__NUM_TEAM = 0,  /* one thread per output element, operands from global memory */
    SBM__NUM_DMMA = 1,  /* one warp per output block on the tensor cores, from global memory */
    SBM__NUM_STAGE = 2, /* staged tiles, one thread per output element */
    SBM__NUM_SDMMA = 3  /* staged tiles, one warp per output block on the tensor cores */
};

/* Numeric kernel for a fast triple (the generic path is always SBM__NUM_TEAM). Measured on an
 * H100 (bench/NOTES-gpu.md, runs 1 and 2 of 2026-11-22; execute ms, 2D Poisson A*A, run 2,
 * team / dmma / stage / sdmma): 1x1 0.026 / 0.275 / 0.030 / 0.198, 2x2 0.074 / 0.420 / 0.060 /
 * 0.205, 3x3 0.160 / 0.450 / 0.153 / 0.221, 4x4 0.260 / 0.473 / 0.188 / 0.237, 5x5 0.545 /
 * 0.537 / 0.422 / 0.369, 6x6 0.987 / 0.561 / 0.508 / 0.406, 7x7 1.453 / 0.592 / 0.882 / 0.582,
 * 8x8 1.272 / 0.583 / 0.897 / 0.581; 3D Poisson 7x7 dmma 0.776 / sdmma 0.786, 8x8 0.795 / 0.745;
 * BA 9x3x9 dmma 1.057 / sdmma 0.802 / sdmma one tile per CTA 0.607, BA 6x3x6 0.690 / 0.501 /
 * 0.392. Hence: staged tiles, one thread per element up to 16 elements per block and the tensor
 * cores above; 1x1x1 stays one thread per element from global memory, and 7x7x7 on the
 * unstaged tensor-core kernel (staged not faster: 2D 1.7% faster, 3D 1.3% slower, both runs).
 * Small products (fewer tiles than resident CTAs) keep the unstaged kernels too: see
 * sbm__stage_setup. The context's tuning (gemm_numeric) overrides, for measurements and tests:
 * team, dmma, stage, sdmma (persistent grid), stage and sdmma one tile per CTA. *persist: 1 or 0 when
 * forced, else -1 (decided in sbm__stage_setup); *forced: the kernel was forced. */
static int sbm__gemm_numeric_kind(sbm_ctx *ctx, int r, int k, int c, int *persist, int *forced)
{
    *persist = -1;
    *forced = 1;
    if (!sbm__select_dmma(r, k, c) || sbm__cuda_st(ctx)->prop.major < 8) return SBM__NUM_TEAM;
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

typedef void (*sbm__numeric_kernel)(int64_t, int, int, int, int, int, const uint64_t *,
                                    const int64_t *, const double *, const double *,
                                    const double *, double, double *);

static sbm__numeric_kernel sbm__select_numeric(int r, int k, int c, int *fast)
{
    *fast = 1;
#define SBM_X_(R, K, C) \
    if (r == (R) && k == (K) && c == (C)) return sbm__k_gemm_numeric<R, K, C>;
    SBM_GEMM_TRIPLES(SBM_X_)
#undef SBM_X_
    *fast = 0;
    return sbm__k_gemm_numeric<0, 0, 0>;
}

/* ---------------------------------------------------------------------------------------- */
/* Plan                                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* Tile geometry of the staged kernels: as many output blocks per tile as the compute mode
 * holds (sbm__st_cfg::NBMAX), with room for 1.25 times their mean number of entries, unless the
 * operand blocks of that many entries exceed SBM__ST_VBYTES: then fewer blocks per tile. Tiles
 * with more entries are processed in chunks. Unless forced (tuning gemm_numeric), a product
 * with fewer tiles than CTAs resident at once goes back to the unstaged kernel: the staged ones
 * need several tiles per CTA to overlap their phases, and the g2o products (4-8 k blocks of C,
 * 76-345 tiles) ran faster unstaged (run 2: parking-garage 6x6x6 0.016 ms unstaged, 0.021
 * staged). The grid: persistent (as many CTAs as are resident at once, occupancy API), unless
 * some output block has more entries than a chunk, then one CTA per tile (see below).
 * The tuning's gemm_tile_blocks, _entries and _grid override the geometry (for tests: tiny
 * tiles, chunks and grids reach every path of the kernels). */
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
    sbm__staged_kernel kern = sbm__select_staged(P->r, P->k, P->c, dm);
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
         * output block with more entries than a chunk makes its tile several times slower
         * (BA: camera blocks of ~600 entries), and one tile per CTA lets the hardware balance
         * (run 2: BA 9x3x9 0.802 ms persistent, 0.607 one tile per CTA). */
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

/* Sort variant (see the header): the segmented sort for short output columns, the packed-key
 * radix sort for long ones, where its few full passes beat the segmented sort's per-segment
 * work. Measured on an H100 (bench/RESULTS.md, plan ms segmented / radix): 2D Poisson (25
 * entries per column) 0.86-1.19 / 1.02-1.32; BA 1000 cameras (2100 per column) 1.07 / 0.92;
 * BA 5000 cameras (2900 per column) 4.80 / 4.52. The tuning's gemm_sort overrides. */
static int sbm__gemm_use_radix(const sbm_ctx *ctx, int64_t entries, int64_t nbc)
{
    if (ctx->tuning.gemm_sort == SBM_TUNE_GEMM_SORT_RADIX) return 1;
    if (ctx->tuning.gemm_sort == SBM_TUNE_GEMM_SORT_SEGMENTED) return 0;
    return nbc > 0 && entries / nbc >= 256;
}

/* Workspace of sorting a slice of n entries in ns columns (keys in/out, values in, segment
 * offsets, CUB's temporary storage). */
static sbm_status sbm__slice_bytes(sbm_ctx *ctx, int radix, int key_bytes, int64_t n, int64_t ns,
                                   size_t *bytes)
{
    size_t temp = 0;
    sbm__carve cv = {0};
    sbm__carve_add(&cv, (size_t)n * key_bytes);
    sbm__carve_add(&cv, (size_t)n * key_bytes);
    sbm__carve_add(&cv, (size_t)n * sizeof(uint64_t));
    sbm__carve_add(&cv, (size_t)(ns + 1) * sizeof(int64_t));
    if (radix)
        SBM__TRY(sbm__cuda_radix_pairs_temp(ctx, key_bytes, n, &temp));
    else
        SBM__TRY(sbm__cuda_segsort_pairs_temp(ctx, n, ns, NULL, &temp));
    *bytes = cv.total + temp;
    return SBM_SUCCESS;
}

/* Cut columns [0, nbc) into slices whose sort workspace fits the budget; cuts[0..ns] on the
 * host (malloc'd). A column is the smallest slice: one whose workspace alone exceeds the budget
 * is sorted on its own (the budget is then exceeded by that column's minimum, as the CPU
 * backend's scatter mode exceeds a budget smaller than its row map); if the device cannot
 * provide even that, the allocation fails with SBM_ERR_OUT_OF_MEMORY. */
static sbm_status sbm__plan_slices(sbm_ctx *ctx, int radix, int key_bytes, int64_t nbc,
                                   const int64_t *coloff, size_t budget, int64_t **cuts_out,
                                   int64_t *nslices)
{
    const int64_t total = coloff[nbc];
    size_t need = 0;
    int64_t *cuts = NULL;
    *cuts_out = NULL;
    *nslices = 0;
    SBM__TRY(sbm__slice_bytes(ctx, radix, key_bytes, total, nbc, &need));
    cuts = (int64_t *)malloc((size_t)(nbc + 2) * sizeof(int64_t));
    if (!cuts)
        return sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory "
                          "for the slice table", (size_t)(nbc + 2) * sizeof(int64_t));
    cuts[0] = 0;
    if (need <= budget || total == 0 || nbc <= 1) {
        cuts[1] = nbc;
        *cuts_out = cuts;
        *nslices = 1;
        return SBM_SUCCESS;
    }
    /* entries per slice in proportion to the budget; shrink until every slice of more than one
     * column fits */
    double cap = (double)total * ((double)budget / (double)need) * 0.9;
    for (int attempt = 0; attempt < 40; attempt++, cap *= 0.75) {
        int64_t ns = 0, j = 0;
        int ok = 1;
        while (j < nbc) {
            int64_t j1 = j + 1;
            while (j1 < nbc && (double)(coloff[j1 + 1] - coloff[j]) <= cap) j1++;
            if (j1 > j + 1) {
                size_t b = 0;
                sbm_status st = sbm__slice_bytes(ctx, radix, key_bytes, coloff[j1] - coloff[j],
                                                 j1 - j, &b);
                if (st != SBM_SUCCESS) {
                    free(cuts);
                    return st;
                }
                if (b > budget) {
                    ok = 0;
                    break;
                }
            }
            cuts[++ns] = j1;
            j = j1;
        }
        if (ok) {
            *cuts_out = cuts;
            *nslices = ns;
            return SBM_SUCCESS;
        }
    }
    /* one column per slice always qualifies */
    for (int64_t j = 0; j <= nbc; j++) cuts[j] = j;
    *cuts_out = cuts;
    *nslices = nbc;
    return SBM_SUCCESS;
}

sbm_status sbm__cuda_gemm_plan(sbm_ctx *ctx, sbm_op op_a, const sbm_cbc *A, sbm_op op_b,
                               const sbm_cbc *B, const sbm_cbc *U, unsigned flags,
                               sbm_gemm_plan **plan, sbm_cbc **Cout)
{
    const int upper = (flags & SBM_GEMM_UPPER) != 0;
    const int ta = op_a == SBM_OP_T, tb = op_b == SBM_OP_T;
    const int64_t nbr = ta ? A->nbc : A->nbr; /* C is nbr x nbc blocks of r x c */
    const int64_t nbk = ta ? A->nbr : A->nbc; /* inner dimension (op(A) columns) */
    const int64_t nbc = tb ? B->nbr : B->nbc;
    const int r = ta ? A->c : A->r, k = ta ? A->r : A->c, c = tb ? B->r : B->c;
    const int64_t nnzA = A->nnzb, nnzB = B->nnzb;
    int radix = 0;
    cudaStream_t s = sbm__cuda_stream(ctx);
    sbm_status st = SBM_SUCCESS;
    sbm__gpu_plan *P = NULL;
    sbm_cbc *C = NULL;
    int64_t *h_off = NULL, *h_up = NULL, *h_pb = NULL, *cuts = NULL;
    int64_t nslices = 0, products = 0, entries = 0, nnzb_c = 0;
    size_t budget = 0;
    int key_bytes = 4, rbits = sbm__bits_for(nbr + 1), fast = 0;
    char *base = NULL, *sbase = NULL;
    sbm__carve cv = {0};
    size_t o_tap = 0, o_tai = 0, o_taperm = 0, o_tbp = 0, o_tbi = 0, o_tbperm = 0, o_acol = 0;
    size_t o_bprods, o_bcol, o_ucum, o_pcol, o_coloff, o_ccnt;
    const int64_t *ptrA = A->colptr, *ptrB = B->colptr, *permA = NULL, *permB = NULL;
    const int32_t *indA = A->rowind, *indB = B->rowind, *arow = A->rowind;
    int64_t *bprods, *ucum, *pcol, *coloff, *ccnt;
    int32_t *bcol;
    (void)nbk;
    *plan = NULL;
    *Cout = NULL;
    SBM__CK(sbm__cuda_enter(ctx));
    if (nnzA >= (int64_t)SBM__U_TAG || nnzB > (int64_t)UINT32_MAX ||
        (U && U->nnzb > (int64_t)UINT32_MAX)) {
        st = sbm__error(ctx, SBM_ERR_OVERFLOW,
                        "operand pointers are stored as 32-bit block indices, but A has %" PRId64
                        " and B %" PRId64 " blocks",
                        nnzA, nnzB);
        goto done;
    }

    /* ---- setup workspace (pool slot OP_A), alive for the whole plan ---- */
    if (ta) {
        o_tap = sbm__carve_add(&cv, (size_t)(A->nbr + 1) * sizeof(int64_t));
        o_tai = sbm__carve_add(&cv, (size_t)nnzA * sizeof(int32_t));
        o_taperm = sbm__carve_add(&cv, (size_t)nnzA * sizeof(int64_t));
        o_acol = sbm__carve_add(&cv, (size_t)nnzA * sizeof(int32_t));
    }
    if (tb) {
        o_tbp = sbm__carve_add(&cv, (size_t)(B->nbr + 1) * sizeof(int64_t));
        o_tbi = sbm__carve_add(&cv, (size_t)nnzB * sizeof(int32_t));
        o_tbperm = sbm__carve_add(&cv, (size_t)nnzB * sizeof(int64_t));
    }
    o_bprods = sbm__carve_add(&cv, (size_t)(nnzB + 1) * sizeof(int64_t));
    o_bcol = sbm__carve_add(&cv, (size_t)nnzB * sizeof(int32_t));
    o_ucum = sbm__carve_add(&cv, (size_t)(nbc + 1) * sizeof(int64_t));
    o_pcol = sbm__carve_add(&cv, (size_t)(nbc + 1) * sizeof(int64_t));
    o_coloff = sbm__carve_add(&cv, (size_t)(nbc + 1) * sizeof(int64_t));
    o_ccnt = sbm__carve_add(&cv, (size_t)(nbc + 1) * sizeof(int64_t));
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, cv.total, (void **)&base));
    bprods = (int64_t *)(base + o_bprods);
    bcol = (int32_t *)(base + o_bcol);
    ucum = (int64_t *)(base + o_ucum);
    pcol = (int64_t *)(base + o_pcol);
    coloff = (int64_t *)(base + o_coloff);
    ccnt = (int64_t *)(base + o_ccnt);

    /* op(A), op(B) as block-CSC patterns; a transposed operand gets its transposed pattern and
     * the permutation back to its stored blocks */
    if (ta) {
        int64_t *tp = (int64_t *)(base + o_tap), *tperm = (int64_t *)(base + o_taperm);
        int32_t *ti = (int32_t *)(base + o_tai), *acol = (int32_t *)(base + o_acol);
        SBM__CK(sbm__cuda_pattern_transpose(ctx, SBM__WS_PRIM, A->nbc, A->nbr, nnzA, A->colptr,
                                            A->rowind, tp, ti, tperm));
        if (nnzA > 0) {
            sbm__k_block_cols<<<sbm__grid(nnzA, 256), 256, 0, s>>>(A->nbc, nnzA, A->colptr, acol);
            SBM__LAUNCHED(ctx, "block columns of A");
        }
        ptrA = tp;
        indA = ti;
        permA = tperm;
        arow = acol; /* the op(A) row of a stored block is its column in A */
    }
    if (tb) {
        int64_t *tp = (int64_t *)(base + o_tbp), *tperm = (int64_t *)(base + o_tbperm);
        int32_t *ti = (int32_t *)(base + o_tbi);
        SBM__CK(sbm__cuda_pattern_transpose(ctx, SBM__WS_PRIM, B->nbc, B->nbr, nnzB, B->colptr,
                                            B->rowind, tp, ti, tperm));
        ptrB = tp;
        indB = ti;
        permB = tperm;
    }

    /* Algorithm 1: product counts per op(B) block, exclusive scan -> offsets and total */
    sbm__k_gemm_counts<<<sbm__grid(nnzB + 1, 256), 256, 0, s>>>(nbc, nnzB, ptrB, indB, ptrA, indA,
                                                               upper, bcol, bprods);
    SBM__LAUNCHED(ctx, "product counts");
    SBM__CK(sbm__cuda_scan_i64(ctx, bprods, bprods, nnzB + 1));
    sbm__k_gemm_ukeep<<<sbm__grid(nbc + 1, 256), 256, 0, s>>>(nbc, U ? U->colptr : NULL,
                                                             U ? U->rowind : NULL, upper, ucum);
    SBM__LAUNCHED(ctx, "U entries per column");
    SBM__CK(sbm__cuda_scan_i64(ctx, ucum, ucum, nbc + 1));
    sbm__k_gemm_coloff<<<sbm__grid(nbc + 1, 256), 256, 0, s>>>(nbc, ptrB, bprods, ucum, pcol, coloff);
    SBM__LAUNCHED(ctx, "column offsets");

    /* the host needs the column offsets to cut slices and size the plan */
    h_off = (int64_t *)malloc((size_t)(4 * (nbc + 1)) * sizeof(int64_t));
    if (!h_off) {
        st = sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory for "
                        "column offsets", (size_t)(4 * (nbc + 1)) * sizeof(int64_t));
        goto done;
    }
    h_up = h_off + 2 * (nbc + 1);
    h_pb = h_off + 3 * (nbc + 1);
    SBM__CK(sbm__cuda_d2h(ctx, h_pb, ptrB, (size_t)(nbc + 1) * sizeof(int64_t)));
    SBM__CK(sbm__cuda_d2h(ctx, h_off, coloff, (size_t)(nbc + 1) * sizeof(int64_t)));
    SBM__CK(sbm__cuda_d2h(ctx, h_off + (nbc + 1), pcol, (size_t)(nbc + 1) * sizeof(int64_t)));
    if (U) SBM__CK(sbm__cuda_d2h(ctx, h_up, U->colptr, (size_t)(nbc + 1) * sizeof(int64_t)));
    entries = h_off[nbc];
    products = h_off[(nbc + 1) + nbc];

    /* ---- the plan ---- */
    P = (sbm__gpu_plan *)calloc(1, sizeof *P);
    if (!P) {
        st = sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes for a plan", sizeof *P);
        goto done;
    }
    P->al = ctx->allocator;
    P->h.backend = ctx->backend;
    P->h.device = ctx->device;
    P->h.ops = ctx->ops;
    P->op_a = op_a;
    P->op_b = op_b;
    P->flags = flags;
    P->r = r;
    P->k = k;
    P->c = c;
    P->has_u = U != NULL;
    P->entries = entries;
    {
        int ok = 1;
        size_t pbytes = sbm__mul_size(ctx, (size_t)entries, sizeof(uint64_t), "plan entries", &ok);
        if (!ok) {
            st = SBM_ERR_OVERFLOW;
            goto done;
        }
        P->pairs = (uint64_t *)sbm__alloc(ctx, pbytes, "the sorted expansion of the plan");
        if (!P->pairs) {
            st = SBM_ERR_OUT_OF_MEMORY;
            goto done;
        }
    }

    /* ---- slices: expansion and sort (Algorithm 2) ---- */
    radix = sbm__gemm_use_radix(ctx, entries, nbc);
    /* packed radix keys need (column within the slice, row) bits: 32-bit keys when they fit */
    if (radix) key_bytes = rbits + sbm__bits_for(nbc + 1) <= 32 ? 4 : 8;
    SBM__CK(sbm__cuda_budget(ctx, &budget));
    SBM__CK(sbm__plan_slices(ctx, radix, key_bytes, nbc, h_off, budget, &cuts, &nslices));
    {
        sbm__carve sc = {0};
        int64_t worst_n = 0, worst_ns = 0;
        for (int64_t t = 0; t < nslices; t++) {
            const int64_t n = h_off[cuts[t + 1]] - h_off[cuts[t]];
            if (n > worst_n) worst_n = n;
            if (cuts[t + 1] - cuts[t] > worst_ns) worst_ns = cuts[t + 1] - cuts[t];
        }
        sbm__carve_add(&sc, (size_t)worst_n * key_bytes);
        sbm__carve_add(&sc, (size_t)worst_n * key_bytes);
        sbm__carve_add(&sc, (size_t)worst_n * sizeof(uint64_t));
        sbm__carve_add(&sc, (size_t)(worst_ns + 1) * sizeof(int64_t));
        SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_B, sc.total, (void **)&sbase));
    }
    for (int64_t t = 0; t < nslices; t++) {
        const int64_t j0 = cuts[t], j1 = cuts[t + 1], ns = j1 - j0;
        const int64_t E0 = h_off[j0], E1 = h_off[j1], n = E1 - E0;
        const int64_t P0 = h_off[(nbc + 1) + j0], P1 = h_off[(nbc + 1) + j1];
        int64_t eb_lo = 0, eb_hi = 0, per;
        sbm__carve sc = {0};
        const size_t o_kin = sbm__carve_add(&sc, (size_t)n * key_bytes);
        const size_t o_kout = sbm__carve_add(&sc, (size_t)n * key_bytes);
        const size_t o_vin = sbm__carve_add(&sc, (size_t)n * sizeof(uint64_t));
        const size_t o_off = sbm__carve_add(&sc, (size_t)(ns + 1) * sizeof(int64_t));
        void *kin = sbase + o_kin, *kout = sbase + o_kout;
        uint64_t *vin = (uint64_t *)(sbase + o_vin);
        int64_t *off = (int64_t *)(sbase + o_off);
        const int sbits = radix ? rbits + sbm__bits_for(ns + 1) : 0;
        const int kmode = !radix ? SBM__KEY_ROW32 : key_bytes == 4 ? SBM__KEY_PACK32 : SBM__KEY_PACK64;
        if (n == 0) continue;
        /* op(B) blocks of the slice: [ptrB[j0], ptrB[j1]) */
        eb_lo = h_pb[j0];
        eb_hi = h_pb[j1];
        /* Equal work per thread (Algorithm 2, lines 19-21). Few products per thread keep a
         * warp's stores to neighbouring entries (coalesced) and leave enough threads in flight;
         * at most 8 waves of a full GPU bound the binary searches for huge expansions. */
        {
            const int64_t hw = (int64_t)sbm__cuda_st(ctx)->prop.multiProcessorCount * 2048 * 8;
            per = (P1 - P0 + hw - 1) / hw;
            if (per < 4) per = 4;
        }
        if (P1 > P0) {
            const int64_t nth = (P1 - P0 + per - 1) / per;
            const unsigned g = sbm__grid(nth, 256);
            if (kmode == SBM__KEY_ROW32)
                sbm__k_gemm_expand<SBM__KEY_ROW32><<<g, 256, 0, s>>>(
                    P0, P1, per, eb_lo, eb_hi, bprods, bcol, indB, permB, ptrA, indA, permA, ucum,
                    E0, j0, rbits, kin, vin);
            else if (kmode == SBM__KEY_PACK32)
                sbm__k_gemm_expand<SBM__KEY_PACK32><<<g, 256, 0, s>>>(
                    P0, P1, per, eb_lo, eb_hi, bprods, bcol, indB, permB, ptrA, indA, permA, ucum,
                    E0, j0, rbits, kin, vin);
            else
                sbm__k_gemm_expand<SBM__KEY_PACK64><<<g, 256, 0, s>>>(
                    P0, P1, per, eb_lo, eb_hi, bprods, bcol, indB, permB, ptrA, indA, permA, ucum,
                    E0, j0, rbits, kin, vin);
            SBM__LAUNCHED(ctx, "expansion");
        }
        if (U && h_up[j1] > h_up[j0]) {
            const int64_t u_lo = h_up[j0], u_hi = h_up[j1];
            const unsigned g = sbm__grid(u_hi - u_lo, 256);
            if (kmode == SBM__KEY_ROW32)
                sbm__k_gemm_expand_u<SBM__KEY_ROW32><<<g, 256, 0, s>>>(
                    u_lo, u_hi, j0, j1, U->colptr, U->rowind, ucum, coloff, E0, rbits, kin, vin);
            else if (kmode == SBM__KEY_PACK32)
                sbm__k_gemm_expand_u<SBM__KEY_PACK32><<<g, 256, 0, s>>>(
                    u_lo, u_hi, j0, j1, U->colptr, U->rowind, ucum, coloff, E0, rbits, kin, vin);
            else
                sbm__k_gemm_expand_u<SBM__KEY_PACK64><<<g, 256, 0, s>>>(
                    u_lo, u_hi, j0, j1, U->colptr, U->rowind, ucum, coloff, E0, rbits, kin, vin);
            SBM__LAUNCHED(ctx, "expansion of U");
        }
        if (!radix) {
            sbm__k_gemm_seg_offsets<<<sbm__grid(ns + 1, 256), 256, 0, s>>>(ns, j0, E0, coloff, off);
            SBM__LAUNCHED(ctx, "segment offsets");
            SBM__CK(sbm__cuda_segsort_pairs(ctx, (const int32_t *)kin, (int32_t *)kout, vin,
                                            P->pairs + E0, n, ns, off));
        } else if (key_bytes == 4) {
            SBM__CK(sbm__cuda_radix_pairs_u32(ctx, (const uint32_t *)kin, (uint32_t *)kout, vin,
                                              P->pairs + E0, n, sbits));
        } else {
            SBM__CK(sbm__cuda_radix_pairs_u64(ctx, (const uint64_t *)kin, (uint64_t *)kout, vin,
                                              P->pairs + E0, n, sbits));
        }
    }

    /* ---- compression (Algorithm 3) over the concatenated slices ---- */
    {
        const unsigned g = sbm__grid(nbc * 32, 256);
        const int32_t *urow = U ? U->rowind : NULL;
        SBM__CK(sbm__cuda_zero(ctx, ccnt + nbc, sizeof(int64_t)));
        if (nbc > 0) {
            sbm__k_gemm_compress<0><<<g, 256, 0, s>>>(nbc, coloff, P->pairs, arow, urow, ccnt, NULL,
                                                      NULL, NULL);
            SBM__LAUNCHED(ctx, "compression (count)");
        }
        SBM__CK(sbm__cuda_scan_i64(ctx, ccnt, ccnt, nbc + 1));
        SBM__CK(sbm__cuda_d2h(ctx, &nnzb_c, ccnt + nbc, sizeof(int64_t)));
        SBM__CK(sbm__cbc_alloc(ctx, nbr, nbc, r, c, nnzb_c, &C));
        P->seg = (int64_t *)sbm__alloc(ctx, (size_t)(nnzb_c + 1) * sizeof(int64_t),
                                       "output block offsets of the plan");
        if (!P->seg) {
            st = SBM_ERR_OUT_OF_MEMORY;
            goto done;
        }
        SBM__CK(sbm__cuda_d2d(ctx, C->colptr, ccnt, (size_t)(nbc + 1) * sizeof(int64_t)));
        if (nbc > 0) {
            sbm__k_gemm_compress<1><<<g, 256, 0, s>>>(nbc, coloff, P->pairs, arow, urow, NULL,
                                                      C->colptr, C->rowind, P->seg);
            SBM__LAUNCHED(ctx, "compression (fill)");
        }
        SBM__CK(sbm__cuda_h2d(ctx, P->seg + nnzb_c, &entries, sizeof(int64_t)));
        SBM__CK(sbm__cuda_zero(ctx, C->values, (size_t)nnzb_c * r * c * sizeof(double)));
    }
    SBM__CK(sbm__cuda_sync(ctx)); /* surface asynchronous faults here, not in a later call */

    (void)sbm__select_numeric(r, k, c, &fast);
    P->nnzb_c = nnzb_c;
    {
        int persist = -1, forced = 0;
        P->numeric = sbm__gemm_numeric_kind(ctx, r, k, c, &persist, &forced);
        if (P->numeric >= SBM__NUM_STAGE && nnzb_c > 0)
            SBM__CK(sbm__stage_setup(ctx, P, persist, forced));
    }
    P->h.pattern_c = C->pattern_id;
    P->h.info.products = products;
    P->h.info.nnzb_c = nnzb_c;
    P->h.info.slices = nslices > 0 ? nslices : 1;
    P->h.info.plan_bytes = sizeof *P + (size_t)entries * sizeof(uint64_t) +
                           (size_t)(nnzb_c + 1) * sizeof(int64_t);
    P->h.info.fast_path = fast;
    *plan = (sbm_gemm_plan *)P;
    *Cout = C;
    P = NULL;
    C = NULL;
done:
    free(h_off);
    free(cuts);
    sbm__cuda_gemm_plan_destroy((sbm_gemm_plan *)P);
    sbm_cbc_destroy(C);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Execute                                                                                  */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm__cuda_gemm_execute(sbm_ctx *ctx, const sbm_gemm_plan *plan, double alpha,
                                  const sbm_cbc *A, const sbm_cbc *B, const sbm_cbc *U, sbm_cbc *C)
{
    const sbm__gpu_plan *P = (const sbm__gpu_plan *)plan;
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    const int T = P->r * P->c;
    int fast = 0;
    sbm__numeric_kernel kern = sbm__select_numeric(P->r, P->k, P->c, &fast);
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
    if (alpha == 0.0) {
        sbm__k_gemm_copy_u<<<sbm__grid(P->nnzb_c * T, 256), 256, 0, s>>>(
            P->nnzb_c, T, P->pairs, P->seg, U ? U->values : NULL, C->values);
        SBM__LAUNCHED(ctx, "C = U");
    } else if (P->numeric >= SBM__NUM_STAGE) {
        sbm__select_staged(P->r, P->k, P->c, P->numeric == SBM__NUM_SDMMA)<<<P->st_grid,
                                                                            SBM__ST_THREADS,
                                                                            P->st_smem, s>>>(
            P->nnzb_c, P->st_tiles, P->st_nb, P->st_ec, P->op_a == SBM_OP_T, P->op_b == SBM_OP_T,
            P->pairs, P->seg, A->values, B->values, U ? U->values : NULL, alpha, C->values);
        SBM__LAUNCHED(ctx, "block products (staged tiles)");
    } else if (P->numeric == SBM__NUM_DMMA) {
        /* one warp per output block, 8 warps per CTA */
        const unsigned g = sbm__grid((P->nnzb_c + 7) / 8, 1);
        sbm__select_dmma(P->r, P->k, P->c)<<<g, 256, 0, s>>>(
            P->nnzb_c, P->op_a == SBM_OP_T, P->op_b == SBM_OP_T, P->pairs, P->seg, A->values,
            B->values, U ? U->values : NULL, alpha, C->values);
        SBM__LAUNCHED(ctx, "block products (tensor cores)");
    } else {
        /* teams of T threads, as many as fit 256 threads (one team up to 1024 threads) */
        const int teams = T >= 256 ? 1 : 256 / T;
        const int threads = teams * T;
        const unsigned g = sbm__grid((P->nnzb_c + teams - 1) / teams, 1);
        kern<<<g, threads, 0, s>>>(P->nnzb_c, P->r, P->k, P->c, P->op_a == SBM_OP_T,
                                   P->op_b == SBM_OP_T, P->pairs, P->seg, A->values, B->values,
                                   U ? U->values : NULL, alpha, C->values);
        SBM__LAUNCHED(ctx, "block products");
    }
done:
    return st;
}
