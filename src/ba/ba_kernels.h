/* SPDX-License-Identifier: BSD-3-Clause */
/* Bundle adjustment's kernel table: the linearisation (kernels/cpu/ba/cpu_ba.c,
 * kernels/cuda/ba/cuda_ba.cu) and the device-resident iteration's Schur-Jacobi blocks
 * (cpu_ba_solve.c, cuda_ba_solve.cu), in the library sbm_ba. One list, expanded as the core table
 * is (core_backend.h): the struct, the prototypes of sbm__cpu_<name> and sbm__cuda_<name>, and
 * the two tables (kernels/cpu/ba/cpu_ba_table.c, kernels/cuda/ba/cuda_ba_table.cu).
 * sbm__ba_kernels_of finds a context's. */
#ifndef SBM_BA_KERNELS_H
#define SBM_BA_KERNELS_H

#include "sbm_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A bundle-adjustment model in the context's memory, for the backends' linearisation
 * (src/ba/ba.c uploads it once per system). Parameters are one vector [cameras (9 each, BAL
 * order); points (3 each)]. Every sum below runs over a list in increasing observation order,
 * so the results do not depend on the thread count or the device. */
#define SBM__BA_OBS_STRIDE 26 /* scratch doubles per observation: r' (2), Jc' (2x9), Jp' (2x3) */
typedef struct sbm__ba_model {
    int64_t nc, np, nobs;      /* cameras, points, observations */
    int64_t nnzb;              /* blocks of W */
    const int32_t *obs_camera; /* camera of each observation (nobs) */
    const int32_t *obs_point;  /* point of each observation (nobs) */
    const double *obs_xy;      /* measured x, y (2*nobs) */
    const int64_t *cam_ptr;    /* observations of camera i: cam_obs[cam_ptr[i] .. cam_ptr[i+1]) */
    const int32_t *cam_obs;    /*   increasing (nobs) */
    const int64_t *w_colptr;   /* W's pattern (np+1): the blocks of point j */
    const int64_t *blk_ptr;    /* observations of W block b: blk_obs[blk_ptr[b] .. blk_ptr[b+1]) */
    const int32_t *blk_obs;    /*   increasing (nobs); a point's are its blocks' in block order */
    int loss_type;             /* SBM__LOSS_* (sbm_geometry.h) */
    double loss_scale;         /* > 0 */
    double *scratch;           /* SBM__BA_OBS_STRIDE * nobs doubles, the backend's to use */
    void *cameras;             /* nc prepared cameras (sbm__bal_camera of sbm_geometry.h), the
                                  backend's to fill from the parameters */
    const unsigned char *cam_const; /* 1: camera held constant (nc), or NULL: none */
    const unsigned char *pt_const;  /* 1: point held constant (np), or NULL: none */
    const unsigned char *cam_prior; /* 1: camera has a prior (nc), or NULL: none has */
    const double *prior_mean;  /* 9 per camera (where cam_prior) */
    const double *prior_info;  /* 81 per camera, column-major (where cam_prior) */
} sbm__ba_model;

/* Constant blocks and priors (sbm_bal_set_*; the kernels of both backends): a camera's U block
 * gets the prior's Omega and its gc -Omega (x - mean) (sbm__ba_prior, sbm_ba_observation.h) and
 * the cost its 0.5 d^T Omega d, summed over the cameras in increasing order after the
 * observations; then a constant camera's U block is the identity and its gc zero, a constant
 * point's V block the identity and its gp zero, and every W block of a constant camera or point
 * zero: the Schur step of a constant block is then exactly zero and the free blocks' step that
 * of the problem without the constant ones. */

/* Where ba_linearize writes (context memory): the undamped U (81*nc) and V (9*np) values, the
 * damped copies U, V (equal to the undamped ones: damping 0), W (27*nnzb), g = [gc; gp] =
 * -J'^T r' (9*nc + 3*np) and D, the damping scale of every parameter (the diagonal of U and
 * V clamped: sbm_blk_damp_scale of blocks/sbm_damp.h). */
typedef struct sbm__ba_lin_out {
    double *U_und, *V_und, *U, *V, *W, *g, *D;
} sbm__ba_lin_out;

/* What ba_linearize reports to the host (the only copy it makes): cost = 0.5 sum rho(|r_k|^2);
 * gmax = max |g|; the first observation whose prediction (bad_prediction) or, the predictions
 * all finite, whose Jacobian or corrected residual (bad_jacobian) is not finite, or -1. A bad
 * prediction leaves every output unchanged; a bad Jacobian leaves them partly written. */
typedef struct sbm__ba_lin_result {
    double cost, gmax;
    int64_t bad_prediction, bad_jacobian;
} sbm__ba_lin_result;

/* ba_linearize: at params (nc*9 + np*3), residuals and Jacobians with Ceres' loss correction,
 * U, V, W, g, D and the result's scalars (one copy to the host). ba_cost: *h_cost = 0.5 sum
 * rho(|r_k|^2) (+inf when a prediction is not finite). ba_damp: out = und with every diagonal
 * entry d of its nblocks b x b blocks replaced by sbm_blk_marquardt(d, lambda) (sbm_damp.h).
 * ba_schur_diagonal: the block diagonal of S = U - Y W^T (Y and W: one pattern, nc x np blocks
 * of p x q; U upper block triangle, nc x nc blocks of p x p) into D (nc x nc, block diagonal,
 * every diagonal block stored): D_i = U_ii - sum over the blocks k of W's block row i of
 * Y_k W_k^T, summed in the order of the row list. udiag (nc): the index of U's block (i, i), or
 * -1 (zero); wrow_ptr (nc+1) and wrow_blk (W's nnzb): W's block indices row by row, increasing
 * block column. All in the backend's memory. */
#define SBM__BA_KERNELS(X)                                                                         \
    X(sbm_status, ba_linearize,                                                                    \
      (sbm_ctx *ctx, const sbm__ba_model *m, const double *params, const sbm__ba_lin_out *out,     \
       sbm__ba_lin_result *res))                                                                   \
    X(sbm_status, ba_cost,                                                                         \
      (sbm_ctx *ctx, const sbm__ba_model *m, const double *params, double *h_cost))                \
    X(sbm_status, ba_damp,                                                                         \
      (sbm_ctx *ctx, int64_t nblocks, int b, double lambda, const double *und, double *out))       \
    X(sbm_status, ba_schur_diagonal,                                                               \
      (sbm_ctx *ctx, const sbm_cbc *U, const int64_t *udiag, const sbm_cbc *Y, const sbm_cbc *W,   \
       const int64_t *wrow_ptr, const int64_t *wrow_blk, sbm_cbc *D))                            \
    X(sbm_status, ba_halo_pack,                                                                    \
      (sbm_ctx *ctx, int64_t n, int w, const int32_t *idx, const double *src, double *buf))      \
    X(sbm_status, ba_halo_sum,                                                                     \
      (sbm_ctx *ctx, int64_t nsum, int w, const int64_t *ptr, const int32_t *ent,                 \
       const int32_t *pt, const double *buf, double *dst))                                        \
    X(sbm_status, ba_damp_scale,                                                                   \
      (sbm_ctx *ctx, int64_t nblocks, int b, const double *und, double *D))

/* The table, both backends' prototypes, the CPU table, the CUDA getter (NULL without CUDA) and
 * sbm__ba_kernels_of(ctx), the table of ctx's backend (core_backend.h). */
SBM__DECLARE_KERNEL_TABLE(ba, SBM__BA_KERNELS)

#ifdef __cplusplus
}
#endif

#endif /* SBM_BA_KERNELS_H */
