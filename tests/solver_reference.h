/* SPDX-License-Identifier: BSD-3-Clause */
/* Independent reference models for the solver tests: the BAL projection, its cost and a
 * central-difference Gauss-Newton model, the SE2 and SE3 edge errors and chi2, written from the
 * formulas in sbm_io.h without the library's geometry code, so a test can check that the cost a
 * solver reports is the cost of the estimate it returns. Header-only (static functions): each
 * solver suite includes it once. */
#ifndef SBM_SOLVER_REFERENCE_H
#define SBM_SOLVER_REFERENCE_H

#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* BAL camera (sbm_io.h): P = R(w) X + t, p = -P.xy / P.z, pred = f (1 + k1 |p|^2 + k2 |p|^4) p;
 * R(w) by Rodrigues' formula on the unit axis. */
static inline void ref_project(const double *cam, const double *X, double pred[2])
{
    const double *w = cam;
    const double th2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
    double P[3];
    if (th2 > 1e-20) {
        const double th = sqrt(th2), c = cos(th), s = sin(th);
        const double k[3] = {w[0] / th, w[1] / th, w[2] / th};
        const double kx[3] = {k[1] * X[2] - k[2] * X[1], k[2] * X[0] - k[0] * X[2],
                              k[0] * X[1] - k[1] * X[0]};
        const double kd = k[0] * X[0] + k[1] * X[1] + k[2] * X[2];
        for (int a = 0; a < 3; a++) P[a] = X[a] * c + kx[a] * s + k[a] * kd * (1.0 - c);
    } else {
        P[0] = X[0] + w[1] * X[2] - w[2] * X[1];
        P[1] = X[1] + w[2] * X[0] - w[0] * X[2];
        P[2] = X[2] + w[0] * X[1] - w[1] * X[0];
    }
    for (int a = 0; a < 3; a++) P[a] += cam[3 + a];
    const double px = -P[0] / P[2], py = -P[1] / P[2], r2 = px * px + py * py;
    const double g = cam[6] * (1.0 + cam[7] * r2 + cam[8] * r2 * r2);
    pred[0] = g * px;
    pred[1] = g * py;
}

/* 0.5 |r|^2 with the parameters x = [cameras; points]. */
static inline double ref_bal_cost(const sbm_bal_info *pi, const double *x)
{
    double c = 0.0;
    for (int64_t k = 0; k < pi->observations; k++) {
        double pred[2];
        ref_project(x + 9 * pi->obs_camera[k], x + 9 * pi->cameras + 3 * pi->obs_point[k], pred);
        const double r0 = pred[0] - pi->obs_xy[2 * k], r1 = pred[1] - pi->obs_xy[2 * k + 1];
        c += r0 * r0 + r1 * r1;
    }
    return 0.5 * c;
}

/* The gradient g = -J^T r and the damping scale D = diag(J^T J) clamped to [1e-6, 1e32] at x,
 * the Jacobian by central differences (12 parameters per observation). */
static inline void ref_bal_model(const sbm_bal_info *pi, const double *x, double *g, double *D)
{
    const int64_t nall = 9 * pi->cameras + 3 * pi->points;
    double *y = malloc((size_t)nall * sizeof(double));
    assert_non_null(y);
    memcpy(y, x, (size_t)nall * sizeof(double));
    memset(g, 0, (size_t)nall * sizeof(double));
    memset(D, 0, (size_t)nall * sizeof(double));
    for (int64_t k = 0; k < pi->observations; k++) {
        const int64_t ic = 9 * pi->obs_camera[k], ip = 9 * pi->cameras + 3 * pi->obs_point[k];
        double pred[2];
        ref_project(y + ic, y + ip, pred);
        const double r[2] = {pred[0] - pi->obs_xy[2 * k], pred[1] - pi->obs_xy[2 * k + 1]};
        for (int q = 0; q < 12; q++) {
            const int64_t at = q < 9 ? ic + q : ip + q - 9;
            const double keep = y[at], h = 1e-6 * (1.0 + fabs(keep));
            double pp[2], pm[2];
            y[at] = keep + h;
            ref_project(y + ic, y + ip, pp);
            y[at] = keep - h;
            ref_project(y + ic, y + ip, pm);
            y[at] = keep;
            for (int a = 0; a < 2; a++) {
                const double j = (pp[a] - pm[a]) / (2.0 * h);
                g[at] -= j * r[a];
                D[at] += j * j;
            }
        }
    }
    for (int64_t i = 0; i < nall; i++) D[i] = fmin(fmax(D[i], 1e-6), 1e32);
    free(y);
}

/* SE2: e = (Rz^T (Ri^T (tj - ti) - tz), angle(thj - thi - thz)). */
static inline void ref_se2_error(const double *xi, const double *xj, const double *z, double e[3])
{
    const double dx = xj[0] - xi[0], dy = xj[1] - xi[1];
    const double ux = cos(xi[2]) * dx + sin(xi[2]) * dy - z[0];
    const double uy = -sin(xi[2]) * dx + cos(xi[2]) * dy - z[1];
    e[0] = cos(z[2]) * ux + sin(z[2]) * uy;
    e[1] = -sin(z[2]) * ux + cos(z[2]) * uy;
    const double a = xj[2] - xi[2] - z[2];
    e[2] = atan2(sin(a), cos(a));
}

/* Quaternions (x, y, z, w): c = a b; v' = R(q) v. */
static inline void qmul(const double *a, const double *b, double *c)
{
    c[0] = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
    c[1] = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
    c[2] = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
    c[3] = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
}
static inline void qrot(const double *q, const double *v, double *out)
{
    const double p[4] = {v[0], v[1], v[2], 0.0}, qc[4] = {-q[0], -q[1], -q[2], q[3]};
    double t[4], r[4];
    qmul(q, p, t);
    qmul(t, qc, r);
    memcpy(out, r, 3 * sizeof(double));
}
/* SE3 pose (t, q): the inverse is (-R^T t, q*). */
static inline void se3_inv(const double *a, double *b)
{
    const double qc[4] = {-a[3], -a[4], -a[5], a[6]};
    double t[3];
    qrot(qc, a, t);
    for (int k = 0; k < 3; k++) b[k] = -t[k];
    memcpy(b + 3, qc, sizeof qc);
}
static inline void se3_mul(const double *a, const double *b, double *c)
{
    double t[3];
    qrot(a + 3, b, t);
    for (int k = 0; k < 3; k++) c[k] = a[k] + t[k];
    qmul(a + 3, b + 3, c + 3);
}
/* SE3: e = (t, q.xyz) of Z^-1 Xi^-1 Xj with q.w made >= 0. */
static inline void ref_se3_error(const double *xi, const double *xj, const double *z, double e[6])
{
    double ii[7], zi[7], d[7], E[7];
    se3_inv(xi, ii);
    se3_inv(z, zi);
    se3_mul(ii, xj, d);
    se3_mul(zi, d, E);
    const double s = E[6] < 0.0 ? -1.0 : 1.0;
    for (int k = 0; k < 6; k++) e[k] = k < 3 ? E[k] : s * E[k];
}

/* chi2 = sum e^T Omega e at the poses x. */
static inline double ref_chi2(const sbm_g2o_info *gi, const double *x)
{
    const int d = gi->error_dim, ps = gi->pose_size;
    double chi2 = 0.0;
    for (int64_t k = 0; k < gi->edges; k++) {
        double e[6];
        const double *xi = x + ps * gi->edge_from[k], *xj = x + ps * gi->edge_to[k];
        const double *z = gi->edge_measurement + ps * k, *om = gi->edge_information + d * d * k;
        if (ps == 3)
            ref_se2_error(xi, xj, z, e);
        else
            ref_se3_error(xi, xj, z, e);
        for (int a = 0; a < d; a++)
            for (int b = 0; b < d; b++) chi2 += e[a] * om[a + d * b] * e[b];
    }
    return chi2;
}

#endif /* SBM_SOLVER_REFERENCE_H */
