/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench-gpu: the CUDA backend's block SpGEMM and block SpMV, and scalar CSR SpMV,
 * SpMM and SpGEMM, against peers measured in the same run.
 *
 *   sbm-bench-gpu [--size small|large] [--case NAME|FAMILY|csr|all] [--csv FILE] [--reps N]
 *                 [--no-cpu] [--no-cusparse] [--no-spmv] [--no-csr] [--csr-csv FILE]
 *                 [--csr-ops spmv,spmm,gemm]
 *
 * SpGEMM cases C = op(A)*op(B): poisson2d-bB (A*A, 5-point 2D Poisson on a g x g grid, dense
 * b x b blocks, b = 1..8), poisson3d-bB (7-point 3D Poisson), ba-9x3 / ba-6x3 ((W V^-1) W^T,
 * upper block triangle; 1000 cameras, 100k points, 6 observations per point), ba-9x3-5000
 * (5000 cameras, 400k points, 8 observations), g2o-NAME (J^T (Omega J), upper, for the pose
 * graphs in data/g2o: 3x3 blocks in 2D, 6x6 in 3D).
 *
 * Method. Every time is the median of --reps timed calls after an untimed warm-up,
 * reported with the min and max of those calls (table: "med [min-max]"; CSV: X_ms, X_min_ms,
 * X_max_ms); the table and the CSV are written from the same measurements. The CPU backend:
 * --cpu-reps (3) after a warm-up, one when a call takes over 1 s. Allocation: sbm's timed calls
 * reuse its workspace pool (grown by the warm-up) and allocate their C; cuSPARSE's work buffers are
 * allocated by its warm-up call and reused by the timed ones, each timed SpGEMM allocating its C
 * (freed outside the timing, as sbm's), and its SpMV/SpMM get their preprocess step before
 * timing (sbm's caches are warm too). Peers at their best: every cuSPARSE algorithm of the
 * operation is timed (SpGEMM default, ALG2, ALG3; SpMV default, CSR_ALG1, CSR_ALG2; SpMM default,
 * CSR_ALG1..3), each failure reported by name, and ratios are taken against the fastest that ran
 * and passed the check. Correctness: results are compared entry by entry (bench_util.h: max
 * relative difference per entry, floored at 1e-3 of the largest entry, tolerance 1e-9); a failed
 * check shows "CHECK FAILED" / "WRONG" and leaves the row out of every geomean.
 *
 * Per SpGEMM case: sbm plan time (the default, each sort variant forced, and with operands new
 * to the context so that the plan's pattern fingerprints are computed), execute time (CUDA
 * events; the default numeric kernel and each one forced), GFLOP/s (2*r*k*c flops per block
 * product), peak device memory of plan + execute (an allocator hook counts every allocation of
 * the context, workspace pool included), slices; cuSPARSE cusparseSpGEMM on the same product
 * expanded to scalar CSR (all phases, each algorithm; and cusparseSpGEMMreuse_compute for the
 * execute-only comparison), with its status when it fails; the sbm CPU backend
 * (single-threaded). Equal work: cuSPARSE has no upper-triangle mode, so for the upper cases
 * (ba, g2o) sbm's full product is timed too, and the ratios are given both ways: equal work
 * (sbm full vs cuSPARSE full) and upper only (what a BA user gets). Checks: sbm GPU against the
 * CPU backend (same product), and sbm's full product against cuSPARSE's C (where C has at most
 * 3e8 entries). Ratios: exec speedup = cuSPARSE reuse compute / sbm execute; full speedup =
 * best cuSPARSE all phases / (sbm plan + execute).
 *
 * SpMV: y = A*x (op N and T) on the 2D Poisson matrices, effective bandwidth (matrix values and
 * indices, x, y once each) against a measured device-to-device copy, and cuSPARSE's BSR SpMV.
 *
 * Scalar CSR section (--case csr runs only it, --case csr-FAMILY or a matrix name one
 * part of it, --no-csr skips it, --csr-ops spmv,spmm,gemm picks the operations). Matrices, built
 * on the host (--size large; small in brackets): poisson2d-1500 [300] (5-point, 11.2M nonzeros),
 * poisson3d-114 [30] (7-point, 10.3M), ba-w-9x3 (the BA camera-point block W, 9x3 blocks, 1000
 * [100] cameras, 100k [10k] points, 6 observations each, expanded to scalars: 9000 x 300000,
 * 16.2M), ba-wt-9x3 (its transpose), ba-schur-9x3 (the Schur-like camera matrix W W^T, full, of
 * 500 [100] cameras, 20k [4k] points, 4 observations: 4500 x 4500, 12.5M), rmat-21-8 and
 * rmat-20-16 [16-8, 15-16] (R-MAT scale-edge factor, a b c d = .57 .19 .19 .05, duplicates
 * removed: 16.4M and 16.1M nonzeros), rmat-17-8 [13-8] (an R-MAT whose A*A fits: 1M), and
 * mtx-NAME for every file in DATA/mtx. Families csr-poisson2d, csr-poisson3d, csr-ba, csr-rmat,
 * csr-mtx. Every sbm result is checked against cuSPARSE's entry by entry (see Method); above the
 * tolerance the table shows "WRONG", the CSV status "CHECK FAILED", and the timing counts in no
 * geomean. Geomeans count each distinct matrix once (west0067_jumbled holds west0067's entries:
 * "same matrix as", left out) and are given over every matrix and over the sizable ones
 * (>= 1M nonzeros for SpMV/SpMM, >= 1M products for SpGEMM). An sbm call that returns SBM_ERR_NOT_SUPPORTED shows "n/a";
 * other failures "err" with the status below the row. Timings: CUDA events on the context's
 * stream (cuSPARSE bound to the same stream), one warm-up call, median of the reps; a call whose
 * warm-up takes over 1 s is timed by that call alone ("timed once" in the status).
 *  - SpMV y = A*x: sbm_csr_spmv ("auto") and sbm_spmv_plan_execute with a plan per format
 *    (plan-auto, csr-scalar, csr-vector, csr-merge, coo, ell, hyb, dia; a format refused by its
 *    padding limit shows "-") against cusparseSpMV (every CSR algorithm); 4 x reps. GB/s from
 *    the bytes the format reads and writes (format_bytes: CSR 8(m+1) + 12 nnz + 8n + 8m; ELL,
 *    HYB, DIA their padded arrays), as % of the measured copy bandwidth (matrices that fit the
 *    50 MB L2 cache can exceed 100%). Targets: >= 80% of copy on the regular (Poisson, BA) matrices of
 *    >= 10M nonzeros, >= 1.2x cuSPARSE on the R-MAT ones.
 *  - SpMM C = A*B, B and C row-major with 16 and 64 columns: sbm_csr_spmm (auto; rowsplit and
 *    merge forced through the context's tuning) against cusparseSpMM (every CSR algorithm);
 *    GFLOP/s = 2 nnz cols / time. Target: geomean >= 1.2x cuSPARSE at 16 and at 64 columns.
 *  - SpGEMM C = A*A (A^T*A or A*A^T, whichever has fewer products, for rectangular A; skipped
 *    above 1e9 [1e8] intermediate products): sbm_csr_gemm (one-shot: plan + execute) and
 *    sbm_csr_gemm_execute with a reused plan, against cusparseSpGEMM (all phases, each
 *    algorithm, work buffers preallocated) and cusparseSpGEMMreuse_compute. GFLOP/s = 2 products / time. "short": mean
 *    products per row of C < 32. Targets: geomean >= 1.0x cuSPARSE, >= 1.5x on short rows.
 *
 * CSR CSV (--csr-csv FILE; the block CSV keeps its columns), one row per matrix, operation and
 * variant: op (spmv|spmm|gemm), matrix, family, m, n, nnz, variant (spmv: cusparse-ALG, auto,
 * plan-FORMAT; spmm: cusparse-ALG, auto, rowsplit, merge; gemm: cusparse-ALG (each algorithm),
 * cusparse-full (the best), cusparse-reuse, oneshot, exec, or none when skipped), ncols (spmm),
 * products, nnz_c, short_rows (gemm), ms (median), min_ms, max_ms, setup_ms (spmv plan conversion; cuSPARSE's descriptors + buffer; gemm exec: the
 * sbm plan; cusparse-reuse: its symbolic phases), rate (GB/s for spmv, GFLOP/s otherwise),
 * rate_unit, pct_copy (spmv), cusparse_ms (the best cuSPARSE counterpart: SpMV, SpMM of the same
 * width, full SpGEMM for oneshot, reuse compute for exec), ratio (cusparse_ms / ms; > 1: sbm
 * faster), max_rel_diff (against cuSPARSE), bytes (spmv: of the format), cusparse_best (the
 * algorithm of cusparse_ms), dup_of (an identical earlier matrix: not in geomeans), sizable
 * (1: counted in the sizable geomeans), status ("ok", "n/a: ...", "refused: ...",
 * "error STATUS: ...", "skipped: ..."). Empty fields: not applicable or not measured. */
#define _POSIX_C_SOURCE 200809L

#include <cuda_runtime.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bench_util.h"
#define _POSIX_C_SOURCE 200809L

#include <string.h>
#include <time.h>

#include "gpu.h"

double wall_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

/* ---------------------------------------------------------------------------------------- */
/* Main                                                                                     */
/* ---------------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    const char *sel = "all", *csv_path = NULL, *csr_csv_path = NULL, *datadir = getenv("SBM_DATA_DIR");
    int large = 1, reps = 5, cpu_reps = 3, do_cpu = 1, do_cus = 1, do_spmv = 1, do_csr = 1;
    const char *csr_ops = "spmv,spmm,gemm";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) large = strcmp(argv[++i], "small") != 0;
        else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) sel = argv[++i];
        else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) csv_path = argv[++i];
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--cpu-reps") == 0 && i + 1 < argc) cpu_reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--no-cpu") == 0) do_cpu = 0;
        else if (strcmp(argv[i], "--no-cusparse") == 0) do_cus = 0;
        else if (strcmp(argv[i], "--no-spmv") == 0) do_spmv = 0;
        else if (strcmp(argv[i], "--no-csr") == 0) do_csr = 0;
        else if (strcmp(argv[i], "--csr-csv") == 0 && i + 1 < argc) csr_csv_path = argv[++i];
        else if (strcmp(argv[i], "--csr-ops") == 0 && i + 1 < argc) csr_ops = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--size small|large] [--case NAME|FAMILY|csr|all] [--csv FILE] "
                            "[--csr-csv FILE] [--csr-ops spmv,spmm,gemm] [--reps N] [--cpu-reps N] [--no-cpu] "
                            "[--no-cusparse] [--no-spmv] [--no-csr]\n", argv[0]);
            return 1;
        }
    }
    if (reps < 1) reps = 1;
    if (cpu_reps < 1) cpu_reps = 1;
    if (!datadir || !*datadir) datadir = SBM_BENCH_DATA_DIR;
    if (sbm_cuda_device_count() < 1) {
        fprintf(stderr, "sbm-bench-gpu: no CUDA device (or no CUDA backend in this build)\n");
        return 1;
    }
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    int rt = 0, drv = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    printf("sbm-bench-gpu: %s, %d SMs, CUDA runtime %d.%d, driver %d.%d; every time: median [min-max] "
           "of %d reps after a warm-up (SpMV: %d; CPU backend: %d, 1 when a call takes > %.0f ms)\n",
           prop.name, prop.multiProcessorCount, rt / 1000, (rt % 1000) / 10, drv / 1000, (drv % 1000) / 10,
           reps, 4 * reps, cpu_reps, CPU_SLOW_MS);
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv_path && !csv) {
        fprintf(stderr, "sbm-bench-gpu: cannot write %s\n", csv_path);
        return 1;
    }
    bench_csv_row crow;
    if (bench_csv_row_init(&crow, block_cols) != 0) return 1;
    if (csv) bench_csv_header(csv, block_cols);
    sbm_ctx *host = NULL;
    CHECK(NULL, sbm_ctx_create(&host, SBM_BACKEND_CPU, 0));
    bench_case cs[64];
    const int n = build_cases(host, large, sel, datadir, cs, 64);
    if (n > 0) printf("\nBlock SpGEMM C = op(A)*op(B) (ba, g2o: upper block triangle; cuSPARSE computes the "
           "full scalar product, so these cases also time sbm's full product: 'equal work')\n"
           "cuSPARSE: cusparseSpGEMM all phases with the default algorithm, ALG2 and ALG3 (chunk fraction "
           "%.2f), each with its work buffers allocated by an untimed warm-up call and reused by the "
           "timed ones (sbm's timed calls reuse its workspace pool likewise) and C allocated by every call "
           "(as sbm's plan allocates C); cus full = the best of "
           "them; cus exec = cusparseSpGEMMreuse_compute (default algorithm)\n", PEER_SPGEMM_CHUNK);
    if (n > 0) printf("plan: median of repeated plans of the same operands (pattern fingerprints cached), "
           "default sort; seg / radix: each sort variant forced; new ops: operands new to the "
           "context (fingerprints computed)\n"
           "exec: default numeric kernel; team / dmma: thread per element / FP64 tensor cores; "
           "stage / sdmma: the same staged through shared memory, persistent grid (-np: one tile "
           "per CTA); "
           "x exec = cuSPARSE reuse compute / exec; x full = best cuSPARSE all phases / (plan + exec)\n");
    if (n > 0)
        printf("%-18s %-6s %9s %8s %3s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %7s %10s %9s %6s "
           "%6s %8s %8s\n",
           "case", "rxkxc", "products", "nnzb_C", "sl", "plan ms", "seg", "radix", "new ops", "exec ms",
           "team", "dmma", "stage", "sdmma", "stage-np", "sdmma-np", "GFLOP/s", "peakMB", "cus full",
           "cus exec", "x exec", "x full", "cpu plan", "cpu exec");
    int failures = 0;
    for (int t = 0; t < n; t++) {
        gemm_row row;
        memset(&row, 0, sizeof row);
        row.cpu_plan = row.cpu_exec = row.plan_full = row.exec_full = bench_stat_none();
        run_sbm_gpu(host, &cs[t], reps, &row);
        if (do_cus) run_cusparse(&cs[t], reps, &row);
        else snprintf(row.cus.status, sizeof row.cus.status, "not run");
        if (do_cpu) run_cpu(host, &cs[t], cpu_reps, &row);
        failures += gemm_checks(host, &cs[t], &row);
        report_gemm(&cs[t], &row, &crow, csv);
        gemm_row_free(&row);
        sbm_cbc_destroy(cs[t].A);
        sbm_cbc_destroy(cs[t].B);
    }
    double copy_gbs = -1.0;
    if (do_spmv && (strcmp(sel, "all") == 0 || strcmp(sel, "spmv") == 0)) {
        copy_gbs = copy_bandwidth_gbs();
        run_spmv(host, large, reps * 4, csv, &crow, copy_gbs);
    }
    if (do_csr) {
        csr_opts o = {large, reps, do_cus, strstr(csr_ops, "spmv") != NULL, strstr(csr_ops, "spmm") != NULL,
                      strstr(csr_ops, "gemm") != NULL, copy_gbs, NULL};
        if (csr_csv_path && !(o.csv = fopen(csr_csv_path, "w"))) {
            fprintf(stderr, "sbm-bench-gpu: cannot write %s\n", csr_csv_path);
            return 1;
        }
        run_csr(host, sel, datadir, &o);
        if (o.csv) fclose(o.csv);
    }
    if (csv) fclose(csv);
    bench_csv_row_free(&crow);
    sbm_ctx_destroy(host);
    if (failures) printf("\n%d block SpGEMM case(s) FAILED the elementwise check (see 'check' above)\n", failures);
    if (csr_check_failures)
        printf("\n%d scalar CSR result(s) FAILED the elementwise check (CHECK FAILED in the CSV)\n", csr_check_failures);
    return failures || csr_check_failures ? 3 : 0;
}
