// SPDX-License-Identifier: BSD-3-Clause
/* Pose graphs built in memory (sbm_g2o_graph_create): a file's graph rebuilt from its arrays
 * solves to the same bits; rotation matrices give the quaternion graph; every validation error;
 * the gauge of several components (automatic, refused, a prior as gauge, sbm_g2o_set_fixed
 * freeing the last fixed vertex); a prior is the edge from a fixed identity vertex, bitwise,
 * on both backends ([cuda] skips without a GPU); sbm_g2o_write refuses priors. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static sbm_g2o_graph *read_graph(sbm_ctx *ctx, const char *name)
{
    sbm_g2o_graph *g = NULL;
    SBM_ASSERT_OK(ctx, sbm_g2o_read(ctx, sbm_test_data_path(name), &g));
    return g;
}

/* The desc of a graph's arrays (the graph keeps them). */
static sbm_g2o_graph_desc desc_of(const sbm_g2o_graph *g)
{
    const sbm_g2o_info gi = sbm_g2o_get_info(g);
    sbm_g2o_graph_desc d;
    memset(&d, 0, sizeof d);
    d.dim = gi.dim;
    d.vertices = gi.vertices, d.poses = gi.poses, d.vertex_id = gi.vertex_id;
    d.fixed = gi.is_fixed;
    d.edges = gi.edges, d.edge_from = gi.edge_from, d.edge_to = gi.edge_to;
    d.edge_measurement = gi.edge_measurement, d.edge_information = gi.edge_information;
    return d;
}

static sbm_solver_options lm_options(int its)
{
    sbm_solver_options o = sbm_solver_default_options();
    o.max_iterations = its;
    return o;
}

static void test_file_graph_rebuilt(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const char *files[2] = {"g2o/intel.g2o", "g2o/tinyGrid3D.g2o"};
    for (int f = 0; f < 2; f++) {
        sbm_g2o_graph *a = read_graph(e->ctx, files[f]), *b = NULL;
        const sbm_g2o_graph_desc d = desc_of(a);
        SBM_ASSERT_OK(e->ctx, sbm_g2o_graph_create(e->ctx, &d, &b));
        const sbm_g2o_info ia = sbm_g2o_get_info(a), ib = sbm_g2o_get_info(b);
        assert_int_equal(ib.vertices, ia.vertices);
        assert_int_equal(ib.edges, ia.edges);
        assert_int_equal(ib.fixed, ia.fixed);
        assert_int_equal(ib.priors, 0);
        assert_memory_equal(ib.poses, ia.poses, (size_t)(ia.pose_size * ia.vertices) * 8);
        const sbm_solver_options o = lm_options(5);
        sbm_solver_summary sa, sb;
        SBM_ASSERT_OK(e->ctx, sbm_slam_solve(e->ctx, a, &o, &sa));
        SBM_ASSERT_OK(e->ctx, sbm_slam_solve(e->ctx, b, &o, &sb));
        assert_true(sa.final_cost == sb.final_cost && sa.final_cost < sa.initial_cost);
        assert_memory_equal(ib.poses, ia.poses, (size_t)(ia.pose_size * ia.vertices) * 8);
        sbm_g2o_destroy(a);
        sbm_g2o_destroy(b);
    }
}

/* Row-by-row rotation matrix of a unit quaternion (x y z w). */
static void quat_to_rows(const double *q, double *R)
{
    const double x = q[0], y = q[1], z = q[2], w = q[3];
    R[0] = 1 - 2 * (y * y + z * z), R[1] = 2 * (x * y - z * w), R[2] = 2 * (x * z + y * w);
    R[3] = 2 * (x * y + z * w), R[4] = 1 - 2 * (x * x + z * z), R[5] = 2 * (y * z - x * w);
    R[6] = 2 * (x * z - y * w), R[7] = 2 * (y * z + x * w), R[8] = 1 - 2 * (x * x + y * y);
}

static void test_rotation_matrices(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_g2o_graph *a = read_graph(e->ctx, "g2o/tinyGrid3D.g2o"), *b = NULL;
    sbm_g2o_graph_desc d = desc_of(a);
    const int64_t nv = d.vertices, ne = d.edges;
    double *P = malloc((size_t)(12 * nv) * 8), *M = malloc((size_t)(12 * ne) * 8);
    for (int64_t v = 0; v < nv; v++) {
        memcpy(P + 12 * v, d.poses + 7 * v, 3 * 8);
        quat_to_rows(d.poses + 7 * v + 3, P + 12 * v + 3);
    }
    for (int64_t k = 0; k < ne; k++) {
        memcpy(M + 12 * k, d.edge_measurement + 7 * k, 3 * 8);
        quat_to_rows(d.edge_measurement + 7 * k + 3, M + 12 * k + 3);
    }
    d.format = SBM_POSE_MATRIX, d.poses = P, d.edge_measurement = M;
    SBM_ASSERT_OK(e->ctx, sbm_g2o_graph_create(e->ctx, &d, &b));
    const sbm_g2o_info ib = sbm_g2o_get_info(b), ia = sbm_g2o_get_info(a);
    for (int64_t v = 0; v < nv; v++) { /* q or -q: the same rotation */
        const double *qa = ia.poses + 7 * v + 3, *qb = ib.poses + 7 * v + 3;
        const double s = qa[0] * qb[0] + qa[1] * qb[1] + qa[2] * qb[2] + qa[3] * qb[3];
        assert_true(fabs(fabs(s) - 1.0) < 1e-14);
    }
    double ca, cb;
    SBM_ASSERT_OK(e->ctx, sbm_g2o_chi2(e->ctx, a, &ca));
    SBM_ASSERT_OK(e->ctx, sbm_g2o_chi2(e->ctx, b, &cb));
    assert_true(fabs(ca - cb) <= 1e-9 * ca);
    /* a matrix off orthonormal, or a reflection */
    sbm_g2o_graph *x = (sbm_g2o_graph *)1;
    P[12 * 2 + 3] += 1e-3;
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_graph_create(e->ctx, &d, &x), SBM_ERR_INVALID_ARGUMENT,
                     "desc->poses[2]: the rotation matrix is not a rotation: max |R^T R - I| =");
    assert_null(x);
    P[12 * 2 + 3] -= 1e-3;
    for (int a3 = 0; a3 < 3; a3++) M[12 * 4 + 3 + a3] = -M[12 * 4 + 3 + a3];
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_graph_create(e->ctx, &d, &x), SBM_ERR_INVALID_ARGUMENT,
                     "desc->edge_measurement[4]: the rotation matrix is not a rotation");
    free(P), free(M);
    sbm_g2o_destroy(a);
    sbm_g2o_destroy(b);
}

/* A 2D chain 0-1-2 and a pair 3-4: two components. */
static const double chain_poses[15] = {0, 0, 0, 1, 0, 0.1, 2, 0.1, 0.2, 5, 5, 0, 6, 5, 0};
static const int32_t chain_from[3] = {0, 1, 3}, chain_to[3] = {1, 2, 4};
static const double chain_meas[9] = {1, 0, 0, 1, 0, 0, 1, 0, 0};

static sbm_g2o_graph_desc chain_desc(void)
{
    sbm_g2o_graph_desc d;
    memset(&d, 0, sizeof d);
    d.dim = 2, d.vertices = 5, d.poses = chain_poses;
    d.edges = 3, d.edge_from = chain_from, d.edge_to = chain_to;
    d.edge_measurement = chain_meas;
    return d;
}

static void test_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *c = e->ctx;
    sbm_g2o_graph *g = (sbm_g2o_graph *)1;
    const sbm_g2o_graph_desc d0 = chain_desc();
    sbm_g2o_graph_desc d = d0;
    SBM_ASSERT_FAILS(c, sbm_g2o_graph_create(c, NULL, &g), SBM_ERR_NULL_ARGUMENT,
                     "sbm_g2o_graph_create: argument desc is NULL");
    assert_null(g);
    SBM_ASSERT_FAILS(c, sbm_g2o_graph_create(c, &d, NULL), SBM_ERR_NULL_ARGUMENT,
                     "argument graph is NULL");
    d.dim = 4;
    SBM_ASSERT_FAILS(c, sbm_g2o_graph_create(c, &d, &g), SBM_ERR_INVALID_ARGUMENT,
                     "desc->dim = 4 is not 2 or 3");
    d = d0, d.format = SBM_POSE_MATRIX;
    SBM_ASSERT_FAILS(c, sbm_g2o_graph_create(c, &d, &g), SBM_ERR_INVALID_ARGUMENT,
                     "desc->format = 1 is not a pose format for dim 2");
    d = d0, d.gauge = (sbm_gauge)7;
    SBM_ASSERT_FAILS(c, sbm_g2o_graph_create(c, &d, &g), SBM_ERR_INVALID_ARGUMENT,
                     "desc->gauge = 7 is not an sbm_gauge");
    d = d0, d.vertices = 0;
    SBM_ASSERT_FAILS(c, sbm_g2o_graph_create(c, &d, &g), SBM_ERR_INVALID_ARGUMENT,
                     "desc: vertices = 0, edges = 3, priors = 0");
    d = d0, d.edge_measurement = NULL;
    SBM_ASSERT_FAILS(c, sbm_g2o_graph_create(c, &d, &g), SBM_ERR_NULL_ARGUMENT,
                     "desc->edge_measurement is NULL (3 entries)");
    int32_t bad[3] = {1, 2, 5};
    d = d0, d.edge_to = bad;
    SBM_ASSERT_FAILS(c, sbm_g2o_graph_create(c, &d, &g), SBM_ERR_INVALID_ARGUMENT,
                     "desc->edge_to[2] = 5 is not a vertex: 0 <= index < 5");
    bad[2] = 3;
    d = d0, d.edge_to = bad;
    SBM_ASSERT_FAILS(c, sbm_g2o_graph_create(c, &d, &g), SBM_ERR_INVALID_ARGUMENT,
                     "desc: edge 2 joins vertex 3 to itself");
    const int32_t ids[5] = {10, 11, 12, 11, 14};
    d = d0, d.vertex_id = ids;
    SBM_ASSERT_FAILS(c, sbm_g2o_graph_create(c, &d, &g), SBM_ERR_INVALID_ARGUMENT,
                     "desc->vertex_id: vertices 1 and 3 have id 11");
    double poses[15];
    memcpy(poses, chain_poses, sizeof poses);
    poses[7] = NAN;
    d = d0, d.poses = poses;
    SBM_ASSERT_FAILS(c, sbm_g2o_graph_create(c, &d, &g), SBM_ERR_NOT_FINITE,
                     "desc->poses[2]: value 1 is nan");
    double info[27] = {0};
    for (int k = 0; k < 3; k++) info[9 * k] = info[9 * k + 4] = info[9 * k + 8] = 1.0;
    info[9 + 1] = 0.3; /* edge 1: (1, 0) without (0, 1) */
    d = d0, d.edge_information = info;
    SBM_ASSERT_FAILS(c, sbm_g2o_graph_create(c, &d, &g), SBM_ERR_INVALID_ARGUMENT,
                     "desc->edge_information[1] is not symmetric: entry (1, 0) = 0.29999");
    info[9 + 1] = 0.0, info[18 + 8] = -2.0;
    SBM_ASSERT_FAILS(c, sbm_g2o_graph_create(c, &d, &g), SBM_ERR_INVALID_ARGUMENT,
                     "desc->edge_information[2] is not positive semidefinite: smallest "
                     "eigenvalue -2");
    info[18 + 8] = INFINITY;
    SBM_ASSERT_FAILS(c, sbm_g2o_graph_create(c, &d, &g), SBM_ERR_NOT_FINITE,
                     "desc->edge_information[2]: entry (2, 2) is inf");
    const double q[7] = {0, 0, 0, 0, 0, 0, 0.5};
    const int32_t one = 0;
    sbm_g2o_graph_desc d3;
    memset(&d3, 0, sizeof d3);
    d3.dim = 3, d3.vertices = 1, d3.poses = q, d3.fixed = (const unsigned char *)"\1";
    SBM_ASSERT_FAILS(c, sbm_g2o_graph_create(c, &d3, &g), SBM_ERR_INVALID_ARGUMENT,
                     "desc->poses[0]: the quaternion (0 0 0 0.5) has norm 0.5, not 1 within 1e-06");
    d = d0, d.priors = 1, d.prior_vertex = &one, d.prior_measurement = NULL;
    SBM_ASSERT_FAILS(c, sbm_g2o_graph_create(c, &d, &g), SBM_ERR_NULL_ARGUMENT,
                     "desc->prior_measurement is NULL (1 entries)");
    /* vertex 5 touched by nothing */
    double p6[18];
    memcpy(p6, chain_poses, sizeof chain_poses);
    p6[15] = p6[16] = p6[17] = 0.0;
    d = d0, d.vertices = 6, d.poses = p6;
    SBM_ASSERT_FAILS(c, sbm_g2o_graph_create(c, &d, &g), SBM_ERR_INVALID_ARGUMENT,
                     "desc: vertex 5 (id 5) is in no edge and has no prior: nothing determines "
                     "its pose");
    const unsigned char fx[6] = {0, 0, 0, 0, 0, 1};
    d.fixed = fx; /* fixed: fine */
    SBM_ASSERT_OK(c, sbm_g2o_graph_create(c, &d, &g));
    sbm_g2o_destroy(g);
    d = d0;
    SBM_ASSERT_OK(c, sbm_g2o_graph_create(c, &d, &g));
    SBM_ASSERT_FAILS(c, sbm_g2o_set_fixed(c, NULL, 0, 1), SBM_ERR_NULL_ARGUMENT,
                     "sbm_g2o_set_fixed: argument graph is NULL");
    SBM_ASSERT_FAILS(c, sbm_g2o_set_fixed(c, g, 5, 1), SBM_ERR_INVALID_ARGUMENT,
                     "argument vertex = 5 is out of range (0 <= vertex < 5)");
    SBM_ASSERT_FAILS(c, sbm_g2o_set_fixed(c, g, 0, 3), SBM_ERR_INVALID_ARGUMENT,
                     "argument fixed = 3 is not 0 or 1");
    sbm_g2o_destroy(g);
}

/* Two components: the automatic gauge fixes the first vertex of each; SBM_GAUGE_REFUSE names
 * the first one without; a prior is a gauge; freeing the last fixed vertex of a component is
 * refused by the solve. */
static void test_gauge_components(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *c = e->ctx;
    sbm_g2o_graph *g = NULL;
    sbm_g2o_graph_desc d = chain_desc();
    SBM_ASSERT_OK(c, sbm_g2o_graph_create(c, &d, &g));
    sbm_g2o_info gi = sbm_g2o_get_info(g);
    assert_int_equal(gi.fixed, 2);
    assert_true(gi.is_fixed[0] && gi.is_fixed[3] && !gi.is_fixed[1] && !gi.is_fixed[4]);
    sbm_solver_options o = lm_options(20);
    sbm_solver_summary s;
    SBM_ASSERT_OK(c, sbm_slam_solve(c, g, &o, &s));
    assert_true(s.final_cost < 1e-20); /* consistent measurements: zero cost */
    SBM_ASSERT_OK(c, sbm_g2o_set_fixed(c, g, 3, 0));
    assert_int_equal(sbm_g2o_get_info(g).fixed, 1);
    SBM_ASSERT_FAILS(c, sbm_slam_solve(c, g, &o, &s), SBM_ERR_INVALID_ARGUMENT,
                     "the connected component of vertex 3 (id 3; 2 vertices) has no fixed vertex "
                     "and no prior: its poses are free up to a rigid motion (the gauge); fix one "
                     "of its vertices (sbm_g2o_set_fixed)");
    SBM_ASSERT_OK(c, sbm_g2o_set_fixed(c, g, 4, 1));
    SBM_ASSERT_OK(c, sbm_slam_solve(c, g, &o, &s));
    sbm_g2o_destroy(g);

    d.gauge = SBM_GAUGE_REFUSE;
    SBM_ASSERT_FAILS(c, sbm_g2o_graph_create(c, &d, &g), SBM_ERR_INVALID_ARGUMENT,
                     "the connected component of vertex 0 (id 0; 3 vertices) has no fixed vertex "
                     "and no prior");
    const unsigned char fx[5] = {0, 0, 1, 0, 0};
    d.fixed = fx;
    SBM_ASSERT_FAILS(c, sbm_g2o_graph_create(c, &d, &g), SBM_ERR_INVALID_ARGUMENT,
                     "the connected component of vertex 3 (id 3; 2 vertices)");
    const int32_t pv = 4;
    const double pz[3] = {6, 5, 0};
    d.priors = 1, d.prior_vertex = &pv, d.prior_measurement = pz;
    SBM_ASSERT_OK(c, sbm_g2o_graph_create(c, &d, &g));
    gi = sbm_g2o_get_info(g);
    assert_int_equal(gi.fixed, 1);
    assert_int_equal(gi.vertices, 5);
    assert_int_equal(gi.edges, 3);
    assert_int_equal(gi.priors, 1);
    assert_int_equal(gi.prior_vertex[0], 4);
    assert_memory_equal(gi.prior_measurement, pz, sizeof pz);
    assert_true(gi.prior_information[0] == 1.0 && gi.prior_information[1] == 0.0);
    SBM_ASSERT_OK(c, sbm_slam_solve(c, g, &o, &s));
    assert_true(s.final_cost < 1e-20);
    /* a prior whose e^T Omega e overflows at the start: named as the prior it is */
    const double huge[3] = {1e300, 0, 0};
    sbm_g2o_graph *gh = NULL;
    d.prior_measurement = huge;
    SBM_ASSERT_OK(c, sbm_g2o_graph_create(c, &d, &gh));
    SBM_ASSERT_FAILS(c, sbm_slam_solve(c, gh, &o, &s), SBM_ERR_NOT_FINITE,
                     "prior 0 (on vertex 4) has e^T Omega e = inf");
    sbm_g2o_destroy(gh);
    const char *path = sbm_test_tmp_path("prior.g2o");
    SBM_ASSERT_FAILS(c, sbm_g2o_write(c, path, g), SBM_ERR_NOT_SUPPORTED,
                     "argument graph has 1 priors, which the g2o types sbm writes");
    sbm_g2o_destroy(g);
}

/* A prior on vertex 2 is the edge from a fixed vertex at the identity: the same solve, bit for
 * bit, as the graph with that vertex and edge written out; SE2 and SE3, on each backend. */
static void test_prior_is_anchor_edge(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *c = e->ctx;
    for (int dim = 2; dim <= 3; dim++) {
        sbm_g2o_graph *base = read_graph(c, dim == 2 ? "g2o/intel.g2o" : "g2o/tinyGrid3D.g2o");
        sbm_g2o_graph_desc d = desc_of(base);
        const int ps = dim == 2 ? 3 : 7, ed = dim == 2 ? 3 : 6;
        const int64_t nv = d.vertices, ne = d.edges;
        unsigned char *none = calloc((size_t)nv + 1, 1);
        double zp[7], ip[36] = {0};
        memcpy(zp, d.poses + ps * 2, (size_t)ps * 8);
        zp[0] += 0.25, zp[1] -= 0.5;
        for (int a = 0; a < ed; a++) ip[a * (ed + 1)] = 10.0 + a;
        ip[1] = ip[ed] = 0.5;
        const int32_t pv = 2;
        /* with the prior (and no fixed vertex: the prior is the gauge) */
        sbm_g2o_graph_desc dp = d;
        dp.fixed = none, dp.vertex_id = NULL;
        dp.priors = 1, dp.prior_vertex = &pv, dp.prior_measurement = zp, dp.prior_information = ip;
        dp.gauge = SBM_GAUGE_REFUSE;
        /* written out: vertex nv at the identity, fixed, and the edge nv -> 2 */
        double *P = malloc((size_t)(ps * (nv + 1)) * 8), *Z = malloc((size_t)(ps * (ne + 1)) * 8);
        double *I = malloc((size_t)(ed * ed * (ne + 1)) * 8);
        int32_t *F = malloc((size_t)(ne + 1) * 4), *T = malloc((size_t)(ne + 1) * 4);
        memcpy(P, d.poses, (size_t)(ps * nv) * 8);
        memset(P + ps * nv, 0, (size_t)ps * 8);
        if (dim == 3) P[ps * nv + 6] = 1.0;
        memcpy(Z, d.edge_measurement, (size_t)(ps * ne) * 8);
        memcpy(Z + ps * ne, zp, (size_t)ps * 8);
        memcpy(I, d.edge_information, (size_t)(ed * ed * ne) * 8);
        memcpy(I + ed * ed * ne, ip, (size_t)(ed * ed) * 8);
        memcpy(F, d.edge_from, (size_t)ne * 4), F[ne] = (int32_t)nv;
        memcpy(T, d.edge_to, (size_t)ne * 4), T[ne] = 2;
        none[nv] = 1;
        sbm_g2o_graph_desc dw = d;
        dw.vertices = nv + 1, dw.poses = P, dw.vertex_id = NULL, dw.fixed = none;
        dw.edges = ne + 1, dw.edge_from = F, dw.edge_to = T, dw.edge_measurement = Z;
        dw.edge_information = I;
        sbm_g2o_graph *gp = NULL, *gw = NULL;
        SBM_ASSERT_OK(c, sbm_g2o_graph_create(c, &dp, &gp));
        SBM_ASSERT_OK(c, sbm_g2o_graph_create(c, &dw, &gw));
        assert_int_equal(sbm_g2o_get_info(gp).fixed, 0);
        sbm_solver_options o = lm_options(6);
        sbm_solver_summary sp, sw;
        SBM_ASSERT_OK(c, sbm_slam_solve(c, gp, &o, &sp));
        SBM_ASSERT_OK(c, sbm_slam_solve(c, gw, &o, &sw));
        assert_true(sp.final_cost == sw.final_cost && sp.final_cost < sp.initial_cost);
        assert_int_equal(sp.iterations, sw.iterations);
        assert_memory_equal(sbm_g2o_get_info(gp).poses, sbm_g2o_get_info(gw).poses,
                            (size_t)(ps * nv) * 8);
        free(P), free(Z), free(I), free(F), free(T), free(none);
        sbm_g2o_destroy(gp);
        sbm_g2o_destroy(gw);
        sbm_g2o_destroy(base);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_file_graph_rebuilt),
        SBM_TEST_CPU(test_rotation_matrices),
        SBM_TEST_CPU(test_errors),
        SBM_TEST_BOTH(test_gauge_components),
        SBM_TEST_BOTH(test_prior_is_anchor_edge),
    };
    return cmocka_run_group_tests(tests, sbm_test_make_tmp_dir, sbm_test_remove_tmp_dir);
}
