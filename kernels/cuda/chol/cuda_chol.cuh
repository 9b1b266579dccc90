/* SPDX-License-Identifier: BSD-3-Clause */
/* The GPU numeric phase of the sparse block Cholesky: what the orchestration (cuda_chol.cu) and
 * the kernels (cuda_chol_kernels.cu) share.
 *
 * Every supernode s has a full front F_s of M_s x M_s doubles (M_s = m_s b, column-major,
 * leading dimension M_s) at F + f_ptr[s]; its first K_s = k_s b columns are the L panel. Only
 * the lower triangle of a front is kept. The solves use one column-major block of M_s x nrhs
 * doubles per supernode (the front vector, leading dimension M_s) at W + w_rows[s] * nrhs.
 * Nothing here uses floating-point atomics: every entry is written by one thread in an order
 * fixed by the symbolic structure, so two runs agree bitwise. */
#ifndef SBM_CUDA_CHOL_CUH
#define SBM_CUDA_CHOL_CUH

#include "solve_kernels.h" /* the table this component fills, chol_internal.h */
#include "cuda_internal.cuh"
#include "cuda_libs.cuh" /* cuBLAS, cuSOLVER: the context's handles, SBM__BLAS, SBM__SOLVER */

/* Threads of the per-front kernels (one thread block per front). */
#define SBM__CHOL_THREADS 256
/* Fronts of at least this many scalar rows go to cuSOLVER/cuBLAS when the context's tuning
 * leaves chol_dense_front at 0; smaller ones to the batched kernels (in shared memory: 128^2
 * doubles are 128 KiB, within the 227 KiB an H100 block may opt into). */
#define SBM__CHOL_DENSE_FRONT 128
/* The batched factor kernel runs once per level for the fronts below this many rows and once
 * for the others below the dense threshold, so that a level's few larger fronts do not make
 * its many small ones reserve their shared memory (fewer blocks per SM). */
#define SBM__CHOL_TINY_FRONT 48
/* "No failure" in the failed-column word (atomicMin keeps the smallest new block column). */
#define SBM__CHOL_NO_FAILURE (~0ull)

/* Device views of the symbolic structure and the numeric storage, passed by value. */
typedef struct sbm__chol_dev {
    int b;                       /* block size */
    int64_t n;                   /* scalar rows */
    const int64_t *sup_col;      /* [nsuper+1] first new block column of each supernode */
    const int64_t *rowptr;       /* [nsuper+1] into rows */
    const int64_t *rows;         /* new block rows of each front */
    const int64_t *f_ptr;        /* [nsuper+1] offset (doubles) of each front in F */
    const int64_t *w_rows;       /* [nsuper+1] sum of M_t over t < s (front vector offsets) */
    const int64_t *rel_ptr;      /* [nsuper+1] into rel */
    const int64_t *rel;          /* extend-add maps (chol_internal.h) */
    const int64_t *child_ptr;    /* [nsuper+1] into child */
    const int64_t *child;        /* children of each supernode, ascending */
    const int64_t *col_sup;      /* [nb] supernode of each new block column */
    const int64_t *perm;         /* [nb] new -> old block column */
    const int64_t *a_front;      /* [nnzb_A] destination of A's block t in F (its (0,0) entry) */
    const int64_t *a_sup;        /* [nnzb_A] supernode of that destination */
    const uint8_t *a_flags;      /* [nnzb_A] SBM__CHOL_A_TRANS | SBM__CHOL_A_DIAG */
    double *F;                   /* fronts */
    int *info;                   /* [nsuper] cuSOLVER's devInfo per front */
    unsigned long long *failed;  /* smallest new block column with a bad pivot */
} sbm__chol_dev;

#define SBM__CHOL_A_TRANS 1 /* the destination takes the block transposed */
#define SBM__CHOL_A_DIAG 2  /* the destination is a diagonal block (lower triangle read) */

/* Launches on stream s; the caller checks cudaGetLastError. `list` holds `count` supernodes (a
 * level); `dense_front` is the threshold of the two paths: the batched kernels serve the fronts
 * with M < dense_front and skip the others, the gather kernels of the dense path the reverse.
 * `smem` is the dynamic shared memory of the batched factor kernel (0: in global memory). */
void sbm__chol_launch_assemble(const sbm__chol_dev &d, int64_t nnzb, const double *A_values,
                               int damping, double lambda, cudaStream_t s);
/* The batched factor kernel serves the fronts with m_lo <= M < m_hi of the list. */
void sbm__chol_launch_factor_small(const sbm__chol_dev &d, const int64_t *list, int64_t count,
                                   int64_t m_lo, int64_t m_hi, size_t smem, cudaStream_t s);
void sbm__chol_launch_extend_add(const sbm__chol_dev &d, const int64_t *list, int64_t count,
                                 int64_t dense_front, cudaStream_t s);
void sbm__chol_launch_check(const sbm__chol_dev &d, const int64_t *list, int64_t count,
                            int64_t dense_front, cudaStream_t s);
void sbm__chol_launch_forward(const sbm__chol_dev &d, const int64_t *list, int64_t count,
                              int64_t dense_front, int gather_only, int64_t nrhs, const double *B,
                              int64_t ldb, double *W, cudaStream_t s);
void sbm__chol_launch_backward(const sbm__chol_dev &d, const int64_t *list, int64_t count,
                               int64_t dense_front, int gather_only, int64_t nrhs, double *W,
                               cudaStream_t s);
void sbm__chol_launch_scatter(const sbm__chol_dev &d, int64_t nrhs, const double *W, double *X,
                              int64_t ldx, cudaStream_t s);
/* Opt the batched factor kernel into `smem` bytes of dynamic shared memory. */
cudaError_t sbm__chol_factor_small_smem(size_t smem);

/* ---------------------------------------------------------------------------------------- */
/* The numeric state (cuda_chol.cu: create, destroy, factor; cuda_chol_solve.cu: solve)      */
/* ---------------------------------------------------------------------------------------- */

/* Solve graphs cached per numeric object, keyed by (nrhs, dense threshold). */
#define SBM__CHOL_SOLVE_GRAPHS 4

typedef struct sbm__chol_solve_graph {
    int64_t nrhs;          /* key: right-hand sides (0: empty slot) */
    int64_t dense;         /* key: the dense-front threshold */
    uint64_t last_use;     /* for least-recently-used replacement */
    sbm__cuda_graph graph; /* both passes over the tree levels */
} sbm__chol_solve_graph;

struct sbm__chol_numeric {
    sbm_allocator allocator;   /* made d_index, d_F and the graphs' buffers */
    int device;                /* CUDA device ordinal */
    void *d_index;             /* the index arrays, info and failed word (carved) */
    double *d_F;               /* fronts */
    const int64_t *d_levels;   /* the level lists (part of d_index) */
    int64_t f_total;           /* doubles in d_F */
    int64_t w_total;           /* sum of M_s: rows of all front vectors */
    int64_t *h_f_ptr;          /* [nsuper+1] host copy of the front offsets */
    int64_t *h_w_rows;         /* [nsuper+1] host copy of the front vector offsets */
    size_t smem_optin;         /* dynamic shared memory a block may opt into */
    sbm__chol_dev dev;         /* device views */
    /* what the factor needs at its dense threshold (computed when the threshold changes) */
    int64_t fac_dense;         /* that threshold (0: not yet) */
    int fac_lwork;             /* cuSOLVER workspace of the largest dense front (doubles) */
    size_t fac_smem;           /* largest dynamic shared memory of the batched kernel */
    /* the level loops as CUDA graphs, with buffers of their own (a graph keeps its pointers;
     * the context's workspace pool may move) */
    sbm__cuda_graph fac_graph; /* the factor's levels at fac_dense */
    /* when fac_graph cannot be captured (or graphs are cut: SBM_TUNE_CUDA_GRAPHS_CUT): the loop
     * cut at every cusolverDnDpotrf, each piece a graph, the potrf calls plain between them */
    int64_t fac_ndense;        /* dense fronts at fac_dense */
    int64_t *fac_dense_sup;    /* [fac_ndense] those fronts in the loop's order (host) */
    sbm__cuda_graph *fac_segs; /* [fac_ndense + 1] the pieces' graphs, or NULL */
    double *d_work;            /* cuSOLVER workspace of the factor graph */
    int work_doubles;          /* its size */
    sbm__chol_solve_graph solve[SBM__CHOL_SOLVE_GRAPHS];
    double *d_solve;           /* the solve graphs' B (n x cap, packed), then W (w_total x cap) */
    int64_t solve_cap;         /* right-hand sides d_solve holds */
    uint64_t solve_clock;      /* use counter of the solve graphs */
};

/* The dense-front threshold of the context's tuning. */
static inline int64_t sbm__chol_dense_front(sbm_ctx *ctx)
{
    const int t = ctx->tuning.chol_dense_front;
    return t > 0 ? (int64_t)t : (int64_t)SBM__CHOL_DENSE_FRONT;
}

static inline int64_t sbm__chol_front_rows(const sbm__chol_symbolic *sym, int64_t s)
{
    return (sym->sup_rowptr[s + 1] - sym->sup_rowptr[s]) * sym->b;
}

#endif /* SBM_CUDA_CHOL_CUH */
