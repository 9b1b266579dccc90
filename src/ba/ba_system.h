/* SPDX-License-Identifier: BSD-3-Clause */
/* The BA system's fields, shared by ba.c (creation, linearisation, damping, the device-resident
 * contract of ba_internal.h) and ba_views.c (the host views of the solver). */
#ifndef SBM_BA_SYSTEM_H
#define SBM_BA_SYSTEM_H

#include "ba_internal.h"

/* Host copies of the system's values, made on demand for the host views (ba_views.c) on a
 * device backend; on the CPU backend they are the system's own arrays. */
typedef struct sbm__ba_mirror {
    double *U, *V, *W, *g; /* undamped U (81*nc), V (9*np), W (27*nnzb), [gc; gp] */
    unsigned current;      /* bits of the arrays holding the last linearisation (ba_views.c) */
    int owned;             /* 1: malloc'd copies (device backends); 0: the system's arrays */
} sbm__ba_mirror;

struct sbm_ba_system {
    int64_t nc;            /* cameras */
    int64_t np;            /* points */
    int64_t nobs;          /* observations */
    int64_t nnzb;          /* blocks of W */
    sbm_ctx *ctx;          /* the context it was made in (host views download through it) */
    sbm_cbc *U;            /* nc x nc blocks of 9x9, block diagonal, damped (context memory) */
    sbm_cbc *V;            /* np x np blocks of 3x3, block diagonal, damped */
    sbm_cbc *W;            /* nc x np blocks of 9x3 */
    double *U_und;         /* context memory: undamped U values (81*nc) */
    double *V_und;         /* undamped V values (9*np) */
    double *g;             /* [gc; gp] = -J'^T r' (nparams); gc = g, gp = g + 9*nc */
    double *D;             /* damping scale of every parameter (nparams) */
    double *params;        /* the parameters sbm_ba_linearize uploads (nparams) */
    void *model_mem;       /* context memory holding the model's arrays and scratch */
    void *hold_mem;        /* context memory: constant flags and priors (NULL: none) */
    sbm__ba_model model;   /* the observations in context memory (ba_kernels.h) */
    int32_t *obs_block;    /* host: W block of each observation */
    int64_t *w_colptr;     /* host pattern of W */
    int32_t *w_rowind;
    sbm__ba_mirror *mirror; /* host copies for the host views (device backends) */
    sbm_loss loss;         /* of the linearisations and costs */
    double cost;           /* at the linearisation point, with the loss */
    double gmax;           /* max |g| of the last linearisation */
    double lambda;         /* current damping */
    int valid;             /* 0 after a linearisation that failed half-way */
    sbm_allocator host_a;  /* allocator of the host arrays and the struct */
    sbm_allocator dev_a;   /* allocator of the context-memory arrays */
};

#endif /* SBM_BA_SYSTEM_H */
