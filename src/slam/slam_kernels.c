/* SPDX-License-Identifier: BSD-3-Clause */
/* Pose-graph SLAM's kernel table of a context (slam_kernels.h), found as src/core/context.c
 * finds the core table. */
#include "slam_kernels.h"

#ifndef SBM_HAVE_CUDA
const sbm__slam_kernels *sbm__cuda_slam_kernels(void) { return NULL; }
#endif

const sbm__slam_kernels *sbm__slam_kernels_of(const sbm_ctx *ctx)
{
    return ctx->backend == SBM_BACKEND_CUDA ? sbm__cuda_slam_kernels() : &sbm__cpu_slam_kernels;
}
