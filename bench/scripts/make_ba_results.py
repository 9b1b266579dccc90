#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The GPU iterations' section of bench/results/RESULTS.md from sbm-bench-ba's CSV and ceres_e2e.py's CSV.

usage: bench/scripts/make_ba_results.py [--device CSV]... [--ceres CSV] [--md FILE] [--plot PNG]

--device: sbm-bench-ba --csv output (the device run; several files are read in order, a later
row of the same section/problem/backend replacing an earlier one; default
bench/results/results_ba_gpu.csv). --ceres: bench/scripts/ceres_e2e.py's rows (default
bench/results/results_ba_ceres.csv). Writes the markdown section "BA and SLAM iterations on the GPU" to
--md (default: stdout) with the per-phase breakdown, each BA phase against its DRAM floor, the
GPU/CPU ratios, the end-to-end comparison with Ceres, the SLAM table, the scaling and
out-of-memory runs and every target with its verdict; and the plot of the time
per iteration against the number of observations (--plot, default bench/results/results_ba.png;
skipped, visibly, without matplotlib). Anything missing from the CSVs reads "not measured".
"""
import argparse
import csv
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))  # bench/scripts
RESULTS = os.path.join(os.path.dirname(HERE), "results")
NM = "not measured"


def num(row, key):
    if not row:
        return None
    v = row.get(key, "")
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def f(x, spec=".3g", none="-"):
    return none if x is None else format(x, spec)


def ms(x):
    if x is None:
        return "-"
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def read_device(paths):
    """(rows by kind, notes): later files replace earlier runs of the same key."""
    runs, order, iters, skips, yard, attempts = {}, [], [], [], [], []
    for p in paths:
        if not os.path.exists(p):
            print(f"make_ba_results.py: {p}: no such file ({NM})", file=sys.stderr)
            continue
        with open(p, newline="") as fh:
            for r in csv.DictReader(fh):
                k = r.get("kind")
                key = (r.get("section"), r.get("problem"), r.get("backend"), r.get("note"))
                if k == "run":
                    if key not in runs:
                        order.append(key)
                    runs[key] = r
                elif k == "iter":
                    iters.append(r)
                elif k == "skip":
                    skips.append(r)
                elif k == "yardstick":
                    yard.append(r)
                elif k == "attempt":
                    attempts.append(r)
    return [runs[k] for k in order], iters, skips, yard, attempts


def read_ceres(path):
    if not path or not os.path.exists(path):
        return []
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def pick(runs, section, problem=None, backend=None):
    out = [r for r in runs if r["section"] == section and (problem is None or r["problem"] == problem)
           and (backend is None or r["backend"] == backend)]
    return out


def one(runs, section, problem, backend):
    r = pick(runs, section, problem, backend)
    return r[-1] if r else None


def ok(r):
    return r is not None and r.get("status") == "SBM_SUCCESS"


def per_it(r):
    return num(r, "total_ms") if ok(r) else None


def problems(runs, section):
    seen = []
    for r in runs:
        if r["section"] == section and r["problem"] not in seen:
            seen.append(r["problem"])
    return seen


# ---- tables -------------------------------------------------------------------------------------

def phase_table(runs):
    out = ["### Per-phase breakdown (ms per iteration, medians over the iterations)", "",
           "Linearize: the median over the iterations that relinearised (else the setup's); "
           "Schur, solve, update: over the iterations that ran them; total: over the full cycles "
           "(bench/results/NOTES-ba-gpu.md). SLAM: linearize = errors and Jacobians, Schur = Lambda and "
           "b; observations = edges.", "",
           "| problem | backend | device | observations / edges | linear solver | its | linearize | Schur "
           "| solve | update | total | linearize % | PCG its | peak MB | note |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    rows = [r for r in runs if r["section"] in ("ba", "bal", "slam")]
    if not rows:
        return out + [f"| {NM} |" + " |" * 14, ""]
    for r in rows:
        t, lin = num(r, "total_ms"), num(r, "lin_ms")
        share = f"{100 * lin / t:.0f} %" if ok(r) and t and lin is not None else "-"
        note = r.get("note", "") if ok(r) else f"{r.get('status')}: {r.get('message')}"
        out.append("| " + " | ".join([
            r["problem"], r["backend"], r["device"], r["observations"] or r["edges"],
            r["linear_solver"],
            r["iterations"], ms(num(r, "lin_ms")), ms(num(r, "schur_ms")), ms(num(r, "solve_ms")),
            ms(num(r, "update_ms")), ms(t), share, f(num(r, "pcg_its"), ".0f"),
            f(num(r, "peak_mb"), ".0f"), note]) + " |")
    return out + [""]


def floor_table(runs, yard):
    gbs = num(yard[-1], "copy_gbs") if yard else None
    what = yard[-1].get("note", "") if yard else NM
    out = [f"### Each BA phase against its DRAM floor (copy bandwidth {f(gbs, '.0f', NM)} GB/s: "
           f"{what})", "",
           "Floor = the bytes the phase must read and write at least (bench/ba/floor.c, "
           "NOTES-ba-gpu.md) / the copy bandwidth of the same run. The solve's bytes are those of "
           "the median PCG iteration count; a Cholesky solve is flop-bound and has no floor.", "",
           "| problem | backend | phase | MB moved | floor ms | time ms | time / floor |",
           "|---|---|---|---|---|---|---|"]
    rows = [r for r in runs if r["section"] == "ba" and ok(r) and num(r, "floor_total_ms")]
    if not rows:
        return out + [f"| {NM} | | | | | | |", ""]
    for r in rows:
        for ph, tcol in (("lin", "lin_ms"), ("schur", "schur_ms"), ("solve", "solve_ms"),
                         ("update", "update_ms"), ("total", "total_ms")):
            b = None
            if ph == "total":
                parts = [num(r, f"bytes_{p}") for p in ("lin", "schur", "solve", "update")]
                b = sum(p for p in parts if p is not None)
            else:
                b = num(r, f"bytes_{ph}")
            fl, t = num(r, f"floor_{ph}_ms"), num(r, tcol)
            ratio = f"{t / fl:.0f}x" if fl and t is not None else "-"
            out.append("| " + " | ".join([r["problem"], r["backend"], ph, f(b / 1e6 if b else None,
                                                                              ".1f"),
                                          f(fl, ".4f"), ms(t), ratio]) + " |")
    return out + [""]


def cost_diff(iters, sec, p):
    """max over the common iterations of |cost_gpu - cost_cpu| / |cost_cpu| (None: no pair)."""
    by = {}
    for r in iters:
        if r["section"] == sec and r["problem"] == p and num(r, "cost") is not None:
            by.setdefault(r["backend"], {})[r["iteration"]] = num(r, "cost")
    g, c = by.get("cuda", {}), by.get("cpu", {})
    common = [k for k in g if k in c]
    if not common:
        return None
    return max(abs(g[k] - c[k]) / abs(c[k]) if c[k] else abs(g[k]) for k in common)


def ratio_table(runs, skips, iters):
    out = ["### GPU against the CPU backend, per iteration (same run, same machine)", "",
           "The last column: the largest relative difference between the two backends' costs "
           "after each iteration (the target: 1e-10).", "",
           "| section | problem | GPU ms/it | CPU ms/it | CPU / GPU | GPU device | CPU "
           "| cost per iteration, GPU vs CPU |",
           "|---|---|---|---|---|---|---|---|"]
    n = 0
    for sec in ("ba", "bal", "slam", "scaling"):
        for p in problems(runs, sec):
            g, c = one(runs, sec, p, "cuda"), one(runs, sec, p, "cpu")
            tg, tc = per_it(g), per_it(c)
            if tc is None:
                sk = [s for s in skips if s["section"] == sec and s["problem"] == p
                      and s["backend"] == "cpu"]
                cpu = sk[-1]["note"] if sk else NM
            else:
                cpu = ms(tc)
            ratio = f"{tc / tg:.1f}" if tg and tc else NM
            d = cost_diff(iters, sec, p)
            out.append(f"| {sec} | {p} | {ms(tg) if tg else NM} | {cpu} | {ratio} | "
                       f"{g['device'] if g else '-'} | {c['device'] if c else '-'} | "
                       f"{f(d, '.1e', NM)} |")
            n += 1
    return out + ([f"| {NM} | | | | | | | |"] if n == 0 else []) + [""]


def ceres_table(runs, ceres):
    out = ["### End to end against native Ceres", "",
           "sbm: `sbm_ba_solve` (what `sbm ba-solve` runs) on the device, default options, to "
           "convergence; wall time from the problem in host memory to the result (setup: the part "
           "outside the iterations: patterns, plans, the first linearisation, uploads). Ceres: "
           "bench/scripts/ceres_e2e.py (bench/peers/ceres_ba.cc, every core of its machine), the same problem "
           "written by `sbm bal-generate`; its wall time is `ceres::Solve`. The start costs "
           "must agree (the same problem).", "",
           "| problem | sbm on | sbm its | sbm final cost | sbm wall s (setup) | Ceres (solver) | Ceres on "
           "| Ceres its | Ceres final cost | Ceres wall s | same start | (sbm - Ceres) / Ceres "
           "| target (<= 1e-8) |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    verdicts = {}
    names = problems(runs, "e2e") or sorted({c["case"] for c in ceres})
    for p in names:
        s = next((r for r in reversed(runs) if r["section"] == "e2e" and r["problem"] == p), None)
        cs = [c for c in ceres if c["case"] == p and num(c, "final_cost") is not None]
        if not cs:
            cs = [None]
        for c in cs:
            sf, cf = num(s, "final_cost") if ok(s) else None, num(c, "final_cost")
            si, ci = num(s, "initial_cost"), num(c, "initial_cost")
            same = ("yes" if si and ci and abs(si - ci) <= 1e-9 * abs(ci) else
                    "NO: different problems" if si and ci else NM)
            rel = (sf - cf) / cf if sf is not None and cf else None
            if rel is None:
                v = NM + ("" if c else " (no Ceres row)") + ("" if ok(s) else " (no sbm run)")
            elif same.startswith("NO"):
                v = "not comparable (different starts)"
            else:
                v = "met" if rel <= 1e-8 else f"not met ({rel:.1e})"
            verdicts.setdefault(p, []).append(v)
            dev = f"{s['backend']}, {s['device']}" if s else NM
            out.append("| " + " | ".join([
                p, dev, s["iterations"] if s else "-", f(sf, ".12e"),
                f"{f(num(s, 'wall_s'), '.3f')} ({f(num(s, 'setup_s'), '.3f')})",
                (c["tool"] + " " + c["linear_solver"]) if c else NM, c["machine"] if c else "-",
                c["iterations"] if c else "-", f(cf, ".12e"), f(num(c, "time_wall_s"), ".3f"),
                same, f(rel, ".1e"), v]) + " |")
    if not names:
        out.append(f"| {NM} |" + " |" * 12)
    return out + [""], verdicts


def slam_table(runs):
    out = ["### SLAM: pose graphs to convergence, GPU against the CPU backend", "",
           "| graph | vertices | edges | GPU ms/it | CPU ms/it | CPU / GPU | GPU its | CPU its "
           "| GPU chi2 | CPU chi2 | rel. difference | target (>= 5x, chi2 to 1e-8) |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    verdicts = {}
    for p in problems(runs, "slam"):
        g, c = one(runs, "slam", p, "cuda"), one(runs, "slam", p, "cpu")
        tg, tc = per_it(g), per_it(c)
        xg = 2 * num(g, "final_cost") if ok(g) and num(g, "final_cost") is not None else None
        xc = 2 * num(c, "final_cost") if ok(c) and num(c, "final_cost") is not None else None
        rel = abs(xg - xc) / abs(xc) if xg is not None and xc else None
        sp = tc / tg if tg and tc else None
        if sp is None or rel is None:
            v = NM
        else:
            why = [w for w, bad in ((f"speed {sp:.1f}x, GPU {limiting(g)}", sp < 5),
                                    (f"chi2 {rel:.1e}", rel > 1e-8)) if bad]
            v = "met" if not why else "not met (" + ", ".join(why) + ")"
        verdicts[p] = v
        src = g or c
        out.append("| " + " | ".join([
            p, src.get("vertices", "") if src else "-", src.get("edges", "") if src else "-",
            ms(tg) if tg else NM, ms(tc) if tc else NM, f(sp, ".1f"),
            g["iterations"] if g else "-", c["iterations"] if c else "-", f(xg, ".10e"),
            f(xc, ".10e"), f(rel, ".1e"), v]) + " |")
    if not verdicts:
        out.append(f"| {NM} |" + " |" * 11)
    return out + [""], verdicts


def oom_lines(runs, attempts):
    out, clean = [], None
    for a in attempts:
        r = next((x for x in runs if x["section"] == "oom" and x["note"] == a["note"]), None)
        if r is None:
            out.append(f"- {a['problem']}, {a['note']}: **no result: the program died in this run "
                       f"(a crash)**")
            clean = False
            continue
        st, msg = r.get("status"), r.get("message", "")
        if st == "SBM_ERR_OUT_OF_MEMORY":
            good = re.search(r"\d+ bytes", msg) is not None
            out.append(f"- {r['problem']} on {r['backend']} ({r['device']}), {r['note']}: "
                       f"{'clean' if good else 'out of memory, but the message names no size'}: "
                       f"`{st}: {msg.split(': ', 1)[-1]}`")
            clean = good if clean is None else clean and good
        elif st == "SBM_SUCCESS":
            out.append(f"- {r['problem']} on {r['backend']}, {r['note']}: solved within the limit "
                       f"(peak {f(num(r, 'peak_mb'), '.0f')} MB): the limit does not bind there")
        else:
            out.append(f"- {r['problem']} on {r['backend']}, {r['note']}: **{st}** (not an "
                       f"out-of-memory status): {msg}")
            clean = False
    return out, clean


def scaling_table(runs, skips, yard, attempts):
    out = ["### Scaling: time per iteration against the number of observations", "",
           "Synthetic BA, 6 observations per point, 600 per camera (AUTO), GPU "
           "and CPU; the CPU stops where one iteration is predicted above its limit.", "",
           "| observations | cameras | points | linear solver | GPU ms/it | GPU peak MB | CPU ms/it "
           "| CPU peak MB | CPU / GPU |", "|---|---|---|---|---|---|---|---|---|"]
    obs = sorted({int(r["observations"]) for r in runs if r["section"] == "scaling"} |
                 {int(s["observations"]) for s in skips if s["section"] == "scaling"
                  and s.get("observations")})
    for o in obs:
        g = next((r for r in runs if r["section"] == "scaling" and r["backend"] == "cuda"
                  and r["observations"] == str(o)), None)
        c = next((r for r in runs if r["section"] == "scaling" and r["backend"] == "cpu"
                  and r["observations"] == str(o)), None)
        sk = next((s for s in skips if s["section"] == "scaling" and s["backend"] == "cpu"
                   and s.get("observations") == str(o)), None)
        src = g or c
        tg, tc = per_it(g), per_it(c)
        gtxt = ms(tg) if tg else (f"{g['status']}: {g['message']}" if g else NM)
        ctxt = ms(tc) if tc else (sk["note"] if sk else NM)
        out.append("| " + " | ".join([
            str(o), src["cameras"] if src else "-", src["points"] if src else "-",
            src["linear_solver"] if src else "-", gtxt, f(num(g, "peak_mb"), ".0f"), ctxt,
            f(num(c, "peak_mb"), ".0f"), f(tc / tg, ".1f") if tg and tc else "-"]) + " |")
    if not obs:
        out.append(f"| {NM} |" + " |" * 8)
    out.append("")
    dev_mb = num(yard[-1], "device_mb") if yard else None
    gp = [(int(r["observations"]), num(r, "peak_mb")) for r in runs
          if r["section"] == "scaling" and r["backend"] == "cuda" and num(r, "peak_mb")]
    limit = None
    if gp and dev_mb:
        o, p = max(gp)
        limit = dev_mb / (p / o)
        out.append(f"Device memory {dev_mb / 1e3:.1f} GB (1e9 bytes); the peak grows about linearly "
                   f"({p / o * 1e3:.2f} kB per observation at {o:.3g}): it would run out near "
                   f"{limit:.2g} observations (extrapolated, not run).")
    lines, clean = oom_lines(runs, attempts)
    out += ["", "Out of memory (the largest size with less memory than it needs):", ""]
    out += lines or [f"- {NM}"]
    return out + [""], clean, limit


def plot(runs, skips, attempts, limit, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("make_ba_results.py: plot skipped (matplotlib not installed: python3-matplotlib)",
              file=sys.stderr)
        return False
    fig, ax = plt.subplots(figsize=(7.5, 5))
    for be, style, label, col in (("cuda", "o-", "GPU", "C0"), ("cpu", "s-", "CPU backend", "C1")):
        pts = sorted((int(r["observations"]), per_it(r)) for r in runs
                     if r["section"] == "scaling" and r["backend"] == be and per_it(r))
        if pts:
            dev = next(r["device"] for r in runs if r["section"] == "scaling" and r["backend"] == be)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=col, label=f"{label} ({dev})")
            if be == "cuda":  # AUTO's linear solver at each size (it changes the slope)
                for r in runs:
                    if r["section"] == "scaling" and r["backend"] == be and per_it(r):
                        ax.annotate(r["linear_solver"], (int(r["observations"]), per_it(r)),
                                    textcoords="offset points", xytext=(4, -12), fontsize=7,
                                    color=col)
        tg = [(int(r["observations"]), per_it(r)) for r in runs
              if r["section"] == "ba" and r["backend"] == be and per_it(r)]
        if tg:
            ax.plot([p[0] for p in tg], [p[1] for p in tg], "*" if be == "cuda" else "P", color=col,
                    markersize=11, linestyle="none", label=f"{label}: the target problems")
    for s in skips:
        m = re.search(r"predicted ([\d.]+) s", s.get("note", ""))
        if s["section"] == "scaling" and s["backend"] == "cpu" and m and s.get("observations"):
            ax.plot(int(s["observations"]), 1e3 * float(m.group(1)), "s", mfc="none", color="C1")
            ax.annotate("CPU skipped\n(predicted)", (int(s["observations"]), 1e3 * float(m.group(1))),
                        textcoords="offset points", xytext=(-70, 5), fontsize=8)
    for r in runs:
        if r["section"] == "oom" and r.get("status") == "SBM_ERR_OUT_OF_MEMORY":
            ax.axvline(int(r["observations"]), color="red", linestyle=":", alpha=0.6)
            ax.annotate(f"clean out of memory\n(cap {f(num(r, 'cap_mb'), '.0f')} MB)",
                        (int(r["observations"]), 0.03), xycoords=("data", "axes fraction"),
                        textcoords="offset points", xytext=(4, 0), fontsize=8, color="red")
            break
    if any(a for a in attempts) and not any(r["section"] == "oom" for r in runs):
        ax.set_title("out-of-memory run: no result (crash)", color="red")
    if limit:
        ax.axvline(limit, color="gray", linestyle="--")
        ax.annotate("device memory full\n(extrapolated)", (limit, 0.9), textcoords="offset points",
                    xytext=(-95, 0), xycoords=("data", "axes fraction"), fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("observations")
    ax.set_ylabel("ms per LM iteration (median, full cycle)")
    ax.grid(True, which="both", alpha=0.3)
    if ax.lines:
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    return True


# ---- targets ------------------------------------------------------------------------------------

PHASES = (("lin", "linearize"), ("schur", "Schur"), ("solve", "solve"), ("update", "update"))


def limiting(r):
    """"largest GPU phase: solve 12.3 ms" (the phase that limits a target not met)."""
    ph = [(num(r, f"{k}_ms"), name) for k, name in PHASES if num(r, f"{k}_ms") is not None]
    if not ph:
        return ""
    t, name = max(ph)
    return f"largest phase: {name} {ms(t)} ms"

def targets(runs, ceres_v, slam_v, clean, scaling_ok):
    out = ["### Targets", "", "| target | figure | verdict |", "|---|---|---|"]
    big = [r for r in runs if r["section"] == "ba" and r["backend"] == "cuda" and ok(r)
           and r["problem"].startswith("synthetic 5000,")]
    if big:
        r = big[-1]
        t, lin = per_it(r), num(r, "lin_ms")
        share = 100 * lin / t if t and lin is not None else None
        why = [w for w, bad in ((f"{t:.1f} ms > 60 ms ({limiting(r)})", t > 60),
                                (f"linearize {share:.0f} % > 15 %", share is not None and share > 15))
               if bad]
        out.append(f"| 5000 cameras / 400k points / 8 obs: <= 60 ms per iteration, linearize "
                   f"<= 15 % | {ms(t)} ms, linearize {f(share, '.0f')} % ({r['device']}) | "
                   f"{'met' if not why else 'not met: ' + '; '.join(why)} |")
    else:
        out.append(f"| 5000 cameras: <= 60 ms per iteration | - | {NM} |")
    g = one(runs, "ba", next((p for p in problems(runs, "ba") if p.startswith("synthetic 1000,")), ""), "cuda")
    c = one(runs, "ba", g["problem"] if g else "", "cpu") if g else None
    tg, tc = per_it(g), per_it(c)
    if tg and tc:
        out.append(f"| 1000 cameras / 100k points: >= 30x the CPU backend | {tc / tg:.1f}x "
                   f"({ms(tc)} / {ms(tg)} ms) | "
                   f"{'met' if tc / tg >= 30 else 'not met (GPU ' + limiting(g) + ')'} |")
    else:
        out.append(f"| 1000 cameras: >= 30x the CPU backend | - | {NM} |")
    bal = [(p, per_it(one(runs, "bal", p, "cuda"))) for p in problems(runs, "bal")]
    if bal and all(t for _, t in bal):
        worst = max(t for _, t in bal)
        slow = [f"{p}: {limiting(one(runs, 'bal', p, 'cuda'))}" for p, t in bal if t > 5]
        out.append("| shared BAL files: <= 5 ms per iteration | " +
                   ", ".join(f"{p} {ms(t)} ms" for p, t in bal) +
                   f" | {'met' if worst <= 5 else 'not met (' + '; '.join(slow) + ')'} |")
    else:
        out.append(f"| shared BAL files: <= 5 ms per iteration | - | {NM} |")
    cv = [f"{p}: {'; '.join(v)}" for p, v in ceres_v.items()]
    allmet = ceres_v and all(all(x == "met" for x in v) for v in ceres_v.values())
    cnm = not ceres_v or any(all(x.startswith((NM, "not comparable")) for x in v)
                             for v in ceres_v.values())
    out.append("| end to end: Ceres' final cost to 1e-8 relative | " + ("; ".join(cv) or "-") +
               f" | {'met' if allmet else NM if cnm else 'not met'} |")
    sv = [f"{p}: {v}" for p, v in slam_v.items()]
    smet = slam_v and all(v == "met" for v in slam_v.values())
    snm = not slam_v or any(v == NM for v in slam_v.values())
    out.append("| SLAM (100k-pose 3D, largest shared): >= 5x CPU, chi2 to 1e-8 | " +
               ("; ".join(sv) or "-") + f" | {'met' if smet else NM if snm else 'not met'} |")
    span, ngpu = scaling_ok
    v = ("NOT clean (see the out-of-memory lines)" if clean is False else
         "shown" if clean and ngpu >= 2 else
         f"partly: {'no GPU sizes' if ngpu < 2 else 'no out-of-memory run'}" if clean or ngpu else NM)
    out.append(f"| scaling 1e5 -> 1e7, GPU and CPU, clean out of memory | {span} | {v} |")
    return out + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", action="append", help="sbm-bench-ba CSV (repeatable)")
    ap.add_argument("--ceres", default=os.path.join(RESULTS, "results_ba_ceres.csv"))
    ap.add_argument("--md", default=None)
    ap.add_argument("--plot", default=os.path.join(RESULTS, "results_ba.png"))
    args = ap.parse_args()
    paths = args.device or [os.path.join(RESULTS, "results_ba_gpu.csv")]
    runs, iters, skips, yard, attempts = read_device(paths)
    ceres = read_ceres(args.ceres)
    dev = next((r["device"] for r in runs if r["backend"] == "cuda"), None)
    host = next((r["device"] for r in runs if r["backend"] == "cpu"), None)
    md = ["## BA and SLAM iterations on the GPU", "",
          f"sbm-bench-ba ({', '.join(os.path.basename(p) for p in paths)}): GPU "
          f"{dev or NM + ' (no CUDA run in these files)'}; CPU backend on {host or NM}; "
          f"Ceres: {os.path.basename(args.ceres) if ceres else NM}. Method: bench/results/NOTES-ba-gpu.md.",
          ""]
    md += phase_table(runs)
    md += floor_table(runs, yard)
    md += ratio_table(runs, skips, iters)
    t, ceres_v = ceres_table(runs, ceres)
    md += t
    t, slam_v = slam_table(runs)
    md += t
    t, clean, limit = scaling_table(runs, skips, yard, attempts)
    md += t
    sc = [r for r in runs if r["section"] == "scaling" and per_it(r)]
    span = (f"GPU {len([r for r in sc if r['backend'] == 'cuda'])} sizes, CPU "
            f"{len([r for r in sc if r['backend'] == 'cpu'])}, "
            f"{min(int(r['observations']) for r in sc):.0e} to "
            f"{max(int(r['observations']) for r in sc):.0e} observations" if sc else "-")
    ngpu = len([r for r in sc if r["backend"] == "cuda"])
    md += targets(runs, ceres_v, slam_v, clean, (span, ngpu))
    if args.plot and plot(runs, skips, attempts, limit, args.plot):
        md += [f"![time per iteration against observations]({os.path.basename(args.plot)})", ""]
    text = "\n".join(md)
    if args.md:
        with open(args.md, "w") as fh:
            fh.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
