/* SPDX-License-Identifier: BSD-3-Clause */
/* The block SpGEMM plan (symbolic phase, all integer work, deterministic): setup (Algorithm 1),
 * expansion and sort in slices under the memory budget (Algorithm 2), compression (Algorithm
 * 3); see cuda_gemm.cu for the algorithm and cuda_gemm.cuh for the plan. */
#include "cuda_esc.cuh"
#include "cuda_gemm.cuh"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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


/* ---------------------------------------------------------------------------------------- */
/* Plan                                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* One plan under construction: the operands as block-CSC patterns of op(A) and op(B), the setup
 * arrays (device, pool slot OP_A) and their host copies, shared by the steps below. */
typedef struct sbm__gemm_build {
    const sbm_cbc *A, *B, *U;  /* operands */
    int upper, ta, tb;         /* SBM_GEMM_UPPER; op(A), op(B) transposed */
    int64_t nbr, nbc;          /* C is nbr x nbc blocks of r x c */
    int r, k, c;
    const int64_t *ptrA, *ptrB;   /* op(A), op(B) column pointers */
    const int32_t *indA, *indB;   /* their row indices */
    const int64_t *permA, *permB; /* their blocks' stored indices (NULL: identity) */
    const int32_t *arow;          /* op(A) row of each stored block of A */
    int64_t *bprods;           /* products before each op(B) block (nnzB+1) */
    int32_t *bcol;             /* column of each op(B) block (nnzB) */
    int64_t *ucum;             /* U entries before each column (nbc+1) */
    int64_t *pcol;             /* products before each column (nbc+1) */
    int64_t *coloff;           /* entries before each column (nbc+1) */
    int64_t *ccnt;             /* blocks of C before each column (nbc+1) */
    int64_t *h_off;            /* host: coloff, then pcol, U's and op(B)'s column pointers */
    int64_t *h_up, *h_pb;      /* host: U's, op(B)'s column pointers (inside h_off) */
    int64_t entries, products; /* expansion size, of which products */
    sbm__esc_sort so;          /* how the slices are sorted */
    int rbits;                 /* bits of a row of C */
} sbm__gemm_build;

/* The setup workspace (alive for the whole plan), op(A) and op(B) as block-CSC patterns (a
 * transposed operand gets its transposed pattern and the permutation back to its stored
 * blocks), then Algorithm 1: product counts per op(B) block, exclusive scan -> offsets and
 * total; U's entries per column; column offsets. */
static sbm_status sbm__gemm_setup(sbm_ctx *ctx, sbm__gemm_build *b)
{
    sbm_status st = SBM_SUCCESS;
    const sbm_cbc *A = b->A, *B = b->B, *U = b->U;
    const int64_t nnzA = A->nnzb, nnzB = B->nnzb, nbc = b->nbc;
    cudaStream_t s = sbm__cuda_stream(ctx);
    char *base = NULL;
    sbm__carve cv = {0};
    size_t o_tap = 0, o_tai = 0, o_taperm = 0, o_tbp = 0, o_tbi = 0, o_tbperm = 0, o_acol = 0;
    size_t o_bprods, o_bcol, o_ucum, o_pcol, o_coloff, o_ccnt;
    if (b->ta) {
        o_tap = sbm__carve_add(&cv, (size_t)(A->nbr + 1) * sizeof(int64_t));
        o_tai = sbm__carve_add(&cv, (size_t)nnzA * sizeof(int32_t));
        o_taperm = sbm__carve_add(&cv, (size_t)nnzA * sizeof(int64_t));
        o_acol = sbm__carve_add(&cv, (size_t)nnzA * sizeof(int32_t));
    }
    if (b->tb) {
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
    b->bprods = (int64_t *)(base + o_bprods);
    b->bcol = (int32_t *)(base + o_bcol);
    b->ucum = (int64_t *)(base + o_ucum);
    b->pcol = (int64_t *)(base + o_pcol);
    b->coloff = (int64_t *)(base + o_coloff);
    b->ccnt = (int64_t *)(base + o_ccnt);
    if (b->ta) {
        int64_t *tp = (int64_t *)(base + o_tap), *tperm = (int64_t *)(base + o_taperm);
        int32_t *ti = (int32_t *)(base + o_tai), *acol = (int32_t *)(base + o_acol);
        SBM__CK(sbm__cuda_pattern_transpose(ctx, SBM__WS_PRIM, A->nbc, A->nbr, nnzA, A->colptr,
                                            A->rowind, tp, ti, tperm));
        if (nnzA > 0) {
            sbm__k_block_cols<<<sbm__grid(nnzA, 256), 256, 0, s>>>(A->nbc, nnzA, A->colptr, acol);
            SBM__LAUNCHED(ctx, "block columns of A");
        }
        b->ptrA = tp;
        b->indA = ti;
        b->permA = tperm;
        b->arow = acol; /* the op(A) row of a stored block is its column in A */
    }
    if (b->tb) {
        int64_t *tp = (int64_t *)(base + o_tbp), *tperm = (int64_t *)(base + o_tbperm);
        int32_t *ti = (int32_t *)(base + o_tbi);
        SBM__CK(sbm__cuda_pattern_transpose(ctx, SBM__WS_PRIM, B->nbc, B->nbr, nnzB, B->colptr,
                                            B->rowind, tp, ti, tperm));
        b->ptrB = tp;
        b->indB = ti;
        b->permB = tperm;
    }
    sbm__k_gemm_counts<<<sbm__grid(nnzB + 1, 256), 256, 0, s>>>(nbc, nnzB, b->ptrB, b->indB, b->ptrA,
                                                               b->indA, b->upper, b->bcol, b->bprods);
    SBM__LAUNCHED(ctx, "product counts");
    SBM__CK(sbm__cuda_scan_i64(ctx, b->bprods, b->bprods, nnzB + 1));
    sbm__k_gemm_ukeep<<<sbm__grid(nbc + 1, 256), 256, 0, s>>>(nbc, U ? U->colptr : NULL,
                                                             U ? U->rowind : NULL, b->upper, b->ucum);
    SBM__LAUNCHED(ctx, "U entries per column");
    SBM__CK(sbm__cuda_scan_i64(ctx, b->ucum, b->ucum, nbc + 1));
    sbm__k_gemm_coloff<<<sbm__grid(nbc + 1, 256), 256, 0, s>>>(nbc, b->ptrB, b->bprods, b->ucum,
                                                              b->pcol, b->coloff);
    SBM__LAUNCHED(ctx, "column offsets");
done:
    return st;
}

/* The host needs the column offsets to cut slices and size the plan. */
static sbm_status sbm__gemm_host_offsets(sbm_ctx *ctx, sbm__gemm_build *b)
{
    sbm_status st = SBM_SUCCESS;
    const int64_t nbc = b->nbc;
    b->h_off = (int64_t *)malloc((size_t)(4 * (nbc + 1)) * sizeof(int64_t));
    if (!b->h_off) {
        st = sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory for "
                        "column offsets", (size_t)(4 * (nbc + 1)) * sizeof(int64_t));
        goto done;
    }
    b->h_up = b->h_off + 2 * (nbc + 1);
    b->h_pb = b->h_off + 3 * (nbc + 1);
    SBM__CK(sbm__cuda_d2h(ctx, b->h_pb, b->ptrB, (size_t)(nbc + 1) * sizeof(int64_t)));
    SBM__CK(sbm__cuda_d2h(ctx, b->h_off, b->coloff, (size_t)(nbc + 1) * sizeof(int64_t)));
    SBM__CK(sbm__cuda_d2h(ctx, b->h_off + (nbc + 1), b->pcol, (size_t)(nbc + 1) * sizeof(int64_t)));
    if (b->U) SBM__CK(sbm__cuda_d2h(ctx, b->h_up, b->U->colptr, (size_t)(nbc + 1) * sizeof(int64_t)));
    b->entries = b->h_off[nbc];
    b->products = b->h_off[(nbc + 1) + nbc];
done:
    return st;
}

/* A new plan with room for the sorted expansion. */
static sbm_status sbm__gemm_plan_new(sbm_ctx *ctx, const sbm__gemm_build *b, sbm_op op_a,
                                     sbm_op op_b, unsigned flags, sbm__gpu_plan **out)
{
    int ok = 1;
    sbm__gpu_plan *P = (sbm__gpu_plan *)calloc(1, sizeof *P);
    *out = NULL;
    if (!P) return sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes for a plan", sizeof *P);
    P->al = ctx->allocator;
    P->h.backend = ctx->backend;
    P->h.device = ctx->device;
    P->h.ops = ctx->ops;
    P->op_a = op_a;
    P->op_b = op_b;
    P->flags = flags;
    P->r = b->r;
    P->k = b->k;
    P->c = b->c;
    P->has_u = b->U != NULL;
    P->entries = b->entries;
    *out = P; /* freed by the caller on failure */
    size_t pbytes = sbm__mul_size(ctx, (size_t)b->entries, sizeof(uint64_t), "plan entries", &ok);
    if (!ok) return SBM_ERR_OVERFLOW;
    P->pairs = (uint64_t *)sbm__alloc(ctx, pbytes, "the sorted expansion of the plan");
    return P->pairs ? SBM_SUCCESS : SBM_ERR_OUT_OF_MEMORY;
}

/* Slice [j0, j1) of the columns: expansion of its products and U entries into keys and values
 * in the slice workspace buf, then the sort into its range of the plan's entries. */
static sbm_status sbm__gemm_slice(sbm_ctx *ctx, const sbm__gemm_build *b, sbm__gpu_plan *P,
                                  const sbm__esc_buffers *buf, int64_t j0, int64_t j1)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    const int64_t nbc = b->nbc, *h_off = b->h_off, ns = j1 - j0;
    const int64_t E0 = h_off[j0], E1 = h_off[j1], n = E1 - E0;
    const int64_t P0 = h_off[(nbc + 1) + j0], P1 = h_off[(nbc + 1) + j1];
    const int radix = b->so.radix, key_bytes = b->so.key_bytes, rbits = b->rbits;
    int64_t eb_lo = 0, eb_hi = 0, per;
    void *kin = buf->kin;
    uint64_t *vin = buf->vin;
    const int sbits = radix ? rbits + sbm__bits_for(ns + 1) : 0;
    const int kmode = !radix ? SBM__KEY_ROW32 : key_bytes == 4 ? SBM__KEY_PACK32 : SBM__KEY_PACK64;
    if (n == 0) goto done;
    /* op(B) blocks of the slice: [ptrB[j0], ptrB[j1]) */
    eb_lo = b->h_pb[j0];
    eb_hi = b->h_pb[j1];
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
                P0, P1, per, eb_lo, eb_hi, b->bprods, b->bcol, b->indB, b->permB, b->ptrA, b->indA,
                b->permA, b->ucum, E0, j0, rbits, kin, vin);
        else if (kmode == SBM__KEY_PACK32)
            sbm__k_gemm_expand<SBM__KEY_PACK32><<<g, 256, 0, s>>>(
                P0, P1, per, eb_lo, eb_hi, b->bprods, b->bcol, b->indB, b->permB, b->ptrA, b->indA,
                b->permA, b->ucum, E0, j0, rbits, kin, vin);
        else
            sbm__k_gemm_expand<SBM__KEY_PACK64><<<g, 256, 0, s>>>(
                P0, P1, per, eb_lo, eb_hi, b->bprods, b->bcol, b->indB, b->permB, b->ptrA, b->indA,
                b->permA, b->ucum, E0, j0, rbits, kin, vin);
        SBM__LAUNCHED(ctx, "expansion");
    }
    if (b->U && b->h_up[j1] > b->h_up[j0]) {
        const sbm_cbc *U = b->U;
        const int64_t u_lo = b->h_up[j0], u_hi = b->h_up[j1];
        const unsigned g = sbm__grid(u_hi - u_lo, 256);
        if (kmode == SBM__KEY_ROW32)
            sbm__k_gemm_expand_u<SBM__KEY_ROW32><<<g, 256, 0, s>>>(
                u_lo, u_hi, j0, j1, U->colptr, U->rowind, b->ucum, b->coloff, E0, rbits, kin, vin);
        else if (kmode == SBM__KEY_PACK32)
            sbm__k_gemm_expand_u<SBM__KEY_PACK32><<<g, 256, 0, s>>>(
                u_lo, u_hi, j0, j1, U->colptr, U->rowind, b->ucum, b->coloff, E0, rbits, kin, vin);
        else
            sbm__k_gemm_expand_u<SBM__KEY_PACK64><<<g, 256, 0, s>>>(
                u_lo, u_hi, j0, j1, U->colptr, U->rowind, b->ucum, b->coloff, E0, rbits, kin, vin);
        SBM__LAUNCHED(ctx, "expansion of U");
    }
    if (!radix) {
        sbm__k_gemm_seg_offsets<<<sbm__grid(ns + 1, 256), 256, 0, s>>>(ns, j0, E0, b->coloff, buf->off);
        SBM__LAUNCHED(ctx, "segment offsets");
    }
    SBM__CK(sbm__esc_sort_slice(ctx, &b->so, kin, buf->kout, vin, P->pairs + E0, n, ns, buf->off,
                                sbits));
done:
    return st;
}

/* Sort variant (see cuda_gemm.cu): the segmented sort for short output columns, the packed-key
 * radix sort for long ones, where its few full passes beat the segmented sort's per-segment work
 * (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). The tuning's gemm_sort overrides.
 * */
static int sbm__gemm_use_radix(const sbm_ctx *ctx, int64_t entries, int64_t nbc)
{
    if (ctx->tuning.gemm_sort == SBM_TUNE_GEMM_SORT_RADIX) return 1;
    if (ctx->tuning.gemm_sort == SBM_TUNE_GEMM_SORT_SEGMENTED) return 0;
    return sbm__esc_use_radix(entries, nbc);
}

/* Algorithm 2 in slices: the sort variant, the slices under the memory budget, one workspace
 * (pool slot OP_B) for the largest slice, then every slice expanded and sorted. */
static sbm_status sbm__gemm_expand_sort(sbm_ctx *ctx, sbm__gemm_build *b, sbm__gpu_plan *P,
                                        int64_t *nslices)
{
    sbm_status st = SBM_SUCCESS;
    const int64_t nbc = b->nbc, *h_off = b->h_off;
    int64_t *cuts = NULL;
    size_t budget = 0;
    sbm__esc_buffers buf;
    b->so.radix = sbm__gemm_use_radix(ctx, b->entries, nbc);
    /* packed radix keys need (column within the slice, row) bits: 32-bit keys when they fit */
    b->so.key_bytes = b->so.radix && b->rbits + sbm__bits_for(nbc + 1) > 32 ? 8 : 4;
    b->so.vals_out = 0; /* sorted straight into the plan */
    SBM__CK(sbm__cuda_budget(ctx, &budget));
    SBM__CK(sbm__esc_plan_slices(ctx, &b->so, nbc, h_off, budget, NULL, NULL, &cuts, nslices));
    SBM__CK(sbm__esc_workspace(ctx, &b->so, h_off, cuts, *nslices, &buf));
    for (int64_t t = 0; t < *nslices; t++) SBM__CK(sbm__gemm_slice(ctx, b, P, &buf, cuts[t], cuts[t + 1]));
done:
    free(cuts);
    return st;
}

/* Algorithm 3 over the concatenated slices: count C's blocks per column, scan, allocate C and
 * the plan's output block offsets, fill both. */
static sbm_status sbm__gemm_compress(sbm_ctx *ctx, const sbm__gemm_build *b, sbm__gpu_plan *P,
                                     sbm_cbc **Cout)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    const int64_t nbc = b->nbc;
    int64_t *ccnt = b->ccnt, nnzb_c = 0;
    const unsigned g = sbm__grid(nbc * 32, 256);
    const int32_t *urow = b->U ? b->U->rowind : NULL;
    sbm_cbc *C = NULL;
    SBM__CK(sbm__cuda_zero(ctx, ccnt + nbc, sizeof(int64_t)));
    if (nbc > 0) {
        sbm__k_gemm_compress<0><<<g, 256, 0, s>>>(nbc, b->coloff, P->pairs, b->arow, urow, ccnt, NULL,
                                                  NULL, NULL);
        SBM__LAUNCHED(ctx, "compression (count)");
    }
    SBM__CK(sbm__cuda_scan_i64(ctx, ccnt, ccnt, nbc + 1));
    SBM__CK(sbm__cuda_d2h(ctx, &nnzb_c, ccnt + nbc, sizeof(int64_t)));
    SBM__CK(sbm__cbc_alloc(ctx, b->nbr, nbc, b->r, b->c, nnzb_c, &C));
    P->seg = (int64_t *)sbm__alloc(ctx, (size_t)(nnzb_c + 1) * sizeof(int64_t),
                                   "output block offsets of the plan");
    if (!P->seg) {
        st = SBM_ERR_OUT_OF_MEMORY;
        goto done;
    }
    SBM__CK(sbm__cuda_d2d(ctx, C->colptr, ccnt, (size_t)(nbc + 1) * sizeof(int64_t)));
    if (nbc > 0) {
        sbm__k_gemm_compress<1><<<g, 256, 0, s>>>(nbc, b->coloff, P->pairs, b->arow, urow, NULL,
                                                  C->colptr, C->rowind, P->seg);
        SBM__LAUNCHED(ctx, "compression (fill)");
    }
    SBM__CK(sbm__cuda_h2d(ctx, P->seg + nnzb_c, &P->entries, sizeof(int64_t)));
    SBM__CK(sbm__cuda_zero(ctx, C->values, (size_t)nnzb_c * b->r * b->c * sizeof(double)));
    P->nnzb_c = nnzb_c;
    *Cout = C;
    C = NULL;
done:
    sbm_cbc_destroy(C);
    return st;
}

sbm_status sbm__cuda_gemm_plan(sbm_ctx *ctx, sbm_op op_a, const sbm_cbc *A, sbm_op op_b,
                               const sbm_cbc *B, const sbm_cbc *U, unsigned flags,
                               sbm_gemm_plan **plan, sbm_cbc **Cout)
{
    sbm_status st = SBM_SUCCESS;
    sbm__gemm_build b;
    sbm__gpu_plan *P = NULL;
    sbm_cbc *C = NULL;
    int64_t nslices = 0;
    memset(&b, 0, sizeof b);
    b.A = A;
    b.B = B;
    b.U = U;
    b.upper = (flags & SBM_GEMM_UPPER) != 0;
    b.ta = op_a == SBM_OP_T;
    b.tb = op_b == SBM_OP_T;
    b.nbr = b.ta ? A->nbc : A->nbr;
    b.nbc = b.tb ? B->nbr : B->nbc;
    b.r = b.ta ? A->c : A->r;
    b.k = b.ta ? A->r : A->c;
    b.c = b.tb ? B->r : B->c;
    b.ptrA = A->colptr;
    b.ptrB = B->colptr;
    b.indA = A->rowind;
    b.indB = B->rowind;
    b.arow = A->rowind;
    b.rbits = sbm__bits_for(b.nbr + 1);
    *plan = NULL;
    *Cout = NULL;
    SBM__CK(sbm__cuda_enter(ctx));
    if (A->nnzb >= (int64_t)SBM__U_TAG || B->nnzb > (int64_t)UINT32_MAX ||
        (U && U->nnzb > (int64_t)UINT32_MAX)) {
        st = sbm__error(ctx, SBM_ERR_OVERFLOW,
                        "operand pointers are stored as 32-bit block indices, but A has %" PRId64
                        " and B %" PRId64 " blocks",
                        A->nnzb, B->nnzb);
        goto done;
    }
    SBM__CK(sbm__gemm_setup(ctx, &b));
    SBM__CK(sbm__gemm_host_offsets(ctx, &b));
    SBM__CK(sbm__gemm_plan_new(ctx, &b, op_a, op_b, flags, &P));
    SBM__CK(sbm__gemm_expand_sort(ctx, &b, P, &nslices));
    SBM__CK(sbm__gemm_compress(ctx, &b, P, &C));
    SBM__CK(sbm__cuda_sync(ctx)); /* surface asynchronous faults here, not in a later call */
    SBM__CK(sbm__gemm_choose_numeric(ctx, P));
    P->h.pattern_c = C->pattern_id;
    P->h.info.products = b.products;
    P->h.info.nnzb_c = P->nnzb_c;
    P->h.info.slices = nslices > 0 ? nslices : 1;
    P->h.info.plan_bytes = sizeof *P + (size_t)b.entries * sizeof(uint64_t) +
                           (size_t)(P->nnzb_c + 1) * sizeof(int64_t);
    P->h.info.fast_path = sbm_blk_is_fast_triple(b.r, b.k, b.c);
    *plan = (sbm_gemm_plan *)P;
    *Cout = C;
    P = NULL;
    C = NULL;
done:
    free(b.h_off);
    sbm__cuda_gemm_plan_destroy((sbm_gemm_plan *)P);
    sbm_cbc_destroy(C);
    return st;
}
