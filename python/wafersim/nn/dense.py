"""``DenseLayer``: one layer as the wafer maps it, a ``Linear`` with the activation after
it, and where a block's layers read from and join."""

from __future__ import annotations

from dataclasses import dataclass

from .linear import Linear

__all__ = ["DenseLayer", "branch_split"]


@dataclass(frozen=True)
class DenseLayer:
    """One mapped layer: the ``Linear`` at ``position`` of the model and its activation."""

    position: int
    linear: Linear
    activation: str
    #: This layer ends a ``Residual``: the index (in the list of dense layers) of the
    #: residual's first layer, whose input is added to this layer's output. A ``TwoBranch``
    #: join also sets it (to the first layer of branch f).
    skip_from: int | None = None
    #: This layer starts branch g of a ``TwoBranch``: the index of the layer whose output
    #: it reads (the fork), instead of the layer before it (None).
    input_from: int | None = None
    #: The activation layer itself (its parameters, e.g. LeakyReLU's slope); None: identity.
    act_module: object = None

    def source(self, index: int) -> int:
        """Index of the layer whose output this layer (at ``index``) reads; -1: the input."""
        return index - 1 if self.input_from is None else self.input_from

    @property
    def n_in(self) -> int:
        return self.linear.in_features

    @property
    def n_out(self) -> int:
        return self.linear.out_features

    @property
    def has_bias(self) -> bool:
        return self.linear.bias is not None


def branch_split(dense: list[DenseLayer], join: int) -> int | None:
    """For the join of a two-branch block: the index of branch g's first layer (f is
    ``skip_from``..split - 1). None for a residual's join."""
    p = dense[join].skip_from
    for k in range(p + 1, join + 1):
        if dense[k].input_from == p - 1:
            return k
    return None
