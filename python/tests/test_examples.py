# SPDX-License-Identifier: BSD-3-Clause
"""Every example in python/examples runs to completion (on the CPU)."""
import os
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")


@pytest.mark.parametrize("name", sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".py")))
def test_example_runs(name, tmp_path):
    extra = [str(tmp_path / "out.g2o")] if name == "slam_g2o.py" else []
    if extra:
        from conftest import data_file
        extra.insert(0, data_file("g2o", "intel.g2o.bz2"))
    env = dict(os.environ, ITERATIONS="3")
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, name)] + extra, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip()
