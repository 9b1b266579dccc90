/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the commands of the sbm command-line tool (sbm_cli.c, sbm_cli_ba.c).
 * Public API only. */
#ifndef SBM_CLI_COMMON_H
#define SBM_CLI_COMMON_H

#include <stdint.h>
#include <stdio.h>

#include "sbm.h"
#include "sbm_ba.h"
#include "sbm_io.h"
#include "sbm_slam.h"
#include "sbm_solve.h"

/* Exit status of a wrong command line. */
#define EXIT_USAGE 2

/* Prints "sbm: " fmt (with arg) and the usage text on stderr. @return EXIT_USAGE. */
int cli_usage_error(const char *usage, const char *fmt, const char *arg);
/* The same with the command's name first: "sbm: cmd: " fmt. @return EXIT_USAGE. */
int cli_command_error(const char *usage, const char *cmd, const char *fmt, const char *arg);

/* Prints the library's message for a failed call ("sbm: context: message"; context may be
 * NULL) on stderr. @return EXIT_FAILURE. */
int cli_lib_error(const sbm_ctx *ctx, const char *context);

/* Matches argv[*i] against "--name" and "--name=value". For options with a value, *value is
 * set from the "=value" part or the next argument (advancing *i).
 * @return 1 matched, 0 not, -1 value missing. */
int cli_match_option(int argc, char **argv, int *i, const char *name, int has_value,
                     const char **value);

/* ---- outputs and the report ------------------------------------------------------------ */

/* The output files of a command (NULL: none given). Two naming the same file (the same name,
 * or two names of one existing file) are refused; an output "-" (the standard output, which
 * the library writes in place) sends the command's report lines to stderr, so that stdout
 * holds the file alone. @return NULL, or the message with '%s' for the path at fault. */
const char *cli_outputs(const char *a, const char *b);
/* Before any work: the folder an output file would go to exists and can be written (the file
 * itself is written at the end, after a solve that may take long). Prints "sbm: cannot write
 * 'PATH': ..." naming the folder. @return 0, or EXIT_FAILURE. NULL and "-" pass. */
int cli_output_folder_error(const char *path);
/* Where the report lines go: stdout, or stderr after cli_outputs saw "-". */
FILE *cli_report(void);
/* printf to cli_report(). */
int cli_printf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* The file an input argument names: "-" is the standard input (read through /dev/stdin, so
 * plain, gzip and bzip2 data all work from a pipe). */
const char *cli_input(const char *path);

/* A host (CPU) context and the Matrix Market coordinate file at path read into it.
 * @return 0 or EXIT_FAILURE (reported); the caller destroys *A and *host either way. */
int cli_open_matrix(const char *path, sbm_ctx **host, sbm_csr **A);

/* ---- numbers ----------------------------------------------------------------------------- */

/* A finite double (the whole string). @return 1 on success. */
int cli_parse_double(const char *s, double *out);
/* A decimal integer in [lo, hi] (the whole string, no sign). @return 1 on success. */
int cli_parse_int64(const char *s, int64_t lo, int64_t hi, int64_t *out);
/* A decimal integer in [0, 2^64-1] (the whole string, no sign). @return 1 on success. */
int cli_parse_u64(const char *s, uint64_t *out);

/* ---- backend ----------------------------------------------------------------------------- */

typedef enum cli_backend {
    CLI_BACKEND_CPU = 0,  /* host */
    CLI_BACKEND_CUDA = 1, /* device 0; fails without one */
    CLI_BACKEND_AUTO = 2  /* CUDA when a device is present, else CPU */
} cli_backend;

/* "cpu", "cuda" or "auto". @return 1 on success. */
int cli_parse_backend(const char *s, cli_backend *out);
/* The library backend of --backend (auto: CUDA when a device is present). */
sbm_backend cli_backend_resolve(cli_backend backend);
/* The compute context of --backend. @return 0, or EXIT_FAILURE after printing the library's
 * message. */
int cli_make_context(cli_backend backend, sbm_ctx **ctx);
/* Threads of the CPU backend for every context the command makes (--threads N; 0: the library's
 * default, SBM_NUM_THREADS or the online cores). */
extern int cli_threads;
/* Remove "--threads N" (or "--threads=N") from argv, wherever it stands, into cli_threads.
 * @return 0, or the exit status of a usage error. */
int cli_take_threads(int *argc, char **argv, const char *usage);
/* Give ctx the --threads setting (its tuning's num_threads). @return 0 or an error's exit status. */
int cli_apply_threads(sbm_ctx *ctx);
/* "cpu" or "cuda". */
const char *cli_backend_name(const sbm_ctx *ctx);

/* ---- seeded values ----------------------------------------------------------------------- */

/* Fills x[0..count) from seed: value k is 2*u_k - 1 with u_k the k-th (k = 0, 1, ...)
 * sbm_splitmix64_uniform from state = seed (SplitMix64, written out in sbm.h and in sbm spmv
 * --help). Every value is exact in double, so other languages reproduce x bit for bit. */
void cli_random_fill(uint64_t seed, double *x, int64_t count);

/* ---- time -------------------------------------------------------------------------------- */

/* Monotonic wall-clock seconds. */
double cli_seconds(void);

#endif /* SBM_CLI_COMMON_H */
