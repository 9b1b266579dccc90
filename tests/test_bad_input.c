/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
/* The bad-input catalogue: one table of malformed files (Matrix Market, BAL, g2o) and malformed
 * API arguments, each with the status and a substring of the message it must give. Every row
 * runs on a fresh context error state; the inputs of the API rows (matrices and vectors of a
 * fixture) must be unchanged afterwards and output handles NULL. tests/bad_input/README.md
 * lists the rows. Many of these are also tested where the operation is; this is the one place
 * that states them all. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Files                                                                                    */
/* ---------------------------------------------------------------------------------------- */

typedef enum file_kind { MTX, BAL, G2O } file_kind;

typedef struct file_row {
    const char *description;
    file_kind kind;
    const char *text; /* file content (NULL: the file does not exist) */
    long len;         /* bytes of text (-1: strlen) */
    sbm_status status;
    const char *line;      /* "N:": the message must name "<path>:N:" ("" = any place) */
    const char *substring; /* the reason */
} file_row;

#define MM "%%MatrixMarket matrix coordinate real general\n"
#define MMS "%%MatrixMarket matrix coordinate real symmetric\n"

static const file_row file_rows[] = {
    /* Matrix Market */
    {"mtx: empty file", MTX, "", -1, SBM_ERR_PARSE, "1:", "empty"},
    {"mtx: banner with too few words", MTX, "%%MatrixMarket matrix coordinate\n3 3 1\n1 1 1.0\n", -1, SBM_ERR_PARSE, "1:", "expected 4"},
    {"mtx: banner of another object", MTX, "%%MatrixMarket vector coordinate real general\n1 1 1\n1 1 1\n", -1, SBM_ERR_PARSE, "1:", "unknown object 'vector'"},
    {"mtx: dense array format", MTX, "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", -1, SBM_ERR_NOT_SUPPORTED, "1:", "array"},
    {"mtx: complex field", MTX, "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", -1, SBM_ERR_NOT_SUPPORTED, "1:", "complex"},
    {"mtx: hermitian symmetry", MTX, "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n", -1, SBM_ERR_NOT_SUPPORTED, "1:", "hermitian"},
    {"mtx: unknown field word", MTX, "%%MatrixMarket matrix coordinate quaternion general\n1 1 1\n1 1 1\n", -1, SBM_ERR_PARSE, "1:", "unknown field 'quaternion'"},
    {"mtx: banner only", MTX, MM, -1, SBM_ERR_PARSE, "1:", "ends before the size line"},
    {"mtx: size line with two numbers", MTX, MM "3 3\n", -1, SBM_ERR_PARSE, "2:", "size line has 2 numbers"},
    {"mtx: negative rows", MTX, MM "-3 3 1\n1 1 1\n", -1, SBM_ERR_PARSE, "2:", "row count -3 is negative"},
    {"mtx: negative nnz", MTX, MM "3 3 -1\n", -1, SBM_ERR_PARSE, "2:", "entry count -1 is negative"},
    {"mtx: rows beyond int64", MTX, MM "99999999999999999999 3 1\n1 1 1\n", -1, SBM_ERR_OVERFLOW, "2:", "does not fit in 64 bits"},
    {"mtx: columns beyond int32", MTX, MM "3 3000000000 1\n1 1 1\n", -1, SBM_ERR_OVERFLOW, "2:", "exceeds the int32 index limit"},
    {"mtx: truncated entries", MTX, MM "3 3 3\n1 1 1\n2 2 2\n", -1, SBM_ERR_PARSE, "4:", "the file ends after 2 of the 3 entries"},
    {"mtx: truncated mid-line", MTX, MM "3 3 2\n1 1 1\n2 2", -1, SBM_ERR_PARSE, "4:", "entry has 2 numbers"},
    {"mtx: row index 0", MTX, MM "3 3 1\n0 1 1\n", -1, SBM_ERR_PARSE, "3:", "row index 0 is outside 1..3"},
    {"mtx: row index past the end", MTX, MM "3 3 1\n4 1 1\n", -1, SBM_ERR_PARSE, "3:", "row index 4 is outside 1..3"},
    {"mtx: column index 0", MTX, MM "3 3 1\n1 0 1\n", -1, SBM_ERR_PARSE, "3:", "column index 0 is outside 1..3"},
    {"mtx: column index past the end", MTX, MM "3 3 1\n1 9 1\n", -1, SBM_ERR_PARSE, "3:", "column index 9 is outside 1..3"},
    {"mtx: NaN value", MTX, MM "3 3 1\n1 1 nan\n", -1, SBM_ERR_PARSE, "3:", "'nan' is not finite"},
    {"mtx: infinite value", MTX, MM "3 3 1\n1 1 -inf\n", -1, SBM_ERR_PARSE, "3:", "'-inf' is not finite"},
    {"mtx: value overflows double", MTX, MM "3 3 1\n1 1 1e999\n", -1, SBM_ERR_PARSE, "3:", "'1e999' is not finite"},
    {"mtx: non-numeric value", MTX, MM "3 3 1\n1 1 abc\n", -1, SBM_ERR_PARSE, "3:", "'abc' is not a number"},
    {"mtx: missing value", MTX, MM "3 3 1\n1 1\n", -1, SBM_ERR_PARSE, "3:", "entry has 2 numbers"},
    {"mtx: garbage after an index", MTX, MM "3 3 1\n1x 1 1\n", -1, SBM_ERR_PARSE, "3:", "'1x' is not an integer"},
    {"mtx: more entries than announced", MTX, MM "3 3 1\n1 1 1\n2 2 2\n", -1, SBM_ERR_PARSE, "4:", "more entries than the 1 announced"},
    {"mtx: banner word after the symmetry", MTX, "%%MatrixMarket matrix coordinate real general extra\n1 1 1\n1 1 1\n", -1, SBM_ERR_PARSE, "1:", "extra"},
    {"mtx: skew-symmetric diagonal entry", MTX, "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n", -1, SBM_ERR_PARSE, "3:", "diagonal entry (2,2)"},
    {"mtx: symmetric but not square", MTX, MMS "3 4 1\n1 1 1\n", -1, SBM_ERR_PARSE, "2:", "must be square"},
    {"mtx: NUL byte in a line", MTX, MM "3 3 1\n1 \0 1\n", 55, SBM_ERR_PARSE, "3:", "entry has 1 number"},
    {"mtx: duplicates summing to inf", MTX, MM "3 3 3\n1 1 1e308\n% between\n2 2 1\n1 1 1e308\n", -1, SBM_ERR_PARSE, "6:", "the duplicates of entry (1,1) sum to inf here"},
    {"mtx: symmetric storing both triangles", MTX, MMS "3 3 3\n2 1 5\n3 3 1\n1 2 5\n", -1, SBM_ERR_PARSE, "5:", "entry (1,2) mirrors the entry (2,1) on line 3"},
    {"mtx: skew-symmetric storing both triangles", MTX, "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n1 3 5\n3 1 -5\n", -1, SBM_ERR_PARSE, "4:", "entry (3,1) mirrors the entry (1,3) on line 3"},
    {"mtx: missing file", MTX, NULL, 0, SBM_ERR_IO, "", "cannot open"},
    /* BAL */
    {"bal: empty file", BAL, "", -1, SBM_ERR_PARSE, "1:", "ends before the camera count"},
    {"bal: header with two numbers", BAL, "2 3\n", -1, SBM_ERR_PARSE, "1:", "ends before the observation count"},
    {"bal: negative cameras", BAL, "-1 1 1\n", -1, SBM_ERR_PARSE, "1:", "-1 is out of range"},
    {"bal: cameras beyond int32", BAL, "99999999999 1 1\n", -1, SBM_ERR_PARSE, "1:", "out of range (0 to 2147483647)"},
    {"bal: camera index out of range", BAL, "1 1 1\n1 0 0.5 0.5\n", -1, SBM_ERR_PARSE, "2:", "camera index 1 is out of range"},
    {"bal: negative point index", BAL, "1 1 1\n0 -1 0.5 0.5\n", -1, SBM_ERR_PARSE, "2:", "point index -1 is out of range"},
    {"bal: NaN observation", BAL, "1 1 1\n0 0 nan 0.5\n", -1, SBM_ERR_PARSE, "2:", "'nan' is not finite"},
    {"bal: truncated observations", BAL, "1 1 2\n0 0 0.5 0.5\n", -1, SBM_ERR_PARSE, "2:", "ends before observation 2 of 2"},
    {"bal: truncated parameters", BAL, "1 1 1\n0 0 0.5 0.5\n1\n2\n3\n", -1, SBM_ERR_PARSE, "5:", "ends before parameter 4 of camera 0"},
    {"bal: infinite parameter", BAL, "1 1 1\n0 0 0.5 0.5\n0 0 0 0 0 -1 inf 0 0 0 0 5\n", -1, SBM_ERR_PARSE, "3:", "'inf' is not finite"},
    {"bal: non-numeric parameter", BAL, "1 1 1\n0 0 0.5 0.5\n0 0 0 0 0 -1 500 x 0 0 0 5\n", -1, SBM_ERR_PARSE, "3:", "'x' is not a number"},
    {"bal: garbage after the parameters", BAL, "1 1 1\n0 0 0.5 0.5\n0 0 0 0 0 -1 500 0 0 0 0 5 7\n", -1, SBM_ERR_PARSE, "3:", "unexpected '7' after the last point"},
    {"bal: bzip2 magic, corrupt stream", BAL, "BZh91AY&SY garbage that is not a bzip2 stream\n", -1, SBM_ERR_IO, "1:", "corrupt bzip2 data"},
    {"bal: missing file", BAL, NULL, 0, SBM_ERR_IO, "", "cannot open"},
    /* g2o */
    {"g2o: empty file", G2O, "", -1, SBM_ERR_PARSE, "1:", "no VERTEX or EDGE lines"},
    {"g2o: unknown element", G2O, "VERTEX_SE2 0 0 0 0\nFOO 1 2\n", -1, SBM_ERR_NOT_SUPPORTED, "2:", "'FOO' is not supported"},
    {"g2o: landmark (not read by sbm)", G2O, "VERTEX_SE2 0 0 0 0\nVERTEX_XY 1 2 3\n", -1, SBM_ERR_NOT_SUPPORTED, "2:", "'VERTEX_XY' is not supported"},
    {"g2o: truncated vertex", G2O, "VERTEX_SE2 0 1\n", -1, SBM_ERR_PARSE, "1:", "needs 4 values"},
    {"g2o: duplicate vertex id", G2O, "VERTEX_SE2 0 0 0 0\nVERTEX_SE2 0 1 0 0\n", -1, SBM_ERR_PARSE, "2:", "vertex 0 is defined twice"},
    {"g2o: vertex id beyond int32", G2O, "VERTEX_SE2 99999999999 0 0 0\n", -1, SBM_ERR_PARSE, "1:", "99999999999"},
    {"g2o: NaN pose", G2O, "VERTEX_SE2 0 nan 0 0\n", -1, SBM_ERR_PARSE, "1:", "'nan' is not finite"},
    {"g2o: edge to an undefined vertex", G2O, "VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 0 0 0\nEDGE_SE2 0 7 1 0 0 1 0 0 1 0 1\n", -1, SBM_ERR_PARSE, "3:", "names vertex 7, which has no VERTEX line"},
    {"g2o: truncated edge information", G2O, "VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 0 0 0\nEDGE_SE2 0 1 1 0 0 1 0 0\n", -1, SBM_ERR_PARSE, "3:", "needs 11 values"},
    {"g2o: infinite information", G2O, "VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 0 0 0\nEDGE_SE2 0 1 1 0 0 inf 0 0 1 0 1\n", -1, SBM_ERR_PARSE, "3:", "'inf' is not finite"},
    {"g2o: self edge", G2O, "VERTEX_SE2 0 0 0 0\nEDGE_SE2 0 0 1 0 0 1 0 0 1 0 1\n", -1, SBM_ERR_PARSE, "2:", "joins vertex 0 to itself"},
    {"g2o: 2D and 3D mixed", G2O, "VERTEX_SE2 0 0 0 0\nVERTEX_SE3:QUAT 1 0 0 0 0 0 0 1\n", -1, SBM_ERR_PARSE, "2:", "the graph is 2D"},
    {"g2o: zero quaternion", G2O, "VERTEX_SE3:QUAT 0 0 0 0 0 0 0 0\n", -1, SBM_ERR_PARSE, "1:", "zero norm"},
    {"g2o: FIX of an unknown vertex", G2O, "VERTEX_SE2 0 0 0 0\nFIX 5\n", -1, SBM_ERR_PARSE, "2:", "FIX names vertex 5"},
    {"g2o: indefinite information", G2O, "VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 0 0 0\nEDGE_SE2 0 1 1 0 0 1 2 0 1 0 1\nEDGE_SE2 0 1 1 0 0 1 0 0 1 0 -3\n", -1, SBM_ERR_PARSE, "3:", "EDGE_SE2 0 1: the information matrix is not positive semidefinite: smallest eigenvalue -1 (largest magnitude 3, tolerance 1e-10 of it); 2 of the 2 edges"},
    {"g2o: missing file", G2O, NULL, 0, SBM_ERR_IO, "", "cannot open"},
};

/* ---------------------------------------------------------------------------------------- */
/* API arguments                                                                            */
/* ---------------------------------------------------------------------------------------- */

typedef struct fixture {
    sbm_ctx *ctx;
    sbm_cbc *A;    /* 4 x 3 blocks of 3x2 */
    sbm_cbc *B;    /* 3 x 5 blocks of 2x2: A*B is defined */
    sbm_cbc *Bbad; /* 2 x 5 blocks of 3x2: 6 rows like A's 6 columns, but 3-row blocks */
    sbm_cbc *B4;   /* 4 x 2 blocks of 2x2: A's block size, 8 rows */
    sbm_cbc *D;    /* block-diagonal SPD, 3 blocks of 2x2 */
    sbm_cbc *Dns;  /* block-diagonal, not SPD */
    sbm_cbc *Doff; /* square blocks with an off-diagonal block */
    sbm_cbc *Cp;   /* the C of plan */
    sbm_cbc *A2;   /* A's shape, another pattern */
    sbm_gemm_plan *plan; /* A*B */
    sbm_cbc *Nan;  /* a matrix with a NaN value */
    sbm_csr *P;    /* 6 x 5 */
    sbm_csr *Q;    /* 4 x 6 (P*Q undefined) */
    sbm_bal_problem *bal, *bal2;
    sbm_ba_system *ba;
    double *x, *y;
} fixture;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static uint64_t hash_inputs(const fixture *f)
{
    uint64_t h = 1469598103934665603ull;
    const sbm_cbc *m[] = {f->A, f->B, f->Bbad, f->D, f->Dns, f->Doff, f->Cp, f->A2, f->Nan, f->B4};
    for (size_t t = 0; t < sizeof m / sizeof m[0]; t++) {
        /* host copies, so that device matrices hash the same way */
        sbm_cbc *hm = sbm_test_cbc_to_host(m[t]);
        sbm_cbc_info i = sbm_cbc_get_info(hm);
        h = fnv(h, &i, offsetof(sbm_cbc_info, colptr));
        h = fnv(h, i.colptr, (size_t)(i.nbc + 1) * sizeof(int64_t));
        h = fnv(h, i.rowind, (size_t)i.nnzb * sizeof(int32_t));
        h = fnv(h, i.values, (size_t)(i.nnzb * i.r * i.c) * sizeof(double));
        sbm_cbc_destroy(hm);
    }
    const sbm_csr *c[] = {f->P, f->Q};
    for (size_t t = 0; t < 2; t++) {
        sbm_csr *hc = sbm_test_csr_to_host(c[t]);
        sbm_csr_info i = sbm_csr_get_info(hc);
        h = fnv(h, i.rowptr, (size_t)(i.m + 1) * sizeof(int64_t));
        h = fnv(h, i.colind, (size_t)i.nnz * sizeof(int32_t));
        h = fnv(h, i.values, (size_t)i.nnz * sizeof(double));
        sbm_csr_destroy(hc);
    }
    h = fnv(h, f->x, 64 * sizeof(double));
    sbm_bal_info b = sbm_bal_get_info(f->bal);
    h = fnv(h, b.camera_params, (size_t)b.cameras * 9 * sizeof(double));
    return h;
}

static sbm_cbc *host_cbc(sbm_ctx *ctx, int64_t nbr, int64_t nbc, int r, int c,
                         const int64_t *colptr, const int32_t *rowind, const double *values)
{
    sbm_cbc *M = NULL;
    SBM_ASSERT_OK(ctx, sbm_cbc_create(ctx, &M, nbr, nbc, r, c, colptr, rowind, values));
    return M;
}

static void fixture_make(fixture *f, sbm_ctx *ctx)
{
    memset(f, 0, sizeof *f);
    f->ctx = ctx;
    f->A = sbm_test_random_cbc(ctx, 1, 4, 3, 3, 2, 0.6);
    f->B = sbm_test_random_cbc(ctx, 2, 3, 5, 2, 2, 0.6);
    f->Bbad = sbm_test_random_cbc(ctx, 3, 2, 5, 3, 2, 0.6);
    f->A2 = sbm_test_random_cbc(ctx, 4, 4, 3, 3, 2, 0.3);
    f->B4 = sbm_test_random_cbc(ctx, 12, 4, 2, 2, 2, 0.5);
    f->D = sbm_test_random_bdiag_spd(ctx, 5, 3, 2);
    const int64_t cp3[4] = {0, 1, 2, 3};
    const int32_t ri3[3] = {0, 1, 2};
    const double ns[12] = {1, 0, 0, 1, -1, 0, 0, 1, 1, 0, 0, 1}; /* block 1 is indefinite */
    f->Dns = host_cbc(ctx, 3, 3, 2, 2, cp3, ri3, ns);
    const int32_t ro[3] = {0, 0, 2};
    f->Doff = host_cbc(ctx, 3, 3, 2, 2, cp3, ro, ns);
    const double nanv[12] = {1, 2, 3, 4, 5, NAN, 7, 8, 9, 10, 11, 12};
    f->Nan = host_cbc(ctx, 3, 3, 2, 2, cp3, ri3, nanv);
    SBM_ASSERT_OK(ctx, sbm_cbc_gemm_plan(ctx, SBM_OP_N, f->A, SBM_OP_N, f->B, NULL, 0, &f->plan,
                                         &f->Cp));
    f->P = sbm_test_random_csr(ctx, 6, 6, 5, 0.4);
    f->Q = sbm_test_random_csr(ctx, 7, 4, 6, 0.4);
    f->x = sbm_test_random_vector(8, 64);
    f->y = sbm_test_random_vector(9, 64);
    sbm_bal_generate_options o = sbm_bal_generate_defaults(3, 5, 2, 10);
    SBM_ASSERT_OK(ctx, sbm_bal_generate(ctx, &o, &f->bal));
    o = sbm_bal_generate_defaults(4, 5, 3, 11);
    SBM_ASSERT_OK(ctx, sbm_bal_generate(ctx, &o, &f->bal2));
    SBM_ASSERT_OK(ctx, sbm_ba_system_create(ctx, f->bal, &f->ba));
}

static void fixture_free(fixture *f)
{
    sbm_cbc *m[] = {f->A, f->B, f->Bbad, f->D, f->Dns, f->Doff, f->Cp, f->A2, f->Nan, f->B4};
    for (size_t t = 0; t < sizeof m / sizeof m[0]; t++) sbm_cbc_destroy(m[t]);
    sbm_gemm_plan_destroy(f->plan);
    sbm_csr_destroy(f->P);
    sbm_csr_destroy(f->Q);
    sbm_ba_system_destroy(f->ba);
    sbm_bal_destroy(f->bal);
    sbm_bal_destroy(f->bal2);
    free(f->x);
    free(f->y);
}

/* Output handles start non-NULL and must come back NULL. */
#define OUT_CBC(call)                        \
    sbm_cbc *out = (sbm_cbc *)0x1;           \
    sbm_status st = (call);                  \
    if (st == SBM_SUCCESS) sbm_cbc_destroy(out); \
    else assert_null(out);                   \
    return st
#define OUT_CSR(call)                        \
    sbm_csr *out = (sbm_csr *)0x1;           \
    sbm_status st = (call);                  \
    if (st == SBM_SUCCESS) sbm_csr_destroy(out); \
    else assert_null(out);                   \
    return st

static const int64_t cp_ok[3] = {0, 2, 3};
static const int32_t ri_ok[3] = {0, 2, 1};

static sbm_status a_create_null_out(fixture *f)
{
    return sbm_cbc_create(f->ctx, NULL, 3, 2, 2, 2, cp_ok, ri_ok, NULL);
}
static sbm_status a_create_null_colptr(fixture *f) { OUT_CBC(sbm_cbc_create(f->ctx, &out, 3, 2, 2, 2, NULL, ri_ok, NULL)); }
static sbm_status a_create_null_rowind(fixture *f) { OUT_CBC(sbm_cbc_create(f->ctx, &out, 3, 2, 2, 2, cp_ok, NULL, NULL)); }
static sbm_status a_create_neg_nbr(fixture *f) { OUT_CBC(sbm_cbc_create(f->ctx, &out, -3, 2, 2, 2, cp_ok, ri_ok, NULL)); }
static sbm_status a_create_r0(fixture *f) { OUT_CBC(sbm_cbc_create(f->ctx, &out, 3, 2, 0, 2, cp_ok, ri_ok, NULL)); }
static sbm_status a_create_c33(fixture *f) { OUT_CBC(sbm_cbc_create(f->ctx, &out, 3, 2, 2, 33, cp_ok, ri_ok, NULL)); }
static sbm_status a_create_nbr_int32(fixture *f) { OUT_CBC(sbm_cbc_create(f->ctx, &out, (int64_t)1 << 32, 2, 2, 2, cp_ok, ri_ok, NULL)); }
static sbm_status a_create_scalar_overflow(fixture *f) { OUT_CBC(sbm_cbc_create(f->ctx, &out, 3, INT64_MAX / 2, 2, 4, cp_ok, ri_ok, NULL)); }
static sbm_status a_create_colptr0(fixture *f)
{
    const int64_t cp[3] = {1, 2, 3};
    OUT_CBC(sbm_cbc_create(f->ctx, &out, 3, 2, 2, 2, cp, ri_ok, NULL));
}
static sbm_status a_create_colptr_decreasing(fixture *f)
{
    const int64_t cp[3] = {0, 3, 2};
    OUT_CBC(sbm_cbc_create(f->ctx, &out, 3, 2, 2, 2, cp, ri_ok, NULL));
}
static sbm_status a_create_rowind_range(fixture *f)
{
    const int32_t ri[3] = {0, 3, 1};
    OUT_CBC(sbm_cbc_create(f->ctx, &out, 3, 2, 2, 2, cp_ok, ri, NULL));
}
static sbm_status a_create_rowind_negative(fixture *f)
{
    const int32_t ri[3] = {-1, 2, 1};
    OUT_CBC(sbm_cbc_create(f->ctx, &out, 3, 2, 2, 2, cp_ok, ri, NULL));
}
static sbm_status a_create_unsorted(fixture *f)
{
    const int32_t ri[3] = {2, 0, 1};
    OUT_CBC(sbm_cbc_create(f->ctx, &out, 3, 2, 2, 2, cp_ok, ri, NULL));
}
static sbm_status a_create_duplicate(fixture *f)
{
    const int32_t ri[3] = {1, 1, 1};
    OUT_CBC(sbm_cbc_create(f->ctx, &out, 3, 2, 2, 2, cp_ok, ri, NULL));
}
static sbm_status a_wrap_null_values(fixture *f)
{
    int64_t cp[3] = {0, 2, 3};
    int32_t ri[3] = {0, 2, 1};
    OUT_CBC(sbm_cbc_wrap(f->ctx, &out, 3, 2, 2, 2, cp, ri, NULL));
}
static sbm_status a_triplets_out_of_range(fixture *f)
{
    const int32_t br[2] = {0, 5}, bc[2] = {0, 1};
    OUT_CBC(sbm_cbc_from_triplets(f->ctx, &out, 3, 2, 2, 2, 2, br, bc, f->x));
}
static sbm_status a_triplets_negative_count(fixture *f)
{
    const int32_t br[2] = {0, 1}, bc[2] = {0, 1};
    OUT_CBC(sbm_cbc_from_triplets(f->ctx, &out, 3, 2, 2, 2, -2, br, bc, f->x));
}
static sbm_status a_check_nan(fixture *f) { return sbm_cbc_check(f->ctx, f->Nan, 1); }
static sbm_status a_csr_create_unsorted(fixture *f)
{
    const int64_t rp[3] = {0, 2, 3};
    const int32_t ci[3] = {3, 1, 0};
    OUT_CSR(sbm_csr_create(f->ctx, &out, 2, 4, rp, ci, NULL));
}
static sbm_status a_csr_create_duplicate(fixture *f)
{
    const int64_t rp[3] = {0, 2, 3};
    const int32_t ci[3] = {1, 1, 0};
    OUT_CSR(sbm_csr_create(f->ctx, &out, 2, 4, rp, ci, NULL));
}
static sbm_status a_csr_create_col_range(fixture *f)
{
    const int64_t rp[3] = {0, 2, 3};
    const int32_t ci[3] = {1, 4, 0};
    OUT_CSR(sbm_csr_create(f->ctx, &out, 2, 4, rp, ci, NULL));
}
static sbm_status a_csr_create_negative(fixture *f)
{
    const int64_t rp[3] = {0, 2, 3};
    const int32_t ci[3] = {1, 3, 0};
    OUT_CSR(sbm_csr_create(f->ctx, &out, 2, -4, rp, ci, NULL));
}
static sbm_status a_csr_create_columns_int32(fixture *f)
{
    const int64_t rp[3] = {0, 2, 3};
    const int32_t ci[3] = {1, 3, 0};
    OUT_CSR(sbm_csr_create(f->ctx, &out, 2, (int64_t)1 << 40, rp, ci, NULL));
}
static sbm_status a_csr_triplets_range(fixture *f)
{
    const int32_t r[2] = {0, 1}, c[2] = {0, -1};
    OUT_CSR(sbm_csr_from_triplets(f->ctx, &out, 2, 2, 2, r, c, f->x));
}
static sbm_status a_add_shape(fixture *f) { OUT_CBC(sbm_cbc_add(f->ctx, 1, f->A, 1, f->B, &out)); }
static sbm_status a_add_null(fixture *f) { OUT_CBC(sbm_cbc_add(f->ctx, 1, f->A, 1, NULL, &out)); }
static sbm_status a_reblock_divisible(fixture *f) { OUT_CBC(sbm_cbc_reblock(f->ctx, f->A, 5, 2, &out)); }
static sbm_status a_csr_to_cbc_divisible(fixture *f) { OUT_CBC(sbm_csr_to_cbc(f->ctx, f->P, 4, 5, &out)); }
static sbm_status a_to_bsr_layout(fixture *f)
{
    int64_t rp[8];
    int32_t ci[16];
    double v[128];
    return sbm_cbc_to_bsr(f->ctx, f->A, (sbm_layout)7, rp, ci, v);
}
static sbm_status a_gemm_inner(fixture *f)
{
    /* A is 12 x 6 (3x2 blocks), B4 8 x 4 (2x2 blocks): block sizes agree, dimensions do not */
    OUT_CBC(sbm_cbc_gemm(f->ctx, 1, SBM_OP_N, f->A, SBM_OP_N, f->B4, NULL, 0, &out));
}
static sbm_status a_gemm_block_shape(fixture *f)
{
    /* A is 12 x 6 with 3x2 blocks, Bbad 6 x 10 with 3x2 blocks: scalar sizes agree, blocks do not */
    OUT_CBC(sbm_cbc_gemm(f->ctx, 1, SBM_OP_N, f->A, SBM_OP_N, f->Bbad, NULL, 0, &out));
}
static sbm_status a_gemm_bad_op(fixture *f)
{
    OUT_CBC(sbm_cbc_gemm(f->ctx, 1, (sbm_op)5, f->A, SBM_OP_N, f->B, NULL, 0, &out));
}
static sbm_status a_gemm_upper_rect(fixture *f)
{
    OUT_CBC(sbm_cbc_gemm(f->ctx, 1, SBM_OP_N, f->A, SBM_OP_N, f->B, NULL, SBM_GEMM_UPPER, &out));
}
static sbm_status a_gemm_bad_flags(fixture *f)
{
    OUT_CBC(sbm_cbc_gemm(f->ctx, 1, SBM_OP_N, f->A, SBM_OP_N, f->B, NULL, 0x80u, &out));
}
static sbm_status a_gemm_u_shape(fixture *f)
{
    OUT_CBC(sbm_cbc_gemm(f->ctx, 1, SBM_OP_N, f->A, SBM_OP_N, f->B, f->D, 0, &out));
}
static sbm_status a_gemm_null_plan_out(fixture *f)
{
    sbm_cbc *C = (sbm_cbc *)0x1;
    sbm_status st = sbm_cbc_gemm_plan(f->ctx, SBM_OP_N, f->A, SBM_OP_N, f->B, NULL, 0, NULL, &C);
    assert_null(C);
    return st;
}
static sbm_status a_gemm_exec_pattern(fixture *f)
{
    return sbm_cbc_gemm_execute(f->ctx, f->plan, 1, f->A2, f->B, NULL, f->Cp);
}
static sbm_status a_gemm_exec_other_c(fixture *f)
{
    return sbm_cbc_gemm_execute(f->ctx, f->plan, 1, f->A, f->B, NULL, f->A2);
}
static sbm_status a_gemm_exec_alias(fixture *f)
{
    return sbm_cbc_gemm_execute(f->ctx, f->plan, 1, f->Cp, f->B, NULL, f->Cp);
}
static sbm_status a_bdiag_not_spd(fixture *f)
{
    sbm_cbc *Dinv = NULL;
    SBM_ASSERT_OK(f->ctx, sbm_cbc_copy(f->ctx, f->Dns, &Dinv));
    sbm_status st = sbm_bdiag_inverse(f->ctx, f->Dns, Dinv);
    sbm_cbc_destroy(Dinv);
    return st;
}
static sbm_status a_bdiag_off_diagonal(fixture *f)
{
    sbm_cbc *Dinv = NULL;
    SBM_ASSERT_OK(f->ctx, sbm_cbc_copy(f->ctx, f->Doff, &Dinv));
    sbm_status st = sbm_bdiag_inverse(f->ctx, f->Doff, Dinv);
    sbm_cbc_destroy(Dinv);
    return st;
}
static sbm_status a_bdiag_rect_blocks(fixture *f)
{
    sbm_cbc *Dinv = NULL;
    SBM_ASSERT_OK(f->ctx, sbm_cbc_copy(f->ctx, f->A, &Dinv));
    sbm_status st = sbm_bdiag_inverse(f->ctx, f->A, Dinv);
    sbm_cbc_destroy(Dinv);
    return st;
}
static sbm_status a_bdiag_inverse_pattern(fixture *f)
{
    /* Dinv must have D's pattern: Doff has another */
    sbm_cbc *Dinv = NULL;
    SBM_ASSERT_OK(f->ctx, sbm_cbc_copy(f->ctx, f->Doff, &Dinv));
    sbm_status st = sbm_bdiag_inverse(f->ctx, f->D, Dinv);
    sbm_cbc_destroy(Dinv);
    return st;
}
static sbm_status a_bdiag_scale_dims(fixture *f)
{
    sbm_cbc *Y = NULL;
    SBM_ASSERT_OK(f->ctx, sbm_cbc_copy(f->ctx, f->A, &Y));
    /* D is 6 x 6, A is 12 x 6: D*A is undefined */
    sbm_status st = sbm_bdiag_scale(f->ctx, SBM_SIDE_LEFT, f->D, f->A, Y);
    sbm_cbc_destroy(Y);
    return st;
}
static sbm_status a_bdiag_scale_alias(fixture *f)
{
    sbm_cbc *E = NULL;
    SBM_ASSERT_OK(f->ctx, sbm_cbc_copy(f->ctx, f->D, &E));
    sbm_status st = sbm_bdiag_scale(f->ctx, SBM_SIDE_LEFT, E, f->D, E);
    sbm_cbc_destroy(E);
    return st;
}
static sbm_status a_spmv_alias(fixture *f)
{
    double *v = malloc(64 * sizeof(double));
    memcpy(v, f->x, 64 * sizeof(double));
    sbm_status st = sbm_cbc_spmv(f->ctx, SBM_OP_N, 1, f->D, v, 0, v);
    free(v);
    return st;
}
static sbm_status a_spmv_null_x(fixture *f) { return sbm_cbc_spmv(f->ctx, SBM_OP_N, 1, f->A, NULL, 0, f->y); }
static sbm_status a_spmv_bad_op(fixture *f) { return sbm_cbc_spmv(f->ctx, (sbm_op)2, 1, f->A, f->x, 0, f->y); }
static sbm_status a_csr_spmv_alias(fixture *f)
{
    double *v = malloc(64 * sizeof(double));
    memcpy(v, f->x, 64 * sizeof(double));
    sbm_status st = sbm_csr_spmv(f->ctx, 1, f->P, v, 0, v);
    free(v);
    return st;
}
static sbm_status a_spmm_ldb(fixture *f)
{
    double C[64];
    return sbm_csr_spmm(f->ctx, 1, f->P, 2, SBM_LAYOUT_COL_MAJOR, f->x, 3, 0, C, 6);
}
static sbm_status a_spmm_ncols(fixture *f)
{
    double C[64];
    return sbm_csr_spmm(f->ctx, 1, f->P, -1, SBM_LAYOUT_COL_MAJOR, f->x, 5, 0, C, 6);
}
static sbm_status a_csr_gemm_dims(fixture *f) { OUT_CSR(sbm_csr_gemm(f->ctx, f->P, f->Q, &out)); }
static sbm_status a_read_mtx_null_path(fixture *f) { OUT_CSR(sbm_csr_read_mtx(f->ctx, NULL, &out)); }
static sbm_status a_write_mtx_no_dir(fixture *f)
{
    return sbm_csr_write_mtx(f->ctx, "/nonexistent-sbm-dir/x.mtx", f->P);
}
static sbm_status a_set_allocator_half(fixture *f)
{
    sbm_allocator a = {NULL, NULL, NULL};
    return sbm_ctx_set_allocator(f->ctx, &a);
}
static sbm_status a_bal_generate_obs(fixture *f)
{
    sbm_bal_generate_options o = sbm_bal_generate_defaults(3, 5, 4, 1);
    sbm_bal_problem *p = (sbm_bal_problem *)0x1;
    sbm_status st = sbm_bal_generate(f->ctx, &o, &p);
    assert_null(p);
    return st;
}
/* pixel_noise or perturbation near DBL_MAX: finite options, non-finite data */
static sbm_status a_bal_generate_huge(fixture *f, double noise, double perturbation)
{
    sbm_bal_generate_options o = sbm_bal_generate_defaults(4, 5, 3, 1);
    o.pixel_noise = noise;
    o.perturbation = perturbation;
    sbm_bal_problem *p = (sbm_bal_problem *)0x1;
    sbm_status st = sbm_bal_generate(f->ctx, &o, &p);
    assert_null(p);
    return st;
}
static sbm_status a_bal_generate_noise(fixture *f) { return a_bal_generate_huge(f, 1e308, 1); }
static sbm_status a_bal_generate_perturb(fixture *f) { return a_bal_generate_huge(f, 1, 1e308); }
static sbm_status a_ba_linearize_other(fixture *f) { return sbm_ba_linearize(f->ctx, f->ba, f->bal2); }
static sbm_status a_schur_not_spd(fixture *f)
{
    /* U 3 blocks of 2x2, V = Dns (not SPD), W = D (3 x 3 of 2x2) */
    OUT_CBC(sbm_ba_schur(f->ctx, f->D, f->Dns, f->D, NULL, NULL, &out, NULL));
}
static sbm_status a_damping_negative(fixture *f) { return sbm_ba_set_damping(f->ctx, f->ba, -1.0); }

typedef struct api_row {
    const char *description;
    sbm_status (*call)(fixture *f);
    sbm_status status;
    const char *substring;
} api_row;

static const api_row api_rows[] = {
    {"cbc_create: NULL output handle", a_create_null_out, SBM_ERR_NULL_ARGUMENT, "argument A"},
    {"cbc_create: NULL colptr", a_create_null_colptr, SBM_ERR_NULL_ARGUMENT, "h_colptr"},
    {"cbc_create: NULL rowind with blocks", a_create_null_rowind, SBM_ERR_NULL_ARGUMENT, "h_rowind"},
    {"cbc_create: negative block rows", a_create_neg_nbr, SBM_ERR_INVALID_ARGUMENT, "negative"},
    {"cbc_create: block rows 0", a_create_r0, SBM_ERR_BLOCK_SHAPE, "block shape 0x2"},
    {"cbc_create: block columns 33", a_create_c33, SBM_ERR_BLOCK_SHAPE, "2x33"},
    {"cbc_create: 2^32 block rows", a_create_nbr_int32, SBM_ERR_OVERFLOW, "int32"},
    {"cbc_create: scalar columns overflow int64", a_create_scalar_overflow, SBM_ERR_OVERFLOW, "overflows int64"},
    {"cbc_create: colptr[0] != 0", a_create_colptr0, SBM_ERR_INVALID_POINTERS, "colptr"},
    {"cbc_create: decreasing colptr", a_create_colptr_decreasing, SBM_ERR_INVALID_POINTERS, "colptr"},
    {"cbc_create: block row past the end", a_create_rowind_range, SBM_ERR_INDEX_OUT_OF_RANGE, "3"},
    {"cbc_create: negative block row", a_create_rowind_negative, SBM_ERR_INDEX_OUT_OF_RANGE, "-1"},
    {"cbc_create: unsorted block rows", a_create_unsorted, SBM_ERR_UNSORTED_INDICES, "column 0"},
    {"cbc_create: duplicate block row", a_create_duplicate, SBM_ERR_DUPLICATE_INDICES, "column 0"},
    {"cbc_wrap: NULL values", a_wrap_null_values, SBM_ERR_NULL_ARGUMENT, "values"},
    {"cbc_from_triplets: block row out of range", a_triplets_out_of_range, SBM_ERR_INDEX_OUT_OF_RANGE, "5"},
    {"cbc_from_triplets: negative count", a_triplets_negative_count, SBM_ERR_INVALID_ARGUMENT, "-2"},
    {"cbc_check: NaN value", a_check_nan, SBM_ERR_NOT_FINITE, "nan"},
    {"csr_create: unsorted columns", a_csr_create_unsorted, SBM_ERR_UNSORTED_INDICES, "row 0"},
    {"csr_create: duplicate column", a_csr_create_duplicate, SBM_ERR_DUPLICATE_INDICES, "row 0"},
    {"csr_create: column past the end", a_csr_create_col_range, SBM_ERR_INDEX_OUT_OF_RANGE, "4"},
    {"csr_create: negative columns", a_csr_create_negative, SBM_ERR_INVALID_ARGUMENT, "negative"},
    {"csr_create: 2^40 columns", a_csr_create_columns_int32, SBM_ERR_OVERFLOW, "2^31"},
    {"csr_from_triplets: negative column", a_csr_triplets_range, SBM_ERR_INDEX_OUT_OF_RANGE, "-1"},
    {"cbc_add: block shapes differ", a_add_shape, SBM_ERR_BLOCK_SHAPE, "3x2"},
    {"cbc_add: NULL operand", a_add_null, SBM_ERR_NULL_ARGUMENT, "B"},
    {"cbc_reblock: not divisible", a_reblock_divisible, SBM_ERR_BLOCK_SHAPE, "cannot be divided into 5x2"},
    {"csr_to_cbc: not divisible", a_csr_to_cbc_divisible, SBM_ERR_BLOCK_SHAPE, "cannot be divided into 4x5"},
    {"cbc_to_bsr: invalid layout", a_to_bsr_layout, SBM_ERR_INVALID_ARGUMENT, "7"},
    {"gemm: inner dimensions differ", a_gemm_inner, SBM_ERR_DIMENSION_MISMATCH, "op_a(A) is 4 x 3 blocks, op_b(B) is 4 x 2 blocks"},
    {"gemm: inner block sizes differ", a_gemm_block_shape, SBM_ERR_BLOCK_SHAPE, "3x2"},
    {"gemm: invalid op", a_gemm_bad_op, SBM_ERR_INVALID_ARGUMENT, "op_a"},
    {"gemm: UPPER with a rectangular C", a_gemm_upper_rect, SBM_ERR_BLOCK_SHAPE, "SBM_GEMM_UPPER needs square blocks"},
    {"gemm: unknown flag", a_gemm_bad_flags, SBM_ERR_INVALID_ARGUMENT, "flags"},
    {"gemm: U of another shape", a_gemm_u_shape, SBM_ERR_BLOCK_SHAPE, "argument U"},
    {"gemm_plan: NULL plan handle", a_gemm_null_plan_out, SBM_ERR_NULL_ARGUMENT, "plan"},
    {"gemm_execute: A of another pattern", a_gemm_exec_pattern, SBM_ERR_PLAN_MISMATCH, "A"},
    {"gemm_execute: C not the plan's", a_gemm_exec_other_c, SBM_ERR_PLAN_MISMATCH, "C"},
    {"gemm_execute: U aliases C", a_gemm_exec_alias, SBM_ERR_ALIASING, "argument C is the same matrix as (or shares values with) argument A"},
    {"bdiag_inverse: indefinite block", a_bdiag_not_spd, SBM_ERR_NOT_POSITIVE_DEFINITE, "block 1"},
    {"bdiag_inverse: off-diagonal block", a_bdiag_off_diagonal, SBM_ERR_INVALID_ARGUMENT, "diagonal"},
    {"bdiag_inverse: rectangular blocks", a_bdiag_rect_blocks, SBM_ERR_BLOCK_SHAPE, "3x2"},
    {"bdiag_inverse: Dinv of another pattern", a_bdiag_inverse_pattern, SBM_ERR_INVALID_ARGUMENT, "Dinv"},
    {"bdiag_scale: D*A undefined", a_bdiag_scale_dims, SBM_ERR_BLOCK_SHAPE, "argument D"},
    {"bdiag_scale: B aliases D", a_bdiag_scale_alias, SBM_ERR_ALIASING, "argument B is the same matrix as"},
    {"cbc_spmv: y aliases x", a_spmv_alias, SBM_ERR_ALIASING, "x"},
    {"cbc_spmv: NULL x", a_spmv_null_x, SBM_ERR_NULL_ARGUMENT, "x"},
    {"cbc_spmv: invalid op", a_spmv_bad_op, SBM_ERR_INVALID_ARGUMENT, "op"},
    {"csr_spmv: y aliases x", a_csr_spmv_alias, SBM_ERR_ALIASING, "x"},
    {"csr_spmm: ldb too small", a_spmm_ldb, SBM_ERR_INVALID_ARGUMENT, "ldb"},
    {"csr_spmm: negative ncols", a_spmm_ncols, SBM_ERR_INVALID_ARGUMENT, "ncols"},
    {"csr_gemm: inner dimensions differ", a_csr_gemm_dims, SBM_ERR_DIMENSION_MISMATCH, "5"},
    {"csr_read_mtx: NULL path", a_read_mtx_null_path, SBM_ERR_NULL_ARGUMENT, "path"},
    {"csr_write_mtx: directory missing", a_write_mtx_no_dir, SBM_ERR_IO, "nonexistent-sbm-dir"},
    {"ctx_set_allocator: NULL functions", a_set_allocator_half, SBM_ERR_NULL_ARGUMENT, "alloc"},
    {"bal_generate: more observations than cameras", a_bal_generate_obs, SBM_ERR_INVALID_ARGUMENT, "obs_per_point"},
    {"bal_generate: noise making inf observations", a_bal_generate_noise, SBM_ERR_INVALID_ARGUMENT, "pixel_noise = 1e+308 makes coordinate"},
    {"bal_generate: perturbation making inf parameters", a_bal_generate_perturb, SBM_ERR_INVALID_ARGUMENT, "perturbation = 1e+308 makes parameter"},
    {"ba_linearize: another problem", a_ba_linearize_other, SBM_ERR_DIMENSION_MISMATCH, "problem"},
    {"ba_schur: V not SPD", a_schur_not_spd, SBM_ERR_NOT_POSITIVE_DEFINITE, "V"},
    {"ba_set_damping: negative lambda", a_damping_negative, SBM_ERR_INVALID_ARGUMENT, "lambda"},
};

/* ---------------------------------------------------------------------------------------- */

static int check(sbm_ctx *ctx, const char *what, sbm_status got, sbm_status want,
                 const char *substring)
{
    const char *msg = sbm_ctx_last_error(ctx);
    if (got == want && strstr(msg, substring)) return 0;
    print_error("catalogue row \"%s\": want %s containing \"%s\", got %s \"%s\"\n", what,
                sbm_status_name(want), substring, sbm_status_name(got), msg);
    return 1;
}

static void test_files(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    int failures = 0;
    for (size_t t = 0; t < sizeof file_rows / sizeof file_rows[0]; t++) {
        const file_row *row = &file_rows[t];
        static const char *ext[] = {"mtx", "txt", "g2o"};
        char path[700];
        const char *suffix = strstr(row->description, ".bz2") ? ".bz2" : "";
        snprintf(path, sizeof path, "%s/row%zu.%s%s", sbm_test_tmp_dir, t, ext[row->kind], suffix);
        if (row->text) {
            FILE *fp = fopen(path, "wb");
            assert_non_null(fp);
            size_t len = row->len < 0 ? strlen(row->text) : (size_t)row->len;
            assert_int_equal(fwrite(row->text, 1, len, fp), len);
            fclose(fp);
        }
        sbm_ctx_clear_error(e->ctx);
        sbm_status st;
        if (row->kind == MTX) {
            sbm_csr *A = (sbm_csr *)0x1;
            st = sbm_csr_read_mtx(e->ctx, path, &A);
            if (st == SBM_SUCCESS) sbm_csr_destroy(A);
            else assert_null(A);
        } else if (row->kind == BAL) {
            sbm_bal_problem *p = (sbm_bal_problem *)0x1;
            st = sbm_bal_read(e->ctx, path, &p);
            if (st == SBM_SUCCESS) sbm_bal_destroy(p);
            else assert_null(p);
        } else {
            sbm_g2o_graph *g = (sbm_g2o_graph *)0x1;
            st = sbm_g2o_read(e->ctx, path, &g);
            if (st == SBM_SUCCESS) sbm_g2o_destroy(g);
            else assert_null(g);
        }
        failures += check(e->ctx, row->description, st, row->status, row->substring);
        /* every file message names the file, and the line where there is one */
        char where[800];
        snprintf(where, sizeof where, "%s%s%s", path, *row->line ? ":" : "", row->line);
        if (st != SBM_SUCCESS && !strstr(sbm_ctx_last_error(e->ctx), where)) {
            print_error("catalogue row \"%s\": message does not name the file: \"%s\"\n",
                        row->description, sbm_ctx_last_error(e->ctx));
            failures++;
        }
    }
    print_message("  %zu malformed files\n", sizeof file_rows / sizeof file_rows[0]);
    assert_int_equal(failures, 0);
}

static void test_api(void **state)
{
    sbm_test_env *e = sbm_test_begin(state);
    fixture f;
    fixture_make(&f, e->ctx);
    int failures = 0;
    for (size_t t = 0; t < sizeof api_rows / sizeof api_rows[0]; t++) {
        const api_row *row = &api_rows[t];
        const uint64_t before = hash_inputs(&f);
        sbm_ctx_clear_error(e->ctx);
        sbm_status st = row->call(&f);
        if (e->backend != SBM_BACKEND_CPU && st == SBM_ERR_NOT_SUPPORTED &&
            row->status != SBM_ERR_NOT_SUPPORTED) {
            /* not implemented on this backend yet: reported, not failed */
            print_message("  skipped on this backend (not supported): %s\n", row->description);
            continue;
        }
        failures += check(e->ctx, row->description, st, row->status, row->substring);
        if (hash_inputs(&f) != before) {
            print_error("catalogue row \"%s\": an input changed\n", row->description);
            failures++;
        }
        /* the context stays usable */
        SBM_ASSERT_OK(e->ctx, sbm_cbc_check(e->ctx, f.A, 1));
    }
    print_message("  %zu malformed API calls\n", sizeof api_rows / sizeof api_rows[0]);
    fixture_free(&f);
    assert_int_equal(failures, 0);
}

/* The README lists the rows; keep the counts in step (a cheap guard against a stale list). */
static void test_catalogue_size(void **state)
{
    (void)state;
    assert_true(sizeof file_rows / sizeof file_rows[0] + sizeof api_rows / sizeof api_rows[0] >= 60);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalogue_size),
        SBM_TEST_BOTH(test_files),
        SBM_TEST_BOTH(test_api),
    };
    return cmocka_run_group_tests(tests, sbm_test_make_tmp_dir, sbm_test_remove_tmp_dir);
}
