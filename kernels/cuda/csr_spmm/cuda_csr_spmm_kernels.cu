/* SPDX-License-Identifier: BSD-3-Clause */
/* Scalar CSR SpMM: the kernels' instantiations (every shape of cuda_csr_spmm.cu's choice, through
 * the switch below) and their launches on the context's stream. */
#include "cuda_csr_spmm_kernels.cuh"

namespace {

template <int G, int VEC, int CPT>
void spmm_launch(const sbm__spmm_args &a, sbm__spmm_kernel kind, cudaStream_t s)
{
    const unsigned gy = (unsigned)(a.ntiles_c < 65535 ? a.ntiles_c : 65535);
    if (kind == SBM__SPMM_ROWSPLIT) {
        const dim3 grid(sbm__grid(a.m, SPMM_THREADS / G), gy);
        sbm__k_spmm_rowsplit<G, VEC, CPT><<<grid, SPMM_THREADS, 0, s>>>(
            a.m, a.rowptr, a.colind, a.av, a.ncols, a.ntiles_c, a.alpha, a.B, a.ldb, a.beta, a.C,
            a.ldc);
    } else {
        const int64_t gx = a.ntiles < (int64_t)1 << 30 ? a.ntiles : (int64_t)1 << 30;
        const size_t smem = ((size_t)(SPMM_THREADS / G) * a.items + 1) * sizeof(int32_t);
        sbm__k_spmm_merge<G, VEC, CPT><<<dim3((unsigned)gx, gy), SPMM_THREADS, smem, s>>>(
            a.m, a.nnz, a.rowptr, a.colind, a.av, a.ncols, a.ntiles_c, a.alpha, a.B, a.ldb,
            a.beta, a.C, a.ldc, a.items, a.ntiles, a.tile_row, a.carry_row, a.carry);
    }
}

template <int VEC>
void spmm_launch_vec(const sbm__spmm_args &a, sbm__spmm_kernel kind, sbm__spmm_shape sh, cudaStream_t s)
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

} // namespace

sbm_status sbm__csr_spmm_launch_colmajor(sbm_ctx *ctx, const sbm_csr *A, int64_t ncols, double alpha,
                                         const double *B, int64_t ldb, double beta, double *C,
                                         int64_t ldc)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    const int64_t strips = (ncols + SPMM_COLMAJOR_STRIP - 1) / SPMM_COLMAJOR_STRIP;
    const dim3 grid(sbm__grid(A->m, SPMM_THREADS), (unsigned)(strips < 65535 ? strips : 65535));
    sbm__k_spmm_colmajor<<<grid, SPMM_THREADS, 0, s>>>(A->m, A->rowptr, A->colind, A->values,
                                                       ncols, alpha, B, ldb, beta, C, ldc);
    SBM__LAUNCHED(ctx, "CSR SpMM kernel (column-major)");
done:
    return st;
}

sbm_status sbm__csr_spmm_launch_partition(sbm_ctx *ctx, const sbm__spmm_args &a, int64_t tile_items)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    sbm__k_spmm_partition<<<sbm__grid(a.ntiles + 1, SPMM_THREADS), SPMM_THREADS, 0, s>>>(
        a.m, a.nnz, a.rowptr, tile_items, a.ntiles, (int64_t *)a.tile_row);
    SBM__LAUNCHED(ctx, "CSR SpMM partition kernel");
done:
    return st;
}

sbm_status sbm__csr_spmm_launch(sbm_ctx *ctx, const sbm__spmm_args &a, sbm__spmm_kernel kind,
                                sbm__spmm_shape sh)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    if (sh.VEC == 2) spmm_launch_vec<2>(a, kind, sh, s);
    else spmm_launch_vec<1>(a, kind, sh, s);
    SBM__LAUNCHED(ctx, kind == SBM__SPMM_MERGE ? "CSR SpMM kernel (merge)"
                                               : "CSR SpMM kernel (row-split)");
done:
    return st;
}

sbm_status sbm__csr_spmm_launch_fixup(sbm_ctx *ctx, const sbm__spmm_args &a, int64_t nunits)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    sbm__k_spmm_fixup<<<sbm__grid(nunits * a.ncols, SPMM_THREADS), SPMM_THREADS, 0, s>>>(
        nunits, a.ncols, a.carry_row, a.carry, a.alpha, a.C, a.ldc);
    SBM__LAUNCHED(ctx, "CSR SpMM carry-out kernel");
done:
    return st;
}
