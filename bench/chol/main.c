/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench-chol: sbm's sparse block Cholesky (sbm_chol_plan / factor / solve) against CHOLMOD's
 * supernodal factorisation on the matrices a solver factors: Lambda of pose graphs, S of BA.
 *
 *   sbm-bench-chol [--g2o FILE]... [--bal FILE]... [--generate C,P,K]... [--poses D:N]... [FILE]...
 *                  [--reps N] [--phase-budget S] [--threads N] [--backend cpu|cuda|all]
 *                  [--no-cholmod] [--tmp DIR] [--csv FILE]
 *
 * Inputs (each option may repeat; they run in the order given):
 *   --g2o FILE      Lambda = J^T Omega J of a g2o pose graph at its poses (sbm_slam_linearize)
 *   --bal FILE      S of a BAL file after one linearisation with the solver's first damping
 *                   (lambda 1e-4 on U and V, as sbm_ba_solve factors it)
 *   --generate C,P,K  the same for a synthetic BAL problem (sbm_bal_generate, seed 2026) of C
 *                   cameras, P points, K observations per point
 *   --poses D:N     Lambda of a seeded synthetic pose graph of N poses, D = 2 (SE2 grid) or 3
 *                   (SE3 sphere), odometry + loop closures (common/chol_inputs.c)
 *   FILE            --g2o FILE when its name contains ".g2o", else --bal FILE
 * Per matrix: sbm's plan, factor and solve (one right-hand side) on the CPU context and, on a
 * CUDA build with a device, on a CUDA context (timed with the context synchronised); CHOLMOD's
 * analyze, factorize and solve (peers/peer_cholmod.c). Every time is the median [min-max] of reps
 * timed calls after an untimed warm-up call; a phase whose warm-up took long runs fewer reps so
 * that its timed calls stay within --phase-budget seconds (default 10; at least 1 rep), and a
 * warm-up call longer than the budget is itself the one timed call (chol_timing,
 * common/chol_run.h).
 * nnz(L): the doubles stored for L (sbm: factor_values, amalgamation zeros included; CHOLMOD:
 * L->xsize, likewise); flops: each library's own count for its ordering; GFLOP/s = flops /
 * factor time. Memory: the most bytes in use at once during plan + factor + solve above the
 * input matrix (sbm: a counting allocator installed on the context; CHOLMOD:
 * Common->memory_usage). Check: the relative residual |A x - b| / |b| of a solve, for both; a
 * sbm residual above max(1e-8, 100 x CHOLMOD's) marks the row BAD and the exit status 1.
 * Inverse: the block diagonal of A^-1 by sbm_chol_inverse_diagonal (the selected inverse, the
 * marginal covariances), each timed call after a new factorisation (which it does not include),
 * and its ratio to the factorisation's median.
 * Threads: OpenBLAS' (sbm's supernodes and CHOLMOD's BLAS are the same OpenBLAS); --threads N
 * sets OPENBLAS_NUM_THREADS and OMP_NUM_THREADS for both (the program re-executes itself so that
 * the libraries read them at load). Ratios: CHOLMOD / sbm (> 1: sbm faster). */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/chol_inputs.h"
#include "common/chol_run.h"
#include "common/counting_alloc.h"
#include "peers/peer_cholmod.h"
#include "sbm_solve.h"

/* OpenBLAS' thread query, when the program is linked with OpenBLAS (weak: absent otherwise) */
extern int openblas_get_num_threads(void) __attribute__((weak));

#define MAX_INPUTS 64

typedef struct input {
    char type;        /* 'g' g2o, 'b' BAL, 'G' generated BA, 'p' pose graph */
    const char *path;
    int64_t a, b;     /* cameras, points / dim, poses */
    int c;            /* observations per point */
} input;

typedef struct options {
    input in[MAX_INPUTS];
    int nin;
    int reps;
    double phase_budget;
    int threads;      /* 0: as the environment says */
    int cpu, cuda;    /* backends to run */
    int cholmod;
    const char *tmp;
    const char *csv;
} options;

/* ---- sbm ----------------------------------------------------------------------------------- */

static void sbm_note(chol_run *r, const char *what, sbm_ctx *ctx)
{
    snprintf(r->note, sizeof r->note, "%s: %s", what, sbm_ctx_last_error(ctx));
}

/* Time fn as chol_timing says (context synchronised after each call); 0 or -1 at the first
 * failure. */
typedef sbm_status (*phase_fn)(sbm_ctx *ctx, void *state);

static int time_phase(sbm_ctx *ctx, phase_fn fn, void *state, const options *o, bench_stat *out)
{
    chol_timing tm;
    chol_timing_start(&tm, o->reps, o->phase_budget);
    double t0;
    do {
        t0 = bench_now_s();
        if (fn(ctx, state) != SBM_SUCCESS || sbm_ctx_synchronize(ctx) != SBM_SUCCESS) return -1;
    } while (chol_timing_next(&tm, bench_now_s() - t0));
    *out = chol_timing_stat(&tm);
    return 0;
}

typedef struct sbm_state {
    sbm_cbc *A;
    sbm_chol *chol;
    double *B, *X;
    int64_t n;
} sbm_state;

static sbm_status do_plan(sbm_ctx *ctx, void *v)
{
    sbm_state *s = v;
    sbm_chol_destroy(s->chol);
    s->chol = NULL;
    return sbm_chol_plan(ctx, s->A, NULL, &s->chol);
}

static sbm_status do_factor(sbm_ctx *ctx, void *v)
{
    sbm_state *s = v;
    return sbm_chol_factor(ctx, s->chol, s->A, SBM_DAMPING_NONE, 0.0);
}

static sbm_status do_solve(sbm_ctx *ctx, void *v)
{
    sbm_state *s = v;
    return sbm_chol_solve(ctx, s->chol, 1, s->B, s->n, s->X, s->n);
}

/* The block diagonal of A^-1 after each of reps new factorisations (only the inverse timed). */
static int time_inverse(sbm_ctx *ctx, sbm_state *s, const options *o, chol_run *r)
{
    const sbm_chol_info i = sbm_chol_get_info(s->chol);
    double *out = malloc(sizeof(double) * (size_t)(i.block_columns * i.block_size * i.block_size + 1));
    chol_timing tm;
    int rc = -1;
    if (!out) {
        snprintf(r->note, sizeof r->note, "out of host memory for the inverse");
        return -1;
    }
    chol_timing_start(&tm, o->reps, o->phase_budget);
    double t0;
    do {
        if (sbm_chol_factor(ctx, s->chol, s->A, SBM_DAMPING_NONE, 0.0) != SBM_SUCCESS ||
            sbm_ctx_synchronize(ctx) != SBM_SUCCESS)
            goto done;
        t0 = bench_now_s();
        if (sbm_chol_inverse_diagonal(ctx, s->chol, out) != SBM_SUCCESS) goto done;
    } while (chol_timing_next(&tm, bench_now_s() - t0));
    r->inverse = chol_timing_stat(&tm);
    rc = 0;
done:
    if (rc != 0) sbm_note(r, "sbm_chol_inverse_diagonal", ctx);
    free(out);
    return rc;
}

/* The solve's right-hand side in ctx's memory, its solution back on the host, the residual. */
static int sbm_solve_check(sbm_ctx *ctx, sbm_state *s, const chol_matrix *m, const options *o,
                           chol_run *r)
{
    double *h = malloc(sizeof(double) * 3 * (size_t)(m->n ? m->n : 1));
    int rc = -1;
    if (h == NULL) {
        snprintf(r->note, sizeof r->note, "out of host memory for the solve check");
        return -1;
    }
    chol_rhs(m->n, h);
    if (sbm_array_create(ctx, m->n, &s->B) != SBM_SUCCESS ||
        sbm_array_create(ctx, m->n, &s->X) != SBM_SUCCESS ||
        sbm_array_upload(ctx, s->B, h, m->n) != SBM_SUCCESS) {
        sbm_note(r, "arrays", ctx);
        goto done;
    }
    if (time_phase(ctx, do_solve, s, o, &r->solve) != 0) {
        sbm_note(r, "sbm_chol_solve", ctx);
        goto done;
    }
    if (sbm_array_download(ctx, h + m->n, s->X, m->n) != SBM_SUCCESS) {
        sbm_note(r, "download", ctx);
        goto done;
    }
    r->residual = chol_residual(m, h + m->n, h, h + 2 * m->n);
    rc = 0;
done:
    free(h);
    return rc;
}

static void run_sbm(sbm_ctx *ctx, counter *cnt, const chol_matrix *m, const options *o,
                    chol_run *r)
{
    *r = chol_run_none();
    sbm_state s = {NULL, NULL, NULL, NULL, m->n};
    if (sbm_cbc_copy(ctx, m->A, &s.A) != SBM_SUCCESS) {
        sbm_note(r, "sbm_cbc_copy", ctx);
        goto done;
    }
    const size_t base = cnt->live;
    cnt->peak = cnt->live;
    if (time_phase(ctx, do_plan, &s, o, &r->analyze) != 0) {
        sbm_note(r, "sbm_chol_plan", ctx);
        goto done;
    }
    if (time_phase(ctx, do_factor, &s, o, &r->factor) != 0) {
        const sbm_chol_info i = sbm_chol_get_info(s.chol);
        snprintf(r->note, sizeof r->note, "sbm_chol_factor (failed block column %lld): %s",
                 (long long)i.failed_column, sbm_ctx_last_error(ctx));
        goto done;
    }
    const sbm_chol_info i = sbm_chol_get_info(s.chol);
    r->factor_values = (double)i.factor_values;
    r->flops = i.flops;
    r->supernodes = (double)i.supernodes;
    if (sbm_solve_check(ctx, &s, m, o, r) != 0) goto done;
    r->peak_bytes = cnt->lost ? -1.0 : (double)(cnt->peak - base); /* the inverse's not in */
    if (time_inverse(ctx, &s, o, r) != 0) goto done;
    r->ok = 1;
done:
    sbm_array_destroy(ctx, s.B);
    sbm_array_destroy(ctx, s.X);
    sbm_chol_destroy(s.chol);
    sbm_cbc_destroy(s.A);
}

/* ---- report -------------------------------------------------------------------------------- */

static const char *const csv_cols[] = {
    "matrix", "kind", "block", "block_cols", "n", "nnz_a", "threads", "build_s",
    "sbm_plan_ms", "sbm_plan_min_ms", "sbm_plan_max_ms",
    "sbm_factor_ms", "sbm_factor_min_ms", "sbm_factor_max_ms",
    "sbm_solve_ms", "sbm_solve_min_ms", "sbm_solve_max_ms",
    "sbm_factor_values", "sbm_flops", "sbm_gflops", "sbm_supernodes", "sbm_peak_mb",
    "sbm_residual", "sbm_note",
    "cholmod_analyze_ms", "cholmod_analyze_min_ms", "cholmod_analyze_max_ms",
    "cholmod_factor_ms", "cholmod_factor_min_ms", "cholmod_factor_max_ms",
    "cholmod_solve_ms", "cholmod_solve_min_ms", "cholmod_solve_max_ms",
    "cholmod_factor_values", "cholmod_lnz", "cholmod_flops", "cholmod_gflops",
    "cholmod_supernodes", "cholmod_peak_mb", "cholmod_residual", "cholmod_note",
    "ratio_analyze", "ratio_factor",
    "gpu_plan_ms", "gpu_factor_ms", "gpu_factor_min_ms", "gpu_factor_max_ms",
    "gpu_solve_ms", "gpu_solve_min_ms", "gpu_solve_max_ms", "gpu_gflops", "gpu_peak_mb",
    "gpu_residual", "gpu_note", "ratio_gpu_cpu", "ratio_cholmod_gpu",
    "sbm_inverse_ms", "sbm_inverse_factor", "gpu_inverse_ms", "gpu_inverse_factor", "check", NULL};

static double gflops(const chol_run *r)
{
    return r->ok && r->factor.med > 0 && r->flops > 0 ? r->flops / (r->factor.med * 1e6) : -1;
}

static double ratio(bench_stat num, bench_stat den)
{
    return num.med > 0 && den.med > 0 ? num.med / den.med : -1;
}

static void csv_run(bench_csv_row *row, const char *p, const chol_run *r, int full)
{
    char k[64];
#define COL(s) (snprintf(k, sizeof k, "%s_%s", p, s), k)
    if (full) bench_csv_stat(row, COL("plan"), r->analyze);
    bench_csv_num(row, COL("plan_ms"), "%.4f", r->analyze.med);
    bench_csv_stat(row, COL("factor"), r->factor);
    bench_csv_stat(row, COL("solve"), r->solve);
    if (full) bench_csv_num(row, COL("factor_values"), "%.0f", r->factor_values);
    if (full) bench_csv_num(row, COL("flops"), "%.6g", r->flops);
    if (full) bench_csv_num(row, COL("supernodes"), "%.0f", r->supernodes);
    bench_csv_num(row, COL("gflops"), "%.4f", gflops(r));
    bench_csv_num(row, COL("peak_mb"), "%.3f", r->peak_bytes >= 0 ? r->peak_bytes / 1e6 : -1);
    bench_csv_num(row, COL("residual"), "%.3e", r->ok ? r->residual : -1);
    bench_csv_text(row, COL("note"), r->note);
    bench_csv_num(row, COL("inverse_ms"), "%.4f", r->inverse.med);
    bench_csv_num(row, COL("inverse_factor"), "%.3f", ratio(r->inverse, r->factor));
#undef COL
}

static void csv_cholmod(bench_csv_row *row, const chol_run *r)
{
    bench_csv_stat(row, "cholmod_analyze", r->analyze);
    bench_csv_stat(row, "cholmod_factor", r->factor);
    bench_csv_stat(row, "cholmod_solve", r->solve);
    bench_csv_num(row, "cholmod_factor_values", "%.0f", r->factor_values);
    bench_csv_num(row, "cholmod_lnz", "%.0f", r->lnz);
    bench_csv_num(row, "cholmod_flops", "%.6g", r->flops);
    bench_csv_num(row, "cholmod_gflops", "%.4f", gflops(r));
    bench_csv_num(row, "cholmod_supernodes", "%.0f", r->supernodes);
    bench_csv_num(row, "cholmod_peak_mb", "%.3f", r->peak_bytes >= 0 ? r->peak_bytes / 1e6 : -1);
    bench_csv_num(row, "cholmod_residual", "%.3e", r->ok ? r->residual : -1);
    bench_csv_text(row, "cholmod_note", r->note);
}

/* the residual check of one sbm run against CHOLMOD's (or 1e-8 without it) */
static int residual_ok(const chol_run *s, const chol_run *c)
{
    if (!s->ok) return 1; /* a failure is reported as such, not as a wrong answer */
    double lim = 1e-8;
    if (c->ok && 100 * c->residual > lim) lim = 100 * c->residual;
    return s->residual <= lim;
}

/* v with fmt, or "-" when not measured (v < 0) */
static const char *fnum(char *buf, const char *fmt, double v)
{
    if (!(v >= 0)) return "-";
    snprintf(buf, 32, fmt, v);
    return buf;
}

static const char *fms(char *buf, bench_stat s)
{
    return fnum(buf, s.med < 10 ? "%.3f" : s.med < 1000 ? "%.1f" : "%.0f", s.med);
}

/* the columns of one run: plan, factor, solve, nnz(L), GF/s, peak MB, residual */
static void print_run(const chol_run *r)
{
    char b[7][32];
    printf("%8s %9s %8s %11s %6s %8s %8s | ", fms(b[0], r->analyze), fms(b[1], r->factor),
           fms(b[2], r->solve), fnum(b[3], "%.0f", r->factor_values),
           fnum(b[4], "%.2f", gflops(r)), fnum(b[5], "%.1f", r->peak_bytes / 1e6),
           fnum(b[6], "%.1e", r->ok ? r->residual : -1));
}

static void print_row(const chol_matrix *m, const chol_run *s, const chol_run *c,
                      const chol_run *g, int check)
{
    char b[6][32];
    printf("%-26s %-6s %d %8lld %10lld | ", m->name, m->kind, m->b, (long long)m->n,
           (long long)m->nnz);
    print_run(s);
    print_run(c);
    printf("%5s %5s | %9s %7s %7s%s\n", fnum(b[0], "%.2f", ratio(c->analyze, s->analyze)),
           fnum(b[1], "%.2f", ratio(c->factor, s->factor)), fms(b[2], g->factor),
           fnum(b[3], "%.2f", ratio(s->factor, g->factor)),
           fnum(b[4], "%.2f", ratio(c->factor, g->factor)), check ? "" : "  BAD residual");
    bench_stat_str(b[0], 32, s->factor, "%.3f");
    bench_stat_str(b[1], 32, c->factor, "%.3f");
    bench_stat_str(b[2], 32, g->factor, "%.3f");
    printf("    factor ms spread: sbm %s  CHOLMOD %s  GPU %s  (matrix built in %.2f s)\n", b[0],
           b[1], b[2], m->build_s);
    printf("    block diagonal of A^-1 ms (x factor): sbm %s (%s)  GPU %s (%s)\n",
           fms(b[3], s->inverse), fnum(b[4], "%.2f", ratio(s->inverse, s->factor)),
           fms(b[5], g->inverse), fnum(b[0], "%.2f", ratio(g->inverse, g->factor)));
    if (!s->ok) printf("    sbm: %s\n", s->note);
    if (!c->ok) printf("    %s%s\n", strncmp(c->note, "CHOLMOD", 7) ? "CHOLMOD: " : "", c->note);
    if (!g->ok && g->note[0]) printf("    GPU: %s\n", g->note);
}

static void print_header(void)
{
    printf("%-26s %-6s %s %8s %10s | %8s %9s %8s %11s %6s %8s %8s | %8s %9s %8s %11s %6s %8s "
           "%8s | %5s %5s | %9s %7s %7s\n",
           "matrix", "kind", "b", "n", "nnz(A)", "plan ms", "factor ms", "solve ms", "nnz(L)",
           "GF/s", "peak MB", "resid", "anlz ms", "factor ms", "solve ms", "nnz(L)", "GF/s",
           "peak MB", "resid", "anlz", "fact", "gpu fact", "cpu/gpu", "chm/gpu");
    printf("%-26s %-6s %s %8s %10s | %-66s | %-66s | %-11s | %s\n", "", "", " ", "", "",
           "sbm (CPU)", "CHOLMOD", "CHOLMOD/sbm", "sbm CUDA: ms, CPU sbm/GPU, CHOLMOD/GPU");
}

/* ---- main ---------------------------------------------------------------------------------- */

static int usage(const char *why)
{
    fprintf(stderr,
            "%s%ssbm-bench-chol [--g2o FILE]... [--bal FILE]... [--generate C,P,K]... "
            "[--poses D:N]... [FILE]...\n"
            "               [--reps N] [--phase-budget S] [--threads N] "
            "[--backend cpu|cuda|all] [--no-cholmod] [--tmp DIR] [--csv FILE]\n",
            why ? why : "", why ? "\n" : "");
    return 2;
}

static int add_input(options *o, input in)
{
    if (o->nin >= MAX_INPUTS) return -1;
    o->in[o->nin++] = in;
    return 0;
}

static int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->reps = 5;
    o->phase_budget = 10.0;
    o->cpu = o->cuda = o->cholmod = 1;
    o->tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        input in = {0, NULL, 0, 0, 0};
        long long x = 0, y = 0;
        int z = 0, used = 1, bad = 0;
        if (strcmp(a, "--no-cholmod") == 0) {
            o->cholmod = 0;
            used = 0;
        } else if (a[0] != '-') { /* a file: g2o if its name says so, else BAL */
            in.type = strstr(a, ".g2o") ? 'g' : 'b';
            in.path = a;
            bad = add_input(o, in);
            used = 0;
        } else if (v == NULL) {
            return usage("missing value");
        } else if (strcmp(a, "--g2o") == 0 || strcmp(a, "--bal") == 0) {
            in.type = a[2] == 'g' ? 'g' : 'b';
            in.path = v;
            bad = add_input(o, in);
        } else if (strcmp(a, "--generate") == 0) {
            bad = sscanf(v, "%lld,%lld,%d", &x, &y, &z) != 3 || x < 2 || y < 1 || z < 2;
            in.type = 'G', in.a = x, in.b = y, in.c = z;
            bad = bad || add_input(o, in);
        } else if (strcmp(a, "--poses") == 0) {
            bad = sscanf(v, "%lld:%lld", &x, &y) != 2 || (x != 2 && x != 3) || y < 2;
            in.type = 'p', in.a = x, in.b = y;
            bad = bad || add_input(o, in);
        } else if (strcmp(a, "--reps") == 0) {
            o->reps = atoi(v);
            bad = o->reps < 1 || o->reps > 64;
        } else if (strcmp(a, "--phase-budget") == 0) {
            o->phase_budget = atof(v);
            bad = !(o->phase_budget > 0);
        } else if (strcmp(a, "--threads") == 0) {
            o->threads = atoi(v);
            bad = o->threads < 1;
        } else if (strcmp(a, "--backend") == 0) {
            o->cpu = strcmp(v, "cuda") != 0;
            o->cuda = strcmp(v, "cpu") != 0;
            bad = strcmp(v, "cpu") && strcmp(v, "cuda") && strcmp(v, "all");
        } else if (strcmp(a, "--tmp") == 0) {
            o->tmp = v;
        } else if (strcmp(a, "--csv") == 0) {
            o->csv = v;
        } else {
            return usage("unknown option");
        }
        if (bad) {
            if (a[0] != '-')
                fprintf(stderr, "sbm-bench-chol: more than %d inputs at %s\n", MAX_INPUTS, a);
            else
                fprintf(stderr, "sbm-bench-chol: bad value for %s: %s\n", a, v);
            return 2;
        }
        i += used;
    }
    if (o->nin == 0) return usage("no input: give --g2o, --bal, --generate or --poses");
    return 0;
}

/* With --threads N: make OPENBLAS_NUM_THREADS and OMP_NUM_THREADS N, re-executing the program
 * when they were not (the libraries read them when they are loaded). */
static void apply_threads(const options *o, char **argv)
{
    if (o->threads <= 0) return;
    char want[16];
    snprintf(want, sizeof want, "%d", o->threads);
    const char *have = getenv("OPENBLAS_NUM_THREADS"), *omp = getenv("OMP_NUM_THREADS");
    if (have && strcmp(have, want) == 0 && omp && strcmp(omp, want) == 0) return;
    setenv("OPENBLAS_NUM_THREADS", want, 1);
    setenv("OMP_NUM_THREADS", want, 1);
    execv("/proc/self/exe", argv);
    perror("sbm-bench-chol: re-executing with the thread count"); /* then run as is */
}

static int threads_in_use(void)
{
    if (openblas_get_num_threads) return openblas_get_num_threads();
    const char *e = getenv("OPENBLAS_NUM_THREADS");
    return e ? atoi(e) : -1;
}

/* A context of backend with the counting allocator cnt; NULL (and a note) if none. */
static sbm_ctx *open_ctx(sbm_backend backend, counter *cnt, char *note, size_t size)
{
    sbm_ctx *ctx = NULL;
    if (sbm_ctx_create(&ctx, backend, 0) != SBM_SUCCESS) {
        snprintf(note, size, "%s", sbm_ctx_last_error(NULL));
        return NULL;
    }
    cnt->device = backend == SBM_BACKEND_CUDA;
#ifndef SBM_BENCH_HAVE_CUDART
    if (cnt->device) return ctx; /* no cudaMalloc here: the default allocator, peak unknown */
#endif
    const sbm_allocator a = {counting_alloc, counting_free, cnt};
    if (sbm_ctx_set_allocator(ctx, &a) != SBM_SUCCESS) {
        snprintf(note, size, "%s", sbm_ctx_last_error(ctx));
        sbm_ctx_destroy(ctx);
        return NULL;
    }
    return ctx;
}

static int build_input(sbm_ctx *host, const input *in, const options *o, chol_matrix *m,
                       char *err, size_t n)
{
    switch (in->type) {
    case 'g': return chol_input_g2o(host, in->path, m, err, n);
    case 'b': return chol_input_bal(host, in->path, m, err, n);
    case 'G': return chol_input_ba_generated(host, in->a, in->b, in->c, m, err, n);
    default: return chol_input_pose_graph(host, (int)in->a, in->b, o->tmp, m, err, n);
    }
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse_options(argc, argv, &o);
    if (rc != 0) return rc;
    apply_threads(&o, argv);
    static counter cpu_cnt, gpu_cnt;
    char gpu_note[200] = "", err[400];
    sbm_ctx *host = NULL, *cpu = NULL, *gpu = NULL;
    if (sbm_ctx_create(&host, SBM_BACKEND_CPU, 0) != SBM_SUCCESS ||
        (cpu = open_ctx(SBM_BACKEND_CPU, &cpu_cnt, err, sizeof err)) == NULL) {
        fprintf(stderr, "sbm-bench-chol: CPU context: %s\n", sbm_ctx_last_error(NULL));
        return 1;
    }
    if (!o.cuda)
        snprintf(gpu_note, sizeof gpu_note, "cuda: not asked (--backend cpu)");
    else if (!sbm_has_cuda())
        snprintf(gpu_note, sizeof gpu_note, "cuda: not built (SBM_CUDA off)");
    else if (sbm_cuda_device_count() < 1)
        snprintf(gpu_note, sizeof gpu_note, "cuda: no device");
    else
        gpu = open_ctx(SBM_BACKEND_CUDA, &gpu_cnt, gpu_note, sizeof gpu_note);
    FILE *csv = o.csv ? fopen(o.csv, "w") : NULL;
    bench_csv_row row;
    if ((o.csv && !csv) || bench_csv_row_init(&row, csv_cols) != 0) {
        fprintf(stderr, "sbm-bench-chol: cannot open %s\n", o.csv ? o.csv : "the CSV row");
        return 1;
    }
    if (csv) bench_csv_header(csv, csv_cols);
    const int threads = threads_in_use();
    printf("sbm-bench-chol: OpenBLAS threads %d (both sbm and CHOLMOD); reps %d after a warm-up "
           "(phase budget %g s); %s; %s\n", threads, o.reps, o.phase_budget,
           o.cholmod ? cholmod_describe() : "CHOLMOD: not asked (--no-cholmod)",
           gpu ? "cuda: device 0" : gpu_note);
    print_header();
    for (int k = 0; k < o.nin; k++) {
        chol_matrix m;
        memset(&m, 0, sizeof m);
        chol_run s = chol_run_none(), c = chol_run_none(), g = chol_run_none();
        if (build_input(host, &o.in[k], &o, &m, err, sizeof err) != 0) {
            printf("%-26s skipped: %s\n", m.name[0] ? m.name : "input", err);
            fflush(stdout);
            chol_matrix_free(&m);
            continue;
        }
        if (o.cpu) run_sbm(cpu, &cpu_cnt, &m, &o, &s);
        else snprintf(s.note, sizeof s.note, "not asked (--backend cuda)");
        if (gpu) run_sbm(gpu, &gpu_cnt, &m, &o, &g);
        else snprintf(g.note, sizeof g.note, "%s", gpu_note);
        if (o.cholmod) run_cholmod(&m, o.reps, o.phase_budget, &c);
        else snprintf(c.note, sizeof c.note, "not asked (--no-cholmod)");
        const int check = residual_ok(&s, &c) && residual_ok(&g, &c);
        if (!check) rc = 1;
        print_row(&m, &s, &c, &g, check);
        fflush(stdout);
        if (csv) {
            bench_csv_text(&row, "matrix", m.name);
            bench_csv_text(&row, "kind", m.kind);
            bench_csv_num(&row, "block", "%.0f", m.b);
            bench_csv_num(&row, "block_cols", "%.0f", (double)m.nb);
            bench_csv_num(&row, "n", "%.0f", (double)m.n);
            bench_csv_num(&row, "nnz_a", "%.0f", (double)m.nnz);
            bench_csv_num(&row, "threads", "%.0f", threads);
            bench_csv_num(&row, "build_s", "%.3f", m.build_s);
            csv_run(&row, "sbm", &s, 1);
            csv_cholmod(&row, &c);
            csv_run(&row, "gpu", &g, 0);
            bench_csv_num(&row, "ratio_analyze", "%.4f", ratio(c.analyze, s.analyze));
            bench_csv_num(&row, "ratio_factor", "%.4f", ratio(c.factor, s.factor));
            bench_csv_num(&row, "ratio_gpu_cpu", "%.4f", ratio(s.factor, g.factor));
            bench_csv_num(&row, "ratio_cholmod_gpu", "%.4f", ratio(c.factor, g.factor));
            bench_csv_text(&row, "check", check ? "ok" : "BAD");
            bench_csv_write(csv, &row);
            fflush(csv);
        }
        chol_matrix_free(&m);
    }
    bench_csv_row_free(&row);
    if (csv) fclose(csv);
    sbm_ctx_destroy(gpu);
    sbm_ctx_destroy(cpu);
    sbm_ctx_destroy(host);
    return rc;
}
