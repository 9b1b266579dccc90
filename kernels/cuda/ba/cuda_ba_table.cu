/* SPDX-License-Identifier: BSD-3-Clause */
/* The BA kernel table of the CUDA backend (ba_kernels.h), in the list's order. A constant
 * aggregate: no code runs at load time. */
#include "ba_kernels.h"

static const sbm__ba_kernels sbm__cuda_ba_kernels_table = {
    SBM__BA_KERNELS(SBM__KERNEL_CUDA_INIT)};

extern "C" const sbm__ba_kernels *sbm__cuda_ba_kernels(void)
{
    return &sbm__cuda_ba_kernels_table;
}
