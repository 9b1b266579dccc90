/* SPDX-License-Identifier: BSD-3-Clause */
/* Numeric kernels of the block SpGEMM (definitions; instantiated in cuda_gemm_kernels.cu for
 * every triple of SBM_GEMM_TRIPLES through sbm_blk_select_triple): every output block sums the
 * dense block products of its run of sorted entries, in that order, so results are
 * deterministic and no floating-point atomics are used. Included by cuda_gemm_kernels.cu only. */
#ifndef SBM_CUDA_GEMM_NUMERIC_CUH
#define SBM_CUDA_GEMM_NUMERIC_CUH

#include "cuda_gemm.cuh"

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

/* ---------------------------------------------------------------------------------------- */
/* Numeric pass, staged through shared memory                                               */
/* ---------------------------------------------------------------------------------------- */

/* Both kernels above walk an output block's entries one after the other, each a chain of dependent
 * loads (seg -> entry -> operand blocks), so a warp has at most one product's operands in flight:
 * on an H100 they are latency-bound (see docs/DESIGN-NOTES.md, "Measurements behind code choices").
 * The staged kernels below give every CTA a tile of consecutive output blocks and copy, with
 * cp.async (global -> shared without registers, sm_80+), all the tile's entries and then all their
 * operand blocks into shared memory at once, so a CTA has a whole tile's loads in flight. The CTAs
 * are persistent and software-pipelined: while the operand blocks of tile t are loaded, the entries
 * of the next tile and the output-block offsets of the one after it are loaded too, so each tile
 * costs one round trip to memory, not three. Tiles whose entries exceed the staging capacity are
 * processed in chunks (the accumulators live in registers across chunks), so the order of summation
 * is the sorted order, as in the other kernels. Two ways to compute from shared memory: one thread
 * per output element (CUDA cores; small blocks) or one warp per output block on the FP64 tensor
 * cores (mma.sync m8n8k4), several blocks per warp. Faster than the unstaged kernels, but still
 * latency-bound, since a CTA's copy, wait, compute and store run one after the other and about 5
 * CTAs fit per SM; overlapping them within a CTA (two operand stages) is the next step
 * (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). */

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


/* Tile t is output blocks [t*nb, t*nb + nb) (fewer in the last tile), its entries [seg[t*nb],
 * seg[t*nb + nbt]) processed in chunks of at most ec. The grid is persistent: CTA b takes tiles b,
 * b + gridDim.x, ... DMMA selects the compute mode (see above). One function on purpose, although
 * longer than the house limit: its phases (prologue, prefetch, compute, write) as forceinline
 * helpers compiled to different code, with more registers, which costs a resident CTA, and this
 * kernel's speed was measured as it stands
 * (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). */
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

#endif /* SBM_CUDA_GEMM_NUMERIC_CUH */
