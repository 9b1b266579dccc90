/* SPDX-License-Identifier: BSD-3-Clause */
/* One solve of a pose graph: its state, the linear solve of (Lambda + damping) dx = -b, the
 * operations the library's nonlinear driver (src/solve/lm_driver.c: Levenberg-Marquardt with
 * Marquardt's diagonal damping, or Gauss-Newton with a line search; the acceptance test, the
 * damping schedule and the stop rules are the driver's) works with, and sbm_slam_solve.
 *
 * Everything an iteration touches stays in the context's memory: the poses (the system's
 * current and trial buffers, slam.c), Lambda, b, the damping scale D, the step dx. What
 * crosses to the host are scalars of 8 bytes: the cost, max |b|, |x|, |dx|, dx^T (lambda D dx
 * - b), the factorisation's failed column and PCG's dots; the graph's poses are written back
 * at the end of the solve (and before every callback with options->update_state_every_iteration).
 *
 * The linear solvers:
 *   - sparse Cholesky (the default; AUTO resolves to it): sbm_chol_plan once for Lambda's
 *     pattern, sbm_chol_factor with the damping every solve, never planned again;
 *   - dense Cholesky (where Lambda lives: LAPACKE on the CPU backend, cuSOLVER on CUDA) and PCG
 *     with block Jacobi: on a copy of Lambda whose diagonal carries the damping, made in the
 *     context's memory (the backend's slam_diag_add).
 * The damping scale D (SBM_DAMPING_DIAGONAL, Marquardt's): Lambda's diagonal clamped to
 * [1e-6, 1e32], the rule the sparse Cholesky applies (sbm_blk_damp_scale, sbm_damp.h). A matrix that is not
 * positive definite is reported by the vertex id of the file and the free vertex. */
#include "slam_internal.h"
#include "lm_driver.h"
#include "solve_kernels.h"

#include <inttypes.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* y = (Lambda + damping) x for PCG (vectors in the context's memory) */
static sbm_status apply_damped(sbm_ctx *ctx, void *data, const double *x, double *y)
{
    return sbm__symup_multiply(ctx, (sbm__symup *)data, x, y);
}

void sbm__slam_run_free(sbm__slam_run *r)
{
    if (!r->ctx) return;
    sbm_ctx *ctx = r->ctx;
    if (r->free_vertex) sbm__host_free(ctx, r->free_vertex);
    double *dev[] = {r->d_rhs, r->d_x, r->d_diag};
    for (size_t k = 0; k < sizeof dev / sizeof dev[0]; k++) sbm__free_with(&ctx->allocator, dev[k]);
    sbm__free_with(&ctx->allocator, r->diag_pos);
    sbm__symup_free(&r->lsym);
    sbm_cbc_destroy(r->Dinv);
    sbm_cbc_destroy(r->damped);
    sbm_chol_destroy(r->chol);
    sbm_slam_system_destroy(r->sys);
    memset(r, 0, sizeof *r);
}

/* Where each free vertex's diagonal block sits in Lambda's values (-1 if none), into the
 * context's memory. */
static sbm_status find_diagonal(sbm__slam_run *r)
{
    sbm_ctx *ctx = r->ctx;
    const sbm_cbc *L = r->si.Lambda;
    const int64_t nf = r->si.free_vertices;
    const int64_t *cp;
    const int32_t *ri;
    int64_t *pos = sbm__host_alloc(ctx, (size_t)(nf + 1) * sizeof(int64_t), "diagonal blocks");
    if (!pos) return ctx->last_status;
    sbm_status st = sbm__cbc_pattern_to_host(ctx, L, &cp, &ri);
    if (st == SBM_SUCCESS) {
        const int64_t bs = (int64_t)L->r * L->r;
        for (int64_t j = 0; j < L->nbc; j++) {
            pos[j] = -1;
            for (int64_t k = cp[j]; k < cp[j + 1]; k++)
                if (ri[k] == j) pos[j] = k * bs;
        }
        sbm__cbc_pattern_release(ctx, L, cp, ri);
        if (nf > 0) st = ctx->ops->copy(ctx, r->diag_pos, pos, (size_t)nf * sizeof(int64_t), 0);
    }
    sbm__host_free(ctx, pos);
    return st;
}

/* The vectors of a run; the copy of Lambda and PCG's state; the sparse Cholesky's plan. */
static sbm_status setup_linear(sbm__slam_run *r)
{
    sbm_ctx *ctx = r->ctx;
    const int64_t nf = r->si.free_vertices, n = r->n;
    r->free_vertex = sbm__host_alloc(ctx, (size_t)(nf + 1) * sizeof(int64_t), "free vertices");
    r->diag_pos = r->free_vertex ? sbm__alloc(ctx, (size_t)(nf + 1) * sizeof(int64_t),
                                              "diagonal blocks") : NULL;
    r->d_rhs = r->diag_pos ? sbm__vec_alloc(ctx, n + 1, "rhs") : NULL;
    r->d_x = r->d_rhs ? sbm__vec_alloc(ctx, n + 1, "step") : NULL;
    r->d_diag = r->d_x ? sbm__vec_alloc(ctx, n + 1, "damping scale") : NULL;
    if (!r->d_diag) return ctx->last_status;
    for (int64_t v = 0, j = 0; v < r->gi.vertices; v++)
        if (!r->gi.is_fixed[v]) r->free_vertex[j++] = v;
    SBM__TRY(find_diagonal(r));
    if (n == 0) return SBM_SUCCESS;
    if (r->ls == SBM_LINEAR_SPARSE_CHOLESKY)
        return SBM__NESTED(ctx, sbm_chol_plan(ctx, r->si.Lambda, NULL, &r->chol));
    SBM__TRY(SBM__INNER(ctx, "sbm_cbc_copy", sbm__cbc_copy(ctx, r->si.Lambda, &r->damped)));
    if (r->ls != SBM_LINEAR_PCG) return SBM_SUCCESS;
    SBM__TRY(sbm__symup_init(ctx, r->damped, &r->lsym));
    return SBM__INNER(ctx, "sbm_cbc_copy", sbm__cbc_copy(ctx, r->lsym.D, &r->Dinv));
}

sbm_status sbm__slam_run_init(sbm_ctx *ctx, sbm_g2o_graph *graph, const sbm_solver_options *opt,
                              sbm_solver_summary *summary, sbm__slam_run *r)
{
    memset(r, 0, sizeof *r);
    r->ctx = ctx, r->graph = graph, r->opt = opt, r->summary = summary;
    r->gi = sbm__g2o_solver_info(graph);
    SBM__TRY(SBM__NESTED(ctx, sbm_slam_system_create(ctx, graph, &r->sys)));
    SBM__TRY(sbm__slam_system_set_loss(ctx, r->sys, &opt->loss));
    /* checks the poses, uploads them and linearises */
    SBM__TRY(SBM__NESTED(ctx, sbm_slam_linearize(ctx, r->sys, graph)));
    sbm_iteration_report rep;
    memset(&rep, 0, sizeof rep);
    r->si = sbm_slam_system_get_info(r->sys);
    r->n = r->si.free_vertices * r->si.error_dim;
    r->ls = opt->linear_solver == SBM_LINEAR_AUTO ? SBM_LINEAR_SPARSE_CHOLESKY : opt->linear_solver;
    SBM__TRY(setup_linear(r));
    SBM__TRY(sbm__slam_run_linearize(r, &rep, 0));
    SBM__TRY(sbm__g2o_cost_check(ctx, graph, r->cost)); /* inf: no step could be judged */
    summary->initial_cost = summary->final_cost = r->cost;
    summary->linear_solver = r->ls;
    summary->time_linearize = rep.time_linearize;
    summary->time_schur = rep.time_schur;
    summary->final_gradient_norm = r->gradient_norm;
    return SBM_SUCCESS;
}

sbm_status sbm__slam_run_linearize(sbm__slam_run *r, sbm_iteration_report *rep, int again)
{
    sbm_ctx *ctx = r->ctx;
    if (again) SBM__TRY(sbm__slam_linearize_current(ctx, r->sys));
    sbm__slam_system_times(r->sys, &rep->time_linearize, &rep->time_schur);
    r->si = sbm_slam_system_get_info(r->sys);
    r->cost = 0.5 * r->si.chi2;
    const double t0 = sbm__now(ctx, 0);
    SBM__TRY(sbm__vec_amax(ctx, r->n, r->si.b, &r->gradient_norm));
    SBM__TRY(sbm__slam_pose_norm(ctx, r->sys, &r->x_norm));
    /* the damping scale: Lambda's diagonal, clamped */
    SBM__TRY(sbm__slam_kernels_of(ctx)->slam_diag_get(ctx, r->si.free_vertices, r->si.error_dim,
                                                      r->diag_pos, r->si.Lambda->values,
                                                      r->d_diag));
    rep->time_schur += sbm__now(ctx, 1) - t0;
    r->damped_stale = 1;
    return SBM_SUCCESS;
}

static sbm_status not_positive_definite(sbm__slam_run *r, sbm_damping damping, double lambda,
                                        int64_t j, const char *how);

/* The copy of Lambda with the damping on its diagonal (dense Cholesky, PCG), in the context's
 * memory: copied whole after a linearisation, only its diagonal rewritten for a new lambda
 * (SBM_DAMPING_NONE: lambda 0). For PCG also the diagonal blocks of its block Jacobi: gathered
 * by the same op when every column has one, else sbm__symup_refresh. A damped diagonal that
 * overflows is reported like a failed pivot (SBM_ERR_NOT_POSITIVE_DEFINITE), as the sparse
 * Cholesky does. */
static sbm_status make_damped(sbm__slam_run *r, sbm_damping damping, double lambda)
{
    sbm_ctx *ctx = r->ctx;
    const int d = r->si.error_dim;
    if (r->damped_stale)
        SBM__TRY(sbm__vec_copy(ctx, r->damped->values, r->si.Lambda->values,
                               r->si.Lambda->nnzb * d * d));
    r->damped_stale = 0;
    const int pcg = r->ls == SBM_LINEAR_PCG && !r->lsym.block_diagonal;
    double *blocks = pcg && r->lsym.complete ? r->lsym.D->values : NULL;
    int64_t bad = -1;
    SBM__TRY(sbm__slam_kernels_of(ctx)->slam_diag_add(
        ctx, r->si.free_vertices, d, r->diag_pos, damping == SBM_DAMPING_NONE ? 0.0 : lambda,
        damping == SBM_DAMPING_DIAGONAL ? r->d_diag : NULL, r->si.Lambda->values,
        r->damped->values, blocks, &bad));
    if (bad >= 0 && damping != SBM_DAMPING_NONE)
        return not_positive_definite(r, damping, lambda, bad, "its damped diagonal overflows");
    if (pcg && !blocks) SBM__TRY(sbm__symup_refresh(ctx, &r->lsym));
    return SBM_SUCCESS;
}

/* The first free vertex whose damped diagonal block is not positive definite (the block
 * Jacobi preconditioner failed), or -1; on the failure path only, it reads the damped copy on
 * the host. */
static int64_t first_indefinite_block(const sbm__slam_run *r)
{
    const int d = r->si.error_dim;
    const int64_t nvals = r->damped->nnzb * d * d, nf = r->si.free_vertices;
    double *dv = sbm__host_alloc(r->ctx, (size_t)(nvals + 1) * sizeof(double), "Lambda values");
    int64_t *pos = dv ? sbm__host_alloc(r->ctx, (size_t)(nf + 1) * sizeof(int64_t), "diagonal")
                      : NULL;
    int64_t found = -1;
    if (pos && sbm__vec_download(r->ctx, dv, r->damped->values, nvals) == SBM_SUCCESS &&
        r->ctx->ops->copy(r->ctx, pos, r->diag_pos, (size_t)nf * sizeof(int64_t), 1) ==
            SBM_SUCCESS)
        for (int64_t j = 0; j < nf && found < 0; j++) {
            double L[36];
            if (pos[j] >= 0) memcpy(L, dv + pos[j], (size_t)(d * d) * sizeof(double));
            if (pos[j] < 0 || LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', d, L, d) != 0) found = j;
        }
    if (pos) sbm__host_free(r->ctx, pos);
    if (dv) sbm__host_free(r->ctx, dv);
    return found;
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

/* The dense Cholesky where the damped copy lives (sbm__dense_spd_solve_device: LAPACKE on the
 * CPU backend, cuSOLVER on CUDA; only the failed column crosses to the host). */
static sbm_status solve_dense(sbm__slam_run *r, sbm_damping damping, double lambda)
{
    int64_t failed = -1;
    SBM__TRY(make_damped(r, damping, lambda));
    const sbm_status st = sbm__dense_spd_solve_device(r->ctx, r->damped, r->d_rhs, r->d_x, &failed);
    if (st == SBM_ERR_NOT_POSITIVE_DEFINITE)
        return not_positive_definite(r, damping, lambda, failed / r->si.error_dim,
                                     "dense Cholesky");
    return st;
}

/* |dx| into r->dx_norm; a step with an entry that is not finite is reported as a matrix that
 * is not positive definite at that entry's vertex (looked for on the host, on that path only). */
static sbm_status check_step(sbm__slam_run *r, sbm_damping damping, double lambda)
{
    sbm_ctx *ctx = r->ctx;
    SBM__TRY(sbm__vec_nrm2(ctx, r->n, r->d_x, &r->dx_norm));
    if (isfinite(r->dx_norm)) return SBM_SUCCESS;
    double *h_dx = sbm__host_alloc(ctx, (size_t)(r->n + 1) * sizeof(double), "step");
    if (!h_dx) return ctx->last_status;
    sbm_status st = sbm__vec_download(ctx, h_dx, r->d_x, r->n);
    int64_t k = 0;
    while (st == SBM_SUCCESS && k < r->n && isfinite(h_dx[k])) k++;
    sbm__host_free(ctx, h_dx);
    SBM__TRY(st);
    if (k == r->n) return SBM_SUCCESS; /* finite entries whose norm overflows */
    return not_positive_definite(r, damping, lambda, k / r->si.error_dim,
                                 "the step is not finite");
}

sbm_status sbm__slam_run_solve(sbm__slam_run *r, sbm_damping damping, double lambda,
                               sbm_iteration_report *rep)
{
    sbm_ctx *ctx = r->ctx;
    const int64_t n = r->n;
    const double ts = sbm__now(ctx, 1);
    sbm_status st = SBM_SUCCESS;
    r->dx_norm = 0.0;
    /* -b where b lives */
    SBM__TRY(sbm__vec_copy(ctx, r->d_rhs, r->si.b, n));
    SBM__TRY(sbm__vec_scale(ctx, n, -1.0, r->d_rhs));
    if (r->ls == SBM_LINEAR_SPARSE_CHOLESKY) {
        /* chol was planned from Lambda (n > 0); the solvers pass a damping and a finite
         * lambda >= 0 (SLAM's LM stops before lambda passes its cap) */
        st = SBM__INNER(ctx, "sbm_chol_factor",
                        sbm__chol_factor(ctx, r->chol, r->si.Lambda, damping, lambda));
        if (st == SBM_ERR_NOT_POSITIVE_DEFINITE)
            st = not_positive_definite(r, damping, lambda,
                                       sbm_chol_get_info(r->chol).failed_column,
                                       "sparse Cholesky");
        if (st == SBM_SUCCESS)
            st = SBM__INNER(ctx, "sbm_chol_solve",
                            sbm__chol_solve(ctx, r->chol, 1, r->d_rhs, n, r->d_x, n));
    } else if (r->ls == SBM_LINEAR_DENSE_CHOLESKY) {
        st = solve_dense(r, damping, lambda);
    } else {
        /* PCG where Lambda lives */
        st = make_damped(r, damping, lambda);
        if (st == SBM_SUCCESS) {
            st = sbm__symup_diag_inverse(ctx, &r->lsym, r->Dinv);
            if (st == SBM_ERR_NOT_POSITIVE_DEFINITE)
                st = not_positive_definite(r, damping, lambda, first_indefinite_block(r),
                                           "its diagonal block, PCG's block Jacobi");
        }
        /* fixed, or the forcing rule's tolerance at this gradient */
        const double tol = sbm__pcg_forcing_tolerance(r->opt, &r->forcing, r->gradient_norm);
        if (st == SBM_SUCCESS)
            st = sbm__pcg(ctx, n, apply_damped, &r->lsym, sbm__bdiag_apply, r->Dinv,
                          r->d_rhs, r->d_x, r->opt->pcg_max_iterations, tol,
                          &rep->linear_iterations, &rep->linear_residual);
        rep->linear_capped = st == SBM_SUCCESS &&
                             rep->linear_iterations >= r->opt->pcg_max_iterations &&
                             rep->linear_residual > tol;
    }
    if (st == SBM_SUCCESS) st = check_step(r, damping, lambda);
    rep->time_solve = sbm__now(ctx, 1) - ts;
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* The operations of the library's driver (src/solve/lm_driver.c)                           */
/* ---------------------------------------------------------------------------------------- */

static sbm_status op_linearize(void *data, sbm_iteration_report *rep, double *cost,
                               double *gradient_norm)
{
    sbm__slam_run *r = data;
    SBM__TRY(sbm__slam_run_linearize(r, rep, 1));
    *cost = r->cost;
    *gradient_norm = r->gradient_norm;
    return SBM_SUCCESS;
}

/* LM: Lambda + lambda D (Marquardt's diagonal); GN: Lambda */
static sbm_status op_solve_step(void *data, int damped, double lambda, sbm_iteration_report *rep)
{
    return sbm__slam_run_solve(data, damped ? SBM_DAMPING_DIAGONAL : SBM_DAMPING_NONE, lambda,
                               rep);
}

static sbm_status op_trial_cost(void *data, double alpha, double *cost)
{
    sbm__slam_run *r = data;
    return sbm__slam_try(r->ctx, r->sys, alpha, r->d_x, cost);
}

static sbm_status op_predicted(void *data, double lambda, double *predicted)
{
    sbm__slam_run *r = data;
    sbm_ctx *ctx = r->ctx;
    /* 0.5 dx^T (lambda D dx - b): b is the gradient J^T Omega e */
    return sbm__solve_kernels_of(ctx)->lm_predicted(ctx, r->n, lambda, r->d_diag, -1.0, r->si.b,
                                                    r->d_x, predicted);
}

/* |alpha dx| from the last solve's |dx|; |x| of the last linearisation (the current poses) */
static sbm_status op_norms(void *data, double alpha, double *step_norm, double *x_norm)
{
    const sbm__slam_run *r = data;
    *step_norm = fabs(alpha) * r->dx_norm;
    *x_norm = r->x_norm;
    return SBM_SUCCESS;
}

static void op_accept(void *data)
{
    sbm__slam_take_trial(((sbm__slam_run *)data)->sys);
}

static sbm_status op_publish(void *data)
{
    sbm__slam_run *r = data;
    return sbm__slam_poses_download(r->ctx, r->sys, r->gi.poses);
}

sbm_status sbm__slam_run_iterate(sbm__slam_run *r)
{
    const sbm__lm_ops ops = {r,            op_linearize, op_solve_step, op_trial_cost,
                             op_predicted, op_norms,     op_accept,     op_publish};
    return sbm__lm_drive(r->ctx, r->opt, &ops, r->n, r->cost, r->gradient_norm, r->summary);
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
    if (st == SBM_SUCCESS) {
        st = sbm__slam_run_iterate(&run);
        /* the poses lived in the context's memory: the graph gets them where the solve left
         * them (also after an error, as the iterations accepted them) */
        const sbm_status wb = sbm__slam_poses_download(ctx, run.sys, run.gi.poses);
        if (st == SBM_SUCCESS) st = wb;
    }
    summary->time_total = sbm__now(ctx, 1) - t_start;
    sbm__slam_run_free(&run);
    return st;
}
