/* SPDX-License-Identifier: BSD-3-Clause */
/* SplitMix64, the one seeded generator of sbm and its tools (see sbm.h). */
#include "sbm_internal.h"

uint64_t sbm_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double sbm_splitmix64_uniform(uint64_t *state)
{
    return (double)(sbm_splitmix64(state) >> 11) * 0x1.0p-53;
}
