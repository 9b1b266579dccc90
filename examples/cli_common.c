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

/* Levenshtein distance of a and b[0..bn), capped at 9 (longer words are never suggested). */
static int cli_distance(const char *a, const char *b, size_t bn)
{
    const size_t an = strlen(a);
    if (an > 40 || bn > 40) return 9;
    int row[41];
    for (size_t j = 0; j <= bn; j++) row[j] = (int)j;
    for (size_t i = 1; i <= an; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= bn; j++) {
            const int up = row[j];
            const int sub = diag + (a[i - 1] != b[j - 1]);
            const int del = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
            row[j] = sub < del ? sub : del;
            diag = up;
        }
    }
    return row[bn] < 9 ? row[bn] : 9;
}

/* The word of the usage text nearest to a wrong option or command (options: the "--name" words;
 * commands: the first word of an indented line), when it is near enough to be a typo. */
static void cli_suggest(const char *usage, const char *arg, int command)
{
    if (arg == NULL || arg[0] == '\0') return;
    const char *eq = strchr(arg, '=');
    char word[64];
    snprintf(word, sizeof word, "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
    const char *best = NULL;
    size_t best_len = 0;
    int best_d = 9;
    for (const char *p = usage; *p; p++) {
        const int start = command ? (p[0] == ' ' && p[1] == ' ' && p[2] >= 'a' && p[2] <= 'z' &&
                                     (p == usage || p[-1] == '\n'))
                                  : (p[0] == '-' && p[1] == '-' && p[2] >= 'a' && p[2] <= 'z' &&
                                     (p == usage || p[-1] == ' ' || p[-1] == '['));
        if (!start) continue;
        const char *w = command ? p + 2 : p;
        const size_t n = strspn(w, "abcdefghijklmnopqrstuvwxyz0123456789-");
        const int d = cli_distance(word, w, n);
        if (d < best_d) best = w, best_len = n, best_d = d;
    }
    const int limit = strlen(word) < 6 ? 1 : 2;
    if (best && best_d > 0 && best_d <= limit)
        fprintf(stderr, " (did you mean '%.*s'?)", (int)best_len, best);
}

int cli_command_error(const char *usage, const char *cmd, const char *fmt, const char *arg)
{
    fprintf(stderr, "sbm: ");
    if (cmd) fprintf(stderr, "%s: ", cmd);
    fprintf(stderr, fmt, arg);
    if (strstr(fmt, "unknown option")) cli_suggest(usage, arg, 0);
    if (strstr(fmt, "unknown command")) cli_suggest(usage, arg, 1);
    /* the synopsis (the usage text up to its first blank line), not the whole help */
    const char *end = strstr(usage, "\n\n");
    const int len = end ? (int)(end - usage) + 1 : (int)strlen(usage);
    fprintf(stderr, "\n%.*s", len, usage);
    if (end) {
        /* the command the usage text is about: "usage: sbm CMD ..." */
        const char *c = strncmp(usage, "usage: sbm ", 11) == 0 ? usage + 11 : "";
        int clen = (int)strcspn(c, " \n");
        if (c[0] < 'a' || c[0] > 'z') clen = 0; /* the main usage: "sbm [--threads N] COMMAND" */
        fprintf(stderr, "Run 'sbm %.*s%s--help' for every option.\n", clen, c, clen ? " " : "");
    }
    return EXIT_USAGE;
}

int cli_usage_error(const char *usage, const char *fmt, const char *arg)
{
    return cli_command_error(usage, NULL, fmt, arg);
}

/* The library's messages name the C option a caller sets; the CLI user sets a command-line
 * option instead, so those names are shown as the options. */
static const struct {
    const char *c_name, *cli_option;
} c_names[] = {
    {"SBM_G2O_INFORMATION_REPAIR", "--information repair"},
    {"SBM_GEMM_UPPER", "--upper"},
};

int cli_lib_error(const sbm_ctx *ctx, const char *context)
{
    const char *msg = sbm_ctx_last_error(ctx);
    if (msg == NULL || msg[0] == '\0') msg = "unknown error";
    /* the library's message starts with the public calls that failed ("sbm_slam_solve:
     * sbm_chol_factor: "), a call chain the CLI user did not write: left out */
    for (;;) {
        const size_t n = strncmp(msg, "sbm_", 4) == 0
                             ? 4 + strspn(msg + 4, "abcdefghijklmnopqrstuvwxyz0123456789_")
                             : 0;
        if (n == 0 || msg[n] != ':' || msg[n + 1] != ' ') break;
        msg += n + 2;
    }
    fprintf(stderr, "sbm: ");
    if (context != NULL) fprintf(stderr, "%s: ", context);
    while (*msg) {
        size_t k = 0, n = 0;
        while (k < sizeof c_names / sizeof c_names[0] &&
               strncmp(msg, c_names[k].c_name, n = strlen(c_names[k].c_name)) != 0)
            k++;
        if (k < sizeof c_names / sizeof c_names[0]) {
            fputs(c_names[k].cli_option, stderr);
            msg += n;
        } else {
            fputc(*msg++, stderr);
        }
    }
    fputc('\n', stderr);
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

const char *cli_input(const char *path)
{
    return path && strcmp(path, "-") == 0 ? "/dev/stdin" : path;
}

int cli_open_matrix(const char *path, sbm_ctx **host, sbm_csr **A)
{
    if (sbm_ctx_create(host, SBM_BACKEND_CPU, 0) != SBM_SUCCESS) return cli_lib_error(NULL, NULL);
    if (cli_apply_threads(*host)) return EXIT_FAILURE;
    if (sbm_csr_read_mtx(*host, cli_input(path), A) != SBM_SUCCESS) return cli_lib_error(*host, NULL);
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
