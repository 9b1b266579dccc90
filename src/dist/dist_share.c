/* SPDX-License-Identifier: BSD-3-Clause */
/* One rank's share of a partitioned problem and its halo lists (dist_internal.h). */
#include "dist_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void sbm__dist_part_free(sbm__dist_part *p)
{
    if (!p) return;
    free(p->cam_global), free(p->pt_global), free(p->obs_global);
    free(p->seg_count), free(p->seg_off), free(p->pack);
    free(p->sum_ptr), free(p->sum_ent), free(p->sum_pt);
    memset(p, 0, sizeof *p);
}

/* The ranks that see every point: rk[rptr[j] .. rptr[j+1]), increasing and distinct. */
static int point_ranks(const sbm_bal_info *pi, const int32_t *part, int64_t **rptr_out,
                       int32_t **rk_out)
{
    const int64_t np = pi->points, nobs = pi->observations;
    int64_t *rptr = calloc((size_t)np + 1, sizeof(int64_t));
    int32_t *rk = malloc((size_t)(nobs + 1) * sizeof(int32_t));
    if (!rptr || !rk) {
        free(rptr), free(rk);
        return 0;
    }
    for (int64_t k = 0; k < nobs; k++) rptr[pi->obs_point[k] + 1]++;
    for (int64_t j = 0; j < np; j++) rptr[j + 1] += rptr[j];
    int64_t *fill = malloc((size_t)(np + 1) * sizeof(int64_t));
    if (!fill) {
        free(rptr), free(rk);
        return 0;
    }
    memcpy(fill, rptr, (size_t)(np + 1) * sizeof(int64_t));
    for (int64_t k = 0; k < nobs; k++) rk[fill[pi->obs_point[k]]++] = part[pi->obs_camera[k]];
    /* sort each point's ranks (a few) and drop repeats, compacting in place */
    int64_t w = 0, begin = 0;
    for (int64_t j = 0; j < np; j++) {
        const int64_t end = rptr[j + 1];
        int32_t *b = rk + begin;
        const int64_t m = end - begin;
        for (int64_t a = 1; a < m; a++) {
            const int32_t v = b[a];
            int64_t c = a - 1;
            while (c >= 0 && b[c] > v) b[c + 1] = b[c], c--;
            b[c + 1] = v;
        }
        const int64_t start = w;
        for (int64_t a = 0; a < m; a++)
            if (a == 0 || b[a] != b[a - 1]) rk[w++] = b[a];
        rptr[j] = start;
        begin = end;
    }
    rptr[np] = w;
    free(fill);
    *rptr_out = rptr, *rk_out = rk;
    return 1;
}

/* Does point j's rank list hold r? */
static int sees(const int64_t *rptr, const int32_t *rk, int64_t j, int r)
{
    for (int64_t e = rptr[j]; e < rptr[j + 1]; e++)
        if (rk[e] == r) return 1;
    return 0;
}

/* The halo lists of p (its local points and their rank lists known). */
static int make_halo(sbm__dist_part *p, const int64_t *rptr, const int32_t *rk)
{
    const int P = p->size;
    int64_t nshared = 0, entries = 0;
    p->seg_count = calloc((size_t)P, sizeof(int64_t));
    p->seg_off = calloc((size_t)P + 1, sizeof(int64_t));
    if (!p->seg_count || !p->seg_off) return 0;
    /* shared points in increasing global order: the local order of each run, merged */
    int64_t *order = malloc((size_t)(p->np + 1) * sizeof(int64_t));
    if (!order) return 0;
    int64_t a = 0, b = p->np_owned;
    while (a < p->np_owned || b < p->np) {
        const int take_a = b >= p->np || (a < p->np_owned && p->pt_global[a] < p->pt_global[b]);
        const int64_t l = take_a ? a++ : b++;
        const int64_t j = p->pt_global[l];
        if (rptr[j + 1] - rptr[j] < 2) continue;
        order[nshared++] = l;
        for (int64_t e = rptr[j]; e < rptr[j + 1]; e++) p->seg_count[rk[e]]++;
        entries += rptr[j + 1] - rptr[j];
    }
    for (int q = 0; q < P; q++) p->seg_off[q + 1] = p->seg_off[q] + p->seg_count[q];
    p->nshared = nshared;
    p->pack = malloc((size_t)(p->seg_off[P] + 1) * sizeof(int32_t));
    p->sum_ptr = malloc((size_t)(nshared + 1) * sizeof(int64_t));
    p->sum_ent = malloc((size_t)(entries + 1) * sizeof(int32_t));
    p->sum_pt = malloc((size_t)(nshared + 1) * sizeof(int32_t));
    int64_t *cursor = calloc((size_t)P, sizeof(int64_t));
    if (!p->pack || !p->sum_ptr || !p->sum_ent || !p->sum_pt || !cursor) {
        free(order), free(cursor);
        return 0;
    }
    int64_t e_out = 0;
    p->sum_ptr[0] = 0;
    for (int64_t s = 0; s < nshared; s++) {
        const int64_t l = order[s], j = p->pt_global[l];
        for (int64_t e = rptr[j]; e < rptr[j + 1]; e++) {
            const int q = rk[e];
            const int64_t pos = p->seg_off[q] + cursor[q]++;
            p->pack[pos] = (int32_t)l;
            p->sum_ent[e_out++] = (int32_t)pos;
        }
        p->sum_ptr[s + 1] = e_out;
        p->sum_pt[s] = (int32_t)l;
    }
    free(order), free(cursor);
    return 1;
}

/* Cameras, observations and points of rank r. */
static int make_lists(const sbm_bal_info *pi, const int32_t *part, int r, sbm__dist_part *p,
                      const int64_t *rptr, const int32_t *rk)
{
    for (int64_t c = 0; c < pi->cameras; c++) p->nc += part[c] == r;
    for (int64_t k = 0; k < pi->observations; k++) p->nobs += part[pi->obs_camera[k]] == r;
    for (int64_t j = 0; j < pi->points; j++) {
        if (!sees(rptr, rk, j, r)) continue;
        p->np++;
        p->np_owned += rk[rptr[j]] == r;
    }
    p->cam_global = malloc((size_t)(p->nc + 1) * sizeof(int64_t));
    p->obs_global = malloc((size_t)(p->nobs + 1) * sizeof(int64_t));
    p->pt_global = malloc((size_t)(p->np + 1) * sizeof(int64_t));
    if (!p->cam_global || !p->obs_global || !p->pt_global) return 0;
    int64_t n = 0;
    for (int64_t c = 0; c < pi->cameras; c++)
        if (part[c] == r) p->cam_global[n++] = c;
    n = 0;
    for (int64_t k = 0; k < pi->observations; k++)
        if (part[pi->obs_camera[k]] == r) p->obs_global[n++] = k;
    int64_t owned = 0, other = p->np_owned;
    for (int64_t j = 0; j < pi->points; j++) {
        if (!sees(rptr, rk, j, r)) continue;
        if (rk[rptr[j]] == r)
            p->pt_global[owned++] = j;
        else
            p->pt_global[other++] = j;
    }
    return 1;
}

sbm_status sbm__dist_part_make(sbm_ctx *ctx, const sbm_bal_info *pi, const int32_t *part, int r,
                               int size, sbm__dist_part *out)
{
    memset(out, 0, sizeof *out);
    out->rank = r, out->size = size;
    int64_t *rptr = NULL;
    int32_t *rk = NULL;
    int ok = point_ranks(pi, part, &rptr, &rk);
    ok = ok && make_lists(pi, part, r, out, rptr, rk);
    ok = ok && make_halo(out, rptr, rk);
    free(rptr), free(rk);
    if (ok) return SBM_SUCCESS;
    sbm__dist_part_free(out);
    return sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY,
                      "out of host memory for the share of rank %d (%" PRId64 " observations)",
                      r, pi->observations);
}

sbm_status sbm__dist_part_problem(sbm_ctx *ctx, const sbm_bal_info *pi, const sbm__dist_part *p,
                                  sbm_bal_problem **out)
{
    sbm_bal_problem *lp = NULL;
    SBM__TRY(sbm__bal_alloc(ctx, p->nc, p->np, p->nobs, &lp));
    int64_t *ptloc = malloc((size_t)(pi->points + 1) * sizeof(int64_t));
    int64_t *camloc = malloc((size_t)(pi->cameras + 1) * sizeof(int64_t));
    if (!ptloc || !camloc) {
        free(ptloc), free(camloc);
        sbm_bal_destroy(lp);
        return sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY,
                          "out of host memory for the local problem of rank %d", p->rank);
    }
    for (int64_t i = 0; i < p->nc; i++) camloc[p->cam_global[i]] = i;
    for (int64_t j = 0; j < p->np; j++) ptloc[p->pt_global[j]] = j;
    const sbm_bal_info li = sbm_bal_get_info(lp);
    int32_t *oc = (int32_t *)li.obs_camera, *op = (int32_t *)li.obs_point;
    double *xy = (double *)li.obs_xy;
    for (int64_t k = 0; k < p->nobs; k++) {
        const int64_t g = p->obs_global[k];
        oc[k] = (int32_t)camloc[pi->obs_camera[g]];
        op[k] = (int32_t)ptloc[pi->obs_point[g]];
        xy[2 * k] = pi->obs_xy[2 * g], xy[2 * k + 1] = pi->obs_xy[2 * g + 1];
    }
    for (int64_t i = 0; i < p->nc; i++)
        memcpy(li.camera_params + 9 * i, pi->camera_params + 9 * p->cam_global[i],
               9 * sizeof(double));
    for (int64_t j = 0; j < p->np; j++)
        memcpy(li.point_params + 3 * j, pi->point_params + 3 * p->pt_global[j],
               3 * sizeof(double));
    free(ptloc), free(camloc);
    *out = lp;
    return SBM_SUCCESS;
}
