# SPDX-License-Identifier: BSD-3-Clause
"""Pose-graph SLAM (g2o graphs): graphs from files or arrays, their solve and covariances."""
import numpy as np

from ._core import ffi, lib, _ctx, _host_view, _host_ptr
from ._matrix import CBC
from ._solve import _path, _run_solver, _options
from . import _build

__all__ = ["PoseGraph", "slam_solve"]


# ---- SLAM -------------------------------------------------------------------------------------------

class PoseGraph:
    """A g2o pose graph (sbm_g2o_graph, host memory), 2D (SE2: x y theta) or 3D (SE3: x y z qx qy
    qz qw). ``poses`` (vertices, pose_size) is a writable view of the estimate."""

    def __init__(self, *args, **kwargs):
        raise TypeError("sbm.PoseGraph: use PoseGraph.read or from_arrays")

    @classmethod
    def _wrap(cls, ctx, h):
        self = object.__new__(cls)
        self.ctx, self._h = ctx, h
        return self

    def __del__(self):
        try:
            if getattr(self, "_h", None) is not None:
                lib.sbm_g2o_destroy(self._h)
                self._h = None
        except Exception:
            pass

    @classmethod
    def read(cls, path, repair_information=False, *, ctx=None):
        """Read a g2o file (plain, gzip or bzip2). repair_information=True replaces an indefinite
        information matrix by the nearest positive semidefinite one (else the read fails)."""
        ctx = _ctx(ctx)
        o = ffi.new("sbm_g2o_read_options *", lib.sbm_g2o_read_default_options())
        o.information = lib.SBM_G2O_INFORMATION_REPAIR if repair_information else \
            lib.SBM_G2O_INFORMATION_REFUSE
        p = ffi.new("sbm_g2o_graph **")
        ctx.check(lib.sbm_g2o_read_ex(ctx._h, _path(path), o, p))
        return cls._wrap(ctx, p[0])

    @classmethod
    def from_arrays(cls, poses, edge_from, edge_to, measurements, information=None, fixed=(),
                    vertex_ids=None, *, prior_vertex=None, prior_measurement=None,
                    prior_information=None, gauge="auto", ctx=None):
        """A graph from arrays, no file (sbm_g2o_graph_create: every value checked, copied).
        poses: (vertices, 3) SE2 (x y theta); SE3 as (vertices, 7) (x y z qx qy qz qw), or with
        rotation matrices (vertices, 12) (x y z, then R row by row) or (vertices, 3, 4) /
        (vertices, 4, 4) transforms [R t]. Edges from vertex index edge_from[k] to edge_to[k]
        with measurements (the relative pose Xi^-1 Xj, in the poses' form) and information
        matrices (edges, d, d) (d = 3 or 6, symmetric positive semidefinite; None: identity).
        fixed: vertex indices (or a boolean mask) held fixed; vertex_ids: the ids messages and
        write() use (default 0, 1, ...). Priors: unary factors on prior_vertex[k] with the
        expected pose prior_measurement[k] (the poses' form) and prior_information (priors, d, d)
        (None: identity). gauge: what a connected component without a fixed vertex or prior
        gets: 'auto' holds its first vertex fixed (as read() does), 'refuse' raises
        InvalidArgumentError naming the component's first vertex."""
        ctx = _ctx(ctx)
        return cls._wrap(ctx, _build.g2o_create(ctx, poses, edge_from, edge_to, measurements,
                                                information, fixed, vertex_ids, prior_vertex,
                                                prior_measurement, prior_information, gauge))

    def set_fixed(self, vertex, fixed=True):
        """Hold vertex (0-based index) fixed or free it (sbm_g2o_set_fixed). Freeing the only
        fixed vertex of a component without a prior leaves it without a gauge: solve() and
        covariance() then refuse the graph naming the component."""
        self.ctx.check(lib.sbm_g2o_set_fixed(self.ctx._h, self._h, int(vertex), int(bool(fixed))))

    def covariance(self, loss=None, loss_scale=1.0, *, ctx=None):
        """Marginal covariances of the free poses at the current poses (sbm_slam_covariance,
        typically after solve()): (cov, vertices), cov of shape (free, d, d) the diagonal blocks
        of Lambda^-1 in the tangent space of the pose increments (SE2: x, y, theta; SE3:
        translation then rotation), vertices the (free,) indices of the vertices they belong to
        (fixed vertices have none: their covariance is zero). loss: None / 'none', or 'huber' /
        'cauchy' with loss_scale (the loss-corrected Lambda of the solve). Raises
        NotPositiveDefiniteError naming the vertex a singular Lambda leaves undetermined."""
        ctx = self.ctx if ctx is None else _ctx(ctx)
        return _build.slam_covariance(ctx, self, loss, loss_scale)

    def normal_equations(self, *, ctx=None):
        """The Gauss-Newton system at the current poses (sbm_slam_system): a dict with Lambda
        (J^T Omega J over the free vertices, upper block triangle, a CBC copy in ctx), b
        (J^T Omega e, numpy), chi2 and free_vertices."""
        ctx = self.ctx if ctx is None else _ctx(ctx)
        p = ffi.new("sbm_slam_system **")
        ctx.check(lib.sbm_slam_system_create(ctx._h, self._h, p))
        sysh = ffi.gc(p[0], lib.sbm_slam_system_destroy)
        ctx.check(lib.sbm_slam_linearize(ctx._h, sysh, self._h))
        i = lib.sbm_slam_system_get_info(sysh)
        q = ffi.new("sbm_cbc **")
        ctx.check(lib.sbm_cbc_copy(ctx._h, i.Lambda, q))
        b = np.zeros(int(i.free_vertices) * int(i.error_dim))
        ctx.check(lib.sbm_slam_system_get_b(ctx._h, sysh, _host_ptr(b)))
        ctx._done()
        return {"Lambda": CBC._wrap_handle(ctx, q[0]), "b": b, "chi2": float(i.chi2),
                "free_vertices": int(i.free_vertices)}

    def write(self, path):
        """Write in g2o format (the poses as they are now)."""
        self.ctx.check(lib.sbm_g2o_write(self.ctx._h, _path(path), self._h))

    @property
    def _info(self):
        return lib.sbm_g2o_get_info(self._h)

    @property
    def dim(self):
        return int(self._info.dim)

    @property
    def pose_size(self):
        return int(self._info.pose_size)

    @property
    def error_dim(self):
        return int(self._info.error_dim)

    @property
    def vertices(self):
        return int(self._info.vertices)

    @property
    def edges(self):
        return int(self._info.edges)

    @property
    def repaired_information(self):
        return int(self._info.repaired_information)

    @property
    def poses(self):
        i = self._info
        return _host_view(self, i.poses, (int(i.vertices), int(i.pose_size)), np.float64)

    @property
    def vertex_id(self):
        i = self._info
        return _host_view(self, i.vertex_id, (int(i.vertices),), np.int32, True)

    @property
    def priors(self):
        return int(self._info.priors)

    @property
    def is_fixed(self):
        i = self._info
        return _host_view(self, i.is_fixed, (int(i.vertices),), np.uint8, True).astype(bool)

    @property
    def edge_from(self):
        i = self._info
        return _host_view(self, i.edge_from, (int(i.edges),), np.int32, True)

    @property
    def edge_to(self):
        i = self._info
        return _host_view(self, i.edge_to, (int(i.edges),), np.int32, True)

    @property
    def edge_measurement(self):
        i = self._info
        return _host_view(self, i.edge_measurement, (int(i.edges), int(i.pose_size)),
                          np.float64, True)

    @property
    def edge_information(self):
        """(edges, d, d), symmetric (stored column-major: the same)."""
        i = self._info
        d = int(i.error_dim)
        return _host_view(self, i.edge_information, (int(i.edges), d, d), np.float64, True)

    def chi2(self):
        """sum e^T Omega e at the current poses (g2o's number; the solvers' cost is half)."""
        c = ffi.new("double *")
        self.ctx.check(lib.sbm_g2o_chi2(self.ctx._h, self._h, c))
        return float(c[0])

    def __repr__(self):
        return "sbm.PoseGraph(SE%d, vertices=%d, edges=%d)" % (self.dim, self.vertices, self.edges)

    def solve(self, options=None, *, ctx=None, **kwargs):
        return slam_solve(self, options, ctx=ctx, **kwargs)


def slam_solve(graph, options=None, *, ctx=None, **kwargs):
    """Optimise a PoseGraph's poses in place (sbm_slam_solve) on ctx's backend (default: the
    graph's context). options: a SolverOptions, or its fields as keyword arguments. Returns a
    SolverSummary."""
    ctx = graph.ctx if ctx is None else _ctx(ctx)
    return _run_solver(ctx, lib.sbm_slam_solve, graph._h, _options(options, kwargs))
