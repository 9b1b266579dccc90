/* SPDX-License-Identifier: BSD-3-Clause */
/* One BA or SLAM solve of sbm-bench-ba (ba/ba.h): a fresh context with the counting allocator
 * (peak memory, an optional cap), the solver's reports collected by its callback, the medians,
 * the table line and the CSV rows. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ba.h"
#include "common/counting_alloc.h"

static void on_iteration(void *user, const sbm_iteration_report *rep)
{
    ba_run *r = user;
    if (r->nrep < BA_MAX_REPORTS) r->rep[r->nrep++] = *rep;
}

void ba_run_init(ba_run *r, const char *section, const char *problem, sbm_backend backend,
                 int max_iterations)
{
    memset(r, 0, sizeof *r);
    snprintf(r->section, sizeof r->section, "%s", section);
    snprintf(r->problem, sizeof r->problem, "%s", problem);
    r->backend = backend;
    r->max_iterations = max_iterations;
    r->dims.w_blocks = r->dims.s_blocks = -1;
    r->peak_bytes = -1.0;
    r->wall_s = -1.0;
    bench_device_name(backend == SBM_BACKEND_CUDA, r->device, sizeof r->device);
}

/* A context of r->backend counting its allocations in *cnt (capped at r->cap_bytes), with
 * r->budget_bytes; NULL with r->status and r->message on failure. */
static sbm_ctx *open_ctx(ba_run *r, counter **cnt)
{
    sbm_ctx *ctx = NULL;
    *cnt = calloc(1, sizeof **cnt);
    if (!*cnt) {
        r->status = SBM_ERR_OUT_OF_MEMORY;
        snprintf(r->message, sizeof r->message, "out of host memory for the counting allocator");
        return NULL;
    }
    (*cnt)->device = r->backend == SBM_BACKEND_CUDA;
    (*cnt)->cap = r->cap_bytes;
    r->status = sbm_ctx_create(&ctx, r->backend, 0);
    if (r->status != SBM_SUCCESS) {
        snprintf(r->message, sizeof r->message, "sbm_ctx_create: %s", sbm_ctx_last_error(NULL));
        free(*cnt);
        *cnt = NULL;
        return NULL;
    }
#ifndef SBM_BENCH_HAVE_CUDART
    if (r->backend == SBM_BACKEND_CUDA) { /* no cudaMalloc here: the library's own allocator */
        free(*cnt);
        *cnt = NULL;
    }
#endif
    const sbm_allocator a = {counting_alloc, counting_free, *cnt};
    if (*cnt) r->status = sbm_ctx_set_allocator(ctx, &a);
    if (r->status == SBM_SUCCESS && r->budget_bytes > 0)
        r->status = sbm_ctx_set_memory_budget(ctx, r->budget_bytes);
    if (r->status != SBM_SUCCESS) {
        snprintf(r->message, sizeof r->message, "%s", sbm_ctx_last_error(ctx));
        sbm_ctx_destroy(ctx);
        free(*cnt);
        *cnt = NULL;
        return NULL;
    }
    return ctx;
}

static void close_ctx(ba_run *r, sbm_ctx *ctx, counter *cnt)
{
    if (r->status != SBM_SUCCESS)
        snprintf(r->message, sizeof r->message, "%s: %s", sbm_status_name(r->status),
                 sbm_ctx_last_error(ctx));
    r->peak_bytes = cnt && !cnt->lost ? (double)cnt->peak : -1.0;
    sbm_ctx_destroy(ctx);
    free(cnt);
}

static sbm_solver_options options_of(ba_run *r)
{
    sbm_solver_options o = sbm_solver_default_options();
    o.max_iterations = r->max_iterations;
    o.linear_solver = SBM_LINEAR_AUTO;
    o.callback = on_iteration;
    o.user = r;
    return o;
}

typedef sbm_status (*solve_fn)(sbm_ctx *ctx, void *problem, const sbm_solver_options *options,
                               sbm_solver_summary *summary);

static sbm_status solve_ba(sbm_ctx *ctx, void *problem, const sbm_solver_options *options,
                           sbm_solver_summary *summary)
{
    return sbm_ba_solve(ctx, problem, options, summary);
}

static sbm_status solve_slam(sbm_ctx *ctx, void *problem, const sbm_solver_options *options,
                             sbm_solver_summary *summary)
{
    return sbm_slam_solve(ctx, problem, options, summary);
}

/* fn on a fresh context of r's backend, timed; the estimate (nparts arrays parts[k] of sizes[k]
 * doubles) restored afterwards, so that the next run starts from the same point */
static int run_solve(ba_run *r, solve_fn fn, void *problem, double *const *parts,
                     const size_t *sizes, int nparts)
{
    size_t total = 1, off = 0;
    for (int k = 0; k < nparts; k++) total += sizes[k];
    double *saved = malloc(sizeof(double) * total);
    counter *cnt = NULL;
    sbm_ctx *ctx = saved ? open_ctx(r, &cnt) : NULL;
    if (!ctx) {
        if (!saved) snprintf(r->message, sizeof r->message, "out of host memory");
        free(saved);
        return -1;
    }
    for (int k = 0; k < nparts; off += sizes[k++])
        memcpy(saved + off, parts[k], sizeof(double) * sizes[k]);
    const sbm_solver_options o = options_of(r);
    const double t0 = bench_now_s();
    r->status = fn(ctx, problem, &o, &r->sum);
    r->wall_s = bench_now_s() - t0;
    close_ctx(r, ctx, cnt);
    off = 0;
    for (int k = 0; k < nparts; off += sizes[k++])
        memcpy(parts[k], saved + off, sizeof(double) * sizes[k]);
    free(saved);
    return 0;
}

int ba_run_bal(ba_run *r, sbm_bal_problem *p)
{
    const sbm_bal_info in = sbm_bal_get_info(p);
    r->cameras = in.cameras, r->points = in.points, r->observations = in.observations;
    double *const parts[2] = {in.camera_params, in.point_params};
    const size_t sizes[2] = {9 * (size_t)in.cameras, 3 * (size_t)in.points};
    return run_solve(r, solve_ba, p, parts, sizes, 2);
}

int ba_run_slam(ba_run *r, sbm_g2o_graph *g)
{
    const sbm_g2o_info in = sbm_g2o_get_info(g);
    r->vertices = in.vertices, r->edges = in.edges;
    double *const parts[1] = {in.poses};
    const size_t sizes[1] = {(size_t)in.pose_size * (size_t)in.vertices};
    return run_solve(r, solve_slam, g, parts, sizes, 1);
}

/* ---- medians -------------------------------------------------------------------------------- */

static double median(double *v, int n) { return n > 0 ? bench_stat_of(v, n).med : -1.0; }

ba_medians ba_medians_of(const ba_run *r)
{
    ba_medians m;
    double lin[BA_MAX_REPORTS], sch[BA_MAX_REPORTS], sol[BA_MAX_REPORTS], upd[BA_MAX_REPORTS];
    double tot[BA_MAX_REPORTS], pcg[BA_MAX_REPORTS], sum_tot = 0.0, sum_lin = 0.0;
    int nl = 0, ns = 0, nv = 0, nu = 0, np = 0;
    for (int k = 0; k < r->nrep; k++) {
        const sbm_iteration_report *q = &r->rep[k];
        sum_tot += q->time_total;
        sum_lin += q->time_linearize;
        if (q->time_linearize > 0) {
            lin[nl] = 1e3 * q->time_linearize;
            tot[nl++] = 1e3 * q->time_total;
        }
        if (q->time_schur > 0) sch[ns++] = 1e3 * q->time_schur;
        if (q->time_solve > 0) sol[nv++] = 1e3 * q->time_solve;
        if (q->time_update > 0) upd[nu++] = 1e3 * q->time_update;
        pcg[np++] = q->linear_iterations;
    }
    m.linearizations = nl;
    m.lin = median(lin, nl);
    if (nl == 0 && r->nrep > 0) {
        /* the setup's linearisation, and the final one after an accepted last step */
        const sbm_iteration_report *last = &r->rep[r->nrep - 1];
        const int count = 1 + (last->accepted && last->time_linearize == 0);
        m.lin = 1e3 * (r->sum.time_linearize - sum_lin) / count;
    }
    m.schur = median(sch, ns);
    m.solve = median(sol, nv);
    m.update = median(upd, nu);
    m.pcg = median(pcg, np);
    m.total = nl > 0 ? median(tot, nl) : -1.0;
    if (nl == 0 && r->nrep > 0)
        m.total = fmax(m.lin, 0) + fmax(m.schur, 0) + fmax(m.solve, 0) + fmax(m.update, 0);
    m.setup_s = r->wall_s >= 0 ? r->wall_s - sum_tot : -1.0;
    return m;
}

/* ---- output --------------------------------------------------------------------------------- */

const char *const ba_cols[] = {
    "kind", "section", "problem", "backend", "device", "threads", "cameras", "points",
    "observations", "w_blocks", "s_blocks", "vertices", "edges", "max_iterations", "iterations",
    "iteration", "linearizations", "linear_solver", "accepted", "lin_ms", "schur_ms", "solve_ms",
    "update_ms", "total_ms", "pcg_its", "cost_before", "cost", "lambda", "initial_cost",
    "final_cost", "stop", "converged", "wall_s", "setup_s", "peak_mb", "cap_mb", "budget_mb",
    "bytes_lin", "bytes_schur", "bytes_solve", "bytes_update", "floor_lin_ms", "floor_schur_ms",
    "floor_solve_ms", "floor_update_ms", "floor_total_ms", "copy_gbs", "device_mb", "status",
    "message", "note", NULL};

static const char *solver_name(sbm_linear_solver s)
{
    switch (s) {
    case SBM_LINEAR_DENSE_CHOLESKY: return "dense";
    case SBM_LINEAR_PCG: return "pcg";
    case SBM_LINEAR_PCG_MATRIX_FREE: return "pcg-matrix-free";
    case SBM_LINEAR_SPARSE_CHOLESKY: return "sparse";
    default: return "auto";
    }
}

static const char *backend_name(sbm_backend b) { return b == SBM_BACKEND_CUDA ? "cuda" : "cpu"; }

static int cpu_threads(void)
{
    const char *e = getenv("SBM_NUM_THREADS");
    return e && atoi(e) > 0 ? atoi(e) : (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/* the columns every row of a run shares */
static void common(const ba_run *r, const char *kind, bench_csv_row *cr)
{
    bench_csv_text(cr, "kind", kind);
    bench_csv_text(cr, "section", r->section);
    bench_csv_text(cr, "problem", r->problem);
    bench_csv_text(cr, "backend", backend_name(r->backend));
    bench_csv_text(cr, "device", r->device);
    bench_csv_num(cr, "threads", "%.0f", r->backend == SBM_BACKEND_CPU ? cpu_threads() : -1);
    const int ba = r->observations > 0;
    bench_csv_num(cr, "cameras", "%.0f", ba ? (double)r->cameras : -1);
    bench_csv_num(cr, "points", "%.0f", ba ? (double)r->points : -1);
    bench_csv_num(cr, "observations", "%.0f", ba ? (double)r->observations : -1);
    bench_csv_num(cr, "w_blocks", "%.0f", (double)r->dims.w_blocks);
    bench_csv_num(cr, "s_blocks", "%.0f", (double)r->dims.s_blocks);
    bench_csv_num(cr, "vertices", "%.0f", ba ? -1 : (double)r->vertices);
    bench_csv_num(cr, "edges", "%.0f", ba ? -1 : (double)r->edges);
    bench_csv_num(cr, "max_iterations", "%.0f", r->max_iterations);
    bench_csv_text(cr, "linear_solver", solver_name(r->sum.linear_solver));
}

static void floors(const ba_run *r, const ba_medians *m, double copy_gbs, bench_csv_row *cr,
                   double *total_floor)
{
    *total_floor = -1.0;
    if (r->observations <= 0) return;
    const ba_bytes b = ba_bytes_of(&r->dims, r->sum.linear_solver);
    const double solve = ba_solve_bytes(&b, r->sum.linear_solver, m->pcg);
    const double v[4] = {b.lin, b.schur, solve, b.update};
    const char *bc[4] = {"bytes_lin", "bytes_schur", "bytes_solve", "bytes_update"};
    const char *fc[4] = {"floor_lin_ms", "floor_schur_ms", "floor_solve_ms", "floor_update_ms"};
    double tf = 0.0;
    for (int k = 0; k < 4; k++) {
        bench_csv_num(cr, bc[k], "%.0f", v[k]);
        bench_csv_num(cr, fc[k], "%.6f", ba_floor_ms(v[k], copy_gbs));
        if (v[k] >= 0) tf += v[k]; /* a Cholesky solve has no floor: left out of the sum */
    }
    *total_floor = ba_floor_ms(tf, copy_gbs);
    bench_csv_num(cr, "floor_total_ms", "%.6f", *total_floor);
    bench_csv_num(cr, "copy_gbs", "%.1f", copy_gbs);
}

static void fmt_ms(char *buf, size_t n, double ms)
{
    if (ms < 0) snprintf(buf, n, "-");
    else if (ms < 10) snprintf(buf, n, "%.3f", ms);
    else snprintf(buf, n, "%.1f", ms);
}

void ba_report(const ba_run *r, double copy_gbs, bench_csv_row *cr, FILE *csv)
{
    const ba_medians m = ba_medians_of(r);
    const int ok = r->status == SBM_SUCCESS;
    common(r, "run", cr);
    bench_csv_num(cr, "iterations", "%.0f", r->nrep);
    bench_csv_num(cr, "linearizations", "%.0f", m.linearizations);
    bench_csv_num(cr, "lin_ms", "%.6f", m.lin);
    bench_csv_num(cr, "schur_ms", "%.6f", m.schur);
    bench_csv_num(cr, "solve_ms", "%.6f", m.solve);
    bench_csv_num(cr, "update_ms", "%.6f", m.update);
    bench_csv_num(cr, "total_ms", "%.6f", m.total);
    bench_csv_num(cr, "pcg_its", "%.1f", m.pcg);
    bench_csv_num(cr, "accepted", "%.0f", r->sum.accepted);
    if (ok || r->nrep > 0) {
        bench_csv_num(cr, "initial_cost", "%.15e", r->sum.initial_cost);
        bench_csv_num(cr, "final_cost", "%.15e", r->sum.final_cost);
        bench_csv_text(cr, "stop", sbm_stop_reason_name(r->sum.stop_reason));
        bench_csv_num(cr, "converged", "%.0f", sbm_stop_reason_converged(r->sum.stop_reason));
    }
    bench_csv_num(cr, "wall_s", "%.6f", r->wall_s);
    bench_csv_num(cr, "setup_s", "%.6f", m.setup_s);
    bench_csv_num(cr, "peak_mb", "%.1f", r->peak_bytes / 1e6);
    bench_csv_num(cr, "cap_mb", "%.1f", r->cap_bytes ? (double)r->cap_bytes / 1e6 : -1);
    bench_csv_num(cr, "budget_mb", "%.1f", r->budget_bytes ? (double)r->budget_bytes / 1e6 : -1);
    double tf = -1.0;
    if (ok) floors(r, &m, copy_gbs, cr, &tf);
    bench_csv_text(cr, "status", sbm_status_name(r->status));
    bench_csv_text(cr, "message", r->message);
    bench_csv_text(cr, "note", r->note);
    bench_csv_write(csv, cr);
    for (int k = 0; k < r->nrep; k++) {
        const sbm_iteration_report *q = &r->rep[k];
        common(r, "iter", cr);
        bench_csv_num(cr, "iteration", "%.0f", q->iteration);
        bench_csv_num(cr, "accepted", "%.0f", q->accepted);
        bench_csv_num(cr, "lin_ms", "%.6f", 1e3 * q->time_linearize);
        bench_csv_num(cr, "schur_ms", "%.6f", 1e3 * q->time_schur);
        bench_csv_num(cr, "solve_ms", "%.6f", 1e3 * q->time_solve);
        bench_csv_num(cr, "update_ms", "%.6f", 1e3 * q->time_update);
        bench_csv_num(cr, "total_ms", "%.6f", 1e3 * q->time_total);
        bench_csv_num(cr, "pcg_its", "%.0f", q->linear_iterations);
        bench_csv_num(cr, "cost_before", "%.15e", q->cost_before);
        bench_csv_num(cr, "cost", "%.15e", q->cost);
        bench_csv_num(cr, "lambda", "%.6e", q->lambda);
        bench_csv_write(csv, cr);
    }
    char t[5][24];
    fmt_ms(t[0], sizeof t[0], m.lin);
    fmt_ms(t[1], sizeof t[1], m.schur);
    fmt_ms(t[2], sizeof t[2], m.solve);
    fmt_ms(t[3], sizeof t[3], m.update);
    fmt_ms(t[4], sizeof t[4], m.total);
    const int64_t size = r->observations > 0 ? r->observations : r->edges;
    printf("%-8s %-30s %-4s %9lld %-15s %3d  %8s %8s %8s %8s %9s  %5.0f  %8.1f",
           r->section, r->problem, backend_name(r->backend), (long long)size,
           solver_name(r->sum.linear_solver), r->nrep, t[0], t[1], t[2], t[3], t[4],
           m.pcg < 0 ? 0 : m.pcg, r->peak_bytes / 1e6);
    if (tf > 0 && m.total > 0) printf("  x%.0f floor", m.total / tf);
    if (ok) printf("  cost %.6e -> %.12e", r->sum.initial_cost, r->sum.final_cost);
    else printf("  %s", r->message);
    printf("%s%s\n", r->note[0] ? "  " : "", r->note);
    fflush(stdout);
}

void ba_report_skip(const char *section, const char *problem, sbm_backend backend,
                    int64_t observations, const char *why, bench_csv_row *cr, FILE *csv)
{
    bench_csv_text(cr, "kind", "skip");
    bench_csv_text(cr, "section", section);
    bench_csv_text(cr, "problem", problem);
    bench_csv_text(cr, "backend", backend_name(backend));
    bench_csv_num(cr, "observations", "%.0f", observations > 0 ? (double)observations : -1);
    bench_csv_text(cr, "status", "skipped");
    bench_csv_text(cr, "note", why);
    bench_csv_write(csv, cr);
    printf("%-8s %-30s %-4s %9lld skipped: %s\n", section, problem, backend_name(backend),
           (long long)observations, why);
    fflush(stdout);
}

void ba_report_yardstick(const char *device, double gbs, const char *what, double device_bytes,
                         bench_csv_row *cr, FILE *csv)
{
    bench_csv_text(cr, "kind", "yardstick");
    bench_csv_text(cr, "section", "yardstick");
    bench_csv_text(cr, "device", device);
    bench_csv_num(cr, "copy_gbs", "%.1f", gbs);
    bench_csv_num(cr, "device_mb", "%.0f", device_bytes > 0 ? device_bytes / 1e6 : -1);
    bench_csv_text(cr, "note", what);
    bench_csv_write(csv, cr);
    printf("yardstick: %s: %.1f GB/s (%s)%s\n", device, gbs, what,
           device_bytes > 0 ? "" : "; no device memory figure");
    fflush(stdout);
}
