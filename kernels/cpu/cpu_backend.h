/* SPDX-License-Identifier: BSD-3-Clause */
/* What the CPU backend's components share: threads. The kernels' prototypes come from the lists
 * of the kernel tables (core_backend.h, and the solve, BA and SLAM layers' *_kernels.h); each
 * file kernels/cpu/<component>/cpu_*.c implements one group, the table files collect them
 * (kernels/cpu/cpu_backend.c: the core table). Arguments are already checked by the front end. */
#ifndef SBM_CPU_BACKEND_H
#define SBM_CPU_BACKEND_H

#include "sbm_internal.h"

/* Threads (cpu_parallel.c): fn(data, begin, end) over fixed contiguous pieces of [0, n), one
 * per thread of ctx, at least min_per_thread items each (fewer threads for small n; one item
 * each under ctx->fine_grain, the tests' setting); returns when all are done. Deterministic
 * for kernels whose outputs each belong to one item. */
typedef void (*sbm__cpu_range_fn)(void *data, int64_t begin, int64_t end);
void sbm__cpu_parallel_for(const sbm_ctx *ctx, int64_t n, int64_t min_per_thread,
                           sbm__cpu_range_fn fn, void *data);
/* Threads a call on ctx may use: its tuning's num_threads, else its default (SBM_NUM_THREADS at
 * its creation, else the online cores), 1 to SBM__MAX_THREADS. */
int sbm__cpu_threads(const sbm_ctx *ctx);

/* Before a LAPACK or BLAS call (cpu_blas.c). OpenBLAS maps a work buffer (128 MiB) per thread on
 * first use and, where an address-space limit (ulimit -v) refuses the mapping, retries for ever:
 * under such a limit this checks once that the buffers fit (OpenBLAS on one thread when its
 * worker threads' buffers do not), and fails with SBM_ERR_OUT_OF_MEMORY, the limit in the
 * message, where even one does not. Without a limit, or once a check passed, it costs nothing. */
sbm_status sbm__cpu_blas_room(sbm_ctx *ctx);

#endif /* SBM_CPU_BACKEND_H */
