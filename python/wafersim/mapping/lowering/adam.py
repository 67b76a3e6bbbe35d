"""Adam as ``torch.optim.Adam`` (``ws.optim.Adam``: lr, betas, eps, weight_decay), fp32.

Every sample (SGD) or mini-batch accumulates G as SGD with momentum does (the chain pass of
:class:`SgdLowering` in its accumulating form); the update task then applies Adam's rule
to every weight of the PE and, at a finalizer, its biases. Per parameter the PE keeps m and
v (``adam_m``, ``adam_v``; the biases' right behind, ``adam_mb``, ``adam_vb``, so that one
vector operation covers both); per PE the bias corrections bc1 = 1 - beta1^t, bc2 = 1 -
beta2^t and the step count t, all updated on the PE (the host writes only constants: a
whole epoch is queued at once). A new Trainer sets all of them to 0, as a new torch
optimizer starts.

Order of operations (the device-order reference, ``reference/adam.py``, repeats it), one
rounding per instruction, ``a`` a scratch vector of the PE's N parameters plus one:

    a = G * s  (s = 1/b);  a = fma(W, wd, a)  (wd > 0);  G = 0
    m = m * beta1;  m = fma(a, 1 - beta1, m)
    v = v * beta2;  a = a * a;  v = fma(a, 1 - beta2, v)
    bc1 = fma(beta1, bc1, 1 - beta1);  bc2 = fma(beta2, bc2, 1 - beta2);  t = t + 1
    a = max(v, 2^-126);  a[N] = bc2;  a = rsqrt(a)              (math library)
    a = v * a  (= sqrt(v); 0 where v = 0);  a = fma(a, a[N], eps)
    a[N] = bc1;  a = reciprocal(a)                               (math library)
    a = a * m;  W = fma(a, a[N] * (-lr), W)

* sqrt(v) is v * rsqrt(max(v, 2^-126)): exact to the routine's rounding for v >= 2^-126,
  and 0 for v = 0 (v * rsqrt(v) would be 0 * inf = NaN: a weight whose input is always 0,
  a blank pixel, has v = 0). For 0 < v < 2^-126 it is v * 2^63, below sqrt(v) by less
  than 2^-63 (1.1e-19): nothing next to any eps that fp32 represents usefully.
* The bias corrections ride along as one more element of the rsqrt and the reciprocal
  vectors, so the scalar divisions cost two elements, not two routine calls.
* bc = 1 - beta^t follows the recurrence bc_t = beta * bc_{t-1} + (1 - beta) from 0, so the
  state starts at zero; with beta and 1 - beta as fp32 constants it stays within a few
  hundred units in the last place of 1 - beta^t (docs/training.md, "Optimizers").
* The math library needs round to nearest even, which fp32 plans keep (fp16 plans are
  refused: v = g^2 underflows and eps = 1e-8 is no fp16 number).
"""

from __future__ import annotations

from functools import lru_cache

from ...asm import mathlib
from ...errors import ConfigError
from .. import runtime_words as W
from ..program.spec import PeSpec
from .registry import register_optimizer
from .sgd import SgdLowering

__all__ = ["AdamLowering"]

C_BETA1 = W.add(W.Word("c_beta1", "value", "all", "host", "apply", "beta1"))
C_BETA2 = W.add(W.Word("c_beta2", "value", "all", "host", "apply", "beta2"))
C_1MBETA1 = W.add(W.Word("c_1mbeta1", "value", "all", "host", "apply", "1 - beta1"))
C_1MBETA2 = W.add(W.Word("c_1mbeta2", "value", "all", "host", "apply", "1 - beta2"))
C_EPS = W.add(W.Word("c_eps", "value", "all", "host", "apply", "eps"))
C_WD = W.add(W.Word("c_wd", "value", "all", "host", "apply", "weight decay"))
ADAM_BC1 = W.add(W.Word("adam_bc1", "value", "all", "program", "apply; a new Trainer clears it",
                        "1 - beta1^t"))
ADAM_BC2 = W.add(W.Word("adam_bc2", "value", "all", "program", "apply; a new Trainer clears it",
                        "1 - beta2^t"))
ADAM_STEP = W.add(W.Word("adam_step", "value", "all", "program", "apply; a new Trainer clears it",
                         "t, the updates applied"))
ADAM_M = W.add(W.Word("adam_m", "buffer", "all", "program", "apply; a new Trainer clears it",
                      "first moment per weight"))
ADAM_MB = W.add(W.Word("adam_mb", "buffer", "finalizers", "program",
                       "apply; a new Trainer clears it", "first moment per bias"))
ADAM_V = W.add(W.Word("adam_v", "buffer", "all", "program", "apply; a new Trainer clears it",
                      "second moment per weight"))
ADAM_VB = W.add(W.Word("adam_vb", "buffer", "finalizers", "program",
                       "apply; a new Trainer clears it", "second moment per bias"))
ADAM_A = W.add(W.Word("adam_a", "buffer", "all", "program", "apply",
                      "scratch of the update: a value per parameter, then a scalar"))

#: What the math-library routines may clobber in the update task: r1 holds where ``ap``
#: returns, r7-r12 and r14 hold roles (registers.py); DSRs 9-11 are every task's scratch.
MATH_GPRS = ("r0", "r2", "r3", "r4", "r5", "r6", "r13", "r15")
MATH_DSRS = (9, 10, 11)
DESCRIPTOR = 6          # bytes of a 1D descriptor


@lru_cache(maxsize=None)
def _routines(n: int):
    """rsqrt and reciprocal in place on ``adam_a`` (n elements: the parameters and a scalar)."""
    kw = dict(n=n, src="adam_a", dst="adam_a", dsrs=MATH_DSRS, gprs=MATH_GPRS)
    return (mathlib.rsqrt("fp32", prefix="ars", **kw),
            mathlib.reciprocal("fp32", prefix="arc", **kw))


def _fp32_only(dtype: str) -> None:
    if dtype != "fp32":
        raise ConfigError(f"Adam is lowered for fp32 plans only (this one is {dtype}): in fp16, "
                          "v = g^2 underflows for gradients below 2.4e-4 and eps = 1e-8 is no "
                          "fp16 number; map with dtype='fp32' or use SGD")


@register_optimizer("adam")
class AdamLowering(SgdLowering):
    name = "adam"

    def __init__(self, module=None):
        super().__init__(module)
        self.betas = tuple(getattr(module, "betas", (0.9, 0.999)))
        self.eps = float(getattr(module, "eps", 1e-8))

    @property
    def in_place(self) -> bool:
        return False

    def key(self) -> tuple:
        return (self.weight_decay > 0,)

    # ---- the update task -----------------------------------------------------------------
    def update(self, s: PeSpec) -> list[str]:
        _fp32_only(s.dtype)
        nw, nb = s.weight_count, (s.nout if s.final and s.bias else 0)
        n = nw + nb
        gall, wall, xw = s.weight_operands      # W's 4D view, or the records (single weights)
        rsqrt, recip = _routines(n + 1)
        last = f"adam_a + {4 * n}"

        def scalar(word: str, reg: str = "r2") -> list[str]:
            return [f"        li r6, {word}", f"        mov32 {reg}, [r6]"]

        def correction(bc: str, beta: str, one_minus: str) -> list[str]:
            return (scalar(bc) + scalar(one_minus, "r4")
                    + [f"        li r6, {beta}",
                       f"        fmacs r4, r4, [r6]               ; {bc} = (1 - beta) + beta * {bc}",
                       f"        lddwds  D[10], d_{bc}",
                       "        mov32 D[10], r4"])

        L = [f"        lds0wds S0[10], {gall}",
             "        lddwds  D[10], d_adw",
             "        fmuls D[10], S0[10], r2            ; a = G / b (the batch's mean)"]
        if nb:
            L += ["        lds0wds S0[10], d_gb",
                  "        lddwds  D[10], d_adb",
                  "        fmuls D[10], S0[10], r2"]
        if self.weight_decay > 0:
            L += scalar("c_wd") + xw + [
                "        lds0wds S0[10], d_adw",
                f"        lds1wds S1[10], {wall}",
                "        fmacs S0[10], S0[10], S1[10]     ; a += W * weight_decay"]
            if nb:
                L += ["        lds0wds S0[10], d_adb",
                      "        lds1wds S1[10], d_bias",
                      "        fmacs S0[10], S0[10], S1[10]"]
        L += [f"        lddwds  D[10], {gall}",
              "        mov32 D[10], #0                  ; G = 0"]
        if nb:
            L += ["        lddwds  D[10], d_gb", "        mov32 D[10], #0"]
        L += ["        li r6, c_beta1",
              "        lds0wds S0[10], d_adm",
              "        fmuls S0[10], S0[10], [r6]       ; m = m * beta1"]
        L += scalar("c_1mbeta1") + [
              "        lds0wds S0[10], d_adm",
              "        lds1wds S1[10], d_ada",
              "        fmacs S0[10], S0[10], S1[10]     ; m += g * (1 - beta1)",
              "        li r6, c_beta2",
              "        lds0wds S0[10], d_adv",
              "        fmuls S0[10], S0[10], [r6]       ; v = v * beta2",
              "        lds0wds S0[10], d_ada",
              "        lds1wds S1[10], d_ada",
              "        fmuls S0[10], S0[10], S1[10]     ; a = g * g"]
        L += scalar("c_1mbeta2") + [
              "        lds0wds S0[10], d_adv",
              "        lds1wds S1[10], d_ada",
              "        fmacs S0[10], S0[10], S1[10]     ; v += g^2 * (1 - beta2)"]
        L += correction("adam_bc1", "c_beta1", "c_1mbeta1")
        L += correction("adam_bc2", "c_beta2", "c_1mbeta2")
        L += ["        lddwds  D[10], d_adn",
              "        mov32 D[10], r4                  ; a[N] = bc2: its rsqrt rides along"]
        L += scalar("adam_step") + [
              "        fadds r2, r2, #1.0",
              "        lddwds  D[10], d_adam_step",
              "        mov32 D[10], r2                  ; t += 1",
              "        lds0wds S0[10], d_adv",
              "        lddwds  D[10], d_ada",
              "        fmaxs D[10], S0[10], #min_normal ; a = max(v, 2^-126): no rsqrt(0) = inf",
              f"; rsqrt of the math library on adam_a, {n + 1} elements"]
        L += list(rsqrt.code)
        L += scalar(last) + [
              "        lds0wds S0[10], d_ada",
              "        lds1wds S1[10], d_adv",
              "        fmuls S0[10], S0[10], S1[10]     ; a = v * rsqrt(max(v, 2^-126)) = sqrt(v)"]
        L += scalar("c_eps", "r4") + [
              "        lds1wds S1[10], d_ada",
              "        lddwds  D[4], d_ada              ; (operand r4 pairs with D[4] [0585];",
              "                                         ;  every task loads D[4] before use)",
              "        fmacs D[4], r4, S1[10]           ; a = eps + sqrt(v) / sqrt(bc2)",
              "        lddwds  D[10], d_adn",
              "        li r6, adam_bc1",
              "        mov32 D[10], [r6]                ; a[N] = bc1: its reciprocal rides along",
              f"; reciprocal of the math library on adam_a, {n + 1} elements"]
        L += list(recip.code)
        L += scalar(last) + [
              "        li r6, c_neglr",
              "        fmuls r2, r2, [r6]               ; -lr / bc1",
              "        lds0wds S0[10], d_ada",
              "        lds1wds S1[10], d_adm",
              "        fmuls S0[10], S0[10], S1[10]     ; a = m / (sqrt(v / bc2) + eps)"] + xw + [
              f"        lds0wds S0[10], {wall}",
              "        lds1wds S1[10], d_adw",
              "        fmacs S0[10], S0[10], S1[10]     ; W += a * (-lr / bc1)"]
        if nb:
            L += ["        lds0wds S0[10], d_bias",
                  "        lds1wds S1[10], d_adb",
                  "        fmacs S0[10], S0[10], S1[10]     ; b += a * (-lr / bc1)"]
        return L

    # ---- storage and words ---------------------------------------------------------------
    def data(self, s: PeSpec):
        _fp32_only(s.dtype)
        nw, nb = s.weight_count, (s.nout if s.final and s.bias else 0)
        n = nw + nb

        def dsd(name: str, base: str, length: int) -> str:
            return f"{name + ':':<14}.dsd mem1d, base={base}, length={length}, stride=4"

        # descriptors at the end of the 15-bit space: the first 512 bytes, where ld16 / st16
        # reach the runtime words, are too full for them (a CrossEntropyLoss finalizer
        # leaves about 100 bytes)
        L = [".descriptors high", dsd("d_adw", "adam_a", nw), dsd("d_ada", "adam_a", n), dsd("d_adn", f"adam_a + {4 * n}", 1),
             dsd("d_adm", "adam_m", n), dsd("d_adv", "adam_v", n),
             dsd("d_adam_bc1", "adam_bc1", 1), dsd("d_adam_bc2", "adam_bc2", 1),
             dsd("d_adam_step", "adam_step", 1)]
        if nb:
            L.append(dsd("d_adb", f"adam_a + {4 * nw}", nb))
        L += [W.declare(w, value_type="fp32") for w in
              (C_BETA1, C_BETA2, C_1MBETA1, C_1MBETA2, C_EPS, C_WD, ADAM_BC1, ADAM_BC2, ADAM_STEP)]
        # m and v of the biases right behind the weights': one descriptor covers both
        L += [W.declare(ADAM_M, value_type="fp32", count=nw)]
        if nb:
            L.append(W.declare(ADAM_MB, value_type="fp32", count=nb))
        L.append(W.declare(ADAM_V, value_type="fp32", count=nw))
        if nb:
            L.append(W.declare(ADAM_VB, value_type="fp32", count=nb))
        L.append(W.declare(ADAM_A, value_type="fp32", count=n + 1))
        for r in _routines(n + 1):
            L += list(r.data)
        L.append(".descriptors low")
        names = ["c_beta1", "c_beta2", "c_1mbeta1", "c_1mbeta2", "c_eps", "c_wd", "adam_bc1",
                 "adam_bc2", "adam_step", "adam_m", "adam_v"] + (["adam_mb", "adam_vb"] if nb else [])
        return L, names

    def extra_bytes(self, nin: int, nout: int, esize: int, slots: int, final: bool) -> int:
        """m, v, the scratch vector (n + 1), nine numbers, nine descriptors, and the math
        library's scratch vectors (they grow with n: 24 and 26 bytes per element) and
        descriptors, measured on the routines of two elements."""
        _fp32_only("fp32" if esize == 4 else "fp16")
        n = nin * nout + (nout if final else 0)
        lib = sum(r.scratch_bytes // 2 * (n + 1) + r.descriptor_bytes for r in _routines(2))
        return 4 * (3 * n + 1 + 9) + 9 * DESCRIPTOR + lib + 4     # + 4: alignment

    def state_buffers(self) -> list[tuple[str, str]]:
        return [("adam_m", "adam_mb"), ("adam_v", "adam_vb")]

    def state_words(self) -> list[str]:
        return ["adam_bc1", "adam_bc2", "adam_step"]

    def host_words(self, lr: float, batch: int, last: int):
        b1, b2 = self.betas
        words = [("c_neglr", -lr, "-lr"), ("c_s1", 1.0 / batch, "1 / batch_size"),
                 ("c_s2", 1.0 / last, "1 / (samples in the last batch)"),
                 ("c_beta1", b1, "betas[0]"), ("c_beta2", b2, "betas[1]"),
                 ("c_1mbeta1", 1.0 - b1, "1 - betas[0]"), ("c_1mbeta2", 1.0 - b2, "1 - betas[1]"),
                 ("c_eps", self.eps, "eps")]
        if self.weight_decay > 0:
            words.append(("c_wd", self.weight_decay, "weight_decay"))
        return words
