/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal declarations of the core, by concern: objects, errors, memory, matrices, the backend
 * table, the internal entry points of the operations. Shared by the front ends (src/), the CPU backend (kernels/cpu/) and the CUDA backend
 * (kernels/cuda/, from C++: each header wraps itself in extern "C"). */
#ifndef SBM_INTERNAL_H
#define SBM_INTERNAL_H

#include "core_objects.h"
#include "core_errors.h"
#include "core_memory.h"
#include "core_matrix.h"
#include "core_ops.h"
#include "core_backend.h"

#endif /* SBM_INTERNAL_H */
