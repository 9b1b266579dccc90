/* sbm_solve.h: options, per-iteration reports and summaries of the nonlinear solvers (library sbm). */
#ifndef SBM_SOLVE_H
#define SBM_SOLVE_H

#include "sbm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Solvers -------------------------------------------------------------------------------- */

typedef enum sbm_linear_solver {
    SBM_LINEAR_AUTO = 0,            /* dense Cholesky up to dense_max_dim unknowns, else PCG */
    SBM_LINEAR_DENSE_CHOLESKY = 1,  /* LAPACKE dpotrf/dpotrs on the host */
    SBM_LINEAR_PCG = 2,             /* PCG, block-Jacobi, on the explicit S or Lambda */
    SBM_LINEAR_PCG_MATRIX_FREE = 3  /* BA: PCG with S*x = U x - W V^-1 W^T x, S never formed */
} sbm_linear_solver;

/* One iteration: one step tried (Levenberg-Marquardt: accepted or rejected; Gauss-Newton:
 * the step after the backtracking line search). Times in seconds, measured with the context
 * synchronised. */
typedef struct sbm_iteration_report {
    int iteration;          /* 1, 2, ... */
    double cost_before;     /* cost (BA: 0.5|r|^2; SLAM: chi2) at the start of the iteration */
    double cost;            /* cost after it (= cost_before for a rejected step) */
    double lambda;          /* damping used (LM), or the step length (GN line search) */
    int accepted;           /* 1 if the step was taken */
    int linear_iterations;  /* PCG iterations (0 for dense Cholesky) */
    double linear_residual; /* relative residual of the linear solve */
    double time_linearize;  /* residuals, Jacobians, upload (0 when reused) */
    double time_schur;      /* BA: S and rhs (or V^-1, Y, rhs); SLAM: Lambda and b */
    double time_solve;      /* the reduced / normal system */
    double time_update;     /* back-substitution, new parameters and their cost */
    double time_total;      /* the whole iteration */
} sbm_iteration_report;

typedef void (*sbm_iteration_callback)(void *user, const sbm_iteration_report *report);

typedef struct sbm_solver_options {
    int max_iterations;            /* iterations (steps tried) at most */
    sbm_linear_solver linear_solver; /* how the linear system is solved */
    int64_t dense_max_dim;         /* AUTO: dense Cholesky up to this many unknowns */
    int pcg_max_iterations;        /* PCG iterations per solve at most */
    double pcg_tolerance;          /* PCG stops at |r| <= tol * |rhs| */
    double initial_lambda;         /* LM: first damping */
    double function_tolerance;     /* stop when |cost change| <= tol * cost */
    sbm_iteration_callback callback; /* called after every iteration (may be NULL) */
    void *user;                    /* passed to callback */
} sbm_solver_options;

/* max_iterations 10, AUTO, dense_max_dim 2000, PCG 200 iterations to 1e-8, lambda 1e-4,
 * function tolerance 1e-10. */
sbm_solver_options sbm_solver_default_options(void);

typedef struct sbm_solver_summary {
    double initial_cost;    /* cost at the start */
    double final_cost;      /* cost at the end */
    int iterations;         /* iterations run */
    int accepted;           /* steps taken */
    double time_total;      /* seconds, the whole solve */
    double time_linearize;  /* sums over the iterations */
    double time_schur;
    double time_solve;
    double time_update;
    sbm_linear_solver linear_solver; /* the solver used (AUTO resolved) */
} sbm_solver_summary;

#ifdef __cplusplus
}
#endif

#endif /* SBM_SOLVE_H */
