"""Layers a network for the wafer is built from: ``Linear`` and the activation functions of
seed 000 [0493] (ReLU, sigmoid, tanh) plus ``Identity``.

These are descriptions with parameters, not a training framework: ``ws.map`` compiles them
into per-PE programs, and ``ws.Trainer`` trains them on the wafer. The numpy ``forward``
is a convenience for looking at a model on the host; training never calls it.

Initialization follows PyTorch's defaults for ``torch.nn.Linear`` (weight and bias uniform
on [-1/sqrt(in), 1/sqrt(in)]), drawn from a seeded numpy generator: ``ws.nn.manual_seed``
seeds the one the layers use by default, or pass ``seed=`` to a layer.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import ConfigError

__all__ = ["Module", "Linear", "ReLU", "Sigmoid", "Tanh", "Identity", "Activation",
           "manual_seed", "ACTIVATIONS"]

_default_rng = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    """Seeds the generator that layers created without ``seed=`` draw their weights from."""
    global _default_rng
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ConfigError(f"seed must be a non-negative integer, got {seed!r}")
    _default_rng = np.random.default_rng(int(seed))


def _size(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ConfigError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


class Module:
    """Base of every layer: a name for messages and a numpy forward."""

    def forward(self, x: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def __call__(self, x) -> np.ndarray:
        return self.forward(np.asarray(x, dtype=np.float32))


class Linear(Module):
    """y = x W^T + b with W of shape (out_features, in_features), like ``torch.nn.Linear``.

    ``seed``: an integer or a numpy Generator for the initial weights (None: the module
    generator, see :func:`manual_seed`). ``bias=False`` keeps no bias (none is trained).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, *, seed=None):
        self.in_features = _size(in_features, "in_features")
        self.out_features = _size(out_features, "out_features")
        if not isinstance(bias, (bool, np.bool_)):
            raise ConfigError(f"bias must be True or False, got {bias!r}")
        if seed is None:
            rng = _default_rng
        elif isinstance(seed, np.random.Generator):
            rng = seed
        elif isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0:
            rng = np.random.default_rng(int(seed))
        else:
            raise ConfigError(f"seed must be None, a non-negative integer or a numpy Generator, "
                              f"got {seed!r}")
        bound = 1.0 / np.sqrt(self.in_features)
        self.weight = rng.uniform(-bound, bound, (self.out_features, self.in_features)).astype(np.float32)
        self.bias = (rng.uniform(-bound, bound, self.out_features).astype(np.float32)
                     if bias else None)

    def __repr__(self) -> str:
        return (f"Linear(in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None})")

    def set_parameters(self, weight, bias=None) -> None:
        """Replaces the parameters (float32 copies; shapes must match)."""
        w = np.asarray(weight, dtype=np.float32)
        if w.shape != (self.out_features, self.in_features):
            raise ConfigError(f"{self!r}: weight must have shape "
                              f"{(self.out_features, self.in_features)}, got {w.shape}")
        if not np.all(np.isfinite(w)):
            raise ConfigError(f"{self!r}: weight holds NaN or inf")
        self.weight = w.copy()
        if self.bias is not None:
            if bias is None:
                raise ConfigError(f"{self!r}: this layer has a bias; pass it")
            b = np.asarray(bias, dtype=np.float32)
            if b.shape != (self.out_features,):
                raise ConfigError(f"{self!r}: bias must have shape ({self.out_features},), "
                                  f"got {b.shape}")
            if not np.all(np.isfinite(b)):
                raise ConfigError(f"{self!r}: bias holds NaN or inf")
            self.bias = b.copy()
        elif bias is not None:
            raise ConfigError(f"{self!r} has no bias (bias=False)")

    def forward(self, x: np.ndarray) -> np.ndarray:
        y = x @ self.weight.T
        return y + self.bias if self.bias is not None else y


class Activation(Module):
    """An element-wise activation function; ``name`` is what the mapping compiles."""

    name = "identity"

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def derivative_from_output(self, a: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError


class ReLU(Activation):
    """max(x, 0) [0493]."""

    name = "relu"

    def forward(self, x):
        return np.maximum(x, np.float32(0))


class Sigmoid(Activation):
    """1 / (1 + exp(-x)) [0493]."""

    name = "sigmoid"

    def forward(self, x):
        return (1.0 / (1.0 + np.exp(-x.astype(np.float64)))).astype(np.float32)


class Tanh(Activation):
    """tanh(x) [0493]."""

    name = "tanh"

    def forward(self, x):
        return np.tanh(x.astype(np.float64)).astype(np.float32)


class Identity(Activation):
    """x (a linear output layer)."""

    name = "identity"

    def forward(self, x):
        return x


#: activation name -> class
ACTIVATIONS = {cls.name: cls for cls in (ReLU, Sigmoid, Tanh, Identity)}
