/* SPDX-License-Identifier: BSD-3-Clause */
/* SLAM iterations in the context's memory (src/slam with the backends' slam_* ops):
 *   - the linearisation (errors, J, Lambda = J^T Omega_eff J, b, the cost) against a dense host
 *     reference built from sbm__g2o_edge_error and losses written here, SE2 and SE3, without a
 *     loss and with Huber and Cauchy at scales that put half the edges in the outlier region;
 *   - b against central differences of the robust cost through g2o's increments;
 *   - robust solves whose every reported cost is the reference cost of the poses it returned;
 *   - determinism: the CPU backend bitwise the same with 1 and 2 threads, two runs bitwise equal;
 *   - [cuda] the CUDA backend against the CPU backend, cost per iteration to 1e-10 relative (or
 *     10x the trajectory's one-ulp sensitivity where larger) on every graph of tests/data (and
 *     the shared ones with SBM_DATA_DIR), and the transfers of
 *     an iteration (no host->device copy; device->host only 8-byte scalars) with each linear
 *     solver;
 *   - update_state_every_iteration: the graph's poses only at the end by default;
 *   - error paths (status and message). */
#define _POSIX_C_SOURCE 200809L

#include "slam_trace.h"

#include "slam_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SBM_TEST_QUICK=1 (the sanitizer runs): every kernel and path still runs, on the small graphs
 * of tests/data only (no shared data) and with few iterations. */
static int quick(void)
{
    const char *q = getenv("SBM_TEST_QUICK");
    return q && *q && strcmp(q, "0") != 0;
}

/* ---------------------------------------------------------------------------------------- */
/* References                                                                               */
/* ---------------------------------------------------------------------------------------- */

/* rho(s) and rho'(s) of Ceres' losses, written out here (type as sbm_loss_type). */
static void ref_rho(sbm_loss loss, double s, double *rho, double *rho1)
{
    const double a = loss.scale, b = a * a;
    if (loss.type == SBM_LOSS_HUBER && s > b) {
        *rho = 2.0 * a * sqrt(s) - b;
        *rho1 = a / sqrt(s);
    } else if (loss.type == SBM_LOSS_CAUCHY) {
        *rho = b * log1p(s / b);
        *rho1 = 1.0 / (1.0 + s / b);
    } else {
        *rho = s;
        *rho1 = 1.0;
    }
}

/* e^T Omega e of edge k at the graph's poses (e and J by sbm__g2o_edge_error). */
static double edge_s(const sbm_g2o_graph *g, int64_t k, double *e, double *Ji, double *Jj)
{
    const sbm_g2o_info gi = sbm_g2o_get_info(g);
    const int d = gi.error_dim;
    sbm__g2o_edge_error(g, k, e, Ji, Jj);
    const double *om = gi.edge_information + d * d * k;
    double s = 0.0;
    for (int a = 0; a < d; a++)
        for (int c = 0; c < d; c++) s += e[a] * om[a + d * c] * e[c];
    return s;
}

/* 0.5 sum rho(s) at the graph's poses. */
static double ref_cost(const sbm_g2o_graph *g, sbm_loss loss)
{
    double cost = 0.0, e[6], rho, rho1;
    for (int64_t k = 0; k < sbm_g2o_get_info(g).edges; k++) {
        ref_rho(loss, edge_s(g, k, e, NULL, NULL), &rho, &rho1);
        cost += 0.5 * rho;
    }
    return cost;
}

/* Dense Lambda (n x n, upper block triangle kept) and b of the robust system; Omega_eff =
 * rho' Omega (Huber and Cauchy have rho'' <= 0: no second-order correction). */
static void ref_system(const sbm_g2o_graph *g, sbm_loss loss, double *L, double *b)
{
    const sbm_g2o_info gi = sbm_g2o_get_info(g);
    const int d = gi.error_dim;
    int64_t nf = 0, *col = malloc((size_t)gi.vertices * sizeof(int64_t));
    for (int64_t v = 0; v < gi.vertices; v++) col[v] = gi.is_fixed[v] ? -1 : nf++;
    const int64_t n = d * nf;
    memset(L, 0, (size_t)(n * n) * sizeof(double));
    memset(b, 0, (size_t)n * sizeof(double));
    for (int64_t k = 0; k < gi.edges; k++) {
        double e[6], J[2][36], rho, rho1;
        ref_rho(loss, edge_s(g, k, e, J[0], J[1]), &rho, &rho1);
        const double *om = gi.edge_information + d * d * k;
        const int64_t c[2] = {col[gi.edge_from[k]], col[gi.edge_to[k]]};
        for (int p = 0; p < 2; p++) {
            if (c[p] < 0) continue;
            /* b += rho' Jp^T Omega e */
            for (int a = 0; a < d; a++)
                for (int r = 0; r < d; r++)
                    for (int q = 0; q < d; q++)
                        b[d * c[p] + a] += rho1 * J[p][r + d * a] * om[r + d * q] * e[q];
            for (int t = 0; t < 2; t++) {
                if (c[t] < 0 || c[p] > c[t]) continue; /* upper block triangle */
                for (int a = 0; a < d; a++)
                    for (int bb = 0; bb < d; bb++) {
                        double sum = 0.0;
                        for (int r = 0; r < d; r++)
                            for (int q = 0; q < d; q++)
                                sum += J[p][r + d * a] * om[r + d * q] * J[t][q + d * bb];
                        L[(d * c[p] + a) + n * (d * c[t] + bb)] += rho1 * sum;
                    }
            }
        }
    }
    free(col);
}

/* A scale a with a^2 between the two middle values of the edges' s: half of the edges lie in
 * the outlier region and none on Huber's kink. */
static double median_scale(const sbm_g2o_graph *g)
{
    const int64_t ne = sbm_g2o_get_info(g).edges;
    double *s = malloc((size_t)ne * sizeof(double)), e[6];
    for (int64_t k = 0; k < ne; k++) s[k] = edge_s(g, k, e, NULL, NULL);
    for (int64_t i = 1; i < ne; i++) /* insertion sort: small graphs */
        for (int64_t j = i; j > 0 && s[j - 1] > s[j]; j--) {
            const double t = s[j];
            s[j] = s[j - 1], s[j - 1] = t;
        }
    const double a = sqrt(sqrt(s[ne / 2 - 1] * s[ne / 2]));
    assert_true(s[ne / 2 - 1] < s[ne / 2]);
    free(s);
    return a;
}

static sbm_g2o_graph *read_graph(sbm_test_env *e, const char *name)
{
    char rel[128];
    snprintf(rel, sizeof rel, "g2o/%s.g2o", name);
    sbm_g2o_graph *g = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, sbm_test_data_path(rel), &g));
    return g;
}

/* The small graphs of the reference checks: the noisy SE2 loop, and tinyGrid3D (SE3) with its
 * poses moved by up to 0.3 m and rotated a little (seeded), far enough from its optimum for
 * errors well above the finite differences' steps. */
static sbm_g2o_graph *small_graph(sbm_test_env *e, int dim)
{
    if (dim == 2) return noisy_se2_loop(e, 41, 1.0, 0.5);
    sbm_g2o_graph *g = read_graph(e, "tinyGrid3D");
    const sbm_g2o_info gi = sbm_g2o_get_info(g);
    sbm_test_rng rng = sbm_test_rng_seed(43);
    for (int64_t v = 0; v < gi.vertices; v++) {
        double *x = gi.poses + 7 * v, n = 0.0;
        for (int a = 0; a < 7; a++) x[a] += (a < 3 ? 0.3 : 0.05) * sbm_test_rng_value(&rng);
        for (int a = 3; a < 7; a++) n += x[a] * x[a];
        for (int a = 3; a < 7; a++) x[a] /= sqrt(n);
    }
    return g;
}

/* ---------------------------------------------------------------------------------------- */
/* The linearisation against the dense reference                                            */
/* ---------------------------------------------------------------------------------------- */

static void check_linearization(sbm_test_env *e, const sbm_g2o_graph *g, sbm_loss loss,
                                const char *what)
{
    sbm_slam_system *sys = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_slam_system_create(e->ctx, g, &sys));
    SBM_ASSERT_OK(e->ctx, sbm__slam_system_set_loss(e->ctx, sys, &loss));
    SBM_ASSERT_OK(e->ctx, sbm_slam_linearize(e->ctx, sys, g));
    const sbm_slam_system_info si = sbm_slam_system_get_info(sys);
    const int64_t n = si.free_vertices * si.error_dim;
    double *L = malloc((size_t)(n * n) * sizeof(double)), *b = malloc((size_t)n * sizeof(double));
    double *got_b = malloc((size_t)n * sizeof(double));
    ref_system(g, loss, L, b);
    print_message("  %s (%s, scale %.4g): n = %d\n", what, sbm_loss_name(loss.type), loss.scale,
                  (int)n);
    sbm_test_assert_cbc_dense(si.Lambda, L, 1e-10);
    SBM_ASSERT_OK(e->ctx, sbm_slam_system_get_b(e->ctx, sys, got_b));
    sbm_test_assert_near(got_b, b, n, 1e-10, "b");
    const double want = ref_cost(g, loss);
    if (!(fabs(0.5 * si.chi2 - want) <= 1e-12 * want))
        fail_msg("%s: cost %.17g, reference %.17g", what, 0.5 * si.chi2, want);
    free(L), free(b), free(got_b);
    sbm_slam_system_destroy(sys);
}

static void test_linearize_reference(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (int dim = 2; dim <= 3; dim++) {
        sbm_g2o_graph *g = small_graph(e, dim);
        const double a = median_scale(g);
        const sbm_loss losses[] = {{SBM_LOSS_NONE, 1.0}, {SBM_LOSS_HUBER, a},
                                   {SBM_LOSS_CAUCHY, a}, {SBM_LOSS_NONE, 1.0}};
        /* the last NONE after CAUCHY: the system's Omega goes back to the information read */
        for (int l = 0; l < 4; l++) check_linearization(e, g, losses[l], dim == 2 ? "SE2" : "SE3");
        sbm_g2o_destroy(g);
    }
}

/* b = gradient of the robust cost 0.5 sum rho w.r.t. g2o's increments, by central differences
 * of the reference cost. */
static void test_gradient_finite_differences(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (int dim = 2; dim <= 3; dim++)
        for (int l = 0; l < 3; l++) {
            sbm_g2o_graph *g = small_graph(e, dim);
            const sbm_g2o_info gi = sbm_g2o_get_info(g);
            const sbm_loss loss = {(sbm_loss_type)l, median_scale(g)};
            sbm_slam_system *sys = NULL;
            SBM_ASSERT_OK(e->ctx, sbm_slam_system_create(e->ctx, g, &sys));
            SBM_ASSERT_OK(e->ctx, sbm__slam_system_set_loss(e->ctx, sys, &loss));
            SBM_ASSERT_OK(e->ctx, sbm_slam_linearize(e->ctx, sys, g));
            const int d = gi.error_dim, ps = gi.pose_size;
            const int64_t n = sbm_slam_system_get_info(sys).free_vertices * d;
            double *b = malloc((size_t)n * sizeof(double));
            double *fd = malloc((size_t)n * sizeof(double));
            SBM_ASSERT_OK(e->ctx, sbm_slam_system_get_b(e->ctx, sys, b));
            const double h = 1e-6;
            for (int64_t v = 0, j = 0; v < gi.vertices; v++) {
                if (gi.is_fixed[v]) continue;
                double *x = gi.poses + ps * v, saved[7];
                memcpy(saved, x, (size_t)ps * sizeof(double));
                for (int a = 0; a < d; a++) {
                    double c[2];
                    for (int sgn = 0; sgn < 2; sgn++) {
                        double inc[6] = {0};
                        inc[a] = sgn ? -h : h;
                        if (dim == 2)
                            sbm__se2_oplus(x, inc);
                        else
                            sbm__se3_oplus(x, inc);
                        c[sgn] = ref_cost(g, loss);
                        memcpy(x, saved, (size_t)ps * sizeof(double));
                    }
                    fd[d * j + a] = (c[0] - c[1]) / (2.0 * h);
                }
                j++;
            }
            print_message("  SE%d, %s: %d unknowns\n", dim, sbm_loss_name(loss.type), (int)n);
            sbm_test_assert_near(b, fd, n, 1e-6, "b against central differences");
            free(b), free(fd);
            sbm_slam_system_destroy(sys);
            sbm_g2o_destroy(g);
        }
}

/* ---------------------------------------------------------------------------------------- */
/* Robust solves                                                                            */
/* ---------------------------------------------------------------------------------------- */

typedef struct cost_trace {
    const sbm_g2o_graph *g;
    sbm_loss loss;
    int n;
    double cost[MAX_IT];   /* reported */
    double actual[MAX_IT]; /* the reference cost of the poses after the iteration */
    int accepted[MAX_IT];
} cost_trace;

static void record_cost(void *user, const sbm_iteration_report *r)
{
    cost_trace *t = user;
    if (t->n >= MAX_IT) fail_msg("more than %d iterations", MAX_IT);
    t->cost[t->n] = r->cost;
    t->accepted[t->n] = r->accepted;
    t->actual[t->n++] = t->g ? ref_cost(t->g, t->loss) : 0.0;
}

/* Huber and Cauchy on the noisy loop with gross outliers (three measurements 5 m off), with
 * each linear solver and both methods: every reported cost is the robust cost of the poses the
 * graph holds after that iteration, it never rises, and the outliers end with a far smaller
 * weight than under the plain loss. */
static void test_robust_solve(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const sbm_linear_solver kinds[] = {SBM_LINEAR_SPARSE_CHOLESKY, SBM_LINEAR_DENSE_CHOLESKY,
                                       SBM_LINEAR_PCG};
    for (int l = 1; l <= (quick() ? 1 : 2); l++) /* quick: Cauchy is linearised elsewhere */
        for (int k = 0; k < 3; k++)
            for (int m = 0; m < 2; m++) {
                sbm_g2o_graph *g = noisy_se2_loop(e, 5, 0.3, 0.1);
                const sbm_g2o_info gi = sbm_g2o_get_info(g);
                for (int64_t q = 3; q < gi.edges; q += gi.edges / 3)
                    ((double *)gi.edge_measurement)[3 * q] += 5.0;
                cost_trace t;
                memset(&t, 0, sizeof t);
                t.g = g, t.loss.type = (sbm_loss_type)l, t.loss.scale = 0.5;
                sbm_solver_options o = sbm_solver_default_options();
                o.loss = t.loss;
                o.linear_solver = kinds[k];
                o.method = m ? SBM_METHOD_GAUSS_NEWTON : SBM_METHOD_LEVENBERG_MARQUARDT;
                o.max_iterations = quick() ? 4 : 30;
                o.pcg_tolerance = 1e-12;
                o.callback = record_cost, o.user = &t;
                o.update_state_every_iteration = 1; /* record_cost reads the poses */
                sbm_solver_summary s;
                const double start = ref_cost(g, t.loss);
                SBM_TEST_OK_OR_SKIP(e, sbm_slam_solve(e->ctx, g, &o, &s));
                print_message("  %s, solver %d, %s: %.6e -> %.6e in %d iterations, %s\n",
                              sbm_loss_name(t.loss.type), (int)kinds[k], m ? "GN" : "LM",
                              s.initial_cost, s.final_cost, s.iterations,
                              sbm_stop_reason_name(s.stop_reason));
                assert_true(fabs(s.initial_cost - start) <= 1e-12 * start);
                assert_true(s.final_cost < (quick() ? 1.0 : 0.5) * s.initial_cost);
                double prev = s.initial_cost;
                for (int i = 0; i < t.n; i++) {
                    assert_cost(t.cost[i], t.actual[i], "robust cost", i + 1);
                    assert_true(t.cost[i] <= prev);
                    prev = t.cost[i];
                }
                assert_cost(s.final_cost, ref_cost(g, t.loss), "final robust cost", t.n);
                sbm_g2o_destroy(g);
            }
}

/* ---------------------------------------------------------------------------------------- */
/* Determinism and the CUDA backend against the CPU backend                                 */
/* ---------------------------------------------------------------------------------------- */

static const char *const files[] = {"CSAIL",          "intel",       "manhattan", "parking-garage",
                                    "smallGrid3D",    "sphere2500",  "tinyGrid3D"};
#define NFILES (sizeof files / sizeof files[0])

/* Solve a fresh copy of path on ctx (iterations at most, the loss): the reported costs into t,
 * the final poses into a malloc'd array. nudge: every free pose value moved up by one ulp
 * first. */
static double *solve_from(sbm_ctx *ctx, const char *path, sbm_loss loss, sbm_linear_solver ls,
                          int iterations, int nudge, cost_trace *t, sbm_solver_summary *s)
{
    sbm_g2o_graph *g = NULL;
    SBM_ASSERT_OK(ctx, sbm_g2o_read(ctx, path, &g));
    const sbm_g2o_info g0 = sbm_g2o_get_info(g);
    for (int64_t i = 0; nudge && i < g0.pose_size * g0.vertices; i++)
        if (!g0.is_fixed[i / g0.pose_size]) g0.poses[i] = nextafter(g0.poses[i], INFINITY);
    memset(t, 0, sizeof *t);
    sbm_solver_options o = sbm_solver_default_options();
    o.loss = loss;
    o.linear_solver = ls;
    o.max_iterations = iterations;
    o.callback = record_cost, o.user = t;
    SBM_ASSERT_OK(ctx, sbm_slam_solve(ctx, g, &o, s));
    const sbm_g2o_info gi = sbm_g2o_get_info(g);
    const size_t bytes = (size_t)(gi.pose_size * gi.vertices) * sizeof(double);
    double *x = malloc(bytes);
    memcpy(x, gi.poses, bytes);
    sbm_g2o_destroy(g);
    return x;
}

static double *traced_solve(sbm_ctx *ctx, const char *path, sbm_loss loss, sbm_linear_solver ls,
                            int iterations, cost_trace *t, sbm_solver_summary *s)
{
    return solve_from(ctx, path, loss, ls, iterations, 0, t, s);
}

static int64_t file_pose_values(sbm_ctx *ctx, const char *path)
{
    sbm_g2o_graph *g = NULL;
    SBM_ASSERT_OK(ctx, sbm_g2o_read(ctx, path, &g));
    const sbm_g2o_info gi = sbm_g2o_get_info(g);
    const int64_t np = gi.pose_size * gi.vertices;
    sbm_g2o_destroy(g);
    return np;
}

/* The CPU backend with 1 and 2 threads (sbm_tuning.num_threads), and twice with 2: bitwise the same costs and
 * poses, with and without a loss, on graphs with enough edges for two threads (2048 each at
 * least: manhattan, SE2, 5453 edges; parking-garage, SE3, 6275). Four iterations keep it
 * short under valgrind. */
static void test_threads_bitwise(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_tuning saved;
    SBM_ASSERT_OK(e->ctx, sbm_ctx_get_tuning(e->ctx, &saved));
    static const char *const big[] = {"manhattan", "parking-garage"};
    for (size_t f = 0; f < (quick() ? 1 : sizeof big / sizeof big[0]); f++)
        for (int l = 0; l < (quick() ? 1 : 2); l++) {
            char rel[128];
            snprintf(rel, sizeof rel, "g2o/%s.g2o", big[f]);
            const char *path = sbm_test_data_path(rel);
            const int64_t np = file_pose_values(e->ctx, path);
            const sbm_loss loss = {l ? SBM_LOSS_HUBER : SBM_LOSS_NONE, 1.0};
            cost_trace t[3];
            sbm_solver_summary s[3];
            double *x[3];
            for (int r = 0; r < 3; r++) {
                sbm_tuning tune = saved;
                tune.num_threads = r == 0 ? 1 : 2;
                SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, &tune));
                x[r] = traced_solve(e->ctx, path, loss, SBM_LINEAR_SPARSE_CHOLESKY,
                                    quick() ? 2 : 4, &t[r], &s[r]);
            }
            print_message("  %s, %s: %d iterations, cost %.10e\n", big[f],
                          sbm_loss_name(loss.type), t[0].n, s[0].final_cost);
            for (int r = 1; r < 3; r++) {
                assert_int_equal(t[r].n, t[0].n);
                assert_memory_equal(t[r].cost, t[0].cost, (size_t)t[0].n * sizeof(double));
                assert_memory_equal(x[r], x[0], (size_t)np * sizeof(double));
                assert_true(s[r].final_gradient_norm == s[0].final_gradient_norm);
            }
            for (int r = 0; r < 3; r++) free(x[r]);
        }
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, &saved));
}

/* Two runs of the CUDA backend agree bitwise (its sums have a fixed order; the CPU backend's
 * runs are compared in test_threads_bitwise). */
static void test_runs_bitwise(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const char *names[] = {"sphere2500", "parking-garage", "tinyGrid3D"};
    for (int f = quick() ? 2 : 0; f < (quick() ? 3 : 2); f++)
        for (int k = 0; k < 2; k++) {
            char rel[128];
            snprintf(rel, sizeof rel, "g2o/%s.g2o", names[f]);
            const char *path = sbm_test_data_path(rel);
            const int64_t np = file_pose_values(e->ctx, path);
            const sbm_loss loss = {SBM_LOSS_CAUCHY, 1.0};
            const sbm_linear_solver ls = k ? SBM_LINEAR_PCG : SBM_LINEAR_SPARSE_CHOLESKY;
            cost_trace t[2];
            sbm_solver_summary s[2];
            double *x[2];
            for (int r = 0; r < 2; r++)
                x[r] = traced_solve(e->ctx, path, loss, ls, quick() ? 3 : 10, &t[r], &s[r]);
            assert_int_equal(t[1].n, t[0].n);
            assert_memory_equal(t[1].cost, t[0].cost, (size_t)t[0].n * sizeof(double));
            assert_memory_equal(x[1], x[0], (size_t)np * sizeof(double));
            free(x[0]), free(x[1]);
        }
}

/* One graph on the CUDA context and on the host one: the same iterations, steps taken and stop,
 * and each cost to 1e-10 relative, or to 10 times the trajectory's own sensitivity to rounding
 * where that is larger: the largest relative cost difference so far between the CPU run and a
 * CPU run from the start poses moved by one ulp (manhattan without a loss: 8e-10 at iteration 4,
 * its far-off start and large early steps; the CPU backend on another machine's OpenBLAS
 * differs from this one's by 1.6e-10 there). */
static void compare_backends(sbm_test_env *e, const char *path, const char *name, sbm_loss loss)
{
    const int its = quick() ? 8 : 50;
    cost_trace tc, th, tn;
    sbm_solver_summary sc, sh, sn;
    double *xc = solve_from(e->ctx, path, loss, SBM_LINEAR_SPARSE_CHOLESKY, its, 0, &tc, &sc);
    double *xh = solve_from(e->host, path, loss, SBM_LINEAR_SPARSE_CHOLESKY, its, 0, &th, &sh);
    double *xn = solve_from(e->host, path, loss, SBM_LINEAR_SPARSE_CHOLESKY, its, 1, &tn, &sn);
    assert_int_equal(tc.n, th.n);
    double sens = 0.0, worst = 0.0;
    for (int i = 0; i < tc.n; i++) {
        assert_int_equal(tc.accepted[i], th.accepted[i]);
        const double ref = fabs(th.cost[i]);
        if (i < tn.n) sens = fmax(sens, fabs(tn.cost[i] - th.cost[i]) / ref);
        const double rel = fabs(tc.cost[i] - th.cost[i]) / ref, tol = fmax(1e-10, 10.0 * sens);
        worst = fmax(worst, rel);
        if (!(rel <= tol))
            fail_msg("%s, %s, iteration %d: cost %.17g on CUDA, %.17g on the CPU (%.2e relative; "
                     "tolerance %.2e, the CPU trajectory's sensitivity %.2e)",
                     name, sbm_loss_name(loss.type), i + 1, tc.cost[i], th.cost[i], rel, tol, sens);
    }
    print_message("  %s, %s: %d iterations, cost %.12e (CUDA) %.12e (CPU); per iteration at most "
                  "%.2e relative apart, one-ulp sensitivity %.2e\n",
                  name, sbm_loss_name(loss.type), tc.n, sc.final_cost, sh.final_cost, worst, sens);
    assert_int_equal(sc.stop_reason, sh.stop_reason);
    free(xc), free(xh), free(xn);
}

static void test_cuda_matches_cpu(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (size_t f = 0; f < NFILES; f++)
        for (int l = 0; l < 3; l++) {
            char rel[128];
            snprintf(rel, sizeof rel, "g2o/%s.g2o", files[f]);
            if (quick() && strcmp(files[f], "tinyGrid3D")) continue;
            compare_backends(e, sbm_test_data_path(rel), files[f],
                             (sbm_loss){(sbm_loss_type)l, 1.0});
        }
}

/* The same on the graphs only in the shared data folder (SBM_DATA_DIR): skipped visibly when any
 * is absent, and with SBM_TEST_QUICK. */
static void test_cuda_matches_cpu_extra(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    if (quick()) {
        print_message("[  SKIP    ] SBM_TEST_QUICK: the large shared graphs are left out\n");
        skip();
    }
    static const char *const extra[] = {"ais2klinik", "kitti_05", "sphere_bignoise_vertex3"};
    int found = 0;
    for (size_t f = 0; f < sizeof extra / sizeof extra[0]; f++) {
        char rel[128];
        snprintf(rel, sizeof rel, "g2o/%s.g2o", extra[f]);
        const char *path = sbm_test_extra_data_find(rel);
        if (path) compare_backends(e, path, extra[f], (sbm_loss){SBM_LOSS_NONE, 1.0});
        found += path != NULL;
    }
    sbm_test_extra_data_done(found, (int)(sizeof extra / sizeof extra[0]));
}

/* ---------------------------------------------------------------------------------------- */
/* Transfers of an iteration                                                                */
/* ---------------------------------------------------------------------------------------- */

typedef struct transfer_trace {
    sbm_ctx *ctx;
    const double *poses, *start; /* the graph's poses, and a copy of them at the start */
    size_t bytes;
    int n, moved;
    sbm__stats at[MAX_IT];
} transfer_trace;

static void record_stats(void *user, const sbm_iteration_report *r)
{
    transfer_trace *t = user;
    (void)r;
    if (t->n < MAX_IT) t->at[t->n++] = sbm__stats_get(t->ctx);
    t->moved += memcmp(t->poses, t->start, t->bytes) != 0;
}

/* update_state_every_iteration = 0 (the default): the graph keeps its starting poses while the
 * solve iterates and gets the result when it returns. */
static void test_update_state(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_g2o_graph *g = noisy_se2_loop(e, 9, 0.5, 0.2);
    const sbm_g2o_info gi = sbm_g2o_get_info(g);
    transfer_trace t;
    memset(&t, 0, sizeof t);
    t.ctx = e->ctx, t.poses = gi.poses, t.bytes = (size_t)(3 * gi.vertices) * sizeof(double);
    double *start = malloc(t.bytes);
    memcpy(start, gi.poses, t.bytes);
    t.start = start;
    sbm_solver_options o = sbm_solver_default_options();
    o.callback = record_stats, o.user = &t;
    o.max_iterations = quick() ? 4 : 50;
    sbm_solver_summary s;
    SBM_ASSERT_OK(e->ctx, sbm_slam_solve(e->ctx, g, &o, &s));
    assert_true(s.accepted >= 2);
    assert_int_equal(t.n, s.iterations);
    assert_int_equal(t.moved, 0);
    assert_true(memcmp(gi.poses, start, t.bytes) != 0);
    assert_cost(s.final_cost, ref_cost(g, o.loss), "final cost", s.iterations);
    o.update_state_every_iteration = 2;
    SBM_ASSERT_FAILS(e->ctx, sbm_slam_solve(e->ctx, g, &o, NULL), SBM_ERR_INVALID_ARGUMENT,
                     "update_state_every_iteration = 2 must be 0 or 1");
    free(start);
    sbm_g2o_destroy(g);
}

/* Between two callbacks (iterations 2, 3, ...): no host->device copy, and every device->host
 * copy a scalar of 8 bytes (update_state_every_iteration 0: the poses stay on the device), with
 * each linear solver (the dense Cholesky too: cuSOLVER where Lambda lives). intel has 3684
 * unknowns, parking-garage 9960: both within the dense solver's 30000. */
static void test_iteration_transfers(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const sbm_linear_solver kinds[] = {SBM_LINEAR_SPARSE_CHOLESKY, SBM_LINEAR_PCG,
                                       SBM_LINEAR_DENSE_CHOLESKY};
    for (int k = 0; k < 3; k++)
        for (int l = 0; l < (quick() ? 1 : 2); l++) {
            const char *name = quick() ? "tinyGrid3D" : l ? "parking-garage" : "intel";
            sbm_g2o_graph *g = read_graph(e, name);
            const sbm_g2o_info gi = sbm_g2o_get_info(g);
            transfer_trace t;
            memset(&t, 0, sizeof t);
            t.ctx = e->ctx, t.poses = t.start = gi.poses, t.bytes = 0;
            sbm_solver_options o = sbm_solver_default_options();
            o.linear_solver = kinds[k];
            o.loss.type = l ? SBM_LOSS_CAUCHY : SBM_LOSS_HUBER;
            o.loss.scale = 1.0;
            o.max_iterations = quick() ? 4 : 8;
            o.callback = record_stats, o.user = &t;
            sbm_solver_summary s;
            SBM_ASSERT_OK(e->ctx, sbm_slam_solve(e->ctx, g, &o, &s));
            assert_true(t.n >= 3);
            for (int i = 1; i < t.n; i++) {
                const uint64_t h2d = t.at[i].h2d_copies - t.at[i - 1].h2d_copies;
                const uint64_t d2h = t.at[i].d2h_copies - t.at[i - 1].d2h_copies;
                const uint64_t bytes = t.at[i].d2h_bytes - t.at[i - 1].d2h_bytes;
                print_message("  solver %d, iteration %d: %d host->device, %d device->host "
                              "copies (%d bytes)\n",
                              (int)kinds[k], i + 1, (int)h2d, (int)d2h, (int)bytes);
                assert_int_equal(h2d, 0);
                assert_true(d2h >= 1);
                assert_int_equal(bytes, 8 * d2h);
            }
            sbm_g2o_destroy(g);
        }
}

/* ---------------------------------------------------------------------------------------- */
/* Errors                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static void test_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_g2o_graph *g = noisy_se2_loop(e, 3, 0.2, 0.1);
    const double before = ref_cost(g, (sbm_loss){SBM_LOSS_NONE, 1.0});
    sbm_solver_options o = sbm_solver_default_options();
    o.loss.type = SBM_LOSS_HUBER;
    o.loss.scale = 0.0;
    SBM_ASSERT_FAILS(e->ctx, sbm_slam_solve(e->ctx, g, &o, NULL), SBM_ERR_INVALID_ARGUMENT,
                     "sbm_slam_solve: argument options: loss.scale = 0 must be finite and > 0 "
                     "(loss huber)");
    o.loss.scale = NAN;
    SBM_ASSERT_FAILS(e->ctx, sbm_slam_solve(e->ctx, g, &o, NULL), SBM_ERR_INVALID_ARGUMENT,
                     "loss.scale = nan");
    o.loss.type = (sbm_loss_type)7;
    o.loss.scale = 1.0;
    SBM_ASSERT_FAILS(e->ctx, sbm_slam_solve(e->ctx, g, &o, NULL), SBM_ERR_INVALID_ARGUMENT,
                     "loss.type = 7 is not an sbm_loss_type");
    /* refused before anything moved */
    assert_true(ref_cost(g, (sbm_loss){SBM_LOSS_NONE, 1.0}) == before);

    /* Gauss-Newton on a Lambda that is not positive definite, with a robust loss: the error
     * names the vertex, and the graph keeps its poses */
    const sbm_g2o_info gi = sbm_g2o_get_info(g);
    double *om = (double *)gi.edge_information;
    for (int a = 0; a < 9; a++) om[a] = a % 4 == 0 ? -1e4 : 0.0; /* edge 0 (vertices 0, 1) */
    o = sbm_solver_default_options();
    o.method = SBM_METHOD_GAUSS_NEWTON;
    o.loss.type = SBM_LOSS_HUBER; /* e^T Omega e < 0 is Huber's inlier side: rho = s */
    const double start = ref_cost(g, o.loss);
    for (int k = 0; k < 2; k++) {
        o.linear_solver = k ? SBM_LINEAR_PCG : SBM_LINEAR_SPARSE_CHOLESKY;
        sbm_status st = sbm_slam_solve(e->ctx, g, &o, NULL);
        if (st == SBM_SUCCESS) fail_msg("an indefinite Lambda was solved (solver %d)", k);
        assert_int_equal(st, SBM_ERR_NOT_POSITIVE_DEFINITE);
        const char *msg = sbm_ctx_last_error(e->ctx);
        print_message("  %s\n", msg);
        assert_non_null(strstr(msg, "sbm_slam_solve: Lambda is not positive definite at vertex"));
        assert_true(ref_cost(g, o.loss) == start);
    }
    sbm_g2o_destroy(g);

    /* LM from lambda = DBL_MAX: the damped copy's diagonal overflows (dense Cholesky, PCG), a
     * failed step whose message names the first vertex, then no progress */
    for (int k = 0; k < 2; k++) {
        g = noisy_se2_loop(e, 3, 0.2, 0.1);
        o = sbm_solver_default_options();
        o.linear_solver = k ? SBM_LINEAR_PCG : SBM_LINEAR_DENSE_CHOLESKY;
        o.initial_lambda = DBL_MAX;
        o.loss.type = SBM_LOSS_CAUCHY;
        sbm_solver_summary s;
        sbm_ctx_clear_error(e->ctx);
        SBM_ASSERT_OK(e->ctx, sbm_slam_solve(e->ctx, g, &o, &s));
        assert_int_equal(s.stop_reason, SBM_STOP_NO_PROGRESS);
        assert_int_equal(s.linear_failures, 1);
        assert_int_equal(sbm_ctx_last_status(e->ctx), SBM_ERR_NOT_POSITIVE_DEFINITE);
        const char *msg = sbm_ctx_last_error(e->ctx);
        print_message("  %s\n", msg);
        assert_non_null(strstr(msg, "sbm_slam_solve: Lambda + damping (lambda 1.798e+308) is not "
                                    "positive definite at vertex 1 (free vertex 0; its damped "
                                    "diagonal overflows)"));
        sbm_g2o_destroy(g);
    }

    /* the internal entries refuse nothing, but the public ones still check their arguments */
    sbm_slam_system *sys = NULL;
    SBM_ASSERT_FAILS(e->ctx, sbm_slam_system_create(e->ctx, NULL, &sys), SBM_ERR_NULL_ARGUMENT,
                     "sbm_slam_system_create: argument graph is NULL");
}

/* A graph built in memory with a prior as its only gauge, a second fixed vertex set by
 * sbm_g2o_set_fixed and a Huber loss: the backend's solve against the CPU backend's, cost by
 * cost to 1e-10 relative, and the fixed vertex bitwise unchanged (sbm_g2o_graph_create). */
typedef struct inmem_trace {
    int n;
    double cost[64];
} inmem_trace;

static void inmem_trace_cost(void *user, const sbm_iteration_report *r)
{
    inmem_trace *t = user;
    if (t->n < 64) t->cost[t->n++] = r->cost;
}

static void test_inmem_prior_fixed(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    inmem_trace tr[2];
    for (int run = 0; run < 2; run++) {
        sbm_ctx *c = run == 0 ? e->ctx : e->host;
        sbm_g2o_graph *file = NULL, *g = NULL;
        SBM_ASSERT_OK(c, sbm_g2o_read(c, sbm_test_data_path("g2o/tinyGrid3D.g2o"), &file));
        const sbm_g2o_info fi = sbm_g2o_get_info(file);
        double z[7], info[36] = {0};
        memcpy(z, fi.poses + 7 * 3, sizeof z);
        z[0] += 0.3;
        for (int a = 0; a < 6; a++) info[7 * a] = 50.0;
        const int32_t pv = 3;
        sbm_g2o_graph_desc d;
        memset(&d, 0, sizeof d);
        d.dim = 3, d.gauge = SBM_GAUGE_REFUSE;
        d.vertices = fi.vertices, d.poses = fi.poses, d.vertex_id = fi.vertex_id;
        d.edges = fi.edges, d.edge_from = fi.edge_from, d.edge_to = fi.edge_to;
        d.edge_measurement = fi.edge_measurement, d.edge_information = fi.edge_information;
        d.priors = 1, d.prior_vertex = &pv, d.prior_measurement = z, d.prior_information = info;
        SBM_ASSERT_OK(c, sbm_g2o_graph_create(c, &d, &g));
        SBM_ASSERT_OK(c, sbm_g2o_set_fixed(c, g, 5, 1));
        double x5[7];
        memcpy(x5, fi.poses + 35, sizeof x5);
        sbm_solver_options o = sbm_solver_default_options();
        o.max_iterations = 8;
        o.loss.type = SBM_LOSS_HUBER, o.loss.scale = 1.0;
        o.callback = inmem_trace_cost, o.user = &tr[run];
        tr[run].n = 0;
        sbm_solver_summary s;
        SBM_ASSERT_OK(c, sbm_slam_solve(c, g, &o, &s));
        assert_true(s.final_cost < s.initial_cost);
        assert_memory_equal(sbm_g2o_get_info(g).poses + 35, x5, sizeof x5);
        sbm_g2o_destroy(g);
        sbm_g2o_destroy(file);
    }
    assert_int_equal(tr[0].n, tr[1].n);
    for (int k = 0; k < tr[0].n; k++)
        assert_true(fabs(tr[0].cost[k] - tr[1].cost[k]) <= 1e-10 * tr[1].cost[k]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_linearize_reference),
        SBM_TEST_BOTH(test_gradient_finite_differences),
        SBM_TEST_BOTH(test_robust_solve),
        SBM_TEST_CPU(test_threads_bitwise),
        SBM_TEST_CUDA(test_runs_bitwise),
        SBM_TEST_CUDA(test_cuda_matches_cpu),
        SBM_TEST_CUDA(test_cuda_matches_cpu_extra),
        SBM_TEST_BOTH(test_update_state),
        SBM_TEST_CUDA(test_iteration_transfers),
        SBM_TEST_BOTH(test_errors),
        SBM_TEST_BOTH(test_inmem_prior_fixed),
    };
    return cmocka_run_group_tests(tests, sbm_test_make_tmp_dir, sbm_test_remove_tmp_dir);
}
