/* Scalar CSR matrices: lifecycle, validation, copies, transpose. */
#include "sbm_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

sbm_status sbm__csr_alloc(sbm_ctx *ctx, int64_t m, int64_t n, int64_t nnz, sbm_csr **out)
{
    *out = NULL;
    int ok;
    size_t vbytes = sbm__mul_size(ctx, (size_t)nnz, sizeof(double), "values", &ok);
    if (!ok) return SBM_ERR_OVERFLOW;
    /* the struct too goes through the context's allocator on the CPU backend (host scratch
     * elsewhere), so that an allocator hook sees and can fail every allocation */
    sbm_csr *A = sbm__host_alloc(ctx, sizeof *A, "a matrix");
    if (!A) return SBM_ERR_OUT_OF_MEMORY;
    memset(A, 0, sizeof *A);
    A->m = m;
    A->n = n;
    A->nnz = nnz;
    A->backend = ctx->backend;
    A->device = ctx->device;
    A->owns = 1;
    A->allocator = ctx->allocator;
    A->ops = ctx->ops;
    A->pattern_id = sbm__new_pattern_id();
    A->rowptr = sbm__alloc(ctx, (size_t)(m + 1) * sizeof(int64_t), "row pointers");
    A->colind = A->rowptr ? sbm__alloc(ctx, (size_t)nnz * sizeof(int32_t), "column indices") : NULL;
    A->values = A->colind ? sbm__alloc(ctx, vbytes, "values") : NULL;
    if (!A->values) {
        sbm_csr_destroy(A);
        return SBM_ERR_OUT_OF_MEMORY;
    }
    *out = A;
    return SBM_SUCCESS;
}

void sbm_csr_destroy(sbm_csr *A)
{
    if (!A) return;
    if (A->owns) {
        if (A->rowptr) A->allocator.free(A->allocator.user, A->rowptr);
        if (A->colind) A->allocator.free(A->allocator.user, A->colind);
        if (A->values) A->allocator.free(A->allocator.user, A->values);
    }
    /* a CPU matrix's struct came from its allocator (see the alloc above), others' from malloc */
    if (A->backend == SBM_BACKEND_CPU)
        A->allocator.free(A->allocator.user, A);
    else
        free(A);
}

sbm_csr_info sbm_csr_get_info(const sbm_csr *A)
{
    sbm_csr_info info;
    memset(&info, 0, sizeof info);
    if (!A) return info;
    info.m = A->m;
    info.n = A->n;
    info.nnz = A->nnz;
    info.rowptr = A->rowptr;
    info.colind = A->colind;
    info.values = A->values;
    info.backend = A->backend;
    info.device = A->device;
    return info;
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
    sbm_csr *M = sbm__host_alloc(ctx, sizeof *M, "a matrix");
    if (!M) return SBM_ERR_OUT_OF_MEMORY;
    *M = (sbm_csr){.m = m, .n = n, .nnz = nnz, .rowptr = rowptr, .colind = colind,
                   .values = values, .backend = ctx->backend, .device = ctx->device, .owns = 0,
                   .allocator = ctx->allocator, .ops = ctx->ops,
                   .pattern_id = sbm__new_pattern_id()};
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
    sbm_status st = sbm__copy_between(ctx, src->ops, src->backend, M->rowptr, src->rowptr,
                                      (size_t)(src->m + 1) * sizeof(int64_t));
    if (st == SBM_SUCCESS)
        st = sbm__copy_between(ctx, src->ops, src->backend, M->colind, src->colind,
                               (size_t)src->nnz * sizeof(int32_t));
    if (st == SBM_SUCCESS)
        st = sbm__copy_between(ctx, src->ops, src->backend, M->values, src->values,
                               (size_t)src->nnz * sizeof(double));
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
