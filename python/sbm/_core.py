# SPDX-License-Identifier: BSD-3-Clause
"""The binding: cffi in ABI mode over sbm's public C headers, contexts, errors and array helpers.

The package's ``_lib`` folder holds the shared libraries and ``sbm_cdef.h``, the public headers
run through the C preprocessor at build time (python/CMakeLists.txt), which is what cffi's cdef
reads: the declarations here are the headers', never a copy kept by hand.
"""
import glob
import os
import re
import threading

import cffi
import numpy as np

__all__ = [
    "ffi", "lib", "constants", "SbmError", "Context", "default_context", "has_cuda",
    "cuda_device_count", "DeviceArray", "status_name", "library_version",
]

_LIB_DIR = os.environ.get("SBM_LIBRARY_DIR") or os.path.join(os.path.dirname(__file__), "_lib")


def _find_library(name):
    hits = sorted(glob.glob(os.path.join(_LIB_DIR, "lib%s.so*" % name)) +
                  glob.glob(os.path.join(_LIB_DIR, "lib%s*.dylib" % name)))
    if not hits:
        raise ImportError("sbm: lib%s not found in %s (was the package installed with "
                          "`pip install .` from the repository root?)" % (name, _LIB_DIR))
    return hits[0]


ffi = cffi.FFI()
with open(os.path.join(_LIB_DIR, "sbm_cdef.h")) as _f:
    ffi.cdef(_f.read())
# The CUDA runtime's stream synchronisation, looked up in libsbm's dependencies (a CUDA build
# links libcudart): used to honour the "stream" of a CUDA array interface (version 3).
ffi.cdef("int cudaStreamSynchronize(void *stream);")
# libsbm_ba needs libsbm_io and libsbm (found next to it through its $ORIGIN run path); symbols
# are looked up in the whole dependency tree of the handle.
lib = ffi.dlopen(_find_library("sbm_ba"))


def _read_constants():
    """The public headers' numeric #define's (SBM_VERSION_MAJOR, SBM_GEMM_UPPER, ...)."""
    out = {}
    path = os.path.join(_LIB_DIR, "sbm_macros.h")
    num = re.compile(r"^#define (SBM_\w+) \(?([-+0-9.eExXa-fA-F]+?)[uUlL]*\)?\s*$")
    with open(path) as f:
        for line in f:
            m = num.match(line.strip())
            if not m:
                continue
            text = m.group(2)
            try:
                out[m.group(1)] = int(text, 0)
            except ValueError:
                try:
                    out[m.group(1)] = float(text)
                except ValueError:
                    pass
    return out


constants = _read_constants()
__version__ = "%d.%d.%d" % (constants["SBM_VERSION_MAJOR"], constants["SBM_VERSION_MINOR"],
                            constants["SBM_VERSION_PATCH"])


def library_version():
    """The version of the loaded C library, "MAJOR.MINOR.PATCH" (sbm_version())."""
    return _str(lib.sbm_version())


def _str(p):
    return "" if p == ffi.NULL else ffi.string(p).decode("utf-8", "replace")


def status_name(status):
    """The enum name of an sbm_status value ("SBM_ERR_PARSE")."""
    return _str(lib.sbm_status_name(status))


# ---- errors ------------------------------------------------------------------------------------

class SbmError(Exception):
    """A failed sbm call: ``status`` (int), ``status_name`` ("SBM_ERR_..."), ``message`` (the
    context's last error, naming the call, the argument and the values). The subclass says which
    status; several also derive from the matching builtin (ValueError, MemoryError, OSError...)."""

    def __init__(self, status, message):
        self.status = int(status)
        self.status_name = status_name(status)
        self.message = message
        super().__init__("%s: %s" % (self.status_name, message))


def _camel(name):
    return "".join(w.capitalize() for w in name.split("_"))


# status name -> (class name, extra builtin base)
_ERROR_BASES = {
    "SBM_ERR_NULL_ARGUMENT": ValueError, "SBM_ERR_INVALID_ARGUMENT": ValueError,
    "SBM_ERR_DIMENSION_MISMATCH": ValueError, "SBM_ERR_BLOCK_SHAPE": ValueError,
    "SBM_ERR_INVALID_POINTERS": ValueError, "SBM_ERR_INDEX_OUT_OF_RANGE": ValueError,
    "SBM_ERR_UNSORTED_INDICES": ValueError, "SBM_ERR_DUPLICATE_INDICES": ValueError,
    "SBM_ERR_NOT_FINITE": ValueError, "SBM_ERR_OVERFLOW": OverflowError,
    "SBM_ERR_OUT_OF_MEMORY": MemoryError, "SBM_ERR_NOT_POSITIVE_DEFINITE": ArithmeticError,
    "SBM_ERR_BACKEND_MISMATCH": ValueError, "SBM_ERR_PLAN_MISMATCH": ValueError,
    "SBM_ERR_ALIASING": ValueError, "SBM_ERR_NOT_SUPPORTED": NotImplementedError,
    "SBM_ERR_NO_DEVICE": RuntimeError, "SBM_ERR_CUDA": RuntimeError, "SBM_ERR_IO": OSError,
    "SBM_ERR_PARSE": ValueError,
}
_ERRORS = {}  # status value -> class
_error_names = []
for _v in range(-1, -64, -1):
    _name = status_name(_v)
    if _name == "SBM_UNKNOWN_STATUS":
        break
    # SBM_ERR_IO -> IoError; SBM_ERR_OVERFLOW would shadow the builtin OverflowError (its base)
    _cls_name = "SizeOverflowError" if _name == "SBM_ERR_OVERFLOW" else \
        _camel(_name[len("SBM_ERR_"):]) + "Error"
    _base = _ERROR_BASES.get(_name)
    _cls = type(_cls_name, (SbmError,) + ((_base,) if _base else ()),
                {"__doc__": "%s: %s" % (_name, _str(lib.sbm_status_description(_v))),
                 "__module__": "sbm"})
    _ERRORS[_v] = _cls
    globals()[_cls_name] = _cls
    _error_names.append(_cls_name)
__all__ += _error_names


def _error(status, message):
    return _ERRORS.get(int(status), SbmError)(status, message)


# ---- contexts ----------------------------------------------------------------------------------

def has_cuda():
    """True if the library was built with the CUDA backend."""
    return bool(lib.sbm_has_cuda())


def cuda_device_count():
    """Usable CUDA devices (0 without the CUDA backend or without a GPU)."""
    return int(lib.sbm_cuda_device_count())


class Context:
    """An sbm context: a backend ("cpu" or "cuda") and, for CUDA, a device and a stream.

    Every matrix lives in one context's memory (host for CPU, device for CUDA). On a CUDA
    context every operation of this package waits for its work before returning (so results can
    be read at once by CuPy or PyTorch on any stream); ``synchronize=False`` leaves that to the
    caller (``ctx.synchronize()``)."""

    def __init__(self, backend="cpu", device=0, synchronize=True):
        names = {"cpu": lib.SBM_BACKEND_CPU, "cuda": lib.SBM_BACKEND_CUDA}
        if backend not in names:
            raise ValueError("sbm.Context: backend must be 'cpu' or 'cuda', not %r" % (backend,))
        p = ffi.new("sbm_ctx **")
        st = lib.sbm_ctx_create(p, names[backend], int(device))
        if st != 0:
            raise _error(st, _str(lib.sbm_ctx_last_error(ffi.NULL)))
        self._h = p[0]
        self.backend = backend
        self.device = int(device) if backend == "cuda" else 0
        self.auto_synchronize = bool(synchronize)
        self._stream_owner = None

    @property
    def is_cuda(self):
        return self.backend == "cuda"

    def close(self):
        """Destroy the context now (matrices made in it must be gone first)."""
        h, self._h = getattr(self, "_h", None), None
        if h is not None and lib is not None:
            lib.sbm_ctx_destroy(h)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return "sbm.Context(%r, device=%d)" % (self.backend, self.device)

    def check(self, status):
        """Raise the SbmError subclass of a failed status with the context's message."""
        if status != 0:
            raise _error(status, _str(lib.sbm_ctx_last_error(self._h)))

    def synchronize(self):
        self.check(lib.sbm_ctx_synchronize(self._h))

    def _done(self):
        if self.is_cuda and self.auto_synchronize:
            self.synchronize()

    def set_stream(self, stream):
        """Run the context's work on a CUDA stream: a raw handle (int), a CuPy stream (.ptr) or a
        PyTorch stream (.cuda_stream); None for the legacy default stream. The stream object is
        kept alive by the context."""
        if stream is None:
            ptr = 0
        elif isinstance(stream, int):
            ptr = stream
        elif hasattr(stream, "cuda_stream"):
            ptr = int(stream.cuda_stream)
        elif hasattr(stream, "ptr"):
            ptr = int(stream.ptr)
        else:
            raise TypeError("sbm.Context.set_stream: expected an int, a CuPy or a PyTorch stream")
        self.check(lib.sbm_ctx_set_stream(self._h, ffi.cast("struct CUstream_st *", ptr)))
        self._stream_owner = stream

    @property
    def stream(self):
        return int(ffi.cast("uintptr_t", lib.sbm_ctx_stream(self._h)))

    @property
    def memory_budget(self):
        return int(lib.sbm_ctx_memory_budget(self._h))

    @memory_budget.setter
    def memory_budget(self, nbytes):
        self.check(lib.sbm_ctx_set_memory_budget(self._h, int(nbytes)))

    @property
    def last_error(self):
        return _str(lib.sbm_ctx_last_error(self._h))


_default = {}
_default_lock = threading.Lock()


def default_context():
    """The package's CPU context, made on first use (one per thread: sbm contexts are not shared
    between threads)."""
    key = threading.get_ident()
    with _default_lock:
        ctx = _default.get(key)
        if ctx is None:
            ctx = _default[key] = Context("cpu")
        return ctx


def _ctx(ctx):
    if ctx is None:
        return default_context()
    if isinstance(ctx, Context):
        return ctx
    if ctx in ("cpu", "cuda"):
        raise TypeError("sbm: pass an sbm.Context, not the string %r (sbm.Context(%r))" % (ctx, ctx))
    raise TypeError("sbm: expected an sbm.Context, got %s" % type(ctx).__name__)


# ---- arrays --------------------------------------------------------------------------------------

_TYPESTR = {np.dtype(np.float64): "<f8", np.dtype(np.int64): "<i8", np.dtype(np.int32): "<i4",
            np.dtype(np.uint8): "|u1"}
_CTYPE = {np.dtype(np.float64): "double *", np.dtype(np.int64): "int64_t *",
          np.dtype(np.int32): "int32_t *", np.dtype(np.uint8): "unsigned char *"}


class _HostView:
    """numpy's view of memory owned by an sbm object; the array's .base keeps the owner alive."""

    def __init__(self, owner, ptr, shape, dtype, readonly):
        self._owner = owner
        self.__array_interface__ = {
            "shape": tuple(int(s) for s in shape), "typestr": _TYPESTR[np.dtype(dtype)],
            "data": (int(ffi.cast("uintptr_t", ptr)), bool(readonly)), "version": 3}


def _host_view(owner, ptr, shape, dtype, readonly=False):
    dtype = np.dtype(dtype)
    if int(np.prod(shape)) == 0 or ptr == ffi.NULL:
        out = np.zeros(shape, dtype)
        out.flags.writeable = not readonly
        return out
    return np.asarray(_HostView(owner, ptr, shape, dtype, readonly))


class DeviceArray:
    """A dense array in a CUDA context's memory, shown through ``__cuda_array_interface__`` (so
    ``cupy.asarray(a)`` and ``torch.as_tensor(a, device="cuda")`` take it without a copy).
    Either owned (made by sbm_array_create, freed with this object) or a view of an sbm matrix
    (which it keeps alive). ``get()`` copies it to a numpy array."""

    def __init__(self, ctx, ptr, shape, dtype, owner=None, owned=False, readonly=False):
        self.ctx = ctx
        self._ptr = ptr
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self._owner = owner
        self._owned = owned
        self._readonly = readonly
        self.strides = None        # bytes per step of each axis; None: C-contiguous

    @classmethod
    def empty(cls, ctx, shape):
        """An owned array of doubles in ctx's memory (contents undefined)."""
        n = int(np.prod(shape))
        p = ffi.new("double **")
        ctx.check(lib.sbm_array_create(ctx._h, n, p))
        return cls(ctx, p[0], shape, np.float64, owned=True)

    @classmethod
    def from_host(cls, ctx, array):
        a = np.ascontiguousarray(array, dtype=np.float64)
        out = cls.empty(ctx, a.shape)
        ctx.check(lib.sbm_array_upload(ctx._h, out._ptr, ffi.from_buffer("double[]", a), a.size))
        return out

    def __del__(self):
        try:
            if self._owned and self._ptr is not None and self.ctx._h is not None:
                lib.sbm_array_destroy(self.ctx._h, self._ptr)
                self._ptr = None
        except Exception:
            pass

    @property
    def size(self):
        return int(np.prod(self.shape))

    @property
    def ptr(self):
        return int(ffi.cast("uintptr_t", self._ptr))

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": _TYPESTR[self.dtype],
                "data": (self.ptr if self.size else 0, self._readonly), "version": 3,
                "strides": self.strides, "stream": None}

    def get(self):
        """A numpy copy."""
        if self.dtype != np.float64:
            raise TypeError("sbm.DeviceArray.get: only arrays of doubles can be downloaded; "
                            "copy the matrix to a CPU context instead")
        fortran = self.strides is not None and len(self.shape) == 2 and \
            tuple(self.strides) == (8, 8 * self.shape[0])
        out = np.empty(self.shape, np.float64, order="F" if fortran else "C")
        if self.size:
            self.ctx.check(lib.sbm_array_download(self.ctx._h, ffi.cast("double *", out.ctypes.data),
                                                  ffi.cast("double *", self._ptr), self.size))
        return out

    def __repr__(self):
        return "sbm.DeviceArray(shape=%s, dtype=%s, device=%d)" % (self.shape, self.dtype,
                                                                   self.ctx.device)


_KDLCUDA = 2


def _is_device(obj):
    """A CUDA array: __cuda_array_interface__ (CuPy, PyTorch, Numba), or DLPack on a CUDA device
    (JAX...)."""
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    if isinstance(obj, np.ndarray) or not hasattr(obj, "__dlpack_device__"):
        return False
    try:
        return int(obj.__dlpack_device__()[0]) == _KDLCUDA
    except Exception:
        return False


_dl = cffi.FFI()
_dl.cdef("""
typedef struct { int32_t device_type; int32_t device_id; } DLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct { void *data; DLDevice device; int32_t ndim; DLDataType dtype; int64_t *shape;
                 int64_t *strides; uint64_t byte_offset; } DLTensor;
typedef struct { DLTensor dl_tensor; void *manager_ctx; void (*deleter)(void *); } DLManagedTensor;
""")


def _dlpack_interface(ctx, obj):
    """A __cuda_array_interface__-like dict for a DLPack array on a CUDA device, and the capsule
    that keeps its memory alive (its producer frees it with the capsule). The producer is asked
    to order its work before sbm's stream (the DLPack stream argument)."""
    import ctypes
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    try:
        cap = obj.__dlpack__(stream=ctx.stream if ctx.stream else 1)
    except TypeError:
        cap = obj.__dlpack__()
    t = _dl.cast("DLManagedTensor *", get(cap, b"dltensor")).dl_tensor
    if t.device.device_type != _KDLCUDA:
        raise ValueError("sbm: the DLPack array is not on a CUDA device")
    kinds = {0: "i", 1: "u", 2: "f"}
    if t.dtype.lanes != 1 or t.dtype.code not in kinds:
        raise TypeError("sbm: unsupported DLPack type (code %d, %d bits, %d lanes)"
                        % (t.dtype.code, t.dtype.bits, t.dtype.lanes))
    shape = tuple(int(t.shape[i]) for i in range(t.ndim))
    itemsize = t.dtype.bits // 8
    strides = None if t.strides == _dl.NULL else \
        tuple(int(t.strides[i]) * itemsize for i in range(t.ndim))
    ptr = int(_dl.cast("uintptr_t", t.data)) + int(t.byte_offset)
    iface = {"shape": shape, "typestr": "<%s%d" % (kinds[t.dtype.code], itemsize),
             "data": (ptr, False), "strides": strides, "version": 3, "stream": None,
             "device": int(t.device.device_id)}
    return iface, cap


def _cuda_interface(ctx, obj):
    """(interface dict, keep-alive) of a device array, from __cuda_array_interface__ or DLPack."""
    if hasattr(obj, "__cuda_array_interface__"):
        return obj.__cuda_array_interface__, obj
    return _dlpack_interface(ctx, obj)


def _sync_foreign_stream(ctx, iface):
    """CUDA array interface v3: work on the producer's stream must be complete before sbm reads
    the array. 1 (legacy default stream) orders itself with sbm's default stream; anything else
    is waited for."""
    s = iface.get("stream")
    if s is None or s == 0:
        return
    if s == 1 and ctx.stream == 0:
        return
    err = _cuda_stream_synchronize(2 if s == 2 else s)
    if err != 0:
        raise RuntimeError("sbm: cudaStreamSynchronize on the array's stream failed (error %d)" % err)


_cudart = []


def _cuda_stream_synchronize(stream):
    """cudaStreamSynchronize from the CUDA runtime libsbm links, else a libcudart on the path."""
    if not _cudart:
        try:
            _cudart.append(lib.cudaStreamSynchronize)
        except AttributeError:
            import ctypes
            for name in ("libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"):
                try:
                    f = ctypes.CDLL(name).cudaStreamSynchronize
                    f.argtypes = [ctypes.c_void_p]
                    _cudart.append(f)
                    break
                except OSError:
                    continue
            else:
                raise RuntimeError("sbm: the array is on another CUDA stream and no CUDA runtime "
                                   "was found to wait for it; synchronise it first")
    f = _cudart[0]
    return f(ffi.cast("void *", stream)) if f is not None and not hasattr(f, "argtypes") \
        else f(stream)


def _like(x, result):
    """result (a DeviceArray) as the kind of array x is: a CuPy array for CuPy, a PyTorch tensor
    for PyTorch (both without a copy: they read its __cuda_array_interface__ and keep it alive),
    else the DeviceArray itself."""
    if not isinstance(result, DeviceArray):
        return result
    mod = type(x).__module__.split(".")[0]
    if mod == "cupy":
        import cupy
        return cupy.asarray(result)
    if mod == "torch":
        import torch
        return torch.as_tensor(result, device=x.device)
    return result


def _device_pointer(ctx, obj, dtype, name, count=None, writable=False):
    """(pointer cdata, keep-alive) for a device array (__cuda_array_interface__ or DLPack): dtype exact,
    C-contiguous, in ctx's device, count elements when given."""
    if not ctx.is_cuda:
        raise ValueError("sbm: %s is a device array but the context is %r; use a CUDA context "
                         "or a numpy array" % (name, ctx.backend))
    iface, keep = _cuda_interface(ctx, obj)
    dtype = np.dtype(dtype)
    if np.dtype(iface["typestr"]) != dtype:
        raise TypeError("sbm: %s must be a device array of %s, got %s (convert it on the device "
                        "first, e.g. .astype)" % (name, dtype, np.dtype(iface["typestr"])))
    shape = tuple(iface["shape"])
    strides = iface.get("strides")
    if strides is not None:
        expect, acc = [], dtype.itemsize
        for s in reversed(shape):
            expect.insert(0, acc)
            acc *= s
        if any(st != e for st, e, n in zip(strides, expect, shape) if n > 1):
            raise ValueError("sbm: %s must be C-contiguous on the device" % name)
    if writable and iface["data"][1]:
        raise ValueError("sbm: %s is read-only" % name)
    n = int(np.prod(shape))
    if count is not None and n != count:
        raise ValueError("sbm: %s has %d elements, %d expected" % (name, n, count))
    dev = iface.get("device", _object_device(obj))
    if dev is not None and dev != ctx.device:
        raise ValueError("sbm: %s is on CUDA device %d, the context on device %d"
                         % (name, dev, ctx.device))
    _sync_foreign_stream(ctx, iface)
    return ffi.cast(_CTYPE[dtype], iface["data"][0]), (obj, keep)


def _object_device(obj):
    d = getattr(obj, "device", None)
    for attr in ("id", "index"):     # CuPy: device.id; PyTorch: device.index
        v = getattr(d, attr, None)
        if isinstance(v, int):
            return v
    return None


def _host_array(a, dtype, name, count=None, copy_ok=True, writable=False):
    """A C-contiguous numpy array of dtype (converted, with a copy, only where it must be)."""
    if _is_device(a) and not isinstance(a, np.ndarray):
        raise ValueError("sbm: %s is a device array; a CPU context needs host (numpy) arrays"
                         % name)
    arr = np.asarray(a)
    if arr.dtype != dtype or not arr.flags.c_contiguous:
        if not copy_ok:
            raise ValueError("sbm: %s must be a C-contiguous array of %s to be used without a "
                             "copy, got %s" % (name, np.dtype(dtype), arr.dtype))
        if dtype == np.int32 and arr.dtype.kind in "iu" and arr.size and \
                (arr.max() > np.iinfo(np.int32).max or arr.min() < np.iinfo(np.int32).min):
            raise OverflowError("sbm: %s has values outside int32 (sbm's indices are 32-bit)"
                                % name)
        arr = np.ascontiguousarray(arr, dtype=dtype)
    if writable and not arr.flags.writeable:
        raise ValueError("sbm: %s is read-only" % name)
    if count is not None and arr.size != count:
        raise ValueError("sbm: %s has %d elements, %d expected" % (name, arr.size, count))
    return arr


def _host_ptr(arr):
    return ffi.cast(_CTYPE[arr.dtype], arr.ctypes.data) if arr.size else \
        ffi.cast(_CTYPE[arr.dtype], ffi.from_buffer(_dummy[arr.dtype]))


_dummy = {np.dtype(t): np.zeros(1, t) for t in (np.float64, np.int64, np.int32, np.uint8)}
