/* SPDX-License-Identifier: BSD-3-Clause */
/* Bundle adjustment over several GPUs through NCCL (sbm_group_create_gpus, sbm_ba_solve_dist):
 * on 1 to 4 of the GPUs present, the distributed solve against the one-GPU solver (matrix-free
 * PCG) and against the same group on CPU contexts (the host stand-in): the same iterations,
 * acceptances and stop reason, costs to 1e-10 relative. Skips (exit 77) without a GPU, without
 * NCCL in the build, and, test by test, where fewer GPUs are present. Set NCCL_NVLS_ENABLE=0 on
 * machines whose driver lacks NVLink multicast (.ci/device-multigpu.sh does). */
#define _POSIX_C_SOURCE 200809L

#include "sbm_dist.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double rel(double a, double b)
{
    const double d = fabs(a - b), m = fmax(fabs(a), fabs(b));
    return m > 0.0 ? d / m : d;
}

#define MAX_IT 32
typedef struct lm_log {
    int n;
    double cost[MAX_IT];
    int accepted[MAX_IT];
} lm_log;

static void log_iteration(void *user, const sbm_iteration_report *r)
{
    lm_log *g = user;
    if (g->n < MAX_IT) g->cost[g->n] = r->cost, g->accepted[g->n] = r->accepted, g->n++;
}

static sbm_bal_problem *problem(sbm_ctx *ctx, sbm_bal_layout layout, uint64_t seed)
{
    sbm_bal_generate_options g = sbm_bal_generate_defaults(48, 3000, 4, seed);
    g.layout = layout;
    sbm_bal_problem *p = NULL;
    SBM_ASSERT_OK(ctx, sbm_bal_generate(ctx, &g, &p));
    return p;
}

static sbm_solver_options options(lm_log *g)
{
    sbm_solver_options o = sbm_solver_default_options();
    o.max_iterations = 8;
    o.linear_solver = SBM_LINEAR_PCG_MATRIX_FREE;
    o.pcg_tolerance = 1e-12; /* every step solved tightly: the runs agree to 1e-10 */
    o.pcg_forcing = SBM_PCG_FORCING_FIXED;
    o.pcg_max_iterations = 2000;
    o.callback = log_iteration;
    o.user = g;
    return o;
}

/* cost per iteration to tol relative: 1e-10 against one GPU; against the CPU ranks (another
 * backend's rounding in the linearisation and PCG) 1e-9, 3e-10 measured on the H200 */
static void same_run(const sbm_solver_summary *a, const lm_log *ga, const sbm_solver_summary *b,
                     const lm_log *gb, const char *what, int n, double tol)
{
    assert_int_equal(a->stop_reason, b->stop_reason);
    assert_int_equal(a->iterations, b->iterations);
    assert_int_equal(ga->n, gb->n);
    for (int k = 0; k < ga->n; k++) {
        assert_int_equal(ga->accepted[k], gb->accepted[k]);
        if (rel(ga->cost[k], gb->cost[k]) > tol)
            fail_msg("%s, %d GPUs, iteration %d: cost %.17g against %.17g", what, n, k + 1,
                     gb->cost[k], ga->cost[k]);
    }
}

/* n GPUs against one GPU and against n CPU ranks, on both layouts and both partitions. */
static void run_gpus(int n)
{
    if (sbm_cuda_device_count() < n) {
        print_message("[  SKIP    ] %d GPUs needed, %d present\n", n, sbm_cuda_device_count());
        skip();
    }
    sbm_ctx *gpu = NULL, *host = NULL;
    assert_int_equal(sbm_ctx_create(&gpu, SBM_BACKEND_CUDA, 0), SBM_SUCCESS);
    assert_int_equal(sbm_ctx_create(&host, SBM_BACKEND_CPU, 0), SBM_SUCCESS);
    sbm_group *gg = NULL, *cg = NULL;
    if (sbm_group_create_gpus(n, NULL, &gg) != SBM_SUCCESS)
        fail_msg("sbm_group_create_gpus(%d): %s", n, sbm_ctx_last_error(NULL));
    assert_int_equal(sbm_group_create_cpu(n, &cg), SBM_SUCCESS);
    assert_int_equal(sbm_group_size(gg), n);
    for (int lay = 0; lay < 2; lay++)
        for (int m = 0; m < 2; m++) {
            lm_log g1 = {0}, g2 = {0}, g3 = {0};
            sbm_bal_problem *p1 = problem(host, (sbm_bal_layout)lay, 5 + lay);
            sbm_bal_problem *p2 = problem(host, (sbm_bal_layout)lay, 5 + lay);
            sbm_bal_problem *p3 = problem(host, (sbm_bal_layout)lay, 5 + lay);
            sbm_solver_options o1 = options(&g1), o2 = options(&g2), o3 = options(&g3);
            sbm_solver_summary s1, s2, s3;
            sbm_dist_options d = sbm_dist_default_options();
            d.partition = (sbm_partition_method)m;
            sbm_dist_report r;
            SBM_ASSERT_OK(gpu, sbm_ba_solve(gpu, p1, &o1, &s1));
            SBM_ASSERT_OK(sbm_group_context(gg, 0), sbm_ba_solve_dist(gg, p2, &o2, &d, &s2, &r));
            SBM_ASSERT_OK(sbm_group_context(cg, 0), sbm_ba_solve_dist(cg, p3, &o3, &d, &s3, NULL));
            same_run(&s1, &g1, &s2, &g2, "against one GPU", n, 1e-10);
            same_run(&s3, &g3, &s2, &g2, "against the CPU ranks", n, 1e-9);
            print_message("%d GPUs, layout %d, partition %d: %.0f bytes per PCG iteration "
                          "(MegBA %.0f), %.4f s of %.4f s in NCCL\n",
                          n, lay, m, r.bytes_per_pcg_iteration, r.megba_bytes_per_pcg_iteration,
                          r.time_comm, s2.time_total);
            sbm_bal_destroy(p1), sbm_bal_destroy(p2), sbm_bal_destroy(p3);
        }
    sbm_group_destroy(gg);
    sbm_group_destroy(cg);
    sbm_ctx_destroy(gpu);
    sbm_ctx_destroy(host);
}

static void test_one_gpu(void **state) { (void)state, run_gpus(1); }
static void test_two_gpus(void **state) { (void)state, run_gpus(2); }
static void test_three_gpus(void **state) { (void)state, run_gpus(3); }
static void test_four_gpus(void **state) { (void)state, run_gpus(4); }

/* Errors of the GPU groups: a device that does not exist names itself. */
static void test_gpu_group_errors(void **state)
{
    (void)state;
    sbm_group *g = NULL;
    const int n = sbm_cuda_device_count();
    int devs[2] = {0, n + 3};
    assert_int_not_equal(sbm_group_create_gpus(2, devs, &g), SBM_SUCCESS);
    assert_null(g);
    assert_non_null(strstr(sbm_ctx_last_error(NULL), "rank 1"));
}

int main(void)
{
    sbm_test_require_gpu("test_cuda_dist");
    sbm_group *g = NULL;
    if (sbm_group_create_gpus(1, NULL, &g) == SBM_ERR_NOT_SUPPORTED) {
        printf("test_cuda_dist: skipped: %s\n", sbm_ctx_last_error(NULL));
        return SBM_TEST_SKIP_CODE;
    }
    sbm_group_destroy(g);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_gpu),   cmocka_unit_test(test_two_gpus),
        cmocka_unit_test(test_three_gpus), cmocka_unit_test(test_four_gpus),
        cmocka_unit_test(test_gpu_group_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
