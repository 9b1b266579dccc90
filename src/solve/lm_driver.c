/* SPDX-License-Identifier: BSD-3-Clause */
/* The nonlinear least-squares driver: one Levenberg-Marquardt loop (and Gauss-Newton with a
 * backtracking line search as the other strategy) over the operations of lm_driver.h, shaped
 * like Ceres' trust_region_minimizer.cc with levenberg_marquardt_strategy.cc.
 *
 * Levenberg-Marquardt, per iteration: the step of (H + lambda D) dx = -g, the trial cost at
 * x + dx and the predicted decrease 0.5 dx^T (lambda D dx - g). The step is taken when the
 * factorisation succeeded, the trial cost is finite and below the cost, and the predicted
 * decrease is positive (a step the model says cannot lower the cost is not taken, whatever
 * round-off says). Taken: lambda *= max(1/3, 1 - (2 rho - 1)^3) (rho = actual / predicted
 * decrease), but not below options->min_lambda (a lambda already below it stays), nu = 2, and
 * the problem is linearised again. Rejected (a failed factorisation too): lambda *= nu,
 * nu *= 2 (Madsen, Nielsen & Tingleff, "Methods for non-linear least squares problems", 2004,
 * section 3.2; Nielsen's update).
 *
 * Gauss-Newton: the step of H dx = -g (a matrix that is not positive definite is an error),
 * halved until the cost decreases (at most GN_MAX_HALVINGS times); when no length does, the
 * parameters stay and the solve stops (SBM_STOP_NO_PROGRESS). The report's lambda is the step
 * length (after a failed search: the shortest one tried, 2^-10).
 *
 * Stop rules, in this order (sbm_stop_reason):
 *   before an iteration: no unknowns (SBM_STOP_NONE, nothing run), zero cost, then
 *     max |g| <= gradient_tolerance at the current linearisation;
 *   after an accepted step: zero cost, |dx| <= tol (|x| + tol) (parameter tolerance), cost
 *     decrease <= function_tolerance * cost;
 *   after a rejected step: the parameter tolerance (any computed step), then lambda above
 *     SBM__LM_LAMBDA_MAX (LM) or the failed line search (GN): SBM_STOP_NO_PROGRESS;
 *   the iteration limit. */
#include "lm_driver.h"

#include <math.h>
#include <string.h>

#define GN_MAX_HALVINGS 10

/* The driver's state between iterations. */
typedef struct lm_run {
    sbm_ctx *ctx;
    const sbm_solver_options *opt;
    const sbm__lm_ops *ops;
    sbm_solver_summary *sum;
    double cost;     /* at the current parameters */
    double gnorm;    /* max |g| at the last linearisation */
    double lambda;   /* LM damping */
    double nu;       /* LM: the next rejection's factor */
    int moved;       /* the parameters moved after the last linearisation */
} lm_run;

/* The stop rule an accepted step from r->cost to new_cost meets (small: the parameter rule). */
static sbm_stop_reason stop_after_accept(const lm_run *r, double new_cost, int small)
{
    if (new_cost == 0.0) return SBM_STOP_ZERO_COST;
    if (small) return SBM_STOP_PARAMETER_TOLERANCE;
    if (r->cost - new_cost <= r->opt->function_tolerance * r->cost)
        return SBM_STOP_FUNCTION_TOLERANCE;
    return SBM_STOP_NONE;
}

/* Take the trial to new_cost: the stop rule met into *stop, and a new linearisation unless a
 * rule holds or iteration it is the last. */
static sbm_status take_step(lm_run *r, int it, double new_cost, int small,
                            sbm_iteration_report *rep, sbm_stop_reason *stop)
{
    r->ops->accept(r->ops->data);
    rep->accepted = 1;
    rep->cost = new_cost;
    *stop = stop_after_accept(r, new_cost, small);
    r->cost = new_cost;
    r->moved = 1;
    if (it < r->opt->max_iterations && *stop == SBM_STOP_NONE) {
        SBM__TRY(r->ops->linearize(r->ops->data, rep, &r->cost, &r->gnorm));
        r->moved = 0;
    }
    return SBM_SUCCESS;
}

/* The parameter rule for the step of length alpha: *step_norm = |alpha dx|. */
static sbm_status small_step(lm_run *r, double alpha, double *step_norm, int *small)
{
    double x_norm = 0.0;
    SBM__TRY(r->ops->norms(r->ops->data, alpha, step_norm, &x_norm));
    const double tol = r->opt->parameter_tolerance;
    *small = *step_norm <= tol * (x_norm + tol);
    return SBM_SUCCESS;
}

/* One Levenberg-Marquardt iteration. */
static sbm_status lm_iteration(lm_run *r, int it, sbm_iteration_report *rep,
                               sbm_stop_reason *stop)
{
    sbm_ctx *ctx = r->ctx;
    const sbm__lm_ops *ops = r->ops;
    rep->lambda = r->lambda;
    sbm_status st = ops->solve_step(ops->data, 1, r->lambda, rep);
    if (st == SBM_ERR_NOT_POSITIVE_DEFINITE)
        rep->linear_failed = 1; /* a rejected step; the message stays in the context */
    else if (st != SBM_SUCCESS)
        return st;
    const double ts = sbm__now(ctx, 1);
    double new_cost = INFINITY, predicted = 0.0;
    int small = 0;
    if (!rep->linear_failed) {
        SBM__TRY(ops->trial_cost(ops->data, 1.0, &new_cost));
        SBM__TRY(ops->predicted_decrease(ops->data, r->lambda, &predicted));
        SBM__TRY(small_step(r, 1.0, &rep->step_norm, &small));
    }
    rep->time_update += sbm__now(ctx, 1) - ts;
    if (!rep->linear_failed && isfinite(new_cost) && new_cost < r->cost && predicted > 0.0) {
        const double rho = (r->cost - new_cost) / predicted;
        const double tr = 2.0 * rho - 1.0;
        const double shrunk = r->lambda * fmax(1.0 / 3.0, 1.0 - tr * tr * tr);
        r->lambda = fmax(shrunk, fmin(r->lambda, r->opt->min_lambda));
        r->nu = 2.0;
        return take_step(r, it, new_cost, small, rep, stop);
    }
    /* rejected: the current parameters never changed */
    r->lambda *= r->nu;
    r->nu *= 2.0;
    *stop = small                             ? SBM_STOP_PARAMETER_TOLERANCE
            : r->lambda > SBM__LM_LAMBDA_MAX ? SBM_STOP_NO_PROGRESS
                                              : SBM_STOP_NONE;
    return SBM_SUCCESS;
}

/* One Gauss-Newton iteration with its backtracking line search. */
static sbm_status gn_iteration(lm_run *r, int it, sbm_iteration_report *rep,
                               sbm_stop_reason *stop)
{
    sbm_ctx *ctx = r->ctx;
    const sbm__lm_ops *ops = r->ops;
    const sbm_status st = ops->solve_step(ops->data, 0, 0.0, rep);
    if (st == SBM_ERR_NOT_POSITIVE_DEFINITE) r->sum->linear_failures++;
    SBM__TRY(st); /* no damping to fall back on */
    const double ts = sbm__now(ctx, 1);
    double alpha = 1.0, new_cost = INFINITY;
    for (int k = 0;; k++, alpha *= 0.5) {
        SBM__TRY(ops->trial_cost(ops->data, alpha, &new_cost));
        if ((isfinite(new_cost) && new_cost < r->cost) || k == GN_MAX_HALVINGS) break;
    }
    rep->time_update += sbm__now(ctx, 1) - ts;
    if (isfinite(new_cost) && new_cost < r->cost) {
        rep->lambda = alpha;
        int small = 0;
        SBM__TRY(small_step(r, alpha, &rep->step_norm, &small));
        return take_step(r, it, new_cost, small, rep, stop);
    }
    rep->lambda = alpha; /* the shortest length tried */
    rep->step_norm = 0.0;
    *stop = SBM_STOP_NO_PROGRESS;
    return SBM_SUCCESS;
}

/* The report goes out: the estimate into the problem first when asked, the counts into the
 * summary. */
static sbm_status end_iteration(lm_run *r, int it, double t_it, sbm_iteration_report *rep)
{
    if (r->opt->update_state_every_iteration && r->opt->callback)
        SBM__TRY(r->ops->publish(r->ops->data));
    r->sum->linear_failures += rep->linear_failed;
    r->sum->linear_capped += rep->linear_capped;
    r->sum->final_gradient_norm = r->gnorm;
    sbm__solver_end_iteration(r->ctx, r->opt, it, r->cost, t_it, rep, r->sum);
    return SBM_SUCCESS;
}

/* The stop rules that need no step. */
static sbm_stop_reason stop_before(const lm_run *r)
{
    if (r->cost == 0.0) return SBM_STOP_ZERO_COST;
    if (r->gnorm <= r->opt->gradient_tolerance) return SBM_STOP_GRADIENT_TOLERANCE;
    return SBM_STOP_NONE;
}

sbm_status sbm__lm_drive(sbm_ctx *ctx, const sbm_solver_options *options, const sbm__lm_ops *ops,
                         int64_t n, double cost, double gradient_norm,
                         sbm_solver_summary *summary)
{
    lm_run r;
    memset(&r, 0, sizeof r);
    r.ctx = ctx, r.opt = options, r.ops = ops, r.sum = summary;
    r.cost = cost, r.gnorm = gradient_norm;
    r.lambda = options->initial_lambda, r.nu = 2.0;
    summary->final_gradient_norm = gradient_norm;
    summary->stop_reason = SBM_STOP_NONE;
    if (n == 0) return SBM_SUCCESS; /* nothing to solve for */
    const int gn = options->method == SBM_METHOD_GAUSS_NEWTON;
    sbm_stop_reason stop = stop_before(&r);
    for (int it = 1; stop == SBM_STOP_NONE && it <= options->max_iterations; it++) {
        sbm_iteration_report rep;
        memset(&rep, 0, sizeof rep);
        rep.iteration = it;
        rep.cost_before = rep.cost = r.cost;
        rep.gradient_norm = r.gnorm;
        const double t_it = sbm__now(ctx, 1);
        SBM__TRY(gn ? gn_iteration(&r, it, &rep, &stop) : lm_iteration(&r, it, &rep, &stop));
        SBM__TRY(end_iteration(&r, it, t_it, &rep));
        if (stop == SBM_STOP_NONE) stop = stop_before(&r);
    }
    if (stop == SBM_STOP_NONE) stop = SBM_STOP_MAX_ITERATIONS;
    if (r.moved) {
        /* the gradient at the returned parameters; the cost stays the trial's */
        sbm_iteration_report rep;
        memset(&rep, 0, sizeof rep);
        double c = 0.0;
        SBM__TRY(ops->linearize(ops->data, &rep, &c, &r.gnorm));
        summary->time_linearize += rep.time_linearize;
        summary->time_schur += rep.time_schur;
    }
    summary->stop_reason = stop;
    summary->final_gradient_norm = r.gnorm;
    return SBM_SUCCESS;
}
