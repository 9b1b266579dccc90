/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the benchmarks: the clock, timing statistics, the elementwise result check, CSV rows,
 * the note of a failed sbm call and the copy-bandwidth yardstick (bench_copy.c).
 *
 * Timing: every figure is the median of its timed repetitions, reported with their min and max
 * (the spread of the run), after at least one untimed warm-up call.
 *
 * Check: a result is compared entry by entry with the peer's (or the reference backend's):
 *   rel_i = |got_i - ref_i| / max(|ref_i|, BENCH_REL_FLOOR * max_j |ref_j|)
 * and the row fails when max_i rel_i > BENCH_CHECK_TOL. The floor keeps entries that cancel to
 * almost zero (a sum of terms of both signs) from failing on rounding alone: such an entry is
 * held to an absolute error of BENCH_CHECK_TOL * BENCH_REL_FLOOR of the largest entry (1e-12),
 * every other entry to a relative error of 1e-9. FP64 sums of up to a few thousand terms in
 * another order stay far below both. */
#ifndef SBM_BENCH_UTIL_H
#define SBM_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sbm.h"

#define BENCH_REL_FLOOR 1e-3
#define BENCH_CHECK_TOL 1e-9

/* Seconds on the benchmarks' clock: the wall clock (monotonic) by default; after
 * bench_clock_use_cpu(1) the calling thread's CPU time, which on a shared machine leaves out the
 * time other processes held the core (a CUDA wait does not show in it). */
double bench_now_s(void);
/* cpu: 1 for the thread's CPU time, 0 for the wall clock. */
void bench_clock_use_cpu(int cpu);
/* 1 when bench_now_s reads the thread's CPU time. */
int bench_clock_is_cpu(void);

typedef struct bench_stat {
    double med;  /* median of the timed repetitions (ms); < 0: not measured */
    double min;  /* fastest repetition */
    double max;  /* slowest repetition */
    int n;       /* repetitions */
} bench_stat;

/* Statistics of t[0..n) (sorted in place); {-1, -1, -1, 0} for n < 1. */
bench_stat bench_stat_of(double *t, int n);
/* A figure not measured. */
bench_stat bench_stat_none(void);
/* "med [min-max]" with fmt for each number (e.g. "%.3f"); "-" when not measured. */
const char *bench_stat_str(char *buf, size_t size, bench_stat s, const char *fmt);

/* max_i rel_i over count entries (see above); 0 for count 0. */
double bench_max_rel_diff(const double *got, const double *ref, size_t count);

/* The same over two CSR matrices of m rows, possibly with different patterns (an entry absent
 * on one side reads as zero). got: int64 row pointers; ref: int32 ones (cuSPARSE, CSparse).
 * keep (may be NULL): compare only the ref entries (i, j) it accepts and got's entries of the
 * same positions (e.g. the upper block triangle). work: n doubles, zero on entry and on return.
 * @return the max relative difference. */
double bench_csr_max_rel_diff(int64_t m, const int64_t *got_rowptr, const int32_t *got_col,
                              const double *got_val, const int32_t *ref_rowptr,
                              const int32_t *ref_col, const double *ref_val,
                              int (*keep)(int64_t i, int32_t j, const void *user),
                              const void *user, double *work);

/* "STATUS: message" of a failed call on ctx (may be NULL) into note. */
void bench_note_error(char *note, size_t size, const sbm_ctx *ctx, sbm_status st);

/* One CSV row of named columns: the header is the column list, a row sets some of them by name
 * (the rest stay empty). Text is quoted; numbers are written as given. */
typedef struct bench_csv_row {
    const char *const *cols; /* column names, NULL-terminated */
    int ncols;
    char (*val)[256];        /* one value per column */
} bench_csv_row;

/* @return 0, or -1 out of host memory. */
int bench_csv_row_init(bench_csv_row *r, const char *const *cols);
void bench_csv_row_free(bench_csv_row *r);
void bench_csv_header(FILE *f, const char *const *cols);
/* Set column name (which must exist: a wrong name aborts, a bug of the benchmark) to a number
 * with fmt; a negative or non-finite v leaves the field empty. */
void bench_csv_num(bench_csv_row *r, const char *name, const char *fmt, double v);
/* name_ms, name_min_ms, name_max_ms from s. */
void bench_csv_stat(bench_csv_row *r, const char *name, bench_stat s);
void bench_csv_text(bench_csv_row *r, const char *name, const char *text);
/* Write the row and clear it for the next one. */
void bench_csv_write(FILE *f, bench_csv_row *r);

/* ---- bench_copy.c: the memory-bandwidth yardstick ---- */

/* A device-to-device cudaMemcpy of 1 GiB timed with CUDA events (built with
 * SBM_BENCH_HAVE_CUDART and a device present), else a host memcpy of 256 MiB (one thread): the
 * median of 10 copies after an untimed one, read + write bytes per second (GB/s; -1 if it could
 * not be measured). what (size bytes) says which copy was timed. */
double bench_copy_gbs(char *what, size_t size);
/* cuda: the CUDA device 0's name; else (or without a device) the host CPU's, "model (host), N
 * cores". */
void bench_device_name(int cuda, char *name, size_t size);
/* Device 0's memory in bytes (0 without the CUDA runtime or a device). */
double bench_device_memory(void);

#endif /* SBM_BENCH_UTIL_H */
