/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal declarations of the CUDA backend (the .cu files of kernels/cuda only; never included from C).
 *
 * Layering follows CUB: the public front end (src/) checks arguments and calls the operations
 * table; each table entry (sbm__cuda_*) turns its work into a few device-wide passes; shared
 * primitives (scan, sorts, pattern transpose) live in cuda_primitives.cu; block arithmetic comes
 * from blocks/sbm_blocks.h. Every CUDA call and launch is checked and becomes a status with a
 * message; all work runs on ctx->stream. */
#ifndef SBM_CUDA_INTERNAL_CUH
#define SBM_CUDA_INTERNAL_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "sbm_internal.h"

/* ---------------------------------------------------------------------------------------- */
/* Context state                                                                            */
/* ---------------------------------------------------------------------------------------- */

/* Workspace slots of the pool. An operation carves its temporaries from slot OP_A (and OP_B for
 * a second, independently sized region); the shared primitives take their CUB temporary storage
 * from slot CUB and, for their own arrays, from a slot their caller names. */
enum {
    SBM__WS_OP_A = 0,
    SBM__WS_OP_B = 1,
    SBM__WS_PRIM = 2,
    SBM__WS_CUB = 3,
    SBM__WS_SLOTS = 4
};

/* A growable device buffer, reused across calls; freed with the allocator that made it. */
typedef struct sbm__cuda_buffer {
    void *ptr;               /* device memory (NULL: none yet) */
    size_t bytes;            /* capacity */
    sbm_allocator allocator; /* allocator that made ptr */
} sbm__cuda_buffer;

/* Cached transposed pattern of a CBC matrix (for the row-wise block SpMV): keyed by the
 * pattern id, which is unique per pattern instance, so an entry never goes stale. */
typedef struct sbm__cuda_tcache {
    uint64_t pattern_id;     /* 0: empty */
    int64_t nbr;             /* rows of the pattern */
    int64_t nnzb;            /* blocks */
    int64_t *rowptr;         /* block-row pointers (nbr+1) */
    int32_t *colind;         /* block-column of each block in row order (nnzb) */
    int64_t *perm;           /* original block index of each block in row order (nnzb) */
    sbm_allocator allocator; /* allocator that made the arrays */
    uint64_t last_use;       /* for least-recently-used replacement */
} sbm__cuda_tcache;

#define SBM__TCACHE_SIZE 4

/* Pattern fingerprints already computed, keyed like the row views by the pattern id (a pattern
 * instance never changes, so neither does its fingerprint): re-planning with the same operands
 * launches no fingerprint kernel. */
typedef struct sbm__cuda_hcache {
    uint64_t pattern_id; /* 0: empty */
    int64_t dims[4];     /* nbr, nbc, nnzb, r*64+c (CBC) or m, n, nnz, -1 (CSR) */
    uint64_t hash;
} sbm__cuda_hcache;

#define SBM__HCACHE_SIZE 16

/* Row statistics of a CSR pattern for the choice of the SpMV kernel (cuda_csr_spmv.cu), keyed by
 * pattern id like the caches above, with the merge-path split once a merge kernel needs it. */
typedef struct sbm__cuda_scache {
    uint64_t pattern_id;     /* 0: empty */
    int64_t m, nnz;          /* shape of the pattern */
    int64_t max_row;         /* longest row */
    int64_t warp_slots;      /* sum over groups of 32 rows of 32 x the group's longest row */
    int64_t *tiles;          /* merge-path coordinates (row, entry) of each tile start, or NULL */
    int64_t ntiles;          /* tiles of that split */
    int tile_items;          /* merge items (rows + entries) per tile of that split */
    sbm_allocator allocator; /* allocator that made tiles */
    uint64_t last_use;       /* for least-recently-used replacement */
} sbm__cuda_scache;

#define SBM__SCACHE_SIZE 4

typedef struct sbm__cuda_state {
    int device;                               /* ordinal */
    cudaDeviceProp prop;                      /* its properties */
    sbm__cuda_buffer ws[SBM__WS_SLOTS];       /* workspace pool */
    sbm__cuda_tcache tcache[SBM__TCACHE_SIZE]; /* transposed patterns for SpMV */
    uint64_t tcache_clock;                    /* use counter for the cache */
    sbm__cuda_hcache hcache[SBM__HCACHE_SIZE]; /* pattern fingerprints */
    int hcache_next;                          /* round-robin replacement */
    sbm__cuda_scache scache[SBM__SCACHE_SIZE]; /* CSR row statistics for SpMV */
    uint64_t scache_clock;                    /* use counter for that cache */
    void *blas;                               /* cublasHandle_t of the sparse and dense
                                                 Cholesky (made at the first use,
                                                 cuda_libs.cuh), or NULL */
    void *solver;                             /* cusolverDnHandle_t, likewise */
    sbm__cuda_buffer blas_ws;                 /* that cuBLAS handle's workspace (cuda_libs.cuh):
                                                 ours, so that captured graphs can use it */
    /* CUDA graphs (cuda_graph.cu) */
    int graphs;                               /* SBM_CUDA_GRAPHS at creation, the default of
                                                 sbm_tuning.cuda_graphs: 1 or 2 replay captured
                                                 launch sequences, 0 not */
    uint64_t serial;                          /* unique per context in the process: the owner
                                                 tag of the graphs it captures */
    void *capture_stream;                     /* cudaStream_t the captures record on (made at
                                                 the first), or NULL */
} sbm__cuda_state;

static inline sbm__cuda_state *sbm__cuda_st(sbm_ctx *ctx)
{
    return (sbm__cuda_state *)ctx->backend_data;
}

static inline cudaStream_t sbm__cuda_stream(sbm_ctx *ctx)
{
    return ctx->backend == SBM_BACKEND_CUDA ? (cudaStream_t)ctx->stream : (cudaStream_t)0;
}

/* ---------------------------------------------------------------------------------------- */
/* Error handling                                                                           */
/* ---------------------------------------------------------------------------------------- */

/* Turn a CUDA error into SBM_ERR_CUDA (SBM_ERR_OUT_OF_MEMORY for cudaErrorMemoryAllocation)
 * with a message naming what failed. Clears the sticky-free last error. */
sbm_status sbm__cuda_fail(sbm_ctx *ctx, cudaError_t err, const char *what, const char *file,
                          int line);

#define SBM__CU(ctx, call, what)                                                            \
    do {                                                                                    \
        cudaError_t sbm__e_ = (call);                                                       \
        if (sbm__e_ != cudaSuccess) {                                                       \
            st = sbm__cuda_fail((ctx), sbm__e_, (what), __FILE__, __LINE__);                \
            goto done;                                                                      \
        }                                                                                   \
    } while (0)

/* After a kernel launch: a launch error is reported at once. */
#define SBM__LAUNCHED(ctx, what) SBM__CU((ctx), cudaGetLastError(), (what))

/* Propagate a status inside a function with a `done:` cleanup label. */
#define SBM__CK(expr)                                                                       \
    do {                                                                                    \
        st = (expr);                                                                        \
        if (st != SBM_SUCCESS) goto done;                                                   \
    } while (0)

/* ---------------------------------------------------------------------------------------- */
/* Memory helpers (cuda_backend.cu)                                                         */
/* ---------------------------------------------------------------------------------------- */

/* Make ctx's device current (contexts on different devices may share a thread). */
sbm_status sbm__cuda_enter(sbm_ctx *ctx);
/* A workspace buffer of at least bytes from the pool slot (contents undefined). Growing waits
 * for the stream first, since queued work may still use the old buffer. */
sbm_status sbm__cuda_workspace(sbm_ctx *ctx, int slot, size_t bytes, void **ptr);
/* Host <- device (waits), device <- host, device <- device, on the context's stream. */
sbm_status sbm__cuda_d2h(sbm_ctx *ctx, void *h_dst, const void *d_src, size_t bytes);
sbm_status sbm__cuda_h2d(sbm_ctx *ctx, void *d_dst, const void *h_src, size_t bytes);
sbm_status sbm__cuda_d2d(sbm_ctx *ctx, void *d_dst, const void *d_src, size_t bytes);
sbm_status sbm__cuda_zero(sbm_ctx *ctx, void *d_dst, size_t bytes);
sbm_status sbm__cuda_sync(sbm_ctx *ctx);
/* Bytes of free device memory now (cudaMemGetInfo). */
sbm_status sbm__cuda_free_memory(sbm_ctx *ctx, size_t *free_bytes);
/* Temporary-memory budget: the context's, or the default (a fraction of free memory). */
sbm_status sbm__cuda_budget(sbm_ctx *ctx, size_t *budget);

/* One buffer carved into aligned pieces, CUB style: add() every piece, then bind to a base. */
typedef struct sbm__carve {
    size_t total;
} sbm__carve;
static inline size_t sbm__carve_add(sbm__carve *c, size_t bytes)
{
    size_t off = c->total;
    c->total += (bytes + 255) & ~(size_t)255;
    return off;
}

/* Launch geometry for a grid-stride loop over n items. */
static inline unsigned sbm__grid(int64_t n, int threads)
{
    int64_t b = (n + threads - 1) / threads;
    if (b < 1) b = 1;
    if (b > 65535LL * 32) b = 65535LL * 32; /* grid-stride loops cover the rest */
    return (unsigned)b;
}

/* Number of bits needed to hold values 0..n-1 (at least 1). */
static inline int sbm__bits_for(int64_t n)
{
    int b = 1;
    while (b < 63 && ((int64_t)1 << b) < n) b++;
    return b;
}

/* ---------------------------------------------------------------------------------------- */
/* CUDA graphs (cuda_graph.cu)                                                              */
/* ---------------------------------------------------------------------------------------- */

/* A launch sequence that depends only on fixed structure (the sparse Cholesky's level loops),
 * captured once into a CUDA graph and replayed: one launch instead of thousands. The first run
 * is plain, which loads what cuBLAS, cuSOLVER and the lazily loaded modules load at a first
 * call (a capture must not); the second captures on the context's capture stream
 * (cudaStreamCaptureModeThreadLocal: a call that cannot be captured, such as an allocation or a
 * synchronisation, fails the capture instead of running) and launches; later ones launch. A
 * capture that fails ends cleanly, leaves the context's last error as it was, runs the sequence
 * plain and marks the graph so that it is not tried again. */
typedef struct sbm__cuda_graph {
    cudaGraphExec_t exec; /* the instantiated graph, or NULL */
    uint64_t owner;       /* serial of the context that captured it (its handles' workspaces) */
    int warm;             /* the sequence ran plain once */
    int failed;           /* a capture failed: plain launches from now on */
} sbm__cuda_graph;

/* Queues the sequence on stream s: launches and stream-ordered calls only (no allocation, no
 * synchronisation, no copy to the host), every pointer and scalar argument valid and unchanged
 * for as long as the graph lives (what changes between calls goes in buffers the graph reads).
 * During a capture s is the capture stream and so is sbm__cuda_stream(ctx), so that helpers
 * which queue on the context's stream are captured too; anything they do that a capture does
 * not allow fails the capture (the sequence then runs plain). */
typedef sbm_status (*sbm__cuda_record_fn)(sbm_ctx *ctx, cudaStream_t s, void *data);

/* Context set-up: SBM_CUDA_GRAPHS, read once ("0": off; unset, empty or "1": on; "2": on, the
 * sparse Cholesky's factor graph cut at every cuSOLVER call, its fallback, forced for tests;
 * else SBM_ERR_INVALID_ARGUMENT) and the serial. */
sbm_status sbm__cuda_graphs_init(sbm_ctx *ctx, sbm__cuda_state *S);
/* Context tear-down: the capture stream. */
void sbm__cuda_graphs_release(sbm__cuda_state *S);
/* Runs record on the context's stream: plain (graphs off, first run, failed capture) or as g's
 * graph (captured at the second run, or again when another context captured it). */
sbm_status sbm__cuda_graph_run(sbm_ctx *ctx, sbm__cuda_graph *g, sbm__cuda_record_fn record,
                               void *data);
/* Destroys g's graph (the caller makes its device current) and clears g. */
void sbm__cuda_graph_reset(sbm__cuda_graph *g);

/* The context's graphs, its tuning's cuda_graphs else SBM_CUDA_GRAPHS at its creation: 0 off;
 * 1 on; 2 on, cut at cuSOLVER calls. */
static inline int sbm__cuda_graphs_on(sbm_ctx *ctx)
{
    switch (ctx->tuning.cuda_graphs) {
    case SBM_TUNE_CUDA_GRAPHS_OFF: return 0;
    case SBM_TUNE_CUDA_GRAPHS_ON: return 1;
    case SBM_TUNE_CUDA_GRAPHS_CUT: return 2;
    default: return sbm__cuda_st(ctx)->graphs;
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Primitives (cuda_primitives.cu)                                                          */
/* ---------------------------------------------------------------------------------------- */

/* out[0..n) = exclusive prefix sum of in[0..n) (in == out allowed). */
sbm_status sbm__cuda_scan_i64(sbm_ctx *ctx, const int64_t *d_in, int64_t *d_out, int64_t n);
/* Sum of in[0..n) into *d_out (device). */
sbm_status sbm__cuda_sum_i64(sbm_ctx *ctx, const int64_t *d_in, int64_t *d_out, int64_t n);

/* Stable LSD radix sort of (key, value) pairs on the low `bits` bits of the keys. Temporary CUB
 * storage from the pool's CUB slot. */
sbm_status sbm__cuda_radix_pairs_u32(sbm_ctx *ctx, const uint32_t *keys_in, uint32_t *keys_out,
                                     const uint64_t *vals_in, uint64_t *vals_out, int64_t n,
                                     int bits);
sbm_status sbm__cuda_radix_pairs_u64(sbm_ctx *ctx, const uint64_t *keys_in, uint64_t *keys_out,
                                     const uint64_t *vals_in, uint64_t *vals_out, int64_t n,
                                     int bits);
/* CUB temporary bytes the radix sorts above need for n items. */
sbm_status sbm__cuda_radix_pairs_temp(sbm_ctx *ctx, int key_bytes, int64_t n, size_t *bytes);

/* Stable segmented sort of (int32 key, uint64 value) pairs; segment s is
 * [offsets[s], offsets[s+1]). CUB temporary storage from the pool's CUB slot. */
sbm_status sbm__cuda_segsort_pairs(sbm_ctx *ctx, const int32_t *keys_in, int32_t *keys_out,
                                   const uint64_t *vals_in, uint64_t *vals_out, int64_t n,
                                   int64_t nseg, const int64_t *d_offsets);
sbm_status sbm__cuda_segsort_pairs_temp(sbm_ctx *ctx, int64_t n, int64_t nseg,
                                        const int64_t *d_offsets, size_t *bytes);

/* Transposed pattern of a compressed pattern (nmajor x nminor, CSC or CSR alike): tptr
 * (nminor+1), tind (nnz: the major index of each entry, increasing within each minor line) and
 * perm (nnz: original entry index). Scratch arrays come from pool slot `slot`. */
sbm_status sbm__cuda_pattern_transpose(sbm_ctx *ctx, int slot, int64_t nmajor, int64_t nminor,
                                       int64_t nnz, const int64_t *ptr, const int32_t *ind,
                                       int64_t *tptr, int32_t *tind, int64_t *perm);

/* ---------------------------------------------------------------------------------------- */
/* Operations (one file per group)                                                          */
/* ---------------------------------------------------------------------------------------- */

/* The operations' prototypes (sbm__cuda_<name>, C linkage) come from the lists of the kernel
 * tables: core_backend.h (the core table, kernels/cuda/cuda_backend.cu), solve_kernels.h,
 * ba_kernels.h and slam_kernels.h. Below, what the components share besides. */

/* cuda_matrix.cu: row-major view of A's pattern (cached per pattern id in the context). */
sbm_status sbm__cuda_cbc_rows(sbm_ctx *ctx, const sbm_cbc *A, const int64_t **rowptr,
                              const int32_t **colind, const int64_t **perm);
void sbm__cuda_tcache_clear(sbm_ctx *ctx);

/* cuda_csr_spmv.cu: the CSR row-statistics cache; longest row and warp slots (sum over groups of
 * 32 rows of 32 x the group's longest row) of A's pattern, from that cache (computed on a miss). */
void sbm__cuda_scache_clear(sbm_ctx *ctx);
sbm_status sbm__cuda_csr_row_stats(sbm_ctx *ctx, const sbm_csr *A, int64_t *max_row,
                                   int64_t *warp_slots);

/* cuda_chol.cu: destroys the context's cuBLAS and cuSOLVER handles and cuBLAS's workspace
 * (ctx_destroy). */
void sbm__cuda_chol_release(sbm_ctx *ctx);

/* ---------------------------------------------------------------------------------------- */
/* Device helpers                                                                           */
/* ---------------------------------------------------------------------------------------- */

#ifdef __CUDACC__
/* First index in [lo, hi) with a[index] > v (hi if none). */
template <class T, class V>
__device__ __forceinline__ int64_t sbm__upper_bound(const T *a, int64_t lo, int64_t hi, V v)
{
    while (lo < hi) {
        int64_t mid = lo + ((hi - lo) >> 1);
        if (a[mid] <= v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}
/* First index in [lo, hi) with a[index] >= v (hi if none). */
template <class T, class V>
__device__ __forceinline__ int64_t sbm__lower_bound(const T *a, int64_t lo, int64_t hi, V v)
{
    while (lo < hi) {
        int64_t mid = lo + ((hi - lo) >> 1);
        if (a[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}
#define SBM__GRID_STRIDE(i, n)                                                              \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);               \
         i += (int64_t)blockDim.x * gridDim.x)
#endif

#endif /* SBM_CUDA_INTERNAL_CUH */
