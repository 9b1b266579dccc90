/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared declarations of the block SpGEMM (C = U + alpha*op(A)*op(B), expand-sort-compress;
 * the algorithm is described in cuda_gemm.cu): the plan, the numeric kernels' identifiers and
 * tile geometry, and the functions that cross its files --
 *   cuda_gemm_plan.cu      symbolic phase: setup, expansion, sort in slices, compression
 *   cuda_gemm.cu           dispatch: numeric kernel choice, tile geometry, execute
 *   cuda_gemm_kernels.cuh  numeric kernel templates (definitions)
 *   cuda_gemm_kernels.cu   their instantiations, through the one triple selector (sbm_blocks.h) */
#ifndef SBM_CUDA_GEMM_CUH
#define SBM_CUDA_GEMM_CUH

#include "cuda_internal.cuh"
#include "sbm_blocks.h"

/* Entries pack the A-block index in the low 32 bits and the B-block index in the high 32 bits;
 * a U entry has SBM__U_TAG as A index and U's block index as B index. */
#define SBM__U_TAG 0xFFFFFFFFu

typedef struct sbm__gpu_plan {
    sbm__plan_header h;      /* first: the front end reads it */
    sbm_allocator al;        /* allocator of the device arrays below */
    sbm_op op_a;             /* operations the plan was made for */
    sbm_op op_b;
    unsigned flags;          /* SBM_GEMM_UPPER or 0 */
    int r;                   /* op(A) blocks are r x k, op(B) blocks k x c */
    int k;
    int c;
    int has_u;               /* U took part in the plan */
    int numeric;             /* numeric kernel (SBM__NUM_*, see sbm__gemm_numeric_kind) */
    int st_nb;               /* staged kernels: output blocks per tile */
    int st_ec;               /* staged kernels: entries staged per chunk */
    unsigned st_grid;        /* staged kernels: CTAs */
    int64_t st_tiles;        /* staged kernels: tiles */
    size_t st_smem;          /* staged kernels: dynamic shared memory per CTA */
    int64_t nnzb_c;          /* blocks of C */
    int64_t entries;         /* products + U entries */
    uint64_t *pairs;         /* sorted entries (size entries) */
    int64_t *seg;            /* block q of C sums entries seg[q] .. seg[q+1]-1 (size nnzb_c+1) */
} sbm__gpu_plan;

/* Numeric kernels of a plan (sbm__gpu_plan.numeric). */
enum {
    SBM__NUM_TEAM = 0,  /* one thread per output element, operands from global memory */
    SBM__NUM_DMMA = 1,  /* one warp per output block on the tensor cores, from global memory */
    SBM__NUM_STAGE = 2, /* staged tiles, one thread per output element */
    SBM__NUM_SDMMA = 3  /* staged tiles, one warp per output block on the tensor cores */
};

/* Tile geometry of the staged kernels (see cuda_gemm_kernels.cuh). */
#define SBM__ST_THREADS 128 /* threads per CTA */
#define SBM__ST_EPT 4       /* output elements per thread (thread-per-element mode) */
#define SBM__ST_VBYTES 32768 /* most bytes of staged operand blocks per chunk */

template <int R, int K, int C, int DMMA>
struct sbm__st_cfg {
    static constexpr int RK = R * K, KC = K * C, T = R * C;
    static constexpr int MT = (R + 7) / 8, NT = (C + 7) / 8, KS = (K + 3) / 4;
    static constexpr int BPW = 8 / (MT * NT) > 0 ? 8 / (MT * NT) : 1; /* blocks per warp */
    static constexpr int NW = SBM__ST_THREADS / 32;
    static constexpr int NB_ = DMMA ? NW * BPW : SBM__ST_THREADS * SBM__ST_EPT / T;
    static constexpr int NBMAX = NB_ > 0 ? NB_ : 1; /* output blocks per tile, at most */
};

/* Host mirror of sbm__st_cfg::NBMAX. */
static inline int sbm__st_nbmax(int r, int k, int c, int dmma)
{
    if (dmma) {
        const int mt = (r + 7) / 8, nt = (c + 7) / 8;
        const int bpw = 8 / (mt * nt) > 0 ? 8 / (mt * nt) : 1;
        return SBM__ST_THREADS / 32 * bpw;
    }
    const int nb = SBM__ST_THREADS * SBM__ST_EPT / (r * c);
    return nb > 0 ? nb : 1;
}

/* Dynamic shared memory of a tile: operand blocks of ec entries (op(A) blocks, then op(B)
 * blocks from a 16-byte boundary), two buffers of ec entries, three of nbmax+1 offsets. */
static inline size_t sbm__st_smem(int r, int k, int c, int ec, int nbmax)
{
    const size_t rk = (size_t)r * k, kc = (size_t)k * c;
    return (((size_t)ec * rk + 1) / 2 * 2 + (size_t)ec * kc) * sizeof(double) +
           2 * (size_t)ec * sizeof(uint64_t) + 3 * (size_t)(nbmax + 1) * sizeof(int64_t);
}

typedef void (*sbm__staged_kernel)(int64_t, int64_t, int, int, int, int, const uint64_t *,
                                   const int64_t *, const double *, const double *,
                                   const double *, double, double *);

/* The staged kernel of a fast triple (cuda_gemm_kernels.cu); NULL for any other triple. */
sbm__staged_kernel sbm__gemm_select_staged(int r, int k, int c, int dmma);
/* Launch the plan's numeric kernel: C's values from A's, B's and U's (cuda_gemm_kernels.cu). */
sbm_status sbm__gemm_launch(sbm_ctx *ctx, const sbm__gpu_plan *P, double alpha, const sbm_cbc *A,
                            const sbm_cbc *B, const sbm_cbc *U, sbm_cbc *C);
/* The plan's numeric kernel and, for a staged one, its tile geometry (cuda_gemm.cu); P's shape,
 * entries and nnzb_c are set. */
sbm_status sbm__gemm_choose_numeric(sbm_ctx *ctx, sbm__gpu_plan *P);

#endif /* SBM_CUDA_GEMM_CUH */
