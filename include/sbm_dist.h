/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm_dist.h: bundle adjustment over several contexts (GPUs through NCCL, or CPU contexts over a
 * host stand-in of the communicator) (library sbm_ba). */
#ifndef SBM_DIST_H
#define SBM_DIST_H

#include "sbm_ba.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================== */
/* Groups of contexts                                                                       */
/* ======================================================================================== */

/* A group of `size` ranks, each a context, over a communicator. This process drives some of
 * them (all of them, or one under MPI): its local ranks. */
typedef struct sbm_group sbm_group;

/* A group of `size` CPU contexts in this process over the host stand-in of the communicator
 * (copies between the contexts' memory, reductions in rank order): the distributed algorithms
 * without GPUs, as tested in CI.
 * @return SBM_ERR_NULL_ARGUMENT (group NULL), SBM_ERR_INVALID_ARGUMENT (size outside 1..1024).
 * The message of a failure is sbm_ctx_last_error(NULL). */
sbm_status sbm_group_create_cpu(int size, sbm_group **group);
/* A group of `size` GPUs driven by this process: one CUDA context on each of devices[0..size)
 * (devices NULL: 0..size-1) and one NCCL communicator over them (ncclCommInitAll).
 * @return SBM_ERR_NOT_SUPPORTED in a build without NCCL (SBM_NCCL) or CUDA,
 * SBM_ERR_INVALID_ARGUMENT for a size outside 1..1024 or a device listed twice,
 * SBM_ERR_NO_DEVICE for a missing device, SBM_ERR_CUDA for a failing NCCL call (its text in the
 * message). The message of a failure is sbm_ctx_last_error(NULL). */
sbm_status sbm_group_create_gpus(int size, const int *devices, sbm_group **group);
/* This process's rank of a group made by the caller (one process per GPU, e.g. under MPI):
 * nccl_comm is the caller's ncclComm_t (made with ncclCommInitRank; not destroyed by
 * sbm_group_destroy) and device its GPU. Every rank must pass the same problem and options to
 * the distributed calls.
 * @return as sbm_group_create_gpus; SBM_ERR_NULL_ARGUMENT for a NULL nccl_comm. */
sbm_status sbm_group_create_nccl(void *nccl_comm, int device, sbm_group **group);
/* Destroy a group and the contexts it made. NULL is accepted and does nothing. */
void sbm_group_destroy(sbm_group *group);
/* @return the ranks of the group (0 for NULL). */
int sbm_group_size(const sbm_group *group);
/* @return the ranks this process drives (0 for NULL). */
int sbm_group_local_size(const sbm_group *group);
/* @return the context of local rank l (NULL for NULL or l out of range); a failure of a
 * distributed call leaves its message in local rank 0's context. */
sbm_ctx *sbm_group_context(const sbm_group *group, int l);
/* @return the rank of local rank l (-1 for NULL or l out of range). */
int sbm_group_rank(const sbm_group *group, int l);

/* ======================================================================================== */
/* Distributed bundle adjustment                                                            */
/* ======================================================================================== */

/* How cameras are shared among the ranks. */
typedef enum sbm_partition_method {
    SBM_PARTITION_GRAPH = 0, /* parts grown breadth-first over the camera visibility graph
                              * (cameras sharing a point), balanced by observations */
    SBM_PARTITION_INDEX = 1  /* camera numbers cut into ranges of balanced observations */
} sbm_partition_method;

typedef struct sbm_dist_options {
    sbm_partition_method partition;
} sbm_dist_options;

/* What a distributed solve measured. Bytes and shared points count this process's ranks (all
 * ranks when it drives every rank; under MPI, sum them over the processes). */
typedef struct sbm_dist_report {
    int ranks;
    int64_t max_cameras;          /* cameras of the largest part */
    int64_t max_observations;     /* observations of the largest part */
    int64_t shared_points;        /* points seen by more than one rank */
    int64_t pcg_iterations;       /* over the whole solve */
    double bytes_per_pcg_iteration;       /* the halo of S x plus the reductions */
    double megba_bytes_per_pcg_iteration; /* two ring all-reduces of full [cameras; points]
                                             vectors per iteration, as MegBA does */
    double bytes_total;           /* over the whole solve */
    double time_comm;             /* host seconds inside communicator calls */
} sbm_dist_report;

/* @return {SBM_PARTITION_GRAPH}. */
sbm_dist_options sbm_dist_default_options(void);

/* sbm_ba_solve over a group: the cameras are partitioned over the ranks, each rank holds its
 * cameras' observations and the points they see, and matrix-free PCG on the reduced camera
 * system runs with the point halo exchanged between ranks and the dot products reduced over
 * the group. The LM rules, stop reasons and report fields are sbm_ba_solve's; the costs agree
 * with sbm_ba_solve's matrix-free PCG to rounding (sums in another order). options->linear_solver
 * must be SBM_LINEAR_AUTO or SBM_LINEAR_PCG_MATRIX_FREE. On return the problem holds the
 * parameters of the local ranks' cameras and of the points they see (all of them when this
 * process drives every rank). dist_options and report may be NULL.
 * @return SBM_ERR_NULL_ARGUMENT, SBM_ERR_NOT_SUPPORTED for another linear solver,
 * SBM_ERR_INVALID_ARGUMENT for an unknown partition method or fewer cameras than ranks, and
 * sbm_ba_solve's failures; the message is in sbm_group_context(group, 0). */
sbm_status sbm_ba_solve_dist(sbm_group *group, sbm_bal_problem *problem,
                             const sbm_solver_options *options,
                             const sbm_dist_options *dist_options, sbm_solver_summary *summary,
                             sbm_dist_report *report);

/* ======================================================================================== */
/* Distributed block SpGEMM                                                                 */
/* ======================================================================================== */

/* C = U + alpha op(A) op(B) (sbm_cbc_gemm's semantics and flags) over a group: the block columns
 * of op(B) cut into contiguous ranges of about equal block counts, one per rank; every rank
 * holds A whole and computes C's columns of its range. A, B, U (may be NULL) are matrices of
 * ctx, copied to the ranks. *C (when C is not NULL): the gathered product on ctx, bitwise
 * sbm_cbc_gemm's on the ranks' backend; parts (when not NULL, one entry per local rank): the
 * ranks' products, each of C's shape holding only its columns (the caller destroys them).
 * @return SBM_ERR_NULL_ARGUMENT (group; C and parts both NULL), SBM_ERR_INVALID_ARGUMENT for an
 * op_b other than SBM_OP_N or SBM_OP_T, SBM_ERR_NOT_SUPPORTED for C when this process drives
 * only some ranks, and sbm_cbc_gemm's failures ("rank R: ..."); the message is in ctx. */
sbm_status sbm_cbc_gemm_dist(sbm_group *group, double alpha, sbm_op op_a, const sbm_cbc *A,
                             sbm_op op_b, const sbm_cbc *B, const sbm_cbc *U, unsigned flags,
                             sbm_ctx *ctx, sbm_cbc **C, sbm_cbc **parts);

#ifdef __cplusplus
}
#endif

#endif /* SBM_DIST_H */
