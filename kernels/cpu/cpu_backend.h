/* Kernel declarations of the CPU backend. Each file kernels/cpu/<component>/cpu_*.c implements one group; the
 * table in kernels/cpu/cpu_backend.c collects them. Arguments are already checked by the front end. */
#ifndef SBM_CPU_BACKEND_H
#define SBM_CPU_BACKEND_H

#include "sbm_internal.h"

/* kernels/cpu/matrix/cpu_matrix.c: validation, transpose, conversions, add */
sbm_status sbm__cpu_cbc_validate(sbm_ctx *ctx, const char *arg, const sbm_cbc *A, int check_finite);
sbm_status sbm__cpu_csr_validate(sbm_ctx *ctx, const char *arg, const sbm_csr *A, int check_finite);
sbm_status sbm__cpu_cbc_transpose(sbm_ctx *ctx, const sbm_cbc *A, sbm_cbc **AT);
sbm_status sbm__cpu_csr_transpose(sbm_ctx *ctx, const sbm_csr *A, sbm_csr **AT);
sbm_status sbm__cpu_cbc_to_csr(sbm_ctx *ctx, const sbm_cbc *A, sbm_csr **B);
sbm_status sbm__cpu_csr_to_cbc(sbm_ctx *ctx, const sbm_csr *A, int r, int c, sbm_cbc **B);
sbm_status sbm__cpu_cbc_to_bsr(sbm_ctx *ctx, const sbm_cbc *A, sbm_layout layout, int64_t *rowptr,
                               int32_t *colind, double *values);
sbm_status sbm__cpu_cbc_add(sbm_ctx *ctx, double alpha, const sbm_cbc *A, double beta,
                            const sbm_cbc *B, sbm_cbc **C);
sbm_status sbm__cpu_cbc_pattern_hash(sbm_ctx *ctx, const sbm_cbc *A, uint64_t *hash);
sbm_status sbm__cpu_csr_pattern_hash(sbm_ctx *ctx, const sbm_csr *A, uint64_t *hash);

/* kernels/cpu/gemm/cpu_gemm_plan.c, cpu_gemm_execute.c: block SpGEMM (Gustavson over block columns) */
sbm_status sbm__cpu_gemm_plan(sbm_ctx *ctx, sbm_op op_a, const sbm_cbc *A, sbm_op op_b,
                              const sbm_cbc *B, const sbm_cbc *U, unsigned flags,
                              sbm_gemm_plan **plan, sbm_cbc **C);
sbm_status sbm__cpu_gemm_execute(sbm_ctx *ctx, const sbm_gemm_plan *plan, double alpha,
                                 const sbm_cbc *A, const sbm_cbc *B, const sbm_cbc *U, sbm_cbc *C);
void sbm__cpu_gemm_plan_destroy(sbm_gemm_plan *plan);

/* kernels/cpu/bdiag/cpu_bdiag.c: block-diagonal inverse and scaling; kernels/cpu/spmv/cpu_spmv.c: block SpMV */
sbm_status sbm__cpu_bdiag_inverse(sbm_ctx *ctx, const sbm_cbc *D, sbm_cbc *Dinv);
sbm_status sbm__cpu_bdiag_scale(sbm_ctx *ctx, sbm_side side, const sbm_cbc *D, const sbm_cbc *A,
                                sbm_cbc *B);
sbm_status sbm__cpu_cbc_spmv(sbm_ctx *ctx, sbm_op op, double alpha, const sbm_cbc *A,
                             const double *x, double beta, double *y);

/* kernels/cpu/csr_{spmv,spmm,gemm}/: scalar CSR SpMV, SpMM, SpGEMM */
sbm_status sbm__cpu_csr_spmv(sbm_ctx *ctx, double alpha, const sbm_csr *A, const double *x,
                             double beta, double *y);
sbm_status sbm__cpu_csr_spmm(sbm_ctx *ctx, double alpha, const sbm_csr *A, int64_t ncols,
                             sbm_layout layout, const double *B, int64_t ldb, double beta,
                             double *C, int64_t ldc);
sbm_status sbm__cpu_csr_gemm_plan(sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B,
                                  sbm_csr_plan **plan, sbm_csr **C);
sbm_status sbm__cpu_csr_gemm_execute(sbm_ctx *ctx, const sbm_csr_plan *plan,
                                     const sbm_csr *A, const sbm_csr *B, sbm_csr *C);
void sbm__cpu_csr_gemm_plan_destroy(sbm_csr_plan *plan);

/* kernels/cpu/csr_spmv/cpu_csr_spmv_plan.c: SpMV plans (a CSR copy of A, multiplied by sbm__cpu_csr_spmv) */
sbm_status sbm__cpu_csr_spmv_plan(sbm_ctx *ctx, const sbm_csr *A, sbm_spmv_format format,
                                  sbm_spmv_plan **plan);
sbm_status sbm__cpu_csr_spmv_plan_update(sbm_ctx *ctx, sbm_spmv_plan *plan, const sbm_csr *A);
sbm_status sbm__cpu_csr_spmv_plan_execute(sbm_ctx *ctx, const sbm_spmv_plan *plan, double alpha,
                                          const double *x, double beta, double *y);
void sbm__cpu_spmv_plan_destroy(sbm_spmv_plan *plan);

/* kernels/cpu/vector/cpu_vector.c: vector operations of the solvers */
sbm_status sbm__cpu_vec_dot(sbm_ctx *ctx, int64_t n, const double *x, const double *y,
                            double *h_dot);
sbm_status sbm__cpu_vec_axpy(sbm_ctx *ctx, int64_t n, double a, const double *x, double *y);
sbm_status sbm__cpu_vec_xpay(sbm_ctx *ctx, int64_t n, const double *x, double a, double *y);
sbm_status sbm__cpu_vec_scale(sbm_ctx *ctx, int64_t n, double a, double *x);
sbm_status sbm__cpu_vec_amax(sbm_ctx *ctx, int64_t n, const double *x, double *h_max);

/* Threads (cpu_parallel.c): fn(data, begin, end) over fixed contiguous pieces of [0, n), one
 * per thread, at least min_per_thread items each (fewer threads for small n); returns when all
 * are done. Deterministic for kernels whose outputs each belong to one item. */
typedef void (*sbm__cpu_range_fn)(void *data, int64_t begin, int64_t end);
void sbm__cpu_parallel_for(int64_t n, int64_t min_per_thread, sbm__cpu_range_fn fn, void *data);
/* Threads a call may use: SBM_NUM_THREADS, else the online cores (1 to 64). */
int sbm__cpu_threads(void);

/* kernels/cpu/chol/cpu_chol.c: numeric phase of the sparse block Cholesky (multifrontal, LAPACKE/BLAS) */
struct sbm__chol_symbolic;
struct sbm__chol_numeric;
sbm_status sbm__cpu_chol_numeric_create(sbm_ctx *ctx, const struct sbm__chol_symbolic *sym,
                                        struct sbm__chol_numeric **num);
sbm_status sbm__cpu_chol_factor(sbm_ctx *ctx, const struct sbm__chol_symbolic *sym,
                                struct sbm__chol_numeric *num, const sbm_cbc *A, int damping,
                                double lambda, int64_t *failed);
sbm_status sbm__cpu_chol_solve(sbm_ctx *ctx, const struct sbm__chol_symbolic *sym,
                               const struct sbm__chol_numeric *num, int64_t nrhs,
                               const double *B, int64_t ldb, double *X, int64_t ldx);
void sbm__cpu_chol_numeric_destroy(struct sbm__chol_numeric *num);

/* ba-lin: kernels/cpu/ba/cpu_ba.c: the BA linearisation (sbm__ba_model), threaded */
sbm_status sbm__cpu_ba_linearize(sbm_ctx *ctx, const sbm__ba_model *m, const double *params,
                                 const sbm__ba_lin_out *out, sbm__ba_lin_result *res);
sbm_status sbm__cpu_ba_cost(sbm_ctx *ctx, const sbm__ba_model *m, const double *params,
                            double *h_cost);
sbm_status sbm__cpu_ba_damp(sbm_ctx *ctx, int64_t nblocks, int b, double lambda,
                            const double *und, double *out);
sbm_status sbm__cpu_lm_predicted(sbm_ctx *ctx, int64_t n, double lambda, const double *D,
                                 double gsign, const double *g, const double *step,
                                 double *h_pred);

/* kernels/cpu/ba/cpu_ba_solve.c: the BA iteration's Schur-Jacobi blocks and dense Cholesky (ba-solve) */
sbm_status sbm__cpu_ba_schur_diagonal(sbm_ctx *ctx, const sbm_cbc *U, const int64_t *udiag,
                                      const sbm_cbc *Y, const sbm_cbc *W, const int64_t *wrow_ptr,
                                      const int64_t *wrow_blk, sbm_cbc *D);
sbm_status sbm__cpu_dense_spd_solve(sbm_ctx *ctx, const sbm_cbc *A, const double *b, double *x,
                                    int64_t *failed);

/* slam-gpu: kernels/cpu/slam/cpu_slam.c: pose-graph SLAM iterations (sbm__backend_ops' slam_* ops),
 * threaded over edges and slots with sbm__cpu_parallel_for */
sbm_status sbm__cpu_slam_linearize(sbm_ctx *ctx, const sbm__slam_edges *E, const double *x,
                                   double *rho, double *e, double *w, double *J, double *omega);
sbm_status sbm__cpu_slam_oplus(sbm_ctx *ctx, int dim, int64_t nfree, double alpha,
                               const double *dx, const double *x, double *y);
sbm_status sbm__cpu_slam_diag_get(sbm_ctx *ctx, int64_t nb, int d, const int64_t *pos,
                                  const double *V, double *D);
sbm_status sbm__cpu_slam_diag_add(sbm_ctx *ctx, int64_t nb, int d, const int64_t *pos,
                                  double lambda, const double *D, const double *L, double *V,
                                  double *blocks, int64_t *h_bad);

#endif /* SBM_CPU_BACKEND_H */
