/* SPDX-License-Identifier: BSD-3-Clause */
/* CBC matrices: the public operations (create, wrap, check, copy, conversions, add); their
 * allocation and release are in matrix.c. */
#include "sbm_internal.h"

#include <inttypes.h>
#include <string.h>

sbm_cbc_info sbm_cbc_get_info(const sbm_cbc *A)
{
    if (!A) return (sbm_cbc_info){0};
    return (sbm_cbc_info){.nbr = A->nbr, .nbc = A->nbc, .r = A->r, .c = A->c, .nnzb = A->nnzb,
                          .colptr = A->colptr, .rowind = A->rowind, .values = A->values,
                          .backend = A->backend, .device = A->device};
}

sbm_status sbm_cbc_create(sbm_ctx *ctx, sbm_cbc **A, int64_t nbr, int64_t nbc, int r, int c,
                          const int64_t *h_colptr, const int32_t *h_rowind, const double *h_values)
{
    SBM__ENTER(ctx, "sbm_cbc_create");
    if (!A) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument A (output handle) is NULL");
    *A = NULL;
    SBM__TRY(sbm__check_cbc_dims(ctx, nbr, nbc, r, c));
    if (!h_colptr) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument h_colptr is NULL");
    int64_t nnzb = h_colptr[nbc];
    if (nnzb > 0 && !h_rowind)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT,
                          "argument h_rowind is NULL but colptr[nbc] = %" PRId64, nnzb);
    SBM__TRY(sbm__validate_cbc_host(ctx, "colptr/rowind", nbr, nbc, r, c, h_colptr, h_rowind,
                                    NULL, 0));
    return sbm__cbc_upload(ctx, nbr, nbc, r, c, h_colptr, h_rowind, h_values, A);
}

sbm_status sbm_cbc_wrap(sbm_ctx *ctx, sbm_cbc **A, int64_t nbr, int64_t nbc, int r, int c,
                        int64_t *colptr, int32_t *rowind, double *values)
{
    SBM__ENTER(ctx, "sbm_cbc_wrap");
    if (!A) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument A (output handle) is NULL");
    *A = NULL;
    SBM__TRY(sbm__check_cbc_dims(ctx, nbr, nbc, r, c));
    if (!colptr) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument colptr is NULL");
    if (!rowind || !values)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument %s is NULL",
                          !rowind ? "rowind" : "values");
    int64_t nnzb = 0;
    SBM__TRY(ctx->ops->copy(ctx, &nnzb, colptr + nbc, sizeof nnzb, 1));
    sbm_cbc *M = sbm__matrix_struct(ctx, sizeof *M);
    if (!M) return SBM_ERR_OUT_OF_MEMORY;
    *M = (sbm_cbc){.nbr = nbr, .nbc = nbc, .r = r, .c = c, .nnzb = nnzb, .colptr = colptr,
                   .rowind = rowind, .values = values};
    SBM__MATRIX_OWNER(M, ctx, 0);
    sbm_status st = ctx->ops->cbc_validate(ctx, "colptr/rowind", M, 0);
    if (st != SBM_SUCCESS) {
        sbm__host_free(ctx, M);
        return st;
    }
    *A = M;
    return SBM_SUCCESS;
}

sbm_status sbm_cbc_check(sbm_ctx *ctx, const sbm_cbc *A, int check_finite)
{
    SBM__ENTER(ctx, "sbm_cbc_check");
    SBM__TRY(sbm__check_cbc_arg(ctx, "A", A));
    SBM__TRY(sbm__check_cbc_dims(ctx, A->nbr, A->nbc, A->r, A->c));
    return ctx->ops->cbc_validate(ctx, "A", A, check_finite);
}

sbm_status sbm__cbc_copy(sbm_ctx *ctx, const sbm_cbc *src, sbm_cbc **dst)
{
    *dst = NULL;
    sbm_cbc *M;
    SBM__TRY(sbm__cbc_alloc(ctx, src->nbr, src->nbc, src->r, src->c, src->nnzb, &M));
    sbm_status st = sbm__matrix_fill(ctx, src->ops, src->backend, M->colptr, M->rowind, M->values,
                                     src->colptr, src->rowind, src->values, src->nbc + 1,
                                     src->nnzb, (size_t)src->nnzb * src->r * src->c);
    if (st != SBM_SUCCESS) {
        sbm_cbc_destroy(M);
        return st;
    }
    M->pattern_id = src->pattern_id; /* same pattern: plans made with src accept the copy */
    *dst = M;
    return SBM_SUCCESS;
}

sbm_status sbm_cbc_copy(sbm_ctx *ctx, const sbm_cbc *src, sbm_cbc **dst)
{
    SBM__ENTER(ctx, "sbm_cbc_copy");
    if (!dst) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument dst (output handle) is NULL");
    *dst = NULL;
    if (!src) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument src is NULL");
    return sbm__cbc_copy(ctx, src, dst);
}

sbm_status sbm_cbc_transpose(sbm_ctx *ctx, const sbm_cbc *A, sbm_cbc **AT)
{
    SBM__ENTER(ctx, "sbm_cbc_transpose");
    if (!AT) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument AT (output handle) is NULL");
    *AT = NULL;
    SBM__TRY(sbm__check_cbc_arg(ctx, "A", A));
    if (A->nbc > INT32_MAX)
        return sbm__error(ctx, SBM_ERR_OVERFLOW,
                          "argument A: %" PRId64 " block columns exceed the int32 index range of "
                          "the transpose's rows",
                          A->nbc);
    return ctx->ops->cbc_transpose(ctx, A, AT);
}

sbm_status sbm_cbc_to_csr(sbm_ctx *ctx, const sbm_cbc *A, sbm_csr **B)
{
    SBM__ENTER(ctx, "sbm_cbc_to_csr");
    if (!B) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument B (output handle) is NULL");
    *B = NULL;
    SBM__TRY(sbm__check_cbc_arg(ctx, "A", A));
    if (A->nbc * A->c > (int64_t)INT32_MAX + 1)
        return sbm__error(ctx, SBM_ERR_OVERFLOW,
                          "argument A: %" PRId64 " scalar columns exceed the int32 column index range",
                          A->nbc * A->c);
    return ctx->ops->cbc_to_csr(ctx, A, B);
}

sbm_status sbm_csr_to_cbc(sbm_ctx *ctx, const sbm_csr *A, int r, int c, sbm_cbc **B)
{
    SBM__ENTER(ctx, "sbm_csr_to_cbc");
    if (!B) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument B (output handle) is NULL");
    *B = NULL;
    SBM__TRY(sbm__check_csr_arg(ctx, "A", A));
    SBM__TRY(sbm__check_block_shape(ctx, "r/c", r, c));
    if (A->m % r != 0 || A->n % c != 0)
        return sbm__error(ctx, SBM_ERR_BLOCK_SHAPE,
                          "argument r/c: a %" PRId64 " x %" PRId64 " matrix cannot be divided into "
                          "%dx%d blocks (%s)",
                          A->m, A->n, r, c,
                          A->m % r != 0 ? (A->n % c != 0 ? "neither dimension is divisible"
                                                         : "the row count is not divisible")
                                        : "the column count is not divisible");
    return ctx->ops->csr_to_cbc(ctx, A, r, c, B);
}

sbm_status sbm_cbc_reblock(sbm_ctx *ctx, const sbm_cbc *A, int r, int c, sbm_cbc **B)
{
    SBM__ENTER(ctx, "sbm_cbc_reblock");
    if (!B) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument B (output handle) is NULL");
    *B = NULL;
    SBM__TRY(sbm__check_cbc_arg(ctx, "A", A));
    SBM__TRY(sbm__check_block_shape(ctx, "r/c", r, c));
    int64_t m = A->nbr * A->r, n = A->nbc * A->c;
    if (m % r != 0 || n % c != 0)
        return sbm__error(ctx, SBM_ERR_BLOCK_SHAPE,
                          "argument r/c: a %" PRId64 " x %" PRId64 " matrix cannot be divided into "
                          "%dx%d blocks",
                          m, n, r, c);
    if (n > (int64_t)INT32_MAX + 1)
        return sbm__error(ctx, SBM_ERR_OVERFLOW,
                          "argument A: %" PRId64 " scalar columns exceed the int32 column index range", n);
    sbm_csr *S;
    SBM__TRY(ctx->ops->cbc_to_csr(ctx, A, &S));
    sbm_status st = ctx->ops->csr_to_cbc(ctx, S, r, c, B);
    sbm_csr_destroy(S);
    return st;
}

sbm_status sbm_cbc_to_bsr(sbm_ctx *ctx, const sbm_cbc *A, sbm_layout block_layout, int64_t *rowptr,
                          int32_t *colind, double *values)
{
    SBM__ENTER(ctx, "sbm_cbc_to_bsr");
    SBM__TRY(sbm__check_cbc_arg(ctx, "A", A));
    if (!rowptr || ((!colind || !values) && A->nnzb > 0))
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument %s is NULL",
                          !rowptr ? "rowptr" : !colind ? "colind" : "values");
    if (block_layout != SBM_LAYOUT_ROW_MAJOR && block_layout != SBM_LAYOUT_COL_MAJOR)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "argument block_layout: %d is not a layout",
                          (int)block_layout);
    if (A->nbc > INT32_MAX)
        return sbm__error(ctx, SBM_ERR_OVERFLOW,
                          "argument A: %" PRId64 " block columns exceed the int32 index range", A->nbc);
    return ctx->ops->cbc_to_bsr(ctx, A, block_layout, rowptr, colind, values);
}

sbm_status sbm_cbc_from_bsr(sbm_ctx *ctx, sbm_cbc **A, int64_t nbr, int64_t nbc, int r, int c,
                            sbm_layout block_layout, const int64_t *rowptr, const int32_t *colind,
                            const double *values)
{
    SBM__ENTER(ctx, "sbm_cbc_from_bsr");
    if (!A) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument A (output handle) is NULL");
    *A = NULL;
    if (block_layout != SBM_LAYOUT_ROW_MAJOR && block_layout != SBM_LAYOUT_COL_MAJOR)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "argument block_layout: %d is not a layout",
                          (int)block_layout);
    SBM__TRY(sbm__check_cbc_dims(ctx, nbr, nbc, r, c));
    if (nbc > INT32_MAX)
        return sbm__error(ctx, SBM_ERR_OVERFLOW,
                          "argument nbc: %" PRId64 " block columns exceed the int32 index range", nbc);
    if (!rowptr || !colind || !values)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument %s is NULL",
                          !rowptr ? "rowptr" : !colind ? "colind" : "values");
    /* BSR of A with r x c blocks has the arrays of the CBC of A^T with c x r blocks (a row-major
     * r x c block is the column-major c x r block of the transpose): validate that view on the
     * host, then transpose it. */
    const int on_host = ctx->backend == SBM_BACKEND_CPU;
    int64_t nnzb = 0;
    SBM__TRY(ctx->ops->copy(ctx, &nnzb, rowptr + nbr, sizeof nnzb, 1));
    if (nnzb < 0)
        return sbm__error(ctx, SBM_ERR_INVALID_POINTERS, "argument rowptr: rowptr[nbr] is %" PRId64,
                          nnzb);
    size_t rc = (size_t)r * c;
    int64_t *h_ptr = (int64_t *)rowptr;
    int32_t *h_ind = (int32_t *)colind;
    double *h_val = (double *)values;
    sbm_status st = SBM_SUCCESS;
    if (!on_host) {
        h_ptr = sbm__host_alloc(ctx, (size_t)(nbr + 1) * sizeof(int64_t), "host row pointers");
        h_ind = h_ptr ? sbm__host_alloc(ctx, (size_t)nnzb * sizeof(int32_t), "host indices") : NULL;
        if (!h_ind) st = SBM_ERR_OUT_OF_MEMORY;
        if (st == SBM_SUCCESS)
            st = ctx->ops->copy(ctx, h_ptr, rowptr, (size_t)(nbr + 1) * sizeof(int64_t), 1);
        if (st == SBM_SUCCESS && nnzb > 0)
            st = ctx->ops->copy(ctx, h_ind, colind, (size_t)nnzb * sizeof(int32_t), 1);
    }
    if (st == SBM_SUCCESS)
        st = sbm__validate_cbc_host(ctx, "rowptr/colind", nbc, nbr, c, r, h_ptr, h_ind, NULL, 0);
    if (st == SBM_SUCCESS && (!on_host || block_layout == SBM_LAYOUT_COL_MAJOR)) {
        h_val = sbm__host_alloc(ctx, (size_t)nnzb * rc * sizeof(double), "host block values");
        if (!h_val) st = SBM_ERR_OUT_OF_MEMORY;
        if (st == SBM_SUCCESS && nnzb > 0)
            st = on_host ? (memcpy(h_val, values, (size_t)nnzb * rc * sizeof(double)), SBM_SUCCESS)
                         : ctx->ops->copy(ctx, h_val, values, (size_t)nnzb * rc * sizeof(double), 1);
        if (st == SBM_SUCCESS && block_layout == SBM_LAYOUT_COL_MAJOR) {
            double tmp[SBM_MAX_BLOCK_DIM * SBM_MAX_BLOCK_DIM];
            for (int64_t k = 0; k < nnzb; k++) {
                double *b = h_val + (size_t)k * rc;
                for (int i = 0; i < r; i++)
                    for (int j = 0; j < c; j++) tmp[i * c + j] = b[i + j * r];
                memcpy(b, tmp, rc * sizeof(double));
            }
        }
    }
    if (st == SBM_SUCCESS)
        st = sbm__cbc_from_host_transposed(ctx, nbr, nbc, r, c, h_ptr, h_ind, h_val, A);
    if (h_val != values) sbm__host_free(ctx, h_val);
    if (!on_host) {
        sbm__host_free(ctx, h_ind);
        sbm__host_free(ctx, h_ptr);
    }
    return st;
}

sbm_status sbm_cbc_add(sbm_ctx *ctx, double alpha, const sbm_cbc *A, double beta, const sbm_cbc *B,
                       sbm_cbc **C)
{
    SBM__ENTER(ctx, "sbm_cbc_add");
    if (!C) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument C (output handle) is NULL");
    *C = NULL;
    SBM__TRY(sbm__check_cbc_arg(ctx, "A", A));
    SBM__TRY(sbm__check_cbc_arg(ctx, "B", B));
    if (A->r != B->r || A->c != B->c)
        return sbm__error(ctx, SBM_ERR_BLOCK_SHAPE, "A has %dx%d blocks but B has %dx%d", A->r,
                          A->c, B->r, B->c);
    if (A->nbr != B->nbr || A->nbc != B->nbc)
        return sbm__error(ctx, SBM_ERR_DIMENSION_MISMATCH,
                          "A is %" PRId64 " x %" PRId64 " blocks but B is %" PRId64 " x %" PRId64
                          " blocks",
                          A->nbr, A->nbc, B->nbr, B->nbc);
    return ctx->ops->cbc_add(ctx, alpha, A, beta, B, C);
}
