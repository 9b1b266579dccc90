/* SPDX-License-Identifier: BSD-3-Clause */
/* Sparse block Cholesky (sbm_chol_*): solutions against a dense Cholesky written here, on seeded
 * random SPD block matrices of every block size 1..9 and several patterns, both orderings,
 * amalgamation on and off, the three dampings, one and several right-hand sides, in place and
 * with ldb > n; the symbolic structure's invariants; degenerate shapes; refactorisation; not
 * positive definite (status, message, failed column); bitwise repeatability; the clamp of
 * Marquardt's damping scale on zero, tiny and huge diagonal entries. The [cuda]
 * variants factor on the device and agree with the CPU backend. */
#include "chol_test_common.h"

static const char *const pattern_names[NPATTERNS] = {"random", "banded", "arrow", "grid", "pieces"};

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

/* Deeper trees: a 15 x 15 grid graph and three random pieces of 200 blocks, every option. */
static void test_chol_larger(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    static const int pats[2] = {PAT_GRID, PAT_PIECES};
    for (int p = 0; p < 2; p++) {
        const int64_t nb = p ? 200 : 225;
        spd_matrix m = spd_make(400 + (uint64_t)p, nb, 2, pats[p], 1);
        for (int v = 0; v < 4; v++) {
            solve_case c = default_case();
            c.opt.ordering = v % 2 ? SBM_CHOL_ORDERING_NATURAL : SBM_CHOL_ORDERING_AMD;
            c.opt.relax_zeros = v < 2 ? 0.0 : 0.3;
            c.damping = v % 3;
            c.lambda = 0.5;
            c.nrhs = 2;
            check_case(e, &m, &c, pattern_names[pats[p]]);
        }
        spd_free(&m);
    }
}

/* The symbolic structure is consistent: a permutation; fronts ascending with their own columns
 * first; every block of the true L (block-level symbolic elimination of P A P^T here) inside its
 * column's front; panels end to end; extend-add rows found in the parent; levels children first;
 * A's assembly offsets as chol_internal.h spells them; the explicit zeros amalgamation may add.
 * @return the number of explicit zero blocks. */
static int64_t check_symbolic(const sbm__chol_symbolic *s, const spd_matrix *m,
                              const sbm_chol_options *o)
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
    int64_t *level = calloc((size_t)s->nsuper + 1, sizeof(int64_t)), zeros = 0;
    int64_t max_front = 0, max_update = 0;
    double flops = 0;
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
        /* explicit zeros of the panel's lower trapezoid: none without amalgamation, else at most
         * relax_zeros of it, in a supernode of at most relax_max_columns columns */
        int64_t nz = 0;
        for (int64_t q = 0; q < mt; q++)
            for (int64_t c = s->sup_col[t]; c < s->sup_col[t + 1] && c <= rows[q]; c++) nz += L[rows[q] + c * nb];
        const double stored = (double)(k * mt) - 0.5 * (double)(k * (k - 1));
        if (o->relax_zeros == 0) assert_true(nz == (int64_t)stored);
        if (nz < (int64_t)stored) {
            zeros += (int64_t)stored - nz;
            assert_true(stored - (double)nz <= o->relax_zeros * stored);
            assert_true(k <= o->relax_max_columns);
        }
        const double kk = (double)(k * b), uu = (double)((mt - k) * b);
        flops += kk * kk * kk / 3 + uu * kk * kk + uu * uu * kk;
        max_front = mt * b > max_front ? mt * b : max_front;
        max_update = (mt - k) * b > max_update ? (mt - k) * b : max_update;
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
    assert_true(fabs(flops - s->flops) <= 1e-12 * flops);
    assert_int_equal(max_front, s->max_front);
    assert_int_equal(max_update, s->max_update);
    free(level);
    free(L);
    return zeros;
}

static void test_chol_symbolic(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    int64_t relaxed_zeros = 0;
    for (int p = 0; p < NPATTERNS; p++)
        for (int v = 0; v < 4; v++) {
            spd_matrix m = spd_make(50 + (uint64_t)(p * 4 + v), 40 + v, 2, p, 1);
            sbm_cbc *A = spd_cbc(e->ctx, &m);
            sbm_chol_options o = sbm_chol_default_options();
            o.ordering = v % 2 ? SBM_CHOL_ORDERING_NATURAL : SBM_CHOL_ORDERING_AMD;
            o.relax_zeros = v < 2 ? 0.0 : 0.5;
            o.relax_max_columns = v == 3 ? 3 : 64;
            sbm_chol *chol = NULL;
            SBM_ASSERT_OK(e->ctx, sbm_chol_plan(e->ctx, A, &o, &chol));
            const sbm__chol_symbolic *s = sbm__chol_symbolic_of(chol);
            relaxed_zeros += check_symbolic(s, &m, &o);
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
    assert_true(relaxed_zeros > 0); /* amalgamation did merge somewhere */
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

/* Marquardt's damping clamps its scale d to [1e-6, 1e32] (sbm_damp.h): a diagonal entry that is
 * zero (a singular information matrix: its row and column all zero), tiny (1e-9) or huge (1e40)
 * is damped by lambda * 1e-6, lambda * 1e-6 and lambda * 1e32, not lambda * d. Without the lower
 * clamp the zero pivot stays zero (not positive definite); the tiny and huge entries' solution
 * components are compared relative to their own size (the assertion over the whole vector would
 * not see 1e-40). */
static void test_chol_damping_clamp(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    for (int b = 1; b <= 6; b += 5) {
        spd_matrix m = spd_make(200 + (uint64_t)b, 12, b, PAT_BANDED, 1);
        const int64_t n = m.n, idx[3] = {1, n / 2, n - 2};
        static const double dval[3] = {0.0, 1e-9, 1e40};
        for (int k = 0; k < 3; k++) {
            for (int64_t i = 0; i < n; i++) m.dense[idx[k] + i * n] = m.dense[i + idx[k] * n] = 0.0;
            m.dense[idx[k] + idx[k] * n] = dval[k];
        }
        for (int64_t t = 0; t < m.nt; t++) /* the blocks from the changed dense form */
            for (int c = 0; c < b; c++)
                for (int r = 0; r < b; r++)
                    m.vals[t * b * b + r + c * b] = m.dense[(m.brow[t] * b + r) + (m.bcol[t] * b + c) * n];
        for (int l = 0; l < 2; l++) {
            solve_case c = default_case();
            c.damping = SBM_DAMPING_DIAGONAL;
            c.lambda = l ? 0.5 : 1e-3;
            c.nrhs = 2;
            double *B = sbm_test_random_vector(31 + (uint64_t)b, n * 2);
            double *X = malloc((size_t)(2 * n) * sizeof(double)), *R = malloc((size_t)(2 * n) * sizeof(double));
            assert_int_equal(dense_solve(m.dense, n, c.damping, c.lambda, 2, B, R), 0);
            sbm_cbc *A = spd_cbc(e->ctx, &m);
            chol_solve_in(e->ctx, A, &c, B, n, X);
            char what[96];
            snprintf(what, sizeof what, "b %d, lambda %g, diagonal entries 0, 1e-9, 1e40", b, c.lambda);
            sbm_test_assert_near(X, R, 2 * n, 1e-9, what);
            for (int64_t r = 0; r < 2; r++)
                for (int k = 0; k < 3; k++) {
                    const double got = X[r * n + idx[k]], want = R[r * n + idx[k]];
                    /* the row is decoupled: x = b / (d + lambda * clamp(d)) */
                    const double sc = dval[k] < 1e-6 ? 1e-6 : dval[k] > 1e32 ? 1e32 : dval[k];
                    const double exact = B[r * n + idx[k]] / (dval[k] + c.lambda * sc);
                    if (!(fabs(got - want) <= 1e-12 * fabs(want)) || !(fabs(got - exact) <= 1e-12 * fabs(exact)))
                        fail_msg("%s: x[%lld] (diagonal %g) is %.17g, (d + lambda clamp(d))^-1 b gives %.17g",
                                 what, (long long)idx[k], dval[k], got, exact);
                }
            sbm_cbc_destroy(A);
            free(B);
            free(X);
            free(R);
        }
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        SBM_TEST_BOTH(test_chol_random),     SBM_TEST_BOTH(test_chol_larger),
        SBM_TEST_BOTH(test_chol_symbolic),
        SBM_TEST_BOTH(test_chol_degenerate), SBM_TEST_BOTH(test_chol_refactor),
        SBM_TEST_BOTH(test_chol_not_pd),     SBM_TEST_BOTH(test_chol_repeatable),
        SBM_TEST_BOTH(test_chol_damping_clamp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
