/* SPDX-License-Identifier: BSD-3-Clause */
/* The backends' kernel table and the plan headers the front ends dispatch through (src/core/context.c finds a backend's table). */
#ifndef SBM_CORE_BACKEND_H
#define SBM_CORE_BACKEND_H

#include "core_matrix.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------- */
/* Backends                                                                                 */
/* ---------------------------------------------------------------------------------------- */

/* Kernel tables, Ginkgo style: each component declares its operations once, in a list
 * X(return type, name, (parameters)) beside its front end, and the list is expanded into the
 * table struct (SBM__KERNEL_FIELD), both backends' prototypes (sbm__cpu_<name>,
 * sbm__cuda_<name>: SBM__KERNEL_CPU_PROTO, SBM__KERNEL_CUDA_PROTO) and both initialisers
 * (positional, in list order, valid C and C++: SBM__KERNEL_CPU_INIT, SBM__KERNEL_CUDA_INIT).
 * Adding an operation is one list line and its two implementations. The core's table is below;
 * the layers above declare theirs the same way, each beside its front end (docs/LAYERS.md). */
#define SBM__KERNEL_FIELD(ret, name, params) ret(*name) params;
#define SBM__KERNEL_CPU_PROTO(ret, name, params) ret sbm__cpu_##name params;
#define SBM__KERNEL_CUDA_PROTO(ret, name, params) ret sbm__cuda_##name params;
#define SBM__KERNEL_CPU_INIT(ret, name, params) sbm__cpu_##name,
#define SBM__KERNEL_CUDA_INIT(ret, name, params) sbm__cuda_##name,
#define SBM__KERNEL_NULL_INIT(ret, name, params) NULL,
#define SBM__KERNEL_NONE(ret, name, params)
/* A layer's kernel table from its list LIST(X): the struct sbm__<t>_kernels, both backends'
 * prototypes, the CPU table sbm__cpu_<t>_kernels, the CUDA table's getter sbm__cuda_<t>_kernels()
 * (NULL without CUDA: the layer's sbm__<t>_kernels.c defines it then) and the lookup of a
 * context's table, sbm__<t>_kernels_of (the same file). One line in each layer's header. */
#define SBM__DECLARE_KERNEL_TABLE(t, LIST)                                                         \
    typedef struct sbm__##t##_kernels {                                                            \
        LIST(SBM__KERNEL_FIELD)                                                                    \
    } sbm__##t##_kernels;                                                                          \
    LIST(SBM__KERNEL_CPU_PROTO)                                                                    \
    LIST(SBM__KERNEL_CUDA_PROTO)                                                                   \
    extern const sbm__##t##_kernels sbm__cpu_##t##_kernels;                                        \
    const sbm__##t##_kernels *sbm__cuda_##t##_kernels(void);                                       \
    const sbm__##t##_kernels *sbm__##t##_kernels_of(const sbm_ctx *ctx);

/* The core table: the backend's memory space and context, and the core operations. Each
 * backend fills one; the front end checks arguments and dispatches through it. Operands are
 * already checked (non-NULL, right backend, shapes agree) when these are called.
 * SBM__CORE_KERNELS(X, X_CUDA): X the operations of both backends, X_CUDA those only the CUDA
 * backend has (NULL in the CPU table: the front end does without them). */
#define SBM__CORE_KERNELS(X, X_CUDA)                                                               \
    /* memory space */                                                                             \
    X(void *, default_alloc, (void *user, size_t bytes))                                           \
    X(void, default_free, (void *user, void *ptr))                                                 \
    /* copies within or across the host and the backend's memory (kind: 0 h2b, 1 b2h, 2 b2b) */    \
    X(sbm_status, copy, (sbm_ctx *ctx, void *dst, const void *src, size_t bytes, int kind))        \
    X(sbm_status, memset0, (sbm_ctx *ctx, void *dst, size_t bytes))                                \
    X_CUDA(sbm_status, synchronize, (sbm_ctx *ctx))                                                \
    /* select/check the device, set backend_data; release it */                                    \
    X_CUDA(sbm_status, ctx_init, (sbm_ctx *ctx, int device))                                       \
    X_CUDA(void, ctx_destroy, (sbm_ctx *ctx))                                                      \
    X_CUDA(sbm_status, set_stream, (sbm_ctx *ctx, struct CUstream_st *stream))                     \
    /* make the context's device current (before an allocation: contexts on several devices    \
     * share a thread) */                                                                          \
    X_CUDA(sbm_status, enter, (sbm_ctx *ctx))                                                      \
                                                                                                   \
    /* matrices */                                                                                 \
    X(sbm_status, cbc_validate,                                                                    \
      (sbm_ctx *ctx, const char *arg, const sbm_cbc *A, int check_finite))                         \
    X(sbm_status, csr_validate,                                                                    \
      (sbm_ctx *ctx, const char *arg, const sbm_csr *A, int check_finite))                         \
    X(sbm_status, cbc_transpose, (sbm_ctx *ctx, const sbm_cbc *A, sbm_cbc **AT))                   \
    X(sbm_status, csr_transpose, (sbm_ctx *ctx, const sbm_csr *A, sbm_csr **AT))                   \
    X(sbm_status, cbc_to_csr, (sbm_ctx *ctx, const sbm_cbc *A, sbm_csr **B))                       \
    X(sbm_status, csr_to_cbc, (sbm_ctx *ctx, const sbm_csr *A, int r, int c, sbm_cbc **B))         \
    X(sbm_status, cbc_to_bsr,                                                                      \
      (sbm_ctx *ctx, const sbm_cbc *A, sbm_layout layout, int64_t *rowptr, int32_t *colind,        \
       double *values))                                                                            \
    X(sbm_status, cbc_add,                                                                         \
      (sbm_ctx *ctx, double alpha, const sbm_cbc *A, double beta, const sbm_cbc *B,                \
       sbm_cbc **C))                                                                               \
                                                                                                   \
    /* block SpGEMM */                                                                             \
    X(sbm_status, gemm_plan,                                                                       \
      (sbm_ctx *ctx, sbm_op op_a, const sbm_cbc *A, sbm_op op_b, const sbm_cbc *B,                 \
       const sbm_cbc *U, unsigned flags, sbm_gemm_plan **plan, sbm_cbc **C))                       \
    X(sbm_status, gemm_execute,                                                                    \
      (sbm_ctx *ctx, const sbm_gemm_plan *plan, double alpha, const sbm_cbc *A,                    \
       const sbm_cbc *B, const sbm_cbc *U, sbm_cbc *C))                                            \
    X(void, gemm_plan_destroy, (sbm_gemm_plan *plan))                                              \
                                                                                                   \
    /* block-diagonal, SpMV, SpMM */                                                               \
    X(sbm_status, bdiag_inverse, (sbm_ctx *ctx, const sbm_cbc *D, sbm_cbc *Dinv))                  \
    X(sbm_status, bdiag_scale,                                                                     \
      (sbm_ctx *ctx, sbm_side side, const sbm_cbc *D, const sbm_cbc *A, sbm_cbc *B))               \
    X(sbm_status, cbc_spmv,                                                                        \
      (sbm_ctx *ctx, sbm_op op, double alpha, const sbm_cbc *A, const double *x, double beta,      \
       double *y))                                                                                 \
    X(sbm_status, csr_spmv,                                                                        \
      (sbm_ctx *ctx, double alpha, const sbm_csr *A, const double *x, double beta, double *y))     \
    X(sbm_status, csr_spmm,                                                                        \
      (sbm_ctx *ctx, double alpha, const sbm_csr *A, int64_t ncols, sbm_layout layout,             \
       const double *B, int64_t ldb, double beta, double *C, int64_t ldc))                         \
                                                                                                   \
    /* scalar SpGEMM */                                                                            \
    X(sbm_status, csr_gemm_plan,                                                                   \
      (sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B, sbm_csr_plan **plan, sbm_csr **C))        \
    X(sbm_status, csr_gemm_execute,                                                                \
      (sbm_ctx *ctx, const sbm_csr_plan *plan, const sbm_csr *A, const sbm_csr *B,                 \
       sbm_csr *C))                                                                                \
    X(void, csr_gemm_plan_destroy, (sbm_csr_plan *plan))                                           \
    /* one-shot C = A*B (sbm_csr_gemm); without it, plan, execute and destroy */                   \
    X_CUDA(sbm_status, csr_gemm,                                                                   \
           (sbm_ctx *ctx, const sbm_csr *A, const sbm_csr *B, sbm_csr **C))                        \
                                                                                                   \
    /* CSR SpMV plans (src/core/spmv_plan.c); plans start with sbm__spmv_plan_base */              \
    X(sbm_status, csr_spmv_plan,                                                                   \
      (sbm_ctx *ctx, const sbm_csr *A, sbm_spmv_format format, sbm_spmv_plan **plan))              \
    X(sbm_status, csr_spmv_plan_update, (sbm_ctx *ctx, sbm_spmv_plan *plan, const sbm_csr *A))     \
    X(sbm_status, csr_spmv_plan_execute,                                                           \
      (sbm_ctx *ctx, const sbm_spmv_plan *plan, double alpha, const double *x, double beta,        \
       double *y))                                                                                 \
    X(void, spmv_plan_destroy, (sbm_spmv_plan *plan))                                              \
                                                                                                   \
    /* pattern fingerprints (see sbm__hash_*_pattern_host), for plan checks */                     \
    X(sbm_status, cbc_pattern_hash, (sbm_ctx *ctx, const sbm_cbc *A, uint64_t *hash))              \
    X(sbm_status, csr_pattern_hash, (sbm_ctx *ctx, const sbm_csr *A, uint64_t *hash))              \
                                                                                                   \
    /* vectors of n >= 1 doubles in the backend's memory (solvers keep theirs there); dot sums     \
     * in an order fixed by n alone and writes the result to host memory; amax: *h_max =           \
     * max |x[i]| (0 for n = 0; NaN if any entry is NaN) */                                        \
    X(sbm_status, vec_dot,                                                                         \
      (sbm_ctx *ctx, int64_t n, const double *x, const double *y, double *h_dot))                  \
    X(sbm_status, vec_axpy, (sbm_ctx *ctx, int64_t n, double a, const double *x, double *y))       \
    X(sbm_status, vec_xpay, (sbm_ctx *ctx, int64_t n, const double *x, double a, double *y))       \
    X(sbm_status, vec_scale, (sbm_ctx *ctx, int64_t n, double a, double *x))                       \
    X(sbm_status, vec_amax, (sbm_ctx * ctx, int64_t n, const double *x, double *h_max))

typedef struct sbm__backend_ops {
    const char *name; /* "CPU", "CUDA": for messages */
    SBM__CORE_KERNELS(SBM__KERNEL_FIELD, SBM__KERNEL_FIELD)
} sbm__backend_ops;

/* The CPU backend's implementations (kernels/cpu/) and the CUDA backend's (kernels/cuda/). */
SBM__CORE_KERNELS(SBM__KERNEL_CPU_PROTO, SBM__KERNEL_NONE)
SBM__CORE_KERNELS(SBM__KERNEL_CUDA_PROTO, SBM__KERNEL_CUDA_PROTO)

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
/* Inverse of one SPD n x n block on the host, for the solvers (kernels/cpu/bdiag/cpu_bdiag.c, by
 * sbm_blk_spd_inverse: the library's one Cholesky inverse). a (column-major, lower triangle
 * read) is overwritten by its Cholesky factor; inv gets the full inverse. @return 0, or -1 if
 * a is not numerically SPD or the inverse is not finite. */
int sbm__host_spd_inverse(int n, double *a, double *inv);
/* NULL when the library is built without CUDA (defined in kernels/cuda/ with CUDA, src/core/context.c without). */
const sbm__backend_ops *sbm__cuda_ops(void);
/* Number of CUDA devices (0 without CUDA); same split as sbm__cuda_ops. */
int sbm__cuda_device_count(void);
/* CUDA graph executables alive in the process (0 without CUDA); same split as sbm__cuda_ops. */
int64_t sbm__cuda_graphs_live(void);

#ifdef __cplusplus
}
#endif

#endif /* SBM_CORE_BACKEND_H */
