/* SPDX-License-Identifier: BSD-3-Clause */
/* The nonlinear driver (src/solve/lm_driver.c) on small host problems given through its
 * operation table: Rosenbrock's function as least squares (r = [10 (x2 - x1^2), 1 - x1]) and a
 * linear one (r = x - t), with faults injected by the test's operations. Checked: the damping
 * schedule (Nielsen's update, the rejection factors, the floor min_lambda) against the test's
 * own predicted decrease, the acceptance test (a positive predicted decrease), every stop rule
 * and their order, the summary's counts, Gauss-Newton's line search, and that every operation's
 * failure comes back with its status. The driver is host code (its problems keep their data
 * where they like), so the suite runs on the CPU context only. */
#include <math.h>
#include <string.h>

#include "lm_driver.h"
#include "lm_rule.h"
#include "test_util.h"

#define MAXIT 64

enum { ROSENBROCK, LINEAR };
enum { OP_LINEARIZE = 1, OP_SOLVE, OP_TRIAL, OP_PREDICTED, OP_NORMS, OP_PUBLISH, OP_COUNT };

typedef struct toy {
    int kind;
    double x[2], trial[2], dx[2], t[2];
    double g[2], H[3], D[2];  /* at the last linearisation: g, H = (h11, h12, h22), D */
    int calls[OP_COUNT];      /* calls of each operation */
    int fail_op, fail_call;   /* operation fail_op fails at its fail_call-th call */
    unsigned npd_solves;      /* bit k: the (k+1)-th solve is not positive definite */
    unsigned negative_pred;   /* bit k: the (k+1)-th prediction is made -1 */
    int accepts;
    double pred[MAXIT];       /* the prediction of each solve (by solve call) */
    double tried[MAXIT];      /* the trial cost of each solve (the last one for GN) */
    sbm_iteration_report rep[MAXIT];
    int nrep;
} toy;

static double toy_cost_at(const toy *p, const double *x)
{
    if (p->kind == LINEAR) {
        const double a = x[0] - p->t[0], b = x[1] - p->t[1];
        return 0.5 * (a * a + b * b);
    }
    const double r1 = 10.0 * (x[1] - x[0] * x[0]), r2 = 1.0 - x[0];
    return 0.5 * (r1 * r1 + r2 * r2);
}

static sbm_status injected(toy *p, int op)
{
    p->calls[op]++;
    return p->fail_op == op && p->calls[op] == p->fail_call ? SBM_ERR_OUT_OF_MEMORY : SBM_SUCCESS;
}

static sbm_status op_linearize(void *data, sbm_iteration_report *rep, double *cost, double *gn)
{
    toy *p = data;
    SBM__TRY(injected(p, OP_LINEARIZE));
    const double x1 = p->x[0], x2 = p->x[1];
    if (p->kind == LINEAR) {
        p->g[0] = x1 - p->t[0], p->g[1] = x2 - p->t[1];
        p->H[0] = 1.0, p->H[1] = 0.0, p->H[2] = 1.0;
    } else {
        const double r1 = 10.0 * (x2 - x1 * x1), r2 = 1.0 - x1;
        p->g[0] = -20.0 * x1 * r1 - r2, p->g[1] = 10.0 * r1;
        p->H[0] = 400.0 * x1 * x1 + 1.0, p->H[1] = -200.0 * x1, p->H[2] = 100.0;
    }
    p->D[0] = fmin(fmax(p->H[0], 1e-6), 1e32), p->D[1] = fmin(fmax(p->H[2], 1e-6), 1e32);
    *cost = toy_cost_at(p, p->x);
    *gn = fmax(fabs(p->g[0]), fabs(p->g[1]));
    rep->time_linearize = 0.0;
    return SBM_SUCCESS;
}

static sbm_status op_solve(void *data, int damped, double lambda, sbm_iteration_report *rep)
{
    toy *p = data;
    SBM__TRY(injected(p, OP_SOLVE));
    const int k = p->calls[OP_SOLVE] - 1;
    const double l = damped ? lambda : 0.0;
    const double a = p->H[0] + l * p->D[0], b = p->H[1], c = p->H[2] + l * p->D[1];
    const double det = a * c - b * b;
    if (k < 32 && (p->npd_solves >> k & 1u)) return SBM_ERR_NOT_POSITIVE_DEFINITE;
    assert_true(a > 0.0 && det > 0.0);
    p->dx[0] = (-p->g[0] * c + p->g[1] * b) / det;
    p->dx[1] = (-p->g[1] * a + p->g[0] * b) / det;
    rep->linear_capped = k == 0; /* counted by the driver */
    return SBM_SUCCESS;
}

static sbm_status op_trial(void *data, double alpha, double *cost)
{
    toy *p = data;
    SBM__TRY(injected(p, OP_TRIAL));
    p->trial[0] = p->x[0] + alpha * p->dx[0], p->trial[1] = p->x[1] + alpha * p->dx[1];
    *cost = toy_cost_at(p, p->trial);
    if (p->calls[OP_SOLVE] <= MAXIT) p->tried[p->calls[OP_SOLVE] - 1] = *cost;
    return SBM_SUCCESS;
}

static sbm_status op_predicted(void *data, double lambda, double *predicted)
{
    toy *p = data;
    SBM__TRY(injected(p, OP_PREDICTED));
    const int k = p->calls[OP_SOLVE] - 1;
    double s = 0.0;
    for (int i = 0; i < 2; i++) s += p->dx[i] * (lambda * p->D[i] * p->dx[i] - p->g[i]);
    *predicted = 0.5 * s;
    if (k < 32 && (p->negative_pred >> k & 1u)) *predicted = -1.0;
    if (k < MAXIT) p->pred[k] = *predicted;
    return SBM_SUCCESS;
}

static sbm_status op_norms(void *data, double alpha, double *step, double *xn)
{
    toy *p = data;
    SBM__TRY(injected(p, OP_NORMS));
    *step = fabs(alpha) * hypot(p->dx[0], p->dx[1]);
    *xn = hypot(p->x[0], p->x[1]);
    return SBM_SUCCESS;
}

static void op_accept(void *data)
{
    toy *p = data;
    p->x[0] = p->trial[0], p->x[1] = p->trial[1];
    p->accepts++;
}

static sbm_status op_publish(void *data)
{
    return injected(data, OP_PUBLISH);
}

static void record(void *user, const sbm_iteration_report *r)
{
    toy *p = user;
    if (p->nrep < MAXIT) p->rep[p->nrep++] = *r;
}

/* A toy problem from x0 and the options the tests start from (the library's defaults with the
 * callback recording the reports into the problem). */
static toy make_toy(int kind, double x1, double x2, sbm_solver_options *o)
{
    toy p;
    memset(&p, 0, sizeof p);
    p.kind = kind, p.x[0] = x1, p.x[1] = x2, p.t[0] = 3.0, p.t[1] = -2.0;
    *o = sbm_solver_default_options();
    o->callback = record;
    return p;
}

static sbm_status drive(sbm_ctx *ctx, toy *p, const sbm_solver_options *o, int64_t n,
                        sbm_solver_summary *s)
{
    const sbm__lm_ops ops = {p,            op_linearize, op_solve,  op_trial,
                             op_predicted, op_norms,     op_accept, op_publish};
    sbm_solver_options opt = *o;
    opt.user = p;
    memset(s, 0, sizeof *s);
    double cost = 0.0, gn = 0.0;
    sbm_iteration_report rep;
    memset(&rep, 0, sizeof rep);
    SBM__TRY(op_linearize(p, &rep, &cost, &gn));
    s->initial_cost = cost;
    return sbm__lm_drive(ctx, &opt, &ops, n, cost, gn, s);
}

/* The damping follows the rule of tests/lm_rule.h (with the floor) from the test's own
 * predictions; rejections and acceptances are as the acceptance test says. */
static void check_schedule(const toy *p, const sbm_solver_options *o)
{
    lm_rule q = lm_rule_start(o);
    for (int k = 0; k < p->nrep; k++) {
        const sbm_iteration_report *r = &p->rep[k];
        lm_rule_check(&q, r, k);
        const double dec = r->cost_before - r->cost;
        const int npd = k < 32 && (p->npd_solves >> k & 1u);
        assert_int_equal(r->linear_failed, npd);
        if (r->accepted) {
            assert_true(!npd && dec > 0.0 && p->pred[k] > 0.0);
            const double tr = 2.0 * dec / p->pred[k] - 1.0;
            lm_rule_accept(&q, r, fmax(1.0 / 3.0, 1.0 - tr * tr * tr));
        } else {
            lm_rule_reject(&q, r);
        }
    }
}

static void test_lm_rosenbrock(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (int variant = 0; variant < 3; variant++) {
        sbm_solver_options o;
        toy p = make_toy(ROSENBROCK, -1.2, 1.0, &o);
        if (variant == 1) o.initial_lambda = 1e-12, o.min_lambda = 1e-9; /* a start below */
        if (variant == 2) o.initial_lambda = 1.0, o.min_lambda = 1e-3;
        sbm_solver_summary s;
        SBM_ASSERT_OK(e->ctx, drive(e->ctx, &p, &o, 2, &s));
        print_message("  variant %d: %d iterations, %d accepted, cost %.3g, %s\n", variant,
                      s.iterations, s.accepted, s.final_cost, sbm_stop_reason_name(s.stop_reason));
        assert_true(sbm_stop_reason_converged(s.stop_reason));
        assert_true(fabs(p.x[0] - 1.0) < 1e-6 && fabs(p.x[1] - 1.0) < 1e-6);
        assert_int_equal(s.iterations, p.nrep);
        assert_int_equal(s.accepted, p.accepts);
        assert_true(s.final_cost == toy_cost_at(&p, p.x));
        assert_int_equal(s.linear_capped, 1);
        check_schedule(&p, &o);
        if (variant == 2)
            for (int k = 0; k < p.nrep; k++) assert_true(p.rep[k].lambda >= 1e-3);
        if (variant == 1) /* below the floor: an acceptance keeps lambda */
            for (int k = 1; k < p.nrep; k++)
                if (p.rep[k - 1].accepted && p.rep[k - 1].lambda < 1e-9)
                    assert_true(p.rep[k].lambda == p.rep[k - 1].lambda);
    }
}

/* A step whose predicted decrease is not positive is not taken, however much the cost falls;
 * a failed factorisation is a rejected step counted in linear_failures. */
static void test_lm_rejections(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_solver_options o;
    toy p = make_toy(ROSENBROCK, -1.2, 1.0, &o);
    o.initial_lambda = 1.0;
    p.negative_pred = 1u;         /* solve 1 */
    p.npd_solves = 2u | 8u | 16u; /* solves 2, 4, 5 */
    sbm_solver_summary s;
    SBM_ASSERT_OK(e->ctx, drive(e->ctx, &p, &o, 2, &s));
    assert_true(p.nrep >= 6);
    /* the first trial lowers the cost but its prediction is -1 */
    assert_true(!p.rep[0].accepted && p.rep[0].step_norm > 0.0 &&
                p.tried[0] < p.rep[0].cost_before);
    assert_true(!p.rep[1].accepted && p.rep[1].linear_failed && p.rep[1].step_norm == 0.0);
    assert_true(p.rep[2].accepted);
    assert_true(p.rep[3].linear_failed && p.rep[4].linear_failed);
    assert_int_equal(s.linear_failures, 3);
    assert_true(p.rep[1].lambda == 2.0 * o.initial_lambda &&
                p.rep[2].lambda == 8.0 * o.initial_lambda);
    check_schedule(&p, &o);
    assert_true(sbm_stop_reason_converged(s.stop_reason));
}

/* The stop rules and their order: zero cost before the parameter tolerance before the function
 * tolerance; on a rejection the parameter tolerance before no progress. */
static void test_stop_order(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_solver_options o;
    sbm_solver_summary s;
    /* GN lands on t exactly: zero cost, although the step is also small (tol 1e9) */
    toy p = make_toy(LINEAR, 0.0, 0.0, &o);
    o.method = SBM_METHOD_GAUSS_NEWTON, o.parameter_tolerance = 1e9, o.function_tolerance = 2.0;
    SBM_ASSERT_OK(e->ctx, drive(e->ctx, &p, &o, 2, &s));
    assert_true(s.stop_reason == SBM_STOP_ZERO_COST && s.iterations == 1 && s.final_cost == 0.0);
    assert_true(p.rep[0].lambda == 1.0 && p.calls[OP_LINEARIZE] == 2); /* + the final one */
    assert_true(s.final_gradient_norm == 0.0);
    /* LM: a small step that also meets the function tolerance: the parameter tolerance */
    p = make_toy(LINEAR, 0.0, 0.0, &o);
    o.parameter_tolerance = 1e9, o.function_tolerance = 2.0;
    SBM_ASSERT_OK(e->ctx, drive(e->ctx, &p, &o, 2, &s));
    assert_true(s.stop_reason == SBM_STOP_PARAMETER_TOLERANCE && s.iterations == 1);
    assert_true(p.calls[OP_LINEARIZE] == 2 && s.final_gradient_norm > 0.0);
    p = make_toy(LINEAR, 0.0, 0.0, &o);
    o.function_tolerance = 2.0;
    SBM_ASSERT_OK(e->ctx, drive(e->ctx, &p, &o, 2, &s));
    assert_true(s.stop_reason == SBM_STOP_FUNCTION_TOLERANCE && s.iterations == 1);
    /* a rejected small step: the parameter tolerance, before no progress */
    p = make_toy(LINEAR, 0.0, 0.0, &o);
    p.negative_pred = 1u;
    o.parameter_tolerance = 1e9, o.initial_lambda = 1e32;
    SBM_ASSERT_OK(e->ctx, drive(e->ctx, &p, &o, 2, &s));
    assert_true(s.stop_reason == SBM_STOP_PARAMETER_TOLERANCE && s.iterations == 1);
    assert_true(!p.rep[0].accepted && p.calls[OP_LINEARIZE] == 1);
    p = make_toy(LINEAR, 0.0, 0.0, &o);
    p.negative_pred = 1u;
    o.initial_lambda = 1e32, o.parameter_tolerance = 0.0;
    SBM_ASSERT_OK(e->ctx, drive(e->ctx, &p, &o, 2, &s));
    assert_true(s.stop_reason == SBM_STOP_NO_PROGRESS && s.iterations == 1);
    /* the gradient rule after an accepted step (lambda 1 halves the distance to t) */
    p = make_toy(LINEAR, 0.0, 0.0, &o);
    o.initial_lambda = 1.0, o.gradient_tolerance = 0.9;
    SBM_ASSERT_OK(e->ctx, drive(e->ctx, &p, &o, 2, &s));
    assert_true(s.stop_reason == SBM_STOP_GRADIENT_TOLERANCE && s.final_gradient_norm <= 0.9);
    assert_true(p.rep[s.iterations - 1].accepted && s.iterations < o.max_iterations);
    /* the iteration limit; the last step taken without a linearisation gets one */
    p = make_toy(ROSENBROCK, -1.2, 1.0, &o);
    o.max_iterations = 3;
    SBM_ASSERT_OK(e->ctx, drive(e->ctx, &p, &o, 2, &s));
    assert_true(s.stop_reason == SBM_STOP_MAX_ITERATIONS && s.iterations == 3);
    assert_true(s.final_cost == toy_cost_at(&p, p.x));
    assert_true(s.final_gradient_norm == fmax(fabs(p.g[0]), fabs(p.g[1])));
}

/* Nothing to iterate: no unknowns, a zero cost, a small gradient, no iterations allowed. */
static void test_no_iteration(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_solver_options o;
    sbm_solver_summary s;
    toy p = make_toy(ROSENBROCK, -1.2, 1.0, &o);
    SBM_ASSERT_OK(e->ctx, drive(e->ctx, &p, &o, 0, &s));
    assert_true(s.stop_reason == SBM_STOP_NONE && s.iterations == 0 && p.nrep == 0);
    p = make_toy(ROSENBROCK, 1.0, 1.0, &o);
    SBM_ASSERT_OK(e->ctx, drive(e->ctx, &p, &o, 2, &s));
    assert_true(s.stop_reason == SBM_STOP_ZERO_COST && s.iterations == 0);
    p = make_toy(ROSENBROCK, -1.2, 1.0, &o);
    o.gradient_tolerance = 1e3;
    SBM_ASSERT_OK(e->ctx, drive(e->ctx, &p, &o, 2, &s));
    assert_true(s.stop_reason == SBM_STOP_GRADIENT_TOLERANCE && s.iterations == 0);
    p = make_toy(ROSENBROCK, -1.2, 1.0, &o);
    o.max_iterations = 0;
    SBM_ASSERT_OK(e->ctx, drive(e->ctx, &p, &o, 2, &s));
    assert_true(s.stop_reason == SBM_STOP_MAX_ITERATIONS && s.iterations == 0);
    assert_true(s.final_gradient_norm == fmax(fabs(p.g[0]), fabs(p.g[1])));
}

/* Gauss-Newton: the line search halves the step until the cost falls; a factorisation failure
 * is an error; a search that finds no length stops with no progress. */
static void test_gauss_newton(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_solver_options o;
    sbm_solver_summary s;
    toy p = make_toy(ROSENBROCK, -1.2, 1.0, &o);
    o.method = SBM_METHOD_GAUSS_NEWTON;
    SBM_ASSERT_OK(e->ctx, drive(e->ctx, &p, &o, 2, &s));
    assert_true(sbm_stop_reason_converged(s.stop_reason));
    assert_true(fabs(p.x[0] - 1.0) < 1e-6 && fabs(p.x[1] - 1.0) < 1e-6);
    int halved = 0;
    for (int k = 0; k < p.nrep; k++) {
        assert_true(p.rep[k].accepted && p.rep[k].cost < p.rep[k].cost_before);
        halved |= p.rep[k].lambda < 1.0;
    }
    assert_true(halved); /* Rosenbrock's valley makes the search halve at least once */
    p = make_toy(ROSENBROCK, -1.2, 1.0, &o);
    o.method = SBM_METHOD_GAUSS_NEWTON;
    p.npd_solves = 2u;
    assert_int_equal(drive(e->ctx, &p, &o, 2, &s), SBM_ERR_NOT_POSITIVE_DEFINITE);
    assert_true(s.linear_failures == 1 && p.nrep == 1);
    /* t = inf: every cost is inf, so no step length lowers it */
    p = make_toy(LINEAR, 0.0, 0.0, &o);
    o.method = SBM_METHOD_GAUSS_NEWTON;
    p.t[0] = INFINITY;
    SBM_ASSERT_OK(e->ctx, drive(e->ctx, &p, &o, 2, &s));
    assert_true(s.stop_reason == SBM_STOP_NO_PROGRESS && s.iterations == 1 && p.accepts == 0);
    assert_true(p.calls[OP_TRIAL] == 11 && p.rep[0].lambda == ldexp(1.0, -10));
    assert_true(p.rep[0].step_norm == 0.0);
}

/* Every operation's failure comes back with its status, also the callback's publication. */
static void test_operation_failures(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (int method = 0; method < 2; method++)
        for (int op = OP_LINEARIZE; op < OP_COUNT; op++) {
            if (method == 1 && op == OP_PREDICTED) continue; /* GN predicts nothing */
            sbm_solver_options o;
            toy p = make_toy(ROSENBROCK, -1.2, 1.0, &o);
            o.method = method ? SBM_METHOD_GAUSS_NEWTON : SBM_METHOD_LEVENBERG_MARQUARDT;
            o.update_state_every_iteration = 1;
            p.fail_op = op, p.fail_call = op == OP_LINEARIZE ? 3 : 2;
            sbm_solver_summary s;
            assert_int_equal(drive(e->ctx, &p, &o, 2, &s), SBM_ERR_OUT_OF_MEMORY);
            assert_int_equal(p.calls[op], p.fail_call);
        }
    /* without a callback nothing is published */
    sbm_solver_options o;
    toy p = make_toy(ROSENBROCK, -1.2, 1.0, &o);
    o.update_state_every_iteration = 1, o.callback = NULL;
    sbm_solver_summary s;
    SBM_ASSERT_OK(e->ctx, drive(e->ctx, &p, &o, 2, &s));
    assert_int_equal(p.calls[OP_PUBLISH], 0);
}

/* min_lambda: a finite value >= 0 (status and message); the default damping (1e-4, no floor:
 * docs/CONVERGENCE.md says why). */
static void test_min_lambda_option(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_solver_options o = sbm_solver_default_options();
    assert_true(o.min_lambda == 0.0 && o.initial_lambda == 1e-4);
    const double bad[] = {-1e-12, NAN, INFINITY};
    const char *text[] = {"argument options: min_lambda = -1e-12 must be finite and >= 0",
                          "argument options: min_lambda = nan must be finite and >= 0",
                          "argument options: min_lambda = inf must be finite and >= 0"};
    for (int k = 0; k < 3; k++) {
        o.min_lambda = bad[k];
        SBM_ASSERT_FAILS(e->ctx, sbm__check_solver_options(e->ctx, &o), SBM_ERR_INVALID_ARGUMENT,
                         text[k]);
    }
    o.min_lambda = 1e300;
    SBM_ASSERT_OK(e->ctx, sbm__check_solver_options(e->ctx, &o));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_CPU(test_lm_rosenbrock),      SBM_TEST_CPU(test_lm_rejections),
        SBM_TEST_CPU(test_stop_order),         SBM_TEST_CPU(test_no_iteration),
        SBM_TEST_CPU(test_gauss_newton),       SBM_TEST_CPU(test_operation_failures),
        SBM_TEST_CPU(test_min_lambda_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
