#!/usr/bin/env bash
# One whole device session on the GPU machine: build, tests, compute-sanitizer, benchmark.
# Logs and CSV go under $OUT (at most 8 files come back). Run from the repository root:
#   .ci/device-run.sh [build] [tests] [sanitize] [bench] [bench-quick]     (default: all but quick)
# Expects the cmocka packages in .deps/ and the data files in .data/ (both carried, ignored by git).
set -u
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
steps=${*:-"build tests sanitize bench"}
summary="$OUT/summary.txt"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
t0=$(date +%s)
elapsed() { echo $(( $(date +%s) - t0 ))s; }

# cmocka (not installed on the device image) from the carried Debian packages
mkdir -p /opt/deps
for f in .deps/*.deb; do dpkg -x "$f" /opt/deps; done
export LD_LIBRARY_PATH=/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export SBM_DATA_DIR=$PWD/.data

say "== device: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader)"
say "== nvcc: $(nvcc --version | tail -2 | head -1)"
say "== date: $(date -u +%Y-%m-%dT%H:%MZ)"

BUILD=build-device
if has build; then
  cmake -S . -B $BUILD -DSBM_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=/opt/deps/usr \
        -DCMAKE_CUDA_ARCHITECTURES=90 -DSBM_DATA_DIR=$PWD/.data >"$OUT/build.log" 2>&1 &&
  cmake --build $BUILD -j16 >>"$OUT/build.log" 2>&1
  rc=$?
  say "== build rc=$rc ($(elapsed))"
  if [ $rc -ne 0 ]; then grep -E "error|Error" "$OUT/build.log" | head -40; exit 1; fi
  # the GPU benchmark: a target when bench/CMakeLists.txt includes bench/gpu.cmake, else built here
  if [ ! -x $BUILD/bin/sbm-bench-gpu ]; then
    lapacke=$(grep -E "^SBM_LAPACKE_LIBRARY:" $BUILD/CMakeCache.txt | cut -d= -f2)
    openblas=$(grep -E "^SBM_OPENBLAS_LIBRARY:" $BUILD/CMakeCache.txt | cut -d= -f2)
    gcc -std=c11 -O2 -Wall -Wno-deprecated-declarations -DSBM_BENCH_DATA_DIR="\"$PWD/.data\"" \
        bench/sbm_bench_gpu.c bench/peer_cusparse.c bench/generators.c -Iinclude -Ibench \
        -I/usr/local/cuda/include $BUILD/libsbm.a -L/usr/local/cuda/lib64 -lcusparse -lcudart \
        "$lapacke" "$openblas" -lstdc++ -lm -o $BUILD/bin/sbm-bench-gpu >>"$OUT/build.log" 2>&1
    say "== sbm-bench-gpu built by hand rc=$?"
  fi
  # kernel resources (registers, spills) of the CUDA backend
  cuobjdump --dump-resource-usage $BUILD/libsbm.a 2>/dev/null | grep -E "Function|REG|STACK" \
      | paste - - | sed -E 's/Resource usage://' | awk '{$1=$1};1' | cut -c1-220 >>"$OUT/build.log"
fi

if has tests; then
  (cd $BUILD && ctest -V -j8 --timeout 600) >"$OUT/ctest.log" 2>&1
  say "== ctest rc=$? ($(elapsed)): $(grep -E 'tests passed|tests failed' "$OUT/ctest.log")"
  say "   cmocka [cuda] OK: $(grep -cE '\[       OK \] .*\[cuda\]' "$OUT/ctest.log")," \
      "[cuda] skipped: $(grep -cE '\[  SKIPPED \] .*\[cuda\]' "$OUT/ctest.log")," \
      "[cpu] OK: $(grep -cE '\[       OK \] .*\[cpu\]' "$OUT/ctest.log")," \
      "FAILED lines: $(grep -cE '\[  FAILED  \]' "$OUT/ctest.log")"
  grep -E "\[  FAILED  \]|\[  ERROR   \]|Failed|\*\*\*" "$OUT/ctest.log" | head -40 >>"$summary"
  grep -E "^ *[0-9]+/[0-9]+ Test" "$OUT/ctest.log" >>"$summary"
fi

if has bench || has bench-quick; then
  size=large
  has bench-quick && size=small
  if [ -x $BUILD/bin/sbm-bench-gpu ]; then
    timeout ${BENCH_TIMEOUT:-300} $BUILD/bin/sbm-bench-gpu --size $size --csv "$OUT/bench.csv" >"$OUT/bench.txt" 2>&1
    say "== sbm-bench-gpu rc=$? ($(elapsed))"
    cat "$OUT/bench.txt" >>"$summary"
  else
    say "== sbm-bench-gpu not built"
  fi
fi
if has sanitize; then
  log="$OUT/sanitizer.log"
  : >"$log"
  for t in ${SAN_SUITES:-test_cuda_gemm test_cuda_ops}; do
    [ -x $BUILD/bin/$t ] || continue
    timeout ${SAN_TIMEOUT:-120} compute-sanitizer --tool memcheck --leak-check full --error-exitcode 99 \
        $BUILD/bin/$t >>"$log" 2>&1
    say "== memcheck $t rc=$? ($(elapsed)) $(grep -E 'ERROR SUMMARY' "$log" | tail -1)"
  done
  for t in test_cuda_gemm test_cuda_ops; do
    timeout ${SAN_TIMEOUT:-120} compute-sanitizer --tool racecheck --error-exitcode 99 $BUILD/bin/$t >>"$log" 2>&1
    say "== racecheck $t rc=$? ($(elapsed)) $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$log" | tail -1)"
  done
  grep -E "=========" "$log" | grep -vE "COMPUTE-SANITIZER|ERROR SUMMARY: 0|RACECHECK SUMMARY: 0" | head -20 >>"$summary"
fi

say "== done ($(elapsed))"
