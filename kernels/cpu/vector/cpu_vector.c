/* SPDX-License-Identifier: BSD-3-Clause */
/* Vector operations of the CPU backend for the solvers (src/solve): dot, max |x|, axpy, xpay,
 * scale.
 *
 * The dot product sums in an order fixed by n alone: four interleaved partial sums (lane k takes
 * the entries i = k mod 4), combined as (s0 + s1) + (s2 + s3). The compiler may then vectorise
 * the loop without reassociating it, and every run gives the same bits. */
#include "cpu_backend.h"

#include <math.h>

sbm_status sbm__cpu_vec_dot(sbm_ctx *ctx, int64_t n, const double *x, const double *y,
                            double *h_dot)
{
    (void)ctx;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += x[i] * y[i];
        s1 += x[i + 1] * y[i + 1];
        s2 += x[i + 2] * y[i + 2];
        s3 += x[i + 3] * y[i + 3];
    }
    if (i < n) s0 += x[i] * y[i];
    if (i + 1 < n) s1 += x[i + 1] * y[i + 1];
    if (i + 2 < n) s2 += x[i + 2] * y[i + 2];
    *h_dot = (s0 + s1) + (s2 + s3);
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_vec_amax(sbm_ctx *ctx, int64_t n, const double *x, double *h_max)
{
    (void)ctx;
    double m = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double a = fabs(x[i]);
        if (a > m || a != a) m = a; /* a NaN wins: a non-finite vector is seen */
        if (m != m) break;
    }
    *h_max = m;
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_vec_axpy(sbm_ctx *ctx, int64_t n, double a, const double *x, double *y)
{
    (void)ctx;
    for (int64_t i = 0; i < n; i++) y[i] += a * x[i];
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_vec_xpay(sbm_ctx *ctx, int64_t n, const double *x, double a, double *y)
{
    (void)ctx;
    for (int64_t i = 0; i < n; i++) y[i] = x[i] + a * y[i];
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_vec_scale(sbm_ctx *ctx, int64_t n, double a, double *x)
{
    (void)ctx;
    for (int64_t i = 0; i < n; i++) x[i] *= a;
    return SBM_SUCCESS;
}
