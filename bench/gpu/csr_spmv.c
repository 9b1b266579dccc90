/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench-gpu, scalar CSR SpMV: sbm_csr_spmv and a plan per format against cusparseSpMV. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <string.h>

#include "csr.h"

typedef struct spmv_summary {
    gmean reg_auto, reg_plan;  /* % of copy bandwidth (the format's own bytes), regular large matrices */
    gmean pl_auto, pl_plan;    /* best cuSPARSE / sbm, power-law large matrices */
    gmean all_auto, all_plan;  /* best cuSPARSE / sbm, every distinct matrix */
    gmean big_auto, big_plan;  /* best cuSPARSE / sbm, distinct matrices of >= 1M nonzeros */
} spmv_summary;

static const sbm_spmv_format spmv_formats[] = {SBM_SPMV_AUTO, SBM_SPMV_CSR_SCALAR, SBM_SPMV_CSR_VECTOR,
                                               SBM_SPMV_CSR_MERGE, SBM_SPMV_COO, SBM_SPMV_ELL,
                                               SBM_SPMV_HYB, SBM_SPMV_DIA};
#define N_SPMV_FORMATS 8

static int is_regular(const csr_mat *c)
{
    return c->gen == GEN_POISSON2D || c->gen == GEN_POISSON3D || c->gen == GEN_BA_W ||
           c->gen == GEN_BA_WT || c->gen == GEN_BA_SCHUR;
}

/* The matrices the SpMV bandwidth target speaks of: >= 10M nonzeros (>= 100k at --size small). */
static int is_big(const csr_mat *c, int large)
{
    return sbm_csr_get_info(c->H).nnz >= (large ? 10000000 : 100000);
}

/* The bytes y = A*x (beta = 0) reads and writes in format f: the format's stored arrays (padding
 * included), x read once and y written once. Computed on the host from A with the library's
 * rules (kernels/cuda/csr_spmv/cuda_csr_spmv.cu): ELL and DIA pad the rows to a multiple of 32 (their leading
 * dimension); ELL has max-row slots per row, each a 4-byte column and an 8-byte value; HYB's ELL
 * width K is the largest with at least a third of the rows of >= K entries, the rest COO (4-byte
 * row and column, 8-byte value); DIA stores every occupied diagonal (8-byte values) and its 8-byte
 * offset; the CSR kernels read int64 row pointers, int32 columns and the values. */
static double format_bytes(const csr_mat *c, sbm_spmv_format f)
{
    sbm_csr_info h = sbm_csr_get_info(c->H);
    const double vec = 8.0 * (double)h.n + 8.0 * (double)h.m, ld = (double)((h.m + 31) & ~(int64_t)31);
    switch (f) {
    case SBM_SPMV_COO: return 16.0 * (double)h.nnz + vec;
    case SBM_SPMV_ELL: return 12.0 * ld * (double)c->maxrow + vec;
    case SBM_SPMV_HYB: {
        int64_t *count = calloc((size_t)c->maxrow + 2, sizeof *count), K = 0, ge = 0;
        double coo = 0.0;
        for (int64_t i = 0; i < h.m; i++) count[h.rowptr[i + 1] - h.rowptr[i]]++;
        for (int64_t len = c->maxrow; len >= 1; len--) {
            ge += count[len]; /* rows with >= len entries */
            if (3.0 * (double)ge >= (double)h.m) {
                K = len;
                break;
            }
        }
        for (int64_t i = 0; i < h.m; i++) coo += (double)(h.rowptr[i + 1] - h.rowptr[i] > K ? h.rowptr[i + 1] - h.rowptr[i] - K : 0);
        free(count);
        return 12.0 * ld * (double)K + 16.0 * coo + vec;
    }
    case SBM_SPMV_DIA: {
        const int64_t span = h.m + h.n - 1;
        unsigned char *occ = calloc((size_t)span + 1, 1);
        double nd = 0.0;
        for (int64_t i = 0; i < h.m; i++)
            for (int64_t t = h.rowptr[i]; t < h.rowptr[i + 1]; t++) {
                unsigned char *o = &occ[h.colind[t] - i + h.m - 1];
                nd += !*o;
                *o = 1;
            }
        free(occ);
        return 8.0 * ld * nd + 8.0 * nd + vec;
    }
    default: return 8.0 * (double)(h.m + 1) + 12.0 * (double)h.nnz + vec;
    }
}


static void csr_spmv_one(sbm_ctx *ctx, cudaStream_t stream, const csr_mat *c, const csr_opts *o,
                         spmv_summary *sum)
{
    sbm_csr_info h = sbm_csr_get_info(c->H);
    const int reps = 4 * o->reps;
    const double csr_bytes = format_bytes(c, SBM_SPMV_CSR_SCALAR);
    sbm_csr *D = upload(ctx, c->H);
    double *x = dev_random((size_t)h.n, 7), *y = dev_alloc((size_t)h.m * sizeof(double) + 8);
    double *yref = NULL;
    char cells[N_SPMV_FORMATS + 1][40], auto_fmt[24] = "", notes[1024] = "";
    double maxdiff = -1.0;
    const peer_best pb = cus_all(stream, c, o, D, 0, x, y, reps, csr_bytes, &yref);
    /* sbm: sbm_csr_spmv (cell 0), then one plan per format (cells 1..8) */
    for (int v = 0; v <= N_SPMV_FORMATS; v++) {
        char variant[32];
        sbm_spmv_plan *plan = NULL;
        sbm_status st = SBM_SUCCESS;
        csr_row r;
        if (v == 0) snprintf(variant, sizeof variant, "auto");
        else snprintf(variant, sizeof variant, "plan-%s", sbm_spmv_format_name(spmv_formats[v - 1]));
        r = row_init("spmv", variant);
        if (v > 0) {
            CHECK(ctx, sbm_ctx_synchronize(ctx));
            const double t0 = wall_ms();
            st = sbm_csr_spmv_plan(ctx, D, spmv_formats[v - 1], &plan);
            if (st == SBM_SUCCESS) st = sbm_ctx_synchronize(ctx);
            r.setup_ms = wall_ms() - t0;
        }
        if (st == SBM_SUCCESS) {
            CHECK_CU(cudaMemsetAsync(y, 0, (size_t)h.m * sizeof(double), stream));
            if (v == 0) TIME_SBM(st, &r, stream, reps, sbm_csr_spmv(ctx, 1.0, D, x, 0.0, y));
            else TIME_SBM(st, &r, stream, reps, sbm_spmv_plan_execute(ctx, plan, 1.0, x, 0.0, y));
        }
        if (st != SBM_SUCCESS) {
            snprintf(cells[v], sizeof cells[v], "%s", fail_note(ctx, st, v > 0, r.status, sizeof r.status));
            r.setup_ms = -1.0;
            if (cells[v][0] == 'e') {
                const size_t len = strlen(notes);
                snprintf(notes + len, sizeof notes - len, "\n    %s: %s", variant, r.status);
            }
        } else {
            double *got = host_copy(y, (size_t)h.m);
            r.maxdiff = max_rel_diff(got, yref, (size_t)h.m);
            free(got);
            maxdiff = fmax(maxdiff, r.maxdiff);
            /* the bytes of the format this call multiplies from (auto: a CSR kernel) */
            r.bytes = v == 0 ? csr_bytes : format_bytes(c, sbm_spmv_plan_format(plan));
            r.rate = r.bytes / (r.ms * 1e6);
            r.rate_unit = "GB/s";
            r.pct_copy = 100.0 * r.rate / o->copy_gbs;
            if (pb.ok) {
                r.cus_ms = pb.ms;
                r.cus_best = pb.name;
                r.ratio = pb.ms / r.ms;
            }
            if (v == 1) {
                snprintf(auto_fmt, sizeof auto_fmt, "%s", sbm_spmv_format_name(sbm_spmv_plan_format(plan)));
                snprintf(r.status, sizeof r.status, "ok (chose %s)", auto_fmt);
            } else {
                snprintf(r.status, sizeof r.status, "ok");
            }
            note_check(&r);
            if (r.maxdiff > CSR_CHECK_TOL) {
                const size_t len = strlen(notes);
                snprintf(notes + len, sizeof notes - len, "\n    %s: %s", variant, r.status);
            }
            /* table cell: % of copy bandwidth; the ratio to the best cuSPARSE for auto and plan-auto */
            if (!check_passed(&r))
                snprintf(cells[v], sizeof cells[v], "WRONG");
            else if (v <= 1 && r.ratio > 0)
                snprintf(cells[v], sizeof cells[v], "%.0f%% %.2fx", r.pct_copy, r.ratio);
            else
                snprintf(cells[v], sizeof cells[v], "%.0f%%", r.pct_copy);
            if (v <= 1 && check_passed(&r) && !c->dup_of[0]) {
                if (is_regular(c) && is_big(c, o->large)) gm_add(v == 0 ? &sum->reg_auto : &sum->reg_plan, r.pct_copy);
                if (r.ratio > 0) {
                    if (c->gen == GEN_RMAT && is_big(c, o->large)) gm_add(v == 0 ? &sum->pl_auto : &sum->pl_plan, r.ratio);
                    gm_add(v == 0 ? &sum->all_auto : &sum->all_plan, r.ratio);
                    if (is_sizable(c, o->large)) gm_add(v == 0 ? &sum->big_auto : &sum->big_plan, r.ratio);
                }
            }
        }
        csr_csv(o->csv, c, &r);
        sbm_spmv_plan_destroy(plan);
    }
    char md[16] = "-";
    if (maxdiff >= 0) snprintf(md, sizeof md, "%.1e", maxdiff);
    char cus[40] = "-";
    if (pb.ok) snprintf(cus, sizeof cus, "%.4f %3.0f%% %s", pb.ms, 100.0 * csr_bytes / (pb.ms * 1e6) / o->copy_gbs,
                        pb.name + strlen("cusparse-"));
    printf("%-20s %9lld %9lld %9lld %7.1f %6lld %22s %13s %13s %-10s %6s %6s %6s %6s %6s %6s %6s %8s%s%s%s%s%s\n",
           c->name, (long long)h.m, (long long)h.n, (long long)h.nnz, csr_bytes / 1e6, (long long)c->maxrow,
           cus, cells[0], cells[1], auto_fmt[0] ? auto_fmt : "-", cells[2], cells[3], cells[4], cells[5],
           cells[6], cells[7], cells[8], md, c->dup_of[0] ? "  (same matrix as " : "", c->dup_of,
           c->dup_of[0] ? ": not in geomeans)" : "", pb.status[0] ? "\n    cuSPARSE: " : "", pb.status);
    if (notes[0]) printf("%s\n", notes + 1);
    fflush(stdout);
    free(yref);
    CHECK_CU(cudaFree(y));
    CHECK_CU(cudaFree(x));
    sbm_csr_destroy(D);
}

void csr_spmv(sbm_ctx *ctx, cudaStream_t stream, const csr_mat *ms, int n, const csr_opts *o)
{
    spmv_summary sum;
    memset(&sum, 0, sizeof sum);
    printf("\nCSR SpMV y = A*x (beta = 0): %% of device copy bandwidth (%.0f GB/s) with the bytes each "
           "format reads and writes (CSR: 8(m+1) + 12 nnz + 8n + 8m; ELL, HYB, DIA: their padded arrays, "
           "see format_bytes); Nx = best cuSPARSE time / sbm time; median of %d\n",
           o->copy_gbs, 4 * o->reps);
    printf("cuSPARSE: cusparseSpMV with each CSR algorithm (default, CSR_ALG1, CSR_ALG2), buffer "
           "allocated and cusparseSpMV_preprocess run before timing; the column shows the best one\n");
    printf("auto: sbm_csr_spmv; plan-*: sbm_spmv_plan_execute with the plan of that format "
           "(fmt: the format plan-auto chose); '-': format refused (padding limit); n/a: not supported\n");
    printf("%-20s %9s %9s %9s %7s %6s %22s %13s %13s %-10s %6s %6s %6s %6s %6s %6s %6s %8s\n", "matrix",
           "rows", "cols", "nnz", "CSR MB", "maxrow", "best cuSPARSE ms", "auto", "plan-auto", "fmt", "scalar",
           "vector", "merge", "coo", "ell", "hyb", "dia", "maxdiff");
    for (int t = 0; t < n; t++) csr_spmv_one(ctx, stream, &ms[t], o, &sum);
    char a[32], b[32], c1[32], d[32], e[32], f[32], g[32], h[32];
    printf("SpMV targets (%s matrices: >= %s nonzeros; each distinct matrix once):\n", o->large ? "large" : "small",
           o->large ? "10M" : "100k");
    printf("  regular (Poisson, BA), %% of copy bandwidth (format bytes), target >= 80%%: auto geomean %s "
           "(min %.0f%%), plan-auto geomean %s (min %.0f%%)\n",
           gm_str(a, sizeof a, &sum.reg_auto, "%.0f%%"), sum.reg_auto.min,
           gm_str(b, sizeof b, &sum.reg_plan, "%.0f%%"), sum.reg_plan.min);
    printf("  power-law (R-MAT), best cuSPARSE / sbm, target >= 1.2x: auto geomean %s, plan-auto geomean %s\n",
           gm_str(c1, sizeof c1, &sum.pl_auto, "%.2fx"), gm_str(d, sizeof d, &sum.pl_plan, "%.2fx"));
    printf("  every distinct matrix, best cuSPARSE / sbm: auto geomean %s (%d), plan-auto geomean %s\n",
           gm_str(e, sizeof e, &sum.all_auto, "%.2fx"), sum.all_auto.n, gm_str(f, sizeof f, &sum.all_plan, "%.2fx"));
    printf("  distinct matrices of >= %s nonzeros, best cuSPARSE / sbm: auto geomean %s (%d), plan-auto geomean %s\n",
           o->large ? "1M" : "100k", gm_str(g, sizeof g, &sum.big_auto, "%.2fx"), sum.big_auto.n,
           gm_str(h, sizeof h, &sum.big_plan, "%.2fx"));
}
