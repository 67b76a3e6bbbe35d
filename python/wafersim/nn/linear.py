"""``Linear``: y = x W^T + b, like ``torch.nn.Linear``. Initial weights follow PyTorch's
defaults (uniform on [-1/sqrt(in), 1/sqrt(in)]), drawn from a seeded numpy generator."""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import ConfigError
from .module import Module, default_rng, size_arg
from .torch_support import import_torch

__all__ = ["Linear", "MAX_WEIGHTS"]

#: The most weights one Linear layer may have.
MAX_WEIGHTS = 1 << 30


def _finite_float32(value, what: str, shape: tuple, *, finite: bool = True) -> np.ndarray:
    try:
        a = np.asarray(value)
    except (ValueError, TypeError) as e:
        raise ConfigError(f"{what} must be an array of numbers ({type(e).__name__}: {e})") from None
    if a.dtype == object or not (np.issubdtype(a.dtype, np.number) or np.issubdtype(a.dtype, np.bool_)):
        raise ConfigError(f"{what} must hold numbers, got dtype {a.dtype}")
    if a.shape != shape:
        raise ConfigError(f"{what} must have shape {shape}, got {a.shape}")
    a = a.astype(np.float32)
    if finite and not np.all(np.isfinite(a)):
        raise ConfigError(f"{what} holds NaN or inf (or values beyond float32)")
    return a


class Linear(Module):
    """y = x W^T + b with W of shape (out_features, in_features), like ``torch.nn.Linear``.

    ``seed``: an integer or a numpy Generator for the initial weights (None: the module
    generator, see ``manual_seed``). ``bias=False`` keeps no bias (none is trained).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, *, seed=None):
        self.in_features = size_arg(in_features, "in_features")
        self.out_features = size_arg(out_features, "out_features")
        if self.in_features * self.out_features > MAX_WEIGHTS:
            raise ConfigError(f"Linear({in_features}, {out_features}) has "
                              f"{self.in_features * self.out_features:.3g} weights; a layer holds at "
                              f"most {MAX_WEIGHTS} (2**30, 4 GiB of float32 on the host)")
        if not isinstance(bias, (bool, np.bool_)):
            raise ConfigError(f"bias must be True or False, got {bias!r}")
        if seed is None:
            rng = default_rng()
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
        """Replaces the parameters (float32 copies; shapes must match; finite)."""
        self._set(weight, bias, finite=True)

    def _set(self, weight, bias, *, finite: bool) -> None:
        self.weight = _finite_float32(weight, f"{self!r}: weight",
                                      (self.out_features, self.in_features), finite=finite).copy()
        if self.bias is not None:
            if bias is None:
                raise ConfigError(f"{self!r}: this layer has a bias; pass it")
            self.bias = _finite_float32(bias, f"{self!r}: bias", (self.out_features,),
                                        finite=finite).copy()
        elif bias is not None:
            raise ConfigError(f"{self!r} has no bias (bias=False)")

    def load_trained(self, weight, bias=None) -> None:
        """The parameters a training run left (``Plan.sync_model``), as they are: a run that
        diverged leaves inf or NaN here, as it would in a torch model, instead of failing
        after the run. :meth:`set_parameters` is for values a user gives."""
        self._set(weight, bias, finite=False)

    def forward(self, x: np.ndarray) -> np.ndarray:
        y = x @ self.weight.T
        return y + self.bias if self.bias is not None else y

    def to_torch(self):
        torch = import_torch()
        m = torch.nn.Linear(self.in_features, self.out_features, bias=self.bias is not None)
        with torch.no_grad():
            m.weight.copy_(torch.from_numpy(np.array(self.weight, dtype=np.float32)))
            if self.bias is not None:
                m.bias.copy_(torch.from_numpy(np.array(self.bias, dtype=np.float32)))
        return m
