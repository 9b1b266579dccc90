#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Coverage of the nonlinear solvers' control flow: a CPU-only gcc build with
# --coverage, the solver suites (test_ba, test_ba_lm, test_slam, test_slam_control,
# test_slam_gn, test_solver_control), then gcov -b on src/ba/ba_lm.c and
# src/slam/slam_{lm,gn,run}.c. Prints their line and branch coverage and the lines
# never run, and fails when a control-flow outcome is not reached: a rejected step and its
# restore, each not-positive-definite path, the Gauss-Newton restore, every stop rule (the
# gates below name them by their source text, so a refactor that renames one fails loudly here
# until the gate is updated).
#   .ci/coverage.sh [build-dir]     (default build-coverage; SBM_DATA_DIR for the data sets,
#                                    SBM_COVERAGE_SUITES to run other suites)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-coverage}
mkdir -p "$build" && build=$(cd "$build" && pwd)
suites=${SBM_COVERAGE_SUITES:-test_ba test_ba_lm test_slam test_slam_control test_slam_gn test_solver_control}
data_arg=()
if [ -n "${SBM_DATA_DIR:-}" ]; then data_arg=(-DSBM_DATA_DIR="$SBM_DATA_DIR"); fi

cmake -S . -B "$build" -DSBM_CUDA=OFF -DCMAKE_C_COMPILER=gcc -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_FLAGS="--coverage -O0" -DCMAKE_EXE_LINKER_FLAGS=--coverage \
  -DCMAKE_SHARED_LINKER_FLAGS=--coverage -DSBM_BUILD_BENCH=OFF -DSBM_BUILD_EXAMPLES=OFF \
  "${data_arg[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)" --target $suites
find "$build" -name '*.gcda' -delete
for s in $suites; do
  echo "== $s"
  (cd "$build/tests" && "$build/bin/$s" >"$build/$s.log" 2>&1) || { tail -40 "$build/$s.log"; exit 1; }
done

out="$build/gcov"
rm -rf "$out" && mkdir -p "$out"
for f in src/ba/ba_lm.c src/slam/slam_gn.c src/slam/slam_lm.c src/slam/slam_run.c; do
  gcda=$(find "$build" -name "$(basename "$f").gcda" | head -1)
  [ -n "$gcda" ] || { echo "no coverage data for $f"; exit 1; }
  # the data file names its notes file and the source (absolute paths): gcov writes NAME.gcov
  (cd "$out" && gcov -b -c "$(cd "$(dirname "$gcda")" && pwd)/$(basename "$gcda")" \
    >"$(basename "$f").summary" 2>&1)
done

python3 - "$out" <<'PY'
import re, sys, os
out = sys.argv[1]
# (file, source text, mode): "run" = every line with the text ran; "both" = every branch of
# every such line was taken both ways. anchor: only the first match after the anchor line.
GATES = [
    ("ba_lm.c", "*failed = 1;", "run", None),                   # NPD: V, and S (every solver)
    ("ba_lm.c", "if (st == SBM_ERR_NOT_POSITIVE_DEFINITE)", "both", None),
    ("ba_lm.c", "lambda *= fmax(1.0 / 3.0", "run", None),        # an accepted step
    # a step computed / a failed factorisation (then rejected without a trial; a rejected step
    # keeps the current parameter buffer, so there is nothing to restore)
    ("ba_lm.c", "if (!failed) {", "both", None),
    ("ba_lm.c", "*lambda *= *nu;", "run", None),                 # a rejected step
    ("ba_lm.c", "if (cost == 0.0) {", "both", None),             # zero cost at the start
    ("ba_lm.c", "if (gnorm <= opt->gradient_tolerance) {", "both", None),  # gradient tolerance
    ("ba_lm.c", "if (it < opt->max_iterations && *stop == SBM_STOP_NONE)", "both", None),
    # the stop after an accepted step: its branches sit on the ternary's second line; zero
    # cost after a step is the one outcome not reached (no BA step lands on exactly 0)
    ("ba_lm.c", ": small_step", "run", None),                    # parameter tolerance, accepted
    # after a rejected step (branches on the line below "stop = small_step ?"): parameter
    # tolerance, no progress, neither
    ("ba_lm.c", ": *lambda > SBM__LM_LAMBDA_MAX", "both", None),
    ("ba_lm.c", "if (stop != SBM_STOP_NONE) {", "both", None),
    ("ba_lm.c", "if (st == SBM_SUCCESS && s->stale) {", "both", None),  # final gradient
    ("ba_lm.c", "if (s->n <= s->opt->dense_max_dim) {", "both", None), # AUTO: dense / above
    ("ba_lm.c", "if (sbm_chol_get_info(s->chol).flops <=", "both", None),  # AUTO: sparse / PCG
    ("ba_lm.c", "if (81.0 * (double)bs >", "both", None),   # AUTO: matrix-free / explicit S
    ("slam_gn.c", "rep.lambda = 0.5 * alpha;", "run", None),  # a failed line search (poses kept)
    ("slam_gn.c", "rep.lambda = alpha;", "run", None),         # an accepted step
    ("slam_gn.c", "stop = SBM_STOP_NO_PROGRESS;", "run", None), # a failed line search
    ("slam_gn.c", "if (st == SBM_ERR_NOT_POSITIVE_DEFINITE) r->summary", "run", None),  # NPD
    ("slam_lm.c", "if (st == SBM_ERR_NOT_POSITIVE_DEFINITE) {", "both", None),  # failed factorisation
    ("slam_lm.c", "if (!rep.linear_failed) {", "both", None),  # a trial step / a failed factorisation
    ("slam_lm.c", "lambda *= nu;", "run", None),                 # a rejected step (the trial dropped)
    ("slam_lm.c", "lambda *= fmax(1.0 / 3.0", "run", None),     # an accepted step
    ("slam_lm.c", "if (lambda > SBM__LM_LAMBDA_MAX)", "both", None),    # no progress
    ("slam_lm.c", "else if (small)", "both", None),             # parameter tolerance, rejected
    ("slam_run.c", "rep->linear_iterations >= r->opt->pcg_max_iterations &&", "both", None),  # PCG cap
    ("slam_run.c", "if (r->n == 0) return SBM_STOP_NONE;", "both", None),  # no free vertex
    ("slam_run.c", "if (r->cost == 0.0) return SBM_STOP_ZERO_COST;", "both", None),
    ("slam_run.c", "if (r->gradient_norm <= r->opt->gradient_tolerance) return", "both", None),
    ("slam_run.c", "if (cost - new_cost <= r->opt->function_tolerance * cost)", "both", None),
    ("slam_run.c", "else if (small_step)", "both", None),     # parameter tolerance, accepted
    ("slam_run.c", "else if (it >= r->opt->max_iterations)", "both", None),
    ("slam_run.c", "*stop = SBM_STOP_GRADIENT_TOLERANCE;", "run", None),  # gradient after a step
    ("slam_run.c", "if (r->moved) {", "both", None),          # final gradient relinearised
    ("slam_run.c", "if (r->ls == SBM_LINEAR_SPARSE_CHOLESKY) {", "both", None),  # each solver
    ("slam_run.c", "} else if (r->ls == SBM_LINEAR_DENSE_CHOLESKY) {", "both", None),
    ("slam_run.c", "return not_positive_definite(r, damping, lambda, bad,", "run", None),  # overflow
]
def parse(name):
    lines, cur = [], None
    for raw in open(os.path.join(out, name + ".gcov"), errors="replace"):
        m = re.match(r"\s*([^:]+):\s*(\d+):(.*)$", raw)
        if m and not raw.startswith(("branch", "call", "function")):
            if int(m.group(2)) == 0:
                continue
            cur = {"count": m.group(1).strip(), "no": int(m.group(2)), "src": m.group(3), "br": []}
            lines.append(cur)
        elif raw.startswith("branch") and cur is not None:
            t = re.search(r"taken (\d+)", raw)
            cur["br"].append(int(t.group(1)) if t else 0)
    return lines
bad = 0
for name in ("ba_lm.c", "slam_gn.c", "slam_lm.c", "slam_run.c"):
    summary = open(os.path.join(out, name + ".summary")).read()
    at = summary.find(name + "'")
    sec = summary[at:] if at >= 0 else ""
    for key in ("Lines executed", "Branches executed", "Taken at least once"):
        m = re.search(key + r":([0-9.]+)% of (\d+)", sec)
        print(f"{name}: {key.lower()} {m.group(1)}% of {m.group(2)}" if m else f"{name}: no {key}")
    lines = parse(name)
    never = [l["no"] for l in lines if l["count"] in ("#####", "=====")]
    print(f"{name}: lines never run: {never}")
    for f, text, mode, anchor in GATES:
        if f != name:
            continue
        hits = [l for l in lines if text in l["src"]]
        if anchor:
            start = next((l["no"] for l in lines if anchor in l["src"]), None)
            hits = [l for l in hits if start is not None and l["no"] > start][:1]
        if not hits:
            print(f"GATE {name}: no line with '{text}' (update the gates in .ci/coverage.sh)")
            bad = 1
            continue
        for l in hits:
            ran = l["count"] not in ("#####", "=====", "-")
            ok = ran and (mode == "run" or (l["br"] and all(b > 0 for b in l["br"])))
            if not ok:
                print(f"GATE {name}:{l['no']}: '{l['src'].strip()}' not reached "
                      f"({'never run' if not ran else 'branches taken ' + str(l['br'])})")
                bad = 1
print("coverage gates: " + ("FAILED" if bad else "all control-flow outcomes reached"))
sys.exit(bad)
PY
