/* Small pose graphs for the SLAM solver suites (test_solver_control.c, test_slam_lm.c): a
 * graph from g2o text through sbm_g2o_read, and a seeded noisy 2D loop. Header-only (static
 * functions); include after solver_reference.h's dependencies. */
#ifndef SBM_TEST_SLAM_GRAPHS_H
#define SBM_TEST_SLAM_GRAPHS_H

#include "solver_reference.h"
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static sbm_g2o_graph *g2o_from_text(sbm_test_env *e, const char *name, const char *text)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s.g2o", sbm_test_tmp_dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    sbm_g2o_graph *g = NULL;
    SBM_ASSERT_OK(e->ctx, sbm_g2o_read(e->ctx, path, &g));
    return g;
}

/* A seeded 2D loop: 24 poses on a circle, odometry and chords to the pose 5 ahead, exact
 * measurements plus a little noise, the start perturbed by up to 0.8 m and 0.9 rad. */
static sbm_g2o_graph *noisy_se2_loop(sbm_test_env *e, uint64_t seed, double ts, double as)
{
    enum { N = 24 };
    sbm_test_rng rng = sbm_test_rng_seed(seed);
    double x[N][3];
    size_t cap = 64 * 1024, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (int i = 0; i < N; i++) {
        const double a = 2.0 * 3.14159265358979323846 * i / N;
        x[i][0] = 10.0 * cos(a), x[i][1] = 10.0 * sin(a), x[i][2] = a + 1.5707963267948966;
        const double dx = i ? ts * sbm_test_rng_value(&rng) : 0.0;
        const double dy = i ? ts * sbm_test_rng_value(&rng) : 0.0;
        const double dt = i ? as * sbm_test_rng_value(&rng) : 0.0;
        len += (size_t)snprintf(text + len, cap - len, "VERTEX_SE2 %d %.17g %.17g %.17g\n", i,
                                x[i][0] + dx, x[i][1] + dy, x[i][2] + dt);
    }
    for (int i = 0; i < N; i++)
        for (int step = 1; step <= 5; step += 4) {
            const int j = (i + step) % N;
            double z[3];
            ref_se2_error(x[i], x[j], (const double[3]){0.0, 0.0, 0.0}, z);
            for (int a = 0; a < 3; a++) z[a] += 0.02 * sbm_test_rng_value(&rng);
            len += (size_t)snprintf(text + len, cap - len,
                                    "EDGE_SE2 %d %d %.17g %.17g %.17g 40 0 0 40 0 100\n", i, j,
                                    z[0], z[1], z[2]);
        }
    sbm_g2o_graph *g = g2o_from_text(e, "loop", text);
    free(text);
    return g;
}

#endif /* SBM_TEST_SLAM_GRAPHS_H */
