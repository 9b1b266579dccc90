/* CUDA backend: validation, pattern fingerprints, transposes, CBC <-> CSR/BSR conversions and
 * the sparse add. Semantics follow the CPU backend (src/cpu/cpu_matrix.c) exactly: sorted output,
 * structural zeros kept. Every index computation is integer-only, so results are deterministic. */
#include "cuda_internal.cuh"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Host copies of a pattern: validation and fingerprints reuse the host code, so that the     */
/* messages and the hash values are the CPU backend's.                                      */
/* ---------------------------------------------------------------------------------------- */

typedef struct sbm__host_pattern {
    int64_t *ptr;
    int32_t *ind;
    double *val;
} sbm__host_pattern;

static void sbm__host_pattern_free(sbm_ctx *ctx, sbm__host_pattern *h)
{
    sbm__host_free(ctx, h->ptr);
    sbm__host_free(ctx, h->ind);
    sbm__host_free(ctx, h->val);
    memset(h, 0, sizeof *h);
}

/* Download ptr[0..n] and, where ptr[n] equals the entry count the object records, ind (and
 * val with per entries each when want_values). *consistent = 0 if ptr[n] differs. */
static sbm_status sbm__download_pattern(sbm_ctx *ctx, int64_t n, int64_t count, const int64_t *ptr,
                                        const int32_t *ind, const double *val, int64_t per,
                                        int want_values, sbm__host_pattern *h, int *consistent)
{
    sbm_status st = SBM_SUCCESS;
    memset(h, 0, sizeof *h);
    *consistent = 0;
    h->ptr = (int64_t *)sbm__host_alloc(ctx, (size_t)(n + 1) * sizeof(int64_t), "host copy of pointers");
    if (!h->ptr) return SBM_ERR_OUT_OF_MEMORY;
    SBM__CK(sbm__cuda_d2h(ctx, h->ptr, ptr, (size_t)(n + 1) * sizeof(int64_t)));
    if (h->ptr[n] != count) goto done;
    *consistent = 1;
    h->ind = (int32_t *)sbm__host_alloc(ctx, (size_t)count * sizeof(int32_t), "host copy of indices");
    if (!h->ind) {
        st = SBM_ERR_OUT_OF_MEMORY;
        goto done;
    }
    SBM__CK(sbm__cuda_d2h(ctx, h->ind, ind, (size_t)count * sizeof(int32_t)));
    if (want_values) {
        h->val = (double *)sbm__host_alloc(ctx, (size_t)count * per * sizeof(double),
                                           "host copy of values");
        if (!h->val) {
            st = SBM_ERR_OUT_OF_MEMORY;
            goto done;
        }
        SBM__CK(sbm__cuda_d2h(ctx, h->val, val, (size_t)count * per * sizeof(double)));
    }
done:
    if (st != SBM_SUCCESS) sbm__host_pattern_free(ctx, h);
    return st;
}

sbm_status sbm__cuda_cbc_validate(sbm_ctx *ctx, const char *arg, const sbm_cbc *A, int check_finite)
{
    sbm__host_pattern h;
    int consistent = 0;
    SBM__TRY(sbm__cuda_enter(ctx));
    SBM__TRY(sbm__download_pattern(ctx, A->nbc, A->nnzb, A->colptr, A->rowind, A->values,
                                   (int64_t)A->r * A->c, check_finite, &h, &consistent));
    sbm_status st;
    if (consistent) {
        st = sbm__validate_cbc_host(ctx, arg, A->nbr, A->nbc, A->r, A->c, h.ptr, h.ind, h.val,
                                    check_finite);
    } else if (h.ptr[0] != 0) {
        st = sbm__error(ctx, SBM_ERR_INVALID_POINTERS, "argument %s: colptr[0] is %" PRId64
                        ", expected 0", arg, h.ptr[0]);
    } else {
        st = sbm__error(ctx, SBM_ERR_INVALID_POINTERS,
                        "argument %s: colptr[%" PRId64 "] = %" PRId64
                        " does not equal the matrix's %" PRId64 " stored blocks",
                        arg, A->nbc, h.ptr[A->nbc], A->nnzb);
    }
    sbm__host_pattern_free(ctx, &h);
    return st;
}

sbm_status sbm__cuda_csr_validate(sbm_ctx *ctx, const char *arg, const sbm_csr *A, int check_finite)
{
    sbm__host_pattern h;
    int consistent = 0;
    SBM__TRY(sbm__cuda_enter(ctx));
    SBM__TRY(sbm__download_pattern(ctx, A->m, A->nnz, A->rowptr, A->colind, A->values, 1,
                                   check_finite, &h, &consistent));
    sbm_status st;
    if (consistent) {
        st = sbm__validate_csr_host(ctx, arg, A->m, A->n, h.ptr, h.ind, h.val, check_finite);
    } else if (h.ptr[0] != 0) {
        st = sbm__error(ctx, SBM_ERR_INVALID_POINTERS, "argument %s: rowptr[0] is %" PRId64
                        ", expected 0", arg, h.ptr[0]);
    } else {
        st = sbm__error(ctx, SBM_ERR_INVALID_POINTERS,
                        "argument %s: rowptr[%" PRId64 "] = %" PRId64
                        " does not equal the matrix's %" PRId64 " stored entries",
                        arg, A->m, h.ptr[A->m], A->nnz);
    }
    sbm__host_pattern_free(ctx, &h);
    return st;
}

static int sbm__hcache_find(sbm_ctx *ctx, uint64_t id, const int64_t dims[4], uint64_t *hash)
{
    sbm__cuda_state *S = sbm__cuda_st(ctx);
    for (int i = 0; i < SBM__HCACHE_SIZE; i++) {
        const sbm__cuda_hcache *e = &S->hcache[i];
        if (e->pattern_id == id && id != 0 && memcmp(e->dims, dims, sizeof e->dims) == 0) {
            *hash = e->hash;
            return 1;
        }
    }
    return 0;
}

static void sbm__hcache_put(sbm_ctx *ctx, uint64_t id, const int64_t dims[4], uint64_t hash)
{
    sbm__cuda_state *S = sbm__cuda_st(ctx);
    sbm__cuda_hcache *e = &S->hcache[S->hcache_next];
    S->hcache_next = (S->hcache_next + 1) % SBM__HCACHE_SIZE;
    e->pattern_id = id;
    memcpy(e->dims, dims, sizeof e->dims);
    e->hash = hash;
}

/* Sums of the fingerprint terms (sbm__fp_term in sbm_internal.h) of an offsets array (nptr
 * entries) and an index array (nind): grid-stride, warp shuffles, one integer atomic per warp and
 * sum (integer sums are exact, so the result does not depend on the order). */
__global__ void sbm__fp_sum_kernel(const int64_t *__restrict__ ptr, int64_t nptr,
                                   const int32_t *__restrict__ ind, int64_t nind,
                                   unsigned long long *out)
{
    uint64_t sp = 0, si = 0;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (int64_t i = first; i < nptr; i += stride)
        sp += sbm__fp_term(SBM__FP_SALT_PTR, (uint64_t)i, (uint64_t)ptr[i]);
    for (int64_t i = first; i < nind; i += stride)
        si += sbm__fp_term(SBM__FP_SALT_IND, (uint64_t)i, (uint64_t)(int64_t)ind[i]);
    for (int o = 16; o > 0; o >>= 1) {
        sp += __shfl_down_sync(0xffffffffu, sp, o);
        si += __shfl_down_sync(0xffffffffu, si, o);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(out, (unsigned long long)sp);
        atomicAdd(out + 1, (unsigned long long)si);
    }
}

/* The two sums of a device pattern and its last offset ptr[n], without downloading it. */
static sbm_status sbm__cuda_fp_sums(sbm_ctx *ctx, const int64_t *ptr, int64_t n,
                                    const int32_t *ind, int64_t nnz, uint64_t sums[2],
                                    int64_t *last)
{
    sbm_status st = SBM_SUCCESS;
    unsigned long long *d = NULL, h[3] = {0, 0, 0};
    const cudaStream_t s = sbm__cuda_stream(ctx);
    const int64_t work = (n + 1 > nnz ? n + 1 : nnz);
    int64_t grid = (work + 255) / 256;
    const int64_t cap = (int64_t)sbm__cuda_st(ctx)->prop.multiProcessorCount * 8;
    if (grid > cap) grid = cap;
    if (grid < 1) grid = 1;
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, 3 * sizeof(unsigned long long), (void **)&d));
    SBM__CU(ctx, cudaMemsetAsync(d, 0, 2 * sizeof *d, s), "clearing the fingerprint sums");
    sbm__fp_sum_kernel<<<(unsigned)grid, 256, 0, s>>>(ptr, n + 1, ind, nnz, d);
    SBM__LAUNCHED(ctx, "the pattern fingerprint kernel");
    SBM__CU(ctx, cudaMemcpyAsync(d + 2, ptr + n, sizeof(int64_t), cudaMemcpyDeviceToDevice, s),
            "reading the last offset");
    SBM__CU(ctx, cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s),
            "downloading the fingerprint sums");
    SBM__CU(ctx, cudaStreamSynchronize(s), "computing a pattern fingerprint");
    sums[0] = h[0];
    sums[1] = h[1];
    *last = (int64_t)h[2];
done:
    return st;
}

/* The fingerprint of a device pattern (offsets ptr[0..n], indices ind[0..nnz)), cached by pattern
 * id; key holds the four dimensions the fingerprint is finished with (kind names the matrix). */
static sbm_status sbm__cuda_pattern_hash(sbm_ctx *ctx, uint64_t id, const int64_t key[4],
                                         const int64_t fin[4], const int64_t *ptr, int64_t n,
                                         const int32_t *ind, int64_t nnz, const char *kind,
                                         uint64_t *hash)
{
    uint64_t sums[2] = {0, 0};
    int64_t last = 0;
    *hash = 0;
    SBM__TRY(sbm__cuda_enter(ctx));
    if (sbm__hcache_find(ctx, id, key, hash)) return SBM_SUCCESS;
    SBM__TRY(sbm__cuda_fp_sums(ctx, ptr, n, ind, nnz, sums, &last));
    if (last != nnz)
        return sbm__error(ctx, SBM_ERR_INVALID_POINTERS,
                          "matrix: %s[%" PRId64 "] = %" PRId64 " does not equal its %" PRId64
                          " stored entries",
                          kind, n, last, nnz);
    *hash = sbm__fp_finish(fin[0], fin[1], fin[2], fin[3], sums[0], sums[1]);
    sbm__hcache_put(ctx, id, key, *hash);
    return SBM_SUCCESS;
}

sbm_status sbm__cuda_cbc_pattern_hash(sbm_ctx *ctx, const sbm_cbc *A, uint64_t *hash)
{
    const int64_t key[4] = {A->nbr, A->nbc, A->nnzb, (int64_t)A->r * 64 + A->c};
    const int64_t fin[4] = {A->nbr, A->nbc, A->r, A->c};
    return sbm__cuda_pattern_hash(ctx, A->pattern_id, key, fin, A->colptr, A->nbc, A->rowind,
                                  A->nnzb, "colptr", hash);
}

sbm_status sbm__cuda_csr_pattern_hash(sbm_ctx *ctx, const sbm_csr *A, uint64_t *hash)
{
    const int64_t key[4] = {A->m, A->n, A->nnz, -1};
    const int64_t fin[4] = {A->m, A->n, -1, 0};
    return sbm__cuda_pattern_hash(ctx, A->pattern_id, key, fin, A->rowptr, A->m, A->colind,
                                  A->nnz, "rowptr", hash);
}

/* ---------------------------------------------------------------------------------------- */
/* Transposes and BSR                                                                       */
/* ---------------------------------------------------------------------------------------- */

/* dst block q (c x r) = transpose of src block perm[q] (r x c); one thread per element. */
__global__ void sbm__k_gather_transpose_blocks(int64_t nnzb, int r, int c, const int64_t *perm,
                                               const double *src, double *dst)
{
    const int64_t rc = (int64_t)r * c;
    SBM__GRID_STRIDE(idx, nnzb * rc)
    {
        int64_t q = idx / rc;
        int o = (int)(idx - q * rc);
        int jj = o % c, ii = o / c; /* dst element (jj, ii) of the c x r block */
        dst[idx] = src[perm[q] * rc + ii + (int64_t)jj * r];
    }
}

/* dst block q = src block perm[q], column-major (same layout) or row-major. */
__global__ void sbm__k_gather_blocks(int64_t nnzb, int r, int c, int row_major, const int64_t *perm,
                                     const double *src, double *dst)
{
    const int64_t rc = (int64_t)r * c;
    SBM__GRID_STRIDE(idx, nnzb * rc)
    {
        int64_t q = idx / rc;
        int o = (int)(idx - q * rc);
        int ii, jj;
        if (row_major) {
            ii = o / c;
            jj = o % c;
        } else {
            ii = o % r;
            jj = o / r;
        }
        dst[idx] = src[perm[q] * rc + ii + (int64_t)jj * r];
    }
}

__global__ void sbm__k_gather_scalars(int64_t n, const int64_t *perm, const double *src, double *dst)
{
    SBM__GRID_STRIDE(q, n) { dst[q] = src[perm[q]]; }
}

sbm_status sbm__cuda_cbc_transpose(sbm_ctx *ctx, const sbm_cbc *A, sbm_cbc **AT)
{
    sbm_status st = SBM_SUCCESS;
    sbm_cbc *T = NULL;
    int64_t *perm = NULL;
    cudaStream_t s = sbm__cuda_stream(ctx);
    *AT = NULL;
    SBM__CK(sbm__cuda_enter(ctx));
    SBM__CK(sbm__cbc_alloc(ctx, A->nbc, A->nbr, A->c, A->r, A->nnzb, &T));
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, (size_t)A->nnzb * sizeof(int64_t), (void **)&perm));
    SBM__CK(sbm__cuda_pattern_transpose(ctx, SBM__WS_PRIM, A->nbc, A->nbr, A->nnzb, A->colptr,
                                        A->rowind, T->colptr, T->rowind, perm));
    if (A->nnzb > 0) {
        sbm__k_gather_transpose_blocks<<<sbm__grid(A->nnzb * A->r * A->c, 256), 256, 0, s>>>(
            A->nnzb, A->r, A->c, perm, A->values, T->values);
        SBM__LAUNCHED(ctx, "block transpose");
    }
    *AT = T;
    T = NULL;
done:
    sbm_cbc_destroy(T);
    return st;
}

sbm_status sbm__cuda_csr_transpose(sbm_ctx *ctx, const sbm_csr *A, sbm_csr **AT)
{
    sbm_status st = SBM_SUCCESS;
    sbm_csr *T = NULL;
    int64_t *perm = NULL;
    cudaStream_t s = sbm__cuda_stream(ctx);
    *AT = NULL;
    SBM__CK(sbm__cuda_enter(ctx));
    SBM__CK(sbm__csr_alloc(ctx, A->n, A->m, A->nnz, &T));
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, (size_t)A->nnz * sizeof(int64_t), (void **)&perm));
    SBM__CK(sbm__cuda_pattern_transpose(ctx, SBM__WS_PRIM, A->m, A->n, A->nnz, A->rowptr,
                                        A->colind, T->rowptr, T->colind, perm));
    if (A->nnz > 0) {
        sbm__k_gather_scalars<<<sbm__grid(A->nnz, 256), 256, 0, s>>>(A->nnz, perm, A->values,
                                                                    T->values);
        SBM__LAUNCHED(ctx, "CSR transpose values");
    }
    *AT = T;
    T = NULL;
done:
    sbm_csr_destroy(T);
    return st;
}

sbm_status sbm__cuda_cbc_to_bsr(sbm_ctx *ctx, const sbm_cbc *A, sbm_layout layout,
                                int64_t *rowptr, int32_t *colind, double *values)
{
    /* BSR arrays of A = the transposed pattern; block q of the BSR is A's block perm[q]. The
     * pattern goes to scratch first so that the caller's arrays change only on success. */
    sbm_status st = SBM_SUCCESS;
    sbm__carve cv = {0};
    size_t o_perm = sbm__carve_add(&cv, (size_t)A->nnzb * sizeof(int64_t));
    size_t o_ptr = sbm__carve_add(&cv, (size_t)(A->nbr + 1) * sizeof(int64_t));
    size_t o_ind = sbm__carve_add(&cv, (size_t)A->nnzb * sizeof(int32_t));
    char *base = NULL;
    int64_t *perm, *tptr;
    int32_t *tind;
    cudaStream_t s = sbm__cuda_stream(ctx);
    SBM__CK(sbm__cuda_enter(ctx));
    SBM__CK(sbm__cuda_workspace(ctx, SBM__WS_OP_A, cv.total, (void **)&base));
    perm = (int64_t *)(base + o_perm);
    tptr = (int64_t *)(base + o_ptr);
    tind = (int32_t *)(base + o_ind);
    SBM__CK(sbm__cuda_pattern_transpose(ctx, SBM__WS_PRIM, A->nbc, A->nbr, A->nnzb, A->colptr,
                                        A->rowind, tptr, tind, perm));
    SBM__CK(sbm__cuda_d2d(ctx, rowptr, tptr, (size_t)(A->nbr + 1) * sizeof(int64_t)));
    if (A->nnzb > 0) {
        SBM__CK(sbm__cuda_d2d(ctx, colind, tind, (size_t)A->nnzb * sizeof(int32_t)));
        sbm__k_gather_blocks<<<sbm__grid(A->nnzb * A->r * A->c, 256), 256, 0, s>>>(
            A->nnzb, A->r, A->c, layout == SBM_LAYOUT_ROW_MAJOR, perm, A->values, values);
        SBM__LAUNCHED(ctx, "BSR block gather");
    }
done:
    return st;
}

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

/* ---------------------------------------------------------------------------------------- */
/* Row view cache                                                                           */
/* ---------------------------------------------------------------------------------------- */

static void sbm__tcache_entry_free(sbm__cuda_tcache *e)
{
    if (e->allocator.free) {
        if (e->rowptr) e->allocator.free(e->allocator.user, e->rowptr);
        if (e->colind) e->allocator.free(e->allocator.user, e->colind);
        if (e->perm) e->allocator.free(e->allocator.user, e->perm);
    }
    memset(e, 0, sizeof *e);
}

void sbm__cuda_tcache_clear(sbm_ctx *ctx)
{
    sbm__cuda_state *S = sbm__cuda_st(ctx);
    for (int i = 0; i < SBM__TCACHE_SIZE; i++) sbm__tcache_entry_free(&S->tcache[i]);
}

sbm_status sbm__cuda_cbc_rows(sbm_ctx *ctx, const sbm_cbc *A, const int64_t **rowptr,
                              const int32_t **colind, const int64_t **perm)
{
    sbm__cuda_state *S = sbm__cuda_st(ctx);
    sbm_status st = SBM_SUCCESS;
    sbm__cuda_tcache fresh;
    sbm__cuda_tcache *slot = &S->tcache[0];
    memset(&fresh, 0, sizeof fresh);
    for (int i = 0; i < SBM__TCACHE_SIZE; i++) {
        sbm__cuda_tcache *e = &S->tcache[i];
        if (e->pattern_id == A->pattern_id && e->nbr == A->nbr && e->nnzb == A->nnzb) {
            e->last_use = ++S->tcache_clock;
            *rowptr = e->rowptr;
            *colind = e->colind;
            *perm = e->perm;
            return SBM_SUCCESS;
        }
        if (e->last_use < slot->last_use) slot = e;
    }
    fresh.pattern_id = A->pattern_id;
    fresh.nbr = A->nbr;
    fresh.nnzb = A->nnzb;
    fresh.allocator = ctx->allocator;
    fresh.rowptr = (int64_t *)sbm__alloc(ctx, (size_t)(A->nbr + 1) * sizeof(int64_t), "row view pointers");
    if (!fresh.rowptr) {
        st = SBM_ERR_OUT_OF_MEMORY;
        goto done;
    }
    fresh.colind = (int32_t *)sbm__alloc(ctx, (size_t)A->nnzb * sizeof(int32_t), "row view indices");
    if (!fresh.colind) {
        st = SBM_ERR_OUT_OF_MEMORY;
        goto done;
    }
    fresh.perm = (int64_t *)sbm__alloc(ctx, (size_t)A->nnzb * sizeof(int64_t), "row view permutation");
    if (!fresh.perm) {
        st = SBM_ERR_OUT_OF_MEMORY;
        goto done;
    }
    SBM__CK(sbm__cuda_pattern_transpose(ctx, SBM__WS_PRIM, A->nbc, A->nbr, A->nnzb, A->colptr,
                                        A->rowind, fresh.rowptr, fresh.colind, fresh.perm));
    /* the evicted entry may still be read by queued work */
    if (slot->pattern_id != 0) SBM__CK(sbm__cuda_sync(ctx));
    sbm__tcache_entry_free(slot);
    fresh.last_use = ++S->tcache_clock;
    *slot = fresh;
    memset(&fresh, 0, sizeof fresh);
    *rowptr = slot->rowptr;
    *colind = slot->colind;
    *perm = slot->perm;
done:
    sbm__tcache_entry_free(&fresh);
    return st;
}
