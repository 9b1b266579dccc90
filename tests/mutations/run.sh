#!/usr/bin/env bash
# Mutation check of the nonlinear solvers' control flow. Each tests/mutations/*.patch
# plants one bug; it is applied to a scratch copy of the tree (the checkout is never touched),
# built without CUDA, and the solver suites are run. A mutation is caught when a suite fails.
# Prints one line per mutation with the failing tests and the first assertion message; exits 1
# if a mutation is missed or its patch no longer applies (then re-make the patch: README-mutations.md).
# A patch with a "Suites: a b" line is checked with those suites instead of the default ones.
#   tests/mutations/run.sh [work-dir]     (default: a new temporary directory, removed afterwards)
#   SBM_MUTATION_SUITES="test_lm_driver test_solver_control test_ba_lm test_ba test_slam test_slam_control test_slam_gn"
#   SBM_DATA_DIR=...                                              the real data sets (test_ba)
#   SBM_MUTATION_ONLY="30 31"        only the patches whose numbers are listed (default: all)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ $# -ge 1 ]; then mkdir -p "$1"; work=$(cd "$1" && pwd); keep=1; else work=$(mktemp -d); keep=0; fi
cleanup() { if [ "$keep" = 0 ]; then rm -rf "$work"; fi; }
trap cleanup EXIT
default_suites=${SBM_MUTATION_SUITES:-test_lm_driver test_solver_control test_ba_lm test_ba test_slam test_slam_control test_slam_gn}
# the baseline builds and runs every suite any patch names
suites=$(printf '%s\n' $default_suites $(sed -n 's/^Suites: //p' "$root"/tests/mutations/*.patch) | awk '!seen[$0]++' | tr '\n' ' ')
data=${SBM_DATA_DIR:-$root/../shared/data}
src=$work/src build=$work/build log=$work/log
jobs=$(nproc 2>/dev/null || echo 2)

# the tree as checked out (tracked and untracked, not ignored), without build folders
rm -rf "$src" && mkdir -p "$src"
(cd "$root" && git ls-files -z -co --exclude-standard | tar --null -T - -cf -) | tar -C "$src" -xf -
cmake -S "$src" -B "$build" -DSBM_CUDA=OFF -DSBM_BUILD_BENCH=OFF -DSBM_BUILD_EXAMPLES=OFF \
  -DSBM_DATA_DIR="$data" >"$log" 2>&1 || { cat "$log"; exit 2; }

# run the suites; print "suite: failing tests -- first assertion" for each failing suite
run_suites() {
  local out=0 s
  cmake --build "$build" -j"$jobs" --target $suites >"$log" 2>&1 || { cat "$log"; return 2; }
  for s in $suites; do
    if ! (cd "$build/tests" && "$build/bin/$s") >"$work/$s.out" 2>&1; then
      out=1
      local failed first
      failed=$(grep -E '^\[  FAILED  \] test_' "$work/$s.out" | sed 's/^\[  FAILED  \] //' | sort -u | tr '\n' ' ')
      first=$(grep -m1 -E '^ERROR:|[Ff]ailure|error:' "$work/$s.out" || true)
      echo "    $s: ${failed}-- ${first}"
    fi
  done
  return $out
}

echo "== baseline (no mutation) =="
if ! run_suites; then echo "the unmutated suites fail: fix them first"; exit 2; fi
echo "    all pass"

missed=0
for p in "$root"/tests/mutations/*.patch; do
  name=$(basename "$p" .patch)
  if [ -n "${SBM_MUTATION_ONLY:-}" ] && ! [[ " $SBM_MUTATION_ONLY " == *" ${name%%-*} "* ]]; then continue; fi
  echo "== $name: $(sed -n 's/^Mutation: //p' "$p" | head -1)"
  suites=$(sed -n 's/^Suites: //p' "$p" | head -1)
  suites=${suites:-$default_suites}
  if ! patch -d "$src" -p1 --forward --fuzz=1 -s <"$p" >"$log" 2>&1; then
    echo "    STALE: the patch no longer applies"; cat "$log"; missed=1; continue
  fi
  if run_suites; then echo "    MISSED: every suite passes"; missed=1; else echo "    CAUGHT"; fi
  patch -d "$src" -p1 -R -s <"$p" >"$log" 2>&1 || { echo "cannot revert $name"; cat "$log"; exit 2; }
done
exit $missed
