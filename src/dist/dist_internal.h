/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal declarations of the distributed layer (src/dist): the communicator interface and its
 * host stand-in (dist_comm.c), the camera partition and the halo bookkeeping
 * (dist_partition.c), the per-rank BA parts and the halo sums (dist_ba.c) and the distributed
 * Levenberg-Marquardt with its PCG (dist_lm.c).
 *
 * A group has `size` ranks; this process drives `nlocal` of them (all of them for the host
 * stand-in and for one process driving several GPUs; one under MPI). Every distributed
 * algorithm here is written phase by phase: local work on each local rank, then one collective
 * call of the communicator over all local ranks. Reduced scalars are computed in rank order from
 * every rank's contribution, so they are bitwise the same on every rank and every run: the
 * control flow that depends on them (PCG, LM) is the same everywhere. */
#ifndef SBM_DIST_INTERNAL_H
#define SBM_DIST_INTERNAL_H

#include "ba_internal.h"
#include "dist_comm.h"
#include "sbm_dist.h"

/* ---------------------------------------------------------------------------------------- */
/* Partition and halo bookkeeping (host)                                                     */
/* ---------------------------------------------------------------------------------------- */

/* The communicator of a group (dist_comm.c). */
sbm__comm *sbm__group_comm(sbm_group *g);

/* part[c] in [0, nparts) for every camera: SBM_PARTITION_INDEX cuts the camera numbers into
 * nparts ranges of about equal observation counts; SBM_PARTITION_GRAPH grows each part by a
 * breadth-first search over the camera visibility graph (cameras sharing a point), from the
 * lowest-numbered free camera, to about equal observation counts. Deterministic. */
sbm_status sbm__dist_partition(sbm_ctx *ctx, const sbm_bal_info *pi, int nparts,
                               sbm_partition_method method, int32_t *part);

/* One rank's share of a partitioned problem. */
typedef struct sbm__dist_part {
    int rank, size;
    int64_t nc, np, nobs;   /* local cameras, points (owned first), observations */
    int64_t np_owned;       /* points this rank owns: the first np_owned local points */
    int64_t *cam_global;    /* global camera of local camera i (nc), increasing */
    int64_t *pt_global;     /* global point of local point j (np): owned, then the others,
                             * each run increasing */
    int64_t *obs_global;    /* global observation of local observation k (nobs), increasing */
    /* halo: the local points seen by another rank too. seg_count[p] / seg_off[p]: the length
     * and the offset of peer p's segment in the halo buffers (points, not doubles); p == rank:
     * all of this rank's shared points. pack[e] (seg_off[size] entries): the local point of
     * entry e, each segment in increasing global point order. The sum of shared point s (of
     * nshared): the entries sum_ent[sum_ptr[s] .. sum_ptr[s+1]) in increasing rank, into local
     * point sum_pt[s]. */
    int64_t nshared;
    int64_t *seg_count, *seg_off; /* size, size + 1 */
    int32_t *pack;
    int64_t *sum_ptr;             /* nshared + 1 */
    int32_t *sum_ent, *sum_pt;
} sbm__dist_part;

/* The share of rank r of a problem partitioned by part: its cameras, their observations, the
 * points they see (a point is owned by the lowest rank that sees it) and the halo lists. */
sbm_status sbm__dist_part_make(sbm_ctx *ctx, const sbm_bal_info *pi, const int32_t *part, int r,
                               int size, sbm__dist_part *out);
void sbm__dist_part_free(sbm__dist_part *p);
/* The local problem of a share (host memory): its observations renumbered, its parameters
 * copied from the global problem. */
sbm_status sbm__dist_part_problem(sbm_ctx *ctx, const sbm_bal_info *pi, const sbm__dist_part *p,
                                  sbm_bal_problem **out);

#endif /* SBM_DIST_INTERNAL_H */
