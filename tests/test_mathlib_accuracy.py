"""The math library's accuracy against float64 numpy: every fp16 input, a dense fp32 sample
(docs/numerics.md, "Math library"), run on a lone PE; and its numpy reference against the
PE, bit for bit."""

import numpy as np
import pytest

from wafersim.asm import mathlib
from wafersim.asm.mathlib import accuracy

# Largest error in ulps of the result type that docs/numerics.md states for each routine
# and (data, compute) format: the fp16 numbers are the exact maxima over all inputs, the
# fp32 ones the maxima over the 10^6-value sample, rounded up.
MAX_ULP = {
    ("exp", "fp32", "fp32"): 1.29, ("exp", "fp16", "fp16"): 1.15, ("exp", "fp16", "fp32"): 0.51,
    ("reciprocal", "fp32", "fp32"): 1.17, ("reciprocal", "fp16", "fp16"): 1.03,
    ("reciprocal", "fp16", "fp32"): 0.51,
    ("rsqrt", "fp32", "fp32"): 1.0, ("rsqrt", "fp16", "fp16"): 0.93,
    ("rsqrt", "fp16", "fp32"): 0.51,
    ("sqrt", "fp32", "fp32"): 1.0, ("sqrt", "fp16", "fp16"): 0.94, ("sqrt", "fp16", "fp32"): 0.51,
    ("ln", "fp32", "fp32"): 0.87, ("ln", "fp16", "fp16"): 0.91, ("ln", "fp16", "fp32"): 0.52,
}
CASES = sorted(MAX_ULP)
NAMES = list(mathlib.ROUTINES)


def exact(name, x):
    with np.errstate(all="ignore"):
        xd = x.astype(np.float64)
        return {"exp": np.exp(xd), "reciprocal": 1.0 / xd, "rsqrt": 1.0 / np.sqrt(xd),
                "sqrt": np.sqrt(xd),
                "ln": np.log(xd)}[name]


def ulps(got, want, npdt):
    """|got - want| / ulp(want) in npdt, for finite nonzero want within range."""
    fi = np.finfo(npdt)
    e = np.floor(np.log2(np.maximum(np.abs(want), float(fi.smallest_normal))))
    g = got.astype(np.float64)
    g = np.where(np.isinf(g), np.copysign(2.0 ** fi.maxexp, g), g)
    return np.abs(g - want) / np.exp2(e - fi.nmant)


def check(name, dtype, compute, x, y):
    """Asserts the documented ulp bound on ordinary inputs and exact special results."""
    npdt = np.float16 if dtype == "fp16" else np.float32
    want = exact(name, x)
    top = 2.0 ** np.finfo(npdt).maxexp
    want = np.where(np.abs(want) >= top, np.copysign(np.inf, want), want)
    special = ~np.isfinite(want) | (want == 0)
    ok = np.where(np.isnan(want), np.isnan(y),
                  (y == want) & (np.signbit(y) == np.signbit(want)))
    bad = special & ~ok
    assert not bad.any(), f"{name} {dtype}: special results wrong for {x[bad][:5]}: {y[bad][:5]}"
    err = ulps(y[~special], want[~special], npdt)
    worst = int(np.argmax(err))
    assert err[worst] <= MAX_ULP[name, dtype, compute], \
        f"{name} {dtype} ({compute}): {err[worst]:.3f} ulp at x = {x[~special][worst]!r}"
    return float(err[worst])


@pytest.mark.parametrize("name,dtype,compute", [c for c in CASES if c[1] == "fp16"])
def test_every_fp16_input_within_documented_ulps(name, dtype, compute):
    """All 65,536 fp16 patterns on a lone PE (in pieces that fit its memory) against
    float64: within the documented bound; +-0, +-inf, NaN and overflow exact."""
    x = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    run = mathlib.run_on_pe(mathlib.ROUTINES[name], "fp16", x, compute=compute)
    assert len(run.cycles) > 1          # several pieces, one PE reused: no state leaks
    check(name, "fp16", compute, x, run.values)


@pytest.mark.parametrize("name", NAMES)
def test_fp32_sample_within_documented_ulps(name):
    """A 200,000-value fp32 sample (bit patterns of every exponent, the dense range,
    the hard places, subnormals, boundaries) on a lone PE against float64."""
    x = accuracy.fp32_sample(name, 200_000, seed=1)
    run = mathlib.run_on_pe(mathlib.ROUTINES[name], "fp32", x)
    check(name, "fp32", "fp32", x, run.values)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_fp32_million_sample_within_documented_ulps(name):
    """The 10^6-value sample of the docs table, on a lone PE."""
    x = accuracy.fp32_sample(name, 1_000_000, seed=0)
    run = mathlib.run_on_pe(mathlib.ROUTINES[name], "fp32", x)
    check(name, "fp32", "fp32", x, run.values)


@pytest.mark.parametrize("name,dtype,compute", CASES)
def test_numpy_reference_is_bit_identical_to_the_pe(name, dtype, compute):
    """Routine.reference (numpy, no PE) gives the PE's bits, NaN payloads included."""
    if dtype == "fp16":
        x = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
        ut = np.uint16
    else:
        x = accuracy.fp32_sample(name, 30_000, seed=2)
        ut = np.uint32
    run = mathlib.run_on_pe(mathlib.ROUTINES[name], dtype, x, compute=compute)
    ref = run.routine.reference(x)
    assert ref.dtype == x.dtype and ref.shape == x.shape
    np.testing.assert_array_equal(ref.view(ut), run.values.view(ut))
    host = mathlib.on_host(mathlib.ROUTINES[name], dtype, x, compute=compute)
    np.testing.assert_array_equal(host.view(ut), run.values.view(ut))


def test_docs_table_matches_the_measurement():
    """The accuracy helper that printed the docs table agrees with this file's check on
    the fp16 sweep (same maxima), so the table and the tests measure the same thing."""
    x = accuracy.all_fp16()
    for name in NAMES:
        r = mathlib.ROUTINES[name]("fp16", n=1, src="a", dst="b", prefix="p", compute="fp32")
        y = r.reference(x)
        e = accuracy.errors(name, "fp16", x, y)
        assert e["specials"] == 0
        assert e["max_ulp"] == pytest.approx(check(name, "fp16", "fp32", x, y))
