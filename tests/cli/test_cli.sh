#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Tests of the sbm command-line tool through its executable: results against an independent
# Python reference (plain python3, no numpy), exit codes, messages, and files left behind.
#
# usage: bash test_cli.sh <path-to-sbm> <tmpdir>
# Data: the compressed Matrix Market files in the repository's tests/data/mtx (read by sbm as they
# are, and by the reference through Python's gzip and bz2 modules). The plain originals are
# optional extra data from SBM_DATA_DIR (the environment, else SBM_DATA_DIR_DEFAULT, which ctest
# sets from the CMake cache, else ../shared/data beside the repository): absent, their check
# prints a "skipped: ..." line.
set -u

SBM=${1:?usage: test_cli.sh <path-to-sbm> <tmpdir>}
TMP=${2:?usage: test_cli.sh <path-to-sbm> <tmpdir>}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
MTX=$REPO/tests/data/mtx
EXTRA=${SBM_DATA_DIR:-${SBM_DATA_DIR_DEFAULT:-$REPO/../shared/data}}

rm -rf "$TMP"
mkdir -p "$TMP"
pass=0
fail=0

# A hung command fails its check instead of hanging the suite.
RUN=""
if command -v timeout >/dev/null 2>&1; then RUN="timeout 300"; fi

# ok, bad, runs, fails (each sbm command under $RUN)
. "$(dirname "$0")/cli_lib.sh"

if [ ! -f "$MTX/west0067.mtx.gz" ]; then
    echo "test_cli.sh: data not found in $MTX (the repository's tests/data)"
    echo "cli: 0 passed, 1 failed"
    exit 1
fi

# ------------------------------------------------------------------------------------------
# The reference: parses Matrix Market files and multiplies with dicts.
# ------------------------------------------------------------------------------------------
REF=$TMP/ref.py
cat >"$REF" <<'PY'
import bz2
import gzip
import sys


def open_text(path):
    """A text file, plain, gzip or bzip2, told by its first bytes as sbm does."""
    with open(path, "rb") as f:
        head = f.read(3)
    if head[:2] == b"\x1f\x8b":
        return gzip.open(path, "rt")
    if head == b"BZh":
        return bz2.open(path, "rt")
    return open(path)


def read_mtx(path):
    """(m, n, {(i, j): v}) 0-based, symmetric storage expanded, duplicates summed."""
    with open_text(path) as f:
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


# ---- spmv / spmm ---------------------------------------------------------------------------

MASK = (1 << 64) - 1


def seeded(seed, count):
    """The generator documented in sbm spmv --help (SplitMix64; value k = 2*(z_k >> 11)*2^-53 - 1)."""
    s, out = seed, []
    for _ in range(count):
        s = (s + 0x9E3779B97F4A7C15) & MASK
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        out.append(2.0 * ((z >> 11) * 2.0 ** -53) - 1.0)
    return out


def read_dense(path, strict=False):
    """(rows, cols, column-major values) of a Matrix Market array file; strict: sbm's own output."""
    with open(path) as f:
        lines = f.read().split("\n")
    if strict and lines[0] != "%%MatrixMarket matrix array real general":
        raise ValueError("bad banner %r" % lines[0])
    rest = [ln for ln in lines[1:] if ln.strip() and not ln.startswith("%")]
    r, c = (int(t) for t in rest[0].split())
    vals = [float(ln) for ln in rest[1:]]
    if len(vals) != r * c:
        raise ValueError("%s: %d values for %d x %d" % (path, len(vals), r, c))
    return r, c, vals


def write_dense(path, r, c, vals):
    with open(path, "w") as f:
        f.write("%%MatrixMarket matrix array real general\n% written by the test\n")
        f.write("%d %d\n" % (r, c))
        f.writelines(repr(v) + "\n" for v in vals)


def mtx_size(path):
    with open_text(path) as f:
        for ln in f:
            if ln.strip() and not ln.lstrip().startswith("%"):
                return tuple(int(t) for t in ln.split()[:2])


def stem(path):
    """west0067 for .../west0067.mtx, west0067.mtx.gz or west0067.mtx.bz2."""
    import os
    name = os.path.basename(path)
    for suffix in (".gz", ".bz2"):
        if name.endswith(suffix):
            name = name[:-len(suffix)]
    return name[:-4] if name.endswith(".mtx") else name


def prepare(outdir, paths):
    """Inputs for every matrix: x (n x 1), y (m x 1), b (n x 3), c (m x 3), c11 (m x 11)."""
    import os
    import random
    rnd = random.Random(20240611)
    for p in paths:
        m, n = mtx_size(p)
        base = os.path.join(outdir, stem(p))
        # mixed magnitudes and signs; integers and short decimals too
        gen = lambda k: [rnd.choice((rnd.uniform(-1, 1), rnd.uniform(-1e3, 1e3), float(rnd.randint(-9, 9)), 0.5)) for _ in range(k)]
        write_dense(base + "_x.mtx", n, 1, gen(n))
        write_dense(base + "_y.mtx", m, 1, gen(m))
        write_dense(base + "_b.mtx", n, 3, gen(3 * n))
        write_dense(base + "_c.mtx", m, 3, gen(3 * m))
        write_dense(base + "_c11.mtx", m, 11, gen(11 * m))


VALUED = {"--backend", "--format", "--alpha", "--beta", "--x", "--y", "--b", "--c", "--seed", "--cols", "--repeat", "-o", "--output"}


def parse_mult_args(args):
    o = {"--alpha": "1", "--beta": "0", "--seed": "1"}
    pos = []
    i = 0
    while i < len(args):
        a, val = args[i], None
        if a.startswith("--") and "=" in a:
            a, val = a.split("=", 1)
        if a in VALUED:
            if val is None:
                i += 1
                val = args[i]
            o[a] = val
        elif a.startswith("-"):
            o[a] = True
        else:
            pos.append(a)
        i += 1
    assert len(pos) == 1, "reference: one matrix expected"
    o["A"] = pos[0]
    return o


_mats = {}


def matrix_rows(path):
    if path not in _mats:
        m, n, e = read_mtx(path)
        br = by_rows(e)
        _mats[path] = (m, n, [sorted(br.get(i, {}).items()) for i in range(m)])
    return _mats[path]


def compare(got, ref, scale, what):
    worst = 0.0
    for k, (g, r, s) in enumerate(zip(got, ref, scale)):
        err = abs(g - r)
        if err > 1e-12 * s or (s == 0 and g != 0):
            return "%s[%d] = %r, expected %r (scale %g)" % (what, k, g, r, s), 0
        if s > 0:
            worst = max(worst, err / s)
    return None, worst


def check_mult(kind, out, args):
    o = parse_mult_args(args)
    m, n, rows = matrix_rows(o["A"])
    alpha, beta = float(o["--alpha"]), float(o["--beta"])
    if kind == "spmv":
        k = 1
        src = o.get("--x")
        init = o.get("--y")
    else:
        src = o.get("--b")
        init = o.get("--c")
        k = read_dense(src)[1] if src else int(o["--cols"])
    B = read_dense(src)[2] if src else seeded(int(o["--seed"]), n * k)
    C0 = read_dense(init)[2] if init else [0.0] * (m * k)
    cm, ck, C = read_dense(out, strict=True)
    if (cm, ck) != (m, k):
        return "result is %d x %d, expected %d x %d" % (cm, ck, m, k)
    ref, scale = [0.0] * (m * k), [0.0] * (m * k)
    for i, row in enumerate(rows):
        for c in range(k):
            s = t = 0.0
            off = c * n
            for j, a in row:
                p = a * B[off + j]
                s += p
                t += abs(p)
            y0 = C0[i + c * m] if beta != 0 else 0.0
            ref[i + c * m] = alpha * s + beta * y0
            scale[i + c * m] = abs(alpha) * t + abs(beta * y0)
    msg, worst = compare(C, ref, scale, "y" if kind == "spmv" else "C")
    return msg


def check_manifest(path):
    """One case per line: id, kind, output, args (tab-separated). Prints ok/FAIL per case."""
    with open(path) as f:
        for ln in f:
            t = ln.rstrip("\n").split("\t")
            try:
                msg = check_mult(t[1], t[2], t[3:])
            except Exception as ex:  # a malformed result file is a failure, not a crash
                msg = "reference: %s: %s" % (type(ex).__name__, ex)
            print(("FAIL %s %s" % (t[0], msg)) if msg else ("ok %s" % t[0]))


if __name__ == "__main__":
    if sys.argv[1] == "gemm":
        msg = check_gemm(sys.argv[2], sys.argv[3:])
        if msg:
            print(msg)
            sys.exit(1)
    elif sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3:])
    elif sys.argv[1] == "mult":
        check_manifest(sys.argv[2])
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

# ------------------------------------------------------------------------------------------
# gemm on real data against the reference
# ------------------------------------------------------------------------------------------
W=$MTX/west0067.mtx.gz
K=$MTX/karate.mtx.gz
L=$MTX/lp_afiro.mtx.gz
F=$MTX/LFAT5.mtx.gz
G=$MTX/cryg2500.mtx.bz2
J=$MTX/west0067_jumbled.mtx.gz
BC=$MTX/bcsstk13.mtx.bz2

gemm_ok --block 1 "$W" "$W"
gemm_ok "$W" "$J"
gemm_ok --ta "$W" "$W"
gemm_ok --tb "$W" "$J"
gemm_ok --ta --tb "$W" "$W"
gemm_ok --upper "$W" "$W"
gemm_ok --block 2 "$K" "$K"
gemm_ok --block 2 --upper "$K" "$K"
gemm_ok --block-a 2x1 --block-b 1x2 "$K" "$K"
gemm_ok --block-a 1x2 --block-b 1x2 --ta "$K" "$K"
gemm_ok --block 17 --upper "$K" "$K"
# bcsstk13 is 2003 x 2003 and 2003 is prime: only 1x1 blocks divide it
gemm_ok --block 1 "$BC" "$BC"
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

# 1x1 blocks without --upper take the scalar CSR SpGEMM (sbm_csr_gemm; --ta/--tb transpose
# first): every file of the data folder, A*A, A^T*A and A*A^T, against the same reference as
# the block path; --upper with 1x1 blocks stays on the block path.
for f in "$MTX"/*.mtx*; do
    case $(basename "$f") in
    # too slow for the Python reference (bcsstk13 takes the scalar path in the case above)
    ca-CondMat.mtx* | bcsstk13.mtx*) continue ;;
    esac
    gemm_ok --block 1 --ta "$f" "$f"
    gemm_ok --tb "$f" "$f"
done
gemm_ok --ta --tb "$K" "$K"
gemm_ok --block 1 --upper "$K" "$K"
gemm_ok --block-a 1x1 --block-b 1 --tb --upper "$W" "$W"
gemm_ok --backend auto "$W" "$W"
if "$SBM" gemm "$W" "$W" -o "$TMP/scalar.mtx" | grep -q "scalar CSR SpGEMM"; then ok; else bad "gemm with 1x1 blocks should report the scalar path"; fi
if "$SBM" gemm --upper "$W" "$W" -o "$TMP/upper.mtx" | grep -q "blocks of 1x1"; then ok; else bad "gemm --upper should report the block path"; fi

# CUDA: compared like CPU where a device exists, a clean failure otherwise
HAVE_GPU=0
if "$SBM" --version | grep -q "cuda backend: yes" && ! "$SBM" --version | grep -q "(0 devices)"; then
    HAVE_GPU=1
    gemm_ok --backend cuda --block 2 "$K" "$K"
    gemm_ok --backend cuda --tb --block-a 3x17 --block-b 3x17 --upper "$L" "$L"
    gemm_ok --backend cuda --block-a 10x5 --block-b 5x2 "$G" "$G"
    # the scalar CSR SpGEMM on the device
    gemm_ok --backend cuda "$W" "$J"
    gemm_ok --backend cuda --ta "$L" "$L"
    gemm_ok --backend cuda --tb "$G" "$G"
    gemm_ok --backend cuda --block 1 "$BC" "$BC"
else
    fails 1 "sbm: " "$TMP/cuda.mtx" gemm --backend cuda "$K" "$K" -o "$TMP/cuda.mtx"
    fails 1 "--backend cuda" "$TMP/cuda.mtx" gemm --backend cuda "$W" "$W" -o "$TMP/cuda.mtx"
    fails 1 "--backend auto runs on the GPU when there is one, else on the CPU" "$TMP/cuda.mtx" \
        gemm --backend cuda "$W" "$W" -o "$TMP/cuda.mtx"
fi

# ------------------------------------------------------------------------------------------
# gemm errors: exit code, message, no output file
# ------------------------------------------------------------------------------------------
O=$TMP/never.mtx
fails 1 "nonexistent.mtx" "$O" gemm "$TMP/nonexistent.mtx" "$W" -o "$O"
fails 1 "nonexistent.mtx" "$O" gemm "$W" "$TMP/nonexistent.mtx" -o "$O"
fails 1 "sbm: " "$O" gemm --block 2 "$W" "$W" -o "$O"
fails 1 "west0067.mtx.gz with 2x2 blocks" "$O" gemm --block 2 "$W" "$W" -o "$O"
fails 1 "cannot be divided into 3x2 blocks" "$O" gemm --block-a 3x2 "$L" "$L" -o "$O"
fails 1 "A's 51 columns must equal B's 27 rows" "$O" gemm "$L" "$L" -o "$O"                     # 27x51 * 27x51 (scalar path)
fails 1 "A is 27x51, B is 27x51" "$O" gemm "$L" "$L" -o "$O"
fails 1 "inner dimensions differ" "$O" gemm --upper "$L" "$L" -o "$O"             # --upper: block path
fails 1 "inner block sizes differ" "$O" gemm --tb --block-a 3x3 --block-b 1x1 "$L" "$L" -o "$O"
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
fails 2 "unknown backend 'CPU'" "$O" gemm --backend CPU "$W" "$W" -o "$O"
fails 1 "sbm: " "$O" gemm --block 34 "$K" "$K" -o "$O"

# non-square C with --upper: a 4 x 6 times a 6 x 6
R=$TMP/rect4x6.mtx
S=$TMP/sq6.mtx
printf '%%%%MatrixMarket matrix coordinate real general\n4 6 3\n1 1 1.5\n2 3 -2\n4 6 3\n' >"$R"
printf '%%%%MatrixMarket matrix coordinate real general\n6 6 2\n1 1 2\n6 6 1\n' >"$S"
gemm_ok "$R" "$S"
gemm_ok --block 2 "$R" "$S"
fails 1 "--upper needs C square in blocks" "$O" gemm --upper "$R" "$S" -o "$O"
# malformed input: the message names the file
BADF=$TMP/bad.mtx
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n2 x 2.0\n' >"$BADF"
fails 1 "bad.mtx" "$O" gemm "$BADF" "$W" -o "$O"
# unwritable output
fails 1 "sbm: " "$TMP/no/such/dir/C.mtx" gemm "$W" "$W" -o "$TMP/no/such/dir/C.mtx"
# a failed run leaves an existing output untouched
KEEP=$TMP/keep.mtx
echo "precious" >"$KEEP"
fails 1 "A's 51 columns must equal B's 27 rows" "-" gemm "$L" "$L" -o "$KEEP"
if [ "$(cat "$KEEP")" = "precious" ]; then ok; else bad "failed gemm modified an existing -o file"; fi

# ------------------------------------------------------------------------------------------
# spmv and spmm on every matrix of the data folder against the reference (checked in one batch)
# ------------------------------------------------------------------------------------------
MANIFEST=$TMP/mult.tsv
: >"$MANIFEST"
n_refused=0
IN=$TMP/in
mkdir -p "$IN"
python3 "$REF" prepare "$IN" "$MTX"/*.mtx*

# mult_ok KIND ARGS... : sbm KIND ARGS -o OUT succeeds (checked later against the reference).
# An ELL or DIA plan may be refused (documented: padding over the format's limit) with exit 1,
# a message from sbm_csr_spmv_plan giving the fill, and no output; that is reported, not counted
# as a failure, unless MULT_STRICT=1 (a matrix whose padding is small).
mult_ok() {
    local kind=$1
    shift
    n_case=$((n_case + 1))
    local out=$TMP/m$n_case.mtx
    if $RUN "$SBM" "$kind" "$@" -o "$out" >"$TMP/m$n_case.out" 2>"$TMP/m$n_case.err"; then
        if ! grep -qE "ms each .* -> $out\$" "$TMP/m$n_case.out"; then
            bad "$kind $* : no summary line: $(cat "$TMP/m$n_case.out")"
            return
        fi
        { printf '%s\t%s\t%s' "$n_case" "$kind" "$out"; printf '\t%s' "$@"; printf '\n'; } >>"$MANIFEST"
    else
        local rc=$?
        if [ "${MULT_STRICT:-0}" != 1 ] && [ $rc -eq 1 ] &&
            printf '%s\n' "$*" | grep -qE -- "--format (ell|dia)" &&
            grep -q "argument format: .*fill" "$TMP/m$n_case.err" &&
            [ ! -e "$out" ]; then
            echo "note: $kind $* : refused: $(cat "$TMP/m$n_case.err")"
            n_refused=$((n_refused + 1))
            ok
        else
            bad "$kind $* : exit $rc : $(cat "$TMP/m$n_case.err")"
        fi
    fi
}

# mult_cases BACKEND FILE : every format and the alpha/beta/x/y combinations on one matrix.
mult_cases() {
    local be=$1 f=$2
    local base
    base=$IN/$(basename "$f" | sed -E 's/\.(gz|bz2)$//; s/\.mtx$//')
    local X=${base}_x.mtx Y=${base}_y.mtx BF=${base}_b.mtx CF=${base}_c.mtx C11=${base}_c11.mtx
    # spmv: sbm_csr_spmv (no --format, no --repeat), then a plan for each format
    mult_ok spmv --backend "$be" "$f"
    mult_ok spmv --backend "$be" --x "$X" --alpha -0.5 --beta 2 --y "$Y" "$f"
    mult_ok spmv --backend "$be" --format auto --repeat 3 --x "$X" "$f"
    mult_ok spmv --backend "$be" --format csr-scalar --seed 42 --alpha 2 --beta 0 --y "$Y" "$f"
    mult_ok spmv --backend "$be" --format csr-vector --x "$X" --beta 1 --y "$Y" "$f"
    mult_ok spmv --backend "$be" --format csr-merge --seed 0 --alpha 1.5 --beta -2 --y "$Y" "$f"
    mult_ok spmv --backend "$be" --format coo --x "$X" --alpha 0 --beta 3 --y "$Y" "$f"
    mult_ok spmv --backend "$be" --format ell --seed 123456789012345 --beta 0.25 "$f"
    mult_ok spmv --backend "$be" --format hyb --x "$X" --alpha -1 --beta 0.5 --y "$Y" --repeat 4 "$f"
    mult_ok spmv --backend "$be" --format dia --seed 18446744073709551615 --y "$Y" --beta 1 "$f"
    # spmm: seeded and file B, both layouts, 1, 3, 5 and 11 columns (strips of 8, 2 and 1)
    mult_ok spmm --backend "$be" --cols 1 --seed 3 "$f"
    mult_ok spmm --backend "$be" --cols 5 --seed 9 --col-major --alpha -1.5 "$f"
    mult_ok spmm --backend "$be" --b "$BF" --c "$CF" --alpha 2 --beta 0.5 "$f"
    mult_ok spmm --backend "$be" --b "$BF" --c "$CF" --beta -1 --col-major --repeat 3 "$f"
    mult_ok spmm --backend "$be" --cols 11 --seed 5 --c "$C11" --beta 1 --alpha 0.5 "$f"
    mult_ok spmm --backend "$be" --cols 11 --seed 5 --col-major "$f"
}
for f in "$MTX"/*.mtx*; do
    mult_cases cpu "$f"
done
# ELL and DIA where their padding is small: never refused
MULT_STRICT=1 mult_ok spmv --format ell --x "$IN/west0067_x.mtx" --beta 1 --y "$IN/west0067_y.mtx" "$W"
MULT_STRICT=1 mult_ok spmv --format ell --seed 4 "$K"
MULT_STRICT=1 mult_ok spmv --format dia --x "$IN/west0067_x.mtx" --alpha 2 "$W"
MULT_STRICT=1 mult_ok spmv --format dia --seed 4 --beta -1 --y "$IN/LFAT5_y.mtx" "$F"
# option forms: --opt=value, options after the matrix
mult_ok spmv "$W" --format=csr-vector --alpha=3 --seed=7
mult_ok spmv --backend auto --x "$IN/lp_afiro_x.mtx" "$L"
# a written result read back as input: y = A*x, then A^T-free round trip y2 = A*y (square A)
R1=$TMP/round1.mtx
R2=$TMP/round2.mtx
"$SBM" spmv --seed 11 "$W" -o "$R1" >/dev/null && mult_ok spmv --x "$R1" --y "$R1" --beta -1 "$W"
"$SBM" spmm --cols 4 --seed 12 "$K" -o "$R2" >/dev/null && mult_ok spmm --b "$R2" --c "$R2" --beta 2 "$K"
# the reader's leniency: integer field, comments, blank lines, one '%', upper case
LEN=$TMP/lenient_x.mtx
{
    printf '%%MATRIXMARKET Matrix ARRAY integer GENERAL\n%% comment\n\n%% another\n34 1\n'
    for i in $(seq 1 34); do printf '%d\n\n' $((i % 7 - 3)); done
} >"$LEN"
mult_ok spmv --x "$LEN" "$K"
# empty dimensions: 4 x 0 and 0 x 3
E40=$TMP/empty4x0.mtx
E03=$TMP/empty0x3.mtx
X0=$TMP/x0.mtx
Y4=$TMP/y4.mtx
printf '%%%%MatrixMarket matrix coordinate real general\n4 0 0\n' >"$E40"
printf '%%%%MatrixMarket matrix coordinate real general\n0 3 0\n' >"$E03"
printf '%%%%MatrixMarket matrix array real general\n0 1\n' >"$X0"
printf '%%%%MatrixMarket matrix array real general\n4 1\n1\n-2\n3.5\n0\n' >"$Y4"
mult_ok spmv --x "$X0" --y "$Y4" --beta 2 "$E40"
mult_ok spmv --format csr-merge --repeat 2 "$E03"
mult_ok spmm --cols 3 --beta 0 "$E40"
mult_ok spmm --cols 2 "$E03"

if [ "$HAVE_GPU" -eq 1 ]; then
    for f in "$MTX"/*.mtx*; do
        mult_cases cuda "$f"
    done
    if "$SBM" spmv --backend auto "$W" -o "$TMP/auto.mtx" | grep -q "backend cuda"; then ok; else bad "spmv --backend auto should take the GPU"; fi
else
    if "$SBM" spmv --backend auto "$W" -o "$TMP/auto.mtx" | grep -q "backend cpu"; then ok; else bad "spmv --backend auto without a GPU should take the CPU"; fi
    fails 1 "--backend cuda" "$TMP/cuda_y.mtx" spmv --backend cuda "$W" -o "$TMP/cuda_y.mtx"
    fails 1 "--backend cuda" "$TMP/cuda_c.mtx" spmm --backend cuda --cols 2 "$W" -o "$TMP/cuda_c.mtx"
fi

# the batch check
while read -r st id msg; do
    if [ "$st" = "ok" ]; then
        ok
    else
        bad "case $id ($(grep -P "^$id\t" "$MANIFEST" | cut -f2,4- | tr '\t' ' ')): $msg"
    fi
done < <(python3 "$REF" mult "$MANIFEST")
# 16 cases per matrix and backend, 13 more on the CPU: every one checked or (ELL, DIA) refused
n_checked=$(wc -l <"$MANIFEST")
n_want=$(($(ls "$MTX"/*.mtx* | wc -l) * 16 * (1 + HAVE_GPU) + 13))
if [ $((n_checked + n_refused)) -ne "$n_want" ]; then
    bad "$n_checked spmv/spmm results reached the reference and $n_refused were refused, expected $n_want"
else
    ok
fi
# "--" ends the options
if "$SBM" spmm --cols 2 -o "$TMP/dd1.mtx" -- "$L" >/dev/null && "$SBM" spmm --cols 2 "$L" -o "$TMP/dd2.mtx" >/dev/null &&
    cmp -s "$TMP/dd1.mtx" "$TMP/dd2.mtx"; then ok; else bad "spmm -- A.mtx"; fi

# the summary names the format: sbm_csr_spmv without --format/--repeat, the plan's otherwise
if "$SBM" spmv "$W" -o "$TMP/f1.mtx" | grep -q "format default (sbm_csr_spmv)"; then ok; else bad "spmv summary without a plan"; fi
if "$SBM" spmv --repeat 2 "$W" -o "$TMP/f2.mtx" | grep -qE "format (csr-scalar|csr-vector|csr-merge|coo|ell|hyb|dia) \(plan"; then ok; else bad "spmv summary with a plan"; fi

# ------------------------------------------------------------------------------------------
# spmv / spmm errors: exit code, message, no output file
# ------------------------------------------------------------------------------------------
XW=$IN/west0067_x.mtx
XL=$IN/lp_afiro_x.mtx # 51 x 1
YL=$IN/lp_afiro_y.mtx # 27 x 1
fails 1 "nonexistent.mtx" "$O" spmv "$TMP/nonexistent.mtx" -o "$O"
fails 1 "nox.mtx: cannot open" "$O" spmv --x "$TMP/nox.mtx" "$W" -o "$O"
fails 1 "noy.mtx: cannot open" "$O" spmv --y "$TMP/noy.mtx" "$W" -o "$O"
fails 1 "x is 51 x 1; A ($W) is 67 x 67, so x must be 67 x 1" "$O" spmv --x "$XL" "$W" -o "$O"
fails 1 "x is 67 x 1; A ($L) is 27 x 51, so x must be 51 x 1" "$O" spmv --x "$XW" "$L" -o "$O"
fails 1 "y is 51 x 1; A ($L) is 27 x 51, so y must be 27 x 1" "$O" spmv --x "$XL" --y "$XL" --beta 1 "$L" -o "$O"
fails 1 "x is 51 x 3" "$O" spmv --x "$IN/lp_afiro_b.mtx" "$L" -o "$O"
fails 1 "B is 67 x 1; A ($L) is 27 x 51, so B must have 51 rows" "$O" spmm --b "$XW" "$L" -o "$O"
fails 1 "C is 27 x 1; A ($L) is 27 x 51, so C must be 27 x 3" "$O" spmm --b "$IN/lp_afiro_b.mtx" --c "$YL" "$L" -o "$O"
fails 1 "C is 27 x 3; A ($L) is 27 x 51, so C must be 27 x 2" "$O" spmm --cols 2 --c "$IN/lp_afiro_c.mtx" "$L" -o "$O"
fails 1 "nob.mtx: cannot open" "$O" spmm --b "$TMP/nob.mtx" "$W" -o "$O"
fails 1 "bad.mtx" "$O" spmv "$BADF" -o "$O"
fails 1 "argument format: DIA" "$O" spmv --format dia "$MTX/ca-CondMat.mtx.bz2" -o "$O"
# the library's call chain ("sbm_csr_spmv_plan: ") is not shown to the CLI user
! grep -q "sbm_[a-z_]*: " "$TMP/f.err" && ok || bad "a CLI error shows the library's call chain: $(cat "$TMP/f.err")"
fails 2 "unknown format 'csr'" "$O" spmv --format csr "$W" -o "$O"
fails 2 "spmv: option --format needs a value" "$O" spmv "$W" -o "$O" --format
fails 2 "invalid number 'abc'" "$O" spmv --alpha abc "$W" -o "$O"
fails 2 "invalid number '1e999'" "$O" spmv --beta 1e999 "$W" -o "$O"
fails 2 "invalid number 'nan'" "$O" spmm --cols 2 --alpha nan "$W" -o "$O"
fails 2 "invalid number '2x'" "$O" spmm --cols 2 --beta 2x "$W" -o "$O"
fails 2 "invalid repeat count '0'" "$O" spmv --repeat 0 "$W" -o "$O"
fails 2 "invalid repeat count '-3'" "$O" spmm --cols 1 --repeat=-3 "$W" -o "$O"
fails 2 "invalid seed '-1'" "$O" spmv --seed -1 "$W" -o "$O"
fails 2 "invalid seed '18446744073709551616'" "$O" spmv --seed 18446744073709551616 "$W" -o "$O"
fails 2 "invalid column count '0'" "$O" spmm --cols 0 "$W" -o "$O"
fails 2 "invalid column count '3.5'" "$O" spmm --cols 3.5 "$W" -o "$O"
fails 2 "--x and --seed exclude each other" "$O" spmv --x "$XW" --seed 3 "$W" -o "$O"
fails 2 "--b and --seed exclude each other" "$O" spmm --b "$IN/west0067_b.mtx" --seed 3 "$W" -o "$O"
fails 2 "--b and --cols exclude each other" "$O" spmm --b "$IN/west0067_b.mtx" --cols 3 "$W" -o "$O"
fails 2 "needs B: --b FILE or --cols K" "$O" spmm "$W" -o "$O"
fails 2 "spmv: needs an input file A.mtx" "$O" spmv -o "$O"
fails 2 "spmm: needs an output file: -o C.mtx" "-" spmm --cols 2 "$W"
fails 2 "spmv: needs an output file: -o Y.mtx" "-" spmv "$W"
fails 2 "spmv: unexpected argument" "$O" spmv "$W" "$W" -o "$O"
fails 2 "spmv: unknown option '--col-major'" "$O" spmv --col-major "$W" -o "$O"
fails 2 "spmm: unknown option '--format'" "$O" spmm --format coo --cols 2 "$W" -o "$O"
fails 2 "spmv: unknown backend 'gpu' (cpu, cuda or auto)" "$O" spmv --backend gpu "$W" -o "$O"
fails 2 "usage: sbm spmm" "$O" spmm --frobnicate "$W" -o "$O"
fails 1 "sbm: " "$TMP/no/such/dir/y.mtx" spmv "$W" -o "$TMP/no/such/dir/y.mtx"
fails 1 "sbm: " "$TMP/no/such/dir/c.mtx" spmm --cols 2 "$W" -o "$TMP/no/such/dir/c.mtx"
echo "precious" >"$KEEP"
fails 1 "so x must be 67 x 1" "-" spmv --x "$XL" "$W" -o "$KEEP"
fails 1 "so B must have 67 rows" "-" spmm --b "$XL" "$W" -o "$KEEP"
if [ "$(cat "$KEEP")" = "precious" ]; then ok; else bad "failed spmv/spmm modified an existing -o file"; fi
if ls "$TMP"/*.tmp.* >/dev/null 2>&1; then bad "temporary files left behind: $(ls "$TMP"/*.tmp.*)"; else ok; fi

# malformed array files (as x of karate, 34 x 34): the message names the file, line, reason
bad_x() {
    local substr=$1
    shift
    local f=$TMP/badx.mtx
    printf "$@" >"$f"
    fails 1 "$substr" "$O" spmv --x "$f" "$K" -o "$O"
}
body34=$(for i in $(seq 1 34); do printf '%d\\n' "$i"; done)
body33=$(for i in $(seq 1 33); do printf '%d\\n' "$i"; done)
bad_x "badx.mtx:1: the file is empty" ''
bad_x "badx.mtx:1: not a Matrix Market file" "34 1\n$body34"
bad_x "badx.mtx:1: a sparse 'coordinate' file" "%%%%MatrixMarket matrix coordinate real general\n34 1 0\n"
bad_x "badx.mtx:1: unknown format 'dense'" "%%%%MatrixMarket matrix dense real general\n34 1\n$body34"
bad_x "badx.mtx:1: object 'vector' is not supported" "%%%%MatrixMarket vector array real general\n34 1\n$body34"
bad_x "badx.mtx:1: field 'complex' is not supported" "%%%%MatrixMarket matrix array complex general\n34 1\n$body34"
bad_x "badx.mtx:1: field 'pattern' is not supported" "%%%%MatrixMarket matrix array pattern general\n34 1\n$body34"
bad_x "badx.mtx:1: symmetry 'symmetric' is not supported" "%%%%MatrixMarket matrix array real symmetric\n34 1\n$body34"
bad_x "badx.mtx:1: the banner needs object, format, field and symmetry" "%%%%MatrixMarket matrix array real\n34 1\n$body34"
bad_x "badx.mtx:1: unexpected word 'extra'" "%%%%MatrixMarket matrix array real general extra\n34 1\n$body34"
bad_x "badx.mtx:2: ends before the size line" "%%%%MatrixMarket matrix array real general\n%% only a comment\n"
bad_x "badx.mtx:3: expected the size line 'rows columns'" "%%%%MatrixMarket matrix array real general\n%% c\n34 1 34\n$body34"
bad_x "badx.mtx:2: expected the size line 'rows columns'" "%%%%MatrixMarket matrix array real general\n34\n$body34"
bad_x "badx.mtx:2: expected the size line 'rows columns'" "%%%%MatrixMarket matrix array real general\n-34 1\n$body34"
bad_x "badx.mtx:2: expected the size line 'rows columns'" "%%%%MatrixMarket matrix array real general\n34 one\n$body34"
bad_x "badx.mtx:2: 4294967296 x 4294967296 values do not fit in memory" "%%%%MatrixMarket matrix array real general\n4294967296 4294967296\n1\n"
bad_x "badx.mtx:35: truncated: 33 of the 34 values of a 34 x 1 array" "%%%%MatrixMarket matrix array real general\n34 1\n$body33"
bad_x "badx.mtx:2: truncated: 0 of the 34 values" "%%%%MatrixMarket matrix array real general\n34 1\n"
bad_x "badx.mtx:37: more than the 34 values of a 34 x 1 array" "%%%%MatrixMarket matrix array real general\n34 1\n${body34}35\n"
bad_x "badx.mtx:5: 'x3' is not a number" "%%%%MatrixMarket matrix array real general\n34 1\n1\n2\nx3\n$body34"
bad_x "badx.mtx:4: '2.5.1' is not a number" "%%%%MatrixMarket matrix array real general\n34 1\n1\n2.5.1\n$body34"
bad_x "badx.mtx:3: value 'nan' is not finite" "%%%%MatrixMarket matrix array real general\n34 1\nnan\n$body33"
bad_x "badx.mtx:4: value '-inf' is not finite" "%%%%MatrixMarket matrix array real general\n34 1\n1\n-inf\n$body34"
bad_x "badx.mtx:3: value '1e400' is not finite" "%%%%MatrixMarket matrix array real general\n34 1\n1e400\n$body33"
bad_x "badx.mtx:3: one value per line expected, found also '2'" "%%%%MatrixMarket matrix array real general\n34 1\n1 2\n$body33"
bad_x "badx.mtx:3: '%' is not a number" "%%%%MatrixMarket matrix array real general\n34 1\n%% late comment\n$body34"
# the same reader serves y, B and C
printf '%%%%MatrixMarket matrix array real general\n34 2\n1\n' >"$TMP/short_b.mtx"
fails 1 "short_b.mtx:3: truncated: 1 of the 68 values of a 34 x 2 array" "$O" spmm --b "$TMP/short_b.mtx" "$K" -o "$O"
fails 1 "short_b.mtx:3: truncated" "$O" spmm --cols 2 --c "$TMP/short_b.mtx" "$K" -o "$O"
fails 1 "short_b.mtx:3: truncated" "$O" spmv --y "$TMP/short_b.mtx" "$K" -o "$O"

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
info_ok "$BC" 1
if "$SBM" info "$K" | grep -qx "symmetric: yes"; then ok; else bad "karate should be symmetric"; fi
if "$SBM" info "$W" | grep -qx "symmetric: no"; then ok; else bad "west0067 should not be symmetric"; fi
fails 1 "west0067.mtx.gz with 2x2 blocks" "-" info --block 2 "$W"
fails 1 "nonexistent.mtx" "-" info "$TMP/nonexistent.mtx"
fails 2 "needs an input file" "-" info
fails 2 "unknown option" "-" info --ta "$W"
fails 2 "needs a value" "-" info "$W" --block

# the plain originals (optional extra data) give the same info as the compressed copies
for f in "$MTX"/*.mtx*; do
    plain=$EXTRA/mtx/$(basename "$f" | sed -E 's/\.(gz|bz2)$//')
    if [ -f "$plain" ]; then
        if [ "$("$SBM" info "$plain" | grep -v '^file: ')" = "$("$SBM" info "$f" | grep -v '^file: ')" ]; then
            ok
        else
            bad "info $plain differs from info $f"
        fi
    else
        echo "skipped: $plain not found (optional data; SBM_DATA_DIR names the folder)"
    fi
done

# ------------------------------------------------------------------------------------------
# help, version, usage
# ------------------------------------------------------------------------------------------
if "$SBM" --help | grep -q "usage: sbm"; then ok; else bad "sbm --help"; fi
if "$SBM" gemm --help | grep -q "usage: sbm gemm"; then ok; else bad "sbm gemm --help"; fi
if "$SBM" info --help | grep -q "usage: sbm info"; then ok; else bad "sbm info --help"; fi
if "$SBM" spmv --help | grep -q "usage: sbm spmv"; then ok; else bad "sbm spmv --help"; fi
if "$SBM" spmm -h | grep -q "usage: sbm spmm"; then ok; else bad "sbm spmm -h"; fi
if "$SBM" --help | grep -q "^  spmv " && "$SBM" --help | grep -q "^  spmm "; then ok; else bad "sbm --help lists spmv and spmm"; fi
if "$SBM" gemm --help | grep -q "sbm_csr_gemm"; then ok; else bad "sbm gemm --help names the scalar path"; fi
if "$SBM" --version | grep -qE "^sbm [0-9]+\.[0-9]+\.[0-9]+$"; then ok; else bad "sbm --version"; fi
fails 2 "usage: sbm" "-"
fails 2 "unknown command" "-" frobnicate
fails 2 "unknown option" "-" --frobnicate
fails 2 "unknown command 'slam-solv' (did you mean 'slam-solve'?)" "-" slam-solv
fails 2 "unknown option '--blok' (did you mean '--block'?)" "-" info --blok 2 A.mtx
# output into a pipe comes a line at a time (line-buffered stdout), so that progress shows as
# it happens: the first lines reach a FIFO while a long solve still runs (fully buffered, they
# would arrive only at its exit)
mkfifo "$TMP/pipe"
"$SBM" ba-solve --generate 400,40000,4 --iterations 200 --pcg-tolerance 1e-12 >"$TMP/pipe" 2>/dev/null &
solver=$!
exec 7<"$TMP/pipe"
IFS= read -r -t 60 first <&7 || first=
if kill -0 "$solver" 2>/dev/null && [ -n "$first" ]; then ok; else bad "piped output held back: first line '$first' arrived after the solve ended"; fi
kill "$solver" 2>/dev/null
exec 7<&-
wait "$solver" 2>/dev/null
rm -f "$TMP/pipe"

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
