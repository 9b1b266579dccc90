/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal entry points of the core's public operations, for calls from inside the library
 * (through SBM__INNER, src/core/core_errors.h): each is the public sbm_<op> less its SBM__ENTER
 * and the checks that the caller's operands make needless, and says what it assumes. The public
 * function checks its arguments and then calls the same code, so the results and the messages
 * are those of the public call. */
#ifndef SBM_CORE_OPS_H
#define SBM_CORE_OPS_H

#include "core_matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/* sbm_cbc_spmv (src/core/cbc_spmv.c): A a matrix of ctx, op SBM_OP_N or SBM_OP_T, x and y
 * non-NULL, of op(A)'s sizes and apart. */
sbm_status sbm__cbc_spmv(sbm_ctx *ctx, sbm_op op, double alpha, const sbm_cbc *A, const double *x,
                         double beta, double *y);
/* sbm_cbc_spmv's checks of A, op, x and y, for a caller that checks operands from its own
 * caller before a run of internal products with them (through SBM__INNER, for the message). */
sbm_status sbm__cbc_spmv_check(sbm_ctx *ctx, sbm_op op, const sbm_cbc *A, const double *x,
                               const double *y);
/* sbm_cbc_copy (src/core/cbc.c): src a matrix, dst non-NULL (set to NULL on failure). */
sbm_status sbm__cbc_copy(sbm_ctx *ctx, const sbm_cbc *src, sbm_cbc **dst);
/* sbm_cbc_gemm_execute (src/core/gemm.c): plan non-NULL; A, B, C and U (when given) matrices of
 * ctx. What ties the operands to the plan (its backend, U's presence, C apart from the inputs,
 * the patterns) is still checked: callers pass matrices that may have changed since the plan. */
sbm_status sbm__cbc_gemm_execute(sbm_ctx *ctx, const sbm_gemm_plan *plan, double alpha,
                                 const sbm_cbc *A, const sbm_cbc *B, const sbm_cbc *U,
                                 sbm_cbc *C);

/* Block-diagonal operations (src/core/bdiag.c). sbm_bdiag_inverse: D and Dinv matrices of ctx,
 * D block diagonal with every diagonal block stored, Dinv with D's pattern. */
sbm_status sbm__bdiag_inverse(sbm_ctx *ctx, const sbm_cbc *D, sbm_cbc *Dinv);
/* sbm_bdiag_scale: D, A and B matrices of ctx, side a side, B apart from D, D block diagonal
 * with blocks that fit A on that side. That B has A's pattern is still checked (a caller's B is
 * a copy of an A that may have been replaced since). */
sbm_status sbm__bdiag_scale(sbm_ctx *ctx, sbm_side side, const sbm_cbc *D, const sbm_cbc *A,
                            sbm_cbc *B);
/* Entries for nested calls (through SBM__NESTED) whose caller vouches only that D is block
 * diagonal (for the inverse: with every diagonal block stored), having made or checked it
 * itself: they skip the check that reads D's pattern, a download on a device backend, and run
 * the others. Messages name them as the public calls. */
sbm_status sbm__bdiag_inverse_checked(sbm_ctx *ctx, const sbm_cbc *D, sbm_cbc *Dinv);
sbm_status sbm__bdiag_scale_checked(sbm_ctx *ctx, sbm_side side, const sbm_cbc *D,
                                    const sbm_cbc *A, sbm_cbc *B);

#ifdef __cplusplus
}
#endif

#endif /* SBM_CORE_OPS_H */
