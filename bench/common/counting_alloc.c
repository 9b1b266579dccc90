/* SPDX-License-Identifier: BSD-3-Clause */
/* The counting allocator of sbm-bench-chol's and sbm-bench-ba's contexts (counting_alloc.h): it
 * keeps the bytes live and the most live at once (host: malloc; device: cudaMalloc, built with
 * SBM_BENCH_HAVE_CUDART), each allocation's size in an open-addressing table keyed by its address;
 * with a cap it refuses what would exceed it (a smaller GPU, for sbm-bench-ba's out-of-memory
 * run). */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdlib.h>

#include "counting_alloc.h"

#ifdef SBM_BENCH_HAVE_CUDART
#include <cuda_runtime.h>
#endif

static size_t slot_of(const void *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 48) & (TRACK_SLOTS - 1);
}

void *counting_alloc(void *user, size_t bytes)
{
    counter *c = user;
    void *p = NULL;
    if (c->cap > 0 && (bytes > c->cap || c->live > c->cap - bytes)) return NULL;
#ifdef SBM_BENCH_HAVE_CUDART
    if (c->device) {
        if (cudaMalloc(&p, bytes) != cudaSuccess) {
            (void)cudaGetLastError();
            return NULL;
        }
    } else
#endif
        p = malloc(bytes);
    if (p == NULL) return NULL;
    size_t s = slot_of(p), k = 0;
    while (c->ptr[s] != NULL && k++ < TRACK_SLOTS) s = (s + 1) & (TRACK_SLOTS - 1);
    if (k >= TRACK_SLOTS) {
        c->lost = 1;
    } else {
        c->ptr[s] = p;
        c->size[s] = bytes;
    }
    c->live += bytes;
    if (c->live > c->peak) c->peak = c->live;
    return p;
}

void counting_free(void *user, void *p)
{
    counter *c = user;
    if (p == NULL) return;
    size_t s = slot_of(p), k = 0;
    while (c->ptr[s] != p && k++ < TRACK_SLOTS) s = (s + 1) & (TRACK_SLOTS - 1);
    if (k >= TRACK_SLOTS) {
        c->lost = 1;
    } else {
        c->live -= c->size[s];
        c->ptr[s] = NULL;
        /* re-insert the rest of the probe run so that later lookups still find them */
        for (size_t t = (s + 1) & (TRACK_SLOTS - 1); c->ptr[t] != NULL;
             t = (t + 1) & (TRACK_SLOTS - 1)) {
            void *q = c->ptr[t];
            const size_t z = c->size[t];
            c->ptr[t] = NULL;
            size_t u = slot_of(q);
            while (c->ptr[u] != NULL) u = (u + 1) & (TRACK_SLOTS - 1);
            c->ptr[u] = q;
            c->size[u] = z;
        }
    }
#ifdef SBM_BENCH_HAVE_CUDART
    if (c->device) {
        cudaFree(p);
        return;
    }
#endif
    free(p);
}

