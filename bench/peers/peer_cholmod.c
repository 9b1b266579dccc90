/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench-chol's peer: CHOLMOD's supernodal Cholesky (SuiteSparse; Debian libsuitesparse-dev)
 * on the scalar CSC of the same upper triangle, the 64-bit-index interface (cholmod_l_*).
 * Settings: supernodal, one ordering method, AMD (the ordering family of sbm_chol_plan),
 * postordered; the BLAS behind it is the same OpenBLAS as sbm's, with the thread count the
 * bench sets for both (OPENBLAS_NUM_THREADS). Timed as sbm: cholmod_l_analyze (the ordering and
 * symbolic factorisation, like sbm_chol_plan), cholmod_l_factorize on the analysed L (the
 * numeric factorisation, refactoring L in place as a Levenberg-Marquardt loop would),
 * cholmod_l_solve; each timed as sbm is (chol_timing: median [min-max] of up to reps calls
 * after a warm-up, within the phase budget).
 * Memory: Common->memory_usage (CHOLMOD's own peak of bytes in use) above what the input
 * matrix holds, right-hand side and solution included.
 * Built without CHOLMOD (not found at configure time): run_cholmod says so, measures nothing. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer_cholmod.h"

#define CHOLMOD_SKIPPED "CHOLMOD: skipped (libsuitesparse-dev not found)"

#ifndef SBM_BENCH_HAVE_CHOLMOD

int cholmod_available(void) { return 0; }

const char *cholmod_describe(void) { return CHOLMOD_SKIPPED; }

void run_cholmod(const chol_matrix *m, int reps, double budget, chol_run *r)
{
    (void)m;
    (void)reps;
    (void)budget;
    *r = chol_run_none();
    snprintf(r->note, sizeof r->note, "%s", CHOLMOD_SKIPPED);
}

#else

#include <suitesparse/cholmod.h>

int cholmod_available(void) { return 1; }

const char *cholmod_describe(void)
{
    static char buf[96];
    snprintf(buf, sizeof buf, "CHOLMOD %d.%d.%d (supernodal, AMD only, postordered)",
             CHOLMOD_MAIN_VERSION, CHOLMOD_SUB_VERSION, CHOLMOD_SUBSUB_VERSION);
    return buf;
}

/* CHOLMOD's settings for the comparison. */
static void cholmod_setup(cholmod_common *c)
{
    cholmod_l_start(c);
    c->supernodal = CHOLMOD_SUPERNODAL;
    c->nmethods = 1;
    c->method[0].ordering = CHOLMOD_AMD;
    c->postorder = 1;
    c->final_asis = 1;
    c->print = 0; /* a matrix that is not positive definite is reported in the table */
}

/* Analyze as chol_timing says; *L is the last call's. */
static int time_analyze(cholmod_sparse *A, cholmod_common *c, chol_timing *tm,
                        cholmod_factor **L, chol_run *r)
{
    double t0;
    do {
        cholmod_l_free_factor(L, c);
        t0 = bench_now_s();
        *L = cholmod_l_analyze(A, c);
        if (*L == NULL) {
            snprintf(r->note, sizeof r->note, "cholmod_l_analyze failed (status %d)", c->status);
            return -1;
        }
    } while (chol_timing_next(tm, bench_now_s() - t0));
    r->analyze = chol_timing_stat(tm);
    r->lnz = c->lnz;
    r->flops = c->fl;
    return 0;
}

/* Factorize as chol_timing says, on the analysed L. */
static int time_factor(cholmod_sparse *A, cholmod_common *c, chol_timing *tm, cholmod_factor *L,
                       chol_run *r)
{
    double t0;
    do {
        t0 = bench_now_s();
        const int ok = cholmod_l_factorize(A, L, c);
        if (!ok || c->status != CHOLMOD_OK) {
            if (c->status == CHOLMOD_NOT_POSDEF)
                snprintf(r->note, sizeof r->note,
                         "cholmod_l_factorize: not positive definite (column %lld)",
                         (long long)L->minor);
            else
                snprintf(r->note, sizeof r->note, "cholmod_l_factorize failed (status %d)",
                         c->status);
            return -1;
        }
    } while (chol_timing_next(tm, bench_now_s() - t0));
    r->factor = chol_timing_stat(tm);
    r->factor_values = (double)L->xsize;
    r->supernodes = (double)L->nsuper;
    return 0;
}

/* Solve as chol_timing says; the residual of the last solve. */
static int time_solve(const chol_matrix *m, cholmod_common *c, chol_timing *tm, cholmod_factor *L,
                      chol_run *r)
{
    cholmod_dense *B = cholmod_l_allocate_dense((size_t)m->n, 1, (size_t)m->n, CHOLMOD_REAL, c);
    cholmod_dense *X = NULL;
    double *work = malloc(sizeof(double) * (size_t)(m->n ? m->n : 1));
    int rc = -1;
    if (B == NULL || work == NULL) {
        snprintf(r->note, sizeof r->note, "out of memory for the right-hand side");
        goto done;
    }
    chol_rhs(m->n, B->x);
    double t0;
    do {
        cholmod_l_free_dense(&X, c);
        t0 = bench_now_s();
        X = cholmod_l_solve(CHOLMOD_A, L, B, c);
        if (X == NULL) {
            snprintf(r->note, sizeof r->note, "cholmod_l_solve failed (status %d)", c->status);
            goto done;
        }
    } while (chol_timing_next(tm, bench_now_s() - t0));
    r->solve = chol_timing_stat(tm);
    r->residual = chol_residual(m, X->x, B->x, work);
    rc = 0;
done:
    cholmod_l_free_dense(&X, c);
    cholmod_l_free_dense(&B, c);
    free(work);
    return rc;
}

void run_cholmod(const chol_matrix *m, int reps, double budget, chol_run *r)
{
    *r = chol_run_none();
    cholmod_common c;
    cholmod_setup(&c);
    cholmod_factor *L = NULL;
    chol_timing ta, tf, ts;
    chol_timing_start(&ta, reps, budget);
    chol_timing_start(&tf, reps, budget);
    chol_timing_start(&ts, reps, budget);
    cholmod_sparse *A = cholmod_l_allocate_sparse((size_t)m->n, (size_t)m->n, (size_t)m->nnz, 1,
                                                  1, 1, CHOLMOD_REAL, &c);
    if (A == NULL) {
        snprintf(r->note, sizeof r->note, "out of memory for CHOLMOD's copy of A");
        goto done;
    }
    memcpy(A->p, m->colptr, sizeof(int64_t) * (size_t)(m->n + 1));
    memcpy(A->i, m->rowind, sizeof(int64_t) * (size_t)m->nnz);
    memcpy(A->x, m->val, sizeof(double) * (size_t)m->nnz);
    const size_t base = c.memory_inuse;
    c.memory_usage = c.memory_inuse;
    if (time_analyze(A, &c, &ta, &L, r) != 0 || time_factor(A, &c, &tf, L, r) != 0 ||
        time_solve(m, &c, &ts, L, r) != 0)
        goto done;
    r->peak_bytes = (double)(c.memory_usage - base);
    r->ok = 1;
done:
    cholmod_l_free_factor(&L, &c);
    cholmod_l_free_sparse(&A, &c);
    cholmod_l_finish(&c);
}

#endif /* SBM_BENCH_HAVE_CHOLMOD */
