/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA runtime failures (GPU only; skips visibly without a GPU). A suite of its own: the
 * failure it provokes is reported by compute-sanitizer as an API error, so the sanitizer runs of
 * .ci/device-run.sh leave it out. */
#include "test_util.h"

#include <stdlib.h>

/* A CUDA runtime failure becomes SBM_ERR_CUDA with the failing call named: an allocator hook
 * that hands out host memory (not device memory) makes the first device copy or memset fail.
 * Its own context, so that nothing else runs after the failure in it. */
static void *host_memory_alloc(void *user, size_t bytes)
{
    (void)user;
    return calloc(1, bytes);
}

static void host_memory_free(void *user, void *ptr)
{
    (void)user;
    free(ptr);
}

static void test_cuda_runtime_error(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    (void)e;
    sbm_ctx *ctx = NULL;
    SBM_ASSERT_OK(NULL, sbm_ctx_create(&ctx, SBM_BACKEND_CUDA, 0));
    const sbm_allocator wrong = {host_memory_alloc, host_memory_free, NULL};
    SBM_ASSERT_OK(ctx, sbm_ctx_set_allocator(ctx, &wrong));
    int64_t colptr[3] = {0, 1, 2};
    int32_t rowind[2] = {0, 1};
    sbm_cbc *A = (sbm_cbc *)0x1;
    SBM_ASSERT_FAILS(ctx, sbm_cbc_create(ctx, &A, 2, 2, 2, 2, colptr, rowind, NULL), SBM_ERR_CUDA,
                     "failed on device 0");
    assert_null(A);
    sbm_ctx_destroy(ctx);
}

int main(void)
{
    sbm_test_require_gpu("test_cuda_errors");
    const struct CMUnitTest tests[] = {
        SBM_TEST_CUDA(test_cuda_runtime_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
