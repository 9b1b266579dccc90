/* SPDX-License-Identifier: BSD-3-Clause */
/* Scalar CSR SpMV plans: a format chosen once (cuda_csr_spmv.cu), its arrays built
 * (cuda_csr_spmv_plan_formats.cu), values updated in place, executed by the format's kernel. */
#include "cuda_csr_spmv.cuh"

#include <stdlib.h>
#include <string.h>

void sbm__cuda_spmv_plan_destroy(sbm_spmv_plan *plan)
{
    sbm__cuda_spmv_plan *P = (sbm__cuda_spmv_plan *)plan;
    if (!P) return;
    int cur = -1;
    if (cudaGetDevice(&cur) == cudaSuccess && cur != P->b.h.device) cudaSetDevice(P->b.h.device);
    void *arrays[] = {P->rowptr,  P->colind,  P->values,  P->tiles,   P->coo_row, P->coo_col,
                      P->coo_val, P->ell_col, P->ell_val, P->dia_off, P->dia_val};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        if (arrays[i]) P->al.free(P->al.user, arrays[i]);
    (void)cudaGetLastError();
    free(P);
}

sbm_status sbm__cuda_csr_spmv_plan(sbm_ctx *ctx, const sbm_csr *A, sbm_spmv_format format,
                                   sbm_spmv_plan **plan)
{
    sbm_status st = SBM_SUCCESS;
    sbm__cuda_scache empty, *e = NULL;
    sbm__cuda_spmv_plan *P = NULL;
    sbm__csr_kernel forced = {SBM__CSR_VECTOR, 2, 1, 0};
    int forced_set = 0;
    SBM__CK(sbm__cuda_enter(ctx));
    P = (sbm__cuda_spmv_plan *)calloc(1, sizeof *P);
    if (!P) {
        st = sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory for an SpMV plan",
                        sizeof *P);
        goto done;
    }
    P->al = ctx->allocator;
    P->b.h.device = ctx->device;
    memset(&empty, 0, sizeof empty);
    e = &empty;
    if (A->m > 0) SBM__CK(sbm__csr_stats(ctx, A, &e));
    if (format == SBM_SPMV_AUTO) SBM__CK(sbm__csr_choose_format(ctx, A, e, &format));
    /* a CSR format runs its own kernel; the tuning may pick that kernel's configuration */
    forced_set = sbm__csr_forced(ctx, A->m, A->nnz, &forced);
    P->k.kind = format == SBM_SPMV_CSR_SCALAR ? SBM__CSR_SCALAR
                : format == SBM_SPMV_CSR_MERGE ? SBM__CSR_MERGE
                                               : SBM__CSR_VECTOR;
    P->k.w = sbm__csr_vector_width(A->m, A->nnz);
    P->k.r = sbm__csr_vector_rows(P->k.w);
    P->k.cfg = SBM__MERGE_DEFAULT;
    if (forced_set && forced.kind == P->k.kind) P->k = forced;
    P->b.format = format;
    SBM__CK(sbm__csr_plan_build(ctx, P, A, e));
    *plan = (sbm_spmv_plan *)P;
    P = NULL;
done:
    if (P) sbm__cuda_spmv_plan_destroy((sbm_spmv_plan *)P);
    return st;
}

sbm_status sbm__cuda_csr_spmv_plan_update(sbm_ctx *ctx, sbm_spmv_plan *plan, const sbm_csr *A)
{
    sbm_status st = SBM_SUCCESS;
    SBM__CK(sbm__cuda_enter(ctx));
    if (A->m == 0 || A->nnz == 0) goto done;
    SBM__CK(sbm__csr_plan_refill(ctx, (sbm__cuda_spmv_plan *)plan, A));
done:
    return st;
}

sbm_status sbm__cuda_csr_spmv_plan_execute(sbm_ctx *ctx, const sbm_spmv_plan *plan, double alpha,
                                           const double *x, double beta, double *y)
{
    sbm_status st = SBM_SUCCESS;
    const sbm__cuda_spmv_plan *P = (const sbm__cuda_spmv_plan *)plan;
    const int64_t m = P->b.m;
    SBM__CK(sbm__cuda_enter(ctx));
    if (m == 0) goto done;
    if (P->b.nnz == 0) {
        SBM__CK(sbm__csr_launch_scale_y(ctx, m, alpha, beta, y));
        goto done;
    }
    switch (P->b.format) {
    case SBM_SPMV_CSR_SCALAR:
    case SBM_SPMV_CSR_VECTOR:
    case SBM_SPMV_CSR_MERGE:
        SBM__CK(sbm__csr_launch(ctx, P->k, m, P->rowptr, P->colind, P->values, P->tiles, P->ntiles, alpha, x,
                                beta, y));
        break;
    case SBM_SPMV_COO:
        SBM__CK(sbm__csr_launch_scale_y(ctx, m, 0.0, beta, y));
        SBM__CK(sbm__csr_launch_coo_add(ctx, m, P->coo_nnz, P->coo_row, P->coo_col, P->coo_val, alpha, x, y));
        break;
    case SBM_SPMV_ELL:
    case SBM_SPMV_HYB:
        SBM__CK(sbm__csr_launch_padded(ctx, P, alpha, x, beta, y));
        if (P->b.format == SBM_SPMV_HYB)
            SBM__CK(sbm__csr_launch_coo_add(ctx, m, P->coo_nnz, P->coo_row, P->coo_col, P->coo_val, alpha, x, y));
        break;
    case SBM_SPMV_DIA:
        SBM__CK(sbm__csr_launch_padded(ctx, P, alpha, x, beta, y));
        break;
    default:
        st = sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "argument plan: format %d is not a stored format",
                        (int)P->b.format);
        break;
    }
done:
    return st;
}
