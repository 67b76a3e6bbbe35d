"""The small network the optimizer, Adam and step tests train (12-7-5-4, ReLU and Sigmoid,
bias everywhere), its blocks and data with about half the inputs zero."""

from __future__ import annotations

import numpy as np

import wafersim as ws

SHAPES = [(3, 2), (2, 2), (2, 1)]


def make_model():
    return ws.nn.Sequential(ws.nn.Linear(12, 7, seed=1), ws.nn.ReLU(),
                            ws.nn.Linear(7, 5, seed=2), ws.nn.Sigmoid(),
                            ws.nn.Linear(5, 4, seed=3))


def data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 12)).astype(np.float32)
    X[X < 0] = 0
    return X, rng.uniform(-1, 1, (n, 4)).astype(np.float32)


def params_of(model):
    return [(d.linear.weight.copy(), d.linear.bias.copy()) for d in model.dense_layers()]


def mlp(sizes, seed: int = 3, act=ws.nn.ReLU):
    """Linear layers between ``sizes`` (layer i's weights from seed ``seed * 10 + i``),
    ``act`` after each but the last."""
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(ws.nn.Linear(sizes[i], sizes[i + 1], seed=seed * 10 + i))
        if i < len(sizes) - 2:
            layers.append(act())
    return ws.nn.Sequential(*layers)


def sparse_inputs(n, n_in, n_out, seed=0):
    """(X, Y): inputs in [0, 1) with about half of them zero (as images are), targets in
    [-1, 1)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, n_in)).astype(np.float32)
    X[X < 0] = 0
    return X, rng.uniform(-1, 1, (n, n_out)).astype(np.float32)
