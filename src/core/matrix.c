/* SPDX-License-Identifier: BSD-3-Clause */
/* Allocation, filling and release of both matrix kinds, in one place: the struct, the three
 * arrays (pointers, indices, values), filling them from another memory space or the host, and
 * freeing. cbc.c and csr.c hold the public operations, host_build.c the builders from host data;
 * all of them build on this file, which calls none of them. */
#include "sbm_internal.h"

#include <stdlib.h>
#include <string.h>

void *sbm__matrix_struct(sbm_ctx *ctx, size_t bytes)
{
    /* the struct too goes through the context's allocator on the CPU backend (host scratch
     * elsewhere), so that an allocator hook sees and can fail every allocation */
    void *M = sbm__host_alloc(ctx, bytes, "a matrix");
    if (M) memset(M, 0, bytes);
    return M;
}

sbm_status sbm__matrix_arrays(sbm_ctx *ctx, int64_t nptr, int64_t nind, size_t vbytes,
                              const char *const what[3], int64_t **ptr, int32_t **ind,
                              double **values)
{
    *ptr = sbm__alloc(ctx, (size_t)nptr * sizeof(int64_t), what[0]);
    *ind = *ptr ? sbm__alloc(ctx, (size_t)nind * sizeof(int32_t), what[1]) : NULL;
    *values = *ind ? sbm__alloc(ctx, vbytes, what[2]) : NULL;
    return *values ? SBM_SUCCESS : SBM_ERR_OUT_OF_MEMORY;
}

void sbm__matrix_free(void *M, sbm_backend backend, int owns, const sbm_allocator *al,
                      void *ptr, void *ind, void *values)
{
    if (owns) {
        if (ptr) al->free(al->user, ptr);
        if (ind) al->free(al->user, ind);
        if (values) al->free(al->user, values);
    }
    /* a CPU matrix's struct came from its allocator (sbm__matrix_struct), others' from malloc */
    if (backend == SBM_BACKEND_CPU)
        al->free(al->user, M);
    else
        free(M);
}

sbm_status sbm__matrix_fill(sbm_ctx *ctx, const struct sbm__backend_ops *src_ops,
                            sbm_backend src_backend, int64_t *ptr, int32_t *ind, double *values,
                            const int64_t *src_ptr, const int32_t *src_ind,
                            const double *src_values, int64_t nptr, int64_t nind, size_t nval)
{
    SBM__TRY(sbm__copy_between(ctx, src_ops, src_backend, ptr, src_ptr,
                               (size_t)nptr * sizeof(int64_t)));
    SBM__TRY(sbm__copy_between(ctx, src_ops, src_backend, ind, src_ind,
                               (size_t)nind * sizeof(int32_t)));
    if (src_values)
        return sbm__copy_between(ctx, src_ops, src_backend, values, src_values,
                                 nval * sizeof(double));
    return nval > 0 ? ctx->ops->memset0(ctx, values, nval * sizeof(double)) : SBM_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* CBC and CSR                                                                              */
/* ---------------------------------------------------------------------------------------- */

/* Struct and arrays in ctx's memory space; colptr has nbc+1 entries. */
sbm_status sbm__cbc_alloc(sbm_ctx *ctx, int64_t nbr, int64_t nbc, int r, int c, int64_t nnzb,
                          sbm_cbc **out)
{
    static const char *const what[3] = {"column pointers", "block-row indices", "block values"};
    *out = NULL;
    int ok;
    size_t nval = sbm__mul_size(ctx, (size_t)nnzb, (size_t)r * (size_t)c, "block values", &ok);
    if (!ok) return SBM_ERR_OVERFLOW;
    size_t vbytes = sbm__mul_size(ctx, nval, sizeof(double), "block values", &ok);
    if (!ok) return SBM_ERR_OVERFLOW;
    sbm_cbc *A = sbm__matrix_struct(ctx, sizeof *A);
    if (!A) return SBM_ERR_OUT_OF_MEMORY;
    *A = (sbm_cbc){.nbr = nbr, .nbc = nbc, .r = r, .c = c, .nnzb = nnzb};
    SBM__MATRIX_OWNER(A, ctx, 1);
    sbm_status st =
        sbm__matrix_arrays(ctx, nbc + 1, nnzb, vbytes, what, &A->colptr, &A->rowind, &A->values);
    if (st != SBM_SUCCESS) {
        sbm_cbc_destroy(A);
        return st;
    }
    *out = A;
    return SBM_SUCCESS;
}

void sbm_cbc_destroy(sbm_cbc *A)
{
    if (A) sbm__matrix_free(A, A->backend, A->owns, &A->allocator, A->colptr, A->rowind, A->values);
}

sbm_status sbm__csr_alloc(sbm_ctx *ctx, int64_t m, int64_t n, int64_t nnz, sbm_csr **out)
{
    static const char *const what[3] = {"row pointers", "column indices", "values"};
    *out = NULL;
    int ok;
    size_t vbytes = sbm__mul_size(ctx, (size_t)nnz, sizeof(double), "values", &ok);
    if (!ok) return SBM_ERR_OVERFLOW;
    sbm_csr *A = sbm__matrix_struct(ctx, sizeof *A);
    if (!A) return SBM_ERR_OUT_OF_MEMORY;
    *A = (sbm_csr){.m = m, .n = n, .nnz = nnz};
    SBM__MATRIX_OWNER(A, ctx, 1);
    sbm_status st =
        sbm__matrix_arrays(ctx, m + 1, nnz, vbytes, what, &A->rowptr, &A->colind, &A->values);
    if (st != SBM_SUCCESS) {
        sbm_csr_destroy(A);
        return st;
    }
    *out = A;
    return SBM_SUCCESS;
}

void sbm_csr_destroy(sbm_csr *A)
{
    if (A) sbm__matrix_free(A, A->backend, A->owns, &A->allocator, A->rowptr, A->colind, A->values);
}

/* New matrix in ctx with the given (already validated) host arrays. */
sbm_status sbm__cbc_upload(sbm_ctx *ctx, int64_t nbr, int64_t nbc, int r, int c,
                           const int64_t *h_colptr, const int32_t *h_rowind,
                           const double *h_values, sbm_cbc **A)
{
    *A = NULL;
    int64_t nnzb = h_colptr[nbc];
    sbm_cbc *M;
    SBM__TRY(sbm__cbc_alloc(ctx, nbr, nbc, r, c, nnzb, &M));
    sbm_status st = sbm__matrix_fill(ctx, ctx->ops, SBM_BACKEND_CPU, M->colptr, M->rowind,
                                     M->values, h_colptr, h_rowind, h_values, nbc + 1, nnzb,
                                     (size_t)nnzb * r * c);
    if (st != SBM_SUCCESS) {
        sbm_cbc_destroy(M);
        return st;
    }
    *A = M;
    return SBM_SUCCESS;
}

sbm_status sbm__csr_upload(sbm_ctx *ctx, int64_t m, int64_t n, const int64_t *h_rowptr,
                           const int32_t *h_colind, const double *h_values, sbm_csr **A)
{
    *A = NULL;
    int64_t nnz = h_rowptr[m];
    sbm_csr *M;
    SBM__TRY(sbm__csr_alloc(ctx, m, n, nnz, &M));
    sbm_status st = sbm__matrix_fill(ctx, ctx->ops, SBM_BACKEND_CPU, M->rowptr, M->colind,
                                     M->values, h_rowptr, h_colind, h_values, m + 1, nnz,
                                     (size_t)nnz);
    if (st != SBM_SUCCESS) {
        sbm_csr_destroy(M);
        return st;
    }
    *A = M;
    return SBM_SUCCESS;
}
