"""``Sequential``: a chain of layers, and the dense layers the wafer maps (a ``Linear``
with the activation that follows it)."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from .layers import Activation, Linear, Module

__all__ = ["Sequential", "DenseLayer", "branch_split", "block_layers"]


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


class Sequential(Module):
    """Layers applied in order, like ``torch.nn.Sequential``. The wafer maps each
    ``Linear`` together with the activation right after it (none: identity)."""

    def __init__(self, *layers):
        if len(layers) == 1 and isinstance(layers[0], (list, tuple)):
            layers = tuple(layers[0])
        for i, layer in enumerate(layers):
            if not isinstance(layer, Module) or isinstance(layer, Sequential):
                raise ConfigError(f"Sequential: layer {i} is {layer!r}; supported layers are "
                                  "ws.nn.Linear, ReLU, Sigmoid, Tanh, Identity, Residual and "
                                  "TwoBranch")
        self.layers = list(layers)

    def __repr__(self) -> str:
        inner = "".join(f"\n  ({i}): " + repr(layer).replace("\n", "\n  ")
                        for i, layer in enumerate(self.layers))
        return f"Sequential({inner}\n)"

    def __len__(self) -> int:
        return len(self.layers)

    def __getitem__(self, i):
        return self.layers[i]

    def __iter__(self):
        return iter(self.layers)

    def forward(self, x: np.ndarray) -> np.ndarray:
        for layer in self.layers:
            x = layer(x)
        return x

    def dense_layers(self) -> list[DenseLayer]:
        """The model as the wafer sees it; ConfigError names a layer it cannot map."""
        from .residual import Residual
        from .two_branch import TwoBranch

        out: list[DenseLayer] = []
        pending: tuple[int, Linear] | None = None
        after_block = None          # the kind of block the previous layer was, if any
        for i, layer in enumerate(self.layers):
            if isinstance(layer, Linear):
                if pending is not None:
                    out.append(DenseLayer(pending[0], pending[1], "identity"))
                pending = (i, layer)
            elif isinstance(layer, Activation):
                if pending is None:
                    if after_block:
                        raise ConfigError(f"layer {i} ({layer!r}) follows a {after_block}: an "
                                          "activation of the sum is not mapped; put it inside "
                                          f"the {after_block}")
                    what = "the first layer" if i == 0 else "an activation right after another"
                    raise ConfigError(f"layer {i} ({layer!r}) is {what}; every activation must "
                                      "follow a Linear layer")
                out.append(DenseLayer(pending[0], pending[1], layer.name, act_module=layer))
                pending = None
            elif isinstance(layer, (Residual, TwoBranch)):
                kind = type(layer).__name__
                if pending is not None:
                    out.append(DenseLayer(pending[0], pending[1], "identity"))
                    pending = None
                if not out:
                    raise ConfigError(f"layer {i} ({kind}) is first: its input must come from "
                                      "a layer on the wafer; put a Linear layer before it")
                if after_block:
                    raise ConfigError(f"layer {i} ({kind}) follows another {after_block}; put a "
                                      "Linear layer between them")
                first = len(out)
                if isinstance(layer, Residual):
                    inner = layer.f.dense_layers()
                    for k, d in enumerate(inner):
                        out.append(DenseLayer(i, d.linear, d.activation,
                                              first if k == len(inner) - 1 else None,
                                              act_module=d.act_module))
                else:
                    for d in layer.f.dense_layers():
                        out.append(DenseLayer(i, d.linear, d.activation, act_module=d.act_module))
                    inner = layer.g.dense_layers()
                    for k, d in enumerate(inner):
                        out.append(DenseLayer(i, d.linear, d.activation,
                                              first if k == len(inner) - 1 else None,
                                              first - 1 if k == 0 else None,
                                              act_module=d.act_module))
            else:
                raise ConfigError(f"layer {i} ({layer!r}) is not supported on the wafer")
            after_block = type(layer).__name__ if isinstance(layer, (Residual, TwoBranch)) else None
        if pending is not None:
            out.append(DenseLayer(pending[0], pending[1], "identity"))
        if not out:
            raise ConfigError("the model has no Linear layer to map")
        if after_block:
            raise ConfigError(f"layer {len(self.layers) - 1} ({after_block}) ends the model; add "
                              "an output Linear layer after it")
        for k, b in enumerate(out[1:], 1):
            a = out[b.source(k)]
            if a.n_out != b.n_in:
                raise ConfigError(f"layer {b.position} ({b.linear!r}) takes {b.n_in} inputs but "
                                  f"layer {a.position} gives {a.n_out}")
        return out

    def parameters(self) -> list[np.ndarray]:
        """Weights and biases in order (views, not copies)."""
        ps = []
        for d in self.dense_layers():
            ps.append(d.linear.weight)
            if d.linear.bias is not None:
                ps.append(d.linear.bias)
        return ps

    def copy(self) -> "Sequential":
        """A deep copy (same parameters, independent arrays)."""
        return copy.deepcopy(self)

    def to_torch(self):
        """An equal ``torch.nn.Sequential`` (needs the optional ``torch`` extra)."""
        from .torch_io import to_torch

        return to_torch(self)


def block_layers(f, owner: str, name: str) -> Sequential:
    """The layers of a path inside a block (``owner``: "Residual" or "TwoBranch"; ``name``:
    "f" or "g") as a Sequential of Linear and activation layers; ConfigError otherwise."""
    if isinstance(f, Linear):
        f = Sequential(f)
    elif isinstance(f, (list, tuple)):
        f = Sequential(*f)
    if not isinstance(f, Sequential):
        raise ConfigError(f"{owner}: {name} must be a Linear, a list of layers or a "
                          f"Sequential, got {type(f).__name__}")
    for i, layer in enumerate(f):
        if not isinstance(layer, (Linear, Activation)):
            raise ConfigError(f"{owner}: layer {i} of {name} is {layer!r}; {name} holds Linear "
                              "and activation layers only (no nested Residual or TwoBranch)")
    return f
