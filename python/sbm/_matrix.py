# SPDX-License-Identifier: BSD-3-Clause
"""Matrices (CBC block matrices, CSR scalar matrices), scipy.sparse interop and the products."""
import numpy as np

from ._core import (ffi, lib, constants, DeviceArray, _ctx, _host_view, _host_array,
                    _host_ptr, _is_device, _device_pointer, _like, _cuda_interface)

__all__ = ["CBC", "CSR", "GemmPlan", "CsrGemmPlan", "SpmvPlan", "gemm", "csr_gemm",
           "bdiag_inverse", "bdiag_scale", "read_mtx"]

_OPS = {"N": lib.SBM_OP_N, "T": lib.SBM_OP_T}
_GEMM_UPPER = constants["SBM_GEMM_UPPER"]
_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def _op(op, name="op"):
    try:
        return _OPS[op.upper() if isinstance(op, str) else op]
    except (KeyError, AttributeError):
        raise ValueError("sbm: %s must be 'N' or 'T', not %r" % (name, op)) from None


def _index_dtype(index_dtype):
    d = np.dtype(index_dtype)
    if d not in _INDEX_DTYPES:
        raise ValueError("sbm: index_dtype must be int32 or int64, not %s" % d)
    return d


def _scipy():
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover
        raise ImportError("sbm: scipy is needed for scipy.sparse interop (pip install scipy)") from None
    return sp


def _scipy_compressed(kind, data, indices, indptr, shape, blocksize=None):
    """A scipy bsr_array / csr_array over exactly these arrays (no copy, no index recast:
    scipy's constructor may narrow int64 indices whose values fit, so the arrays are set back)."""
    sp = _scipy()
    if kind == "bsr":
        M = sp.bsr_array((data, indices, indptr), shape=shape, blocksize=blocksize, copy=False)
    else:
        M = sp.csr_array((data, indices, indptr), shape=shape, copy=False)
    M.indices = indices
    M.indptr = indptr
    M.data = data
    return M


# ---- vector operands ----------------------------------------------------------------------------

class _Vec:
    """A dense operand of n doubles in a context's memory, from numpy or a device array."""

    def __init__(self, ctx, x, n, name, out=False, shape=None):
        self.ctx, self.n, self.host_result = ctx, n, None
        self.shape = shape if shape is not None else (n,)
        if not ctx.is_cuda:
            if out:
                if x is None:
                    x = np.zeros(self.shape)
                elif not (isinstance(x, np.ndarray) and x.dtype == np.float64 and
                          x.flags.c_contiguous and x.flags.writeable):
                    raise ValueError("sbm: %s must be a writable C-contiguous float64 numpy "
                                     "array (it is written in place)" % name)
            arr = _host_array(x, np.float64, name, count=n)
            self.ptr, self.keep, self.result = _host_ptr(arr), arr, arr
            if x is not None and arr.shape != self.shape and arr.size == n:
                self.result = arr.reshape(self.shape) if not out else x
            return
        if x is not None and _is_device(x) and not isinstance(x, np.ndarray):
            self.ptr, self.keep = _device_pointer(ctx, x, np.float64, name, count=n, writable=out)
            self.result = x
        elif x is None:
            d = DeviceArray.empty(ctx, self.shape)
            self.ptr, self.keep, self.result = d._ptr, d, d
        else:
            arr = _host_array(x, np.float64, name, count=n, writable=out)
            d = DeviceArray.from_host(ctx, arr)
            self.ptr, self.keep, self.result = d._ptr, d, d
            if out:
                self.host_result = x     # written back after the call

    def finish(self):
        if self.host_result is not None:
            self.host_result[...] = self.keep.get().reshape(self.host_result.shape)
            return self.host_result
        return self.result


# ---- CBC ------------------------------------------------------------------------------------------

class CBC:
    """A block matrix in sbm's CBC format (block compressed sparse column): ``nbr x nbc``
    blocks of ``r x c``, arrays ``colptr`` (int64, nbc+1), ``rowind`` (int32, nnzb) and
    ``values`` (float64, nnzb*r*c, each block column-major), in the memory of its context.

    Made by ``from_arrays`` (copied, or wrapped without a copy), ``from_triplets``,
    ``from_bsr`` / ``from_scipy``, or by an operation. ``colptr``, ``rowind`` and ``values``
    are views of the matrix's own arrays (numpy on the CPU, :class:`DeviceArray` on CUDA), and
    ``blocks`` is the (nnzb, r, c) view of the values: writing into it changes the matrix, as a
    plan's re-execution with new values needs."""

    def __init__(self, *args, **kwargs):
        raise TypeError("sbm.CBC: use CBC.from_arrays, from_triplets, from_bsr or from_scipy")

    @classmethod
    def _wrap_handle(cls, ctx, h, keep=None):
        self = object.__new__(cls)
        self.ctx, self._h, self._keep = ctx, h, keep
        i = lib.sbm_cbc_get_info(h)
        self.nbr, self.nbc, self.r, self.c = int(i.nbr), int(i.nbc), int(i.r), int(i.c)
        return self

    def __del__(self):
        try:
            if getattr(self, "_h", None) is not None:
                lib.sbm_cbc_destroy(self._h)
                self._h = None
        except Exception:
            pass

    # -- construction --

    @classmethod
    def from_arrays(cls, nbr, nbc, r, c, colptr, rowind, values=None, *, ctx=None, copy=True):
        """A matrix from its arrays: colptr (nbc+1), rowind (nnzb) and values, either flat
        (nnzb*r*c, blocks column-major: sbm's layout) or (nnzb, r, c) blocks. With copy=True
        the arrays are copied into the context (host arrays for any context; device arrays are
        copied on the device) and values may be None (zeros). With copy=False they are wrapped
        without a copy (sbm_cbc_wrap): they must already be int64 / int32 / float64 and
        contiguous (else ValueError) and in the context's memory (numpy for a CPU context,
        CuPy / PyTorch / any __cuda_array_interface__ array for a CUDA context); the matrix
        keeps them alive and sees their later changes."""
        ctx = _ctx(ctx)
        nbr, nbc, r, c = int(nbr), int(nbc), int(r), int(c)
        if values is not None and not _is_device(values) and np.ndim(values) == 3:
            v = np.asarray(values)
            if v.shape[1:] != (r, c):
                raise ValueError("sbm.CBC.from_arrays: blocks of shape %s, the matrix has %dx%d"
                                 % (v.shape[1:], r, c))
            values = v.transpose(0, 2, 1)      # sbm's layout: each block column-major
            if not copy and not (values.flags.c_contiguous and values.dtype == np.float64):
                raise ValueError("sbm.CBC.from_arrays: copy=False with (nnzb, r, c) blocks needs "
                                 "them column-major in memory (e.g. A.blocks of a matrix, or "
                                 "np.ascontiguousarray(b.transpose(0, 2, 1)).transpose(0, 2, 1))")
            values = np.ascontiguousarray(values).reshape(-1)
        p = ffi.new("sbm_cbc **")
        dev = [_is_device(a) and not isinstance(a, np.ndarray) for a in (colptr, rowind, values)]
        if ctx.is_cuda and any(dev):
            if not all(dev):
                raise ValueError("sbm.CBC.from_arrays: colptr, rowind and values must all be "
                                 "device arrays, or all host arrays")
            cp, k1 = _device_pointer(ctx, colptr, np.int64, "colptr", count=nbc + 1)
            ri, k2 = _device_pointer(ctx, rowind, np.int32, "rowind")
            va, k3 = _device_pointer(ctx, values, np.float64, "values", writable=True)
            ctx.check(lib.sbm_cbc_wrap(ctx._h, p, nbr, nbc, r, c, cp, ri, va))
            A = cls._wrap_handle(ctx, p[0], keep=(k1, k2, k3))
            if copy:
                A = A.copy()
            ctx._done()
            return A
        if not copy:
            if ctx.is_cuda:
                raise ValueError("sbm.CBC.from_arrays: copy=False on a CUDA context needs "
                                 "device arrays (CuPy, PyTorch, ...), got host arrays")
            if values is None:
                raise ValueError("sbm.CBC.from_arrays: copy=False needs values")
            cp = _host_array(colptr, np.int64, "colptr", count=nbc + 1, copy_ok=False)
            ri = _host_array(rowind, np.int32, "rowind", copy_ok=False)
            va = _host_array(values, np.float64, "values", copy_ok=False, writable=True)
            ctx.check(lib.sbm_cbc_wrap(ctx._h, p, nbr, nbc, r, c, _host_ptr(cp), _host_ptr(ri),
                                       _host_ptr(va)))
            return cls._wrap_handle(ctx, p[0], keep=(cp, ri, va))
        cp = _host_array(colptr, np.int64, "colptr")
        ri = _host_array(rowind, np.int32, "rowind")
        va = ffi.NULL if values is None else _host_ptr(_host_array(values, np.float64, "values"))
        ctx.check(lib.sbm_cbc_create(ctx._h, p, nbr, nbc, r, c, _host_ptr(cp), _host_ptr(ri), va))
        ctx._done()
        return cls._wrap_handle(ctx, p[0])

    @classmethod
    def from_triplets(cls, nbr, nbc, brow, bcol, blocks, *, ctx=None):
        """Assembly from block triplets, duplicates summed: block t is blocks[t] (an r x c
        array) at block row brow[t], block column bcol[t]."""
        ctx = _ctx(ctx)
        b = np.asarray(blocks, dtype=np.float64)
        if b.ndim != 3:
            raise ValueError("sbm.CBC.from_triplets: blocks must be (ntriplets, r, c), got shape %s"
                             % (b.shape,))
        t, r, c = b.shape
        br = _host_array(brow, np.int32, "brow", count=t)
        bc = _host_array(bcol, np.int32, "bcol", count=t)
        vals = np.ascontiguousarray(b.transpose(0, 2, 1)).reshape(-1)
        p = ffi.new("sbm_cbc **")
        ctx.check(lib.sbm_cbc_from_triplets(ctx._h, p, int(nbr), int(nbc), r, c, t, _host_ptr(br),
                                            _host_ptr(bc), _host_ptr(vals)))
        ctx._done()
        return cls._wrap_handle(ctx, p[0])

    @classmethod
    def from_bsr(cls, M, *, ctx=None):
        """From a scipy.sparse bsr_array / bsr_matrix (block CSR, blocks row-major), through
        sbm_cbc_from_bsr, which copies (CSR to CSC reorders the blocks). Of the index arrays only
        the one of the wrong width is converted first: int32 indptr is widened to int64 (nbr+1
        values), int64 indices are narrowed to int32 (nnzb values, checked); the data is read in
        place. A non-canonical matrix (unsorted or duplicate blocks) is canonicalised on a copy."""
        ctx = _ctx(ctx)
        if ctx.is_cuda:
            from ._core import default_context
            return cls.from_bsr(M, ctx=default_context()).copy(ctx)
        sp = _scipy()
        if not (sp.issparse(M) and M.format == "bsr"):
            raise TypeError("sbm.CBC.from_bsr: expected a scipy.sparse BSR array, got %s"
                            % type(M).__name__)
        if not M.has_canonical_format:
            M = M.copy()
            M.sum_duplicates()
        r, c = M.blocksize
        m, n = M.shape
        ip = _host_array(M.indptr, np.int64, "indptr")
        ix = _host_array(M.indices, np.int32, "indices")
        data = _host_array(M.data, np.float64, "data")
        p = ffi.new("sbm_cbc **")
        ctx.check(lib.sbm_cbc_from_bsr(ctx._h, p, m // r, n // c, r, c, lib.SBM_LAYOUT_ROW_MAJOR,
                                       _host_ptr(ip), _host_ptr(ix), _host_ptr(data)))
        return cls._wrap_handle(ctx, p[0])

    @classmethod
    def from_bsr_transposed(cls, M, *, ctx=None):
        """The CBC matrix of M^T for a scipy BSR M, sharing M's arrays (no copy of the values):
        block CSR of M is block CSC of M^T, and M's row-major r x c blocks are the column-major
        c x r blocks of M^T. Only the index array of the wrong width is converted (as in
        from_bsr); M must be canonical and its data float64 (else ValueError). CPU contexts."""
        ctx = _ctx(ctx)
        sp = _scipy()
        if not (sp.issparse(M) and M.format == "bsr"):
            raise TypeError("sbm.CBC.from_bsr_transposed: expected a scipy.sparse BSR array, got %s"
                            % type(M).__name__)
        if not M.has_canonical_format:
            raise ValueError("sbm.CBC.from_bsr_transposed: M is not canonical (sorted, no "
                             "duplicates): call M.sum_duplicates() first")
        r, c = M.blocksize
        cp = _host_array(M.indptr, np.int64, "indptr")
        ri = _host_array(M.indices, np.int32, "indices")
        va = _host_array(M.data, np.float64, "data", copy_ok=False).reshape(-1)
        A = cls.from_arrays(M.shape[1] // c, M.shape[0] // r, c, r, cp, ri, va, ctx=ctx, copy=False)
        A._keep = (cp, ri, va, M)
        return A

    @classmethod
    def from_scipy(cls, M, blocksize=None, *, ctx=None):
        """From any scipy.sparse matrix: a BSR one as it is (from_bsr), another converted by scipy
        to BSR with blocksize (r, c) (default: its own for BSR, else (1, 1)) first. A CSC matrix
        with blocksize (1, 1) is sbm's scalar CBC form already: use from_arrays(copy=False) on
        its arrays to share them."""
        sp = _scipy()
        if not sp.issparse(M):
            raise TypeError("sbm.CBC.from_scipy: expected a scipy.sparse matrix, got %s"
                            % type(M).__name__)
        if M.format == "bsr" and (blocksize is None or tuple(blocksize) == M.blocksize):
            return cls.from_bsr(M, ctx=ctx)
        bs = tuple(blocksize) if blocksize is not None else (1, 1)
        if M.shape[0] % bs[0] or M.shape[1] % bs[1]:
            raise ValueError("sbm.CBC.from_scipy: a %dx%d matrix is not made of %dx%d blocks"
                             % (M.shape + bs))
        return cls.from_bsr(sp.csr_array(M).tobsr(blocksize=bs), ctx=ctx)

    # -- views --

    @property
    def info(self):
        return lib.sbm_cbc_get_info(self._h)

    @property
    def nnzb(self):
        return int(self.info.nnzb)

    @property
    def shape(self):
        """Scalar shape (nbr*r, nbc*c)."""
        return (self.nbr * self.r, self.nbc * self.c)

    @property
    def block_shape(self):
        return (self.r, self.c)

    @property
    def nb(self):
        """Shape in blocks (nbr, nbc)."""
        return (self.nbr, self.nbc)

    def _view(self, ptr, n, dtype, readonly):
        if self.ctx.is_cuda:
            return DeviceArray(self.ctx, ptr, (n,), dtype, owner=self, readonly=readonly)
        return _host_view(self, ptr, (n,), dtype, readonly)

    @property
    def colptr(self):
        return self._view(self.info.colptr, self.nbc + 1, np.int64, True)

    @property
    def rowind(self):
        return self._view(self.info.rowind, self.nnzb, np.int32, True)

    @property
    def values(self):
        return self._view(self.info.values, self.nnzb * self.r * self.c, np.float64, False)

    @property
    def blocks(self):
        """(nnzb, r, c) writable view of the blocks (host matrices only)."""
        if self.ctx.is_cuda:
            raise ValueError("sbm.CBC.blocks: the matrix is on the device; use .values (a "
                             "DeviceArray, blocks column-major) or .copy(sbm.default_context())")
        return self.values.reshape(self.nnzb, self.c, self.r).transpose(0, 2, 1)

    def __repr__(self):
        return "sbm.CBC(%dx%d blocks of %dx%d, nnzb=%d, %s)" % (
            self.nbr, self.nbc, self.r, self.c, self.nnzb, self.ctx.backend)

    # -- conversions --

    def copy(self, ctx=None):
        """Deep copy into ctx (default: this matrix's context): host <-> device copies."""
        ctx = self.ctx if ctx is None else _ctx(ctx)
        p = ffi.new("sbm_cbc **")
        ctx.check(lib.sbm_cbc_copy(ctx._h, self._h, p))
        ctx._done()
        return CBC._wrap_handle(ctx, p[0])

    def _host(self):
        if not self.ctx.is_cuda:
            return self
        from ._core import default_context
        return self.copy(default_context())

    def check(self, check_finite=False):
        """Full validation (sbm_cbc_check); raises the error found."""
        self.ctx.check(lib.sbm_cbc_check(self.ctx._h, self._h, int(bool(check_finite))))

    def to_bsr(self, index_dtype=np.int32):
        """A scipy.sparse bsr_array of this matrix (blocks r x c). The block CSR arrays are
        written by sbm_cbc_to_bsr into new arrays (CSC to CSR reorders the blocks); scipy keeps
        one integer type for indptr and indices: with int32 sbm's int64 row pointers are
        narrowed (nbr+1 values; OverflowError beyond 2^31-1 blocks), with int64 the int32
        column indices are widened (nnzb values)."""
        d = _index_dtype(index_dtype)
        A = self._host()
        rowptr = np.empty(A.nbr + 1, np.int64)
        colind = np.empty(A.nnzb, np.int32)
        vals = np.empty((A.nnzb, A.r, A.c), np.float64)
        A.ctx.check(lib.sbm_cbc_to_bsr(A.ctx._h, A._h, lib.SBM_LAYOUT_ROW_MAJOR, _host_ptr(rowptr),
                                       _host_ptr(colind), _host_ptr(vals)))
        if d == np.int32:
            if A.nnzb > np.iinfo(np.int32).max:
                raise OverflowError("sbm.CBC.to_bsr: %d blocks do not fit int32 pointers; use "
                                    "index_dtype=numpy.int64" % A.nnzb)
            rowptr = rowptr.astype(np.int32)
        else:
            colind = colind.astype(np.int64)
        return _scipy_compressed("bsr", vals, colind, rowptr, self.shape, (self.r, self.c))

    to_scipy = to_bsr

    def to_bsr_transposed(self, index_dtype=np.int32):
        """A scipy bsr_array of A^T sharing this matrix's values (no copy: its column-major
        r x c blocks are the row-major c x r blocks of A^T) and, for index_dtype int64 its
        column pointers, for int32 its block-row indices; the other index array is converted.
        A CUDA matrix is copied to the host first."""
        d = _index_dtype(index_dtype)
        A = self._host()
        ptr, ind = A.colptr, A.rowind
        if d == np.int32:
            if A.nnzb > np.iinfo(np.int32).max:
                raise OverflowError("sbm.CBC.to_bsr_transposed: %d blocks do not fit int32 "
                                    "pointers; use index_dtype=numpy.int64" % A.nnzb)
            ptr = ptr.astype(np.int32)
        else:
            ind = ind.astype(np.int64)
        vals = A.values.reshape(A.nnzb, A.c, A.r)
        return _scipy_compressed("bsr", vals, ind, ptr, (self.shape[1], self.shape[0]),
                                 (self.c, self.r))

    def to_csr(self):
        """sbm's scalar CSR form (every stored block's r*c entries), in the same context."""
        p = ffi.new("sbm_csr **")
        self.ctx.check(lib.sbm_cbc_to_csr(self.ctx._h, self._h, p))
        self.ctx._done()
        return CSR._wrap_handle(self.ctx, p[0])

    def to_dense(self):
        """A dense numpy array (2-D, scalar shape)."""
        A = self._host()
        cols = np.repeat(np.arange(A.nbc), np.diff(A.colptr))
        D = np.zeros((A.nbr, A.r, A.nbc, A.c))
        if A.nnzb:
            D[A.rowind, :, cols, :] = A.blocks
        return D.reshape(self.shape)

    toarray = to_dense

    def transpose(self):
        p = ffi.new("sbm_cbc **")
        self.ctx.check(lib.sbm_cbc_transpose(self.ctx._h, self._h, p))
        self.ctx._done()
        return CBC._wrap_handle(self.ctx, p[0])

    @property
    def T(self):
        return self.transpose()

    def reblock(self, r, c):
        """The same scalar matrix with r x c blocks (a block is stored if any of its scalars is)."""
        p = ffi.new("sbm_cbc **")
        self.ctx.check(lib.sbm_cbc_reblock(self.ctx._h, self._h, int(r), int(c), p))
        self.ctx._done()
        return CBC._wrap_handle(self.ctx, p[0])

    def add(self, B, alpha=1.0, beta=1.0):
        """alpha*self + beta*B (union pattern)."""
        p = ffi.new("sbm_cbc **")
        self.ctx.check(lib.sbm_cbc_add(self.ctx._h, float(alpha), self._h, float(beta), B._h, p))
        self.ctx._done()
        return CBC._wrap_handle(self.ctx, p[0])

    def write_mtx(self, path):
        from ._solve import _path
        self.ctx.check(lib.sbm_cbc_write_mtx(self.ctx._h, _path(path), self._h))

    # -- products --

    def spmv(self, x, y=None, alpha=1.0, beta=0.0, op="N"):
        """y = alpha*op(A)*x + beta*y. x and y: numpy arrays, or device arrays on a CUDA context
        (used in place, no copy). y given is written in place; y None (beta must be 0) is a new
        array (numpy for a numpy x, a DeviceArray for a device x)."""
        o = _op(op)
        m, n = self.shape if o == lib.SBM_OP_N else self.shape[::-1]
        if y is None and beta != 0:
            raise ValueError("sbm.CBC.spmv: beta != 0 needs y")
        xv = _Vec(self.ctx, x, n, "x")
        yv = _Vec(self.ctx, y, m, "y", out=True)
        self.ctx.check(lib.sbm_cbc_spmv(self.ctx._h, o, float(alpha), self._h, xv.ptr,
                                        float(beta), yv.ptr))
        self.ctx._done()
        if y is None and isinstance(xv.keep, DeviceArray) and not _is_device(x):
            return yv.keep.get()
        return _like(x, yv.finish()) if y is None else yv.finish()

    def __matmul__(self, other):
        if isinstance(other, CBC):
            return gemm(self, other)
        return self.spmv(other)


def gemm(A, B, op_a="N", op_b="N", U=None, alpha=1.0, upper=False):
    """C = U + alpha*op(A)*op(B) as a new CBC matrix (plan, execute and destroy the plan in one
    call). upper=True keeps only the blocks with block row <= block column (C square)."""
    ctx = A.ctx
    p = ffi.new("sbm_cbc **")
    ctx.check(lib.sbm_cbc_gemm(ctx._h, float(alpha), _op(op_a, "op_a"), A._h, _op(op_b, "op_b"),
                               B._h, U._h if U is not None else ffi.NULL,
                               _GEMM_UPPER if upper else 0, p))
    ctx._done()
    return CBC._wrap_handle(ctx, p[0])


class GemmPlan:
    """The block SpGEMM's symbolic phase, for C = U + alpha*op(A)*op(B): made once per sparsity
    pattern, then ``execute`` reruns only the numeric phase, with new values in the same
    matrices (write into ``A.blocks``) or with other matrices of the same patterns.
    ``C`` is the result matrix the plan made (values zero until the first execute)."""

    def __init__(self, A, B, op_a="N", op_b="N", U=None, upper=False):
        self.ctx = A.ctx
        self.A, self.B, self.U = A, B, U
        pp = ffi.new("sbm_gemm_plan **")
        pc = ffi.new("sbm_cbc **")
        self.ctx.check(lib.sbm_cbc_gemm_plan(
            self.ctx._h, _op(op_a, "op_a"), A._h, _op(op_b, "op_b"), B._h,
            U._h if U is not None else ffi.NULL, _GEMM_UPPER if upper else 0, pp, pc))
        self._h = pp[0]
        self.C = CBC._wrap_handle(self.ctx, pc[0])
        self.ctx._done()

    def __del__(self):
        try:
            if getattr(self, "_h", None) is not None:
                lib.sbm_gemm_plan_destroy(self._h)
                self._h = None
        except Exception:
            pass

    def execute(self, alpha=1.0, A=None, B=None, U=None):
        """C = U + alpha*op(A)*op(B) (default operands: those the plan was made with); returns C.
        Raises PlanMismatchError for an operand whose pattern differs from the plan's."""
        A = self.A if A is None else A
        B = self.B if B is None else B
        U = self.U if U is None else U
        self.ctx.check(lib.sbm_cbc_gemm_execute(self.ctx._h, self._h, float(alpha), A._h, B._h,
                                                U._h if U is not None else ffi.NULL, self.C._h))
        self.ctx._done()
        return self.C

    @property
    def info(self):
        i = lib.sbm_gemm_plan_get_info(self._h)
        return {"products": int(i.products), "nnzb_c": int(i.nnzb_c), "slices": int(i.slices),
                "plan_bytes": int(i.plan_bytes), "fast_path": bool(i.fast_path)}


def bdiag_inverse(D, out=None):
    """D^-1 for a block-diagonal D with SPD diagonal blocks (a new matrix, or out in place)."""
    if out is None:
        out = D.copy()
    D.ctx.check(lib.sbm_bdiag_inverse(D.ctx._h, D._h, out._h))
    D.ctx._done()
    return out


def bdiag_scale(D, A, side="left", out=None):
    """D*A (side 'left') or A*D ('right') for a block-diagonal D; out has A's pattern."""
    sides = {"left": lib.SBM_SIDE_LEFT, "right": lib.SBM_SIDE_RIGHT}
    if side not in sides:
        raise ValueError("sbm.bdiag_scale: side must be 'left' or 'right', not %r" % (side,))
    if out is None:
        out = A.copy()
    A.ctx.check(lib.sbm_bdiag_scale(A.ctx._h, sides[side], D._h, A._h, out._h))
    A.ctx._done()
    return out


# ---- CSR -------------------------------------------------------------------------------------

class CSR:
    """A scalar matrix in sbm's CSR format: rowptr (int64, m+1), colind (int32, nnz, sorted and
    unique per row), values (float64, nnz), in the memory of its context."""

    def __init__(self, *args, **kwargs):
        raise TypeError("sbm.CSR: use CSR.from_arrays, from_triplets, from_scipy or read_mtx")

    @classmethod
    def _wrap_handle(cls, ctx, h, keep=None):
        self = object.__new__(cls)
        self.ctx, self._h, self._keep = ctx, h, keep
        i = lib.sbm_csr_get_info(h)
        self.m, self.n = int(i.m), int(i.n)
        return self

    def __del__(self):
        try:
            if getattr(self, "_h", None) is not None:
                lib.sbm_csr_destroy(self._h)
                self._h = None
        except Exception:
            pass

    @classmethod
    def from_arrays(cls, m, n, rowptr, colind, values, *, ctx=None, copy=True):
        """From rowptr (m+1), colind (nnz), values (nnz). copy=True copies (host arrays, or device
        arrays on a CUDA context); copy=False wraps them without a copy (int64 / int32 / float64
        contiguous arrays in the context's memory, kept alive by the matrix)."""
        ctx = _ctx(ctx)
        m, n = int(m), int(n)
        p = ffi.new("sbm_csr **")
        dev = [_is_device(a) and not isinstance(a, np.ndarray) for a in (rowptr, colind, values)]
        if ctx.is_cuda and any(dev):
            if not all(dev):
                raise ValueError("sbm.CSR.from_arrays: rowptr, colind and values must all be "
                                 "device arrays, or all host arrays")
            rp, k1 = _device_pointer(ctx, rowptr, np.int64, "rowptr", count=m + 1)
            ci, k2 = _device_pointer(ctx, colind, np.int32, "colind")
            va, k3 = _device_pointer(ctx, values, np.float64, "values", writable=True)
            ctx.check(lib.sbm_csr_wrap(ctx._h, p, m, n, rp, ci, va))
            A = cls._wrap_handle(ctx, p[0], keep=(k1, k2, k3))
            if copy:
                A = A.copy()
            ctx._done()
            return A
        if not copy:
            if ctx.is_cuda:
                raise ValueError("sbm.CSR.from_arrays: copy=False on a CUDA context needs device "
                                 "arrays (CuPy, PyTorch, ...), got host arrays")
            rp = _host_array(rowptr, np.int64, "rowptr", count=m + 1, copy_ok=False)
            ci = _host_array(colind, np.int32, "colind", copy_ok=False)
            va = _host_array(values, np.float64, "values", copy_ok=False, writable=True)
            ctx.check(lib.sbm_csr_wrap(ctx._h, p, m, n, _host_ptr(rp), _host_ptr(ci), _host_ptr(va)))
            return cls._wrap_handle(ctx, p[0], keep=(rp, ci, va))
        rp = _host_array(rowptr, np.int64, "rowptr")
        ci = _host_array(colind, np.int32, "colind")
        va = _host_array(values, np.float64, "values")
        ctx.check(lib.sbm_csr_create(ctx._h, p, m, n, _host_ptr(rp), _host_ptr(ci), _host_ptr(va)))
        ctx._done()
        return cls._wrap_handle(ctx, p[0])

    @classmethod
    def from_triplets(cls, m, n, row, col, values, *, ctx=None):
        """From scalar triplets (0-based), duplicates summed."""
        ctx = _ctx(ctx)
        va = _host_array(values, np.float64, "values")
        ri = _host_array(row, np.int32, "row", count=va.size)
        ci = _host_array(col, np.int32, "col", count=va.size)
        p = ffi.new("sbm_csr **")
        ctx.check(lib.sbm_csr_from_triplets(ctx._h, p, int(m), int(n), va.size, _host_ptr(ri),
                                            _host_ptr(ci), _host_ptr(va)))
        ctx._done()
        return cls._wrap_handle(ctx, p[0])

    @classmethod
    def from_scipy(cls, M, *, ctx=None, copy=False):
        """From a scipy.sparse matrix (CSR as it is; another format through scipy's tocsr).
        scipy holds indptr and indices in one integer type, sbm int64 row pointers and int32
        column indices, so exactly one of them is converted: int32 indptr is widened (m+1
        values), or int64 indices are narrowed (nnz values, checked). With copy=False (the
        default) on a CPU context the values and the other index array are shared with M, not
        copied: the sbm matrix sees M's values and keeps them alive. A non-canonical M
        (unsorted or duplicate entries) is canonicalised on a copy first."""
        ctx = _ctx(ctx)
        sp = _scipy()
        if not sp.issparse(M):
            raise TypeError("sbm.CSR.from_scipy: expected a scipy.sparse matrix, got %s"
                            % type(M).__name__)
        if M.format != "csr":
            M = M.tocsr()
        if not M.has_canonical_format:
            M = M.copy()
            M.sum_duplicates()
        m, n = M.shape
        rp = _host_array(M.indptr, np.int64, "indptr")
        ci = _host_array(M.indices, np.int32, "indices")
        va = _host_array(M.data, np.float64, "data")
        return cls.from_arrays(m, n, rp, ci, va, ctx=ctx, copy=copy or ctx.is_cuda)

    @classmethod
    def read_mtx(cls, path, *, ctx=None):
        return read_mtx(path, ctx=ctx)

    def write_mtx(self, path):
        from ._solve import _path
        self.ctx.check(lib.sbm_csr_write_mtx(self.ctx._h, _path(path), self._h))

    @property
    def info(self):
        return lib.sbm_csr_get_info(self._h)

    @property
    def nnz(self):
        return int(self.info.nnz)

    @property
    def shape(self):
        return (self.m, self.n)

    def _view(self, ptr, n, dtype, readonly):
        if self.ctx.is_cuda:
            return DeviceArray(self.ctx, ptr, (n,), dtype, owner=self, readonly=readonly)
        return _host_view(self, ptr, (n,), dtype, readonly)

    @property
    def rowptr(self):
        return self._view(self.info.rowptr, self.m + 1, np.int64, True)

    @property
    def colind(self):
        return self._view(self.info.colind, self.nnz, np.int32, True)

    @property
    def values(self):
        return self._view(self.info.values, self.nnz, np.float64, False)

    def __repr__(self):
        return "sbm.CSR(%dx%d, nnz=%d, %s)" % (self.m, self.n, self.nnz, self.ctx.backend)

    def copy(self, ctx=None):
        ctx = self.ctx if ctx is None else _ctx(ctx)
        p = ffi.new("sbm_csr **")
        ctx.check(lib.sbm_csr_copy(ctx._h, self._h, p))
        ctx._done()
        return CSR._wrap_handle(ctx, p[0])

    def _host(self):
        if not self.ctx.is_cuda:
            return self
        from ._core import default_context
        return self.copy(default_context())

    def check(self, check_finite=False):
        self.ctx.check(lib.sbm_csr_check(self.ctx._h, self._h, int(bool(check_finite))))

    def transpose(self):
        p = ffi.new("sbm_csr **")
        self.ctx.check(lib.sbm_csr_transpose(self.ctx._h, self._h, p))
        self.ctx._done()
        return CSR._wrap_handle(self.ctx, p[0])

    @property
    def T(self):
        return self.transpose()

    def to_cbc(self, r, c):
        """The CBC form with r x c blocks (dimensions divisible by r and c)."""
        p = ffi.new("sbm_cbc **")
        self.ctx.check(lib.sbm_csr_to_cbc(self.ctx._h, self._h, int(r), int(c), p))
        self.ctx._done()
        return CBC._wrap_handle(self.ctx, p[0])

    def to_scipy(self, index_dtype=np.int32, copy=False):
        """A scipy.sparse csr_array. One index array is converted to scipy's single index type
        (int32: the row pointers are narrowed, m+1 values; int64: the column indices widened,
        nnz values); with copy=False (default, CPU) the values and the other index array are
        views of this matrix's memory (the scipy array keeps it alive and sees later changes).
        A CUDA matrix is copied to the host first."""
        d = _index_dtype(index_dtype)
        A = self._host()
        rp, ci, va = A.rowptr, A.colind, A.values
        if copy:
            rp, ci, va = rp.copy(), ci.copy(), va.copy()
        if d == np.int32:
            if A.nnz > np.iinfo(np.int32).max:
                raise OverflowError("sbm.CSR.to_scipy: %d entries do not fit int32 pointers; use "
                                    "index_dtype=numpy.int64" % A.nnz)
            rp = rp.astype(np.int32)
        else:
            ci = ci.astype(np.int64)
        return _scipy_compressed("csr", va, ci, rp, self.shape)

    def to_dense(self):
        A = self._host()
        D = np.zeros(self.shape)
        rows = np.repeat(np.arange(A.m), np.diff(A.rowptr))
        D[rows, A.colind] = A.values
        return D

    toarray = to_dense

    def spmv(self, x, y=None, alpha=1.0, beta=0.0):
        """y = alpha*A*x + beta*y (arrays as in CBC.spmv)."""
        if y is None and beta != 0:
            raise ValueError("sbm.CSR.spmv: beta != 0 needs y")
        xv = _Vec(self.ctx, x, self.n, "x")
        yv = _Vec(self.ctx, y, self.m, "y", out=True)
        self.ctx.check(lib.sbm_csr_spmv(self.ctx._h, float(alpha), self._h, xv.ptr, float(beta),
                                        yv.ptr))
        self.ctx._done()
        if y is None and isinstance(xv.keep, DeviceArray) and not _is_device(x):
            return yv.keep.get()
        return _like(x, yv.finish()) if y is None else yv.finish()

    def spmm(self, B, C=None, alpha=1.0, beta=0.0):
        """C = alpha*A*B + beta*C with dense B (n x k) and C (m x k), row-major (C-contiguous)
        or column-major (Fortran-contiguous): the layout is read from B and C must share it.
        Host arrays on a CPU context; on a CUDA context 2-D device arrays in C order."""
        if C is None and beta != 0:
            raise ValueError("sbm.CSR.spmm: beta != 0 needs C")
        ctx = self.ctx
        if ctx.is_cuda and _is_device(B) and not isinstance(B, np.ndarray):
            shape = _cuda_interface(ctx, B)[0]["shape"]
            if len(shape) != 2:
                raise ValueError("sbm.CSR.spmm: a device B must be 2-D (n x k), got shape %s"
                                 % (tuple(shape),))
            k = int(shape[1])
            bp, kb = _device_pointer(ctx, B, np.float64, "B", count=self.n * k)
            if C is None:
                C = DeviceArray.empty(ctx, (self.m, k))
                cp = C._ptr
            else:
                cp, kc = _device_pointer(ctx, C, np.float64, "C", count=self.m * k, writable=True)
            ctx.check(lib.sbm_csr_spmm(ctx._h, float(alpha), self._h, k, lib.SBM_LAYOUT_ROW_MAJOR,
                                       bp, max(k, 1), float(beta), cp, max(k, 1)))
            ctx._done()
            return _like(B, C) if isinstance(C, DeviceArray) else C
        Bh = np.asarray(B, dtype=np.float64)
        if Bh.ndim != 2 or Bh.shape[0] != self.n:
            raise ValueError("sbm.CSR.spmm: B must be %d x k, got shape %s" % (self.n, Bh.shape))
        k = Bh.shape[1]
        fortran = Bh.flags.f_contiguous and not Bh.flags.c_contiguous
        Bh = np.asfortranarray(Bh) if fortran else np.ascontiguousarray(Bh)
        order = "F" if fortran else "C"
        if C is None:
            Ch = np.zeros((self.m, k), order=order)
        else:
            Ch = C
            if not (isinstance(C, np.ndarray) and C.dtype == np.float64 and C.shape == (self.m, k)
                    and (C.flags.f_contiguous if fortran else C.flags.c_contiguous)):
                raise ValueError("sbm.CSR.spmm: C must be a float64 %d x %d array in B's layout "
                                 "(%s order)" % (self.m, k, order))
        layout = lib.SBM_LAYOUT_COL_MAJOR if fortran else lib.SBM_LAYOUT_ROW_MAJOR
        ldb, ldc = (self.n, self.m) if fortran else (k, k)
        if ctx.is_cuda:
            bd = DeviceArray.from_host(ctx, Bh.ravel(order=order))
            cd = DeviceArray.from_host(ctx, Ch.ravel(order=order))
            bptr, cptr = bd._ptr, cd._ptr
        else:
            bptr = ffi.cast("double *", Bh.ctypes.data) if Bh.size else _host_ptr(np.zeros(1))
            cptr = ffi.cast("double *", Ch.ctypes.data) if Ch.size else _host_ptr(np.zeros(1))
        ctx.check(lib.sbm_csr_spmm(ctx._h, float(alpha), self._h, k, layout, bptr, max(ldb, 1),
                                   float(beta), cptr, max(ldc, 1)))
        ctx._done()
        if ctx.is_cuda:
            Ch[...] = cd.get().reshape(Ch.shape, order=order)
        return Ch

    def __matmul__(self, other):
        if isinstance(other, CSR):
            return csr_gemm(self, other)
        o = np.asarray(other) if not _is_device(other) else other
        if getattr(o, "ndim", len(getattr(o, "shape", (0,)))) == 2:
            return self.spmm(o)
        return self.spmv(o)


def read_mtx(path, *, ctx=None):
    """A Matrix Market file (plain, gzip or bzip2) as an sbm CSR matrix."""
    from ._solve import _path
    ctx = _ctx(ctx)
    p = ffi.new("sbm_csr **")
    ctx.check(lib.sbm_csr_read_mtx(ctx._h, _path(path), p))
    ctx._done()
    return CSR._wrap_handle(ctx, p[0])


def csr_gemm(A, B):
    """C = A*B for CSR matrices (plan, execute, destroy the plan)."""
    p = ffi.new("sbm_csr **")
    A.ctx.check(lib.sbm_csr_gemm(A.ctx._h, A._h, B._h, p))
    A.ctx._done()
    return CSR._wrap_handle(A.ctx, p[0])


class CsrGemmPlan:
    """Scalar SpGEMM C = A*B with a plan: the pattern once, execute for new values."""

    def __init__(self, A, B):
        self.ctx, self.A, self.B = A.ctx, A, B
        pp = ffi.new("sbm_csr_plan **")
        pc = ffi.new("sbm_csr **")
        self.ctx.check(lib.sbm_csr_gemm_plan(self.ctx._h, A._h, B._h, pp, pc))
        self._h = pp[0]
        self.C = CSR._wrap_handle(self.ctx, pc[0])
        self.ctx._done()

    def __del__(self):
        try:
            if getattr(self, "_h", None) is not None:
                lib.sbm_csr_gemm_plan_destroy(self._h)
                self._h = None
        except Exception:
            pass

    def execute(self, A=None, B=None):
        A = self.A if A is None else A
        B = self.B if B is None else B
        self.ctx.check(lib.sbm_csr_gemm_execute(self.ctx._h, self._h, A._h, B._h, self.C._h))
        self.ctx._done()
        return self.C


_SPMV_FORMATS = {"auto": 0, "csr-scalar": 1, "csr-vector": 2, "csr-merge": 3, "coo": 4,
                 "ell": 5, "hyb": 6, "dia": 7}


class SpmvPlan:
    """Repeated CSR SpMV from a converted copy of A (format: 'auto', 'csr-scalar', 'csr-vector',
    'csr-merge', 'coo', 'ell', 'hyb', 'dia'); ``update(A)`` refreshes the values."""

    def __init__(self, A, format="auto"):
        if format not in _SPMV_FORMATS:
            raise ValueError("sbm.SpmvPlan: format must be one of %s, not %r"
                             % (", ".join(_SPMV_FORMATS), format))
        self.ctx, self.m, self.n = A.ctx, A.m, A.n
        pp = ffi.new("sbm_spmv_plan **")
        self.ctx.check(lib.sbm_csr_spmv_plan(self.ctx._h, A._h, _SPMV_FORMATS[format], pp))
        self._h = pp[0]
        self.ctx._done()

    def __del__(self):
        try:
            if getattr(self, "_h", None) is not None:
                lib.sbm_spmv_plan_destroy(self._h)
                self._h = None
        except Exception:
            pass

    @property
    def format(self):
        return ffi.string(lib.sbm_spmv_format_name(lib.sbm_spmv_plan_format(self._h))).decode()

    def update(self, A):
        self.ctx.check(lib.sbm_spmv_plan_update(self.ctx._h, self._h, A._h))
        self.ctx._done()

    def execute(self, x, y=None, alpha=1.0, beta=0.0):
        if y is None and beta != 0:
            raise ValueError("sbm.SpmvPlan.execute: beta != 0 needs y")
        xv = _Vec(self.ctx, x, self.n, "x")
        yv = _Vec(self.ctx, y, self.m, "y", out=True)
        self.ctx.check(lib.sbm_spmv_plan_execute(self.ctx._h, self._h, float(alpha), xv.ptr,
                                                 float(beta), yv.ptr))
        self.ctx._done()
        if y is None and isinstance(xv.keep, DeviceArray) and not _is_device(x):
            return yv.keep.get()
        return _like(x, yv.finish()) if y is None else yv.finish()
