# SPDX-License-Identifier: BSD-3-Clause
"""BA problems and pose graphs from arrays (sbm_bal_problem_create, sbm_g2o_graph_create), their
constant blocks and priors, and the marginal covariances of a pose graph (sbm_slam_covariance).
The classes of _solve.py call these; the C functions check every value and copy the arrays."""
import numpy as np

from ._core import ffi, lib, _host_ptr

_GAUGE = {"auto": lib.SBM_GAUGE_AUTO, "refuse": lib.SBM_GAUGE_REFUSE}


def _array(a, dtype, shape, what, where):
    """a as a C-contiguous array of dtype reshaped to shape (-1 allowed), or ValueError naming
    the argument."""
    arr = np.asarray(a)
    if dtype == np.int32 and arr.size and arr.dtype.kind not in "iub":
        raise TypeError("%s: %s must hold integers, got %s" % (where, what, arr.dtype))
    if dtype == np.int32 and arr.size and (arr.min() < -2**31 or arr.max() >= 2**31):
        raise ValueError("%s: %s holds a value outside int32" % (where, what))
    try:
        return np.ascontiguousarray(arr.astype(dtype, copy=False).reshape(shape))
    except ValueError:
        raise ValueError("%s: %s has shape %s, expected %s" % (where, what, arr.shape, shape)) \
            from None


def _indices(values, count, what, where):
    """A list of 0-based indices (or a boolean mask of length count) as int64 indices."""
    arr = np.asarray(values)
    if arr.dtype == bool:
        if arr.shape != (count,):
            raise ValueError("%s: the mask %s has shape %s, expected (%d,)"
                             % (where, what, arr.shape, count))
        return np.nonzero(arr)[0]
    return _array(arr, np.int64, (-1,), what, where) if arr.size else np.zeros(0, np.int64)


def bal_create(ctx, camera_params, point_params, obs_camera, obs_point, obs_xy):
    """The sbm_bal_problem handle of the arrays (copied by C)."""
    where = "sbm.BALProblem.from_arrays"
    cam = _array(camera_params, np.float64, (-1, 9), "camera_params", where)
    pts = _array(point_params, np.float64, (-1, 3), "point_params", where)
    oc = _array(obs_camera, np.int32, (-1,), "obs_camera", where)
    op = _array(obs_point, np.int32, (-1,), "obs_point", where)
    xy = _array(obs_xy, np.float64, (-1, 2), "obs_xy", where)
    if not (oc.size == op.size == xy.shape[0]):
        raise ValueError("%s: %d cameras, %d points and %d xy rows for the observations"
                         % (where, oc.size, op.size, xy.shape[0]))
    d = ffi.new("sbm_bal_problem_desc *")
    d.cameras, d.points, d.observations = cam.shape[0], pts.shape[0], oc.size
    d.obs_camera, d.obs_point, d.obs_xy = _host_ptr(oc), _host_ptr(op), _host_ptr(xy.reshape(-1))
    d.camera_params, d.point_params = _host_ptr(cam.reshape(-1)), _host_ptr(pts.reshape(-1))
    p = ffi.new("sbm_bal_problem **")
    ctx.check(lib.sbm_bal_problem_create(ctx._h, d, p))
    return p[0]


def bal_camera_prior(ctx, h, camera, mean, information):
    """sbm_bal_set_camera_prior; information None removes the prior."""
    where = "sbm.BALProblem.set_camera_prior"
    if information is None:
        ctx.check(lib.sbm_bal_set_camera_prior(ctx._h, h, int(camera), ffi.NULL, ffi.NULL))
        return
    m = _array(mean, np.float64, (9,), "mean", where)
    om = _array(information, np.float64, (9, 9), "information", where)
    om = np.ascontiguousarray(om.T)  # column-major
    ctx.check(lib.sbm_bal_set_camera_prior(ctx._h, h, int(camera), _host_ptr(m),
                                           _host_ptr(om.reshape(-1))))


def _rotation_format(poses, where):
    """(format, values per pose, 2D?) from the poses' shape: (V, 3) SE2, (V, 7) SE3 with
    quaternions, (V, 12) SE3 with rotation matrices (x y z, R row by row), (V, 3, 4) or (V, 4, 4)
    SE3 transforms [R t]."""
    P = np.asarray(poses)
    if P.ndim == 2 and P.shape[1] in (3, 7):
        return lib.SBM_POSE_QUATERNION, P.shape[1]
    if (P.ndim == 2 and P.shape[1] == 12) or (P.ndim == 3 and P.shape[1:] in ((3, 4), (4, 4))):
        return lib.SBM_POSE_MATRIX, 12
    raise ValueError("%s: poses must be (vertices, 3) (SE2), (vertices, 7) (SE3, x y z qx qy qz "
                     "qw), (vertices, 12) (SE3, x y z and R row by row) or (vertices, 3, 4) / "
                     "(vertices, 4, 4) transforms, got shape %s" % (where, P.shape))


def _poses(values, size, what, where):
    """values as (n, size) doubles; transforms (n, 3, 4) / (n, 4, 4) become x y z, R by rows."""
    A = np.asarray(values, np.float64)
    if size == 12 and A.ndim == 3 and A.shape[1:] in ((3, 4), (4, 4)):
        A = np.concatenate([A[:, :3, 3], A[:, :3, :3].reshape(-1, 9)], axis=1)
    if A.size == 0:
        return np.zeros((0, size))
    if A.ndim != 2 or A.shape[1] != size:
        raise ValueError("%s: %s has shape %s, expected (n, %d) as the poses%s"
                         % (where, what, A.shape, size,
                            " (or (n, 3, 4) / (n, 4, 4) transforms)" if size == 12 else ""))
    return np.ascontiguousarray(A)


def _information(values, n, d, what, where):
    """None (identity: NULL) or (n, d, d) symmetric matrices, column-major for C."""
    if values is None:
        return None
    Om = np.asarray(values, np.float64)
    if Om.shape != (n, d, d) and not (n == 0 and Om.size == 0):
        raise ValueError("%s: %s has shape %s, expected (%d, %d, %d)"
                         % (where, what, Om.shape, n, d, d))
    return np.ascontiguousarray(Om.reshape(n, d, d).transpose(0, 2, 1))


def g2o_create(ctx, poses, edge_from, edge_to, measurements, information, fixed, vertex_ids,
               prior_vertex, prior_measurement, prior_information, gauge):
    """The sbm_g2o_graph handle of the arrays (copied by C)."""
    where = "sbm.PoseGraph.from_arrays"
    fmt, size = _rotation_format(poses, where)
    P = _poses(poses, size, "poses", where)
    nv = P.shape[0]
    d = 3 if size == 3 else 6
    ef = _array(edge_from, np.int32, (-1,), "edge_from", where)
    et = _array(edge_to, np.int32, (-1,), "edge_to", where)
    Z = _poses(measurements, size, "measurements", where)
    if not (ef.size == et.size == Z.shape[0]):
        raise ValueError("%s: edge_from, edge_to and measurements disagree on the number of "
                         "edges (%d, %d, %d)" % (where, ef.size, et.size, Z.shape[0]))
    Om = _information(information, ef.size, d, "information", where)
    if gauge not in _GAUGE:
        raise ValueError("%s: gauge must be 'auto' or 'refuse', not %r" % (where, gauge))
    fix = np.zeros(nv, np.uint8)
    fi = _indices(fixed, nv, "fixed", where)
    if fi.size and (fi.min() < 0 or fi.max() >= nv):
        bad = fi[(fi < 0) | (fi >= nv)][0]
        raise ValueError("%s: fixed vertex %d is not a vertex: 0 <= index < %d" % (where, bad, nv))
    fix[fi] = 1
    ids = None if vertex_ids is None else _array(vertex_ids, np.int32, (nv,), "vertex_ids", where)
    pv = _array(prior_vertex, np.int32, (-1,), "prior_vertex", where) if prior_vertex is not None \
        else np.zeros(0, np.int32)
    Zp = _poses(prior_measurement if prior_measurement is not None else np.zeros((0, size)), size,
                "prior_measurement", where)
    if Zp.shape[0] != pv.size:
        raise ValueError("%s: %d prior vertices and %d prior measurements"
                         % (where, pv.size, Zp.shape[0]))
    Op = _information(prior_information, pv.size, d, "prior_information", where)
    desc = ffi.new("sbm_g2o_graph_desc *")
    desc.dim, desc.format, desc.gauge = (2 if size == 3 else 3), fmt, _GAUGE[gauge]
    desc.vertices, desc.poses = nv, _host_ptr(P.reshape(-1))
    desc.vertex_id = ffi.NULL if ids is None else _host_ptr(ids)
    desc.fixed = _host_ptr(fix)
    desc.edges, desc.edge_from, desc.edge_to = ef.size, _host_ptr(ef), _host_ptr(et)
    desc.edge_measurement = _host_ptr(Z.reshape(-1))
    desc.edge_information = ffi.NULL if Om is None else _host_ptr(Om.reshape(-1))
    desc.priors, desc.prior_vertex = pv.size, _host_ptr(pv)
    desc.prior_measurement = _host_ptr(Zp.reshape(-1))
    desc.prior_information = ffi.NULL if Op is None else _host_ptr(Op.reshape(-1))
    p = ffi.new("sbm_g2o_graph **")
    ctx.check(lib.sbm_g2o_graph_create(ctx._h, desc, p))
    return p[0]


def slam_covariance(ctx, graph, loss, loss_scale):
    """(cov (free, d, d), vertex indices (free,)) of sbm_slam_covariance."""
    from ._solve import _LOSS
    i = lib.sbm_g2o_get_info(graph._h)
    d, nv = int(i.error_dim), int(i.vertices)
    free = np.nonzero(graph.is_fixed == 0)[0] if nv else np.zeros(0, np.int64)
    if loss is None:
        lp = ffi.NULL
    else:
        if loss not in _LOSS:
            raise ValueError("sbm.PoseGraph.covariance: loss must be one of %s, not %r"
                             % (", ".join(_LOSS), loss))
        lp = ffi.new("sbm_loss *")
        lp.type, lp.scale = _LOSS[loss], float(loss_scale)
    out = np.zeros(free.size * d * d)
    ctx.check(lib.sbm_slam_covariance(ctx._h, graph._h, lp,
                                      _host_ptr(out) if out.size else ffi.NULL))
    ctx._done()
    # column-major blocks; transposed so that cov[k] is the block as numpy reads it
    return np.ascontiguousarray(out.reshape(-1, d, d).transpose(0, 2, 1)), free.astype(np.int64)


def chol_inverse_diagonal(chol):
    """(nb, b, b) diagonal blocks of A^-1 (sbm_chol_inverse_diagonal)."""
    i = lib.sbm_chol_get_info(chol._h)
    nb, b = int(i.block_columns), int(i.block_size)
    out = np.zeros(nb * b * b)
    chol.ctx.check(lib.sbm_chol_inverse_diagonal(chol.ctx._h, chol._h, _host_ptr(out)))
    return np.ascontiguousarray(out.reshape(nb, b, b).transpose(0, 2, 1))


def chol_inverse_blocks(chol, rows, cols):
    """(npairs, b, b) blocks (rows[t], cols[t]) of A^-1 (sbm_chol_inverse_blocks)."""
    where = "sbm.Cholesky.inverse_blocks"
    r = _array(rows, np.int64, (-1,), "rows", where)
    c = _array(cols, np.int64, (-1,), "cols", where)
    if r.size != c.size:
        raise ValueError("%s: %d rows and %d cols" % (where, r.size, c.size))
    b = int(lib.sbm_chol_get_info(chol._h).block_size)
    out = np.zeros(r.size * b * b)
    chol.ctx.check(lib.sbm_chol_inverse_blocks(chol.ctx._h, chol._h, r.size, _host_ptr(r),
                                               _host_ptr(c), _host_ptr(out)))
    return np.ascontiguousarray(out.reshape(-1, b, b).transpose(0, 2, 1))
