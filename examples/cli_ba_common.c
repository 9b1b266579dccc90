/* SPDX-License-Identifier: BSD-3-Clause */
/* Options, inputs and report lines shared by the BA and SLAM commands of the sbm CLI
 * (cli_ba_common.h). Public API only. */
#define _POSIX_C_SOURCE 200809L

#include "cli_ba_common.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------------------- */
/* Options                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static const struct {
    const char *name;
    unsigned group;
} options[] = {
    {"--backend", OPT_BACKEND},       {"--bal", OPT_BAL},
    {"--g2o", OPT_G2O},               {"--generate", OPT_GENERATE},
    {"--output", OPT_OUT},            {"-o", OPT_OUT},
    {"--rhs", OPT_RHS},               {"--iterations", OPT_SOLVER},
    {"--linear-solver", OPT_SOLVER},  {"--pcg-iterations", OPT_SOLVER},
    {"--pcg-tolerance", OPT_SOLVER},  {"--pcg-forcing", OPT_SOLVER},
    {"--cameras", OPT_GEN},
    {"--points", OPT_GEN},            {"--obs-per-point", OPT_GEN},
    {"--seed", OPT_GEN},              {"--noise", OPT_GEN},
    {"--perturbation", OPT_GEN},      {"--information", OPT_G2O},
    {"--method", OPT_METHOD},         {"--loss", OPT_SOLVER},
    {"--gpus", OPT_DIST},             {"--partition", OPT_DIST},
    {"--layout", OPT_GEN | OPT_GENERATE},
    {"--covariance", OPT_COV},
    {"--lambda", OPT_SOLVER},         {"--min-lambda", OPT_SOLVER},
};
#define N_OPTIONS (sizeof options / sizeof options[0])

const char *cli_ba_parse_loss(const char *v, sbm_loss *loss, const char **bad)
{
    static const struct {
        const char *name;
        sbm_loss_type type;
    } kinds[] = {{"huber", SBM_LOSS_HUBER}, {"cauchy", SBM_LOSS_CAUCHY}};
    *bad = v;
    if (!strcmp(v, "none")) {
        loss->type = SBM_LOSS_NONE, loss->scale = 1.0;
        return NULL;
    }
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        const size_t n = strlen(kinds[k].name);
        if (strncmp(v, kinds[k].name, n) != 0 || (v[n] != ':' && v[n] != '\0')) continue;
        if (v[n] == '\0') return "--loss: '%s' needs a scale: huber:A or cauchy:A with A > 0";
        double a;
        *bad = v + n + 1;
        if (!cli_parse_double(*bad, &a) || !(a > 0.0))
            return "--loss: scale '%s' must be a finite number > 0";
        if (a < SBM_LOSS_SCALE_MIN || a > SBM_LOSS_SCALE_MAX)
            return "--loss: scale '%s' is not from " CLI_LOSS_SCALE_RANGE;
        loss->type = kinds[k].type, loss->scale = a;
        return NULL;
    }
    return "--loss: '%s' is not none, huber:A or cauchy:A";
}

void cli_ba_loss_text(sbm_loss loss, char *buf, size_t size)
{
    if (loss.type == SBM_LOSS_NONE) {
        snprintf(buf, size, "none");
        return;
    }
    /* the fewest digits that read back as the scale (17 always do) */
    for (int digits = 6; digits <= 17; digits++) {
        const int len = snprintf(buf, size, "%s:%.*g", sbm_loss_name(loss.type), digits,
                                 loss.scale);
        if (len < 0 || (size_t)len >= size || strtod(strchr(buf, ':') + 1, NULL) == loss.scale)
            return;
    }
}

/* The value v of option name into o. @return NULL, or the message (with '%s' for *bad: v, or
 * the part of v at fault) of an invalid value. */
static const char *cli_ba_set_option(cli_opts *o, const char *name, const char *v, unsigned mask,
                                     const char **bad)
{
    double x;
    int64_t n;
    *bad = v;
    if (!strcmp(name, "--loss")) return cli_ba_parse_loss(v, &o->loss, bad);
    if (!strcmp(name, "--backend"))
        return cli_parse_backend(v, &o->backend) ? NULL
                                                  : "unknown backend '%s' (cpu, cuda or auto)";
    if (!strcmp(name, "--bal")) o->bal = v;
    else if (!strcmp(name, "--g2o")) o->g2o = v;
    else if (!strcmp(name, "--information")) {
        if (!strcmp(v, "refuse")) o->information = SBM_G2O_INFORMATION_REFUSE;
        else if (!strcmp(v, "repair")) o->information = SBM_G2O_INFORMATION_REPAIR;
        else return "unknown information mode '%s' (refuse or repair)";
    }
    else if (!strcmp(name, "--generate")) o->generate = v;
    else if (!strcmp(name, "--output") || !strcmp(name, "-o")) o->out = v;
    else if (!strcmp(name, "--rhs")) o->rhs = v;
    else if (!strcmp(name, "--covariance")) o->cov = v;
    else if (!strcmp(name, "--iterations")) {
        if (!cli_parse_int64(v, 0, 100000, &n)) return "invalid iteration count '%s' (0 to 100000)";
        o->iterations = (int)n;
    } else if (!strcmp(name, "--linear-solver")) {
        if (!strcmp(v, "auto")) o->linear_solver = SBM_LINEAR_AUTO;
        else if (!strcmp(v, "dense")) o->linear_solver = SBM_LINEAR_DENSE_CHOLESKY;
        else if (!strcmp(v, "pcg")) o->linear_solver = SBM_LINEAR_PCG;
        else if (!strcmp(v, "pcg-matrix-free") && (mask & OPT_GENERATE))
            o->linear_solver = SBM_LINEAR_PCG_MATRIX_FREE;
        else if (!strcmp(v, "sparse") && (mask & (OPT_GENERATE | OPT_METHOD)))
            o->linear_solver = SBM_LINEAR_SPARSE_CHOLESKY;
        else if (mask & OPT_GENERATE)
            return "unknown linear solver '%s' (auto, dense, sparse, pcg, pcg-matrix-free)";
        else
            return "unknown linear solver '%s' (auto, sparse, dense, pcg)";
    } else if (!strcmp(name, "--method")) {
        if (!strcmp(v, "lm")) o->method = SBM_METHOD_LEVENBERG_MARQUARDT;
        else if (!strcmp(v, "gn")) o->method = SBM_METHOD_GAUSS_NEWTON;
        else return "unknown method '%s' (lm or gn)";
    } else if (!strcmp(name, "--pcg-iterations")) {
        if (!cli_parse_int64(v, 1, 10000000, &n))
            return "invalid PCG iteration count '%s' (1 to 10000000)";
        o->pcg_iterations = (int)n;
    } else if (!strcmp(name, "--pcg-tolerance")) {
        if (!cli_parse_double(v, &x) || !(x > 0.0) || !(x < 1.0))
            return "invalid PCG tolerance '%s' (between 0 and 1)";
        o->pcg_tolerance = x;
    } else if (!strcmp(name, "--layout")) {
        if (!strcmp(v, "sphere")) o->layout = SBM_BAL_LAYOUT_SPHERE;
        else if (!strcmp(v, "trajectory")) o->layout = SBM_BAL_LAYOUT_TRAJECTORY;
        else return "unknown layout '%s' (sphere or trajectory)";
    } else if (!strcmp(name, "--gpus")) {
        if (!cli_parse_int64(v, 1, 1024, &n)) return "invalid rank count '%s' (1 to 1024)";
        o->gpus = (int)n;
    } else if (!strcmp(name, "--partition")) {
        if (!strcmp(v, "graph")) o->partition = SBM_PARTITION_GRAPH;
        else if (!strcmp(v, "index")) o->partition = SBM_PARTITION_INDEX;
        else return "unknown partition '%s' (graph or index)";
    } else if (!strcmp(name, "--pcg-forcing")) {
        if (!strcmp(v, "fixed")) {
            o->pcg_forcing = SBM_PCG_FORCING_FIXED;
        } else if (!strncmp(v, "ew", 2) && (v[2] == '\0' || v[2] == ':')) {
            o->pcg_forcing = SBM_PCG_FORCING_EISENSTAT_WALKER;
            if (v[2] == ':' && (!cli_parse_double(v + 3, &x) || !(x > 0.0) || !(x < 1.0)))
                return "invalid PCG forcing '%s' (fixed, ew or ew:ETA_MAX with ETA_MAX between "
                       "0 and 1)";
            if (v[2] == ':') o->pcg_forcing_max = x;
        } else {
            return "invalid PCG forcing '%s' (fixed, ew or ew:ETA_MAX with ETA_MAX between 0 "
                   "and 1)";
        }
    } else if (!strcmp(name, "--lambda") || !strcmp(name, "--min-lambda")) {
        if (!cli_parse_double(v, &x) || !(x >= 0.0))
            return "invalid damping '%s' (a finite number >= 0)";
        *(name[2] == 'l' ? &o->lambda : &o->min_lambda) = x;
    } else if (!strcmp(name, "--noise") || !strcmp(name, "--perturbation")) {
        if (!cli_parse_double(v, &x) || x < 0.0) return "invalid value '%s' (a number >= 0)";
        *(name[2] == 'n' ? &o->noise : &o->perturbation) = x;
    } else { /* the counts of bal-generate */
        const int is_seed = !strcmp(name, "--seed");
        if (!cli_parse_int64(v, is_seed ? 0 : 1, is_seed ? INT64_MAX : INT32_MAX, &n))
            return "invalid count '%s'";
        *(is_seed ? &o->seed : !strcmp(name, "--cameras") ? &o->cameras
                             : !strcmp(name, "--points")  ? &o->points
                                                          : &o->obs) = n;
    }
    return NULL;
}

/* Parse the options a command accepts (mask); --help prints its usage.
 * @return -1 to run the command, else the exit status. */
int cli_ba_parse(int argc, char **argv, unsigned mask, const char *cmd, const char *usage,
                 cli_opts *o)
{
    memset(o, 0, sizeof *o);
    o->backend = CLI_BACKEND_CPU;
    o->iterations = -1;
    o->linear_solver = -1;
    o->method = -1;
    o->pcg_iterations = -1;
    o->pcg_forcing = -1;
    o->lambda = o->min_lambda = -1.0;
    o->obs = 4;
    o->seed = 1;
    o->noise = 0.5;
    o->perturbation = 1.0;
    o->loss.type = SBM_LOSS_NONE;
    o->loss.scale = 1.0;
    unsigned char seen[N_OPTIONS] = {0};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        }
        int m = 0;
        size_t k = 0;
        while (k < N_OPTIONS &&
               (!(mask & options[k].group) ||
                (m = cli_match_option(argc, argv, &i, options[k].name, 1, &v)) == 0))
            k++;
        if (k == N_OPTIONS && (a[0] != '-' || a[1] == '\0') && (mask & (OPT_BAL | OPT_G2O)) &&
            !(o->bal || o->g2o)) {
            /* the input file as a plain argument: "ba-solve FILE", "slam-solve FILE" */
            v = a;
            const char *input = (mask & OPT_BAL) ? "--bal" : "--g2o";
            for (k = 0; strcmp(options[k].name, input) != 0; k++) continue;
        } else if (k == N_OPTIONS) {
            return cli_command_error(usage, cmd, a[0] == '-' ? "unknown option '%s'"
                                                             : "unexpected argument '%s'", a);
        }
        if (m < 0) return cli_command_error(usage, cmd, "option %s needs a value", a);
        /* "-o" and "--output" are one option */
        size_t slot = k;
        if (strcmp(options[k].name, "-o") == 0)
            for (slot = 0; strcmp(options[slot].name, "--output") != 0; slot++) continue;
        if (seen[slot]++) {
            const char *given = options[slot].name;
            if (!strcmp(given, "--bal") || !strcmp(given, "--g2o"))
                return cli_command_error(usage, cmd, "%s: one input file only", given);
            return cli_command_error(usage, cmd, "option %s given twice", given);
        }
        const char *at = v;
        const char *bad = cli_ba_set_option(o, options[k].name, v, mask, &at);
        if (bad) return cli_command_error(usage, cmd, bad, at);
    }
    const char *same = cli_outputs(o->out, o->rhs);
    if (same) return cli_command_error(usage, cmd, same, o->rhs);
    same = cli_outputs(o->out, o->cov);
    if (same) return cli_command_error(usage, cmd, same, o->cov);
    if (cli_output_folder_error(o->out) || cli_output_folder_error(o->rhs) ||
        cli_output_folder_error(o->cov))
        return EXIT_FAILURE;
    return -1;
}

/* ---------------------------------------------------------------------------------------- */
/* Helpers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

void cli_ba_solver_options(const cli_opts *o, sbm_solver_options *so)
{
    if (o->iterations >= 0) so->max_iterations = o->iterations;
    if (o->linear_solver >= 0) so->linear_solver = (sbm_linear_solver)o->linear_solver;
    if (o->method >= 0) so->method = (sbm_solver_method)o->method;
    if (o->pcg_iterations > 0) so->pcg_max_iterations = o->pcg_iterations;
    if (o->pcg_tolerance > 0) so->pcg_tolerance = o->pcg_tolerance;
    if (o->pcg_forcing >= 0) so->pcg_forcing = (sbm_pcg_forcing)o->pcg_forcing;
    if (o->pcg_forcing_max > 0) so->pcg_forcing_max = o->pcg_forcing_max;
    if (o->lambda >= 0) so->initial_lambda = o->lambda;
    if (o->min_lambda >= 0) so->min_lambda = o->min_lambda;
    so->loss = o->loss;
}

/* "sbm: cmd: needs what" and the usage. @return EXIT_USAGE. */
int cli_ba_needs(const char *usage, const char *cmd, const char *what)
{
    return cli_command_error(usage, cmd, "needs %s", what);
}

/* The host context, the input (--bal, gen when not NULL, or --g2o) and the compute context.
 * @return 0 or EXIT_FAILURE (reported); cmd_close releases c either way. */
int cli_ba_open(const cli_opts *o, const sbm_bal_generate_options *gen, ba_cmd *c)
{
    memset(c, 0, sizeof *c);
    if (sbm_ctx_create(&c->host, SBM_BACKEND_CPU, 0) != SBM_SUCCESS)
        return cli_lib_error(NULL, NULL);
    if (cli_apply_threads(c->host)) return EXIT_FAILURE;
    sbm_status st = SBM_SUCCESS;
    if (o->bal)
        st = sbm_bal_read(c->host, cli_input(o->bal), &c->p);
    else if (gen)
        st = sbm_bal_generate(c->host, gen, &c->p);
    else if (o->g2o) {
        sbm_g2o_read_options ro = sbm_g2o_read_default_options();
        ro.information = o->information;
        st = sbm_g2o_read_ex(c->host, cli_input(o->g2o), &ro, &c->g);
        const int64_t repaired = sbm_g2o_get_info(c->g).repaired_information;
        if (repaired > 0)
            fprintf(stderr, "sbm: %s: repaired %lld information matrices (nearest positive "
                            "semidefinite)\n", o->g2o, (long long)repaired);
    }
    if (st != SBM_SUCCESS)
        return cli_lib_error(c->host, o->generate ? "--generate"
                                      : gen      ? "bal-generate"
                                                 : NULL);
    return cli_make_context(o->backend, &c->ctx);
}

void cli_ba_close(ba_cmd *c)
{
    sbm_bal_destroy(c->p);
    sbm_g2o_destroy(c->g);
    sbm_ctx_destroy(c->ctx);
    sbm_ctx_destroy(c->host);
}

/* The full symmetric scalar form *C of an upper-stored block matrix (host). */
static int cli_ba_symmetric_csr(sbm_ctx *host, const sbm_cbc *A, sbm_csr **C)
{
    sbm_cbc_info ai = sbm_cbc_get_info(A);
    const int64_t n = ai.nbr * ai.r;
    const int64_t bs = (int64_t)ai.r * ai.c;
    int64_t cap = 2 * ai.nnzb * bs + 1;
    int32_t *ri = malloc((size_t)cap * sizeof(int32_t)), *ci = malloc((size_t)cap * sizeof(int32_t));
    double *v = malloc((size_t)cap * sizeof(double));
    int rc = EXIT_FAILURE;
    if (!ri || !ci || !v) {
        fprintf(stderr, "sbm: out of memory for %lld entries\n", (long long)cap);
        goto done;
    }
    int64_t t = 0;
    for (int64_t j = 0; j < ai.nbc; j++)
        for (int64_t k = ai.colptr[j]; k < ai.colptr[j + 1]; k++) {
            const int64_t i = ai.rowind[k];
            const double *b = ai.values + k * bs;
            /* the upper triangle defines the matrix: inside a diagonal block too (its two
             * triangles agree only to rounding), so the file is exactly symmetric */
            for (int c = 0; c < ai.c; c++)
                for (int r = 0; r < ai.r; r++) {
                    if (i == j && r > c) continue;
                    const int32_t row = (int32_t)(i * ai.r + r), col = (int32_t)(j * ai.c + c);
                    ri[t] = row, ci[t] = col, v[t] = b[r + c * ai.r], t++;
                    if (row != col) ri[t] = col, ci[t] = row, v[t] = b[r + c * ai.r], t++;
                }
        }
    if (sbm_csr_from_triplets(host, C, n, n, t, ri, ci, v) != SBM_SUCCESS) {
        cli_lib_error(host, NULL);
        goto done;
    }
    rc = 0;
done:
    free(ri), free(ci), free(v);
    return rc;
}

void cli_ba_warn_unconstrained(const sbm_bal_problem *p, const char *name)
{
    const sbm_bal_info pi = sbm_bal_get_info(p);
    int64_t *seen = calloc((size_t)(pi.cameras + pi.points + 1), sizeof(int64_t));
    if (!seen) return; /* warnings only */
    for (int64_t k = 0; k < pi.observations; k++)
        seen[pi.obs_camera[k]]++, seen[pi.cameras + pi.obs_point[k]]++;
    int64_t ncam = 0, npt = 0, cam = -1, pt = -1;
    for (int64_t c = 0; c < pi.cameras; c++)
        if (seen[c] == 0 && ncam++ == 0) cam = c;
    for (int64_t j = 0; j < pi.points; j++)
        if (seen[pi.cameras + j] < 2 && npt++ == 0) pt = j;
    if (ncam > 0)
        fprintf(stderr, "sbm: warning: %s: camera %lld (and %lld more) has no observation: no "
                        "residual constrains its 9 parameters\n",
                name, (long long)cam, (long long)(ncam - 1));
    if (npt > 0)
        fprintf(stderr, "sbm: warning: %s: point %lld (and %lld more) is seen by %lld camera%s: "
                        "its 3 coordinates are not determined (its depth is free)\n",
                name, (long long)pt, (long long)(npt - 1), (long long)seen[pi.cameras + pt],
                seen[pi.cameras + pt] == 1 ? "" : "s");
    const int64_t nres = 2 * pi.observations, npar = 9 * pi.cameras + 3 * pi.points;
    if (nres < npar)
        fprintf(stderr, "sbm: warning: %s: %lld residuals for %lld parameters: the problem is "
                        "underdetermined; the solve finds one of many minima\n",
                name, (long long)nres, (long long)npar);
    free(seen);
}

/* The symmetric matrix A to out and, with vec_path, the vector x (n values, one per line)
 * beside it, each through the library's atomic writer, so that either both files appear or
 * neither does: everything that can fail but I/O is done first, then the vector is written (a
 * failing --rhs leaves -o untouched), then the matrix; should that write fail, the new vector
 * is removed (an older file at --rhs is then gone: the price of two files without a shared
 * commit). */
int cli_ba_write_system(sbm_ctx *host, const sbm_cbc *A, const char *out, const char *vec_path,
                        const double *x, int64_t n)
{
    sbm_csr *C = NULL;
    int rc = EXIT_FAILURE;
    if (cli_ba_symmetric_csr(host, A, &C) != 0) goto done;
    if (vec_path && sbm_dense_write_txt(host, vec_path, n, x) != SBM_SUCCESS) {
        cli_lib_error(host, NULL);
        goto done;
    }
    if (sbm_csr_write_mtx(host, out, C) != SBM_SUCCESS) {
        cli_lib_error(host, NULL);
        /* only the regular file just written; a device, FIFO or link stays */
        struct stat sb;
        if (vec_path && lstat(vec_path, &sb) == 0 && S_ISREG(sb.st_mode)) unlink(vec_path);
        goto done;
    }
    rc = 0;
done:
    sbm_csr_destroy(C);
    return rc;
}

int cli_ba_write_block_diagonal(sbm_ctx *host, const char *path, int64_t nblocks, int d,
                                const double *blocks)
{
    const int64_t n = nblocks * d;
    int64_t *rowptr = malloc((size_t)(n + 1) * sizeof(int64_t));
    int32_t *colind = malloc((size_t)(n * d + 1) * sizeof(int32_t));
    double *values = malloc((size_t)(n * d + 1) * sizeof(double));
    sbm_csr *C = NULL;
    int rc = EXIT_FAILURE;
    if (!rowptr || !colind || !values) {
        fprintf(stderr, "sbm: out of memory\n");
        goto done;
    }
    rowptr[0] = 0;
    for (int64_t i = 0; i < n; i++) { /* row i: the d columns of its block */
        const int64_t v = i / d, r = i % d;
        for (int c = 0; c < d; c++) {
            colind[i * d + c] = (int32_t)(v * d + c);
            values[i * d + c] = blocks[v * d * d + c * d + r];
        }
        rowptr[i + 1] = (i + 1) * d;
    }
    if (sbm_csr_create(host, &C, n, n, rowptr, colind, values) != SBM_SUCCESS ||
        sbm_csr_write_mtx_symmetric(host, path, C) != SBM_SUCCESS) {
        cli_lib_error(host, NULL);
        goto done;
    }
    rc = 0;
done:
    sbm_csr_destroy(C);
    free(rowptr);
    free(colind);
    free(values);
    return rc;
}

/* The solvers' time line (system: "Schur" or "Lambda") and stop line (none: what
 * SBM_STOP_NONE means for the command). */
void cli_ba_print_times(const sbm_solver_summary *s, const char *system)
{
    const double tot = s->time_total > 0 ? s->time_total : 1e-300;
    cli_printf("time %.3f s: linearize %.3f s (%.0f%%), %s %.3f s (%.0f%%), solve %.3f s (%.0f%%), "
               "update %.3f s (%.0f%%)\n",
               s->time_total, s->time_linearize, 100 * s->time_linearize / tot, system,
               s->time_schur, 100 * s->time_schur / tot, s->time_solve, 100 * s->time_solve / tot,
               s->time_update, 100 * s->time_update / tot);
}

void cli_ba_print_stop(const sbm_solver_summary *s, const char *none)
{
    if (sbm_stop_reason_converged(s->stop_reason))
        cli_printf("converged (%s)\n", sbm_stop_reason_name(s->stop_reason));
    else if (s->stop_reason == SBM_STOP_NONE)
        cli_printf("nothing to optimise (%s)\n", none);
    else
        cli_printf("NOT converged: %s\n", sbm_stop_reason_name(s->stop_reason));
}
