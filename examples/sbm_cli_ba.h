/* SPDX-License-Identifier: BSD-3-Clause */
/* Bundle adjustment and SLAM commands of the sbm command-line tool (examples/sbm_cli_ba.c,
 * examples/sbm_cli_slam.c).
 *
 * Each function takes the arguments after the command name (argv[0] is the first option) and
 * returns the process exit status: 0 success, 1 the library or a file failed (message on
 * stderr, no output file left behind), 2 the command line is wrong (message and usage on
 * stderr). "--help" prints the usage on stdout and returns 0. */
#ifndef SBM_CLI_BA_H
#define SBM_CLI_BA_H

/* sbm ba-schur --bal FILE [--backend cpu|cuda|auto] -o S.mtx [--rhs rhs.txt] */
int sbm_cli_ba_schur(int argc, char **argv);
/* sbm ba-solve (--bal FILE | --generate C,P,K[,SEED]) [--backend] [--iterations N] ... */
int sbm_cli_ba_solve(int argc, char **argv);
/* sbm slam-info --g2o FILE [--backend] -o L.mtx [--rhs b.txt] */
int sbm_cli_slam_info(int argc, char **argv);
/* sbm slam-solve --g2o FILE [--backend] [--iterations N] ... */
int sbm_cli_slam_solve(int argc, char **argv);
/* sbm bal-generate --cameras N --points N [--obs-per-point K] [--seed S] -o FILE */
int sbm_cli_bal_generate(int argc, char **argv);

/* One line per command for the main usage text. */
#define SBM_CLI_BA_COMMANDS                                                                  \
    "  ba-schur      reduced camera system S of a BAL problem, as Matrix Market\n"           \
    "  ba-solve      Levenberg-Marquardt bundle adjustment of a BAL problem\n"               \
    "  slam-info     information matrix of a g2o pose graph, as Matrix Market\n"             \
    "  slam-solve    Levenberg-Marquardt (or Gauss-Newton) on a g2o pose graph\n"                                     \
    "  bal-generate  write a seeded synthetic BAL problem\n"

#endif /* SBM_CLI_BA_H */
