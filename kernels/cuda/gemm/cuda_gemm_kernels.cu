/* SPDX-License-Identifier: BSD-3-Clause */
/* Instantiations and launches of the block SpGEMM's numeric kernels (cuda_gemm_kernels.cuh):
 * every kernel template is instantiated for the triples of SBM_GEMM_TRIPLES (and the generic
 * thread-per-element one for any other) through the one selector, sbm_blk_select_triple. */
#include "cuda_gemm_kernels.cuh"

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

typedef void (*sbm__dmma_kernel)(int64_t, int, int, const uint64_t *, const int64_t *,
                                 const double *, const double *, const double *, double, double *);
typedef void (*sbm__numeric_kernel)(int64_t, int, int, int, int, int, const uint64_t *,
                                    const int64_t *, const double *, const double *,
                                    const double *, double, double *);

/* The unstaged tensor-core kernel of a fast triple; NULL for the generic entry. */
static sbm__dmma_kernel sbm__select_dmma(int r, int k, int c)
{
    return sbm_blk_select_triple(r, k, c, [](auto tr) -> sbm__dmma_kernel {
        using T = decltype(tr);
        if constexpr (T::r == 0) return NULL;
        else return sbm__k_gemm_numeric_dmma<T::r, T::k, T::c>;
    });
}

sbm__staged_kernel sbm__gemm_select_staged(int r, int k, int c, int dmma)
{
    return sbm_blk_select_triple(r, k, c, [dmma](auto tr) -> sbm__staged_kernel {
        using T = decltype(tr);
        if constexpr (T::r == 0) return NULL;
        else return dmma ? sbm__k_gemm_staged<T::r, T::k, T::c, 1> : sbm__k_gemm_staged<T::r, T::k, T::c, 0>;
    });
}

/* The thread-per-element kernel: compiled sizes for a fast triple, runtime sizes (<0, 0, 0>)
 * for any other. */
static sbm__numeric_kernel sbm__select_numeric(int r, int k, int c)
{
    return sbm_blk_select_triple(r, k, c, [](auto tr) -> sbm__numeric_kernel {
        using T = decltype(tr);
        return sbm__k_gemm_numeric<T::r, T::k, T::c>;
    });
}

sbm_status sbm__gemm_launch(sbm_ctx *ctx, const sbm__gpu_plan *P, double alpha, const sbm_cbc *A,
                            const sbm_cbc *B, const sbm_cbc *U, sbm_cbc *C)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    const int T = P->r * P->c;
    if (alpha == 0.0) {
        sbm__k_gemm_copy_u<<<sbm__grid(P->nnzb_c * T, 256), 256, 0, s>>>(
            P->nnzb_c, T, P->pairs, P->seg, U ? U->values : NULL, C->values);
        SBM__LAUNCHED(ctx, "C = U");
    } else if (P->numeric >= SBM__NUM_STAGE) {
        sbm__gemm_select_staged(P->r, P->k, P->c, P->numeric == SBM__NUM_SDMMA)<<<P->st_grid,
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
        sbm__select_numeric(P->r, P->k, P->c)<<<g, threads, 0, s>>>(
            P->nnzb_c, P->r, P->k, P->c, P->op_a == SBM_OP_T, P->op_b == SBM_OP_T, P->pairs,
            P->seg, A->values, B->values, U ? U->values : NULL, alpha, C->values);
        SBM__LAUNCHED(ctx, "block products");
    }
done:
    return st;
}
