/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm_slam.h: pose-graph SLAM: chi2, the information matrix J^T Omega J, Levenberg-Marquardt and
 * Gauss-Newton (library sbm_ba). */
#ifndef SBM_SLAM_H
#define SBM_SLAM_H

#include "sbm_io.h"
#include "sbm_solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- g2o pose graphs ------------------------------------------------------------------------ */

/* chi2 = sum e^T Omega e at the current poses: g2o's number. The solvers' cost is half of it
 * (0.5 chi2, the convention BA shares: sbm_solve.h). */
sbm_status sbm_g2o_chi2(sbm_ctx *ctx, const sbm_g2o_graph *graph, double *chi2);

/* ---- SLAM information matrix ---------------------------------------------------------------- */

/* J (edges x free vertices, d x d blocks: the error Jacobians w.r.t. the increments of the two
 * vertices of each edge, fixed vertices left out), Omega (edges x edges, block diagonal), the
 * information matrix Lambda = J^T Omega J (free x free, upper block triangle) and b = J^T Omega e,
 * all through the library, in the context's memory: the backend computes the errors and
 * Jacobians (one thread per edge on CUDA; threaded on the CPU) from the poses, uploaded by
 * sbm_slam_linearize, and the edges, uploaded once by sbm_slam_system_create. The Gauss-Newton
 * step solves Lambda dx = -b. Free vertex k is the k-th vertex not held fixed, in the graph's
 * order. */
typedef struct sbm_slam_system sbm_slam_system;

typedef struct sbm_slam_system_info {
    const sbm_cbc *J;      /* error Jacobian */
    const sbm_cbc *Omega;  /* information matrices of the edges */
    const sbm_cbc *Lambda; /* J^T Omega J, upper block triangle */
    const double *e;       /* errors (context memory, d*edges) */
    const double *b;       /* J^T Omega e (context memory, d*free) */
    double chi2;           /* sum e^T Omega e at the linearisation point, summed where the
                            * system lives (sbm_g2o_chi2's value up to rounding) */
    int64_t free_vertices; /* block columns of J */
    int error_dim;         /* d */
} sbm_slam_system_info;

/* The normal equations of a pose graph in the context's memory: the patterns of J, Omega and
 * Lambda = J^T Omega J, planned once (sbm_slam_linearize fills the values). The vertices the graph
 * holds fixed (sbm_g2o_info.is_fixed) are not unknowns. *system is NULL on failure. */
sbm_status sbm_slam_system_create(sbm_ctx *ctx, const sbm_g2o_graph *graph,
                                  sbm_slam_system **system);
/* Errors, Jacobians, Lambda, b and chi2 at the graph's current poses. */
sbm_status sbm_slam_linearize(sbm_ctx *ctx, sbm_slam_system *system, const sbm_g2o_graph *graph);
/* Destroy a SLAM system. NULL is accepted and does nothing. */
void sbm_slam_system_destroy(sbm_slam_system *system);
/* @return the view of the system (a zeroed struct for NULL). */
sbm_slam_system_info sbm_slam_system_get_info(const sbm_slam_system *system);
/* Copy b = J^T Omega e of the last linearisation to the host array h_b (d*free_vertices). */
sbm_status sbm_slam_system_get_b(sbm_ctx *ctx, const sbm_slam_system *system, double *h_b);

/* Optimise a pose graph's poses (updated in place; summary may be NULL), minimising the cost
 * 0.5 chi2 from the graph's current poses (g2o_read's spanning-tree start for edge-only files);
 * with options->loss (Huber or Cauchy, scale a) the cost is 0.5 sum rho(e^T Omega e), Ceres'
 * definitions, and the system is Ceres' corrected one: Lambda = sum J^T Omega_eff J with
 * Omega_eff = rho' Omega for these losses, b = sum rho' J^T Omega e.
 * The iterations run in the context's memory (poses, errors, Jacobians, Lambda, b, the step and
 * its trial poses): an iteration copies only scalars between the host and the device, whatever
 * the linear solver. The graph's poses are written back when the solve returns (also after an
 * error: the poses of the last accepted step), and, with
 * options->update_state_every_iteration = 1, before every call of options->callback (one copy
 * of the poses per iteration; with 0, the default, the graph holds the starting poses until
 * the solve returns, as in Ceres).
 * options->method:
 *   - SBM_METHOD_LEVENBERG_MARQUARDT (the default): solve (Lambda + lambda D) dx = -b, D
 *     Lambda's diagonal clamped to [1e-6, 1e32] (Marquardt's scaling, SBM_DAMPING_DIAGONAL),
 *     lambda from options->initial_lambda; a step that lowers the cost, with a positive
 *     predicted decrease, is taken and lambda shrinks by max(1/3, 1 - (2 rho - 1)^3) (rho =
 *     actual / predicted decrease) down to options->min_lambda at most, otherwise the poses
 *     stay bitwise and lambda grows by nu = 2, 4, 8, ... (the library's one rule,
 *     sbm_solver_default_options); a factorisation that
 *     finds Lambda + lambda D not positive definite is a rejected step too
 *     (summary.linear_failures; the context's last error names the vertex id of the file and
 *     the free vertex, while the solve goes on and returns SBM_SUCCESS);
 *   - SBM_METHOD_GAUSS_NEWTON: Lambda dx = -b and a backtracking line search halving the step
 *     until the cost falls (at most 10 halvings; none: the poses restored, SBM_STOP_NO_PROGRESS);
 *     Lambda not positive definite is the error SBM_ERR_NOT_POSITIVE_DEFINITE naming the vertex.
 * options->linear_solver: SBM_LINEAR_SPARSE_CHOLESKY (AUTO: planned once for Lambda's pattern,
 * factored every iteration), SBM_LINEAR_DENSE_CHOLESKY (LAPACKE or cuSOLVER where Lambda lives, up to 30000 unknowns) or
 * SBM_LINEAR_PCG (block Jacobi; solves that stop at pcg_max_iterations are counted in
 * summary.linear_capped and flagged in the reports). Only an accepted step relinearises.
 * summary.stop_reason says why the solve stopped (sbm_solver_default_options lists the rules);
 * summary.final_gradient_norm is max |b| at the returned poses. An initial cost that is not
 * finite (poses or measurements so large that e^T Omega e overflows) is SBM_ERR_NOT_FINITE naming
 * the first such edge and its vertices' poses; the graph is unchanged. */
sbm_status sbm_slam_solve(sbm_ctx *ctx, sbm_g2o_graph *graph, const sbm_solver_options *options,
                          sbm_solver_summary *summary);

/* ---- Marginal covariances ------------------------------------------------------------------ */

/* The covariance of every free pose at the graph's current poses (typically after
 * sbm_slam_solve): the d x d diagonal blocks of Lambda^-1, Lambda = J^T Omega J (with loss not
 * NULL and not SBM_LOSS_NONE, the loss-corrected Lambda of sbm_slam_solve), in the tangent space
 * of the pose increments (SE2: x, y, theta; SE3: translation then rotation, the order of the
 * information matrices of the file). h_cov (host) receives free_vertices blocks of d x d
 * (column-major), free vertex k being the k-th vertex not held fixed in the graph's order: the
 * block diagonal of the inverse of sbm_slam_system_get_info(...).Lambda, the matrix slam-info
 * writes. Fixed vertices (the gauge) have no block: their covariance is zero. The blocks come
 * from the sparse block Cholesky's selected inverse (sbm_chol_inverse_diagonal: exact
 * within rounding, about the cost of one factorisation on top of it; computed on the host, a
 * CUDA context forms Lambda and factors on the device). h_cov may be NULL when every vertex is
 * fixed.
 * @return SBM_ERR_NOT_POSITIVE_DEFINITE naming the vertex id of the file (and the free vertex)
 * where Lambda is singular or indefinite: a pose the graph does not determine (edges whose
 * information matrices leave a direction of it unconstrained; the gauge of each connected
 * component is a fixed vertex, sbm_g2o_read). Rank deficiency is detected where a pivot
 * of the factorisation is not positive; a direction that rounding leaves barely positive
 * definite gives huge but finite covariances. SBM_ERR_INVALID_ARGUMENT for a loss out of its
 * range (as sbm_slam_solve). */
sbm_status sbm_slam_covariance(sbm_ctx *ctx, const sbm_g2o_graph *graph, const sbm_loss *loss,
                               double *h_cov);

#ifdef __cplusplus
}
#endif

#endif /* SBM_SLAM_H */
