#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The Python package on a GPU machine without network access: build it with the CUDA backend and
# run python/tests (test_cuda.py included: CuPy and PyTorch arrays on a CUDA context, checked
# against the CPU backend) and the examples with --gpu. Logs go to $OUT (default ./out).
# Needs what the device image lacks, carried beside the checkout (both ignored by git):
#   .deps/    the Debian packages of .ci/device-run.sh (SuiteSparse AMD, libbz2-dev, ...)
#   .whl/     cffi (cp3XX manylinux x86_64) and pycparser, unless the image has them:
#             pip download --only-binary=:all: --python-version 3.12 --implementation cp \
#                 --platform manylinux2014_x86_64 -d .whl cffi pycparser
# and, in the image, numpy, scikit-build-core, cmake (>= 3.22) and pytest (CuPy, PyTorch: their
# tests skip without them). Installs into the image's Python (the machine is discarded after).
set -u
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
log="$OUT/python-device.log"
exec > >(tee "$log") 2>&1
py=${PYTHON:-python3}
mkdir -p /opt/deps
for f in .deps/*.deb; do [ -e "$f" ] && dpkg -x "$f" /opt/deps; done
for l in /opt/deps/usr/lib/x86_64-linux-gnu/*.so; do      # dev links to Debian's exact files
  [ -e "$l" ] && continue
  real=$(ls /lib/x86_64-linux-gnu/"$(basename "$l")".[0-9]* 2>/dev/null | head -1)
  [ -n "$real" ] && ln -sf "$real" "$l"
done
export LD_LIBRARY_PATH=/opt/deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $($py --version)"
if ! $py -c "import cffi, pycparser" 2>/dev/null; then
  $py -m pip install --no-index --find-links .whl cffi pycparser || exit 1
fi
$py -c "import cupy; print('cupy', cupy.__version__)" || echo "no CuPy: its tests skip"
$py -c "import torch; print('torch', torch.__version__, torch.cuda.is_available())" || echo "no PyTorch"
t0=$(date +%s)
CMAKE_BUILD_PARALLEL_LEVEL=16 $py -m pip install --no-index --no-build-isolation --no-deps . \
  -Cbuild-dir=build/python-device -Ccmake.define.SBM_CUDA=ON \
  -Ccmake.define.CMAKE_PREFIX_PATH=/opt/deps/usr >"$OUT/python-build.log" 2>&1
rc=$?
echo "== pip install . (CUDA) rc=$rc in $(( $(date +%s) - t0 )) s"
[ $rc -eq 0 ] || { tail -40 "$OUT/python-build.log"; exit 1; }
$py -c "import sbm; print('sbm', sbm.__version__, 'CUDA', sbm.has_cuda(), 'devices', sbm.cuda_device_count())"
repo=$PWD
(cd /tmp && $py -m pytest -rs -p no:cacheprovider "$repo/python/tests")
rc=$?
echo "== pytest rc=$rc"
for e in python/examples/*.py; do
  ITERATIONS=5 $py "$e" --gpu >"$OUT/example-$(basename "$e" .py).log" 2>&1
  echo "== example $e --gpu rc=$? ($(tail -1 "$OUT/example-$(basename "$e" .py).log"))"
done
exit $rc
