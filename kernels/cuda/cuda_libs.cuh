/* SPDX-License-Identifier: BSD-3-Clause */
/* cuBLAS and cuSOLVER in the CUDA backend (the sparse Cholesky of cuda_chol.cu and
 * cuda_chol_solve.cu, the dense Cholesky of cuda_chol_dense.cu): the libraries loaded on first
 * use, the context's handles, cuBLAS's workspace and their failures as statuses (implemented in
 * cuda_libs.cu). */
#ifndef SBM_CUDA_LIBS_CUH
#define SBM_CUDA_LIBS_CUH

#include <cublas_v2.h>
#include <cusolverDn.h>

#include "cuda_internal.cuh"

/* libsbm does not link cuBLAS and cuSOLVER: loading them costs a process about 0.2 s and
 * 260 MB, which a program that only uses CPU contexts must not pay. cuda_libs.cu opens them with
 * dlopen when a context first makes its handles (sbm__cuda_lib_handles) and fills this table of
 * their entry points, every one this library calls; a call site calls through it:
 * SBM__CUDA_LIB(cublasDgemm)(...). cublas_v2.h defines some names to their _v2 symbols
 * (cublasCreate is cublasCreate_v2): the type and the symbol looked up follow the header. */
#define SBM__CUDA_LIB_FUNCS(X)                                                              \
    X(cublas, cublasCreate)                                                                 \
    X(cublas, cublasDestroy)                                                                \
    X(cublas, cublasDgemm)                                                                  \
    X(cublas, cublasDsyrk)                                                                  \
    X(cublas, cublasDtrsm)                                                                  \
    X(cublas, cublasGetStatusName)                                                          \
    X(cublas, cublasSetAtomicsMode)                                                         \
    X(cublas, cublasSetStream)                                                              \
    X(cublas, cublasSetWorkspace)                                                           \
    X(cusolver, cusolverDnCreate)                                                           \
    X(cusolver, cusolverDnDestroy)                                                          \
    X(cusolver, cusolverDnDpotrf)                                                           \
    X(cusolver, cusolverDnDpotrf_bufferSize)                                                \
    X(cusolver, cusolverDnDpotrs)                                                           \
    X(cusolver, cusolverDnSetDeterministicMode)                                             \
    X(cusolver, cusolverDnSetStream)

struct sbm__cuda_lib_table {
#define SBM__CUDA_LIB_MEMBER(lib, name) decltype(&name) fn_##name;
    SBM__CUDA_LIB_FUNCS(SBM__CUDA_LIB_MEMBER)
#undef SBM__CUDA_LIB_MEMBER
};
/* Filled once by sbm__cuda_lib_handles before any handle exists, read-only afterwards. */
extern sbm__cuda_lib_table sbm__cuda_lib_fns;
#define SBM__CUDA_LIB(name) (sbm__cuda_lib_fns.fn_##name)

/* A cuBLAS / cuSOLVER failure as SBM_ERR_CUDA (SBM_ERR_OUT_OF_MEMORY when the library could not
 * allocate), naming what failed, the library's status and file:line. */
sbm_status sbm__cuda_lib_fail(sbm_ctx *ctx, int alloc_failed, const char *lib, int code,
                              const char *name, const char *what, const char *file, int line);

/* cuBLAS's name for a status ("cublasStatus_t" if cuBLAS is not loaded). */
const char *sbm__cuda_blas_status_name(cublasStatus_t status);

#define SBM__BLAS(ctx, call, what)                                                          \
    do {                                                                                    \
        cublasStatus_t sbm__b_ = (call);                                                    \
        if (sbm__b_ != CUBLAS_STATUS_SUCCESS) {                                             \
            st = sbm__cuda_lib_fail((ctx), sbm__b_ == CUBLAS_STATUS_ALLOC_FAILED, "cuBLAS",  \
                                    (int)sbm__b_, sbm__cuda_blas_status_name(sbm__b_),       \
                                    (what), __FILE__, __LINE__);                            \
            goto done;                                                                      \
        }                                                                                   \
    } while (0)

#define SBM__SOLVER(ctx, call, what)                                                        \
    do {                                                                                    \
        cusolverStatus_t sbm__v_ = (call);                                                  \
        if (sbm__v_ != CUSOLVER_STATUS_SUCCESS) {                                           \
            st = sbm__cuda_lib_fail((ctx), sbm__v_ == CUSOLVER_STATUS_ALLOC_FAILED,          \
                                    "cuSOLVER", (int)sbm__v_, "cusolverStatus_t", (what),    \
                                    __FILE__, __LINE__);                                    \
            goto done;                                                                      \
        }                                                                                   \
    } while (0)

/* Loads cuBLAS and cuSOLVER (once per process; a failure, SBM_ERR_NOT_SUPPORTED naming the
 * library and dlerror()'s message, is recorded on the context each time it is asked again) and
 * makes the context's cuBLAS and cuSOLVER handles if it has none yet (deterministic modes:
 * no atomics in cuBLAS, CUSOLVER_DETERMINISTIC_RESULTS) and cuBLAS's workspace, which the
 * context owns so that the CUDA graphs capturing cuBLAS calls can rely on it; they live until
 * the context dies (sbm__cuda_chol_release). */
sbm_status sbm__cuda_lib_handles(sbm_ctx *ctx);
/* Both handles on stream s, cuBLAS on the context's workspace (cublasSetStream puts it back on
 * cuBLAS's own, so every code path that calls cuBLAS sets its stream through this). */
sbm_status sbm__cuda_lib_set_stream(sbm_ctx *ctx, cudaStream_t s);
static inline cublasHandle_t sbm__cuda_blas(sbm_ctx *ctx)
{
    return (cublasHandle_t)sbm__cuda_st(ctx)->blas;
}
static inline cusolverDnHandle_t sbm__cuda_solver(sbm_ctx *ctx)
{
    return (cusolverDnHandle_t)sbm__cuda_st(ctx)->solver;
}

#endif /* SBM_CUDA_LIBS_CUH */
