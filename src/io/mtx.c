/* SPDX-License-Identifier: BSD-3-Clause */
/* Matrix Market I/O: coordinate files <-> scalar CSR (and CBC, written through its scalar form).
 *
 * Decisions recorded here:
 *   - Reader: coordinate format; field real (alias "double"), integer or pattern (entries 1.0);
 *     symmetry general, symmetric or skew-symmetric. Symmetric storage is expanded by mirroring
 *     every off-diagonal entry, whichever triangle it is in (the standard stores the lower one;
 *     some writers use the upper one); skew-symmetric mirrors negated, and a diagonal entry there
 *     is an error; an entry whose mirror is stored too is an error naming both lines (summing
 *     them would double the value: mtx_checks.c). Duplicates are summed in file order, so the
 *     result is deterministic, and a sum that overflows is an error naming the line where it
 *     did.
 *   - Banner keywords are case-insensitive and "%MatrixMarket" (one percent sign, as some
 *     collections write it) is accepted. Without a banner, a file whose first non-comment line
 *     is a size line "rows columns entries" is read as coordinate real general.
 *   - '%' comment lines and blank lines may appear anywhere after the banner; CRLF line ends and
 *     a missing final newline are fine. Values must be finite (NaN/Inf are refused by name).
 *   - Lines come from the shared reader (text_io.c), so gzip and bzip2 files (told by their
 *     magic bytes) read like plain ones; its messages are "path:line: reason" like ours.
 *   - Sizes: rows and columns must fit the int32 indices (SBM_ERR_OVERFLOW otherwise); an entry
 *     count that a plain file cannot possibly hold (fewer than 4 bytes per entry) is refused
 *     before anything is allocated, so a corrupt size line cannot ask for terabytes. A compressed
 *     file's decompressed size is unknown (bzip2 can expand a million-fold): there the entries
 *     are reserved as they arrive instead, which bounds memory by what the file really holds.
 *   - Numbers are parsed in the "C" numeric locale whatever the caller's locale is (the line
 *     reader switches to it, per thread), so a German locale cannot turn "0.5" into 0.
 *   - The writer is in mtx_write.c. */
#include "io_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MTX_TOKEN_SHOWN 40 /* longest token quoted in a message */

/* ---------------------------------------------------------------------------------------- */
/* Tokens                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static int mtx_is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

static char *mtx_skip_space(char *p)
{
    while (mtx_is_space(*p)) p++;
    return p;
}

static size_t mtx_token_len(const char *p)
{
    size_t k = 0;
    while (p[k] != '\0' && !mtx_is_space(p[k])) k++;
    return k;
}

/* Length to print of the token at p (messages quote at most MTX_TOKEN_SHOWN bytes). */
static int mtx_shown(const char *p)
{
    const size_t k = mtx_token_len(p);
    return (int)(k < MTX_TOKEN_SHOWN ? k : MTX_TOKEN_SHOWN);
}

/* 1 if the token at p (length k) equals word, ignoring ASCII case. word is lowercase. */
static int mtx_word_is(const char *p, size_t k, const char *word)
{
    if (strlen(word) != k) return 0;
    for (size_t i = 0; i < k; i++) {
        char ch = p[i];
        if (ch >= 'A' && ch <= 'Z') ch = (char)(ch - 'A' + 'a');
        if (ch != word[i]) return 0;
    }
    return 1;
}

/* 1 if the line holds only blanks or is a '%' comment. */
static int mtx_is_skippable(char *line)
{
    const char *p = mtx_skip_space(line);
    return *p == '\0' || *p == '%';
}

enum { MTX_TOK_OK, MTX_TOK_MISSING, MTX_TOK_BAD, MTX_TOK_RANGE };

/* Integer token at *pp (decimal, optional sign). *tok points at the token either way; on
 * success *pp moves past it. */
static int mtx_parse_int(char **pp, char **tok, int64_t *v)
{
    char *p = mtx_skip_space(*pp), *end;
    *tok = p;
    if (*p == '\0') return MTX_TOK_MISSING;
    errno = 0;
    const long long x = strtoll(p, &end, 10);
    if (end == p || !(*end == '\0' || mtx_is_space(*end))) return MTX_TOK_BAD;
    if (errno == ERANGE) return MTX_TOK_RANGE;
    *v = (int64_t)x;
    *pp = end;
    return MTX_TOK_OK;
}

/* Floating-point token at *pp. MTX_TOK_RANGE: parsed but not finite (NaN, Inf, overflow);
 * gradual underflow to a subnormal or zero is accepted, as every reader does. */
static int mtx_parse_double(char **pp, char **tok, double *v)
{
    char *p = mtx_skip_space(*pp), *end;
    *tok = p;
    if (*p == '\0') return MTX_TOK_MISSING;
    const double x = strtod(p, &end);
    if (end == p || !(*end == '\0' || mtx_is_space(*end))) return MTX_TOK_BAD;
    if (!isfinite(x)) return MTX_TOK_RANGE;
    *v = x;
    *pp = end;
    return MTX_TOK_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* Header                                                                                   */
/* ---------------------------------------------------------------------------------------- */

typedef enum { MTX_REAL, MTX_INTEGER, MTX_PATTERN } mtx_field;
typedef enum { MTX_GENERAL, MTX_SYMMETRIC, MTX_SKEW } mtx_symmetry;

typedef struct mtx_header {
    int banner;            /* 1 if the file has a MatrixMarket banner */
    mtx_field field;       /* value type */
    mtx_symmetry symmetry; /* storage scheme */
    int64_t m, n, nnz;     /* size line */
    int64_t size_line;     /* its line number, for messages */
    sbm__mtx_lines lines;  /* the line of each entry (mtx_checks.c) */
} mtx_header;

/* If the line is a banner ("%%MatrixMarket" or "%MatrixMarket", any case) parse its four words
 * into h and return SBM_SUCCESS with h->banner = 1; otherwise leave h->banner = 0. */
static sbm_status mtx_parse_banner(sbm__text_reader *rd, mtx_header *h)
{
    char *p = mtx_skip_space(rd->text);
    if (*p != '%') return SBM_SUCCESS;
    while (*p == '%') p++;
    if (!mtx_word_is(p, mtx_token_len(p), "matrixmarket")) return SBM_SUCCESS; /* a comment */
    h->banner = 1;
    p += mtx_token_len(p);

    static const char *const role[4] = {"object", "format", "field", "symmetry"};
    char *word[4];
    size_t len[4];
    for (int w = 0; w < 4; w++) {
        p = mtx_skip_space(p);
        if (*p == '\0')
            return sbm__text_error(rd, SBM_ERR_PARSE,
                             "the banner has %d word%s after MatrixMarket, expected 4 "
                             "(object format field symmetry, e.g. 'matrix coordinate real "
                             "general'); the %s is missing",
                             w, w == 1 ? "" : "s", role[w]);
        word[w] = p;
        len[w] = mtx_token_len(p);
        p += len[w];
    }
    p = mtx_skip_space(p);
    if (*p != '\0')
        return sbm__text_error(rd, SBM_ERR_PARSE,
                         "unexpected word '%.*s' in the banner after the symmetry '%.*s'",
                         mtx_shown(p), p, (int)len[3], word[3]);

    if (!mtx_word_is(word[0], len[0], "matrix"))
        return sbm__text_error(rd, SBM_ERR_PARSE,
                         "unknown object '%.*s' in the banner (expected 'matrix')",
                         mtx_shown(word[0]), word[0]);

    if (mtx_word_is(word[1], len[1], "array"))
        return sbm__text_error(rd, SBM_ERR_NOT_SUPPORTED,
                         "the 'array' (dense) format is not supported; sbm reads the "
                         "'coordinate' format");
    if (!mtx_word_is(word[1], len[1], "coordinate"))
        return sbm__text_error(rd, SBM_ERR_PARSE,
                         "unknown format '%.*s' in the banner (expected 'coordinate')",
                         mtx_shown(word[1]), word[1]);

    if (mtx_word_is(word[2], len[2], "real") || mtx_word_is(word[2], len[2], "double"))
        h->field = MTX_REAL;
    else if (mtx_word_is(word[2], len[2], "integer"))
        h->field = MTX_INTEGER;
    else if (mtx_word_is(word[2], len[2], "pattern"))
        h->field = MTX_PATTERN;
    else if (mtx_word_is(word[2], len[2], "complex"))
        return sbm__text_error(rd, SBM_ERR_NOT_SUPPORTED,
                         "the 'complex' field is not supported; sbm reads real, integer and "
                         "pattern matrices");
    else
        return sbm__text_error(rd, SBM_ERR_PARSE,
                         "unknown field '%.*s' in the banner (expected real, integer, pattern or "
                         "complex)",
                         mtx_shown(word[2]), word[2]);

    if (mtx_word_is(word[3], len[3], "general"))
        h->symmetry = MTX_GENERAL;
    else if (mtx_word_is(word[3], len[3], "symmetric"))
        h->symmetry = MTX_SYMMETRIC;
    else if (mtx_word_is(word[3], len[3], "skew-symmetric"))
        h->symmetry = MTX_SKEW;
    else if (mtx_word_is(word[3], len[3], "hermitian"))
        return sbm__text_error(rd, SBM_ERR_NOT_SUPPORTED,
                         "the 'hermitian' symmetry is not supported (it needs complex values)");
    else
        return sbm__text_error(rd, SBM_ERR_PARSE,
                         "unknown symmetry '%.*s' in the banner (expected general, symmetric, "
                         "skew-symmetric or hermitian)",
                         mtx_shown(word[3]), word[3]);

    if (h->field == MTX_PATTERN && h->symmetry == MTX_SKEW)
        return sbm__text_error(rd, SBM_ERR_PARSE,
                         "'pattern skew-symmetric' is not a valid combination (a pattern has no "
                         "sign to negate)");
    return SBM_SUCCESS;
}

/* Parse the size line (rd->text) into h. file_bytes < 0 when the size is unknown (a pipe). */
static sbm_status mtx_parse_size_line(sbm__text_reader *rd, mtx_header *h, int64_t file_bytes)
{
    static const char *const what[3] = {"row count", "column count", "entry count"};
    const char *nob = h->banner ? "" : " (the file has no %%MatrixMarket banner)";
    int64_t v[3];
    char *p = rd->text, *tok;
    for (int k = 0; k < 3; k++) {
        const int r = mtx_parse_int(&p, &tok, &v[k]);
        if (r == MTX_TOK_MISSING)
            return sbm__text_error(rd, SBM_ERR_PARSE,
                             "size line has %d number%s, expected 3 'rows columns entries'%s", k,
                             k == 1 ? "" : "s", nob);
        if (r == MTX_TOK_BAD)
            return sbm__text_error(rd, SBM_ERR_PARSE,
                             "size line: %s '%.*s' is not an integer (expected 'rows columns "
                             "entries')%s",
                             what[k], mtx_shown(tok), tok, nob);
        if (r == MTX_TOK_RANGE)
            return sbm__text_error(rd, SBM_ERR_OVERFLOW, "size line: %s '%.*s' does not fit in 64 bits",
                             what[k], mtx_shown(tok), tok);
        if (v[k] < 0)
            return sbm__text_error(rd, SBM_ERR_PARSE, "size line: %s %" PRId64 " is negative", what[k],
                             v[k]);
    }
    p = mtx_skip_space(p);
    if (*p != '\0')
        return sbm__text_error(rd, SBM_ERR_PARSE,
                         "size line: unexpected '%.*s' after 'rows columns entries'%s",
                         mtx_shown(p), p, nob);
    for (int k = 0; k < 2; k++)
        if (v[k] > INT32_MAX)
            return sbm__text_error(rd, SBM_ERR_OVERFLOW,
                             "size line: %s %" PRId64 " exceeds the int32 index limit %" PRId32,
                             what[k], v[k], INT32_MAX);
    if (h->symmetry != MTX_GENERAL && v[0] != v[1])
        return sbm__text_error(rd, SBM_ERR_PARSE,
                         "size line: a %s matrix must be square, not %" PRId64 " x %" PRId64,
                         h->symmetry == MTX_SYMMETRIC ? "symmetric" : "skew-symmetric", v[0], v[1]);
    /* An entry is at least "i j\n" (4 bytes) or "i j v\n" (6); the last may lack its newline. */
    const int64_t per = h->field == MTX_PATTERN ? 4 : 6;
    if (file_bytes >= 0 && v[2] > (file_bytes + 1) / per)
        return sbm__text_error(rd, SBM_ERR_PARSE,
                         "size line announces %" PRId64 " entries, but the whole file has only "
                         "%" PRId64 " bytes",
                         v[2], file_bytes);
    /* the same rule as mtx_build_csr's for bucketing a wide matrix over its distinct columns */
    SBM__TRY(sbm__mtx_check_memory(rd, v[0], v[1], v[2], h->symmetry != MTX_GENERAL,
                                   h->symmetry == MTX_GENERAL &&
                                       /* in double: nnz may be near INT64_MAX here */
                                       (double)v[1] > 2.0 * ((double)v[0] + (double)v[2]) + 4096.0));
    h->m = v[0];
    h->n = v[1];
    h->nnz = v[2];
    h->size_line = rd->line;
    h->lines.size_line = rd->line;
    return SBM_SUCCESS;
}

/* ---------------------------------------------------------------------------------------- */
/* Reader                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Entries as they appear in the file (0-based). */
typedef struct mtx_triplets {
    int64_t count; /* entries read */
    int64_t cap;   /* capacity of the arrays */
    int32_t *row;  /* row indices */
    int32_t *col;  /* column indices */
    double *val;   /* values */
} mtx_triplets;

static sbm_status mtx_triplets_reserve(sbm_ctx *ctx, mtx_triplets *t, int64_t cap)
{
    int ok;
    const size_t ib =
        sbm__mul_size(ctx, (size_t)cap, sizeof(int32_t), "Matrix Market entries", &ok);
    if (!ok) return SBM_ERR_OVERFLOW;
    const size_t vb = sbm__mul_size(ctx, (size_t)cap, sizeof(double), "Matrix Market entries", &ok);
    if (!ok) return SBM_ERR_OVERFLOW;
    int32_t *row = sbm__host_alloc(ctx, ib, "Matrix Market row indices");
    int32_t *col = row ? sbm__host_alloc(ctx, ib, "Matrix Market column indices") : NULL;
    double *val = col ? sbm__host_alloc(ctx, vb, "Matrix Market values") : NULL;
    if (!val) {
        sbm__host_free(ctx, row);
        sbm__host_free(ctx, col);
        return SBM_ERR_OUT_OF_MEMORY;
    }
    if (t->count > 0) {
        memcpy(row, t->row, (size_t)t->count * sizeof(int32_t));
        memcpy(col, t->col, (size_t)t->count * sizeof(int32_t));
        memcpy(val, t->val, (size_t)t->count * sizeof(double));
    }
    sbm__host_free(ctx, t->row);
    sbm__host_free(ctx, t->col);
    sbm__host_free(ctx, t->val);
    t->row = row;
    t->col = col;
    t->val = val;
    t->cap = cap;
    return SBM_SUCCESS;
}

/* Parse one entry line (rd->text) into t. */
static sbm_status mtx_parse_entry(sbm__text_reader *rd, const mtx_header *h, mtx_triplets *t)
{
    static const char *const idx_name[2] = {"row", "column"};
    const int64_t lim[2] = {h->m, h->n};
    const int want = h->field == MTX_PATTERN ? 2 : 3;
    const char *shape = h->field == MTX_PATTERN ? "row column" : "row column value";
    char *p = rd->text, *tok;
    int64_t idx[2];
    for (int k = 0; k < 2; k++) {
        const int r = mtx_parse_int(&p, &tok, &idx[k]);
        if (r == MTX_TOK_MISSING)
            return sbm__text_error(rd, SBM_ERR_PARSE, "entry has %d number%s, expected %d (%s)", k,
                             k == 1 ? "" : "s", want, shape);
        if (r == MTX_TOK_BAD)
            return sbm__text_error(rd, SBM_ERR_PARSE, "%s index '%.*s' is not an integer", idx_name[k],
                             mtx_shown(tok), tok);
        if (r == MTX_TOK_RANGE || idx[k] < 1 || idx[k] > lim[k]) {
            if (lim[k] == 0)
                return sbm__text_error(rd, SBM_ERR_PARSE,
                                 "%s index %.*s is outside the matrix (it has 0 %ss)",
                                 idx_name[k], mtx_shown(tok), tok, idx_name[k]);
            return sbm__text_error(rd, SBM_ERR_PARSE, "%s index %.*s is outside 1..%" PRId64, idx_name[k],
                             mtx_shown(tok), tok, lim[k]);
        }
    }
    double v = 1.0;
    if (h->field == MTX_REAL) {
        const int r = mtx_parse_double(&p, &tok, &v);
        if (r == MTX_TOK_MISSING)
            return sbm__text_error(rd, SBM_ERR_PARSE, "entry has 2 numbers, expected 3 (%s)", shape);
        if (r == MTX_TOK_BAD)
            return sbm__text_error(rd, SBM_ERR_PARSE, "value '%.*s' is not a number", mtx_shown(tok),
                             tok);
        if (r == MTX_TOK_RANGE)
            return sbm__text_error(rd, SBM_ERR_PARSE, "value '%.*s' is not finite", mtx_shown(tok), tok);
    } else if (h->field == MTX_INTEGER) {
        int64_t iv = 0;
        const int r = mtx_parse_int(&p, &tok, &iv);
        if (r == MTX_TOK_MISSING)
            return sbm__text_error(rd, SBM_ERR_PARSE, "entry has 2 numbers, expected 3 (%s)", shape);
        if (r == MTX_TOK_BAD)
            return sbm__text_error(rd, SBM_ERR_PARSE, "value '%.*s' is not an integer (the field is "
                             "'integer')", mtx_shown(tok), tok);
        if (r == MTX_TOK_RANGE)
            return sbm__text_error(rd, SBM_ERR_PARSE, "integer value '%.*s' does not fit in 64 bits",
                             mtx_shown(tok), tok);
        v = (double)iv;
    }
    p = mtx_skip_space(p);
    if (p < rd->text + rd->len) {
        if (*p == '\0') return sbm__text_error(rd, SBM_ERR_PARSE, "the line contains a NUL byte");
        return sbm__text_error(rd, SBM_ERR_PARSE,
                         "unexpected '%.*s' after the entry (expected %d numbers: %s)",
                         mtx_shown(p), p, want, shape);
    }
    if (h->symmetry == MTX_SKEW && idx[0] == idx[1])
        return sbm__text_error(rd, SBM_ERR_PARSE,
                         "diagonal entry (%" PRId64 ",%" PRId64 ") in a skew-symmetric matrix "
                         "(its diagonal is zero and must not be stored)",
                         idx[0], idx[1]);

    if (t->count == t->cap) { /* unknown file size: grow geometrically up to the announced count */
        const int64_t ncap = t->cap > h->nnz / 2 ? h->nnz : (t->cap > 0 ? 2 * t->cap : 1);
        SBM__TRY(mtx_triplets_reserve(rd->ctx, t, ncap));
    }
    t->row[t->count] = (int32_t)(idx[0] - 1);
    t->col[t->count] = (int32_t)(idx[1] - 1);
    t->val[t->count] = v;
    t->count++;
    return SBM_SUCCESS;
}

/* Header and entries of the file. */
static sbm_status mtx_read_file(sbm__text_reader *rd, mtx_header *h, mtx_triplets *t)
{
    /* The size of a plain regular file bounds the entry count; for compressed input and pipes
     * it is unknown (-1): the size line is then not checked against it, and the entries are
     * reserved as they arrive (geometrically), so memory still follows what the file holds. */
    const int64_t file_bytes = rd->src.bytes;

    /* Banner: the first non-blank line. */
    do {
        SBM__TRY(sbm__text_next_line(rd));
    } while (rd->text && *mtx_skip_space(rd->text) == '\0');
    if (!rd->text)
        return sbm__text_error(rd, SBM_ERR_PARSE, "the file is empty (no banner, no size line)");
    SBM__TRY(mtx_parse_banner(rd, h));
    if (h->banner) SBM__TRY(sbm__text_next_line(rd));

    /* Size line: the first line that is neither blank nor a comment. */
    while (rd->text && mtx_is_skippable(rd->text)) SBM__TRY(sbm__text_next_line(rd));
    if (!rd->text)
        return sbm__text_error(rd, SBM_ERR_PARSE,
                         "the file ends before the size line 'rows columns entries'");
    SBM__TRY(mtx_parse_size_line(rd, h, file_bytes));

    /* With a known file size the count is bounded by it, so reserve it exactly. */
    const int64_t first = file_bytes >= 0 ? h->nnz : (h->nnz < 65536 ? h->nnz : 65536);
    SBM__TRY(mtx_triplets_reserve(rd->ctx, t, first));

    for (;;) {
        SBM__TRY(sbm__text_next_line(rd));
        if (!rd->text) break;
        if (mtx_is_skippable(rd->text)) {
            SBM__TRY(sbm__mtx_lines_skip(rd->ctx, &h->lines, t->count));
            continue;
        }
        if (t->count == h->nnz)
            return sbm__text_error(rd, SBM_ERR_PARSE,
                             "more entries than the %" PRId64 " announced on line %" PRId64, h->nnz,
                             h->size_line);
        SBM__TRY(mtx_parse_entry(rd, h, t));
    }
    if (t->count < h->nnz)
        return sbm__text_error(rd, SBM_ERR_PARSE,
                         "the file ends after %" PRId64 " of the %" PRId64
                         " entries announced on line %" PRId64,
                         t->count, h->nnz, h->size_line);
    return SBM_SUCCESS;
}

/* Symmetric and skew-symmetric files: each off-diagonal entry followed by its mirror, in place
 * of t's arrays, so that duplicates are summed in file order as for a general file. */
static sbm_status mtx_expand_symmetry(sbm_ctx *ctx, const mtx_header *h, mtx_triplets *t)
{
    if (h->symmetry == MTX_GENERAL) return SBM_SUCCESS;
    const double sign = h->symmetry == MTX_SKEW ? -1.0 : 1.0;
    int64_t total = t->count;
    for (int64_t k = 0; k < t->count; k++) total += t->row[k] != t->col[k];
    mtx_triplets e = {0};
    SBM__TRY(mtx_triplets_reserve(ctx, &e, total));
    for (int64_t k = 0; k < t->count; k++) {
        const int32_t i = t->row[k], j = t->col[k];
        e.row[e.count] = i;
        e.col[e.count] = j;
        e.val[e.count++] = t->val[k];
        if (i != j) {
            e.row[e.count] = j;
            e.col[e.count] = i;
            e.val[e.count++] = sign * t->val[k];
        }
    }
    sbm__host_free(ctx, t->row);
    sbm__host_free(ctx, t->col);
    sbm__host_free(ctx, t->val);
    *t = e;
    return SBM_SUCCESS;
}

/* A general matrix far wider than its rows and entries is bucketed over its distinct columns
 * only: each column index of t becomes its rank among them, *ucol (host, to free) maps a rank
 * back and *n is their count. */
static sbm_status mtx_rank_columns(sbm_ctx *ctx, mtx_triplets *t, int32_t **ucol_out, int64_t *n)
{
    const int64_t cnt = t->count;
    int32_t *ucol = sbm__host_alloc(ctx, (size_t)(cnt > 0 ? cnt : 1) * sizeof(int32_t),
                                    "distinct column indices");
    if (!ucol) return SBM_ERR_OUT_OF_MEMORY;
    memcpy(ucol, t->col, (size_t)cnt * sizeof(int32_t));
    qsort(ucol, (size_t)cnt, sizeof(int32_t), sbm__cmp_i32);
    int64_t d = 0;
    for (int64_t k = 0; k < cnt; k++)
        if (d == 0 || ucol[k] != ucol[d - 1]) ucol[d++] = ucol[k];
    for (int64_t k = 0; k < cnt; k++) {
        int64_t lo = 0, hi = d;
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (ucol[mid] < t->col[k]) lo = mid + 1;
            else hi = mid;
        }
        t->col[k] = (int32_t)lo;
    }
    *ucol_out = ucol;
    *n = d;
    return SBM_SUCCESS;
}

/* Host CSR arrays from the file entries: the symmetry expanded, then the library's triplet
 * compression (sbm__compress_triplets: rows sorted by column, duplicates summed in file order,
 * in O(nnz + m + n) without a comparison sort). A general matrix far wider than its rows and
 * entries (n > 2(m + nnz) + 4096) is bucketed over its distinct columns only, so that a small
 * file announcing 2 x 2e9 costs O(m + nnz log nnz), not 16 GB of column counts (found by
 * fuzz_mtx). Frees t's arrays once they are consumed. */
static sbm_status mtx_build_csr(sbm_ctx *ctx, const char *path, const mtx_header *h,
                                mtx_triplets *t, int64_t **rowptr_out, int32_t **colind_out,
                                double **values_out)
{
    int64_t n = h->n; /* columns bucketed: h->n, or the distinct ones (ucol) */
    int32_t *ucol = NULL;
    sbm_status st = SBM_SUCCESS;
    if (h->symmetry != MTX_GENERAL)
        st = sbm__mtx_check_mirrors(ctx, path, &h->lines, t->count, t->row, t->col);
    if (st == SBM_SUCCESS) st = mtx_expand_symmetry(ctx, h, t);
    if (st == SBM_SUCCESS && h->symmetry == MTX_GENERAL && h->n > 2 * (h->m + t->count) + 4096)
        st = mtx_rank_columns(ctx, t, &ucol, &n);
    if (st == SBM_SUCCESS)
        st = sbm__compress_triplets(ctx, h->m, n, t->count, t->row, t->col, t->val, 1,
                                    rowptr_out, colind_out, values_out);
    if (st == SBM_SUCCESS) { /* a sum of finite duplicates may overflow */
        const sbm__mtx_summed sm = {h->m,     *rowptr_out, *colind_out, *values_out,
                                    t->count, t->row,      t->col,      t->val,
                                    h->symmetry != MTX_GENERAL, ucol};
        st = sbm__mtx_check_sums(ctx, path, &h->lines, &sm);
    }
    if (st == SBM_SUCCESS && ucol)
        for (int64_t q = 0; q < (*rowptr_out)[h->m]; q++) (*colind_out)[q] = ucol[(*colind_out)[q]];
    sbm__host_free(ctx, ucol);
    sbm__host_free(ctx, t->row);
    sbm__host_free(ctx, t->col);
    sbm__host_free(ctx, t->val);
    t->row = t->col = NULL;
    t->val = NULL;
    return st;
}

sbm_status sbm_csr_read_mtx(sbm_ctx *ctx, const char *path, sbm_csr **A)
{
    SBM__ENTER(ctx, "sbm_csr_read_mtx");
    if (A) *A = NULL;
    if (!path) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument path is NULL");
    if (!A) return sbm__error(ctx, SBM_ERR_NULL_ARGUMENT, "argument A (output handle) is NULL");

    sbm__text_reader rd;
    mtx_header h = {0};
    mtx_triplets t = {0};
    int64_t *rowptr = NULL;
    int32_t *colind = NULL;
    double *values = NULL;
    sbm_status st = SBM_SUCCESS;

    FILE *f = fopen(path, "rb");
    if (!f) {
        const int err = errno;
        return sbm__error(ctx, SBM_ERR_IO, "cannot open '%s' for reading: %s", path, strerror(err));
    }
    SBM__TRY(sbm__text_open_file(ctx, path, f, &rd));
    st = mtx_read_file(&rd, &h, &t);
    sbm__text_close(&rd);
    if (st != SBM_SUCCESS) goto done;

    st = mtx_build_csr(ctx, path, &h, &t, &rowptr, &colind, &values);
    if (st != SBM_SUCCESS) goto done;
    st = sbm__csr_upload(ctx, h.m, h.n, rowptr, colind, values, A);

done:
    sbm__mtx_lines_free(ctx, &h.lines);
    sbm__host_free(ctx, t.row);
    sbm__host_free(ctx, t.col);
    sbm__host_free(ctx, t.val);
    sbm__host_free(ctx, rowptr);
    sbm__host_free(ctx, colind);
    sbm__host_free(ctx, values);
    return st;
}
