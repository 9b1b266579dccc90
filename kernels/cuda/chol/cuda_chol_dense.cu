/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA backend's dense Cholesky solve of a small system (dense_spd_solve of the solve layer's
 * table, solve_kernels.h; semantics of kernels/cpu/chol/cpu_chol_dense.c): the lower triangle
 * scattered into a dense matrix on the device, cusolverDnDpotrf / cusolverDnDpotrs, and the only
 * copy to the host the 8-byte word naming the first failed column. */
#include "cuda_libs.cuh"
#include "solve_kernels.h"

#include <math.h>

/* ---------------------------------------------------------------------------------------- */
/* Dense Cholesky                                                                           */
/* ---------------------------------------------------------------------------------------- */

/* The lower triangle of A's dense form into M (zeroed): one thread per stored value, each
 * entry of M written by exactly one of them (the CPU backend's dense_lower). */
__global__ void sbm__k_dense_lower(int64_t nbc, int64_t nnzb, int r, int64_t n,
                                   const int64_t *__restrict__ colptr,
                                   const int32_t *__restrict__ rowind,
                                   const double *__restrict__ val, double *__restrict__ M)
{
    const int64_t rr = (int64_t)r * r;
    SBM__GRID_STRIDE(t, nnzb * rr)
    {
        const int64_t k = t / rr;
        const int e = (int)(t - k * rr);
        const int q = e % r, c = e / r;
        const int64_t j = sbm__upper_bound(colptr, 0, nbc + 1, k) - 1, i = rowind[k];
        if (i == j && q > c) continue;
        const int64_t row = i * r + q, col = j * r + c;
        M[col + row * n] = val[t];
    }
}

/* *first = the first column whose pivot is not positive or not finite: dpotrf's (info > 0)
 * or an earlier NaN pivot that passed its test. first starts at ~0. */
__global__ void sbm__k_dense_check(int64_t n, const double *__restrict__ M,
                                   const int *__restrict__ info, unsigned long long *first)
{
    const int64_t lim = *info > 0 ? (int64_t)*info - 1 : n;
    SBM__GRID_STRIDE(c, lim)
    {
        const double d = M[c + c * n];
        if (!(d > 0.0) || !isfinite(d)) atomicMin(first, (unsigned long long)c);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0 && lim < n) atomicMin(first, (unsigned long long)lim);
}

sbm_status sbm__cuda_dense_spd_solve(sbm_ctx *ctx, const sbm_cbc *A, const double *b, double *x,
                                     int64_t *failed)
{
    sbm_status st = SBM_SUCCESS;
    const int64_t n = A->nbr * A->r;
    const cudaStream_t s = sbm__cuda_stream(ctx);
    unsigned long long h_first = ~0ull, *d_first;
    int lwork = 0, *d_info;
    double *M, *work;
    char *base = NULL;
    sbm__carve cv = {0};
    const size_t o_first = sbm__carve_add(&cv, sizeof(unsigned long long));
    const size_t o_info = sbm__carve_add(&cv, sizeof(int));
    const size_t o_m = sbm__carve_add(&cv, (size_t)n * (size_t)n * sizeof(double));
    size_t o_work;
    *failed = -1;
    SBM__CK(sbm__cuda_enter(ctx));
    SBM__CK(sbm__cuda_lib_handles(ctx));
    SBM__SOLVER(ctx, SBM__CUDA_LIB(cusolverDnSetStream)(sbm__cuda_solver(ctx), s),
                "cusolverDnSetStream");
    /* the size query reads no matrix: any device pointer will do before M is carved */
    SBM__SOLVER(ctx,
                SBM__CUDA_LIB(cusolverDnDpotrf_bufferSize)(sbm__cuda_solver(ctx),
                                                           CUBLAS_FILL_MODE_LOWER, (int)n,
                                                           (double *)b, (int)n, &lwork),
                "cusolverDnDpotrf_bufferSize");
    o_work = sbm__carve_add(&cv, (size_t)(lwork > 0 ? lwork : 1) * sizeof(double));
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, cv.total, (void **)&base));
    d_first = (unsigned long long *)(base + o_first);
    d_info = (int *)(base + o_info);
    M = (double *)(base + o_m);
    work = (double *)(base + o_work);
    SBM__CU(ctx, cudaMemsetAsync(d_first, 0xff, sizeof *d_first, s), "cudaMemsetAsync (failed column)");
    SBM__CK(sbm__cuda_zero(ctx, M, (size_t)n * (size_t)n * sizeof(double)));
    if (A->nnzb > 0) {
        const int64_t vals = A->nnzb * A->r * A->r;
        sbm__k_dense_lower<<<sbm__grid(vals, 256), 256, 0, s>>>(A->nbc, A->nnzb, A->r, n,
                                                                A->colptr, A->rowind, A->values, M);
        SBM__LAUNCHED(ctx, "dense form of the system");
    }
    SBM__SOLVER(ctx,
                SBM__CUDA_LIB(cusolverDnDpotrf)(sbm__cuda_solver(ctx), CUBLAS_FILL_MODE_LOWER,
                                                (int)n, M, (int)n, work, lwork, d_info),
                "cusolverDnDpotrf");
    sbm__k_dense_check<<<sbm__grid(n, 256), 256, 0, s>>>(n, M, d_info, d_first);
    SBM__LAUNCHED(ctx, "pivot check of the dense factor");
    SBM__CK(sbm__cuda_d2h(ctx, &h_first, d_first, sizeof h_first));
    if (h_first != ~0ull) {
        *failed = (int64_t)h_first;
        st = SBM_ERR_NOT_POSITIVE_DEFINITE; /* the front end writes the message */
        goto done;
    }
    if (x != b) SBM__CK(sbm__cuda_d2d(ctx, x, b, (size_t)n * sizeof(double)));
    /* potrs's info reports only illegal arguments, which these are not: left on the device */
    SBM__SOLVER(ctx,
                SBM__CUDA_LIB(cusolverDnDpotrs)(sbm__cuda_solver(ctx), CUBLAS_FILL_MODE_LOWER,
                                                (int)n, 1, M, (int)n, x, (int)n, d_info),
                "cusolverDnDpotrs");
done:
    return st;
}
