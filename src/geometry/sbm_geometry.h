/* Camera and pose models (BAL projection, angle-axis, SE2, SE3): plain math on small
 * arrays, below every other layer. */
#ifndef SBM_GEOMETRY_H
#define SBM_GEOMETRY_H

#include <stdint.h>


/* BAL camera model: pred = f*r(p)*p with p = -P.xy/P.z, P = R(w) X + t. Jc (2x9) and Jp (2x3)
 * are column-major and may be NULL. */
void sbm__bal_project(const double cam[9], const double X[3], double pred[2], double Jc[18],
                      double Jp[6]);
/* y = R(w) x (Rodrigues; the first-order form near w = 0). */
void sbm__angle_axis_rotate(const double w[3], const double x[3], double y[3]);
/* Rotation matrix (column-major 3x3) of an angle-axis vector. */
void sbm__angle_axis_to_matrix(const double w[3], double R[9]);
/* Angle-axis vector of a rotation matrix (column-major). */
void sbm__matrix_to_angle_axis(const double R[9], double w[3]);

/* SE2 poses (x, y, theta). e = toVector(Z^-1 (Xi^-1 Xj)); Ji, Jj (3x3 column-major, may be
 * NULL) are de/d(increment) of vertex i and j at zero. */
void sbm__se2_error(const double xi[3], const double xj[3], const double z[3], double e[3],
                    double Ji[9], double Jj[9]);
void sbm__se2_compose(const double a[3], const double b[3], double c[3]); /* c = a*b */
void sbm__se2_inverse(const double a[3], double b[3]);
void sbm__se2_oplus(double x[3], const double d[3]);
double sbm__normalize_angle(double a);

/* SE3 poses (x, y, z, qx, qy, qz, qw), unit quaternions. e = (t, q.xyz) of Z^-1 (Xi^-1 Xj) with
 * w >= 0; Ji, Jj (6x6 column-major, may be NULL). */
void sbm__se3_error(const double xi[7], const double xj[7], const double z[7], double e[6],
                    double Ji[36], double Jj[36]);
void sbm__se3_compose(const double a[7], const double b[7], double c[7]);
void sbm__se3_inverse(const double a[7], double b[7]);
void sbm__se3_oplus(double x[7], const double d[6]);

#endif /* SBM_GEOMETRY_H */
