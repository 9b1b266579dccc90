/* SPDX-License-Identifier: BSD-3-Clause */
/* Matrix Market array files (dense, column-major) <-> host arrays of doubles, through the line
 * reader and the atomic writer of text_io.c.
 *
 * Decisions recorded here (the reader is the one the sbm tool has always used, so files it
 * accepted or refused keep being accepted or refused):
 *   - Banner: the first line, "%%MatrixMarket matrix array real general"; one '%' or more, any
 *     case; field "double" and "integer" are read as real (an integer file's values go through
 *     strtod like any other). Nothing may follow the symmetry.
 *   - Comment ('%') and blank lines may come between the banner and the size line "rows cols";
 *     after it, blank lines are skipped but a '%' line is a malformed value: the standard allows
 *     comments only in the header, and one value per line is the spec's layout.
 *   - Values must be finite (NaN and infinities are refused by name, 1e400 too), on input and
 *     on output: a file sbm cannot read back is worse than an error.
 *   - The values array grows as values arrive (doubling), so a corrupt size line cannot make
 *     the reader allocate more than the file holds.
 *   - Sizes and counts are int64; rows*cols*8 must fit in int64. */
#include "io_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ARRAY_BANNER "'%%%%MatrixMarket matrix array real general'" /* inside formats */
#define ARRAY_FIRST_CHUNK ((int64_t)1 << 16) /* values reserved before the file proves more */
#define ARRAY_TOKEN_SHOWN 64                 /* longest token quoted in a message */

/* ---------------------------------------------------------------------------------------- */
/* Tokens                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static int array_is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == '\v' || ch == '\f';
}

/* Next whitespace-separated token of *s (NUL-terminated in place), or NULL. */
static char *array_token(char **s)
{
    char *p = *s;
    while (array_is_space(*p)) p++;
    if (*p == '\0') {
        *s = p;
        return NULL;
    }
    char *t = p;
    while (*p != '\0' && !array_is_space(*p)) p++;
    if (*p != '\0') *p++ = '\0';
    *s = p;
    return t;
}

static int array_blank(const char *s)
{
    while (array_is_space(*s)) s++;
    return *s == '\0';
}

/* A decimal integer in [0, INT64_MAX]: digits only, the whole token. */
static int array_parse_size(const char *s, int64_t *out)
{
    if (*s < '0' || *s > '9') return 0; /* strtoll would accept a sign or spaces */
    char *e = NULL;
    errno = 0;
    const long long v = strtoll(s, &e, 10);
    if (*e != '\0' || errno != 0) return 0;
    *out = (int64_t)v;
    return 1;
}

/* ---------------------------------------------------------------------------------------- */
/* Reader                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* The banner on rd->text (line 1). */
static sbm_status array_banner(sbm__text_reader *rd)
{
    char *s = rd->text, *word[6];
    for (int w = 0; w < 6; w++) word[w] = array_token(&s);
    const char *t = word[0];
    while (t && *t == '%') t++;
    if (!t || t == word[0] || strcasecmp(t, "MatrixMarket") != 0)
        return sbm__text_error(rd, SBM_ERR_PARSE,
                               "not a Matrix Market file (expected " ARRAY_BANNER ")");
    if (!word[4])
        return sbm__text_error(rd, SBM_ERR_PARSE, "the banner needs object, format, field and "
                                                  "symmetry (expected " ARRAY_BANNER ")");
    if (word[5])
        return sbm__text_error(rd, SBM_ERR_PARSE,
                               "unexpected word '%.*s' after the symmetry (expected " ARRAY_BANNER
                               ")", ARRAY_TOKEN_SHOWN, word[5]);
    if (strcasecmp(word[1], "matrix") != 0)
        return sbm__text_error(rd, SBM_ERR_NOT_SUPPORTED,
                               "object '%.*s' is not supported (expected 'matrix')",
                               ARRAY_TOKEN_SHOWN, word[1]);
    if (strcasecmp(word[2], "coordinate") == 0)
        return sbm__text_error(rd, SBM_ERR_NOT_SUPPORTED,
                               "a sparse 'coordinate' file; dense vectors and matrices are read "
                               "from 'array' files (" ARRAY_BANNER ")");
    if (strcasecmp(word[2], "array") != 0)
        return sbm__text_error(rd, SBM_ERR_PARSE, "unknown format '%.*s' (expected 'array')",
                               ARRAY_TOKEN_SHOWN, word[2]);
    if (strcasecmp(word[3], "real") != 0 && strcasecmp(word[3], "double") != 0 &&
        strcasecmp(word[3], "integer") != 0)
        return sbm__text_error(rd, SBM_ERR_NOT_SUPPORTED,
                               "field '%.*s' is not supported (real or integer)",
                               ARRAY_TOKEN_SHOWN, word[3]);
    if (strcasecmp(word[4], "general") != 0)
        return sbm__text_error(rd, SBM_ERR_NOT_SUPPORTED,
                               "symmetry '%.*s' is not supported (dense arrays must be 'general')",
                               ARRAY_TOKEN_SHOWN, word[4]);
    return SBM_SUCCESS;
}

/* Comment lines, then the size line "rows cols". */
static sbm_status array_size(sbm__text_reader *rd, int64_t *m, int64_t *n)
{
    do SBM__TRY(sbm__text_next_line(rd));
    while (rd->text && (rd->text[0] == '%' || array_blank(rd->text)));
    if (!rd->text)
        return sbm__text_error(rd, SBM_ERR_PARSE, "ends before the size line 'rows columns'");
    char *s = rd->text, *size[3];
    for (int w = 0; w < 3; w++) size[w] = array_token(&s);
    if (!size[0] || !size[1] || size[2] || !array_parse_size(size[0], m) ||
        !array_parse_size(size[1], n))
        return sbm__text_error(rd, SBM_ERR_PARSE,
                               "expected the size line 'rows columns' of an array file");
    if (*n > 0 && *m > INT64_MAX / (int64_t)sizeof(double) / *n)
        return sbm__text_error(rd, SBM_ERR_OVERFLOW,
                               "%" PRId64 " x %" PRId64 " values do not fit in memory", *m, *n);
    return SBM_SUCCESS;
}

/* Make room for value k of count in *v (capacity *cap): grows by doubling up to count. */
static sbm_status array_reserve(sbm_ctx *ctx, double **v, int64_t *cap, int64_t k, int64_t count)
{
    if (k < *cap) return SBM_SUCCESS;
    int64_t ncap = *cap > 0 ? 2 * *cap : ARRAY_FIRST_CHUNK;
    if (ncap > count) ncap = count;
    double *nv = sbm__host_alloc(ctx, (size_t)ncap * sizeof(double), "the array's values");
    if (!nv) return SBM_ERR_OUT_OF_MEMORY;
    if (k > 0) memcpy(nv, *v, (size_t)k * sizeof(double));
    sbm__host_free(ctx, *v);
    *v = nv;
    *cap = ncap;
    return SBM_SUCCESS;
}

/* The values after the size line, one per line, into *v (count of them). */
static sbm_status array_values(sbm__text_reader *rd, int64_t m, int64_t n, double **v)
{
    const int64_t count = m * n;
    int64_t k = 0, cap = 0;
    for (;;) {
        SBM__TRY(sbm__text_next_line(rd));
        if (!rd->text) break;
        if (array_blank(rd->text)) continue;
        if (k == count)
            return sbm__text_error(rd, SBM_ERR_PARSE,
                                   "more than the %" PRId64 " values of a %" PRId64 " x %" PRId64
                                   " array", count, m, n);
        char *s = rd->text, *t = array_token(&s), *e = NULL;
        const double x = strtod(t, &e);
        if (e == t || *e != '\0')
            return sbm__text_error(rd, SBM_ERR_PARSE, "'%.*s' is not a number", ARRAY_TOKEN_SHOWN,
                                   t);
        if (!isfinite(x))
            return sbm__text_error(rd, SBM_ERR_NOT_FINITE,
                                   "value '%.*s' is not finite (NaN and infinities are not "
                                   "accepted)", ARRAY_TOKEN_SHOWN, t);
        if ((t = array_token(&s)) != NULL)
            return sbm__text_error(rd, SBM_ERR_PARSE,
                                   "one value per line expected, found also '%.*s'",
                                   ARRAY_TOKEN_SHOWN, t);
        SBM__TRY(array_reserve(rd->ctx, v, &cap, k, count));
        (*v)[k++] = x;
    }
    if (k < count)
        return sbm__text_error(rd, SBM_ERR_PARSE,
                               "truncated: %" PRId64 " of the %" PRId64 " values of a %" PRId64
                               " x %" PRId64 " array", k, count, m, n);
    if (!*v) *v = sbm__host_alloc(rd->ctx, 0, "the array's values"); /* 0 values: still a pointer */
    return *v ? SBM_SUCCESS : SBM_ERR_OUT_OF_MEMORY;
}

sbm_status sbm_dense_read_mtx(sbm_ctx *ctx, const char *path, int64_t *rows, int64_t *cols,
                              double **h_values)
{
    SBM__ENTER(ctx, "sbm_dense_read_mtx");
    if (h_values) *h_values = NULL;
    if (rows) *rows = 0;
    if (cols) *cols = 0;
    if (!path) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument path is NULL");
    if (!rows || !cols || !h_values)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument %s (output) is NULL",
                          !rows ? "rows" : !cols ? "cols" : "h_values");

    sbm__text_reader rd;
    SBM__TRY(sbm__text_open(ctx, path, &rd));
    int64_t m = 0, n = 0;
    double *v = NULL;
    sbm_status st = sbm__text_next_line(&rd);
    if (st == SBM_SUCCESS && !rd.text)
        st = sbm__text_error(&rd, SBM_ERR_PARSE, "the file is empty (expected " ARRAY_BANNER ")");
    if (st == SBM_SUCCESS) st = array_banner(&rd);
    if (st == SBM_SUCCESS) st = array_size(&rd, &m, &n);
    if (st == SBM_SUCCESS) st = array_values(&rd, m, n, &v);
    sbm__text_close(&rd);
    if (st != SBM_SUCCESS) {
        sbm__host_free(ctx, v);
        return st;
    }
    *rows = m;
    *cols = n;
    *h_values = v;
    return SBM_SUCCESS;
}

void sbm_dense_free(sbm_ctx *ctx, double *h_values)
{
    if (ctx && h_values) sbm__host_free(ctx, h_values);
}

/* ---------------------------------------------------------------------------------------- */
/* Writers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Argument checks shared by the writers: a finite rows x cols column-major array with leading
 * dimension ld (the values are checked before any file is created). */
static sbm_status array_check(sbm_ctx *ctx, const char *path, int64_t rows, int64_t cols,
                              const double *h_values, int64_t ld)
{
    if (!path) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument path is NULL");
    if (rows < 0 || cols < 0)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "the array is %" PRId64 " x %" PRId64 "; sizes must be >= 0", rows, cols);
    if (ld < rows || ld < 1)
        return sbm__error(ctx, SBM_ERR_INVALID_ARGUMENT,
                          "argument ld = %" PRId64 " is less than max(1, rows = %" PRId64 ")", ld,
                          rows);
    if (cols > 0 && ld > INT64_MAX / (int64_t)sizeof(double) / cols)
        return sbm__error(ctx, SBM_ERR_OVERFLOW,
                          "ld = %" PRId64 " times cols = %" PRId64 " does not fit in memory", ld,
                          cols);
    if (!h_values && rows > 0 && cols > 0)
        return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument h_values is NULL");
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++)
            if (!isfinite(h_values[i + j * ld]))
                return sbm__error(ctx, SBM_ERR_NOT_FINITE,
                                  "entry (%" PRId64 ",%" PRId64 ") (1-based) is %g; '%s' is not "
                                  "written because sbm reads finite values only",
                                  i + 1, j + 1, h_values[i + j * ld], path);
    return SBM_SUCCESS;
}

/* The values, "%.17g" (exact round trip), one per line, column by column. */
static sbm_status array_write(sbm__text_writer *w, int64_t rows, int64_t cols,
                              const double *h_values, int64_t ld)
{
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++)
            SBM__TRY(sbm__text_printf(w, "%.17g\n", h_values[i + j * ld]));
    return SBM_SUCCESS;
}

sbm_status sbm_dense_write_mtx(sbm_ctx *ctx, const char *path, int64_t rows, int64_t cols,
                               const double *h_values, int64_t ld)
{
    SBM__ENTER(ctx, "sbm_dense_write_mtx");
    SBM__TRY(array_check(ctx, path, rows, cols, h_values, ld));
    sbm__text_writer w;
    SBM__TRY(sbm__text_create(ctx, path, &w));
    sbm_status st = sbm__text_printf(&w, "%%%%MatrixMarket matrix array real general\n%" PRId64
                                         " %" PRId64 "\n", rows, cols);
    if (st == SBM_SUCCESS) st = array_write(&w, rows, cols, h_values, ld);
    if (st != SBM_SUCCESS) {
        sbm__text_abort(&w);
        return st;
    }
    return sbm__text_commit(&w);
}

sbm_status sbm_dense_write_txt(sbm_ctx *ctx, const char *path, int64_t count,
                               const double *h_values)
{
    SBM__ENTER(ctx, "sbm_dense_write_txt");
    SBM__TRY(array_check(ctx, path, count, 1, h_values, count > 1 ? count : 1));
    sbm__text_writer w;
    SBM__TRY(sbm__text_create(ctx, path, &w));
    const sbm_status st = array_write(&w, count, 1, h_values, count > 1 ? count : 1);
    if (st != SBM_SUCCESS) {
        sbm__text_abort(&w);
        return st;
    }
    return sbm__text_commit(&w);
}
