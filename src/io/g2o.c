/* g2o pose graphs: reading (2D SE2 and 3D SE3:QUAT vertices and edges, FIX lines), the
 * spanning-tree initialisation of edge-only files.
 *
 * Decisions recorded here:
 *   - Elements: VERTEX_SE2, EDGE_SE2, VERTEX_SE3:QUAT, EDGE_SE3:QUAT, FIX. Blank lines and lines
 *     starting with '#' are skipped. Any other tag (landmarks, parameters, ...) is refused with
 *     SBM_ERR_NOT_SUPPORTED naming it and its line, rather than silently dropped: a graph solved
 *     without some of its constraints would give a wrong answer that looks right.
 *   - 2D and 3D elements in one file are an error. Quaternions are normalised on reading (the
 *     files carry about seven digits); a zero quaternion is an error. Information matrices are
 *     the upper triangle, row by row, mirrored to the full symmetric matrix; a negative
 *     diagonal entry is an error.
 *   - Vertex ids must be unique; an edge must join two different vertices; when the file has
 *     VERTEX lines every edge and FIX must name one of them. A file with no VERTEX lines gets
 *     its vertices from the edges, ordered by id, and poses composed along a breadth-first
 *     spanning tree (edges in file order) from the first vertex of every connected component,
 *     which starts at the identity.
 *   - The gauge: FIX'ed vertices are held fixed; in a connected component without one, its first
 *     vertex (in the graph's order) is. */
#define _POSIX_C_SOURCE 200809L

#include "io_internal.h"
#include "sbm_geometry.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void sbm_g2o_destroy(sbm_g2o_graph *g)
{
    if (!g) return;
    sbm_allocator a = g->a;
    sbm__free_with(&a, g->vid);
    sbm__free_with(&a, g->poses);
    sbm__free_with(&a, g->fixed);
    sbm__free_with(&a, g->efrom);
    sbm__free_with(&a, g->eto);
    sbm__free_with(&a, g->emeas);
    sbm__free_with(&a, g->einfo);
    sbm__free_with(&a, g);
}

sbm_g2o_info sbm_g2o_get_info(const sbm_g2o_graph *g)
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
    return info;
}

/* ---------------------------------------------------------------------------------------- */
/* Growable host arrays for the parse                                                       */
/* ---------------------------------------------------------------------------------------- */

typedef struct garr {
    void *p;       /* elements */
    int64_t n;     /* used */
    int64_t cap;   /* allocated */
    size_t elem;   /* element size */
} garr;

static void *garr_push(sbm_ctx *ctx, garr *a, const char *what)
{
    if (a->n == a->cap) {
        const int64_t nc = a->cap ? 2 * a->cap : 256;
        int ok;
        const size_t bytes = sbm__mul_size(ctx, (size_t)nc, a->elem, what, &ok);
        if (!ok) return NULL;
        void *np = sbm__host_alloc(ctx, bytes, what);
        if (!np) return NULL;
        if (a->p) {
            memcpy(np, a->p, (size_t)a->n * a->elem);
            sbm__host_free(ctx, a->p);
        }
        a->p = np;
        a->cap = nc;
    }
    return (char *)a->p + (size_t)(a->n++) * a->elem;
}

static void garr_free(sbm_ctx *ctx, garr *a)
{
    if (a->p) sbm__host_free(ctx, a->p);
    a->p = NULL;
}

/* Parsed elements, before ids are resolved. */
typedef struct pvertex {
    int32_t id;
    int64_t line;
    double pose[7];
} pvertex;

typedef struct pedge {
    int32_t from, to;  /* ids */
    int64_t line;
    double meas[7];
    double info[36];   /* full, column-major */
} pedge;

typedef struct pfix {
    int32_t id;
    int64_t line;
} pfix;

/* ---------------------------------------------------------------------------------------- */
/* Tokens                                                                                   */
/* ---------------------------------------------------------------------------------------- */

#define MAX_TOKENS 40

/* Split the line in place; @return the number of tokens (at most MAX_TOKENS + 1: more is
 * reported as MAX_TOKENS + 1). */
static int split(char *s, char **tok)
{
    int n = 0;
    for (;;) {
        while (*s && isspace((unsigned char)*s)) s++;
        if (!*s) return n;
        if (n == MAX_TOKENS + 1) return n;
        tok[n++] = s;
        while (*s && !isspace((unsigned char)*s)) s++;
        if (*s) *s++ = '\0';
    }
}

static sbm_status parse_id(sbm__text_reader *rd, const char *tag, const char *what, const char *t,
                           int32_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(t, &end, 10);
    if (end == t || *end != '\0')
        return sbm__text_error(rd, SBM_ERR_PARSE, "%s: %s '%s' is not an integer", tag, what, t);
    if (errno == ERANGE || v < INT32_MIN || v > INT32_MAX)
        return sbm__text_error(rd, SBM_ERR_PARSE, "%s: %s %s does not fit 32 bits", tag, what, t);
    *out = (int32_t)v;
    return SBM_SUCCESS;
}

static sbm_status parse_values(sbm__text_reader *rd, const char *tag, char **tok, int n,
                               double *out)
{
    for (int k = 0; k < n; k++) {
        char *end;
        double v = strtod(tok[k], &end);
        if (end == tok[k] || *end != '\0')
            return sbm__text_error(rd, SBM_ERR_PARSE, "%s: value %d '%s' is not a number", tag,
                                   k + 1, tok[k]);
        if (!isfinite(v))
            return sbm__text_error(rd, SBM_ERR_PARSE, "%s: value %d '%s' is not finite", tag,
                                   k + 1, tok[k]);
        out[k] = v;
    }
    return SBM_SUCCESS;
}

/* Normalise the quaternion q (x y z w) of an element; one unit to 4 ulp is kept as written, so
 * that a file from sbm_g2o_write reads back bitwise. */
static sbm_status normalize_quat(sbm__text_reader *rd, const char *tag, double *q)
{
    const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (!(n > 1e-12))
        return sbm__text_error(rd, SBM_ERR_PARSE, "%s: the quaternion (%g %g %g %g) has zero norm",
                               tag, q[0], q[1], q[2], q[3]);
    /* a quaternion unit to rounding (one written by sbm_g2o_write) is kept as written:
     * dividing by its norm would only add round-off */
    if (fabs(n - 1.0) > 4.0 * DBL_EPSILON)
        for (int k = 0; k < 4; k++) q[k] /= n;
    return SBM_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static int cmp_id_index(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    /* packed (id + 2^31) << 32 | index: compare as unsigned keys */
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

static int64_t uf_find(int64_t *parent, int64_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

sbm_status sbm_g2o_read(sbm_ctx *ctx, const char *path, sbm_g2o_graph **graph)
{
    SBM__ENTER(ctx, "sbm_g2o_read");
    if (!graph) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument graph is NULL");
    *graph = NULL;
    if (!path) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument path is NULL");

    sbm__text_reader rd;
    garr verts = {NULL, 0, 0, sizeof(pvertex)};
    garr edges = {NULL, 0, 0, sizeof(pedge)};
    garr fixes = {NULL, 0, 0, sizeof(pfix)};
    int64_t *keys = NULL, *work = NULL;
    sbm_g2o_graph *g = NULL;
    int dim = 0;
    int64_t first_line = 0;
    char *tok[MAX_TOKENS + 1];

    sbm_status st = sbm__text_open(ctx, path, &rd);
    if (st != SBM_SUCCESS) return st;
    for (;;) {
        if ((st = sbm__text_next_line(&rd)) != SBM_SUCCESS) goto done;
        if (!rd.text) break;
        const int nt = split(rd.text, tok);
        if (nt == 0 || tok[0][0] == '#') continue;
        const char *tag = tok[0];
        int edim = 0, is_vertex = 0, is_edge = 0;
        if (!strcmp(tag, "VERTEX_SE2")) edim = 2, is_vertex = 1;
        else if (!strcmp(tag, "EDGE_SE2")) edim = 2, is_edge = 1;
        else if (!strcmp(tag, "VERTEX_SE3:QUAT")) edim = 3, is_vertex = 1;
        else if (!strcmp(tag, "EDGE_SE3:QUAT")) edim = 3, is_edge = 1;
        else if (strcmp(tag, "FIX") != 0) {
            st = sbm__text_error(&rd, SBM_ERR_NOT_SUPPORTED,
                                 "element '%.60s' is not supported (sbm reads VERTEX_SE2, EDGE_SE2, "
                                 "VERTEX_SE3:QUAT, EDGE_SE3:QUAT and FIX)",
                                 tag);
            goto done;
        }
        if (edim) {
            if (dim == 0) {
                dim = edim;
                first_line = rd.line;
            } else if (dim != edim) {
                st = sbm__text_error(&rd, SBM_ERR_PARSE,
                                     "%s is a %dD element, but the graph is %dD (line %" PRId64
                                     " was its first element)",
                                     tag, edim, dim, first_line);
                goto done;
            }
        }
        const int ps = edim == 2 ? 3 : 7, ed = edim == 2 ? 3 : 6;
        if (is_vertex) {
            const int want = 1 + ps;
            if (nt - 1 != want) {
                st = sbm__text_error(&rd, SBM_ERR_PARSE, "%s needs %d values (id and pose), found %s%d",
                                     tag, want, nt > MAX_TOKENS ? "more than " : "",
                                     nt > MAX_TOKENS ? MAX_TOKENS - 1 : nt - 1);
                goto done;
            }
            pvertex *v = garr_push(ctx, &verts, "vertices");
            if (!v) {
                st = ctx->last_status;
                goto done;
            }
            v->line = rd.line;
            if ((st = parse_id(&rd, tag, "id", tok[1], &v->id)) != SBM_SUCCESS) goto done;
            if ((st = parse_values(&rd, tag, tok + 2, ps, v->pose)) != SBM_SUCCESS) goto done;
            if (edim == 3 && (st = normalize_quat(&rd, tag, v->pose + 3)) != SBM_SUCCESS) goto done;
        } else if (is_edge) {
            const int ninfo = ed * (ed + 1) / 2, want = 2 + ps + ninfo;
            if (nt - 1 != want) {
                st = sbm__text_error(&rd, SBM_ERR_PARSE,
                                     "%s needs %d values (2 ids, %d for the measurement, %d for the "
                                     "information matrix), found %s%d",
                                     tag, want, ps, ninfo, nt > MAX_TOKENS ? "more than " : "",
                                     nt > MAX_TOKENS ? MAX_TOKENS - 1 : nt - 1);
                goto done;
            }
            pedge *e = garr_push(ctx, &edges, "edges");
            if (!e) {
                st = ctx->last_status;
                goto done;
            }
            e->line = rd.line;
            if ((st = parse_id(&rd, tag, "first vertex id", tok[1], &e->from)) != SBM_SUCCESS ||
                (st = parse_id(&rd, tag, "second vertex id", tok[2], &e->to)) != SBM_SUCCESS)
                goto done;
            if (e->from == e->to) {
                st = sbm__text_error(&rd, SBM_ERR_PARSE, "%s joins vertex %d to itself", tag,
                                     (int)e->from);
                goto done;
            }
            if ((st = parse_values(&rd, tag, tok + 3, ps, e->meas)) != SBM_SUCCESS) goto done;
            if (edim == 3 && (st = normalize_quat(&rd, tag, e->meas + 3)) != SBM_SUCCESS) goto done;
            double up[21];
            if ((st = parse_values(&rd, tag, tok + 3 + ps, ninfo, up)) != SBM_SUCCESS) goto done;
            int k = 0;
            for (int r = 0; r < ed; r++)
                for (int c = r; c < ed; c++, k++) {
                    e->info[r + ed * c] = up[k];
                    e->info[c + ed * r] = up[k];
                    if (r == c && up[k] < 0.0) {
                        st = sbm__text_error(&rd, SBM_ERR_PARSE,
                                             "%s: information matrix entry (%d,%d) = %g is negative",
                                             tag, r + 1, c + 1, up[k]);
                        goto done;
                    }
                }
        } else { /* FIX id... */
            if (nt < 2) {
                st = sbm__text_error(&rd, SBM_ERR_PARSE, "FIX needs at least one vertex id");
                goto done;
            }
            for (int k = 1; k < nt; k++) {
                pfix *f = garr_push(ctx, &fixes, "fixed vertices");
                if (!f) {
                    st = ctx->last_status;
                    goto done;
                }
                f->line = rd.line;
                if ((st = parse_id(&rd, "FIX", "vertex id", tok[k], &f->id)) != SBM_SUCCESS) goto done;
            }
            if (nt > MAX_TOKENS) {
                /* more ids than one split holds: the rest of the line is not parsed */
                st = sbm__text_error(&rd, SBM_ERR_PARSE, "FIX lists more than %d ids on one line",
                                     MAX_TOKENS);
                goto done;
            }
        }
    }
    if (verts.n == 0 && edges.n == 0) {
        st = sbm__text_error(&rd, SBM_ERR_PARSE, "no VERTEX or EDGE lines");
        goto done;
    }

    const int ps = dim == 2 ? 3 : 7, ed = dim == 2 ? 3 : 6;
    const pvertex *pv = verts.p;
    const pedge *pe = edges.p;
    const pfix *pf = fixes.p;
    const int from_edges = verts.n == 0;
    /* the vertex list: VERTEX lines in order, or the distinct edge ids by increasing id */
    int64_t nv = 0;
    const int64_t nkeys = from_edges ? 2 * edges.n : verts.n;
    keys = sbm__host_alloc(ctx, (size_t)(nkeys + 1) * sizeof(int64_t), "vertex ids");
    if (!keys) {
        st = SBM_ERR_OUT_OF_MEMORY;
        goto done;
    }
    if (!from_edges) {
        for (int64_t k = 0; k < verts.n; k++) keys[k] = pack(pv[k].id, k);
        qsort(keys, (size_t)verts.n, sizeof(int64_t), cmp_id_index);
        for (int64_t k = 1; k < verts.n; k++)
            if ((uint64_t)keys[k] >> 32 == (uint64_t)keys[k - 1] >> 32) {
                const pvertex *a = &pv[keys[k - 1] & 0xffffffffLL], *b = &pv[keys[k] & 0xffffffffLL];
                const pvertex *later = a->line > b->line ? a : b, *earlier = a->line > b->line ? b : a;
                rd.line = later->line;
                st = sbm__text_error(&rd, SBM_ERR_PARSE, "vertex %d is defined twice (also on line %" PRId64 ")",
                                     (int)later->id, earlier->line);
                goto done;
            }
        nv = verts.n;
    } else {
        int64_t m = 0;
        for (int64_t k = 0; k < edges.n; k++) {
            keys[m++] = pack(pe[k].from, 0);
            keys[m++] = pack(pe[k].to, 0);
        }
        qsort(keys, (size_t)m, sizeof(int64_t), cmp_id_index);
        for (int64_t k = 0; k < m; k++)
            if (nv == 0 || (uint64_t)keys[k] >> 32 != (uint64_t)keys[nv - 1] >> 32) keys[nv++] = keys[k];
        for (int64_t k = 0; k < nv; k++) keys[k] = (int64_t)(((uint64_t)keys[k] & 0xffffffff00000000ULL) | (uint64_t)k);
    }
    if (nv > INT32_MAX) {
        st = sbm__text_error(&rd, SBM_ERR_OVERFLOW, "%" PRId64 " vertices do not fit 32-bit indices", nv);
        goto done;
    }

    sbm_allocator a = sbm__host_allocator_of(ctx);
    g = sbm__alloc_with(ctx, &a, 1, sizeof *g, "the graph");
    if (!g) {
        st = SBM_ERR_OUT_OF_MEMORY;
        goto done;
    }
    memset(g, 0, sizeof *g);
    g->a = a;
    g->dim = dim, g->ps = ps, g->ed = ed;
    g->nv = nv, g->ne = edges.n, g->from_edges = from_edges;
    g->vid = sbm__alloc_with(ctx, &a, (size_t)nv, sizeof(int32_t), "vertex ids");
    g->poses = g->vid ? sbm__alloc_with(ctx, &a, (size_t)nv, (size_t)ps * sizeof(double), "poses") : NULL;
    g->fixed = g->poses ? sbm__alloc_with(ctx, &a, (size_t)nv, 1, "fixed flags") : NULL;
    g->efrom = g->fixed ? sbm__alloc_with(ctx, &a, (size_t)edges.n, sizeof(int32_t), "edge vertices") : NULL;
    g->eto = g->efrom ? sbm__alloc_with(ctx, &a, (size_t)edges.n, sizeof(int32_t), "edge vertices") : NULL;
    g->emeas = g->eto ? sbm__alloc_with(ctx, &a, (size_t)edges.n, (size_t)ps * sizeof(double), "measurements") : NULL;
    g->einfo = g->emeas ? sbm__alloc_with(ctx, &a, (size_t)edges.n, (size_t)(ed * ed) * sizeof(double), "information matrices") : NULL;
    work = g->einfo ? sbm__host_alloc(ctx, (size_t)(3 * nv + 2 * edges.n + 3) * sizeof(int64_t), "spanning tree") : NULL;
    if (!work) {
        st = ctx->last_status;
        goto done;
    }
    memset(g->fixed, 0, (size_t)nv);
    if (!from_edges) {
        for (int64_t k = 0; k < nv; k++) {
            g->vid[k] = pv[k].id;
            memcpy(g->poses + ps * k, pv[k].pose, (size_t)ps * sizeof(double));
        }
    } else {
        for (int64_t k = 0; k < nv; k++) g->vid[k] = (int32_t)((int64_t)((uint64_t)keys[k] >> 32) - 2147483648LL);
    }
    for (int64_t k = 0; k < edges.n; k++) {
        const int64_t i = find_id(keys, nv, pe[k].from), j = find_id(keys, nv, pe[k].to);
        if (i < 0 || j < 0) {
            rd.line = pe[k].line;
            st = sbm__text_error(&rd, SBM_ERR_PARSE, "%s names vertex %d, which has no VERTEX line",
                                 dim == 2 ? "EDGE_SE2" : "EDGE_SE3:QUAT",
                                 (int)(i < 0 ? pe[k].from : pe[k].to));
            goto done;
        }
        g->efrom[k] = (int32_t)i;
        g->eto[k] = (int32_t)j;
        memcpy(g->emeas + ps * k, pe[k].meas, (size_t)ps * sizeof(double));
        for (int c = 0; c < ed; c++)
            for (int r = 0; r < ed; r++) g->einfo[(size_t)(ed * ed) * k + r + ed * c] = pe[k].info[r + ed * c];
    }
    for (int64_t k = 0; k < fixes.n; k++) {
        const int64_t i = find_id(keys, nv, pf[k].id);
        if (i < 0) {
            rd.line = pf[k].line;
            st = sbm__text_error(&rd, SBM_ERR_PARSE, "FIX names vertex %d, which is not in the graph",
                                 (int)pf[k].id);
            goto done;
        }
        g->fixed[i] = 1;
    }

    /* Connected components (union-find); the first vertex of a component without a FIX'ed
     * vertex is fixed. */
    int64_t *parent = work, *has_fix = work + nv;
    for (int64_t v = 0; v < nv; v++) parent[v] = v, has_fix[v] = 0;
    for (int64_t k = 0; k < edges.n; k++) {
        int64_t x = uf_find(parent, g->efrom[k]), y = uf_find(parent, g->eto[k]);
        if (x != y) parent[x > y ? x : y] = x < y ? x : y; /* the root is the smallest index */
    }
    for (int64_t v = 0; v < nv; v++)
        if (g->fixed[v]) has_fix[uf_find(parent, v)] = 1;
    for (int64_t v = 0; v < nv; v++)
        if (uf_find(parent, v) == v && !has_fix[v]) g->fixed[v] = 1;
    g->nfixed = 0;
    for (int64_t v = 0; v < nv; v++) g->nfixed += g->fixed[v];

    if (from_edges) {
        /* BFS over the incidence lists (edges in file order) from every component's root. */
        int64_t *adjp = work + nv, *adj = work + 2 * nv + 1, *queue = adj + 2 * edges.n;
        int64_t *seen = parent; /* reuse: -1 unvisited */
        for (int64_t v = 0; v <= nv; v++) adjp[v] = 0;
        for (int64_t k = 0; k < edges.n; k++) adjp[g->efrom[k] + 1]++, adjp[g->eto[k] + 1]++;
        for (int64_t v = 0; v < nv; v++) adjp[v + 1] += adjp[v];
        for (int64_t k = 0; k < edges.n; k++) {
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
                    const double *z = g->emeas + ps * k, *xu = g->poses + ps * u;
                    double *xw = g->poses + ps * w;
                    /* Xj = Xi Z, Xi = Xj Z^-1 */
                    if (ps == 3) {
                        double zi[3];
                        if (forward) {
                            sbm__se2_compose(xu, z, xw);
                        } else {
                            sbm__se2_inverse(z, zi);
                            sbm__se2_compose(xu, zi, xw);
                        }
                    } else {
                        double zi[7];
                        if (forward) {
                            sbm__se3_compose(xu, z, xw);
                        } else {
                            sbm__se3_inverse(z, zi);
                            sbm__se3_compose(xu, zi, xw);
                        }
                    }
                    queue[tail++] = w;
                }
            }
        }
    }
    *graph = g;
    g = NULL;
    st = SBM_SUCCESS;

done:
    sbm__text_close(&rd);
    garr_free(ctx, &verts);
    garr_free(ctx, &edges);
    garr_free(ctx, &fixes);
    if (keys) sbm__host_free(ctx, keys);
    if (work) sbm__host_free(ctx, work);
    sbm_g2o_destroy(g);
    return st;
}
