#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# One whole device session on the GPU machine: build, tests, compute-sanitizer, benchmark.
# Logs and CSV go under $OUT (at most 8 files come back). Run from the repository root:
#   .ci/device-run.sh [build] [tests] [sanitize] [bench] [bench-quick] [bench-block] [bench-csr]
#                     [bench-cpu] [bench-chol] [bench-ba] [bench-ba-quick]
#   (default: build tests sanitize bench; bench-quick: the small sizes; bench-block / bench-csr:
#   one section of the GPU benchmark; bench-cpu: sbm-bench on the host, CPU against CSparse;
#   bench-chol: sbm-bench-chol, the sparse block Cholesky on the CPU and GPU against CHOLMOD;
#   bench-ba: sbm-bench-ba, the BA and SLAM iterations on the GPU against the CPU backend,
#   ~6-7 minutes, in its own call or after `build`; bench-ba-quick: its small sizes)
# Expects the cmocka packages in .deps/ and the data files in .data/ (both carried, ignored by git).
# All steps together exceed one 10-minute device call (build ~1.5 min, tests ~2, bench ~6,
# sanitize ~7): run `build tests` in one call, `bench` in the next and `sanitize` in a third while
# the machine is warm (the build directory is kept between calls on a warm machine).
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
# The dev packages' lib*.so links name Debian's exact runtime files (libz.so.1.2.13); point a
# dangling one at the device's runtime library of the same name.
for l in /opt/deps/usr/lib/x86_64-linux-gnu/*.so; do
  [ -e "$l" ] && continue
  real=$(ls /lib/x86_64-linux-gnu/"$(basename "$l")".[0-9]* 2>/dev/null | head -1)
  [ -n "$real" ] && ln -sf "$real" "$l"
done
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
  # the GPU benchmark is a target of bench/gpu/CMakeLists.txt (built with the CUDA backend)
  [ -x $BUILD/bin/sbm-bench-gpu ] || say "== sbm-bench-gpu was not built (see build.log)"
  # kernel resources (registers, spills) of the CUDA backend
  cuobjdump --dump-resource-usage $BUILD/libsbm.a 2>/dev/null | grep -E "Function|REG|STACK" \
      | paste - - | sed -E 's/Resource usage://' | awk '{$1=$1};1' | cut -c1-220 >>"$OUT/build.log"
fi

if has tests; then
  # SBM_REQUIRE_GPU=1: a [cuda] case or GPU-only suite that finds no device (or a build without
  # CUDA) fails instead of skipping, so a GPU machine that reports no device is not a green run
  # (SBM_REQUIRE_GPU=0 .ci/device-run.sh tests: the old skips)
  (cd $BUILD && SBM_REQUIRE_GPU=${SBM_REQUIRE_GPU:-1} ctest -V -j8 --timeout 600) >"$OUT/ctest.log" 2>&1
  say "== ctest rc=$? ($(elapsed)): $(grep -E 'tests passed|tests failed' "$OUT/ctest.log")"
  say "   cmocka [cuda] OK: $(grep -cE '\[       OK \] .*\[cuda\]' "$OUT/ctest.log")," \
      "[cuda] skipped: $(grep -cE '\[  SKIPPED \] .*\[cuda\]' "$OUT/ctest.log")," \
      "[cpu] OK: $(grep -cE '\[       OK \] .*\[cpu\]' "$OUT/ctest.log")," \
      "FAILED lines: $(grep -cE '\[  FAILED  \]' "$OUT/ctest.log")"
  grep -E "\[  FAILED  \]|\[  ERROR   \]|Failed|\*\*\*" "$OUT/ctest.log" | head -40 >>"$summary"
  grep -E "^ *[0-9]+/[0-9]+ Test" "$OUT/ctest.log" >>"$summary"
fi

if has bench || has bench-quick || has bench-csr || has bench-block; then
  # Two runs of sbm-bench-gpu, each with its own time limit: the block SpGEMM + block SpMV
  # section (--no-csr; BENCH_TIMEOUT, 420 s) and the scalar CSR section (--case csr;
  # BENCH_CSR_TIMEOUT, 300 s). Expected on the H100 with the current method (every cuSPARSE
  # algorithm, sbm's full product beside the upper one, the CPU backend 3 reps, elementwise
  # checks): about 4 min and 2 min, so run `bench` in its own device call after `build tests`.
  # bench-block / bench-csr: one of the two; bench-quick: the small sizes.
  size=large
  has bench-quick && size=small
  run_block=1
  run_csr=1
  if ! has bench && ! has bench-quick; then
    has bench-block || run_block=0
    has bench-csr || run_csr=0
  fi
  if [ -x $BUILD/bin/sbm-bench-gpu ]; then
    : >"$OUT/bench.txt"
    if [ $run_block = 1 ]; then
      timeout ${BENCH_TIMEOUT:-420} $BUILD/bin/sbm-bench-gpu --size $size --no-csr --csv "$OUT/bench.csv" \
          >>"$OUT/bench.txt" 2>&1
      say "== sbm-bench-gpu block SpGEMM + block SpMV rc=$? ($(elapsed))"
    fi
    if [ $run_csr = 1 ]; then
      timeout ${BENCH_CSR_TIMEOUT:-300} $BUILD/bin/sbm-bench-gpu --size $size --case csr \
          --csr-csv "$OUT/bench_csr.csv" >>"$OUT/bench.txt" 2>&1
      say "== sbm-bench-gpu scalar CSR rc=$? ($(elapsed))"
    fi
    cat "$OUT/bench.txt" >>"$summary"
    # the markdown tables and target verdicts of bench/results/RESULTS.md, from these CSVs
    args=""
    [ -s "$OUT/bench.csv" ] && args="$args --block $OUT/bench.csv"
    [ -s "$OUT/bench_csr.csv" ] && args="$args --csr $OUT/bench_csr.csv"
    if [ -n "$args" ]; then
      python3 bench/scripts/make_results.py $args >"$OUT/results.md" 2>&1
      say "== make_results.py rc=$? (results.md)"
    fi
  else
    say "== sbm-bench-gpu not built"
  fi
fi
if has bench-cpu; then
  # the CPU backend against CSparse (bench/results/NOTES-cpu.md), large sizes, on the device's host
  # (not in the default steps: a ninth file back with sanitize)
  timeout ${BENCH_CPU_TIMEOUT:-400} $BUILD/bin/sbm-bench --backend cpu --size large \
      --csv "$OUT/bench_cpu.csv" >"$OUT/bench_cpu.txt" 2>&1
  say "== sbm-bench (CPU) rc=$? ($(elapsed))"
  cat "$OUT/bench_cpu.txt" >>"$summary"
  rm -f "$OUT/bench_cpu.txt"
fi
if has bench-chol; then
  # sbm's sparse block Cholesky (CPU and CUDA contexts) against CHOLMOD's supernodal factorisation
  # (bench/results/NOTES-chol.md): the shared g2o graphs and BAL files, synthetic pose graphs of 1k, 10k
  # and 100k poses (SE2 and SE3), synthetic BA problems of 100 to 5000 cameras (S), the largest
  # last. CHOLMOD comes from the carried Debian packages in /opt/deps (found by CMake through
  # CMAKE_PREFIX_PATH); its libblas.so.3 / liblapack.so.3 are pointed at the OpenBLAS sbm links,
  # so both run the same BLAS with the same thread count (--threads: OPENBLAS_NUM_THREADS).
  # Expected about 3 minutes on the H100 host (16 cores): the 5000-camera S (n = 45 000, L nearly
  # dense, ~30 TFLOP per factorisation on the CPU paths) takes most of it; each phase is repeated
  # only as often as --phase-budget allows, and a call longer than it is timed once, without a
  # separate warm-up. The CSV gets a row as each matrix ends, so a cut run keeps what finished.
  # Env: BENCH_CHOL_TIMEOUT (300 s), BENCH_CHOL_THREADS (the machine's cores).
  chol=$BUILD/bin/sbm-bench-chol
  if [ -x $chol ]; then
    openblas=$(grep -E "^SBM_OPENBLAS_LIBRARY:" $BUILD/CMakeCache.txt | cut -d= -f2)
    blasdir=/opt/deps/sbm-blas
    mkdir -p $blasdir
    case "$openblas" in
      *.so*) for l in libblas.so.3 liblapack.so.3; do ln -sf "$(readlink -f "$openblas")" $blasdir/$l; done ;;
    esac
    : >"$OUT/bench_chol.txt"
    LD_LIBRARY_PATH=$blasdir:$LD_LIBRARY_PATH ldd $chol | grep -E "cholmod|blas|lapack|not found" \
        >>"$OUT/bench_chol.txt"
    args=""
    for g in intel manhattan CSAIL sphere2500 parking-garage smallGrid3D tinyGrid3D ais2klinik \
             sphere_bignoise_vertex3 kitti_05; do
      [ -f "$SBM_DATA_DIR/g2o/$g.g2o" ] && args="$args --g2o $SBM_DATA_DIR/g2o/$g.g2o"
    done
    for b in "$SBM_DATA_DIR"/bal/problem-*; do [ -f "$b" ] && args="$args --bal $b"; done
    for n in 1000 10000 100000; do args="$args --poses 2:$n --poses 3:$n"; done
    for c in 100 300 1000 2000 5000; do args="$args --generate $c,$((5 * c)),4"; done
    LD_LIBRARY_PATH=$blasdir:$LD_LIBRARY_PATH timeout ${BENCH_CHOL_TIMEOUT:-300} $chol \
        --threads ${BENCH_CHOL_THREADS:-$(nproc)} --reps 5 --phase-budget 3 $args \
        --csv "$OUT/bench_chol.csv" >>"$OUT/bench_chol.txt" 2>&1
    say "== sbm-bench-chol rc=$? ($(elapsed))"
    cat "$OUT/bench_chol.txt" >>"$summary"
    rm -f "$OUT/bench_chol.txt"
    if [ -s "$OUT/bench_chol.csv" ]; then
      python3 bench/scripts/make_chol_results.py "$OUT/bench_chol.csv" >"$OUT/results_chol.md" 2>&1
      say "== make_chol_results.py rc=$? (results_chol.md)"
    fi
  else
    say "== sbm-bench-chol not built"
  fi
fi
if has bench-ba || has bench-ba-quick; then
  # sbm-bench-ba (bench/results/NOTES-ba-gpu.md): BA and SLAM Levenberg-Marquardt iterations on
  # the CUDA and CPU contexts with the solvers' per-iteration phase times, the device copy
  # bandwidth and each BA phase's DRAM floor, the shared BAL files, the synthetic problems to
  # convergence (end to end; Ceres' side: bench/results/results_ba_ceres.csv, run on the dev
  # machine), pose graphs (synthetic 100k poses 3D; ais2klinik, the largest shared graph, and
  # sphere_bignoise_vertex3, the densest), the scaling 1e5 -> 1e7 observations and the
  # out-of-memory runs. Then `sbm ba-solve --backend cuda` on the two synthetic problems as a
  # user runs it (a cross-check of the e2e rows) and bench/scripts/make_ba_results.py
  # (results_ba.md and, where matplotlib is installed, results_ba.png). Files back: bench_ba.csv, bench_ba.txt,
  # results_ba.md, results_ba.png.
  # One process per group of sections (a crash in one loses only its group; the CSV rows of a
  # group are appended as its process ends), each told the time left.
  # Time: no run starts after BENCH_BA_LIMIT (300 s from the stage's start; the rest is skipped,
  # visibly) and a group is stopped 70 s after it; the CLI runs have 30 s each: at most ~7 min.
  ba=$BUILD/bin/sbm-bench-ba
  if [ -x $ba ]; then
    quick=""
    has bench-ba-quick && ! has bench-ba && quick="--quick"
    g2o=""
    for g in ais2klinik sphere_bignoise_vertex3; do
      [ -f "$SBM_DATA_DIR/g2o/$g.g2o" ] && g2o="$g2o --g2o $SBM_DATA_DIR/g2o/$g.g2o"
    done
    : >"$OUT/bench_ba.csv"
    : >"$OUT/bench_ba.txt"
    ba_start=$(date +%s)
    for sec in yardstick,ba bal e2e slam scaling,oom; do
      left=$(( ${BENCH_BA_LIMIT:-300} - ($(date +%s) - ba_start) ))
      if [ $left -le 0 ]; then
        say "== sbm-bench-ba --sections $sec: skipped (BENCH_BA_LIMIT ${BENCH_BA_LIMIT:-300} s spent)"
        continue
      fi
      timeout $(( left + 70 )) $ba $quick --sections $sec --time-limit $left $g2o \
          --csv "$OUT/bench_ba_part.csv" >>"$OUT/bench_ba.txt" 2>&1
      say "== sbm-bench-ba --sections $sec rc=$? ($(elapsed))"
      if [ -s "$OUT/bench_ba_part.csv" ]; then
        if [ -s "$OUT/bench_ba.csv" ]; then tail -n +2 "$OUT/bench_ba_part.csv" >>"$OUT/bench_ba.csv"
        else cat "$OUT/bench_ba_part.csv" >"$OUT/bench_ba.csv"; fi
      fi
      rm -f "$OUT/bench_ba_part.csv"
    done
    cat "$OUT/bench_ba.txt" >>"$summary"
    gens="1000,100000,6,1 5000,400000,8,1"
    [ -n "$quick" ] && gens="50,2000,6,1 100,4000,8,1"
    for g in $gens; do
      s=$(date +%s%N)
      timeout 30 $BUILD/bin/sbm ba-solve --backend cuda --generate $g >"$OUT/ba_cli.txt" 2>&1
      rc=$?
      say "== sbm ba-solve --backend cuda --generate $g rc=$rc," \
          "wall $(( ($(date +%s%N) - s) / 1000000 )) ms (generation included): " \
          "$(grep -E '^(cost|time) ' "$OUT/ba_cli.txt" | tr '\n' ' ')$(tail -1 "$OUT/ba_cli.txt")"
      { echo "######## sbm ba-solve --backend cuda --generate $g (rc=$rc)"; cat "$OUT/ba_cli.txt"; } \
          >>"$OUT/bench_ba.txt"
      rm -f "$OUT/ba_cli.txt"
    done
    if [ -s "$OUT/bench_ba.csv" ]; then
      python3 bench/scripts/make_ba_results.py --device "$OUT/bench_ba.csv" \
          --ceres bench/results/results_ba_ceres.csv --md "$OUT/results_ba.md" \
          --plot "$OUT/results_ba.png" >>"$summary" 2>&1
      say "== make_ba_results.py rc=$? (results_ba.md, results_ba.png)"
    fi
  else
    say "== sbm-bench-ba not built"
  fi
fi
if has sanitize; then
  # compute-sanitizer memcheck (with leak check), racecheck and initcheck on every GPU suite,
  # several runs at once (each is mostly latency-bound: small kernels and synchronisations), each
  # with a time limit. Left out: test_cuda_errors (provokes a CUDA API error on purpose) and
  # test_cuda_overflow (tens of GB and 2^32-entry sorts; natively ~30 s). racecheck, which
  # checks the shared memory of the kernels (the same kernels every call), runs
  # test_concurrency with SBM_TEST_NO_THREADS=1 (its single-thread stream tests; the CUDA 13.0
  # compute-sanitizer racecheck reports "Internal Sanitizer Error: Detected a failure to track a
  # kernel launch" when two host threads launch at once, then stalls) and test_cuda_faults with
  # SBM_TEST_FAULTS_EVERY=1000 (every operation undisturbed, then its first allocation failed);
  # memcheck and initcheck run both whole; test_csr_spmv runs with SBM_TEST_QUICK=1 under every
# tool (two alpha/beta pairs instead of sixteen: whole, it exceeded 250 s). Results and logs are appended as each run ends.
  # Measured on the H100 with 10 runs at once (2026-11-22): 16 runs end clean in 15-230 s;
  # racecheck of test_cuda_gemm needs more than 300 s under that load (180 s alone), memcheck
  # and initcheck of test_csr_spmv more than 250 s (its plan-format test), so with the limits
  # below the step takes about 6-7 minutes.
  # Env: SAN_SUITES, SAN_TOOLS, SAN_JOBS (10), SAN_TIMEOUT (250 s per run), SAN_TIMEOUT_LONG
  # (360 s: racecheck of test_cuda_gemm).
  log="$OUT/sanitizer.log"
  : >"$log"
  sdir=$(mktemp -d)
  suites=${SAN_SUITES:-"test_cuda_gemm test_cuda_ops test_csr_spmv test_csr_spmm test_csr_gemm test_concurrency test_cuda_faults test_chol test_chol_real test_chol_errors test_cuda_chol"}
  tools=${SAN_TOOLS:-"memcheck racecheck initcheck"}
  : >"$sdir/jobs"
  for t in $suites; do
    if [ ! -x $BUILD/bin/$t ]; then say "== sanitize $t: not built, skipped"; continue; fi
    for tool in $tools; do
      # the long ones first, so that the parallel runs end together
      case "$tool $t" in
        "racecheck test_cuda_gemm" | *test_csr_spmv) pri=0 ;;
        *test_cuda_gemm | *test_cuda_faults | *test_csr_spmm) pri=1 ;;
        *) pri=2 ;;
      esac
      echo "$pri $tool $t" >>"$sdir/jobs"
    done
  done
  san_run() {
    local tool=$1 t=$2 opts="" to=${SAN_TIMEOUT:-250} s rc env="" line
    [ "$tool" = memcheck ] && opts="--leak-check full"
    [ "$tool $t" = "racecheck test_cuda_gemm" ] && to=${SAN_TIMEOUT_LONG:-360}
    [ "$tool $t" = "racecheck test_concurrency" ] && env="SBM_TEST_NO_THREADS=1"
    [ "$tool $t" = "racecheck test_cuda_faults" ] && env="SBM_TEST_FAULTS_EVERY=1000"
    # every kernel and format still runs, with two alpha/beta pairs instead of sixteen
    case $t in test_csr_spmv|test_cuda_chol|test_ba_lin|test_ba_lin_errors|test_ba_device|test_ba_solve_ops|test_slam_device|test_loss) env="SBM_TEST_QUICK=1" ;; esac
    s=$(date +%s)
    env $env timeout "$to" compute-sanitizer --tool "$tool" $opts --error-exitcode 99 \
        "$BUILD/bin/$t" >"$sdir/$tool.$t.log" 2>&1
    rc=$?
    line="$tool $t rc=$rc $(( $(date +%s) - s ))s limit=${to}s${env:+ ($env)}"
    line="$line $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$sdir/$tool.$t.log" | tail -1 | sed 's/^=* *//')"
    # appended as soon as the run ends, so that a cut-off step still reports what finished
    (
      flock 9
      echo "$line" >>"$sdir/results"
      echo "== $line" | tee -a "$summary"
      { echo "######## $tool $t ($line)"; cat "$sdir/$tool.$t.log"; } >>"$log"
    ) 9>"$sdir/lock"
  }
  export -f san_run
  export BUILD sdir summary log
  : >"$sdir/results"
  sort -n "$sdir/jobs" | cut -d' ' -f2- | xargs -P "${SAN_JOBS:-10}" -L1 bash -c 'san_run "$0" "$1"'
  for tool in $tools; do
    n=$(grep -c "^$tool " "$sdir/results")
    clean=$(grep -cE "^$tool [^ ]+ rc=0 " "$sdir/results")
    say "== $tool summary: $n runs, $clean clean (rc=0), $((n - clean)) not clean" \
        "(rc 99: sanitizer errors, 124: time limit, other: test failures) ($(elapsed))"
  done
  grep -E "^=========" "$log" | grep -vE "COMPUTE-SANITIZER|ERROR SUMMARY: 0|RACECHECK SUMMARY: 0|LEAK SUMMARY: 0" |
    sort | uniq -c | sort -rn | head -30 >>"$summary"
  rm -rf "$sdir"
fi

say "== done ($(elapsed))"
