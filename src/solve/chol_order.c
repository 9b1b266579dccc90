/* SPDX-License-Identifier: BSD-3-Clause */
/* Ordering half of the symbolic analysis of the sparse block Cholesky: AMD on the block graph,
 * the permuted pattern, the elimination tree, its postorder and the column counts of L (the
 * algorithms of CSparse's cs_etree, cs_post and the row-subtree count, at block level). */
#include "chol_symbolic.h"

#include <inttypes.h>
#include <suitesparse/amd.h>

int64_t *sbm__chol_ialloc(sbm_ctx *ctx, const sbm_allocator *a, int64_t n, const char *what)
{
    return sbm__alloc_with(ctx, a, (size_t)(n > 0 ? n : 0), sizeof(int64_t), what);
}

sbm_status sbm__chol_amd(sbm_ctx *ctx, const sbm_allocator *a, int64_t nb, const int64_t *colptr,
                         const int32_t *rowind, int64_t *perm)
{
    const int64_t nnz = colptr[nb];
    SuiteSparse_long *Ap = sbm__alloc_with(ctx, a, (size_t)nb + 1, sizeof(SuiteSparse_long),
                                           "AMD column pointers");
    SuiteSparse_long *Ai = Ap ? sbm__alloc_with(ctx, a, (size_t)nnz, sizeof(SuiteSparse_long),
                                                "AMD row indices")
                              : NULL;
    SuiteSparse_long *P = Ai ? sbm__alloc_with(ctx, a, (size_t)nb, sizeof(SuiteSparse_long),
                                               "AMD permutation")
                             : NULL;
    sbm_status st = SBM_ERR_OUT_OF_MEMORY;
    if (P) {
        for (int64_t j = 0; j <= nb; j++) Ap[j] = (SuiteSparse_long)colptr[j];
        for (int64_t p = 0; p < nnz; p++) Ai[p] = (SuiteSparse_long)rowind[p];
        double control[AMD_CONTROL], info[AMD_INFO];
        amd_l_defaults(control);
        /* AMD orders the pattern of A + A^T and ignores the diagonal */
        const int r = amd_l_order((SuiteSparse_long)nb, Ap, Ai, P, control, info);
        if (r == AMD_OK || r == AMD_OK_BUT_JUMBLED) {
            for (int64_t k = 0; k < nb; k++) perm[k] = (int64_t)P[k];
            st = SBM_SUCCESS;
        } else if (r == AMD_OUT_OF_MEMORY) {
            st = sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY,
                            "AMD ran out of memory ordering %" PRId64 " block columns with %" PRId64
                            " stored blocks",
                            nb, nnz);
        } else {
            st = sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                            "AMD refused the block graph (%" PRId64 " block columns, %" PRId64
                            " blocks): status %d",
                            nb, nnz, r);
        }
    }
    sbm__free_with(a, P);
    sbm__free_with(a, Ai);
    sbm__free_with(a, Ap);
    return st;
}

sbm_status sbm__chol_symperm(sbm_ctx *ctx, const sbm_allocator *a, int64_t nb,
                             const int64_t *colptr, const int32_t *rowind, const int64_t *iperm,
                             int upper, int64_t **cp, int64_t **ri)
{
    *ri = NULL;
    *cp = sbm__chol_ialloc(ctx, a, nb + 1, "permuted column pointers");
    if (!*cp) return SBM_ERR_OUT_OF_MEMORY;
    int64_t *c = *cp;
    for (int64_t j = 0; j <= nb; j++) c[j] = 0;
    for (int64_t j = 0; j < nb; j++)
        for (int64_t p = colptr[j]; p < colptr[j + 1]; p++) {
            if (rowind[p] == j) continue;
            const int64_t x = iperm[rowind[p]], y = iperm[j];
            c[(upper ? (x > y ? x : y) : (x < y ? x : y)) + 1]++;
        }
    for (int64_t j = 0; j < nb; j++) c[j + 1] += c[j];
    *ri = sbm__chol_ialloc(ctx, a, c[nb], "permuted row indices");
    int64_t *next = *ri ? sbm__chol_ialloc(ctx, a, nb, "permutation workspace") : NULL;
    if (!next) {
        sbm__free_with(a, *ri);
        sbm__free_with(a, *cp);
        *ri = *cp = NULL;
        return SBM_ERR_OUT_OF_MEMORY;
    }
    for (int64_t j = 0; j < nb; j++) next[j] = c[j];
    for (int64_t j = 0; j < nb; j++)
        for (int64_t p = colptr[j]; p < colptr[j + 1]; p++) {
            if (rowind[p] == j) continue;
            const int64_t x = iperm[rowind[p]], y = iperm[j];
            const int64_t lo = x < y ? x : y, hi = x < y ? y : x;
            if (upper)
                (*ri)[next[hi]++] = lo;
            else
                (*ri)[next[lo]++] = hi;
        }
    sbm__free_with(a, next);
    return SBM_SUCCESS;
}

void sbm__chol_etree(int64_t nb, const int64_t *cp, const int64_t *ri, int64_t *parent,
                     int64_t *ancestor)
{
    for (int64_t k = 0; k < nb; k++) {
        parent[k] = -1;
        ancestor[k] = -1;
        for (int64_t p = cp[k]; p < cp[k + 1]; p++) {
            /* climb from i to the root of its current subtree, pointing the path at k */
            for (int64_t i = ri[p], inext; i != -1 && i < k; i = inext) {
                inext = ancestor[i];
                ancestor[i] = k;
                if (inext == -1) parent[i] = k;
            }
        }
    }
}

void sbm__chol_postorder(int64_t nb, const int64_t *parent, int64_t *post, int64_t *w)
{
    int64_t *head = w, *next = w + nb, *stack = w + 2 * nb;
    for (int64_t j = 0; j < nb; j++) head[j] = -1;
    /* children in ascending order: the smallest one is visited first */
    for (int64_t j = nb - 1; j >= 0; j--) {
        if (parent[j] == -1) continue;
        next[j] = head[parent[j]];
        head[parent[j]] = j;
    }
    int64_t k = 0;
    for (int64_t root = 0; root < nb; root++) {
        if (parent[root] != -1) continue;
        int64_t top = 0;
        stack[0] = root;
        while (top >= 0) {
            const int64_t p = stack[top], i = head[p];
            if (i == -1) {
                top--;
                post[k++] = p;
            } else {
                head[p] = next[i];
                stack[++top] = i;
            }
        }
    }
}

void sbm__chol_colcounts(int64_t nb, const int64_t *cp, const int64_t *ri, const int64_t *parent,
                         int64_t *count, int64_t *mark)
{
    for (int64_t j = 0; j < nb; j++) {
        count[j] = 1;
        mark[j] = -1;
    }
    /* row k of L: the nodes on the paths from each i < k with A(i, k) != 0 up to k */
    for (int64_t k = 0; k < nb; k++) {
        mark[k] = k;
        for (int64_t p = cp[k]; p < cp[k + 1]; p++)
            for (int64_t j = ri[p]; mark[j] != k; j = parent[j]) {
                count[j]++;
                mark[j] = k;
            }
    }
}
