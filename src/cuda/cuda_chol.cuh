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

#include "cuda_internal.cuh"

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

#endif /* SBM_CUDA_CHOL_CUH */
