/* SPDX-License-Identifier: BSD-3-Clause */
/* BAL problems as a model: a seeded synthetic generator and the residuals of the camera model
 * (the containers and their files are the I/O layer's, src/io/bal.c). */
#include "ba_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Synthetic problems                                                                       */
/* ---------------------------------------------------------------------------------------- */

static double rng_uniform(uint64_t *s) { return sbm_splitmix64_uniform(s); }
static double rng_sym(uint64_t *s) { return 2.0 * rng_uniform(s) - 1.0; }
static double rng_gauss(uint64_t *s)
{
    /* Box-Muller; u1 in (0, 1] so the log is finite */
    const double u1 = 1.0 - rng_uniform(s), u2 = rng_uniform(s);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
sbm_bal_generate_options sbm_bal_generate_defaults(int64_t cameras, int64_t points,
                                                   int obs_per_point, uint64_t seed)
{
    sbm_bal_generate_options o;
    o.cameras = cameras;
    o.points = points;
    o.obs_per_point = obs_per_point;
    o.pixel_noise = 0.5;
    o.perturbation = 1.0;
    o.seed = seed;
    o.layout = SBM_BAL_LAYOUT_SPHERE;
    return o;
}

/* Noise or a perturbation near DBL_MAX makes values that are not finite: refused, naming the
 * option and the first such value, rather than a problem no solver or writer can take. */
static sbm_status generated_finite(sbm_ctx *ctx, const sbm_bal_generate_options *o,
                                   const sbm_bal_problem *p)
{
    for (int64_t k = 0; k < 2 * p->nobs; k++)
        if (!isfinite(p->obs_xy[k]))
            return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                              "argument options: pixel_noise = %g makes coordinate %d of "
                              "observation %" PRId64 " %g",
                              o->pixel_noise, (int)(k % 2) + 1, k / 2, p->obs_xy[k]);
    for (int64_t k = 0; k < 9 * p->ncam; k++)
        if (!isfinite(p->cam[k]))
            return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                              "argument options: perturbation = %g makes parameter %d of camera "
                              "%" PRId64 " %g",
                              o->perturbation, (int)(k % 9) + 1, k / 9, p->cam[k]);
    for (int64_t k = 0; k < 3 * p->npts; k++)
        if (!isfinite(p->pts[k]))
            return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                              "argument options: perturbation = %g makes coordinate %d of point "
                              "%" PRId64 " %g",
                              o->perturbation, (int)(k % 3) + 1, k / 3, p->pts[k]);
    return SBM_SUCCESS;
}

/* The truth perturbed into p's parameters as o->perturbation says, drawing from *rng. */
static void perturb(const sbm_bal_generate_options *o, const double *truth, sbm_bal_problem *p,
                    uint64_t *rng)
{
    const int64_t nc = p->ncam, np = p->npts;
    const double *tc = truth, *tp = truth + 9 * nc;
    uint64_t s = *rng;
    /* The starting estimate: the truth perturbed (rotation ~1 degree, translation and points
     * ~2% of the scene, focal length ~1%, distortion a little): tens of pixels of error, the
     * kind of start BA gets from an incremental SfM pipeline. */
    const double e = o->perturbation;
    for (int64_t i = 0; i < nc; i++) {
        const double *a = tc + 9 * i;
        double *b = p->cam + 9 * i;
        for (int q = 0; q < 3; q++) b[q] = a[q] + e * 0.015 * rng_gauss(&s);
        for (int q = 3; q < 6; q++) b[q] = a[q] + e * 0.02 * rng_gauss(&s);
        b[6] = a[6] * (1.0 + e * 0.01 * rng_gauss(&s));
        b[7] = a[7] + e * 0.01 * rng_gauss(&s);
        b[8] = a[8] + e * 0.002 * rng_gauss(&s);
    }
    for (int64_t j = 0; j < 3 * np; j++) p->pts[j] = tp[j] + e * 0.02 * rng_gauss(&s);

    *rng = s;
}

sbm_status sbm__bal_generated_finish(sbm_ctx *ctx, const sbm_bal_generate_options *o,
                                     double *truth, int32_t *pick, sbm_bal_problem *p,
                                     uint64_t *rng, sbm_bal_problem **problem)
{
    perturb(o, truth, p, rng);
    sbm__host_free(ctx, pick);
    sbm__host_free(ctx, truth);
    const sbm_status st = generated_finite(ctx, o, p);
    if (st != SBM_SUCCESS) {
        sbm_bal_destroy(p);
        return st;
    }
    *problem = p;
    return SBM_SUCCESS;
}

sbm_status sbm_bal_generate(sbm_ctx *ctx, const sbm_bal_generate_options *o,
                            sbm_bal_problem **problem)
{
    SBM__ENTER(ctx, "sbm_bal_generate");
    if (!problem) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument problem is NULL");
    *problem = NULL;
    if (!o) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument options is NULL");
    if (o->cameras < 2 || o->cameras > INT32_MAX)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument options: cameras = %" PRId64 " (2 to %d)", o->cameras,
                          INT32_MAX);
    if (o->points < 1 || o->points > INT32_MAX)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument options: points = %" PRId64 " (1 to %d)", o->points, INT32_MAX);
    if (o->obs_per_point < 2 || o->obs_per_point > o->cameras)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument options: obs_per_point = %d (2 to cameras = %" PRId64 ")",
                          o->obs_per_point, o->cameras);
    if (!(o->pixel_noise >= 0.0) || !isfinite(o->pixel_noise) || !(o->perturbation >= 0.0) ||
        !isfinite(o->perturbation))
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument options: pixel_noise = %g and perturbation = %g must be "
                          "finite and >= 0",
                          o->pixel_noise, o->perturbation);
    if ((int64_t)o->obs_per_point > INT64_MAX / 64 / o->points)
        return sbm__error(ctx, SBM_ERR_OVERFLOW,
                          "argument options: %" PRId64 " points x %d observations overflow",
                          o->points, o->obs_per_point);
    if (o->layout != SBM_BAL_LAYOUT_SPHERE && o->layout != SBM_BAL_LAYOUT_TRAJECTORY)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument options: layout = %d (SBM_BAL_LAYOUT_SPHERE 0 or "
                          "SBM_BAL_LAYOUT_TRAJECTORY 1)",
                          (int)o->layout);
    if (o->layout == SBM_BAL_LAYOUT_TRAJECTORY) return sbm__bal_generate_trajectory(ctx, o, problem);

    const int64_t nc = o->cameras, np = o->points, k = o->obs_per_point;
    sbm_bal_problem *p = NULL;
    SBM__TRY(sbm__bal_alloc(ctx, nc, np, np * k, &p));
    double *truth = sbm__host_alloc(ctx, (size_t)(9 * nc + 3 * np) * sizeof(double),
                                    "true parameters");
    int32_t *pick = truth ? sbm__host_alloc(ctx, (size_t)k * sizeof(int32_t), "camera choice")
                          : NULL;
    if (!pick) {
        sbm_status st = ctx->last_status;
        if (truth) sbm__host_free(ctx, truth);
        sbm_bal_destroy(p);
        return st;
    }
    uint64_t s = o->seed ^ 0x5B41u;
    double *tc = truth, *tp = truth + 9 * nc;
    /* Points: uniform in the unit ball around the origin. */
    for (int64_t j = 0; j < np; j++) {
        double x, y, z;
        do {
            x = rng_sym(&s), y = rng_sym(&s), z = rng_sym(&s);
        } while (x * x + y * y + z * z > 1.0);
        tp[3 * j] = x, tp[3 * j + 1] = y, tp[3 * j + 2] = z;
    }
    /* Cameras: centres at distance 4 in uniformly random directions; BAL cameras look down -z,
     * so the camera z axis points from the cloud to the centre. */
    for (int64_t i = 0; i < nc; i++) {
        double c[3], n2;
        do {
            c[0] = rng_sym(&s), c[1] = rng_sym(&s), c[2] = rng_sym(&s);
            n2 = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
        } while (n2 > 1.0 || n2 < 0.01);
        const double nrm = sqrt(n2);
        double ez[3] = {c[0] / nrm, c[1] / nrm, c[2] / nrm};
        for (int a = 0; a < 3; a++) c[a] = 4.0 * ez[a];
        const double up[3] = {fabs(ez[2]) < 0.9 ? 0.0 : 1.0, 0.0, fabs(ez[2]) < 0.9 ? 1.0 : 0.0};
        double ex[3] = {up[1] * ez[2] - up[2] * ez[1], up[2] * ez[0] - up[0] * ez[2],
                        up[0] * ez[1] - up[1] * ez[0]};
        const double ne = sqrt(ex[0] * ex[0] + ex[1] * ex[1] + ex[2] * ex[2]);
        for (int a = 0; a < 3; a++) ex[a] /= ne;
        const double ey[3] = {ez[1] * ex[2] - ez[2] * ex[1], ez[2] * ex[0] - ez[0] * ex[2],
                              ez[0] * ex[1] - ez[1] * ex[0]};
        /* world -> camera: rows ex, ey, ez (column-major storage) */
        const double R[9] = {ex[0], ey[0], ez[0], ex[1], ey[1], ez[1], ex[2], ey[2], ez[2]};
        double *cam = tc + 9 * i;
        sbm__matrix_to_angle_axis(R, cam);
        for (int a = 0; a < 3; a++)
            cam[3 + a] = -(R[a] * c[0] + R[a + 3] * c[1] + R[a + 6] * c[2]);
        cam[6] = 500.0 * (1.0 + 0.1 * rng_sym(&s));
        cam[7] = 0.05 * rng_sym(&s);
        cam[8] = 0.01 * rng_sym(&s);
    }
    /* Observations grouped by point, cameras increasing (as in the BAL files): k distinct
     * cameras per point by Floyd's sampling. */
    int64_t t = 0;
    for (int64_t j = 0; j < np; j++) {
        int64_t m = 0;
        for (int64_t r = nc - k; r < nc; r++) {
            int32_t v = (int32_t)(sbm_splitmix64(&s) % (uint64_t)(r + 1));
            for (int64_t q = 0; q < m; q++)
                if (pick[q] == v) {
                    v = (int32_t)r;
                    break;
                }
            pick[m++] = v;
        }
        qsort(pick, (size_t)k, sizeof(int32_t), sbm__cmp_i32);
        for (int64_t q = 0; q < k; q++, t++) {
            double pred[2];
            sbm__bal_project(tc + 9 * (int64_t)pick[q], tp + 3 * j, pred, NULL, NULL);
            p->obs_cam[t] = pick[q];
            p->obs_pt[t] = (int32_t)j;
            p->obs_xy[2 * t] = pred[0] + o->pixel_noise * rng_gauss(&s);
            p->obs_xy[2 * t + 1] = pred[1] + o->pixel_noise * rng_gauss(&s);
        }
    }
    return sbm__bal_generated_finish(ctx, o, truth, pick, p, &s, problem);
}

/* ---------------------------------------------------------------------------------------- */
/* Residuals                                                                                */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm_bal_evaluate(sbm_ctx *ctx, const sbm_bal_problem *p, double *h_residuals,
                            double *cost)
{
    SBM__ENTER(ctx, "sbm_bal_evaluate");
    if (!p) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument problem is NULL");
    double sum = 0.0;
    for (int64_t k = 0; k < p->nobs; k++) {
        double pred[2];
        sbm__bal_project(p->cam + 9 * (int64_t)p->obs_cam[k], p->pts + 3 * (int64_t)p->obs_pt[k],
                         pred, NULL, NULL);
        const double rx = pred[0] - p->obs_xy[2 * k], ry = pred[1] - p->obs_xy[2 * k + 1];
        if (h_residuals) h_residuals[2 * k] = rx, h_residuals[2 * k + 1] = ry;
        sum += rx * rx + ry * ry;
    }
    if (cost) *cost = 0.5 * sum;
    return SBM_SUCCESS;
}

sbm_status sbm__bal_cost_check(sbm_ctx *ctx, const sbm_bal_problem *p, double cost)
{
    if (isfinite(cost)) return SBM_SUCCESS;
    for (int64_t k = 0; k < p->nobs; k++) {
        double pred[2];
        const int32_t c = p->obs_cam[k], j = p->obs_pt[k];
        sbm__bal_project(p->cam + 9 * (int64_t)c, p->pts + 3 * (int64_t)j, pred, NULL, NULL);
        const double rx = pred[0] - p->obs_xy[2 * k], ry = pred[1] - p->obs_xy[2 * k + 1];
        const double r2 = rx * rx + ry * ry;
        if (isfinite(r2)) continue;
        return sbm__error(ctx, SBM_ERR_NOT_FINITE,
                          "the initial cost is %g: observation %" PRId64 " (camera %d, point %d) "
                          "has the squared residual %g (prediction (%g, %g), measurement (%g, "
                          "%g)); parameters this large cannot be solved in double precision",
                          cost, k, (int)c, (int)j, r2, pred[0], pred[1], p->obs_xy[2 * k],
                          p->obs_xy[2 * k + 1]);
    }
    return sbm__error(ctx, SBM_ERR_NOT_FINITE,
                      "the initial cost is %g although every observation's squared residual is "
                      "finite: their sum overflows", cost);
}
