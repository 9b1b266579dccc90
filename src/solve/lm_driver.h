/* SPDX-License-Identifier: BSD-3-Clause */
/* The one nonlinear least-squares driver of the library (lm_driver.c): Levenberg-Marquardt, or
 * Gauss-Newton with a backtracking line search, over a problem given as a table of operations.
 * Bundle adjustment (src/ba/ba_lm.c) and pose graphs (src/slam/slam_run.c) are two instances;
 * the driver names neither. The rule it applies (acceptance, damping schedule, stop rules and
 * their order) is documented once, at sbm_solver_default_options in include/sbm_solve.h. */
#ifndef SBM_LM_DRIVER_H
#define SBM_LM_DRIVER_H

#include "solve_internal.h"

/* A nonlinear least-squares problem as the driver sees it. The problem keeps its estimate
 * (the current parameters) and one trial estimate, its linearisation at the current parameters
 * (gradient g, the damping scale D) and the last step dx. Every operation gets data. A failing
 * operation returns its status with the message in the context; the driver returns it. */
typedef struct sbm__lm_ops {
    void *data;
    /* Linearise at the current parameters (after an accepted step): *cost (the linearisation's
     * cost, bitwise or to round-off the trial's), *gradient_norm = max |g|; adds or sets the
     * report's time_linearize and time_schur. */
    sbm_status (*linearize)(void *data, sbm_iteration_report *rep, double *cost,
                            double *gradient_norm);
    /* The step dx of (H + lambda D) dx = -g, H the Gauss-Newton matrix (damped 0: the undamped
     * H, lambda 0). SBM_ERR_NOT_POSITIVE_DEFINITE with a message naming the offending item when
     * the matrix is not positive definite (LM takes that as a rejected step). Sets the report's
     * time_schur (when it forms a matrix), time_solve and linear fields. */
    sbm_status (*solve_step)(void *data, int damped, double lambda, sbm_iteration_report *rep);
    /* The trial parameters current + alpha dx (alpha 1, or a line search's length) and their
     * cost (inf or NaN when it cannot be evaluated). */
    sbm_status (*trial_cost)(void *data, double alpha, double *cost);
    /* The decrease 0.5 dx^T (lambda D dx - g) the damped model predicts for the last step. */
    sbm_status (*predicted_decrease)(void *data, double lambda, double *predicted);
    /* |alpha dx| and |x| of the current parameters (|x| may be 0 when
     * options->parameter_tolerance is 0: it serves that rule only). */
    sbm_status (*norms)(void *data, double alpha, double *step_norm, double *x_norm);
    /* The last trial becomes the current parameters. A rejected step needs no operation: the
     * current parameters never changed. */
    void (*accept)(void *data);
    /* Before an iteration's report goes to the callback with
     * options->update_state_every_iteration: the current parameters into the user's problem. */
    sbm_status (*publish)(void *data);
} sbm__lm_ops;

/* Run options->method (Levenberg-Marquardt or Gauss-Newton) on a problem of n unknowns,
 * linearised at its current parameters with cost and max |g| gradient_norm. The summary's
 * iterations, accepted, final_cost, times of the iterations, stop_reason, linear_failures,
 * linear_capped and final_gradient_norm are filled (one more linearisation when the last step
 * was taken without one); its initial_cost, linear_solver and time_total stay the caller's.
 * options were checked (sbm__check_solver_options); method GN needs ops->solve_step to accept
 * damped 0, LM ops->predicted_decrease. */
sbm_status sbm__lm_drive(sbm_ctx *ctx, const sbm_solver_options *options, const sbm__lm_ops *ops,
                         int64_t n, double cost, double gradient_norm,
                         sbm_solver_summary *summary);

#endif /* SBM_LM_DRIVER_H */
