#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generates docs/API.md, the API reference, from the public headers (include/*.h).

Every public function, type and macro with the comment above it, header by header, under the
headers' own banner sections. `python3 .ci/gen-api.py` rewrites docs/API.md;
`python3 .ci/gen-api.py --check` fails when docs/API.md is not what the headers give (CI).
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "docs", "API.md")
BANNER = re.compile(r"^/\*\s*=+\s*\*/$")
TITLE = re.compile(r"^/\*\s*(.*?)\s*\*/$")


def clean_comment(lines):
    text = []
    for l in lines:
        s = l.strip()
        s = re.sub(r"^/\*+\s?", "", s)
        s = re.sub(r"\s*\*/$", "", s)
        s = re.sub(r"^\*\s?", "", s)
        text.append(s)
    return " ".join(t for t in text if t).strip()


def parse(path):
    """Yields ('section', title) and ('item', comment, declaration) in file order."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    i, n = 0, len(lines)
    pending = []
    while i < n:
        s = lines[i].strip()
        if BANNER.match(s) and i + 2 < n and BANNER.match(lines[i + 2].strip()):
            m = TITLE.match(lines[i + 1].strip())
            yield ("section", m.group(1) if m else "")
            i += 3
            pending = []
            continue
        if s.startswith("/*"):
            j = i
            while j < n and "*/" not in lines[j]:
                j += 1
            pending = lines[i:j + 1]
            i = j + 1
            continue
        if not s:
            pending = []
            i += 1
            continue
        starts_decl = (re.match(r"^(typedef|struct|enum|const|void|int|double|size_t|int64_t|uint64_t|"
                                r"sbm_[a-z_]+|#define SBM_)", lines[i]) and not lines[i].startswith(" "))
        if starts_decl:
            j = i
            depth = 0
            while j < n:
                depth += lines[j].count("{") - lines[j].count("}") + lines[j].count("(") - lines[j].count(")")
                line = re.sub(r"/\*.*?\*/", "", lines[j]).rstrip()
                if lines[i].startswith("#define"):
                    if not line.endswith("\\"):
                        break
                elif depth <= 0 and line.endswith(";"):
                    break
                j += 1
            decl = "\n".join(lines[i:j + 1])
            if not re.match(r"^#define SBM(_[A-Z]+)*_H$", decl):  # not the include guard
                yield ("item", clean_comment(pending), decl)
            pending = []
            i = j + 1
            continue
        pending = []
        i += 1


def render():
    inc = os.path.join(ROOT, "include")
    out = ["# API reference", "",
           "Generated from the public headers by `python3 .ci/gen-api.py` (CI checks that it is",
           "current). Each entry is a declaration with the comment the header gives it; the headers",
           "are the source of truth.", ""]
    names = sorted(f for f in os.listdir(inc) if f.endswith(".h"))
    out.append("Headers: " + ", ".join(f"[`{h}`](#{h.replace('.', '')})" for h in names) + ".")
    out.append("")
    for h in names:
        out += [f"## {h}", ""]
        for kind, *rest in parse(os.path.join(inc, h)):
            if kind == "section":
                if rest[0]:
                    out += [f"### {rest[0]}", ""]
            else:
                comment, decl = rest
                out += ["```c", decl, "```", ""]
                if comment:
                    out += [comment, ""]
    return "\n".join(out).rstrip("\n") + "\n"


def main():
    text = render()
    if "--check" in sys.argv:
        old = open(OUT, encoding="utf-8").read() if os.path.exists(OUT) else ""
        if old != text:
            print("docs/API.md is not current: run python3 .ci/gen-api.py and commit it")
            return 1
        print("gen-api: docs/API.md is current")
        return 0
    with open(OUT, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(f"gen-api: wrote {os.path.relpath(OUT, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
