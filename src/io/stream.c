/* SPDX-License-Identifier: BSD-3-Clause */
/* Byte streams from files, plain or compressed: the one place where the I/O layer decompresses.
 *
 * Decisions recorded here:
 *   - The kind is told by the first bytes, never by the name: gzip (1f 8b), bzip2 ("BZh"), else
 *     plain. A renamed or suffix-less compressed file still reads; a ".gz" name on plain text
 *     reads as plain text.
 *   - Nothing is read twice and nothing seeks: the bytes read to tell the kind are handed to the
 *     decoder (bzip2's "unused" input, gzip's first input) or delivered first (plain), so pipes
 *     and FIFOs read too. This is why gzip goes through zlib's inflate, not gzread on a reopened
 *     descriptor.
 *   - Concatenated streams (pigz and pbzip2 write them; `cat a.gz b.gz` makes them) read as
 *     their concatenation. Bytes after the last stream that do not start another one are an
 *     error, as is a stream that ends early (a truncated download must not read as a shorter
 *     file) and a bad checksum: SBM_ERR_IO with the file, the line being read and the reason.
 *   - The decoders allocate their state through zlib's and libbz2's own malloc (inflate about
 *     40 KiB, bzip2 up to 3.7 MB for a -9 stream); the context's allocator sees the buffers. */
#define _POSIX_C_SOURCE 200809L

#include "io_internal.h"

#include <bzlib.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#define STREAM_CHUNK ((size_t)1 << 16)

enum { STREAM_PLAIN, STREAM_GZIP, STREAM_BZIP2 };

static sbm_status stream_error(sbm__stream *s, sbm_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* "path:line: reason" while a caller counts lines, else "path: reason". */
static sbm_status stream_error(sbm__stream *s, sbm_status status, const char *fmt, ...)
{
    char reason[SBM__MSG_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    if (s->line > 0)
        return sbm__error(s->ctx, status, "%s:%" PRId64 ": %s", s->path, s->line, reason);
    return sbm__error(s->ctx, status, "%s: %s", s->path, reason);
}

const char *sbm__bz_reason(int bzerr)
{
    switch (bzerr) {
    case BZ_DATA_ERROR: return "corrupt bzip2 data";
    case BZ_DATA_ERROR_MAGIC: return "not bzip2 data";
    case BZ_UNEXPECTED_EOF: return "the compressed file ends early";
    case BZ_MEM_ERROR: return "out of memory in libbz2";
    case BZ_IO_ERROR: return "read or write error";
    default: return "libbz2 error";
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Opening and closing                                                                      */
/* ---------------------------------------------------------------------------------------- */

sbm_status sbm__stream_open(sbm_ctx *ctx, const char *path, sbm__stream *s)
{
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "rb");
    if (!f) return sbm__error(ctx, SBM_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    return sbm__stream_open_file(ctx, path, f, s);
}

sbm_status sbm__stream_open_file(sbm_ctx *ctx, const char *path, void *file, sbm__stream *s)
{
    FILE *f = file;
    memset(s, 0, sizeof *s);
    s->ctx = ctx;
    s->path = path;
    s->file = f;
    s->bytes = -1;
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode)) s->bytes = (int64_t)sb.st_size;

    s->nhead = fread(s->head, 1, 3, f);
    if (ferror(f)) {
        const int err = errno;
        sbm__stream_close(s);
        return sbm__error(ctx, SBM_ERR_IO, "%s: cannot read: %s", path, strerror(err));
    }
    if (s->nhead == 3 && memcmp(s->head, "BZh", 3) == 0) {
        s->kind = STREAM_BZIP2;
        s->bytes = -1;
        int bzerr = BZ_OK;
        s->bz = BZ2_bzReadOpen(&bzerr, f, 0, 0, s->head, 3);
        if (bzerr != BZ_OK) {
            if (s->bz) BZ2_bzReadClose(&bzerr, s->bz);
            s->bz = NULL;
            sbm__stream_close(s);
            return sbm__error(ctx, SBM_ERR_IO, "%s: cannot start decompressing: %s", path,
                              sbm__bz_reason(bzerr));
        }
    } else if (s->nhead >= 2 && s->head[0] == 0x1f && s->head[1] == 0x8b) {
        s->kind = STREAM_GZIP;
        s->bytes = -1;
        z_stream *z = sbm__host_alloc(ctx, sizeof *z, "the gzip decoder");
        s->in = z ? sbm__host_alloc(ctx, STREAM_CHUNK, "the compressed input buffer") : NULL;
        if (!s->in) {
            sbm__host_free(ctx, z);
            sbm__stream_close(s);
            return SBM_ERR_OUT_OF_MEMORY;
        }
        memset(z, 0, sizeof *z);
        memcpy(s->in, s->head, s->nhead);
        z->next_in = s->in;
        z->avail_in = (uInt)s->nhead;
        /* 16 + MAX_WBITS: a gzip wrapper (header, CRC-32 and length checked), nothing else */
        const int rc = inflateInit2(z, 16 + MAX_WBITS);
        if (rc != Z_OK) {
            sbm__host_free(ctx, z);
            sbm__stream_close(s);
            return sbm__error(ctx, rc == Z_MEM_ERROR ? SBM_ERR_OUT_OF_MEMORY : SBM_ERR_IO,
                              "%s: cannot start decompressing: %s", path, zError(rc));
        }
        s->z = z;
    }
    if (s->kind != STREAM_PLAIN) s->nhead = 0; /* the decoder has them */
    return SBM_SUCCESS;
}

void sbm__stream_close(sbm__stream *s)
{
    if (s->bz) {
        int bzerr;
        BZ2_bzReadClose(&bzerr, s->bz);
    }
    if (s->z) {
        inflateEnd((z_stream *)s->z);
        sbm__host_free(s->ctx, s->z);
    }
    if (s->in) sbm__host_free(s->ctx, s->in);
    if (s->file) fclose((FILE *)s->file); /* read-only: nothing to flush, nothing to report */
    s->bz = NULL;
    s->z = NULL;
    s->in = NULL;
    s->file = NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* Reading                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static sbm_status plain_read(sbm__stream *s, char *dst, size_t n, size_t *got)
{
    FILE *f = s->file;
    size_t k = 0;
    if (s->nhead > 0) { /* the bytes read to tell the kind */
        k = s->nhead < n ? s->nhead : n;
        memcpy(dst, s->head, k);
        memmove(s->head, s->head + k, s->nhead - k);
        s->nhead -= k;
    }
    const size_t r = fread(dst + k, 1, n - k, f);
    *got = k + r;
    if (k + r < n) {
        if (ferror(f)) return stream_error(s, SBM_ERR_IO, "read error: %s", strerror(errno));
        s->eof = 1;
    }
    return SBM_SUCCESS;
}

/* A bzip2 stream has ended: start the next one, or stop at the end of the file. */
static sbm_status bz_next_stream(sbm__stream *s)
{
    void *unused = NULL;
    int nunused = 0, bzerr = BZ_OK;
    char keep[BZ_MAX_UNUSED];
    BZ2_bzReadGetUnused(&bzerr, s->bz, &unused, &nunused);
    if (bzerr != BZ_OK)
        return stream_error(s, SBM_ERR_IO, "cannot decompress: %s", sbm__bz_reason(bzerr));
    if (nunused > 0) memcpy(keep, unused, (size_t)nunused);
    BZ2_bzReadClose(&bzerr, s->bz);
    s->bz = NULL;
    /* libbz2 checks the next stream's magic only when it is read; check it here, so that
     * trailing bytes get their own message */
    while (nunused < 3) {
        const int c = fgetc((FILE *)s->file);
        if (c == EOF) break;
        keep[nunused++] = (char)c;
    }
    if (ferror((FILE *)s->file))
        return stream_error(s, SBM_ERR_IO, "read error: %s", strerror(errno));
    if (nunused == 0) {
        s->eof = 1;
        return SBM_SUCCESS;
    }
    if (nunused < 3 || memcmp(keep, "BZh", 3) != 0)
        return stream_error(s, SBM_ERR_IO,
                            "cannot decompress: trailing data after the bzip2 stream is not "
                            "bzip2 data");
    s->bz = BZ2_bzReadOpen(&bzerr, (FILE *)s->file, 0, 0, keep, nunused);
    if (bzerr != BZ_OK) {
        if (s->bz) BZ2_bzReadClose(&bzerr, s->bz);
        s->bz = NULL;
        return stream_error(s, SBM_ERR_IO, "cannot decompress: %s", sbm__bz_reason(bzerr));
    }
    return SBM_SUCCESS;
}

static sbm_status bz_read(sbm__stream *s, char *dst, size_t n, size_t *got)
{
    *got = 0;
    while (*got < n && !s->eof) {
        int bzerr = BZ_OK;
        const size_t left = n - *got;
        const int want = left > (size_t)1 << 30 ? 1 << 30 : (int)left;
        const int r = BZ2_bzRead(&bzerr, s->bz, dst + *got, want);
        if (bzerr != BZ_OK && bzerr != BZ_STREAM_END) {
            if (bzerr == BZ_IO_ERROR)
                return stream_error(s, SBM_ERR_IO, "read error: %s", strerror(errno));
            return stream_error(s, SBM_ERR_IO, "cannot decompress: %s", sbm__bz_reason(bzerr));
        }
        if (r > 0) *got += (size_t)r;
        if (bzerr == BZ_STREAM_END) SBM__TRY(bz_next_stream(s));
    }
    return SBM_SUCCESS;
}

static sbm_status gz_read(sbm__stream *s, char *dst, size_t n, size_t *got)
{
    z_stream *z = s->z;
    FILE *f = s->file;
    *got = 0;
    while (*got < n && !s->eof) {
        if (z->avail_in == 0 && !s->in_eof) {
            const size_t k = fread(s->in, 1, STREAM_CHUNK, f);
            if (k < STREAM_CHUNK) {
                if (ferror(f)) return stream_error(s, SBM_ERR_IO, "read error: %s", strerror(errno));
                s->in_eof = 1;
            }
            z->next_in = s->in;
            z->avail_in = (uInt)k;
        }
        if (s->member_done) { /* another gzip member, or the end */
            if (z->avail_in == 0) {
                s->eof = 1;
                break;
            }
            if (z->next_in[0] != 0x1f)
                return stream_error(s, SBM_ERR_IO,
                                    "cannot decompress: trailing data after the gzip stream is "
                                    "not gzip data");
            if (inflateReset(z) != Z_OK)
                return stream_error(s, SBM_ERR_IO, "cannot decompress: zlib state error");
            s->member_done = 0;
        }
        const size_t left = n - *got;
        const uInt want = left > UINT_MAX ? UINT_MAX : (uInt)left;
        z->next_out = (Bytef *)dst + *got;
        z->avail_out = want;
        const int rc = inflate(z, Z_NO_FLUSH);
        *got += want - z->avail_out;
        if (rc == Z_STREAM_END) {
            s->member_done = 1;
        } else if (rc == Z_BUF_ERROR || rc == Z_OK) {
            /* no progress possible without input, and there is none left */
            if (z->avail_in == 0 && s->in_eof && z->avail_out > 0)
                return stream_error(s, SBM_ERR_IO,
                                    "cannot decompress: the compressed file ends early");
        } else if (rc == Z_MEM_ERROR) {
            return stream_error(s, SBM_ERR_OUT_OF_MEMORY, "cannot decompress: out of memory in zlib");
        } else {
            return stream_error(s, SBM_ERR_IO, "cannot decompress: corrupt gzip data (%s)",
                                z->msg ? z->msg : zError(rc));
        }
    }
    return SBM_SUCCESS;
}

sbm_status sbm__stream_read(sbm__stream *s, char *dst, size_t n, size_t *got)
{
    *got = 0;
    if (s->eof || n == 0) return SBM_SUCCESS;
    switch (s->kind) {
    case STREAM_BZIP2: return bz_read(s, dst, n, got);
    case STREAM_GZIP: return gz_read(s, dst, n, got);
    default: return plain_read(s, dst, n, got);
    }
}
