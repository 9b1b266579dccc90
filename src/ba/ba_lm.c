/* Levenberg-Marquardt for BAL problems on the reduced camera system.
 *
 * Each iteration: damp U and V (Marquardt: lambda times the clamped diagonal), form S and rhs
 * with the Schur plan (made once), solve S dc = rhs (dense Cholesky on the host, or PCG with
 * block-Jacobi on the explicit or matrix-free S), back-substitute dp, and evaluate the cost at
 * the new parameters. A step that lowers the cost is taken and lambda shrinks by Nielsen's rule
 * max(1/3, 1 - (2 rho - 1)^3) (rho = actual / predicted decrease); otherwise the parameters are
 * restored and lambda grows by nu, nu doubling (Madsen, Nielsen & Tingleff, "Methods for
 * non-linear least squares problems", 2004, section 3.2). Only an accepted step relinearises. */
#include "ba_internal.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Operators of the reduced system for PCG (vectors in the context's memory)                */
/* ---------------------------------------------------------------------------------------- */

typedef struct lm_ops {
    sbm_ba_system *sys;     /* U, W */
    sbm_schur_plan *plan;   /* Y, V^-1 */
    sbm__symup *ssym;       /* explicit S (NULL when matrix-free) */
} lm_ops;

static sbm_status apply_explicit(sbm_ctx *ctx, void *data, const double *x, double *y)
{
    lm_ops *o = data;
    return sbm__symup_multiply(ctx, o->ssym, x, y);
}

static sbm_status apply_matrix_free(sbm_ctx *ctx, void *data, const double *x, double *y)
{
    lm_ops *o = data;
    const sbm_ba_system_info si = sbm_ba_system_get_info(o->sys);
    return SBM__NESTED(ctx, sbm_ba_schur_multiply(ctx, o->plan, si.U, si.W, x, y));
}

/* ---------------------------------------------------------------------------------------- */
/* The solver                                                                               */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm_ba_solve(sbm_ctx *ctx, sbm_bal_problem *problem, const sbm_solver_options *options,
                        sbm_solver_summary *summary)
{
    SBM__ENTER(ctx, "sbm_ba_solve");
    if (!problem) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument problem is NULL");
    const sbm_solver_options opt = options ? *options : sbm_solver_default_options();
    SBM__TRY(sbm__check_solver_options(ctx, &opt));
    if (summary) memset(summary, 0, sizeof *summary);

    const sbm_bal_info pi = sbm_bal_get_info(problem);
    const int64_t nc = pi.cameras, np = pi.points;
    const int64_t n = 9 * nc, nall = 9 * nc + 3 * np;
    sbm_linear_solver ls = opt.linear_solver;
    if (ls == SBM_LINEAR_AUTO) ls = n <= opt.dense_max_dim ? SBM_LINEAR_DENSE_CHOLESKY : SBM_LINEAR_PCG;

    const double t_start = sbm__now(ctx, 1);
    sbm_ba_system *sys = NULL;
    sbm_schur_plan *plan = NULL;
    sbm_cbc *S = NULL, *Dinv = NULL;
    sbm__symup ssym;
    memset(&ssym, 0, sizeof ssym);
    sbm__bjacobi bj;
    memset(&bj, 0, sizeof bj);
    double *d_rhs = NULL, *d_dc = NULL, *d_dp = NULL;
    double *h = NULL;
    sbm_status st;
    lm_ops ops;
    memset(&ops, 0, sizeof ops);

    if ((st = SBM__NESTED(ctx, sbm_ba_system_create(ctx, problem, &sys))) != SBM_SUCCESS)
        goto done;
    double t0 = sbm__now(ctx, 1);
    if ((st = SBM__NESTED(ctx, sbm_ba_linearize(ctx, sys, problem))) != SBM_SUCCESS)
        goto done;
    double t_lin = sbm__now(ctx, 1) - t0;
    sbm_ba_system_info si = sbm_ba_system_get_info(sys);
    const unsigned flags = ls == SBM_LINEAR_PCG_MATRIX_FREE ? SBM_SCHUR_MATRIX_FREE : 0u;
    if ((st = SBM__NESTED(ctx, sbm_ba_schur_plan(ctx, si.U, si.V, si.W, flags, &plan,
                                                 flags ? NULL : &S))) != SBM_SUCCESS)
        goto done;
    d_rhs = sbm__vec_alloc(ctx, n, "rhs");
    d_dc = d_rhs ? sbm__vec_alloc(ctx, n, "dc") : NULL;
    d_dp = d_dc ? sbm__vec_alloc(ctx, 3 * np, "dp") : NULL;
    /* host: step (nall), saved parameters (nall), damping diagonal (nall), rhs (n), S diagonal */
    h = d_dp ? sbm__host_alloc(ctx, (size_t)(3 * nall + n + 81 * nc) * sizeof(double),
                              "solver vectors") : NULL;
    if (!h) {
        st = ctx->last_status;
        goto done;
    }
    double *h_step = h, *h_saved = h + nall, *h_diag = h + 2 * nall, *h_rhs = h + 3 * nall;
    double *h_sdiag = h_rhs + n;
    if (ls == SBM_LINEAR_PCG) {
        if ((st = sbm__symup_init(ctx, S, &ssym)) != SBM_SUCCESS) goto done;
        if ((st = SBM__NESTED(ctx, sbm_cbc_copy(ctx, ssym.D, &Dinv))) != SBM_SUCCESS)
            goto done;
    } else if (ls == SBM_LINEAR_PCG_MATRIX_FREE) {
        if ((st = sbm__bjacobi_init(ctx, nc, 9, &bj)) != SBM_SUCCESS) goto done;
    }
    ops.sys = sys, ops.plan = plan, ops.ssym = &ssym;

    double cost = si.cost, lambda = opt.initial_lambda, nu = 2.0;
    if (summary) {
        summary->initial_cost = cost;
        summary->final_cost = cost;
        summary->linear_solver = ls;
        summary->time_linearize = t_lin;
    }
    /* a zero cost is the minimum: there is nothing to do */
    for (int it = 1; it <= opt.max_iterations && cost > 0.0; it++) {
        sbm_iteration_report rep;
        memset(&rep, 0, sizeof rep);
        rep.iteration = it;
        rep.cost_before = cost;
        rep.cost = cost;
        rep.lambda = lambda;
        const double t_it = sbm__now(ctx, 1);
        int failed_linear = 0;

        /* Schur step */
        if ((st = SBM__NESTED(ctx, sbm_ba_set_damping(ctx, sys, lambda))) != SBM_SUCCESS)
            goto done;
        si = sbm_ba_system_get_info(sys);
        double ts = sbm__now(ctx, 1);
        st = SBM__NESTED(ctx, sbm_ba_schur_execute(ctx, plan, si.U, si.V, si.W, si.gc,
                                                   si.gp, S, d_rhs));
        rep.time_schur = sbm__now(ctx, 1) - ts;
        if (st == SBM_ERR_NOT_POSITIVE_DEFINITE) {
            failed_linear = 1;
        } else if (st != SBM_SUCCESS) {
            goto done;
        }

        /* the reduced system: dense Cholesky on the host, PCG where S lives; either way the
         * step ends up in d_dc and in h_step */
        ts = sbm__now(ctx, 1);
        if (!failed_linear) {
            if (ls == SBM_LINEAR_DENSE_CHOLESKY) {
                st = sbm__vec_download(ctx, h_rhs, d_rhs, n);
                if (st == SBM_SUCCESS) st = sbm__dense_spd_solve(ctx, S, h_rhs, h_step);
                if (st == SBM_SUCCESS) st = sbm__vec_upload(ctx, d_dc, h_step, n);
            } else if (ls == SBM_LINEAR_PCG) {
                st = sbm__symup_refresh(ctx, &ssym);
                if (st == SBM_SUCCESS)
                    st = sbm__symup_diag_inverse(ctx, &ssym, Dinv);
                if (st == SBM_SUCCESS)
                    st = sbm__pcg(ctx, n, apply_explicit, &ops, sbm__bdiag_apply, Dinv, d_rhs,
                                  d_dc, opt.pcg_max_iterations, opt.pcg_tolerance,
                                  &rep.linear_iterations, &rep.linear_residual);
                if (st == SBM_SUCCESS) st = sbm__vec_download(ctx, h_step, d_dc, n);
            } else {
                st = sbm__ba_schur_diagonal_host(ctx, sys, h_sdiag);
                if (st == SBM_SUCCESS) st = sbm__bjacobi_set(ctx, &bj, h_sdiag);
                if (st == SBM_SUCCESS)
                    st = sbm__pcg(ctx, n, apply_matrix_free, &ops, sbm__bdiag_apply, bj.Dinv,
                                  d_rhs, d_dc, opt.pcg_max_iterations, opt.pcg_tolerance,
                                  &rep.linear_iterations, &rep.linear_residual);
                if (st == SBM_SUCCESS) st = sbm__vec_download(ctx, h_step, d_dc, n);
            }
            if (st == SBM_ERR_NOT_POSITIVE_DEFINITE)
                failed_linear = 1;
            else if (st != SBM_SUCCESS)
                goto done;
        }
        rep.time_solve = sbm__now(ctx, 1) - ts;

        /* back-substitution, the new parameters and their cost */
        ts = sbm__now(ctx, 1);
        double new_cost = INFINITY, predicted = 0.0;
        if (!failed_linear) {
            if ((st = SBM__NESTED(ctx, sbm_ba_back_substitute(ctx, plan, si.W, si.gp, d_dc,
                                                              d_dp))) != SBM_SUCCESS)
                goto done;
            if ((st = sbm__vec_download(ctx, h_step + n, d_dp, 3 * np)) != SBM_SUCCESS) goto done;
            memcpy(h_saved, pi.camera_params, (size_t)n * sizeof(double));
            memcpy(h_saved + n, pi.point_params, (size_t)(3 * np) * sizeof(double));
            for (int64_t k = 0; k < n; k++) pi.camera_params[k] += h_step[k];
            for (int64_t k = 0; k < 3 * np; k++) pi.point_params[k] += h_step[n + k];
            if ((st = SBM__NESTED(ctx, sbm_bal_evaluate(ctx, problem, NULL, &new_cost))) !=
                SBM_SUCCESS)
                goto done;
            /* predicted decrease of the damped model: 0.5 dx^T (lambda D dx + g) */
            const double *g = sbm__ba_system_host_gradient(sys);
            sbm__ba_damping_diagonal(sys, h_diag);
            for (int64_t k = 0; k < nall; k++)
                predicted += h_step[k] * (lambda * h_diag[k] * h_step[k] + g[k]);
            predicted *= 0.5;
        }
        rep.time_update = sbm__now(ctx, 1) - ts;

        int stop = 0;
        if (!failed_linear && isfinite(new_cost) && new_cost < cost) {
            const double rho = predicted > 0.0 ? (cost - new_cost) / predicted : 1.0;
            const double tr = 2.0 * rho - 1.0;
            lambda *= fmax(1.0 / 3.0, 1.0 - tr * tr * tr);
            nu = 2.0;
            rep.accepted = 1;
            rep.cost = new_cost;
            stop = cost - new_cost <= opt.function_tolerance * cost;
            cost = new_cost;
            if (it < opt.max_iterations && !stop) {
                t0 = sbm__now(ctx, 1);
                if ((st = SBM__NESTED(ctx, sbm_ba_linearize(ctx, sys, problem))) !=
                    SBM_SUCCESS)
                    goto done;
                rep.time_linearize = sbm__now(ctx, 1) - t0;
            }
        } else {
            if (!failed_linear) {
                memcpy(pi.camera_params, h_saved, (size_t)n * sizeof(double));
                memcpy(pi.point_params, h_saved + n, (size_t)(3 * np) * sizeof(double));
            }
            lambda *= nu;
            nu *= 2.0;
            stop = lambda > 1e32;
        }
        sbm__solver_end_iteration(ctx, &opt, it, cost, t_it, &rep, summary);
        if (stop) break;
    }
    st = SBM_SUCCESS;

done:
    if (summary) summary->time_total = sbm__now(ctx, 1) - t_start;
    if (h) sbm__host_free(ctx, h);
    sbm__free_with(&ctx->allocator, d_rhs);
    sbm__free_with(&ctx->allocator, d_dc);
    sbm__free_with(&ctx->allocator, d_dp);
    sbm__bjacobi_free(&bj);
    sbm__symup_free(&ssym);
    sbm_cbc_destroy(Dinv);
    sbm_cbc_destroy(S);
    sbm_schur_plan_destroy(plan);
    sbm_ba_system_destroy(sys);
    return st;
}
