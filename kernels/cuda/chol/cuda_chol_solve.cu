/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA backend's sparse block Cholesky solve (chol_solve of the operations table; the
 * numeric state and the factor: cuda_chol.cu).
 *
 * The forward pass by levels (leaves first), the backward pass by levels (root first), the
 * batched kernels or cublasDtrsm/cublasDgemm per front, then a kernel scatters X; no copy to
 * the host. With CUDA graphs on (cuda_graph.cu) both passes are one graph per (nrhs, dense
 * threshold), cached in the numeric object: B is first copied into the object's own packed
 * buffer, which the graph reads, and the graph's front vectors live in that buffer too, so that
 * the graph's pointers stay valid whatever B, X and the context's workspace pool do; the
 * scatter into X runs after the graph. */
#include "cuda_chol.cuh"

#include <limits.h>

/* One dense front of the forward (backward = 0) or backward pass on its gathered vector. */
static sbm_status sbm__chol_solve_dense(sbm_ctx *ctx, const sbm__chol_symbolic *sym,
                                        const sbm__chol_numeric *num, int64_t s, int backward,
                                        int nrhs, double *W)
{
    sbm_status st = SBM_SUCCESS;
    const int M = (int)sbm__chol_front_rows(sym, s);
    const int K = (int)((sym->sup_col[s + 1] - sym->sup_col[s]) * sym->b), U = M - K;
    /* static: a captured call must not point at a dead stack frame */
    static const double one = 1.0, minus_one = -1.0;
    const double *F = num->d_F + num->h_f_ptr[s];
    double *w = W + num->h_w_rows[s] * nrhs;
    cublasHandle_t blas = sbm__cuda_blas(ctx);
    if (!backward) {
        SBM__BLAS(ctx,
                  SBM__CUDA_LIB(cublasDtrsm)(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER,
                                             CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, K, nrhs, &one,
                                             F, M, w, M),
                  "cublasDtrsm of the forward solve");
        if (U > 0)
            SBM__BLAS(ctx,
                      SBM__CUDA_LIB(cublasDgemm)(blas, CUBLAS_OP_N, CUBLAS_OP_N, U, nrhs, K,
                                                 &minus_one, F + K, M, w, M, &one, w + K, M),
                      "cublasDgemm of the forward solve");
    } else {
        if (U > 0)
            SBM__BLAS(ctx,
                      SBM__CUDA_LIB(cublasDgemm)(blas, CUBLAS_OP_T, CUBLAS_OP_N, K, nrhs, U,
                                                 &minus_one, F + K, M, w + K, M, &one, w, M),
                      "cublasDgemm of the backward solve");
        SBM__BLAS(ctx,
                  SBM__CUDA_LIB(cublasDtrsm)(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER,
                                             CUBLAS_OP_T, CUBLAS_DIAG_NON_UNIT, K, nrhs, &one,
                                             F, M, w, M),
                  "cublasDtrsm of the backward solve");
    }
done:
    return st;
}

/* What the passes read (sbm__chol_solve_levels, a sbm__cuda_record_fn). */
typedef struct sbm__chol_solve_args {
    const sbm__chol_symbolic *sym;
    const sbm__chol_numeric *num;
    int64_t dense; /* the dense-front threshold */
    int64_t nrhs;
    const double *B;
    int64_t ldb;
    double *W;     /* front vectors, w_total x nrhs */
} sbm__chol_solve_args;

/* One level of one pass: the batched kernel, then the dense fronts (gather, cuBLAS). */
static sbm_status sbm__chol_solve_level(sbm_ctx *ctx, const sbm__chol_solve_args *a, int64_t l,
                                        int backward, cudaStream_t s)
{
    sbm_status st = SBM_SUCCESS;
    const sbm__chol_symbolic *sym = a->sym;
    const sbm__chol_numeric *num = a->num;
    const int64_t lo = sym->level_ptr[l], count = sym->level_ptr[l + 1] - lo;
    const int64_t *list = num->d_levels + lo;
    int any_dense = 0;
    for (int64_t i = lo; i < lo + count; i++)
        if (sbm__chol_front_rows(sym, sym->level_sup[i]) >= a->dense) any_dense = 1;
    for (int gather = 0; gather <= any_dense; gather++) {
        if (backward)
            sbm__chol_launch_backward(num->dev, list, count, a->dense, gather, a->nrhs, a->W, s);
        else
            sbm__chol_launch_forward(num->dev, list, count, a->dense, gather, a->nrhs, a->B,
                                     a->ldb, a->W, s);
        SBM__LAUNCHED(ctx, gather ? "gather of the dense fronts' solve"
                                  : "batched solve of the small fronts");
    }
    for (int64_t i = lo; any_dense && i < lo + count; i++)
        if (sbm__chol_front_rows(sym, sym->level_sup[i]) >= a->dense)
            SBM__CK(sbm__chol_solve_dense(ctx, sym, num, sym->level_sup[i], backward,
                                          (int)a->nrhs, a->W));
done:
    return st;
}

/* Both passes on stream s: the solve graph. */
static sbm_status sbm__chol_solve_levels(sbm_ctx *ctx, cudaStream_t s, void *data)
{
    sbm_status st = SBM_SUCCESS;
    const sbm__chol_solve_args *a = (const sbm__chol_solve_args *)data;
    SBM__CK(sbm__cuda_lib_set_stream(ctx, s));
    for (int64_t l = 0; l < a->sym->nlevels; l++) SBM__CK(sbm__chol_solve_level(ctx, a, l, 0, s));
    for (int64_t l = a->sym->nlevels - 1; l >= 0; l--)
        SBM__CK(sbm__chol_solve_level(ctx, a, l, 1, s));
done:
    return st;
}

/* Bytes of d_solve before W: B's n x nrhs doubles, rounded up so that W starts as aligned as
 * the pool's buffer of the plain path (cuBLAS may choose its kernels by alignment). */
static size_t sbm__chol_solve_w(int64_t n, int64_t nrhs)
{
    sbm__carve c = {0};
    sbm__carve_add(&c, (size_t)(n * nrhs) * sizeof(double));
    return c.total;
}

/* The solve graph slot of (nrhs, dense): the cached one, else an empty or the least recently
 * used one, cleared; num->d_solve holds nrhs right-hand sides (grown: every slot cleared, since
 * their graphs point into the old buffer). */
static sbm_status sbm__chol_solve_slot(sbm_ctx *ctx, const sbm__chol_symbolic *sym,
                                       sbm__chol_numeric *num, int64_t nrhs, int64_t dense,
                                       sbm__chol_solve_graph **slot)
{
    sbm_status st = SBM_SUCCESS;
    sbm__chol_solve_graph *g = NULL;
    *slot = NULL;
    if (nrhs > num->solve_cap) {
        SBM__CK(sbm__cuda_sync(ctx)); /* a replay may still read the old buffer */
        for (int i = 0; i < SBM__CHOL_SOLVE_GRAPHS; i++) {
            sbm__cuda_graph_reset(&num->solve[i].graph);
            num->solve[i].nrhs = 0;
        }
        if (num->d_solve) num->allocator.free(num->allocator.user, num->d_solve);
        num->solve_cap = 0;
        num->d_solve = (double *)sbm__alloc(ctx, sbm__chol_solve_w(sym->n, nrhs) +
                                                     (size_t)(num->w_total * nrhs) *
                                                         sizeof(double),
                                            "the right-hand sides and front vectors of the "
                                            "sparse Cholesky's solve graphs");
        if (!num->d_solve) {
            st = SBM_ERR_OUT_OF_MEMORY;
            goto done;
        }
        num->solve_cap = nrhs;
    }
    for (int i = 0; i < SBM__CHOL_SOLVE_GRAPHS && !g; i++)
        if (num->solve[i].nrhs == nrhs && num->solve[i].dense == dense) g = &num->solve[i];
    if (!g) {
        g = &num->solve[0];
        for (int i = 1; i < SBM__CHOL_SOLVE_GRAPHS; i++)
            if (num->solve[i].last_use < g->last_use) g = &num->solve[i];
        if (g->graph.exec) SBM__CK(sbm__cuda_sync(ctx));
        sbm__cuda_graph_reset(&g->graph);
        g->nrhs = nrhs;
        g->dense = dense;
    }
    g->last_use = ++num->solve_clock;
    *slot = g;
done:
    return st;
}

sbm_status sbm__cuda_chol_solve(sbm_ctx *ctx, const sbm__chol_symbolic *sym,
                                const sbm__chol_numeric *cnum, int64_t nrhs, const double *B,
                                int64_t ldb, double *X, int64_t ldx)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    /* the graphs and their buffers are a cache: solving leaves the factor as it was */
    sbm__chol_numeric *num = (sbm__chol_numeric *)cnum;
    sbm__chol_solve_args a = {sym, num, sbm__chol_dense_front(ctx), nrhs, B, ldb, NULL};
    sbm__chol_solve_graph *g = NULL;
    SBM__CK(sbm__cuda_enter(ctx));
    if (sym->n == 0 || nrhs == 0) goto done;
    if (nrhs > INT_MAX || num->w_total + sym->n > (INT64_MAX / 8) / nrhs) {
        st = sbm__error(ctx, SBM_ERR_OVERFLOW, "argument nrhs: %lld right-hand sides overflow the "
                        "solve's workspace (%lld rows of front vectors and right-hand side each)",
                        (long long)nrhs, (long long)(num->w_total + sym->n));
        goto done;
    }
    if (sbm__cuda_graphs_on(ctx)) {
        SBM__CK(sbm__chol_solve_slot(ctx, sym, num, nrhs, a.dense, &g));
        a.B = num->d_solve;
        a.ldb = sym->n;
        a.W = (double *)((char *)num->d_solve + sbm__chol_solve_w(sym->n, nrhs));
        if (ldb == sym->n)
            SBM__CK(sbm__cuda_d2d(ctx, num->d_solve, B, (size_t)(sym->n * nrhs) * sizeof(double)));
        else
            SBM__CU(ctx, cudaMemcpy2DAsync(num->d_solve, (size_t)sym->n * sizeof(double), B,
                                           (size_t)ldb * sizeof(double),
                                           (size_t)sym->n * sizeof(double), (size_t)nrhs,
                                           cudaMemcpyDefault, s),
                    "cudaMemcpy2DAsync (the right-hand sides into the solve graph's buffer)");
        SBM__CK(sbm__cuda_graph_run(ctx, &g->graph, sbm__chol_solve_levels, &a));
    } else {
        SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A,
                                    (size_t)(num->w_total * nrhs) * sizeof(double),
                                    (void **)&a.W));
        SBM__CK(sbm__chol_solve_levels(ctx, s, &a));
    }
    sbm__chol_launch_scatter(num->dev, nrhs, a.W, X, ldx, s);
    SBM__LAUNCHED(ctx, "scatter of the solution");
done:
    return st;
}
