/* SPDX-License-Identifier: BSD-3-Clause */
/* Block SpGEMM on the CPU, shared by its two phases (cpu_gemm_plan.c, cpu_gemm_execute.c): C = U + alpha*op(A)*op(B) on CBC matrices.
 *
 * Gustavson's algorithm over block columns (CSparse cs_multiply; Davis, "Direct Methods for Sparse
 * Linear Systems", 2006, section 2.8), split into a symbolic plan and a numeric execute:
 *
 *   plan     op(A) and op(B) as block-CSC patterns (a transposed operand gets its transposed
 *            pattern and a block permutation: execute re-transposes A's values, and reads B's
 *            blocks in place through the permutation); for each column j of C the union of U's
 *            rows and the rows of every product op(A)_ik*op(B)_kj, sorted (column_rows); for
 *            every product, in execution order, the position of its output block within C's
 *            column j ("positions" mode). When those
 *            positions would not fit the context's memory budget, the plan keeps only a row ->
 *            position map that execute refills per column ("scatter" mode); both modes sum in the
 *            same order.
 *   execute  for each column j: zero C's column, for each op(B) block (k, j), for each op(A) block
 *            (i, k): C_ij += op(A)_ik * op(B)_kj with a fixed-size block kernel; then scale by
 *            alpha and add U. No pattern work and no allocation.
 *
 * The one-shot sbm_cbc_gemm asks for a plan with SBM__GEMM_ONCE: it is executed once, at once,
 * so the plan skips what only reuse pays for (per-product positions: scatter mode; zeroing C's
 * values, which that execute overwrites: they are only mapped in, see prefault). Same kernels,
 * same order: bitwise the same C as plan + execute.
 *
 * Products are summed in the fixed order (op(B) block, then op(A) block), so results are
 * deterministic. A plan holds scratch (transposed values, the scatter map): one plan must not be
 * executed by two threads at once. */
#ifndef SBM_CPU_GEMM_H
#define SBM_CPU_GEMM_H

#include "cpu_backend.h"

typedef struct cpu_gemm_plan {
    sbm__plan_header h;   /* first: the front end reads it */
    sbm_allocator al;     /* allocator of the arrays below (the CPU context's) */
    sbm_op op_a;          /* operations the plan was made for */
    sbm_op op_b;
    unsigned flags;       /* SBM_GEMM_UPPER or 0 */
    int64_t nbr;          /* C is nbr x nbc blocks of r x c; the inner dimension is nbk blocks of k */
    int64_t nbk;
    int64_t nbc;
    int r;
    int k;
    int c;
    int64_t a_nnzb;       /* stored blocks of A, B, U */
    int64_t b_nnzb;
    int64_t u_nnzb;
    int64_t products;     /* block products per execute */
    int64_t *at_ptr;      /* op_a == T: column pointers of A^T (size nbk+1) */
    int32_t *at_ind;      /* op_a == T: rows of A^T (size a_nnzb) */
    int64_t *at_perm;     /* op_a == T: block t of A^T is block at_perm[t] of A, transposed */
    double *at_val;       /* op_a == T: values of A^T, refilled by each execute */
    int64_t *bt_ptr;      /* op_b == T: the same for B^T (size nbc+1); execute reads block */
    int32_t *bt_ind;      /* bt_perm[t] of B in place (each is used once per execute, so a */
    int64_t *bt_perm;     /* transposed copy would cost more than it saves) */
    int64_t *a_end;       /* UPPER: per op(B) block (k, j), end of the op(A) blocks of column k with row <= j */
    int32_t *pos;         /* positions mode: per product, its block position within C's column */
    int32_t *upos;        /* per U block, its block position within C's column */
    int32_t *slot;        /* scatter mode: block row -> position within the current column (size nbr) */
    size_t bytes;         /* memory held */
} cpu_gemm_plan;

#endif /* SBM_CPU_GEMM_H */
