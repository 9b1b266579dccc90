/* SPDX-License-Identifier: BSD-3-Clause */
/* Matrices: allocation, building from host arrays, argument checks, pattern views, checks and
 * fingerprints (src/core/matrix.c, host_build.c, validate.c, pattern.c). */
#ifndef SBM_CORE_MATRIX_H
#define SBM_CORE_MATRIX_H

#include "core_memory.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------- */
/* Matrices (src/core/matrix.c: allocation, filling and release of both kinds)             */
/* ---------------------------------------------------------------------------------------- */

uint64_t sbm__new_pattern_id(void);

/* What both kinds share (src/core/matrix.c). The fields both structs have, set for a matrix of
 * ctx; own: the library allocated the arrays and destroy frees them. */
#define SBM__MATRIX_OWNER(M, ctx, own)                                                      \
    do {                                                                                    \
        (M)->backend = (ctx)->backend;                                                      \
        (M)->device = (ctx)->device;                                                        \
        (M)->owns = (own);                                                                  \
        (M)->allocator = (ctx)->allocator;                                                  \
        (M)->ops = (ctx)->ops;                                                              \
        (M)->pattern_id = sbm__new_pattern_id();                                            \
    } while (0)
/* A zeroed matrix struct of the given size. @return NULL (error recorded) on failure. */
void *sbm__matrix_struct(sbm_ctx *ctx, size_t bytes);
/* The arrays of an owning matrix in ctx's memory: nptr pointers, nind indices, vbytes of values,
 * named by what[] in messages. On failure those allocated stay set, for the destroy to free. */
sbm_status sbm__matrix_arrays(sbm_ctx *ctx, int64_t nptr, int64_t nind, size_t vbytes,
                              const char *const what[3], int64_t **ptr, int32_t **ind,
                              double **values);
/* Free a matrix struct M: its arrays first if it owns them. */
void sbm__matrix_free(void *M, sbm_backend backend, int owns, const sbm_allocator *al,
                      void *ptr, void *ind, void *values);
/* Fill a new matrix's arrays from arrays in src_backend's memory (the host: SBM_BACKEND_CPU);
 * src_values NULL: zero values. */
sbm_status sbm__matrix_fill(sbm_ctx *ctx, const struct sbm__backend_ops *src_ops,
                            sbm_backend src_backend, int64_t *ptr, int32_t *ind, double *values,
                            const int64_t *src_ptr, const int32_t *src_ind,
                            const double *src_values, int64_t nptr, int64_t nind, size_t nval);

/* Allocate a CBC struct with owned arrays for nnzb blocks in ctx's memory space (arrays
 * uninitialised; colptr allocated with nbc+1 entries). sbm_cbc_destroy and sbm_csr_destroy
 * live in matrix.c too. */
sbm_status sbm__cbc_alloc(sbm_ctx *ctx, int64_t nbr, int64_t nbc, int r, int c, int64_t nnzb,
                          sbm_cbc **A);
sbm_status sbm__csr_alloc(sbm_ctx *ctx, int64_t m, int64_t n, int64_t nnz, sbm_csr **A);

/* New matrix in ctx from validated host arrays (src/core/matrix.c). */
sbm_status sbm__cbc_upload(sbm_ctx *ctx, int64_t nbr, int64_t nbc, int r, int c,
                           const int64_t *h_colptr, const int32_t *h_rowind,
                           const double *h_values, sbm_cbc **A);
sbm_status sbm__csr_upload(sbm_ctx *ctx, int64_t m, int64_t n, const int64_t *h_rowptr,
                           const int32_t *h_colind, const double *h_values, sbm_csr **A);
/* Building from host data (src/core/host_build.c). Compress host triplets (segment seg[t],
 * index ind[t], bs values each) into sorted, duplicate-free segments: ptr (nseg+1), indices and
 * values, host arrays to free with sbm__host_free. Duplicates are summed in input order, so the result is deterministic. Serves
 * the CBC (segment = block column) and CSR (segment = row) triplet builders and the Matrix
 * Market reader. */
sbm_status sbm__compress_triplets(sbm_ctx *ctx, int64_t nseg, int64_t nind, int64_t nt,
                                  const int32_t *seg, const int32_t *ind, const double *val,
                                  size_t bs, int64_t **ptr_out, int32_t **ind_out,
                                  double **val_out);
/* A (nbr x nbc blocks of r x c) in ctx from the host CBC arrays of A^T (c x r blocks). */
sbm_status sbm__cbc_from_host_transposed(sbm_ctx *ctx, int64_t nbr, int64_t nbc, int r, int c,
                                         const int64_t *tptr, const int32_t *tind,
                                         const double *tval, sbm_cbc **A);

/* Argument checks for the front end (src/core/validate.c). Each records the error with the
 * argument name. */
sbm_status sbm__check_block_shape(sbm_ctx *ctx, const char *arg, int r, int c);
sbm_status sbm__check_cbc_dims(sbm_ctx *ctx, int64_t nbr, int64_t nbc, int r, int c);
sbm_status sbm__check_csr_dims(sbm_ctx *ctx, int64_t m, int64_t n);
sbm_status sbm__check_cbc_arg(sbm_ctx *ctx, const char *arg, const sbm_cbc *A);  /* non-NULL, backend */
sbm_status sbm__check_csr_arg(sbm_ctx *ctx, const char *arg, const sbm_csr *A);

/* Full validation of host arrays (arg names the matrix argument in messages). */
sbm_status sbm__validate_cbc_host(sbm_ctx *ctx, const char *arg, int64_t nbr, int64_t nbc,
                                  int r, int c, const int64_t *colptr, const int32_t *rowind,
                                  const double *values, int check_finite);
sbm_status sbm__validate_csr_host(sbm_ctx *ctx, const char *arg, int64_t m, int64_t n,
                                  const int64_t *rowptr, const int32_t *colind,
                                  const double *values, int check_finite);


/* Host view of a CBC pattern for front-end checks (src/core/pattern.c): on the CPU backend the
 * matrix's own arrays, otherwise host copies; release with sbm__cbc_pattern_release. */
sbm_status sbm__cbc_pattern_to_host(sbm_ctx *ctx, const sbm_cbc *A, const int64_t **colptr,
                                    const int32_t **rowind);
void sbm__cbc_pattern_release(sbm_ctx *ctx, const sbm_cbc *A, const int64_t *colptr,
                              const int32_t *rowind);
/* Pattern checks of plans (src/core/pattern.c). The fingerprint of X's pattern, computed where it
 * lives (SBM_ERR_NOT_SUPPORTED if the backend cannot). */
sbm_status sbm__cbc_pattern_hash(sbm_ctx *ctx, const sbm_cbc *X, uint64_t *hash);
/* X has the pattern a plan recorded for argument arg: the same pattern instance (id), or equal
 * arrays (same fingerprint hash); else SBM_ERR_PLAN_MISMATCH naming arg. */
sbm_status sbm__cbc_check_pattern(sbm_ctx *ctx, const char *arg, const sbm_cbc *X, uint64_t id,
                                  uint64_t hash);
/* No block of X below the diagonal; else SBM_ERR_INVALID_ARGUMENT "argument <arg>: block (i, j)
 * is below the diagonal, but <why>". */
sbm_status sbm__cbc_check_upper(sbm_ctx *ctx, const char *arg, const sbm_cbc *X, const char *why);

/* Pattern fingerprints. A fingerprint is a sum of independent per-entry mixes (splitmix64's
 * finaliser of the entry's position and value), finished with the dimensions: any backend
 * computes the same value in parallel where the pattern lives (the CUDA backend with one
 * reduction kernel, no download). Integer sums are exact, so the order does not matter. */
#if defined(__CUDACC__)
#define SBM__HD __host__ __device__ __forceinline__
#else
#define SBM__HD static inline
#endif
#define SBM__FP_SALT_PTR 0x243F6A8885A308D3ull /* offsets (colptr / rowptr) */
#define SBM__FP_SALT_IND 0x13198A2E03707344ull /* indices (rowind / colind) */

SBM__HD uint64_t sbm__fp_mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* The term of entry i (value v) of the array with the given salt. */
SBM__HD uint64_t sbm__fp_term(uint64_t salt, uint64_t i, uint64_t v)
{
    return sbm__fp_mix((i * 0x9E3779B97F4A7C15ull + salt) ^ (v * 0xD6E8FEB86659FD93ull));
}

/* The fingerprint from four dimensions and the two sums of terms. */
SBM__HD uint64_t sbm__fp_finish(int64_t d0, int64_t d1, int64_t d2, int64_t d3, uint64_t sum_ptr,
                                uint64_t sum_ind)
{
    uint64_t h = sbm__fp_mix(0x452821E638D01377ull ^ (uint64_t)d0);
    h = sbm__fp_mix(h ^ (uint64_t)d1);
    h = sbm__fp_mix(h ^ (uint64_t)d2);
    h = sbm__fp_mix(h ^ (uint64_t)d3);
    h = sbm__fp_mix(h ^ sum_ptr);
    return sbm__fp_mix(h ^ sum_ind);
}

/* Fingerprints of patterns in host memory: CBC dims (nbr, nbc, r, c), CSR (m, n, -1, 0). */
uint64_t sbm__hash_cbc_pattern_host(const sbm_cbc *A);
uint64_t sbm__hash_csr_pattern_host(const sbm_csr *A);

#ifdef __cplusplus
}
#endif

#endif /* SBM_CORE_MATRIX_H */
