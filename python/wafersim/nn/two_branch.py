"""``TwoBranch``: y = f(x) + g(x), two computed branches from one fork to one join.

On the wafer (docs/training.md, "Two-branch blocks") both branches lie on the rows of the
fork, one after the other from west to east: f's layers, then g's. The fork's activations
run along each row through f's blocks into g's first block (one sparse stream feeds both
branches); f's output goes dense to the join (g's last layer), whose finalizers keep it
in the same FIFO a ``Residual`` uses for x; the balancing pass (``ws.balance``) chooses
its depth. Put the shorter branch first: the FIFO holds f(x) while g computes.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from .blocks import block_layers
from .dense import DenseLayer
from .module import Block
from .torch_support import torch_block

__all__ = ["TwoBranch"]


class TwoBranch(Block):
    """y = f(x) + g(x). ``f``, ``g``: a ``Linear``, a list of layers or a ``Sequential`` of
    Linear and activation layers with the same number of inputs and of outputs."""

    def __init__(self, f, g):
        self.f = block_layers(f, "TwoBranch", "f")
        self.g = block_layers(g, "TwoBranch", "g")
        fd, gd = self.f.dense_layers(), self.g.dense_layers()
        if fd[0].n_in != gd[0].n_in:
            raise ConfigError(f"TwoBranch: f takes {fd[0].n_in} inputs and g {gd[0].n_in}; "
                              "both branches read the same x")
        if fd[-1].n_out != gd[-1].n_out:
            raise ConfigError(f"TwoBranch: f gives {fd[-1].n_out} outputs and g "
                              f"{gd[-1].n_out}; y = f(x) + g(x) needs them equal")

    @property
    def in_features(self) -> int:
        return self.f.dense_layers()[0].n_in

    @property
    def out_features(self) -> int:
        return self.f.dense_layers()[-1].n_out

    def __repr__(self) -> str:
        f = repr(self.f).replace("\n", "\n  ")
        g = repr(self.g).replace("\n", "\n  ")
        return f"TwoBranch(\n  f={f},\n  g={g}\n)"

    def forward(self, x: np.ndarray) -> np.ndarray:
        return (self.f(x) + self.g(x)).astype(np.float32)

    def dense_block(self, position: int, first: int) -> list[DenseLayer]:
        """f's layers, then g's: g's first reads the fork (``input_from``), its last joins."""
        out = [DenseLayer(position, d.linear, d.activation, act_module=d.act_module)
               for d in self.f.dense_layers()]
        inner = self.g.dense_layers()
        out += [DenseLayer(position, d.linear, d.activation,
                           first if k == len(inner) - 1 else None,
                           first - 1 if k == 0 else None, act_module=d.act_module)
                for k, d in enumerate(inner)]
        return out

    def to_torch(self):
        return torch_block("two_branch")(self.f.to_torch(), self.g.to_torch())
