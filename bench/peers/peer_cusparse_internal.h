/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the cuSPARSE peer's files (peer_cusparse.c: helpers, BSR SpMV, CSR SpMV/SpMM;
 * peer_cusparse_spgemm.c): the device allocations it counts for its peak memory, and the
 * macros that turn a failed cuSPARSE or CUDA call into the caller's msg and `goto fail`. */
#ifndef SBM_PEER_CUSPARSE_INTERNAL_H
#define SBM_PEER_CUSPARSE_INTERNAL_H

#include <cuda_runtime.h>
#include <cusparse.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Device allocations of the peer, counted for its peak memory. */
typedef struct tracker {
    size_t live, peak;
    cudaError_t err;     /* the last failed cudaMalloc's status (cudaErrorMemoryAllocation: out of memory) */
} tracker;

/* cudaMalloc of bytes (1 for 0), counted; NULL on failure (t->err says why). */
void *tmalloc(tracker *t, size_t bytes);
/* cudaFree of p (NULL: nothing); bytes leave the live count. */
void tfree(tracker *t, void *p, size_t bytes);
/* int32 copy of a device int64 offset array (cuSPARSE's SpGEMM takes 32-bit indices only). */
int32_t *offsets32(tracker *t, const int64_t *d64, int64_t n);

#define CS(call, what)                                                                        \
    do {                                                                                      \
        cusparseStatus_t cs_ = (call);                                                        \
        if (cs_ != CUSPARSE_STATUS_SUCCESS) {                                                 \
            snprintf(msg, sizeof msg, "%s: %s", (what), cusparseGetErrorName(cs_));           \
            goto fail;                                                                        \
        }                                                                                     \
    } while (0)
#define CU(call, what)                                                                        \
    do {                                                                                      \
        cudaError_t ce_ = (call);                                                             \
        if (ce_ != cudaSuccess) {                                                             \
            snprintf(msg, sizeof msg, "%s: %s", (what), cudaGetErrorName(ce_));               \
            (void)cudaGetLastError();                                                         \
            goto fail;                                                                        \
        }                                                                                     \
    } while (0)

#endif /* SBM_PEER_CUSPARSE_INTERNAL_H */
