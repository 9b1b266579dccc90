/* SPDX-License-Identifier: BSD-3-Clause */
/* Block SpMV on the CPU: y = alpha*op(A)*x + beta*y for CBC A, one fixed-size kernel per block
 * shape of SBM_BLOCK_SHAPES and a runtime-size one for the rest.
 *
 * Threads (sbm__cpu_parallel_for) own contiguous ranges of y's blocks, so every y entry is written
 * by one thread, in the order of the one-thread product, and the bits do not depend on the number
 * of threads. Op T gathers a dot product per column: a thread takes a range of columns. Op N
 * scatters each column's blocks into y (the storage is column-oriented): a thread takes a range of
 * block rows and walks every column, applying only the blocks of its rows, in increasing column
 * order as one thread would. The walk reads the pattern once per thread, a few percent of the
 * product's memory traffic for the BA and SLAM block sizes at the thread counts of a workstation
 * (the alternative, a transposed index, would need memory and a plan per matrix). */
#include "cpu_backend.h"
#include "sbm_blocks.h"

/* A thread's range is worth its start (tens of microseconds) from this many block-entry products
 * (nnzb * r * c / threads) on. */
#define MIN_WORK_PER_THREAD 65536

typedef struct spmv_job {
    sbm_op op;
    double alpha, beta;
    const sbm_cbc *A;
    const double *x;
    double *y;
} spmv_job;

/* op N on block rows [i0, i1): y rows scaled by beta, then the blocks of those rows added. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void spmv_n_rows(const spmv_job *j, int64_t i0, int64_t i1, const int R, const int C)
{
    const sbm_cbc *A = j->A;
    const int64_t rc = (int64_t)R * C;
    const int64_t *cp = A->colptr;
    const int32_t *ri = A->rowind;
    const double *av = A->values;
    const double alpha = j->alpha, beta = j->beta, *x = j->x;
    double *y = j->y;
    if (beta == 0.0)
        for (int64_t i = i0 * R; i < i1 * R; i++) y[i] = 0.0;
    else if (beta != 1.0)
        for (int64_t i = i0 * R; i < i1 * R; i++) y[i] *= beta;
    if (alpha == 0.0) return;
    const int all = i0 == 0 && i1 == A->nbr;
    double xs[SBM_MAX_BLOCK_DIM];
    for (int64_t c = 0; c < A->nbc; c++) {
        int xs_set = 0;
        for (int64_t p = cp[c]; p < cp[c + 1]; p++) {
            const int64_t i = ri[p];
            if (!all && (i < i0 || i >= i1)) continue;
            if (!xs_set) {
                for (int e = 0; e < C; e++) xs[e] = alpha * x[c * C + e];
                xs_set = 1;
            }
            sbm_blk_gemv_acc(R, C, 1.0, av + p * rc, xs, y + i * R);
        }
    }
}

/* op T on block columns [c0, c1): one dot product per column entry. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void spmv_t_cols(const spmv_job *j, int64_t c0, int64_t c1, const int R, const int C)
{
    const sbm_cbc *A = j->A;
    const int64_t rc = (int64_t)R * C;
    const int64_t *cp = A->colptr;
    const int32_t *ri = A->rowind;
    const double *av = A->values;
    const double alpha = j->alpha, beta = j->beta, *x = j->x;
    double acc[SBM_MAX_BLOCK_DIM];
    for (int64_t c = c0; c < c1; c++) {
        double *yc = j->y + c * C;
        for (int e = 0; e < C; e++) acc[e] = 0.0;
        if (alpha != 0.0)
            for (int64_t p = cp[c]; p < cp[c + 1]; p++)
                sbm_blk_gemv_t_acc(R, C, 1.0, av + p * rc, x + (int64_t)ri[p] * R, acc);
        for (int e = 0; e < C; e++) yc[e] = (beta == 0.0 ? 0.0 : beta * yc[e]) + alpha * acc[e];
    }
}

#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void spmv_range(const spmv_job *j, int64_t b, int64_t e, const int R, const int C)
{
    if (j->op == SBM_OP_N)
        spmv_n_rows(j, b, e, R, C);
    else
        spmv_t_cols(j, b, e, R, C);
}

#define SBM_X_(R, C)                                                                           \
    static void spmv_##R##_##C(void *data, int64_t b, int64_t e)                               \
    {                                                                                          \
        spmv_range(data, b, e, R, C);                                                          \
    }
SBM_BLOCK_SHAPES(SBM_X_)
#undef SBM_X_
/* indexed by sbm_blk_shape_index */
#define SBM_X_(R, C) spmv_##R##_##C,
static const sbm__cpu_range_fn spmv_fixed[] = {SBM_BLOCK_SHAPES(SBM_X_)};
#undef SBM_X_

static void spmv_any(void *data, int64_t b, int64_t e)
{
    const spmv_job *j = data;
    spmv_range(j, b, e, j->A->r, j->A->c);
}

sbm_status sbm__cpu_cbc_spmv(sbm_ctx *ctx, sbm_op op, double alpha, const sbm_cbc *A,
                             const double *x, double beta, double *y)
{
    const int t = sbm_blk_shape_index(A->r, A->c);
    spmv_job j = {op, alpha, beta, A, x, y};
    /* the ranges: y's blocks (block rows for op N, block columns for op T) */
    const int64_t n = op == SBM_OP_N ? A->nbr : A->nbc;
    /* at least MIN_WORK_PER_THREAD block-entry products per thread, for a balanced pattern */
    const double work = (double)A->nnzb * A->r * A->c + (double)n;
    const double per_item = n > 0 ? work / (double)n : 1.0;
    int64_t min_items = (int64_t)(MIN_WORK_PER_THREAD / (per_item > 1.0 ? per_item : 1.0));
    if (min_items < 1) min_items = 1;
    sbm__cpu_parallel_for(ctx, n, min_items, t >= 0 ? spmv_fixed[t] : spmv_any, &j);
    return SBM_SUCCESS;
}
