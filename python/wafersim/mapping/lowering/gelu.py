"""``GELU(approximate="tanh")`` on a finalizer, each step one CE vector instruction rounded
once (``reference/training.py`` repeats the order), with c = sqrt(2/pi), k = 0.044715:

    forward:    u = z*z; u = u*z; u = u*k; u = u + z; u = u*c; t = tanh(u) [0493];
                t = t + 1; h = z*0.5; a = h*t
    derivative: (u, t as above); A = t + 1; B = t*t; B = 1 - B; C = z*z; C = C*3k;
                C = C + 1; D = z*B; D = D*C; D = D*c; f' = A + D; f' = f'*0.5

f' needs z, which the finalizer keeps per slot (``zin``)."""

from __future__ import annotations

import numpy as np

from ..program.spec import PeSpec
from .activation import ActivationLowering
from .elementwise import keep_input, scratch, vop
from .registry import register_activation

__all__ = ["GeluLowering", "GELU_C", "GELU_K"]

GELU_C = float(np.sqrt(2.0 / np.pi))
GELU_K = 0.044715


def _const(name: str) -> list[str]:
    return [f"        li r6, {name}"]


def _tanh_of_input(s: PeSpec, z: str, u: str) -> list[str]:
    """u = c (z + k z^3), then u = tanh(u), from the vector ``z``."""
    L = vop(s, "fmul", u, z, z, "z^2")
    L += vop(s, "fmul", u, u, z, "z^3")
    L += _const("ge_k") + vop(s, "fmul", u, u, "[r6]", "k z^3")
    L += vop(s, "fadd", u, u, z, "z + k z^3")
    L += _const("ge_c") + vop(s, "fmul", u, u, "[r6]", "c (z + k z^3)")
    L += [f"        lddwds  D[9], {u}", f"        lds1wds S1[9], {u}",
          f"        tanh{s.FX} D[9], S1[9]            ; t = tanh(u) [0493]"]
    return L


@register_activation("gelu")
class GeluLowering(ActivationLowering):
    name = "gelu"
    has_derivative = True

    def forward(self, s, dst, src):
        L = ["        lddwds  D[10], d_zin", f"        {s.MV} D[10], {src}              ; keep z (f' needs it)"]
        L += _tanh_of_input(s, "d_z", "d_ge0")
        L += vop(s, "fadd", "d_ge0", "d_ge0", "#1.0", "1 + t")
        L += vop(s, "fmul", "d_ge1", "d_z", "#0.5", "z / 2")
        L += vop(s, "fmul", "d_aw", "d_ge1", "d_ge0", "a = z/2 (1 + t)", reg=11)
        return L

    def derivative(self, s):
        z = "d_zin"
        L = _tanh_of_input(s, z, "d_ge0")                                  # t in ge0
        L += vop(s, "fmul", "d_ge1", "d_ge0", "d_ge0", "t^2")
        L += vop(s, "fsub", "d_ge1", "d_ge1", "#1.0", "t^2 - 1")
        L += vop(s, "fmul", "d_ge1", "d_ge1", "#-1.0", "B = 1 - t^2")
        L += vop(s, "fadd", "d_ge0", "d_ge0", "#1.0", "A = 1 + t")
        L += vop(s, "fmul", "d_ge2", z, z, "z^2")
        L += _const("ge_k3") + vop(s, "fmul", "d_ge2", "d_ge2", "[r6]", "3k z^2")
        L += vop(s, "fadd", "d_ge2", "d_ge2", "#1.0", "C = 1 + 3k z^2")
        L += vop(s, "fmul", "d_ge1", z, "d_ge1", "z B")
        L += vop(s, "fmul", "d_ge1", "d_ge1", "d_ge2", "z B C")
        L += _const("ge_c") + vop(s, "fmul", "d_ge1", "d_ge1", "[r6]", "D = c z B C")
        L += vop(s, "fadd", "d_fpr", "d_ge0", "d_ge1", "A + D")
        L += vop(s, "fmul", "d_fpr", "d_fpr", "#0.5", "f' = (A + D) / 2")
        return L

    def data(self, s):
        t = np.float32 if s.dtype == "fp32" else np.float16
        consts = [f"ge_{name}: .{s.dtype} {float(t(v))!r}"
                  for name, v in (("c", GELU_C), ("k", GELU_K), ("k3", 3 * GELU_K))]
        decl, names = scratch(s, "ge", 3)
        d, n = keep_input(s)
        return consts + decl + d, ["ge_c", "ge_k", "ge_k3"] + names + n

    def extra_bytes(self, nin, nout, esize, slots, final):
        if not final:
            return 0
        return esize * (3 + 3 * nout + slots * nout) + 30
