/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU backend: scalar CSR SpGEMM (plan and execute), in a fixed summation order, so results are
 * deterministic. Arguments are checked by the front end (csr_ops.c). */
#include "cpu_backend.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* SpGEMM: C = A*B, Gustavson's row-by-row algorithm (as in CSparse's cs_multiply, by rows)   */
/* ---------------------------------------------------------------------------------------- */

/* The plan. C itself holds the output pattern (execute must be given the plan's C, which the
 * front end checks), and the numeric pass needs nothing else: the plan is its header. */
typedef struct sbm__cpu_csr_plan {
    sbm__plan_header header; /* first: the front end reads and fills it */
    sbm_allocator allocator; /* frees this struct (destroy has no context) */
} sbm__cpu_csr_plan;

/* Rows of C no longer than this are sorted by insertion; longer ones by qsort or a scan. */
#define SBM__SORT_SMALL 24

/* Sort the column indices cols[0..len) of one row of C. mark[j] == stamp for exactly those
 * columns, all in [lo, hi]: when that range is short compared with a comparison sort, scanning
 * it emits the columns in order for less work (banded and block-structured products). */
static void sbm__sort_row(int32_t *cols, int64_t len, int32_t lo, int32_t hi, const int64_t *mark,
                          int64_t stamp)
{
    if (len <= 1) return;
    if (len <= SBM__SORT_SMALL) {
        for (int64_t a = 1; a < len; a++) {
            const int32_t v = cols[a];
            int64_t b = a;
            for (; b > 0 && cols[b - 1] > v; b--) cols[b] = cols[b - 1];
            cols[b] = v;
        }
        return;
    }
    if ((int64_t)hi - lo < 16 * len) {
        int64_t t = 0;
        for (int64_t j = lo; j <= hi; j++)
            if (mark[j] == stamp) cols[t++] = (int32_t)j;
        return;
    }
    qsort(cols, (size_t)len, sizeof *cols, sbm__cmp_i32);
}

sbm_status sbm__cpu_csr_gemm_plan(sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B,
                                  sbm_csr_plan **plan, sbm_csr **C)
{
    const int64_t m = A->m, n = B->n;
    const int64_t *Ap = A->rowptr, *Bp = B->rowptr;
    const int32_t *Aj = A->colind, *Bj = B->colind;
    sbm_status st = SBM_SUCCESS;
    sbm__cpu_csr_plan *P = NULL;
    sbm_csr *c = NULL;
    int64_t *mark = NULL;
    int ok = 1;

    size_t bytes = sbm__mul_size(ctx, (size_t)n, sizeof *mark, "the SpGEMM row markers", &ok);
    if (!ok) { st = SBM_ERR_OVERFLOW; goto done; }
    mark = sbm__host_alloc(ctx, bytes, "the SpGEMM row markers");
    P = sbm__host_alloc(ctx, sizeof *P, "the CSR SpGEMM plan");
    if (!mark || !P) { st = SBM_ERR_OUT_OF_MEMORY; goto done; }
    memset(P, 0, sizeof *P);
    P->allocator = ctx->allocator;

    /* Symbolic pass 1: the length of every row of C. mark[j] == i once column j has been seen
     * in row i. */
    for (int64_t j = 0; j < n; j++) mark[j] = -1;
    int64_t nnz = 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t len = 0; /* at most n <= 2^31 */
        if (Ap[i + 1] - Ap[i] == 1) {
            /* one entry: the row of C is a row of B (common in permutations and selections) */
            const int32_t k = Aj[Ap[i]];
            len = Bp[k + 1] - Bp[k];
        } else {
            for (int64_t p = Ap[i]; p < Ap[i + 1]; p++) {
                const int32_t k = Aj[p];
                for (int64_t q = Bp[k]; q < Bp[k + 1]; q++)
                    if (mark[Bj[q]] != i) {
                        mark[Bj[q]] = i;
                        len++;
                    }
            }
        }
        if (nnz > INT64_MAX - len) {
            st = sbm__error(ctx, SBM_ERR_OVERFLOW,
                            "A (%" PRId64 "x%" PRId64 ") times B (%" PRId64 "x%" PRId64
                            "): the entry count of C overflows int64 at row %" PRId64,
                            A->m, A->n, B->m, B->n, i);
            goto done;
        }
        nnz += len;
    }

    st = sbm__csr_alloc(ctx, m, n, nnz, &c);
    if (st != SBM_SUCCESS) goto done;

    /* Symbolic pass 2: the columns of every row, sorted. */
    int64_t *Cp = c->rowptr;
    int32_t *Cj = c->colind;
    for (int64_t j = 0; j < n; j++) mark[j] = -1;
    Cp[0] = 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t len = 0;
        int32_t *row = Cj + Cp[i];
        if (Ap[i + 1] - Ap[i] == 1) {
            const int32_t k = Aj[Ap[i]];
            len = Bp[k + 1] - Bp[k];
            memcpy(row, Bj + Bp[k], (size_t)len * sizeof *row); /* already sorted */
        } else {
            int32_t lo = INT32_MAX, hi = -1;
            for (int64_t p = Ap[i]; p < Ap[i + 1]; p++) {
                const int32_t k = Aj[p];
                for (int64_t q = Bp[k]; q < Bp[k + 1]; q++) {
                    const int32_t j = Bj[q];
                    if (mark[j] != i) {
                        mark[j] = i;
                        row[len++] = j;
                        if (j < lo) lo = j;
                        if (j > hi) hi = j;
                    }
                }
            }
            sbm__sort_row(row, len, lo, hi, mark, i);
        }
        Cp[i + 1] = Cp[i] + len;
    }
    memset(c->values, 0, (size_t)nnz * sizeof *c->values);

done:
    sbm__host_free(ctx, mark);
    if (st != SBM_SUCCESS) {
        sbm__host_free(ctx, P);
        sbm_csr_destroy(c);
        return st;
    }
    *plan = (sbm_csr_plan *)P;
    *C = c;
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_csr_gemm_execute(sbm_ctx *ctx, const sbm_csr_plan *plan,
                                     const sbm_csr *A, const sbm_csr *B, sbm_csr *C)
{
    const int64_t *restrict Ap = A->rowptr, *restrict Bp = B->rowptr, *restrict Cp = C->rowptr;
    const int32_t *restrict Aj = A->colind, *restrict Bj = B->colind, *restrict Cj = C->colind;
    const double *restrict Ax = A->values, *restrict Bx = B->values;
    double *restrict Cx = C->values;
    int ok = 1;
    size_t bytes = sbm__mul_size(ctx, (size_t)C->n, sizeof(double), "the SpGEMM accumulator", &ok);
    if (!ok) return SBM_ERR_OVERFLOW;
    double *restrict acc = sbm__host_alloc(ctx, bytes, "the SpGEMM accumulator");
    if (!acc) return SBM_ERR_OUT_OF_MEMORY;
    memset(acc, 0, bytes);

    /* Dense accumulator over the columns of C's row (CSparse's x): cleared on the row's pattern,
     * filled in the fixed order A's entries, then B's, and gathered back. A product whose column
     * is outside C's row (possible only if a pattern check was fooled) lands in acc and is never
     * gathered, so a wrong pattern cannot write out of bounds. */
    for (int64_t i = 0; i < A->m; i++) {
        for (int64_t p = Cp[i]; p < Cp[i + 1]; p++) acc[Cj[p]] = 0.0;
        for (int64_t p = Ap[i]; p < Ap[i + 1]; p++) {
            const double a = Ax[p];
            const int32_t k = Aj[p];
            for (int64_t q = Bp[k]; q < Bp[k + 1]; q++) acc[Bj[q]] += a * Bx[q];
        }
        for (int64_t p = Cp[i]; p < Cp[i + 1]; p++) Cx[p] = acc[Cj[p]];
    }
    sbm__host_free(ctx, acc);
    return SBM_SUCCESS;
}

void sbm__cpu_csr_gemm_plan_destroy(sbm_csr_plan *plan)
{
    if (!plan) return;
    sbm__cpu_csr_plan *P = (sbm__cpu_csr_plan *)plan;
    P->allocator.free(P->allocator.user, P);
}
