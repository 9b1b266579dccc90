/* SPDX-License-Identifier: BSD-3-Clause */
/* The timing rule, the right-hand side and the residual check that sbm-bench-chol holds sbm and
 * CHOLMOD to alike (chol_run.h). */
#include <math.h>
#include <string.h>

#include "chol_run.h"

void chol_timing_start(chol_timing *tm, int reps, double budget)
{
    memset(tm, 0, sizeof *tm);
    tm->want = reps < 1 ? 1 : reps > CHOL_MAX_REPS ? CHOL_MAX_REPS : reps;
    tm->budget = budget;
}

int chol_timing_next(chol_timing *tm, double s)
{
    if (tm->calls++ == 0) { /* the warm-up */
        if (s > tm->budget) {
            tm->t[tm->done++] = 1e3 * s;
            return 0;
        }
        if (s > 0 && tm->budget / s < tm->want)
            tm->want = tm->budget / s < 1 ? 1 : (int)(tm->budget / s);
        return 1;
    }
    tm->t[tm->done++] = 1e3 * s;
    return tm->done < tm->want;
}

bench_stat chol_timing_stat(chol_timing *tm) { return bench_stat_of(tm->t, tm->done); }

void chol_rhs(int64_t n, double *b)
{
    uint64_t s = 12345;
    for (int64_t i = 0; i < n; i++) b[i] = 2.0 * sbm_splitmix64_uniform(&s) - 1.0;
}

void chol_sym_multiply(const chol_matrix *m, const double *x, double *y)
{
    memset(y, 0, sizeof(double) * (size_t)m->n);
    for (int64_t j = 0; j < m->n; j++)
        for (int64_t p = m->colptr[j]; p < m->colptr[j + 1]; p++) {
            const int64_t i = m->rowind[p];
            y[i] += m->val[p] * x[j];
            if (i != j) y[j] += m->val[p] * x[i];
        }
}

double chol_residual(const chol_matrix *m, const double *x, const double *b, double *work)
{
    chol_sym_multiply(m, x, work);
    double rr = 0.0, bb = 0.0;
    for (int64_t i = 0; i < m->n; i++) {
        rr += (work[i] - b[i]) * (work[i] - b[i]);
        bb += b[i] * b[i];
    }
    return bb > 0 ? sqrt(rr / bb) : sqrt(rr);
}

chol_run chol_run_none(void)
{
    chol_run r;
    memset(&r, 0, sizeof r);
    r.analyze = r.factor = r.solve = r.inverse = bench_stat_none();
    r.factor_values = r.lnz = r.flops = r.supernodes = r.peak_bytes = r.residual = -1.0;
    return r;
}
