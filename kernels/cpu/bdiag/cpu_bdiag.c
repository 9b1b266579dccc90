/* SPDX-License-Identifier: BSD-3-Clause */
/* Block-diagonal operations on the CPU: inverse of SPD diagonal blocks (Cholesky: inline for the
 * block sizes where that is faster, LAPACK otherwise) and D*A / A*D scaling with fixed-size block
 * kernels. The front end has checked that D is block-diagonal and that the patterns agree.
 * Threads (sbm__cpu_parallel_for) take ranges of blocks (inverse) or block columns (scaling):
 * every output block is computed by one thread as by one, so the bits do not depend on the
 * number of threads; the inverse reports the first failing block in storage order, as one pass
 * does. */
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

/* A failure of one range of blocks: the first block of the range that fails and why. */
typedef struct inv_fail {
    int64_t q;      /* block (stored position), -1: none */
    int kind;       /* 1 not finite (v at (i, cc)), 2 not SPD (info), 3 LAPACK argument (info) */
    double v;
    int i, cc;
    lapack_int info;
} inv_fail;

typedef struct inv_job {
    const sbm_cbc *D;
    double *work;
    spd_inverse_fn fast;
    int64_t chunk;          /* blocks per failure slot */
    inv_fail *fail;         /* one per chunk of blocks */
} inv_job;

/* The blocks of chunks [k0, k1) into work; a block that fails is recorded in its chunk's slot
 * and ends that chunk (later chunks still run: the first failure overall is the earliest slot).
 * Threads take whole chunks, so each slot has one writer. */
static void inverse_range(void *data, int64_t k0, int64_t k1)
{
    const inv_job *jb = data;
    const sbm_cbc *D = jb->D;
    const int b = D->r;
    const int64_t bb = (int64_t)b * b;
    const int64_t q0 = k0 * jb->chunk, q1 = k1 * jb->chunk < D->nnzb ? k1 * jb->chunk : D->nnzb;
    for (int64_t q = q0; q < q1; q++) {
        inv_fail *f = &jb->fail[q / jb->chunk];
        if (f->q >= 0) continue; /* its chunk has failed: the one-thread loop stops there */
        const double *a = D->values + q * bb;
        double *w = jb->work + q * bb;
        /* Only the lower triangle is read; the _work LAPACKE entry points skip LAPACKE's own NaN
         * scan, which this loop replaces. */
        int bad = 0;
        for (int cc = 0; cc < b && !bad; cc++) {
            for (int i = 0; i < b; i++) {
                const double v = i >= cc ? a[i + cc * b] : 0.0;
                if (!isfinite(v)) {
                    *f = (inv_fail){q, 1, v, i, cc, 0};
                    bad = 1;
                    break;
                }
                w[i + cc * b] = v;
            }
        }
        if (bad) continue;
        lapack_int info;
        if (jb->fast) {
            info = jb->fast(w);
        } else {
            info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', b, w, b);
            if (info == 0) info = LAPACKE_dpotri_work(LAPACK_COL_MAJOR, 'L', b, w, b);
        }
        if (info != 0) {
            *f = (inv_fail){q, info > 0 ? 2 : 3, 0.0, 0, 0, info};
            continue;
        }
        /* the lower triangle mirrored: Dinv exactly symmetric */
        for (int cc = 0; cc < b; cc++)
            for (int i = cc + 1; i < b; i++) w[cc + i * b] = w[i + cc * b];
    }
}

/* Failure slots: one per FAIL_CHUNK blocks, a fixed partition that the threads take whole. */
#define FAIL_CHUNK 64
/* A thread is worth its start from this many block entries (nnzb * b * b) on. */
#define MIN_INV_WORK_PER_THREAD 32768

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
    const int64_t nslots = (D->nnzb + FAIL_CHUNK - 1) / FAIL_CHUNK;
    double *work = sbm__host_alloc(ctx, bytes, "inverse blocks");
    inv_fail *fail = work ? sbm__host_alloc(ctx, (size_t)(nslots > 0 ? nslots : 1) * sizeof *fail,
                                            "inverse blocks")
                          : NULL;
    if (!fail) {
        if (work) sbm__host_free(ctx, work);
        return SBM_ERR_OUT_OF_MEMORY;
    }
    for (int64_t k = 0; k < nslots; k++) fail[k].q = -1;
    inv_job jb = {D, work, fast, FAIL_CHUNK, fail};
    const int64_t min_chunks = MIN_INV_WORK_PER_THREAD / (bb * FAIL_CHUNK);
    sbm__cpu_parallel_for(ctx, nslots, min_chunks > 0 ? min_chunks : 1, inverse_range, &jb);
    /* the first failing block, as one pass over the blocks finds it */
    const inv_fail *f = NULL;
    for (int64_t k = 0; k < nslots && !f; k++)
        if (fail[k].q >= 0) f = &fail[k];
    sbm_status st = SBM_SUCCESS;
    if (f) {
        const int32_t j = D->rowind[f->q]; /* block index on the diagonal */
        if (f->kind == 1)
            st = sbm__error(ctx, SBM_ERR_NOT_FINITE,
                            "argument D: value %g at (%d, %d) of diagonal block %" PRId32
                            " is not finite",
                            f->v, f->i, f->cc, j);
        else if (f->kind == 2)
            st = sbm__error(ctx, SBM_ERR_NOT_POSITIVE_DEFINITE,
                            "argument D: diagonal block %" PRId32 " (%dx%d) is not positive "
                            "definite (its leading minor of order %d is not)",
                            j, b, b, (int)f->info);
        else
            st = sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                            "LAPACK rejected argument %d for diagonal block %" PRId32,
                            (int)-f->info, j);
    }
    if (st == SBM_SUCCESS && D->nnzb > 0) memcpy(Dinv->values, work, bytes);
    sbm__host_free(ctx, fail);
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
                              int64_t j0, int64_t j1, const int R, const int K, const int C)
{
    const int64_t rc = (int64_t)R * C, bb = left ? (int64_t)R * K : (int64_t)K * C;
    double t[SBM_MAX_BLOCK_DIM * SBM_MAX_BLOCK_DIM];
    for (int64_t j = j0; j < j1; j++) {
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

/* A range of A's block columns (threads: every block of B written by one). */
typedef struct scale_job {
    int left;
    const sbm_cbc *D, *A;
    sbm_cbc *B;
    int R, K, C;
} scale_job;

#define SBM_X_(R, K, C)                                                                 \
    static void scale_##R##_##K##_##C(void *data, int64_t j0, int64_t j1)               \
    {                                                                                   \
        const scale_job *s = data;                                                      \
        scale_body(s->left, s->D, s->A, s->B, j0, j1, R, K, C);                         \
    }
SBM_GEMM_TRIPLES(SBM_X_)
#undef SBM_X_
/* indexed by sbm_blk_triple_index */
#define SBM_X_(R, K, C) scale_##R##_##K##_##C,
static const sbm__cpu_range_fn scale_fixed[] = {SBM_GEMM_TRIPLES(SBM_X_)};
#undef SBM_X_

static void scale_any(void *data, int64_t j0, int64_t j1)
{
    const scale_job *s = data;
    scale_body(s->left, s->D, s->A, s->B, j0, j1, s->R, s->K, s->C);
}

/* A thread is worth its start from this many block-entry products (nnzb * R * K * C) on. */
#define MIN_SCALE_WORK_PER_THREAD 65536

sbm_status sbm__cpu_bdiag_scale(sbm_ctx *ctx, sbm_side side, const sbm_cbc *D, const sbm_cbc *A,
                                sbm_cbc *B)
{
    const int left = side == SBM_SIDE_LEFT;
    const int b = D->r;
    /* the block product triple: D (b x b) * A (b x c), or A (r x b) * D (b x b) */
    const int R = left ? b : A->r, K = b, C = left ? A->c : b;
    const int t = sbm_blk_triple_index(R, K, C);
    scale_job s = {left, D, A, B, R, K, C};
    const double per_col = A->nbc > 0 ? (double)A->nnzb * R * K * C / (double)A->nbc + 1.0 : 1.0;
    const int64_t min_cols = (int64_t)(MIN_SCALE_WORK_PER_THREAD / per_col);
    sbm__cpu_parallel_for(ctx, A->nbc, min_cols > 0 ? min_cols : 1,
                          t >= 0 ? scale_fixed[t] : scale_any, &s);
    return SBM_SUCCESS;
}
