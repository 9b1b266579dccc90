/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm_g2o_write: every graph of tests/data read, written and read again gives the same graph
 * bitwise (ids, poses, fixed vertices, edges, measurements, information matrices), also after
 * sbm_slam_solve moved the poses and through a ".bz2" name; the edge-only files (CSAIL,
 * manhattan) come back with VERTEX lines and their spanning-tree poses; FIX lines by vertex id
 * where ids are not positions; the error paths. */
#define _POSIX_C_SOURCE 200809L

#include "test_util.h"

#include "sbm_slam.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void assert_same_graph(const sbm_g2o_graph *a, const sbm_g2o_graph *b, const char *what)
{
    const sbm_g2o_info x = sbm_g2o_get_info(a), y = sbm_g2o_get_info(b);
    assert_int_equal(x.dim, y.dim);
    assert_int_equal(x.vertices, y.vertices);
    assert_int_equal(x.edges, y.edges);
    assert_int_equal(x.fixed, y.fixed);
    const size_t nv = (size_t)x.vertices, ne = (size_t)x.edges, ps = (size_t)x.pose_size;
    const size_t ed = (size_t)x.error_dim;
    assert_memory_equal(x.vertex_id, y.vertex_id, nv * sizeof(int32_t));
    assert_memory_equal(x.is_fixed, y.is_fixed, nv);
    assert_memory_equal(x.edge_from, y.edge_from, ne * sizeof(int32_t));
    assert_memory_equal(x.edge_to, y.edge_to, ne * sizeof(int32_t));
    if (memcmp(x.poses, y.poses, nv * ps * sizeof(double)) != 0)
        fail_msg("%s: the poses read back differ", what);
    if (memcmp(x.edge_measurement, y.edge_measurement, ne * ps * sizeof(double)) != 0)
        fail_msg("%s: the measurements read back differ", what);
    if (memcmp(x.edge_information, y.edge_information, ne * ed * ed * sizeof(double)) != 0)
        fail_msg("%s: the information matrices read back differ", what);
    assert_int_equal(y.from_edges, 0);
}

static void round_trip(sbm_test_env *e, const sbm_g2o_graph *g, const char *name, const char *ext)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s.g2o%s", sbm_test_tmp_dir, name, ext);
    SBM_ASSERT_OK(e->host, sbm_g2o_write(e->host, path, g));
    sbm_g2o_graph *h = NULL;
    SBM_ASSERT_OK(e->host, sbm_g2o_read(e->host, path, &h));
    assert_same_graph(g, h, name);
    sbm_g2o_destroy(h);
}

static void test_round_trip(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const char *const files[] = {"CSAIL", "intel", "manhattan", "parking-garage",
                                        "smallGrid3D", "sphere2500", "tinyGrid3D"};
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        char rel[128];
        snprintf(rel, sizeof rel, "g2o/%s.g2o", files[k]);
        sbm_g2o_graph *g = NULL;
        SBM_ASSERT_OK(e->host, sbm_g2o_read(e->host, sbm_test_data_path(rel), &g));
        round_trip(e, g, files[k], "");
        /* the optimised poses (quaternions from the solver's increments) */
        sbm_solver_options o = sbm_solver_default_options();
        o.max_iterations = 3;
        SBM_ASSERT_OK(e->host, sbm_slam_solve(e->host, g, &o, NULL));
        round_trip(e, g, files[k], k % 2 ? ".bz2" : "");
        sbm_g2o_destroy(g);
    }
}

/* FIX lines name vertex ids, not positions: ids that are neither 0..n-1 nor in order (read in
 * file order), one graph with ids permuted among 0..n-1 (a position is then another vertex's
 * id); the text written holds "FIX <id>" and the graph read back fixes the same vertices. */
static void test_fix_by_id(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const struct {
        const char *name, *text, *fix;
    } cases[] = {
        {"sparse_ids",
         "VERTEX_SE2 10 0 0 0\nVERTEX_SE2 3 1 0 0.1\nVERTEX_SE2 42 2 0.5 0.2\nVERTEX_SE2 7 3 1 0.3\n"
         "EDGE_SE2 10 3 1 0 0.1 1 0 0 1 0 1\nEDGE_SE2 3 42 1 0.5 0.1 1 0 0 1 0 1\n"
         "EDGE_SE2 42 7 1 0.5 0.1 1 0 0 1 0 1\nFIX 42\n",
         "\nFIX 42\n"},
        {"permuted_ids",
         "VERTEX_SE2 2 0 0 0\nVERTEX_SE2 0 1 0 0.1\nVERTEX_SE2 3 2 0.5 0.2\nVERTEX_SE2 1 3 1 0.3\n"
         "EDGE_SE2 2 0 1 0 0.1 1 0 0 1 0 1\nEDGE_SE2 0 3 1 0.5 0.1 1 0 0 1 0 1\n"
         "EDGE_SE2 3 1 1 0.5 0.1 1 0 0 1 0 1\nFIX 1\nFIX 3\n",
         "\nFIX 3\nFIX 1\n"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        sbm_g2o_graph *g = NULL;
        SBM_ASSERT_OK(e->host, sbm_g2o_read(e->host, sbm_test_write_text(cases[k].name, cases[k].text), &g));
        const sbm_g2o_info gi = sbm_g2o_get_info(g);
        assert_int_equal(gi.fixed, k ? 2 : 1);
        char path[700];
        snprintf(path, sizeof path, "%s/%s_out.g2o", sbm_test_tmp_dir, cases[k].name);
        SBM_ASSERT_OK(e->host, sbm_g2o_write(e->host, path, g));
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        char text[4096];
        const size_t len = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[len] = '\0';
        if (!strstr(text, cases[k].fix))
            fail_msg("%s: the file written lacks the lines \"%.*s\" (FIX names a vertex id):\n%s",
                     cases[k].name, (int)strlen(cases[k].fix) - 2, cases[k].fix + 1, text);
        round_trip(e, g, cases[k].name, "");
        sbm_g2o_destroy(g);
    }
}

static void test_write_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_g2o_graph *g = NULL;
    SBM_ASSERT_OK(e->host, sbm_g2o_read(e->host, sbm_test_data_path("g2o/tinyGrid3D.g2o"), &g));
    char path[700];
    snprintf(path, sizeof path, "%s/bad.g2o", sbm_test_tmp_dir);
    SBM_ASSERT_FAILS(e->host, sbm_g2o_write(e->host, path, NULL), SBM_ERR_NULL_ARGUMENT,
                     "sbm_g2o_write: argument graph is NULL");
    SBM_ASSERT_FAILS(e->host, sbm_g2o_write(e->host, NULL, g), SBM_ERR_NULL_ARGUMENT, "path");
    assert_int_equal(sbm_g2o_write(NULL, path, g), SBM_ERR_NULL_ARGUMENT);
    const sbm_g2o_info gi = sbm_g2o_get_info(g);
    const double keep = gi.poses[7 * 4 + 2];
    gi.poses[7 * 4 + 2] = INFINITY;
    SBM_ASSERT_FAILS(e->host, sbm_g2o_write(e->host, path, g), SBM_ERR_NOT_FINITE,
                     "value 3 of the pose of vertex 4 is inf");
    assert_int_equal(access(path, F_OK), -1);
    gi.poses[7 * 4 + 2] = keep;
    snprintf(path, sizeof path, "%s/no/such/dir/out.g2o", sbm_test_tmp_dir);
    SBM_ASSERT_FAILS(e->host, sbm_g2o_write(e->host, path, g), SBM_ERR_IO, "no/such/dir");
    sbm_g2o_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_CPU(test_round_trip),
        SBM_TEST_CPU(test_fix_by_id),
        SBM_TEST_CPU(test_write_errors),
    };
    return cmocka_run_group_tests(tests, sbm_test_make_tmp_dir, sbm_test_remove_tmp_dir);
}
