/* SPDX-License-Identifier: BSD-3-Clause */
/* Supernodal half of the symbolic analysis of the sparse block Cholesky: the ordering composed
 * with the etree postorder, fundamental supernodes, relaxed amalgamation (the idea of CHOLMOD's
 * nrelax/zrelax, with one zero-fraction test), the fronts' rows, the panel offsets, the
 * assembly map of A, the extend-add maps, the tree levels and the flop count. */
#include "chol_symbolic.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define CLEANUP_FREE(p) sbm__free_with(&al, (p))

void sbm__chol_symbolic_free(sbm__chol_symbolic *s)
{
    if (!s) return;
    const sbm_allocator al = s->alloc;
    void *arrays[] = {s->perm,   s->iperm,   s->sup_col,   s->sup_rowptr, s->sup_rows,
                      s->sup_parent, s->col_sup, s->L_ptr, s->a_dst,      s->a_sup,
                      s->a_trans, s->rel_ptr, s->rel,      s->level_ptr,  s->level_sup};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) CLEANUP_FREE(arrays[i]);
    al.free(al.user, s);
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Position of r in the sorted rows[0..m). */
static int64_t find_row(const int64_t *rows, int64_t m, int64_t r)
{
    int64_t lo = 0, hi = m;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (rows[mid] < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* perm = the ordering composed with the postorder of its etree; U = the upper pattern in that
 * numbering, parent its (postordered) etree. */
static sbm_status order(sbm_ctx *ctx, sbm__chol_symbolic *s, const int64_t *colptr,
                        const int32_t *rowind, const sbm_chol_options *o, int64_t **ucp,
                        int64_t **uri, int64_t *parent, int64_t *w)
{
    const sbm_allocator al = s->alloc;
    const int64_t nb = s->nb;
    if (o->ordering == SBM_CHOL_ORDERING_AMD)
        SBM__TRY(sbm__chol_amd(ctx, &al, nb, colptr, rowind, w));
    else
        for (int64_t k = 0; k < nb; k++) w[k] = k;
    for (int64_t k = 0; k < nb; k++) s->iperm[w[k]] = k;
    SBM__TRY(sbm__chol_symperm(ctx, &al, nb, colptr, rowind, s->iperm, 1, ucp, uri));
    sbm__chol_etree(nb, *ucp, *uri, parent, w + nb);
    sbm__chol_postorder(nb, parent, s->perm, w + nb);
    /* s->perm holds the postorder of the first numbering; compose with it */
    for (int64_t k = 0; k < nb; k++) s->perm[k] = w[s->perm[k]];
    for (int64_t k = 0; k < nb; k++) s->iperm[s->perm[k]] = k;
    CLEANUP_FREE(*uri);
    CLEANUP_FREE(*ucp);
    *uri = *ucp = NULL;
    SBM__TRY(sbm__chol_symperm(ctx, &al, nb, colptr, rowind, s->iperm, 1, ucp, uri));
    sbm__chol_etree(nb, *ucp, *uri, parent, w);
    return SBM_SUCCESS;
}

/* Supernodes from the postordered etree and the column counts: fundamental ones (a column joins
 * the previous one when it is its only child and its count is one less), then relaxed
 * amalgamation: the last fundamental child of a supernode is merged into it while the merged
 * panel's lower trapezoid (in blocks) has at most relax_zeros of explicit zeros and at most
 * relax_max_columns columns. Sets s->nsuper, sup_col, and m[s] = front rows of each supernode
 * (m may be count: m[f] is written after count[f] is last read). w: 5 nb + 2. */
static sbm_status supernodes(sbm_ctx *ctx, sbm__chol_symbolic *s, const sbm_chol_options *o,
                             const int64_t *parent, const int64_t *count, int64_t *m, int64_t *w)
{
    const int64_t nb = s->nb;
    int64_t *nchild = w, *fstart = w + nb, *gk = w + 2 * nb + 1, *gnz = w + 3 * nb + 1,
            *leader = w + 4 * nb + 1;
    for (int64_t j = 0; j < nb; j++) nchild[j] = 0;
    for (int64_t j = 0; j < nb; j++)
        if (parent[j] >= 0) nchild[parent[j]]++;
    int64_t nf = 0;
    for (int64_t j = 0; j < nb; j++)
        if (j == 0 || !(parent[j - 1] == j && nchild[j] == 1 && count[j - 1] == count[j] + 1))
            fstart[nf++] = j;
    fstart[nf] = nb;
    /* group values kept at each group's first fundamental supernode (gk columns, m rows,
     * gnz true nonzero blocks of the lower trapezoid) */
    for (int64_t f = 0; f < nf; f++) {
        gk[f] = fstart[f + 1] - fstart[f];
        m[f] = count[fstart[f]];
        gnz[f] = 0;
        for (int64_t j = fstart[f]; j < fstart[f + 1]; j++) gnz[f] += count[j];
        leader[f] = 1;
    }
    for (int64_t f = nf - 2; f >= 0 && o->relax_zeros > 0; f--) {
        const int64_t last = fstart[f + 1] - 1;
        if (parent[last] != fstart[f + 1]) continue; /* f is not a child of f+1's group */
        const int64_t k = gk[f] + gk[f + 1], rows = gk[f] + m[f + 1];
        const double stored = (double)k * (double)rows - 0.5 * (double)k * (double)(k - 1);
        const double zeros = stored - (double)(gnz[f] + gnz[f + 1]);
        if (k > o->relax_max_columns || zeros > o->relax_zeros * stored) continue;
        gk[f] = k;
        m[f] = rows;
        gnz[f] += gnz[f + 1];
        leader[f + 1] = 0;
    }
    int64_t ns = 0;
    for (int64_t f = 0; f < nf; f++)
        if (leader[f]) {
            fstart[ns] = fstart[f];
            m[ns++] = m[f];
        }
    s->nsuper = ns;
    const sbm_allocator al = s->alloc;
    s->sup_col = sbm__chol_ialloc(ctx, &al, ns + 1, "supernode columns");
    if (!s->sup_col) return SBM_ERR_OUT_OF_MEMORY;
    for (int64_t t = 0; t < ns; t++) s->sup_col[t] = fstart[t];
    s->sup_col[ns] = nb;
    return SBM_SUCCESS;
}

/* The rows of every front: own columns, then the rows of A below them and the children's
 * update rows, ascending; sup_parent, col_sup. lcp/lri: the lower pattern (new numbering).
 * The count must be the one the column counts predicted (m); rows past it are counted, not
 * written, so a mismatch is reported instead of truncated. w: 3 nb. */
static sbm_status fronts(sbm_ctx *ctx, sbm__chol_symbolic *s, const int64_t *m,
                         const int64_t *lcp, const int64_t *lri, int64_t *w)
{
    const sbm_allocator al = s->alloc;
    const int64_t nb = s->nb, ns = s->nsuper;
    int64_t *mark = w, *head = w + nb, *next = w + 2 * nb;
    s->sup_rowptr = sbm__chol_ialloc(ctx, &al, ns + 1, "front row pointers");
    s->sup_parent = s->sup_rowptr ? sbm__chol_ialloc(ctx, &al, ns, "supernode parents") : NULL;
    s->col_sup = s->sup_parent ? sbm__chol_ialloc(ctx, &al, nb, "supernode of each column") : NULL;
    if (!s->col_sup) return SBM_ERR_OUT_OF_MEMORY;
    s->sup_rowptr[0] = 0;
    for (int64_t t = 0; t < ns; t++) {
        s->sup_rowptr[t + 1] = s->sup_rowptr[t] + m[t];
        for (int64_t c = s->sup_col[t]; c < s->sup_col[t + 1]; c++) s->col_sup[c] = t;
    }
    s->sup_rows = sbm__chol_ialloc(ctx, &al, s->sup_rowptr[ns], "front rows");
    if (!s->sup_rows) return SBM_ERR_OUT_OF_MEMORY;
    for (int64_t j = 0; j < nb; j++) mark[j] = head[j] = -1;
    for (int64_t t = 0; t < ns; t++) {
        const int64_t c0 = s->sup_col[t], c1 = s->sup_col[t + 1], end = s->sup_rowptr[t + 1];
        int64_t *rows = s->sup_rows;
        int64_t pos = s->sup_rowptr[t];
        for (int64_t c = c0; c < c1; c++) {
            rows[pos++] = c;
            mark[c] = t;
        }
        for (int64_t c = c0; c < c1; c++)
            for (int64_t p = lcp[c]; p < lcp[c + 1]; p++)
                if (mark[lri[p]] != t) {
                    mark[lri[p]] = t;
                    if (pos < end) rows[pos] = lri[p];
                    pos++;
                }
        for (int64_t ch = head[t]; ch != -1; ch = next[ch])
            for (int64_t p = s->sup_rowptr[ch] + (s->sup_col[ch + 1] - s->sup_col[ch]);
                 p < s->sup_rowptr[ch + 1]; p++)
                if (mark[rows[p]] != t) {
                    mark[rows[p]] = t;
                    if (pos < end) rows[pos] = rows[p];
                    pos++;
                }
        if (pos != end)
            return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                              "internal error: front %" PRId64 " has %" PRId64
                              " rows, the column counts gave %" PRId64,
                              t, pos - s->sup_rowptr[t], m[t]);
        const int64_t k = c1 - c0, first = s->sup_rowptr[t];
        qsort(rows + first + k, (size_t)(end - first - k), sizeof(int64_t), cmp_i64);
        s->sup_parent[t] = end > first + k ? s->col_sup[rows[first + k]] : -1;
        if (s->sup_parent[t] >= 0) {
            next[t] = head[s->sup_parent[t]];
            head[s->sup_parent[t]] = t;
        }
    }
    return SBM_SUCCESS;
}

/* L_ptr, rel maps, A's assembly map, sizes and flops. */
static sbm_status maps(sbm_ctx *ctx, sbm__chol_symbolic *s, const int64_t *colptr,
                       const int32_t *rowind)
{
    const sbm_allocator al = s->alloc;
    const int64_t ns = s->nsuper, b = s->b;
    s->L_ptr = sbm__chol_ialloc(ctx, &al, ns + 1, "panel offsets");
    s->rel_ptr = s->L_ptr ? sbm__chol_ialloc(ctx, &al, ns + 1, "extend-add pointers") : NULL;
    if (!s->rel_ptr) return SBM_ERR_OUT_OF_MEMORY;
    s->L_ptr[0] = s->rel_ptr[0] = 0;
    s->max_front = s->max_update = 0;
    s->flops = 0;
    for (int64_t t = 0; t < ns; t++) {
        const int64_t k = s->sup_col[t + 1] - s->sup_col[t];
        const int64_t mt = s->sup_rowptr[t + 1] - s->sup_rowptr[t];
        if (mt * b > INT32_MAX || (double)s->L_ptr[t] + (double)(mt * b) * (double)(k * b) > 0x1p60)
            return sbm__error(ctx, SBM_ERR_OVERFLOW,
                              "the factor is too large: front %" PRId64 " has %" PRId64
                              " scalar rows (%" PRId64 " doubles before it)",
                              t, mt * b, s->L_ptr[t]);
        s->L_ptr[t + 1] = s->L_ptr[t] + (mt * b) * (k * b);
        s->rel_ptr[t + 1] = s->rel_ptr[t] + (mt - k);
        if (mt * b > s->max_front) s->max_front = mt * b;
        if ((mt - k) * b > s->max_update) s->max_update = (mt - k) * b;
        const double kk = (double)(k * b), u = (double)((mt - k) * b);
        s->flops += kk * kk * kk / 3 + u * kk * kk + u * u * kk;
    }
    s->rel = sbm__chol_ialloc(ctx, &al, s->rel_ptr[ns], "extend-add rows");
    s->a_dst = s->rel ? sbm__chol_ialloc(ctx, &al, s->nnzb_A, "assembly offsets") : NULL;
    s->a_sup = s->a_dst ? sbm__chol_ialloc(ctx, &al, s->nnzb_A, "assembly supernodes") : NULL;
    s->a_trans = s->a_sup ? sbm__alloc_with(ctx, &al, (size_t)s->nnzb_A, 1, "assembly flags")
                          : NULL;
    if (!s->a_trans) return SBM_ERR_OUT_OF_MEMORY;
    for (int64_t t = 0; t < ns; t++) {
        const int64_t k = s->sup_col[t + 1] - s->sup_col[t], par = s->sup_parent[t];
        const int64_t *up = s->sup_rows + s->sup_rowptr[t] + k;
        for (int64_t u = 0; u < s->rel_ptr[t + 1] - s->rel_ptr[t]; u++)
            s->rel[s->rel_ptr[t] + u] =
                find_row(s->sup_rows + s->sup_rowptr[par],
                         s->sup_rowptr[par + 1] - s->sup_rowptr[par], up[u]);
    }
    for (int64_t j = 0; j < s->nb; j++)
        for (int64_t p = colptr[j]; p < colptr[j + 1]; p++) {
            const int64_t ni = s->iperm[rowind[p]], nj = s->iperm[j];
            const int64_t c = ni < nj ? ni : nj, r = ni < nj ? nj : ni, t = s->col_sup[c];
            const int64_t mt = s->sup_rowptr[t + 1] - s->sup_rowptr[t];
            const int64_t pos = find_row(s->sup_rows + s->sup_rowptr[t], mt, r);
            s->a_sup[p] = t;
            s->a_trans[p] = (uint8_t)(ni < nj);
            s->a_dst[p] = s->L_ptr[t] + (c - s->sup_col[t]) * b * (mt * b) + pos * b;
        }
    return SBM_SUCCESS;
}

/* Levels of the supernodal tree (w: nsuper). */
static sbm_status levels(sbm_ctx *ctx, sbm__chol_symbolic *s, int64_t *level)
{
    const sbm_allocator al = s->alloc;
    const int64_t ns = s->nsuper;
    int64_t nl = 0;
    for (int64_t t = 0; t < ns; t++) level[t] = 0;
    for (int64_t t = 0; t < ns; t++) {
        const int64_t par = s->sup_parent[t];
        if (par >= 0 && level[par] < level[t] + 1) level[par] = level[t] + 1;
        if (level[t] + 1 > nl) nl = level[t] + 1;
    }
    s->nlevels = nl;
    s->level_ptr = sbm__chol_ialloc(ctx, &al, nl + 1, "level pointers");
    s->level_sup = s->level_ptr ? sbm__chol_ialloc(ctx, &al, ns, "supernodes by level") : NULL;
    if (!s->level_sup) return SBM_ERR_OUT_OF_MEMORY;
    for (int64_t l = 0; l <= nl; l++) s->level_ptr[l] = 0;
    for (int64_t t = 0; t < ns; t++) s->level_ptr[level[t] + 1]++;
    for (int64_t l = 0; l < nl; l++) s->level_ptr[l + 1] += s->level_ptr[l];
    for (int64_t t = 0; t < ns; t++) s->level_sup[s->level_ptr[level[t]]++] = t;
    for (int64_t l = nl; l > 0; l--) s->level_ptr[l] = s->level_ptr[l - 1];
    s->level_ptr[0] = 0;
    return SBM_SUCCESS;
}

sbm_status sbm__chol_analyse(sbm_ctx *ctx, int64_t nb, int b, const int64_t *colptr,
                             const int32_t *rowind, const sbm_chol_options *o,
                             sbm__chol_symbolic **sym)
{
    *sym = NULL;
    const sbm_allocator al = sbm__host_allocator_of(ctx);
    sbm__chol_symbolic *s = sbm__alloc_with(ctx, &al, 1, sizeof *s, "Cholesky symbolic structure");
    if (!s) return SBM_ERR_OUT_OF_MEMORY;
    memset(s, 0, sizeof *s);
    s->alloc = al;
    s->nb = nb;
    s->b = b;
    s->n = nb * b;
    s->nnzb_A = colptr[nb];
    int64_t *ucp = NULL, *uri = NULL, *lcp = NULL, *lri = NULL;
    int64_t *parent = sbm__chol_ialloc(ctx, &al, nb, "elimination tree");
    int64_t *count = parent ? sbm__chol_ialloc(ctx, &al, nb, "column counts") : NULL;
    int64_t *w = count ? sbm__chol_ialloc(ctx, &al, 5 * nb + 2, "symbolic workspace") : NULL;
    s->perm = w ? sbm__chol_ialloc(ctx, &al, nb, "permutation") : NULL;
    s->iperm = s->perm ? sbm__chol_ialloc(ctx, &al, nb, "inverse permutation") : NULL;
    sbm_status st = s->iperm ? SBM_SUCCESS : SBM_ERR_OUT_OF_MEMORY;
    if (st == SBM_SUCCESS) st = order(ctx, s, colptr, rowind, o, &ucp, &uri, parent, w);
    if (st == SBM_SUCCESS) {
        sbm__chol_colcounts(nb, ucp, uri, parent, count, w);
        st = supernodes(ctx, s, o, parent, count, count, w);
    }
    /* count now holds the front rows of each supernode */
    if (st == SBM_SUCCESS)
        st = sbm__chol_symperm(ctx, &al, nb, colptr, rowind, s->iperm, 0, &lcp, &lri);
    if (st == SBM_SUCCESS) st = fronts(ctx, s, count, lcp, lri, w);
    if (st == SBM_SUCCESS) st = maps(ctx, s, colptr, rowind);
    if (st == SBM_SUCCESS) st = levels(ctx, s, w);
    CLEANUP_FREE(lri);
    CLEANUP_FREE(lcp);
    CLEANUP_FREE(uri);
    CLEANUP_FREE(ucp);
    CLEANUP_FREE(w);
    CLEANUP_FREE(count);
    CLEANUP_FREE(parent);
    if (st != SBM_SUCCESS) {
        sbm__chol_symbolic_free(s);
        return st;
    }
    *sym = s;
    return SBM_SUCCESS;
}
