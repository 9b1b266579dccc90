#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build the libFuzzer targets with clang in their own folder and run each for N seconds.
#   tests/fuzz/run.sh [seconds per target, default 30] [target...]
# Seed corpora: the repository's tests/data (decompressed; the first 8 KiB of each file) and, when
# present, the optional extra data in SBM_DATA_DIR (default ../shared/data), copied into a
# temporary folder at run time (never into the repository). New inputs found stay in that
# temporary folder; a crash leaves its input as <build>/fuzz-artifacts/<target>-crash-* (never in
# the repository root) and the script fails. Environment: SBM_FUZZ_BUILD (build folder, default
# <repo>/build-fuzz), SBM_DATA_DIR, SBM_FUZZ_JOBS (build parallelism, default 2).
# The kept corpus, tests/fuzz/corpus/<target>/ (minimised inputs of earlier long runs), seeds
# every run too. SBM_FUZZ_KEEP=1 merges what a run found back into it (libFuzzer -merge=1: only
# inputs that add coverage), so that a long run's work is not lost:
#   SBM_FUZZ_KEEP=1 bash tests/fuzz/run.sh 600     # ten minutes per reader, corpus kept
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
secs=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_mtx fuzz_bal fuzz_g2o fuzz_cbc_create)
build=${SBM_FUZZ_BUILD:-$repo/build-fuzz}
data=$repo/tests/data
extra=${SBM_DATA_DIR:-$repo/../shared/data}
command -v clang >/dev/null || { echo "fuzz: clang not found, nothing to do" >&2; exit 2; }

cmake -S "$repo" -B "$build" -DCMAKE_C_COMPILER=clang -DSBM_FUZZ=ON -DSBM_CUDA=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSBM_BUILD_TESTS=OFF -DSBM_BUILD_BENCH=OFF \
  -DSBM_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" -j"${SBM_FUZZ_JOBS:-2}" --target "${targets[@]}" >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seed() { # seed <target> <files...>: the files that exist, decompressed, cut to their first 8 KiB
  local dir="$work/$1"; shift
  mkdir -p "$dir"
  for f in "$@"; do
    [ -f "$f" ] || continue
    case $f in
    *.gz) gzip -dc "$f" 2>/dev/null | head -c 8192 > "$dir/$(basename "$f" .gz)" || true ;;
    *.bz2) bzip2 -dc "$f" 2>/dev/null | head -c 8192 > "$dir/$(basename "$f" .bz2)" || true ;;
    *) head -c 8192 "$f" > "$dir/extra-$(basename "$f")" || true ;;
    esac
  done
}
seed fuzz_mtx "$data"/mtx/*.mtx.* "$extra"/mtx/*.mtx
seed fuzz_g2o "$data"/g2o/*.g2o.* "$data"/g2o/*.g2o "$extra"/g2o/*.g2o
seed fuzz_bal
seed fuzz_cbc_create
# BAL: the shipped problems are large; seed with their first observations and a tiny
# synthetic problem (valid, so the fuzzer starts past the header)
printf '2 2 3\n0 0 1.5 -2.0\n1 0 0.5 0.25\n1 1 -3 4\n' > "$work/fuzz_bal/head.txt"
for k in $(seq 1 18); do echo "0.$k" >> "$work/fuzz_bal/head.txt"; done
for k in 1 2 3 4 5 6; do echo "$k.5" >> "$work/fuzz_bal/head.txt"; done
for f in "$data"/bal/*.bz2; do [ -f "$f" ] && { bzip2 -dc "$f" 2>/dev/null | head -c 4000 > "$work/fuzz_bal/$(basename "$f" .bz2)" || true; }; done
[ -f "$work/fuzz_bal/head.txt" ] && bzip2 -k -c "$work/fuzz_bal/head.txt" > "$work/fuzz_bal/head.bz2" 2>/dev/null || true
[ -f "$work/fuzz_bal/head.txt" ] && gzip -c "$work/fuzz_bal/head.txt" > "$work/fuzz_bal/head.gz" 2>/dev/null || true
# cbc_create: a few hand-made byte strings (nbr nbc r c flags colptr-deltas rowind values)
printf '\x03\x02\x02\x02\x00\x00\x02\x01\x00\x02\x01\x08\x10\x18\x20\x28\x30\x38\x40\x48\x50\x58\x60' > "$work/fuzz_cbc_create/a"
printf '\x04\x04\x01\x03\x00\x00\x01\x01\x01\x01\x00\x01\x02\x03\xfe\x01\x02\xff\x05\x06\x07\x08\x09\x0a\x0b\x0c' > "$work/fuzz_cbc_create/b"

kept=$here/corpus
for t in "${targets[@]}"; do
  mkdir -p "$work/$t"
  [ -d "$kept/$t" ] && cp "$kept/$t"/* "$work/$t"/ 2>/dev/null || true
done

status=0
artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"
for t in "${targets[@]}"; do
  echo "== $t: ${secs}s =="
  mkdir -p "$work/$t"
  if ! "$build/bin/$t" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -timeout=10 \
       -artifact_prefix="$artifacts/$t-" \
       -print_final_stats=1 "$work/$t" 2>"$work/$t.log"; then
    status=1
    tail -60 "$work/$t.log"
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|stat::new_units_added" "$work/$t.log" | sed "s/^/  /" || true
  echo "  corpus: $(ls "$work/$t" | wc -l) inputs"
  if [ "${SBM_FUZZ_KEEP:-0}" = 1 ]; then
    mkdir -p "$kept/$t"
    "$build/bin/$t" -merge=1 -max_len=65536 -rss_limit_mb=2048 -timeout=10 "$kept/$t" "$work/$t" \
      >/dev/null 2>"$work/$t.merge.log" || { status=1; tail -20 "$work/$t.merge.log"; }
    echo "  kept corpus: $(ls "$kept/$t" | wc -l) inputs, $(du -sk "$kept/$t" | cut -f1) KiB in $kept/$t"
  fi
done
exit $status
