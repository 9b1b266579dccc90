/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal declarations of the solver layer: the end of a nonlinear iteration, the
 * symmetric product with an upper-stored matrix, PCG, dense Cholesky and block-diagonal helpers. */
#ifndef SBM_SOLVE_INTERNAL_H
#define SBM_SOLVE_INTERNAL_H

#include "sbm_internal.h"
#include "sbm_solve.h"

/* End of iteration it of the nonlinear driver (lm_driver.c) started at t_it: sets
 * rep->time_total, adds the report to *summary (may be NULL) with cost as the final cost so
 * far, and passes it to opt's callback. */
void sbm__solver_end_iteration(sbm_ctx *ctx, const sbm_solver_options *opt, int it, double cost,
                               double t_it, sbm_iteration_report *rep, sbm_solver_summary *summary);

/* ---------------------------------------------------------------------------------------- */
/* Symmetric matrices stored as their upper block triangle                                  */
/* ---------------------------------------------------------------------------------------- */

/* y = A x for symmetric A given by its upper block triangle: A_up x + A_up^T x - D x, where D
 * holds A's diagonal blocks (a block-diagonal copy refreshed from A's values). When A is block
 * diagonal, D is A itself and the product is one SpMV. */
typedef struct sbm__symup {
    const sbm_cbc *A;     /* the upper-stored matrix (not owned) */
    sbm_cbc *D;           /* its diagonal blocks (owned unless block_diagonal) */
    int64_t *diag_block;  /* host: block index of column j's diagonal block in A, -1 if none */
    int block_diagonal;   /* 1: A has only diagonal blocks */
    int complete;         /* 1: every column has its diagonal block */
    sbm_allocator host_alloc; /* allocator of diag_block */
} sbm__symup;

/* Set up for A's pattern (A must be square with square blocks and upper block triangular). */
sbm_status sbm__symup_init(sbm_ctx *ctx, const sbm_cbc *A, sbm__symup *s);
/* Copy A's current diagonal blocks into D. */
sbm_status sbm__symup_refresh(sbm_ctx *ctx, sbm__symup *s);
/* y = A x (context memory, x and y of A's size, non-NULL and apart: not checked again). */
sbm_status sbm__symup_multiply(sbm_ctx *ctx, sbm__symup *s, const double *x, double *y);
/* Dinv = the inverses of the diagonal blocks (Dinv a copy of D). D is block diagonal by
 * construction; only a missing diagonal block needs the public call's check and message. */
sbm_status sbm__symup_diag_inverse(sbm_ctx *ctx, const sbm__symup *s, sbm_cbc *Dinv);
void sbm__symup_free(sbm__symup *s);

/* Levenberg-Marquardt's damping limit (the driver, src/solve/lm_driver.c): above it a step is
 * too short to change anything, the solve has stalled (SBM_STOP_NO_PROGRESS). */
#define SBM__LM_LAMBDA_MAX 1e32

/* The forcing rule's memory between the steps of one solve (zeroed at its start). */
typedef struct sbm__forcing {
    double eta;   /* the last tolerance given (0: none yet) */
    double gnorm; /* the gradient norm it was given for */
} sbm__forcing;
/* PCG's tolerance for a step at the point of gradient norm gnorm (max |g|) under o's
 * pcg_forcing (src/solve/solver_options.c): pcg_tolerance when fixed, else the rule's eta, which
 * f remembers for the next step. */
double sbm__pcg_forcing_tolerance(const sbm_solver_options *o, sbm__forcing *f, double gnorm);

/* Validate solver options (src/solve/solver_options.c). */
sbm_status sbm__check_solver_options(sbm_ctx *ctx, const sbm_solver_options *o);
/* A loss named arg in messages ("argument <arg>.scale = ..."): a known type, and a finite
 * scale > 0 unless the type is SBM_LOSS_NONE, from SBM_LOSS_SCALE_MIN to SBM_LOSS_SCALE_MAX. */
sbm_status sbm__check_loss(sbm_ctx *ctx, const char *arg, const sbm_loss *loss);

/* ---------------------------------------------------------------------------------------- */
/* Linear solvers                                                                           */
/* ---------------------------------------------------------------------------------------- */

/* y = op(x) on vectors of length n in the context's memory (y separate from x). */
typedef sbm_status (*sbm__apply_fn)(sbm_ctx *ctx, void *data, const double *x, double *y);

/* Preconditioned conjugate gradients on vectors b and x in the context's memory: x from zero,
 * until |r| <= tol*|b| or max_it iterations. precond may be NULL (identity). *iterations and
 * *rel_residual report. An iteration allocates nothing and copies only its three dot products
 * to the host (the backend's vector operations). */
sbm_status sbm__pcg(sbm_ctx *ctx, int64_t n, sbm__apply_fn apply, void *apply_data,
                    sbm__apply_fn precond, void *precond_data, const double *b, double *x,
                    int max_it, double tol, int *iterations, double *rel_residual);

/* Solve A x = b for SPD A given by its upper block triangle by a dense Cholesky on the context's
 * backend (at most 30000 unknowns), b and x (x may be b) in the context's memory.
 * @return SBM_ERR_NOT_POSITIVE_DEFINITE, with a message naming the scalar and block column, if
 * the factorisation fails; *failed (may be NULL) is then that 0-based scalar column, else -1. */
sbm_status sbm__dense_spd_solve_device(sbm_ctx *ctx, const sbm_cbc *A, const double *b,
                                       double *x, int64_t *failed);
/* The same with b and x on the host (b uploaded, x downloaded). */
sbm_status sbm__dense_spd_solve(sbm_ctx *ctx, const sbm_cbc *A, const double *h_b, double *h_x);
/* ... with *failed as above. */
sbm_status sbm__dense_spd_solve_at(sbm_ctx *ctx, const sbm_cbc *A, const double *h_b, double *h_x,
                                   int64_t *failed);

/* Internal entry points of the sparse block Cholesky (chol.c), for calls through SBM__INNER:
 * sbm_chol_factor with chol planned on ctx's backend for A's pattern (A square, blocks
 * square), damping a damping and lambda finite and >= 0; sbm_chol_solve after a successful
 * factorisation, nrhs in [0, 2^31-1], ldb and ldx leading dimensions for n, B and X non-NULL
 * and apart (or X == B with ldx == ldb). */
sbm_status sbm__chol_factor(sbm_ctx *ctx, sbm_chol *chol, const sbm_cbc *A, sbm_damping damping,
                            double lambda);
sbm_status sbm__chol_solve(sbm_ctx *ctx, const sbm_chol *chol, int64_t nrhs, const double *B,
                           int64_t ldb, double *X, int64_t ldx);

/* ---------------------------------------------------------------------------------------- */
/* Block-diagonal preconditioners                                                           */
/* ---------------------------------------------------------------------------------------- */

/* A block-diagonal matrix of n b x b blocks in the context's memory (values uninitialised). */
sbm_status sbm__bdiag_pattern_create(sbm_ctx *ctx, int64_t n, int b, sbm_cbc **D);
/* y = Dinv x by the block SpMV: a PCG preconditioner, data the block-diagonal sbm_cbc. */
sbm_status sbm__bdiag_apply(sbm_ctx *ctx, void *data, const double *x, double *y);

#endif /* SBM_SOLVE_INTERNAL_H */
