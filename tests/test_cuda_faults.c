/* SPDX-License-Identifier: BSD-3-Clause */
/* Fault injection on the GPU (CUDA only; skips visibly without a GPU).
 *
 * (a) An allocator hook that serves device memory (cudaMalloc) fails the k-th allocation, for
 *     every k, of every CUDA operation (the CUDA entries of the catalogue in fault_catalogue.c). Each call runs in a fresh context with the hook, so that
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
 *     one-column-per-slice minimum it fails cleanly whatever the budget.
 * (c) A sparse Cholesky whose fronts do not fit such a device fails to plan, naming their bytes. */
#include "fault_catalogue.h"
#include "sbm_internal.h" /* white-box: device vectors, copies */
#include "chol_symbolic.h" /* white-box: the sparse Cholesky's fronts */

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
static inject_counts inject(fault_fixture *f, const fault_op *op)
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
    const uint64_t before = fault_hash_inputs(f);
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
        if (fault_hash_inputs(f) != before)
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
    fault_fixture f;
    fault_fixture_make(&f, e);
    long total = 0, oom = 0, recovered = 0;
    int nops = 0, skipped = 0;
    for (size_t t = 0; t < fault_op_count; t++) {
        if (!(fault_ops[t].backends & FAULT_CUDA)) {
            print_message("  %-28s not a CUDA entry of the catalogue\n", fault_ops[t].name);
            continue;
        }
        inject_counts c = inject(&f, &fault_ops[t]);
        if (c.skipped) {
            skipped++;
            continue;
        }
        print_message("  %-28s %4ld device allocations failed, one per call: %ld out of memory, "
                      "%ld recovered\n", fault_ops[t].name, c.allocations, c.oom, c.recovered);
        total += c.allocations;
        oom += c.oom;
        recovered += c.recovered;
        nops++;
    }
    print_message("[  INFO    ] %d CUDA operations (%d not supported, skipped), %ld injected device "
                  "allocation failures (%s): %ld SBM_ERR_OUT_OF_MEMORY, %ld recovered\n", nops,
                  skipped, total, faults_every_text(), oom, recovered);
    assert_true(total > 0);
    fault_fixture_free(&f);
}

/* The solvers: every device allocation of two Levenberg-Marquardt iterations on a small BAL
 * problem and two Gauss-Newton iterations on a small pose graph, each with both linear solvers.
 * The estimate may have moved on failure (BA writes back its best estimate, SLAM updates it in
 * place), so status, message and leaks are checked. */
static void test_cuda_solvers(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    fault_fixture f;
    fault_fixture_make(&f, e);
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
    fault_fixture_free(&f);
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
        before = fault_hash_cbc(e->host, before, p[t].A);
        before = fault_hash_cbc(e->host, before, p[t].B);
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
        after = fault_hash_cbc(e->host, after, p[t].A);
        after = fault_hash_cbc(e->host, after, p[t].B);
        assert_true(after == before);
        sbm_cbc_destroy(C0);
    }
    free(m);
    for (int t = 0; t < 4; t++) sbm_cbc_destroy(own[t]);
}

/* A sparse Cholesky whose fronts (the sum over the supernodes of (m_s b)^2 doubles) do not fit
 * the device: the plan fails cleanly, naming those bytes, and leaks nothing; with room, it
 * plans. */
static void test_cuda_chol_memory(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_cbc *H = sbm_test_random_cbc_upper(e->host, 23, 120, 120, 6, 6, 0.03, 1), *A = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_cbc_copy(e->ctx, H, &A));
    sbm_chol *hc = NULL, *chol = (sbm_chol *)0x1;
    SBM_ASSERT_OK(e->host, sbm_chol_plan(e->host, H, NULL, &hc));
    const sbm__chol_symbolic *sym = sbm__chol_symbolic_of(hc);
    size_t bytes = 0;
    for (int64_t s = 0; s < sym->nsuper; s++) {
        const size_t M = (size_t)((sym->sup_rowptr[s + 1] - sym->sup_rowptr[s]) * sym->b);
        bytes += M * M * sizeof(double);
    }
    devmem *m = calloc(1, sizeof *m);
    assert_non_null(m);
    devmem_reset(m, 0, bytes - 1);
    sbm_ctx *ctx = hooked_ctx(m);
    char want[128];
    snprintf(want, sizeof want, "cannot allocate %zu bytes for the frontal matrices", bytes);
    SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, A, NULL, &chol), SBM_ERR_OUT_OF_MEMORY, want);
    assert_null(chol);
    assert_true(m->refused > 0);
    print_message("  fronts of %zu bytes on a device of %zu: \"%s\"\n", bytes, bytes - 1,
                  sbm_ctx_last_error(ctx));
    sbm_ctx_destroy(ctx);
    assert_int_equal(m->live, 0);
    devmem_reset(m, 0, 0);
    ctx = hooked_ctx(m);
    SBM_ASSERT_OK(ctx, sbm_chol_plan(ctx, A, NULL, &chol));
    assert_true(m->peak_bytes >= bytes);
    sbm_chol_destroy(chol);
    sbm_ctx_destroy(ctx);
    assert_int_equal(m->live, 0);
    free(m);
    sbm_chol_destroy(hc);
    sbm_cbc_destroy(A);
    sbm_cbc_destroy(H);
}

int main(void)
{
    sbm_test_require_gpu("test_cuda_faults");
    const struct CMUnitTest tests[] = {
        SBM_TEST_CUDA(test_cuda_every_operation),
        SBM_TEST_CUDA(test_cuda_solvers),
        SBM_TEST_CUDA(test_cuda_budget_slices),
        SBM_TEST_CUDA(test_cuda_tiny_device),
        SBM_TEST_CUDA(test_cuda_chol_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
