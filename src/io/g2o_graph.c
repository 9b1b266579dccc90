/* SPDX-License-Identifier: BSD-3-Clause */
/* g2o pose graphs: the graph of a parsed file (g2o.c parses). Vertex ids are resolved (the
 * VERTEX lines in file order, or for an edge-only file the distinct ids of the edges by
 * increasing id), the gauge is fixed (FIX'ed vertices; in a connected component without one,
 * its first vertex in the graph's order), and an edge-only file gets its poses composed along a
 * breadth-first spanning tree (edges in file order) from the first vertex of every connected
 * component, which starts at the identity. */
#include "g2o_internal.h"
#include "sbm_geometry.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int cmp_id_index(const void *a, const void *b)
{
    /* packed (id + 2^31) << 32 | index: compare as unsigned keys (as signed ones, every id
     * >= 0 has the sign bit and sorted before the negative ids, which find_id then missed) */
    const uint64_t x = (uint64_t)*(const int64_t *)a, y = (uint64_t)*(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t pack(int32_t id, int64_t index)
{
    return (int64_t)(((uint64_t)((int64_t)id + 2147483648LL) << 32) | (uint64_t)index);
}

/* Index of id in sorted packed keys, or -1. */
static int64_t find_id(const int64_t *keys, int64_t n, int32_t id)
{
    int64_t lo = 0, hi = n;
    const int64_t want = (int64_t)id + 2147483648LL;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        const int64_t k = (int64_t)((uint64_t)keys[mid] >> 32);
        if (k < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < n && (int64_t)((uint64_t)keys[lo] >> 32) == want) return (int64_t)(keys[lo] & 0xffffffffLL);
    return -1;
}

/* keys (nkeys + 1 entries allocated) = the sorted packed (id, vertex index) of the graph's
 * vertices; *nv their number. A vertex defined twice is an error naming both lines. */
static sbm_status index_vertices(sbm__text_reader *rd, const g2o_parsed *p, int64_t *keys,
                                 int64_t *nv)
{
    const pvertex *pv = p->verts.p;
    const pedge *pe = p->edges.p;
    int64_t n = 0;
    if (p->verts.n > 0) {
        for (int64_t k = 0; k < p->verts.n; k++) keys[k] = pack(pv[k].id, k);
        qsort(keys, (size_t)p->verts.n, sizeof(int64_t), cmp_id_index);
        for (int64_t k = 1; k < p->verts.n; k++)
            if ((uint64_t)keys[k] >> 32 == (uint64_t)keys[k - 1] >> 32) {
                const pvertex *a = &pv[keys[k - 1] & 0xffffffffLL], *b = &pv[keys[k] & 0xffffffffLL];
                const pvertex *later = a->line > b->line ? a : b, *earlier = a->line > b->line ? b : a;
                rd->line = later->line;
                return sbm__text_error(rd, SBM_ERR_PARSE,
                                       "vertex %d is defined twice (also on line %" PRId64 ")",
                                       (int)later->id, earlier->line);
            }
        n = p->verts.n;
    } else {
        int64_t m = 0;
        for (int64_t k = 0; k < p->edges.n; k++) {
            keys[m++] = pack(pe[k].from, 0);
            keys[m++] = pack(pe[k].to, 0);
        }
        qsort(keys, (size_t)m, sizeof(int64_t), cmp_id_index);
        for (int64_t k = 0; k < m; k++)
            if (n == 0 || (uint64_t)keys[k] >> 32 != (uint64_t)keys[n - 1] >> 32) keys[n++] = keys[k];
        for (int64_t k = 0; k < n; k++)
            keys[k] = (int64_t)(((uint64_t)keys[k] & 0xffffffff00000000ULL) | (uint64_t)k);
    }
    if (n > INT32_MAX)
        return sbm__text_error(rd, SBM_ERR_OVERFLOW, "%" PRId64 " vertices do not fit 32-bit indices",
                               n);
    *nv = n;
    return SBM_SUCCESS;
}

/* A graph of nv vertices and the parsed edges, arrays allocated (values unset;
 * sbm__g2o_graph_alloc, shared with sbm_g2o_graph_create). */
static sbm_g2o_graph *graph_alloc(sbm_ctx *ctx, const g2o_parsed *p, int64_t nv)
{
    sbm_g2o_graph *g = sbm__g2o_graph_alloc(ctx, p->dim, nv, p->edges.n);
    if (!g) return NULL;
    g->from_edges = p->verts.n == 0;
    g->nrepaired = p->omega.bad;
    return g;
}

/* The vertices' ids and poses, the edges and the FIX'ed vertices of p into g. */
static sbm_status graph_fill(sbm__text_reader *rd, const g2o_parsed *p, const int64_t *keys,
                             sbm_g2o_graph *g)
{
    const int ps = g->ps, ed = g->ed;
    const int64_t nv = g->nv;
    const pvertex *pv = p->verts.p;
    const pedge *pe = p->edges.p;
    const pfix *pf = p->fixes.p;
    if (!g->from_edges) {
        for (int64_t k = 0; k < nv; k++) {
            g->vid[k] = pv[k].id;
            memcpy(g->poses + ps * k, pv[k].pose, (size_t)ps * sizeof(double));
        }
    } else {
        for (int64_t k = 0; k < nv; k++)
            g->vid[k] = (int32_t)((int64_t)((uint64_t)keys[k] >> 32) - 2147483648LL);
    }
    for (int64_t k = 0; k < g->ne; k++) {
        const int64_t i = find_id(keys, nv, pe[k].from), j = find_id(keys, nv, pe[k].to);
        if (i < 0 || j < 0) {
            rd->line = pe[k].line;
            return sbm__text_error(rd, SBM_ERR_PARSE, "%s names vertex %d, which has no VERTEX line",
                                   g->dim == 2 ? "EDGE_SE2" : "EDGE_SE3:QUAT",
                                   (int)(i < 0 ? pe[k].from : pe[k].to));
        }
        g->efrom[k] = (int32_t)i;
        g->eto[k] = (int32_t)j;
        memcpy(g->emeas + ps * k, pe[k].meas, (size_t)ps * sizeof(double));
        for (int c = 0; c < ed; c++)
            for (int r = 0; r < ed; r++)
                g->einfo[(size_t)(ed * ed) * k + r + ed * c] = pe[k].info[r + ed * c];
    }
    for (int64_t k = 0; k < p->fixes.n; k++) {
        const int64_t i = find_id(keys, nv, pf[k].id);
        if (i < 0) {
            rd->line = pf[k].line;
            return sbm__text_error(rd, SBM_ERR_PARSE, "FIX names vertex %d, which is not in the graph",
                                   (int)pf[k].id);
        }
        g->fixed[i] = 1;
    }
    return SBM_SUCCESS;
}

/* xw = xu Z along edge k (forward: u is its first vertex), or xu Z^-1 against it. */
static void compose_along(const sbm_g2o_graph *g, int64_t k, int forward, const double *xu,
                          double *xw)
{
    const double *z = g->emeas + g->ps * k;
    double zi[7];
    if (g->ps == 3) {
        if (!forward) sbm__se2_inverse(z, zi);
        sbm__se2_compose(xu, forward ? z : zi, xw);
    } else {
        if (!forward) sbm__se3_inverse(z, zi);
        sbm__se3_compose(xu, forward ? z : zi, xw);
    }
}

/* Poses of an edge-only file: breadth-first over the incidence lists (edges in file order) from
 * every component's first vertex, at the identity. work: 3 nv + 2 ne + 1. */
static void spanning_tree_start(sbm_g2o_graph *g, int64_t *work)
{
    const int64_t nv = g->nv, ne = g->ne;
    const int ps = g->ps;
    int64_t *seen = work, *adjp = work + nv, *adj = work + 2 * nv + 1, *queue = adj + 2 * ne;
    for (int64_t v = 0; v <= nv; v++) adjp[v] = 0;
    for (int64_t k = 0; k < ne; k++) adjp[g->efrom[k] + 1]++, adjp[g->eto[k] + 1]++;
    for (int64_t v = 0; v < nv; v++) adjp[v + 1] += adjp[v];
    for (int64_t k = 0; k < ne; k++) {
        adj[adjp[g->efrom[k]]++] = k;
        adj[adjp[g->eto[k]]++] = k;
    }
    for (int64_t v = nv; v > 0; v--) adjp[v] = adjp[v - 1];
    adjp[0] = 0;
    for (int64_t v = 0; v < nv; v++) seen[v] = -1;
    for (int64_t root = 0; root < nv; root++) {
        if (seen[root] >= 0) continue;
        double *x = g->poses + ps * root;
        memset(x, 0, (size_t)ps * sizeof(double));
        if (ps == 7) x[6] = 1.0;
        seen[root] = 1;
        int64_t head = 0, tail = 0;
        queue[tail++] = root;
        while (head < tail) {
            const int64_t u = queue[head++];
            for (int64_t q = adjp[u]; q < adjp[u + 1]; q++) {
                const int64_t k = adj[q];
                const int forward = g->efrom[k] == u;
                const int64_t w = forward ? g->eto[k] : g->efrom[k];
                if (seen[w] >= 0) continue;
                seen[w] = 1;
                compose_along(g, k, forward, g->poses + ps * u, g->poses + ps * w);
                queue[tail++] = w;
            }
        }
    }
}

sbm_status sbm__g2o_build(sbm_ctx *ctx, sbm__text_reader *rd, const g2o_parsed *p,
                          sbm_g2o_graph **graph)
{
    const int64_t ne = p->edges.n;
    const int64_t nkeys = p->verts.n == 0 ? 2 * ne : p->verts.n;
    int64_t nv = 0, *work = NULL;
    sbm_g2o_graph *g = NULL;
    int64_t *keys = sbm__host_alloc(ctx, (size_t)(nkeys + 1) * sizeof(int64_t), "vertex ids");
    if (!keys) return SBM_ERR_OUT_OF_MEMORY;
    sbm_status st = index_vertices(rd, p, keys, &nv);
    if (st == SBM_SUCCESS) {
        g = graph_alloc(ctx, p, nv);
        work = g ? sbm__host_alloc(ctx, (size_t)(3 * nv + 2 * ne + 3) * sizeof(int64_t),
                                   "spanning tree")
                 : NULL;
        if (!work) st = ctx->last_status;
    }
    if (st == SBM_SUCCESS) st = graph_fill(rd, p, keys, g);
    if (st == SBM_SUCCESS) st = sbm__g2o_gauge(ctx, g, 1, "");
    if (st == SBM_SUCCESS) {
        if (g->from_edges) spanning_tree_start(g, work);
        *graph = g;
        g = NULL;
    }
    sbm__host_free(ctx, keys);
    if (work) sbm__host_free(ctx, work);
    sbm_g2o_destroy(g);
    return st;
}
