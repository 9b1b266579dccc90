/* SPDX-License-Identifier: BSD-3-Clause */
/* The symbolic factorisation of the sparse block Cholesky, shared by the front end (src/solve/,
 * which computes it) and the backends (kernels/cpu/chol/, kernels/cuda/chol/, which factor and
 * solve from it; their operations are in the solve layer's table, solve_kernels.h).
 *
 * Multifrontal layout. Block columns are renumbered by perm (new k = old perm[k]). A supernode s
 * owns the consecutive new block columns sup_col[s] .. sup_col[s+1]-1 (k_s of them). Its front
 * has m_s block rows, sup_rows[sup_rowptr[s] .. sup_rowptr[s+1]-1], ascending: first its own
 * k_s columns, then the m_s - k_s rows below them where L has nonzero blocks. In scalars the
 * front is (m_s b) x (m_s b); its first k_s b columns, rows 0 .. m_s b - 1, are the panel of L
 * that the factorisation keeps (column-major, leading dimension m_s b, at L_ptr[s] in the
 * factor's values); the lower-right ((m_s - k_s) b)^2 part is the update matrix passed to the
 * parent (extend-add). Supernodes are numbered in a postorder: every child before its parent.
 *
 * Conventions both backends follow (decided with the first implementation, src/solve/chol_*.c):
 *  - perm is the fill-reducing ordering (AMD or natural) composed with a postorder of the block
 *    elimination tree, so each supernode's columns are consecutive. sup_parent[s] > s; the
 *    parent is the supernode of the first update row of s (sup_rows[sup_rowptr[s] + k_s]).
 *  - The numeric phase computes L L^T = A + D, where D is the damping of A's own diagonal: for
 *    SBM_DAMPING_IDENTITY every diagonal scalar gets + lambda; for SBM_DAMPING_DIAGONAL a
 *    diagonal scalar d of A (0 where a block column has no stored diagonal block) gets
 *    + lambda * sbm_blk_damp_scale(d) (sbm_blk_marquardt, blocks/sbm_damp.h). D is taken from A's
 *    values, never from the front after the children's updates are added.
 *  - A panel is zeroed, then A is assembled into it (a_dst), then the children's updates are
 *    added, then it is factored: dpotrf on the top k_s b x k_s b (lower), a triangular solve for
 *    the rows below, and update = -(below)(below)^T (lower triangle). Only the lower triangle of
 *    each panel's top k_s b x k_s b part is defined after the factorisation (the strictly upper
 *    part is never read; its contents are unspecified). Likewise only the lower triangle of an
 *    update matrix's diagonal blocks is defined and added by the extend-add.
 *  - *failed (chol_factor) is the new block column of the pivot that failed: sup_col[s] + i / b
 *    for the scalar pivot i (0-based) of supernode s's dpotrf.
 *  - For nb == 0 every [x+1] array holds one 0, nsuper = nlevels = 0, the others are NULL or
 *    empty, max_front = max_update = 0, flops = 0.
 */
#ifndef SBM_CHOL_INTERNAL_H
#define SBM_CHOL_INTERNAL_H

#include <stdint.h>

#include "sbm_solve.h" /* sbm_damping */

typedef struct sbm__chol_symbolic {
    int64_t nb;           /* block columns of A */
    int b;                /* block size */
    int64_t n;            /* nb * b */
    int64_t *perm;        /* [nb] new -> old block column */
    int64_t *iperm;       /* [nb] old -> new */

    int64_t nsuper;       /* supernodes, in postorder */
    int64_t *sup_col;     /* [nsuper+1] first new block column of each supernode */
    int64_t *sup_rowptr;  /* [nsuper+1] into sup_rows */
    int64_t *sup_rows;    /* new block rows of each front, ascending (own columns first) */
    int64_t *sup_parent;  /* [nsuper] parent supernode, -1 for a root */
    int64_t *col_sup;     /* [nb] supernode of each new block column */
    int64_t *L_ptr;       /* [nsuper+1] offset (doubles) of each panel in the factor values;
                           * L_ptr[nsuper] = doubles of the whole factor */

    /* assembly of A (upper block triangle, nnzb_A stored blocks, A's storage order): block t
     * adds into the panel entry at a_dst[t] (the destination's (0,0) scalar, an offset in the
     * factor values; the destination block is b x b with leading dimension m_s b of its
     * supernode a_sup[t]); a_trans[t] = 1 when the destination takes the block transposed
     * (the stored block lies above the diagonal after renumbering). Diagonal blocks are stored
     * whole; only their lower triangle is read.
     * For a stored block (i, j), i <= j in A's numbering, with new indices ni = iperm[i],
     * nj = iperm[j]: c = min(ni, nj), r = max(ni, nj), s = a_sup[t] = col_sup[c], p = position
     * of r in s's sup_rows (0-based from sup_rowptr[s]); a_dst[t] = L_ptr[s] +
     * (c - sup_col[s]) b (m_s b) + p b; a_trans[t] = (ni < nj). A diagonal block (i == j) has
     * a_trans 0 and lands on the diagonal block of column c (p = c - sup_col[s]). Every stored
     * block of A has an entry (A is checked to be upper block triangular first). */
    int64_t nnzb_A;
    int64_t *a_dst;       /* [nnzb_A] */
    int64_t *a_sup;       /* [nnzb_A] */
    uint8_t *a_trans;     /* [nnzb_A] */
    /* block columns of A without a stored diagonal block count as a zero diagonal block */

    /* extend-add: update block row u (0 .. m_s - k_s - 1) of supernode s lands at front block row
     * rel[rel_ptr[s] + u] of its parent (an index into the parent's sup_rows). rel is strictly
     * increasing within s. Block (u, v), u >= v, of the update goes to block (rel[u], rel[v]) of
     * the parent's front: into the parent's panel when rel[v] < k_parent, else into the parent's
     * update matrix at block (rel[u] - k_parent, rel[v] - k_parent). rel_ptr[s+1] - rel_ptr[s]
     * = m_s - k_s (0 for a root). */
    int64_t *rel_ptr;     /* [nsuper+1] */
    int64_t *rel;

    /* levels of the supernodal tree: a leaf has level 0, another node 1 + the largest level of
     * its children. The supernodes of one level are independent and may be factored together
     * (level_sup ascending within a level). */
    int64_t nlevels;
    int64_t *level_ptr;   /* [nlevels+1] into level_sup */
    int64_t *level_sup;   /* supernodes level by level */

    int64_t max_front;    /* largest m_s b */
    int64_t max_update;   /* largest (m_s - k_s) b */
    /* of one numeric factorisation, in scalars with k = k_s b, u = (m_s - k_s) b, summed over
     * the supernodes: k^3/3 (dpotrf) + u k^2 (dtrsm) + u^2 k (dsyrk, both triangles counted) */
    double flops;
    sbm_allocator alloc;  /* host allocator of every array above */
} sbm__chol_symbolic;

/* Backend numeric state (opaque to the front end). */
typedef struct sbm__chol_numeric sbm__chol_numeric;

#endif /* SBM_CHOL_INTERNAL_H */
