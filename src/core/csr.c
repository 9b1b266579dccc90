/* SPDX-License-Identifier: BSD-3-Clause */
/* Scalar CSR matrices: the public operations (create, wrap, check, copy, transpose); their
 * allocation and release are in matrix.c. */
#include "sbm_internal.h"

#include <inttypes.h>

sbm_csr_info sbm_csr_get_info(const sbm_csr *A)
{
    if (!A) return (sbm_csr_info){0};
    return (sbm_csr_info){.m = A->m, .n = A->n, .nnz = A->nnz, .rowptr = A->rowptr,
                          .colind = A->colind, .values = A->values, .backend = A->backend,
                          .device = A->device};
}

sbm_status sbm_csr_create(sbm_ctx *ctx, sbm_csr **A, int64_t m, int64_t n, const int64_t *h_rowptr,
                          const int32_t *h_colind, const double *h_values)
{
    SBM__ENTER(ctx, "sbm_csr_create");
    if (!A) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument A (output handle) is NULL");
    *A = NULL;
    SBM__TRY(sbm__check_csr_dims(ctx, m, n));
    if (!h_rowptr) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument h_rowptr is NULL");
    if (h_rowptr[m] > 0 && !h_colind)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT,
                          "argument h_colind is NULL but rowptr[m] = %" PRId64, h_rowptr[m]);
    SBM__TRY(sbm__validate_csr_host(ctx, "rowptr/colind", m, n, h_rowptr, h_colind, NULL, 0));
    return sbm__csr_upload(ctx, m, n, h_rowptr, h_colind, h_values, A);
}

sbm_status sbm_csr_wrap(sbm_ctx *ctx, sbm_csr **A, int64_t m, int64_t n, int64_t *rowptr,
                        int32_t *colind, double *values)
{
    SBM__ENTER(ctx, "sbm_csr_wrap");
    if (!A) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument A (output handle) is NULL");
    *A = NULL;
    SBM__TRY(sbm__check_csr_dims(ctx, m, n));
    if (!rowptr || !colind || !values)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument %s is NULL",
                          !rowptr ? "rowptr" : !colind ? "colind" : "values");
    int64_t nnz = 0;
    SBM__TRY(ctx->ops->copy(ctx, &nnz, rowptr + m, sizeof nnz, 1));
    sbm_csr *M = sbm__matrix_struct(ctx, sizeof *M);
    if (!M) return SBM_ERR_OUT_OF_MEMORY;
    *M = (sbm_csr){.m = m, .n = n, .nnz = nnz, .rowptr = rowptr, .colind = colind,
                   .values = values};
    SBM__MATRIX_OWNER(M, ctx, 0);
    sbm_status st = ctx->ops->csr_validate(ctx, "rowptr/colind", M, 0);
    if (st != SBM_SUCCESS) {
        sbm__host_free(ctx, M);
        return st;
    }
    *A = M;
    return SBM_SUCCESS;
}

sbm_status sbm_csr_check(sbm_ctx *ctx, const sbm_csr *A, int check_finite)
{
    SBM__ENTER(ctx, "sbm_csr_check");
    SBM__TRY(sbm__check_csr_arg(ctx, "A", A));
    SBM__TRY(sbm__check_csr_dims(ctx, A->m, A->n));
    return ctx->ops->csr_validate(ctx, "A", A, check_finite);
}

sbm_status sbm_csr_copy(sbm_ctx *ctx, const sbm_csr *src, sbm_csr **dst)
{
    SBM__ENTER(ctx, "sbm_csr_copy");
    if (!dst) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument dst (output handle) is NULL");
    *dst = NULL;
    if (!src) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument src is NULL");
    sbm_csr *M;
    SBM__TRY(sbm__csr_alloc(ctx, src->m, src->n, src->nnz, &M));
    sbm_status st = sbm__matrix_fill(ctx, src->ops, src->backend, M->rowptr, M->colind, M->values,
                                     src->rowptr, src->colind, src->values, src->m + 1, src->nnz,
                                     (size_t)src->nnz);
    if (st != SBM_SUCCESS) {
        sbm_csr_destroy(M);
        return st;
    }
    M->pattern_id = src->pattern_id;
    *dst = M;
    return SBM_SUCCESS;
}

sbm_status sbm_csr_transpose(sbm_ctx *ctx, const sbm_csr *A, sbm_csr **AT)
{
    SBM__ENTER(ctx, "sbm_csr_transpose");
    if (!AT) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument AT (output handle) is NULL");
    *AT = NULL;
    SBM__TRY(sbm__check_csr_arg(ctx, "A", A));
    if (A->m > (int64_t)INT32_MAX + 1)
        return sbm__error(ctx, SBM_ERR_OVERFLOW,
                          "argument A: %" PRId64 " rows exceed the int32 column index range of the "
                          "transpose", A->m);
    return ctx->ops->csr_transpose(ctx, A, AT);
}
