/* SPDX-License-Identifier: BSD-3-Clause */
/* The damping rule of the library's one Levenberg-Marquardt driver (src/solve/lm_driver.c,
 * which BA and SLAM both run), as the control-flow suites check it from the iteration reports:
 * a step is taken when its factorisation succeeded, its cost is finite and lower and the
 * predicted decrease is positive; after a rejection the next lambda is exactly lambda * nu
 * (nu = 2, 4, 8, ... since the last acceptance: powers of two, so exact); after an acceptance it
 * is max(lambda * f, min(lambda, min_lambda)) with f the Nielsen factor
 * max(1/3, 1 - (2 rho - 1)^3) the suite computes from its own model, to 1e-6 (the central
 * differences' error; tests/test_lm_driver.c's exact model matches bitwise). */
#ifndef SBM_TEST_LM_RULE_H
#define SBM_TEST_LM_RULE_H

#include <math.h>

#include "test_util.h"

typedef struct lm_rule {
    double lambda;  /* the lambda the next iteration must report */
    double nu;      /* the next rejection's factor */
    int exact;      /* 1: lambda must match bitwise (start, after a rejection) */
    int run;        /* rejections in a row */
    int prev_ok;    /* the last iteration was accepted */
    double floor;   /* options.min_lambda: an acceptance shrinks lambda down to it at most */
} lm_rule;

/* The rule from a solve's options: its initial_lambda and its floor min_lambda. */
static inline lm_rule lm_rule_start(const sbm_solver_options *o)
{
    const lm_rule q = {o->initial_lambda, 2.0, 1, 0, 0, o->min_lambda};
    return q;
}

/* Iteration k (0-based) reported r->lambda: the rule's. */
static inline void lm_rule_check(const lm_rule *q, const sbm_iteration_report *r, int k)
{
    if (q->exact ? r->lambda != q->lambda : !(fabs(r->lambda - q->lambda) <= 1e-6 * q->lambda))
        fail_msg("iteration %d: lambda %.17g, the update rule gives %.17g (after %s)",
                 r->iteration, r->lambda, q->lambda,
                 k == 0 ? "nothing" : q->prev_ok ? "an acceptance" : "a rejection");
}

/* An accepted step with Nielsen factor f (not below the floor; a lambda below it stays). */
static inline void lm_rule_accept(lm_rule *q, const sbm_iteration_report *r, double f)
{
    q->lambda = fmax(r->lambda * f, fmin(r->lambda, q->floor));
    q->nu = 2.0, q->exact = 0, q->run = 0, q->prev_ok = 1;
}

/* A rejected step. @return the rejections in a row so far. */
static inline int lm_rule_reject(lm_rule *q, const sbm_iteration_report *r)
{
    q->lambda = r->lambda * q->nu;
    q->nu *= 2.0, q->exact = 1, q->prev_ok = 0;
    return ++q->run;
}

#endif /* SBM_TEST_LM_RULE_H */
