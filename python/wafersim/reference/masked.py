"""The device-order fp32 reference with pruned weights (weight sparsity): every weight
whose mask entry is False is 0 from the start and is set back to 0 after every update,
which is what a mapping that does not store it computes: its forward and delta passes
add nothing for it (here they add an exact 0 * x), and nothing updates it. Weights,
biases and losses then equal the wafer's bit for bit in fp32 (the sign of a zero sum
aside, which compares equal)."""

from __future__ import annotations

import numpy as np

from .training import DeviceOrderMLP

__all__ = ["MaskedDeviceOrderMLP"]


class MaskedDeviceOrderMLP(DeviceOrderMLP):
    """``DeviceOrderMLP`` with ``masks``: one bool array (n_out, n_in) per layer (True =
    kept; None = dense), as ``Plan.weight_masks()`` gives them."""

    def __init__(self, params, activations, shapes, *args, masks=None, **kw):
        super().__init__(params, activations, shapes, *args, **kw)
        self.masks = [None if m is None else np.asarray(m, dtype=bool)
                      for m in (masks or [None] * len(self.W))]
        self._prune()

    def _prune(self) -> None:
        for W, m in zip(self.W, self.masks):
            if m is not None:
                W[~m] = 0

    def backward(self, acts, y, mode: str = "sgd", lr: float = 0.0):
        out = super().backward(acts, y, mode, lr)
        self._prune()                    # in-place SGD updated the pruned weights too
        return out

    def apply(self, scale) -> None:
        super().apply(scale)
        self._prune()

    def apply_rule(self, scale, lr) -> None:
        super().apply_rule(scale, lr)
        self._prune()

    def apply_adam(self, scale, lr) -> None:
        super().apply_adam(scale, lr)
        self._prune()
