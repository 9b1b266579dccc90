/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench-gpu, scalar CSR SpMM: sbm_csr_spmm (auto, rowsplit, merge) against cusparseSpMM. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <string.h>

#include "csr.h"

static const char *const spmm_kernels[3] = {NULL, "rowsplit", "merge"};
static const sbm_tune_csr_spmm spmm_tunes[3] = {SBM_TUNE_CSR_SPMM_AUTO, SBM_TUNE_CSR_SPMM_ROWSPLIT,
                                                SBM_TUNE_CSR_SPMM_MERGE};

static void csr_spmm_one(sbm_ctx *ctx, cudaStream_t stream, const csr_mat *c, const csr_opts *o,
                         gmean gm[2][2][3])
{
    static const int64_t widths[2] = {16, 64};
    sbm_csr_info h = sbm_csr_get_info(c->H);
    sbm_csr *D = upload(ctx, c->H);
    char line[640], notes[1024] = "";
    double maxdiff = -1.0;
    int pos = snprintf(line, sizeof line, "%-20s %9lld %9lld %7.1f", c->name, (long long)h.nnz,
                       (long long)c->maxrow, h.m ? (double)h.nnz / (double)h.m : 0.0);
    for (int w = 0; w < 2; w++) {
        const int64_t k = widths[w];
        const double gflop = 2.0 * (double)h.nnz * (double)k / 1e9;
        double *B = dev_random((size_t)(h.n * k), 11), *C = dev_alloc((size_t)(h.m * k) * sizeof(double) + 8);
        double *cref = NULL;
        const peer_best pb = cus_all(stream, c, o, D, k, B, C, o->reps, -1.0, &cref);
        if (pb.ok) {
            pos += snprintf(line + pos, sizeof line - (size_t)pos, " | %7.1f %-8s", gflop / (pb.ms * 1e-3),
                            pb.name + strlen("cusparse-"));
        } else {
            pos += snprintf(line + pos, sizeof line - (size_t)pos, " | %7s %-8s", "fail", "");
        }
        if (pb.status[0]) {
            const size_t len = strlen(notes);
            snprintf(notes + len, sizeof notes - len, "\n    cuSPARSE %lld cols: %s", (long long)k, pb.status);
        }
        for (int v = 0; v < 3; v++) {
            csr_row r = row_init("spmm", spmm_kernels[v] ? spmm_kernels[v] : "auto");
            r.ncols = k;
            sbm_status st;
            tune(ctx, (sbm_tuning){.csr_spmm = spmm_tunes[v]});
            CHECK_CU(cudaMemsetAsync(C, 0, (size_t)(h.m * k) * sizeof(double), stream));
            TIME_SBM(st, &r, stream, o->reps,
                     sbm_csr_spmm(ctx, 1.0, D, k, SBM_LAYOUT_ROW_MAJOR, B, k, 0.0, C, k));
            CHECK(ctx, sbm_ctx_set_tuning(ctx, NULL));
            char cell[24];
            if (st != SBM_SUCCESS) {
                snprintf(cell, sizeof cell, "%s", fail_note(ctx, st, 0, r.status, sizeof r.status));
                if (cell[0] == 'e') {
                    const size_t len = strlen(notes);
                    snprintf(notes + len, sizeof notes - len, "\n    %s %lld cols: %s", r.variant, (long long)k, r.status);
                }
            } else {
                double *got = host_copy(C, (size_t)(h.m * k));
                r.maxdiff = max_rel_diff(got, cref, (size_t)(h.m * k));
                free(got);
                maxdiff = fmax(maxdiff, r.maxdiff);
                r.rate = gflop / (r.ms * 1e-3);
                r.rate_unit = "GFLOP/s";
                if (pb.ok) {
                    r.cus_ms = pb.ms;
                    r.cus_best = pb.name;
                    r.ratio = pb.ms / r.ms;
                    if (check_passed(&r) && !c->dup_of[0]) {
                        gm_add(&gm[0][w][v], r.ratio);
                        if (is_sizable(c, o->large)) gm_add(&gm[1][w][v], r.ratio);
                    }
                }
                snprintf(r.status, sizeof r.status, "ok");
                note_check(&r);
                if (r.maxdiff > CSR_CHECK_TOL) {
                    const size_t len = strlen(notes);
                    snprintf(notes + len, sizeof notes - len, "\n    %s %lld cols: %s", r.variant, (long long)k, r.status);
                }
                if (!check_passed(&r)) snprintf(cell, sizeof cell, "WRONG");
                else if (r.ratio > 0) snprintf(cell, sizeof cell, "%.1f %.2fx", r.rate, r.ratio);
                else snprintf(cell, sizeof cell, "%.1f", r.rate);
            }
            pos += snprintf(line + pos, sizeof line - (size_t)pos, " %14s", cell);
            csr_csv(o->csv, c, &r);
        }
        free(cref);
        CHECK_CU(cudaFree(C));
        CHECK_CU(cudaFree(B));
    }
    char md[16] = "-";
    if (maxdiff >= 0) snprintf(md, sizeof md, "%.1e", maxdiff);
    printf("%s %8s%s%s%s%s\n", line, md, c->dup_of[0] ? "  (same matrix as " : "", c->dup_of,
           c->dup_of[0] ? ": not in geomeans)" : "", notes);
    fflush(stdout);
    sbm_csr_destroy(D);
}

void csr_spmm(sbm_ctx *ctx, cudaStream_t stream, const csr_mat *ms, int n, const csr_opts *o)
{
    gmean gm[2][2][3]; /* [every matrix, sizable ones][16, 64 columns][auto, rowsplit, merge] */
    memset(gm, 0, sizeof gm);
    printf("\nCSR SpMM C = A*B, B and C dense row-major with 16 and 64 columns: GFLOP/s (2 nnz "
           "cols / time) and Nx = best cuSPARSE time / sbm time; median of %d\n", o->reps);
    printf("auto: sbm_csr_spmm's own choice; rowsplit / merge: forced with the tuning's csr_spmm; "
           "cuSPARSE: cusparseSpMM with each CSR algorithm (default, CSR_ALG1, CSR_ALG2, CSR_ALG3), buffer "
           "allocated and cusparseSpMM_preprocess run before timing; the column shows the best one\n");
    printf("%-20s %9s %9s %7s | %16s %14s %14s %14s | %16s %14s %14s %14s %8s\n", "matrix", "nnz", "maxrow",
           "meanrow", "best cus 16", "auto 16", "rowsplit 16", "merge 16", "best cus 64", "auto 64",
           "rowsplit 64", "merge 64", "maxdiff");
    for (int t = 0; t < n; t++) csr_spmm_one(ctx, stream, &ms[t], o, gm);
    printf("SpMM targets: best cuSPARSE / sbm geomean over the distinct matrices, target >= 1.2x at 16 and "
           "64 columns\n");
    for (int g = 0; g < 2; g++)
        for (int w = 0; w < 2; w++) {
            char a[32], b[32], c1[32];
            printf("  %d columns, %s: auto %s, rowsplit %s, merge %s (%d matrices)\n", w ? 64 : 16,
                   g ? (o->large ? "nnz >= 1M" : "nnz >= 100k") : "every matrix",
                   gm_str(a, sizeof a, &gm[g][w][0], "%.2fx"), gm_str(b, sizeof b, &gm[g][w][1], "%.2fx"),
                   gm_str(c1, sizeof c1, &gm[g][w][2], "%.2fx"), gm[g][w][0].n);
        }
}
