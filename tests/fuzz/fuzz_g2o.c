/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: the g2o reader. An accepted graph must have edge endpoints in range; chi2
 * and (for small graphs) the SLAM system and its linearisation must run without a crash. A file
 * refused for indefinite information matrices is read again with the repair option. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sbm_ctx *ctx = fuzz_ctx();
    sbm_g2o_graph *g = NULL;
    const char *path = fuzz_file(data, size);
    sbm_status st = sbm_g2o_read(ctx, path, &g);
    fuzz_expect_message(ctx, st, "sbm_g2o_read");
    if (st == SBM_ERR_PARSE && strstr(sbm_ctx_last_error(ctx), "not positive semidefinite")) {
        /* refused for its information matrices only: the repair must read it and count them */
        sbm_g2o_read_options o = sbm_g2o_read_default_options();
        o.information = SBM_G2O_INFORMATION_REPAIR;
        st = sbm_g2o_read_ex(ctx, path, &o, &g);
        fuzz_expect_message(ctx, st, "sbm_g2o_read_ex");
        if (st == SBM_SUCCESS && sbm_g2o_get_info(g).repaired_information < 1) __builtin_trap();
    }
    if (st != SBM_SUCCESS) {
        if (g) __builtin_trap();
        return 0;
    }
    sbm_g2o_info i = sbm_g2o_get_info(g);
    for (int64_t k = 0; k < i.edges; k++)
        if (i.edge_from[k] < 0 || i.edge_from[k] >= i.vertices || i.edge_to[k] < 0 ||
            i.edge_to[k] >= i.vertices)
            __builtin_trap();
    double chi2;
    st = sbm_g2o_chi2(ctx, g, &chi2);
    fuzz_expect_message(ctx, st, "sbm_g2o_chi2");
    if (i.vertices <= 512 && i.edges <= 2048) {
        sbm_slam_system *s = NULL;
        st = sbm_slam_system_create(ctx, g, &s);
        fuzz_expect_message(ctx, st, "sbm_slam_system_create");
        if (st == SBM_SUCCESS) {
            st = sbm_slam_linearize(ctx, s, g);
            fuzz_expect_message(ctx, st, "sbm_slam_linearize");
        }
        sbm_slam_system_destroy(s);
    }
    sbm_g2o_destroy(g);
    return 0;
}
