/* SPDX-License-Identifier: BSD-3-Clause */
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

/* Tuning: the default is all zeros (the library's choice), a context starts with it, a set
 * struct reads back unchanged and NULL resets; every field's invalid values are refused by code
 * and message naming the field and the value, and leave the tuning as it was. */
static void test_tuning(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_tuning zero, got, t = sbm_tuning_default();
    memset(&zero, 0, sizeof zero);
    assert_memory_equal(&t, &zero, sizeof t);
    memset(&got, 0x5a, sizeof got);
    SBM_ASSERT_OK(e->ctx, sbm_ctx_get_tuning(e->ctx, &got));
    assert_memory_equal(&got, &zero, sizeof got);

    /* round trips: every enum at its last value, a configuration of every kind */
    t.spmv = SBM_TUNE_SPMV_BATCHED_SMALL;
    t.csr_spmv = SBM_TUNE_CSR_SPMV_MERGE;
    t.csr_spmv_merge_threads = 128;
    t.csr_spmv_merge_items = 5;
    t.csr_spmv_merge_streaming = 1;
    t.csr_spmv_merge_prefetch = 1;
    t.csr_spmm = SBM_TUNE_CSR_SPMM_MERGE;
    t.csr_gemm = SBM_TUNE_CSR_GEMM_GLOBAL;
    t.gemm_numeric = SBM_TUNE_GEMM_SDMMA_ONE_TILE;
    t.gemm_tile_blocks = 5;
    t.gemm_tile_entries = 4096;
    t.gemm_tile_grid = 2;
    t.gemm_sort = SBM_TUNE_GEMM_SORT_RADIX;
    t.chol_dense_front = 1;
    t.num_threads = 64;
    t.cuda_graphs = SBM_TUNE_CUDA_GRAPHS_CUT;
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, &t));
    SBM_ASSERT_OK(e->ctx, sbm_ctx_get_tuning(e->ctx, &got));
    assert_memory_equal(&got, &t, sizeof t);
    const sbm_tuning merge = t;
    sbm_tuning v = sbm_tuning_default();
    v.csr_spmv = SBM_TUNE_CSR_SPMV_VECTOR;
    v.csr_spmv_vector_width = 32;
    v.csr_spmv_vector_rows = 4;
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, &v));
    SBM_ASSERT_OK(e->ctx, sbm_ctx_get_tuning(e->ctx, &got));
    assert_memory_equal(&got, &v, sizeof v);
    v.csr_spmv_vector_width = 0; /* a forced kernel without configuration */
    v.csr_spmv_vector_rows = 0;
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, &v));
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, &merge));

    /* each invalid value: refused, named, the tuning unchanged */
    static const struct {
        int field;  /* which field to break (see the switch) */
        int value;  /* its bad value */
        const char *msg;
    } bad[] = {
        {0, 4, "argument tuning: spmv is 4, not an sbm_tune_spmv (0 to 3)"},
        {0, -1, "argument tuning: spmv is -1, not an sbm_tune_spmv (0 to 3)"},
        {1, 4, "argument tuning: csr_spmv is 4, not an sbm_tune_csr_spmv (0 to 3)"},
        {2, 3, "argument tuning: csr_spmv_vector_width is 3, not 2, 4, 8, 16 or 32"},
        {2, 64, "argument tuning: csr_spmv_vector_width is 64, not 2, 4, 8, 16 or 32"},
        {3, 3, "argument tuning: csr_spmv_vector_rows is 3, not 1, 2 or 4"},
        {4, 0, "argument tuning: csr_spmv_vector_width is 8 but csr_spmv_vector_rows is 0: set both or neither"},
        {5, 8, "argument tuning: csr_spmv_vector_width is 8 but csr_spmv is 3, not SBM_TUNE_CSR_SPMV_VECTOR (2)"},
        {6, 129, "csr_spmv_merge_threads, _items, _streaming, _prefetch are 129, 5, 1, 1: not a compiled merge configuration"},
        {7, 11, "csr_spmv_merge_threads, _items, _streaming, _prefetch are 128, 11, 1, 1: not a compiled merge configuration"},
        {8, 2, "csr_spmv_merge_threads, _items, _streaming, _prefetch are 128, 5, 2, 1: not a compiled merge configuration"},
        {9, 0, "csr_spmv_merge_threads, _items, _streaming, _prefetch are 128, 5, 1, 0: not a compiled merge configuration"},
        {10, 0, "argument tuning: csr_spmv_merge_threads is 128 but csr_spmv_merge_items is 0: set both or neither"},
        {11, 1, "argument tuning: csr_spmv_merge_streaming is 1 and csr_spmv_merge_prefetch 1 without csr_spmv_merge_threads"},
        {12, 1, "argument tuning: csr_spmv_merge_threads is 128 but csr_spmv is 1, not SBM_TUNE_CSR_SPMV_MERGE (3)"},
        {13, 3, "argument tuning: csr_spmm is 3, not an sbm_tune_csr_spmm (0 to 2)"},
        {14, 2, "argument tuning: csr_gemm is 2, not an sbm_tune_csr_gemm (0 to 1)"},
        {15, 7, "argument tuning: gemm_numeric is 7, not an sbm_tune_gemm_numeric (0 to 6)"},
        {16, -1, "argument tuning: gemm_tile_blocks is -1, negative"},
        {17, 4097, "argument tuning: gemm_tile_entries is 4097, not 0 or 1 to 4096"},
        {17, -2, "argument tuning: gemm_tile_entries is -2, not 0 or 1 to 4096"},
        {18, 0, "argument tuning: gemm_tile_blocks is 5 but gemm_tile_entries is 0: set both or neither"},
        {19, -3, "argument tuning: gemm_tile_grid is -3, negative"},
        {20, 3, "argument tuning: gemm_sort is 3, not an sbm_tune_gemm_sort (0 to 2)"},
        {21, -1, "argument tuning: chol_dense_front is -1, negative"},
        {22, -1, "argument tuning: num_threads is -1, not 0 or 1 to 64"},
        {22, 65, "argument tuning: num_threads is 65, not 0 or 1 to 64"},
        {23, 4, "argument tuning: cuda_graphs is 4, not an sbm_tune_cuda_graphs (0 to 3)"},
        {23, -1, "argument tuning: cuda_graphs is -1, not an sbm_tune_cuda_graphs (0 to 3)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sbm_tuning b = merge;
        const int x = bad[i].value;
        switch (bad[i].field) {
        case 0: b.spmv = (sbm_tune_spmv)x; break;
        case 1: b.csr_spmv = (sbm_tune_csr_spmv)x; break;
        case 2: b = v; b.csr_spmv_vector_width = x; b.csr_spmv_vector_rows = 1; break;
        case 3: b = v; b.csr_spmv_vector_width = 2; b.csr_spmv_vector_rows = x; break;
        case 4: b = v; b.csr_spmv_vector_width = 8; b.csr_spmv_vector_rows = x; break;
        case 5: b.csr_spmv_merge_threads = b.csr_spmv_merge_items = 0;
                b.csr_spmv_merge_streaming = b.csr_spmv_merge_prefetch = 0;
                b.csr_spmv_vector_width = x; b.csr_spmv_vector_rows = 1; break;
        case 6: b.csr_spmv_merge_threads = x; break;
        case 7: b.csr_spmv_merge_items = x; break;
        case 8: b.csr_spmv_merge_streaming = x; break;
        case 9: b.csr_spmv_merge_prefetch = x; break;
        case 10: b.csr_spmv_merge_items = x; break;
        case 11: b.csr_spmv_merge_threads = b.csr_spmv_merge_items = 0;
                 b.csr_spmv_merge_streaming = x; break;
        case 12: b.csr_spmv = (sbm_tune_csr_spmv)x; break;
        case 13: b.csr_spmm = (sbm_tune_csr_spmm)x; break;
        case 14: b.csr_gemm = (sbm_tune_csr_gemm)x; break;
        case 15: b.gemm_numeric = (sbm_tune_gemm_numeric)x; break;
        case 16: b.gemm_tile_blocks = x; break;
        case 17: b.gemm_tile_entries = x; break;
        case 18: b.gemm_tile_entries = x; break;
        case 19: b.gemm_tile_grid = x; break;
        case 20: b.gemm_sort = (sbm_tune_gemm_sort)x; break;
        case 21: b.chol_dense_front = x; break;
        case 22: b.num_threads = x; break;
        default: b.cuda_graphs = (sbm_tune_cuda_graphs)x; break;
        }
        SBM_ASSERT_FAILS(e->ctx, sbm_ctx_set_tuning(e->ctx, &b), SBM_ERR_INVALID_ARGUMENT, bad[i].msg);
        assert_non_null(strstr(sbm_ctx_last_error(e->ctx), "sbm_ctx_set_tuning: "));
        SBM_ASSERT_OK(e->ctx, sbm_ctx_get_tuning(e->ctx, &got));
        assert_memory_equal(&got, &merge, sizeof merge);
    }

    /* NULL resets; NULL arguments */
    SBM_ASSERT_OK(e->ctx, sbm_ctx_set_tuning(e->ctx, NULL));
    SBM_ASSERT_OK(e->ctx, sbm_ctx_get_tuning(e->ctx, &got));
    assert_memory_equal(&got, &zero, sizeof got);
    SBM_ASSERT_FAILS(e->ctx, sbm_ctx_get_tuning(e->ctx, NULL), SBM_ERR_NULL_ARGUMENT,
                     "sbm_ctx_get_tuning: argument tuning is NULL");
    assert_int_equal(sbm_ctx_set_tuning(NULL, &t), SBM_ERR_NULL_ARGUMENT);
    assert_non_null(strstr(sbm_ctx_last_error(NULL), "sbm_ctx_set_tuning: argument ctx is NULL"));
    assert_int_equal(sbm_ctx_get_tuning(NULL, &got), SBM_ERR_NULL_ARGUMENT);
    assert_non_null(strstr(sbm_ctx_last_error(NULL), "sbm_ctx_get_tuning: argument ctx is NULL"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_names),
        cmocka_unit_test(test_create_errors),
        SBM_TEST_BOTH(test_settings),
        SBM_TEST_BOTH(test_allocator_hook),
        SBM_TEST_BOTH(test_arrays),
        SBM_TEST_BOTH(test_tuning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
