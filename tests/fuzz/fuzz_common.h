/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the libFuzzer targets: one CPU context for the whole run, and a memfd that holds the
 * input bytes so that the file readers see them as a file (/proc/self/fd/N) without touching
 * the disk. Any contract violation found here calls __builtin_trap (a crash libFuzzer records). */
#ifndef SBM_FUZZ_COMMON_H
#define SBM_FUZZ_COMMON_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sbm.h"
#include "sbm_ba.h"
#include "sbm_io.h"
#include "sbm_slam.h"
#include "sbm_solve.h"

/* The context's allocator refuses single allocations above this (as a program reading untrusted
 * files can): a header announcing 2e9 rows then costs an SBM_ERR_OUT_OF_MEMORY with a message,
 * not a 16 GB allocation past libFuzzer's memory limit. */
#define FUZZ_ALLOC_CAP ((size_t)256 << 20)

static void *fuzz_alloc(void *user, size_t bytes)
{
    (void)user;
    return bytes > FUZZ_ALLOC_CAP ? NULL : malloc(bytes ? bytes : 1);
}

static void fuzz_free(void *user, void *ptr)
{
    (void)user;
    free(ptr);
}

static inline sbm_ctx *fuzz_ctx(void)
{
    static sbm_ctx *ctx;
    if (!ctx) {
        const sbm_allocator al = {fuzz_alloc, fuzz_free, NULL};
        if (sbm_ctx_create(&ctx, SBM_BACKEND_CPU, 0) != SBM_SUCCESS ||
            sbm_ctx_set_allocator(ctx, &al) != SBM_SUCCESS)
            abort();
    }
    return ctx;
}

/* The bytes as a file; returns its path (static buffer). */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("sbm_fuzz", 0);
        if (fd < 0) abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0) abort();
    size_t done = 0;
    while (done < size) {
        ssize_t w = pwrite(fd, data + done, size - done, (off_t)done);
        if (w <= 0) abort();
        done += (size_t)w;
    }
    return path;
}

/* A failed call must leave a message naming the call. */
static inline void fuzz_expect_message(sbm_ctx *ctx, sbm_status st, const char *fn)
{
    if (st == SBM_SUCCESS) return;
    const char *msg = sbm_ctx_last_error(ctx);
    if (sbm_ctx_last_status(ctx) != st || strncmp(msg, fn, strlen(fn)) != 0) __builtin_trap();
}

/* A call on an accepted input must succeed, or run out of the capped memory (FUZZ_ALLOC_CAP)
 * and say so. @return 1 on success, 0 on out of memory. */
static inline int fuzz_ok_or_oom(sbm_ctx *ctx, sbm_status st, const char *fn)
{
    if (st == SBM_SUCCESS) return 1;
    if (st != SBM_ERR_OUT_OF_MEMORY) __builtin_trap();
    fuzz_expect_message(ctx, st, fn);
    return 0;
}

#endif
