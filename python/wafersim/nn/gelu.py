"""``GELU`` with the tanh approximation (``torch.nn.GELU(approximate="tanh")``):

    gelu(x) = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))

The exact form (with erf, torch's default) is not mapped: the CE has a tanh instruction
[0493] but no erf.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from .activations import Activation, register
from .torch_support import import_torch

__all__ = ["GELU"]

SQRT_2_OVER_PI = float(np.sqrt(2.0 / np.pi))
CUBIC = 0.044715


@register
class GELU(Activation):
    """``approximate``: "tanh" (the only form mapped onto the wafer)."""

    name = "gelu"
    torch_name = "GELU"

    def __init__(self, approximate: str = "tanh"):
        if not (isinstance(approximate, str) and approximate == "tanh"):
            raise ConfigError(f"GELU: approximate={approximate!r} is not mapped onto the wafer "
                              "(the CE has tanh, not erf); use approximate='tanh'")
        self.approximate = approximate

    def __repr__(self) -> str:
        return "GELU(approximate='tanh')"

    def forward(self, x):
        x = np.asarray(x, np.float64)
        return (0.5 * x * (1 + np.tanh(SQRT_2_OVER_PI * (x + CUBIC * x ** 3)))).astype(np.float32)

    def to_torch(self):
        return import_torch().nn.GELU(approximate="tanh")

    @classmethod
    def from_torch(cls, module, path):
        if module.approximate != "tanh":
            raise ConfigError(f"from_torch: {path} is GELU(approximate={module.approximate!r}); "
                              "the wafer maps only approximate='tanh' (it has no erf)")
        return cls("tanh")
