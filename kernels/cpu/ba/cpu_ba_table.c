/* SPDX-License-Identifier: BSD-3-Clause */
/* The BA kernel table of the CPU backend (ba_kernels.h), in the list's order. */
#include "ba_kernels.h"

const sbm__ba_kernels sbm__cpu_ba_kernels = {SBM__BA_KERNELS(SBM__KERNEL_CPU_INIT)};
