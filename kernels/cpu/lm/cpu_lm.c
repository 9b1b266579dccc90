/* SPDX-License-Identifier: BSD-3-Clause */
/* Levenberg-Marquardt's predicted decrease on the CPU backend (lm_predicted of the solve layer's
 * table, solve_kernels.h), shared by BA's and SLAM's iterations. */
#include "solve_kernels.h"

sbm_status sbm__cpu_lm_predicted(sbm_ctx *ctx, int64_t n, double lambda, const double *D,
                                 double gsign, const double *g, const double *step,
                                 double *h_pred)
{
    (void)ctx;
    /* four interleaved partial sums, as sbm__cpu_vec_dot */
    double s[4] = {0.0, 0.0, 0.0, 0.0};
    for (int64_t i = 0; i < n; i++) s[i & 3] += step[i] * (lambda * D[i] * step[i] + gsign * g[i]);
    *h_pred = 0.5 * ((s[0] + s[1]) + (s[2] + s[3]));
    return SBM_SUCCESS;
}
