/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench-dist: bundle adjustment over several ranks (sbm_ba_solve_dist) on the trajectory
 * layout of sbm_bal_generate (cameras along a loop, each point seen by K of the 2K+1 nearest
 * cameras): the time per LM iteration of the one-context solver (matrix-free PCG) and of the
 * groups of 1, 2, 4, ... ranks, every solve with the same fixed work per iteration (PCG runs to
 * its cap: tolerance 1e-300), so the times compare; the bytes sent per PCG iteration against
 * MegBA's two full-vector all-reduces and the share of the time in the communicator.
 *   sbm-bench-dist [--cpu] [--cameras C] [--points P] [--obs K] [--ranks 1,2,4]
 *                  [--iterations N] [--pcg-iterations M] [--weak] [--partition graph|index]
 *                  [--csv FILE]
 * --cpu: CPU contexts over the host stand-in (no GPU needed), else GPUs through NCCL (the run
 * stops at the first count the machine does not have). --weak: the problem of C cameras and P
 * points per rank (weak scaling), else one problem for every count (strong scaling). CSV rows
 * (one per solve) go to FILE, or to $OUT/dist-<strong|weak>.csv when OUT is set. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sbm.h"
#include "sbm_ba.h"
#include "sbm_dist.h"

typedef struct args {
    int cpu, weak, iterations, pcg, nranks, ranks[16];
    long long cameras, points;
    int obs;
    sbm_partition_method partition;
    const char *csv;
} args;

typedef struct timing {
    int n;
    double t; /* seconds of the iterations (callbacks' time_total) */
} timing;

static void on_iteration(void *user, const sbm_iteration_report *r)
{
    timing *t = user;
    t->n++;
    t->t += r->time_total;
}

static int parse(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    a->cameras = 20000, a->points = 2500000, a->obs = 4, a->iterations = 5, a->pcg = 50;
    a->nranks = 3, a->ranks[0] = 1, a->ranks[1] = 2, a->ranks[2] = 4;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--cpu")) a->cpu = 1;
        else if (!strcmp(o, "--weak")) a->weak = 1;
        else if (!v) return fprintf(stderr, "sbm-bench-dist: %s needs a value\n", o), 0;
        else if (!strcmp(o, "--cameras")) a->cameras = atoll(v), i++;
        else if (!strcmp(o, "--points")) a->points = atoll(v), i++;
        else if (!strcmp(o, "--obs")) a->obs = atoi(v), i++;
        else if (!strcmp(o, "--iterations")) a->iterations = atoi(v), i++;
        else if (!strcmp(o, "--pcg-iterations")) a->pcg = atoi(v), i++;
        else if (!strcmp(o, "--csv")) a->csv = v, i++;
        else if (!strcmp(o, "--partition")) {
            a->partition = !strcmp(v, "index") ? SBM_PARTITION_INDEX : SBM_PARTITION_GRAPH;
            i++;
        } else if (!strcmp(o, "--ranks")) {
            a->nranks = 0;
            for (char *s = argv[++i]; *s && a->nranks < 16;) {
                a->ranks[a->nranks++] = (int)strtol(s, &s, 10);
                if (*s == ',') s++;
                else if (*s) return fprintf(stderr, "sbm-bench-dist: bad --ranks '%s'\n", v), 0;
            }
        } else {
            return fprintf(stderr, "sbm-bench-dist: unknown option %s\n", o), 0;
        }
    }
    if (a->cameras < 2 || a->points < 1 || a->obs < 2 || a->iterations < 1 || a->pcg < 1)
        return fprintf(stderr, "sbm-bench-dist: sizes and counts must be positive\n"), 0;
    return 1;
}

static sbm_solver_options fixed_work(const args *a, timing *t)
{
    sbm_solver_options o = sbm_solver_default_options();
    o.max_iterations = a->iterations;
    o.linear_solver = SBM_LINEAR_PCG_MATRIX_FREE;
    o.pcg_tolerance = 1e-300; /* every PCG runs to its cap: the same work on every count */
    o.pcg_max_iterations = a->pcg;
    o.function_tolerance = o.gradient_tolerance = o.parameter_tolerance = 0.0;
    o.callback = on_iteration;
    o.user = t;
    return o;
}

static sbm_bal_problem *make(sbm_ctx *host, const args *a, int scale)
{
    sbm_bal_generate_options g =
        sbm_bal_generate_defaults(a->cameras * scale, a->points * scale, a->obs, 1);
    g.layout = SBM_BAL_LAYOUT_TRAJECTORY;
    sbm_bal_problem *p = NULL;
    if (sbm_bal_generate(host, &g, &p) != SBM_SUCCESS)
        fprintf(stderr, "sbm-bench-dist: %s\n", sbm_ctx_last_error(host));
    return p;
}

static FILE *open_csv(const args *a)
{
    char path[1024];
    const char *out = getenv("OUT");
    if (a->csv) snprintf(path, sizeof path, "%s", a->csv);
    else if (out && *out) snprintf(path, sizeof path, "%s/dist-%s%s.csv", out, a->weak ? "weak" : "strong", a->cpu ? "-cpu" : "");
    else return NULL;
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "sbm-bench-dist: cannot write %s\n", path);
        return NULL;
    }
    fprintf(f, "mode,backend,ranks,partition,cameras,points,observations,iterations,"
               "pcg_per_iteration,ms_per_iteration,speedup,bytes_per_pcg,megba_bytes_per_pcg,"
               "megba_ratio,comm_share,shared_points,final_cost,status\n");
    return f;
}

/* The one-context baseline: ms per iteration, or -1 (its failure printed, e.g. out of memory). */
static double one_context(const args *a, sbm_ctx *host, int scale, double *cost)
{
    sbm_ctx *ctx = NULL;
    if (sbm_ctx_create(&ctx, a->cpu ? SBM_BACKEND_CPU : SBM_BACKEND_CUDA, 0) != SBM_SUCCESS) {
        fprintf(stderr, "sbm-bench-dist: %s\n", sbm_ctx_last_error(NULL));
        return -1.0;
    }
    sbm_bal_problem *p = make(host, a, scale);
    timing t = {0, 0.0};
    const sbm_solver_options o = fixed_work(a, &t);
    sbm_solver_summary s;
    double ms = -1.0;
    if (p && sbm_ba_solve(ctx, p, &o, &s) == SBM_SUCCESS && t.n > 0) ms = 1e3 * t.t / t.n, *cost = s.final_cost;
    else if (p) printf("one context: %s\n", sbm_ctx_last_error(ctx));
    sbm_bal_destroy(p);
    sbm_ctx_destroy(ctx);
    return ms;
}

int main(int argc, char **argv)
{
    args a;
    if (!parse(argc, argv, &a)) return 2;
    sbm_ctx *host = NULL;
    if (sbm_ctx_create(&host, SBM_BACKEND_CPU, 0) != SBM_SUCCESS) return 1;
    FILE *csv = open_csv(&a);
    const char *backend = a.cpu ? "cpu" : "cuda";
    const char *mode = a.weak ? "weak" : "strong";
    printf("sbm-bench-dist: %s scaling on %s, trajectory layout, %lld cameras, %lld points, K %d"
           "%s; %d LM iterations of %d PCG iterations each\n",
           mode, a.cpu ? "CPU ranks (host stand-in)" : "GPUs (NCCL)", a.cameras, a.points, a.obs,
           a.weak ? " per rank" : "", a.iterations, a.pcg);
    double cost1 = 0.0;
    const double base = a.weak ? -1.0 : one_context(&a, host, 1, &cost1);
    printf("%-6s %6s %12s %9s %8s %14s %14s %8s %7s\n", "ranks", "cams", "obs", "ms/iter",
           "speedup", "bytes/PCG it", "MegBA bytes", "ratio", "comm%");
    if (base > 0) {
        printf("%-6s %6lld %12lld %9.2f %8s %14s %14s %8s %7s\n", "1ctx", a.cameras,
               a.cameras > 0 ? (long long)(a.points * a.obs) : 0, base, "1.00", "-", "-", "-", "-");
        if (csv)
            fprintf(csv, "%s,%s,0,none,%lld,%lld,%lld,%d,%d,%.4f,1,0,0,0,0,0,%.17g,ok\n", mode,
                    backend, a.cameras, a.points, a.points * a.obs, a.iterations, a.pcg, base, cost1);
    }
    double first = -1.0;
    int rc = 0;
    for (int k = 0; k < a.nranks; k++) {
        const int n = a.ranks[k], scale = a.weak ? n : 1;
        if (!a.cpu && n > sbm_cuda_device_count()) {
            printf("%d GPUs: only %d present, stopping\n", n, sbm_cuda_device_count());
            break;
        }
        sbm_group *g = NULL;
        const sbm_status gs = a.cpu ? sbm_group_create_cpu(n, &g) : sbm_group_create_gpus(n, NULL, &g);
        if (gs != SBM_SUCCESS) {
            printf("%d ranks: %s\n", n, sbm_ctx_last_error(NULL));
            rc = 1;
            break;
        }
        sbm_bal_problem *p = make(host, &a, scale);
        timing t = {0, 0.0};
        const sbm_solver_options o = fixed_work(&a, &t);
        sbm_dist_options d = sbm_dist_default_options();
        d.partition = a.partition;
        sbm_solver_summary s;
        sbm_dist_report r;
        const sbm_status st = p ? sbm_ba_solve_dist(g, p, &o, &d, &s, &r) : SBM_ERR_OUT_OF_MEMORY;
        if (st != SBM_SUCCESS || t.n == 0) {
            printf("%d ranks: %s\n", n, sbm_ctx_last_error(sbm_group_context(g, 0)));
            if (csv)
                fprintf(csv, "%s,%s,%d,%s,%lld,%lld,%lld,%d,%d,,,,,,,,,%s\n", mode, backend, n,
                        a.partition == SBM_PARTITION_INDEX ? "index" : "graph", a.cameras * scale,
                        a.points * scale, a.points * scale * a.obs, a.iterations, a.pcg,
                        sbm_status_name(st));
            sbm_bal_destroy(p);
            sbm_group_destroy(g);
            continue;
        }
        const double ms = 1e3 * t.t / t.n;
        if (first < 0) first = ms;
        const double ref = a.weak ? first : base > 0 ? base : first;
        const double share = s.time_total > 0 ? r.time_comm / s.time_total : 0.0;
        const double ratio = r.bytes_per_pcg_iteration > 0 ? r.megba_bytes_per_pcg_iteration / r.bytes_per_pcg_iteration : INFINITY;
        printf("%-6d %6lld %12lld %9.2f %8.2f %14.0f %14.0f %8.1f %6.1f%%\n", n,
               a.cameras * scale, a.points * scale * a.obs, ms, ref / ms,
               r.bytes_per_pcg_iteration, r.megba_bytes_per_pcg_iteration, ratio, 100.0 * share);
        if (csv)
            fprintf(csv, "%s,%s,%d,%s,%lld,%lld,%lld,%d,%d,%.4f,%.4f,%.0f,%.0f,%.2f,%.4f,%lld,%.17g,ok\n",
                    mode, backend, n, a.partition == SBM_PARTITION_INDEX ? "index" : "graph",
                    a.cameras * scale, a.points * scale, a.points * scale * a.obs, a.iterations,
                    a.pcg, ms, ref / ms, r.bytes_per_pcg_iteration, r.megba_bytes_per_pcg_iteration,
                    ratio, share, (long long)r.shared_points, s.final_cost);
        sbm_bal_destroy(p);
        sbm_group_destroy(g);
    }
    if (csv) fclose(csv);
    sbm_ctx_destroy(host);
    return rc;
}
