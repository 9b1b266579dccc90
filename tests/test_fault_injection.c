/* SPDX-License-Identifier: BSD-3-Clause */
/* Fault injection: every public operation on the CPU backend (the CPU entries of the catalogue in
 * fault_catalogue.c), with an allocator hook that fails the k-th allocation, for every k the
 * operation makes. Each failure must give SBM_ERR_OUT_OF_MEMORY with a "cannot allocate" message,
 * leak nothing (the hook's live count returns to where it was), leave the inputs unchanged (a
 * byte hash of every input array) and the output handles NULL, and the context usable (the same
 * call then succeeds, with the undisturbed call's result).
 *
 * The hook serves host memory; on the CUDA backend it would serve device memory, which the GPU
 * part of the reliability work tests with a tiny memory budget instead, so the CUDA variant skips. */
#include "fault_catalogue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Run op once with no failure (counting its allocations n), then fail allocation k for every
 * k = 1..n. @return n. */
static long inject(fault_fixture *f, const fault_op *op)
{
    sbm_ctx *ctx = f->ctx;
    fault_counting cnt = {0, 0, 0};
    sbm_allocator a = {fault_counting_alloc, fault_counting_free, &cnt};
    SBM_ASSERT_OK(ctx, sbm_ctx_set_allocator(ctx, &a));
    f->out_hash = 0;
    sbm_status st = op->fn(f);
    if (st != SBM_SUCCESS) fail_msg("%s without failures: %s", op->name, sbm_ctx_last_error(ctx));
    const long n = cnt.calls;
    const uint64_t want = f->out_hash;
    if (cnt.live != 0) fail_msg("%s leaves %ld allocations live after a success", op->name, cnt.live);
    for (long k = 1; k <= n; k++) {
        const uint64_t before = fault_hash_inputs(f);
        cnt = (fault_counting){0, k, 0};
        st = op->fn(f);
        if (st != SBM_ERR_OUT_OF_MEMORY || !strstr(sbm_ctx_last_error(ctx), "cannot allocate"))
            fail_msg("%s, allocation %ld of %ld failed: got %s \"%s\"", op->name, k, n,
                     sbm_status_name(st), sbm_ctx_last_error(ctx));
        if (cnt.live != 0)
            fail_msg("%s, allocation %ld of %ld failed: %ld allocations leaked", op->name, k, n,
                     cnt.live);
        if (fault_hash_inputs(f) != before)
            fail_msg("%s, allocation %ld of %ld failed: an input changed", op->name, k, n);
        /* the context is usable: the same call succeeds right after, with the same result */
        cnt = (fault_counting){0, 0, 0};
        f->out_hash = 0;
        st = op->fn(f);
        if (st != SBM_SUCCESS)
            fail_msg("%s after failure %ld: %s", op->name, k, sbm_ctx_last_error(ctx));
        if (f->out_hash != want)
            fail_msg("%s after failure %ld: the result differs from the undisturbed call's",
                     op->name, k);
        assert_int_equal(cnt.live, 0);
    }
    SBM_ASSERT_OK(ctx, sbm_ctx_set_allocator(ctx, NULL));
    return n;
}

static void test_every_operation(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    if (e->backend != SBM_BACKEND_CPU) skip(); /* device memory: test_cuda_faults.c */
    fault_fixture f;
    fault_fixture_make(&f, e);
    long total = 0;
    size_t nops = 0;
    for (size_t t = 0; t < fault_op_count; t++) {
        if (!(fault_ops[t].backends & FAULT_CPU)) {
            print_message("  %-28s not a CPU entry of the catalogue\n", fault_ops[t].name);
            continue;
        }
        long n = inject(&f, &fault_ops[t]);
        print_message("  %-28s %4ld allocations (each failed once)\n", fault_ops[t].name, n);
        total += n;
        nops++;
    }
    print_message("[  INFO    ] %zu CPU operations of %zu in the catalogue, %ld injected failures\n",
                  nops, fault_op_count, total);
    fault_fixture_free(&f);
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
    fault_counting cnt = {0, 0, 0};
    sbm_allocator a = {fault_counting_alloc, fault_counting_free, &cnt};
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, &a));
    double rhs[54];
    sbm_cbc *S = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_ba_schur(e->ctx, si.U, si.V, si.W, si.gc, si.gp, &S, rhs));
    sbm_cbc_destroy(S);
    const long n = cnt.calls;
    print_message("  sbm_ba_schur (6 cameras, 40 points): %ld allocations, each failed once\n", n);
    for (long k = 1; k <= n; k++) {
        cnt = (fault_counting){0, k, 0};
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
 * run on a small BAL problem (dense Cholesky, PCG, the sparse Cholesky, AUTO's choice above
 * dense_max_dim) and of a Levenberg-Marquardt run on a small pose graph (dense Cholesky, PCG,
 * the sparse Cholesky). On
 * failure the estimate may have moved (BA writes back the best estimate so far, SLAM updates it
 * in place as steps are accepted; test_ba_device checks BA's), so only status, message and leaks
 * are checked. */
static void test_solvers(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    if (e->backend != SBM_BACKEND_CPU) skip();
    fault_fixture f;
    fault_fixture_make(&f, e);
    fault_counting cnt = {0, 0, 0};
    sbm_allocator a = {fault_counting_alloc, fault_counting_free, &cnt};
    static const struct {
        int slam;              /* sbm_slam_solve, else sbm_ba_solve */
        sbm_linear_solver ls;
        const char *name;
    } paths[] = {{0, SBM_LINEAR_DENSE_CHOLESKY, "dense Cholesky"},
                 {0, SBM_LINEAR_PCG, "PCG"},
                 {0, SBM_LINEAR_SPARSE_CHOLESKY, "sparse Cholesky"},
                 {0, SBM_LINEAR_AUTO, "AUTO above dense_max_dim"},
                 {1, SBM_LINEAR_DENSE_CHOLESKY, "dense Cholesky"},
                 {1, SBM_LINEAR_PCG, "PCG"},
                 {1, SBM_LINEAR_SPARSE_CHOLESKY, "sparse Cholesky"}};
    for (int which = 0; which < (int)(sizeof paths / sizeof paths[0]); which++) {
        const int slam = paths[which].slam;
        sbm_solver_options o = sbm_solver_default_options();
        o.max_iterations = 2;
        o.linear_solver = paths[which].ls;
        o.dense_max_dim = 0; /* AUTO: S's size from W, then the sparse Cholesky's plan */
        long n = -1;
        for (long k = 0; k <= n || n < 0; k++) {
            sbm_bal_problem *p = NULL;
            sbm_g2o_graph *g = NULL;
            if (!slam) {
                sbm_bal_generate_options go = sbm_bal_generate_defaults(3, 6, 2, 41);
                SBM_ASSERT_OK(e->ctx, sbm_bal_generate(e->ctx, &go, &p));
            } else {
                SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, f.g2o_in, &g));
            }
            cnt = (fault_counting){0, k, 0};
            SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, &a));
            sbm_status st = !slam ? sbm_ba_solve(e->ctx, p, &o, NULL)
                                  : sbm_slam_solve(e->ctx, g, &o, NULL);
            SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, NULL));
            if (k == 0) {
                SBM_ASSERT_OK(e->ctx, st);
                n = cnt.calls;
                print_message("  %s (%s): %ld allocations, each failed once\n",
                              slam ? "sbm_slam_solve" : "sbm_ba_solve", paths[which].name, n);
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
    fault_fixture_free(&f);
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
