/* SPDX-License-Identifier: BSD-3-Clause */
/* Block SpGEMM on the CPU, symbolic phase (plan): the pattern of C and, per product, where its
 * block goes; see cpu_gemm.h for the algorithm. */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* madvise */
#endif
#include "cpu_gemm.h"
#include "sbm_blocks.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

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
 * On 2D/3D Poisson, random and BA patterns this stays close to the best single way on each, where
 * each single way is far off on some
 * (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). */
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

/* Map in the pages of a large output array that is about to be written in full (Linux 5.14+, memory
 * from the default allocator only; elsewhere nothing happens). One madvise instead of a page fault
 * per 4 KiB page: the faults of a fresh C cost as much as computing it for b >= 6, prefaulting less
 * (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). */
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

/* ---------------------------------------------------------------------------------------- */
/* Plan, step by step                                                                       */
/* ---------------------------------------------------------------------------------------- */

/* Allocate a plan array, or return the context's status from the calling step. */
#define PLAN_ALLOC(field, n, size, what)                                                    \
    do {                                                                                    \
        if (!(P->field = plan_alloc(ctx, P, (n), (size), (what))))                          \
            return sbm_ctx_last_status(ctx);                                                \
    } while (0)

/* The plan with its sizes and operations; its arrays come from the steps below. */
static cpu_gemm_plan *plan_new(sbm_ctx *ctx, sbm_op op_a, const sbm_cbc *A, sbm_op op_b,
                               const sbm_cbc *B, const sbm_cbc *U, unsigned flags)
{
    cpu_gemm_plan *P = sbm__host_alloc(ctx, sizeof *P, "a block SpGEMM plan");
    if (!P) return NULL;
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
    return P;
}

/* op(A) and op(B) as block-CSC patterns into s: the operands' own, or their transposes. */
static sbm_status plan_operands(sbm_ctx *ctx, cpu_gemm_plan *P, const sbm_cbc *A,
                                const sbm_cbc *B, sym_args *s)
{
    s->ap = A->colptr;
    s->ai = A->rowind;
    s->bp = B->colptr;
    s->bi = B->rowind;
    if (P->op_a == SBM_OP_T) {
        PLAN_ALLOC(at_ptr, A->nbr + 1, sizeof(int64_t), "A^T column pointers");
        PLAN_ALLOC(at_ind, A->nnzb, sizeof(int32_t), "A^T block rows");
        PLAN_ALLOC(at_perm, A->nnzb, sizeof(int64_t), "A^T block permutation");
        PLAN_ALLOC(at_val, A->nnzb * (int64_t)A->r * A->c, sizeof(double), "A^T block values");
        transpose_pattern(A, P->at_ptr, P->at_ind, P->at_perm);
        s->ap = P->at_ptr;
        s->ai = P->at_ind;
    }
    if (P->op_b == SBM_OP_T) {
        PLAN_ALLOC(bt_ptr, B->nbr + 1, sizeof(int64_t), "B^T column pointers");
        PLAN_ALLOC(bt_ind, B->nnzb, sizeof(int32_t), "B^T block rows");
        PLAN_ALLOC(bt_perm, B->nnzb, sizeof(int64_t), "B^T block permutation");
        transpose_pattern(B, P->bt_ptr, P->bt_ind, P->bt_perm);
        s->bp = P->bt_ptr;
        s->bi = P->bt_ind;
    }
    return SBM_SUCCESS;
}

/* Products per execute (int64, overflow-checked) into P->products; with UPPER only the op(A)
 * blocks of column k with row <= j take part in op(B) block (k, j), a prefix of the sorted
 * column (P->a_end). Also *col_max: the most rows a column of C can have (U's and the
 * products', at most nbr). */
static sbm_status count_products(sbm_ctx *ctx, cpu_gemm_plan *P, sym_args *s, int64_t *col_max)
{
    const int upper = (P->flags & SBM_GEMM_UPPER) != 0;
    const int64_t nbr = P->nbr, *ap = s->ap, *bp = s->bp;
    const int32_t *ai = s->ai, *bi = s->bi;
    const sbm_cbc *U = s->U;
    if (upper) {
        PLAN_ALLOC(a_end, P->b_nnzb, sizeof(int64_t), "upper-triangle product ranges");
        s->a_end = P->a_end;
    }
    int64_t products = 0;
    *col_max = 0;
    for (int64_t j = 0; j < P->nbc; j++) {
        int64_t in_col = U ? U->colptr[j + 1] - U->colptr[j] : 0;
        for (int64_t b = bp[j]; b < bp[j + 1]; b++) {
            const int64_t kk = bi[b], a0 = ap[kk];
            int64_t n = ap[kk + 1] - a0;
            if (upper) {
                n = count_upto(ai + a0, n, j);
                P->a_end[b] = a0 + n;
            }
            if (products > INT64_MAX - n)
                return sbm__error(ctx, SBM_ERR_OVERFLOW,
                                  "the number of block products exceeds int64 (at column %" PRId64
                                  " of op(B))",
                                  j);
            products += n;
            in_col = in_col < nbr ? in_col + n : nbr; /* no overflow: n <= nnzb(A) */
        }
        if (in_col > *col_max) *col_max = in_col < nbr ? in_col : nbr;
    }
    P->products = products;
    return SBM_SUCCESS;
}

/* Positions mode unless the per-product positions exceed the memory budget, or the plan is for
 * one execute: then the positions would be written once and read once, and the scatter map (as
 * cs_multiply's) costs less. Also the positions of U's blocks. */
static sbm_status plan_mode(sbm_ctx *ctx, cpu_gemm_plan *P, const sbm_cbc *U, int once)
{
    int ok;
    size_t pos_bytes =
        sbm__mul_size(ctx, (size_t)P->products, sizeof(int32_t), "product positions", &ok);
    if (!ok) return SBM_ERR_OVERFLOW;
    if (!once && (ctx->memory_budget == 0 || pos_bytes <= ctx->memory_budget))
        PLAN_ALLOC(pos, P->products, sizeof(int32_t), "product positions");
    else
        PLAN_ALLOC(slot, P->nbr, sizeof(int32_t), "row-to-position map");
    if (U) PLAN_ALLOC(upos, U->nnzb, sizeof(int32_t), "positions of U's blocks");
    return SBM_SUCCESS;
}
#undef PLAN_ALLOC

/* Workspace of the symbolic pass, freed when the plan is made. */
typedef struct sym_work {
    int32_t *slot;     /* block row -> position in the current column: P->slot, or tmp_slot */
    int32_t *tmp_slot; /* positions mode: a map of its own */
    int64_t *cptr;     /* column pointers of C (size nbc+1) */
    int32_t *rows;     /* block rows of C, grown as columns are added */
    int64_t cap;       /* capacity of rows */
} sym_work;

static sbm_status sym_work_alloc(sbm_ctx *ctx, const cpu_gemm_plan *P, int64_t col_max,
                                 sym_args *s, sym_work *w)
{
    const int64_t nbr = P->nbr;
    w->slot = P->slot;
    if (!w->slot) {
        w->slot = w->tmp_slot =
            sbm__host_alloc(ctx, (size_t)nbr * sizeof(int32_t), "row-to-position map");
        if (!w->slot) return sbm_ctx_last_status(ctx);
    }
    s->bits = sbm__host_alloc(ctx, (size_t)(nbr / 64 + 1) * sizeof(uint64_t), "row bitmap");
    if (!s->bits) return sbm_ctx_last_status(ctx);
    memset(s->bits, 0, (size_t)(nbr / 64 + 1) * sizeof(uint64_t));
    s->mark = sbm__host_alloc(ctx, (size_t)nbr * sizeof(uint32_t), "row marks");
    if (!s->mark) return sbm_ctx_last_status(ctx);
    memset(s->mark, 0, (size_t)nbr * sizeof(uint32_t));
    w->cptr = sbm__host_alloc(ctx, (size_t)(P->nbc + 1) * sizeof(int64_t), "column pointers of C");
    if (!w->cptr) return sbm_ctx_last_status(ctx);
    /* first guess at nnzb(C): at most products + nnzb(U), usually not much above the operands' */
    const int64_t operands = P->a_nnzb + P->b_nnzb + P->u_nnzb;
    const int64_t all = P->products + P->u_nnzb;
    return grow_rows(ctx, &w->rows, &w->cap, (all < 4 * operands ? all : 4 * operands) + col_max + 1);
}

static void sym_work_free(sbm_ctx *ctx, sym_args *s, sym_work *w)
{
    sbm__host_free(ctx, w->tmp_slot);
    sbm__host_free(ctx, s->bits);
    sbm__host_free(ctx, s->mark);
    sbm__host_free(ctx, w->cptr);
    sbm__host_free(ctx, w->rows);
}

/* Symbolic pass: each column's sorted rows (column_rows) into w, then, through the row ->
 * position map, the position of each product's and each U block's output block. @return
 * nnzb(C) in *nnz. */
static sbm_status symbolic_pass(sbm_ctx *ctx, cpu_gemm_plan *P, sym_args *s, sym_work *w,
                                int64_t col_max, int64_t *nnz_out)
{
    const int64_t *ap = s->ap, *bp = s->bp;
    const int32_t *ai = s->ai, *bi = s->bi;
    const sbm_cbc *U = s->U;
    int32_t *slot = w->slot;
    int64_t nnz = 0, t = 0;
    w->cptr[0] = 0;
    for (int64_t j = 0; j < P->nbc; j++) {
        if (w->cap - nnz <= col_max) SBM__TRY(grow_rows(ctx, &w->rows, &w->cap, nnz + col_max + 1));
        const int32_t *col = w->rows + nnz;
        const int64_t cnt = column_rows(s, j, w->rows + nnz);
        if (P->pos || U)
            for (int64_t r = 0; r < cnt; r++) slot[col[r]] = (int32_t)r;
        if (P->pos) {
            for (int64_t b = bp[j]; b < bp[j + 1]; b++) {
                const int64_t kk = bi[b], a1 = s->a_end ? s->a_end[b] : ap[kk + 1];
                for (int64_t a = ap[kk]; a < a1; a++) P->pos[t++] = slot[ai[a]];
            }
        }
        if (U)
            for (int64_t u = U->colptr[j]; u < U->colptr[j + 1]; u++)
                P->upos[u] = slot[U->rowind[u]];
        nnz += cnt;
        w->cptr[j + 1] = nnz;
    }
    *nnz_out = nnz;
    return SBM_SUCCESS;
}

/* C with the pattern of the symbolic pass, and the plan's header. */
static sbm_status plan_output(sbm_ctx *ctx, cpu_gemm_plan *P, const sym_work *w, int64_t nnz,
                              int once, sbm_cbc **Cout)
{
    sbm_cbc *C;
    SBM__TRY(sbm__cbc_alloc(ctx, P->nbr, P->nbc, P->r, P->c, nnz, &C));
    memcpy(C->colptr, w->cptr, (size_t)(P->nbc + 1) * sizeof(int64_t));
    if (nnz > 0) memcpy(C->rowind, w->rows, (size_t)nnz * sizeof(int32_t));
    /* the API's zero values; a one-shot plan's execute writes every value first */
    if (!once)
        memset(C->values, 0, (size_t)nnz * P->r * P->c * sizeof(double));
    else
        prefault(ctx, C->values, (size_t)nnz * P->r * P->c * sizeof(double));

    P->h.backend = ctx->backend;
    P->h.device = ctx->device;
    P->h.ops = ctx->ops;
    P->h.pattern_c = C->pattern_id;
    P->h.info.products = P->products;
    P->h.info.nnzb_c = nnz;
    P->h.info.slices = 1;
    P->h.info.plan_bytes = P->bytes;
    P->h.info.fast_path = sbm_blk_is_fast_triple(P->r, P->k, P->c);
    *Cout = C;
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_gemm_plan(sbm_ctx *ctx, sbm_op op_a, const sbm_cbc *A, sbm_op op_b,
                              const sbm_cbc *B, const sbm_cbc *U, unsigned flags,
                              sbm_gemm_plan **plan, sbm_cbc **Cout)
{
    const int once = (flags & SBM__GEMM_ONCE) != 0;
    cpu_gemm_plan *P = plan_new(ctx, op_a, A, op_b, B, U, flags);
    if (!P) return SBM_ERR_OUT_OF_MEMORY;
    sym_args s = {0};
    sym_work w = {0};
    int64_t col_max = 0, nnz = 0;
    sbm_cbc *C = NULL;
    s.U = U;
    s.nbr = P->nbr;
    sbm_status st = plan_operands(ctx, P, A, B, &s);
    if (st == SBM_SUCCESS) st = count_products(ctx, P, &s, &col_max);
    if (st == SBM_SUCCESS) st = plan_mode(ctx, P, U, once);
    if (st == SBM_SUCCESS) st = sym_work_alloc(ctx, P, col_max, &s, &w);
    if (st == SBM_SUCCESS) st = symbolic_pass(ctx, P, &s, &w, col_max, &nnz);
    if (st == SBM_SUCCESS) st = plan_output(ctx, P, &w, nnz, once, &C);
    sym_work_free(ctx, &s, &w);
    if (st != SBM_SUCCESS) {
        sbm__cpu_gemm_plan_destroy((sbm_gemm_plan *)P);
        return st;
    }
    *plan = (sbm_gemm_plan *)P;
    *Cout = C;
    return SBM_SUCCESS;
}
