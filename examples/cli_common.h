/* Helpers shared by the commands of the sbm command-line tool (sbm_cli.c, sbm_cli_ba.c).
 * Public API only. --backend parsing stays with each command: gemm accepts cpu|cuda, the
 * BA/SLAM commands also auto, with different messages. */
#ifndef SBM_CLI_COMMON_H
#define SBM_CLI_COMMON_H

#include "sbm.h"

/* Exit status of a wrong command line. */
#define EXIT_USAGE 2

/* Prints "sbm: " fmt (with arg) and the usage text on stderr. @return EXIT_USAGE. */
int cli_usage_error(const char *usage, const char *fmt, const char *arg);

/* Prints the library's message for a failed call ("sbm: context: message"; context may be
 * NULL) on stderr. @return EXIT_FAILURE. */
int cli_lib_error(const sbm_ctx *ctx, const char *context);

/* Matches argv[*i] against "--name" and "--name=value". For options with a value, *value is
 * set from the "=value" part or the next argument (advancing *i).
 * @return 1 matched, 0 not, -1 value missing. */
int cli_match_option(int argc, char **argv, int *i, const char *name, int has_value,
                     const char **value);

#endif /* SBM_CLI_COMMON_H */
