/* SPDX-License-Identifier: BSD-3-Clause */
/* Building matrices from host data: triplets (duplicates summed), BSR transposition; on top of
 * the uploads of matrix.c. */
#include "sbm_internal.h"

#include <inttypes.h>
#include <string.h>

sbm_status sbm__cbc_from_host_transposed(sbm_ctx *ctx, int64_t nbr, int64_t nbc, int r, int c,
                                         const int64_t *tptr, const int32_t *tind,
                                         const double *tval, sbm_cbc **A)
{
    *A = NULL;
    int64_t nnzb = tptr[nbr];
    size_t rc = (size_t)r * c;
    int64_t *colptr = sbm__host_alloc(ctx, (size_t)(nbc + 1) * sizeof(int64_t), "column pointers");
    int32_t *rowind = colptr ? sbm__host_alloc(ctx, (size_t)nnzb * sizeof(int32_t), "indices") : NULL;
    double *values = rowind ? sbm__host_alloc(ctx, (size_t)nnzb * rc * sizeof(double), "values") : NULL;
    sbm_status st = values ? SBM_SUCCESS : SBM_ERR_OUT_OF_MEMORY;
    if (st == SBM_SUCCESS) {
        memset(colptr, 0, (size_t)(nbc + 1) * sizeof(int64_t));
        for (int64_t p = 0; p < nnzb; p++) colptr[tind[p] + 1]++;
        for (int64_t j = 0; j < nbc; j++) colptr[j + 1] += colptr[j];
        /* colptr[j] is used as the next free slot of column j, then shifted back */
        for (int64_t i = 0; i < nbr; i++) {
            for (int64_t p = tptr[i]; p < tptr[i + 1]; p++) {
                int64_t q = colptr[tind[p]]++;
                rowind[q] = (int32_t)i;
                const double *src = tval + (size_t)p * rc; /* c x r column-major */
                double *dst = values + (size_t)q * rc;     /* r x c column-major */
                for (int jj = 0; jj < c; jj++)
                    for (int ii = 0; ii < r; ii++) dst[ii + jj * r] = src[jj + ii * c];
            }
        }
        for (int64_t j = nbc; j > 0; j--) colptr[j] = colptr[j - 1];
        colptr[0] = 0;
        st = sbm__cbc_upload(ctx, nbr, nbc, r, c, colptr, rowind, values, A);
    }
    sbm__host_free(ctx, values);
    sbm__host_free(ctx, rowind);
    sbm__host_free(ctx, colptr);
    return st;
}

/* Two stable counting sorts (by index, then by segment): the order in which compress_triplets
 * visits the triplets, into order (size nt); cnt[j] (size >= max(nseg, nind) + 1) then ends
 * segment j. */
static sbm_status sort_triplets(sbm_ctx *ctx, int64_t nseg, int64_t nind, int64_t nt,
                                const int32_t *seg, const int32_t *ind, int64_t *cnt,
                                int64_t *order)
{
    int64_t *by_ind = sbm__host_alloc(ctx, (size_t)nt * sizeof(int64_t), "permutation");
    if (!by_ind) return SBM_ERR_OUT_OF_MEMORY;
    memset(cnt, 0, (size_t)(nind + 1) * sizeof(int64_t));
    for (int64_t t = 0; t < nt; t++) cnt[ind[t] + 1]++;
    for (int64_t i = 0; i < nind; i++) cnt[i + 1] += cnt[i];
    for (int64_t t = 0; t < nt; t++) by_ind[cnt[ind[t]]++] = t;
    memset(cnt, 0, (size_t)(nseg + 1) * sizeof(int64_t));
    for (int64_t t = 0; t < nt; t++) cnt[seg[t] + 1]++;
    for (int64_t j = 0; j < nseg; j++) cnt[j + 1] += cnt[j];
    for (int64_t u = 0; u < nt; u++) {
        int64_t t = by_ind[u];
        order[cnt[seg[t]]++] = t;
    }
    sbm__host_free(ctx, by_ind);
    return SBM_SUCCESS;
}

sbm_status sbm__compress_triplets(sbm_ctx *ctx, int64_t nseg, int64_t nind, int64_t nt,
                                  const int32_t *seg, const int32_t *ind, const double *val,
                                  size_t bs, int64_t **ptr_out, int32_t **ind_out,
                                  double **val_out)
{
    *ptr_out = NULL;
    *ind_out = NULL;
    *val_out = NULL;
    int64_t *cnt = sbm__host_alloc(ctx, (size_t)((nind > nseg ? nind : nseg) + 1) * sizeof(int64_t), "counts");
    int64_t *order = cnt ? sbm__host_alloc(ctx, (size_t)nt * sizeof(int64_t), "permutation") : NULL;
    sbm_status st = order ? sort_triplets(ctx, nseg, nind, nt, seg, ind, cnt, order)
                          : SBM_ERR_OUT_OF_MEMORY;
    /* the outputs only now: the sort's scratch is gone, which lowers the peak */
    int64_t *ptr = st == SBM_SUCCESS ? sbm__host_alloc(ctx, (size_t)(nseg + 1) * sizeof(int64_t), "pointers") : NULL;
    int32_t *oind = ptr ? sbm__host_alloc(ctx, (size_t)nt * sizeof(int32_t), "indices") : NULL;
    double *oval = oind ? sbm__host_alloc(ctx, (size_t)nt * bs * sizeof(double), "values") : NULL;
    if (!oval) {
        sbm__host_free(ctx, oind);
        sbm__host_free(ctx, ptr);
        sbm__host_free(ctx, order);
        sbm__host_free(ctx, cnt);
        return SBM_ERR_OUT_OF_MEMORY;
    }
    /* merge duplicates in input order; cnt[j] ends segment j */
    int64_t q = 0, u = 0;
    ptr[0] = 0;
    for (int64_t j = 0; j < nseg; j++) {
        int64_t end = cnt[j];
        while (u < end) {
            int64_t t = order[u];
            int32_t i = ind[t];
            double *dst = oval + (size_t)q * bs;
            memcpy(dst, val + (size_t)t * bs, bs * sizeof(double));
            oind[q] = i;
            for (u++; u < end && ind[order[u]] == i; u++) {
                const double *src = val + (size_t)order[u] * bs;
                for (size_t e = 0; e < bs; e++) dst[e] += src[e];
            }
            q++;
        }
        ptr[j + 1] = q;
    }
    sbm__host_free(ctx, order);
    sbm__host_free(ctx, cnt);
    *ptr_out = ptr;
    *ind_out = oind;
    *val_out = oval;
    return SBM_SUCCESS;
}

static sbm_status sbm__check_triplets(sbm_ctx *ctx, int64_t nt, const int32_t *row,
                                      const int32_t *col, const double *val, int64_t m, int64_t n,
                                      const char *rname, const char *cname)
{
    if (nt < 0)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "argument ntriplets: %" PRId64 " is negative", nt);
    if (nt > 0 && (!row || !col || !val))
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument %s is NULL but there are %" PRId64
                          " triplets", !row ? rname : !col ? cname : "h_values", nt);
    for (int64_t t = 0; t < nt; t++) {
        if (row[t] < 0 || row[t] >= m)
            return sbm__error(ctx, SBM_ERR_INDEX_OUT_OF_RANGE,
                              "argument %s: triplet %" PRId64 " has row %d outside [0, %" PRId64 ")",
                              rname, t, row[t], m);
        if (col[t] < 0 || col[t] >= n)
            return sbm__error(ctx, SBM_ERR_INDEX_OUT_OF_RANGE,
                              "argument %s: triplet %" PRId64 " has column %d outside [0, %" PRId64 ")",
                              cname, t, col[t], n);
    }
    return SBM_SUCCESS;
}

sbm_status sbm_cbc_from_triplets(sbm_ctx *ctx, sbm_cbc **A, int64_t nbr, int64_t nbc, int r, int c,
                                 int64_t ntriplets, const int32_t *h_brow, const int32_t *h_bcol,
                                 const double *h_values)
{
    SBM__ENTER(ctx, "sbm_cbc_from_triplets");
    if (!A) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument A (output handle) is NULL");
    *A = NULL;
    SBM__TRY(sbm__check_cbc_dims(ctx, nbr, nbc, r, c));
    if (nbc > INT32_MAX)
        return sbm__error(ctx, SBM_ERR_OVERFLOW, "argument nbc: %" PRId64 " exceeds the int32 range", nbc);
    SBM__TRY(sbm__check_triplets(ctx, ntriplets, h_brow, h_bcol, h_values, nbr, nbc, "h_brow", "h_bcol"));
    int ok;
    sbm__mul_size(ctx, (size_t)ntriplets, (size_t)r * c * sizeof(double), "triplet values", &ok);
    if (!ok) return SBM_ERR_OVERFLOW;
    int64_t *ptr;
    int32_t *ind;
    double *val;
    SBM__TRY(sbm__compress_triplets(ctx, nbc, nbr, ntriplets, h_bcol, h_brow, h_values,
                                    (size_t)r * c, &ptr, &ind, &val));
    sbm_status st = sbm__cbc_upload(ctx, nbr, nbc, r, c, ptr, ind, val, A);
    sbm__host_free(ctx, val);
    sbm__host_free(ctx, ind);
    sbm__host_free(ctx, ptr);
    return st;
}

sbm_status sbm_csr_from_triplets(sbm_ctx *ctx, sbm_csr **A, int64_t m, int64_t n, int64_t nnz,
                                 const int32_t *h_row, const int32_t *h_col, const double *h_values)
{
    SBM__ENTER(ctx, "sbm_csr_from_triplets");
    if (!A) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument A (output handle) is NULL");
    *A = NULL;
    SBM__TRY(sbm__check_csr_dims(ctx, m, n));
    if (m > INT32_MAX)
        return sbm__error(ctx, SBM_ERR_OVERFLOW, "argument m: %" PRId64 " exceeds the int32 range", m);
    SBM__TRY(sbm__check_triplets(ctx, nnz, h_row, h_col, h_values, m, n, "h_row", "h_col"));
    int64_t *ptr;
    int32_t *ind;
    double *val;
    SBM__TRY(sbm__compress_triplets(ctx, m, n, nnz, h_row, h_col, h_values, 1, &ptr, &ind, &val));
    sbm_status st = sbm__csr_upload(ctx, m, n, ptr, ind, val, A);
    sbm__host_free(ctx, val);
    sbm__host_free(ctx, ind);
    sbm__host_free(ctx, ptr);
    return st;
}
