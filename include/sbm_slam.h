/* sbm_slam.h: pose-graph SLAM: chi2, the information matrix J^T Omega J and Gauss-Newton (library sbm_ba). */
#ifndef SBM_SLAM_H
#define SBM_SLAM_H

#include "sbm_io.h"
#include "sbm_solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- g2o pose graphs ------------------------------------------------------------------------ */

/* chi2 = sum e^T Omega e at the current poses. */
sbm_status sbm_g2o_chi2(sbm_ctx *ctx, const sbm_g2o_graph *graph, double *chi2);

/* ---- SLAM information matrix ---------------------------------------------------------------- */

/* J (edges x free vertices, d x d blocks: the error Jacobians w.r.t. the increments of the two
 * vertices of each edge, fixed vertices left out), Omega (edges x edges, block diagonal), the
 * information matrix Lambda = J^T Omega J (free x free, upper block triangle) and b = J^T Omega e,
 * all through the library, in the context's memory. The Gauss-Newton step solves
 * Lambda dx = -b. Free vertex k is the k-th vertex not held fixed, in the graph's order. */
typedef struct sbm_slam_system sbm_slam_system;

typedef struct sbm_slam_system_info {
    const sbm_cbc *J;      /* error Jacobian */
    const sbm_cbc *Omega;  /* information matrices of the edges */
    const sbm_cbc *Lambda; /* J^T Omega J, upper block triangle */
    const double *e;       /* errors (context memory, d*edges) */
    const double *b;       /* J^T Omega e (context memory, d*free) */
    double chi2;           /* e^T Omega e at the linearisation point */
    int64_t free_vertices; /* block columns of J */
    int error_dim;         /* d */
} sbm_slam_system_info;

sbm_status sbm_slam_system_create(sbm_ctx *ctx, const sbm_g2o_graph *graph,
                                  sbm_slam_system **system);
/* Errors, Jacobians, Lambda, b and chi2 at the graph's current poses. */
sbm_status sbm_slam_linearize(sbm_ctx *ctx, sbm_slam_system *system, const sbm_g2o_graph *graph);
void sbm_slam_system_destroy(sbm_slam_system *system);
sbm_slam_system_info sbm_slam_system_get_info(const sbm_slam_system *system);
/* Copy b = J^T Omega e of the last linearisation to the host array h_b (d*free_vertices). */
sbm_status sbm_slam_system_get_b(sbm_ctx *ctx, const sbm_slam_system *system, double *h_b);

/* Gauss-Newton on a pose graph: Lambda dx = -b (dense Cholesky or PCG with block-Jacobi on
 * Lambda), with a backtracking line search that halves the step until chi2 decreases. Updates
 * the graph's poses. summary may be NULL. */
sbm_status sbm_slam_solve(sbm_ctx *ctx, sbm_g2o_graph *graph, const sbm_solver_options *options,
                          sbm_solver_summary *summary);

#ifdef __cplusplus
}
#endif

#endif /* SBM_SLAM_H */
