/* SPDX-License-Identifier: BSD-3-Clause */
/* Pose-graph SLAM iterations on the CPU backend (the SLAM table, slam_kernels.h): the edges'
 * errors, Jacobians and robust weights, g2o's increments of the poses, and the damping of
 * Lambda's diagonal. The linearisation and the increments run on sbm__cpu_parallel_for; every
 * output belongs to one edge or one slot, so the bits do not depend on the thread count. */
#include "cpu_backend.h"
#include "slam_kernels.h"
#include "sbm_damp.h"
#include "sbm_pose_edge.h"

#include <math.h>
#include <string.h>

/* Edges (or slots) per thread at least: below this one thread does it all. */
#define MIN_EDGES_PER_THREAD 2048
#define MIN_SLOTS_PER_THREAD 4096

typedef struct lin_job {
    const sbm__slam_edges *E;
    const double *x;
    double *rho, *e, *w, *J, *omega;
} lin_job;

static void linearize_range(void *data, int64_t begin, int64_t end)
{
    const lin_job *j = data;
    const sbm__slam_edges *E = j->E;
    const int ps = E->dim == 2 ? 3 : 7, d = E->dim == 2 ? 3 : 6, bs = d * d;
    for (int64_t k = begin; k < end; k++) {
        const double *xi = j->x + (int64_t)ps * E->v[2 * k];
        const double *xj = j->x + (int64_t)ps * E->v[2 * k + 1];
        double *Ji = NULL, *Jj = NULL;
        if (j->w) {
            if (E->blk[2 * k] >= 0) Ji = j->J + bs * E->blk[2 * k];
            if (E->blk[2 * k + 1] >= 0) Jj = j->J + bs * E->blk[2 * k + 1];
        }
        j->rho[k] = sbm__pose_edge_linearize(
            E->dim, E->loss, E->loss_scale, xi, xj, E->meas + ps * k, E->info + bs * k,
            j->w ? j->e + d * k : NULL, j->w ? j->w + d * k : NULL, Ji, Jj,
            j->w && j->omega ? j->omega + bs * k : NULL);
    }
}

sbm_status sbm__cpu_slam_linearize(sbm_ctx *ctx, const sbm__slam_edges *E, const double *x,
                                   double *rho, double *e, double *w, double *J, double *omega)
{
    lin_job j = {E, x, rho, e, w, J, omega};
    sbm__cpu_parallel_for(ctx, E->ne, MIN_EDGES_PER_THREAD, linearize_range, &j);
    return SBM_SUCCESS;
}

typedef struct oplus_job {
    int dim;
    double alpha;
    const double *dx, *x;
    double *y;
} oplus_job;

static void oplus_range(void *data, int64_t begin, int64_t end)
{
    const oplus_job *o = data;
    const int ps = o->dim == 2 ? 3 : 7, d = o->dim == 2 ? 3 : 6;
    for (int64_t j = begin; j < end; j++) {
        double inc[6], *y = o->y + ps * j;
        for (int a = 0; a < d; a++) inc[a] = o->alpha * o->dx[d * j + a];
        for (int a = 0; a < ps; a++) y[a] = o->x[ps * j + a];
        if (o->dim == 2)
            sbm__se2_oplus(y, inc);
        else
            sbm__se3_oplus(y, inc);
    }
}

sbm_status sbm__cpu_slam_oplus(sbm_ctx *ctx, int dim, int64_t nfree, double alpha,
                               const double *dx, const double *x, double *y)
{
    oplus_job o = {dim, alpha, dx, x, y};
    sbm__cpu_parallel_for(ctx, nfree, MIN_SLOTS_PER_THREAD, oplus_range, &o);
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_slam_diag_get(sbm_ctx *ctx, int64_t nb, int d, const int64_t *pos,
                                  const double *V, double *D)
{
    (void)ctx;
    for (int64_t j = 0; j < nb; j++)
        for (int a = 0; a < d; a++) {
            const double v = pos[j] >= 0 ? V[pos[j] + a * (d + 1)] : 0.0;
            D[d * j + a] = sbm_blk_damp_scale(v);
        }
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_slam_diag_add(sbm_ctx *ctx, int64_t nb, int d, const int64_t *pos,
                                  double lambda, const double *D, const double *L, double *V,
                                  double *blocks, int64_t *h_bad)
{
    (void)ctx;
    *h_bad = -1;
    for (int64_t j = 0; j < nb; j++) {
        for (int a = 0; pos[j] >= 0 && a < d; a++) {
            const int64_t q = pos[j] + a * (d + 1);
            V[q] = L[q] + lambda * (D ? D[d * j + a] : 1.0);
            if (!isfinite(V[q]) && *h_bad < 0) *h_bad = j;
        }
        if (blocks) memcpy(blocks + d * d * j, V + pos[j], (size_t)(d * d) * sizeof(double));
    }
    return SBM_SUCCESS;
}
