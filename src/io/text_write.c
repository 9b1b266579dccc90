/* SPDX-License-Identifier: BSD-3-Clause */
/* The writers' side of the text files (Matrix Market, BAL, g2o): formatted into a buffer,
 * compressed when the name asks, and committed.
 *
 * Decisions recorded here:
 *   - Writing compresses when the name ends in ".bz2" (bzip2 -9) or ".gz" (gzip -9); any other
 *     name is written plain. (Reading goes by the magic bytes, never by the name.)
 *   - Never replace what is not ours. Only a regular file, or a name that does not exist yet,
 *     is written to a temporary beside it and renamed over it (a failure leaves the old file
 *     or nothing). A symbolic link to a regular file is followed: its target is replaced that
 *     way and the link stays a link. A regular file with more than one name (st_nlink > 1, hard
 *     links), or a symbolic link to one, is refused (SBM_ERR_IO, nothing written): the rename
 *     would silently cut this name off the others. Anything else - a character device (/dev/null, /dev/full),
 *     a FIFO, a link to one, a dangling link - is written in place, and every write error,
 *     ENOSPC included, is reported at the write, the flush or the close.
 *   - A name of an open descriptor - "-" (the standard output), /dev/stdout, /dev/stderr,
 *     /dev/fd/N, /proc/self/fd/N - is written through a duplicate of that descriptor, whatever
 *     it is: reopening it would truncate, or write from offset 0 into, a file the shell opened
 *     for appending, and replacing it would cut the shell's file off. */
#define _XOPEN_SOURCE 700 /* realpath */

#include "io_internal.h"

#include <bzlib.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define TEXT_CHUNK ((size_t)1 << 16)

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

/* A copy of s in host memory (NULL: out of memory, recorded). */
static char *host_strdup(sbm_ctx *ctx, const char *s, size_t extra, const char *what)
{
    const size_t n = strlen(s);
    char *c = sbm__host_alloc(ctx, n + 1 + extra, what);
    if (c) memcpy(c, s, n + 1);
    return c;
}

/* The descriptor that path names ("-", /dev/stdout, /dev/fd/3, ...), or -1. */
static int descriptor_of(const char *path)
{
    if (strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0) return STDOUT_FILENO;
    if (strcmp(path, "/dev/stderr") == 0) return STDERR_FILENO;
    const char *n = strncmp(path, "/dev/fd/", 8) == 0          ? path + 8
                    : strncmp(path, "/proc/self/fd/", 14) == 0 ? path + 14
                                                               : NULL;
    if (!n || *n < '0' || *n > '9') return -1;
    char *end = NULL;
    const long fd = strtol(n, &end, 10);
    return *end == '\0' && fd <= INT32_MAX ? (int)fd : -1;
}

/* A regular file with other names (hard links): the rename would give this name a new file and
 * leave the others on the old contents, so it is refused before anything is written. */
static sbm_status hard_linked(sbm__text_writer *w, const struct stat *sb, const char *what)
{
    return sbm__error(w->ctx, SBM_ERR_IO,
                      "%s: %shas %ju hard links; writing it would replace this name only and "
                      "leave the other %ju with the old contents (remove the other links, or "
                      "write to another name)",
                      w->path, what, (uintmax_t)sb->st_nlink, (uintmax_t)sb->st_nlink - 1);
}

/* Decide how path is written (see the top of the file): w->target set to the regular file to
 * replace atomically (path, or the file a link names), or left NULL to write in place. */
static sbm_status writer_target(sbm__text_writer *w)
{
    const char *path = w->path;
    if (descriptor_of(path) >= 0) return SBM_SUCCESS;
    struct stat ls, ts;
    if (lstat(path, &ls) != 0) {
        /* missing (or unreadable: the temporary's creation then reports it) */
        w->target = host_strdup(w->ctx, path, 16, "the output file name");
        return w->target ? SBM_SUCCESS : SBM_ERR_OUT_OF_MEMORY;
    }
    if (S_ISREG(ls.st_mode) && ls.st_nlink > 1) return hard_linked(w, &ls, "");
    if (S_ISREG(ls.st_mode) || S_ISDIR(ls.st_mode)) { /* a directory: the rename reports it */
        w->target = host_strdup(w->ctx, path, 16, "the output file name");
        return w->target ? SBM_SUCCESS : SBM_ERR_OUT_OF_MEMORY;
    }
    if (!S_ISLNK(ls.st_mode) || stat(path, &ts) != 0 || !S_ISREG(ts.st_mode))
        return SBM_SUCCESS; /* a device, FIFO, socket, or a link to none or to one */
    if (ts.st_nlink > 1) return hard_linked(w, &ts, "the file this symbolic link names ");
    char *real = realpath(path, NULL);
    if (!real)
        return sbm__error(w->ctx, SBM_ERR_IO, "%s: cannot resolve the symbolic link: %s", path,
                          strerror(errno));
    w->target = host_strdup(w->ctx, real, 16, "the output file name");
    free(real);
    return w->target ? SBM_SUCCESS : SBM_ERR_OUT_OF_MEMORY;
}

/* The temporary file beside w->target, with the target's mode (or 0644). */
static sbm_status open_temporary(sbm__text_writer *w, int *fd)
{
    const size_t n = strlen(w->target);
    w->tmp = host_strdup(w->ctx, w->target, 12, "the temporary file name");
    if (!w->tmp) return SBM_ERR_OUT_OF_MEMORY;
    memcpy(w->tmp + n, ".tmp.XXXXXX", 12);
    *fd = mkstemp(w->tmp);
    if (*fd < 0) {
        const sbm_status st = sbm__error(w->ctx, SBM_ERR_IO,
                                         "%s: cannot create the temporary file '%s': %s", w->path,
                                         w->tmp, strerror(errno));
        sbm__host_free(w->ctx, w->tmp);
        w->tmp = NULL;
        return st;
    }
    /* mkstemp makes 0600; keep an existing file's mode, else the usual 0644 */
    struct stat sb;
    fchmod(*fd, stat(w->target, &sb) == 0 ? (sb.st_mode & 07777) : 0644);
    return SBM_SUCCESS;
}

/* The descriptor written in place: a duplicate of the one path names (the standard streams
 * flushed first, so that what the caller printed comes before), else path opened for writing. */
static sbm_status open_in_place(sbm__text_writer *w, int *fd)
{
    const int named = descriptor_of(w->path);
    if (named >= 0) {
        if (named == STDOUT_FILENO) fflush(stdout);
        if (named == STDERR_FILENO) fflush(stderr);
        *fd = dup(named);
    } else {
        *fd = open(w->path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    }
    if (*fd < 0)
        return sbm__error(w->ctx, SBM_ERR_IO, "%s: cannot open for writing: %s",
                          strcmp(w->path, "-") == 0 ? "the standard output" : w->path,
                          strerror(errno));
    return SBM_SUCCESS;
}

sbm_status sbm__text_create(sbm_ctx *ctx, const char *path, sbm__text_writer *w)
{
    memset(w, 0, sizeof *w);
    w->ctx = ctx;
    w->path = path;
    SBM__TRY(writer_target(w));
    int fd = -1;
    const sbm_status so = w->target ? open_temporary(w, &fd) : open_in_place(w, &fd);
    if (so != SBM_SUCCESS) {
        sbm__text_abort(w);
        return so;
    }
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        sbm_status st = sbm__error(ctx, SBM_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        close(fd);
        sbm__text_abort(w);
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
    sbm__text_locale_begin(&w->locale_c, &w->locale_old);
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
    if (w->target) sbm__host_free(w->ctx, w->target);
    if (w->buf) sbm__host_free(w->ctx, w->buf);
    sbm__text_locale_end(&w->locale_c, &w->locale_old);
    w->bz = NULL;
    w->file = NULL;
    w->tmp = NULL;
    w->target = NULL;
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
    if (st == SBM_SUCCESS && w->tmp && rename(w->tmp, w->target) != 0)
        st = sbm__error(w->ctx, SBM_ERR_IO, "%s: cannot rename the temporary file into place: %s",
                        w->path, strerror(errno));
    if (st == SBM_SUCCESS) {
        sbm__host_free(w->ctx, w->tmp);
        w->tmp = NULL;
    }
    sbm__text_abort(w);
    return st;
}
