/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU backend: validation, transposes, conversions, addition, pattern hashes. */
#include "cpu_backend.h"

#include <string.h>

sbm_status sbm__cpu_cbc_validate(sbm_ctx *ctx, const char *arg, const sbm_cbc *A, int check_finite)
{
    return sbm__validate_cbc_host(ctx, arg, A->nbr, A->nbc, A->r, A->c, A->colptr, A->rowind,
                                  A->values, check_finite);
}

sbm_status sbm__cpu_csr_validate(sbm_ctx *ctx, const char *arg, const sbm_csr *A, int check_finite)
{
    return sbm__validate_csr_host(ctx, arg, A->m, A->n, A->rowptr, A->colind, A->values,
                                  check_finite);
}

sbm_status sbm__cpu_cbc_pattern_hash(sbm_ctx *ctx, const sbm_cbc *A, uint64_t *hash)
{
    (void)ctx;
    *hash = sbm__hash_cbc_pattern_host(A);
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_csr_pattern_hash(sbm_ctx *ctx, const sbm_csr *A, uint64_t *hash)
{
    (void)ctx;
    *hash = sbm__hash_csr_pattern_host(A);
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_cbc_transpose(sbm_ctx *ctx, const sbm_cbc *A, sbm_cbc **AT)
{
    /* A's arrays, read as the CBC of A^T transposed, give A^T: the same counting transpose the
     * BSR conversion uses (src/core/host_build.c), with A's blocks read as c x r blocks of A^T^T. */
    *AT = NULL;
    sbm_cbc *T;
    int r = A->r, c = A->c;
    size_t rc = (size_t)r * c;
    SBM__TRY(sbm__cbc_alloc(ctx, A->nbc, A->nbr, c, r, A->nnzb, &T));
    memset(T->colptr, 0, (size_t)(A->nbr + 1) * sizeof(int64_t));
    for (int64_t p = 0; p < A->nnzb; p++) T->colptr[A->rowind[p] + 1]++;
    for (int64_t i = 0; i < A->nbr; i++) T->colptr[i + 1] += T->colptr[i];
    for (int64_t j = 0; j < A->nbc; j++) {
        for (int64_t p = A->colptr[j]; p < A->colptr[j + 1]; p++) {
            int64_t q = T->colptr[A->rowind[p]]++;
            T->rowind[q] = (int32_t)j;
            const double *src = A->values + (size_t)p * rc;
            double *dst = T->values + (size_t)q * rc;
            for (int jj = 0; jj < c; jj++)
                for (int ii = 0; ii < r; ii++) dst[jj + ii * c] = src[ii + jj * r];
        }
    }
    for (int64_t i = A->nbr; i > 0; i--) T->colptr[i] = T->colptr[i - 1];
    T->colptr[0] = 0;
    *AT = T;
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_csr_transpose(sbm_ctx *ctx, const sbm_csr *A, sbm_csr **AT)
{
    *AT = NULL;
    sbm_csr *T;
    SBM__TRY(sbm__csr_alloc(ctx, A->n, A->m, A->nnz, &T));
    memset(T->rowptr, 0, (size_t)(A->n + 1) * sizeof(int64_t));
    for (int64_t p = 0; p < A->nnz; p++) T->rowptr[A->colind[p] + 1]++;
    for (int64_t j = 0; j < A->n; j++) T->rowptr[j + 1] += T->rowptr[j];
    for (int64_t i = 0; i < A->m; i++) {
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            int64_t q = T->rowptr[A->colind[p]]++;
            T->colind[q] = (int32_t)i;
            T->values[q] = A->values[p];
        }
    }
    for (int64_t j = A->n; j > 0; j--) T->rowptr[j] = T->rowptr[j - 1];
    T->rowptr[0] = 0;
    *AT = T;
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_cbc_to_csr(sbm_ctx *ctx, const sbm_cbc *A, sbm_csr **B)
{
    *B = NULL;
    int r = A->r, c = A->c;
    int64_t m = A->nbr * r, n = A->nbc * c;
    /* blocks per block row, then each scalar row of block row i has cnt[i]*c entries */
    int64_t *cnt = sbm__host_alloc(ctx, (size_t)(A->nbr + 1) * sizeof(int64_t), "row counts");
    if (!cnt) return SBM_ERR_OUT_OF_MEMORY;
    memset(cnt, 0, (size_t)(A->nbr + 1) * sizeof(int64_t));
    for (int64_t p = 0; p < A->nnzb; p++) cnt[A->rowind[p]]++;
    sbm_csr *S;
    sbm_status st = sbm__csr_alloc(ctx, m, n, A->nnzb * r * c, &S);
    if (st != SBM_SUCCESS) {
        sbm__host_free(ctx, cnt);
        return st;
    }
    S->rowptr[0] = 0;
    for (int64_t i = 0; i < A->nbr; i++)
        for (int ii = 0; ii < r; ii++) S->rowptr[i * r + ii + 1] = S->rowptr[i * r + ii] + cnt[i] * c;
    /* next free slot of each scalar row; columns visited in increasing order keep rows sorted */
    int64_t *next = sbm__host_alloc(ctx, (size_t)(m + 1) * sizeof(int64_t), "row cursors");
    if (!next) {
        sbm__host_free(ctx, cnt);
        sbm_csr_destroy(S);
        return SBM_ERR_OUT_OF_MEMORY;
    }
    memcpy(next, S->rowptr, (size_t)(m + 1) * sizeof(int64_t));
    for (int64_t j = 0; j < A->nbc; j++) {
        for (int64_t p = A->colptr[j]; p < A->colptr[j + 1]; p++) {
            const double *blk = A->values + (size_t)p * r * c;
            int64_t i = A->rowind[p];
            for (int ii = 0; ii < r; ii++) {
                int64_t q = next[i * r + ii];
                for (int jj = 0; jj < c; jj++) {
                    S->colind[q + jj] = (int32_t)(j * c + jj);
                    S->values[q + jj] = blk[ii + jj * r];
                }
                next[i * r + ii] = q + c;
            }
        }
    }
    sbm__host_free(ctx, next);
    sbm__host_free(ctx, cnt);
    *B = S;
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_csr_to_cbc(sbm_ctx *ctx, const sbm_csr *A, int r, int c, sbm_cbc **B)
{
    /* Pass over scalar rows grouped by block row: mark the block columns present (sorted by
     * a per-block-row sweep over the marker), then scatter values. */
    *B = NULL;
    int64_t nbr = A->m / r, nbc = A->n / c;
    size_t rc = (size_t)r * c;
    int64_t *mark = sbm__host_alloc(ctx, (size_t)(nbc > 0 ? nbc : 1) * sizeof(int64_t), "block marks");
    int64_t *cnt = mark ? sbm__host_alloc(ctx, (size_t)(nbc + 1) * sizeof(int64_t), "column counts") : NULL;
    if (!cnt) {
        sbm__host_free(ctx, mark);
        return SBM_ERR_OUT_OF_MEMORY;
    }
    for (int64_t j = 0; j < nbc; j++) mark[j] = -1;
    memset(cnt, 0, (size_t)(nbc + 1) * sizeof(int64_t));
    int64_t nnzb = 0;
    for (int64_t i = 0; i < nbr; i++)
        for (int64_t row = i * r; row < (i + 1) * r; row++)
            for (int64_t p = A->rowptr[row]; p < A->rowptr[row + 1]; p++) {
                int64_t j = A->colind[p] / c;
                if (mark[j] != i) {
                    mark[j] = i;
                    cnt[j + 1]++;
                    nnzb++;
                }
            }
    sbm_cbc *M;
    sbm_status st = sbm__cbc_alloc(ctx, nbr, nbc, r, c, nnzb, &M);
    if (st != SBM_SUCCESS) {
        sbm__host_free(ctx, cnt);
        sbm__host_free(ctx, mark);
        return st;
    }
    for (int64_t j = 0; j < nbc; j++) cnt[j + 1] += cnt[j];
    memcpy(M->colptr, cnt, (size_t)(nbc + 1) * sizeof(int64_t));
    memset(M->values, 0, (size_t)nnzb * rc * sizeof(double));
    /* block rows in increasing order fill each column sorted; mark[j] = slot of (i, j) */
    for (int64_t j = 0; j < nbc; j++) mark[j] = -1;
    int64_t *slot = cnt; /* reused as the next free position of each column */
    for (int64_t i = 0; i < nbr; i++) {
        for (int64_t row = i * r; row < (i + 1) * r; row++) {
            for (int64_t p = A->rowptr[row]; p < A->rowptr[row + 1]; p++) {
                int64_t j = A->colind[p] / c;
                if (mark[j] < 0 || M->rowind[mark[j]] != i) {
                    mark[j] = slot[j]++;
                    M->rowind[mark[j]] = (int32_t)i;
                }
                M->values[(size_t)mark[j] * rc + (size_t)(row - i * r) + (size_t)(A->colind[p] - j * c) * r] =
                    A->values[p];
            }
        }
    }
    sbm__host_free(ctx, cnt);
    sbm__host_free(ctx, mark);
    *B = M;
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_cbc_to_bsr(sbm_ctx *ctx, const sbm_cbc *A, sbm_layout layout, int64_t *rowptr,
                               int32_t *colind, double *values)
{
    /* BSR arrays of A = CBC arrays of A^T, whose c x r column-major blocks are A's blocks in
     * row-major order; for column-major BSR blocks, transpose each block back. */
    sbm_cbc *T;
    SBM__TRY(sbm__cpu_cbc_transpose(ctx, A, &T));
    int r = A->r, c = A->c;
    size_t rc = (size_t)r * c;
    memcpy(rowptr, T->colptr, (size_t)(A->nbr + 1) * sizeof(int64_t));
    if (A->nnzb > 0) memcpy(colind, T->rowind, (size_t)A->nnzb * sizeof(int32_t));
    for (int64_t k = 0; k < A->nnzb; k++) {
        const double *src = T->values + (size_t)k * rc; /* = A block, row-major */
        double *dst = values + (size_t)k * rc;
        if (layout == SBM_LAYOUT_ROW_MAJOR)
            memcpy(dst, src, rc * sizeof(double));
        else
            for (int ii = 0; ii < r; ii++)
                for (int jj = 0; jj < c; jj++) dst[ii + jj * r] = src[ii * c + jj];
    }
    sbm_cbc_destroy(T);
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_cbc_add(sbm_ctx *ctx, double alpha, const sbm_cbc *A, double beta,
                            const sbm_cbc *B, sbm_cbc **C)
{
    /* Two passes over the merged columns: count, then fill. */
    *C = NULL;
    size_t rc = (size_t)A->r * A->c;
    int64_t nnzb = 0;
    for (int64_t j = 0; j < A->nbc; j++) {
        int64_t p = A->colptr[j], pe = A->colptr[j + 1], q = B->colptr[j], qe = B->colptr[j + 1];
        while (p < pe || q < qe) {
            if (q >= qe || (p < pe && A->rowind[p] < B->rowind[q])) p++;
            else if (p >= pe || B->rowind[q] < A->rowind[p]) q++;
            else p++, q++;
            nnzb++;
        }
    }
    sbm_cbc *M;
    SBM__TRY(sbm__cbc_alloc(ctx, A->nbr, A->nbc, A->r, A->c, nnzb, &M));
    int64_t k = 0;
    M->colptr[0] = 0;
    for (int64_t j = 0; j < A->nbc; j++) {
        int64_t p = A->colptr[j], pe = A->colptr[j + 1], q = B->colptr[j], qe = B->colptr[j + 1];
        while (p < pe || q < qe) {
            double *dst = M->values + (size_t)k * rc;
            const double *a = NULL, *b = NULL;
            if (q >= qe || (p < pe && A->rowind[p] < B->rowind[q])) {
                M->rowind[k] = A->rowind[p];
                a = A->values + (size_t)p++ * rc;
            } else if (p >= pe || B->rowind[q] < A->rowind[p]) {
                M->rowind[k] = B->rowind[q];
                b = B->values + (size_t)q++ * rc;
            } else {
                M->rowind[k] = A->rowind[p];
                a = A->values + (size_t)p++ * rc;
                b = B->values + (size_t)q++ * rc;
            }
            for (size_t e = 0; e < rc; e++)
                dst[e] = (a ? alpha * a[e] : 0.0) + (b ? beta * b[e] : 0.0);
            k++;
        }
        M->colptr[j + 1] = k;
    }
    *C = M;
    return SBM_SUCCESS;
}
