"""How a loss lowers: the output layer's finalizers form the output delta from the
activations and the targets, and send their share of the loss to the host. A new loss is
one file with a subclass of :class:`LossLowering` registered under its ``ws.nn`` name.

The host side of a loss (``ws.Trainer``) asks it how to stream targets and which runtime
words to write; the PE side is ``output_delta`` (in dfin: the targets are in ``tot``, the
sample's activations in S1[7], WLI r4 = the slot's byte offset; write ``delta``) and
``loss_share`` (after the deltas have gone: one wavelet with index ``LOSS_INDEX`` on
``d_lout``)."""

from __future__ import annotations

import numpy as np

from ..program.spec import PeSpec

__all__ = ["LossLowering"]


class LossLowering:
    name = "?"
    #: a column of PEs of its own east of the output layer (CrossEntropyLoss's softmax)
    has_head = False
    head_roles: dict = {}
    output_role = target_role = None

    def __init__(self, module=None):
        self.module = module

    def check_model(self, dense) -> None:
        """ConfigError when the model's output layer does not suit this loss."""

    # ---- PE programs --------------------------------------------------------------------
    def output_delta(self, s: PeSpec) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def loss_share(self, s: PeSpec) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def constants(self, s: PeSpec) -> tuple[list[str], list[str]]:
        """(declarations, exported names) of the loss's numbers on an output finalizer."""
        return [], []

    def data(self, s: PeSpec) -> tuple[list[str], list[str]]:
        return [], []

    def extra_bytes(self, nin: int, nout: int, esize: int, slots: int, final: bool) -> int:
        return 0

    # ---- host -----------------------------------------------------------------------------
    def host_words(self, n_out: int) -> list[tuple[str, float]]:
        """(word name, value) pairs the Trainer writes into the output finalizers."""
        return []

    def targets(self, Y: np.ndarray) -> np.ndarray:
        """What the output finalizers receive per sample: (n, n_out) values."""
        return Y

    def host_loss(self, out: np.ndarray, Y: np.ndarray) -> float:  # pragma: no cover
        raise NotImplementedError

    def __eq__(self, other) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self).__name__)
