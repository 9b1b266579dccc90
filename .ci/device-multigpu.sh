#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The multi-GPU session on a 2- or 4-GPU machine (nvidia-h200-x2 / -x4): build with NCCL, the
# distributed suites, compute-sanitizer on them, the scaling benchmark. Logs and CSV under $OUT.
# Run from the repository root:
#   .ci/device-multigpu.sh [build] [tests] [sanitize] [bench] [bench-quick] [bench-weak]
#   (default: build tests bench-quick; bench: strong scaling on the issue's size, 20000 cameras,
#   2.5e6 points, 1e7 observations (BENCH_CAMERAS, BENCH_POINTS, BENCH_OBS override), ~5 min;
#   bench-weak: 5000 cameras and 625000 points per GPU; bench-quick: 2000 cameras, 250000
#   points, both scalings)
# Expects the cmocka packages in .deps/ (as .ci/device-run.sh) and NCCL installed system-wide
# (/usr/include/nccl.h, libnccl.so) or NCCL_ROOT pointing at it. NCCL_NVLS_ENABLE=0 is always
# exported (the device machines' drivers do not support NVLink SHARP multicast).
set -euo pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
steps=${*:-"build tests bench-quick"}
summary="$OUT/multigpu-summary.txt"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
t0=$(date +%s)
elapsed() { echo $(( $(date +%s) - t0 ))s; }
export NCCL_NVLS_ENABLE=0
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}

if compgen -G ".deps/*.deb" >/dev/null; then
  mkdir -p /opt/deps
  for f in .deps/*.deb; do dpkg -x "$f" /opt/deps; done
  for l in /opt/deps/usr/lib/x86_64-linux-gnu/*.so; do
    [ -e "$l" ] && continue
    real=$(ls /lib/x86_64-linux-gnu/"$(basename "$l")".[0-9]* 2>/dev/null | head -1 || true)
    [ -n "$real" ] && ln -sf "$real" "$l"
  done
  export LD_LIBRARY_PATH=/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
fi
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l || echo 0)
say "== GPUs: $NGPU; $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | head -1)"
say "== date: $(date -u +%Y-%m-%dT%H:%MZ)"
nvidia-smi topo -m >"$OUT/topology.txt" 2>&1 || true

BUILD=build-multigpu
if has build; then
  rc=0
  { cmake -S . -B $BUILD -DSBM_CUDA=ON -DSBM_NCCL=ON -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_PREFIX_PATH=/opt/deps/usr -DCMAKE_CUDA_ARCHITECTURES=90 &&
    cmake --build $BUILD -j"$(nproc)" --target test_dist test_cuda_dist sbm-bench-dist sbm_cli; } \
      >"$OUT/multigpu-build.log" 2>&1 || rc=$?
  say "== build rc=$rc ($(elapsed))"
  if [ $rc -ne 0 ]; then grep -E "error|Error" "$OUT/multigpu-build.log" | head -40 | tee -a "$summary"; exit 1; fi
  grep -E "NCCL" "$OUT/multigpu-build.log" | head -3 >>"$summary" || true
fi

fails=0
run() { # run NAME TIMEOUT CMD...: the log in $OUT/NAME.log, rc in the summary
  local name=$1 limit=$2 rc=0
  shift 2
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1 || rc=$?
  say "== $name rc=$rc ($(elapsed)): $(grep -E 'PASSED|FAILED|SKIPPED' "$OUT/$name.log" | tr '\n' ' ' | cut -c1-200)"
  grep -E "\[  FAILED  \]|\[  ERROR   \]|GPUs, layout" "$OUT/$name.log" >>"$summary" || true
  [ $rc -eq 0 ] || [ $rc -eq 77 ] || fails=$((fails + 1))
}
if has tests; then
  run test_dist 600 $BUILD/bin/test_dist
  run test_cuda_dist 600 $BUILD/bin/test_cuda_dist
  # the CLI over the GPUs present
  run cli_gpus 300 $BUILD/bin/sbm ba-solve --generate 400,40000,4 --layout trajectory \
      --backend cuda --gpus "$NGPU" --iterations 5
fi
if has sanitize; then
  # memcheck on the distributed suite over the GPUs (NCCL's own allocations are not ours:
  # its internal leaks are not reported with --leak-check none)
  run sanitize_cuda_dist 600 compute-sanitizer --tool memcheck --leak-check full \
      --error-exitcode 1 $BUILD/bin/test_cuda_dist
fi
bench() { # bench NAME ARGS...
  run "$1" 600 $BUILD/bin/sbm-bench-dist "${@:2}"
  cat "$OUT/$1.log" >>"$summary"
}
ranks=1
[ "$NGPU" -ge 2 ] && ranks=1,2
[ "$NGPU" -ge 4 ] && ranks=1,2,4
if has bench-quick; then
  bench bench_quick_strong --cameras 2000 --points 250000 --ranks $ranks --csv "$OUT/dist-quick-strong.csv"
  bench bench_quick_weak --weak --cameras 1000 --points 125000 --ranks $ranks --csv "$OUT/dist-quick-weak.csv"
fi
if has bench; then
  bench bench_strong --cameras "${BENCH_CAMERAS:-20000}" --points "${BENCH_POINTS:-2500000}" \
      --obs "${BENCH_OBS:-4}" --ranks $ranks --csv "$OUT/dist-strong.csv"
  bench bench_strong_index --cameras "${BENCH_CAMERAS:-20000}" --points "${BENCH_POINTS:-2500000}" \
      --obs "${BENCH_OBS:-4}" --ranks $ranks --partition index --csv "$OUT/dist-strong-index.csv"
fi
if has bench-weak; then
  bench bench_weak --weak --cameras 5000 --points 625000 --ranks $ranks --csv "$OUT/dist-weak.csv"
fi
if compgen -G "$OUT/dist-*.csv" >/dev/null; then
  python3 bench/scripts/make_dist_results.py --plot "$OUT/dist-scaling.png" "$OUT"/dist-*.csv \
      >"$OUT/dist-results.md" 2>&1 || true
  cat "$OUT/dist-results.md" >>"$summary"
fi
say "== done ($(elapsed)); $fails step(s) failed"
[ $fails -eq 0 ]
