/* SPDX-License-Identifier: BSD-3-Clause */
/* Marquardt's damping of a diagonal entry d: d + lambda * min(max(d, 1e-6), 1e32), the rule of
 * SBM_DAMPING_DIAGONAL (sbm_solve.h). One definition for every place that damps: the sparse
 * Cholesky's kernels, the BA linearisation and damping kernels, the SLAM damping scale, and the
 * host checks of src/ba. The clamp keeps a zero or negative diagonal from switching the damping
 * off and an overflowing one from making it infinite. Host+device inline; the expressions are
 * the ones every caller wrote before, in the same order, so the results are bitwise the same. */
#ifndef SBM_DAMP_H
#define SBM_DAMP_H

#include "sbm_blocks.h"

#define SBM_BLK_DAMP_MIN 1e-6 /* the damping scale's lower clamp */
#define SBM_BLK_DAMP_MAX 1e32 /* its upper clamp */

/* @return the damping scale of a diagonal entry d: d clamped to [SBM_BLK_DAMP_MIN,
 * SBM_BLK_DAMP_MAX] (a NaN d gives SBM_BLK_DAMP_MIN: fmax returns the number). */
SBM_BLK_INLINE double sbm_blk_damp_scale(double d)
{
    return fmin(fmax(d, SBM_BLK_DAMP_MIN), SBM_BLK_DAMP_MAX);
}

/* @return d damped by lambda: d + lambda * sbm_blk_damp_scale(d). */
SBM_BLK_INLINE double sbm_blk_marquardt(double d, double lambda)
{
    return d + lambda * sbm_blk_damp_scale(d);
}

#endif /* SBM_DAMP_H */
