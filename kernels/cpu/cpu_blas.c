/* SPDX-License-Identifier: BSD-3-Clause */
/* Room for the dense kernels' work buffers under an address-space limit (cpu_backend.h). */
#define _DEFAULT_SOURCE

#include "cpu_backend.h"

#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>

/* OpenBLAS's, where it is the BLAS (weak: another BLAS leaves it NULL) */
extern int openblas_get_num_threads(void) __attribute__((weak));
extern void openblas_set_num_threads(int) __attribute__((weak));

/* One OpenBLAS work buffer: BUFFER_SIZE of Debian's x86-64 build (32 << 22 bytes). */
#define SBM__BLAS_BUFFER_BYTES ((size_t)128 << 20)

/* Can `bytes` of address space be mapped now? (mapped without backing and unmapped at once) */
static int sbm__address_space_room(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) return 0;
    munmap(p, bytes);
    return 1;
}

sbm_status sbm__cpu_blas_room(sbm_ctx *ctx)
{
    /* 1 once a check passed: OpenBLAS keeps the buffers it maps, later calls reuse them */
    static atomic_int room;
    if (atomic_load(&room)) return SBM_SUCCESS;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) {
        atomic_store(&room, 1);
        return SBM_SUCCESS;
    }
    const int threads = openblas_get_num_threads ? openblas_get_num_threads() : 1;
    if (threads > 1 && !sbm__address_space_room((size_t)(threads + 1) * SBM__BLAS_BUFFER_BYTES) &&
        openblas_set_num_threads) {
        /* its worker threads may be waiting for buffers the limit does not allow: the dense
         * kernels run on the calling thread alone from now on */
        openblas_set_num_threads(1);
    }
    /* the calling thread's buffer and a margin for what the call itself allocates */
    const size_t need = SBM__BLAS_BUFFER_BYTES + ((size_t)16 << 20);
    if (!sbm__address_space_room(need))
        return sbm__error(ctx, SBM_ERR_OUT_OF_MEMORY,
                          "the dense kernels (LAPACK and BLAS) need about %zu MiB of address "
                          "space for their work buffers, and the address-space limit (ulimit -v: "
                          "%llu MiB) leaves no room for them",
                          need >> 20,
                          (unsigned long long)(rl.rlim_cur >> 20));
    atomic_store(&room, 1);
    return SBM_SUCCESS;
}
