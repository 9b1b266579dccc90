/* SPDX-License-Identifier: BSD-3-Clause */
/* One edge of a pose graph, linearised with a robust loss: g2o's SE2 / SE3 errors and Jacobians
 * (sbm_geometry.h) with Ceres' loss and corrector, folded into the weights the normal equations
 * need. The one routine of the CPU and CUDA backends' SLAM kernels (kernels/cpu/slam/cpu_slam.c,
 * kernels/cuda/slam/cuda_slam.cu), header-only and host+device inline like sbm_geometry.h.
 *
 * With s = e^T Omega e, the cost of the edge is 0.5 rho(s). Ceres' corrector on the whitened
 * residual r = L^T e (Omega = L L^T) gives J'^T J' = J^T Omega_eff J and J'^T r' = rho' J^T Omega e
 * with
 *     Omega_eff = rho' (Omega - ((2 alpha - alpha^2) / s) (Omega e) (Omega e)^T),
 * alpha from sbm__loss_corrector (0 where rho'' <= 0: always for Huber and Cauchy, where
 * Omega_eff = rho' Omega). Without a loss rho(s) = s, rho' = 1: Omega_eff = Omega. */
#ifndef SBM_POSE_EDGE_H
#define SBM_POSE_EDGE_H

#include "sbm_geometry.h"

/* The edge from pose xi to pose xj with measurement z and information om (d x d, column-major;
 * dim 2: poses of 3 values, d = 3; dim 3: 7 values, d = 6), loss type (SBM__LOSS_*) and scale.
 * Returns rho(s). With w non-NULL also: e (d), w = rho'(s) Omega e, the Jacobians Ji, Jj (d x d,
 * column-major; each may be NULL) and, with om_eff non-NULL, Omega_eff (d x d). */
SBM_GEO_FN double sbm__pose_edge_linearize(int dim, int loss, double scale, const double *xi,
                                           const double *xj, const double *z, const double *om,
                                           double *e, double *w, double *Ji, double *Jj,
                                           double *om_eff)
{
    const int d = dim == 2 ? 3 : 6;
    double err[6], t[6], rho[3];
    if (dim == 2)
        sbm__se2_error(xi, xj, z, err, w ? Ji : NULL, w ? Jj : NULL);
    else
        sbm__se3_error(xi, xj, z, err, w ? Ji : NULL, w ? Jj : NULL);
    /* t = Omega e (Omega symmetric: column c of Omega against e), s = e^T t */
    double s = 0.0;
    for (int c = 0; c < d; c++) {
        double tc = 0.0;
        for (int r = 0; r < d; r++) tc += om[r + d * c] * err[r];
        t[c] = tc;
        s += tc * err[c];
    }
    sbm__loss_rho(loss, scale, s, rho);
    if (!w) return rho[0];
    for (int a = 0; a < d; a++) e[a] = err[a], w[a] = rho[1] * t[a];
    if (om_eff) {
        double sqrt_rho1, residual_scaling, alpha_sq_norm;
        sbm__loss_corrector(s, rho, &sqrt_rho1, &residual_scaling, &alpha_sq_norm);
        /* (2 alpha - alpha^2) / s with alpha = alpha_sq_norm * s */
        const double c = alpha_sq_norm * (2.0 - alpha_sq_norm * s);
        for (int q = 0; q < d; q++)
            for (int r = 0; r < d; r++)
                om_eff[r + d * q] = rho[1] * (om[r + d * q] - c * t[r] * t[q]);
    }
    return rho[0];
}

#endif /* SBM_POSE_EDGE_H */
