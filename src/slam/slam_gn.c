/* Gauss-Newton on pose graphs: solve Lambda dx = -b (dense Cholesky on small graphs, PCG with
 * block-Jacobi on Lambda otherwise; sparse Cholesky is not this library's job), then apply the
 * step with g2o's increments. A backtracking line search halves the step until chi2 decreases
 * (at most 10 halvings): the Gauss-Newton direction of a positive definite Lambda is a descent
 * direction (so is every PCG iterate), which makes each accepted iteration lower chi2; when no
 * step length does, the solve stops there. */
#include "slam_internal.h"

#include <math.h>
#include <string.h>

#define MAX_HALVINGS 10

/* y = Lambda x for PCG (vectors in the context's memory) */
static sbm_status apply_lambda(sbm_ctx *ctx, void *data, const double *x, double *y)
{
    return sbm__symup_multiply(ctx, (sbm__symup *)data, x, y);
}

/* poses = saved (+) alpha*dx on the free vertices */
static void apply_step(const sbm_g2o_info *gi, const double *saved, const double *dx,
                       double alpha)
{
    const int ps = gi->pose_size, d = gi->error_dim;
    memcpy(gi->poses, saved, (size_t)(ps * gi->vertices) * sizeof(double));
    int64_t c = 0;
    for (int64_t v = 0; v < gi->vertices; v++) {
        if (gi->is_fixed[v]) continue;
        double inc[6];
        for (int a = 0; a < d; a++) inc[a] = alpha * dx[d * c + a];
        if (ps == 3)
            sbm__se2_oplus(gi->poses + ps * v, inc);
        else
            sbm__se3_oplus(gi->poses + ps * v, inc);
        c++;
    }
}

sbm_status sbm_slam_solve(sbm_ctx *ctx, sbm_g2o_graph *graph, const sbm_solver_options *options,
                          sbm_solver_summary *summary)
{
    SBM__ENTER(ctx, "sbm_slam_solve");
    if (!graph) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument graph is NULL");
    const sbm_solver_options opt = options ? *options : sbm_solver_default_options();
    SBM__TRY(sbm__check_solver_options(ctx, &opt));
    if (opt.linear_solver == SBM_LINEAR_PCG_MATRIX_FREE)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument options: SBM_LINEAR_PCG_MATRIX_FREE is the BA reduced system's "
                          "solver; pose graphs use SBM_LINEAR_PCG or SBM_LINEAR_DENSE_CHOLESKY");
    if (summary) memset(summary, 0, sizeof *summary);
    const sbm_g2o_info gi = sbm_g2o_get_info(graph);

    const double t_start = sbm__now(ctx, 1);
    sbm_slam_system *sys = NULL;
    sbm_cbc *Dinv = NULL;
    sbm__symup lsym;
    memset(&lsym, 0, sizeof lsym);
    double *d_rhs = NULL, *d_x = NULL, *h = NULL;
    sbm_status st;

    if ((st = SBM__NESTED(ctx, sbm_slam_system_create(ctx, graph, &sys))) != SBM_SUCCESS)
        goto done;
    if ((st = SBM__NESTED(ctx, sbm_slam_linearize(ctx, sys, graph))) != SBM_SUCCESS)
        goto done;
    double t_jac = 0.0, t_lam = 0.0;
    sbm__slam_system_times(sys, &t_jac, &t_lam);
    sbm_slam_system_info si = sbm_slam_system_get_info(sys);
    const int64_t n = si.free_vertices * si.error_dim;
    sbm_linear_solver ls = opt.linear_solver;
    if (ls == SBM_LINEAR_AUTO) ls = n <= opt.dense_max_dim ? SBM_LINEAR_DENSE_CHOLESKY : SBM_LINEAR_PCG;

    d_rhs = sbm__vec_alloc(ctx, n, "PCG rhs");
    d_x = d_rhs ? sbm__vec_alloc(ctx, n, "PCG x") : NULL;
    h = d_x ? sbm__host_alloc(ctx, (size_t)(2 * n + gi.pose_size * gi.vertices) * sizeof(double),
                              "solver vectors") : NULL;
    if (!h) {
        st = ctx->last_status;
        goto done;
    }
    double *h_rhs = h, *h_dx = h + n, *h_saved = h + 2 * n;
    if (ls == SBM_LINEAR_PCG) {
        if ((st = sbm__symup_init(ctx, si.Lambda, &lsym)) != SBM_SUCCESS) goto done;
        if ((st = SBM__NESTED(ctx, sbm_cbc_copy(ctx, lsym.D, &Dinv))) != SBM_SUCCESS)
            goto done;
    }

    double chi2 = si.chi2;
    if (summary) {
        summary->initial_cost = chi2;
        summary->final_cost = chi2;
        summary->linear_solver = ls;
        summary->time_linearize = t_jac;
        summary->time_schur = t_lam;
    }
    for (int it = 1; it <= opt.max_iterations && n > 0 && chi2 > 0.0; it++) {
        sbm_iteration_report rep;
        memset(&rep, 0, sizeof rep);
        rep.iteration = it;
        rep.cost_before = chi2;
        rep.cost = chi2;
        const double t_it = sbm__now(ctx, 1);

        /* Lambda dx = -b */
        double ts = sbm__now(ctx, 1);
        if (ls == SBM_LINEAR_DENSE_CHOLESKY) {
            if ((st = sbm__vec_download(ctx, h_rhs, si.b, n)) != SBM_SUCCESS) goto done;
            for (int64_t k = 0; k < n; k++) h_rhs[k] = -h_rhs[k];
            st = sbm__dense_spd_solve(ctx, si.Lambda, h_rhs, h_dx);
        } else {
            /* PCG where Lambda lives; only the step comes back */
            lsym.A = si.Lambda;
            st = sbm__vec_copy(ctx, d_rhs, si.b, n);
            if (st == SBM_SUCCESS) st = sbm__vec_scale(ctx, n, -1.0, d_rhs);
            if (st == SBM_SUCCESS) st = sbm__symup_refresh(ctx, &lsym);
            if (st == SBM_SUCCESS) st = sbm__symup_diag_inverse(ctx, &lsym, Dinv);
            if (st == SBM_SUCCESS)
                st = sbm__pcg(ctx, n, apply_lambda, &lsym, sbm__bdiag_apply, Dinv, d_rhs, d_x,
                              opt.pcg_max_iterations, opt.pcg_tolerance, &rep.linear_iterations,
                              &rep.linear_residual);
            if (st == SBM_SUCCESS) st = sbm__vec_download(ctx, h_dx, d_x, n);
        }
        if (st != SBM_SUCCESS) goto done;
        rep.time_solve = sbm__now(ctx, 1) - ts;

        /* backtracking line search */
        ts = sbm__now(ctx, 1);
        memcpy(h_saved, gi.poses, (size_t)(gi.pose_size * gi.vertices) * sizeof(double));
        double alpha = 1.0, new_chi2 = INFINITY;
        for (int k = 0; k <= MAX_HALVINGS; k++, alpha *= 0.5) {
            apply_step(&gi, h_saved, h_dx, alpha);
            new_chi2 = sbm__g2o_chi2_host(graph);
            if (isfinite(new_chi2) && new_chi2 < chi2) break;
        }
        rep.time_update = sbm__now(ctx, 1) - ts;
        rep.lambda = alpha;
        int stop = 0;
        if (isfinite(new_chi2) && new_chi2 < chi2) {
            rep.accepted = 1;
            rep.cost = new_chi2;
            stop = chi2 - new_chi2 <= opt.function_tolerance * chi2;
            chi2 = new_chi2;
            if (it < opt.max_iterations && !stop) {
                if ((st = SBM__NESTED(ctx, sbm_slam_linearize(ctx, sys, graph))) != SBM_SUCCESS)
                    goto done;
                sbm__slam_system_times(sys, &rep.time_linearize, &rep.time_schur);
                si = sbm_slam_system_get_info(sys);
            }
        } else {
            memcpy(gi.poses, h_saved, (size_t)(gi.pose_size * gi.vertices) * sizeof(double));
            stop = 1;
        }
        sbm__solver_end_iteration(ctx, &opt, it, chi2, t_it, &rep, summary);
        if (stop) break;
    }
    st = SBM_SUCCESS;

done:
    if (summary) summary->time_total = sbm__now(ctx, 1) - t_start;
    if (h) sbm__host_free(ctx, h);
    sbm__free_with(&ctx->allocator, d_rhs);
    sbm__free_with(&ctx->allocator, d_x);
    sbm__symup_free(&lsym);
    sbm_cbc_destroy(Dinv);
    sbm_slam_system_destroy(sys);
    return st;
}
