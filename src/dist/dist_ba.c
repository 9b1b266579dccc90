/* SPDX-License-Identifier: BSD-3-Clause */
/* The distributed BA solver's phases (dist_ba.h).
 *
 * Each rank's BA system is the one of its local problem (its cameras, their observations, the
 * points they see), built and linearised by the BA layer as on one context. U, W and gc of a
 * rank are then exactly the one-context blocks of its cameras; V and gp of a point seen by
 * several ranks are partial sums, which the halo sum completes: every rank packs its partials
 * for each peer, the communicator exchanges them, and every rank adds all of them in rank order
 * (the same bits on every rank holding the point). The same holds for W^T x in S x and in the
 * back-substitution. Everything else of the iteration is local, but the dot products, which the
 * communicator reduces. */
#include "dist_ba.h"
#include "ba_system.h"
#include "solve_kernels.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A failure of local rank l: its message goes to local rank 0's context ("rank R: ..."). */
static sbm_status rank_fail(dist_state *s, int l, sbm_status st)
{
    if (l == 0) return st;
    char msg[SBM__MSG_SIZE];
    const char *m = s->rk[l].ctx->message;
    const char *colon = strstr(m, ": ");
    snprintf(msg, sizeof msg, "%s", colon ? colon + 2 : m);
    return sbm__error(s->rk[0].ctx, st, "rank %d: %s", s->comm->rank[l], msg);
}

#define RANK_TRY(l, expr)                                                  \
    do {                                                                   \
        const sbm_status rank_st_ = (expr);                                \
        if (rank_st_ != SBM_SUCCESS) return rank_fail(s, (l), rank_st_);   \
    } while (0)

sbm_status sbm__dist_reduce(dist_state *s, const double *in, double *out, int nv,
                            sbm__reduce_op op)
{
    const double t0 = sbm__now(s->rk[0].ctx, 0);
    const sbm_status st = s->comm->ops->reduce(s->comm, in, out, nv, op);
    s->comm->seconds += sbm__now(s->rk[0].ctx, 0) - t0;
    return st;
}

/* A flag of every local rank (1: failed) agreed over the group: *any = 1 if some rank's is. */
static sbm_status agree(dist_state *s, const int *flag, int *any)
{
    double out = 0.0, *buf = malloc((size_t)s->nl * sizeof(double));
    if (!buf) return sbm__error(s->rk[0].ctx, SBM_ERR_OUT_OF_MEMORY, "out of host memory");
    for (int l = 0; l < s->nl; l++) buf[l] = flag[l];
    const sbm_status st = sbm__dist_reduce(s, buf, &out, 1, SBM__REDUCE_MAX);
    free(buf);
    *any = out > 0.0;
    return st;
}

/* v (local point rows of w doubles, the context's memory) with every shared row replaced by the
 * sum of all ranks' rows in rank order. */
static sbm_status halo_sum(dist_state *s, double *const *v, int w)
{
    const int P = s->comm->size;
    sbm__xchg *x = calloc((size_t)s->nl, sizeof *x);
    double **send = calloc((size_t)s->nl, sizeof *send), **recv = calloc((size_t)s->nl, sizeof *recv);
    sbm_status st = SBM_SUCCESS;
    if (!x || !send || !recv) {
        st = sbm__error(s->rk[0].ctx, SBM_ERR_OUT_OF_MEMORY, "out of host memory");
        goto done;
    }
    for (int l = 0; l < s->nl && st == SBM_SUCCESS; l++) {
        dist_rank *k = &s->rk[l];
        const sbm__dist_part *pt = &k->part;
        for (int p = 0; p < P; p++) k->xcount[p] = w * pt->seg_count[p], k->xoff[p] = w * pt->seg_off[p];
        x[l].count = k->xcount, x[l].off = k->xoff;
        send[l] = k->send, recv[l] = k->recv;
        if (pt->nshared == 0) continue;
        const sbm__ba_kernels *bk = sbm__ba_kernels_of(k->ctx);
        st = bk->ba_halo_pack(k->ctx, pt->seg_off[P], w, k->d_pack, v[l], k->send);
        /* the rank's own partials are its segment of the received ones */
        if (st == SBM_SUCCESS)
            st = sbm__vec_copy(k->ctx, k->recv + k->xoff[pt->rank], k->send + k->xoff[pt->rank],
                               k->xcount[pt->rank]);
        if (st != SBM_SUCCESS) st = rank_fail(s, l, st);
    }
    if (st == SBM_SUCCESS) {
        const double t0 = sbm__now(s->rk[0].ctx, 0);
        st = s->comm->ops->exchange(s->comm, x, send, recv);
        s->comm->seconds += sbm__now(s->rk[0].ctx, 0) - t0;
    }
    for (int l = 0; l < s->nl && st == SBM_SUCCESS; l++) {
        dist_rank *k = &s->rk[l];
        if (k->part.nshared == 0) continue;
        st = sbm__ba_kernels_of(k->ctx)->ba_halo_sum(k->ctx, k->part.nshared, w, k->d_ptr,
                                                     k->d_ent, k->d_pt, k->recv, v[l]);
        if (st != SBM_SUCCESS) st = rank_fail(s, l, st);
    }
done:
    free(x), free(send), free(recv);
    return st;
}

/* Which point vector of every rank a halo sum completes. */
enum { HALO_V = 0, HALO_GP = 1, HALO_T = 2 };

/* The halo sum of every rank's undamped V (w 9), gp (w 3) or the Schur plan's t (w 3). */
static sbm_status halo_sum_points(dist_state *s, int which)
{
    double *v[64], **vp = s->nl <= 64 ? v : malloc((size_t)s->nl * sizeof *vp);
    if (!vp) return sbm__error(s->rk[0].ctx, SBM_ERR_OUT_OF_MEMORY, "out of host memory");
    for (int l = 0; l < s->nl; l++) {
        dist_rank *k = &s->rk[l];
        const sbm_cbc *Vinv, *Y;
        sbm__symup *us;
        if (which == HALO_V) vp[l] = k->sys->V_und;
        else if (which == HALO_GP) vp[l] = k->sys->g + 9 * k->sys->nc;
        else sbm__ba_schur_parts(k->plan, &Vinv, &Y, &vp[l], &us);
    }
    const sbm_status st = halo_sum(s, vp, which == HALO_V ? 9 : 3);
    if (vp != v) free(vp);
    return st;
}

sbm_status sbm__dist_linearize(dist_state *s)
{
    int *bad = calloc((size_t)s->nl, sizeof(int));
    double *val = malloc((size_t)s->nl * 2 * sizeof(double));
    if (!bad || !val) {
        free(bad), free(val);
        return sbm__error(s->rk[0].ctx, SBM_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    sbm_status st = SBM_SUCCESS;
    int first_bad = -1, any = 0;
    for (int l = 0; l < s->nl && st == SBM_SUCCESS; l++) {
        dist_rank *k = &s->rk[l];
        const sbm_status ls = sbm__ba_linearize_at(k->ctx, k->sys, k->x[s->cur]);
        if (ls == SBM_ERR_NOT_FINITE) {
            bad[l] = 1;
            if (first_bad < 0) first_bad = l;
        } else if (ls != SBM_SUCCESS) {
            st = rank_fail(s, l, ls);
        }
    }
    /* a prediction that is not finite on one rank stops every rank */
    if (st == SBM_SUCCESS) st = agree(s, bad, &any);
    if (st == SBM_SUCCESS && any) {
        st = first_bad >= 0 ? rank_fail(s, first_bad, SBM_ERR_NOT_FINITE)
                            : sbm__error(s->rk[0].ctx, SBM_ERR_NOT_FINITE,
                                         "another rank's linearisation is not finite");
        goto done;
    }
    if (st == SBM_SUCCESS) st = halo_sum_points(s, HALO_V);
    if (st == SBM_SUCCESS) st = halo_sum_points(s, HALO_GP);
    for (int l = 0; l < s->nl && st == SBM_SUCCESS; l++) {
        dist_rank *k = &s->rk[l];
        sbm_ba_system *y = k->sys;
        /* the points' damping scale from the summed diagonal of V; max |g| over owned entries */
        st = sbm__ba_kernels_of(k->ctx)->ba_damp_scale(k->ctx, y->np, 3, y->V_und, y->D + 9 * y->nc);
        val[2 * l] = y->cost, val[2 * l + 1] = 0.0;
        if (st == SBM_SUCCESS && k->nown > 0) st = sbm__vec_amax(k->ctx, k->nown, y->g, &val[2 * l + 1]);
        if (st != SBM_SUCCESS) st = rank_fail(s, l, st);
    }
    if (st == SBM_SUCCESS) {
        double *c = malloc((size_t)s->nl * sizeof(double)), out = 0.0;
        if (!c) {
            st = sbm__error(s->rk[0].ctx, SBM_ERR_OUT_OF_MEMORY, "out of host memory");
            goto done;
        }
        for (int l = 0; l < s->nl; l++) c[l] = val[2 * l];
        st = sbm__dist_reduce(s, c, &out, 1, SBM__REDUCE_SUM);
        s->cost = out;
        for (int l = 0; l < s->nl; l++) c[l] = val[2 * l + 1];
        if (st == SBM_SUCCESS) st = sbm__dist_reduce(s, c, &out, 1, SBM__REDUCE_MAX);
        s->gmax = out;
        free(c);
    }
    if (st == SBM_SUCCESS) s->stale = 0;
done:
    free(bad), free(val);
    return st;
}

sbm_status sbm__dist_schur(dist_state *s, double lambda, int *failed)
{
    *failed = 0;
    int *bad = calloc((size_t)s->nl, sizeof(int));
    if (!bad) return sbm__error(s->rk[0].ctx, SBM_ERR_OUT_OF_MEMORY, "out of host memory");
    sbm_status st = SBM_SUCCESS;
    for (int l = 0; l < s->nl && st == SBM_SUCCESS; l++) {
        dist_rank *k = &s->rk[l];
        sbm_ctx *ctx = k->ctx;
        const sbm_ba_system_info si = sbm_ba_system_get_info(k->sys);
        sbm_status ls = SBM__NESTED(ctx, sbm_ba_set_damping(ctx, k->sys, lambda));
        if (ls == SBM_SUCCESS)
            ls = SBM__INNER(ctx, "sbm_ba_schur_execute",
                            sbm__ba_schur_execute(ctx, k->plan, si.U, si.V, si.W, si.gc, si.gp,
                                                  NULL, k->rhs));
        if (ls == SBM_SUCCESS)
            ls = SBM__INNER(ctx, "sbm_ba_schur_diagonal",
                            sbm__ba_schur_diagonal(ctx, k->plan, si.U, si.W, k->Sdiag));
        if (ls == SBM_SUCCESS)
            ls = SBM__INNER(ctx, "sbm_bdiag_inverse", sbm__bdiag_inverse(ctx, k->Sdiag, k->Dinv));
        if (ls == SBM_ERR_NOT_POSITIVE_DEFINITE)
            bad[l] = 1; /* a rejected step, as on one context */
        else if (ls != SBM_SUCCESS)
            st = rank_fail(s, l, ls);
    }
    if (st == SBM_SUCCESS) st = agree(s, bad, failed);
    free(bad);
    return st;
}

/* The Schur plan's t = W^T x on every rank (x: the PCG direction p, or with step the LM step),
 * summed over the ranks by the halo. */
static sbm_status wt_summed(dist_state *s, int step)
{
    for (int l = 0; l < s->nl; l++) {
        dist_rank *k = &s->rk[l];
        const sbm_cbc *Vinv, *Y;
        double *t;
        sbm__symup *us;
        sbm__ba_schur_parts(k->plan, &Vinv, &Y, &t, &us);
        RANK_TRY(l, SBM__INNER(k->ctx, "sbm_cbc_spmv",
                               sbm__cbc_spmv(k->ctx, SBM_OP_T, 1.0, k->sys->W,
                                             step ? k->step : k->p, 0.0, t)));
    }
    return halo_sum_points(s, HALO_T);
}

sbm_status sbm__dist_apply(dist_state *s)
{
    /* t = W^T p on every rank, summed over the ranks; q = U p - Y t */
    SBM__TRY(wt_summed(s, 0));
    for (int l = 0; l < s->nl; l++) {
        dist_rank *k = &s->rk[l];
        const sbm_cbc *Vinv, *Y;
        double *t;
        sbm__symup *us;
        sbm__ba_schur_parts(k->plan, &Vinv, &Y, &t, &us);
        us->A = k->sys->U;
        RANK_TRY(l, sbm__symup_multiply(k->ctx, us, k->p, k->q));
        RANK_TRY(l, SBM__INNER(k->ctx, "sbm_cbc_spmv",
                               sbm__cbc_spmv(k->ctx, SBM_OP_N, -1.0, Y, t, 1.0, k->q)));
    }
    return SBM_SUCCESS;
}

sbm_status sbm__dist_trial(dist_state *s, double lambda, double *x2, double *step2,
                           double *new_cost, double *predicted)
{
    /* dp = V^-1 (gp - sum over ranks of W^T dc) */
    SBM__TRY(wt_summed(s, 1));
    double *val = malloc((size_t)s->nl * 4 * sizeof(double));
    if (!val) return sbm__error(s->rk[0].ctx, SBM_ERR_OUT_OF_MEMORY, "out of host memory");
    sbm_status st = SBM_SUCCESS;
    for (int l = 0; l < s->nl && st == SBM_SUCCESS; l++) {
        dist_rank *k = &s->rk[l];
        sbm_ctx *ctx = k->ctx;
        const sbm_cbc *Vinv, *Y;
        double *t, *v = val + 4 * l;
        sbm__symup *us;
        sbm__ba_schur_parts(k->plan, &Vinv, &Y, &t, &us);
        const sbm_ba_system_info si = sbm_ba_system_get_info(k->sys);
        const int64_t npt = k->nall - k->n;
        const double *x = k->x[s->cur];
        double *trial = k->x[1 - s->cur];
        st = sbm__vec_xpay(ctx, npt, si.gp, -1.0, t); /* t = gp - t */
        if (st == SBM_SUCCESS)
            st = SBM__INNER(ctx, "sbm_cbc_spmv",
                            sbm__cbc_spmv(ctx, SBM_OP_N, 1.0, Vinv, t, 0.0, k->step + k->n));
        v[0] = v[1] = v[2] = v[3] = 0.0;
        if (st == SBM_SUCCESS) st = sbm__vec_dot(ctx, k->nown, x, x, &v[0]);
        if (st == SBM_SUCCESS) st = sbm__vec_dot(ctx, k->nown, k->step, k->step, &v[1]);
        if (st == SBM_SUCCESS) st = sbm__vec_copy(ctx, trial, x, k->nall);
        if (st == SBM_SUCCESS) st = sbm__vec_axpy(ctx, k->nall, 1.0, k->step, trial);
        if (st == SBM_SUCCESS) st = sbm__ba_cost_at(ctx, k->sys, trial, &v[2]);
        /* the predicted decrease over the owned entries: D, g and the step share the layout */
        if (st == SBM_SUCCESS)
            st = sbm__solve_kernels_of(ctx)->lm_predicted(ctx, k->nown, lambda, k->sys->D, 1.0,
                                                           k->sys->g, k->step, &v[3]);
        if (st != SBM_SUCCESS) st = rank_fail(s, l, st);
    }
    double out[4] = {0.0, 0.0, 0.0, 0.0};
    if (st == SBM_SUCCESS) st = sbm__dist_reduce(s, val, out, 4, SBM__REDUCE_SUM);
    free(val);
    *x2 = out[0], *step2 = out[1], *new_cost = out[2], *predicted = out[3];
    return st;
}

sbm_status sbm__dist_download(dist_state *s, sbm_bal_problem *problem)
{
    const sbm_bal_info pi = sbm_bal_get_info(problem);
    for (int l = 0; l < s->nl; l++) {
        dist_rank *k = &s->rk[l];
        RANK_TRY(l, sbm__ba_params_download(k->ctx, k->sys, k->x[s->cur], k->lp));
        const sbm_bal_info li = sbm_bal_get_info(k->lp);
        for (int64_t i = 0; i < k->part.nc; i++)
            memcpy(pi.camera_params + 9 * k->part.cam_global[i], li.camera_params + 9 * i,
                   9 * sizeof(double));
        for (int64_t j = 0; j < k->part.np; j++)
            memcpy(pi.point_params + 3 * k->part.pt_global[j], li.point_params + 3 * j,
                   3 * sizeof(double));
    }
    return SBM_SUCCESS;
}

/* The halo lists of a rank in its context's memory (one block, int64 first). */
static sbm_status upload_lists(dist_rank *k)
{
    sbm_ctx *ctx = k->ctx;
    const sbm__dist_part *p = &k->part;
    const int64_t nent = p->seg_off[p->size], nsh = p->nshared, nsum = p->sum_ptr[nsh];
    const size_t b_ptr = (size_t)(nsh + 1) * 8, b_pack = (size_t)nent * 4, b_ent = (size_t)nsum * 4,
                 b_pt = (size_t)nsh * 4;
    char *d = k->lists = sbm__alloc(ctx, b_ptr + b_pack + b_ent + b_pt + 16, "the halo lists");
    if (!d) return ctx->last_status;
    k->d_ptr = (int64_t *)d;
    k->d_pack = (int32_t *)(d + b_ptr);
    k->d_ent = (int32_t *)(d + b_ptr + b_pack);
    k->d_pt = (int32_t *)(d + b_ptr + b_pack + b_ent);
    SBM__TRY(sbm__upload(ctx, k->d_ptr, p->sum_ptr, b_ptr));
    if (b_pack) SBM__TRY(sbm__upload(ctx, k->d_pack, p->pack, b_pack));
    if (b_ent) SBM__TRY(sbm__upload(ctx, k->d_ent, p->sum_ent, b_ent));
    if (b_pt) SBM__TRY(sbm__upload(ctx, k->d_pt, p->sum_pt, b_pt));
    return SBM_SUCCESS;
}

/* Rank k's share, local problem, system and vectors, its parameters uploaded. */
static sbm_status setup_rank(dist_state *s, dist_rank *k, const sbm_bal_info *pi,
                             const int32_t *part, int r)
{
    sbm_ctx *ctx = k->ctx;
    const int P = s->comm->size;
    SBM__TRY(sbm__dist_part_make(ctx, pi, part, r, P, &k->part));
    SBM__TRY(sbm__dist_part_problem(ctx, pi, &k->part, &k->lp));
    SBM__TRY(SBM__NESTED(ctx, sbm_ba_system_create(ctx, k->lp, &k->sys)));
    sbm__ba_set_loss(k->sys, s->opt->loss);
    k->n = 9 * k->part.nc;
    k->nall = k->n + 3 * k->part.np;
    k->nown = k->n + 3 * k->part.np_owned;
    const int64_t nent = k->part.seg_off[P];
    k->mem = sbm__vec_alloc(ctx, 3 * k->nall + 5 * k->n + 18 * nent + 1, "the solver's vectors");
    k->xcount = malloc((size_t)P * sizeof(int64_t));
    k->xoff = malloc((size_t)P * sizeof(int64_t));
    if (!k->mem) return ctx->last_status;
    if (!k->xcount || !k->xoff)
        return sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "out of host memory for rank %d", r);
    k->x[0] = k->mem, k->x[1] = k->mem + k->nall, k->step = k->mem + 2 * k->nall;
    k->rhs = k->step + k->nall;
    k->r = k->rhs + k->n, k->z = k->r + k->n, k->p = k->z + k->n, k->q = k->p + k->n;
    k->send = k->q + k->n, k->recv = k->send + 9 * nent;
    SBM__TRY(upload_lists(k));
    return sbm__ba_params_upload(ctx, k->sys, k->lp, k->x[0]);
}

/* The matrix-free Schur plan and the Schur-Jacobi blocks of a linearised rank. */
static sbm_status setup_plan(dist_rank *k)
{
    sbm_ctx *ctx = k->ctx;
    const sbm_ba_system_info si = sbm_ba_system_get_info(k->sys);
    SBM__TRY(SBM__INNER(ctx, "sbm_ba_schur_plan",
                        sbm__ba_schur_plan(ctx, si.U, si.V, si.W, SBM_SCHUR_MATRIX_FREE, &k->plan,
                                           NULL)));
    SBM__TRY(sbm__bdiag_pattern_create(ctx, k->part.nc, 9, &k->Sdiag));
    return SBM__INNER(ctx, "sbm_cbc_copy", sbm__cbc_copy(ctx, k->Sdiag, &k->Dinv));
}

sbm_status sbm__dist_setup(dist_state *s, const sbm_bal_problem *problem,
                           sbm_partition_method method, double *t_lin)
{
    sbm_ctx *ctx0 = s->rk[0].ctx;
    const sbm_bal_info pi = sbm_bal_get_info(problem);
    const int P = s->comm->size;
    int32_t *part = malloc((size_t)(pi.cameras + 1) * sizeof(int32_t));
    if (!part) return sbm__error(ctx0, SBM_ERR_OUT_OF_MEMORY, "out of host memory for the partition");
    sbm_status st = sbm__dist_partition(ctx0, &pi, P, method, part);
    for (int l = 0; l < s->nl && st == SBM_SUCCESS; l++) {
        st = setup_rank(s, &s->rk[l], &pi, part, s->comm->rank[l]);
        if (st != SBM_SUCCESS) st = rank_fail(s, l, st);
    }
    free(part);
    SBM__TRY(st);
    /* what the report says about the partition */
    s->rep.ranks = P;
    for (int l = 0; l < s->nl; l++) {
        const sbm__dist_part *p = &s->rk[l].part;
        if (p->nc > s->rep.max_cameras) s->rep.max_cameras = p->nc;
        if (p->nobs > s->rep.max_observations) s->rep.max_observations = p->nobs;
        /* a shared point counted once, by its owner */
        for (int64_t e = 0; e < p->nshared; e++) s->rep.shared_points += p->sum_pt[e] < p->np_owned;
    }
    const double t0 = sbm__now(ctx0, 1);
    st = sbm__dist_linearize(s);
    *t_lin += sbm__now(ctx0, 1) - t0;
    SBM__TRY(st);
    for (int l = 0; l < s->nl; l++) RANK_TRY(l, setup_plan(&s->rk[l]));
    return SBM_SUCCESS;
}

void sbm__dist_free(dist_state *s)
{
    for (int l = 0; s->rk && l < s->nl; l++) {
        dist_rank *k = &s->rk[l];
        sbm_cbc_destroy(k->Dinv);
        sbm_cbc_destroy(k->Sdiag);
        sbm_schur_plan_destroy(k->plan);
        sbm_ba_system_destroy(k->sys);
        if (k->mem) sbm__free(k->ctx, k->mem);
        if (k->lists) sbm__free(k->ctx, k->lists);
        free(k->xcount), free(k->xoff);
        sbm_bal_destroy(k->lp);
        sbm__dist_part_free(&k->part);
    }
    free(s->rk);
    s->rk = NULL;
}
