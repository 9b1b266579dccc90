/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench: block SpGEMM benchmarks against peers measured in the same run.
 *
 *   sbm-bench [--case NAME|FAMILY|all] [--csv FILE] [--reps N] [--backend cpu|cuda|all]
 *             [--size small|large] [--clock wall|cpu] [--list]
 *
 * Cases (products C = op(A) * op(B)):
 *   poisson2d-bB   A*A, 2D Poisson 5-point pattern on a g x g grid, dense B x B blocks (B = 1..8)
 *   poisson3d-bB   A*A, 3D Poisson 7-point pattern, dense B x B blocks
 *   ba-9x3, ba-6x3 (W V^-1) * W^T, upper block triangle only (the BA reduced camera system)
 *   random-RxKxC   random CBC matrices, R x K times K x C blocks (fast and generic shapes)
 *
 * Per case and backend, each the median [min-max] of --reps timed calls after one untimed
 * warm-up call (a first plan grows the context's workspace and faults in its pages; the table's
 * second line and the CSV give the spread): plan time, execute time, one-shot sbm_cbc_gemm time
 * (the call a user who multiplies once makes, checked bitwise against plan + execute), GFLOP/s (2*r*k*c flops per block product, products from
 * sbm_gemm_plan_get_info), and for each peer its time (median [min-max] after a warm-up) and the
 * ratio peer / sbm. Peers: CSparse cs_multiply on the same product expanded to scalars (when
 * built with CSparse), timed as a user calls it (its symbolic work included). Check: sbm's C
 * against CSparse's entry by entry (bench_util.h: max relative difference per entry, floored at
 * 1e-3 of the largest entry; above 1e-9 the row says MISMATCH and the program fails); for the
 * upper cases only the upper block triangle of CSparse's full product is compared.
 * The sbm CPU backend is single-threaded (threads = 1 in the CSV).
 *
 * Adding a backend: a context kind in backend_names. Adding a peer: one run_<peer> function
 * filling a peer_result, one column pair in the table and the CSV. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/generators.h"
#include "peers/peer_csparse.h"
#include "spgemm.h"

/* ---------------------------------------------------------------------------------------- */
/* Cases                                                                                    */
/* ---------------------------------------------------------------------------------------- */

static const char *const family_names[] = {"poisson2d", "poisson3d", "ba", "random"};

#define MAX_CASES 64

static int build_specs(int large, case_spec *specs)
{
    int n = 0;
    for (int b = 1; b <= 8; b++) {
        case_spec s = {{0}, POISSON2D, b, b, b, large ? 300 : 100, 0, 0, 0, 0, 0};
        snprintf(s.name, sizeof(s.name), "poisson2d-b%d", b);
        specs[n++] = s;
    }
    for (int b = 1; b <= 8; b++) {
        case_spec s = {{0}, POISSON3D, b, b, b, large ? 40 : 16, 0, 0, 0, 0, 0};
        snprintf(s.name, sizeof(s.name), "poisson3d-b%d", b);
        specs[n++] = s;
    }
    const int ps[2] = {9, 6};
    for (int t = 0; t < 2; t++) {
        case_spec s = {{0}, BA, ps[t], 3, ps[t], 0, large ? 1000 : 200, large ? 100000 : 20000,
                       6, 0, 0};
        snprintf(s.name, sizeof(s.name), "ba-%dx3", ps[t]);
        specs[n++] = s;
    }
    /* scalar, a fast square shape, a generic rectangular triple and a large generic block */
    const int shapes[4][3] = {{1, 1, 1}, {3, 3, 3}, {2, 5, 4}, {16, 16, 16}};
    for (int t = 0; t < 4; t++) {
        const int r = shapes[t][0], k = shapes[t][1], c = shapes[t][2];
        const int64_t nb = (large ? 20000 : 4000) / (r > 4 ? 4 : 1);
        case_spec s = {{0}, RANDOM, r, k, c, 0, 0, 0, 0, nb, 8};
        snprintf(s.name, sizeof(s.name), "random-%dx%dx%d", r, k, c);
        specs[n++] = s;
    }
    return n;
}

static int spec_selected(const case_spec *s, const char *sel)
{
    if (strcmp(sel, "all") == 0 || strcmp(sel, s->name) == 0) return 1;
    return strcmp(sel, family_names[s->fam]) == 0;
}

static void case_free(bench_case *bc)
{
    sbm_cbc_destroy(bc->A);
    sbm_cbc_destroy(bc->B);
    bc->A = bc->B = NULL;
}

static sbm_status case_generate(sbm_ctx *host, const case_spec *s, bench_case *bc)
{
    const uint64_t seed = 20240611u;
    sbm_status st = SBM_SUCCESS;
    memset(bc, 0, sizeof(*bc));
    bc->spec = s;
    bc->op_a = SBM_OP_N;
    bc->op_b = SBM_OP_N;
    switch (s->fam) {
    case POISSON2D:
    case POISSON3D:
        st = s->fam == POISSON2D ? gen_poisson2d(host, s->g, s->r, seed, &bc->A)
                                 : gen_poisson3d(host, s->g, s->r, seed, &bc->A);
        if (st == SBM_SUCCESS) st = sbm_cbc_copy(host, bc->A, &bc->B);
        break;
    case BA:
        /* Y = W V^-1 has W's pattern: same pattern seed, other values. */
        bc->op_b = SBM_OP_T;
        bc->flags = SBM_GEMM_UPPER;
        st = gen_ba_w(host, s->cameras, s->points, s->obs, s->r, seed, seed + 1, &bc->A);
        if (st == SBM_SUCCESS)
            st = gen_ba_w(host, s->cameras, s->points, s->obs, s->r, seed, seed + 2, &bc->B);
        break;
    case RANDOM:
        st = gen_random_cbc(host, s->nb, s->nb, s->r, s->k, s->per_col, seed, &bc->A);
        if (st == SBM_SUCCESS)
            st = gen_random_cbc(host, s->nb, s->nb, s->k, s->c, s->per_col, seed + 7, &bc->B);
        break;
    }
    if (st != SBM_SUCCESS) case_free(bc);
    return st;
}

/* ---------------------------------------------------------------------------------------- */
/* Timing                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static double wall_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---------------------------------------------------------------------------------------- */
/* sbm (any backend)                                                                        */
/* ---------------------------------------------------------------------------------------- */


static void sbm_result_free(sbm_result *r)
{
    sbm_cbc_destroy(r->c_host);
    r->c_host = NULL;
}

static void run_sbm(sbm_ctx *ctx, sbm_ctx *host, const bench_case *bc, int reps, sbm_result *res)
{
    sbm_cbc *A = NULL, *B = NULL, *C = NULL, *Ch = NULL, *C1 = NULL, *C1h = NULL;
    sbm_gemm_plan *plan = NULL;
    double *t = malloc(sizeof(double) * (size_t)reps);
    sbm_status st = SBM_SUCCESS;
    const sbm_ctx *where = ctx;
    memset(res, 0, sizeof(*res));
    if (t == NULL) {
        snprintf(res->note, sizeof(res->note), "out of memory");
        return;
    }
    /* Operands in the backend's memory (a copy on CPU too, so every backend starts alike). */
    if ((st = sbm_cbc_copy(ctx, bc->A, &A)) != SBM_SUCCESS) goto fail;
    if ((st = sbm_cbc_copy(ctx, bc->B, &B)) != SBM_SUCCESS) goto fail;

    /* i = -1: the untimed warm-up of each loop */
    for (int i = -1; i < reps; i++) {
        sbm_gemm_plan_destroy(plan);
        sbm_cbc_destroy(C);
        plan = NULL;
        C = NULL;
        const double t0 = bench_now_s();
        st = sbm_cbc_gemm_plan(ctx, bc->op_a, A, bc->op_b, B, NULL, bc->flags, &plan, &C);
        if (st == SBM_SUCCESS) st = sbm_ctx_synchronize(ctx);
        if (st != SBM_SUCCESS) goto fail;
        if (i >= 0) t[i] = 1e3 * (bench_now_s() - t0);
    }
    res->plan = bench_stat_of(t, reps);
    res->plan_ms = res->plan.med;

    if ((st = sbm_cbc_gemm_execute(ctx, plan, 1.0, A, B, NULL, C)) != SBM_SUCCESS) goto fail;
    if ((st = sbm_ctx_synchronize(ctx)) != SBM_SUCCESS) goto fail; /* warm-up */
    for (int i = 0; i < reps; i++) {
        const double t0 = bench_now_s();
        st = sbm_cbc_gemm_execute(ctx, plan, 1.0, A, B, NULL, C);
        if (st == SBM_SUCCESS) st = sbm_ctx_synchronize(ctx);
        if (st != SBM_SUCCESS) goto fail;
        t[i] = 1e3 * (bench_now_s() - t0);
    }
    res->exec = bench_stat_of(t, reps);
    res->exec_ms = res->exec.med;

    for (int i = -1; i < reps; i++) {
        sbm_cbc_destroy(C1);
        C1 = NULL;
        const double t0 = bench_now_s();
        st = sbm_cbc_gemm(ctx, 1.0, bc->op_a, A, bc->op_b, B, NULL, bc->flags, &C1);
        if (st == SBM_SUCCESS) st = sbm_ctx_synchronize(ctx);
        if (st != SBM_SUCCESS) goto fail;
        if (i >= 0) t[i] = 1e3 * (bench_now_s() - t0);
    }
    res->oneshot = bench_stat_of(t, reps);
    res->oneshot_ms = res->oneshot.med;

    sbm_gemm_plan_info pi = sbm_gemm_plan_get_info(plan);
    res->products = pi.products;
    res->nnzb_c = pi.nnzb_c;
    res->slices = pi.slices;
    res->fast_path = pi.fast_path;
    res->flops = 2.0 * bc->spec->r * bc->spec->k * bc->spec->c * (double)pi.products;

    where = host;
    if ((st = sbm_cbc_copy(host, C, &Ch)) != SBM_SUCCESS) goto fail;
    if ((st = sbm_cbc_copy(host, C1, &C1h)) != SBM_SUCCESS) goto fail;
    sbm_cbc_info ci = sbm_cbc_get_info(Ch), c1 = sbm_cbc_get_info(C1h);
    res->oneshot_same =
        ci.nnzb == c1.nnzb && ci.nbc == c1.nbc &&
        memcmp(ci.colptr, c1.colptr, sizeof(int64_t) * (size_t)(ci.nbc + 1)) == 0 &&
        (ci.nnzb == 0 ||
         (memcmp(ci.rowind, c1.rowind, sizeof(int32_t) * (size_t)ci.nnzb) == 0 &&
          memcmp(ci.values, c1.values, sizeof(double) * (size_t)(ci.nnzb * ci.r * ci.c)) == 0));
    res->rc_ = ci.r;
    res->cc_ = ci.c;
    res->rows_c = ci.nbr * ci.r;
    res->cols_c = ci.nbc * ci.c;
    res->c_host = Ch;
    Ch = NULL;
    res->ok = 1;
    goto done;
fail:
    res->status = st;
    bench_note_error(res->note, sizeof(res->note), where, st);
done:
    sbm_gemm_plan_destroy(plan);
    sbm_cbc_destroy(C1h);
    sbm_cbc_destroy(C1);
    sbm_cbc_destroy(Ch);
    sbm_cbc_destroy(C);
    sbm_cbc_destroy(B);
    sbm_cbc_destroy(A);
    free(t);
}

/* ---------------------------------------------------------------------------------------- */
/* Output                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static void print_header(void)
{
    printf("%-16s %-4s %-8s %-4s %9s %10s %11s %9s %9s %9s %8s %10s %8s %7s %7s %7s %s\n",
           "case", "bknd", "rxkxc", "path", "C dim", "nnzb(C)", "products", "plan ms", "exec ms",
           "1shot ms", "GFLOP/s", "CSparse ms", "cs GF/s", "x exec", "x p+e", "x 1shot", "check");
}

static void csv_header(FILE *f)
{
    fprintf(f, "case,family,backend,block_a,block_b,block_c,op_a,op_b,upper,path,threads,rows_c,"
               "cols_c,nnzb_a,nnzb_b,nnzb_c,products,slices,gflop,plan_ms,exec_ms,gflops_exec,"
               "csparse_ms,csparse_gflops,speedup_exec_vs_csparse,speedup_total_vs_csparse,check,"
               "note,oneshot_ms,speedup_oneshot_vs_csparse,plan_min_ms,plan_max_ms,exec_min_ms,"
               "exec_max_ms,oneshot_min_ms,oneshot_max_ms,csparse_min_ms,csparse_max_ms,max_rel_diff,reps\n");
}

/* "ok" when sbm's C agrees with the peer's entry by entry (diff <= BENCH_CHECK_TOL) and the
 * one-shot call agrees bitwise with plan + execute, else "MISMATCH"; "-" when not compared. */
static const char *cross_check(const sbm_result *s, const peer_result *p, double diff)
{
    if (s->ok && !s->oneshot_same) return "MISMATCH";
    if (!s->ok || !p->ok || diff < 0) return "-";
    return diff <= BENCH_CHECK_TOL ? "ok" : "MISMATCH";
}

static void report(FILE *csv, const bench_case *bc, const char *backend, const sbm_result *s,
                   const peer_result *cs, double diff)
{
    const case_spec *sp = bc->spec;
    char shape[32], cdim[32];
    snprintf(shape, sizeof(shape), "%dx%dx%d", sp->r, sp->k, sp->c);
    const char *check = cross_check(s, cs, diff);
    sbm_cbc_info ai = sbm_cbc_get_info(bc->A), bi = sbm_cbc_get_info(bc->B);
    if (!s->ok) {
        printf("%-16s %-4s %-8s  %s\n", sp->name, backend, shape, s->note);
    } else {
        snprintf(cdim, sizeof(cdim), "%lld", (long long)s->rows_c);
        const double gf = s->exec_ms > 0 ? s->flops / (s->exec_ms * 1e6) : 0.0;
        printf("%-16s %-4s %-8s %-4s %9s %10lld %11lld %9.3f %9.3f %9.3f %8.2f", sp->name,
               backend, shape, s->fast_path ? "fast" : "gen", cdim, (long long)s->nnzb_c,
               (long long)s->products, s->plan_ms, s->exec_ms, s->oneshot_ms, gf);
        if (cs->ok)
            printf(" %10.3f %8.2f %7.2f %7.2f %7.2f %s\n", cs->ms, cs->flops / (cs->ms * 1e6),
                   cs->ms / s->exec_ms, cs->ms / (s->plan_ms + s->exec_ms),
                   cs->ms / s->oneshot_ms, check);
        else
            printf(" %10s %8s %7s %7s %7s %s\n", "-", "-", "-", "-", "-", check);
        char a[64], b[64], c[64], d[64];
        printf("    [min-max] plan %s, exec %s, 1shot %s, CSparse %s; max rel. diff per entry vs CSparse %s\n",
               bench_stat_str(a, sizeof a, s->plan, "%.3f"), bench_stat_str(b, sizeof b, s->exec, "%.3f"),
               bench_stat_str(c, sizeof c, s->oneshot, "%.3f"), bench_stat_str(d, sizeof d, cs->t, "%.3f"),
               diff >= 0 ? (snprintf(cdim, sizeof cdim, "%.1e", diff), cdim) : "-");
    }
    if (csv == NULL) return;
    fprintf(csv, "%s,%s,%s,%dx%d,%dx%d,%dx%d,%s,%s,%d,", sp->name, family_names[sp->fam], backend,
            ai.r, ai.c, bi.r, bi.c, sp->r, sp->c, bc->op_a == SBM_OP_T ? "T" : "N",
            bc->op_b == SBM_OP_T ? "T" : "N", (bc->flags & SBM_GEMM_UPPER) ? 1 : 0);
    if (s->ok) {
        fprintf(csv, "%s,1,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%.6f,%.6f,%.6f,%.4f,",
                s->fast_path ? "fast" : "generic", (long long)s->rows_c, (long long)s->cols_c,
                (long long)ai.nnzb, (long long)bi.nnzb, (long long)s->nnzb_c,
                (long long)s->products, (long long)s->slices, s->flops * 1e-9, s->plan_ms,
                s->exec_ms, s->exec_ms > 0 ? s->flops / (s->exec_ms * 1e6) : 0.0);
    } else {
        fprintf(csv, ",1,,,%lld,%lld,,,,,,,,", (long long)ai.nnzb, (long long)bi.nnzb);
    }
    if (cs->ok) {
        fprintf(csv, "%.6f,%.4f,", cs->ms, cs->flops / (cs->ms * 1e6));
        if (s->ok)
            fprintf(csv, "%.4f,%.4f,", cs->ms / s->exec_ms, cs->ms / (s->plan_ms + s->exec_ms));
        else
            fprintf(csv, ",,");
    } else {
        fprintf(csv, ",,,,");
    }
    /* notes may contain commas: quote them */
    const char *note = !s->ok ? s->note : cs->note;
    fprintf(csv, "%s,\"", check);
    for (const char *q = note; *q; q++) fputc(*q == '"' ? '\'' : *q, csv);
    fprintf(csv, "\"");
    if (s->ok) fprintf(csv, ",%.6f", s->oneshot_ms);
    else fprintf(csv, ",");
    if (s->ok && cs->ok) fprintf(csv, ",%.4f", cs->ms / s->oneshot_ms);
    else fprintf(csv, ",");
    /* the spread of every time, the check's figure, the repetitions */
    const bench_stat none = bench_stat_none();
    const bench_stat *st[4] = {s->ok ? &s->plan : &none, s->ok ? &s->exec : &none, s->ok ? &s->oneshot : &none,
                               cs->ok ? &cs->t : &none};
    for (int q = 0; q < 4; q++) {
        if (st[q]->n > 0) fprintf(csv, ",%.6f,%.6f", st[q]->min, st[q]->max);
        else fprintf(csv, ",,");
    }
    if (diff >= 0) fprintf(csv, ",%.3e", diff);
    else fprintf(csv, ",");
    fprintf(csv, ",%d\n", s->ok ? s->exec.n : 0);
}

/* ---------------------------------------------------------------------------------------- */
/* main                                                                                     */
/* ---------------------------------------------------------------------------------------- */

static const char *const usage =
    "usage: sbm-bench [--case NAME|FAMILY|all] [--csv FILE] [--reps N] [--backend cpu|cuda|all]\n"
    "                 [--size small|large] [--clock wall|cpu] [--list]\n"
    "\n"
    "  --case      a case name (see --list), a family (poisson2d, poisson3d, ba, random) or all\n"
    "  --csv       also write one CSV row per case and backend to FILE\n"
    "  --reps      timed repetitions after one untimed warm-up; median, min and max are reported\n"
    "              (default 5)\n"
    "  --backend   cpu, cuda, or all (default: cpu, plus cuda when a device is present)\n"
    "  --clock     wall (default) or cpu: the thread's CPU time, for a loaded machine (CPU only)\n"
    "  --size      small (default, a minute or two on a small CPU) or large (2D Poisson 300x300,\n"
    "              BA 1000 cameras, 100k points, 6 observations per point)\n";

typedef struct options {
    const char *sel, *csv_path, *backend_sel;
    int reps, large, list;
} options;

/* Parses the command line into o (and --clock into bench_now_s's clock). @return -1 to go on,
 * else the program's exit status (--help: 0; a bad argument: 2, after the usage). */
static int parse_options(int argc, char **argv, options *o)
{
    *o = (options){"all", NULL, "all", 5, 0, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const int has_v = i + 1 < argc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        } else if (strcmp(a, "--list") == 0) {
            o->list = 1;
        } else if (strcmp(a, "--case") == 0 && has_v) {
            o->sel = argv[++i];
        } else if (strcmp(a, "--csv") == 0 && has_v) {
            o->csv_path = argv[++i];
        } else if (strcmp(a, "--backend") == 0 && has_v) {
            o->backend_sel = argv[++i];
            if (strcmp(o->backend_sel, "cpu") && strcmp(o->backend_sel, "cuda") &&
                strcmp(o->backend_sel, "all")) {
                fprintf(stderr, "sbm-bench: unknown backend '%s'\n%s", o->backend_sel, usage);
                return 2;
            }
        } else if (strcmp(a, "--size") == 0 && has_v) {
            const char *v = argv[++i];
            if (strcmp(v, "small") == 0) o->large = 0;
            else if (strcmp(v, "large") == 0) o->large = 1;
            else {
                fprintf(stderr, "sbm-bench: unknown size '%s'\n%s", v, usage);
                return 2;
            }
        } else if (strcmp(a, "--clock") == 0 && has_v) {
            const char *v = argv[++i];
            if (strcmp(v, "wall") == 0) bench_clock_use_cpu(0);
            else if (strcmp(v, "cpu") == 0) bench_clock_use_cpu(1);
            else {
                fprintf(stderr, "sbm-bench: unknown clock '%s'\n%s", v, usage);
                return 2;
            }
        } else if (strcmp(a, "--reps") == 0 && has_v) {
            char *e = NULL;
            errno = 0;
            long v = strtol(argv[++i], &e, 10);
            if (*e != '\0' || errno != 0 || v < 1 || v > 100000) {
                fprintf(stderr, "sbm-bench: invalid --reps '%s'\n%s", argv[i], usage);
                return 2;
            }
            o->reps = (int)v;
        } else {
            fprintf(stderr, "sbm-bench: %s '%s'\n%s",
                    a[0] == '-' && !has_v ? "missing value or unknown option" : "unknown argument",
                    a, usage);
            return 2;
        }
    }
    return -1;
}

/* One case on each backend of ctxs (NULL: not run; 0 CPU, 1 CUDA), the CSparse peer run once,
 * after the first backend that succeeded told C's block shape. @return the failures. */
static int bench_one(sbm_ctx *host, sbm_ctx *const ctxs[2], const case_spec *spec, int reps, FILE *csv)
{
    bench_case bc;
    sbm_status st = case_generate(host, spec, &bc);
    if (st != SBM_SUCCESS) {
        char note[160];
        bench_note_error(note, sizeof(note), host, st);
        printf("%-16s generation failed: %s\n", spec->name, note);
        return 1;
    }
    int failures = 0;
    sbm_result sr[2];
    peer_result cs;
    int have_cs = 0;
    const char *names[2] = {"cpu", "cuda"};
    for (int b = 0; b < 2; b++) {
        if (ctxs[b] == NULL) continue;
        run_sbm(ctxs[b], host, &bc, reps, &sr[b]);
        /* The peer runs once per case, after sbm told the C block shape. */
        if (!have_cs && sr[b].ok) {
            run_csparse(host, bc.A, bc.op_a, bc.B, bc.op_b, bc.flags, reps, sr[b].rc_, sr[b].cc_,
                        &cs);
            have_cs = 1;
        }
        if (!have_cs) {
            memset(&cs, 0, sizeof(cs));
            snprintf(cs.note, sizeof(cs.note), "not run");
        }
        const double diff = sr[b].ok ? peer_diff(host, &cs, sr[b].c_host) : -1.0;
        report(csv, &bc, names[b], &sr[b], &cs, diff);
        fflush(stdout);
        /* an operation a backend does not have yet is reported, not counted as a failure */
        if ((!sr[b].ok && sr[b].status != SBM_ERR_NOT_SUPPORTED) ||
            strcmp(cross_check(&sr[b], &cs, diff), "MISMATCH") == 0)
            failures++;
        sbm_result_free(&sr[b]);
    }
    if (have_cs) peer_result_free(&cs);
    case_free(&bc);
    return failures;
}

/* Backends: CPU always available; CUDA when built in and a device is present. Creates the host
 * (CPU) context and, when used, the CUDA one. @return -1 to go on, else the exit status. */
static int open_backends(const char *backend_sel, int *use_cpu, sbm_ctx **host, sbm_ctx **cuda)
{
    *use_cpu = strcmp(backend_sel, "cuda") != 0;
    int use_cuda = strcmp(backend_sel, "cpu") != 0;
    if (use_cuda && sbm_cuda_device_count() == 0) {
        if (strcmp(backend_sel, "cuda") == 0) {
            fprintf(stderr, "sbm-bench: --backend cuda: %s\n",
                    sbm_has_cuda() ? "no CUDA device" : "this build has no CUDA backend");
            return 1;
        }
        printf("sbm-bench: no CUDA backend/device: CPU only\n");
        use_cuda = 0;
    }
    if (sbm_ctx_create(host, SBM_BACKEND_CPU, 0) != SBM_SUCCESS ||
        (use_cuda && sbm_ctx_create(cuda, SBM_BACKEND_CUDA, 0) != SBM_SUCCESS)) {
        fprintf(stderr, "sbm-bench: %s\n", sbm_ctx_last_error(NULL));
        sbm_ctx_destroy(*host);
        return 1;
    }
    return -1;
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse_options(argc, argv, &o);
    if (rc >= 0) return rc;

    case_spec specs[MAX_CASES];
    const int nspecs = build_specs(o.large, specs);
    int nsel = 0;
    for (int i = 0; i < nspecs; i++) {
        if (o.list) printf("%s\n", specs[i].name);
        nsel += spec_selected(&specs[i], o.sel);
    }
    if (o.list) return 0;
    if (nsel == 0) {
        fprintf(stderr, "sbm-bench: no case named '%s' (see --list)\n", o.sel);
        return 2;
    }

    sbm_ctx *host = NULL, *cuda = NULL;
    int use_cpu = 0;
    if ((rc = open_backends(o.backend_sel, &use_cpu, &host, &cuda)) >= 0) return rc;
    FILE *csv = NULL;
    if (o.csv_path != NULL) {
        csv = fopen(o.csv_path, "w");
        if (csv == NULL) {
            fprintf(stderr, "sbm-bench: cannot write %s: %s\n", o.csv_path, strerror(errno));
            sbm_ctx_destroy(cuda);
            sbm_ctx_destroy(host);
            return 1;
        }
        csv_header(csv);
    }
#ifndef SBM_BENCH_HAVE_CSPARSE
    printf("sbm-bench: built without CSparse (libsuitesparse-dev): no CSparse column\n");
#endif
    if (cuda != NULL && bench_clock_is_cpu()) {
        fprintf(stderr, "sbm-bench: --clock cpu cannot time the CUDA backend; use --backend cpu\n");
        sbm_ctx_destroy(cuda);
        sbm_ctx_destroy(host);
        if (csv != NULL) fclose(csv);
        return 2;
    }
    printf("sbm-bench %d.%d.%d: %s sizes, median [min-max] of %d after a warm-up, %s clock, CPU single-threaded; "
           "x = CSparse time / sbm time (exec: plan reused; p+e: plan + execute; 1shot: "
           "sbm_cbc_gemm)\n",
           SBM_VERSION_MAJOR, SBM_VERSION_MINOR, SBM_VERSION_PATCH, o.large ? "large" : "small",
           o.reps, !bench_clock_is_cpu() ? "wall" : "thread CPU");
    print_header();

    int failures = 0;
    const double t_start = wall_s();
    sbm_ctx *const ctxs[2] = {use_cpu ? host : NULL, cuda};
    for (int i = 0; i < nspecs; i++)
        if (spec_selected(&specs[i], o.sel)) failures += bench_one(host, ctxs, &specs[i], o.reps, csv);
    printf("total %.1f s (wall)%s\n", wall_s() - t_start, failures ? "; some cases failed" : "");
    if (csv != NULL && fclose(csv) != 0) {
        fprintf(stderr, "sbm-bench: error writing %s\n", o.csv_path);
        failures++;
    }
    sbm_ctx_destroy(cuda);
    sbm_ctx_destroy(host);
    return failures ? 1 : 0;
}
