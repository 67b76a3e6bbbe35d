"""The network, blocks and data the reverse-checkpoint tests under CPGD and with sparsity
train (12-10-9-8-4 on 3 x 3 .. 2 x 1 blocks, about a third of the inputs zero), and the
bit-for-bit comparison of two lists of (W, b)."""

from __future__ import annotations

import numpy as np

SIZES, BLOCKS = (12, 10, 9, 8, 4), [(3, 3), (3, 2), (2, 2), (2, 1)]


def rcp_data(n, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, SIZES[0])).astype(np.float32)
    X[X < -0.4] = 0
    return X, rng.uniform(-1, 1, (n, SIZES[-1])).astype(np.float32)


def same_weights(a, b) -> bool:
    """Every W and b equal bit for bit (and as many layers on both sides)."""
    return all(np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1])
               for x, y in zip(a, b, strict=True))
