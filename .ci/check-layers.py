#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fails when a layer of the library includes a header of a layer above it (docs/LAYERS.md).

The layers are folders: blocks/, every folder of src/, and the kernel folders kernels/<backend>/
and kernels/<backend>/<component>/. A kernel folder belongs to its component's layer (the
library that holds it is that component's), but it is a layer of its own for includes: it may
include its component's front-end headers and the backend's shared headers, while the front end
never includes a kernel header (it dispatches through its kernel table). Each layer may include
its own headers, those of the layers listed below for it, the public headers of those layers
(include/), and system headers (<...>).
Run from anywhere: python3 .ci/check-layers.py [--root DIR]
python3 .ci/check-layers.py --self-test copies the tree to a temporary folder and checks that the
check passes there and fails once a core file includes a header of the BA layer (CI runs both).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# layer -> the layers it may use (directly); the order of the picture in docs/LAYERS.md
BELOW = {
    "blocks": [],
    "src/core": [],
    "src/solve": ["src/core"],
    "src/io": ["src/core", "blocks"],
    "src/ba": ["src/solve", "src/io", "src/core", "blocks"],
    "src/slam": ["src/solve", "src/io", "src/core", "blocks"],
    "src/dist": ["src/ba", "src/solve", "src/io", "src/core", "blocks"],
    # the backends' shared parts (table, threads, streams, pools, library handles)
    "kernels/cpu": ["src/core", "blocks"],
    "kernels/cuda": ["src/core", "blocks"],
}
# kernel components -> the front-end layer they belong to
COMPONENTS = {
    "gemm": "src/core", "csr_gemm": "src/core", "csr_spmv": "src/core", "csr_spmm": "src/core",
    "spmv": "src/core", "bdiag": "src/core", "matrix": "src/core", "vector": "src/core",
    "primitives": "src/core",
    "chol": "src/solve", "lm": "src/solve",
    "ba": "src/ba",
    "slam": "src/slam",
    "dist": "src/dist",
}
# the components of the core layer share the backend's primitives (sorts, scans, ESC)
SHARED_IN_BACKEND = ["primitives"]
for backend in ("cpu", "cuda"):
    for comp, front in COMPONENTS.items():
        below = [front, *BELOW[front], f"kernels/{backend}", *BELOW[f"kernels/{backend}"]]
        below += [f"kernels/{backend}/{s}" for s in SHARED_IN_BACKEND if s != comp]
        BELOW[f"kernels/{backend}/{comp}"] = below
# public headers and the layer that owns each
PUBLIC = {
    "sbm.h": "src/core",
    "sbm_io.h": "src/io",
    "sbm_solve.h": "src/solve",
    "sbm_chol.h": "src/solve",
    "sbm_ba.h": "src/ba",
    "sbm_slam.h": "src/slam",
    "sbm_dist.h": "src/dist",
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCE = (".h", ".c", ".cuh", ".cu")


def allowed(layer):
    return {layer, *BELOW[layer]}


def layer_folders(root):
    """Every folder that is a layer, and every folder under blocks/, src/ or kernels/ that is not."""
    found, unknown = [], []
    for top in ("blocks", "src", "kernels"):
        base = os.path.join(root, top)
        if not os.path.isdir(base):
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
            if rel in ("src", "kernels"):
                continue
            has_source = any(f.endswith(SOURCE) for f in filenames)
            if rel in BELOW:
                found.append(rel)
            elif has_source or dirnames == []:
                unknown.append(rel)
    return found, unknown


def check(root):
    folders, unknown = layer_folders(root)
    errors = [f"{d}: a folder that is not a layer in .ci/check-layers.py" for d in unknown]
    headers = {}
    for d in folders:
        for f in os.listdir(os.path.join(root, d)):
            if f.endswith((".h", ".cuh")):
                if f in headers or f in PUBLIC:
                    errors.append(f"{d}/{f}: a header name used twice (also in {headers.get(f, 'include')})")
                headers[f] = d
    files = [(d, os.path.join(root, d, f)) for d in folders
             for f in sorted(os.listdir(os.path.join(root, d))) if f.endswith(SOURCE)]
    files += [(PUBLIC[f], os.path.join(root, "include", f)) for f in sorted(PUBLIC)
              if os.path.exists(os.path.join(root, "include", f))]
    checked = 0
    for layer, path in files:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        for m in INCLUDE.finditer(text):
            header = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            owner = PUBLIC.get(header, headers.get(header))
            rel = os.path.relpath(path, root)
            if owner is None:
                errors.append(f"{rel}:{line}: \"{header}\" belongs to no layer")
            elif owner not in allowed(layer):
                errors.append(f"{rel}:{line}: layer {layer} includes \"{header}\" of layer {owner}, "
                              f"which is not below it (allowed: {', '.join(sorted(allowed(layer)))})")
            checked += 1
    for e in errors:
        print(e)
    print(f"check-layers: {len(files)} files in {len(folders)} layers, {checked} includes, "
          f"{len(errors)} violations")
    return 1 if errors else 0


def self_test():
    """The check passes on a copy of the tree and fails once src/core includes a BA header."""
    with tempfile.TemporaryDirectory(prefix="check-layers-") as tmp:
        for top in ("blocks", "src", "kernels", "include"):
            shutil.copytree(os.path.join(ROOT, top), os.path.join(tmp, top))
        script = os.path.abspath(__file__)

        def run(what):
            r = subprocess.run([sys.executable, script, "--root", tmp], capture_output=True,
                               text=True)
            print(f"self-test, {what}: exit {r.returncode}: {r.stdout.strip().splitlines()[-1]}")
            return r

        clean = run("the copy as it is")
        victim = os.path.join(tmp, "src", "core", "context.c")
        with open(victim, encoding="utf-8") as fh:
            text = fh.read()
        with open(victim, "w", encoding="utf-8") as fh:
            fh.write('#include "ba_internal.h"\n' + text)
        upward = run("src/core/context.c including ba_internal.h")
        named = "src/core/context.c:1: layer src/core includes \"ba_internal.h\" of layer src/ba"
        ok = clean.returncode == 0 and upward.returncode == 1 and named in upward.stdout
        print("check-layers self-test: " + ("passed" if ok else "FAILED (expected exit 0, then exit 1 "
                                             "naming " + named + ")"))
        return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = ROOT
    if len(sys.argv) == 3 and sys.argv[1] == "--root":
        root = os.path.abspath(sys.argv[2])
    elif len(sys.argv) != 1:
        print("usage: check-layers.py [--root DIR | --self-test]", file=sys.stderr)
        return 2
    return check(root)


if __name__ == "__main__":
    sys.exit(main())
