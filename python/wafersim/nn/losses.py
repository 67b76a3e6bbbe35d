"""Losses. The wafer computes the delta of the output layer itself (seed 000 [0645], "the
delta rule": a function of the difference between the output and the desired output);
each loss's lowering onto the PEs lives in ``mapping/lowering/`` under its ``name``."""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError

__all__ = ["Loss", "MSELoss"]


class Loss:
    """Base of the losses: ``name`` is what the mapping compiles; calling a loss computes
    its value on the host (numpy, float64), for looking at results."""

    name = "?"

    def __call__(self, output, target) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and vars(self) == vars(other)

    def __hash__(self) -> int:
        return hash(type(self).__name__)


class MSELoss(Loss):
    """Mean squared error over the outputs of a sample, as ``torch.nn.MSELoss()``:
    loss = sum((a - y)^2) / n, so the output delta is (a - y) * 2/n * f'(a) [0287], [0645].
    Over a mini-batch the gradients are averaged (torch's mean over the batch too)."""

    name = "mse"

    def __init__(self, reduction: str = "mean"):
        if not (isinstance(reduction, str) and reduction == "mean"):
            raise ConfigError(f"MSELoss: only reduction='mean' is mapped (got {reduction!r})")
        self.reduction = reduction

    def __repr__(self) -> str:
        return "MSELoss()"

    def __call__(self, output, target) -> float:
        a = np.asarray(output, dtype=np.float64)
        y = np.asarray(target, dtype=np.float64)
        if a.shape != y.shape:
            raise ConfigError(f"MSELoss: output shape {a.shape} and target shape {y.shape} differ")
        return float(np.mean((a - y) ** 2))
