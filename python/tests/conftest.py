# SPDX-License-Identifier: BSD-3-Clause
"""Shared fixtures: seeded generators, the repository's data files, dense references."""
import os
import zlib

import numpy as np
import pytest

import sbm

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data")


def data_file(*parts):
    path = os.path.join(DATA, *parts)
    if not os.path.exists(path):
        pytest.skip("data file %s not found (run from a checkout of the repository)" % path)
    return path


@pytest.fixture
def rng(request):
    # one seed per test (its name), the same on every run
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


def random_bsr(rng, nbr, nbc, r, c, density=0.4, index_dtype=np.int32):
    """A scipy bsr_array of nbr x nbc blocks of r x c with a random pattern, canonical."""
    import scipy.sparse as sp
    mask = rng.random((nbr, nbc)) < density
    brow, bcol = np.nonzero(mask)
    data = rng.standard_normal((brow.size, r, c))
    indptr = np.zeros(nbr + 1, index_dtype)
    np.cumsum(np.bincount(brow, minlength=nbr), out=indptr[1:])
    M = sp.bsr_array((data, bcol.astype(index_dtype), indptr), shape=(nbr * r, nbc * c),
                     blocksize=(r, c))
    return M


def random_cbc(rng, nbr, nbc, r, c, density=0.4, ctx=None):
    M = random_bsr(rng, nbr, nbc, r, c, density)
    return sbm.CBC.from_bsr(M, ctx=ctx), M.toarray()


def tol(k):
    """Tolerance of a sum of k products of O(1) values."""
    return 1e-14 * max(k, 1) * 10
