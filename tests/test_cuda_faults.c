#define _POSIX_C_SOURCE 200809L /* mkdtemp */
/* Fault injection on the GPU (CUDA only; skips visibly without a GPU).
 *
 * (a) An allocator hook that serves device memory (cudaMalloc) fails the k-th allocation, for
 *     every k, of every CUDA operation. Each call runs in a fresh context with the hook, so that
 *     the pool and caches start empty and every allocation the operation can make is reached.
 *     Each failure must give SBM_ERR_OUT_OF_MEMORY with a "cannot allocate" message and NULL
 *     output handles, or, where the library recovers (the workspace pool retries a failed
 *     geometric growth with the exact size), success with the result bitwise equal to the
 *     undisturbed one; no more live allocations than a successful call leaves in the pool and
 *     caches; the inputs unchanged (downloaded and hashed); the context usable (the same call
 *     then succeeds with the same result); and after destroying the context no allocation of the
 *     hook is live (nothing leaked). The same for two iterations of the BA and SLAM solvers
 *     (status, message and leaks). SBM_TEST_FAULTS_EVERY=n fails every n-th allocation only
 *     (for compute-sanitizer racecheck; default: every one).
 * (b) The memory budget: products whose sort workspace exceeds a small budget are cut into
 *     column slices, with results bitwise equal to the unsliced product and a lower peak of
 *     device memory (measured through the hook). A "device" of a few hundred KiB (a hook that
 *     refuses allocations beyond a cap): with a small budget the product fits by slicing; with
 *     the default budget (no slicing) it fails cleanly with SBM_ERR_OUT_OF_MEMORY; and below the
 *     one-column-per-slice minimum it fails cleanly whatever the budget. */
#include "test_util.h"
#include "sbm_internal.h" /* white-box: device vectors, copies */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef SBM_TEST_HAVE_CUDA
#include <cuda_runtime.h>
#endif

/* ---------------------------------------------------------------------------------------- */
/* The device allocator hook: counts, fails the k-th call, tracks live bytes against a cap    */
/* ---------------------------------------------------------------------------------------- */

#define DEVMEM_MAX_LIVE 4096

typedef struct devmem {
    long calls;        /* allocations requested since the last reset */
    long fail_at;      /* the allocation to fail (1-based; 0 = never) */
    long live;         /* allocations not yet freed */
    size_t live_bytes; /* their bytes */
    size_t peak_bytes; /* the most live bytes at any time */
    size_t cap;        /* refuse an allocation that would take live_bytes above this (0: none) */
    long refused;      /* allocations refused by the cap */
    void *ptr[DEVMEM_MAX_LIVE];
    size_t size[DEVMEM_MAX_LIVE];
    int overflowed;    /* more live allocations than the table holds: a test defect */
} devmem;

static void devmem_reset(devmem *m, long fail_at, size_t cap)
{
    memset(m, 0, sizeof *m);
    m->fail_at = fail_at;
    m->cap = cap;
}

static void *devmem_alloc(void *user, size_t bytes)
{
    devmem *m = user;
    if (++m->calls == m->fail_at) return NULL;
    if (m->cap && m->live_bytes + bytes > m->cap) {
        m->refused++;
        return NULL;
    }
    void *p = NULL;
#ifdef SBM_TEST_HAVE_CUDA
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
#else
    return NULL; /* never reached: the suite skips without CUDA */
#endif
    int slot = -1;
    for (int i = 0; i < DEVMEM_MAX_LIVE && slot < 0; i++)
        if (!m->ptr[i]) slot = i;
    if (slot < 0) {
        m->overflowed = 1;
    } else {
        m->ptr[slot] = p;
        m->size[slot] = bytes;
    }
    m->live++;
    m->live_bytes += bytes;
    if (m->live_bytes > m->peak_bytes) m->peak_bytes = m->live_bytes;
    return p;
}

static void devmem_free(void *user, void *ptr)
{
    devmem *m = user;
    if (!ptr) return;
    for (int i = 0; i < DEVMEM_MAX_LIVE; i++)
        if (m->ptr[i] == ptr) {
            m->live_bytes -= m->size[i];
            m->ptr[i] = NULL;
            break;
        }
    m->live--;
#ifdef SBM_TEST_HAVE_CUDA
    cudaFree(ptr);
#endif
}

/* A fresh CUDA context whose device memory comes from the hook m. */
static sbm_ctx *hooked_ctx(devmem *m)
{
    sbm_ctx *ctx = NULL;
    SBM_ASSERT_OK(NULL, sbm_ctx_create(&ctx, SBM_BACKEND_CUDA, 0));
    const sbm_allocator a = {devmem_alloc, devmem_free, m};
    SBM_ASSERT_OK(ctx, sbm_ctx_set_allocator(ctx, &a));
    return ctx;
}

/* ---------------------------------------------------------------------------------------- */
/* Hashes of device data (downloaded through a CPU context, which the hook does not serve)   */
/* ---------------------------------------------------------------------------------------- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static uint64_t hash_cbc(sbm_ctx *host, uint64_t h, const sbm_cbc *A)
{
    sbm_cbc *H = NULL;
    SBM_ASSERT_OK(host, sbm_cbc_copy(host, A, &H));
    sbm_cbc_info i = sbm_cbc_get_info(H);
    h = fnv(h, &i.nbr, sizeof i.nbr);
    h = fnv(h, &i.nbc, sizeof i.nbc);
    h = fnv(h, &i.r, sizeof i.r);
    h = fnv(h, &i.c, sizeof i.c);
    h = fnv(h, i.colptr, (size_t)(i.nbc + 1) * sizeof(int64_t));
    h = fnv(h, i.rowind, (size_t)i.nnzb * sizeof(int32_t));
    h = fnv(h, i.values, (size_t)(i.nnzb * i.r * i.c) * sizeof(double));
    sbm_cbc_destroy(H);
    return h;
}

static uint64_t hash_csr(sbm_ctx *host, uint64_t h, const sbm_csr *A)
{
    sbm_csr *H = NULL;
    SBM_ASSERT_OK(host, sbm_csr_copy(host, A, &H));
    sbm_csr_info i = sbm_csr_get_info(H);
    h = fnv(h, &i.m, sizeof i.m);
    h = fnv(h, &i.n, sizeof i.n);
    h = fnv(h, i.rowptr, (size_t)(i.m + 1) * sizeof(int64_t));
    h = fnv(h, i.colind, (size_t)i.nnz * sizeof(int32_t));
    h = fnv(h, i.values, (size_t)i.nnz * sizeof(double));
    sbm_csr_destroy(H);
    return h;
}

/* n bytes of device memory d (any context of the device can copy them). */
static uint64_t hash_dev(sbm_ctx *dev, uint64_t h, const void *d, size_t n)
{
    unsigned char *buf = malloc(n + 1);
    assert_non_null(buf);
    if (n > 0) SBM_ASSERT_OK(dev, dev->ops->copy(dev, buf, d, n, 1));
    h = fnv(h, buf, n);
    free(buf);
    return h;
}

/* ---------------------------------------------------------------------------------------- */
/* Inputs: made in the fixture's context with the default allocator                         */
/* ---------------------------------------------------------------------------------------- */

#define NX 64 /* length of the host vectors (covers every operand size below) */

typedef struct fixture {
    sbm_ctx *ctx;  /* context the operation runs in (fresh per call, with the hook) */
    sbm_ctx *base; /* the fixture's CUDA context: owner of the inputs */
    sbm_ctx *host; /* CPU context for downloads */
    char dir[512];
    char g2o_in[600];
    sbm_cbc *A, *B, *Bsq, *U, *D, *Dinv, *Y, *A2, *C, *S1, *S2;
    sbm_csr *P, *Q, *Pc;
    sbm_gemm_plan *plan;  /* A2 * Bsq */
    sbm_csr_plan *cplan;  /* P * Q (NULL where the backend has no CSR SpGEMM) */
    double *x, *y, *Bd, *Cd;          /* device vectors */
    double *h_x, *h_y, *h_Bd, *h_Cd;  /* their host values (y, Cd: reset before each call) */
    int64_t *h_colptr;                /* host copy of A's arrays */
    int32_t *h_rowind;
    double *h_values;
    int64_t *bsr_rowptr;              /* device BSR arrays of A */
    int32_t *bsr_colind;
    double *bsr_values;
    sbm_bal_problem *bal;
    sbm_ba_system *ba;
    sbm_g2o_graph *g2o;
    sbm_slam_system *slam;
    uint64_t out_hash;                /* hash of the last successful call's output */
} fixture;

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void *dev_array(sbm_ctx *ctx, size_t bytes)
{
    void *p = sbm__alloc(ctx, bytes ? bytes : 1, "a test array");
    assert_non_null(p);
    return p;
}

static void fixture_make(fixture *f, sbm_test_env *e)
{
    memset(f, 0, sizeof *f);
    sbm_ctx *ctx = e->ctx;
    f->base = ctx;
    f->host = e->host;
    const char *base = getenv("TMPDIR");
    snprintf(f->dir, sizeof f->dir, "%s/sbm_test_cuda_faults_XXXXXX", base && *base ? base : "/tmp");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->g2o_in, sizeof f->g2o_in, "%s/in.g2o", f->dir);
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
    assert_true(f->A && f->B && f->Bsq && f->U && f->A2 && f->D && f->S1 && f->S2);
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, f->D, &f->Dinv));
    SBM_ASSERT_OK(ctx, sbm_cbc_copy(ctx, f->A, &f->Y));
    SBM_ASSERT_OK(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, f->A2, SBM_OP_N, f->Bsq, NULL, 0, &f->plan,
                                         &f->C));
    f->P = sbm_test_random_csr(ctx, 21, 9, 7, 0.3);
    f->Q = sbm_test_random_csr(ctx, 22, 7, 8, 0.3);
    assert_true(f->P && f->Q);
    sbm_status st = sbm_csr_gemm_plan(ctx, f->P, f->Q, &f->cplan, &f->Pc);
    if (st != SBM_ERR_NOT_SUPPORTED) SBM_ASSERT_OK(ctx, st);
    f->h_x = sbm_test_random_vector(31, NX);
    f->h_y = sbm_test_random_vector(32, NX);
    f->h_Bd = sbm_test_random_vector(33, NX * 3);
    f->h_Cd = sbm_test_random_vector(34, NX * 3);
    f->x = sbm_test_vec_upload(ctx, f->h_x, NX);
    f->y = sbm_test_vec_upload(ctx, f->h_y, NX);
    f->Bd = sbm_test_vec_upload(ctx, f->h_Bd, NX * 3);
    f->Cd = sbm_test_vec_upload(ctx, f->h_Cd, NX * 3);
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
    SBM_ASSERT_OK(ctx, sbm_ba_system_create(ctx, f->bal, &f->ba));
    SBM_ASSERT_OK(ctx, sbm_ba_linearize(ctx, f->ba, f->bal));
    SBM_ASSERT_OK(ctx, sbm_g2o_read(ctx, f->g2o_in, &f->g2o));
    SBM_ASSERT_OK(ctx, sbm_slam_system_create(ctx, f->g2o, &f->slam));
}

static void fixture_free(fixture *f)
{
    sbm_cbc *cbcs[] = {f->A, f->B, f->Bsq, f->U, f->D, f->Dinv, f->Y, f->A2, f->C, f->S1, f->S2};
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
    char path[700];
    snprintf(path, sizeof path, "%s", f->g2o_in);
    remove(path);
    remove(f->dir);
}

/* Hash of everything an operation may read (not the outputs it writes in place: C, Dinv, Y, y,
 * Cd, the BSR arrays, the BA and SLAM systems). */
static uint64_t hash_inputs(fixture *f)
{
    uint64_t h = 1469598103934665603ull;
    const sbm_cbc *cbcs[] = {f->A, f->B, f->Bsq, f->U, f->D, f->A2, f->S1, f->S2};
    for (size_t t = 0; t < sizeof cbcs / sizeof cbcs[0]; t++) h = hash_cbc(f->host, h, cbcs[t]);
    h = hash_csr(f->host, h, f->P);
    h = hash_csr(f->host, h, f->Q);
    h = hash_dev(f->base, h, f->x, NX * sizeof(double));
    h = hash_dev(f->base, h, f->Bd, NX * 3 * sizeof(double));
    sbm_bal_info b = sbm_bal_get_info(f->bal);
    h = fnv(h, b.camera_params, (size_t)b.cameras * 9 * sizeof(double));
    h = fnv(h, b.point_params, (size_t)b.points * 3 * sizeof(double));
    h = fnv(h, b.obs_xy, (size_t)b.observations * 2 * sizeof(double));
    sbm_g2o_info g = sbm_g2o_get_info(f->g2o);
    h = fnv(h, g.poses, (size_t)(g.vertices * g.pose_size) * sizeof(double));
    return h;
}

/* ---------------------------------------------------------------------------------------- */
/* Operations: each makes the call in f->ctx, checks its output handles (NULL on failure),    */
/* hashes its output on success (f->out_hash) and frees it                                   */
/* ---------------------------------------------------------------------------------------- */

#define OUT_CBC(call_with_out)                                     \
    sbm_cbc *out = (sbm_cbc *)0x1;                                 \
    sbm_status st = (call_with_out);                               \
    if (st != SBM_SUCCESS)                                         \
        assert_null(out);                                          \
    else                                                           \
        f->out_hash = hash_cbc(f->host, 7, out);                   \
    sbm_cbc_destroy(out);                                          \
    return st
#define OUT_CSR(call_with_out)                                     \
    sbm_csr *out = (sbm_csr *)0x1;                                 \
    sbm_status st = (call_with_out);                               \
    if (st != SBM_SUCCESS)                                         \
        assert_null(out);                                          \
    else                                                           \
        f->out_hash = hash_csr(f->host, 7, out);                   \
    sbm_csr_destroy(out);                                          \
    return st
/* An operation that writes an existing output: hash it after a success. */
#define IN_PLACE(call, hash_expr)                                  \
    sbm_status st = (call);                                        \
    if (st == SBM_SUCCESS) f->out_hash = (hash_expr);              \
    return st

static sbm_status op_cbc_create(fixture *f)
{
    OUT_CBC(sbm_cbc_create(f->ctx, &out, 5, 4, 3, 2, f->h_colptr, f->h_rowind, f->h_values));
}
static sbm_status op_cbc_wrap(fixture *f)
{
    sbm_cbc_info i = sbm_cbc_get_info(f->A);
    sbm_cbc *out = (sbm_cbc *)0x1;
    sbm_status st = sbm_cbc_wrap(f->ctx, &out, i.nbr, i.nbc, i.r, i.c, (int64_t *)i.colptr,
                                 (int32_t *)i.rowind, i.values);
    if (st != SBM_SUCCESS) assert_null(out);
    else f->out_hash = hash_cbc(f->host, 7, out);
    sbm_cbc_destroy(out);
    return st;
}
static sbm_status op_cbc_from_triplets(fixture *f)
{
    int32_t br[5] = {0, 3, 0, 4, 3}, bc[5] = {1, 0, 1, 3, 0};
    OUT_CBC(sbm_cbc_from_triplets(f->ctx, &out, 5, 4, 3, 2, 5, br, bc, f->h_Bd));
}
static sbm_status op_cbc_check(fixture *f) { IN_PLACE(sbm_cbc_check(f->ctx, f->A, 1), 1); }
static sbm_status op_cbc_copy(fixture *f) { OUT_CBC(sbm_cbc_copy(f->ctx, f->A, &out)); }
static sbm_status op_cbc_transpose(fixture *f) { OUT_CBC(sbm_cbc_transpose(f->ctx, f->A, &out)); }
static sbm_status op_cbc_reblock(fixture *f) { OUT_CBC(sbm_cbc_reblock(f->ctx, f->A, 5, 4, &out)); }
static sbm_status op_cbc_add(fixture *f) { OUT_CBC(sbm_cbc_add(f->ctx, 2.0, f->A, -1.0, f->B, &out)); }
static sbm_status op_cbc_to_csr(fixture *f) { OUT_CSR(sbm_cbc_to_csr(f->ctx, f->A, &out)); }
static sbm_status op_csr_to_cbc(fixture *f) { OUT_CBC(sbm_csr_to_cbc(f->ctx, f->P, 3, 7, &out)); }
static sbm_status op_cbc_to_bsr(fixture *f)
{
    IN_PLACE(sbm_cbc_to_bsr(f->ctx, f->A, SBM_LAYOUT_COL_MAJOR, f->bsr_rowptr, f->bsr_colind,
                            f->bsr_values),
             hash_dev(f->base, 0, f->bsr_values, 15 * sizeof(double)));
}
static sbm_status op_cbc_from_bsr(fixture *f)
{
    sbm_cbc_info i = sbm_cbc_get_info(f->A);
    OUT_CBC(sbm_cbc_from_bsr(f->ctx, &out, i.nbr, i.nbc, 3, 2, SBM_LAYOUT_COL_MAJOR, f->bsr_rowptr,
                             f->bsr_colind, f->bsr_values));
}
static sbm_status op_csr_create(fixture *f)
{
    const int64_t rp[4] = {0, 2, 2, 3};
    const int32_t ci[3] = {0, 4, 1};
    OUT_CSR(sbm_csr_create(f->ctx, &out, 3, 5, rp, ci, f->h_x));
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
    OUT_CSR(sbm_csr_from_triplets(f->ctx, &out, 9, 7, 6, r, c, f->h_x));
}
static sbm_status op_csr_check(fixture *f) { IN_PLACE(sbm_csr_check(f->ctx, f->P, 1), 1); }
static sbm_status op_csr_copy(fixture *f) { OUT_CSR(sbm_csr_copy(f->ctx, f->P, &out)); }
static sbm_status op_csr_transpose(fixture *f) { OUT_CSR(sbm_csr_transpose(f->ctx, f->P, &out)); }

/* Plan (and execute, so that the plan's content is checked through C) of a block product. */
static sbm_status gemm_plan_out(fixture *f, sbm_op oa, const sbm_cbc *A, sbm_op ob,
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
    if (st == SBM_SUCCESS) f->out_hash = hash_cbc(f->host, 7, C);
    sbm_gemm_plan_destroy(plan);
    sbm_cbc_destroy(C);
    return st;
}
static sbm_status op_gemm_plan_nn(fixture *f)
{
    return gemm_plan_out(f, SBM_OP_N, f->A2, SBM_OP_N, f->Bsq, NULL, 0, 1);
}
static sbm_status op_gemm_plan_tn_upper(fixture *f)
{
    return gemm_plan_out(f, SBM_OP_T, f->A, SBM_OP_N, f->A, f->D, SBM_GEMM_UPPER, 1);
}
/* A budget of 4 KiB cuts the plan's sort into many column slices. */
static sbm_status op_gemm_plan_sliced(fixture *f)
{
    SBM_ASSERT_OK(f->ctx, sbm_ctx_set_memory_budget(f->ctx, 4096));
    sbm_status st = gemm_plan_out(f, SBM_OP_N, f->S1, SBM_OP_N, f->S2, NULL, 0, 3);
    SBM_ASSERT_OK(f->ctx, sbm_ctx_set_memory_budget(f->ctx, 0));
    return st;
}
static sbm_status op_gemm_plan_sliced_upper(fixture *f)
{
    SBM_ASSERT_OK(f->ctx, sbm_ctx_set_memory_budget(f->ctx, 4096));
    sbm_status st = gemm_plan_out(f, SBM_OP_N, f->S1, SBM_OP_T, f->S1, NULL, SBM_GEMM_UPPER, 3);
    SBM_ASSERT_OK(f->ctx, sbm_ctx_set_memory_budget(f->ctx, 0));
    return st;
}
static sbm_status op_gemm_execute(fixture *f)
{
    IN_PLACE(sbm_cbc_gemm_execute(f->ctx, f->plan, 1.5, f->A2, f->Bsq, NULL, f->C),
             hash_cbc(f->host, 7, f->C));
}
static sbm_status op_gemm_oneshot_t_upper_u(fixture *f)
{
    OUT_CBC(sbm_cbc_gemm(f->ctx, -1.0, SBM_OP_T, f->A, SBM_OP_N, f->A, f->D, SBM_GEMM_UPPER, &out));
}
static sbm_status op_gemm_oneshot_nt(fixture *f)
{
    OUT_CBC(sbm_cbc_gemm(f->ctx, 1.0, SBM_OP_N, f->A, SBM_OP_T, f->B, NULL, 0, &out));
}
static sbm_status op_bdiag_inverse(fixture *f)
{
    IN_PLACE(sbm_bdiag_inverse(f->ctx, f->D, f->Dinv), hash_cbc(f->host, 7, f->Dinv));
}
static sbm_status op_bdiag_scale(fixture *f)
{
    IN_PLACE(sbm_bdiag_scale(f->ctx, SBM_SIDE_RIGHT, f->D, f->A, f->Y), hash_cbc(f->host, 7, f->Y));
}
/* y starts from its host values each time: the result does not depend on earlier calls. */
static void reset_y(fixture *f)
{
    SBM_ASSERT_OK(f->base, f->base->ops->copy(f->base, f->y, f->h_y, NX * sizeof(double), 0));
}
static sbm_status op_cbc_spmv_n(fixture *f)
{
    reset_y(f);
    IN_PLACE(sbm_cbc_spmv(f->ctx, SBM_OP_N, 1.0, f->A, f->x, 0.5, f->y),
             hash_dev(f->base, 0, f->y, 15 * sizeof(double)));
}
static sbm_status op_cbc_spmv_t(fixture *f)
{
    reset_y(f);
    IN_PLACE(sbm_cbc_spmv(f->ctx, SBM_OP_T, 1.0, f->A, f->x, -2.0, f->y),
             hash_dev(f->base, 0, f->y, 8 * sizeof(double)));
}
static sbm_status op_csr_gemm_plan(fixture *f)
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
    if (st == SBM_SUCCESS) f->out_hash = hash_csr(f->host, 7, C);
    sbm_csr_gemm_plan_destroy(plan);
    sbm_csr_destroy(C);
    return st;
}
static sbm_status op_csr_gemm_execute(fixture *f)
{
    if (!f->cplan)
        return sbm__error(f->ctx, SBM_ERR_NOT_SUPPORTED, "no CSR SpGEMM plan on this backend");
    IN_PLACE(sbm_csr_gemm_execute(f->ctx, f->cplan, f->P, f->Q, f->Pc), hash_csr(f->host, 7, f->Pc));
}
static sbm_status op_csr_gemm(fixture *f) { OUT_CSR(sbm_csr_gemm(f->ctx, f->P, f->Q, &out)); }
static sbm_status op_csr_spmv(fixture *f)
{
    reset_y(f);
    IN_PLACE(sbm_csr_spmv(f->ctx, 1.0, f->P, f->x, 1.0, f->y),
             hash_dev(f->base, 0, f->y, 9 * sizeof(double)));
}
static sbm_status op_csr_spmm(fixture *f)
{
    SBM_ASSERT_OK(f->base, f->base->ops->copy(f->base, f->Cd, f->h_Cd, NX * 3 * sizeof(double), 0));
    IN_PLACE(sbm_csr_spmm(f->ctx, 1.0, f->P, 3, SBM_LAYOUT_COL_MAJOR, f->Bd, 7, 0.5, f->Cd, 9),
             hash_dev(f->base, 0, f->Cd, 27 * sizeof(double)));
}
static sbm_status op_ba_system_create(fixture *f)
{
    sbm_ba_system *s = (sbm_ba_system *)0x1;
    sbm_status st = sbm_ba_system_create(f->ctx, f->bal, &s);
    if (st != SBM_SUCCESS) assert_null(s);
    else f->out_hash = hash_cbc(f->host, 7, sbm_ba_system_get_info(s).W);
    sbm_ba_system_destroy(s);
    return st;
}
static sbm_status op_ba_linearize(fixture *f)
{
    IN_PLACE(sbm_ba_linearize(f->ctx, f->ba, f->bal),
             hash_cbc(f->host, hash_cbc(f->host, 7, sbm_ba_system_get_info(f->ba).U),
                      sbm_ba_system_get_info(f->ba).W));
}
static sbm_status op_ba_system_reduce(fixture *f)
{
    double rhs[27];
    sbm_cbc *out = (sbm_cbc *)0x1;
    sbm_status st = sbm_ba_system_reduce(f->ctx, f->ba, &out, rhs);
    if (st != SBM_SUCCESS) assert_null(out);
    else f->out_hash = fnv(hash_cbc(f->host, 7, out), rhs, sizeof rhs);
    sbm_cbc_destroy(out);
    return st;
}
static sbm_status op_ba_schur(fixture *f)
{
    sbm_ba_system_info si = sbm_ba_system_get_info(f->ba);
    double *rhs = dev_array(f->base, 27 * sizeof(double));
    sbm_cbc *out = (sbm_cbc *)0x1;
    sbm_status st = sbm_ba_schur(f->ctx, si.U, si.V, si.W, si.gc, si.gp, &out, rhs);
    if (st != SBM_SUCCESS) assert_null(out);
    else f->out_hash = hash_dev(f->base, hash_cbc(f->host, 7, out), rhs, 27 * sizeof(double));
    sbm_cbc_destroy(out);
    sbm__free(f->base, rhs);
    return st;
}
/* The Schur phases: plan, execute, back-substitution, matrix-free product. */
static sbm_status op_ba_schur_phases(fixture *f)
{
    sbm_ba_system_info si = sbm_ba_system_get_info(f->ba);
    /* 3 cameras (9 parameters), 6 points (3): rhs 27, dp 18, x 27, y 27 */
    double *v = dev_array(f->base, (27 + 18 + 27 + 27) * sizeof(double));
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
            f->out_hash = hash_dev(f->base, hash_cbc(f->host, 7, S), v, sizeof(double) * (27 + 18))
                          ^ hash_dev(f->base, 3, y, 27 * sizeof(double));
        sbm_schur_plan_destroy(plan);
        sbm_cbc_destroy(S);
    }
    sbm__free(f->base, v);
    return st;
}
static sbm_status op_slam_system_create(fixture *f)
{
    sbm_slam_system *s = (sbm_slam_system *)0x1;
    sbm_status st = sbm_slam_system_create(f->ctx, f->g2o, &s);
    if (st != SBM_SUCCESS) assert_null(s);
    else f->out_hash = 1;
    sbm_slam_system_destroy(s);
    return st;
}
static sbm_status op_slam_linearize(fixture *f)
{
    IN_PLACE(sbm_slam_linearize(f->ctx, f->slam, f->g2o),
             hash_cbc(f->host, 7, sbm_slam_system_get_info(f->slam).Lambda));
}

typedef struct op_entry {
    const char *name;
    sbm_status (*fn)(fixture *f);
} op_entry;

#define OP(f) {#f, f}
static const op_entry ops[] = {
    OP(op_cbc_create),          OP(op_cbc_wrap),             OP(op_cbc_from_triplets),
    OP(op_cbc_check),           OP(op_cbc_copy),             OP(op_cbc_transpose),
    OP(op_cbc_reblock),         OP(op_cbc_add),              OP(op_cbc_to_csr),
    OP(op_csr_to_cbc),          OP(op_cbc_to_bsr),           OP(op_cbc_from_bsr),
    OP(op_csr_create),          OP(op_csr_wrap),             OP(op_csr_from_triplets),
    OP(op_csr_check),           OP(op_csr_copy),             OP(op_csr_transpose),
    OP(op_gemm_plan_nn),        OP(op_gemm_plan_tn_upper),   OP(op_gemm_plan_sliced),
    OP(op_gemm_plan_sliced_upper), OP(op_gemm_execute),      OP(op_gemm_oneshot_t_upper_u),
    OP(op_gemm_oneshot_nt),     OP(op_bdiag_inverse),        OP(op_bdiag_scale),
    OP(op_cbc_spmv_n),          OP(op_cbc_spmv_t),           OP(op_csr_gemm_plan),
    OP(op_csr_gemm_execute),    OP(op_csr_gemm),             OP(op_csr_spmv),
    OP(op_csr_spmm),            OP(op_ba_system_create),     OP(op_ba_linearize),
    OP(op_ba_system_reduce),    OP(op_ba_schur),             OP(op_ba_schur_phases),
    OP(op_slam_system_create),  OP(op_slam_linearize),
};

/* SBM_TEST_FAULTS_EVERY=n fails only every n-th allocation (k = 1, 1+n, ...): compute-sanitizer
 * racecheck, for which the undisturbed kernels are what matters, runs the suite with a large n
 * (.ci/device-run.sh). Default 1: every allocation. */
static long faults_every(void)
{
    const char *s = getenv("SBM_TEST_FAULTS_EVERY");
    long n = s ? strtol(s, NULL, 10) : 1;
    return n >= 1 ? n : 1;
}

/* "every allocation" or "every n-th allocation" (static buffer). */
static const char *faults_every_text(void)
{
    static char buf[64];
    if (faults_every() == 1) return "every allocation";
    snprintf(buf, sizeof buf, "every %ld-th allocation", faults_every());
    return buf;
}

typedef struct inject_counts {
    long allocations; /* device allocations of one undisturbed call (= failures injected) */
    long oom;         /* failures reported as SBM_ERR_OUT_OF_MEMORY */
    long recovered;   /* failures the library recovered from, with the same result */
    int skipped;      /* the backend does not support the operation */
} inject_counts;

/* The undisturbed call (counting its device allocations n), then allocation k failed for every
 * k = 1..n, each in a fresh context. */
static inject_counts inject(fixture *f, const op_entry *op)
{
    inject_counts r = {0, 0, 0, 0};
    devmem *m = calloc(1, sizeof *m);
    assert_non_null(m);
    devmem_reset(m, 0, 0);
    f->ctx = hooked_ctx(m);
    f->out_hash = 0;
    sbm_status st = op->fn(f);
    if (st == SBM_ERR_NOT_SUPPORTED) {
        print_message("[  SKIP    ] %s: %s\n", op->name, sbm_ctx_last_error(f->ctx));
        sbm_ctx_destroy(f->ctx);
        assert_int_equal(m->live, 0);
        free(m);
        r.skipped = 1;
        return r;
    }
    if (st != SBM_SUCCESS) fail_msg("%s without failures: %s", op->name, sbm_ctx_last_error(f->ctx));
    const long n = m->calls;
    const long resident = m->live; /* what a successful call leaves in the pool and caches */
    const uint64_t want = f->out_hash;
    sbm_ctx_destroy(f->ctx);
    if (m->live != 0) fail_msg("%s leaves %ld device allocations live after a success", op->name, m->live);
    assert_false(m->overflowed);
    const uint64_t before = hash_inputs(f);
    r.allocations = 0;
    for (long k = 1; k <= n; k += faults_every()) {
        devmem_reset(m, k, 0);
        f->ctx = hooked_ctx(m);
        f->out_hash = 0;
        st = op->fn(f);
        if (st == SBM_SUCCESS) {
            if (f->out_hash != want)
                fail_msg("%s, allocation %ld of %ld failed: success reported, but the result "
                         "differs from the undisturbed call's", op->name, k, n);
            r.recovered++;
        } else if (st == SBM_ERR_OUT_OF_MEMORY && strstr(sbm_ctx_last_error(f->ctx), "cannot allocate")) {
            r.oom++;
        } else {
            fail_msg("%s, allocation %ld of %ld failed: got %s \"%s\"", op->name, k, n,
                     sbm_status_name(st), sbm_ctx_last_error(f->ctx));
        }
        if (m->live > resident)
            fail_msg("%s, allocation %ld of %ld failed: %ld device allocations live after the call, "
                     "a successful call leaves %ld (pool and caches)", op->name, k, n, m->live, resident);
        if (hash_inputs(f) != before)
            fail_msg("%s, allocation %ld of %ld failed: an input changed", op->name, k, n);
        /* the context is usable: the same call succeeds right after, with the same result */
        m->fail_at = 0;
        f->out_hash = 0;
        st = op->fn(f);
        if (st != SBM_SUCCESS)
            fail_msg("%s after failure %ld: %s", op->name, k, sbm_ctx_last_error(f->ctx));
        if (f->out_hash != want)
            fail_msg("%s after failure %ld: the result differs from the undisturbed call's", op->name, k);
        sbm_ctx_destroy(f->ctx);
        f->ctx = NULL;
        if (m->live != 0)
            fail_msg("%s, allocation %ld of %ld failed: %ld device allocations (%zu bytes) leaked",
                     op->name, k, n, m->live, m->live_bytes);
        assert_false(m->overflowed);
        r.allocations++;
    }
    free(m);
    return r;
}

/* ---------------------------------------------------------------------------------------- */
/* (a) every operation                                                                      */
/* ---------------------------------------------------------------------------------------- */

static void test_cuda_every_operation(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    fixture f;
    fixture_make(&f, e);
    long total = 0, oom = 0, recovered = 0;
    int nops = 0, skipped = 0;
    for (size_t t = 0; t < sizeof ops / sizeof ops[0]; t++) {
        inject_counts c = inject(&f, &ops[t]);
        if (c.skipped) {
            skipped++;
            continue;
        }
        print_message("  %-28s %4ld device allocations failed, one per call: %ld out of memory, "
                      "%ld recovered\n", ops[t].name, c.allocations, c.oom, c.recovered);
        total += c.allocations;
        oom += c.oom;
        recovered += c.recovered;
        nops++;
    }
    print_message("[  INFO    ] %d CUDA operations (%d not supported, skipped), %ld injected device "
                  "allocation failures (%s): %ld SBM_ERR_OUT_OF_MEMORY, %ld recovered\n", nops,
                  skipped, total, faults_every_text(), oom, recovered);
    assert_true(total > 0);
    fixture_free(&f);
}

/* The solvers: every device allocation of two Levenberg-Marquardt iterations on a small BAL
 * problem and two Gauss-Newton iterations on a small pose graph, each with both linear solvers.
 * The estimate may have moved on failure (accepted steps update it in place), so status,
 * message and leaks are checked. */
static void test_cuda_solvers(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    fixture f;
    fixture_make(&f, e);
    devmem *m = calloc(1, sizeof *m);
    assert_non_null(m);
    long total = 0;
    for (int which = 0; which < 4; which++) {
        sbm_solver_options o = sbm_solver_default_options();
        o.max_iterations = 2;
        o.linear_solver = (which & 1) ? SBM_LINEAR_PCG : SBM_LINEAR_DENSE_CHOLESKY;
        long n = -1;
        for (long k = 0; k <= n || n < 0; k = k == 0 ? 1 : k + faults_every()) {
            sbm_bal_problem *p = NULL;
            sbm_g2o_graph *g = NULL;
            if (which < 2) {
                sbm_bal_generate_options go = sbm_bal_generate_defaults(3, 6, 2, 41);
                SBM_ASSERT_OK(e->host, sbm_bal_generate(e->host, &go, &p));
            } else {
                SBM_ASSERT_OK(e->host, sbm_g2o_read(e->host, f.g2o_in, &g));
            }
            devmem_reset(m, k, 0);
            sbm_ctx *ctx = hooked_ctx(m);
            sbm_status st = which < 2 ? sbm_ba_solve(ctx, p, &o, NULL) : sbm_slam_solve(ctx, g, &o, NULL);
            if (k == 0) {
                SBM_ASSERT_OK(ctx, st);
                n = m->calls;
                print_message("  %s (%s): %ld device allocations\n",
                              which < 2 ? "sbm_ba_solve" : "sbm_slam_solve",
                              (which & 1) ? "PCG" : "dense Cholesky", n);
            } else if (st != SBM_ERR_OUT_OF_MEMORY ||
                       !strstr(sbm_ctx_last_error(ctx), "cannot allocate")) {
                /* a recovered workspace growth lets the solve finish */
                if (st != SBM_SUCCESS)
                    fail_msg("solver %d, allocation %ld of %ld failed: got %s \"%s\"", which, k, n,
                             sbm_status_name(st), sbm_ctx_last_error(ctx));
            }
            total += k > 0;
            sbm_ctx_destroy(ctx);
            if (m->live != 0) fail_msg("solver %d, allocation %ld: %ld leaked", which, k, m->live);
            sbm_bal_destroy(p);
            sbm_g2o_destroy(g);
        }
    }
    print_message("[  INFO    ] solvers: %ld injected device allocation failures (%s)\n", total,
                  faults_every_text());
    assert_true(total > 0);
    free(m);
    fixture_free(&f);
}

/* ---------------------------------------------------------------------------------------- */
/* (b) the memory budget                                                                    */
/* ---------------------------------------------------------------------------------------- */

typedef struct product {
    const char *name;
    sbm_op oa, ob;
    const sbm_cbc *A, *B, *U;
    unsigned flags;
} product;

/* Plan + execute in a fresh hooked context with the given budget and cap. @return the status
 * (C and info set on success). */
static sbm_status budget_gemm(sbm_ctx *host, const product *p, size_t budget, devmem *m, size_t cap,
                              sbm_cbc **C, sbm_gemm_plan_info *info, char *msg, size_t msg_len)
{
    devmem_reset(m, 0, cap);
    sbm_ctx *ctx = hooked_ctx(m);
    SBM_ASSERT_OK(ctx, sbm_ctx_set_memory_budget(ctx, budget));
    sbm_gemm_plan *plan = (sbm_gemm_plan *)0x1;
    *C = (sbm_cbc *)0x1;
    sbm_status st = sbm_cbc_gemm_plan(ctx, p->oa, p->A, p->ob, p->B, p->U, p->flags, &plan, C);
    if (st == SBM_SUCCESS) {
        *info = sbm_gemm_plan_get_info(plan);
        st = sbm_cbc_gemm_execute(ctx, plan, 0.5, p->A, p->B, p->U, *C);
        SBM_ASSERT_OK(ctx, st);
        /* C is made with the hook: copied to the host so that the context and its memory go */
        sbm_cbc *D = NULL;
        SBM_ASSERT_OK(host, sbm_cbc_copy(host, *C, &D));
        sbm_cbc_destroy(*C);
        sbm_gemm_plan_destroy(plan);
        *C = D;
    } else {
        assert_null(plan);
        assert_null(*C);
        snprintf(msg, msg_len, "%s", sbm_ctx_last_error(ctx));
    }
    sbm_ctx_destroy(ctx);
    return st;
}

static void products_make(sbm_ctx *ctx, product *p, sbm_cbc **own)
{
    own[0] = sbm_test_random_cbc(ctx, 51, 60, 80, 3, 3, 0.06);
    own[1] = sbm_test_random_cbc(ctx, 52, 80, 120, 3, 3, 0.06);
    own[2] = sbm_test_random_cbc_upper(ctx, 53, 60, 60, 3, 3, 0.05, 1);
    own[3] = sbm_test_random_cbc(ctx, 54, 40, 1500, 9, 3, 0.1); /* BA-shaped W: long columns */
    p[0] = (product){"A*B (3x3)", SBM_OP_N, SBM_OP_N, own[0], own[1], NULL, 0};
    p[1] = (product){"U + A*A^T upper", SBM_OP_N, SBM_OP_T, own[0], own[0], own[2], SBM_GEMM_UPPER};
    p[2] = (product){"W*W^T upper (9x3)", SBM_OP_N, SBM_OP_T, own[3], own[3], NULL, SBM_GEMM_UPPER};
    p[3] = (product){"B^T*A^T (op T, T)", SBM_OP_T, SBM_OP_T, own[1], own[0], NULL, 0};
}

#define GEMM_OK(call)                                                                       \
    do {                                                                                    \
        sbm_status st_ = (call);                                                            \
        if (st_ != SBM_SUCCESS) fail_msg("%s: %s \"%s\"", #call, sbm_status_name(st_), msg);   \
    } while (0)

/* Budgets from generous to 1 byte: the slice count rises, the peak of device memory falls, and
 * C is bitwise the unsliced C. */
static void test_cuda_budget_slices(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    product p[4];
    sbm_cbc *own[4];
    products_make(e->ctx, p, own);
    devmem *m = calloc(1, sizeof *m);
    assert_non_null(m);
    char msg[SBM__MSG_SIZE];
    for (int t = 0; t < 4; t++) {
        sbm_cbc *C0 = NULL;
        sbm_gemm_plan_info i0;
        GEMM_OK(budget_gemm(e->host, &p[t], 0, m, 0, &C0, &i0, msg, sizeof msg));
        const size_t peak0 = m->peak_bytes;
        assert_int_equal(i0.slices, 1);
        assert_int_equal(m->live, 0);
        const size_t budgets[] = {1u << 20, 1u << 16, 1u << 13, 1};
        int64_t last_slices = 1;
        size_t last_peak = peak0;
        print_message("  %-20s %lld products: no budget 1 slice, peak %zu bytes\n", p[t].name,
                      (long long)i0.products, peak0);
        for (int b = 0; b < 4; b++) {
            sbm_cbc *C = NULL;
            sbm_gemm_plan_info i;
            GEMM_OK(budget_gemm(e->host, &p[t], budgets[b], m, 0, &C, &i, msg, sizeof msg));
            print_message("  %-20s budget %7zu: %4lld slices, peak %zu bytes\n", p[t].name,
                          budgets[b], (long long)i.slices, m->peak_bytes);
            assert_int_equal(m->live, 0);
            assert_int_equal(i.products, i0.products);
            assert_int_equal(i.nnzb_c, i0.nnzb_c);
            assert_true(i.slices >= last_slices);
            assert_true(m->peak_bytes <= last_peak);
            sbm_test_assert_same_cbc(C, C0, -1.0);
            last_slices = i.slices;
            last_peak = m->peak_bytes;
            sbm_cbc_destroy(C);
        }
        /* 1 byte: one column per slice */
        sbm_cbc_info ci = sbm_cbc_get_info(C0);
        assert_int_equal(last_slices, ci.nbc);
        assert_true(last_peak < peak0);
        sbm_cbc_destroy(C0);
    }
    free(m);
    for (int t = 0; t < 4; t++) sbm_cbc_destroy(own[t]);
}

/* A device with little memory (the hook refuses allocations beyond a cap). */
static void test_cuda_tiny_device(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    product p[4];
    sbm_cbc *own[4];
    products_make(e->ctx, p, own);
    devmem *m = calloc(1, sizeof *m);
    assert_non_null(m);
    char msg[SBM__MSG_SIZE];
    for (int t = 0; t < 4; t++) {
        uint64_t before = 1469598103934665603ull;
        before = hash_cbc(e->host, before, p[t].A);
        before = hash_cbc(e->host, before, p[t].B);
        sbm_cbc *C0 = NULL, *C = NULL;
        sbm_gemm_plan_info i0, i;
        GEMM_OK(budget_gemm(e->host, &p[t], 0, m, 0, &C0, &i0, msg, sizeof msg));
        const size_t peak_unsliced = m->peak_bytes;
        GEMM_OK(budget_gemm(e->host, &p[t], 1, m, 0, &C, &i, msg, sizeof msg));
        const size_t peak_min = m->peak_bytes;
        sbm_cbc_destroy(C);
        assert_true(peak_min < peak_unsliced);
        /* a device of peak_min bytes: the 1-byte budget slices the product into it */
        GEMM_OK(budget_gemm(e->host, &p[t], 1, m, peak_min, &C, &i, msg, sizeof msg));
        assert_int_equal(m->refused, 0);
        sbm_test_assert_same_cbc(C, C0, -1.0);
        sbm_cbc_destroy(C);
        /* the same device with the default budget (half of the real GPU's free memory): no
         * slicing, the workspace does not fit, a clean failure */
        sbm_status st = budget_gemm(e->host, &p[t], 0, m, peak_min, &C, &i, msg, sizeof msg);
        if (st != SBM_ERR_OUT_OF_MEMORY || !strstr(msg, "cannot allocate"))
            fail_msg("%s, device of %zu bytes, default budget: got %s \"%s\"", p[t].name, peak_min,
                     sbm_status_name(st), msg);
        assert_true(m->refused > 0);
        assert_int_equal(m->live, 0);
        print_message("  %-20s device of %zu bytes (unsliced peak %zu): 1-byte budget fits, "
                      "default budget: \"%s\"\n", p[t].name, peak_min, peak_unsliced, msg);
        /* below the one-column-per-slice minimum slicing cannot help: clean failures at every
         * cap down to nothing */
        const size_t caps[] = {peak_min - 1, peak_min / 2, peak_min / 8, 1};
        for (int c = 0; c < 4; c++) {
            st = budget_gemm(e->host, &p[t], 1, m, caps[c], &C, &i, msg, sizeof msg);
            if (st != SBM_ERR_OUT_OF_MEMORY || !strstr(msg, "cannot allocate"))
                fail_msg("%s, device of %zu bytes, 1-byte budget: got %s \"%s\"", p[t].name,
                         caps[c], sbm_status_name(st), msg);
            assert_int_equal(m->live, 0);
        }
        /* inputs unchanged */
        uint64_t after = 1469598103934665603ull;
        after = hash_cbc(e->host, after, p[t].A);
        after = hash_cbc(e->host, after, p[t].B);
        assert_true(after == before);
        sbm_cbc_destroy(C0);
    }
    free(m);
    for (int t = 0; t < 4; t++) sbm_cbc_destroy(own[t]);
}

int main(void)
{
    sbm_test_require_gpu("test_cuda_faults");
    const struct CMUnitTest tests[] = {
        SBM_TEST_CUDA(test_cuda_every_operation),
        SBM_TEST_CUDA(test_cuda_solvers),
        SBM_TEST_CUDA(test_cuda_budget_slices),
        SBM_TEST_CUDA(test_cuda_tiny_device),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
