# SPDX-License-Identifier: BSD-3-Clause
"""Bundle adjustment of a BAL file (Levenberg-Marquardt through the Schur complement), one line
per iteration, then the summary.

    python python/examples/ba_bal.py [FILE] [--gpu]
    (default FILE: tests/data/bal/problem-49-7776-pre.txt.bz2)
"""
import os
import sys

import sbm

here = os.path.dirname(os.path.abspath(__file__))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
path = args[0] if args else os.path.join(here, "..", "..", "tests", "data", "bal",
                                         "problem-49-7776-pre.txt.bz2")
ctx = sbm.Context("cuda") if "--gpu" in sys.argv else None

problem = sbm.BALProblem.read(path)
print(problem, "initial cost %.6e" % problem.evaluate()[0])


def report(r):
    print("  it %2d  cost %.6e  lambda %.1e  %s  %.1f ms" % (
        r.iteration, r.cost, r.lambda_, "accepted" if r.accepted else "rejected",
        1e3 * r.time_total))


summary = sbm.ba_solve(problem, max_iterations=int(os.environ.get("ITERATIONS", "20")),
                       callback=report, ctx=ctx)
print(summary)
print("stopped: %s (%s); first camera now %s" % (
    summary.stop_reason, "converged" if summary.converged else "not converged",
    problem.camera_params[0].round(4)))
