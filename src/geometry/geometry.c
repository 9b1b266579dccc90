/* Closed-form models of bundle adjustment and pose-graph SLAM: the BAL camera projection and its
 * Jacobians, angle-axis rotations, and the SE2 / SE3 relative-pose errors with g2o's conventions
 * (types_slam2d EdgeSE2, types_slam3d EdgeSE3) and their Jacobians w.r.t. g2o's increments.
 * Everything is plain host arithmetic on tiny column-major arrays. */
#include "sbm_geometry.h"

#include <math.h>
#include <string.h>

#define SBM__PI 3.14159265358979323846

/* ---------------------------------------------------------------------------------------- */
/* Rotations                                                                                */
/* ---------------------------------------------------------------------------------------- */

static void cross3(const double a[3], const double b[3], double c[3])
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

/* [a]x, column-major. */
static void skew3(const double a[3], double S[9])
{
    S[0] = 0.0, S[1] = a[2], S[2] = -a[1];
    S[3] = -a[2], S[4] = 0.0, S[5] = a[0];
    S[6] = a[1], S[7] = -a[0], S[8] = 0.0;
}

/* C (m x n) = A (m x k) * B (k x n), column-major, C distinct from A and B. */
static void matmul(int m, int k, int n, const double *A, const double *B, double *C)
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
static void rodrigues_coefficients(double th2, double *a, double *b, double *c)
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

void sbm__angle_axis_to_matrix(const double w[3], double R[9])
{
    double a, b, c;
    rodrigues_coefficients(w[0] * w[0] + w[1] * w[1] + w[2] * w[2], &a, &b, &c);
    double S[9], S2[9];
    skew3(w, S);
    matmul(3, 3, 3, S, S, S2);
    for (int k = 0; k < 9; k++) R[k] = a * S[k] + b * S2[k];
    R[0] += 1.0, R[4] += 1.0, R[8] += 1.0;
}

void sbm__angle_axis_rotate(const double w[3], const double x[3], double y[3])
{
    /* R x = x + a (w x x) + b w x (w x x) */
    double a, b, c, wx[3], wwx[3];
    rodrigues_coefficients(w[0] * w[0] + w[1] * w[1] + w[2] * w[2], &a, &b, &c);
    cross3(w, x, wx);
    cross3(w, wx, wwx);
    for (int k = 0; k < 3; k++) y[k] = x[k] + a * wx[k] + b * wwx[k];
}

void sbm__matrix_to_angle_axis(const double R[9], double w[3])
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

void sbm__bal_project(const double cam[9], const double X[3], double pred[2], double Jc[18],
                      double Jp[6])
{
    const double *w = cam, *t = cam + 3;
    const double f = cam[6], k1 = cam[7], k2 = cam[8];
    double R[9], P[3];
    sbm__angle_axis_to_matrix(w, R);
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
    matmul(2, 2, 3, G, dp, A);
    if (Jc) {
        /* dP/dw = -R [X]x Jr(w), Jr(w) = I - b [w]x + c [w]x^2 (right Jacobian of SO(3)) */
        double a, b, c, S[9], S2[9], Jr[9], XS[9], RX[9], dPdw[9];
        rodrigues_coefficients(w[0] * w[0] + w[1] * w[1] + w[2] * w[2], &a, &b, &c);
        skew3(w, S);
        matmul(3, 3, 3, S, S, S2);
        for (int k = 0; k < 9; k++) Jr[k] = -b * S[k] + c * S2[k];
        Jr[0] += 1.0, Jr[4] += 1.0, Jr[8] += 1.0;
        skew3(X, XS);
        matmul(3, 3, 3, R, XS, RX);
        matmul(3, 3, 3, RX, Jr, dPdw);
        for (int k = 0; k < 9; k++) dPdw[k] = -dPdw[k];
        matmul(2, 3, 3, A, dPdw, Jc);
        memcpy(Jc + 6, A, 6 * sizeof(double));
        Jc[12] = rho * px, Jc[13] = rho * py;
        Jc[14] = f * r2 * px, Jc[15] = f * r2 * py;
        Jc[16] = f * r2 * r2 * px, Jc[17] = f * r2 * r2 * py;
    }
    if (Jp) matmul(2, 3, 3, A, R, Jp);
}

/* ---------------------------------------------------------------------------------------- */
/* SE2 (g2o types_slam2d)                                                                   */
/* ---------------------------------------------------------------------------------------- */

double sbm__normalize_angle(double th)
{
    /* g2o normalize_theta: [-pi, pi) */
    if (th >= -SBM__PI && th < SBM__PI) return th;
    const double m = floor(th / (2.0 * SBM__PI));
    th -= m * 2.0 * SBM__PI;
    if (th >= SBM__PI) th -= 2.0 * SBM__PI;
    if (th < -SBM__PI) th += 2.0 * SBM__PI;
    return th;
}

void sbm__se2_compose(const double a[3], const double b[3], double c[3])
{
    const double ca = cos(a[2]), sa = sin(a[2]);
    const double x = a[0] + ca * b[0] - sa * b[1];
    const double y = a[1] + sa * b[0] + ca * b[1];
    c[0] = x, c[1] = y, c[2] = sbm__normalize_angle(a[2] + b[2]);
}

void sbm__se2_inverse(const double a[3], double b[3])
{
    const double ca = cos(a[2]), sa = sin(a[2]);
    const double x = -(ca * a[0] + sa * a[1]);
    const double y = -(-sa * a[0] + ca * a[1]);
    b[0] = x, b[1] = y, b[2] = sbm__normalize_angle(-a[2]);
}

void sbm__se2_oplus(double x[3], const double d[3])
{
    /* VertexSE2::oplusImpl: translation and angle add */
    x[0] += d[0];
    x[1] += d[1];
    x[2] = sbm__normalize_angle(x[2] + d[2]);
}

void sbm__se2_error(const double xi[3], const double xj[3], const double z[3], double e[3],
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

static void quat_mul(const double a[4], const double b[4], double c[4])
{
    const double x = a[3] * b[0] + b[3] * a[0] + a[1] * b[2] - a[2] * b[1];
    const double y = a[3] * b[1] + b[3] * a[1] + a[2] * b[0] - a[0] * b[2];
    const double z = a[3] * b[2] + b[3] * a[2] + a[0] * b[1] - a[1] * b[0];
    const double w = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
    c[0] = x, c[1] = y, c[2] = z, c[3] = w;
}

static void quat_normalize(double q[4])
{
    const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int k = 0; k < 4; k++) q[k] /= n;
}

/* Rotation matrix (column-major) of a unit quaternion. */
static void quat_to_matrix(const double q[4], double R[9])
{
    const double x = q[0], y = q[1], z = q[2], w = q[3];
    R[0] = 1 - 2 * (y * y + z * z), R[3] = 2 * (x * y - z * w), R[6] = 2 * (x * z + y * w);
    R[1] = 2 * (x * y + z * w), R[4] = 1 - 2 * (x * x + z * z), R[7] = 2 * (y * z - x * w);
    R[2] = 2 * (x * z - y * w), R[5] = 2 * (y * z + x * w), R[8] = 1 - 2 * (x * x + y * y);
}

static void quat_rotate(const double q[4], const double v[3], double out[3])
{
    double R[9];
    quat_to_matrix(q, R);
    for (int i = 0; i < 3; i++) out[i] = R[i] * v[0] + R[i + 3] * v[1] + R[i + 6] * v[2];
}

void sbm__se3_compose(const double a[7], const double b[7], double c[7])
{
    double t[3], q[4];
    quat_rotate(a + 3, b, t);
    quat_mul(a + 3, b + 3, q);
    quat_normalize(q);
    for (int k = 0; k < 3; k++) c[k] = a[k] + t[k];
    memcpy(c + 3, q, sizeof q);
}

void sbm__se3_inverse(const double a[7], double b[7])
{
    const double qi[4] = {-a[3], -a[4], -a[5], a[6]};
    double t[3];
    quat_rotate(qi, a, t);
    b[0] = -t[0], b[1] = -t[1], b[2] = -t[2];
    memcpy(b + 3, qi, sizeof qi);
}

void sbm__se3_oplus(double x[7], const double d[6])
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

void sbm__se3_error(const double xi[7], const double xj[7], const double z[7], double e[6],
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
    quat_to_matrix(E + 3, RE);
    skew3(vE, vS);
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
        quat_to_matrix(z + 3, Rz);
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) RzT[r + 3 * c] = Rz[c + 3 * r];
        skew3(tE, tES);
        skew3(z, tzS);
        matmul(3, 3, 3, tES, RzT, A);
        matmul(3, 3, 3, RzT, tzS, B);
        for (int k = 0; k < 9; k++) Qm[k] = -vS[k];
        Qm[0] += wE, Qm[4] += wE, Qm[8] += wE;
        matmul(3, 3, 3, Qm, RzT, Cm);
        memset(Ji, 0, 36 * sizeof(double));
        for (int c = 0; c < 3; c++)
            for (int r = 0; r < 3; r++) {
                Ji[r + 6 * c] = -RzT[r + 3 * c];
                Ji[r + 6 * (c + 3)] = 2.0 * (A[r + 3 * c] + B[r + 3 * c]);
                Ji[(r + 3) + 6 * (c + 3)] = -Cm[r + 3 * c];
            }
    }
}
