# SPDX-License-Identifier: BSD-3-Clause
"""Sparse block Cholesky: plan once, factor with several Levenberg-Marquardt dampings, solve,
checked against numpy.

    python python/examples/cholesky.py [--gpu]
"""
import sys

import numpy as np

import sbm

ctx = sbm.Context("cuda") if "--gpu" in sys.argv else sbm.Context("cpu")

rng = np.random.default_rng(1)
nb, b = 50, 6                               # 50 x 50 blocks of 6x6 (3D poses)

# a banded SPD block matrix with a few loop closures, given by its upper block triangle
pairs = [(i, i) for i in range(nb)] + [(i, i + 1) for i in range(nb - 1)] + \
        [(i, j) for i, j in rng.integers(0, nb, (20, 2)) if i < j]
pairs = sorted(set(pairs))
brow, bcol = np.array(pairs).T
full = np.zeros((nb * b, nb * b))
for i, j in pairs:
    blk = rng.standard_normal((b, b))
    full[i * b:(i + 1) * b, j * b:(j + 1) * b] += blk
    full[j * b:(j + 1) * b, i * b:(i + 1) * b] += blk.T
full += (np.abs(full).sum(1).max() + 1) * np.eye(nb * b)
blocks = np.array([full[i * b:(i + 1) * b, j * b:(j + 1) * b] for i, j in pairs])
A = sbm.CBC.from_triplets(nb, nb, brow, bcol, blocks).copy(ctx)   # on the device for --gpu

chol = sbm.Cholesky(A, factor=False)        # ordering (AMD), elimination tree, supernodes
info = chol.info
print("plan: %d supernodes, %d values in L, %.3g flops per factorisation"
      % (info["supernodes"], info["factor_values"], info["flops"]))
rhs = rng.standard_normal((nb * b, 2))
for lam in (0.0, 1e-2, 1.0):
    chol.factor(damping="identity", lam=lam)          # A + lam I, numeric phase only
    x = chol.solve(rhs)
    err = np.abs(x - np.linalg.solve(full + lam * np.eye(nb * b), rhs)).max()
    print("lambda %-5g max |x - numpy| = %.2e" % (lam, err))
    assert err < 1e-10
