/* The CPU backend's bundle adjustment's kernel table (ba_kernels.h), in the list's order. */
#include "ba_kernels.h"

const sbm__ba_kernels sbm__cpu_ba_kernels = {SBM__BA_KERNELS(SBM__KERNEL_CPU_INIT)};
