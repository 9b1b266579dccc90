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

#include "bench_util.h"
#include "generators.h"
#include "peer_cusparse.h"
#include "sbm.h"
#include "sbm_ba.h"
#include "sbm_io.h"
#include "sbm_slam.h"

/* ---------------------------------------------------------------------------------------- */
/* Small helpers                                                                            */
/* ---------------------------------------------------------------------------------------- */

static double wall_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

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

/* Allocator hook that counts the context's live device bytes and their peak. */
typedef struct counting {
    size_t live, peak;
    void **ptrs;
    size_t *sizes;
    size_t n, cap;
} counting;

static void *count_alloc(void *user, size_t bytes)
{
    counting *c = user;
    void *p = NULL;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    if (c->n == c->cap) {
        size_t nc = c->cap ? 2 * c->cap : 256;
        void **np = realloc(c->ptrs, nc * sizeof *np);
        size_t *ns = realloc(c->sizes, nc * sizeof *ns);
        if (!np || !ns) abort();
        c->ptrs = np;
        c->sizes = ns;
        c->cap = nc;
    }
    c->ptrs[c->n] = p;
    c->sizes[c->n++] = bytes;
    c->live += bytes;
    if (c->live > c->peak) c->peak = c->live;
    return p;
}

static void count_free(void *user, void *ptr)
{
    counting *c = user;
    if (!ptr) return;
    for (size_t i = c->n; i-- > 0;)
        if (c->ptrs[i] == ptr) {
            c->live -= c->sizes[i];
            c->ptrs[i] = c->ptrs[--c->n];
            c->sizes[i] = c->sizes[c->n];
            break;
        }
    cudaFree(ptr);
}

/* ---------------------------------------------------------------------------------------- */
/* Cases                                                                                    */
/* ---------------------------------------------------------------------------------------- */

typedef struct bench_case {
    char name[64];
    char family[16];
    sbm_op op_a, op_b;
    unsigned flags;
    sbm_cbc *A, *B; /* host (CPU context) operands */
} bench_case;

/* g2o pose graph: J (edges x poses blocks of d x d, two blocks per edge row) and Omega*J (the
 * same pattern, other values); d = 3 (SE2) or 6 (SE3). Values random: the pattern is what the
 * product's cost depends on. */
static int make_g2o(sbm_ctx *host, const char *path, sbm_cbc **J, sbm_cbc **OJ)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[4096];
    int64_t ne = 0, cap = 1024, npose = 0;
    int d = 0;
    int32_t *from = malloc((size_t)cap * sizeof *from), *to = malloc((size_t)cap * sizeof *to);
    while (fgets(line, sizeof line, f)) {
        char tag[64];
        long i, j;
        if (sscanf(line, "%63s %ld %ld", tag, &i, &j) != 3) continue;
        if (strncmp(tag, "EDGE_SE2", 8) == 0) d = 3;
        else if (strncmp(tag, "EDGE_SE3", 8) == 0) d = 6;
        else continue;
        if (i == j) continue;
        if (ne == cap) {
            cap *= 2;
            from = realloc(from, (size_t)cap * sizeof *from);
            to = realloc(to, (size_t)cap * sizeof *to);
        }
        from[ne] = (int32_t)i;
        to[ne++] = (int32_t)j;
        if (i + 1 > npose) npose = i + 1;
        if (j + 1 > npose) npose = j + 1;
    }
    fclose(f);
    if (ne == 0 || d == 0) return -1;
    /* triplets: edge e (block row) x pose (block column) */
    int32_t *br = malloc((size_t)(2 * ne) * sizeof *br), *bc = malloc((size_t)(2 * ne) * sizeof *bc);
    double *v = malloc((size_t)(2 * ne) * d * d * sizeof *v);
    uint64_t s = 12345;
    for (int64_t e = 0; e < ne; e++) {
        br[2 * e] = br[2 * e + 1] = (int32_t)e;
        bc[2 * e] = from[e];
        bc[2 * e + 1] = to[e];
    }
    for (int m = 0; m < 2; m++) {
        for (int64_t t = 0; t < 2 * ne * d * d; t++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            v[t] = (double)(s >> 11) * 0x1.0p-53 * 2.0 - 1.0;
        }
        sbm_cbc **out = m == 0 ? J : OJ;
        CHECK(host, sbm_cbc_from_triplets(host, out, ne, npose, d, d, 2 * ne, br, bc, v));
    }
    free(v);
    free(bc);
    free(br);
    free(to);
    free(from);
    return 0;
}

static int select_case(const char *sel, const char *name, const char *family)
{
    return strcmp(sel, "all") == 0 || strcmp(sel, name) == 0 || strcmp(sel, family) == 0;
}

static int build_cases(sbm_ctx *host, int large, const char *sel, const char *datadir,
                       bench_case *cs, int max)
{
    int n = 0;
    const uint64_t seed = 20240611u;
    for (int b = 1; b <= 8 && n < max; b++) {
        bench_case c = {{0}, "poisson2d", SBM_OP_N, SBM_OP_N, 0, NULL, NULL};
        snprintf(c.name, sizeof c.name, "poisson2d-b%d", b);
        if (!select_case(sel, c.name, c.family)) continue;
        CHECK(host, gen_poisson2d(host, large ? 300 : 60, b, seed, &c.A));
        CHECK(host, sbm_cbc_copy(host, c.A, &c.B));
        cs[n++] = c;
    }
    for (int b = 1; b <= 8 && n < max; b++) {
        bench_case c = {{0}, "poisson3d", SBM_OP_N, SBM_OP_N, 0, NULL, NULL};
        snprintf(c.name, sizeof c.name, "poisson3d-b%d", b);
        if (!select_case(sel, c.name, c.family)) continue;
        CHECK(host, gen_poisson3d(host, large ? 40 : 12, b, seed, &c.A));
        CHECK(host, sbm_cbc_copy(host, c.A, &c.B));
        cs[n++] = c;
    }
    const struct {
        const char *name;
        int p;
        int64_t cams, pts;
        int obs;
    } ba[3] = {{"ba-9x3", 9, 1000, 100000, 6}, {"ba-6x3", 6, 1000, 100000, 6},
               {"ba-9x3-5000", 9, 5000, 400000, 8}};
    for (int t = 0; t < 3 && n < max; t++) {
        bench_case c = {{0}, "ba", SBM_OP_N, SBM_OP_T, SBM_GEMM_UPPER, NULL, NULL};
        snprintf(c.name, sizeof c.name, "%s", ba[t].name);
        if (!select_case(sel, c.name, c.family)) continue;
        const int64_t cams = large ? ba[t].cams : ba[t].cams / 10, pts = large ? ba[t].pts : ba[t].pts / 10;
        /* A = W V^-1 (W's pattern, other values), B = W */
        CHECK(host, gen_ba_w(host, cams, pts, ba[t].obs, ba[t].p, seed, seed + 1, &c.A));
        CHECK(host, gen_ba_w(host, cams, pts, ba[t].obs, ba[t].p, seed, seed + 2, &c.B));
        cs[n++] = c;
    }
    const char *graphs[] = {"intel", "manhattan", "sphere2500", "parking-garage"};
    for (int t = 0; t < 4 && n < max; t++) {
        bench_case c = {{0}, "g2o", SBM_OP_T, SBM_OP_N, SBM_GEMM_UPPER, NULL, NULL};
        snprintf(c.name, sizeof c.name, "g2o-%s", graphs[t]);
        if (!select_case(sel, c.name, c.family)) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/g2o/%s.g2o", datadir, graphs[t]);
        /* C = (Omega J)^T J, upper: A = Omega J with op T, B = J */
        if (make_g2o(host, path, &c.B, &c.A) != 0) {
            fprintf(stderr, "skipping %s: cannot read %s\n", c.name, path);
            continue;
        }
        cs[n++] = c;
    }
    return n;
}

/* ---------------------------------------------------------------------------------------- */
/* SpGEMM runs                                                                              */
/* ---------------------------------------------------------------------------------------- */

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

/* ctx's tuning (fields not named in the caller's compound literal: the library's choice). */
static void tune(sbm_ctx *ctx, sbm_tuning t)
{
    CHECK(ctx, sbm_ctx_set_tuning(ctx, &t));
}

/* New device objects with bc's patterns (new pattern ids: nothing about them is cached). */
static void fresh_operands(sbm_ctx *ctx, const bench_case *bc, sbm_cbc **A, sbm_cbc **B)
{
    sbm_cbc_info a = sbm_cbc_get_info(bc->A), b = sbm_cbc_get_info(bc->B);
    CHECK(ctx, sbm_cbc_create(ctx, A, a.nbr, a.nbc, a.r, a.c, a.colptr, a.rowind, a.values));
    CHECK(ctx, sbm_cbc_create(ctx, B, b.nbr, b.nbc, b.r, b.c, b.colptr, b.rowind, b.values));
}

/* Plan times (host wall clock; the plan ends with a stream synchronisation) with one sort
 * variant in a fresh context, after an untimed first plan that grows the workspace pool and
 * loads the modules: with operands seen for the first time (fresh = 1: new objects every rep,
 * so the pattern fingerprints the plan records are computed every time), or the same operands
 * planned again (fingerprints cached by the context). On failure, the note says why. */
static bench_stat time_plans(const bench_case *bc, unsigned flags, const char *sort, int fresh,
                             int reps, char *note, size_t nsz)
{
    sbm_ctx *ctx = NULL;
    sbm_cbc *A = NULL, *B = NULL, *C = NULL;
    sbm_gemm_plan *p = NULL;
    double *t = calloc((size_t)reps + 1, sizeof *t);
    bench_stat res = bench_stat_none();
    CHECK(NULL, sbm_ctx_create(&ctx, SBM_BACKEND_CUDA, 0));
    tune(ctx, (sbm_tuning){.gemm_sort = !sort                       ? SBM_TUNE_GEMM_SORT_AUTO
                                        : strcmp(sort, "radix") == 0 ? SBM_TUNE_GEMM_SORT_RADIX
                                                                     : SBM_TUNE_GEMM_SORT_SEGMENTED});
    CHECK(ctx, sbm_cbc_copy(ctx, bc->A, &A));
    CHECK(ctx, sbm_cbc_copy(ctx, bc->B, &B));
    for (int rep = 0; rep <= reps; rep++) {
        if (fresh) {
            sbm_cbc_destroy(A);
            sbm_cbc_destroy(B);
            fresh_operands(ctx, bc, &A, &B);
        }
        CHECK(ctx, sbm_ctx_synchronize(ctx));
        double t0 = wall_ms();
        sbm_status st = sbm_cbc_gemm_plan(ctx, bc->op_a, A, bc->op_b, B, NULL, flags, &p, &C);
        double t1 = wall_ms();
        if (st != SBM_SUCCESS) {
            snprintf(note, nsz, "plan (%s sort%s): %s: %s", sort ? sort : "default", flags ? "" : ", full",
                     sbm_status_name(st), sbm_ctx_last_error(ctx));
            goto out;
        }
        if (rep > 0) t[rep - 1] = t1 - t0;
        sbm_gemm_plan_destroy(p);
        sbm_cbc_destroy(C);
        p = NULL;
        C = NULL;
    }
    res = bench_stat_of(t, reps);
out:
    sbm_cbc_destroy(B);
    sbm_cbc_destroy(A);
    sbm_ctx_destroy(ctx);
    free(t);
    return res;
}

/* Execute times (CUDA events; one untimed warm-up) of a plan made with the numeric kernel
 * `numeric` forced (sbm_tune_gemm_numeric; src/cuda/cuda_gemm_numeric.cuh; SBM_TUNE_GEMM_AUTO:
 * the default) and product flags. keep: a host copy of C after the last execute (may be NULL). */
static bench_stat time_exec_variant(sbm_ctx *ctx, sbm_ctx *host, const bench_case *bc,
                                    const sbm_cbc *A, const sbm_cbc *B, sbm_tune_gemm_numeric numeric,
                                    unsigned flags, int reps, sbm_cbc **keep)
{
    sbm_gemm_plan *p = NULL;
    sbm_cbc *C = NULL;
    double *t = calloc((size_t)reps + 1, sizeof *t);
    bench_stat res;
    tune(ctx, (sbm_tuning){.gemm_numeric = numeric});
    CHECK(ctx, sbm_cbc_gemm_plan(ctx, bc->op_a, A, bc->op_b, B, NULL, flags, &p, &C));
    CHECK(ctx, sbm_ctx_set_tuning(ctx, NULL));
    cudaEvent_t e0, e1;
    CHECK_CU(cudaEventCreate(&e0));
    CHECK_CU(cudaEventCreate(&e1));
    for (int rep = 0; rep <= reps; rep++) {
        CHECK_CU(cudaEventRecord(e0, 0));
        CHECK(ctx, sbm_cbc_gemm_execute(ctx, p, 1.0, A, B, NULL, C));
        CHECK_CU(cudaEventRecord(e1, 0));
        CHECK_CU(cudaEventSynchronize(e1));
        float ms = 0.0f;
        CHECK_CU(cudaEventElapsedTime(&ms, e0, e1));
        if (rep > 0) t[rep - 1] = ms;
    }
    CHECK_CU(cudaEventDestroy(e0));
    CHECK_CU(cudaEventDestroy(e1));
    res = bench_stat_of(t, reps);
    if (keep) CHECK(host, sbm_cbc_copy(host, C, keep));
    sbm_gemm_plan_destroy(p);
    sbm_cbc_destroy(C);
    free(t);
    return res;
}

static void run_sbm_gpu(sbm_ctx *host, const bench_case *bc, int reps, gemm_row *row)
{
    sbm_ctx *ctx = NULL;
    counting cnt = {0};
    sbm_cbc *A = NULL, *B = NULL, *C = NULL;
    sbm_gemm_plan *p = NULL;
    row->plan = time_plans(bc, bc->flags, NULL, 0, reps, row->note, sizeof row->note);
    if (row->plan.med < 0) goto out;
    row->plan_seg = time_plans(bc, bc->flags, "segmented", 0, reps, row->note, sizeof row->note);
    row->plan_radix = time_plans(bc, bc->flags, "radix", 0, reps, row->note, sizeof row->note);
    row->plan_fresh = time_plans(bc, bc->flags, NULL, 1, reps, row->note, sizeof row->note);
    if (bc->flags & SBM_GEMM_UPPER)
        row->plan_full = time_plans(bc, bc->flags & ~(unsigned)SBM_GEMM_UPPER, NULL, 0, reps, row->note,
                                    sizeof row->note);
    /* the peak memory of plan + execute, in a fresh context whose every device allocation
     * (workspace pool, plan, C) goes through the counting hook */
    CHECK(NULL, sbm_ctx_create(&ctx, SBM_BACKEND_CUDA, 0));
    CHECK(ctx, sbm_cbc_copy(ctx, bc->A, &A));
    CHECK(ctx, sbm_cbc_copy(ctx, bc->B, &B));
    sbm_allocator hook = {count_alloc, count_free, &cnt};
    CHECK(ctx, sbm_ctx_set_allocator(ctx, &hook));
    CHECK(ctx, sbm_cbc_gemm_plan(ctx, bc->op_a, A, bc->op_b, B, NULL, bc->flags, &p, &C));
    CHECK(ctx, sbm_cbc_gemm_execute(ctx, p, 1.0, A, B, NULL, C));
    CHECK(ctx, sbm_ctx_synchronize(ctx));
    {
        sbm_gemm_plan_info info = sbm_gemm_plan_get_info(p);
        sbm_cbc_info ci = sbm_cbc_get_info(C);
        row->products = info.products;
        row->nnzb_c = info.nnzb_c;
        row->slices = info.slices;
        row->fast = info.fast_path;
        row->r = ci.r;
        row->c = ci.c;
        row->k = bc->op_a == SBM_OP_N ? sbm_cbc_get_info(A).c : sbm_cbc_get_info(A).r;
        row->peak_mb = (double)cnt.peak / (1024.0 * 1024.0);
    }
    sbm_gemm_plan_destroy(p);
    sbm_cbc_destroy(C);
    p = NULL;
    C = NULL;
    /* the default kernel (its C kept for the checks), then each numeric kernel forced */
    row->exec = time_exec_variant(ctx, host, bc, A, B, SBM_TUNE_GEMM_AUTO, bc->flags, reps, &row->c_gpu);
    row->gflops = 2.0 * row->r * row->k * row->c * (double)row->products / (row->exec.med * 1e6);
    if (bc->flags & SBM_GEMM_UPPER) {
        /* the full product: ~1.7x the work of the upper one; kept for the check against
         * cuSPARSE where its C is small enough to download */
        const int keep = 2.0 * (double)row->nnzb_c * row->r * row->c <= (double)KEEP_C_MAX;
        row->exec_full = time_exec_variant(ctx, host, bc, A, B, SBM_TUNE_GEMM_AUTO, bc->flags & ~(unsigned)SBM_GEMM_UPPER,
                                           reps, keep ? &row->c_gpu_full : NULL);
    }
    row->exec_team = time_exec_variant(ctx, host, bc, A, B, SBM_TUNE_GEMM_TEAM, bc->flags, reps, NULL);
    row->exec_dmma = bench_stat_none();
    row->exec_stage = row->exec_sdmma = row->exec_stage_np = row->exec_sdmma_np = row->exec_dmma;
    if (row->fast) {
        row->exec_dmma = time_exec_variant(ctx, host, bc, A, B, SBM_TUNE_GEMM_DMMA, bc->flags, reps, NULL);
        row->exec_stage = time_exec_variant(ctx, host, bc, A, B, SBM_TUNE_GEMM_STAGE, bc->flags, reps, NULL);
        row->exec_sdmma = time_exec_variant(ctx, host, bc, A, B, SBM_TUNE_GEMM_SDMMA, bc->flags, reps, NULL);
        row->exec_stage_np = time_exec_variant(ctx, host, bc, A, B, SBM_TUNE_GEMM_STAGE_ONE_TILE, bc->flags, reps, NULL);
        row->exec_sdmma_np = time_exec_variant(ctx, host, bc, A, B, SBM_TUNE_GEMM_SDMMA_ONE_TILE, bc->flags, reps, NULL);
    }
out:
    sbm_gemm_plan_destroy(p);
    sbm_cbc_destroy(C);
    sbm_cbc_destroy(B);
    sbm_cbc_destroy(A);
    sbm_ctx_destroy(ctx);
    free(cnt.ptrs);
    free(cnt.sizes);
}

/* A CPU call slower than this (its warm-up) is timed once more only. */
#define CPU_SLOW_MS 1000.0

/* The CPU backend (single-threaded): one untimed plan + execute, then cpu_reps plans and
 * cpu_reps executes timed (one of each when the warm-up took over CPU_SLOW_MS). */
static void run_cpu(sbm_ctx *host, const bench_case *bc, int cpu_reps, gemm_row *row)
{
    sbm_gemm_plan *p = NULL;
    sbm_cbc *C = NULL;
    double *tp = calloc((size_t)cpu_reps + 1, sizeof *tp), *te = calloc((size_t)cpu_reps + 1, sizeof *te);
    double t0 = wall_ms();
    sbm_status st = sbm_cbc_gemm_plan(host, bc->op_a, bc->A, bc->op_b, bc->B, NULL, bc->flags, &p, &C);
    if (st == SBM_SUCCESS) st = sbm_cbc_gemm_execute(host, p, 1.0, bc->A, bc->B, NULL, C);
    const int n = wall_ms() - t0 > CPU_SLOW_MS ? 1 : cpu_reps;
    for (int rep = 0; rep < n && st == SBM_SUCCESS; rep++) {
        sbm_gemm_plan_destroy(p);
        sbm_cbc_destroy(C);
        p = NULL;
        C = NULL;
        t0 = wall_ms();
        st = sbm_cbc_gemm_plan(host, bc->op_a, bc->A, bc->op_b, bc->B, NULL, bc->flags, &p, &C);
        tp[rep] = wall_ms() - t0;
    }
    for (int rep = 0; rep < n && st == SBM_SUCCESS; rep++) {
        t0 = wall_ms();
        st = sbm_cbc_gemm_execute(host, p, 1.0, bc->A, bc->B, NULL, C);
        te[rep] = wall_ms() - t0;
    }
    if (st == SBM_SUCCESS) {
        row->cpu_ok = 1;
        row->cpu_plan = bench_stat_of(tp, n);
        row->cpu_exec = bench_stat_of(te, n);
        row->c_cpu = C;
        C = NULL;
    } else {
        snprintf(row->note, sizeof row->note, "CPU backend: %s: %s", sbm_status_name(st), sbm_ctx_last_error(host));
    }
    sbm_gemm_plan_destroy(p);
    sbm_cbc_destroy(C);
    free(tp);
    free(te);
}

/* cuSPARSE on the scalar CSR of op(A) and op(B) (transposes materialised on the device); its C
 * kept on the host when small enough, for the check. */
static void run_cusparse(const bench_case *bc, int reps, gemm_row *row)
{
    sbm_ctx *ctx = NULL;
    CHECK(NULL, sbm_ctx_create(&ctx, SBM_BACKEND_CUDA, 0));
    sbm_cbc *A = NULL, *B = NULL, *T = NULL;
    sbm_csr *SA = NULL, *SB = NULL;
    CHECK(ctx, sbm_cbc_copy(ctx, bc->A, &A));
    CHECK(ctx, sbm_cbc_copy(ctx, bc->B, &B));
    if (bc->op_a == SBM_OP_T) {
        CHECK(ctx, sbm_cbc_transpose(ctx, A, &T));
        sbm_cbc_destroy(A);
        A = T;
    }
    if (bc->op_b == SBM_OP_T) {
        CHECK(ctx, sbm_cbc_transpose(ctx, B, &T));
        sbm_cbc_destroy(B);
        B = T;
    }
    CHECK(ctx, sbm_cbc_to_csr(ctx, A, &SA));
    CHECK(ctx, sbm_cbc_to_csr(ctx, B, &SB));
    sbm_cbc_destroy(A);
    sbm_cbc_destroy(B);
    CHECK(ctx, sbm_ctx_synchronize(ctx));
    peer_cusparse_spgemm(SA, SB, reps, 1, KEEP_C_MAX, &row->cus);
    sbm_csr_destroy(SA);
    sbm_csr_destroy(SB);
    sbm_ctx_destroy(ctx);
}

/* max relative difference per entry of two host CBC matrices of one pattern; -2 when the
 * patterns differ (a failed check as well). */
static double cbc_diff(const sbm_cbc *G, const sbm_cbc *R)
{
    sbm_cbc_info g = sbm_cbc_get_info(G), r = sbm_cbc_get_info(R);
    if (g.nbr != r.nbr || g.nbc != r.nbc || g.r != r.r || g.c != r.c || g.nnzb != r.nnzb ||
        memcmp(g.colptr, r.colptr, (size_t)(g.nbc + 1) * sizeof *g.colptr) != 0 ||
        (g.nnzb && memcmp(g.rowind, r.rowind, (size_t)g.nnzb * sizeof *g.rowind) != 0))
        return -2.0;
    return bench_max_rel_diff(g.values, r.values, (size_t)(g.nnzb * g.r * g.c));
}

/* max relative difference per entry of sbm's C (host CBC) against cuSPARSE's (host CSR). */
static double cbc_vs_cusparse(sbm_ctx *host, const sbm_cbc *G, const peer_spgemm_result *ref)
{
    sbm_csr *S = NULL;
    double d = -1.0;
    if (!ref->c_rowptr || sbm_cbc_to_csr(host, G, &S) != SBM_SUCCESS) return -1.0;
    sbm_csr_info s = sbm_csr_get_info(S);
    double *work = calloc((size_t)s.n + 1, sizeof *work);
    if (work)
        d = bench_csr_max_rel_diff(s.m, s.rowptr, s.colind, s.values, ref->c_rowptr, ref->c_colind,
                                   ref->c_values, NULL, NULL, work);
    free(work);
    sbm_csr_destroy(S);
    return d;
}

/* Elementwise checks of a case: sbm GPU against the CPU backend (same product), and the full
 * product against cuSPARSE's. Fills diff_cpu, diff_cus and check; @return 1 if one failed. */
static int gemm_checks(sbm_ctx *host, const bench_case *bc, gemm_row *row)
{
    const sbm_cbc *full = bc->flags & SBM_GEMM_UPPER ? row->c_gpu_full : row->c_gpu;
    char a[64] = "vs CPU: not run", b[96] = "vs cuSPARSE: not compared";
    int failed = 0;
    row->diff_cpu = row->diff_cus = -1.0;
    if (row->c_gpu && row->c_cpu) {
        row->diff_cpu = cbc_diff(row->c_gpu, row->c_cpu);
        if (row->diff_cpu == -2.0) snprintf(a, sizeof a, "vs CPU: PATTERN DIFFERS");
        else snprintf(a, sizeof a, "vs CPU %.1e", row->diff_cpu);
        failed |= row->diff_cpu == -2.0 || row->diff_cpu > BENCH_CHECK_TOL;
    }
    if (full && row->cus.c_rowptr) {
        row->diff_cus = cbc_vs_cusparse(host, full, &row->cus);
        snprintf(b, sizeof b, "%s vs cuSPARSE %.1e", bc->flags & SBM_GEMM_UPPER ? "full product" : "C",
                 row->diff_cus);
        failed |= row->diff_cus > BENCH_CHECK_TOL;
    } else if (row->cus.ok) {
        snprintf(b, sizeof b, "vs cuSPARSE: not compared (C over %lld entries)", KEEP_C_MAX);
    }
    snprintf(row->check, sizeof row->check, "%s; %s%s", a, b, failed ? "; CHECK FAILED" : "");
    return failed;
}

static void gemm_row_free(gemm_row *row)
{
    sbm_cbc_destroy(row->c_gpu);
    sbm_cbc_destroy(row->c_gpu_full);
    sbm_cbc_destroy(row->c_cpu);
    peer_spgemm_result_free(&row->cus);
}

/* ---------------------------------------------------------------------------------------- */
/* SpMV                                                                                     */
/* ---------------------------------------------------------------------------------------- */

static double copy_bandwidth_gbs(void)
{
    const size_t bytes = (size_t)1 << 30;
    void *a = NULL, *b = NULL;
    if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) return -1.0;
    cudaMemset(a, 1, bytes);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    double t[11];
    for (int rep = 0; rep <= 10; rep++) {
        cudaEventRecord(e0, 0);
        cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0);
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        float ms = 0.0f;
        cudaEventElapsedTime(&ms, e0, e1);
        if (rep > 0) t[rep - 1] = ms;
    }
    double ms = bench_stat_of(t, 10).med;
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    return 2.0 * (double)bytes / (ms * 1e6);
}

static void run_spmv(sbm_ctx *host, int large, int reps, FILE *csv, bench_csv_row *cr, double copy_gbs)
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
        /* ms[op][0]: the default kernel; ms[op][v]: version v forced (src/cuda/cuda_spmv.cu) */
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

/* ---------------------------------------------------------------------------------------- */
/* Scalar CSR: SpMV, SpMM, SpGEMM against cuSPARSE                                          */
/* ---------------------------------------------------------------------------------------- */

typedef enum csr_gen { GEN_POISSON2D, GEN_POISSON3D, GEN_BA_W, GEN_BA_WT, GEN_BA_SCHUR, GEN_RMAT, GEN_MTX } csr_gen;

typedef struct csr_mat {
    char name[64];
    char family[24];     /* csr-poisson2d, csr-poisson3d, csr-ba, csr-rmat, csr-mtx */
    csr_gen gen;
    int64_t p1, p2, p3;  /* grid side | cameras, points, observations | scale, edge factor */
    char path[1024];     /* GEN_MTX */
    const char *no_gemm; /* why SpGEMM is not run on this matrix (NULL: it is) */
    sbm_csr *H;          /* host (CPU context) matrix */
    int64_t maxrow;      /* longest row */
    uint64_t print;      /* fingerprint of the matrix up to the order of its entries */
    char dup_of[64];     /* an earlier matrix with the same fingerprint: left out of geomeans */
} csr_mat;

typedef struct csr_opts {
    int large;
    int reps;
    int do_cus;
    int spmv, spmm, gemm; /* operations run */
    double copy_gbs;
    FILE *csv;
} csr_opts;

/* Geometric mean accumulator (ratios and percentages). */
typedef struct gmean {
    double logsum;
    int n;
    double min;
} gmean;

static void gm_add(gmean *g, double v)
{
    if (!(v > 0.0) || !isfinite(v)) return;
    if (g->n == 0 || v < g->min) g->min = v;
    g->logsum += log(v);
    g->n++;
}

static double gm_val(const gmean *g) { return g->n ? exp(g->logsum / g->n) : 0.0; }

static const char *gm_str(char *buf, size_t n, const gmean *g, const char *fmt)
{
    if (g->n == 0) snprintf(buf, n, "n/a");
    else snprintf(buf, n, fmt, gm_val(g));
    return buf;
}

static int select_csr(const char *sel, const csr_mat *c)
{
    return strcmp(sel, "all") == 0 || strcmp(sel, "csr") == 0 || strcmp(sel, c->family) == 0 ||
           strcmp(sel, c->name) == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The matrix list (patterns and sizes in the file header). Returns how many, all selected. */
static int csr_list(int large, const char *sel, const char *datadir, csr_mat *ms, int max)
{
    int n = 0;
    const int64_t g2 = large ? 1500 : 300, g3 = large ? 114 : 30;
    const int64_t cams = large ? 1000 : 100, pts = large ? 100000 : 10000;
    const int64_t scams = large ? 500 : 100, spts = large ? 20000 : 4000;
    const struct { csr_gen gen; const char *fam; int64_t p1, p2, p3; const char *no_gemm; } gen[] = {
        {GEN_POISSON2D, "csr-poisson2d", g2, 0, 0, NULL},
        {GEN_POISSON3D, "csr-poisson3d", g3, 0, 0, NULL},
        {GEN_BA_W, "csr-ba", cams, pts, 6, NULL},
        {GEN_BA_WT, "csr-ba", cams, pts, 6, "its product W W^T is ba-w's"},
        {GEN_BA_SCHUR, "csr-ba", scams, spts, 4, NULL},
        {GEN_RMAT, "csr-rmat", large ? 21 : 16, 8, 0, NULL},
        {GEN_RMAT, "csr-rmat", large ? 20 : 15, 16, 0, NULL},
        {GEN_RMAT, "csr-rmat", large ? 17 : 13, 8, 0, NULL}, /* the R-MAT whose A*A fits */
    };
    for (size_t t = 0; t < sizeof gen / sizeof gen[0] && n < max; t++) {
        csr_mat c;
        memset(&c, 0, sizeof c);
        c.gen = gen[t].gen;
        c.p1 = gen[t].p1;
        c.p2 = gen[t].p2;
        c.p3 = gen[t].p3;
        c.no_gemm = gen[t].no_gemm;
        snprintf(c.family, sizeof c.family, "%s", gen[t].fam);
        switch (c.gen) {
        case GEN_POISSON2D: snprintf(c.name, sizeof c.name, "poisson2d-%lld", (long long)c.p1); break;
        case GEN_POISSON3D: snprintf(c.name, sizeof c.name, "poisson3d-%lld", (long long)c.p1); break;
        case GEN_BA_W: snprintf(c.name, sizeof c.name, "ba-w-9x3"); break;
        case GEN_BA_WT: snprintf(c.name, sizeof c.name, "ba-wt-9x3"); break;
        case GEN_BA_SCHUR: snprintf(c.name, sizeof c.name, "ba-schur-9x3"); break;
        case GEN_RMAT: snprintf(c.name, sizeof c.name, "rmat-%lld-%lld", (long long)c.p1, (long long)c.p2); break;
        default: break;
        }
        if (select_csr(sel, &c)) ms[n++] = c;
    }
    /* every Matrix Market file of the data set, in name order */
    char dir[512];
    snprintf(dir, sizeof dir, "%s/mtx", datadir);
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "sbm-bench-gpu: cannot open %s: no csr-mtx matrices\n", dir);
        return n;
    }
    char *names[256];
    int nn = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && nn < 256) {
        const size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".mtx") == 0) names[nn++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)nn, sizeof *names, cmp_str);
    for (int t = 0; t < nn; t++) {
        csr_mat c;
        memset(&c, 0, sizeof c);
        c.gen = GEN_MTX;
        snprintf(c.family, sizeof c.family, "csr-mtx");
        snprintf(c.name, sizeof c.name, "mtx-%.*s", (int)(strlen(names[t]) - 4), names[t]);
        snprintf(c.path, sizeof c.path, "%s/%s", dir, names[t]);
        if (n < max && select_csr(sel, &c)) ms[n++] = c;
        free(names[t]);
    }
    return n;
}

/* Build c->H on the host. BA matrices: W (cameras x points, 9x3 blocks) expanded to scalars,
 * its transpose, and the Schur-like camera matrix W W^T (full, not upper). */
static sbm_status csr_make(sbm_ctx *host, csr_mat *c)
{
    const uint64_t seed = 20240611u;
    sbm_cbc *B = NULL, *W = NULL;
    sbm_csr *T = NULL;
    sbm_gemm_plan *p = NULL;
    sbm_status st = SBM_SUCCESS;
    switch (c->gen) {
    case GEN_POISSON2D:
        st = gen_poisson2d(host, c->p1, 1, seed, &B);
        if (st == SBM_SUCCESS) st = sbm_cbc_to_csr(host, B, &c->H);
        break;
    case GEN_POISSON3D:
        st = gen_poisson3d(host, c->p1, 1, seed, &B);
        if (st == SBM_SUCCESS) st = sbm_cbc_to_csr(host, B, &c->H);
        break;
    case GEN_BA_W:
    case GEN_BA_WT:
        st = gen_ba_w(host, c->p1, c->p2, (int)c->p3, 9, seed, seed + 1, &W);
        if (st == SBM_SUCCESS) st = sbm_cbc_to_csr(host, W, c->gen == GEN_BA_W ? &c->H : &T);
        if (st == SBM_SUCCESS && c->gen == GEN_BA_WT) st = sbm_csr_transpose(host, T, &c->H);
        break;
    case GEN_BA_SCHUR:
        st = gen_ba_w(host, c->p1, c->p2, (int)c->p3, 9, seed, seed + 1, &W);
        if (st == SBM_SUCCESS) st = sbm_cbc_gemm_plan(host, SBM_OP_N, W, SBM_OP_T, W, NULL, 0, &p, &B);
        if (st == SBM_SUCCESS) st = sbm_cbc_gemm_execute(host, p, 1.0, W, W, NULL, B);
        if (st == SBM_SUCCESS) st = sbm_cbc_to_csr(host, B, &c->H);
        break;
    case GEN_RMAT:
        st = gen_rmat_csr(host, (int)c->p1, (int)c->p2, 0.57, 0.19, 0.19, seed, &c->H);
        break;
    case GEN_MTX: st = sbm_csr_read_mtx(host, c->path, &c->H); break;
    }
    sbm_gemm_plan_destroy(p);
    sbm_csr_destroy(T);
    sbm_cbc_destroy(W);
    sbm_cbc_destroy(B);
    if (st == SBM_SUCCESS) {
        sbm_csr_info h = sbm_csr_get_info(c->H);
        for (int64_t i = 0; i < h.m; i++)
            if (h.rowptr[i + 1] - h.rowptr[i] > c->maxrow) c->maxrow = h.rowptr[i + 1] - h.rowptr[i];
    }
    return st;
}

/* The inputs whose times are not dominated by launch latency, on which the targets are stated
 * beside the all-matrix geomeans: >= 1M nonzeros (SpMV, SpMM) or >= 1M products (SpGEMM);
 * 100k at --size small. */
static int is_sizable(const csr_mat *c, int large)
{
    return sbm_csr_get_info(c->H).nnz >= (large ? 1000000 : 100000);
}

static int is_sizable_gemm(double products, int large) { return products >= (large ? 1e6 : 1e5); }

/* --size of the run, for the CSV's sizable column. */
static int csr_large = 1;

/* CSV field: the text in double quotes (embedded quotes become single quotes). */
static void csv_text(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) fputc(*s == '"' ? '\'' : *s, f);
    fputc('"', f);
}

/* One CSR CSV row (columns in the file header; a negative number is written as empty). */
typedef struct csr_row {
    const char *op, *variant;
    int64_t ncols, products, nnz_c;
    int short_rows; /* -1: not applicable */
    int once;       /* timed once: the call is slower than CSR_SLOW_MS */
    double ms, min_ms, max_ms, setup_ms, rate, pct_copy, cus_ms, ratio, maxdiff;
    double bytes;   /* spmv: the bytes the format reads and writes (see format_bytes) */
    const char *rate_unit;
    const char *cus_best; /* the cuSPARSE algorithm cus_ms is from */
    char status[320];
} csr_row;

static void csv_num(FILE *f, double v, const char *fmt)
{
    fputc(',', f);
    if (v >= 0.0 && isfinite(v)) fprintf(f, fmt, v);
}

static void csr_csv(FILE *f, const csr_mat *c, const csr_row *r)
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

static csr_row row_init(const char *op, const char *variant)
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
static const char *fail_note(sbm_ctx *ctx, sbm_status st, int plan_refusal, char *status, size_t n)
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

static void *dev_alloc(size_t bytes)
{
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
        fprintf(stderr, "sbm-bench-gpu: cudaMalloc of %zu bytes failed\n", bytes);
        exit(2);
    }
    return p;
}

static double *dev_random(size_t count, uint64_t seed)
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

static double *host_copy(const double *d, size_t count)
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
static double max_rel_diff(const double *got, const double *ref, size_t count)
{
    return ref ? bench_max_rel_diff(got, ref, count) : -1.0;
}

#define CSR_CHECK_TOL BENCH_CHECK_TOL

/* A call slower than this is timed once (its warm-up) rather than reps times, so that a slow
 * variant cannot take the section's time budget. */
#define CSR_SLOW_MS 1000.0

/* Appends the check's verdict and the single-timing note to a successful row's status. */
/* Results of the CSR section that failed their check: the program's exit status says so. */
static int csr_check_failures = 0;

static void note_check(csr_row *r)
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
static int check_passed(const csr_row *r) { return r->maxdiff <= CSR_CHECK_TOL; }

/* Time reps calls of `call` (an sbm_status expression) with CUDA events on the stream, after a
 * warm-up call, into the row r (ms = median, min_ms, max_ms); st is its first failure; a
 * warm-up slower than CSR_SLOW_MS is the only measurement (r->once = 1). */
#define TIME_SBM(st, r, stream, reps, call)                                                   \
    do {                                                                                      \
        cudaEvent_t e0_, e1_;                                                                 \
        double *t_ = calloc((size_t)(reps) + 1, sizeof *t_);                                  \
        int n_ = (reps);                                                                      \
        CHECK_CU(cudaEventCreate(&e0_));                                                      \
        CHECK_CU(cudaEventCreate(&e1_));                                                      \
        (st) = SBM_SUCCESS;                                                                   \
        (r)->once = 0;                                                                        \
        for (int rep_ = 0; rep_ <= (reps) && (st) == SBM_SUCCESS; rep_++) {                   \
            CHECK_CU(cudaEventRecord(e0_, (stream)));                                         \
            (st) = (call);                                                                    \
            CHECK_CU(cudaEventRecord(e1_, (stream)));                                         \
            CHECK_CU(cudaEventSynchronize(e1_));                                              \
            float f_ = 0.0f;                                                                  \
            CHECK_CU(cudaEventElapsedTime(&f_, e0_, e1_));                                    \
            if (rep_ > 0) t_[rep_ - 1] = f_;                                                  \
            if (rep_ == 0 && f_ > CSR_SLOW_MS) {                                              \
                t_[0] = f_;                                                                   \
                n_ = 1;                                                                       \
                (r)->once = 1;                                                                \
                break;                                                                        \
            }                                                                                 \
        }                                                                                     \
        row_times((r), (st) == SBM_SUCCESS ? bench_stat_of(t_, n_) : bench_stat_none());      \
        CHECK_CU(cudaEventDestroy(e0_));                                                      \
        CHECK_CU(cudaEventDestroy(e1_));                                                      \
        free(t_);                                                                             \
    } while (0)

static void row_times(csr_row *r, bench_stat s)
{
    r->ms = s.med;
    r->min_ms = s.min;
    r->max_ms = s.max;
}

static sbm_csr *upload(sbm_ctx *ctx, const sbm_csr *H)
{
    sbm_csr *D = NULL;
    CHECK(ctx, sbm_csr_copy(ctx, H, &D));
    CHECK(ctx, sbm_ctx_synchronize(ctx));
    return D;
}

/* ---- SpMV ---- */

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
 * rules (src/cuda/cuda_csr_spmv.cu): ELL and DIA pad the rows to a multiple of 32 (their leading
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

/* The best of a peer's algorithms: the fastest that ran and passed the check. */
typedef struct peer_best {
    int ok;
    double ms;
    const char *name;
    char status[512];    /* the failures, for the table's notes */
} peer_best;

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
static peer_best cus_all(cudaStream_t stream, const csr_mat *c, const csr_opts *o, const sbm_csr *D, int64_t k,
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

static void csr_spmv(sbm_ctx *ctx, cudaStream_t stream, const csr_mat *ms, int n, const csr_opts *o)
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

/* ---- SpMM ---- */

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

static void csr_spmm(sbm_ctx *ctx, cudaStream_t stream, const csr_mat *ms, int n, const csr_opts *o)
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

/* ---- SpGEMM ---- */

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

static void csr_gemm_one(sbm_ctx *host, sbm_ctx *ctx, cudaStream_t stream, const csr_mat *c,
                         const csr_opts *o, gemm_summary *sum)
{
    sbm_csr_info h = sbm_csr_get_info(c->H);
    if (c->no_gemm) {
        csr_row r = row_init("gemm", "none");
        snprintf(r.status, sizeof r.status, "skipped: %s", c->no_gemm);
        printf("%-20s %s\n", c->name, r.status);
        csr_csv(o->csv, c, &r);
        return;
    }
    /* operands: A*A for square A; the cheaper of A^T*A and A*A^T otherwise */
    sbm_csr *T = NULL;
    const sbm_csr *L = c->H, *R = c->H;
    const char *form = "A*A";
    if (h.m != h.n) {
        CHECK(host, sbm_csr_transpose(host, c->H, &T));
        const double p_ata = gemm_products(T, c->H), p_aat = gemm_products(c->H, T);
        if (p_ata <= p_aat) {
            L = T;
            form = "At*A";
        } else {
            R = T;
            form = "A*At";
        }
    }
    const double products = gemm_products(L, R);
    const int64_t m = sbm_csr_get_info(L).m;
    const int short_rows = m > 0 && products / (double)m < 32.0;
    const double cap = o->large ? 1.0e9 : 1.0e8;
    csr_row base = row_init("gemm", "");
    base.products = (int64_t)products;
    base.short_rows = short_rows;
    printf("%-20s %-5s %11.0f %6.0f %5s", c->name, form, products, m ? products / (double)m : 0.0,
           short_rows ? "short" : "");
    if (products > cap) {
        char why[128];
        snprintf(why, sizeof why, "skipped: %.3g products > %.3g (time and memory)", products, cap);
        printf("  %s\n", why);
        csr_row r = base;
        r.variant = "none";
        snprintf(r.status, sizeof r.status, "%s", why);
        csr_csv(o->csv, c, &r);
        sbm_csr_destroy(T);
        return;
    }
    sbm_csr *DL = upload(ctx, L), *DR = R == L ? DL : upload(ctx, R);
    const double gflop = 2.0 * products / 1e9;
    char notes[1024] = "";
    /* cuSPARSE: full SpGEMM and the reuse compute; its C kept for the checks */
    peer_spgemm_result cus;
    memset(&cus, 0, sizeof cus);
    snprintf(cus.status, sizeof cus.status, "not run");
    snprintf(cus.reuse_status, sizeof cus.reuse_status, "not run");
    if (o->do_cus) peer_cusparse_spgemm(DL, DR, o->reps, 1, INT32_MAX, &cus);
    CHECK(ctx, sbm_ctx_synchronize(ctx));
    /* one row per cuSPARSE algorithm (all phases), the best one as cusparse-full, and the reuse */
    for (int a = 0; a < PEER_SPGEMM_ALGS; a++) {
        static char names[PEER_SPGEMM_ALGS][32];
        const peer_time *pt = &cus.alg[a];
        csr_row ca = base;
        snprintf(names[a], sizeof names[a], "cusparse-%s", peer_spgemm_alg_name(a));
        ca.variant = names[a];
        snprintf(ca.status, sizeof ca.status, "%s", pt->status);
        if (pt->ok) {
            ca.ms = pt->med;
            ca.min_ms = pt->min;
            ca.max_ms = pt->max;
            ca.rate = gflop / (pt->med * 1e-3);
            ca.rate_unit = "GFLOP/s";
            ca.nnz_c = cus.nnz_c;
        }
        if (o->do_cus) csr_csv(o->csv, c, &ca);
    }
    csr_row cf = base, cru = base;
    cf.variant = "cusparse-full";
    cru.variant = "cusparse-reuse";
    snprintf(cf.status, sizeof cf.status, "%s", cus.status);
    snprintf(cru.status, sizeof cru.status, "%s", cus.reuse_status);
    if (cus.ok) {
        cf.ms = cf.cus_ms = cus.full_ms;
        cf.min_ms = cus.full_min_ms;
        cf.max_ms = cus.full_max_ms;
        cf.rate = gflop / (cus.full_ms * 1e-3);
        cf.ratio = 1.0;
        cf.nnz_c = cus.nnz_c;
        cf.rate_unit = "GFLOP/s";
        cf.cus_best = peer_spgemm_alg_name(cus.best);
    }
    if (o->do_cus && strcmp(cus.status, "ok (best default)") != 0 && strcmp(cus.status, "ok (best alg2)") != 0 &&
        strcmp(cus.status, "ok (best alg3)") != 0) {
        const size_t len = strlen(notes);
        snprintf(notes + len, sizeof notes - len, "\n    cuSPARSE: %s", cus.status);
    }
    if (cus.reuse_ok) {
        cru.ms = cru.cus_ms = cus.reuse_exec_ms;
        cru.min_ms = cus.reuse_min_ms;
        cru.max_ms = cus.reuse_max_ms;
        cru.setup_ms = cus.reuse_setup_ms;
        cru.rate = gflop / (cus.reuse_exec_ms * 1e-3);
        cru.ratio = 1.0;
        cru.nnz_c = cus.nnz_c;
        cru.rate_unit = "GFLOP/s";
    } else if (cus.ok) {
        const size_t len = strlen(notes);
        snprintf(notes + len, sizeof notes - len, "\n    cuSPARSE reuse: %s", cus.reuse_status);
    }
    csr_csv(o->csv, c, &cf);
    csr_csv(o->csv, c, &cru);
    /* sbm one-shot (plan + execute + plan destroy in sbm_csr_gemm); C destroyed outside the timing */
    csr_row so = base, se = base;
    so.variant = "oneshot";
    se.variant = "exec";
    char cell_o[24], cell_e[24];
    {
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
            st = sbm_csr_gemm(ctx, DL, DR, &C);
            CHECK_CU(cudaEventRecord(e1, stream));
            CHECK_CU(cudaEventSynchronize(e1));
            float f = 0.0f;
            CHECK_CU(cudaEventElapsedTime(&f, e0, e1));
            if (rep > 0) t[rep - 1] = f;
            if (rep == 0 && f > CSR_SLOW_MS) { /* see TIME_SBM */
                t[0] = f;
                so.once = 1;
                break;
            }
        }
        if (st == SBM_SUCCESS) {
            row_times(&so, bench_stat_of(t, so.once ? 1 : o->reps));
            so.rate = gflop / (so.ms * 1e-3);
            so.rate_unit = "GFLOP/s";
            so.nnz_c = sbm_csr_get_info(C).nnz;
            sbm_csr *Ch = NULL;
            CHECK(host, sbm_csr_copy(host, C, &Ch));
            so.maxdiff = gemm_diff(Ch, &cus);
            sbm_csr_destroy(Ch);
            snprintf(so.status, sizeof so.status, "ok");
            if (cus.ok && so.nnz_c != cus.nnz_c) {
                const size_t len = strlen(so.status);
                snprintf(so.status + len, sizeof so.status - len, "; nnz(C) %lld, cuSPARSE %lld",
                         (long long)so.nnz_c, (long long)cus.nnz_c);
            }
            note_check(&so);
            so.cus_best = cus.ok ? peer_spgemm_alg_name(cus.best) : "";
            gemm_score(&so, cus.ok, cus.full_ms, short_rows, is_sizable_gemm(products, o->large), c->dup_of[0], &sum->full,
                       &sum->full_short, &sum->full_big, cell_o, sizeof cell_o);
        } else {
            snprintf(cell_o, sizeof cell_o, "%s", fail_note(ctx, st, 0, so.status, sizeof so.status));
        }
        if (strcmp(so.status, "ok") != 0 && strncmp(so.status, "n/a", 3) != 0) {
            const size_t len = strlen(notes);
            snprintf(notes + len, sizeof notes - len, "\n    sbm one-shot: %s", so.status);
        }
        sbm_csr_destroy(C);
        CHECK_CU(cudaEventDestroy(e0));
        CHECK_CU(cudaEventDestroy(e1));
        free(t);
    }
    /* sbm execute with a reused plan (the plan timed once, after the one-shot warmed up) */
    {
        sbm_csr_plan *plan = NULL;
        sbm_csr *C = NULL;
        CHECK(ctx, sbm_ctx_synchronize(ctx));
        const double t0 = wall_ms();
        sbm_status st = sbm_csr_gemm_plan(ctx, DL, DR, &plan, &C);
        if (st == SBM_SUCCESS) st = sbm_ctx_synchronize(ctx);
        se.setup_ms = wall_ms() - t0;
        if (st == SBM_SUCCESS)
            TIME_SBM(st, &se, stream, o->reps, sbm_csr_gemm_execute(ctx, plan, DL, DR, C));
        if (st == SBM_SUCCESS) {
            se.rate = gflop / (se.ms * 1e-3);
            se.rate_unit = "GFLOP/s";
            se.nnz_c = sbm_csr_get_info(C).nnz;
            sbm_csr *Ch = NULL;
            CHECK(host, sbm_csr_copy(host, C, &Ch));
            se.maxdiff = gemm_diff(Ch, &cus);
            sbm_csr_destroy(Ch);
            snprintf(se.status, sizeof se.status, "ok");
            note_check(&se);
            se.cus_best = "reuse";
            gemm_score(&se, cus.reuse_ok, cus.reuse_exec_ms, short_rows, is_sizable_gemm(products, o->large), c->dup_of[0],
                       &sum->exec, &sum->exec_short, &sum->exec_big, cell_e, sizeof cell_e);
        } else {
            se.setup_ms = -1.0;
            snprintf(cell_e, sizeof cell_e, "%s", fail_note(ctx, st, 0, se.status, sizeof se.status));
        }
        if (strcmp(se.status, "ok") != 0 && strncmp(se.status, "n/a", 3) != 0) {
            const size_t len = strlen(notes);
            snprintf(notes + len, sizeof notes - len, "\n    sbm execute: %s", se.status);
        }
        sbm_csr_destroy(C);
        sbm_csr_gemm_plan_destroy(plan);
    }
    csr_csv(o->csv, c, &so);
    csr_csv(o->csv, c, &se);
    char md[16] = "-", cf_cell[16] = "fail", cr_cell[16] = "fail", nnzc[24] = "-";
    const double md_v = fmax(so.maxdiff, se.maxdiff);
    if (md_v >= 0) snprintf(md, sizeof md, "%.1e", md_v);
    if (cus.ok) snprintf(cf_cell, sizeof cf_cell, "%.3f", cus.full_ms);
    if (cus.reuse_ok) snprintf(cr_cell, sizeof cr_cell, "%.3f", cus.reuse_exec_ms);
    if (!o->do_cus) {
        snprintf(cf_cell, sizeof cf_cell, "-");
        snprintf(cr_cell, sizeof cr_cell, "-");
    }
    if (cus.ok) snprintf(nnzc, sizeof nnzc, "%lld", (long long)cus.nnz_c);
    else if (so.nnz_c >= 0) snprintf(nnzc, sizeof nnzc, "%lld", (long long)so.nnz_c);
    printf(" %10s %10s %-7s %9.1f %10s %9.1f %15s %9.1f %15s %9.1f %8s%s%s%s%s\n", nnzc, cf_cell,
           cus.ok ? peer_spgemm_alg_name(cus.best) : "",
           cus.ok ? gflop / (cus.full_ms * 1e-3) : 0.0, cr_cell,
           cus.reuse_ok ? gflop / (cus.reuse_exec_ms * 1e-3) : 0.0, cell_o, so.rate > 0 ? so.rate : 0.0,
           cell_e, se.rate > 0 ? se.rate : 0.0, md, c->dup_of[0] ? "  (same matrix as " : "", c->dup_of,
           c->dup_of[0] ? ": not in geomeans)" : "", notes);
    fflush(stdout);
    peer_spgemm_result_free(&cus);
    if (DR != DL) sbm_csr_destroy(DR);
    sbm_csr_destroy(DL);
    sbm_csr_destroy(T);
}

static void csr_gemm(sbm_ctx *host, sbm_ctx *ctx, cudaStream_t stream, const csr_mat *ms, int n,
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

/* A fingerprint of a host CSR matrix that does not depend on the order its entries were read
 * in: a sum of per-entry hashes of (row, column, value bits), with the dimensions. Two files
 * with the same entries (west0067 and its jumbled copy) are one matrix for the geomeans. */
static uint64_t csr_fingerprint(const sbm_csr *H)
{
    sbm_csr_info h = sbm_csr_get_info(H);
    uint64_t sum = (uint64_t)h.m * 0x9E3779B97F4A7C15ull ^ (uint64_t)h.n * 0xC2B2AE3D27D4EB4Full ^ (uint64_t)h.nnz;
    for (int64_t i = 0; i < h.m; i++)
        for (int64_t t = h.rowptr[i]; t < h.rowptr[i + 1]; t++) {
            uint64_t v;
            memcpy(&v, &h.values[t], sizeof v);
            uint64_t z = v ^ ((uint64_t)i << 32 | (uint32_t)h.colind[t]) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            sum += z ^ (z >> 31);
        }
    return sum;
}

static void run_csr(sbm_ctx *host, const char *sel, const char *datadir, csr_opts *o)
{
    csr_mat *ms = calloc(128, sizeof *ms);
    const int n = csr_list(o->large, sel, datadir, ms, 128);
    csr_large = o->large;
    int ok = 0;
    if (n == 0) {
        free(ms);
        return;
    }
    printf("\nScalar CSR section (%s size): matrices\n", o->large ? "large" : "small");
    for (int t = 0; t < n; t++) {
        const double t0 = wall_ms();
        sbm_status st = csr_make(host, &ms[t]);
        if (st != SBM_SUCCESS) {
            printf("  %-20s cannot be made: %s: %s\n", ms[t].name, sbm_status_name(st), sbm_ctx_last_error(host));
            continue;
        }
        sbm_csr_info h = sbm_csr_get_info(ms[t].H);
        ms[t].print = csr_fingerprint(ms[t].H);
        for (int u = 0; u < ok; u++)
            if (ms[u].print == ms[t].print) snprintf(ms[t].dup_of, sizeof ms[t].dup_of, "%s", ms[u].name);
        printf("  %-20s %-14s %9lld x %-9lld nnz %10lld  max row %7lld  (%.1f s on the host)%s%s\n", ms[t].name,
               ms[t].family, (long long)h.m, (long long)h.n, (long long)h.nnz, (long long)ms[t].maxrow,
               (wall_ms() - t0) / 1e3, ms[t].dup_of[0] ? "  same matrix as " : "", ms[t].dup_of);
        ms[ok++] = ms[t];
    }
    fflush(stdout);
    if (o->copy_gbs <= 0) o->copy_gbs = copy_bandwidth_gbs();
    cudaStream_t stream = NULL;
    sbm_ctx *ctx = NULL;
    if (cudaStreamCreate(&stream) != cudaSuccess) {
        fprintf(stderr, "sbm-bench-gpu: cudaStreamCreate failed\n");
        exit(2);
    }
    CHECK(NULL, sbm_ctx_create(&ctx, SBM_BACKEND_CUDA, 0));
    CHECK(ctx, sbm_ctx_set_stream(ctx, stream));
    if (o->csv)
        fprintf(o->csv, "op,matrix,family,m,n,nnz,variant,ncols,products,nnz_c,short_rows,ms,min_ms,max_ms,"
                        "setup_ms,rate,rate_unit,pct_copy,cusparse_ms,ratio,max_rel_diff,bytes,cusparse_best,"
                        "dup_of,sizable,status\n");
    double t0 = wall_ms();
    if (o->spmv) {
        csr_spmv(ctx, stream, ms, ok, o);
        printf("(SpMV section %.1f s)\n", (wall_ms() - t0) / 1e3);
    }
    t0 = wall_ms();
    if (o->spmm) {
        csr_spmm(ctx, stream, ms, ok, o);
        printf("(SpMM section %.1f s)\n", (wall_ms() - t0) / 1e3);
    }
    t0 = wall_ms();
    if (o->gemm) {
        csr_gemm(host, ctx, stream, ms, ok, o);
        printf("(SpGEMM section %.1f s)\n", (wall_ms() - t0) / 1e3);
    }
    for (int t = 0; t < ok; t++) sbm_csr_destroy(ms[t].H);
    sbm_ctx_destroy(ctx);
    cudaStreamDestroy(stream);
    free(ms);
}

/* ---------------------------------------------------------------------------------------- */
/* Block CSV and report                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* Columns of the block CSV (--csv): one row per SpGEMM case (kind gemm) and per block SpMV size
 * (kind spmv). Every timed figure X has X_ms (median), X_min_ms and X_max_ms. */
static const char *const block_cols[] = {
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
static void report_gemm(const bench_case *bc, const gemm_row *row, bench_csv_row *cr, FILE *csv)
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
