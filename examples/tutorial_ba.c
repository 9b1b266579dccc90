// SPDX-License-Identifier: BSD-3-Clause
/* Tutorial: bundle adjustment from arrays, no file (docs/TUTORIAL.md walks through it).
 *
 * Three cameras look at twenty points. The observations are the exact projections of the true
 * scene (BAL camera model, sbm_io.h), so the solve must bring the cost to ~0. The starting
 * cameras 1, 2 and the points are perturbed; camera 0 is held constant at its true pose (it
 * fixes the frame), and a prior on camera 1's pose (rotation and translation, not its
 * intrinsics) fixes the scale. Run: tutorial_ba [cpu|cuda]. Exit status 0 only when the solve
 * converged to a cost below 1e-10 with camera 0 untouched (ctest runs it). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sbm_ba.h"

#define NC 3
#define NP 20
#define NOBS (NC * NP)

/* The BAL projection of point X by camera c (angle-axis w, t, f, k1, k2). */
static void project(const double *c, const double *X, double *xy)
{
    const double th = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
    double P[3];
    if (th > 0) { /* Rodrigues: R X = X cos + (k x X) sin + k (k . X)(1 - cos) */
        const double k[3] = {c[0] / th, c[1] / th, c[2] / th}, cs = cos(th), sn = sin(th);
        const double kx[3] = {k[1] * X[2] - k[2] * X[1], k[2] * X[0] - k[0] * X[2],
                              k[0] * X[1] - k[1] * X[0]};
        const double kd = k[0] * X[0] + k[1] * X[1] + k[2] * X[2];
        for (int a = 0; a < 3; a++) P[a] = X[a] * cs + kx[a] * sn + k[a] * kd * (1 - cs);
    } else {
        memcpy(P, X, sizeof P);
    }
    for (int a = 0; a < 3; a++) P[a] += c[3 + a];
    const double px = -P[0] / P[2], py = -P[1] / P[2], r2 = px * px + py * py;
    const double d = 1 + c[7] * r2 + c[8] * r2 * r2;
    xy[0] = c[6] * d * px, xy[1] = c[6] * d * py;
}

int main(int argc, char **argv)
{
    const sbm_backend backend = argc > 1 && strcmp(argv[1], "cuda") == 0 ? SBM_BACKEND_CUDA
                                                                         : SBM_BACKEND_CPU;
    /* 1. The true scene: points in front of the cameras (a BAL camera looks along -z). */
    double cam_true[9 * NC] = {0.00, 0.00, 0.00, 0.0, 0.0, 0.0, 500, 0, 0,
                               0.02, -0.10, 0.01, 1.0, 0.1, 0.0, 500, 0, 0,
                               -0.03, 0.12, 0.00, -1.0, 0.0, 0.2, 500, 0, 0};
    double pts_true[3 * NP];
    for (int j = 0; j < NP; j++) { /* a deterministic cloud: no random numbers needed */
        pts_true[3 * j + 0] = -1.5 + 0.15 * j + 0.3 * sin(1.7 * j);
        pts_true[3 * j + 1] = -1.0 + 0.1 * (j % 7) + 0.2 * cos(2.3 * j);
        pts_true[3 * j + 2] = -5.0 + 0.5 * sin(0.9 * j);
    }
    /* 2. The arrays of the problem: every camera sees every point. */
    int32_t obs_cam[NOBS], obs_pt[NOBS];
    double obs_xy[2 * NOBS], cam0[9 * NC], pts0[3 * NP];
    for (int j = 0, k = 0; j < NP; j++)
        for (int i = 0; i < NC; i++, k++) {
            obs_cam[k] = i, obs_pt[k] = j;
            project(cam_true + 9 * i, pts_true + 3 * j, obs_xy + 2 * k);
        }
    memcpy(cam0, cam_true, sizeof cam0);
    for (int a = 9; a < 9 * NC; a++) cam0[a] += (a % 9 < 3 ? 0.01 : a % 9 < 6 ? 0.05 : 2.0) *
                                                 sin(3.1 * a);
    for (int a = 0; a < 3 * NP; a++) pts0[a] = pts_true[a] + 0.05 * cos(1.3 * a);

    sbm_ctx *ctx = NULL;
    sbm_bal_problem *problem = NULL;
    int ok = 0;
    if (sbm_ctx_create(&ctx, backend, 0) != SBM_SUCCESS) {
        fprintf(stderr, "tutorial_ba: %s\n", sbm_ctx_last_error(NULL));
        return backend == SBM_BACKEND_CUDA ? 77 : 1; /* 77: ctest's "skipped" (no GPU) */
    }
    /* 3. The problem from the arrays (copied and checked: indices, finite values). */
    const sbm_bal_problem_desc desc = {NC, NP, NOBS, obs_cam, obs_pt, obs_xy, cam0, pts0};
    /* 4. Camera 0 constant; a prior on camera 1's rotation and translation (information 1e4 on
     *    those six parameters, none on f, k1, k2). */
    double info[81] = {0};
    for (int a = 0; a < 6; a++) info[10 * a] = 1e4;
    sbm_solver_options options = sbm_solver_default_options();
    sbm_solver_summary summary;
    if (sbm_bal_problem_create(ctx, &desc, &problem) != SBM_SUCCESS ||
        sbm_bal_set_camera_constant(ctx, problem, 0, 1) != SBM_SUCCESS ||
        sbm_bal_set_camera_prior(ctx, problem, 1, cam_true + 9, info) != SBM_SUCCESS ||
        sbm_ba_solve(ctx, problem, &options, &summary) != SBM_SUCCESS) {
        fprintf(stderr, "tutorial_ba: %s\n", sbm_ctx_last_error(ctx));
        goto done;
    }
    /* 5. The report. */
    const sbm_bal_info info_out = sbm_bal_get_info(problem);
    double err = 0.0;
    for (int a = 0; a < 3 * NP; a++) err = fmax(err, fabs(info_out.point_params[a] - pts_true[a]));
    printf("backend %s: %d iterations (%d accepted), cost %.6g -> %.6g, stop: %s\n",
           sbm_backend_name(backend), summary.iterations, summary.accepted, summary.initial_cost,
           summary.final_cost, sbm_stop_reason_name(summary.stop_reason));
    printf("camera 0 unchanged: %s; max point error %.3g\n",
           memcmp(info_out.camera_params, cam_true, 9 * sizeof(double)) == 0 ? "yes" : "no", err);
    ok = sbm_stop_reason_converged(summary.stop_reason) && summary.final_cost < 1e-10 &&
         memcmp(info_out.camera_params, cam_true, 9 * sizeof(double)) == 0 && err < 1e-6;
    printf("tutorial_ba: %s\n", ok ? "converged" : "FAILED");
done:
    sbm_bal_destroy(problem);
    sbm_ctx_destroy(ctx);
    return ok ? 0 : 1;
}
