/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: matrix creation and validation from raw arrays. The bytes give the block
 * dimensions (negative and unsupported ones included), column pointers (mostly increasing, at
 * times not), block-row indices and values (NaN and Inf included); the arrays have exactly the
 * sizes the pointers announce, so AddressSanitizer catches any read past them. Then:
 *   - sbm_cbc_create and sbm_cbc_wrap agree on acceptance and status;
 *   - an accepted matrix passes sbm_cbc_check, and with check_finite fails exactly when a value
 *     is NaN or Inf;
 *   - transpose twice, CBC -> CSR -> CBC, and a rebuild from block triplets give it back. */
#include "fuzz_common.h"

#include <math.h>

typedef struct bytes {
    const uint8_t *p;
    size_t n, at;
} bytes;

static uint8_t next(bytes *b) { return b->at < b->n ? b->p[b->at++] : 0; }

static int same_values(const double *x, const double *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!(x[i] == y[i] || (isnan(x[i]) && isnan(y[i])))) return 0;
    return 1;
}

static int same_cbc(const sbm_cbc *A, const sbm_cbc *B)
{
    sbm_cbc_info a = sbm_cbc_get_info(A), b = sbm_cbc_get_info(B);
    if (a.nbr != b.nbr || a.nbc != b.nbc || a.r != b.r || a.c != b.c || a.nnzb != b.nnzb) return 0;
    if (memcmp(a.colptr, b.colptr, (size_t)(a.nbc + 1) * sizeof(int64_t)) != 0) return 0;
    if (memcmp(a.rowind, b.rowind, (size_t)a.nnzb * sizeof(int32_t)) != 0) return 0;
    return same_values(a.values, b.values, a.nnzb * a.r * a.c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sbm_ctx *ctx = fuzz_ctx();
    bytes b = {data, size, 0};
    const int64_t nbr = (int8_t)next(&b) % 20;
    const int64_t nbc = (int8_t)next(&b) % 20;
    const int r = next(&b) % 35, c = next(&b) % 35; /* 0 and 33, 34 are unsupported */
    const uint8_t flags = next(&b);
    const int64_t ncol = nbc < 0 ? 0 : nbc;
    int64_t colptr[21];
    uint8_t first = next(&b);
    colptr[0] = (first & 0x80) ? (int8_t)first % 3 : 0;
    for (int64_t j = 1; j <= ncol; j++) colptr[j] = colptr[j - 1] + (int8_t)next(&b) % 6;
    const int64_t nnzb = colptr[ncol];
    if (nnzb > 400) return 0;
    const int64_t nr = nnzb > 0 ? nnzb : 0;
    const int64_t rc = (r > 0 && c > 0) ? (int64_t)r * c : 0;
    int32_t *rowind = malloc((size_t)nr * sizeof(int32_t) + 1);
    double *values = malloc((size_t)(nr * rc) * sizeof(double) + 1);
    int nonfinite = 0;
    for (int64_t k = 0; k < nr; k++) rowind[k] = (int8_t)next(&b) % 24;
    for (int64_t k = 0; k < nr * rc; k++) {
        uint8_t v = next(&b);
        values[k] = v == 0xfe ? NAN : v == 0xff ? -INFINITY : (double)(int8_t)v / 8;
        nonfinite |= v >= 0xfe;
    }
    const int null_values = flags & 1;
    sbm_cbc *A = NULL;
    sbm_status st = sbm_cbc_create(ctx, &A, nbr, nbc, r, c, colptr, nr ? rowind : NULL,
                                   null_values ? NULL : values);
    fuzz_expect_message(ctx, st, "sbm_cbc_create");
    if ((st == SBM_SUCCESS) != (A != NULL)) __builtin_trap();

    /* wrap validates the same arrays in place */
    if (!null_values && nbc >= 0) {
        int64_t wcp[21];
        memcpy(wcp, colptr, (size_t)(ncol + 1) * sizeof(int64_t));
        sbm_cbc *W = NULL;
        sbm_status sw = sbm_cbc_wrap(ctx, &W, nbr, nbc, r, c, wcp, rowind, values);
        fuzz_expect_message(ctx, sw, "sbm_cbc_wrap");
        if (sw != st) __builtin_trap();
        if (W && !same_cbc(A, W)) __builtin_trap();
        sbm_cbc_destroy(W);
    }

    if (A) {
        if (sbm_cbc_check(ctx, A, 0) != SBM_SUCCESS) __builtin_trap();
        sbm_status sf = sbm_cbc_check(ctx, A, 1);
        if ((sf == SBM_ERR_NOT_FINITE) != (nonfinite && !null_values)) __builtin_trap();
        if (sf != SBM_SUCCESS && sf != SBM_ERR_NOT_FINITE) __builtin_trap();

        sbm_cbc *T = NULL, *TT = NULL;
        if (sbm_cbc_transpose(ctx, A, &T) != SBM_SUCCESS) __builtin_trap();
        if (sbm_cbc_check(ctx, T, 0) != SBM_SUCCESS) __builtin_trap();
        if (sbm_cbc_transpose(ctx, T, &TT) != SBM_SUCCESS) __builtin_trap();
        if (!same_cbc(A, TT)) __builtin_trap();

        sbm_csr *S = NULL;
        sbm_cbc *R = NULL;
        if (sbm_cbc_to_csr(ctx, A, &S) != SBM_SUCCESS) __builtin_trap();
        if (sbm_csr_check(ctx, S, 0) != SBM_SUCCESS) __builtin_trap();
        if (sbm_csr_to_cbc(ctx, S, r, c, &R) != SBM_SUCCESS) __builtin_trap();
        /* CSR keeps every entry of a stored block, so the blocks come back (a block of zeros
         * included) */
        if (!same_cbc(A, R)) __builtin_trap();

        /* block triplets in column order rebuild A (no duplicates: rows are unique) */
        sbm_cbc_info ai = sbm_cbc_get_info(A);
        int32_t *bcol = malloc((size_t)ai.nnzb * sizeof(int32_t) + 1);
        for (int64_t j = 0; j < ai.nbc; j++)
            for (int64_t k = ai.colptr[j]; k < ai.colptr[j + 1]; k++) bcol[k] = (int32_t)j;
        sbm_cbc *F = NULL;
        st = sbm_cbc_from_triplets(ctx, &F, nbr, nbc, r, c, ai.nnzb, ai.rowind, bcol, ai.values);
        if (st != SBM_SUCCESS || !same_cbc(A, F)) __builtin_trap();
        free(bcol);
        sbm_cbc_destroy(F);
        sbm_cbc_destroy(R);
        sbm_csr_destroy(S);
        sbm_cbc_destroy(TT);
        sbm_cbc_destroy(T);
        sbm_cbc_destroy(A);
    }
    free(rowind);
    free(values);
    return 0;
}
