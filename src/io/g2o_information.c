/* SPDX-License-Identifier: BSD-3-Clause */
/* The information matrices of g2o edges: the positive semidefinite check and the repair.
 *
 * Decisions recorded here:
 *   - The test is on eigenvalues, not on a Cholesky attempt: a PSD matrix may be singular (an
 *     edge constraining only some directions), which Cholesky refuses, and the message gives the
 *     smallest eigenvalue, the measure of how far the matrix is from PSD. Tolerance:
 *     SBM_G2O_PSD_TOLERANCE (sbm_io.h).
 *   - A Cholesky factorisation that succeeds proves the matrix PSD within the tolerance
 *     (cholesky_ok): eigenvalues are computed only for the others (singular or indefinite).
 *   - The eigenvalues come from a cyclic Jacobi method here rather than LAPACK dsyev: dsyev on a
 *     6x6 matrix goes through OpenBLAS level-2 calls that may wake its thread pool, several times
 *     slower than Jacobi then (see docs/DESIGN-NOTES.md, "Measurements behind code choices"), and a
 *     library cannot set OpenBLAS's threads for its caller. Jacobi on the stack needs no library,
 *     always converges (no error path to report), and computes the small eigenvalues of a graded
 *     matrix (diag(1e-9, 1e4)) to high relative accuracy (Demmel and Veselic 1992), which is what
 *     the tolerance compares.
 *   - The repair is the Frobenius-nearest PSD matrix (Higham 1988): V max(W, 0) V^T. It changes
 *     nothing in the directions the file constrains properly and removes only the negative
 *     curvature; the upper triangle is computed and mirrored, so the result is exactly
 *     symmetric. */
#include "io_internal.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#define JACOBI_MAX_SWEEPS 60 /* quadratic convergence takes 5-10 sweeps for n <= 6 */

/* A = V diag(w) V^T for the symmetric n x n A (full, column-major, n <= 9, finite); w in the
 * order of V's columns; V NULL: the eigenvalues only. A is scaled by a power of two first, so
 * that no intermediate overflows and the scaling is exact. */
static void sym_eig(int n, const double *A, double *w, double *V)
{
    double a[81], amax = 0.0;
    for (int k = 0; k < n * n; k++) amax = fmax(amax, fabs(A[k]));
    int e = 0;
    if (amax > 0.0) frexp(amax, &e);
    for (int k = 0; k < n * n; k++) a[k] = ldexp(A[k], -e); /* |a| <= 1 */
    if (V)
        for (int c = 0; c < n; c++)
            for (int r = 0; r < n; r++) V[r + n * c] = r == c ? 1.0 : 0.0;
    for (int sweep = 0; sweep < JACOBI_MAX_SWEEPS; sweep++) {
        int rotated = 0;
        for (int q = 1; q < n; q++)
            for (int p = 0; p < q; p++) {
                const double apq = a[p + n * q], app = a[p + n * p], aqq = a[q + n * q];
                /* negligible: relative to the diagonal (high relative accuracy), or below
                 * eps^2 of the (scaled) matrix */
                if (fabs(apq) <= DBL_EPSILON * sqrt(fabs(app) * fabs(aqq)) ||
                    fabs(apq) <= DBL_EPSILON * DBL_EPSILON)
                    continue;
                rotated = 1;
                const double theta = (aqq - app) / (2.0 * apq); /* finite: |a| <= 1 */
                double t = 1.0 / (fabs(theta) + sqrt(1.0 + theta * theta));
                if (theta < 0.0) t = -t;
                const double c = 1.0 / sqrt(1.0 + t * t), s = t * c;
                for (int k = 0; k < n; k++) { /* columns p, q of A */
                    const double akp = a[k + n * p], akq = a[k + n * q];
                    a[k + n * p] = c * akp - s * akq;
                    a[k + n * q] = s * akp + c * akq;
                }
                for (int k = 0; V && k < n; k++) { /* and of V */
                    const double vkp = V[k + n * p], vkq = V[k + n * q];
                    V[k + n * p] = c * vkp - s * vkq;
                    V[k + n * q] = s * vkp + c * vkq;
                }
                for (int k = 0; k < n; k++) { /* rows p, q of A */
                    const double apk = a[p + n * k], aqk = a[q + n * k];
                    a[p + n * k] = c * apk - s * aqk;
                    a[q + n * k] = s * apk + c * aqk;
                }
                a[p + n * q] = a[q + n * p] = 0.0;
            }
        if (!rotated) break;
    }
    for (int k = 0; k < n; k++) w[k] = ldexp(a[k + n * k], e);
}

/* 1 if the Cholesky factorisation of A runs with finite positive pivots. Then L L^T = A + E with
 * ||E|| <= about (n + 1) n eps ||A|| (Higham, Accuracy and Stability, thm 10.5 and 10.7), so the
 * smallest eigenvalue of A is above -1e-14 ||A||, well inside the tolerance: the common case,
 * a positive definite Omega, costs a 3x3 or 6x6 Cholesky and no eigenvalues. */
static int cholesky_ok(int n, const double *A)
{
    double L[81];
    for (int j = 0; j < n; j++) {
        double d = A[j + n * j];
        for (int k = 0; k < j; k++) d -= L[j + n * k] * L[j + n * k];
        if (!(d > 0.0) || !isfinite(d)) return 0; /* NaN from an overflow also lands here */
        const double ljj = sqrt(d);
        for (int i = j + 1; i < n; i++) {
            double x = A[i + n * j];
            for (int k = 0; k < j; k++) x -= L[i + n * k] * L[j + n * k];
            L[i + n * j] = x / ljj;
        }
    }
    return 1;
}

int sbm__sym_psd(int n, const double *A, double *smallest, double *largest)
{
    *smallest = *largest = 0.0;
    if (cholesky_ok(n, A)) return 1;
    double w[9] = {0};
    sym_eig(n, A, w, NULL);
    double lo = w[0], big = fabs(w[0]);
    for (int k = 1; k < n; k++) {
        lo = fmin(lo, w[k]);
        big = fmax(big, fabs(w[k]));
    }
    if (lo >= -SBM_G2O_PSD_TOLERANCE * big) return 1;
    *smallest = lo, *largest = big;
    return 0;
}

void sbm__g2o_omega_check(sbm__g2o_omega_scan *s, int64_t line, int32_t from, int32_t to, int n,
                          double *omega)
{
    if (cholesky_ok(n, omega)) return;
    double w[6] = {0}, V[36];
    sym_eig(n, omega, w, NULL);
    double smallest = w[0], largest = fabs(w[0]);
    for (int k = 1; k < n; k++) {
        smallest = fmin(smallest, w[k]);
        largest = fmax(largest, fabs(w[k]));
    }
    if (smallest >= -SBM_G2O_PSD_TOLERANCE * largest) return;
    if (s->bad++ == 0) {
        s->first_line = line;
        s->first_from = from;
        s->first_to = to;
        s->first_smallest = smallest;
        s->first_largest = largest;
    }
    if (!s->repair) return;
    sym_eig(n, omega, w, V); /* the same rotations, now accumulated */
    for (int c = 0; c < n; c++)
        for (int r = 0; r <= c; r++) {
            double sum = 0.0;
            for (int k = 0; k < n; k++)
                if (w[k] > 0.0) sum += V[r + n * k] * w[k] * V[c + n * k];
            omega[r + n * c] = sum;
            omega[c + n * r] = sum;
        }
}

sbm_status sbm__g2o_omega_refuse(sbm__text_reader *rd, const sbm__g2o_omega_scan *s,
                                 const char *tag, int64_t edges)
{
    if (s->repair || s->bad == 0) return SBM_SUCCESS;
    rd->line = s->first_line;
    return sbm__text_error(rd, SBM_ERR_PARSE,
                           "%s %d %d: the information matrix is not positive semidefinite: "
                           "smallest eigenvalue %.6g (largest magnitude %.6g, tolerance %g of "
                           "it); %" PRId64 " of the %" PRId64 " edges in the file have such a "
                           "matrix (SBM_G2O_INFORMATION_REPAIR projects each to the nearest "
                           "positive semidefinite matrix)",
                           tag, (int)s->first_from, (int)s->first_to, s->first_smallest,
                           s->first_largest, SBM_G2O_PSD_TOLERANCE, s->bad, edges);
}
