/* SPDX-License-Identifier: BSD-3-Clause */
/* Minimal sbm example: two small block matrices, one product, the result printed.
 *
 *   A (2 x 2 blocks of 2x3)        B (2 x 2 blocks of 3x2)
 *   [ A00  .  ]                    [ B00  B01 ]
 *   [ A10 A11 ]                    [  .   B11 ]
 *
 * C = A * B has 2 x 2 blocks of 2x2. Blocks are column-major; a matrix is stored by block
 * columns (CBC): colptr[j]..colptr[j+1] index the blocks of block column j. */
#include <stdio.h>

#include "sbm.h"

#define CHECK(ctx, call)                                                          \
    do {                                                                          \
        if ((call) != SBM_SUCCESS) {                                              \
            fprintf(stderr, "minimal_gemm: %s\n", sbm_ctx_last_error(ctx));       \
            goto done;                                                            \
        }                                                                         \
    } while (0)

int main(void)
{
    /* A: block column 0 holds A00 (block row 0) and A10 (block row 1); column 1 holds A11. */
    const int64_t a_colptr[] = {0, 2, 3};
    const int32_t a_rowind[] = {0, 1, 1};
    const double a_values[] = {
        1, 2, 3, 4, 5, 6,      /* A00 = [1 3 5; 2 4 6] */
        1, 0, 0, 1, 0, 0,      /* A10 = [1 0 0; 0 1 0] */
        2, 0, 0, 2, 1, 1,      /* A11 = [2 0 1; 0 2 1] */
    };
    /* B: block column 0 holds B00; column 1 holds B01 and B11. */
    const int64_t b_colptr[] = {0, 1, 3};
    const int32_t b_rowind[] = {0, 0, 1};
    const double b_values[] = {
        1, 0, 1, 0, 1, 1,      /* B00 = [1 0; 0 1; 1 1] */
        1, 1, 1, 2, 2, 2,      /* B01 = [1 2; 1 2; 1 2] */
        1, 0, 0, 0, 1, 0,      /* B11 = [1 0; 0 1; 0 0] */
    };

    sbm_ctx *ctx = NULL;
    sbm_cbc *A = NULL, *B = NULL, *C = NULL;
    int rc = 1;

    if (sbm_ctx_create(&ctx, SBM_BACKEND_CPU, 0) != SBM_SUCCESS) {
        fprintf(stderr, "minimal_gemm: %s\n", sbm_ctx_last_error(NULL));
        return 1;
    }
    CHECK(ctx, sbm_cbc_create(ctx, &A, 2, 2, 2, 3, a_colptr, a_rowind, a_values));
    CHECK(ctx, sbm_cbc_create(ctx, &B, 2, 2, 3, 2, b_colptr, b_rowind, b_values));
    /* C = 1.0 * A * B (no accumulation matrix, full output). */
    CHECK(ctx, sbm_cbc_gemm(ctx, 1.0, SBM_OP_N, A, SBM_OP_N, B, NULL, 0, &C));

    sbm_cbc_info ci = sbm_cbc_get_info(C);
    printf("C: %lld x %lld blocks of %dx%d, %lld stored blocks\n", (long long)ci.nbr,
           (long long)ci.nbc, ci.r, ci.c, (long long)ci.nnzb);
    for (int64_t j = 0; j < ci.nbc; j++) {
        for (int64_t k = ci.colptr[j]; k < ci.colptr[j + 1]; k++) {
            const double *blk = ci.values + k * ci.r * ci.c;
            printf("C(%d,%lld) =\n", ci.rowind[k], (long long)j);
            for (int i = 0; i < ci.r; i++) {
                for (int l = 0; l < ci.c; l++) printf(" %6.1f", blk[i + l * ci.r]);
                printf("\n");
            }
        }
    }
    rc = 0;
done:
    sbm_cbc_destroy(C);
    sbm_cbc_destroy(B);
    sbm_cbc_destroy(A);
    sbm_ctx_destroy(ctx);
    return rc;
}
