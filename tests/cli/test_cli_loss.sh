#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Tests of --loss none|huber:A|cauchy:A, the robust loss of the sbm tool's solvers (ba-solve,
# slam-solve), through its executable: one parser for both commands (examples/cli_ba_common.c),
# every bad value a usage error (exit 2) naming the option and the text at fault, the summary
# line naming the loss as --loss takes it. The solves with a loss are checked by the library's
# suites (test_ba, test_slam); here a run with a loss succeeds and says which it used.
#
# usage: bash test_cli_loss.sh <path-to-sbm> <tmpdir>
# Data: tests/data/g2o/tinyGrid3D.g2o.bz2 and a small problem written by bal-generate.
set -u

SBM=${1:?usage: test_cli_loss.sh <path-to-sbm> <tmpdir>}
TMP=${2:?usage: test_cli_loss.sh <path-to-sbm> <tmpdir>}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
G=$REPO/tests/data/g2o/tinyGrid3D.g2o.bz2

rm -rf "$TMP"
mkdir -p "$TMP"
pass=0
fail=0

# ok, bad, runs, fails
. "$(dirname "$0")/cli_lib.sh"

if [ ! -f "$G" ]; then
    echo "test_cli_loss.sh: $G not found (the repository's tests/data)"
    echo "cli-loss: 0 passed, 1 failed"
    exit 1
fi
SMALL=$TMP/small.txt
runs bal-generate --cameras 3 --points 7 --obs-per-point 3 --seed 5 -o "$SMALL" && ok

for c in ba-solve slam-solve; do
    if [ $c = ba-solve ]; then set -- ba-solve --bal "$SMALL"; else set -- slam-solve --g2o "$G"; fi
    fails 2 "${1}: --loss: 'hubr:1' is not none, huber:A or cauchy:A" "-" "$@" --loss hubr:1
    fails 2 "--loss: scale '-1' must be a finite number > 0" "-" "$@" --loss huber:-1
    fails 2 "--loss: scale '0' must be a finite number > 0" "-" "$@" --loss=cauchy:0
    fails 2 "option --loss needs a value" "-" "$@" --loss
done
fails 2 "--loss: 'huber' needs a scale: huber:A or cauchy:A with A > 0" "-" ba-solve --bal "$SMALL" --loss huber
fails 2 "--loss: scale '' must be a finite number > 0" "-" ba-solve --bal "$SMALL" --loss cauchy:
fails 2 "--loss: scale 'nan' must be a finite number > 0" "-" ba-solve --bal "$SMALL" --loss huber:nan
fails 2 "--loss: scale 'inf' must be a finite number > 0" "-" slam-solve --g2o "$G" --loss cauchy:inf
fails 2 "--loss: scale '1e999' must be a finite number > 0" "-" ba-solve --bal "$SMALL" --loss huber:1e999
fails 2 "--loss: scale '2x' must be a finite number > 0" "-" ba-solve --bal "$SMALL" --loss huber:2x
fails 2 "--loss: scale '1e-151' is not from 1e-6 to 1e150" "-" slam-solve --g2o "$G" --loss huber:1e-151
fails 2 "--loss: scale '2e150' is not from 1e-6 to 1e150" "-" ba-solve --bal "$SMALL" --loss cauchy:2e150
# below 1e-6 a loss flattens every residual and the solve stopped at once, "converged"
fails 2 "--loss: scale '1e-150' is not from 1e-6 to 1e150" "-" ba-solve --bal "$SMALL" --loss cauchy:1e-150
fails 2 "--loss: scale '9e-7' is not from 1e-6 to 1e150" "-" slam-solve --g2o "$G" --loss huber:9e-7
runs ba-solve --bal "$SMALL" --iterations 3 --loss cauchy:1e-6 &&
    { grep -qE "in [1-9][0-9]* iterations" "$TMP/run.out" && ok || bad "cauchy:1e-6 took no step: $(grep '^cost ' "$TMP/run.out")"; }
fails 2 "--loss: 'none:1' is not none, huber:A or cauchy:A" "-" ba-solve --bal "$SMALL" --loss none:1
fails 2 "--loss: 'Huber:1' is not none, huber:A or cauchy:A" "-" slam-solve --g2o "$G" --loss Huber:1
grep -q "^usage: sbm slam-solve" "$TMP/f.err" && ok || bad "--loss error without the usage: $(cat "$TMP/f.err")"
fails 2 "unknown option '--loss'" "$TMP/S.mtx" ba-schur --bal "$SMALL" --loss huber:1 -o "$TMP/S.mtx"
fails 2 "unknown option '--loss'" "$TMP/L.mtx" slam-info --g2o "$G" --loss huber:1 -o "$TMP/L.mtx"
# summary_loss WHAT TEXT [SOLVER] : the summary line of $TMP/run.out names the linear solver
# (default dense Cholesky), then "loss TEXT;"
summary_loss() {
    grep -E "^cost [0-9.e+-]+ -> [0-9.e+-]+ .* iterations " "$TMP/run.out" |
        grep -qF "), ${3:-dense Cholesky}, loss $2; max |gradient| " && ok ||
        bad "$1: no '${3:-dense Cholesky}, loss $2' in the summary: $(grep '^cost ' "$TMP/run.out")"
}
runs ba-solve --bal "$SMALL" --iterations 2 && summary_loss "ba-solve default" none
runs ba-solve --bal "$SMALL" --iterations 2 --loss huber:0.1 && summary_loss "ba-solve huber" huber:0.1
runs ba-solve --generate 10,200,4,3 --iterations 2 --linear-solver sparse --loss=cauchy:2.5e-3 &&
    summary_loss "ba-solve cauchy" cauchy:0.0025 "sparse Cholesky"
# the scale to the digits that read back
runs ba-solve --bal "$SMALL" --iterations 1 --loss cauchy:1.0000000000000002 &&
    summary_loss "ba-solve 17 digits" cauchy:1.0000000000000002
runs ba-solve --bal "$SMALL" --iterations 1 --loss none && summary_loss "ba-solve none" none
# a repeated --loss is a usage error (it was silently the last one)
if "$SBM" ba-solve --bal "$SMALL" --iterations 1 --loss huber:1 --loss none >"$TMP/f.out" 2>"$TMP/f.err"; then
    bad "a repeated --loss ran"
else
    grep -q "option --loss given twice" "$TMP/f.err" && ok || bad "repeated --loss: $(cat "$TMP/f.err")"
fi
runs slam-solve --g2o "$G" --iterations 2 && summary_loss "slam-solve default" none "sparse Cholesky" &&
    { grep -qx "Levenberg-Marquardt, cost 0.5 chi2" "$TMP/run.out" && ok || bad "slam-solve: cost line: $(head -2 "$TMP/run.out")"; }
runs slam-solve --g2o "$G" --iterations 2 --method gn --loss cauchy:3 && summary_loss "slam-solve cauchy" cauchy:3 "sparse Cholesky" &&
    { grep -qx "Gauss-Newton, cost 0.5 sum rho(e^T Omega e), loss cauchy:3" "$TMP/run.out" && ok ||
        bad "slam-solve --loss: cost line: $(head -2 "$TMP/run.out")"; }
runs slam-solve --g2o "$G" --iterations 2 --loss huber:1e150 && summary_loss "slam-solve huber" huber:1e+150 "sparse Cholesky"
for c in ba-solve slam-solve; do
    "$SBM" $c --help | grep -qF -- "[--loss none|huber:A|cauchy:A]" && ok || bad "sbm $c --help: no --loss"
done

echo "cli-loss: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
