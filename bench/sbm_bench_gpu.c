/* sbm-bench-gpu: the CUDA backend's block SpGEMM and block SpMV against peers measured in the
 * same run (issue 3).
 *
 *   sbm-bench-gpu [--size small|large] [--case NAME|FAMILY|all] [--csv FILE] [--reps N]
 *                 [--no-cpu] [--no-cusparse] [--no-spmv]
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
 * indices, x, y once each) against a measured device-to-device copy, and cuSPARSE's BSR SpMV. */
#define _POSIX_C_SOURCE 200809L

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "generators.h"
#include "peer_cusparse.h"
#include "sbm.h"

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

static void set_sort(const char *v)
{
    if (v)
        setenv("SBM_CUDA_GEMM_SORT", v, 1);
    else
        unsetenv("SBM_CUDA_GEMM_SORT");
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
    set_sort(sort);
    CHECK(NULL, sbm_ctx_create(&ctx, SBM_BACKEND_CUDA, 0));
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
    set_sort(NULL);
    sbm_cbc_destroy(B);
    sbm_cbc_destroy(A);
    sbm_ctx_destroy(ctx);
    free(t);
    return res;
}

/* Median execute time of a plan made with the numeric kernel `numeric` (team, dmma, stage,
 * sdmma, stage-np, sdmma-np: see kernels/cuda_gemm.cu). */
static double time_exec_variant(sbm_ctx *ctx, const bench_case *bc, const sbm_cbc *A,
                                const sbm_cbc *B, const char *numeric, int reps)
{
    sbm_gemm_plan *p = NULL;
    sbm_cbc *C = NULL;
    double *t = calloc((size_t)reps + 1, sizeof *t), res;
    setenv("SBM_CUDA_GEMM_NUMERIC", numeric, 1);
    CHECK(ctx, sbm_cbc_gemm_plan(ctx, bc->op_a, A, bc->op_b, B, NULL, bc->flags, &p, &C));
    unsetenv("SBM_CUDA_GEMM_NUMERIC");
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
        row->exec_team_ms = time_exec_variant(ctx, bc, A, B, "team", reps);
        row->exec_dmma_ms = row->fast ? time_exec_variant(ctx, bc, A, B, "dmma", reps) : -1.0;
        row->exec_stage_ms = row->fast ? time_exec_variant(ctx, bc, A, B, "stage", reps) : -1.0;
        row->exec_sdmma_ms = row->fast ? time_exec_variant(ctx, bc, A, B, "sdmma", reps) : -1.0;
        row->exec_stage_np_ms = row->fast ? time_exec_variant(ctx, bc, A, B, "stage-np", reps) : -1.0;
        row->exec_sdmma_np_ms = row->fast ? time_exec_variant(ctx, bc, A, B, "sdmma-np", reps) : -1.0;
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
    peer_cusparse_spgemm(SA, SB, reps, &row->cus);
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
        static const char *const vers[4] = {NULL, "v1", "v2", "v3"};
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        double *t = calloc((size_t)reps + 1, sizeof *t);
        for (int op = 0; op < 2; op++) {
            for (int v = 0; v < 4; v++) {
                if (vers[v]) setenv("SBM_CUDA_SPMV", vers[v], 1);
                else unsetenv("SBM_CUDA_SPMV");
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
        unsetenv("SBM_CUDA_SPMV");
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
/* Main                                                                                     */
/* ---------------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    const char *sel = "all", *csv_path = NULL, *datadir = getenv("SBM_DATA_DIR");
    int large = 1, reps = 5, do_cpu = 1, do_cus = 1, do_spmv = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) large = strcmp(argv[++i], "small") != 0;
        else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) sel = argv[++i];
        else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) csv_path = argv[++i];
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--no-cpu") == 0) do_cpu = 0;
        else if (strcmp(argv[i], "--no-cusparse") == 0) do_cus = 0;
        else if (strcmp(argv[i], "--no-spmv") == 0) do_spmv = 0;
        else {
            fprintf(stderr, "usage: %s [--size small|large] [--case NAME|FAMILY|all] [--csv FILE] "
                            "[--reps N] [--no-cpu] [--no-cusparse] [--no-spmv]\n", argv[0]);
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
    printf("\nBlock SpGEMM C = op(A)*op(B) (ba, g2o: upper block triangle; cuSPARSE computes the "
           "full scalar product)\n");
    printf("plan: median of repeated plans of the same operands (pattern fingerprints cached), "
           "default sort; seg / radix: each sort variant forced; new ops: operands new to the "
           "context (fingerprints computed)\n"
           "exec: default numeric kernel; team / dmma: thread per element / FP64 tensor cores; "
           "stage / sdmma: the same staged through shared memory, persistent grid (-np: one tile "
           "per CTA); "
           "x exec = cuSPARSE reuse compute / exec; x full = cuSPARSE all phases / (plan + exec)\n");
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
    if (do_spmv && (strcmp(sel, "all") == 0 || strcmp(sel, "spmv") == 0))
        run_spmv(host, large, reps * 4, csv, copy_bandwidth_gbs());
    if (csv) fclose(csv);
    sbm_ctx_destroy(host);
    return 0;
}
