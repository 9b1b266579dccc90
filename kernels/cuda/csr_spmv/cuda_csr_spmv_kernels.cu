/* SPDX-License-Identifier: BSD-3-Clause */
/* Instantiations and launches of the scalar CSR SpMV kernels: the compiled vector and merge
 * configurations (SBM__CSR_MERGE_CONFIGS), COO, ELL and DIA, the scaling and fix-up passes. */
#include "cuda_csr_spmv_kernels.cuh"

#include <limits.h>

/* ---------------------------------------------------------------------------------------- */
/* CSR kernels                                                                              */
/* ---------------------------------------------------------------------------------------- */

/* y = alpha*0 + beta*y: a matrix without entries; with alpha = 0 the first pass of COO, which
 * then adds alpha*A*x. */
__global__ void sbm__k_scale_y(int64_t m, double alpha, double beta, double *__restrict__ y)
{
    SBM__GRID_STRIDE(i, m) sbm__yset(y, i, alpha, 0.0, beta);
}

__global__ void __launch_bounds__(256)
    sbm__k_csr_scalar(int64_t m, double alpha, const int64_t *__restrict__ rowptr,
                      const int32_t *__restrict__ colind, const double *__restrict__ val,
                      const double *__restrict__ x, double beta, double *__restrict__ y)
{
    SBM__GRID_STRIDE(i, m)
    {
        const int64_t p1 = __ldg(rowptr + i + 1);
        double s = 0.0;
        for (int64_t p = __ldg(rowptr + i); p < p1; p++) s += __ldg(val + p) * __ldg(x + __ldg(colind + p));
        sbm__yset(y, i, alpha, s, beta);
    }
}

/* Merge-path coordinates of every tile start (and the end): the row and entry index where
 * diagonal t*tile_items of the merge of the row ends (rowptr[1..m]) and the entry indices
 * (0..nnz-1) crosses the path (Merrill & Garland, Algorithm 2). A row end sorts before the
 * entry at the same offset. */
__global__ void sbm__k_merge_search(int64_t ntiles, int64_t m, int64_t nnz, int tile_items,
                                    const int64_t *__restrict__ rowptr, int64_t *__restrict__ coord)
{
    SBM__GRID_STRIDE(t, ntiles + 1)
    {
        const int64_t total = m + nnz;
        const int64_t d = t * (int64_t)tile_items < total ? t * (int64_t)tile_items : total;
        int64_t lo = d - nnz > 0 ? d - nnz : 0, hi = d < m ? d : m;
        while (lo < hi) {
            const int64_t mid = (lo + hi) >> 1;
            if (__ldg(rowptr + mid + 1) <= d - mid - 1) lo = mid + 1;
            else hi = mid;
        }
        coord[2 * t] = lo;
        coord[2 * t + 1] = d - lo;
    }
}

/* y[r] += alpha * (carry-outs of row r, in tile order), one thread per run of equal rows. */
__global__ void sbm__k_carry_fixup(int64_t ntiles, int64_t m, const int64_t *__restrict__ crow,
                                   const double *__restrict__ cval, double alpha,
                                   double *__restrict__ y)
{
    SBM__GRID_STRIDE(t, ntiles)
    {
        const int64_t r = crow[t];
        if (r >= m || (t > 0 && crow[t - 1] == r)) continue;
        double s = 0.0;
        for (int64_t u = t; u < ntiles && crow[u] == r; u++) s += cval[u];
        if (s != 0.0) y[r] += alpha * s;
    }
}

/* ELL, column-major with leading dimension ld; a row's padding (column -1) is at its end. */
__global__ void __launch_bounds__(256)
    sbm__k_ell(int64_t m, int64_t K, int64_t ld, const int32_t *__restrict__ col,
               const double *__restrict__ val, const double *__restrict__ x, double alpha,
               double beta, double *__restrict__ y)
{
    SBM__GRID_STRIDE(i, m)
    {
        double s = 0.0;
        for (int64_t k = 0; k < K; k += 4) {
            int32_t c[4];
            double v[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const bool in = k + u < K;
                c[u] = in ? __ldg(col + (k + u) * ld + i) : -1;
                v[u] = in ? __ldg(val + (k + u) * ld + i) : 0.0;
            }
#pragma unroll
            for (int u = 0; u < 4; u++)
                if (c[u] >= 0) s += v[u] * __ldg(x + c[u]);
            if (c[3] < 0) break;
        }
        sbm__yset(y, i, alpha, s, beta);
    }
}

/* DIA: diagonal d (offset off[d] = column - row, increasing) stored column-major, data[d*ld+i]
 * for row i. x is loaded for every slot inside the matrix (independent of the value, so the
 * loads of all diagonals are in flight together); a slot holding 0 adds nothing. */
__global__ void __launch_bounds__(256)
    sbm__k_dia(int64_t m, int64_t n, int64_t nd, int64_t ld, const int64_t *__restrict__ off,
               const double *__restrict__ data, const double *__restrict__ x, double alpha,
               double beta, double *__restrict__ y)
{
    SBM__GRID_STRIDE(i, m)
    {
        double s = 0.0;
#pragma unroll 4
        for (int64_t d = 0; d < nd; d++) {
            const int64_t j = i + __ldg(off + d);
            if (j >= 0 && j < n) {
                const double v = __ldg(data + d * ld + i), xj = __ldg(x + j);
                if (v != 0.0) s += v * xj;
            }
        }
        sbm__yset(y, i, alpha, s, beta);
    }
}

/* Merge-path tile coordinates (2 per tile start and the end) into *coord, allocated with the
 * context's allocator. */
sbm_status sbm__csr_merge_split(sbm_ctx *ctx, int64_t m, int64_t nnz, const int64_t *rowptr,
                                   int tile_items, int64_t **coord, int64_t *ntiles)
{
    sbm_status st = SBM_SUCCESS;
    const int64_t nt = (m + nnz + tile_items - 1) / tile_items;
    int64_t *c = (int64_t *)sbm__alloc(ctx, (size_t)(nt + 1) * 2 * sizeof(int64_t), "the merge-path split");
    *coord = NULL;
    *ntiles = 0;
    if (!c) return SBM_ERR_OUT_OF_MEMORY;
    sbm__k_merge_search<<<sbm__grid(nt + 1, 256), 256, 0, sbm__cuda_stream(ctx)>>>(nt, m, nnz, tile_items,
                                                                                rowptr, c);
    SBM__LAUNCHED(ctx, "the merge-path search kernel");
    *coord = c;
    *ntiles = nt;
    c = NULL;
done:
    sbm__free(ctx, c);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Launchers                                                                                */
/* ---------------------------------------------------------------------------------------- */

/* Carry-out arrays of ntiles tiles from the pool. */
static sbm_status sbm__carries(sbm_ctx *ctx, int64_t ntiles, int64_t **crow, double **cval)
{
    sbm__carve cv = {0};
    const size_t o_row = sbm__carve_add(&cv, (size_t)ntiles * sizeof(int64_t));
    const size_t o_val = sbm__carve_add(&cv, (size_t)ntiles * sizeof(double));
    char *base = NULL;
    SBM__TRY(sbm__cuda_workspace(ctx, SBM__WS_OP_A, cv.total, (void **)&base));
    *crow = (int64_t *)(base + o_row);
    *cval = (double *)(base + o_val);
    return SBM_SUCCESS;
}

/* At most this many CTAs for the tile loops (grid-stride beyond). */
static unsigned sbm__tile_grid(int64_t ntiles)
{
    return (unsigned)(ntiles < (int64_t)INT_MAX ? (ntiles > 0 ? ntiles : 1) : INT_MAX);
}

sbm_status sbm__csr_launch(sbm_ctx *ctx, sbm__csr_kernel k, int64_t m, const int64_t *rowptr,
                                  const int32_t *colind, const double *values, const int64_t *tiles,
                                  int64_t ntiles, double alpha, const double *x, double beta, double *y)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    if (k.kind == SBM__CSR_SCALAR) {
        sbm__k_csr_scalar<<<sbm__grid(m, 256), 256, 0, s>>>(m, alpha, rowptr, colind, values, x, beta, y);
        SBM__LAUNCHED(ctx, "the CSR scalar SpMV kernel");
    } else if (k.kind == SBM__CSR_VECTOR) {
        const int64_t threads = (m + k.r - 1) / k.r * k.w;
#define SBM_X_(W, R)                                                                             \
    if (k.w == (W) && k.r == (R))                                                                \
        sbm__k_csr_vector<W, R><<<sbm__grid(threads, 256), 256, 0, s>>>(m, alpha, rowptr, colind, \
                                                                       values, x, beta, y);
#define SBM_W_(W) SBM_X_(W, 1) SBM_X_(W, 2) SBM_X_(W, 4)
        SBM_W_(2) SBM_W_(4) SBM_W_(8) SBM_W_(16) SBM_W_(32)
#undef SBM_W_
#undef SBM_X_
        SBM__LAUNCHED(ctx, "the CSR vector SpMV kernel");
    } else {
        int64_t *crow = NULL;
        double *cval = NULL;
        const int sms = sbm__cuda_st(ctx)->prop.multiProcessorCount;
        SBM__CK(sbm__carries(ctx, ntiles, &crow, &cval));
#define SBM_X_(I, NT, IPT, CS, PF)                                                               \
    if (k.cfg == (I)) {                                                                          \
        unsigned grid = sbm__tile_grid(ntiles);                                                  \
        if (PF) {                                                                                \
            int per_sm = 0;                                                                      \
            SBM__CU(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(                          \
                             &per_sm, sbm__k_csr_merge_pf<NT, IPT, CS>, NT, 0),                  \
                    "the merge-path occupancy query");                                           \
            const int64_t resident = (int64_t)(per_sm > 0 ? per_sm : 1) * sms;                   \
            if ((int64_t)grid > resident) grid = (unsigned)resident;                             \
            sbm__k_csr_merge_pf<NT, IPT, CS><<<grid, NT, 0, s>>>(ntiles, m, tiles, rowptr,       \
                                                                 colind, values, x, alpha, beta, \
                                                                 y, crow, cval);                 \
        } else {                                                                                 \
            sbm__k_csr_merge<NT, IPT, CS><<<grid, NT, 0, s>>>(ntiles, m, tiles, rowptr, colind,  \
                                                              values, x, alpha, beta, y, crow,   \
                                                              cval);                             \
        }                                                                                        \
    }
        SBM__MERGE_CONFIGS(SBM_X_)
#undef SBM_X_
        SBM__LAUNCHED(ctx, "the CSR merge-path SpMV kernel");
        sbm__k_carry_fixup<<<sbm__grid(ntiles, 256), 256, 0, s>>>(ntiles, m, crow, cval, alpha, y);
        SBM__LAUNCHED(ctx, "the merge-path carry fix-up kernel");
    }
done:
    return st;
}

/* y += alpha * (COO entries) after y was set (scaled by beta, or by the ELL part of HYB). */
sbm_status sbm__csr_launch_coo_add(sbm_ctx *ctx, int64_t m, int64_t nnz, const int32_t *row,
                                      const int32_t *col, const double *val, double alpha,
                                      const double *x, double *y)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    const int64_t tile = (int64_t)SBM__COO_NT * SBM__COO_IPT;
    const int64_t ntiles = (nnz + tile - 1) / tile;
    int64_t *crow = NULL;
    double *cval = NULL;
    if (nnz == 0) return SBM_SUCCESS;
    SBM__CK(sbm__carries(ctx, ntiles, &crow, &cval));
    sbm__k_coo<SBM__COO_NT, SBM__COO_IPT><<<sbm__tile_grid(ntiles), SBM__COO_NT, 0, s>>>(
        nnz, m, row, col, val, x, alpha, y, crow, cval);
    SBM__LAUNCHED(ctx, "the COO SpMV kernel");
    sbm__k_carry_fixup<<<sbm__grid(ntiles, 256), 256, 0, s>>>(ntiles, m, crow, cval, alpha, y);
    SBM__LAUNCHED(ctx, "the COO carry fix-up kernel");
done:
    return st;
}

sbm_status sbm__csr_launch_scale_y(sbm_ctx *ctx, int64_t m, double alpha, double beta, double *y)
{
    sbm_status st = SBM_SUCCESS;
    sbm__k_scale_y<<<sbm__grid(m, 256), 256, 0, sbm__cuda_stream(ctx)>>>(m, alpha, beta, y);
    SBM__LAUNCHED(ctx, "the SpMV scaling kernel");
done:
    return st;
}

sbm_status sbm__csr_launch_padded(sbm_ctx *ctx, const sbm__cuda_spmv_plan *P, double alpha,
                                  const double *x, double beta, double *y)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    const int64_t m = P->b.m;
    if (P->b.format == SBM_SPMV_DIA) {
        sbm__k_dia<<<sbm__grid(m, 256), 256, 0, s>>>(m, P->b.n, P->ndiag, P->dia_ld, P->dia_off,
                                                     P->dia_val, x, alpha, beta, y);
        SBM__LAUNCHED(ctx, "the DIA SpMV kernel");
    } else {
        sbm__k_ell<<<sbm__grid(m, 256), 256, 0, s>>>(m, P->ell_k, P->ell_ld, P->ell_col, P->ell_val,
                                                     x, alpha, beta, y);
        SBM__LAUNCHED(ctx, "the ELL SpMV kernel");
    }
done:
    return st;
}
