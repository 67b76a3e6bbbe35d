"""``LeakyReLU(negative_slope)`` on a finalizer: a = relu(z) + min(z, 0) * slope (a fused
multiply-add: exactly z for z > 0, z * slope rounded once otherwise, as torch computes
it). f' = d + (1 - d) * slope with d = (x > 0) in {0, 1}, exact: x is the activation when
slope >= 0 (a > 0 exactly when z > 0), and z itself, kept per slot, when slope < 0."""

from __future__ import annotations

import numpy as np

from ..program.idioms import fp_one
from ..program.spec import PeSpec
from .activation import ActivationLowering
from .elementwise import keep_input, scratch
from .registry import register_activation

__all__ = ["LeakyReluLowering"]


@register_activation("leaky_relu")
class LeakyReluLowering(ActivationLowering):
    name = "leaky_relu"
    has_derivative = True

    def __init__(self, module=None):
        super().__init__(module)
        self.slope = float(getattr(module, "negative_slope", 0.01))

    def key(self):
        return (self.slope,)

    @property
    def keeps_input(self) -> bool:
        return self.slope < 0

    def _slope_to_r2(self, s: PeSpec) -> list[str]:
        return ["        li r6, lk_slope", f"        {s.MV} r2, [r6]"]

    def forward(self, s, dst, src):
        FX = s.FX
        L = []
        if self.keeps_input:
            L += ["        lddwds  D[10], d_zin", f"        {s.MV} D[10], {src}              ; keep z (f' needs it)"]
        L += [f"        relu{FX} {dst}, {src}",
              "        lddwds  D[9], d_lk0",
              "        lds0wds S0[9], d_z",
              f"        fmin{FX} D[9], S0[9], #0          ; min(z, 0)"]
        L += self._slope_to_r2(s)
        L += ["        lds0wds S0[11], d_aw",
              "        lds1wds S1[9], d_lk0",
              f"        fmac{FX} S0[11], S0[11], S1[9]    ; a = relu(z) + min(z, 0) * slope"]
        return L

    def derivative(self, s):
        FX = s.FX
        x = "d_zin" if self.keeps_input else None
        L = ["        lddwds  D[7], d_fpr"]
        if x:
            L += [f"        lds1wds S1[8], {x}",
                  f"        drelu{FX} D[7], S1[8]             ; d = (z > 0)"]
        else:
            L += [f"        drelu{FX} D[7], S1[7]             ; d = (a > 0) = (z > 0)"]
        L += ["        lddwds  D[2], d_lk0", "        lds1wds S1[8], d_fpr"] + fp_one(s.dtype)
        L += [f"        fsub{FX} D[2], r2, S1[8]            ; 1 - d"]
        L += self._slope_to_r2(s)
        L += ["        lds0wds S0[7], d_fpr",
              "        lds1wds S1[8], d_lk0",
              f"        fmac{FX} S0[7], S0[7], S1[8]      ; f' = d + (1 - d) * slope"]
        return L

    def data(self, s):
        value = float(np.float32(self.slope)) if s.dtype == "fp32" else float(np.float16(self.slope))
        decl, names = scratch(s, "lk", 1)
        decl = [f"lk_slope: .{s.dtype} {value!r}"] + decl
        names = ["lk_slope"] + names
        if self.keeps_input:
            d, n = keep_input(s)
            decl, names = decl + d, names + n
        return decl, names

    def extra_bytes(self, nin, nout, esize, slots, final):
        if not final:
            return 0
        return esize * (1 + nout + (slots * nout if self.keeps_input else 0)) + 12
