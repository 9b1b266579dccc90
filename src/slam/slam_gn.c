/* SPDX-License-Identifier: BSD-3-Clause */
/* Gauss-Newton on pose graphs: solve Lambda dx = -b (the run's linear solver, slam_run.c), then
 * apply the step with g2o's increments. A backtracking line search halves the step until the
 * cost decreases (at most 10 halvings): the Gauss-Newton direction of a positive definite Lambda
 * is a descent direction (so is every PCG iterate), which makes each accepted iteration lower
 * the cost; when no step length does, the poses stay as they were (bitwise) and the solve stops
 * (SBM_STOP_NO_PROGRESS). Lambda not positive definite is an error: Gauss-Newton has no damping
 * to fall back on. */
#include "slam_internal.h"

#include <math.h>
#include <string.h>

#define MAX_HALVINGS 10

sbm_status sbm__slam_gauss_newton(sbm__slam_run *r)
{
    sbm_ctx *ctx = r->ctx;
    const sbm_solver_options *opt = r->opt;
    sbm_stop_reason stop = sbm__slam_stop_before(r);
    for (int it = 1; stop == SBM_STOP_NONE && r->n > 0 && it <= opt->max_iterations; it++) {
        const double t_it = sbm__now(ctx, 1);
        sbm_iteration_report rep = sbm__slam_iteration_start(r, it);

        sbm_status st = sbm__slam_run_solve(r, SBM_DAMPING_NONE, 0.0, &rep);
        if (st != SBM_SUCCESS) {
            if (st == SBM_ERR_NOT_POSITIVE_DEFINITE) r->summary->linear_failures++;
            return st;
        }
        r->summary->linear_capped += rep.linear_capped;

        /* backtracking line search on trial poses; the current ones stay until one is taken */
        const double ts = sbm__now(ctx, 1);
        double alpha = 1.0, new_cost = INFINITY;
        for (int k = 0; k <= MAX_HALVINGS; k++, alpha *= 0.5) {
            SBM__TRY(sbm__slam_run_try(r, alpha, &new_cost));
            if (isfinite(new_cost) && new_cost < r->cost) break;
        }
        rep.time_update = sbm__now(ctx, 1) - ts;
        if (isfinite(new_cost) && new_cost < r->cost) {
            rep.lambda = alpha;
            const int small = sbm__slam_run_small_step(r, alpha, &rep.step_norm);
            if ((st = sbm__slam_accept(r, it, new_cost, small, &rep, &stop)) != SBM_SUCCESS)
                return st;
        } else {
            rep.lambda = 0.5 * alpha;
            rep.step_norm = 0.0;
            stop = SBM_STOP_NO_PROGRESS;
        }
        SBM__TRY(sbm__slam_run_end_iteration(r, it, t_it, &rep));
    }
    return sbm__slam_finish(r, stop);
}
