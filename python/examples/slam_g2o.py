# SPDX-License-Identifier: BSD-3-Clause
"""Pose-graph SLAM of a g2o file (Levenberg-Marquardt, sparse block Cholesky), written back as
g2o.

    python python/examples/slam_g2o.py [FILE] [OUT.g2o] [--gpu]
    (default FILE: tests/data/g2o/intel.g2o.bz2)
"""
import os
import sys

import sbm

here = os.path.dirname(os.path.abspath(__file__))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
path = args[0] if args else os.path.join(here, "..", "..", "tests", "data", "g2o",
                                         "intel.g2o.bz2")
ctx = sbm.Context("cuda") if "--gpu" in sys.argv else None

graph = sbm.PoseGraph.read(path)
print(graph, "chi2 %.6e" % graph.chi2())
summary = sbm.slam_solve(graph, ctx=ctx)
print(summary)
print("chi2 %.6e after %d iterations, stopped: %s" % (graph.chi2(), summary.iterations,
                                                      summary.stop_reason))
if len(args) > 1:
    graph.write(args[1])
    print("written:", args[1])
