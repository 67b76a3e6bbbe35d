"""Activation sparsity by threshold (seed 001, EC410/EC411): a finalizer sends an
activation to the next layer only when its magnitude exceeds the layer's threshold t, so
|a| <= t is not sent (lossy for t > 0; t = 0 is the exact zero skipping of [0400], [0408]).

``ws.map(model, activation_threshold=...)`` takes None (no threshold: the programs skip
exact zeros, as without this option), one number for every hidden layer, a list with one
entry per hidden layer, or a {layer: t} dict. The hidden layers are every mapped layer but
the output layer: the output layer's activations are the model's outputs (or the logits a
softmax head needs) and are never thresholded. An entry None leaves that layer's program
without a threshold. Each t is a runtime word of the layer's finalizers (``c_athr``), so
``Plan.set_activation_threshold`` changes it between runs without recompiling.
"""

from __future__ import annotations

import math
import numbers

from ..errors import ConfigError

__all__ = ["check_activation_threshold"]

_NAME = "activation_threshold"


def _one(value, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ConfigError(f"{_NAME}{where} must be a number >= 0 (or None), got {value!r}")
    v = float(value)
    if math.isnan(v) or math.isinf(v) or v < 0:
        raise ConfigError(f"{_NAME}{where} must be a finite number >= 0 (|a| <= t is not "
                          f"sent; 0 skips exact zeros), got {value!r}")
    return v


def check_activation_threshold(value, n_layers: int) -> list[float | None]:
    """Per mapped layer (``n_layers`` of them): the threshold of the activations it sends
    to the next layer, or None (no threshold code: exact zeros are skipped). The output
    layer's entry is always None. ConfigError naming the layer and the value otherwise."""
    hidden = n_layers - 1
    out: list[float | None] = [None] * n_layers
    if value is None:
        return out
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 0 <= k < hidden:
                raise ConfigError(
                    f"{_NAME} has an entry for layer {k!r}; the hidden layers of this model are "
                    + (f"0..{hidden - 1}" if hidden else "none (one layer: its outputs are the "
                       "model's)") + " (the output layer's activations are never thresholded)")
            out[int(k)] = _one(v, f"[{k}]")
        return out
    if isinstance(value, (list, tuple)):
        if len(value) != hidden:
            raise ConfigError(
                f"{_NAME} has {len(value)} entries; this model has {hidden} hidden layer(s) "
                f"(one entry per mapped layer except the output layer, whose activations are "
                f"the model's outputs)")
        for k, v in enumerate(value):
            out[k] = _one(v, f"[{k}]")
        return out
    t = _one(value, "")
    for k in range(hidden):
        out[k] = t
    return out
