/* SPDX-License-Identifier: BSD-3-Clause */
/* Checks of a Matrix Market file's entries that need the whole file, with the file
 * line of every entry kept compactly:
 *   - a symmetric or skew-symmetric file stores one triangle, its mirror implied: an entry
 *     whose mirror is stored too would be summed into twice the value, so the first one (in
 *     file order) is refused, naming its line and its mirror's;
 *   - duplicates are summed in file order: a sum that overflows to inf (two entries of 1e308)
 *     is refused at the entry where the running sum stops being finite.
 * Both cost nothing for the usual file: the mirror check sorts only when both triangles hold
 * entries, the sum check searches only when a summed value is not finite.
 * And one that needs only the size line: the memory its sizes imply (row pointers, column
 * counts, the entries) must fit the machine's physical memory, so that a 50-byte header
 * announcing 2^31 - 1 rows is refused with its size instead of touching 16 GiB of pages; and on
 * a CPU context with a memory budget (sbm_ctx_set_memory_budget), the reading's workspace must
 * fit the budget. */
#define _POSIX_C_SOURCE 200809L /* sysconf */

#include "io_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------------------- */
/* Entry lines                                                                              */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm__mtx_lines_skip(sbm_ctx *ctx, sbm__mtx_lines *L, int64_t count)
{
    if (L->nskip == L->cap) {
        const int64_t nc = L->cap ? 2 * L->cap : 64;
        int ok;
        const size_t bytes = sbm__mul_size(ctx, (size_t)nc, sizeof(int64_t), "comment lines", &ok);
        if (!ok) return SBM_ERR_OVERFLOW;
        int64_t *p = sbm__host_alloc(ctx, bytes, "the entries' line numbers");
        if (!p) return SBM_ERR_OUT_OF_MEMORY;
        if (L->nskip) memcpy(p, L->skip, (size_t)L->nskip * sizeof(int64_t));
        sbm__host_free(ctx, L->skip);
        L->skip = p;
        L->cap = nc;
    }
    L->skip[L->nskip++] = count;
    return SBM_SUCCESS;
}

int64_t sbm__mtx_line_of(const sbm__mtx_lines *L, int64_t entry)
{
    /* skipped lines read while `entry` or fewer entries were stored come before it */
    int64_t lo = 0, hi = L->nskip;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (L->skip[mid] <= entry) lo = mid + 1;
        else hi = mid;
    }
    return L->size_line + 1 + entry + lo;
}

void sbm__mtx_lines_free(sbm_ctx *ctx, sbm__mtx_lines *L)
{
    sbm__host_free(ctx, L->skip);
    L->skip = NULL;
    L->nskip = L->cap = 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Mirrored entries of a symmetric file                                                     */
/* ---------------------------------------------------------------------------------------- */

typedef struct keyed {
    uint64_t key;  /* (max index, min index) of the entry */
    int64_t entry; /* its number in the file */
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->entry > y->entry) - (x->entry < y->entry);
}

sbm_status sbm__mtx_check_mirrors(sbm_ctx *ctx, const char *path, const sbm__mtx_lines *L,
                                  int64_t count, const int32_t *row, const int32_t *col)
{
    int64_t upper = 0, lower = 0;
    for (int64_t k = 0; k < count; k++) upper += row[k] < col[k], lower += row[k] > col[k];
    if (upper == 0 || lower == 0) return SBM_SUCCESS;
    keyed *e = sbm__host_alloc(ctx, (size_t)(upper + lower) * sizeof(keyed), "mirror check");
    if (!e) return SBM_ERR_OUT_OF_MEMORY;
    int64_t n = 0;
    for (int64_t k = 0; k < count; k++) {
        if (row[k] == col[k]) continue;
        const uint32_t hi = (uint32_t)(row[k] > col[k] ? row[k] : col[k]);
        const uint32_t lo = (uint32_t)(row[k] > col[k] ? col[k] : row[k]);
        e[n].key = (uint64_t)hi << 32 | lo;
        e[n++].entry = k;
    }
    qsort(e, (size_t)n, sizeof(keyed), cmp_keyed);
    int64_t bad = -1, first = -1; /* the earliest mirroring entry, and the entry it mirrors */
    for (int64_t g = 0; g < n;) {
        int64_t h = g + 1;
        while (h < n && e[h].key == e[g].key) h++;
        const int up = row[e[g].entry] < col[e[g].entry];
        for (int64_t q = g + 1; q < h; q++)
            if ((row[e[q].entry] < col[e[q].entry]) != up) {
                if (bad < 0 || e[q].entry < bad) bad = e[q].entry, first = e[g].entry;
                break;
            }
        g = h;
    }
    sbm__host_free(ctx, e);
    if (bad < 0) return SBM_SUCCESS;
    return sbm__error(ctx, SBM_ERR_PARSE,
                      "%s:%" PRId64 ": entry (%d,%d) mirrors the entry (%d,%d) on line %" PRId64
                      ": a symmetric file stores one triangle (the other is implied), so both "
                      "would be summed into twice the value",
                      path, sbm__mtx_line_of(L, bad), (int)row[bad] + 1, (int)col[bad] + 1,
                      (int)row[first] + 1, (int)col[first] + 1, sbm__mtx_line_of(L, first));
}

/* ---------------------------------------------------------------------------------------- */
/* Sums of duplicates                                                                       */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm__mtx_check_sums(sbm_ctx *ctx, const char *path, const sbm__mtx_lines *L,
                               const sbm__mtx_summed *s)
{
    int64_t ti = -1;
    int32_t tj = 0;
    for (int64_t i = 0; i < s->m && ti < 0; i++)
        for (int64_t q = s->rowptr[i]; q < s->rowptr[i + 1]; q++)
            if (!isfinite(s->values[q])) {
                ti = i, tj = s->colind[q];
                break;
            }
    if (ti < 0) return SBM_SUCCESS;
    /* the expanded entries in file order: entry o, then its mirror when mirrored */
    double sum = 0.0;
    for (int64_t p = 0, o = 0; p < s->count; o++) {
        const int twice = s->mirrored && s->row[p] != s->col[p];
        for (int t = 0; t <= twice; t++, p++) {
            if (s->row[p] != ti || s->col[p] != tj) continue;
            sum += s->val[p];
            if (isfinite(sum)) continue;
            return sbm__error(ctx, SBM_ERR_PARSE,
                              "%s:%" PRId64 ": the duplicates of entry (%" PRId64 ",%d) sum to "
                              "%g here (this line adds %.17g): the matrix has no finite value "
                              "there",
                              path, sbm__mtx_line_of(L, o), ti + 1, (int)(s->ucol ? s->ucol[tj] : tj) + 1,
                              sum, s->val[p]);
        }
    }
    return sbm__error(ctx, SBM_ERR_PARSE, "%s: the duplicates of entry (%" PRId64 ",%d) do not "
                      "sum to a finite value", path, ti + 1, (int)(s->ucol ? s->ucol[tj] : tj) + 1);
}

/* ---------------------------------------------------------------------------------------- */
/* Memory the size line implies                                                             */
/* ---------------------------------------------------------------------------------------- */

double sbm__host_memory_bytes(void)
{
    const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (double)pages * (double)size : 0.0;
}

sbm_status sbm__mtx_check_memory(sbm__text_reader *rd, int64_t m, int64_t n, int64_t nnz,
                                 int mirrored, int ranked)
{
    const double entries = (double)nnz * (mirrored ? 2.0 : 1.0);
    /* at the peak (sbm__compress_triplets, then the copy into the matrix): row pointers twice,
     * counts over the larger of rows and columns (columns not for a wide matrix bucketed over
     * its distinct ones), and each entry as read (16 bytes), its place (8), compressed (12)
     * and copied (12) */
    const double rows = (double)m + 1.0, cols = ranked ? 0.0 : (double)n + 1.0;
    const double need = 16.0 * rows + 8.0 * (rows > cols ? rows : cols) + 48.0 * entries;
    const double have = sbm__host_memory_bytes();
    if (have > 0.0 && need > have)
        return sbm__text_error(rd, SBM_ERR_OUT_OF_MEMORY,
                               "size line: a %" PRId64 " x %" PRId64 " matrix with %" PRId64
                               " entries needs at least %.0f bytes, more than this machine's "
                               "memory (%.0f bytes)",
                               m, n, nnz, need, have);
    /* A CPU context's memory budget bounds the reader's workspace: all of the above but the
     * matrix it returns (one row pointer array, 12 bytes an entry). A CUDA context's budget is
     * of device memory, which the reading does not use. */
    const size_t budget = sbm_ctx_memory_budget(rd->ctx);
    const double work = need - 8.0 * rows - 12.0 * entries;
    if (budget == 0 || sbm_ctx_backend(rd->ctx) != SBM_BACKEND_CPU || work <= (double)budget)
        return SBM_SUCCESS;
    return sbm__text_error(rd, SBM_ERR_OUT_OF_MEMORY,
                           "size line: reading a %" PRId64 " x %" PRId64 " matrix with %" PRId64
                           " entries needs at least %.0f bytes of workspace, more than the "
                           "context's memory budget (%zu bytes, sbm_ctx_set_memory_budget)",
                           m, n, nnz, work, budget);
}
