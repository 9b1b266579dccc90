/* SPDX-License-Identifier: BSD-3-Clause */
/* The SLAM kernel table of the CUDA backend (slam_kernels.h), in the list's order. A constant
 * aggregate: no code runs at load time. */
#include "slam_kernels.h"

static const sbm__slam_kernels sbm__cuda_slam_kernels_table = {
    SBM__SLAM_KERNELS(SBM__KERNEL_CUDA_INIT)};

extern "C" const sbm__slam_kernels *sbm__cuda_slam_kernels(void)
{
    return &sbm__cuda_slam_kernels_table;
}
