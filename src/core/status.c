/* SPDX-License-Identifier: BSD-3-Clause */
/* Status names and the per-context error message. */
#include "sbm_internal.h"

#include <stdio.h>
#include <string.h>

const char *sbm_status_name(sbm_status status)
{
    switch (status) {
#define SBM_X_(name, value, desc) \
    case name: return #name;
        SBM_STATUS_LIST(SBM_X_)
#undef SBM_X_
    }
    return "SBM_UNKNOWN_STATUS";
}

const char *sbm_status_description(sbm_status status)
{
    switch (status) {
#define SBM_X_(name, value, desc) \
    case name: return desc;
        SBM_STATUS_LIST(SBM_X_)
#undef SBM_X_
    }
    return "unknown status code";
}

/* A failed sbm_ctx_create has no context to hold its message: keep it per thread. */
static _Thread_local char sbm__create_message[SBM__MSG_SIZE];

sbm_status sbm__verror(sbm_ctx *ctx, sbm_status status, const char *fmt, va_list ap)
{
    char *buf = ctx ? ctx->message : sbm__create_message;
    /* Without a context the only reporter is sbm_ctx_create. */
    const char *fn = ctx ? (ctx->fn ? ctx->fn : "sbm") : "sbm_ctx_create";
    int n = snprintf(buf, SBM__MSG_SIZE, "%s: ", fn);
    if (n < 0 || n >= SBM__MSG_SIZE) n = 0;
    /* the nested public calls in progress, outermost first, so the user's call leads */
    const int depth = ctx ? (ctx->depth < SBM__NEST_MAX ? ctx->depth : SBM__NEST_MAX) : 0;
    for (int d = 0; d < depth; d++) {
        if (!ctx->nest_fn[d]) continue;
        const int k = snprintf(buf + n, (size_t)(SBM__MSG_SIZE - n), "%s: ", ctx->nest_fn[d]);
        if (k > 0 && n + k < SBM__MSG_SIZE / 2) n += k;
    }
    vsnprintf(buf + n, (size_t)(SBM__MSG_SIZE - n), fmt, ap);
    if (ctx) ctx->last_status = status;
    return status;
}

sbm_status sbm__error(sbm_ctx *ctx, sbm_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sbm__verror(ctx, status, fmt, ap);
    va_end(ap);
    return status;
}

/* Used by SBM__ENTER when ctx is NULL: the message goes to the per-thread buffer. */
sbm_status sbm__null_ctx_error(const char *fn)
{
    snprintf(sbm__create_message, SBM__MSG_SIZE, "%s: argument ctx is NULL", fn);
    return SBM_ERR_NULL_ARGUMENT;
}

sbm_status sbm__fn_error(const char *fn, sbm_status status, const char *fmt, ...)
{
    int n = snprintf(sbm__create_message, SBM__MSG_SIZE, "%s: ", fn);
    if (n < 0 || n >= SBM__MSG_SIZE) n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sbm__create_message + n, (size_t)(SBM__MSG_SIZE - n), fmt, ap);
    va_end(ap);
    return status;
}

const char *sbm_ctx_last_error(const sbm_ctx *ctx)
{
    return ctx ? ctx->message : sbm__create_message;
}

sbm_status sbm_ctx_last_status(const sbm_ctx *ctx)
{
    return ctx ? ctx->last_status : SBM_ERR_NULL_ARGUMENT;
}

void sbm_ctx_clear_error(sbm_ctx *ctx)
{
    if (!ctx) return;
    ctx->message[0] = '\0';
    ctx->last_status = SBM_SUCCESS;
}

#define SBM__STR2(x) #x
#define SBM__STR(x) SBM__STR2(x)
const char *sbm_version(void)
{
    return SBM__STR(SBM_VERSION_MAJOR) "." SBM__STR(SBM_VERSION_MINOR) "." SBM__STR(SBM_VERSION_PATCH);
}

/* Names of the core enums (sbm.h), for messages and programs that print their settings. */
const char *sbm_backend_name(sbm_backend backend)
{
    switch (backend) {
    case SBM_BACKEND_CPU: return "cpu";
    case SBM_BACKEND_CUDA: return "cuda";
    }
    return "unknown backend";
}

const char *sbm_layout_name(sbm_layout layout)
{
    switch (layout) {
    case SBM_LAYOUT_ROW_MAJOR: return "row-major";
    case SBM_LAYOUT_COL_MAJOR: return "column-major";
    }
    return "unknown layout";
}

const char *sbm_op_name(sbm_op op)
{
    switch (op) {
    case SBM_OP_N: return "N";
    case SBM_OP_T: return "T";
    }
    return "unknown op";
}

const char *sbm_side_name(sbm_side side)
{
    switch (side) {
    case SBM_SIDE_LEFT: return "left";
    case SBM_SIDE_RIGHT: return "right";
    }
    return "unknown side";
}
