/* SPDX-License-Identifier: BSD-3-Clause */
/* The communicator interface of the distributed layer (src/dist): its host stand-in
 * (dist_comm.c) and NCCL (kernels/cuda/dist/cuda_nccl.cu, which includes only this header of
 * the layer). */
#ifndef SBM_DIST_COMM_H
#define SBM_DIST_COMM_H

#include "sbm_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif /* SBM_DIST_COMM_H */
