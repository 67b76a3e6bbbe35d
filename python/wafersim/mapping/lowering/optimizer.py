"""How an optimizer lowers: the chain pass of each delta (in place, or into G), the bias
update of a finalizer, and the update task that applies G at the end of a sample or a
mini-batch. A new optimizer is one file with a subclass of :class:`OptimizerLowering`
registered under its ``ws.optim`` name.

* ``delta_chain_pass(s)``: b_delta after DP; r2 = delta_j, WLI r4 = column j of W; S0[2]
  / S1[2] walk W's column and the backward slot's activations, S0[3] G's column; the
  register CPV holds the variant setup chose (v_cpm), NEGLR = -lr.
* ``own_prologue(s)`` / ``own_variants(s)``: the finalizer's own block pass: its entry
  ``own`` and, per variant, the CP lines for one delta (same registers as b_delta).
* ``bias_update(s)``: in h_sent, at a finalizer with a bias: from ``delta``.
* ``update(s)``: in the update task (``ap``), with r2(:r3) = the scale the Trainer chose
  for this batch (c_s1 or c_s2): W, b and their state from G, Gb; G = Gb = 0.
* ``in_place``: whether per-sample SGD may update W delta by delta (v_cpm = 0); if not,
  every sample accumulates G and ends with the update task.
* ``data(s)`` / ``extra_bytes``: per-weight state (velocities) and its size.
* ``state_buffers()`` / ``state_words()``: the state a new Trainer sets to zero (buffers
  per weight and per bias; "value" words such as a step count).
* ``host_words(lr, batch, last)``: the numbers the Trainer writes.
"""

from __future__ import annotations

from ..program.spec import PeSpec

__all__ = ["OptimizerLowering"]


class OptimizerLowering:
    name = "?"
    in_place = False

    def __init__(self, module=None):
        self.module = module

    def delta_chain_pass(self, s: PeSpec) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def own_prologue(self, s: PeSpec) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def own_variants(self, s: PeSpec) -> list[tuple[str, list[str]]]:  # pragma: no cover
        raise NotImplementedError

    def bias_update(self, s: PeSpec) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def update(self, s: PeSpec) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def data(self, s: PeSpec) -> tuple[list[str], list[str]]:
        return [], []

    def state_buffers(self) -> list[tuple[str, str]]:
        """(weight state, bias state) buffer names a new Trainer zeroes (velocities)."""
        return []

    def state_words(self) -> list[str]:
        """Names of the "value" words of the state a new Trainer sets to 0 on every PE
        (Adam's step count and bias corrections)."""
        return []

    def extra_bytes(self, nin: int, nout: int, esize: int, slots: int, final: bool) -> int:
        return 0

    def host_words(self, lr: float, batch: int, last: int) -> list[tuple[str, float, str]]:
        """(word, value, what the user set) for every PE: lr, the update scales for
        batches of ``batch`` and for the last, shorter batch of ``last`` samples, and the
        optimizer's own numbers; the third element names the value in error messages."""
        raise NotImplementedError  # pragma: no cover

    def key(self) -> tuple:
        return ()

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.key()))
