# SPDX-License-Identifier: BSD-3-Clause
"""CBC and CSR matrices: construction, views without copies, scipy.sparse interop both ways in
both index widths, empty matrices, errors."""
import numpy as np
import pytest
import scipy.sparse as sp

import sbm
from conftest import random_bsr

SHAPES = [(r, c) for r in range(1, 9) for c in range(1, 9)]


@pytest.mark.parametrize("r,c", SHAPES)
def test_bsr_round_trip_every_block_shape(rng, r, c):
    M = random_bsr(rng, 5, 4, r, c)
    A = sbm.CBC.from_bsr(M)
    assert A.block_shape == (r, c) and A.nb == (5, 4) and A.shape == M.shape
    assert A.nnzb == M.nnz // (r * c)
    np.testing.assert_array_equal(A.to_dense(), M.toarray())
    for d in (np.int32, np.int64):
        B = A.to_bsr(index_dtype=d)
        assert B.format == "bsr" and B.blocksize == (r, c)
        assert B.indptr.dtype == d and B.indices.dtype == d
        np.testing.assert_array_equal(B.toarray(), M.toarray())
        np.testing.assert_array_equal(B.indptr, M.indptr)
        np.testing.assert_array_equal(B.indices, M.indices)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_from_bsr_either_index_width(rng, index_dtype):
    M = random_bsr(rng, 7, 9, 3, 2, index_dtype=index_dtype)
    M.indptr = M.indptr.astype(index_dtype)
    M.indices = M.indices.astype(index_dtype)
    A = sbm.CBC.from_bsr(M)
    np.testing.assert_array_equal(A.to_dense(), M.toarray())
    assert A.colptr.dtype == np.int64 and A.rowind.dtype == np.int32


def test_from_bsr_non_canonical_is_summed(rng):
    data = np.ones((3, 2, 2))
    M = sp.bsr_array((data, np.array([1, 0, 1]), np.array([0, 3, 3])), shape=(4, 4))
    assert not M.has_canonical_format
    A = sbm.CBC.from_bsr(M)
    np.testing.assert_array_equal(A.to_dense(), M.toarray())
    assert A.nnzb == 2


def test_from_scipy_other_formats(rng):
    M = sp.random_array((12, 8), density=0.3, rng=rng, format="coo")
    A = sbm.CBC.from_scipy(M, blocksize=(3, 2))
    np.testing.assert_array_equal(A.to_dense(), M.toarray())
    assert sbm.CBC.from_scipy(M).block_shape == (1, 1)
    with pytest.raises(ValueError, match="not made of 5x2 blocks"):
        sbm.CBC.from_scipy(M, blocksize=(5, 2))


def test_from_arrays_copy_and_wrap(rng):
    colptr = np.array([0, 2, 3], np.int64)
    rowind = np.array([0, 2, 1], np.int32)
    values = rng.standard_normal(3 * 2 * 3)
    A = sbm.CBC.from_arrays(3, 2, 2, 3, colptr, rowind, values)          # copied
    W = sbm.CBC.from_arrays(3, 2, 2, 3, colptr, rowind, values, copy=False)
    assert not np.shares_memory(A.values, values)
    assert np.shares_memory(W.values, values) and np.shares_memory(W.colptr, colptr)
    np.testing.assert_array_equal(A.to_dense(), W.to_dense())
    values[0] = 42.0       # the wrapped matrix sees the caller's array
    assert W.to_dense()[0, 0] == 42.0 and A.to_dense()[0, 0] != 42.0
    # blocks are column-major: block 0 of column 0 is values[0:6] as a 2x3 Fortran array
    np.testing.assert_array_equal(W.blocks[0], values[:6].reshape(3, 2).T)
    # the (nnzb, r, c) form of values is accepted too
    B = sbm.CBC.from_arrays(3, 2, 2, 3, colptr, rowind, W.blocks.copy())
    np.testing.assert_array_equal(B.to_dense(), W.to_dense())


def test_wrap_refuses_what_needs_a_copy():
    with pytest.raises(ValueError, match="without a copy"):
        sbm.CBC.from_arrays(1, 1, 1, 1, np.array([0, 1], np.int32), np.array([0], np.int32),
                            np.ones(1), copy=False)
    with pytest.raises(ValueError, match="without a copy"):
        sbm.CSR.from_arrays(1, 1, np.array([0, 1]), np.array([0], np.int64), np.ones(1),
                            copy=False)


def test_views_keep_the_matrix_alive(rng):
    A, _ = sbm.CBC.from_bsr(random_bsr(rng, 4, 4, 2, 2)), None
    v = A.values
    dense = A.to_dense()
    del A
    import gc
    gc.collect()
    assert v.sum() == pytest.approx(dense.sum())


def test_blocks_view_writes_the_matrix(rng):
    A = sbm.CBC.from_bsr(random_bsr(rng, 3, 3, 2, 3, density=1.0))
    A.blocks[...] = 1.0
    np.testing.assert_array_equal(A.to_dense(), np.ones((6, 9)))


def test_from_triplets_sums_duplicates(rng):
    blocks = rng.standard_normal((4, 3, 2))
    A = sbm.CBC.from_triplets(2, 3, [0, 1, 0, 0], [2, 0, 2, 1], blocks)
    D = np.zeros((6, 6))
    D[0:3, 4:6] = blocks[0] + blocks[2]
    D[3:6, 0:2] = blocks[1]
    D[0:3, 2:4] = blocks[3]
    np.testing.assert_allclose(A.to_dense(), D, rtol=0, atol=1e-15)
    assert A.nnzb == 3


def test_transpose_reblock_add_copy(rng):
    M = random_bsr(rng, 4, 5, 3, 2)
    A = sbm.CBC.from_bsr(M)
    np.testing.assert_array_equal(A.T.to_dense(), M.toarray().T)
    np.testing.assert_array_equal(A.reblock(1, 1).to_dense(), M.toarray())
    np.testing.assert_allclose(A.add(A, 2.0, -0.5).to_dense(), 1.5 * M.toarray())
    C = A.copy()
    C.values[:] = 0
    assert A.to_dense().any()
    S = A.to_csr()
    assert isinstance(S, sbm.CSR)
    np.testing.assert_array_equal(S.to_dense(), M.toarray())
    np.testing.assert_array_equal(S.to_cbc(3, 2).to_dense(), M.toarray())


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_csr_scipy_round_trip_converts_one_index_array(rng, index_dtype):
    M = sp.random_array((30, 20), density=0.2, rng=rng, format="csr")
    M.indptr = M.indptr.astype(index_dtype)
    M.indices = M.indices.astype(index_dtype)
    A = sbm.CSR.from_scipy(M)
    np.testing.assert_array_equal(A.to_dense(), M.toarray())
    # values are shared, not copied; of the index arrays only the one of the wrong width is new
    assert np.shares_memory(A.values, M.data)
    if index_dtype == np.int64:
        assert np.shares_memory(A.rowptr, M.indptr) and not np.shares_memory(A.colind, M.indices)
    else:
        assert np.shares_memory(A.colind, M.indices) and not np.shares_memory(A.rowptr, M.indptr)
    for d in (np.int32, np.int64):
        B = A.to_scipy(index_dtype=d)
        assert B.indptr.dtype == d and B.indices.dtype == d
        np.testing.assert_array_equal(B.toarray(), M.toarray())
        assert np.shares_memory(B.data, A.values)
        assert np.shares_memory(B.indices, A.colind) == (d == np.int32)
        assert np.shares_memory(B.indptr, A.rowptr) == (d == np.int64)
    assert not np.shares_memory(A.to_scipy(copy=True).data, A.values)


def test_csr_from_triplets_and_other_formats(rng):
    A = sbm.CSR.from_triplets(3, 4, [0, 2, 0], [1, 3, 1], [1.0, 2.0, 3.0])
    assert A.nnz == 2
    np.testing.assert_array_equal(A.to_dense(), [[0, 4, 0, 0], [0, 0, 0, 0], [0, 0, 0, 2]])
    M = sp.random_array((6, 7), density=0.5, rng=rng, format="coo")
    np.testing.assert_array_equal(sbm.CSR.from_scipy(M).to_dense(), M.toarray())
    np.testing.assert_array_equal(A.T.to_dense(), A.to_dense().T)


def test_empty_matrices():
    for nbr, nbc in [(0, 0), (0, 3), (3, 0), (2, 2)]:
        A = sbm.CBC.from_arrays(nbr, nbc, 3, 2, np.zeros(nbc + 1, np.int64),
                                np.zeros(0, np.int32))
        assert A.nnzb == 0 and A.shape == (3 * nbr, 2 * nbc)
        assert A.values.shape == (0,) and A.blocks.shape == (0, 3, 2)
        np.testing.assert_array_equal(A.to_dense(), np.zeros(A.shape))
        B = A.to_bsr()
        assert B.shape == A.shape and B.nnz == 0 and B.blocksize == (3, 2)
        assert sbm.CBC.from_bsr(B).nnzb == 0
        S = sbm.CSR.from_arrays(nbr, nbc, np.zeros(nbr + 1, np.int64), np.zeros(0, np.int32),
                                np.zeros(0))
        assert S.nnz == 0 and S.to_scipy().shape == (nbr, nbc)


def test_invalid_arrays_raise_with_sbm_message():
    with pytest.raises(sbm.UnsortedIndicesError) as e:
        sbm.CBC.from_arrays(3, 1, 1, 1, [0, 2], [2, 1], [1.0, 2.0])
    assert e.value.status_name == "SBM_ERR_UNSORTED_INDICES"
    assert e.value.status == -7
    assert "sbm_cbc_create" in e.value.message
    assert str(e.value).startswith("SBM_ERR_UNSORTED_INDICES: ")
    assert isinstance(e.value, ValueError) and isinstance(e.value, sbm.SbmError)
    with pytest.raises(sbm.IndexOutOfRangeError, match="SBM_ERR_INDEX_OUT_OF_RANGE"):
        sbm.CSR.from_arrays(2, 2, [0, 1, 1], [5], [1.0])
    with pytest.raises(sbm.InvalidPointersError):
        sbm.CSR.from_arrays(2, 2, [0, 2, 1], [0, 1], [1.0, 2.0])
    with pytest.raises(sbm.BlockShapeError, match="SBM_ERR_BLOCK_SHAPE"):
        sbm.CBC.from_arrays(1, 1, 0, 1, [0, 0], np.zeros(0, np.int32))
    with pytest.raises(sbm.NotFiniteError, match="SBM_ERR_NOT_FINITE"):
        sbm.CBC.from_arrays(1, 1, 1, 1, [0, 1], [0], [np.nan]).check(check_finite=True)
    with pytest.raises(OverflowError, match="outside int32"):
        sbm.CSR.from_arrays(1, 1, [0, 1], np.array([2**40]), [1.0])


def test_error_classes_cover_every_status():
    names = [sbm.status_name(s) for s in range(-1, -21, -1)]
    assert "SBM_UNKNOWN_STATUS" not in names
    for s, name in zip(range(-1, -21, -1), names):
        cls = sbm._core._ERRORS[s]
        assert issubclass(cls, sbm.SbmError) and cls.__module__ == "sbm"
        assert getattr(sbm, cls.__name__) is cls
    assert issubclass(sbm.IoError, OSError)
    assert issubclass(sbm.OutOfMemoryError, MemoryError)
    assert issubclass(sbm.NotPositiveDefiniteError, ArithmeticError)


def test_context_and_version():
    ctx = sbm.Context("cpu")
    assert not ctx.is_cuda and ctx.last_error == ""
    ctx.memory_budget = 1 << 20
    assert ctx.memory_budget == 1 << 20
    assert sbm.library_version() == sbm.__version__
    import importlib.metadata
    assert importlib.metadata.version("sbm") == sbm.__version__
    with pytest.raises(ValueError, match="backend must be"):
        sbm.Context("tpu")
    with pytest.raises(TypeError, match="sbm.Context"):
        sbm.CBC.from_arrays(1, 1, 1, 1, [0, 0], [], ctx="cpu")
    if not sbm.has_cuda():
        with pytest.raises(sbm.NotSupportedError, match="SBM_ERR_NOT_SUPPORTED"):
            sbm.Context("cuda")
    elif sbm.cuda_device_count() == 0:
        with pytest.raises(sbm.NoDeviceError, match="SBM_ERR_NO_DEVICE"):
            sbm.Context("cuda")


def test_matrices_of_two_contexts_do_not_mix(rng):
    A = sbm.CBC.from_bsr(random_bsr(rng, 3, 3, 2, 2), ctx=sbm.Context())
    B = A.copy(sbm.Context())
    C = sbm.gemm(A, B)    # two CPU contexts: the same memory, allowed
    assert C.nnzb >= 0


class FakeDeviceArray:
    """An object with a CUDA array interface, never dereferenced (checks that need no GPU)."""

    def __init__(self, typestr="<f8", shape=(4,)):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (8, False),
                                         "version": 3, "strides": None}


def test_device_arrays_need_a_cuda_context():
    cpu = sbm.Context("cpu")
    args = (FakeDeviceArray("<i8", (2,)), FakeDeviceArray("<i4", (1,)), FakeDeviceArray())
    with pytest.raises(ValueError, match="device array; a CPU context needs host"):
        sbm.CBC.from_arrays(1, 1, 2, 2, *args, ctx=cpu, copy=False)
    with pytest.raises(ValueError, match="device array; a CPU context needs host"):
        sbm.CSR.from_arrays(1, 1, *args[:2], FakeDeviceArray(shape=(1,)), ctx=cpu)
    A = sbm.CBC.from_arrays(1, 1, 2, 2, [0, 1], [0], np.ones(4))
    with pytest.raises(ValueError, match="device array"):
        A.spmv(FakeDeviceArray(shape=(2,)))


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_bsr_transposed_views_share_the_values(rng, index_dtype):
    M = random_bsr(rng, 5, 7, 3, 2, index_dtype=index_dtype)
    M.indptr = M.indptr.astype(index_dtype)
    M.indices = M.indices.astype(index_dtype)
    A = sbm.CBC.from_bsr_transposed(M)          # A = M^T, on M's arrays
    assert A.block_shape == (2, 3) and A.shape == (14, 15)
    np.testing.assert_array_equal(A.to_dense(), M.toarray().T)
    assert np.shares_memory(A.values, M.data)
    B = A.to_bsr_transposed(index_dtype=index_dtype)   # back to M, sharing A's values
    assert np.shares_memory(B.data, A.values)
    assert B.indptr.dtype == index_dtype and B.indices.dtype == index_dtype
    np.testing.assert_array_equal(B.toarray(), M.toarray())
    M.data[0, 0, 0] = 99.0                      # seen through A
    np.testing.assert_array_equal(A.to_dense(), M.toarray().T)
    assert (A.to_dense() == 99.0).sum() == 1


class DLPackOnly:
    """Exposes only DLPack (as JAX arrays do), claiming a CUDA device, over a host array."""

    def __init__(self, a):
        self.a = a

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()


def test_dlpack_arrays_are_device_arrays():
    f = DLPackOnly(np.zeros(4))
    assert sbm._core._is_device(f) and not sbm._core._is_device(np.zeros(4))
    with pytest.raises(ValueError, match="device array; a CPU context needs host"):
        sbm.CSR.from_arrays(1, 1, f, f, f, ctx=sbm.Context("cpu"))
    # the capsule is parsed: this one says host memory, which a CUDA context refuses
    with pytest.raises(ValueError, match="not on a CUDA device"):
        sbm._core._dlpack_interface(sbm.default_context(), f)
