/* SPDX-License-Identifier: BSD-3-Clause */
/* The clock, timing statistics, the elementwise check and the CSV rows of the benchmarks (see
 * bench_util.h). */
#define _POSIX_C_SOURCE 200809L

#include "bench_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static clockid_t bench_clock = CLOCK_MONOTONIC;

double bench_now_s(void)
{
    struct timespec t;
    clock_gettime(bench_clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void bench_clock_use_cpu(int cpu) { bench_clock = cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC; }

int bench_clock_is_cpu(void) { return bench_clock != CLOCK_MONOTONIC; }

void bench_note_error(char *note, size_t size, const sbm_ctx *ctx, sbm_status st)
{
    const char *m = ctx != NULL ? sbm_ctx_last_error(ctx) : "";
    snprintf(note, size, "%s%s%s", sbm_status_name(st), m[0] ? ": " : "", m);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bench_stat bench_stat_of(double *t, int n)
{
    bench_stat s = {-1.0, -1.0, -1.0, 0};
    if (n < 1) return s;
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    s.med = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    s.min = t[0];
    s.max = t[n - 1];
    s.n = n;
    return s;
}

bench_stat bench_stat_none(void)
{
    bench_stat s = {-1.0, -1.0, -1.0, 0};
    return s;
}

const char *bench_stat_str(char *buf, size_t size, bench_stat s, const char *fmt)
{
    char a[32], b[32], c[32];
    if (s.n < 1 || s.med < 0) {
        snprintf(buf, size, "-");
        return buf;
    }
    snprintf(a, sizeof a, fmt, s.med);
    snprintf(b, sizeof b, fmt, s.min);
    snprintf(c, sizeof c, fmt, s.max);
    snprintf(buf, size, "%s [%s-%s]", a, b, c);
    return buf;
}

double bench_max_rel_diff(const double *got, const double *ref, size_t count)
{
    double rmax = 0.0, worst = 0.0;
    for (size_t i = 0; i < count; i++) rmax = fmax(rmax, fabs(ref[i]));
    const double floor = fmax(BENCH_REL_FLOOR * rmax, 1e-300);
    for (size_t i = 0; i < count; i++) {
        const double d = fabs(got[i] - ref[i]);
        /* NaN in either fails the check */
        if (d != d) return INFINITY;
        worst = fmax(worst, d / fmax(fabs(ref[i]), floor));
    }
    return worst;
}

double bench_csr_max_rel_diff(int64_t m, const int64_t *got_rowptr, const int32_t *got_col,
                              const double *got_val, const int32_t *ref_rowptr,
                              const int32_t *ref_col, const double *ref_val,
                              int (*keep)(int64_t i, int32_t j, const void *user),
                              const void *user, double *work)
{
    double rmax = 0.0, worst = 0.0;
    for (int64_t i = 0; i < m; i++)
        for (int32_t t = ref_rowptr[i]; t < ref_rowptr[i + 1]; t++)
            if (!keep || keep(i, ref_col[t], user)) rmax = fmax(rmax, fabs(ref_val[t]));
    const double floor = fmax(BENCH_REL_FLOOR * rmax, 1e-300);
    /* per row: work[j] = ref(i,j) - got(i,j) over the kept positions, then each position's
     * relative difference against ref(i,j) (read back from ref, zero where ref has none) */
    for (int64_t i = 0; i < m; i++) {
        for (int32_t t = ref_rowptr[i]; t < ref_rowptr[i + 1]; t++)
            if (!keep || keep(i, ref_col[t], user)) work[ref_col[t]] += ref_val[t];
        for (int64_t t = got_rowptr[i]; t < got_rowptr[i + 1]; t++)
            if (!keep || keep(i, got_col[t], user)) work[got_col[t]] -= got_val[t];
        for (int32_t t = ref_rowptr[i]; t < ref_rowptr[i + 1]; t++) {
            const int32_t j = ref_col[t];
            if (keep && !keep(i, j, user)) continue;
            const double d = fabs(work[j]);
            if (d != d) return INFINITY;
            worst = fmax(worst, d / fmax(fabs(ref_val[t]), floor));
            work[j] = 0.0;
        }
        /* entries only in got (or a second copy of a position): the difference is got's value */
        for (int64_t t = got_rowptr[i]; t < got_rowptr[i + 1]; t++) {
            const int32_t j = got_col[t];
            const double d = fabs(work[j]);
            if (d != d) return INFINITY;
            worst = fmax(worst, d / floor);
            work[j] = 0.0;
        }
    }
    return worst;
}

int bench_csv_row_init(bench_csv_row *r, const char *const *cols)
{
    r->cols = cols;
    r->ncols = 0;
    while (cols[r->ncols]) r->ncols++;
    r->val = calloc((size_t)r->ncols + 1, sizeof *r->val);
    return r->val ? 0 : -1;
}

void bench_csv_row_free(bench_csv_row *r)
{
    free(r->val);
    r->val = NULL;
}

void bench_csv_header(FILE *f, const char *const *cols)
{
    for (int i = 0; cols[i]; i++) fprintf(f, "%s%s", i ? "," : "", cols[i]);
    fputc('\n', f);
}

static char *field(bench_csv_row *r, const char *name)
{
    for (int i = 0; i < r->ncols; i++)
        if (strcmp(r->cols[i], name) == 0) return r->val[i];
    fprintf(stderr, "benchmark bug: no CSV column %s\n", name);
    abort();
}

void bench_csv_num(bench_csv_row *r, const char *name, const char *fmt, double v)
{
    char *f = field(r, name);
    if (v >= 0.0 && isfinite(v)) snprintf(f, sizeof r->val[0], fmt, v);
    else f[0] = '\0';
}

void bench_csv_stat(bench_csv_row *r, const char *name, bench_stat s)
{
    char col[96];
    const int ok = s.n > 0 && s.med >= 0.0;
    snprintf(col, sizeof col, "%s_ms", name);
    bench_csv_num(r, col, "%.6f", ok ? s.med : -1.0);
    snprintf(col, sizeof col, "%s_min_ms", name);
    bench_csv_num(r, col, "%.6f", ok ? s.min : -1.0);
    snprintf(col, sizeof col, "%s_max_ms", name);
    bench_csv_num(r, col, "%.6f", ok ? s.max : -1.0);
}

void bench_csv_text(bench_csv_row *r, const char *name, const char *text)
{
    char *f = field(r, name);
    size_t k = 0;
    f[k++] = '"';
    for (; *text && k + 2 < sizeof r->val[0]; text++) f[k++] = *text == '"' ? '\'' : *text;
    f[k++] = '"';
    f[k] = '\0';
}

void bench_csv_write(FILE *f, bench_csv_row *r)
{
    if (f) {
        for (int i = 0; i < r->ncols; i++) fprintf(f, "%s%s", i ? "," : "", r->val[i]);
        fputc('\n', f);
        fflush(f);
    }
    memset(r->val, 0, (size_t)r->ncols * sizeof *r->val);
}
