/* SPDX-License-Identifier: BSD-3-Clause */
/* Seeded generators of the matrices sbm-bench multiplies. Each builds host arrays and creates
 * the matrix in ctx with sbm_cbc_create / sbm_csr_create (validated); values are uniform in
 * [-1, 1). */
#ifndef SBM_BENCH_GENERATORS_H
#define SBM_BENCH_GENERATORS_H

#include <stdint.h>

#include "sbm.h"
#include "sbm_ba.h"
#include "sbm_io.h"
#include "sbm_slam.h"

/* 2D Poisson pattern (5-point stencil on a g x g grid), every stored block a dense b x b block. */
sbm_status gen_poisson2d(sbm_ctx *ctx, int64_t g, int b, uint64_t seed, sbm_cbc **A);
/* 3D Poisson pattern (7-point stencil on a g x g x g grid) with dense b x b blocks. */
sbm_status gen_poisson3d(sbm_ctx *ctx, int64_t g, int b, uint64_t seed, sbm_cbc **A);
/* BA camera-point matrix W (cameras x points blocks of p x 3): each point column holds obs
 * distinct random cameras. pattern_seed fixes the pattern, value_seed the values, so two calls
 * with the same pattern_seed give W and a Y = W V^-1 of the same pattern. */
sbm_status gen_ba_w(sbm_ctx *ctx, int64_t cameras, int64_t points, int obs, int p,
                    uint64_t pattern_seed, uint64_t value_seed, sbm_cbc **W);
/* Random nbr x nbc blocks of r x c with per_col distinct random blocks in every column. */
sbm_status gen_random_cbc(sbm_ctx *ctx, int64_t nbr, int64_t nbc, int r, int c, int per_col,
                          uint64_t seed, sbm_cbc **A);

/* R-MAT power-law graph (Chakrabarti, Zhan & Faloutsos, SDM 2004) as a scalar CSR adjacency
 * matrix: 2^scale vertices, edge_factor * 2^scale directed edges, each placed by descending
 * scale levels into the quadrant (a, b, c, d = 1 - a - b - c); vertex labels randomly permuted
 * (as in Graph 500, so that the heavy rows are not all at the top); duplicate edges removed
 * (self loops kept); values uniform in [-1, 1). Host time is O(edges) (radix sort). */
sbm_status gen_rmat_csr(sbm_ctx *ctx, int scale, int edge_factor, double a, double b, double c,
                        uint64_t seed, sbm_csr **A);

#endif /* SBM_BENCH_GENERATORS_H */
