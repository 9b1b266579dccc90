/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench-gpu, block report: the block CSV's columns, each SpGEMM case's table lines and CSV
 * row, and the block SpMV section (method: gpu/main.c). */
#define _POSIX_C_SOURCE 200809L

#include <string.h>

#include "gpu.h"
#include "common/generators.h"

/* ---------------------------------------------------------------------------------------- */
/* Block CSV and report                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* Columns of the block CSV (--csv): one row per SpGEMM case (kind gemm) and per block SpMV size
 * (kind spmv). Every timed figure X has X_ms (median), X_min_ms and X_max_ms. */
const char *const block_cols[] = {
    "kind", "case", "r", "k", "c", "upper", "products", "nnzb_c", "slices", "fast_path",
    "plan_ms", "plan_min_ms", "plan_max_ms", "plan_new_operands_ms", "plan_new_operands_min_ms",
    "plan_new_operands_max_ms", "plan_segmented_ms", "plan_segmented_min_ms", "plan_segmented_max_ms",
    "plan_radix_ms", "plan_radix_min_ms", "plan_radix_max_ms", "exec_ms", "exec_min_ms", "exec_max_ms",
    "exec_team_ms", "exec_team_min_ms", "exec_team_max_ms", "exec_dmma_ms", "exec_dmma_min_ms",
    "exec_dmma_max_ms", "exec_stage_ms", "exec_stage_min_ms", "exec_stage_max_ms", "exec_sdmma_ms",
    "exec_sdmma_min_ms", "exec_sdmma_max_ms", "exec_stage_np_ms", "exec_stage_np_min_ms",
    "exec_stage_np_max_ms", "exec_sdmma_np_ms", "exec_sdmma_np_min_ms", "exec_sdmma_np_max_ms",
    "plan_full_ms", "plan_full_min_ms", "plan_full_max_ms", "exec_full_ms", "exec_full_min_ms",
    "exec_full_max_ms", "gflops", "peak_mb",
    "cusparse_full_ms", "cusparse_full_min_ms", "cusparse_full_max_ms", "cusparse_best",
    "cusparse_default_ms", "cusparse_default_min_ms", "cusparse_default_max_ms", "cusparse_default_status",
    "cusparse_alg2_ms", "cusparse_alg2_min_ms", "cusparse_alg2_max_ms", "cusparse_alg2_status",
    "cusparse_alg3_ms", "cusparse_alg3_min_ms", "cusparse_alg3_max_ms", "cusparse_alg3_status",
    "cusparse_reuse_exec_ms", "cusparse_reuse_exec_min_ms", "cusparse_reuse_exec_max_ms",
    "cusparse_reuse_setup_ms", "cusparse_reuse_status", "cusparse_peak_mb", "cusparse_status",
    "cpu_plan_ms", "cpu_plan_min_ms", "cpu_plan_max_ms", "cpu_exec_ms", "cpu_exec_min_ms",
    "cpu_exec_max_ms", "cpu_reps",
    "speedup_exec", "speedup_full", "speedup_exec_equal_work", "speedup_full_equal_work",
    "diff_cpu", "diff_cusparse", "check",
    /* block SpMV rows */
    "copy_gbs", "spmv_n_ms", "spmv_n_min_ms", "spmv_n_max_ms", "spmv_t_ms", "spmv_t_min_ms", "spmv_t_max_ms",
    "bsr_ms", "bsr_min_ms", "bsr_max_ms", "bsr_status", "spmv_mbytes", "pct_n", "pct_t", "pct_bsr",
    "spmv_n_v1_ms", "spmv_n_v1_min_ms", "spmv_n_v1_max_ms", "spmv_n_v2_ms", "spmv_n_v2_min_ms",
    "spmv_n_v2_max_ms", "spmv_n_v3_ms", "spmv_n_v3_min_ms", "spmv_n_v3_max_ms", "spmv_t_v1_ms",
    "spmv_t_v1_min_ms", "spmv_t_v1_max_ms", "spmv_t_v2_ms", "spmv_t_v2_min_ms", "spmv_t_v2_max_ms",
    "spmv_t_v3_ms", "spmv_t_v3_min_ms", "spmv_t_v3_max_ms", NULL};

static double ratio_of(double peer_ms, double sbm_ms)
{
    return peer_ms > 0 && sbm_ms > 0 ? peer_ms / sbm_ms : -1.0;
}

/* Table lines and CSV row of one SpGEMM case. Ratios: exec = cuSPARSE reuse compute / sbm
 * execute; full = the best cuSPARSE algorithm, all phases / (sbm plan + execute); "equal work"
 * the same with sbm computing the full product too (upper cases; for the others the two agree). */
void report_gemm(const bench_case *bc, const gemm_row *row, bench_csv_row *cr, FILE *csv)
{
    const peer_spgemm_result *cu = &row->cus;
    const int upper = (bc->flags & SBM_GEMM_UPPER) != 0;
    const bench_stat eq_exec = upper ? row->exec_full : row->exec, eq_plan = upper ? row->plan_full : row->plan;
    const double sx = ratio_of(cu->reuse_ok ? cu->reuse_exec_ms : -1, row->exec.med);
    const double sf = ratio_of(cu->ok ? cu->full_ms : -1, row->plan.med + row->exec.med);
    const double sxe = ratio_of(cu->reuse_ok ? cu->reuse_exec_ms : -1, eq_exec.med);
    const double sfe = ratio_of(cu->ok ? cu->full_ms : -1, eq_plan.med + eq_exec.med);
    char rkc[16], s1[64], s2[64], s3[64], s4[64], s5[64];
    snprintf(rkc, sizeof rkc, "%dx%dx%d", row->r, row->k, row->c);
    if (row->note[0]) printf("%-16s FAILED: %s\n", bc->name, row->note);
    printf("%-18s %-6s %9lld %8lld %3lld %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f "
           "%8.3f %8.3f %8.1f %7.1f %10.3f %9.3f %6.1f %6.1f %8.1f %8.1f\n",
           bc->name, rkc, (long long)row->products, (long long)row->nnzb_c, (long long)row->slices,
           row->plan.med, row->plan_seg.med, row->plan_radix.med, row->plan_fresh.med, row->exec.med,
           row->exec_team.med, row->exec_dmma.med, row->exec_stage.med, row->exec_sdmma.med,
           row->exec_stage_np.med, row->exec_sdmma_np.med, row->gflops, row->peak_mb,
           cu->ok ? cu->full_ms : 0.0, cu->reuse_ok ? cu->reuse_exec_ms : 0.0, sx, sf, row->cpu_plan.med,
           row->cpu_exec.med);
    printf("    spread [min-max]: plan %s, exec %s, cuSPARSE best all phases %s, reuse %s, CPU exec %s\n",
           bench_stat_str(s1, sizeof s1, row->plan, "%.3f"), bench_stat_str(s2, sizeof s2, row->exec, "%.3f"),
           bench_stat_str(s3, sizeof s3, (bench_stat){cu->full_ms, cu->full_min_ms, cu->full_max_ms, cu->ok},
                          "%.3f"),
           bench_stat_str(s4, sizeof s4,
                          (bench_stat){cu->reuse_exec_ms, cu->reuse_min_ms, cu->reuse_max_ms, cu->reuse_ok}, "%.3f"),
           bench_stat_str(s5, sizeof s5, row->cpu_exec, "%.1f"));
    printf("    cuSPARSE all phases (buffers preallocated):");
    for (int i = 0; i < PEER_SPGEMM_ALGS; i++) {
        const peer_time *t = &cu->alg[i];
        if (t->ok)
            printf(" %s %s%s", peer_spgemm_alg_name(i),
                   bench_stat_str(s1, sizeof s1, (bench_stat){t->med, t->min, t->max, 1}, "%.3f"),
                   strcmp(t->status, "ok") ? " (timed once)" : "");
        else
            printf(" %s: %s", peer_spgemm_alg_name(i), t->status);
        printf(i + 1 < PEER_SPGEMM_ALGS ? ";" : "\n");
    }
    if (upper)
        printf("    equal work (sbm full product, %.2fx the upper one's execute): plan %s, exec %s; "
               "x exec %.2f, x full %.2f  |  upper only (what a BA user gets): x exec %.2f, x full %.2f\n",
               row->exec.med > 0 ? row->exec_full.med / row->exec.med : 0.0,
               bench_stat_str(s1, sizeof s1, row->plan_full, "%.3f"),
               bench_stat_str(s2, sizeof s2, row->exec_full, "%.3f"), sxe, sfe, sx, sf);
    printf("    check (max rel. diff per entry, tol %.0e): %s\n", BENCH_CHECK_TOL, row->check);
    fflush(stdout);
    bench_csv_text(cr, "kind", "gemm");
    bench_csv_text(cr, "case", bc->name);
    bench_csv_num(cr, "r", "%.0f", row->r);
    bench_csv_num(cr, "k", "%.0f", row->k);
    bench_csv_num(cr, "c", "%.0f", row->c);
    bench_csv_num(cr, "upper", "%.0f", upper);
    bench_csv_num(cr, "products", "%.0f", (double)row->products);
    bench_csv_num(cr, "nnzb_c", "%.0f", (double)row->nnzb_c);
    bench_csv_num(cr, "slices", "%.0f", (double)row->slices);
    bench_csv_num(cr, "fast_path", "%.0f", row->fast);
    bench_csv_stat(cr, "plan", row->plan);
    bench_csv_stat(cr, "plan_new_operands", row->plan_fresh);
    bench_csv_stat(cr, "plan_segmented", row->plan_seg);
    bench_csv_stat(cr, "plan_radix", row->plan_radix);
    bench_csv_stat(cr, "exec", row->exec);
    bench_csv_stat(cr, "exec_team", row->exec_team);
    bench_csv_stat(cr, "exec_dmma", row->exec_dmma);
    bench_csv_stat(cr, "exec_stage", row->exec_stage);
    bench_csv_stat(cr, "exec_sdmma", row->exec_sdmma);
    bench_csv_stat(cr, "exec_stage_np", row->exec_stage_np);
    bench_csv_stat(cr, "exec_sdmma_np", row->exec_sdmma_np);
    bench_csv_stat(cr, "plan_full", eq_plan);
    bench_csv_stat(cr, "exec_full", eq_exec);
    bench_csv_num(cr, "gflops", "%.3f", row->gflops);
    bench_csv_num(cr, "peak_mb", "%.3f", row->peak_mb);
    bench_csv_stat(cr, "cusparse_full", (bench_stat){cu->full_ms, cu->full_min_ms, cu->full_max_ms, cu->ok});
    bench_csv_text(cr, "cusparse_best", cu->ok ? peer_spgemm_alg_name(cu->best) : "");
    for (int i = 0; i < PEER_SPGEMM_ALGS; i++) {
        char col[64];
        const peer_time *t = &cu->alg[i];
        snprintf(col, sizeof col, "cusparse_%s", peer_spgemm_alg_name(i));
        bench_csv_stat(cr, col, (bench_stat){t->med, t->min, t->max, t->ok});
        snprintf(col, sizeof col, "cusparse_%s_status", peer_spgemm_alg_name(i));
        bench_csv_text(cr, col, t->status);
    }
    bench_csv_stat(cr, "cusparse_reuse_exec",
                   (bench_stat){cu->reuse_exec_ms, cu->reuse_min_ms, cu->reuse_max_ms, cu->reuse_ok});
    bench_csv_num(cr, "cusparse_reuse_setup_ms", "%.6f", cu->reuse_ok ? cu->reuse_setup_ms : -1.0);
    bench_csv_text(cr, "cusparse_reuse_status", cu->reuse_status);
    bench_csv_num(cr, "cusparse_peak_mb", "%.3f", cu->ok ? (double)cu->peak_bytes / (1024.0 * 1024.0) : -1.0);
    bench_csv_text(cr, "cusparse_status", cu->status);
    bench_csv_stat(cr, "cpu_plan", row->cpu_plan);
    bench_csv_stat(cr, "cpu_exec", row->cpu_exec);
    bench_csv_num(cr, "cpu_reps", "%.0f", row->cpu_ok ? row->cpu_exec.n : -1.0);
    bench_csv_num(cr, "speedup_exec", "%.4f", sx);
    bench_csv_num(cr, "speedup_full", "%.4f", sf);
    bench_csv_num(cr, "speedup_exec_equal_work", "%.4f", sxe);
    bench_csv_num(cr, "speedup_full_equal_work", "%.4f", sfe);
    bench_csv_num(cr, "diff_cpu", "%.3e", row->diff_cpu);
    bench_csv_num(cr, "diff_cusparse", "%.3e", row->diff_cus);
    bench_csv_text(cr, "check", row->check);
    bench_csv_write(csv, cr);
}

/* ---------------------------------------------------------------------------------------- */
/* SpMV                                                                                     */
/* ---------------------------------------------------------------------------------------- */

double copy_bandwidth_gbs(void)
{
    char what[96];
    return bench_copy_gbs(what, sizeof what);
}

void run_spmv(sbm_ctx *host, int large, int reps, FILE *csv, bench_csv_row *cr, double copy_gbs)
{
    printf("\nBlock SpMV y = A*x on 2D Poisson (%s grid), beta = 0; device copy bandwidth %.0f GB/s "
           "(read + write); median of %d after a warm-up\n", large ? "300x300" : "60x60", copy_gbs, reps);
    printf("N ms, T ms: the default kernel; N v1..v3, T v1..v3: each version forced (ms); "
           "the [min-max] spread of every figure is in the CSV\n");
    printf("%-14s %10s %10s %9s %8s %9s %8s %10s %8s  %7s %7s %7s  %7s %7s %7s  %s\n", "case", "nnzb",
           "MB", "N ms", "N %copy", "T ms", "T %copy", "BSR ms", "BSR %", "N v1", "N v2", "N v3",
           "T v1", "T v2", "T v3", "N / T / BSR spread [min-max]; cuSPARSE status");
    sbm_ctx *ctx = NULL;
    CHECK(NULL, sbm_ctx_create(&ctx, SBM_BACKEND_CUDA, 0));
    for (int b = 1; b <= 8; b++) {
        sbm_cbc *H = NULL, *A = NULL;
        CHECK(host, gen_poisson2d(host, large ? 300 : 60, b, 99, &H));
        CHECK(ctx, sbm_cbc_copy(ctx, H, &A));
        sbm_cbc_info a = sbm_cbc_get_info(A);
        const int64_t n = a.nbc * b, m = a.nbr * b;
        double *x = NULL, *y = NULL, *bv = NULL;
        int64_t *brp = NULL;
        int32_t *bci = NULL;
        CHECK_CU(cudaMalloc((void **)&x, (size_t)n * sizeof(double)));
        CHECK_CU(cudaMalloc((void **)&y, (size_t)m * sizeof(double)));
        {
            double *hx = malloc((size_t)n * sizeof *hx);
            for (int64_t i = 0; i < n; i++) hx[i] = 1.0 / (1.0 + (double)(i % 17));
            CHECK_CU(cudaMemcpy(x, hx, (size_t)n * sizeof *hx, cudaMemcpyHostToDevice));
            free(hx);
        }
        /* bytes a SpMV must move: values, block indices and pointers, x and y once */
        const double mbytes = (double)a.nnzb * b * b * 8 + (double)a.nnzb * 4 + (double)(a.nbc + 1) * 8 +
                              (double)n * 8 + (double)m * 8;
        /* ms[op][0]: the default kernel; ms[op][v]: version v forced (kernels/cuda/spmv/cuda_spmv.cu) */
        bench_stat ms[2][4];
        static const sbm_tune_spmv vers[4] = {SBM_TUNE_SPMV_AUTO, SBM_TUNE_SPMV_ONE_BY_ONE,
                                              SBM_TUNE_SPMV_BATCHED, SBM_TUNE_SPMV_BATCHED_SMALL};
        cudaEvent_t e0, e1;
        CHECK_CU(cudaEventCreate(&e0));
        CHECK_CU(cudaEventCreate(&e1));
        double *t = calloc((size_t)reps + 1, sizeof *t);
        for (int op = 0; op < 2; op++) {
            for (int v = 0; v < 4; v++) {
                tune(ctx, (sbm_tuning){.spmv = vers[v]});
                for (int rep = 0; rep <= reps; rep++) {
                    CHECK_CU(cudaEventRecord(e0, 0));
                    CHECK(ctx, sbm_cbc_spmv(ctx, op ? SBM_OP_T : SBM_OP_N, 1.0, A, x, 0.0, y));
                    CHECK_CU(cudaEventRecord(e1, 0));
                    CHECK_CU(cudaEventSynchronize(e1));
                    float f = 0.0f;
                    CHECK_CU(cudaEventElapsedTime(&f, e0, e1));
                    if (rep > 0) t[rep - 1] = f;
                }
                ms[op][v] = bench_stat_of(t, reps);
            }
        }
        CHECK(ctx, sbm_ctx_set_tuning(ctx, NULL));
        /* cuSPARSE BSR SpMV on the same matrix (BSR arrays from sbm_cbc_to_bsr, column-major blocks) */
        peer_spmv_result pr;
        memset(&pr, 0, sizeof pr);
        CHECK_CU(cudaMalloc((void **)&brp, (size_t)(a.nbr + 1) * sizeof(int64_t)));
        CHECK_CU(cudaMalloc((void **)&bci, (size_t)(a.nnzb + 1) * sizeof(int32_t)));
        CHECK_CU(cudaMalloc((void **)&bv, (size_t)(a.nnzb * b * b + 1) * sizeof(double)));
        CHECK(ctx, sbm_cbc_to_bsr(ctx, A, SBM_LAYOUT_COL_MAJOR, brp, bci, bv));
        CHECK(ctx, sbm_ctx_synchronize(ctx));
        if (b == 1) {
            snprintf(pr.status, sizeof pr.status, "b = 1: cusparseDbsrmv needs blockDim > 1");
            pr.ok = 0;
        } else {
            peer_cusparse_bsrmv(a.nbr, a.nbc, a.nnzb, b, brp, bci, bv, 1, x, y, reps, &pr);
        }
        const bench_stat bsr = {pr.ms, pr.min_ms, pr.max_ms, pr.ok};
        const double gbN = mbytes / (ms[0][0].med * 1e6), gbT = mbytes / (ms[1][0].med * 1e6);
        const double gbB = pr.ok ? mbytes / (pr.ms * 1e6) : 0.0;
        char name[32], s1[64], s2[64], s3[64];
        snprintf(name, sizeof name, "poisson2d-b%d", b);
        printf("%-14s %10lld %10.1f %9.4f %7.0f%% %9.4f %7.0f%% %10.4f %7.0f%%  %7.4f %7.4f %7.4f  "
               "%7.4f %7.4f %7.4f  %s / %s / %s; %s\n", name,
               (long long)a.nnzb, mbytes / 1e6, ms[0][0].med, 100.0 * gbN / copy_gbs, ms[1][0].med,
               100.0 * gbT / copy_gbs, pr.ok ? pr.ms : 0.0, pr.ok ? 100.0 * gbB / copy_gbs : 0.0,
               ms[0][1].med, ms[0][2].med, ms[0][3].med, ms[1][1].med, ms[1][2].med, ms[1][3].med,
               bench_stat_str(s1, sizeof s1, ms[0][0], "%.4f"), bench_stat_str(s2, sizeof s2, ms[1][0], "%.4f"),
               bench_stat_str(s3, sizeof s3, bsr, "%.4f"), pr.status);
        bench_csv_text(cr, "kind", "spmv");
        bench_csv_text(cr, "case", name);
        bench_csv_num(cr, "r", "%.0f", b);
        bench_csv_num(cr, "k", "%.0f", 1);
        bench_csv_num(cr, "c", "%.0f", b);
        bench_csv_num(cr, "products", "%.0f", (double)a.nnzb);
        bench_csv_num(cr, "copy_gbs", "%.1f", copy_gbs);
        bench_csv_stat(cr, "spmv_n", ms[0][0]);
        bench_csv_stat(cr, "spmv_t", ms[1][0]);
        bench_csv_stat(cr, "bsr", bsr);
        bench_csv_text(cr, "bsr_status", pr.status);
        bench_csv_num(cr, "spmv_mbytes", "%.3f", mbytes / 1e6);
        bench_csv_num(cr, "pct_n", "%.1f", 100.0 * gbN / copy_gbs);
        bench_csv_num(cr, "pct_t", "%.1f", 100.0 * gbT / copy_gbs);
        bench_csv_num(cr, "pct_bsr", "%.1f", pr.ok ? 100.0 * gbB / copy_gbs : -1.0);
        for (int op = 0; op < 2; op++)
            for (int v = 1; v < 4; v++) {
                char col[32];
                snprintf(col, sizeof col, "spmv_%c_v%d", op ? 't' : 'n', v);
                bench_csv_stat(cr, col, ms[op][v]);
            }
        bench_csv_write(csv, cr);
        free(t);
        CHECK_CU(cudaEventDestroy(e0));
        CHECK_CU(cudaEventDestroy(e1));
        CHECK_CU(cudaFree(bv));
        CHECK_CU(cudaFree(bci));
        CHECK_CU(cudaFree(brp));
        CHECK_CU(cudaFree(y));
        CHECK_CU(cudaFree(x));
        sbm_cbc_destroy(A);
        sbm_cbc_destroy(H);
    }
    sbm_ctx_destroy(ctx);
}
