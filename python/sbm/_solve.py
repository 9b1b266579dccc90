# SPDX-License-Identifier: BSD-3-Clause
"""Sparse block Cholesky, the solver options and summaries, bundle adjustment (BAL problems);
pose-graph SLAM is in _slam.py."""
import dataclasses
import os
from typing import Callable, Optional

import numpy as np

from ._core import ffi, lib, constants, DeviceArray, _ctx, _str, _host_view, _host_ptr, \
    _is_device, _device_pointer, _like
from ._matrix import CBC
from . import _build

__all__ = ["Cholesky", "SchurPlan", "SolverOptions", "SolverSummary", "IterationReport",
           "BALProblem", "ba_solve"]


def _path(path):
    return os.fsencode(os.fspath(path))


# ---- sparse block Cholesky -------------------------------------------------------------------------

_DAMPING = {"none": lib.SBM_DAMPING_NONE, "identity": lib.SBM_DAMPING_IDENTITY,
            "diagonal": lib.SBM_DAMPING_DIAGONAL}
_ORDERING = {"amd": lib.SBM_CHOL_ORDERING_AMD, "natural": lib.SBM_CHOL_ORDERING_NATURAL}


class Cholesky:
    """Sparse block Cholesky L L^T = A (+ damping) of a symmetric positive definite CBC matrix
    given by its upper block triangle (square blocks): ``Cholesky(A)`` plans (ordering,
    elimination tree, supernodes) once per pattern, ``factor()`` factors new values,
    ``solve(b)`` solves for one (n,) or many (n, k) right-hand sides."""

    def __init__(self, A, ordering="amd", relax_zeros=0.2, relax_max_columns=64, factor=True):
        if ordering not in _ORDERING:
            raise ValueError("sbm.Cholesky: ordering must be 'amd' or 'natural', not %r" % (ordering,))
        self.ctx, self.A = A.ctx, A
        opts = ffi.new("sbm_chol_options *", lib.sbm_chol_default_options())
        opts.ordering = _ORDERING[ordering]
        opts.relax_zeros = float(relax_zeros)
        opts.relax_max_columns = int(relax_max_columns)
        p = ffi.new("sbm_chol **")
        self.ctx.check(lib.sbm_chol_plan(self.ctx._h, A._h, opts, p))
        self._h = p[0]
        self.n = A.shape[0]
        if factor:
            self.factor()

    def __del__(self):
        try:
            if getattr(self, "_h", None) is not None:
                lib.sbm_chol_destroy(self._h)
                self._h = None
        except Exception:
            pass

    def factor(self, A=None, damping="none", lam=0.0):
        """Factor A + damping(lam) (A: the planned matrix or one with its pattern; damping
        'none', 'identity' (A + lam I) or 'diagonal' (Marquardt's scaling)). Raises
        NotPositiveDefiniteError naming the block column (also in info['failed_column'])."""
        if damping not in _DAMPING:
            raise ValueError("sbm.Cholesky.factor: damping must be one of %s, not %r"
                             % (", ".join(_DAMPING), damping))
        A = self.A if A is None else A
        self.ctx.check(lib.sbm_chol_factor(self.ctx._h, self._h, A._h, _DAMPING[damping],
                                           float(lam)))
        self.ctx._done()
        return self

    def solve(self, b, out=None):
        """x = (A + damping)^-1 b for b of shape (n,) or (n, k): numpy (any layout; the result
        is Fortran-ordered for 2-D), or on a CUDA context a device array, 1-D or 2-D
        Fortran-contiguous (column-major), solved without a host copy."""
        ctx, n = self.ctx, self.n
        if ctx.is_cuda and _is_device(b) and not isinstance(b, np.ndarray):
            from ._core import _cuda_interface
            iface, keep_b = _cuda_interface(ctx, b)
            shape = tuple(iface["shape"])
            k = 1 if len(shape) == 1 else shape[1]
            if shape[0] != n:
                raise ValueError("sbm.Cholesky.solve: b has %d rows, the matrix %d" % (shape[0], n))
            if len(shape) == 2 and k > 1 and iface.get("strides") not in (None,) and \
                    tuple(iface["strides"]) != (8, 8 * n):
                raise ValueError("sbm.Cholesky.solve: a 2-D device b must be column-major "
                                 "(Fortran-contiguous), e.g. cupy.asfortranarray(b)")
            if len(shape) == 2 and k > 1 and iface.get("strides") is None:
                raise ValueError("sbm.Cholesky.solve: a 2-D device b must be column-major "
                                 "(Fortran-contiguous), e.g. cupy.asfortranarray(b)")
            if np.dtype(iface["typestr"]) != np.float64:
                raise TypeError("sbm.Cholesky.solve: b must be a device array of float64, got %s"
                                % np.dtype(iface["typestr"]))
            from ._core import _sync_foreign_stream, _object_device
            dev = iface.get("device", _object_device(b))
            if dev is not None and dev != ctx.device:
                raise ValueError("sbm.Cholesky.solve: b is on CUDA device %d, the context on "
                                 "device %d" % (dev, ctx.device))
            bp = ffi.cast("double *", iface["data"][0])
            _sync_foreign_stream(ctx, iface)
            x = DeviceArray.empty(ctx, (k * n,)) if out is None else out
            xp = x._ptr if isinstance(x, DeviceArray) else \
                _device_pointer(ctx, x, np.float64, "out", count=n * k, writable=True)[0]
            ctx.check(lib.sbm_chol_solve(ctx._h, self._h, k, bp, max(n, 1), xp, max(n, 1)))
            ctx._done()
            if isinstance(x, DeviceArray) and out is None:
                x.shape = shape
                x.strides = None if len(shape) == 1 or k == 1 else (8, 8 * n)
                return _like(b, x)
            return x
        B = np.asarray(b, dtype=np.float64)
        if B.shape[:1] != (n,) or B.ndim > 2:
            raise ValueError("sbm.Cholesky.solve: b must have shape (%d,) or (%d, k), got %s"
                             % (n, n, B.shape))
        k = 1 if B.ndim == 1 else B.shape[1]
        B = np.asfortranarray(B)
        X = np.empty_like(B, order="F")
        if ctx.is_cuda:
            bd = DeviceArray.from_host(ctx, B.ravel(order="F"))
            xd = DeviceArray.empty(ctx, (n * k,))
            ctx.check(lib.sbm_chol_solve(ctx._h, self._h, k, bd._ptr, max(n, 1), xd._ptr, max(n, 1)))
            X[...] = xd.get().reshape(B.shape, order="F")
        else:
            if B.size:
                ctx.check(lib.sbm_chol_solve(ctx._h, self._h, k, ffi.cast("double *", B.ctypes.data),
                                             max(n, 1), ffi.cast("double *", X.ctypes.data),
                                             max(n, 1)))
            elif k:
                ctx.check(lib.sbm_chol_solve(ctx._h, self._h, k, _host_ptr(np.zeros(1)), 1,
                                             _host_ptr(np.zeros(1)), 1))
        if out is not None:
            out[...] = X
            return out
        return X

    def inverse_diagonal(self):
        """The diagonal blocks of (A + damping)^-1 of the last factorisation, shape (nb, b, b)
        (sbm_chol_inverse_diagonal: the selected inverse, computed on the host once per
        factorisation). Raises InvalidArgumentError when there is no factor."""
        return _build.chol_inverse_diagonal(self)

    def inverse_blocks(self, rows, cols):
        """Blocks (rows[t], cols[t]) of (A + damping)^-1, shape (len(rows), b, b), A's block
        numbering (sbm_chol_inverse_blocks). Every block where A stores one is available (see
        inverse_in_pattern); one outside the factor's pattern raises InvalidArgumentError, an
        index out of range IndexOutOfRangeError, both naming the pair."""
        return _build.chol_inverse_blocks(self, rows, cols)

    def inverse_in_pattern(self, i, j):
        """Whether block (i, j) of the inverse is in the factor's pattern (inverse_blocks gives
        it); False for an index out of range."""
        return bool(lib.sbm_chol_inverse_in_pattern(self._h, int(i), int(j)))

    @property
    def info(self):
        i = lib.sbm_chol_get_info(self._h)
        nb = int(i.block_columns)
        perm = np.frombuffer(ffi.buffer(i.perm, 8 * nb), np.int64).copy() \
            if nb and i.perm != ffi.NULL else np.zeros(0, np.int64)
        return {"block_columns": nb, "block_size": int(i.block_size),
                "supernodes": int(i.supernodes), "factor_values": int(i.factor_values),
                "max_front": int(i.max_front), "flops": float(i.flops), "perm": perm,
                "failed_column": int(i.failed_column), "factored": bool(i.factored)}


# ---- BA Schur complement ------------------------------------------------------------------------------

class SchurPlan:
    """The reduced camera system of BA normal equations [U W; W^T V] given as CBC matrices (from
    a BALProblem's normal_equations() or built from your own arrays): U (nc x nc blocks of p x p,
    upper block triangle), V (np x np of q x q, block diagonal, SPD blocks), W (nc x np of
    p x q). ``execute(gc, gp)`` forms S = U - W V^-1 W^T (upper block triangle, ``S``) and
    returns rhs = gc - W V^-1 gp; ``back_substitute(gp, dc)`` gives dp = V^-1 (gp - W^T dc);
    ``multiply(x)`` is S x without S (matrix_free=True never forms S). Vectors: numpy arrays,
    or device arrays on a CUDA context."""

    def __init__(self, U, V, W, matrix_free=False):
        self.ctx, self.U, self.V, self.W = U.ctx, U, V, W
        self.nc, self.p = U.nbc, U.c
        self.np_, self.q = V.nbc, V.c
        pp = ffi.new("sbm_schur_plan **")
        ps = ffi.new("sbm_cbc **")
        flags = constants["SBM_SCHUR_MATRIX_FREE"] if matrix_free else 0
        self.ctx.check(lib.sbm_ba_schur_plan(self.ctx._h, U._h, V._h, W._h, flags, pp, ps))
        self._h = pp[0]
        self.S = CBC._wrap_handle(self.ctx, ps[0]) if ps[0] != ffi.NULL else None
        self.ctx._done()

    def __del__(self):
        try:
            if getattr(self, "_h", None) is not None:
                lib.sbm_schur_plan_destroy(self._h)
                self._h = None
        except Exception:
            pass

    def execute(self, gc=None, gp=None, U=None, V=None, W=None):
        """S (unless matrix-free) from the current values of U, V, W (default: the planned
        matrices); with gc and gp, returns rhs = gc - W V^-1 gp (else None). Raises
        NotPositiveDefiniteError for a block of V that is not SPD."""
        from ._matrix import _Vec
        U = self.U if U is None else U
        V = self.V if V is None else V
        W = self.W if W is None else W
        n = self.nc * self.p
        if (gc is None) != (gp is None):
            raise ValueError("sbm.SchurPlan.execute: give both gc and gp, or neither")
        if gc is not None:
            gcv = _Vec(self.ctx, gc, n, "gc")
            gpv = _Vec(self.ctx, gp, self.np_ * self.q, "gp")
            rv = _Vec(self.ctx, None, n, "rhs", out=True)
            a, b, r = gcv.ptr, gpv.ptr, rv.ptr
        else:
            a = b = r = ffi.NULL
        self.ctx.check(lib.sbm_ba_schur_execute(self.ctx._h, self._h, U._h, V._h, W._h, a, b,
                                                self.S._h if self.S is not None else ffi.NULL, r))
        self.ctx._done()
        if gc is None:
            return None
        return _vec_result(gc, gcv, rv)

    def back_substitute(self, gp, dc):
        """dp = V^-1 (gp - W^T dc) with the V^-1 of the last execute."""
        from ._matrix import _Vec
        gpv = _Vec(self.ctx, gp, self.np_ * self.q, "gp")
        dcv = _Vec(self.ctx, dc, self.nc * self.p, "dc")
        dpv = _Vec(self.ctx, None, self.np_ * self.q, "dp", out=True)
        self.ctx.check(lib.sbm_ba_back_substitute(self.ctx._h, self._h, self.W._h, gpv.ptr,
                                                  dcv.ptr, dpv.ptr))
        self.ctx._done()
        return _vec_result(dc, dcv, dpv)

    def multiply(self, x):
        """y = S x = U x - Y (W^T x) with the Y of the last execute (S never formed)."""
        from ._matrix import _Vec
        n = self.nc * self.p
        xv = _Vec(self.ctx, x, n, "x")
        yv = _Vec(self.ctx, None, n, "y", out=True)
        self.ctx.check(lib.sbm_ba_schur_multiply(self.ctx._h, self._h, self.U._h, self.W._h,
                                                 xv.ptr, yv.ptr))
        self.ctx._done()
        return _vec_result(x, xv, yv)


def _vec_result(x, xv, yv):
    """A new result vector as the kind of array x is (numpy, or CuPy / PyTorch / DeviceArray)."""
    if isinstance(xv.keep, DeviceArray) and not _is_device(x):
        return yv.keep.get()
    return _like(x, yv.finish())


# ---- solver options, reports, summaries -------------------------------------------------------------

_LINEAR = {"auto": lib.SBM_LINEAR_AUTO, "dense_cholesky": lib.SBM_LINEAR_DENSE_CHOLESKY,
           "pcg": lib.SBM_LINEAR_PCG, "pcg_matrix_free": lib.SBM_LINEAR_PCG_MATRIX_FREE,
           "sparse_cholesky": lib.SBM_LINEAR_SPARSE_CHOLESKY}
_LINEAR_NAME = {v: k for k, v in _LINEAR.items()}
_METHOD = {"levenberg_marquardt": lib.SBM_METHOD_LEVENBERG_MARQUARDT,
           "gauss_newton": lib.SBM_METHOD_GAUSS_NEWTON}
_LOSS = {"none": lib.SBM_LOSS_NONE, "huber": lib.SBM_LOSS_HUBER, "cauchy": lib.SBM_LOSS_CAUCHY}
_FORCING = {"fixed": lib.SBM_PCG_FORCING_FIXED,
            "eisenstat-walker": lib.SBM_PCG_FORCING_EISENSTAT_WALKER}
_FORCING_NAME = {v: k for k, v in _FORCING.items()}


@dataclasses.dataclass
class IterationReport:
    """One iteration of a solve (sbm_iteration_report); times in seconds."""
    iteration: int
    cost_before: float
    cost: float
    lambda_: float
    accepted: bool
    linear_failed: bool
    linear_capped: bool
    gradient_norm: float
    step_norm: float
    linear_iterations: int
    linear_residual: float
    time_linearize: float
    time_schur: float
    time_solve: float
    time_update: float
    time_total: float

    @classmethod
    def _from_c(cls, r):
        return cls(int(r.iteration), r.cost_before, r.cost, getattr(r, "lambda"), bool(r.accepted), bool(r.linear_failed),
                   bool(r.linear_capped), r.gradient_norm, r.step_norm, int(r.linear_iterations),
                   r.linear_residual, r.time_linearize, r.time_schur, r.time_solve, r.time_update,
                   r.time_total)


@dataclasses.dataclass
class SolverOptions:
    """sbm_solver_options with names for the enums. Defaults are sbm_solver_default_options()'s
    (read from the library: SolverOptions() is the C defaults). linear_solver: 'auto',
    'dense_cholesky', 'pcg', 'pcg_matrix_free' (BA), 'sparse_cholesky'; method (SLAM):
    'levenberg_marquardt' or 'gauss_newton'; loss: 'none', 'huber', 'cauchy' with loss_scale;
    pcg_forcing: 'fixed' (every PCG solve to pcg_tolerance) or 'eisenstat-walker' (the C
    default: loose steps far from the optimum, at most pcg_forcing_max, down to pcg_tolerance);
    callback: called with an IterationReport after every iteration (an exception it raises
    is re-raised when the solve returns)."""
    max_iterations: Optional[int] = None
    linear_solver: str = "auto"
    dense_max_dim: Optional[int] = None
    pcg_max_iterations: Optional[int] = None
    pcg_tolerance: Optional[float] = None
    pcg_forcing: Optional[str] = None
    pcg_forcing_max: Optional[float] = None
    initial_lambda: Optional[float] = None
    min_lambda: Optional[float] = None
    function_tolerance: Optional[float] = None
    gradient_tolerance: Optional[float] = None
    parameter_tolerance: Optional[float] = None
    method: str = "levenberg_marquardt"
    loss: str = "none"
    loss_scale: float = 1.0
    update_state_every_iteration: bool = False
    callback: Optional[Callable[[IterationReport], None]] = None

    def _to_c(self):
        o = ffi.new("sbm_solver_options *", lib.sbm_solver_default_options())
        for name in ("max_iterations", "dense_max_dim", "pcg_max_iterations"):
            v = getattr(self, name)
            if v is not None:
                setattr(o, name, int(v))
        for name in ("pcg_tolerance", "pcg_forcing_max", "initial_lambda", "min_lambda",
                     "function_tolerance",
                     "gradient_tolerance", "parameter_tolerance"):
            v = getattr(self, name)
            if v is not None:
                setattr(o, name, float(v))
        for field, table, value in (("linear_solver", _LINEAR, self.linear_solver),
                                    ("method", _METHOD, self.method)):
            if value not in table:
                raise ValueError("sbm.SolverOptions: %s must be one of %s, not %r"
                                 % (field, ", ".join(table), value))
            setattr(o, field, table[value])
        if self.pcg_forcing is not None:
            if self.pcg_forcing not in _FORCING:
                raise ValueError("sbm.SolverOptions: pcg_forcing must be one of %s, not %r"
                                 % (", ".join(_FORCING), self.pcg_forcing))
            o.pcg_forcing = _FORCING[self.pcg_forcing]
        if self.loss not in _LOSS:
            raise ValueError("sbm.SolverOptions: loss must be one of %s, not %r"
                             % (", ".join(_LOSS), self.loss))
        o.loss.type = _LOSS[self.loss]
        o.loss.scale = float(self.loss_scale)
        o.update_state_every_iteration = int(bool(self.update_state_every_iteration))
        return o

    @staticmethod
    def defaults():
        """The C defaults as a dict (sbm_solver_default_options)."""
        o = lib.sbm_solver_default_options()
        return {"max_iterations": o.max_iterations, "linear_solver": _LINEAR_NAME[o.linear_solver],
                "dense_max_dim": o.dense_max_dim, "pcg_max_iterations": o.pcg_max_iterations,
                "pcg_tolerance": o.pcg_tolerance,
                "pcg_forcing": _FORCING_NAME[o.pcg_forcing], "pcg_forcing_max": o.pcg_forcing_max,
                "initial_lambda": o.initial_lambda, "min_lambda": o.min_lambda,
                "function_tolerance": o.function_tolerance,
                "gradient_tolerance": o.gradient_tolerance,
                "parameter_tolerance": o.parameter_tolerance}


@dataclasses.dataclass
class SolverSummary:
    """sbm_solver_summary: why and where a solve stopped. stop_reason is sbm's name for it
    ("function tolerance", "max iterations", ...), converged says whether that is convergence;
    times in seconds; linear_solver the one used (auto resolved)."""
    initial_cost: float
    final_cost: float
    iterations: int
    accepted: int
    stop_reason: str
    converged: bool
    linear_solver: str
    linear_failures: int
    linear_capped: int
    final_gradient_norm: float
    time_total: float
    time_linearize: float
    time_schur: float
    time_solve: float
    time_update: float
    iteration_reports: list = dataclasses.field(default_factory=list, repr=False)

    @classmethod
    def _from_c(cls, s, reports):
        return cls(s.initial_cost, s.final_cost, int(s.iterations), int(s.accepted),
                   _str(lib.sbm_stop_reason_name(s.stop_reason)),
                   bool(lib.sbm_stop_reason_converged(s.stop_reason)),
                   _LINEAR_NAME.get(s.linear_solver, str(s.linear_solver)),
                   int(s.linear_failures), int(s.linear_capped), s.final_gradient_norm,
                   s.time_total, s.time_linearize, s.time_schur, s.time_solve, s.time_update,
                   reports)


def _options(options, kwargs):
    if options is None:
        options = SolverOptions(**kwargs)
    elif kwargs:
        options = dataclasses.replace(options, **kwargs)
    return options


def _run_solver(ctx, fn, obj, options):
    o = options._to_c()
    reports, failure = [], []

    def on_iteration(user, report):
        r = IterationReport._from_c(report)
        reports.append(r)
        if options.callback is not None and not failure:
            try:
                options.callback(r)
            except BaseException as e:  # re-raised after the solve
                failure.append(e)

    cb = ffi.callback("sbm_iteration_callback", on_iteration)
    o.callback = cb
    s = ffi.new("sbm_solver_summary *")
    status = fn(ctx._h, obj, o, s)
    if failure:
        raise failure[0]
    ctx.check(status)
    return SolverSummary._from_c(s, reports)


# ---- BA ---------------------------------------------------------------------------------------------

class BALProblem:
    """A bundle-adjustment problem in BAL form (sbm_bal_problem, host memory): cameras of 9
    parameters (angle-axis, translation, f, k1, k2), points of 3, observations (camera, point,
    x, y). ``camera_params`` (cameras, 9) and ``point_params`` (points, 3) are writable views of
    the problem's estimate; the observation arrays are read-only views."""

    def __init__(self, *args, **kwargs):
        raise TypeError("sbm.BALProblem: use BALProblem.read, generate or from_arrays")

    @classmethod
    def _wrap(cls, ctx, h):
        self = object.__new__(cls)
        self.ctx, self._h = ctx, h
        return self

    def __del__(self):
        try:
            if getattr(self, "_h", None) is not None:
                lib.sbm_bal_destroy(self._h)
                self._h = None
        except Exception:
            pass

    @classmethod
    def read(cls, path, *, ctx=None):
        """Read a BAL file (plain, gzip or bzip2)."""
        ctx = _ctx(ctx)
        p = ffi.new("sbm_bal_problem **")
        ctx.check(lib.sbm_bal_read(ctx._h, _path(path), p))
        return cls._wrap(ctx, p[0])

    @classmethod
    def generate(cls, cameras, points, obs_per_point, seed=0, pixel_noise=None,
                 perturbation=None, *, ctx=None):
        """A seeded synthetic problem (sbm_bal_generate): the same seed gives the same problem
        on every platform."""
        ctx = _ctx(ctx)
        o = ffi.new("sbm_bal_generate_options *",
                    lib.sbm_bal_generate_defaults(int(cameras), int(points), int(obs_per_point),
                                                  int(seed)))
        if pixel_noise is not None:
            o.pixel_noise = float(pixel_noise)
        if perturbation is not None:
            o.perturbation = float(perturbation)
        p = ffi.new("sbm_bal_problem **")
        ctx.check(lib.sbm_bal_generate(ctx._h, o, p))
        return cls._wrap(ctx, p[0])

    @classmethod
    def from_arrays(cls, camera_params, point_params, obs_camera, obs_point, obs_xy, *,
                    constant_cameras=(), constant_points=(), ctx=None):
        """A problem from arrays, no file (sbm_bal_problem_create, which checks and copies them):
        camera_params (cameras, 9), point_params (points, 3), obs_camera, obs_point
        (observations,) 0-based, obs_xy (observations, 2). constant_cameras / constant_points:
        indices (or boolean masks) of blocks held constant (set_camera_constant). Such a problem
        is checked strictly by the solvers: a camera or point that no observation and no prior
        touches and that is not constant is an InvalidArgumentError naming it."""
        ctx = _ctx(ctx)
        self = cls._wrap(ctx, _build.bal_create(ctx, camera_params, point_params, obs_camera,
                                                obs_point, obs_xy))
        for i in _build._indices(constant_cameras, self.cameras, "constant_cameras",
                                 "sbm.BALProblem.from_arrays"):
            self.set_camera_constant(i, True)
        for i in _build._indices(constant_points, self.points, "constant_points",
                                 "sbm.BALProblem.from_arrays"):
            self.set_point_constant(i, True)
        return self

    def set_camera_constant(self, camera, constant=True):
        """Hold camera (0-based) constant (its parameters get a zero step in every solver; its
        observations still count in the cost) or free it again (sbm_bal_set_camera_constant)."""
        self.ctx.check(lib.sbm_bal_set_camera_constant(self.ctx._h, self._h, int(camera),
                                                       int(bool(constant))))

    def set_point_constant(self, point, constant=True):
        """Hold point (0-based) constant or free it (sbm_bal_set_point_constant)."""
        self.ctx.check(lib.sbm_bal_set_point_constant(self.ctx._h, self._h, int(point),
                                                      int(bool(constant))))

    def set_camera_prior(self, camera, mean, information):
        """A Gaussian prior 0.5 (x - mean)^T information (x - mean) on camera's 9 parameters
        (BAL order), joining the cost (sbm_bal_set_camera_prior). information: (9, 9) symmetric
        positive semidefinite; None removes the camera's prior (mean is then ignored)."""
        _build.bal_camera_prior(self.ctx, self._h, camera, mean, information)

    @property
    def camera_constant(self):
        """(cameras,) bool: the cameras held constant."""
        i = self._info
        return _host_view(self, i.camera_constant, (int(i.cameras),), np.uint8,
                          True).astype(bool)

    @property
    def point_constant(self):
        """(points,) bool: the points held constant."""
        i = self._info
        return _host_view(self, i.point_constant, (int(i.points),), np.uint8, True).astype(bool)

    @property
    def camera_has_prior(self):
        """(cameras,) bool: the cameras with a prior."""
        i = self._info
        return _host_view(self, i.camera_has_prior, (int(i.cameras),), np.uint8,
                          True).astype(bool)

    def write(self, path):
        """Write in BAL format (a name ending in .bz2 is compressed)."""
        self.ctx.check(lib.sbm_bal_write(self.ctx._h, _path(path), self._h))

    @property
    def _info(self):
        return lib.sbm_bal_get_info(self._h)

    @property
    def cameras(self):
        return int(self._info.cameras)

    @property
    def points(self):
        return int(self._info.points)

    @property
    def observations(self):
        return int(self._info.observations)

    @property
    def camera_params(self):
        i = self._info
        return _host_view(self, i.camera_params, (int(i.cameras), 9), np.float64)

    @property
    def point_params(self):
        i = self._info
        return _host_view(self, i.point_params, (int(i.points), 3), np.float64)

    @property
    def obs_camera(self):
        i = self._info
        return _host_view(self, i.obs_camera, (int(i.observations),), np.int32, True)

    @property
    def obs_point(self):
        i = self._info
        return _host_view(self, i.obs_point, (int(i.observations),), np.int32, True)

    @property
    def obs_xy(self):
        i = self._info
        return _host_view(self, i.obs_xy, (int(i.observations), 2), np.float64, True)

    def evaluate(self):
        """(cost, residuals): cost 0.5*|r|^2 and the (observations, 2) residuals."""
        r = np.empty((self.observations, 2))
        c = ffi.new("double *")
        self.ctx.check(lib.sbm_bal_evaluate(self.ctx._h, self._h, _host_ptr(r.reshape(-1)), c))
        return float(c[0]), r

    def __repr__(self):
        return "sbm.BALProblem(cameras=%d, points=%d, observations=%d)" % (
            self.cameras, self.points, self.observations)

    def solve(self, options=None, *, ctx=None, **kwargs):
        return ba_solve(self, options, ctx=ctx, **kwargs)

    def normal_equations(self, lam=0.0, *, ctx=None):
        """The Gauss-Newton system at the current parameters (sbm_ba_system): a dict with the
        CBC matrices U, V, W (copies, in ctx), gc, gp (numpy) and the cost."""
        ctx = _ctx(ctx) if ctx is not None else self.ctx
        p = ffi.new("sbm_ba_system **")
        ctx.check(lib.sbm_ba_system_create(ctx._h, self._h, p))
        sysh = ffi.gc(p[0], lib.sbm_ba_system_destroy)
        ctx.check(lib.sbm_ba_linearize(ctx._h, sysh, self._h))
        if lam:
            ctx.check(lib.sbm_ba_set_damping(ctx._h, sysh, float(lam)))
        i = lib.sbm_ba_system_get_info(sysh)
        out = {}
        for name in ("U", "V", "W"):
            q = ffi.new("sbm_cbc **")
            ctx.check(lib.sbm_cbc_copy(ctx._h, getattr(i, name), q))
            out[name] = CBC._wrap_handle(ctx, q[0])
        for name, n in (("gc", 9 * int(i.cameras)), ("gp", 3 * int(i.points))):
            v = np.empty(n)
            if n:
                ctx.check(lib.sbm_array_download(ctx._h, _host_ptr(v), getattr(i, name), n))
            out[name] = v
        out["cost"] = float(i.cost)
        ctx._done()
        return out


def ba_solve(problem, options=None, *, ctx=None, **kwargs):
    """Levenberg-Marquardt bundle adjustment of a BALProblem (sbm_ba_solve) on ctx's backend
    (default: the problem's context); the problem's parameters are updated. options: a
    SolverOptions, or its fields as keyword arguments. Returns a SolverSummary."""
    ctx = problem.ctx if ctx is None else _ctx(ctx)
    return _run_solver(ctx, lib.sbm_ba_solve, problem._h, _options(options, kwargs))
