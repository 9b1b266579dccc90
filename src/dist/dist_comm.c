/* SPDX-License-Identifier: BSD-3-Clause */
/* The communicator's host stand-in and the groups of contexts (sbm_dist.h).
 *
 * The host stand-in runs every rank in this process over CPU contexts: an exchange is one
 * memcpy per pair of ranks, a reduction the op applied in rank order. It is deterministic and
 * is what CI tests the distributed algorithms with; the NCCL communicator
 * (kernels/cuda/dist/cuda_nccl.cu) implements the same interface on GPUs. */
#include "dist_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROUP_MAX 1024

struct sbm_group {
    int size;
    int nlocal;
    sbm_ctx **ctx;  /* nlocal contexts, made by the group */
    sbm__comm *comm;
};

/* ---------------------------------------------------------------------------------------- */
/* The host stand-in                                                                        */
/* ---------------------------------------------------------------------------------------- */

static sbm_status host_reduce(sbm__comm *c, const double *in, double *out, int n,
                              sbm__reduce_op op)
{
    for (int i = 0; i < n; i++) {
        double v = in[i];
        for (int l = 1; l < c->nlocal; l++) {
            const double x = in[(size_t)l * n + i];
            v = op == SBM__REDUCE_SUM ? v + x : (x > v || isnan(x) ? x : v);
        }
        out[i] = v;
    }
    /* a ring reduction would send 2 (P-1)/P n doubles per rank; the stand-in counts what an
     * all-gather of the n values sends: (P-1) n per rank */
    c->bytes_sent += 8.0 * n * (double)c->nlocal * (c->nlocal - 1);
    return SBM_SUCCESS;
}

static sbm_status host_exchange(sbm__comm *c, const sbm__xchg *x, double *const *send,
                                double *const *recv)
{
    for (int l = 0; l < c->nlocal; l++)
        for (int p = 0; p < c->size; p++) {
            if (p == l || x[l].count[p] == 0) continue;
            /* p's segment for l and l's for p have the same length (the shared points) */
            memcpy(recv[l] + x[l].off[p], send[p] + x[p].off[l],
                   (size_t)x[l].count[p] * sizeof(double));
            c->bytes_sent += 8.0 * (double)x[l].count[p];
        }
    return SBM_SUCCESS;
}

static sbm_status host_barrier(sbm__comm *c)
{
    (void)c;
    return SBM_SUCCESS;
}

static void host_destroy(sbm__comm *c) { (void)c; }

static const sbm__comm_ops host_ops = {"host", host_reduce, host_exchange, host_barrier,
                                       host_destroy};

static sbm_status comm_alloc(sbm_ctx *const *ctxs, int size, int nlocal, sbm__comm **comm)
{
    sbm__comm *c = calloc(1, sizeof *c);
    if (c) c->rank = calloc((size_t)nlocal, sizeof(int));
    if (c && c->rank) c->ctx = calloc((size_t)nlocal, sizeof(sbm_ctx *));
    if (!c || !c->rank || !c->ctx) {
        sbm__comm_destroy(c);
        return sbm__error(ctxs[0], SBM_ERR_OUT_OF_MEMORY,
                          "out of host memory for the communicator of %d ranks", size);
    }
    c->size = size, c->nlocal = nlocal;
    for (int l = 0; l < nlocal; l++) c->rank[l] = l, c->ctx[l] = ctxs[l];
    *comm = c;
    return SBM_SUCCESS;
}

sbm_status sbm__comm_host_create(sbm_ctx *const *ctxs, int size, sbm__comm **comm)
{
    SBM__TRY(comm_alloc(ctxs, size, size, comm));
    (*comm)->ops = &host_ops;
    return SBM_SUCCESS;
}

void sbm__comm_destroy(sbm__comm *c)
{
    if (!c) return;
    if (c->ops) c->ops->destroy(c);
    free(c->rank);
    free(c->ctx);
    free(c);
}

#if !defined(SBM_HAVE_NCCL)
sbm_status sbm__comm_nccl_create(sbm_ctx *const *ctxs, int nlocal, void *nccl_comm,
                                 sbm__comm **comm)
{
    (void)nlocal, (void)nccl_comm, (void)comm;
    return sbm__error(ctxs[0], SBM_ERR_NOT_SUPPORTED,
                      "this build has no NCCL (configure with -DSBM_NCCL=ON and NCCL installed)");
}
#endif

/* ---------------------------------------------------------------------------------------- */
/* Groups                                                                                   */
/* ---------------------------------------------------------------------------------------- */

void sbm_group_destroy(sbm_group *g)
{
    if (!g) return;
    sbm__comm_destroy(g->comm);
    for (int l = 0; l < g->nlocal && g->ctx; l++) sbm_ctx_destroy(g->ctx[l]);
    free(g->ctx);
    free(g);
}

/* A group of nlocal contexts of backend on devices[l] (NULL: l), its communicator not yet
 * made. */
static sbm_status group_new(const char *fn, sbm_backend backend, int size, int nlocal,
                            const int *devices, sbm_group **out)
{
    sbm_group *g = calloc(1, sizeof *g);
    if (g) g->ctx = calloc((size_t)nlocal, sizeof(sbm_ctx *));
    if (!g || !g->ctx) {
        free(g);
        return sbm__fn_error(fn, SBM_ERR_OUT_OF_MEMORY, "out of host memory for a group of %d",
                             size);
    }
    g->size = size, g->nlocal = nlocal;
    for (int l = 0; l < nlocal; l++) {
        const int dev = devices ? devices[l] : l;
        const sbm_status st = sbm_ctx_create(&g->ctx[l], backend, dev);
        if (st != SBM_SUCCESS) {
            char msg[SBM__MSG_SIZE];
            snprintf(msg, sizeof msg, "%s", sbm_ctx_last_error(NULL));
            sbm_group_destroy(g);
            return sbm__fn_error(fn, st, "rank %d (device %d): %s", l, dev, msg);
        }
    }
    *out = g;
    return SBM_SUCCESS;
}

/* The group's communicator failed: its message (in local rank 0's context) moves to the
 * per-thread buffer, the group goes. */
static sbm_status group_fail(const char *fn, sbm_group *g, sbm_status st)
{
    char msg[SBM__MSG_SIZE];
    const char *m = sbm_ctx_last_error(g->ctx[0]);
    const char *colon = strstr(m, ": ");
    snprintf(msg, sizeof msg, "%s", colon ? colon + 2 : m);
    sbm_group_destroy(g);
    return sbm__fn_error(fn, st, "%s", msg);
}

sbm_status sbm_group_create_cpu(int size, sbm_group **group)
{
    static const char fn[] = "sbm_group_create_cpu";
    if (!group) return sbm__fn_error(fn, SBM_ERR_NULL_ARGUMENT, "argument group is NULL");
    *group = NULL;
    if (size < 1 || size > GROUP_MAX)
        return sbm__fn_error(fn, SBM_ERR_INVALID_ARGUMENT, "argument size = %d is not 1 to %d",
                             size, GROUP_MAX);
    sbm_group *g = NULL;
    SBM__TRY(group_new(fn, SBM_BACKEND_CPU, size, size, NULL, &g));
    g->ctx[0]->fn = fn;
    const sbm_status st = sbm__comm_host_create(g->ctx, size, &g->comm);
    if (st != SBM_SUCCESS) return group_fail(fn, g, st);
    *group = g;
    return SBM_SUCCESS;
}

sbm_status sbm_group_create_gpus(int size, const int *devices, sbm_group **group)
{
    static const char fn[] = "sbm_group_create_gpus";
    if (!group) return sbm__fn_error(fn, SBM_ERR_NULL_ARGUMENT, "argument group is NULL");
    *group = NULL;
    if (size < 1 || size > GROUP_MAX)
        return sbm__fn_error(fn, SBM_ERR_INVALID_ARGUMENT, "argument size = %d is not 1 to %d",
                             size, GROUP_MAX);
    for (int a = 0; devices && a < size; a++)
        for (int b = 0; b < a; b++)
            if (devices[a] == devices[b])
                return sbm__fn_error(fn, SBM_ERR_INVALID_ARGUMENT,
                                     "argument devices: device %d is listed twice (entries %d "
                                     "and %d)", devices[a], b, a);
#if !defined(SBM_HAVE_NCCL)
    return sbm__fn_error(fn, SBM_ERR_NOT_SUPPORTED,
                         "this build has no NCCL (configure with -DSBM_NCCL=ON and NCCL "
                         "installed)");
#else
    sbm_group *g = NULL;
    SBM__TRY(group_new(fn, SBM_BACKEND_CUDA, size, size, devices, &g));
    g->ctx[0]->fn = fn;
    const sbm_status st = sbm__comm_nccl_create(g->ctx, size, NULL, &g->comm);
    if (st != SBM_SUCCESS) return group_fail(fn, g, st);
    *group = g;
    return SBM_SUCCESS;
#endif
}

sbm_status sbm_group_create_nccl(void *nccl_comm, int device, sbm_group **group)
{
    static const char fn[] = "sbm_group_create_nccl";
    if (!group) return sbm__fn_error(fn, SBM_ERR_NULL_ARGUMENT, "argument group is NULL");
    *group = NULL;
    if (!nccl_comm) return sbm__fn_error(fn, SBM_ERR_NULL_ARGUMENT, "argument nccl_comm is NULL");
#if !defined(SBM_HAVE_NCCL)
    (void)device;
    return sbm__fn_error(fn, SBM_ERR_NOT_SUPPORTED,
                         "this build has no NCCL (configure with -DSBM_NCCL=ON and NCCL "
                         "installed)");
#else
    sbm_group *g = NULL;
    SBM__TRY(group_new(fn, SBM_BACKEND_CUDA, 1, 1, &device, &g));
    g->ctx[0]->fn = fn;
    const sbm_status st = sbm__comm_nccl_create(g->ctx, 1, nccl_comm, &g->comm);
    if (st != SBM_SUCCESS) return group_fail(fn, g, st);
    g->size = g->comm->size;
    *group = g;
    return SBM_SUCCESS;
#endif
}

int sbm_group_size(const sbm_group *g) { return g ? g->size : 0; }

int sbm_group_local_size(const sbm_group *g) { return g ? g->nlocal : 0; }

sbm_ctx *sbm_group_context(const sbm_group *g, int l)
{
    return g && l >= 0 && l < g->nlocal ? g->ctx[l] : NULL;
}

int sbm_group_rank(const sbm_group *g, int l)
{
    return g && l >= 0 && l < g->nlocal ? g->comm->rank[l] : -1;
}

/* The communicator of a group (dist_lm.c). */
sbm__comm *sbm__group_comm(sbm_group *g) { return g->comm; }
