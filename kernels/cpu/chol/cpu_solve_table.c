/* SPDX-License-Identifier: BSD-3-Clause */
/* The CPU backend's table of the solve layer (solve_kernels.h), in the list's order: the sparse
 * and dense Cholesky (kernels/cpu/chol) and Levenberg-Marquardt's predicted decrease
 * (kernels/cpu/lm). */
#include "solve_kernels.h"

const sbm__solve_kernels sbm__cpu_solve_kernels = {SBM__SOLVE_KERNELS(SBM__KERNEL_CPU_INIT)};
