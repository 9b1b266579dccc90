/* The SLAM information matrix of a pose graph: J (edges x free vertices, d x d blocks), the
 * block-diagonal Omega of the edges' information matrices, Lambda = J^T Omega J (upper block
 * triangle) and b = J^T Omega e, through the library:
 *     Omega J   sbm_bdiag_scale (left)
 *     Lambda    sbm_cbc_gemm_plan once (op_a = T, SBM_GEMM_UPPER), sbm_cbc_gemm_execute after
 *               every linearisation (the pattern never changes)
 *     b         two block SpMVs, Omega e and J^T (Omega e)
 * The errors and Jacobians of the edges are closed-form (src/geometry/geometry.c), evaluated on the host
 * and uploaded. */
#include "slam_internal.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

struct sbm_slam_system {
    int d;                  /* error dimension (block size) */
    int ps;                 /* pose size */
    int64_t nv;             /* vertices */
    int64_t ne;             /* edges */
    int64_t nfree;          /* free vertices (block columns of J) */
    int32_t *col;           /* host: column of each vertex, -1 if fixed */
    int64_t *blk_i;         /* host: J block of each edge's first vertex, -1 if fixed */
    int64_t *blk_j;         /* host: and of its second vertex */
    sbm_cbc *J;             /* context memory */
    sbm_cbc *Omega;
    sbm_cbc *OJ;            /* Omega J */
    sbm_cbc *Lambda;
    sbm_gemm_plan *plan;    /* Lambda = J^T (Omega J), upper */
    double *e;              /* context memory, d*ne */
    double *w;              /* context memory, d*ne: Omega e */
    double *b;              /* context memory, d*nfree */
    double *h_J;            /* host: J values */
    double *h_e;            /* host: errors */
    double chi2;            /* at the linearisation point */
    double time_jacobian;   /* seconds of the last linearisation: errors, J, upload */
    double time_lambda;     /* and of Omega J, Lambda, b */
    sbm_allocator host_a;   /* allocator of the host arrays and the struct */
    sbm_allocator dev_a;    /* allocator of e, w, b */
};

void sbm_slam_system_destroy(sbm_slam_system *s)
{
    if (!s) return;
    sbm_cbc_destroy(s->J);
    sbm_cbc_destroy(s->Omega);
    sbm_cbc_destroy(s->OJ);
    sbm_cbc_destroy(s->Lambda);
    sbm_gemm_plan_destroy(s->plan);
    sbm__free_with(&s->dev_a, s->e);
    sbm__free_with(&s->dev_a, s->w);
    sbm__free_with(&s->dev_a, s->b);
    sbm_allocator a = s->host_a;
    sbm__free_with(&a, s->col);
    sbm__free_with(&a, s->blk_i);
    sbm__free_with(&a, s->blk_j);
    sbm__free_with(&a, s->h_J);
    sbm__free_with(&a, s->h_e);
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
    info.chi2 = s->chi2;
    info.free_vertices = s->nfree;
    info.error_dim = s->d;
    return info;
}

sbm_status sbm_slam_system_create(sbm_ctx *ctx, const sbm_g2o_graph *graph,
                                  sbm_slam_system **system)
{
    SBM__ENTER(ctx, "sbm_slam_system_create");
    if (!system) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument system is NULL");
    *system = NULL;
    if (!graph) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument graph is NULL");
    const sbm_g2o_info gi = sbm_g2o_get_info(graph);
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
    int32_t *ri = NULL, *drow = NULL;

    s->col = sbm__alloc_with(ctx, &ha, (size_t)nv, sizeof(int32_t), "vertex columns");
    s->blk_i = s->col ? sbm__alloc_with(ctx, &ha, (size_t)ne, sizeof(int64_t), "edge blocks") : NULL;
    s->blk_j = s->blk_i ? sbm__alloc_with(ctx, &ha, (size_t)ne, sizeof(int64_t), "edge blocks")
                        : NULL;
    if (!s->blk_j) {
        st = ctx->last_status;
        goto fail;
    }
    int64_t nfree = 0;
    for (int64_t v = 0; v < nv; v++) s->col[v] = gi.is_fixed[v] ? -1 : (int32_t)nfree++;
    s->nfree = nfree;

    /* J's pattern: column of free vertex v = the edges at v, increasing (edges are visited in
     * order, so each column fills sorted; an edge joins two different vertices). */
    cp = sbm__host_alloc(ctx, (size_t)(nfree + 1) * sizeof(int64_t), "J column pointers");
    ri = cp ? sbm__host_alloc(ctx, (size_t)(2 * ne + 1) * sizeof(int32_t), "J block rows") : NULL;
    drow = ri ? sbm__host_alloc(ctx, (size_t)(ne + 1) * sizeof(int32_t), "Omega pattern") : NULL;
    if (!drow) {
        st = ctx->last_status;
        goto fail;
    }
    memset(cp, 0, (size_t)(nfree + 1) * sizeof(int64_t));
    for (int64_t k = 0; k < ne; k++) {
        if (s->col[gi.edge_from[k]] >= 0) cp[s->col[gi.edge_from[k]] + 1]++;
        if (s->col[gi.edge_to[k]] >= 0) cp[s->col[gi.edge_to[k]] + 1]++;
    }
    for (int64_t c = 0; c < nfree; c++) cp[c + 1] += cp[c];
    const int64_t nnzb = cp[nfree];
    for (int64_t k = 0; k < ne; k++) {
        const int32_t ci = s->col[gi.edge_from[k]], cj = s->col[gi.edge_to[k]];
        s->blk_i[k] = s->blk_j[k] = -1;
        if (ci >= 0) s->blk_i[k] = cp[ci], ri[cp[ci]++] = (int32_t)k;
        if (cj >= 0) s->blk_j[k] = cp[cj], ri[cp[cj]++] = (int32_t)k;
    }
    for (int64_t c = nfree; c > 0; c--) cp[c] = cp[c - 1];
    cp[0] = 0;
    if ((st = SBM__NESTED(ctx, sbm_cbc_create(ctx, &s->J, ne, nfree, d, d, cp, ri, NULL))) !=
        SBM_SUCCESS)
        goto fail;
    if ((st = SBM__NESTED(ctx, sbm_cbc_copy(ctx, s->J, &s->OJ))) != SBM_SUCCESS) goto fail;

    /* Omega: one block per edge, the information matrices as read */
    sbm__host_free(ctx, cp);
    cp = sbm__host_alloc(ctx, (size_t)(ne + 1) * sizeof(int64_t), "Omega pattern");
    if (!cp) {
        st = SBM_ERR_OUT_OF_MEMORY;
        goto fail;
    }
    for (int64_t k = 0; k <= ne; k++) cp[k] = k;
    for (int64_t k = 0; k < ne; k++) drow[k] = (int32_t)k;
    if ((st = SBM__NESTED(ctx, sbm_cbc_create(ctx, &s->Omega, ne, ne, d, d, cp, drow,
                                              gi.edge_information))) != SBM_SUCCESS)
        goto fail;
    if ((st = SBM__NESTED(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_T, s->J, SBM_OP_N, s->OJ, NULL,
                                                 SBM_GEMM_UPPER, &s->plan, &s->Lambda))) !=
        SBM_SUCCESS)
        goto fail;
    s->e = sbm__vec_alloc(ctx, d * ne, "errors");
    s->w = s->e ? sbm__vec_alloc(ctx, d * ne, "weighted errors") : NULL;
    s->b = s->w ? sbm__vec_alloc(ctx, d * nfree, "b") : NULL;
    s->h_J = s->b ? sbm__alloc_with(ctx, &ha, (size_t)nnzb, (size_t)(d * d) * sizeof(double),
                                  "J values") : NULL;
    s->h_e = s->h_J ? sbm__alloc_with(ctx, &ha, (size_t)ne, (size_t)d * sizeof(double), "errors")
                    : NULL;
    if (!s->h_e) {
        st = ctx->last_status;
        goto fail;
    }
    sbm__host_free(ctx, cp);
    sbm__host_free(ctx, ri);
    sbm__host_free(ctx, drow);
    *system = s;
    return SBM_SUCCESS;

fail:
    if (cp) sbm__host_free(ctx, cp);
    if (ri) sbm__host_free(ctx, ri);
    if (drow) sbm__host_free(ctx, drow);
    sbm_slam_system_destroy(s);
    return st;
}

sbm_status sbm_slam_linearize(sbm_ctx *ctx, sbm_slam_system *s, const sbm_g2o_graph *graph)
{
    SBM__ENTER(ctx, "sbm_slam_linearize");
    if (!s) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument system is NULL");
    if (!graph) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument graph is NULL");
    SBM__TRY(sbm__check_cbc_arg(ctx, "system", s->J));
    const sbm_g2o_info gi = sbm_g2o_get_info(graph);
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
    const int d = s->d;
    const size_t bs = (size_t)(d * d);
    const double t0 = sbm__now(ctx, 1);
    double chi2 = 0.0;
    for (int64_t k = 0; k < s->ne; k++) {
        double Ji[36], Jj[36];
        double *e = s->h_e + d * k;
        sbm__g2o_edge_error(graph, k, e, Ji, Jj);
        if (s->blk_i[k] >= 0) memcpy(s->h_J + bs * (size_t)s->blk_i[k], Ji, bs * sizeof(double));
        if (s->blk_j[k] >= 0) memcpy(s->h_J + bs * (size_t)s->blk_j[k], Jj, bs * sizeof(double));
        const double *om = gi.edge_information + bs * (size_t)k;
        for (int c = 0; c < d; c++) {
            double t = 0.0;
            for (int r = 0; r < d; r++) t += om[r + d * c] * e[r];
            chi2 += t * e[c];
        }
    }
    s->chi2 = chi2;
    SBM__TRY(sbm__vec_upload(ctx, s->J->values, s->h_J, s->J->nnzb * (int64_t)bs));
    SBM__TRY(sbm__vec_upload(ctx, s->e, s->h_e, d * s->ne));
    const double t1 = sbm__now(ctx, 1);
    /* Omega is block diagonal by construction (sbm_slam_system_create) */
    SBM__TRY(SBM__NESTED(
        ctx, sbm__bdiag_scale_checked(ctx, SBM_SIDE_LEFT, s->Omega, s->J, s->OJ)));
    SBM__TRY(SBM__NESTED(ctx, sbm_cbc_gemm_execute(ctx, s->plan, 1.0, s->J, s->OJ, NULL,
                                                   s->Lambda)));
    SBM__TRY(SBM__NESTED(ctx, sbm_cbc_spmv(ctx, SBM_OP_N, 1.0, s->Omega, s->e, 0.0, s->w)));
    SBM__TRY(SBM__NESTED(ctx, sbm_cbc_spmv(ctx, SBM_OP_T, 1.0, s->J, s->w, 0.0, s->b)));
    const double t2 = sbm__now(ctx, 1);
    s->time_jacobian = t1 - t0;
    s->time_lambda = t2 - t1;
    return SBM_SUCCESS;
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
