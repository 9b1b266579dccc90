#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fails when the README's "API in one example" is not examples/minimal_gemm.c verbatim: the README
# shows the file's content in its first ```c block after that heading.
# usage: bash .ci/check-readme.sh
set -euo pipefail
cd "$(dirname "$0")/.."
shown=$(awk '/^## API in one example/ { section = 1; next }
             section && /^## / { exit }
             section && !inside && /^```c$/ { inside = 1; next }
             inside && /^```$/ { exit }
             inside { print }' README.md)
if [ -z "$shown" ]; then
  echo "check-readme: README.md has no \`\`\`c block under \"## API in one example\"" >&2
  exit 1
fi
if ! diff -u examples/minimal_gemm.c <(printf '%s\n' "$shown") >&2; then
  echo "check-readme: the README's API example differs from examples/minimal_gemm.c (diff above)" >&2
  exit 1
fi
echo "check-readme: the README's API example is examples/minimal_gemm.c"
