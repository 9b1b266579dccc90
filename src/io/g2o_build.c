// SPDX-License-Identifier: BSD-3-Clause
/* Pose graphs built in memory (sbm_g2o_graph_create), the graph container the g2o reader fills
 * too (sbm__g2o_graph_alloc), the gauge of every connected component (sbm__g2o_gauge, also the
 * reader's) and fixed vertices (sbm_g2o_set_fixed).
 *
 * Decisions recorded here:
 *   - A prior is stored as an edge from an anchor vertex, the last vertex of the graph, fixed
 *     at the identity pose: e = toVector(Z^-1 (I^-1 X)) = toVector(Z^-1 X) is then g2o's prior
 *     error (EdgeSE2Prior / EdgeSE3Prior without offset), and every solver and both backends'
 *     kernels handle it as the edge it is (the anchor is fixed: J has no column for it). The
 *     priors are the last edges. sbm_g2o_get_info hides the anchor and the prior edges (they
 *     are listed as priors); the solvers see them (sbm__g2o_solver_info).
 *   - The anchor joins the components of the vertices with a prior, so the gauge rule "a
 *     component without a fixed vertex" leaves exactly those with neither fixed vertex nor
 *     prior. */
#include "io_internal.h"
#include "sbm_geometry.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

sbm_g2o_graph *sbm__g2o_graph_alloc(sbm_ctx *ctx, int dim, int64_t nv, int64_t ne)
{
    const int ps = dim == 2 ? 3 : 7, ed = dim == 2 ? 3 : 6;
    sbm_allocator a = sbm__host_allocator_of(ctx);
    sbm_g2o_graph *g = sbm__alloc_with(ctx, &a, 1, sizeof *g, "the graph");
    if (!g) return NULL;
    memset(g, 0, sizeof *g);
    g->a = a;
    g->dim = dim, g->ps = ps, g->ed = ed;
    g->nv = nv, g->ne = ne;
    g->vid = sbm__alloc_with(ctx, &a, (size_t)nv, sizeof(int32_t), "vertex ids");
    g->poses = g->vid ? sbm__alloc_with(ctx, &a, (size_t)nv, (size_t)ps * sizeof(double), "poses") : NULL;
    g->fixed = g->poses ? sbm__alloc_with(ctx, &a, (size_t)nv, 1, "fixed flags") : NULL;
    g->efrom = g->fixed ? sbm__alloc_with(ctx, &a, (size_t)ne, sizeof(int32_t), "edge vertices") : NULL;
    g->eto = g->efrom ? sbm__alloc_with(ctx, &a, (size_t)ne, sizeof(int32_t), "edge vertices") : NULL;
    g->emeas = g->eto ? sbm__alloc_with(ctx, &a, (size_t)ne, (size_t)ps * sizeof(double), "measurements") : NULL;
    g->einfo = g->emeas ? sbm__alloc_with(ctx, &a, (size_t)ne, (size_t)(ed * ed) * sizeof(double), "information matrices") : NULL;
    if (!g->einfo) {
        sbm_g2o_destroy(g);
        return NULL;
    }
    memset(g->fixed, 0, (size_t)nv);
    return g;
}

static int64_t uf_find(int64_t *parent, int64_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

sbm_status sbm__g2o_gauge(sbm_ctx *ctx, sbm_g2o_graph *g, int fix, const char *what)
{
    const int64_t nv = g->nv;
    int64_t *parent = sbm__host_alloc(ctx, (size_t)(3 * nv + 1) * sizeof(int64_t), "components");
    if (!parent) return SBM_ERR_OUT_OF_MEMORY;
    int64_t *has_fix = parent + nv, *size = parent + 2 * nv;
    for (int64_t v = 0; v < nv; v++) parent[v] = v, has_fix[v] = 0, size[v] = 0;
    for (int64_t k = 0; k < g->ne; k++) { /* the root is the smallest index */
        int64_t x = uf_find(parent, g->efrom[k]), y = uf_find(parent, g->eto[k]);
        if (x != y) parent[x > y ? x : y] = x < y ? x : y;
    }
    for (int64_t v = 0; v < nv; v++) {
        const int64_t r = uf_find(parent, v);
        size[r]++;
        if (g->fixed[v]) has_fix[r] = 1;
    }
    sbm_status st = SBM_SUCCESS;
    for (int64_t v = 0; v < nv && st == SBM_SUCCESS; v++) {
        if (uf_find(parent, v) != v || has_fix[v]) continue;
        if (fix)
            g->fixed[v] = 1;
        else
            st = sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                            "the connected component of vertex %" PRId64 " (id %d; %" PRId64
                            " vertices) has no fixed vertex and no prior: its poses are free up "
                            "to a rigid motion (the gauge); %s",
                            v, (int)g->vid[v], size[v], what);
    }
    g->nfixed = 0;
    for (int64_t v = 0; v < nv; v++) g->nfixed += g->fixed[v];
    sbm__host_free(ctx, parent);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Checks and conversions of the caller's arrays                                            */
/* ---------------------------------------------------------------------------------------- */

static int pose_width(const sbm_g2o_graph_desc *d)
{
    return d->dim == 2 ? 3 : d->format == SBM_POSE_MATRIX ? 12 : 7;
}

/* The unit quaternion (x y z w) of the rotation matrix R (row by row), Shepperd's choice of the
 * largest pivot. */
static void matrix_to_quat(const double *R, double *q)
{
    const double r00 = R[0], r01 = R[1], r02 = R[2], r10 = R[3], r11 = R[4], r12 = R[5];
    const double r20 = R[6], r21 = R[7], r22 = R[8], tr = r00 + r11 + r22;
    if (tr >= r00 && tr >= r11 && tr >= r22) {
        const double s = 2.0 * sqrt(1.0 + tr);
        q[3] = 0.25 * s, q[0] = (r21 - r12) / s, q[1] = (r02 - r20) / s, q[2] = (r10 - r01) / s;
    } else if (r00 >= r11 && r00 >= r22) {
        const double s = 2.0 * sqrt(1.0 + r00 - r11 - r22);
        q[0] = 0.25 * s, q[3] = (r21 - r12) / s, q[1] = (r01 + r10) / s, q[2] = (r02 + r20) / s;
    } else if (r11 >= r22) {
        const double s = 2.0 * sqrt(1.0 + r11 - r00 - r22);
        q[1] = 0.25 * s, q[3] = (r02 - r20) / s, q[0] = (r01 + r10) / s, q[2] = (r12 + r21) / s;
    } else {
        const double s = 2.0 * sqrt(1.0 + r22 - r00 - r11);
        q[2] = 0.25 * s, q[3] = (r10 - r01) / s, q[0] = (r02 + r20) / s, q[1] = (r12 + r21) / s;
    }
    sbm__geo_quat_normalize(q);
}

/* Item k of array (pose_width values at src) into out (pose_size values): finite, the rotation
 * within SBM_POSE_ROTATION_TOLERANCE, normalised. */
static sbm_status read_pose(sbm_ctx *ctx, const sbm_g2o_graph_desc *d, const char *array,
                            int64_t k, const double *src, double *out)
{
    const int w = pose_width(d);
    for (int a = 0; a < w; a++)
        if (!isfinite(src[a]))
            return sbm__error(ctx, SBM_ERR_NOT_FINITE, "desc->%s[%" PRId64 "]: value %d is %g",
                              array, k, a, src[a]);
    memcpy(out, src, (size_t)(d->dim == 2 ? 3 : w == 7 ? 7 : 3) * sizeof(double));
    if (d->dim == 2) return SBM_SUCCESS;
    if (w == 7) {
        const double *q = src + 3, n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        if (!(fabs(n - 1.0) <= SBM_POSE_ROTATION_TOLERANCE))
            return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                              "desc->%s[%" PRId64 "]: the quaternion (%g %g %g %g) has norm %.9g, "
                              "not 1 within %g",
                              array, k, q[0], q[1], q[2], q[3], n, SBM_POSE_ROTATION_TOLERANCE);
        /* unit to rounding (as sbm_g2o_write prints it): kept as given, as the reader does */
        for (int a = 0; a < 4; a++) out[3 + a] = fabs(n - 1.0) > 4.0 * DBL_EPSILON ? q[a] / n : q[a];
        return SBM_SUCCESS;
    }
    const double *R = src + 3;
    double dev = 0.0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) { /* (R^T R)_ij - delta_ij; R row by row */
            const double s = R[i] * R[j] + R[3 + i] * R[3 + j] + R[6 + i] * R[6 + j];
            dev = fmax(dev, fabs(s - (i == j ? 1.0 : 0.0)));
        }
    const double det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) +
                       R[2] * (R[3] * R[7] - R[4] * R[6]);
    if (!(dev <= SBM_POSE_ROTATION_TOLERANCE) || !(det > 0.0))
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "desc->%s[%" PRId64 "]: the rotation matrix is not a rotation: max "
                          "|R^T R - I| = %.3g (tolerance %g), det R = %.9g",
                          array, k, dev, SBM_POSE_ROTATION_TOLERANCE, det);
    matrix_to_quat(R, out + 3);
    return SBM_SUCCESS;
}

/* Information matrix k of array (n x n, NULL: identity) into out: finite, symmetric, PSD. */
static sbm_status read_information(sbm_ctx *ctx, int n, const char *array, int64_t k,
                                   const double *src, double *out)
{
    if (!src) {
        for (int e = 0; e < n * n; e++) out[e] = e % (n + 1) == 0 ? 1.0 : 0.0;
        return SBM_SUCCESS;
    }
    double amax = 0.0;
    for (int e = 0; e < n * n; e++) {
        if (!isfinite(src[e]))
            return sbm__error(ctx, SBM_ERR_NOT_FINITE, "desc->%s[%" PRId64 "]: entry (%d, %d) is %g",
                              array, k, e % n, e / n, src[e]);
        amax = fmax(amax, fabs(src[e]));
    }
    for (int c = 0; c < n; c++)
        for (int r = c + 1; r < n; r++)
            if (fabs(src[r + n * c] - src[c + n * r]) > 1e-12 * amax)
                return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                                  "desc->%s[%" PRId64 "] is not symmetric: entry (%d, %d) = %.17g, "
                                  "entry (%d, %d) = %.17g",
                                  array, k, r, c, src[r + n * c], c, r, src[c + n * r]);
    double lo, big;
    if (!sbm__sym_psd(n, src, &lo, &big))
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "desc->%s[%" PRId64 "] is not positive semidefinite: smallest "
                          "eigenvalue %.6g (largest magnitude %.6g, tolerance %g of it)",
                          array, k, lo, big, SBM_G2O_PSD_TOLERANCE);
    memcpy(out, src, (size_t)(n * n) * sizeof(double));
    return SBM_SUCCESS;
}

static sbm_status check_index(sbm_ctx *ctx, const char *array, const int32_t *idx, int64_t n,
                              int64_t nv)
{
    for (int64_t k = 0; k < n; k++)
        if (idx[k] < 0 || idx[k] >= nv)
            return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                              "desc->%s[%" PRId64 "] = %d is not a vertex: 0 <= index < %" PRId64,
                              array, k, (int)idx[k], nv);
    return SBM_SUCCESS;
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Counts, enums, NULL arrays, indices and distinct ids. */
static sbm_status check_desc(sbm_ctx *ctx, const sbm_g2o_graph_desc *d)
{
    if (d->dim != 2 && d->dim != 3)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "desc->dim = %d is not 2 or 3", d->dim);
    if (d->format != SBM_POSE_QUATERNION && !(d->format == SBM_POSE_MATRIX && d->dim == 3))
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "desc->format = %d is not a pose format for dim %d", (int)d->format,
                          d->dim);
    if (d->gauge != SBM_GAUGE_AUTO && d->gauge != SBM_GAUGE_REFUSE)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "desc->gauge = %d is not an sbm_gauge",
                          (int)d->gauge);
    if (d->vertices < 1 || d->vertices >= INT32_MAX || d->edges < 0 || d->priors < 0 ||
        d->edges > INT32_MAX || d->priors > INT32_MAX)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "desc: vertices = %" PRId64 ", edges = %" PRId64 ", priors = %" PRId64
                          " (1 <= vertices < %d, 0 <= edges, priors <= %d)",
                          d->vertices, d->edges, d->priors, INT32_MAX, INT32_MAX);
    const struct {
        const char *name;
        const void *p;
        int64_t n;
    } arrays[6] = {{"poses", d->poses, d->vertices},
                   {"edge_from", d->edge_from, d->edges},
                   {"edge_to", d->edge_to, d->edges},
                   {"edge_measurement", d->edge_measurement, d->edges},
                   {"prior_vertex", d->prior_vertex, d->priors},
                   {"prior_measurement", d->prior_measurement, d->priors}};
    for (int a = 0; a < 6; a++)
        if (arrays[a].n > 0 && !arrays[a].p)
            return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "desc->%s is NULL (%" PRId64 " entries)",
                              arrays[a].name, arrays[a].n);
    SBM__TRY(check_index(ctx, "edge_from", d->edge_from, d->edges, d->vertices));
    SBM__TRY(check_index(ctx, "edge_to", d->edge_to, d->edges, d->vertices));
    SBM__TRY(check_index(ctx, "prior_vertex", d->prior_vertex, d->priors, d->vertices));
    for (int64_t k = 0; k < d->edges; k++)
        if (d->edge_from[k] == d->edge_to[k])
            return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                              "desc: edge %" PRId64 " joins vertex %d to itself", k,
                              (int)d->edge_from[k]);
    for (int64_t v = 0; d->fixed && v < d->vertices; v++)
        if (d->fixed[v] > 1)
            return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                              "desc->fixed[%" PRId64 "] = %d is not 0 or 1", v, (int)d->fixed[v]);
    if (!d->vertex_id) return SBM_SUCCESS;
    /* (id + 2^31) << 32 | index, sorted as unsigned: equal ids side by side */
    uint64_t *keys = sbm__host_alloc(ctx, (size_t)d->vertices * sizeof(uint64_t), "vertex ids");
    if (!keys) return SBM_ERR_OUT_OF_MEMORY;
    for (int64_t v = 0; v < d->vertices; v++)
        keys[v] = ((uint64_t)((int64_t)d->vertex_id[v] + 2147483648LL) << 32) | (uint64_t)v;
    qsort(keys, (size_t)d->vertices, sizeof(uint64_t), cmp_u64);
    sbm_status st = SBM_SUCCESS;
    for (int64_t k = 1; k < d->vertices && st == SBM_SUCCESS; k++)
        if (keys[k] >> 32 == keys[k - 1] >> 32)
            st = sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                            "desc->vertex_id: vertices %" PRId64 " and %" PRId64 " have id %d",
                            (int64_t)(keys[k - 1] & 0xffffffffu), (int64_t)(keys[k] & 0xffffffffu),
                            (int)((int64_t)(keys[k] >> 32) - 2147483648LL));
    sbm__host_free(ctx, keys);
    return st;
}

/* The vertices, edges, priors and the anchor of d into g (allocated for them). */
static sbm_status fill(sbm_ctx *ctx, const sbm_g2o_graph_desc *d, sbm_g2o_graph *g)
{
    const int ps = g->ps, ed = g->ed, w = pose_width(d);
    for (int64_t v = 0; v < d->vertices; v++) {
        g->vid[v] = d->vertex_id ? d->vertex_id[v] : (int32_t)v;
        g->fixed[v] = d->fixed ? d->fixed[v] : 0;
        SBM__TRY(read_pose(ctx, d, "poses", v, d->poses + w * v, g->poses + ps * v));
    }
    for (int64_t k = 0; k < d->edges; k++) {
        g->efrom[k] = d->edge_from[k], g->eto[k] = d->edge_to[k];
        SBM__TRY(read_pose(ctx, d, "edge_measurement", k, d->edge_measurement + w * k,
                           g->emeas + ps * k));
        SBM__TRY(read_information(ctx, ed, "edge_information", k,
                                  d->edge_information ? d->edge_information + ed * ed * k : NULL,
                                  g->einfo + (size_t)(ed * ed) * k));
    }
    const int64_t anchor = d->vertices;
    for (int64_t q = 0; q < d->priors; q++) {
        const int64_t k = d->edges + q;
        g->efrom[k] = (int32_t)anchor, g->eto[k] = d->prior_vertex[q];
        SBM__TRY(read_pose(ctx, d, "prior_measurement", q, d->prior_measurement + w * q,
                           g->emeas + ps * k));
        SBM__TRY(read_information(ctx, ed, "prior_information", q,
                                  d->prior_information ? d->prior_information + ed * ed * q : NULL,
                                  g->einfo + (size_t)(ed * ed) * k));
    }
    if (d->priors > 0) {
        g->vid[anchor] = INT32_MIN; /* never free, so never named as an unknown */
        g->fixed[anchor] = 1;
        memset(g->poses + ps * anchor, 0, (size_t)ps * sizeof(double));
        if (ps == 7) g->poses[ps * anchor + 6] = 1.0;
    }
    return SBM_SUCCESS;
}

/* A vertex that no edge and no prior touches and that is not fixed: nothing determines it. */
static sbm_status check_touched(sbm_ctx *ctx, const sbm_g2o_graph *g, int64_t nv_user)
{
    unsigned char *seen = sbm__host_alloc(ctx, (size_t)g->nv, "touched flags");
    if (!seen) return SBM_ERR_OUT_OF_MEMORY;
    memcpy(seen, g->fixed, (size_t)g->nv);
    for (int64_t k = 0; k < g->ne; k++) seen[g->efrom[k]] = seen[g->eto[k]] = 1;
    int64_t bad = -1;
    for (int64_t v = 0; v < nv_user && bad < 0; v++)
        if (!seen[v]) bad = v;
    sbm__host_free(ctx, seen);
    if (bad < 0) return SBM_SUCCESS;
    return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                      "desc: vertex %" PRId64 " (id %d) is in no edge and has no prior: nothing "
                      "determines its pose (fix it or leave it out)",
                      bad, (int)g->vid[bad]);
}

sbm_status sbm_g2o_graph_create(sbm_ctx *ctx, const sbm_g2o_graph_desc *desc,
                                sbm_g2o_graph **graph)
{
    SBM__ENTER(ctx, "sbm_g2o_graph_create");
    if (!graph) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument graph is NULL");
    *graph = NULL;
    if (!desc) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument desc is NULL");
    SBM__TRY(check_desc(ctx, desc));
    const int64_t nv = desc->vertices + (desc->priors > 0), ne = desc->edges + desc->priors;
    sbm_g2o_graph *g = sbm__g2o_graph_alloc(ctx, desc->dim, nv, ne);
    if (!g) return ctx->last_status;
    g->nprior = desc->priors;
    sbm_status st = fill(ctx, desc, g);
    if (st == SBM_SUCCESS) st = check_touched(ctx, g, desc->vertices);
    if (st == SBM_SUCCESS)
        st = sbm__g2o_gauge(ctx, g, desc->gauge == SBM_GAUGE_AUTO,
                            "fix one of its vertices (desc->fixed) or give one a prior");
    if (st != SBM_SUCCESS) {
        sbm_g2o_destroy(g);
        return st;
    }
    *graph = g;
    return SBM_SUCCESS;
}

sbm_status sbm_g2o_set_fixed(sbm_ctx *ctx, sbm_g2o_graph *graph, int64_t vertex, int fixed)
{
    SBM__ENTER(ctx, "sbm_g2o_set_fixed");
    if (!graph) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument graph is NULL");
    const int64_t n = graph->nv - (graph->nprior > 0);
    if (vertex < 0 || vertex >= n)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument vertex = %" PRId64 " is out of range (0 <= vertex < %" PRId64
                          ")", vertex, n);
    if (fixed != 0 && fixed != 1)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "argument fixed = %d is not 0 or 1",
                          fixed);
    graph->nfixed += fixed - graph->fixed[vertex];
    graph->fixed[vertex] = (unsigned char)fixed;
    return SBM_SUCCESS;
}

sbm_g2o_info sbm__g2o_solver_info(const sbm_g2o_graph *g)
{
    sbm_g2o_info info;
    memset(&info, 0, sizeof info);
    if (!g) return info;
    info.dim = g->dim;
    info.pose_size = g->ps;
    info.error_dim = g->ed;
    info.vertices = g->nv;
    info.edges = g->ne;
    info.fixed = g->nfixed;
    info.vertex_id = g->vid;
    info.poses = g->poses;
    info.is_fixed = g->fixed;
    info.edge_from = g->efrom;
    info.edge_to = g->eto;
    info.edge_measurement = g->emeas;
    info.edge_information = g->einfo;
    info.from_edges = g->from_edges;
    info.repaired_information = g->nrepaired;
    return info;
}
