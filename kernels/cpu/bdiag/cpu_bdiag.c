/* SPDX-License-Identifier: BSD-3-Clause */
/* Block-diagonal operations on the CPU: inverse of SPD diagonal blocks (Cholesky: inline for the
 * block sizes where that is faster, LAPACK otherwise) and D*A / A*D scaling with fixed-size block
 * kernels. The front end has checked that D is block-diagonal and that the patterns agree. */
#include "cpu_backend.h"
#include "sbm_blocks.h"

#include <inttypes.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Inverse                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Cholesky and inverse of one SPD block w (b x b, lower triangle filled, upper zero), in place:
 * a compile-time size so that sbm_blk_spd_inverse unrolls.
 * @return 0, or the order of the leading minor that is not positive definite. */
#define SBM__INV_INLINE_MAX 9
#define SBM_X_(B)                                                                      \
    static int spd_inverse_##B(double *w)                                               \
    {                                                                                  \
        double l[B * B];                                                               \
        memcpy(l, w, sizeof l);                                                        \
        return sbm_blk_spd_inverse(B, l, w);                                           \
    }
SBM_X_(1) SBM_X_(2) SBM_X_(3) SBM_X_(4) SBM_X_(5) SBM_X_(9)
#undef SBM_X_

typedef int (*spd_inverse_fn)(double *w);

int sbm__host_spd_inverse(int n, double *a, double *inv)
{
    if (sbm_blk_spd_inverse(n, a, inv) != 0) return -1;
    /* an infinite pivot passes the positivity test and leaves NaNs behind */
    for (int i = 0; i < n * n; i++)
        if (!isfinite(inv[i])) return -1;
    return 0;
}

sbm_status sbm__cpu_bdiag_inverse(sbm_ctx *ctx, const sbm_cbc *D, sbm_cbc *Dinv)
{
    const int b = D->r;
    const int64_t bb = (int64_t)b * b;
    /* The inline sbm_blk_spd_inverse, unrolled, where it beats LAPACKE dpotrf + dpotri (whose call
     * and argument overhead dominates small blocks): b = 1 to 5 and 9. For 6 to 8 its 2b^2
     * dependent divisions (LAPACK: b reciprocals) cost more than the call: those and blocks above
     * 9x9 go to LAPACK (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). */
    static const spd_inverse_fn inline_inverse[SBM__INV_INLINE_MAX + 1] = {
        NULL, spd_inverse_1, spd_inverse_2, spd_inverse_3, spd_inverse_4, spd_inverse_5,
        NULL, NULL, NULL, spd_inverse_9};
    const spd_inverse_fn fast = b <= SBM__INV_INLINE_MAX ? inline_inverse[b] : NULL;
    if (!fast && D->nnzb > 0) {
        const sbm_status room = sbm__cpu_blas_room(ctx);
        if (room != SBM_SUCCESS) return room;
    }
    /* Into scratch first: on failure Dinv (possibly D itself) is left as it was. */
    int ok;
    size_t bytes = sbm__mul_size(ctx, (size_t)D->nnzb, (size_t)bb * sizeof(double),
                                 "inverse blocks", &ok);
    if (!ok) return SBM_ERR_OVERFLOW;
    double *work = sbm__host_alloc(ctx, bytes, "inverse blocks");
    if (!work) return SBM_ERR_OUT_OF_MEMORY;
    sbm_status st = SBM_SUCCESS;
    for (int64_t q = 0; q < D->nnzb && st == SBM_SUCCESS; q++) {
        const int32_t j = D->rowind[q]; /* block index on the diagonal */
        const double *a = D->values + q * bb;
        double *w = work + q * bb;
        /* Only the lower triangle is read; the _work LAPACKE entry points skip LAPACKE's own NaN
         * scan, which this loop replaces. */
        for (int cc = 0; cc < b && st == SBM_SUCCESS; cc++) {
            for (int i = 0; i < b; i++) {
                const double v = i >= cc ? a[i + cc * b] : 0.0;
                if (!isfinite(v)) {
                    st = sbm__error(ctx, SBM_ERR_NOT_FINITE,
                                    "argument D: value %g at (%d, %d) of diagonal block %" PRId32
                                    " is not finite",
                                    v, i, cc, j);
                    break;
                }
                w[i + cc * b] = v;
            }
        }
        if (st != SBM_SUCCESS) break;
        lapack_int info;
        if (fast) {
            info = fast(w);
        } else {
            info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', b, w, b);
            if (info == 0) info = LAPACKE_dpotri_work(LAPACK_COL_MAJOR, 'L', b, w, b);
        }
        if (info > 0) {
            st = sbm__error(ctx, SBM_ERR_NOT_POSITIVE_DEFINITE,
                            "argument D: diagonal block %" PRId32 " (%dx%d) is not positive "
                            "definite (its leading minor of order %d is not)",
                            j, b, b, (int)info);
        } else if (info < 0) {
            st = sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                            "LAPACK rejected argument %d for diagonal block %" PRId32, (int)-info, j);
        } else {
            /* the lower triangle mirrored: Dinv exactly symmetric */
            for (int cc = 0; cc < b; cc++)
                for (int i = cc + 1; i < b; i++) w[cc + i * b] = w[i + cc * b];
        }
    }
    if (st == SBM_SUCCESS && D->nnzb > 0) memcpy(Dinv->values, work, bytes);
    sbm__host_free(ctx, work);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Scaling                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Block (j, j) of D, or NULL where it is not stored (zero). */
static inline const double *diag_block(const sbm_cbc *D, int64_t j, int64_t bb)
{
    return D->colptr[j + 1] > D->colptr[j] ? D->values + D->colptr[j] * bb : NULL;
}

/* B_ij = D_ii * A_ij (left: R = K = b, C = A's c) or A_ij * D_jj (right: R = A's r, K = C = b).
 * Each block is computed into a local block first, so B may be A. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void scale_body(int left, const sbm_cbc *D, const sbm_cbc *A, sbm_cbc *B,
                              const int R, const int K, const int C)
{
    const int64_t rc = (int64_t)R * C, bb = left ? (int64_t)R * K : (int64_t)K * C;
    double t[SBM_MAX_BLOCK_DIM * SBM_MAX_BLOCK_DIM];
    for (int64_t j = 0; j < A->nbc; j++) {
        const double *dj = left ? NULL : diag_block(D, j, bb);
        for (int64_t p = A->colptr[j]; p < A->colptr[j + 1]; p++) {
            const double *a = A->values + p * rc;
            const double *d = left ? diag_block(D, A->rowind[p], bb) : dj;
            for (int64_t e = 0; e < rc; e++) t[e] = 0.0;
            if (d) {
                if (left)
                    sbm_blk_gemm_acc(R, K, C, 1.0, d, a, t);
                else
                    sbm_blk_gemm_acc(R, K, C, 1.0, a, d, t);
            }
            memcpy(B->values + p * rc, t, (size_t)rc * sizeof(double));
        }
    }
}

typedef void (*scale_fn)(int left, const sbm_cbc *D, const sbm_cbc *A, sbm_cbc *B);

#define SBM_X_(R, K, C)                                                                 \
    static void scale_##R##_##K##_##C(int left, const sbm_cbc *D, const sbm_cbc *A,     \
                                      sbm_cbc *B)                                       \
    {                                                                                   \
        scale_body(left, D, A, B, R, K, C);                                             \
    }
SBM_GEMM_TRIPLES(SBM_X_)
#undef SBM_X_
/* indexed by sbm_blk_triple_index */
#define SBM_X_(R, K, C) scale_##R##_##K##_##C,
static const scale_fn scale_fixed[] = {SBM_GEMM_TRIPLES(SBM_X_)};
#undef SBM_X_

sbm_status sbm__cpu_bdiag_scale(sbm_ctx *ctx, sbm_side side, const sbm_cbc *D, const sbm_cbc *A,
                                sbm_cbc *B)
{
    const int left = side == SBM_SIDE_LEFT;
    const int b = D->r;
    /* the block product triple: D (b x b) * A (b x c), or A (r x b) * D (b x b) */
    const int R = left ? b : A->r, K = b, C = left ? A->c : b;
    const int t = sbm_blk_triple_index(R, K, C);
    if (t >= 0)
        scale_fixed[t](left, D, A, B);
    else
        scale_body(left, D, A, B, R, K, C);
    (void)ctx;
    return SBM_SUCCESS;
}
