#!/usr/bin/env python3
"""Fails when a source file of the repository has no SPDX licence identifier in its first lines.

Every tracked source, build and script file (C, CUDA, C++, Python, shell, CMake) carries
`SPDX-License-Identifier: BSD-3-Clause` (LICENSE) in its first five lines. The test data's own
licences are listed in tests/data/SOURCES.md. `--add` inserts the line where it is missing (after
a shebang), in the file's comment syntax. Run from anywhere: python3 .ci/check-licence.py [--add]
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAG = "SPDX-License-Identifier: BSD-3-Clause"
C_LIKE = (".c", ".h", ".cu", ".cuh", ".cc", ".cpp", ".hpp")
HASH = (".py", ".sh", ".cmake", ".in", ".toml", ".cfg")
SKIP_DIRS = ("tests/data/", "tests/mutations/", "tests/bad_input/")


def comment_for(path):
    name = os.path.basename(path)
    if path.endswith(C_LIKE):
        return f"/* {TAG} */"
    if path.endswith(HASH) or name in ("CMakeLists.txt", "run", "setup-debian") or name.startswith("Doxyfile"):
        return f"# {TAG}"
    return None


def tracked():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [p for p in out.stdout.split("\n") if p and not p.startswith(SKIP_DIRS)]


def main():
    add = "--add" in sys.argv
    missing, checked = [], 0
    for rel in tracked():
        line = comment_for(rel)
        path = os.path.join(ROOT, rel)
        if line is None or not os.path.isfile(path):
            continue
        checked += 1
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        if TAG in "\n".join(text.split("\n")[:5]):
            continue
        if not add:
            missing.append(rel)
            continue
        lines = text.split("\n")
        at = 1 if lines and lines[0].startswith("#!") else 0
        lines.insert(at, line)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines))
    for m in missing:
        print(f"{m}: no '{TAG}' in its first five lines")
    print(f"check-licence: {checked} source files, {len(missing)} without the SPDX identifier")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
