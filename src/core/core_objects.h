/* SPDX-License-Identifier: BSD-3-Clause */
/* Objects of the library: contexts, matrices, the helpers every file shares (src/core). */
#ifndef SBM_CORE_OBJECTS_H
#define SBM_CORE_OBJECTS_H

#include "sbm.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if [a, a+abytes) and [b, b+bbytes) share a byte; empty ranges overlap nothing (aliasing
 * checks of the front end). */
static inline int sbm__ranges_overlap(const void *a, uint64_t abytes, const void *b,
                                      uint64_t bbytes)
{
    if (!a || !b || abytes == 0 || bbytes == 0) return 0;
    const uint64_t a0 = (uint64_t)(uintptr_t)a, b0 = (uint64_t)(uintptr_t)b;
    const uint64_t a1 = abytes > UINT64_MAX - a0 ? UINT64_MAX : a0 + abytes;
    const uint64_t b1 = bbytes > UINT64_MAX - b0 ? UINT64_MAX : b0 + bbytes;
    return a0 < b1 && b0 < a1;
}

/* Bytes spanned by count doubles (saturating). */
static inline uint64_t sbm__dbytes(int64_t count)
{
    if (count <= 0) return 0;
    return (uint64_t)count > UINT64_MAX / sizeof(double) ? UINT64_MAX
                                                         : (uint64_t)count * sizeof(double);
}

/* qsort comparator: ascending int32_t. */
static inline int sbm__cmp_i32(const void *a, const void *b)
{
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}


/* ---------------------------------------------------------------------------------------- */
/* Objects                                                                                  */
/* ---------------------------------------------------------------------------------------- */

#define SBM__MSG_SIZE 1024
/* Depth of nested public calls whose names messages keep (deeper ones are still nested). */
#define SBM__NEST_MAX 8

struct sbm__backend_ops;

/* Traffic through a context, for tests that pin down where data moves: host<->device copies
 * (counted by the device backends' copy, also for a host-side context that downloads) and
 * allocations in the context's memory space (sbm__alloc and the CUDA workspace pool). */
typedef struct sbm__stats {
    uint64_t h2d_copies;   /* host -> device copies */
    uint64_t h2d_bytes;
    uint64_t d2h_copies;   /* device -> host copies */
    uint64_t d2h_bytes;
    uint64_t allocs;       /* allocations in the context's memory space */
    uint64_t alloc_bytes;
    uint64_t graph_launches; /* CUDA graphs launched (kernels/cuda/cuda_graph.cu) */
} sbm__stats;

struct sbm_ctx {
    sbm_backend backend;                 /* CPU or CUDA */
    int device;                          /* CUDA device ordinal */
    const struct sbm__backend_ops *ops;  /* the backend's kernels */
    struct CUstream_st *stream;          /* CUDA stream (NULL = default stream) */
    size_t memory_budget;                /* 0 = backend default */
    sbm_allocator allocator;             /* allocator for the backend's memory space */
    int custom_allocator;                /* 1 if the user installed a hook */
    const char *fn;                      /* public call in progress, for messages */
    sbm_status last_status;              /* status of the last failure */
    char message[SBM__MSG_SIZE];         /* message of the last failure */
    void *backend_data;                  /* backend state (CUDA: workspace pool, properties) */
    sbm__stats stats;                    /* transfers and allocations (sbm__stats_*) */
    int depth;                           /* public calls nested inside fn (SBM__NESTED) */
    const char *nest_fn[SBM__NEST_MAX];  /* their names, outermost first (NULL: internal) */
    sbm_tuning tuning;                   /* kernel overrides (sbm_ctx_set_tuning), checked */
    int default_threads;                 /* CPU threads while tuning.num_threads is 0:
                                            SBM_NUM_THREADS at creation, else the online cores
                                            (1 to SBM__MAX_THREADS) */
    int fine_grain;                      /* tests: 1 = the CPU kernels' parallel loops use every
                                            thread down to one item each (their thresholds
                                            ignored), so small inputs exercise the split */
};

/* sbm_tuning.num_threads at most: the CPU backend's thread pieces live on the stack. */
#define SBM__MAX_THREADS 64

/* Merge-path CSR SpMV configurations the CUDA backend compiles, X(index, threads, items per
 * thread, streaming loads of A, persistent grid loading ahead), and the default index: one list
 * for the kernels (kernels/cuda) and the check of sbm_ctx_set_tuning (src/core/context.c). */
#define SBM__CSR_MERGE_CONFIGS(X)                                                                \
    X(0, 128, 7, 0, 0) X(1, 256, 7, 0, 0) X(2, 128, 11, 0, 0) X(3, 64, 5, 0, 0)                   \
    X(4, 256, 5, 0, 0) X(5, 128, 7, 1, 0) X(6, 256, 7, 1, 0) X(7, 128, 7, 1, 1)                   \
    X(8, 256, 7, 1, 1) X(9, 128, 5, 1, 1)
#define SBM__CSR_MERGE_DEFAULT 6

struct sbm_cbc {
    int64_t nbr;           /* block rows */
    int64_t nbc;           /* block columns */
    int r;                 /* rows per block */
    int c;                 /* columns per block */
    int64_t nnzb;          /* stored blocks */
    int64_t *colptr;       /* column pointers (size nbc+1) */
    int32_t *rowind;       /* block-row indices (size nnzb) */
    double *values;        /* block values, column-major blocks (size nnzb*r*c) */
    sbm_backend backend;   /* memory space of the arrays */
    int device;            /* CUDA device ordinal */
    int owns;              /* 1: arrays allocated by the library and freed by destroy */
    sbm_allocator allocator; /* how the arrays were allocated (owns == 1) */
    const struct sbm__backend_ops *ops; /* backend that frees the struct's arrays */
    uint64_t pattern_id;   /* unique per pattern instance; equal ids mean equal patterns */
};

struct sbm_csr {
    int64_t m;             /* rows */
    int64_t n;             /* columns */
    int64_t nnz;           /* stored entries */
    int64_t *rowptr;       /* row pointers (size m+1) */
    int32_t *colind;       /* column indices (size nnz) */
    double *values;        /* values (size nnz) */
    sbm_backend backend;   /* memory space of the arrays */
    int device;            /* CUDA device ordinal */
    int owns;              /* 1: arrays allocated by the library and freed by destroy */
    sbm_allocator allocator; /* how the arrays were allocated (owns == 1) */
    const struct sbm__backend_ops *ops; /* backend that frees the struct's arrays */
    uint64_t pattern_id;   /* unique per pattern instance */
};

#ifdef __cplusplus
}
#endif

#endif /* SBM_CORE_OBJECTS_H */
