/* SPDX-License-Identifier: BSD-3-Clause */
/* cuBLAS and cuSOLVER in the CUDA backend (cuda_libs.cuh): their failures as statuses and the
 * context's handles and cuBLAS workspace, shared by the sparse Cholesky and the dense Cholesky
 * (chol/cuda_chol.cu, cuda_chol_solve.cu, cuda_chol_dense.cu). */
#include "cuda_libs.cuh"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <mutex>

sbm__cuda_lib_table sbm__cuda_lib_fns;

#define SBM__CUDA_LIB_STR2(x) #x
#define SBM__CUDA_LIB_STR(x) SBM__CUDA_LIB_STR2(x)

/* The sonames of the toolkit sbm was built with. */
#define SBM__CUBLAS_SONAME "libcublas.so." SBM__CUDA_LIB_STR(CUBLAS_VER_MAJOR)
#define SBM__CUSOLVER_SONAME "libcusolver.so." SBM__CUDA_LIB_STR(CUSOLVER_VER_MAJOR)
#define SBM__SONAME_cublas SBM__CUBLAS_SONAME
#define SBM__SONAME_cusolver SBM__CUSOLVER_SONAME

/* Where the load stands: done once per process (std::call_once); on failure the message
 * that every later sbm__cuda_lib_handles records on its context. */
static std::once_flag sbm__cuda_lib_once;
static int sbm__cuda_lib_ok;
static char sbm__cuda_lib_msg[768];

/* dlopen by soname (the loader's search path), then in the toolkit's library folder known at
 * build time; NULL with the message in sbm__cuda_lib_msg when both fail. */
static void *sbm__cuda_lib_open(const char *soname)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    char first[320];
    snprintf(first, sizeof first, "%s", dlerror());
#ifdef SBM_CUDA_LIB_DIR
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", SBM_CUDA_LIB_DIR, soname);
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    snprintf(sbm__cuda_lib_msg, sizeof sbm__cuda_lib_msg,
             "cannot load %s (needed by the CUDA backend's Cholesky): %s; %s", soname, first,
             dlerror());
#else
    snprintf(sbm__cuda_lib_msg, sizeof sbm__cuda_lib_msg,
             "cannot load %s (needed by the CUDA backend's Cholesky): %s", soname, first);
#endif
    return NULL;
}

static void sbm__cuda_lib_load(void)
{
    void *cublas = sbm__cuda_lib_open(SBM__CUBLAS_SONAME);
    if (!cublas) return;
    void *cusolver = sbm__cuda_lib_open(SBM__CUSOLVER_SONAME);
    if (!cusolver) {
        dlclose(cublas);
        return;
    }
    sbm__cuda_lib_table t;
    memset(&t, 0, sizeof t);
    /* the symbol looked up is the name after cublas_v2.h's macros (cublasCreate_v2) */
#define SBM__CUDA_LIB_SYM(lib, name)                                                        \
    t.fn_##name = (decltype(t.fn_##name))dlsym(lib, SBM__CUDA_LIB_STR(name));               \
    if (!t.fn_##name) {                                                                     \
        snprintf(sbm__cuda_lib_msg, sizeof sbm__cuda_lib_msg, "%s has no symbol %s: %s",     \
                 SBM__SONAME_##lib, SBM__CUDA_LIB_STR(name), dlerror());                   \
        dlclose(cusolver);                                                                  \
        dlclose(cublas);                                                                    \
        return;                                                                             \
    }
    SBM__CUDA_LIB_FUNCS(SBM__CUDA_LIB_SYM)
#undef SBM__CUDA_LIB_SYM
    /* both stay loaded for the life of the process, as linked libraries would */
    sbm__cuda_lib_fns = t;
    sbm__cuda_lib_ok = 1;
}

const char *sbm__cuda_blas_status_name(cublasStatus_t status)
{
    return sbm__cuda_lib_fns.fn_cublasGetStatusName
               ? sbm__cuda_lib_fns.fn_cublasGetStatusName(status)
               : "cublasStatus_t";
}

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
    std::call_once(sbm__cuda_lib_once, sbm__cuda_lib_load);
    if (!sbm__cuda_lib_ok)
        return sbm__error(ctx, SBM_ERR_NOT_SUPPORTED, "CUDA backend on device %d: %s",
                          ctx->device, sbm__cuda_lib_msg);
    /* bitwise repeatable results are part of the contract: say so rather than rely on defaults */
    if (!S->blas) {
        SBM__BLAS(ctx, SBM__CUDA_LIB(cublasCreate)(&blas), "cublasCreate");
        S->blas = blas;
        SBM__BLAS(ctx, SBM__CUDA_LIB(cublasSetAtomicsMode)(blas, CUBLAS_ATOMICS_NOT_ALLOWED),
                  "cublasSetAtomicsMode");
    }
    if (!S->solver) {
        SBM__SOLVER(ctx, SBM__CUDA_LIB(cusolverDnCreate)(&solver), "cusolverDnCreate");
        S->solver = solver;
        SBM__SOLVER(ctx,
                    SBM__CUDA_LIB(cusolverDnSetDeterministicMode)(solver,
                                                                  CUSOLVER_DETERMINISTIC_RESULTS),
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
    SBM__BLAS(ctx, SBM__CUDA_LIB(cublasSetStream)(sbm__cuda_blas(ctx), s), "cublasSetStream");
    /* after the stream: cublasSetStream puts the handle back on cuBLAS's own workspace */
    SBM__BLAS(ctx,
              SBM__CUDA_LIB(cublasSetWorkspace)(sbm__cuda_blas(ctx), S->blas_ws.ptr,
                                                S->blas_ws.bytes),
              "cublasSetWorkspace");
    SBM__SOLVER(ctx, SBM__CUDA_LIB(cusolverDnSetStream)(sbm__cuda_solver(ctx), s),
                "cusolverDnSetStream");
done:
    return st;
}

void sbm__cuda_chol_release(sbm_ctx *ctx)
{
    sbm__cuda_state *S = sbm__cuda_st(ctx);
    if (S->blas) SBM__CUDA_LIB(cublasDestroy)((cublasHandle_t)S->blas);
    if (S->solver) SBM__CUDA_LIB(cusolverDnDestroy)((cusolverDnHandle_t)S->solver);
    S->blas = S->solver = NULL;
    if (S->blas_ws.ptr) S->blas_ws.allocator.free(S->blas_ws.allocator.user, S->blas_ws.ptr);
    memset(&S->blas_ws, 0, sizeof S->blas_ws);
}
