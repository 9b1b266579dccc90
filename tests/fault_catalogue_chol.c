/* SPDX-License-Identifier: BSD-3-Clause */
/* Entries of the fault-injection catalogue for the sparse block Cholesky: plan, factor and solve
 * with each ordering, on an SPD input made here (the catalogue's fixture holds it as f->Spd). */
#include "fault_catalogue.h"

#include <stdlib.h>

sbm_cbc *fault_chol_input(sbm_ctx *ctx)
{
    /* upper block triangle of an 8 x 8 block SPD matrix (3x3 blocks): a band and a dense first
     * row, so that the factor has fill and several supernodes */
    enum { NB = 8, B = 3 };
    int32_t r[3 * NB], c[3 * NB];
    double v[3 * NB * B * B];
    int64_t nt = 0;
    sbm_test_rng g = sbm_test_rng_seed(61);
    for (int j = 0; j < NB; j++)
        for (int i = 0; i <= j; i++) {
            if (!(i == j || i == j - 1 || (i == 0 && j % 3 == 0))) continue;
            r[nt] = i, c[nt] = j;
            for (int q = 0; q < B * B; q++) v[nt * B * B + q] = 0.3 * sbm_test_rng_value(&g);
            if (i == j)
                for (int a = 0; a < B; a++)
                    for (int b2 = 0; b2 < B; b2++)
                        v[nt * B * B + a + b2 * B] = a == b2 ? 8.0 : 0.1 * (a + b2);
            nt++;
        }
    sbm_cbc *S = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_from_triplets(ctx, &S, NB, NB, B, B, nt, r, c, v));
    return S;
}

/* Plan, factor (with a damping) and solve three right-hand sides of Bd into Cd. */
static sbm_status chol_run(fault_fixture *f, sbm_chol_ordering ordering)
{
    sbm_chol *chol = (sbm_chol *)0x1;
    sbm_chol_options o = sbm_chol_default_options();
    o.ordering = ordering;
    sbm_status st = sbm_chol_plan(f->ctx, f->Spd, &o, &chol);
    if (st != SBM_SUCCESS) {
        assert_null(chol);
        return st;
    }
    const int64_t n = sbm_chol_get_info(chol).block_columns * sbm_chol_get_info(chol).block_size;
    st = sbm_chol_factor(f->ctx, chol, f->Spd, SBM_DAMPING_DIAGONAL, 0.5);
    if (st == SBM_SUCCESS) st = sbm_chol_solve(f->ctx, chol, 3, f->Bd, n, f->Cd, n);
    if (st == SBM_SUCCESS) f->out_hash = fault_hash_dev(f->base, 7, f->Cd, (size_t)(3 * n) * sizeof(double));
    sbm_chol_destroy(chol);
    return st;
}

sbm_status fault_op_chol_amd(fault_fixture *f) { return chol_run(f, SBM_CHOL_ORDERING_AMD); }
sbm_status fault_op_chol_natural(fault_fixture *f) { return chol_run(f, SBM_CHOL_ORDERING_NATURAL); }

/* Plan, factor, the block diagonal of the inverse and two off-diagonal blocks of it (host
 * outputs, hashed). */
sbm_status fault_op_chol_inverse(fault_fixture *f)
{
    sbm_chol *chol = (sbm_chol *)0x1;
    sbm_status st = sbm_chol_plan(f->ctx, f->Spd, NULL, &chol);
    if (st != SBM_SUCCESS) {
        assert_null(chol);
        return st;
    }
    double out[(8 + 2) * 9];
    const int64_t rows[2] = {3, 1}, cols[2] = {0, 0};
    st = sbm_chol_factor(f->ctx, chol, f->Spd, SBM_DAMPING_NONE, 0.0);
    if (st == SBM_SUCCESS) st = sbm_chol_inverse_diagonal(f->ctx, chol, out);
    if (st == SBM_SUCCESS) st = sbm_chol_inverse_blocks(f->ctx, chol, 2, rows, cols, out + 8 * 9);
    if (st == SBM_SUCCESS) f->out_hash = fault_fnv(11, out, sizeof out);
    sbm_chol_destroy(chol);
    return st;
}

/* The pose covariances of the fixture's graph (host output, hashed). */
sbm_status fault_op_slam_covariance(fault_fixture *f)
{
    const sbm_g2o_info gi = sbm_g2o_get_info(f->g2o);
    const size_t cnt = (size_t)((gi.vertices - gi.fixed) * gi.error_dim * gi.error_dim);
    double *cov = malloc((cnt + 1) * sizeof(double));
    assert_non_null(cov);
    const sbm_status st = sbm_slam_covariance(f->ctx, f->g2o, NULL, cov);
    if (st == SBM_SUCCESS) f->out_hash = fault_fnv(13, cov, cnt * sizeof(double));
    free(cov);
    return st;
}

/* The CUDA backend with every front through cuSOLVER/cuBLAS (chol_dense_front = 1), whose
 * potrf workspace is allocated too (the numeric object's with CUDA graphs, else the pool's). */
sbm_status fault_op_chol_dense_fronts(fault_fixture *f)
{
    sbm_tuning t = sbm_tuning_default();
    t.chol_dense_front = 1;
    sbm_status st = sbm_ctx_set_tuning(f->ctx, &t);
    if (st == SBM_SUCCESS) st = chol_run(f, SBM_CHOL_ORDERING_AMD);
    SBM_ASSERT_OK(f->ctx, sbm_ctx_set_tuning(f->ctx, NULL));
    return st;
}
