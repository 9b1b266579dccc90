/* SPDX-License-Identifier: BSD-3-Clause */
/* sbm-bench-chol's peer: CHOLMOD's supernodal Cholesky on the scalar CSC of the same upper
 * triangle (peer_cholmod.c), timed and checked by the rules of common/chol_run.h. */
#ifndef SBM_BENCH_PEER_CHOLMOD_H
#define SBM_BENCH_PEER_CHOLMOD_H

#include "common/chol_inputs.h"
#include "common/chol_run.h"

/* CHOLMOD's supernodal factorisation of m (AMD ordering only, postordered), each phase timed
 * as chol_timing says. Without CHOLMOD: a result that says so (ok = 0). */
void run_cholmod(const chol_matrix *m, int reps, double budget, chol_run *r);
/* "CHOLMOD x.y.z (supernodal, AMD)" or "CHOLMOD: skipped (...)". */
const char *cholmod_describe(void);
/* 1 when the bench was built with CHOLMOD. */
int cholmod_available(void);

#endif /* SBM_BENCH_PEER_CHOLMOD_H */
