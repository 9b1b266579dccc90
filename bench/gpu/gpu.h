/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench-gpu's shared declarations: the checks that end the program on a failed CUDA or sbm
 * call, the block SpGEMM case and its row of results, and each section's entry points
 * (the files of bench/gpu/; the method is described in main.c). */
#ifndef SBM_BENCH_GPU_H
#define SBM_BENCH_GPU_H

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/bench_util.h"
#include "peers/peer_cusparse.h"
#include "sbm.h"

/* Host wall clock (ms, monotonic). */
double wall_ms(void);

#define CHECK_CU(call)                                                                        \
    do {                                                                                      \
        cudaError_t ce_ = (call);                                                             \
        if (ce_ != cudaSuccess) {                                                             \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorName(ce_)); \
            exit(2);                                                                          \
        }                                                                                     \
    } while (0)

#define CHECK(ctx, call)                                                                      \
    do {                                                                                      \
        sbm_status st_ = (call);                                                              \
        if (st_ != SBM_SUCCESS) {                                                             \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, sbm_status_name(st_),      \
                    sbm_ctx_last_error(ctx));                                                 \
            exit(2);                                                                          \
        }                                                                                     \
    } while (0)


typedef struct bench_case {
    char name[64];
    char family[16];
    sbm_op op_a, op_b;
    unsigned flags;
    sbm_cbc *A, *B; /* host (CPU context) operands */
} bench_case;

typedef struct gemm_row {
    int r, k, c;
    int64_t products, nnzb_c, slices;
    int fast;
    bench_stat plan, plan_seg, plan_radix, plan_fresh; /* sbm plan: default, sorts forced, new operands */
    bench_stat exec, exec_team, exec_dmma, exec_stage, exec_sdmma, exec_stage_np, exec_sdmma_np;
    bench_stat plan_full, exec_full; /* upper cases: the full product, the work cuSPARSE does */
    double gflops, peak_mb;
    sbm_cbc *c_gpu;      /* host copy of sbm's C (the case's product) */
    sbm_cbc *c_gpu_full; /* upper cases: host copy of sbm's full product (when small enough) */
    peer_spgemm_result cus;
    int cpu_ok;
    bench_stat cpu_plan, cpu_exec;
    sbm_cbc *c_cpu;      /* the CPU backend's C */
    double diff_cpu, diff_cus; /* max relative difference per entry (bench_util.h); -1: none */
    char check[200];     /* what was compared, and the verdict */
    char note[160];
} gemm_row;

/* Host copies of C larger than this many scalar entries are not made for the check against
 * cuSPARSE (its C and sbm's, expanded to CSR, would need tens of GB of host memory). */
#define KEEP_C_MAX 300000000LL

/* A CPU call slower than this (its warm-up) is timed once more only. */
#define CPU_SLOW_MS 1000.0

/* gpu/block.c: the cases selected by sel ("all", a name or a family); @return how many. */
int build_cases(sbm_ctx *host, int large, const char *sel, const char *datadir, bench_case *cs, int max);
/* ctx's tuning (fields not named in the caller's compound literal: the library's choice). */
void tune(sbm_ctx *ctx, sbm_tuning t);
/* The runs of one case: sbm on the GPU, cuSPARSE, the CPU backend; then the checks. */
void run_sbm_gpu(sbm_ctx *host, const bench_case *bc, int reps, gemm_row *row);
void run_cusparse(const bench_case *bc, int reps, gemm_row *row);
void run_cpu(sbm_ctx *host, const bench_case *bc, int cpu_reps, gemm_row *row);
/* Elementwise checks of a case: sbm GPU against the CPU backend (same product), and the full
 * product against cuSPARSE's. Fills diff_cpu, diff_cus and check; @return 1 if one failed. */
int gemm_checks(sbm_ctx *host, const bench_case *bc, gemm_row *row);
void gemm_row_free(gemm_row *row);

/* gpu/report.c: the block CSV's columns (NULL-terminated), a case's table lines and CSV
 * row, the device copy bandwidth (GB/s, read + write) and the block SpMV section. */
extern const char *const block_cols[];
void report_gemm(const bench_case *bc, const gemm_row *row, bench_csv_row *cr, FILE *csv);
double copy_bandwidth_gbs(void);
void run_spmv(sbm_ctx *host, int large, int reps, FILE *csv, bench_csv_row *cr, double copy_gbs);

/* gpu/csr.c: the scalar CSR section. */
typedef struct csr_opts {
    int large;
    int reps;
    int do_cus;
    int spmv, spmm, gemm; /* operations run */
    double copy_gbs;
    FILE *csv;
} csr_opts;
void run_csr(sbm_ctx *host, const char *sel, const char *datadir, csr_opts *o);
/* Results of the CSR section that failed their check: the program's exit status says so. */
extern int csr_check_failures;

#endif /* SBM_BENCH_GPU_H */
