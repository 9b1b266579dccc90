/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench-ba: BA and SLAM iterations on the GPU against the CPU backend (a program, not a
 * test; bench/results/NOTES-ba-gpu.md). Table on stdout, CSV with --csv, rows written as each run
 * ends (a cut run keeps what finished).
 *
 *   sbm-bench-ba [--quick] [--backends auto|cpu|cuda|cpu,cuda] [--sections LIST] [--csv FILE]
 *                [--data DIR] [--tmp DIR] [--g2o FILE]... [--poses N] [--iterations N]
 *                [--cpu-iterations N] [--cpu-iterations-large N] [--cpu-max-s S]
 *                [--time-limit S]
 *
 * Sections (default all, in this order): yardstick (the copy bandwidth), ba (synthetic 5000
 * cameras / 400k points / 8 obs and 1000 / 100k / 6: --iterations on the GPU, --cpu-iterations
 * on the CPU, --cpu-iterations-large for >= 2M observations), bal (every BAL file of DATA/bal,
 * 10 iterations), e2e (the two synthetic problems to convergence on the GPU, the end-to-end
 * comparison with Ceres), slam (a synthetic 3D pose graph of --poses poses and the largest
 * graph of DATA/g2o, or each --g2o, to convergence on both backends), scaling (synthetic BA of
 * 1e5 .. 1e7 observations, 3 iterations on the GPU, 2 on the CPU, the CPU up to where one
 * iteration is predicted to take --cpu-max-s), oom (the largest scaling size with the context's
 * allocations capped at half of what it needed, then with a memory budget of a quarter of it;
 * 1 iteration each). Before the first timed GPU run, untimed warm-up solves load the kernels.
 * --quick (or SBM_BENCH_QUICK=1): small sizes everywhere, for a check of the whole flow. Every problem is solved with the default options
 * (linear solver AUTO) and the iteration cap of its section. Runs that would start after
 * --time-limit seconds are skipped (visibly). */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ba.h"
#include "common/chol_inputs.h"

typedef struct opts {
    int quick, cpu, cuda;
    const char *sections, *csv, *data, *tmp;
    const char *g2o[8];
    int ng2o;
    int64_t poses;
    int its, cpu_its, cpu_its_large;
    double cpu_max_s, time_limit;
} opts;

typedef struct bench {
    opts o;
    FILE *csv;
    bench_csv_row cr;
    double t0, copy_gbs;
    sbm_ctx *host;
    sbm_bal_problem *ba[2];     /* the two synthetic problems of the targets */
    char ba_name[2][64];
    double oom_peak;            /* peak bytes of the largest scaling size (GPU, else CPU) */
    sbm_bal_problem *oom_p;     /* that problem, kept for the out-of-memory runs */
    char oom_name[64];
} bench;

static int has_section(const bench *b, const char *s)
{
    const char *p = b->o.sections;
    const size_t n = strlen(s);
    while (p && *p) {
        if (strncmp(p, s, n) == 0 && (p[n] == ',' || p[n] == '\0')) return 1;
        p = strchr(p, ',');
        if (p) p++;
    }
    return 0;
}

/* 1 (after a visible skip row) when the time limit has passed */
static int out_of_time(bench *b, const char *section, const char *problem, sbm_backend be,
                       int64_t obs)
{
    const double el = bench_now_s() - b->t0;
    if (el <= b->o.time_limit) return 0;
    char why[160];
    snprintf(why, sizeof why, "time limit: %.0f s elapsed > --time-limit %.0f s", el,
             b->o.time_limit);
    ba_report_skip(section, problem, be, obs, why, &b->cr, b->csv);
    return 1;
}

static void header(const char *title)
{
    printf("\n== %s\n%-8s %-30s %-4s %9s %-15s %3s  %8s %8s %8s %8s %9s  %5s  %8s\n", title,
           "section", "problem", "be", "obs/edges", "linear solver", "its", "lin ms", "schur",
           "solve", "update", "total ms", "pcg", "peak MB");
}

/* r solved on backend be: the run and its rows; returns r (the caller's storage). */
static ba_run *run_bal(bench *b, ba_run *r, const char *section, const char *name,
                       sbm_bal_problem *p, sbm_backend be, int its, const ba_dims *dims,
                       const char *note)
{
    ba_run_init(r, section, name, be, its);
    r->dims = *dims;
    snprintf(r->note, sizeof r->note, "%s", note ? note : "");
    ba_run_bal(r, p);
    /* floors against the yardstick of the same memory: the device copy for GPU runs, the host
     * memcpy for CPU runs of a build or machine without a device */
    ba_report(r, (be == SBM_BACKEND_CUDA) == (b->o.cuda != 0) ? b->copy_gbs : -1.0, &b->cr, b->csv);
    return r;
}

static sbm_bal_problem *generate(bench *b, int64_t c, int64_t pts, int k, char *name, size_t n)
{
    snprintf(name, n, "synthetic %lld,%lld,%d,1", (long long)c, (long long)pts, k);
    const sbm_bal_generate_options g = sbm_bal_generate_defaults(c, pts, k, 1);
    sbm_bal_problem *p = NULL;
    if (sbm_bal_generate(b->host, &g, &p) != SBM_SUCCESS) {
        fprintf(stderr, "sbm-bench-ba: sbm_bal_generate %s: %s\n", name,
                sbm_ctx_last_error(b->host));
        return NULL;
    }
    return p;
}

/* ---- sections -------------------------------------------------------------------------------- */

static void section_ba(bench *b)
{
    header("ba: synthetic problems of the targets (AUTO; medians over the iterations)");
    ba_run *r = malloc(sizeof *r);
    if (!r) return;
    for (int k = 0; k < 2; k++) {
        if (!b->ba[k]) continue;
        const ba_dims d = ba_dims_of(b->ba[k]);
        const int large = d.observations >= 2000000;
        if (b->o.cuda && !out_of_time(b, "ba", b->ba_name[k], SBM_BACKEND_CUDA, d.observations))
            run_bal(b, r, "ba", b->ba_name[k], b->ba[k], SBM_BACKEND_CUDA, b->o.its, &d, NULL);
        if (b->o.cpu && !out_of_time(b, "ba", b->ba_name[k], SBM_BACKEND_CPU, d.observations)) {
            char note[96] = "";
            if (large)
                snprintf(note, sizeof note, "CPU limited to %d iterations (slow)",
                         b->o.cpu_its_large);
            run_bal(b, r, "ba", b->ba_name[k], b->ba[k], SBM_BACKEND_CPU,
                    large ? b->o.cpu_its_large : b->o.cpu_its, &d, note);
        }
    }
    free(r);
}

static void section_bal(bench *b)
{
    header("bal: the shared BAL files, 10 iterations");
    char dir[600];
    snprintf(dir, sizeof dir, "%s/bal", b->o.data);
    struct dirent **list = NULL;
    const int n = scandir(dir, &list, NULL, alphasort);
    if (n < 0) {
        ba_report_skip("bal", dir, SBM_BACKEND_CUDA, 0, "no BAL directory (--data, SBM_DATA_DIR)",
                       &b->cr, b->csv);
        return;
    }
    ba_run *r = malloc(sizeof *r);
    for (int i = 0; i < n && r; i++) {
        if (strncmp(list[i]->d_name, "problem-", 8) != 0) continue;
        char path[900], name[96];
        snprintf(path, sizeof path, "%s/%s", dir, list[i]->d_name);
        snprintf(name, sizeof name, "%.80s", list[i]->d_name);
        name[strcspn(name, ".")] = '\0';
        sbm_bal_problem *p = NULL;
        if (sbm_bal_read(b->host, path, &p) != SBM_SUCCESS) {
            ba_report_skip("bal", name, SBM_BACKEND_CUDA, 0, sbm_ctx_last_error(b->host), &b->cr,
                           b->csv);
            continue;
        }
        const ba_dims d = ba_dims_of(p);
        if (b->o.cuda && !out_of_time(b, "bal", name, SBM_BACKEND_CUDA, d.observations))
            run_bal(b, r, "bal", name, p, SBM_BACKEND_CUDA, 10, &d, NULL);
        if (b->o.cpu && !out_of_time(b, "bal", name, SBM_BACKEND_CPU, d.observations))
            run_bal(b, r, "bal", name, p, SBM_BACKEND_CPU, 10, &d, NULL);
        sbm_bal_destroy(p);
    }
    for (int i = 0; i < n; i++) free(list[i]);
    free(list);
    free(r);
}

static void section_e2e(bench *b)
{
    header("e2e: the synthetic problems to convergence (default options, at most 200 iterations)");
    ba_run *r = malloc(sizeof *r);
    const sbm_backend be = b->o.cuda ? SBM_BACKEND_CUDA : SBM_BACKEND_CPU;
    for (int k = 0; k < 2 && r; k++) {
        if (!b->ba[k]) continue;
        const ba_dims d = ba_dims_of(b->ba[k]);
        if (!out_of_time(b, "e2e", b->ba_name[k], be, d.observations))
            run_bal(b, r, "e2e", b->ba_name[k], b->ba[k], be, 200, &d,
                    b->o.cuda ? "wall_s: sbm_ba_solve from the host problem to the result"
                              : "no CUDA device: the CPU backend");
    }
    free(r);
}

static void slam_pair(bench *b, ba_run *r, const char *name, const char *path)
{
    sbm_g2o_graph *g = NULL;
    if (sbm_g2o_read(b->host, path, &g) != SBM_SUCCESS) {
        ba_report_skip("slam", name, SBM_BACKEND_CUDA, 0, sbm_ctx_last_error(b->host), &b->cr,
                       b->csv);
        return;
    }
    for (int k = 0; k < 2; k++) {
        const sbm_backend be = k == 0 ? SBM_BACKEND_CUDA : SBM_BACKEND_CPU;
        if ((be == SBM_BACKEND_CUDA ? !b->o.cuda : !b->o.cpu) ||
            out_of_time(b, "slam", name, be, sbm_g2o_get_info(g).edges))
            continue;
        ba_run_init(r, "slam", name, be, 200);
        ba_run_slam(r, g);
        ba_report(r, -1.0, &b->cr, b->csv);
    }
    sbm_g2o_destroy(g);
}

/* the g2o file of DATA/g2o with the most EDGE lines, into path; 0 if none */
static int largest_graph(const char *data, char *path, size_t size)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s/g2o", data);
    DIR *d = opendir(dir);
    if (!d) return 0;
    long best = -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        const size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".g2o") != 0) continue;
        char p[900], line[64];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        FILE *f = fopen(p, "r");
        long edges = 0;
        int start = 1;
        while (f && fgets(line, sizeof line, f)) {
            if (start && strncmp(line, "EDGE", 4) == 0) edges++;
            start = strchr(line, '\n') != NULL;
        }
        if (f) fclose(f);
        if (edges > best) {
            best = edges;
            snprintf(path, size, "%s", p);
        }
    }
    closedir(d);
    return best >= 0;
}

static void section_slam(bench *b)
{
    header("slam: pose graphs to convergence (default options: LM, sparse Cholesky)");
    ba_run *r = malloc(sizeof *r);
    if (!r) return;
    char path[900], name[96];
    snprintf(name, sizeof name, "poses3d-%lld", (long long)b->o.poses);
    snprintf(path, sizeof path, "%s/sbm-bench-ba-%s.g2o", b->o.tmp, name);
    if (chol_write_pose_graph(path, 3, b->o.poses, CHOL_POSE_GRAPH_SEED(b->o.poses)) != 0) {
        char why[300];
        snprintf(why, sizeof why, "cannot write %.200s: %.60s", path, strerror(errno));
        ba_report_skip("slam", name, SBM_BACKEND_CUDA, 0, why, &b->cr, b->csv);
    } else {
        slam_pair(b, r, name, path);
    }
    remove(path);
    const char *files[8];
    int n = b->o.ng2o;
    for (int k = 0; k < n; k++) files[k] = b->o.g2o[k];
    if (n == 0 && largest_graph(b->o.data, path, sizeof path)) files[n++] = path;
    for (int k = 0; k < n; k++) {
        const char *s = strrchr(files[k], '/');
        snprintf(name, sizeof name, "%s", s ? s + 1 : files[k]);
        name[strcspn(name, ".")] = '\0';
        slam_pair(b, r, name, files[k]);
    }
    free(r);
}

static void section_scaling(bench *b)
{
    header("scaling: synthetic BA, 6 observations per point, 600 per camera");
    static const double full[] = {1e5, 3e5, 1e6, 3e6, 1e7}, quick[] = {1e4, 3e4, 1e5};
    const double *sizes = b->o.quick ? quick : full;
    const int nsizes = b->o.quick ? 3 : 5;
    ba_run *r = malloc(sizeof *r);
    double cpu_ms = -1.0, cpu_obs = 0.0; /* the last CPU iteration measured */
    for (int i = 0; i < nsizes && r; i++) {
        const int64_t pts = (int64_t)(sizes[i] / 6), cams = (int64_t)(sizes[i] / 600);
        char name[64];
        if (out_of_time(b, "scaling", "synthetic", SBM_BACKEND_CUDA, (int64_t)sizes[i])) break;
        sbm_bal_problem *p = generate(b, cams, pts, 6, name, sizeof name);
        if (!p) break;
        const ba_dims d = ba_dims_of(p);
        double peak = -1.0;
        if (b->o.cuda && !out_of_time(b, "scaling", name, SBM_BACKEND_CUDA, d.observations)) {
            run_bal(b, r, "scaling", name, p, SBM_BACKEND_CUDA, 3, &d, NULL);
            peak = r->peak_bytes;
        }
        if (b->o.cpu) {
            const double pred = cpu_ms > 0 ? cpu_ms * (double)d.observations / cpu_obs : -1.0;
            char why[200];
            snprintf(why, sizeof why,
                     "CPU skipped: one iteration predicted %.1f s (%.1f s at %.3g observations, "
                     "linear in them) > --cpu-max-s %.0f s", pred / 1e3, cpu_ms / 1e3, cpu_obs,
                     b->o.cpu_max_s);
            if (pred > 1e3 * b->o.cpu_max_s) {
                ba_report_skip("scaling", name, SBM_BACKEND_CPU, d.observations, why, &b->cr,
                               b->csv);
            } else if (!out_of_time(b, "scaling", name, SBM_BACKEND_CPU, d.observations)) {
                run_bal(b, r, "scaling", name, p, SBM_BACKEND_CPU, 2, &d, NULL);
                const ba_medians m = ba_medians_of(r);
                if (m.total > 0) cpu_ms = m.total, cpu_obs = (double)d.observations;
                if (peak < 0) peak = r->peak_bytes;
            }
        }
        if (i == nsizes - 1) { /* kept for section_oom */
            b->oom_peak = peak;
            b->oom_p = p;
            snprintf(b->oom_name, sizeof b->oom_name, "%s", name);
        } else {
            sbm_bal_destroy(p);
        }
    }
    free(r);
}

static void section_oom(bench *b)
{
    header("oom: the largest scaling size with less memory than it needs");
    const sbm_backend be = b->o.cuda ? SBM_BACKEND_CUDA : SBM_BACKEND_CPU;
    if (b->oom_peak <= 0 || !b->oom_p) {
        ba_report_skip("oom", "synthetic", be, 0,
                       "needs the peak memory of the largest scaling size (section scaling)",
                       &b->cr, b->csv);
        return;
    }
    const char *name = b->oom_name;
    sbm_bal_problem *p = b->oom_p;
    ba_run *r = malloc(sizeof *r);
    if (!r || out_of_time(b, "oom", name, be, 0)) {
        free(r);
        return;
    }
    const ba_dims d = ba_dims_of(p);
    for (int k = 0; k < 2; k++) {
        ba_run_init(r, "oom", name, be, 1);
        r->dims = d;
        if (k == 0) r->cap_bytes = (size_t)(0.5 * b->oom_peak);
        else r->budget_bytes = (size_t)(0.25 * b->oom_peak);
        snprintf(r->note, sizeof r->note,
                 k == 0 ? "allocator capped at half the peak (%.0f MB) of the uncapped run"
                        : "sbm_ctx_set_memory_budget of a quarter of the peak (%.0f MB)",
                 b->oom_peak / 1e6);
        /* a row before the run: a crash leaves it without its result, and the report says so */
        bench_csv_text(&b->cr, "kind", "attempt");
        bench_csv_text(&b->cr, "section", "oom");
        bench_csv_text(&b->cr, "problem", name);
        bench_csv_text(&b->cr, "note", r->note);
        bench_csv_write(b->csv, &b->cr);
        ba_run_bal(r, p);
        ba_report(r, -1.0, &b->cr, b->csv);
    }
    free(r);
}

/* An untimed BA solve on the GPU before the first timed one: the CUDA kernels are loaded on their
 * first launch (lazy module loading), which would otherwise fall into the first run's setup and
 * first iteration (the end-to-end wall time above all). */
static void warm_up(bench *b)
{
    /* AUTO takes dense Cholesky on the first, matrix-free PCG on the second, sparse Cholesky on
     * the third: every solver path of the timed runs */
    static const int64_t size[3][2] = {{50, 2000}, {300, 6000}, {300, 30000}};
    ba_run *r = malloc(sizeof *r);
    for (int k = 0; k < 3 && r; k++) {
        char name[64];
        sbm_bal_problem *p = generate(b, size[k][0], size[k][1], 6, name, sizeof name);
        if (!p) break;
        ba_run_init(r, "warm-up", name, SBM_BACKEND_CUDA, 3);
        ba_run_bal(r, p);
        printf("warm-up: %s on the GPU, %s, 3 iterations, %.3f s (not reported)%s%s\n", name,
               r->status ? "failed" : "done", r->wall_s, r->status ? ": " : "",
               r->status ? r->message : "");
        sbm_bal_destroy(p);
    }
    free(r);
}

/* ---- main ------------------------------------------------------------------------------------ */

static int usage(const char *why)
{
    if (why) fprintf(stderr, "sbm-bench-ba: %s\n", why);
    fprintf(stderr,
            "usage: sbm-bench-ba [--quick] [--backends auto|cpu|cuda|cpu,cuda] [--sections LIST]\n"
            "                    [--csv FILE] [--data DIR] [--tmp DIR] [--g2o FILE]...\n"
            "                    [--poses N] [--iterations N] [--cpu-iterations N]\n"
            "                    [--cpu-iterations-large N] [--cpu-max-s S] [--time-limit S]\n"
            "sections: yardstick,ba,bal,e2e,slam,scaling,oom (default all)\n");
    return 2;
}

static int parse(int argc, char **argv, opts *o)
{
    const char *q = getenv("SBM_BENCH_QUICK");
    const char *backends = "auto";
    o->quick = q && *q && strcmp(q, "0") != 0;
    o->sections = "yardstick,ba,bal,e2e,slam,scaling,oom";
    o->data = getenv("SBM_DATA_DIR") ? getenv("SBM_DATA_DIR") : "../shared/data";
    o->tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    o->its = 5, o->cpu_its = 3, o->cpu_its_large = 2;
    o->cpu_max_s = 20, o->time_limit = 390;
    o->poses = -1;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) {
            o->quick = 1;
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(NULL), 0;
        if (!v) {
            fprintf(stderr, "sbm-bench-ba: %s needs a value\n", a);
            return usage(NULL);
        }
        i++;
        char *e = NULL;
        const double x = strtod(v, &e);
        const int num = e != v && *e == '\0' && x >= 0;
        if (!strcmp(a, "--backends")) backends = v;
        else if (!strcmp(a, "--sections")) o->sections = v;
        else if (!strcmp(a, "--csv")) o->csv = v;
        else if (!strcmp(a, "--data")) o->data = v;
        else if (!strcmp(a, "--tmp")) o->tmp = v;
        else if (!strcmp(a, "--g2o") && o->ng2o < 8) o->g2o[o->ng2o++] = v;
        else if (!num) break;
        else if (!strcmp(a, "--poses") && x >= 10) o->poses = (int64_t)x;
        else if (!strcmp(a, "--iterations") && x >= 1) o->its = (int)x;
        else if (!strcmp(a, "--cpu-iterations") && x >= 1) o->cpu_its = (int)x;
        else if (!strcmp(a, "--cpu-iterations-large") && x >= 1) o->cpu_its_large = (int)x;
        else if (!strcmp(a, "--cpu-max-s")) o->cpu_max_s = x;
        else if (!strcmp(a, "--time-limit")) o->time_limit = x;
        else break;
    }
    if (i < argc) { /* the loop stopped at the value argv[i] of argv[i - 1] */
        fprintf(stderr, "sbm-bench-ba: unknown option or invalid value: %s %s\n", argv[i - 1],
                argv[i]);
        return usage(NULL);
    }
    if (o->poses < 0) o->poses = o->quick ? 2000 : 100000;
    const int gpus = sbm_cuda_device_count();
    if (!strcmp(backends, "auto")) o->cpu = 1, o->cuda = gpus > 0;
    else if (!strcmp(backends, "cpu")) o->cpu = 1;
    else if (!strcmp(backends, "cuda")) o->cuda = 1;
    else if (!strcmp(backends, "cpu,cuda") || !strcmp(backends, "cuda,cpu")) o->cpu = o->cuda = 1;
    else return usage("--backends: auto, cpu, cuda or cpu,cuda");
    if (o->cuda && gpus == 0)
        return usage("--backends cuda: no CUDA device (sbm_cuda_device_count() is 0)");
    return -1;
}

int main(int argc, char **argv)
{
    bench b;
    memset(&b, 0, sizeof b);
    const int rc = parse(argc, argv, &b.o);
    if (rc >= 0) return rc;
    b.t0 = bench_now_s();
    b.oom_peak = -1.0;
    if (b.o.csv && !(b.csv = fopen(b.o.csv, "w"))) {
        fprintf(stderr, "sbm-bench-ba: cannot write %s: %s\n", b.o.csv, strerror(errno));
        return 1;
    }
    if (bench_csv_row_init(&b.cr, ba_cols) != 0 || sbm_ctx_create(&b.host, SBM_BACKEND_CPU, 0)) {
        fprintf(stderr, "sbm-bench-ba: out of host memory\n");
        return 1;
    }
    if (b.csv) bench_csv_header(b.csv, ba_cols);
    printf("sbm-bench-ba: %s sizes, backends:%s%s%s\n", b.o.quick ? "quick" : "full",
           b.o.cuda ? " cuda" : "", b.o.cpu ? " cpu" : "",
           b.o.cuda ? "" : " (no CUDA device: the GPU runs are left out)");
    char dev[128], what[160], date[40];
    bench_device_name(b.o.cuda, dev, sizeof dev);
    b.copy_gbs = bench_copy_gbs(what, sizeof what - sizeof date);
    const time_t now = time(NULL);
    strftime(date, sizeof date, "; %Y-%m-%d %H:%M UTC", gmtime(&now));
    strcat(what, date);
    if (has_section(&b, "yardstick"))
        ba_report_yardstick(dev, b.copy_gbs, what, bench_device_memory(), &b.cr, b.csv);
    if (has_section(&b, "ba") || has_section(&b, "e2e")) {
        const int64_t c[2] = {b.o.quick ? 100 : 5000, b.o.quick ? 50 : 1000};
        const int64_t p[2] = {b.o.quick ? 4000 : 400000, b.o.quick ? 2000 : 100000};
        const int k[2] = {8, 6};
        for (int i = 0; i < 2; i++)
            b.ba[i] = generate(&b, c[i], p[i], k[i], b.ba_name[i], sizeof b.ba_name[i]);
    }
    if (b.o.cuda) warm_up(&b);
    if (has_section(&b, "ba")) section_ba(&b);
    if (has_section(&b, "bal")) section_bal(&b);
    if (has_section(&b, "e2e")) section_e2e(&b);
    if (has_section(&b, "slam")) section_slam(&b);
    if (has_section(&b, "scaling")) section_scaling(&b);
    if (has_section(&b, "oom")) section_oom(&b);
    for (int i = 0; i < 2; i++) sbm_bal_destroy(b.ba[i]);
    sbm_bal_destroy(b.oom_p);
    printf("\nsbm-bench-ba: done in %.1f s\n", bench_now_s() - b.t0);
    sbm_ctx_destroy(b.host);
    bench_csv_row_free(&b.cr);
    if (b.csv) fclose(b.csv);
    return 0;
}
