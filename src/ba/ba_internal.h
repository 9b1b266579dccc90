/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal declarations of the bundle-adjustment layer (ba.c, ba_views.c, ba_schur.c, ba_lm.c,
 * bal_model.c). */
#ifndef SBM_BA_INTERNAL_H
#define SBM_BA_INTERNAL_H

#include "ba_kernels.h"
#include "io_internal.h"
#include "sbm_ba.h"
#include "sbm_geometry.h"
#include "solve_internal.h"

/* The backends see a loss as sbm_geometry.h's numbers. */
_Static_assert(SBM__LOSS_NONE == (int)SBM_LOSS_NONE && SBM__LOSS_HUBER == (int)SBM_LOSS_HUBER &&
                   SBM__LOSS_CAUCHY == (int)SBM_LOSS_CAUCHY,
               "sbm_loss_type and SBM__LOSS_* differ");

/* ---------------------------------------------------------------------------------------- */
/* The device-resident iteration (ba.c): what sbm_ba_solve needs from the system so that an  */
/* LM iteration moves only scalars between host and device                                   */
/* ---------------------------------------------------------------------------------------- */

/* Number of parameters, 9*cameras + 3*points: the length of every parameter or step vector
 * below, laid out [cameras (9 each); points (3 each)] in the context's memory. */
int64_t sbm__ba_nparams(const sbm_ba_system *s);
/* Parameters of a problem into d_params (context memory, nparams): one upload. */
sbm_status sbm__ba_params_upload(sbm_ctx *ctx, const sbm_ba_system *s,
                                 const sbm_bal_problem *problem, double *d_params);
/* d_params back into the problem's parameters: one download. */
sbm_status sbm__ba_params_download(sbm_ctx *ctx, const sbm_ba_system *s, const double *d_params,
                                   sbm_bal_problem *problem);
/* The robust loss of the linearisations and costs that follow (SBM_LOSS_NONE at creation;
 * checked by the caller, sbm__check_solver_options). */
void sbm__ba_set_loss(sbm_ba_system *s, sbm_loss loss);
/* sbm_ba_linearize at d_params (context memory) instead of a problem's parameters, with the
 * system's loss: U, V, W, gc, gp, the damping scale, the cost and max |g| on the backend, the
 * two scalars copied to the host. Same failures as sbm_ba_linearize. */
sbm_status sbm__ba_linearize_at(sbm_ctx *ctx, sbm_ba_system *s, const double *d_params);
/* The cost 0.5 sum rho(|r_k|^2) at d_params with the system's loss, the system unchanged; a
 * non-finite prediction gives a non-finite *cost, not an error (the step is then rejected).
 * At the parameters of the last linearisation it is bitwise that linearisation's cost. */
sbm_status sbm__ba_cost_at(sbm_ctx *ctx, const sbm_ba_system *s, const double *d_params,
                           double *cost);
/* max |[gc; gp]| of the last linearisation (a host scalar kept by the linearisation). */
double sbm__ba_gradient_max(const sbm_ba_system *s);
/* The decrease the damped model predicts for a step (context memory, nparams):
 * 0.5 step^T (lambda D step + g), D the damping scale of the last linearisation. */
sbm_status sbm__ba_predicted_decrease(sbm_ctx *ctx, const sbm_ba_system *s,
                                      const double *d_step, double lambda, double *predicted);

/* ---------------------------------------------------------------------------------------- */
/* Internal entry points of the Schur operations (ba_schur.c), for calls through SBM__INNER  */
/* ---------------------------------------------------------------------------------------- */

/* Each is the public sbm_ba_<op> less its SBM__ENTER and its argument checks, which the
 * caller's operands make needless: U, V and W matrices of ctx whose shapes fit (U nc x nc
 * blocks of p x p, V np x np of q x q, W nc x np of p x q) and, with a plan, those the plan
 * was made for (U with its pattern, W with its shape); vectors non-NULL and of their sizes.
 * The checks that V's pattern and W's still fit (V's block-diagonal pattern, W's the planned
 * one) stay inside. sbm__ba_schur: S non-NULL, gc and gp given with rhs. sbm__ba_schur_plan:
 * flags valid, plan non-NULL, S non-NULL unless matrix-free. sbm__ba_schur_execute: S the
 * plan's (unless matrix-free), gc and gp given with rhs. Back-substitution, multiply and
 * diagonal: after a successful execute; multiply: x and y apart; diagonal: D block diagonal
 * with all nc p x p blocks. */
sbm_status sbm__ba_schur(sbm_ctx *ctx, const sbm_cbc *U, const sbm_cbc *V, const sbm_cbc *W,
                         const double *gc, const double *gp, sbm_cbc **S, double *rhs);
sbm_status sbm__ba_schur_plan(sbm_ctx *ctx, const sbm_cbc *U, const sbm_cbc *V, const sbm_cbc *W,
                              unsigned flags, sbm_schur_plan **plan, sbm_cbc **S);
sbm_status sbm__ba_schur_execute(sbm_ctx *ctx, sbm_schur_plan *plan, const sbm_cbc *U,
                                 const sbm_cbc *V, const sbm_cbc *W, const double *gc,
                                 const double *gp, sbm_cbc *S, double *rhs);
sbm_status sbm__ba_back_substitute(sbm_ctx *ctx, sbm_schur_plan *plan, const sbm_cbc *W,
                                   const double *gp, const double *dc, double *dp);
sbm_status sbm__ba_schur_multiply(sbm_ctx *ctx, sbm_schur_plan *plan, const sbm_cbc *U,
                                  const sbm_cbc *W, const double *x, double *y);
sbm_status sbm__ba_schur_diagonal(sbm_ctx *ctx, sbm_schur_plan *plan, const sbm_cbc *U,
                                  const sbm_cbc *W, sbm_cbc *D);

/* The plan's V^-1 and Y of the last execute, its point vector t (np*q) and the symmetric
 * product with U, for the distributed solver (src/dist), which splits S x = U x - Y (W^T x) and
 * the back-substitution around a halo sum of W^T x over the ranks. */
void sbm__ba_schur_parts(sbm_schur_plan *plan, const sbm_cbc **Vinv, const sbm_cbc **Y,
                         double **t, sbm__symup **usym);

/* ---------------------------------------------------------------------------------------- */
/* Host views of the BA system for the solver (ba_views.c)                                  */
/* ---------------------------------------------------------------------------------------- */

/* Blocks of S's upper triangle (the cameras, and every pair of cameras sharing a point), from
 * W's pattern without forming S, and W's blocks. */
sbm_status sbm__ba_schur_blocks(sbm_ctx *ctx, const sbm_ba_system *s, int64_t *blocks_S,
                                int64_t *blocks_W);
/* The first point whose damped 3x3 block of V is not SPD (host check), or -1. */
int64_t sbm__ba_npd_point(const sbm_ba_system *s);
/* Append printf-style text to the context's last message (what a nested failure means in BA
 * terms). */
void sbm__ba_append_message(sbm_ctx *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* SBM_SUCCESS when a solve's initial cost is finite, else SBM_ERR_NOT_FINITE naming the first
 * observation (camera, point, prediction) whose squared residual is not finite (bal_model.c). */
sbm_status sbm__bal_cost_check(sbm_ctx *ctx, const sbm_bal_problem *p, double cost);

/* The end of every synthetic layout (bal_model.c, bal_trajectory.c): the truth (9 nc + 3 np,
 * cameras then points) perturbed into p's parameters as o->perturbation says, drawing from
 * *rng; truth and pick (host) freed; then p in *problem, or SBM_ERR_INVALID_ARGUMENT naming the
 * option that made a value not finite (p destroyed). */
sbm_status sbm__bal_generated_finish(sbm_ctx *ctx, const sbm_bal_generate_options *o,
                                     double *truth, int32_t *pick, sbm_bal_problem *p,
                                     uint64_t *rng, sbm_bal_problem **problem);
/* sbm_bal_generate of SBM_BAL_LAYOUT_TRAJECTORY, the options checked. */
sbm_status sbm__bal_generate_trajectory(sbm_ctx *ctx, const sbm_bal_generate_options *o,
                                        sbm_bal_problem **problem);

#endif /* SBM_BA_INTERNAL_H */
