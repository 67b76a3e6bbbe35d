"""``Residual``: y = f(x) + x, a skip connection around a few layers.

On the wafer (docs/training.md, "Residual blocks") the skip is a second path from the
layer that produces x to the last layer of ``f``: a fork at one finalizer and a join at
another, with a FIFO of skip vectors in the join's PE memory whose depth the balancing
pass (``ws.balance``) chooses.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from .blocks import block_layers
from .dense import DenseLayer
from .module import Block
from .torch_support import torch_block

__all__ = ["Residual"]


class Residual(Block):
    """y = f(x) + x. ``f``: a ``Linear``, a list of layers or a ``Sequential`` of Linear and
    activation layers (no nested Residual) whose output size equals its input size."""

    def __init__(self, f):
        f = block_layers(f, "Residual", "f")
        dense = f.dense_layers()
        if dense[0].n_in != dense[-1].n_out:
            raise ConfigError(f"Residual: f maps {dense[0].n_in} inputs to {dense[-1].n_out} "
                              "outputs; y = f(x) + x needs them equal")
        self.f = f

    @property
    def features(self) -> int:
        return self.f.dense_layers()[0].n_in

    def __repr__(self) -> str:
        inner = repr(self.f).replace("\n", "\n  ")
        return f"Residual(\n  {inner}\n)"

    def forward(self, x: np.ndarray) -> np.ndarray:
        return (self.f(x) + x).astype(np.float32)

    def dense_block(self, position: int, first: int) -> list[DenseLayer]:
        inner = self.f.dense_layers()
        return [DenseLayer(position, d.linear, d.activation,
                           first if k == len(inner) - 1 else None, act_module=d.act_module)
                for k, d in enumerate(inner)]

    def to_torch(self):
        return torch_block("residual")(self.f.to_torch())
