/* SPDX-License-Identifier: BSD-3-Clause */
/* The block SpGEMM over a group (sbm_cbc_gemm_dist): op(B) cut into contiguous ranges of block
 * columns of about equal block counts, one per rank; every rank holds A whole, its columns of
 * op(B) (and of U) inside a matrix of the full shape whose other columns are empty, and computes
 * C's columns of its range with the one-context SpGEMM. A column of C depends only on that
 * column of op(B) (and of U), and the global column numbers are kept (SBM_GEMM_UPPER keeps
 * rows <= column as on one context), so every column is the one-context product's, bitwise on
 * the same backend. The parts are then gathered into one matrix, or left with the ranks. */
#include "dist_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Host copies of a matrix's arrays (a CPU copy of it). */
static sbm_status host_copy(sbm_ctx *host, const sbm_cbc *M, sbm_cbc **out)
{
    *out = NULL;
    if (!M) return SBM_SUCCESS;
    return SBM__NESTED(host, sbm_cbc_copy(host, M, out));
}

/* The columns [c0, c1) of op(M) in a matrix of M's shape on ctx, every other entry dropped:
 * with op N the block columns of M, with op T its block rows. */
static sbm_status slice(sbm_ctx *ctx, const sbm_cbc *M, sbm_op op, int64_t c0, int64_t c1,
                        sbm_cbc **out)
{
    const size_t bs = (size_t)M->r * (size_t)M->c;
    int64_t *cp = malloc((size_t)(M->nbc + 1) * sizeof(int64_t));
    int32_t *ri = malloc((size_t)(M->nnzb + 1) * sizeof(int32_t));
    double *v = malloc((M->nnzb * bs + 1) * sizeof(double));
    if (!cp || !ri || !v) {
        free(cp), free(ri), free(v);
        return sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "out of host memory for a slice");
    }
    int64_t n = 0;
    cp[0] = 0;
    for (int64_t j = 0; j < M->nbc; j++) {
        for (int64_t k = M->colptr[j]; k < M->colptr[j + 1]; k++) {
            const int64_t key = op == SBM_OP_N ? j : M->rowind[k];
            if (key < c0 || key >= c1) continue;
            ri[n] = M->rowind[k];
            memcpy(v + (size_t)n * bs, M->values + (size_t)k * bs, bs * sizeof(double));
            n++;
        }
        cp[j + 1] = n;
    }
    const sbm_status st = SBM__NESTED(ctx, sbm_cbc_create(ctx, out, M->nbr, M->nbc, M->r, M->c, cp, ri, v));
    free(cp), free(ri), free(v);
    return st;
}

/* The ranges: cut[r] .. cut[r+1] for rank r, about equal block counts of op(B)'s columns. */
static sbm_status ranges(sbm_ctx *ctx, const sbm_cbc *B, sbm_op op, int P, int64_t *cut)
{
    const int64_t ncol = op == SBM_OP_N ? B->nbc : B->nbr;
    int64_t *cnt = calloc((size_t)ncol + 1, sizeof(int64_t));
    if (!cnt) return sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "out of host memory");
    for (int64_t j = 0; j < B->nbc; j++)
        for (int64_t k = B->colptr[j]; k < B->colptr[j + 1]; k++) cnt[op == SBM_OP_N ? j : B->rowind[k]]++;
    const int64_t total = B->nnzb;
    int64_t acc = 0, j = 0;
    cut[0] = 0;
    for (int r = 1; r < P; r++) {
        /* the first column at which the blocks so far reach r/P of them */
        while (j < ncol && (acc + cnt[j]) * P <= total * r) acc += cnt[j++];
        cut[r] = j;
    }
    cut[P] = ncol;
    free(cnt);
    return SBM_SUCCESS;
}

/* C's columns [c0, c1) of every part (host copies, in rank order) into one matrix on ctx. */
static sbm_status gather(sbm_ctx *ctx, sbm_cbc *const *hp, const int64_t *cut, int P,
                         sbm_cbc **C)
{
    const sbm_cbc *f = hp[0];
    const size_t bs = (size_t)f->r * (size_t)f->c;
    int64_t nnzb = 0;
    for (int r = 0; r < P; r++) nnzb += hp[r]->colptr[cut[r + 1]] - hp[r]->colptr[cut[r]];
    int64_t *cp = malloc((size_t)(f->nbc + 1) * sizeof(int64_t));
    int32_t *ri = malloc((size_t)(nnzb + 1) * sizeof(int32_t));
    double *v = malloc((nnzb * bs + 1) * sizeof(double));
    if (!cp || !ri || !v) {
        free(cp), free(ri), free(v);
        return sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "out of host memory for the gathered C");
    }
    int64_t n = 0;
    cp[0] = 0;
    for (int r = 0; r < P; r++) {
        const sbm_cbc *h = hp[r];
        for (int64_t j = cut[r]; j < cut[r + 1]; j++) {
            const int64_t b = h->colptr[j], e = h->colptr[j + 1];
            memcpy(ri + n, h->rowind + b, (size_t)(e - b) * sizeof(int32_t));
            memcpy(v + (size_t)n * bs, h->values + (size_t)b * bs, (size_t)(e - b) * bs * sizeof(double));
            n += e - b;
            cp[j + 1] = n;
        }
    }
    const sbm_status st = SBM__NESTED(ctx, sbm_cbc_create(ctx, C, f->nbr, f->nbc, f->r, f->c, cp, ri, v));
    free(cp), free(ri), free(v);
    return st;
}

/* A failure in context c (local rank l's, or the host copy's) reported in ctx. */
static sbm_status moved(sbm_ctx *ctx, sbm_ctx *c, int rank, sbm_status st)
{
    if (c == ctx) return st;
    char msg[SBM__MSG_SIZE];
    const char *m = sbm_ctx_last_error(c), *colon = strstr(m, ": ");
    snprintf(msg, sizeof msg, "%s", colon ? colon + 2 : m);
    return rank >= 0 ? sbm__error(ctx, st, "rank %d: %s", rank, msg) : sbm__error(ctx, st, "%s", msg);
}

/* Every local rank's part: A whole, its slices of op(B) and U, the one-context SpGEMM. */
static sbm_status compute_parts(sbm_group *g, sbm_ctx *ctx, const int64_t *cut, double alpha,
                                sbm_op op_a, const sbm_cbc *Ah, sbm_op op_b, const sbm_cbc *Bh,
                                const sbm_cbc *Uh, unsigned flags, sbm_cbc **part)
{
    for (int l = 0; l < sbm_group_local_size(g); l++) {
        sbm_ctx *c = sbm_group_context(g, l);
        const int r = sbm_group_rank(g, l);
        sbm_cbc *Al = NULL, *Bl = NULL, *Ul = NULL;
        c->fn = "sbm_cbc_gemm_dist";
        sbm_status st = SBM__NESTED(c, sbm_cbc_copy(c, Ah, &Al));
        if (st == SBM_SUCCESS) st = slice(c, Bh, op_b, cut[r], cut[r + 1], &Bl);
        if (st == SBM_SUCCESS && Uh) st = slice(c, Uh, SBM_OP_N, cut[r], cut[r + 1], &Ul);
        if (st == SBM_SUCCESS)
            st = SBM__NESTED(c, sbm_cbc_gemm(c, alpha, op_a, Al, op_b, Bl, Ul, flags, &part[l]));
        sbm_cbc_destroy(Al), sbm_cbc_destroy(Bl), sbm_cbc_destroy(Ul);
        if (st != SBM_SUCCESS) return moved(ctx, c, r, st);
    }
    return SBM_SUCCESS;
}

sbm_status sbm_cbc_gemm_dist(sbm_group *g, double alpha, sbm_op op_a, const sbm_cbc *A,
                             sbm_op op_b, const sbm_cbc *B, const sbm_cbc *U, unsigned flags,
                             sbm_ctx *ctx, sbm_cbc **C, sbm_cbc **parts)
{
    SBM__ENTER(ctx, "sbm_cbc_gemm_dist");
    if (C) *C = NULL;
    const int nl = sbm_group_local_size(g);
    for (int l = 0; parts && l < nl; l++) parts[l] = NULL;
    if (!g) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument group is NULL");
    if (!C && !parts)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT,
                          "arguments C and parts are both NULL (ask for the gathered product, "
                          "the ranks' parts, or both)");
    SBM__TRY(sbm__check_cbc_arg(ctx, "A", A));
    SBM__TRY(sbm__check_cbc_arg(ctx, "B", B));
    if (U) SBM__TRY(sbm__check_cbc_arg(ctx, "U", U));
    if (op_b != SBM_OP_N && op_b != SBM_OP_T)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT, "argument op_b = %d is not SBM_OP_N or "
                                                         "SBM_OP_T", (int)op_b);
    const int P = sbm_group_size(g);
    if (C && nl < P)
        return sbm__error(ctx, SBM_ERR_NOT_SUPPORTED,
                          "argument C: this process drives %d of the group's %d ranks, so it "
                          "cannot gather C (ask for parts, one per local rank)", nl, P);
    sbm_ctx *host = NULL;
    if (sbm_ctx_create(&host, SBM_BACKEND_CPU, 0) != SBM_SUCCESS)
        return sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "%s", sbm_ctx_last_error(NULL));
    host->fn = "sbm_cbc_gemm_dist";
    sbm_cbc *Ah = NULL, *Bh = NULL, *Uh = NULL;
    sbm_cbc **part = calloc((size_t)nl, sizeof *part), **hp = calloc((size_t)nl, sizeof *hp);
    int64_t *cut = malloc((size_t)(P + 1) * sizeof(int64_t));
    sbm_status st = part && hp && cut ? SBM_SUCCESS
                                      : sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY, "out of host memory");
    if (st == SBM_SUCCESS && ((st = host_copy(host, A, &Ah)) != SBM_SUCCESS ||
                              (st = host_copy(host, B, &Bh)) != SBM_SUCCESS ||
                              (st = host_copy(host, U, &Uh)) != SBM_SUCCESS))
        st = moved(ctx, host, -1, st);
    if (st == SBM_SUCCESS) st = ranges(ctx, Bh, op_b, P, cut);
    if (st == SBM_SUCCESS)
        st = compute_parts(g, ctx, cut, alpha, op_a, Ah, op_b, Bh, Uh, flags, part);
    for (int l = 0; C && st == SBM_SUCCESS && l < nl; l++)
        if ((st = SBM__NESTED(host, sbm_cbc_copy(host, part[l], &hp[l]))) != SBM_SUCCESS)
            st = moved(ctx, host, -1, st);
    if (C && st == SBM_SUCCESS) st = gather(ctx, hp, cut, P, C);
    for (int l = 0; l < nl; l++) {
        if (hp) sbm_cbc_destroy(hp[l]);
        if (part && parts && st == SBM_SUCCESS) parts[l] = part[l];
        else if (part) sbm_cbc_destroy(part[l]);
    }
    free(part), free(hp), free(cut);
    sbm_cbc_destroy(Ah), sbm_cbc_destroy(Bh), sbm_cbc_destroy(Uh);
    sbm_ctx_destroy(host);
    return st;
}
