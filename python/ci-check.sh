#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The Python package on the CPU (a stage of .ci/run): a fresh virtual environment, `pip install .`
# from the repository root (a CPU-only build of the C library, in its own build folder), then the
# pytest suites of python/tests. Fails when pip or a test fails, and when no test is collected
# (pytest's exit status 5) or fewer ran than python/tests holds files for.
#   bash python/ci-check.sh [VENV]        (default: a temporary folder, removed afterwards)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-}
if [ -z "$venv" ]; then
  venv=$(mktemp -d)/venv
  trap 'rm -rf "$(dirname "$venv")"' EXIT
fi
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet pytest scipy numpy
"$venv/bin/pip" install . -Cbuild-dir=build/python-ci -Ccmake.define.SBM_CUDA=OFF
"$venv/bin/python" -c "import sbm; print('python-check: sbm', sbm.__version__, 'from', sbm.__file__, '- CUDA:', sbm.has_cuda())"
# run from outside the checkout so that `import sbm` is the installed package, not python/sbm
log=$(mktemp)
set +e
(cd /tmp && "$venv/bin/python" -m pytest -rs -p no:cacheprovider "$OLDPWD/python/tests") | tee "$log"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -eq 5 ]; then
  echo "python-check: no tests collected in python/tests" >&2
  exit 1
fi
[ "$rc" -eq 0 ] || { echo "python-check: pytest failed (exit status $rc)" >&2; exit 1; }
passed=$(grep -Eo '[0-9]+ passed' "$log" | tail -1 | cut -d' ' -f1)
files=$(ls python/tests/test_*.py | wc -l)
if [ -z "$passed" ] || [ "$passed" -lt "$files" ]; then
  echo "python-check: only ${passed:-0} tests passed for $files test files" >&2
  exit 1
fi
rm -f "$log"
echo "python-check: $passed tests passed"
