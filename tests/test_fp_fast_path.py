"""The fast path of the fused multiply-add (fp16 and fp32, numerics/fast_fma.cpp) gives the
correctly rounded result bit for bit in round to nearest even: checked against exact
rational arithmetic over random bit patterns, where the wide host sum is exact and where it
is not. test_fp_hardware_paths.py compares it with the integer reference in every mode."""

from fractions import Fraction

import numpy as np
import pytest
from fp_reference import round_exact

import wafersim as ws


def _finite_patterns(rng, n, bits):
    dt = np.uint16 if bits == 16 else np.uint32
    fdt = np.float16 if bits == 16 else np.float32
    v = rng.integers(0, 2**bits, n * 2, dtype=np.uint64).astype(dt).view(fdt)
    return v[np.isfinite(v)][:n]


@pytest.mark.parametrize("bits,n", [(16, 20000), (32, 8000)])
def test_fast_fma_matches_exact_rounding_on_random_bit_patterns(bits, n):
    rng = np.random.default_rng(bits)
    fdt = np.float16 if bits == 16 else np.float32
    a, b, c = (_finite_patterns(rng, n, bits) for _ in range(3))
    if bits == 32:  # keep products and addends within a few binades half of the time
        near = rng.random(n) < 0.5
        with np.errstate(over="ignore"):
            c = np.where(near, (a.astype(np.float64) * b * rng.uniform(-2, 2, n)).astype(fdt), c)
        c[~np.isfinite(c)] = 1
    with np.errstate(all="ignore"):
        out = ws.numerics.fma(a, b, c, "fp16" if bits == 16 else "fp32")
    bad = 0
    for ai, bi, ci, oi in zip(a, b, c, out):
        exact = Fraction(float(ai)) * Fraction(float(bi)) + Fraction(float(ci))
        if exact == 0:
            continue
        ref = round_exact(exact, fdt, "rne")
        bad += not np.array_equal(np.array(oi), np.array(ref))
    assert bad == 0


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_fast_fma_signed_zeros(dtype):
    t = np.float16 if dtype == "fp16" else np.float32
    a = np.array([-0.0, 1.0, -1.0, 0.0, 2.0], t)
    b = np.array([1.0, 1.0, 0.0, -3.0, 3.0], t)
    c = np.array([-0.0, -1.0, 0.0, -0.0, -6.0], t)
    out = ws.numerics.fma(a, b, c, dtype)
    assert list(np.signbit(out)) == [True, False, False, True, False]
    assert np.all(out == 0)
