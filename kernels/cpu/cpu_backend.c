/* SPDX-License-Identifier: BSD-3-Clause */
/* The CPU backend's core table: host memory and the reference kernels. */
#include "cpu_backend.h"

#include <stdlib.h>
#include <string.h>

void *sbm__cpu_default_alloc(void *user, size_t bytes)
{
    (void)user;
    return malloc(bytes);
}

void sbm__cpu_default_free(void *user, void *ptr)
{
    (void)user;
    free(ptr);
}

sbm_status sbm__cpu_copy(sbm_ctx *ctx, void *dst, const void *src, size_t bytes, int kind)
{
    (void)ctx;
    (void)kind;
    if (bytes) memmove(dst, src, bytes);
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_memset0(sbm_ctx *ctx, void *dst, size_t bytes)
{
    (void)ctx;
    if (bytes) memset(dst, 0, bytes);
    return SBM_SUCCESS;
}

/* In the list's order (core_backend.h); the CUDA-only entries (stream, device context, one-shot
 * CSR SpGEMM) are NULL. */
const sbm__backend_ops sbm__cpu_ops = {
    "CPU", SBM__CORE_KERNELS(SBM__KERNEL_CPU_INIT, SBM__KERNEL_NULL_INIT)};
