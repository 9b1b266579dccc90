/* SPDX-License-Identifier: BSD-3-Clause */
/* Bundle adjustment's kernel table of a context (ba_kernels.h), found as src/core/context.c
 * finds the core table. */
#include "ba_kernels.h"

#ifndef SBM_HAVE_CUDA
const sbm__ba_kernels *sbm__cuda_ba_kernels(void) { return NULL; }
#endif

const sbm__ba_kernels *sbm__ba_kernels_of(const sbm_ctx *ctx)
{
    return ctx->backend == SBM_BACKEND_CUDA ? sbm__cuda_ba_kernels() : &sbm__cpu_ba_kernels;
}
