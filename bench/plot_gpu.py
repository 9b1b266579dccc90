#!/usr/bin/env python3
"""Plot sbm-bench-gpu's CSVs.

usage: plot_gpu.py results.csv out.png

The block CSV (--csv; header starts with "kind") gives execute and plan+execute times of sbm
against cuSPARSE per case. The scalar CSR CSV (--csr-csv; header starts with "op") gives three
panels: SpMV as % of the measured copy bandwidth (cuSPARSE, sbm auto, plan-auto and the best
plan format) per matrix; SpMM and SpGEMM speedups over cuSPARSE (cuSPARSE time / sbm time) per
matrix, with the issue's targets as lines. Missing bars: not measured (n/a, refused or failed)
or a result that failed the check against cuSPARSE.
"""
import csv
import sys

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def default_exec(r):
    """Execute time of the numeric kernel the library picks (src/cuda/cuda_gemm.cu,
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


def num(r, key):
    """The CSV field as a float, or None where it is empty."""
    v = r.get(key, "")
    return float(v) if v not in ("", None) else None


def plot_csr(rows, dst):
    """Three panels from the scalar CSR CSV (see sbm_bench_gpu.c's header comment)."""
    order = []
    for r in rows:
        if r["matrix"] not in order:
            order.append(r["matrix"])

    def pick(op, variant, key, ncols=None):
        out = {}
        for r in rows:
            if r["op"] == op and r["variant"] == variant and (ncols is None or r["ncols"] == ncols):
                v = num(r, key)
                if v is not None and r["status"].startswith("ok") and "CHECK FAILED" not in r["status"]:
                    out[r["matrix"]] = v
        return out

    fig, axes = plt.subplots(3, 1, figsize=(max(11, 0.6 * len(order)), 13))

    # SpMV: % of copy bandwidth
    ax = axes[0]
    spmv = [m for m in order if any(r["op"] == "spmv" and r["matrix"] == m for r in rows)]
    best = {}
    for r in rows:
        if (r["op"] == "spmv" and r["variant"].startswith("plan-") and r["variant"] != "plan-auto"
                and r["status"].startswith("ok") and "CHECK FAILED" not in r["status"]):
            v = num(r, "pct_copy")
            if v is not None and v > best.get(r["matrix"], (0.0, ""))[0]:
                best[r["matrix"]] = (v, r["variant"][5:])
    series = [("cuSPARSE CSR", pick("spmv", "cusparse", "pct_copy")),
              ("sbm_csr_spmv", pick("spmv", "auto", "pct_copy")),
              ("sbm plan (auto format)", pick("spmv", "plan-auto", "pct_copy")),
              ("sbm plan (best fixed format)", {m: v for m, (v, _) in best.items()})]
    w = 0.8 / len(series)
    for s_i, (label, d) in enumerate(series):
        xs = [i + (s_i - (len(series) - 1) / 2) * w for i, m in enumerate(spmv) if m in d]
        ax.bar(xs, [d[m] for m in spmv if m in d], w, label=label)
    for i, m in enumerate(spmv):
        if m in best:
            ax.text(i + 1.5 * w, best[m][0], best[m][1], rotation=90, fontsize=6, ha="center", va="bottom")
    ax.axhline(80, color="red", lw=0.8, ls="--", label="target 80% (regular, >= 10M nnz)")
    ax.set_xticks(range(len(spmv)))
    ax.set_xticklabels(spmv, rotation=50, ha="right", fontsize=7)
    ax.set_ylabel("% of copy bandwidth")
    ax.set_title("CSR SpMV: minimum traffic / time as % of device-to-device copy bandwidth "
                 "(small matrices sit in L2)", fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=3)

    def ratio_panel(ax, op, variants, targets, title):
        mats = [m for m in order if any(r["op"] == op and r["matrix"] == m for r in rows)]
        w = 0.8 / len(variants)
        for v_i, (label, variant, ncols) in enumerate(variants):
            d = pick(op, variant, "ratio", ncols)
            xs = [i + (v_i - (len(variants) - 1) / 2) * w for i, m in enumerate(mats) if m in d]
            ax.bar(xs, [d[m] for m in mats if m in d], w, label=label)
        measured = {m for _, variant, ncols in variants for m in pick(op, variant, "ratio", ncols)}
        skipped = {r["matrix"] for r in rows if r["op"] == op and r["status"].startswith("skipped")}
        for i, m in enumerate(mats):
            if m not in measured:
                ax.text(i, 1.0, "skipped" if m in skipped else "n/a", fontsize=7, ha="center",
                        va="bottom", color="gray", rotation=90)
        ax.set_xlim(-0.5, len(mats) - 0.5)
        for t, lab in targets:
            ax.axhline(t, color="red", lw=0.8, ls="--")
            ax.text(len(mats) - 0.5, t, lab, color="red", fontsize=7, ha="right", va="bottom")
        ax.axhline(1.0, color="black", lw=0.6)
        short = {r["matrix"] for r in rows if r["op"] == op and r.get("short_rows") == "1"}
        ax.set_xticks(range(len(mats)))
        ax.set_xticklabels([m + (" *" if m in short else "") for m in mats], rotation=50, ha="right",
                           fontsize=7)
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(matplotlib.ticker.FixedLocator(
            [0.05, 0.1, 0.2, 0.5, 1.0, 1.2, 1.5, 2.0, 3.0, 5.0, 10.0]))
        ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%.2g"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_ylabel("cuSPARSE time / sbm time")
        ax.set_title(title, fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7, ncol=2)

    ratio_panel(axes[1], "spmm",
                [("16 cols, sbm_csr_spmm", "auto", "16"), ("64 cols, sbm_csr_spmm", "auto", "64")],
                [(1.2, "target 1.2x (geomean)")],
                "CSR SpMM, row-major B and C: speedup over cusparseSpMM (> 1: sbm faster)")
    ratio_panel(axes[2], "gemm",
                [("plan + execute vs cusparseSpGEMM (all phases)", "oneshot", None),
                 ("execute vs cusparseSpGEMMreuse_compute", "exec", None)],
                [(1.5, "target 1.5x (short rows *)")],
                "CSR SpGEMM: speedup over cuSPARSE (* short rows: < 32 products per row of C; "
                "target 1.0x geomean)")
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src) as f:
        header = f.readline()
    if header.startswith("op,"):
        plot_csr(list(csv.DictReader(open(src))), dst)
        return
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
