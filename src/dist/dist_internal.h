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
#include "sbm_dist.h"

/* ---------------------------------------------------------------------------------------- */
/* The communicator                                                                         */
/* ---------------------------------------------------------------------------------------- */

typedef struct sbm__comm sbm__comm;

/* What one local rank exchanges: count[p] doubles with peer p (the same count both ways), at
 * offset off[p] of its send buffer and of its receive buffer. The entry of the rank itself is
 * skipped by the communicator (the caller copies it). */
typedef struct sbm__xchg {
    const int64_t *count; /* size entries */
    const int64_t *off;   /* size entries */
} sbm__xchg;

typedef enum sbm__reduce_op { SBM__REDUCE_SUM = 0, SBM__REDUCE_MAX = 1 } sbm__reduce_op;

/* Most doubles one reduction carries. */
#define SBM__COMM_MAX_REDUCE 8

typedef struct sbm__comm_ops {
    const char *name; /* "host" or "NCCL" */
    /* in[l*n + i] (host): local rank l's value i; out[i] (host): the op over all ranks of value
     * i, applied in rank order (the same bits on every rank). n <= SBM__COMM_MAX_REDUCE. */
    sbm_status (*reduce)(sbm__comm *c, const double *in, double *out, int n, sbm__reduce_op op);
    /* Every local rank l sends send[l] + x[l].off[p] (x[l].count[p] doubles, its context's
     * memory) to peer p and receives p's into recv[l] + x[l].off[p]; p == its own rank is
     * skipped. */
    sbm_status (*exchange)(sbm__comm *c, const sbm__xchg *x, double *const *send,
                           double *const *recv);
    /* Every rank has reached this point (and its queued work is done). */
    sbm_status (*barrier)(sbm__comm *c);
    void (*destroy)(sbm__comm *c);
} sbm__comm_ops;

struct sbm__comm {
    const sbm__comm_ops *ops;
    int size;          /* ranks in the group */
    int nlocal;        /* ranks this process drives */
    int *rank;         /* rank of local rank l (nlocal) */
    sbm_ctx **ctx;     /* context of local rank l (nlocal) */
    double bytes_sent; /* by the local ranks, both kinds of call, since creation */
    double seconds;    /* host seconds inside the communicator calls */
    void *impl;        /* the implementation's state */
};

/* The host stand-in: nlocal == size ranks over the given CPU contexts (borrowed), exchanging by
 * memcpy and reducing in rank order. */
sbm_status sbm__comm_host_create(sbm_ctx *const *ctxs, int size, sbm__comm **comm);
/* NCCL (kernels/cuda/dist, only in a build with SBM_NCCL): one process driving `size` GPUs
 * (ncclCommInitAll over the contexts' devices), or, with nccl_comm, the caller's communicator
 * for the one context given. SBM_ERR_NOT_SUPPORTED without NCCL. */
sbm_status sbm__comm_nccl_create(sbm_ctx *const *ctxs, int nlocal, void *nccl_comm,
                                 sbm__comm **comm);
void sbm__comm_destroy(sbm__comm *c);
/* The communicator of a group (dist_comm.c). */
sbm__comm *sbm__group_comm(sbm_group *g);

/* ---------------------------------------------------------------------------------------- */
/* Partition and halo bookkeeping (host)                                                     */
/* ---------------------------------------------------------------------------------------- */

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
