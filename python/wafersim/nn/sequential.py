"""``Sequential``: a chain of layers, and the dense layers the wafer maps (a ``Linear``
with the activation that follows it)."""

from __future__ import annotations

import copy

import numpy as np

from ..errors import ConfigError
from .activations import Activation
from .dense import DenseLayer
from .linear import Linear
from .module import Block, Module
from .torch_support import import_torch

__all__ = ["Sequential"]


class Sequential(Module):
    """Layers applied in order, like ``torch.nn.Sequential``. The wafer maps each
    ``Linear`` together with the activation right after it (none: identity)."""

    def __init__(self, *layers):
        if len(layers) == 1 and isinstance(layers[0], (list, tuple)):
            layers = tuple(layers[0])
        for i, layer in enumerate(layers):
            if not isinstance(layer, Module) or isinstance(layer, Sequential):
                raise ConfigError(f"Sequential: layer {i} is {layer!r}; supported layers are "
                                  "ws.nn.Linear, the activations (ws.nn.ACTIVATIONS), Residual "
                                  "and TwoBranch")
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
            elif isinstance(layer, Block):
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
                out += layer.dense_block(i, len(out))
            else:
                raise ConfigError(f"layer {i} ({layer!r}) is not supported on the wafer")
            after_block = type(layer).__name__ if isinstance(layer, Block) else None
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
        return import_torch().nn.Sequential(*[layer.to_torch() for layer in self.layers])
