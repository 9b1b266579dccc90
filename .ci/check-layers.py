#!/usr/bin/env python3
"""Fails when a layer of the library includes a header of a layer above it (docs/LAYERS.md).

Every folder of src/ is a layer; each may include its own headers, those of the layers listed
below for it, the public headers of those layers (include/), and system headers (<...>).
Run from anywhere: python3 .ci/check-layers.py
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# layer -> the layers it may use (directly); the order of the picture in docs/LAYERS.md
BELOW = {
    "blocks": [],
    "geometry": [],
    "core": [],
    "cpu": ["core", "blocks", "geometry"],
    "cuda": ["core", "blocks", "geometry"],
    "io": ["core", "geometry"],
    "solve": ["core"],
    "ba": ["solve", "io", "core", "geometry"],
    "slam": ["solve", "io", "core", "geometry"],
}
# public headers and the layer that owns each
PUBLIC = {
    "sbm.h": "core",
    "sbm_io.h": "io",
    "sbm_solve.h": "solve",
    "sbm_ba.h": "ba",
    "sbm_slam.h": "slam",
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def allowed(layer):
    return {layer, *BELOW[layer]}


def owner_of(header, headers_by_layer):
    if header in PUBLIC:
        return PUBLIC[header]
    for layer, names in headers_by_layer.items():
        if header in names:
            return layer
    return None


def main():
    src = os.path.join(ROOT, "src")
    folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    unknown = [d for d in folders if d not in BELOW]
    errors = []
    if unknown:
        errors.append(f"src/{unknown[0]}: a folder that is not a layer in .ci/check-layers.py")
    headers = {d: set(f for f in os.listdir(os.path.join(src, d)) if f.endswith((".h", ".cuh")))
               for d in folders}
    files = [(d, os.path.join(src, d, f)) for d in folders for f in sorted(os.listdir(os.path.join(src, d)))]
    files += [(PUBLIC[f], os.path.join(ROOT, "include", f)) for f in sorted(PUBLIC)]
    checked = 0
    for layer, path in files:
        if layer not in BELOW:
            continue
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        for m in INCLUDE.finditer(text):
            header = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            owner = owner_of(header, headers)
            rel = os.path.relpath(path, ROOT)
            if owner is None:
                errors.append(f"{rel}:{line}: \"{header}\" belongs to no layer")
            elif owner not in allowed(layer):
                errors.append(f"{rel}:{line}: layer {layer} includes \"{header}\" of layer {owner}, "
                              f"which is not below it (allowed: {', '.join(sorted(allowed(layer)))})")
            checked += 1
    for e in errors:
        print(e)
    print(f"check-layers: {len(files)} files, {checked} includes, {len(errors)} violations")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
