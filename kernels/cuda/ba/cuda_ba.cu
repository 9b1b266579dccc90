/* SPDX-License-Identifier: BSD-3-Clause */
/* Bundle-adjustment linearisation on the CUDA backend (struct sbm__ba_model, ba_kernels.h),
 * on the context's stream, deterministic (no floating atomics; every sum in a fixed order).
 *
 * ba_linearize, a few kernels and one 32-byte copy to the host:
 *   0. sbm__k_ba_camera_prep: one thread per camera, R(w), Jr(w), t, f, k1, k2
 *      (sbm__bal_camera) into the model, so the trigonometry runs once per camera, not per
 *      observation;
 *   1. sbm__k_ba_obs: one thread per observation (grid-stride over a grid fixed by nobs): the
 *      record [r'; Jc'; Jp'] (sbm_ba_observation.h, the CPU backend's arithmetic) into the model's
 *      scratch; per block, the cost by a fixed tree and the first bad observations (min);
 *   2. sbm__k_ba_obs_final: one block joins the partials into the device result (cost, first bad
 *      prediction, first bad Jacobian). The kernels after it return at once when a prediction
 *      is bad, so the outputs keep their values (the front end's error, no host round trip);
 *   3. sbm__k_ba_camera: one block per camera: the records of its observations (increasing)
 *      staged in shared memory CAM_CHUNK at a time, one thread per entry of U (81) and gc (9)
 *      summing them in order; U written twice (undamped, damped at 0) and the damping scale;
 *   4. sbm__k_ba_point: one thread per entry of V (9) and gp (3) of a point, over its W blocks'
 *      lists; sbm__k_ba_wblock: one thread per entry of a W block (27), over the block's list:
 *      coalesced writes of W;
 *   5. sbm__k_ba_amax + sbm__k_ba_amax_final: max |g| into the result, then the copy.
 * ba_cost: sbm__k_ba_obs without Jacobians, sbm__k_ba_obs_final, 8 bytes back.
 * Camera priors and constant blocks (ba_kernels.h): sbm__k_ba_camera adds a prior's Omega and
 * gradient and sets a constant camera's entries; sbm__k_ba_point and sbm__k_ba_wblock those of
 * constant points and of W blocks touching a constant block; sbm__k_ba_prior_cost adds the
 * priors' cost after sbm__k_ba_obs_final (ba_linearize and ba_cost).
 *
 * DRAM traffic of ba_linearize, synthetic 5000 cameras / 400k points / 3.2M observations
 * (8 per point, W 3.2M blocks), the bytes it must move:
 *   sbm__k_ba_obs:    observation indices + xy 24 B/obs (77 MB), point parameters 9.6 MB,
 *                     prepared cameras 1 MB (read from L2 by every observation); the records
 *                     208 B/obs written (666 MB);
 *   sbm__k_ba_camera: cam_obs 4 B/obs + [r'; Jc'] 160 B/obs read (525 MB); U twice, gc, D
 *                     (7 MB);
 *   sbm__k_ba_point:  blk_obs 4 B/obs + the sectors of r' and Jp' ~96 B/obs (320 MB); V twice,
 *                     gp, D (77 MB);
 *   sbm__k_ba_wblock: [Jc'; Jp'] 192 B/obs (614 MB); W 216 B/block written (691 MB);
 *   total ~3.0 GB, the floor the kernels are measured against
 *   (see docs/DESIGN-NOTES.md, "Measurements behind code choices"). */
#include "ba_kernels.h"
#include "cuda_internal.cuh"
#include "sbm_ba_observation.h"
#include "sbm_damp.h"

#include <float.h>

#define BA_THREADS 256        /* sbm__k_ba_obs, sbm__k_ba_point, sbm__k_ba_wblock, reductions */
#define BA_MAX_PARTIALS 1024  /* sbm__k_ba_obs blocks at most (the grid depends on nobs alone) */
#define BA_AMAX_BLOCKS 256    /* sbm__k_ba_amax's fixed grid */
#define CAM_THREADS 96        /* sbm__k_ba_camera: 81 + 9 entries */
#define CAM_CHUNK 32          /* observations staged per step */
#define CAM_REC 20            /* doubles of a record sbm__k_ba_camera reads: r' and Jc' */

/* The device result, laid out as sbm__ba_lin_result (copied into it as is). */
static_assert(sizeof(sbm__ba_lin_result) == 32, "sbm__ba_lin_result is 4 scalars");

static unsigned obs_blocks(int64_t nobs)
{
    int64_t b = (nobs + BA_THREADS - 1) / BA_THREADS;
    return (unsigned)(b < 1 ? 1 : b > BA_MAX_PARTIALS ? BA_MAX_PARTIALS : b);
}

/* sh[0..BA_THREADS) joined into sh[0] by a fixed halving tree: sum (MODE 0), min (1), max
 * with NaN winning (2). */
template <int MODE, class T> __device__ __forceinline__ T ba_join(T a, T b)
{
    if (MODE == 0) return a + b;
    if (MODE == 1) return a < b ? a : b;
    return (a > b || a != a) ? a : b;
}
template <int MODE, class T> __device__ __forceinline__ void ba_tree(T *sh)
{
    __syncthreads();
    for (int w = BA_THREADS / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w)
            sh[threadIdx.x] = ba_join<MODE>(sh[threadIdx.x], sh[threadIdx.x + w]);
        __syncthreads();
    }
}

/* Each thread's (cost, first bad prediction, first bad Jacobian) joined over the block by the
 * fixed trees; the block's values land in element 0 of the three arrays. */
__device__ __forceinline__ void ba_obs_join(double *shc, long long *shp, long long *shj,
                                            double c, long long bp, long long bj)
{
    shc[threadIdx.x] = c;
    shp[threadIdx.x] = bp;
    shj[threadIdx.x] = bj;
    ba_tree<0>(shc);
    ba_tree<1>(shp);
    ba_tree<1>(shj);
}

template <int JAC>
__global__ void __launch_bounds__(BA_THREADS)
    sbm__k_ba_obs(sbm__ba_model m, const double *__restrict__ params,
                  double *__restrict__ pcost, long long *__restrict__ pbad)
{
    __shared__ double shc[BA_THREADS];
    __shared__ long long shp[BA_THREADS], shj[BA_THREADS];
    const sbm__bal_camera *cams = (const sbm__bal_camera *)m.cameras;
    const double *pts = params + 9 * m.nc;
    double cost = 0.0;
    long long bp = m.nobs, bj = m.nobs; /* none */
    for (int64_t k = (int64_t)blockIdx.x * BA_THREADS + threadIdx.x; k < m.nobs;
         k += (int64_t)gridDim.x * BA_THREADS) {
        const sbm__bal_camera *cam = cams + m.obs_camera[k];
        const double *X = pts + 3 * (int64_t)m.obs_point[k];
        double ck;
        if (JAC) {
            double rec[SBM__BA_OBS_STRIDE];
            const int f = sbm__ba_observation(cam, X, m.obs_xy + 2 * k, m.loss_type,
                                              m.loss_scale, rec, &ck);
            double *dst = m.scratch + SBM__BA_OBS_STRIDE * k;
            for (int q = 0; q < SBM__BA_OBS_STRIDE; q++) dst[q] = rec[q];
            if (f == SBM__BA_OBS_BAD_PREDICTION && k < bp) bp = k;
            if (f == SBM__BA_OBS_BAD_JACOBIAN && k < bj) bj = k;
        } else {
            ck = sbm__ba_observation_cost(cam, X, m.obs_xy + 2 * k, m.loss_type, m.loss_scale);
        }
        cost += ck;
    }
    ba_obs_join(shc, shp, shj, cost, bp, bj);
    if (threadIdx.x == 0) {
        pcost[blockIdx.x] = shc[0];
        pbad[2 * blockIdx.x] = shp[0];
        pbad[2 * blockIdx.x + 1] = shj[0];
    }
}

__global__ void __launch_bounds__(BA_THREADS)
    sbm__k_ba_obs_final(int nparts, long long nobs, const double *__restrict__ pcost,
                        const long long *__restrict__ pbad, sbm__ba_lin_result *res)
{
    __shared__ double shc[BA_THREADS];
    __shared__ long long shp[BA_THREADS], shj[BA_THREADS];
    double c = 0.0;
    long long bp = nobs, bj = nobs;
    for (int i = threadIdx.x; i < nparts; i += BA_THREADS) {
        c += pcost[i];
        bp = min(bp, pbad[2 * i]);
        bj = min(bj, pbad[2 * i + 1]);
    }
    ba_obs_join(shc, shp, shj, c, bp, bj);
    if (threadIdx.x == 0) {
        res->cost = shc[0];
        res->gmax = 0.0;
        res->bad_prediction = shp[0] < nobs ? shp[0] : -1;
        res->bad_jacobian = shp[0] < nobs ? -1 : shj[0] < nobs ? shj[0] : -1;
    }
}

__global__ void __launch_bounds__(CAM_THREADS)
    sbm__k_ba_camera(sbm__ba_model m, const double *__restrict__ params, sbm__ba_lin_out o,
                     const sbm__ba_lin_result *res)
{
    __shared__ double sh[CAM_CHUNK * CAM_REC];
    if (res->bad_prediction >= 0) return;
    const int64_t i = blockIdx.x, t0 = m.cam_ptr[i], t1 = m.cam_ptr[i + 1];
    const int e = threadIdx.x;
    /* entry e < 81: U(a, b), a = e % 9, b = e / 9; 81 <= e < 90: gc(e - 81) */
    const int a = e < 81 ? e % 9 : e - 81, b = e < 81 ? e / 9 : 0;
    /* (a, b) and (b, a) evaluate the same expression: U is exactly symmetric */
    const int lo = a < b ? a : b, hi = a < b ? b : a;
    double acc = 0.0;
    for (int64_t t = t0; t < t1; t += CAM_CHUNK) {
        const int n = (int)(t1 - t < CAM_CHUNK ? t1 - t : CAM_CHUNK);
        __syncthreads();
        for (int q = threadIdx.x; q < n * CAM_REC; q += CAM_THREADS) {
            const int64_t k = m.cam_obs[t + q / CAM_REC];
            sh[q] = m.scratch[SBM__BA_OBS_STRIDE * k + q % CAM_REC];
        }
        __syncthreads();
        if (e < 81) {
            for (int s = 0; s < n; s++) {
                const double *J = sh + s * CAM_REC + 2;
                acc += J[2 * lo] * J[2 * hi] + J[2 * lo + 1] * J[2 * hi + 1];
            }
        } else if (e < 90) {
            for (int s = 0; s < n; s++) {
                const double *r = sh + s * CAM_REC, *J = r + 2;
                acc -= J[2 * a] * r[0] + J[2 * a + 1] * r[1];
            }
        }
    }
    if (m.cam_prior && m.cam_prior[i]) { /* Omega into U, -Omega (x - mean) into gc */
        const double *x = params + 9 * i, *mu = m.prior_mean + 9 * i, *om = m.prior_info + 81 * i;
        if (e < 81) {
            acc += om[e];
        } else if (e < 90) {
            double s = 0.0;
            for (int c = 0; c < 9; c++) s += om[a + 9 * c] * (x[c] - mu[c]);
            acc -= s;
        }
    }
    if (m.cam_const && m.cam_const[i]) acc = e < 81 && a == b ? 1.0 : 0.0;
    if (e < 81) {
        o.U_und[81 * i + e] = acc;
        o.U[81 * i + e] = acc;
        if (a == b) o.D[9 * i + a] = sbm_blk_damp_scale(acc);
    } else if (e < 90) {
        o.g[9 * i + a] = acc;
    }
}

__global__ void __launch_bounds__(BA_THREADS)
    sbm__k_ba_point(sbm__ba_model m, sbm__ba_lin_out o, const sbm__ba_lin_result *res)
{
    if (res->bad_prediction >= 0) return;
    SBM__GRID_STRIDE(x, 12 * m.np)
    {
        const int64_t p = x / 12;
        const int e = (int)(x % 12);
        /* e < 9: V(a, b), a = e % 3, b = e / 3; 9 <= e < 12: gp(e - 9) */
        const int a = e < 9 ? e % 3 : e - 9, b = e < 9 ? e / 3 : 0;
        const int lo = a < b ? a : b, hi = a < b ? b : a; /* V exactly symmetric */
        double acc = 0.0;
        for (int64_t w = m.w_colptr[p]; w < m.w_colptr[p + 1]; w++)
            for (int64_t t = m.blk_ptr[w]; t < m.blk_ptr[w + 1]; t++) {
                const double *r = m.scratch + SBM__BA_OBS_STRIDE * (int64_t)m.blk_obs[t];
                const double *J = r + 20;
                if (e < 9)
                    acc += J[2 * lo] * J[2 * hi] + J[2 * lo + 1] * J[2 * hi + 1];
                else
                    acc -= J[2 * a] * r[0] + J[2 * a + 1] * r[1];
            }
        if (m.pt_const && m.pt_const[p]) acc = e < 9 && a == b ? 1.0 : 0.0;
        if (e < 9) {
            o.V_und[9 * p + e] = acc;
            o.V[9 * p + e] = acc;
            if (a == b) o.D[9 * m.nc + 3 * p + a] = sbm_blk_damp_scale(acc);
        } else {
            o.g[9 * m.nc + 3 * p + a] = acc;
        }
    }
}

__global__ void __launch_bounds__(BA_THREADS)
    sbm__k_ba_wblock(sbm__ba_model m, sbm__ba_lin_out o, const sbm__ba_lin_result *res)
{
    if (res->bad_prediction >= 0) return;
    SBM__GRID_STRIDE(x, 27 * m.nnzb)
    {
        const int64_t w = x / 27;
        const int e = (int)(x % 27), row = e % 9, col = e / 9; /* column-major 9x3 block */
        double acc = 0.0;
        for (int64_t t = m.blk_ptr[w]; t < m.blk_ptr[w + 1]; t++) {
            const double *J = m.scratch + SBM__BA_OBS_STRIDE * (int64_t)m.blk_obs[t] + 2;
            const double *P = J + 18;
            acc += J[2 * row] * P[2 * col] + J[2 * row + 1] * P[2 * col + 1];
        }
        const int64_t k0 = m.blk_obs[m.blk_ptr[w]]; /* the block's camera and point */
        if ((m.cam_const && m.cam_const[m.obs_camera[k0]]) ||
            (m.pt_const && m.pt_const[m.obs_point[k0]]))
            acc = 0.0;
        o.W[x] = acc;
    }
}

/* The camera priors' cost added to res->cost: one block, each thread the cameras i = tid + k
 * BA_THREADS in order, then the fixed tree (sbm__ba_prior, the CPU backend's arithmetic). */
__global__ void __launch_bounds__(BA_THREADS)
    sbm__k_ba_prior_cost(sbm__ba_model m, const double *__restrict__ params,
                         sbm__ba_lin_result *res)
{
    __shared__ double sh[BA_THREADS];
    double c = 0.0;
    for (int64_t i = threadIdx.x; i < m.nc; i += BA_THREADS)
        if (m.cam_prior[i])
            c += sbm__ba_prior(params + 9 * i, m.prior_mean + 9 * i, m.prior_info + 81 * i, NULL,
                               NULL);
    sh[threadIdx.x] = c;
    ba_tree<0>(sh);
    if (threadIdx.x == 0) res->cost += sh[0];
}

/* max |x| over the fixed grid BA_AMAX_BLOCKS: one partial per block (NaN wins). */
__global__ void __launch_bounds__(BA_THREADS)
    sbm__k_ba_amax(int64_t n, const double *__restrict__ x, double *__restrict__ part)
{
    __shared__ double sh[BA_THREADS];
    double s = 0.0;
    for (int64_t i = (int64_t)blockIdx.x * BA_THREADS + threadIdx.x; i < n;
         i += (int64_t)BA_AMAX_BLOCKS * BA_THREADS)
        s = ba_join<2>(s, fabs(x[i]));
    sh[threadIdx.x] = s;
    ba_tree<2>(sh);
    if (threadIdx.x == 0) part[blockIdx.x] = sh[0];
}

/* The partials of sbm__k_ba_amax into res->gmax (0 when a prediction was bad). */
__global__ void __launch_bounds__(BA_THREADS)
    sbm__k_ba_amax_final(const double *__restrict__ part, sbm__ba_lin_result *res)
{
    __shared__ double sh[BA_THREADS];
    double s = 0.0;
    for (int i = threadIdx.x; i < BA_AMAX_BLOCKS; i += BA_THREADS) s = ba_join<2>(s, part[i]);
    sh[threadIdx.x] = s;
    ba_tree<2>(sh);
    if (threadIdx.x == 0) res->gmax = res->bad_prediction >= 0 ? 0.0 : sh[0];
}

/* Workspace of the reductions: sbm__k_ba_obs partials, sbm__k_ba_amax partials, the result. */
typedef struct ba_ws {
    double *pcost, *pvec;
    long long *pbad;
    sbm__ba_lin_result *res;
} ba_ws;

static sbm_status ba_workspace(sbm_ctx *ctx, ba_ws *w)
{
    sbm__carve cv = {0};
    const size_t o_c = sbm__carve_add(&cv, BA_MAX_PARTIALS * sizeof(double));
    const size_t o_b = sbm__carve_add(&cv, 2 * BA_MAX_PARTIALS * sizeof(long long));
    const size_t o_v = sbm__carve_add(&cv, BA_AMAX_BLOCKS * sizeof(double));
    const size_t o_r = sbm__carve_add(&cv, sizeof(sbm__ba_lin_result));
    char *base = NULL;
    sbm_status st = sbm__cuda_workspace(ctx, SBM__WS_OP_A, cv.total, (void **)&base);
    if (st != SBM_SUCCESS) return st;
    w->pcost = (double *)(base + o_c);
    w->pbad = (long long *)(base + o_b);
    w->pvec = (double *)(base + o_v);
    w->res = (sbm__ba_lin_result *)(base + o_r);
    return SBM_SUCCESS;
}

/* One thread per camera: its point-independent quantities (sbm_geometry.h). */
__global__ void sbm__k_ba_camera_prep(int64_t nc, int jac, const double *__restrict__ params,
                                      sbm__bal_camera *__restrict__ cams)
{
    SBM__GRID_STRIDE(i, nc) sbm__bal_camera_prepare(params + 9 * i, jac, cams + i);
}

/* The cameras prepared, pass 1 and its final join into w->res. */
template <int JAC>
static sbm_status obs_pass(sbm_ctx *ctx, const sbm__ba_model *m, const double *params,
                           const ba_ws *w)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    const unsigned nb = obs_blocks(m->nobs);
    if (m->nc > 0) {
        sbm__k_ba_camera_prep<<<sbm__grid(m->nc, 128), 128, 0, s>>>(
            m->nc, JAC, params, (sbm__bal_camera *)m->cameras);
        SBM__LAUNCHED(ctx, "the BA camera preparation");
    }
    sbm__k_ba_obs<JAC><<<nb, BA_THREADS, 0, s>>>(*m, params, w->pcost, w->pbad);
    SBM__LAUNCHED(ctx, "the BA observations kernel");
    sbm__k_ba_obs_final<<<1, BA_THREADS, 0, s>>>((int)nb, (long long)m->nobs, w->pcost, w->pbad,
                                                 w->res);
    SBM__LAUNCHED(ctx, "the BA cost reduction");
    if (m->cam_prior) {
        sbm__k_ba_prior_cost<<<1, BA_THREADS, 0, s>>>(*m, params, w->res);
        SBM__LAUNCHED(ctx, "the BA prior cost");
    }
done:
    return st;
}

sbm_status sbm__cuda_ba_linearize(sbm_ctx *ctx, const sbm__ba_model *m,
                                             const double *params, const sbm__ba_lin_out *out,
                                             sbm__ba_lin_result *res)
{
    sbm_status st = SBM_SUCCESS;
    cudaStream_t s = sbm__cuda_stream(ctx);
    ba_ws w;
    SBM__CK(sbm__cuda_enter(ctx));
    SBM__CK(ba_workspace(ctx, &w));
    SBM__CK(obs_pass<1>(ctx, m, params, &w));
    if (m->nc > 0) {
        sbm__k_ba_camera<<<(unsigned)m->nc, CAM_THREADS, 0, s>>>(*m, params, *out, w.res);
        SBM__LAUNCHED(ctx, "the BA camera kernel");
    }
    if (m->np > 0) {
        sbm__k_ba_point<<<sbm__grid(12 * m->np, BA_THREADS), BA_THREADS, 0, s>>>(*m, *out, w.res);
        SBM__LAUNCHED(ctx, "the BA point kernel");
    }
    if (m->nnzb > 0) {
        sbm__k_ba_wblock<<<sbm__grid(27 * m->nnzb, BA_THREADS), BA_THREADS, 0, s>>>(*m, *out,
                                                                                    w.res);
        SBM__LAUNCHED(ctx, "the BA W kernel");
    }
    sbm__k_ba_amax<<<BA_AMAX_BLOCKS, BA_THREADS, 0, s>>>(9 * m->nc + 3 * m->np, out->g, w.pvec);
    SBM__LAUNCHED(ctx, "the BA gradient maximum");
    sbm__k_ba_amax_final<<<1, BA_THREADS, 0, s>>>(w.pvec, w.res);
    SBM__LAUNCHED(ctx, "the BA gradient maximum");
    SBM__CK(sbm__cuda_d2h(ctx, res, w.res, sizeof *res));
done:
    return st;
}

sbm_status sbm__cuda_ba_cost(sbm_ctx *ctx, const sbm__ba_model *m,
                                        const double *params, double *h_cost)
{
    sbm_status st = SBM_SUCCESS;
    ba_ws w;
    SBM__CK(sbm__cuda_enter(ctx));
    SBM__CK(ba_workspace(ctx, &w));
    SBM__CK(obs_pass<0>(ctx, m, params, &w));
    SBM__CK(sbm__cuda_d2h(ctx, h_cost, &w.res->cost, sizeof *h_cost));
done:
    return st;
}

__global__ void sbm__k_ba_damp(int64_t n, int b, double lambda, const double *__restrict__ und,
                               double *__restrict__ out)
{
    const int bb = b * b;
    SBM__GRID_STRIDE(i, n)
    {
        const double d = und[i];
        out[i] = (i % bb) % (b + 1) == 0 ? sbm_blk_marquardt(d, lambda) : d;
    }
}

sbm_status sbm__cuda_ba_damp(sbm_ctx *ctx, int64_t nblocks, int b, double lambda,
                                        const double *und, double *out)
{
    sbm_status st = SBM_SUCCESS;
    const int64_t n = nblocks * b * b;
    SBM__CK(sbm__cuda_enter(ctx));
    if (n > 0) {
        sbm__k_ba_damp<<<sbm__grid(n, BA_THREADS), BA_THREADS, 0, sbm__cuda_stream(ctx)>>>(
            n, b, lambda, und, out);
        SBM__LAUNCHED(ctx, "the BA damping");
    }
done:
    return st;
}
