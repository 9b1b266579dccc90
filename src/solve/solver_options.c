/* SPDX-License-Identifier: BSD-3-Clause */
/* Options shared by the nonlinear solvers: defaults and checks. */
#include "solve_internal.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

sbm_solver_options sbm_solver_default_options(void)
{
    sbm_solver_options o;
    memset(&o, 0, sizeof o);
    /* Levenberg-Marquardt reaches the optimum of every shared pose graph to 1e-6 relative with
     * these, the slowest (ais2klinik: tiny damping, long Gauss-Newton steps along a valley) within
     * 200 iterations, hence 200 at most
     * (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). The tolerances stop where a
     * further step changes the cost by round-off only: a relative decrease of 1e-10 (a cost summed
     * over 1e4-1e5 edges carries ~1e-13 relative round-off), a step of 1e-10 relative to the
     * parameters, a max gradient component of 1e-10 (absolute, as Ceres's). */
    o.max_iterations = 200;
    o.linear_solver = SBM_LINEAR_AUTO;
    o.dense_max_dim = 2000;
    o.pcg_max_iterations = 200;
    o.pcg_tolerance = 1e-8;
    /* inexact Newton steps: on the shared BAL files the same final cost (problem-21: bitwise to
     * 12 digits; problem-49: 9e-8 lower, where the fixed 1e-8 hits the 200-iteration cap at every
     * step) with 4.7x / 9.6x fewer PCG iterations (docs/DESIGN-NOTES.md, "Inexact Newton") */
    o.pcg_forcing = SBM_PCG_FORCING_EISENSTAT_WALKER;
    o.pcg_forcing_max = 0.1;
    o.initial_lambda = 1e-4;
    o.min_lambda = 0.0;
    o.function_tolerance = 1e-10;
    o.gradient_tolerance = 1e-10;
    o.parameter_tolerance = 1e-10;
    o.method = SBM_METHOD_LEVENBERG_MARQUARDT;
    o.loss.type = SBM_LOSS_NONE;
    o.loss.scale = 1.0;
    return o;
}

const char *sbm_stop_reason_name(sbm_stop_reason reason)
{
    switch (reason) {
    case SBM_STOP_NONE: return "not run";
    case SBM_STOP_FUNCTION_TOLERANCE: return "function tolerance";
    case SBM_STOP_GRADIENT_TOLERANCE: return "gradient tolerance";
    case SBM_STOP_PARAMETER_TOLERANCE: return "parameter tolerance";
    case SBM_STOP_ZERO_COST: return "zero cost";
    case SBM_STOP_MAX_ITERATIONS: return "iteration limit";
    case SBM_STOP_NO_PROGRESS: return "no progress";
    }
    return "unknown stop reason";
}

const char *sbm_pcg_forcing_name(sbm_pcg_forcing forcing)
{
    switch (forcing) {
    case SBM_PCG_FORCING_FIXED: return "fixed";
    case SBM_PCG_FORCING_EISENSTAT_WALKER: return "Eisenstat-Walker";
    }
    return "unknown forcing";
}

double sbm__pcg_forcing_tolerance(const sbm_solver_options *o, sbm__forcing *f, double gnorm)
{
    if (o->pcg_forcing != SBM_PCG_FORCING_EISENSTAT_WALKER) return o->pcg_tolerance;
    double eta;
    if (f->eta == 0.0) {
        eta = o->pcg_forcing_max;
    } else if (gnorm == f->gnorm || !(f->gnorm > 0.0)) {
        return f->eta; /* the same point (a rejected step retried): the same eta */
    } else {
        const double ratio = gnorm / f->gnorm, keep = 0.9 * f->eta * f->eta;
        eta = 0.9 * ratio * ratio;
        if (keep > 0.1 && eta < keep) eta = keep; /* no sudden tightening */
    }
    if (!(eta <= o->pcg_forcing_max)) eta = o->pcg_forcing_max; /* a NaN ratio included */
    if (eta < o->pcg_tolerance) eta = o->pcg_tolerance;
    f->eta = eta;
    f->gnorm = gnorm;
    return eta;
}

int sbm_stop_reason_converged(sbm_stop_reason reason)
{
    return reason == SBM_STOP_FUNCTION_TOLERANCE || reason == SBM_STOP_GRADIENT_TOLERANCE ||
           reason == SBM_STOP_PARAMETER_TOLERANCE || reason == SBM_STOP_ZERO_COST;
}

sbm_status sbm__check_solver_options(sbm_ctx *ctx, const sbm_solver_options *o)
{
    if (o->max_iterations < 0)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument options: max_iterations = %d must be >= 0", o->max_iterations);
    if (o->linear_solver < SBM_LINEAR_AUTO || o->linear_solver > SBM_LINEAR_SPARSE_CHOLESKY)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument options: linear_solver = %d is not an sbm_linear_solver",
                          (int)o->linear_solver);
    if (o->pcg_max_iterations < 1 || !(o->pcg_tolerance > 0.0) || !(o->pcg_tolerance < 1.0))
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument options: pcg_max_iterations = %d must be >= 1 and "
                          "pcg_tolerance = %g in (0, 1)",
                          o->pcg_max_iterations, o->pcg_tolerance);
    if (o->pcg_forcing != SBM_PCG_FORCING_FIXED && o->pcg_forcing != SBM_PCG_FORCING_EISENSTAT_WALKER)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument options: pcg_forcing = %d is not an sbm_pcg_forcing",
                          (int)o->pcg_forcing);
    if (o->pcg_forcing != SBM_PCG_FORCING_FIXED &&
        !(o->pcg_forcing_max >= o->pcg_tolerance && o->pcg_forcing_max < 1.0))
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument options: pcg_forcing_max = %g must be in [pcg_tolerance = "
                          "%g, 1) with the %s forcing",
                          o->pcg_forcing_max, o->pcg_tolerance,
                          sbm_pcg_forcing_name(o->pcg_forcing));
    if (!(o->initial_lambda >= 0.0) || !isfinite(o->initial_lambda) ||
        !(o->function_tolerance >= 0.0) || o->dense_max_dim < 0)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument options: initial_lambda = %g, function_tolerance = %g and "
                          "dense_max_dim = %" PRId64 " must be >= 0",
                          o->initial_lambda, o->function_tolerance, o->dense_max_dim);
    if (!(o->min_lambda >= 0.0) || !isfinite(o->min_lambda))
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument options: min_lambda = %g must be finite and >= 0",
                          o->min_lambda);
    if (!(o->gradient_tolerance >= 0.0) || !isfinite(o->gradient_tolerance) ||
        !(o->parameter_tolerance >= 0.0) || !isfinite(o->parameter_tolerance) ||
        !isfinite(o->function_tolerance))
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument options: function_tolerance = %g, gradient_tolerance = %g and "
                          "parameter_tolerance = %g must be finite and >= 0",
                          o->function_tolerance, o->gradient_tolerance, o->parameter_tolerance);
    if (o->method != SBM_METHOD_LEVENBERG_MARQUARDT && o->method != SBM_METHOD_GAUSS_NEWTON)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument options: method = %d is not an sbm_solver_method",
                          (int)o->method);
    if (o->update_state_every_iteration != 0 && o->update_state_every_iteration != 1)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument options: update_state_every_iteration = %d must be 0 or 1",
                          o->update_state_every_iteration);
    return sbm__check_loss(ctx, "options: loss", &o->loss);
}

sbm_status sbm__check_loss(sbm_ctx *ctx, const char *arg, const sbm_loss *loss)
{
    if (loss->type != SBM_LOSS_NONE && loss->type != SBM_LOSS_HUBER &&
        loss->type != SBM_LOSS_CAUCHY)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument %s.type = %d is not an sbm_loss_type", arg, (int)loss->type);
    if (loss->type != SBM_LOSS_NONE && (!(loss->scale > 0.0) || !isfinite(loss->scale)))
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument %s.scale = %g must be finite and > 0 (loss %s)", arg,
                          loss->scale, sbm_loss_name(loss->type));
    if (loss->type != SBM_LOSS_NONE &&
        (loss->scale < SBM_LOSS_SCALE_MIN || loss->scale > SBM_LOSS_SCALE_MAX))
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument %s.scale = %g is outside [%g, %g] (loss %s: a smaller scale "
                          "flattens every residual, a larger one overflows a^2)",
                          arg, loss->scale, SBM_LOSS_SCALE_MIN, SBM_LOSS_SCALE_MAX,
                          sbm_loss_name(loss->type));
    return SBM_SUCCESS;
}

const char *sbm_loss_name(sbm_loss_type type)
{
    switch (type) {
    case SBM_LOSS_NONE: return "none";
    case SBM_LOSS_HUBER: return "huber";
    case SBM_LOSS_CAUCHY: return "cauchy";
    }
    return "unknown loss";
}

const char *sbm_linear_solver_name(sbm_linear_solver solver)
{
    switch (solver) {
    case SBM_LINEAR_AUTO: return "auto";
    case SBM_LINEAR_DENSE_CHOLESKY: return "dense Cholesky";
    case SBM_LINEAR_PCG: return "PCG (block-Jacobi)";
    case SBM_LINEAR_PCG_MATRIX_FREE: return "matrix-free PCG (Schur-Jacobi)";
    case SBM_LINEAR_SPARSE_CHOLESKY: return "sparse Cholesky";
    }
    return "unknown linear solver";
}

const char *sbm_solver_method_name(sbm_solver_method method)
{
    switch (method) {
    case SBM_METHOD_LEVENBERG_MARQUARDT: return "Levenberg-Marquardt";
    case SBM_METHOD_GAUSS_NEWTON: return "Gauss-Newton";
    }
    return "unknown method";
}

const char *sbm_damping_name(sbm_damping damping)
{
    switch (damping) {
    case SBM_DAMPING_NONE: return "none";
    case SBM_DAMPING_IDENTITY: return "identity";
    case SBM_DAMPING_DIAGONAL: return "diagonal";
    }
    return "unknown damping";
}

const char *sbm_chol_ordering_name(sbm_chol_ordering ordering)
{
    switch (ordering) {
    case SBM_CHOL_ORDERING_AMD: return "AMD";
    case SBM_CHOL_ORDERING_NATURAL: return "natural";
    }
    return "unknown ordering";
}
