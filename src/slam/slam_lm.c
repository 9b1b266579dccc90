/* SPDX-License-Identifier: BSD-3-Clause */
/* Levenberg-Marquardt on pose graphs, with gain-ratio damping as Ceres and g2o do it.
 *
 * Each iteration solves (Lambda + lambda D) dx = -b, D Lambda's diagonal clamped to
 * [1e-6, 1e32] (Marquardt's scaling, SBM_DAMPING_DIAGONAL), applies the step with g2o's
 * increments to a trial copy of the poses (in the context's memory) and evaluates the cost
 * 0.5 sum rho(e^T Omega e) there (0.5 chi2 without a loss). With rho = actual / predicted
 * decrease, the prediction of the damped model being 0.5 dx^T (lambda D dx - b):
 *   - a step that lowers the cost (rho > 0) is taken (the trial becomes the poses), the system
 *     relinearised, and lambda shrinks by Nielsen's rule max(1/3, 1 - (2 rho - 1)^3), nu = 2;
 *   - otherwise the trial is dropped (the poses stay bitwise), lambda *= nu and nu *= 2
 *     (Madsen, Nielsen & Tingleff, "Methods for non-linear least squares problems", 2004,
 *     section 3.2).
 * A factorisation that finds Lambda + lambda D not positive definite is a rejected step too
 * (lambda rises; summary.linear_failures counts it, the context's last error names the vertex).
 * Lambda above 1e32 stops the solve (SBM_STOP_NO_PROGRESS). Only an accepted step
 * relinearises; the sparse Cholesky is planned once and factored with every new lambda. */
#include "slam_internal.h"

#include <math.h>
#include <string.h>

sbm_status sbm__slam_levenberg_marquardt(sbm__slam_run *r)
{
    sbm_ctx *ctx = r->ctx;
    const sbm_solver_options *opt = r->opt;
    double lambda = opt->initial_lambda, nu = 2.0;
    sbm_stop_reason stop = sbm__slam_stop_before(r);
    for (int it = 1; stop == SBM_STOP_NONE && r->n > 0 && it <= opt->max_iterations; it++) {
        const double t_it = sbm__now(ctx, 1);
        sbm_iteration_report rep = sbm__slam_iteration_start(r, it);
        rep.lambda = lambda;

        sbm_status st = sbm__slam_run_solve(r, SBM_DAMPING_DIAGONAL, lambda, &rep);
        if (st == SBM_ERR_NOT_POSITIVE_DEFINITE) {
            rep.linear_failed = 1;
            r->summary->linear_failures++;
        } else if (st != SBM_SUCCESS) {
            return st;
        }
        r->summary->linear_capped += rep.linear_capped;

        /* the trial poses, their cost and the decrease the damped model predicts */
        const double ts = sbm__now(ctx, 1);
        double new_cost = INFINITY, predicted = 0.0;
        int small = 0;
        if (!rep.linear_failed) {
            SBM__TRY(sbm__slam_run_try(r, 1.0, &new_cost));
            SBM__TRY(sbm__slam_run_predicted(r, lambda, &predicted));
            small = sbm__slam_run_small_step(r, 1.0, &rep.step_norm);
        }
        rep.time_update = sbm__now(ctx, 1) - ts;

        if (!rep.linear_failed && isfinite(new_cost) && new_cost < r->cost) {
            const double rho = predicted > 0.0 ? (r->cost - new_cost) / predicted : 1.0;
            const double tr = 2.0 * rho - 1.0;
            lambda *= fmax(1.0 / 3.0, 1.0 - tr * tr * tr);
            nu = 2.0;
            if ((st = sbm__slam_accept(r, it, new_cost, small, &rep, &stop)) != SBM_SUCCESS)
                return st;
        } else {
            /* the current poses never changed: dropping the trial is the rollback */
            lambda *= nu;
            nu *= 2.0;
            if (lambda > SBM__LM_LAMBDA_MAX)
                stop = SBM_STOP_NO_PROGRESS;
            else if (small)
                stop = SBM_STOP_PARAMETER_TOLERANCE;
        }
        SBM__TRY(sbm__slam_run_end_iteration(r, it, t_it, &rep));
    }
    return sbm__slam_finish(r, stop);
}
