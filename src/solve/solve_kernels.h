/* SPDX-License-Identifier: BSD-3-Clause */
/* The solve layer's kernel table: the sparse block Cholesky's numeric phase and the dense
 * Cholesky solve (kernels/{cpu,cuda}/chol) and Levenberg-Marquardt's predicted decrease
 * (kernels/{cpu,cuda}/lm), which BA's and SLAM's iterations share. One list, expanded as the
 * core table is (core_backend.h): the struct, the prototypes of sbm__cpu_<name> and
 * sbm__cuda_<name>, and the two tables (kernels/cpu/chol/cpu_solve_table.c,
 * kernels/cuda/chol/cuda_solve_table.cu). sbm__solve_kernels_of finds a context's. */
#ifndef SBM_SOLVE_KERNELS_H
#define SBM_SOLVE_KERNELS_H

#include "chol_internal.h"
#include "sbm_internal.h"
#include "sbm_solve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* chol_*: the numeric phase of the sparse block Cholesky (symbolic analysis by src/solve/,
 * chol_internal.h). chol_factor assembles A (upper block triangle, the planned pattern) plus the
 * damping into the fronts and factors them; when a pivot is not positive (or not finite) it
 * returns SBM_ERR_NOT_POSITIVE_DEFINITE *without* a message and sets *failed to the new block
 * column where it happened (the front end names it). chol_solve: X = (LL^T)^-1 B in A's
 * numbering, B and X in the backend's memory, X may be B.
 * chol_selinv: the selected inverse Z = (LL^T)^-1 on the pattern of L (the new numbering), into
 * the host array Z of L_ptr[nsuper] doubles laid out as the panels (chol_internal.h) with the
 * top k_s b x k_s b part of each panel full and exactly symmetric; needs a factor (checked by
 * the front end). The CPU backend computes it with sbm__chol_selinv_host; the CUDA backend
 * copies its factor to the host and runs the same routine there.
 * dense_spd_solve: x = A^-1 b by a dense Cholesky for symmetric A given by its upper block
 * triangle (square, square blocks, n = nbr*r >= 1 scalars, checked by the front end); b and x
 * (n) in the backend's memory, x may be b. A pivot that is not positive (or not finite) returns
 * SBM_ERR_NOT_POSITIVE_DEFINITE *without* a message, *failed the 0-based scalar column (-1
 * otherwise). Only that word crosses to the host.
 * lm_predicted (BA's and SLAM's Levenberg-Marquardt): *h_pred = 0.5 sum step_i (lambda D_i
 * step_i + gsign g_i) over n entries (fixed order), the decrease the damped model predicts
 * (gsign +1 when g is -J^T r as in BA, -1 when it is the gradient J^T Omega e as SLAM's b). */
#define SBM__SOLVE_KERNELS(X)                                                                      \
    X(sbm_status, chol_numeric_create,                                                             \
      (sbm_ctx *ctx, const sbm__chol_symbolic *sym, sbm__chol_numeric **num))                      \
    X(sbm_status, chol_factor,                                                                     \
      (sbm_ctx *ctx, const sbm__chol_symbolic *sym, sbm__chol_numeric *num, const sbm_cbc *A,      \
       sbm_damping damping, double lambda, int64_t *failed))                                       \
    X(sbm_status, chol_solve,                                                                      \
      (sbm_ctx *ctx, const sbm__chol_symbolic *sym, const sbm__chol_numeric *num, int64_t nrhs,    \
       const double *B, int64_t ldb, double *X, int64_t ldx))                                      \
    X(sbm_status, chol_selinv,                                                                     \
      (sbm_ctx *ctx, const sbm__chol_symbolic *sym, const sbm__chol_numeric *num, double *Z))      \
    X(void, chol_numeric_destroy, (sbm__chol_numeric *num))                                        \
    X(sbm_status, dense_spd_solve,                                                                 \
      (sbm_ctx *ctx, const sbm_cbc *A, const double *b, double *x, int64_t *failed))               \
    X(sbm_status, lm_predicted,                                                                    \
      (sbm_ctx *ctx, int64_t n, double lambda, const double *D, double gsign, const double *g,     \
       const double *step, double *h_pred))

/* The table, both backends' prototypes, the CPU table, the CUDA getter (NULL without CUDA) and
 * sbm__solve_kernels_of(ctx), the table of ctx's backend (core_backend.h). */
SBM__DECLARE_KERNEL_TABLE(solve, SBM__SOLVE_KERNELS)
/* The Takahashi recurrences on the host (kernels/cpu/chol/cpu_chol_inv.c): Z as chol_selinv
 * gives it from the host factor panels L (layout of chol_internal.h). Both backends' chol_selinv
 * call it. @return SBM_ERR_OUT_OF_MEMORY (message set) if its workspace cannot be had. */
sbm_status sbm__chol_selinv_host(sbm_ctx *ctx, const sbm__chol_symbolic *sym, const double *L,
                                 double *Z);
/* White-box tests only (tests/test_chol_errors.c: an operation a backend lacks): contexts of
 * backend b find k instead of their backend's table, until k is NULL again. Not thread-safe. */
void sbm__solve_kernels_replace(sbm_backend b, const sbm__solve_kernels *k);

#ifdef __cplusplus
}
#endif

#endif /* SBM_SOLVE_KERNELS_H */
