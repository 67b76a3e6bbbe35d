"""Stochastic rounding of seed 000 [0670]-[0672], [0682], [0693]: an N-bit LFSR number is
added to the N bits below the ULP and a carry rounds up."""

import numpy as np
import pytest

import wafersim as ws

ULP_AT_1 = 2.0**-10
N = 100_000


def _round_many(value, n=N, seed=1, **kw):
    x = np.full(n, value, dtype=np.float64)
    return ws.numerics.round_fp16(x, "stochastic", seed, **kw).astype(np.float64)


@pytest.mark.parametrize("frac", [1 / 8, 3 / 8, 5 / 8, 7 / 8])
@pytest.mark.parametrize("sign", [1, -1])
def test_mean_of_stochastic_roundings_is_the_value_0693(frac, sign):
    value = sign * (1.0 + frac * ULP_AT_1)  # N = 3 bits below the ULP represent it exactly
    out = _round_many(value)
    assert set(np.unique(np.abs(out))) <= {1.0, 1.0 + ULP_AT_1}
    sigma = ULP_AT_1 * np.sqrt(frac * (1 - frac) / N)
    assert abs(out.mean() - value) < 3 * sigma


def test_mean_with_seven_random_bits_0672():
    value = 3.0 + 0.4 * 2 * ULP_AT_1  # ULP at 3.0 is 2^-9
    out = _round_many(value, n_bits=7)
    ulp = 2 * ULP_AT_1
    p = np.floor(0.4 * 128) / 128  # the 7 bits below the ULP carry 51/128
    sigma = ulp * np.sqrt(p * (1 - p) / N)
    assert abs(out.mean() - (3.0 + p * ulp)) < 3 * sigma


def test_value_below_ulp_over_2_to_the_n_never_rounds_up_0693():
    value = 1.0 + 0.99 * ULP_AT_1 / 8  # all three bits below the ULP are zero
    out = _round_many(value)
    assert (out == 1.0).all()


def test_or_lower_option_lets_the_remaining_bits_count_0693():
    value = 1.0 + 0.5 * ULP_AT_1 / 8
    out = _round_many(value, or_lower=True)
    p_up = (out > 1.0).mean()  # the lowest of the 3 bits becomes 1: carry when r == 7
    sigma = np.sqrt((1 / 8) * (7 / 8) / N)
    assert abs(p_up - 1 / 8) < 3 * sigma


def test_exact_values_never_move():
    x = ws.numerics.fp16_to_fp32(np.arange(0, 0x7C00, 7, dtype=np.uint16)).astype(np.float64)
    out = ws.numerics.round_fp16(x, "stochastic", 3)
    np.testing.assert_array_equal(out.astype(np.float64), x)


def test_same_seed_same_bits_other_seed_other_bits():
    x = np.random.default_rng(0).normal(size=5000)
    a = ws.numerics.round_fp16(x, "stochastic", seed=42)
    b = ws.numerics.round_fp16(x, "stochastic", seed=42)
    c = ws.numerics.round_fp16(x, "stochastic", seed=43)
    np.testing.assert_array_equal(a.view(np.uint16), b.view(np.uint16))
    assert (a.view(np.uint16) != c.view(np.uint16)).any()


@pytest.mark.parametrize("count", [1, 2, 4, 7])
def test_banks_of_1_2_4_7_independent_seedable_resources_0682(count):
    bank = ws.numerics.LfsrBank(count, 9)
    assert bank.count == count
    draws = [tuple(bank.next_bits(i, 32) for _ in range(4)) for i in range(count)]
    assert len(set(draws)) == count  # resources are separate LFSRs [0671]


@pytest.mark.parametrize("count", [0, 3, 5, 8])
def test_other_bank_sizes_are_refused(count):
    with pytest.raises(ws.ConfigError, match="1, 2, 4 or 7"):
        ws.numerics.LfsrBank(count, 0)


def test_rng_index_selects_the_resource_0671():
    x = np.random.default_rng(1).normal(size=4000)
    r0 = ws.numerics.round_fp16(x, "stochastic", 5, rng_index=0)
    r1 = ws.numerics.round_fp16(x, "stochastic", 5, rng_index=1)
    assert (r0.view(np.uint16) != r1.view(np.uint16)).any()
    with pytest.raises(ws.ConfigError, match="rng resource 5 out of range"):
        ws.numerics.round_fp16(x, "stochastic", rng=ws.numerics.LfsrBank(4, 0), rng_index=5)


def test_lfsr_state_save_and_restore_reproduces_the_stream_0668():
    bank = ws.numerics.LfsrBank(2, 77)
    x = np.random.default_rng(2).normal(size=3000)
    saved = bank.state(0)
    first = ws.numerics.round_fp16(x, "stochastic", rng=bank)
    assert bank.state(0) != saved  # the resource advanced [0671]
    bank.set_state(0, saved)
    again = ws.numerics.round_fp16(x, "stochastic", rng=bank)
    np.testing.assert_array_equal(first.view(np.uint16), again.view(np.uint16))
    with pytest.raises(ws.ConfigError, match="nonzero"):
        bank.set_state(0, 0)


def test_lfsr_draws_are_uniform_over_three_bits():
    bank = ws.numerics.LfsrBank(1, 123)
    draws = np.array([bank.next_bits(0, 3) for _ in range(40_000)])
    counts = np.bincount(draws, minlength=8)
    expected = len(draws) / 8
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 24.3  # p = 0.001 for 7 degrees of freedom


def test_stochastic_rounding_in_a_fused_mac():
    # 1 * 1 + 3/8 ULP: the fused MAC rounds its exact result stochastically [0669]-[0672]
    a = np.ones(N, np.float16)
    c = np.full(N, 1.0, np.float16)
    b = np.ones(N, np.float16)
    tiny = np.float16(3 / 8 * ULP_AT_1)
    out = ws.numerics.fma(a, b, c / 2, "fp16", "stochastic", 8)  # 1*1 + 0.5 is exact
    assert (out == 1.5).all()
    out = ws.numerics.fma(np.full(N, tiny, np.float16), b, c, "fp16", "stochastic", 8)
    sigma = ULP_AT_1 * np.sqrt(3 / 8 * 5 / 8 / N)
    assert abs(out.astype(np.float64).mean() - (1 + 3 / 8 * ULP_AT_1)) < 3 * sigma
