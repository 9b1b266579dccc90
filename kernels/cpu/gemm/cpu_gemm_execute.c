/* SPDX-License-Identifier: BSD-3-Clause */
/* Block SpGEMM on the CPU, numeric phase (execute): the fixed-size block kernels, compiled once
 * per triple of SBM_GEMM_TRIPLES for the baseline target and, where the compiler and CPU allow,
 * once more for AVX2, plus the run-time-size kernels; see cpu_gemm.h for the algorithm. */
#include "cpu_gemm.h"
#include "sbm_blocks.h"

#include <string.h>

/* Everything one numeric pass reads and writes. op(A) and op(B) are block-CSC. */
typedef struct gemm_args {
    int64_t nbc;          /* block columns of C and op(B) */
    int64_t j0, j1;       /* the columns of C this pass computes (a thread's range) */
    const int64_t *ap;    /* op(A): column pointers, rows, values (r x k blocks) */
    const int32_t *ai;
    const double *av;
    const int64_t *bp;    /* op(B): column pointers, rows, values (k x c blocks) */
    const int32_t *bi;
    const double *bv;     /* bperm == NULL: op(B)'s blocks; else B's (c x k) blocks */
    const int64_t *bperm; /* op_b == T: op(B) block t is B's block bperm[t], transposed */
    const int64_t *a_end; /* NULL: whole op(A) columns */
    const int32_t *pos;   /* NULL: scatter mode through slot; else column j0's first position */
    int32_t *slot;        /* scatter mode: this pass's own row -> position map */
    const int64_t *cp;    /* C: column pointers, rows, values */
    const int32_t *ci;
    double *cv;
    double alpha;
    const int64_t *up;    /* U (NULL if none): column pointers, values, positions in C */
    const double *uv;
    const int32_t *upos;
    int r;                /* block shape triple, for the generic kernel */
    int k;
    int c;
} gemm_args;

typedef void (*gemm_numeric_fn)(const gemm_args *g);

/* The op(A) column that op(B) block b (of the current column, which ends at b_end) will read:
 * successive op(B) blocks jump between distant op(A) columns (BA: one point per block), which
 * the hardware prefetcher cannot predict. Up to 16 cache lines are requested this many blocks
 * ahead; with a transposed B, also the B block itself (read in place, scattered over B). */
#define SBM__GEMM_PREFETCH 2
static inline void prefetch_column(const gemm_args *g, int64_t b, int64_t b_end, int64_t RK,
                                   int64_t KC, const int BT)
{
#if defined(__GNUC__)
    if (b >= b_end) return;
    const int64_t kk = g->bi[b];
    const char *p = (const char *)(g->av + g->ap[kk] * RK);
    const int64_t bytes = (g->ap[kk + 1] - g->ap[kk]) * RK * (int64_t)sizeof(double);
    for (int64_t off = 0; off < bytes && off < 16 * 64; off += 64) __builtin_prefetch(p + off);
    if (BT) {
        const char *q = (const char *)(g->bv + g->bperm[b] * KC);
        for (int64_t off = 0; off < KC * (int64_t)sizeof(double) && off < 16 * 64; off += 64)
            __builtin_prefetch(q + off);
    }
#else
    (void)g, (void)b, (void)b_end, (void)RK, (void)KC, (void)BT;
#endif
}

#if defined(__GNUC__)
typedef double sbm__v2d __attribute__((vector_size(16))); /* two doubles: one SSE2 register */
typedef double sbm__v4d __attribute__((vector_size(32))); /* four: one AVX register */
#endif

/* x86 with GCC or Clang: the fast paths are compiled a second time for AVX2 and chosen at run
 * time (__builtin_cpu_supports), the library itself staying baseline x86-64. AVX2 without FMA:
 * the same multiplies and adds, so the same bits. -DSBM_NO_AVX2 leaves the copies out (to test
 * the baseline kernels on an AVX2 machine). */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && !defined(SBM_NO_AVX2)
#define SBM__GEMM_AVX2 1
#define SBM__TARGET_AVX2 __attribute__((target("avx2")))
#else
#define SBM__GEMM_AVX2 0
#endif

#if defined(__GNUC__)
#define SBM__ALWAYS_INLINE __attribute__((always_inline)) static inline
#else
#define SBM__ALWAYS_INLINE static inline
#endif

/* Element (p, j) of op(B)'s block: read in place from B's block when BT. */
#define SBM__B_AT(bb, p, j) (BT ? (bb)[(j) + (p) * C] : (bb)[(p) + (j) * K])

/* acc (R x C) += a (R x K) * op(B) block, where bb is that block (BT = 0) or B's block of which
 * it is the transpose (BT = 1). Each element of acc gets its K terms added in increasing order,
 * as in sbm_blk_gemm_acc, so neither BT nor the form (VEC) changes a bit of the result.
 *
 * VEC = 1 (compile-time sizes): a column of acc is held in two-double vectors across the K terms.
 * GCC's own vectorisation of sbm_blk_gemm_acc, fully unrolled, shuffles and spills for some sizes,
 * where this form is faster; other sizes equal or better. VEC = 2: four-double vectors (AVX2 only:
 * without it GCC splits them, much slower), then a pair and a single row for the rest; faster than
 * VEC = 1 for R >= 4, no gain below. Run-time sizes (the generic path), where those forms are
 * slower than plain loops: rows in chunks held in registers across the K terms, 4 rows as two pairs
 * (VEC = 0) or, with AVX2, 8 rows as two quadruples and then 4 (VEC = 3), faster than the plain
 * loops (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). */

#if defined(__GNUC__)
/* VEC = 2: a column of acc in four-double vectors, then a pair and a single row for the rest. */
SBM__ALWAYS_INLINE void product_quads(const int R, const int K, const int C, const int BT,
                                      const double *SBM_BLK_RESTRICT a,
                                      const double *SBM_BLK_RESTRICT bb,
                                      double *SBM_BLK_RESTRICT acc)
{
    const int R4 = R / 4, pair = (R & 2) != 0, o2 = 4 * R4, o1 = o2 + 2 * pair;
    for (int j = 0; j < C; j++) {
        sbm__v4d t[SBM_MAX_BLOCK_DIM / 4];
        sbm__v2d h = {0.0, 0.0};
        double last = 0.0;
        for (int i = 0; i < R4; i++) memcpy(&t[i], acc + 4 * i + j * R, sizeof t[i]);
        if (pair) memcpy(&h, acc + o2 + j * R, sizeof h);
        if (R & 1) last = acc[o1 + j * R];
        for (int p = 0; p < K; p++) {
            const double s = SBM__B_AT(bb, p, j);
            const sbm__v4d sv = {s, s, s, s};
            const sbm__v2d sh = {s, s};
            for (int i = 0; i < R4; i++) {
                sbm__v4d x;
                memcpy(&x, a + 4 * i + p * R, sizeof x);
                t[i] += x * sv;
            }
            if (pair) {
                sbm__v2d x;
                memcpy(&x, a + o2 + p * R, sizeof x);
                h += x * sh;
            }
            if (R & 1) last += a[o1 + p * R] * s;
        }
        for (int i = 0; i < R4; i++) memcpy(acc + 4 * i + j * R, &t[i], sizeof t[i]);
        if (pair) memcpy(acc + o2 + j * R, &h, sizeof h);
        if (R & 1) acc[o1 + j * R] = last;
    }
}

/* VEC = 1: a column of acc in two-double vectors across the K terms. */
SBM__ALWAYS_INLINE void product_pairs(const int R, const int K, const int C, const int BT,
                                      const double *SBM_BLK_RESTRICT a,
                                      const double *SBM_BLK_RESTRICT bb,
                                      double *SBM_BLK_RESTRICT acc)
{
    const int R2 = R / 2;
    for (int j = 0; j < C; j++) {
        sbm__v2d t[SBM_MAX_BLOCK_DIM / 2];
        double last = 0.0; /* row R-1 when R is odd */
        for (int i = 0; i < R2; i++) memcpy(&t[i], acc + 2 * i + j * R, sizeof t[i]);
        if (R & 1) last = acc[R - 1 + j * R];
        for (int p = 0; p < K; p++) {
            const double s = SBM__B_AT(bb, p, j);
            const sbm__v2d sv = {s, s};
            for (int i = 0; i < R2; i++) {
                sbm__v2d x;
                memcpy(&x, a + 2 * i + p * R, sizeof x);
                t[i] += x * sv;
            }
            if (R & 1) last += a[R - 1 + p * R] * s;
        }
        for (int i = 0; i < R2; i++) memcpy(acc + 2 * i + j * R, &t[i], sizeof t[i]);
        if (R & 1) acc[R - 1 + j * R] = last;
    }
}

/* Rows i..i+N*W-1 of column j of acc (c) held in N vectors of W doubles across the K terms
 * (N compile-time: the vectors stay in registers). */
#define SBM__ROW_CHUNK(NAME, VT, W)                                                           \
    SBM__ALWAYS_INLINE void NAME(const int R, const int K, const int C, const int BT,         \
                                 const int N, int j, int i, const double *SBM_BLK_RESTRICT a, \
                                 const double *SBM_BLK_RESTRICT bb, double *SBM_BLK_RESTRICT c) \
    {                                                                                         \
        VT t[2];                                                                              \
        for (int v = 0; v < N; v++) memcpy(&t[v], c + i + v * W, sizeof t[v]);               \
        for (int p = 0; p < K; p++) {                                                         \
            const double s = SBM__B_AT(bb, p, j);                                             \
            for (int v = 0; v < N; v++) {                                                     \
                VT x;                                                                         \
                memcpy(&x, a + i + v * W + p * R, sizeof x);                                  \
                t[v] += x * s;                                                                \
            }                                                                                 \
        }                                                                                     \
        for (int v = 0; v < N; v++) memcpy(c + i + v * W, &t[v], sizeof t[v]);               \
    }
SBM__ROW_CHUNK(rows_quads, sbm__v4d, 4)
SBM__ROW_CHUNK(rows_pairs, sbm__v2d, 2)
#undef SBM__ROW_CHUNK

/* Run-time sizes, one column c of acc: rows in chunks held in registers across the K terms,
 * 8 rows as two quadruples and then 4 (VEC = 3, AVX2), 4 rows as two pairs, the rest singly. */
SBM__ALWAYS_INLINE void product_column(const int R, const int K, const int C, const int BT,
                                       const int VEC, int j, const double *SBM_BLK_RESTRICT a,
                                       const double *SBM_BLK_RESTRICT bb,
                                       double *SBM_BLK_RESTRICT c)
{
    int i = 0;
    if (VEC == 3) {
        for (; i + 8 <= R; i += 8) rows_quads(R, K, C, BT, 2, j, i, a, bb, c);
        for (; i + 4 <= R; i += 4) rows_quads(R, K, C, BT, 1, j, i, a, bb, c);
    }
    for (; i + 4 <= R; i += 4) rows_pairs(R, K, C, BT, 2, j, i, a, bb, c);
    for (; i < R; i++) {
        double t = c[i];
        for (int p = 0; p < K; p++) t += a[i + p * R] * SBM__B_AT(bb, p, j);
        c[i] = t;
    }
}
#endif

SBM__ALWAYS_INLINE void block_product(const int R, const int K, const int C, const int BT,
                                      const int VEC, const double *SBM_BLK_RESTRICT a,
                                      const double *SBM_BLK_RESTRICT bb,
                                      double *SBM_BLK_RESTRICT acc)
{
#if defined(__GNUC__)
    if (VEC == 2)
        product_quads(R, K, C, BT, a, bb, acc);
    else if (VEC == 1)
        product_pairs(R, K, C, BT, a, bb, acc);
    else
        for (int j = 0; j < C; j++) product_column(R, K, C, BT, VEC, j, a, bb, acc + j * R);
#else
    for (int j = 0; j < C; j++)
        for (int p = 0; p < K; p++) {
            const double s = SBM__B_AT(bb, p, j);
            for (int i = 0; i < R; i++) acc[i + j * R] += a[i + p * R] * s;
        }
#endif
}
#undef SBM__B_AT

/* The products of column j of C into cj: for each op(B) block, each op(A) block it meets, its
 * output block found through the plan's positions (POS: *pos, advanced past the column's) or
 * the row -> position map g->slot (filled for this column). */
SBM__ALWAYS_INLINE void column_products(const gemm_args *g, const int R, const int K,
                                        const int C, const int BT, const int VEC, const int POS,
                                        int64_t j, double *cj, const int32_t **pos)
{
    const int64_t RK = (int64_t)R * K, KC = (int64_t)K * C, RC = (int64_t)R * C;
    const int64_t *ap = g->ap, *bp = g->bp, *a_end = g->a_end, *bperm = g->bperm;
    const int32_t *ai = g->ai, *bi = g->bi, *slot = g->slot;
    const double *av = g->av, *bv = g->bv;
    for (int64_t b = bp[j]; b < bp[j + 1]; b++) {
        const int64_t kk = bi[b], a0 = ap[kk], a1 = a_end ? a_end[b] : ap[kk + 1];
        const double *bb = bv + (BT ? bperm[b] : b) * KC;
        prefetch_column(g, b + SBM__GEMM_PREFETCH, bp[j + 1], RK, KC, BT);
        for (int64_t a = a0; a < a1; a++) {
            const int64_t at = POS ? (*pos)[a - a0] : slot[ai[a]];
            block_product(R, K, C, BT, VEC, av + a * RK, bb, cj + at * RC);
        }
        if (POS) *pos += a1 - a0;
    }
}

/* One pass over C; R, K, C (and BT: op(B) read through bperm) are compile-time constants in the
 * fast paths, so the block kernel is unrolled and vectorised for each triple. */
SBM__ALWAYS_INLINE void gemm_numeric(const gemm_args *g, const int R, const int K, const int C,
                                     const int BT, const int VEC)
{
    const int64_t RC = (int64_t)R * C;
    const int32_t *pos = g->pos;
    for (int64_t j = g->j0; j < g->j1; j++) {
        const int64_t c0 = g->cp[j], c1 = g->cp[j + 1];
        double *cj = g->cv + c0 * RC;
        memset(cj, 0, (size_t)((c1 - c0) * RC) * sizeof(double));
        if (pos) {
            column_products(g, R, K, C, BT, VEC, 1, j, cj, &pos);
        } else {
            for (int64_t p = c0; p < c1; p++) g->slot[g->ci[p]] = (int32_t)(p - c0);
            column_products(g, R, K, C, BT, VEC, 0, j, cj, NULL);
        }
        if (g->alpha != 1.0)
            for (int64_t e = 0; e < (c1 - c0) * RC; e++) cj[e] *= g->alpha;
        if (g->uv) {
            for (int64_t u = g->up[j]; u < g->up[j + 1]; u++) {
                double *dst = cj + (int64_t)g->upos[u] * RC;
                const double *src = g->uv + u * RC;
                for (int64_t e = 0; e < RC; e++) dst[e] += src[e];
            }
        }
    }
}

/* flatten: the block kernel must be inlined at every call site with the constant sizes; GCC's
 * inliner otherwise gives up on some (a generic-size call slowed scatter mode down;
 * see docs/DESIGN-NOTES.md, "Measurements behind code choices"). */
#if defined(__GNUC__)
#define SBM__FLATTEN __attribute__((flatten))
#else
#define SBM__FLATTEN
#endif

/* One variant of the kernels (ATTR: its target; VEC: block_product's form): a kernel per triple
 * of SBM_GEMM_TRIPLES and per BT, and a table of them in the list's order, which gemm_select
 * indexes with sbm_blk_triple_index. */
#define SBM__GEMM_KERNELS(NAME, ATTR, VEC, R, K, C)                                           \
    ATTR SBM__FLATTEN static void NAME##_##R##_##K##_##C(const gemm_args *g)                  \
    {                                                                                         \
        gemm_numeric(g, R, K, C, 0, VEC);                                                     \
    }                                                                                         \
    ATTR SBM__FLATTEN static void NAME##_t_##R##_##K##_##C(const gemm_args *g)                \
    {                                                                                         \
        gemm_numeric(g, R, K, C, 1, VEC);                                                     \
    }
#define SBM__GEMM_ENTRY(NAME, R, K, C) {NAME##_##R##_##K##_##C, NAME##_t_##R##_##K##_##C},

#define SBM_X_(R, K, C) SBM__GEMM_KERNELS(gemm_portable, , 1, R, K, C)
SBM_GEMM_TRIPLES(SBM_X_)
#undef SBM_X_
#define SBM_X_(R, K, C) SBM__GEMM_ENTRY(gemm_portable, R, K, C)
static const gemm_numeric_fn gemm_portable[][2] = {SBM_GEMM_TRIPLES(SBM_X_)};
#undef SBM_X_
static void gemm_portable_n(const gemm_args *g) { gemm_numeric(g, g->r, g->k, g->c, 0, 0); }
static void gemm_portable_t(const gemm_args *g) { gemm_numeric(g, g->r, g->k, g->c, 1, 0); }
static const gemm_numeric_fn gemm_portable_generic[2] = {gemm_portable_n, gemm_portable_t};

#if SBM__GEMM_AVX2
#define SBM_X_(R, K, C) SBM__GEMM_KERNELS(gemm_avx2, SBM__TARGET_AVX2, 2, R, K, C)
SBM_GEMM_TRIPLES(SBM_X_)
#undef SBM_X_
#define SBM_X_(R, K, C) SBM__GEMM_ENTRY(gemm_avx2, R, K, C)
static const gemm_numeric_fn gemm_avx2[][2] = {SBM_GEMM_TRIPLES(SBM_X_)};
#undef SBM_X_
SBM__TARGET_AVX2 static void gemm_avx2_n(const gemm_args *g)
{
    gemm_numeric(g, g->r, g->k, g->c, 0, 3);
}
SBM__TARGET_AVX2 static void gemm_avx2_t(const gemm_args *g)
{
    gemm_numeric(g, g->r, g->k, g->c, 1, 3);
}
static const gemm_numeric_fn gemm_avx2_generic[2] = {gemm_avx2_n, gemm_avx2_t};
#endif
#undef SBM__GEMM_ENTRY
#undef SBM__GEMM_KERNELS

/* bt: op(B) is read through a block permutation of B (op_b == T). The AVX2 versions where they
 * pay (R >= 4) and the CPU has AVX2. */
static gemm_numeric_fn gemm_select(int r, int k, int c, int bt)
{
    const int t = sbm_blk_triple_index(r, k, c);
#if SBM__GEMM_AVX2
    if (r >= 4 && __builtin_cpu_supports("avx2"))
        return t >= 0 ? gemm_avx2[t][bt] : gemm_avx2_generic[bt];
#endif
    return t >= 0 ? gemm_portable[t][bt] : gemm_portable_generic[bt];
}

/* C = U alone (alpha == 0: the products are not computed, as in BLAS). */
static void gemm_copy_u(const gemm_args *g)
{
    const int64_t RC = (int64_t)g->r * g->c;
    memset(g->cv, 0, (size_t)(g->cp[g->nbc] * RC) * sizeof(double));
    if (!g->uv) return;
    for (int64_t j = 0; j < g->nbc; j++)
        for (int64_t u = g->up[j]; u < g->up[j + 1]; u++)
            memcpy(g->cv + (g->cp[j] + g->upos[u]) * RC, g->uv + u * RC, (size_t)RC * sizeof(double));
}

/* Values of X^T in the order of transpose_pattern. */
static void transpose_values(const sbm_cbc *X, const int64_t *perm, double *out)
{
    const int64_t rc = (int64_t)X->r * X->c;
    for (int64_t t = 0; t < X->nnzb; t++)
        sbm_blk_transpose(X->r, X->c, X->values + perm[t] * rc, out + t * rc);
}

/* A thread is worth its start from this many block-entry products (C's nnzb * r * c) on. */
#define MIN_GEMM_WORK_PER_THREAD 65536

/* Pieces k of t, each a contiguous range of C's columns, on one thread each. */
typedef struct gemm_piece {
    const gemm_args *g;
    gemm_numeric_fn fn;
    int64_t t;
    int32_t *slots;       /* scatter mode: the maps of pieces 1 .. t-1 (piece 0: the plan's) */
    int64_t nbr;
} gemm_piece;

static void gemm_pieces(void *data, int64_t k0, int64_t k1)
{
    const gemm_piece *pc = data;
    for (int64_t k = k0; k < k1; k++) {
        gemm_args g = *pc->g;
        g.j0 = pc->g->nbc * k / pc->t, g.j1 = pc->g->nbc * (k + 1) / pc->t;
        if (g.pos) {
            /* the positions of the products of the columns before j0 */
            int64_t off = 0;
            for (int64_t b = g.bp[0]; b < g.bp[g.j0]; b++) {
                const int64_t kk = g.bi[b];
                off += (g.a_end ? g.a_end[b] : g.ap[kk + 1]) - g.ap[kk];
            }
            g.pos += off;
        } else if (k > 0) {
            g.slot = pc->slots + (k - 1) * pc->nbr;
        }
        pc->fn(&g);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Execute                                                                                  */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm__cpu_gemm_execute(sbm_ctx *ctx, const sbm_gemm_plan *plan, double alpha,
                                 const sbm_cbc *A, const sbm_cbc *B, const sbm_cbc *U, sbm_cbc *C)
{
    const cpu_gemm_plan *P = (const cpu_gemm_plan *)plan;
    gemm_args g;
    memset(&g, 0, sizeof g);
    g.nbc = P->nbc;
    g.r = P->r;
    g.k = P->k;
    g.c = P->c;
    g.alpha = alpha;
    g.cp = C->colptr;
    g.ci = C->rowind;
    g.cv = C->values;
    if (U) {
        g.up = U->colptr;
        g.uv = U->values;
        g.upos = P->upos;
    }
    if (alpha == 0.0) {
        gemm_copy_u(&g);
        return SBM_SUCCESS;
    }
    const int at = P->op_a == SBM_OP_T, bt = P->op_b == SBM_OP_T;
    if (at) transpose_values(A, P->at_perm, P->at_val);
    g.ap = at ? P->at_ptr : A->colptr;
    g.ai = at ? P->at_ind : A->rowind;
    g.av = at ? P->at_val : A->values;
    g.bp = bt ? P->bt_ptr : B->colptr;
    g.bi = bt ? P->bt_ind : B->rowind;
    g.bv = B->values;
    g.bperm = bt ? P->bt_perm : NULL; /* B's blocks read in place, transposed */
    g.a_end = P->a_end;
    g.pos = P->pos;
    g.slot = P->slot;
    g.j0 = 0, g.j1 = P->nbc;
    const gemm_numeric_fn fn = gemm_select(P->r, P->k, P->c, g.bperm != NULL);
    /* Threads take ranges of C's columns (each column computed as by one thread: the same bits
     * for any number); in scatter mode each range needs its own row -> position map. */
    const double per_col = P->nbc > 0 ? (double)C->nnzb * P->r * P->c / (double)P->nbc + 1.0 : 1.0;
    const int64_t min_cols = (int64_t)(MIN_GEMM_WORK_PER_THREAD / per_col);
    int64_t t = sbm__cpu_threads(ctx);
    if (!ctx->fine_grain && t > P->nbc / (min_cols > 0 ? min_cols : 1))
        t = P->nbc / (min_cols > 0 ? min_cols : 1);
    if (t > P->nbc) t = P->nbc;
    int32_t *slots = NULL;
    if (t > 1 && !g.pos) {
        slots = sbm__host_alloc(ctx, (size_t)(t - 1) * (size_t)(P->nbr > 0 ? P->nbr : 1) *
                                         sizeof(int32_t),
                                "the SpGEMM's per-thread maps");
        if (!slots) return SBM_ERR_OUT_OF_MEMORY;
    }
    if (t <= 1) {
        fn(&g);
        return SBM_SUCCESS;
    }
    gemm_piece pc = {&g, fn, t, slots, P->nbr};
    sbm__cpu_parallel_for(ctx, t, 1, gemm_pieces, &pc);
    if (slots) sbm__host_free(ctx, slots);
    return SBM_SUCCESS;
}
