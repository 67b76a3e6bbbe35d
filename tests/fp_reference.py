"""Independent reference rounding for tests: exact rational arithmetic (fractions) and
numpy's own neighbours of a value, never wafersim's code."""

from __future__ import annotations

from fractions import Fraction

import numpy as np


def exact(x) -> Fraction:
    return Fraction(float(x))


def neighbours(value: Fraction, dtype) -> tuple:
    """(floor, ceil): the largest dtype value <= value and the smallest >= value,
    with +-inf standing beyond the largest finite values."""
    dtype = np.dtype(dtype)
    finfo = np.finfo(dtype)
    top = Fraction(float(finfo.max))
    if value > top:
        return dtype.type(finfo.max), dtype.type(np.inf)
    if value < -top:
        return dtype.type(-np.inf), dtype.type(-finfo.max)
    guess = dtype.type(float(value))  # may be off by one ULP (double rounding): search around
    cands = {guess}
    with np.errstate(over="ignore"):
        for _ in range(2):
            cands |= {np.nextafter(c, dtype.type(np.inf)) for c in cands}
            cands |= {np.nextafter(c, dtype.type(-np.inf)) for c in cands}
    finite = sorted((c for c in cands if np.isfinite(c)), key=lambda c: Fraction(float(c)))
    lo = max((c for c in finite if Fraction(float(c)) <= value), key=lambda c: Fraction(float(c)))
    hi = min((c for c in finite if Fraction(float(c)) >= value), key=lambda c: Fraction(float(c)))
    return lo, hi


def round_exact(value: Fraction, dtype, mode: str = "rne"):
    """Correctly rounded value of an exact rational in dtype, for the five IEEE modes."""
    dtype = np.dtype(dtype)
    if value == 0:
        return dtype.type(0.0)
    lo, hi = neighbours(value, dtype)
    if lo == hi:
        return lo
    if mode == "rtz":
        return lo if value > 0 else hi
    if mode == "rup":
        return hi
    if mode == "rdn":
        return lo
    # Nearest: IEEE measures ties against the overflow threshold max + ulp/2 as if the
    # exponent range were unbounded, so treat inf as max + ulp here.
    def as_frac(c):
        if np.isinf(c):
            finfo = np.finfo(dtype)
            mx = Fraction(float(finfo.max))
            ulp = mx - Fraction(float(np.nextafter(dtype.type(finfo.max), dtype.type(0))))
            return mx + ulp if c > 0 else -(mx + ulp)
        return Fraction(float(c))

    dlo, dhi = value - as_frac(lo), as_frac(hi) - value
    if dlo < dhi:
        return lo
    if dhi < dlo:
        return hi
    if mode == "rna":
        return hi if value > 0 else lo
    bits_lo = np.array(lo, dtype).view(np.uint16 if dtype.itemsize == 2 else np.uint32)
    return lo if int(bits_lo) % 2 == 0 else hi
