#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""sbm's nonlinear solvers against their peers, in one run on one machine (a benchmark, not a test).

usage: bench/scripts/solvers.py [--build DIR] [--data DIR] [--out PREFIX] [--repeat R] [--ba-repeat R]
                        [--ba-sizes C,P,K[,SEED];...] [--ba-iterations N] [--threads T,...]
                        [--skip-slam] [--skip-ba] [--graphs NAME,...]
                        [--loss huber:A|cauchy:A]

SLAM ("SLAM speed against GTSAM"): for every g2o graph of DATA/g2o, `sbm slam-solve
--backend cpu` with its default options and bench/peers/gtsam_slam.py (GTSAM's default
Levenberg-Marquardt, one thread, the same start and gauge). sbm runs with OPENBLAS_NUM_THREADS=1
(GTSAM's wheel is single-threaded). Each tool's time is its solve alone (sbm's summary "time",
GTSAM's optimiser), the median of R runs. sbm's 0.5 * chi2 is compared with the reference optima
of the issue (REFERENCE below, g2o's objective); GTSAM's own objective (a log-map error, in 2D
too: measured, its Pose2 error is not g2o's) with its own optimum (gtsam_slam.py --tight); the
g2o objective at GTSAM's result is given too. A tool "reaches its optimum" when its final cost is
within --opt-rtol (default 1e-6) of it. Target met on a graph when sbm reaches its optimum and
its time is at most GTSAM's.

BA ("BA at scale against Ceres"): synthetic problems written by `sbm bal-generate`
(--ba-sizes, default the issue's 1000,100000,6 and 5000,400000,8, seed 1; `ba-solve --generate`
solves exactly these: checked here by comparing the written start with the generated one) and
the BAL files of tests/data/bal, solved from the same file by `sbm ba-solve --backend cpu` and by
bench's ceres-ba (native Ceres, SPARSE_SCHUR) with the same iteration cap and tolerances, for
every thread count T of --threads (OPENBLAS_NUM_THREADS=T for sbm, whose own code is
single-threaded; --threads T for Ceres, which also gets OPENBLAS_NUM_THREADS=T). sbm's final
cost is re-evaluated to 13 digits by ceres-ba --iterations 0 on sbm's refined problem (-o), the
same model in other code. Target met when sbm's final cost is at most Ceres' * (1 + 1e-8) and
Ceres' time / sbm's >= 4 at the same thread count.

--loss huber:A / cauchy:A runs every tool with that robust loss on every observation / edge, like
for like: `sbm ... --loss`, ceres-ba --loss (ceres::HuberLoss / CauchyLoss, also when it
re-evaluates sbm's result), gtsam_slam.py --loss (GTSAM's mEstimator Huber / Cauchy: the same
0.5 rho(s), bench/results/NOTES-solvers.md). The issue's SLAM optima are least-squares ones: with a loss
sbm's reference is its own optimum (a long run, as for graphs the issue does not list).

Writes PREFIX.csv (one row per tool and case) and PREFIX.md (the tables and verdicts); default
PREFIX bench/results/results_solvers. Without gtsam or ceres-ba the peer's columns are empty and the
output says why ("GTSAM: skipped ...", "Ceres peer: skipped ...").
"""
import argparse
import bz2
import csv
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))  # bench/scripts
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
PEERS = os.path.join(BENCH, "peers")
RESULTS = os.path.join(BENCH, "results")

# 0.5 * chi2 (g2o's objective) at the optimum, from the issue; from sbm's start (the file's
# vertices, or the spanning tree for edge-only files).
REFERENCE = {
    "CSAIL": 20.27756, "intel": 22.50235, "manhattan": 1774.518, "parking-garage": 0.6193453,
    "smallGrid3D": 229.0769, "sphere2500": 363.5748, "tinyGrid3D": 3.363941,
}
STOP_NAMES = ["function tolerance", "gradient tolerance", "parameter tolerance", "zero cost",
              "iteration limit", "no progress", "not run"]
FIELDS = ["part", "case", "tool", "threads", "iterations", "stop", "initial_cost", "final_cost",
          "reference", "rel_to_reference", "reached", "time_s", "times_s", "note"]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class TimedOut(Exception):
    pass


def run(cmd, env_extra=None, timeout=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise TimedOut(f"{os.path.basename(cmd[0])} stopped after {timeout:g} s")
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    return p.stdout


def parse_sbm(out, what):
    """Initial and final cost, iterations, stop reason and solve time from sbm's summary lines
    ("<what> A -> B [(...)] in N iterations (...)", "time T s: ..."); what: a regex of labels."""
    m = re.search(rf"^(?:{what}) (\S+) -> (\S+)(?: .*?)? in (\d+) iterations", out, re.M)
    t = re.search(r"^time (\S+) s", out, re.M)
    if not m or not t:
        raise RuntimeError(f"cannot parse sbm's summary:\n{out[-800:]}")
    tail = "\n".join(out.strip().splitlines()[-4:])
    stop = next((s for s in STOP_NAMES if s in tail), "not printed")
    # the summary prints milliseconds: a solve under 0.5 ms reads 0.000 and counts as 0.5 ms
    return {"initial_cost": float(m.group(1)), "final_cost": float(m.group(2)),
            "iterations": int(m.group(3)), "stop": stop,
            "time_s": max(float(t.group(1)), 0.0005), "floor": float(t.group(1)) < 0.0005}


def parse_keys(out):
    return dict(re.findall(r"^(\w+): (.*)$", out, re.M))


def median_runs(fn, repeat):
    """fn() -> dict with time_s, repeat times; the last result with the median time and all."""
    rows = [fn() for _ in range(repeat)]
    times = [r["time_s"] for r in rows]
    row = dict(rows[-1])
    row["time_s"] = statistics.median(times)
    row["floor"] = any(r.get("floor") for r in rows) and row["time_s"] <= 0.0005
    row["times_s"] = " ".join(f"{x:.4g}" for x in times)
    return row


def rel(a, b):
    return (a - b) / b if b else float("nan")


# ---- SLAM -------------------------------------------------------------------------------------

def half_chi2_factor(sbm, path, initial, tmp):
    """What turns slam-solve's printed "chi2" into 0.5 * chi2: 0.5 when it prints chi2 (main's
    Gauss-Newton), 1 when it already prints the solver's cost 0.5 * chi2 (the LM of branch
    slam), told apart by slam-info's chi2 at the same start."""
    out = run([sbm, "slam-info", "--g2o", path, "-o", os.path.join(tmp, "L.mtx")])
    m = re.search(r"chi2 (\S+)", out)
    if not m:
        raise RuntimeError(f"cannot parse slam-info:\n{out[-500:]}")
    q = initial / float(m.group(1))
    for factor in (0.5, 1.0):
        if abs(q * factor - 0.5) < 1e-4:
            return factor
    raise RuntimeError(f"{path}: slam-solve's start {initial} is neither chi2 nor 0.5 chi2 of "
                       f"slam-info's {m.group(1)}")


def loss_args(args):
    """--loss for sbm, ceres-ba and gtsam_slam.py (nothing without one)."""
    return ["--loss", args.loss] if args.loss else []


def slam(args, sbm, graphs, tmp):
    rows = []
    env1 = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    gt = gtsam_runs(args, graphs)
    for path in graphs:
        name = os.path.basename(path)[:-4]
        log(f"slam: {name}")
        r = median_runs(lambda: parse_sbm(run([sbm, "slam-solve", "--g2o", path, "--backend", "cpu"]
                                              + loss_args(args), env1), "chi2|cost"), args.repeat)
        # with a loss sbm prints its cost, 0.5 sum rho(chi2 of each edge), which only the LM
        # that knows --loss does
        f = 1.0 if args.loss else half_chi2_factor(sbm, path, r["initial_cost"], tmp)
        ref, refnote = (None if args.loss else REFERENCE.get(name)), "reference: the issue's"
        if ref is None:
            # no published optimum: sbm's own, from a long run (not timed)
            own = parse_sbm(run([sbm, "slam-solve", "--g2o", path, "--backend", "cpu",
                                 "--iterations", str(args.own_iterations)] + loss_args(args),
                                env1), "chi2|cost")
            ref = min(own["final_cost"], r["final_cost"]) * f
            refnote = f"reference: sbm's own optimum ({args.own_iterations} iterations, {own['stop']})"
        half = {k: r[k] * f for k in ("initial_cost", "final_cost")}
        d = rel(half["final_cost"], ref)
        rows.append({"part": "slam", "case": name, "tool": "sbm", "threads": 1,
                     "iterations": r["iterations"], "stop": r["stop"], **half,
                     "reference": ref, "rel_to_reference": d, "reached": int(d <= args.opt_rtol),
                     "time_s": r["time_s"], "times_s": r["times_s"], "floor": r["floor"],
                     "note": ("0.5*sum rho(chi2) (g2o errors, loss " + args.loss + "); "
                              if args.loss else "0.5*chi2 (g2o objective); ") + refnote})
        g = gt.get(name)
        if g:
            rows.append(g)
    return rows


def gtsam_runs(args, graphs):
    """GTSAM rows by graph name (median of --repeat runs of bench/peers/gtsam_slam.py), {} if skipped."""
    script = os.path.join(PEERS, "gtsam_slam.py")
    first = run([sys.executable, script, "--tight"] + loss_args(args) + graphs)
    if "GTSAM: skipped" in first:
        log(first.strip())
        return {}
    outs = [first] + [run([sys.executable, script] + loss_args(args) + graphs)
                      for _ in range(args.repeat - 1)]
    res = {}
    for k, line in enumerate(first.strip().splitlines()):
        j = json.loads(line)
        times = [json.loads(o.strip().splitlines()[k])["time_s"] for o in outs]
        own = j["own_optimum"]
        gap = j["gap_to_own_optimum"]
        res[j["file"][:-4]] = {
            "part": "slam", "case": j["file"][:-4], "tool": f"GTSAM {j['gtsam_version']}",
            "threads": 1, "iterations": j["iterations"], "stop": j["stop"],
            "initial_cost": j["initial_error"], "final_cost": j["final_error"], "reference": own,
            "rel_to_reference": gap, "reached": int(gap <= args.opt_rtol),
            "time_s": statistics.median(times), "times_s": " ".join(f"{x:.4g}" for x in times),
            "note": (f"GTSAM objective, reference = its own optimum ({j['own_iterations']} it. "
                     f"to 1e-12 in {j['own_time_s']:.4g} s); g2o objective at its result {j['g2o_final_error']:.7g} (start "
                     f"{j['g2o_initial_error']:.7g}); prior {j['prior_error']:.1e}"),
        }
    return res


# ---- BA ---------------------------------------------------------------------------------------

def generate(sbm, spec, tmp):
    """bal-generate C,P,K,SEED into tmp; checks that ba-solve --generate starts from the same."""
    c, p, k, *s = spec.split(",")
    seed = s[0] if s else "1"
    path = os.path.join(tmp, f"synthetic-{c}-{p}-{k}-{seed}.txt")
    run([sbm, "bal-generate", "--cameras", c, "--points", p, "--obs-per-point", k, "--seed", seed,
         "-o", path])
    check = os.path.join(tmp, "generate-check.txt")
    run([sbm, "ba-solve", "--generate", f"{c},{p},{k},{seed}", "--iterations", "0", "-o", check])
    with open(path, "rb") as a, open(check, "rb") as b:
        same = a.read() == b.read()
    os.unlink(check)
    if not same:
        raise RuntimeError(f"bal-generate and ba-solve --generate {spec} differ")
    return path


def ba_case(args, sbm, ceres, path, name, threads, tmp, cameras):
    env = {"OPENBLAS_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
    it = str(args.ba_iterations)
    refined = os.path.join(tmp, "sbm-refined.txt")

    def one_sbm():
        return parse_sbm(run([sbm, "ba-solve", "--bal", path, "--backend", "cpu", "--iterations",
                              it, "-o", refined] + loss_args(args), env), "cost")

    def one_ceres():
        o = parse_keys(run([ceres, "--bal", path, "--threads", str(threads), "--iterations", it,
                            "--function-tolerance", str(args.function_tolerance),
                            "--gradient-tolerance", str(args.gradient_tolerance),
                            "--parameter-tolerance", str(args.parameter_tolerance)]
                           + loss_args(args), env, args.ceres_timeout))
        return {"initial_cost": float(o["initial_cost"]), "final_cost": float(o["final_cost"]),
                "iterations": int(o["iterations"].split()[0]), "stop": o["termination"],
                "time_s": float(o["time_total_s"]), "wall_s": float(o["time_wall_s"])}

    log(f"ba: {name}, {threads} thread(s): sbm")
    s = median_runs(one_sbm, args.ba_repeat)
    note = "cost as printed by sbm (%.6e)"
    if ceres:
        ev = parse_keys(run([ceres, "--bal", refined, "--iterations", "0"] + loss_args(args), env))
        s["final_cost"] = float(ev["final_cost"])
        note = "final cost: sbm's refined problem evaluated by ceres-ba (%.12e)"
    if os.path.exists(refined):
        os.unlink(refined)
    rows = [{"part": "ba", "case": name, "tool": "sbm", "threads": threads, **s, "note": note}]
    if ceres and args.ceres_max_cameras and cameras > args.ceres_max_cameras:
        why = f"skipped: {cameras} cameras > --ceres-max-cameras {args.ceres_max_cameras}"
        log(f"ba: {name}: Ceres {why}")
        rows.append({"part": "ba", "case": name, "tool": "Ceres 2.1", "threads": threads,
                     "stop": "skipped", "note": why})
    elif ceres:
        log(f"ba: {name}, {threads} thread(s): ceres")
        try:
            c = median_runs(one_ceres, args.ba_repeat)
        except TimedOut as e:  # a visible row: no cost, the time it had
            log(f"ba: {name}: Ceres {e}")
            rows.append({"part": "ba", "case": name, "tool": "Ceres 2.1", "threads": threads,
                         "stop": "timed out", "time_s": args.ceres_timeout, "note": str(e)})
            return rows
        wall = c.pop("wall_s")
        rows.append({"part": "ba", "case": name, "tool": "Ceres 2.1", "threads": threads, **c,
                     "note": f"SPARSE_SCHUR (SuiteSparse), autodiff; wall {wall:.4g} s"})
        d = rel(s["final_cost"], c["final_cost"])
        rows[0].update(reference=c["final_cost"], rel_to_reference=d, reached=int(d <= 1e-8))
    return rows


def ba(args, sbm, ceres, tmp):
    cases = []
    for spec in [x for x in args.ba_sizes.split(";") if x]:
        log(f"ba: bal-generate {spec}")
        cases.append((generate(sbm, spec, tmp), "synthetic " + spec))
    bal_dir = os.path.join(ROOT, "tests", "data", "bal")
    for f in sorted(os.listdir(bal_dir)):
        cases.append((os.path.join(bal_dir, f), f.split(".")[0]))
    rows = []
    for path, name in cases:
        opener = bz2.open if path.endswith(".bz2") else open
        with opener(path, "rb") as f:  # the header's camera count
            head = f.readline().split()
        for t in [int(x) for x in args.threads.split(",")]:
            rows += ba_case(args, sbm, ceres, path, name, t, tmp, int(head[0]))
        if path.startswith(tmp):
            os.unlink(path)
    return rows


# ---- Report -----------------------------------------------------------------------------------

def fmt(x, spec=".4g"):
    if x == "" or x is None:
        return ""
    return format(x, spec) if isinstance(x, float) else str(x)


def markdown(rows, meta):
    out = [f"Machine: {meta['machine']}; {meta['date']}; sbm {meta['commit']}; load average at "
           f"the start {meta['load']}, at the end {meta['load_end']}; robust loss "
           f"{meta['loss']} (every tool).", ""]
    slam_rows = [r for r in rows if r["part"] == "slam"]
    if slam_rows:
        out += ["### SLAM: `sbm slam-solve --backend cpu` (defaults) vs GTSAM LM (defaults), one thread",
                "",
                f"| graph | sbm {'cost' if meta['loss'] != 'none' else '0.5chi2'} | ref | rel | sbm it. | sbm stop | sbm s | GTSAM error "
                "| own opt. | rel | GTSAM it. | GTSAM s | GTSAM s / sbm s | target |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in [x for x in slam_rows if x["tool"] == "sbm"]:
            g = next((x for x in slam_rows if x["case"] == r["case"] and x["tool"] != "sbm"), None)
            reached = r["reached"] == 1
            if g:
                ratio = g["time_s"] / r["time_s"] if r["time_s"] > 0 else float("inf")
                why = [w for w, bad in (("sbm not at its optimum", not reached),
                                        ("slower", ratio < 1)) if bad]
                verdict = "met" if not why else "not met (" + ", ".join(why) + ")"
                if r.get("floor") and ratio < 1:
                    verdict = ("undetermined (sbm's summary reads 0.000 s: under 0.5 ms, "
                               "GTSAM's time is below that)")
                if g["reached"] != 1:
                    verdict += "; GTSAM stopped short of its optimum"
                if "own optimum" in r["note"]:
                    verdict += "; ref = sbm's own"
                gcols = [fmt(g["final_cost"], ".7g"), fmt(g["reference"], ".7g"),
                         fmt(g["rel_to_reference"], ".1e"), str(g["iterations"]),
                         fmt(g["time_s"]), f"{ratio:.2f}"]
            else:
                verdict, gcols = "GTSAM skipped", [""] * 6
            out.append("| " + " | ".join([r["case"], fmt(r["final_cost"], ".7g"),
                                          fmt(r["reference"], ".7g"),
                                          fmt(r["rel_to_reference"], ".1e"), str(r["iterations"]),
                                          r["stop"], fmt(r["time_s"])] + gcols + [verdict]) + " |")
        out.append("")
    ba_rows = [r for r in rows if r["part"] == "ba"]
    if ba_rows:
        out += ["### BA: `sbm ba-solve --backend cpu` vs native Ceres (SPARSE_SCHUR), same file, "
                f"same cap ({meta['ba_iterations']} iterations)", "",
                "| problem | threads | sbm cost | sbm it. | sbm stop | sbm s | Ceres cost | Ceres it. "
                "| Ceres stop | Ceres s | (sbm-Ceres)/Ceres | Ceres s / sbm s | target |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in [x for x in ba_rows if x["tool"] == "sbm"]:
            c = next((x for x in ba_rows if x["case"] == r["case"] and x["tool"] != "sbm"
                      and x["threads"] == r["threads"]), None)
            if c and c["stop"] == "skipped":
                verdict, ccols = "not measured (Ceres " + c["note"] + ")", [""] * 6
            elif c and c["stop"] == "timed out":
                sp = c["time_s"] / r["time_s"]
                verdict = f"not measured (Ceres stopped after {c['time_s']:g} s: >= {sp:.1f}x)"
                ccols = ["", "", "timed out", f">{c['time_s']:g}", "", f">{sp:.1f}"]
            elif c:
                sp = c["time_s"] / r["time_s"] if r["time_s"] > 0 else float("inf")
                ok_cost, ok_speed = r["reached"] == 1, sp >= 4
                verdict = ("met" if ok_cost and ok_speed else "not met (" + ", ".join(
                    w for w, bad in (("cost", not ok_cost), ("speed", not ok_speed)) if bad) + ")")
                if not r["case"].startswith("synthetic"):
                    verdict = "not a target size; criteria " + verdict
                ccols = [fmt(c["final_cost"], ".10e"), str(c["iterations"]),
                         c["stop"].split(" ")[0], fmt(c["time_s"]),
                         fmt(r["rel_to_reference"], ".1e"), f"{sp:.2f}"]
            else:
                verdict, ccols = "Ceres skipped", [""] * 6
            out.append("| " + " | ".join([r["case"], str(r["threads"]), fmt(r["final_cost"], ".10e"),
                                          str(r["iterations"]), r["stop"], fmt(r["time_s"])]
                                         + ccols + [verdict]) + " |")
        out.append("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--data", default=os.environ.get("SBM_DATA_DIR",
                                                     os.path.join(ROOT, "..", "shared", "data")))
    ap.add_argument("--out", default=os.path.join(RESULTS, "results_solvers"))
    ap.add_argument("--repeat", type=int, default=3, help="SLAM runs per tool (median)")
    ap.add_argument("--ba-repeat", type=int, default=1, help="BA runs per tool (median)")
    ap.add_argument("--ba-sizes", default="1000,100000,6,1;5000,400000,8,1")
    ap.add_argument("--ba-iterations", type=int, default=50)
    ap.add_argument("--function-tolerance", type=float, default=1e-10,
                    help="Ceres' (sbm's default, sbm_solver_default_options)")
    ap.add_argument("--gradient-tolerance", type=float, default=1e-10,
                    help="Ceres' (sbm's default)")
    ap.add_argument("--parameter-tolerance", type=float, default=1e-10,
                    help="Ceres' (sbm's default)")
    ap.add_argument("--threads", default="1,2", help="BA thread counts")
    ap.add_argument("--ceres-max-cameras", type=int, default=0,
                    help="skip Ceres (visibly) on problems with more cameras (default: no limit)")
    ap.add_argument("--ceres-timeout", type=float, default=None,
                    help="seconds a ceres-ba run may take (default: no limit)")
    ap.add_argument("--opt-rtol", type=float, default=1e-6)
    ap.add_argument("--own-iterations", type=int, default=1000,
                    help="sbm's iterations to find its own optimum where the issue gives none")
    ap.add_argument("--graphs", default="", help="graph names (default: all of DATA/g2o)")
    ap.add_argument("--skip-slam", action="store_true")
    ap.add_argument("--skip-ba", action="store_true")
    ap.add_argument("--loss", default="",
                    help="huber:A or cauchy:A: every tool with that robust loss (default none)")
    args = ap.parse_args()
    if args.loss == "none":
        args.loss = ""
    if args.loss and not re.fullmatch(r"(huber|cauchy):\S+", args.loss):
        ap.error(f"--loss '{args.loss}' is not none, huber:A or cauchy:A")
    if args.repeat < 1 or args.ba_repeat < 1:
        ap.error("--repeat and --ba-repeat must be >= 1")

    sbm = os.path.join(args.build, "bin", "sbm")
    if not os.access(sbm, os.X_OK):
        sys.exit(f"solvers.py: {sbm} not found: build the target sbm_cli first")
    ceres = os.path.join(args.build, "bin", "ceres-ba")
    if not os.access(ceres, os.X_OK):
        log("Ceres peer: skipped (libceres-dev not found: no ceres-ba in the build)")
        ceres = None
    load0 = "%.2f %.2f %.2f" % os.getloadavg()
    rows = []
    if not args.skip_slam:
        gdir = os.path.join(args.data, "g2o")
        if not os.path.isdir(gdir):
            sys.exit(f"solvers.py: no graphs at {gdir} (--data or SBM_DATA_DIR)")
        names = args.graphs.split(",") if args.graphs else None
        graphs = sorted(os.path.join(gdir, f) for f in os.listdir(gdir) if f.endswith(".g2o")
                        and (names is None or f[:-4] in names))
        with tempfile.TemporaryDirectory(prefix="sbm-solvers-") as tmp:
            rows += slam(args, sbm, graphs, tmp)
    if not args.skip_ba:
        with tempfile.TemporaryDirectory(prefix="sbm-solvers-") as tmp:
            rows += ba(args, sbm, ceres, tmp)

    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    meta = {"machine": f"{platform.node()}, {os.cpu_count()} cores, {platform.processor() or platform.machine()}",
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit,
            "ba_iterations": args.ba_iterations, "load": load0, "loss": args.loss or "none"}
    with open(args.out + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in FIELDS})
    meta["load_end"] = "%.2f %.2f %.2f" % os.getloadavg()
    md = markdown(rows, meta)
    with open(args.out + ".md", "w") as f:
        f.write(md + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
