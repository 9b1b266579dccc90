/* The backends' kernel table and the plan headers the front ends dispatch through (src/core/context.c finds a backend's table). */
#ifndef SBM_CORE_BACKEND_H
#define SBM_CORE_BACKEND_H

#include "core_matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------- */
/* Backends                                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* Each backend fills one table; the front end checks arguments and dispatches through it.
 * Operands are already checked (non-NULL, right backend, shapes agree) when these are called. */
struct sbm__chol_symbolic; /* src/core/chol_internal.h */
struct sbm__chol_numeric;

/* ba-lin: a bundle-adjustment model in the context's memory, for the backends' linearisation
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
} sbm__ba_model;

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

/* slam-gpu: the edges of a pose graph in the backend's memory, for the SLAM ops below (made
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

typedef struct sbm__backend_ops {
    const char *name;
    /* memory space */
    void *(*default_alloc)(void *user, size_t bytes);
    void (*default_free)(void *user, void *ptr);
    /* copies within or across the host and the backend's memory (kind: 0 h2b, 1 b2h, 2 b2b) */
    sbm_status (*copy)(sbm_ctx *ctx, void *dst, const void *src, size_t bytes, int kind);
    sbm_status (*memset0)(sbm_ctx *ctx, void *dst, size_t bytes);
    sbm_status (*synchronize)(sbm_ctx *ctx);
    sbm_status (*ctx_init)(sbm_ctx *ctx, int device); /* select/check the device, set backend_data */
    void (*ctx_destroy)(sbm_ctx *ctx);                /* release backend_data */
    sbm_status (*set_stream)(sbm_ctx *ctx, struct CUstream_st *stream); /* may be NULL */

    /* matrices */
    sbm_status (*cbc_validate)(sbm_ctx *ctx, const char *arg, const sbm_cbc *A, int check_finite);
    sbm_status (*csr_validate)(sbm_ctx *ctx, const char *arg, const sbm_csr *A, int check_finite);
    sbm_status (*cbc_transpose)(sbm_ctx *ctx, const sbm_cbc *A, sbm_cbc **AT);
    sbm_status (*csr_transpose)(sbm_ctx *ctx, const sbm_csr *A, sbm_csr **AT);
    sbm_status (*cbc_to_csr)(sbm_ctx *ctx, const sbm_cbc *A, sbm_csr **B);
    sbm_status (*csr_to_cbc)(sbm_ctx *ctx, const sbm_csr *A, int r, int c, sbm_cbc **B);
    sbm_status (*cbc_to_bsr)(sbm_ctx *ctx, const sbm_cbc *A, sbm_layout layout, int64_t *rowptr,
                             int32_t *colind, double *values);
    sbm_status (*cbc_add)(sbm_ctx *ctx, double alpha, const sbm_cbc *A, double beta,
                          const sbm_cbc *B, sbm_cbc **C);

    /* block SpGEMM */
    sbm_status (*gemm_plan)(sbm_ctx *ctx, sbm_op op_a, const sbm_cbc *A, sbm_op op_b,
                            const sbm_cbc *B, const sbm_cbc *U, unsigned flags,
                            sbm_gemm_plan **plan, sbm_cbc **C);
    sbm_status (*gemm_execute)(sbm_ctx *ctx, const sbm_gemm_plan *plan, double alpha,
                               const sbm_cbc *A, const sbm_cbc *B, const sbm_cbc *U, sbm_cbc *C);
    void (*gemm_plan_destroy)(sbm_gemm_plan *plan);

    /* block-diagonal, SpMV, SpMM */
    sbm_status (*bdiag_inverse)(sbm_ctx *ctx, const sbm_cbc *D, sbm_cbc *Dinv);
    sbm_status (*bdiag_scale)(sbm_ctx *ctx, sbm_side side, const sbm_cbc *D, const sbm_cbc *A,
                              sbm_cbc *B);
    sbm_status (*cbc_spmv)(sbm_ctx *ctx, sbm_op op, double alpha, const sbm_cbc *A,
                           const double *x, double beta, double *y);
    sbm_status (*csr_spmv)(sbm_ctx *ctx, double alpha, const sbm_csr *A, const double *x,
                           double beta, double *y);
    sbm_status (*csr_spmm)(sbm_ctx *ctx, double alpha, const sbm_csr *A, int64_t ncols,
                           sbm_layout layout, const double *B, int64_t ldb, double beta, double *C,
                           int64_t ldc);

    /* scalar SpGEMM */
    sbm_status (*csr_gemm_plan)(sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B,
                                sbm_csr_plan **plan, sbm_csr **C);
    sbm_status (*csr_gemm_execute)(sbm_ctx *ctx, const sbm_csr_plan *plan, const sbm_csr *A,
                                   const sbm_csr *B, sbm_csr *C);
    void (*csr_gemm_plan_destroy)(sbm_csr_plan *plan);
    /* optional one-shot C = A*B (sbm_csr_gemm); without it, plan, execute and destroy */
    sbm_status (*csr_gemm)(sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B, sbm_csr **C);

    /* CSR SpMV plans (src/core/spmv_plan.c); plans start with sbm__spmv_plan_base */
    sbm_status (*csr_spmv_plan)(sbm_ctx *ctx, const sbm_csr *A, sbm_spmv_format format,
                                sbm_spmv_plan **plan);
    sbm_status (*csr_spmv_plan_update)(sbm_ctx *ctx, sbm_spmv_plan *plan, const sbm_csr *A);
    sbm_status (*csr_spmv_plan_execute)(sbm_ctx *ctx, const sbm_spmv_plan *plan, double alpha,
                                        const double *x, double beta, double *y);
    void (*spmv_plan_destroy)(sbm_spmv_plan *plan);

    /* pattern fingerprints (see sbm__hash_*_pattern_host), for plan checks */
    sbm_status (*cbc_pattern_hash)(sbm_ctx *ctx, const sbm_cbc *A, uint64_t *hash);
    sbm_status (*csr_pattern_hash)(sbm_ctx *ctx, const sbm_csr *A, uint64_t *hash);

    /* vectors of n >= 1 doubles in the backend's memory (solvers keep theirs there); dot sums in
     * an order fixed by n alone and writes the result to host memory */
    sbm_status (*vec_dot)(sbm_ctx *ctx, int64_t n, const double *x, const double *y,
                          double *h_dot);
    sbm_status (*vec_axpy)(sbm_ctx *ctx, int64_t n, double a, const double *x, double *y);
    sbm_status (*vec_xpay)(sbm_ctx *ctx, int64_t n, const double *x, double a, double *y);
    sbm_status (*vec_scale)(sbm_ctx *ctx, int64_t n, double a, double *x);
    /* *h_max = max |x[i]| (0 for n = 0; NaN if any entry is NaN) */
    sbm_status (*vec_amax)(sbm_ctx *ctx, int64_t n, const double *x, double *h_max);

    /* sparse block Cholesky numeric phase (symbolic analysis by src/solve/, chol_internal.h).
     * chol_factor assembles A (upper block triangle, the planned pattern) plus the damping into
     * the fronts and factors them; when a pivot is not positive (or not finite) it returns
     * SBM_ERR_NOT_POSITIVE_DEFINITE *without* a message and sets *failed to the new block
     * column where it happened (the front end names it). chol_solve: X = (LL^T)^-1 B in A's
     * numbering, B and X in the backend's memory, X may be B. */
    sbm_status (*chol_numeric_create)(sbm_ctx *ctx, const struct sbm__chol_symbolic *sym,
                                      struct sbm__chol_numeric **num);
    sbm_status (*chol_factor)(sbm_ctx *ctx, const struct sbm__chol_symbolic *sym,
                              struct sbm__chol_numeric *num, const sbm_cbc *A,
                              int damping /* sbm_damping */, double lambda, int64_t *failed);
    sbm_status (*chol_solve)(sbm_ctx *ctx, const struct sbm__chol_symbolic *sym,
                             const struct sbm__chol_numeric *num, int64_t nrhs, const double *B,
                             int64_t ldb, double *X, int64_t ldx);
    void (*chol_numeric_destroy)(struct sbm__chol_numeric *num);

    /* ba-lin: bundle-adjustment linearisation (struct sbm__ba_model above). ba_linearize: at
     * params (nc*9 + np*3), residuals and Jacobians with Ceres' loss correction, U, V, W, g, D
     * and the result's scalars (one copy to the host). ba_cost: *h_cost = 0.5 sum rho(|r_k|^2)
     * (+inf when a prediction is not finite). ba_damp: out = und with every diagonal entry d
     * of its nblocks b x b blocks replaced by d + lambda*clamp(d). lm_predicted (BA and SLAM's
     * Levenberg-Marquardt): *h_pred = 0.5 sum step_i (lambda D_i step_i + gsign g_i) over n
     * entries (fixed order), the decrease the damped model predicts (gsign +1 when g is -J^T r as
     * in BA, -1 when it is the gradient J^T Omega e as SLAM's b). */
    sbm_status (*ba_linearize)(sbm_ctx *ctx, const sbm__ba_model *m, const double *params,
                               const sbm__ba_lin_out *out, sbm__ba_lin_result *res);
    sbm_status (*ba_cost)(sbm_ctx *ctx, const sbm__ba_model *m, const double *params,
                          double *h_cost);
    sbm_status (*ba_damp)(sbm_ctx *ctx, int64_t nblocks, int b, double lambda, const double *und,
                          double *out);
    sbm_status (*lm_predicted)(sbm_ctx *ctx, int64_t n, double lambda, const double *D,
                               double gsign, const double *g, const double *step,
                               double *h_pred);

    /* ba-solve: the device-resident BA iteration (kernels/cpu/ba/cpu_ba_solve.c,
     * kernels/cuda/ba/cuda_ba_solve.cu). */
    /* Block diagonal of S = U - Y W^T (Y and W: one pattern, nc x np blocks of p x q; U upper
     * block triangle, nc x nc blocks of p x p) into D (nc x nc, block diagonal, every diagonal
     * block stored): D_i = U_ii - sum over the blocks k of W's block row i of Y_k W_k^T, summed
     * in the order of the row list. udiag (nc): the index of U's block (i, i), or -1 (zero);
     * wrow_ptr (nc+1) and wrow_blk (W's nnzb): W's block indices row by row, increasing block
     * column. All in the backend's memory. */
    sbm_status (*ba_schur_diagonal)(sbm_ctx *ctx, const sbm_cbc *U, const int64_t *udiag,
                                    const sbm_cbc *Y, const sbm_cbc *W, const int64_t *wrow_ptr,
                                    const int64_t *wrow_blk, sbm_cbc *D);
    /* x = A^-1 b by a dense Cholesky for symmetric A given by its upper block triangle (square,
     * square blocks, n = nbr*r >= 1 scalars, checked by the front end); b and x (n) in the
     * backend's memory, x may be b. A pivot that is not positive (or not finite) returns
     * SBM_ERR_NOT_POSITIVE_DEFINITE *without* a message, *failed the 0-based scalar column
     * (-1 otherwise). Only that word crosses to the host. */
    sbm_status (*dense_spd_solve)(sbm_ctx *ctx, const sbm_cbc *A, const double *b, double *x,
                                  int64_t *failed);
    /* ---- slam-gpu: pose-graph SLAM iterations in the backend's memory (kernels/cpu/slam/cpu_slam.c,
     * kernels/cuda/slam/cuda_slam.cu; used by src/slam). Each output belongs to one edge, slot or
     * column, so the results do not depend on the thread count. ---- */
    /* Edge k at the poses x: rho[k] = rho(e^T Omega e) of E's loss; with w non-NULL also e and
     * w = rho' Omega e (d per edge), J's blocks at E->blk, and (omega non-NULL) the effective
     * information Omega_eff per edge (blocks/sbm_pose_edge.h). */
    sbm_status (*slam_linearize)(sbm_ctx *ctx, const sbm__slam_edges *E, const double *x,
                                 double *rho, double *e, double *w, double *J, double *omega);
    /* y[slot j] = x[slot j] (+) alpha dx[d j .. d j + d) for the free slots j < nfree (g2o's
     * increments: SE2 adds and normalises the angle, SE3 sbm__se3_oplus); other slots untouched. */
    sbm_status (*slam_oplus)(sbm_ctx *ctx, int dim, int64_t nfree, double alpha, const double *dx,
                             const double *x, double *y);
    /* The damping scale of the diagonal of nb d x d blocks stored at value offsets pos[j] of V
     * (-1: none, read as 0): D[d j + a] = sbm_blk_damp_scale(V[pos[j] + a (d + 1)]) (sbm_damp.h). */
    sbm_status (*slam_diag_get)(sbm_ctx *ctx, int64_t nb, int d, const int64_t *pos,
                                const double *V, double *D);
    /* V[pos[j] + a (d + 1)] = L[pos[j] + a (d + 1)] + lambda D[d j + a] (D NULL: lambda) where
     * pos[j] >= 0 (V a copy of L with a damped diagonal; the rest of V is left); with blocks
     * non-NULL (every pos[j] >= 0) also blocks[d d j ..] = V's block at pos[j], whole (PCG's
     * block Jacobi); *h_bad is the first j whose damped diagonal is not finite, -1 if none. */
    sbm_status (*slam_diag_add)(sbm_ctx *ctx, int64_t nb, int d, const int64_t *pos, double lambda,
                                const double *D, const double *L, double *V, double *blocks,
                                int64_t *h_bad);
} sbm__backend_ops;

/* Plans start with this header so the front end can check and dispatch them. */
typedef struct sbm__plan_header {
    sbm_backend backend;         /* backend that made the plan */
    int device;                  /* its device */
    const sbm__backend_ops *ops; /* for destroy */
    uint64_t pattern_a;          /* pattern ids of the operands the plan was made with */
    uint64_t pattern_b;
    uint64_t pattern_u;          /* 0 if U was NULL */
    uint64_t pattern_c;          /* the C the plan created */
    uint64_t hash_a;             /* pattern fingerprints, to accept equal patterns in new objects */
    uint64_t hash_b;
    uint64_t hash_u;
    sbm_gemm_plan_info info;     /* block SpGEMM plans: statistics, filled by the backend */
} sbm__plan_header;

/* SpMV plans start with this; the backend's state follows. The front end fills h, m, n, nnz;
 * the backend fills format (never AUTO). */
typedef struct sbm__spmv_plan_base {
    sbm__plan_header h;
    sbm_spmv_format format; /* the format stored */
    int64_t m, n, nnz;      /* A's shape and entries */
} sbm__spmv_plan_base;

/* Padding limit of the ELL and DIA SpMV formats, the same on every backend (so a plan that
 * works on one works on all): a conversion that would store more than
 * SBM__SPMV_MAX_FILL * nnz + SBM__SPMV_FILL_SLACK slots (ELL: rows x longest row; DIA: rows x
 * occupied diagonals) is refused with SBM_ERR_INVALID_ARGUMENT and the measured fill
 * (src/core/spmv_plan.c). width is the longest row (ELL) or the number of diagonals (DIA). */
#define SBM__SPMV_MAX_FILL 3
#define SBM__SPMV_FILL_SLACK 4096
sbm_status sbm__spmv_check_fill(sbm_ctx *ctx, sbm_spmv_format format, int64_t m, int64_t nnz,
                                int64_t width);

/* Flag bit sbm_cbc_gemm adds for gemm_plan (never a user flag): the plan will be executed exactly
 * once, right away, with the same operands, then destroyed. A backend may skip what only reuse
 * needs, and leave C's values for that execute to write; it may also ignore the bit. */
#define SBM__GEMM_ONCE 0x80000000u

extern const sbm__backend_ops sbm__cpu_ops;
/* Inverse of one SPD n x n block on the host, for the solvers (kernels/cpu/bdiag/cpu_bdiag.c, by
 * sbm_blk_spd_inverse: the library's one Cholesky inverse). a (column-major, lower triangle
 * read) is overwritten by its Cholesky factor; inv gets the full inverse. @return 0, or -1 if
 * a is not numerically SPD or the inverse is not finite. */
int sbm__host_spd_inverse(int n, double *a, double *inv);
/* NULL when the library is built without CUDA (defined in kernels/cuda/ with CUDA, src/core/context.c without). */
const sbm__backend_ops *sbm__cuda_ops(void);
/* Number of CUDA devices (0 without CUDA); same split as sbm__cuda_ops. */
int sbm__cuda_device_count(void);
/* CUDA graph executables alive in the process (0 without CUDA); same split as sbm__cuda_ops. */
int64_t sbm__cuda_graphs_live(void);

#ifdef __cplusplus
}
#endif

#endif /* SBM_CORE_BACKEND_H */
