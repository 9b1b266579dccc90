/* SPDX-License-Identifier: BSD-3-Clause */
/* Block-diagonal kernels (definitions; instantiated in cuda_bdiag.cu for the shapes of
 * SBM_BLOCK_SHAPES and the runtime-size shape through sbm_blk_select_shape). */
#ifndef SBM_CUDA_BDIAG_CUH
#define SBM_CUDA_BDIAG_CUH

#include "cuda_internal.cuh"
#include "sbm_blocks.h"

/* Block q: copy its lower triangle into the scratch l, check it is finite, factor, invert into
 * inv and mirror the lower triangle so the result is exactly symmetric (as LAPACK's dpotri plus
 * the CPU backend's mirroring give). A failing block records its index in *first (minimum over
 * blocks: an integer atomic, so the reported block is deterministic). N_ > 0: compile-time
 * size. */
template <int N_>
__global__ void sbm__k_spd_inverse(int64_t nnzb, int n_rt, const double *__restrict__ d,
                                   double *__restrict__ l, double *__restrict__ inv,
                                   unsigned long long *first)
{
    const int n = N_ ? N_ : n_rt;
    const int64_t nn = (int64_t)n * n;
    SBM__GRID_STRIDE(q, nnzb)
    {
        const double *a = d + q * nn;
        double *w = l + q * nn;
        double *x = inv + q * nn;
        int bad = 0;
        for (int cc = 0; cc < n; cc++)
            for (int i = 0; i < n; i++) {
                const double v = i >= cc ? a[i + cc * n] : 0.0;
                if (!isfinite(v)) bad = 1;
                w[i + cc * n] = v;
            }
        if (!bad) bad = sbm_blk_spd_inverse(n, w, x) != 0;
        if (bad) {
            atomicMin(first, (unsigned long long)q);
        } else {
            for (int cc = 0; cc < n; cc++)
                for (int i = cc + 1; i < n; i++) x[cc + i * n] = x[i + cc * n];
        }
    }
}

/* B_q = D_ii * A_q (left; i = block row of q) or A_q * D_jj (right; j = block column). A team
 * of R*C threads per block, one per element; every thread of the CTA reads its element's sum
 * before any writes (barrier), so B may be A. A missing diagonal block of D counts as zero. */
template <int R_, int C_>
__global__ void sbm__k_bdiag_scale(int64_t nbc, int64_t nnzb, int r_rt, int c_rt, int left,
                                   const int64_t *__restrict__ dptr,
                                   const double *__restrict__ dval, const int64_t *__restrict__ aptr,
                                   const int32_t *__restrict__ arow, const double *av, double *bv)
{
    const int R = R_ ? R_ : r_rt, C = C_ ? C_ : c_rt;
    const int T = R * C, K = left ? R : C;
    const int teams = blockDim.x / T;
    const int team = threadIdx.x / T;
    const int o = threadIdx.x - team * T;
    const int i = o % R, j = o / R;
    const int64_t rc = (int64_t)T, kk = (int64_t)K * K;
    /* every thread runs the same number of rounds, so the barriers match */
    for (int64_t q0 = (int64_t)blockIdx.x * teams; q0 < nnzb; q0 += (int64_t)gridDim.x * teams) {
        const int64_t q = q0 + team;
        const bool active = team < teams && q < nnzb;
        double acc = 0.0;
        if (active) {
            const int64_t col = sbm__upper_bound(aptr, 0, nbc + 1, q) - 1;
            const int64_t dj = left ? arow[q] : col;
            const int64_t d0 = dptr[dj];
            if (dptr[dj + 1] > d0) {
                const double *dblk = dval + d0 * kk;
                const double *ablk = av + q * rc;
                if (left)
                    for (int p = 0; p < K; p++) acc += dblk[i + p * K] * ablk[p + j * R];
                else
                    for (int p = 0; p < K; p++) acc += ablk[i + p * R] * dblk[p + j * K];
            }
        }
        __syncthreads();
        if (active) bv[q * rc + o] = acc;
        __syncthreads();
    }
}

#endif /* SBM_CUDA_BDIAG_CUH */
