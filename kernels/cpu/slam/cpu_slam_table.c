/* SPDX-License-Identifier: BSD-3-Clause */
/* The SLAM kernel table of the CPU backend (slam_kernels.h), in the list's order. */
#include "slam_kernels.h"

const sbm__slam_kernels sbm__cpu_slam_kernels = {SBM__SLAM_KERNELS(SBM__KERNEL_CPU_INIT)};
