#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Native Ceres on the synthetic BA problems of the GPU iterations' end-to-end target (a benchmark, not a test).

usage: bench/scripts/ceres_e2e.py [--build DIR] [--cases SPEC;...] [--threads T] [--out CSV]
                          [--workdir DIR] [--timeout S] [--iterations N]

Each case SPEC is C,P,K,SEED:SOLVER (SOLVER: sparse-schur or iterative-schur, ceres-ba's
--linear-solver). For each: `sbm bal-generate` writes the problem as a BAL file (checked
against `sbm ba-solve --generate C,P,K,SEED --iterations 0 -o ...`: byte for byte the problem
that sbm-bench-ba and `ba-solve --generate` solve on the device), then bench's ceres-ba solves it
with every core of this machine (--threads, default os.cpu_count()) and sbm's default tolerances
(function, gradient, parameter 1e-10; at most --iterations, default 200). One CSV row per case,
appended as each ends (a cut run keeps what finished): the machine, Ceres' initial and final cost
(%.12e), iterations, termination, its solve time and the process wall time (reading the file
included). bench/scripts/make_ba_results.py compares these final costs with the device's
(target: sbm within 1e-8 relative) and reports both wall times with the machines named.

Defaults: 1000,100000,6,1 with SPARSE_SCHUR and ITERATIVE_SCHUR, 5000,400000,8,1 with
ITERATIVE_SCHUR only (its S, 45 000 unknowns and nearly dense, would need a dense 8 GB factor and
~3e13 flops per iteration with SPARSE_SCHUR: hours on a small machine; bench/results/NOTES-ba-gpu.md).
Without ceres-ba (libceres-dev absent) it writes nothing and says so.
"""
import argparse
import csv
import os
import platform
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))  # bench/scripts
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
RESULTS = os.path.join(BENCH, "results")
FIELDS = ["case", "cameras", "points", "obs_per_point", "seed", "tool", "linear_solver", "threads",
          "machine", "date", "initial_cost", "final_cost", "iterations", "termination",
          "time_solve_s", "time_wall_s", "time_process_s", "note"]
DEFAULT_CASES = ("1000,100000,6,1:sparse-schur;1000,100000,6,1:iterative-schur;"
                 "5000,400000,8,1:iterative-schur")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def machine():
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            model = m.group(1).strip() if m else ""
    except OSError:
        pass
    return f"{platform.node()}, {os.cpu_count()} cores, {model or platform.machine()}"


def generate(sbm, spec, workdir):
    """The BAL file of spec C,P,K,SEED (made once, kept in workdir), checked against ba-solve."""
    path = os.path.join(workdir, "synthetic-%s.txt" % spec.replace(",", "-"))
    if os.path.exists(path):
        return path
    c, p, k, seed = spec.split(",")
    tmp = path + ".part"
    subprocess.run([sbm, "bal-generate", "--cameras", c, "--points", p, "--obs-per-point", k,
                    "--seed", seed, "-o", tmp], check=True, capture_output=True)
    check = path + ".check"
    subprocess.run([sbm, "ba-solve", "--generate", spec, "--iterations", "0", "-o", check],
                   check=True, capture_output=True)
    with open(tmp, "rb") as a, open(check, "rb") as b:
        same = a.read() == b.read()
    os.unlink(check)
    if not same:
        os.unlink(tmp)
        raise RuntimeError(f"bal-generate and ba-solve --generate {spec} differ")
    os.rename(tmp, path)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--cases", default=DEFAULT_CASES)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--out", default=os.path.join(RESULTS, "results_ba_ceres.csv"))
    ap.add_argument("--workdir", default="/tmp/sbm-ceres-e2e")
    ap.add_argument("--timeout", type=float, default=None, help="seconds per Ceres run")
    args = ap.parse_args()
    sbm = os.path.join(args.build, "bin", "sbm")
    ceres = os.path.join(args.build, "bin", "ceres-ba")
    if not os.access(sbm, os.X_OK):
        sys.exit(f"ceres_e2e.py: {sbm} not found: build the target sbm_cli")
    if not os.access(ceres, os.X_OK):
        print("Ceres peer: skipped (libceres-dev not found: no ceres-ba in the build)")
        return 0
    os.makedirs(args.workdir, exist_ok=True)
    new = not os.path.exists(args.out)
    with open(args.out, "a", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        if new:
            w.writeheader()
        for case in [x for x in args.cases.split(";") if x]:
            spec, solver = case.split(":")
            c, p, k, seed = spec.split(",")
            row = {"case": f"synthetic {spec}", "cameras": c, "points": p, "obs_per_point": k,
                   "seed": seed, "linear_solver": solver, "threads": args.threads,
                   "machine": machine(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
            log(f"ceres_e2e: {spec} {solver}, {args.threads} threads")
            path = generate(sbm, spec, args.workdir)
            t0 = time.monotonic()
            try:
                out = subprocess.run([ceres, "--bal", path, "--threads", str(args.threads),
                                      "--iterations", str(args.iterations), "--linear-solver",
                                      solver], capture_output=True, text=True, check=True,
                                     timeout=args.timeout).stdout
            except subprocess.TimeoutExpired:
                row.update(termination="timed out", time_process_s=args.timeout,
                           note=f"ceres-ba stopped after {args.timeout:g} s")
                w.writerow(row)
                f.flush()
                continue
            except subprocess.CalledProcessError as e:
                row.update(termination=f"failed (exit {e.returncode})",
                           note=(e.stderr or "").strip()[-300:])
                w.writerow(row)
                f.flush()
                log(f"ceres_e2e: {spec} {solver}: ceres-ba failed: {row['note']}")
                continue
            kv = dict(re.findall(r"^(\w+): (.*)$", out, re.M))
            row.update(tool="Ceres " + kv["ceres"].split(",")[0].strip(),
                       initial_cost=kv["initial_cost"], final_cost=kv["final_cost"],
                       iterations=kv["iterations"].split()[0], termination=kv["termination"],
                       time_solve_s=kv["time_total_s"], time_wall_s=kv["time_wall_s"],
                       time_process_s="%.3f" % (time.monotonic() - t0), note=kv["ceres"])
            w.writerow(row)
            f.flush()
            log(f"ceres_e2e: {spec} {solver}: final cost {kv['final_cost']}, "
                f"{kv['iterations']}, {kv['time_wall_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
