/* Contexts and status codes: creation, settings, allocator hook, messages. */
#include "fault_catalogue.h" /* the counting allocator */

#include <stdlib.h>
#include <string.h>

static void test_status_names(void **state)
{
    (void)state;
    assert_string_equal(sbm_status_name(SBM_SUCCESS), "SBM_SUCCESS");
    assert_string_equal(sbm_status_name(SBM_ERR_PARSE), "SBM_ERR_PARSE");
    assert_string_equal(sbm_status_name(SBM_ERR_NOT_POSITIVE_DEFINITE), "SBM_ERR_NOT_POSITIVE_DEFINITE");
    assert_string_equal(sbm_status_name((sbm_status)12345), "SBM_UNKNOWN_STATUS");
    assert_string_equal(sbm_status_description(SBM_ERR_OUT_OF_MEMORY), "an allocation failed");
    assert_string_equal(sbm_status_description((sbm_status)-999), "unknown status code");
    /* every code in the table has a distinct name and a description */
#define X(name, value, desc)                                          \
    assert_string_equal(sbm_status_name(name), #name);                \
    assert_string_equal(sbm_status_description(name), desc);         \
    assert_int_equal((int)name, value);
    SBM_STATUS_LIST(X)
#undef X
}

static void test_create_errors(void **state)
{
    (void)state;
    sbm_ctx *ctx = (sbm_ctx *)0x1;
    assert_int_equal(sbm_ctx_create(NULL, SBM_BACKEND_CPU, 0), SBM_ERR_NULL_ARGUMENT);
    assert_non_null(strstr(sbm_ctx_last_error(NULL), "sbm_ctx_create: argument ctx is NULL"));
    assert_int_equal(sbm_ctx_create(&ctx, (sbm_backend)7, 0), SBM_ERR_INVALID_ARGUMENT);
    assert_null(ctx);
    assert_non_null(strstr(sbm_ctx_last_error(NULL), "argument backend: 7"));
    assert_int_equal(sbm_ctx_create(&ctx, SBM_BACKEND_CPU, -1), SBM_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(sbm_ctx_last_error(NULL), "argument device: -1 is negative"));
    if (!sbm_has_cuda()) {
        assert_int_equal(sbm_ctx_create(&ctx, SBM_BACKEND_CUDA, 0), SBM_ERR_NOT_SUPPORTED);
        assert_non_null(strstr(sbm_ctx_last_error(NULL), "no CUDA backend"));
        assert_int_equal(sbm_cuda_device_count(), 0);
    } else {
        int n = sbm_cuda_device_count();
        assert_int_equal(sbm_ctx_create(&ctx, SBM_BACKEND_CUDA, n + 3), SBM_ERR_NO_DEVICE);
        assert_null(ctx);
        assert_non_null(strstr(sbm_ctx_last_error(NULL), "device"));
    }
    /* NULL contexts are reported, not dereferenced */
    assert_int_equal(sbm_ctx_set_memory_budget(NULL, 10), SBM_ERR_NULL_ARGUMENT);
    assert_non_null(strstr(sbm_ctx_last_error(NULL), "sbm_ctx_set_memory_budget: argument ctx is NULL"));
    assert_int_equal(sbm_ctx_last_status(NULL), SBM_ERR_NULL_ARGUMENT);
    sbm_ctx_destroy(NULL);
    sbm_ctx_clear_error(NULL);
}

static void test_settings(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    assert_int_equal(sbm_ctx_backend(e->ctx), e->backend);
    assert_int_equal(sbm_ctx_memory_budget(e->ctx), 0);
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_memory_budget(e->ctx, 1 << 20));
    assert_int_equal(sbm_ctx_memory_budget(e->ctx), 1 << 20);
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_stream(e->ctx, NULL));
    assert_null(sbm_ctx_stream(e->ctx));
    SBM_ASSERT_OK(e->ctx, sbm_ctx_synchronize(e->ctx));
    assert_string_equal(sbm_ctx_last_error(e->ctx), "");
    assert_int_equal(sbm_ctx_last_status(e->ctx), SBM_SUCCESS);
    sbm_allocator bad = {NULL, NULL, NULL};
    SBM_ASSERT_FAILS(e->ctx, sbm_ctx_set_allocator(e->ctx, &bad), SBM_ERR_NULL_ARGUMENT,
                     "sbm_ctx_set_allocator: argument allocator: alloc");
    assert_int_equal(sbm_ctx_last_status(e->ctx), SBM_ERR_NULL_ARGUMENT);
    sbm_ctx_clear_error(e->ctx);
    assert_string_equal(sbm_ctx_last_error(e->ctx), "");
    assert_int_equal(sbm_ctx_last_status(e->ctx), SBM_SUCCESS);
}

static void test_allocator_hook(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    if (e->backend != SBM_BACKEND_CPU) skip(); /* a malloc hook serves host memory only */
    int64_t colptr[3] = {0, 1, 2};
    int32_t rowind[2] = {0, 1};
    double values[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (int k = 1; k <= 5; k++) {
        fault_counting cnt = {0, k, 0};
        sbm_allocator a = {fault_counting_alloc, fault_counting_free, &cnt};
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, &a));
        sbm_cbc *A = (sbm_cbc *)0x1;
        sbm_status st = sbm_cbc_create(e->ctx, &A, 2, 2, 2, 1, colptr, rowind, values);
        if (k <= 4) {
            /* the struct and three arrays: each failure is reported and nothing leaks */
            SBM_ASSERT_FAILS(e->ctx, st, SBM_ERR_OUT_OF_MEMORY, "cannot allocate");
            assert_null(A);
            assert_int_equal(cnt.live, 0);
        } else {
            SBM_ASSERT_OK(e->ctx, st);
            assert_int_equal(cnt.calls, 4);
            assert_int_equal(cnt.live, 4);
            /* the matrix remembers its allocator even after the context's changes */
            SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, NULL));
            sbm_cbc_destroy(A);
            assert_int_equal(cnt.live, 0);
        }
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, NULL));
    }
}

/* Dense arrays in the context's memory: round trip, empty arrays, and every error path. */
static void test_arrays(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    double h[37], back[37];
    for (int i = 0; i < 37; i++) h[i] = 1.0 / (i + 1) - 0.25 * i;
    double *d = NULL, *z = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_array_create(e->ctx, 37, &d));
    assert_non_null(d);
    SBM_ASSERT_OK(e->ctx, sbm_array_upload(e->ctx, d, h, 37));
    memset(back, 0, sizeof back);
    SBM_ASSERT_OK(e->ctx, sbm_array_download(e->ctx, back, d, 37));
    assert_memory_equal(back, h, sizeof h);
    /* a partial download reads only the prefix */
    back[5] = -7.0;
    SBM_ASSERT_OK(e->ctx, sbm_array_download(e->ctx, back, d, 5));
    assert_true(back[5] == -7.0 && back[4] == h[4]);

    /* zero elements: a valid pointer, and copies of nothing accept NULL */
    SBM_ASSERT_OK(e->ctx, sbm_array_create(e->ctx, 0, &z));
    assert_non_null(z);
    SBM_ASSERT_OK(e->ctx, sbm_array_upload(e->ctx, NULL, NULL, 0));
    SBM_ASSERT_OK(e->ctx, sbm_array_download(e->ctx, NULL, NULL, 0));
    sbm_array_destroy(e->ctx, z);

    double *p = (double *)0x1;
    SBM_ASSERT_FAILS(e->ctx, sbm_array_create(e->ctx, -3, &p), SBM_ERR_INVALID_ARGUMENT,
                     "sbm_array_create: argument count is negative (-3)");
    assert_null(p);
    SBM_ASSERT_FAILS(e->ctx, sbm_array_create(e->ctx, INT64_MAX, &p), SBM_ERR_OVERFLOW,
                     "do not fit in size_t bytes");
    SBM_ASSERT_FAILS(e->ctx, sbm_array_create(e->ctx, 4, NULL), SBM_ERR_NULL_ARGUMENT,
                     "argument array is NULL");
    SBM_ASSERT_FAILS(e->ctx, sbm_array_upload(e->ctx, NULL, h, 4), SBM_ERR_NULL_ARGUMENT,
                     "sbm_array_upload: argument array is NULL");
    SBM_ASSERT_FAILS(e->ctx, sbm_array_upload(e->ctx, d, NULL, 4), SBM_ERR_NULL_ARGUMENT,
                     "argument h_src is NULL");
    SBM_ASSERT_FAILS(e->ctx, sbm_array_download(e->ctx, NULL, d, 4), SBM_ERR_NULL_ARGUMENT,
                     "sbm_array_download: argument h_dst is NULL");
    SBM_ASSERT_FAILS(e->ctx, sbm_array_download(e->ctx, back, NULL, 4), SBM_ERR_NULL_ARGUMENT,
                     "argument array is NULL");
    SBM_ASSERT_FAILS(e->ctx, sbm_array_download(e->ctx, back, d, -1), SBM_ERR_INVALID_ARGUMENT,
                     "argument count is negative (-1)");
    assert_int_equal(sbm_array_create(NULL, 4, &p), SBM_ERR_NULL_ARGUMENT);
    sbm_array_destroy(e->ctx, NULL);
    sbm_array_destroy(NULL, d); /* no context: nothing can be released, nothing happens */
    sbm_array_destroy(e->ctx, d);

    /* failures go through the allocator hook (CPU: the hook serves host memory) */
    if (e->backend == SBM_BACKEND_CPU) {
        fault_counting cnt = {0, 1, 0};
        sbm_allocator a = {fault_counting_alloc, fault_counting_free, &cnt};
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, &a));
        SBM_ASSERT_FAILS(e->ctx, sbm_array_create(e->ctx, 10, &p), SBM_ERR_OUT_OF_MEMORY,
                         "cannot allocate 80 bytes for a dense array");
        assert_null(p);
        assert_int_equal(cnt.live, 0);
        SBM_ASSERT_OK(e->ctx, sbm_ctx_set_allocator(e->ctx, NULL));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_names),
        cmocka_unit_test(test_create_errors),
        SBM_TEST_BOTH(test_settings),
        SBM_TEST_BOTH(test_allocator_hook),
        SBM_TEST_BOTH(test_arrays),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
