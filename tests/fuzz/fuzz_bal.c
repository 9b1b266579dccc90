/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: the BAL reader (plain text, and bzip2 when the bytes start with "BZh"). An
 * accepted problem must have indices in range, and its normal-equation patterns must build. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sbm_ctx *ctx = fuzz_ctx();
    sbm_bal_problem *p = NULL;
    sbm_status st = sbm_bal_read(ctx, fuzz_file(data, size), &p);
    fuzz_expect_message(ctx, st, "sbm_bal_read");
    if (st != SBM_SUCCESS) {
        if (p) __builtin_trap();
        return 0;
    }
    sbm_bal_info i = sbm_bal_get_info(p);
    for (int64_t k = 0; k < i.observations; k++)
        if (i.obs_camera[k] < 0 || i.obs_camera[k] >= i.cameras || i.obs_point[k] < 0 ||
            i.obs_point[k] >= i.points)
            __builtin_trap();
    double cost;
    st = sbm_bal_evaluate(ctx, p, NULL, &cost);
    fuzz_expect_message(ctx, st, "sbm_bal_evaluate");
    /* keep the system small enough for a fuzzing iteration */
    if (i.cameras <= 64 && i.points <= 256) {
        sbm_ba_system *s = NULL;
        st = sbm_ba_system_create(ctx, p, &s);
        fuzz_expect_message(ctx, st, "sbm_ba_system_create");
        if (st == SBM_SUCCESS) {
            st = sbm_ba_linearize(ctx, s, p);
            fuzz_expect_message(ctx, st, "sbm_ba_linearize");
        }
        sbm_ba_system_destroy(s);
    }
    sbm_bal_destroy(p);
    return 0;
}
