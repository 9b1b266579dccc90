/* SPDX-License-Identifier: BSD-3-Clause */
/* Levenberg-Marquardt over a group (sbm_ba_solve_dist): the rules of src/ba/ba_lm.c (the same
 * acceptance test, lambda updates, stop rules and their order) with matrix-free PCG on the
 * reduced camera system, whose vectors are split by camera over the ranks (dist_ba.c). The
 * loop runs in this process once for all its local ranks; every decision depends only on
 * reduced scalars, which are the same bits on every rank, so under MPI every process takes the
 * same path. The PCG is sbm__pcg's (src/solve/solvers.c) step for step; the dot products are
 * each rank's partial sums reduced in rank order, which is where the costs differ from the
 * one-context solver's (by rounding). */
#include "dist_ba.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

sbm_dist_options sbm_dist_default_options(void)
{
    sbm_dist_options o;
    memset(&o, 0, sizeof o);
    o.partition = SBM_PARTITION_GRAPH;
    return o;
}

/* Per local rank partial dot products of nd pairs (a[d], b[d]: 0 r, 1 z, 2 p, 3 q, 4 rhs, 5 dc),
 * reduced. */
static sbm_status dots(dist_state *s, int nd, const int *a, const int *b, double *out)
{
    double *v = malloc((size_t)s->nl * (size_t)nd * sizeof(double));
    if (!v) return sbm__error(s->rk[0].ctx, SBM_ERR_OUT_OF_MEMORY, "out of host memory");
    sbm_status st = SBM_SUCCESS;
    for (int l = 0; l < s->nl && st == SBM_SUCCESS; l++) {
        dist_rank *k = &s->rk[l];
        double *const vec[6] = {k->r, k->z, k->p, k->q, k->rhs, k->step};
        for (int d = 0; d < nd && st == SBM_SUCCESS; d++)
            st = sbm__vec_dot(k->ctx, k->n, vec[a[d]], vec[b[d]], &v[l * nd + d]);
    }
    if (st == SBM_SUCCESS) st = sbm__dist_reduce(s, v, out, nd, SBM__REDUCE_SUM);
    free(v);
    return st;
}

/* z = Dinv r on every rank. */
static sbm_status precondition(dist_state *s)
{
    for (int l = 0; l < s->nl; l++) {
        dist_rank *k = &s->rk[l];
        SBM__TRY(sbm__bdiag_apply(k->ctx, k->Dinv, k->r, k->z));
    }
    return SBM_SUCCESS;
}

enum { V_R = 0, V_Z = 1, V_P = 2, V_Q = 3, V_B = 4, V_X = 5 };

/* S dc = rhs by PCG with the Schur-Jacobi blocks, dc the step's first n entries of each rank. */
static sbm_status dist_pcg(dist_state *s, double tol, int *iterations, double *rel_residual)
{
    const int max_it = s->opt->pcg_max_iterations;
    *iterations = 0;
    *rel_residual = 0.0;
    double bb = 0.0, rz = 0.0, out[2];
    for (int l = 0; l < s->nl; l++) SBM__TRY(sbm__vec_zero(s->rk[l].ctx, s->rk[l].step, s->rk[l].n));
    SBM__TRY(dots(s, 1, (const int[]){V_B}, (const int[]){V_B}, &bb));
    const double bnorm = sqrt(bb);
    if (bnorm == 0.0) return SBM_SUCCESS;
    for (int l = 0; l < s->nl; l++) SBM__TRY(sbm__vec_copy(s->rk[l].ctx, s->rk[l].r, s->rk[l].rhs, s->rk[l].n));
    SBM__TRY(precondition(s));
    for (int l = 0; l < s->nl; l++) SBM__TRY(sbm__vec_copy(s->rk[l].ctx, s->rk[l].p, s->rk[l].z, s->rk[l].n));
    SBM__TRY(dots(s, 1, (const int[]){V_R}, (const int[]){V_Z}, &rz));
    const double bytes0 = s->comm->bytes_sent;
    double rnorm = bnorm;
    int it = 0;
    while (it < max_it) {
        double pq = 0.0;
        SBM__TRY(sbm__dist_apply(s));
        it++;
        SBM__TRY(dots(s, 1, (const int[]){V_P}, (const int[]){V_Q}, &pq));
        if (!(pq > 0.0)) break; /* breakdown: S is not positive definite along p */
        const double alpha = rz / pq;
        for (int l = 0; l < s->nl; l++) {
            dist_rank *k = &s->rk[l];
            SBM__TRY(sbm__vec_axpy(k->ctx, k->n, alpha, k->p, k->step));
            SBM__TRY(sbm__vec_axpy(k->ctx, k->n, -alpha, k->q, k->r));
        }
        /* |r| and r.z in one reduction (z is not needed when PCG stops here) */
        SBM__TRY(precondition(s));
        SBM__TRY(dots(s, 2, (const int[]){V_R, V_R}, (const int[]){V_R, V_Z}, out));
        rnorm = sqrt(out[0]);
        if (rnorm <= tol * bnorm) break;
        const double beta = out[1] / rz;
        rz = out[1];
        for (int l = 0; l < s->nl; l++) {
            dist_rank *k = &s->rk[l];
            SBM__TRY(sbm__vec_xpay(k->ctx, k->n, k->z, beta, k->p)); /* p = z + beta p */
        }
    }
    s->pcg_bytes += s->comm->bytes_sent - bytes0;
    s->rep.pcg_iterations += it;
    *iterations = it;
    *rel_residual = rnorm / bnorm;
    return SBM_SUCCESS;
}

/* One iteration's step at damping lambda (ba_lm.c's lm_step): the Schur step, PCG, the trial
 * and the decision. */
static sbm_status lm_step(dist_state *s, int it, double *cost, double *lambda, double *nu,
                          double *gnorm, sbm_iteration_report *rep, sbm_stop_reason *stop)
{
    sbm_ctx *ctx = s->rk[0].ctx;
    const sbm_solver_options *opt = s->opt;
    int failed = 0;
    double ts = sbm__now(ctx, 1);
    SBM__TRY(sbm__dist_schur(s, *lambda, &failed));
    rep->time_schur = sbm__now(ctx, 1) - ts;
    ts = sbm__now(ctx, 1);
    /* PCG's tolerance for this step: fixed, or the forcing rule's at this gradient (ba_lm.c) */
    const double tol = sbm__pcg_forcing_tolerance(opt, &s->forcing, *gnorm);
    if (!failed) SBM__TRY(dist_pcg(s, tol, &rep->linear_iterations, &rep->linear_residual));
    rep->linear_capped = rep->linear_iterations >= opt->pcg_max_iterations &&
                         !(rep->linear_residual <= tol);
    rep->time_solve = sbm__now(ctx, 1) - ts;
    double new_cost = INFINITY, predicted = 0.0, x_norm = 0.0;
    ts = sbm__now(ctx, 1);
    if (!failed) {
        double x2 = 0.0, step2 = 0.0;
        SBM__TRY(sbm__dist_trial(s, *lambda, &x2, &step2, &new_cost, &predicted));
        x_norm = sqrt(x2);
        rep->step_norm = sqrt(step2);
    }
    rep->time_update = sbm__now(ctx, 1) - ts;
    rep->linear_failed = failed;
    const double ptol = opt->parameter_tolerance;
    const int small_step = !failed && rep->step_norm <= ptol * (x_norm + ptol);
    *stop = SBM_STOP_NONE;
    if (!failed && isfinite(new_cost) && new_cost < *cost && predicted > 0.0) {
        const double rho = (*cost - new_cost) / predicted;
        const double tr = 2.0 * rho - 1.0;
        *lambda *= fmax(1.0 / 3.0, 1.0 - tr * tr * tr);
        *nu = 2.0;
        rep->accepted = 1;
        rep->cost = new_cost;
        *stop = new_cost == 0.0                                      ? SBM_STOP_ZERO_COST
                : small_step                                         ? SBM_STOP_PARAMETER_TOLERANCE
                : *cost - new_cost <= opt->function_tolerance * *cost ? SBM_STOP_FUNCTION_TOLERANCE
                                                                     : SBM_STOP_NONE;
        *cost = new_cost;
        s->cur = 1 - s->cur;
        s->stale = 1;
        if (it < opt->max_iterations && *stop == SBM_STOP_NONE) {
            ts = sbm__now(ctx, 1);
            SBM__TRY(sbm__dist_linearize(s));
            rep->time_linearize = sbm__now(ctx, 1) - ts;
            *gnorm = s->gmax;
        }
    } else {
        *lambda *= *nu;
        *nu *= 2.0;
        *stop = small_step ? SBM_STOP_PARAMETER_TOLERANCE
                : *lambda > SBM__LM_LAMBDA_MAX ? SBM_STOP_NO_PROGRESS : SBM_STOP_NONE;
    }
    return SBM_SUCCESS;
}

/* Iterations until a stop rule (ba_lm.c's lm_iterate). */
static sbm_status lm_iterate(dist_state *s, sbm_bal_problem *problem, sbm_solver_summary *sum)
{
    sbm_ctx *ctx = s->rk[0].ctx;
    const sbm_solver_options *opt = s->opt;
    double cost = sum->initial_cost, lambda = opt->initial_lambda, nu = 2.0, gnorm = s->gmax;
    sum->final_gradient_norm = gnorm;
    if (cost == 0.0) {
        sum->stop_reason = SBM_STOP_ZERO_COST;
        return SBM_SUCCESS;
    }
    sum->stop_reason = SBM_STOP_MAX_ITERATIONS;
    for (int it = 1; it <= opt->max_iterations; it++) {
        if (gnorm <= opt->gradient_tolerance) {
            sum->stop_reason = SBM_STOP_GRADIENT_TOLERANCE;
            break;
        }
        sbm_iteration_report rep;
        memset(&rep, 0, sizeof rep);
        rep.iteration = it;
        rep.cost_before = rep.cost = cost;
        rep.lambda = lambda;
        rep.gradient_norm = gnorm;
        const double t_it = sbm__now(ctx, 1);
        sbm_stop_reason stop = SBM_STOP_NONE;
        SBM__TRY(lm_step(s, it, &cost, &lambda, &nu, &gnorm, &rep, &stop));
        sum->final_gradient_norm = gnorm;
        if (opt->update_state_every_iteration && opt->callback)
            SBM__TRY(sbm__dist_download(s, problem));
        sum->linear_failures += rep.linear_failed;
        sum->linear_capped += rep.linear_capped;
        sbm__solver_end_iteration(ctx, opt, it, cost, t_it, &rep, sum);
        if (stop != SBM_STOP_NONE) {
            sum->stop_reason = stop;
            break;
        }
    }
    return SBM_SUCCESS;
}

/* Checks of the arguments; the contexts of the local ranks named for messages. */
static sbm_status check_args(sbm_group *group, sbm_bal_problem *problem,
                             const sbm_solver_options *opt, const sbm_dist_options *dopt)
{
    sbm_ctx *ctx = sbm_group_context(group, 0);
    if (!problem) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument problem is NULL");
    SBM__TRY(sbm__check_solver_options(ctx, opt));
    if (opt->linear_solver != SBM_LINEAR_AUTO && opt->linear_solver != SBM_LINEAR_PCG_MATRIX_FREE)
        return sbm__error(ctx, SBM_ERR_NOT_SUPPORTED,
                          "argument options: linear_solver %d is not available over a group "
                          "(SBM_LINEAR_AUTO or SBM_LINEAR_PCG_MATRIX_FREE: matrix-free PCG)",
                          (int)opt->linear_solver);
    if (dopt->partition != SBM_PARTITION_GRAPH && dopt->partition != SBM_PARTITION_INDEX)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument dist_options: partition method %d is not "
                          "SBM_PARTITION_GRAPH (0) or SBM_PARTITION_INDEX (1)",
                          (int)dopt->partition);
    const sbm_bal_info pi = sbm_bal_get_info(problem);
    if (pi.cameras < sbm_group_size(group))
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument problem: %" PRId64 " cameras cannot be shared among %d "
                          "ranks (each rank needs a camera)",
                          pi.cameras, sbm_group_size(group));
    return SBM_SUCCESS;
}

sbm_status sbm_ba_solve_dist(sbm_group *group, sbm_bal_problem *problem,
                             const sbm_solver_options *options,
                             const sbm_dist_options *dist_options, sbm_solver_summary *summary,
                             sbm_dist_report *report)
{
    if (!group) return sbm__null_ctx_error("sbm_ba_solve_dist");
    sbm_ctx *ctx = sbm_group_context(group, 0);
    for (int l = 0; l < sbm_group_local_size(group); l++)
        SBM__ENTER(sbm_group_context(group, l), "sbm_ba_solve_dist");
    const sbm_solver_options opt = options ? *options : sbm_solver_default_options();
    const sbm_dist_options dopt = dist_options ? *dist_options : sbm_dist_default_options();
    if (summary) memset(summary, 0, sizeof *summary);
    if (report) memset(report, 0, sizeof *report);
    SBM__TRY(check_args(group, problem, &opt, &dopt));

    dist_state s;
    memset(&s, 0, sizeof s);
    s.comm = sbm__group_comm(group);
    s.nl = s.comm->nlocal;
    s.opt = &opt;
    s.rk = calloc((size_t)s.nl, sizeof *s.rk);
    if (!s.rk) return sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "out of host memory");
    for (int l = 0; l < s.nl; l++) s.rk[l].ctx = s.comm->ctx[l];
    const double bytes0 = s.comm->bytes_sent, sec0 = s.comm->seconds;
    sbm_solver_summary sum;
    memset(&sum, 0, sizeof sum);
    sum.linear_solver = SBM_LINEAR_PCG_MATRIX_FREE;
    const double t_start = sbm__now(ctx, 1);
    sbm_status st = sbm__dist_setup(&s, problem, dopt.partition, &sum.time_linearize);
    const int started = st == SBM_SUCCESS;
    if (st == SBM_SUCCESS) {
        sum.initial_cost = sum.final_cost = s.cost;
        st = sbm__bal_cost_check(ctx, problem, s.cost);
    }
    if (st == SBM_SUCCESS) st = lm_iterate(&s, problem, &sum);
    if (st == SBM_SUCCESS && s.stale) { /* the gradient at the returned parameters */
        const double t0 = sbm__now(ctx, 1);
        st = sbm__dist_linearize(&s);
        sum.time_linearize += sbm__now(ctx, 1) - t0;
        if (st == SBM_SUCCESS) sum.final_gradient_norm = s.gmax;
    }
    if (started) {
        char message[SBM__MSG_SIZE];
        memcpy(message, ctx->message, sizeof message);
        const sbm_status dst = sbm__dist_download(&s, problem);
        if (st == SBM_SUCCESS) {
            st = dst;
        } else {
            memcpy(ctx->message, message, sizeof message);
            ctx->last_status = st;
        }
    }
    sum.time_total = sbm__now(ctx, 1) - t_start;
    s.rep.bytes_total = s.comm->bytes_sent - bytes0;
    s.rep.time_comm = s.comm->seconds - sec0;
    if (s.rep.pcg_iterations > 0) s.rep.bytes_per_pcg_iteration = s.pcg_bytes / s.rep.pcg_iterations;
    const sbm_bal_info pi = sbm_bal_get_info(problem);
    const int P = s.comm->size;
    s.rep.megba_bytes_per_pcg_iteration =
        2.0 * 2.0 * (P - 1) * 8.0 * (double)(9 * pi.cameras + 3 * pi.points);
    if (summary) *summary = sum;
    if (report) *report = s.rep;
    sbm__dist_free(&s);
    /* a failure that a local rank other than the first recorded on its own context: its
     * message, with the rank, on the context the caller reads */
    for (int l = 1; st != SBM_SUCCESS && ctx->message[0] == '\0' && l < s.nl; l++) {
        const sbm_ctx *cl = s.comm->ctx[l];
        if (cl->message[0] != '\0')
            sbm__error(ctx, st, "rank %d: %s", s.comm->rank[l], cl->message);
    }
    return st;
}
