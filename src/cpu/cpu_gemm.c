/* Block SpGEMM on the CPU: C = U + alpha*op(A)*op(B) on CBC matrices.
 *
 * Gustavson's algorithm over block columns (CSparse cs_multiply; Davis, "Direct Methods for Sparse
 * Linear Systems", 2006, section 2.8), split into a symbolic plan and a numeric execute:
 *
 *   plan     op(A) and op(B) as block-CSC patterns (a transposed operand gets its transposed
 *            pattern and a block permutation: execute re-transposes A's values, and reads B's
 *            blocks in place through the permutation); for each column j of C the union of U's
 *            rows and the rows of every product op(A)_ik*op(B)_kj, sorted (column_rows); for
 *            every product, in execution order, the position of its output block within C's
 *            column j ("positions" mode). When those
 *            positions would not fit the context's memory budget, the plan keeps only a row ->
 *            position map that execute refills per column ("scatter" mode); both modes sum in the
 *            same order.
 *   execute  for each column j: zero C's column, for each op(B) block (k, j), for each op(A) block
 *            (i, k): C_ij += op(A)_ik * op(B)_kj with a fixed-size block kernel; then scale by
 *            alpha and add U. No pattern work and no allocation.
 *
 * The one-shot sbm_cbc_gemm asks for a plan with SBM__GEMM_ONCE: it is executed once, at once,
 * so the plan skips what only reuse pays for (per-product positions: scatter mode; zeroing C's
 * values, which that execute overwrites: they are only mapped in, see prefault). Same kernels,
 * same order: bitwise the same C as plan + execute.
 *
 * Products are summed in the fixed order (op(B) block, then op(A) block), so results are
 * deterministic. A plan holds scratch (transposed values, the scatter map): one plan must not be
 * executed by two threads at once. */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* madvise */
#endif
#include "cpu_backend.h"
#include "sbm_blocks.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

typedef struct cpu_gemm_plan {
    sbm__plan_header h;   /* first: the front end reads it */
    sbm_allocator al;     /* allocator of the arrays below (the CPU context's) */
    sbm_op op_a;          /* operations the plan was made for */
    sbm_op op_b;
    unsigned flags;       /* SBM_GEMM_UPPER or 0 */
    int64_t nbr;          /* C is nbr x nbc blocks of r x c; the inner dimension is nbk blocks of k */
    int64_t nbk;
    int64_t nbc;
    int r;
    int k;
    int c;
    int64_t a_nnzb;       /* stored blocks of A, B, U */
    int64_t b_nnzb;
    int64_t u_nnzb;
    int64_t products;     /* block products per execute */
    int64_t *at_ptr;      /* op_a == T: column pointers of A^T (size nbk+1) */
    int32_t *at_ind;      /* op_a == T: rows of A^T (size a_nnzb) */
    int64_t *at_perm;     /* op_a == T: block t of A^T is block at_perm[t] of A, transposed */
    double *at_val;       /* op_a == T: values of A^T, refilled by each execute */
    int64_t *bt_ptr;      /* op_b == T: the same for B^T (size nbc+1); execute reads block */
    int32_t *bt_ind;      /* bt_perm[t] of B in place (each is used once per execute, so a */
    int64_t *bt_perm;     /* transposed copy would cost more than it saves) */
    int64_t *a_end;       /* UPPER: per op(B) block (k, j), end of the op(A) blocks of column k with row <= j */
    int32_t *pos;         /* positions mode: per product, its block position within C's column */
    int32_t *upos;        /* per U block, its block position within C's column */
    int32_t *slot;        /* scatter mode: block row -> position within the current column (size nbr) */
    size_t bytes;         /* memory held */
} cpu_gemm_plan;

/* ---------------------------------------------------------------------------------------- */
/* Numeric kernels                                                                          */
/* ---------------------------------------------------------------------------------------- */

/* Everything one numeric pass reads and writes. op(A) and op(B) are block-CSC. */
typedef struct gemm_args {
    int64_t nbc;          /* block columns of C and op(B) */
    const int64_t *ap;    /* op(A): column pointers, rows, values (r x k blocks) */
    const int32_t *ai;
    const double *av;
    const int64_t *bp;    /* op(B): column pointers, rows, values (k x c blocks) */
    const int32_t *bi;
    const double *bv;     /* bperm == NULL: op(B)'s blocks; else B's (c x k) blocks */
    const int64_t *bperm; /* op_b == T: op(B) block t is B's block bperm[t], transposed */
    const int64_t *a_end; /* NULL: whole op(A) columns */
    const int32_t *pos;   /* NULL: scatter mode through slot */
    int32_t *slot;
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

/* acc (R x C) += a (R x K) * op(B) block, where bb is that block (BT = 0) or B's block of which
 * it is the transpose (BT = 1). Each element of acc gets its K terms added in increasing order,
 * as in sbm_blk_gemm_acc, so neither BT nor the form (VEC) changes a bit of the result.
 *
 * VEC = 1 (compile-time sizes): a column of acc is held in two-double vectors across the K
 * terms. GCC's own vectorisation of sbm_blk_gemm_acc, fully unrolled, shuffles and spills for
 * some sizes: measured in L1, 8x8x8 ran at 5.5 GFLOP/s with it and 12.2 with this form,
 * 16x16x16 at 2.7 and 10.1; other sizes equal or better. VEC = 2: four-double vectors (AVX2
 * only: without it GCC splits them, 10x slower at 8x8x8), then a pair and a single row for the
 * rest; in L1 1.1-1.7x the speed of VEC = 1 for R >= 4 (8x8x8 22 GFLOP/s), no gain below.
 * Run-time sizes (the generic path), where those forms are 2-4x slower than plain loops: rows in
 * chunks held in registers across the K terms, 4 rows as two pairs (VEC = 0) or, with AVX2, 8
 * rows as two quadruples and then 4 (VEC = 3); in L1 1.2-2.5x the plain loops (16x16x16: 9.4,
 * 11.0 and 23.6 GFLOP/s). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void block_product(const int R, const int K, const int C, const int BT,
                                 const int VEC, const double *SBM_BLK_RESTRICT a,
                                 const double *SBM_BLK_RESTRICT bb, double *SBM_BLK_RESTRICT acc)
{
#if defined(__GNUC__)
    if (VEC == 2) {
        const int R4 = R / 4, pair = (R & 2) != 0, o2 = 4 * R4, o1 = o2 + 2 * pair;
        for (int j = 0; j < C; j++) {
            sbm__v4d t[SBM_MAX_BLOCK_DIM / 4];
            sbm__v2d h = {0.0, 0.0};
            double last = 0.0;
            for (int i = 0; i < R4; i++) memcpy(&t[i], acc + 4 * i + j * R, sizeof t[i]);
            if (pair) memcpy(&h, acc + o2 + j * R, sizeof h);
            if (R & 1) last = acc[o1 + j * R];
            for (int p = 0; p < K; p++) {
                const double s = BT ? bb[j + p * C] : bb[p + j * K];
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
        return;
    }
    if (VEC == 1) {
        const int R2 = R / 2;
        for (int j = 0; j < C; j++) {
            sbm__v2d t[SBM_MAX_BLOCK_DIM / 2];
            double last = 0.0; /* row R-1 when R is odd */
            for (int i = 0; i < R2; i++) memcpy(&t[i], acc + 2 * i + j * R, sizeof t[i]);
            if (R & 1) last = acc[R - 1 + j * R];
            for (int p = 0; p < K; p++) {
                const double s = BT ? bb[j + p * C] : bb[p + j * K];
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
        return;
    }
    /* run-time sizes */
    for (int j = 0; j < C; j++) {
        double *c = acc + j * R;
        int i = 0;
        if (VEC == 3) {
            for (; i + 8 <= R; i += 8) {
                sbm__v4d t0, t1;
                memcpy(&t0, c + i, sizeof t0);
                memcpy(&t1, c + i + 4, sizeof t1);
                for (int p = 0; p < K; p++) {
                    const double s = BT ? bb[j + p * C] : bb[p + j * K];
                    const sbm__v4d sv = {s, s, s, s};
                    sbm__v4d x0, x1;
                    memcpy(&x0, a + i + p * R, sizeof x0);
                    memcpy(&x1, a + i + 4 + p * R, sizeof x1);
                    t0 += x0 * sv;
                    t1 += x1 * sv;
                }
                memcpy(c + i, &t0, sizeof t0);
                memcpy(c + i + 4, &t1, sizeof t1);
            }
            for (; i + 4 <= R; i += 4) {
                sbm__v4d t0;
                memcpy(&t0, c + i, sizeof t0);
                for (int p = 0; p < K; p++) {
                    const double s = BT ? bb[j + p * C] : bb[p + j * K];
                    const sbm__v4d sv = {s, s, s, s};
                    sbm__v4d x0;
                    memcpy(&x0, a + i + p * R, sizeof x0);
                    t0 += x0 * sv;
                }
                memcpy(c + i, &t0, sizeof t0);
            }
        }
        for (; i + 4 <= R; i += 4) {
            sbm__v2d t0, t1;
            memcpy(&t0, c + i, sizeof t0);
            memcpy(&t1, c + i + 2, sizeof t1);
            for (int p = 0; p < K; p++) {
                const double s = BT ? bb[j + p * C] : bb[p + j * K];
                const sbm__v2d sv = {s, s};
                sbm__v2d x0, x1;
                memcpy(&x0, a + i + p * R, sizeof x0);
                memcpy(&x1, a + i + 2 + p * R, sizeof x1);
                t0 += x0 * sv;
                t1 += x1 * sv;
            }
            memcpy(c + i, &t0, sizeof t0);
            memcpy(c + i + 2, &t1, sizeof t1);
        }
        for (; i < R; i++) {
            double t = c[i];
            for (int p = 0; p < K; p++) t += a[i + p * R] * (BT ? bb[j + p * C] : bb[p + j * K]);
            c[i] = t;
        }
    }
#else
    for (int j = 0; j < C; j++)
        for (int p = 0; p < K; p++) {
            const double s = BT ? bb[j + p * C] : bb[p + j * K];
            for (int i = 0; i < R; i++) acc[i + j * R] += a[i + p * R] * s;
        }
#endif
}

/* One pass over C; R, K, C (and BT: op(B) read through bperm) are compile-time constants in the
 * fast paths, so the block kernel is unrolled and vectorised for each triple. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void gemm_numeric(const gemm_args *g, const int R, const int K, const int C,
                                const int BT, const int VEC)
{
    const int64_t RK = (int64_t)R * K, KC = (int64_t)K * C, RC = (int64_t)R * C;
    const int64_t *ap = g->ap, *bp = g->bp, *cp = g->cp, *a_end = g->a_end, *bperm = g->bperm;
    const int32_t *bi = g->bi;
    const double *av = g->av, *bv = g->bv;
    const int32_t *pos = g->pos;
    for (int64_t j = 0; j < g->nbc; j++) {
        const int64_t c0 = cp[j], c1 = cp[j + 1];
        double *cj = g->cv + c0 * RC;
        memset(cj, 0, (size_t)((c1 - c0) * RC) * sizeof(double));
        if (pos) {
            for (int64_t b = bp[j]; b < bp[j + 1]; b++) {
                const int64_t kk = bi[b], a0 = ap[kk], a1 = a_end ? a_end[b] : ap[kk + 1];
                const double *bb = bv + (BT ? bperm[b] : b) * KC;
                prefetch_column(g, b + SBM__GEMM_PREFETCH, bp[j + 1], RK, KC, BT);
                for (int64_t a = a0; a < a1; a++)
                    block_product(R, K, C, BT, VEC, av + a * RK, bb,
                                  cj + (int64_t)pos[a - a0] * RC);
                pos += a1 - a0;
            }
        } else {
            const int32_t *ai = g->ai;
            int32_t *slot = g->slot;
            for (int64_t p = c0; p < c1; p++) slot[g->ci[p]] = (int32_t)(p - c0);
            for (int64_t b = bp[j]; b < bp[j + 1]; b++) {
                const int64_t kk = bi[b], a0 = ap[kk], a1 = a_end ? a_end[b] : ap[kk + 1];
                const double *bb = bv + (BT ? bperm[b] : b) * KC;
                prefetch_column(g, b + SBM__GEMM_PREFETCH, bp[j + 1], RK, KC, BT);
                for (int64_t a = a0; a < a1; a++)
                    block_product(R, K, C, BT, VEC, av + a * RK, bb,
                                  cj + (int64_t)slot[ai[a]] * RC);
            }
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
 * inliner otherwise gives up on some (a generic-size call made scatter mode 2.6x slower). */
#if defined(__GNUC__)
#define SBM__FLATTEN __attribute__((flatten))
#else
#define SBM__FLATTEN
#endif

#define SBM_X_(R, K, C)                                                              \
    SBM__FLATTEN static void gemm_numeric_##R##_##K##_##C(const gemm_args *g)        \
    {                                                                                \
        gemm_numeric(g, R, K, C, 0, 1);                                              \
    }                                                                                \
    SBM__FLATTEN static void gemm_numeric_t_##R##_##K##_##C(const gemm_args *g)      \
    {                                                                                \
        gemm_numeric(g, R, K, C, 1, 1);                                              \
    }
SBM_GEMM_TRIPLES(SBM_X_)
#undef SBM_X_

#if SBM__GEMM_AVX2
#define SBM_X_(R, K, C)                                                                        \
    SBM__TARGET_AVX2 SBM__FLATTEN static void gemm_numeric_avx2_##R##_##K##_##C(               \
        const gemm_args *g)                                                                    \
    {                                                                                          \
        gemm_numeric(g, R, K, C, 0, 2);                                                        \
    }                                                                                          \
    SBM__TARGET_AVX2 SBM__FLATTEN static void gemm_numeric_avx2_t_##R##_##K##_##C(             \
        const gemm_args *g)                                                                    \
    {                                                                                          \
        gemm_numeric(g, R, K, C, 1, 2);                                                        \
    }
SBM_GEMM_TRIPLES(SBM_X_)
#undef SBM_X_
#endif

static void gemm_numeric_generic(const gemm_args *g) { gemm_numeric(g, g->r, g->k, g->c, 0, 0); }
static void gemm_numeric_t_generic(const gemm_args *g) { gemm_numeric(g, g->r, g->k, g->c, 1, 0); }
#if SBM__GEMM_AVX2
SBM__TARGET_AVX2 static void gemm_numeric_avx2_generic(const gemm_args *g)
{
    gemm_numeric(g, g->r, g->k, g->c, 0, 3);
}
SBM__TARGET_AVX2 static void gemm_numeric_avx2_t_generic(const gemm_args *g)
{
    gemm_numeric(g, g->r, g->k, g->c, 1, 3);
}
#endif

/* bt: op(B) is read through a block permutation of B (op_b == T). The AVX2 versions where they
 * pay (R >= 4) and the CPU has AVX2. */
static gemm_numeric_fn gemm_select(int r, int k, int c, int bt)
{
#if SBM__GEMM_AVX2
    if (r >= 4 && __builtin_cpu_supports("avx2")) {
#define SBM_X_(R, K, C)                                                         \
        if (r == (R) && k == (K) && c == (C))                                   \
            return bt ? gemm_numeric_avx2_t_##R##_##K##_##C : gemm_numeric_avx2_##R##_##K##_##C;
        SBM_GEMM_TRIPLES(SBM_X_)
#undef SBM_X_
        if (!sbm_blk_is_fast_triple(r, k, c))
            return bt ? gemm_numeric_avx2_t_generic : gemm_numeric_avx2_generic;
    }
#endif
#define SBM_X_(R, K, C)                                    \
    if (r == (R) && k == (K) && c == (C))                  \
        return bt ? gemm_numeric_t_##R##_##K##_##C : gemm_numeric_##R##_##K##_##C;
    SBM_GEMM_TRIPLES(SBM_X_)
#undef SBM_X_
    return bt ? gemm_numeric_t_generic : gemm_numeric_generic;
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

/* ---------------------------------------------------------------------------------------- */
/* Plan                                                                                     */
/* ---------------------------------------------------------------------------------------- */

static void plan_free(const sbm_allocator *al, void *p)
{
    if (p) al->free(al->user, p);
}

void sbm__cpu_gemm_plan_destroy(sbm_gemm_plan *plan)
{
    cpu_gemm_plan *P = (cpu_gemm_plan *)plan;
    if (!P) return;
    const sbm_allocator al = P->al;
    void *arrays[] = {P->at_ptr, P->at_ind, P->at_perm, P->at_val, P->bt_ptr, P->bt_ind,
                      P->bt_perm, P->a_end, P->pos, P->upos, P->slot};
    for (size_t t = 0; t < sizeof arrays / sizeof arrays[0]; t++) plan_free(&al, arrays[t]);
    plan_free(&al, P);
}

/* Allocate n elements of size bytes for the plan, counting them in P->bytes. */
static void *plan_alloc(sbm_ctx *ctx, cpu_gemm_plan *P, int64_t n, size_t size, const char *what)
{
    int ok;
    size_t bytes = sbm__mul_size(ctx, (size_t)n, size, what, &ok);
    if (!ok) return NULL;
    void *p = sbm__host_alloc(ctx, bytes, what);
    if (p) P->bytes += bytes;
    return p;
}

/* Block-CSC pattern of X^T: ptr (size X->nbr+1), ind and perm (size X->nnzb), rows within each
 * column increasing because X's columns are visited in order. */
static void transpose_pattern(const sbm_cbc *X, int64_t *ptr, int32_t *ind, int64_t *perm)
{
    memset(ptr, 0, (size_t)(X->nbr + 1) * sizeof(int64_t));
    for (int64_t p = 0; p < X->nnzb; p++) ptr[X->rowind[p] + 1]++;
    for (int64_t i = 0; i < X->nbr; i++) ptr[i + 1] += ptr[i];
    /* ptr[i] is used as the fill cursor of column i and restored below */
    for (int64_t j = 0; j < X->nbc; j++) {
        for (int64_t p = X->colptr[j]; p < X->colptr[j + 1]; p++) {
            int64_t q = ptr[X->rowind[p]]++;
            ind[q] = (int32_t)j;
            perm[q] = p;
        }
    }
    for (int64_t i = X->nbr; i > 0; i--) ptr[i] = ptr[i - 1];
    ptr[0] = 0;
}

/* Values of X^T in the order of transpose_pattern. */
static void transpose_values(const sbm_cbc *X, const int64_t *perm, double *out)
{
    const int64_t rc = (int64_t)X->r * X->c;
    for (int64_t t = 0; t < X->nnzb; t++)
        sbm_blk_transpose(X->r, X->c, X->values + perm[t] * rc, out + t * rc);
}

/* Insertion sort of the n block rows of one column of C, giving up (rows permuted, none lost)
 * after budget moves. @return 1 if sorted. */
static int insertion_sort(int32_t *v, int64_t n, int64_t budget)
{
    for (int64_t t = 1; t < n; t++) {
        const int32_t x = v[t];
        int64_t s = t;
        for (; s > 0 && v[s - 1] > x; s--) v[s] = v[s - 1];
        v[s] = x;
        budget -= t - s;
        if (budget < 0) return 0;
    }
    return 1;
}

/* Index of the lowest set bit of x != 0. */
static inline int lowest_bit(uint64_t x)
{
#if defined(__GNUC__)
    return __builtin_ctzll(x);
#else
    int n = 0;
    while (!(x & 1)) x >>= 1, n++;
    return n;
#endif
}

/* Number of rows <= j among the increasing rows ind[0..n). */
static int64_t count_upto(const int32_t *ind, int64_t n, int64_t j)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (ind[mid] <= j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Grow the row buffer of C to hold at least need entries. */
static sbm_status grow_rows(sbm_ctx *ctx, int32_t **rows, int64_t *cap, int64_t need)
{
    int64_t ncap = *cap > 16 ? *cap : 16;
    while (ncap < need) ncap = ncap > INT64_MAX / 2 ? need : 2 * ncap;
    int ok;
    size_t bytes = sbm__mul_size(ctx, (size_t)ncap, sizeof(int32_t), "block rows of C", &ok);
    if (!ok) return SBM_ERR_OVERFLOW;
    int32_t *nr = sbm__host_alloc(ctx, bytes, "block rows of C");
    if (!nr) return SBM_ERR_OUT_OF_MEMORY;
    if (*rows) memcpy(nr, *rows, (size_t)*cap * sizeof(int32_t));
    sbm__host_free(ctx, *rows);
    *rows = nr;
    *cap = ncap;
    return SBM_SUCCESS;
}

/* What the symbolic pass reads (op(A), op(B) as block-CSC, U or NULL) and its row markers. */
typedef struct sym_args {
    const int64_t *ap;
    const int32_t *ai;
    const int64_t *bp;
    const int32_t *bi;
    const int64_t *a_end; /* UPPER: end of the op(A) blocks each op(B) block uses; else NULL */
    const sbm_cbc *U;
    int64_t nbr;          /* block rows of C */
    uint64_t *bits;       /* one bit per block row of C, all clear between columns */
    uint32_t *mark;       /* mark[i] == tag: row i is already in the current column */
    uint32_t tag;
} sym_args;

/* The rows marked in bits[w0..w1], increasing, into col (room for one more than their count);
 * the words are cleared. @return their count. The first two rows of a word are taken without a
 * branch (a write past the last row lands in the spare entry): thinly spread columns (random
 * patterns) have a row or two per word, and a loop per word mispredicted its exit about once a
 * word. */
static int64_t read_back(uint64_t *bits, uint32_t w0, uint32_t w1, int32_t *col)
{
    const uint64_t top = (uint64_t)1 << 63;
    int64_t t = 0;
    for (uint32_t w = w0; w <= w1; w++) {
        uint64_t x = bits[w];
        const int32_t base = (int32_t)(w << 6);
        bits[w] = 0;
        col[t] = base + lowest_bit(x | top);
        t += x != 0;
        x &= x - 1;
        col[t] = base + lowest_bit(x | top);
        t += x != 0;
        x &= x - 1;
        for (; x; x &= x - 1) col[t++] = base + lowest_bit(x);
    }
    return t;
}

static inline void set_bit(uint64_t *bits, uint32_t i) { bits[i >> 6] |= (uint64_t)1 << (i & 63); }

/* Row i into col unless marked; col[*n] is written either way (no branch: in 2D Poisson A*A
 * about half the products repeat a row, which a branch would mispredict). */
static inline void add_row(uint32_t *mark, uint32_t tag, int32_t *col, int64_t *n, int32_t i)
{
    const int fresh = mark[i] != tag;
    mark[i] = tag;
    col[*n] = i;
    *n += fresh;
}

/* The block rows of column j of C (U's and the products'), increasing, into col (room for one
 * more than their count). @return their count.
 *
 * cs_multiply marks rows in an int array and leaves each column unsorted; the output here is
 * sorted, by the cheapest of three ways, chosen from what the ends of the sorted op(A) columns
 * tell (span lo..hi, p candidates) and, after marking, the count n:
 *   - a span of at most p/8 words (BA: a few hundred cameras per column): the rows are only
 *     set in a bitmap and read back in order, no marks;
 *   - runs that overlap (p >= 1.5 n: stencils, A*A) come out nearly sorted: insertion sort,
 *     given up after 8n moves;
 *   - otherwise (random patterns) the bitmap again, from the marked rows, unless the span is
 *     too thin for it (more than 16n+64 words): qsort.
 * Measured per product on 2D/3D Poisson, random and BA patterns (bench/NOTES-cpu.md), this is
 * within 30% of the best single way on each, where each single way is 2-10x off on some. */
static int64_t column_rows(sym_args *s, int64_t j, int32_t *col)
{
    const int64_t *ap = s->ap, *bp = s->bp, *a_end = s->a_end;
    const int32_t *ai = s->ai, *bi = s->bi;
    const sbm_cbc *U = s->U;
    int64_t p = 0;
    uint32_t lo = UINT32_MAX, hi = 0;
    if (U && U->colptr[j + 1] > U->colptr[j]) {
        lo = (uint32_t)U->rowind[U->colptr[j]];
        hi = (uint32_t)U->rowind[U->colptr[j + 1] - 1];
        p = U->colptr[j + 1] - U->colptr[j];
    }
    for (int64_t b = bp[j]; b < bp[j + 1]; b++) {
        const int64_t a0 = ap[bi[b]], a1 = a_end ? a_end[b] : ap[bi[b] + 1];
        if (a1 == a0) continue;
        lo = (uint32_t)ai[a0] < lo ? (uint32_t)ai[a0] : lo;
        hi = (uint32_t)ai[a1 - 1] > hi ? (uint32_t)ai[a1 - 1] : hi;
        p += a1 - a0;
    }
    if (p == 0) return 0;
    const uint32_t w0 = lo >> 6, w1 = hi >> 6;
    const int64_t words = (int64_t)(w1 - w0) + 1;
    if (8 * words <= p) {
        if (U)
            for (int64_t u = U->colptr[j]; u < U->colptr[j + 1]; u++)
                set_bit(s->bits, (uint32_t)U->rowind[u]);
        for (int64_t b = bp[j]; b < bp[j + 1]; b++) {
            const int64_t a1 = a_end ? a_end[b] : ap[bi[b] + 1];
            for (int64_t a = ap[bi[b]]; a < a1; a++) set_bit(s->bits, (uint32_t)ai[a]);
        }
        return read_back(s->bits, w0, w1, col);
    }
    if (++s->tag == 0) { /* wrapped after 2^32 - 1 columns: start the marks afresh */
        memset(s->mark, 0, (size_t)s->nbr * sizeof *s->mark);
        s->tag = 1;
    }
    uint32_t *mark = s->mark;
    const uint32_t tag = s->tag;
    int64_t n = 0;
    if (U)
        for (int64_t u = U->colptr[j]; u < U->colptr[j + 1]; u++)
            add_row(mark, tag, col, &n, U->rowind[u]);
    for (int64_t b = bp[j]; b < bp[j + 1]; b++) {
        const int64_t a1 = a_end ? a_end[b] : ap[bi[b] + 1];
        for (int64_t a = ap[bi[b]]; a < a1; a++) add_row(mark, tag, col, &n, ai[a]);
    }
    if (n < 2) return n;
    if (2 * p >= 3 * n && insertion_sort(col, n, 8 * n)) return n;
    if (words <= 16 * n + 64) {
        for (int64_t t = 0; t < n; t++) set_bit(s->bits, (uint32_t)col[t]);
        return read_back(s->bits, w0, w1, col);
    }
    qsort(col, (size_t)n, sizeof *col, sbm__cmp_i32);
    return n;
}

/* Map in the pages of a large output array that is about to be written in full (Linux 5.14+,
 * memory from the default allocator only; elsewhere nothing happens). One madvise instead of a
 * page fault per 4 KiB page: on the VM this was measured on, the faults of a fresh C cost as
 * much as computing it for b >= 6 (1.7 us per page), prefaulting 1.1 us per page. */
static void prefault(const sbm_ctx *ctx, void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    const uintptr_t page = 4096;
    if (ctx->custom_allocator || bytes < ((size_t)1 << 22)) return;
    const uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1);
    const uintptr_t hi = ((uintptr_t)p + bytes) & ~(page - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE); /* advice: may fail */
#else
    (void)ctx, (void)p, (void)bytes;
#endif
}

sbm_status sbm__cpu_gemm_plan(sbm_ctx *ctx, sbm_op op_a, const sbm_cbc *A, sbm_op op_b,
                              const sbm_cbc *B, const sbm_cbc *U, unsigned flags,
                              sbm_gemm_plan **plan, sbm_cbc **Cout)
{
    const int upper = (flags & SBM_GEMM_UPPER) != 0, once = (flags & SBM__GEMM_ONCE) != 0;
    sbm_status st = SBM_SUCCESS;
    int64_t *cptr = NULL;
    int32_t *rows = NULL, *tmp_slot = NULL;
    uint32_t *mark = NULL;
    uint64_t *bits = NULL;
    int64_t cap = 0;
    sbm_cbc *C = NULL;

    cpu_gemm_plan *P = sbm__host_alloc(ctx, sizeof *P, "a block SpGEMM plan");
    if (!P) return SBM_ERR_OUT_OF_MEMORY;
    memset(P, 0, sizeof *P);
    P->al = ctx->allocator;
    P->bytes = sizeof *P;
    P->op_a = op_a;
    P->op_b = op_b;
    P->flags = flags & SBM_GEMM_UPPER;
    P->nbr = op_a == SBM_OP_N ? A->nbr : A->nbc;
    P->nbk = op_a == SBM_OP_N ? A->nbc : A->nbr;
    P->nbc = op_b == SBM_OP_N ? B->nbc : B->nbr;
    P->r = op_a == SBM_OP_N ? A->r : A->c;
    P->k = op_a == SBM_OP_N ? A->c : A->r;
    P->c = op_b == SBM_OP_N ? B->c : B->r;
    P->a_nnzb = A->nnzb;
    P->b_nnzb = B->nnzb;
    P->u_nnzb = U ? U->nnzb : 0;
    const int64_t nbr = P->nbr, nbc = P->nbc;

#define CHECK_ALLOC(ptr) \
    if (!(ptr)) { st = sbm_ctx_last_status(ctx); goto done; }

    /* op(A) and op(B) as block-CSC patterns */
    const int64_t *ap = A->colptr, *bp = B->colptr;
    const int32_t *ai = A->rowind, *bi = B->rowind;
    if (op_a == SBM_OP_T) {
        P->at_ptr = plan_alloc(ctx, P, A->nbr + 1, sizeof(int64_t), "A^T column pointers");
        CHECK_ALLOC(P->at_ptr);
        P->at_ind = plan_alloc(ctx, P, A->nnzb, sizeof(int32_t), "A^T block rows");
        CHECK_ALLOC(P->at_ind);
        P->at_perm = plan_alloc(ctx, P, A->nnzb, sizeof(int64_t), "A^T block permutation");
        CHECK_ALLOC(P->at_perm);
        P->at_val = plan_alloc(ctx, P, A->nnzb * (int64_t)A->r * A->c, sizeof(double),
                               "A^T block values");
        CHECK_ALLOC(P->at_val);
        transpose_pattern(A, P->at_ptr, P->at_ind, P->at_perm);
        ap = P->at_ptr;
        ai = P->at_ind;
    }
    if (op_b == SBM_OP_T) {
        P->bt_ptr = plan_alloc(ctx, P, B->nbr + 1, sizeof(int64_t), "B^T column pointers");
        CHECK_ALLOC(P->bt_ptr);
        P->bt_ind = plan_alloc(ctx, P, B->nnzb, sizeof(int32_t), "B^T block rows");
        CHECK_ALLOC(P->bt_ind);
        P->bt_perm = plan_alloc(ctx, P, B->nnzb, sizeof(int64_t), "B^T block permutation");
        CHECK_ALLOC(P->bt_perm);
        transpose_pattern(B, P->bt_ptr, P->bt_ind, P->bt_perm);
        bp = P->bt_ptr;
        bi = P->bt_ind;
    }

    /* Products per execute (int64, overflow-checked); with UPPER only the op(A) blocks of column
     * k with row <= j take part in op(B) block (k, j), a prefix of the sorted column. Also the
     * most rows a column of C can have (U's and the products', at most nbr). */
    if (upper) {
        P->a_end = plan_alloc(ctx, P, B->nnzb, sizeof(int64_t), "upper-triangle product ranges");
        CHECK_ALLOC(P->a_end);
    }
    int64_t products = 0, col_max = 0;
    for (int64_t j = 0; j < nbc; j++) {
        int64_t in_col = U ? U->colptr[j + 1] - U->colptr[j] : 0;
        for (int64_t b = bp[j]; b < bp[j + 1]; b++) {
            const int64_t kk = bi[b], a0 = ap[kk];
            int64_t n = ap[kk + 1] - a0;
            if (upper) {
                n = count_upto(ai + a0, n, j);
                P->a_end[b] = a0 + n;
            }
            if (products > INT64_MAX - n) {
                st = sbm__error(ctx, SBM_ERR_OVERFLOW,
                                "the number of block products exceeds int64 (at column %" PRId64
                                " of op(B))",
                                j);
                goto done;
            }
            products += n;
            in_col = in_col < nbr ? in_col + n : nbr; /* no overflow: n <= nnzb(A) */
        }
        if (in_col > col_max) col_max = in_col < nbr ? in_col : nbr;
    }
    P->products = products;

    /* Positions mode unless the per-product positions exceed the memory budget, or the plan is
     * for one execute: then the positions would be written once and read once, and the scatter
     * map (as cs_multiply's) costs less. */
    int ok;
    size_t pos_bytes = sbm__mul_size(ctx, (size_t)products, sizeof(int32_t), "product positions", &ok);
    if (!ok) {
        st = SBM_ERR_OVERFLOW;
        goto done;
    }
    const int positions = !once && (ctx->memory_budget == 0 || pos_bytes <= ctx->memory_budget);
    if (positions) {
        P->pos = plan_alloc(ctx, P, products, sizeof(int32_t), "product positions");
        CHECK_ALLOC(P->pos);
    } else {
        P->slot = plan_alloc(ctx, P, nbr, sizeof(int32_t), "row-to-position map");
        CHECK_ALLOC(P->slot);
    }
    if (U) {
        P->upos = plan_alloc(ctx, P, U->nnzb, sizeof(int32_t), "positions of U's blocks");
        CHECK_ALLOC(P->upos);
    }

    /* Symbolic pass: each column's sorted rows (column_rows), then, through the row -> position
     * map slot, the position of each product's and each U block's output block. */
    int32_t *slot = P->slot;
    if (!slot) {
        slot = tmp_slot = sbm__host_alloc(ctx, (size_t)nbr * sizeof(int32_t), "row-to-position map");
        CHECK_ALLOC(slot);
    }
    bits = sbm__host_alloc(ctx, (size_t)(nbr / 64 + 1) * sizeof(uint64_t), "row bitmap");
    CHECK_ALLOC(bits);
    memset(bits, 0, (size_t)(nbr / 64 + 1) * sizeof(uint64_t));
    mark = sbm__host_alloc(ctx, (size_t)nbr * sizeof(uint32_t), "row marks");
    CHECK_ALLOC(mark);
    memset(mark, 0, (size_t)nbr * sizeof(uint32_t));
    cptr = sbm__host_alloc(ctx, (size_t)(nbc + 1) * sizeof(int64_t), "column pointers of C");
    CHECK_ALLOC(cptr);
    /* first guess at nnzb(C): at most products + nnzb(U), usually not much above the operands' */
    const int64_t operands = A->nnzb + B->nnzb + P->u_nnzb;
    const int64_t guess = products + P->u_nnzb < 4 * operands ? products + P->u_nnzb : 4 * operands;
    st = grow_rows(ctx, &rows, &cap, guess + col_max + 1);
    if (st != SBM_SUCCESS) goto done;
    sym_args sa = {ap, ai, bp, bi, P->a_end, U, nbr, bits, mark, 0};
    int64_t nnz = 0, t = 0;
    cptr[0] = 0;
    for (int64_t j = 0; j < nbc; j++) {
        if (cap - nnz <= col_max) {
            st = grow_rows(ctx, &rows, &cap, nnz + col_max + 1);
            if (st != SBM_SUCCESS) goto done;
        }
        const int32_t *col = rows + nnz;
        const int64_t cnt = column_rows(&sa, j, rows + nnz);
        if (positions || U)
            for (int64_t s = 0; s < cnt; s++) slot[col[s]] = (int32_t)s;
        if (positions) {
            for (int64_t b = bp[j]; b < bp[j + 1]; b++) {
                const int64_t kk = bi[b], a1 = upper ? P->a_end[b] : ap[kk + 1];
                for (int64_t a = ap[kk]; a < a1; a++) P->pos[t++] = slot[ai[a]];
            }
        }
        if (U)
            for (int64_t u = U->colptr[j]; u < U->colptr[j + 1]; u++)
                P->upos[u] = slot[U->rowind[u]];
        nnz += cnt;
        cptr[j + 1] = nnz;
    }

    st = sbm__cbc_alloc(ctx, nbr, nbc, P->r, P->c, nnz, &C);
    if (st != SBM_SUCCESS) goto done;
    memcpy(C->colptr, cptr, (size_t)(nbc + 1) * sizeof(int64_t));
    if (nnz > 0) memcpy(C->rowind, rows, (size_t)nnz * sizeof(int32_t));
    /* the API's zero values; a one-shot plan's execute writes every value first */
    if (!once)
        memset(C->values, 0, (size_t)nnz * P->r * P->c * sizeof(double));
    else
        prefault(ctx, C->values, (size_t)nnz * P->r * P->c * sizeof(double));

    P->h.backend = ctx->backend;
    P->h.device = ctx->device;
    P->h.ops = ctx->ops;
    P->h.pattern_c = C->pattern_id;
    P->h.info.products = products;
    P->h.info.nnzb_c = nnz;
    P->h.info.slices = 1;
    P->h.info.plan_bytes = P->bytes;
    P->h.info.fast_path = sbm_blk_is_fast_triple(P->r, P->k, P->c);

done:
#undef CHECK_ALLOC
    sbm__host_free(ctx, tmp_slot);
    sbm__host_free(ctx, bits);
    sbm__host_free(ctx, mark);
    sbm__host_free(ctx, cptr);
    sbm__host_free(ctx, rows);
    if (st != SBM_SUCCESS) {
        sbm__cpu_gemm_plan_destroy((sbm_gemm_plan *)P);
        sbm_cbc_destroy(C);
        return st;
    }
    *plan = (sbm_gemm_plan *)P;
    *Cout = C;
    return SBM_SUCCESS;
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
    if (P->op_a == SBM_OP_T) {
        transpose_values(A, P->at_perm, P->at_val);
        g.ap = P->at_ptr;
        g.ai = P->at_ind;
        g.av = P->at_val;
    } else {
        g.ap = A->colptr;
        g.ai = A->rowind;
        g.av = A->values;
    }
    if (P->op_b == SBM_OP_T) {
        g.bp = P->bt_ptr;
        g.bi = P->bt_ind;
        g.bv = B->values;
        g.bperm = P->bt_perm;
    } else {
        g.bp = B->colptr;
        g.bi = B->rowind;
        g.bv = B->values;
    }
    g.a_end = P->a_end;
    g.pos = P->pos;
    g.slot = P->slot;
    gemm_select(P->r, P->k, P->c, g.bperm != NULL)(&g);
    (void)ctx;
    return SBM_SUCCESS;
}
