/* SPDX-License-Identifier: BSD-3-Clause */
/* Closed-form models of bundle adjustment and pose-graph SLAM: the BAL camera projection and its
 * Jacobians, angle-axis rotations, the SE2 / SE3 relative-pose errors with g2o's conventions
 * (types_slam2d EdgeSE2, types_slam3d EdgeSE3) and their Jacobians w.r.t. g2o's increments, and
 * the robust losses of Ceres (HuberLoss, CauchyLoss, Corrector).
 *
 * Plain arithmetic on tiny column-major arrays, header-only and host+device inline: the host
 * solvers (src/ba, src/slam, src/io), the CPU backend's threaded linearisation (kernels/cpu) and the
 * CUDA kernels (kernels/cuda) evaluate the one model (docs/LAYERS.md: geometry is below every layer
 * that computes with it). */
#ifndef SBM_GEOMETRY_H
#define SBM_GEOMETRY_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define SBM_GEO_FN static __host__ __device__ inline
#else
#define SBM_GEO_FN static inline
#endif

#define SBM__GEO_PI 3.14159265358979323846

/* ---- Summary of the models (definitions below) ------------------------------------------
 * sbm__bal_project(cam[9], X[3], pred[2], Jc[18], Jp[6]): BAL camera model,
 *     pred = f*r(p)*p with p = -P.xy/P.z, P = R(w) X + t. Jc (2x9) and Jp (2x3) are
 *     column-major and may be NULL. sbm__bal_camera_prepare + sbm__bal_project_prepared: the
 *     same in two steps, the camera's part once for all its observations.
 * sbm__angle_axis_rotate(w, x, y): y = R(w) x (Rodrigues; the series form near w = 0).
 * sbm__angle_axis_to_matrix(w, R), sbm__matrix_to_angle_axis(R, w): column-major R.
 * sbm__se2_error(xi, xj, z, e, Ji, Jj): SE2 poses (x, y, theta); e = toVector(Z^-1 (Xi^-1 Xj));
 *     Ji, Jj (3x3 column-major, may be NULL) are de/d(increment) of vertex i and j at zero.
 * sbm__se2_compose (c = a*b), sbm__se2_inverse, sbm__se2_oplus, sbm__normalize_angle.
 * sbm__se3_error(xi, xj, z, e, Ji, Jj): SE3 poses (x, y, z, qx, qy, qz, qw), unit quaternions;
 *     e = (t, q.xyz) of Z^-1 (Xi^-1 Xj) with w >= 0; Ji, Jj (6x6 column-major, may be NULL).
 * sbm__se3_compose, sbm__se3_inverse, sbm__se3_oplus.
 * sbm__loss_rho, sbm__loss_corrector: robust losses (at the end of the file). */


/* ---------------------------------------------------------------------------------------- */
/* Rotations                                                                                */
/* ---------------------------------------------------------------------------------------- */

SBM_GEO_FN void sbm__geo_cross3(const double a[3], const double b[3], double c[3])
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

/* [a]x, column-major. */
SBM_GEO_FN void sbm__geo_skew3(const double a[3], double S[9])
{
    S[0] = 0.0, S[1] = a[2], S[2] = -a[1];
    S[3] = -a[2], S[4] = 0.0, S[5] = a[0];
    S[6] = a[1], S[7] = -a[0], S[8] = 0.0;
}

/* C (m x n) = A (m x k) * B (k x n), column-major, C distinct from A and B. */
SBM_GEO_FN void sbm__geo_matmul(int m, int k, int n, const double *A, const double *B, double *C)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0.0;
            for (int p = 0; p < k; p++) s += A[i + p * m] * B[p + j * k];
            C[i + j * m] = s;
        }
}

/* sin(t)/t, (1-cos t)/t^2, (t - sin t)/t^3 of t^2 = th2, by their series near 0 where the
 * closed forms cancel catastrophically. */
SBM_GEO_FN void sbm__geo_rodrigues_coefficients(double th2, double *a, double *b, double *c)
{
    if (th2 < 1e-8) {
        *a = 1.0 - th2 / 6.0 + th2 * th2 / 120.0;
        *b = 0.5 - th2 / 24.0 + th2 * th2 / 720.0;
        *c = 1.0 / 6.0 - th2 / 120.0 + th2 * th2 / 5040.0;
    } else {
        const double th = sqrt(th2);
        *a = sin(th) / th;
        *b = (1.0 - cos(th)) / th2;
        *c = (th - sin(th)) / (th2 * th);
    }
}

SBM_GEO_FN void sbm__angle_axis_to_matrix(const double w[3], double R[9])
{
    double a, b, c;
    sbm__geo_rodrigues_coefficients(w[0] * w[0] + w[1] * w[1] + w[2] * w[2], &a, &b, &c);
    double S[9], S2[9];
    sbm__geo_skew3(w, S);
    sbm__geo_matmul(3, 3, 3, S, S, S2);
    for (int k = 0; k < 9; k++) R[k] = a * S[k] + b * S2[k];
    R[0] += 1.0, R[4] += 1.0, R[8] += 1.0;
}

SBM_GEO_FN void sbm__angle_axis_rotate(const double w[3], const double x[3], double y[3])
{
    /* R x = x + a (w x x) + b w x (w x x) */
    double a, b, c, wx[3], wwx[3];
    sbm__geo_rodrigues_coefficients(w[0] * w[0] + w[1] * w[1] + w[2] * w[2], &a, &b, &c);
    sbm__geo_cross3(w, x, wx);
    sbm__geo_cross3(w, wx, wwx);
    for (int k = 0; k < 3; k++) y[k] = x[k] + a * wx[k] + b * wwx[k];
}

SBM_GEO_FN void sbm__matrix_to_angle_axis(const double R[9], double w[3])
{
    /* Through the unit quaternion (Shepperd's branch choice keeps it accurate at every angle). */
    const double m00 = R[0], m11 = R[4], m22 = R[8];
    const double tr = m00 + m11 + m22;
    double q[4]; /* x y z w */
    if (tr > 0.0) {
        double s = 2.0 * sqrt(tr + 1.0);
        q[3] = 0.25 * s;
        q[0] = (R[5] - R[7]) / s;
        q[1] = (R[6] - R[2]) / s;
        q[2] = (R[1] - R[3]) / s;
    } else if (m00 > m11 && m00 > m22) {
        double s = 2.0 * sqrt(1.0 + m00 - m11 - m22);
        q[3] = (R[5] - R[7]) / s;
        q[0] = 0.25 * s;
        q[1] = (R[3] + R[1]) / s;
        q[2] = (R[6] + R[2]) / s;
    } else if (m11 > m22) {
        double s = 2.0 * sqrt(1.0 + m11 - m00 - m22);
        q[3] = (R[6] - R[2]) / s;
        q[0] = (R[3] + R[1]) / s;
        q[1] = 0.25 * s;
        q[2] = (R[7] + R[5]) / s;
    } else {
        double s = 2.0 * sqrt(1.0 + m22 - m00 - m11);
        q[3] = (R[1] - R[3]) / s;
        q[0] = (R[6] + R[2]) / s;
        q[1] = (R[7] + R[5]) / s;
        q[2] = 0.25 * s;
    }
    if (q[3] < 0.0)
        for (int k = 0; k < 4; k++) q[k] = -q[k];
    const double vn = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
    const double scale = vn < 1e-12 ? 2.0 / q[3] : 2.0 * atan2(vn, q[3]) / vn;
    for (int k = 0; k < 3; k++) w[k] = scale * q[k];
}

/* ---------------------------------------------------------------------------------------- */
/* BAL camera                                                                               */
/* ---------------------------------------------------------------------------------------- */

/* The quantities of a BAL camera that do not depend on the point: R(w), t, f, k1, k2 and, for
 * the Jacobians, the right Jacobian of SO(3) Jr(w) = I - b [w]x + c [w]x^2. A linearisation
 * prepares each camera once instead of once per observation. */
typedef struct sbm__bal_camera {
    double R[9], Jr[9], t[3], f, k1, k2;
} sbm__bal_camera;

SBM_GEO_FN void sbm__bal_camera_prepare(const double cam[9], int with_jacobian,
                                        sbm__bal_camera *c)
{
    const double *w = cam;
    sbm__angle_axis_to_matrix(w, c->R);
    for (int i = 0; i < 3; i++) c->t[i] = cam[3 + i];
    c->f = cam[6], c->k1 = cam[7], c->k2 = cam[8];
    for (int k = 0; k < 9; k++) c->Jr[k] = 0.0;
    if (!with_jacobian) return;
    double a, b, cc, S[9], S2[9];
    sbm__geo_rodrigues_coefficients(w[0] * w[0] + w[1] * w[1] + w[2] * w[2], &a, &b, &cc);
    sbm__geo_skew3(w, S);
    sbm__geo_matmul(3, 3, 3, S, S, S2);
    for (int k = 0; k < 9; k++) c->Jr[k] = -b * S[k] + cc * S2[k];
    c->Jr[0] += 1.0, c->Jr[4] += 1.0, c->Jr[8] += 1.0;
}

/* sbm__bal_project with a prepared camera (Jc needs one prepared with_jacobian). */
SBM_GEO_FN void sbm__bal_project_prepared(const sbm__bal_camera *cam, const double X[3],
                                          double pred[2], double Jc[18], double Jp[6])
{
    const double *R = cam->R, *t = cam->t;
    const double f = cam->f, k1 = cam->k1, k2 = cam->k2;
    double P[3];
    for (int i = 0; i < 3; i++) P[i] = R[i] * X[0] + R[i + 3] * X[1] + R[i + 6] * X[2] + t[i];
    const double px = -P[0] / P[2], py = -P[1] / P[2];
    const double r2 = px * px + py * py;
    const double rho = 1.0 + r2 * (k1 + k2 * r2);
    pred[0] = f * rho * px;
    pred[1] = f * rho * py;
    if (!Jc && !Jp) return;

    /* A = dpred/dP = f (rho I + 2 (k1 + 2 k2 r2) p p^T) * dp/dP */
    const double s = 2.0 * (k1 + 2.0 * k2 * r2);
    const double G[4] = {f * (rho + s * px * px), f * s * px * py, f * s * px * py,
                         f * (rho + s * py * py)};
    const double iz = 1.0 / P[2];
    const double dp[6] = {-iz, 0.0, 0.0, -iz, P[0] * iz * iz, P[1] * iz * iz};
    double A[6];
    sbm__geo_matmul(2, 2, 3, G, dp, A);
    if (Jc) {
        /* dP/dw = -R [X]x Jr(w) */
        double XS[9], RX[9], dPdw[9];
        sbm__geo_skew3(X, XS);
        sbm__geo_matmul(3, 3, 3, R, XS, RX);
        sbm__geo_matmul(3, 3, 3, RX, cam->Jr, dPdw);
        for (int k = 0; k < 9; k++) dPdw[k] = -dPdw[k];
        sbm__geo_matmul(2, 3, 3, A, dPdw, Jc);
        memcpy(Jc + 6, A, 6 * sizeof(double));
        Jc[12] = rho * px, Jc[13] = rho * py;
        Jc[14] = f * r2 * px, Jc[15] = f * r2 * py;
        Jc[16] = f * r2 * r2 * px, Jc[17] = f * r2 * r2 * py;
    }
    if (Jp) sbm__geo_matmul(2, 3, 3, A, R, Jp);
}

SBM_GEO_FN void sbm__bal_project(const double cam[9], const double X[3], double pred[2],
                                 double Jc[18], double Jp[6])
{
    sbm__bal_camera c;
    sbm__bal_camera_prepare(cam, Jc != NULL, &c);
    sbm__bal_project_prepared(&c, X, pred, Jc, Jp);
}

/* ---------------------------------------------------------------------------------------- */
/* SE2 (g2o types_slam2d)                                                                   */
/* ---------------------------------------------------------------------------------------- */

SBM_GEO_FN double sbm__normalize_angle(double th)
{
    /* g2o normalize_theta: [-pi, pi) */
    if (th >= -SBM__GEO_PI && th < SBM__GEO_PI) return th;
    const double m = floor(th / (2.0 * SBM__GEO_PI));
    th -= m * 2.0 * SBM__GEO_PI;
    if (th >= SBM__GEO_PI) th -= 2.0 * SBM__GEO_PI;
    if (th < -SBM__GEO_PI) th += 2.0 * SBM__GEO_PI;
    return th;
}

SBM_GEO_FN void sbm__se2_compose(const double a[3], const double b[3], double c[3])
{
    const double ca = cos(a[2]), sa = sin(a[2]);
    const double x = a[0] + ca * b[0] - sa * b[1];
    const double y = a[1] + sa * b[0] + ca * b[1];
    c[0] = x, c[1] = y, c[2] = sbm__normalize_angle(a[2] + b[2]);
}

SBM_GEO_FN void sbm__se2_inverse(const double a[3], double b[3])
{
    const double ca = cos(a[2]), sa = sin(a[2]);
    const double x = -(ca * a[0] + sa * a[1]);
    const double y = -(-sa * a[0] + ca * a[1]);
    b[0] = x, b[1] = y, b[2] = sbm__normalize_angle(-a[2]);
}

SBM_GEO_FN void sbm__se2_oplus(double x[3], const double d[3])
{
    /* VertexSE2::oplusImpl: translation and angle add */
    x[0] += d[0];
    x[1] += d[1];
    x[2] = sbm__normalize_angle(x[2] + d[2]);
}

SBM_GEO_FN void sbm__se2_error(const double xi[3], const double xj[3], const double z[3], double e[3],
                    double Ji[9], double Jj[9])
{
    const double ci = cos(xi[2]), si = sin(xi[2]);
    const double cz = cos(z[2]), sz = sin(z[2]);
    const double dx = xj[0] - xi[0], dy = xj[1] - xi[1];
    /* D = Xi^-1 Xj, E = Z^-1 D */
    const double tdx = ci * dx + si * dy, tdy = -si * dx + ci * dy;
    const double ux = tdx - z[0], uy = tdy - z[1];
    e[0] = cz * ux + sz * uy;
    e[1] = -sz * ux + cz * uy;
    e[2] = sbm__normalize_angle(xj[2] - xi[2] - z[2]);
    /* M = Rz^T Ri^T: the rotation part of both Jacobians */
    const double m00 = cz * ci - sz * si, m01 = cz * si + sz * ci;
    const double m10 = -sz * ci - cz * si, m11 = -sz * si + cz * ci;
    if (Jj) {
        Jj[0] = m00, Jj[1] = m10, Jj[2] = 0.0;
        Jj[3] = m01, Jj[4] = m11, Jj[5] = 0.0;
        Jj[6] = 0.0, Jj[7] = 0.0, Jj[8] = 1.0;
    }
    if (Ji) {
        /* d(Ri^T dt)/dtheta_i = (-si dx + ci dy, -ci dx - si dy) = (tdy, -tdx), rotated by Rz^T */
        Ji[0] = -m00, Ji[1] = -m10, Ji[2] = 0.0;
        Ji[3] = -m01, Ji[4] = -m11, Ji[5] = 0.0;
        Ji[6] = cz * tdy - sz * tdx;
        Ji[7] = -sz * tdy - cz * tdx;
        Ji[8] = -1.0;
    }
}

/* ---------------------------------------------------------------------------------------- */
/* SE3 (g2o types_slam3d, quaternions x y z w)                                              */
/* ---------------------------------------------------------------------------------------- */

SBM_GEO_FN void sbm__geo_quat_mul(const double a[4], const double b[4], double c[4])
{
    const double x = a[3] * b[0] + b[3] * a[0] + a[1] * b[2] - a[2] * b[1];
    const double y = a[3] * b[1] + b[3] * a[1] + a[2] * b[0] - a[0] * b[2];
    const double z = a[3] * b[2] + b[3] * a[2] + a[0] * b[1] - a[1] * b[0];
    const double w = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
    c[0] = x, c[1] = y, c[2] = z, c[3] = w;
}

SBM_GEO_FN void sbm__geo_quat_normalize(double q[4])
{
    const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; k++) q[k] /= n;
}

/* Rotation matrix (column-major) of a unit quaternion. */
SBM_GEO_FN void sbm__geo_quat_to_matrix(const double q[4], double R[9])
{
    const double x = q[0], y = q[1], z = q[2], w = q[3];
    R[0] = 1 - 2 * (y * y + z * z), R[3] = 2 * (x * y - z * w), R[6] = 2 * (x * z + y * w);
    R[1] = 2 * (x * y + z * w), R[4] = 1 - 2 * (x * x + z * z), R[7] = 2 * (y * z - x * w);
    R[2] = 2 * (x * z - y * w), R[5] = 2 * (y * z + x * w), R[8] = 1 - 2 * (x * x + y * y);
}

SBM_GEO_FN void sbm__geo_quat_rotate(const double q[4], const double v[3], double out[3])
{
    double R[9];
    sbm__geo_quat_to_matrix(q, R);
    for (int i = 0; i < 3; i++) out[i] = R[i] * v[0] + R[i + 3] * v[1] + R[i + 6] * v[2];
}

SBM_GEO_FN void sbm__se3_compose(const double a[7], const double b[7], double c[7])
{
    double t[3], q[4];
    sbm__geo_quat_rotate(a + 3, b, t);
    sbm__geo_quat_mul(a + 3, b + 3, q);
    sbm__geo_quat_normalize(q);
    for (int k = 0; k < 3; k++) c[k] = a[k] + t[k];
    memcpy(c + 3, q, sizeof q);
}

SBM_GEO_FN void sbm__se3_inverse(const double a[7], double b[7])
{
    const double qi[4] = {-a[3], -a[4], -a[5], a[6]};
    double t[3];
    sbm__geo_quat_rotate(qi, a, t);
    b[0] = -t[0], b[1] = -t[1], b[2] = -t[2];
    memcpy(b + 3, qi, sizeof qi);
}

SBM_GEO_FN void sbm__se3_oplus(double x[7], const double d[6])
{
    /* VertexSE3::oplusImpl: x = x * fromVectorMQT(d); fromCompactQuaternion gives the identity
     * rotation when |d3..5| > 1 */
    double inc[7] = {d[0], d[1], d[2], d[3], d[4], d[5], 0.0};
    const double n2 = d[3] * d[3] + d[4] * d[4] + d[5] * d[5];
    if (n2 > 1.0)
        inc[3] = inc[4] = inc[5] = 0.0, inc[6] = 1.0;
    else
        inc[6] = sqrt(1.0 - n2);
    double c[7];
    sbm__se3_compose(x, inc, c);
    memcpy(x, c, sizeof c);
}

SBM_GEO_FN void sbm__se3_error(const double xi[7], const double xj[7], const double z[7], double e[6],
                    double Ji[36], double Jj[36])
{
    double xinv[7], zinv[7], d[7], E[7];
    sbm__se3_inverse(xi, xinv);
    sbm__se3_inverse(z, zinv);
    sbm__se3_compose(xinv, xj, d);
    sbm__se3_compose(zinv, d, E);
    if (E[6] < 0.0) /* toCompactQuaternion: w >= 0 */
        for (int k = 3; k < 7; k++) E[k] = -E[k];
    memcpy(e, E, 6 * sizeof(double));
    if (!Ji && !Jj) return;

    const double *tE = E, *vE = E + 3;
    const double wE = E[6];
    double RE[9], vS[9];
    sbm__geo_quat_to_matrix(E + 3, RE);
    sbm__geo_skew3(vE, vS);
    if (Jj) {
        /* E (+) dj = E * Inc(dj): [R_E 0; 0 wE I + [vE]x] */
        memset(Jj, 0, 36 * sizeof(double));
        for (int c = 0; c < 3; c++)
            for (int r = 0; r < 3; r++) {
                Jj[r + 6 * c] = RE[r + 3 * c];
                Jj[(r + 3) + 6 * (c + 3)] = vS[r + 3 * c] + (r == c ? wE : 0.0);
            }
    }
    if (Ji) {
        /* Xi (+) di gives Z^-1 Inc(di)^-1 Z E:
         *   [-Rz^T, 2([tE]x Rz^T + Rz^T [tz]x); 0, -(wE I - [vE]x) Rz^T] */
        double Rz[9], RzT[9], tES[9], tzS[9], A[9], B[9], Cm[9], Qm[9];
        sbm__geo_quat_to_matrix(z + 3, Rz);
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) RzT[r + 3 * c] = Rz[c + 3 * r];
        sbm__geo_skew3(tE, tES);
        sbm__geo_skew3(z, tzS);
        sbm__geo_matmul(3, 3, 3, tES, RzT, A);
        sbm__geo_matmul(3, 3, 3, RzT, tzS, B);
        for (int k = 0; k < 9; k++) Qm[k] = -vS[k];
        Qm[0] += wE, Qm[4] += wE, Qm[8] += wE;
        sbm__geo_matmul(3, 3, 3, Qm, RzT, Cm);
        memset(Ji, 0, 36 * sizeof(double));
        for (int c = 0; c < 3; c++)
            for (int r = 0; r < 3; r++) {
                Ji[r + 6 * c] = -RzT[r + 3 * c];
                Ji[r + 6 * (c + 3)] = 2.0 * (A[r + 3 * c] + B[r + 3 * c]);
                Ji[(r + 3) + 6 * (c + 3)] = -Cm[r + 3 * c];
            }
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Robust losses (Ceres' loss_function.h / corrector.cc)                                    */
/* ---------------------------------------------------------------------------------------- */

/* The kinds, numbered as sbm_loss_type in sbm_solve.h (src/ba/ba_internal.h checks it). */
#define SBM__LOSS_NONE 0
#define SBM__LOSS_HUBER 1
#define SBM__LOSS_CAUCHY 2

/* rho(s), rho'(s), rho''(s) of a residual block with squared norm s >= 0 and scale a > 0, as
 * Ceres defines them (the cost of the block is 0.5 rho(s)):
 *   none:   rho = s,                                   rho' = 1,           rho'' = 0;
 *   Huber:  rho = s for s <= a^2, else 2 a sqrt(s) - a^2; rho' = min(1, a/sqrt(s));
 *           rho'' = 0, or -a / (2 s^1.5) above a^2;
 *   Cauchy: rho = a^2 log(1 + s/a^2), rho' = 1 / (1 + s/a^2), rho'' = -rho'^2 / a^2. */
SBM_GEO_FN void sbm__loss_rho(int type, double a, double s, double rho[3])
{
    if (type == SBM__LOSS_HUBER) {
        const double b = a * a;
        if (s > b) {
            const double r = sqrt(s);
            rho[0] = 2.0 * a * r - b;
            rho[1] = a / r > DBL_MIN ? a / r : DBL_MIN; /* Ceres: max(DBL_MIN, a/r) */
            rho[2] = -rho[1] / (2.0 * s);
        } else {
            rho[0] = s, rho[1] = 1.0, rho[2] = 0.0;
        }
    } else if (type == SBM__LOSS_CAUCHY) {
        const double b = a * a, c = 1.0 / b, x = s * c;
        const double sum = 1.0 + x, inv = 1.0 / sum;
        /* Ceres: b log(sum), which loses digits for s << a^2 and is inf where s c overflows
         * (huge s, tiny a) though rho is not (log1p(x) = log(s) + log(c) there) */
        rho[0] = b * (x <= DBL_MAX ? log1p(x) : log(s) + log(c));
        rho[1] = inv > DBL_MIN ? inv : DBL_MIN;
        rho[2] = -c * (inv * inv);
    } else {
        rho[0] = s, rho[1] = 1.0, rho[2] = 0.0;
    }
}

/* Ceres' Corrector: the residual r of a block (s = |r|^2) and its Jacobian J become
 *     r' = residual_scaling r,   J' = sqrt_rho1 (J - alpha_sq_norm r (r^T J)),
 * so that the Gauss-Newton model of 0.5 |r'|^2 matches 0.5 rho(s) to second order (Triggs et
 * al., "Bundle adjustment - a modern synthesis", section 4.3). Where rho'' <= 0 (the outlier
 * side of every loss here, and s == 0) Ceres applies only the first-order scaling sqrt(rho'):
 * alpha_sq_norm = 0, residual_scaling = sqrt_rho1. */
SBM_GEO_FN void sbm__loss_corrector(double s, const double rho[3], double *sqrt_rho1,
                                    double *residual_scaling, double *alpha_sq_norm)
{
    const double sr = sqrt(rho[1]);
    *sqrt_rho1 = sr;
    if (s == 0.0 || rho[2] <= 0.0) {
        *residual_scaling = sr;
        *alpha_sq_norm = 0.0;
        return;
    }
    const double D = 1.0 + 2.0 * s * rho[2] / rho[1];
    const double alpha = 1.0 - sqrt(D);
    *residual_scaling = sr / (1.0 - alpha);
    *alpha_sq_norm = alpha / s;
}

#endif /* SBM_GEOMETRY_H */
