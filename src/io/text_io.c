/* SPDX-License-Identifier: BSD-3-Clause */
/* Text files for the Matrix Market, BAL and g2o readers: read line by line with line numbers
 * for messages from a stream (stream.c: plain, gzip or bzip2, told by the magic bytes). The
 * writers' side is text_write.c.
 *
 * Decisions recorded here:
 *   - Numbers are parsed and printed in the "C" numeric locale (POSIX newlocale/uselocale, per
 *     thread) whatever the caller's locale, as the Matrix Market code does.
 *   - One growable buffer holds the unread part of the file; a line longer than it doubles it,
 *     up to SBM__TEXT_MAX_LINE: a longer line is an error naming the file and line, so that a
 *     file without newlines (/dev/zero, a binary) fails at once instead of growing the buffer
 *     until memory runs out.
 *   - A UTF-8 byte-order mark at the start of the first line is skipped. */
#define _POSIX_C_SOURCE 200809L

#include "io_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_CHUNK ((size_t)1 << 16)

void sbm__text_locale_begin(void **c, void **old)
{
    locale_t l = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    *c = (void *)l;
    *old = l ? (void *)uselocale(l) : NULL;
}

void sbm__text_locale_end(void **c, void **old)
{
    if (*c) {
        uselocale((locale_t)*old);
        freelocale((locale_t)*c);
    }
    *c = NULL;
    *old = NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading                                                                                  */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm__text_error(sbm__text_reader *rd, sbm_status status, const char *fmt, ...)
{
    char reason[SBM__MSG_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return sbm__error(rd->ctx, status, "%s:%" PRId64 ": %s", rd->path, rd->line > 0 ? rd->line : 1,
                      reason);
}

/* The buffer and the locale, once rd->src is open. */
static sbm_status text_begin(sbm__text_reader *rd)
{
    rd->cap = TEXT_CHUNK;
    rd->buf = sbm__host_alloc(rd->ctx, rd->cap + 1, "the file buffer");
    if (!rd->buf) {
        sbm__text_close(rd);
        return SBM_ERR_OUT_OF_MEMORY;
    }
    sbm__text_locale_begin(&rd->locale_c, &rd->locale_old);
    return SBM_SUCCESS;
}

sbm_status sbm__text_open(sbm_ctx *ctx, const char *path, sbm__text_reader *rd)
{
    memset(rd, 0, sizeof *rd);
    rd->ctx = ctx;
    rd->path = path;
    SBM__TRY(sbm__stream_open(ctx, path, &rd->src));
    return text_begin(rd);
}

sbm_status sbm__text_open_file(sbm_ctx *ctx, const char *path, void *file, sbm__text_reader *rd)
{
    memset(rd, 0, sizeof *rd);
    rd->ctx = ctx;
    rd->path = path;
    SBM__TRY(sbm__stream_open_file(ctx, path, file, &rd->src));
    return text_begin(rd);
}

/* Append up to n bytes at buf+end. */
static sbm_status text_fill(sbm__text_reader *rd, size_t n)
{
    size_t got = 0;
    rd->src.line = rd->line + 1; /* the line being read, for the stream's messages */
    const sbm_status st = sbm__stream_read(&rd->src, rd->buf + rd->end, n, &got);
    rd->end += got;
    return st;
}

sbm_status sbm__text_next_line(sbm__text_reader *rd)
{
    for (;;) {
        char *start = rd->buf + rd->begin;
        const size_t avail = rd->end - rd->begin;
        char *nl = avail ? memchr(start, '\n', avail) : NULL;
        if (nl || (rd->src.eof && avail > 0)) {
            size_t len = nl ? (size_t)(nl - start) : avail;
            start[len] = '\0'; /* buf has one spare byte for a last line without '\n' */
            rd->begin += nl ? len + 1 : len;
            if (len > 0 && start[len - 1] == '\r') start[--len] = '\0';
            rd->text = start;
            rd->len = len;
            rd->line++;
            /* a UTF-8 byte-order mark (some editors on Windows write one) is not text */
            if (rd->line == 1 && len >= 3 && memcmp(start, "\xEF\xBB\xBF", 3) == 0) {
                rd->text += 3;
                rd->len -= 3;
            }
            return SBM_SUCCESS;
        }
        if (rd->src.eof) {
            rd->text = NULL;
            rd->len = 0;
            return SBM_SUCCESS;
        }
        /* Move the partial line to the front; grow when it fills the buffer. */
        if (rd->begin > 0) {
            memmove(rd->buf, start, avail);
            rd->begin = 0;
            rd->end = avail;
        }
        if (rd->end == rd->cap) {
            if (rd->cap >= SBM__TEXT_MAX_LINE) {
                rd->line++; /* the line being read */
                return sbm__text_error(rd, SBM_ERR_PARSE,
                                       "the line is longer than %zu bytes, the most a line of "
                                       "a text file may have (is this a text file?)",
                                       (size_t)SBM__TEXT_MAX_LINE);
            }
            char *nb = sbm__host_alloc(rd->ctx, 2 * rd->cap + 1, "the file buffer");
            if (!nb) return SBM_ERR_OUT_OF_MEMORY;
            memcpy(nb, rd->buf, rd->end);
            sbm__host_free(rd->ctx, rd->buf);
            rd->buf = nb;
            rd->cap *= 2;
        }
        SBM__TRY(text_fill(rd, rd->cap - rd->end));
    }
}

void sbm__text_close(sbm__text_reader *rd)
{
    sbm__stream_close(&rd->src);
    if (rd->buf) sbm__host_free(rd->ctx, rd->buf);
    sbm__text_locale_end(&rd->locale_c, &rd->locale_old);
    rd->buf = NULL;
}
