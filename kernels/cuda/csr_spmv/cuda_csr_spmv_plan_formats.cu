/* SPDX-License-Identifier: BSD-3-Clause */
/* Statistics and format conversions of the scalar CSR SpMV: row statistics, HYB width, DIA
 * diagonals, and the arrays of a plan in its format (made, or refilled with new values). */
#include "cuda_csr_spmv.cuh"

#include <inttypes.h>

/* ---------------------------------------------------------------------------------------- */
/* Statistics and conversions                                                               */
/* ---------------------------------------------------------------------------------------- */

/* out[0] = longest row, out[1] = sum over aligned groups of 32 rows of 32 x their longest row.
 * Grid-stride over m rounded up to 32 with a stride that is a multiple of 32, so every warp
 * covers one whole group per step. */
__global__ void __launch_bounds__(256)
    sbm__k_row_stats(int64_t m, const int64_t *__restrict__ rowptr, unsigned long long *out)
{
    const int64_t mpad = (m + 31) & ~(int64_t)31;
    unsigned long long mx = 0, slots = 0;
    SBM__GRID_STRIDE(i, mpad)
    {
        unsigned long long len = i < m ? (unsigned long long)(__ldg(rowptr + i + 1) - __ldg(rowptr + i)) : 0ull;
        for (int o = 16; o > 0; o >>= 1) {
            const unsigned long long other = __shfl_xor_sync(0xffffffffu, len, o);
            len = other > len ? other : len;
        }
        mx = len > mx ? len : mx;
        /* the rows that exist in this warp (all 32 but in the last, partial warp) */
        slots += (unsigned long long)__popc(__ballot_sync(0xffffffffu, i < m)) * len;
    }
    /* every lane holds the same warp totals */
    if ((threadIdx.x & 31) == 0) {
        atomicMax(out, mx);
        atomicAdd(out + 1, slots);
    }
}

/* Thresholds for one pass of the HYB width search. */
typedef struct sbm__thresholds {
    int64_t th[32]; /* increasing */
    int n;
} sbm__thresholds;

/* counts[q] += rows whose length is >= th[q] but < th[q+1] (the last: >= th[n-1]). */
__global__ void __launch_bounds__(256)
    sbm__k_count_lengths(int64_t m, const int64_t *__restrict__ rowptr, sbm__thresholds t,
                         unsigned long long *counts)
{
    __shared__ unsigned long long bins[32];
    if (threadIdx.x < 32) bins[threadIdx.x] = 0;
    __syncthreads();
    SBM__GRID_STRIDE(i, m)
    {
        const int64_t len = __ldg(rowptr + i + 1) - __ldg(rowptr + i);
        int b = 0;
        while (b < t.n && t.th[b] <= len) b++;
        if (b > 0) atomicAdd(&bins[b - 1], 1ull);
    }
    __syncthreads();
    if (threadIdx.x < t.n && bins[threadIdx.x]) atomicAdd(counts + threadIdx.x, bins[threadIdx.x]);
}

/* COO row index of every entry (one thread per row). */
__global__ void sbm__k_coo_rows(int64_t m, const int64_t *__restrict__ rowptr, int32_t *__restrict__ row)
{
    SBM__GRID_STRIDE(i, m)
    {
        const int64_t p1 = rowptr[i + 1];
        for (int64_t p = rowptr[i]; p < p1; p++) row[p] = (int32_t)i;
    }
}

/* Entries beyond the ELL width K of each row (HYB's COO part), for the offsets scan. */
__global__ void sbm__k_hyb_counts(int64_t m, int64_t K, const int64_t *__restrict__ rowptr,
                                  int64_t *__restrict__ cnt)
{
    SBM__GRID_STRIDE(i, m)
    {
        const int64_t len = rowptr[i + 1] - rowptr[i];
        cnt[i] = len > K ? len - K : 0;
    }
}

/* The first K entries of each row into ELL slots (k*ld + i), the rest (coo_off != NULL) into
 * COO from coo_off[i] on. Index arrays may be NULL (values-only update). Bounds are checked
 * against the plan's sizes, so a matrix whose pattern differs cannot write outside them. */
__global__ void sbm__k_ell_fill(int64_t m, int64_t K, int64_t ld, const int64_t *__restrict__ rowptr,
                                const int32_t *__restrict__ colind, const double *__restrict__ values,
                                int32_t *__restrict__ ell_col, double *__restrict__ ell_val,
                                const int64_t *__restrict__ coo_off, int64_t coo_nnz,
                                int32_t *__restrict__ coo_row, int32_t *__restrict__ coo_col,
                                double *__restrict__ coo_val)
{
    SBM__GRID_STRIDE(i, m)
    {
        const int64_t p0 = rowptr[i], p1 = rowptr[i + 1];
        const int64_t e = p1 - p0 < K ? p1 : p0 + K;
        for (int64_t p = p0; p < e; p++) {
            if (ell_col) ell_col[(p - p0) * ld + i] = colind[p];
            ell_val[(p - p0) * ld + i] = values[p];
        }
        if (!coo_off) continue;
        int64_t q = coo_off[i];
        for (int64_t p = e; p < p1 && q < coo_nnz; p++, q++) {
            if (coo_row) {
                coo_row[q] = (int32_t)i;
                coo_col[q] = colind[p];
            }
            coo_val[q] = values[p];
        }
    }
}

/* flag[j - i + m - 1] = 1 for every entry (i, j) (plain stores of the same value). */
__global__ void sbm__k_dia_flags(int64_t m, const int64_t *__restrict__ rowptr,
                                 const int32_t *__restrict__ colind, int64_t *__restrict__ flag)
{
    SBM__GRID_STRIDE(i, m)
    {
        const int64_t p1 = rowptr[i + 1];
        for (int64_t p = rowptr[i]; p < p1; p++) flag[(int64_t)colind[p] - i + m - 1] = 1;
    }
}

/* Offsets of the occupied diagonals from the exclusive scan idx of the flags (span + 1 entries). */
__global__ void sbm__k_dia_offsets(int64_t span, int64_t m, const int64_t *__restrict__ idx,
                                   int64_t *__restrict__ off)
{
    SBM__GRID_STRIDE(s, span)
    {
        if (idx[s + 1] != idx[s]) off[idx[s]] = s - (m - 1);
    }
}

/* Entry (i, j) into slot d*ld + i of its diagonal d (binary search of the sorted offsets). */
__global__ void sbm__k_dia_fill(int64_t m, int64_t nd, int64_t ld, const int64_t *__restrict__ off,
                                const int64_t *__restrict__ rowptr, const int32_t *__restrict__ colind,
                                const double *__restrict__ values, double *__restrict__ data)
{
    SBM__GRID_STRIDE(i, m)
    {
        const int64_t p1 = rowptr[i + 1];
        for (int64_t p = rowptr[i]; p < p1; p++) {
            const int64_t o = (int64_t)colind[p] - i;
            const int64_t d = sbm__lower_bound(off, 0, nd, o);
            if (d < nd && off[d] == o) data[d * ld + i] = values[p];
        }
    }
}

/* Longest row and warp slots of a pattern (one pass over rowptr and a download). */
sbm_status sbm__csr_row_stats_pass(sbm_ctx *ctx, int64_t m, const int64_t *rowptr, int64_t *max_row,
                                 int64_t *warp_slots)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    unsigned long long *d = NULL, h[2] = {0, 0};
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_B, sizeof h, (void **)&d));
    SBM__CU(ctx, cudaMemsetAsync(d, 0, sizeof h, s), "clearing the row statistics");
    sbm__k_row_stats<<<sbm__grid((m + 31) & ~(int64_t)31, 256), 256, 0, s>>>(m, rowptr, d);
    SBM__LAUNCHED(ctx, "the CSR row statistics kernel");
    SBM__CK(sbm__cuda_d2h(ctx, h, d, sizeof h));
    *max_row = (int64_t)h[0];
    *warp_slots = (int64_t)h[1];
done:
    return st;
}

/* count elements of size bytes each in device memory, or an overflow / out-of-memory status. */
static sbm_status sbm__plan_alloc(sbm_ctx *ctx, int64_t count, size_t size, const char *what, void **p)
{
    int ok = 1;
    *p = NULL;
    const size_t bytes = sbm__mul_size(ctx, (size_t)(count > 0 ? count : 0), size, what, &ok);
    if (!ok) return SBM_ERR_OVERFLOW;
    *p = sbm__alloc(ctx, bytes, what);
    return *p ? SBM_SUCCESS : SBM_ERR_OUT_OF_MEMORY;
}

/* Rows rounded up to 32, the leading dimension of the column-major ELL and DIA arrays. */
static int64_t sbm__pad32(int64_t m) { return (m + 31) & ~(int64_t)31; }

static sbm_status sbm__check_rows32(sbm_ctx *ctx, const sbm_csr *A, sbm_spmv_format f)
{
    if (A->m > INT32_MAX)
        return sbm__error(ctx, SBM_ERR_OVERFLOW,
                          "argument format: %s stores 32-bit row indices; A has %" PRId64 " rows",
                          sbm_spmv_format_name(f), A->m);
    return SBM_SUCCESS;
}

/* HYB's ELL width K (section 3.5): the largest K such that at least a third of the rows have
 * K or more entries, by a search over thresholds (32 per pass over the row lengths). */
static sbm_status sbm__hyb_width(sbm_ctx *ctx, const sbm_csr *A, int64_t max_row, int64_t *K)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    unsigned long long *d = NULL, h[32];
    int64_t lo = 0, hi = max_row + 1; /* 3*count(len >= lo) >= m holds; at hi it does not */
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_B, sizeof h, (void **)&d));
    while (hi - lo > 1) {
        sbm__thresholds t;
        const int64_t gap = hi - lo - 1;
        t.n = gap < 32 ? (int)gap : 32;
        for (int q = 0; q < t.n; q++) t.th[q] = lo + 1 + (int64_t)q * gap / t.n;
        SBM__CU(ctx, cudaMemsetAsync(d, 0, sizeof h, s), "clearing the row-length counts");
        sbm__k_count_lengths<<<sbm__grid(A->m, 256), 256, 0, s>>>(A->m, A->rowptr, t, d);
        SBM__LAUNCHED(ctx, "the row-length count kernel");
        SBM__CK(sbm__cuda_d2h(ctx, h, d, sizeof h));
        unsigned long long ge = 0;
        int64_t new_lo = lo, new_hi = hi;
        for (int q = t.n - 1; q >= 0; q--) {
            ge += h[q]; /* rows with length >= th[q] */
            if (3.0 * (double)ge >= (double)A->m) {
                new_lo = t.th[q];
                break;
            }
            new_hi = t.th[q];
        }
        lo = new_lo;
        hi = new_hi;
    }
    *K = lo;
done:
    return st;
}

/* Occupied diagonals of A: their number, and in *idx_out (pool slot OP_A, span + 1 entries) the
 * exclusive scan of the flags of the diagonals j - i + m - 1 (the index of each occupied one). */
sbm_status sbm__csr_dia_scan(sbm_ctx *ctx, const sbm_csr *A, int64_t *ndiag, int64_t **idx_out)
{
    sbm_status st = SBM_SUCCESS;
    const int64_t span = A->m + A->n - 1;
    int64_t *idx = NULL;
    *ndiag = 0;
    *idx_out = NULL;
    if (A->nnz == 0) return SBM_SUCCESS;
    int ok = 1;
    const size_t bytes = sbm__mul_size(ctx, (size_t)span + 1, sizeof(int64_t), "the diagonal flags", &ok);
    if (!ok) return SBM_ERR_OVERFLOW;
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, bytes, (void **)&idx));
    SBM__CK(sbm__cuda_zero(ctx, idx, bytes));
    sbm__k_dia_flags<<<sbm__grid(A->m, 256), 256, 0, sbm__cuda_stream(ctx)>>>(A->m, A->rowptr, A->colind, idx);
    SBM__LAUNCHED(ctx, "the diagonal flag kernel");
    SBM__CK(sbm__cuda_scan_i64(ctx, idx, idx, span + 1));
    SBM__CK(sbm__cuda_d2h(ctx, ndiag, idx + span, sizeof(int64_t)));
    *idx_out = idx;
done:
    return st;
}

/* HYB's COO offsets (pool slot OP_A, m + 1, the last one the total): the entries beyond the ELL
 * width K of each row, scanned. */
static sbm_status sbm__hyb_offsets(sbm_ctx *ctx, int64_t m, int64_t K, const int64_t *rowptr,
                                   int64_t **off_out)
{
    sbm_status st = SBM_SUCCESS;
    int64_t *off = NULL;
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, (size_t)(m + 1) * sizeof(int64_t), (void **)&off));
    sbm__k_hyb_counts<<<sbm__grid(m, 256), 256, 0, sbm__cuda_stream(ctx)>>>(m, K, rowptr, off);
    SBM__LAUNCHED(ctx, "the HYB count kernel");
    SBM__CK(sbm__cuda_zero(ctx, off + m, sizeof(int64_t)));
    SBM__CK(sbm__cuda_scan_i64(ctx, off, off, m + 1));
    *off_out = off;
done:
    return st;
}

/* Fill P's arrays for format f from A. */
sbm_status sbm__csr_plan_build(sbm_ctx *ctx, sbm__cuda_spmv_plan *P, const sbm_csr *A,
                                  const sbm__cuda_scache *e)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    const int64_t m = A->m, nnz = A->nnz;
    const sbm_spmv_format f = P->b.format;
    if (f == SBM_SPMV_CSR_SCALAR || f == SBM_SPMV_CSR_VECTOR || f == SBM_SPMV_CSR_MERGE) {
        SBM__CK(sbm__plan_alloc(ctx, m + 1, sizeof(int64_t), "the plan's row pointers", (void **)&P->rowptr));
        SBM__CK(sbm__plan_alloc(ctx, nnz, sizeof(int32_t), "the plan's column indices", (void **)&P->colind));
        SBM__CK(sbm__plan_alloc(ctx, nnz, sizeof(double), "the plan's values", (void **)&P->values));
        SBM__CK(sbm__cuda_d2d(ctx, P->rowptr, A->rowptr, (size_t)(m + 1) * sizeof(int64_t)));
        SBM__CK(sbm__cuda_d2d(ctx, P->colind, A->colind, (size_t)nnz * sizeof(int32_t)));
        SBM__CK(sbm__cuda_d2d(ctx, P->values, A->values, (size_t)nnz * sizeof(double)));
        if (f == SBM_SPMV_CSR_MERGE)
            SBM__CK(sbm__csr_merge_split(ctx, m, nnz, P->rowptr, sbm__csr_merge_items(P->k.cfg), &P->tiles, &P->ntiles));
    } else if (f == SBM_SPMV_COO) {
        SBM__CK(sbm__check_rows32(ctx, A, f));
        P->coo_nnz = nnz;
        SBM__CK(sbm__plan_alloc(ctx, nnz, sizeof(int32_t), "the plan's COO rows", (void **)&P->coo_row));
        SBM__CK(sbm__plan_alloc(ctx, nnz, sizeof(int32_t), "the plan's COO columns", (void **)&P->coo_col));
        SBM__CK(sbm__plan_alloc(ctx, nnz, sizeof(double), "the plan's COO values", (void **)&P->coo_val));
        sbm__k_coo_rows<<<sbm__grid(m, 256), 256, 0, s>>>(m, A->rowptr, P->coo_row);
        SBM__LAUNCHED(ctx, "the COO row kernel");
        SBM__CK(sbm__cuda_d2d(ctx, P->coo_col, A->colind, (size_t)nnz * sizeof(int32_t)));
        SBM__CK(sbm__cuda_d2d(ctx, P->coo_val, A->values, (size_t)nnz * sizeof(double)));
    } else if (f == SBM_SPMV_ELL || f == SBM_SPMV_HYB) {
        int64_t *off = NULL;
        if (f == SBM_SPMV_ELL) {
            SBM__CK(sbm__spmv_check_fill(ctx, f, m, nnz, e->max_row));
            P->ell_k = e->max_row;
        } else {
            SBM__CK(sbm__check_rows32(ctx, A, f));
            SBM__CK(sbm__hyb_width(ctx, A, e->max_row, &P->ell_k));
        }
        P->ell_ld = sbm__pad32(m);
        int ok = 1;
        const int64_t slots = (int64_t)sbm__mul_size(ctx, (size_t)P->ell_ld, (size_t)P->ell_k, "the ELL slots", &ok);
        if (!ok) {
            st = SBM_ERR_OVERFLOW;
            goto done;
        }
        SBM__CK(sbm__plan_alloc(ctx, slots, sizeof(int32_t), "the plan's ELL columns", (void **)&P->ell_col));
        SBM__CK(sbm__plan_alloc(ctx, slots, sizeof(double), "the plan's ELL values", (void **)&P->ell_val));
        SBM__CU(ctx, cudaMemsetAsync(P->ell_col, 0xFF, (size_t)slots * sizeof(int32_t), s), "clearing the ELL columns");
        SBM__CK(sbm__cuda_zero(ctx, P->ell_val, (size_t)slots * sizeof(double)));
        if (f == SBM_SPMV_HYB) {
            /* entries beyond K per row, scanned into COO offsets (m + 1, the last one the total) */
            SBM__CK(sbm__hyb_offsets(ctx, m, P->ell_k, A->rowptr, &off));
            SBM__CK(sbm__cuda_d2h(ctx, &P->coo_nnz, off + m, sizeof(int64_t)));
            SBM__CK(sbm__plan_alloc(ctx, P->coo_nnz, sizeof(int32_t), "the plan's COO rows", (void **)&P->coo_row));
            SBM__CK(sbm__plan_alloc(ctx, P->coo_nnz, sizeof(int32_t), "the plan's COO columns", (void **)&P->coo_col));
            SBM__CK(sbm__plan_alloc(ctx, P->coo_nnz, sizeof(double), "the plan's COO values", (void **)&P->coo_val));
        }
        sbm__k_ell_fill<<<sbm__grid(m, 256), 256, 0, s>>>(m, P->ell_k, P->ell_ld, A->rowptr, A->colind, A->values,
                                                          P->ell_col, P->ell_val, off, P->coo_nnz, P->coo_row,
                                                          P->coo_col, P->coo_val);
        SBM__LAUNCHED(ctx, "the ELL fill kernel");
    } else { /* DIA */
        int64_t *idx = NULL;
        SBM__CK(sbm__csr_dia_scan(ctx, A, &P->ndiag, &idx));
        SBM__CK(sbm__spmv_check_fill(ctx, f, m, nnz, P->ndiag));
        P->dia_ld = sbm__pad32(m);
        int ok = 1;
        const int64_t slots = (int64_t)sbm__mul_size(ctx, (size_t)P->dia_ld, (size_t)P->ndiag, "the DIA slots", &ok);
        if (!ok) {
            st = SBM_ERR_OVERFLOW;
            goto done;
        }
        SBM__CK(sbm__plan_alloc(ctx, P->ndiag, sizeof(int64_t), "the plan's diagonal offsets", (void **)&P->dia_off));
        SBM__CK(sbm__plan_alloc(ctx, slots, sizeof(double), "the plan's diagonals", (void **)&P->dia_val));
        SBM__CK(sbm__cuda_zero(ctx, P->dia_val, (size_t)slots * sizeof(double)));
        if (P->ndiag > 0) {
            const int64_t span = m + A->n - 1;
            sbm__k_dia_offsets<<<sbm__grid(span, 256), 256, 0, s>>>(span, m, idx, P->dia_off);
            SBM__LAUNCHED(ctx, "the diagonal offset kernel");
            sbm__k_dia_fill<<<sbm__grid(m, 256), 256, 0, s>>>(m, P->ndiag, P->dia_ld, P->dia_off, A->rowptr,
                                                              A->colind, A->values, P->dia_val);
            SBM__LAUNCHED(ctx, "the DIA fill kernel");
        }
    }
    /* a plan is made once: wait, so that a failing conversion kernel fails this call */
    SBM__CK(sbm__cuda_sync(ctx));
done:
    return st;
}

/* Values only: the CSR and COO copies, the ELL slots (and HYB's COO part, whose offsets are
 * recounted), the DIA slots; the arrays keep their pattern. */
sbm_status sbm__csr_plan_refill(sbm_ctx *ctx, sbm__cuda_spmv_plan *P, const sbm_csr *A)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    const int64_t m = A->m, nnz = A->nnz;
    const size_t vbytes = (size_t)nnz * sizeof(double);
    int64_t *off = NULL;
    switch (P->b.format) {
    case SBM_SPMV_CSR_SCALAR:
    case SBM_SPMV_CSR_VECTOR:
    case SBM_SPMV_CSR_MERGE:
        SBM__CK(sbm__cuda_d2d(ctx, P->values, A->values, vbytes));
        break;
    case SBM_SPMV_COO:
        SBM__CK(sbm__cuda_d2d(ctx, P->coo_val, A->values, vbytes));
        break;
    case SBM_SPMV_HYB:
        SBM__CK(sbm__hyb_offsets(ctx, m, P->ell_k, A->rowptr, &off));
        /* the ELL part and the COO values, as for ELL */
        [[fallthrough]];
    case SBM_SPMV_ELL:
        sbm__k_ell_fill<<<sbm__grid(m, 256), 256, 0, s>>>(m, P->ell_k, P->ell_ld, A->rowptr, NULL, A->values,
                                                          NULL, P->ell_val, off, P->coo_nnz, NULL, NULL,
                                                          P->coo_val);
        SBM__LAUNCHED(ctx, "the ELL fill kernel");
        break;
    case SBM_SPMV_DIA:
        sbm__k_dia_fill<<<sbm__grid(m, 256), 256, 0, s>>>(m, P->ndiag, P->dia_ld, P->dia_off, A->rowptr, A->colind,
                                                          A->values, P->dia_val);
        SBM__LAUNCHED(ctx, "the DIA fill kernel");
        break;
    default:
        break;
    }
done:
    return st;
}
