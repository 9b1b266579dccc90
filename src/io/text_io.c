/* Text files for the Matrix Market, BAL and g2o readers and writers: read line by line with line
 * numbers for messages from a stream (stream.c: plain, gzip or bzip2, told by the magic bytes),
 * written through a temporary file and a rename.
 *
 * Decisions recorded here:
 *   - Writing compresses when the name ends in ".bz2" (bzip2 -9) or ".gz" (gzip -9); any other
 *     name is written plain. (Reading goes by the magic bytes, never by the name.)
 *   - Numbers are parsed and printed in the "C" numeric locale (POSIX newlocale/uselocale, per
 *     thread) whatever the caller's locale, as the Matrix Market code does.
 *   - One growable buffer holds the unread part of the file; a line longer than it doubles it. */
#define _POSIX_C_SOURCE 200809L

#include "io_internal.h"

#include <bzlib.h>
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define TEXT_CHUNK ((size_t)1 << 16)

static void locale_begin(void **c, void **old)
{
    locale_t l = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    *c = (void *)l;
    *old = l ? (void *)uselocale(l) : NULL;
}

static void locale_end(void **c, void **old)
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
    locale_begin(&rd->locale_c, &rd->locale_old);
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
            if (rd->cap > SIZE_MAX / 4)
                return sbm__text_error(rd, SBM_ERR_OVERFLOW, "line too long");
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
    locale_end(&rd->locale_c, &rd->locale_old);
    rd->buf = NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Writing                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static int ends_with(const char *path, const char *suffix)
{
    const size_t n = strlen(path), k = strlen(suffix);
    return n >= k && strcmp(path + n - k, suffix) == 0;
}

/* Deflate n bytes of data (flush Z_FINISH: and end the gzip member) into the file. */
static sbm_status gz_write(sbm__text_writer *w, const char *data, size_t n, int flush)
{
    z_stream *z = w->gz;
    z->next_in = (Bytef *)data;
    z->avail_in = (uInt)n; /* n <= TEXT_CHUNK */
    for (;;) {
        z->next_out = w->zbuf;
        z->avail_out = (uInt)TEXT_CHUNK;
        const int rc = deflate(z, flush);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
            w->failed = 1;
            return sbm__error(w->ctx, SBM_ERR_IO, "%s: cannot compress: %s", w->path, zError(rc));
        }
        const size_t out = TEXT_CHUNK - z->avail_out;
        if (out > 0 && fwrite(w->zbuf, 1, out, (FILE *)w->file) != out) {
            w->failed = 1;
            return sbm__error(w->ctx, SBM_ERR_IO, "%s: cannot write: %s", w->path, strerror(errno));
        }
        if (flush == Z_FINISH ? rc == Z_STREAM_END : (z->avail_in == 0 && z->avail_out > 0))
            return SBM_SUCCESS;
    }
}

/* The gzip encoder for a ".gz" name. */
static sbm_status gz_begin(sbm__text_writer *w)
{
    z_stream *z = sbm__host_alloc(w->ctx, sizeof *z, "the gzip encoder");
    w->zbuf = z ? sbm__host_alloc(w->ctx, TEXT_CHUNK, "the compressed output buffer") : NULL;
    if (!w->zbuf) {
        sbm__host_free(w->ctx, z);
        return SBM_ERR_OUT_OF_MEMORY;
    }
    memset(z, 0, sizeof *z);
    const int rc = deflateInit2(z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    if (rc != Z_OK) {
        sbm__host_free(w->ctx, z);
        return sbm__error(w->ctx, rc == Z_MEM_ERROR ? SBM_ERR_OUT_OF_MEMORY : SBM_ERR_IO,
                          "%s: cannot start compressing: %s", w->path, zError(rc));
    }
    w->gz = z;
    return SBM_SUCCESS;
}

sbm_status sbm__text_create(sbm_ctx *ctx, const char *path, sbm__text_writer *w)
{
    memset(w, 0, sizeof *w);
    w->ctx = ctx;
    w->path = path;
    const size_t n = strlen(path);
    w->tmp = sbm__host_alloc(ctx, n + 16, "the temporary file name");
    if (!w->tmp) return SBM_ERR_OUT_OF_MEMORY;
    memcpy(w->tmp, path, n);
    memcpy(w->tmp + n, ".tmp.XXXXXX", 12);
    const int fd = mkstemp(w->tmp);
    if (fd < 0) {
        sbm_status st = sbm__error(ctx, SBM_ERR_IO, "%s: cannot create the temporary file '%s': %s",
                                   path, w->tmp, strerror(errno));
        sbm__host_free(ctx, w->tmp);
        w->tmp = NULL;
        return st;
    }
    /* mkstemp makes 0600; keep an existing file's mode, else the usual 0644 */
    struct stat sb;
    fchmod(fd, stat(path, &sb) == 0 ? (sb.st_mode & 07777) : 0644);
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        sbm_status st = sbm__error(ctx, SBM_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
        unlink(w->tmp);
        sbm__host_free(ctx, w->tmp);
        w->tmp = NULL;
        return st;
    }
    w->file = f;
    if (ends_with(path, ".gz")) {
        const sbm_status st = gz_begin(w);
        if (st != SBM_SUCCESS) {
            sbm__text_abort(w);
            return st;
        }
    } else if (ends_with(path, ".bz2")) {
        int bzerr = BZ_OK;
        w->bz = BZ2_bzWriteOpen(&bzerr, f, 9, 0, 0);
        if (bzerr != BZ_OK) {
            w->bz = NULL;
            sbm_status st = sbm__error(ctx, SBM_ERR_IO, "%s: cannot start compressing: %s", path,
                                       sbm__bz_reason(bzerr));
            sbm__text_abort(w);
            return st;
        }
    }
    w->cap = TEXT_CHUNK;
    w->buf = sbm__host_alloc(ctx, w->cap, "the output buffer");
    if (!w->buf) {
        sbm__text_abort(w);
        return SBM_ERR_OUT_OF_MEMORY;
    }
    locale_begin(&w->locale_c, &w->locale_old);
    return SBM_SUCCESS;
}

static sbm_status text_flush(sbm__text_writer *w)
{
    if (w->failed || w->len == 0) {
        w->len = 0;
        return w->failed ? SBM_ERR_IO : SBM_SUCCESS;
    }
    if (w->gz) {
        SBM__TRY(gz_write(w, w->buf, w->len, Z_NO_FLUSH));
    } else if (w->bz) {
        int bzerr = BZ_OK;
        BZ2_bzWrite(&bzerr, w->bz, w->buf, (int)w->len);
        if (bzerr != BZ_OK) {
            w->failed = 1;
            return sbm__error(w->ctx, SBM_ERR_IO, "%s: cannot write: %s", w->path,
                              bzerr == BZ_IO_ERROR ? strerror(errno) : sbm__bz_reason(bzerr));
        }
    } else if (fwrite(w->buf, 1, w->len, (FILE *)w->file) != w->len) {
        w->failed = 1;
        return sbm__error(w->ctx, SBM_ERR_IO, "%s: cannot write: %s", w->path, strerror(errno));
    }
    w->len = 0;
    return SBM_SUCCESS;
}

sbm_status sbm__text_printf(sbm__text_writer *w, const char *fmt, ...)
{
    if (w->failed) return SBM_ERR_IO;
    for (int attempt = 0; attempt < 2; attempt++) {
        va_list ap;
        va_start(ap, fmt);
        const int n = vsnprintf(w->buf + w->len, w->cap - w->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            w->failed = 1;
            return sbm__error(w->ctx, SBM_ERR_IO, "%s: cannot format output", w->path);
        }
        if ((size_t)n < w->cap - w->len) {
            w->len += (size_t)n;
            if (w->len > w->cap / 2) return text_flush(w);
            return SBM_SUCCESS;
        }
        SBM__TRY(text_flush(w));
        if ((size_t)n >= w->cap) {
            w->failed = 1;
            return sbm__error(w->ctx, SBM_ERR_IO, "%s: output line too long", w->path);
        }
    }
    return SBM_SUCCESS;
}

void sbm__text_abort(sbm__text_writer *w)
{
    if (w->gz) {
        deflateEnd((z_stream *)w->gz);
        sbm__host_free(w->ctx, w->gz);
    }
    if (w->zbuf) sbm__host_free(w->ctx, w->zbuf);
    w->gz = NULL;
    w->zbuf = NULL;
    if (w->bz) {
        /* libbz2 returns early, without freeing its state, while the FILE has its error flag
         * set (after a failed write); abandoning writes nothing more, so clear the flag */
        if (w->file) clearerr((FILE *)w->file);
        int bzerr;
        BZ2_bzWriteClose(&bzerr, w->bz, 1, NULL, NULL);
    }
    if (w->file) fclose((FILE *)w->file);
    if (w->tmp) {
        unlink(w->tmp);
        sbm__host_free(w->ctx, w->tmp);
    }
    if (w->buf) sbm__host_free(w->ctx, w->buf);
    locale_end(&w->locale_c, &w->locale_old);
    w->bz = NULL;
    w->file = NULL;
    w->tmp = NULL;
    w->buf = NULL;
}

sbm_status sbm__text_commit(sbm__text_writer *w)
{
    sbm_status st = text_flush(w);
    if (st == SBM_SUCCESS && w->gz) st = gz_write(w, NULL, 0, Z_FINISH);
    if (st == SBM_SUCCESS && w->bz) {
        int bzerr = BZ_OK;
        BZ2_bzWriteClose(&bzerr, w->bz, 0, NULL, NULL);
        if (bzerr == BZ_OK) w->bz = NULL; /* else not freed: sbm__text_abort abandons it */
        else
            st = sbm__error(w->ctx, SBM_ERR_IO, "%s: cannot finish compressing: %s", w->path,
                            sbm__bz_reason(bzerr));
    }
    if (st == SBM_SUCCESS) {
        FILE *f = (FILE *)w->file;
        w->file = NULL;
        if (fflush(f) != 0) {
            st = sbm__error(w->ctx, SBM_ERR_IO, "%s: cannot write: %s", w->path, strerror(errno));
            fclose(f);
        } else if (fclose(f) != 0) {
            st = sbm__error(w->ctx, SBM_ERR_IO, "%s: cannot write: %s", w->path, strerror(errno));
        }
    }
    if (st == SBM_SUCCESS && rename(w->tmp, w->path) != 0)
        st = sbm__error(w->ctx, SBM_ERR_IO, "%s: cannot rename the temporary file into place: %s",
                        w->path, strerror(errno));
    if (st == SBM_SUCCESS) {
        sbm__host_free(w->ctx, w->tmp);
        w->tmp = NULL;
    }
    sbm__text_abort(w);
    return st;
}
