// SPDX-License-Identifier: BSD-3-Clause
/* BAL problems built in memory (sbm_bal_problem_create), constant cameras and points, and
 * camera priors. The problem is the container sbm_bal_read fills (sbm__bal_alloc); the
 * constant flags and priors are allocated on first use, so a problem without them carries
 * nothing extra and the BA layer sees NULL arrays. */
#include "io_internal.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* SBM_ERR_NOT_FINITE naming the first non-finite entry of x (n values, per values per item). */
static sbm_status check_finite(sbm_ctx *ctx, const char *array, const char *item, int per,
                               const double *x, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        if (!isfinite(x[k]))
            return sbm__error(ctx, SBM_ERR_NOT_FINITE,
                              "%s[%" PRId64 "] (%s %" PRId64 ", value %d) is %g", array, k, item,
                              k / per, (int)(k % per), x[k]);
    return SBM_SUCCESS;
}

static sbm_status check_index(sbm_ctx *ctx, const char *array, const char *item,
                              const int32_t *idx, int64_t n, int64_t bound)
{
    for (int64_t k = 0; k < n; k++)
        if (idx[k] < 0 || idx[k] >= bound)
            return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                              "%s[%" PRId64 "] = %d is not a %s: 0 <= index < %" PRId64, array, k,
                              (int)idx[k], item, bound);
    return SBM_SUCCESS;
}

static sbm_status check_desc(sbm_ctx *ctx, const sbm_bal_problem_desc *d)
{
    const struct {
        const char *name;
        int64_t v;
    } counts[3] = {{"cameras", d->cameras}, {"points", d->points}, {"observations", d->observations}};
    for (int a = 0; a < 3; a++)
        if (counts[a].v < 0 || (a < 2 && counts[a].v > INT32_MAX))
            return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                              "desc->%s = %" PRId64 " is out of range (0 <= %s <= %d)",
                              counts[a].name, counts[a].v, counts[a].name, INT32_MAX);
    const struct {
        const char *name;
        const void *p;
        int64_t n;
    } arrays[5] = {{"obs_camera", d->obs_camera, d->observations},
                   {"obs_point", d->obs_point, d->observations},
                   {"obs_xy", d->obs_xy, d->observations},
                   {"camera_params", d->camera_params, d->cameras},
                   {"point_params", d->point_params, d->points}};
    for (int a = 0; a < 5; a++)
        if (arrays[a].n > 0 && !arrays[a].p)
            return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "desc->%s is NULL (%" PRId64 " entries)",
                              arrays[a].name, arrays[a].n);
    SBM__TRY(check_index(ctx, "obs_camera", "camera", d->obs_camera, d->observations, d->cameras));
    SBM__TRY(check_index(ctx, "obs_point", "point", d->obs_point, d->observations, d->points));
    SBM__TRY(check_finite(ctx, "obs_xy", "observation", 2, d->obs_xy, 2 * d->observations));
    SBM__TRY(check_finite(ctx, "camera_params", "camera", 9, d->camera_params, 9 * d->cameras));
    return check_finite(ctx, "point_params", "point", 3, d->point_params, 3 * d->points);
}

sbm_status sbm_bal_problem_create(sbm_ctx *ctx, const sbm_bal_problem_desc *desc,
                                  sbm_bal_problem **problem)
{
    SBM__ENTER(ctx, "sbm_bal_problem_create");
    if (!problem) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument problem is NULL");
    *problem = NULL;
    if (!desc) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument desc is NULL");
    SBM__TRY(check_desc(ctx, desc));
    sbm_bal_problem *p = NULL;
    SBM__TRY(sbm__bal_alloc(ctx, desc->cameras, desc->points, desc->observations, &p));
    const size_t no = (size_t)desc->observations;
    if (no) {
        memcpy(p->obs_cam, desc->obs_camera, no * sizeof(int32_t));
        memcpy(p->obs_pt, desc->obs_point, no * sizeof(int32_t));
        memcpy(p->obs_xy, desc->obs_xy, 2 * no * sizeof(double));
    }
    if (desc->cameras)
        memcpy(p->cam, desc->camera_params, 9 * (size_t)desc->cameras * sizeof(double));
    if (desc->points)
        memcpy(p->pts, desc->point_params, 3 * (size_t)desc->points * sizeof(double));
    p->in_memory = 1;
    *problem = p;
    return SBM_SUCCESS;
}

/* flags[i] = value, allocating the n flags (zero) on first use. */
static sbm_status set_flag(sbm_ctx *ctx, sbm_bal_problem *p, unsigned char **flags, int64_t n,
                           int64_t i, int value, const char *what)
{
    if (!*flags) {
        if (!value) return SBM_SUCCESS;
        *flags = sbm__alloc_with(ctx, &p->a, (size_t)n, 1, what);
        if (!*flags) return SBM_ERR_OUT_OF_MEMORY;
        memset(*flags, 0, (size_t)n);
    }
    (*flags)[i] = (unsigned char)value;
    return SBM_SUCCESS;
}

static sbm_status check_flag_args(sbm_ctx *ctx, const sbm_bal_problem *p, int64_t i, int64_t n,
                                  const char *item, int value, const char *flag)
{
    if (!p) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument problem is NULL");
    if (i < 0 || i >= n)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument %s = %" PRId64 " is out of range (0 <= %s < %" PRId64 ")", item,
                          i, item, n);
    if (value != 0 && value != 1)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "argument %s = %d is not 0 or 1", flag,
                          value);
    return SBM_SUCCESS;
}

sbm_status sbm_bal_set_camera_constant(sbm_ctx *ctx, sbm_bal_problem *problem, int64_t camera,
                                       int constant)
{
    SBM__ENTER(ctx, "sbm_bal_set_camera_constant");
    SBM__TRY(check_flag_args(ctx, problem, camera, problem ? problem->ncam : 0, "camera", constant,
                             "constant"));
    return set_flag(ctx, problem, &problem->cam_const, problem->ncam, camera, constant,
                    "constant camera flags");
}

sbm_status sbm_bal_set_point_constant(sbm_ctx *ctx, sbm_bal_problem *problem, int64_t point,
                                      int constant)
{
    SBM__ENTER(ctx, "sbm_bal_set_point_constant");
    SBM__TRY(check_flag_args(ctx, problem, point, problem ? problem->npts : 0, "point", constant,
                             "constant"));
    return set_flag(ctx, problem, &problem->pt_const, problem->npts, point, constant,
                    "constant point flags");
}

/* The information matrix of a prior: finite, symmetric (to rounding of its largest entry) and
 * positive semidefinite. */
static sbm_status check_information(sbm_ctx *ctx, const double *info)
{
    SBM__TRY(check_finite(ctx, "information", "column", 9, info, 81));
    double amax = 0.0;
    for (int k = 0; k < 81; k++) amax = fmax(amax, fabs(info[k]));
    for (int c = 0; c < 9; c++)
        for (int r = c + 1; r < 9; r++)
            if (fabs(info[r + 9 * c] - info[c + 9 * r]) > 1e-12 * amax)
                return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                                  "argument information is not symmetric: entry (%d, %d) = %.17g, "
                                  "entry (%d, %d) = %.17g",
                                  r, c, info[r + 9 * c], c, r, info[c + 9 * r]);
    double lo, big;
    if (!sbm__sym_psd(9, info, &lo, &big))
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument information is not positive semidefinite: smallest "
                          "eigenvalue %.6g (largest magnitude %.6g, tolerance %g of it)",
                          lo, big, SBM_G2O_PSD_TOLERANCE);
    return SBM_SUCCESS;
}

sbm_status sbm_bal_set_camera_prior(sbm_ctx *ctx, sbm_bal_problem *problem, int64_t camera,
                                    const double *mean, const double *information)
{
    SBM__ENTER(ctx, "sbm_bal_set_camera_prior");
    SBM__TRY(check_flag_args(ctx, problem, camera, problem ? problem->ncam : 0, "camera", 0, ""));
    sbm_bal_problem *p = problem;
    if (!information) {
        if (p->cam_prior && p->cam_prior[camera]) p->cam_prior[camera] = 0, p->nprior--;
        return SBM_SUCCESS;
    }
    if (!mean)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT,
                          "argument mean is NULL (information is not: a prior needs both)");
    SBM__TRY(check_finite(ctx, "mean", "camera parameter block", 9, mean, 9));
    SBM__TRY(check_information(ctx, information));
    if (!p->cam_prior) {
        const size_t nc = (size_t)p->ncam;
        p->prior_mean = sbm__alloc_with(ctx, &p->a, nc, 9 * sizeof(double), "prior means");
        p->prior_info = p->prior_mean ? sbm__alloc_with(ctx, &p->a, nc, 81 * sizeof(double),
                                                        "prior information matrices") : NULL;
        p->cam_prior = p->prior_info ? sbm__alloc_with(ctx, &p->a, nc, 1, "prior flags") : NULL;
        if (!p->cam_prior) {
            sbm__free_with(&p->a, p->prior_mean);
            sbm__free_with(&p->a, p->prior_info);
            p->prior_mean = p->prior_info = NULL;
            return SBM_ERR_OUT_OF_MEMORY;
        }
        memset(p->cam_prior, 0, nc);
    }
    memcpy(p->prior_mean + 9 * camera, mean, 9 * sizeof(double));
    memcpy(p->prior_info + 81 * camera, information, 81 * sizeof(double));
    if (!p->cam_prior[camera]) p->cam_prior[camera] = 1, p->nprior++;
    return SBM_SUCCESS;
}
