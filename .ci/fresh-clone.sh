#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A fresh clone works by itself: clone the current commit into an empty temporary folder (so
# nothing, in particular no ../shared/data, is beside it) and run there, verbatim, the two
# commands of README.md's "Two commands" section and the Python install-and-test command of its
# "Python" section, read from README.md itself so that the check cannot drift from what the
# README tells a reader. Fails if any command fails.
#   .ci/fresh-clone.sh            (env SBM_FRESH_KEEP=1: keep the temporary folder)
# Only committed work is cloned: uncommitted changes are not part of the check.
set -euo pipefail
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
commit=$(git -C "$repo" rev-parse HEAD)

# The commands: the non-comment lines of the first fenced block after a "## <section>" heading
# (a line ending in a backslash continues on the next).
section_commands() {
  awk -v want="$1" '
  /^## / { in_section = (substr($0, 4) == want); next }
  in_section && /^```/ { if (in_block) exit; in_block = 1; next }
  in_block {
    line = $0
    if (cont != "") { line = cont line; cont = "" }
    if (line ~ /\\$/) { cont = substr(line, 1, length(line) - 1); next }
    if (line ~ /^[[:space:]]*(#|$)/) next
    print line
  }' "$repo/README.md"
}
mapfile -t cmds < <(section_commands "Two commands")
if [ ${#cmds[@]} -ne 2 ]; then
  echo "fresh-clone: expected 2 commands in README.md's \"Two commands\" block, found ${#cmds[@]}:" >&2
  printf '  %s\n' "${cmds[@]}" >&2
  exit 1
fi

mapfile -t pycmds < <(section_commands "Python")
if [ ${#pycmds[@]} -ne 1 ]; then
  echo "fresh-clone: expected 1 command in README.md's \"Python\" block, found ${#pycmds[@]}:" >&2
  printf '  %s\n' "${pycmds[@]}" >&2
  exit 1
fi
cmds+=("${pycmds[0]}")

work=$(mktemp -d)
if [ "${SBM_FRESH_KEEP:-0}" = 1 ]; then
  echo "fresh-clone: keeping $work"
else
  trap 'rm -rf "$work"' EXIT
fi
git clone --quiet --no-checkout "$repo" "$work/sbm"
# the commit itself, also when it is on no branch of the source (a detached HEAD)
git -C "$work/sbm" fetch --quiet "$repo" "$commit" 2>/dev/null ||
  git -C "$work/sbm" fetch --quiet "$repo" HEAD
git -C "$work/sbm" -c advice.detachedHead=false checkout --quiet "$commit"
echo "fresh-clone: $commit in $work/sbm (nothing beside it: $(ls -A "$work" | tr '\n' ' '))"

status=0
for k in "${!cmds[@]}"; do
  echo "== fresh-clone: README command $((k + 1)) =="
  echo "\$ ${cmds[$k]}"
  if (cd "$work/sbm" && bash -c "${cmds[$k]}"); then
    echo "== fresh-clone: README command $((k + 1)) passed =="
  else
    echo "== fresh-clone: README command $((k + 1)) FAILED ==" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "fresh-clone: the ${#cmds[@]} README commands pass in a fresh clone of $commit"
exit $status
