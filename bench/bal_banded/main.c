/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bal-banded: a seeded BAL problem with banded visibility, for the solver measurements
 * (bench/results/NOTES-solvers.md). The scene of sbm_bal_generate (same cameras, points and
 * seed), but point j is seen by the K consecutive cameras starting at j (C - K + 1) / P, as in a
 * video sequence: S is block banded, so its sparse Cholesky is cheap while block-Jacobi PCG needs
 * many iterations (the opposite of --generate's random visibility, where S is nearly dense).
 * Observations are the projections at the generated parameters plus 0.5 px of noise; the
 * parameters are then perturbed (rotations ~0.005 rad, translations ~0.02, focal lengths
 * ~0.5 %, points ~0.01).
 *   sbm-bal-banded C P K out.txt[.bz2] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sbm.h"
#include "sbm_ba.h"

static double uniform(uint64_t *s) { return (double)(sbm_splitmix64(s) >> 11) * 0x1.0p-53; }

static double gauss(uint64_t *s)
{
    const double u = uniform(s), v = uniform(s);
    return sqrt(-2.0 * log(u > 0.0 ? u : 0x1.0p-53)) * cos(6.283185307179586 * v);
}

/* Banded visibility, observations from the parameters, then the perturbation. */
static sbm_status make_banded(sbm_ctx *ctx, sbm_bal_problem *p, int64_t C, int64_t P, int K)
{
    const sbm_bal_info pi = sbm_bal_get_info(p);
    int32_t *cam = (int32_t *)pi.obs_camera; /* the problem's own arrays */
    double *xy = (double *)pi.obs_xy;
    for (int64_t q = 0; q < pi.observations; q++) {
        cam[q] = (int32_t)(pi.obs_point[q] * (C - K + 1) / P + q % K);
        xy[2 * q] = xy[2 * q + 1] = 0.0;
    }
    double *r = malloc((size_t)(2 * pi.observations) * sizeof(double));
    if (!r) return SBM_ERR_OUT_OF_MEMORY;
    const sbm_status st = sbm_bal_evaluate(ctx, p, r, NULL);
    uint64_t s = 12345;
    for (int64_t q = 0; q < 2 * pi.observations && st == SBM_SUCCESS; q++)
        xy[q] = r[q] + 0.5 * gauss(&s);
    free(r);
    for (int64_t i = 0; i < C; i++) {
        double *c = pi.camera_params + 9 * i;
        for (int a = 0; a < 3; a++) c[a] += 0.005 * gauss(&s), c[3 + a] += 0.02 * gauss(&s);
        c[6] *= 1.0 + 0.005 * gauss(&s);
    }
    for (int64_t j = 0; j < 3 * P; j++) pi.point_params[j] += 0.01 * gauss(&s);
    return st;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: sbm-bal-banded CAMERAS POINTS OBS_PER_POINT out.txt[.bz2]\n");
        return 2;
    }
    const int64_t C = atoll(argv[1]), P = atoll(argv[2]);
    const int K = atoi(argv[3]);
    sbm_ctx *ctx = NULL;
    sbm_bal_problem *p = NULL;
    if (sbm_ctx_create(&ctx, SBM_BACKEND_CPU, 0) != SBM_SUCCESS) {
        fprintf(stderr, "sbm-bal-banded: cannot create a CPU context\n");
        return 1;
    }
    const sbm_bal_generate_options g = sbm_bal_generate_defaults(C, P, K, 1);
    sbm_status st = sbm_bal_generate(ctx, &g, &p);
    if (st == SBM_SUCCESS) st = make_banded(ctx, p, C, P, K);
    if (st == SBM_SUCCESS) st = sbm_bal_write(ctx, argv[4], p);
    if (st != SBM_SUCCESS)
        fprintf(stderr, "sbm-bal-banded: %s\n",
                st == SBM_ERR_OUT_OF_MEMORY ? "out of memory" : sbm_ctx_last_error(ctx));
    sbm_bal_destroy(p);
    sbm_ctx_destroy(ctx);
    return st == SBM_SUCCESS ? 0 : 1;
}
