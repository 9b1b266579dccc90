/* SPDX-License-Identifier: BSD-3-Clause */
/* Argument checks, full validation of host arrays, pattern identities and fingerprints. */
#include "sbm_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>

static _Atomic uint64_t sbm__pattern_counter = 1;

uint64_t sbm__new_pattern_id(void) { return atomic_fetch_add(&sbm__pattern_counter, 1); }

static const char *sbm__backend_name(sbm_backend b)
{
    return b == SBM_BACKEND_CPU ? "CPU" : b == SBM_BACKEND_CUDA ? "CUDA" : "unknown";
}

sbm_status sbm__check_block_shape(sbm_ctx *ctx, const char *arg, int r, int c)
{
    if (r < 1 || c < 1 || r > SBM_MAX_BLOCK_DIM || c > SBM_MAX_BLOCK_DIM)
        return sbm__error(ctx, SBM_ERR_BLOCK_SHAPE,
                          "argument %s: block shape %dx%d is not supported (each dimension must be "
                          "in 1..%d)",
                          arg, r, c, SBM_MAX_BLOCK_DIM);
    return SBM_SUCCESS;
}

sbm_status sbm__check_cbc_dims(sbm_ctx *ctx, int64_t nbr, int64_t nbc, int r, int c)
{
    SBM__TRY(sbm__check_block_shape(ctx, "r/c", r, c));
    if (nbr < 0 || nbc < 0)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "arguments nbr/nbc: block dimensions %" PRId64 " x %" PRId64
                          " are negative",
                          nbr, nbc);
    if (nbr > INT32_MAX)
        return sbm__error(ctx, SBM_ERR_OVERFLOW,
                          "argument nbr: %" PRId64 " block rows exceed the int32 row index range",
                          nbr);
    if (nbc > INT64_MAX / c - 1 || nbr > INT64_MAX / r)
        return sbm__error(ctx, SBM_ERR_OVERFLOW,
                          "arguments nbr/nbc: scalar size (%" PRId64 "*%d) x (%" PRId64
                          "*%d) overflows int64",
                          nbr, r, nbc, c);
    return SBM_SUCCESS;
}

sbm_status sbm__check_csr_dims(sbm_ctx *ctx, int64_t m, int64_t n)
{
    if (m < 0 || n < 0)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "arguments m/n: dimensions %" PRId64 " x %" PRId64 " are negative", m, n);
    if (n > (int64_t)INT32_MAX + 1 || m > INT64_MAX / 2)
        return sbm__error(ctx, SBM_ERR_OVERFLOW,
                          "arguments m/n: %" PRId64 " x %" PRId64 " exceeds the index range (at most "
                          "2^31 columns)", m, n);
    return SBM_SUCCESS;
}

static sbm_status sbm__check_location(sbm_ctx *ctx, const char *arg, sbm_backend backend, int device)
{
    if (backend != ctx->backend || (backend == SBM_BACKEND_CUDA && device != ctx->device))
        return sbm__error(ctx, SBM_ERR_BACKEND_MISMATCH,
                          "argument %s lives on the %s backend (device %d) but the context is %s "
                          "(device %d); move it with sbm_*_copy",
                          arg, sbm__backend_name(backend), device, sbm__backend_name(ctx->backend),
                          ctx->device);
    return SBM_SUCCESS;
}

sbm_status sbm__check_cbc_arg(sbm_ctx *ctx, const char *arg, const sbm_cbc *A)
{
    if (!A) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument %s is NULL", arg);
    return sbm__check_location(ctx, arg, A->backend, A->device);
}

sbm_status sbm__check_csr_arg(sbm_ctx *ctx, const char *arg, const sbm_csr *A)
{
    if (!A) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument %s is NULL", arg);
    return sbm__check_location(ctx, arg, A->backend, A->device);
}

/* Offsets ptr[0..n] must start at 0, never decrease; ptr[n] is the entry count. */
static sbm_status sbm__validate_ptr(sbm_ctx *ctx, const char *arg, const char *name,
                                    const int64_t *ptr, int64_t n)
{
    if (ptr[0] != 0)
        return sbm__error(ctx, SBM_ERR_INVALID_POINTERS, "argument %s: %s[0] is %" PRId64
                          ", expected 0", arg, name, ptr[0]);
    for (int64_t j = 0; j < n; j++)
        if (ptr[j + 1] < ptr[j])
            return sbm__error(ctx, SBM_ERR_INVALID_POINTERS,
                              "argument %s: %s[%" PRId64 "] = %" PRId64 " is less than %s[%" PRId64
                              "] = %" PRId64,
                              arg, name, j + 1, ptr[j + 1], name, j, ptr[j]);
    return SBM_SUCCESS;
}

/* Indices of each segment in [0, bound), strictly increasing. what = "block row" etc. */
static sbm_status sbm__validate_segments(sbm_ctx *ctx, const char *arg, const char *seg,
                                         const char *what, const int64_t *ptr, int64_t n,
                                         const int32_t *ind, int64_t bound)
{
    for (int64_t j = 0; j < n; j++) {
        for (int64_t p = ptr[j]; p < ptr[j + 1]; p++) {
            int64_t i = ind[p];
            if (i < 0 || i >= bound)
                return sbm__error(ctx, SBM_ERR_INDEX_OUT_OF_RANGE,
                                  "argument %s: %s %" PRId64 " at position %" PRId64 " (%s %" PRId64
                                  ") is outside [0, %" PRId64 ")",
                                  arg, what, i, p, seg, j, bound);
            if (p > ptr[j]) {
                int64_t prev = ind[p - 1];
                if (prev == i)
                    return sbm__error(ctx, SBM_ERR_DUPLICATE_INDICES,
                                      "argument %s: %s %" PRId64 " appears twice in %s %" PRId64
                                      " (positions %" PRId64 " and %" PRId64 ")",
                                      arg, what, i, seg, j, p - 1, p);
                if (prev > i)
                    return sbm__error(ctx, SBM_ERR_UNSORTED_INDICES,
                                      "argument %s: %s %" PRId64 " at position %" PRId64
                                      " follows %s %" PRId64 " in %s %" PRId64
                                      " (indices must increase)",
                                      arg, what, i, p, what, prev, seg, j);
            }
        }
    }
    return SBM_SUCCESS;
}

static sbm_status sbm__validate_finite(sbm_ctx *ctx, const char *arg, const double *values,
                                       int64_t count, int64_t per_entry)
{
    for (int64_t t = 0; t < count; t++)
        if (!isfinite(values[t]))
            return sbm__error(ctx, SBM_ERR_NOT_FINITE,
                              "argument %s: value %g at entry %" PRId64 " (block %" PRId64
                              ", element %" PRId64 ") is not finite",
                              arg, values[t], t, t / per_entry, t % per_entry);
    return SBM_SUCCESS;
}

sbm_status sbm__validate_cbc_host(sbm_ctx *ctx, const char *arg, int64_t nbr, int64_t nbc, int r,
                                  int c, const int64_t *colptr, const int32_t *rowind,
                                  const double *values, int check_finite)
{
    SBM__TRY(sbm__validate_ptr(ctx, arg, "colptr", colptr, nbc));
    int64_t nnzb = colptr[nbc];
    if (nnzb > 0 && (nnzb > INT64_MAX / ((int64_t)r * c * (int64_t)sizeof(double))))
        return sbm__error(ctx, SBM_ERR_OVERFLOW,
                          "argument %s: %" PRId64 " blocks of %dx%d overflow the value array size",
                          arg, nnzb, r, c);
    SBM__TRY(sbm__validate_segments(ctx, arg, "column", "block row", colptr, nbc, rowind, nbr));
    if (check_finite && values)
        SBM__TRY(sbm__validate_finite(ctx, arg, values, nnzb * r * c, (int64_t)r * c));
    return SBM_SUCCESS;
}

sbm_status sbm__validate_csr_host(sbm_ctx *ctx, const char *arg, int64_t m, int64_t n,
                                  const int64_t *rowptr, const int32_t *colind,
                                  const double *values, int check_finite)
{
    SBM__TRY(sbm__validate_ptr(ctx, arg, "rowptr", rowptr, m));
    int64_t nnz = rowptr[m];
    if (nnz > INT64_MAX / (int64_t)sizeof(double))
        return sbm__error(ctx, SBM_ERR_OVERFLOW,
                          "argument %s: %" PRId64 " entries overflow the value array size", arg, nnz);
    SBM__TRY(sbm__validate_segments(ctx, arg, "row", "column", rowptr, m, colind, n));
    if (check_finite && values) SBM__TRY(sbm__validate_finite(ctx, arg, values, nnz, 1));
    return SBM_SUCCESS;
}

/* Pattern fingerprints (definition in core_matrix.h): a sum of independent per-entry terms, so the
 * CUDA backend computes the same value on the device. The byte-wise FNV-1a used before was slower
 * and could not run in parallel; this is one multiply-xorshift mix per entry
 * (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). */
static uint64_t sbm__fp_sum64(uint64_t salt, const int64_t *a, int64_t n)
{
    uint64_t s = 0;
    for (int64_t i = 0; i < n; i++) s += sbm__fp_term(salt, (uint64_t)i, (uint64_t)a[i]);
    return s;
}

static uint64_t sbm__fp_sum32(uint64_t salt, const int32_t *a, int64_t n)
{
    uint64_t s = 0;
    for (int64_t i = 0; i < n; i++) s += sbm__fp_term(salt, (uint64_t)i, (uint64_t)(int64_t)a[i]);
    return s;
}

uint64_t sbm__hash_cbc_pattern_host(const sbm_cbc *A)
{
    return sbm__fp_finish(A->nbr, A->nbc, A->r, A->c,
                          sbm__fp_sum64(SBM__FP_SALT_PTR, A->colptr, A->nbc + 1),
                          sbm__fp_sum32(SBM__FP_SALT_IND, A->rowind, A->nnzb));
}

uint64_t sbm__hash_csr_pattern_host(const sbm_csr *A)
{
    return sbm__fp_finish(A->m, A->n, -1, 0, sbm__fp_sum64(SBM__FP_SALT_PTR, A->rowptr, A->m + 1),
                          sbm__fp_sum32(SBM__FP_SALT_IND, A->colind, A->nnz));
}
