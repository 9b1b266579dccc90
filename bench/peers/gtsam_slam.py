#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""GTSAM peer of `sbm slam-solve`: Levenberg-Marquardt on a g2o pose graph (a benchmark, not a test).

    python3 bench/peers/gtsam_slam.py [--csv] [--tight] [--loss none|huber:A|cauchy:A] FILE.g2o...

For every file: the graph read with gtsam.readG2o (2D or 3D from the file's first element), the
start and the gauge made the same as sbm's (src/io/g2o.c), then gtsam.LevenbergMarquardtOptimizer
with its default parameters (printed on stderr), timed around the optimiser alone (its
construction, which evaluates the start, and optimize(); not the file read). One JSON object per
line (or a CSV row with --csv):

    file, dim, vertices, edges, iterations, initial_error, final_error, prior_error, time_s, ...

Errors are GTSAM's own objective, graph.error = 0.5 * sum |e|^2_Sigma over the between factors
(the gauge prior is reported apart, prior_error). GTSAM's BetweenFactor error is the log map of
Z^-1 Xi^-1 Xj, in 3D (Pose3) and, in the pip wheel of 4.3, in 2D too (Pose2: measured, its error
at the same start differs from g2o's, e.g. intel 276.998 against 275.868), where g2o and sbm
take (x, y, theta) in 2D and the translation and quaternion vector part in 3D: the optima
differ, so compare each tool's time to its own optimum. g2o_initial_error / g2o_final_error give
g2o's objective (0.5 * chi2, sbm's) at GTSAM's start and result, computed here. --tight adds a
second run to relative and absolute error tolerances of 1e-12 (up to 1000 iterations): GTSAM's
own optimum, own_optimum, to judge the default run by.

How sbm's start and gauge are reproduced:
  - A file with VERTEX lines starts at them (readG2o's initial values). A file without VERTEX lines
    (CSAIL, manhattan, kitti_05) gets sbm's spanning-tree start, computed here the same way: the
    vertices are the edges' ids in increasing order; a breadth-first search over the incidence
    lists (edges in file order) from the first vertex of every connected component, which starts
    at the identity, sets X_to = X_from Z (edge walked forwards) or X_from = X_to Z^-1. Quaternions
    are normalised on reading, as sbm does.
  - sbm holds the FIX'ed vertices fixed and, in a connected component without one, its first
    vertex (in file order, or by id for edge-only files). GTSAM's Levenberg-Marquardt has no fixed
    variables (a NonlinearEquality's constrained noise model is refused by its Cholesky), so each
    such vertex gets a PriorFactor at its start value with an isotropic sigma of --prior-sigma
    (default 1e-6). The pose graph's factors are all relative, so a whole-graph rigid motion can
    always bring that vertex back onto its prior without changing them: with one fixed vertex per
    component the optimum is exactly sbm's fixed-gauge optimum (prior_error ~ 0 at the end).
    A component with several FIX'ed vertices would make the prior soft where sbm's are hard; none
    of the shared graphs has FIX lines (the script says so when it sees one).
Threads: the pip wheel links neither TBB nor OpenMP, so GTSAM runs on one thread; OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS and MKL_NUM_THREADS are set to 1 all the same (reported as "threads").

--loss huber:A / cauchy:A (as `sbm slam-solve --loss`) wraps every between factor's noise model in
gtsam.noiseModel.Robust.Create(gtsam.noiseModel.mEstimator.Huber.Create(A) / Cauchy.Create(A),
base); the gauge priors stay Gaussian. Checked in GTSAM's source (gtsam/linear/LossFunctions.cpp,
NoiseModel.h/.cpp, NoiseModelFactor::error) and measured here with the 4.3 wheel: the robust
factor's error is robust->loss(x) of the whitened error norm x = sqrt(s), s = e^T Sigma^-1 e, with
Huber loss(x) = x^2/2 for |x| <= k, else k (|x| - k/2), and Cauchy loss(x) = k^2/2 log(1 + x^2/k^2);
that is 0.5 rho(s) of Ceres' HuberLoss(a) / CauchyLoss(a) (sbm's) with a = k, exactly:
    Huber:  s/2 for s <= k^2, else k sqrt(s) - k^2/2 = 0.5 (2 k sqrt(s) - k^2);
    Cauchy: k^2/2 log(1 + s/k^2)                      = 0.5 k^2 log(1 + s/k^2).
The linearisation agrees too: GTSAM's default Block reweighting scales the whitened Jacobian and
error by sqrt(weight(x)) = sqrt(loss'(x) / x) = sqrt(rho'(s)), which is Ceres' Corrector where
rho'' <= 0, as it is everywhere for these two losses. The objective then differs only where the
edge errors do (GTSAM's log map against g2o's errors, above); g2o_initial_error and
g2o_final_error become 0.5 sum rho(chi2 of each edge), sbm's cost with the same --loss.

Without the python module gtsam the script prints "GTSAM: skipped (python module gtsam not
installed)" and exits 0, so that bench/scripts/solvers.py goes on with sbm alone.
"""
import argparse
import csv
import json
import math
import os
import sys
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

try:
    import gtsam  # noqa: E402
    from importlib.metadata import version as _version
    try:
        VERSION = _version("gtsam")
    except Exception:  # not installed through pip: the module's own attribute, if any
        VERSION = getattr(gtsam, "__version__", "unknown")
except ImportError:
    gtsam = None

FIELDS = ["file", "dim", "vertices", "edges", "fixed", "start", "iterations", "initial_error",
          "final_error", "prior_error", "time_s", "g2o_initial_error", "g2o_final_error", "stop", "own_optimum", "own_iterations", "own_time_s",
          "gap_to_own_optimum", "threads", "gtsam_version", "loss"]


def parse_g2o(path):
    """The file's dimension, vertex ids (in file order), edges (from, to, measurement) in file
    order and FIX'ed ids, as sbm's reader sees them."""
    dim, verts, edges, fixes = 0, [], [], []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            tok = line.split()
            if not tok or tok[0].startswith("#"):
                continue
            tag = tok[0]
            if tag in ("VERTEX_SE2", "EDGE_SE2"):
                d = 2
            elif tag in ("VERTEX_SE3:QUAT", "EDGE_SE3:QUAT"):
                d = 3
            elif tag == "FIX":
                fixes.extend(int(t) for t in tok[1:])
                continue
            else:
                raise SystemExit(f"{path}:{lineno}: element {tag} is not read by sbm")
            if dim and d != dim:
                raise SystemExit(f"{path}:{lineno}: {tag} in a {dim}D file")
            dim = d
            if tag.startswith("VERTEX"):
                verts.append(int(tok[1]))
            else:
                n, ni = (3, 6) if d == 2 else (7, 21)
                edges.append((int(tok[1]), int(tok[2]), [float(t) for t in tok[3:3 + n]],
                              [float(t) for t in tok[3 + n:3 + n + ni]]))
    if not dim:
        raise SystemExit(f"{path}: no VERTEX or EDGE lines")
    return dim, verts, edges, fixes


def pose_of(dim, m):
    if dim == 2:
        return gtsam.Pose2(m[0], m[1], m[2])
    qx, qy, qz, qw = m[3:7]
    n = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    return gtsam.Pose3(gtsam.Rot3.Quaternion(qw / n, qx / n, qy / n, qz / n),
                       gtsam.Point3(m[0], m[1], m[2]))


def components(order, edges, fixes):
    """sbm's gauge: the FIX'ed vertices, and the first vertex (in order) of every connected
    component without one."""
    index = {v: k for k, v in enumerate(order)}
    parent = list(range(len(order)))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b, *_ in edges:
        x, y = find(index[a]), find(index[b])
        if x != y:
            parent[max(x, y)] = min(x, y)
    has_fix = set(find(index[v]) for v in fixes)
    roots = [order[k] for k in range(len(order)) if find(k) == k and k not in has_fix]
    return sorted(set(fixes)) + roots


def spanning_tree_start(dim, order, edges):
    """sbm's start for edge-only files (src/io/g2o.c): BFS from every component's first vertex."""
    index = {v: k for k, v in enumerate(order)}
    adj = [[] for _ in order]
    for k, (a, b, *_) in enumerate(edges):
        adj[index[a]].append(k)
        adj[index[b]].append(k)
    poses = [None] * len(order)
    for root in range(len(order)):
        if poses[root] is not None:
            continue
        poses[root] = gtsam.Pose2() if dim == 2 else gtsam.Pose3()
        queue, head = [root], 0
        while head < len(queue):
            u = queue[head]
            head += 1
            for k in adj[u]:
                a, b, m, _ = edges[k]
                forward = index[a] == u
                w = index[b] if forward else index[a]
                if poses[w] is not None:
                    continue
                z = pose_of(dim, m)
                poses[w] = poses[u].compose(z if forward else z.inverse())
                queue.append(w)
    values = gtsam.Values()
    for v, p in zip(order, poses):
        values.insert(v, p)
    return values


def parse_loss(text):
    """--loss's value: (kind, a) with kind None, "huber" or "cauchy"; a > 0 and finite."""
    if text == "none":
        return None, 1.0
    kind, _, a = text.partition(":")
    try:
        x = float(a)
    except ValueError:
        x = float("nan")
    if kind not in ("huber", "cauchy") or not (0 < x < float("inf")):
        raise argparse.ArgumentTypeError(f"'{text}' is not none, huber:A or cauchy:A (A > 0)")
    return kind, x


def loss_text(loss):
    """As --loss takes it; the scale's shortest repr that reads back."""
    return "none" if loss[0] is None else f"{loss[0]}:{loss[1]!r}"


def rho(loss, s):
    """Ceres' rho(s) of the loss (kind, a) (sbm's blocks/sbm_geometry.h): the edge costs
    0.5 rho(chi2)."""
    kind, a = loss
    if kind == "huber" and s > a * a:
        return 2.0 * a * math.sqrt(s) - a * a
    if kind == "cauchy":
        return a * a * math.log1p(s / (a * a))
    return s


def robust(graph, loss):
    """The graph's between factors with their noise models wrapped in GTSAM's m-estimator of loss
    (a new graph; the factors of readG2o are BetweenFactorPose2 / Pose3)."""
    if loss[0] is None:
        return graph
    est = (gtsam.noiseModel.mEstimator.Huber if loss[0] == "huber"
           else gtsam.noiseModel.mEstimator.Cauchy).Create(loss[1])
    out = gtsam.NonlinearFactorGraph()
    for i in range(graph.size()):
        f = graph.at(i)
        make = (gtsam.BetweenFactorPose2 if isinstance(f, gtsam.BetweenFactorPose2)
                else gtsam.BetweenFactorPose3)
        k = f.keys()
        out.add(make(k[0], k[1], f.measured(), gtsam.noiseModel.Robust.Create(est, f.noiseModel())))
    return out


def g2o_error(dim, edges, values, loss=(None, 1.0)):
    """0.5 * chi2 with g2o's (and sbm's) edge errors at values (0.5 sum rho(chi2 of each edge)
    with a loss): SE2 (x, y, theta) of Z^-1 Xi^-1 Xj; SE3 its translation and the vector part of
    its quaternion taken with w >= 0. Information matrices: the file's upper triangle, row by
    row, mirrored."""
    n = 3 if dim == 2 else 6
    iu = [(r, c) for r in range(n) for c in range(r, n)]
    total = 0.0
    for a, b, m, info in edges:
        z = pose_of(dim, m)
        if dim == 2:
            d = z.between(values.atPose2(a).between(values.atPose2(b)))
            e = [d.x(), d.y(), d.theta()]
        else:
            d = z.between(values.atPose3(a).between(values.atPose3(b)))
            t = d.translation()
            q = d.rotation().toQuaternion()
            s = -1.0 if q.w() < 0 else 1.0
            e = [t[0], t[1], t[2], s * q.x(), s * q.y(), s * q.z()]
        chi = 0.0
        for (r, c), v in zip(iu, info):
            chi += (1.0 if r == c else 2.0) * v * e[r] * e[c]
        total += rho(loss, chi)
    return 0.5 * total


def run_lm(graph, initial, params):
    t0 = time.perf_counter()
    opt = gtsam.LevenbergMarquardtOptimizer(graph, initial, params)
    result = opt.optimize()
    return result, opt.iterations(), time.perf_counter() - t0


def solve(path, prior_sigma, tight, loss):
    dim, verts, edges, fixes = parse_g2o(path)
    graph, initial = gtsam.readG2o(path, dim == 3)
    graph = robust(graph, loss)
    start = "file"
    if not verts:
        order = sorted(set(v for a, b, *_ in edges for v in (a, b)))
        initial = spanning_tree_start(dim, order, edges)
        start = "spanning tree (sbm's)"
    else:
        order = verts
    gauge = components(order, edges, fixes)
    if len(fixes) > 1:
        print(f"gtsam_slam: {path}: {len(fixes)} FIX'ed vertices: soft priors where sbm holds "
              "them fixed", file=sys.stderr)
    between = gtsam.NonlinearFactorGraph(graph)
    full = gtsam.NonlinearFactorGraph(graph)
    noise = gtsam.noiseModel.Isotropic.Sigma(3 if dim == 2 else 6, prior_sigma)
    priors = gtsam.NonlinearFactorGraph()
    for v in gauge:
        f = (gtsam.PriorFactorPose2(v, initial.atPose2(v), noise) if dim == 2 else
             gtsam.PriorFactorPose3(v, initial.atPose3(v), noise))
        full.add(f)
        priors.add(f)

    params = gtsam.LevenbergMarquardtParams()
    result, iters, secs = run_lm(full, initial, params)
    final = between.error(result)
    row = {
        "file": os.path.basename(path), "dim": dim, "vertices": len(order), "edges": len(edges),
        "fixed": len(gauge), "start": start, "iterations": iters,
        "initial_error": between.error(initial), "final_error": final,
        "prior_error": priors.error(result), "time_s": secs,
        "g2o_initial_error": g2o_error(dim, edges, initial, loss),
        "g2o_final_error": g2o_error(dim, edges, result, loss),
        "stop": ("iteration limit" if iters >= params.getMaxIterations() else "converged"),
        "own_optimum": "", "own_iterations": "", "own_time_s": "", "gap_to_own_optimum": "", "threads": 1,
        "gtsam_version": VERSION, "loss": loss_text(loss),
    }
    if tight:
        tp = gtsam.LevenbergMarquardtParams()
        tp.setRelativeErrorTol(1e-12)
        tp.setAbsoluteErrorTol(1e-12)
        tp.setMaxIterations(1000)
        tres, titers, tsecs = run_lm(full, initial, tp)
        own = min(between.error(tres), final)
        row["own_optimum"] = own
        row["own_iterations"] = titers
        row["own_time_s"] = tsecs
        row["gap_to_own_optimum"] = (final - own) / own if own > 0 else 0.0
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--csv", action="store_true", help="CSV rows instead of JSON lines")
    ap.add_argument("--tight", action="store_true",
                    help="also find GTSAM's own optimum (tolerances 1e-12, 1000 iterations)")
    ap.add_argument("--prior-sigma", type=float, default=1e-6,
                    help="sigma of the gauge priors (default 1e-6)")
    ap.add_argument("--loss", type=parse_loss, default=(None, 1.0),
                    help="none (default), huber:A or cauchy:A: a robust loss on every between "
                         "factor, as sbm slam-solve --loss")
    a = ap.parse_args()
    if gtsam is None:
        print("GTSAM: skipped (python module gtsam not installed)")
        return 0
    if not a.prior_sigma > 0:
        ap.error(f"--prior-sigma {a.prior_sigma}: must be > 0")
    p = gtsam.LevenbergMarquardtParams()
    print(f"gtsam_slam: GTSAM {VERSION}, LevenbergMarquardtParams "
          f"defaults: relativeErrorTol {p.getRelativeErrorTol():g}, absoluteErrorTol "
          f"{p.getAbsoluteErrorTol():g}, maxIterations {p.getMaxIterations()}, lambdaInitial "
          f"{p.getlambdaInitial():g}; gauge priors sigma {a.prior_sigma:g}; one thread; loss "
          f"{loss_text(a.loss)}",
          file=sys.stderr)
    w = csv.DictWriter(sys.stdout, FIELDS) if a.csv else None
    if w:
        w.writeheader()
    for path in a.files:
        row = solve(path, a.prior_sigma, a.tight, a.loss)
        if w:
            w.writerow(row)
        else:
            print(json.dumps(row))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
