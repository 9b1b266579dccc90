#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# SBM_REQUIRE_GPU=1 (set by .ci/device-run.sh) turns "no GPU" skips into failures. Checked on
# whatever machine runs it: without a GPU (or a CUDA build) a mixed suite's [cuda] cases and a
# GPU-only suite must fail with the variable set and skip without it; with a GPU both must pass
# with it set. SBM_REQUIRE_GPU=0 or empty is the same as unset.
#   test_require_gpu.sh MIXED_SUITE GPU_ONLY_SUITE
set -u
mixed=$1 gpu_only=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAILED: $*"; exit 1; }

run() { # run OUTFILE [VAR=VALUE] SUITE: the exit status
  local out=$1
  shift
  env -u SBM_REQUIRE_GPU "$@" >"$out" 2>&1
  echo $?
}

# the mixed suite ([cpu] and [cuda] cases): does this machine skip its [cuda] cases?
rc=$(run "$tmp/plain" "$mixed")
[ "$rc" = 0 ] || { cat "$tmp/plain"; fail "$mixed fails without SBM_REQUIRE_GPU (rc $rc)"; }
if grep -qE '^\[  SKIPPED \] .*\[cuda\]' "$tmp/plain"; then
  echo "no usable GPU here: [cuda] cases are skipped without SBM_REQUIRE_GPU"
  rc=$(run "$tmp/req" SBM_REQUIRE_GPU=1 "$mixed")
  [ "$rc" != 0 ] || fail "$mixed passes with SBM_REQUIRE_GPU=1 and no GPU"
  grep -qE '^\[  FAILED  \] .*\[cuda\]' "$tmp/req" || { cat "$tmp/req"; fail "no [cuda] case failed"; }
  grep -q "SBM_REQUIRE_GPU is set but the \[cuda\] case cannot run: " "$tmp/req" ||
    { cat "$tmp/req"; fail "the failure does not say why"; }
  grep -qE '^\[  FAILED  \] .*\[cpu\]' "$tmp/req" && { cat "$tmp/req"; fail "a [cpu] case failed"; }
  for v in 0 ""; do
    rc=$(run "$tmp/zero" SBM_REQUIRE_GPU=$v "$mixed")
    [ "$rc" = 0 ] || fail "SBM_REQUIRE_GPU='$v' does not behave as unset (rc $rc)"
  done
  rc=$(run "$tmp/gpu" "$gpu_only")
  [ "$rc" = 77 ] || { cat "$tmp/gpu"; fail "$gpu_only: rc $rc without SBM_REQUIRE_GPU, 77 expected"; }
  rc=$(run "$tmp/gpu_req" SBM_REQUIRE_GPU=1 "$gpu_only")
  [ "$rc" = 1 ] || { cat "$tmp/gpu_req"; fail "$gpu_only: rc $rc with SBM_REQUIRE_GPU=1, 1 expected"; }
  grep -q "FAILED: SBM_REQUIRE_GPU is set but the suite cannot run: " "$tmp/gpu_req" ||
    { cat "$tmp/gpu_req"; fail "$gpu_only does not say why it failed"; }
  echo "SBM_REQUIRE_GPU=1: both suites fail, naming the reason"
else
  echo "a GPU is usable here: with SBM_REQUIRE_GPU=1 both suites must pass"
  rc=$(run "$tmp/req" SBM_REQUIRE_GPU=1 "$mixed")
  [ "$rc" = 0 ] || { cat "$tmp/req"; fail "$mixed fails with SBM_REQUIRE_GPU=1 on a GPU machine"; }
  rc=$(run "$tmp/gpu_req" SBM_REQUIRE_GPU=1 "$gpu_only")
  [ "$rc" = 0 ] || { cat "$tmp/gpu_req"; fail "$gpu_only fails with SBM_REQUIRE_GPU=1 (rc $rc)"; }
fi
echo "ok"
