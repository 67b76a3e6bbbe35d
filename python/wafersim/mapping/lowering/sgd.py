"""Plain SGD: W -= lr * grad. Per sample, each delta updates W[j, I_r] in place as it
arrives [0617] (v_cpm = 0); in mini-batches G accumulates [0618] and the update task
applies W += (-lr / b) G at the batch's end [0623]."""

from __future__ import annotations

from ..program.spec import PeSpec
from ..registers import CPV, NEGLR, SENT
from .optimizer import OptimizerLowering
from .registry import register_optimizer

__all__ = ["SgdLowering"]


@register_optimizer("sgd")
class SgdLowering(OptimizerLowering):
    name = "sgd"
    in_place = True

    def delta_chain_pass(self, s: PeSpec) -> list[str]:
        FX = s.FX
        return [f"        jr {CPV}                         ; in place (SGD) or accumulate",
                f"cps:    fmul{FX} r2, r2, {NEGLR}              ; -lr * delta_j",
                f"        fmac{FX}.t S0[2], S0[2], S1[2]    ; CP: W[j, I_r] += a * (-lr delta_j) [0617]",
                f"cpa:    fmac{FX}.t S0[3], S0[3], S1[2]    ; CP: G[j, I_r] += a * delta_j [0618]"]

    def own_prologue(self, s: PeSpec) -> list[str]:
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
        return [("s", [f"        fmul{FX} r2, r2, {SENT}              ; -lr * delta_j",
                       f"        fmac{FX} S0[2], S0[2], S1[2]      ; CP: W[j, I_r] += a * (-lr delta_j) [0617]"]),
                ("a", [f"        fmac{FX} S0[3], S0[3], S1[2]      ; CP: G[j, I_r] += a * delta_j [0618]"])]

    def bias_update(self, s: PeSpec) -> list[str]:
        FX = s.FX
        return [";@pass chain",
                "        ld16 r5, v_cpm",
                "        eq16 r5, #0",
                "        bf dba",
                "        li r6, c_neglr",
                f"        {s.MV} r2, [r6]",
                "        lds0wds S0[9], d_bias",
                "        lds1wds S1[9], d_delta",
                f"        fmac{FX} S0[9], S0[9], S1[9]      ; b += delta * (-lr)",
                "        jmp dbd",
                "dba:    lds0wds S0[9], d_gb",
                "        lds1wds S1[9], d_delta",
                f"        fadd{FX} S0[9], S0[9], S1[9]      ; Gb += delta",
                "dbd:",
                ";@pass delta"]

    def update(self, s: PeSpec) -> list[str]:
        """W += G * scale, G = 0 (and the bias) [0618], [0623]."""
        FX, MV = s.FX, s.MV
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

    def host_words(self, lr: float, batch: int, last: int):
        return [("c_neglr", -lr), ("c_s1", -lr / batch), ("c_s2", -lr / last)]
