/* Helpers shared by the commands of the sbm command-line tool; see cli_common.h. */
#define _POSIX_C_SOURCE 200809L

#include "cli_common.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

int cli_usage_error(const char *usage, const char *fmt, const char *arg)
{
    fprintf(stderr, "sbm: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", usage);
    return EXIT_USAGE;
}

int cli_lib_error(const sbm_ctx *ctx, const char *context)
{
    const char *msg = sbm_ctx_last_error(ctx);
    if (msg == NULL || msg[0] == '\0') msg = "unknown error";
    if (context != NULL)
        fprintf(stderr, "sbm: %s: %s\n", context, msg);
    else
        fprintf(stderr, "sbm: %s\n", msg);
    return EXIT_FAILURE;
}

int cli_match_option(int argc, char **argv, int *i, const char *name, int has_value,
                     const char **value)
{
    const char *a = argv[*i];
    const size_t n = strlen(name);
    if (strncmp(a, name, n) != 0) return 0;
    if (a[n] == '\0') {
        if (!has_value) return 1;
        if (*i + 1 >= argc) return -1;
        *value = argv[++*i];
        return 1;
    }
    if (a[n] == '=' && has_value) {
        *value = a + n + 1;
        return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Numbers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

int cli_parse_double(const char *s, double *out)
{
    char *e = NULL;
    errno = 0;
    const double v = strtod(s, &e);
    /* ERANGE on underflow still gives a usable (subnormal or zero) value; overflow is inf */
    if (e == s || *e != '\0' || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

int cli_parse_u64(const char *s, uint64_t *out)
{
    char *e = NULL;
    if (s[0] < '0' || s[0] > '9') return 0; /* strtoull would accept a sign or spaces */
    errno = 0;
    const unsigned long long v = strtoull(s, &e, 10);
    if (*e != '\0' || errno != 0) return 0;
    *out = (uint64_t)v;
    return 1;
}

int cli_parse_int64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    uint64_t v;
    if (!cli_parse_u64(s, &v) || v > (uint64_t)INT64_MAX) return 0;
    if ((int64_t)v < lo || (int64_t)v > hi) return 0;
    *out = (int64_t)v;
    return 1;
}

/* ---------------------------------------------------------------------------------------- */
/* Backend                                                                                  */
/* ---------------------------------------------------------------------------------------- */

int cli_parse_backend(const char *s, cli_backend *out)
{
    if (strcmp(s, "cpu") == 0)
        *out = CLI_BACKEND_CPU;
    else if (strcmp(s, "cuda") == 0)
        *out = CLI_BACKEND_CUDA;
    else if (strcmp(s, "auto") == 0)
        *out = CLI_BACKEND_AUTO;
    else
        return 0;
    return 1;
}

int cli_make_context(cli_backend backend, sbm_ctx **ctx)
{
    sbm_backend b = SBM_BACKEND_CPU;
    if (backend == CLI_BACKEND_CUDA || (backend == CLI_BACKEND_AUTO && sbm_cuda_device_count() > 0))
        b = SBM_BACKEND_CUDA;
    if (sbm_ctx_create(ctx, b, 0) != SBM_SUCCESS)
        return cli_lib_error(NULL, b == SBM_BACKEND_CUDA ? "--backend cuda" : NULL);
    return 0;
}

const char *cli_backend_name(const sbm_ctx *ctx)
{
    return sbm_ctx_backend(ctx) == SBM_BACKEND_CUDA ? "cuda" : "cpu";
}

/* ---------------------------------------------------------------------------------------- */
/* Seeded values                                                                            */
/* ---------------------------------------------------------------------------------------- */

void cli_random_fill(uint64_t seed, double *x, int64_t count)
{
    uint64_t state = seed;
    for (int64_t k = 0; k < count; k++) x[k] = 2.0 * sbm_splitmix64_uniform(&state) - 1.0;
}

/* ---------------------------------------------------------------------------------------- */
/* Dense Matrix Market arrays                                                               */
/* ---------------------------------------------------------------------------------------- */

/* Next whitespace-separated token of *s (NUL-terminated in place), or NULL. */
static char *next_token(char **s)
{
    char *p = *s;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == '\v' || *p == '\f') p++;
    if (*p == '\0') {
        *s = p;
        return NULL;
    }
    char *t = p;
    while (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n' && *p != '\v' &&
           *p != '\f')
        p++;
    if (*p != '\0') *p++ = '\0';
    *s = p;
    return t;
}

/* 1 if the line holds only whitespace. */
static int blank_line(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n' && *s != '\v' && *s != '\f')
            return 0;
    return 1;
}

/* used inside printf formats */
#define DENSE_BANNER "'%%%%MatrixMarket matrix array real general'"

int cli_read_dense(const char *path, int64_t *rows, int64_t *cols, double **values)
{
    *values = NULL;
    *rows = *cols = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "sbm: %s: cannot open: %s\n", path, strerror(errno));
        return EXIT_FAILURE;
    }
    char *line = NULL, *s, *t;
    size_t cap = 0;
    long long lineno = 0;
    double *v = NULL;
    int64_t m = 0, n = 0, count = 0, k = 0;
    int rc = EXIT_FAILURE;

    /* the banner */
    if (getline(&line, &cap, f) < 0) {
        if (ferror(f))
            fprintf(stderr, "sbm: %s: cannot read: %s\n", path, strerror(errno));
        else
            fprintf(stderr, "sbm: %s: the file is empty (expected " DENSE_BANNER ")\n", path);
        goto done;
    }
    lineno = 1;
    /* "%%MatrixMarket" (any number of '%', any case, as the library's coordinate reader) */
    s = line;
    char *word[6];
    for (int w = 0; w < 6; w++) word[w] = next_token(&s);
    t = word[0];
    while (t && *t == '%') t++;
    if (!t || t == word[0] || strcasecmp(t, "MatrixMarket") != 0) {
        fprintf(stderr, "sbm: %s: line 1: not a Matrix Market file (expected " DENSE_BANNER ")\n",
                path);
        goto done;
    }
    if (!word[4]) {
        fprintf(stderr, "sbm: %s: line 1: the banner needs object, format, field and symmetry "
                        "(expected " DENSE_BANNER ")\n", path);
        goto done;
    }
    if (word[5]) {
        fprintf(stderr, "sbm: %s: line 1: unexpected word '%s' after the symmetry (expected "
                        DENSE_BANNER ")\n", path, word[5]);
        goto done;
    }
    if (strcasecmp(word[1], "matrix") != 0) {
        fprintf(stderr, "sbm: %s: line 1: object '%s' is not supported (expected 'matrix')\n", path,
                word[1]);
        goto done;
    }
    if (strcasecmp(word[2], "coordinate") == 0) {
        fprintf(stderr, "sbm: %s: line 1: a sparse 'coordinate' file; dense vectors and matrices "
                        "are read from 'array' files (" DENSE_BANNER ")\n", path);
        goto done;
    }
    if (strcasecmp(word[2], "array") != 0) {
        fprintf(stderr, "sbm: %s: line 1: unknown format '%s' (expected 'array')\n", path, word[2]);
        goto done;
    }
    if (strcasecmp(word[3], "real") != 0 && strcasecmp(word[3], "double") != 0 &&
        strcasecmp(word[3], "integer") != 0) {
        fprintf(stderr, "sbm: %s: line 1: field '%s' is not supported (real or integer)\n", path,
                word[3]);
        goto done;
    }
    if (strcasecmp(word[4], "general") != 0) {
        fprintf(stderr, "sbm: %s: line 1: symmetry '%s' is not supported (dense arrays must be "
                        "'general')\n", path, word[4]);
        goto done;
    }

    /* comments, then the size line */
    for (;;) {
        if (getline(&line, &cap, f) < 0) {
            if (ferror(f))
                fprintf(stderr, "sbm: %s: cannot read: %s\n", path, strerror(errno));
            else
                fprintf(stderr, "sbm: %s: ends before the size line 'rows columns'\n", path);
            goto done;
        }
        lineno++;
        if (line[0] != '%' && !blank_line(line)) break;
    }
    s = line;
    char *size[3];
    for (int w = 0; w < 3; w++) size[w] = next_token(&s);
    if (!size[0] || !size[1] || size[2] || !cli_parse_int64(size[0], 0, INT64_MAX, &m) ||
        !cli_parse_int64(size[1], 0, INT64_MAX, &n)) {
        fprintf(stderr, "sbm: %s: line %lld: expected the size line 'rows columns' of an array "
                        "file\n", path, lineno);
        goto done;
    }
    if (n > 0 && m > INT64_MAX / (int64_t)sizeof(double) / n) {
        fprintf(stderr, "sbm: %s: line %lld: %lld x %lld values do not fit in memory\n", path,
                lineno, (long long)m, (long long)n);
        goto done;
    }
    count = m * n;
    v = malloc(count > 0 ? (size_t)count * sizeof(double) : 1);
    if (!v) {
        fprintf(stderr, "sbm: %s: out of memory for %lld x %lld values\n", path, (long long)m,
                (long long)n);
        goto done;
    }

    /* the values, column by column */
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        if (blank_line(line)) continue;
        if (k == count) {
            fprintf(stderr, "sbm: %s: line %lld: more than the %lld values of a %lld x %lld "
                            "array\n", path, lineno, (long long)count, (long long)m, (long long)n);
            goto done;
        }
        s = line;
        t = next_token(&s);
        char *e = NULL;
        const double x = strtod(t, &e);
        if (e == t || *e != '\0') {
            fprintf(stderr, "sbm: %s: line %lld: '%s' is not a number\n", path, lineno, t);
            goto done;
        }
        if (!isfinite(x)) {
            fprintf(stderr, "sbm: %s: line %lld: value '%s' is not finite (NaN and infinities are "
                            "not accepted)\n", path, lineno, t);
            goto done;
        }
        if ((t = next_token(&s)) != NULL) {
            fprintf(stderr, "sbm: %s: line %lld: one value per line expected, found also '%s'\n",
                    path, lineno, t);
            goto done;
        }
        v[k++] = x;
    }
    if (ferror(f)) {
        fprintf(stderr, "sbm: %s: cannot read: %s\n", path, strerror(errno));
        goto done;
    }
    if (k < count) {
        fprintf(stderr, "sbm: %s: truncated: %lld of the %lld values of a %lld x %lld array\n",
                path, (long long)k, (long long)count, (long long)m, (long long)n);
        goto done;
    }
    *rows = m;
    *cols = n;
    *values = v;
    v = NULL;
    rc = 0;
done:
    free(v);
    free(line);
    fclose(f);
    return rc;
}

int cli_temp_create(const char *path, FILE **f, char **tmp)
{
    *f = NULL;
    *tmp = NULL;
    const size_t len = strlen(path);
    char *name = malloc(len + 16);
    if (!name) {
        fprintf(stderr, "sbm: out of memory\n");
        return EXIT_FAILURE;
    }
    memcpy(name, path, len);
    memcpy(name + len, ".tmp.XXXXXX", 12);
    const int fd = mkstemp(name);
    FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!fp) {
        fprintf(stderr, "sbm: %s: cannot create: %s\n", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(name);
        }
        free(name);
        return EXIT_FAILURE;
    }
    fchmod(fd, 0644); /* mkstemp makes 0600; the result is an ordinary file */
    *f = fp;
    *tmp = name;
    return 0;
}

int cli_temp_close(const char *path, FILE *f, char *tmp, int ok)
{
    if (fclose(f) != 0) ok = 0;
    if (!ok) {
        fprintf(stderr, "sbm: %s: cannot write: %s\n", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return EXIT_FAILURE;
    }
    return 0;
}

int cli_write_dense(const char *path, int64_t rows, int64_t cols, const double *values)
{
    FILE *f = NULL;
    char *name = NULL;
    if (cli_temp_create(path, &f, &name) != 0) return EXIT_FAILURE;
    int ok = fprintf(f, "%%%%MatrixMarket matrix array real general\n%lld %lld\n",
                     (long long)rows, (long long)cols) > 0;
    const int64_t count = rows * cols;
    for (int64_t k = 0; k < count && ok; k++) ok = fprintf(f, "%.17g\n", values[k]) > 0;
    if (cli_temp_close(path, f, name, ok) != 0) return EXIT_FAILURE;
    if (rename(name, path) != 0) {
        fprintf(stderr, "sbm: %s: cannot rename the temporary file into place: %s\n", path,
                strerror(errno));
        unlink(name);
        free(name);
        return EXIT_FAILURE;
    }
    free(name);
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Time                                                                                     */
/* ---------------------------------------------------------------------------------------- */

double cli_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
