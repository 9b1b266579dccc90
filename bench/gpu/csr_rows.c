/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench-gpu, scalar CSR section: its CSV rows, geomeans, device buffers, checks and the
 * cuSPARSE SpMV/SpMM runs shared by the SpMV and SpMM parts. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <string.h>

#include "csr.h"

int csr_large = 1;
int csr_check_failures = 0;

void gm_add(gmean *g, double v)
{
    if (!(v > 0.0) || !isfinite(v)) return;
    if (g->n == 0 || v < g->min) g->min = v;
    g->logsum += log(v);
    g->n++;
}

static double gm_val(const gmean *g) { return g->n ? exp(g->logsum / g->n) : 0.0; }

const char *gm_str(char *buf, size_t n, const gmean *g, const char *fmt)
{
    if (g->n == 0) snprintf(buf, n, "n/a");
    else snprintf(buf, n, fmt, gm_val(g));
    return buf;
}

int is_sizable(const csr_mat *c, int large)
{
    return sbm_csr_get_info(c->H).nnz >= (large ? 1000000 : 100000);
}

int is_sizable_gemm(double products, int large) { return products >= (large ? 1e6 : 1e5); }

/* CSV field: the text in double quotes (embedded quotes become single quotes). */
static void csv_text(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) fputc(*s == '"' ? '\'' : *s, f);
    fputc('"', f);
}

static void csv_num(FILE *f, double v, const char *fmt)
{
    fputc(',', f);
    if (v >= 0.0 && isfinite(v)) fprintf(f, fmt, v);
}

void csr_csv(FILE *f, const csr_mat *c, const csr_row *r)
{
    if (!f) return;
    sbm_csr_info h = sbm_csr_get_info(c->H);
    fprintf(f, "%s,%s,%s,%lld,%lld,%lld,%s", r->op, c->name, c->family, (long long)h.m,
            (long long)h.n, (long long)h.nnz, r->variant);
    csv_num(f, (double)r->ncols, "%.0f");
    csv_num(f, (double)r->products, "%.0f");
    csv_num(f, (double)r->nnz_c, "%.0f");
    csv_num(f, (double)r->short_rows, "%.0f");
    csv_num(f, r->ms, "%.6f");
    csv_num(f, r->min_ms, "%.6f");
    csv_num(f, r->max_ms, "%.6f");
    csv_num(f, r->setup_ms, "%.6f");
    csv_num(f, r->rate, "%.3f");
    fprintf(f, ",%s", r->rate_unit);
    csv_num(f, r->pct_copy, "%.2f");
    csv_num(f, r->cus_ms, "%.6f");
    csv_num(f, r->ratio, "%.4f");
    csv_num(f, r->maxdiff, "%.3e");
    csv_num(f, r->bytes, "%.0f");
    fprintf(f, ",%s,%s,%d,", r->cus_best, c->dup_of,
            r->products >= 0 ? is_sizable_gemm((double)r->products, csr_large) : is_sizable(c, csr_large));
    csv_text(f, r->status);
    fputc('\n', f);
    fflush(f);
}

csr_row row_init(const char *op, const char *variant)
{
    csr_row r;
    memset(&r, 0, sizeof r);
    r.op = op;
    r.variant = variant;
    r.ncols = r.products = r.nnz_c = -1;
    r.short_rows = -1;
    r.ms = r.min_ms = r.max_ms = r.setup_ms = r.rate = r.pct_copy = r.cus_ms = r.ratio = r.maxdiff = -1.0;
    r.bytes = -1.0;
    r.rate_unit = "";
    r.cus_best = "";
    return r;
}

/* Status of a failed sbm call for the CSV, and its table cell: "n/a" (not supported in this
 * build yet), "-" (a plan format refused by its padding limit), "err" (anything else). */
const char *fail_note(sbm_ctx *ctx, sbm_status st, int plan_refusal, char *status, size_t n)
{
    const char *msg = sbm_ctx_last_error(ctx);
    if (st == SBM_ERR_NOT_SUPPORTED) {
        snprintf(status, n, "n/a: %s", msg);
        return "n/a";
    }
    if (plan_refusal && st == SBM_ERR_INVALID_ARGUMENT) {
        snprintf(status, n, "refused: %s", msg);
        return "-";
    }
    snprintf(status, n, "error %s: %s", sbm_status_name(st), msg);
    return "err";
}

void *dev_alloc(size_t bytes)
{
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
        fprintf(stderr, "sbm-bench-gpu: cudaMalloc of %zu bytes failed\n", bytes);
        exit(2);
    }
    return p;
}

double *dev_random(size_t count, uint64_t seed)
{
    double *h = malloc(count * sizeof *h + 1), *d = dev_alloc(count * sizeof *d);
    uint64_t s = seed;
    for (size_t i = 0; i < count; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        h[i] = (double)(s >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    }
    cudaMemcpy(d, h, count * sizeof *h, cudaMemcpyHostToDevice);
    free(h);
    return d;
}

double *host_copy(const double *d, size_t count)
{
    double *h = malloc(count * sizeof *h + 1);
    if (cudaMemcpy(h, d, count * sizeof *h, cudaMemcpyDeviceToHost) != cudaSuccess) {
        fprintf(stderr, "sbm-bench-gpu: download failed: %s\n", cudaGetErrorString(cudaGetLastError()));
        exit(2);
    }
    return h;
}

/* Elementwise check against cuSPARSE's result (bench_util.h: max relative difference per
 * entry, floored at 1e-3 of the largest entry); -1 without a reference. */
double max_rel_diff(const double *got, const double *ref, size_t count)
{
    return ref ? bench_max_rel_diff(got, ref, count) : -1.0;
}

void note_check(csr_row *r)
{
    const size_t len = strlen(r->status);
    if (r->maxdiff > CSR_CHECK_TOL) {
        snprintf(r->status + len, sizeof r->status - len, "; CHECK FAILED (max rel diff %.2e)", r->maxdiff);
        csr_check_failures++;
    }
    if (r->once) {
        const size_t l2 = strlen(r->status);
        snprintf(r->status + l2, sizeof r->status - l2, "; timed once (one call > %.0f ms)", CSR_SLOW_MS);
    }
}

/* A result that may be counted: checked and right, or not checkable (no cuSPARSE run). */
int check_passed(const csr_row *r) { return r->maxdiff <= CSR_CHECK_TOL; }

void row_times(csr_row *r, bench_stat s)
{
    r->ms = s.med;
    r->min_ms = s.min;
    r->max_ms = s.max;
}

sbm_csr *upload(sbm_ctx *ctx, const sbm_csr *H)
{
    sbm_csr *D = NULL;
    CHECK(ctx, sbm_csr_copy(ctx, H, &D));
    CHECK(ctx, sbm_ctx_synchronize(ctx));
    return D;
}

static void best_add(peer_best *b, const char *name, const peer_op_result *pr, int passed)
{
    if (pr->ok && passed && (!b->ok || pr->ms < b->ms)) {
        b->ok = 1;
        b->ms = pr->ms;
        b->name = name;
    }
    if (!pr->ok || !passed) {
        const size_t len = strlen(b->status);
        snprintf(b->status + len, sizeof b->status - len, "%s%.32s: %.100s", len ? "; " : "", name,
                 pr->ok ? "CHECK FAILED" : pr->status);
    }
}

/* Every cuSPARSE algorithm of SpMV (k = 0: y = A*x, reps calls) or SpMM (width k: C = A*B),
 * one CSV row each (variant cusparse-ALG): *ref is the first one's result (host), the others
 * are checked against it. bytes: the SpMV's traffic, for its GB/s. */
peer_best cus_all(cudaStream_t stream, const csr_mat *c, const csr_opts *o, const sbm_csr *D, int64_t k,
                         const double *in, double *out, int reps, double bytes, double **ref)
{
    static char names[2][PEER_SPMM_ALGS > PEER_SPMV_ALGS ? PEER_SPMM_ALGS : PEER_SPMV_ALGS][32];
    sbm_csr_info h = sbm_csr_get_info(c->H);
    const int spmm = k > 0, nalg = spmm ? PEER_SPMM_ALGS : PEER_SPMV_ALGS;
    const size_t count = (size_t)(h.m * (spmm ? k : 1));
    peer_best best;
    memset(&best, 0, sizeof best);
    *ref = NULL;
    if (!o->do_cus) {
        snprintf(best.status, sizeof best.status, "not run");
        return best;
    }
    for (int a = 0; a < nalg; a++) {
        peer_op_result pr;
        peer_csr *P = NULL;
        snprintf(names[spmm][a], sizeof names[spmm][a], "cusparse-%s",
                 spmm ? peer_spmm_alg_name(a) : peer_spmv_alg_name(a));
        csr_row cr = row_init(spmm ? "spmm" : "spmv", names[spmm][a]);
        if (spmm) cr.ncols = k;
        CHECK_CU(cudaMemsetAsync(out, 0, count * sizeof(double), stream));
        /* a descriptor per algorithm: a preprocess step may keep state in it, tied to the
         * algorithm and its buffer */
        memset(&pr, 0, sizeof pr);
        if (peer_csr_create(D, stream, &P, pr.status, sizeof pr.status) == 0) {
            if (spmm) peer_csr_spmm(P, a, k, in, out, reps, &pr);
            else peer_csr_spmv(P, a, in, out, reps, &pr);
            peer_csr_destroy(P);
        }
        snprintf(cr.status, sizeof cr.status, "%s", pr.status);
        if (pr.ok) {
            double *got = host_copy(out, count);
            if (!*ref) {
                *ref = got;
            } else {
                cr.maxdiff = max_rel_diff(got, *ref, count);
                free(got);
                note_check(&cr);
            }
            cr.ms = pr.ms;
            cr.min_ms = pr.min_ms;
            cr.max_ms = pr.max_ms;
            cr.setup_ms = pr.setup_ms;
            if (spmm) {
                cr.rate = 2.0 * (double)h.nnz * (double)k / 1e9 / (pr.ms * 1e-3);
                cr.rate_unit = "GFLOP/s";
            } else {
                cr.bytes = bytes;
                cr.rate = bytes / (pr.ms * 1e6);
                cr.rate_unit = "GB/s";
                cr.pct_copy = 100.0 * cr.rate / o->copy_gbs;
            }
        }
        best_add(&best, names[spmm][a], &pr, check_passed(&cr));
        csr_csv(o->csv, c, &cr);
    }
    return best;
}
