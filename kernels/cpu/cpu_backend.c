/* The CPU backend's operations table: host memory and the reference kernels. */
#include "cpu_backend.h"

#include <stdlib.h>
#include <string.h>

static void *sbm__cpu_alloc(void *user, size_t bytes)
{
    (void)user;
    return malloc(bytes);
}

static void sbm__cpu_free(void *user, void *ptr)
{
    (void)user;
    free(ptr);
}

static sbm_status sbm__cpu_copy(sbm_ctx *ctx, void *dst, const void *src, size_t bytes, int kind)
{
    (void)ctx;
    (void)kind;
    if (bytes) memmove(dst, src, bytes);
    return SBM_SUCCESS;
}

static sbm_status sbm__cpu_memset0(sbm_ctx *ctx, void *dst, size_t bytes)
{
    (void)ctx;
    if (bytes) memset(dst, 0, bytes);
    return SBM_SUCCESS;
}

const sbm__backend_ops sbm__cpu_ops = {
    .name = "CPU",
    .default_alloc = sbm__cpu_alloc,
    .default_free = sbm__cpu_free,
    .copy = sbm__cpu_copy,
    .memset0 = sbm__cpu_memset0,
    .synchronize = NULL,
    .ctx_init = NULL,
    .ctx_destroy = NULL,
    .set_stream = NULL,
    .cbc_validate = sbm__cpu_cbc_validate,
    .csr_validate = sbm__cpu_csr_validate,
    .cbc_transpose = sbm__cpu_cbc_transpose,
    .csr_transpose = sbm__cpu_csr_transpose,
    .cbc_to_csr = sbm__cpu_cbc_to_csr,
    .csr_to_cbc = sbm__cpu_csr_to_cbc,
    .cbc_to_bsr = sbm__cpu_cbc_to_bsr,
    .cbc_add = sbm__cpu_cbc_add,
    .gemm_plan = sbm__cpu_gemm_plan,
    .gemm_execute = sbm__cpu_gemm_execute,
    .gemm_plan_destroy = sbm__cpu_gemm_plan_destroy,
    .bdiag_inverse = sbm__cpu_bdiag_inverse,
    .bdiag_scale = sbm__cpu_bdiag_scale,
    .cbc_spmv = sbm__cpu_cbc_spmv,
    .csr_spmv = sbm__cpu_csr_spmv,
    .csr_spmm = sbm__cpu_csr_spmm,
    .csr_gemm_plan = sbm__cpu_csr_gemm_plan,
    .csr_gemm_execute = sbm__cpu_csr_gemm_execute,
    .csr_gemm_plan_destroy = sbm__cpu_csr_gemm_plan_destroy,
    .csr_spmv_plan = sbm__cpu_csr_spmv_plan,
    .csr_spmv_plan_update = sbm__cpu_csr_spmv_plan_update,
    .csr_spmv_plan_execute = sbm__cpu_csr_spmv_plan_execute,
    .spmv_plan_destroy = sbm__cpu_spmv_plan_destroy,
    .cbc_pattern_hash = sbm__cpu_cbc_pattern_hash,
    .csr_pattern_hash = sbm__cpu_csr_pattern_hash,
    .vec_dot = sbm__cpu_vec_dot,
    .vec_axpy = sbm__cpu_vec_axpy,
    .vec_xpay = sbm__cpu_vec_xpay,
    .vec_scale = sbm__cpu_vec_scale,
    .vec_amax = sbm__cpu_vec_amax,
    .chol_numeric_create = sbm__cpu_chol_numeric_create,
    .chol_factor = sbm__cpu_chol_factor,
    .chol_solve = sbm__cpu_chol_solve,
    .chol_numeric_destroy = sbm__cpu_chol_numeric_destroy,
    /* ba-lin */
    .ba_linearize = sbm__cpu_ba_linearize,
    .ba_cost = sbm__cpu_ba_cost,
    .ba_damp = sbm__cpu_ba_damp,
    .lm_predicted = sbm__cpu_lm_predicted,
    /* ba-solve */
    .ba_schur_diagonal = sbm__cpu_ba_schur_diagonal,
    .dense_spd_solve = sbm__cpu_dense_spd_solve,
    /* slam-gpu */
    .slam_linearize = sbm__cpu_slam_linearize,
    .slam_oplus = sbm__cpu_slam_oplus,
    .slam_diag_get = sbm__cpu_slam_diag_get,
    .slam_diag_add = sbm__cpu_slam_diag_add,
};
