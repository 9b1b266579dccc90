/* SPDX-License-Identifier: BSD-3-Clause */
/* What the BA linearisation suites (test_ba_lin.c, test_ba_lin_errors.c) read back from a
 * system: its U, V, W values, [gc; gp], cost and damping scale on the host, and their bitwise
 * comparison. */
#ifndef SBM_TEST_BA_LIN_CHECK_H
#define SBM_TEST_BA_LIN_CHECK_H

#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#include "ba_system.h"

/* What a system holds, on the host. */
typedef struct lin_got {
    double *U, *V, *W, *g; /* damped U, V (block values), W, [gc; gp] */
    double cost;
} lin_got;

static inline double *cbc_values(const sbm_cbc *A)
{
    sbm_cbc *H = sbm_test_cbc_to_host(A);
    const sbm_cbc_info hi = sbm_cbc_get_info(H);
    const int64_t n = hi.nnzb * hi.r * hi.c;
    double *v = malloc((size_t)(n + 1) * sizeof(double));
    assert_non_null(v);
    memcpy(v, hi.values, (size_t)n * sizeof(double));
    sbm_cbc_destroy(H);
    return v;
}

/* White-box: the system's fields through the info struct and the contract's vectors. */
static inline lin_got fetch(sbm_ctx *ctx, const sbm_ba_system *s)
{
    const sbm_ba_system_info si = sbm_ba_system_get_info(s);
    const int64_t n = sbm__ba_nparams(s);
    lin_got g;
    g.U = cbc_values(si.U), g.V = cbc_values(si.V), g.W = cbc_values(si.W);
    g.g = sbm_test_vec_download(ctx, si.gc, n); /* gp follows gc in one vector */
    assert_true(si.gp == si.gc + 9 * si.cameras);
    g.cost = si.cost;
    return g;
}

/* White-box: the damping scale of the last linearisation (host copy, malloc'd). */
static inline double *damping_scale(sbm_ctx *ctx, const sbm_ba_system *s)
{
    return sbm_test_vec_download(ctx, s->D, sbm__ba_nparams(s));
}

static inline void got_free(lin_got *g) { free(g->U), free(g->V), free(g->W), free(g->g); }

/* Bitwise equality of two linearisations' results. */
static inline void assert_same(const lin_got *a, const lin_got *b, const sbm_ba_system *s, const char *what)
{
    const sbm_ba_system_info si = sbm_ba_system_get_info(s);
    const int64_t nnzb = sbm_cbc_get_info(si.W).nnzb;
    if (memcmp(a->U, b->U, (size_t)(81 * si.cameras) * sizeof(double)) ||
        memcmp(a->V, b->V, (size_t)(9 * si.points) * sizeof(double)) ||
        memcmp(a->W, b->W, (size_t)(27 * nnzb) * sizeof(double)) ||
        memcmp(a->g, b->g, (size_t)sbm__ba_nparams(s) * sizeof(double)) || a->cost != b->cost)
        fail_msg("%s: the two linearisations differ", what);
}

#endif /* SBM_TEST_BA_LIN_CHECK_H */
