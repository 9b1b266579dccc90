/* SPDX-License-Identifier: BSD-3-Clause */
/* The distributed BA solver's state and its phases (dist_ba.c), used by its Levenberg-Marquardt
 * and PCG (dist_lm.c). Every phase runs its local work on each local rank, then the
 * communicator's collective; reduced scalars are the same bits on every rank. */
#ifndef SBM_DIST_BA_H
#define SBM_DIST_BA_H

#include "dist_internal.h"

typedef struct dist_rank {
    sbm_ctx *ctx;
    sbm__dist_part part;
    sbm_bal_problem *lp;       /* the local problem (host) */
    sbm_ba_system *sys;
    sbm_schur_plan *plan;      /* matrix-free */
    sbm_cbc *Sdiag, *Dinv;     /* Schur-Jacobi blocks and their inverses */
    int64_t n, nall, nown;     /* 9 nc; 9 nc + 3 np; 9 nc + 3 np_owned (the owned prefix) */
    double *mem;               /* context memory holding the vectors below */
    double *x[2], *step, *rhs; /* parameters (current, trial), [dc; dp], the reduced rhs */
    double *r, *z, *p, *q;     /* PCG (n each) */
    double *send, *recv;       /* halo buffers: 9 doubles per halo entry */
    void *lists;               /* context memory: the halo lists below */
    int32_t *d_pack, *d_ent, *d_pt;
    int64_t *d_ptr;
    int64_t *xcount, *xoff;    /* host: the exchange's counts and offsets in doubles (size) */
} dist_rank;

typedef struct dist_state {
    sbm__comm *comm;
    int nl;                    /* local ranks */
    dist_rank *rk;             /* nl */
    const sbm_solver_options *opt;
    int cur;                   /* which x holds the current estimate */
    int stale;                 /* the parameters moved since the last linearisation */
    double cost, gmax;         /* of the last linearisation */
    sbm_dist_report rep;
    double pcg_bytes;          /* sent inside PCG iterations */
    sbm__forcing forcing;      /* PCG: the forcing rule's memory (opt->pcg_forcing), as ba_lm.c */
} dist_state;

/* The shares of the ranks, their systems, plans and vectors; the first linearisation at the
 * problem's parameters (s->cost, s->gmax). */
sbm_status sbm__dist_setup(dist_state *s, const sbm_bal_problem *problem,
                           sbm_partition_method method, double *t_lin);
void sbm__dist_free(dist_state *s);
/* Linearise every rank at its current parameters, sum the halo of V and gp, recompute the
 * points' damping scale; s->cost and s->gmax over the group. */
sbm_status sbm__dist_linearize(dist_state *s);
/* Damp, execute the Schur plans (rhs), the Schur-Jacobi blocks and their inverses: *failed when
 * a block of V or of S's diagonal is not positive definite on some rank. */
sbm_status sbm__dist_schur(dist_state *s, double lambda, int *failed);
/* q = S p on every rank (PCG's p and q), the halo of W^T p summed between ranks. */
sbm_status sbm__dist_apply(dist_state *s);
/* The reduction of nv values per local rank (in[l*nv + i]) into out (SUM or MAX). */
sbm_status sbm__dist_reduce(dist_state *s, const double *in, double *out, int nv,
                            sbm__reduce_op op);
/* The back-substitution dp, the trial parameters and the scalars of the step: |x|^2 and
 * |step|^2 over the owned entries, the cost at the trial and the predicted decrease. */
sbm_status sbm__dist_trial(dist_state *s, double lambda, double *x2, double *step2,
                           double *new_cost, double *predicted);
/* The local ranks' parameters into the global problem (cameras and the points they see). */
sbm_status sbm__dist_download(dist_state *s, sbm_bal_problem *problem);

#endif /* SBM_DIST_BA_H */
