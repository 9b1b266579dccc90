#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Markdown tables, target verdicts and a plot from sbm-bench-chol's CSV.

usage: make_chol_results.py CSV [CSV...] [--plot FILE] [--title TEXT]

  CSV     the --csv of sbm-bench-chol (several: their rows in order, e.g. a CPU run and a device run
          are NOT mixed into one table: give one run's CSVs only)
  --plot  write a PNG of the scaling runs (time and memory against poses / cameras; needs
          matplotlib; without it the plot is skipped and the output says so)

Prints markdown on stdout: every matrix (sbm's plan / factor / solve against CHOLMOD's
analyze / factorize / solve, each "median [min-max]" of the run's repetitions, the ratios
CHOLMOD / sbm, nnz(L), GFLOP/s, peak memory, residuals, the CUDA context's factor time where measured), the target
lines as met / not met with the figure, and the scaling tables (synthetic pose graphs poses2d-N /
poses3d-N against N, synthetic BA problems ba-C-P-K against C) with the growth exponent of each
step: log(t2 / t1) / log(N2 / N1). Every number comes from the CSV.
"""
import argparse
import csv
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_results import num, stat, fx  # noqa: E402  (the same helpers as the other tables)


def f(v, fmt="%.2f"):
    return "—" if v is None else fmt % v


def mb(row, key):
    return f(num(row, key), "%.1f")


def verdict(ok):
    return "**met**" if ok else "**not met**"


def main_table(rows, out):
    out.append("| matrix | kind | b | n | nnz(A) | sbm plan ms | sbm factor ms | sbm solve ms "
               "| CHOLMOD analyze ms | CHOLMOD factor ms | CHOLMOD solve ms | analyze CHOLMOD/sbm "
               "| factor CHOLMOD/sbm | nnz(L) sbm / CHOLMOD | GFLOP/s sbm / CHOLMOD "
               "| peak MB sbm / CHOLMOD | residual sbm / CHOLMOD | GPU factor ms | CPU/GPU "
               "| CHOLMOD/GPU |")
    out.append("|" + "---|" * 20)
    for r in rows:
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s "
                   "| %s / %s | %s / %s | %s / %s | %s | %s | %s |" % (
                       r["matrix"], r["kind"], r["block"], r["n"], r["nnz_a"],
                       stat(r, "sbm_plan_ms"), stat(r, "sbm_factor_ms"), stat(r, "sbm_solve_ms"),
                       stat(r, "cholmod_analyze_ms"), stat(r, "cholmod_factor_ms"),
                       stat(r, "cholmod_solve_ms"), fx(num(r, "ratio_analyze")),
                       fx(num(r, "ratio_factor")),
                       f(num(r, "sbm_factor_values"), "%.0f"),
                       f(num(r, "cholmod_factor_values"), "%.0f"),
                       f(num(r, "sbm_gflops")), f(num(r, "cholmod_gflops")),
                       mb(r, "sbm_peak_mb"), mb(r, "cholmod_peak_mb"),
                       f(num(r, "sbm_residual"), "%.1e"), f(num(r, "cholmod_residual"), "%.1e"),
                       stat(r, "gpu_factor_ms"), fx(num(r, "ratio_gpu_cpu")),
                       fx(num(r, "ratio_cholmod_gpu"))))
    notes = [(r["matrix"], who, r[key]) for r in rows
             for who, key in (("sbm", "sbm_note"), ("CHOLMOD", "cholmod_note"), ("GPU", "gpu_note"))
             if r.get(key)]
    gpu_notes = {n for _, who, n in notes if who == "GPU"}
    if len(gpu_notes) == 1 and all(r.get("gpu_note") for r in rows):
        out.append("\nGPU: %s (every row)." % gpu_notes.pop())
        notes = [x for x in notes if x[1] != "GPU"]
    for m, who, n in notes:
        out.append("- %s, %s: %s" % (m, who, n))


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def targets(rows, out):
    out.append("\n### Targets\n")
    for b, label in (("3", "3x3 blocks (SE2)"), ("6", "6x6 blocks (SE3)")):
        lam = [r for r in rows if r["kind"] == "Lambda" and r["block"] == b]
        got = [(r["matrix"], num(r, "ratio_factor")) for r in lam]
        have = [x for _, x in got if x is not None]
        if not lam:
            continue
        if not have:
            out.append("- CPU sbm >= 1.0x CHOLMOD on SLAM Lambda, %s: not measured" % label)
            continue
        worst = min((x, m) for m, x in got if x is not None)
        out.append("- CPU sbm >= 1.0x CHOLMOD on SLAM Lambda, %s: %s — %d of %d matrices at "
                   ">= 1.0x, geomean %s, lowest %s (%s)" % (
                       label, verdict(all(x >= 1.0 for x in have) and len(have) == len(lam)),
                       sum(x >= 1.0 for x in have), len(lam), fx(geomean(have)), fx(worst[0]),
                       worst[1]))
    s_rows = [r for r in rows if r["kind"] == "S"]
    if s_rows:
        big = max(s_rows, key=lambda r: float(r["n"]))
        x = num(big, "ratio_cholmod_gpu")
        out.append("- GPU sbm >= 5x CHOLMOD on the largest S (%s, n = %s): %s" % (
            big["matrix"], big["n"], "not measured (%s)" % (big.get("gpu_note") or "no GPU run")
            if x is None else "%s — %s" % (verdict(x >= 5.0), fx(x))))
    for r in rows:
        m = re.match(r"poses(\d)d-(\d+)$", r["matrix"])
        if m and int(m.group(2)) >= 100000:
            x = num(r, "ratio_gpu_cpu")
            out.append("- GPU factor of Lambda, %s, >= 3x the CPU path: %s" % (
                r["matrix"], "not measured (%s)" % (r.get("gpu_note") or "no GPU run")
                if x is None else "%s — %s" % (verdict(x >= 3.0), fx(x))))


def series(rows):
    """{'poses2d': [(N, row)...], 'poses3d': ..., 'ba': [(cameras, row)...]} sorted by size."""
    out = {}
    for r in rows:
        m = re.match(r"(poses\dd)-(\d+)$", r["matrix"])
        if m:
            out.setdefault(m.group(1), []).append((int(m.group(2)), r))
        m = re.match(r"ba-(\d+)-(\d+)-(\d+)$", r["matrix"])
        if m:
            out.setdefault("ba", []).append((int(m.group(1)), r))
    return {k: sorted(v, key=lambda t: t[0]) for k, v in out.items() if v}


def growth(prev, cur, key):
    if prev is None:
        return "—"
    a, b = num(prev[1], key), num(cur[1], key)
    if not a or not b or a <= 0 or b <= 0 or cur[0] == prev[0]:
        return "—"
    return "%.2f" % (math.log(b / a) / math.log(cur[0] / prev[0]))


def scaling(rows, out):
    for name, pts in series(rows).items():
        what = "cameras" if name == "ba" else "poses"
        out.append("\n### Scaling: %s (%s)\n" % (
            "synthetic BA, S" if name == "ba" else "synthetic %s pose graph, Lambda" % name[5:7],
            what))
        out.append("| %s | n | nnz(L) sbm | GFLOP per factorisation | sbm factor ms | growth | "
                   "CHOLMOD factor ms | growth | GPU factor ms | growth | sbm peak MB | growth | "
                   "CHOLMOD peak MB | sbm plan ms |" % what)
        out.append("|" + "---|" * 14)
        prev = None
        for p in pts:
            r = p[1]
            fl = num(r, "sbm_flops") or num(r, "cholmod_flops")
            out.append("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                p[0], r["n"], f(num(r, "sbm_factor_values"), "%.0f"),
                f(fl / 1e9 if fl else None, "%.3f"), stat(r, "sbm_factor_ms"),
                growth(prev, p, "sbm_factor_ms"), stat(r, "cholmod_factor_ms"),
                growth(prev, p, "cholmod_factor_ms"), stat(r, "gpu_factor_ms"),
                growth(prev, p, "gpu_factor_ms"), mb(r, "sbm_peak_mb"),
                growth(prev, p, "sbm_peak_mb"), mb(r, "cholmod_peak_mb"),
                stat(r, "sbm_plan_ms")))
            prev = p
    return series(rows)


def plot(ser, path, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        out.append("\n(plot skipped: matplotlib is not installed)")
        return
    if not ser:
        out.append("\n(plot skipped: no scaling rows)")
        return
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for name, pts in ser.items():
        xs = [p[0] for p in pts]
        for key, style, who in (("sbm_factor_ms", "o-", "sbm CPU"),
                                ("cholmod_factor_ms", "s--", "CHOLMOD"),
                                ("gpu_factor_ms", "^-", "sbm GPU")):
            pairs = [(x, num(p[1], key)) for x, p in zip(xs, pts) if num(p[1], key)]
            if pairs:
                axes[0].loglog(*zip(*pairs), style, label="%s %s" % (name, who))
        for key, style, who in (("sbm_peak_mb", "o-", "sbm"),
                                ("cholmod_peak_mb", "s--", "CHOLMOD")):
            pairs = [(x, num(p[1], key)) for x, p in zip(xs, pts) if num(p[1], key)]
            if pairs:
                axes[1].loglog(*zip(*pairs), style, label="%s %s" % (name, who))
    axes[0].set_xlabel("poses / cameras")
    axes[0].set_ylabel("factorisation, ms")
    axes[1].set_xlabel("poses / cameras")
    axes[1].set_ylabel("peak memory above A, MB")
    for a in axes:
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    out.append("\n(plot: %s)" % path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--plot")
    args = ap.parse_args()
    rows = []
    for path in args.csv:
        with open(path, newline="") as fh:
            rows.extend(csv.DictReader(fh))
    if not rows:
        print("no rows in %s" % ", ".join(args.csv))
        return 1
    out = ["Threads (OpenBLAS, both sbm and CHOLMOD): %s\n" % ", ".join(
        sorted({r["threads"] for r in rows}))]
    main_table(rows, out)
    targets(rows, out)
    ser = scaling(rows, out)
    if args.plot:
        plot(ser, args.plot, out)
    bad = [r["matrix"] for r in rows if r.get("check") == "BAD"]
    if bad:
        out.append("\n**Residual check failed:** %s" % ", ".join(bad))
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
