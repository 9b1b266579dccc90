/* Shared helpers for the cmocka suites: per-backend fixtures, seeded random matrices, dense
 * references and assertions. Every suite runs its tests once per backend; the CUDA variant
 * skips visibly (cmocka skip()) where there is no GPU or no CUDA build. */
#ifndef SBM_TEST_UTIL_H
#define SBM_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sbm.h"

/* ---------------------------------------------------------------------------------------- */
/* Fixtures                                                                                 */
/* ---------------------------------------------------------------------------------------- */

typedef struct sbm_test_env {
    sbm_backend backend; /* backend under test */
    sbm_ctx *ctx;        /* context of that backend (NULL: not available, test skips) */
    sbm_ctx *host;       /* CPU context, for references and downloads */
} sbm_test_env;

extern const sbm_backend sbm_test_backend_cpu;
extern const sbm_backend sbm_test_backend_cuda;
int sbm_test_setup(void **state);
int sbm_test_teardown(void **state);
/* The environment of the running test; skip()s when its backend is not available. */
sbm_test_env *sbm_test_begin(void **state);

#define SBM_TEST_CPU(f) \
    { #f "[cpu]", f, sbm_test_setup, sbm_test_teardown, (void *)&sbm_test_backend_cpu }
#define SBM_TEST_CUDA(f) \
    { #f "[cuda]", f, sbm_test_setup, sbm_test_teardown, (void *)&sbm_test_backend_cuda }
#define SBM_TEST_BOTH(f) SBM_TEST_CPU(f), SBM_TEST_CUDA(f)

/* ---------------------------------------------------------------------------------------- */
/* Random numbers (splitmix64, seeded)                                                      */
/* ---------------------------------------------------------------------------------------- */

typedef struct sbm_test_rng {
    uint64_t s;
} sbm_test_rng;
sbm_test_rng sbm_test_rng_seed(uint64_t seed);
uint64_t sbm_test_rng_u64(sbm_test_rng *g);
double sbm_test_rng_uniform(sbm_test_rng *g);           /* [0, 1) */
double sbm_test_rng_value(sbm_test_rng *g);             /* [-1, 1), never exactly 0 */
int64_t sbm_test_rng_below(sbm_test_rng *g, int64_t n); /* [0, n) */

/* ---------------------------------------------------------------------------------------- */
/* Random matrices (built on the host, then copied into ctx)                                */
/* ---------------------------------------------------------------------------------------- */

/* Each block present independently with probability density; values in [-1, 1). */
sbm_cbc *sbm_test_random_cbc(sbm_ctx *ctx, uint64_t seed, int64_t nbr, int64_t nbc, int r, int c,
                             double density);
/* Block-diagonal SPD matrix (every diagonal block present, well conditioned). */
sbm_cbc *sbm_test_random_bdiag_spd(sbm_ctx *ctx, uint64_t seed, int64_t nb, int b);
sbm_csr *sbm_test_random_csr(sbm_ctx *ctx, uint64_t seed, int64_t m, int64_t n, double density);
double *sbm_test_random_vector(uint64_t seed, int64_t n); /* malloc'd host array */

/* ---------------------------------------------------------------------------------------- */
/* Dense references (column-major host arrays, malloc'd; free with free())                 */
/* ---------------------------------------------------------------------------------------- */

/* Scalar dense form of a matrix on any backend (downloads device matrices). */
double *sbm_test_cbc_dense(const sbm_cbc *A);
double *sbm_test_csr_dense(const sbm_csr *A);
/* C (m x n) = op(A) (m x k) * op(B) (k x n); A is stored lda-major as given (am x an). */
double *sbm_test_dense_gemm(int ta, const double *A, int64_t am, int64_t an, int tb,
                            const double *B, int64_t bm, int64_t bn);
/* Host copy of a matrix on any backend (for inspecting arrays). Caller destroys. */
sbm_cbc *sbm_test_cbc_to_host(const sbm_cbc *A);
sbm_csr *sbm_test_csr_to_host(const sbm_csr *A);

/* ---------------------------------------------------------------------------------------- */
/* Assertions                                                                               */
/* ---------------------------------------------------------------------------------------- */

/* |got - want| <= tol * (scale + |want|) elementwise, where scale is the largest |want|; reports
 * the first offending element. */
void sbm_test_assert_near(const double *got, const double *want, int64_t n, double tol,
                          const char *what);
/* The matrix is valid (sbm_cbc_check) and its dense form equals want ((nbr*r) x (nbc*c)). */
void sbm_test_assert_cbc_dense(const sbm_cbc *A, const double *want, double tol);
void sbm_test_assert_csr_dense(const sbm_csr *A, const double *want, double tol);

/* Assert that call returns status and that the context's message contains substr. */
#define SBM_ASSERT_FAILS(ctx, call, status, substr)                                         \
    sbm_test_assert_fails_((ctx), (call), (status), (substr), #call, __FILE__, __LINE__)
void sbm_test_assert_fails_(sbm_ctx *ctx, sbm_status got, sbm_status want, const char *substr,
                            const char *expr, const char *file, int line);
#define SBM_ASSERT_OK(ctx, call)                                                            \
    sbm_test_assert_ok_((ctx), (call), #call, __FILE__, __LINE__)
void sbm_test_assert_ok_(sbm_ctx *ctx, sbm_status got, const char *expr, const char *file,
                         int line);

/* Path of a file under ../shared/data (static buffer). */
const char *sbm_test_data_path(const char *relative);

#endif /* SBM_TEST_UTIL_H */
