/* SPDX-License-Identifier: BSD-3-Clause */
/* Marginal covariances of a pose graph's free poses (sbm_slam_covariance): the block diagonal of
 * Lambda^-1 at the graph's poses, Lambda = J^T Omega J (Ceres' corrected system with a robust
 * loss), from the sparse block Cholesky's selected inverse (sbm_chol_inverse_diagonal). The
 * vertices held fixed (the gauge: a FIX line, or the reader's first vertex) are not unknowns. */
#include "slam_internal.h"

#include <inttypes.h>
#include <string.h>

/* Lambda not positive definite at A's block column col: the message names the vertex. */
static sbm_status rank_deficient(sbm_ctx *ctx, const sbm_g2o_graph *graph, int64_t col)
{
    const sbm_g2o_info gi = sbm_g2o_get_info(graph);
    int64_t v = 0;
    for (int64_t j = -1; v < gi.vertices; v++)
        if (!gi.is_fixed[v] && ++j == col) break;
    if (col < 0 || v == gi.vertices)
        return sbm__error(ctx, SBM_ERR_NOT_POSITIVE_DEFINITE,
                          "Lambda = J^T Omega J is not positive definite: no covariance");
    return sbm__error(ctx, SBM_ERR_NOT_POSITIVE_DEFINITE,
                      "Lambda = J^T Omega J is not positive definite at vertex %d (free vertex %"
                      PRId64 "): the graph does not determine that pose (a gauge freedom or a "
                      "rank deficiency: a direction of the pose that no edge's information "
                      "constrains); "
                      "no covariance",
                      (int)gi.vertex_id[v], col);
}

static sbm_status covariance(sbm_ctx *ctx, const sbm_g2o_graph *graph, const sbm_loss *loss,
                             double *h_cov, sbm_slam_system **sys, sbm_chol **chol)
{
    SBM__TRY(SBM__NESTED(ctx, sbm_slam_system_create(ctx, graph, sys)));
    SBM__TRY(sbm__slam_system_set_loss(ctx, *sys, loss));
    SBM__TRY(SBM__NESTED(ctx, sbm_slam_linearize(ctx, *sys, graph)));
    const sbm_slam_system_info si = sbm_slam_system_get_info(*sys);
    if (si.free_vertices == 0) return SBM_SUCCESS;
    SBM__TRY(SBM__NESTED(ctx, sbm_chol_plan(ctx, si.Lambda, NULL, chol)));
    const sbm_status st = SBM__INNER(ctx, "sbm_chol_factor",
                                     sbm__chol_factor(ctx, *chol, si.Lambda, SBM_DAMPING_NONE, 0.0));
    if (st == SBM_ERR_NOT_POSITIVE_DEFINITE)
        return rank_deficient(ctx, graph, sbm_chol_get_info(*chol).failed_column);
    SBM__TRY(st);
    return SBM__NESTED(ctx, sbm_chol_inverse_diagonal(ctx, *chol, h_cov));
}

sbm_status sbm_slam_covariance(sbm_ctx *ctx, const sbm_g2o_graph *graph, const sbm_loss *loss,
                               double *h_cov)
{
    SBM__ENTER(ctx, "sbm_slam_covariance");
    if (!graph) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument graph is NULL");
    const sbm_g2o_info gi = sbm_g2o_get_info(graph);
    if (!h_cov && gi.vertices > gi.fixed)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument h_cov is NULL");
    sbm_loss none;
    memset(&none, 0, sizeof none);
    none.type = SBM_LOSS_NONE;
    if (loss) SBM__TRY(sbm__check_loss(ctx, "loss", loss));
    sbm_slam_system *sys = NULL;
    sbm_chol *chol = NULL;
    const sbm_status st = covariance(ctx, graph, loss ? loss : &none, h_cov, &sys, &chol);
    sbm_chol_destroy(chol);
    sbm_slam_system_destroy(sys);
    return st;
}
