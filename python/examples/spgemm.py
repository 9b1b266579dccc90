# SPDX-License-Identifier: BSD-3-Clause
"""Block SpGEMM with a plan: the BA-shaped product S = U - W W^T (9x3 blocks of W, 9x9 of U),
planned once and re-executed with new values, checked against scipy.

    python python/examples/spgemm.py [--gpu]
"""
import sys

import numpy as np

import sbm

ctx = sbm.Context("cuda") if "--gpu" in sys.argv else sbm.Context("cpu")
rng = np.random.default_rng(0)
cameras, points = 20, 400

# W (cameras x points, 9x3 blocks): each point seen by 3 cameras
point = np.repeat(np.arange(points), 3)
camera = np.concatenate([rng.choice(cameras, 3, replace=False) for _ in range(points)])
Wh = sbm.CBC.from_triplets(cameras, points, camera, point, rng.standard_normal((point.size, 9, 3)))
U = sbm.CBC.from_triplets(cameras, cameras, range(cameras), range(cameras),
                          np.repeat(100 * np.eye(9)[None], cameras, 0)).copy(ctx)
W = Wh.copy(ctx)          # in the context's memory (the device for --gpu)

plan = sbm.GemmPlan(W, W, op_b="T", U=U, upper=True)     # symbolic phase, once
print("plan:", plan.info)
for it in range(3):                                       # numeric phase, every iteration
    if it:                                                # new values, same pattern
        Wh.values[:] *= 0.5
        W = Wh.copy(ctx)
    S = plan.execute(alpha=-1.0, A=W, B=W)
    Wd, Ud = W.to_dense(), U.to_dense()
    upper = np.kron(np.triu(np.ones((cameras, cameras))), np.ones((9, 9)))   # block triangle
    err = np.abs(S.to_dense() - (Ud - Wd @ Wd.T) * upper).max()
    print("execute %d: S has %d blocks of %dx%d, max |S - dense| = %.2e" % (
        it, S.nnzb, *S.block_shape, err))
    assert err < 1e-10

B = S.to_bsr()                                            # to scipy, indices int32
print("scipy:", type(B).__name__, B.blocksize, B.indptr.dtype, B.indices.dtype)

