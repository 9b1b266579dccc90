/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench's peer: CSparse (CXSparse, cs_di_multiply) on a block product expanded to scalars,
 * and the elementwise check of sbm's C against its C (peer_csparse.c). Without CSparse
 * (SBM_BENCH_HAVE_CSPARSE unset) the peer reports that it did not run. */
#ifndef SBM_BENCH_PEER_CSPARSE_H
#define SBM_BENCH_PEER_CSPARSE_H

#include "common/bench_util.h"
#include "sbm.h"

typedef struct peer_result {
    int ok;           /* 1 measured */
    char note[160];   /* why not */
    double ms;        /* median time of one full call */
    bench_stat t;     /* the same with min and max */
    double flops;     /* the peer's own multiply-add count x 2 (it may compute more than sbm) */
    void *C;          /* its C (CSparse: a cs_di, CSC), for the check; peer_result_free */
    int r_c, c_c, upper; /* C's block shape; 1: only the upper block triangle is compared */
} peer_result;

/* CSparse cs_multiply on the scalar expansion of op_a(A) * op_b(B), host matrices (timed with
 * bench_now_s, reps calls after a warm-up); flags: the product's sbm_cbc_gemm flags
 * (SBM_GEMM_UPPER: only C's upper block triangle is compared); r_c x c_c: C's block shape, for
 * that check. Without CSparse: a result saying so. */
void run_csparse(sbm_ctx *host, const sbm_cbc *A, sbm_op op_a, const sbm_cbc *B, sbm_op op_b,
                 unsigned flags, int reps, int r_c, int c_c, peer_result *res);
/* max relative difference per entry (common/bench_util.h) of sbm's C (c_host, on the host)
 * against the peer's; -1 when either is missing. */
double peer_diff(sbm_ctx *host, const peer_result *p, const sbm_cbc *c_host);
void peer_result_free(peer_result *p);

#endif /* SBM_BENCH_PEER_CSPARSE_H */
