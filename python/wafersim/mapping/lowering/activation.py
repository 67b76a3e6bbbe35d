"""How an activation function lowers onto a finalizer: a = f(z) in the forward pass, and
f'(a) for the delta [0493]. A new activation is one file with a subclass of
:class:`ActivationLowering` registered under the name its ``ws.nn`` class carries."""

from __future__ import annotations

from ..program.idioms import fp_one
from ..program.spec import PeSpec
from .registry import register_activation

__all__ = ["ActivationLowering", "ReluLowering", "SigmoidLowering", "TanhLowering",
           "IdentityLowering"]


class ActivationLowering:
    """The identity; subclasses override what differs.

    * ``forward(s, dst, src)``: lines that write a = f(z) to the descriptor register
      ``dst`` (the sample's slot of ``aslots``) from ``src`` (z), in fin3. Registers free
      to use: S0[11], D[9], D[10], r0, r5 (r12 holds the slot's byte offset).
    * ``derivative(s)``: lines in dfin that write f' of the sample's activations to
      ``fpr``. S1[7] reads those activations (WLI, r4 = the slot's byte offset); free:
      D[2], D[7], S0[7], S1[8], r0, r2, r3, r5, r6.
    * ``data(s)``: (declarations, exported names) it adds to a finalizer's data section.
    * ``extra_bytes(nin, nout, esize, slots, final)``: the data bytes those take
      (block_shapes.py).
    """

    name = "identity"
    has_derivative = False

    def __init__(self, module=None):
        self.module = module

    def forward(self, s: PeSpec, dst: str, src: str) -> list[str]:
        return [f"        {s.MV} {dst}, {src}"]

    def derivative(self, s: PeSpec) -> list[str]:
        return []

    def data(self, s: PeSpec) -> tuple[list[str], list[str]]:
        return [], []

    def extra_bytes(self, nin: int, nout: int, esize: int, slots: int, final: bool) -> int:
        return 0

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.key()))

    def key(self) -> tuple:
        """What distinguishes two lowerings of this kind (parameters)."""
        return ()


@register_activation("identity")
class IdentityLowering(ActivationLowering):
    pass


@register_activation("relu")
class ReluLowering(ActivationLowering):
    name = "relu"
    has_derivative = True

    def forward(self, s, dst, src):
        return [f"        relu{s.FX} {dst}, {src}"]

    def derivative(self, s):
        return ["        lddwds  D[7], d_fpr",
                f"        drelu{s.FX} D[7], S1[7]             ; f' = 1 where a > 0 [0493]"]


@register_activation("sigmoid")
class SigmoidLowering(ActivationLowering):
    name = "sigmoid"
    has_derivative = True

    def forward(self, s, dst, src):
        return [f"        sigmoid{s.FX} {dst}, {src}"]

    def derivative(self, s):
        FX = s.FX
        return (["        lddwds  D[2], d_fpr"] + fp_one(s.dtype)
                + [f"        fsub{FX} D[2], r2, S1[7]            ; 1 - a",
                   "        lds0wds S0[7], d_fpr",
                   f"        fmul{FX} S0[7], S0[7], S1[7]      ; f' = a (1 - a)"])


@register_activation("tanh")
class TanhLowering(ActivationLowering):
    name = "tanh"
    has_derivative = True

    def forward(self, s, dst, src):
        return [f"        tanh{s.FX} {dst}, {src}"]

    def derivative(self, s):
        FX = s.FX
        return (["        lddwds  D[7], d_fpr",
                 "        lds0wds S0[7], d_aw",
                 f"        fmul{FX} D[7], S0[7], S1[7]       ; a^2"] + fp_one(s.dtype)
                + ["        lddwds  D[2], d_fpr",
                   "        lds1wds S1[8], d_fpr",
                   f"        fsub{FX} D[2], r2, S1[8]            ; f' = 1 - a^2"])
