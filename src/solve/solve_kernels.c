/* SPDX-License-Identifier: BSD-3-Clause */
/* The solve layer's kernel table of a context (solve_kernels.h), found as src/core/context.c
 * finds the core table. */
#include "solve_kernels.h"

#ifndef SBM_HAVE_CUDA
const sbm__solve_kernels *sbm__cuda_solve_kernels(void) { return NULL; }
#endif

static const sbm__solve_kernels *replaced[2]; /* white-box tests' tables, by backend */

const sbm__solve_kernels *sbm__solve_kernels_of(const sbm_ctx *ctx)
{
    const int b = ctx->backend == SBM_BACKEND_CUDA;
    if (replaced[b]) return replaced[b];
    return b ? sbm__cuda_solve_kernels() : &sbm__cpu_solve_kernels;
}

void sbm__solve_kernels_replace(sbm_backend b, const sbm__solve_kernels *k)
{
    replaced[b == SBM_BACKEND_CUDA] = k;
}
