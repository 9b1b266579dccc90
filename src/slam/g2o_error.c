/* SPDX-License-Identifier: BSD-3-Clause */
/* Edge errors and chi2 of a g2o pose graph at its current poses (g2o's conventions, see
 * sbm_slam.h). */
#include "slam_internal.h"

#include <inttypes.h>
#include <math.h>

/* ---------------------------------------------------------------------------------------- */
/* chi2                                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* Error of edge k at the current poses (and Jacobians when Ji, Jj are given). */
void sbm__g2o_edge_error(const sbm_g2o_graph *g, int64_t k, double *e, double *Ji, double *Jj)
{
    const double *xi = g->poses + g->ps * (int64_t)g->efrom[k];
    const double *xj = g->poses + g->ps * (int64_t)g->eto[k];
    const double *z = g->emeas + g->ps * k;
    if (g->dim == 2)
        sbm__se2_error(xi, xj, z, e, Ji, Jj);
    else
        sbm__se3_error(xi, xj, z, e, Ji, Jj);
}

double sbm__g2o_chi2_host(const sbm_g2o_graph *g)
{
    const int d = g->ed;
    double chi2 = 0.0;
    for (int64_t k = 0; k < g->ne; k++) {
        double e[6];
        sbm__g2o_edge_error(g, k, e, NULL, NULL);
        const double *om = g->einfo + (size_t)(d * d) * k;
        for (int c = 0; c < d; c++) {
            double s = 0.0;
            for (int r = 0; r < d; r++) s += om[r + d * c] * e[r];
            chi2 += s * e[c];
        }
    }
    return chi2;
}

sbm_status sbm_g2o_chi2(sbm_ctx *ctx, const sbm_g2o_graph *graph, double *chi2)
{
    SBM__ENTER(ctx, "sbm_g2o_chi2");
    if (!graph) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument graph is NULL");
    if (!chi2) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument chi2 is NULL");
    *chi2 = sbm__g2o_chi2_host(graph);
    return SBM_SUCCESS;
}

sbm_status sbm__g2o_cost_check(sbm_ctx *ctx, const sbm_g2o_graph *g, double cost)
{
    if (isfinite(cost)) return SBM_SUCCESS;
    const int d = g->ed;
    for (int64_t k = 0; k < g->ne; k++) {
        double e[6];
        sbm__g2o_edge_error(g, k, e, NULL, NULL);
        const double *om = g->einfo + (size_t)(d * d) * k;
        double chi2 = 0.0;
        for (int c = 0; c < d; c++) {
            double s = 0.0;
            for (int r = 0; r < d; r++) s += om[r + d * c] * e[r];
            chi2 += s * e[c];
        }
        if (isfinite(chi2)) continue;
        const int32_t a = g->vid[g->efrom[k]], b = g->vid[g->eto[k]];
        if (k >= g->ne - g->nprior) { /* a prior: an edge from the hidden anchor */
            const double *xb = g->poses + g->ps * (int64_t)g->eto[k];
            return sbm__error(ctx, SBM_ERR_NOT_FINITE,
                              "the initial cost is %g: prior %" PRId64 " (on vertex %d) has "
                              "e^T Omega e = %g at the initial pose (%g, %g, ...); poses and "
                              "measurements this large cannot be solved in double precision",
                              cost, k - (g->ne - g->nprior), (int)b, chi2, xb[0], xb[1]);
        }
        const double *xa = g->poses + g->ps * (int64_t)g->efrom[k];
        const double *xb = g->poses + g->ps * (int64_t)g->eto[k];
        return sbm__error(ctx, SBM_ERR_NOT_FINITE,
                          "the initial cost is %g: edge %" PRId64 " (vertex %d to vertex %d) has "
                          "e^T Omega e = %g at the initial poses (vertex %d at (%g, %g, ...), "
                          "vertex %d at (%g, %g, ...)); poses and measurements this large cannot "
                          "be solved in double precision",
                          cost, k, (int)a, (int)b, chi2, (int)a, xa[0], xa[1], (int)b, xb[0],
                          xb[1]);
    }
    return sbm__error(ctx, SBM_ERR_NOT_FINITE,
                      "the initial cost is %g although every edge's e^T Omega e is finite: "
                      "their sum overflows", cost);
}
