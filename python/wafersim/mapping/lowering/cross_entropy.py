"""``CrossEntropyLoss``: softmax and the negative log-likelihood of the class, on a column of
head PEs east of the output layer (``program/softmax_head.py``; docs/training.md,
"Cross-entropy"). The output layer's finalizers work as any layer's: they send their
outputs (the logits) east to the heads and take delta = p - y back as their delta sums.

Colors of the head (with the mapping's nine): Y the targets in, O the outputs and loss
shares out, R0 / R1 the reduction chain down the head column (alternating by hop), RB its
result back up."""

from __future__ import annotations

import numpy as np

from ...errors import ConfigError
from ..program.softmax_head import HeadSpec, head_source
from .loss import LossLowering
from .registry import register_loss

__all__ = ["CrossEntropyLowering"]


def _row(r: int, c0: int, c1: int):
    step = 1 if c1 >= c0 else -1
    return [(r, c) for c in range(c0, c1 + step, step)]


@register_loss("cross_entropy")
class CrossEntropyLowering(LossLowering):
    name = "cross_entropy"
    has_head = True
    #: role -> the microthread entries (color & 7) its color may use, None: any. A head
    #: reads Y with an operation that names the color (SC): its entry must differ from the
    #: head's other operations (the staging forwarder on 7, its sends on 0 and 1).
    head_roles = {"Y": (2, 3, 4, 5, 6), "O": None, "R0": None, "R1": None, "RB": None}
    output_role, target_role = "O", "Y"

    def check_model(self, dense) -> None:
        last = dense[-1]
        if last.activation != "identity":
            raise ConfigError(f"CrossEntropyLoss: the output layer (layer {len(dense) - 1}, "
                              f"{last.linear!r}) is followed by {last.act_module!r}; the loss "
                              "takes the logits: end the model with a Linear layer")
        if last.n_out < 2:
            raise ConfigError(f"CrossEntropyLoss needs at least 2 classes; the output layer "
                              f"has {last.n_out} output")

    # ---- placement and routes ----------------------------------------------------------------
    def head_points(self, last) -> list[tuple[int, int]]:
        """Head c of the output layer's block: row c of the block, the column east of it."""
        return [(last.row0 + c, last.col0 + last.cols) for c in range(last.cols)]

    def head_routes(self, t, last, colors: dict, wafer_cols: int, a_out: int, j_out: int) -> None:
        heads = self.head_points(last)
        hc = heads[0][1]
        for c, hp in enumerate(heads):
            fr, fc = last.finalizer(c)
            t.line(a_out, "logits to the softmax head", _row(fr, fc, hc), "RAMP", deliver=[hp])
            t.line(j_out, "softmax deltas", _row(fr, hc, fc), "RAMP", deliver=[(fr, fc)])
            t.line(colors["O"], "outputs", _row(fr, hc, wafer_cols - 1), "RAMP", leave="E")
            t.line(colors["Y"], "targets", _row(fr, wafer_cols - 1, hc), "E", deliver=[hp])
            if c + 1 < len(heads):
                t.line(colors[f"R{c % 2}"], "softmax reduction", [hp, heads[c + 1]], "RAMP",
                       deliver=[heads[c + 1]])
        if len(heads) > 1:
            col = [(r, hc) for r in range(heads[-1][0], heads[0][0] - 1, -1)]
            t.line(colors["RB"], "softmax result", col, "RAMP", deliver=heads[:-1])

    def head_sources(self, last, colors: dict, dtype: str, qcap: int, a_out: int,
                     j_out: int) -> dict[tuple[int, int], str]:
        heads = self.head_points(last)
        C = len(heads)
        out = {}
        for c, (p, (o0, n)) in enumerate(zip(heads, last.out_groups)):
            out[p] = head_source(HeadSpec(
                index=c, count=C, o0=o0, nout=n, dtype=dtype, qcap=qcap, a_in=a_out,
                out=colors["O"], targets=colors["Y"], deltas=j_out,
                r_in=colors[f"R{(c - 1) % 2}"] if c > 0 else None,
                r_out=colors[f"R{c % 2}"] if c + 1 < C else None,
                bcast=colors["RB"] if C > 1 else None))
        return out

    # ---- host --------------------------------------------------------------------------------
    def host_loss(self, out: np.ndarray, Y: np.ndarray) -> float:
        """Mean over samples of -sum y log softmax(out) (float64; y one-hot or
        probabilities)."""
        z = out.astype(np.float64)
        m = z.max(axis=1, keepdims=True)
        logp = z - m - np.log(np.exp(z - m).sum(axis=1, keepdims=True))
        return float(np.mean(-(Y.astype(np.float64) * logp).sum(axis=1)))
