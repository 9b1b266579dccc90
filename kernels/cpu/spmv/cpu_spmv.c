/* SPDX-License-Identifier: BSD-3-Clause */
/* Block SpMV on the CPU: y = alpha*op(A)*x + beta*y for CBC A, one fixed-size kernel per block
 * shape of SBM_BLOCK_SHAPES and a runtime-size one for the rest. */
#include "cpu_backend.h"
#include "sbm_blocks.h"

/* op N scatters each column's blocks into y (column-oriented, as the storage is); op T gathers
 * dot products per column, so every y entry is written once. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void spmv_body(sbm_op op, double alpha, const sbm_cbc *A, const double *x,
                             double beta, double *y, const int R, const int C)
{
    const int64_t rc = (int64_t)R * C;
    const int64_t *cp = A->colptr;
    const int32_t *ri = A->rowind;
    const double *av = A->values;
    if (op == SBM_OP_N) {
        const int64_t m = A->nbr * R;
        if (beta == 0.0)
            for (int64_t i = 0; i < m; i++) y[i] = 0.0;
        else if (beta != 1.0)
            for (int64_t i = 0; i < m; i++) y[i] *= beta;
        if (alpha == 0.0) return;
        double xs[SBM_MAX_BLOCK_DIM];
        for (int64_t j = 0; j < A->nbc; j++) {
            if (cp[j + 1] == cp[j]) continue;
            for (int e = 0; e < C; e++) xs[e] = alpha * x[j * C + e];
            for (int64_t p = cp[j]; p < cp[j + 1]; p++)
                sbm_blk_gemv_acc(R, C, 1.0, av + p * rc, xs, y + (int64_t)ri[p] * R);
        }
    } else {
        double acc[SBM_MAX_BLOCK_DIM];
        for (int64_t j = 0; j < A->nbc; j++) {
            double *yj = y + j * C;
            for (int e = 0; e < C; e++) acc[e] = 0.0;
            if (alpha != 0.0)
                for (int64_t p = cp[j]; p < cp[j + 1]; p++)
                    sbm_blk_gemv_t_acc(R, C, 1.0, av + p * rc, x + (int64_t)ri[p] * R, acc);
            for (int e = 0; e < C; e++)
                yj[e] = (beta == 0.0 ? 0.0 : beta * yj[e]) + alpha * acc[e];
        }
    }
}

typedef void (*spmv_fn)(sbm_op op, double alpha, const sbm_cbc *A, const double *x, double beta,
                        double *y);

#define SBM_X_(R, C)                                                                           \
    static void spmv_##R##_##C(sbm_op op, double alpha, const sbm_cbc *A, const double *x,     \
                               double beta, double *y)                                         \
    {                                                                                          \
        spmv_body(op, alpha, A, x, beta, y, R, C);                                             \
    }
SBM_BLOCK_SHAPES(SBM_X_)
#undef SBM_X_
/* indexed by sbm_blk_shape_index */
#define SBM_X_(R, C) spmv_##R##_##C,
static const spmv_fn spmv_fixed[] = {SBM_BLOCK_SHAPES(SBM_X_)};
#undef SBM_X_

sbm_status sbm__cpu_cbc_spmv(sbm_ctx *ctx, sbm_op op, double alpha, const sbm_cbc *A,
                             const double *x, double beta, double *y)
{
    const int t = sbm_blk_shape_index(A->r, A->c);
    if (t >= 0)
        spmv_fixed[t](op, alpha, A, x, beta, y);
    else
        spmv_body(op, alpha, A, x, beta, y, A->r, A->c);
    (void)ctx;
    return SBM_SUCCESS;
}
