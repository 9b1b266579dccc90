/* SPDX-License-Identifier: BSD-3-Clause */
/* The matrices sbm-bench-chol factors (chol_inputs.h): Lambda of g2o pose graphs (read or
 * generated), S of BAL problems (read or generated), each also as the scalar CSC of its upper
 * triangle; the synthetic pose graph sbm-bench-ba solves too. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "chol_inputs.h"
#include "sbm_ba.h"
#include "sbm_io.h"
#include "sbm_slam.h"

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        snprintf(err, errsize, __VA_ARGS__);                                                       \
        goto done;                                                                                 \
    } while (0)

/* The first damping of sbm_ba_solve (sbm_solver_default_options().initial_lambda). */
#define BA_FIRST_LAMBDA 1e-4

/* "name" of a path: its file name without directories and without .g2o / .txt / .bz2 / .gz */
static void base_name(const char *path, char *out, size_t size)
{
    const char *s = strrchr(path, '/');
    snprintf(out, size, "%s", s ? s + 1 : path);
    const char *const ext[] = {".bz2", ".gz", ".txt", ".g2o"};
    for (int k = 0; k < 4; k++) {
        const size_t n = strlen(out), e = strlen(ext[k]);
        if (n > e && strcmp(out + n - e, ext[k]) == 0) out[n - e] = '\0';
    }
}

/* an empty m named after path (or path itself, NULL: the caller names it) */
static void begin(chol_matrix *m, const char *path, const char *kind)
{
    memset(m, 0, sizeof *m);
    if (path) base_name(path, m->name, sizeof m->name);
    snprintf(m->kind, sizeof m->kind, "%s", kind);
}

/* m->A (a copy of src into host) and its scalar upper-triangle CSC. Diagonal blocks are stored
 * whole and sbm_chol reads their lower triangle: the CSC takes (i, j) of such a block from its
 * (j, i), so that CHOLMOD and the residual check see the matrix sbm factors (a block computed as
 * U - Y W^T need not be symmetric to the last bit). */
static int finish(sbm_ctx *host, const sbm_cbc *src, chol_matrix *m, char *err, size_t errsize)
{
    sbm_status st = sbm_cbc_copy(host, src, &m->A);
    if (st != SBM_SUCCESS) {
        snprintf(err, errsize, "sbm_cbc_copy: %s", sbm_ctx_last_error(host));
        return -1;
    }
    const sbm_cbc_info a = sbm_cbc_get_info(m->A);
    m->b = a.r;
    m->nb = a.nbc;
    m->nnzb = a.nnzb;
    m->n = a.nbc * a.r;
    const int b = a.r;
    int64_t nnz = 0;
    for (int64_t j = 0; j < a.nbc; j++)
        for (int64_t k = a.colptr[j]; k < a.colptr[j + 1]; k++)
            nnz += a.rowind[k] < j ? (int64_t)b * b : (int64_t)b * (b + 1) / 2;
    m->nnz = nnz;
    m->colptr = malloc(sizeof(int64_t) * (size_t)(m->n + 1));
    m->rowind = malloc(sizeof(int64_t) * (size_t)(nnz ? nnz : 1));
    m->val = malloc(sizeof(double) * (size_t)(nnz ? nnz : 1));
    if (!m->colptr || !m->rowind || !m->val) {
        snprintf(err, errsize, "out of host memory for the scalar CSC (%lld entries)",
                 (long long)nnz);
        return -1;
    }
    int64_t p = 0;
    m->colptr[0] = 0;
    for (int64_t j = 0; j < a.nbc; j++)
        for (int c = 0; c < b; c++) {
            const int64_t jj = j * b + c;
            for (int64_t k = a.colptr[j]; k < a.colptr[j + 1]; k++) {
                const double *blk = a.values + (size_t)k * (size_t)(b * b);
                const int diag = a.rowind[k] == j;
                for (int r = 0; r < b; r++) {
                    const int64_t i = (int64_t)a.rowind[k] * b + r;
                    if (i > jj) break;
                    m->rowind[p] = i;
                    /* a diagonal block: its lower triangle, the part sbm_chol reads */
                    m->val[p++] = diag ? blk[(size_t)r * (size_t)b + (size_t)c]
                                       : blk[(size_t)c * (size_t)b + (size_t)r];
                }
            }
            m->colptr[jj + 1] = p;
        }
    return 0;
}

void chol_matrix_free(chol_matrix *m)
{
    sbm_cbc_destroy(m->A);
    free(m->colptr);
    free(m->rowind);
    free(m->val);
    memset(m, 0, sizeof *m);
}

int chol_input_g2o(sbm_ctx *host, const char *path, chol_matrix *m, char *err, size_t errsize)
{
    const double t0 = bench_now_s();
    sbm_g2o_graph *g = NULL;
    sbm_slam_system *sys = NULL;
    int rc = -1;
    begin(m, path, "Lambda");
    if (sbm_g2o_read(host, path, &g) != SBM_SUCCESS)
        FAIL("sbm_g2o_read refused it: %s", sbm_ctx_last_error(host));
    if (sbm_slam_system_create(host, g, &sys) != SBM_SUCCESS ||
        sbm_slam_linearize(host, sys, g) != SBM_SUCCESS)
        FAIL("Lambda: %s", sbm_ctx_last_error(host));
    if (finish(host, sbm_slam_system_get_info(sys).Lambda, m, err, errsize) != 0) goto done;
    m->build_s = bench_now_s() - t0;
    rc = 0;
done:
    sbm_slam_system_destroy(sys);
    sbm_g2o_destroy(g);
    return rc;
}

/* S = U - W V^-1 W^T of a problem at its parameters, damped as the solver's first iteration. */
static int ba_reduced(sbm_ctx *host, const sbm_bal_problem *p, chol_matrix *m, char *err,
                      size_t errsize)
{
    sbm_ba_system *sys = NULL;
    sbm_cbc *S = NULL;
    int rc = -1;
    if (sbm_ba_system_create(host, p, &sys) != SBM_SUCCESS ||
        sbm_ba_linearize(host, sys, p) != SBM_SUCCESS ||
        sbm_ba_set_damping(host, sys, BA_FIRST_LAMBDA) != SBM_SUCCESS ||
        sbm_ba_system_reduce(host, sys, &S, NULL) != SBM_SUCCESS)
        FAIL("S: %s", sbm_ctx_last_error(host));
    rc = finish(host, S, m, err, errsize);
done:
    sbm_cbc_destroy(S);
    sbm_ba_system_destroy(sys);
    return rc;
}

int chol_input_bal(sbm_ctx *host, const char *path, chol_matrix *m, char *err, size_t errsize)
{
    const double t0 = bench_now_s();
    sbm_bal_problem *p = NULL;
    int rc = -1;
    begin(m, path, "S");
    if (sbm_bal_read(host, path, &p) != SBM_SUCCESS)
        FAIL("sbm_bal_read refused it: %s", sbm_ctx_last_error(host));
    rc = ba_reduced(host, p, m, err, errsize);
    m->build_s = bench_now_s() - t0;
done:
    sbm_bal_destroy(p);
    return rc;
}

int chol_input_ba_generated(sbm_ctx *host, int64_t cameras, int64_t points, int obs,
                            chol_matrix *m, char *err, size_t errsize)
{
    const double t0 = bench_now_s();
    sbm_bal_problem *p = NULL;
    int rc = -1;
    begin(m, NULL, "S");
    snprintf(m->name, sizeof m->name, "ba-%lld-%lld-%d", (long long)cameras, (long long)points,
             obs);
    const sbm_bal_generate_options o = sbm_bal_generate_defaults(cameras, points, obs, 2026);
    if (sbm_bal_generate(host, &o, &p) != SBM_SUCCESS)
        FAIL("sbm_bal_generate(%lld, %lld, %d): %s", (long long)cameras, (long long)points, obs,
             sbm_ctx_last_error(host));
    rc = ba_reduced(host, p, m, err, errsize);
    m->build_s = bench_now_s() - t0;
done:
    sbm_bal_destroy(p);
    return rc;
}

/* ---- synthetic pose graphs ------------------------------------------------------------------ */

/* Topology (both dims): the poses 0..N-1 lie on rows of w = ceil(sqrt(N)) poses, visited row by
 * row (pose k: row k / w, column k % w). Odometry k-1 -> k for every k >= 1; a loop closure
 * k -> k - w (the same column one row back) for every pose of row >= 1 with probability 1/2
 * (seeded), so every pose has about 3 neighbours, as in manhattan or sphere2500.
 * Geometry: dim 2: a lawnmower path over a grid of unit spacing, random headings (SE2);
 * dim 3: rows are rings of a sphere of circumference w (latitude by row, longitude by column),
 * random orientations (SE3). Measurements are the exact relative poses Xi^-1 Xj with Gaussian
 * noise (0.01 in translation, 0.005 rad in rotation); the vertices are the true poses; the
 * information matrices diag(100, 100, [100,] 1000...) (translation, rotation). */
typedef struct quat { double x, y, z, w; } quat;

static quat qmul(quat a, quat b)
{
    quat r = {a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
              a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
              a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
              a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
    return r;
}

/* v rotated by q^-1 (q a unit quaternion) */
static void qrot_inv(quat q, const double v[3], double out[3])
{
    const quat p = {v[0], v[1], v[2], 0.0}, qc = {-q.x, -q.y, -q.z, q.w};
    const quat r = qmul(qmul(qc, p), q);
    out[0] = r.x;
    out[1] = r.y;
    out[2] = r.z;
}

static double gauss(uint64_t *s)
{
    const double u1 = 1.0 - sbm_splitmix64_uniform(s), u2 = sbm_splitmix64_uniform(s);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* a unit quaternion of rotation angle |(a, b, c)| about (a, b, c), w >= 0 */
static quat qexp(double a, double b, double c)
{
    const double t = sqrt(a * a + b * b + c * c);
    const double s = t > 0 ? sin(0.5 * t) / t : 0.5;
    quat q = {a * s, b * s, c * s, cos(0.5 * t)};
    return q;
}

static void pose_true(int dim, int64_t k, int64_t w, int64_t rows, uint64_t *s, double *t,
                      quat *q, double *theta)
{
    const int64_t r = k / w, c = k % w;
    const quat id = {0.0, 0.0, 0.0, 1.0};
    *q = id;
    *theta = 0.0;
    if (dim == 2) {
        t[0] = (double)(r % 2 == 0 ? c : w - 1 - c);
        t[1] = (double)r;
        *theta = 3.141592653589793 * (2.0 * sbm_splitmix64_uniform(s) - 1.0);
        return;
    }
    const double R = (double)w / 6.283185307179586;
    const double lat = 3.141592653589793 * (((double)r + 0.5) / (double)rows - 0.5);
    const double lon = 6.283185307179586 * (double)c / (double)w;
    t[0] = R * cos(lat) * cos(lon);
    t[1] = R * cos(lat) * sin(lon);
    t[2] = R * sin(lat);
    *q = qexp(3.0 * gauss(s), 3.0 * gauss(s), 3.0 * gauss(s));
}

static void write_edge(FILE *f, int dim, int64_t i, int64_t j, const double *T, const quat *Q,
                       const double *TH, uint64_t *s)
{
    if (dim == 2) {
        const double dx = T[3 * j] - T[3 * i], dy = T[3 * j + 1] - T[3 * i + 1];
        const double ci = cos(TH[i]), si = sin(TH[i]);
        const double th = remainder(TH[j] - TH[i] + 0.005 * gauss(s), 6.283185307179586);
        fprintf(f, "EDGE_SE2 %lld %lld %.17g %.17g %.17g 100 0 0 100 0 1000\n", (long long)i,
                (long long)j, ci * dx + si * dy + 0.01 * gauss(s),
                -si * dx + ci * dy + 0.01 * gauss(s), th);
        return;
    }
    const double d[3] = {T[3 * j] - T[3 * i], T[3 * j + 1] - T[3 * i + 1],
                         T[3 * j + 2] - T[3 * i + 2]};
    double t[3];
    qrot_inv(Q[i], d, t);
    const quat qi = {-Q[i].x, -Q[i].y, -Q[i].z, Q[i].w};
    quat z = qmul(qmul(qi, Q[j]), qexp(0.005 * gauss(s), 0.005 * gauss(s), 0.005 * gauss(s)));
    const double sg = z.w < 0 ? -1.0 : 1.0, nz = sg / sqrt(z.x * z.x + z.y * z.y + z.z * z.z +
                                                          z.w * z.w);
    fprintf(f, "EDGE_SE3:QUAT %lld %lld %.17g %.17g %.17g %.17g %.17g %.17g %.17g", (long long)i,
            (long long)j, t[0] + 0.01 * gauss(s), t[1] + 0.01 * gauss(s),
            t[2] + 0.01 * gauss(s), z.x * nz, z.y * nz, z.z * nz, z.w * nz);
    for (int r = 0; r < 6; r++)
        for (int c = r; c < 6; c++) fprintf(f, " %s", r != c ? "0" : r < 3 ? "100" : "1000");
    fputc('\n', f);
}

int chol_write_pose_graph(const char *path, int dim, int64_t poses, uint64_t seed)
{
    const int64_t w = (int64_t)ceil(sqrt((double)poses)), rows = (poses + w - 1) / w;
    double *T = malloc(sizeof(double) * 3 * (size_t)poses);
    double *TH = malloc(sizeof(double) * (size_t)poses);
    quat *Q = malloc(sizeof(quat) * (size_t)poses);
    FILE *f = fopen(path, "w");
    int rc = -1;
    if (!T || !TH || !Q || !f) goto done;
    uint64_t s = seed;
    for (int64_t k = 0; k < poses; k++) {
        pose_true(dim, k, w, rows, &s, T + 3 * k, Q + k, TH + k);
        if (dim == 2)
            fprintf(f, "VERTEX_SE2 %lld %.17g %.17g %.17g\n", (long long)k, T[3 * k],
                    T[3 * k + 1], TH[k]);
        else
            fprintf(f, "VERTEX_SE3:QUAT %lld %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n",
                    (long long)k, T[3 * k], T[3 * k + 1], T[3 * k + 2], Q[k].x, Q[k].y, Q[k].z,
                    Q[k].w);
    }
    for (int64_t k = 1; k < poses; k++) {
        write_edge(f, dim, k - 1, k, T, Q, TH, &s);
        if (k >= w && sbm_splitmix64_uniform(&s) < 0.5) write_edge(f, dim, k - w, k, T, Q, TH, &s);
    }
    rc = ferror(f) ? -1 : 0;
done:
    if (f && fclose(f) != 0) rc = -1;
    free(T);
    free(TH);
    free(Q);
    return rc;
}

int chol_input_pose_graph(sbm_ctx *host, int dim, int64_t poses, const char *dir,
                          chol_matrix *m, char *err, size_t errsize)
{
    char path[512];
    snprintf(path, sizeof path, "%s/sbm-bench-chol-poses%dd-%lld.g2o", dir, dim,
             (long long)poses);
    const double t0 = bench_now_s();
    if (chol_write_pose_graph(path, dim, poses, CHOL_POSE_GRAPH_SEED(poses)) != 0) {
        snprintf(err, errsize, "cannot write %s: %s", path, strerror(errno));
        remove(path);
        return -1;
    }
    const int rc = chol_input_g2o(host, path, m, err, errsize);
    remove(path);
    snprintf(m->name, sizeof m->name, "poses%dd-%lld", dim, (long long)poses);
    m->build_s = bench_now_s() - t0;
    return rc;
}
