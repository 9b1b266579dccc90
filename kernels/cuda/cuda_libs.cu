/* SPDX-License-Identifier: BSD-3-Clause */
/* cuBLAS and cuSOLVER in the CUDA backend (cuda_libs.cuh): their failures as statuses and the
 * context's handles and cuBLAS workspace, shared by the sparse Cholesky and the dense Cholesky
 * (chol/cuda_chol.cu, cuda_chol_solve.cu, cuda_chol_dense.cu). */
#include "cuda_libs.cuh"

#include <string.h>

sbm_status sbm__cuda_lib_fail(sbm_ctx *ctx, int alloc_failed, const char *lib, int code,
                              const char *name, const char *what, const char *file, int line)
{
    const char *base = strrchr(file, '/');
    (void)cudaGetLastError();
    return sbm__error(ctx, alloc_failed ? SBM_ERR_OUT_OF_MEMORY : SBM_ERR_CUDA,
                      "%s failed on device %d: %s status %d (%s) (%s:%d)", what, ctx->device,
                      lib, code, name, base ? base + 1 : file, line);
}

sbm_status sbm__cuda_lib_handles(sbm_ctx *ctx)
{
    sbm_status st = SBM_SUCCESS;
    sbm__cuda_state *S = sbm__cuda_st(ctx);
    cublasHandle_t blas = NULL;
    cusolverDnHandle_t solver = NULL;
    /* bitwise repeatable results are part of the contract: say so rather than rely on defaults */
    if (!S->blas) {
        SBM__BLAS(ctx, cublasCreate(&blas), "cublasCreate");
        S->blas = blas;
        SBM__BLAS(ctx, cublasSetAtomicsMode(blas, CUBLAS_ATOMICS_NOT_ALLOWED),
                  "cublasSetAtomicsMode");
    }
    if (!S->solver) {
        SBM__SOLVER(ctx, cusolverDnCreate(&solver), "cusolverDnCreate");
        S->solver = solver;
        SBM__SOLVER(ctx, cusolverDnSetDeterministicMode(solver, CUSOLVER_DETERMINISTIC_RESULTS),
                    "cusolverDnSetDeterministicMode");
    }
    /* cuBLAS's workspace is ours, so that the graphs which capture its calls can rely on it:
     * the size cuBLAS recommends (32 MiB from Hopper on, 4 MiB before) */
    if (!S->blas_ws.ptr) {
        const size_t bytes = (size_t)(S->prop.major >= 9 ? 32 : 4) << 20;
        S->blas_ws.ptr = sbm__alloc(ctx, bytes, "the cuBLAS workspace of the sparse Cholesky");
        if (!S->blas_ws.ptr) {
            st = SBM_ERR_OUT_OF_MEMORY;
            goto done;
        }
        S->blas_ws.bytes = bytes;
        S->blas_ws.allocator = ctx->allocator;
    }
done:
    return st;
}

sbm_status sbm__cuda_lib_set_stream(sbm_ctx *ctx, cudaStream_t s)
{
    sbm_status st = SBM_SUCCESS;
    sbm__cuda_state *S = sbm__cuda_st(ctx);
    SBM__BLAS(ctx, cublasSetStream(sbm__cuda_blas(ctx), s), "cublasSetStream");
    /* after the stream: cublasSetStream puts the handle back on cuBLAS's own workspace */
    SBM__BLAS(ctx, cublasSetWorkspace(sbm__cuda_blas(ctx), S->blas_ws.ptr, S->blas_ws.bytes),
              "cublasSetWorkspace");
    SBM__SOLVER(ctx, cusolverDnSetStream(sbm__cuda_solver(ctx), s), "cusolverDnSetStream");
done:
    return st;
}

void sbm__cuda_chol_release(sbm_ctx *ctx)
{
    sbm__cuda_state *S = sbm__cuda_st(ctx);
    if (S->blas) cublasDestroy((cublasHandle_t)S->blas);
    if (S->solver) cusolverDnDestroy((cusolverDnHandle_t)S->solver);
    S->blas = S->solver = NULL;
    if (S->blas_ws.ptr) S->blas_ws.allocator.free(S->blas_ws.allocator.user, S->blas_ws.ptr);
    memset(&S->blas_ws, 0, sizeof S->blas_ws);
}
