/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench-gpu, scalar CSR SpGEMM: sbm_csr_gemm (one-shot) and sbm_csr_gemm_execute against
 * cusparseSpGEMM and its reuse compute. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <string.h>

#include "csr.h"

/* Intermediate products of L*R (host matrices): sum over L's entries (i,k) of R's row k length. */
static double gemm_products(const sbm_csr *L, const sbm_csr *R)
{
    sbm_csr_info l = sbm_csr_get_info(L), r = sbm_csr_get_info(R);
    double p = 0.0;
    for (int64_t t = 0; t < l.nnz; t++) p += (double)(r.rowptr[l.colind[t] + 1] - r.rowptr[l.colind[t]]);
    return p;
}

/* Elementwise check of sbm's C (host) against cuSPARSE's (bench_util.h; entries absent on one
 * side read as zero, so a pattern difference with nonzero values shows); -1 without one. */
static double gemm_diff(const sbm_csr *Ch, const peer_spgemm_result *ref)
{
    if (!ref->c_rowptr) return -1.0;
    sbm_csr_info c = sbm_csr_get_info(Ch);
    double *work = calloc((size_t)c.n + 1, sizeof *work), d;
    if (!work) return -1.0;
    d = bench_csr_max_rel_diff(c.m, c.rowptr, c.colind, c.values, ref->c_rowptr, ref->c_colind, ref->c_values,
                               NULL, NULL, work);
    free(work);
    return d;
}


/* Ratio of a checked SpGEMM result against cuSPARSE's time (when cuSPARSE ran), added to the
 * geomeans of every matrix, the short-row ones and the sizable ones; cell gets the table entry. */
static void gemm_score(csr_row *r, int cus_ok, double cus_ms, int short_rows, int sizable, int dup,
                       gmean *all, gmean *shrt, gmean *big, char *cell, size_t cell_size)
{
    if (cus_ok) {
        r->cus_ms = cus_ms;
        r->ratio = cus_ms / r->ms;
        if (check_passed(r) && !dup) {
            gm_add(all, r->ratio);
            if (short_rows) gm_add(shrt, r->ratio);
            if (sizable) gm_add(big, r->ratio);
        }
    }
    if (!check_passed(r))
        snprintf(cell, cell_size, "WRONG");
    else if (r->ratio > 0) snprintf(cell, cell_size, "%.3f %.2fx", r->ms, r->ratio);
    else snprintf(cell, cell_size, "%.3f", r->ms);
}

typedef struct gemm_summary {
    gmean full, full_short, full_big, exec, exec_short, exec_big;
} gemm_summary;

/* One matrix's SpGEMM: its operands on the device, the shared row fields, cuSPARSE's result
 * (its C kept for the checks) and the notes printed below the table row. */
typedef struct gemm_case {
    const csr_mat *c;
    const csr_opts *o;
    sbm_csr *DL, *DR;         /* device operands (DR == DL for A*A) */
    double products, gflop;   /* intermediate products; 2 products / 1e9 */
    int short_rows;           /* mean products per row of C < 32 */
    csr_row base;             /* the fields every row of this matrix shares */
    peer_spgemm_result cus;
    char notes[1024];
} gemm_case;

static void add_note(gemm_case *g, const char *what, const char *status)
{
    const size_t len = strlen(g->notes);
    snprintf(g->notes + len, sizeof g->notes - len, "\n    %s: %s", what, status);
}

/* Operands: A*A for square A; the cheaper of A^T*A and A*A^T otherwise (*T: the transpose made,
 * to be destroyed by the caller). @return the form's name. */
static const char *gemm_operands(sbm_ctx *host, const csr_mat *c, sbm_csr **T, const sbm_csr **L,
                                 const sbm_csr **R)
{
    sbm_csr_info h = sbm_csr_get_info(c->H);
    *L = *R = c->H;
    if (h.m == h.n) return "A*A";
    CHECK(host, sbm_csr_transpose(host, c->H, T));
    const double p_ata = gemm_products(*T, c->H), p_aat = gemm_products(c->H, *T);
    if (p_ata <= p_aat) {
        *L = *T;
        return "At*A";
    }
    *R = *T;
    return "A*At";
}

/* cuSPARSE: full SpGEMM and the reuse compute; one CSV row per algorithm (all phases), the
 * best one as cusparse-full, and the reuse. */
static void gemm_cusparse(sbm_ctx *ctx, gemm_case *g)
{
    const csr_opts *o = g->o;
    peer_spgemm_result *cus = &g->cus;
    memset(cus, 0, sizeof *cus);
    snprintf(cus->status, sizeof cus->status, "not run");
    snprintf(cus->reuse_status, sizeof cus->reuse_status, "not run");
    if (o->do_cus) peer_cusparse_spgemm(g->DL, g->DR, o->reps, 1, INT32_MAX, cus);
    CHECK(ctx, sbm_ctx_synchronize(ctx));
    for (int a = 0; a < PEER_SPGEMM_ALGS; a++) {
        static char names[PEER_SPGEMM_ALGS][32];
        const peer_time *pt = &cus->alg[a];
        csr_row ca = g->base;
        snprintf(names[a], sizeof names[a], "cusparse-%s", peer_spgemm_alg_name(a));
        ca.variant = names[a];
        snprintf(ca.status, sizeof ca.status, "%s", pt->status);
        if (pt->ok) {
            ca.ms = pt->med;
            ca.min_ms = pt->min;
            ca.max_ms = pt->max;
            ca.rate = g->gflop / (pt->med * 1e-3);
            ca.rate_unit = "GFLOP/s";
            ca.nnz_c = cus->nnz_c;
        }
        if (o->do_cus) csr_csv(o->csv, g->c, &ca);
    }
    csr_row cf = g->base, cru = g->base;
    cf.variant = "cusparse-full";
    cru.variant = "cusparse-reuse";
    snprintf(cf.status, sizeof cf.status, "%s", cus->status);
    snprintf(cru.status, sizeof cru.status, "%s", cus->reuse_status);
    if (cus->ok) {
        cf.ms = cf.cus_ms = cus->full_ms;
        cf.min_ms = cus->full_min_ms;
        cf.max_ms = cus->full_max_ms;
        cf.rate = g->gflop / (cus->full_ms * 1e-3);
        cf.ratio = 1.0;
        cf.nnz_c = cus->nnz_c;
        cf.rate_unit = "GFLOP/s";
        cf.cus_best = peer_spgemm_alg_name(cus->best);
    }
    if (o->do_cus && strcmp(cus->status, "ok (best default)") != 0 && strcmp(cus->status, "ok (best alg2)") != 0 &&
        strcmp(cus->status, "ok (best alg3)") != 0)
        add_note(g, "cuSPARSE", cus->status);
    if (cus->reuse_ok) {
        cru.ms = cru.cus_ms = cus->reuse_exec_ms;
        cru.min_ms = cus->reuse_min_ms;
        cru.max_ms = cus->reuse_max_ms;
        cru.setup_ms = cus->reuse_setup_ms;
        cru.rate = g->gflop / (cus->reuse_exec_ms * 1e-3);
        cru.ratio = 1.0;
        cru.nnz_c = cus->nnz_c;
        cru.rate_unit = "GFLOP/s";
    } else if (cus->ok) {
        add_note(g, "cuSPARSE reuse", cus->reuse_status);
    }
    csr_csv(o->csv, g->c, &cf);
    csr_csv(o->csv, g->c, &cru);
}

/* A successful sbm result C (device): rate, nnz(C), the check against cuSPARSE's C, "ok". */
static void gemm_result(sbm_ctx *host, const gemm_case *g, const sbm_csr *C, csr_row *r)
{
    r->rate = g->gflop / (r->ms * 1e-3);
    r->rate_unit = "GFLOP/s";
    r->nnz_c = sbm_csr_get_info(C).nnz;
    sbm_csr *Ch = NULL;
    CHECK(host, sbm_csr_copy(host, C, &Ch));
    r->maxdiff = gemm_diff(Ch, &g->cus);
    sbm_csr_destroy(Ch);
    snprintf(r->status, sizeof r->status, "ok");
}

/* sbm one-shot (plan + execute + plan destroy in sbm_csr_gemm); C destroyed outside the timing.
 * The loop is TIME_SBM's, with C freed before each call. */
static void gemm_oneshot(sbm_ctx *host, sbm_ctx *ctx, cudaStream_t stream, gemm_case *g, gemm_summary *sum,
                         csr_row *so, char *cell, size_t cell_size)
{
    const csr_opts *o = g->o;
    const peer_spgemm_result *cus = &g->cus;
    sbm_status st = SBM_SUCCESS;
    sbm_csr *C = NULL;
    double *t = calloc((size_t)o->reps + 1, sizeof *t);
    cudaEvent_t e0, e1;
    CHECK_CU(cudaEventCreate(&e0));
    CHECK_CU(cudaEventCreate(&e1));
    for (int rep = 0; rep <= o->reps && st == SBM_SUCCESS; rep++) {
        sbm_csr_destroy(C);
        C = NULL;
        CHECK_CU(cudaEventRecord(e0, stream));
        st = sbm_csr_gemm(ctx, g->DL, g->DR, &C);
        CHECK_CU(cudaEventRecord(e1, stream));
        CHECK_CU(cudaEventSynchronize(e1));
        float f = 0.0f;
        CHECK_CU(cudaEventElapsedTime(&f, e0, e1));
        if (rep > 0) t[rep - 1] = f;
        if (rep == 0 && f > CSR_SLOW_MS) { /* see TIME_SBM */
            t[0] = f;
            so->once = 1;
            break;
        }
    }
    if (st == SBM_SUCCESS) {
        row_times(so, bench_stat_of(t, so->once ? 1 : o->reps));
        gemm_result(host, g, C, so);
        if (cus->ok && so->nnz_c != cus->nnz_c) {
            const size_t len = strlen(so->status);
            snprintf(so->status + len, sizeof so->status - len, "; nnz(C) %lld, cuSPARSE %lld",
                     (long long)so->nnz_c, (long long)cus->nnz_c);
        }
        note_check(so);
        so->cus_best = cus->ok ? peer_spgemm_alg_name(cus->best) : "";
        gemm_score(so, cus->ok, cus->full_ms, g->short_rows, is_sizable_gemm(g->products, o->large),
                   g->c->dup_of[0], &sum->full, &sum->full_short, &sum->full_big, cell, cell_size);
    } else {
        snprintf(cell, cell_size, "%s", fail_note(ctx, st, 0, so->status, sizeof so->status));
    }
    if (strcmp(so->status, "ok") != 0 && strncmp(so->status, "n/a", 3) != 0) add_note(g, "sbm one-shot", so->status);
    sbm_csr_destroy(C);
    CHECK_CU(cudaEventDestroy(e0));
    CHECK_CU(cudaEventDestroy(e1));
    free(t);
}

/* sbm execute with a reused plan (the plan timed once, after the one-shot warmed up). */
static void gemm_exec(sbm_ctx *host, sbm_ctx *ctx, cudaStream_t stream, gemm_case *g, gemm_summary *sum,
                      csr_row *se, char *cell, size_t cell_size)
{
    const csr_opts *o = g->o;
    sbm_csr_plan *plan = NULL;
    sbm_csr *C = NULL;
    CHECK(ctx, sbm_ctx_synchronize(ctx));
    const double t0 = wall_ms();
    sbm_status st = sbm_csr_gemm_plan(ctx, g->DL, g->DR, &plan, &C);
    if (st == SBM_SUCCESS) st = sbm_ctx_synchronize(ctx);
    se->setup_ms = wall_ms() - t0;
    if (st == SBM_SUCCESS) TIME_SBM(st, se, stream, o->reps, sbm_csr_gemm_execute(ctx, plan, g->DL, g->DR, C));
    if (st == SBM_SUCCESS) {
        gemm_result(host, g, C, se);
        note_check(se);
        se->cus_best = "reuse";
        gemm_score(se, g->cus.reuse_ok, g->cus.reuse_exec_ms, g->short_rows, is_sizable_gemm(g->products, o->large),
                   g->c->dup_of[0], &sum->exec, &sum->exec_short, &sum->exec_big, cell, cell_size);
    } else {
        se->setup_ms = -1.0;
        snprintf(cell, cell_size, "%s", fail_note(ctx, st, 0, se->status, sizeof se->status));
    }
    if (strcmp(se->status, "ok") != 0 && strncmp(se->status, "n/a", 3) != 0) add_note(g, "sbm execute", se->status);
    sbm_csr_destroy(C);
    sbm_csr_gemm_plan_destroy(plan);
}

/* The rest of the matrix's table row (after its operands' columns), and the notes below it. */
static void gemm_print(const gemm_case *g, const csr_row *so, const csr_row *se, const char *cell_o,
                       const char *cell_e)
{
    const peer_spgemm_result *cus = &g->cus;
    const csr_mat *c = g->c;
    char md[16] = "-", cf_cell[16] = "fail", cr_cell[16] = "fail", nnzc[24] = "-";
    const double md_v = fmax(so->maxdiff, se->maxdiff);
    if (md_v >= 0) snprintf(md, sizeof md, "%.1e", md_v);
    if (cus->ok) snprintf(cf_cell, sizeof cf_cell, "%.3f", cus->full_ms);
    if (cus->reuse_ok) snprintf(cr_cell, sizeof cr_cell, "%.3f", cus->reuse_exec_ms);
    if (!g->o->do_cus) {
        snprintf(cf_cell, sizeof cf_cell, "-");
        snprintf(cr_cell, sizeof cr_cell, "-");
    }
    if (cus->ok) snprintf(nnzc, sizeof nnzc, "%lld", (long long)cus->nnz_c);
    else if (so->nnz_c >= 0) snprintf(nnzc, sizeof nnzc, "%lld", (long long)so->nnz_c);
    printf(" %10s %10s %-7s %9.1f %10s %9.1f %15s %9.1f %15s %9.1f %8s%s%s%s%s\n", nnzc, cf_cell,
           cus->ok ? peer_spgemm_alg_name(cus->best) : "",
           cus->ok ? g->gflop / (cus->full_ms * 1e-3) : 0.0, cr_cell,
           cus->reuse_ok ? g->gflop / (cus->reuse_exec_ms * 1e-3) : 0.0, cell_o, so->rate > 0 ? so->rate : 0.0,
           cell_e, se->rate > 0 ? se->rate : 0.0, md, c->dup_of[0] ? "  (same matrix as " : "", c->dup_of,
           c->dup_of[0] ? ": not in geomeans)" : "", g->notes);
    fflush(stdout);
}

static void csr_gemm_one(sbm_ctx *host, sbm_ctx *ctx, cudaStream_t stream, const csr_mat *c,
                         const csr_opts *o, gemm_summary *sum)
{
    if (c->no_gemm) {
        csr_row r = row_init("gemm", "none");
        snprintf(r.status, sizeof r.status, "skipped: %s", c->no_gemm);
        printf("%-20s %s\n", c->name, r.status);
        csr_csv(o->csv, c, &r);
        return;
    }
    sbm_csr *T = NULL;
    const sbm_csr *L = NULL, *R = NULL;
    const char *form = gemm_operands(host, c, &T, &L, &R);
    gemm_case *g = calloc(1, sizeof *g);
    if (!g) {
        fprintf(stderr, "sbm-bench-gpu: out of host memory\n");
        exit(2);
    }
    g->c = c;
    g->o = o;
    g->products = gemm_products(L, R);
    const int64_t m = sbm_csr_get_info(L).m;
    g->short_rows = m > 0 && g->products / (double)m < 32.0;
    const double cap = o->large ? 1.0e9 : 1.0e8;
    g->base = row_init("gemm", "");
    g->base.products = (int64_t)g->products;
    g->base.short_rows = g->short_rows;
    printf("%-20s %-5s %11.0f %6.0f %5s", c->name, form, g->products, m ? g->products / (double)m : 0.0,
           g->short_rows ? "short" : "");
    if (g->products > cap) {
        char why[128];
        snprintf(why, sizeof why, "skipped: %.3g products > %.3g (time and memory)", g->products, cap);
        printf("  %s\n", why);
        csr_row r = g->base;
        r.variant = "none";
        snprintf(r.status, sizeof r.status, "%s", why);
        csr_csv(o->csv, c, &r);
        free(g);
        sbm_csr_destroy(T);
        return;
    }
    g->DL = upload(ctx, L);
    g->DR = R == L ? g->DL : upload(ctx, R);
    g->gflop = 2.0 * g->products / 1e9;
    gemm_cusparse(ctx, g);
    csr_row so = g->base, se = g->base;
    so.variant = "oneshot";
    se.variant = "exec";
    char cell_o[24], cell_e[24];
    gemm_oneshot(host, ctx, stream, g, sum, &so, cell_o, sizeof cell_o);
    gemm_exec(host, ctx, stream, g, sum, &se, cell_e, sizeof cell_e);
    csr_csv(o->csv, c, &so);
    csr_csv(o->csv, c, &se);
    gemm_print(g, &so, &se, cell_o, cell_e);
    peer_spgemm_result_free(&g->cus);
    if (g->DR != g->DL) sbm_csr_destroy(g->DR);
    sbm_csr_destroy(g->DL);
    free(g);
    sbm_csr_destroy(T);
}

void csr_gemm(sbm_ctx *host, sbm_ctx *ctx, cudaStream_t stream, const csr_mat *ms, int n,
                     const csr_opts *o)
{
    gemm_summary sum;
    memset(&sum, 0, sizeof sum);
    printf("\nCSR SpGEMM C = A*A (A^T*A or A*A^T, the cheaper, for rectangular A): GFLOP/s = "
           "2 products / time; median of %d\n", o->reps);
    printf("cus full: the best of cusparseSpGEMM's default, ALG2 and ALG3 (alg), all phases, with work buffers "
           "allocated by an untimed warm-up call and reused (as sbm reuses its workspace pool) and C allocated "
           "by every call (as sbm's); cus reuse: "
           "cusparseSpGEMMreuse_compute; sbm 1-shot: sbm_csr_gemm (one pass without a plan where every "
           "row is short, else plan + execute); sbm exec: "
           "sbm_csr_gemm_execute with a reused plan\nNx: cus full / sbm 1-shot and cus reuse / sbm "
           "exec; short: mean products per row of C < 32\n");
    printf("%-20s %-5s %11s %6s %5s %10s %10s %-7s %9s %10s %9s %15s %9s %15s %9s %8s\n", "matrix", "form",
           "products", "p/row", "short", "nnz(C)", "cus full", "alg", "GFLOP/s", "cus reuse", "GFLOP/s",
           "sbm 1-shot ms", "GFLOP/s", "sbm exec ms", "GFLOP/s", "maxdiff");
    for (int t = 0; t < n; t++) csr_gemm_one(host, ctx, stream, &ms[t], o, &sum);
    char a[32], b[32], c1[32], d[32], e[32], f[32];
    const char *big = o->large ? "products >= 1M" : "products >= 100k";
    printf("SpGEMM targets: cuSPARSE / sbm geomean over the distinct matrices, target >= 1.0x overall, "
           ">= 1.5x on short rows\n");
    printf("  full (cus full / sbm 1-shot): every matrix %s (%d), short rows %s (%d), %s %s (%d)\n",
           gm_str(a, sizeof a, &sum.full, "%.2fx"), sum.full.n, gm_str(b, sizeof b, &sum.full_short, "%.2fx"),
           sum.full_short.n, big, gm_str(e, sizeof e, &sum.full_big, "%.2fx"), sum.full_big.n);
    printf("  execute (cus reuse / sbm exec): every matrix %s (%d), short rows %s (%d), %s %s (%d)\n",
           gm_str(c1, sizeof c1, &sum.exec, "%.2fx"), sum.exec.n,
           gm_str(d, sizeof d, &sum.exec_short, "%.2fx"), sum.exec_short.n, big,
           gm_str(f, sizeof f, &sum.exec_big, "%.2fx"), sum.exec_big.n);
}
