/* SPDX-License-Identifier: BSD-3-Clause */
/* One observation of a bundle-adjustment problem, robustified: the residual r = pred - xy of
 * the BAL camera model (sbm__bal_project), its Jacobians, and Ceres' loss correction
 * (sbm__loss_rho, sbm__loss_corrector), written as the per-observation record that the
 * backends' linearisations (kernels/cpu/ba/cpu_ba.c, kernels/cuda/ba/cuda_ba.cu) then sum per camera and per
 * point. Header-only, host and device inline, so both backends evaluate the same arithmetic. */
#ifndef SBM_BA_OBSERVATION_H
#define SBM_BA_OBSERVATION_H

#include "sbm_geometry.h"

/* Outcome of sbm__ba_observation. */
#define SBM__BA_OBS_OK 0
#define SBM__BA_OBS_BAD_PREDICTION 1 /* the prediction is not finite */
#define SBM__BA_OBS_BAD_JACOBIAN 2   /* the prediction is, a Jacobian or r' is not */

/* The record rec[26] = [r' (2); Jc' (2x9, column-major); Jp' (2x3, column-major)] of an
 * observation xy of point X by camera cam (prepared with its Jacobian) with the loss (type,
 * scale): r' = residual_scaling r,
 * J' = sqrt_rho1 (J - alpha_sq_norm r (r^T J)), and *cost = 0.5 rho(|r|^2) (+inf when the
 * prediction is not finite; the record is then undefined). @return SBM__BA_OBS_*. */
SBM_GEO_FN int sbm__ba_observation(const sbm__bal_camera *cam, const double X[3],
                                   const double xy[2], int type, double scale, double rec[26],
                                   double *cost)
{
    double pred[2];
    double *Jc = rec + 2, *Jp = rec + 20;
    sbm__bal_project_prepared(cam, X, pred, Jc, Jp);
    if (!isfinite(pred[0]) || !isfinite(pred[1])) {
        *cost = INFINITY;
        return SBM__BA_OBS_BAD_PREDICTION;
    }
    double r0 = pred[0] - xy[0], r1 = pred[1] - xy[1];
    const double s = r0 * r0 + r1 * r1;
    double rho[3];
    sbm__loss_rho(type, scale, s, rho);
    *cost = 0.5 * rho[0];
    if (type != SBM__LOSS_NONE) {
        double sq, rs, al;
        sbm__loss_corrector(s, rho, &sq, &rs, &al);
        for (int a = 0; a < 12; a++) { /* the 12 columns of [Jc Jp] */
            double *col = a < 9 ? Jc + 2 * a : Jp + 2 * (a - 9);
            const double t = al * (r0 * col[0] + r1 * col[1]);
            col[0] = sq * (col[0] - r0 * t);
            col[1] = sq * (col[1] - r1 * t);
        }
        r0 *= rs, r1 *= rs;
    }
    rec[0] = r0, rec[1] = r1;
    int finite = 1;
    for (int a = 0; a < 26; a++) finite &= isfinite(rec[a]) ? 1 : 0;
    return finite ? SBM__BA_OBS_OK : SBM__BA_OBS_BAD_JACOBIAN;
}

/* 0.5 rho(|r|^2) of an observation, no Jacobian (+inf when the prediction is not finite). */
SBM_GEO_FN double sbm__ba_observation_cost(const sbm__bal_camera *cam, const double X[3],
                                           const double xy[2], int type, double scale)
{
    double pred[2], rho[3];
    sbm__bal_project_prepared(cam, X, pred, NULL, NULL);
    if (!isfinite(pred[0]) || !isfinite(pred[1])) return INFINITY;
    const double r0 = pred[0] - xy[0], r1 = pred[1] - xy[1];
    sbm__loss_rho(type, scale, r0 * r0 + r1 * r1, rho);
    return 0.5 * rho[0];
}

/* A camera prior (the unary factor of sbm_bal_set_camera_prior) at the camera's parameters x
 * (9): with d = x - mean, its cost 0.5 d^T Omega d; with g non-NULL also g -= Omega d (9) and,
 * with u non-NULL, u += Omega (9x9, column-major), the terms it adds to gc and U. */
SBM_GEO_FN double sbm__ba_prior(const double x[9], const double mean[9], const double info[81],
                                double *g, double *u)
{
    double d[9], cost = 0.0;
    for (int a = 0; a < 9; a++) d[a] = x[a] - mean[a];
    for (int a = 0; a < 9; a++) {
        double s = 0.0; /* (Omega d)_a; Omega symmetric */
        for (int c = 0; c < 9; c++) s += info[a + 9 * c] * d[c];
        cost += d[a] * s;
        if (g) g[a] -= s;
    }
    if (u)
        for (int e = 0; e < 81; e++) u[e] += info[e];
    return 0.5 * cost;
}

#endif /* SBM_BA_OBSERVATION_H */
