/* Internal declarations of the bundle-adjustment layer (ba.c, ba_schur.c, ba_lm.c, bal_model.c). */
#ifndef SBM_BA_INTERNAL_H
#define SBM_BA_INTERNAL_H

#include "io_internal.h"
#include "sbm_ba.h"
#include "sbm_geometry.h"
#include "solve_internal.h"

/* ---------------------------------------------------------------------------------------- */
/* Host views of the BA system for the solver (ba.c)                                        */
/* ---------------------------------------------------------------------------------------- */

/* [gc; gp] of the last linearisation (host, 9*cameras + 3*points). */
const double *sbm__ba_system_host_gradient(const sbm_ba_system *s);
/* The damping scale of every unknown: diag(U), diag(V) clamped to [1e-6, 1e32]. */
void sbm__ba_damping_diagonal(const sbm_ba_system *s, double *out);
/* Blocks of S's upper triangle (the cameras, and every pair of cameras sharing a point), from
 * W's pattern without forming S, and W's blocks. */
sbm_status sbm__ba_schur_blocks(sbm_ctx *ctx, const sbm_ba_system *s, int64_t *blocks_S,
                                int64_t *blocks_W);
/* The first point whose damped 3x3 block of V is not SPD (host check), or -1. */
int64_t sbm__ba_npd_point(const sbm_ba_system *s);
/* Append printf-style text to the context's last message (what a nested failure means in BA
 * terms). */
void sbm__ba_append_message(sbm_ctx *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Block diagonal of S = U - W V^-1 W^T at the system's damping, host (nc blocks of 9x9). */
sbm_status sbm__ba_schur_diagonal_host(sbm_ctx *ctx, const sbm_ba_system *s, double *out);

#endif /* SBM_BA_INTERNAL_H */
