#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Tests of odd and hostile inputs through the sbm tool: a file without newlines fails
# at once; odd but valid files read (a byte-order mark, negative g2o ids); values that cannot be
# solved or written are refused with the element named, and leave no output; a --generate with
# trailing garbage is a usage error; ba-solve warns about what no residual determines. Every file is written in a scratch folder.
#
# usage: bash test_cli_input.sh <path-to-sbm> <tmpdir>
set -u

SBM=${1:?usage: test_cli_input.sh <path-to-sbm> <tmpdir>}
TMP=${2:?usage: test_cli_input.sh <path-to-sbm> <tmpdir>}

rm -rf "$TMP"
mkdir -p "$TMP"
pass=0
fail=0
RUN=""
if command -v timeout >/dev/null 2>&1; then RUN="timeout 60"; fi

# ok, bad, runs, fails; the test data beside this script
DATA="$(cd "$(dirname "$0")/../data" && pwd)"
. "$(dirname "$0")/cli_lib.sh"

# Bounded reads: /dev/zero has no newline; refused after the 16 MiB line limit, in seconds.
if [ -r /dev/zero ]; then
    start=$(date +%s)
    fails 1 "/dev/zero:1: the line is longer than 16777216 bytes" "-" info /dev/zero
    fails 1 "/dev/zero:1: the line is longer" "-" slam-info --g2o /dev/zero -o "$TMP/L.mtx"
    fails 1 "/dev/zero:1: the line is longer" "$TMP/S.mtx" ba-schur --bal /dev/zero -o "$TMP/S.mtx"
    [ $(($(date +%s) - start)) -lt 30 ] && ok || bad "reading /dev/zero three times took over 30 s"
fi

# A byte-order mark and negative or extreme g2o ids read.
printf '\357\273\277VERTEX_SE2 -1 0 0 0\nVERTEX_SE2 2147483647 1 0 0.1\nVERTEX_SE2 -2147483648 2 0 0\nEDGE_SE2 -1 2147483647 1 0 0 1 0 0 1 0 1\nEDGE_SE2 2147483647 -2147483648 1 0 0 1 0 0 1 0 1\n' >"$TMP/ids.g2o"
runs slam-solve --g2o "$TMP/ids.g2o" -o "$TMP/ids-out.g2o" && ok
grep -q "^VERTEX_SE2 -2147483648 " "$TMP/ids-out.g2o" 2>/dev/null && ok || bad "slam-solve lost the negative ids"
printf '\357\273\277%%%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 3\n' >"$TMP/bom.mtx"
runs info "$TMP/bom.mtx" && { grep -qx "nnz: 1" "$TMP/run.out" && ok || bad "info on a BOM file: $(cat "$TMP/run.out")"; }

# Symmetric files store one triangle: both stored is refused with the line.
printf '%%%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1\n1 2 1\n' >"$TMP/both.mtx"
fails 1 "both.mtx:4: entry (1,2) mirrors the entry (2,1) on line 3" "$TMP/C.mtx" gemm "$TMP/both.mtx" "$TMP/both.mtx" -o "$TMP/C.mtx"
# Duplicates whose sum overflows.
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1e308\n1 1 1e308\n' >"$TMP/dup.mtx"
fails 1 "dup.mtx:4: the duplicates of entry (1,1) sum to inf" "$TMP/C.mtx" gemm "$TMP/dup.mtx" "$TMP/dup.mtx" -o "$TMP/C.mtx"

# Finite in, finite out: a pose of 1e308 makes the initial cost inf; refused, naming the edge,
# and the output is not written.
printf 'VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 1e308 0 0\nEDGE_SE2 0 1 1 0 0 1 0 0 1 0 1\n' >"$TMP/big.g2o"
fails 1 "the initial cost is inf: edge 0 (vertex 0 to vertex 1)" "$TMP/big-out.g2o" slam-solve --g2o "$TMP/big.g2o" -o "$TMP/big-out.g2o"
# A generator asked for noise that overflows.
fails 1 "pixel_noise = 1e+308 makes" "$TMP/noise.txt" bal-generate --cameras 4 --points 7 --noise 1e308 -o "$TMP/noise.txt"
fails 1 "perturbation = 1e+308 makes" "$TMP/noise.txt" bal-generate --cameras 4 --points 7 --perturbation 1e308 -o "$TMP/noise.txt"

# --generate takes C,P,K[,SEED] and nothing more.
for g in 3,20,2,1,garbage 3,20,2,1, "3, 20,2" 3,20,+2 3,20; do
    fails 2 "invalid --generate '$g' (C,P,K[,SEED])" "-" ba-solve --generate "$g"
done
# Underdetermined problems are named before the solve: one camera, one point, one observation;
# two cameras of which one sees nothing.
printf '1 1 1\n0 0 0.5 0.5\n0\n0\n0\n0\n0\n-1\n500\n0\n0\n0\n0\n5\n' >"$TMP/one.bal"
if runs ba-solve --bal "$TMP/one.bal" --iterations 2; then
    grep -qF "point 0 (and 0 more) is seen by 1 camera: its 3 coordinates are not determined" "$TMP/run.err" && ok ||
        bad "ba-solve one.bal: no warning on the point: $(cat "$TMP/run.err")"
    grep -qF "2 residuals for 12 parameters: the problem is underdetermined" "$TMP/run.err" && ok ||
        bad "ba-solve one.bal: no underdetermined warning: $(cat "$TMP/run.err")"
fi
printf '2 1 2\n0 0 0.5 0.5\n0 0 0.4 0.5\n' >"$TMP/idle.bal"
for k in 1 2; do printf '0\n0\n0\n0\n0\n-1\n500\n0\n0\n' >>"$TMP/idle.bal"; done
printf '0\n0\n5\n' >>"$TMP/idle.bal"
if runs ba-solve --bal "$TMP/idle.bal" --iterations 1; then
    grep -qF "camera 1 (and 0 more) has no observation" "$TMP/run.err" && ok ||
        bad "ba-solve idle.bal: no warning on camera 1: $(cat "$TMP/run.err")"
fi
runs ba-solve --generate 4,20,3,7 --iterations 1 && { [ -s "$TMP/run.err" ] && bad "warnings on a determined problem: $(cat "$TMP/run.err")" || ok; }

# An output into a missing folder is refused before the work (it was found after the solve).
start=$(date +%s)
fails 1 "cannot write '$TMP/no/such/dir/out.txt': the folder '$TMP/no/such/dir' does not exist" "-" \
    ba-solve --generate 40,2000,3,7 --iterations 50 -o "$TMP/no/such/dir/out.txt"
[ $(( $(date +%s) - start )) -le 5 ] && ok || bad "ba-solve -o into a missing folder: refused only after the solve"
fails 1 "the folder '$TMP/no/such' does not exist" "-" slam-solve --g2o "$DATA/g2o/tinyGrid3D.g2o.bz2" -o "$TMP/no/such/x.g2o"
fails 1 "the folder '$TMP/no/such' does not exist" "-" gemm "$DATA/mtx/karate.mtx.gz" "$DATA/mtx/karate.mtx.gz" -o "$TMP/no/such/C.mtx"

# --threads N with any command: a usage error outside 1..64; the same bits for 1 and 2 threads.
fails 2 "invalid thread count '0' (--threads: 1 to 64)" "-" --threads 0 ba-solve --generate 4,20,3,7
fails 2 "invalid thread count 'x' (--threads: 1 to 64)" "-" ba-solve --generate 4,20,3,7 --threads=x
fails 2 "option --threads needs a value" "-" ba-solve --generate 4,20,3,7 --threads
if runs ba-solve --generate 6,60,3,7 --iterations 3 --threads 1 -o "$TMP/t1.txt" &&
   runs ba-solve --generate 6,60,3,7 --iterations 3 --threads 2 -o "$TMP/t2.txt"; then
    cmp -s "$TMP/t1.txt" "$TMP/t2.txt" && ok || bad "--threads 1 and 2 wrote different problems"
fi

# "-" as an input is the standard input (plain or compressed), the same result as the file.
if zcat "$DATA/mtx/karate.mtx.gz" | "$SBM" info - >"$TMP/stdin.out" 2>"$TMP/stdin.err" &&
   "$SBM" info "$DATA/mtx/karate.mtx.gz" >"$TMP/file.out" 2>&1; then
    diff <(tail -n +2 "$TMP/stdin.out") <(tail -n +2 "$TMP/file.out") >/dev/null && ok ||
        bad "info - differs from info FILE"
else
    bad "info - : $(cat "$TMP/stdin.err")"
fi
if "$SBM" slam-solve "$DATA/g2o/intel.g2o.bz2" --iterations 2 -o "$TMP/f.g2o" >/dev/null 2>&1 &&
   "$SBM" slam-solve - --iterations 2 -o "$TMP/s.g2o" <"$DATA/g2o/intel.g2o.bz2" >/dev/null 2>"$TMP/stdin.err"; then
    cmp -s "$TMP/f.g2o" "$TMP/s.g2o" && ok || bad "slam-solve - wrote another graph than slam-solve FILE"
else
    bad "slam-solve - : $(cat "$TMP/stdin.err")"
fi
fails 2 "one input at most can be '-' (the standard input)" "-" gemm - - -o "$TMP/never.mtx"

# Under an address-space limit (ulimit -v) OpenBLAS's threads retry their buffer mapping for
# ever: the process must still end, with the limit named where the dense kernels cannot run.
# (A sanitizer or valgrind build cannot start under such a limit, nor a CUDA build, whose
# libcudart and libnccl mappings alone exceed 80 MB: skipped, visibly.)
if (ulimit -v 80000 && "$SBM" --version >/dev/null 2>&1); then
    (ulimit -v 80000; timeout 60 "$SBM" info "$DATA/mtx/karate.mtx.gz" >"$TMP/lim.out" 2>"$TMP/lim.err")
    got=$?
    [ "$got" -eq 0 ] && grep -q "^rows: 34" "$TMP/lim.out" && ok ||
        bad "sbm info under ulimit -v 80000: exit $got (124: it hung at exit): $(cat "$TMP/lim.err")"
    (ulimit -v 120000; timeout 60 "$SBM" ba-solve --generate 100,3000,4 --linear-solver dense \
        --iterations 2 >"$TMP/lim.out" 2>"$TMP/lim.err")
    got=$?
    [ "$got" -eq 1 ] && grep -q "address-space limit (ulimit -v: [0-9]* MiB) leaves no room" "$TMP/lim.err" && ok ||
        bad "ba-solve under ulimit -v 120000: exit $got (124: it hung): $(cat "$TMP/lim.err")"
else
    echo "skipped: the address-space limit checks (sbm does not start under ulimit -v 80000 here: a sanitizer, valgrind or CUDA build)"
fi

echo "cli-input: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
