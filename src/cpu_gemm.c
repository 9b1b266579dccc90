/* Block SpGEMM on the CPU: C = U + alpha*op(A)*op(B) on CBC matrices.
 *
 * Gustavson's algorithm over block columns (CSparse cs_multiply; Davis, "Direct Methods for Sparse
 * Linear Systems", 2006, section 2.8), split into a symbolic plan and a numeric execute:
 *
 *   plan     op(A) and op(B) as block-CSC patterns (a transposed operand gets its transposed
 *            pattern and a block permutation, so execute only re-transposes values); for each
 *            column j of C the union of U's rows and the rows of every product op(A)_ik*op(B)_kj,
 *            sorted; for every product, in execution order, the position of its output block
 *            within C's column j ("positions" mode). When those positions would not fit the
 *            context's memory budget, the plan keeps only a row -> position map that execute
 *            refills per column ("scatter" mode); both modes sum in the same order.
 *   execute  for each column j: zero C's column, for each op(B) block (k, j), for each op(A) block
 *            (i, k): C_ij += op(A)_ik * op(B)_kj with a fixed-size block kernel; then scale by
 *            alpha and add U. No pattern work and no allocation.
 *
 * Products are summed in the fixed order (op(B) block, then op(A) block), so results are
 * deterministic. A plan holds scratch (transposed values, the scatter map): one plan must not be
 * executed by two threads at once. */
#include "cpu_backend.h"
#include "sbm_blocks.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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
    int64_t *bt_ptr;      /* op_b == T: the same for B^T (size nbc+1) */
    int32_t *bt_ind;
    int64_t *bt_perm;
    double *bt_val;
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
    const double *bv;
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
 * ahead. */
#define SBM__GEMM_PREFETCH 2
static inline void prefetch_column(const gemm_args *g, int64_t b, int64_t b_end, int64_t RK)
{
#if defined(__GNUC__)
    if (b >= b_end) return;
    const int64_t kk = g->bi[b];
    const char *p = (const char *)(g->av + g->ap[kk] * RK);
    const int64_t bytes = (g->ap[kk + 1] - g->ap[kk]) * RK * (int64_t)sizeof(double);
    for (int64_t off = 0; off < bytes && off < 16 * 64; off += 64) __builtin_prefetch(p + off);
#else
    (void)g, (void)b, (void)b_end, (void)RK;
#endif
}

/* One pass over C; R, K, C are compile-time constants in the fast paths, so the block kernel is
 * unrolled and vectorised for each triple. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void gemm_numeric(const gemm_args *g, const int R, const int K, const int C)
{
    const int64_t RK = (int64_t)R * K, KC = (int64_t)K * C, RC = (int64_t)R * C;
    const int64_t *ap = g->ap, *bp = g->bp, *cp = g->cp, *a_end = g->a_end;
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
                const double *bb = bv + b * KC;
                prefetch_column(g, b + SBM__GEMM_PREFETCH, bp[j + 1], RK);
                for (int64_t a = a0; a < a1; a++)
                    sbm_blk_gemm_acc(R, K, C, 1.0, av + a * RK, bb, cj + (int64_t)pos[a - a0] * RC);
                pos += a1 - a0;
            }
        } else {
            const int32_t *ai = g->ai;
            int32_t *slot = g->slot;
            for (int64_t p = c0; p < c1; p++) slot[g->ci[p]] = (int32_t)(p - c0);
            for (int64_t b = bp[j]; b < bp[j + 1]; b++) {
                const int64_t kk = bi[b], a0 = ap[kk], a1 = a_end ? a_end[b] : ap[kk + 1];
                const double *bb = bv + b * KC;
                for (int64_t a = a0; a < a1; a++)
                    sbm_blk_gemm_acc(R, K, C, 1.0, av + a * RK, bb, cj + (int64_t)slot[ai[a]] * RC);
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

#define SBM_X_(R, K, C) \
    static void gemm_numeric_##R##_##K##_##C(const gemm_args *g) { gemm_numeric(g, R, K, C); }
SBM_GEMM_TRIPLES(SBM_X_)
#undef SBM_X_

static void gemm_numeric_generic(const gemm_args *g) { gemm_numeric(g, g->r, g->k, g->c); }

static gemm_numeric_fn gemm_select(int r, int k, int c)
{
#define SBM_X_(R, K, C) \
    if (r == (R) && k == (K) && c == (C)) return gemm_numeric_##R##_##K##_##C;
    SBM_GEMM_TRIPLES(SBM_X_)
#undef SBM_X_
    return gemm_numeric_generic;
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
                      P->bt_perm, P->bt_val, P->a_end, P->pos, P->upos, P->slot};
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

static int cmp_i32(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* Sort the n block rows of one column of C. Short columns (the common case) by insertion. */
static void sort_rows(int32_t *v, int64_t n)
{
    if (n > 32) {
        qsort(v, (size_t)n, sizeof *v, cmp_i32);
        return;
    }
    for (int64_t t = 1; t < n; t++) {
        int32_t x = v[t];
        int64_t s = t;
        for (; s > 0 && v[s - 1] > x; s--) v[s] = v[s - 1];
        v[s] = x;
    }
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

sbm_status sbm__cpu_gemm_plan(sbm_ctx *ctx, sbm_op op_a, const sbm_cbc *A, sbm_op op_b,
                              const sbm_cbc *B, const sbm_cbc *U, unsigned flags,
                              sbm_gemm_plan **plan, sbm_cbc **Cout)
{
    const int upper = (flags & SBM_GEMM_UPPER) != 0;
    sbm_status st = SBM_SUCCESS;
    int64_t *mark = NULL, *cptr = NULL;
    int32_t *rows = NULL, *remap = NULL, *tmp_slot = NULL;
    int64_t cap = 0;
    sbm_cbc *C = NULL;

    cpu_gemm_plan *P = sbm__host_alloc(ctx, sizeof *P, "a block SpGEMM plan");
    if (!P) return SBM_ERR_OUT_OF_MEMORY;
    memset(P, 0, sizeof *P);
    P->al = ctx->allocator;
    P->bytes = sizeof *P;
    P->op_a = op_a;
    P->op_b = op_b;
    P->flags = flags;
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
        P->bt_val = plan_alloc(ctx, P, B->nnzb * (int64_t)B->r * B->c, sizeof(double),
                               "B^T block values");
        CHECK_ALLOC(P->bt_val);
        transpose_pattern(B, P->bt_ptr, P->bt_ind, P->bt_perm);
        bp = P->bt_ptr;
        bi = P->bt_ind;
    }

    /* Products per execute (int64, overflow-checked); with UPPER only the op(A) blocks of column
     * k with row <= j take part in op(B) block (k, j), a prefix of the sorted column. */
    if (upper) {
        P->a_end = plan_alloc(ctx, P, B->nnzb, sizeof(int64_t), "upper-triangle product ranges");
        CHECK_ALLOC(P->a_end);
    }
    int64_t products = 0;
    for (int64_t j = 0; j < nbc; j++) {
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
        }
    }
    P->products = products;

    /* Positions mode unless the per-product positions exceed the memory budget. */
    int ok;
    size_t pos_bytes = sbm__mul_size(ctx, (size_t)products, sizeof(int32_t), "product positions", &ok);
    if (!ok) {
        st = SBM_ERR_OVERFLOW;
        goto done;
    }
    const int positions = ctx->memory_budget == 0 || pos_bytes <= ctx->memory_budget;
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

    /* Symbolic pass (cs_multiply's cs_scatter with marks): mark[i] == j when row i is already in
     * column j, slot[i] its provisional position; each column is then sorted and the provisional
     * positions of its products renumbered. */
    mark = sbm__host_alloc(ctx, (size_t)nbr * sizeof(int64_t), "row marks");
    CHECK_ALLOC(mark);
    int32_t *slot = P->slot;
    if (!slot) {
        slot = tmp_slot = sbm__host_alloc(ctx, (size_t)nbr * sizeof(int32_t), "row-to-position map");
        CHECK_ALLOC(slot);
    }
    remap = sbm__host_alloc(ctx, (size_t)nbr * sizeof(int32_t), "position renumbering");
    CHECK_ALLOC(remap);
    cptr = sbm__host_alloc(ctx, (size_t)(nbc + 1) * sizeof(int64_t), "column pointers of C");
    CHECK_ALLOC(cptr);
    st = grow_rows(ctx, &rows, &cap, A->nnzb + B->nnzb + P->u_nnzb + 16);
    if (st != SBM_SUCCESS) goto done;
    for (int64_t i = 0; i < nbr; i++) mark[i] = -1;
    int64_t nnz = 0, t = 0;
    cptr[0] = 0;
    for (int64_t j = 0; j < nbc; j++) {
        /* room for this column's rows: at most min(nbr, U's rows + products) */
        int64_t bound = U ? U->colptr[j + 1] - U->colptr[j] : 0;
        for (int64_t b = bp[j]; b < bp[j + 1] && bound < nbr; b++)
            bound += (upper ? P->a_end[b] : ap[bi[b] + 1]) - ap[bi[b]];
        if (bound > nbr) bound = nbr;
        if (cap - nnz < bound) {
            st = grow_rows(ctx, &rows, &cap, nnz + bound);
            if (st != SBM_SUCCESS) goto done;
        }
        int32_t *col = rows + nnz;
        int32_t cnt = 0;
        const int64_t t0 = t;
        if (U) {
            for (int64_t u = U->colptr[j]; u < U->colptr[j + 1]; u++) {
                const int32_t i = U->rowind[u];
                mark[i] = j;
                slot[i] = cnt;
                P->upos[u] = cnt;
                col[cnt++] = i;
            }
        }
        for (int64_t b = bp[j]; b < bp[j + 1]; b++) {
            const int64_t kk = bi[b], a0 = ap[kk], a1 = upper ? P->a_end[b] : ap[kk + 1];
            for (int64_t a = a0; a < a1; a++) {
                const int32_t i = ai[a];
                if (mark[i] != j) {
                    mark[i] = j;
                    slot[i] = cnt;
                    col[cnt++] = i;
                }
                if (positions) P->pos[t] = slot[i];
                t++;
            }
        }
        int sorted = 1;
        for (int32_t s = 1; s < cnt && sorted; s++) sorted = col[s - 1] < col[s];
        if (!sorted) {
            if ((int64_t)cnt * 16 >= nbr) {
                /* a dense column (BA: most cameras share a point with camera j): reading the
                 * marks in row order costs less than sorting */
                int32_t s = 0;
                for (int64_t i = 0; i < nbr; i++)
                    if (mark[i] == j) col[s++] = (int32_t)i;
            } else {
                sort_rows(col, cnt);
            }
            for (int32_t s = 0; s < cnt; s++) remap[slot[col[s]]] = s;
            if (positions)
                for (int64_t q = t0; q < t; q++) P->pos[q] = remap[P->pos[q]];
            if (U)
                for (int64_t u = U->colptr[j]; u < U->colptr[j + 1]; u++)
                    P->upos[u] = remap[P->upos[u]];
        }
        nnz += cnt;
        cptr[j + 1] = nnz;
    }

    st = sbm__cbc_alloc(ctx, nbr, nbc, P->r, P->c, nnz, &C);
    if (st != SBM_SUCCESS) goto done;
    memcpy(C->colptr, cptr, (size_t)(nbc + 1) * sizeof(int64_t));
    if (nnz > 0) memcpy(C->rowind, rows, (size_t)nnz * sizeof(int32_t));
    memset(C->values, 0, (size_t)nnz * P->r * P->c * sizeof(double));

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
    sbm__host_free(ctx, mark);
    sbm__host_free(ctx, tmp_slot);
    sbm__host_free(ctx, remap);
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
        transpose_values(B, P->bt_perm, P->bt_val);
        g.bp = P->bt_ptr;
        g.bi = P->bt_ind;
        g.bv = P->bt_val;
    } else {
        g.bp = B->colptr;
        g.bi = B->rowind;
        g.bv = B->values;
    }
    g.a_end = P->a_end;
    g.pos = P->pos;
    g.slot = P->slot;
    gemm_select(P->r, P->k, P->c)(&g);
    (void)ctx;
    return SBM_SUCCESS;
}
