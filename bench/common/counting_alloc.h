/* SPDX-License-Identifier: BSD-3-Clause */
/* The counting allocator of sbm-bench-chol's and sbm-bench-ba's contexts (counting_alloc.c): an
 * sbm_allocator whose user is a counter of the bytes live and the most live at once (host: malloc;
 * device: cudaMalloc), with an optional cap. */
#ifndef SBM_BENCH_COUNTING_ALLOC_H
#define SBM_BENCH_COUNTING_ALLOC_H

#include <stddef.h>

#define TRACK_SLOTS (1 << 16)

typedef struct counter {
    int device;        /* 1: cudaMalloc; 0: malloc */
    size_t cap;        /* refuse an allocation that would take live above cap (0: no cap) */
    size_t live, peak;
    int lost;          /* the table overflowed: peak unknown */
    void *ptr[TRACK_SLOTS];
    size_t size[TRACK_SLOTS];
} counter;

void *counting_alloc(void *user, size_t bytes);
void counting_free(void *user, void *p);

#endif /* SBM_BENCH_COUNTING_ALLOC_H */
