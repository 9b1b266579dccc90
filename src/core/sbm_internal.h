/* Internal declarations shared by the front end (src/), the CPU backend (src/cpu_*.c) and the
 * CUDA backend (src/cuda/). Plain C; src/cuda/ includes it from C++ through extern "C". */
#ifndef SBM_INTERNAL_H
#define SBM_INTERNAL_H

#include "sbm.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if [a, a+abytes) and [b, b+bbytes) share a byte; empty ranges overlap nothing (aliasing
 * checks of the front end). */
static inline int sbm__ranges_overlap(const void *a, uint64_t abytes, const void *b,
                                      uint64_t bbytes)
{
    if (!a || !b || abytes == 0 || bbytes == 0) return 0;
    const uint64_t a0 = (uint64_t)(uintptr_t)a, b0 = (uint64_t)(uintptr_t)b;
    const uint64_t a1 = abytes > UINT64_MAX - a0 ? UINT64_MAX : a0 + abytes;
    const uint64_t b1 = bbytes > UINT64_MAX - b0 ? UINT64_MAX : b0 + bbytes;
    return a0 < b1 && b0 < a1;
}

/* Bytes spanned by count doubles (saturating). */
static inline uint64_t sbm__dbytes(int64_t count)
{
    if (count <= 0) return 0;
    return (uint64_t)count > UINT64_MAX / sizeof(double) ? UINT64_MAX
                                                         : (uint64_t)count * sizeof(double);
}

/* qsort comparator: ascending int32_t. */
static inline int sbm__cmp_i32(const void *a, const void *b)
{
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* ---------------------------------------------------------------------------------------- */
/* Objects                                                                                  */
/* ---------------------------------------------------------------------------------------- */

#define SBM__MSG_SIZE 1024
/* Depth of nested public calls whose names messages keep (deeper ones are still nested). */
#define SBM__NEST_MAX 8

struct sbm__backend_ops;

/* Traffic through a context, for tests that pin down where data moves: host<->device copies
 * (counted by the device backends' copy, also for a host-side context that downloads) and
 * allocations in the context's memory space (sbm__alloc and the CUDA workspace pool). */
typedef struct sbm__stats {
    uint64_t h2d_copies;   /* host -> device copies */
    uint64_t h2d_bytes;
    uint64_t d2h_copies;   /* device -> host copies */
    uint64_t d2h_bytes;
    uint64_t allocs;       /* allocations in the context's memory space */
    uint64_t alloc_bytes;
    /* chol-graph */
    uint64_t graph_launches; /* CUDA graphs launched (src/cuda/cuda_graph.cu) */
} sbm__stats;

struct sbm_ctx {
    sbm_backend backend;                 /* CPU or CUDA */
    int device;                          /* CUDA device ordinal */
    const struct sbm__backend_ops *ops;  /* the backend's kernels */
    struct CUstream_st *stream;          /* CUDA stream (NULL = default stream) */
    size_t memory_budget;                /* 0 = backend default */
    sbm_allocator allocator;             /* allocator for the backend's memory space */
    int custom_allocator;                /* 1 if the user installed a hook */
    const char *fn;                      /* public call in progress, for messages */
    sbm_status last_status;              /* status of the last failure */
    char message[SBM__MSG_SIZE];         /* message of the last failure */
    void *backend_data;                  /* backend state (CUDA: workspace pool, properties) */
    sbm__stats stats;                    /* transfers and allocations (sbm__stats_*) */
    int depth;                           /* public calls nested inside fn (SBM__NESTED) */
    const char *nest_fn[SBM__NEST_MAX];  /* their names, outermost first (NULL: internal) */
    sbm_tuning tuning;                   /* kernel overrides (sbm_ctx_set_tuning), checked */
};

/* Merge-path CSR SpMV configurations the CUDA backend compiles, X(index, threads, items per
 * thread, streaming loads of A, persistent grid loading ahead), and the default index: one list
 * for the kernels (src/cuda) and the check of sbm_ctx_set_tuning (src/core/context.c). */
#define SBM__CSR_MERGE_CONFIGS(X)                                                                \
    X(0, 128, 7, 0, 0) X(1, 256, 7, 0, 0) X(2, 128, 11, 0, 0) X(3, 64, 5, 0, 0)                   \
    X(4, 256, 5, 0, 0) X(5, 128, 7, 1, 0) X(6, 256, 7, 1, 0) X(7, 128, 7, 1, 1)                   \
    X(8, 256, 7, 1, 1) X(9, 128, 5, 1, 1)
#define SBM__CSR_MERGE_DEFAULT 6

struct sbm_cbc {
    int64_t nbr;           /* block rows */
    int64_t nbc;           /* block columns */
    int r;                 /* rows per block */
    int c;                 /* columns per block */
    int64_t nnzb;          /* stored blocks */
    int64_t *colptr;       /* column pointers (size nbc+1) */
    int32_t *rowind;       /* block-row indices (size nnzb) */
    double *values;        /* block values, column-major blocks (size nnzb*r*c) */
    sbm_backend backend;   /* memory space of the arrays */
    int device;            /* CUDA device ordinal */
    int owns;              /* 1: arrays allocated by the library and freed by destroy */
    sbm_allocator allocator; /* how the arrays were allocated (owns == 1) */
    const struct sbm__backend_ops *ops; /* backend that frees the struct's arrays */
    uint64_t pattern_id;   /* unique per pattern instance; equal ids mean equal patterns */
};

struct sbm_csr {
    int64_t m;             /* rows */
    int64_t n;             /* columns */
    int64_t nnz;           /* stored entries */
    int64_t *rowptr;       /* row pointers (size m+1) */
    int32_t *colind;       /* column indices (size nnz) */
    double *values;        /* values (size nnz) */
    sbm_backend backend;   /* memory space of the arrays */
    int device;            /* CUDA device ordinal */
    int owns;              /* 1: arrays allocated by the library and freed by destroy */
    sbm_allocator allocator; /* how the arrays were allocated (owns == 1) */
    const struct sbm__backend_ops *ops; /* backend that frees the struct's arrays */
    uint64_t pattern_id;   /* unique per pattern instance */
};

/* ---------------------------------------------------------------------------------------- */
/* Errors (src/core/status.c)                                                               */
/* ---------------------------------------------------------------------------------------- */

/* Record a failure: the message becomes "<ctx->fn>: <formatted text>", with the names of the
 * nested public calls in progress between them ("sbm_ba_solve: sbm_bdiag_inverse: ..."), so a
 * failure deep inside is reported under the call the user made. @return status. */
sbm_status sbm__error(sbm_ctx *ctx, sbm_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
sbm_status sbm__verror(sbm_ctx *ctx, sbm_status status, const char *fmt, va_list ap);

/* Every public entry point that takes a context starts with this. Outside a nested call it
 * names the call for messages; inside one (SBM__NESTED) the outer name stays and this one is
 * recorded at its depth. */
#define SBM__ENTER(ctx, name)                                              \
    do {                                                                   \
        if ((ctx) == NULL) return sbm__null_ctx_error(name);               \
        if ((ctx)->depth == 0)                                             \
            (ctx)->fn = (name);                                            \
        else if ((ctx)->depth <= SBM__NEST_MAX)                            \
            (ctx)->nest_fn[(ctx)->depth - 1] = (name);                     \
    } while (0)
sbm_status sbm__null_ctx_error(const char *fn);

/* A public function (or an internal one that may call public ones) called from inside the
 * library: `st = SBM__NESTED(ctx, sbm_cbc_spmv(ctx, ...));`. Messages keep the outer call's
 * name. Internal *_checked entries below skip checks of operands the caller already checked.
 * The comma operator sequences the depth change around the call. */
#define SBM__NESTED(ctx, call) (sbm__nest_enter(ctx), sbm__nest_leave((ctx), (call)))
static inline void sbm__nest_enter(sbm_ctx *ctx)
{
    if (ctx->depth < SBM__NEST_MAX) ctx->nest_fn[ctx->depth] = NULL;
    ctx->depth++;
}
static inline sbm_status sbm__nest_leave(sbm_ctx *ctx, sbm_status st)
{
    ctx->depth--;
    return st;
}
/* Entries for nested calls (through SBM__NESTED) whose caller vouches that D is block diagonal
 * (for the inverse: with every diagonal block stored), having made or checked it itself: they
 * skip the check that reads D's pattern, a download on a device backend, and run the others.
 * Messages name them as the public calls (src/core/bdiag.c). */
sbm_status sbm__bdiag_inverse_checked(sbm_ctx *ctx, const sbm_cbc *D, sbm_cbc *Dinv);
sbm_status sbm__bdiag_scale_checked(sbm_ctx *ctx, sbm_side side, const sbm_cbc *D,
                                    const sbm_cbc *A, sbm_cbc *B);

/* Propagate a failure. */
#define SBM__TRY(expr)                                  \
    do {                                                \
        sbm_status sbm__st_ = (expr);                   \
        if (sbm__st_ != SBM_SUCCESS) return sbm__st_;   \
    } while (0)

/* ---------------------------------------------------------------------------------------- */
/* Memory (src/core/memory.c)                                                               */
/* ---------------------------------------------------------------------------------------- */

/* Allocate bytes in the context's memory space through its allocator; on failure records
 * SBM_ERR_OUT_OF_MEMORY naming what and the size and returns NULL. bytes == 0 allocates 1 byte
 * so that a valid pointer is returned. */
void *sbm__alloc(sbm_ctx *ctx, size_t bytes, const char *what);
void sbm__free(sbm_ctx *ctx, void *ptr);
/* Host memory in a CPU context goes through the context allocator; in other contexts through
 * malloc (host scratch of device backends). Same error behaviour as sbm__alloc. */
void *sbm__host_alloc(sbm_ctx *ctx, size_t bytes, const char *what);
void sbm__host_free(sbm_ctx *ctx, void *ptr);
/* n*size with overflow check; on overflow records SBM_ERR_OVERFLOW and returns 0 with *ok = 0. */
size_t sbm__mul_size(sbm_ctx *ctx, size_t n, size_t size, const char *what, int *ok);
/* Copy bytes from memory of src_backend (ops src_ops) into ctx's memory space. A device-to-host
 * copy is done by the source backend's copy with ctx (a CPU context): device backends must accept
 * that (kind 1, the default stream, synchronous). */
sbm_status sbm__copy_between(sbm_ctx *ctx, const struct sbm__backend_ops *src_ops,
                             sbm_backend src_backend, void *dst, const void *src, size_t bytes);
/* The default host allocator (malloc/free). */
extern const sbm_allocator sbm__malloc_allocator;

/* ---------------------------------------------------------------------------------------- */
/* Matrices (src/core/cbc.c, csr.c, matrix.c)                                               */
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
 * uninitialised; colptr allocated with nbc+1 entries). */
sbm_status sbm__cbc_alloc(sbm_ctx *ctx, int64_t nbr, int64_t nbc, int r, int c, int64_t nnzb,
                          sbm_cbc **A);
sbm_status sbm__csr_alloc(sbm_ctx *ctx, int64_t m, int64_t n, int64_t nnz, sbm_csr **A);

/* New matrix in ctx from validated host arrays (src/core/host_build.c). */
sbm_status sbm__cbc_upload(sbm_ctx *ctx, int64_t nbr, int64_t nbc, int r, int c,
                           const int64_t *h_colptr, const int32_t *h_rowind,
                           const double *h_values, sbm_cbc **A);
sbm_status sbm__csr_upload(sbm_ctx *ctx, int64_t m, int64_t n, const int64_t *h_rowptr,
                           const int32_t *h_colind, const double *h_values, sbm_csr **A);
/* Compress host triplets (segment seg[t], index ind[t], bs values each) into sorted,
 * duplicate-free segments: ptr (nseg+1), indices and values, host arrays to free with
 * sbm__host_free. Duplicates are summed in input order, so the result is deterministic. Serves
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

/* Argument checks for the front end. Each records the error with the argument name. */
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

/* ---------------------------------------------------------------------------------------- */
/* Backends                                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* Each backend fills one table; the front end checks arguments and dispatches through it.
 * Operands are already checked (non-NULL, right backend, shapes agree) when these are called. */
struct sbm__chol_symbolic; /* src/core/chol_internal.h */
struct sbm__chol_numeric;

/* ba-lin: a bundle-adjustment model in the context's memory, for the backends' linearisation
 * (src/ba/ba.c uploads it once per system). Parameters are one vector [cameras (9 each, BAL
 * order); points (3 each)]. Every sum below runs over a list in increasing observation order,
 * so the results do not depend on the thread count or the device. */
#define SBM__BA_OBS_STRIDE 26 /* scratch doubles per observation: r' (2), Jc' (2x9), Jp' (2x3) */
typedef struct sbm__ba_model {
    int64_t nc, np, nobs;      /* cameras, points, observations */
    int64_t nnzb;              /* blocks of W */
    const int32_t *obs_camera; /* camera of each observation (nobs) */
    const int32_t *obs_point;  /* point of each observation (nobs) */
    const double *obs_xy;      /* measured x, y (2*nobs) */
    const int64_t *cam_ptr;    /* observations of camera i: cam_obs[cam_ptr[i] .. cam_ptr[i+1]) */
    const int32_t *cam_obs;    /*   increasing (nobs) */
    const int64_t *w_colptr;   /* W's pattern (np+1): the blocks of point j */
    const int64_t *blk_ptr;    /* observations of W block b: blk_obs[blk_ptr[b] .. blk_ptr[b+1]) */
    const int32_t *blk_obs;    /*   increasing (nobs); a point's are its blocks' in block order */
    int loss_type;             /* SBM__LOSS_* (sbm_geometry.h) */
    double loss_scale;         /* > 0 */
    double *scratch;           /* SBM__BA_OBS_STRIDE * nobs doubles, the backend's to use */
    void *cameras;             /* nc prepared cameras (sbm__bal_camera of sbm_geometry.h), the
                                  backend's to fill from the parameters */
} sbm__ba_model;

/* Where ba_linearize writes (context memory): the undamped U (81*nc) and V (9*np) values, the
 * damped copies U, V (equal to the undamped ones: damping 0), W (27*nnzb), g = [gc; gp] =
 * -J'^T r' (9*nc + 3*np) and D, the damping scale of every parameter (the diagonal of U and
 * V clamped to [SBM__DAMP_MIN_DIAGONAL, SBM__DAMP_MAX_DIAGONAL] of chol_internal.h). */
typedef struct sbm__ba_lin_out {
    double *U_und, *V_und, *U, *V, *W, *g, *D;
} sbm__ba_lin_out;

/* What ba_linearize reports to the host (the only copy it makes): cost = 0.5 sum rho(|r_k|^2);
 * gmax = max |g|; the first observation whose prediction (bad_prediction) or, the predictions
 * all finite, whose Jacobian or corrected residual (bad_jacobian) is not finite, or -1. A bad
 * prediction leaves every output unchanged; a bad Jacobian leaves them partly written. */
typedef struct sbm__ba_lin_result {
    double cost, gmax;
    int64_t bad_prediction, bad_jacobian;
} sbm__ba_lin_result;

/* slam-gpu: the edges of a pose graph in the backend's memory, for the SLAM ops below (made
 * once by sbm_slam_system_create, src/slam/slam.c). Poses are stored by slot, pose_size values
 * each (dim 2: 3, SE2 x y theta; dim 3: 7, SE3 x y z qx qy qz qw); slots 0 .. free-1 are the free
 * vertices in order (J's block columns), the fixed vertices follow. */
typedef struct sbm__slam_edges {
    int dim;             /* 2 or 3; error dimension d = 3 or 6 */
    int64_t ne;          /* edges */
    const int32_t *v;    /* [2 ne]: the pose slots of edge k's vertices, v[2k] and v[2k+1] */
    const int64_t *blk;  /* [2 ne]: J's block of edge k's first / second vertex, -1 if fixed */
    const double *meas;  /* [pose_size ne]: measurements */
    const double *info;  /* [d d ne]: information matrices, column-major */
    int loss;            /* sbm_loss_type of every edge */
    double loss_scale;   /* its scale a > 0 */
} sbm__slam_edges;

typedef struct sbm__backend_ops {
    const char *name;
    /* memory space */
    void *(*default_alloc)(void *user, size_t bytes);
    void (*default_free)(void *user, void *ptr);
    /* copies within or across the host and the backend's memory (kind: 0 h2b, 1 b2h, 2 b2b) */
    sbm_status (*copy)(sbm_ctx *ctx, void *dst, const void *src, size_t bytes, int kind);
    sbm_status (*memset0)(sbm_ctx *ctx, void *dst, size_t bytes);
    sbm_status (*synchronize)(sbm_ctx *ctx);
    sbm_status (*ctx_init)(sbm_ctx *ctx, int device); /* select/check the device, set backend_data */
    void (*ctx_destroy)(sbm_ctx *ctx);                /* release backend_data */
    sbm_status (*set_stream)(sbm_ctx *ctx, struct CUstream_st *stream); /* may be NULL */

    /* matrices */
    sbm_status (*cbc_validate)(sbm_ctx *ctx, const char *arg, const sbm_cbc *A, int check_finite);
    sbm_status (*csr_validate)(sbm_ctx *ctx, const char *arg, const sbm_csr *A, int check_finite);
    sbm_status (*cbc_transpose)(sbm_ctx *ctx, const sbm_cbc *A, sbm_cbc **AT);
    sbm_status (*csr_transpose)(sbm_ctx *ctx, const sbm_csr *A, sbm_csr **AT);
    sbm_status (*cbc_to_csr)(sbm_ctx *ctx, const sbm_cbc *A, sbm_csr **B);
    sbm_status (*csr_to_cbc)(sbm_ctx *ctx, const sbm_csr *A, int r, int c, sbm_cbc **B);
    sbm_status (*cbc_to_bsr)(sbm_ctx *ctx, const sbm_cbc *A, sbm_layout layout, int64_t *rowptr,
                             int32_t *colind, double *values);
    sbm_status (*cbc_add)(sbm_ctx *ctx, double alpha, const sbm_cbc *A, double beta,
                          const sbm_cbc *B, sbm_cbc **C);

    /* block SpGEMM */
    sbm_status (*gemm_plan)(sbm_ctx *ctx, sbm_op op_a, const sbm_cbc *A, sbm_op op_b,
                            const sbm_cbc *B, const sbm_cbc *U, unsigned flags,
                            sbm_gemm_plan **plan, sbm_cbc **C);
    sbm_status (*gemm_execute)(sbm_ctx *ctx, const sbm_gemm_plan *plan, double alpha,
                               const sbm_cbc *A, const sbm_cbc *B, const sbm_cbc *U, sbm_cbc *C);
    void (*gemm_plan_destroy)(sbm_gemm_plan *plan);

    /* block-diagonal, SpMV, SpMM */
    sbm_status (*bdiag_inverse)(sbm_ctx *ctx, const sbm_cbc *D, sbm_cbc *Dinv);
    sbm_status (*bdiag_scale)(sbm_ctx *ctx, sbm_side side, const sbm_cbc *D, const sbm_cbc *A,
                              sbm_cbc *B);
    sbm_status (*cbc_spmv)(sbm_ctx *ctx, sbm_op op, double alpha, const sbm_cbc *A,
                           const double *x, double beta, double *y);
    sbm_status (*csr_spmv)(sbm_ctx *ctx, double alpha, const sbm_csr *A, const double *x,
                           double beta, double *y);
    sbm_status (*csr_spmm)(sbm_ctx *ctx, double alpha, const sbm_csr *A, int64_t ncols,
                           sbm_layout layout, const double *B, int64_t ldb, double beta, double *C,
                           int64_t ldc);

    /* scalar SpGEMM */
    sbm_status (*csr_gemm_plan)(sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B,
                                sbm_csr_plan **plan, sbm_csr **C);
    sbm_status (*csr_gemm_execute)(sbm_ctx *ctx, const sbm_csr_plan *plan, const sbm_csr *A,
                                   const sbm_csr *B, sbm_csr *C);
    void (*csr_gemm_plan_destroy)(sbm_csr_plan *plan);
    /* optional one-shot C = A*B (sbm_csr_gemm); without it, plan, execute and destroy */
    sbm_status (*csr_gemm)(sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B, sbm_csr **C);

    /* CSR SpMV plans (src/core/spmv_plan.c); plans start with sbm__spmv_plan_base */
    sbm_status (*csr_spmv_plan)(sbm_ctx *ctx, const sbm_csr *A, sbm_spmv_format format,
                                sbm_spmv_plan **plan);
    sbm_status (*csr_spmv_plan_update)(sbm_ctx *ctx, sbm_spmv_plan *plan, const sbm_csr *A);
    sbm_status (*csr_spmv_plan_execute)(sbm_ctx *ctx, const sbm_spmv_plan *plan, double alpha,
                                        const double *x, double beta, double *y);
    void (*spmv_plan_destroy)(sbm_spmv_plan *plan);

    /* pattern fingerprints (see sbm__hash_*_pattern_host), for plan checks */
    sbm_status (*cbc_pattern_hash)(sbm_ctx *ctx, const sbm_cbc *A, uint64_t *hash);
    sbm_status (*csr_pattern_hash)(sbm_ctx *ctx, const sbm_csr *A, uint64_t *hash);

    /* vectors of n >= 1 doubles in the backend's memory (solvers keep theirs there); dot sums in
     * an order fixed by n alone and writes the result to host memory */
    sbm_status (*vec_dot)(sbm_ctx *ctx, int64_t n, const double *x, const double *y,
                          double *h_dot);
    sbm_status (*vec_axpy)(sbm_ctx *ctx, int64_t n, double a, const double *x, double *y);
    sbm_status (*vec_xpay)(sbm_ctx *ctx, int64_t n, const double *x, double a, double *y);
    sbm_status (*vec_scale)(sbm_ctx *ctx, int64_t n, double a, double *x);
    /* *h_max = max |x[i]| (0 for n = 0; NaN if any entry is NaN) */
    sbm_status (*vec_amax)(sbm_ctx *ctx, int64_t n, const double *x, double *h_max);

    /* sparse block Cholesky numeric phase (symbolic analysis by src/solve/, chol_internal.h).
     * chol_factor assembles A (upper block triangle, the planned pattern) plus the damping into
     * the fronts and factors them; when a pivot is not positive (or not finite) it returns
     * SBM_ERR_NOT_POSITIVE_DEFINITE *without* a message and sets *failed to the new block
     * column where it happened (the front end names it). chol_solve: X = (LL^T)^-1 B in A's
     * numbering, B and X in the backend's memory, X may be B. */
    sbm_status (*chol_numeric_create)(sbm_ctx *ctx, const struct sbm__chol_symbolic *sym,
                                      struct sbm__chol_numeric **num);
    sbm_status (*chol_factor)(sbm_ctx *ctx, const struct sbm__chol_symbolic *sym,
                              struct sbm__chol_numeric *num, const sbm_cbc *A,
                              int damping /* sbm_damping */, double lambda, int64_t *failed);
    sbm_status (*chol_solve)(sbm_ctx *ctx, const struct sbm__chol_symbolic *sym,
                             const struct sbm__chol_numeric *num, int64_t nrhs, const double *B,
                             int64_t ldb, double *X, int64_t ldx);
    void (*chol_numeric_destroy)(struct sbm__chol_numeric *num);

    /* ba-lin: bundle-adjustment linearisation (struct sbm__ba_model above). ba_linearize: at
     * params (nc*9 + np*3), residuals and Jacobians with Ceres' loss correction, U, V, W, g, D
     * and the result's scalars (one copy to the host). ba_cost: *h_cost = 0.5 sum rho(|r_k|^2)
     * (+inf when a prediction is not finite). ba_damp: out = und with every diagonal entry d
     * of its nblocks b x b blocks replaced by d + lambda*clamp(d). lm_predicted (BA and SLAM's
     * Levenberg-Marquardt): *h_pred = 0.5 sum step_i (lambda D_i step_i + gsign g_i) over n
     * entries (fixed order), the decrease the damped model predicts (gsign +1 when g is -J^T r as
     * in BA, -1 when it is the gradient J^T Omega e as SLAM's b). */
    sbm_status (*ba_linearize)(sbm_ctx *ctx, const sbm__ba_model *m, const double *params,
                               const sbm__ba_lin_out *out, sbm__ba_lin_result *res);
    sbm_status (*ba_cost)(sbm_ctx *ctx, const sbm__ba_model *m, const double *params,
                          double *h_cost);
    sbm_status (*ba_damp)(sbm_ctx *ctx, int64_t nblocks, int b, double lambda, const double *und,
                          double *out);
    sbm_status (*lm_predicted)(sbm_ctx *ctx, int64_t n, double lambda, const double *D,
                               double gsign, const double *g, const double *step,
                               double *h_pred);

    /* ba-solve: the device-resident BA iteration (src/cpu/cpu_ba_solve.c,
     * src/cuda/cuda_ba_solve.cu). */
    /* Block diagonal of S = U - Y W^T (Y and W: one pattern, nc x np blocks of p x q; U upper
     * block triangle, nc x nc blocks of p x p) into D (nc x nc, block diagonal, every diagonal
     * block stored): D_i = U_ii - sum over the blocks k of W's block row i of Y_k W_k^T, summed
     * in the order of the row list. udiag (nc): the index of U's block (i, i), or -1 (zero);
     * wrow_ptr (nc+1) and wrow_blk (W's nnzb): W's block indices row by row, increasing block
     * column. All in the backend's memory. */
    sbm_status (*ba_schur_diagonal)(sbm_ctx *ctx, const sbm_cbc *U, const int64_t *udiag,
                                    const sbm_cbc *Y, const sbm_cbc *W, const int64_t *wrow_ptr,
                                    const int64_t *wrow_blk, sbm_cbc *D);
    /* x = A^-1 b by a dense Cholesky for symmetric A given by its upper block triangle (square,
     * square blocks, n = nbr*r >= 1 scalars, checked by the front end); b and x (n) in the
     * backend's memory, x may be b. A pivot that is not positive (or not finite) returns
     * SBM_ERR_NOT_POSITIVE_DEFINITE *without* a message, *failed the 0-based scalar column
     * (-1 otherwise). Only that word crosses to the host. */
    sbm_status (*dense_spd_solve)(sbm_ctx *ctx, const sbm_cbc *A, const double *b, double *x,
                                  int64_t *failed);
    /* ---- slam-gpu: pose-graph SLAM iterations in the backend's memory (src/cpu/cpu_slam.c,
     * src/cuda/cuda_slam.cu; used by src/slam). Each output belongs to one edge, slot or
     * column, so the results do not depend on the thread count. ---- */
    /* Edge k at the poses x: rho[k] = rho(e^T Omega e) of E's loss; with w non-NULL also e and
     * w = rho' Omega e (d per edge), J's blocks at E->blk, and (omega non-NULL) the effective
     * information Omega_eff per edge (src/geometry/sbm_pose_edge.h). */
    sbm_status (*slam_linearize)(sbm_ctx *ctx, const sbm__slam_edges *E, const double *x,
                                 double *rho, double *e, double *w, double *J, double *omega);
    /* y[slot j] = x[slot j] (+) alpha dx[d j .. d j + d) for the free slots j < nfree (g2o's
     * increments: SE2 adds and normalises the angle, SE3 sbm__se3_oplus); other slots untouched. */
    sbm_status (*slam_oplus)(sbm_ctx *ctx, int dim, int64_t nfree, double alpha, const double *dx,
                             const double *x, double *y);
    /* The diagonal of nb d x d blocks stored at value offsets pos[j] of V (-1: none, read as 0):
     * D[d j + a] = min(max(V[pos[j] + a (d + 1)], lo), hi). */
    sbm_status (*slam_diag_get)(sbm_ctx *ctx, int64_t nb, int d, const int64_t *pos,
                                const double *V, double lo, double hi, double *D);
    /* V[pos[j] + a (d + 1)] = L[pos[j] + a (d + 1)] + lambda D[d j + a] (D NULL: lambda) where
     * pos[j] >= 0 (V a copy of L with a damped diagonal; the rest of V is left); with blocks
     * non-NULL (every pos[j] >= 0) also blocks[d d j ..] = V's block at pos[j], whole (PCG's
     * block Jacobi); *h_bad is the first j whose damped diagonal is not finite, -1 if none. */
    sbm_status (*slam_diag_add)(sbm_ctx *ctx, int64_t nb, int d, const int64_t *pos, double lambda,
                                const double *D, const double *L, double *V, double *blocks,
                                int64_t *h_bad);
} sbm__backend_ops;

/* Plans start with this header so the front end can check and dispatch them. */
typedef struct sbm__plan_header {
    sbm_backend backend;         /* backend that made the plan */
    int device;                  /* its device */
    const sbm__backend_ops *ops; /* for destroy */
    uint64_t pattern_a;          /* pattern ids of the operands the plan was made with */
    uint64_t pattern_b;
    uint64_t pattern_u;          /* 0 if U was NULL */
    uint64_t pattern_c;          /* the C the plan created */
    uint64_t hash_a;             /* pattern fingerprints, to accept equal patterns in new objects */
    uint64_t hash_b;
    uint64_t hash_u;
    sbm_gemm_plan_info info;     /* block SpGEMM plans: statistics, filled by the backend */
} sbm__plan_header;

/* SpMV plans start with this; the backend's state follows. The front end fills h, m, n, nnz;
 * the backend fills format (never AUTO). */
typedef struct sbm__spmv_plan_base {
    sbm__plan_header h;
    sbm_spmv_format format; /* the format stored */
    int64_t m, n, nnz;      /* A's shape and entries */
} sbm__spmv_plan_base;

/* Padding limit of the ELL and DIA SpMV formats, the same on every backend (so a plan that
 * works on one works on all): a conversion that would store more than
 * SBM__SPMV_MAX_FILL * nnz + SBM__SPMV_FILL_SLACK slots (ELL: rows x longest row; DIA: rows x
 * occupied diagonals) is refused with SBM_ERR_INVALID_ARGUMENT and the measured fill
 * (src/core/spmv_plan.c). width is the longest row (ELL) or the number of diagonals (DIA). */
#define SBM__SPMV_MAX_FILL 3
#define SBM__SPMV_FILL_SLACK 4096
sbm_status sbm__spmv_check_fill(sbm_ctx *ctx, sbm_spmv_format format, int64_t m, int64_t nnz,
                                int64_t width);

/* Flag bit sbm_cbc_gemm adds for gemm_plan (never a user flag): the plan will be executed exactly
 * once, right away, with the same operands, then destroyed. A backend may skip what only reuse
 * needs, and leave C's values for that execute to write; it may also ignore the bit. */
#define SBM__GEMM_ONCE 0x80000000u

extern const sbm__backend_ops sbm__cpu_ops;
/* Inverse of one SPD n x n block on the host, for the solvers (src/cpu/cpu_bdiag.c, by
 * sbm_blk_spd_inverse: the library's one Cholesky inverse). a (column-major, lower triangle
 * read) is overwritten by its Cholesky factor; inv gets the full inverse. @return 0, or -1 if
 * a is not numerically SPD or the inverse is not finite. */
int sbm__host_spd_inverse(int n, double *a, double *inv);
/* NULL when the library is built without CUDA (defined in src/cuda/ with CUDA, src/core/context.c without). */
const sbm__backend_ops *sbm__cuda_ops(void);
/* Number of CUDA devices (0 without CUDA); same split as sbm__cuda_ops. */
int sbm__cuda_device_count(void);
/* CUDA graph executables alive in the process (0 without CUDA); same split as sbm__cuda_ops. */
int64_t sbm__cuda_graphs_live(void);

/* Host view of a CBC pattern for front-end checks (src/core/gemm.c): on the CPU backend the matrix's
 * own arrays, otherwise host copies; release with sbm__cbc_pattern_release. */
sbm_status sbm__cbc_pattern_to_host(sbm_ctx *ctx, const sbm_cbc *A, const int64_t **colptr,
                                    const int32_t **rowind);
void sbm__cbc_pattern_release(sbm_ctx *ctx, const sbm_cbc *A, const int64_t *colptr,
                              const int32_t *rowind);
/* Pattern checks of plans (src/core/gemm.c). The fingerprint of X's pattern, computed where it
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

/* ---------------------------------------------------------------------------------------- */
/* Host arrays owned by objects, vectors and transfers (host_util.c)                        */
/* ---------------------------------------------------------------------------------------- */

/* The allocator for host arrays that outlive the call (objects remember it, like matrices do):
 * the context's hook on the CPU backend, malloc otherwise. */
sbm_allocator sbm__host_allocator_of(const sbm_ctx *ctx);
/* n*size bytes through allocator a, overflow checked; failures recorded in ctx. */
void *sbm__alloc_with(sbm_ctx *ctx, const sbm_allocator *a, size_t n, size_t size, const char *what);
void sbm__free_with(const sbm_allocator *a, void *ptr);
/* n doubles in the context's memory (freed with ctx->allocator, which the owner records). */
double *sbm__vec_alloc(sbm_ctx *ctx, int64_t n, const char *what);

/* Copies between host arrays and arrays in the context's memory (n doubles). */
sbm_status sbm__vec_upload(sbm_ctx *ctx, double *dst, const double *h_src, int64_t n);
sbm_status sbm__vec_download(sbm_ctx *ctx, double *h_dst, const double *src, int64_t n);
sbm_status sbm__vec_copy(sbm_ctx *ctx, double *dst, const double *src, int64_t n);

/* Vector operations on n doubles in the context's memory, through the backend's table. Sums
 * run in a fixed order on every backend (two runs agree bitwise); a scalar result is the only
 * thing that leaves the device. */
sbm_status sbm__vec_zero(sbm_ctx *ctx, double *x, int64_t n);
sbm_status sbm__vec_dot(sbm_ctx *ctx, int64_t n, const double *x, const double *y, double *h_dot);
/* sqrt(x.x) */
sbm_status sbm__vec_nrm2(sbm_ctx *ctx, int64_t n, const double *x, double *h_nrm);
/* *h_max = max |x[i]| (0 for n <= 0; NaN when an entry is NaN). */
sbm_status sbm__vec_amax(sbm_ctx *ctx, int64_t n, const double *x, double *h_max);
/* y += a x */
sbm_status sbm__vec_axpy(sbm_ctx *ctx, int64_t n, double a, const double *x, double *y);
/* y = x + a y */
sbm_status sbm__vec_xpay(sbm_ctx *ctx, int64_t n, const double *x, double a, double *y);
/* x *= a */
sbm_status sbm__vec_scale(sbm_ctx *ctx, int64_t n, double a, double *x);

/* Transfer and allocation counters of a context (struct sbm__stats). */
static inline void sbm__stats_reset(sbm_ctx *ctx) { memset(&ctx->stats, 0, sizeof ctx->stats); }
static inline sbm__stats sbm__stats_get(const sbm_ctx *ctx) { return ctx->stats; }
/* A copy of kind 0 (host -> device) or 1 (device -> host); kind 2 stays on the device. */
static inline void sbm__stats_copy(sbm_ctx *ctx, int kind, size_t bytes)
{
    if (!ctx || kind == 2) return;
    if (kind == 0) ctx->stats.h2d_copies++, ctx->stats.h2d_bytes += bytes;
    else ctx->stats.d2h_copies++, ctx->stats.d2h_bytes += bytes;
}
static inline void sbm__stats_alloc(sbm_ctx *ctx, size_t bytes)
{
    ctx->stats.allocs++;
    ctx->stats.alloc_bytes += bytes;
}

/* Monotonic wall clock in seconds; with sync, the context's queued work is waited for first. */
double sbm__now(sbm_ctx *ctx, int sync);

#endif /* SBM_INTERNAL_H */
