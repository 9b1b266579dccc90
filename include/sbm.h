/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm: sparse block matrices on CPU and GPU.
 *
 * The core API: context, status, matrices, conversions, products. Plain C11; no CUDA header
 * is needed to use it. The layers above it have headers of their own (docs/LAYERS.md):
 * sbm_io.h (files), sbm_solve.h (solver options and reports), sbm_ba.h (bundle adjustment) and
 * sbm_slam.h (pose graphs); the last two are in the library sbm_ba.
 *
 * Conventions
 *   - Every call that can fail returns sbm_status (0 = success, negative = error) and, on failure,
 *     leaves a message in the context (sbm_ctx_last_error) naming the call, the argument and the
 *     offending values.
 *   - Output handles are set to NULL on entry; on failure nothing is allocated and inputs are
 *     unchanged.
 *   - Destroy functions accept NULL.
 *   - Every matrix lives in the memory of one backend (host for CPU, device for CUDA). Arrays
 *     passed to *_wrap, spmv, spmm and the BSR conversions live in that memory too; arrays passed to
 *     *_create and *_from_triplets are host arrays, copied into the context's memory.
 *   - Values are double. Blocks are stored column-major (LAPACK-compatible).
 */
#ifndef SBM_H
#define SBM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st; /* cudaStream_t without the CUDA headers */

#define SBM_VERSION_MAJOR 0
#define SBM_VERSION_MINOR 1
#define SBM_VERSION_PATCH 0
/* The version as one number, MAJOR * 10000 + MINOR * 100 + PATCH, for #if tests. */
#define SBM_VERSION (SBM_VERSION_MAJOR * 10000 + SBM_VERSION_MINOR * 100 + SBM_VERSION_PATCH)

/* The version of the library the program runs with, "MAJOR.MINOR.PATCH" (compare with the
 * SBM_VERSION_* macros of the header it was compiled with). @return a static string. */
const char *sbm_version(void);

/* Largest block dimension accepted anywhere (rows or columns of one block). */
#define SBM_MAX_BLOCK_DIM 32

/* ======================================================================================== */
/* Status codes                                                                             */
/* ======================================================================================== */

/* One table: X(name, value, description). */
#define SBM_STATUS_LIST(X)                                                                    \
    X(SBM_SUCCESS, 0, "success")                                                              \
    X(SBM_ERR_NULL_ARGUMENT, -1, "a required pointer argument is NULL")                      \
    X(SBM_ERR_INVALID_ARGUMENT, -2, "an argument has an invalid value")                      \
    X(SBM_ERR_DIMENSION_MISMATCH, -3, "operand dimensions do not agree")                     \
    X(SBM_ERR_BLOCK_SHAPE, -4, "block shapes do not agree or are not supported")             \
    X(SBM_ERR_INVALID_POINTERS, -5, "column/row pointers are not a valid offset array")      \
    X(SBM_ERR_INDEX_OUT_OF_RANGE, -6, "an index is outside the matrix")                      \
    X(SBM_ERR_UNSORTED_INDICES, -7, "indices within a column/row are not increasing")        \
    X(SBM_ERR_DUPLICATE_INDICES, -8, "an index appears twice within a column/row")           \
    X(SBM_ERR_NOT_FINITE, -9, "a value is NaN or infinite where that is forbidden")          \
    X(SBM_ERR_OVERFLOW, -10, "a size or count does not fit the index types")                 \
    X(SBM_ERR_OUT_OF_MEMORY, -11, "an allocation failed")                                    \
    X(SBM_ERR_NOT_POSITIVE_DEFINITE, -12, "a diagonal block is not symmetric positive definite") \
    X(SBM_ERR_BACKEND_MISMATCH, -13, "an object belongs to another backend or device")       \
    X(SBM_ERR_PLAN_MISMATCH, -14, "operands do not match the plan they are executed with")   \
    X(SBM_ERR_ALIASING, -15, "an output aliases an input where that is not allowed")         \
    X(SBM_ERR_NOT_SUPPORTED, -16, "the operation or backend is not available in this build") \
    X(SBM_ERR_NO_DEVICE, -17, "no usable CUDA device")                                       \
    X(SBM_ERR_CUDA, -18, "a CUDA runtime or library call failed")                            \
    X(SBM_ERR_IO, -19, "a file could not be opened, read or written")                        \
    X(SBM_ERR_PARSE, -20, "a file is malformed")

typedef enum sbm_status {
#define SBM_X_(name, value, desc) name = value,
    SBM_STATUS_LIST(SBM_X_)
#undef SBM_X_
} sbm_status;

/* @return the enum name ("SBM_ERR_PARSE"), or "SBM_UNKNOWN_STATUS" for a value not in the table. */
const char *sbm_status_name(sbm_status status);
/* @return a one-line description of the status code. */
const char *sbm_status_description(sbm_status status);

/* ======================================================================================== */
/* Context                                                                                  */
/* ======================================================================================== */

typedef struct sbm_ctx sbm_ctx;

typedef enum sbm_backend {
    SBM_BACKEND_CPU = 0,  /* host memory, the reference implementation */
    SBM_BACKEND_CUDA = 1  /* device memory, CUDA kernels */
} sbm_backend;
/* "cpu" or "cuda"; "unknown backend" for a value not in the enum. */
const char *sbm_backend_name(sbm_backend backend);

/* Allocator hook for the memory the library allocates in the context's memory space (host for
 * CPU, device for CUDA). alloc returns NULL on failure; free accepts NULL. */
typedef struct sbm_allocator {
    void *(*alloc)(void *user, size_t bytes); /* allocate bytes; NULL on failure */
    void (*free)(void *user, void *ptr);      /* release what alloc returned */
    void *user;                               /* passed to both */
} sbm_allocator;

/* @return 1 if this build has the CUDA backend, 0 otherwise. */
int sbm_has_cuda(void);
/* @return the number of usable CUDA devices (0 without CUDA support or without a GPU). */
int sbm_cuda_device_count(void);

/* Create a context for a backend. device is the CUDA device ordinal (ignored for CPU). The
 * context reads two environment variables here, once, as the defaults of its tuning
 * (sbm_tuning.num_threads and .cuda_graphs, which override them): SBM_NUM_THREADS, the threads
 * of the CPU backend (a number, clamped to 1 to 64; unset or empty: the online cores), and, for
 * a CUDA context, SBM_CUDA_GRAPHS: 0 keeps the sparse Cholesky on plain kernel launches; unset,
 * empty or 1 replays its level loops as CUDA graphs; 2 cuts the factor's graph at every
 * cuSOLVER call (its fallback, for tests and diagnosis).
 * @return SBM_ERR_NOT_SUPPORTED if CUDA is not built in, SBM_ERR_NO_DEVICE if the device
 *         does not exist, SBM_ERR_INVALID_ARGUMENT if SBM_CUDA_GRAPHS is another value. *ctx is
 *         NULL on failure; there is then no context to hold a message, so
 *         sbm_ctx_last_error(NULL) returns the message of the last failed create on this thread. */
sbm_status sbm_ctx_create(sbm_ctx **ctx, sbm_backend backend, int device);
/* Destroy a context. Matrices and plans made with it must be destroyed first. NULL is accepted and does nothing. */
void sbm_ctx_destroy(sbm_ctx *ctx);

/* @return the context's backend. */
sbm_backend sbm_ctx_backend(const sbm_ctx *ctx);
/* Stream for all work of a CUDA context (NULL = the legacy default stream). CPU contexts store it
 * and ignore it. */
sbm_status sbm_ctx_set_stream(sbm_ctx *ctx, struct CUstream_st *stream);
/* @return the stream set by sbm_ctx_set_stream (NULL: the default stream, or ctx NULL). */
struct CUstream_st *sbm_ctx_stream(const sbm_ctx *ctx);
/* Memory budget in bytes for temporary workspace (0 = default: unlimited on CPU, a safe fraction
 * of free device memory on CUDA). Operations whose workspace would exceed it work in slices or
 * fail with SBM_ERR_OUT_OF_MEMORY; on a CPU context that includes sbm_csr_read_mtx's reading
 * workspace, checked at the file's size line. */
sbm_status sbm_ctx_set_memory_budget(sbm_ctx *ctx, size_t bytes);
/* @return the budget set by sbm_ctx_set_memory_budget (0: the backend default, or ctx NULL). */
size_t sbm_ctx_memory_budget(const sbm_ctx *ctx);
/* Install an allocator hook (NULL restores the default). Matrices remember the allocator that
 * made them. */
sbm_status sbm_ctx_set_allocator(sbm_ctx *ctx, const sbm_allocator *allocator);
/* @return the message of the last failure in this context ("" if none). With ctx == NULL, the
 * message of the last failed sbm_ctx_create on this thread. Valid until the next call. */
const char *sbm_ctx_last_error(const sbm_ctx *ctx);
/* @return the status of the last failure in this context (SBM_SUCCESS if none). */
sbm_status sbm_ctx_last_status(const sbm_ctx *ctx);
/* Forget the last error. */
void sbm_ctx_clear_error(sbm_ctx *ctx);
/* Wait for all work queued on the context's stream (no-op on CPU). */
sbm_status sbm_ctx_synchronize(sbm_ctx *ctx);

/* ---------------------------------------------------------------------------------------- */
/* Tuning: kernel choices of the CUDA backend, threads of the CPU backend                    */
/* ---------------------------------------------------------------------------------------- */

/* The CUDA backend picks a kernel per call from the operands' shape and statistics (the rules
 * are in the kernel sources, the measurements behind them in docs/DESIGN-NOTES.md). A tuning
 * struct overrides those picks, for measurements and tests; results agree within rounding
 * whatever the choice. In every field zero lets the library decide, so a zeroed struct (and
 * sbm_tuning_default()) is the library's own choice. The CPU backend reads num_threads alone
 * and the CUDA backend every field but num_threads. A kernel forced on operands or a device it cannot serve is handled as the field
 * says: the forced GEMM kernels fall back to the thread-per-element one for block triples
 * without a fast kernel or on devices before compute capability 8.0, and tile sizes are clamped
 * to what the block shape holds. */

/* Kernel of sbm_csr_spmv. A CSR SpMV plan runs its format's kernel whatever this says; when
 * this names that same kernel, the plan takes the configuration given below. */
typedef enum sbm_tune_csr_spmv {
    SBM_TUNE_CSR_SPMV_AUTO = 0,   /* from the row statistics */
    SBM_TUNE_CSR_SPMV_SCALAR = 1, /* one thread per row */
    SBM_TUNE_CSR_SPMV_VECTOR = 2, /* a group of lanes per row */
    SBM_TUNE_CSR_SPMV_MERGE = 3   /* merge path: equal shares of rows and entries per thread */
} sbm_tune_csr_spmv;

/* Kernel of sbm_cbc_spmv. */
typedef enum sbm_tune_spmv {
    SBM_TUNE_SPMV_AUTO = 0,          /* batched for square blocks of 5 to 8, else one by one */
    SBM_TUNE_SPMV_ONE_BY_ONE = 1,    /* one block after the other per thread (version 1) */
    SBM_TUNE_SPMV_BATCHED = 2,       /* blocks batched per thread, large batches (version 2) */
    SBM_TUNE_SPMV_BATCHED_SMALL = 3  /* blocks batched per thread, small batches (version 3) */
} sbm_tune_spmv;

/* Kernel of sbm_csr_spmm. */
typedef enum sbm_tune_csr_spmm {
    SBM_TUNE_CSR_SPMM_AUTO = 0,     /* from the row statistics */
    SBM_TUNE_CSR_SPMM_ROWSPLIT = 1, /* rows split over lanes */
    SBM_TUNE_CSR_SPMM_MERGE = 2     /* merge path over rows and entries */
} sbm_tune_csr_spmm;

/* Path of sbm_csr_gemm_plan (scalar SpGEMM). */
typedef enum sbm_tune_csr_gemm {
    SBM_TUNE_CSR_GEMM_AUTO = 0,  /* rows binned by product count */
    SBM_TUNE_CSR_GEMM_GLOBAL = 1 /* every row through the global-memory (expand-sort) path */
} sbm_tune_csr_gemm;

/* Numeric kernel of sbm_cbc_gemm_plan (block SpGEMM), for block triples with a fast kernel. */
typedef enum sbm_tune_gemm_numeric {
    SBM_TUNE_GEMM_AUTO = 0,           /* from the block shape and the number of tiles */
    SBM_TUNE_GEMM_TEAM = 1,           /* one thread per output element, operands from global */
    SBM_TUNE_GEMM_DMMA = 2,           /* FP64 tensor cores, operands from global */
    SBM_TUNE_GEMM_STAGE = 3,          /* team on tiles staged in shared memory, persistent grid */
    SBM_TUNE_GEMM_SDMMA = 4,          /* tensor cores on staged tiles, persistent grid */
    SBM_TUNE_GEMM_STAGE_ONE_TILE = 5, /* staged team, one tile per CTA */
    SBM_TUNE_GEMM_SDMMA_ONE_TILE = 6  /* staged tensor cores, one tile per CTA */
} sbm_tune_gemm_numeric;

/* Sort of the block SpGEMM plan's expanded products. */
typedef enum sbm_tune_gemm_sort {
    SBM_TUNE_GEMM_SORT_AUTO = 0,      /* from the mean products per output column */
    SBM_TUNE_GEMM_SORT_SEGMENTED = 1, /* segmented sort, one segment per output column */
    SBM_TUNE_GEMM_SORT_RADIX = 2      /* radix sort of packed (column, row) keys */
} sbm_tune_gemm_sort;

/* CUDA graphs of the sparse Cholesky's level loops (sbm_chol_factor, sbm_chol_solve). */
typedef enum sbm_tune_cuda_graphs {
    SBM_TUNE_CUDA_GRAPHS_AUTO = 0, /* SBM_CUDA_GRAPHS as read by sbm_ctx_create (0: off, 1: on,
                                      2: cut), on when unset */
    SBM_TUNE_CUDA_GRAPHS_OFF = 1,  /* plain kernel launches (SBM_CUDA_GRAPHS=0) */
    SBM_TUNE_CUDA_GRAPHS_ON = 2,   /* loops captured once and replayed (SBM_CUDA_GRAPHS=1) */
    SBM_TUNE_CUDA_GRAPHS_CUT = 3   /* replayed, the factor's graph cut at every cuSOLVER call,
                                      its fallback when cuSOLVER cannot be captured
                                      (SBM_CUDA_GRAPHS=2) */
} sbm_tune_cuda_graphs;

typedef struct sbm_tuning {
    sbm_tune_spmv spmv;               /* kernel of sbm_cbc_spmv */
    sbm_tune_csr_spmv csr_spmv;       /* kernel of sbm_csr_spmv */
    int csr_spmv_vector_width;        /* VECTOR: lanes per row, 2, 4, 8, 16 or 32 (0: from the
                                         mean row length); set with csr_spmv_vector_rows */
    int csr_spmv_vector_rows;         /* VECTOR: rows per lane group, 1, 2 or 4 (0: with width 0) */
    int csr_spmv_merge_threads;       /* MERGE: threads per CTA (0: the library's configuration);
                                         set with csr_spmv_merge_items */
    int csr_spmv_merge_items;         /* MERGE: items per thread (0: with threads 0) */
    int csr_spmv_merge_streaming;     /* MERGE, threads set: 1 streams the loads of A, 0 not */
    int csr_spmv_merge_prefetch;      /* MERGE, threads set: 1 persistent grid loading ahead (with
                                         streaming), 0 not. Compiled (threads, items, streaming,
                                         prefetch): (128,7,0,0) (256,7,0,0) (128,11,0,0)
                                         (64,5,0,0) (256,5,0,0) (128,7,1,0) (256,7,1,0)
                                         (128,7,1,1) (256,7,1,1) (128,5,1,1); default (256,7,1,0) */
    sbm_tune_csr_spmm csr_spmm;       /* kernel of sbm_csr_spmm */
    sbm_tune_csr_gemm csr_gemm;       /* path of sbm_csr_gemm_plan */
    sbm_tune_gemm_numeric gemm_numeric; /* numeric kernel of sbm_cbc_gemm_plan */
    int gemm_tile_blocks;             /* staged kernels: output blocks per tile (0: the library's
                                         tile; else clamped to what the shape holds); set with
                                         gemm_tile_entries */
    int gemm_tile_entries;            /* staged kernels: entries per chunk, 1 to 4096 (0: with
                                         blocks 0) */
    int gemm_tile_grid;               /* staged kernels: CTAs (0: persistent or one per tile as
                                         chosen; at most one per tile) */
    sbm_tune_gemm_sort gemm_sort;     /* sort of sbm_cbc_gemm_plan */
    int chol_dense_front;             /* sbm_chol_factor/_solve on CUDA: fronts of at least this
                                         many rows (scalars) go to cuSOLVER/cuBLAS, smaller ones to
                                         the batched kernels (0: the library's threshold, 128;
                                         1: every front to cuSOLVER; INT_MAX: every front batched) */
    int num_threads;                  /* CPU backend: threads a call may use, 1 to 64 (0:
                                         SBM_NUM_THREADS as read by sbm_ctx_create, else the
                                         online cores); results are bitwise the same for any */
    sbm_tune_cuda_graphs cuda_graphs; /* CUDA graphs of the sparse Cholesky; results are bitwise
                                         the same either way */
} sbm_tuning;

/* @return the library's own choice everywhere (every field zero). */
sbm_tuning sbm_tuning_default(void);
/* Set the context's tuning (NULL restores sbm_tuning_default()); calls made afterwards use it.
 * @return SBM_ERR_INVALID_ARGUMENT naming the field and its value for a value outside its enum,
 *         list or range, a configuration not compiled, a pair given half (vector width and
 *         rows, merge threads and items, tile blocks and entries), or a configuration field set
 *         for another kernel than the one forced; the context's tuning is then unchanged. */
sbm_status sbm_ctx_set_tuning(sbm_ctx *ctx, const sbm_tuning *tuning);
/* *tuning = the context's tuning. @return SBM_ERR_NULL_ARGUMENT if tuning is NULL. */
sbm_status sbm_ctx_get_tuning(sbm_ctx *ctx, sbm_tuning *tuning);

/* Dense arrays of doubles in the context's memory space (device memory on CUDA), for the x, y,
 * B and C operands of SpMV and SpMM, so that programs need no CUDA headers. Allocated through
 * the context's allocator: destroy an array before changing the allocator. count == 0 gives a
 * valid, unusable pointer. */
sbm_status sbm_array_create(sbm_ctx *ctx, int64_t count, double **array);
/* Releases an array made by sbm_array_create in ctx (NULL is ignored). */
void sbm_array_destroy(sbm_ctx *ctx, double *array);
/* array[0..count) = h_src[0..count), from host memory; complete on return. */
sbm_status sbm_array_upload(sbm_ctx *ctx, double *array, const double *h_src, int64_t count);
/* h_dst[0..count) = array[0..count), to host memory; waits for queued work on the stream. */
sbm_status sbm_array_download(sbm_ctx *ctx, double *h_dst, const double *array, int64_t count);

/* ======================================================================================== */
/* CBC: constant-block-size compressed sparse column matrices                               */
/* ======================================================================================== */

/* nbr x nbc blocks, each r x c dense column-major; scalar size (nbr*r) x (nbc*c). Block k of
 * column j has block row rowind[k] (strictly increasing within a column), values at
 * values + k*r*c. */
typedef struct sbm_cbc sbm_cbc;

/* A view of a matrix's arrays (in the memory of its backend). values may be written to update a
 * matrix in place; the pattern (colptr, rowind) must not be changed through the view. */
typedef struct sbm_cbc_info {
    int64_t nbr;           /* block rows */
    int64_t nbc;           /* block columns */
    int r;                 /* rows per block */
    int c;                 /* columns per block */
    int64_t nnzb;          /* stored blocks */
    const int64_t *colptr; /* column pointers (size nbc+1) */
    const int32_t *rowind; /* block-row indices (size nnzb) */
    double *values;        /* block values (size nnzb*r*c) */
    sbm_backend backend;   /* where the arrays live */
    int device;            /* CUDA device ordinal (0 for CPU) */
} sbm_cbc_info;

/* Create a matrix from host arrays (copied and fully validated). values may be NULL: zeros. */
sbm_status sbm_cbc_create(sbm_ctx *ctx, sbm_cbc **A, int64_t nbr, int64_t nbc, int r, int c,
                          const int64_t *h_colptr, const int32_t *h_rowind, const double *h_values);
/* Wrap (borrow) arrays already in the context's memory space; validated, not copied. The arrays
 * must outlive the matrix; destroy does not free them. nnzb is read from colptr[nbc]. */
sbm_status sbm_cbc_wrap(sbm_ctx *ctx, sbm_cbc **A, int64_t nbr, int64_t nbc, int r, int c,
                        int64_t *colptr, int32_t *rowind, double *values);
/* Build from block triplets (host arrays), summing duplicates. Block t is at
 * h_values + t*r*c, block row h_brow[t], block column h_bcol[t]. */
sbm_status sbm_cbc_from_triplets(sbm_ctx *ctx, sbm_cbc **A, int64_t nbr, int64_t nbc, int r, int c,
                                 int64_t ntriplets, const int32_t *h_brow, const int32_t *h_bcol,
                                 const double *h_values);
/* Destroy a matrix: frees the arrays it owns (not those of sbm_cbc_wrap) with the allocator that
 * made them. NULL is accepted and does nothing. */
void sbm_cbc_destroy(sbm_cbc *A);
/* @return the view of A's arrays (a zeroed struct for A == NULL). */
sbm_cbc_info sbm_cbc_get_info(const sbm_cbc *A);
/* Full validation of A (pointers, ranges, sorted unique rows; with check_finite also NaN/Inf). */
sbm_status sbm_cbc_check(sbm_ctx *ctx, const sbm_cbc *A, int check_finite);
/* Deep copy of src into the memory of ctx (host <-> device copies go through this). */
sbm_status sbm_cbc_copy(sbm_ctx *ctx, const sbm_cbc *src, sbm_cbc **dst);
/* B = A^T (blocks become c x r). */
sbm_status sbm_cbc_transpose(sbm_ctx *ctx, const sbm_cbc *A, sbm_cbc **AT);
/* View the same scalar matrix with another block shape (r x c); a block is stored if any of its
 * scalars is stored in A. Scalar dimensions must be divisible by r and c. (r = c = 1 gives the
 * scalar CSC form.) */
sbm_status sbm_cbc_reblock(sbm_ctx *ctx, const sbm_cbc *A, int r, int c, sbm_cbc **B);
/* C = alpha*A + beta*B (union pattern, structural zeros kept). */
sbm_status sbm_cbc_add(sbm_ctx *ctx, double alpha, const sbm_cbc *A, double beta, const sbm_cbc *B,
                       sbm_cbc **C);

/* ======================================================================================== */
/* CSR: scalar compressed sparse row matrices                                               */
/* ======================================================================================== */

typedef struct sbm_csr sbm_csr;

typedef struct sbm_csr_info {
    int64_t m;             /* rows */
    int64_t n;             /* columns */
    int64_t nnz;           /* stored entries */
    const int64_t *rowptr; /* row pointers (size m+1) */
    const int32_t *colind; /* column indices (size nnz), strictly increasing within a row */
    double *values;        /* values (size nnz) */
    sbm_backend backend;   /* where the arrays live */
    int device;            /* CUDA device ordinal (0 for CPU) */
} sbm_csr_info;

/* A new m x n CSR matrix in the context's memory from host arrays: h_rowptr (m+1 offsets),
 * h_colind and h_values (h_rowptr[m] entries, columns increasing within a row), validated and
 * copied. @return SBM_ERR_INVALID_POINTERS, SBM_ERR_INDEX_OUT_OF_RANGE, SBM_ERR_UNSORTED_INDICES
 * or SBM_ERR_DUPLICATE_INDICES for bad arrays, naming the row; *A is NULL on failure. */
sbm_status sbm_csr_create(sbm_ctx *ctx, sbm_csr **A, int64_t m, int64_t n, const int64_t *h_rowptr,
                          const int32_t *h_colind, const double *h_values);
/* Wrap (borrow) CSR arrays already in the context's memory space; validated, not copied. The
 * arrays must outlive the matrix; destroy does not free them. nnz is read from rowptr[m]. */
sbm_status sbm_csr_wrap(sbm_ctx *ctx, sbm_csr **A, int64_t m, int64_t n, int64_t *rowptr,
                        int32_t *colind, double *values);
/* Scalar triplets (host arrays, 0-based), duplicates summed. */
sbm_status sbm_csr_from_triplets(sbm_ctx *ctx, sbm_csr **A, int64_t m, int64_t n, int64_t nnz,
                                 const int32_t *h_row, const int32_t *h_col, const double *h_values);
/* Destroy a matrix: frees the arrays it owns (not those of sbm_csr_wrap). NULL is accepted. */
void sbm_csr_destroy(sbm_csr *A);
/* @return the view of A's arrays (a zeroed struct for A == NULL). */
sbm_csr_info sbm_csr_get_info(const sbm_csr *A);
/* Full validation of A (pointers, ranges, sorted unique columns; with check_finite also NaN/Inf). */
sbm_status sbm_csr_check(sbm_ctx *ctx, const sbm_csr *A, int check_finite);
/* Deep copy of src into the memory of ctx (host <-> device copies go through this). */
sbm_status sbm_csr_copy(sbm_ctx *ctx, const sbm_csr *src, sbm_csr **dst);
/* *AT = A^T, a new n x m matrix with sorted columns (deterministic on every backend). */
sbm_status sbm_csr_transpose(sbm_ctx *ctx, const sbm_csr *A, sbm_csr **AT);

/* ======================================================================================== */
/* Conversions                                                                              */
/* ======================================================================================== */

typedef enum sbm_layout {
    SBM_LAYOUT_ROW_MAJOR = 0, /* element (i,j) at i*ld + j */
    SBM_LAYOUT_COL_MAJOR = 1  /* element (i,j) at j*ld + i */
} sbm_layout;
/* "row-major" or "column-major"; "unknown layout" for a value not in the enum. */
const char *sbm_layout_name(sbm_layout layout);

/* Scalar CSR of a CBC matrix (every stored block contributes all r*c entries). */
sbm_status sbm_cbc_to_csr(sbm_ctx *ctx, const sbm_cbc *A, sbm_csr **B);
/* CBC view of a scalar CSR matrix with r x c blocks (dimensions must be divisible). */
sbm_status sbm_csr_to_cbc(sbm_ctx *ctx, const sbm_csr *A, int r, int c, sbm_cbc **B);
/* BSR (block CSR, cuSPARSE's layout) arrays of A, written into caller arrays in the context's
 * memory: rowptr[nbr+1], colind[nnzb], values[nnzb*r*c] with each block in block_layout. */
sbm_status sbm_cbc_to_bsr(sbm_ctx *ctx, const sbm_cbc *A, sbm_layout block_layout, int64_t *rowptr,
                          int32_t *colind, double *values);
/* CBC from BSR arrays in the context's memory (copied and validated). */
sbm_status sbm_cbc_from_bsr(sbm_ctx *ctx, sbm_cbc **A, int64_t nbr, int64_t nbc, int r, int c,
                            sbm_layout block_layout, const int64_t *rowptr, const int32_t *colind,
                            const double *values);

/* ======================================================================================== */
/* Block SpGEMM: C = U + alpha * op(A) * op(B)                                              */
/* ======================================================================================== */

typedef enum sbm_op {
    SBM_OP_N = 0, /* the matrix as stored */
    SBM_OP_T = 1  /* its transpose (blocks transposed too) */
} sbm_op;
/* "N" or "T"; "unknown op" for a value not in the enum. */
const char *sbm_op_name(sbm_op op);

/* Flags for the block SpGEMM. */
#define SBM_GEMM_UPPER 1u /* keep only blocks with block row <= block column (C must be square) */

typedef struct sbm_gemm_plan sbm_gemm_plan;

/* Symbolic phase. Computes the pattern of C = U + op(A)*op(B) (U may be NULL) and creates C with
 * that pattern (values zero). The plan keeps everything the numeric phase needs. */
sbm_status sbm_cbc_gemm_plan(sbm_ctx *ctx, sbm_op op_a, const sbm_cbc *A, sbm_op op_b,
                             const sbm_cbc *B, const sbm_cbc *U, unsigned flags,
                             sbm_gemm_plan **plan, sbm_cbc **C);
/* Numeric phase: C = U + alpha*op(A)*op(B) (U NULL: C = alpha*op(A)*op(B)). A, B, U must have the
 * patterns the plan was made with (new values are the point); C must be the matrix the plan made.
 * @return SBM_ERR_PLAN_MISMATCH if a pattern differs. */
sbm_status sbm_cbc_gemm_execute(sbm_ctx *ctx, const sbm_gemm_plan *plan, double alpha,
                                const sbm_cbc *A, const sbm_cbc *B, const sbm_cbc *U, sbm_cbc *C);
/* Plan + execute + destroy plan. */
sbm_status sbm_cbc_gemm(sbm_ctx *ctx, double alpha, sbm_op op_a, const sbm_cbc *A, sbm_op op_b,
                        const sbm_cbc *B, const sbm_cbc *U, unsigned flags, sbm_cbc **C);
/* Destroy a block SpGEMM plan (not the C it made). NULL is accepted and does nothing. */
void sbm_gemm_plan_destroy(sbm_gemm_plan *plan);

/* Statistics of a plan, for benchmarks and tuning. */
typedef struct sbm_gemm_plan_info {
    int64_t products;  /* block products op(A)_ik * op(B)_kj computed per execute */
    int64_t nnzb_c;    /* blocks in C */
    int64_t slices;    /* column slices of B the plan was split into (1 = no slicing) */
    size_t plan_bytes; /* memory the plan holds */
    int fast_path;     /* 1 if the block shape triple has a compiled fast path, 0 if generic */
} sbm_gemm_plan_info;
/* @return the plan's statistics (a zeroed struct for NULL). */
sbm_gemm_plan_info sbm_gemm_plan_get_info(const sbm_gemm_plan *plan);

/* ======================================================================================== */
/* Block-diagonal operations                                                                */
/* ======================================================================================== */

/* A block-diagonal matrix D is a CBC matrix with square blocks, nbr == nbc, and blocks only on
 * the diagonal. */

typedef enum sbm_side {
    SBM_SIDE_LEFT = 0, /* B = D * A */
    SBM_SIDE_RIGHT = 1 /* B = A * D */
} sbm_side;
/* "left" or "right"; "unknown side" for a value not in the enum. */
const char *sbm_side_name(sbm_side side);

/* Dinv = D^{-1} for a block-diagonal D whose every diagonal block is symmetric positive definite
 * (Cholesky). Dinv must already exist with D's pattern (e.g. from sbm_cbc_copy); Dinv == D inverts
 * in place. Only the lower triangle of each block is read. */
sbm_status sbm_bdiag_inverse(sbm_ctx *ctx, const sbm_cbc *D, sbm_cbc *Dinv);
/* B = D*A (left) or A*D (right) with D block-diagonal; B must have A's pattern and shape
 * (B == A scales in place). A missing diagonal block of D counts as zero. */
sbm_status sbm_bdiag_scale(sbm_ctx *ctx, sbm_side side, const sbm_cbc *D, const sbm_cbc *A,
                           sbm_cbc *B);

/* ======================================================================================== */
/* SpMV and SpMM                                                                            */
/* ======================================================================================== */

/* y = alpha*op(A)*x + beta*y for CBC A; x and y in the context's memory. beta == 0 ignores y's
 * old contents (NaN included). */
sbm_status sbm_cbc_spmv(sbm_ctx *ctx, sbm_op op, double alpha, const sbm_cbc *A, const double *x,
                        double beta, double *y);
/* y = alpha*A*x + beta*y for CSR A; beta == 0 ignores y's old contents (NaN included). The CUDA
 * backend picks a CSR kernel (thread per row, lanes per row, or merge-path split) from row
 * statistics it computes once per pattern; the result is deterministic (the same bits on every
 * run), not necessarily bitwise equal to the CPU's. */
sbm_status sbm_csr_spmv(sbm_ctx *ctx, double alpha, const sbm_csr *A, const double *x, double beta,
                        double *y);
/* Storage formats for repeated CSR SpMV (Bell & Garland): a plan converts A once into one of
 * them, and every execute multiplies from that copy. AUTO chooses from cheap row statistics
 * (CUDA: DIA or ELL where they pad A by at most 25% and A has at least 1024 rows per SM, else
 * the CSR kernel sbm_csr_spmv would run). The CPU backend accepts every format but stores and multiplies CSR (the format it
 * reports is SBM_SPMV_CSR_SCALAR); the padding limits below apply there too, so a plan refused
 * on one backend is refused on all. */
typedef enum sbm_spmv_format {
    SBM_SPMV_AUTO = 0,       /* chosen by the backend from the row-length statistics */
    SBM_SPMV_CSR_SCALAR = 1, /* CSR, one thread per row */
    SBM_SPMV_CSR_VECTOR = 2, /* CSR, a warp (or part of one) per row */
    SBM_SPMV_CSR_MERGE = 3,  /* CSR, merge-path split: equal rows+nonzeros per thread */
    SBM_SPMV_COO = 4,        /* COO, segmented reduction */
    SBM_SPMV_ELL = 5,        /* ELLPACK, column-major, padded to the longest row */
    SBM_SPMV_HYB = 6,        /* ELL for the first K entries of each row, COO for the rest */
    SBM_SPMV_DIA = 7         /* diagonals */
} sbm_spmv_format;

typedef struct sbm_spmv_plan sbm_spmv_plan;

/* Convert A (pattern and values) into format for repeated y = alpha*A*x + beta*y. ELL and DIA
 * may store at most 3*nnz + 4096 slots (ELL: rows x longest row; DIA: rows x occupied
 * diagonals); beyond that the format is refused with SBM_ERR_INVALID_ARGUMENT and the measured
 * fill in the message. COO and HYB hold 32-bit row indices (SBM_ERR_OVERFLOW beyond 2^31-1
 * rows). DIA skips stored zeros, so where A holds an explicit zero and x an Inf or NaN its
 * result is finite where the other formats give NaN. The plan owns its copy: later changes to A
 * (or destroying A) do not reach it until sbm_spmv_plan_update with a matrix of the same
 * pattern. *plan is NULL after a failure. */
sbm_status sbm_csr_spmv_plan(sbm_ctx *ctx, const sbm_csr *A, sbm_spmv_format format,
                             sbm_spmv_plan **plan);
/* Refresh the plan's values from A, which must have the pattern the plan was made from (the
 * same matrix, or any with an equal pattern: SBM_ERR_PLAN_MISMATCH otherwise). */
sbm_status sbm_spmv_plan_update(sbm_ctx *ctx, sbm_spmv_plan *plan, const sbm_csr *A);
/* y = alpha*A*x + beta*y with the plan's copy of A; beta == 0 ignores y. Deterministic. */
sbm_status sbm_spmv_plan_execute(sbm_ctx *ctx, const sbm_spmv_plan *plan, double alpha,
                                 const double *x, double beta, double *y);
/* The format the plan stores (never AUTO); SBM_SPMV_AUTO for NULL. */
sbm_spmv_format sbm_spmv_plan_format(const sbm_spmv_plan *plan);
/* Name of a format ("csr-vector", "hyb", ...); "unknown" for a value not in the enum. */
const char *sbm_spmv_format_name(sbm_spmv_format format);
/* Destroy an SpMV plan and its copy of A. NULL is accepted and does nothing. */
void sbm_spmv_plan_destroy(sbm_spmv_plan *plan);

/* C = alpha*A*B + beta*C with dense B (n x ncols) and C (m x ncols) in layout, leading dimensions
 * ldb and ldc (elements). */
sbm_status sbm_csr_spmm(sbm_ctx *ctx, double alpha, const sbm_csr *A, int64_t ncols,
                        sbm_layout layout, const double *B, int64_t ldb, double beta, double *C,
                        int64_t ldc);

/* ======================================================================================== */
/* Scalar CSR SpGEMM: C = A * B                                                             */
/* ======================================================================================== */

typedef struct sbm_csr_plan sbm_csr_plan;

/* Symbolic phase of the scalar SpGEMM C = A*B (A: m x k, B: k x n): computes C's pattern into a
 * new matrix *C and a plan for sbm_csr_gemm_execute, which fills C's values. Rows are sliced to fit the context's memory budget.
 * @return SBM_ERR_DIMENSION_MISMATCH if A's columns differ from B's rows; SBM_ERR_OVERFLOW if C
 * would not fit the index types; *plan and *C are NULL on failure. */
sbm_status sbm_csr_gemm_plan(sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B,
                             sbm_csr_plan **plan, sbm_csr **C);
/* Numeric phase: C's values = A*B for A and B with the patterns the plan was made with (new
 * values are the point), C the matrix the plan made; each entry summed in a fixed order.
 * @return SBM_ERR_PLAN_MISMATCH if a pattern differs. */
sbm_status sbm_csr_gemm_execute(sbm_ctx *ctx, const sbm_csr_plan *plan, const sbm_csr *A,
                                const sbm_csr *B, sbm_csr *C);
/* One-shot *C = A*B (plan, execute and destroy the plan); same errors as the two phases. */
sbm_status sbm_csr_gemm(sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B, sbm_csr **C);
/* Destroy a scalar SpGEMM plan (not the C it made). NULL is accepted and does nothing. */
void sbm_csr_gemm_plan_destroy(sbm_csr_plan *plan);

/* ======================================================================================== */
/* Seeded random numbers                                                                    */
/* ======================================================================================== */

/* SplitMix64 (Steele, Lea, Flood 2014; Vigna's splitmix64.c), the generator behind every seeded
 * input of sbm (synthetic problems, the tool's --seed): a fixed stream, the same on every
 * platform. Advances *state and returns the next output (arithmetic mod 2^64):
 *     state += 0x9E3779B97F4A7C15; z = state;
 *     z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
 *     return z ^ (z >> 31). */
uint64_t sbm_splitmix64(uint64_t *state);
/* (sbm_splitmix64(state) >> 11) * 2^-53: uniform in [0, 1), every value exact in double. */
double sbm_splitmix64_uniform(uint64_t *state);

#ifdef __cplusplus
}
#endif

#endif /* SBM_H */
