#!/usr/bin/env bash
# Tests of the sbm command-line tool through its executable: results against an independent
# Python reference (plain python3, no numpy), exit codes, messages, and files left behind.
#
# usage: bash test_cli.sh <path-to-sbm> <tmpdir>      (env SBM_DATA_DIR: the shared data folder)
set -u

SBM=${1:?usage: test_cli.sh <path-to-sbm> <tmpdir>}
TMP=${2:?usage: test_cli.sh <path-to-sbm> <tmpdir>}
DATA_DIR=${SBM_DATA_DIR:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/data}
MTX=$DATA_DIR/mtx

rm -rf "$TMP"
mkdir -p "$TMP"
pass=0
fail=0

# A hung command fails its check instead of hanging the suite.
RUN=""
if command -v timeout >/dev/null 2>&1; then RUN="timeout 300"; fi

ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL: $*"
}

if [ ! -f "$MTX/west0067.mtx" ]; then
    echo "test_cli.sh: data not found in $MTX (set SBM_DATA_DIR)"
    echo "cli: 0 passed, 1 failed"
    exit 1
fi

# ------------------------------------------------------------------------------------------
# The reference: parses Matrix Market files and multiplies with dicts.
# ------------------------------------------------------------------------------------------
REF=$TMP/ref.py
cat >"$REF" <<'PY'
import sys


def read_mtx(path):
    """(m, n, {(i, j): v}) 0-based, symmetric storage expanded, duplicates summed."""
    with open(path) as f:
        lines = f.read().split("\n")
    banner = lines[0].split()
    field, symmetry = "real", "general"
    if banner and banner[0].lower().lstrip("%") == "matrixmarket":
        field, symmetry = banner[3].lower(), banner[4].lower()
    rest = [ln for ln in lines[1:] if ln.strip() and not ln.lstrip().startswith("%")]
    m, n, nnz = (int(t) for t in rest[0].split()[:3])
    entries = {}
    for ln in rest[1:1 + nnz]:
        t = ln.split()
        i, j = int(t[0]) - 1, int(t[1]) - 1
        v = 1.0 if field == "pattern" else float(t[2])
        entries[(i, j)] = entries.get((i, j), 0.0) + v
        if symmetry != "general" and i != j:
            w = -v if symmetry == "skew-symmetric" else v
            entries[(j, i)] = entries.get((j, i), 0.0) + w
    return m, n, entries


def transpose(mat):
    m, n, e = mat
    return n, m, {(j, i): v for (i, j), v in e.items()}


def shape(s):
    if "x" in s:
        r, c = s.split("x")
        return int(r), int(c)
    return int(s), int(s)


def parse_gemm_args(args):
    o = {"ta": False, "tb": False, "upper": False, "a": (1, 1), "b": (1, 1)}
    blk, a_set, b_set, pos = None, None, None, []
    i = 0
    while i < len(args):
        a = args[i]
        val = None
        if "=" in a and a.startswith("--"):
            a, val = a.split("=", 1)
        if a in ("--ta", "--tb", "--upper"):
            o[a[2:]] = True
        elif a in ("--block", "--block-a", "--block-b", "--backend"):
            if val is None:
                i += 1
                val = args[i]
            if a == "--block":
                blk = shape(val)
            elif a == "--block-a":
                a_set = shape(val)
            elif a == "--block-b":
                b_set = shape(val)
        else:
            pos.append(a)
        i += 1
    o["a"] = a_set or blk or (1, 1)
    o["b"] = b_set or blk or (1, 1)
    o["A"], o["B"] = pos
    return o


def by_rows(e):
    rows = {}
    for (i, j), v in e.items():
        rows.setdefault(i, {})[j] = v
    return rows


def check_gemm(cpath, args):
    o = parse_gemm_args(args)
    A, B = read_mtx(o["A"]), read_mtx(o["B"])
    (ra, ka), (kb, cb) = o["a"], o["b"]
    if o["ta"]:
        A, ra, ka = transpose(A), ka, ra
    if o["tb"]:
        B, kb, cb = transpose(B), cb, kb
    assert A[1] == B[0], "reference: inner dimensions differ"
    assert ka == kb, "reference: inner block sizes differ"
    m, n = A[0], B[1]
    upper = o["upper"]
    # expected block pattern of C
    ab, bb = by_rows({(i // ra, k // ka): 1 for (i, k) in A[2]}), by_rows({(k // kb, j // cb): 1 for (k, j) in B[2]})
    blocks = set()
    for bi, ks in ab.items():
        for bk in ks:
            for bj in bb.get(bk, {}):
                if not upper or bi <= bj:
                    blocks.add((bi, bj))
    # reference values and the sum of |terms| per entry (error scale)
    ar, br = by_rows(A[2]), by_rows(B[2])
    ref, scale = {}, {}
    for i, ks in ar.items():
        for k, a in ks.items():
            for j, b in br.get(k, {}).items():
                if upper and i // ra > j // cb:
                    continue
                ref[(i, j)] = ref.get((i, j), 0.0) + a * b
                scale[(i, j)] = scale.get((i, j), 0.0) + abs(a * b)
    # the result file
    with open(cpath) as f:
        lines = f.read().split("\n")
    if lines[0].split() != ["%%MatrixMarket", "matrix", "coordinate", "real", "general"]:
        return "bad banner: %r" % lines[0]
    rest = [ln for ln in lines[1:] if ln.strip() and not ln.startswith("%")]
    cm, cn, cnnz = (int(t) for t in rest[0].split())
    if (cm, cn) != (m, n):
        return "C is %dx%d, expected %dx%d" % (cm, cn, m, n)
    if cnnz != len(rest) - 1:
        return "header says %d entries, file has %d" % (cnnz, len(rest) - 1)
    if cnnz != len(blocks) * ra * cb:
        return "C has %d entries, expected %d blocks of %dx%d = %d" % (cnnz, len(blocks), ra, cb, len(blocks) * ra * cb)
    seen = set()
    worst = 0.0
    for ln in rest[1:]:
        t = ln.split()
        i, j, v = int(t[0]) - 1, int(t[1]) - 1, float(t[2])
        if (i, j) in seen:
            return "entry (%d,%d) twice" % (i + 1, j + 1)
        seen.add((i, j))
        if (i // ra, j // cb) not in blocks:
            return "entry (%d,%d) outside the expected blocks" % (i + 1, j + 1)
        want = ref.get((i, j), 0.0)
        err = abs(v - want)
        tol = 1e-12 * scale.get((i, j), 0.0)
        if err > tol:
            return "entry (%d,%d) = %r, expected %r" % (i + 1, j + 1, v, want)
        if scale.get((i, j), 0.0) > 0:
            worst = max(worst, err / scale[(i, j)])
    for key in ref:
        if key not in seen:
            return "entry (%d,%d) missing" % (key[0] + 1, key[1] + 1)
    print("ok: %dx%d, %d blocks of %dx%d, max error/scale %.2e" % (m, n, len(blocks), ra, cb, worst))
    return None


def info(path, blk):
    m, n, e = read_mtx(path)
    r, c = shape(blk)
    blocks = {(i // r, j // c) for (i, j) in e}
    nbc = n // c
    per_col = [0] * nbc
    for (_, bj) in blocks:
        per_col[bj] += 1
    sym = m == n and all(e.get((j, i)) == v for (i, j), v in e.items())
    psym = m == n and all((j, i) in e for (i, j) in e)
    out = [
        "rows: %d" % m, "columns: %d" % n, "nnz: %d" % len(e), "block: %dx%d" % (r, c),
        "block rows: %d" % (m // r), "block columns: %d" % nbc, "nnzb: %d" % len(blocks),
        "fill ratio: %.4f" % (len(blocks) * r * c / len(e)),
        "blocks per column: min %d, mean %.2f, max %d" % (min(per_col), len(blocks) / nbc, max(per_col)),
        "symmetric: %s" % ("yes" if sym else "no"),
        "pattern symmetric: %s" % ("yes" if psym else "no"),
    ]
    print("\n".join(out))


if __name__ == "__main__":
    if sys.argv[1] == "gemm":
        msg = check_gemm(sys.argv[2], sys.argv[3:])
        if msg:
            print(msg)
            sys.exit(1)
    else:
        info(sys.argv[2], sys.argv[3])
PY

# ------------------------------------------------------------------------------------------
# Helpers
# ------------------------------------------------------------------------------------------
n_case=0

# gemm_ok ARGS... : sbm gemm ARGS -o OUT succeeds and OUT matches the reference.
gemm_ok() {
    n_case=$((n_case + 1))
    local out=$TMP/c$n_case.mtx
    if $RUN "$SBM" gemm "$@" -o "$out" >"$TMP/c$n_case.out" 2>"$TMP/c$n_case.err"; then
        local msg
        if msg=$(python3 "$REF" gemm "$out" "$@" 2>&1); then
            ok
        else
            bad "gemm $* : $msg"
        fi
    else
        bad "gemm $* : exit $? : $(cat "$TMP/c$n_case.err")"
    fi
}

# fails CODE SUBSTRING OUTFILE ARGS... : sbm ARGS exits with CODE, stderr contains SUBSTRING,
# and OUTFILE (may be "-") does not exist afterwards.
fails() {
    local code=$1 substr=$2 out=$3
    shift 3
    $RUN "$SBM" "$@" >"$TMP/f.out" 2>"$TMP/f.err"
    local got=$?
    if [ "$got" -ne "$code" ]; then
        bad "sbm $* : exit $got, expected $code; stderr: $(cat "$TMP/f.err")"
    elif ! grep -qF -- "$substr" "$TMP/f.err"; then
        bad "sbm $* : stderr lacks '$substr': $(cat "$TMP/f.err")"
    elif [ "$out" != "-" ] && [ -e "$out" ]; then
        bad "sbm $* : left $out behind"
    else
        ok
    fi
}

# ------------------------------------------------------------------------------------------
# gemm on real data against the reference
# ------------------------------------------------------------------------------------------
W=$MTX/west0067.mtx
K=$MTX/karate.mtx
L=$MTX/lp_afiro.mtx
F=$MTX/LFAT5.mtx
G=$MTX/cryg2500.mtx

gemm_ok --block 1 "$W" "$W"
gemm_ok "$W" "$MTX/west0067_jumbled.mtx"
gemm_ok --ta "$W" "$W"
gemm_ok --tb "$W" "$MTX/west0067_jumbled.mtx"
gemm_ok --ta --tb "$W" "$W"
gemm_ok --upper "$W" "$W"
gemm_ok --block 2 "$K" "$K"
gemm_ok --block 2 --upper "$K" "$K"
gemm_ok --block-a 2x1 --block-b 1x2 "$K" "$K"
gemm_ok --block-a 1x2 --block-b 1x2 --ta "$K" "$K"
gemm_ok --block 17 --upper "$K" "$K"
# bcsstk13 is 2003 x 2003 and 2003 is prime: only 1x1 blocks divide it
gemm_ok --block 1 "$MTX/bcsstk13.mtx" "$MTX/bcsstk13.mtx"
gemm_ok --block 5 "$G" "$G"
gemm_ok --block 4 --ta "$G" "$G"
gemm_ok --block 2 --ta --tb --upper "$G" "$G"
gemm_ok --block-a 10x5 --block-b 5x2 "$G" "$G"
# lp_afiro is 27 x 51 (rectangular)
gemm_ok --tb --block 3 "$L" "$L"
gemm_ok --tb --block 3 --upper "$L" "$L"
gemm_ok --ta --block 3 "$L" "$L"
gemm_ok --tb --block-a 3x17 --block-b 3x17 --upper "$L" "$L"
gemm_ok --ta --block-a 1x3 --block-b 1x3 "$L" "$L"
gemm_ok --ta --block-a 9x3 --block-b 9x3 --upper "$L" "$L"
# LFAT5 is 14 x 14 (symmetric storage): 7x7 fast, 7x2 / 2x7 generic
gemm_ok --block 7 "$F" "$F"
gemm_ok --block-a 7x2 --block-b 2x7 --upper "$F" "$F"
gemm_ok --block-a 2x7 --block-b 2x7 --tb "$F" "$F"
# option forms: explicit backend, --opt=value, options after the files
gemm_ok --backend cpu "$K" "$K" --block=2
gemm_ok "$L" --block-a=3x3 "$L" --block-b=3x3 --tb

# CUDA: compared like CPU where a device exists, a clean failure otherwise
if "$SBM" --version | grep -q "cuda backend: yes" && ! "$SBM" --version | grep -q "(0 devices)"; then
    gemm_ok --backend cuda --block 2 "$K" "$K"
    gemm_ok --backend cuda --tb --block-a 3x17 --block-b 3x17 --upper "$L" "$L"
    gemm_ok --backend cuda --block-a 10x5 --block-b 5x2 "$G" "$G"
else
    fails 1 "sbm: " "$TMP/cuda.mtx" gemm --backend cuda "$K" "$K" -o "$TMP/cuda.mtx"
fi

# ------------------------------------------------------------------------------------------
# gemm errors: exit code, message, no output file
# ------------------------------------------------------------------------------------------
O=$TMP/never.mtx
fails 1 "nonexistent.mtx" "$O" gemm "$TMP/nonexistent.mtx" "$W" -o "$O"
fails 1 "nonexistent.mtx" "$O" gemm "$W" "$TMP/nonexistent.mtx" -o "$O"
fails 1 "sbm: " "$O" gemm --block 2 "$W" "$W" -o "$O"
fails 1 "west0067.mtx with 2x2 blocks" "$O" gemm --block 2 "$W" "$W" -o "$O"
fails 1 "sbm_csr_to_cbc" "$O" gemm --block-a 3x2 "$L" "$L" -o "$O"
fails 1 "sbm_cbc_gemm" "$O" gemm "$L" "$L" -o "$O"                     # 27x51 * 27x51
fails 1 "sbm_cbc_gemm" "$O" gemm --tb --block-a 3x3 --block-b 1x1 "$L" "$L" -o "$O"
fails 2 "unknown option" "$O" gemm --frobnicate "$W" "$W" -o "$O"
fails 2 "needs a value" "$O" gemm "$W" "$W" -o
fails 2 "needs a value" "$O" gemm "$W" "$W" -o "$O" --block-a
fails 2 "needs an output file" "$O" gemm "$W" "$W"
fails 2 "needs two input files" "$O" gemm "$W" -o "$O"
fails 2 "unexpected argument" "$O" gemm "$W" "$W" "$W" -o "$O"
fails 2 "invalid block shape" "$O" gemm --block 0 "$W" "$W" -o "$O"
fails 2 "invalid block shape" "$O" gemm --block-a 2y3 "$W" "$W" -o "$O"
fails 2 "invalid block shape" "$O" gemm --block-b 3x "$W" "$W" -o "$O"
fails 2 "unknown backend" "$O" gemm --backend tpu "$W" "$W" -o "$O"
fails 1 "sbm: " "$O" gemm --block 34 "$K" "$K" -o "$O"

# non-square C with --upper: a 4 x 6 times a 6 x 6
R=$TMP/rect4x6.mtx
S=$TMP/sq6.mtx
printf '%%%%MatrixMarket matrix coordinate real general\n4 6 3\n1 1 1.5\n2 3 -2\n4 6 3\n' >"$R"
printf '%%%%MatrixMarket matrix coordinate real general\n6 6 2\n1 1 2\n6 6 1\n' >"$S"
gemm_ok "$R" "$S"
gemm_ok --block 2 "$R" "$S"
fails 1 "sbm_cbc_gemm" "$O" gemm --upper "$R" "$S" -o "$O"
# malformed input: the message names the file
BADF=$TMP/bad.mtx
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n2 x 2.0\n' >"$BADF"
fails 1 "bad.mtx" "$O" gemm "$BADF" "$W" -o "$O"
# unwritable output
fails 1 "sbm: " "$TMP/no/such/dir/C.mtx" gemm "$W" "$W" -o "$TMP/no/such/dir/C.mtx"
# a failed run leaves an existing output untouched
KEEP=$TMP/keep.mtx
echo "precious" >"$KEEP"
fails 1 "sbm_cbc_gemm" "-" gemm "$L" "$L" -o "$KEEP"
if [ "$(cat "$KEEP")" = "precious" ]; then ok; else bad "failed gemm modified an existing -o file"; fi

# ------------------------------------------------------------------------------------------
# info against the reference
# ------------------------------------------------------------------------------------------
info_ok() {
    local file=$1 blk=$2
    local got want
    got=$($RUN "$SBM" info --block "$blk" "$file" 2>&1)
    local rc=$?
    want=$(python3 "$REF" info "$file" "$blk")
    if [ $rc -ne 0 ]; then
        bad "info --block $blk $file: exit $rc: $got"
    elif [ "$(printf '%s\n' "$got" | grep -v '^file: ')" != "$want" ]; then
        bad "info --block $blk $file:"$'\n'"got:"$'\n'"$got"$'\n'"want:"$'\n'"$want"
    elif ! printf '%s\n' "$got" | grep -qxF "file: $file"; then
        bad "info $file: no 'file:' line"
    else
        ok
    fi
}
info_ok "$W" 1
info_ok "$K" 2
info_ok "$K" 17x2
info_ok "$L" 3x17
info_ok "$L" 1x3
info_ok "$F" 7
info_ok "$G" 5
info_ok "$MTX/bcsstk13.mtx" 1
if "$SBM" info "$K" | grep -qx "symmetric: yes"; then ok; else bad "karate should be symmetric"; fi
if "$SBM" info "$W" | grep -qx "symmetric: no"; then ok; else bad "west0067 should not be symmetric"; fi
fails 1 "west0067.mtx with 2x2 blocks" "-" info --block 2 "$W"
fails 1 "nonexistent.mtx" "-" info "$TMP/nonexistent.mtx"
fails 2 "needs an input file" "-" info
fails 2 "unknown option" "-" info --ta "$W"
fails 2 "needs a value" "-" info "$W" --block

# ------------------------------------------------------------------------------------------
# help, version, usage
# ------------------------------------------------------------------------------------------
if "$SBM" --help | grep -q "usage: sbm"; then ok; else bad "sbm --help"; fi
if "$SBM" gemm --help | grep -q "usage: sbm gemm"; then ok; else bad "sbm gemm --help"; fi
if "$SBM" info --help | grep -q "usage: sbm info"; then ok; else bad "sbm info --help"; fi
if "$SBM" --version | grep -qE "^sbm [0-9]+\.[0-9]+\.[0-9]+$"; then ok; else bad "sbm --version"; fi
fails 2 "usage: sbm" "-"
fails 2 "unknown command" "-" frobnicate
fails 2 "unknown option" "-" --frobnicate

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
