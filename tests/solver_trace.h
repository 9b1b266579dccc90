/* SPDX-License-Identifier: BSD-3-Clause */
/* Traces of sbm_ba_solve for the control-flow suites (test_solver_control.c, test_ba_lm.c):
 * every per-iteration report and the estimate after every iteration, and the
 * Levenberg-Marquardt invariants checked on them (see test_solver_control.c's header). Static
 * functions in a header, like solver_reference.h: each suite uses its own copy. */
#ifndef SBM_SOLVER_TRACE_H
#define SBM_SOLVER_TRACE_H

#include "lm_rule.h"
#include "solver_reference.h"
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IT 40

/* ---------------------------------------------------------------------------------------- */
/* The trace: every report and the estimate after every iteration                           */
/* ---------------------------------------------------------------------------------------- */

typedef struct trace {
    double *a, *b;     /* the estimate: BAL cameras and points */
    int64_t na, nb;    /* their lengths */
    int n;             /* iterations seen */
    sbm_iteration_report rep[MAX_IT];
    double *x[MAX_IT + 1]; /* x[0]: the start; x[k + 1]: after iteration k + 1 */
} trace;

static inline double *snapshot(const trace *t)
{
    double *x = malloc((size_t)(t->na + t->nb + 1) * sizeof(double));
    assert_non_null(x);
    memcpy(x, t->a, (size_t)t->na * sizeof(double));
    if (t->nb) memcpy(x + t->na, t->b, (size_t)t->nb * sizeof(double));
    return x;
}

static inline void record(void *user, const sbm_iteration_report *r)
{
    trace *t = user;
    if (t->n >= MAX_IT) fail_msg("more than %d iterations", MAX_IT);
    t->rep[t->n] = *r;
    t->x[++t->n] = snapshot(t);
}

static inline void trace_start(trace *t, double *a, int64_t na, double *b, int64_t nb)
{
    memset(t, 0, sizeof *t);
    t->a = a, t->na = na, t->b = b, t->nb = nb;
    t->x[0] = snapshot(t);
}

static inline void trace_start_bal(trace *t, const sbm_bal_problem *p)
{
    const sbm_bal_info pi = sbm_bal_get_info(p);
    trace_start(t, pi.camera_params, 9 * pi.cameras, pi.point_params, 3 * pi.points);
}

static inline void trace_free(trace *t)
{
    for (int k = 0; k <= t->n; k++) free(t->x[k]);
}

static inline sbm_solver_options traced(sbm_linear_solver ls, int iterations, trace *t)
{
    sbm_solver_options o = sbm_solver_default_options();
    /* the damping these trajectories were pinned with (the default before 1e-12 from 1e-12):
     * their scenarios need rejections and Nielsen factors away from the floor */
    o.initial_lambda = 1e-4, o.min_lambda = 0.0;
    o.linear_solver = ls;
    o.max_iterations = iterations;
    o.callback = record;
    o.user = t;
    o.update_state_every_iteration = 1; /* the estimate of every iteration is traced */
    return o;
}

/* got within 1e-9 of want, relative (plus 1e-12 absolute for costs near zero): the two
 * evaluations differ only in round-off. */
static inline void assert_cost(double got, double want, const char *what, int it)
{
    if (!(fabs(got - want) <= 1e-9 * fabs(want) + 1e-12))
        fail_msg("%s (iteration %d): the solver says %.17g, the estimate it returned costs %.17g",
                 what, it, got, want);
}

/* What a run did, for the scenario's own assertions. */
typedef struct run_stats {
    int accepted;        /* steps taken */
    int rejected;        /* steps rejected */
    int max_run;         /* longest run of consecutive rejections */
    int reject_after_ok; /* a rejection right after an acceptance (nu restarts at 2) */
    double min_factor;   /* smallest / largest lambda factor after an acceptance (GN: the
                          * accepted step lengths) */
    double max_factor;
} run_stats;

/* ---------------------------------------------------------------------------------------- */
/* The Levenberg-Marquardt invariants                                                       */
/* ---------------------------------------------------------------------------------------- */

/* Nielsen's factor of an accepted step, from the step taken (x1 - x0) and the model at x0. */
static inline double nielsen_factor(const sbm_bal_info *pi, const double *x0, const double *x1,
                             const sbm_iteration_report *r)
{
    const int64_t nall = 9 * pi->cameras + 3 * pi->points;
    double *g = malloc((size_t)nall * sizeof(double)), *D = malloc((size_t)nall * sizeof(double));
    assert_true(g && D);
    ref_bal_model(pi, x0, g, D);
    double pred = 0.0;
    for (int64_t k = 0; k < nall; k++) {
        const double dx = x1[k] - x0[k];
        pred += dx * (r->lambda * D[k] * dx + g[k]);
    }
    pred *= 0.5;
    free(g);
    free(D);
    if (!(pred > 0.0))
        fail_msg("iteration %d: the accepted step predicts no decrease (%g)", r->iteration, pred);
    const double rho = (r->cost_before - r->cost) / pred, tr = 2.0 * rho - 1.0;
    return fmax(1.0 / 3.0, 1.0 - tr * tr * tr);
}

static inline double max_abs_of(const double *x, int64_t n)
{
    double m = 0.0;
    for (int64_t k = 0; k < n; k++) m = fmax(m, fabs(x[k]));
    return m;
}

static inline double norm_of(const double *x, int64_t n)
{
    double m = 0.0;
    for (int64_t k = 0; k < n; k++) m += x[k] * x[k];
    return sqrt(m);
}

/* max |g| at x by the reference model, and whether the solver's value agrees with it */
static inline void assert_gradient_norm(const sbm_bal_info *pi, const double *x, double got,
                                 const char *what, int it)
{
    const int64_t nall = 9 * pi->cameras + 3 * pi->points;
    double *g = malloc((size_t)nall * sizeof(double)), *D = malloc((size_t)nall * sizeof(double));
    assert_true(g && D);
    ref_bal_model(pi, x, g, D);
    const double want = max_abs_of(g, nall);
    free(g);
    free(D);
    if (!(fabs(got - want) <= 1e-5 * want + 1e-7))
        fail_msg("%s (iteration %d): the solver says max |g| = %.17g, the reference %.17g", what,
                 it, got, want);
}

/* The report fields besides the damping and the cost, and the stop rule: the reason the
 * summary gives holds after the last iteration, and no rule held before it. next_lambda: the
 * damping the rule gives after the last iteration. */
static inline void check_lm_stop(const sbm_bal_problem *p, const trace *t, const sbm_solver_options *o,
                          const sbm_solver_summary *s, double next_lambda)
{
    const sbm_bal_info pi = sbm_bal_get_info(p);
    const int64_t nall = t->na + t->nb;
    const double ptol = o->parameter_tolerance;
    int failures = 0, capped = 0;
    for (int k = 0; k < t->n; k++) {
        const sbm_iteration_report *r = &t->rep[k];
        failures += r->linear_failed, capped += r->linear_capped;
        assert_gradient_norm(&pi, t->x[k], r->gradient_norm, "gradient norm", k + 1);
        assert_true(r->gradient_norm > o->gradient_tolerance);
        if (r->linear_failed) {
            assert_false(r->accepted);
            assert_true(r->step_norm == 0.0);
            continue;
        }
        const double xn = norm_of(t->x[k], nall);
        if (r->accepted) {
            double *d = malloc((size_t)nall * sizeof(double));
            assert_non_null(d);
            for (int64_t i = 0; i < nall; i++) d[i] = t->x[k + 1][i] - t->x[k][i];
            const double dn = norm_of(d, nall);
            free(d);
            /* x + dx rounds each parameter: up to an ulp of x apart */
            if (!(fabs(r->step_norm - dn) <= 1e-9 * dn + 2.0 * DBL_EPSILON * xn))
                fail_msg("iteration %d: step_norm %.17g, the step taken %.17g", k + 1,
                         r->step_norm, dn);
        }
        const int small = r->step_norm <= ptol * (xn + ptol);
        const int fsmall =
            r->accepted && r->cost_before - r->cost <= o->function_tolerance * r->cost_before;
        if (k < t->n - 1 && (small || fsmall || r->cost == 0.0))
            fail_msg("iteration %d met a stop rule (%s) but the solve went on", k + 1,
                     small ? "parameter tolerance" : fsmall ? "function tolerance" : "zero cost");
    }
    assert_int_equal(s->linear_failures, failures);
    assert_int_equal(s->linear_capped, capped);
    assert_gradient_norm(&pi, t->x[t->n], s->final_gradient_norm, "final gradient norm", t->n);
    const sbm_iteration_report *last = t->n ? &t->rep[t->n - 1] : NULL;
    print_message("  stop: %s after %d iterations\n", sbm_stop_reason_name(s->stop_reason), t->n);
    switch (s->stop_reason) {
    case SBM_STOP_ZERO_COST: assert_true(s->final_cost == 0.0); break;
    case SBM_STOP_GRADIENT_TOLERANCE:
        assert_true(s->final_gradient_norm <= o->gradient_tolerance);
        assert_true(t->n < o->max_iterations);
        break;
    case SBM_STOP_PARAMETER_TOLERANCE:
        assert_non_null(last);
        assert_true(!last->linear_failed &&
                    last->step_norm <= ptol * (norm_of(t->x[t->n - 1], nall) + ptol));
        break;
    case SBM_STOP_FUNCTION_TOLERANCE:
        assert_non_null(last);
        assert_true(last->accepted &&
                    last->cost_before - last->cost <= o->function_tolerance * last->cost_before);
        break;
    case SBM_STOP_NO_PROGRESS:
        assert_non_null(last);
        assert_true(!last->accepted && next_lambda > 1e32);
        break;
    case SBM_STOP_MAX_ITERATIONS: assert_int_equal(t->n, o->max_iterations); break;
    default: fail_msg("stop reason %d", (int)s->stop_reason);
    }
    if (s->stop_reason != SBM_STOP_NO_PROGRESS) assert_true(next_lambda <= 1e32);
    assert_int_equal(sbm_stop_reason_converged(s->stop_reason),
                     s->stop_reason != SBM_STOP_MAX_ITERATIONS &&
                         s->stop_reason != SBM_STOP_NO_PROGRESS);
}

static inline run_stats check_lm(const sbm_bal_problem *p, const trace *t, const sbm_solver_options *o,
                          const sbm_solver_summary *s)
{
    const sbm_bal_info pi = sbm_bal_get_info(p);
    const size_t bytes = (size_t)(t->na + t->nb) * sizeof(double);
    run_stats rs = {0, 0, 0, 0, INFINITY, 0.0};
    assert_int_equal(s->iterations, t->n);
    assert_cost(s->initial_cost, ref_bal_cost(&pi, t->x[0]), "initial cost", 0);
    double cost = s->initial_cost;
    lm_rule q = lm_rule_start(o);
    for (int k = 0; k < t->n; k++) {
        const sbm_iteration_report *r = &t->rep[k];
        print_message("    %2d  lambda %-12.6g %s  cost %.9e -> %.9e\n", r->iteration, r->lambda,
                      r->accepted ? "accepted" : "rejected", r->cost_before, r->cost);
        assert_int_equal(r->iteration, k + 1);
        assert_true(r->cost_before == cost);
        lm_rule_check(&q, r, k);
        if (r->accepted) {
            if (!(r->cost < r->cost_before)) fail_msg("iteration %d accepted no decrease", k + 1);
            assert_cost(r->cost, ref_bal_cost(&pi, t->x[k + 1]), "cost", k + 1);
            const double f = nielsen_factor(&pi, t->x[k], t->x[k + 1], r);
            rs.min_factor = fmin(rs.min_factor, f);
            rs.max_factor = fmax(rs.max_factor, f);
            lm_rule_accept(&q, r, f);
            rs.accepted++;
        } else {
            assert_true(r->cost == r->cost_before);
            if (memcmp(t->x[k + 1], t->x[k], bytes) != 0)
                fail_msg("iteration %d: the rejected step did not restore the parameters", k + 1);
            if (q.prev_ok) rs.reject_after_ok = 1;
            const int run = lm_rule_reject(&q, r);
            rs.max_run = run > rs.max_run ? run : rs.max_run;
            rs.rejected++;
        }
        cost = r->cost;
    }
    assert_int_equal(s->accepted, rs.accepted);
    assert_true(s->final_cost == cost);
    /* the estimate returned is the last one seen, and costs what the summary says */
    assert_memory_equal(t->x[t->n], pi.camera_params, 9 * pi.cameras * sizeof(double));
    assert_memory_equal(t->x[t->n] + 9 * pi.cameras, pi.point_params,
                        3 * pi.points * sizeof(double));
    assert_cost(s->final_cost, ref_bal_cost(&pi, t->x[t->n]), "final cost", t->n);
    check_lm_stop(p, t, o, s, q.lambda);
    return rs;
}

static inline sbm_bal_problem *generated(sbm_test_env *e, int64_t cameras, int64_t points, int obs,
                                  double perturbation, double noise, uint64_t seed)
{
    sbm_bal_generate_options g = sbm_bal_generate_defaults(cameras, points, obs, seed);
    g.perturbation = perturbation;
    g.pixel_noise = noise;
    sbm_bal_problem *p = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &g, &p));
    return p;
}

#endif /* SBM_SOLVER_TRACE_H */
