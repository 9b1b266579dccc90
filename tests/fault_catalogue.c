/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
/* The fault-injection catalogue (fault_catalogue.h): inputs, hashes and operations. */
#include "fault_catalogue.h"
#include "sbm_internal.h" /* white-box: arrays in a context's memory, its copies */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *fault_counting_alloc(void *user, size_t bytes)
{
    fault_counting *c = user;
    if (++c->calls == c->fail_at) return NULL;
    void *p = malloc(bytes);
    if (p) c->live++;
    return p;
}

void fault_counting_free(void *user, void *ptr)
{
    fault_counting *c = user;
    if (ptr) {
        c->live--;
        free(ptr);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Hashes of data in any context's memory (downloaded through a CPU context)                */
/* ---------------------------------------------------------------------------------------- */

uint64_t fault_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

uint64_t fault_hash_cbc(sbm_ctx *host, uint64_t h, const sbm_cbc *A)
{
    sbm_cbc *H = NULL;
    SBM_ASSERT_OK(host, sbm_cbc_copy(host, A, &H));
    sbm_cbc_info i = sbm_cbc_get_info(H);
    h = fault_fnv(h, &i.nbr, sizeof i.nbr);
    h = fault_fnv(h, &i.nbc, sizeof i.nbc);
    h = fault_fnv(h, &i.r, sizeof i.r);
    h = fault_fnv(h, &i.c, sizeof i.c);
    h = fault_fnv(h, i.colptr, (size_t)(i.nbc + 1) * sizeof(int64_t));
    h = fault_fnv(h, i.rowind, (size_t)i.nnzb * sizeof(int32_t));
    h = fault_fnv(h, i.values, (size_t)(i.nnzb * i.r * i.c) * sizeof(double));
    sbm_cbc_destroy(H);
    return h;
}

uint64_t fault_hash_csr(sbm_ctx *host, uint64_t h, const sbm_csr *A)
{
    sbm_csr *H = NULL;
    SBM_ASSERT_OK(host, sbm_csr_copy(host, A, &H));
    sbm_csr_info i = sbm_csr_get_info(H);
    h = fault_fnv(h, &i.m, sizeof i.m);
    h = fault_fnv(h, &i.n, sizeof i.n);
    h = fault_fnv(h, i.rowptr, (size_t)(i.m + 1) * sizeof(int64_t));
    h = fault_fnv(h, i.colind, (size_t)i.nnz * sizeof(int32_t));
    h = fault_fnv(h, i.values, (size_t)i.nnz * sizeof(double));
    sbm_csr_destroy(H);
    return h;
}

/* n bytes of device memory d (any context of the device can copy them). */
uint64_t fault_hash_dev(sbm_ctx *dev, uint64_t h, const void *d, size_t n)
{
    unsigned char *buf = malloc(n + 1);
    assert_non_null(buf);
    if (n > 0) SBM_ASSERT_OK(dev, dev->ops->copy(dev, buf, d, n, 1));
    h = fault_fnv(h, buf, n);
    free(buf);
    return h;
}

/* ---------------------------------------------------------------------------------------- */
/* Inputs: made in the suite's context with the default allocator                           */
/* ---------------------------------------------------------------------------------------- */

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

/* Where an operation's own scratch arrays go: base's memory, unless the operation runs in base
 * itself (the CPU suite, whose hook must see only the operation's allocations). */
static sbm_ctx *scratch_ctx(const fault_fixture *f) { return f->ctx == f->base ? f->host : f->base; }

static void *dev_array(sbm_ctx *ctx, size_t bytes)
{
    void *p = sbm__alloc(ctx, bytes ? bytes : 1, "a test array");
    assert_non_null(p);
    return p;
}

void fault_fixture_make(fault_fixture *f, sbm_test_env *e)
{
    memset(f, 0, sizeof *f);
    sbm_ctx *ctx = e->ctx;
    f->ctx = ctx;
    f->base = ctx;
    f->host = e->host;
    const char *base = getenv("TMPDIR");
    snprintf(f->dir, sizeof f->dir, "%s/sbm_test_faults_XXXXXX", base && *base ? base : "/tmp");
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
    f->U = sbm_test_random_cbc(ctx, 14, 5, 5, 3, 3, 0.4);    /* hashed only */
    f->A2 = sbm_test_random_cbc(ctx, 15, 6, 4, 3, 2, 0.6);   /* 18 x 8 */
    f->D = sbm_test_random_bdiag_spd(ctx, 16, 4, 2);         /* 8 x 8, right of A */
    /* the sliced products: 60 x 80 times 80 x 120 blocks of 3x3 */
    f->S1 = sbm_test_random_cbc(ctx, 17, 60, 80, 3, 3, 0.06);
    f->S2 = sbm_test_random_cbc(ctx, 18, 80, 120, 3, 3, 0.06);
    f->Spd = fault_chol_input(ctx);
    assert_true(f->A && f->B && f->Bsq && f->U && f->A2 && f->D && f->S1 && f->S2 && f->Spd);
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, f->D, &f->Dinv));
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, f->A, &f->Y));
    SBM_ASSERT_OK(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, f->A2, SBM_OP_N, f->Bsq, NULL, 0, &f->plan,
                                         &f->C));
    f->P = sbm_test_random_csr(ctx, 21, 9, 7, 0.3);
    f->Q = sbm_test_random_csr(ctx, 22, 7, 8, 0.3);
    assert_true(f->P && f->Q);
    sbm_status st = sbm_csr_gemm_plan(ctx, f->P, f->Q, &f->cplan, &f->Pc);
    if (st != SBM_ERR_NOT_SUPPORTED) SBM_ASSERT_OK(ctx, st);
    f->h_x = sbm_test_random_vector(31, FAULT_NX);
    f->h_y = sbm_test_random_vector(32, FAULT_NX);
    f->h_Bd = sbm_test_random_vector(33, FAULT_NX * 3);
    f->h_Cd = sbm_test_random_vector(34, FAULT_NX * 3);
    f->x = sbm_test_vec_upload(ctx, f->h_x, FAULT_NX);
    f->y = sbm_test_vec_upload(ctx, f->h_y, FAULT_NX);
    f->Bd = sbm_test_vec_upload(ctx, f->h_Bd, FAULT_NX * 3);
    f->Cd = sbm_test_vec_upload(ctx, f->h_Cd, FAULT_NX * 3);
    sbm_cbc *hA = sbm_test_cbc_to_host(f->A);
    sbm_cbc_info ai = sbm_cbc_get_info(hA);
    f->h_colptr = malloc((size_t)(ai.nbc + 1) * sizeof(int64_t));
    f->h_rowind = malloc((size_t)(ai.nnzb + 1) * sizeof(int32_t));
    f->h_values = malloc((size_t)(ai.nnzb * 6 + 1) * sizeof(double));
    assert_true(f->h_colptr && f->h_rowind && f->h_values);
    memcpy(f->h_colptr, ai.colptr, (size_t)(ai.nbc + 1) * sizeof(int64_t));
    memcpy(f->h_rowind, ai.rowind, (size_t)ai.nnzb * sizeof(int32_t));
    memcpy(f->h_values, ai.values, (size_t)ai.nnzb * 6 * sizeof(double));
    f->bsr_rowptr = dev_array(ctx, (size_t)(ai.nbr + 1) * sizeof(int64_t));
    f->bsr_colind = dev_array(ctx, (size_t)ai.nnzb * sizeof(int32_t));
    f->bsr_values = dev_array(ctx, (size_t)ai.nnzb * 6 * sizeof(double));
    SBM_ASSERT_OK(ctx, sbm_cbc_to_bsr(ctx, f->A, SBM_LAYOUT_ROW_MAJOR, f->bsr_rowptr,
                                      f->bsr_colind, f->bsr_values));
    sbm_cbc_destroy(hA);
    sbm_bal_generate_options o = sbm_bal_generate_defaults(3, 6, 2, 41);
    SBM_ASSERT_OK(ctx, sbm_bal_generate(ctx, &o, &f->bal));
    SBM_ASSERT_OK(ctx, sbm_bal_write(ctx, f->bal_in, f->bal));
    SBM_ASSERT_OK(ctx, sbm_ba_system_create(ctx, f->bal, &f->ba));
    SBM_ASSERT_OK(ctx, sbm_ba_linearize(ctx, f->ba, f->bal));
    SBM_ASSERT_OK(ctx, sbm_g2o_read(ctx, f->g2o_in, &f->g2o));
    SBM_ASSERT_OK(ctx, sbm_slam_system_create(ctx, f->g2o, &f->slam));
}

void fault_fixture_free(fault_fixture *f)
{
    sbm_cbc *cbcs[] = {f->A, f->B, f->Bsq, f->U, f->D, f->Dinv, f->Y, f->A2, f->C, f->S1, f->S2,
                       f->Spd};
    for (size_t t = 0; t < sizeof cbcs / sizeof cbcs[0]; t++) sbm_cbc_destroy(cbcs[t]);
    sbm_csr_destroy(f->P);
    sbm_csr_destroy(f->Q);
    sbm_csr_destroy(f->Pc);
    sbm_gemm_plan_destroy(f->plan);
    sbm_csr_gemm_plan_destroy(f->cplan);
    void *dev[] = {f->x, f->y, f->Bd, f->Cd, f->bsr_rowptr, f->bsr_colind, f->bsr_values};
    for (size_t t = 0; t < sizeof dev / sizeof dev[0]; t++) sbm__free(f->base, dev[t]);
    free(f->h_x);
    free(f->h_y);
    free(f->h_Bd);
    free(f->h_Cd);
    free(f->h_colptr);
    free(f->h_rowind);
    free(f->h_values);
    sbm_slam_system_destroy(f->slam);
    sbm_g2o_destroy(f->g2o);
    sbm_ba_system_destroy(f->ba);
    sbm_bal_destroy(f->bal);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
}

uint64_t fault_hash_inputs(fault_fixture *f)
{
    uint64_t h = 1469598103934665603ull;
    const sbm_cbc *cbcs[] = {f->A, f->B, f->Bsq, f->U, f->D, f->A2, f->S1, f->S2, f->Spd};
    for (size_t t = 0; t < sizeof cbcs / sizeof cbcs[0]; t++) h = fault_hash_cbc(f->host, h, cbcs[t]);
    h = fault_hash_csr(f->host, h, f->P);
    h = fault_hash_csr(f->host, h, f->Q);
    h = fault_hash_dev(f->base, h, f->x, FAULT_NX * sizeof(double));
    h = fault_hash_dev(f->base, h, f->Bd, FAULT_NX * 3 * sizeof(double));
    sbm_bal_info b = sbm_bal_get_info(f->bal);
    h = fault_fnv(h, b.camera_params, (size_t)b.cameras * 9 * sizeof(double));
    h = fault_fnv(h, b.point_params, (size_t)b.points * 3 * sizeof(double));
    h = fault_fnv(h, b.obs_xy, (size_t)b.observations * 2 * sizeof(double));
    sbm_g2o_info g = sbm_g2o_get_info(f->g2o);
    h = fault_fnv(h, g.poses, (size_t)(g.vertices * g.pose_size) * sizeof(double));
    return h;
}

/* ---------------------------------------------------------------------------------------- */
/* Operations                                                                               */
/* ---------------------------------------------------------------------------------------- */

#define OUT_CBC(call_with_out)                                     \
    sbm_cbc *out = (sbm_cbc *)0x1;                                 \
    sbm_status st = (call_with_out);                               \
    if (st != SBM_SUCCESS)                                         \
        assert_null(out);                                          \
    else                                                           \
        f->out_hash = fault_hash_cbc(f->host, 7, out);                   \
    sbm_cbc_destroy(out);                                          \
    return st
#define OUT_CSR(call_with_out)                                     \
    sbm_csr *out = (sbm_csr *)0x1;                                 \
    sbm_status st = (call_with_out);                               \
    if (st != SBM_SUCCESS)                                         \
        assert_null(out);                                          \
    else                                                           \
        f->out_hash = fault_hash_csr(f->host, 7, out);                   \
    sbm_csr_destroy(out);                                          \
    return st
/* An operation that writes an existing output: hash it after a success. */
#define IN_PLACE(call, hash_expr)                                  \
    sbm_status st = (call);                                        \
    if (st == SBM_SUCCESS) f->out_hash = (hash_expr);              \
    return st

static sbm_status op_cbc_create(fault_fixture *f)
{
    OUT_CBC(sbm_cbc_create(f->ctx, &out, 5, 4, 3, 2, f->h_colptr, f->h_rowind, f->h_values));
}
static sbm_status op_cbc_wrap(fault_fixture *f)
{
    sbm_cbc_info i = sbm_cbc_get_info(f->A);
    sbm_cbc *out = (sbm_cbc *)0x1;
    sbm_status st = sbm_cbc_wrap(f->ctx, &out, i.nbr, i.nbc, i.r, i.c, (int64_t *)i.colptr,
                                 (int32_t *)i.rowind, i.values);
    if (st != SBM_SUCCESS) assert_null(out);
    else f->out_hash = fault_hash_cbc(f->host, 7, out);
    sbm_cbc_destroy(out);
    return st;
}
static sbm_status op_cbc_from_triplets(fault_fixture *f)
{
    int32_t br[5] = {0, 3, 0, 4, 3}, bc[5] = {1, 0, 1, 3, 0};
    OUT_CBC(sbm_cbc_from_triplets(f->ctx, &out, 5, 4, 3, 2, 5, br, bc, f->h_Bd));
}
static sbm_status op_cbc_check(fault_fixture *f) { IN_PLACE(sbm_cbc_check(f->ctx, f->A, 1), 1); }
static sbm_status op_cbc_copy(fault_fixture *f) { OUT_CBC(sbm_cbc_copy(f->ctx, f->A, &out)); }
static sbm_status op_cbc_transpose(fault_fixture *f) { OUT_CBC(sbm_cbc_transpose(f->ctx, f->A, &out)); }
static sbm_status op_cbc_reblock(fault_fixture *f) { OUT_CBC(sbm_cbc_reblock(f->ctx, f->A, 5, 4, &out)); }
static sbm_status op_cbc_add(fault_fixture *f) { OUT_CBC(sbm_cbc_add(f->ctx, 2.0, f->A, -1.0, f->B, &out)); }
static sbm_status op_cbc_to_csr(fault_fixture *f) { OUT_CSR(sbm_cbc_to_csr(f->ctx, f->A, &out)); }
static sbm_status op_csr_to_cbc(fault_fixture *f) { OUT_CBC(sbm_csr_to_cbc(f->ctx, f->P, 3, 7, &out)); }
static sbm_status op_cbc_to_bsr(fault_fixture *f)
{
    IN_PLACE(sbm_cbc_to_bsr(f->ctx, f->A, SBM_LAYOUT_COL_MAJOR, f->bsr_rowptr, f->bsr_colind,
                            f->bsr_values),
             fault_hash_dev(f->base, 0, f->bsr_values, 15 * sizeof(double)));
}
static sbm_status op_cbc_from_bsr(fault_fixture *f)
{
    sbm_cbc_info i = sbm_cbc_get_info(f->A);
    OUT_CBC(sbm_cbc_from_bsr(f->ctx, &out, i.nbr, i.nbc, 3, 2, SBM_LAYOUT_COL_MAJOR, f->bsr_rowptr,
                             f->bsr_colind, f->bsr_values));
}
static sbm_status op_csr_create(fault_fixture *f)
{
    const int64_t rp[4] = {0, 2, 2, 3};
    const int32_t ci[3] = {0, 4, 1};
    OUT_CSR(sbm_csr_create(f->ctx, &out, 3, 5, rp, ci, f->h_x));
}
static sbm_status op_csr_wrap(fault_fixture *f)
{
    sbm_csr_info i = sbm_csr_get_info(f->P);
    OUT_CSR(sbm_csr_wrap(f->ctx, &out, i.m, i.n, (int64_t *)i.rowptr, (int32_t *)i.colind,
                         i.values));
}
static sbm_status op_csr_from_triplets(fault_fixture *f)
{
    int32_t r[6] = {0, 8, 0, 4, 4, 2}, c[6] = {6, 0, 6, 3, 3, 1};
    OUT_CSR(sbm_csr_from_triplets(f->ctx, &out, 9, 7, 6, r, c, f->h_x));
}
static sbm_status op_csr_check(fault_fixture *f) { IN_PLACE(sbm_csr_check(f->ctx, f->P, 1), 1); }
static sbm_status op_csr_copy(fault_fixture *f) { OUT_CSR(sbm_csr_copy(f->ctx, f->P, &out)); }
static sbm_status op_csr_transpose(fault_fixture *f) { OUT_CSR(sbm_csr_transpose(f->ctx, f->P, &out)); }

/* Plan (and execute, so that the plan's content is checked through C) of a block product. */
static sbm_status gemm_plan_out(fault_fixture *f, sbm_op oa, const sbm_cbc *A, sbm_op ob,
                                const sbm_cbc *B, const sbm_cbc *U, unsigned flags, int64_t min_slices)
{
    sbm_gemm_plan *plan = (sbm_gemm_plan *)0x1;
    sbm_cbc *C = (sbm_cbc *)0x1;
    sbm_status st = sbm_cbc_gemm_plan(f->ctx, oa, A, ob, B, U, flags, &plan, &C);
    if (st != SBM_SUCCESS) {
        assert_null(plan);
        assert_null(C);
        return st;
    }
    sbm_gemm_plan_info pi = sbm_gemm_plan_get_info(plan);
    if (pi.slices < min_slices)
        fail_msg("the budget was meant to cut the product into >= %lld slices, got %lld",
                 (long long)min_slices, (long long)pi.slices);
    st = sbm_cbc_gemm_execute(f->ctx, plan, -0.5, A, B, U, C);
    if (st == SBM_SUCCESS) f->out_hash = fault_hash_cbc(f->host, 7, C);
    sbm_gemm_plan_destroy(plan);
    sbm_cbc_destroy(C);
    return st;
}
static sbm_status op_gemm_plan_nn(fault_fixture *f)
{
    return gemm_plan_out(f, SBM_OP_N, f->A2, SBM_OP_N, f->Bsq, NULL, 0, 1);
}
static sbm_status op_gemm_plan_tn_upper(fault_fixture *f)
{
    return gemm_plan_out(f, SBM_OP_T, f->A, SBM_OP_N, f->A, f->D, SBM_GEMM_UPPER, 1);
}
/* A budget of 4 KiB cuts the plan's sort into many column slices. */
static sbm_status op_gemm_plan_sliced(fault_fixture *f)
{
    SBM_ASSERT_OK(f->ctx, sbm_ctx_set_memory_budget(f->ctx, 4096));
    sbm_status st = gemm_plan_out(f, SBM_OP_N, f->S1, SBM_OP_N, f->S2, NULL, 0, 3);
    SBM_ASSERT_OK(f->ctx, sbm_ctx_set_memory_budget(f->ctx, 0));
    return st;
}
static sbm_status op_gemm_plan_sliced_upper(fault_fixture *f)
{
    SBM_ASSERT_OK(f->ctx, sbm_ctx_set_memory_budget(f->ctx, 4096));
    sbm_status st = gemm_plan_out(f, SBM_OP_N, f->S1, SBM_OP_T, f->S1, NULL, SBM_GEMM_UPPER, 3);
    SBM_ASSERT_OK(f->ctx, sbm_ctx_set_memory_budget(f->ctx, 0));
    return st;
}
static sbm_status op_gemm_execute(fault_fixture *f)
{
    IN_PLACE(sbm_cbc_gemm_execute(f->ctx, f->plan, 1.5, f->A2, f->Bsq, NULL, f->C),
             fault_hash_cbc(f->host, 7, f->C));
}
static sbm_status op_gemm_oneshot_t_upper_u(fault_fixture *f)
{
    OUT_CBC(sbm_cbc_gemm(f->ctx, -1.0, SBM_OP_T, f->A, SBM_OP_N, f->A, f->D, SBM_GEMM_UPPER, &out));
}
static sbm_status op_gemm_oneshot_nt(fault_fixture *f)
{
    OUT_CBC(sbm_cbc_gemm(f->ctx, 1.0, SBM_OP_N, f->A, SBM_OP_T, f->B, NULL, 0, &out));
}
static sbm_status op_bdiag_inverse(fault_fixture *f)
{
    IN_PLACE(sbm_bdiag_inverse(f->ctx, f->D, f->Dinv), fault_hash_cbc(f->host, 7, f->Dinv));
}
static sbm_status op_bdiag_scale(fault_fixture *f)
{
    IN_PLACE(sbm_bdiag_scale(f->ctx, SBM_SIDE_RIGHT, f->D, f->A, f->Y), fault_hash_cbc(f->host, 7, f->Y));
}
/* y starts from its host values each time: the result does not depend on earlier calls. */
static void reset_y(fault_fixture *f)
{
    SBM_ASSERT_OK(f->base, f->base->ops->copy(f->base, f->y, f->h_y, FAULT_NX * sizeof(double), 0));
}
static sbm_status op_cbc_spmv_n(fault_fixture *f)
{
    reset_y(f);
    IN_PLACE(sbm_cbc_spmv(f->ctx, SBM_OP_N, 1.0, f->A, f->x, 0.5, f->y),
             fault_hash_dev(f->base, 0, f->y, 15 * sizeof(double)));
}
static sbm_status op_cbc_spmv_t(fault_fixture *f)
{
    reset_y(f);
    IN_PLACE(sbm_cbc_spmv(f->ctx, SBM_OP_T, 1.0, f->A, f->x, -2.0, f->y),
             fault_hash_dev(f->base, 0, f->y, 8 * sizeof(double)));
}
static sbm_status op_csr_gemm_plan(fault_fixture *f)
{
    sbm_csr_plan *plan = (sbm_csr_plan *)0x1;
    sbm_csr *C = (sbm_csr *)0x1;
    sbm_status st = sbm_csr_gemm_plan(f->ctx, f->P, f->Q, &plan, &C);
    if (st != SBM_SUCCESS) {
        assert_null(plan);
        assert_null(C);
        return st;
    }
    st = sbm_csr_gemm_execute(f->ctx, plan, f->P, f->Q, C);
    if (st == SBM_SUCCESS) f->out_hash = fault_hash_csr(f->host, 7, C);
    sbm_csr_gemm_plan_destroy(plan);
    sbm_csr_destroy(C);
    return st;
}
static sbm_status op_csr_gemm_execute(fault_fixture *f)
{
    if (!f->cplan)
        return sbm__error(f->ctx, SBM_ERR_NOT_SUPPORTED, "no CSR SpGEMM plan on this backend");
    IN_PLACE(sbm_csr_gemm_execute(f->ctx, f->cplan, f->P, f->Q, f->Pc), fault_hash_csr(f->host, 7, f->Pc));
}
static sbm_status op_csr_gemm(fault_fixture *f) { OUT_CSR(sbm_csr_gemm(f->ctx, f->P, f->Q, &out)); }
static sbm_status op_csr_spmv(fault_fixture *f)
{
    reset_y(f);
    IN_PLACE(sbm_csr_spmv(f->ctx, 1.0, f->P, f->x, 1.0, f->y),
             fault_hash_dev(f->base, 0, f->y, 9 * sizeof(double)));
}
static sbm_status op_csr_spmm(fault_fixture *f)
{
    SBM_ASSERT_OK(f->base, f->base->ops->copy(f->base, f->Cd, f->h_Cd, FAULT_NX * 3 * sizeof(double), 0));
    IN_PLACE(sbm_csr_spmm(f->ctx, 1.0, f->P, 3, SBM_LAYOUT_COL_MAJOR, f->Bd, 7, 0.5, f->Cd, 9),
             fault_hash_dev(f->base, 0, f->Cd, 27 * sizeof(double)));
}
static sbm_status op_ba_system_create(fault_fixture *f)
{
    sbm_ba_system *s = (sbm_ba_system *)0x1;
    sbm_status st = sbm_ba_system_create(f->ctx, f->bal, &s);
    if (st != SBM_SUCCESS) assert_null(s);
    else f->out_hash = fault_hash_cbc(f->host, 7, sbm_ba_system_get_info(s).W);
    sbm_ba_system_destroy(s);
    return st;
}
static sbm_status op_ba_linearize(fault_fixture *f)
{
    IN_PLACE(sbm_ba_linearize(f->ctx, f->ba, f->bal),
             fault_hash_cbc(f->host, fault_hash_cbc(f->host, 7, sbm_ba_system_get_info(f->ba).U),
                      sbm_ba_system_get_info(f->ba).W));
}
static sbm_status op_ba_system_reduce(fault_fixture *f)
{
    double rhs[27];
    sbm_cbc *out = (sbm_cbc *)0x1;
    sbm_status st = sbm_ba_system_reduce(f->ctx, f->ba, &out, rhs);
    if (st != SBM_SUCCESS) assert_null(out);
    else f->out_hash = fault_fnv(fault_hash_cbc(f->host, 7, out), rhs, sizeof rhs);
    sbm_cbc_destroy(out);
    return st;
}
static sbm_status op_ba_schur(fault_fixture *f)
{
    sbm_ba_system_info si = sbm_ba_system_get_info(f->ba);
    double *rhs = dev_array(scratch_ctx(f), 27 * sizeof(double));
    sbm_cbc *out = (sbm_cbc *)0x1;
    sbm_status st = sbm_ba_schur(f->ctx, si.U, si.V, si.W, si.gc, si.gp, &out, rhs);
    if (st != SBM_SUCCESS) assert_null(out);
    else f->out_hash = fault_hash_dev(f->base, fault_hash_cbc(f->host, 7, out), rhs, 27 * sizeof(double));
    sbm_cbc_destroy(out);
    sbm__free(scratch_ctx(f), rhs);
    return st;
}
/* The Schur phases: plan, execute, back-substitution, matrix-free product. */
static sbm_status op_ba_schur_phases(fault_fixture *f)
{
    sbm_ba_system_info si = sbm_ba_system_get_info(f->ba);
    /* 3 cameras (9 parameters), 6 points (3): rhs 27, dp 18, x 27, y 27 */
    double *v = dev_array(scratch_ctx(f), (27 + 18 + 27 + 27) * sizeof(double));
    double *rhs = v, *dp = v + 27, *x = v + 45, *y = v + 72;
    SBM_ASSERT_OK(f->base, f->base->ops->copy(f->base, x, f->h_x, 27 * sizeof(double), 0));
    sbm_schur_plan *plan = (sbm_schur_plan *)0x1;
    sbm_cbc *S = (sbm_cbc *)0x1;
    sbm_status st = sbm_ba_schur_plan(f->ctx, si.U, si.V, si.W, 0, &plan, &S);
    if (st != SBM_SUCCESS) {
        assert_null(plan);
        assert_null(S);
    } else {
        st = sbm_ba_schur_execute(f->ctx, plan, si.U, si.V, si.W, si.gc, si.gp, S, rhs);
        if (st == SBM_SUCCESS) st = sbm_ba_back_substitute(f->ctx, plan, si.W, si.gp, rhs, dp);
        if (st == SBM_SUCCESS) st = sbm_ba_schur_multiply(f->ctx, plan, si.U, si.W, x, y);
        if (st == SBM_SUCCESS)
            f->out_hash = fault_hash_dev(f->base, fault_hash_cbc(f->host, 7, S), v, sizeof(double) * (27 + 18))
                          ^ fault_hash_dev(f->base, 3, y, 27 * sizeof(double));
        sbm_schur_plan_destroy(plan);
        sbm_cbc_destroy(S);
    }
    sbm__free(scratch_ctx(f), v);
    return st;
}
static sbm_status op_slam_system_create(fault_fixture *f)
{
    sbm_slam_system *s = (sbm_slam_system *)0x1;
    sbm_status st = sbm_slam_system_create(f->ctx, f->g2o, &s);
    if (st != SBM_SUCCESS) assert_null(s);
    else f->out_hash = 1;
    sbm_slam_system_destroy(s);
    return st;
}
static sbm_status op_slam_linearize(fault_fixture *f)
{
    IN_PLACE(sbm_slam_linearize(f->ctx, f->slam, f->g2o),
             fault_hash_cbc(f->host, 7, sbm_slam_system_get_info(f->slam).Lambda));
}

/* CPU-only entries: the SpMV plan, arrays, and the file and BA/SLAM host operations. */
/* plan (HYB: the CPU converts nothing but still copies A), update, execute, destroy */
static sbm_status op_spmv_plan(fault_fixture *f)
{
    sbm_spmv_plan *plan = (sbm_spmv_plan *)0x1;
    reset_y(f);
    sbm_status st = sbm_csr_spmv_plan(f->ctx, f->P, SBM_SPMV_HYB, &plan);
    if (st != SBM_SUCCESS) {
        assert_null(plan);
        return st;
    }
    st = sbm_spmv_plan_update(f->ctx, plan, f->P);
    if (st == SBM_SUCCESS) st = sbm_spmv_plan_execute(f->ctx, plan, 1.0, f->x, 1.0, f->y);
    if (st == SBM_SUCCESS) f->out_hash = fault_hash_dev(f->base, 0, f->y, 9 * sizeof(double));
    sbm_spmv_plan_destroy(plan);
    return st;
}
static sbm_status op_array(fault_fixture *f)
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
static sbm_status op_csr_read_mtx(fault_fixture *f) { OUT_CSR(sbm_csr_read_mtx(f->ctx, f->mtx_in, &out)); }
/* A write: a failed one leaves no file behind. */
#define WRITE_FILE(path, call)                                          \
    unlink(path);                                                       \
    sbm_status st = (call);                                             \
    if (st != SBM_SUCCESS) assert_int_not_equal(access(path, F_OK), 0); \
    return st
static sbm_status op_csr_write_mtx(fault_fixture *f)
{
    WRITE_FILE(f->mtx_out, sbm_csr_write_mtx(f->ctx, f->mtx_out, f->P));
}
static sbm_status op_cbc_write_mtx(fault_fixture *f)
{
    WRITE_FILE(f->mtx_out, sbm_cbc_write_mtx(f->ctx, f->mtx_out, f->A));
}
static sbm_status op_bal_write(fault_fixture *f)
{
    WRITE_FILE(f->bal_out, sbm_bal_write(f->ctx, f->bal_out, f->bal));
}
#undef WRITE_FILE
/* A call that makes one object of a type T (destroyed by destroy), its result hashed as 1. */
#define OUT_OBJECT(T, destroy, call_with_out)   \
    T *out = (T *)0x1;                          \
    sbm_status st = (call_with_out);            \
    if (st != SBM_SUCCESS)                      \
        assert_null(out);                       \
    else                                        \
        f->out_hash = 1;                        \
    destroy(out);                               \
    return st
static sbm_status op_bal_read(fault_fixture *f)
{
    OUT_OBJECT(sbm_bal_problem, sbm_bal_destroy, sbm_bal_read(f->ctx, f->bal_in, &out));
}
static sbm_status op_bal_generate(fault_fixture *f)
{
    sbm_bal_generate_options o = sbm_bal_generate_defaults(3, 5, 2, 7);
    OUT_OBJECT(sbm_bal_problem, sbm_bal_destroy, sbm_bal_generate(f->ctx, &o, &out));
}
static sbm_status op_g2o_read(fault_fixture *f)
{
    OUT_OBJECT(sbm_g2o_graph, sbm_g2o_destroy, sbm_g2o_read(f->ctx, f->g2o_in, &out));
}
static sbm_status op_g2o_graph_create(fault_fixture *f)
{
    const sbm_g2o_info g = sbm_g2o_get_info(f->g2o);
    const int32_t pv = 1;
    sbm_g2o_graph_desc d;
    memset(&d, 0, sizeof d);
    d.dim = g.dim, d.vertices = g.vertices, d.poses = g.poses, d.vertex_id = g.vertex_id;
    d.edges = g.edges, d.edge_from = g.edge_from, d.edge_to = g.edge_to;
    d.edge_measurement = g.edge_measurement, d.edge_information = g.edge_information;
    d.priors = 1, d.prior_vertex = &pv, d.prior_measurement = g.poses + g.pose_size;
    OUT_OBJECT(sbm_g2o_graph, sbm_g2o_destroy, sbm_g2o_graph_create(f->ctx, &d, &out));
}
#undef OUT_OBJECT
/* A problem built in memory with a constant camera and point and a camera prior, and its BA
 * system (the constant flags and priors uploaded to the context's memory). */
static sbm_status op_bal_problem_create(fault_fixture *f)
{
    const sbm_bal_info b = sbm_bal_get_info(f->bal);
    const sbm_bal_problem_desc d = {b.cameras, b.points, b.observations, b.obs_camera,
                                    b.obs_point, b.obs_xy, b.camera_params, b.point_params};
    sbm_bal_problem *p = (sbm_bal_problem *)0x1;
    sbm_status st = sbm_bal_problem_create(f->ctx, &d, &p);
    if (st != SBM_SUCCESS) {
        assert_null(p);
        return st;
    }
    double info[81] = {0};
    info[0] = 1.0;
    sbm_ba_system *s = NULL;
    if ((st = sbm_bal_set_camera_constant(f->ctx, p, 0, 1)) == SBM_SUCCESS &&
        (st = sbm_bal_set_point_constant(f->ctx, p, 1, 1)) == SBM_SUCCESS &&
        (st = sbm_bal_set_camera_prior(f->ctx, p, 1, b.camera_params + 9, info)) == SBM_SUCCESS &&
        (st = sbm_ba_system_create(f->ctx, p, &s)) == SBM_SUCCESS)
        f->out_hash = fault_hash_cbc(f->host, 7, sbm_ba_system_get_info(s).W);
    sbm_ba_system_destroy(s);
    sbm_bal_destroy(p);
    return st;
}
static sbm_status op_bal_evaluate(fault_fixture *f)
{
    double cost = 0;
    IN_PLACE(sbm_bal_evaluate(f->ctx, f->bal, NULL, &cost), fault_fnv(7, &cost, sizeof cost));
}
static sbm_status op_g2o_chi2(fault_fixture *f)
{
    double chi2 = 0;
    IN_PLACE(sbm_g2o_chi2(f->ctx, f->g2o, &chi2), fault_fnv(7, &chi2, sizeof chi2));
}

#define BOTH (FAULT_CPU | FAULT_CUDA)
#define OP(fn, backends) {#fn, fn, backends}
const fault_op fault_ops[] = {
    OP(op_cbc_create, BOTH),          OP(op_cbc_wrap, BOTH),
    OP(op_cbc_from_triplets, BOTH),   OP(op_cbc_check, BOTH),
    OP(op_cbc_copy, BOTH),            OP(op_cbc_transpose, BOTH),
    OP(op_cbc_reblock, BOTH),         OP(op_cbc_add, BOTH),
    OP(op_cbc_to_csr, BOTH),          OP(op_csr_to_cbc, BOTH),
    OP(op_cbc_to_bsr, BOTH),          OP(op_cbc_from_bsr, BOTH),
    OP(op_csr_create, BOTH),          OP(op_csr_wrap, BOTH),
    OP(op_csr_from_triplets, BOTH),   OP(op_csr_check, BOTH),
    OP(op_csr_copy, BOTH),            OP(op_csr_transpose, BOTH),
    OP(op_gemm_plan_nn, BOTH),        OP(op_gemm_plan_tn_upper, BOTH),
    /* the CPU plan does not slice */
    OP(op_gemm_plan_sliced, FAULT_CUDA), OP(op_gemm_plan_sliced_upper, FAULT_CUDA),
    OP(op_gemm_execute, BOTH),        OP(op_gemm_oneshot_t_upper_u, BOTH),
    OP(op_gemm_oneshot_nt, BOTH),     OP(op_bdiag_inverse, BOTH),
    OP(op_bdiag_scale, BOTH),         OP(op_cbc_spmv_n, BOTH),
    OP(op_cbc_spmv_t, BOTH),          OP(op_csr_gemm_plan, BOTH),
    OP(op_csr_gemm_execute, BOTH),    OP(op_csr_gemm, BOTH),
    OP(op_csr_spmv, BOTH),            OP(op_csr_spmm, BOTH),
    OP(op_ba_system_create, BOTH),    OP(op_ba_linearize, BOTH),
    OP(op_ba_system_reduce, BOTH),    OP(op_ba_schur, BOTH),
    OP(op_ba_schur_phases, BOTH),     OP(op_slam_system_create, BOTH),
    OP(op_slam_linearize, BOTH),      OP(op_spmv_plan, FAULT_CPU),
    OP(op_array, FAULT_CPU),          OP(op_csr_read_mtx, FAULT_CPU),
    OP(op_csr_write_mtx, FAULT_CPU),  OP(op_cbc_write_mtx, FAULT_CPU),
    OP(op_bal_read, FAULT_CPU),       OP(op_bal_write, FAULT_CPU),
    OP(op_bal_generate, FAULT_CPU),   OP(op_bal_evaluate, FAULT_CPU),
    OP(op_g2o_read, FAULT_CPU),       OP(op_g2o_chi2, FAULT_CPU),
    OP(op_g2o_graph_create, FAULT_CPU), OP(op_bal_problem_create, BOTH),
    {"chol_plan_factor_solve_amd", fault_op_chol_amd, BOTH},
    {"chol_plan_factor_solve_natural", fault_op_chol_natural, BOTH},
    {"chol_dense_fronts", fault_op_chol_dense_fronts, FAULT_CUDA},
    {"chol_inverse", fault_op_chol_inverse, BOTH},
    {"slam_covariance", fault_op_slam_covariance, BOTH},
};
const size_t fault_op_count = sizeof fault_ops / sizeof fault_ops[0];
