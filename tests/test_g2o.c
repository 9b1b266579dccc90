/* SPDX-License-Identifier: BSD-3-Clause */
/* g2o pose graphs: sbm_g2o_read on every real file in tests/data/g2o (counts, values against an
 * independent sscanf, the spanning-tree start of edge-only files, the gauge), small files for
 * every element and option, odd but valid files (negative ids, a byte-order mark, huge
 * quaternions), and malformed files for every error path (status, file:line). */
#define _POSIX_C_SOURCE 200809L

#include "test_util.h"

#include "slam_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Real files                                                                               */
/* ---------------------------------------------------------------------------------------- */

typedef struct real_file {
    const char *name;
    int dim;
    int64_t vertices;
    int64_t edges;
    int from_edges;
} real_file;

static const real_file real_files[] = {
    {"g2o/CSAIL.g2o", 2, 1045, 1172, 1},          {"g2o/intel.g2o", 2, 1728, 2512, 0},
    {"g2o/manhattan.g2o", 2, 3500, 5453, 1},      {"g2o/parking-garage.g2o", 3, 1661, 6275, 0},
    {"g2o/smallGrid3D.g2o", 3, 125, 297, 0},      {"g2o/sphere2500.g2o", 3, 2500, 4949, 0},
    {"g2o/tinyGrid3D.g2o", 3, 9, 11, 0},
};

static void test_read_real(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (size_t f = 0; f < sizeof real_files / sizeof real_files[0]; f++) {
        const real_file *rf = &real_files[f];
        const char *path = sbm_test_data_path(rf->name);
        sbm_g2o_graph *g = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, path, &g));
        sbm_g2o_info gi = sbm_g2o_get_info(g);
        assert_int_equal(gi.dim, rf->dim);
        assert_int_equal(gi.pose_size, rf->dim == 2 ? 3 : 7);
        assert_int_equal(gi.error_dim, rf->dim == 2 ? 3 : 6);
        assert_int_equal(gi.vertices, rf->vertices);
        assert_int_equal(gi.edges, rf->edges);
        assert_int_equal(gi.from_edges, rf->from_edges);
        /* connected: one gauge vertex, the first */
        assert_int_equal(gi.fixed, 1);
        assert_int_equal(gi.is_fixed[0], 1);
        double chi2 = -1.0;
        SBM_ASSERT_OK(e->ctx, sbm_g2o_chi2(e->ctx, g, &chi2));
        assert_true(isfinite(chi2) && chi2 > 0.0);

        /* the first VERTEX and EDGE lines, parsed here */
        FILE *fp = sbm_test_open_plain(path); /* decompressed independently of sbm */
        char line[4096];
        int seen_vertex = 0, seen_edge = 0;
        while (fgets(line, sizeof line, fp) && !(seen_edge && (seen_vertex || rf->from_edges))) {
            char tag[64];
            int used = 0;
            if (sscanf(line, "%63s%n", tag, &used) != 1) continue;
            double v[40];
            int n = 0, a = 0, b = 0, off = used, u;
            if (!strncmp(tag, "VERTEX", 6) && !seen_vertex) {
                sscanf(line + off, "%d%n", &a, &u), off += u;
                while (n < 7 && sscanf(line + off, "%lf%n", &v[n], &u) == 1) off += u, n++;
                assert_int_equal(gi.vertex_id[0], a);
                for (int k = 0; k < gi.pose_size; k++)
                    assert_true(fabs(gi.poses[k] - v[k]) <= 1e-6 * (1 + fabs(v[k])));
                seen_vertex = 1;
            } else if (!strncmp(tag, "EDGE", 4) && !seen_edge) {
                sscanf(line + off, "%d %d%n", &a, &b, &u), off += u;
                while (n < 40 && sscanf(line + off, "%lf%n", &v[n], &u) == 1) off += u, n++;
                const int ps = gi.pose_size, d = gi.error_dim;
                assert_int_equal(n, ps + d * (d + 1) / 2);
                assert_int_equal(gi.vertex_id[gi.edge_from[0]], a);
                assert_int_equal(gi.vertex_id[gi.edge_to[0]], b);
                for (int k = 0; k < ps; k++)
                    assert_true(fabs(gi.edge_measurement[k] - v[k]) <= 1e-6 * (1 + fabs(v[k])));
                int t = ps;
                for (int r = 0; r < d; r++)
                    for (int c = r; c < d; c++, t++) {
                        assert_true(gi.edge_information[r + d * c] == v[t]);
                        assert_true(gi.edge_information[c + d * r] == v[t]);
                    }
                seen_edge = 1;
            }
        }
        fclose(fp);

        if (rf->from_edges) {
            /* ids increasing; the root at the identity; every spanning-tree edge has zero error */
            for (int64_t v = 1; v < gi.vertices; v++) assert_true(gi.vertex_id[v] > gi.vertex_id[v - 1]);
            for (int k = 0; k < gi.pose_size; k++) assert_true(gi.poses[k] == 0.0);
            int64_t exact = 0;
            for (int64_t k = 0; k < gi.edges; k++) {
                double err[6];
                sbm__g2o_edge_error(g, k, err, NULL, NULL);
                double m = 0.0;
                for (int a = 0; a < gi.error_dim; a++) m = fmax(m, fabs(err[a]));
                exact += m < 1e-9;
            }
            assert_true(exact >= gi.vertices - 1);
        }
        sbm_g2o_destroy(g);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Small files                                                                              */
/* ---------------------------------------------------------------------------------------- */

/* Optional extra data: the larger graphs not copied into the repository, read from
 * SBM_DATA_DIR when it is there (skipped visibly otherwise). Counts from the files. */
static void test_read_extra(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const real_file extra[] = {
        {"g2o/ais2klinik.g2o", 2, 15115, 16727, 0},
        {"g2o/kitti_05.g2o", 2, 2761, 2826, 1},
        {"g2o/sphere_bignoise_vertex3.g2o", 3, 2200, 8647, 0},
    };
    for (size_t f = 0; f < sizeof extra / sizeof extra[0]; f++) {
        const char *path = sbm_test_extra_data_path(extra[f].name);
        sbm_g2o_graph *g = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, path, &g));
        sbm_g2o_info gi = sbm_g2o_get_info(g);
        assert_int_equal(gi.dim, extra[f].dim);
        assert_int_equal(gi.vertices, extra[f].vertices);
        assert_int_equal(gi.edges, extra[f].edges);
        assert_int_equal(gi.from_edges, extra[f].from_edges);
        double chi2 = -1.0;
        SBM_ASSERT_OK(e->ctx, sbm_g2o_chi2(e->ctx, g, &chi2));
        assert_true(isfinite(chi2) && chi2 >= 0.0);
        sbm_g2o_destroy(g);
    }
}

static void test_read_small(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    /* vertices out of id order, comments, blank lines, CRLF, FIX, an isolated pair of vertices */
    const char *path = sbm_test_write_text("small2d.g2o",
                                           "# a comment\n"
                                           "VERTEX_SE2 5 0 0 0\n"
                                           "\n"
                                           "VERTEX_SE2 2 1 0 0.5\r\n"
                                           "VERTEX_SE2 9 2 0 -3.5\n"
                                           "VERTEX_SE2 7 0 5 0\n"
                                           "VERTEX_SE2 8 0 6 0\n"
                                           "EDGE_SE2 5 2 1 0 0.5 10 1 0 20 0 30\n"
                                           "EDGE_SE2 2 9 1 0 2.78 1 0 0 1 0 1\n"
                                           "EDGE_SE2 8 7 0 -1 0 1 0 0 1 0 1\n"
                                           "FIX 2\n");
    sbm_g2o_graph *g = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, path, &g));
    sbm_g2o_info gi = sbm_g2o_get_info(g);
    assert_int_equal(gi.vertices, 5);
    assert_int_equal(gi.edges, 3);
    const int32_t ids[5] = {5, 2, 9, 7, 8};
    assert_memory_equal(gi.vertex_id, ids, sizeof ids);
    /* FIX 2 covers the first component; the second component {7, 8} gets its first vertex */
    const unsigned char fixed[5] = {0, 1, 0, 1, 0};
    assert_memory_equal(gi.is_fixed, fixed, sizeof fixed);
    assert_int_equal(gi.fixed, 2);
    assert_int_equal(gi.edge_from[2], 4);
    assert_int_equal(gi.edge_to[2], 3);
    /* the angle is kept as written; the information matrix mirrored */
    assert_true(gi.poses[3 * 2 + 2] == -3.5);
    const double info0[9] = {10, 1, 0, 1, 20, 0, 0, 0, 30};
    assert_memory_equal(gi.edge_information, info0, sizeof info0);
    double chi2;
    SBM_ASSERT_OK(e->ctx, sbm_g2o_chi2(e->ctx, g, &chi2));
    /* edge 0 and 2 are exact; edge 1: theta 2.78 vs -3.5 - 0.5 = -4.0 + 2 pi = 2.2832, so the
     * error is (0, 0, 2.2832 - 2.78) after normalisation; (x, y) = R(0.5)^T (1, 0) - (1, 0) */
    const double c = cos(0.5), s = sin(0.5);
    const double ex = c * 1 - 1, ey = -s * 1;
    const double et = -4.0 + 2 * 3.14159265358979323846 - 2.78;
    const double want = ex * ex + ey * ey + et * et;
    assert_true(fabs(chi2 - want) <= 1e-12 * want);
    sbm_g2o_destroy(g);

    /* 3D, edge-only, with FIX: the fixed vertex is not the first */
    path = sbm_test_write_text("small3d.g2o",
                               "EDGE_SE3:QUAT 10 11 1 0 0 0 0 0 2 1 0 0 0 0 0 1 0 0 0 0 1 0 0 0 1 0 0 1 0 1\n"
                               "EDGE_SE3:QUAT 12 11 0 1 0 0 0 0.7071067811865476 0.7071067811865476 "
                               "1 0 0 0 0 0 1 0 0 0 0 1 0 0 0 1 0 0 1 0 1\n"
                               "FIX 11\n");
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, path, &g));
    gi = sbm_g2o_get_info(g);
    assert_int_equal(gi.dim, 3);
    assert_int_equal(gi.vertices, 3);
    assert_int_equal(gi.from_edges, 1);
    const unsigned char fixed3[3] = {0, 1, 0};
    assert_memory_equal(gi.is_fixed, fixed3, sizeof fixed3);
    /* the quaternion was normalised: (0 0 0 2) -> (0 0 0 1) */
    assert_true(gi.edge_measurement[6] == 1.0);
    /* the spanning tree: 11 = 10 * Z0 = (1 0 0); 12 = 11 * Z1^-1 */
    assert_true(fabs(gi.poses[7] - 1.0) < 1e-15 && gi.poses[13] == 1.0);
    SBM_ASSERT_OK(e->ctx, sbm_g2o_chi2(e->ctx, g, &chi2));
    assert_true(chi2 < 1e-24);
    sbm_g2o_destroy(g);
    sbm_g2o_destroy(NULL);
    assert_int_equal(sbm_g2o_get_info(NULL).vertices, 0);
}

/* Valid files that were refused or misread: negative ids and ids at both int32
 * limits (an edge-only file orders them by id), a UTF-8 byte-order mark, a quaternion whose
 * squares overflow in double. */
static void test_read_valid_odd(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const char *path = sbm_test_write_text("ids.g2o",
                                           "\xEF\xBB\xBFVERTEX_SE2 -1 0 0 0\n"
                                           "VERTEX_SE2 2147483647 1 0 0\n"
                                           "VERTEX_SE2 -2147483648 2 0 0\n"
                                           "VERTEX_SE2 0 3 0 0\n"
                                           "EDGE_SE2 -1 2147483647 1 0 0 1 0 0 1 0 1\n"
                                           "EDGE_SE2 2147483647 -2147483648 1 0 0 1 0 0 1 0 1\n"
                                           "EDGE_SE2 -2147483648 0 1 0 0 1 0 0 1 0 1\n"
                                           "FIX -1\n");
    sbm_g2o_graph *g = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, path, &g));
    sbm_g2o_info gi = sbm_g2o_get_info(g);
    assert_int_equal(gi.vertices, 4);
    const int32_t ids[4] = {-1, INT32_MAX, INT32_MIN, 0};
    assert_memory_equal(gi.vertex_id, ids, sizeof ids);
    const int32_t from[3] = {0, 1, 2}, to[3] = {1, 2, 3};
    assert_memory_equal(gi.edge_from, from, sizeof from);
    assert_memory_equal(gi.edge_to, to, sizeof to);
    assert_true(gi.is_fixed[0] && !gi.is_fixed[1]);
    double chi2;
    SBM_ASSERT_OK(e->ctx, sbm_g2o_chi2(e->ctx, g, &chi2));
    assert_true(chi2 < 1e-24);
    sbm_g2o_destroy(g);

    /* edge-only: the vertices ordered by id, negative first */
    path = sbm_test_write_text("edges.g2o", "EDGE_SE2 5 -7 1 0 0 1 0 0 1 0 1\n"
                                            "EDGE_SE2 -7 -2147483648 1 0 0 1 0 0 1 0 1\n");
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, path, &g));
    gi = sbm_g2o_get_info(g);
    const int32_t sorted[3] = {INT32_MIN, -7, 5};
    assert_memory_equal(gi.vertex_id, sorted, sizeof sorted);
    sbm_g2o_destroy(g);

    /* (0 0 1e300 0) is (0 0 1 0), not a zero or non-finite quaternion */
    path = sbm_test_write_text("bigq.g2o",
                               "VERTEX_SE3:QUAT 0 0 0 0 0 0 0 1\n"
                               "VERTEX_SE3:QUAT 1 1 0 0 0 0 1e300 0\n"
                               "VERTEX_SE3:QUAT 2 2 0 0 3e300 0 0 -4e300\n"
                               "EDGE_SE3:QUAT 0 1 1 0 0 0 0 1e300 0 1 0 0 0 0 0 1 0 0 0 0 1 0 0 0 1 "
                               "0 0 1 0 1\n");
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, path, &g));
    gi = sbm_g2o_get_info(g);
    assert_true(gi.poses[7 + 5] == 1.0 && gi.poses[7 + 3] == 0.0 && gi.poses[7 + 6] == 0.0);
    assert_true(fabs(gi.poses[14 + 3] - 0.6) < 1e-15 && fabs(gi.poses[14 + 6] + 0.8) < 1e-15);
    assert_true(gi.edge_measurement[5] == 1.0);
    SBM_ASSERT_OK(e->ctx, sbm_g2o_chi2(e->ctx, g, &chi2));
    assert_true(isfinite(chi2) && chi2 < 1e-24);
    sbm_g2o_destroy(g);
}

typedef struct bad_case {
    const char *text;
    sbm_status status;
    const char *where;
    const char *reason;
} bad_case;

static void test_read_malformed(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const bad_case cases[] = {
        {"", SBM_ERR_PARSE, ":1:", "no VERTEX or EDGE lines"},
        {"# only a comment\n\n", SBM_ERR_PARSE, ":2:", "no VERTEX or EDGE lines"},
        {"VERTEX_SE2 0 0 0\n", SBM_ERR_PARSE, ":1:", "VERTEX_SE2 needs 4 values (id and pose), found 3"},
        {"VERTEX_SE2 0 0 0 0 0\n", SBM_ERR_PARSE, ":1:", "found 5"},
        {"VERTEX_SE2 0 0 x 0\n", SBM_ERR_PARSE, ":1:", "value 2 'x' is not a number"},
        {"VERTEX_SE2 a 0 0 0\n", SBM_ERR_PARSE, ":1:", "id 'a' is not an integer"},
        {"VERTEX_SE2 0 0 0 nan\n", SBM_ERR_PARSE, ":1:", "not finite"},
        {"VERTEX_SE2 0 0 0 0\nVERTEX_SE2 0 1 1 0\n", SBM_ERR_PARSE, ":2:", "vertex 0 is defined twice (also on line 1)"},
        {"VERTEX_SE2 0 0 0 0\nEDGE_SE2 0 1 1 0 0 1 0 0 1 0 1\n", SBM_ERR_PARSE, ":2:", "names vertex 1, which has no VERTEX line"},
        {"EDGE_SE2 3 3 1 0 0 1 0 0 1 0 1\n", SBM_ERR_PARSE, ":1:", "joins vertex 3 to itself"},
        {"EDGE_SE2 0 1 1 0 0 1 0 0 1 0\n", SBM_ERR_PARSE, ":1:", "EDGE_SE2 needs 11 values"},
        {"EDGE_SE2 0 1 1 0 0 -1 0 0 1 0 1\n", SBM_ERR_PARSE, ":1:", "EDGE_SE2 0 1: the information matrix is not positive semidefinite: smallest eigenvalue -1"},
        {"VERTEX_SE2 0 0 0 0\nVERTEX_SE3:QUAT 1 0 0 0 0 0 0 1\n", SBM_ERR_PARSE, ":2:", "3D element, but the graph is 2D (line 1"},
        {"VERTEX_SE3:QUAT 1 0 0 0 0 0 0 0\n", SBM_ERR_PARSE, ":1:", "has zero norm"},
        {"VERTEX_SE2 0 0 0 0\nVERTEX_XY 1 0 0\n", SBM_ERR_NOT_SUPPORTED, ":2:", "element 'VERTEX_XY' is not supported"},
        {"VERTEX_SE2 0 0 0 0\nFIX\n", SBM_ERR_PARSE, ":2:", "FIX needs at least one vertex id"},
        {"VERTEX_SE2 0 0 0 0\nFIX 4\n", SBM_ERR_PARSE, ":2:", "FIX names vertex 4"},
        {"VERTEX_SE2 99999999999 0 0 0\n", SBM_ERR_PARSE, ":1:", "does not fit 32 bits"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char name[32], where[64];
        snprintf(name, sizeof name, "bad%zu.g2o", k);
        const char *path = sbm_test_write_text(name, cases[k].text);
        snprintf(where, sizeof where, "%s%s", name, cases[k].where);
        sbm_g2o_graph *g = (sbm_g2o_graph *)&cases[k];
        SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read(e->ctx, path, &g), cases[k].status, where);
        SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read(e->ctx, path, &g), cases[k].status, cases[k].reason);
        assert_null(g);
        assert_non_null(strstr(sbm_ctx_last_error(e->ctx), "sbm_g2o_read: "));
    }
    sbm_g2o_graph *g = NULL;
    char missing[600];
    snprintf(missing, sizeof missing, "%s/nonexistent.g2o", sbm_test_tmp_dir);
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read(e->ctx, missing, &g), SBM_ERR_IO, "nonexistent.g2o: cannot open");
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read(e->ctx, NULL, &g), SBM_ERR_NULL_ARGUMENT, "path");
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read(e->ctx, missing, NULL), SBM_ERR_NULL_ARGUMENT, "graph");
    double chi2;
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_chi2(e->ctx, NULL, &chi2), SBM_ERR_NULL_ARGUMENT, "graph");
    assert_int_equal(sbm_g2o_read(NULL, missing, &g), SBM_ERR_NULL_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_read_real),
        SBM_TEST_BOTH(test_read_extra),
        SBM_TEST_BOTH(test_read_small),
        SBM_TEST_BOTH(test_read_valid_odd),
        SBM_TEST_BOTH(test_read_malformed),
    };
    return cmocka_run_group_tests(tests, sbm_test_make_tmp_dir, sbm_test_remove_tmp_dir);
}
