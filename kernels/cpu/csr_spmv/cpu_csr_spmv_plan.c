/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU backend: CSR SpMV plans. The CPU has one SpMV kernel (sbm__cpu_csr_spmv, kernels/cpu/csr_{spmv,spmm,gemm}/),
 * so every format is computed from a CSR copy of A held by the plan and sbm_spmv_plan_format
 * reports SBM_SPMV_CSR_SCALAR. The ELL and DIA padding limits are still measured and applied
 * (sbm__spmv_check_fill), so a plan refused on one backend is refused on all. */
#include "cpu_backend.h"

#include <string.h>

typedef struct sbm__cpu_spmv_plan {
    sbm__spmv_plan_base b;     /* front-end header, format */
    sbm_allocator allocator;   /* made this struct and the arrays that follow it */
    sbm_csr A;                 /* the copy of A (arrays inside this allocation) */
} sbm__cpu_spmv_plan;

/* Occupied diagonals (distinct j - i) of A. */
static sbm_status sbm__cpu_count_diagonals(sbm_ctx *ctx, const sbm_csr *A, int64_t *ndiag)
{
    *ndiag = 0;
    if (A->nnz == 0) return SBM_SUCCESS;
    const size_t span = (size_t)(A->m + A->n - 1);
    unsigned char *seen = (unsigned char *)sbm__alloc(ctx, span, "the diagonal flags");
    if (!seen) return SBM_ERR_OUT_OF_MEMORY;
    memset(seen, 0, span);
    int64_t count = 0;
    for (int64_t i = 0; i < A->m; i++)
        for (int64_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++) {
            const size_t d = (size_t)((int64_t)A->colind[p] - i + A->m - 1);
            count += !seen[d];
            seen[d] = 1;
        }
    sbm__free(ctx, seen);
    *ndiag = count;
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_csr_spmv_plan(sbm_ctx *ctx, const sbm_csr *A, sbm_spmv_format format,
                                  sbm_spmv_plan **plan)
{
    if (format == SBM_SPMV_ELL) {
        int64_t width = 0;
        for (int64_t i = 0; i < A->m; i++)
            if (A->rowptr[i + 1] - A->rowptr[i] > width) width = A->rowptr[i + 1] - A->rowptr[i];
        SBM__TRY(sbm__spmv_check_fill(ctx, format, A->m, A->nnz, width));
    } else if (format == SBM_SPMV_DIA) {
        int64_t ndiag = 0;
        SBM__TRY(sbm__cpu_count_diagonals(ctx, A, &ndiag));
        SBM__TRY(sbm__spmv_check_fill(ctx, format, A->m, A->nnz, ndiag));
    }
    /* one allocation: the struct, then rowptr, values (8-byte aligned), colind */
    int ok1, ok2, ok3;
    const size_t head = (sizeof(sbm__cpu_spmv_plan) + 7) & ~(size_t)7;
    const size_t bp = sbm__mul_size(ctx, (size_t)A->m + 1, sizeof(int64_t), "the plan's rowptr", &ok1);
    const size_t bv = ok1 ? sbm__mul_size(ctx, (size_t)A->nnz, sizeof(double), "the plan's values", &ok2) : 0;
    const size_t bi = ok1 && ok2 ? sbm__mul_size(ctx, (size_t)A->nnz, sizeof(int32_t), "the plan's colind", &ok3) : 0;
    if (!ok1 || !ok2 || !ok3) return SBM_ERR_OVERFLOW;
    if (bp + bv > SIZE_MAX - head - bi)
        return sbm__error(ctx, SBM_ERR_OVERFLOW, "the plan's copy of A (%zu + %zu + %zu bytes) "
                          "overflows size_t", bp, bv, bi);
    char *mem = (char *)sbm__alloc(ctx, head + bp + bv + bi, "an SpMV plan");
    if (!mem) return SBM_ERR_OUT_OF_MEMORY;
    sbm__cpu_spmv_plan *P = (sbm__cpu_spmv_plan *)mem;
    memset(P, 0, sizeof *P);
    P->allocator = ctx->allocator;
    P->b.format = SBM_SPMV_CSR_SCALAR;
    P->A = *A;
    P->A.rowptr = (int64_t *)(mem + head);
    P->A.values = (double *)(mem + head + bp);
    P->A.colind = (int32_t *)(mem + head + bp + bv);
    P->A.owns = 0;
    memcpy(P->A.rowptr, A->rowptr, bp);
    if (bv) memcpy(P->A.values, A->values, bv);
    if (bi) memcpy(P->A.colind, A->colind, bi);
    *plan = (sbm_spmv_plan *)P;
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_csr_spmv_plan_update(sbm_ctx *ctx, sbm_spmv_plan *plan, const sbm_csr *A)
{
    (void)ctx;
    sbm__cpu_spmv_plan *P = (sbm__cpu_spmv_plan *)plan;
    if (A->nnz > 0) memcpy(P->A.values, A->values, (size_t)A->nnz * sizeof(double));
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_csr_spmv_plan_execute(sbm_ctx *ctx, const sbm_spmv_plan *plan, double alpha,
                                          const double *x, double beta, double *y)
{
    const sbm__cpu_spmv_plan *P = (const sbm__cpu_spmv_plan *)plan;
    return sbm__cpu_csr_spmv(ctx, alpha, &P->A, x, beta, y);
}

void sbm__cpu_spmv_plan_destroy(sbm_spmv_plan *plan)
{
    if (!plan) return;
    sbm__cpu_spmv_plan *P = (sbm__cpu_spmv_plan *)plan;
    P->allocator.free(P->allocator.user, P);
}
