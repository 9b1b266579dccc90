/* slam-gpu: pose-graph SLAM iterations on the CUDA backend (src/cuda/cuda_slam.cu), the slam_*
 * ops of sbm__backend_ops. */
#ifndef SBM_CUDA_SLAM_CUH
#define SBM_CUDA_SLAM_CUH

#include "cuda_internal.cuh"

sbm_status sbm__cuda_slam_linearize(sbm_ctx *ctx, const sbm__slam_edges *E, const double *x,
                                    double *rho, double *e, double *w, double *J, double *omega);
sbm_status sbm__cuda_slam_oplus(sbm_ctx *ctx, int dim, int64_t nfree, double alpha,
                                const double *dx, const double *x, double *y);
sbm_status sbm__cuda_slam_diag_get(sbm_ctx *ctx, int64_t nb, int d, const int64_t *pos,
                                   const double *V, double lo, double hi, double *D);
sbm_status sbm__cuda_slam_diag_add(sbm_ctx *ctx, int64_t nb, int d, const int64_t *pos,
                                   double lambda, const double *D, const double *L, double *V,
                                   double *blocks, int64_t *h_bad);

#endif /* SBM_CUDA_SLAM_CUH */
