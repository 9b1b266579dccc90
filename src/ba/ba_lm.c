/* SPDX-License-Identifier: BSD-3-Clause */
/* Levenberg-Marquardt for BAL problems on the reduced camera system, on the context's backend.
 *
 * The estimate lives in the context's memory, in two buffers: the current parameters and the
 * trial ones (current + step). An accepted step swaps them; a rejected one keeps the current
 * buffer as it was, so nothing has to be restored. The problem's parameters are written once,
 * at the end (the best estimate, also after a failure once the solve had started), or before
 * every callback with options->update_state_every_iteration.
 *
 * Each iteration: damp U and V (Marquardt: lambda times the clamped diagonal), form S and rhs
 * with the Schur plan (made once), solve S dc = rhs (dense Cholesky where S lives, the sparse
 * block Cholesky of S planned once and factored every iteration, PCG with block Jacobi on the
 * explicit S, or matrix-free PCG with the Schur-Jacobi blocks sbm_ba_schur_diagonal), the
 * back-substitution dp into the same step vector [dc; dp], and the cost at the trial
 * parameters (sbm__ba_cost_at, with options->loss). Only scalars come back to the host: the
 * costs, the predicted decrease, max |g|, the norms of the step and the parameters, PCG's dot
 * products and the words saying whether a factorisation failed.
 * The iterations are the library's Levenberg-Marquardt driver (src/solve/lm_driver.c: the
 * acceptance test, Nielsen's damping schedule and the stop rules, documented at
 * sbm_solver_default_options); this file gives it the operations on the reduced camera system.
 * A factorisation that fails (a block of V or the reduced system not positive definite) is a
 * rejected step. Only an accepted step relinearises. options->method is ignored: BA is
 * Levenberg-Marquardt only. */
#include "ba_internal.h"
#include "lm_driver.h"

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
    /* PCG's vectors, after a successful execute of the plan made from U and W */
    return SBM__INNER(ctx, "sbm_ba_schur_multiply",
                      sbm__ba_schur_multiply(ctx, o->plan, si.U, si.W, x, y));
}

/* ---------------------------------------------------------------------------------------- */
/* The solver's state                                                                       */
/* ---------------------------------------------------------------------------------------- */

typedef struct lm_state {
    sbm_ctx *ctx;
    const sbm_solver_options *opt;
    sbm_bal_problem *problem;
    int64_t n;              /* 9 * cameras: unknowns of the reduced system */
    int64_t nall;           /* 9 * cameras + 3 * points */
    sbm_linear_solver ls;   /* AUTO resolved */
    sbm_ba_system *sys;
    sbm_schur_plan *plan;
    sbm_cbc *S;             /* explicit S (NULL when matrix-free) */
    sbm_cbc *Sdiag;         /* matrix-free PCG: S's diagonal blocks (Schur-Jacobi) */
    sbm_cbc *Dinv;          /* PCG: inverses of S's diagonal blocks */
    sbm__symup ssym;        /* PCG: products with the upper-stored S */
    sbm_chol *chol;         /* sparse Cholesky of S, planned once */
    double *d;              /* context memory holding the four vectors below */
    double *d_x[2];         /* the parameters: current (d_x[cur]) and trial (nall each) */
    double *d_step;         /* [dc; dp] (nall) */
    double *d_rhs;          /* reduced rhs (n) */
    int cur;                /* which d_x holds the current estimate */
    int started;            /* 1: d_x[cur] holds the problem's parameters or better ones */
    sbm__forcing forcing;   /* PCG: the forcing rule's memory (opt->pcg_forcing) */
    lm_ops ops;
} lm_state;

static void lm_free(lm_state *s)
{
    sbm_ctx *ctx = s->ctx;
    sbm__free_with(&ctx->allocator, s->d);
    sbm__symup_free(&s->ssym);
    sbm_chol_destroy(s->chol);
    sbm_cbc_destroy(s->Dinv);
    sbm_cbc_destroy(s->Sdiag);
    sbm_cbc_destroy(s->S);
    sbm_schur_plan_destroy(s->plan);
    sbm_ba_system_destroy(s->sys);
}

/* AUTO above dense_max_dim, first from S's size (counted from W's pattern, before S is formed):
 * matrix-free PCG when S would hold more values than W and Y together. A PCG iteration reads S's
 * values twice in the explicit product, W's and Y's once each in the matrix-free one, and forming S
 * costs about as much again (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). */
#define AUTO_MATRIX_FREE_RATIO 1.0
/* Then, from the sparse Cholesky's symbolic analysis of S: the sparse Cholesky when its
 * factorisation costs at most this many flops per stored value of S, else PCG on the explicit S.
 * One PCG iteration reads S's values twice at memory speed, which on the CPU of the measurements
 * costs as much as ~20 factorisation flops per value
 * (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). The budget is a factorisation
 * worth ~100 PCG iterations. */
#define AUTO_SPARSE_FLOPS_PER_VALUE 2000.0

/* AUTO before the Schur plan: dense Cholesky while S is small; matrix-free PCG when S would be
 * much larger than W (cameras sharing points with most others). */
static sbm_status lm_choose_by_size(lm_state *s)
{
    if (s->ls != SBM_LINEAR_AUTO) return SBM_SUCCESS;
    if (s->n <= s->opt->dense_max_dim) {
        s->ls = SBM_LINEAR_DENSE_CHOLESKY;
        return SBM_SUCCESS;
    }
    int64_t bs = 0, bw = 0;
    SBM__TRY(sbm__ba_schur_blocks(s->ctx, s->sys, &bs, &bw));
    if (81.0 * (double)bs > AUTO_MATRIX_FREE_RATIO * 2.0 * 27.0 * (double)bw)
        s->ls = SBM_LINEAR_PCG_MATRIX_FREE;
    return SBM_SUCCESS;
}

/* AUTO after the Schur plan: the sparse Cholesky unless its symbolic analysis shows a factorisation
 * dearer than PCG; then PCG on the explicit S on the CPU, matrix-free PCG on a device, where
 * forming S every iteration and its symmetric product cost more than the products with W and Y
 * (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). The plan made is kept for the
 * sparse path. */
static sbm_status lm_choose_by_factor(lm_state *s)
{
    sbm_ctx *ctx = s->ctx;
    if (s->ls != SBM_LINEAR_AUTO) return SBM_SUCCESS;
    SBM__TRY(SBM__NESTED(ctx, sbm_chol_plan(ctx, s->S, NULL, &s->chol)));
    const double values = (double)s->S->nnzb * s->S->r * s->S->c;
    if (sbm_chol_get_info(s->chol).flops <= AUTO_SPARSE_FLOPS_PER_VALUE * values) {
        s->ls = SBM_LINEAR_SPARSE_CHOLESKY;
    } else {
        sbm_chol_destroy(s->chol);
        s->chol = NULL;
        s->ls = ctx->backend == SBM_BACKEND_CPU ? SBM_LINEAR_PCG : SBM_LINEAR_PCG_MATRIX_FREE;
    }
    return SBM_SUCCESS;
}

/* A linearisation at the current parameters; *t += its seconds, *gnorm = max |g|. */
static sbm_status lm_linearize(lm_state *s, double *t, double *gnorm)
{
    sbm_ctx *ctx = s->ctx;
    const double t0 = sbm__now(ctx, 1);
    const sbm_status st = sbm__ba_linearize_at(ctx, s->sys, s->d_x[s->cur]);
    *t += sbm__now(ctx, 1) - t0;
    if (st == SBM_SUCCESS) {
        *gnorm = sbm__ba_gradient_max(s->sys);
    }
    return st;
}

/* The vectors, the system with the problem's parameters uploaded and linearised, the Schur
 * plan and what the linear solver keeps from one iteration to the next. *t_lin: seconds of the
 * first linearisation; *gnorm its max |g|. */
static sbm_status lm_setup(lm_state *s, double *t_lin, double *gnorm)
{
    sbm_ctx *ctx = s->ctx;
    const int64_t n = s->n, nall = s->nall;
    SBM__TRY(SBM__NESTED(ctx, sbm_ba_system_create(ctx, s->problem, &s->sys)));
    sbm__ba_set_loss(s->sys, s->opt->loss);
    s->d = sbm__vec_alloc(ctx, 3 * nall + n + 1, "the solver's vectors");
    if (!s->d) return ctx->last_status;
    s->d_x[0] = s->d, s->d_x[1] = s->d + nall, s->d_step = s->d + 2 * nall;
    s->d_rhs = s->d + 3 * nall;
    SBM__TRY(sbm__ba_params_upload(ctx, s->sys, s->problem, s->d_x[0]));
    s->started = 1;
    SBM__TRY(lm_linearize(s, t_lin, gnorm));
    const sbm_ba_system_info si = sbm_ba_system_get_info(s->sys);
    SBM__TRY(lm_choose_by_size(s));
    const unsigned flags = s->ls == SBM_LINEAR_PCG_MATRIX_FREE ? SBM_SCHUR_MATRIX_FREE : 0u;
    /* U, V and W are the system's, which fit together (so below too) */
    SBM__TRY(SBM__INNER(ctx, "sbm_ba_schur_plan",
                        sbm__ba_schur_plan(ctx, si.U, si.V, si.W, flags, &s->plan,
                                           flags ? NULL : &s->S)));
    SBM__TRY(lm_choose_by_factor(s));
    if (s->ls == SBM_LINEAR_PCG_MATRIX_FREE && s->S) {
        /* AUTO went matrix-free after forming S's plan: a plan that never forms S */
        sbm_schur_plan_destroy(s->plan);
        sbm_cbc_destroy(s->S);
        s->plan = NULL, s->S = NULL;
        SBM__TRY(SBM__INNER(ctx, "sbm_ba_schur_plan",
                            sbm__ba_schur_plan(ctx, si.U, si.V, si.W, SBM_SCHUR_MATRIX_FREE,
                                               &s->plan, NULL)));
    }
    s->ops.sys = s->sys, s->ops.plan = s->plan, s->ops.ssym = &s->ssym;
    switch (s->ls) {
    case SBM_LINEAR_PCG:
        SBM__TRY(sbm__symup_init(ctx, s->S, &s->ssym));
        return SBM__INNER(ctx, "sbm_cbc_copy", sbm__cbc_copy(ctx, s->ssym.D, &s->Dinv));
    case SBM_LINEAR_PCG_MATRIX_FREE:
        SBM__TRY(sbm__bdiag_pattern_create(ctx, n / 9, 9, &s->Sdiag));
        return SBM__INNER(ctx, "sbm_cbc_copy", sbm__cbc_copy(ctx, s->Sdiag, &s->Dinv));
    case SBM_LINEAR_SPARSE_CHOLESKY:
        /* S's pattern is the Schur plan's: one symbolic analysis for the whole solve */
        if (s->chol) return SBM_SUCCESS;
        return SBM__NESTED(ctx, sbm_chol_plan(ctx, s->S, NULL, &s->chol));
    default: return SBM_SUCCESS;
    }
}

/* " (block column J of S is camera J as numbered in the BAL file)" after a failed
 * factorisation's message. */
static void name_camera(sbm_ctx *ctx, int64_t column)
{
    sbm__ba_append_message(ctx, " (block column %" PRId64 " of S is camera %" PRId64
                                " as numbered in the BAL file)",
                           column, column);
}

/* S dc = rhs at the current damping into the step's first n entries. A factorisation that
 * fails sets *failed (the message, naming the camera, stays in the context); other failures
 * return. */
static sbm_status lm_solve_reduced(lm_state *s, sbm_iteration_report *rep, int *failed)
{
    sbm_ctx *ctx = s->ctx;
    const sbm_solver_options *opt = s->opt;
    const int64_t n = s->n;
    const sbm_ba_system_info si = sbm_ba_system_get_info(s->sys);
    double *d_dc = s->d_step;
    int64_t col = -1;
    sbm_status st = SBM_SUCCESS;
    /* PCG's tolerance for this step: fixed, or the forcing rule's at this gradient */
    const double tol = s->ls == SBM_LINEAR_PCG || s->ls == SBM_LINEAR_PCG_MATRIX_FREE
                           ? sbm__pcg_forcing_tolerance(opt, &s->forcing, rep->gradient_norm)
                           : opt->pcg_tolerance;
    switch (s->ls) {
    case SBM_LINEAR_DENSE_CHOLESKY:
        st = sbm__dense_spd_solve_device(ctx, s->S, s->d_rhs, d_dc, &col);
        if (st == SBM_ERR_NOT_POSITIVE_DEFINITE) name_camera(ctx, col / 9);
        break;
    case SBM_LINEAR_SPARSE_CHOLESKY:
        /* S carries the damping already (through U and V); chol was planned from S, and the
         * step's first n entries lie apart from the rhs */
        st = SBM__INNER(ctx, "sbm_chol_factor",
                        sbm__chol_factor(ctx, s->chol, s->S, SBM_DAMPING_NONE, 0.0));
        if (st == SBM_ERR_NOT_POSITIVE_DEFINITE)
            name_camera(ctx, sbm_chol_get_info(s->chol).failed_column);
        if (st == SBM_SUCCESS)
            st = SBM__INNER(ctx, "sbm_chol_solve",
                            sbm__chol_solve(ctx, s->chol, 1, s->d_rhs, n > 0 ? n : 1, d_dc,
                                            n > 0 ? n : 1));
        break;
    case SBM_LINEAR_PCG:
        st = sbm__symup_refresh(ctx, &s->ssym);
        if (st == SBM_SUCCESS) st = sbm__symup_diag_inverse(ctx, &s->ssym, s->Dinv);
        if (st == SBM_SUCCESS)
            st = sbm__pcg(ctx, n, apply_explicit, &s->ops, sbm__bdiag_apply, s->Dinv, s->d_rhs,
                          d_dc, opt->pcg_max_iterations, tol,
                          &rep->linear_iterations, &rep->linear_residual);
        break;
    default:
        /* Sdiag: every diagonal block of S; Dinv: a copy of it */
        st = SBM__INNER(ctx, "sbm_ba_schur_diagonal",
                        sbm__ba_schur_diagonal(ctx, s->plan, si.U, si.W, s->Sdiag));
        if (st == SBM_SUCCESS)
            st = SBM__INNER(ctx, "sbm_bdiag_inverse", sbm__bdiag_inverse(ctx, s->Sdiag, s->Dinv));
        if (st == SBM_SUCCESS)
            st = sbm__pcg(ctx, n, apply_matrix_free, &s->ops, sbm__bdiag_apply, s->Dinv,
                          s->d_rhs, d_dc, opt->pcg_max_iterations, tol,
                          &rep->linear_iterations, &rep->linear_residual);
        break;
    }
    /* PCG stopped by its cap, not by its tolerance (nor by a breakdown) */
    rep->linear_capped = rep->linear_iterations >= opt->pcg_max_iterations &&
                         !(rep->linear_residual <= tol);
    if (st == SBM_ERR_NOT_POSITIVE_DEFINITE) {
        *failed = 1;
        return SBM_SUCCESS;
    }
    return st;
}

/* The Schur step at damping lambda, the reduced solve and the back-substitution into
 * [dc; dp] (its seconds into rep->time_update). SBM_ERR_NOT_POSITIVE_DEFINITE when a
 * factorisation failed (the message, naming the camera or point, stays in the context). */
static sbm_status lm_solve_step(void *data, int damped, double lambda, sbm_iteration_report *rep)
{
    lm_state *s = data;
    sbm_ctx *ctx = s->ctx;
    int failed = 0;
    double ts = sbm__now(ctx, 1);
    SBM__TRY(SBM__NESTED(ctx, sbm_ba_set_damping(ctx, s->sys, damped ? lambda : 0.0)));
    const sbm_ba_system_info si = sbm_ba_system_get_info(s->sys);
    /* the plan was made from the system's U, V and W, and S by the plan */
    sbm_status st = SBM__INNER(ctx, "sbm_ba_schur_execute",
                               sbm__ba_schur_execute(ctx, s->plan, si.U, si.V, si.W, si.gc,
                                                     si.gp, s->S, s->d_rhs));
    rep->time_schur = sbm__now(ctx, 1) - ts;
    if (st == SBM_ERR_NOT_POSITIVE_DEFINITE) {
        const int64_t j = sbm__ba_npd_point(s->sys);
        if (j >= 0)
            sbm__ba_append_message(ctx, " (point %" PRId64 " as numbered in the BAL file)", j);
        return st;
    }
    SBM__TRY(st);
    ts = sbm__now(ctx, 1);
    st = lm_solve_reduced(s, rep, &failed);
    rep->time_solve = sbm__now(ctx, 1) - ts;
    SBM__TRY(st);
    if (failed) return SBM_ERR_NOT_POSITIVE_DEFINITE;
    ts = sbm__now(ctx, 1);
    /* after a successful execute and reduced solve; dc and dp are the step's two parts */
    st = SBM__INNER(ctx, "sbm_ba_back_substitute",
                    sbm__ba_back_substitute(ctx, s->plan, si.W, si.gp, s->d_step,
                                            s->d_step + s->n));
    rep->time_update = sbm__now(ctx, 1) - ts;
    return st;
}

/* The trial parameters current + alpha [dc; dp] (in the other buffer) and their cost. */
static sbm_status lm_trial_cost(void *data, double alpha, double *cost)
{
    lm_state *s = data;
    sbm_ctx *ctx = s->ctx;
    double *trial = s->d_x[1 - s->cur];
    SBM__TRY(sbm__vec_copy(ctx, trial, s->d_x[s->cur], s->nall));
    SBM__TRY(sbm__vec_axpy(ctx, s->nall, alpha, s->d_step, trial));
    return sbm__ba_cost_at(ctx, s->sys, trial, cost);
}

/* The predicted decrease of the damped model 0.5 dx^T (lambda D dx + g). */
static sbm_status lm_predicted(void *data, double lambda, double *predicted)
{
    lm_state *s = data;
    return sbm__ba_predicted_decrease(s->ctx, s->sys, s->d_step, lambda, predicted);
}

/* |alpha dx| and |x| (|x| serves the parameter tolerance only: with tol 0 the rule is
 * |dx| <= 0 anyway). Scalars only come back. */
static sbm_status lm_norms(void *data, double alpha, double *step_norm, double *x_norm)
{
    lm_state *s = data;
    *x_norm = 0.0;
    if (s->opt->parameter_tolerance > 0.0)
        SBM__TRY(sbm__vec_nrm2(s->ctx, s->nall, s->d_x[s->cur], x_norm));
    SBM__TRY(sbm__vec_nrm2(s->ctx, s->nall, s->d_step, step_norm));
    *step_norm *= fabs(alpha);
    return SBM_SUCCESS;
}

/* A linearisation at the current parameters for the driver: its cost is bitwise
 * sbm__ba_cost_at's at the same parameters (the contract). */
static sbm_status lm_relinearize(void *data, sbm_iteration_report *rep, double *cost,
                                 double *gnorm)
{
    lm_state *s = data;
    SBM__TRY(lm_linearize(s, &rep->time_linearize, gnorm));
    *cost = sbm_ba_system_get_info(s->sys).cost;
    return SBM_SUCCESS;
}

/* An accepted step: the trial buffer is the estimate now. */
static void lm_accept(void *data)
{
    lm_state *s = data;
    s->cur = 1 - s->cur;
}

/* The estimate into the problem (before a callback). */
static sbm_status lm_publish(void *data)
{
    lm_state *s = data;
    return sbm__ba_params_download(s->ctx, s->sys, s->d_x[s->cur], s->problem);
}

/* ---------------------------------------------------------------------------------------- */
/* The solver                                                                               */
/* ---------------------------------------------------------------------------------------- */

/* Iterations from the linearised start by the library's driver (src/solve/lm_driver.c). */
static sbm_status lm_iterate(lm_state *s, double gnorm, sbm_solver_summary *sum)
{
    const sbm__lm_ops ops = {s,         lm_relinearize, lm_solve_step, lm_trial_cost,
                             lm_predicted, lm_norms,    lm_accept,     lm_publish};
    return sbm__lm_drive(s->ctx, s->opt, &ops, s->nall, sum->initial_cost, gnorm, sum);
}

/* The end of a solve: the estimate into the problem, also after a failure once the parameters
 * were uploaded (the failure's status and message stay). */
static sbm_status lm_finish(lm_state *s, sbm_status st)
{
    sbm_ctx *ctx = s->ctx;
    if (!s->started) return st;
    if (st == SBM_SUCCESS) return sbm__ba_params_download(ctx, s->sys, s->d_x[s->cur], s->problem);
    char message[SBM__MSG_SIZE];
    memcpy(message, ctx->message, sizeof message);
    (void)sbm__ba_params_download(ctx, s->sys, s->d_x[s->cur], s->problem);
    memcpy(ctx->message, message, sizeof message);
    ctx->last_status = st;
    return st;
}

sbm_status sbm_ba_solve(sbm_ctx *ctx, sbm_bal_problem *problem, const sbm_solver_options *options,
                        sbm_solver_summary *summary)
{
    SBM__ENTER(ctx, "sbm_ba_solve");
    if (!problem) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument problem is NULL");
    sbm_solver_options opt = options ? *options : sbm_solver_default_options();
    SBM__TRY(sbm__check_solver_options(ctx, &opt));
    opt.method = SBM_METHOD_LEVENBERG_MARQUARDT; /* the one method BA offers */
    if (summary) memset(summary, 0, sizeof *summary);

    lm_state s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx, s.opt = &opt, s.problem = problem;
    const sbm_bal_info pi = sbm_bal_get_info(problem);
    s.n = 9 * pi.cameras, s.nall = s.n + 3 * pi.points;
    s.ls = opt.linear_solver;
    sbm_solver_summary sum;
    memset(&sum, 0, sizeof sum);
    const double t_start = sbm__now(ctx, 1);
    double gnorm = 0.0;
    sbm_status st = lm_setup(&s, &sum.time_linearize, &gnorm);
    sum.linear_solver = s.ls;
    /* the linearisation's cost is bitwise sbm__ba_cost_at's at the same parameters (the
     * contract), so a step that moves no parameter never looks like a decrease */
    if (st == SBM_SUCCESS) {
        sum.initial_cost = sum.final_cost = sbm_ba_system_get_info(s.sys).cost;
        st = sbm__bal_cost_check(ctx, problem, sum.initial_cost); /* inf: no step is judged */
    }
    if (st == SBM_SUCCESS) st = lm_iterate(&s, gnorm, &sum);
    st = lm_finish(&s, st);
    sum.time_total = sbm__now(ctx, 1) - t_start;
    if (summary) *summary = sum;
    lm_free(&s);
    return st;
}
