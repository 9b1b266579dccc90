/* SPDX-License-Identifier: BSD-3-Clause */
/* Matrix Market coordinate writer: scalar CSR and CBC (through its scalar form) to
 * "coordinate real general" files (or "symmetric", the lower triangle of a square CSR), through the library's one atomic writer (src/io/text_io.c:
 * path.tmp.XXXXXX renamed into place, a failure leaves nothing behind, ".gz"/".bz2" names are
 * compressed, the "C" numeric locale). "%.17g" round-trips every finite double exactly.
 * Non-finite values are refused (SBM_ERR_NOT_FINITE): the reader would reject the file, and a
 * file sbm cannot read back is worse than an error. */
#include "io_internal.h"

#include <inttypes.h>
#include <math.h>

/* Write host CSR arrays to path (symmetric: the entries on and below the diagonal under the
 * "symmetric" banner). arg names the matrix argument in messages. */
static sbm_status mtx_write_host(sbm_ctx *ctx, const char *path, const char *arg, int64_t m,
                                 int64_t n, const int64_t *rowptr, const int32_t *colind,
                                 const double *values, int symmetric)
{
    int64_t nnz = symmetric ? 0 : rowptr[m];
    for (int64_t i = 0; i < m; i++)
        for (int64_t q = rowptr[i]; q < rowptr[i + 1]; q++) {
            if (symmetric && colind[q] > i) continue;
            nnz += symmetric;
            if (!isfinite(values[q]))
                return sbm__error(ctx, SBM_ERR_NOT_FINITE,
                                  "argument %s: entry (%" PRId64 ",%" PRId32 ") (1-based) is %g; "
                                  "'%s' is not written because Matrix Market files read by sbm "
                                  "hold finite values only",
                                  arg, i + 1, colind[q] + 1, values[q], path);
        }
    sbm__text_writer w;
    SBM__TRY(sbm__text_create(ctx, path, &w));
    sbm_status st = sbm__text_printf(&w, "%%%%MatrixMarket matrix coordinate real %s\n"
                                         "%" PRId64 " %" PRId64 " %" PRId64 "\n",
                                     symmetric ? "symmetric" : "general", m, n, nnz);
    for (int64_t i = 0; i < m && st == SBM_SUCCESS; i++)
        for (int64_t q = rowptr[i]; q < rowptr[i + 1] && st == SBM_SUCCESS; q++)
            if (!symmetric || colind[q] <= i)
                st = sbm__text_printf(&w, "%" PRId64 " %" PRId32 " %.17g\n", i + 1, colind[q] + 1,
                                  values[q]);
    if (st != SBM_SUCCESS) {
        sbm__text_abort(&w);
        return st;
    }
    return sbm__text_commit(&w);
}

/* Write A (in ctx's memory space) to path; device arrays are copied to the host first. */
static sbm_status mtx_write_csr(sbm_ctx *ctx, const char *path, const char *arg, const sbm_csr *A,
                                int symmetric)
{
    if (ctx->backend == SBM_BACKEND_CPU)
        return mtx_write_host(ctx, path, arg, A->m, A->n, A->rowptr, A->colind, A->values,
                              symmetric);

    sbm_status st = SBM_SUCCESS;
    int64_t *rowptr =
        sbm__host_alloc(ctx, ((size_t)A->m + 1) * sizeof(int64_t), "host row pointers");
    int32_t *colind = rowptr ? sbm__host_alloc(ctx, (size_t)A->nnz * sizeof(int32_t),
                                               "host column indices")
                             : NULL;
    double *values = colind ? sbm__host_alloc(ctx, (size_t)A->nnz * sizeof(double), "host values")
                            : NULL;
    if (!values) {
        st = SBM_ERR_OUT_OF_MEMORY;
        goto done;
    }
    st = ctx->ops->copy(ctx, rowptr, A->rowptr, ((size_t)A->m + 1) * sizeof(int64_t), 1);
    if (st == SBM_SUCCESS && A->nnz > 0)
        st = ctx->ops->copy(ctx, colind, A->colind, (size_t)A->nnz * sizeof(int32_t), 1);
    if (st == SBM_SUCCESS && A->nnz > 0)
        st = ctx->ops->copy(ctx, values, A->values, (size_t)A->nnz * sizeof(double), 1);
    if (st == SBM_SUCCESS) st = ctx->ops->synchronize(ctx);
    if (st == SBM_SUCCESS) st = mtx_write_host(ctx, path, arg, A->m, A->n, rowptr, colind, values,
                                                 symmetric);
done:
    sbm__host_free(ctx, rowptr);
    sbm__host_free(ctx, colind);
    sbm__host_free(ctx, values);
    return st;
}

sbm_status sbm_csr_write_mtx(sbm_ctx *ctx, const char *path, const sbm_csr *A)
{
    SBM__ENTER(ctx, "sbm_csr_write_mtx");
    if (!path) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument path is NULL");
    SBM__TRY(sbm__check_csr_arg(ctx, "A", A));
    return mtx_write_csr(ctx, path, "A", A, 0);
}

sbm_status sbm_csr_write_mtx_symmetric(sbm_ctx *ctx, const char *path, const sbm_csr *A)
{
    SBM__ENTER(ctx, "sbm_csr_write_mtx_symmetric");
    if (!path) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument path is NULL");
    SBM__TRY(sbm__check_csr_arg(ctx, "A", A));
    if (A->m != A->n)
        return sbm__error(ctx, SBM_ERR_DIMENSION_MISMATCH,
                          "argument A: %" PRId64 " x %" PRId64 " is not square; '%s' is not "
                          "written as a symmetric file",
                          A->m, A->n, path);
    return mtx_write_csr(ctx, path, "A", A, 1);
}

sbm_status sbm_cbc_write_mtx(sbm_ctx *ctx, const char *path, const sbm_cbc *A)
{
    SBM__ENTER(ctx, "sbm_cbc_write_mtx");
    if (!path) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument path is NULL");
    SBM__TRY(sbm__check_cbc_arg(ctx, "A", A));
    if (!ctx->ops->cbc_to_csr)
        return sbm__error(ctx, SBM_ERR_NOT_SUPPORTED,
                          "the CBC to CSR conversion is not available on the %s backend",
                          ctx->ops->name);
    sbm_csr *S = NULL; /* scalar form: rows sorted, columns sorted within a row */
    SBM__TRY(ctx->ops->cbc_to_csr(ctx, A, &S));
    const sbm_status st = mtx_write_csr(ctx, path, "A", S, 0);
    sbm_csr_destroy(S);
    return st;
}
