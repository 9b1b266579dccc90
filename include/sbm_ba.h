/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm_ba.h: bundle adjustment: synthetic BAL problems, normal equations, the Schur complement and Levenberg-Marquardt (library sbm_ba). */
#ifndef SBM_BA_H
#define SBM_BA_H

#include "sbm_io.h"
#include "sbm_solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================== */
/* Bundle adjustment and SLAM                                                               */
/* ======================================================================================== */

/* Problems (BAL files, g2o pose graphs) live in host memory; the linear systems built from them
 * (U, V, W, S; J, Omega, Lambda) and their vectors live in the context's memory, so the block
 * operations above run on the context's backend. A BA system keeps its observations in the
 * context's memory too, and linearises there (the CUDA kernels, or the CPU backend's threads):
 * only the parameters go up and the cost and max |g| come back. */

/* Where a synthetic problem's cameras and points are. */
typedef enum sbm_bal_layout {
    SBM_BAL_LAYOUT_SPHERE = 0,    /* cameras on a sphere around a ball of points, each point seen
                                   * by cameras drawn from all of them (S nearly dense) */
    SBM_BAL_LAYOUT_TRAJECTORY = 1 /* cameras along a closed trajectory (a loop of radius
                                   * cameras / (4 pi)) looking outwards at points 2 to 6 units
                                   * beyond it; each point seen by cameras drawn from the
                                   * 2 obs_per_point + 1 nearest along the loop (S sparse, as in
                                   * real sequences); camera numbers a seeded permutation of the
                                   * order along the loop, as an unordered reconstruction numbers
                                   * them */
} sbm_bal_layout;

/* A seeded synthetic problem: cameras and points placed as layout says; every point seen by
 * obs_per_point distinct cameras; observations are exact projections plus Gaussian pixel noise;
 * the stored parameters are the true ones perturbed. */
typedef struct sbm_bal_generate_options {
    int64_t cameras;       /* >= 2 */
    int64_t points;        /* >= 1 */
    int obs_per_point;     /* distinct cameras per point, 2 <= obs_per_point <= cameras */
    double pixel_noise;    /* standard deviation of the observation noise, pixels (>= 0) */
    double perturbation;   /* scale of the parameter perturbation (>= 0; 1 is a typical start) */
    uint64_t seed;         /* the same seed gives the same problem on every platform */
    sbm_bal_layout layout; /* SBM_BAL_LAYOUT_SPHERE (the defaults) or _TRAJECTORY */
} sbm_bal_generate_options;
/* Options for a dubrovnik-like problem of the given size (noise 0.5 px, perturbation 1,
 * SBM_BAL_LAYOUT_SPHERE). */
sbm_bal_generate_options sbm_bal_generate_defaults(int64_t cameras, int64_t points,
                                                   int obs_per_point, uint64_t seed);
/* A seeded synthetic BAL problem (*problem, host memory) as options describe: points in the unit
 * ball, camera centres at distance 4 in random directions looking at them, each point seen by
 * obs_per_point cameras, observations with Gaussian pixel noise and the parameters perturbed
 * from the truth (SBM_BAL_LAYOUT_SPHERE; SBM_BAL_LAYOUT_TRAJECTORY as that value says). @return
 * SBM_ERR_INVALID_ARGUMENT naming the option that is out of range. */
sbm_status sbm_bal_generate(sbm_ctx *ctx, const sbm_bal_generate_options *options,
                            sbm_bal_problem **problem);
/* Residuals at the current parameters into h_residuals (host, 2*observations; may be NULL) and
 * the cost 0.5*|r|^2 into *cost (may be NULL). A point on a camera's image plane (P.z == 0)
 * gives non-finite residuals, not an error. The observations only: camera priors
 * (sbm_bal_set_camera_prior) are not in this cost, while the solvers' cost includes them. */
sbm_status sbm_bal_evaluate(sbm_ctx *ctx, const sbm_bal_problem *problem, double *h_residuals,
                            double *cost);


/* ---- BA normal equations and the Schur complement ------------------------------------------ */

/* The Gauss-Newton normal equations of a BAL problem at its current parameters,
 *     [U   W] [dc]   [gc]    U = Jc^T Jc (cameras x cameras, 9x9 blocks, block diagonal)
 *     [W^T V] [dp] = [gp]    V = Jp^T Jp (points x points, 3x3 blocks, block diagonal)
 *                            W = Jc^T Jp (cameras x points, 9x3 blocks)
 *                            gc = -Jc^T r, gp = -Jp^T r   (so [dc; dp] is the step)
 * with Levenberg-Marquardt damping: every diagonal entry d of U and V is replaced by
 * d + lambda*min(max(d, 1e-6), 1e32). Matrices and vectors are in the context's memory.
 * With a robust loss (sbm_ba_system_set_loss) r and J are those of Ceres' Corrector: per
 * observation, with s = |r|^2, r' = sqrt(rho'(s)) r / (1 - alpha) and
 * J' = sqrt(rho'(s)) (J - (alpha / s) r r^T J), alpha = 1 - sqrt(1 + 2 s rho''(s) / rho'(s))
 * where rho'' > 0, else 0 (so for Huber and Cauchy J' = sqrt(rho') J, r' = sqrt(rho') r);
 * the cost is 0.5 sum rho(s). Sums run in a fixed order: the same bits on every run. */
typedef struct sbm_ba_system sbm_ba_system;

typedef struct sbm_ba_system_info {
    const sbm_cbc *U;  /* damped camera block */
    const sbm_cbc *V;  /* damped point block */
    const sbm_cbc *W;  /* camera-point coupling */
    const double *gc;  /* -Jc^T r (context memory, 9*cameras) */
    const double *gp;  /* -Jp^T r (context memory, 3*points) */
    double cost;       /* 0.5 sum rho(|r_k|^2) at the linearisation point (the system's
                          loss; 0.5*|r|^2 without one) */
    double lambda;     /* the damping in U and V */
    int64_t cameras;   /* block rows of W */
    int64_t points;    /* block columns of W */
} sbm_ba_system_info;

/* Build the patterns of U, V, W for a problem (several observations of a point by one camera
 * are summed into one block). Values are zero until sbm_ba_linearize. */
sbm_status sbm_ba_system_create(sbm_ctx *ctx, const sbm_bal_problem *problem,
                                sbm_ba_system **system);
/* Residuals and analytic Jacobians at the problem's current parameters; U, V, W, gc, gp and the
 * cost, with damping lambda = 0. problem must be the one the system was created from (or have
 * the same observations). @return SBM_ERR_NOT_FINITE for a non-finite prediction (the system is
 * then unchanged) or Jacobian (the system then needs a new linearisation). */
sbm_status sbm_ba_linearize(sbm_ctx *ctx, sbm_ba_system *system, const sbm_bal_problem *problem);
/* Set the damping of U and V (from the undamped values of the last linearisation, kept in the
 * context's memory: nothing is copied from the host). */
sbm_status sbm_ba_set_damping(sbm_ctx *ctx, sbm_ba_system *system, double lambda);
/* The robust loss of the linearisations that follow (none at creation; sbm_loss in
 * sbm_solve.h). @return SBM_ERR_INVALID_ARGUMENT for a type that is not an sbm_loss_type, or a
 * scale that is not finite and > 0 (the scale of SBM_LOSS_NONE is not used). */
sbm_status sbm_ba_system_set_loss(sbm_ctx *ctx, sbm_ba_system *system, const sbm_loss *loss);
/* Destroy a BA system and its matrices. NULL is accepted and does nothing. */
void sbm_ba_system_destroy(sbm_ba_system *system);
/* @return the view of the system's matrices and vectors (a zeroed struct for NULL). */
sbm_ba_system_info sbm_ba_system_get_info(const sbm_ba_system *system);
/* The reduced camera system of the system as it stands (damping included): *S = the upper block
 * triangle of U - W V^-1 W^T (a new matrix in the context), and the reduced rhs
 * gc - W V^-1 gp copied to the host array h_rhs (9*cameras; may be NULL). One call of
 * sbm_ba_schur; for repeated use make a plan (below). */
sbm_status sbm_ba_system_reduce(sbm_ctx *ctx, const sbm_ba_system *system, sbm_cbc **S,
                                double *h_rhs);

/* Reduced camera system S dc = rhs with
 *     S = U - W V^-1 W^T (upper block triangle),   rhs = gc - W V^-1 gp,
 * through sbm_bdiag_inverse (V^-1), sbm_bdiag_scale (Y = W V^-1), the block SpGEMM with
 * accumulate (S = U - Y W^T, SBM_GEMM_UPPER) and the block SpMV. U is symmetric and given by its
 * upper block triangle (in BA it is block diagonal); V is block diagonal with SPD blocks.
 * The plan keeps V^-1 and Y of the last execute for the back-substitution and S*x. */
typedef struct sbm_schur_plan sbm_schur_plan;

#define SBM_SCHUR_MATRIX_FREE 1u /* do not form S (execute computes V^-1, Y and rhs only) */

/* Symbolic phase for the patterns of U (nc x nc blocks of p x p), V (np x np of q x q) and W
 * (nc x np of p x q). Creates S with its pattern (values zero), or sets *S = NULL with
 * SBM_SCHUR_MATRIX_FREE (S may then be NULL). */
sbm_status sbm_ba_schur_plan(sbm_ctx *ctx, const sbm_cbc *U, const sbm_cbc *V, const sbm_cbc *W,
                             unsigned flags, sbm_schur_plan **plan, sbm_cbc **S);
/* Numeric phase: S (unless matrix-free) and rhs (context memory, nc*p; may be NULL) from the
 * current values of U, V, W, gc (nc*p) and gp (np*q; both may be NULL when rhs is NULL).
 * @return SBM_ERR_NOT_POSITIVE_DEFINITE if a block of V is not SPD. */
sbm_status sbm_ba_schur_execute(sbm_ctx *ctx, sbm_schur_plan *plan, const sbm_cbc *U,
                                const sbm_cbc *V, const sbm_cbc *W, const double *gc,
                                const double *gp, sbm_cbc *S, double *rhs);
/* Plan + execute + destroy the plan. */
sbm_status sbm_ba_schur(sbm_ctx *ctx, const sbm_cbc *U, const sbm_cbc *V, const sbm_cbc *W,
                        const double *gc, const double *gp, sbm_cbc **S, double *rhs);
/* Back-substitution dp = V^-1 (gp - W^T dc) with the V^-1 of the last execute (context
 * memory: dc nc*p, gp and dp np*q). */
sbm_status sbm_ba_back_substitute(sbm_ctx *ctx, sbm_schur_plan *plan, const sbm_cbc *W,
                                  const double *gp, const double *dc, double *dp);
/* Matrix-free y = S x = U x - Y (W^T x) with the Y of the last execute; U as given to execute
 * (symmetric, upper block triangle). x and y in context memory (nc*p), y separate from x. */
sbm_status sbm_ba_schur_multiply(sbm_ctx *ctx, sbm_schur_plan *plan, const sbm_cbc *U,
                                 const sbm_cbc *W, const double *x, double *y);
/* The block diagonal of S = U - Y W^T with the Y of the last execute (Ceres' SCHUR_JACOBI
 * preconditioner for matrix-free PCG, S never formed): D_i = U_ii - sum over the blocks k of W's
 * block row i of Y_k W_k^T, on the context's backend, summed in a fixed order (bitwise
 * repeatable). D: nc x nc blocks of p x p, block diagonal with every diagonal block stored (its
 * values are overwritten). */
sbm_status sbm_ba_schur_diagonal(sbm_ctx *ctx, sbm_schur_plan *plan, const sbm_cbc *U,
                                 const sbm_cbc *W, sbm_cbc *D);
/* Destroy a Schur-complement plan. NULL is accepted and does nothing. */
void sbm_schur_plan_destroy(sbm_schur_plan *plan);

/* Levenberg-Marquardt on a BAL problem: the reduced camera system each iteration (Schur on the
 * context's backend), damping lambda as in sbm_ba_set_damping, raised on a rejected step and
 * lowered on a good one down to options->min_lambda (Nielsen's rule; a step is good when it
 * lowers the cost and the damped model predicts a decrease: the library's one rule,
 * sbm_solver_default_options; options->method is ignored). The whole iteration runs on the
 * context's backend:
 * the parameters are uploaded once, the estimate and the step stay in the context's memory, and
 * an iteration brings back only scalars (costs, norms, PCG's dot products, a failed-column
 * word). The problem's parameters are updated once at the end to the best estimate (also when
 * the solve fails after its start, the status and message then those of the failure), or
 * before every callback with options->update_state_every_iteration.
 * The reduced system S dc = rhs: SBM_LINEAR_DENSE_CHOLESKY (dense Cholesky where S lives:
 * LAPACK on the CPU, cuSOLVER on CUDA), SBM_LINEAR_SPARSE_CHOLESKY (sbm_chol_plan once for S's
 * fixed pattern, sbm_chol_factor of the damped S every iteration), SBM_LINEAR_PCG (block
 * Jacobi on the explicit S) or SBM_LINEAR_PCG_MATRIX_FREE (S never formed; the Schur-Jacobi
 * preconditioner: the inverses of sbm_ba_schur_diagonal's blocks); AUTO takes dense Cholesky up
 * to dense_max_dim unknowns of S
 * (9 per camera); above, matrix-free PCG when S would hold more values than W and V^-1 W (cameras
 * sharing points with most others), else the sparse Cholesky unless its symbolic analysis
 * finds a factorisation dearer than ~100 PCG iterations, then PCG on the explicit S (on a
 * device backend matrix-free PCG: forming S and its symmetric product cost more there)
 * (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). A factorisation that fails
 * (a block of V, or S, or with PCG one of
 * S's diagonal blocks, not positive definite) is a rejected step: lambda rises,
 * summary->linear_failures counts it, the report says linear_failed, and the context keeps the
 * message, which names the point (V) or the camera (S's block column) as numbered in the BAL
 * file. Stop reasons
 * (summary->stop_reason): zero cost; max |g| <= gradient_tolerance at a linearisation;
 * |dx| <= parameter_tolerance (|x| + parameter_tolerance) for any computed step, taken or not;
 * an accepted step lowering the cost by at most function_tolerance * cost; lambda above 1e32
 * (no progress); max_iterations. The cost is 0.5 sum rho(|r_k|^2) over the observations with
 * options->loss (Ceres' robust losses and their correction of r and J, as sbm_ba_system_set_loss;
 * 0.5 |r|^2 without a loss). summary may be NULL. An initial cost that is not finite (a squared
 * residual overflowing) is SBM_ERR_NOT_FINITE naming the first such observation, its camera and
 * point; the problem is unchanged. */
sbm_status sbm_ba_solve(sbm_ctx *ctx, sbm_bal_problem *problem, const sbm_solver_options *options,
                        sbm_solver_summary *summary);

#ifdef __cplusplus
}
#endif

#endif /* SBM_BA_H */
