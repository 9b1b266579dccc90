# SPDX-License-Identifier: BSD-3-Clause
"""Block SpGEMM (plans, ops, upper, accumulate), block SpMV, scalar SpMV/SpMM/SpGEMM and SpMV
plans against numpy dense references on seeded inputs, every block size 1..8."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

import sbm
from conftest import random_bsr, tol

SIZES = range(1, 9)
BA_SHAPES = [(6, 3), (9, 3), (3, 6), (3, 9), (6, 6), (9, 9), (3, 3)]


def cbc(rng, nbr, nbc, r, c, density=0.4):
    M = random_bsr(rng, nbr, nbc, r, c, density)
    return sbm.CBC.from_bsr(M), M.toarray()


@pytest.mark.parametrize("b", SIZES)
@pytest.mark.parametrize("ops", ["NN", "NT", "TN", "TT"])
def test_gemm_square_blocks(rng, b, ops):
    # op(A) is 5x4 blocks, op(B) 4x6 blocks
    A, Ad = cbc(rng, *((5, 4) if ops[0] == "N" else (4, 5)), b, b)
    B, Bd = cbc(rng, *((4, 6) if ops[1] == "N" else (6, 4)), b, b)
    C = sbm.gemm(A, B, op_a=ops[0], op_b=ops[1], alpha=0.5)
    ref = 0.5 * (Ad if ops[0] == "N" else Ad.T) @ (Bd if ops[1] == "N" else Bd.T)
    assert C.block_shape == (b, b)
    np.testing.assert_allclose(C.to_dense(), ref, rtol=0, atol=tol(4 * b))


@pytest.mark.parametrize("r,k,c", [t for t in itertools.product(SIZES, repeat=3)
                                   if (t[0] + 2 * t[1] + 3 * t[2]) % 7 == 0] +
                         [(r, k, c) for (r, k), (_, c) in zip(BA_SHAPES, BA_SHAPES[::-1])])
def test_gemm_rectangular_blocks(rng, r, k, c):
    A, Ad = cbc(rng, 4, 3, r, k)
    B, Bd = cbc(rng, 3, 5, k, c)
    C = A @ B
    np.testing.assert_allclose(C.to_dense(), Ad @ Bd, rtol=0, atol=tol(3 * k))


@pytest.mark.parametrize("b", SIZES)
def test_gemm_plan_reused_with_new_values(rng, b):
    A, Ad = cbc(rng, 6, 5, b, 3)
    U, Ud = cbc(rng, 6, 6, b, b)
    plan = sbm.GemmPlan(A, A, op_b="T", U=U)
    assert plan.C.nnzb == plan.info["nnzb_c"] and plan.info["products"] > 0
    np.testing.assert_array_equal(plan.C.values, 0)          # pattern only until execute
    C = plan.execute(alpha=-1.0)
    np.testing.assert_allclose(C.to_dense(), Ud - Ad @ Ad.T, rtol=0, atol=tol(15))
    # new values, same pattern: written into the operands' block views
    A.blocks[...] = rng.standard_normal(A.blocks.shape)
    U.blocks[...] = rng.standard_normal(U.blocks.shape)
    C2 = plan.execute(alpha=2.0)
    assert C2 is plan.C
    np.testing.assert_allclose(C2.to_dense(), U.to_dense() + 2 * A.to_dense() @ A.to_dense().T,
                               rtol=0, atol=tol(15))
    # other matrices with the plan's patterns
    A2 = A.copy()
    A2.values[:] = 1.0
    plan.execute(A=A2, B=A2, U=U)
    np.testing.assert_allclose(plan.C.to_dense(), U.to_dense() + A2.to_dense() @ A2.to_dense().T,
                               rtol=0, atol=tol(15))


def test_gemm_upper_and_plan_mismatch(rng):
    A, Ad = cbc(rng, 5, 7, 3, 2)
    plan = sbm.GemmPlan(A, A, op_b="T", upper=True)
    C = plan.execute()
    ref = Ad @ Ad.T
    Cd = C.to_dense()
    for i in range(5):
        for j in range(5):
            blk = Cd[3 * i:3 * i + 3, 3 * j:3 * j + 3]
            if i > j:
                assert not blk.any()
            else:
                np.testing.assert_allclose(blk, ref[3 * i:3 * i + 3, 3 * j:3 * j + 3], atol=1e-13)
    other, _ = cbc(rng, 5, 7, 3, 2, density=0.9)
    with pytest.raises(sbm.PlanMismatchError) as e:
        plan.execute(A=other, B=other)
    assert e.value.status_name == "SBM_ERR_PLAN_MISMATCH" and "sbm_cbc_gemm_execute" in e.value.message


def test_gemm_errors(rng):
    A, _ = cbc(rng, 3, 4, 2, 3)
    with pytest.raises(sbm.BlockShapeError, match="SBM_ERR_BLOCK_SHAPE: sbm_cbc_gemm"):
        sbm.gemm(A, A)
    B, _ = cbc(rng, 5, 2, 3, 2)
    with pytest.raises(sbm.DimensionMismatchError, match="SBM_ERR_DIMENSION_MISMATCH"):
        sbm.gemm(A, B)
    B2, _ = cbc(rng, 5, 4, 2, 3)
    with pytest.raises(sbm.DimensionMismatchError, match="SBM_GEMM_UPPER needs C square"):
        sbm.gemm(A, B2, op_b="T", upper=True)
    with pytest.raises(ValueError, match="op_a must be 'N' or 'T'"):
        sbm.gemm(A, A, op_a="X")


def test_gemm_empty(rng):
    E = sbm.CBC.from_arrays(3, 4, 2, 2, np.zeros(5, np.int64), np.zeros(0, np.int32))
    A, _ = cbc(rng, 4, 2, 2, 2)
    C = sbm.gemm(E, A)
    assert C.nnzb == 0 and C.shape == (6, 4)
    Z = sbm.CBC.from_arrays(0, 0, 2, 2, np.zeros(1, np.int64), np.zeros(0, np.int32))
    assert sbm.GemmPlan(Z, Z).execute().shape == (0, 0)


@pytest.mark.parametrize("r,c", [(b, b) for b in SIZES] + BA_SHAPES + [(2, 7), (8, 1)])
@pytest.mark.parametrize("op", ["N", "T"])
def test_block_spmv(rng, r, c, op):
    A, Ad = cbc(rng, 7, 5, r, c)
    M = Ad if op == "N" else Ad.T
    x = rng.standard_normal(M.shape[1])
    y0 = rng.standard_normal(M.shape[0])
    np.testing.assert_allclose(A.spmv(x, op=op), M @ x, rtol=0, atol=tol(5 * c))
    y = y0.copy()
    out = A.spmv(x, y, alpha=2.0, beta=-1.0, op=op)
    assert out is y
    np.testing.assert_allclose(y, 2 * M @ x - y0, rtol=0, atol=tol(10 * c))
    if op == "N":
        np.testing.assert_allclose(A @ x, Ad @ x, rtol=0, atol=tol(5 * c))


def test_spmv_argument_errors(rng):
    A, _ = cbc(rng, 3, 3, 2, 2)
    with pytest.raises(ValueError, match="has 5 elements, 6 expected"):
        A.spmv(np.ones(5))
    with pytest.raises(ValueError, match="beta != 0 needs y"):
        A.spmv(np.ones(6), beta=1.0)
    with pytest.raises(ValueError, match="written in place"):
        A.spmv(np.ones(6), np.ones(6, np.float32))


def test_bdiag(rng):
    blocks = rng.standard_normal((4, 3, 3))
    blocks = blocks @ blocks.transpose(0, 2, 1) + 3 * np.eye(3)
    D = sbm.CBC.from_triplets(4, 4, range(4), range(4), blocks)
    Dinv = sbm.bdiag_inverse(D)
    np.testing.assert_allclose(Dinv.to_dense() @ D.to_dense(), np.eye(12), atol=1e-12)
    A, Ad = cbc(rng, 4, 5, 3, 2)
    np.testing.assert_allclose(sbm.bdiag_scale(D, A).to_dense(), D.to_dense() @ Ad, atol=1e-12)
    B, Bd = cbc(rng, 5, 4, 2, 3)
    np.testing.assert_allclose(sbm.bdiag_scale(D, B, side="right").to_dense(),
                               Bd @ D.to_dense(), atol=1e-12)
    bad = D.copy()
    bad.blocks[2] = -np.eye(3)
    with pytest.raises(sbm.NotPositiveDefiniteError, match="SBM_ERR_NOT_POSITIVE_DEFINITE"):
        sbm.bdiag_inverse(bad)


def scalar(rng, m, n, density=0.2):
    M = sp.random_array((m, n), density=density, rng=rng, format="csr")
    return sbm.CSR.from_scipy(M), M.toarray()


def test_csr_spmv_spmm(rng):
    A, Ad = scalar(rng, 40, 30)
    x = rng.standard_normal(30)
    np.testing.assert_allclose(A.spmv(x), Ad @ x, atol=1e-13)
    np.testing.assert_allclose(A @ x, Ad @ x, atol=1e-13)
    y = rng.standard_normal(40)
    ref = 3 * Ad @ x + 0.5 * y
    A.spmv(x, y, alpha=3.0, beta=0.5)
    np.testing.assert_allclose(y, ref, atol=1e-13)
    for order in "CF":
        B = np.asarray(rng.standard_normal((30, 5)), order=order)
        C0 = np.asarray(rng.standard_normal((40, 5)), order=order)
        np.testing.assert_allclose(A.spmm(B), Ad @ B, atol=1e-13)
        C = C0.copy(order=order)
        out = A.spmm(B, C, alpha=2.0, beta=-1.0)
        assert out is C
        np.testing.assert_allclose(C, 2 * Ad @ B - C0, atol=1e-13)
    np.testing.assert_allclose(A @ np.ones((30, 2)), Ad @ np.ones((30, 2)), atol=1e-13)
    with pytest.raises(ValueError, match="B's layout"):
        A.spmm(np.ones((30, 2)), np.ones((40, 2), order="F")[:, :2].copy(order="F"))


def test_csr_gemm_plan(rng):
    A, Ad = scalar(rng, 20, 15)
    B, Bd = scalar(rng, 15, 25)
    np.testing.assert_allclose(sbm.csr_gemm(A, B).to_dense(), Ad @ Bd, atol=1e-13)
    np.testing.assert_allclose((A @ B).to_dense(), Ad @ Bd, atol=1e-13)
    plan = sbm.CsrGemmPlan(A, B)
    plan.execute()
    np.testing.assert_allclose(plan.C.to_dense(), Ad @ Bd, atol=1e-13)
    A.values[:] *= 2
    np.testing.assert_allclose(plan.execute().to_dense(), 2 * Ad @ Bd, atol=1e-13)
    with pytest.raises(sbm.DimensionMismatchError):
        sbm.csr_gemm(A, A)


@pytest.mark.parametrize("fmt", ["auto", "csr-scalar", "csr-vector", "csr-merge", "coo", "ell",
                                 "hyb", "dia"])
def test_spmv_plan_formats(rng, fmt):
    n = 50
    M = sp.diags_array([rng.standard_normal(n - abs(k)) for k in (-1, 0, 2)], offsets=[-1, 0, 2],
                       format="csr")
    A = sbm.CSR.from_scipy(M)
    plan = sbm.SpmvPlan(A, fmt)
    assert isinstance(plan.format, str)
    x = rng.standard_normal(n)
    ref = M @ x
    np.testing.assert_allclose(plan.execute(x), ref, atol=1e-13)
    A.values[:] *= -1          # A shares M's values (from_scipy without a copy): M changes too
    assert np.shares_memory(A.values, M.data)
    np.testing.assert_allclose(plan.execute(x), ref, atol=1e-13)    # the plan holds its copy
    plan.update(A)
    np.testing.assert_allclose(plan.execute(x), -ref, atol=1e-13)


def test_mtx_read_write(tmp_path):
    from conftest import data_file
    A = sbm.read_mtx(data_file("mtx", "west0067.mtx.gz"))
    assert A.shape == (67, 67)
    p = tmp_path / "a.mtx"
    A.write_mtx(p)
    B = sbm.CSR.read_mtx(str(p))
    np.testing.assert_array_equal(A.to_dense(), B.to_dense())
    with pytest.raises(sbm.IoError) as e:
        sbm.read_mtx(tmp_path / "missing.mtx")
    assert isinstance(e.value, OSError) and "missing.mtx" in e.value.message
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n")
    with pytest.raises(sbm.SbmError, match="bad.mtx"):
        sbm.read_mtx(bad)
