"""The base of every layer of ``ws.nn``, and the generator that layers created without a
seed draw their initial weights from.

These are descriptions with parameters, not a training framework: ``ws.map`` compiles them
into per-PE programs and ``ws.Trainer`` trains them on the wafer. The numpy ``forward`` is
a convenience for looking at a model on the host; training never calls it.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import ConfigError

__all__ = ["Module", "Block", "manual_seed", "default_rng", "size_arg"]

_default_rng = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    """Seeds the generator that layers created without ``seed=`` draw their weights from."""
    global _default_rng
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ConfigError(f"seed must be a non-negative integer, got {seed!r}")
    _default_rng = np.random.default_rng(int(seed))


def default_rng() -> np.random.Generator:
    return _default_rng


def size_arg(value, name: str, limit: int = 1 << 20) -> int:
    """A layer size: a positive integer, at most ``limit`` (no wafer holds more)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 1:
        raise ConfigError(f"{name} must be a positive integer, got {value!r}")
    if value > limit:
        raise ConfigError(f"{name} = {value} is beyond what a wafer can hold (at most {limit})")
    return int(value)


class Module:
    """Base of every layer: a name for messages and a numpy forward."""

    def forward(self, x: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def __call__(self, x) -> np.ndarray:
        return self.forward(np.asarray(x, dtype=np.float32))

    def to_torch(self):  # pragma: no cover - every layer overrides it
        raise ConfigError(f"{type(self).__name__} has no torch equivalent")


class Block(Module):
    """A block with a join (``Residual``, ``TwoBranch``): it lists its own mapped layers."""

    def dense_block(self, position: int, first: int) -> list:  # pragma: no cover - abstract
        """The block's mapped layers (``DenseLayer``), the first at index ``first`` of the
        model's list; ``position``: the block's index in its Sequential."""
        raise NotImplementedError
