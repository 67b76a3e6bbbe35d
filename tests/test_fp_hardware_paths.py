"""The fast fp16 and fp32 arithmetic of the compute element (host floating point, rounding
to odd, F16C conversions) gives bit for bit what the integer reference gives: one rounding
of the exact result [0669]-[0673], in all six modes of the FP control register [0680]
including stochastic rounding's N bits below the ULP [0672], [0693], with the flush,
Max Sat and Min Sat flags [0681]. A compiled checker in wafersim._core runs the comparison
loops (docs/numerics.md, "Fast paths"). Stochastic rounding also compares the LFSR states
after every operation: both sides must draw the same bits."""

import pytest

from wafersim import _core
from wafersim.errors import ConfigError

N = _core.numerics
MODES = ["nearest_even", "nearest_away", "toward_zero", "toward_positive", "toward_negative",
         "stochastic"]
BUILDS = ["auto", "portable"] + (["f16c"] if N.host_has_f16c() else [])
FLAGS = [  # (subnormals, max_sat, min_sat)
    ("flush_to_zero", False, False),
    ("flush_to_min_normal", False, False),
    ("keep", True, False),
    ("keep", False, True),
    ("flush_to_zero", True, True),
    ("flush_to_min_normal", True, True),
]


def _ctl(mode, subnormals="keep", max_sat=False, min_sat=False, n_bits=3, or_lower=False,
         rng=1):
    ctl = N.FpControl()
    ctl.mode = getattr(N.RoundingMode, mode)
    ctl.subnormals = getattr(N.Subnormals, subnormals)
    ctl.max_sat, ctl.min_sat = max_sat, min_sat
    ctl.stochastic_bits, ctl.stochastic_or_lower, ctl.rng = n_bits, or_lower, rng
    return ctl


def _pairs(op, ctl, build, stride, first=0, seed=1):
    r = N.check_fast_fp16_pairs(op, ctl, build, first, stride, seed)
    assert r["checked"] == -(-(2**32 - first) // stride)  # every pair of the sweep ran
    return r


def _no_mismatch(r):
    assert r["mismatches"] == 0, (
        f"{r['mismatches']} of {r['checked']} differ; first: a={r['a']:#x} b={r['b']:#x} "
        f"c={r['c']:#x} fast={r['fast']:#x} reference={r['reference']:#x}")


# ---- default suite: strided subsets of the 2^32 pairs, 10^6 random FMAs per mode -------------

@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_fp16_pairs_strided_match_the_reference_0680(op, mode, build):
    # every 997th pair through the datapath's entry points, every 4999th for the rest
    stride = 997 if build == "auto" and op != "sub" else 4999
    _no_mismatch(_pairs(op, _ctl(mode), build, stride, first={"add": 0, "sub": 3, "mul": 1}[op]))


@pytest.mark.parametrize("flags", FLAGS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", ["add", "mul"])
def test_fp16_pairs_with_flush_and_saturation_flags_match_the_reference_0681(op, mode, flags):
    sub, max_sat, min_sat = flags
    _no_mismatch(_pairs(op, _ctl(mode, sub, max_sat, min_sat), "auto", 9973, first=5))


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("mode", MODES)
def test_fp16_random_fmas_match_the_reference_0669(mode, build):
    n = 10**6 if build == "auto" else 2 * 10**5
    r = N.check_fast_fma("fp16", _ctl(mode), build, n, 20260)
    assert r["checked"] == n
    _no_mismatch(r)


@pytest.mark.parametrize("mode", MODES)
def test_fp32_random_fmas_match_the_reference_0669(mode):
    r = N.check_fast_fma("fp32", _ctl(mode), "auto", 10**6, 20261)
    _no_mismatch(r)


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
@pytest.mark.parametrize("flags", FLAGS)
@pytest.mark.parametrize("mode", MODES)
def test_random_fmas_with_flags_match_the_reference_0681(mode, flags, dtype):
    sub, max_sat, min_sat = flags
    _no_mismatch(N.check_fast_fma(dtype, _ctl(mode, sub, max_sat, min_sat), "auto", 10**5, 7))


# N = 12 is the largest the fp16 fast path rounds itself, 28 for fp32 (docs/numerics.md);
# beyond, the reference rounds, and the results must still agree.
@pytest.mark.parametrize("n_bits", [1, 3, 7, 12, 13, 28, 29, 32])
@pytest.mark.parametrize("or_lower", [False, True])
@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_stochastic_rounding_of_any_width_matches_the_reference_0672_0693(dtype, or_lower,
                                                                          n_bits):
    ctl = _ctl("stochastic", n_bits=n_bits, or_lower=or_lower, rng=3)
    _no_mismatch(N.check_fast_fma(dtype, ctl, "auto", 2 * 10**5, n_bits))
    if dtype == "fp16":
        _no_mismatch(_pairs("add", ctl, "auto", 100_003))


def test_the_f16c_build_is_loaded_where_the_host_has_f16c():
    assert N.fp16_fast_build() == ("f16c" if N.host_has_f16c() else "portable")


def test_checker_names_a_bad_build_op_or_dtype():
    ctl = _ctl("nearest_even")
    with pytest.raises(ConfigError, match="build must be"):
        N.check_fast_fma("fp16", ctl, "avx", 10, 1)
    with pytest.raises(ConfigError, match="op must be"):
        N.check_fast_fp16_pairs("div", ctl, "auto", 0, 1, 1)
    with pytest.raises(ConfigError, match="dtype must be"):
        N.check_fast_fma("fp64", ctl, "auto", 10, 1)
    with pytest.raises(ConfigError, match="rng resource 5"):
        N.check_fast_fma("fp16", _ctl("stochastic", rng=5), "auto", 10, 1)


# ---- slow: all 2^32 pairs, 10^7 random FMAs ----------------------------------------------

@pytest.mark.slow
@pytest.mark.nosanitize
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", ["add", "mul"])
def test_fp16_all_pairs_match_the_reference_0680(op, mode):
    _no_mismatch(_pairs(op, _ctl(mode), "auto", 1))


@pytest.mark.slow
@pytest.mark.nosanitize
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", ["add", "mul"])
def test_fp16_all_pairs_of_the_portable_build_match_the_reference_0680(op, mode):
    _no_mismatch(_pairs(op, _ctl(mode), "portable", 1))


@pytest.mark.slow
@pytest.mark.nosanitize
@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("mode", MODES)
def test_fp16_ten_million_random_fmas_match_the_reference_0669(mode, build):
    _no_mismatch(N.check_fast_fma("fp16", _ctl(mode), build, 10**7, 16))


@pytest.mark.slow
@pytest.mark.nosanitize
@pytest.mark.parametrize("mode", MODES)
def test_fp32_ten_million_random_fmas_match_the_reference_0669(mode):
    _no_mismatch(N.check_fast_fma("fp32", _ctl(mode), "auto", 10**7, 32))
