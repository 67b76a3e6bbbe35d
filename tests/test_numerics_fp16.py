"""fp16 <-> fp32 conversion: exhaustive and against numpy (seed 000 [0670], [0680])."""

from fractions import Fraction

import numpy as np
import pytest

import wafersim as ws
from fp_reference import round_exact

ALL_FP16 = np.arange(65536, dtype=np.uint32).astype(np.uint16)


def bits16(a):
    return np.asarray(a, dtype=np.float16).view(np.uint16)


def test_every_fp16_pattern_round_trips_through_fp32_bit_exactly():
    wide = ws.numerics.fp16_to_fp32(ALL_FP16)
    back = bits16(ws.numerics.round_fp16(wide))
    np.testing.assert_array_equal(back, ALL_FP16)


def test_fp16_to_fp32_matches_numpy_and_keeps_nan_class():
    wide = ws.numerics.fp16_to_fp32(ALL_FP16)
    ref = ALL_FP16.view(np.float16).astype(np.float32)
    nan = np.isnan(ref)
    np.testing.assert_array_equal(wide[~nan].view(np.uint32), ref[~nan].view(np.uint32))
    assert np.isnan(wide[nan]).all()
    # payload and quiet bit carried over exactly: fp32 payload = fp16 payload << 13
    wb = wide[nan].view(np.uint32)
    hb = ALL_FP16[nan].astype(np.uint32)
    np.testing.assert_array_equal(wb & 0x7FFFFF, (hb & 0x3FF) << 13)
    np.testing.assert_array_equal(wb >> 31, hb >> 15)


def _assert_same_as_numpy(x32):
    ours = bits16(ws.numerics.round_fp16(x32))
    ref = x32.astype(np.float16)
    nan = np.isnan(ref)
    np.testing.assert_array_equal(ours[~nan], bits16(ref)[~nan])
    assert np.isnan(ours.view(np.float16)[nan]).all()
    np.testing.assert_array_equal(ours[nan] >> 15, bits16(ref)[nan] >> 15)


def test_fp32_to_fp16_rne_agrees_with_numpy_on_a_million_random_values():
    rng = np.random.default_rng(2026)
    # half: arbitrary fp32 bit patterns (all classes); half: magnitudes around fp16's range
    patterns = rng.integers(0, 2**32, 500_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    mags = np.exp2(rng.uniform(-30, 17, 500_000)) * rng.choice([-1, 1], 500_000)
    x = np.concatenate([patterns, mags.astype(np.float32)])
    with np.errstate(over="ignore", invalid="ignore"):
        _assert_same_as_numpy(x)


def test_fp32_to_fp16_every_halfway_case_and_its_neighbours():
    # Midpoints of all adjacent finite fp16 pairs are exact in fp32; RNE must go to even.
    h = ALL_FP16[(ALL_FP16 & 0x7C00) != 0x7C00].view(np.float16)
    h = np.sort(h[h >= 0].astype(np.float32))
    mid = (h[:-1].astype(np.float64) + h[1:]) / 2
    mid32 = mid.astype(np.float32)
    assert np.array_equal(mid32.astype(np.float64), mid)  # exact
    x = np.concatenate([mid32, np.nextafter(mid32, np.float32(0)),
                        np.nextafter(mid32, np.float32(np.inf))])
    _assert_same_as_numpy(np.concatenate([x, -x]))


@pytest.mark.parametrize(
    "value,expected_bits",
    [
        (65504.0, 0x7BFF),               # max normal
        (65519.996, 0x7BFF),             # just below the overflow threshold
        (65520.0, 0x7C00),               # halfway to 2^16: ties to even = inf
        (1e10, 0x7C00),                  # overflow
        (2.0**-24, 0x0001),              # min subnormal
        (2.0**-25, 0x0000),              # half the min subnormal: ties to even = 0
        (np.nextafter(np.float32(2.0**-25), np.float32(1)), 0x0001),
        (1.5 * 2.0**-24, 0x0002),        # halfway between 1 and 2 subnormal ULPs: to even
        (2.0**-14, 0x0400),              # min normal
        (2.0**-14 - 2.0**-25, 0x0400),   # halfway max subnormal / min normal: to even
        (-0.0, 0x8000),
        (1.0 + 2.0**-11, 0x3C00),        # halfway above 1: to even
        (1.0 + 3 * 2.0**-11, 0x3C02),    # halfway above 1+ulp: to even (up)
    ],
)
def test_fp32_to_fp16_edge_cases(value, expected_bits):
    x = np.array([value], np.float32)
    assert int(bits16(ws.numerics.round_fp16(x))[0]) == expected_bits
    with np.errstate(over="ignore"):
        assert int(bits16(x.astype(np.float16))[0]) == expected_bits


def test_fp64_input_is_rounded_once_like_numpy():
    # Just above a fp16 midpoint by less than a fp32 ULP: rounding through fp32 first
    # would land on the midpoint and round to even, i.e. the wrong way.
    rng = np.random.default_rng(5)
    h = np.sort(rng.choice(ALL_FP16[(ALL_FP16 & 0x7C00) != 0x7C00], 20000).view(np.float16))
    h = h.astype(np.float64)
    up = np.nextafter(h.astype(np.float16), np.float16(np.inf)).astype(np.float64)
    mid = (h + up) / 2
    x = np.concatenate([mid + np.abs(mid) * 2.0**-40, mid - np.abs(mid) * 2.0**-40,
                        rng.normal(0, 1000, 50000)])
    x = x[np.isfinite(x)]
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(bits16(ws.numerics.round_fp16(x)), bits16(x.astype(np.float16)))


def test_fast_fp32_path_equals_general_path():
    rng = np.random.default_rng(11)
    x = rng.integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = x[~np.isnan(x)]
    fast = bits16(ws.numerics.round_fp16(x))              # fp32 fast path
    general = bits16(ws.numerics.round_fp16(x.astype(np.float64)))  # generic rounding core
    np.testing.assert_array_equal(fast, general)


@pytest.mark.parametrize("mode", ["rne", "rna", "rtz", "rup", "rdn"])
def test_all_five_ieee_modes_against_exact_rationals_0680(mode):
    rng = np.random.default_rng(hash(mode) % 1000)
    x = np.concatenate([
        (np.exp2(rng.uniform(-27, 16.5, 3000)) * rng.choice([-1, 1], 3000)).astype(np.float32),
        np.array([65504, 65519, 65520, 65535, 70000, -65520, 2.0**-25, 3 * 2.0**-26,
                  -(2.0**-25), 1 + 2.0**-11, -(1 + 2.0**-11), 2.5 * 2.0**-24], np.float32),
    ])
    ours = ws.numerics.round_fp16(x, mode)
    for xi, oi in zip(x, ours):
        ref = round_exact(Fraction(float(xi)), np.float16, mode)
        assert bits16(oi) == bits16(ref) or (oi == 0 and ref == 0 and
                                             np.signbit(oi) == np.signbit(xi)), \
            f"{mode}: {xi!r} -> {oi!r}, expected {ref!r}"


def test_rounding_keeps_the_sign_of_results_that_underflow_to_zero():
    x = np.array([-1e-9, 1e-9], np.float32)
    out = ws.numerics.round_fp16(x)
    assert list(np.signbit(out)) == [True, False] and not out.any()


def test_ftz_flushes_subnormal_results_to_zero_0681():
    x = np.array([2.0**-20, -(2.0**-16), 2.0**-14, 1.0], np.float32)
    out = ws.numerics.round_fp16(x, subnormals="zero")
    assert list(bits16(out)) == [0x0000, 0x8000, 0x0400, 0x3C00]


def test_ftz_zero_literal_reading_flushes_subnormals_to_min_normal_0681():
    x = np.array([2.0**-20, -(2.0**-16), 2.0**-30], np.float32)
    out = ws.numerics.round_fp16(x, subnormals="min_normal")
    # subnormal results become +-min normal; a result that rounds to zero stays zero
    assert list(bits16(out)) == [0x0400, 0x8400, 0x0000]


def test_max_sat_returns_max_normal_instead_of_inf_0681():
    x = np.array([1e6, -1e6, np.inf, 65520.0], np.float32)
    out = ws.numerics.round_fp16(x, max_sat=True)
    # infinity as an input is not an overflow and stays infinite
    assert list(bits16(out)) == [0x7BFF, 0xFBFF, 0x7C00, 0x7BFF]
    assert list(bits16(ws.numerics.round_fp16(x))) == [0x7C00, 0xFC00, 0x7C00, 0x7C00]


def test_min_sat_returns_min_subnormal_or_min_normal_instead_of_zero_0681():
    x = np.array([1e-12, -1e-12, 0.0], np.float32)
    assert list(bits16(ws.numerics.round_fp16(x, min_sat=True))) == [0x0001, 0x8001, 0x0000]
    out = ws.numerics.round_fp16(x, min_sat=True, subnormals="zero")
    assert list(bits16(out)) == [0x0400, 0x8400, 0x0000]


def test_round_fp16_keeps_shape_and_accepts_other_real_dtypes():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = ws.numerics.round_fp16(x)
    assert out.shape == (3, 4) and out.dtype == np.float16
    np.testing.assert_array_equal(out, x.astype(np.float16))
    nc = np.arange(20, dtype=np.float32)[::2]  # non-contiguous view
    np.testing.assert_array_equal(ws.numerics.round_fp16(nc), nc.astype(np.float16))


@pytest.mark.parametrize("bad", [dict(mode="nearest"), dict(n_bits=0), dict(n_bits=33),
                                 dict(subnormals="daz"), dict(rng_index=9)])
def test_bad_rounding_arguments_raise_config_error_naming_the_field(bad):
    mode = bad.pop("mode", "rne")
    with pytest.raises(ws.ConfigError) as err:
        ws.numerics.round_fp16(np.ones(3, np.float32), mode, **bad)
    field = "mode" if not bad else next(iter(bad))
    assert field in str(err.value)


def test_complex_input_is_refused():
    with pytest.raises(ws.ConfigError, match="real numbers"):
        ws.numerics.round_fp16(np.ones(3, np.complex64))
