/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA backend's selected inverse of the sparse block Cholesky factor (chol_selinv of the
 * solve layer's table). NOT computed on the GPU: the fronts are copied to the host (one
 * device-to-host copy of the whole factor), their L panels packed in the layout of
 * chol_internal.h, and the Takahashi recurrences run there (sbm__chol_selinv_host,
 * kernels/cpu/chol/cpu_chol_inv.c), so the result is bitwise what the CPU backend gives for the
 * same factor values. */
#include "cuda_chol.cuh"

#include <string.h>

sbm_status sbm__cuda_chol_selinv(sbm_ctx *ctx, const sbm__chol_symbolic *sym,
                                 const sbm__chol_numeric *num, double *Z)
{
    sbm_status st = SBM_SUCCESS;
    double *F = NULL, *L = NULL;
    SBM__CK(sbm__cuda_enter(ctx));
    if (sym->nsuper == 0) goto done;
    F = (double *)sbm__host_alloc(ctx, (size_t)num->f_total * sizeof(double),
                                  "host copy of the Cholesky fronts");
    L = F ? (double *)sbm__host_alloc(ctx, (size_t)sym->L_ptr[sym->nsuper] * sizeof(double),
                                      "host copy of the Cholesky factor")
          : NULL;
    if (!L) {
        st = SBM_ERR_OUT_OF_MEMORY;
        goto done;
    }
    SBM__CK(sbm__cuda_d2h(ctx, F, num->d_F, (size_t)num->f_total * sizeof(double)));
    for (int64_t s = 0; s < sym->nsuper; s++) {
        /* the panel is the first K columns of the M x M front: the same leading dimension */
        const int64_t M = sbm__chol_front_rows(sym, s);
        const int64_t K = (sym->sup_col[s + 1] - sym->sup_col[s]) * sym->b;
        memcpy(L + sym->L_ptr[s], F + num->h_f_ptr[s], (size_t)(M * K) * sizeof(double));
    }
    st = sbm__chol_selinv_host(ctx, sym, L, Z);
done:
    sbm__host_free(ctx, L);
    sbm__host_free(ctx, F);
    return st;
}
