/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm_solve.h: options, per-iteration reports and summaries of the nonlinear solvers (library sbm);
 * it includes sbm_chol.h, the sparse block Cholesky they factor with. */
#ifndef SBM_SOLVE_H
#define SBM_SOLVE_H

#include "sbm.h"
#include "sbm_chol.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Solvers -------------------------------------------------------------------------------- */

typedef enum sbm_linear_solver {
    SBM_LINEAR_AUTO = 0,            /* BA: dense Cholesky up to dense_max_dim unknowns, else
                                     * sparse Cholesky or PCG from S's pattern (sbm_ba_solve);
                                     * SLAM: the sparse Cholesky */
    SBM_LINEAR_DENSE_CHOLESKY = 1,  /* dense Cholesky (BA: where S lives, LAPACKE or cuSOLVER;
                                     * SLAM: LAPACKE on the host) */
    SBM_LINEAR_PCG = 2,             /* PCG, block-Jacobi, on the explicit S or Lambda */
    SBM_LINEAR_PCG_MATRIX_FREE = 3, /* BA: PCG with S*x = U x - W V^-1 W^T x, S never formed */
    SBM_LINEAR_SPARSE_CHOLESKY = 4  /* supernodal block Cholesky (sbm_chol_*) on S or Lambda */
} sbm_linear_solver;
/* "auto", "dense Cholesky", "PCG (block-Jacobi)", "matrix-free PCG (Schur-Jacobi)", "sparse
 * Cholesky"; "unknown linear solver" for a value not in the enum. */
const char *sbm_linear_solver_name(sbm_linear_solver solver);

/* The nonlinear method of a solver that offers more than one (SLAM). */
typedef enum sbm_solver_method {
    SBM_METHOD_LEVENBERG_MARQUARDT = 0, /* gain-ratio damping; a failed factorisation is a
                                         * rejected step */
    SBM_METHOD_GAUSS_NEWTON = 1         /* with a backtracking line search */
} sbm_solver_method;
/* "Levenberg-Marquardt" or "Gauss-Newton"; "unknown method" for a value not in the enum. */
const char *sbm_solver_method_name(sbm_solver_method method);

/* Why a nonlinear solve stopped (sbm_solver_summary.stop_reason). */
typedef enum sbm_stop_reason {
    SBM_STOP_NONE = 0,                /* not run (no iteration was possible: no unknowns) */
    SBM_STOP_FUNCTION_TOLERANCE = 1,  /* converged: |cost change| <= function_tolerance * cost */
    SBM_STOP_GRADIENT_TOLERANCE = 2,  /* converged: max |gradient| <= gradient_tolerance */
    SBM_STOP_PARAMETER_TOLERANCE = 3, /* converged: |step| <= parameter_tolerance * (|x| + tol) */
    SBM_STOP_ZERO_COST = 4,           /* converged: the cost is zero */
    SBM_STOP_MAX_ITERATIONS = 5,      /* not converged: max_iterations reached */
    SBM_STOP_NO_PROGRESS = 6          /* not converged: no step lowers the cost (LM: lambda
                                       * above its limit; GN: the line search failed) */
} sbm_stop_reason;

/* "function tolerance", "gradient tolerance", ..., or "unknown stop reason". */
const char *sbm_stop_reason_name(sbm_stop_reason reason);
/* 1 for the converged reasons (function, gradient, parameter tolerance, zero cost). */
int sbm_stop_reason_converged(sbm_stop_reason reason);

/* Robust loss of a residual block (a BA observation, a SLAM edge) with squared norm s (SLAM:
 * the edge's chi2 e^T Omega e): its cost is 0.5 rho(s) instead of 0.5 s. The definitions are
 * Ceres' (HuberLoss, CauchyLoss), and so is the correction of the residual and the Jacobian
 * (Ceres' Corrector: the Gauss-Newton model matches rho to second order where rho'' > 0, else the
 * block is scaled by sqrt(rho'(s))). scale a > 0 is where the loss departs from the square:
 *   SBM_LOSS_HUBER:  rho = s for s <= a^2, else 2 a sqrt(s) - a^2;
 *   SBM_LOSS_CAUCHY: rho = a^2 log(1 + s / a^2). */
typedef enum sbm_loss_type {
    SBM_LOSS_NONE = 0,   /* least squares: rho(s) = s */
    SBM_LOSS_HUBER = 1,
    SBM_LOSS_CAUCHY = 2
} sbm_loss_type;

typedef struct sbm_loss {
    sbm_loss_type type;
    double scale;        /* a in [SBM_LOSS_SCALE_MIN, SBM_LOSS_SCALE_MAX] (ignored by
                          * SBM_LOSS_NONE) */
} sbm_loss;

/* The scales a loss accepts, the range where a loss means something. Above, Ceres' formulas use
 * a^2 and 1/a^2, which must stay finite, normal doubles (Cauchy would otherwise give
 * 0 * inf = NaN at a = 1e200). Below, the loss flattens every residual of ordinary size (the
 * scale is in the residual's units: pixels, or whitened g2o errors): Cauchy's gradient shrinks
 * as a^2 and Huber's as a, under the default gradient tolerance (1e-10) before the first step,
 * so the solve "converged" at once with the input unsolved (measured: cauchy:1e-8 and
 * huber:1e-150 did; cauchy:1e-6 still iterates). */
#define SBM_LOSS_SCALE_MIN 1e-6
#define SBM_LOSS_SCALE_MAX 1e150

/* "none", "huber", "cauchy", or "unknown loss". */
const char *sbm_loss_name(sbm_loss_type type);

/* One iteration: one step tried (Levenberg-Marquardt: accepted or rejected; Gauss-Newton:
 * the step after the backtracking line search). Times in seconds, measured with the context
 * synchronised.
 * The cost, one convention for both solvers: half the weighted sum of squares, BA 0.5 |r|^2,
 * SLAM 0.5 sum e^T Omega e = 0.5 chi2 (sbm_g2o_chi2 returns chi2 itself, g2o's number); with a
 * robust loss (sbm_solver_options.loss) each block's square s counts as rho(s) (BA:
 * 0.5 sum rho(|r_k|^2)). */
typedef struct sbm_iteration_report {
    int iteration;          /* 1, 2, ... */
    double cost_before;     /* cost (BA: 0.5 sum rho(|r_k|^2); SLAM: 0.5 chi2) at the start */
    double cost;            /* cost after it (= cost_before for a rejected step) */
    double lambda;          /* damping used (LM), or the step length (GN line search) */
    int accepted;           /* 1 if the step was taken */
    int linear_failed;      /* 1 if the linear solve failed (not positive definite): a rejected
                             * step */
    int linear_capped;      /* 1 if an iterative linear solve stopped at its iteration cap */
    double gradient_norm;   /* max |gradient| at the start of the iteration */
    double step_norm;       /* |step| (0 when no step was computed) */
    int linear_iterations;  /* PCG iterations (0 for Cholesky) */
    double linear_residual; /* relative residual of the linear solve */
    double time_linearize;  /* residuals, Jacobians, upload (0 when reused) */
    double time_schur;      /* BA: S and rhs (or V^-1, Y, rhs); SLAM: Lambda and b */
    double time_solve;      /* the reduced / normal system */
    double time_update;     /* back-substitution, new parameters and their cost */
    double time_total;      /* the whole iteration */
} sbm_iteration_report;

typedef void (*sbm_iteration_callback)(void *user, const sbm_iteration_report *report);

/* How PCG's tolerance is chosen at each step of a nonlinear solve (BA's PCG and matrix-free
 * PCG, SLAM's PCG): solve every step to pcg_tolerance, or inexact Newton steps, loose far from the
 * optimum and tightened as the gradient falls. */
typedef enum sbm_pcg_forcing {
    SBM_PCG_FORCING_FIXED = 0,           /* every step to |r| <= pcg_tolerance * |rhs| */
    SBM_PCG_FORCING_EISENSTAT_WALKER = 1 /* Eisenstat-Walker choice 2 on the gradient g (max
                                          * |g_k|): eta_0 = pcg_forcing_max, then
                                          * eta_k = 0.9 (|g_k| / |g_k-1|)^2, at least
                                          * 0.9 eta_k-1^2 where that exceeds 0.1, clamped to
                                          * [pcg_tolerance, pcg_forcing_max]; a retried step
                                          * (same point, new damping) keeps its eta */
} sbm_pcg_forcing;
/* "fixed" or "Eisenstat-Walker"; "unknown forcing" for a value not in the enum. */
const char *sbm_pcg_forcing_name(sbm_pcg_forcing forcing);

typedef struct sbm_solver_options {
    int max_iterations;            /* iterations (steps tried) at most */
    sbm_linear_solver linear_solver; /* how the linear system is solved */
    int64_t dense_max_dim;         /* AUTO: dense Cholesky up to this many unknowns */
    int pcg_max_iterations;        /* PCG iterations per solve at most */
    double pcg_tolerance;          /* PCG stops at |r| <= tol * |rhs| (with a forcing rule:
                                    * the tightest tolerance it gives) */
    sbm_pcg_forcing pcg_forcing;   /* how each step's PCG tolerance is chosen */
    double pcg_forcing_max;        /* the loosest tolerance of a forcing rule, in
                                    * [pcg_tolerance, 1) */
    double initial_lambda;         /* LM: first damping (relative to the diagonal) */
    double min_lambda;             /* LM: an accepted step shrinks lambda down to this floor
                                    * at most (0: no floor); a lambda already below it stays */
    double function_tolerance;     /* stop when |cost change| <= tol * cost */
    double gradient_tolerance;     /* stop when max |gradient| <= tol */
    double parameter_tolerance;    /* stop when |step| <= tol * (|x| + tol) */
    sbm_solver_method method;      /* SLAM: Levenberg-Marquardt (default) or Gauss-Newton */
    sbm_loss loss;                 /* robust loss of every observation / edge (default none) */
    int update_state_every_iteration; /* BA and SLAM (whose estimates live in the context's
                                       * memory): 1 = write the estimate into the problem (the
                                       * graph's poses) before every callback (one download
                                       * per iteration), 0 (default) = only once at the end
                                       * (as Ceres' option of that name) */
    sbm_iteration_callback callback; /* called after every iteration (may be NULL) */
    void *user;                    /* passed to callback */
} sbm_solver_options;

/* max_iterations 200, AUTO, dense_max_dim 2000, PCG 200 iterations per step to the
 * Eisenstat-Walker tolerance (pcg_forcing_max 0.1 down to pcg_tolerance 1e-8), lambda 1e-4 with
 * no floor (min_lambda 0), function, gradient and parameter tolerances 1e-10,
 * Levenberg-Marquardt, no robust loss (SBM_LOSS_NONE, scale 1).
 * The one rule of both nonlinear solvers (BA and SLAM run the library's one driver):
 *   - Levenberg-Marquardt: each iteration solves (H + lambda D) dx = -g (D: H's diagonal
 *     clamped to [1e-6, 1e32], Marquardt's scaling). The step is taken when the factorisation
 *     succeeded, the cost at x + dx is finite and lower, and the decrease the damped model
 *     predicts, 0.5 dx^T (lambda D dx - g), is positive. Taken: lambda *= max(1/3,
 *     1 - (2 rho - 1)^3) (rho = actual / predicted decrease; Nielsen's update), but not below
 *     min_lambda (a lambda already below it stays), nu = 2, and the problem is linearised again.
 *     Rejected (a failed factorisation too): the parameters stay bitwise, lambda *= nu, nu *= 2.
 *   - Gauss-Newton (SLAM): H dx = -g and a backtracking line search halving the step until the
 *     cost falls (at most 10 halvings).
 * The solve stops at the first rule that holds, checked in this order: no unknowns
 * (SBM_STOP_NONE, nothing run); a zero cost; max |g| (the gradient) at most gradient_tolerance at
 * a linearisation; after an accepted step: a zero cost, a step |dx| at most parameter_tolerance *
 * (|x| + parameter_tolerance), a decrease of at most function_tolerance * cost; after a rejected
 * step: the same parameter rule on the step computed, then (LM) lambda above 1e32 / (GN) the
 * failed line search (SBM_STOP_NO_PROGRESS); max_iterations.
 * sbm_solver_summary.stop_reason says which. The default damping is the robust one: with it every
 * shared pose graph and BAL problem reaches the lowest optimum sbm's options find. Pose graphs
 * get there in Gauss-Newton's iteration counts with initial_lambda = min_lambda = 1e-12 (CSAIL 5
 * iterations instead of 20, ais2klinik 12 instead of 140), which the sbm CLI's slam-solve uses;
 * on BAL ladybug that damping loses the first iterations to rejections and ends in a worse
 * minimum, hence not the library's default (docs/CONVERGENCE.md). */
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
    sbm_stop_reason stop_reason;     /* why it stopped */
    int linear_failures;             /* linear solves that failed (each a rejected step) */
    int linear_capped;               /* iterative linear solves that hit their cap */
    double final_gradient_norm;      /* max |gradient| at the returned parameters (when known) */
} sbm_solver_summary;

#ifdef __cplusplus
}
#endif

#endif /* SBM_SOLVE_H */
