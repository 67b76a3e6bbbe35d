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
