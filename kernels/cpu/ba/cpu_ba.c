/* SPDX-License-Identifier: BSD-3-Clause */
/* Bundle-adjustment linearisation on the CPU backend (struct sbm__ba_model, ba_kernels.h).
 *
 * Passes over threads (sbm__cpu_parallel_for), each output owned by one item so the bits do
 * not depend on the thread count:
 *   0. cameras: R, Jr, t, f, k1, k2 of each (sbm__bal_camera_prepare) into the model;
 *   1. observations, in fixed chunks of CHUNK: the record [r'; Jc'; Jp'] of each into the
 *      model's scratch (sbm_ba_observation.h), the chunk's cost summed in order, and its first
 *      bad observation;
 *   2. cameras: U = sum Jc'^T Jc' and gc = -sum Jc'^T r' over the camera's observations in
 *      increasing order, and the damping scale of its 9 parameters (U's and V's upper
 *      triangles are summed and mirrored: the blocks are exactly symmetric);
 *   3. points: for each W block of the point, W = sum Jc'^T Jp' over the block's observations,
 *      and V = sum Jp'^T Jp', gp = -sum Jp'^T r' over the point's blocks in order.
 * Camera priors and constant blocks enter passes 2 and 3 and the cost as ba_kernels.h says.
 * The cost is the sum of the chunk sums in chunk order. A bad prediction stops after pass 1,
 * leaving the outputs as they were. */
#include "ba_kernels.h"
#include "cpu_backend.h"
#include "sbm_ba_observation.h"
#include "sbm_damp.h"

#include <math.h>
#include <stdlib.h>

#define CHUNK 2048                 /* observations per cost partial (fixed: the sum's order) */
#define MIN_CHUNKS_PER_THREAD 2    /* 4096 observations */
#define MIN_CAMERAS_PER_THREAD 16
#define MIN_POINTS_PER_THREAD 1024
#define PREFETCH_AHEAD 8           /* records ahead in the camera pass */
#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

typedef struct ba_job {
    const sbm__ba_model *m;
    const double *params;
    const sbm__ba_lin_out *out;
    double *chunk_cost;     /* per chunk */
    int64_t *chunk_bad;     /* per chunk: first bad prediction, first bad Jacobian (or -1) */
    int jacobians;          /* 0: cost only */
} ba_job;

static void camera_prep_pass(void *data, int64_t i0, int64_t i1)
{
    const ba_job *j = data;
    sbm__bal_camera *cams = j->m->cameras;
    for (int64_t i = i0; i < i1; i++)
        sbm__bal_camera_prepare(j->params + 9 * i, j->jacobians, cams + i);
}

static void obs_pass(void *data, int64_t c0, int64_t c1)
{
    const ba_job *j = data;
    const sbm__ba_model *m = j->m;
    const sbm__bal_camera *cams = m->cameras;
    const double *pts = j->params + 9 * m->nc;
    for (int64_t c = c0; c < c1; c++) {
        const int64_t k1 = (c + 1) * CHUNK < m->nobs ? (c + 1) * CHUNK : m->nobs;
        double cost = 0.0;
        int64_t bad_p = -1, bad_j = -1;
        for (int64_t k = c * CHUNK; k < k1; k++) {
            const sbm__bal_camera *cam = cams + m->obs_camera[k];
            const double *X = pts + 3 * (int64_t)m->obs_point[k];
            double ck;
            if (j->jacobians) {
                const int f = sbm__ba_observation(cam, X, m->obs_xy + 2 * k, m->loss_type,
                                                  m->loss_scale,
                                                  m->scratch + SBM__BA_OBS_STRIDE * k, &ck);
                if (f == SBM__BA_OBS_BAD_PREDICTION && bad_p < 0) bad_p = k;
                if (f == SBM__BA_OBS_BAD_JACOBIAN && bad_j < 0) bad_j = k;
            } else {
                ck = sbm__ba_observation_cost(cam, X, m->obs_xy + 2 * k, m->loss_type,
                                              m->loss_scale);
            }
            cost += ck;
        }
        j->chunk_cost[c] = cost;
        if (j->chunk_bad) j->chunk_bad[2 * c] = bad_p, j->chunk_bad[2 * c + 1] = bad_j;
    }
}

static void camera_pass(void *data, int64_t i0, int64_t i1)
{
    const ba_job *j = data;
    const sbm__ba_model *m = j->m;
    const sbm__ba_lin_out *o = j->out;
    for (int64_t i = i0; i < i1; i++) {
        double u[81] = {0.0}, g[9] = {0.0};
        const int64_t t1 = m->cam_ptr[i + 1];
        for (int64_t t = m->cam_ptr[i]; t < t1; t++) {
            /* the records of a camera are scattered (observations come point by point): ask
             * for the one PREFETCH_AHEAD further on while this one is summed */
            if (t + PREFETCH_AHEAD < t1) {
                const char *next = (const char *)(m->scratch + SBM__BA_OBS_STRIDE *
                                                  (int64_t)m->cam_obs[t + PREFETCH_AHEAD]);
                for (int l = 0; l < 20 * 8; l += 64) PREFETCH(next + l);
            }
            const double *rec = m->scratch + SBM__BA_OBS_STRIDE * (int64_t)m->cam_obs[t];
            const double r0 = rec[0], r1 = rec[1], *Jc = rec + 2;
            for (int b = 0; b < 9; b++) {
                const double jb0 = Jc[2 * b], jb1 = Jc[2 * b + 1];
                /* the upper triangle; (b, a) is the same sum of the same products */
                for (int a = 0; a <= b; a++) u[a + 9 * b] += Jc[2 * a] * jb0 + Jc[2 * a + 1] * jb1;
                g[b] -= jb0 * r0 + jb1 * r1;
            }
        }
        for (int b = 0; b < 9; b++)
            for (int a = b + 1; a < 9; a++) u[a + 9 * b] = u[b + 9 * a];
        if (m->cam_prior && m->cam_prior[i])
            (void)sbm__ba_prior(j->params + 9 * i, m->prior_mean + 9 * i, m->prior_info + 81 * i,
                                g, u);
        if (m->cam_const && m->cam_const[i])
            for (int e = 0; e < 81; e++) u[e] = e % 10 == 0 ? 1.0 : 0.0, g[e % 9] = 0.0;
        for (int e = 0; e < 81; e++) o->U_und[81 * i + e] = o->U[81 * i + e] = u[e];
        for (int a = 0; a < 9; a++) {
            o->g[9 * i + a] = g[a];
            o->D[9 * i + a] = sbm_blk_damp_scale(u[10 * a]);
        }
    }
}

static void point_pass(void *data, int64_t p0, int64_t p1)
{
    const ba_job *j = data;
    const sbm__ba_model *m = j->m;
    const sbm__ba_lin_out *o = j->out;
    double *gp = o->g + 9 * m->nc, *Dp = o->D + 9 * m->nc;
    for (int64_t p = p0; p < p1; p++) {
        double v[9] = {0.0}, g[3] = {0.0};
        for (int64_t b = m->w_colptr[p]; b < m->w_colptr[p + 1]; b++) {
            double w[27] = {0.0};
            for (int64_t t = m->blk_ptr[b]; t < m->blk_ptr[b + 1]; t++) {
                const double *rec = m->scratch + SBM__BA_OBS_STRIDE * (int64_t)m->blk_obs[t];
                const double r0 = rec[0], r1 = rec[1], *Jc = rec + 2, *Jp = rec + 20;
                for (int a = 0; a < 3; a++) {
                    const double pa0 = Jp[2 * a], pa1 = Jp[2 * a + 1];
                    /* W block (9x3): (Jc^T Jp)(row, a), column-major row + 9a */
                    for (int row = 0; row < 9; row++)
                        w[row + 9 * a] += Jc[2 * row] * pa0 + Jc[2 * row + 1] * pa1;
                    for (int c = 0; c <= a; c++)
                        v[c + 3 * a] += Jp[2 * c] * pa0 + Jp[2 * c + 1] * pa1;
                    g[a] -= pa0 * r0 + pa1 * r1;
                }
            }
            const int32_t cam = m->obs_camera[m->blk_obs[m->blk_ptr[b]]];
            const int held = (m->pt_const && m->pt_const[p]) || (m->cam_const && m->cam_const[cam]);
            for (int e = 0; e < 27; e++) o->W[27 * b + e] = held ? 0.0 : w[e];
        }
        v[1] = v[3], v[2] = v[6], v[5] = v[7]; /* symmetric: the upper triangle mirrored */
        if (m->pt_const && m->pt_const[p])
            for (int e = 0; e < 9; e++) v[e] = e % 4 == 0 ? 1.0 : 0.0, g[e % 3] = 0.0;
        for (int e = 0; e < 9; e++) o->V_und[9 * p + e] = o->V[9 * p + e] = v[e];
        for (int a = 0; a < 3; a++) {
            gp[3 * p + a] = g[a];
            Dp[3 * p + a] = sbm_blk_damp_scale(v[4 * a]);
        }
    }
}

/* Pass 1 with per-chunk partials (host scratch); the cost summed in chunk order, the first bad
 * observations into res (NULL: cost only). */
static sbm_status run_obs_pass(sbm_ctx *ctx, ba_job *j, double *cost, sbm__ba_lin_result *res)
{
    const int64_t nchunks = (j->m->nobs + CHUNK - 1) / CHUNK;
    double *part = sbm__host_alloc(ctx, (size_t)(nchunks + 1) * 3 * sizeof(double),
                                   "the cost partials of the BA linearisation");
    if (!part) return SBM_ERR_OUT_OF_MEMORY;
    j->chunk_cost = part;
    j->chunk_bad = res ? (int64_t *)(part + nchunks + 1) : NULL;
    sbm__cpu_parallel_for(ctx, j->m->nc, MIN_CAMERAS_PER_THREAD, camera_prep_pass, j);
    sbm__cpu_parallel_for(ctx, nchunks, MIN_CHUNKS_PER_THREAD, obs_pass, j);
    double c = 0.0;
    for (int64_t k = 0; k < nchunks; k++) c += part[k];
    for (int64_t i = 0; j->m->cam_prior && i < j->m->nc; i++) /* the priors, in camera order */
        if (j->m->cam_prior[i])
            c += sbm__ba_prior(j->params + 9 * i, j->m->prior_mean + 9 * i,
                               j->m->prior_info + 81 * i, NULL, NULL);
    *cost = c;
    if (res) {
        res->bad_prediction = res->bad_jacobian = -1;
        for (int64_t k = nchunks - 1; k >= 0; k--) {
            if (j->chunk_bad[2 * k] >= 0) res->bad_prediction = j->chunk_bad[2 * k];
            if (j->chunk_bad[2 * k + 1] >= 0) res->bad_jacobian = j->chunk_bad[2 * k + 1];
        }
    }
    sbm__host_free(ctx, part);
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_ba_linearize(sbm_ctx *ctx, const sbm__ba_model *m, const double *params,
                                 const sbm__ba_lin_out *out, sbm__ba_lin_result *res)
{
    ba_job j = {m, params, out, NULL, NULL, 1};
    SBM__TRY(run_obs_pass(ctx, &j, &res->cost, res));
    res->gmax = 0.0;
    if (res->bad_prediction >= 0) return SBM_SUCCESS;
    sbm__cpu_parallel_for(ctx, m->nc, MIN_CAMERAS_PER_THREAD, camera_pass, &j);
    sbm__cpu_parallel_for(ctx, m->np, MIN_POINTS_PER_THREAD, point_pass, &j);
    return sbm__cpu_vec_amax(ctx, 9 * m->nc + 3 * m->np, out->g, &res->gmax);
}

sbm_status sbm__cpu_ba_cost(sbm_ctx *ctx, const sbm__ba_model *m, const double *params,
                            double *h_cost)
{
    ba_job j = {m, params, NULL, NULL, NULL, 0};
    return run_obs_pass(ctx, &j, h_cost, NULL);
}

sbm_status sbm__cpu_ba_damp(sbm_ctx *ctx, int64_t nblocks, int b, double lambda,
                            const double *und, double *out)
{
    (void)ctx;
    const int64_t bb = (int64_t)b * b;
    for (int64_t i = 0; i < nblocks * bb; i++) out[i] = und[i];
    for (int64_t i = 0; i < nblocks; i++)
        for (int a = 0; a < b; a++) {
            const double d = und[bb * i + (b + 1) * a];
            out[bb * i + (b + 1) * a] = sbm_blk_marquardt(d, lambda);
        }
    return SBM_SUCCESS;
}
