"""``CrossEntropyLoss``: softmax over a sample's outputs (the logits) and the negative log
of the probability of its class, averaged over the batch, as ``torch.nn.CrossEntropyLoss()``:

    p = softmax(z),  loss = -log p[y],  dloss/dz = p - onehot(y)  (per sample; / batch)

On the wafer the softmax and the loss run on a column of *head* PEs east of the output
layer (docs/training.md, "Cross-entropy"), with the math library's exp, reciprocal and
log (``ws.asm.mathlib``). The output layer must have no activation (its outputs are the
logits), and the targets are class indices."""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import ConfigError
from ..values import is_integer
from .losses import Loss

__all__ = ["CrossEntropyLoss"]


class CrossEntropyLoss(Loss):
    """Only torch's defaults are mapped: ``reduction="mean"``, no class weights, no label
    smoothing, no ignored index."""

    name = "cross_entropy"

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0):
        if weight is not None:
            raise ConfigError("CrossEntropyLoss: weight= (class weights) is not mapped")
        if not (is_integer(ignore_index) and ignore_index == -100):
            raise ConfigError(f"CrossEntropyLoss: ignore_index={ignore_index!r} is not mapped "
                              "(only torch's default, -100, which no class index reaches)")
        if not (isinstance(reduction, str) and reduction == "mean"):
            raise ConfigError(f"CrossEntropyLoss: only reduction='mean' is mapped (got "
                              f"{reduction!r})")
        if not (isinstance(label_smoothing, numbers.Real) and not isinstance(label_smoothing, bool)
                and label_smoothing == 0):
            raise ConfigError(f"CrossEntropyLoss: label_smoothing={label_smoothing!r} is not "
                              "mapped (only 0)")
        self.reduction = reduction

    def __repr__(self) -> str:
        return "CrossEntropyLoss()"

    def __call__(self, output, target) -> float:
        """Mean over the samples of -log softmax(output)[target] (float64)."""
        z = np.asarray(output, dtype=np.float64)
        if z.ndim == 1:
            z = z[None, :]
        y = np.asarray(target)
        if y.ndim == 0:
            y = y[None]
        if y.ndim != 1 or len(y) != len(z) or not np.issubdtype(y.dtype, np.integer):
            raise ConfigError(f"CrossEntropyLoss: target must hold {len(z)} class indices, "
                              f"got shape {y.shape} and dtype {y.dtype}")
        if y.size and (y.min() < 0 or y.max() >= z.shape[1]):
            raise ConfigError(f"CrossEntropyLoss: class indices must be in 0..{z.shape[1] - 1}")
        m = z.max(axis=1, keepdims=True)
        lse = m[:, 0] + np.log(np.exp(z - m).sum(axis=1))
        return float(np.mean(lse - z[np.arange(len(z)), y]))

