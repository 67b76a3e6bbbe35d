"""``Adam``: adaptive moment estimation with ``torch.optim.Adam``'s update rule (amsgrad
off, weight decay added to the gradient as torch does, not AdamW's decoupled decay):

    g = grad + weight_decay * w
    m = beta1 * m + (1 - beta1) * g            (m, v and t start at 0)
    v = beta2 * v + (1 - beta2) * g^2
    t = t + 1
    w = w - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

Every sample (SGD) or mini-batch accumulates its gradient; an update task on each PE then
applies the rule to every weight and bias it holds, with m and v per parameter in PE
memory and the bias corrections kept on the PE (mapping/lowering/adam.py). fp32 plans only.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import ConfigError

__all__ = ["Adam"]


def _number(name: str, value, lo: float, hi: float | None, *, lo_open: bool) -> float:
    ok = (not isinstance(value, (bool, np.bool_)) and isinstance(value, numbers.Real)
          and np.isfinite(float(value)))
    if ok:
        v = float(value)
        ok = (v > lo if lo_open else v >= lo) and (hi is None or v < hi)
    if not ok:
        limit = f"{'(' if lo_open else '['}{lo}, {'inf' if hi is None else hi})"
        raise ConfigError(f"Adam: {name} must be a number in {limit}, got {value!r}")
    return float(value)


def _off(name: str, value, why: str, allowed=(False,)) -> None:
    """An option of torch.optim.Adam that is not mapped: only its default is accepted."""
    if not any(value is a or (isinstance(value, (bool, np.bool_)) and value == a)
               for a in allowed):
        only = " or ".join(repr(a) for a in allowed)
        raise ConfigError(f"Adam: {name}={value!r} is not mapped onto the wafer (only "
                          f"{only}): {why}")


class Adam:
    """``lr`` > 0; ``betas`` = (beta1, beta2), each in [0, 1); ``eps`` >= 2^-126 (with
    eps = 0 a parameter whose gradient was always 0 would get 0 / 0, with a subnormal eps
    1 / eps overflows); ``weight_decay`` >= 0.
    ``amsgrad``, ``maximize``, ``decoupled_weight_decay`` (AdamW) and torch's implementation
    switches (``foreach``, ``capturable``, ``differentiable``, ``fused``) are accepted only
    at their defaults."""

    name = "adam"

    def __init__(self, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused=None,
                 decoupled_weight_decay: bool = False):
        self.lr = _number("lr", lr, 0.0, None, lo_open=True)
        try:
            b1, b2 = betas
        except (TypeError, ValueError):
            raise ConfigError(f"Adam: betas must be a pair (beta1, beta2), got {betas!r}") from None
        self.betas = (_number("betas[0]", b1, 0.0, 1.0, lo_open=False),
                      _number("betas[1]", b2, 0.0, 1.0, lo_open=False))
        self.eps = _number("eps", eps, 0.0, None, lo_open=True)
        if self.eps < 2.0 ** -126:
            raise ConfigError(f"Adam: eps = {eps!r} is below 2^-126 = 1.18e-38, fp32's smallest "
                              "normal number: 1 / eps would overflow for a parameter whose v is 0")
        self.weight_decay = _number("weight_decay", weight_decay, 0.0, None, lo_open=False)
        _off("amsgrad", amsgrad, "the maximum of past second moments is not kept")
        _off("maximize", maximize, "the wafer descends its loss")
        _off("decoupled_weight_decay", decoupled_weight_decay,
             "AdamW's decoupled decay is not lowered; weight_decay adds to the gradient")
        why = "it selects one of torch's kernels, which the wafer does not have"
        _off("foreach", foreach, why, (None, False))
        _off("capturable", capturable, why)
        _off("differentiable", differentiable, why)
        _off("fused", fused, why, (None, False))

    def __repr__(self) -> str:
        extra = f", weight_decay={self.weight_decay}" if self.weight_decay else ""
        return f"Adam(lr={self.lr}, betas={self.betas}, eps={self.eps}{extra})"
