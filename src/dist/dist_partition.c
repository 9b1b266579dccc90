/* SPDX-License-Identifier: BSD-3-Clause */
/* The camera partition, the ranks' shares of a problem and their halo lists (host).
 *
 * A rank owns its cameras and their observations and holds every point they see. A point seen
 * by several ranks is held by each of them (its copies stay bitwise equal: every rank sums the
 * same partial sums in rank order) and owned by the lowest of them, which alone counts it in
 * norms and dot products. Local points are numbered owned first, then the others, each run in
 * increasing global order, so the owned entries of a vector [cameras; points] are a prefix. */
#include "dist_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Observations per camera into cnt (nc). */
static void camera_counts(const sbm_bal_info *pi, int64_t *cnt)
{
    memset(cnt, 0, (size_t)pi->cameras * sizeof(int64_t));
    for (int64_t k = 0; k < pi->observations; k++) cnt[pi->obs_camera[k]]++;
}

static void partition_index(const sbm_bal_info *pi, int P, const int64_t *cnt, int32_t *part)
{
    const int64_t nc = pi->cameras;
    int64_t rem = pi->observations, acc = 0, in_part = 0;
    int k = 0;
    double target = (double)rem / P;
    for (int64_t c = 0; c < nc; c++) {
        /* move on when the part is full, or when the cameras left are just enough for the
         * parts left */
        if (k < P - 1 && in_part > 0 &&
            ((double)acc + 0.5 * (double)cnt[c] > target || nc - c <= P - k - 1)) {
            rem -= acc;
            k++;
            acc = in_part = 0;
            target = (double)rem / (P - k);
        }
        part[c] = k;
        acc += cnt[c];
        in_part++;
    }
}

/* Breadth-first parts over the visibility graph: pobs/pptr are the observations of every point
 * (increasing), cptr/cobs those of every camera. */
static void partition_graph(const sbm_bal_info *pi, int P, const int64_t *cnt,
                            const int64_t *pptr, const int32_t *pobs, const int64_t *cptr,
                            const int32_t *cobs, int32_t *part, int32_t *queue, int32_t *inq)
{
    const int64_t nc = pi->cameras;
    for (int64_t c = 0; c < nc; c++) part[c] = -1, inq[c] = -1;
    int64_t rem = pi->observations, free_cams = nc, scan = 0;
    for (int k = 0; k < P && free_cams > 0; k++) {
        const double target = (double)rem / (P - k);
        int64_t acc = 0, in_part = 0, qh = 0, qt = 0;
        for (;;) {
            if (qh == qt) { /* a new seed: the lowest free camera */
                while (scan < nc && part[scan] >= 0) scan++;
                if (scan == nc) break;
                queue[qt++] = (int32_t)scan;
                inq[scan] = k;
            }
            const int32_t c = queue[qh];
            if (part[c] >= 0) { /* taken since it was queued (cannot happen within a part) */
                qh++;
                continue;
            }
            if (k < P - 1 && in_part > 0 &&
                ((double)acc + 0.5 * (double)cnt[c] > target || free_cams <= P - k - 1))
                break;
            qh++;
            part[c] = k;
            acc += cnt[c];
            in_part++;
            free_cams--;
            for (int64_t e = cptr[c]; e < cptr[c + 1]; e++) {
                const int32_t j = pi->obs_point[cobs[e]];
                for (int64_t f = pptr[j]; f < pptr[j + 1]; f++) {
                    const int32_t c2 = pi->obs_camera[pobs[f]];
                    if (part[c2] < 0 && inq[c2] != k) queue[qt++] = c2, inq[c2] = k;
                }
            }
        }
        rem -= acc;
    }
}

/* ptr (n+1) and list of the observations grouped by key[k] (increasing within a group). */
static void group_obs(int64_t nobs, const int32_t *key, int64_t n, int64_t *ptr, int32_t *list)
{
    memset(ptr, 0, (size_t)(n + 1) * sizeof(int64_t));
    for (int64_t k = 0; k < nobs; k++) ptr[key[k] + 1]++;
    for (int64_t i = 0; i < n; i++) ptr[i + 1] += ptr[i];
    for (int64_t k = 0; k < nobs; k++) list[ptr[key[k]]++] = (int32_t)k;
    for (int64_t i = n; i > 0; i--) ptr[i] = ptr[i - 1];
    ptr[0] = 0;
}

sbm_status sbm__dist_partition(sbm_ctx *ctx, const sbm_bal_info *pi, int nparts,
                               sbm_partition_method method, int32_t *part)
{
    const int64_t nc = pi->cameras, np = pi->points, nobs = pi->observations;
    if (method != SBM_PARTITION_GRAPH && method != SBM_PARTITION_INDEX)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument dist_options: partition method %d is not "
                          "SBM_PARTITION_GRAPH (0) or SBM_PARTITION_INDEX (1)", (int)method);
    if (nc < nparts)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument problem: %" PRId64 " cameras cannot be shared among %d ranks "
                          "(each rank needs a camera)", nc, nparts);
    int64_t *cnt = malloc((size_t)(nc + 1) * sizeof(int64_t));
    int64_t *pptr = malloc((size_t)(np + 1) * sizeof(int64_t));
    int64_t *cptr = malloc((size_t)(nc + 1) * sizeof(int64_t));
    int32_t *pobs = malloc((size_t)(nobs + 1) * sizeof(int32_t));
    int32_t *cobs = malloc((size_t)(nobs + 1) * sizeof(int32_t));
    int32_t *queue = malloc((size_t)(nc + 1) * sizeof(int32_t));
    int32_t *inq = malloc((size_t)(nc + 1) * sizeof(int32_t));
    sbm_status st = SBM_SUCCESS;
    if (!cnt || !pptr || !cptr || !pobs || !cobs || !queue || !inq) {
        st = sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY,
                        "out of host memory for the camera partition (%" PRId64 " observations)",
                        nobs);
        goto done;
    }
    camera_counts(pi, cnt);
    if (method == SBM_PARTITION_INDEX) {
        partition_index(pi, nparts, cnt, part);
    } else {
        group_obs(nobs, pi->obs_point, np, pptr, pobs);
        group_obs(nobs, pi->obs_camera, nc, cptr, cobs);
        partition_graph(pi, nparts, cnt, pptr, pobs, cptr, cobs, part, queue, inq);
    }
done:
    free(cnt), free(pptr), free(cptr), free(pobs), free(cobs), free(queue), free(inq);
    return st;
}
