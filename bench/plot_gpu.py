#!/usr/bin/env python3
"""Plot sbm-bench-gpu's CSV: execute and plan+execute times of sbm against cuSPARSE per case.

usage: plot_gpu.py results.csv out.png
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def default_exec(r):
    """Execute time of the numeric kernel the library picks (kernels/cuda_gemm.cu,
    sbm__gemm_use_dmma): tensor cores for fast triples with r*c >= 25, else thread per element.
    Falls back to the default column of CSVs without the per-kernel columns."""
    team, dmma = r.get("exec_team_ms"), r.get("exec_dmma_ms")
    if not team:
        return float(r["exec_ms"])
    rr, cc, fast = int(r["r"]), int(r["c"]), int(r["fast_path"])
    return float(dmma) if fast and rr * cc >= 25 and float(dmma) > 0 else float(team)


def default_plan(r):
    """Plan time of the sort the library picks (sbm__gemm_use_radix: radix for long output
    columns, i.e. the BA cases here; segmented otherwise)."""
    seg = float(r.get("plan_segmented_ms") or r["plan_ms"])
    return float(r["plan_radix_ms"]) if r["case"].startswith("ba-") else seg


def main():
    src, dst = sys.argv[1], sys.argv[2]
    rows = [r for r in csv.DictReader(open(src)) if r["kind"] == "gemm" and float(r["exec_ms"] or -1) > 0]
    names = [r["case"] for r in rows]
    sbm_exec = [default_exec(r) for r in rows]
    sbm_full = [default_plan(r) + default_exec(r) for r in rows]
    cus_exec = [float(r["cusparse_reuse_exec_ms"]) for r in rows]
    cus_full = [float(r["cusparse_full_ms"]) for r in rows]
    x = range(len(rows))
    fig, axes = plt.subplots(2, 1, figsize=(max(10, 0.55 * len(rows)), 9), sharex=True)
    w = 0.38
    for ax, mine, theirs, title in (
        (axes[0], sbm_exec, cus_exec, "execute (numeric phase): sbm vs cusparseSpGEMMreuse_compute"),
        (axes[1], sbm_full, cus_full, "plan + execute: sbm vs cusparseSpGEMM (all phases)"),
    ):
        ax.bar([i - w / 2 for i in x], mine, w, label="sbm (CUDA, block ESC)")
        ok = [(i, t) for i, t in zip(x, theirs) if t > 0]
        ax.bar([i + w / 2 for i, _ in ok], [t for _, t in ok], w, label="cuSPARSE (scalar CSR)")
        for i, t in zip(x, theirs):
            if t <= 0:
                ax.text(i + w / 2, min(mine) if mine else 1, "failed", rotation=90, fontsize=7,
                        ha="center", va="bottom", color="red")
        ax.set_yscale("log")
        ax.set_ylabel("ms (log)")
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    axes[1].set_xticks(list(x))
    axes[1].set_xticklabels(names, rotation=60, ha="right", fontsize=8)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main()
