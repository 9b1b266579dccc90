/* SPDX-License-Identifier: BSD-3-Clause */
/* The trajectory layout of the synthetic generator (SBM_BAL_LAYOUT_TRAJECTORY, sbm_ba.h):
 * cameras every 0.5 units along a circle, each looking outwards (radially), points in a band 2 to
 * 6 units beyond the circle, each seen by obs_per_point distinct cameras drawn from the
 * 2 obs_per_point + 1 cameras nearest to it along the loop. Visibility is local, so each camera
 * shares points with a few neighbours only and the reduced camera system is sparse (banded
 * along the loop, closed at its end), as in real sequences. Camera numbers are a seeded
 * permutation of the order along the loop. */
#include "ba_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TWO_PI 6.283185307179586

static double rng_uniform(uint64_t *s) { return sbm_splitmix64_uniform(s); }
static double rng_sym(uint64_t *s) { return 2.0 * rng_uniform(s) - 1.0; }
static double rng_gauss(uint64_t *s)
{
    /* Box-Muller; u1 in (0, 1] so the log is finite; the draws in a fixed order */
    const double u1 = 1.0 - rng_uniform(s);
    const double u2 = rng_uniform(s);
    return sqrt(-2.0 * log(u1)) * cos(TWO_PI * u2);
}

/* The true camera at centre c looking along -ez (ez the unit camera z axis, pointing from the
 * scene to the camera), up +z. */
static void place_camera(const double c[3], const double ez[3], uint64_t *s, double *cam)
{
    const double up[3] = {0.0, 0.0, 1.0};
    double ex[3] = {up[1] * ez[2] - up[2] * ez[1], up[2] * ez[0] - up[0] * ez[2],
                    up[0] * ez[1] - up[1] * ez[0]};
    const double ne = sqrt(ex[0] * ex[0] + ex[1] * ex[1] + ex[2] * ex[2]);
    for (int a = 0; a < 3; a++) ex[a] /= ne;
    const double ey[3] = {ez[1] * ex[2] - ez[2] * ex[1], ez[2] * ex[0] - ez[0] * ex[2],
                          ez[0] * ex[1] - ez[1] * ex[0]};
    const double R[9] = {ex[0], ey[0], ez[0], ex[1], ey[1], ez[1], ex[2], ey[2], ez[2]};
    sbm__matrix_to_angle_axis(R, cam);
    for (int a = 0; a < 3; a++) cam[3 + a] = -(R[a] * c[0] + R[a + 3] * c[1] + R[a + 6] * c[2]);
    cam[6] = 500.0 * (1.0 + 0.1 * rng_sym(s));
    cam[7] = 0.05 * rng_sym(s);
    cam[8] = 0.01 * rng_sym(s);
}

/* k distinct positions of a window of w (k <= w) by Floyd's sampling, increasing. */
static void sample_window(int64_t w, int64_t k, uint64_t *s, int32_t *pick)
{
    int64_t m = 0;
    for (int64_t r = w - k; r < w; r++) {
        int32_t v = (int32_t)(sbm_splitmix64(s) % (uint64_t)(r + 1));
        for (int64_t q = 0; q < m; q++)
            if (pick[q] == v) {
                v = (int32_t)r;
                break;
            }
        pick[m++] = v;
    }
    qsort(pick, (size_t)k, sizeof(int32_t), sbm__cmp_i32);
}

sbm_status sbm__bal_generate_trajectory(sbm_ctx *ctx, const sbm_bal_generate_options *o,
                                        sbm_bal_problem **problem)
{
    const int64_t nc = o->cameras, np = o->points, k = o->obs_per_point;
    const int64_t w = 2 * k + 1 < nc ? 2 * k + 1 : nc; /* the window of nearest cameras */
    sbm_bal_problem *p = NULL;
    SBM__TRY(sbm__bal_alloc(ctx, nc, np, np * k, &p));
    double *truth = sbm__host_alloc(ctx, (size_t)(9 * nc + 3 * np) * sizeof(double), "true parameters");
    int32_t *pick = truth ? sbm__host_alloc(ctx, (size_t)(k + nc) * sizeof(int32_t), "camera choice") : NULL;
    if (!pick) {
        const sbm_status st = ctx->last_status;
        if (truth) sbm__host_free(ctx, truth);
        sbm_bal_destroy(p);
        return st;
    }
    int32_t *number = pick + k; /* camera number of the i-th camera along the loop */
    uint64_t s = o->seed ^ 0x7A4Bu;
    for (int64_t i = 0; i < nc; i++) number[i] = (int32_t)i;
    for (int64_t i = nc - 1; i > 0; i--) { /* Fisher-Yates */
        const int64_t j = (int64_t)(sbm_splitmix64(&s) % (uint64_t)(i + 1));
        const int32_t t = number[i];
        number[i] = number[j], number[j] = t;
    }
    const double R = 0.5 * (double)nc / TWO_PI; /* 0.5 units between cameras */
    double *tc = truth, *tp = truth + 9 * nc;
    for (int64_t i = 0; i < nc; i++) {
        const double phi = TWO_PI * (double)i / (double)nc;
        const double h = 0.1 * rng_sym(&s);
        const double c[3] = {R * cos(phi), R * sin(phi), h};
        const double ez[3] = {-cos(phi), -sin(phi), 0.0}; /* looking outwards */
        place_camera(c, ez, &s, tc + 9 * (int64_t)number[i]);
    }
    int64_t t = 0;
    for (int64_t j = 0; j < np; j++) {
        const double u = rng_uniform(&s);
        const double d = 2.0 + 4.0 * rng_uniform(&s);
        const double phi = TWO_PI * u, rr = R + d;
        tp[3 * j] = rr * cos(phi), tp[3 * j + 1] = rr * sin(phi);
        tp[3 * j + 2] = 1.5 * rng_sym(&s);
        /* the window of w cameras around the nearest one along the loop */
        const int64_t near = (int64_t)llround(u * (double)nc) % nc;
        const int64_t first = ((near - w / 2) % nc + nc) % nc;
        sample_window(w, k, &s, pick);
        int32_t cams[64], *cm = k <= 64 ? cams : malloc((size_t)k * sizeof(int32_t));
        if (!cm) {
            sbm__host_free(ctx, pick);
            sbm__host_free(ctx, truth);
            sbm_bal_destroy(p);
            return sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "out of host memory");
        }
        for (int64_t q = 0; q < k; q++) cm[q] = number[(first + pick[q]) % nc];
        qsort(cm, (size_t)k, sizeof(int32_t), sbm__cmp_i32); /* cameras increasing, as in BAL */
        for (int64_t q = 0; q < k; q++, t++) {
            double pred[2];
            sbm__bal_project(tc + 9 * (int64_t)cm[q], tp + 3 * j, pred, NULL, NULL);
            p->obs_cam[t] = cm[q];
            p->obs_pt[t] = (int32_t)j;
            p->obs_xy[2 * t] = pred[0] + o->pixel_noise * rng_gauss(&s);
            p->obs_xy[2 * t + 1] = pred[1] + o->pixel_noise * rng_gauss(&s);
        }
        if (cm != cams) free(cm);
    }
    return sbm__bal_generated_finish(ctx, o, truth, pick, p, &s, problem);
}
