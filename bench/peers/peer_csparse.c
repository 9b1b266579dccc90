/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench's peer: CSparse (CXSparse, cs_di_multiply) on the product expanded to scalars, and
 * the elementwise check of sbm's C against its C (peer_csparse.h). */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "peer_csparse.h"

#ifdef SBM_BENCH_HAVE_CSPARSE
#include <limits.h>
#include <suitesparse/cs.h>

/* Scalar CSC arrays of op(X) on the host: CSC(X) = CSR(X^T), CSC(X^T) = CSR(X). */
static sbm_status scalar_csc(sbm_ctx *host, const sbm_cbc *X, sbm_op op, sbm_csr **out)
{
    sbm_cbc *XT = NULL;
    sbm_status st;
    *out = NULL;
    if (op == SBM_OP_T) return sbm_cbc_to_csr(host, X, out);
    st = sbm_cbc_transpose(host, X, &XT);
    if (st == SBM_SUCCESS) st = sbm_cbc_to_csr(host, XT, out);
    sbm_cbc_destroy(XT);
    return st;
}

/* A cs_di view (int indices, as CSparse users use it) of CSC arrays held as CSR of the transpose.
 * @return 0 if the matrix does not fit int. */
static int to_cs(const sbm_csr *T, cs_di *out, int *p, int *i)
{
    sbm_csr_info ti = sbm_csr_get_info(T);
    if (ti.nnz > INT_MAX || ti.m > INT_MAX || ti.n > INT_MAX) return 0;
    for (int64_t k = 0; k <= ti.m; k++) p[k] = (int)ti.rowptr[k];
    for (int64_t k = 0; k < ti.nnz; k++) i[k] = ti.colind[k];
    out->nzmax = (int)ti.nnz;
    out->m = (int)ti.n; /* CSR of X^T with n columns = CSC of X with n rows */
    out->n = (int)ti.m;
    out->p = p;
    out->i = i;
    out->x = ti.values;
    out->nz = -1;
    return 1;
}

void run_csparse(sbm_ctx *host, const sbm_cbc *A_in, sbm_op op_a, const sbm_cbc *B_in, sbm_op op_b,
                 unsigned flags, int reps, int r_c, int c_c, peer_result *res)
{
    sbm_csr *a = NULL, *b = NULL;
    int *ap = NULL, *ai = NULL, *bp = NULL, *bi = NULL;
    double *t = malloc(sizeof(double) * (size_t)reps);
    cs_di A, B;
    cs_di *C = NULL;
    sbm_status st;
    memset(res, 0, sizeof(*res));
    if ((st = scalar_csc(host, A_in, op_a, &a)) != SBM_SUCCESS ||
        (st = scalar_csc(host, B_in, op_b, &b)) != SBM_SUCCESS) {
        bench_note_error(res->note, sizeof(res->note), host, st);
        goto done;
    }
    sbm_csr_info a_i = sbm_csr_get_info(a), b_i = sbm_csr_get_info(b);
    ap = malloc(sizeof(int) * (size_t)(a_i.m + 1));
    ai = malloc(sizeof(int) * (size_t)a_i.nnz + 1);
    bp = malloc(sizeof(int) * (size_t)(b_i.m + 1));
    bi = malloc(sizeof(int) * (size_t)b_i.nnz + 1);
    if (!t || !ap || !ai || !bp || !bi) {
        snprintf(res->note, sizeof(res->note), "out of memory");
        goto done;
    }
    if (!to_cs(a, &A, ap, ai) || !to_cs(b, &B, bp, bi)) {
        snprintf(res->note, sizeof(res->note), "too large for int indices");
        goto done;
    }
    /* flops of the scalar product: every A(:,k) scaled once per entry B(k,j) */
    double f = 0.0;
    for (int j = 0; j < B.n; j++)
        for (int q = B.p[j]; q < B.p[j + 1]; q++) f += A.p[B.i[q] + 1] - A.p[B.i[q]];
    res->flops = 2.0 * f;

    C = cs_di_multiply(&A, &B); /* warm-up */
    for (int rep = 0; rep < reps && C != NULL; rep++) {
        cs_di_spfree(C);
        const double t0 = bench_now_s();
        C = cs_di_multiply(&A, &B);
        t[rep] = 1e3 * (bench_now_s() - t0);
    }
    if (C == NULL) {
        snprintf(res->note, sizeof(res->note), "cs_multiply failed (out of memory)");
        goto done;
    }
    res->t = bench_stat_of(t, reps);
    res->ms = res->t.med;
    res->C = C; /* the last call's result, for the check */
    C = NULL;
    res->r_c = r_c;
    res->c_c = c_c;
    res->upper = (flags & SBM_GEMM_UPPER) != 0;
    res->ok = 1;
done:
    if (C != NULL) cs_di_spfree(C);
    free(ap);
    free(ai);
    free(bp);
    free(bi);
    free(t);
    sbm_csr_destroy(a);
    sbm_csr_destroy(b);
}
/* CSparse's C is CSC: the CSR of C^T, row jc (a column of C), column ic (a row of C). */
static int upper_entry(int64_t jc, int32_t ic, const void *user)
{
    const peer_result *p = user;
    return ic / p->r_c <= (int32_t)(jc / p->c_c);
}

double peer_diff(sbm_ctx *host, const peer_result *p, const sbm_cbc *c_host)
{
    const cs_di *C = p->C;
    sbm_csr *S = NULL, *ST = NULL;
    double d = -1.0;
    if (!C || !c_host) return -1.0;
    /* sbm's C as the CSR of C^T, the layout of CSparse's CSC */
    if (sbm_cbc_to_csr(host, c_host, &S) == SBM_SUCCESS && sbm_csr_transpose(host, S, &ST) == SBM_SUCCESS) {
        sbm_csr_info t = sbm_csr_get_info(ST);
        double *work = calloc((size_t)t.n + 1, sizeof *work);
        if (work && t.m == C->n && t.n == C->m)
            d = bench_csr_max_rel_diff(t.m, t.rowptr, t.colind, t.values, C->p, C->i, C->x,
                                       p->upper ? upper_entry : NULL, p, work);
        free(work);
    }
    sbm_csr_destroy(ST);
    sbm_csr_destroy(S);
    return d;
}

void peer_result_free(peer_result *p)
{
    if (p->C) cs_di_spfree(p->C);
    p->C = NULL;
}
#else
double peer_diff(sbm_ctx *host, const peer_result *p, const sbm_cbc *c_host)
{
    (void)host;
    (void)p;
    (void)c_host;
    return -1.0;
}

void peer_result_free(peer_result *p) { (void)p; }

void run_csparse(sbm_ctx *host, const sbm_cbc *A, sbm_op op_a, const sbm_cbc *B, sbm_op op_b,
                 unsigned flags, int reps, int r_c, int c_c, peer_result *res)
{
    (void)host;
    (void)A;
    (void)op_a;
    (void)B;
    (void)op_b;
    (void)flags;
    (void)reps;
    (void)r_c;
    (void)c_c;
    memset(res, 0, sizeof(*res));
    snprintf(res->note, sizeof(res->note), "built without CSparse");
}
#endif
