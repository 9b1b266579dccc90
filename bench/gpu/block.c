/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench-gpu, block SpGEMM: the cases, and the runs of sbm (GPU and CPU backends) and
 * cuSPARSE on each, with the elementwise checks (method: gpu/main.c). */
#define _POSIX_C_SOURCE 200809L

#include <string.h>

#include "gpu.h"
#include "common/generators.h"

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

int build_cases(sbm_ctx *host, int large, const char *sel, const char *datadir,
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

/* ctx's tuning (fields not named in the caller's compound literal: the library's choice). */
void tune(sbm_ctx *ctx, sbm_tuning t)
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
 * `numeric` forced (sbm_tune_gemm_numeric; kernels/cuda/gemm/cuda_gemm_kernels.cuh; SBM_TUNE_GEMM_AUTO:
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

void run_sbm_gpu(sbm_ctx *host, const bench_case *bc, int reps, gemm_row *row)
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


/* The CPU backend (single-threaded): one untimed plan + execute, then cpu_reps plans and
 * cpu_reps executes timed (one of each when the warm-up took over CPU_SLOW_MS). */
void run_cpu(sbm_ctx *host, const bench_case *bc, int cpu_reps, gemm_row *row)
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
void run_cusparse(const bench_case *bc, int reps, gemm_row *row)
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
int gemm_checks(sbm_ctx *host, const bench_case *bc, gemm_row *row)
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

void gemm_row_free(gemm_row *row)
{
    sbm_cbc_destroy(row->c_gpu);
    sbm_cbc_destroy(row->c_gpu_full);
    sbm_cbc_destroy(row->c_cpu);
    peer_spgemm_result_free(&row->cus);
}
