/* SPDX-License-Identifier: BSD-3-Clause */
/* Traces of sbm_slam_solve for the SLAM control-flow suites (test_slam_control.c for
 * Levenberg-Marquardt, test_slam_gn.c for Gauss-Newton): every report and the poses after every
 * iteration, the cost of the reference errors (solver_reference.h), small graphs from g2o text
 * and a seeded noisy 2D loop. Header-only. */
#ifndef SBM_TEST_SLAM_TRACE_H
#define SBM_TEST_SLAM_TRACE_H

#include "solver_reference.h"
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IT 60

typedef struct trace {
    double *poses; /* the graph's poses */
    int64_t np;
    int n;
    sbm_iteration_report rep[MAX_IT];
    double *x[MAX_IT + 1]; /* x[0]: the start; x[k + 1]: after iteration k + 1 */
} trace;

static inline void record(void *user, const sbm_iteration_report *r)
{
    trace *t = user;
    if (t->n >= MAX_IT) fail_msg("more than %d iterations", MAX_IT);
    t->rep[t->n] = *r;
    t->x[++t->n] = malloc((size_t)t->np * sizeof(double));
    assert_non_null(t->x[t->n]);
    memcpy(t->x[t->n], t->poses, (size_t)t->np * sizeof(double));
}

static inline void trace_free(trace *t)
{
    for (int k = 0; k <= t->n; k++) free(t->x[k]);
}

/* Options for a traced solve of g from its current poses. */
static inline sbm_solver_options trace_start(trace *t, const sbm_g2o_graph *g, sbm_linear_solver ls,
                                      double lambda0, int iterations)
{
    const sbm_g2o_info gi = sbm_g2o_get_info(g);
    memset(t, 0, sizeof *t);
    t->poses = gi.poses, t->np = gi.pose_size * gi.vertices;
    t->x[0] = malloc((size_t)t->np * sizeof(double));
    assert_non_null(t->x[0]);
    memcpy(t->x[0], gi.poses, (size_t)t->np * sizeof(double));
    sbm_solver_options o = sbm_solver_default_options();
    o.linear_solver = ls;
    o.initial_lambda = lambda0;
    o.max_iterations = iterations;
    o.callback = record;
    o.user = t;
    o.update_state_every_iteration = 1; /* record() reads the poses after every iteration */
    return o;
}

/* The SLAM solvers' cost: 0.5 chi2 (sbm_solve.h), chi2 by the reference errors. */
static inline double ref_slam_cost(const sbm_g2o_info *gi, const double *x)
{
    return 0.5 * ref_chi2(gi, x);
}

static inline void assert_cost(double got, double want, const char *what, int it)
{
    if (!(fabs(got - want) <= 1e-9 * fabs(want) + 1e-12))
        fail_msg("%s (iteration %d): the solver says %.17g, the poses it returned cost %.17g",
                 what, it, got, want);
}

/* ---------------------------------------------------------------------------------------- */
/* Graphs                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static inline sbm_g2o_graph *g2o_from_text(sbm_test_env *e, const char *name, const char *text)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s.g2o", sbm_test_tmp_dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    sbm_g2o_graph *g = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, path, &g));
    return g;
}

/* A seeded 2D loop: 24 poses on a circle, odometry and chords to the pose 5 ahead, exact
 * measurements plus a little noise, the start perturbed by up to 0.8 m and 0.9 rad. */
static inline sbm_g2o_graph *noisy_se2_loop(sbm_test_env *e, uint64_t seed, double ts, double as)
{
    enum { N = 24 };
    sbm_test_rng rng = sbm_test_rng_seed(seed);
    double x[N][3];
    size_t cap = 64 * 1024, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (int i = 0; i < N; i++) {
        const double a = 2.0 * 3.14159265358979323846 * i / N;
        x[i][0] = 10.0 * cos(a), x[i][1] = 10.0 * sin(a), x[i][2] = a + 1.5707963267948966;
        const double dx = i ? ts * sbm_test_rng_value(&rng) : 0.0;
        const double dy = i ? ts * sbm_test_rng_value(&rng) : 0.0;
        const double dt = i ? as * sbm_test_rng_value(&rng) : 0.0;
        len += (size_t)snprintf(text + len, cap - len, "VERTEX_SE2 %d %.17g %.17g %.17g\n", i,
                                x[i][0] + dx, x[i][1] + dy, x[i][2] + dt);
    }
    for (int i = 0; i < N; i++)
        for (int step = 1; step <= 5; step += 4) {
            const int j = (i + step) % N;
            double z[3];
            ref_se2_error(x[i], x[j], (const double[3]){0.0, 0.0, 0.0}, z);
            for (int a = 0; a < 3; a++) z[a] += 0.02 * sbm_test_rng_value(&rng);
            len += (size_t)snprintf(text + len, cap - len,
                                    "EDGE_SE2 %d %d %.17g %.17g %.17g 40 0 0 40 0 100\n", i, j,
                                    z[0], z[1], z[2]);
        }
    sbm_g2o_graph *g = g2o_from_text(e, "loop", text);
    free(text);
    return g;
}

/* What a run did, for the scenario's own assertions. */
typedef struct run_stats {
    int accepted, rejected, failed; /* steps taken, rejected, failed factorisations */
    int max_run;                    /* longest run of consecutive rejections */
    int reject_after_ok;            /* a rejection right after an acceptance */
    double min_factor;              /* smallest Nielsen factor after an acceptance */
    int damped_after_reject;        /* accepted steps right after a rejection whose damped
                                     * system was checked (test_slam_control) */
} run_stats;

#endif /* SBM_TEST_SLAM_TRACE_H */
