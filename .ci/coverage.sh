#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Coverage of the nonlinear solvers' control flow: a CPU-only gcc build with
# --coverage, the solver suites (test_lm_driver, test_ba, test_ba_lm, test_slam,
# test_slam_control, test_slam_gn, test_solver_control), then gcov -b on the one nonlinear
# driver src/solve/lm_driver.c and its two instances src/ba/ba_lm.c and src/slam/slam_run.c. Prints their line and branch coverage and the lines
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
suites=${SBM_COVERAGE_SUITES:-test_lm_driver test_ba test_ba_lm test_slam test_slam_control test_slam_gn test_solver_control}
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
for f in src/solve/lm_driver.c src/ba/ba_lm.c src/slam/slam_run.c; do
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
    # the driver: every outcome of the one LM and GN loop
        ("lm_driver.c", "rep->linear_failed = 1; /* a rejected step", "run", None),  # LM: NPD rejected
    ("lm_driver.c", "if (!rep->linear_failed) {", "both", None),  # a trial / a failed factorisation
    ("lm_driver.c", "const double shrunk = r->lambda", "run", None),  # an accepted LM step
    ("lm_driver.c", "r->lambda *= r->nu;", "run", None),          # a rejected LM step
    ("lm_driver.c", ": r->lambda > SBM__LM_LAMBDA_MAX", "both", None),  # no progress / neither
    ("lm_driver.c", "if (new_cost == 0.0) return SBM_STOP_ZERO_COST;", "both", None),
    ("lm_driver.c", "if (small) return SBM_STOP_PARAMETER_TOLERANCE;", "both", None),
    ("lm_driver.c", "if (r->cost - new_cost <= r->opt->function_tolerance * r->cost)", "both", None),
    ("lm_driver.c", "if (it < r->opt->max_iterations && *stop == SBM_STOP_NONE) {", "both", None),
    ("lm_driver.c", "if (r->cost == 0.0) return SBM_STOP_ZERO_COST;", "both", None),
    ("lm_driver.c", "if (r->gnorm <= r->opt->gradient_tolerance) return", "both", None),
    ("lm_driver.c", "if (n == 0) return SBM_SUCCESS;", "both", None),  # no unknowns
    ("lm_driver.c", "if (r.moved) {", "both", None),             # final gradient relinearised
    ("lm_driver.c", "if (st == SBM_ERR_NOT_POSITIVE_DEFINITE) r->sum->linear_failures++;", "both", None),  # GN NPD
    ("lm_driver.c", "rep->lambda = alpha; /* the shortest length tried */", "run", None),  # GN failed search
    ("lm_driver.c", "*stop = SBM_STOP_NO_PROGRESS;", "run", None),
    ("lm_driver.c", "SBM__TRY(r->ops->publish(r->ops->data));", "run", None),
    # BA's operations
    ("ba_lm.c", "*failed = 1;", "run", None),                   # NPD: S (every solver)
    ("ba_lm.c", "if (failed) return SBM_ERR_NOT_POSITIVE_DEFINITE;", "both", None),
    ("ba_lm.c", "if (st == SBM_ERR_NOT_POSITIVE_DEFINITE) {", "both", None),  # NPD: V
    ("ba_lm.c", "if (s->n <= s->opt->dense_max_dim) {", "both", None), # AUTO: dense / above
    ("ba_lm.c", "if (sbm_chol_get_info(s->chol).flops <=", "both", None),  # AUTO: sparse / PCG
    ("ba_lm.c", "if (81.0 * (double)bs >", "both", None),   # AUTO: matrix-free / explicit S
    # SLAM's operations
    ("slam_run.c", "rep->linear_iterations >= r->opt->pcg_max_iterations &&", "both", None),  # PCG cap
    ("slam_run.c", "return sbm__slam_run_solve(data, damped ? SBM_DAMPING_DIAGONAL", "run", None),
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
for name in ("lm_driver.c", "ba_lm.c", "slam_run.c"):
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
