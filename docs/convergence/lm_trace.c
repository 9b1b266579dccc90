// SPDX-License-Identifier: BSD-3-Clause
/* Per-iteration cost trace of sbm_slam_solve / sbm_ba_solve (docs/CONVERGENCE.md):
 *   lm_trace slam|ba FILE [initial_lambda [min_lambda [lm|gn [max_iterations]]]]
 * prints "iteration cost_before cost lambda accepted" (%.17g) and a summary line. Build it
 * against a build tree (see docs/CONVERGENCE.md); -DHAVE_MIN for a tree with min_lambda. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sbm.h"
#include "sbm_io.h"
#include "sbm_ba.h"
#include "sbm_slam.h"
static void cb(void *u, const sbm_iteration_report *r)
{
    (void)u;
    printf("%d %.17g %.17g %.6e %d\n", r->iteration, r->cost_before, r->cost, r->lambda, r->accepted);
}
int main(int argc, char **argv)
{
    sbm_ctx *ctx;
    if (sbm_ctx_create(&ctx, SBM_BACKEND_CPU, 0)) return 2;
    sbm_solver_options o = sbm_solver_default_options();
    o.callback = cb;
    if (argc > 3) o.initial_lambda = atof(argv[3]);
#ifdef HAVE_MIN
    if (argc > 4) o.min_lambda = atof(argv[4]);
#endif
    if (argc > 5 && !strcmp(argv[5], "gn")) o.method = SBM_METHOD_GAUSS_NEWTON;
    if (argc > 6) o.max_iterations = atoi(argv[6]);
    sbm_solver_summary s;
    sbm_status st;
    if (!strcmp(argv[1], "slam")) {
        sbm_g2o_graph *g;
        if (sbm_g2o_read(ctx, argv[2], &g)) { fprintf(stderr, "%s\n", sbm_ctx_last_error(ctx)); return 2; }
        st = sbm_slam_solve(ctx, g, &o, &s);
        sbm_g2o_destroy(g);
    } else {
        sbm_bal_problem *p;
        if (sbm_bal_read(ctx, argv[2], &p)) return 2;
        st = sbm_ba_solve(ctx, p, &o, &s);
        sbm_bal_destroy(p);
    }
    printf("# status %d stop %s iterations %d final %.17g time %.3f\n", (int)st, sbm_stop_reason_name(s.stop_reason), s.iterations, s.final_cost, s.time_total);
    sbm_ctx_destroy(ctx);
    return 0;
}
