/* SPDX-License-Identifier: BSD-3-Clause */
/* The symmetric positive definite matrices sbm-bench-chol factors (chol_inputs.c): Lambda of g2o
 * pose graphs (read or generated) and S of BAL problems (read or generated), each with the scalar
 * CSC of its upper triangle (the input of the CHOLMOD peer and of the residual check); and the
 * seeded synthetic pose graph that sbm-bench-ba solves too. */
#ifndef SBM_BENCH_CHOL_INPUTS_H
#define SBM_BENCH_CHOL_INPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "sbm.h"

/* One symmetric positive definite matrix to factor. */
typedef struct chol_matrix {
    char name[64];     /* "intel", "problem-49-7776-pre", "ba-1000", "poses3d-100000", ... */
    char kind[16];     /* "Lambda" (pose graph) or "S" (BA reduced camera system) */
    sbm_cbc *A;        /* upper block triangle, b x b blocks, on the host context */
    int b;             /* block size */
    int64_t nb;        /* block columns */
    int64_t nnzb;      /* stored blocks of the upper block triangle */
    double build_s;    /* seconds to read / generate and linearise it */
    /* the same matrix as a scalar CSC of its upper triangle (entries i <= j), the input of the
     * CHOLMOD peer and of the residual check */
    int64_t n;         /* nb * b */
    int64_t nnz;       /* entries of the scalar upper triangle */
    int64_t *colptr;   /* [n+1] */
    int64_t *rowind;   /* [nnz], ascending in each column */
    double *val;       /* [nnz] */
} chol_matrix;

/* Lambda of a g2o file at its poses (sbm_slam_system_create / sbm_slam_linearize). */
int chol_input_g2o(sbm_ctx *host, const char *path, chol_matrix *m, char *err, size_t errsize);
/* S of a BAL file after one linearisation with the solver's first damping (1e-4, Marquardt's
 * diagonal scaling of U and V), as sbm_ba_solve factors it. */
int chol_input_bal(sbm_ctx *host, const char *path, chol_matrix *m, char *err, size_t errsize);
/* The same for a synthetic BAL problem of cameras x points, obs observations per point. */
int chol_input_ba_generated(sbm_ctx *host, int64_t cameras, int64_t points, int obs,
                            chol_matrix *m, char *err, size_t errsize);
/* Lambda of a seeded synthetic pose graph of poses poses (dim 2: a grid in the plane; dim 3:
 * rings on a sphere), odometry plus loop closures to the previous row (see the .c file),
 * written as a g2o file into dir and read back. */
int chol_input_pose_graph(sbm_ctx *host, int dim, int64_t poses, const char *dir,
                          chol_matrix *m, char *err, size_t errsize);
void chol_matrix_free(chol_matrix *m);
/* The seed of chol_input_pose_graph's graph of poses poses (sbm-bench-ba solves the same). */
#define CHOL_POSE_GRAPH_SEED(poses) (20261127u + (uint64_t)(poses))
/* Write that synthetic pose graph (dim 2 or 3, seeded) as a g2o file. @return 0 or -1 (errno
 * set). */
int chol_write_pose_graph(const char *path, int dim, int64_t poses, uint64_t seed);

#endif /* SBM_BENCH_CHOL_INPUTS_H */
