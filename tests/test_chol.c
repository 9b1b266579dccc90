/* Sparse block Cholesky (sbm_chol_*): solutions against a dense Cholesky written here, on seeded
 * random SPD block matrices of every block size 1..9 and several patterns, both orderings,
 * amalgamation on and off, the three dampings, one and several right-hand sides, in place and
 * with ldb > n; degenerate shapes; refactorisation; not positive definite (status, message,
 * failed column); bitwise repeatability; every error path; Lambda of g2o graphs and S of a BAL
 * problem. The [cuda] variants factor on the device and agree with the CPU backend. */
#include "test_util.h"
#include "sbm_internal.h"
#include "chol_symbolic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Random SPD block matrices and the dense reference                                        */
/* ---------------------------------------------------------------------------------------- */

enum { PAT_RANDOM, PAT_BANDED, PAT_ARROW, PAT_GRID, PAT_PIECES, NPATTERNS };
static const char *const pattern_names[NPATTERNS] = {"random", "banded", "arrow", "grid", "pieces"};

/* An SPD matrix: its dense full form and the triplets of its upper block triangle. */
typedef struct spd_matrix {
    int64_t nb, n;
    int b;
    double *dense;     /* n x n, full symmetric */
    int64_t nt;        /* stored blocks */
    int32_t *brow, *bcol;
    double *vals;      /* nt b x b blocks */
} spd_matrix;

static int in_pattern(int pattern, int64_t i, int64_t j, int64_t nb, sbm_test_rng *g)
{
    const int64_t side = (int64_t)ceil(sqrt((double)nb));
    switch (pattern) {
    case PAT_RANDOM: return sbm_test_rng_uniform(g) < 0.15;
    case PAT_BANDED: return j - i <= 2;
    case PAT_ARROW: return i == 0; /* column 0 dense: much fill in the natural order */
    case PAT_GRID: return (j == i + 1 && j % side != 0) || j == i + side;
    default: return i % 3 == j % 3 && sbm_test_rng_uniform(g) < 0.4; /* three pieces */
    }
}

static void spd_free(spd_matrix *m)
{
    free(m->dense);
    free(m->brow);
    free(m->bcol);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* Blocks (i, j), i < j, of the pattern with random values, diagonal blocks (with_diag) random
 * symmetric and made diagonally dominant, so that the matrix is SPD. */
static spd_matrix spd_make(uint64_t seed, int64_t nb, int b, int pattern, int with_diag)
{
    spd_matrix m;
    memset(&m, 0, sizeof m);
    sbm_test_rng g = sbm_test_rng_seed(seed);
    m.nb = nb, m.b = b, m.n = nb * b;
    m.dense = calloc((size_t)(m.n * m.n + 1), sizeof(double));
    m.brow = malloc((size_t)(nb * nb + 1) * sizeof(int32_t));
    m.bcol = malloc((size_t)(nb * nb + 1) * sizeof(int32_t));
    const int64_t n = m.n;
    for (int64_t j = 0; j < nb; j++)
        for (int64_t i = 0; i <= j; i++) {
            if (i == j ? !with_diag : !in_pattern(pattern, i, j, nb, &g)) continue;
            m.brow[m.nt] = (int32_t)i;
            m.bcol[m.nt++] = (int32_t)j;
            for (int c = 0; c < b; c++)
                for (int r = 0; r < b; r++) {
                    if (i == j && r > c) continue;
                    const double v = sbm_test_rng_value(&g);
                    m.dense[(i * b + r) + (j * b + c) * n] = v;
                    m.dense[(j * b + c) + (i * b + r) * n] = v;
                }
        }
    for (int64_t r = 0; r < n && with_diag; r++) {
        double s = 0;
        for (int64_t c = 0; c < n; c++)
            if (c != r) s += fabs(m.dense[r + c * n]);
        m.dense[r + r * n] = s + 0.5 + sbm_test_rng_uniform(&g);
    }
    m.vals = malloc((size_t)(m.nt * b * b + 1) * sizeof(double));
    for (int64_t t = 0; t < m.nt; t++)
        for (int c = 0; c < b; c++)
            for (int r = 0; r < b; r++)
                m.vals[t * b * b + r + c * b] =
                    m.dense[(m.brow[t] * b + r) + (m.bcol[t] * b + c) * n];
    return m;
}

static sbm_cbc *spd_cbc(sbm_ctx *ctx, const spd_matrix *m)
{
    sbm_cbc *A = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_from_triplets(ctx, &A, m->nb, m->nb, m->b, m->b, m->nt, m->brow,
                                             m->bcol, m->vals));
    return A;
}

/* X = (M + damping)^-1 B by a dense Cholesky (n x n, column-major). @return 0, or -1 if not
 * positive definite. */
static int dense_solve(const double *M, int64_t n, int damping, double lambda, int64_t nrhs,
                       const double *B, double *X)
{
    double *L = malloc((size_t)(n * n + 1) * sizeof(double));
    memcpy(L, M, (size_t)(n * n) * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        const double d = M[i + i * n];
        if (damping == SBM_DAMPING_IDENTITY) L[i + i * n] += lambda;
        if (damping == SBM_DAMPING_DIAGONAL) L[i + i * n] += lambda * fmin(fmax(d, 1e-6), 1e32);
    }
    for (int64_t j = 0; j < n; j++) {
        double d = L[j + j * n];
        for (int64_t k = 0; k < j; k++) d -= L[j + k * n] * L[j + k * n];
        if (!(d > 0)) {
            free(L);
            return -1;
        }
        L[j + j * n] = sqrt(d);
        for (int64_t i = j + 1; i < n; i++) {
            double s = L[i + j * n];
            for (int64_t k = 0; k < j; k++) s -= L[i + k * n] * L[j + k * n];
            L[i + j * n] = s / L[j + j * n];
        }
    }
    for (int64_t r = 0; r < nrhs; r++) {
        double *x = X + r * n;
        memcpy(x, B + r * n, (size_t)n * sizeof(double));
        for (int64_t i = 0; i < n; i++) {
            for (int64_t k = 0; k < i; k++) x[i] -= L[i + k * n] * x[k];
            x[i] /= L[i + i * n];
        }
        for (int64_t i = n - 1; i >= 0; i--) {
            for (int64_t k = i + 1; k < n; k++) x[i] -= L[k + i * n] * x[k];
            x[i] /= L[i + i * n];
        }
    }
    free(L);
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Plan, factor and solve in a context                                                      */
/* ---------------------------------------------------------------------------------------- */

typedef struct solve_case {
    sbm_chol_options opt;
    int damping;
    double lambda;
    int64_t nrhs;
    int64_t ld_extra; /* ldb = ldx = n + ld_extra */
    int in_place;
} solve_case;

/* X (host, n x nrhs packed) = A^-1 B in ctx through sbm_chol_*. */
static void chol_solve_in(sbm_ctx *ctx, const sbm_cbc *A, const solve_case *c, const double *B,
                          int64_t n, double *X)
{
    const int64_t ld = n + c->ld_extra, nrhs = c->nrhs;
    sbm_chol *chol = NULL;
    SBM_ASSERT_OK(ctx, sbm_chol_plan(ctx, A, &c->opt, &chol));
    SBM_ASSERT_OK(ctx, sbm_chol_factor(ctx, chol, A, (sbm_damping)c->damping, c->lambda));
    const sbm_chol_info info = sbm_chol_get_info(chol);
    assert_int_equal(info.factored, 1);
    assert_int_equal(info.failed_column, -1);
    double *hb = calloc((size_t)(ld * nrhs + 1), sizeof(double));
    for (int64_t r = 0; r < nrhs; r++) memcpy(hb + r * ld, B + r * n, (size_t)n * sizeof(double));
    double *dB = sbm_test_vec_upload(ctx, hb, ld * nrhs);
    double *dX = c->in_place ? dB : sbm_test_vec_upload(ctx, hb, ld * nrhs);
    SBM_ASSERT_OK(ctx, sbm_chol_solve(ctx, chol, nrhs, dB, ld, dX, ld));
    double *hx = sbm_test_vec_download(ctx, dX, ld * nrhs);
    for (int64_t r = 0; r < nrhs; r++) memcpy(X + r * n, hx + r * ld, (size_t)n * sizeof(double));
    free(hx);
    free(hb);
    if (dX != dB) sbm__free(ctx, dX);
    sbm__free(ctx, dB);
    sbm_chol_destroy(chol);
}

/* The solution in e->ctx agrees with the dense reference and, on a device, with the CPU
 * backend's to 1e-10. */
static void check_case(sbm_test_env *e, const spd_matrix *m, const solve_case *c, const char *what)
{
    const int64_t n = m->n, nrhs = c->nrhs;
    double *B = sbm_test_random_vector(77 + (uint64_t)n, n * nrhs);
    double *X = malloc((size_t)(n * nrhs + 1) * sizeof(double));
    double *R = malloc((size_t)(n * nrhs + 1) * sizeof(double));
    assert_int_equal(dense_solve(m->dense, n, c->damping, c->lambda, nrhs, B, R), 0);
    sbm_cbc *A = spd_cbc(e->ctx, m);
    chol_solve_in(e->ctx, A, c, B, n, X);
    sbm_test_assert_near(X, R, n * nrhs, 1e-9, what);
    if (e->backend != SBM_BACKEND_CPU) {
        sbm_cbc *H = spd_cbc(e->host, m);
        double *XH = malloc((size_t)(n * nrhs + 1) * sizeof(double));
        chol_solve_in(e->host, H, c, B, n, XH);
        sbm_test_assert_near(X, XH, n * nrhs, 1e-10, what);
        free(XH);
        sbm_cbc_destroy(H);
    }
    sbm_cbc_destroy(A);
    free(B);
    free(X);
    free(R);
}

static solve_case default_case(void)
{
    solve_case c;
    memset(&c, 0, sizeof c);
    c.opt = sbm_chol_default_options();
    c.nrhs = 1;
    return c;
}

/* Every block size 1..9, every pattern, both orderings, amalgamation off and on (the default
 * and a generous one), the dampings, 1 and 3 right-hand sides, in place, ldb > n. */
static void test_chol_random(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const double relax[3] = {0.0, 0.2, 0.8};
    int idx = 0;
    for (int b = 1; b <= 9; b++)
        for (int p = 0; p < NPATTERNS; p++) {
            const int64_t nb = 10 + (b * 7 + p * 5) % 23;
            spd_matrix m = spd_make(1000 + (uint64_t)(b * 10 + p), nb, b, p, 1);
            for (int ord = 0; ord < 2; ord++)
                for (int rl = 0; rl < 3; rl++, idx++) {
                    solve_case c = default_case();
                    c.opt.ordering = ord ? SBM_CHOL_ORDERING_NATURAL : SBM_CHOL_ORDERING_AMD;
                    c.opt.relax_zeros = relax[rl];
                    c.opt.relax_max_columns = rl == 2 ? 4 : 64;
                    c.damping = idx % 3;
                    c.lambda = c.damping ? 0.25 * (idx % 5) : 0.0;
                    c.nrhs = idx % 2 ? 3 : 1;
                    c.in_place = idx % 4 == 1;
                    c.ld_extra = idx % 3 == 2 ? 5 : 0;
                    char what[160];
                    snprintf(what, sizeof what, "b %d, %s pattern, nb %lld, %s, relax %g, damping %d",
                             b, pattern_names[p], (long long)nb, ord ? "natural" : "AMD",
                             relax[rl], c.damping);
                    check_case(e, &m, &c, what);
                }
            spd_free(&m);
        }
}

/* The symbolic structure is consistent: a permutation; fronts ascending with their own columns
 * first; every block of the true L (block-level symbolic elimination of P A P^T here) inside its
 * column's front; panels end to end; extend-add rows found in the parent; levels children first;
 * A's assembly offsets as chol_internal.h spells them. */
static void check_symbolic(const sbm__chol_symbolic *s, const spd_matrix *m)
{
    const int64_t nb = s->nb, b = s->b;
    char *L = calloc((size_t)(nb * nb + 1), 1);
    for (int64_t t = 0; t < m->nt; t++) {
        const int64_t i = s->iperm[m->brow[t]], j = s->iperm[m->bcol[t]];
        L[(i > j ? i : j) + (i < j ? i : j) * nb] = 1;
    }
    for (int64_t k = 0; k < nb; k++) { /* fill: L(i, j) and L(k, j) give L(i, k) */
        assert_int_equal(s->perm[s->iperm[k]], k);
        L[k + k * nb] = 1;
        for (int64_t j = 0; j < k; j++)
            if (L[k + j * nb])
                for (int64_t i = k + 1; i < nb; i++)
                    if (L[i + j * nb]) L[i + k * nb] = 1;
    }
    assert_int_equal(s->sup_col[0], 0);
    assert_int_equal(s->sup_col[s->nsuper], nb);
    int64_t *level = calloc((size_t)s->nsuper + 1, sizeof(int64_t));
    for (int64_t l = 0; l < s->nlevels; l++)
        for (int64_t q = s->level_ptr[l]; q < s->level_ptr[l + 1]; q++) level[s->level_sup[q]] = l;
    assert_int_equal(s->level_ptr[s->nlevels], s->nsuper);
    for (int64_t t = 0; t < s->nsuper; t++) {
        const int64_t k = s->sup_col[t + 1] - s->sup_col[t], *rows = s->sup_rows + s->sup_rowptr[t];
        const int64_t mt = s->sup_rowptr[t + 1] - s->sup_rowptr[t];
        assert_true(k >= 1 && mt >= k);
        assert_int_equal(s->L_ptr[t + 1] - s->L_ptr[t], mt * b * k * b);
        for (int64_t q = 0; q < mt; q++) {
            if (q < k) assert_int_equal(rows[q], s->sup_col[t] + q);
            if (q > 0) assert_true(rows[q] > rows[q - 1]);
        }
        for (int64_t c = s->sup_col[t]; c < s->sup_col[t + 1]; c++) {
            assert_int_equal(s->col_sup[c], t);
            for (int64_t i = c; i < nb; i++)
                if (L[i + c * nb]) {
                    int64_t q = 0;
                    while (q < mt && rows[q] != i) q++;
                    if (q == mt) fail_msg("L(%lld, %lld) is not in front %lld", (long long)i, (long long)c, (long long)t);
                }
        }
        const int64_t par = s->sup_parent[t];
        assert_int_equal(s->rel_ptr[t + 1] - s->rel_ptr[t], mt - k);
        if (par < 0) {
            assert_int_equal(mt, k);
            continue;
        }
        assert_true(par > t);
        assert_true(level[par] > level[t]);
        assert_int_equal(par, s->col_sup[rows[k]]);
        for (int64_t u = 0; u < mt - k; u++)
            assert_int_equal(s->sup_rows[s->sup_rowptr[par] + s->rel[s->rel_ptr[t] + u]], rows[k + u]);
    }
    for (int64_t t = 0; t < m->nt; t++) {
        const int64_t i = s->iperm[m->brow[t]], j = s->iperm[m->bcol[t]];
        const int64_t c = i < j ? i : j, r = i < j ? j : i, sn = s->col_sup[c];
        const int64_t mt = s->sup_rowptr[sn + 1] - s->sup_rowptr[sn];
        int64_t q = 0;
        while (s->sup_rows[s->sup_rowptr[sn] + q] != r) q++;
        assert_int_equal(s->a_sup[t], sn);
        assert_int_equal(s->a_trans[t], i < j);
        assert_int_equal(s->a_dst[t], s->L_ptr[sn] + (c - s->sup_col[sn]) * b * mt * b + q * b);
    }
    free(level);
    free(L);
}

static void test_chol_symbolic(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (int p = 0; p < NPATTERNS; p++)
        for (int v = 0; v < 4; v++) {
            spd_matrix m = spd_make(50 + (uint64_t)(p * 4 + v), 40 + v, 2, p, 1);
            sbm_cbc *A = spd_cbc(e->ctx, &m);
            sbm_chol_options o = sbm_chol_default_options();
            o.ordering = v % 2 ? SBM_CHOL_ORDERING_NATURAL : SBM_CHOL_ORDERING_AMD;
            o.relax_zeros = v < 2 ? 0.0 : 0.5;
            sbm_chol *chol = NULL;
            SBM_ASSERT_OK(e->ctx, sbm_chol_plan(e->ctx, A, &o, &chol));
            const sbm__chol_symbolic *s = sbm__chol_symbolic_of(chol);
            check_symbolic(s, &m);
            const sbm_chol_info info = sbm_chol_get_info(chol);
            assert_int_equal(info.block_columns, m.nb);
            assert_int_equal(info.block_size, 2);
            assert_int_equal(info.supernodes, s->nsuper);
            assert_int_equal(info.factor_values, s->L_ptr[s->nsuper]);
            assert_int_equal(info.max_front, s->max_front);
            assert_ptr_equal(info.perm, s->perm);
            assert_true(info.flops > 0);
            assert_int_equal(info.factored, 0);
            if (o.ordering == SBM_CHOL_ORDERING_NATURAL && p == PAT_BANDED)
                for (int64_t k = 0; k < m.nb; k++) assert_int_equal(info.perm[k], k); /* a chain */
            sbm_chol_destroy(chol);
            sbm_cbc_destroy(A);
            spd_free(&m);
        }
}

/* nb = 0, nb = 1, a diagonal-only matrix, a block column without a stored diagonal block. */
static void test_chol_degenerate(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    /* empty */
    sbm_cbc *E = NULL;
    const int64_t zero = 0;
    SBM_ASSERT_OK(e->ctx, sbm_cbc_create(e->ctx, &E, 0, 0, 3, 3, &zero, NULL, NULL));
    sbm_chol *chol = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_chol_plan(e->ctx, E, NULL, &chol));
    SBM_ASSERT_OK(e->ctx, sbm_chol_factor(e->ctx, chol, E, SBM_DAMPING_IDENTITY, 1.0));
    sbm_chol_info info = sbm_chol_get_info(chol);
    assert_int_equal(info.block_columns, 0);
    assert_int_equal(info.supernodes, 0);
    assert_int_equal(info.factor_values, 0);
    assert_int_equal(info.factored, 1);
    SBM_ASSERT_OK(e->ctx, sbm_chol_solve(e->ctx, chol, 2, NULL, 1, NULL, 1));
    sbm_chol_destroy(chol);
    sbm_cbc_destroy(E);
    /* one block, a diagonal matrix */
    for (int b = 1; b <= 9; b += 4) {
        spd_matrix one = spd_make(5 + (uint64_t)b, 1, b, PAT_RANDOM, 1);
        solve_case c = default_case();
        c.nrhs = 2;
        check_case(e, &one, &c, "one block");
        spd_free(&one);
        /* keep the diagonal blocks only */
        spd_matrix diag = spd_make(9 + (uint64_t)b, 17, b, PAT_PIECES, 1);
        int64_t k = 0;
        for (int64_t t = 0; t < diag.nt; t++)
            if (diag.brow[t] == diag.bcol[t]) {
                diag.brow[k] = diag.brow[t], diag.bcol[k] = diag.bcol[t];
                memmove(diag.vals + k * b * b, diag.vals + t * b * b, (size_t)(b * b) * sizeof(double));
                k++;
            } else {
                const int64_t i = diag.brow[t] * b, j = diag.bcol[t] * b, n = diag.n;
                for (int c2 = 0; c2 < b; c2++)
                    for (int r = 0; r < b; r++)
                        diag.dense[(i + r) + (j + c2) * n] = diag.dense[(j + c2) + (i + r) * n] = 0;
            }
        diag.nt = k;
        c.damping = SBM_DAMPING_DIAGONAL;
        c.lambda = 0.5;
        check_case(e, &diag, &c, "diagonal only");
        sbm_cbc *A = spd_cbc(e->ctx, &diag);
        SBM_ASSERT_OK(e->ctx, sbm_chol_plan(e->ctx, A, NULL, &chol));
        info = sbm_chol_get_info(chol);
        assert_int_equal(info.supernodes, diag.nb); /* nothing to merge: no front has an update */
        assert_int_equal(info.factor_values, diag.nb * b * b);
        sbm_chol_destroy(chol);
        sbm_cbc_destroy(A);
        spd_free(&diag);
    }
    /* block column 4 has no diagonal block: singular, then SPD with the identity damping */
    spd_matrix m = spd_make(31, 9, 3, PAT_BANDED, 1);
    int64_t k = 0;
    for (int64_t t = 0; t < m.nt; t++)
        if (!(m.brow[t] == 4 && m.bcol[t] == 4)) {
            m.brow[k] = m.brow[t], m.bcol[k] = m.bcol[t];
            memmove(m.vals + k * 9, m.vals + t * 9, 9 * sizeof(double));
            k++;
        }
    m.nt = k;
    for (int r = 0; r < 3; r++)
        for (int c2 = 0; c2 < 3; c2++) m.dense[(12 + r) + (12 + c2) * m.n] = 0;
    sbm_cbc *A = spd_cbc(e->ctx, &m);
    sbm_chol_options o = sbm_chol_default_options();
    o.ordering = SBM_CHOL_ORDERING_NATURAL;
    SBM_ASSERT_OK(e->ctx, sbm_chol_plan(e->ctx, A, &o, &chol));
    SBM_ASSERT_FAILS(e->ctx, sbm_chol_factor(e->ctx, chol, A, SBM_DAMPING_NONE, 0.0),
                     SBM_ERR_NOT_POSITIVE_DEFINITE, "not positive definite: block column 4 ");
    assert_int_equal(sbm_chol_get_info(chol).failed_column, 4);
    sbm_chol_destroy(chol);
    sbm_cbc_destroy(A);
    solve_case c = default_case();
    c.damping = SBM_DAMPING_IDENTITY;
    c.lambda = 40.0; /* more than the off-diagonal row sums of column 4 (at most 5 blocks of 3) */
    check_case(e, &m, &c, "no diagonal block, identity damping");
    spd_free(&m);
}

/* One plan, several factorisations: new values in the same matrix (same pattern instance), in
 * a new matrix with an equal pattern (fingerprint), and new lambdas. */
static void test_chol_refactor(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    const int b = 3;
    spd_matrix m1 = spd_make(71, 30, b, PAT_GRID, 1), m2 = spd_make(72, 30, b, PAT_GRID, 1);
    assert_int_equal(m1.nt, m2.nt);
    sbm_cbc *A = spd_cbc(e->ctx, &m1), *A2 = spd_cbc(e->ctx, &m2);
    sbm_chol *chol = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_chol_plan(e->ctx, A, NULL, &chol));
    const int64_t n = m1.n;
    double *B = sbm_test_random_vector(3, n), *R = malloc((size_t)n * sizeof(double));
    double *dB = sbm_test_vec_upload(e->ctx, B, n);
    double *dX = sbm_test_vec_upload(e->ctx, B, n);
    static const int damp[4] = {SBM_DAMPING_NONE, SBM_DAMPING_IDENTITY, SBM_DAMPING_DIAGONAL, SBM_DAMPING_IDENTITY};
    static const double lam[4] = {0.0, 2.5, 0.1, 1e3};
    for (int it = 0; it < 8; it++) {
        const spd_matrix *m = it % 2 ? &m2 : &m1;
        const sbm_cbc *M = it % 2 ? A2 : A;
        SBM_ASSERT_OK(e->ctx, sbm_chol_factor(e->ctx, chol, M, (sbm_damping)damp[it % 4], lam[it % 4]));
        SBM_ASSERT_OK(e->ctx, sbm_chol_solve(e->ctx, chol, 1, dB, n, dX, n));
        double *X = sbm_test_vec_download(e->ctx, dX, n);
        assert_int_equal(dense_solve(m->dense, n, damp[it % 4], lam[it % 4], 1, B, R), 0);
        sbm_test_assert_near(X, R, n, 1e-9, "refactor");
        free(X);
    }
    sbm__free(e->ctx, dX);
    sbm__free(e->ctx, dB);
    free(B);
    free(R);
    sbm_chol_destroy(chol);
    sbm_cbc_destroy(A);
    sbm_cbc_destroy(A2);
    spd_free(&m1);
    spd_free(&m2);
}

/* A negative diagonal block at a known column: the status, the message and failed_column in A's
 * numbering, with either ordering; a NaN in A is reported the same way; a later good factor works. */
static void test_chol_not_pd(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (int b = 1; b <= 9; b += 2)
        for (int ord = 0; ord < 2; ord++) {
            spd_matrix m = spd_make(90 + (uint64_t)b, 20, b, ord ? PAT_BANDED : PAT_PIECES, 1);
            const int64_t bad = 13;
            sbm_cbc *A = spd_cbc(e->ctx, &m);
            sbm_chol_options o = sbm_chol_default_options();
            o.ordering = ord ? SBM_CHOL_ORDERING_NATURAL : SBM_CHOL_ORDERING_AMD;
            sbm_chol *chol = NULL;
            SBM_ASSERT_OK(e->ctx, sbm_chol_plan(e->ctx, A, &o, &chol));
            /* the diagonal block of column 13 becomes minus itself: with the banded pattern in
             * the natural order every earlier column is SPD and column 13's pivot only drops */
            for (int64_t t = 0; t < m.nt; t++)
                if (m.brow[t] == bad && m.bcol[t] == bad)
                    for (int q = 0; q < b * b; q++) m.vals[t * b * b + q] = -m.vals[t * b * b + q];
            sbm_cbc *N = spd_cbc(e->ctx, &m);
            char want[96];
            snprintf(want, sizeof want, "sbm_chol_factor: A is not positive definite: block column %lld ",
                     (long long)bad);
            SBM_ASSERT_FAILS(e->ctx, sbm_chol_factor(e->ctx, chol, N, SBM_DAMPING_NONE, 0.0),
                             SBM_ERR_NOT_POSITIVE_DEFINITE, want);
            sbm_chol_info info = sbm_chol_get_info(chol);
            assert_int_equal(info.failed_column, bad);
            assert_int_equal(info.factored, 0);
            double x = 1.0;
            SBM_ASSERT_FAILS(e->ctx, sbm_chol_solve(e->ctx, chol, 0, &x, m.n, &x, m.n),
                             SBM_ERR_INVALID_ARGUMENT, "the last sbm_chol_factor failed");
            /* a NaN on a diagonal */
            sbm_cbc_info ni = sbm_cbc_get_info(N);
            for (int64_t t = 0; t < m.nt; t++)
                if (m.brow[t] == bad && m.bcol[t] == bad) m.vals[t * b * b] = NAN;
            SBM_ASSERT_OK(e->ctx, sbm_array_upload(e->ctx, ni.values, m.vals, m.nt * b * b));
            SBM_ASSERT_FAILS(e->ctx, sbm_chol_factor(e->ctx, chol, N, SBM_DAMPING_IDENTITY, 1.0),
                             SBM_ERR_NOT_POSITIVE_DEFINITE, want);
            assert_int_equal(sbm_chol_get_info(chol).failed_column, bad);
            SBM_ASSERT_OK(e->ctx, sbm_chol_factor(e->ctx, chol, A, SBM_DAMPING_NONE, 0.0));
            info = sbm_chol_get_info(chol);
            assert_int_equal(info.failed_column, -1);
            assert_int_equal(info.factored, 1);
            double *B = sbm_test_random_vector(5, m.n), *R = malloc((size_t)m.n * sizeof(double));
            double *dB = sbm_test_vec_upload(e->ctx, B, m.n);
            SBM_ASSERT_OK(e->ctx, sbm_chol_solve(e->ctx, chol, 1, dB, m.n, dB, m.n));
            double *X = sbm_test_vec_download(e->ctx, dB, m.n);
            assert_int_equal(dense_solve(m.dense, m.n, 0, 0.0, 1, B, R), 0);
            sbm_test_assert_near(X, R, m.n, 1e-9, "after a failure");
            free(X);
            free(B);
            free(R);
            sbm__free(e->ctx, dB);
            sbm_chol_destroy(chol);
            sbm_cbc_destroy(N);
            sbm_cbc_destroy(A);
            spd_free(&m);
        }
}

/* Two factorisations and solves give the same bits. */
static void test_chol_repeatable(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    spd_matrix m = spd_make(123, 150, 6, PAT_GRID, 1);
    sbm_cbc *A = spd_cbc(e->ctx, &m);
    const int64_t n = m.n, nrhs = 4;
    double *B = sbm_test_random_vector(9, n * nrhs);
    double *dB = sbm_test_vec_upload(e->ctx, B, n * nrhs);
    double *X[2];
    for (int r = 0; r < 2; r++) {
        sbm_chol *chol = NULL;
        double *dX = sbm_test_vec_upload(e->ctx, B, n * nrhs);
        SBM_ASSERT_OK(e->ctx, sbm_chol_plan(e->ctx, A, NULL, &chol));
        SBM_ASSERT_OK(e->ctx, sbm_chol_factor(e->ctx, chol, A, SBM_DAMPING_DIAGONAL, 1e-3));
        SBM_ASSERT_OK(e->ctx, sbm_chol_solve(e->ctx, chol, nrhs, dB, n, dX, n));
        X[r] = sbm_test_vec_download(e->ctx, dX, n * nrhs);
        sbm__free(e->ctx, dX);
        sbm_chol_destroy(chol);
    }
    assert_memory_equal(X[0], X[1], (size_t)(n * nrhs) * sizeof(double));
    free(X[0]);
    free(X[1]);
    free(B);
    sbm__free(e->ctx, dB);
    sbm_cbc_destroy(A);
    spd_free(&m);
}

/* Every error of the API: status and message. */
static void test_chol_errors(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_ctx *ctx = e->ctx;
    spd_matrix m = spd_make(7, 6, 2, PAT_BANDED, 1);
    sbm_cbc *A = spd_cbc(ctx, &m);
    sbm_chol *chol = (sbm_chol *)&m; /* must be reset to NULL by a failing plan */
    /* plan */
    SBM_ASSERT_FAILS(NULL, sbm_chol_plan(NULL, A, NULL, &chol), SBM_ERR_NULL_ARGUMENT,
                     "sbm_chol_plan: argument ctx is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, A, NULL, NULL), SBM_ERR_NULL_ARGUMENT,
                     "sbm_chol_plan: argument chol (output handle) is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, NULL, NULL, &chol), SBM_ERR_NULL_ARGUMENT, "A");
    assert_null(chol);
    sbm_cbc *R = sbm_test_random_cbc_upper(ctx, 3, 4, 4, 2, 3, 0.5, 1);
    SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, R, NULL, &chol), SBM_ERR_BLOCK_SHAPE,
                     "argument A: blocks are 2x3, the Cholesky needs square blocks");
    sbm_cbc_destroy(R);
    R = sbm_test_random_cbc_upper(ctx, 3, 4, 5, 2, 2, 0.5, 1);
    SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, R, NULL, &chol), SBM_ERR_DIMENSION_MISMATCH,
                     "argument A: 4 x 5 blocks is not square");
    sbm_cbc_destroy(R);
    sbm_chol_options o = sbm_chol_default_options();
    o.ordering = (sbm_chol_ordering)5;
    SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, A, &o, &chol), SBM_ERR_INVALID_ARGUMENT,
                     "options->ordering: 5 is not an ordering");
    static const double bad_relax[3] = {-0.1, 1.5, NAN};
    for (int i = 0; i < 3; i++) {
        o = sbm_chol_default_options();
        o.relax_zeros = bad_relax[i];
        SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, A, &o, &chol), SBM_ERR_INVALID_ARGUMENT,
                         "options->relax_zeros");
    }
    o = sbm_chol_default_options();
    o.relax_max_columns = 0;
    SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, A, &o, &chol), SBM_ERR_INVALID_ARGUMENT,
                     "options->relax_max_columns: 0 is less than 1");
    const int32_t lr[3] = {0, 3, 1};
    const int32_t lc[3] = {0, 1, 1};
    const double lv[12] = {4, 0, 0, 4, 1, 1, 1, 1, 4, 0, 0, 4};
    SBM_ASSERT_OK(ctx, sbm_cbc_from_triplets(ctx, &R, 5, 5, 2, 2, 3, lr, lc, lv));
    SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, R, NULL, &chol), SBM_ERR_INVALID_ARGUMENT,
                     "argument A: block (3, 1) is below the diagonal, but sbm_chol_plan takes the "
                     "upper block triangle");
    sbm_cbc_destroy(R);
    /* an operation the backend lacks */
    const sbm__backend_ops *ops = ctx->ops;
    sbm__backend_ops fake = *ops;
    fake.chol_factor = NULL;
    ctx->ops = &fake;
    SBM_ASSERT_FAILS(ctx, sbm_chol_plan(ctx, A, NULL, &chol), SBM_ERR_NOT_SUPPORTED,
                     "the sparse block Cholesky is not available on the");
    ctx->ops = ops;
    SBM_ASSERT_OK(ctx, sbm_chol_plan(ctx, A, NULL, &chol));
    /* factor */
    SBM_ASSERT_FAILS(NULL, sbm_chol_factor(NULL, chol, A, SBM_DAMPING_NONE, 0), SBM_ERR_NULL_ARGUMENT,
                     "sbm_chol_factor: argument ctx is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_factor(ctx, NULL, A, SBM_DAMPING_NONE, 0), SBM_ERR_NULL_ARGUMENT,
                     "sbm_chol_factor: argument chol is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_factor(ctx, chol, NULL, SBM_DAMPING_NONE, 0), SBM_ERR_NULL_ARGUMENT,
                     "A");
    SBM_ASSERT_FAILS(ctx, sbm_chol_factor(ctx, chol, A, (sbm_damping)3, 0), SBM_ERR_INVALID_ARGUMENT,
                     "argument damping: 3 is not a damping");
    static const double bad_lambda[3] = {-1.0, NAN, INFINITY};
    for (int i = 0; i < 3; i++)
        SBM_ASSERT_FAILS(ctx, sbm_chol_factor(ctx, chol, A, SBM_DAMPING_IDENTITY, bad_lambda[i]),
                         SBM_ERR_INVALID_ARGUMENT, "argument lambda:");
    spd_matrix other = spd_make(8, 6, 2, PAT_ARROW, 1); /* same size, another pattern */
    R = spd_cbc(ctx, &other);
    SBM_ASSERT_FAILS(ctx, sbm_chol_factor(ctx, chol, R, SBM_DAMPING_NONE, 0), SBM_ERR_PLAN_MISMATCH,
                     "argument A (6 x 6 blocks of 2x2, ");
    sbm_cbc_destroy(R);
    spd_free(&other);
    other = spd_make(8, 7, 2, PAT_BANDED, 1);
    R = spd_cbc(ctx, &other);
    SBM_ASSERT_FAILS(ctx, sbm_chol_factor(ctx, chol, R, SBM_DAMPING_NONE, 0), SBM_ERR_PLAN_MISMATCH,
                     "is not the size the plan was made for (6 x 6 blocks of 2x2)");
    sbm_cbc_destroy(R);
    spd_free(&other);
    if (e->backend != SBM_BACKEND_CPU) { /* a plan of one backend used with another */
        sbm_chol *hc = NULL;
        sbm_cbc *H = spd_cbc(e->host, &m);
        SBM_ASSERT_OK(e->host, sbm_chol_plan(e->host, H, NULL, &hc));
        SBM_ASSERT_FAILS(ctx, sbm_chol_factor(ctx, hc, A, SBM_DAMPING_NONE, 0), SBM_ERR_BACKEND_MISMATCH,
                         "argument chol was planned on the CPU backend");
        SBM_ASSERT_FAILS(e->host, sbm_chol_factor(e->host, chol, H, SBM_DAMPING_NONE, 0),
                         SBM_ERR_BACKEND_MISMATCH, "argument chol was planned on the");
        SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, hc, 0, NULL, 12, NULL, 12), SBM_ERR_BACKEND_MISMATCH,
                         "sbm_chol_solve: argument chol was planned on the CPU backend");
        sbm_chol_destroy(hc);
        sbm_cbc_destroy(H);
    }
    /* solve */
    const int64_t n = m.n;
    double *dB = sbm_test_vec_upload(ctx, m.dense, 3 * n);
    SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, chol, 1, dB, n, dB, n), SBM_ERR_INVALID_ARGUMENT,
                     "argument chol has no factor: sbm_chol_factor was not called");
    SBM_ASSERT_OK(ctx, sbm_chol_factor(ctx, chol, A, SBM_DAMPING_NONE, 0));
    SBM_ASSERT_FAILS(NULL, sbm_chol_solve(NULL, chol, 1, dB, n, dB, n), SBM_ERR_NULL_ARGUMENT,
                     "sbm_chol_solve: argument ctx is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, NULL, 1, dB, n, dB, n), SBM_ERR_NULL_ARGUMENT,
                     "sbm_chol_solve: argument chol is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, chol, -1, dB, n, dB, n), SBM_ERR_INVALID_ARGUMENT,
                     "argument nrhs: -1 is outside");
    SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, chol, 1, dB, n - 1, dB, n), SBM_ERR_INVALID_ARGUMENT,
                     "argument ldb: 11 is not a leading dimension for n = 12");
    SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, chol, 1, dB, n, dB + n, 0), SBM_ERR_INVALID_ARGUMENT,
                     "argument ldx: 0 is not a leading dimension");
    SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, chol, 1, NULL, n, dB, n), SBM_ERR_NULL_ARGUMENT,
                     "argument B is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, chol, 1, dB, n, NULL, n), SBM_ERR_NULL_ARGUMENT,
                     "argument X is NULL");
    SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, chol, 2, dB, n, dB + 1, n), SBM_ERR_ALIASING,
                     "argument X overlaps B");
    SBM_ASSERT_FAILS(ctx, sbm_chol_solve(ctx, chol, 2, dB, n, dB, n + 1), SBM_ERR_ALIASING,
                     "(ldb 12, ldx 13)");
    SBM_ASSERT_OK(ctx, sbm_chol_solve(ctx, chol, 1, dB, n, dB + n, n)); /* adjacent, no overlap */
    /* info and destroy of NULL */
    const sbm_chol_info none = sbm_chol_get_info(NULL);
    assert_int_equal(none.failed_column, -1);
    assert_int_equal(none.block_columns, 0);
    assert_null(none.perm);
    sbm_chol_destroy(NULL);
    sbm__free(ctx, dB);
    sbm_chol_destroy(chol);
    sbm_cbc_destroy(A);
    spd_free(&m);
}

/* ---------------------------------------------------------------------------------------- */
/* Real matrices                                                                            */
/* ---------------------------------------------------------------------------------------- */

/* Normwise backward error |A x - b|_inf / (|A|_inf |x|_inf + |b|_inf) of x for the symmetric A
 * given by its upper block triangle (host matrix). */
static double backward_error(const sbm_cbc *H, const double *x, const double *bvec)
{
    const sbm_cbc_info hi = sbm_cbc_get_info(H);
    const int64_t b = hi.r, n = hi.nbc * b;
    double *r = calloc((size_t)n + 1, sizeof(double)), *rowabs = calloc((size_t)n + 1, sizeof(double));
    for (int64_t j = 0; j < hi.nbc; j++)
        for (int64_t p = hi.colptr[j]; p < hi.colptr[j + 1]; p++) {
            const int64_t i = hi.rowind[p];
            const double *v = hi.values + p * b * b;
            for (int64_t c = 0; c < b; c++)
                for (int64_t q = 0; q < b; q++) {
                    const double a = v[q + c * b];
                    r[i * b + q] += a * x[j * b + c];
                    rowabs[i * b + q] += fabs(a);
                    if (i != j) {
                        r[j * b + c] += a * x[i * b + q];
                        rowabs[j * b + c] += fabs(a);
                    }
                }
        }
    double rn = 0, an = 0, xn = 0, bn = 0;
    for (int64_t i = 0; i < n; i++) {
        rn = fmax(rn, fabs(r[i] - bvec[i]));
        an = fmax(an, rowabs[i]);
        xn = fmax(xn, fabs(x[i]));
        bn = fmax(bn, fabs(bvec[i]));
    }
    free(r);
    free(rowabs);
    return rn / (an * xn + bn);
}

/* Solve H x = rhs (H on the host) in e->ctx; backward error below 1e-12; against the dense
 * reference when dense (n small); on a device, against the CPU backend. */
static void check_real(sbm_test_env *e, const sbm_cbc *H, const double *rhs, int dense,
                       const char *what)
{
    const sbm_cbc_info hi = sbm_cbc_get_info(H);
    const int64_t n = hi.nbc * hi.r;
    sbm_cbc *A = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_cbc_copy(e->ctx, H, &A));
    solve_case c = default_case();
    double *x = malloc((size_t)n * sizeof(double));
    chol_solve_in(e->ctx, A, &c, rhs, n, x);
    const double be = backward_error(H, x, rhs);
    print_message("[  INFO    ] %s: n = %lld, backward error %.2e\n", what, (long long)n, be);
    if (!(be < 1e-12)) fail_msg("%s: backward error %.3e", what, be);
    if (dense) {
        double *U = sbm_test_cbc_dense(H), *ref = malloc((size_t)n * sizeof(double));
        for (int64_t j = 0; j < n; j++) /* the full symmetric matrix from its upper blocks */
            for (int64_t i = 0; i < n; i++)
                if (i / hi.r > j / hi.r) U[i + j * n] = U[j + i * n];
        assert_int_equal(dense_solve(U, n, 0, 0.0, 1, rhs, ref), 0);
        sbm_test_assert_near(x, ref, n, 1e-8, what);
        free(U);
        free(ref);
    }
    if (e->backend != SBM_BACKEND_CPU) {
        double *xh = malloc((size_t)n * sizeof(double));
        chol_solve_in(e->host, H, &c, rhs, n, xh);
        sbm_test_assert_near(x, xh, n, 1e-10, what);
        free(xh);
    }
    free(x);
    sbm_cbc_destroy(A);
}

/* Lambda of g2o graphs (J^T Omega J with the fixed vertices removed), rhs b. */
static void test_chol_g2o(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const char *const files[] = {"g2o/tinyGrid3D.g2o", "g2o/smallGrid3D.g2o", "g2o/intel.g2o",
                                        "g2o/sphere2500.g2o", "g2o/manhattan.g2o"};
    for (int f = 0; f < 5; f++) {
        sbm_g2o_graph *g = NULL;
        sbm_slam_system *sys = NULL;
        SBM_ASSERT_OK(e->host, sbm_g2o_read(e->host, sbm_test_data_path(files[f]), &g));
        SBM_ASSERT_OK(e->host, sbm_slam_system_create(e->host, g, &sys));
        SBM_ASSERT_OK(e->host, sbm_slam_linearize(e->host, sys, g));
        const sbm_cbc *H = sbm_slam_system_get_info(sys).Lambda;
        const int64_t n = sbm_cbc_get_info(H).nbc * sbm_cbc_get_info(H).r;
        double *rhs = malloc((size_t)n * sizeof(double));
        SBM_ASSERT_OK(e->host, sbm_slam_system_get_b(e->host, sys, rhs));
        check_real(e, H, rhs, n <= 800, files[f]);
        free(rhs);
        sbm_slam_system_destroy(sys);
        sbm_g2o_destroy(g);
    }
}

/* S = U - W V^-1 W^T of a BAL problem (damped as sbm_ba_set_damping does), rhs from the
 * reduction. */
static void test_chol_bal(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    sbm_bal_problem *p = NULL;
    sbm_ba_system *sys = NULL;
    sbm_cbc *S = NULL;
    SBM_ASSERT_OK(e->host, sbm_bal_read(e->host, sbm_test_data_path("bal/problem-21-11315-pre.txt"), &p));
    SBM_ASSERT_OK(e->host, sbm_ba_system_create(e->host, p, &sys));
    SBM_ASSERT_OK(e->host, sbm_ba_linearize(e->host, sys, p));
    SBM_ASSERT_OK(e->host, sbm_ba_set_damping(e->host, sys, 1e-4));
    const int64_t n = 9 * sbm_cbc_get_info(sbm_ba_system_get_info(sys).U).nbc;
    double *rhs = malloc((size_t)n * sizeof(double));
    SBM_ASSERT_OK(e->host, sbm_ba_system_reduce(e->host, sys, &S, rhs));
    check_real(e, S, rhs, 1, "S of problem-21-11315");
    free(rhs);
    sbm_cbc_destroy(S);
    sbm_ba_system_destroy(sys);
    sbm_bal_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_chol_random),     SBM_TEST_BOTH(test_chol_symbolic),
        SBM_TEST_BOTH(test_chol_degenerate), SBM_TEST_BOTH(test_chol_refactor),
        SBM_TEST_BOTH(test_chol_not_pd),     SBM_TEST_BOTH(test_chol_repeatable),
        SBM_TEST_BOTH(test_chol_errors),     SBM_TEST_BOTH(test_chol_g2o),
        SBM_TEST_BOTH(test_chol_bal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
