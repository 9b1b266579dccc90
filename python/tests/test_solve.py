# SPDX-License-Identifier: BSD-3-Clause
"""Sparse block Cholesky against numpy, BA from BAL files / generated / arrays, SLAM from g2o
files / arrays, the solver summary, errors."""
import numpy as np
import pytest

import sbm
from conftest import data_file


def spd_upper(rng, nb, b, density=0.3):
    """An SPD block matrix with a random block pattern: (its upper block triangle as CBC, the
    dense full matrix)."""
    mask = np.triu(rng.random((nb, nb)) < density, 1)
    mask = mask | mask.T | np.eye(nb, dtype=bool)
    R = rng.standard_normal((nb * b, nb * b)) * np.kron(mask, np.ones((b, b)))
    full = R + R.T
    full += (np.abs(full).sum(1).max() + 1) * np.eye(nb * b)
    brow, bcol = np.nonzero(np.triu(mask))
    blocks = np.array([full[i * b:(i + 1) * b, j * b:(j + 1) * b] for i, j in zip(brow, bcol)])
    return sbm.CBC.from_triplets(nb, nb, brow, bcol, blocks), full


@pytest.mark.parametrize("b", range(1, 9))
@pytest.mark.parametrize("ordering", ["amd", "natural"])
def test_cholesky_every_block_size(rng, b, ordering):
    A, full = spd_upper(rng, 12, b)
    ch = sbm.Cholesky(A, ordering=ordering)
    info = ch.info
    assert info["factored"] and info["block_size"] == b and info["block_columns"] == 12
    assert sorted(info["perm"]) == list(range(12))
    x = rng.standard_normal(12 * b)
    np.testing.assert_allclose(ch.solve(full @ x), x, rtol=1e-10, atol=1e-10)
    X = rng.standard_normal((12 * b, 3))
    np.testing.assert_allclose(ch.solve(full @ X), X, rtol=1e-10, atol=1e-10)
    # damping: A + lam I, refactored without planning again
    ch.factor(damping="identity", lam=2.5)
    np.testing.assert_allclose(ch.solve(x), np.linalg.solve(full + 2.5 * np.eye(12 * b), x),
                               rtol=1e-10, atol=1e-12)
    d = np.clip(np.diag(full), 1e-6, 1e32)
    ch.factor(A, damping="diagonal", lam=0.1)
    np.testing.assert_allclose(ch.solve(x), np.linalg.solve(full + 0.1 * np.diag(d), x),
                               rtol=1e-10, atol=1e-12)


def test_cholesky_not_positive_definite(rng):
    A, full = spd_upper(rng, 6, 3)
    ch = sbm.Cholesky(A)
    A.values[:] = -A.values
    with pytest.raises(sbm.NotPositiveDefiniteError) as e:
        ch.factor()
    assert e.value.status_name == "SBM_ERR_NOT_POSITIVE_DEFINITE"
    assert "sbm_chol_factor" in e.value.message
    assert ch.info["failed_column"] >= 0 and not ch.info["factored"]
    with pytest.raises(ValueError, match="damping must be"):
        ch.factor(damping="huge")


def test_cholesky_errors_and_empty(rng):
    R = sbm.CBC.from_arrays(2, 2, 2, 3, [0, 0, 0], np.zeros(0, np.int32))
    with pytest.raises(sbm.BlockShapeError, match="SBM_ERR_BLOCK_SHAPE"):
        sbm.Cholesky(R)
    A, full = spd_upper(rng, 4, 2)
    ch = sbm.Cholesky(A)
    with pytest.raises(ValueError, match=r"b must have shape \(8,\)"):
        ch.solve(np.ones(5))
    E = sbm.CBC.from_arrays(0, 0, 3, 3, [0], np.zeros(0, np.int32))
    ce = sbm.Cholesky(E)
    assert ce.solve(np.zeros(0)).shape == (0,)


BAL = ("bal", "problem-49-7776-pre.txt.bz2")


def test_ba_from_bal_file():
    P = sbm.BALProblem.read(data_file(*BAL))
    assert (P.cameras, P.points, P.observations) == (49, 7776, 31843)
    assert P.camera_params.shape == (49, 9) and P.point_params.shape == (7776, 3)
    assert P.obs_xy.shape == (31843, 2) and P.obs_camera.dtype == np.int32
    cost0, res = P.evaluate()
    assert cost0 == pytest.approx(0.5 * np.sum(res ** 2), rel=1e-12)
    seen = []
    s = sbm.ba_solve(P, max_iterations=4, callback=seen.append)
    assert isinstance(s, sbm.SolverSummary)
    assert s.iterations == 4 == len(seen) == len(s.iteration_reports)
    assert s.stop_reason == "iteration limit" and not s.converged
    assert s.initial_cost == pytest.approx(cost0, rel=1e-12)
    assert s.final_cost < 0.1 * s.initial_cost
    assert s.final_cost == pytest.approx(P.evaluate()[0], rel=1e-12)   # parameters updated
    assert s.linear_solver == "dense_cholesky"
    assert isinstance(seen[0], sbm.IterationReport) and seen[0].iteration == 1
    assert seen[-1].cost == pytest.approx(s.final_cost)


def test_ba_generated_converges_and_linear_solvers_agree():
    costs = {}
    for ls in ("dense_cholesky", "sparse_cholesky", "pcg"):
        P = sbm.BALProblem.generate(12, 300, 4, seed=7)
        s = P.solve(sbm.SolverOptions(linear_solver=ls, max_iterations=50))
        assert s.converged, s
        assert s.linear_solver == ls
        costs[ls] = s.final_cost
    ref = costs["dense_cholesky"]
    for v in costs.values():
        assert v == pytest.approx(ref, rel=1e-6)
    # the same seed, the same problem
    a = sbm.BALProblem.generate(5, 20, 3, seed=3).camera_params
    b = sbm.BALProblem.generate(5, 20, 3, seed=3).camera_params
    np.testing.assert_array_equal(a, b)


def test_ba_from_arrays_round_trip(tmp_path):
    P = sbm.BALProblem.generate(6, 40, 3, seed=11)
    Q = sbm.BALProblem.from_arrays(P.camera_params, P.point_params, P.obs_camera, P.obs_point,
                                   P.obs_xy)
    for name in ("camera_params", "point_params", "obs_camera", "obs_point", "obs_xy"):
        np.testing.assert_array_equal(getattr(P, name), getattr(Q, name))
    assert P.evaluate()[0] == Q.evaluate()[0]
    P.write(tmp_path / "p.bal.bz2")
    R = sbm.BALProblem.read(tmp_path / "p.bal.bz2")
    np.testing.assert_array_equal(R.point_params, P.point_params)
    # writing into the views changes the problem
    Q.point_params[:] += 1.0
    assert Q.evaluate()[0] != P.evaluate()[0]


def test_ba_normal_equations():
    P = sbm.BALProblem.generate(5, 30, 3, seed=2)
    ne = P.normal_equations()
    U, V, W = ne["U"], ne["V"], ne["W"]
    assert U.block_shape == (9, 9) and V.block_shape == (3, 3) and W.block_shape == (9, 3)
    assert ne["cost"] == pytest.approx(P.evaluate()[0], rel=1e-12)
    # the reduced camera system S = U - W V^-1 W^T through the Python API
    Y = sbm.bdiag_scale(sbm.bdiag_inverse(V), W, side="right")
    S = sbm.gemm(Y, W, op_b="T", U=U, alpha=-1.0)
    Wd, Vd, Ud = W.to_dense(), V.to_dense(), U.to_dense()
    np.testing.assert_allclose(S.to_dense(), Ud - Wd @ np.linalg.solve(Vd, Wd.T),
                               rtol=1e-8, atol=1e-6 * np.abs(Ud).max())


@pytest.mark.parametrize("matrix_free", [False, True])
def test_schur_plan_against_dense(matrix_free):
    P = sbm.BALProblem.generate(6, 40, 3, seed=5)
    ne = P.normal_equations(lam=1e-3)
    U, V, W, gc, gp = ne["U"], ne["V"], ne["W"], ne["gc"], ne["gp"]
    Ud, Vd, Wd = U.to_dense(), V.to_dense(), W.to_dense()
    S_ref = Ud - Wd @ np.linalg.solve(Vd, Wd.T)
    plan = sbm.SchurPlan(U, V, W, matrix_free=matrix_free)
    rhs = plan.execute(gc, gp)
    scale = np.abs(S_ref).max()
    np.testing.assert_allclose(rhs, gc - Wd @ np.linalg.solve(Vd, gp), rtol=1e-9,
                               atol=1e-9 * np.abs(gc).max())
    if matrix_free:
        assert plan.S is None
    else:
        upper = np.kron(np.triu(np.ones((6, 6))), np.ones((9, 9)))
        np.testing.assert_allclose(plan.S.to_dense(), S_ref * upper, rtol=0, atol=1e-9 * scale)
    x = np.random.default_rng(0).standard_normal(54)
    np.testing.assert_allclose(plan.multiply(x), S_ref @ x, rtol=0,
                               atol=1e-9 * scale * np.abs(x).sum())
    dc = np.linalg.lstsq(S_ref, rhs, rcond=None)[0]
    dp = plan.back_substitute(gp, dc)
    np.testing.assert_allclose(dp, np.linalg.solve(Vd, gp - Wd.T @ dc), rtol=1e-8, atol=1e-10)
    V_bad = V.copy()
    V_bad.values[:] = -V_bad.values
    with pytest.raises(sbm.NotPositiveDefiniteError, match="SBM_ERR_NOT_POSITIVE_DEFINITE"):
        plan.execute(gc, gp, V=V_bad)


def test_ba_errors(tmp_path):
    with pytest.raises(sbm.IoError) as e:
        sbm.BALProblem.read(tmp_path / "none.txt")
    assert "none.txt" in e.value.message and isinstance(e.value, OSError)
    bad = tmp_path / "bad.txt"
    bad.write_text("1 1 1\n0 3 1.0 2.0\n")
    with pytest.raises(sbm.ParseError) as e:
        sbm.BALProblem.read(bad)
    assert "bad.txt" in e.value.message and e.value.status_name == "SBM_ERR_PARSE"
    with pytest.raises(sbm.InvalidArgumentError, match="SBM_ERR_INVALID_ARGUMENT"):
        sbm.BALProblem.generate(1, 10, 2)
    with pytest.raises(ValueError, match="linear_solver must be one of"):
        sbm.ba_solve(sbm.BALProblem.generate(3, 5, 2), linear_solver="qr")

    def stop(report):
        raise KeyboardInterrupt("from the callback")
    with pytest.raises(KeyboardInterrupt, match="from the callback"):
        sbm.BALProblem.generate(3, 20, 2).solve(callback=stop)


def test_slam_from_g2o_file(tmp_path):
    G = sbm.PoseGraph.read(data_file("g2o", "intel.g2o.bz2"))
    assert (G.dim, G.pose_size, G.error_dim) == (2, 3, 3)
    assert G.poses.shape == (G.vertices, 3) and G.edge_information.shape == (G.edges, 3, 3)
    chi0 = G.chi2()
    s = sbm.slam_solve(G)
    assert s.converged and s.stop_reason in ("function tolerance", "gradient tolerance",
                                             "parameter tolerance")
    assert s.initial_cost == pytest.approx(0.5 * chi0, rel=1e-10)
    assert s.final_cost == pytest.approx(0.5 * G.chi2(), rel=1e-8)
    assert s.final_cost < 0.1 * s.initial_cost
    G.write(tmp_path / "out.g2o")
    H = sbm.PoseGraph.read(tmp_path / "out.g2o")
    np.testing.assert_array_equal(H.poses, G.poses)


def test_slam_3d_and_methods():
    costs = []
    for method, ls in (("levenberg_marquardt", "sparse_cholesky"),
                       ("gauss_newton", "dense_cholesky"), ("levenberg_marquardt", "pcg")):
        G = sbm.PoseGraph.read(data_file("g2o", "smallGrid3D.g2o.bz2"))
        assert G.dim == 3 and G.pose_size == 7
        s = G.solve(method=method, linear_solver=ls, max_iterations=100)
        costs.append(s.final_cost)
        assert s.final_cost < s.initial_cost
    assert costs[1] == pytest.approx(costs[0], rel=1e-5)


def test_slam_from_arrays():
    # a square of four 2D poses with a loop closure; the start is perturbed
    truth = np.array([[0, 0, 0], [1, 0, np.pi / 2], [1, 1, np.pi], [0, 1, -np.pi / 2]], float)
    edges = [(0, 1), (1, 2), (2, 3), (3, 0)]
    Z = np.array([[1, 0, np.pi / 2]] * 4, float)
    info = np.repeat(np.eye(3)[None] * 10, 4, axis=0)
    start = truth + np.array([[0, 0, 0], [0.1, -0.1, 0.05], [0.2, 0.1, -0.1], [-0.1, 0.1, 0.1]])
    G = sbm.PoseGraph.from_arrays(start, [e[0] for e in edges], [e[1] for e in edges], Z, info,
                                  fixed=[0])
    assert G.is_fixed.tolist() == [True, False, False, False]
    s = G.solve()
    assert s.converged and s.final_cost < 1e-12
    np.testing.assert_allclose(G.poses[:, :2], truth[:, :2], atol=1e-6)


def test_slam_errors(tmp_path):
    with pytest.raises(sbm.ParseError, match="not positive semidefinite"):
        sbm.PoseGraph.read(data_file("g2o", "indefinite2d.g2o"))
    G = sbm.PoseGraph.read(data_file("g2o", "indefinite2d.g2o"), repair_information=True)
    assert G.repaired_information > 0
    bad = tmp_path / "bad.g2o"
    bad.write_text("VERTEX_SE2 0 0 0\n")
    with pytest.raises(sbm.ParseError) as e:
        sbm.PoseGraph.read(bad)
    assert "bad.g2o:1" in e.value.message


def test_solver_options_defaults_are_the_libraries():
    d = sbm.SolverOptions.defaults()
    assert d["max_iterations"] == 200 and d["linear_solver"] == "auto"
    o = sbm.SolverOptions()._to_c()
    assert o.max_iterations == 200 and o.function_tolerance == d["function_tolerance"]
