/* SPDX-License-Identifier: BSD-3-Clause */
/* Errors: messages, entry points of public calls, nested calls (src/core/status.c). */
#ifndef SBM_CORE_ERRORS_H
#define SBM_CORE_ERRORS_H

#include "core_objects.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------- */
/* Errors (src/core/status.c)                                                               */
/* ---------------------------------------------------------------------------------------- */

/* Record a failure: the message becomes "<ctx->fn>: <formatted text>", with the names of the
 * nested public calls in progress between them ("sbm_ba_solve: sbm_bdiag_inverse: ..."), so a
 * failure deep inside is reported under the call the user made. @return status. */
sbm_status sbm__error(sbm_ctx *ctx, sbm_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
sbm_status sbm__verror(sbm_ctx *ctx, sbm_status status, const char *fmt, va_list ap);

/* Every public entry point that takes a context starts with this. Outside a nested call it
 * names the call for messages; inside one (SBM__NESTED) the outer name stays and this one is
 * recorded at its depth. */
#define SBM__ENTER(ctx, name)                                              \
    do {                                                                   \
        if ((ctx) == NULL) return sbm__null_ctx_error(name);               \
        if ((ctx)->depth == 0)                                             \
            (ctx)->fn = (name);                                            \
        else if ((ctx)->depth <= SBM__NEST_MAX)                            \
            (ctx)->nest_fn[(ctx)->depth - 1] = (name);                     \
    } while (0)
sbm_status sbm__null_ctx_error(const char *fn);
/* A failure of a public call that has no context yet (sbm_group_create_*): the message
 * "<fn>: <formatted text>" goes where sbm_ctx_last_error(NULL) finds it. @return status. */
sbm_status sbm__fn_error(const char *fn, sbm_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A public function called from inside the library, where the operands need its checks:
 * `st = SBM__NESTED(ctx, sbm_cbc_spmv(ctx, ...));`. Messages keep the outer call's name and add
 * the nested one's (its SBM__ENTER records it). The comma operator sequences the depth change
 * around the call. */
#define SBM__NESTED(ctx, call) (sbm__nest_enter(ctx, NULL), sbm__nest_leave((ctx), (call)))
/* An internal entry point sbm__<op> called from inside the library: the public sbm_<op> less
 * its SBM__ENTER and the argument checks the caller's own operands make needless (each says
 * what it assumes). name is the public call's name, which messages carry as they would through
 * SBM__NESTED: `SBM__INNER(ctx, "sbm_chol_factor", sbm__chol_factor(ctx, ...))` fails with
 * "sbm_ba_solve: sbm_chol_factor: ...". */
#define SBM__INNER(ctx, name, call) (sbm__nest_enter(ctx, name), sbm__nest_leave((ctx), (call)))
static inline void sbm__nest_enter(sbm_ctx *ctx, const char *name)
{
    if (ctx->depth < SBM__NEST_MAX) ctx->nest_fn[ctx->depth] = name;
    ctx->depth++;
}
static inline sbm_status sbm__nest_leave(sbm_ctx *ctx, sbm_status st)
{
    ctx->depth--;
    return st;
}

/* Propagate a failure. */
#define SBM__TRY(expr)                                  \
    do {                                                \
        sbm_status sbm__st_ = (expr);                   \
        if (sbm__st_ != SBM_SUCCESS) return sbm__st_;   \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif /* SBM_CORE_ERRORS_H */
