"""``MSELoss``: loss = sum((a - y)^2) / n over a sample's n outputs, the delta rule
[0287], [0645]: delta = (a - y) * 2/n * f'(a)."""

from __future__ import annotations

import numpy as np

from .. import runtime_words as W
from .. import task_ids as T
from ..program.spec import PeSpec
from .loss import LossLowering
from .registry import register_loss

__all__ = ["MseLowering"]

C_INVN = W.add(W.Word("c_invn", "value", "output finalizers", "host", "h_sent (loss share)",
                      "1 / outputs (the loss)"))
C_TWON = W.add(W.Word("c_twon", "value", "output finalizers", "host", "dfin (delta rule)",
                      "2 / outputs (the delta rule of MSE)"))


@register_loss("mse")
class MseLowering(LossLowering):
    name = "mse"

    def output_delta(self, s: PeSpec) -> list[str]:
        """e = a - y into tot; delta = e * 2/n [* f'] (the loss waits until the deltas go)."""
        FX = s.FX
        L = ["        lddwds  D[7], d_tot",
             "        lds0wds S0[7], d_aw",
             "        lds1wds S1[8], d_tot",
             f"        fsub{FX} D[7], S0[7], S1[8]       ; e = a - y [0645]",
             "        lddwds  D[8], d_delta",
             "        lds0wds S0[8], d_tot",
             "        li r6, c_twon",
             f"        fmul{FX} D[8], S0[8], [r6]        ; delta = e * 2/n"]
        if s.act.has_derivative:
            L += s.act.derivative(s)
            L += ["        lds0wds S0[8], d_delta",
                  "        lds1wds S1[8], d_fpr",
                  f"        fmul{FX} S0[8], S0[8], S1[8]      ; * f'(a)"]
        return L

    def loss_share(self, s: PeSpec) -> list[str]:
        """sum(e^2) over O_c times 1/n, to the host (e is in tot)."""
        FX = s.FX
        return ["        lddwds  D[8], d_fpr",
                "        lds0wds S0[8], d_tot",
                "        lds1wds S1[8], d_tot",
                f"        fmul{FX} D[8], S0[8], S1[8]       ; e^2",
                "        movi r0, 0",
                "        movi r1, 0",
                "        lds1wds S1[9], d_fpr",
                f"        fadd{FX} r0, r0, S1[9]            ; sum",
                "        li r6, c_invn",
                f"        fmul{FX} r0, r0, [r6]             ; / n: this column's share of the loss",
                f"        li r4, {T.LOSS_INDEX}",
                "        lddwds  D[10], d_lout",
                f"        {s.MV} D[10], r0                  ; to the host"]

    def constants(self, s: PeSpec):
        return ([W.declare(C_INVN, value_type=s.dtype), W.declare(C_TWON, value_type=s.dtype)],
                ["c_invn", "c_twon"])

    def host_words(self, n_out: int):
        return [("c_invn", 1.0 / n_out), ("c_twon", 2.0 / n_out)]

    def host_loss(self, out: np.ndarray, Y: np.ndarray) -> float:
        return float(np.mean((out.astype(np.float64) - Y.astype(np.float64)) ** 2))
