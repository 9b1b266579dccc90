/* What CBC and CSR matrices share: the struct's allocation, the three arrays (pointers, indices,
 * values), filling them from another memory space, and freeing. cbc.c and csr.c add the shapes. */
#include "sbm_internal.h"

#include <stdlib.h>
#include <string.h>

void *sbm__matrix_struct(sbm_ctx *ctx, size_t bytes)
{
    /* the struct too goes through the context's allocator on the CPU backend (host scratch
     * elsewhere), so that an allocator hook sees and can fail every allocation */
    void *M = sbm__host_alloc(ctx, bytes, "a matrix");
    if (M) memset(M, 0, bytes);
    return M;
}

sbm_status sbm__matrix_arrays(sbm_ctx *ctx, int64_t nptr, int64_t nind, size_t vbytes,
                              const char *const what[3], int64_t **ptr, int32_t **ind,
                              double **values)
{
    *ptr = sbm__alloc(ctx, (size_t)nptr * sizeof(int64_t), what[0]);
    *ind = *ptr ? sbm__alloc(ctx, (size_t)nind * sizeof(int32_t), what[1]) : NULL;
    *values = *ind ? sbm__alloc(ctx, vbytes, what[2]) : NULL;
    return *values ? SBM_SUCCESS : SBM_ERR_OUT_OF_MEMORY;
}

void sbm__matrix_free(void *M, sbm_backend backend, int owns, const sbm_allocator *al,
                      void *ptr, void *ind, void *values)
{
    if (owns) {
        if (ptr) al->free(al->user, ptr);
        if (ind) al->free(al->user, ind);
        if (values) al->free(al->user, values);
    }
    /* a CPU matrix's struct came from its allocator (sbm__matrix_struct), others' from malloc */
    if (backend == SBM_BACKEND_CPU)
        al->free(al->user, M);
    else
        free(M);
}

sbm_status sbm__matrix_fill(sbm_ctx *ctx, const struct sbm__backend_ops *src_ops,
                            sbm_backend src_backend, int64_t *ptr, int32_t *ind, double *values,
                            const int64_t *src_ptr, const int32_t *src_ind,
                            const double *src_values, int64_t nptr, int64_t nind, size_t nval)
{
    SBM__TRY(sbm__copy_between(ctx, src_ops, src_backend, ptr, src_ptr,
                               (size_t)nptr * sizeof(int64_t)));
    SBM__TRY(sbm__copy_between(ctx, src_ops, src_backend, ind, src_ind,
                               (size_t)nind * sizeof(int32_t)));
    if (src_values)
        return sbm__copy_between(ctx, src_ops, src_backend, values, src_values,
                                 nval * sizeof(double));
    return nval > 0 ? ctx->ops->memset0(ctx, values, nval * sizeof(double)) : SBM_SUCCESS;
}
