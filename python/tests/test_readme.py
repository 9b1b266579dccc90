# SPDX-License-Identifier: BSD-3-Clause
"""The README's Python example runs as shown (the first ```python block of its "Python" section)."""
import os
import re
import subprocess
import sys

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")


def test_readme_python_example():
    text = open(README, encoding="utf-8").read()
    section = re.search(r"^## Python\n(.*?)(?=^## )", text, re.S | re.M).group(1)
    code = re.search(r"^```python\n(.*?)^```", section, re.S | re.M).group(1)
    assert 3 <= len(code.strip().splitlines()) <= 6
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("sbm.CBC(")
