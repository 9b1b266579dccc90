/* SPDX-License-Identifier: BSD-3-Clause */
/* g2o information matrices: the positive semidefinite check of sbm_g2o_read / sbm_g2o_read_ex
 * (refusal with file:line, edge, smallest eigenvalue and count) and the repair option (the
 * nearest PSD matrix), against an independent parse of the files and an independent eigen
 * solver (LAPACK dsyev here, cyclic Jacobi rotations in the library). Files:
 * tests/data/g2o/indefinite2d.g2o and indefinite3d.g2o (real first lines with some matrices made
 * indefinite; tests/data/SOURCES.md), the real files of tests/data, seeded random matrices of
 * every kind and scale, small files for the tolerance, singular matrices and the errors, and
 * the optional shared data (SBM_DATA_DIR). */
#define _POSIX_C_SOURCE 200809L

#include "test_util.h"

#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Reference: LAPACK's eigen solver, and the projection built on it                         */
/* ---------------------------------------------------------------------------------------- */

/* A = V diag(w) V^T for the symmetric n x n A (column-major, n <= 6), by LAPACK dsyev (the
 * library uses its own Jacobi rotations). */
static void reference_eig(int n, const double *A, double *w, double *V)
{
    double fro = 0.0;
    memcpy(V, A, (size_t)(n * n) * sizeof(double));
    for (int k = 0; k < n * n; k++) fro += A[k] * A[k];
    assert_int_equal(LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'U', n, V, n, w), 0);
    /* the reference checks itself: V orthogonal, V diag(w) V^T = A */
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++) {
            double vv = 0.0, vwv = 0.0;
            for (int k = 0; k < n; k++) {
                vv += V[k + n * r] * V[k + n * c];
                vwv += V[r + n * k] * w[k] * V[c + n * k];
            }
            assert_true(fabs(vv - (r == c)) <= 1e-13);
            assert_true(fabs(vwv - A[r + n * c]) <= 1e-13 * sqrt(fro));
        }
}

/* Smallest eigenvalue and largest magnitude. */
static void eig_range(int n, const double *A, double *smallest, double *largest)
{
    double w[6], V[36];
    reference_eig(n, A, w, V);
    *smallest = w[0];
    *largest = fabs(w[0]);
    for (int k = 1; k < n; k++) {
        *smallest = fmin(*smallest, w[k]);
        *largest = fmax(*largest, fabs(w[k]));
    }
}

static int is_psd(int n, const double *A)
{
    double lo, hi;
    eig_range(n, A, &lo, &hi);
    return lo >= -SBM_G2O_PSD_TOLERANCE * hi;
}

/* P = V max(w, 0) V^T from the reference decomposition. */
static void project_reference(int n, const double *A, double *P)
{
    double w[6], V[36];
    reference_eig(n, A, w, V);
    for (int c = 0; c < n; c++)
        for (int r = 0; r < n; r++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += V[r + n * k] * fmax(w[k], 0.0) * V[c + n * k];
            P[r + n * c] = s;
        }
}

/* P is the Frobenius projection of A on the PSD cone: P exactly symmetric, equal to the
 * reference, PSD, and (Moreau) A - P negative semidefinite with P (P - A) = 0. */
static void assert_projection(int n, const double *A, const double *P)
{
    double R[36], D[36], norm = 0.0;
    project_reference(n, A, R);
    for (int k = 0; k < n * n; k++) norm = fmax(norm, fabs(A[k]));
    for (int c = 0; c < n; c++)
        for (int r = 0; r < n; r++) {
            assert_true(P[r + n * c] == P[c + n * r]);
            assert_true(fabs(P[r + n * c] - R[r + n * c]) <= 1e-12 * n * norm);
            D[r + n * c] = P[r + n * c] - A[r + n * c];
        }
    assert_true(is_psd(n, P));
    double lo, hi;
    eig_range(n, D, &lo, &hi);
    assert_true(lo >= -1e-12 * n * norm);
    for (int c = 0; c < n; c++)
        for (int r = 0; r < n; r++) {
            double s = 0.0;
            for (int k = 0; k < n; k++) s += P[r + n * k] * D[k + n * c];
            assert_true(fabs(s) <= 1e-11 * n * norm * norm);
        }
}

/* ---------------------------------------------------------------------------------------- */
/* Independent parse of a file's edges                                                      */
/* ---------------------------------------------------------------------------------------- */

typedef struct file_edges {
    int64_t n;        /* edges */
    int dim;          /* error dimension, 3 or 6 */
    double *omega;    /* dim*dim per edge, full, column-major */
    int64_t *line;    /* line of each edge */
    int32_t *from, *to;
} file_edges;

static void read_edges(const char *path, file_edges *fe)
{
    memset(fe, 0, sizeof *fe);
    FILE *f = sbm_test_open_plain(path);
    static char text[1 << 12];
    int64_t cap = 0, ln = 0;
    while (fgets(text, sizeof text, f)) {
        ln++;
        char tag[32];
        int used = 0, u;
        if (sscanf(text, "%31s%n", tag, &used) != 1) continue;
        const int is2 = !strcmp(tag, "EDGE_SE2"), is3 = !strcmp(tag, "EDGE_SE3:QUAT");
        if (!is2 && !is3) continue;
        const int d = is2 ? 3 : 6, ps = is2 ? 3 : 7;
        fe->dim = d;
        if (fe->n == cap) {
            cap = cap ? 2 * cap : 64;
            fe->omega = realloc(fe->omega, (size_t)cap * 36 * sizeof(double));
            fe->line = realloc(fe->line, (size_t)cap * sizeof(int64_t));
            fe->from = realloc(fe->from, (size_t)cap * sizeof(int32_t));
            fe->to = realloc(fe->to, (size_t)cap * sizeof(int32_t));
            assert_true(fe->omega && fe->line && fe->from && fe->to);
        }
        const char *p = text + used;
        int a, b;
        assert_int_equal(sscanf(p, "%d %d%n", &a, &b, &u), 2), p += u;
        double skip;
        for (int k = 0; k < ps; k++) assert_int_equal(sscanf(p, "%lf%n", &skip, &u), 1), p += u;
        double *om = fe->omega + (size_t)(d * d) * fe->n;
        for (int r = 0; r < d; r++)
            for (int c = r; c < d; c++) {
                assert_int_equal(sscanf(p, "%lf%n", &om[r + d * c], &u), 1), p += u;
                om[c + d * r] = om[r + d * c];
            }
        fe->line[fe->n] = ln, fe->from[fe->n] = a, fe->to[fe->n] = b;
        fe->n++;
    }
    fclose(f);
}

static void free_edges(file_edges *fe)
{
    free(fe->omega);
    free(fe->line);
    free(fe->from);
    free(fe->to);
}

/* ---------------------------------------------------------------------------------------- */
/* The files with indefinite matrices                                                       */
/* ---------------------------------------------------------------------------------------- */

typedef struct indefinite_file {
    const char *name;
    int64_t bad;        /* indefinite matrices */
    int64_t edges;
    const char *first;  /* "name:line: TAG from to" of the first */
} indefinite_file;

static const indefinite_file indefinite_files[] = {
    {"g2o/indefinite2d.g2o", 2, 7, "indefinite2d.g2o:11: EDGE_SE2 1 2: "},
    {"g2o/indefinite3d.g2o", 3, 7, "indefinite3d.g2o:12: EDGE_SE3:QUAT 2 3: "},
};

static void test_refuse(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const sbm_g2o_read_options refuse = sbm_g2o_read_default_options();
    assert_int_equal(refuse.information, SBM_G2O_INFORMATION_REFUSE);
    for (size_t f = 0; f < sizeof indefinite_files / sizeof indefinite_files[0]; f++) {
        const indefinite_file *x = &indefinite_files[f];
        const char *path = sbm_test_data_path(x->name);
        file_edges fe;
        read_edges(path, &fe);
        assert_int_equal(fe.n, x->edges);
        /* the file as described: the reference finds the same bad edges */
        int64_t bad = 0, first = -1;
        for (int64_t k = 0; k < fe.n; k++)
            if (!is_psd(fe.dim, fe.omega + (size_t)(fe.dim * fe.dim) * k)) bad++, first = first < 0 ? k : first;
        assert_int_equal(bad, x->bad);
        double lo, hi;
        eig_range(fe.dim, fe.omega + (size_t)(fe.dim * fe.dim) * first, &lo, &hi);
        char count[96];
        snprintf(count, sizeof count, "; %lld of the %lld edges in the file have such a matrix",
                 (long long)x->bad, (long long)x->edges);

        for (int how = 0; how < 3; how++) { /* sbm_g2o_read, _ex with NULL, _ex with REFUSE */
            sbm_g2o_graph *g = (sbm_g2o_graph *)x;
            const sbm_status st = how == 0   ? sbm_g2o_read(e->ctx, path, &g)
                                  : how == 1 ? sbm_g2o_read_ex(e->ctx, path, NULL, &g)
                                             : sbm_g2o_read_ex(e->ctx, path, &refuse, &g);
            assert_int_equal(st, SBM_ERR_PARSE);
            assert_null(g);
            const char *msg = sbm_ctx_last_error(e->ctx);
            assert_non_null(strstr(msg, how == 0 ? "sbm_g2o_read: " : "sbm_g2o_read_ex: "));
            assert_non_null(strstr(msg, x->first));
            assert_non_null(strstr(msg, "the information matrix is not positive semidefinite"));
            assert_non_null(strstr(msg, count));
            /* the smallest eigenvalue printed, against the reference (%.6g) */
            const char *v = strstr(msg, "smallest eigenvalue ");
            assert_non_null(v);
            const double got = strtod(v + strlen("smallest eigenvalue "), NULL);
            assert_true(got < 0.0 && fabs(got - lo) <= 1e-5 * fabs(lo));
        }
        free_edges(&fe);
    }
}

static void test_repair(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_g2o_read_options repair = sbm_g2o_read_default_options();
    repair.information = SBM_G2O_INFORMATION_REPAIR;
    for (size_t f = 0; f < sizeof indefinite_files / sizeof indefinite_files[0]; f++) {
        const indefinite_file *x = &indefinite_files[f];
        const char *path = sbm_test_data_path(x->name);
        file_edges fe;
        read_edges(path, &fe);
        sbm_g2o_graph *g = NULL;
        SBM_ASSERT_OK(e->ctx, sbm_g2o_read_ex(e->ctx, path, &repair, &g));
        const sbm_g2o_info gi = sbm_g2o_get_info(g);
        assert_int_equal(gi.edges, fe.n);
        assert_int_equal(gi.error_dim, fe.dim);
        assert_int_equal(gi.repaired_information, x->bad);
        const int d = fe.dim;
        int64_t changed = 0;
        for (int64_t k = 0; k < fe.n; k++) {
            const double *A = fe.omega + (size_t)(d * d) * k, *P = gi.edge_information + (size_t)(d * d) * k;
            assert_int_equal(gi.vertex_id[gi.edge_from[k]], fe.from[k]);
            assert_int_equal(gi.vertex_id[gi.edge_to[k]], fe.to[k]);
            if (is_psd(d, A)) {
                assert_memory_equal(P, A, (size_t)(d * d) * sizeof(double)); /* kept bitwise */
            } else {
                changed++;
                assert_projection(d, A, P);
            }
        }
        assert_int_equal(changed, x->bad);
        /* the repaired graph is a problem with a minimum: chi2 >= 0 */
        double chi2 = -1.0;
        SBM_ASSERT_OK(e->ctx, sbm_g2o_chi2(e->ctx, g, &chi2));
        assert_true(isfinite(chi2) && chi2 >= 0.0);
        sbm_g2o_destroy(g);
        free_edges(&fe);
    }
}

/* Files whose matrices are all PSD read the same, bitwise, under both options. */
static void assert_same_under_repair(sbm_ctx *ctx, const char *path, int64_t *edges)
{
    sbm_g2o_read_options repair = sbm_g2o_read_default_options();
    repair.information = SBM_G2O_INFORMATION_REPAIR;
    sbm_g2o_graph *a = NULL, *b = NULL;
    SBM_ASSERT_OK(ctx, sbm_g2o_read(ctx, path, &a));
    SBM_ASSERT_OK(ctx, sbm_g2o_read_ex(ctx, path, &repair, &b));
    const sbm_g2o_info ia = sbm_g2o_get_info(a), ib = sbm_g2o_get_info(b);
    assert_int_equal(ia.repaired_information, 0);
    assert_int_equal(ib.repaired_information, 0);
    assert_int_equal(ia.edges, ib.edges);
    const size_t d2 = (size_t)(ia.error_dim * ia.error_dim);
    assert_memory_equal(ia.edge_information, ib.edge_information, (size_t)ia.edges * d2 * sizeof(double));
    assert_memory_equal(ia.poses, ib.poses, (size_t)(ia.vertices * ia.pose_size) * sizeof(double));
    for (int64_t k = 0; k < ia.edges; k++) assert_true(is_psd(ia.error_dim, ia.edge_information + d2 * k));
    *edges = ia.edges;
    sbm_g2o_destroy(a);
    sbm_g2o_destroy(b);
}

static void test_psd_files_unchanged(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const char *files[] = {"g2o/CSAIL.g2o",          "g2o/intel.g2o",       "g2o/manhattan.g2o",
                                  "g2o/parking-garage.g2o", "g2o/smallGrid3D.g2o", "g2o/sphere2500.g2o",
                                  "g2o/tinyGrid3D.g2o"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        int64_t edges;
        assert_same_under_repair(e->ctx, sbm_test_data_path(files[f]), &edges);
        assert_true(edges > 0);
    }
}

/* Seeded random matrices, 3x3 and 6x6, scaled by 10^-60 .. 10^60: symmetric with random entries
 * (mostly indefinite), B B^T of random rank (PSD, often singular), and B B^T - d * max|w| * I
 * with B of rank n - 1 (d = 1e-6: refused; d = 1e-12: inside the tolerance). Written with %.17g,
 * so the reference parses the same bits. */
static void test_random(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_g2o_read_options repair = sbm_g2o_read_default_options();
    repair.information = SBM_G2O_INFORMATION_REPAIR;
    for (int d = 3; d <= 6; d += 3) {
        sbm_test_rng rng = sbm_test_rng_seed(0x5eed00 + (uint64_t)d);
        const char *path = sbm_test_tmp_path(d == 3 ? "random2d.g2o" : "random3d.g2o");
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        const int nedges = 400;
        for (int k = 0; k < nedges; k++) {
            double A[36], B[36];
            const int kind = (int)sbm_test_rng_below(&rng, 4);
            const int rank = kind == 1 ? 1 + (int)sbm_test_rng_below(&rng, d) : d - 1;
            for (int q = 0; q < d * d; q++) B[q] = sbm_test_rng_value(&rng);
            for (int c = 0; c < d; c++)
                for (int r = 0; r <= c; r++) {
                    double x = 0.0;
                    if (kind == 0) x = sbm_test_rng_value(&rng);
                    else
                        for (int t = 0; t < rank; t++) x += B[r + d * t] * B[c + d * t];
                    A[r + d * c] = A[c + d * r] = x;
                }
            if (kind >= 2) {
                double lo, hi;
                eig_range(d, A, &lo, &hi);
                for (int q = 0; q < d; q++) A[q + d * q] -= (kind == 2 ? 1e-6 : 1e-12) * hi;
            }
            const double scale = pow(10.0, (double)(sbm_test_rng_below(&rng, 121) - 60));
            fprintf(f, d == 3 ? "EDGE_SE2 %d %d 1 0 0" : "EDGE_SE3:QUAT %d %d 1 0 0 0 0 0 1", k, k + 1);
            for (int r = 0; r < d; r++)
                for (int c = r; c < d; c++) fprintf(f, " %.17g", A[r + d * c] * scale);
            fputc('\n', f);
        }
        assert_int_equal(fclose(f), 0);

        file_edges fe;
        read_edges(path, &fe);
        assert_int_equal(fe.n, nedges);
        int64_t bad = 0, first = -1;
        for (int64_t k = 0; k < fe.n; k++)
            if (!is_psd(d, fe.omega + (size_t)(d * d) * k)) bad++, first = first < 0 ? k : first;
        assert_true(bad > nedges / 4 && bad < nedges); /* every kind is there */
        char where[160];
        snprintf(where, sizeof where, "%s:%lld: %s %d %d: ", d == 3 ? "random2d.g2o" : "random3d.g2o",
                 (long long)fe.line[first], d == 3 ? "EDGE_SE2" : "EDGE_SE3:QUAT", (int)fe.from[first],
                 (int)fe.to[first]);
        sbm_g2o_graph *g = NULL;
        SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read(e->ctx, path, &g), SBM_ERR_PARSE, where);
        snprintf(where, sizeof where, "; %lld of the %d edges", (long long)bad, nedges);
        SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read(e->ctx, path, &g), SBM_ERR_PARSE, where);
        SBM_ASSERT_OK(e->ctx, sbm_g2o_read_ex(e->ctx, path, &repair, &g));
        const sbm_g2o_info gi = sbm_g2o_get_info(g);
        assert_int_equal(gi.repaired_information, bad);
        for (int64_t k = 0; k < fe.n; k++) {
            const double *A = fe.omega + (size_t)(d * d) * k, *P = gi.edge_information + (size_t)(d * d) * k;
            if (is_psd(d, A))
                assert_memory_equal(P, A, (size_t)(d * d) * sizeof(double));
            else
                assert_projection(d, A, P);
        }
        sbm_g2o_destroy(g);
        free_edges(&fe);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Small files: singular matrices, the tolerance, the order of errors, the arguments         */
/* ---------------------------------------------------------------------------------------- */

#define V2 "VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 1 0 0\n"
#define E2 "EDGE_SE2 0 1 1 0 0 "
#define E3 "EDGE_SE3:QUAT 0 1 1 0 0 0 0 0 1 "

static void test_singular_and_tolerance(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const char *accepted[] = {
        V2 E2 "1 2 3 4 6 9\n",       /* v v^T, v = (1 2 3): eigenvalues 0, 0, 14 */
        V2 E2 "0 0 0 0 0 0\n",       /* zero */
        V2 E2 "1 0 0 1 0 -1e-12\n",  /* -1e-12 of the largest: inside the tolerance */
        E3 "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 100 0 0 100 0 100\n", /* rotation only */
        E3 "1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1\n",       /* all ones: rank 1 */
    };
    for (size_t k = 0; k < sizeof accepted / sizeof accepted[0]; k++) {
        char name[32];
        snprintf(name, sizeof name, "singular%zu.g2o", k);
        int64_t edges;
        assert_same_under_repair(e->ctx, sbm_test_write_text(name, accepted[k]), &edges);
        assert_int_equal(edges, 1);
    }

    /* -1e-8 of the largest: outside; refused, and repaired to diag(1, 1, 0) */
    const char *path = sbm_test_write_text("tol.g2o", V2 E2 "1 0 0 1 0 -1e-8\n");
    sbm_g2o_graph *g = NULL;
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read(e->ctx, path, &g), SBM_ERR_PARSE,
                     "tol.g2o:3: EDGE_SE2 0 1: the information matrix is not positive "
                     "semidefinite: smallest eigenvalue -1e-08 (largest magnitude 1, tolerance "
                     "1e-10 of it); 1 of the 1 edges");
    sbm_g2o_read_options repair = sbm_g2o_read_default_options();
    repair.information = SBM_G2O_INFORMATION_REPAIR;
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read_ex(e->ctx, path, &repair, &g));
    const double want[9] = {1, 0, 0, 0, 1, 0, 0, 0, 0};
    const sbm_g2o_info gi = sbm_g2o_get_info(g);
    assert_int_equal(gi.repaired_information, 1);
    for (int k = 0; k < 9; k++) assert_true(fabs(gi.edge_information[k] - want[k]) <= 1e-15);
    sbm_g2o_destroy(g);

    /* every negative eigenvalue is dropped, also one inside the tolerance: diag(1, -1e-11, -1)
     * -> diag(1, 0, 0) */
    path = sbm_test_write_text("twoneg.g2o", V2 E2 "1 0 0 -1e-11 0 -1\n");
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read_ex(e->ctx, path, &repair, &g));
    const double want1[9] = {1, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int k = 0; k < 9; k++) assert_true(fabs(sbm_g2o_get_info(g).edge_information[k] - want1[k]) <= 1e-15);
    sbm_g2o_destroy(g);

    /* a negative diagonal entry is one indefinite matrix among others: counted, repairable */
    path = sbm_test_write_text("negdiag.g2o", V2 E2 "-1 0 0 1 0 1\n" E2 "1 0 0 1 0 1\n" E2 "4 0 0 -2 0 1\n");
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read(e->ctx, path, &g), SBM_ERR_PARSE,
                     "negdiag.g2o:3: EDGE_SE2 0 1: the information matrix is not positive "
                     "semidefinite: smallest eigenvalue -1 (largest magnitude 1,");
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read(e->ctx, path, &g), SBM_ERR_PARSE, "; 2 of the 3 edges");
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read_ex(e->ctx, path, &repair, &g));
    assert_int_equal(sbm_g2o_get_info(g).repaired_information, 2);
    const double want2[9] = {4, 0, 0, 0, 0, 0, 0, 0, 1};
    for (int k = 0; k < 9; k++) assert_true(fabs(sbm_g2o_get_info(g).edge_information[18 + k] - want2[k]) <= 1e-15);
    sbm_g2o_destroy(g);
}

static void test_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_g2o_read_options repair = sbm_g2o_read_default_options();
    repair.information = SBM_G2O_INFORMATION_REPAIR;
    sbm_g2o_graph *g = NULL;
    /* a malformed line stops the reading at once, also after an indefinite matrix */
    const char *path = sbm_test_write_text("order.g2o", V2 E2 "1 5 0 1 0 1\n" E2 "1 0 0 1 0\n");
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read(e->ctx, path, &g), SBM_ERR_PARSE, "order.g2o:4: EDGE_SE2 needs 11 values");
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read_ex(e->ctx, path, &repair, &g), SBM_ERR_PARSE, "order.g2o:4:");
    /* the refusal comes before the checks of vertex ids that follow the scan */
    path = sbm_test_write_text("order2.g2o", "VERTEX_SE2 0 0 0 0\n" E2 "1 5 0 1 0 1\n");
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read(e->ctx, path, &g), SBM_ERR_PARSE, "order2.g2o:2: EDGE_SE2 0 1: the information");
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read_ex(e->ctx, path, &repair, &g), SBM_ERR_PARSE,
                     "order2.g2o:2: EDGE_SE2 names vertex 1, which has no VERTEX line");
    /* non-finite entries keep their own error, whatever the option */
    static const char *nonfinite[] = {V2 E2 "1 0 0 nan 0 1\n", V2 E2 "1 0 0 1 0 -inf\n",
                                      "EDGE_SE3:QUAT 0 1 1 0 0 0 0 0 1 1 0 0 0 0 0 1 0 0 0 0 1 0 0 0 inf 0 0 1 0 1\n"};
    for (size_t k = 0; k < 3; k++) {
        char name[32];
        snprintf(name, sizeof name, "nonfinite%zu.g2o", k);
        path = sbm_test_write_text(name, nonfinite[k]);
        SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read(e->ctx, path, &g), SBM_ERR_PARSE, "is not finite");
        SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read_ex(e->ctx, path, &repair, &g), SBM_ERR_PARSE, "is not finite");
        assert_null(g);
    }
    /* arguments */
    sbm_g2o_read_options bad = sbm_g2o_read_default_options();
    bad.information = (sbm_g2o_information)7;
    path = sbm_test_data_path("g2o/tinyGrid3D.g2o");
    g = (sbm_g2o_graph *)&bad;
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read_ex(e->ctx, path, &bad, &g), SBM_ERR_INVALID_ARGUMENT,
                     "sbm_g2o_read_ex: argument options: information = 7 is not an sbm_g2o_information");
    assert_null(g);
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read_ex(e->ctx, NULL, &repair, &g), SBM_ERR_NULL_ARGUMENT, "argument path");
    SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read_ex(e->ctx, path, &repair, NULL), SBM_ERR_NULL_ARGUMENT, "argument graph");
    assert_int_equal(sbm_g2o_read_ex(NULL, path, &repair, &g), SBM_ERR_NULL_ARGUMENT);
    /* the context is still usable; a zeroed struct is the default */
    sbm_g2o_read_options zero;
    memset(&zero, 0, sizeof zero);
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read_ex(e->ctx, path, &zero, &g));
    assert_int_equal(sbm_g2o_get_info(g).repaired_information, 0);
    sbm_g2o_destroy(g);
    assert_int_equal(sbm_g2o_get_info(NULL).repaired_information, 0);
}

/* ---------------------------------------------------------------------------------------- */
/* Optional shared data                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* Every g2o file of SBM_DATA_DIR, with the count of indefinite information matrices found in it
 * (by the reference here and by the library: none, in g2o's row-major upper-triangle order). */
static void test_shared_data(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const struct {
        const char *name;
        int64_t bad;
    } files[] = {
        {"g2o/CSAIL.g2o", 0},          {"g2o/ais2klinik.g2o", 0},  {"g2o/intel.g2o", 0},
        {"g2o/kitti_05.g2o", 0},       {"g2o/manhattan.g2o", 0},   {"g2o/parking-garage.g2o", 0},
        {"g2o/smallGrid3D.g2o", 0},    {"g2o/sphere2500.g2o", 0},  {"g2o/sphere_bignoise_vertex3.g2o", 0},
        {"g2o/tinyGrid3D.g2o", 0},
    };
    int found = 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        const char *p = sbm_test_extra_data_find(files[f].name);
        if (!p) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s", p);
        found++;
        file_edges fe;
        read_edges(path, &fe);
        int64_t bad = 0;
        for (int64_t k = 0; k < fe.n; k++) bad += !is_psd(fe.dim, fe.omega + (size_t)(fe.dim * fe.dim) * k);
        assert_int_equal(bad, files[f].bad);
        const int64_t n = fe.n;
        free_edges(&fe);
        if (bad == 0) {
            int64_t edges;
            assert_same_under_repair(e->ctx, path, &edges);
            assert_int_equal(edges, n);
            continue;
        }
        char count[96];
        snprintf(count, sizeof count, "; %lld of the %lld edges in the file have such a matrix",
                 (long long)bad, (long long)n);
        sbm_g2o_graph *g = NULL;
        SBM_ASSERT_FAILS(e->ctx, sbm_g2o_read(e->ctx, path, &g), SBM_ERR_PARSE, count);
        sbm_g2o_read_options repair = sbm_g2o_read_default_options();
        repair.information = SBM_G2O_INFORMATION_REPAIR;
        SBM_ASSERT_OK(e->ctx, sbm_g2o_read_ex(e->ctx, path, &repair, &g));
        assert_int_equal(sbm_g2o_get_info(g).repaired_information, bad);
        sbm_g2o_destroy(g);
    }
    sbm_test_extra_data_done(found, (int)(sizeof files / sizeof files[0]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_refuse),
        SBM_TEST_BOTH(test_repair),
        SBM_TEST_BOTH(test_psd_files_unchanged),
        SBM_TEST_BOTH(test_random),
        SBM_TEST_BOTH(test_singular_and_tolerance),
        SBM_TEST_BOTH(test_errors),
        SBM_TEST_CPU(test_shared_data),
    };
    return cmocka_run_group_tests(tests, sbm_test_make_tmp_dir, sbm_test_remove_tmp_dir);
}
