# SPDX-License-Identifier: BSD-3-Clause
"""sbm: sparse block matrices on CPU and GPU, from Python.

The block SpGEMM with plans, SpMV/SpMM, the sparse block Cholesky, bundle adjustment and
pose-graph SLAM of the C library sbm, with numpy arrays in and out (without copies where the
layouts allow), scipy.sparse interop, and on a CUDA context device arrays from CuPy or PyTorch
(``__cuda_array_interface__``). See python/README.md in the repository.
"""
from ._core import *  # noqa: F401,F403
from ._core import __all__ as _core_all, __version__
from ._matrix import *  # noqa: F401,F403
from ._matrix import __all__ as _matrix_all
from ._solve import *  # noqa: F401,F403
from ._solve import __all__ as _solve_all
from ._slam import *  # noqa: F401,F403
from ._slam import __all__ as _slam_all

__all__ = _core_all + _matrix_all + _solve_all + _slam_all + ["__version__"]
