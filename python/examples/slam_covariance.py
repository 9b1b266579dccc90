# SPDX-License-Identifier: BSD-3-Clause
"""Marginal covariances of a pose graph built from arrays: a 2D square loop with a prior on
its first pose (the gauge) is solved, then each pose's 3 x 3 covariance (x, y, theta) comes
from the sparse block Cholesky's selected inverse (sbm_slam_covariance) and is checked
against the inverse of the dense information matrix Lambda.

    python python/examples/slam_covariance.py [--gpu]
"""
import sys

import numpy as np

import sbm

ctx = sbm.Context("cuda") if "--gpu" in sys.argv else None

# four poses around a unit square, perturbed; odometry edges and one loop closure
truth = np.array([[0, 0, 0], [1, 0, np.pi / 2], [1, 1, np.pi], [0, 1, -np.pi / 2]], float)
start = truth + np.random.default_rng(1).normal(scale=0.1, size=truth.shape)
edge_from, edge_to = [0, 1, 2, 3], [1, 2, 3, 0]
measurements = np.array([[1, 0, np.pi / 2]] * 4)
information = np.repeat(np.diag([100.0, 100.0, 400.0])[None], 4, axis=0)
graph = sbm.PoseGraph.from_arrays(start, edge_from, edge_to, measurements, information,
                                  prior_vertex=[0], prior_measurement=[truth[0]],
                                  prior_information=[np.diag([1e4, 1e4, 1e4])], gauge="refuse")
summary = graph.solve(ctx=ctx)
print(graph, "solved:", summary.stop_reason, "final cost %.3e" % summary.final_cost)

cov, vertices = graph.covariance(ctx=ctx)
for v, c in zip(vertices, cov):
    print("vertex %d: sigma x %.4f  y %.4f  theta %.4f" % ((v,) + tuple(np.sqrt(np.diag(c)))))

# the same blocks from the dense inverse of Lambda (upper block triangle, full diagonal blocks)
Lambda = graph.normal_equations()["Lambda"]
U, d = Lambda.to_dense(), graph.error_dim
strict = np.kron(np.triu(np.ones((Lambda.nbr, Lambda.nbc)), 1), np.ones((d, d)))
full_inverse = np.linalg.inv(U + (U * strict).T)
dense_blocks = np.array([full_inverse[k * d:(k + 1) * d, k * d:(k + 1) * d]
                         for k in range(len(vertices))])
error = np.abs(cov - dense_blocks).max() / np.abs(dense_blocks).max()
print("largest relative difference from the dense inverse: %.1e" % error)
assert error < 1e-10
