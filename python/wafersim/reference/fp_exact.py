"""Exactly rounded fp16 / fp32 arithmetic from rational numbers, independent of the
emulator: each operation is computed exactly (``fractions.Fraction``) and rounded once to
nearest-even, as the compute element's fused multiply-add and add do [0675]. Slow, plain,
and meant for checking kernels bit for bit."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = ["exact", "round_even", "fma", "add", "fma_chain"]


def _dtype(d) -> np.dtype:
    """numpy dtype of "fp16" / "fp32" or of anything numpy understands."""
    return np.dtype({"fp16": np.float16, "fp32": np.float32}.get(d, d) if isinstance(d, str) else d)


def exact(v) -> Fraction:
    """The exact rational value of a finite float."""
    return Fraction(float(v))


def round_even(value: Fraction, dtype):
    """``value`` rounded to nearest-even in ``dtype`` ("fp16", "fp32" or a numpy float
    type); beyond the
    largest finite value, infinity."""
    t = _dtype(dtype)
    big = np.finfo(t).max
    # Halfway past the largest finite value rounds to infinity (IEEE 754).
    ulp_top = Fraction(float(big)) - Fraction(float(np.nextafter(big, t.type(0))))
    if abs(value) >= Fraction(float(big)) + ulp_top / 2:
        return t.type(np.inf if value > 0 else -np.inf)
    guess = t.type(float(value))
    cands = {guess, np.nextafter(guess, t.type(np.inf)), np.nextafter(guess, t.type(-np.inf))}
    cands = {c for c in cands if np.isfinite(c)}
    bits = np.uint16 if t.itemsize == 2 else np.uint32
    best = min(cands, key=lambda c: (abs(exact(c) - value), int(np.array(c).view(bits)) & 1))
    return t.type(best)


def fma(acc, a, b, dtype):
    """acc + a * b with one rounding."""
    return round_even(exact(acc) + exact(a) * exact(b), dtype)


def add(a, b, dtype):
    """a + b with one rounding."""
    return round_even(exact(a) + exact(b), dtype)


def fma_chain(a_cols, x, order, dtype, start=None):
    """Partial sums psum[i] = fma(...fma(start[i], a[i, j0], x[j0])..., a[i, jk], x[jk]) over
    the columns ``order`` (the order the activations arrive in): the accumulation of one PE.
    ``a_cols`` is the m x n block, ``x`` the n activations."""
    t = _dtype(dtype)
    m = a_cols.shape[0]
    acc = [t.type(0) if start is None else t.type(start[i]) for i in range(m)]
    for j in order:
        xj = exact(x[j])
        for i in range(m):
            acc[i] = round_even(exact(acc[i]) + exact(a_cols[i, j]) * xj, t)
    return np.array(acc, dtype=t)
