/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm_chol.h: the sparse block Cholesky, plan / factor / solve (library sbm). */
#ifndef SBM_CHOL_H
#define SBM_CHOL_H

#include "sbm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Damping added to the diagonal of a symmetric matrix before it is factored. */
typedef enum sbm_damping {
    SBM_DAMPING_NONE = 0,     /* A itself */
    SBM_DAMPING_IDENTITY = 1, /* A + lambda I (g2o's Levenberg-Marquardt) */
    SBM_DAMPING_DIAGONAL = 2  /* every diagonal entry d -> d + lambda*min(max(d, 1e-6), 1e32)
                               * (Marquardt's scaling, as Ceres and sbm_ba_set_damping do) */
} sbm_damping;
/* "none", "identity" or "diagonal"; "unknown damping" for a value not in the enum. */
const char *sbm_damping_name(sbm_damping damping);

/* ---- Sparse block Cholesky ------------------------------------------------------------------ */

/* A = L L^T for a symmetric positive definite block matrix A given by its upper block triangle
 * (square b x b blocks, nb x nb blocks; diagonal blocks stored whole), in the context's memory.
 * Plan / factor / solve, like the SpGEMM:
 *   - sbm_chol_plan, once per sparsity pattern: a fill-reducing ordering of the block graph
 *     (AMD), the elimination tree, block column counts and supernodes of block columns with
 *     relaxed amalgamation;
 *   - sbm_chol_factor, for every new set of values: the numeric factorisation of A + damping
 *     (Levenberg-Marquardt refactors with a new lambda without planning again);
 *   - sbm_chol_solve: one or many right-hand sides.
 * On the CPU the supernodes are factored with LAPACKE/OpenBLAS; on a CUDA context the factor
 * and the solves stay on the device, and their walks of the tree levels (thousands of small
 * launches) are captured once per plan as CUDA graphs and replayed from the second call on
 * (per number of right-hand sides for the solves; the results are bitwise those of plain
 * launches). The context's tuning (sbm_tuning.cuda_graphs, sbm.h; its default the environment
 * variable SBM_CUDA_GRAPHS, read when the context is created) can keep them on plain launches. */
typedef struct sbm_chol sbm_chol;

typedef enum sbm_chol_ordering {
    SBM_CHOL_ORDERING_AMD = 0,    /* approximate minimum degree of the block graph (SuiteSparse AMD) */
    SBM_CHOL_ORDERING_NATURAL = 1 /* the block columns as given */
} sbm_chol_ordering;
/* "AMD" or "natural"; "unknown ordering" for a value not in the enum. */
const char *sbm_chol_ordering_name(sbm_chol_ordering ordering);

typedef struct sbm_chol_options {
    sbm_chol_ordering ordering;
    /* relaxed amalgamation: a child supernode is merged into its parent while the merged front
     * has at most this fraction of explicit zeros (0 turns amalgamation off) */
    double relax_zeros;
    int64_t relax_max_columns;    /* merged supernodes have at most this many block columns */
} sbm_chol_options;

/* AMD, relax_zeros 0.2, relax_max_columns 64. */
sbm_chol_options sbm_chol_default_options(void);

typedef struct sbm_chol_info {
    int64_t block_columns;   /* nb */
    int block_size;          /* b */
    int64_t supernodes;      /* after amalgamation */
    int64_t factor_values;   /* doubles stored for L (explicit zeros of amalgamation included) */
    int64_t max_front;       /* rows (scalars) of the largest frontal matrix */
    double flops;            /* floating-point operations of one factorisation */
    const int64_t *perm;     /* host, nb: perm[k] = block column of A eliminated k-th */
    int64_t failed_column;   /* block column of A (A's numbering) where the last factorisation
                              * found A not positive definite, or -1 */
    int factored;            /* 1 once a factorisation succeeded and no later one failed */
} sbm_chol_info;

/* Symbolic phase for A's pattern. options may be NULL (defaults). */
sbm_status sbm_chol_plan(sbm_ctx *ctx, const sbm_cbc *A, const sbm_chol_options *options,
                         sbm_chol **chol);
/* Numeric phase: L L^T = A + damping(lambda) for A with the planned pattern.
 * @return SBM_ERR_NOT_POSITIVE_DEFINITE naming the block column of A (info.failed_column) where
 * a pivot is not positive; the factor is then unusable until a factorisation succeeds. Never
 * yields NaN: a non-finite pivot is reported the same way. */
sbm_status sbm_chol_factor(sbm_ctx *ctx, sbm_chol *chol, const sbm_cbc *A, sbm_damping damping,
                           double lambda);
/* X = (A + damping)^-1 B for nrhs column-major right-hand sides (context memory, leading
 * dimensions ldb, ldx >= n = nb*b). X may be B (in place). */
sbm_status sbm_chol_solve(sbm_ctx *ctx, const sbm_chol *chol, int64_t nrhs, const double *B,
                          int64_t ldb, double *X, int64_t ldx);

/* ---- Selected inverse (marginal covariances) ---- */

/* Blocks of A^-1 = (A + damping)^-1, the matrix of the last successful sbm_chol_factor, from the
 * factor by the Takahashi recurrences (selected inversion over the supernodes, root first): the
 * inverse on the pattern of L is computed once per factorisation (on the host: a host copy of
 * L_ptr-sized doubles kept by chol; a CUDA context copies its factor to the host for it and
 * does NOT run the recurrences on the GPU) and later calls only copy blocks out. Every block
 * of the diagonal and every block (i, j) with L nonzero at (max, min) of the two columns in the
 * elimination order (sbm_chol_inverse_in_pattern) is available; this holds for every (i, j)
 * where A has a stored block. The result has the same bits on every run and for any
 * sbm_tuning.num_threads (another OpenBLAS thread count, like the factorisation, changes the
 * last bits); a CUDA context's agrees with the CPU backend's to the rounding of the two
 * factorisations (the recurrences are the same host code). Indices are A's block numbering (not
 * permuted); out is host memory.
 *
 * sbm_chol_inverse_blocks: out + t b^2 = block (block_rows[t], block_cols[t]) of A^-1, b x b
 * column-major, for t < npairs (arrays in host memory; npairs may be 0).
 * @return SBM_ERR_INDEX_OUT_OF_RANGE (naming the pair) for an index outside [0, nb),
 * SBM_ERR_INVALID_ARGUMENT naming the first pair outside the pattern (nothing is written) or
 * when chol has no factor (never factored, or the last factorisation failed: the failure's
 * message named the block column, the variable, where A + damping is not positive definite),
 * SBM_ERR_BACKEND_MISMATCH for a context of another backend than the plan's. */
sbm_status sbm_chol_inverse_blocks(sbm_ctx *ctx, sbm_chol *chol, int64_t npairs,
                                   const int64_t *block_rows, const int64_t *block_cols,
                                   double *out);
/* The whole block diagonal of A^-1: out + i b^2 = block (i, i), b x b column-major, for every
 * i < nb (host memory). Errors as sbm_chol_inverse_blocks. */
sbm_status sbm_chol_inverse_diagonal(sbm_ctx *ctx, sbm_chol *chol, double *out);
/* @return 1 when block (i, j) of A^-1 (A's numbering) is inside the pattern of the factor, so
 * that sbm_chol_inverse_blocks gives it; 0 otherwise (also for chol == NULL or an index
 * outside [0, nb)). Needs only the plan. */
int sbm_chol_inverse_in_pattern(const sbm_chol *chol, int64_t i, int64_t j);

/* @return the plan's sizes and ordering and the outcome of its last factorisation (a zeroed
 * struct with failed_column -1 for chol == NULL). */
sbm_chol_info sbm_chol_get_info(const sbm_chol *chol);
/* Destroy a plan and its factor. NULL is accepted and does nothing. */
void sbm_chol_destroy(sbm_chol *chol);

#ifdef __cplusplus
}
#endif

#endif /* SBM_CHOL_H */
