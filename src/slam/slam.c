/* SPDX-License-Identifier: BSD-3-Clause */
/* The SLAM information matrix of a pose graph: J (edges x free vertices, d x d blocks), the
 * block-diagonal Omega of the edges' information matrices, Lambda = J^T Omega J (upper block
 * triangle) and b = J^T Omega e, all in the context's memory:
 *     e, J, w    the backend's slam_linearize op (one thread per edge: g2o's errors and
 *                Jacobians, written straight into J's values; w = rho' Omega e and, with a robust
 *                loss, the effective Omega of Ceres' corrector, blocks/sbm_pose_edge.h)
 *     Omega J    sbm_bdiag_scale (left)
 *     Lambda     sbm_cbc_gemm_plan once (op_a = T, SBM_GEMM_UPPER), sbm_cbc_gemm_execute after
 *                every linearisation (the pattern never changes)
 *     b          a block SpMV, J^T w
 *     cost       0.5 sum rho(e^T Omega e), the per-edge rho summed by the backend's fixed-order
 *                dot with a vector of ones (one 8-byte copy to the host)
 * The poses live in the context's memory too, by slot (free vertices first, in the graph's
 * order, then the fixed ones), in two buffers: the current poses and a trial (+) step, so the
 * solvers (slam_run.c) try a step and take or drop it without a copy. The edges (vertex slots,
 * J block indices, measurements, information) are uploaded once by sbm_slam_system_create. */
#include "slam_internal.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* the backends read sbm__slam_edges.loss with sbm_geometry.h's numbers */
_Static_assert(SBM_LOSS_NONE == SBM__LOSS_NONE && SBM_LOSS_HUBER == SBM__LOSS_HUBER &&
                   SBM_LOSS_CAUCHY == SBM__LOSS_CAUCHY,
               "sbm_loss_type numbers the losses as sbm_geometry.h does");

struct sbm_slam_system {
    int d;                  /* error dimension (block size) */
    int ps;                 /* pose size */
    int64_t nv;             /* vertices */
    int64_t ne;             /* edges */
    int64_t nfree;          /* free vertices (block columns of J) */
    int32_t *col;           /* host: column of each vertex, -1 if fixed */
    int64_t *slot;          /* host: pose slot of each vertex */
    int64_t *blk_i;         /* host: J block of each edge's first vertex, -1 if fixed */
    int64_t *blk_j;         /* host: and of its second vertex */
    double *h_x;            /* host: poses by slot (ps*nv), for the transfers */
    sbm_cbc *J;             /* context memory */
    sbm_cbc *Omega;         /* the information (effective, with a robust loss) */
    sbm_cbc *OJ;            /* Omega J */
    sbm_cbc *Lambda;
    sbm_gemm_plan *plan;    /* Lambda = J^T (Omega J), upper */
    sbm__slam_edges E;      /* the edges, pointing into the arrays below */
    int32_t *d_v;           /* context memory: 2*ne vertex slots */
    int64_t *d_blk;         /* context memory: 2*ne J blocks */
    double *d_meas;         /* context memory: ps*ne */
    double *d_info;         /* context memory: d*d*ne, the information as read */
    double *x[2];           /* context memory, ps*nv each: poses by slot, current and trial */
    int cur;                /* which of x holds the current poses */
    double *e;              /* context memory, d*ne */
    double *w;              /* context memory, d*ne: rho' Omega e */
    double *b;              /* context memory, d*nfree */
    double *rho;            /* context memory, ne: rho(e^T Omega e) per edge */
    double *ones;           /* context memory, ne: 1.0, to sum rho */
    double cost;            /* 0.5 sum rho at the linearisation point */
    double time_jacobian;   /* seconds of the last linearisation: errors, J, cost */
    double time_lambda;     /* and of Omega J, Lambda, b */
    sbm_allocator host_a;   /* allocator of the host arrays and the struct */
    sbm_allocator dev_a;    /* allocator of the context-memory arrays */
};

void sbm_slam_system_destroy(sbm_slam_system *s)
{
    if (!s) return;
    sbm_cbc_destroy(s->J);
    sbm_cbc_destroy(s->Omega);
    sbm_cbc_destroy(s->OJ);
    sbm_cbc_destroy(s->Lambda);
    sbm_gemm_plan_destroy(s->plan);
    void *dev[] = {s->d_v, s->d_blk, s->d_meas, s->d_info, s->x[0], s->x[1],
                   s->e,   s->w,     s->b,      s->rho,    s->ones};
    for (size_t k = 0; k < sizeof dev / sizeof dev[0]; k++) sbm__free_with(&s->dev_a, dev[k]);
    sbm_allocator a = s->host_a;
    sbm__free_with(&a, s->col);
    sbm__free_with(&a, s->slot);
    sbm__free_with(&a, s->blk_i);
    sbm__free_with(&a, s->blk_j);
    sbm__free_with(&a, s->h_x);
    sbm__free_with(&a, s);
}

sbm_slam_system_info sbm_slam_system_get_info(const sbm_slam_system *s)
{
    sbm_slam_system_info info;
    memset(&info, 0, sizeof info);
    if (!s) return info;
    info.J = s->J;
    info.Omega = s->Omega;
    info.Lambda = s->Lambda;
    info.e = s->e;
    info.b = s->b;
    info.chi2 = 2.0 * s->cost;
    info.free_vertices = s->nfree;
    info.error_dim = s->d;
    return info;
}

/* J's pattern: column of free vertex v = the edges at v, increasing (edges are visited in
 * order, so each column fills sorted; an edge joins two different vertices). Sets blk_i,
 * blk_j; cp (nfree + 1) and ri (2 ne) are host scratch. */
static sbm_status create_j(sbm_ctx *ctx, sbm_slam_system *s, const sbm_g2o_info *gi, int64_t *cp,
                           int32_t *ri)
{
    const int64_t nfree = s->nfree, ne = s->ne;
    memset(cp, 0, (size_t)(nfree + 1) * sizeof(int64_t));
    for (int64_t k = 0; k < ne; k++) {
        if (s->col[gi->edge_from[k]] >= 0) cp[s->col[gi->edge_from[k]] + 1]++;
        if (s->col[gi->edge_to[k]] >= 0) cp[s->col[gi->edge_to[k]] + 1]++;
    }
    for (int64_t c = 0; c < nfree; c++) cp[c + 1] += cp[c];
    for (int64_t k = 0; k < ne; k++) {
        const int32_t ci = s->col[gi->edge_from[k]], cj = s->col[gi->edge_to[k]];
        s->blk_i[k] = s->blk_j[k] = -1;
        if (ci >= 0) s->blk_i[k] = cp[ci], ri[cp[ci]++] = (int32_t)k;
        if (cj >= 0) s->blk_j[k] = cp[cj], ri[cp[cj]++] = (int32_t)k;
    }
    for (int64_t c = nfree; c > 0; c--) cp[c] = cp[c - 1];
    cp[0] = 0;
    SBM__TRY(SBM__NESTED(ctx, sbm_cbc_create(ctx, &s->J, ne, nfree, s->d, s->d, cp, ri, NULL)));
    return SBM__INNER(ctx, "sbm_cbc_copy", sbm__cbc_copy(ctx, s->J, &s->OJ));
}

/* Omega: one block per edge, the information matrices as read; cp (ne + 1) and ri (ne) are
 * host scratch. */
static sbm_status create_omega(sbm_ctx *ctx, sbm_slam_system *s, const sbm_g2o_info *gi,
                               int64_t *cp, int32_t *ri)
{
    for (int64_t k = 0; k <= s->ne; k++) cp[k] = k;
    for (int64_t k = 0; k < s->ne; k++) ri[k] = (int32_t)k;
    return SBM__NESTED(ctx, sbm_cbc_create(ctx, &s->Omega, s->ne, s->ne, s->d, s->d, cp, ri,
                                           gi->edge_information));
}

/* The edges and the context-memory vectors; iv (2 ne int64) is host scratch. */
static sbm_status create_edges(sbm_ctx *ctx, sbm_slam_system *s, const sbm_g2o_info *gi,
                               int64_t *iv)
{
    const int64_t ne = s->ne, d = s->d;
    s->d_v = sbm__alloc(ctx, (size_t)(2 * ne + 1) * sizeof(int32_t), "edge vertex slots");
    s->d_blk = s->d_v ? sbm__alloc(ctx, (size_t)(2 * ne + 1) * sizeof(int64_t), "edge J blocks")
                      : NULL;
    s->d_meas = s->d_blk ? sbm__vec_alloc(ctx, s->ps * ne, "edge measurements") : NULL;
    s->d_info = s->d_meas ? sbm__vec_alloc(ctx, d * d * ne, "edge information") : NULL;
    s->x[0] = s->d_info ? sbm__vec_alloc(ctx, s->ps * s->nv, "poses") : NULL;
    s->x[1] = s->x[0] ? sbm__vec_alloc(ctx, s->ps * s->nv, "trial poses") : NULL;
    s->e = s->x[1] ? sbm__vec_alloc(ctx, d * ne, "errors") : NULL;
    s->w = s->e ? sbm__vec_alloc(ctx, d * ne, "weighted errors") : NULL;
    s->b = s->w ? sbm__vec_alloc(ctx, d * s->nfree, "b") : NULL;
    s->rho = s->b ? sbm__vec_alloc(ctx, ne, "edge costs") : NULL;
    s->ones = s->rho ? sbm__vec_alloc(ctx, ne, "ones") : NULL;
    if (!s->ones) return ctx->last_status;
    /* the slots of the edges' vertices (as int32 in iv's storage), then their J blocks */
    int32_t *v32 = (int32_t *)iv;
    for (int64_t k = 0; k < ne; k++)
        v32[2 * k] = (int32_t)s->slot[gi->edge_from[k]],
        v32[2 * k + 1] = (int32_t)s->slot[gi->edge_to[k]];
    if (ne > 0) SBM__TRY(ctx->ops->copy(ctx, s->d_v, v32, (size_t)(2 * ne) * sizeof(int32_t), 0));
    for (int64_t k = 0; k < ne; k++) iv[2 * k] = s->blk_i[k], iv[2 * k + 1] = s->blk_j[k];
    if (ne > 0) SBM__TRY(ctx->ops->copy(ctx, s->d_blk, iv, (size_t)(2 * ne) * sizeof(int64_t), 0));
    SBM__TRY(sbm__vec_upload(ctx, s->d_meas, gi->edge_measurement, s->ps * ne));
    SBM__TRY(sbm__vec_upload(ctx, s->d_info, gi->edge_information, d * d * ne));
    double *one = (double *)iv; /* 2 ne int64 hold ne doubles */
    for (int64_t k = 0; k < ne; k++) one[k] = 1.0;
    SBM__TRY(sbm__vec_upload(ctx, s->ones, one, ne));
    s->E.dim = d == 3 ? 2 : 3;
    s->E.ne = ne;
    s->E.v = s->d_v, s->E.blk = s->d_blk, s->E.meas = s->d_meas, s->E.info = s->d_info;
    s->E.loss = SBM_LOSS_NONE, s->E.loss_scale = 1.0;
    return SBM_SUCCESS;
}

sbm_status sbm_slam_system_create(sbm_ctx *ctx, const sbm_g2o_graph *graph,
                                  sbm_slam_system **system)
{
    SBM__ENTER(ctx, "sbm_slam_system_create");
    if (!system) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument system is NULL");
    *system = NULL;
    if (!graph) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument graph is NULL");
    /* a component without gauge (sbm_g2o_set_fixed freed its fixed vertex) is refused by name;
     * with fix = 0 the check writes nothing but the count of fixed vertices it already has */
    SBM__TRY(sbm__g2o_gauge(ctx, (sbm_g2o_graph *)graph, 0,
                            "fix one of its vertices (sbm_g2o_set_fixed)"));
    const sbm_g2o_info gi = sbm__g2o_solver_info(graph);
    const int d = gi.error_dim;
    const int64_t nv = gi.vertices, ne = gi.edges;
    if (ne > INT32_MAX)
        return sbm__error(ctx, SBM_ERR_OVERFLOW, "argument graph: %" PRId64
                          " edges do not fit the 32-bit block-row indices", ne);

    sbm_allocator ha = sbm__host_allocator_of(ctx);
    sbm_slam_system *s = sbm__alloc_with(ctx, &ha, 1, sizeof *s, "the SLAM system");
    if (!s) return SBM_ERR_OUT_OF_MEMORY;
    memset(s, 0, sizeof *s);
    s->host_a = ha;
    s->dev_a = ctx->allocator;
    s->d = d, s->ps = gi.pose_size, s->nv = nv, s->ne = ne;
    sbm_status st = SBM_SUCCESS;
    int64_t *cp = NULL;
    int32_t *ri = NULL;

    s->col = sbm__alloc_with(ctx, &ha, (size_t)nv + 1, sizeof(int32_t), "vertex columns");
    s->slot = s->col ? sbm__alloc_with(ctx, &ha, (size_t)nv + 1, sizeof(int64_t), "vertex slots")
                     : NULL;
    s->blk_i = s->slot ? sbm__alloc_with(ctx, &ha, (size_t)ne + 1, sizeof(int64_t), "edge blocks")
                       : NULL;
    s->blk_j = s->blk_i ? sbm__alloc_with(ctx, &ha, (size_t)ne + 1, sizeof(int64_t), "edge blocks")
                        : NULL;
    s->h_x = s->blk_j ? sbm__alloc_with(ctx, &ha, (size_t)(s->ps * nv + 1), sizeof(double),
                                        "poses") : NULL;
    /* scratch: J's column pointers / Omega's, J's block rows, the edges' index arrays */
    cp = s->h_x ? sbm__host_alloc(ctx, (size_t)(nv + ne + 2) * sizeof(int64_t), "J pattern")
                : NULL;
    ri = cp ? sbm__host_alloc(ctx, (size_t)(4 * ne + 2) * sizeof(int32_t), "J pattern") : NULL;
    if (!ri) {
        st = ctx->last_status;
        goto fail;
    }
    int64_t nfree = 0, nfixed = 0;
    for (int64_t v = 0; v < nv; v++) s->col[v] = gi.is_fixed[v] ? -1 : (int32_t)nfree++;
    s->nfree = nfree;
    for (int64_t v = 0; v < nv; v++) s->slot[v] = s->col[v] >= 0 ? s->col[v] : nfree + nfixed++;
    if ((st = create_j(ctx, s, &gi, cp, ri)) != SBM_SUCCESS) goto fail;
    if ((st = create_omega(ctx, s, &gi, cp, ri)) != SBM_SUCCESS) goto fail;
    if ((st = SBM__NESTED(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_T, s->J, SBM_OP_N, s->OJ, NULL,
                                                 SBM_GEMM_UPPER, &s->plan, &s->Lambda))) !=
        SBM_SUCCESS)
        goto fail;
    if ((st = create_edges(ctx, s, &gi, (int64_t *)(void *)ri)) != SBM_SUCCESS) goto fail;
    sbm__host_free(ctx, cp);
    sbm__host_free(ctx, ri);
    *system = s;
    return SBM_SUCCESS;

fail:
    if (cp) sbm__host_free(ctx, cp);
    if (ri) sbm__host_free(ctx, ri);
    sbm_slam_system_destroy(s);
    return st;
}

sbm_status sbm__slam_system_set_loss(sbm_ctx *ctx, sbm_slam_system *s, const sbm_loss *loss)
{
    const int was = s->E.loss;
    s->E.loss = (int)loss->type;
    s->E.loss_scale = loss->type == SBM_LOSS_NONE ? 1.0 : loss->scale;
    /* without a loss Omega holds the information as read (the linearisation leaves it) */
    if (was != SBM_LOSS_NONE && loss->type == SBM_LOSS_NONE)
        return sbm__vec_copy(ctx, s->Omega->values, s->d_info, s->d * s->d * s->ne);
    return SBM_SUCCESS;
}

sbm_status sbm__slam_poses_upload(sbm_ctx *ctx, sbm_slam_system *s, const double *h_poses)
{
    const int ps = s->ps;
    for (int64_t v = 0; v < s->nv; v++)
        memcpy(s->h_x + ps * s->slot[v], h_poses + ps * v, (size_t)ps * sizeof(double));
    SBM__TRY(sbm__vec_upload(ctx, s->x[s->cur], s->h_x, ps * s->nv));
    /* the trial buffer shares the fixed poses; sbm__slam_try writes its free ones */
    return sbm__vec_copy(ctx, s->x[1 - s->cur], s->x[s->cur], ps * s->nv);
}

sbm_status sbm__slam_poses_download(sbm_ctx *ctx, sbm_slam_system *s, double *h_poses)
{
    const int ps = s->ps;
    SBM__TRY(sbm__vec_download(ctx, s->h_x, s->x[s->cur], ps * s->nv));
    for (int64_t v = 0; v < s->nv; v++)
        memcpy(h_poses + ps * v, s->h_x + ps * s->slot[v], (size_t)ps * sizeof(double));
    return SBM_SUCCESS;
}

/* 0.5 sum rho of the edges' rho in s->rho. */
static sbm_status sum_cost(sbm_ctx *ctx, sbm_slam_system *s, double *cost)
{
    double sum = 0.0;
    SBM__TRY(sbm__vec_dot(ctx, s->ne, s->rho, s->ones, &sum));
    *cost = 0.5 * sum;
    return SBM_SUCCESS;
}

sbm_status sbm__slam_linearize_current(sbm_ctx *ctx, sbm_slam_system *s)
{
    const double t0 = sbm__now(ctx, 1);
    double *omega = s->E.loss == SBM_LOSS_NONE ? NULL : s->Omega->values;
    SBM__TRY(sbm__slam_kernels_of(ctx)->slam_linearize(ctx, &s->E, s->x[s->cur], s->rho, s->e,
                                                       s->w, s->J->values, omega));
    SBM__TRY(sum_cost(ctx, s, &s->cost));
    const double t1 = sbm__now(ctx, 1);
    /* The system's own operands (sbm_slam_system_create): Omega block diagonal with J's block
     * rows, OJ a copy of J, the plan made from J and OJ with Lambda, w and b its vectors */
    SBM__TRY(SBM__INNER(ctx, "sbm_bdiag_scale",
                        sbm__bdiag_scale(ctx, SBM_SIDE_LEFT, s->Omega, s->J, s->OJ)));
    SBM__TRY(SBM__INNER(ctx, "sbm_cbc_gemm_execute",
                        sbm__cbc_gemm_execute(ctx, s->plan, 1.0, s->J, s->OJ, NULL, s->Lambda)));
    SBM__TRY(SBM__INNER(ctx, "sbm_cbc_spmv",
                        sbm__cbc_spmv(ctx, SBM_OP_T, 1.0, s->J, s->w, 0.0, s->b)));
    const double t2 = sbm__now(ctx, 1);
    s->time_jacobian = t1 - t0;
    s->time_lambda = t2 - t1;
    return SBM_SUCCESS;
}

sbm_status sbm__slam_try(sbm_ctx *ctx, sbm_slam_system *s, double alpha, const double *dx,
                         double *cost)
{
    double *trial = s->x[1 - s->cur];
    const sbm__slam_kernels *k = sbm__slam_kernels_of(ctx);
    SBM__TRY(k->slam_oplus(ctx, s->E.dim, s->nfree, alpha, dx, s->x[s->cur], trial));
    SBM__TRY(k->slam_linearize(ctx, &s->E, trial, s->rho, NULL, NULL, NULL, NULL));
    return sum_cost(ctx, s, cost);
}

void sbm__slam_take_trial(sbm_slam_system *s) { s->cur = 1 - s->cur; }

sbm_status sbm__slam_pose_norm(sbm_ctx *ctx, const sbm_slam_system *s, double *norm)
{
    return sbm__vec_nrm2(ctx, s->ps * s->nfree, s->x[s->cur], norm);
}

sbm_status sbm_slam_linearize(sbm_ctx *ctx, sbm_slam_system *s, const sbm_g2o_graph *graph)
{
    SBM__ENTER(ctx, "sbm_slam_linearize");
    if (!s) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument system is NULL");
    if (!graph) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument graph is NULL");
    SBM__TRY(sbm__check_cbc_arg(ctx, "system", s->J));
    const sbm_g2o_info gi = sbm__g2o_solver_info(graph);
    if (gi.vertices != s->nv || gi.edges != s->ne || gi.error_dim != s->d)
        return sbm__error(ctx, SBM_ERR_DIMENSION_MISMATCH,
                          "argument graph has %" PRId64 " vertices, %" PRId64 " edges (%dD); the "
                          "system was made for %" PRId64 ", %" PRId64 " (%dD)",
                          gi.vertices, gi.edges, gi.dim, s->nv, s->ne, s->d == 3 ? 2 : 3);
    /* Refuse a non-finite pose (or a zero quaternion) before anything changes. */
    for (int64_t v = 0; v < s->nv; v++) {
        const double *x = gi.poses + s->ps * v;
        double q2 = 0.0;
        int finite = 1;
        for (int a = 0; a < s->ps; a++) finite = finite && isfinite(x[a]);
        if (s->ps == 7) q2 = x[3] * x[3] + x[4] * x[4] + x[5] * x[5] + x[6] * x[6];
        if (!finite || (s->ps == 7 && !(q2 > 0.0)))
            return sbm__error(ctx, SBM_ERR_NOT_FINITE,
                              "argument graph: the pose of vertex %d (index %" PRId64 ") is %s",
                              (int)gi.vertex_id[v], v,
                              finite ? "a zero quaternion" : "not finite");
    }
    SBM__TRY(sbm__slam_poses_upload(ctx, s, gi.poses));
    return sbm__slam_linearize_current(ctx, s);
}

void sbm__slam_system_times(const sbm_slam_system *s, double *jacobian, double *lambda)
{
    *jacobian = s->time_jacobian;
    *lambda = s->time_lambda;
}

sbm_status sbm_slam_system_get_b(sbm_ctx *ctx, const sbm_slam_system *s, double *h_b)
{
    SBM__ENTER(ctx, "sbm_slam_system_get_b");
    if (!s) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument system is NULL");
    if (!h_b) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument h_b is NULL");
    SBM__TRY(sbm__check_cbc_arg(ctx, "system", s->J));
    return sbm__vec_download(ctx, h_b, s->b, s->d * s->nfree);
}
