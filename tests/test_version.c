/* SPDX-License-Identifier: BSD-3-Clause */
/* The version and the enums' names. The version: one declaration (the SBM_VERSION_* macros of sbm.h), the same string from the
 * library, and the CMake project version read from the header. */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

static void test_version_string(void **state)
{
    (void)state;
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", SBM_VERSION_MAJOR, SBM_VERSION_MINOR, SBM_VERSION_PATCH);
    assert_string_equal(sbm_version(), want);
    assert_int_equal(SBM_VERSION,
                     SBM_VERSION_MAJOR * 10000 + SBM_VERSION_MINOR * 100 + SBM_VERSION_PATCH);
#ifdef SBM_TEST_PROJECT_VERSION
    assert_string_equal(sbm_version(), SBM_TEST_PROJECT_VERSION);
#endif
}

/* Every public enum has a name function; a value outside the enum gets its "unknown" name. */
static void test_enum_names(void **state)
{
    (void)state;
    assert_string_equal(sbm_backend_name(SBM_BACKEND_CPU), "cpu");
    assert_string_equal(sbm_backend_name(SBM_BACKEND_CUDA), "cuda");
    assert_string_equal(sbm_backend_name((sbm_backend)9), "unknown backend");
    assert_string_equal(sbm_layout_name(SBM_LAYOUT_ROW_MAJOR), "row-major");
    assert_string_equal(sbm_layout_name(SBM_LAYOUT_COL_MAJOR), "column-major");
    assert_string_equal(sbm_layout_name((sbm_layout)-1), "unknown layout");
    assert_string_equal(sbm_op_name(SBM_OP_N), "N");
    assert_string_equal(sbm_op_name(SBM_OP_T), "T");
    assert_string_equal(sbm_op_name((sbm_op)2), "unknown op");
    assert_string_equal(sbm_side_name(SBM_SIDE_LEFT), "left");
    assert_string_equal(sbm_side_name(SBM_SIDE_RIGHT), "right");
    assert_string_equal(sbm_side_name((sbm_side)5), "unknown side");
    assert_string_equal(sbm_linear_solver_name(SBM_LINEAR_AUTO), "auto");
    assert_string_equal(sbm_linear_solver_name(SBM_LINEAR_DENSE_CHOLESKY), "dense Cholesky");
    assert_string_equal(sbm_linear_solver_name(SBM_LINEAR_PCG), "PCG (block-Jacobi)");
    assert_string_equal(sbm_linear_solver_name(SBM_LINEAR_PCG_MATRIX_FREE),
                        "matrix-free PCG (Schur-Jacobi)");
    assert_string_equal(sbm_linear_solver_name(SBM_LINEAR_SPARSE_CHOLESKY), "sparse Cholesky");
    assert_string_equal(sbm_linear_solver_name((sbm_linear_solver)17), "unknown linear solver");
    assert_string_equal(sbm_solver_method_name(SBM_METHOD_LEVENBERG_MARQUARDT), "Levenberg-Marquardt");
    assert_string_equal(sbm_solver_method_name(SBM_METHOD_GAUSS_NEWTON), "Gauss-Newton");
    assert_string_equal(sbm_solver_method_name((sbm_solver_method)3), "unknown method");
    assert_string_equal(sbm_damping_name(SBM_DAMPING_NONE), "none");
    assert_string_equal(sbm_damping_name(SBM_DAMPING_IDENTITY), "identity");
    assert_string_equal(sbm_damping_name(SBM_DAMPING_DIAGONAL), "diagonal");
    assert_string_equal(sbm_damping_name((sbm_damping)3), "unknown damping");
    assert_string_equal(sbm_chol_ordering_name(SBM_CHOL_ORDERING_AMD), "AMD");
    assert_string_equal(sbm_chol_ordering_name(SBM_CHOL_ORDERING_NATURAL), "natural");
    assert_string_equal(sbm_chol_ordering_name((sbm_chol_ordering)2), "unknown ordering");
    assert_string_equal(sbm_stop_reason_name(SBM_STOP_NO_PROGRESS), "no progress");
    assert_string_equal(sbm_loss_name(SBM_LOSS_HUBER), "huber");
    assert_string_equal(sbm_spmv_format_name(SBM_SPMV_HYB), "hyb");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_string),
        cmocka_unit_test(test_enum_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
