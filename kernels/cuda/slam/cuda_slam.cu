/* SPDX-License-Identifier: BSD-3-Clause */
/* Pose-graph SLAM iterations on the CUDA backend (the SLAM table, slam_kernels.h): one thread
 * per edge for the errors, Jacobians and robust weights (the model of blocks/, the same
 * code as the CPU backend), one per free slot for g2o's increments, one per block column for
 * the damping of Lambda's diagonal. Every output belongs to one thread: no atomics on floating
 * point, so two runs agree bitwise. The only copy to the host is the 8-byte index of a damped
 * diagonal that is not finite. */
#include "cuda_internal.cuh"
#include "slam_kernels.h"
#include "sbm_damp.h"
#include "sbm_pose_edge.h"

#define SLAM_THREADS 128

__global__ void __launch_bounds__(SLAM_THREADS)
    sbm__k_slam_linearize(sbm__slam_edges E, const double *__restrict__ x, double *rho, double *e,
                          double *w, double *J, double *omega)
{
    const int ps = E.dim == 2 ? 3 : 7, d = E.dim == 2 ? 3 : 6, bs = d * d;
    SBM__GRID_STRIDE(k, E.ne)
    {
        const double *xi = x + (int64_t)ps * E.v[2 * k];
        const double *xj = x + (int64_t)ps * E.v[2 * k + 1];
        double *Ji = NULL, *Jj = NULL;
        if (w) {
            if (E.blk[2 * k] >= 0) Ji = J + bs * E.blk[2 * k];
            if (E.blk[2 * k + 1] >= 0) Jj = J + bs * E.blk[2 * k + 1];
        }
        rho[k] = sbm__pose_edge_linearize(E.dim, E.loss, E.loss_scale, xi, xj, E.meas + ps * k,
                                          E.info + bs * k, w ? e + d * k : NULL,
                                          w ? w + d * k : NULL, Ji, Jj,
                                          w && omega ? omega + bs * k : NULL);
    }
}

sbm_status sbm__cuda_slam_linearize(sbm_ctx *ctx, const sbm__slam_edges *E, const double *x,
                                    double *rho, double *e, double *w, double *J, double *omega)
{
    sbm_status st = SBM_SUCCESS;
    SBM__CK(sbm__cuda_enter(ctx));
    if (E->ne == 0) goto done;
    sbm__k_slam_linearize<<<sbm__grid(E->ne, SLAM_THREADS), SLAM_THREADS, 0,
                            sbm__cuda_stream(ctx)>>>(*E, x, rho, e, w, J, omega);
    SBM__LAUNCHED(ctx, "SLAM linearisation");
done:
    return st;
}

__global__ void sbm__k_slam_oplus(int dim, int64_t nfree, double alpha,
                                  const double *__restrict__ dx, const double *__restrict__ x,
                                  double *__restrict__ y)
{
    const int ps = dim == 2 ? 3 : 7, d = dim == 2 ? 3 : 6;
    SBM__GRID_STRIDE(j, nfree)
    {
        double inc[6], p[7];
        for (int a = 0; a < d; a++) inc[a] = alpha * dx[d * j + a];
        for (int a = 0; a < ps; a++) p[a] = x[ps * j + a];
        if (dim == 2)
            sbm__se2_oplus(p, inc);
        else
            sbm__se3_oplus(p, inc);
        for (int a = 0; a < ps; a++) y[ps * j + a] = p[a];
    }
}

sbm_status sbm__cuda_slam_oplus(sbm_ctx *ctx, int dim, int64_t nfree, double alpha,
                                const double *dx, const double *x, double *y)
{
    sbm_status st = SBM_SUCCESS;
    SBM__CK(sbm__cuda_enter(ctx));
    if (nfree == 0) goto done;
    sbm__k_slam_oplus<<<sbm__grid(nfree, 256), 256, 0, sbm__cuda_stream(ctx)>>>(dim, nfree, alpha,
                                                                              dx, x, y);
    SBM__LAUNCHED(ctx, "SLAM pose update");
done:
    return st;
}

__global__ void sbm__k_slam_diag_get(int64_t nb, int d, const int64_t *__restrict__ pos,
                                     const double *__restrict__ V, double *__restrict__ D)
{
    SBM__GRID_STRIDE(j, nb)
    {
        for (int a = 0; a < d; a++) {
            const double v = pos[j] >= 0 ? V[pos[j] + a * (d + 1)] : 0.0;
            D[d * j + a] = sbm_blk_damp_scale(v);
        }
    }
}

sbm_status sbm__cuda_slam_diag_get(sbm_ctx *ctx, int64_t nb, int d, const int64_t *pos,
                                   const double *V, double *D)
{
    sbm_status st = SBM_SUCCESS;
    SBM__CK(sbm__cuda_enter(ctx));
    if (nb == 0) goto done;
    sbm__k_slam_diag_get<<<sbm__grid(nb, 256), 256, 0, sbm__cuda_stream(ctx)>>>(nb, d, pos, V,
                                                                              D);
    SBM__LAUNCHED(ctx, "damping scale");
done:
    return st;
}

/* bad: the smallest column whose damped diagonal is not finite (integer atomicMin: the same
 * result in every order). */
__global__ void sbm__k_slam_diag_add(int64_t nb, int d, const int64_t *__restrict__ pos,
                                     double lambda, const double *__restrict__ D,
                                     const double *L, double *V, double *blocks,
                                     unsigned long long *bad)
{
    SBM__GRID_STRIDE(j, nb)
    {
        if (pos[j] < 0) continue;
        int finite = 1;
        for (int a = 0; a < d; a++) {
            const int64_t q = pos[j] + a * (d + 1);
            V[q] = L[q] + lambda * (D ? D[d * j + a] : 1.0);
            finite = finite && isfinite(V[q]);
        }
        if (blocks)
            for (int q = 0; q < d * d; q++) blocks[(int64_t)d * d * j + q] = V[pos[j] + q];
        if (!finite) atomicMin(bad, (unsigned long long)j);
    }
}

sbm_status sbm__cuda_slam_diag_add(sbm_ctx *ctx, int64_t nb, int d, const int64_t *pos,
                                   double lambda, const double *D, const double *L, double *V,
                                   double *blocks, int64_t *h_bad)
{
    sbm_status st = SBM_SUCCESS;
    unsigned long long *bad = NULL, h = ~0ull;
    *h_bad = -1;
    SBM__CK(sbm__cuda_enter(ctx));
    if (nb == 0) goto done;
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_PRIM, sizeof *bad, (void **)&bad));
    SBM__CU(ctx, cudaMemsetAsync(bad, 0xff, sizeof *bad, sbm__cuda_stream(ctx)),
            "cudaMemsetAsync (damped diagonal)");
    sbm__k_slam_diag_add<<<sbm__grid(nb, 256), 256, 0, sbm__cuda_stream(ctx)>>>(nb, d, pos, lambda,
                                                                              D, L, V, blocks,
                                                                              bad);
    SBM__LAUNCHED(ctx, "damping of the diagonal");
    SBM__CK(sbm__cuda_d2h(ctx, &h, bad, sizeof h));
    if (h != ~0ull) *h_bad = (int64_t)h;
done:
    return st;
}
