/* SPDX-License-Identifier: BSD-3-Clause */
/* The scalar CSR SpGEMM plan (symbolic phase): products per row, bins, the short rows in shared
 * memory (cuda_csr_gemm_kernels.cu) and the long ones through the global ESC path
 * (cuda_csr_gemm_plan_esc.cu), then C's pattern and the plan's runs and pairs. */
#include "cuda_csr_gemm.cuh"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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

/* Setup arrays of a plan (pool slot OP_A, m + 1 entries each unless said). */
typedef struct sbm__cg_setup {
    int64_t *prod;     /* products per row */
    uint32_t *kin;     /* bin keys, unsorted and sorted (kout) */
    uint32_t *kout;
    uint64_t *vin;     /* rows, unsorted and sorted by bin (rows) */
    uint64_t *rows;
    int64_t *poff;     /* each row's offset in the expansion (row order) */
    int64_t *gP;       /* offsets of the global rows in their compact expansion */
    int64_t *clen;     /* lengths of C's rows, then C's row pointers */
    int64_t *d_boff;   /* bin offsets (SBM__CG_NBINS + 2) */
} sbm__cg_setup;

/* Products per row and each row's offset in the expansion (row order, so that the runs of
 * consecutive entries of C are consecutive), bins (a stable sort keeps rows increasing per bin);
 * boff and *products on the host. */
static sbm_status sbm__cg_bins(sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B, sbm__cg_setup *w,
                               int64_t *boff, int64_t *products)
{
    const int64_t m = A->m;
    const int force = sbm__cg_force_global(ctx);
    cudaStream_t s = sbm__cuda_stream(ctx);
    sbm_status st = SBM_SUCCESS;
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
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, cv.total, (void **)&base));
    w->prod = (int64_t *)(base + o_prod);
    w->kin = (uint32_t *)(base + o_kin);
    w->kout = (uint32_t *)(base + o_kout);
    w->vin = (uint64_t *)(base + o_vin);
    w->rows = (uint64_t *)(base + o_rows);
    w->poff = (int64_t *)(base + o_poff);
    w->gP = (int64_t *)(base + o_gp);
    w->clen = (int64_t *)(base + o_clen);
    w->d_boff = (int64_t *)(base + o_boff);
    SBM__CK(sbm__cuda_zero(ctx, w->clen, (size_t)(m + 1) * sizeof(int64_t)));
    SBM__CK(sbm__cuda_zero(ctx, w->prod + m, sizeof(int64_t)));
    if (m > 0) {
        sbm__k_cg_products<<<sbm__grid(m * 8, 256), 256, 0, s>>>(m, A->rowptr, A->colind, B->rowptr,
                                                                 force, w->prod, w->kin, w->vin);
        SBM__LAUNCHED(ctx, "CSR SpGEMM products per row");
        SBM__CK(sbm__cuda_radix_pairs_u32(ctx, w->kin, w->kout, w->vin, w->rows, m,
                                          sbm__bits_for(SBM__CG_NBINS)));
        SBM__CK(sbm__cuda_scan_i64(ctx, w->prod, w->poff, m + 1));
        sbm__k_cg_bin_offsets<<<1, 32, 0, s>>>(m, w->kout, w->poff, w->d_boff);
        SBM__LAUNCHED(ctx, "CSR SpGEMM bin offsets");
        SBM__CK(sbm__cuda_d2h(ctx, boff, w->d_boff, (SBM__CG_NBINS + 2) * sizeof(int64_t)));
        *products = boff[SBM__CG_NBINS + 1];
    }
done:
    return st;
}

sbm_status sbm__cg_plan(sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B, int direct,
                        sbm_csr_plan **plan, sbm_csr **Cout)
{
    const int64_t m = A->m;
    cudaStream_t s = sbm__cuda_stream(ctx);
    sbm_status st = SBM_SUCCESS;
    sbm__csr_gpu_plan *P = NULL;
    sbm_csr *C = NULL;
    int64_t boff[SBM__CG_NBINS + 2], products = 0, nnz_c = 0, ng = 0;
    sbm__cg_setup w;
    int64_t *poff, *clen;
    uint64_t *rows;
    *plan = NULL;
    *Cout = NULL;
    memset(boff, 0, sizeof boff);
    memset(&w, 0, sizeof w);
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

    SBM__CK(sbm__cg_bins(ctx, A, B, &w, boff, &products));
    poff = w.poff;
    clen = w.clen;
    rows = w.rows;
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
        sbm__k_cg_gather_prod<<<sbm__grid(ng + 1, 256), 256, 0, s>>>(ng, grows, w.prod, w.gP);
        SBM__LAUNCHED(ctx, "CSR SpGEMM products of the global rows");
        SBM__CK(sbm__cuda_scan_i64(ctx, w.gP, w.gP, ng + 1));
        SBM__CK(sbm__cg_global_symbolic(ctx, P, A, B, ng, grows, w.gP, poff, clen));
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
    if (ng > 0)
        SBM__CK(sbm__cg_global_columns(ctx, ng, rows + boff[SBM__CG_GLOBAL], poff, P->pairs, B, C,
                                       P->seg));
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
