#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The whole CPU suite under valgrind memcheck: every cmocka suite (tests/test_*.c) and the CLI
# test scripts, whose `sbm` invocations each run under valgrind through a wrapper. A build
# without CUDA (-O2 -g). Fails on any memcheck error (invalid read/write, use of uninitialised
# values, bad free, bad system-call arguments) and on definite or indirect leaks.
#
# usage: .ci/valgrind.sh [build-dir]        (default build-valgrind; run from anywhere)
# env:   VALGRIND_JOBS  suites run at once (default: nproc)
#        VALGRIND_ONLY  space-separated subset of suites (e.g. "test_mtx cli"), default all
#        VALGRIND_BUILD 0 = use the build directory as it is (default 1: configure and build)
#        VALGRIND_TRACK_ORIGINS yes = report the origin of uninitialised values (default no)
#        SBM_TEST_QUICK  the suites' quick mode (default 1 here; 0 = the full cases)
#        VALGRIND_DATA_DIR  the optional extra data for this run (default: none; tests/data is
#                       always read). The shared data's larger graphs are solved to convergence
#                       by test_slam and the CLI tests; under valgrind (50-100x slower) they
#                       would take most of CI's 90 minutes, so here those cases skip visibly
#                       ("optional data ... not found"); they run natively in the other stages
#                       (README command, build without CUDA, variants, ASan+UBSan).
# Logs: <build-dir>/valgrind/<suite>.log (and cli/<pid>.log per CLI invocation).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${1:-build-valgrind}
jobs=${VALGRIND_JOBS:-$(nproc)}
if ! command -v valgrind >/dev/null; then
  # as .ci/setup-debian does for the build packages
  echo "valgrind.sh: installing valgrind"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  { $SUDO apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends valgrind; } ||
    { echo "valgrind.sh: valgrind is not installed and could not be installed"; exit 2; }
fi

if [ "${VALGRIND_BUILD:-1}" != 0 ]; then
  mkdir -p "$build"
  { cmake -S . -B "$build" -DSBM_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSBM_BUILD_BENCH=OFF &&
    cmake --build "$build" -j"$jobs"; } >"$build/valgrind-build.log" 2>&1 ||
    { tail -20 "$build/valgrind-build.log"; echo "valgrind.sh: build failed"; exit 2; }
fi
build=$(cd "$build" && pwd)
export SBM_DATA_DIR=${VALGRIND_DATA_DIR:-$build/no-optional-data}
# The suites' quick mode (every kernel and code path, small inputs and few iterations), as for
# compute-sanitizer: the GPU-iteration suites (test_ba_device, test_slam_device, ...) solve whole
# problems on both backends and would take most of CI's time under valgrind otherwise.
export SBM_TEST_QUICK=${SBM_TEST_QUICK:-1}
logs=$build/valgrind
rm -rf "$logs"
mkdir -p "$logs/cli"

# Memory errors give exit code 99. Leaks are judged from the logs (below): definite and
# indirect leaks fail the run, "still reachable" and "possible" do not. Not through the exit
# code, because a test that forks (tests/test_mtx.c feeds a FIFO from a child) would see its
# child exit with 99: the child leaves with _exit() and valgrind counts the parent's heap it
# inherited as its leaks. --child-silent-after-fork keeps those children out of the logs.
# VALGRIND_TRACK_ORIGINS=yes names where uninitialised values come from (about 1.5x slower).
export SBM_VALGRIND="valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
  --errors-for-leak-kinds=none --show-leak-kinds=definite,indirect --child-silent-after-fork=yes \
  --track-origins=${VALGRIND_TRACK_ORIGINS:-no} --track-fds=yes --num-callers=30"

# The CLI tests call the executable they are given: a wrapper that runs it under valgrind with
# a log per process (stdout and stderr stay the CLI's own, as the tests compare them).
wrapper=$build/sbm-under-valgrind
cat >"$wrapper" <<EOF
#!/usr/bin/env bash
exec \$SBM_VALGRIND --log-file="$logs/cli/%p.log" "$build/bin/sbm" "\$@"
EOF
chmod +x "$wrapper"

suites=${VALGRIND_ONLY:-"$(cd "$build/bin" && ls test_* | tr '\n' ' ') cli cli_ba cli_loss"}
t0=$(date +%s)

run_one() {
  local s=$1 rc
  local t1
  t1=$(date +%s)
  case $s in
    cli | cli_*)
      local script=test_$s.sh # tests/cli/test_cli.sh, test_cli_ba.sh, test_cli_loss.sh
      (cd "$build/tests" && bash "$root/tests/cli/$script" "$wrapper" "$build/tests/${s}_vg_tmp") \
        >"$logs/$s.log" 2>&1
      rc=$? ;;
    *)
      (cd "$build/tests" && $SBM_VALGRIND --log-file="$logs/$s.vg" "$build/bin/$s") \
        >"$logs/$s.log" 2>&1
      rc=$? ;;
  esac
  echo "$s rc=$rc $(( $(date +%s) - t1 ))s"
}
export -f run_one
export build logs root wrapper

# longest first, so the parallel runs end together
printf '%s\n' $suites | awk '{print ($1 ~ /^(cli|cli_ba|test_mtx|test_csr_spmv)$/) ? 0" "$1 : 1" "$1}' |
  sort -n | cut -d' ' -f2 |
  xargs -P "$jobs" -I{} bash -c 'run_one {}' | tee "$logs/summary.txt"

fail=0
while read -r s rcs _; do
  # 77: a GPU-only suite without a GPU (tests/CMakeLists.txt SKIP_RETURN_CODE)
  [ "${rcs#rc=}" = 0 ] || [ "${rcs#rc=}" = 77 ] || { fail=1; echo "FAILED: $s ($rcs), see $logs/$s.log"; }
done <"$logs/summary.txt"
# errors in any log (a CLI invocation may exit with its own code and still have errors)
bad=$(grep -lE "ERROR SUMMARY: [1-9]|definitely lost: [1-9]|indirectly lost: [1-9]" \
        "$logs"/*.vg "$logs"/cli/*.log 2>/dev/null)
if [ -n "$bad" ]; then
  fail=1
  echo "memcheck findings in:"
  echo "$bad"
  for f in $bad; do grep -A25 -E "^==[0-9]+== (Invalid|Conditional|Use of|Mismatched|Syscall|[0-9,]+ .*definitely|[0-9,]+ .*indirectly)" "$f" | head -60; done
fi
ncli=$(ls "$logs"/cli | wc -l)
echo "valgrind: $(wc -l <"$logs/summary.txt") suites, $ncli CLI processes, $(( $(date +%s) - t0 ))s," \
     "$( [ $fail = 0 ] && echo "no errors, no definite/indirect leaks" || echo FAILED)"
exit $fail
