/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA backend: validation, pattern fingerprints, transposes, CBC -> BSR, row views (the CBC <->
 * CSR conversions and the sparse add are in cuda_convert.cu). Semantics follow the CPU backend
 * (kernels/cpu/matrix/cpu_matrix.c) exactly: sorted output,
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

/* Sums of the fingerprint terms (sbm__fp_term in core_matrix.h) of an offsets array (nptr
 * entries) and an index array (nind): grid-stride, warp shuffles, one integer atomic per warp and
 * sum (integer sums are exact, so the result does not depend on the order). */
__global__ void sbm__k_fp_sum(const int64_t *__restrict__ ptr, int64_t nptr,
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
    sbm__k_fp_sum<<<(unsigned)grid, 256, 0, s>>>(ptr, n + 1, ind, nnz, d);
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
