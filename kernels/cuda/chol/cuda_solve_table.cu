/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA backend's table of the solve layer (solve_kernels.h), in the list's order: the sparse
 * and dense Cholesky (kernels/cuda/chol) and Levenberg-Marquardt's predicted decrease
 * (kernels/cuda/lm). A constant aggregate: no code runs at load time. */
#include "solve_kernels.h"

static const sbm__solve_kernels sbm__cuda_solve_kernels_table = {
    SBM__SOLVE_KERNELS(SBM__KERNEL_CUDA_INIT)};

extern "C" const sbm__solve_kernels *sbm__cuda_solve_kernels(void)
{
    return &sbm__cuda_solve_kernels_table;
}
