/* SPDX-License-Identifier: BSD-3-Clause */
/* g2o pose graphs: reading (2D SE2 and 3D SE3:QUAT vertices and edges, FIX lines); the graph of
 * the parsed elements, with the spanning-tree start of edge-only files, is built by g2o_graph.c.
 *
 * Decisions recorded here:
 *   - Elements: VERTEX_SE2, EDGE_SE2, VERTEX_SE3:QUAT, EDGE_SE3:QUAT, FIX. Blank lines and lines
 *     starting with '#' are skipped. Any other tag (landmarks, parameters, ...) is refused with
 *     SBM_ERR_NOT_SUPPORTED naming it and its line, rather than silently dropped: a graph solved
 *     without some of its constraints would give a wrong answer that looks right.
 *   - 2D and 3D elements in one file are an error. Quaternions are normalised on reading (the
 *     files carry about seven digits), without overflow for huge components; a zero
 *     quaternion (norm below 1e-12) is an error. Information matrices are
 *     the upper triangle, row by row, mirrored to the full symmetric matrix, and must be
 *     positive semidefinite, or are repaired on request (g2o_information.c).
 *   - Vertex ids must be unique; an edge must join two different vertices; when the file has
 *     VERTEX lines every edge and FIX must name one of them. A file with no VERTEX lines gets
 *     its vertices from the edges, ordered by id, and poses composed along a breadth-first
 *     spanning tree (edges in file order) from the first vertex of every connected component,
 *     which starts at the identity.
 *   - The gauge: FIX'ed vertices are held fixed; in a connected component without one, its first
 *     vertex (in the graph's order) is. */
#define _POSIX_C_SOURCE 200809L

#include "g2o_internal.h"

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
    /* the solvers' view (every vertex and edge), less the hidden anchor and prior edges */
    sbm_g2o_info info = sbm__g2o_solver_info(g);
    if (!g) return info;
    if (g->nprior > 0) { /* the anchor (the last vertex) and the prior edges (the last edges) */
        info.vertices = g->nv - 1;
        info.edges = g->ne - g->nprior;
        info.fixed = g->nfixed - 1;
        info.priors = g->nprior;
        info.prior_vertex = g->eto + info.edges;
        info.prior_measurement = g->emeas + g->ps * info.edges;
        info.prior_information = g->einfo + (size_t)(g->ed * g->ed) * info.edges;
    }
    return info;
}

/* ---------------------------------------------------------------------------------------- */
/* Growable host arrays for the parse                                                       */
/* ---------------------------------------------------------------------------------------- */

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
 * that a file from sbm_g2o_write reads back bitwise. Where the sum of squares overflows or
 * underflows in double, the norm is taken of q scaled by its largest magnitude, in long double:
 * (0 0 1e300 0) is (0 0 1 0), not a zero or non-finite quaternion. Other quaternions take the
 * plain double path, so that ordinary files read bitwise as before. */
static sbm_status normalize_quat(sbm__text_reader *rd, const char *tag, double *q)
{
    const double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if (isnormal(n2) && isfinite(n2)) {
        const double n = sqrt(n2);
        if (n > 1e-12) {
            /* a quaternion unit to rounding (one written by sbm_g2o_write) is kept as
             * written: dividing by its norm would only add round-off */
            if (fabs(n - 1.0) > 4.0 * DBL_EPSILON)
                for (int k = 0; k < 4; k++) q[k] /= n;
            return SBM_SUCCESS;
        }
    }
    long double m = 0.0L, s = 0.0L;
    for (int k = 0; k < 4; k++)
        if (fabsl((long double)q[k]) > m) m = fabsl((long double)q[k]);
    if (m > 0.0L)
        for (int k = 0; k < 4; k++) s += ((long double)q[k] / m) * ((long double)q[k] / m);
    const long double n = m * sqrtl(s);
    if (!(n > 1e-12L))
        return sbm__text_error(rd, SBM_ERR_PARSE, "%s: the quaternion (%g %g %g %g) has zero norm",
                               tag, q[0], q[1], q[2], q[3]);
    for (int k = 0; k < 4; k++) q[k] = (double)((long double)q[k] / n);
    return SBM_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Lines                                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* A line with the wrong number of values: "TAG needs N values (what), found M". */
static sbm_status count_error(sbm__text_reader *rd, const char *tag, int want, const char *what,
                              int nt)
{
    return sbm__text_error(rd, SBM_ERR_PARSE, "%s needs %d values (%s), found %s%d", tag, want,
                           what, nt > MAX_TOKENS ? "more than " : "",
                           nt > MAX_TOKENS ? MAX_TOKENS - 1 : nt - 1);
}

static sbm_status parse_vertex(sbm_ctx *ctx, sbm__text_reader *rd, g2o_parsed *p, char **tok,
                               int nt, int edim)
{
    const char *tag = tok[0];
    const int ps = edim == 2 ? 3 : 7;
    if (nt - 1 != 1 + ps) return count_error(rd, tag, 1 + ps, "id and pose", nt);
    pvertex *v = garr_push(ctx, &p->verts, "vertices");
    if (!v) return ctx->last_status;
    v->line = rd->line;
    SBM__TRY(parse_id(rd, tag, "id", tok[1], &v->id));
    SBM__TRY(parse_values(rd, tag, tok + 2, ps, v->pose));
    if (edim == 3) SBM__TRY(normalize_quat(rd, tag, v->pose + 3));
    return SBM_SUCCESS;
}

static sbm_status parse_edge(sbm_ctx *ctx, sbm__text_reader *rd, g2o_parsed *p, char **tok,
                             int nt, int edim)
{
    const char *tag = tok[0];
    const int ps = edim == 2 ? 3 : 7, ed = edim == 2 ? 3 : 6;
    const int ninfo = ed * (ed + 1) / 2, want = 2 + ps + ninfo;
    if (nt - 1 != want) {
        char what[96];
        snprintf(what, sizeof what, "2 ids, %d for the measurement, %d for the information matrix",
                 ps, ninfo);
        return count_error(rd, tag, want, what, nt);
    }
    pedge *e = garr_push(ctx, &p->edges, "edges");
    if (!e) return ctx->last_status;
    e->line = rd->line;
    SBM__TRY(parse_id(rd, tag, "first vertex id", tok[1], &e->from));
    SBM__TRY(parse_id(rd, tag, "second vertex id", tok[2], &e->to));
    if (e->from == e->to)
        return sbm__text_error(rd, SBM_ERR_PARSE, "%s joins vertex %d to itself", tag,
                               (int)e->from);
    SBM__TRY(parse_values(rd, tag, tok + 3, ps, e->meas));
    if (edim == 3) SBM__TRY(normalize_quat(rd, tag, e->meas + 3));
    double up[21];
    SBM__TRY(parse_values(rd, tag, tok + 3 + ps, ninfo, up));
    int k = 0;
    for (int r = 0; r < ed; r++)
        for (int c = r; c < ed; c++, k++) {
            e->info[r + ed * c] = up[k];
            e->info[c + ed * r] = up[k];
        }
    sbm__g2o_omega_check(&p->omega, rd->line, e->from, e->to, ed, e->info);
    return SBM_SUCCESS;
}

/* FIX id ... */
static sbm_status parse_fix(sbm_ctx *ctx, sbm__text_reader *rd, g2o_parsed *p, char **tok, int nt)
{
    if (nt < 2) return sbm__text_error(rd, SBM_ERR_PARSE, "FIX needs at least one vertex id");
    for (int k = 1; k < nt; k++) {
        pfix *f = garr_push(ctx, &p->fixes, "fixed vertices");
        if (!f) return ctx->last_status;
        f->line = rd->line;
        SBM__TRY(parse_id(rd, "FIX", "vertex id", tok[k], &f->id));
    }
    if (nt > MAX_TOKENS) /* more ids than one split holds: the rest of the line is not parsed */
        return sbm__text_error(rd, SBM_ERR_PARSE, "FIX lists more than %d ids on one line",
                               MAX_TOKENS);
    return SBM_SUCCESS;
}

/* One line of nt >= 1 tokens, not a comment. */
static sbm_status parse_line(sbm_ctx *ctx, sbm__text_reader *rd, g2o_parsed *p, char **tok, int nt)
{
    const char *tag = tok[0];
    int edim = 0, is_vertex = 0;
    if (!strcmp(tag, "VERTEX_SE2")) edim = 2, is_vertex = 1;
    else if (!strcmp(tag, "EDGE_SE2")) edim = 2;
    else if (!strcmp(tag, "VERTEX_SE3:QUAT")) edim = 3, is_vertex = 1;
    else if (!strcmp(tag, "EDGE_SE3:QUAT")) edim = 3;
    else if (strcmp(tag, "FIX") != 0)
        return sbm__text_error(rd, SBM_ERR_NOT_SUPPORTED,
                               "element '%.60s' is not supported (sbm reads VERTEX_SE2, EDGE_SE2, "
                               "VERTEX_SE3:QUAT, EDGE_SE3:QUAT and FIX)",
                               tag);
    if (!edim) return parse_fix(ctx, rd, p, tok, nt);
    if (p->dim == 0) {
        p->dim = edim;
        p->first_line = rd->line;
    } else if (p->dim != edim) {
        return sbm__text_error(rd, SBM_ERR_PARSE,
                               "%s is a %dD element, but the graph is %dD (line %" PRId64
                               " was its first element)",
                               tag, edim, p->dim, p->first_line);
    }
    return is_vertex ? parse_vertex(ctx, rd, p, tok, nt, edim)
                     : parse_edge(ctx, rd, p, tok, nt, edim);
}

/* ---------------------------------------------------------------------------------------- */
/* Reading                                                                                  */
/* ---------------------------------------------------------------------------------------- */

sbm_g2o_read_options sbm_g2o_read_default_options(void)
{
    sbm_g2o_read_options o;
    memset(&o, 0, sizeof o);
    o.information = SBM_G2O_INFORMATION_REFUSE;
    return o;
}

static sbm_status read_graph(sbm_ctx *ctx, const char *path, const sbm_g2o_read_options *opt,
                             sbm_g2o_graph **graph);

sbm_status sbm_g2o_read(sbm_ctx *ctx, const char *path, sbm_g2o_graph **graph)
{
    SBM__ENTER(ctx, "sbm_g2o_read");
    return read_graph(ctx, path, NULL, graph);
}

sbm_status sbm_g2o_read_ex(sbm_ctx *ctx, const char *path, const sbm_g2o_read_options *options,
                           sbm_g2o_graph **graph)
{
    SBM__ENTER(ctx, "sbm_g2o_read_ex");
    return read_graph(ctx, path, options, graph);
}

static sbm_status read_graph(sbm_ctx *ctx, const char *path, const sbm_g2o_read_options *opt,
                             sbm_g2o_graph **graph)
{
    if (!graph) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument graph is NULL");
    *graph = NULL;
    if (!path) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument path is NULL");
    const sbm_g2o_read_options o = opt ? *opt : sbm_g2o_read_default_options();
    if (o.information != SBM_G2O_INFORMATION_REFUSE && o.information != SBM_G2O_INFORMATION_REPAIR)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument options: information = %d is not an sbm_g2o_information "
                          "(SBM_G2O_INFORMATION_REFUSE or SBM_G2O_INFORMATION_REPAIR)",
                          (int)o.information);
    g2o_parsed p;
    memset(&p, 0, sizeof p);
    p.verts.elem = sizeof(pvertex);
    p.edges.elem = sizeof(pedge);
    p.fixes.elem = sizeof(pfix);
    p.omega.repair = o.information == SBM_G2O_INFORMATION_REPAIR;

    sbm__text_reader rd;
    char *tok[MAX_TOKENS + 1];
    sbm_status st = sbm__text_open(ctx, path, &rd);
    if (st != SBM_SUCCESS) return st;
    for (;;) {
        if ((st = sbm__text_next_line(&rd)) != SBM_SUCCESS || !rd.text) break;
        const int nt = split(rd.text, tok);
        if (nt == 0 || tok[0][0] == '#') continue;
        if ((st = parse_line(ctx, &rd, &p, tok, nt)) != SBM_SUCCESS) break;
    }
    if (st == SBM_SUCCESS && p.verts.n == 0 && p.edges.n == 0)
        st = sbm__text_error(&rd, SBM_ERR_PARSE, "no VERTEX or EDGE lines");
    if (st == SBM_SUCCESS)
        st = sbm__g2o_omega_refuse(&rd, &p.omega, p.dim == 2 ? "EDGE_SE2" : "EDGE_SE3:QUAT",
                                   p.edges.n);
    if (st == SBM_SUCCESS) st = sbm__g2o_build(ctx, &rd, &p, graph);
    sbm__text_close(&rd);
    garr_free(ctx, &p.verts);
    garr_free(ctx, &p.edges);
    garr_free(ctx, &p.fixes);
    return st;
}
