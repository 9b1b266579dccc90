#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs each given build of sbm into a temporary prefix and builds and runs, against it, the
# consumers the README documents, with no flags beyond the documented ones:
#   (a) CMake: find_package(sbm), target sbm::sbm (shared)      examples/minimal_gemm.c
#   (b) CMake: the same with sbm::sbm_static
#   (c) cc gemm.c $(pkg-config --cflags --libs sbm)             run with LD_LIBRARY_PATH, and
#       the README's recipe with -Wl,-rpath,$(pkg-config --variable=libdir sbm) run without it
#   (d) cc gemm.c $(pkg-config --cflags --libs --static sbm)    in the prefix, and in a copy of it
#       holding the static libraries only (so that the link really takes libsbm.a); and
#       cc gemm.c $(pkg-config --cflags --libs sbm-static) in the full prefix: no libsbm.so needed
#   (e) a bundle-adjustment consumer (sbm_bal_generate + sbm_ba_solve) through sbm::ba,
#       sbm::ba_static, sbm-ba and sbm-ba --static
# Every variant of a program must print the same output. It also checks that libsbm.so (the core
# library, all that minimal_gemm needs) depends on neither zlib nor libbz2, and runs
# .ci/check-readme.sh (the README's API example is examples/minimal_gemm.c).
# A build with the CUDA backend is checked the same way: without a GPU the consumers run on the
# CPU backend (minimal_gemm always does; the BA consumer takes the GPU when there is one).
#
# usage: bash .ci/install-check.sh BUILD_DIR...     e.g. bash .ci/install-check.sh build-nocuda build
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 1 ]; then
  echo "usage: bash .ci/install-check.sh BUILD_DIR... (configured and built sbm build folders)" >&2
  exit 2
fi
bash "$repo/.ci/check-readme.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc=${CC:-cc}

fail() {
  echo "install-check: $*" >&2
  exit 1
}

# The consumer sources and their CMake project (the four CMake variants in one project).
src=$work/src
mkdir -p "$src"
cp "$repo/examples/minimal_gemm.c" "$src/gemm.c"
cat > "$src/ba.c" <<'C'
/* Consumer of sbm_ba: Levenberg-Marquardt on a small seeded synthetic BAL problem. */
#include <stdio.h>

#include "sbm_ba.h"

int main(void)
{
    sbm_backend backend = sbm_cuda_device_count() > 0 ? SBM_BACKEND_CUDA : SBM_BACKEND_CPU;
    sbm_ctx *ctx = NULL;
    sbm_bal_problem *problem = NULL;
    if (sbm_ctx_create(&ctx, backend, 0) != SBM_SUCCESS) {
        fprintf(stderr, "ba: %s\n", sbm_ctx_last_error(NULL));
        return 1;
    }
    sbm_bal_generate_options gen = sbm_bal_generate_defaults(8, 200, 4, 42);
    sbm_solver_options options = sbm_solver_default_options();
    sbm_solver_summary summary;
    int rc = 1;
    if (sbm_bal_generate(ctx, &gen, &problem) != SBM_SUCCESS ||
        sbm_ba_solve(ctx, problem, &options, &summary) != SBM_SUCCESS) {
        fprintf(stderr, "ba: %s\n", sbm_ctx_last_error(ctx));
    } else if (!(summary.final_cost < summary.initial_cost)) {
        fprintf(stderr, "ba: the cost did not decrease (%g -> %g)\n", summary.initial_cost,
                summary.final_cost);
    } else {
        printf("ba on %s: %d iterations, cost %.6e -> %.6e\n",
               backend == SBM_BACKEND_CUDA ? "cuda" : "cpu", summary.iterations,
               summary.initial_cost, summary.final_cost);
        rc = 0;
    }
    sbm_bal_destroy(problem);
    sbm_ctx_destroy(ctx);
    return rc;
}
C
cat > "$src/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.22)
project(sbm_consumer C)
find_package(sbm 0.1 REQUIRED)
add_executable(gemm_shared gemm.c)
target_link_libraries(gemm_shared PRIVATE sbm::sbm)
add_executable(gemm_static gemm.c)
target_link_libraries(gemm_static PRIVATE sbm::sbm_static)
add_executable(ba_shared ba.c)
target_link_libraries(ba_shared PRIVATE sbm::ba)
add_executable(ba_static ba.c)
target_link_libraries(ba_static PRIVATE sbm::ba_static)
CM

# run LABEL PROGRAM BINARY [ENV...]: runs the binary, whose output must equal the first run's of
# the same program in this prefix
run() {
  local label=$1 program=$2 bin=$3
  shift 3
  env "$@" "$bin" > "$out/$label.txt" 2> "$out/$label.err" || {
    cat "$out/$label.err" >&2
    fail "$name: $label: $bin failed"
  }
  if [ -f "$out/ref-$program.txt" ]; then
    diff -u "$out/ref-$program.txt" "$out/$label.txt" >&2 || fail "$name: $label: output differs from $(cat "$out/ref-$program.label")"
  else
    cp "$out/$label.txt" "$out/ref-$program.txt"
    echo "$label" > "$out/ref-$program.label"
  fi
  echo "  ok  $label"
}

# links_sbm_shared BINARY yes|no: whether the binary has libsbm*.so among its NEEDED entries
links_sbm_shared() {
  local got=no
  readelf -d "$1" | grep -q 'NEEDED.*\[libsbm' && got=yes
  [ "$got" = "$2" ] || fail "$name: $1: links a shared libsbm: $got (expected $2)"
}

check_build() {
  local build=$1
  name=$(basename "$build")
  [ -f "$build/CMakeCache.txt" ] || fail "$build is not a configured build folder"
  local top=$work/$name
  local prefix=$top/prefix
  out=$top/out
  mkdir -p "$out"
  cmake --install "$build" --prefix "$prefix" > /dev/null
  local core
  core=$(find "$prefix" -name libsbm.so -print -quit)
  [ -n "$core" ] || fail "$name: no libsbm.so installed under $prefix"
  local libdir
  libdir=$(dirname "$core")
  local cuda=OFF
  grep -q 'set(sbm_WITH_CUDA ON)' "$libdir/cmake/sbm/sbmConfig.cmake" && cuda=ON
  echo "== install-check: $build (CUDA backend $cuda) into $prefix =="

  # the core library needs neither zlib nor libbz2 (they belong to sbm_io)
  local needed
  needed=$(readelf -d "$core" | sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  case " $needed" in
    *" libz."* | *" libbz2."*) fail "$name: libsbm.so needs zlib or libbz2: $needed" ;;
  esac
  echo "  ok  libsbm.so needs: $needed(no libz, no libbz2)"

  # (a), (b), (e): CMake package
  cmake -S "$src" -B "$top/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release > "$top/cmake.log" 2>&1 \
    || { cat "$top/cmake.log" >&2; fail "$name: find_package(sbm) failed"; }
  cmake --build "$top/cmake" > "$top/cmake-build.log" 2>&1 \
    || { cat "$top/cmake-build.log" >&2; fail "$name: the CMake consumers did not build"; }
  links_sbm_shared "$top/cmake/gemm_shared" yes
  links_sbm_shared "$top/cmake/gemm_static" no
  links_sbm_shared "$top/cmake/ba_shared" yes
  links_sbm_shared "$top/cmake/ba_static" no
  if ldd "$top/cmake/gemm_shared" | grep -E '^\s*lib(z|bz2)\.' >&2; then
    fail "$name: minimal_gemm linked with sbm::sbm loads zlib or libbz2"
  fi
  echo "  ok  minimal_gemm (sbm::sbm) loads neither libz nor libbz2 (ldd)"
  run "(a) find_package sbm::sbm" gemm "$top/cmake/gemm_shared"
  run "(b) find_package sbm::sbm_static" gemm "$top/cmake/gemm_static"
  run "(e) find_package sbm::ba" ba "$top/cmake/ba_shared"
  run "(e) find_package sbm::ba_static" ba "$top/cmake/ba_static"

  # (c), (d), (e): pkg-config, the commands exactly as in the README
  local pc=$libdir/pkgconfig
  local b=$top/pc
  mkdir -p "$b"
  export PKG_CONFIG_PATH=$pc
  # shellcheck disable=SC2046  # pkg-config's output is a list of flags
  {
    $cc "$src/gemm.c" -o "$b/gemm" $(pkg-config --cflags --libs sbm)
    $cc "$src/gemm.c" -o "$b/gemm_rpath" $(pkg-config --cflags --libs sbm) -Wl,-rpath,"$(pkg-config --variable=libdir sbm)"
    $cc "$src/gemm.c" -o "$b/gemm_pcstatic" $(pkg-config --cflags --libs --static sbm)
    $cc "$src/ba.c" -o "$b/ba" $(pkg-config --cflags --libs sbm-ba)
    $cc "$src/ba.c" -o "$b/ba_pcstatic" $(pkg-config --cflags --libs --static sbm-ba)
    $cc "$src/gemm.c" -o "$b/gemm_pc_sbm_static" $(pkg-config --cflags --libs sbm-static)
    $cc "$src/ba.c" -o "$b/ba_pc_sbm_static" $(pkg-config --cflags --libs sbm-ba-static)
  } || fail "$name: a pkg-config consumer did not build"
  # sbm-static / sbm-ba-static: the static libraries although the .so files are beside them
  links_sbm_shared "$b/gemm_pc_sbm_static" no
  links_sbm_shared "$b/ba_pc_sbm_static" no
  run "(d) pkg-config sbm-static" gemm "$b/gemm_pc_sbm_static"
  run "(e) pkg-config sbm-ba-static" ba "$b/ba_pc_sbm_static"
  run "(c) pkg-config sbm" gemm "$b/gemm" LD_LIBRARY_PATH="$libdir"
  run "(c) pkg-config sbm, -Wl,-rpath" gemm "$b/gemm_rpath"
  run "(d) pkg-config --static sbm" gemm "$b/gemm_pcstatic" LD_LIBRARY_PATH="$libdir"
  run "(e) pkg-config sbm-ba" ba "$b/ba" LD_LIBRARY_PATH="$libdir"
  run "(e) pkg-config --static sbm-ba" ba "$b/ba_pcstatic" LD_LIBRARY_PATH="$libdir"

  # (d), (e) where only the static libraries are installed: Libs.private must be complete
  local sprefix=$top/static-prefix
  cp -a "$prefix" "$sprefix"
  find "$sprefix" -name 'libsbm*.so*' -delete
  local slibdir=${libdir/#$prefix/$sprefix}
  export PKG_CONFIG_PATH=$slibdir/pkgconfig
  # shellcheck disable=SC2046
  {
    $cc "$src/gemm.c" -o "$b/gemm_static_only" $(pkg-config --cflags --libs --static sbm)
    $cc "$src/ba.c" -o "$b/ba_static_only" $(pkg-config --cflags --libs --static sbm-ba)
  } || fail "$name: a pkg-config --static consumer did not build against the static libraries alone"
  unset PKG_CONFIG_PATH
  links_sbm_shared "$b/gemm_static_only" no
  links_sbm_shared "$b/ba_static_only" no
  run "(d) pkg-config --static sbm, static libraries only" gemm "$b/gemm_static_only"
  run "(e) pkg-config --static sbm-ba, static libraries only" ba "$b/ba_static_only"
  echo "  output: $(head -n 1 "$out/ref-gemm.txt") | $(cat "$out/ref-ba.txt")"
}

for build in "$@"; do
  check_build "$build"
done
echo "install-check: every consumer built and ran against: $*"
