/* Internal declarations of the SLAM layer (slam.c, slam_run.c, slam_gn.c, slam_lm.c,
 * g2o_error.c). */
#ifndef SBM_SLAM_INTERNAL_H
#define SBM_SLAM_INTERNAL_H

#include "io_internal.h"
#include "sbm_geometry.h"
#include "sbm_slam.h"
#include "solve_internal.h"

/* ---------------------------------------------------------------------------------------- */
/* Edge errors and the timing of the last linearisation                                     */
/* ---------------------------------------------------------------------------------------- */
/* Error of edge k of a graph at its current poses; Ji, Jj (d x d) may be NULL (src/g2o.c). */
void sbm__g2o_edge_error(const sbm_g2o_graph *g, int64_t k, double *e, double *Ji, double *Jj);
double sbm__g2o_chi2_host(const sbm_g2o_graph *g);
/* Seconds the last sbm_slam_linearize spent on errors and J, and on Omega J, Lambda and b. */
void sbm__slam_system_times(const sbm_slam_system *s, double *jacobian, double *lambda);

/* ---------------------------------------------------------------------------------------- */
/* One solve of a pose graph (slam_run.c): the state Gauss-Newton and Levenberg-Marquardt     */
/* share, the linear solve of (Lambda + damping) dx = -b and the stop rules                 */
/* ---------------------------------------------------------------------------------------- */

typedef struct sbm__slam_run {
    sbm_ctx *ctx;
    sbm_g2o_graph *graph;
    sbm_g2o_info gi;
    const sbm_solver_options *opt;
    sbm_solver_summary *summary;  /* never NULL (sbm_slam_solve's own when the caller's is) */
    sbm_slam_system *sys;
    sbm_slam_system_info si;      /* of the last linearisation */
    int64_t n;                    /* unknowns: error_dim * free vertices */
    int64_t np;                   /* pose values: pose_size * vertices */
    sbm_linear_solver ls;         /* AUTO resolved */
    int64_t *free_vertex;         /* host, [free vertices]: vertex index of free vertex j */
    /* sparse Cholesky: planned once for Lambda's pattern, factored every solve */
    sbm_chol *chol;
    /* dense Cholesky and PCG: a copy of Lambda whose diagonal carries the damping */
    sbm_cbc *damped;
    int64_t *diag_pos;            /* host, [free vertices]: value offset of the diagonal block */
    double *h_vals;               /* host: Lambda's values at the last linearisation, then
                                   * (dense Cholesky, PCG) the damped values */
    sbm__symup lsym;              /* PCG on the damped copy, block Jacobi */
    sbm_cbc *Dinv;
    double *d_rhs, *d_x;          /* context memory, n */
    double *h;                    /* host block below */
    double *h_b, *h_dx, *h_diag;  /* b, the step, the damping scale (n each) */
    double *h_saved;              /* poses before the step (np) */
    double cost;                  /* 0.5 chi2 at the current poses */
    double gradient_norm;         /* max |b| at the last linearisation */
    int moved;                    /* the poses moved after the last linearisation */
} sbm__slam_run;

/* Create the system, linearise at the graph's poses, resolve and set up the linear solver
 * (sparse Cholesky: the plan). On failure the run is freed by sbm__slam_run_free as usual. */
sbm_status sbm__slam_run_init(sbm_ctx *ctx, sbm_g2o_graph *graph, const sbm_solver_options *opt,
                              sbm_solver_summary *summary, sbm__slam_run *run);
void sbm__slam_run_free(sbm__slam_run *run);
/* Linearise at the current poses (Lambda, b, the gradient norm); times into rep. */
sbm_status sbm__slam_run_linearize(sbm__slam_run *run, sbm_iteration_report *rep);
/* Solve (Lambda + damping(lambda)) dx = -b into run->h_dx (damping SBM_DAMPING_NONE for
 * Gauss-Newton); fills rep's linear fields and time_solve. A matrix that is not positive
 * definite returns SBM_ERR_NOT_POSITIVE_DEFINITE with a message naming the vertex id. */
sbm_status sbm__slam_run_solve(sbm__slam_run *run, sbm_damping damping, double lambda,
                               sbm_iteration_report *rep);
/* Save the poses, then poses = saved (+) alpha * dx on the free vertices. */
void sbm__slam_run_step(sbm__slam_run *run, double alpha, int save);
/* Put the saved poses back (bitwise). */
void sbm__slam_run_restore(sbm__slam_run *run);
/* 0.5 chi2 at the current poses. */
double sbm__slam_cost(const sbm_g2o_graph *g);
/* |alpha dx| <= parameter_tolerance * (|x| + parameter_tolerance), x the free poses saved. */
int sbm__slam_run_small_step(const sbm__slam_run *run, double alpha, double *step_norm);

/* The report of iteration it before its step: the cost and gradient at its start. */
sbm_iteration_report sbm__slam_iteration_start(const sbm__slam_run *run, int it);
/* Before an iteration: the stop rules that need no step (no unknowns, zero cost, gradient). */
sbm_stop_reason sbm__slam_stop_before(const sbm__slam_run *run);
/* Iteration it took a step to new_cost (small_step: the parameter rule holds): relinearise
 * unless a stop rule holds (function or parameter tolerance, zero cost, the iteration limit),
 * then the gradient rule. *stop is the reason, SBM_STOP_NONE to go on. */
sbm_status sbm__slam_accept(sbm__slam_run *run, int it, double new_cost, int small_step,
                            sbm_iteration_report *rep, sbm_stop_reason *stop);
/* The end of a solve: the stop reason (SBM_STOP_MAX_ITERATIONS when none held) and the
 * gradient at the returned poses (one more linearisation if they moved) into the summary. */
sbm_status sbm__slam_finish(sbm__slam_run *run, sbm_stop_reason stop);

/* The two methods (slam_gn.c, slam_lm.c); the run is initialised and summary->stop_reason is
 * set on return. */
sbm_status sbm__slam_gauss_newton(sbm__slam_run *run);
sbm_status sbm__slam_levenberg_marquardt(sbm__slam_run *run);

#endif /* SBM_SLAM_INTERNAL_H */
