/* SPDX-License-Identifier: BSD-3-Clause */
/* Bundle adjustment over a group of contexts (sbm_dist.h) on CPU contexts over the host stand-in
 * of the communicator: the camera partitions, the halo bookkeeping of the ranks' shares, and the
 * distributed Levenberg-Marquardt against the one-context solver with matrix-free PCG (the same
 * steps, stop reasons and costs to 1e-10 relative), with every error path of the API. */
#define _POSIX_C_SOURCE 200809L

#include "dist_internal.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sbm_bal_problem *make_problem(sbm_ctx *ctx, int64_t cameras, int64_t points, int obs,
                                     uint64_t seed)
{
    sbm_bal_generate_options g = sbm_bal_generate_defaults(cameras, points, obs, seed);
    sbm_bal_problem *p = NULL;
    SBM_ASSERT_OK(ctx, sbm_bal_generate(ctx, &g, &p));
    return p;
}

/* ---------------------------------------------------------------------------------------- */
/* Partitions                                                                               */
/* ---------------------------------------------------------------------------------------- */

/* Every camera in a part, every part non-empty, the observations balanced within a camera's
 * worth plus the average camera, and the same parts on a second call. */
static void check_partition(sbm_ctx *ctx, const sbm_bal_info *pi, int P,
                            sbm_partition_method m)
{
    int32_t *part = malloc((size_t)pi->cameras * sizeof(int32_t));
    int32_t *again = malloc((size_t)pi->cameras * sizeof(int32_t));
    int64_t *obs = calloc((size_t)P, sizeof(int64_t)), *cams = calloc((size_t)P, sizeof(int64_t));
    SBM_ASSERT_OK(ctx, sbm__dist_partition(ctx, pi, P, m, part));
    SBM_ASSERT_OK(ctx, sbm__dist_partition(ctx, pi, P, m, again));
    assert_memory_equal(part, again, (size_t)pi->cameras * sizeof(int32_t));
    for (int64_t c = 0; c < pi->cameras; c++) {
        assert_true(part[c] >= 0 && part[c] < P);
        cams[part[c]]++;
    }
    int64_t maxc = 0;
    for (int64_t k = 0; k < pi->observations; k++) obs[part[pi->obs_camera[k]]]++;
    int64_t *cnt = calloc((size_t)pi->cameras, sizeof(int64_t));
    for (int64_t k = 0; k < pi->observations; k++) cnt[pi->obs_camera[k]]++;
    for (int64_t c = 0; c < pi->cameras; c++) maxc = cnt[c] > maxc ? cnt[c] : maxc;
    const double avg = (double)pi->observations / P;
    for (int q = 0; q < P; q++) {
        assert_true(cams[q] >= 1);
        assert_true(fabs((double)obs[q] - avg) <= 2.0 * (double)maxc + avg / 2);
    }
    if (m == SBM_PARTITION_INDEX) /* ranges of camera numbers */
        for (int64_t c = 1; c < pi->cameras; c++) assert_true(part[c] >= part[c - 1]);
    free(part), free(again), free(obs), free(cams), free(cnt);
}

static void test_partition(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_problem *p = make_problem(e->ctx, 24, 300, 3, 7);
    const sbm_bal_info pi = sbm_bal_get_info(p);
    for (int P = 1; P <= 6; P++) {
        check_partition(e->ctx, &pi, P, SBM_PARTITION_INDEX);
        check_partition(e->ctx, &pi, P, SBM_PARTITION_GRAPH);
    }
    /* as many parts as cameras: one camera each */
    check_partition(e->ctx, &pi, 24, SBM_PARTITION_GRAPH);
    check_partition(e->ctx, &pi, 24, SBM_PARTITION_INDEX);
    int32_t part[32];
    SBM_ASSERT_FAILS(e->ctx, sbm__dist_partition(e->ctx, &pi, 25, SBM_PARTITION_GRAPH, part),
                     SBM_ERR_INVALID_ARGUMENT, "24 cameras cannot be shared among 25 ranks");
    SBM_ASSERT_FAILS(e->ctx, sbm__dist_partition(e->ctx, &pi, 2, (sbm_partition_method)5, part),
                     SBM_ERR_INVALID_ARGUMENT, "partition method 5 is not");
    sbm_bal_destroy(p);
}

/* A graph of two camera clusters that share no point: the graph partition of 2 parts finds
 * them (no shared point), where the index split of interleaved cameras shares every point. */
static void test_partition_clusters(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_problem *p = make_problem(e->ctx, 8, 40, 2, 3);
    const sbm_bal_info pi = sbm_bal_get_info(p);
    int32_t *oc = (int32_t *)pi.obs_camera;
    /* point j is seen by cameras of its parity only: 0,2,4,6 or 1,3,5,7 */
    int seen[40] = {0};
    for (int64_t k = 0; k < pi.observations; k++) {
        const int32_t j = pi.obs_point[k];
        oc[k] = (int32_t)((j % 2) + 2 * ((j / 2 + seen[j]++) % 4));
    }
    int32_t part[8];
    SBM_ASSERT_OK(e->ctx, sbm__dist_partition(e->ctx, &pi, 2, SBM_PARTITION_GRAPH, part));
    for (int c = 0; c < 8; c++) assert_int_equal(part[c], part[c % 2]);
    assert_int_not_equal(part[0], part[1]);
    sbm__dist_part sh;
    SBM_ASSERT_OK(e->ctx, sbm__dist_part_make(e->ctx, &pi, part, 0, 2, &sh));
    assert_int_equal(sh.nshared, 0);
    sbm__dist_part_free(&sh);
    SBM_ASSERT_OK(e->ctx, sbm__dist_partition(e->ctx, &pi, 2, SBM_PARTITION_INDEX, part));
    SBM_ASSERT_OK(e->ctx, sbm__dist_part_make(e->ctx, &pi, part, 0, 2, &sh));
    assert_true(sh.nshared > 0);
    sbm__dist_part_free(&sh);
    sbm_bal_destroy(p);
}

/* ---------------------------------------------------------------------------------------- */
/* Halo bookkeeping                                                                         */
/* ---------------------------------------------------------------------------------------- */

/* The shares of all ranks: the cameras partition the cameras, each rank holds exactly the points
 * its observations see, owned first (owner: the lowest rank seeing the point), and the halo
 * segments of r for p and of p for r list the same global points in the same order; every shared
 * point sums one entry per rank that sees it, in increasing rank. */
static void check_shares(sbm_ctx *ctx, const sbm_bal_info *pi, int P, sbm_partition_method m)
{
    int32_t *part = malloc((size_t)pi->cameras * sizeof(int32_t));
    SBM_ASSERT_OK(ctx, sbm__dist_partition(ctx, pi, P, m, part));
    sbm__dist_part *sh = calloc((size_t)P, sizeof *sh);
    for (int r = 0; r < P; r++) SBM_ASSERT_OK(ctx, sbm__dist_part_make(ctx, pi, part, r, P, &sh[r]));
    /* which ranks see each point (bit masks: P <= 8 here) */
    unsigned *mask = calloc((size_t)pi->points, sizeof(unsigned));
    for (int64_t k = 0; k < pi->observations; k++)
        mask[pi->obs_point[k]] |= 1u << part[pi->obs_camera[k]];
    int64_t cams = 0, obs = 0;
    for (int r = 0; r < P; r++) {
        const sbm__dist_part *a = &sh[r];
        cams += a->nc, obs += a->nobs;
        for (int64_t i = 0; i < a->nc; i++) assert_int_equal(part[a->cam_global[i]], r);
        int64_t seen = 0, shared = 0;
        for (int64_t j = 0; j < pi->points; j++) {
            seen += (mask[j] >> r) & 1;
            shared += ((mask[j] >> r) & 1) && (mask[j] & (mask[j] - 1));
        }
        assert_int_equal(a->np, seen);
        assert_int_equal(a->nshared, shared);
        for (int64_t j = 0; j < a->np; j++) {
            const unsigned mk = mask[a->pt_global[j]];
            assert_true((mk >> r) & 1);
            const int owner = __builtin_ctz(mk);
            assert_int_equal(j < a->np_owned, owner == r);
            if (j > 0 && j != a->np_owned) assert_true(a->pt_global[j] > a->pt_global[j - 1]);
        }
        for (int q = 0; q < P; q++) {
            const sbm__dist_part *b = &sh[q];
            assert_int_equal(a->seg_count[q], b->seg_count[r]);
            for (int64_t e = 0; e < a->seg_count[q]; e++)
                assert_int_equal(a->pt_global[a->pack[a->seg_off[q] + e]],
                                 b->pt_global[b->pack[b->seg_off[r] + e]]);
        }
        for (int64_t s = 0; s < a->nshared; s++) {
            const unsigned mk = mask[a->pt_global[a->sum_pt[s]]];
            assert_int_equal(a->sum_ptr[s + 1] - a->sum_ptr[s], __builtin_popcount(mk));
            int prev = -1;
            for (int64_t e = a->sum_ptr[s]; e < a->sum_ptr[s + 1]; e++) {
                const int64_t ent = a->sum_ent[e];
                int q = 0;
                while (ent >= a->seg_off[q + 1]) q++;
                assert_true(q > prev && ((mk >> q) & 1));
                prev = q;
                assert_int_equal(a->pack[ent], a->sum_pt[s]);
            }
        }
    }
    assert_int_equal(cams, pi->cameras);
    assert_int_equal(obs, pi->observations);
    for (int r = 0; r < P; r++) sbm__dist_part_free(&sh[r]);
    free(sh), free(mask), free(part);
}

static void test_halo_bookkeeping(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_problem *p = make_problem(e->ctx, 20, 200, 4, 11);
    const sbm_bal_info pi = sbm_bal_get_info(p);
    for (int P = 1; P <= 5; P++) {
        check_shares(e->ctx, &pi, P, SBM_PARTITION_GRAPH);
        check_shares(e->ctx, &pi, P, SBM_PARTITION_INDEX);
    }
    sbm_bal_destroy(p);
}

/* The local problem of a share: its observations are the global ones renumbered, its parameters
 * the global ones. */
static void test_local_problem(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_problem *p = make_problem(e->ctx, 12, 80, 3, 5);
    const sbm_bal_info pi = sbm_bal_get_info(p);
    int32_t part[12];
    SBM_ASSERT_OK(e->ctx, sbm__dist_partition(e->ctx, &pi, 3, SBM_PARTITION_GRAPH, part));
    for (int r = 0; r < 3; r++) {
        sbm__dist_part sh;
        sbm_bal_problem *lp = NULL;
        SBM_ASSERT_OK(e->ctx, sbm__dist_part_make(e->ctx, &pi, part, r, 3, &sh));
        SBM_ASSERT_OK(e->ctx, sbm__dist_part_problem(e->ctx, &pi, &sh, &lp));
        const sbm_bal_info li = sbm_bal_get_info(lp);
        assert_int_equal(li.observations, sh.nobs);
        for (int64_t k = 0; k < li.observations; k++) {
            const int64_t g = sh.obs_global[k];
            assert_int_equal(sh.cam_global[li.obs_camera[k]], pi.obs_camera[g]);
            assert_int_equal(sh.pt_global[li.obs_point[k]], pi.obs_point[g]);
            assert_true(li.obs_xy[2 * k] == pi.obs_xy[2 * g]);
        }
        for (int64_t j = 0; j < li.points; j++)
            assert_memory_equal(li.point_params + 3 * j, pi.point_params + 3 * sh.pt_global[j], 24);
        sbm_bal_destroy(lp);
        sbm__dist_part_free(&sh);
    }
    sbm_bal_destroy(p);
}

/* ---------------------------------------------------------------------------------------- */
/* The distributed solver against the one-context one                                       */
/* ---------------------------------------------------------------------------------------- */

#define MAX_IT 64
typedef struct lm_log {
    int n;
    sbm_iteration_report rep[MAX_IT];
} lm_log;

static void log_iteration(void *user, const sbm_iteration_report *r)
{
    lm_log *g = user;
    if (g->n < MAX_IT) g->rep[g->n++] = *r;
}

static double rel(double a, double b)
{
    const double d = fabs(a - b), m = fmax(fabs(a), fabs(b));
    return m > 0.0 ? d / m : d;
}

/* One solve on one context and on a CPU group of P ranks, from the same start: the same
 * iterations, acceptances, PCG iteration counts and stop reason, the costs to 1e-10 relative,
 * the parameters to 1e-7. */
static const double base_tol = 1e-8; /* the default PCG tolerance */
static double cost_tol_override;     /* > 0: the costs' tolerance of the next compare */

static void compare(sbm_ctx *ctx, int64_t nc, int64_t np, int obs, uint64_t seed, int P,
                    sbm_partition_method m, const sbm_solver_options *base,
                    sbm_dist_report *rep_out)
{
    sbm_bal_problem *p1 = make_problem(ctx, nc, np, obs, seed);
    sbm_bal_problem *p2 = make_problem(ctx, nc, np, obs, seed);
    lm_log g1, g2;
    memset(&g1, 0, sizeof g1), memset(&g2, 0, sizeof g2);
    sbm_solver_options o = *base;
    o.linear_solver = SBM_LINEAR_PCG_MATRIX_FREE;
    /* PCG solved to round-off: with a loose tolerance the rounding differences of the sums
     * (other orders over the ranks) grow through the truncated Krylov steps to ~1e-9 of the
     * cost (docs/DESIGN-NOTES.md, "Distributed bundle adjustment") */
    if (o.pcg_tolerance == base_tol) {
        o.pcg_tolerance = 1e-12;
        o.pcg_forcing = SBM_PCG_FORCING_FIXED;
        o.pcg_max_iterations = 1000;
    }
    const double cost_tol = cost_tol_override > 0.0       ? cost_tol_override
                            : o.pcg_tolerance <= 1e-12 ? 1e-10
                                                       : 1e-8;
    o.callback = log_iteration;
    o.user = &g1;
    sbm_solver_summary s1, s2;
    SBM_ASSERT_OK(ctx, sbm_ba_solve(ctx, p1, &o, &s1));
    sbm_group *grp = NULL;
    assert_int_equal(sbm_group_create_cpu(P, &grp), SBM_SUCCESS);
    o.user = &g2;
    o.linear_solver = SBM_LINEAR_AUTO;
    sbm_dist_options d = sbm_dist_default_options();
    d.partition = m;
    sbm_dist_report rep;
    SBM_ASSERT_OK(sbm_group_context(grp, 0), sbm_ba_solve_dist(grp, p2, &o, &d, &s2, &rep));
    assert_int_equal(s2.linear_solver, SBM_LINEAR_PCG_MATRIX_FREE);
    assert_int_equal(s1.stop_reason, s2.stop_reason);
    assert_int_equal(s1.iterations, s2.iterations);
    assert_int_equal(s1.accepted, s2.accepted);
    assert_int_equal(g1.n, g2.n);
    assert_true(rel(s1.initial_cost, s2.initial_cost) <= 1e-12);
    assert_true(rel(s1.final_cost, s2.final_cost) <= cost_tol);
    if (getenv("SBM_TEST_DIST_VERBOSE"))
        for (int k = 0; k < g1.n; k++)
            print_message("P=%d it %d: cost %.17g %.17g pcg %d %d lambda %g %g acc %d %d\n", P, k + 1,
                          g1.rep[k].cost, g2.rep[k].cost, g1.rep[k].linear_iterations,
                          g2.rep[k].linear_iterations, g1.rep[k].lambda, g2.rep[k].lambda,
                          g1.rep[k].accepted, g2.rep[k].accepted);
    if (fabs(s1.final_gradient_norm - s2.final_gradient_norm) >
        1e-6 * s1.final_gradient_norm + 1e-9)
        fail_msg("P=%d: final max |g| %.17g on one context, %.17g over the group", P,
                 s1.final_gradient_norm, s2.final_gradient_norm);
    for (int k = 0; k < g1.n; k++) {
        const sbm_iteration_report *a = &g1.rep[k], *b = &g2.rep[k];
        assert_int_equal(a->accepted, b->accepted);
        /* near round-off the residual stagnates: the counts may differ a little */
        assert_true(abs(a->linear_iterations - b->linear_iterations) <=
                    2 + a->linear_iterations / 10);
        assert_int_equal(a->linear_failed, b->linear_failed);
        if (rel(a->cost, b->cost) > cost_tol)
            fail_msg("P=%d iteration %d: cost %.17g on one context, %.17g over the group", P,
                     k + 1, a->cost, b->cost);
        assert_true(rel(a->lambda, b->lambda) <= 1e-8);
    }
    const sbm_bal_info i1 = sbm_bal_get_info(p1), i2 = sbm_bal_get_info(p2);
    for (int64_t c = 0; c < 9 * i1.cameras; c++)
        assert_true(fabs(i1.camera_params[c] - i2.camera_params[c]) <= 1e-7 * (1 + fabs(i1.camera_params[c])));
    for (int64_t c = 0; c < 3 * i1.points; c++)
        assert_true(fabs(i1.point_params[c] - i2.point_params[c]) <= 1e-7 * (1 + fabs(i1.point_params[c])));
    assert_int_equal(rep.ranks, P);
    if (rep_out) *rep_out = rep;
    sbm_group_destroy(grp);
    sbm_bal_destroy(p1);
    sbm_bal_destroy(p2);
}

static void test_dist_same_steps(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_solver_options o = sbm_solver_default_options();
    o.max_iterations = 12;
    for (int P = 1; P <= 4; P++) {
        sbm_dist_report r;
        compare(e->ctx, 16, 300, 4, 21, P, SBM_PARTITION_GRAPH, &o, &r);
        if (P == 1) {
            assert_true(r.bytes_per_pcg_iteration == 0.0);
            assert_int_equal(r.shared_points, 0);
        } else {
            assert_true(r.shared_points > 0);
            assert_true(r.bytes_per_pcg_iteration > 0.0);
            assert_true(r.megba_bytes_per_pcg_iteration > r.bytes_per_pcg_iteration);
        }
        compare(e->ctx, 16, 300, 4, 21, P, SBM_PARTITION_INDEX, &o, NULL);
    }
    /* PCG to its default tolerance 1e-8 (truncated Krylov steps): costs to 1e-8 */
    o.pcg_tolerance = 1e-8 * (1 + 1e-15);
    compare(e->ctx, 16, 300, 4, 21, 3, SBM_PARTITION_GRAPH, &o, NULL);
}

/* A robust loss, a far start (rejected steps), the tolerances' stop reasons. */
static void test_dist_stop_reasons(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_solver_options o = sbm_solver_default_options();
    o.max_iterations = 30;
    o.loss.type = SBM_LOSS_HUBER;
    o.loss.scale = 1.0;
    compare(e->ctx, 10, 120, 3, 4, 3, SBM_PARTITION_GRAPH, &o, NULL);
    o.loss.type = SBM_LOSS_NONE;
    /* lambda 1e-8 on a problem with BA's 7-dimensional gauge freedom: S is nearly singular and
     * the step's rounding differences reach 1.3e-10 of the cost in the first iteration */
    o.initial_lambda = 1e-8;
    cost_tol_override = 1e-9;
    compare(e->ctx, 10, 120, 3, 5, 2, SBM_PARTITION_GRAPH, &o, NULL);
    cost_tol_override = 0.0;
    o.initial_lambda = 1e-4;
    o.function_tolerance = 1e-3;
    compare(e->ctx, 12, 150, 3, 6, 3, SBM_PARTITION_INDEX, &o, NULL);
    o.function_tolerance = 0.0;
    o.gradient_tolerance = 1e3;
    compare(e->ctx, 12, 150, 3, 6, 2, SBM_PARTITION_GRAPH, &o, NULL);
    o.gradient_tolerance = 0.0;
    o.parameter_tolerance = 1e-2;
    compare(e->ctx, 12, 150, 3, 6, 4, SBM_PARTITION_GRAPH, &o, NULL);
}

/* ---------------------------------------------------------------------------------------- */
/* The halo kernels on the backend under test against a host loop                           */
/* ---------------------------------------------------------------------------------------- */

static void test_halo_kernels(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    const sbm__ba_kernels *k = sbm__ba_kernels_of(ctx);
    enum { NP = 7, W = 3, NE = 9 };
    const int32_t idx[NE] = {0, 2, 5, 6, 2, 5, 1, 1, 6};
    const int64_t ptr[4] = {0, 2, 3, 6};
    const int32_t ent[6] = {1, 4, 6, 2, 5, 8}, pt[3] = {2, 1, 5};
    double *src = sbm_test_random_vector(3, NP * W), *want = malloc(NP * W * sizeof(double));
    double *d_src = sbm_test_vec_upload(ctx, src, NP * W);
    double *junk = sbm_test_random_vector(4, NE * W); /* overwritten by the packing */
    double *d_buf = sbm_test_vec_upload(ctx, junk, NE * W);
    free(junk);
    int32_t *d_idx = sbm__alloc(ctx, sizeof idx, "t"), *d_ent = sbm__alloc(ctx, sizeof ent, "t");
    int32_t *d_pt = sbm__alloc(ctx, sizeof pt, "t");
    int64_t *d_ptr = sbm__alloc(ctx, sizeof ptr, "t");
    SBM_ASSERT_OK(ctx, sbm__upload(ctx, d_idx, idx, sizeof idx));
    SBM_ASSERT_OK(ctx, sbm__upload(ctx, d_ent, ent, sizeof ent));
    SBM_ASSERT_OK(ctx, sbm__upload(ctx, d_pt, pt, sizeof pt));
    SBM_ASSERT_OK(ctx, sbm__upload(ctx, d_ptr, ptr, sizeof ptr));
    SBM_ASSERT_OK(ctx, k->ba_halo_pack(ctx, NE, W, d_idx, d_src, d_buf));
    double *buf = sbm_test_vec_download(ctx, d_buf, NE * W);
    for (int q = 0; q < NE; q++)
        for (int c = 0; c < W; c++) assert_true(buf[q * W + c] == src[idx[q] * W + c]);
    SBM_ASSERT_OK(ctx, k->ba_halo_sum(ctx, 3, W, d_ptr, d_ent, d_pt, d_buf, d_src));
    memcpy(want, src, NP * W * sizeof(double));
    for (int s = 0; s < 3; s++)
        for (int c = 0; c < W; c++) {
            double v = 0.0;
            for (int64_t q = ptr[s]; q < ptr[s + 1]; q++) v += buf[ent[q] * W + c];
            want[pt[s] * W + c] = v;
        }
    double *got = sbm_test_vec_download(ctx, d_src, NP * W);
    assert_memory_equal(got, want, NP * W * sizeof(double));
    /* damping scale of 2 blocks of 3x3: the clamped diagonal */
    double und[18] = {0};
    und[0] = 1e-9, und[4] = 2.5, und[8] = 1e40, und[9] = -1.0, und[13] = 0.0, und[17] = 7.0;
    double *d_und = sbm_test_vec_upload(ctx, und, 18), *d_D = sbm_test_vec_upload(ctx, und, 6);
    SBM_ASSERT_OK(ctx, k->ba_damp_scale(ctx, 2, 3, d_und, d_D));
    double *D = sbm_test_vec_download(ctx, d_D, 6);
    const double wantD[6] = {1e-6, 2.5, 1e32, 1e-6, 1e-6, 7.0};
    assert_memory_equal(D, wantD, sizeof wantD);
    /* empty calls do nothing */
    SBM_ASSERT_OK(ctx, k->ba_halo_pack(ctx, 0, W, d_idx, d_src, d_buf));
    SBM_ASSERT_OK(ctx, k->ba_halo_sum(ctx, 0, W, d_ptr, d_ent, d_pt, d_buf, d_src));
    SBM_ASSERT_OK(ctx, k->ba_damp_scale(ctx, 0, 3, d_und, d_D));
    free(src), free(want), free(buf), free(got), free(D);
    sbm__free(ctx, d_src), sbm__free(ctx, d_buf), sbm__free(ctx, d_idx), sbm__free(ctx, d_ent);
    sbm__free(ctx, d_pt), sbm__free(ctx, d_ptr), sbm__free(ctx, d_und), sbm__free(ctx, d_D);
}

/* ---------------------------------------------------------------------------------------- */
/* Errors                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static void expect_create_error(sbm_status got, sbm_status want, const char *text)
{
    assert_int_equal(got, want);
    if (!strstr(sbm_ctx_last_error(NULL), text))
        fail_msg("message \"%s\" lacks \"%s\"", sbm_ctx_last_error(NULL), text);
}

static void test_group_errors(void **state)
{
    (void)state;
    sbm_group *g = (sbm_group *)&g;
    expect_create_error(sbm_group_create_cpu(2, NULL), SBM_ERR_NULL_ARGUMENT,
                        "sbm_group_create_cpu: argument group is NULL");
    expect_create_error(sbm_group_create_cpu(0, &g), SBM_ERR_INVALID_ARGUMENT,
                        "sbm_group_create_cpu: argument size = 0 is not 1 to 1024");
    assert_null(g);
    expect_create_error(sbm_group_create_cpu(1025, &g), SBM_ERR_INVALID_ARGUMENT,
                        "argument size = 1025");
    expect_create_error(sbm_group_create_gpus(2, NULL, NULL), SBM_ERR_NULL_ARGUMENT,
                        "sbm_group_create_gpus: argument group is NULL");
    expect_create_error(sbm_group_create_gpus(-1, NULL, &g), SBM_ERR_INVALID_ARGUMENT,
                        "argument size = -1 is not 1 to 1024");
    const int twice[3] = {0, 1, 0};
    expect_create_error(sbm_group_create_gpus(3, twice, &g), SBM_ERR_INVALID_ARGUMENT,
                        "device 0 is listed twice (entries 0 and 2)");
    expect_create_error(sbm_group_create_nccl(NULL, 0, NULL), SBM_ERR_NULL_ARGUMENT,
                        "sbm_group_create_nccl: argument group is NULL");
    expect_create_error(sbm_group_create_nccl(NULL, 0, &g), SBM_ERR_NULL_ARGUMENT,
                        "argument nccl_comm is NULL");
#if !defined(SBM_HAVE_NCCL)
    expect_create_error(sbm_group_create_gpus(2, NULL, &g), SBM_ERR_NOT_SUPPORTED,
                        "this build has no NCCL");
    expect_create_error(sbm_group_create_nccl((void *)&g, 0, &g), SBM_ERR_NOT_SUPPORTED,
                        "this build has no NCCL");
#endif
    assert_null(g);
    /* accessors of NULL and out of range */
    assert_int_equal(sbm_group_size(NULL), 0);
    assert_int_equal(sbm_group_local_size(NULL), 0);
    assert_null(sbm_group_context(NULL, 0));
    assert_int_equal(sbm_group_rank(NULL, 0), -1);
    sbm_group_destroy(NULL);
    assert_int_equal(sbm_group_create_cpu(3, &g), SBM_SUCCESS);
    assert_int_equal(sbm_group_size(g), 3);
    assert_int_equal(sbm_group_local_size(g), 3);
    for (int l = 0; l < 3; l++) {
        assert_int_equal(sbm_group_rank(g, l), l);
        assert_int_equal(sbm_ctx_backend(sbm_group_context(g, l)), SBM_BACKEND_CPU);
    }
    assert_null(sbm_group_context(g, 3));
    assert_null(sbm_group_context(g, -1));
    assert_int_equal(sbm_group_rank(g, 3), -1);
    sbm_group_destroy(g);
}

static void test_solve_dist_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    assert_int_equal(sbm_ba_solve_dist(NULL, NULL, NULL, NULL, NULL, NULL), SBM_ERR_NULL_ARGUMENT);
    assert_non_null(strstr(sbm_ctx_last_error(NULL), "sbm_ba_solve_dist: argument ctx is NULL"));
    sbm_group *g = NULL;
    assert_int_equal(sbm_group_create_cpu(3, &g), SBM_SUCCESS);
    sbm_ctx *c0 = sbm_group_context(g, 0);
    SBM_ASSERT_FAILS(c0, sbm_ba_solve_dist(g, NULL, NULL, NULL, NULL, NULL),
                     SBM_ERR_NULL_ARGUMENT, "sbm_ba_solve_dist: argument problem is NULL");
    sbm_bal_problem *p = make_problem(e->ctx, 6, 40, 2, 2);
    sbm_solver_options o = sbm_solver_default_options();
    o.linear_solver = SBM_LINEAR_DENSE_CHOLESKY;
    SBM_ASSERT_FAILS(c0, sbm_ba_solve_dist(g, p, &o, NULL, NULL, NULL), SBM_ERR_NOT_SUPPORTED,
                     "linear_solver 1 is not available over a group");
    o = sbm_solver_default_options();
    o.max_iterations = -1;
    SBM_ASSERT_FAILS(c0, sbm_ba_solve_dist(g, p, &o, NULL, NULL, NULL), SBM_ERR_INVALID_ARGUMENT,
                     "max_iterations");
    sbm_dist_options d = sbm_dist_default_options();
    d.partition = (sbm_partition_method)9;
    SBM_ASSERT_FAILS(c0, sbm_ba_solve_dist(g, p, NULL, &d, NULL, NULL), SBM_ERR_INVALID_ARGUMENT,
                     "partition method 9 is not SBM_PARTITION_GRAPH (0) or SBM_PARTITION_INDEX");
    sbm_group_destroy(g);
    assert_int_equal(sbm_group_create_cpu(7, &g), SBM_SUCCESS);
    SBM_ASSERT_FAILS(sbm_group_context(g, 0), sbm_ba_solve_dist(g, p, NULL, NULL, NULL, NULL),
                     SBM_ERR_INVALID_ARGUMENT, "6 cameras cannot be shared among 7 ranks");
    sbm_group_destroy(g);
    /* a point on a camera's image plane: the initial cost names the observation globally */
    assert_int_equal(sbm_group_create_cpu(2, &g), SBM_SUCCESS);
    const sbm_bal_info pi = sbm_bal_get_info(p);
    for (int q = 0; q < 3; q++) pi.point_params[3 * 5 + q] = NAN;
    SBM_ASSERT_FAILS(sbm_group_context(g, 0), sbm_ba_solve_dist(g, p, NULL, NULL, NULL, NULL),
                     SBM_ERR_NOT_FINITE, "not finite");
    sbm_group_destroy(g);
    sbm_bal_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_CPU(test_partition),
        SBM_TEST_CPU(test_partition_clusters),
        SBM_TEST_CPU(test_halo_bookkeeping),
        SBM_TEST_CPU(test_local_problem),
        SBM_TEST_BOTH(test_halo_kernels),
        SBM_TEST_CPU(test_dist_same_steps),
        SBM_TEST_CPU(test_dist_stop_reasons),
        cmocka_unit_test(test_group_errors),
        SBM_TEST_CPU(test_solve_dist_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
