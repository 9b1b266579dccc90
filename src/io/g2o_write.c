/* SPDX-License-Identifier: BSD-3-Clause */
/* Writing g2o pose graphs: the vertex and edge types read (VERTEX_SE2/EDGE_SE2 or
 * VERTEX_SE3:QUAT/EDGE_SE3:QUAT), every vertex with a VERTEX line in the graph's order (a graph
 * read from an edge-only file gets its poses written), the edges in the graph's order, the
 * information matrices as their upper triangle row by row, and a FIX line naming every vertex
 * held fixed (the gauge the reader chose included, so that reading the file back holds the
 * same vertices fixed). "%.17g" throughout: reading the file back gives the same poses,
 * measurements and information matrices bitwise (the reader keeps a quaternion that is unit to
 * rounding as written). Through the atomic writer (text_io.c): a failure leaves no file. */
#include "io_internal.h"

#include <inttypes.h>
#include <math.h>

/* Refuse a non-finite value before the file is created. */
static sbm_status check_finite(sbm_ctx *ctx, const sbm_g2o_graph *g)
{
    for (int64_t v = 0; v < g->nv; v++)
        for (int a = 0; a < g->ps; a++)
            if (!isfinite(g->poses[g->ps * v + a]))
                return sbm__error(ctx, SBM_ERR_NOT_FINITE,
                                  "argument graph: value %d of the pose of vertex %d is %g", a + 1,
                                  (int)g->vid[v], g->poses[g->ps * v + a]);
    const int nm = g->ps, ni = g->ed * g->ed;
    for (int64_t k = 0; k < g->ne; k++)
        for (int a = 0; a < nm + ni; a++) {
            const double x = a < nm ? g->emeas[nm * k + a] : g->einfo[ni * k + a - nm];
            if (!isfinite(x))
                return sbm__error(ctx, SBM_ERR_NOT_FINITE,
                                  "argument graph: value %d of the %s of edge %" PRId64
                                  " (vertex %d to vertex %d) is %g",
                                  a < nm ? a + 1 : a - nm + 1,
                                  a < nm ? "measurement" : "information matrix", k,
                                  (int)g->vid[g->efrom[k]], (int)g->vid[g->eto[k]], x);
        }
    return SBM_SUCCESS;
}

static sbm_status write_values(sbm__text_writer *w, const double *x, int n)
{
    sbm_status st = SBM_SUCCESS;
    for (int a = 0; a < n && st == SBM_SUCCESS; a++) st = sbm__text_printf(w, " %.17g", x[a]);
    return st;
}

sbm_status sbm_g2o_write(sbm_ctx *ctx, const char *path, const sbm_g2o_graph *graph)
{
    SBM__ENTER(ctx, "sbm_g2o_write");
    if (!graph) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument graph is NULL");
    if (!path) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument path is NULL");
    const sbm_g2o_graph *g = graph;
    if (g->nprior > 0)
        return sbm__error(ctx, SBM_ERR_NOT_SUPPORTED,
                          "argument graph has %" PRId64 " priors, which the g2o types sbm writes "
                          "(VERTEX/EDGE_SE2, VERTEX/EDGE_SE3:QUAT) cannot hold; no file written",
                          g->nprior);
    SBM__TRY(check_finite(ctx, g));
    const char *vtag = g->dim == 2 ? "VERTEX_SE2" : "VERTEX_SE3:QUAT";
    const char *etag = g->dim == 2 ? "EDGE_SE2" : "EDGE_SE3:QUAT";
    const int ed = g->ed;
    sbm__text_writer w;
    SBM__TRY(sbm__text_create(ctx, path, &w));
    sbm_status st = SBM_SUCCESS;
    for (int64_t v = 0; v < g->nv && st == SBM_SUCCESS; v++) {
        st = sbm__text_printf(&w, "%s %d", vtag, (int)g->vid[v]);
        if (st == SBM_SUCCESS) st = write_values(&w, g->poses + g->ps * v, g->ps);
        if (st == SBM_SUCCESS) st = sbm__text_printf(&w, "\n");
    }
    for (int64_t k = 0; k < g->ne && st == SBM_SUCCESS; k++) {
        st = sbm__text_printf(&w, "%s %d %d", etag, (int)g->vid[g->efrom[k]],
                              (int)g->vid[g->eto[k]]);
        if (st == SBM_SUCCESS) st = write_values(&w, g->emeas + g->ps * k, g->ps);
        const double *om = g->einfo + (size_t)(ed * ed) * (size_t)k;
        for (int r = 0; r < ed; r++)
            for (int c = r; c < ed && st == SBM_SUCCESS; c++)
                st = sbm__text_printf(&w, " %.17g", om[r + ed * c]);
        if (st == SBM_SUCCESS) st = sbm__text_printf(&w, "\n");
    }
    for (int64_t v = 0; v < g->nv && st == SBM_SUCCESS; v++)
        if (g->fixed[v]) st = sbm__text_printf(&w, "FIX %d\n", (int)g->vid[v]);
    if (st != SBM_SUCCESS) {
        sbm__text_abort(&w);
        return st;
    }
    return sbm__text_commit(&w);
}
