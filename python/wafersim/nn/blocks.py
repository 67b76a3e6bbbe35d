"""The path inside a block (``Residual``'s f, ``TwoBranch``'s f and g): a Sequential of
Linear and activation layers only."""

from __future__ import annotations

from ..errors import ConfigError
from .activations import Activation
from .linear import Linear
from .sequential import Sequential

__all__ = ["block_layers"]


def block_layers(f, owner: str, name: str) -> Sequential:
    """The layers of a path inside a block (``owner``: "Residual" or "TwoBranch"; ``name``:
    "f" or "g") as a Sequential of Linear and activation layers; ConfigError otherwise."""
    if isinstance(f, Linear):
        f = Sequential(f)
    elif isinstance(f, (list, tuple)):
        try:
            f = Sequential(*f)
        except ConfigError as e:
            raise ConfigError(f"{owner}: {name}: {e}") from None
    if not isinstance(f, Sequential):
        raise ConfigError(f"{owner}: {name} must be a Linear, a list of layers or a "
                          f"Sequential, got {type(f).__name__}")
    for i, layer in enumerate(f):
        if not isinstance(layer, (Linear, Activation)):
            raise ConfigError(f"{owner}: layer {i} of {name} is {layer!r}; {name} holds Linear "
                              "and activation layers only (no nested Residual or TwoBranch)")
    if not any(isinstance(layer, Linear) for layer in f):
        raise ConfigError(f"{owner}: {name} has no Linear layer; a path inside a block needs "
                          "at least one")
    return f
