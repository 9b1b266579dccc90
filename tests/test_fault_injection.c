#define _POSIX_C_SOURCE 200809L /* mkdtemp */
/* Fault injection: every public operation on the CPU backend, with an allocator hook that fails
 * the k-th allocation, for every k the operation makes. Each failure must give
 * SBM_ERR_OUT_OF_MEMORY with a "cannot allocate" message, leak nothing (the hook's live count
 * returns to where it was), leave the inputs unchanged (a byte hash of every input array) and
 * the output handles NULL, and the context usable (the same call then succeeds).
 *
 * The hook serves host memory; on the CUDA backend it would serve device memory, which the GPU
 * part of the reliability work tests with a tiny memory budget instead, so the CUDA variant skips. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------------------- */
/* The counting allocator                                                                   */
/* ---------------------------------------------------------------------------------------- */

typedef struct counting {
    long calls;   /* allocations requested since the last reset */
    long fail_at; /* the allocation to fail (1-based; 0 = never) */
    long live;    /* allocations not yet freed */
} counting;

static void *counting_alloc(void *user, size_t bytes)
{
    counting *c = user;
    if (++c->calls == c->fail_at) return NULL;
    void *p = malloc(bytes);
    if (p) c->live++;
    return p;
}

static void counting_free(void *user, void *ptr)
{
    counting *c = user;
    if (ptr) {
        c->live--;
        free(ptr);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Inputs: made with the default allocator before the hook is installed                    */
/* ---------------------------------------------------------------------------------------- */

typedef struct fixture {
    sbm_ctx *ctx;
    char dir[512];         /* temporary directory for files */
    char mtx_in[600];      /* a small Matrix Market file */
    char mtx_out[600];     /* where writes go */
    char bal_in[600];      /* a small BAL file */
    char bal_out[600];     /* where BAL writes go */
    char g2o_in[600];      /* a small g2o file */
    sbm_cbc *A, *B, *Bsq, *U, *D, *Dinv, *Y, *A2;
    sbm_csr *P, *Q, *Pc;   /* CSR: P (m x k), Q (k x n), Pc C of plan */
    sbm_gemm_plan *plan;   /* plan of A2 * Bsq */
    sbm_cbc *C;            /* its C */
    sbm_csr_plan *cplan;   /* plan of P * Q */
    double *x, *y, *Bd, *Cd;
    int64_t *h_colptr;     /* host copy of A's arrays */
    int32_t *h_rowind;
    double *h_values;
    int64_t *bsr_rowptr;
    int32_t *bsr_colind;
    double *bsr_values;
    sbm_bal_problem *bal;
    sbm_ba_system *ba;
    sbm_g2o_graph *g2o;
    sbm_slam_system *slam;
} fixture;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static uint64_t hash_cbc(uint64_t h, const sbm_cbc *A)
{
    sbm_cbc_info i = sbm_cbc_get_info(A);
    h = fnv(h, &i.nbr, sizeof i.nbr);
    h = fnv(h, &i.nbc, sizeof i.nbc);
    h = fnv(h, &i.nnzb, sizeof i.nnzb);
    h = fnv(h, i.colptr, (size_t)(i.nbc + 1) * sizeof(int64_t));
    h = fnv(h, i.rowind, (size_t)i.nnzb * sizeof(int32_t));
    return fnv(h, i.values, (size_t)(i.nnzb * i.r * i.c) * sizeof(double));
}

static uint64_t hash_csr(uint64_t h, const sbm_csr *A)
{
    sbm_csr_info i = sbm_csr_get_info(A);
    h = fnv(h, &i.m, sizeof i.m);
    h = fnv(h, &i.nnz, sizeof i.nnz);
    h = fnv(h, i.rowptr, (size_t)(i.m + 1) * sizeof(int64_t));
    h = fnv(h, i.colind, (size_t)i.nnz * sizeof(int32_t));
    return fnv(h, i.values, (size_t)i.nnz * sizeof(double));
}

/* Hash of everything an operation may read (but not the outputs it writes in place). */
static uint64_t hash_inputs(const fixture *f)
{
    uint64_t h = 1469598103934665603ull;
    const sbm_cbc *cbcs[] = {f->A, f->B, f->Bsq, f->U, f->D, f->A2};
    for (size_t t = 0; t < sizeof cbcs / sizeof cbcs[0]; t++) h = hash_cbc(h, cbcs[t]);
    h = hash_csr(h, f->P);
    h = hash_csr(h, f->Q);
    h = fnv(h, f->x, 64 * sizeof(double));
    h = fnv(h, f->Bd, 64 * 3 * sizeof(double));
    sbm_bal_info b = sbm_bal_get_info(f->bal);
    h = fnv(h, b.camera_params, (size_t)b.cameras * 9 * sizeof(double));
    h = fnv(h, b.point_params, (size_t)b.points * 3 * sizeof(double));
    h = fnv(h, b.obs_xy, (size_t)b.observations * 2 * sizeof(double));
    sbm_g2o_info g = sbm_g2o_get_info(f->g2o);
    h = fnv(h, g.poses, (size_t)(g.vertices * g.pose_size) * sizeof(double));
    return h;
}

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void fixture_make(fixture *f, sbm_ctx *ctx)
{
    memset(f, 0, sizeof *f);
    f->ctx = ctx;
    const char *base = getenv("TMPDIR");
    snprintf(f->dir, sizeof f->dir, "%s/sbm_test_fault_XXXXXX", base && *base ? base : "/tmp");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->mtx_in, sizeof f->mtx_in, "%s/in.mtx", f->dir);
    snprintf(f->mtx_out, sizeof f->mtx_out, "%s/out.mtx", f->dir);
    snprintf(f->bal_in, sizeof f->bal_in, "%s/in.bal", f->dir);
    snprintf(f->bal_out, sizeof f->bal_out, "%s/out.bal", f->dir);
    snprintf(f->g2o_in, sizeof f->g2o_in, "%s/in.g2o", f->dir);
    write_text(f->mtx_in, "%%MatrixMarket matrix coordinate real symmetric\n% a comment\n"
                          "4 4 6\n1 1 4.0\n2 1 -1.0\n2 2 4.0\n3 3 4\n4 2 1e-3\n4 4 2.5\n");
    write_text(f->g2o_in, "VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 1 0 0.1\nVERTEX_SE2 2 2 0.1 0.2\n"
                          "EDGE_SE2 0 1 1 0 0 1 0 0 1 0 1\nEDGE_SE2 1 2 1 0 0.1 1 0 0 1 0 1\n"
                          "EDGE_SE2 0 2 2 0 0.2 1 0 0 1 0 1\nFIX 0\n");
    f->A = sbm_test_random_cbc(ctx, 11, 5, 4, 3, 2, 0.5);    /* 15 x 8 */
    f->B = sbm_test_random_cbc(ctx, 12, 5, 4, 3, 2, 0.5);    /* A's shape, for add */
    f->Bsq = sbm_test_random_cbc(ctx, 13, 4, 6, 2, 3, 0.5);  /* 8 x 18: A*Bsq */
    f->U = sbm_test_random_cbc(ctx, 14, 5, 5, 3, 3, 0.4);    /* 15 x 15: U of A*B^T (hashed only) */
    f->A2 = sbm_test_random_cbc(ctx, 15, 6, 4, 3, 2, 0.6);   /* 18 x 8 */
    f->D = sbm_test_random_bdiag_spd(ctx, 16, 4, 2);         /* 8 x 8, right of A */
    assert_true(f->A && f->B && f->Bsq && f->U && f->A2 && f->D);
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, f->D, &f->Dinv));
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, f->A, &f->Y));
    SBM_ASSERT_OK(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, f->A2, SBM_OP_N, f->Bsq, NULL, 0, &f->plan,
                                         &f->C));
    f->P = sbm_test_random_csr(ctx, 21, 9, 7, 0.3);
    f->Q = sbm_test_random_csr(ctx, 22, 7, 8, 0.3);
    assert_true(f->P && f->Q);
    SBM_ASSERT_OK(ctx, sbm_csr_gemm_plan(ctx, f->P, f->Q, &f->cplan, &f->Pc));
    f->x = sbm_test_random_vector(31, 64);
    f->y = sbm_test_random_vector(32, 64);
    f->Bd = sbm_test_random_vector(33, 64 * 3);
    f->Cd = sbm_test_random_vector(34, 64 * 3);
    sbm_cbc_info ai = sbm_cbc_get_info(f->A);
    f->h_colptr = malloc((size_t)(ai.nbc + 1) * sizeof(int64_t));
    f->h_rowind = malloc((size_t)(ai.nnzb + 1) * sizeof(int32_t));
    f->h_values = malloc((size_t)(ai.nnzb * 6 + 1) * sizeof(double));
    memcpy(f->h_colptr, ai.colptr, (size_t)(ai.nbc + 1) * sizeof(int64_t));
    memcpy(f->h_rowind, ai.rowind, (size_t)ai.nnzb * sizeof(int32_t));
    memcpy(f->h_values, ai.values, (size_t)ai.nnzb * 6 * sizeof(double));
    f->bsr_rowptr = malloc((size_t)(ai.nbr + 1) * sizeof(int64_t));
    f->bsr_colind = malloc((size_t)(ai.nnzb + 1) * sizeof(int32_t));
    f->bsr_values = malloc((size_t)(ai.nnzb * 6 + 1) * sizeof(double));
    SBM_ASSERT_OK(ctx, sbm_cbc_to_bsr(ctx, f->A, SBM_LAYOUT_ROW_MAJOR, f->bsr_rowptr,
                                      f->bsr_colind, f->bsr_values));
    sbm_bal_generate_options o = sbm_bal_generate_defaults(3, 6, 2, 41);
    SBM_ASSERT_OK(ctx, sbm_bal_generate(ctx, &o, &f->bal));
    SBM_ASSERT_OK(ctx, sbm_bal_write(ctx, f->bal_in, f->bal));
    SBM_ASSERT_OK(ctx, sbm_ba_system_create(ctx, f->bal, &f->ba));
    SBM_ASSERT_OK(ctx, sbm_ba_linearize(ctx, f->ba, f->bal));
    SBM_ASSERT_OK(ctx, sbm_g2o_read(ctx, f->g2o_in, &f->g2o));
    SBM_ASSERT_OK(ctx, sbm_slam_system_create(ctx, f->g2o, &f->slam));
}

static void fixture_free(fixture *f)
{
    sbm_cbc *cbcs[] = {f->A, f->B, f->Bsq, f->U, f->D, f->Dinv, f->Y, f->A2, f->C};
    for (size_t t = 0; t < sizeof cbcs / sizeof cbcs[0]; t++) sbm_cbc_destroy(cbcs[t]);
    sbm_csr_destroy(f->P);
    sbm_csr_destroy(f->Q);
    sbm_csr_destroy(f->Pc);
    sbm_gemm_plan_destroy(f->plan);
    sbm_csr_gemm_plan_destroy(f->cplan);
    free(f->x);
    free(f->y);
    free(f->Bd);
    free(f->Cd);
    free(f->h_colptr);
    free(f->h_rowind);
    free(f->h_values);
    free(f->bsr_rowptr);
    free(f->bsr_colind);
    free(f->bsr_values);
    sbm_slam_system_destroy(f->slam);
    sbm_g2o_destroy(f->g2o);
    sbm_ba_system_destroy(f->ba);
    sbm_bal_destroy(f->bal);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
}

/* ---------------------------------------------------------------------------------------- */
/* Operations: each makes the call, checks its outputs (NULL on failure) and frees them      */
/* ---------------------------------------------------------------------------------------- */

#define OUT_CBC(call_with_out)                  \
    sbm_cbc *out = (sbm_cbc *)0x1;              \
    sbm_status st = (call_with_out);            \
    if (st != SBM_SUCCESS) assert_null(out);    \
    sbm_cbc_destroy(out);                       \
    return st
#define OUT_CSR(call_with_out)                  \
    sbm_csr *out = (sbm_csr *)0x1;              \
    sbm_status st = (call_with_out);            \
    if (st != SBM_SUCCESS) assert_null(out);    \
    sbm_csr_destroy(out);                       \
    return st

static sbm_status op_cbc_create(fixture *f)
{
    sbm_cbc_info i = sbm_cbc_get_info(f->A);
    OUT_CBC(sbm_cbc_create(f->ctx, &out, i.nbr, i.nbc, i.r, i.c, f->h_colptr, f->h_rowind,
                           f->h_values));
}
static sbm_status op_cbc_wrap(fixture *f)
{
    sbm_cbc_info i = sbm_cbc_get_info(f->A);
    OUT_CBC(sbm_cbc_wrap(f->ctx, &out, i.nbr, i.nbc, i.r, i.c, f->h_colptr, f->h_rowind,
                         f->h_values));
}
static sbm_status op_cbc_from_triplets(fixture *f)
{
    int32_t br[5] = {0, 3, 0, 4, 3}, bc[5] = {1, 0, 1, 3, 0};
    OUT_CBC(sbm_cbc_from_triplets(f->ctx, &out, 5, 4, 3, 2, 5, br, bc, f->Bd));
}
static sbm_status op_cbc_check(fixture *f) { return sbm_cbc_check(f->ctx, f->A, 1); }
static sbm_status op_cbc_copy(fixture *f) { OUT_CBC(sbm_cbc_copy(f->ctx, f->A, &out)); }
static sbm_status op_cbc_transpose(fixture *f) { OUT_CBC(sbm_cbc_transpose(f->ctx, f->A, &out)); }
static sbm_status op_cbc_reblock(fixture *f) { OUT_CBC(sbm_cbc_reblock(f->ctx, f->A, 5, 4, &out)); }
static sbm_status op_cbc_add(fixture *f) { OUT_CBC(sbm_cbc_add(f->ctx, 2.0, f->A, -1.0, f->B, &out)); }
static sbm_status op_cbc_to_csr(fixture *f) { OUT_CSR(sbm_cbc_to_csr(f->ctx, f->A, &out)); }
static sbm_status op_csr_to_cbc(fixture *f) { OUT_CBC(sbm_csr_to_cbc(f->ctx, f->P, 3, 7, &out)); }
static sbm_status op_cbc_to_bsr(fixture *f)
{
    return sbm_cbc_to_bsr(f->ctx, f->A, SBM_LAYOUT_COL_MAJOR, f->bsr_rowptr, f->bsr_colind,
                          f->bsr_values);
}
static sbm_status op_cbc_from_bsr(fixture *f)
{
    /* from_bsr reads the arrays op_cbc_to_bsr (column-major blocks) or the fixture wrote;
     * both layouts are valid inputs, only the values differ */
    OUT_CBC(sbm_cbc_from_bsr(f->ctx, &out, 5, 4, 3, 2, SBM_LAYOUT_COL_MAJOR, f->bsr_rowptr,
                             f->bsr_colind, f->bsr_values));
}
static sbm_status op_csr_create(fixture *f)
{
    sbm_csr_info i = sbm_csr_get_info(f->P);
    OUT_CSR(sbm_csr_create(f->ctx, &out, i.m, i.n, i.rowptr, i.colind, i.values));
}
static sbm_status op_csr_wrap(fixture *f)
{
    sbm_csr_info i = sbm_csr_get_info(f->P);
    OUT_CSR(sbm_csr_wrap(f->ctx, &out, i.m, i.n, (int64_t *)i.rowptr, (int32_t *)i.colind,
                         i.values));
}
static sbm_status op_csr_from_triplets(fixture *f)
{
    int32_t r[6] = {0, 8, 0, 4, 4, 2}, c[6] = {6, 0, 6, 3, 3, 1};
    OUT_CSR(sbm_csr_from_triplets(f->ctx, &out, 9, 7, 6, r, c, f->x));
}
static sbm_status op_csr_check(fixture *f) { return sbm_csr_check(f->ctx, f->P, 1); }
static sbm_status op_csr_copy(fixture *f) { OUT_CSR(sbm_csr_copy(f->ctx, f->P, &out)); }
static sbm_status op_csr_transpose(fixture *f) { OUT_CSR(sbm_csr_transpose(f->ctx, f->P, &out)); }

static sbm_status gemm_plan_out(fixture *f, sbm_op oa, const sbm_cbc *A, sbm_op ob,
                                const sbm_cbc *B, const sbm_cbc *U, unsigned flags)
{
    sbm_gemm_plan *plan = (sbm_gemm_plan *)0x1;
    sbm_cbc *C = (sbm_cbc *)0x1;
    sbm_status st = sbm_cbc_gemm_plan(f->ctx, oa, A, ob, B, U, flags, &plan, &C);
    if (st != SBM_SUCCESS) {
        assert_null(plan);
        assert_null(C);
    }
    sbm_gemm_plan_destroy(plan);
    sbm_cbc_destroy(C);
    return st;
}
static sbm_status op_gemm_plan_nn(fixture *f)
{
    return gemm_plan_out(f, SBM_OP_N, f->A2, SBM_OP_N, f->Bsq, NULL, 0);
}
/* S = U + A^T A (8 x 8 of 2x2... A is 15 x 8 with 3x2 blocks: A^T A has 2x2 blocks); upper */
static sbm_status op_gemm_plan_tn_upper(fixture *f)
{
    return gemm_plan_out(f, SBM_OP_T, f->A, SBM_OP_N, f->A, f->D, SBM_GEMM_UPPER);
}
static sbm_status op_gemm_execute(fixture *f)
{
    return sbm_cbc_gemm_execute(f->ctx, f->plan, 1.5, f->A2, f->Bsq, NULL, f->C);
}
static sbm_status op_gemm_oneshot_t_upper_u(fixture *f)
{
    OUT_CBC(sbm_cbc_gemm(f->ctx, -1.0, SBM_OP_T, f->A, SBM_OP_N, f->A, f->D, SBM_GEMM_UPPER, &out));
}
static sbm_status op_gemm_oneshot_nt(fixture *f)
{
    OUT_CBC(sbm_cbc_gemm(f->ctx, 1.0, SBM_OP_N, f->A, SBM_OP_T, f->B, NULL, 0, &out));
}
static sbm_status op_bdiag_inverse(fixture *f) { return sbm_bdiag_inverse(f->ctx, f->D, f->Dinv); }
static sbm_status op_bdiag_scale(fixture *f)
{
    return sbm_bdiag_scale(f->ctx, SBM_SIDE_RIGHT, f->D, f->A, f->Y);
}
static sbm_status op_cbc_spmv_n(fixture *f)
{
    return sbm_cbc_spmv(f->ctx, SBM_OP_N, 1.0, f->A, f->x, 0.5, f->y);
}
static sbm_status op_cbc_spmv_t(fixture *f)
{
    return sbm_cbc_spmv(f->ctx, SBM_OP_T, 1.0, f->A, f->x, 0.0, f->y);
}
static sbm_status op_csr_gemm_plan(fixture *f)
{
    sbm_csr_plan *plan = (sbm_csr_plan *)0x1;
    sbm_csr *C = (sbm_csr *)0x1;
    sbm_status st = sbm_csr_gemm_plan(f->ctx, f->P, f->Q, &plan, &C);
    if (st != SBM_SUCCESS) {
        assert_null(plan);
        assert_null(C);
    }
    sbm_csr_gemm_plan_destroy(plan);
    sbm_csr_destroy(C);
    return st;
}
static sbm_status op_csr_gemm_execute(fixture *f)
{
    return sbm_csr_gemm_execute(f->ctx, f->cplan, f->P, f->Q, f->Pc);
}
static sbm_status op_csr_gemm(fixture *f) { OUT_CSR(sbm_csr_gemm(f->ctx, f->P, f->Q, &out)); }
static sbm_status op_csr_spmv(fixture *f) { return sbm_csr_spmv(f->ctx, 1.0, f->P, f->x, 1.0, f->y); }
static sbm_status op_csr_spmm(fixture *f)
{
    return sbm_csr_spmm(f->ctx, 1.0, f->P, 3, SBM_LAYOUT_COL_MAJOR, f->Bd, 7, 0.0, f->Cd, 9);
}
/* plan (HYB: the CPU converts nothing but still copies A), update, execute, destroy */
static sbm_status op_spmv_plan(fixture *f)
{
    sbm_spmv_plan *plan = (sbm_spmv_plan *)0x1;
    sbm_status st = sbm_csr_spmv_plan(f->ctx, f->P, SBM_SPMV_HYB, &plan);
    if (st != SBM_SUCCESS) {
        assert_null(plan);
        return st;
    }
    st = sbm_spmv_plan_update(f->ctx, plan, f->P);
    if (st == SBM_SUCCESS) st = sbm_spmv_plan_execute(f->ctx, plan, 1.0, f->x, 1.0, f->y);
    sbm_spmv_plan_destroy(plan);
    return st;
}
static sbm_status op_array(fixture *f)
{
    double *a = (double *)0x1, h[5] = {1, 2, 3, 4, 5}, back[5];
    sbm_status st = sbm_array_create(f->ctx, 5, &a);
    if (st != SBM_SUCCESS) {
        assert_null(a);
        return st;
    }
    st = sbm_array_upload(f->ctx, a, h, 5);
    if (st == SBM_SUCCESS) st = sbm_array_download(f->ctx, back, a, 5);
    if (st == SBM_SUCCESS) assert_memory_equal(back, h, sizeof h);
    sbm_array_destroy(f->ctx, a);
    return st;
}
static sbm_status op_csr_read_mtx(fixture *f) { OUT_CSR(sbm_csr_read_mtx(f->ctx, f->mtx_in, &out)); }
static sbm_status op_csr_write_mtx(fixture *f)
{
    unlink(f->mtx_out);
    sbm_status st = sbm_csr_write_mtx(f->ctx, f->mtx_out, f->P);
    /* a failed write leaves no file behind */
    if (st != SBM_SUCCESS) assert_int_not_equal(access(f->mtx_out, F_OK), 0);
    return st;
}
static sbm_status op_cbc_write_mtx(fixture *f)
{
    unlink(f->mtx_out);
    sbm_status st = sbm_cbc_write_mtx(f->ctx, f->mtx_out, f->A);
    if (st != SBM_SUCCESS) assert_int_not_equal(access(f->mtx_out, F_OK), 0);
    return st;
}
static sbm_status op_bal_read(fixture *f)
{
    sbm_bal_problem *p = (sbm_bal_problem *)0x1;
    sbm_status st = sbm_bal_read(f->ctx, f->bal_in, &p);
    if (st != SBM_SUCCESS) assert_null(p);
    sbm_bal_destroy(p);
    return st;
}
static sbm_status op_bal_write(fixture *f)
{
    unlink(f->bal_out);
    sbm_status st = sbm_bal_write(f->ctx, f->bal_out, f->bal);
    if (st != SBM_SUCCESS) assert_int_not_equal(access(f->bal_out, F_OK), 0);
    return st;
}
static sbm_status op_bal_generate(fixture *f)
{
    sbm_bal_generate_options o = sbm_bal_generate_defaults(3, 5, 2, 7);
    sbm_bal_problem *p = (sbm_bal_problem *)0x1;
    sbm_status st = sbm_bal_generate(f->ctx, &o, &p);
    if (st != SBM_SUCCESS) assert_null(p);
    sbm_bal_destroy(p);
    return st;
}
static sbm_status op_bal_evaluate(fixture *f)
{
    double cost = 0;
    return sbm_bal_evaluate(f->ctx, f->bal, NULL, &cost);
}
static sbm_status op_g2o_read(fixture *f)
{
    sbm_g2o_graph *g = (sbm_g2o_graph *)0x1;
    sbm_status st = sbm_g2o_read(f->ctx, f->g2o_in, &g);
    if (st != SBM_SUCCESS) assert_null(g);
    sbm_g2o_destroy(g);
    return st;
}
static sbm_status op_g2o_chi2(fixture *f)
{
    double chi2 = 0;
    return sbm_g2o_chi2(f->ctx, f->g2o, &chi2);
}
static sbm_status op_ba_system_create(fixture *f)
{
    sbm_ba_system *s = (sbm_ba_system *)0x1;
    sbm_status st = sbm_ba_system_create(f->ctx, f->bal, &s);
    if (st != SBM_SUCCESS) assert_null(s);
    sbm_ba_system_destroy(s);
    return st;
}
static sbm_status op_ba_linearize(fixture *f) { return sbm_ba_linearize(f->ctx, f->ba, f->bal); }
static sbm_status op_ba_system_reduce(fixture *f)
{
    double rhs[27];
    OUT_CBC(sbm_ba_system_reduce(f->ctx, f->ba, &out, rhs));
}
static sbm_status op_slam_system_create(fixture *f)
{
    sbm_slam_system *s = (sbm_slam_system *)0x1;
    sbm_status st = sbm_slam_system_create(f->ctx, f->g2o, &s);
    if (st != SBM_SUCCESS) assert_null(s);
    sbm_slam_system_destroy(s);
    return st;
}
static sbm_status op_slam_linearize(fixture *f) { return sbm_slam_linearize(f->ctx, f->slam, f->g2o); }

typedef struct op_entry {
    const char *name;
    sbm_status (*fn)(fixture *f);
} op_entry;

#define OP(f) {#f, f}
static const op_entry ops[] = {
    OP(op_cbc_create),        OP(op_cbc_wrap),           OP(op_cbc_from_triplets),
    OP(op_cbc_check),         OP(op_cbc_copy),           OP(op_cbc_transpose),
    OP(op_cbc_reblock),       OP(op_cbc_add),            OP(op_cbc_to_csr),
    OP(op_csr_to_cbc),        OP(op_cbc_to_bsr),         OP(op_cbc_from_bsr),
    OP(op_csr_create),        OP(op_csr_wrap),           OP(op_csr_from_triplets),
    OP(op_csr_check),         OP(op_csr_copy),           OP(op_csr_transpose),
    OP(op_gemm_plan_nn),      OP(op_gemm_plan_tn_upper), OP(op_gemm_execute),
    OP(op_gemm_oneshot_t_upper_u), OP(op_gemm_oneshot_nt), OP(op_bdiag_inverse),
    OP(op_bdiag_scale),       OP(op_cbc_spmv_n),         OP(op_cbc_spmv_t),
    OP(op_csr_gemm_plan),     OP(op_csr_gemm_execute),   OP(op_csr_gemm),
    OP(op_csr_spmv),          OP(op_csr_spmm),           OP(op_csr_read_mtx),
    OP(op_csr_write_mtx),     OP(op_cbc_write_mtx),      OP(op_bal_read),
    OP(op_bal_write),         OP(op_bal_generate),       OP(op_bal_evaluate),
    OP(op_g2o_read),          OP(op_g2o_chi2),           OP(op_ba_system_create),
    OP(op_ba_linearize),      OP(op_ba_system_reduce),   OP(op_slam_system_create),
    OP(op_slam_linearize),    OP(op_spmv_plan),          OP(op_array),
};

/* Run op once with no failure (counting its allocations n), then fail allocation k for every
 * k = 1..n. @return n. */
static long inject(fixture *f, const op_entry *op)
{
    sbm_ctx *ctx = f->ctx;
    counting cnt = {0, 0, 0};
    sbm_allocator a = {counting_alloc, counting_free, &cnt};
    SBM_ASSERT_OK(ctx, sbm_ctx_set_allocator(ctx, &a));
    sbm_status st = op->fn(f);
    if (st != SBM_SUCCESS) fail_msg("%s without failures: %s", op->name, sbm_ctx_last_error(ctx));
    const long n = cnt.calls;
    if (cnt.live != 0) fail_msg("%s leaves %ld allocations live after a success", op->name, cnt.live);
    for (long k = 1; k <= n; k++) {
        const uint64_t before = hash_inputs(f);
        cnt = (counting){0, k, 0};
        st = op->fn(f);
        if (st != SBM_ERR_OUT_OF_MEMORY || !strstr(sbm_ctx_last_error(ctx), "cannot allocate"))
            fail_msg("%s, allocation %ld of %ld failed: got %s \"%s\"", op->name, k, n,
                     sbm_status_name(st), sbm_ctx_last_error(ctx));
        if (cnt.live != 0)
            fail_msg("%s, allocation %ld of %ld failed: %ld allocations leaked", op->name, k, n,
                     cnt.live);
        if (hash_inputs(f) != before)
            fail_msg("%s, allocation %ld of %ld failed: an input changed", op->name, k, n);
        /* the context is usable: the same call succeeds right after */
        cnt = (counting){0, 0, 0};
        st = op->fn(f);
        if (st != SBM_SUCCESS)
            fail_msg("%s after failure %ld: %s", op->name, k, sbm_ctx_last_error(ctx));
        assert_int_equal(cnt.live, 0);
    }
    SBM_ASSERT_OK(ctx, sbm_ctx_set_allocator(ctx, NULL));
    return n;
}

static void test_every_operation(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    if (e->backend != SBM_BACKEND_CPU) skip(); /* device memory: tested with a memory budget */
    fixture f;
    fixture_make(&f, e->ctx);
    long total = 0;
    for (size_t t = 0; t < sizeof ops / sizeof ops[0]; t++) {
        long n = inject(&f, &ops[t]);
        print_message("  %-28s %4ld allocations (each failed once)\n", ops[t].name, n);
        total += n;
    }
    print_message("  %zu operations, %ld injected failures\n", sizeof ops / sizeof ops[0], total);
    fixture_free(&f);
}

/* A failure inside a nested call (the Schur one-shot: plan, inverse, scale, SpGEMM, SpMV) at a
 * larger problem than the fixture's. */
static void test_nested_schur(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    if (e->backend != SBM_BACKEND_CPU) skip();
    sbm_bal_generate_options o = sbm_bal_generate_defaults(6, 40, 3, 5);
    sbm_bal_problem *p = NULL;
    sbm_ba_system *s = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &o, &p));
    SBM_ASSERT_OK(e->ctx, sbm_ba_system_create(e->ctx, p, &s));
    SBM_ASSERT_OK(e->ctx, sbm_ba_linearize(e->ctx, s, p));
    sbm_ba_system_info si = sbm_ba_system_get_info(s);
    counting cnt = {0, 0, 0};
    sbm_allocator a = {counting_alloc, counting_free, &cnt};
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, &a));
    double rhs[54];
    sbm_cbc *S = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_ba_schur(e->ctx, si.U, si.V, si.W, si.gc, si.gp, &S, rhs));
    sbm_cbc_destroy(S);
    const long n = cnt.calls;
    print_message("  sbm_ba_schur (6 cameras, 40 points): %ld allocations, each failed once\n", n);
    for (long k = 1; k <= n; k++) {
        cnt = (counting){0, k, 0};
        S = (sbm_cbc *)0x1;
        SBM_ASSERT_FAILS(e->ctx, sbm_ba_schur(e->ctx, si.U, si.V, si.W, si.gc, si.gp, &S, rhs),
                         SBM_ERR_OUT_OF_MEMORY, "cannot allocate");
        assert_null(S);
        assert_int_equal(cnt.live, 0);
    }
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, NULL));
    sbm_ba_system_destroy(s);
    sbm_bal_destroy(p);
}

/* The solvers (many nested calls per iteration): every allocation of a short Levenberg-Marquardt
 * run on a small BAL problem and of a Gauss-Newton run on a small pose graph, each with both
 * linear solvers. On failure the estimate may have moved (the solve updates it in place as steps
 * are accepted), so only status, message and leaks are checked. */
static void test_solvers(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    if (e->backend != SBM_BACKEND_CPU) skip();
    fixture f;
    fixture_make(&f, e->ctx);
    counting cnt = {0, 0, 0};
    sbm_allocator a = {counting_alloc, counting_free, &cnt};
    for (int which = 0; which < 4; which++) {
        sbm_solver_options o = sbm_solver_default_options();
        o.max_iterations = 2;
        o.linear_solver = (which & 1) ? SBM_LINEAR_PCG : SBM_LINEAR_DENSE_CHOLESKY;
        long n = -1;
        for (long k = 0; k <= n || n < 0; k++) {
            sbm_bal_problem *p = NULL;
            sbm_g2o_graph *g = NULL;
            if (which < 2) {
                sbm_bal_generate_options go = sbm_bal_generate_defaults(3, 6, 2, 41);
                SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &go, &p));
            } else {
                SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, f.g2o_in, &g));
            }
            cnt = (counting){0, k, 0};
            SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, &a));
            sbm_status st = which < 2 ? sbm_ba_solve(e->ctx, p, &o, NULL)
                                      : sbm_slam_solve(e->ctx, g, &o, NULL);
            SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, NULL));
            if (k == 0) {
                SBM_ASSERT_OK(e->ctx, st);
                n = cnt.calls;
                print_message("  %s (%s): %ld allocations, each failed once\n",
                              which < 2 ? "sbm_ba_solve" : "sbm_slam_solve",
                              (which & 1) ? "PCG" : "dense Cholesky", n);
            } else if (st != SBM_ERR_OUT_OF_MEMORY ||
                       !strstr(sbm_ctx_last_error(e->ctx), "cannot allocate")) {
                fail_msg("solver %d, allocation %ld of %ld failed: got %s \"%s\"", which, k, n,
                         sbm_status_name(st), sbm_ctx_last_error(e->ctx));
            }
            if (cnt.live != 0) fail_msg("solver %d, allocation %ld: %ld leaked", which, k, cnt.live);
            sbm_bal_destroy(p);
            sbm_g2o_destroy(g);
        }
    }
    fixture_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_every_operation),
        SBM_TEST_BOTH(test_nested_schur),
        SBM_TEST_BOTH(test_solvers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
