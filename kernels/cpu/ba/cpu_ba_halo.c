/* SPDX-License-Identifier: BSD-3-Clause */
/* The CPU backend's halo kernels of the distributed BA solver (ba_kernels.h): packing the
 * shared points' entries for the exchange, adding the ranks' partial sums in rank order, and the
 * damping scale of summed diagonal blocks. Arguments are checked by the front end (src/dist). */
#include "ba_kernels.h"
#include "cpu_backend.h"
#include "sbm_damp.h"

sbm_status sbm__cpu_ba_halo_pack(sbm_ctx *ctx, int64_t n, int w, const int32_t *idx,
                                 const double *src, double *buf)
{
    (void)ctx;
    for (int64_t e = 0; e < n; e++)
        for (int c = 0; c < w; c++) buf[e * w + c] = src[(int64_t)idx[e] * w + c];
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_ba_halo_sum(sbm_ctx *ctx, int64_t nsum, int w, const int64_t *ptr,
                                const int32_t *ent, const int32_t *pt, const double *buf,
                                double *dst)
{
    (void)ctx;
    for (int64_t s = 0; s < nsum; s++)
        for (int c = 0; c < w; c++) {
            double v = 0.0;
            for (int64_t e = ptr[s]; e < ptr[s + 1]; e++) v += buf[(int64_t)ent[e] * w + c];
            dst[(int64_t)pt[s] * w + c] = v;
        }
    return SBM_SUCCESS;
}

sbm_status sbm__cpu_ba_damp_scale(sbm_ctx *ctx, int64_t nblocks, int b, const double *und,
                                  double *D)
{
    (void)ctx;
    const int64_t bb = (int64_t)b * b;
    for (int64_t i = 0; i < nblocks; i++)
        for (int a = 0; a < b; a++) D[i * b + a] = sbm_blk_damp_scale(und[bb * i + (b + 1) * a]);
    return SBM_SUCCESS;
}
