# SPDX-License-Identifier: BSD-3-Clause
"""Problems and graphs from arrays (sbm_bal_problem_create, sbm_g2o_graph_create) against the
file readers, constant blocks, priors, the gauge, marginal covariances and the Cholesky's
selected inverse against numpy, the PCG forcing options, and the error paths."""
import numpy as np
import pytest

import sbm
from conftest import data_file
from test_solve import spd_upper


def quat_to_matrix(q):
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def bal_copy(P, **kw):
    return sbm.BALProblem.from_arrays(P.camera_params, P.point_params, P.obs_camera,
                                      P.obs_point, P.obs_xy, **kw)


def graph_copy(G, **kw):
    return sbm.PoseGraph.from_arrays(G.poses, G.edge_from, G.edge_to, G.edge_measurement,
                                     G.edge_information, fixed=G.is_fixed,
                                     vertex_ids=G.vertex_id, **kw)


def test_bal_from_arrays_solves_as_the_file():
    P = sbm.BALProblem.read(data_file("bal", "problem-21-11315-pre.txt.bz2"))
    Q = bal_copy(P)
    for name in ("camera_params", "point_params", "obs_camera", "obs_point", "obs_xy"):
        np.testing.assert_array_equal(getattr(P, name), getattr(Q, name))
    a, b = P.solve(max_iterations=5), Q.solve(max_iterations=5)
    assert a.final_cost == b.final_cost and a.iterations == b.iterations
    np.testing.assert_array_equal(P.camera_params, Q.camera_params)
    np.testing.assert_array_equal(P.point_params, Q.point_params)


@pytest.mark.parametrize("name", ["intel.g2o.bz2", "smallGrid3D.g2o.bz2"])
def test_graph_from_arrays_solves_as_the_file(name):
    G = sbm.PoseGraph.read(data_file("g2o", name))
    H = graph_copy(G)
    for a in ("poses", "vertex_id", "is_fixed", "edge_from", "edge_to", "edge_measurement",
              "edge_information"):
        np.testing.assert_array_equal(getattr(G, a), getattr(H, a))
    a, b = G.solve(max_iterations=10), H.solve(max_iterations=10)
    assert a.final_cost == b.final_cost and a.iterations == b.iterations
    np.testing.assert_array_equal(G.poses, H.poses)


def test_graph_rotation_matrices():
    G = sbm.PoseGraph.read(data_file("g2o", "smallGrid3D.g2o.bz2"))

    def as_matrix(A):
        return np.array([np.concatenate([p[:3], quat_to_matrix(p[3:]).reshape(-1)]) for p in A])
    Pm, Zm = as_matrix(G.poses), as_matrix(G.edge_measurement)
    H = sbm.PoseGraph.from_arrays(Pm, G.edge_from, G.edge_to, Zm, G.edge_information,
                                  fixed=G.is_fixed)
    # the same rotations (q and -q are one rotation: the matrix gives one of them)
    sign = np.sign(np.sum(H.poses[:, 3:] * G.poses[:, 3:], axis=1))[:, None]
    np.testing.assert_allclose(H.poses[:, :3], G.poses[:, :3], atol=1e-12)
    np.testing.assert_allclose(sign * H.poses[:, 3:], G.poses[:, 3:], atol=1e-12)
    T = np.zeros((G.vertices, 4, 4))
    T[:, :3, :3] = Pm[:, 3:].reshape(-1, 3, 3)
    T[:, :3, 3], T[:, 3, 3] = Pm[:, :3], 1
    K = sbm.PoseGraph.from_arrays(T, G.edge_from, G.edge_to, Zm, G.edge_information,
                                  fixed=G.is_fixed)
    np.testing.assert_array_equal(K.poses, H.poses)
    assert H.solve(max_iterations=10).final_cost == pytest.approx(
        G.solve(max_iterations=10).final_cost, rel=1e-9)
    bad = Pm.copy()
    bad[1, 3:] *= 1.01
    with pytest.raises(sbm.InvalidArgumentError) as e:
        sbm.PoseGraph.from_arrays(bad, G.edge_from, G.edge_to, Zm, G.edge_information)
    assert "poses" in e.value.message
    with pytest.raises(ValueError, match="measurements has shape"):
        sbm.PoseGraph.from_arrays(Pm, G.edge_from, G.edge_to, G.edge_measurement)


def test_bal_constant_camera_and_point():
    P = sbm.BALProblem.generate(6, 60, 3, seed=4)
    Q = bal_copy(P, constant_cameras=[2], constant_points=np.arange(60) == 5)
    assert Q.camera_constant.tolist() == [False, False, True, False, False, False]
    assert Q.point_constant.sum() == 1 and Q.point_constant[5]
    cam2, pt5 = Q.camera_params[2].copy(), Q.point_params[5].copy()
    s = Q.solve(max_iterations=10)
    assert s.final_cost < s.initial_cost
    np.testing.assert_array_equal(Q.camera_params[2], cam2)
    np.testing.assert_array_equal(Q.point_params[5], pt5)
    assert not np.array_equal(Q.camera_params[1], P.camera_params[1])
    Q.set_camera_constant(2, False)
    assert not Q.camera_constant.any()
    with pytest.raises(sbm.InvalidArgumentError) as e:
        Q.set_camera_constant(6, True)
    assert "6" in e.value.message
    with pytest.raises(sbm.InvalidArgumentError):
        Q.set_point_constant(-1, True)


def test_bal_camera_prior():
    P = sbm.BALProblem.generate(4, 40, 3, seed=8)
    c0 = P.evaluate()[0]
    mean = P.camera_params[1] + 0.5
    info = np.diag(np.arange(1.0, 10.0))
    P.set_camera_prior(1, mean, info)
    assert P.camera_has_prior.tolist() == [False, True, False, False]
    ne = P.normal_equations()
    d = P.camera_params[1] - mean
    assert ne["cost"] == pytest.approx(c0 + 0.5 * d @ info @ d, rel=1e-12)
    # a strong prior holds the camera at its mean
    P.set_camera_prior(1, mean, 1e12 * np.eye(9))
    P.solve(max_iterations=30)
    np.testing.assert_allclose(P.camera_params[1], mean, atol=1e-4)
    P.set_camera_prior(1, None, None)
    assert not P.camera_has_prior.any()
    asym = np.eye(9)
    asym[0, 1] = 1.0
    with pytest.raises(sbm.InvalidArgumentError, match="symmetric"):
        P.set_camera_prior(0, mean, asym)
    with pytest.raises(sbm.InvalidArgumentError, match="positive semidefinite"):
        P.set_camera_prior(0, mean, -np.eye(9))
    with pytest.raises(ValueError, match="information has shape"):
        P.set_camera_prior(0, mean, np.eye(3))


def test_bal_from_arrays_errors():
    P = sbm.BALProblem.generate(3, 10, 2, seed=1)
    oc = P.obs_camera.copy()
    oc[4] = 7
    with pytest.raises(sbm.InvalidArgumentError) as e:
        sbm.BALProblem.from_arrays(P.camera_params, P.point_params, oc, P.obs_point, P.obs_xy)
    assert e.value.status_name == "SBM_ERR_INVALID_ARGUMENT"
    assert "obs_camera[4] = 7" in e.value.message
    xy = P.obs_xy.copy()
    xy[2, 1] = np.nan
    with pytest.raises(sbm.SbmError) as e:
        sbm.BALProblem.from_arrays(P.camera_params, P.point_params, P.obs_camera, P.obs_point, xy)
    assert e.value.status_name == "SBM_ERR_NOT_FINITE" and "obs_xy" in e.value.message
    with pytest.raises(ValueError, match="for the observations"):
        sbm.BALProblem.from_arrays(P.camera_params, P.point_params, P.obs_camera[:-1],
                                   P.obs_point, P.obs_xy)
    with pytest.raises(TypeError, match="obs_point must hold integers"):
        sbm.BALProblem.from_arrays(P.camera_params, P.point_params, P.obs_camera,
                                   P.obs_point.astype(float), P.obs_xy)
    with pytest.raises(ValueError, match="obs_camera holds a value outside int32"):
        sbm.BALProblem.from_arrays(P.camera_params, P.point_params,
                                   P.obs_camera.astype(np.int64) + 2**31, P.obs_point, P.obs_xy)
    with pytest.raises(ValueError, match="camera_params has shape"):
        sbm.BALProblem.from_arrays(np.zeros(10), P.point_params, P.obs_camera, P.obs_point,
                                   P.obs_xy)
    with pytest.raises(ValueError, match="the mask constant_points has shape"):
        sbm.BALProblem.from_arrays(*[getattr(P, a) for a in ("camera_params", "point_params",
                                     "obs_camera", "obs_point", "obs_xy")],
                                   constant_points=np.ones(3, bool))
    # an untouched camera: accepted when built, refused (named) by the solver
    cams = np.vstack([P.camera_params, P.camera_params[:1]])
    Q = sbm.BALProblem.from_arrays(cams, P.point_params, P.obs_camera, P.obs_point, P.obs_xy)
    with pytest.raises(sbm.InvalidArgumentError, match="camera 3"):
        Q.solve(max_iterations=2)
    Q.set_camera_constant(3)
    Q.solve(max_iterations=2)
    E = sbm.BALProblem.from_arrays(np.zeros((0, 9)), np.zeros((0, 3)), [], [], np.zeros((0, 2)))
    assert (E.cameras, E.points, E.observations) == (0, 0, 0)


def square_graph(**kw):
    truth = np.array([[0, 0, 0], [1, 0, np.pi / 2], [1, 1, np.pi], [0, 1, -np.pi / 2]], float)
    Z = np.array([[1, 0, np.pi / 2]] * 4, float)
    start = truth + np.array([[0, 0, 0], [0.1, -0.1, 0.05], [0.2, 0.1, -0.1], [-0.1, 0.1, 0.1]])
    rng = np.random.default_rng(3)
    info = []
    for _ in range(4):
        R = rng.standard_normal((3, 3))
        info.append(R @ R.T + 3 * np.eye(3))
    return sbm.PoseGraph.from_arrays(start, [0, 1, 2, 3], [1, 2, 3, 0], Z, np.array(info), **kw)


def test_gauge_and_priors():
    G = square_graph()
    assert G.is_fixed.tolist() == [True, False, False, False]
    with pytest.raises(sbm.InvalidArgumentError) as e:
        square_graph(gauge="refuse")
    assert e.value.status_name == "SBM_ERR_INVALID_ARGUMENT"
    assert "the connected component of vertex 0 (id 0; 4 vertices) has no fixed vertex and " \
        "no prior" in e.value.message
    assert str(e.value).startswith("SBM_ERR_INVALID_ARGUMENT: ")
    with pytest.raises(ValueError, match="gauge must be"):
        square_graph(gauge="none")
    # a prior is the gauge: nothing fixed, the first pose pulled to the prior's pose
    H = square_graph(gauge="refuse", prior_vertex=[0], prior_measurement=[[0.5, -0.25, 0.1]],
                     prior_information=1e6 * np.eye(3)[None])
    assert H.priors == 1 and not H.is_fixed.any()
    s = H.solve()
    assert s.converged
    np.testing.assert_allclose(H.poses[0], [0.5, -0.25, 0.1], atol=1e-5)
    with pytest.raises(ValueError, match="prior vertices"):
        square_graph(prior_vertex=[0, 1], prior_measurement=[[0, 0, 0]])
    with pytest.raises(sbm.InvalidArgumentError) as e:
        square_graph(prior_vertex=[9], prior_measurement=[[0, 0, 0]])
    assert "prior_vertex[0] = 9 is not a vertex: 0 <= index < 4" in e.value.message


def test_graph_from_arrays_errors():
    P = np.zeros((3, 3))
    with pytest.raises(sbm.InvalidArgumentError) as e:
        sbm.PoseGraph.from_arrays(P, [0, 1], [1, 1], np.zeros((2, 3)))
    assert "edge" in e.value.message
    with pytest.raises(sbm.SbmError) as e:
        sbm.PoseGraph.from_arrays(P, [0, 1], [1, 2], [[np.inf, 0, 0], [0, 0, 0]])
    assert e.value.status_name == "SBM_ERR_NOT_FINITE"
    with pytest.raises(sbm.InvalidArgumentError, match="positive semidefinite"):
        sbm.PoseGraph.from_arrays(P, [0, 1], [1, 2], np.zeros((2, 3)),
                                  np.array([np.eye(3), -np.eye(3)]))
    with pytest.raises(ValueError, match="poses must be"):
        sbm.PoseGraph.from_arrays(np.zeros((3, 5)), [0], [1], np.zeros((1, 5)))
    with pytest.raises(ValueError, match="fixed vertex 5"):
        sbm.PoseGraph.from_arrays(P, [0, 1], [1, 2], np.zeros((2, 3)), fixed=[5])


def dense_upper_to_full(L):
    """The symmetric matrix of an upper block triangle (full diagonal blocks)."""
    U, b = L.to_dense(), L.block_shape[0]
    strict = np.kron(np.triu(np.ones((L.nbr, L.nbc)), 1), np.ones((b, b)))
    return U + (U * strict).T


@pytest.mark.parametrize("loss", [None, "huber"])
def test_covariance_against_numpy(loss):
    G = square_graph()
    G.solve(max_iterations=3)
    G.poses[1, 0] += 0.3  # off the optimum: the loss correction matters
    cov, verts = G.covariance(loss=loss, loss_scale=0.5)
    assert verts.tolist() == [1, 2, 3] and cov.shape == (3, 3, 3)
    ne = G.normal_equations()
    if loss is None:
        full = np.linalg.inv(dense_upper_to_full(ne["Lambda"]))
        for k in range(3):
            np.testing.assert_allclose(cov[k], full[3 * k:3 * k + 3, 3 * k:3 * k + 3],
                                       rtol=1e-10, atol=1e-14)
    else:
        # Huber with a scale far above every error is no loss; with 0.5 it changes Lambda
        big = G.covariance(loss="huber", loss_scale=1e6)[0]
        np.testing.assert_allclose(big, G.covariance()[0], rtol=1e-12, atol=1e-15)
        assert np.abs(cov - big).max() > 1e-3
        with pytest.raises(sbm.InvalidArgumentError) as e:
            G.covariance(loss="huber", loss_scale=-1)
        assert "loss.scale = -1 must be finite and > 0" in e.value.message
    np.testing.assert_allclose(cov, cov.transpose(0, 2, 1), atol=1e-14)
    assert all(np.linalg.eigvalsh(c).min() > 0 for c in cov)


def test_covariance_3d_file_and_errors():
    G = sbm.PoseGraph.read(data_file("g2o", "tinyGrid3D.g2o.bz2"))
    cov, verts = G.covariance()
    full = np.linalg.inv(dense_upper_to_full(G.normal_equations()["Lambda"]))
    assert cov.shape == (verts.size, 6, 6) and verts.size == G.vertices - G.is_fixed.sum()
    for k in range(verts.size):
        np.testing.assert_allclose(cov[k], full[6 * k:6 * k + 6, 6 * k:6 * k + 6], rtol=1e-8,
                                   atol=1e-12 * np.abs(full).max())
    with pytest.raises(ValueError, match="loss must be"):
        G.covariance(loss="l1")
    # every vertex fixed: no blocks
    F = square_graph(fixed=[0, 1, 2, 3])
    cov, verts = F.covariance()
    assert cov.shape == (0, 3, 3) and verts.size == 0
    # a direction left free: an information matrix without the rotation row
    info = np.repeat(np.diag([1.0, 1.0, 0.0])[None], 2, axis=0)
    S = sbm.PoseGraph.from_arrays(np.zeros((3, 3)), [0, 1], [1, 2], np.zeros((2, 3)), info)
    with pytest.raises(sbm.NotPositiveDefiniteError) as e:
        S.covariance()
    assert e.value.status_name == "SBM_ERR_NOT_POSITIVE_DEFINITE"
    assert "not positive definite at vertex 1 (free vertex 0)" in e.value.message


@pytest.mark.parametrize("b", [1, 3, 6])
def test_cholesky_inverse(rng, b):
    A, full = spd_upper(rng, 10, b)
    ch = sbm.Cholesky(A)
    inv = np.linalg.inv(full)
    D = ch.inverse_diagonal()
    assert D.shape == (10, b, b)
    for i in range(10):
        np.testing.assert_allclose(D[i], inv[i * b:(i + 1) * b, i * b:(i + 1) * b], rtol=1e-9,
                                   atol=1e-13)
    brow, bcol = np.nonzero(np.abs(full[::b, ::b]) > 0)
    X = ch.inverse_blocks(brow, bcol)
    for t, (i, j) in enumerate(zip(brow, bcol)):
        assert ch.inverse_in_pattern(i, j)
        np.testing.assert_allclose(X[t], inv[i * b:(i + 1) * b, j * b:(j + 1) * b], rtol=1e-9,
                                   atol=1e-13)
    assert ch.inverse_blocks([], []).shape == (0, b, b)
    ch.factor(damping="identity", lam=2.0)
    np.testing.assert_allclose(ch.inverse_diagonal()[0],
                               np.linalg.inv(full + 2 * np.eye(10 * b))[:b, :b], rtol=1e-9)
    with pytest.raises(sbm.SbmError) as e:
        ch.inverse_blocks([0], [10])
    assert e.value.status_name == "SBM_ERR_INDEX_OUT_OF_RANGE"
    assert not ch.inverse_in_pattern(0, 10)
    with pytest.raises(ValueError, match="rows and"):
        ch.inverse_blocks([0, 1], [0])
    A.values[:] = -A.values
    with pytest.raises(sbm.NotPositiveDefiniteError):
        ch.factor()
    with pytest.raises(sbm.InvalidArgumentError):
        ch.inverse_diagonal()


def test_pcg_forcing_options():
    d = sbm.SolverOptions.defaults()
    assert d["pcg_forcing"] == "eisenstat-walker" and 0 < d["pcg_forcing_max"] < 1
    o = sbm.SolverOptions(pcg_forcing="fixed", pcg_forcing_max=0.5)._to_c()
    assert o.pcg_forcing == sbm.lib.SBM_PCG_FORCING_FIXED and o.pcg_forcing_max == 0.5
    with pytest.raises(ValueError, match="pcg_forcing must be one of"):
        sbm.SolverOptions(pcg_forcing="loose")._to_c()
    runs = {}
    for forcing in ("fixed", "eisenstat-walker"):
        P = sbm.BALProblem.generate(8, 80, 3, seed=6)
        runs[forcing] = P.solve(linear_solver="pcg", pcg_forcing=forcing, max_iterations=10)
    assert runs["fixed"].final_cost == pytest.approx(runs["eisenstat-walker"].final_cost,
                                                      rel=1e-3)
    lin = {k: sum(r.linear_iterations for r in v.iteration_reports) for k, v in runs.items()}
    assert lin["eisenstat-walker"] <= lin["fixed"]
