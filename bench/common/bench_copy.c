/* SPDX-License-Identifier: BSD-3-Clause */
/* The memory-bandwidth yardstick of the benchmarks (bench_util.h): a device-to-device copy timed
 * with CUDA events (built with SBM_BENCH_HAVE_CUDART), else a host memcpy; the device's name and
 * memory. Shared by sbm-bench-gpu and sbm-bench-ba. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#ifdef SBM_BENCH_HAVE_CUDART
#include <cuda_runtime.h>
#endif

#define COPY_REPS 10

#ifdef SBM_BENCH_HAVE_CUDART
/* 1 GiB copied device to device, an untimed first copy then COPY_REPS timed ones: the median,
 * read + write bytes per second. */
static double device_copy_gbs(void)
{
    const size_t bytes = (size_t)1 << 30;
    void *a = NULL, *b = NULL;
    if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        cudaFree(a);
        return -1.0;
    }
    cudaMemset(a, 1, bytes);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    double t[COPY_REPS];
    for (int rep = 0; rep <= COPY_REPS; rep++) {
        cudaEventRecord(e0, 0);
        cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0);
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        float ms = 0.0f;
        cudaEventElapsedTime(&ms, e0, e1);
        if (rep > 0) t[rep - 1] = ms;
    }
    const double ms = bench_stat_of(t, COPY_REPS).med;
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    return ms > 0 ? 2.0 * (double)bytes / (ms * 1e6) : -1.0;
}
#endif

/* 256 MiB memcpy on the host, one thread, the same rule. */
static double host_copy_gbs(void)
{
    const size_t bytes = (size_t)1 << 28;
    char *a = malloc(bytes), *b = malloc(bytes);
    double t[COPY_REPS], gbs = -1.0;
    if (a && b) {
        memset(a, 1, bytes);
        memset(b, 0, bytes);
        for (int rep = 0; rep <= COPY_REPS; rep++) {
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            memcpy(b, a, bytes);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            a[rep] = b[bytes - 1 - (size_t)rep]; /* keeps the copy observable */
            if (rep > 0)
                t[rep - 1] = 1e3 * (double)(t1.tv_sec - t0.tv_sec) +
                             1e-6 * (double)(t1.tv_nsec - t0.tv_nsec);
        }
        const double ms = bench_stat_of(t, COPY_REPS).med;
        gbs = ms > 0 ? 2.0 * (double)bytes / (ms * 1e6) : -1.0;
    }
    free(a);
    free(b);
    return gbs;
}

double bench_copy_gbs(char *what, size_t size)
{
#ifdef SBM_BENCH_HAVE_CUDART
    int n = 0;
    if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
        snprintf(what, size, "device-to-device cudaMemcpy of 1 GiB (read + write), CUDA events");
        return device_copy_gbs();
    }
    (void)cudaGetLastError();
#endif
    snprintf(what, size, "host memcpy of 256 MiB (read + write), one thread: no CUDA device");
    return host_copy_gbs();
}

void bench_device_name(int cuda, char *name, size_t size)
{
#ifdef SBM_BENCH_HAVE_CUDART
    struct cudaDeviceProp prop;
    if (cuda && cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
        snprintf(name, size, "%s", prop.name);
        return;
    }
    (void)cudaGetLastError();
#endif
    char model[96] = "CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
            snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
            model[strcspn(model, "\n")] = '\0';
            break;
        }
    if (f) fclose(f);
    snprintf(name, size, "%s%s (host), %ld cores", cuda ? "no CUDA device: " : "", model,
             sysconf(_SC_NPROCESSORS_ONLN));
}

double bench_device_memory(void)
{
#ifdef SBM_BENCH_HAVE_CUDART
    size_t free_b = 0, total = 0;
    if (cudaMemGetInfo(&free_b, &total) == cudaSuccess) return (double)total;
    (void)cudaGetLastError();
#endif
    return 0.0;
}
