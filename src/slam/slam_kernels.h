/* SPDX-License-Identifier: BSD-3-Clause */
/* Pose-graph SLAM's kernel table: the iterations in the backend's memory
 * (kernels/cpu/slam/cpu_slam.c, kernels/cuda/slam/cuda_slam.cu), in the library sbm_ba. One
 * list, expanded as the core table is (core_backend.h): the struct, the prototypes of
 * sbm__cpu_<name> and sbm__cuda_<name>, and the two tables (kernels/cpu/slam/cpu_slam_table.c,
 * kernels/cuda/slam/cuda_slam_table.cu). sbm__slam_kernels_of finds a context's. */
#ifndef SBM_SLAM_KERNELS_H
#define SBM_SLAM_KERNELS_H

#include "sbm_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The edges of a pose graph in the backend's memory, for the SLAM operations below (made
 * once by sbm_slam_system_create, src/slam/slam.c). Poses are stored by slot, pose_size values
 * each (dim 2: 3, SE2 x y theta; dim 3: 7, SE3 x y z qx qy qz qw); slots 0 .. free-1 are the free
 * vertices in order (J's block columns), the fixed vertices follow. */
typedef struct sbm__slam_edges {
    int dim;             /* 2 or 3; error dimension d = 3 or 6 */
    int64_t ne;          /* edges */
    const int32_t *v;    /* [2 ne]: the pose slots of edge k's vertices, v[2k] and v[2k+1] */
    const int64_t *blk;  /* [2 ne]: J's block of edge k's first / second vertex, -1 if fixed */
    const double *meas;  /* [pose_size ne]: measurements */
    const double *info;  /* [d d ne]: information matrices, column-major */
    int loss;            /* sbm_loss_type of every edge */
    double loss_scale;   /* its scale a > 0 */
} sbm__slam_edges;

/* Each output belongs to one edge, slot or column, so the results do not depend on the thread
 * count.
 * slam_linearize: edge k at the poses x: rho[k] = rho(e^T Omega e) of E's loss; with w non-NULL
 * also e and w = rho' Omega e (d per edge), J's blocks at E->blk, and (omega non-NULL) the
 * effective information Omega_eff per edge (blocks/sbm_pose_edge.h).
 * slam_oplus: y[slot j] = x[slot j] (+) alpha dx[d j .. d j + d) for the free slots j < nfree
 * (g2o's increments: SE2 adds and normalises the angle, SE3 sbm__se3_oplus); other slots
 * untouched.
 * slam_diag_get: the damping scale of the diagonal of nb d x d blocks stored at value offsets
 * pos[j] of V (-1: none, read as 0): D[d j + a] = sbm_blk_damp_scale(V[pos[j] + a (d + 1)])
 * (sbm_damp.h).
 * slam_diag_add: V[pos[j] + a (d + 1)] = L[pos[j] + a (d + 1)] + lambda D[d j + a] (D NULL:
 * lambda) where pos[j] >= 0 (V a copy of L with a damped diagonal; the rest of V is left); with
 * blocks non-NULL (every pos[j] >= 0) also blocks[d d j ..] = V's block at pos[j], whole (PCG's
 * block Jacobi); *h_bad is the first j whose damped diagonal is not finite, -1 if none. */
#define SBM__SLAM_KERNELS(X)                                                                       \
    X(sbm_status, slam_linearize,                                                                  \
      (sbm_ctx *ctx, const sbm__slam_edges *E, const double *x, double *rho, double *e, double *w, \
       double *J, double *omega))                                                                  \
    X(sbm_status, slam_oplus,                                                                      \
      (sbm_ctx *ctx, int dim, int64_t nfree, double alpha, const double *dx, const double *x,      \
       double *y))                                                                                 \
    X(sbm_status, slam_diag_get,                                                                   \
      (sbm_ctx *ctx, int64_t nb, int d, const int64_t *pos, const double *V, double *D))           \
    X(sbm_status, slam_diag_add,                                                                   \
      (sbm_ctx *ctx, int64_t nb, int d, const int64_t *pos, double lambda, const double *D,        \
       const double *L, double *V, double *blocks, int64_t *h_bad))

/* The table, both backends' prototypes, the CPU table, the CUDA getter (NULL without CUDA) and
 * sbm__slam_kernels_of(ctx), the table of ctx's backend (core_backend.h). */
SBM__DECLARE_KERNEL_TABLE(slam, SBM__SLAM_KERNELS)

#ifdef __cplusplus
}
#endif

#endif /* SBM_SLAM_KERNELS_H */
