/* SPDX-License-Identifier: BSD-3-Clause */
/* Bundle adjustment normal equations, linearised on the context's backend.
 *
 * sbm_ba_system_create uploads the observations once, with the lists the backends sum over
 * (struct sbm__ba_model: the observations of every camera and of every block of W, each in
 * increasing observation order, so the sums are deterministic). A linearisation at parameters
 * in the context's memory (sbm__ba_linearize_at) runs on the backend (ba_linearize of the BA
 * table, ba_kernels.h:
 * records r', Jc', Jp' with the robust loss, then U, V, W, g = -J'^T r' and the damping scale
 * per camera and per point) and copies only the cost and max |g| to the host. The undamped U
 * and V stay in the context's memory and the damping is applied there (ba_damp).
 * sbm_ba_linearize(problem) uploads the problem's parameters and does the same. The host views
 * of the solver are in ba_views.c; the Schur complement in ba_schur.c. */
#include "ba_system.h"
#include "solve_kernels.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sbm_ba_system_destroy(sbm_ba_system *s)
{
    if (!s) return;
    sbm_cbc_destroy(s->U);
    sbm_cbc_destroy(s->V);
    sbm_cbc_destroy(s->W);
    sbm__free_with(&s->dev_a, s->U_und);
    sbm__free_with(&s->dev_a, s->V_und);
    sbm__free_with(&s->dev_a, s->g);
    sbm__free_with(&s->dev_a, s->D);
    sbm__free_with(&s->dev_a, s->params);
    sbm__free_with(&s->dev_a, s->model_mem);
    sbm__free_with(&s->dev_a, s->hold_mem);
    sbm_allocator a = s->host_a;
    if (s->mirror && s->mirror->owned) {
        free(s->mirror->U);
        free(s->mirror->V);
        free(s->mirror->W);
        free(s->mirror->g);
    }
    sbm__free_with(&a, s->mirror);
    sbm__free_with(&a, s->obs_block);
    sbm__free_with(&a, s->w_colptr);
    sbm__free_with(&a, s->w_rowind);
    sbm__free_with(&a, s);
}

sbm_ba_system_info sbm_ba_system_get_info(const sbm_ba_system *s)
{
    sbm_ba_system_info info;
    memset(&info, 0, sizeof info);
    if (!s) return info;
    info.U = s->U;
    info.V = s->V;
    info.W = s->W;
    info.gc = s->g;
    info.gp = s->g + 9 * s->nc;
    info.cost = s->cost;
    info.lambda = s->lambda;
    info.cameras = s->nc;
    info.points = s->np;
    return info;
}

/* W's pattern (the distinct cameras of every point, increasing) and the W block of every
 * observation, on the host. */
static sbm_status w_pattern(sbm_ctx *ctx, sbm_ba_system *s, const sbm_bal_info *pi)
{
    const int64_t np = s->np, nobs = s->nobs;
    int64_t *cnt = sbm__host_alloc(ctx, (size_t)(np + 1) * sizeof(int64_t), "point counts");
    if (!cnt) return SBM_ERR_OUT_OF_MEMORY;
    memset(cnt, 0, (size_t)(np + 1) * sizeof(int64_t));
    for (int64_t k = 0; k < nobs; k++) cnt[pi->obs_point[k] + 1]++;
    for (int64_t j = 0; j < np; j++) cnt[j + 1] += cnt[j];
    for (int64_t k = 0; k < nobs; k++) s->w_rowind[cnt[pi->obs_point[k]]++] = pi->obs_camera[k];
    /* cnt[j] is now the end of bucket j; sort each bucket and drop repeated cameras */
    int64_t nnzb = 0, begin = 0;
    s->w_colptr[0] = 0;
    for (int64_t j = 0; j < np; j++) {
        const int64_t end = cnt[j];
        int32_t *b = s->w_rowind + begin;
        const int64_t m = end - begin;
        for (int64_t a = 1; a < m; a++) { /* insertion sort: a point has a few cameras */
            int32_t v = b[a];
            int64_t c = a - 1;
            while (c >= 0 && b[c] > v) b[c + 1] = b[c], c--;
            b[c + 1] = v;
        }
        for (int64_t a = 0; a < m; a++)
            if (a == 0 || b[a] != b[a - 1]) s->w_rowind[nnzb++] = b[a];
        s->w_colptr[j + 1] = nnzb;
        begin = end;
    }
    s->nnzb = nnzb;
    /* block of every observation: binary search of its camera within its point's column */
    for (int64_t k = 0; k < nobs; k++) {
        const int64_t j = pi->obs_point[k];
        int64_t lo = s->w_colptr[j], hi = s->w_colptr[j + 1] - 1;
        const int32_t c = pi->obs_camera[k];
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (s->w_rowind[mid] < c)
                lo = mid + 1;
            else
                hi = mid;
        }
        s->obs_block[k] = (int32_t)lo;
    }
    sbm__host_free(ctx, cnt);
    return SBM_SUCCESS;
}

/* ptr (nseg+1) and list (n) of the items 0..n-1 grouped by seg[item], increasing within a
 * group (a counting sort). */
static void group_by(int64_t n, const int32_t *seg, int64_t nseg, int64_t *ptr, int32_t *list)
{
    memset(ptr, 0, (size_t)(nseg + 1) * sizeof(int64_t));
    for (int64_t k = 0; k < n; k++) ptr[seg[k] + 1]++;
    for (int64_t i = 0; i < nseg; i++) ptr[i + 1] += ptr[i];
    for (int64_t k = 0; k < n; k++) list[ptr[seg[k]]++] = (int32_t)k;
    for (int64_t i = nseg; i > 0; i--) ptr[i] = ptr[i - 1];
    ptr[0] = 0;
}

/* The model's arrays: built on the host in the layout of one context-memory block, uploaded
 * in one copy; the scratch and the prepared cameras follow them. */
static sbm_status upload_model(sbm_ctx *ctx, sbm_ba_system *s, const sbm_bal_info *pi)
{
    const int64_t nc = s->nc, nobs = s->nobs, nb = s->nnzb;
    size_t off[9], total = 0;
    const size_t bytes[9] = {4 * (size_t)nobs, 4 * (size_t)nobs, 16 * (size_t)nobs,
                             8 * (size_t)(nc + 1), 4 * (size_t)nobs, 8 * (size_t)(nb + 1),
                             4 * (size_t)nobs, 8 * SBM__BA_OBS_STRIDE * (size_t)nobs,
                             sizeof(sbm__bal_camera) * (size_t)nc};
    for (int a = 0; a < 9; a++) off[a] = total, total += (bytes[a] + 255) & ~(size_t)255;
    const size_t up = off[7]; /* everything but the scratch and the prepared cameras */
    char *h = sbm__host_alloc(ctx, up, "the BA model (host)");
    if (!h) return SBM_ERR_OUT_OF_MEMORY;
    memcpy(h + off[0], pi->obs_camera, bytes[0]);
    memcpy(h + off[1], pi->obs_point, bytes[1]);
    memcpy(h + off[2], pi->obs_xy, bytes[2]);
    group_by(nobs, pi->obs_camera, nc, (int64_t *)(h + off[3]), (int32_t *)(h + off[4]));
    group_by(nobs, s->obs_block, nb, (int64_t *)(h + off[5]), (int32_t *)(h + off[6]));
    char *d = s->model_mem = sbm__alloc(ctx, total, "the BA model (observations and scratch)");
    sbm_status st = d ? ctx->ops->copy(ctx, d, h, up, 0) : SBM_ERR_OUT_OF_MEMORY;
    sbm__host_free(ctx, h);
    if (st != SBM_SUCCESS) return st;
    sbm__ba_model *m = &s->model;
    m->nc = nc, m->np = s->np, m->nobs = nobs, m->nnzb = nb;
    m->obs_camera = (const int32_t *)(d + off[0]);
    m->obs_point = (const int32_t *)(d + off[1]);
    m->obs_xy = (const double *)(d + off[2]);
    m->cam_ptr = (const int64_t *)(d + off[3]);
    m->cam_obs = (const int32_t *)(d + off[4]);
    m->w_colptr = s->W->colptr;
    m->blk_ptr = (const int64_t *)(d + off[5]);
    m->blk_obs = (const int32_t *)(d + off[6]);
    m->scratch = (double *)(d + off[7]);
    m->cameras = d + off[8];
    m->loss_type = SBM__LOSS_NONE;
    m->loss_scale = 1.0;
    return SBM_SUCCESS;
}

/* The constant flags and camera priors of the problem into context memory (one copy), their
 * pointers into the model; nothing when the problem has none. */
static sbm_status upload_holds(sbm_ctx *ctx, sbm_ba_system *s, const sbm_bal_info *pi)
{
    const size_t nc = (size_t)s->nc, np = (size_t)s->np;
    const size_t bytes[5] = {pi->camera_constant ? nc : 0, pi->point_constant ? np : 0,
                             pi->camera_has_prior ? nc : 0,
                             pi->camera_has_prior ? 9 * nc * sizeof(double) : 0,
                             pi->camera_has_prior ? 81 * nc * sizeof(double) : 0};
    const void *src[5] = {pi->camera_constant, pi->point_constant, pi->camera_has_prior,
                          pi->prior_mean, pi->prior_information};
    size_t off[5], total = 0;
    for (int a = 0; a < 5; a++) off[a] = total, total += (bytes[a] + 255) & ~(size_t)255;
    if (total == 0) return SBM_SUCCESS;
    char *h = sbm__host_alloc(ctx, total, "constant flags and priors (host)");
    if (!h) return SBM_ERR_OUT_OF_MEMORY;
    for (int a = 0; a < 5; a++)
        if (bytes[a]) memcpy(h + off[a], src[a], bytes[a]);
    char *d = s->hold_mem = sbm__alloc(ctx, total, "constant flags and priors");
    sbm_status st = d ? ctx->ops->copy(ctx, d, h, total, 0) : SBM_ERR_OUT_OF_MEMORY;
    sbm__host_free(ctx, h);
    if (st != SBM_SUCCESS) return st;
    sbm__ba_model *m = &s->model;
    m->cam_const = bytes[0] ? (const unsigned char *)(d + off[0]) : NULL;
    m->pt_const = bytes[1] ? (const unsigned char *)(d + off[1]) : NULL;
    m->cam_prior = bytes[2] ? (const unsigned char *)(d + off[2]) : NULL;
    m->prior_mean = bytes[2] ? (const double *)(d + off[3]) : NULL;
    m->prior_info = bytes[2] ? (const double *)(d + off[4]) : NULL;
    return SBM_SUCCESS;
}

/* A problem built in memory: every camera and point is touched by an observation or a prior,
 * or held constant (else its block of the normal equations is zero: no information). */
static sbm_status check_touched(sbm_ctx *ctx, const sbm_bal_info *pi)
{
    const int64_t nc = pi->cameras, n = nc + pi->points;
    unsigned char *seen = sbm__host_alloc(ctx, (size_t)n + 1, "observed flags");
    if (!seen) return SBM_ERR_OUT_OF_MEMORY;
    memset(seen, 0, (size_t)n + 1);
    for (int64_t k = 0; k < pi->observations; k++)
        seen[pi->obs_camera[k]] = seen[nc + pi->obs_point[k]] = 1;
    int64_t bad = -1;
    for (int64_t i = 0; i < n && bad < 0; i++) {
        const int held = i < nc ? (pi->camera_constant && pi->camera_constant[i]) ||
                                      (pi->camera_has_prior && pi->camera_has_prior[i])
                                : pi->point_constant && pi->point_constant[i - nc];
        if (!seen[i] && !held) bad = i;
    }
    sbm__host_free(ctx, seen);
    if (bad < 0) return SBM_SUCCESS;
    if (bad < nc)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument problem: camera %" PRId64 " has no observation and no prior: "
                          "nothing determines its parameters (hold it constant with "
                          "sbm_bal_set_camera_constant, give it a prior, or leave it out)", bad);
    return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                      "argument problem: point %" PRId64 " has no observation: nothing "
                      "determines its position (hold it constant with sbm_bal_set_point_constant "
                      "or leave it out)", bad - nc);
}

/* The context-memory arrays of the values, zero until the first linearisation. */
static sbm_status alloc_values(sbm_ctx *ctx, sbm_ba_system *s)
{
    const int64_t n = sbm__ba_nparams(s);
    SBM__TRY(SBM__NESTED(ctx, sbm_cbc_create(ctx, &s->W, s->nc, s->np, 9, 3, s->w_colptr,
                                             s->w_rowind, NULL)));
    SBM__TRY(sbm__bdiag_pattern_create(ctx, s->nc, 9, &s->U));
    SBM__TRY(sbm__bdiag_pattern_create(ctx, s->np, 3, &s->V));
    if (!(s->U_und = sbm__vec_alloc(ctx, 81 * s->nc, "undamped U")) ||
        !(s->V_und = sbm__vec_alloc(ctx, 9 * s->np, "undamped V")) ||
        !(s->g = sbm__vec_alloc(ctx, n, "the gradient [gc; gp]")) ||
        !(s->D = sbm__vec_alloc(ctx, n, "the damping scale")) ||
        !(s->params = sbm__vec_alloc(ctx, n, "the parameters")))
        return SBM_ERR_OUT_OF_MEMORY;
    SBM__TRY(sbm__vec_zero(ctx, s->U_und, 81 * s->nc));
    SBM__TRY(sbm__vec_zero(ctx, s->V_und, 9 * s->np));
    SBM__TRY(sbm__vec_zero(ctx, s->g, n));
    return sbm__vec_zero(ctx, s->D, n);
}

sbm_status sbm_ba_system_create(sbm_ctx *ctx, const sbm_bal_problem *problem,
                                sbm_ba_system **system)
{
    SBM__ENTER(ctx, "sbm_ba_system_create");
    if (!system) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument system is NULL");
    *system = NULL;
    if (!problem) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument problem is NULL");
    const sbm_bal_info pi = sbm_bal_get_info(problem);
    if (pi.observations > INT32_MAX)
        return sbm__error(ctx, SBM_ERR_OVERFLOW,
                          "argument problem has %" PRId64 " observations; at most %d fit the "
                          "32-bit observation lists", pi.observations, INT32_MAX);

    sbm_allocator ha = sbm__host_allocator_of(ctx);
    sbm_ba_system *s = sbm__alloc_with(ctx, &ha, 1, sizeof *s, "the BA system");
    if (!s) return SBM_ERR_OUT_OF_MEMORY;
    memset(s, 0, sizeof *s);
    s->host_a = ha;
    s->dev_a = ctx->allocator;
    s->ctx = ctx;
    s->nc = pi.cameras, s->np = pi.points, s->nobs = pi.observations;
    s->loss.type = SBM_LOSS_NONE, s->loss.scale = 1.0;
    s->valid = 1; /* all zero until the first linearisation */
    sbm_status st = SBM_SUCCESS;
    s->mirror = sbm__alloc_with(ctx, &ha, 1, sizeof *s->mirror, "the host mirror");
    if (s->mirror) memset(s->mirror, 0, sizeof *s->mirror);
    s->w_colptr = s->mirror ? sbm__alloc_with(ctx, &ha, (size_t)s->np + 1, sizeof(int64_t),
                                              "W column pointers") : NULL;
    s->obs_block = s->w_colptr ? sbm__alloc_with(ctx, &ha, (size_t)s->nobs, sizeof(int32_t),
                                                 "observation blocks") : NULL;
    s->w_rowind = s->obs_block ? sbm__alloc_with(ctx, &ha, (size_t)s->nobs, sizeof(int32_t),
                                                 "W block rows") : NULL;
    if (!s->w_rowind) {
        st = ctx->last_status;
        goto fail;
    }
    if ((pi.in_memory && (st = check_touched(ctx, &pi)) != SBM_SUCCESS) ||
        (st = w_pattern(ctx, s, &pi)) != SBM_SUCCESS ||
        (st = alloc_values(ctx, s)) != SBM_SUCCESS ||
        (st = upload_model(ctx, s, &pi)) != SBM_SUCCESS ||
        (st = upload_holds(ctx, s, &pi)) != SBM_SUCCESS)
        goto fail;
    if (ctx->backend == SBM_BACKEND_CPU) { /* the host views read the arrays themselves */
        s->mirror->U = s->U_und, s->mirror->V = s->V_und;
        s->mirror->W = s->W->values, s->mirror->g = s->g;
    } else {
        s->mirror->owned = 1;
    }
    *system = s;
    return SBM_SUCCESS;

fail:
    sbm_ba_system_destroy(s);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Linearisation and damping                                                                */
/* ---------------------------------------------------------------------------------------- */

int64_t sbm__ba_nparams(const sbm_ba_system *s) { return 9 * s->nc + 3 * s->np; }

sbm_status sbm__ba_params_upload(sbm_ctx *ctx, const sbm_ba_system *s,
                                 const sbm_bal_problem *problem, double *d_params)
{
    const sbm_bal_info pi = sbm_bal_get_info(problem);
    SBM__TRY(sbm__vec_upload(ctx, d_params, pi.camera_params, 9 * s->nc));
    return sbm__vec_upload(ctx, d_params + 9 * s->nc, pi.point_params, 3 * s->np);
}

sbm_status sbm__ba_params_download(sbm_ctx *ctx, const sbm_ba_system *s, const double *d_params,
                                   sbm_bal_problem *problem)
{
    const sbm_bal_info pi = sbm_bal_get_info(problem);
    SBM__TRY(sbm__vec_download(ctx, pi.camera_params, d_params, 9 * s->nc));
    return sbm__vec_download(ctx, pi.point_params, d_params + 9 * s->nc, 3 * s->np);
}

void sbm__ba_set_loss(sbm_ba_system *s, sbm_loss loss)
{
    s->loss = loss;
    s->model.loss_type = (int)loss.type;
    s->model.loss_scale = loss.type == SBM_LOSS_NONE ? 1.0 : loss.scale;
}

sbm_status sbm_ba_system_set_loss(sbm_ctx *ctx, sbm_ba_system *s, const sbm_loss *loss)
{
    SBM__ENTER(ctx, "sbm_ba_system_set_loss");
    if (!s) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument system is NULL");
    if (!loss) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument loss is NULL");
    SBM__TRY(sbm__check_loss(ctx, "loss", loss));
    sbm__ba_set_loss(s, *loss);
    return SBM_SUCCESS;
}

/* The camera and point of observation k (a download on a device backend: error paths only). */
static void observation_ends(sbm_ctx *ctx, const sbm_ba_system *s, int64_t k, int32_t *c,
                             int32_t *j)
{
    *c = *j = -1;
    if (ctx->ops->copy(ctx, c, s->model.obs_camera + k, sizeof *c, 1) != SBM_SUCCESS ||
        ctx->ops->copy(ctx, j, s->model.obs_point + k, sizeof *j, 1) != SBM_SUCCESS)
        *c = *j = -1;
}

sbm_status sbm__ba_linearize_at(sbm_ctx *ctx, sbm_ba_system *s, const double *d_params)
{
    const sbm__ba_lin_out out = {s->U_und, s->V_und, s->U->values, s->V->values,
                                 s->W->values, s->g, s->D};
    sbm__ba_lin_result res;
    memset(&res, 0, sizeof res);
    SBM__TRY(sbm__ba_kernels_of(ctx)->ba_linearize(ctx, &s->model, d_params, &out, &res));
    int32_t c, j;
    if (res.bad_prediction >= 0) {
        observation_ends(ctx, s, res.bad_prediction, &c, &j);
        return sbm__error(ctx, SBM_ERR_NOT_FINITE,
                          "observation %" PRId64 " (camera %d, point %d): the prediction is "
                          "not finite (a non-finite parameter, or the point lies on the "
                          "camera's image plane)",
                          res.bad_prediction, (int)c, (int)j);
    }
    s->mirror->current = 0;
    if (res.bad_jacobian >= 0) {
        /* a Jacobian overflowing (a point within ~1e-150 of the image plane): the values are
         * partly written, so the system has no linearisation now */
        s->valid = 0;
        observation_ends(ctx, s, res.bad_jacobian, &c, &j);
        return sbm__error(ctx, SBM_ERR_NOT_FINITE,
                          "observation %" PRId64 " (camera %d, point %d): the Jacobian is not "
                          "finite (the point lies on the camera's image plane); the system "
                          "must be linearised again",
                          res.bad_jacobian, (int)c, (int)j);
    }
    s->cost = res.cost;
    s->gmax = res.gmax;
    s->lambda = 0.0;
    s->valid = 1;
    return SBM_SUCCESS;
}

sbm_status sbm__ba_cost_at(sbm_ctx *ctx, const sbm_ba_system *s, const double *d_params,
                           double *cost)
{
    return sbm__ba_kernels_of(ctx)->ba_cost(ctx, &s->model, d_params, cost);
}

double sbm__ba_gradient_max(const sbm_ba_system *s) { return s->gmax; }

sbm_status sbm__ba_predicted_decrease(sbm_ctx *ctx, const sbm_ba_system *s,
                                      const double *d_step, double lambda, double *predicted)
{
    return sbm__solve_kernels_of(ctx)->lm_predicted(ctx, sbm__ba_nparams(s), lambda, s->D, 1.0,
                                                    s->g, d_step, predicted);
}

sbm_status sbm_ba_linearize(sbm_ctx *ctx, sbm_ba_system *s, const sbm_bal_problem *problem)
{
    SBM__ENTER(ctx, "sbm_ba_linearize");
    if (!s) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument system is NULL");
    if (!problem) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument problem is NULL");
    SBM__TRY(sbm__check_cbc_arg(ctx, "system", s->U));
    const sbm_bal_info pi = sbm_bal_get_info(problem);
    if (pi.cameras != s->nc || pi.points != s->np || pi.observations != s->nobs)
        return sbm__error(ctx, SBM_ERR_DIMENSION_MISMATCH,
                          "argument problem has %" PRId64 " cameras, %" PRId64 " points, %" PRId64
                          " observations; the system was made for %" PRId64 ", %" PRId64
                          ", %" PRId64,
                          pi.cameras, pi.points, pi.observations, s->nc, s->np, s->nobs);
    for (int64_t k = 0; k < s->nobs; k++) {
        const int64_t j = pi.obs_point[k], b = s->obs_block[k];
        if (b < s->w_colptr[j] || b >= s->w_colptr[j + 1] || s->w_rowind[b] != pi.obs_camera[k])
            return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                              "argument problem: observation %" PRId64
                              " (camera %d, point %" PRId64
                              ") is not the one the system was made with",
                              k, (int)pi.obs_camera[k], j);
    }
    SBM__TRY(sbm__ba_params_upload(ctx, s, problem, s->params));
    return sbm__ba_linearize_at(ctx, s, s->params);
}

sbm_status sbm_ba_set_damping(sbm_ctx *ctx, sbm_ba_system *s, double lambda)
{
    SBM__ENTER(ctx, "sbm_ba_set_damping");
    if (!s) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument system is NULL");
    SBM__TRY(sbm__check_cbc_arg(ctx, "system", s->U));
    if (!s->valid)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument system: its last linearisation failed; linearise it again");
    if (!(lambda >= 0.0) || !isfinite(lambda))
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument lambda = %g must be finite and >= 0", lambda);
    const sbm__ba_kernels *k = sbm__ba_kernels_of(ctx);
    if (s->nc > 0) SBM__TRY(k->ba_damp(ctx, s->nc, 9, lambda, s->U_und, s->U->values));
    if (s->np > 0) SBM__TRY(k->ba_damp(ctx, s->np, 3, lambda, s->V_und, s->V->values));
    s->lambda = lambda;
    return SBM_SUCCESS;
}
