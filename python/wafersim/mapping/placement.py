"""Where each layer sits on the wafer: blocks of PEs placed west to east [0287], [0406],
the input and output groups of every PE, and the column finalizers.

Layer l gets a block of R_l rows x C_l columns. Its inputs are split into R_l consecutive
groups I_r and its outputs into C_l groups O_c (``numpy.array_split`` sizes); PE (r, c)
holds W[O_c, I_r] [0400]-[0402]. The finalizer of column c is PE (c, c), so a block needs
C_l <= R_l, and the next layer's rows are this layer's columns (R_{l+1} = C_l, I'_c = O_c):
the activations of column c travel east along row c into the next block's row c.

A residual block (layers p..j, y = f(x) + x) forks at the finalizers of layer p - 1 and
joins at those of layer j: column c's skip runs along row c, so the join's column groups
must be the fork's, and every layer of the block has C x C PEs (C = layer p - 1's columns).
A two-branch block (y = f(x) + g(x), layers p..s-1 = f and s..j = g) keeps the same rule:
both branches lie on the fork's rows, f's blocks then g's, and g's first layer reads the
fork's activations (``DenseLayer.input_from``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from ..values import is_integer
from ..nn.dense import DenseLayer, branch_split

__all__ = ["LayerBlock", "groups", "check_shapes", "residual_blocks", "in_residual",
           "branch_blocks", "branch_split"]


def groups(n: int, k: int) -> list[tuple[int, int]]:
    """(start, count) of ``k`` consecutive groups covering range(n), sizes as array_split."""
    parts = np.array_split(np.arange(n), k)
    return [(int(p[0]), len(p)) for p in parts]


@dataclass(frozen=True)
class LayerBlock:
    """One layer's block of PEs. ``row0, col0``: the wafer position of its PE (0, 0)."""

    index: int
    dense: DenseLayer
    rows: int
    cols: int
    row0: int
    col0: int

    @property
    def in_groups(self) -> list[tuple[int, int]]:
        return groups(self.dense.n_in, self.rows)

    @property
    def out_groups(self) -> list[tuple[int, int]]:
        return groups(self.dense.n_out, self.cols)

    def at(self, r: int, c: int) -> tuple[int, int]:
        """Wafer (row, col) of the block's PE (r, c)."""
        return self.row0 + r, self.col0 + c

    def finalizer(self, c: int) -> tuple[int, int]:
        """Wafer position of the finalizer of column c: the block's PE (c, c)."""
        return self.at(c, c)

    def points(self) -> list[tuple[int, int]]:
        return [self.at(r, c) for r in range(self.rows) for c in range(self.cols)]

    @property
    def rect(self) -> tuple[int, int, int, int]:
        return (self.row0, self.col0, self.rows, self.cols)

    def describe(self) -> str:
        d = self.dense
        return (f"layer {self.index}: Linear({d.n_in}, {d.n_out}) + {d.activation} on "
                f"{self.rows} x {self.cols} PEs at rows {self.row0}..{self.row0 + self.rows - 1}, "
                f"cols {self.col0}..{self.col0 + self.cols - 1}")


def residual_blocks(dense: list[DenseLayer]) -> list[tuple[int, int]]:
    """(first, join) layer indices of every block with a join: ``Residual`` and
    ``TwoBranch`` blocks (``branch_split`` tells them apart)."""
    return [(d.skip_from, j) for j, d in enumerate(dense) if d.skip_from is not None]


def branch_blocks(dense: list[DenseLayer]) -> list[tuple[int, int, int]]:
    """(first, split, join) of every two-branch block: f = first..split-1, g = split..join."""
    out = []
    for p, j in residual_blocks(dense):
        s = branch_split(dense, j)
        if s is not None:
            out.append((p, s, j))
    return out


def in_residual(dense: list[DenseLayer]) -> dict[int, tuple[int, int]]:
    """Layer index -> (first, join) of the residual block holding it."""
    return {i: (p, j) for p, j in residual_blocks(dense) for i in range(p, j + 1)}


def check_shapes(dense: list[DenseLayer], blocks) -> list[tuple[int, int]]:
    """Validated (rows, cols) per layer; ConfigError names the layer and the rule."""
    if isinstance(blocks, (str, bytes)):
        raise ConfigError(f"blocks must be a list of (rows, cols) pairs, got {blocks!r}")
    try:
        pairs = [tuple(p) for p in blocks]
    except TypeError:
        raise ConfigError(f"blocks must be a list of (rows, cols) pairs, got {blocks!r}") from None
    for i, p in enumerate(pairs):
        if len(p) != 2 or not all(is_integer(v) for v in p):
            raise ConfigError(f"blocks[{i}] must be a (rows, cols) pair of integers, got {p!r}")
    shapes = [(int(r), int(c)) for r, c in pairs]
    if len(shapes) != len(dense):
        raise ConfigError(f"blocks gives {len(shapes)} shapes for {len(dense)} layers")
    for i, ((r, c), d) in enumerate(zip(shapes, dense)):
        name = f"layer {i} (Linear({d.n_in}, {d.n_out}))"
        if r < 1 or c < 1:
            raise ConfigError(f"{name}: a block needs at least 1 x 1 PEs, got {r} x {c}")
        if r > d.n_in:
            raise ConfigError(f"{name}: {r} rows for {d.n_in} inputs; every PE row needs at "
                              "least one input")
        if c > d.n_out:
            raise ConfigError(f"{name}: {c} columns for {d.n_out} outputs; every PE column "
                              "needs at least one output")
        if c > r:
            raise ConfigError(f"{name}: {r} x {c} block; a column's finalizer is PE (c, c), so "
                              "a block needs at least as many rows as columns")
        src = d.source(i)
        if i > 0 and r != shapes[src][1]:
            raise ConfigError(f"{name}: {r} rows, but layer {src} has {shapes[src][1]} "
                              "columns; a layer's rows receive the previous layer's columns "
                              "(rows = previous columns)")
        res = in_residual(dense).get(i)
        if res is not None and c != shapes[res[0] - 1][1]:
            p, j = res
            k = shapes[p - 1][1]
            kind = "residual" if branch_split(dense, j) is None else "two-branch"
            raise ConfigError(f"{name} is in the {kind} block of layers {p}..{j}: its block "
                              f"is {r} x {c}, but the layers of a residual block need {k} x {k} "
                              f"PEs (the columns of layer {p - 1}, whose activations the skip "
                              f"carries to layer {j}'s finalizers)")
    return shapes
