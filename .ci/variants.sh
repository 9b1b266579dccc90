#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# CI: build and run the CPU ctest once for every compile-time variant of the CPU kernels, each in a
# build folder of its own. The variants are the compile-time switches of kernels/cpu and blocks/:
#   avx2      the default: on x86 with GCC or Clang the fixed-size SpGEMM kernels are compiled a
#             second time for AVX2 (cpu_gemm_execute.c) and chosen at run time when the CPU has it;
#   portable  -DSBM_NO_AVX2: only the baseline kernels, as on a CPU without AVX2.
# Both must give the same bits (tests/README.md).
# Usage: .ci/variants.sh [build-root [extra cmake arguments]] (build-root default: .)
set -euo pipefail
cd "$(dirname "$0")/.."
root=${1:-.}
extra=("${@:2}")
jobs=$(nproc)

run_variant() { # name, C flags, what it covers
  local dir="$root/build-variant-$1"
  echo "== CPU variant '$1' in $dir: $3 =="
  cmake -S . -B "$dir" -DSBM_CUDA=OFF -DSBM_BUILD_BENCH=OFF -DCMAKE_C_FLAGS="$2" "${extra[@]}" >/dev/null
  cmake --build "$dir" -j"$jobs" >/dev/null
  ctest --test-dir "$dir" --output-on-failure -j"$jobs"
}

run_variant avx2 "" "default kernels (AVX2 copies of the SpGEMM kernels where the CPU has AVX2)"
if [ "$(uname -m)" = x86_64 ] && ! grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
  echo "note: this CPU has no AVX2: the 'avx2' variant ran the baseline kernels"
fi
run_variant portable "-DSBM_NO_AVX2" "baseline kernels only (-DSBM_NO_AVX2)"
echo "variants: avx2 and portable passed"
