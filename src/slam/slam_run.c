/* One solve of a pose graph: the state Gauss-Newton (slam_gn.c) and Levenberg-Marquardt
 * (slam_lm.c) share, the linear solve of (Lambda + damping) dx = -b, and sbm_slam_solve.
 *
 * The linear solvers:
 *   - sparse Cholesky (the default; AUTO resolves to it): sbm_chol_plan once for Lambda's
 *     pattern, sbm_chol_factor with the damping every solve, never planned again;
 *   - dense Cholesky (LAPACK on the host) and PCG with block Jacobi: on a copy of Lambda whose
 *     diagonal carries the damping, built on the host from Lambda's values and uploaded.
 * The damping scale D (SBM_DAMPING_DIAGONAL, Marquardt's): Lambda's diagonal clamped to
 * [1e-6, 1e32], the rule the sparse Cholesky applies (chol_internal.h). A matrix that is not
 * positive definite is reported by the vertex id of the file and the free vertex. */
#include "chol_internal.h"
#include "slam_internal.h"

#include <inttypes.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

double sbm__slam_cost(const sbm_g2o_graph *g) { return 0.5 * sbm__g2o_chi2_host(g); }

/* y = (Lambda + damping) x for PCG (vectors in the context's memory) */
static sbm_status apply_damped(sbm_ctx *ctx, void *data, const double *x, double *y)
{
    return sbm__symup_multiply(ctx, (sbm__symup *)data, x, y);
}

void sbm__slam_run_free(sbm__slam_run *r)
{
    if (!r->ctx) return;
    sbm_ctx *ctx = r->ctx;
    if (r->h) sbm__host_free(ctx, r->h);
    if (r->h_vals) sbm__host_free(ctx, r->h_vals);
    if (r->diag_pos) sbm__host_free(ctx, r->diag_pos);
    if (r->free_vertex) sbm__host_free(ctx, r->free_vertex);
    sbm__free_with(&ctx->allocator, r->d_rhs);
    sbm__free_with(&ctx->allocator, r->d_x);
    sbm__symup_free(&r->lsym);
    sbm_cbc_destroy(r->Dinv);
    sbm_cbc_destroy(r->damped);
    sbm_chol_destroy(r->chol);
    sbm_slam_system_destroy(r->sys);
    memset(r, 0, sizeof *r);
}

/* Where each free vertex's diagonal block sits in Lambda's values (-1 if none). */
static sbm_status find_diagonal(sbm__slam_run *r)
{
    sbm_ctx *ctx = r->ctx;
    const sbm_cbc *L = r->si.Lambda;
    const int64_t *cp;
    const int32_t *ri;
    SBM__TRY(sbm__cbc_pattern_to_host(ctx, L, &cp, &ri));
    const int64_t bs = (int64_t)L->r * L->r;
    for (int64_t j = 0; j < L->nbc; j++) {
        r->diag_pos[j] = -1;
        for (int64_t k = cp[j]; k < cp[j + 1]; k++)
            if (ri[k] == j) r->diag_pos[j] = k * bs;
    }
    sbm__cbc_pattern_release(ctx, L, cp, ri);
    return SBM_SUCCESS;
}

/* Host memory of a run; the copy of Lambda and PCG's state; the sparse Cholesky's plan. */
static sbm_status setup_linear(sbm__slam_run *r)
{
    sbm_ctx *ctx = r->ctx;
    const int64_t nf = r->si.free_vertices, n = r->n;
    const int64_t nvals = r->si.Lambda->nnzb * r->si.error_dim * r->si.error_dim;
    r->free_vertex = sbm__host_alloc(ctx, (size_t)(nf + 1) * sizeof(int64_t), "free vertices");
    r->diag_pos = r->free_vertex ? sbm__host_alloc(ctx, (size_t)(nf + 1) * sizeof(int64_t),
                                                   "diagonal blocks") : NULL;
    /* Lambda's values, and the damped ones (dense Cholesky, PCG) */
    const int64_t copies = r->ls == SBM_LINEAR_SPARSE_CHOLESKY ? 1 : 2;
    r->h_vals = r->diag_pos ? sbm__host_alloc(ctx, (size_t)(copies * nvals + 1) * sizeof(double),
                                              "Lambda values") : NULL;
    /* b, rhs, step, damping scale (n each), the saved poses */
    r->h = r->h_vals ? sbm__host_alloc(ctx, (size_t)(4 * n + r->np + 1) * sizeof(double),
                                       "solver vectors") : NULL;
    r->d_rhs = r->h ? sbm__vec_alloc(ctx, n + 1, "rhs") : NULL;
    r->d_x = r->d_rhs ? sbm__vec_alloc(ctx, n + 1, "step") : NULL;
    if (!r->d_x) return ctx->last_status;
    r->h_b = r->h, r->h_dx = r->h + 2 * n, r->h_diag = r->h + 3 * n, r->h_saved = r->h + 4 * n;
    for (int64_t v = 0, j = 0; v < r->gi.vertices; v++)
        if (!r->gi.is_fixed[v]) r->free_vertex[j++] = v;
    SBM__TRY(find_diagonal(r));
    if (n == 0) return SBM_SUCCESS;
    if (r->ls == SBM_LINEAR_SPARSE_CHOLESKY)
        return SBM__NESTED(ctx, sbm_chol_plan(ctx, r->si.Lambda, NULL, &r->chol));
    SBM__TRY(SBM__NESTED(ctx, sbm_cbc_copy(ctx, r->si.Lambda, &r->damped)));
    if (r->ls != SBM_LINEAR_PCG) return SBM_SUCCESS;
    SBM__TRY(sbm__symup_init(ctx, r->damped, &r->lsym));
    return SBM__NESTED(ctx, sbm_cbc_copy(ctx, r->lsym.D, &r->Dinv));
}

sbm_status sbm__slam_run_init(sbm_ctx *ctx, sbm_g2o_graph *graph, const sbm_solver_options *opt,
                              sbm_solver_summary *summary, sbm__slam_run *r)
{
    memset(r, 0, sizeof *r);
    r->ctx = ctx, r->graph = graph, r->opt = opt, r->summary = summary;
    r->gi = sbm_g2o_get_info(graph);
    r->np = r->gi.pose_size * r->gi.vertices;
    SBM__TRY(SBM__NESTED(ctx, sbm_slam_system_create(ctx, graph, &r->sys)));
    sbm_iteration_report rep;
    memset(&rep, 0, sizeof rep);
    r->si = sbm_slam_system_get_info(r->sys);
    r->n = r->si.free_vertices * r->si.error_dim;
    r->ls = opt->linear_solver == SBM_LINEAR_AUTO ? SBM_LINEAR_SPARSE_CHOLESKY : opt->linear_solver;
    SBM__TRY(setup_linear(r));
    SBM__TRY(sbm__slam_run_linearize(r, &rep));
    summary->initial_cost = summary->final_cost = r->cost;
    summary->linear_solver = r->ls;
    summary->time_linearize = rep.time_linearize;
    summary->time_schur = rep.time_schur;
    summary->final_gradient_norm = r->gradient_norm;
    return SBM_SUCCESS;
}

sbm_status sbm__slam_run_linearize(sbm__slam_run *r, sbm_iteration_report *rep)
{
    sbm_ctx *ctx = r->ctx;
    SBM__TRY(SBM__NESTED(ctx, sbm_slam_linearize(ctx, r->sys, r->graph)));
    sbm__slam_system_times(r->sys, &rep->time_linearize, &rep->time_schur);
    r->si = sbm_slam_system_get_info(r->sys);
    r->cost = 0.5 * r->si.chi2;
    const int d = r->si.error_dim;
    const int64_t nvals = r->si.Lambda->nnzb * d * d;
    SBM__TRY(sbm__vec_download(ctx, r->h_b, r->si.b, r->n));
    SBM__TRY(sbm__vec_download(ctx, r->h_vals, r->si.Lambda->values, nvals));
    r->gradient_norm = 0.0;
    for (int64_t k = 0; k < r->n; k++) r->gradient_norm = fmax(r->gradient_norm, fabs(r->h_b[k]));
    /* the damping scale: Lambda's diagonal, clamped */
    for (int64_t j = 0; j < r->si.free_vertices; j++)
        for (int a = 0; a < d; a++) {
            const double v = r->diag_pos[j] >= 0 ? r->h_vals[r->diag_pos[j] + a * (d + 1)] : 0.0;
            r->h_diag[d * j + a] = fmin(fmax(v, SBM__DAMP_MIN_DIAGONAL), SBM__DAMP_MAX_DIAGONAL);
        }
    return SBM_SUCCESS;
}

static sbm_status not_positive_definite(sbm__slam_run *r, sbm_damping damping, double lambda,
                                        int64_t j, const char *how);

/* Upload Lambda + damping into the copy (dense Cholesky, PCG). A damped diagonal that
 * overflows is reported like a failed pivot (SBM_ERR_NOT_POSITIVE_DEFINITE), as the sparse
 * Cholesky does. */
static sbm_status upload_damped(sbm__slam_run *r, sbm_damping damping, double lambda)
{
    const int d = r->si.error_dim;
    const int64_t nvals = r->si.Lambda->nnzb * d * d;
    double *dv = r->h_vals + nvals;
    memcpy(dv, r->h_vals, (size_t)nvals * sizeof(double));
    for (int64_t j = 0; j < r->si.free_vertices && damping != SBM_DAMPING_NONE; j++)
        for (int a = 0; r->diag_pos[j] >= 0 && a < d; a++) {
            double *v = dv + r->diag_pos[j] + a * (d + 1);
            *v += lambda * (damping == SBM_DAMPING_DIAGONAL ? r->h_diag[d * j + a] : 1.0);
            if (!isfinite(*v))
                return not_positive_definite(r, damping, lambda, j,
                                             "its damped diagonal overflows");
        }
    return sbm__vec_upload(r->ctx, r->damped->values, dv, nvals);
}

/* The first free vertex whose damped diagonal block is not positive definite (the block
 * Jacobi preconditioner failed), or -1. */
static int64_t first_indefinite_block(const sbm__slam_run *r)
{
    const int d = r->si.error_dim;
    const double *dv = r->h_vals + r->si.Lambda->nnzb * d * d;
    for (int64_t j = 0; j < r->si.free_vertices; j++) {
        if (r->diag_pos[j] < 0) return j;
        double L[36];
        memcpy(L, dv + r->diag_pos[j], (size_t)(d * d) * sizeof(double));
        if (LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', d, L, d) != 0) return j;
    }
    return -1;
}

static sbm_status not_positive_definite(sbm__slam_run *r, sbm_damping damping, double lambda,
                                        int64_t j, const char *how)
{
    char what[64];
    if (damping == SBM_DAMPING_NONE)
        snprintf(what, sizeof what, "Lambda");
    else
        snprintf(what, sizeof what, "Lambda + damping (lambda %.3e)", lambda);
    if (j < 0 || j >= r->si.free_vertices)
        return sbm__error(r->ctx, SBM_ERR_NOT_POSITIVE_DEFINITE,
                          "%s is not positive definite (%s)", what, how);
    return sbm__error(r->ctx, SBM_ERR_NOT_POSITIVE_DEFINITE,
                      "%s is not positive definite at vertex %d (free vertex %" PRId64 "; %s)",
                      what, (int)r->gi.vertex_id[r->free_vertex[j]], j, how);
}

sbm_status sbm__slam_run_solve(sbm__slam_run *r, sbm_damping damping, double lambda,
                               sbm_iteration_report *rep)
{
    sbm_ctx *ctx = r->ctx;
    const int64_t n = r->n;
    const double ts = sbm__now(ctx, 1);
    sbm_status st = SBM_SUCCESS;
    double *h_rhs = r->h + n;
    for (int64_t k = 0; k < n; k++) h_rhs[k] = -r->h_b[k];
    if (r->ls == SBM_LINEAR_SPARSE_CHOLESKY) {
        st = sbm__vec_upload(ctx, r->d_rhs, h_rhs, n);
        if (st == SBM_SUCCESS)
            st = SBM__NESTED(ctx, sbm_chol_factor(ctx, r->chol, r->si.Lambda, damping, lambda));
        if (st == SBM_ERR_NOT_POSITIVE_DEFINITE)
            st = not_positive_definite(r, damping, lambda,
                                       sbm_chol_get_info(r->chol).failed_column,
                                       "sparse Cholesky");
        if (st == SBM_SUCCESS)
            st = SBM__NESTED(ctx, sbm_chol_solve(ctx, r->chol, 1, r->d_rhs, n, r->d_x, n));
        if (st == SBM_SUCCESS) st = sbm__vec_download(ctx, r->h_dx, r->d_x, n);
    } else if (r->ls == SBM_LINEAR_DENSE_CHOLESKY) {
        int64_t failed = -1;
        st = upload_damped(r, damping, lambda);
        if (st == SBM_SUCCESS)
            st = sbm__dense_spd_solve_at(ctx, r->damped, h_rhs, r->h_dx, &failed);
        if (st == SBM_ERR_NOT_POSITIVE_DEFINITE)
            st = not_positive_definite(r, damping, lambda, failed / r->si.error_dim,
                                       "dense Cholesky");
    } else {
        /* PCG where Lambda lives; only the step comes back */
        st = upload_damped(r, damping, lambda);
        if (st == SBM_SUCCESS) st = sbm__vec_upload(ctx, r->d_rhs, h_rhs, n);
        if (st == SBM_SUCCESS) st = sbm__symup_refresh(ctx, &r->lsym);
        if (st == SBM_SUCCESS) st = sbm__symup_diag_inverse(ctx, &r->lsym, r->Dinv);
        if (st == SBM_ERR_NOT_POSITIVE_DEFINITE)
            st = not_positive_definite(r, damping, lambda, first_indefinite_block(r),
                                       "its diagonal block, PCG's block Jacobi");
        if (st == SBM_SUCCESS)
            st = sbm__pcg(ctx, n, apply_damped, &r->lsym, sbm__bdiag_apply, r->Dinv,
                          r->d_rhs, r->d_x, r->opt->pcg_max_iterations, r->opt->pcg_tolerance,
                          &rep->linear_iterations, &rep->linear_residual);
        if (st == SBM_SUCCESS) st = sbm__vec_download(ctx, r->h_dx, r->d_x, n);
        rep->linear_capped = st == SBM_SUCCESS &&
                             rep->linear_iterations >= r->opt->pcg_max_iterations &&
                             rep->linear_residual > r->opt->pcg_tolerance;
    }
    rep->time_solve = sbm__now(ctx, 1) - ts;
    if (st == SBM_SUCCESS)
        for (int64_t k = 0; k < n; k++)
            if (!isfinite(r->h_dx[k]))
                return not_positive_definite(r, damping, lambda, k / r->si.error_dim,
                                             "the step is not finite");
    return st;
}

void sbm__slam_run_step(sbm__slam_run *r, double alpha, int save)
{
    const sbm_g2o_info *gi = &r->gi;
    const int ps = gi->pose_size, d = gi->error_dim;
    if (save)
        memcpy(r->h_saved, gi->poses, (size_t)r->np * sizeof(double));
    else
        memcpy(gi->poses, r->h_saved, (size_t)r->np * sizeof(double));
    for (int64_t j = 0; j < r->si.free_vertices; j++) {
        double inc[6];
        for (int a = 0; a < d; a++) inc[a] = alpha * r->h_dx[d * j + a];
        double *x = gi->poses + ps * r->free_vertex[j];
        if (ps == 3)
            sbm__se2_oplus(x, inc);
        else
            sbm__se3_oplus(x, inc);
    }
}

void sbm__slam_run_restore(sbm__slam_run *r)
{
    memcpy(r->gi.poses, r->h_saved, (size_t)r->np * sizeof(double));
}

int sbm__slam_run_small_step(const sbm__slam_run *r, double alpha, double *step_norm)
{
    const int ps = r->gi.pose_size;
    double s2 = 0.0, x2 = 0.0;
    for (int64_t k = 0; k < r->n; k++) s2 += r->h_dx[k] * r->h_dx[k];
    for (int64_t j = 0; j < r->si.free_vertices; j++)
        for (int a = 0; a < ps; a++) {
            const double x = r->h_saved[ps * r->free_vertex[j] + a];
            x2 += x * x;
        }
    const double tol = r->opt->parameter_tolerance;
    *step_norm = fabs(alpha) * sqrt(s2);
    return *step_norm <= tol * (sqrt(x2) + tol);
}

sbm_iteration_report sbm__slam_iteration_start(const sbm__slam_run *r, int it)
{
    sbm_iteration_report rep;
    memset(&rep, 0, sizeof rep);
    rep.iteration = it;
    rep.cost_before = rep.cost = r->cost;
    rep.gradient_norm = r->gradient_norm;
    return rep;
}

/* Before an iteration: the stop rules that need no step (zero cost, gradient). */
sbm_stop_reason sbm__slam_stop_before(const sbm__slam_run *r)
{
    if (r->n == 0) return SBM_STOP_NONE;
    if (r->cost == 0.0) return SBM_STOP_ZERO_COST;
    if (r->gradient_norm <= r->opt->gradient_tolerance) return SBM_STOP_GRADIENT_TOLERANCE;
    return SBM_STOP_NONE;
}

/* After an accepted step from cost to new_cost: relinearise unless a stop rule holds (the
 * function and parameter tolerances, zero cost, the iteration limit), then the gradient rule.
 * *stop is the reason, SBM_STOP_NONE to go on. */
sbm_status sbm__slam_accept(sbm__slam_run *r, int it, double new_cost, int small_step,
                            sbm_iteration_report *rep, sbm_stop_reason *stop)
{
    const double cost = r->cost;
    rep->accepted = 1;
    rep->cost = new_cost;
    r->cost = new_cost;
    *stop = SBM_STOP_NONE;
    if (cost - new_cost <= r->opt->function_tolerance * cost)
        *stop = SBM_STOP_FUNCTION_TOLERANCE;
    else if (new_cost == 0.0)
        *stop = SBM_STOP_ZERO_COST;
    else if (small_step)
        *stop = SBM_STOP_PARAMETER_TOLERANCE;
    else if (it >= r->opt->max_iterations)
        *stop = SBM_STOP_MAX_ITERATIONS;
    if (*stop != SBM_STOP_NONE) {
        r->moved = 1; /* the final gradient needs one more linearisation */
        return SBM_SUCCESS;
    }
    SBM__TRY(sbm__slam_run_linearize(r, rep));
    if (r->gradient_norm <= r->opt->gradient_tolerance) *stop = SBM_STOP_GRADIENT_TOLERANCE;
    return SBM_SUCCESS;
}

sbm_status sbm__slam_finish(sbm__slam_run *r, sbm_stop_reason stop)
{
    if (stop == SBM_STOP_NONE && r->n > 0) stop = SBM_STOP_MAX_ITERATIONS;
    if (r->moved) {
        sbm_iteration_report rep;
        memset(&rep, 0, sizeof rep);
        const double cost = r->cost;
        SBM__TRY(sbm__slam_run_linearize(r, &rep));
        r->cost = cost;
        r->summary->time_linearize += rep.time_linearize;
        r->summary->time_schur += rep.time_schur;
    }
    r->summary->stop_reason = stop;
    r->summary->final_gradient_norm = r->gradient_norm;
    return SBM_SUCCESS;
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
                          "solver; pose graphs use SBM_LINEAR_SPARSE_CHOLESKY, "
                          "SBM_LINEAR_DENSE_CHOLESKY or SBM_LINEAR_PCG");
    sbm_solver_summary own; /* the run always reports into one */
    if (!summary) summary = &own;
    memset(summary, 0, sizeof *summary);
    const double t_start = sbm__now(ctx, 1);
    sbm__slam_run run;
    sbm_status st = sbm__slam_run_init(ctx, graph, &opt, summary, &run);
    if (st == SBM_SUCCESS)
        st = opt.method == SBM_METHOD_GAUSS_NEWTON ? sbm__slam_gauss_newton(&run)
                                                   : sbm__slam_levenberg_marquardt(&run);
    summary->time_total = sbm__now(ctx, 1) - t_start;
    sbm__slam_run_free(&run);
    return st;
}
