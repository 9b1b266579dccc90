/* SPDX-License-Identifier: BSD-3-Clause */
/* Symbolic analysis of the sparse block Cholesky (src/solve/chol_order.c, chol_symbolic.c):
 * from the pattern of A's upper block triangle to the multifrontal layout of chol_internal.h. */
#ifndef SBM_CHOL_SYMBOLIC_H
#define SBM_CHOL_SYMBOLIC_H

#include "chol_internal.h"
#include "sbm_internal.h"
#include "sbm_solve.h"

/* The symbolic structure for the host pattern (colptr, rowind) of A's upper block triangle (nb
 * block columns of b x b blocks, every stored block on or above the diagonal, checked by the
 * caller) with options o (checked). *sym is freed with sbm__chol_symbolic_free. */
sbm_status sbm__chol_analyse(sbm_ctx *ctx, int64_t nb, int b, const int64_t *colptr,
                             const int32_t *rowind, const sbm_chol_options *o,
                             sbm__chol_symbolic **sym);
void sbm__chol_symbolic_free(sbm__chol_symbolic *sym);
/* The symbolic structure of a plan (white-box tests). */
const sbm__chol_symbolic *sbm__chol_symbolic_of(const sbm_chol *chol);

/* ---- pieces of the analysis (chol_order.c) ---- */

/* n int64_t through a (failures recorded in ctx). */
int64_t *sbm__chol_ialloc(sbm_ctx *ctx, const sbm_allocator *a, int64_t n, const char *what);

/* perm[k] = block column of A eliminated k-th by AMD on the block graph of A + A^T. */
sbm_status sbm__chol_amd(sbm_ctx *ctx, const sbm_allocator *a, int64_t nb, const int64_t *colptr,
                         const int32_t *rowind, int64_t *perm);
/* The off-diagonal pattern of P A P^T (iperm: old -> new) as CSC: upper = 1 keeps each entry in
 * the column of its larger index (rows above the diagonal), upper = 0 in the column of its
 * smaller one (rows below). Rows within a column are not sorted. */
sbm_status sbm__chol_symperm(sbm_ctx *ctx, const sbm_allocator *a, int64_t nb,
                             const int64_t *colptr, const int32_t *rowind, const int64_t *iperm,
                             int upper, int64_t **cp, int64_t **ri);
/* Elimination tree of the symmetric matrix whose upper pattern is (cp, ri) (Liu's algorithm
 * with path compression); w: nb of workspace. */
void sbm__chol_etree(int64_t nb, const int64_t *cp, const int64_t *ri, int64_t *parent,
                     int64_t *w);
/* A postorder of the forest parent: post[k] = node visited k-th; w: 3 nb of workspace. */
void sbm__chol_postorder(int64_t nb, const int64_t *parent, int64_t *post, int64_t *w);
/* count[j] = block rows of column j of L, its diagonal included, from the upper pattern and a
 * postordered etree (row subtrees, O(|L|)); w: nb of workspace. */
void sbm__chol_colcounts(int64_t nb, const int64_t *cp, const int64_t *ri, const int64_t *parent,
                         int64_t *count, int64_t *w);

#endif /* SBM_CHOL_SYMBOLIC_H */
