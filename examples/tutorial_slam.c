// SPDX-License-Identifier: BSD-3-Clause
/* Tutorial: a 2D pose graph from arrays, no file (docs/TUTORIAL.md walks through it).
 *
 * Two robots that never met: robot A drives around a square and closes the loop (vertices 0-3),
 * robot B drives a straight line (vertices 4-6) and has a GPS-like prior on its first pose. The
 * graph has two connected components; sbm holds the first vertex of A fixed (the automatic
 * gauge, as for a g2o file) and B is anchored by its prior. The measurements are exact, the
 * starting poses perturbed: the solve must reach a zero cost and give back the true poses.
 * Run: tutorial_slam [cpu|cuda]. Exit status 0 only when it converged to a cost below 1e-12
 * with every pose within 1e-6 of the truth (ctest runs it). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sbm_slam.h"

#define NV 7
#define NE 6

/* The relative pose a^-1 b of two SE2 poses (x, y, theta). */
static void between(const double *a, const double *b, double *z)
{
    const double c = cos(a[2]), s = sin(a[2]), dx = b[0] - a[0], dy = b[1] - a[1];
    z[0] = c * dx + s * dy;
    z[1] = -s * dx + c * dy;
    z[2] = atan2(sin(b[2] - a[2]), cos(b[2] - a[2]));
}

int main(int argc, char **argv)
{
    const sbm_backend backend = argc > 1 && strcmp(argv[1], "cuda") == 0 ? SBM_BACKEND_CUDA
                                                                         : SBM_BACKEND_CPU;
    const double pi2 = 1.5707963267948966;
    /* 1. The truth: A around a 2 m square, B along a line 10 m away. */
    const double truth[3 * NV] = {0, 0, 0,       2, 0, pi2,      2, 2, 2 * pi2,  0, 2, -pi2,
                                  10, 0, 0.1,   11, 0.1, 0.1, 12, 0.2, 0.1};
    /* 2. Edges: A's odometry and loop closure, B's odometry; measurements from the truth. */
    const int32_t from[NE] = {0, 1, 2, 3, 4, 5}, to[NE] = {1, 2, 3, 0, 5, 6};
    double meas[3 * NE], info[9 * NE], poses[3 * NV];
    for (int k = 0; k < NE; k++) {
        between(truth + 3 * from[k], truth + 3 * to[k], meas + 3 * k);
        for (int e = 0; e < 9; e++) info[9 * k + e] = e % 4 == 0 ? (e == 8 ? 400.0 : 100.0) : 0.0;
    }
    /* 3. A prior on vertex 4: its pose as measured (information 1e4 on x, y; 1e2 on theta). */
    const int32_t prior_vertex[1] = {4};
    const double prior_info[9] = {1e4, 0, 0, 0, 1e4, 0, 0, 0, 1e2};
    /* 4. Starting poses: the truth perturbed, except vertex 0 (A's gauge keeps it). */
    for (int a = 0; a < 3 * NV; a++) poses[a] = truth[a] + (a < 3 ? 0.0 : 0.1 * sin(2.7 * a));

    sbm_g2o_graph_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.dim = 2;                 /* SE2: poses are x y theta */
    desc.gauge = SBM_GAUGE_AUTO;  /* a component without fixed vertex or prior: fix its first */
    desc.vertices = NV, desc.poses = poses;
    desc.edges = NE, desc.edge_from = from, desc.edge_to = to;
    desc.edge_measurement = meas, desc.edge_information = info;
    desc.priors = 1, desc.prior_vertex = prior_vertex;
    desc.prior_measurement = truth + 12, desc.prior_information = prior_info;

    sbm_ctx *ctx = NULL;
    sbm_g2o_graph *graph = NULL;
    int ok = 0;
    if (sbm_ctx_create(&ctx, backend, 0) != SBM_SUCCESS) {
        fprintf(stderr, "tutorial_slam: %s\n", sbm_ctx_last_error(NULL));
        return backend == SBM_BACKEND_CUDA ? 77 : 1; /* 77: ctest's "skipped" (no GPU) */
    }
    sbm_solver_options options = sbm_solver_default_options();
    sbm_solver_summary summary;
    if (sbm_g2o_graph_create(ctx, &desc, &graph) != SBM_SUCCESS ||
        sbm_slam_solve(ctx, graph, &options, &summary) != SBM_SUCCESS) {
        fprintf(stderr, "tutorial_slam: %s\n", sbm_ctx_last_error(ctx));
        goto done;
    }
    const sbm_g2o_info gi = sbm_g2o_get_info(graph);
    printf("backend %s: %lld vertices (%lld fixed by the gauge), %lld edges, %lld prior\n",
           sbm_backend_name(backend), (long long)gi.vertices, (long long)gi.fixed,
           (long long)gi.edges, (long long)gi.priors);
    printf("%d iterations, cost %.6g -> %.6g, stop: %s\n", summary.iterations,
           summary.initial_cost, summary.final_cost, sbm_stop_reason_name(summary.stop_reason));
    double err = 0.0;
    for (int v = 0; v < NV; v++) {
        const double *x = gi.poses + 3 * v;
        printf("  vertex %d: %8.4f %8.4f %8.4f%s\n", v, x[0], x[1], x[2],
               gi.is_fixed[v] ? "  (fixed)" : "");
        for (int a = 0; a < 3; a++) err = fmax(err, fabs(x[a] - truth[3 * v + a]));
    }
    ok = sbm_stop_reason_converged(summary.stop_reason) && summary.final_cost < 1e-12 &&
         err < 1e-6 && gi.fixed == 1;
    printf("max pose error %.3g\ntutorial_slam: %s\n", err, ok ? "converged" : "FAILED");
done:
    sbm_g2o_destroy(graph);
    sbm_ctx_destroy(ctx);
    return ok ? 0 : 1;
}
