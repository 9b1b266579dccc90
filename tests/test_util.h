/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared helpers for the cmocka suites: per-backend fixtures, seeded random matrices, dense
 * references and assertions. Every suite runs its tests once per backend; the CUDA variant
 * skips visibly (cmocka skip()) where there is no GPU or no CUDA build. */
#ifndef SBM_TEST_UTIL_H
#define SBM_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "sbm.h"
#include "sbm_ba.h"
#include "sbm_io.h"
#include "sbm_slam.h"
#include "sbm_solve.h"

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
/* The environment of the running test; skip()s when its backend is not available, or fails
 * the test instead when sbm_test_gpu_required(). */
sbm_test_env *sbm_test_begin(void **state);
/* 1 when the environment variable SBM_REQUIRE_GPU is set, not empty and not "0" (the device
 * run, .ci/device-run.sh): then a [cuda] case or a GPU-only suite that finds no CUDA backend or
 * no device fails instead of skipping. */
int sbm_test_gpu_required(void);

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
/* As sbm_test_random_cbc (same seed: same matrix); with upper_only no block below the
 * diagonal. */
sbm_cbc *sbm_test_random_cbc_upper(sbm_ctx *ctx, uint64_t seed, int64_t nbr, int64_t nbc, int r,
                                   int c, double density, int upper_only);
/* A random stored matrix X such that op(X) is nbr x nbc blocks of r x c. */
sbm_cbc *sbm_test_random_cbc_op(sbm_ctx *ctx, uint64_t seed, sbm_op op, int64_t nbr, int64_t nbc,
                                int r, int c, double density);
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
/* X and Y (any backends) have the same shape and pattern; values bitwise equal (tol < 0) or
 * within tol (as sbm_test_assert_near). */
void sbm_test_assert_same_cbc(const sbm_cbc *X, const sbm_cbc *Y, double tol);
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

/* Real data (data_util.c). The repository's tests/data holds compressed copies: the path of
 * relative there as stored (relative, or with ".gz" or ".bz2" appended); a missing one fails
 * the test naming the paths tried. Static buffer. */
const char *sbm_test_data_path(const char *relative);
const char *sbm_test_data_dir(void);
/* Optional extra data: relative under SBM_DATA_DIR (the environment variable, else the CMake
 * cache variable). Absent: prints "[  SKIP    ] optional data PATH not found" and returns NULL
 * (_find) or skip()s the test (_path). Static buffer. */
const char *sbm_test_extra_data_find(const char *relative);
const char *sbm_test_extra_data_path(const char *relative);
/* At the end of a test over total optional files of which found were there (and checked): with
 * any missing, prints how many and skip()s, so that the test is reported skipped, never passed
 * with part of its data (or none) checked. */
void sbm_test_extra_data_done(int found, int total);
/* The decompressed bytes of a plain, gzip or bzip2 file in a temporary file, through zlib and
 * libbz2 directly (not sbm's reader), for the suites' independent parsers. Fails the test on
 * error. */
FILE *sbm_test_open_plain(const char *path);
/* Write src's decompressed bytes to dst as they are (kind "plain"), gzip ("gz") or bzip2
 * ("bz2"). */
void sbm_test_recode(const char *src, const char *dst, const char *kind);

/* sbm_test_tmp_dir/name, in one of 16 buffers used in turn. */
const char *sbm_test_tmp_path(const char *name);
/* Write text to sbm_test_tmp_path(name) (failing the test on error); @return that path. */
const char *sbm_test_write_text(const char *name, const char *text);

/* Exit status of a suite that cannot run here (ctest's SKIP_RETURN_CODE, as automake's). */
#define SBM_TEST_SKIP_CODE 77
/* For suites that test nothing but the GPU (tests/test_cuda_*.c), first thing in main: without
 * a CUDA build or a device, print why and exit with SBM_TEST_SKIP_CODE, so that ctest lists
 * the suite as skipped instead of passed (with sbm_test_gpu_required(): exit 1, a failure). */
void sbm_test_require_gpu(const char *suite);


/* ---------------------------------------------------------------------------------------- */
/* Shape lists, skips, temporary directories, vectors in the context's memory               */
/* ---------------------------------------------------------------------------------------- */

/* One block shape r x c / one GEMM triple (r x k times k x c). */
typedef struct sbm_test_shape {
    int r, c;
} sbm_test_shape;
typedef struct sbm_test_triple {
    int r, k, c;
} sbm_test_triple;

/* Initializer of every shape in SBM_BLOCK_SHAPES (every triple in SBM_GEMM_TRIPLES) followed by
 * the suite's own generic extras, e.g. SBM_TEST_SHAPES({2, 5}, {11, 4}); suites pick different
 * extras on purpose, so the list stays per suite (needs sbm_blocks.h). */
#define SBM_TEST_SHAPE_ITEM_(R, C) {R, C},
#define SBM_TEST_TRIPLE_ITEM_(R, K, C) {R, K, C},
#define SBM_TEST_SHAPES(...) {SBM_BLOCK_SHAPES(SBM_TEST_SHAPE_ITEM_) __VA_ARGS__}
#define SBM_TEST_TRIPLES(...) {SBM_GEMM_TRIPLES(SBM_TEST_TRIPLE_ITEM_) __VA_ARGS__}

/* A backend other than the CPU that does not implement the operation yet (status st is
 * SBM_ERR_NOT_SUPPORTED) skips visibly; the CPU backend must implement everything. */
#define SBM_TEST_SKIP_IF_UNSUPPORTED(e, st)                                               \
    do {                                                                                  \
        if ((st) == SBM_ERR_NOT_SUPPORTED && (e)->backend != SBM_BACKEND_CPU) {           \
            print_message("[  SKIP    ] %s\n", sbm_ctx_last_error((e)->ctx));             \
            skip();                                                                       \
        }                                                                                 \
    } while (0)

/* A call that must succeed, except that SBM_ERR_NOT_SUPPORTED skips on a backend other than
 * the CPU (as SBM_TEST_SKIP_IF_UNSUPPORTED). */
#define SBM_TEST_OK_OR_SKIP(e, call)                                                      \
    do {                                                                                  \
        sbm_status st_ = (call);                                                          \
        SBM_TEST_SKIP_IF_UNSUPPORTED(e, st_);                                             \
        SBM_ASSERT_OK((e)->ctx, st_);                                                     \
    } while (0)

/* Temporary directory of a suite: group setup/teardown (cmocka_run_group_tests) that create
 * sbm_test_tmp_dir under $TMPDIR (or /tmp) and remove it with everything in it. */
extern char sbm_test_tmp_dir[512];
int sbm_test_make_tmp_dir(void **state);
int sbm_test_remove_tmp_dir(void **state);

/* n doubles in ctx's memory holding the host array h (n may be 0); free with sbm__free
 * (white-box: goes through the backend's copy). */
double *sbm_test_vec_upload(sbm_ctx *ctx, const double *h, int64_t n);
/* Copies n doubles of ctx's memory d into the host array h. */
void sbm_test_vec_download_into(sbm_ctx *ctx, double *h, const double *d, int64_t n);
/* Host copy (malloc'd, at least one element) of n doubles of ctx's memory d. */
double *sbm_test_vec_download(sbm_ctx *ctx, const double *d, int64_t n);

#endif /* SBM_TEST_UTIL_H */
