"""SGD as ``torch.optim.SGD`` (``ws.optim.SGD``: lr, momentum, nesterov, weight_decay).

Plain SGD (no momentum, no weight decay): per sample, each delta updates W[j, I_r] in place
as it arrives [0617] (v_cpm = 0); in mini-batches G accumulates [0618] and the update task
applies W += (-lr / b) G at the batch's end [0623].

With momentum or weight decay every sample (SGD) or mini-batch accumulates G, and the
update task applies torch's rule to every weight, with the velocity ``vel`` stored per
weight in PE memory (``velb`` per bias at the finalizers). Order of operations (what the
device-order reference repeats), s = 1/b in the plan's format:

    g = G * s;  g = g + W * wd  (wd > 0);  v = g + v * mu;
    W = W + (g + v * mu) * (-lr)  (Nesterov)  or  W = W + v * (-lr);  G = 0

each a CE vector instruction with one rounding (fmul, then fused multiply-adds [0675]).
"""

from __future__ import annotations

from .. import runtime_words as W
from ..program.spec import PeSpec
from ..registers import CPV, NEGLR, SENT
from .optimizer import OptimizerLowering
from .registry import register_optimizer

__all__ = ["SgdLowering"]

C_MOM = W.add(W.Word("c_mom", "value", "all", "host", "apply", "momentum"))
C_WD = W.add(W.Word("c_wd", "value", "all", "host", "apply", "weight decay"))
VEL = W.add(W.Word("vel", "buffer", "all", "program", "apply; a new Trainer clears it",
                   "velocity per weight (momentum)"))
VELB = W.add(W.Word("velb", "buffer", "finalizers", "program", "apply; a new Trainer clears it",
                    "velocity per bias (momentum)"))


@register_optimizer("sgd")
class SgdLowering(OptimizerLowering):
    name = "sgd"

    def __init__(self, module=None):
        super().__init__(module)
        self.momentum = float(getattr(module, "momentum", 0.0))
        self.weight_decay = float(getattr(module, "weight_decay", 0.0))
        self.nesterov = bool(getattr(module, "nesterov", False))

    @property
    def in_place(self) -> bool:
        return self.momentum == 0 and self.weight_decay == 0

    def key(self) -> tuple:
        return (self.momentum > 0, self.nesterov, self.weight_decay > 0)

    # ---- the chain pass of one delta -------------------------------------------------------
    def delta_chain_pass(self, s: PeSpec) -> list[str]:
        FX = s.FX
        accumulate = f"cpa:    fmac{FX}.t S0[3], S0[3], S1[2]    ; CP: G[j, I_r] += a * delta_j [0618]"
        if not self.in_place:
            return [f"        jr {CPV}                         ; (setup: cpa, v_cpm = 1)",
                    "cps:", accumulate]
        return [f"        jr {CPV}                         ; in place (SGD) or accumulate",
                f"cps:    fmul{FX} r2, r2, {NEGLR}              ; -lr * delta_j",
                f"        fmac{FX}.t S0[2], S0[2], S1[2]    ; CP: W[j, I_r] += a * (-lr delta_j) [0617]",
                accumulate]

    def own_prologue(self, s: PeSpec) -> list[str]:
        if not self.in_place:
            return ["own:    li r6, delta"]
        return ["own:    li r6, c_neglr",
                f"        {s.MV} {SENT}, [r6]                  ; -lr",
                "        ld16 r5, v_cpm",
                "        li r6, delta",
                "        eq16 r5, #0",
                "        bt owns                        ; (a branch reaches 128 instructions; the",
                "        jmp owna                       ;  unrolled passes are longer)",
                "owns:"]

    def own_variants(self, s: PeSpec):
        FX = s.FX
        acc = ("a", [f"        fmac{FX} S0[3], S0[3], S1[2]      ; CP: G[j, I_r] += a * delta_j [0618]"])
        if not self.in_place:
            return [acc]
        return [("s", [f"        fmul{FX} r2, r2, {SENT}              ; -lr * delta_j",
                       f"        fmac{FX} S0[2], S0[2], S1[2]      ; CP: W[j, I_r] += a * (-lr delta_j) [0617]"]),
                acc]

    def bias_update(self, s: PeSpec) -> list[str]:
        FX = s.FX
        acc = ["dba:    lds0wds S0[9], d_gb",
               "        lds1wds S1[9], d_delta",
               f"        fadd{FX} S0[9], S0[9], S1[9]      ; Gb += delta"]
        if not self.in_place:
            return [";@pass chain"] + acc + [";@pass delta"]
        return ([";@pass chain",
                 "        ld16 r5, v_cpm",
                 "        eq16 r5, #0",
                 "        bf dba",
                 "        li r6, c_neglr",
                 f"        {s.MV} r2, [r6]",
                 "        lds0wds S0[9], d_bias",
                 "        lds1wds S1[9], d_delta",
                 f"        fmac{FX} S0[9], S0[9], S1[9]      ; b += delta * (-lr)",
                 "        jmp dbd"] + acc + ["dbd:", ";@pass delta"])

    # ---- the update task -------------------------------------------------------------------
    def update(self, s: PeSpec) -> list[str]:
        if self.in_place:
            return self._plain_update(s)
        L = ["        mov16 r0, r6                   ; the address of this batch's scale"]
        g, w, _ = s.weight_operands
        L += self._rule(s, g=g, w=w, v="d_vall", w4d=not s.single)
        if s.final and s.bias:
            L += self._rule(s, g="d_gb", w="d_bias", v="d_vb", w4d=False)
        return L

    def _plain_update(self, s: PeSpec) -> list[str]:
        """W += G * scale, G = 0 (and the bias) [0618], [0623]."""
        FX, MV = s.FX, s.MV
        if s.single:    # single weights: every kept value and its G (single_weights.py)
            L = ["        lds0wds S0[10], d_swall",
                 "        lds1wds S1[10], d_sgall",
                 f"        fmac{FX} S0[10], S0[10], S1[10]   ; W += G * scale [0618], [0623]",
                 "        lddwds  D[10], d_sgall",
                 f"        {MV} D[10], #0"]
        else:
            L = ["        lds0wds S0[10], d_wall",
                 "        ldxds   X[2], x_wall",
                 "        lds1wds S1[10], d_gall",
                 f"        fmac{FX} S0[10], S0[10], S1[10]   ; W += G * scale [0618], [0623]",
                 "        lddwds  D[10], d_gall",
                 f"        {MV} D[10], #0"]
        if s.final and s.bias:
            L += ["        lds0wds S0[10], d_bias",
                  "        lds1wds S1[10], d_gb",
                  f"        fmac{FX} S0[10], S0[10], S1[10]",
                  "        lddwds  D[10], d_gb",
                  f"        {MV} D[10], #0"]
        return L

    def _rule(self, s: PeSpec, *, g: str, w: str, v: str, w4d: bool) -> list[str]:
        """torch's rule on one parameter (W through its 4D view, or the bias): r0 holds the
        address of the scale 1/b; G (``g``) becomes the step and is cleared at the end."""
        FX, MV = s.FX, s.MV
        xw = ["        ldxds   X[2], x_wall"] if w4d else []

        def scalar(word):
            return [f"        li r6, {word}", f"        {MV} r2, [r6]"]

        L = ["        mov16 r6, r0",
             f"        {MV} r2, [r6]                   ; 1 / b",
             f"        lds0wds S0[10], {g}",
             f"        fmul{FX} S0[10], S0[10], r2       ; g = G / b (the batch's mean)"]
        if self.weight_decay > 0:
            L += scalar("c_wd") + xw + [
                f"        lds0wds S0[10], {g}",
                f"        lds1wds S1[10], {w}",
                f"        fmac{FX} S0[10], S0[10], S1[10]   ; g += W * wd"]
        step = g
        if self.momentum > 0:
            L += scalar("c_mom") + [
                f"        lddwds  D[10], {v}",
                f"        lds0wds S0[10], {g}",
                f"        lds1wds S1[10], {v}",
                f"        fmac{FX} D[10], S0[10], S1[10]    ; v = g + v * momentum"]
            if self.nesterov:
                L += [f"        lds0wds S0[10], {g}",
                      f"        lds1wds S1[10], {v}",
                      f"        fmac{FX} S0[10], S0[10], S1[10]   ; g = g + v * momentum (Nesterov)"]
            else:
                step = v
        L += scalar("c_neglr") + xw + [
            f"        lds0wds S0[10], {w}",
            f"        lds1wds S1[10], {step}",
            f"        fmac{FX} S0[10], S0[10], S1[10]   ; W += step * (-lr)",
            f"        lddwds  D[10], {g}",
            f"        {MV} D[10], #0"]
        return L

    # ---- storage and words ---------------------------------------------------------------
    def data(self, s: PeSpec):
        if self.in_place:
            return [], []
        E, TY = s.esize, s.dtype
        L = [W.declare(C_MOM, value_type=TY), W.declare(C_WD, value_type=TY)]
        names = ["c_mom", "c_wd"]
        if self.momentum > 0:
            n = s.weight_count
            L += [f"d_vall:   .dsd mem1d, base=vel, length={n}, stride={E}",
                  W.declare(VEL, value_type=TY, count=n)]
            names.append("vel")
            if s.final and s.bias:
                L += [f"d_vb:     .dsd mem1d, base=velb, length={s.nout}, stride={E}",
                      W.declare(VELB, value_type=TY, count=s.nout)]
                names.append("velb")
        return L, names

    def extra_bytes(self, nin: int, nout: int, esize: int, slots: int, final: bool) -> int:
        if self.in_place:
            return 0
        n = 2 + (nin * nout + (nout if final else 0) if self.momentum > 0 else 0)
        return n * esize + (12 if self.momentum > 0 else 0)   # + descriptors

    def state_buffers(self) -> list[tuple[str, str]]:
        return [("vel", "velb")] if self.momentum > 0 else []

    def host_words(self, lr: float, batch: int, last: int):
        if self.in_place:
            return [("c_neglr", -lr, "-lr"), ("c_s1", -lr / batch, "-lr / batch_size"),
                    ("c_s2", -lr / last, "-lr / (samples in the last batch)")]
        words = [("c_neglr", -lr, "-lr"), ("c_s1", 1.0 / batch, "1 / batch_size"),
                 ("c_s2", 1.0 / last, "1 / (samples in the last batch)")]
        if self.momentum > 0:
            words.append(("c_mom", self.momentum, "momentum"))
        if self.weight_decay > 0:
            words.append(("c_wd", self.weight_decay, "weight_decay"))
        return words
