#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Tests of where the sbm tool writes: the library's writer replaces only regular files
# (through a temporary and a rename), follows a symbolic link to a regular file (the target is
# replaced, the link stays a link), refuses a file with hard links, and writes anything else in place: a character device, a
# FIFO, "-" (the standard output, with the report lines moved to stderr). Write errors (ENOSPC
# on /dev/full) fail the command. Two outputs naming one file are a usage error. Every check
# looks at what the command leaves behind. Everything is written in a scratch folder, except
# the reads and writes of /dev/null and /dev/full, which stay the devices they are.
#
# usage: bash test_cli_output.sh <path-to-sbm> <tmpdir>
# Data: tests/data/mtx/LFAT5.mtx.gz and a small problem written by bal-generate.
set -u

SBM=${1:?usage: test_cli_output.sh <path-to-sbm> <tmpdir>}
TMP=${2:?usage: test_cli_output.sh <path-to-sbm> <tmpdir>}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
A=$REPO/tests/data/mtx/LFAT5.mtx.gz

rm -rf "$TMP"
mkdir -p "$TMP"
pass=0
fail=0
RUN=""
if command -v timeout >/dev/null 2>&1; then RUN="timeout 60"; fi

# ok, bad, runs, fails
. "$(dirname "$0")/cli_lib.sh"

# check DESCRIPTION CONDITION...: the test [ CONDITION ] holds
check() {
    local what=$1
    shift
    if [ "$@" ]; then ok; else bad "$what"; fi
}

# The reference output: gemm into a fresh regular file.
runs gemm "$A" "$A" -o "$TMP/ref.mtx" && ok
check "gemm wrote no file" -s "$TMP/ref.mtx"

# /dev/null: written in place, still a character device afterwards.
runs gemm "$A" "$A" -o /dev/null && ok
check "/dev/null is no longer a character device" -c /dev/null

# /dev/full: the ENOSPC of the write is reported, exit 1.
fails 1 "No space left on device" "-" gemm "$A" "$A" -o /dev/full
check "/dev/full is no longer a character device" -c /dev/full
SMALL=$TMP/small.txt
runs bal-generate --cameras 3 --points 7 --obs-per-point 3 --seed 5 -o "$SMALL" && ok
fails 1 "No space left on device" "-" ba-solve --bal "$SMALL" --iterations 2 -o /dev/full
fails 1 "No space left on device" "-" ba-schur --bal "$SMALL" -o "$TMP/S.mtx" --rhs /dev/full
check "ba-schur left S.mtx after a failed --rhs" ! -e "$TMP/S.mtx"
ln -s /dev/full "$TMP/to-full"
fails 1 "No space left on device" "-" gemm "$A" "$A" -o "$TMP/to-full"
check "the link to /dev/full was replaced" -L "$TMP/to-full"

# "-": the file on stdout, byte for byte the regular file's, the report line on stderr.
if ${RUN} "$SBM" gemm "$A" "$A" -o - >"$TMP/stdout.mtx" 2>"$TMP/stdout.err"; then
    if cmp -s "$TMP/stdout.mtx" "$TMP/ref.mtx" && grep -q -- "-> -" "$TMP/stdout.err"; then
        ok
    else
        bad "gemm -o -: stdout is not the file alone, or the report is not on stderr"
    fi
else
    bad "gemm -o - failed: $(cat "$TMP/stdout.err")"
fi
check "gemm -o - created a file named '-'" ! -e ./-
check "gemm -o - created a file named '-' in TMP" ! -e "$TMP/-"
# stdout redirected to a regular file through /dev/stdout: written in place, appended to.
echo "first line" >"$TMP/appended"
if ${RUN} "$SBM" gemm "$A" "$A" -o /dev/stdout >>"$TMP/appended" 2>/dev/null; then
    if head -n 1 "$TMP/appended" | grep -q "first line" &&
        [ "$(grep -c MatrixMarket "$TMP/appended")" -eq 1 ]; then ok; else bad "/dev/stdout replaced the file"; fi
else
    bad "gemm -o /dev/stdout failed"
fi

# A FIFO: written in place to a reader in the background, still a FIFO afterwards.
mkfifo "$TMP/fifo"
cat "$TMP/fifo" >"$TMP/from-fifo" &
reader=$!
runs gemm "$A" "$A" -o "$TMP/fifo" && ok
wait "$reader"
check "the FIFO is no longer a FIFO" -p "$TMP/fifo"
if cmp -s "$TMP/from-fifo" "$TMP/ref.mtx"; then ok; else bad "the FIFO's reader got other bytes"; fi

# A symbolic link to a regular file: the target replaced, the link stays a link.
echo "old" >"$TMP/target.mtx"
chmod 640 "$TMP/target.mtx"
ln -s target.mtx "$TMP/link.mtx"
runs gemm "$A" "$A" -o "$TMP/link.mtx" && ok
check "the link was replaced by a file" -L "$TMP/link.mtx"
if cmp -s "$TMP/target.mtx" "$TMP/ref.mtx"; then ok; else bad "the link's target was not updated"; fi
check "the target lost its mode" "$(stat -c %a "$TMP/target.mtx")" = 640
check "a temporary file was left behind" -z "$(ls "$TMP" | grep '\.tmp\.')"

# A regular file with a second name (a hard link): refused, exit 1, both names still one file
# with the old contents (the rename would have replaced one name only).
echo "old" >"$TMP/hard-a.mtx"
ln "$TMP/hard-a.mtx" "$TMP/hard-b.mtx"
fails 1 "$TMP/hard-b.mtx: has 2 hard links; writing it would replace this name only" "-" \
    gemm "$A" "$A" -o "$TMP/hard-b.mtx"
check "a refused write changed the hard-linked file" "$(cat "$TMP/hard-a.mtx")" = old
check "the hard link was cut" "$(stat -c %h "$TMP/hard-b.mtx")" = 2
rm -f "$TMP/hard-b.mtx"
runs gemm "$A" "$A" -o "$TMP/hard-a.mtx" && ok
if cmp -s "$TMP/hard-a.mtx" "$TMP/ref.mtx"; then ok; else bad "a file with one name again was not written"; fi

# Two outputs naming one file: a usage error, nothing written.
fails 2 "two outputs name '$TMP/X.mtx'" "$TMP/X.mtx" ba-schur --bal "$SMALL" -o "$TMP/X.mtx" --rhs "$TMP/X.mtx"
fails 2 "two outputs name '-'" "-" ba-schur --bal "$SMALL" -o - --rhs -
cp "$TMP/ref.mtx" "$TMP/same.mtx"
ln -s same.mtx "$TMP/same-link.mtx"
fails 2 "two outputs name the file" "-" ba-schur --bal "$SMALL" -o "$TMP/same.mtx" --rhs "$TMP/same-link.mtx"
if cmp -s "$TMP/same.mtx" "$TMP/ref.mtx"; then ok; else bad "a refused command changed same.mtx"; fi

echo "cli-output: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
