/* SPDX-License-Identifier: BSD-3-Clause */
/* Instantiations and launches of the short-row kernels of the scalar CSR SpGEMM: one per bin
 * (group size, capacity) and mode. */
#include "cuda_csr_gemm_kernels.cuh"

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
sbm_status sbm__cg_short_bin(sbm_ctx *ctx, int bin, int mode, int64_t nrows,
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
