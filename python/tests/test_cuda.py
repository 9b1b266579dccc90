# SPDX-License-Identifier: BSD-3-Clause
"""GPU paths: a CUDA context wrapping CuPy and PyTorch device arrays without a host copy, the
products, the Cholesky and the solvers on the device, checked against the CPU backend. Skipped,
with the reason shown (pytest -rs), where sbm has no CUDA backend or there is no GPU, and per
library where CuPy or PyTorch is not installed."""
import numpy as np
import pytest

import sbm
from conftest import data_file, random_bsr

no_gpu = sbm.cuda_device_count() == 0
pytestmark = pytest.mark.skipif(
    no_gpu, reason="GPU paths not run: %s" % ("sbm was built without CUDA" if not sbm.has_cuda()
                                              else "no CUDA device"))


@pytest.fixture(scope="module")
def gctx():
    return sbm.Context("cuda", 0)


@pytest.fixture(params=["cupy", "torch"])
def xp(request):
    """Array helpers for CuPy or PyTorch: to_device(numpy) and to_host(device array)."""
    if request.param == "cupy":
        cp = pytest.importorskip("cupy")
        return {"name": "cupy", "dev": cp.asarray, "host": cp.asnumpy,
                "ptr": lambda a: a.data.ptr, "empty": lambda n: cp.zeros(n)}
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    return {"name": "torch", "dev": lambda a: torch.as_tensor(np.asarray(a), device="cuda"),
            "host": lambda a: a.cpu().numpy(), "ptr": lambda a: a.data_ptr(),
            "empty": lambda n: torch.zeros(n, dtype=torch.float64, device="cuda")}


def wrap_on_device(xp, gctx, A):
    """A CPU CBC's arrays on the device, wrapped (no copy) in a CUDA context's CBC."""
    cp_, ri, va = xp["dev"](A.colptr), xp["dev"](A.rowind), xp["dev"](A.values)
    G = sbm.CBC.from_arrays(A.nbr, A.nbc, A.r, A.c, cp_, ri, va, ctx=gctx, copy=False)
    assert G.values.ptr == xp["ptr"](va)           # the device array itself, not a copy
    return G, va


@pytest.mark.parametrize("b", range(1, 9))
def test_gemm_on_wrapped_device_arrays(rng, gctx, xp, b):
    A = sbm.CBC.from_bsr(random_bsr(rng, 9, 7, b, 3))
    B = sbm.CBC.from_bsr(random_bsr(rng, 9, 5, b, 2))
    Ag, va = wrap_on_device(xp, gctx, A)
    Bg, _ = wrap_on_device(xp, gctx, B)
    plan = sbm.GemmPlan(Ag, Bg, op_a="T")
    C = plan.execute()
    ref = sbm.gemm(A, B, op_a="T")
    assert C.ctx is gctx and C.nnzb == ref.nnzb
    np.testing.assert_allclose(C.to_dense(), ref.to_dense(), rtol=1e-12, atol=1e-12)
    # new values written by the array library into the wrapped array, the plan re-executed
    va *= 2
    C = plan.execute()
    np.testing.assert_allclose(C.to_dense(), 2 * ref.to_dense(), rtol=1e-12, atol=1e-12)
    # the result's arrays handed to the array library without a copy
    if xp["name"] == "cupy":
        import cupy
        cv = cupy.asarray(C.values)
        assert cv.data.ptr == C.values.ptr
        np.testing.assert_allclose(cupy.asnumpy(cv), C.values.get())


def test_spmv_and_chol_with_device_vectors(rng, gctx, xp):
    A = sbm.CBC.from_bsr(random_bsr(rng, 8, 6, 3, 2))
    Ag, _ = wrap_on_device(xp, gctx, A)
    x = rng.standard_normal(12)
    y = xp["dev"](rng.standard_normal(24))
    y0 = xp["host"](y).copy()
    out = Ag.spmv(xp["dev"](x), y, alpha=2.0, beta=1.0)
    assert out is y
    np.testing.assert_allclose(xp["host"](y), 2 * A.to_dense() @ x + y0, rtol=1e-12, atol=1e-12)
    yn = Ag.spmv(xp["dev"](x))                     # a new array of the caller's library
    assert type(yn).__module__.split(".")[0] == xp["name"]
    np.testing.assert_allclose(xp["host"](yn), A.to_dense() @ x, atol=1e-12)
    np.testing.assert_allclose(Ag.spmv(x), A.to_dense() @ x, atol=1e-12)   # numpy in, numpy out
    # Cholesky of A^T A + I on the device, solved for a device vector
    S = sbm.gemm(A, A, op_a="T", upper=True)
    I = sbm.CBC.from_triplets(6, 6, range(6), range(6), np.repeat(np.eye(2)[None], 6, 0))
    S = S.add(I)
    Sg = S.copy(gctx)
    ch = sbm.Cholesky(Sg)
    full = A.to_dense().T @ A.to_dense() + np.eye(12)
    bvec = rng.standard_normal(12)
    xs = ch.solve(xp["dev"](bvec))
    np.testing.assert_allclose(xp["host"](xs), np.linalg.solve(full, bvec), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(ch.solve(bvec), np.linalg.solve(full, bvec), rtol=1e-10, atol=1e-10)


def test_csr_on_device(rng, gctx, xp):
    import scipy.sparse as sp
    M = sp.random_array((50, 40), density=0.1, rng=rng, format="csr")
    A = sbm.CSR.from_scipy(M)
    G = sbm.CSR.from_arrays(50, 40, xp["dev"](A.rowptr), xp["dev"](A.colind), xp["dev"](A.values),
                            ctx=gctx, copy=False)
    x = rng.standard_normal(40)
    np.testing.assert_allclose(xp["host"](G.spmv(xp["dev"](x))), M @ x, atol=1e-12)
    B = rng.standard_normal((40, 3))
    np.testing.assert_allclose(xp["host"](G.spmm(xp["dev"](B))), M @ B, atol=1e-12)
    np.testing.assert_allclose(G.spmm(B), M @ B, atol=1e-12)
    np.testing.assert_allclose((G @ G.T).to_dense(), (M @ M.T).toarray(), atol=1e-12)
    S = G.to_scipy(index_dtype=np.int64)          # copied to the host
    np.testing.assert_array_equal(S.toarray(), M.toarray())
    H = sbm.CSR.from_scipy(M, ctx=gctx)            # host arrays copied to the device
    np.testing.assert_array_equal(H.to_dense(), M.toarray())


def test_device_array_checks(gctx, xp):
    cpu = sbm.Context("cpu")
    v = xp["empty"](4)
    with pytest.raises(ValueError, match="device array; a CPU context needs host"):
        sbm.CBC.from_arrays(1, 1, 2, 2, xp["dev"](np.array([0, 1])),
                            xp["dev"](np.array([0], np.int32)), v, ctx=cpu, copy=False)
    with pytest.raises(TypeError, match="must be a device array of int32"):
        sbm.CBC.from_arrays(1, 1, 2, 2, xp["dev"](np.array([0, 1])),
                            xp["dev"](np.array([0], np.int64)), v, ctx=gctx, copy=False)
    with pytest.raises(ValueError, match="copy=False on a CUDA context needs device arrays"):
        sbm.CBC.from_arrays(1, 1, 2, 2, [0, 1], [0], np.ones(4), ctx=gctx, copy=False)
    with pytest.raises(sbm.IndexOutOfRangeError, match="SBM_ERR_INDEX_OUT_OF_RANGE"):
        sbm.CBC.from_arrays(1, 1, 2, 2, xp["dev"](np.array([0, 1])),
                            xp["dev"](np.array([3], np.int32)), v, ctx=gctx, copy=False)


class DLPackOnly:
    """A device array seen through DLPack alone (as JAX arrays are)."""

    def __init__(self, a):
        self.a = a

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__(stream=stream)


def test_dlpack_device_arrays(rng, gctx):
    cp = pytest.importorskip("cupy")
    A = sbm.CBC.from_bsr(random_bsr(rng, 6, 5, 2, 3))
    arrays = [cp.asarray(A.colptr), cp.asarray(A.rowind), cp.asarray(A.values)]
    G = sbm.CBC.from_arrays(6, 5, 2, 3, *[DLPackOnly(a) for a in arrays], ctx=gctx, copy=False)
    assert G.values.ptr == arrays[2].data.ptr
    x = rng.standard_normal(15)
    y = cp.zeros(12)
    G.spmv(DLPackOnly(cp.asarray(x)), DLPackOnly(y))
    np.testing.assert_allclose(cp.asnumpy(y), A.to_dense() @ x, atol=1e-12)


def test_ba_and_slam_on_the_device(gctx):
    P = sbm.BALProblem.read(data_file("bal", "problem-49-7776-pre.txt.bz2"))
    Q = sbm.BALProblem.read(data_file("bal", "problem-49-7776-pre.txt.bz2"))
    s_cpu = sbm.ba_solve(P, max_iterations=10)
    s_gpu = sbm.ba_solve(Q, max_iterations=10, ctx=gctx)
    assert s_gpu.iterations == s_cpu.iterations
    assert s_gpu.final_cost == pytest.approx(s_cpu.final_cost, rel=1e-6)
    G = sbm.PoseGraph.read(data_file("g2o", "intel.g2o.bz2"))
    H = sbm.PoseGraph.read(data_file("g2o", "intel.g2o.bz2"))
    a, b = sbm.slam_solve(G), sbm.slam_solve(H, ctx=gctx)
    assert b.converged and b.final_cost == pytest.approx(a.final_cost, rel=1e-6)


def test_selected_inverse_and_covariance_on_the_device(rng, gctx):
    from test_solve import spd_upper
    A, full = spd_upper(rng, 10, 3)
    ch_cpu, ch_gpu = sbm.Cholesky(A), sbm.Cholesky(A.copy(gctx))
    inv = np.linalg.inv(full)
    D = ch_gpu.inverse_diagonal()
    np.testing.assert_allclose(D, ch_cpu.inverse_diagonal(), rtol=1e-10, atol=1e-14)
    for i in range(10):
        np.testing.assert_allclose(D[i], inv[3 * i:3 * i + 3, 3 * i:3 * i + 3], rtol=1e-9,
                                   atol=1e-13)
    np.testing.assert_allclose(ch_gpu.inverse_blocks([0, 4], [0, 4]), D[[0, 4]], rtol=1e-12)
    G = sbm.PoseGraph.read(data_file("g2o", "intel.g2o.bz2"))
    G.solve(max_iterations=10)
    a, va = G.covariance()
    b, vb = G.covariance(ctx=gctx)
    np.testing.assert_array_equal(va, vb)
    np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-9 * np.abs(a).max())


def test_from_arrays_constants_and_priors_on_the_device(gctx):
    P = sbm.BALProblem.read(data_file("bal", "problem-21-11315-pre.txt.bz2"))
    arrays = (P.camera_params, P.point_params, P.obs_camera, P.obs_point, P.obs_xy)
    Q = sbm.BALProblem.from_arrays(*arrays, constant_cameras=[3])
    R = sbm.BALProblem.from_arrays(*arrays, constant_cameras=[3])
    Q.set_camera_prior(5, Q.camera_params[5], 1e3 * np.eye(9))
    R.set_camera_prior(5, R.camera_params[5], 1e3 * np.eye(9))
    cam3 = Q.camera_params[3].copy()
    s_cpu = Q.solve(max_iterations=8, linear_solver="dense_cholesky")
    s_gpu = R.solve(max_iterations=8, linear_solver="dense_cholesky", ctx=gctx)
    np.testing.assert_array_equal(R.camera_params[3], cam3)
    np.testing.assert_array_equal(Q.camera_params[3], cam3)
    assert s_gpu.final_cost == pytest.approx(s_cpu.final_cost, rel=1e-6)
    G = sbm.PoseGraph.read(data_file("g2o", "smallGrid3D.g2o.bz2"))
    H = sbm.PoseGraph.from_arrays(G.poses, G.edge_from, G.edge_to, G.edge_measurement,
                                  G.edge_information, gauge="refuse", prior_vertex=[0],
                                  prior_measurement=G.poses[:1])
    K = sbm.PoseGraph.from_arrays(G.poses, G.edge_from, G.edge_to, G.edge_measurement,
                                  G.edge_information, gauge="refuse", prior_vertex=[0],
                                  prior_measurement=G.poses[:1])
    a, b = H.solve(max_iterations=20), K.solve(max_iterations=20, ctx=gctx)
    assert b.final_cost == pytest.approx(a.final_cost, rel=1e-6)
