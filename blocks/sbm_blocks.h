/* SPDX-License-Identifier: BSD-3-Clause */
/* Fixed-size dense block routines shared by the C (CPU) and CUDA backends, and the one list of
 * block shapes that have compiled fast paths.
 *
 * Blocks are column-major: element (i, j) of an r x c block is at b[i + j*r]. Every routine is
 * host+device inline; called with compile-time sizes, the compiler unrolls it completely. */
#ifndef SBM_BLOCKS_H
#define SBM_BLOCKS_H

#include <math.h>

#if defined(__CUDACC__)
#define SBM_BLK_INLINE __host__ __device__ __forceinline__
#else
#define SBM_BLK_INLINE static inline
#endif

/* Outputs of the accumulating routines never overlap their inputs; saying so lets the compiler keep
 * blocks in registers (faster fixed-size products on the CPU;
 * see docs/DESIGN-NOTES.md, "Measurements behind code choices"). */
#if defined(__CUDACC__) || defined(__GNUC__) || defined(__clang__)
#define SBM_BLK_RESTRICT __restrict__
#elif defined(_MSC_VER)
#define SBM_BLK_RESTRICT __restrict
#else
#define SBM_BLK_RESTRICT
#endif

/* Block shapes (rows, cols) with fast paths: square 1..9 and the BA/SLAM shapes. */
#define SBM_BLOCK_SHAPES(X)                                                                   \
    X(1, 1) X(2, 2) X(3, 3) X(4, 4) X(5, 5) X(6, 6) X(7, 7) X(8, 8) X(9, 9)                 \
    X(6, 3) X(9, 3) X(3, 6) X(3, 9)

/* Block-product triples (r, k, c): an r x k block times a k x c block, for every pair of shapes
 * above that can be multiplied. One list: the CPU dispatch and the CUDA template instantiations
 * are both generated from it. */
#define SBM_GEMM_TRIPLES(X)                                                                   \
    X(1, 1, 1) X(2, 2, 2) X(3, 3, 3) X(4, 4, 4) X(5, 5, 5) X(6, 6, 6) X(7, 7, 7) X(8, 8, 8)   \
    X(9, 9, 9)                                                                                \
    X(6, 3, 3) X(9, 3, 3) X(6, 3, 6) X(6, 3, 9) X(9, 3, 6) X(9, 3, 9)                         \
    X(3, 3, 6) X(3, 3, 9) X(6, 6, 3) X(9, 9, 3)                                               \
    X(3, 6, 3) X(3, 9, 3) X(3, 6, 6) X(3, 9, 9)

/* The one selector over each list: a backend keeps its fast paths in a table generated from the
 * same list, in the same order, and indexes it with these. @return the position of (r, k, c) in
 * SBM_GEMM_TRIPLES, or -1 (no fast path: the run-time-size code). */
SBM_BLK_INLINE int sbm_blk_triple_index(int r, int k, int c)
{
    int t = 0;
#define SBM_BLK_X_(R, K, C) if (r == (R) && k == (K) && c == (C)) return t; t++;
    SBM_GEMM_TRIPLES(SBM_BLK_X_)
#undef SBM_BLK_X_
    return -1;
}

/* @return the position of (r, c) in SBM_BLOCK_SHAPES, or -1. */
SBM_BLK_INLINE int sbm_blk_shape_index(int r, int c)
{
    int t = 0;
#define SBM_BLK_X_(R, C) if (r == (R) && c == (C)) return t; t++;
    SBM_BLOCK_SHAPES(SBM_BLK_X_)
#undef SBM_BLK_X_
    return -1;
}

/* @return 1 if (r, k, c) is in SBM_GEMM_TRIPLES. */
SBM_BLK_INLINE int sbm_blk_is_fast_triple(int r, int k, int c)
{
    return sbm_blk_triple_index(r, k, c) >= 0;
}

/* @return 1 if (r, c) is in SBM_BLOCK_SHAPES. */
SBM_BLK_INLINE int sbm_blk_is_fast_shape(int r, int c) { return sbm_blk_shape_index(r, c) >= 0; }

#if defined(__cplusplus)
/* The one selector over the lists above, for the C++ (CUDA) kernels, after CUB's dispatch layer
 * and Ginkgo's instantiation lists: sbm_blk_select_shape(r, c, f) calls f(sbm_blk_shape<R, C>())
 * for the listed shape (R, C) equal to (r, c), and f(sbm_blk_shape<0, 0>()) -- the runtime-size
 * instantiation -- for any other; sbm_blk_select_triple(r, k, c, f) the same over the triples.
 * f is a generic lambda that launches (or returns) the template instantiated for its argument's
 * sizes, so every kernel template is instantiated exactly for the listed sizes and the generic
 * one, from this one list. @return what f returns (the same type for every entry). */
template <int R, int C>
struct sbm_blk_shape {
    static constexpr int r = R, c = C;
};
template <int R, int K, int C>
struct sbm_blk_triple {
    static constexpr int r = R, k = K, c = C;
};
template <class... L>
struct sbm_blk_list {
};

#define SBM_BLK_SHAPE_T_(R, C) sbm_blk_shape<R, C>,
#define SBM_BLK_TRIPLE_T_(R, K, C) sbm_blk_triple<R, K, C>,
/* each list ends with its generic entry, which matches whatever no listed entry matched */
typedef sbm_blk_list<SBM_BLOCK_SHAPES(SBM_BLK_SHAPE_T_) sbm_blk_shape<0, 0>> sbm_blk_shapes;
typedef sbm_blk_list<SBM_GEMM_TRIPLES(SBM_BLK_TRIPLE_T_) sbm_blk_triple<0, 0, 0>> sbm_blk_triples;
#undef SBM_BLK_SHAPE_T_
#undef SBM_BLK_TRIPLE_T_

template <int R, int C>
constexpr bool sbm_blk_match_(sbm_blk_shape<R, C>, int r, int c, int)
{
    return r == R && c == C;
}
template <int R, int K, int C>
constexpr bool sbm_blk_match_(sbm_blk_triple<R, K, C>, int r, int k, int c)
{
    return r == R && k == K && c == C;
}

template <class F, class S>
inline auto sbm_blk_select_(int, int, int, F &f, sbm_blk_list<S>) -> decltype(f(S()))
{
    return f(S()); /* the generic entry */
}
template <class F, class S, class S2, class... Rest>
inline auto sbm_blk_select_(int a, int b, int c, F &f, sbm_blk_list<S, S2, Rest...>)
    -> decltype(f(S()))
{
    if (sbm_blk_match_(S(), a, b, c)) return f(S());
    return sbm_blk_select_(a, b, c, f, sbm_blk_list<S2, Rest...>());
}

template <class F>
inline auto sbm_blk_select_shape(int r, int c, F f) -> decltype(f(sbm_blk_shape<0, 0>()))
{
    return sbm_blk_select_(r, c, 0, f, sbm_blk_shapes());
}
template <class F>
inline auto sbm_blk_select_triple(int r, int k, int c, F f) -> decltype(f(sbm_blk_triple<0, 0, 0>()))
{
    return sbm_blk_select_(r, k, c, f, sbm_blk_triples());
}
#endif /* __cplusplus */

/* acc (r x c) += alpha * a (r x k) * b (k x c); acc does not overlap a or b. */
SBM_BLK_INLINE void sbm_blk_gemm_acc(int r, int k, int c, double alpha,
                                     const double *SBM_BLK_RESTRICT a,
                                     const double *SBM_BLK_RESTRICT b,
                                     double *SBM_BLK_RESTRICT acc)
{
    for (int j = 0; j < c; j++) {
        for (int p = 0; p < k; p++) {
            const double s = alpha * b[p + j * k];
            for (int i = 0; i < r; i++) acc[i + j * r] += a[i + p * r] * s;
        }
    }
}

/* acc (r x c) += alpha * x (r x k) * y^T where y is c x k: products with a transposed right
 * operand without forming it. */
SBM_BLK_INLINE void sbm_blk_gemm_nt_acc(int r, int k, int c, double alpha,
                                        const double *SBM_BLK_RESTRICT a,
                                        const double *SBM_BLK_RESTRICT bt,
                                        double *SBM_BLK_RESTRICT acc)
{
    for (int j = 0; j < c; j++) {
        for (int p = 0; p < k; p++) {
            const double s = alpha * bt[j + p * c];
            for (int i = 0; i < r; i++) acc[i + j * r] += a[i + p * r] * s;
        }
    }
}

/* y (r) += alpha * a (r x c) * x (c). */
SBM_BLK_INLINE void sbm_blk_gemv_acc(int r, int c, double alpha, const double *SBM_BLK_RESTRICT a,
                                     const double *SBM_BLK_RESTRICT x, double *SBM_BLK_RESTRICT y)
{
    for (int j = 0; j < c; j++) {
        const double s = alpha * x[j];
        for (int i = 0; i < r; i++) y[i] += a[i + j * r] * s;
    }
}

/* y (c) += alpha * a^T * x (r) for an r x c block a. */
SBM_BLK_INLINE void sbm_blk_gemv_t_acc(int r, int c, double alpha,
                                       const double *SBM_BLK_RESTRICT a,
                                       const double *SBM_BLK_RESTRICT x,
                                       double *SBM_BLK_RESTRICT y)
{
    for (int j = 0; j < c; j++) {
        double s = 0.0;
        for (int i = 0; i < r; i++) s += a[i + j * r] * x[i];
        y[j] += alpha * s;
    }
}

/* t (c x r) = a^T for an r x c block a. */
SBM_BLK_INLINE void sbm_blk_transpose(int r, int c, const double *a, double *t)
{
    for (int j = 0; j < c; j++)
        for (int i = 0; i < r; i++) t[j + i * c] = a[i + j * r];
}

/* In-place Cholesky of an n x n SPD block (lower triangle; upper left untouched), then the
 * inverse written as a full symmetric block into inv. @return 0 on success, or the 1-based
 * order of the leading minor that is not positive definite. Used by the GPU batched inverse;
 * the CPU backend calls LAPACKE. */
SBM_BLK_INLINE int sbm_blk_spd_inverse(int n, double *a, double *inv)
{
    for (int j = 0; j < n; j++) {
        double d = a[j + j * n];
        for (int p = 0; p < j; p++) d -= a[j + p * n] * a[j + p * n];
        if (!(d > 0.0)) return j + 1;
        d = sqrt(d);
        a[j + j * n] = d;
        for (int i = j + 1; i < n; i++) {
            double s = a[i + j * n];
            for (int p = 0; p < j; p++) s -= a[i + p * n] * a[j + p * n];
            a[i + j * n] = s / d;
        }
    }
    /* inv = L^{-T} L^{-1}: solve L L^T X = I column by column. */
    for (int col = 0; col < n; col++) {
        double *x = inv + col * n;
        for (int i = 0; i < n; i++) {
            double s = (i == col) ? 1.0 : 0.0;
            for (int p = 0; p < i; p++) s -= a[i + p * n] * x[p];
            x[i] = s / a[i + i * n];
        }
        for (int i = n - 1; i >= 0; i--) {
            double s = x[i];
            for (int p = i + 1; p < n; p++) s -= a[p + i * n] * x[p];
            x[i] = s / a[i + i * n];
        }
    }
    return 0;
}

#endif /* SBM_BLOCKS_H */
