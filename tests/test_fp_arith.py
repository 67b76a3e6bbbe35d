"""Fused multiply-add and friends round exactly once ([0669], [0675]); checked against
exact rational arithmetic."""

from fractions import Fraction

import numpy as np
import pytest

import wafersim as ws
from fp_reference import round_exact


def _fr(x):
    return Fraction(float(x))


def _random_values(rng, n, dtype, lo, hi):
    mags = np.exp2(rng.uniform(lo, hi, n)) * rng.choice([-1, 1], n)
    return mags.astype(dtype)


@pytest.mark.parametrize("dtype,lo,hi", [(np.float16, -14, 7), (np.float32, -60, 60)])
@pytest.mark.parametrize("mode", ["rne", "rtz", "rup", "rdn", "rna"])
def test_fma_equals_correctly_rounded_exact_result(dtype, lo, hi, mode):
    rng = np.random.default_rng(17)
    n = 1500
    a, b = _random_values(rng, n, dtype, lo, hi), _random_values(rng, n, dtype, lo, hi)
    # c close to -a*b half of the time, to exercise cancellation
    c = np.where(rng.random(n) < 0.5, _random_values(rng, n, dtype, 2 * lo, 2 * hi),
                 (-(a.astype(np.float64) * b)).astype(dtype))
    name = "fp16" if dtype == np.float16 else "fp32"
    with np.errstate(over="ignore"):
        out = ws.numerics.fma(a, b, c, name, mode)
    for ai, bi, ci, oi in zip(a, b, c, out):
        exact = _fr(ai) * _fr(bi) + _fr(ci)
        if exact == 0:
            continue  # signed zeros are checked separately
        ref = round_exact(exact, dtype, mode)
        assert np.array_equal(np.array(oi), np.array(ref)), f"{ai}*{bi}+{ci}: {oi} vs {ref}"


def test_fma_rounds_once_not_twice_0675():
    a = np.array([1 + 2.0**-12], np.float32)
    c = np.array([-(1 + 2.0**-11)], np.float32)
    fused = ws.numerics.fma(a, a, c, "fp32")
    assert fused[0] == np.float32(2.0**-24)  # separate multiply and add would give 0
    assert (a * a + c)[0] == 0


def test_fp16_fma_wide_exponent_span_is_exact():
    # a*b tiny, c large: the product's bits fall far below c's ULP and only round
    a = np.array([2.0**-14], np.float16)
    b = np.array([2.0**-10], np.float16)
    c = np.array([2048.0], np.float16)
    assert ws.numerics.fma(a, b, c, "fp16", "rup")[0] == np.float16(2050.0)
    assert ws.numerics.fma(a, b, c, "fp16", "rne")[0] == np.float16(2048.0)
    assert ws.numerics.fma(a, b, -c, "fp16", "rtz")[0] == np.float16(-2047.0)  # ULP 1 below 2048


@pytest.mark.parametrize("dt", ["fp16", "fp32"])
def test_special_values(dt):
    t = np.float16 if dt == "fp16" else np.float32
    inf, nan = t(np.inf), t(np.nan)

    def f(a, b, c, mode="rne"):
        return ws.numerics.fma(np.array([a], t), np.array([b], t), np.array([c], t), dt, mode)[0]

    assert np.isnan(f(inf, 0, 1))          # inf * 0
    assert np.isnan(f(inf, 1, -inf))       # inf - inf
    assert np.isnan(f(nan, 1, 1))
    assert f(inf, -2, 5) == -inf
    assert f(2, 3, inf) == inf
    # exact zeros: (+0)(-1) + (+0) is +0 except when rounding toward -inf
    assert not np.signbit(f(0, -1, 0))
    assert np.signbit(f(0, -1, 0, "rdn"))
    assert np.signbit(f(-0.0, 1, -0.0))
    # exact cancellation of nonzero values
    assert f(2, 3, -6) == 0 and not np.signbit(f(2, 3, -6))
    assert np.signbit(f(2, 3, -6, "rdn"))


def test_bf16_fma_on_bit_patterns():
    def bf16(x):  # truncate fp32 to bf16 bits; values chosen to be exact
        return (np.array(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)

    out = ws.numerics.fma(bf16([1.5]), bf16([2.0]), bf16([0.25]), "bf16")
    assert (out.astype(np.uint32) << 16).view(np.float32)[0] == 3.25


def test_fma_shape_and_dtype_errors():
    a = np.ones(3, np.float16)
    with pytest.raises(ws.ConfigError, match="one shape"):
        ws.numerics.fma(a, a, np.ones(4, np.float16))
    with pytest.raises(ws.ConfigError, match="c must have dtype float16"):
        ws.numerics.fma(a, a, np.ones(3, np.float32))
    with pytest.raises(ws.ConfigError, match="dtype must be"):
        ws.numerics.fma(a, a, a, "fp8")
