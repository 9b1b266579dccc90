/* SPDX-License-Identifier: BSD-3-Clause */
/* The least DRAM traffic of each phase of one BA Levenberg-Marquardt iteration (ba/ba.h), the
 * floor the phase's time is held against: bytes / copy bandwidth. Every value is a double
 * (8 bytes); an observation carries x, y and two 32-bit indices (24 bytes). A phase is charged
 * for reading its inputs once and writing its outputs once, whatever the implementation keeps
 * in between (a Jacobian stored between two kernels is the implementation's choice, not the
 * problem's). With nc cameras, np points, no observations, nw blocks of W (distinct camera-point
 * pairs) and ns stored blocks of S (upper triangle, diagonal included):
 *   lin    = 8 (9 nc + 3 np)                       parameters read
 *          + 24 no                                 observations read
 *          + 8 (81 nc + 9 np + 27 nw + 9 nc + 3 np) U, V, W, gc, gp written
 *   schur  = 8 (9 np + 9 np)                       V read (damped on the fly), V^-1 written
 *          + 8 (27 nw + 27 nw)                     W read, Y = W V^-1 written
 *          + 8 (9 nc + 3 np + 9 nc)                gc, gp read, rhs = gc - Y gp written
 *          [S formed: + 8 (81 nc + 54 nw + 81 ns)  U read, W and Y read by the product, S written]
 *   pcg_iter (matrix-free) = 8 (81 nc + 54 nw + 6 np)  U, W, Y read; t = W^T x written and read
 *          (explicit S)    = 8 (81 ns)              S read once (symmetric product)
 *          + 8 (81 nc) + 17 * 8 (9 nc)             block-Jacobi blocks; the vectors of one
 *                                                  iteration (product 2, preconditioner 2,
 *                                                  two dots 4, three updates 9 passes)
 *   pcg_setup (matrix-free) = 8 (81 nc + 54 nw + 81 nc)  diag(U), W, Y read; blocks written
 *          (explicit S)     = 8 (81 nc + 81 nc)    S's diagonal blocks read, inverses written
 *   solve  = pcg_setup + iterations * pcg_iter (Cholesky: not counted, flop-bound)
 *   update = 8 (9 np + 27 nw + 3 np + 9 nc + 3 np) back-substitution: V^-1, W, gp, dc read,
 *                                                  dp written
 *          + 3 * 8 (9 nc + 3 np)                   parameters and step read, trial written
 *          + 8 (9 nc + 3 np) + 24 no               the cost: trial parameters, observations */
#include <stdlib.h>
#include <string.h>

#include "ba.h"

/* cameras^2 bits at most this many bytes for the count of S's blocks */
#define S_BITMAP_MAX ((size_t)512 << 20)

static int cmp_i32(const void *a, const void *b)
{
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

ba_dims ba_dims_of(const sbm_bal_problem *p)
{
    const sbm_bal_info in = sbm_bal_get_info(p);
    ba_dims d = {in.cameras, in.points, in.observations, -1, -1};
    const int64_t nc = in.cameras, np = in.points, no = in.observations;
    int64_t *start = calloc((size_t)np + 1, sizeof *start);
    int32_t *cam = malloc(sizeof *cam * (size_t)(no ? no : 1));
    int64_t *fill = malloc(sizeof *fill * (size_t)(np ? np : 1));
    unsigned char *bits = NULL;
    const size_t nbits = (size_t)nc * (size_t)nc;
    if (nc > 0 && nbits / 8 + 1 <= S_BITMAP_MAX && (int64_t)(nbits / (size_t)nc) == nc)
        bits = calloc(nbits / 8 + 1, 1);
    if (!start || !cam || !fill) goto done;
    for (int64_t k = 0; k < no; k++) start[in.obs_point[k] + 1]++;
    for (int64_t j = 0; j < np; j++) start[j + 1] += start[j];
    memcpy(fill, start, sizeof *fill * (size_t)np);
    for (int64_t k = 0; k < no; k++) cam[fill[in.obs_point[k]]++] = in.obs_camera[k];
    int64_t nw = 0, ns = nc;
    for (int64_t j = 0; j < np; j++) {
        int32_t *c = cam + start[j];
        const int64_t m = start[j + 1] - start[j];
        qsort(c, (size_t)m, sizeof *c, cmp_i32);
        int64_t u = 0; /* distinct cameras of point j, compacted to the front */
        for (int64_t a = 0; a < m; a++)
            if (a == 0 || c[a] != c[a - 1]) c[u++] = c[a];
        nw += u;
        if (!bits) continue;
        for (int64_t a = 0; a < u; a++)
            for (int64_t b = a + 1; b < u; b++) {
                const size_t bit = (size_t)c[a] * (size_t)nc + (size_t)c[b];
                if (!(bits[bit / 8] & (1u << (bit % 8)))) {
                    bits[bit / 8] |= (unsigned char)(1u << (bit % 8));
                    ns++;
                }
            }
    }
    d.w_blocks = nw;
    d.s_blocks = bits ? ns : -1;
done:
    free(start);
    free(cam);
    free(fill);
    free(bits);
    return d;
}

static int forms_s(sbm_linear_solver ls)
{
    return ls == SBM_LINEAR_PCG || ls == SBM_LINEAR_SPARSE_CHOLESKY ||
           ls == SBM_LINEAR_DENSE_CHOLESKY;
}

ba_bytes ba_bytes_of(const ba_dims *d, sbm_linear_solver ls)
{
    const double nc = (double)d->cameras, np = (double)d->points, no = (double)d->observations;
    const double nw = (double)d->w_blocks, ns = (double)d->s_blocks;
    ba_bytes b;
    if (d->w_blocks < 0) {
        b.lin = b.schur = b.pcg_iter = b.pcg_setup = b.update = -1.0;
        return b;
    }
    b.lin = 8 * (9 * nc + 3 * np) + 24 * no + 8 * (81 * nc + 9 * np + 27 * nw + 9 * nc + 3 * np);
    b.schur = 8 * (18 * np + 54 * nw + 18 * nc + 3 * np);
    if (forms_s(ls)) b.schur = d->s_blocks < 0 ? -1.0 : b.schur + 8 * (81 * nc + 54 * nw + 81 * ns);
    const double vec = 8 * (81 * nc) + 17 * 8 * (9 * nc);
    if (ls == SBM_LINEAR_PCG_MATRIX_FREE) {
        b.pcg_iter = 8 * (81 * nc + 54 * nw + 6 * np) + vec;
        b.pcg_setup = 8 * (162 * nc + 54 * nw);
    } else if (ls == SBM_LINEAR_PCG) {
        b.pcg_iter = d->s_blocks < 0 ? -1.0 : 8 * (81 * ns) + vec;
        b.pcg_setup = 8 * (162 * nc);
    } else {
        b.pcg_iter = b.pcg_setup = -1.0;
    }
    b.update = 8 * (15 * np + 27 * nw + 9 * nc) + 4 * 8 * (9 * nc + 3 * np) + 24 * no;
    return b;
}

double ba_solve_bytes(const ba_bytes *b, sbm_linear_solver ls, double pcg_its)
{
    if (ls != SBM_LINEAR_PCG && ls != SBM_LINEAR_PCG_MATRIX_FREE) return -1.0;
    if (b->pcg_iter < 0 || b->pcg_setup < 0 || pcg_its < 0) return -1.0;
    return b->pcg_setup + pcg_its * b->pcg_iter;
}

double ba_floor_ms(double bytes, double gbs)
{
    return bytes >= 0 && gbs > 0 ? bytes / (gbs * 1e6) : -1.0;
}
