/* SPDX-License-Identifier: BSD-3-Clause */
/* The CPU backend's threads: a range split into fixed contiguous pieces, one per thread.
 *
 * A kernel that writes each output from one piece, in a fixed order, gives the same bits
 * whatever the number of threads (the BA and SLAM linearisations: each thread owns whole
 * cameras, points or edges). The threads are created per call (a linearisation runs for
 * milliseconds; a thread costs tens of microseconds) and joined before the call returns.
 * The count is the context's: sbm_tuning.num_threads, else its default (SBM_NUM_THREADS at its
 * creation, else the online cores); 1 runs in the caller's thread. */
#include "cpu_backend.h"

#include <pthread.h>

typedef struct piece {
    sbm__cpu_range_fn fn;
    void *data;
    int64_t begin, end;
} piece;

static void *run_piece(void *arg)
{
    piece *p = arg;
    p->fn(p->data, p->begin, p->end);
    return NULL;
}

int sbm__cpu_threads(const sbm_ctx *ctx)
{
    const int t = ctx->tuning.num_threads > 0 ? ctx->tuning.num_threads : ctx->default_threads;
    return t < 1 ? 1 : t > SBM__MAX_THREADS ? SBM__MAX_THREADS : t;
}

void sbm__cpu_parallel_for(const sbm_ctx *ctx, int64_t n, int64_t min_per_thread,
                           sbm__cpu_range_fn fn, void *data)
{
    if (n <= 0) return;
    int t = sbm__cpu_threads(ctx);
    if (min_per_thread < 1 || ctx->fine_grain) min_per_thread = 1;
    if ((int64_t)t > n / min_per_thread) t = (int)(n / min_per_thread);
    if (t <= 1) {
        fn(data, 0, n);
        return;
    }
    piece pieces[SBM__MAX_THREADS];
    pthread_t tid[SBM__MAX_THREADS];
    int started[SBM__MAX_THREADS] = {0};
    for (int k = 0; k < t; k++) {
        pieces[k].fn = fn, pieces[k].data = data;
        pieces[k].begin = n * k / t, pieces[k].end = n * (k + 1) / t;
    }
    /* piece 0 runs in the caller's thread; a piece whose thread cannot start runs there too */
    for (int k = 1; k < t; k++) started[k] = pthread_create(&tid[k], NULL, run_piece, &pieces[k]) == 0;
    run_piece(&pieces[0]);
    for (int k = 1; k < t; k++) {
        if (started[k])
            pthread_join(tid[k], NULL);
        else
            run_piece(&pieces[k]);
    }
}
