/* The information matrices of g2o edges: the positive semidefinite check and the repair.
 *
 * Decisions recorded here:
 *   - The test is on eigenvalues (LAPACK dsyev of the full symmetric 3x3 or 6x6 matrix), not on
 *     a Cholesky attempt: a PSD matrix may be singular (an edge constraining only some
 *     directions), which Cholesky refuses, and the message gives the smallest eigenvalue, the
 *     measure of how far the matrix is from PSD. Tolerance: SBM_G2O_PSD_TOLERANCE (sbm_io.h).
 *   - The repair is the Frobenius-nearest PSD matrix (Higham 1988): V max(W, 0) V^T. It changes
 *     nothing in the directions the file constrains properly, and removes only the negative
 *     curvature; the upper triangle is computed and mirrored, so the result is exactly
 *     symmetric.
 *   - dsyev_work with a workspace on the stack, column-major: no allocation per edge. */
#include "io_internal.h"

#include <inttypes.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#define EIG_LWORK 256 /* >= dsyev's optimal (nb + 2) * n for n <= 6 */

/* Eigenvalues w (ascending) of the n x n symmetric A (full, column-major; n <= 6); with
 * vectors != 0, A is overwritten by the eigenvectors. @return dsyev's info (0: success). */
static int sym_eig(int n, double *A, double *w, int vectors)
{
    double work[EIG_LWORK];
    return (int)LAPACKE_dsyev_work(LAPACK_COL_MAJOR, vectors ? 'V' : 'N', 'U', (lapack_int)n, A,
                                   (lapack_int)n, w, work, EIG_LWORK);
}

static sbm_status eig_failed(sbm__text_reader *rd, const char *tag, int32_t from, int32_t to,
                             int info)
{
    return sbm__text_error(rd, SBM_ERR_PARSE,
                           "%s %d %d: the eigenvalues of the information matrix did not "
                           "converge (dsyev info %d)",
                           tag, (int)from, (int)to, info);
}

/* omega = V max(W, 0) V^T from its eigendecomposition. */
static sbm_status project_psd(sbm__text_reader *rd, const char *tag, int32_t from, int32_t to,
                              int n, double *omega)
{
    double V[36], w[6];
    memcpy(V, omega, (size_t)(n * n) * sizeof(double));
    const int info = sym_eig(n, V, w, 1);
    if (info != 0) return eig_failed(rd, tag, from, to, info);
    for (int c = 0; c < n; c++)
        for (int r = 0; r <= c; r++) {
            double s = 0.0;
            for (int k = 0; k < n; k++)
                if (w[k] > 0.0) s += V[r + n * k] * w[k] * V[c + n * k];
            omega[r + n * c] = s;
            omega[c + n * r] = s;
        }
    return SBM_SUCCESS;
}

sbm_status sbm__g2o_omega_check(sbm__text_reader *rd, sbm__g2o_omega_scan *s, const char *tag,
                                int32_t from, int32_t to, int n, double *omega)
{
    double A[36], w[6];
    memcpy(A, omega, (size_t)(n * n) * sizeof(double));
    const int info = sym_eig(n, A, w, 0);
    if (info != 0) return eig_failed(rd, tag, from, to, info);
    const double largest = fmax(fabs(w[0]), fabs(w[n - 1]));
    if (w[0] >= -SBM_G2O_PSD_TOLERANCE * largest) return SBM_SUCCESS;
    if (s->bad++ == 0) {
        s->first_line = rd->line;
        s->first_from = from;
        s->first_to = to;
        s->first_smallest = w[0];
        s->first_largest = largest;
    }
    return s->repair ? project_psd(rd, tag, from, to, n, omega) : SBM_SUCCESS;
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
