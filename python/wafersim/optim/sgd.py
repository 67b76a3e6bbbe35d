"""``SGD``: stochastic gradient descent with momentum, Nesterov momentum and weight decay,
with ``torch.optim.SGD``'s update rule (dampening 0):

    g = grad + weight_decay * w
    v = momentum * v + g            (v starts at 0, so the first step has v = g, as torch's)
    g = g + momentum * v  if nesterov  else  v
    w = w - lr * g

With momentum 0 and no weight decay this is plain SGD, which the wafer applies delta by
delta as each arrives [0617]; otherwise each sample (SGD) or mini-batch accumulates its
gradient and an update task applies the rule to every weight.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import ConfigError

__all__ = ["SGD"]


def _number(name: str, value, lo: float, hi: float | None, *, lo_open: bool = False,
            hi_open: bool = True) -> float:
    ok = (not isinstance(value, (bool, np.bool_)) and isinstance(value, numbers.Real)
          and np.isfinite(float(value)))
    if ok:
        v = float(value)
        ok = (v > lo if lo_open else v >= lo) and (hi is None or (v < hi if hi_open else v <= hi))
    if not ok:
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        limit = f"{left}{lo}, {'inf' if hi is None else hi}{right}"
        raise ConfigError(f"SGD: {name} must be a number in {limit}, got {value!r}")
    return float(value)


class SGD:
    """``lr`` > 0; ``momentum`` in [0, 1); ``nesterov`` needs momentum > 0;
    ``weight_decay`` >= 0. ``dampening`` other than 0 is not mapped."""

    name = "sgd"

    def __init__(self, lr: float = 0.05, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False):
        self.lr = _number("lr", lr, 0.0, None, lo_open=True)
        self.momentum = _number("momentum", momentum, 0.0, 1.0)
        if not (isinstance(dampening, numbers.Real) and not isinstance(dampening, bool)
                and dampening == 0):
            raise ConfigError(f"SGD: dampening={dampening!r} is not mapped onto the wafer "
                              "(only 0, torch's default)")
        self.weight_decay = _number("weight_decay", weight_decay, 0.0, None)
        if not isinstance(nesterov, (bool, np.bool_)):
            raise ConfigError(f"SGD: nesterov must be True or False, got {nesterov!r}")
        if nesterov and self.momentum == 0:
            raise ConfigError("SGD: nesterov=True needs momentum > 0 (as torch.optim.SGD)")
        self.nesterov = bool(nesterov)

    @property
    def plain(self) -> bool:
        """No momentum and no weight decay: W -= lr * grad, delta by delta."""
        return self.momentum == 0 and self.weight_decay == 0

    def __repr__(self) -> str:
        extra = ""
        if self.momentum:
            extra += f", momentum={self.momentum}"
        if self.nesterov:
            extra += ", nesterov=True"
        if self.weight_decay:
            extra += f", weight_decay={self.weight_decay}"
        return f"SGD(lr={self.lr}{extra})"
