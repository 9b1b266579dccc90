/* Helpers shared by the commands of the sbm command-line tool; see cli_common.h. */
#include "cli_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
