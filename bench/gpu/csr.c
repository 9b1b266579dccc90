/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench-gpu, scalar CSR section: its matrices (list, construction on the host, fingerprints)
 * and the section's driver. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <string.h>

#include "csr.h"
#include "common/generators.h"
#include "sbm_io.h"

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

void run_csr(sbm_ctx *host, const char *sel, const char *datadir, csr_opts *o)
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
