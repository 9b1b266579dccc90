/* sbm-bench-gpu: the CUDA backend's block SpGEMM and block SpMV (issue 3), and scalar CSR SpMV,
 * SpMM and SpGEMM (issue 4), against peers measured in the same run.
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
 * Per case: sbm plan time (median; the default, each sort variant forced, and with operands new
 * to the context so that the plan's pattern fingerprints are computed), execute time (median,
 * CUDA events; the default numeric kernel and each of the two forced), GFLOP/s (2*r*k*c flops per block product), peak device memory of plan
 * + execute (an allocator hook counts every allocation of the context, workspace pool
 * included), slices; cuSPARSE cusparseSpGEMM on the same product expanded to scalar CSR (all
 * phases; and cusparseSpGEMMreuse_compute for the execute-only comparison; cuSPARSE has no
 * upper-triangle mode, so it computes the full product where sbm computes the upper one), with
 * its status when it fails; the sbm CPU backend (one plan, one execute; single-threaded).
 * Ratios: exec speedup = cuSPARSE reuse compute / sbm execute; full speedup = cuSPARSE all
 * phases / (sbm plan + execute).
 *
 * SpMV: y = A*x (op N and T) on the 2D Poisson matrices, effective bandwidth (matrix values and
 * indices, x, y once each) against a measured device-to-device copy, and cuSPARSE's BSR SpMV.
 *
 * Scalar CSR section (issue 4; --case csr runs only it, --case csr-FAMILY or a matrix name one
 * part of it, --no-csr skips it, --csr-ops spmv,spmm,gemm picks the operations). Matrices, built
 * on the host (--size large; small in brackets): poisson2d-1500 [300] (5-point, 11.2M nonzeros),
 * poisson3d-114 [30] (7-point, 10.3M), ba-w-9x3 (the BA camera-point block W, 9x3 blocks, 1000
 * [100] cameras, 100k [10k] points, 6 observations each, expanded to scalars: 9000 x 300000,
 * 16.2M), ba-wt-9x3 (its transpose), ba-schur-9x3 (the Schur-like camera matrix W W^T, full, of
 * 500 [100] cameras, 20k [4k] points, 4 observations: 4500 x 4500, 12.5M), rmat-21-8 and
 * rmat-20-16 [16-8, 15-16] (R-MAT scale-edge factor, a b c d = .57 .19 .19 .05, duplicates
 * removed: 16.4M and 16.1M nonzeros), rmat-17-8 [13-8] (an R-MAT whose A*A fits: 1M), and
 * mtx-NAME for every file in DATA/mtx. Families csr-poisson2d, csr-poisson3d, csr-ba, csr-rmat,
 * csr-mtx. Every sbm result is checked against cuSPARSE's: max |sbm - cuSPARSE| / max |cuSPARSE|
 * over the result; above 1e-9 the table shows "WRONG", the CSV status "CHECK FAILED", and the
 * timing counts in no geomean. An sbm call that returns SBM_ERR_NOT_SUPPORTED shows "n/a";
 * other failures "err" with the status below the row. Timings: CUDA events on the context's
 * stream (cuSPARSE bound to the same stream), one warm-up call, median of the reps; a call whose
 * warm-up takes over 1 s is timed by that call alone ("timed once" in the status).
 *  - SpMV y = A*x: sbm_csr_spmv ("auto") and sbm_spmv_plan_execute with a plan per format
 *    (plan-auto, csr-scalar, csr-vector, csr-merge, coo, ell, hyb, dia; a format refused by its
 *    padding limit shows "-") against cusparseSpMV (CSR, default algorithm, buffer allocated
 *    before timing); 4 x reps. GB/s from the minimum traffic 8(m+1) + 12 nnz + 8n + 8m bytes
 *    (int64 row pointers, int32 columns, values, x read once, y written once), as % of the
 *    measured copy bandwidth (the CSR minimum for every format, so DIA, which stores no
 *    indices, can exceed 100%; matrices that fit the 50 MB L2 cache too). Targets: >= 80% of copy on the regular (Poisson, BA) matrices of
 *    >= 10M nonzeros, >= 1.2x cuSPARSE on the R-MAT ones.
 *  - SpMM C = A*B, B and C row-major with 16 and 64 columns: sbm_csr_spmm (auto; rowsplit and
 *    merge forced through the context's tuning) against cusparseSpMM (CSR, default algorithm);
 *    GFLOP/s = 2 nnz cols / time. Target: geomean >= 1.2x cuSPARSE at 16 and at 64 columns.
 *  - SpGEMM C = A*A (A^T*A or A*A^T, whichever has fewer products, for rectangular A; skipped
 *    above 1e9 [1e8] intermediate products): sbm_csr_gemm (one-shot: plan + execute) and
 *    sbm_csr_gemm_execute with a reused plan, against cusparseSpGEMM (all phases, buffers and C
 *    allocated) and cusparseSpGEMMreuse_compute. GFLOP/s = 2 products / time. "short": mean
 *    products per row of C < 32. Targets: geomean >= 1.0x cuSPARSE, >= 1.5x on short rows.
 *
 * CSR CSV (--csr-csv FILE; the block CSV keeps its columns), one row per matrix, operation and
 * variant: op (spmv|spmm|gemm), matrix, family, m, n, nnz, variant (spmv: cusparse, auto,
 * plan-FORMAT; spmm: cusparse, auto, rowsplit, merge; gemm: cusparse-full, cusparse-reuse,
 * oneshot, exec, or none when skipped), ncols (spmm), products, nnz_c, short_rows (gemm), ms
 * (median), setup_ms (spmv plan conversion; cuSPARSE's descriptors + buffer; gemm exec: the
 * sbm plan; cusparse-reuse: its symbolic phases), rate (GB/s for spmv, GFLOP/s otherwise),
 * rate_unit, pct_copy (spmv), cusparse_ms (the cuSPARSE counterpart: SpMV, SpMM of the same
 * width, full SpGEMM for oneshot, reuse compute for exec), ratio (cusparse_ms / ms; > 1: sbm
 * faster), max_rel_diff (against cuSPARSE), status ("ok", "n/a: ...", "refused: ...",
 * "error STATUS: ...", "skipped: ..."). Empty fields: not applicable or not measured. */
#define _POSIX_C_SOURCE 200809L

#include <cuda_runtime.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

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

static double cbc_sumsq(const sbm_cbc *C)
{
    sbm_ctx *h = NULL;
    sbm_cbc *H = NULL;
    double s = 0.0;
    if (sbm_ctx_create(&h, SBM_BACKEND_CPU, 0) != SBM_SUCCESS) return -1.0;
    if (sbm_cbc_copy(h, C, &H) == SBM_SUCCESS) {
        sbm_cbc_info i = sbm_cbc_get_info(H);
        for (int64_t t = 0; t < i.nnzb * i.r * i.c; t++) s += i.values[t] * i.values[t];
    }
    sbm_cbc_destroy(H);
    sbm_ctx_destroy(h);
    return s;
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
    double plan_ms, plan_seg_ms, plan_radix_ms, plan_fresh_ms, exec_ms, exec_team_ms, exec_dmma_ms, gflops, peak_mb;
    double exec_stage_ms, exec_sdmma_ms, exec_stage_np_ms, exec_sdmma_np_ms; /* staged kernels */
    double sumsq;
    peer_spgemm_result cus;
    int cpu_ok;
    double cpu_plan_ms, cpu_exec_ms, cpu_sumsq;
    char note[160];
} gemm_row;

/* ctx's tuning (fields not named in the caller's compound literal: the library's choice). */
static void tune(sbm_ctx *ctx, sbm_tuning t)
{
    CHECK(ctx, sbm_ctx_set_tuning(ctx, &t));
}

/* Median plan time of one sort variant in a fresh context (the first plan, which grows the
 * workspace pool and loads the modules, is the warm-up). On failure, the note says why. */
/* New device objects with bc's patterns (new pattern ids: nothing about them is cached). */
static void fresh_operands(sbm_ctx *ctx, const bench_case *bc, sbm_cbc **A, sbm_cbc **B)
{
    sbm_cbc_info a = sbm_cbc_get_info(bc->A), b = sbm_cbc_get_info(bc->B);
    CHECK(ctx, sbm_cbc_create(ctx, A, a.nbr, a.nbc, a.r, a.c, a.colptr, a.rowind, a.values));
    CHECK(ctx, sbm_cbc_create(ctx, B, b.nbr, b.nbc, b.r, b.c, b.colptr, b.rowind, b.values));
}

/* Median plan time with operands seen for the first time (fresh = 1: new objects every rep, so
 * the pattern fingerprints the plan records are computed every time), or the same operands
 * planned again (fingerprints cached by the context). */
static double time_plans(const bench_case *bc, const char *sort, int fresh, int reps, char *note,
                         size_t nsz)
{
    sbm_ctx *ctx = NULL;
    sbm_cbc *A = NULL, *B = NULL, *C = NULL;
    sbm_gemm_plan *p = NULL;
    double *t = calloc((size_t)reps + 1, sizeof *t), res = -1.0;
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
        sbm_status st = sbm_cbc_gemm_plan(ctx, bc->op_a, A, bc->op_b, B, NULL, bc->flags, &p, &C);
        double t1 = wall_ms();
        if (st != SBM_SUCCESS) {
            snprintf(note, nsz, "plan (%s sort): %s: %s", sort ? sort : "default", sbm_status_name(st),
                     sbm_ctx_last_error(ctx));
            goto out;
        }
        if (rep > 0) t[rep - 1] = t1 - t0;
        sbm_gemm_plan_destroy(p);
        sbm_cbc_destroy(C);
        p = NULL;
        C = NULL;
    }
    res = median(t, reps);
out:
    sbm_cbc_destroy(B);
    sbm_cbc_destroy(A);
    sbm_ctx_destroy(ctx);
    free(t);
    return res;
}

/* Median execute time of a plan made with the numeric kernel `numeric` forced (sbm.h,
 * sbm_tune_gemm_numeric; src/cuda/cuda_gemm.cu). */
static double time_exec_variant(sbm_ctx *ctx, const bench_case *bc, const sbm_cbc *A,
                                const sbm_cbc *B, sbm_tune_gemm_numeric numeric, int reps)
{
    sbm_gemm_plan *p = NULL;
    sbm_cbc *C = NULL;
    double *t = calloc((size_t)reps + 1, sizeof *t), res;
    tune(ctx, (sbm_tuning){.gemm_numeric = numeric});
    CHECK(ctx, sbm_cbc_gemm_plan(ctx, bc->op_a, A, bc->op_b, B, NULL, bc->flags, &p, &C));
    CHECK(ctx, sbm_ctx_set_tuning(ctx, NULL));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (int rep = 0; rep <= reps; rep++) {
        cudaEventRecord(e0, 0);
        CHECK(ctx, sbm_cbc_gemm_execute(ctx, p, 1.0, A, B, NULL, C));
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        float ms = 0.0f;
        cudaEventElapsedTime(&ms, e0, e1);
        if (rep > 0) t[rep - 1] = ms;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    res = median(t, reps);
    sbm_gemm_plan_destroy(p);
    sbm_cbc_destroy(C);
    free(t);
    return res;
}

static void run_sbm_gpu(const bench_case *bc, int reps, gemm_row *row)
{
    sbm_ctx *ctx = NULL;
    counting cnt = {0};
    sbm_cbc *A = NULL, *B = NULL, *C = NULL;
    sbm_gemm_plan *p = NULL;
    double *t = calloc((size_t)reps + 1, sizeof *t);
    row->plan_ms = time_plans(bc, NULL, 0, reps, row->note, sizeof row->note);
    if (row->plan_ms < 0) goto out;
    row->plan_seg_ms = time_plans(bc, "segmented", 0, reps, row->note, sizeof row->note);
    row->plan_radix_ms = time_plans(bc, "radix", 0, reps, row->note, sizeof row->note);
    row->plan_fresh_ms = time_plans(bc, NULL, 1, reps, row->note, sizeof row->note);
    /* execute, and the peak memory of plan + execute, in a fresh context whose every device
     * allocation (workspace pool, plan, C) goes through the counting hook */
    CHECK(NULL, sbm_ctx_create(&ctx, SBM_BACKEND_CUDA, 0));
    CHECK(ctx, sbm_cbc_copy(ctx, bc->A, &A));
    CHECK(ctx, sbm_cbc_copy(ctx, bc->B, &B));
    sbm_allocator hook = {count_alloc, count_free, &cnt};
    CHECK(ctx, sbm_ctx_set_allocator(ctx, &hook));
    CHECK(ctx, sbm_cbc_gemm_plan(ctx, bc->op_a, A, bc->op_b, B, NULL, bc->flags, &p, &C));
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
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        for (int rep = 0; rep <= reps; rep++) {
            cudaEventRecord(e0, 0);
            CHECK(ctx, sbm_cbc_gemm_execute(ctx, p, 1.0, A, B, NULL, C));
            cudaEventRecord(e1, 0);
            cudaEventSynchronize(e1);
            float ms = 0.0f;
            cudaEventElapsedTime(&ms, e0, e1);
            if (rep > 0) t[rep - 1] = ms;
        }
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        row->exec_ms = median(t, reps);
        row->gflops = 2.0 * row->r * row->k * row->c * (double)row->products / (row->exec_ms * 1e6);
        row->peak_mb = (double)cnt.peak / (1024.0 * 1024.0);
        row->sumsq = cbc_sumsq(C);
        /* both numeric kernels, each in its own plan (the default one is timed above) */
        sbm_gemm_plan_destroy(p);
        sbm_cbc_destroy(C);
        p = NULL;
        C = NULL;
        row->exec_team_ms = time_exec_variant(ctx, bc, A, B, SBM_TUNE_GEMM_TEAM, reps);
        row->exec_dmma_ms = row->fast ? time_exec_variant(ctx, bc, A, B, SBM_TUNE_GEMM_DMMA, reps) : -1.0;
        row->exec_stage_ms = row->fast ? time_exec_variant(ctx, bc, A, B, SBM_TUNE_GEMM_STAGE, reps) : -1.0;
        row->exec_sdmma_ms = row->fast ? time_exec_variant(ctx, bc, A, B, SBM_TUNE_GEMM_SDMMA, reps) : -1.0;
        row->exec_stage_np_ms = row->fast ? time_exec_variant(ctx, bc, A, B, SBM_TUNE_GEMM_STAGE_ONE_TILE, reps) : -1.0;
        row->exec_sdmma_np_ms = row->fast ? time_exec_variant(ctx, bc, A, B, SBM_TUNE_GEMM_SDMMA_ONE_TILE, reps) : -1.0;
    }
out:
    sbm_gemm_plan_destroy(p);
    sbm_cbc_destroy(C);
    sbm_cbc_destroy(B);
    sbm_cbc_destroy(A);
    sbm_ctx_destroy(ctx);
    free(cnt.ptrs);
    free(cnt.sizes);
    free(t);
}

static void run_cpu(sbm_ctx *host, const bench_case *bc, gemm_row *row)
{
    sbm_gemm_plan *p = NULL;
    sbm_cbc *C = NULL;
    double t0 = wall_ms();
    sbm_status st = sbm_cbc_gemm_plan(host, bc->op_a, bc->A, bc->op_b, bc->B, NULL, bc->flags, &p, &C);
    double t1 = wall_ms();
    if (st != SBM_SUCCESS) return;
    st = sbm_cbc_gemm_execute(host, p, 1.0, bc->A, bc->B, NULL, C);
    double t2 = wall_ms();
    if (st == SBM_SUCCESS) {
        row->cpu_ok = 1;
        row->cpu_plan_ms = t1 - t0;
        row->cpu_exec_ms = t2 - t1;
        row->cpu_sumsq = cbc_sumsq(C);
    }
    sbm_gemm_plan_destroy(p);
    sbm_cbc_destroy(C);
}

/* cuSPARSE on the scalar CSR of op(A) and op(B) (transposes materialised on the device). */
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
    peer_cusparse_spgemm(SA, SB, reps, 0, &row->cus);
    sbm_csr_destroy(SA);
    sbm_csr_destroy(SB);
    sbm_ctx_destroy(ctx);
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
    double ms = median(t, 10);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    return 2.0 * (double)bytes / (ms * 1e6);
}

static void run_spmv(sbm_ctx *host, int large, int reps, FILE *csv, double copy_gbs)
{
    printf("\nBlock SpMV y = A*x on 2D Poisson (%s grid), beta = 0; device copy bandwidth %.0f GB/s "
           "(read + write)\n", large ? "300x300" : "60x60", copy_gbs);
    printf("N ms, T ms: the default kernel; N v1..v3, T v1..v3: each version forced (ms)\n");
    printf("%-14s %10s %10s %9s %8s %9s %8s %10s %8s  %7s %7s %7s  %7s %7s %7s  %s\n", "case", "nnzb",
           "MB", "N ms", "N %copy", "T ms", "T %copy", "BSR ms", "BSR %", "N v1", "N v2", "N v3",
           "T v1", "T v2", "T v3", "cuSPARSE status");
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
        cudaMalloc((void **)&x, (size_t)n * sizeof(double));
        cudaMalloc((void **)&y, (size_t)m * sizeof(double));
        cudaMemset(x, 0, (size_t)n * sizeof(double));
        {
            double *hx = malloc((size_t)n * sizeof *hx);
            for (int64_t i = 0; i < n; i++) hx[i] = 1.0 / (1.0 + (double)(i % 17));
            cudaMemcpy(x, hx, (size_t)n * sizeof *hx, cudaMemcpyHostToDevice);
            free(hx);
        }
        /* bytes a SpMV must move: values, block indices and pointers, x and y once */
        const double mbytes = (double)a.nnzb * b * b * 8 + (double)a.nnzb * 4 + (double)(a.nbc + 1) * 8 +
                              (double)n * 8 + (double)m * 8;
        /* ms[op][0]: the default kernel; ms[op][v]: version v forced (kernels/cuda_spmv.cu) */
        double ms[2][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
        static const sbm_tune_spmv vers[4] = {SBM_TUNE_SPMV_AUTO, SBM_TUNE_SPMV_ONE_BY_ONE,
                                              SBM_TUNE_SPMV_BATCHED, SBM_TUNE_SPMV_BATCHED_SMALL};
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        double *t = calloc((size_t)reps + 1, sizeof *t);
        for (int op = 0; op < 2; op++) {
            for (int v = 0; v < 4; v++) {
                tune(ctx, (sbm_tuning){.spmv = vers[v]});
                for (int rep = 0; rep <= reps; rep++) {
                    cudaEventRecord(e0, 0);
                    CHECK(ctx, sbm_cbc_spmv(ctx, op ? SBM_OP_T : SBM_OP_N, 1.0, A, x, 0.0, y));
                    cudaEventRecord(e1, 0);
                    cudaEventSynchronize(e1);
                    float f = 0.0f;
                    cudaEventElapsedTime(&f, e0, e1);
                    if (rep > 0) t[rep - 1] = f;
                }
                ms[op][v] = median(t, reps);
            }
        }
        CHECK(ctx, sbm_ctx_set_tuning(ctx, NULL));
        /* cuSPARSE BSR SpMV on the same matrix (BSR arrays from sbm_cbc_to_bsr, column-major blocks) */
        peer_spmv_result pr;
        cudaMalloc((void **)&brp, (size_t)(a.nbr + 1) * sizeof(int64_t));
        cudaMalloc((void **)&bci, (size_t)(a.nnzb + 1) * sizeof(int32_t));
        cudaMalloc((void **)&bv, (size_t)(a.nnzb * b * b + 1) * sizeof(double));
        CHECK(ctx, sbm_cbc_to_bsr(ctx, A, SBM_LAYOUT_COL_MAJOR, brp, bci, bv));
        CHECK(ctx, sbm_ctx_synchronize(ctx));
        if (b == 1) {
            snprintf(pr.status, sizeof pr.status, "b = 1: cusparseDbsrmv needs blockDim > 1");
            pr.ok = 0;
        } else {
            peer_cusparse_bsrmv(a.nbr, a.nbc, a.nnzb, b, brp, bci, bv, 1, x, y, reps, &pr);
        }
        const double gbN = mbytes / (ms[0][0] * 1e6), gbT = mbytes / (ms[1][0] * 1e6);
        const double gbB = pr.ok ? mbytes / (pr.ms * 1e6) : 0.0;
        char name[32];
        snprintf(name, sizeof name, "poisson2d-b%d", b);
        printf("%-14s %10lld %10.1f %9.4f %7.0f%% %9.4f %7.0f%% %10.4f %7.0f%%  %7.4f %7.4f %7.4f  "
               "%7.4f %7.4f %7.4f  %s\n", name,
               (long long)a.nnzb, mbytes / 1e6, ms[0][0], 100.0 * gbN / copy_gbs, ms[1][0],
               100.0 * gbT / copy_gbs, pr.ok ? pr.ms : 0.0, pr.ok ? 100.0 * gbB / copy_gbs : 0.0,
               ms[0][1], ms[0][2], ms[0][3], ms[1][1], ms[1][2], ms[1][3], pr.status);
        if (csv)
            fprintf(csv, "spmv,%s,%d,%d,%d,%lld,,,,,%.6f,%.6f,,,,,%.6f,,%s,,,,,%.1f,%.1f,%.1f,%.1f,,,,,,,,,"
                         "%.6f,%.6f,%.6f,%.6f,%.6f,%.6f\n",
                    name, b, 1, b, (long long)a.nnzb, ms[0][0], ms[1][0], pr.ok ? pr.ms : -1.0, pr.status,
                    copy_gbs, 100.0 * gbN / copy_gbs, 100.0 * gbT / copy_gbs,
                    pr.ok ? 100.0 * gbB / copy_gbs : -1.0, ms[0][1], ms[0][2], ms[0][3], ms[1][1],
                    ms[1][2], ms[1][3]);
        free(t);
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        cudaFree(bv);
        cudaFree(bci);
        cudaFree(brp);
        cudaFree(y);
        cudaFree(x);
        sbm_cbc_destroy(A);
        sbm_cbc_destroy(H);
    }
    sbm_ctx_destroy(ctx);
}

/* ---------------------------------------------------------------------------------------- */
/* Scalar CSR: SpMV, SpMM, SpGEMM against cuSPARSE (issue 4)                                */
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
    double ms, setup_ms, rate, pct_copy, cus_ms, ratio, maxdiff;
    const char *rate_unit;
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
    csv_num(f, r->setup_ms, "%.6f");
    csv_num(f, r->rate, "%.3f");
    fprintf(f, ",%s", r->rate_unit);
    csv_num(f, r->pct_copy, "%.2f");
    csv_num(f, r->cus_ms, "%.6f");
    csv_num(f, r->ratio, "%.4f");
    csv_num(f, r->maxdiff, "%.3e");
    fputc(',', f);
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
    r.ms = r.setup_ms = r.rate = r.pct_copy = r.cus_ms = r.ratio = r.maxdiff = -1.0;
    r.rate_unit = "";
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

/* max |got - ref| / max |ref| over count entries (the reference's scale, so that entries that
 * cancel to near zero do not dominate); -1 without a reference. */
static double max_rel_diff(const double *got, const double *ref, size_t count)
{
    if (!ref) return -1.0;
    double dmax = 0.0, rmax = 0.0;
    for (size_t i = 0; i < count; i++) {
        dmax = fmax(dmax, fabs(got[i] - ref[i]));
        rmax = fmax(rmax, fabs(ref[i]));
    }
    return dmax / fmax(rmax, 1e-300);
}

/* The check tolerance: FP64 sums in another order differ by a few ulps of the largest term. */
#define CSR_CHECK_TOL 1e-9

/* A call slower than this is timed once (its warm-up) rather than reps times, so that a slow
 * variant cannot take the section's time budget. */
#define CSR_SLOW_MS 1000.0

/* Appends the check's verdict and the single-timing note to a successful row's status. */
static void note_check(csr_row *r)
{
    const size_t len = strlen(r->status);
    if (r->maxdiff > CSR_CHECK_TOL)
        snprintf(r->status + len, sizeof r->status - len, "; CHECK FAILED (max rel diff %.2e)", r->maxdiff);
    if (r->once) {
        const size_t l2 = strlen(r->status);
        snprintf(r->status + l2, sizeof r->status - l2, "; timed once (one call > %.0f ms)", CSR_SLOW_MS);
    }
}

/* A result that may be counted: checked and right, or not checkable (no cuSPARSE run). */
static int check_passed(const csr_row *r) { return r->maxdiff <= CSR_CHECK_TOL; }

/* Time reps calls of `call` (an sbm_status expression) with CUDA events on the stream, after a
 * warm-up call; st is its first failure, *ms_out the median; a warm-up slower than CSR_SLOW_MS
 * is the only measurement (*once = 1). */
#define TIME_SBM(st, ms_out, once, stream, reps, call)                                        \
    do {                                                                                      \
        cudaEvent_t e0_, e1_;                                                                 \
        double *t_ = calloc((size_t)(reps) + 1, sizeof *t_);                                  \
        int n_ = (reps);                                                                      \
        cudaEventCreate(&e0_);                                                                \
        cudaEventCreate(&e1_);                                                                \
        (st) = SBM_SUCCESS;                                                                   \
        *(once) = 0;                                                                          \
        for (int rep_ = 0; rep_ <= (reps) && (st) == SBM_SUCCESS; rep_++) {                   \
            cudaEventRecord(e0_, (stream));                                                   \
            (st) = (call);                                                                    \
            cudaEventRecord(e1_, (stream));                                                   \
            cudaEventSynchronize(e1_);                                                        \
            float f_ = 0.0f;                                                                  \
            cudaEventElapsedTime(&f_, e0_, e1_);                                              \
            if (rep_ > 0) t_[rep_ - 1] = f_;                                                  \
            if (rep_ == 0 && f_ > CSR_SLOW_MS) {                                              \
                t_[0] = f_;                                                                   \
                n_ = 1;                                                                       \
                *(once) = 1;                                                                  \
                break;                                                                        \
            }                                                                                 \
        }                                                                                     \
        *(ms_out) = (st) == SBM_SUCCESS ? median(t_, n_) : -1.0;                              \
        cudaEventDestroy(e0_);                                                                \
        cudaEventDestroy(e1_);                                                                \
        free(t_);                                                                             \
    } while (0)

static sbm_csr *upload(sbm_ctx *ctx, const sbm_csr *H)
{
    sbm_csr *D = NULL;
    CHECK(ctx, sbm_csr_copy(ctx, H, &D));
    CHECK(ctx, sbm_ctx_synchronize(ctx));
    return D;
}

/* ---- SpMV ---- */

typedef struct spmv_summary {
    gmean reg_auto, reg_plan;  /* % of copy bandwidth, regular large matrices */
    gmean pl_auto, pl_plan;    /* cuSPARSE / sbm, power-law large matrices */
    gmean all_auto, all_plan;  /* cuSPARSE / sbm, every matrix */
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

/* The matrices the SpMV targets speak of: >= 10M nonzeros (>= 100k at --size small). */
static int is_big(const csr_mat *c, int large)
{
    return sbm_csr_get_info(c->H).nnz >= (large ? 10000000 : 100000);
}

static void csr_spmv_one(sbm_ctx *ctx, cudaStream_t stream, const csr_mat *c, const csr_opts *o,
                         spmv_summary *sum)
{
    sbm_csr_info h = sbm_csr_get_info(c->H);
    const int reps = 4 * o->reps;
    /* minimum traffic: row pointers (int64), column indices (int32), values, x once, y written
     * once (beta = 0) */
    const double bytes = 8.0 * (double)(h.m + 1) + 12.0 * (double)h.nnz + 8.0 * (double)h.n + 8.0 * (double)h.m;
    sbm_csr *D = upload(ctx, c->H);
    double *x = dev_random((size_t)h.n, 7), *y = dev_alloc((size_t)h.m * sizeof(double) + 8);
    double *yref = NULL;
    char cells[N_SPMV_FORMATS + 1][40], auto_fmt[24] = "", notes[1024] = "";
    double maxdiff = -1.0;
    /* cuSPARSE */
    csr_row cr = row_init("spmv", "cusparse");
    peer_op_result pr;
    memset(&pr, 0, sizeof pr);
    snprintf(pr.status, sizeof pr.status, "not run");
    if (o->do_cus) {
        peer_csr *P = NULL;
        if (peer_csr_create(D, stream, &P, pr.status, sizeof pr.status) == 0) {
            peer_csr_spmv(P, x, y, reps, &pr);
            peer_csr_destroy(P);
        }
        if (pr.ok) yref = host_copy(y, (size_t)h.m);
    }
    snprintf(cr.status, sizeof cr.status, "%s", pr.status);
    if (pr.ok) {
        cr.ms = pr.ms;
        cr.setup_ms = pr.setup_ms;
        cr.rate = bytes / (pr.ms * 1e6);
        cr.rate_unit = "GB/s";
        cr.pct_copy = 100.0 * cr.rate / o->copy_gbs;
        cr.cus_ms = pr.ms;
        cr.ratio = 1.0;
    }
    csr_csv(o->csv, c, &cr);
    /* sbm: sbm_csr_spmv (cell 0), then one plan per format (cells 1..8) */
    for (int v = 0; v <= N_SPMV_FORMATS; v++) {
        char variant[32];
        sbm_spmv_plan *plan = NULL;
        sbm_status st = SBM_SUCCESS;
        csr_row r;
        if (v == 0) {
            snprintf(variant, sizeof variant, "auto");
        } else {
            snprintf(variant, sizeof variant, "plan-%s", sbm_spmv_format_name(spmv_formats[v - 1]));
        }
        r = row_init("spmv", variant);
        if (v > 0) {
            CHECK(ctx, sbm_ctx_synchronize(ctx));
            const double t0 = wall_ms();
            st = sbm_csr_spmv_plan(ctx, D, spmv_formats[v - 1], &plan);
            if (st == SBM_SUCCESS) st = sbm_ctx_synchronize(ctx);
            r.setup_ms = wall_ms() - t0;
        }
        if (st == SBM_SUCCESS) {
            cudaMemsetAsync(y, 0, (size_t)h.m * sizeof(double), stream);
            if (v == 0) TIME_SBM(st, &r.ms, &r.once, stream, reps, sbm_csr_spmv(ctx, 1.0, D, x, 0.0, y));
            else TIME_SBM(st, &r.ms, &r.once, stream, reps, sbm_spmv_plan_execute(ctx, plan, 1.0, x, 0.0, y));
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
            r.rate = bytes / (r.ms * 1e6);
            r.rate_unit = "GB/s";
            r.pct_copy = 100.0 * r.rate / o->copy_gbs;
            if (pr.ok) {
                r.cus_ms = pr.ms;
                r.ratio = pr.ms / r.ms;
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
            /* table cell: % of copy bandwidth; the ratio to cuSPARSE for auto and plan-auto */
            if (!check_passed(&r))
                snprintf(cells[v], sizeof cells[v], "WRONG");
            else if (v <= 1 && r.ratio > 0)
                snprintf(cells[v], sizeof cells[v], "%.0f%% %.2fx", r.pct_copy, r.ratio);
            else
                snprintf(cells[v], sizeof cells[v], "%.0f%%", r.pct_copy);
            if (v <= 1 && check_passed(&r)) {
                gmean *reg = v == 0 ? &sum->reg_auto : &sum->reg_plan;
                gmean *pl = v == 0 ? &sum->pl_auto : &sum->pl_plan;
                gmean *all = v == 0 ? &sum->all_auto : &sum->all_plan;
                if (is_regular(c) && is_big(c, o->large)) gm_add(reg, r.pct_copy);
                if (r.ratio > 0) {
                    if (c->gen == GEN_RMAT && is_big(c, o->large)) gm_add(pl, r.ratio);
                    gm_add(all, r.ratio);
                }
            }
        }
        csr_csv(o->csv, c, &r);
        sbm_spmv_plan_destroy(plan);
    }
    char md[16] = "-";
    if (maxdiff >= 0) snprintf(md, sizeof md, "%.1e", maxdiff);
    char cus[24] = "-";
    if (pr.ok) snprintf(cus, sizeof cus, "%.4f %3.0f%%", pr.ms, 100.0 * bytes / (pr.ms * 1e6) / o->copy_gbs);
    printf("%-20s %9lld %9lld %9lld %7.1f %6lld %14s %13s %13s %-10s %6s %6s %6s %6s %6s %6s %6s %8s%s%s%s\n",
           c->name, (long long)h.m, (long long)h.n, (long long)h.nnz, bytes / 1e6, (long long)c->maxrow,
           cus, cells[0], cells[1], auto_fmt[0] ? auto_fmt : "-", cells[2], cells[3], cells[4], cells[5],
           cells[6], cells[7], cells[8], md, pr.ok || !o->do_cus ? "" : "  cuSPARSE: ",
           pr.ok || !o->do_cus ? "" : pr.status, notes);
    fflush(stdout);
    free(yref);
    cudaFree(y);
    cudaFree(x);
    sbm_csr_destroy(D);
}

static void csr_spmv(sbm_ctx *ctx, cudaStream_t stream, const csr_mat *ms, int n, const csr_opts *o)
{
    spmv_summary sum;
    memset(&sum, 0, sizeof sum);
    printf("\nCSR SpMV y = A*x (beta = 0): %% of device copy bandwidth (%.0f GB/s) with the minimum "
           "traffic 8(m+1) + 12 nnz + 8n + 8m bytes; Nx = cuSPARSE time / sbm time; median of %d\n",
           o->copy_gbs, 4 * o->reps);
    printf("auto: sbm_csr_spmv; plan-*: sbm_spmv_plan_execute with the plan of that format "
           "(fmt: the format plan-auto chose); '-': format refused (padding limit); n/a: not supported\n");
    printf("%-20s %9s %9s %9s %7s %6s %14s %13s %13s %-10s %6s %6s %6s %6s %6s %6s %6s %8s\n", "matrix",
           "rows", "cols", "nnz", "MB", "maxrow", "cuSPARSE ms", "auto", "plan-auto", "fmt", "scalar",
           "vector", "merge", "coo", "ell", "hyb", "dia", "maxdiff");
    for (int t = 0; t < n; t++) csr_spmv_one(ctx, stream, &ms[t], o, &sum);
    char a[32], b[32], c1[32], d[32], e[32], f[32];
    printf("SpMV targets (%s matrices: >= %s nonzeros):\n", o->large ? "large" : "small",
           o->large ? "10M" : "100k");
    printf("  regular (Poisson, BA), %% of copy bandwidth, target >= 80%%: auto geomean %s (min %.0f%%), "
           "plan-auto geomean %s (min %.0f%%)\n",
           gm_str(a, sizeof a, &sum.reg_auto, "%.0f%%"), sum.reg_auto.min,
           gm_str(b, sizeof b, &sum.reg_plan, "%.0f%%"), sum.reg_plan.min);
    printf("  power-law (R-MAT), cuSPARSE / sbm, target >= 1.2x: auto geomean %s, plan-auto geomean %s\n",
           gm_str(c1, sizeof c1, &sum.pl_auto, "%.2fx"), gm_str(d, sizeof d, &sum.pl_plan, "%.2fx"));
    printf("  every matrix, cuSPARSE / sbm: auto geomean %s, plan-auto geomean %s\n",
           gm_str(e, sizeof e, &sum.all_auto, "%.2fx"), gm_str(f, sizeof f, &sum.all_plan, "%.2fx"));
}

/* ---- SpMM ---- */

static const char *const spmm_kernels[3] = {NULL, "rowsplit", "merge"};
static const sbm_tune_csr_spmm spmm_tunes[3] = {SBM_TUNE_CSR_SPMM_AUTO, SBM_TUNE_CSR_SPMM_ROWSPLIT,
                                                SBM_TUNE_CSR_SPMM_MERGE};

/* The matrices whose SpMM and SpGEMM times are not dominated by launch latency: >= 1M
 * nonzeros (>= 100k at --size small). */
static int is_sizable(const csr_mat *c, int large)
{
    return sbm_csr_get_info(c->H).nnz >= (large ? 1000000 : 100000);
}

static void csr_spmm_one(sbm_ctx *ctx, cudaStream_t stream, const csr_mat *c, const csr_opts *o,
                         gmean gm[2][2][3])
{
    static const int64_t widths[2] = {16, 64};
    sbm_csr_info h = sbm_csr_get_info(c->H);
    sbm_csr *D = upload(ctx, c->H);
    char line[512], notes[1024] = "";
    double maxdiff = -1.0;
    int pos = snprintf(line, sizeof line, "%-20s %9lld %9lld %7.1f", c->name, (long long)h.nnz,
                       (long long)c->maxrow, h.m ? (double)h.nnz / (double)h.m : 0.0);
    for (int w = 0; w < 2; w++) {
        const int64_t k = widths[w];
        const double gflop = 2.0 * (double)h.nnz * (double)k / 1e9;
        double *B = dev_random((size_t)(h.n * k), 11), *C = dev_alloc((size_t)(h.m * k) * sizeof(double) + 8);
        double *cref = NULL;
        peer_op_result pr;
        memset(&pr, 0, sizeof pr);
        snprintf(pr.status, sizeof pr.status, "not run");
        if (o->do_cus) {
            peer_csr *P = NULL;
            if (peer_csr_create(D, stream, &P, pr.status, sizeof pr.status) == 0) {
                peer_csr_spmm(P, k, B, C, o->reps, &pr);
                peer_csr_destroy(P);
            }
            if (pr.ok) cref = host_copy(C, (size_t)(h.m * k));
        }
        csr_row cr = row_init("spmm", "cusparse");
        cr.ncols = k;
        snprintf(cr.status, sizeof cr.status, "%s", pr.status);
        if (pr.ok) {
            cr.ms = cr.cus_ms = pr.ms;
            cr.setup_ms = pr.setup_ms;
            cr.rate = gflop / (pr.ms * 1e-3);
            cr.rate_unit = "GFLOP/s";
            cr.ratio = 1.0;
            pos += snprintf(line + pos, sizeof line - (size_t)pos, " | %7.1f", cr.rate);
        } else {
            pos += snprintf(line + pos, sizeof line - (size_t)pos, " | %7s", "fail");
            const size_t len = strlen(notes);
            snprintf(notes + len, sizeof notes - len, "\n    cuSPARSE %lld cols: %s", (long long)k, pr.status);
        }
        csr_csv(o->csv, c, &cr);
        for (int v = 0; v < 3; v++) {
            csr_row r = row_init("spmm", spmm_kernels[v] ? spmm_kernels[v] : "auto");
            r.ncols = k;
            sbm_status st;
            tune(ctx, (sbm_tuning){.csr_spmm = spmm_tunes[v]});
            cudaMemsetAsync(C, 0, (size_t)(h.m * k) * sizeof(double), stream);
            TIME_SBM(st, &r.ms, &r.once, stream, o->reps,
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
                if (pr.ok) {
                    r.cus_ms = pr.ms;
                    r.ratio = pr.ms / r.ms;
                    if (check_passed(&r)) {
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
        cudaFree(C);
        cudaFree(B);
    }
    char md[16] = "-";
    if (maxdiff >= 0) snprintf(md, sizeof md, "%.1e", maxdiff);
    printf("%s %8s%s\n", line, md, notes);
    fflush(stdout);
    sbm_csr_destroy(D);
}

static void csr_spmm(sbm_ctx *ctx, cudaStream_t stream, const csr_mat *ms, int n, const csr_opts *o)
{
    gmean gm[2][2][3]; /* [every matrix, sizable ones][16, 64 columns][auto, rowsplit, merge] */
    memset(gm, 0, sizeof gm);
    printf("\nCSR SpMM C = A*B, B and C dense row-major with 16 and 64 columns: GFLOP/s (2 nnz "
           "cols / time) and Nx = cuSPARSE time / sbm time; median of %d\n", o->reps);
    printf("auto: sbm_csr_spmm's own choice; rowsplit / merge: forced with the tuning's csr_spmm; "
           "cuSPARSE: cusparseSpMM CSR, default algorithm\n");
    printf("%-20s %9s %9s %7s | %7s %14s %14s %14s | %7s %14s %14s %14s %8s\n", "matrix", "nnz", "maxrow",
           "meanrow", "cus 16", "auto 16", "rowsplit 16", "merge 16", "cus 64", "auto 64", "rowsplit 64",
           "merge 64", "maxdiff");
    for (int t = 0; t < n; t++) csr_spmm_one(ctx, stream, &ms[t], o, gm);
    printf("SpMM targets: cuSPARSE / sbm geomean over the matrices, target >= 1.2x at 16 and 64 columns\n");
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

/* max |C - ref| / max |ref| entrywise, entries absent on one side read as zero (so a pattern
 * difference with nonzero values shows); ref is cuSPARSE's C on the host. */
static double gemm_diff(const sbm_csr *Ch, const peer_spgemm_result *ref)
{
    if (!ref->c_rowptr) return -1.0;
    sbm_csr_info c = sbm_csr_get_info(Ch);
    double *acc = calloc((size_t)c.n + 1, sizeof *acc), dmax = 0.0, rmax = 0.0;
    for (int64_t i = 0; i < c.m; i++) {
        for (int32_t t = ref->c_rowptr[i]; t < ref->c_rowptr[i + 1]; t++) {
            acc[ref->c_colind[t]] += ref->c_values[t];
            rmax = fmax(rmax, fabs(ref->c_values[t]));
        }
        for (int64_t t = c.rowptr[i]; t < c.rowptr[i + 1]; t++) acc[c.colind[t]] -= c.values[t];
        for (int32_t t = ref->c_rowptr[i]; t < ref->c_rowptr[i + 1]; t++) {
            dmax = fmax(dmax, fabs(acc[ref->c_colind[t]]));
            acc[ref->c_colind[t]] = 0.0;
        }
        for (int64_t t = c.rowptr[i]; t < c.rowptr[i + 1]; t++) {
            dmax = fmax(dmax, fabs(acc[c.colind[t]]));
            acc[c.colind[t]] = 0.0;
        }
    }
    free(acc);
    return dmax / fmax(rmax, 1e-300);
}


/* Ratio of a checked SpGEMM result against cuSPARSE's time (when cuSPARSE ran), added to the
 * geomeans of every matrix, the short-row ones and the sizable ones; cell gets the table entry. */
static void gemm_score(csr_row *r, int cus_ok, double cus_ms, int short_rows, int sizable,
                       gmean *all, gmean *shrt, gmean *big, char *cell, size_t cell_size)
{
    if (cus_ok) {
        r->cus_ms = cus_ms;
        r->ratio = cus_ms / r->ms;
        if (check_passed(r)) {
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
    if (o->do_cus) peer_cusparse_spgemm(DL, DR, o->reps, 1, &cus);
    CHECK(ctx, sbm_ctx_synchronize(ctx));
    csr_row cf = base, cru = base;
    cf.variant = "cusparse-full";
    cru.variant = "cusparse-reuse";
    snprintf(cf.status, sizeof cf.status, "%s", cus.status);
    snprintf(cru.status, sizeof cru.status, "%s", cus.reuse_status);
    if (cus.ok) {
        cf.ms = cf.cus_ms = cus.full_ms;
        cf.rate = gflop / (cus.full_ms * 1e-3);
        cf.ratio = 1.0;
        cf.nnz_c = cus.nnz_c;
        cf.rate_unit = "GFLOP/s";
    } else if (o->do_cus) {
        const size_t len = strlen(notes);
        snprintf(notes + len, sizeof notes - len, "\n    cuSPARSE: %s", cus.status);
    }
    if (cus.reuse_ok) {
        cru.ms = cru.cus_ms = cus.reuse_exec_ms;
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
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        for (int rep = 0; rep <= o->reps && st == SBM_SUCCESS; rep++) {
            sbm_csr_destroy(C);
            C = NULL;
            cudaEventRecord(e0, stream);
            st = sbm_csr_gemm(ctx, DL, DR, &C);
            cudaEventRecord(e1, stream);
            cudaEventSynchronize(e1);
            float f = 0.0f;
            cudaEventElapsedTime(&f, e0, e1);
            if (rep > 0) t[rep - 1] = f;
            if (rep == 0 && f > CSR_SLOW_MS) { /* see TIME_SBM */
                t[0] = f;
                so.once = 1;
                break;
            }
        }
        if (st == SBM_SUCCESS) {
            so.ms = median(t, so.once ? 1 : o->reps);
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
            gemm_score(&so, cus.ok, cus.full_ms, short_rows, is_sizable(c, o->large), &sum->full,
                       &sum->full_short, &sum->full_big, cell_o, sizeof cell_o);
        } else {
            snprintf(cell_o, sizeof cell_o, "%s", fail_note(ctx, st, 0, so.status, sizeof so.status));
        }
        if (strcmp(so.status, "ok") != 0 && strncmp(so.status, "n/a", 3) != 0) {
            const size_t len = strlen(notes);
            snprintf(notes + len, sizeof notes - len, "\n    sbm one-shot: %s", so.status);
        }
        sbm_csr_destroy(C);
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
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
            TIME_SBM(st, &se.ms, &se.once, stream, o->reps, sbm_csr_gemm_execute(ctx, plan, DL, DR, C));
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
            gemm_score(&se, cus.reuse_ok, cus.reuse_exec_ms, short_rows, is_sizable(c, o->large),
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
    printf(" %10s %10s %9.1f %10s %9.1f %15s %9.1f %15s %9.1f %8s%s\n", nnzc, cf_cell,
           cus.ok ? gflop / (cus.full_ms * 1e-3) : 0.0, cr_cell,
           cus.reuse_ok ? gflop / (cus.reuse_exec_ms * 1e-3) : 0.0, cell_o, so.rate > 0 ? so.rate : 0.0,
           cell_e, se.rate > 0 ? se.rate : 0.0, md, notes);
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
    printf("cus full: cusparseSpGEMM all phases with buffers and C allocated; cus reuse: "
           "cusparseSpGEMMreuse_compute; sbm 1-shot: sbm_csr_gemm (one pass without a plan where every "
           "row is short, else plan + execute); sbm exec: "
           "sbm_csr_gemm_execute with a reused plan\nNx: cus full / sbm 1-shot and cus reuse / sbm "
           "exec; short: mean products per row of C < 32\n");
    printf("%-20s %-5s %11s %6s %5s %10s %10s %9s %10s %9s %15s %9s %15s %9s %8s\n", "matrix", "form",
           "products", "p/row", "short", "nnz(C)", "cus full", "GFLOP/s", "cus reuse", "GFLOP/s",
           "sbm 1-shot ms", "GFLOP/s", "sbm exec ms", "GFLOP/s", "maxdiff");
    for (int t = 0; t < n; t++) csr_gemm_one(host, ctx, stream, &ms[t], o, &sum);
    char a[32], b[32], c1[32], d[32], e[32], f[32];
    const char *big = o->large ? "nnz(A) >= 1M" : "nnz(A) >= 100k";
    printf("SpGEMM targets: cuSPARSE / sbm geomean, target >= 1.0x overall, >= 1.5x on short rows\n");
    printf("  full (cus full / sbm 1-shot): every matrix %s (%d), short rows %s (%d), %s %s (%d)\n",
           gm_str(a, sizeof a, &sum.full, "%.2fx"), sum.full.n, gm_str(b, sizeof b, &sum.full_short, "%.2fx"),
           sum.full_short.n, big, gm_str(e, sizeof e, &sum.full_big, "%.2fx"), sum.full_big.n);
    printf("  execute (cus reuse / sbm exec): every matrix %s (%d), short rows %s (%d), %s %s (%d)\n",
           gm_str(c1, sizeof c1, &sum.exec, "%.2fx"), sum.exec.n,
           gm_str(d, sizeof d, &sum.exec_short, "%.2fx"), sum.exec_short.n, big,
           gm_str(f, sizeof f, &sum.exec_big, "%.2fx"), sum.exec_big.n);
}

static void run_csr(sbm_ctx *host, const char *sel, const char *datadir, csr_opts *o)
{
    csr_mat *ms = calloc(128, sizeof *ms);
    const int n = csr_list(o->large, sel, datadir, ms, 128);
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
        printf("  %-20s %-14s %9lld x %-9lld nnz %10lld  max row %7lld  (%.1f s on the host)\n", ms[t].name,
               ms[t].family, (long long)h.m, (long long)h.n, (long long)h.nnz, (long long)ms[t].maxrow,
               (wall_ms() - t0) / 1e3);
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
        fprintf(o->csv, "op,matrix,family,m,n,nnz,variant,ncols,products,nnz_c,short_rows,ms,setup_ms,"
                        "rate,rate_unit,pct_copy,cusparse_ms,ratio,max_rel_diff,status\n");
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
/* Main                                                                                     */
/* ---------------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    const char *sel = "all", *csv_path = NULL, *csr_csv_path = NULL, *datadir = getenv("SBM_DATA_DIR");
    int large = 1, reps = 5, do_cpu = 1, do_cus = 1, do_spmv = 1, do_csr = 1;
    const char *csr_ops = "spmv,spmm,gemm";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) large = strcmp(argv[++i], "small") != 0;
        else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) sel = argv[++i];
        else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) csv_path = argv[++i];
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--no-cpu") == 0) do_cpu = 0;
        else if (strcmp(argv[i], "--no-cusparse") == 0) do_cus = 0;
        else if (strcmp(argv[i], "--no-spmv") == 0) do_spmv = 0;
        else if (strcmp(argv[i], "--no-csr") == 0) do_csr = 0;
        else if (strcmp(argv[i], "--csr-csv") == 0 && i + 1 < argc) csr_csv_path = argv[++i];
        else if (strcmp(argv[i], "--csr-ops") == 0 && i + 1 < argc) csr_ops = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--size small|large] [--case NAME|FAMILY|csr|all] [--csv FILE] "
                            "[--csr-csv FILE] [--csr-ops spmv,spmm,gemm] [--reps N] [--no-cpu] "
                            "[--no-cusparse] [--no-spmv] [--no-csr]\n", argv[0]);
            return 1;
        }
    }
    if (reps < 1) reps = 1;
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
    printf("sbm-bench-gpu: %s, %d SMs, CUDA runtime %d.%d, driver %d.%d, %d reps (median)\n", prop.name,
           prop.multiProcessorCount, rt / 1000, (rt % 1000) / 10, drv / 1000, (drv % 1000) / 10, reps);
    FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
    if (csv)
        fprintf(csv, "kind,case,r,k,c,products,nnzb_c,slices,fast_path,plan_ms,exec_ms,"
                     "plan_radix_ms,gflops,peak_mb,cusparse_full_ms,cusparse_reuse_exec_ms,"
                     "cusparse_reuse_setup_ms,cusparse_peak_mb,cusparse_status,cpu_plan_ms,"
                     "cpu_exec_ms,speedup_exec,speedup_full,copy_gbs_or_check,pct_n,pct_t,pct_bsr,"
                     "plan_new_operands_ms,exec_team_ms,exec_dmma_ms,plan_segmented_ms,exec_stage_ms,"
                     "exec_sdmma_ms,exec_stage_np_ms,exec_sdmma_np_ms,spmv_n_v1_ms,spmv_n_v2_ms,"
                     "spmv_n_v3_ms,spmv_t_v1_ms,spmv_t_v2_ms,spmv_t_v3_ms\n");
    sbm_ctx *host = NULL;
    CHECK(NULL, sbm_ctx_create(&host, SBM_BACKEND_CPU, 0));
    bench_case cs[64];
    const int n = build_cases(host, large, sel, datadir, cs, 64);
    if (n > 0) printf("\nBlock SpGEMM C = op(A)*op(B) (ba, g2o: upper block triangle; cuSPARSE computes the "
           "full scalar product)\n");
    if (n > 0) printf("plan: median of repeated plans of the same operands (pattern fingerprints cached), "
           "default sort; seg / radix: each sort variant forced; new ops: operands new to the "
           "context (fingerprints computed)\n"
           "exec: default numeric kernel; team / dmma: thread per element / FP64 tensor cores; "
           "stage / sdmma: the same staged through shared memory, persistent grid (-np: one tile "
           "per CTA); "
           "x exec = cuSPARSE reuse compute / exec; x full = cuSPARSE all phases / (plan + exec)\n");
    if (n > 0)
        printf("%-18s %-6s %9s %8s %3s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %7s %10s %9s %6s "
           "%6s %8s %8s  %s\n",
           "case", "rxkxc", "products", "nnzb_C", "sl", "plan ms", "seg", "radix", "new ops", "exec ms",
           "team", "dmma", "stage", "sdmma", "stage-np", "sdmma-np", "GFLOP/s", "peakMB", "cus full",
           "cus exec", "x exec", "x full", "cpu plan", "cpu exec", "cuSPARSE status / check");
    for (int t = 0; t < n; t++) {
        gemm_row row;
        memset(&row, 0, sizeof row);
        run_sbm_gpu(&cs[t], reps, &row);
        if (do_cus) run_cusparse(&cs[t], reps, &row);
        else snprintf(row.cus.status, sizeof row.cus.status, "not run");
        if (do_cpu) run_cpu(host, &cs[t], &row);
        const double sx = row.cus.reuse_ok && row.exec_ms > 0 ? row.cus.reuse_exec_ms / row.exec_ms : 0.0;
        const double sf = row.cus.ok && row.exec_ms > 0 ? row.cus.full_ms / (row.plan_ms + row.exec_ms) : 0.0;
        /* check: sbm GPU vs CPU (same product), and vs cuSPARSE where it computes the same one */
        char check[96];
        double rel = row.cpu_ok ? fabs(row.sumsq - row.cpu_sumsq) / fmax(row.cpu_sumsq, 1e-300) : -1.0;
        if (cs[t].flags == 0 && row.cus.ok) {
            double relc = fabs(row.sumsq - row.cus.sumsq) / fmax(row.cus.sumsq, 1e-300);
            snprintf(check, sizeof check, "vs cpu %.1e, vs cusparse %.1e", rel, relc);
        } else {
            snprintf(check, sizeof check, "vs cpu %.1e", rel);
        }
        char rkc[16];
        snprintf(rkc, sizeof rkc, "%dx%dx%d", row.r, row.k, row.c);
        if (row.note[0]) printf("%-16s FAILED: %s\n", cs[t].name, row.note);
        printf("%-18s %-6s %9lld %8lld %3lld %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f "
               "%8.3f %8.3f %8.1f %7.1f %10.3f %9.3f %6.1f %6.1f %8.1f %8.1f  %s; %s\n",
               cs[t].name, rkc, (long long)row.products, (long long)row.nnzb_c, (long long)row.slices,
               row.plan_ms, row.plan_seg_ms, row.plan_radix_ms, row.plan_fresh_ms, row.exec_ms,
               row.exec_team_ms, row.exec_dmma_ms, row.exec_stage_ms, row.exec_sdmma_ms,
               row.exec_stage_np_ms, row.exec_sdmma_np_ms, row.gflops, row.peak_mb,
               row.cus.ok ? row.cus.full_ms : 0.0, row.cus.reuse_ok ? row.cus.reuse_exec_ms : 0.0, sx,
               sf, row.cpu_plan_ms, row.cpu_exec_ms, row.cus.ok ? "ok" : row.cus.status, check);
        fflush(stdout);
        if (csv)
            fprintf(csv, "gemm,%s,%d,%d,%d,%lld,%lld,%lld,%d,%.6f,%.6f,%.6f,%.3f,%.3f,%.6f,%.6f,%.6f,"
                         "%.3f,%s,%.3f,%.3f,%.3f,%.3f,%.3e,,,,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,"
                         "%.6f,,,,,,\n",
                    cs[t].name, row.r, row.k, row.c, (long long)row.products, (long long)row.nnzb_c,
                    (long long)row.slices, row.fast, row.plan_ms, row.exec_ms, row.plan_radix_ms,
                    row.gflops, row.peak_mb, row.cus.ok ? row.cus.full_ms : -1.0,
                    row.cus.reuse_ok ? row.cus.reuse_exec_ms : -1.0,
                    row.cus.reuse_ok ? row.cus.reuse_setup_ms : -1.0,
                    (double)row.cus.peak_bytes / (1024.0 * 1024.0),
                    row.cus.ok ? "ok" : row.cus.status, row.cpu_ok ? row.cpu_plan_ms : -1.0,
                    row.cpu_ok ? row.cpu_exec_ms : -1.0, sx, sf, rel, row.plan_fresh_ms,
                    row.exec_team_ms, row.exec_dmma_ms, row.plan_seg_ms, row.exec_stage_ms,
                    row.exec_sdmma_ms, row.exec_stage_np_ms, row.exec_sdmma_np_ms);
        sbm_cbc_destroy(cs[t].A);
        sbm_cbc_destroy(cs[t].B);
    }
    double copy_gbs = -1.0;
    if (do_spmv && (strcmp(sel, "all") == 0 || strcmp(sel, "spmv") == 0)) {
        copy_gbs = copy_bandwidth_gbs();
        run_spmv(host, large, reps * 4, csv, copy_gbs);
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
    sbm_ctx_destroy(host);
    return 0;
}
