/* sbm-bench-chol: the sparse block Cholesky (sbm_chol_*) on real systems, against CHOLMOD (a
 * program, not a test). Each argument is a g2o file (Lambda = J^T Omega J of the graph, rhs b)
 * or a BAL file (S = U - W V^-1 W^T, damped by 1e-4 as sbm_ba_set_damping does). For each: the
 * plan, factor and solve times of sbm (median [min-max] of --reps runs after a warm-up), the
 * backward error of its solution, and the same for CHOLMOD (supernodal, AMD, on the scalar
 * matrix) when found at configure time, with the ratio of the factor times.
 * usage: sbm-bench-chol [--cuda] [--reps N] [--csv FILE] FILE... */
#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"
#include "sbm_ba.h"
#include "sbm_slam.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef SBM_BENCH_HAVE_CHOLMOD
#include <suitesparse/cholmod.h>
#endif

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

/* The system of a file on the host: H (upper block triangle) and its rhs (malloc'd). */
static int load_system(sbm_ctx *host, const char *path, sbm_cbc **H, double **rhs)
{
    const size_t len = strlen(path);
    const int g2o = (len > 4 && strcmp(path + len - 4, ".g2o") == 0) ||
                    (len > 8 && strcmp(path + len - 8, ".g2o.bz2") == 0);
    if (g2o) {
        sbm_g2o_graph *g = NULL;
        sbm_slam_system *s = NULL;
        if (sbm_g2o_read(host, path, &g) || sbm_slam_system_create(host, g, &s) ||
            sbm_slam_linearize(host, s, g) ||
            sbm_cbc_copy(host, sbm_slam_system_get_info(s).Lambda, H))
            return -1;
        const sbm_cbc_info hi = sbm_cbc_get_info(*H);
        *rhs = malloc((size_t)(hi.nbc * hi.r + 1) * sizeof(double));
        const int rc = sbm_slam_system_get_b(host, s, *rhs) ? -1 : 0;
        sbm_slam_system_destroy(s);
        sbm_g2o_destroy(g);
        return rc;
    }
    sbm_bal_problem *p = NULL;
    sbm_ba_system *s = NULL;
    if (sbm_bal_read(host, path, &p) || sbm_ba_system_create(host, p, &s) ||
        sbm_ba_linearize(host, s, p) || sbm_ba_set_damping(host, s, 1e-4))
        return -1;
    *rhs = malloc((size_t)(9 * sbm_bal_get_info(p).cameras + 1) * sizeof(double));
    const int rc = sbm_ba_system_reduce(host, s, H, *rhs) ? -1 : 0;
    sbm_ba_system_destroy(s);
    sbm_bal_destroy(p);
    return rc;
}

/* |H x - b|_inf / (|H|_inf |x|_inf + |b|_inf) for the symmetric H given by its upper blocks. */
static double backward_error(const sbm_cbc *H, const double *x, const double *rhs)
{
    const sbm_cbc_info hi = sbm_cbc_get_info(H);
    const int64_t b = hi.r, n = hi.nbc * b;
    double *r = calloc((size_t)n + 1, sizeof(double)), *ra = calloc((size_t)n + 1, sizeof(double));
    for (int64_t j = 0; j < hi.nbc; j++)
        for (int64_t p = hi.colptr[j]; p < hi.colptr[j + 1]; p++) {
            const int64_t i = hi.rowind[p];
            for (int64_t c = 0; c < b; c++)
                for (int64_t q = 0; q < b; q++) {
                    const double a = hi.values[p * b * b + q + c * b];
                    r[i * b + q] += a * x[j * b + c], ra[i * b + q] += fabs(a);
                    if (i != j) r[j * b + c] += a * x[i * b + q], ra[j * b + c] += fabs(a);
                }
        }
    double rn = 0, an = 0, xn = 0, bn = 0;
    for (int64_t i = 0; i < n; i++) {
        rn = fmax(rn, fabs(r[i] - rhs[i]));
        an = fmax(an, ra[i]), xn = fmax(xn, fabs(x[i])), bn = fmax(bn, fabs(rhs[i]));
    }
    free(r);
    free(ra);
    return rn / (an * xn + bn);
}

typedef struct result {
    bench_stat plan, factor, solve;
    double backward_error; /* < 0: not run */
    double gflop;
    int64_t supernodes;
} result;

/* sbm on ctx: reps timed plan, factor, solve; x = the solution (host). */
static int run_sbm(sbm_ctx *ctx, sbm_ctx *host, const sbm_cbc *H, const double *rhs, int reps,
                   double *x, result *r)
{
    const sbm_cbc_info hi = sbm_cbc_get_info(H);
    const int64_t n = hi.nbc * hi.r;
    sbm_cbc *A = NULL;
    sbm_chol *chol = NULL;
    double *d = NULL, tp[64], tf[64], ts[64];
    if (sbm_cbc_copy(ctx, H, &A) || sbm_array_create(ctx, n, &d)) return -1;
    for (int k = -1; k < reps; k++) { /* k = -1: warm-up */
        sbm_chol_destroy(chol);
        chol = NULL;
        double t0 = now_ms();
        if (sbm_chol_plan(ctx, A, NULL, &chol)) return -1;
        double t1 = now_ms();
        if (sbm_chol_factor(ctx, chol, A, SBM_DAMPING_NONE, 0.0) || sbm_ctx_synchronize(ctx)) return -1;
        double t2 = now_ms();
        if (sbm_array_upload(ctx, d, rhs, n)) return -1;
        double t3 = now_ms();
        if (sbm_chol_solve(ctx, chol, 1, d, n, d, n) || sbm_ctx_synchronize(ctx)) return -1;
        double t4 = now_ms();
        if (k >= 0) tp[k] = t1 - t0, tf[k] = t2 - t1, ts[k] = t4 - t3;
    }
    if (sbm_array_download(ctx, x, d, n)) return -1;
    const sbm_chol_info info = sbm_chol_get_info(chol);
    r->plan = bench_stat_of(tp, reps), r->factor = bench_stat_of(tf, reps);
    r->solve = bench_stat_of(ts, reps);
    r->gflop = info.flops * 1e-9, r->supernodes = info.supernodes;
    r->backward_error = backward_error(H, x, rhs);
    sbm_chol_destroy(chol);
    sbm_array_destroy(ctx, d);
    sbm_cbc_destroy(A);
    (void)host;
    return 0;
}

#ifdef SBM_BENCH_HAVE_CHOLMOD
/* CHOLMOD (supernodal, AMD only) on the scalar upper triangle of H. */
static int run_cholmod(const sbm_cbc *H, const double *rhs, int reps, double *x, result *r)
{
    const sbm_cbc_info hi = sbm_cbc_get_info(H);
    const int64_t b = hi.r, n = hi.nbc * b;
    cholmod_common cm;
    cholmod_l_start(&cm);
    cm.nmethods = 1;
    cm.method[0].ordering = CHOLMOD_AMD;
    cm.supernodal = CHOLMOD_SUPERNODAL;
    cholmod_sparse *A = cholmod_l_allocate_sparse((size_t)n, (size_t)n, (size_t)(hi.nnzb * b * b),
                                                  1, 1, 1, CHOLMOD_REAL, &cm);
    cholmod_dense *B = cholmod_l_allocate_dense((size_t)n, 1, (size_t)n, CHOLMOD_REAL, &cm);
    if (!A || !B) return -1;
    SuiteSparse_long *Ap = A->p, *Ai = A->i, nz = 0;
    double *Ax = A->x;
    for (int64_t j = 0; j < hi.nbc; j++)
        for (int64_t c = 0; c < b; c++) {
            Ap[j * b + c] = nz;
            for (int64_t p = hi.colptr[j]; p < hi.colptr[j + 1]; p++)
                for (int64_t q = 0; q < (hi.rowind[p] == j ? c + 1 : b); q++) {
                    Ai[nz] = hi.rowind[p] * b + q;
                    Ax[nz++] = hi.values[p * b * b + q + c * b];
                }
        }
    Ap[n] = nz;
    memcpy(B->x, rhs, (size_t)n * sizeof(double));
    double tp[64], tf[64], ts[64];
    cholmod_factor *L = NULL;
    cholmod_dense *X = NULL;
    for (int k = -1; k < reps; k++) {
        cholmod_l_free_factor(&L, &cm);
        cholmod_l_free_dense(&X, &cm);
        double t0 = now_ms();
        L = cholmod_l_analyze(A, &cm);
        double t1 = now_ms();
        if (!L || !cholmod_l_factorize(A, L, &cm) || cm.status != CHOLMOD_OK) return -1;
        double t2 = now_ms();
        X = cholmod_l_solve(CHOLMOD_A, L, B, &cm);
        double t3 = now_ms();
        if (!X) return -1;
        if (k >= 0) tp[k] = t1 - t0, tf[k] = t2 - t1, ts[k] = t3 - t2;
    }
    memcpy(x, X->x, (size_t)n * sizeof(double));
    r->plan = bench_stat_of(tp, reps), r->factor = bench_stat_of(tf, reps);
    r->solve = bench_stat_of(ts, reps);
    r->gflop = cm.fl * 1e-9, r->supernodes = (int64_t)L->nsuper;
    r->backward_error = backward_error(H, x, rhs);
    cholmod_l_free_factor(&L, &cm);
    cholmod_l_free_dense(&X, &cm);
    cholmod_l_free_dense(&B, &cm);
    cholmod_l_free_sparse(&A, &cm);
    cholmod_l_finish(&cm);
    return 0;
}
#endif

static const char *const csv_cols[] = {
    "file", "backend", "n", "block_size", "sbm_plan_ms", "sbm_plan_min_ms", "sbm_plan_max_ms",
    "sbm_factor_ms", "sbm_factor_min_ms", "sbm_factor_max_ms", "sbm_solve_ms", "sbm_solve_min_ms",
    "sbm_solve_max_ms", "sbm_supernodes", "sbm_gflop", "sbm_backward_error", "cholmod_plan_ms",
    "cholmod_plan_min_ms", "cholmod_plan_max_ms", "cholmod_factor_ms", "cholmod_factor_min_ms",
    "cholmod_factor_max_ms", "cholmod_solve_ms", "cholmod_solve_min_ms", "cholmod_solve_max_ms",
    "cholmod_supernodes", "cholmod_gflop", "cholmod_backward_error", "factor_ratio", NULL};

int main(int argc, char **argv)
{
    int cuda = 0, reps = 5, first = 1;
    const char *csv = NULL;
    for (; first < argc && strncmp(argv[first], "--", 2) == 0; first++) {
        if (strcmp(argv[first], "--cuda") == 0)
            cuda = 1;
        else if (strcmp(argv[first], "--reps") == 0 && first + 1 < argc)
            reps = atoi(argv[++first]);
        else if (strcmp(argv[first], "--csv") == 0 && first + 1 < argc)
            csv = argv[++first];
        else
            break;
    }
    if (first >= argc || reps < 1 || reps > 64) {
        fprintf(stderr, "usage: sbm-bench-chol [--cuda] [--reps N (1..64)] [--csv FILE] FILE...\n");
        return 2;
    }
    sbm_ctx *host = NULL, *ctx = NULL;
    if (sbm_ctx_create(&host, SBM_BACKEND_CPU, 0) ||
        (cuda ? sbm_ctx_create(&ctx, SBM_BACKEND_CUDA, 0) : sbm_ctx_create(&ctx, SBM_BACKEND_CPU, 0))) {
        fprintf(stderr, "sbm-bench-chol: %s\n", sbm_ctx_last_error(NULL));
        return 1;
    }
    FILE *out = csv ? fopen(csv, "w") : NULL;
    bench_csv_row row;
    if ((csv && !out) || bench_csv_row_init(&row, csv_cols)) {
        fprintf(stderr, "sbm-bench-chol: cannot open %s\n", csv);
        return 1;
    }
    if (out) bench_csv_header(out, csv_cols);
#ifndef SBM_BENCH_HAVE_CHOLMOD
    printf("CHOLMOD not found at configure time (Debian package libsuitesparse-dev): its columns "
           "are skipped\n");
#endif
    printf("%-28s %7s %2s %-5s %24s %24s %22s %6s %8s %9s\n", "file", "n", "b", "impl", "plan ms",
           "factor ms", "solve ms", "nsuper", "Gflop", "bwd err");
    int rc = 0;
    for (int f = first; f < argc && rc == 0; f++) {
        sbm_cbc *H = NULL;
        double *rhs = NULL;
        if (load_system(host, argv[f], &H, &rhs)) {
            fprintf(stderr, "sbm-bench-chol: %s\n", sbm_ctx_last_error(host));
            rc = 1;
            break;
        }
        const sbm_cbc_info hi = sbm_cbc_get_info(H);
        const int64_t n = hi.nbc * hi.r;
        double *x = malloc((size_t)(n + 1) * sizeof(double));
        result rs, rp;
        memset(&rp, 0, sizeof rp);
        rp.backward_error = -1;
        if (run_sbm(ctx, host, H, rhs, reps, x, &rs)) {
            fprintf(stderr, "sbm-bench-chol: %s: %s\n", argv[f], sbm_ctx_last_error(ctx));
            rc = 1;
        }
#ifdef SBM_BENCH_HAVE_CHOLMOD
        if (rc == 0 && run_cholmod(H, rhs, reps, x, &rp)) {
            fprintf(stderr, "sbm-bench-chol: %s: CHOLMOD failed\n", argv[f]);
            rc = 1;
        }
#endif
        const char *name = strrchr(argv[f], '/') ? strrchr(argv[f], '/') + 1 : argv[f];
        for (int impl = 0; impl < 2 && rc == 0; impl++) {
            const result *r = impl ? &rp : &rs;
            if (r->backward_error < 0) continue;
            char b1[64], b2[64], b3[64];
            printf("%-28s %7lld %2d %-5s %24s %24s %22s %6lld %8.3f %9.1e\n", name, (long long)n,
                   hi.r, impl ? "chmd" : (cuda ? "cuda" : "cpu"),
                   bench_stat_str(b1, sizeof b1, r->plan, "%.2f"),
                   bench_stat_str(b2, sizeof b2, r->factor, "%.2f"),
                   bench_stat_str(b3, sizeof b3, r->solve, "%.2f"), (long long)r->supernodes,
                   r->gflop, r->backward_error);
        }
        if (rc == 0 && rp.backward_error >= 0)
            printf("%-28s factor time sbm / CHOLMOD = %.2f\n", name, rs.factor.med / rp.factor.med);
        if (rc == 0 && out) {
            bench_csv_text(&row, "file", name);
            bench_csv_text(&row, "backend", cuda ? "cuda" : "cpu");
            bench_csv_num(&row, "n", "%.0f", (double)n);
            bench_csv_num(&row, "block_size", "%.0f", hi.r);
            bench_csv_stat(&row, "sbm_plan", rs.plan);
            bench_csv_stat(&row, "sbm_factor", rs.factor);
            bench_csv_stat(&row, "sbm_solve", rs.solve);
            bench_csv_num(&row, "sbm_supernodes", "%.0f", (double)rs.supernodes);
            bench_csv_num(&row, "sbm_gflop", "%.6g", rs.gflop);
            bench_csv_num(&row, "sbm_backward_error", "%.3g", rs.backward_error);
            if (rp.backward_error >= 0) {
                bench_csv_stat(&row, "cholmod_plan", rp.plan);
                bench_csv_stat(&row, "cholmod_factor", rp.factor);
                bench_csv_stat(&row, "cholmod_solve", rp.solve);
                bench_csv_num(&row, "cholmod_supernodes", "%.0f", (double)rp.supernodes);
                bench_csv_num(&row, "cholmod_gflop", "%.6g", rp.gflop);
                bench_csv_num(&row, "cholmod_backward_error", "%.3g", rp.backward_error);
                bench_csv_num(&row, "factor_ratio", "%.4g", rs.factor.med / rp.factor.med);
            }
            bench_csv_write(out, &row);
        }
        free(x);
        free(rhs);
        sbm_cbc_destroy(H);
    }
    bench_csv_row_free(&row);
    if (out) fclose(out);
    sbm_ctx_destroy(ctx);
    sbm_ctx_destroy(host);
    return rc;
}
