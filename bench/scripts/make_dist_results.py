#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The tables and the scaling plot of distributed BA from sbm-bench-dist's CSVs.

    make_dist_results.py [--plot dist-scaling.png] dist-strong.csv [dist-weak.csv ...]

Prints one markdown table per CSV (ranks, problem, ms per LM iteration, speedup against one
context or one rank, bytes per PCG iteration, MegBA's bytes and the ratio, the communicator's
share of the time) and the issue's targets measured on it: strong scaling <= 0.55x the one-GPU
time on 2 GPUs and <= 0.30x on 4; weak scaling within 1.3x at 4 GPUs; bytes per PCG iteration at
most 1/10 of MegBA's. A target whose row is missing reads "not measured". With --plot, the time
per iteration against the GPU count (skipped, visibly, without matplotlib).
"""
import argparse
import csv


def rows_of(path):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r.get("status") == "ok"]


def table(path, rows):
    print(f"### {path}\n")
    print("| mode | ranks | partition | cameras | observations | ms/iteration | speedup | bytes/PCG it | MegBA bytes | ratio | comm share |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ranks = r["ranks"] if r["ranks"] != "0" else "1 (one context)"
        print(f"| {r['mode']} | {ranks} | {r['partition']} | {r['cameras']} | {r['observations']} | "
              f"{float(r['ms_per_iteration']):.2f} | {float(r['speedup']):.2f} | {r['bytes_per_pcg']} | "
              f"{r['megba_bytes_per_pcg']} | {r['megba_ratio']} | {100 * float(r['comm_share']):.1f}% |")
    print()


def verdicts(rows):
    by = {int(r["ranks"]): r for r in rows}
    mode = rows[0]["mode"] if rows else "?"
    base = by.get(0) or by.get(1)
    out = []
    for n, limit in ((2, 0.55), (4, 0.30)) if mode == "strong" else ((4, 1.3),):
        if not base or n not in by:
            out.append(f"- {mode} {n} GPUs: not measured")
            continue
        ratio = float(by[n]["ms_per_iteration"]) / float(base["ms_per_iteration"])
        ok = ratio <= limit
        out.append(f"- {mode} {n} GPUs: {ratio:.2f}x the {'one-GPU' if mode == 'strong' else '1-GPU'} "
                   f"time per iteration (target <= {limit}x): {'met' if ok else 'NOT met'}")
    for n, r in sorted(by.items()):
        if n >= 2 and r["megba_ratio"] not in ("", "inf"):
            ok = float(r["megba_ratio"]) >= 10
            out.append(f"- bytes per PCG iteration on {n} ranks: 1/{float(r['megba_ratio']):.1f} of "
                       f"MegBA's (target <= 1/10): {'met' if ok else 'NOT met'}")
    print("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plot")
    ap.add_argument("csv", nargs="+")
    a = ap.parse_args()
    series = []
    for path in a.csv:
        rows = rows_of(path)
        table(path, rows)
        verdicts(rows)
        series.append((path, [(int(r["ranks"]), float(r["ms_per_iteration"])) for r in rows
                              if r["ranks"] != "0"]))
    if a.plot:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("plot skipped: matplotlib is not installed")
            return
        for path, pts in series:
            plt.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=path)
        plt.xlabel("GPUs")
        plt.ylabel("ms per LM iteration")
        plt.legend()
        plt.savefig(a.plot, dpi=120)
        print(f"plot -> {a.plot}")


if __name__ == "__main__":
    main()
