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

static inline sbm_ctx *fuzz_ctx(void)
{
    static sbm_ctx *ctx;
    if (!ctx && sbm_ctx_create(&ctx, SBM_BACKEND_CPU, 0) != SBM_SUCCESS) abort();
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

#endif
