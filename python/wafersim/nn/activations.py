"""Activation functions: those of seed 000 [0493] (ReLU, sigmoid, tanh), ``Identity``, and
the registry of every activation class (``ACTIVATIONS``: name -> class). A new activation
is one file with a subclass of :class:`Activation` decorated with ``@register``; its
lowering onto the PEs lives in ``mapping/lowering/`` under the same name."""

from __future__ import annotations

import numpy as np

from .module import Module
from .torch_support import import_torch

__all__ = ["Activation", "ReLU", "Sigmoid", "Tanh", "Identity", "ACTIVATIONS", "register"]

#: activation name -> class
ACTIVATIONS: dict[str, type] = {}


def register(cls):
    """Class decorator: makes an activation known by its ``name`` (for ``from_torch`` by its
    ``torch_name`` too)."""
    ACTIVATIONS[cls.name] = cls
    return cls


class Activation(Module):
    """An element-wise activation function; ``name`` is what the mapping compiles,
    ``torch_name`` the ``torch.nn`` class it stands for."""

    name = "identity"
    torch_name = "Identity"

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def to_torch(self):
        return getattr(import_torch().nn, self.torch_name)()

    @classmethod
    def from_torch(cls, module, path: str):
        """An equal activation for the torch module ``module`` (``path`` names it in
        messages); ConfigError if it has options the wafer does not map."""
        return cls()


@register
class ReLU(Activation):
    """max(x, 0) [0493]."""

    name = "relu"
    torch_name = "ReLU"

    def forward(self, x):
        return np.maximum(x, np.float32(0))


@register
class Sigmoid(Activation):
    """1 / (1 + exp(-x)) [0493]."""

    name = "sigmoid"
    torch_name = "Sigmoid"

    def forward(self, x):
        return (1.0 / (1.0 + np.exp(-x.astype(np.float64)))).astype(np.float32)


@register
class Tanh(Activation):
    """tanh(x) [0493]."""

    name = "tanh"
    torch_name = "Tanh"

    def forward(self, x):
        return np.tanh(x.astype(np.float64)).astype(np.float32)


@register
class Identity(Activation):
    """x (a linear output layer)."""

    name = "identity"
    torch_name = "Identity"

    def forward(self, x):
        return x
