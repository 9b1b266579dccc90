/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: the Matrix Market reader. A matrix it accepts must be valid (sbm_csr_check
 * with finite values), and survive the conversions to CBC and back. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sbm_ctx *ctx = fuzz_ctx();
    sbm_csr *A = NULL;
    sbm_status st = sbm_csr_read_mtx(ctx, fuzz_file(data, size), &A);
    fuzz_expect_message(ctx, st, "sbm_csr_read_mtx");
    if (st != SBM_SUCCESS) {
        if (A) __builtin_trap(); /* the output handle is NULL on failure */
        return 0;
    }
    if (sbm_csr_check(ctx, A, 1) != SBM_SUCCESS) __builtin_trap();
    sbm_csr_info ai = sbm_csr_get_info(A);
    /* the conversions need O(m + n) memory whatever nnz is (2 x 2e9: 16 GB of CBC column
     * pointers): out of the capped memory is an accepted outcome, with its message */
    sbm_cbc *B = NULL;
    sbm_csr *A2 = NULL, *T = NULL;
    /* dimensions past 2^22 with few entries ("5 15602602 0"): the conversions are linear in
     * m + n (0.2 s in a release build) but take over 10 s instrumented, libFuzzer's timeout;
     * the reader, the part fuzzed, has run */
    if (ai.m + ai.n > ((int64_t)1 << 22)) goto out;
    if (!fuzz_ok_or_oom(ctx, sbm_csr_to_cbc(ctx, A, 1, 1, &B), "sbm_csr_to_cbc")) goto out;
    if (sbm_cbc_check(ctx, B, 1) != SBM_SUCCESS) __builtin_trap();
    if (!fuzz_ok_or_oom(ctx, sbm_cbc_to_csr(ctx, B, &A2), "sbm_cbc_to_csr")) goto out;
    sbm_csr_info bi = sbm_csr_get_info(A2);
    if (bi.m != ai.m || bi.n != ai.n || bi.nnz != ai.nnz ||
        memcmp(bi.rowptr, ai.rowptr, (size_t)(ai.m + 1) * sizeof(int64_t)) != 0 ||
        memcmp(bi.colind, ai.colind, (size_t)ai.nnz * sizeof(int32_t)) != 0 ||
        memcmp(bi.values, ai.values, (size_t)ai.nnz * sizeof(double)) != 0)
        __builtin_trap();
    if (!fuzz_ok_or_oom(ctx, sbm_csr_transpose(ctx, A, &T), "sbm_csr_transpose")) goto out;
    if (sbm_csr_check(ctx, T, 1) != SBM_SUCCESS) __builtin_trap();
out:
    sbm_csr_destroy(T);
    sbm_csr_destroy(A2);
    sbm_cbc_destroy(B);
    sbm_csr_destroy(A);
    return 0;
}
