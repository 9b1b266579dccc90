/* SPDX-License-Identifier: BSD-3-Clause */
/* The multiply commands of the sbm command-line tool (examples/sbm_cli_mult.c).
 *
 * Each function takes the arguments after the command name and returns the process exit
 * status: 0 success, 1 the library or a file failed (message on stderr, no output file left
 * behind), 2 the command line is wrong (message and usage on stderr). "--help" prints the usage
 * on stdout and returns 0. */
#ifndef SBM_CLI_MULT_H
#define SBM_CLI_MULT_H

/* sbm spmv ... -o Y.mtx A.mtx: y = alpha*A*x + beta*y */
int sbm_cli_spmv(int argc, char **argv);
/* sbm spmm ... -o C.mtx A.mtx: C = alpha*A*B + beta*C */
int sbm_cli_spmm(int argc, char **argv);

#endif /* SBM_CLI_MULT_H */
