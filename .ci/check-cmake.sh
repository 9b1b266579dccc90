#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# CI: the build's CMake floor and its behaviour as a subproject.
#  1. configure and build the CPU-only library and CLI with CMake 3.22 (Ubuntu 22.04's, from PyPI's
#     cmake package in a scratch virtual environment): cmake_minimum_required says 3.22, so it
#     must really be enough;
#  2. a project that adds this tree with add_subdirectory gets the libraries and their aliases,
#     and none of the tests, benchmarks or examples.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q cmake==3.22.6
cm="$work/venv/bin/cmake"
"$cm" --version | head -1
"$cm" -S "$repo" -B "$work/b322" -DSBM_CUDA=OFF -DSBM_BUILD_TESTS=OFF -DSBM_BUILD_BENCH=OFF >/dev/null
"$cm" --build "$work/b322" -j"$(nproc)" >/dev/null
"$work/b322/bin/sbm" --version
echo "cmake 3.22: configured and built"

mkdir -p "$work/parent"
cat >"$work/parent/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.22)
project(parent LANGUAGES C)
add_subdirectory("$repo" sbm)
add_executable(app app.c)
target_link_libraries(app PRIVATE sbm::sbm_static)
CM
cp "$repo/examples/minimal_gemm.c" "$work/parent/app.c"
cmake -S "$work/parent" -B "$work/parent/build" -DSBM_CUDA=OFF >/dev/null
targets=$(cmake --build "$work/parent/build" --target help | grep -cE '^\.\.\. (test_|sbm-bench|sbm_cli|minimal_gemm|ba_schur_demo)' || true)
if [ "$targets" != 0 ]; then
  echo "add_subdirectory: $targets test, bench or example targets are defined (want none)"
  exit 1
fi
cmake --build "$work/parent/build" -j"$(nproc)" --target app >/dev/null
"$work/parent/build/app" >/dev/null
echo "add_subdirectory: libraries only, the consumer links and runs"
