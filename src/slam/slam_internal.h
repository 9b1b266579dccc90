/* Internal declarations of the SLAM layer (slam.c, slam_gn.c, g2o_error.c). */
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

#endif /* SBM_SLAM_INTERNAL_H */
