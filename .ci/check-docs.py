#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fails when a public function of include/*.h has no comment of its own.

A function is documented when the lines right above its declaration (no blank line between) are
a comment that is not a banner (a line of '=' or '-'). Run from anywhere:
python3 .ci/check-docs.py [--list]
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DECL = re.compile(r"^[A-Za-z_][A-Za-z0-9_ \*]*?\b(sbm_[a-z0-9_]+)\s*\(")
BANNER = re.compile(r"^/\*\s*[=\-]{8,}\s*\*/$")


def documented(lines, i):
    """Is the declaration starting at line i preceded by a comment of its own?"""
    j = i - 1
    if j < 0 or not lines[j].rstrip().endswith("*/"):
        return False
    # walk up to the comment's first line
    while j >= 0 and "/*" not in lines[j]:
        j -= 1
    text = " ".join(l.strip() for l in lines[j:i])
    return j >= 0 and not BANNER.match(lines[j].strip()) and len(text) > 8


def main():
    listing = "--list" in sys.argv
    inc = os.path.join(ROOT, "include")
    missing, total = [], 0
    for name in sorted(os.listdir(inc)):
        if not name.endswith(".h"):
            continue
        with open(os.path.join(inc, name), encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        depth = 0  # inside a struct/enum body: fields, not functions
        for i, line in enumerate(lines):
            s = line.strip()
            if depth == 0 and not line.startswith((" ", "\t", "#", "/", "*")):
                m = DECL.match(line)
                if m and not s.startswith(("typedef", "return")):
                    total += 1
                    if not documented(lines, i):
                        missing.append(f"include/{name}:{i + 1}: {m.group(1)} has no comment of its own")
            if "extern \"C\"" not in line and not s.startswith("}") or depth > 0:
                depth += line.count("{") - line.count("}")
    for m in missing:
        print(m)
    print(f"check-docs: {total} public functions, {len(missing)} without a comment of their own")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
