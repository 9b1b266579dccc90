#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Markdown tables, target verdicts and plots from the benchmarks' CSVs.

usage: make_results.py [--block FILE] [--csr FILE] [--cpu FILE] [--plots DIR]

  --block  the block CSV of sbm-bench-gpu (--csv): SpGEMM cases (kind gemm), block SpMV (kind spmv)
  --csr    the scalar CSR CSV of sbm-bench-gpu (--csr-csv)
  --cpu    the CSV of sbm-bench (--csv), the CPU backend against CSparse
  --plots  write results_gpu.png / results_csr.png / results_cpu.png there (needs matplotlib;
           without it the plots are skipped and the output says so)

Prints markdown on stdout: the tables that bench/results/RESULTS.md (GPU) and bench/results/NOTES-cpu.md (CPU)
hold, each figure as "median [min-max]" of the run's repetitions, and every target line (CPU
SpGEMM, block SpGEMM and SpMV, scalar CSR) as met / not met with its figure. Every number comes from the CSVs, so the tables and
the CSV are one run's. Geomeans count each distinct matrix once (rows whose dup_of names an
earlier matrix are left out) and leave out results that failed the elementwise check; they are
given over every matrix and over the sizable ones (>= 1M nonzeros for SpMV / SpMM, >= 1M
products for SpGEMM: the CSV's sizable column).
"""
import argparse
import csv
import math
import os
import sys


def num(row, key):
    """The float in row[key], or None when empty or missing."""
    v = row.get(key, "")
    if v is None or v == "":
        return None
    try:
        return float(v)
    except ValueError:
        return None


def stat(row, key, digits=3):
    """'med [min-max]' from key_ms, key_min_ms, key_max_ms (or key, key_min, key_max)."""
    if key == "ms":  # the scalar CSR CSV: ms, min_ms, max_ms
        med, lo, hi = num(row, "ms"), num(row, "min_ms"), num(row, "max_ms")
    else:
        base = key[:-3] if key.endswith("_ms") else key
        med, lo, hi = num(row, base + "_ms"), num(row, base + "_min_ms"), num(row, base + "_max_ms")
    if med is None:
        return "—"
    f = "%%.%df" % digits
    if lo is None or hi is None:
        return f % med
    return (f + " [" + f + "–" + f + "]") % (med, lo, hi)


def ratio(peer, mine):
    return peer / mine if peer and mine and peer > 0 and mine > 0 else None


def fx(v, digits=2):
    return "—" if v is None else ("%%.%df×" % digits) % v


def gmean(values):
    vals = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    if not vals:
        return None, 0
    return math.exp(sum(math.log(v) for v in vals) / len(vals)), len(vals)


def verdict(ok):
    return "**met**" if ok else "**not met**"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


# ---------------------------------------------------------------------------------------------
# Block SpGEMM and block SpMV
# ---------------------------------------------------------------------------------------------

def cus_cell(r, alg):
    st = r.get("cusparse_%s_status" % alg, "")
    if num(r, "cusparse_%s_ms" % alg) is not None:
        return stat(r, "cusparse_%s_ms" % alg) + (" (timed once)" if "timed once" in st else "")
    return st or "—"


def block_gemm(rows):
    g = [r for r in rows if r["kind"] == "gemm"]
    print("### Block SpGEMM\n")
    print("Times in ms, median [min–max] of the run's repetitions. cuSPARSE: all phases of "
          "`cusparseSpGEMM` with each algorithm, work buffers allocated by an untimed warm-up "
          "call and reused (the policy of sbm's workspace pool), C allocated by every call (as "
          "sbm's plan allocates C); *best* is the fastest "
          "that ran; *reuse* is `cusparseSpGEMMreuse_compute`. Upper cases (ba, g2o): sbm "
          "computes the upper block triangle, cuSPARSE the full product; *sbm full exec* is sbm "
          "computing the full product too, and the *equal work* ratios use it. Check: max "
          "relative difference per entry (floor 1e-3 of the largest entry) against the CPU "
          "backend and, for the full product, against cuSPARSE.\n")
    hdr = ["case", "r×k×c", "products", "blocks of C", "plan", "plan, new operands", "exec",
           "sbm full exec", "GFLOP/s", "peak MB", "cuSPARSE default", "ALG2", "ALG3", "best",
           "reuse", "exec ×", "exec × equal work", "plan+exec ×", "plan+exec × equal work",
           "CPU plan / exec", "check"]
    out = []
    for r in g:
        upper = r.get("upper") == "1"
        out.append([
            r["case"] + (" (upper)" if upper else ""), "%sx%sx%s" % (r["r"], r["k"], r["c"]),
            "{:,}".format(int(float(r["products"] or 0))), "{:,}".format(int(float(r["nnzb_c"] or 0))),
            stat(r, "plan_ms"), stat(r, "plan_new_operands_ms"), stat(r, "exec_ms"),
            stat(r, "exec_full_ms") if upper else "(same)", "%.0f" % (num(r, "gflops") or 0),
            "%.0f" % (num(r, "peak_mb") or 0), cus_cell(r, "default"), cus_cell(r, "alg2"),
            cus_cell(r, "alg3"), r.get("cusparse_best") or "none ran",
            stat(r, "cusparse_reuse_exec_ms"), fx(num(r, "speedup_exec"), 1),
            fx(num(r, "speedup_exec_equal_work"), 1), fx(num(r, "speedup_full"), 1),
            fx(num(r, "speedup_full_equal_work"), 1),
            "%s / %s" % (stat(r, "cpu_plan_ms", 1), stat(r, "cpu_exec_ms", 1)), r.get("check", "")])
    print(table(hdr, out))
    print("\nForced numeric kernels (exec ms, median [min–max]): team / dmma / stage / sdmma / "
          "stage-np / sdmma-np; plan sort variants: segmented / radix.\n")
    out = [[r["case"]] + [stat(r, "exec_%s_ms" % k) for k in
                          ("team", "dmma", "stage", "sdmma", "stage_np", "sdmma_np")]
           + [stat(r, "plan_segmented_ms"), stat(r, "plan_radix_ms")] for r in g]
    print(table(["case", "team", "dmma", "stage", "sdmma", "stage-np", "sdmma-np", "plan segmented",
                 "plan radix"], out))
    return g


def block_spmv(rows):
    s = [r for r in rows if r["kind"] == "spmv"]
    if not s:
        return s
    copy = num(s[0], "copy_gbs")
    print("\n### Block SpMV `y = A·x` (β = 0), 2D Poisson, b×b blocks\n")
    print("Device-to-device copy bandwidth measured in the same run: %.0f GB/s. Bytes: values, "
          "block indices and pointers, x and y once.\n" % (copy or 0))
    out = []
    for r in s:
        out.append([r["r"], "{:,}".format(int(float(r["products"]))), "%.1f" % (num(r, "spmv_mbytes") or 0),
                    stat(r, "spmv_n_ms", 4), "%.0f%%" % (num(r, "pct_n") or 0), stat(r, "spmv_t_ms", 4),
                    "%.0f%%" % (num(r, "pct_t") or 0),
                    stat(r, "bsr_ms", 4) if num(r, "bsr_ms") is not None else r.get("bsr_status", ""),
                    "%.0f%%" % num(r, "pct_bsr") if num(r, "pct_bsr") is not None else "—"])
    print(table(["b", "blocks", "MB", "op N ms", "op N % of copy", "op T ms", "op T % of copy",
                 "cuSPARSE BSR ms", "cuSPARSE % of copy"], out))
    return s


def block_targets(g, s):
    print("\n### Targets of the block SpGEMM and block SpMV\n")
    by = {r["case"]: r for r in g}
    lines = []

    def poisson(bs, key):
        vals = []
        for fam in ("poisson2d", "poisson3d"):
            for b in bs:
                r = by.get("%s-b%d" % (fam, b))
                if r is not None:
                    vals.append(("%s b=%d" % (fam[-2:], b), num(r, key)))
        return vals

    for label, bs, key, goal in (("execute ≥ 10× cuSPARSE reuse for b ≥ 4", range(4, 9), "speedup_exec", 10),
                                 ("execute ≥ 3× for b = 2–3", (2, 3), "speedup_exec", 3),
                                 ("execute ≥ 1× for b = 1", (1,), "speedup_exec", 1),
                                 ("plan + execute ≥ 5× the best cuSPARSE all phases for b ≥ 4", range(4, 9),
                                  "speedup_full", 5)):
        vals = poisson(bs, key)
        if not vals:
            continue
        ok = all(v is not None and v >= goal for _, v in vals)
        lines.append([label, ", ".join("%s %s" % (n, fx(v, 1)) for n, v in vals), verdict(ok)])
    for case in ("ba-9x3", "ba-6x3"):
        r = by.get(case)
        if r is None:
            continue
        e = num(r, "exec_ms")
        lines.append(["1000-camera BA product (upper) ≤ 3 ms execute (%s)" % case,
                      "%s ms upper (what a BA user gets; %s cuSPARSE reuse), full product %s ms: equal work "
                      "%s exec, %s plan+exec against the best cuSPARSE (%s)"
                      % (stat(r, "exec_ms"), fx(num(r, "speedup_exec"), 1), stat(r, "exec_full_ms"),
                         fx(num(r, "speedup_exec_equal_work"), 1), fx(num(r, "speedup_full_equal_work"), 1),
                         r.get("cusparse_best") or "none ran"),
                      verdict(e is not None and e <= 3.0)])
    r = by.get("ba-9x3-5000")
    if r is not None:
        d = num(r, "diff_cpu")
        ok = d is not None and d <= 1e-9 and "FAILED" not in r.get("check", "")
        lines.append(["5000-camera BA product completes correctly",
                      "exec %s ms, plan %s ms, peak %.0f MB, %s. cuSPARSE (full product): default: %s; "
                      "ALG2: %s; ALG3: %s" % (stat(r, "exec_ms"), stat(r, "plan_ms"), num(r, "peak_mb") or 0,
                                              r.get("check", ""), cus_cell(r, "default"), cus_cell(r, "alg2"),
                                              cus_cell(r, "alg3")), verdict(ok)])
    if s:
        vals = [(int(r["r"]), num(r, "pct_n"), num(r, "pct_t")) for r in s if 2 <= int(r["r"]) <= 8]
        ok = all(n is not None and t is not None and n >= 70 and t >= 70 for _, n, t in vals)
        lines.append(["block SpMV ≥ 70% of copy bandwidth for b = 2–8",
                      ", ".join("b=%d N %.0f%% T %.0f%%" % (b, n or 0, t or 0) for b, n, t in vals), verdict(ok)])
    print(table(["target", "figure (this run)", ""], lines))


# ---------------------------------------------------------------------------------------------
# Scalar CSR
# ---------------------------------------------------------------------------------------------

def section(rows, op, title, intro):
    """The rows of one operation, its heading and note printed, and its matrices in run order."""
    s = [r for r in rows if r["op"] == op]
    if s:
        print("\n### %s\n" % title)
        print(intro + "\n")
    return s, list(dict.fromkeys(r["matrix"] for r in s))


def passed(r):
    return r.get("status", "").startswith("ok") and "CHECK FAILED" not in r.get("status", "")


def distinct(r):
    return not r.get("dup_of")


def csr_spmv(rows):
    s, mats = section(rows, "spmv", "SpMV `y = A·x`, % of copy bandwidth with the bytes each format reads",
                      "Bytes: CSR 8(m+1) + 12·nnz + 8n + 8m; ELL 12·(rows padded to 32)·(longest row); HYB "
                      "its ELL part plus 16 bytes per COO entry; DIA 8·(rows padded to 32)·(diagonals) + 8 "
                      "per offset; plus x and y. cuSPARSE: every CSR algorithm, buffer and "
                      "`cusparseSpMV_preprocess` before timing; ratios against the fastest. Times: median "
                      "[min–max] ms.")
    if not s:
        return
    hdr = ["matrix", "nnz", "cuSPARSE default", "CSR_ALG1", "CSR_ALG2", "best", "`sbm_csr_spmv`", "% copy",
           "ratio", "plan AUTO (format)", "% copy", "ratio", "scalar", "vector", "merge", "coo", "ell", "hyb",
           "dia", "max rel. diff"]
    out = []
    for m in mats:
        rs = {r["variant"]: r for r in s if r["matrix"] == m}
        a, p = rs.get("auto", {}), rs.get("plan-auto", {})
        best = a.get("cusparse_best") or p.get("cusparse_best") or ""
        fmt = p.get("status", "")
        fmt = fmt[fmt.find("chose ") + 6:].split(")")[0] if "chose " in fmt else "—"
        cells = []
        for f in ("csr-scalar", "csr-vector", "csr-merge", "coo", "ell", "hyb", "dia"):
            r = rs.get("plan-" + f, {})
            cells.append("%.0f%%" % num(r, "pct_copy") if passed(r) and num(r, "pct_copy") else
                         ("WRONG" if "CHECK FAILED" in r.get("status", "") else "—"))
        diffs = [num(r, "max_rel_diff") for r in rs.values() if num(r, "max_rel_diff") is not None]
        any_r = next(iter(rs.values()))
        out.append([m + (" (= %s)" % any_r["dup_of"] if any_r.get("dup_of") else ""),
                    "{:,}".format(int(any_r["nnz"])),
                    *[stat(rs.get("cusparse-" + k, {}), "ms", 4) if passed(rs.get("cusparse-" + k, {}))
                      else (rs.get("cusparse-" + k, {}).get("status", "—") or "—")
                      for k in ("default", "csr-alg1", "csr-alg2")],
                    best.replace("cusparse-", ""), stat(a, "ms", 4),
                    "%.0f%%" % (num(a, "pct_copy") or 0) if passed(a) else "—", fx(num(a, "ratio")),
                    "%s (%s)" % (stat(p, "ms", 4), fmt), "%.0f%%" % (num(p, "pct_copy") or 0) if passed(p) else "—",
                    fx(num(p, "ratio")), *cells, "%.1e" % max(diffs) if diffs else "—"])
    print(table(hdr, out))
    lines = []
    for v, label in (("auto", "`sbm_csr_spmv`"), ("plan-auto", "plan AUTO")):
        reg = [r for r in s if r["variant"] == v and r["family"] in ("csr-poisson2d", "csr-poisson3d", "csr-ba")
               and int(r["nnz"]) >= 10_000_000 and distinct(r) and passed(r)]
        gm, n = gmean([num(r, "pct_copy") for r in reg])
        lines.append(["SpMV ≥ 80%% of copy bandwidth on the regular large matrices (%s)" % label,
                      "geomean %s over %d (%s)" % ("%.0f%%" % gm if gm else "—", n,
                                                   ", ".join("%s %.0f%%" % (r["matrix"], num(r, "pct_copy"))
                                                             for r in reg)), verdict(gm is not None and gm >= 80)])
    for v, label in (("auto", "`sbm_csr_spmv`"), ("plan-auto", "plan AUTO")):
        pl = [r for r in s if r["variant"] == v and r["family"] == "csr-rmat" and int(r["nnz"]) >= 10_000_000
              and distinct(r) and passed(r)]
        gm, n = gmean([num(r, "ratio") for r in pl])
        lines.append(["SpMV ≥ 1.2× the best cuSPARSE on power-law (R-MAT ≥ 10M nonzeros; %s)" % label,
                      "geomean %s over %d" % (fx(gm), n), verdict(gm is not None and gm >= 1.2)])
    for v in ("auto", "plan-auto"):
        alls = [r for r in s if r["variant"] == v and distinct(r) and passed(r)]
        gm_all, n_all = gmean([num(r, "ratio") for r in alls])
        gm_big, n_big = gmean([num(r, "ratio") for r in alls if r.get("sizable") == "1"])
        lines.append(["(no target) %s, best cuSPARSE / sbm" % v,
                      "every distinct matrix %s (%d); ≥ 1M nonzeros %s (%d)" % (fx(gm_all), n_all, fx(gm_big), n_big),
                      ""])
    print("\n" + table(["target", "figure (this run)", ""], lines))


def csr_spmm(rows):
    s, mats = section(rows, "spmm", "SpMM `C = A·B`, row-major B and C",
                      "cuSPARSE: every CSR algorithm (default, CSR_ALG1–3), buffer and "
                      "`cusparseSpMM_preprocess` before timing; ratio = best cuSPARSE time / sbm time. "
                      "Times: median [min–max] ms.")
    if not s:
        return
    out = []
    for m in mats:
        line = [m]
        for k in ("16", "64"):
            rs = {r["variant"]: r for r in s if r["matrix"] == m and r["ncols"] == k}
            a = rs.get("auto", {})
            line += [stat(rs.get("cusparse-" + alg, {}), "ms", 4) if passed(rs.get("cusparse-" + alg, {}))
                     else (rs.get("cusparse-" + alg, {}).get("status", "—") or "—")
                     for alg in ("default", "csr-alg1", "csr-alg2", "csr-alg3")]
            line += [(a.get("cusparse_best") or "").replace("cusparse-", ""), stat(a, "ms", 4),
                     fx(num(a, "ratio")) if passed(a) else "WRONG" if a else "—"]
        out.append(line)
    hdr = ["matrix"]
    for k in ("16", "64"):
        hdr += ["%s cols: cuSPARSE default" % k, "CSR_ALG1", "CSR_ALG2", "CSR_ALG3", "best", "sbm", "ratio"]
    print(table(hdr, out))
    lines = []
    for k in ("16", "64"):
        auto = [r for r in s if r["variant"] == "auto" and r["ncols"] == k and distinct(r) and passed(r)]
        gm_all, n_all = gmean([num(r, "ratio") for r in auto])
        gm_big, n_big = gmean([num(r, "ratio") for r in auto if r.get("sizable") == "1"])
        lines.append(["SpMM ≥ 1.2× geomean at %s columns, every distinct matrix" % k,
                      "%s (%d)" % (fx(gm_all), n_all), verdict(gm_all is not None and gm_all >= 1.2)])
        lines.append(["SpMM ≥ 1.2× geomean at %s columns, ≥ 1M nonzeros" % k,
                      "%s (%d)" % (fx(gm_big), n_big), verdict(gm_big is not None and gm_big >= 1.2)])
    print("\n" + table(["target", "figure (this run)", ""], lines))


def csr_gemm(rows):
    s, mats = section(rows, "gemm", "SpGEMM `C = A·A` (`AᵀA` / `AAᵀ` for rectangular A)",
                      "cuSPARSE all phases: default, ALG2 and ALG3 (chunk fraction 0.2), work buffers "
                      "preallocated by an untimed warm-up call, C allocated by every call (as by "
                      "`sbm_csr_gemm`); one-shot ratio = best of them / "
                      "`sbm_csr_gemm`; execute ratio = `cusparseSpGEMMreuse_compute` / "
                      "`sbm_csr_gemm_execute`. Times: median [min–max] ms.")
    if not s:
        return
    out = []
    for m in mats:
        rs = {r["variant"]: r for r in s if r["matrix"] == m}
        if "none" in rs:
            out.append([m, "", "", "", rs["none"]["status"]] + [""] * 9)
            continue
        any_r = next(iter(rs.values()))
        o, e = rs.get("oneshot", {}), rs.get("exec", {})
        out.append([m + (" (= %s)" % any_r["dup_of"] if any_r.get("dup_of") else ""),
                    "{:,}".format(int(float(any_r["products"] or 0))), "short" if any_r.get("short_rows") == "1" else "",
                    *[stat(rs.get("cusparse-" + a, {}), "ms") if passed(rs.get("cusparse-" + a, {}))
                      else rs.get("cusparse-" + a, {}).get("status", "—") for a in ("default", "alg2", "alg3")],
                    rs.get("cusparse-full", {}).get("cusparse_best", ""), stat(o, "ms"),
                    fx(num(o, "ratio")) if passed(o) else (o.get("status", "—") or "—"),
                    stat(rs.get("cusparse-reuse", {}), "ms"), stat(e, "ms"),
                    fx(num(e, "ratio")) if passed(e) else (e.get("status", "—") or "—"),
                    "%.1e" % max(num(o, "max_rel_diff") or 0, num(e, "max_rel_diff") or 0)])
    print(table(["matrix", "products", "rows", "cuSPARSE default", "ALG2", "ALG3", "best", "`sbm_csr_gemm`",
                 "one-shot ratio", "cuSPARSE reuse", "sbm execute", "execute ratio", "max rel. diff"], out))
    lines = []
    for v, label in (("oneshot", "one-shot"), ("exec", "execute")):
        rs = [r for r in s if r["variant"] == v and distinct(r) and passed(r)]
        gm_all, n_all = gmean([num(r, "ratio") for r in rs])
        gm_big, n_big = gmean([num(r, "ratio") for r in rs if r.get("sizable") == "1"])
        gm_sh, n_sh = gmean([num(r, "ratio") for r in rs if r.get("short_rows") == "1"])
        lines.append(["SpGEMM ≥ 1.0× geomean (%s), every distinct matrix" % label, "%s (%d)" % (fx(gm_all), n_all),
                      verdict(gm_all is not None and gm_all >= 1.0)])
        lines.append(["SpGEMM ≥ 1.0× geomean (%s), ≥ 1M products" % label, "%s (%d)" % (fx(gm_big), n_big),
                      verdict(gm_big is not None and gm_big >= 1.0)])
        lines.append(["SpGEMM ≥ 1.5× on short rows (%s; < 32 products per row)" % label,
                      "%s (%d)" % (fx(gm_sh), n_sh), verdict(gm_sh is not None and gm_sh >= 1.5)])
    print("\n" + table(["target", "figure (this run)", ""], lines))


# ---------------------------------------------------------------------------------------------
# CPU
# ---------------------------------------------------------------------------------------------

def cpu(rows):
    print("\n### CPU block SpGEMM against CSparse (`sbm-bench`)\n")
    reps = rows[0].get("reps", "?") if rows else "?"
    print("Single-threaded; times median [min–max] ms of %s repetitions after an untimed warm-up. "
          "Ratios: CSparse `cs_multiply` (one-shot, symbolic included) / sbm. Check: sbm's C against "
          "CSparse's, max relative difference per entry (upper block triangle for BA).\n" % reps)
    out = []
    for r in rows:
        def st(key):
            med, lo, hi = num(r, key + "_ms"), num(r, key + "_min_ms"), num(r, key + "_max_ms")
            return "—" if med is None else "%.3f [%.3f–%.3f]" % (med, lo or med, hi or med)
        out.append([r["case"], r["backend"], r["block_c"], r.get("products", ""), st("plan"), st("exec"), st("oneshot"),
                    st("csparse"), fx(num(r, "speedup_exec_vs_csparse")), fx(num(r, "speedup_oneshot_vs_csparse")),
                    r.get("max_rel_diff", "") or "—", r.get("check", "")])
    print(table(["case", "backend", "C block", "products", "plan", "exec", "one-shot", "CSparse", "× exec",
                 "× one-shot", "max rel. diff", "check"], out))
    lines = []
    c = [r for r in rows if r["backend"] == "cpu" and r["family"] in ("poisson2d", "poisson3d")]
    for label, pick, goal in (("≥ 3× CSparse for b ≥ 3", lambda b: b >= 3, 3.0), ("≥ 1× for b = 1", lambda b: b == 1, 1.0)):
        sel = [r for r in c if pick(int(r["block_c"].split("x")[0]))]
        if not sel:
            continue
        one = [(r["case"], num(r, "speedup_oneshot_vs_csparse")) for r in sel]
        ex = [(r["case"], num(r, "speedup_exec_vs_csparse")) for r in sel]
        ok = all(v is not None and v >= goal for _, v in one)
        lines.append(["%s (one-shot, the call CSparse's matches)" % label,
                      ", ".join("%s %s" % (n, fx(v)) for n, v in one), verdict(ok)])
        lines.append(["%s (execute with a reused plan)" % label, ", ".join("%s %s" % (n, fx(v)) for n, v in ex),
                      verdict(all(v is not None and v >= goal for _, v in ex))])
    if lines:
        print("\n" + table(["target", "figure (this run)", ""], lines))


# ---------------------------------------------------------------------------------------------
# Plots
# ---------------------------------------------------------------------------------------------

def plots(outdir, block, csr, cpu_rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("\n(plots skipped: matplotlib is not installed)")
        return
    os.makedirs(outdir, exist_ok=True)
    made = []
    g = [r for r in block if r["kind"] == "gemm"]
    if g:
        fig, ax = plt.subplots(figsize=(12, 4))
        names = [r["case"] for r in g]
        x = range(len(names))
        ax.bar([i - 0.2 for i in x], [num(r, "speedup_exec") or 0 for r in g], 0.4, label="exec (sbm as used)")
        ax.bar([i + 0.2 for i in x], [num(r, "speedup_exec_equal_work") or 0 for r in g], 0.4,
               label="exec, equal work")
        ax.set_yscale("log")
        ax.set_xticks(list(x), names, rotation=70, fontsize=7)
        ax.set_ylabel("cuSPARSE reuse / sbm execute")
        ax.axhline(1.0, color="k", lw=0.5)
        ax.legend()
        fig.tight_layout()
        made.append(os.path.join(outdir, "results_gpu.png"))
        fig.savefig(made[-1], dpi=120)
    if csr:
        fig, axes = plt.subplots(1, 3, figsize=(15, 4))
        for ax, op, variant, label in ((axes[0], "spmv", "plan-auto", "SpMV plan AUTO"),
                                       (axes[1], "spmm", "auto", "SpMM"), (axes[2], "gemm", "oneshot", "SpGEMM one-shot")):
            rs = [r for r in csr if r["op"] == op and r["variant"] == variant and passed(r) and distinct(r)]
            names = ["%s%s" % (r["matrix"], "/" + r["ncols"] if r.get("ncols") else "") for r in rs]
            ax.bar(range(len(rs)), [num(r, "ratio") or 0 for r in rs])
            ax.set_xticks(range(len(rs)), names, rotation=80, fontsize=6)
            ax.axhline(1.0, color="k", lw=0.5)
            ax.set_title(label + ": best cuSPARSE / sbm")
        fig.tight_layout()
        made.append(os.path.join(outdir, "results_csr.png"))
        fig.savefig(made[-1], dpi=120)
    if cpu_rows:
        fig, ax = plt.subplots(figsize=(10, 4))
        rs = [r for r in cpu_rows if r["backend"] == "cpu"]
        ax.bar(range(len(rs)), [num(r, "speedup_oneshot_vs_csparse") or 0 for r in rs])
        ax.set_xticks(range(len(rs)), [r["case"] for r in rs], rotation=70, fontsize=7)
        ax.set_ylabel("CSparse / sbm one-shot")
        ax.axhline(1.0, color="k", lw=0.5)
        fig.tight_layout()
        made.append(os.path.join(outdir, "results_cpu.png"))
        fig.savefig(made[-1], dpi=120)
    print("\n(plots: %s)" % ", ".join(made))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--block")
    ap.add_argument("--csr")
    ap.add_argument("--cpu")
    ap.add_argument("--plots")
    a = ap.parse_args()
    if not (a.block or a.csr or a.cpu):
        ap.error("give at least one of --block, --csr, --cpu")
    block = read(a.block) if a.block else []
    csr_rows = read(a.csr) if a.csr else []
    cpu_rows = read(a.cpu) if a.cpu else []
    if block:
        print("## Block SpGEMM and SpMV (from %s)\n" % os.path.basename(a.block))
        g = block_gemm(block)
        s = block_spmv(block)
        block_targets(g, s)
    if csr_rows:
        print("\n## Scalar CSR (from %s)" % os.path.basename(a.csr))
        csr_spmv(csr_rows)
        csr_spmm(csr_rows)
        csr_gemm(csr_rows)
    if cpu_rows:
        cpu(cpu_rows)
    if a.plots:
        plots(a.plots, block, csr_rows, cpu_rows)


if __name__ == "__main__":
    sys.exit(main())
