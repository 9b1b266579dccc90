/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the commands of the sbm command-line tool; see cli_common.h. */
#define _POSIX_C_SOURCE 200809L

#include "cli_common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

int cli_command_error(const char *usage, const char *cmd, const char *fmt, const char *arg)
{
    fprintf(stderr, "sbm: ");
    if (cmd) fprintf(stderr, "%s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", usage);
    return EXIT_USAGE;
}

int cli_usage_error(const char *usage, const char *fmt, const char *arg)
{
    return cli_command_error(usage, NULL, fmt, arg);
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
/* Outputs and the report                                                                   */
/* ---------------------------------------------------------------------------------------- */

static int report_to_stderr;

int cli_output_folder_error(const char *path)
{
    if (!path || !path[0] || strcmp(path, "-") == 0) return 0;
    char dir[4096];
    const size_t n = strlen(path);
    if (n >= sizeof dir) return 0; /* the writer reports it */
    memcpy(dir, path, n + 1);
    char *slash = strrchr(dir, '/');
    if (!slash) strcpy(dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    struct stat st;
    const char *why = NULL;
    if (stat(dir, &st) != 0) why = "does not exist";
    else if (!S_ISDIR(st.st_mode)) why = "is not a folder";
    else if (access(dir, W_OK | X_OK) != 0) why = "is not writable";
    if (!why) return 0;
    fprintf(stderr, "sbm: cannot write '%s': the folder '%s' %s\n", path, dir, why);
    return EXIT_FAILURE;
}

const char *cli_outputs(const char *a, const char *b)
{
    if ((a && strcmp(a, "-") == 0) || (b && strcmp(b, "-") == 0)) report_to_stderr = 1;
    if (!a || !b) return NULL;
    if (strcmp(a, b) == 0) return "two outputs name '%s': each output needs its own file";
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0 && S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev &&
        sa.st_ino == sb.st_ino)
        return "two outputs name the file '%s': each output needs its own file";
    return NULL;
}

FILE *cli_report(void) { return report_to_stderr ? stderr : stdout; }

int cli_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int n = vfprintf(cli_report(), fmt, ap);
    va_end(ap);
    return n;
}

int cli_open_matrix(const char *path, sbm_ctx **host, sbm_csr **A)
{
    if (sbm_ctx_create(host, SBM_BACKEND_CPU, 0) != SBM_SUCCESS) return cli_lib_error(NULL, NULL);
    if (cli_apply_threads(*host)) return EXIT_FAILURE;
    if (sbm_csr_read_mtx(*host, path, A) != SBM_SUCCESS) return cli_lib_error(*host, NULL);
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

sbm_backend cli_backend_resolve(cli_backend backend)
{
    if (backend == CLI_BACKEND_CUDA || (backend == CLI_BACKEND_AUTO && sbm_cuda_device_count() > 0))
        return SBM_BACKEND_CUDA;
    return SBM_BACKEND_CPU;
}

int cli_make_context(cli_backend backend, sbm_ctx **ctx)
{
    const sbm_backend b = cli_backend_resolve(backend);
    if (sbm_ctx_create(ctx, b, 0) != SBM_SUCCESS) {
        cli_lib_error(NULL, b == SBM_BACKEND_CUDA ? "--backend cuda" : NULL);
        if (b == SBM_BACKEND_CUDA)
            fprintf(stderr, "sbm: --backend auto runs on the GPU when there is one, else on the CPU\n");
        return EXIT_FAILURE;
    }
    return cli_apply_threads(*ctx);
}

int cli_threads = 0;

int cli_take_threads(int *argc, char **argv, const char *usage)
{
    int out = 0;
    for (int i = 0; i < *argc; i++) {
        const char *v = NULL;
        int skip = 1;
        if (strcmp(argv[i], "--threads") == 0) {
            if (i + 1 >= *argc) return cli_usage_error(usage, "option %s needs a value", "--threads");
            v = argv[i + 1], skip = 2;
        } else if (strncmp(argv[i], "--threads=", 10) == 0) {
            v = argv[i] + 10;
        } else {
            argv[out++] = argv[i];
            continue;
        }
        int64_t n;
        if (!cli_parse_int64(v, 1, 64, &n))
            return cli_usage_error(usage, "invalid thread count '%s' (--threads: 1 to 64)", v);
        cli_threads = (int)n;
        i += skip - 1;
    }
    *argc = out;
    argv[out] = NULL;
    return 0;
}

int cli_apply_threads(sbm_ctx *ctx)
{
    if (cli_threads <= 0) return 0;
    sbm_tuning t;
    if (sbm_ctx_get_tuning(ctx, &t) != SBM_SUCCESS) return cli_lib_error(ctx, "--threads");
    t.num_threads = cli_threads;
    if (sbm_ctx_set_tuning(ctx, &t) != SBM_SUCCESS) return cli_lib_error(ctx, "--threads");
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
/* Time                                                                                     */
/* ---------------------------------------------------------------------------------------- */

double cli_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
