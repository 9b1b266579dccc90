/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal declarations of the SLAM layer (slam.c, slam_run.c,
 * g2o_error.c). */
#ifndef SBM_SLAM_INTERNAL_H
#define SBM_SLAM_INTERNAL_H

#include "io_internal.h"
#include "slam_kernels.h"
#include "sbm_geometry.h"
#include "sbm_slam.h"
#include "solve_internal.h"

/* ---------------------------------------------------------------------------------------- */
/* Edge errors and the timing of the last linearisation                                     */
/* ---------------------------------------------------------------------------------------- */
/* Error of edge k of a graph at its current poses; Ji, Jj (d x d) may be NULL (g2o_error.c). */
void sbm__g2o_edge_error(const sbm_g2o_graph *g, int64_t k, double *e, double *Ji, double *Jj);
double sbm__g2o_chi2_host(const sbm_g2o_graph *g);
/* SBM_SUCCESS when the solve's initial cost is finite, else SBM_ERR_NOT_FINITE naming the first
 * edge (and its vertices' poses) whose e^T Omega e is not finite at the graph's poses. */
sbm_status sbm__g2o_cost_check(sbm_ctx *ctx, const sbm_g2o_graph *g, double cost);
/* Seconds the last linearisation spent on errors, J and the cost, and on Omega J, Lambda and b. */
void sbm__slam_system_times(const sbm_slam_system *s, double *jacobian, double *lambda);

/* ---------------------------------------------------------------------------------------- */
/* The system's poses in the context's memory (slam.c): the current ones and a trial        */
/* ---------------------------------------------------------------------------------------- */
/* The robust loss of every edge from the next linearisation on (type and scale checked by the
 * caller; SBM_LOSS_NONE: the information as read). */
sbm_status sbm__slam_system_set_loss(sbm_ctx *ctx, sbm_slam_system *s, const sbm_loss *loss);
/* Current poses = h_poses (pose_size per vertex, the graph's order); also the trial buffer. */
sbm_status sbm__slam_poses_upload(sbm_ctx *ctx, sbm_slam_system *s, const double *h_poses);
/* h_poses (the graph's order) = the current poses. */
sbm_status sbm__slam_poses_download(sbm_ctx *ctx, sbm_slam_system *s, double *h_poses);
/* Errors, J, the cost (info.chi2 = 2 cost = sum rho(e^T Omega e)), Lambda and b at the current
 * poses: one 8-byte copy to the host (the cost). */
sbm_status sbm__slam_linearize_current(sbm_ctx *ctx, sbm_slam_system *s);
/* Trial poses = current (+) alpha dx (dx in the context's memory, d per free vertex) and
 * *cost = 0.5 sum rho there (one 8-byte copy). The current poses stay. */
sbm_status sbm__slam_try(sbm_ctx *ctx, sbm_slam_system *s, double alpha, const double *dx,
                         double *cost);
/* The last trial becomes the current poses (no copy). */
void sbm__slam_take_trial(sbm_slam_system *s);
/* |x| of the current free poses (all pose_size values of each). */
sbm_status sbm__slam_pose_norm(sbm_ctx *ctx, const sbm_slam_system *s, double *norm);

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
    sbm_slam_system *sys;         /* holds the poses during the solve (context memory) */
    sbm_slam_system_info si;      /* of the last linearisation */
    int64_t n;                    /* unknowns: error_dim * free vertices */
    sbm_linear_solver ls;         /* AUTO resolved */
    int64_t *free_vertex;         /* host, [free vertices]: vertex index of free vertex j */
    /* sparse Cholesky: planned once for Lambda's pattern, factored every solve */
    sbm_chol *chol;
    /* dense Cholesky and PCG: a copy of Lambda whose diagonal carries the damping */
    sbm_cbc *damped;
    int64_t *diag_pos;            /* context memory, [free vertices]: value offset of the
                                   * diagonal block in Lambda, -1 if none */
    sbm__symup lsym;              /* PCG on the damped copy, block Jacobi */
    sbm_cbc *Dinv;
    double *d_rhs, *d_x;          /* context memory, n: -b and the step */
    double *d_diag;               /* context memory, n: the damping scale D */
    double cost;                  /* 0.5 sum rho(e^T Omega e) at the current poses */
    double gradient_norm;         /* max |b| at the last linearisation */
    sbm__forcing forcing;         /* PCG: the forcing rule's memory (opt->pcg_forcing) */
    double x_norm;                /* |x| of the free poses at the last linearisation */
    double dx_norm;               /* |dx| of the last solve */
    int damped_stale;             /* Lambda changed since the damped copy was made */
} sbm__slam_run;

/* Create the system, linearise at the graph's poses, resolve and set up the linear solver
 * (sparse Cholesky: the plan). On failure the run is freed by sbm__slam_run_free as usual. */
sbm_status sbm__slam_run_init(sbm_ctx *ctx, sbm_g2o_graph *graph, const sbm_solver_options *opt,
                              sbm_solver_summary *summary, sbm__slam_run *run);
void sbm__slam_run_free(sbm__slam_run *run);
/* After a linearisation at the current poses (again: make one first): the cost, the gradient
 * norm max |b|, |x| and the damping scale; times into rep. */
sbm_status sbm__slam_run_linearize(sbm__slam_run *run, sbm_iteration_report *rep, int again);
/* Solve (Lambda + damping(lambda)) dx = -b into run->d_x (damping SBM_DAMPING_NONE for
 * Gauss-Newton); fills rep's linear fields and time_solve. A matrix that is not positive
 * definite returns SBM_ERR_NOT_POSITIVE_DEFINITE with a message naming the vertex id. */
sbm_status sbm__slam_run_solve(sbm__slam_run *run, sbm_damping damping, double lambda,
                               sbm_iteration_report *rep);
/* Options->method from the linearised start by the library's driver (src/solve/lm_driver.c):
 * the summary's iterations, stop reason and final gradient are set on return. */
sbm_status sbm__slam_run_iterate(sbm__slam_run *run);

#endif /* SBM_SLAM_INTERNAL_H */
