/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench's declarations: the generated case and sbm's result of one case and backend (the
 * CSparse peer's is in peers/peer_csparse.h; both are timed with bench_now_s). */
#ifndef SBM_BENCH_SPGEMM_H
#define SBM_BENCH_SPGEMM_H

#include <stddef.h>
#include <stdint.h>

#include "common/bench_util.h"
#include "sbm.h"

typedef enum family { POISSON2D, POISSON3D, BA, RANDOM } family;

typedef struct case_spec {
    char name[48];
    family fam;
    int r, k, c;            /* block shape triple of the product */
    int64_t g;              /* grid size (Poisson) */
    int64_t cameras, points; /* BA */
    int obs;                /* BA observations per point */
    int64_t nb;             /* random: block rows = inner = block columns */
    int per_col;            /* random: blocks per column */
} case_spec;

/* A generated case: the operands on the host, as the product sees them. */
typedef struct bench_case {
    const case_spec *spec;
    sbm_op op_a, op_b;
    unsigned flags;
    sbm_cbc *A, *B;
} bench_case;

typedef struct sbm_result {
    int ok;              /* 1 measured; 0 failed or not available (note says why) */
    sbm_status status;   /* why not */
    char note[160];
    double plan_ms;      /* median */
    double exec_ms;      /* median */
    double oneshot_ms;   /* median of sbm_cbc_gemm */
    bench_stat plan, exec, oneshot; /* the same with min and max */
    int oneshot_same;    /* 1 if sbm_cbc_gemm gave bitwise the C of plan + execute */
    int64_t products;
    int64_t nnzb_c;
    int64_t slices;
    int fast_path;
    int64_t rows_c, cols_c;
    int rc_, cc_;        /* block shape of C */
    double flops;        /* 2*r*k*c*products */
    sbm_cbc *c_host;     /* C on the host, for the check against the peer (sbm_result_free) */
} sbm_result;

#endif /* SBM_BENCH_SPGEMM_H */
