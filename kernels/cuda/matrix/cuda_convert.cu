/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA backend: CBC <-> CSR conversions and the sparse add. Semantics follow the CPU backend
 * (kernels/cpu/matrix/cpu_matrix.c) exactly: sorted output, structural zeros kept; integer-only index
 * computations, so results are deterministic. */
#include "cuda_internal.cuh"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* CBC -> scalar CSR                                                                        */
/* ---------------------------------------------------------------------------------------- */

/* Scalar row i*r+ii starts after the tptr[i] blocks of earlier block rows (r*c entries each)
 * and ii rows of this block row (cnt_i*c entries each). */
__global__ void sbm__k_cbc_csr_rowptr(int64_t nbr, int r, int c, const int64_t *tptr, int64_t *rowptr)
{
    const int64_t m = nbr * r;
    SBM__GRID_STRIDE(row, m + 1)
    {
        if (row == m) {
            rowptr[row] = tptr[nbr] * r * c;
        } else {
            int64_t i = row / r, ii = row - i * r;
            int64_t cnt = tptr[i + 1] - tptr[i];
            rowptr[row] = tptr[i] * r * c + ii * cnt * c;
        }
    }
}

__global__ void sbm__k_cbc_csr_fill(int64_t nnzb, int r, int c, const int64_t *tptr,
                                    const int32_t *tind, const int64_t *perm, const int32_t *rowind,
                                    const double *val, int32_t *colind, double *out)
{
    const int64_t rc = (int64_t)r * c;
    SBM__GRID_STRIDE(idx, nnzb * rc)
    {
        int64_t q = idx / rc; /* block in row order */
        int o = (int)(idx - q * rc);
        int ii = o / c, jj = o % c;
        int64_t p = perm[q];
        int64_t i = rowind[p];
        int64_t t = q - tptr[i];
        int64_t cnt = tptr[i + 1] - tptr[i];
        int64_t dst = tptr[i] * rc + ii * cnt * c + t * c + jj;
        colind[dst] = (int32_t)((int64_t)tind[q] * c + jj);
        out[dst] = val[p * rc + ii + (int64_t)jj * r];
    }
}

sbm_status sbm__cuda_cbc_to_csr(sbm_ctx *ctx, const sbm_cbc *A, sbm_csr **B)
{
    sbm_status st = SBM_SUCCESS;
    sbm_csr *S = NULL;
    sbm__carve cv = {0};
    size_t o_perm = sbm__carve_add(&cv, (size_t)A->nnzb * sizeof(int64_t));
    size_t o_ptr = sbm__carve_add(&cv, (size_t)(A->nbr + 1) * sizeof(int64_t));
    size_t o_ind = sbm__carve_add(&cv, (size_t)A->nnzb * sizeof(int32_t));
    char *base = NULL;
    int64_t *perm, *tptr;
    int32_t *tind;
    int64_t m = A->nbr * A->r, n = A->nbc * A->c, rc = (int64_t)A->r * A->c;
    cudaStream_t s = sbm__cuda_stream(ctx);
    *B = NULL;
    SBM__CK(sbm__cuda_enter(ctx));
    if (A->nnzb > INT64_MAX / rc) {
        st = sbm__error(ctx, SBM_ERR_OVERFLOW, "argument A: %" PRId64 " blocks of %dx%d overflow "
                        "the scalar entry count", A->nnzb, A->r, A->c);
        goto done;
    }
    SBM__CK(sbm__csr_alloc(ctx, m, n, A->nnzb * rc, &S));
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, cv.total, (void **)&base));
    perm = (int64_t *)(base + o_perm);
    tptr = (int64_t *)(base + o_ptr);
    tind = (int32_t *)(base + o_ind);
    SBM__CK(sbm__cuda_pattern_transpose(ctx, SBM__WS_PRIM, A->nbc, A->nbr, A->nnzb, A->colptr,
                                        A->rowind, tptr, tind, perm));
    sbm__k_cbc_csr_rowptr<<<sbm__grid(m + 1, 256), 256, 0, s>>>(A->nbr, A->r, A->c, tptr, S->rowptr);
    SBM__LAUNCHED(ctx, "CSR row pointers");
    if (A->nnzb > 0) {
        sbm__k_cbc_csr_fill<<<sbm__grid(A->nnzb * rc, 256), 256, 0, s>>>(
            A->nnzb, A->r, A->c, tptr, tind, perm, A->rowind, A->values, S->colind, S->values);
        SBM__LAUNCHED(ctx, "CSR entries");
    }
    *B = S;
    S = NULL;
done:
    sbm_csr_destroy(S);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Scalar CSR -> CBC                                                                        */
/* ---------------------------------------------------------------------------------------- */

/* Key of each scalar entry: its block (column-major order of blocks: block column high, block
 * row low); value: the entry index. */
__global__ void sbm__k_csr_block_keys(int64_t m, int64_t nnz, int r, int c, int rbits,
                                      const int64_t *rowptr, const int32_t *colind, uint64_t *keys,
                                      uint64_t *vals)
{
    SBM__GRID_STRIDE(p, nnz)
    {
        int64_t row = sbm__upper_bound(rowptr, 0, m + 1, p) - 1;
        uint64_t bi = (uint64_t)(row / r), bj = (uint64_t)(colind[p] / c);
        keys[p] = (bj << rbits) | bi;
        vals[p] = (uint64_t)p;
    }
}

__global__ void sbm__k_head_flags(int64_t n, const uint64_t *keys, int64_t *flags)
{
    SBM__GRID_STRIDE(e, n) { flags[e] = (e == 0 || keys[e] != keys[e - 1]) ? 1 : 0; }
}

/* After the scan, flags[e] = number of heads before e, so a head's block is flags[e] and any
 * entry's block is flags[e] + head(e) - 1. */
__global__ void sbm__k_csr_cbc_blocks(int64_t n, int rbits, const uint64_t *keys,
                                      const int64_t *scan, int32_t *rowind, uint64_t *bkeys)
{
    SBM__GRID_STRIDE(e, n)
    {
        if (e == 0 || keys[e] != keys[e - 1]) {
            int64_t b = scan[e];
            rowind[b] = (int32_t)(keys[e] & (((uint64_t)1 << rbits) - 1));
            bkeys[b] = keys[e];
        }
    }
}

__global__ void sbm__k_csr_cbc_colptr(int64_t nbc, int64_t nnzb, int rbits, const uint64_t *bkeys,
                                      int64_t *colptr)
{
    SBM__GRID_STRIDE(j, nbc + 1)
    {
        colptr[j] = j == nbc ? nnzb : sbm__lower_bound(bkeys, 0, nnzb, (uint64_t)j << rbits);
    }
}

__global__ void sbm__k_csr_cbc_values(int64_t m, int64_t n, int r, int c, const uint64_t *keys,
                                      const uint64_t *vals, const int64_t *scan,
                                      const int64_t *rowptr, const int32_t *colind,
                                      const double *src, double *dst)
{
    SBM__GRID_STRIDE(e, n)
    {
        int head = (e == 0 || keys[e] != keys[e - 1]);
        int64_t b = scan[e] + head - 1;
        int64_t p = (int64_t)vals[e];
        int64_t row = sbm__upper_bound(rowptr, 0, m + 1, p) - 1;
        int64_t col = colind[p];
        dst[b * r * c + (row % r) + (col % c) * r] = src[p];
    }
}

sbm_status sbm__cuda_csr_to_cbc(sbm_ctx *ctx, const sbm_csr *A, int r, int c, sbm_cbc **B)
{
    sbm_status st = SBM_SUCCESS;
    sbm_cbc *M = NULL;
    int64_t nbr = A->m / r, nbc = A->n / c, nnz = A->nnz, nnzb = 0, last[2] = {0, 0};
    int rbits = sbm__bits_for(nbr + 1), cbits = sbm__bits_for(nbc + 1);
    sbm__carve cv = {0};
    size_t o_kin = sbm__carve_add(&cv, (size_t)nnz * sizeof(uint64_t));
    size_t o_kout = sbm__carve_add(&cv, (size_t)nnz * sizeof(uint64_t));
    size_t o_vin = sbm__carve_add(&cv, (size_t)nnz * sizeof(uint64_t));
    size_t o_vout = sbm__carve_add(&cv, (size_t)nnz * sizeof(uint64_t));
    size_t o_scan = sbm__carve_add(&cv, (size_t)(nnz + 1) * sizeof(int64_t));
    char *base = NULL;
    uint64_t *kin, *kout, *vin, *vout, *bkeys;
    int64_t *scan;
    cudaStream_t s = sbm__cuda_stream(ctx);
    *B = NULL;
    SBM__CK(sbm__cuda_enter(ctx));
    if (rbits + cbits > 64) {
        st = sbm__error(ctx, SBM_ERR_OVERFLOW, "argument A: %" PRId64 " x %" PRId64 " blocks "
                        "do not fit a 64-bit block key", nbr, nbc);
        goto done;
    }
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, cv.total, (void **)&base));
    kin = (uint64_t *)(base + o_kin);
    kout = (uint64_t *)(base + o_kout);
    vin = (uint64_t *)(base + o_vin);
    vout = (uint64_t *)(base + o_vout);
    scan = (int64_t *)(base + o_scan);
    bkeys = kin; /* the unsorted keys are dead once sorted */
    if (nnz > 0) {
        sbm__k_csr_block_keys<<<sbm__grid(nnz, 256), 256, 0, s>>>(A->m, nnz, r, c, rbits, A->rowptr,
                                                                 A->colind, kin, vin);
        SBM__LAUNCHED(ctx, "block keys");
        SBM__CK(sbm__cuda_radix_pairs_u64(ctx, kin, kout, vin, vout, nnz, rbits + cbits));
        sbm__k_head_flags<<<sbm__grid(nnz, 256), 256, 0, s>>>(nnz, kout, scan);
        SBM__LAUNCHED(ctx, "block heads");
        SBM__CK(sbm__cuda_d2h(ctx, &last[0], scan + nnz - 1, sizeof(int64_t)));
        SBM__CK(sbm__cuda_scan_i64(ctx, scan, scan, nnz));
        SBM__CK(sbm__cuda_d2h(ctx, &last[1], scan + nnz - 1, sizeof(int64_t)));
        nnzb = last[0] + last[1];
    }
    SBM__CK(sbm__cbc_alloc(ctx, nbr, nbc, r, c, nnzb, &M));
    SBM__CK(sbm__cuda_zero(ctx, M->values, (size_t)nnzb * r * c * sizeof(double)));
    if (nnz > 0) {
        sbm__k_csr_cbc_blocks<<<sbm__grid(nnz, 256), 256, 0, s>>>(nnz, rbits, kout, scan, M->rowind,
                                                                 bkeys);
        SBM__LAUNCHED(ctx, "block rows");
        sbm__k_csr_cbc_values<<<sbm__grid(nnz, 256), 256, 0, s>>>(
            A->m, nnz, r, c, kout, vout, scan, A->rowptr, A->colind, A->values, M->values);
        SBM__LAUNCHED(ctx, "block values");
    }
    sbm__k_csr_cbc_colptr<<<sbm__grid(nbc + 1, 256), 256, 0, s>>>(nbc, nnzb, rbits, bkeys, M->colptr);
    SBM__LAUNCHED(ctx, "column pointers");
    *B = M;
    M = NULL;
done:
    sbm_cbc_destroy(M);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* C = alpha*A + beta*B                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* Size of the union of two sorted index lists. */
__global__ void sbm__k_add_count(int64_t nbc, const int64_t *ap, const int32_t *ai,
                                 const int64_t *bp, const int32_t *bi, int64_t *cnt)
{
    SBM__GRID_STRIDE(j, nbc)
    {
        int64_t p = ap[j], pe = ap[j + 1], q = bp[j], qe = bp[j + 1], n = 0;
        while (p < pe && q < qe) {
            int32_t x = ai[p], y = bi[q];
            p += (x <= y);
            q += (y <= x);
            n++;
        }
        cnt[j] = n + (pe - p) + (qe - q);
    }
}

/* Union pattern and, per C block, the A and B blocks it sums (-1: absent). */
__global__ void sbm__k_add_fill(int64_t nbc, const int64_t *ap, const int32_t *ai, const int64_t *bp,
                                const int32_t *bi, const int64_t *cp, int32_t *ci, int64_t *ia,
                                int64_t *ib)
{
    SBM__GRID_STRIDE(j, nbc)
    {
        int64_t p = ap[j], pe = ap[j + 1], q = bp[j], qe = bp[j + 1], k = cp[j];
        while (p < pe || q < qe) {
            if (q >= qe || (p < pe && ai[p] < bi[q])) {
                ci[k] = ai[p];
                ia[k] = p++;
                ib[k] = -1;
            } else if (p >= pe || bi[q] < ai[p]) {
                ci[k] = bi[q];
                ia[k] = -1;
                ib[k] = q++;
            } else {
                ci[k] = ai[p];
                ia[k] = p++;
                ib[k] = q++;
            }
            k++;
        }
    }
}

__global__ void sbm__k_add_values(int64_t nnzb, int64_t rc, double alpha, const double *av,
                                  double beta, const double *bv, const int64_t *ia,
                                  const int64_t *ib, double *cv)
{
    SBM__GRID_STRIDE(idx, nnzb * rc)
    {
        int64_t k = idx / rc, e = idx - k * rc;
        int64_t a = ia[k], b = ib[k];
        /* the CPU backend's expression, so that results agree bitwise */
        cv[idx] = (a >= 0 ? alpha * av[a * rc + e] : 0.0) + (b >= 0 ? beta * bv[b * rc + e] : 0.0);
    }
}

sbm_status sbm__cuda_cbc_add(sbm_ctx *ctx, double alpha, const sbm_cbc *A, double beta,
                             const sbm_cbc *B, sbm_cbc **C)
{
    sbm_status st = SBM_SUCCESS;
    sbm_cbc *M = NULL;
    int64_t nbc = A->nbc, nnzb = 0, rc = (int64_t)A->r * A->c;
    int64_t *cnt = NULL, *maps = NULL;
    cudaStream_t s = sbm__cuda_stream(ctx);
    *C = NULL;
    SBM__CK(sbm__cuda_enter(ctx));
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, (size_t)(nbc + 1) * sizeof(int64_t), (void **)&cnt));
    SBM__CK(sbm__cuda_zero(ctx, cnt + nbc, sizeof(int64_t)));
    if (nbc > 0) {
        sbm__k_add_count<<<sbm__grid(nbc, 256), 256, 0, s>>>(nbc, A->colptr, A->rowind, B->colptr,
                                                            B->rowind, cnt);
        SBM__LAUNCHED(ctx, "add (count)");
    }
    SBM__CK(sbm__cuda_scan_i64(ctx, cnt, cnt, nbc + 1));
    SBM__CK(sbm__cuda_d2h(ctx, &nnzb, cnt + nbc, sizeof(int64_t)));
    SBM__CK(sbm__cbc_alloc(ctx, A->nbr, nbc, A->r, A->c, nnzb, &M));
    SBM__CK(sbm__cuda_d2d(ctx, M->colptr, cnt, (size_t)(nbc + 1) * sizeof(int64_t)));
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_B, (size_t)(2 * nnzb) * sizeof(int64_t), (void **)&maps));
    if (nbc > 0) {
        sbm__k_add_fill<<<sbm__grid(nbc, 256), 256, 0, s>>>(nbc, A->colptr, A->rowind, B->colptr,
                                                           B->rowind, M->colptr, M->rowind, maps,
                                                           maps + nnzb);
        SBM__LAUNCHED(ctx, "add (pattern)");
    }
    if (nnzb > 0) {
        sbm__k_add_values<<<sbm__grid(nnzb * rc, 256), 256, 0, s>>>(
            nnzb, rc, alpha, A->values, beta, B->values, maps, maps + nnzb, M->values);
        SBM__LAUNCHED(ctx, "add (values)");
    }
    *C = M;
    M = NULL;
done:
    sbm_cbc_destroy(M);
    return st;
}
