/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA backend's sparse block Cholesky numeric phase: chol_numeric_create / chol_factor /
 * chol_numeric_destroy of the operations table (core_backend.h), from the symbolic structure
 * of chol_internal.h; chol_solve is in cuda_chol_solve.cu.
 *
 * numeric_create uploads the index arrays once (one host-to-device copy) and allocates the
 * fronts: sum over the supernodes of (m_s b)^2 doubles, through the context's allocator, refused
 * with SBM_ERR_OUT_OF_MEMORY naming the bytes when they do not fit. The cuBLAS and cuSOLVER
 * handles belong to the context (made at its first plan, destroyed with it), so that planning
 * again costs no handle creation; so does cuBLAS's workspace.
 * factor: zero the fronts, assemble A + damping, then level by level (leaves first) the batched
 * kernel for the fronts below the dense threshold (sbm_tuning.chol_dense_front, default
 * SBM__CHOL_DENSE_FRONT rows) and extend-add + cusolverDnDpotrf + cublasDtrsm + cublasDsyrk for
 * the others, all queued on the context's stream. The level loop depends only on the structure
 * and the threshold: with CUDA graphs on (cuda_graph.cu) it is captured once per numeric object
 * and threshold and replayed. The only device-to-host copy is the failed column word at the end
 * (8 bytes). */
#include "cuda_chol.cuh"
#include "cuda_libs.cuh"

#include <limits.h>
#include <stdlib.h>
#include <string.h>


/* ---------------------------------------------------------------------------------------- */
/* Create / destroy                                                                         */
/* ---------------------------------------------------------------------------------------- */

/* The factor's graphs (the caller waits for queued replays first). */
static void sbm__chol_drop_factor_graphs(sbm__chol_numeric *num)
{
    sbm__cuda_graph_reset(&num->fac_graph);
    for (int64_t j = 0; num->fac_segs && j <= num->fac_ndense; j++)
        sbm__cuda_graph_reset(&num->fac_segs[j]);
    free(num->fac_segs);
    num->fac_segs = NULL;
}

void sbm__cuda_chol_numeric_destroy(sbm__chol_numeric *num)
{
    if (!num) return;
    int cur = -1;
    if (cudaGetDevice(&cur) == cudaSuccess && cur != num->device) cudaSetDevice(num->device);
    /* queued factor or solve work may still use the fronts, on whatever stream */
    cudaDeviceSynchronize();
    sbm__chol_drop_factor_graphs(num);
    free(num->fac_dense_sup);
    for (int i = 0; i < SBM__CHOL_SOLVE_GRAPHS; i++) sbm__cuda_graph_reset(&num->solve[i].graph);
    if (num->d_F) num->allocator.free(num->allocator.user, num->d_F);
    if (num->d_index) num->allocator.free(num->allocator.user, num->d_index);
    if (num->d_work) num->allocator.free(num->allocator.user, num->d_work);
    if (num->d_solve) num->allocator.free(num->allocator.user, num->d_solve);
    (void)cudaGetLastError();
    free(num->h_f_ptr);
    free(num->h_w_rows);
    free(num);
}

/* Offsets of the carved index buffer. */
typedef struct sbm__chol_layout {
    size_t sup_col, rowptr, rows, f_ptr, w_rows, rel_ptr, rel, child_ptr, child, col_sup, perm;
    size_t a_front, a_sup, a_flags, level_sup, info, failed, total;
} sbm__chol_layout;

static sbm__chol_layout sbm__chol_carve(const sbm__chol_symbolic *sym)
{
    const int64_t ns = sym->nsuper, I = (int64_t)sizeof(int64_t);
    sbm__carve c = {0};
    sbm__chol_layout L;
    L.sup_col = sbm__carve_add(&c, (size_t)((ns + 1) * I));
    L.rowptr = sbm__carve_add(&c, (size_t)((ns + 1) * I));
    L.rows = sbm__carve_add(&c, (size_t)(sym->sup_rowptr[ns] * I));
    L.f_ptr = sbm__carve_add(&c, (size_t)((ns + 1) * I));
    L.w_rows = sbm__carve_add(&c, (size_t)((ns + 1) * I));
    L.rel_ptr = sbm__carve_add(&c, (size_t)((ns + 1) * I));
    L.rel = sbm__carve_add(&c, (size_t)(sym->rel_ptr[ns] * I));
    L.child_ptr = sbm__carve_add(&c, (size_t)((ns + 1) * I));
    L.child = sbm__carve_add(&c, (size_t)(ns * I));
    L.col_sup = sbm__carve_add(&c, (size_t)(sym->nb * I));
    L.perm = sbm__carve_add(&c, (size_t)(sym->nb * I));
    L.a_front = sbm__carve_add(&c, (size_t)(sym->nnzb_A * I));
    L.a_sup = sbm__carve_add(&c, (size_t)(sym->nnzb_A * I));
    L.a_flags = sbm__carve_add(&c, (size_t)sym->nnzb_A);
    L.level_sup = sbm__carve_add(&c, (size_t)(ns * I));
    L.info = sbm__carve_add(&c, (size_t)ns * sizeof(int));
    L.failed = sbm__carve_add(&c, sizeof(unsigned long long));
    L.total = c.total;
    return L;
}

/* The host image of the index buffer: sym's arrays, the front and front vector offsets, the
 * children lists (ascending: a postorder numbers children before parents) and A's assembly
 * map rebased from the factor's panels onto the fronts. */
static void sbm__chol_fill(const sbm__chol_symbolic *sym, const sbm__chol_numeric *num,
                           const sbm__chol_layout *L, char *h, int64_t *next)
{
    const int64_t ns = sym->nsuper, b = sym->b;
#define SBM__CP(field, src, count)                                                          \
    if ((count) > 0) memcpy(h + L->field, (src), (size_t)(count) * sizeof(int64_t))
    SBM__CP(sup_col, sym->sup_col, ns + 1);
    SBM__CP(rowptr, sym->sup_rowptr, ns + 1);
    SBM__CP(rows, sym->sup_rows, sym->sup_rowptr[ns]);
    SBM__CP(f_ptr, num->h_f_ptr, ns + 1);
    SBM__CP(w_rows, num->h_w_rows, ns + 1);
    SBM__CP(rel_ptr, sym->rel_ptr, ns + 1);
    SBM__CP(rel, sym->rel, sym->rel_ptr[ns]);
    SBM__CP(col_sup, sym->col_sup, sym->nb);
    SBM__CP(perm, sym->perm, sym->nb);
    SBM__CP(level_sup, sym->level_sup, ns);
#undef SBM__CP
    int64_t *cptr = (int64_t *)(h + L->child_ptr), *child = (int64_t *)(h + L->child);
    memset(cptr, 0, (size_t)(ns + 1) * sizeof(int64_t));
    for (int64_t s = 0; s < ns; s++)
        if (sym->sup_parent[s] >= 0) cptr[sym->sup_parent[s] + 1]++;
    for (int64_t s = 0; s < ns; s++) cptr[s + 1] += cptr[s];
    for (int64_t s = 0; s < ns; s++) next[s] = cptr[s];
    for (int64_t s = 0; s < ns; s++)
        if (sym->sup_parent[s] >= 0) child[next[sym->sup_parent[s]]++] = s;
    int64_t *a_front = (int64_t *)(h + L->a_front), *a_sup = (int64_t *)(h + L->a_sup);
    uint8_t *a_flags = (uint8_t *)(h + L->a_flags);
    for (int64_t t = 0; t < sym->nnzb_A; t++) {
        const int64_t s = sym->a_sup[t], off = sym->a_dst[t] - sym->L_ptr[s];
        const int64_t M = (sym->sup_rowptr[s + 1] - sym->sup_rowptr[s]) * b;
        a_front[t] = num->h_f_ptr[s] + off;
        a_sup[t] = s;
        a_flags[t] = (uint8_t)((sym->a_trans[t] ? SBM__CHOL_A_TRANS : 0) |
                               (off % M == off / M ? SBM__CHOL_A_DIAG : 0));
    }
    memset(h + L->info, 0, (size_t)ns * sizeof(int));
}

/* Host offsets of the fronts and front vectors, with the overflow and cuBLAS int checks. */
static sbm_status sbm__chol_offsets(sbm_ctx *ctx, const sbm__chol_symbolic *sym,
                                    sbm__chol_numeric *num)
{
    const int64_t ns = sym->nsuper;
    const size_t bytes = (size_t)(ns + 1) * sizeof(int64_t);
    num->h_f_ptr = (int64_t *)malloc(bytes); /* freed by sbm__cuda_chol_numeric_destroy */
    num->h_w_rows = (int64_t *)malloc(bytes);
    if (!num->h_f_ptr || !num->h_w_rows)
        return sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate 2 x %zu bytes of host "
                          "memory for the sparse Cholesky's front offsets", bytes);
    if (sym->max_front > INT_MAX)
        return sbm__error(ctx, SBM_ERR_OVERFLOW, "argument A: the largest front has %lld rows, "
                          "more than cuSOLVER's %d", (long long)sym->max_front, INT_MAX);
    num->h_f_ptr[0] = num->h_w_rows[0] = 0;
    for (int64_t s = 0; s < ns; s++) {
        const int64_t M = (sym->sup_rowptr[s + 1] - sym->sup_rowptr[s]) * sym->b;
        if (num->h_f_ptr[s] > (INT64_MAX / 8 - M * M))
            return sbm__error(ctx, SBM_ERR_OVERFLOW, "argument A: the fronts of the sparse "
                              "Cholesky need more than %lld doubles", (long long)(INT64_MAX / 8));
        num->h_f_ptr[s + 1] = num->h_f_ptr[s] + M * M;
        num->h_w_rows[s + 1] = num->h_w_rows[s] + M;
    }
    num->f_total = num->h_f_ptr[ns];
    num->w_total = num->h_w_rows[ns];
    return SBM_SUCCESS;
}

static void sbm__chol_bind(const sbm__chol_symbolic *sym, sbm__chol_numeric *num,
                           const sbm__chol_layout *L)
{
    char *d = (char *)num->d_index;
    sbm__chol_dev *v = &num->dev;
    v->b = sym->b;
    v->n = sym->n;
    v->sup_col = (const int64_t *)(d + L->sup_col);
    v->rowptr = (const int64_t *)(d + L->rowptr);
    v->rows = (const int64_t *)(d + L->rows);
    v->f_ptr = (const int64_t *)(d + L->f_ptr);
    v->w_rows = (const int64_t *)(d + L->w_rows);
    v->rel_ptr = (const int64_t *)(d + L->rel_ptr);
    v->rel = (const int64_t *)(d + L->rel);
    v->child_ptr = (const int64_t *)(d + L->child_ptr);
    v->child = (const int64_t *)(d + L->child);
    v->col_sup = (const int64_t *)(d + L->col_sup);
    v->perm = (const int64_t *)(d + L->perm);
    v->a_front = (const int64_t *)(d + L->a_front);
    v->a_sup = (const int64_t *)(d + L->a_sup);
    v->a_flags = (const uint8_t *)(d + L->a_flags);
    v->F = num->d_F;
    v->info = (int *)(d + L->info);
    v->failed = (unsigned long long *)(d + L->failed);
    num->d_levels = (const int64_t *)(d + L->level_sup);
}

sbm_status sbm__cuda_chol_numeric_create(sbm_ctx *ctx, const sbm__chol_symbolic *sym,
                                         sbm__chol_numeric **out)
{
    sbm_status st = SBM_SUCCESS;
    sbm__chol_numeric *num = NULL;
    char *h = NULL;
    sbm__chol_layout L;
    *out = NULL;
    SBM__CK(sbm__cuda_enter(ctx));
    num = (sbm__chol_numeric *)calloc(1, sizeof *num);
    if (!num) {
        st = sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory "
                        "for the sparse Cholesky's numeric state", sizeof *num);
        goto done;
    }
    num->allocator = ctx->allocator;
    num->device = ctx->device;
    num->smem_optin = sbm__cuda_st(ctx)->prop.sharedMemPerBlockOptin;
    SBM__CK(sbm__chol_offsets(ctx, sym, num));
    L = sbm__chol_carve(sym);
    num->d_F = (double *)sbm__alloc(ctx, (size_t)num->f_total * sizeof(double),
                                    "the frontal matrices of the sparse Cholesky (the sum over "
                                    "the supernodes of (m_s b)^2 doubles)");
    if (!num->d_F) {
        st = SBM_ERR_OUT_OF_MEMORY;
        goto done;
    }
    num->d_index = sbm__alloc(ctx, L.total, "the index arrays of the sparse Cholesky");
    if (!num->d_index) {
        st = SBM_ERR_OUT_OF_MEMORY;
        goto done;
    }
    /* the host image, then nsuper int64 of scratch for the children lists */
    h = (char *)sbm__host_alloc(ctx, L.total + (size_t)sym->nsuper * sizeof(int64_t),
                                "the index arrays of the sparse Cholesky");
    if (!h) {
        st = SBM_ERR_OUT_OF_MEMORY;
        goto done;
    }
    sbm__chol_fill(sym, num, &L, h, (int64_t *)(h + L.total));
    SBM__CK(sbm__cuda_h2d(ctx, num->d_index, h, L.total));
    sbm__chol_bind(sym, num, &L);
    SBM__CK(sbm__cuda_lib_handles(ctx));
    *out = num;
    num = NULL;
done:
    sbm__host_free(ctx, h);
    sbm__cuda_chol_numeric_destroy(num);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Factor                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Dynamic shared memory of the batched kernel for the fronts of level l with lo <= M < hi: the
 * largest one's, or 0 (global memory) when that does not fit what a block may opt into. *any:
 * whether the level has such a front. */
static size_t sbm__chol_class_smem(const sbm__chol_symbolic *sym, const sbm__chol_numeric *num,
                                   int64_t l, int64_t lo, int64_t hi, int *any)
{
    int64_t mx = 0;
    *any = 0;
    for (int64_t i = sym->level_ptr[l]; i < sym->level_ptr[l + 1]; i++) {
        const int64_t M = sbm__chol_front_rows(sym, sym->level_sup[i]);
        if (M >= lo && M < hi) {
            *any = 1;
            if (M > mx) mx = M;
        }
    }
    const size_t bytes = (size_t)(mx * mx) * sizeof(double);
    return bytes <= num->smem_optin ? bytes : 0;
}

/* The batched kernel's classes of fronts: M in [bounds[c], bounds[c+1]), c = 0, 1. */
static void sbm__chol_classes(int64_t dense, int64_t bounds[3])
{
    bounds[0] = 0;
    bounds[1] = dense < SBM__CHOL_TINY_FRONT ? dense : SBM__CHOL_TINY_FRONT;
    bounds[2] = dense;
}

/* One level's batched launches (one per class present). */
static sbm_status sbm__chol_factor_batched(sbm_ctx *ctx, const sbm__chol_symbolic *sym,
                                           sbm__chol_numeric *num, int64_t l, int64_t dense,
                                           cudaStream_t s)
{
    sbm_status st = SBM_SUCCESS;
    const int64_t lo = sym->level_ptr[l], count = sym->level_ptr[l + 1] - lo;
    int64_t bounds[3];
    sbm__chol_classes(dense, bounds);
    for (int c = 0; c < 2; c++) {
        int any = 0;
        const size_t smem = sbm__chol_class_smem(sym, num, l, bounds[c], bounds[c + 1], &any);
        if (!any) continue;
        sbm__chol_launch_factor_small(num->dev, num->d_levels + lo, count, bounds[c],
                                      bounds[c + 1], smem, s);
        SBM__LAUNCHED(ctx, "batched front factorisation");
    }
done:
    return st;
}

/* num's fac_lwork and fac_smem at the dense threshold, computed when it changes (the factor
 * graph, made for another threshold, is dropped), and with graphs on the factor graph's own
 * cuSOLVER workspace. */
static sbm_status sbm__chol_factor_setup(sbm_ctx *ctx, const sbm__chol_symbolic *sym,
                                         sbm__chol_numeric *num, int64_t dense)
{
    sbm_status st = SBM_SUCCESS;
    int64_t bounds[3], nd = 0;
    int lwork = 0;
    size_t smem_max = 0;
    if (num->fac_dense != dense) {
        if (num->fac_graph.exec || num->fac_segs) SBM__CK(sbm__cuda_sync(ctx)); /* replays */
        sbm__chol_drop_factor_graphs(num);
        num->fac_dense = 0;
        free(num->fac_dense_sup);
        num->fac_dense_sup = (int64_t *)malloc((size_t)sym->nsuper * sizeof(int64_t));
        if (!num->fac_dense_sup) {
            st = sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host "
                            "memory for the sparse Cholesky's list of dense fronts",
                            (size_t)sym->nsuper * sizeof(int64_t));
            goto done;
        }
        for (int64_t i = 0; i < sym->nsuper; i++) { /* the level loop's order */
            const int64_t s = sym->level_sup[i], M = sbm__chol_front_rows(sym, s);
            if (M < dense) continue;
            const int K = (int)((sym->sup_col[s + 1] - sym->sup_col[s]) * sym->b);
            int w = 0;
            SBM__SOLVER(ctx,
                        SBM__CUDA_LIB(cusolverDnDpotrf_bufferSize)(
                            sbm__cuda_solver(ctx), CUBLAS_FILL_MODE_LOWER, K,
                            num->d_F + num->h_f_ptr[s], (int)M, &w),
                        "cusolverDnDpotrf_bufferSize");
            if (w > lwork) lwork = w;
            num->fac_dense_sup[nd++] = s;
        }
        sbm__chol_classes(dense, bounds);
        for (int64_t l = 0; l < sym->nlevels; l++)
            for (int c = 0; c < 2; c++) {
                int any = 0;
                const size_t sm = sbm__chol_class_smem(sym, num, l, bounds[c], bounds[c + 1], &any);
                if (sm > smem_max) smem_max = sm;
            }
        num->fac_dense = dense;
        num->fac_ndense = nd;
        num->fac_lwork = lwork;
        num->fac_smem = smem_max;
    }
    if (sbm__cuda_graphs_on(ctx) && num->fac_lwork > num->work_doubles) {
        if (num->fac_graph.exec || num->fac_segs) SBM__CK(sbm__cuda_sync(ctx));
        sbm__chol_drop_factor_graphs(num);
        if (num->d_work) num->allocator.free(num->allocator.user, num->d_work);
        num->work_doubles = 0;
        num->d_work = (double *)sbm__alloc(ctx, (size_t)num->fac_lwork * sizeof(double),
                                           "the cuSOLVER workspace of the sparse Cholesky's "
                                           "factor graph");
        if (!num->d_work) {
            st = SBM_ERR_OUT_OF_MEMORY;
            goto done;
        }
        num->work_doubles = num->fac_lwork;
    }
    /* every time: another numeric object's factor may have set less */
    if (num->fac_smem > 48 * 1024)
        SBM__CU(ctx, sbm__chol_factor_small_smem(num->fac_smem),
                "cudaFuncSetAttribute (shared memory of the batched front factorisation)");
done:
    return st;
}

/* One dense front's L11 = chol(F11) (cuSOLVER). */
static sbm_status sbm__chol_potrf(sbm_ctx *ctx, const sbm__chol_symbolic *sym,
                                  sbm__chol_numeric *num, int64_t s, double *work)
{
    sbm_status st = SBM_SUCCESS;
    const int M = (int)sbm__chol_front_rows(sym, s);
    const int K = (int)((sym->sup_col[s + 1] - sym->sup_col[s]) * sym->b);
    SBM__SOLVER(ctx,
                SBM__CUDA_LIB(cusolverDnDpotrf)(sbm__cuda_solver(ctx), CUBLAS_FILL_MODE_LOWER, K,
                                                num->d_F + num->h_f_ptr[s], M, work,
                                                num->fac_lwork, num->dev.info + s),
                "cusolverDnDpotrf of a front");
done:
    return st;
}

/* After its potrf, one dense front's L21 = F21 L11^-T, F22 -= L21 L21^T (cuBLAS). */
static sbm_status sbm__chol_dense_update(sbm_ctx *ctx, const sbm__chol_symbolic *sym,
                                        sbm__chol_numeric *num, int64_t s)
{
    sbm_status st = SBM_SUCCESS;
    const int M = (int)sbm__chol_front_rows(sym, s);
    const int K = (int)((sym->sup_col[s + 1] - sym->sup_col[s]) * sym->b), U = M - K;
    /* static: a captured call must not point at a dead stack frame */
    static const double one = 1.0, minus_one = -1.0;
    double *F = num->d_F + num->h_f_ptr[s];
    cublasHandle_t blas = sbm__cuda_blas(ctx);
    if (U == 0) goto done;
    SBM__BLAS(ctx,
              SBM__CUDA_LIB(cublasDtrsm)(blas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER,
                                         CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, U, K, &one, F, M,
                                         F + K, M),
              "cublasDtrsm of a front");
    SBM__BLAS(ctx,
              SBM__CUDA_LIB(cublasDsyrk)(blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, U, K,
                                         &minus_one, F + K, M, &one, F + K + (int64_t)K * M, M),
              "cublasDsyrk of a front");
done:
    return st;
}

/* What the factor's level loop reads (sbm__chol_factor_levels, a sbm__cuda_record_fn). */
typedef struct sbm__chol_factor_args {
    const sbm__chol_symbolic *sym;
    sbm__chol_numeric *num;
    int64_t dense; /* the dense-front threshold */
    double *work;  /* cuSOLVER workspace of num->fac_lwork doubles */
    int64_t piece; /* -1: the whole loop; j: only what lies between the j-th potrf and the next */
} sbm__chol_factor_args;

/* Every level, leaves first, on stream s: the part of the factor that depends only on the
 * structure, captured as the factor graph (or one piece of it). */
static sbm_status sbm__chol_factor_levels(sbm_ctx *ctx, cudaStream_t s, void *data)
{
    sbm_status st = SBM_SUCCESS;
    const sbm__chol_factor_args *a = (const sbm__chol_factor_args *)data;
    const sbm__chol_symbolic *sym = a->sym;
    sbm__chol_numeric *num = a->num;
    const int64_t dense = a->dense;
    int64_t k = 0; /* potrf calls passed */
#define SBM__MINE (a->piece < 0 || a->piece == k)
    SBM__CK(sbm__cuda_lib_set_stream(ctx, s));
    for (int64_t l = 0; l < sym->nlevels && (a->piece < 0 || k <= a->piece); l++) {
        const int64_t lo = sym->level_ptr[l], count = sym->level_ptr[l + 1] - lo;
        int any_dense = 0;
        if (SBM__MINE) SBM__CK(sbm__chol_factor_batched(ctx, sym, num, l, dense, s));
        for (int64_t i = lo; i < lo + count; i++)
            if (sbm__chol_front_rows(sym, sym->level_sup[i]) >= dense) any_dense = 1;
        if (!any_dense) continue;
        if (SBM__MINE) {
            sbm__chol_launch_extend_add(num->dev, num->d_levels + lo, count, dense, s);
            SBM__LAUNCHED(ctx, "extend-add of the dense fronts");
        }
        for (int64_t i = lo; i < lo + count; i++) {
            const int64_t f = sym->level_sup[i];
            if (sbm__chol_front_rows(sym, f) < dense) continue;
            if (a->piece < 0) SBM__CK(sbm__chol_potrf(ctx, sym, num, f, a->work));
            k++;
            if (SBM__MINE) SBM__CK(sbm__chol_dense_update(ctx, sym, num, f));
        }
        if (SBM__MINE) {
            sbm__chol_launch_check(num->dev, num->d_levels + lo, count, dense, s);
            SBM__LAUNCHED(ctx, "pivot check of the dense fronts");
        }
    }
#undef SBM__MINE
done:
    return st;
}

/* The loop in pieces cut at every potrf (each piece a graph, each potrf plain on stream s):
 * the same calls in the same order as the whole loop. */
static sbm_status sbm__chol_factor_pieces(sbm_ctx *ctx, sbm__chol_factor_args *a, cudaStream_t s)
{
    sbm_status st = SBM_SUCCESS;
    sbm__chol_numeric *num = a->num;
    if (!num->fac_segs) {
        num->fac_segs = (sbm__cuda_graph *)calloc((size_t)num->fac_ndense + 1,
                                                  sizeof(sbm__cuda_graph));
        if (!num->fac_segs) {
            st = sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host "
                            "memory for the sparse Cholesky's factor graphs",
                            (size_t)(num->fac_ndense + 1) * sizeof(sbm__cuda_graph));
            goto done;
        }
    }
    for (int64_t j = 0; j <= num->fac_ndense; j++) {
        a->piece = j;
        SBM__CK(sbm__cuda_graph_run(ctx, &num->fac_segs[j], sbm__chol_factor_levels, a));
        if (j == num->fac_ndense) break;
        /* a capture may have left the handles elsewhere */
        SBM__CK(sbm__cuda_lib_set_stream(ctx, s));
        SBM__CK(sbm__chol_potrf(ctx, a->sym, num, num->fac_dense_sup[j], a->work));
    }
done:
    return st;
}

/* Zero the fronts, assemble A + damping (plain launches: A's values and lambda change from one
 * factorisation to the next), the level loop (the factor graph, or plain), then the failed
 * column word, read after the loop as on the plain path. */
sbm_status sbm__cuda_chol_factor(sbm_ctx *ctx, const sbm__chol_symbolic *sym,
                                 sbm__chol_numeric *num, const sbm_cbc *A,
                                 sbm_damping damping, double lambda, int64_t *failed)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    unsigned long long h_failed = SBM__CHOL_NO_FAILURE;
    sbm__chol_factor_args args = {sym, num, sbm__chol_dense_front(ctx), NULL, -1};
    *failed = -1;
    SBM__CK(sbm__cuda_enter(ctx));
    if (sym->nsuper == 0) goto done;
    SBM__CK(sbm__chol_factor_setup(ctx, sym, num, args.dense));
    SBM__CK(sbm__cuda_zero(ctx, num->d_F, (size_t)num->f_total * sizeof(double)));
    SBM__CK(sbm__cuda_zero(ctx, num->dev.info, (size_t)sym->nsuper * sizeof(int)));
    SBM__CU(ctx, cudaMemsetAsync(num->dev.failed, 0xff, sizeof(unsigned long long), s),
            "cudaMemsetAsync (failed column)");
    sbm__chol_launch_assemble(num->dev, A->nnzb, A->values, damping, lambda, s);
    SBM__LAUNCHED(ctx, "assembly of A into the fronts");
    if (sbm__cuda_graphs_on(ctx)) {
        args.work = num->d_work;
        if (sbm__cuda_graphs_on(ctx) == 2) num->fac_graph.failed = 1;
        if (!num->fac_graph.failed)
            SBM__CK(sbm__cuda_graph_run(ctx, &num->fac_graph, sbm__chol_factor_levels, &args));
        else /* the whole loop could not be captured: perhaps only cuSOLVER cannot */
            SBM__CK(sbm__chol_factor_pieces(ctx, &args, s));
    } else {
        if (num->fac_lwork > 0)
            SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_B, (size_t)num->fac_lwork * sizeof(double),
                                        (void **)&args.work));
        SBM__CK(sbm__chol_factor_levels(ctx, s, &args));
    }
    SBM__CK(sbm__cuda_d2h(ctx, &h_failed, num->dev.failed, sizeof h_failed));
    if (h_failed != SBM__CHOL_NO_FAILURE) {
        *failed = (int64_t)h_failed;
        st = SBM_ERR_NOT_POSITIVE_DEFINITE; /* the front end writes the message */
    }
done:
    return st;
}
