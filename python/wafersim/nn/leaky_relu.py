"""``LeakyReLU``: x if x > 0, else negative_slope * x (as ``torch.nn.LeakyReLU``)."""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import ConfigError
from .activations import Activation, register
from .torch_support import import_torch

__all__ = ["LeakyReLU"]


@register
class LeakyReLU(Activation):
    """``negative_slope``: any finite number (torch's default 0.01)."""

    name = "leaky_relu"
    torch_name = "LeakyReLU"

    def __init__(self, negative_slope: float = 0.01):
        ok = (isinstance(negative_slope, numbers.Real) and not isinstance(negative_slope, bool)
              and np.isfinite(float(negative_slope)))
        if not ok:
            raise ConfigError(f"LeakyReLU: negative_slope must be a finite number, got "
                              f"{negative_slope!r}")
        self.negative_slope = float(negative_slope)

    def __repr__(self) -> str:
        return f"LeakyReLU(negative_slope={self.negative_slope})"

    def forward(self, x):
        x = np.asarray(x, np.float32)
        return np.where(x > 0, x, x * np.float32(self.negative_slope)).astype(np.float32)

    def to_torch(self):
        return import_torch().nn.LeakyReLU(self.negative_slope)

    @classmethod
    def from_torch(cls, module, path):
        return cls(float(module.negative_slope))
