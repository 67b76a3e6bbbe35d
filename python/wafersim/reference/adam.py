"""References of Adam (``torch.optim.Adam``'s rule) for the training references:

* :class:`DeviceOrderAdam`: the update in the order of operations of the mapping
  (mapping/lowering/adam.py), fp32, one rounding per instruction, with the math library's
  bit-exact references for rsqrt and reciprocal: a wafer run equals it bit for bit.
* :func:`adam_step`: the textbook rule in float64 (Kingma and Ba, eps added to
  sqrt(v_hat) as torch does), for comparisons with a tolerance.
"""

from __future__ import annotations

import numpy as np

from .training import fma32

__all__ = ["DeviceOrderAdam", "adam_step"]

_f32 = np.float32
_MIN_NORMAL = _f32(2.0 ** -126)


def _routine(name: str):
    from ..asm import mathlib

    r = mathlib.ROUTINES[name]("fp32", n=1, src="s", dst="d", prefix="r")
    return lambda v: r.reference(np.asarray(v, _f32))


class DeviceOrderAdam:
    """Adam's state (m, v per parameter array; bc1 = 1 - beta1^t, bc2, t) and its update
    in the mapping's order. ``params``: the parameter arrays (weights and biases) whose
    shapes the moments take."""

    def __init__(self, params, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0):
        self.b1, self.b2 = _f32(betas[0]), _f32(betas[1])
        self.omb1, self.omb2 = _f32(1.0 - betas[0]), _f32(1.0 - betas[1])
        self.eps, self.wd = _f32(eps), _f32(weight_decay)
        self.m = [np.zeros_like(p, dtype=_f32) for p in params]
        self.v = [np.zeros_like(p, dtype=_f32) for p in params]
        self.bc1 = self.bc2 = self.t = _f32(0)
        self._rsqrt, self._reciprocal = _routine("rsqrt"), _routine("reciprocal")

    def step(self, params, grads, scale, lr) -> None:
        """One update of every array of ``params`` (in place) from the accumulated
        gradients ``grads`` (cleared), averaged by ``scale`` = 1 / samples."""
        s, neglr = _f32(scale), _f32(-lr)
        self.bc1 = fma32(self.b1, self.bc1, self.omb1)
        self.bc2 = fma32(self.b2, self.bc2, self.omb2)
        self.t = _f32(self.t + _f32(1))
        c2 = self._rsqrt([self.bc2])[0]                 # rides along with the vector
        step = _f32(self._reciprocal([self.bc1])[0] * neglr)
        for W, G, m, v in zip(params, grads, self.m, self.v):
            a = (G * s).astype(_f32)
            if self.wd > 0:
                a = fma32(W, np.full_like(W, self.wd), a)
            G[...] = 0
            m[...] = (m * self.b1).astype(_f32)
            m[...] = fma32(a, np.full_like(a, self.omb1), m)
            v[...] = (v * self.b2).astype(_f32)
            a = (a * a).astype(_f32)
            v[...] = fma32(a, np.full_like(a, self.omb2), v)
            a = self._rsqrt(np.fmax(v, _MIN_NORMAL).ravel()).reshape(v.shape)
            a = (a * v).astype(_f32)                    # sqrt(v); 0 where v = 0
            a = fma32(a, np.full_like(a, c2), np.full_like(a, self.eps))
            a = self._reciprocal(a.ravel()).reshape(v.shape)
            a = (a * m).astype(_f32)
            W[...] = fma32(a, np.full_like(a, step), W)


def adam_step(P, gW, gb, state: dict, lr: float, betas=(0.9, 0.999), eps: float = 1e-8,
              weight_decay: float = 0.0):
    """One textbook Adam step over every parameter of P [(W, b or None)] with the batch's
    mean gradients; ``state`` (a dict the caller keeps, empty at first) holds t, m and v."""
    b1, b2 = betas
    t = state["t"] = state.get("t", 0) + 1
    out = []
    for l, (W, b) in enumerate(P):
        new = []
        for k, (p, g) in enumerate(((W, gW[l]), (b, gb[l]))):
            if p is None:
                new.append(None)
                continue
            g = g + weight_decay * p
            m = state[("m", l, k)] = b1 * state.get(("m", l, k), 0) + (1 - b1) * g
            v = state[("v", l, k)] = b2 * state.get(("v", l, k), 0) + (1 - b2) * g * g
            m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
            new.append(p - lr * m_hat / (np.sqrt(v_hat) + eps))
        out.append(tuple(new))
    return out
