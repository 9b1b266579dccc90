/* SPDX-License-Identifier: BSD-3-Clause */
/* Real data for the suites: the compressed copies in tests/data (always there), the optional
 * extra folder (SBM_DATA_DIR), and an independent decompressor (zlib and libbz2 called here
 * directly, not through sbm's stream layer) for the suites' own reference parsers. */
#define _POSIX_C_SOURCE 200809L

#include "test_util.h"

#include <bzlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#ifndef SBM_TEST_DATA_DIR
#error "SBM_TEST_DATA_DIR (the repository's tests/data) must be defined by tests/CMakeLists.txt"
#endif

static int is_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

const char *sbm_test_data_dir(void) { return SBM_TEST_DATA_DIR; }

const char *sbm_test_data_path(const char *relative)
{
    static char buf[4096];
    static const char *const suffix[] = {"", ".gz", ".bz2"};
    for (int k = 0; k < 3; k++) {
        snprintf(buf, sizeof buf, "%s/%s%s", SBM_TEST_DATA_DIR, relative, suffix[k]);
        if (is_file(buf)) return buf;
    }
    fail_msg("test data %s/%s{,.gz,.bz2} is missing from the repository", SBM_TEST_DATA_DIR,
             relative);
    return NULL;
}

const char *sbm_test_extra_data_find(const char *relative)
{
    static char buf[4096];
    const char *dir = getenv("SBM_DATA_DIR");
    snprintf(buf, sizeof buf, "%s/%s", dir && *dir ? dir : SBM_DATA_DIR, relative);
    if (is_file(buf)) return buf;
    print_message("[  SKIP    ] optional data %s not found (SBM_DATA_DIR names the folder)\n", buf);
    return NULL;
}

const char *sbm_test_extra_data_path(const char *relative)
{
    const char *path = sbm_test_extra_data_find(relative);
    if (!path) skip();
    return path;
}

void sbm_test_extra_data_done(int found, int total)
{
    if (found >= total) return;
    print_message("[  SKIP    ] %d of %d optional data files not found (the %d found were checked; "
                  "SBM_DATA_DIR names the folder)\n", total - found, total, found);
    skip();
}

/* ---------------------------------------------------------------------------------------- */
/* Independent decompression                                                                */
/* ---------------------------------------------------------------------------------------- */

/* Copy the decompressed bytes of src to out; 0 on success. */
static int decompress_into(const char *src, FILE *out)
{
    unsigned char head[3] = {0, 0, 0};
    FILE *f = fopen(src, "rb");
    if (!f) return -1;
    const size_t nhead = fread(head, 1, 3, f);
    fclose(f);
    static char buf[1 << 16];
    if (nhead == 3 && memcmp(head, "BZh", 3) == 0) {
        f = fopen(src, "rb");
        int err = BZ_OK, ok = f != NULL;
        BZFILE *bz = ok ? BZ2_bzReadOpen(&err, f, 0, 0, NULL, 0) : NULL;
        while (ok && err == BZ_OK) {
            const int n = BZ2_bzRead(&err, bz, buf, (int)sizeof buf);
            if (err != BZ_OK && err != BZ_STREAM_END) ok = 0;
            else if (n > 0 && fwrite(buf, 1, (size_t)n, out) != (size_t)n) ok = 0;
        }
        /* the files here hold one bzip2 stream each */
        if (bz) BZ2_bzReadClose(&err, bz);
        if (f) fclose(f);
        return ok ? 0 : -1;
    }
    /* gzread reads gzip and, transparently, plain files */
    gzFile g = gzopen(src, "rb");
    if (!g) return -1;
    int n, ok = 1;
    while ((n = gzread(g, buf, (unsigned)sizeof buf)) > 0)
        if (fwrite(buf, 1, (size_t)n, out) != (size_t)n) ok = 0;
    int zerr = Z_OK;
    gzerror(g, &zerr);
    if (n < 0 || zerr != Z_OK) ok = 0;
    gzclose(g);
    return ok ? 0 : -1;
}

FILE *sbm_test_open_plain(const char *path)
{
    FILE *t = tmpfile();
    if (!t) fail_msg("cannot create a temporary file for %s", path);
    if (decompress_into(path, t) != 0) fail_msg("cannot decompress %s", path);
    rewind(t);
    return t;
}

void sbm_test_recode(const char *src, const char *dst, const char *kind)
{
    FILE *t = sbm_test_open_plain(src);
    static char buf[1 << 16];
    size_t n;
    int ok = 1;
    if (strcmp(kind, "gz") == 0) {
        gzFile g = gzopen(dst, "wb9");
        ok = g != NULL;
        while (ok && (n = fread(buf, 1, sizeof buf, t)) > 0) ok = gzwrite(g, buf, (unsigned)n) == (int)n;
        if (g && gzclose(g) != Z_OK) ok = 0;
    } else if (strcmp(kind, "bz2") == 0) {
        FILE *f = fopen(dst, "wb");
        int err = BZ_OK;
        BZFILE *bz = f ? BZ2_bzWriteOpen(&err, f, 9, 0, 0) : NULL;
        ok = bz != NULL && err == BZ_OK;
        while (ok && (n = fread(buf, 1, sizeof buf, t)) > 0) {
            BZ2_bzWrite(&err, bz, buf, (int)n);
            ok = err == BZ_OK;
        }
        if (bz) BZ2_bzWriteClose(&err, bz, !ok, NULL, NULL);
        if (err != BZ_OK) ok = 0;
        if (f && fclose(f) != 0) ok = 0;
    } else {
        FILE *f = fopen(dst, "wb");
        ok = f != NULL;
        while (ok && (n = fread(buf, 1, sizeof buf, t)) > 0) ok = fwrite(buf, 1, n, f) == n;
        if (f && fclose(f) != 0) ok = 0;
    }
    fclose(t);
    if (!ok) fail_msg("cannot write %s (%s) from %s", dst, kind, src);
}
