"""Bulk vector operations computed many lanes at a time (docs/numerics.md, "Fast paths";
docs/compute_element.md, "Bulk vector execution"): fp16 and fp32 add, subtract, multiply
and multiply-accumulate [0359], [0675] run 8 or 4 elements per vector step and must give
the bits, cycles and statistics of the element-by-element path in every rounding mode and
under every FP control flag [0680]-[0681], for special values, odd lengths, strides,
in-place and overlapping destinations. The lane loops themselves are compared with the
integer reference by a compiled checker, for the SIMD and the portable build."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wafersim as ws
from wafersim import _core
from wafersim.errors import ConfigError

N = _core.numerics
MODES = ["nearest_even", "nearest_away", "toward_zero", "toward_positive", "toward_negative",
         "stochastic"]
BUILDS = ["auto", "portable"] + (["simd"] if N.host_has_lane_simd() else [])


def _ctl(mode, subnormals="keep", max_sat=False, min_sat=False, n_bits=3):
    ctl = N.FpControl()
    ctl.mode = getattr(N.RoundingMode, mode)
    ctl.subnormals = getattr(N.Subnormals, subnormals)
    ctl.max_sat, ctl.min_sat = max_sat, min_sat
    ctl.stochastic_bits, ctl.rng = n_bits, 1
    return ctl


def _no_mismatch(r):
    assert r["checked"] > 0
    assert r["mismatches"] == 0, (
        f"{r['mismatches']} of {r['checked']} differ; first: a={r['a']:#x} b={r['b']:#x} "
        f"c={r['c']:#x} fast={r['fast']:#x} reference={r['reference']:#x}")


# ---- the lane loops against the reference (C++ checker) ----------------------------------

@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_lane_loops_match_the_reference_in_every_mode_0680(dtype, mode, build):
    """Runs of 1..67 fused multiply-adds (whole vector groups and partial ones) with zeros,
    subnormals, infinities, NaNs, extreme exponents, midpoints and cancellations."""
    r = N.check_fast_fma_lanes(dtype, _ctl(mode), build, 200_000, 11 + MODES.index(mode))
    assert r["checked"] == 200_000
    _no_mismatch(r)


@pytest.mark.parametrize("flags", [("flush_to_zero", False, False),
                                   ("flush_to_min_normal", True, False),
                                   ("keep", True, True)])
@pytest.mark.parametrize("mode", ["nearest_even", "toward_negative", "stochastic"])
@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_lane_loops_match_the_reference_with_flush_and_saturation_flags_0681(dtype, mode, flags):
    _no_mismatch(N.check_fast_fma_lanes(dtype, _ctl(mode, *flags), "auto", 50_000, 3))


@pytest.mark.parametrize("n_bits", [1, 12, 13, 28, 29])
@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_lane_loops_draw_the_same_random_bits_as_the_reference_0672(dtype, n_bits):
    """Stochastic rounding goes lane by lane in element order: the same results and the
    same LFSR state after every run of lanes."""
    _no_mismatch(N.check_fast_fma_lanes(dtype, _ctl("stochastic", n_bits=n_bits), "auto",
                                        50_000, n_bits))


def test_the_lane_build_is_chosen_at_load_and_a_missing_one_is_refused():
    assert N.lanes_fast_build() == ("simd" if N.host_has_lane_simd() else "portable")
    with pytest.raises(ConfigError, match="build must be"):
        N.check_fast_fma_lanes("fp16", _ctl("nearest_even"), "avx512", 10, 1)
    with pytest.raises(ConfigError, match="fp16 or fp32"):
        N.check_fast_fma_lanes("bf16", _ctl("nearest_even"), "auto", 10, 1)
    if not N.host_has_lane_simd():
        with pytest.raises(ConfigError, match="AVX2"):
            N.check_fast_fma_lanes("fp16", _ctl("nearest_even"), "simd", 10, 1)


def test_portable_and_simd_lane_builds_give_the_same_bits():
    """Both builds against the reference on the same operands (the SIMD one where the host
    has it): the portable choice of a host without AVX2/F16C gives the same results."""
    for dtype in ("fp16", "fp32"):
        for mode in MODES[:5]:
            runs = [N.check_fast_fma_lanes(dtype, _ctl(mode), b, 20_000, 99) for b in BUILDS]
            for r in runs:
                _no_mismatch(r)
            assert len({r["checked"] for r in runs}) == 1


# ---- the compute element: bulk (lanes) against element by element ------------------------

# (mnemonic, src0 type, src1 type, dst type, uses the scalar register r2/r3)
OPS = [("faddh", "fp16", "fp16", "fp16", False), ("fsubh", "fp16", "fp16", "fp16", False),
       ("fmulh", "fp16", "fp16", "fp16", False), ("fmach", "fp16", "fp16", "fp16", True),
       ("fadds", "fp32", "fp32", "fp32", False), ("fsubs", "fp32", "fp32", "fp32", False),
       ("fmuls", "fp32", "fp32", "fp32", False), ("fmacs", "fp32", "fp32", "fp32", True),
       ("fmachs", "fp32", "fp16", "fp32", True)]
SIZE = {"fp16": 2, "fp32": 4}
NP = {"fp16": np.float16, "fp32": np.float32}
UINT = {"fp16": np.uint16, "fp32": np.uint32}
SPECIAL = {
    "fp16": [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE12, 0x0001, 0x83FF, 0x0400,
             0x7BFF, 0xFBFF, 0x7800, 0x3C00, 0xBC01, 0x3800, 0x1400, 0x0200],
    "fp32": [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001,
             0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F000000,
             0x3F800000, 0xBF800001, 0x3F000000, 0x0C800000, 0x00400000],
}
LANES = 256  # elements of each array


def pool(dtype, seed, special=True):
    """Values of `dtype` as raw bits: uniform values, random patterns, short significands
    (sums and products on ties), huge values (overflow) and the special values above."""
    rng = np.random.default_rng(seed)
    u = UINT[dtype]
    out = rng.uniform(-4, 4, LANES).astype(NP[dtype]).view(u)
    kind = rng.integers(0, 6, LANES)
    bits = 16 if dtype == "fp16" else 32
    rand = rng.integers(0, 2**bits, LANES, dtype=np.uint64).astype(u)
    out = np.where(kind == 1, rand, out)
    short = (out & u(~0 << (5 if dtype == "fp16" else 18) & (2**bits - 1))).astype(u)
    out = np.where(kind == 2, short, out)
    big = rng.uniform(1e4, 6e4, LANES) if dtype == "fp16" else rng.uniform(1e37, 3e38, LANES)
    out = np.where(kind == 3, (big * rng.choice([-1, 1], LANES)).astype(NP[dtype]).view(u), out)
    if special:
        sp = np.array(SPECIAL[dtype], dtype=u)[rng.integers(0, len(SPECIAL[dtype]), LANES)]
        out = np.where(kind == 4, sp, out)
    return out.astype(u)


def program(op, n, layout, st0, st1, fpc, scalar):
    """One operation over n elements. Arrays: x (src0 type), y (src1 type), z (dst type).
    layout: apart (z <- x, y), inplace0 (x <- x, y), inplace1 (y <- x, y, same types),
    shifted (the destination k elements from src0, same stride: overlapping), stride0
    (src1 one element), imm (src1 an immediate), prn (src1 pseudo-random numbers)."""
    name, t0, t1, td, mac = op
    e0, e1, ed = SIZE[t0], SIZE[t1], SIZE[td]

    def dsd(label, array, es, stride, shift=0):
        base = 64 * es + shift * es + (n - 1) * es * abs(stride) * (stride < 0)
        return f"{label}: .dsd mem1d, base={array}+{base}, length={n}, stride={stride * es}"

    src0 = dsd("v0", "x", e0, st0)
    src1 = dsd("v1", "y", e1, 0 if layout == "stride0" else st1)
    if layout == "inplace0":
        dst = dsd("vd", "x", ed, st0)
    elif layout == "inplace1":
        dst = dsd("vd", "y", ed, st1)
    elif isinstance(layout, int):  # shifted by `layout` elements
        dst = dsd("vd", "x", ed, st0, layout)
    else:
        dst = dsd("vd", "z", ed, st0)
    s1 = {"imm": "#max_normal", "prn": "#prn"}.get(layout, "S1[0]")
    lines = [".data", f"x: .space {t0}, {LANES}", f"y: .space {t1}, {LANES}",
             f"z: .space {td}, {LANES}", src0, src1, dst, ".export x, y, z", ".code",
             ".task t, 1", f"t: li r9, {fpc}", "  setfpc r9",
             f"  li r2, {scalar & 0xFFFF}", f"  li r3, {scalar >> 16}",
             "  lds0wds S0[0], v0", "  lds1wds S1[0], v1", "  lddwds D[0], vd",
             f"  {name} D[0], S0[0], {s1}", "  term"]
    return "\n".join(lines)


def run_both(src, op, seed, special=True):
    _, t0, t1, td, _ = op
    vals = {"x": pool(t0, seed, special), "y": pool(t1, seed + 1, special),
            "z": pool(td, seed + 2, special)}
    looks = []
    for bulk in (True, False):
        pe = ws.pe.LonePE(bulk_vector=bulk, rng_seed=seed)
        pe.load(src)
        for k, v in vals.items():
            pe.write(k, v.view(NP[{"x": t0, "y": t1, "z": td}[k]]))
        pe.launch("t")
        pe.run()
        assert pe.idle
        looks.append({"mem": {k: pe.read(k).tobytes() for k in vals}, "cycle": pe.cycle,
                      "stats": str(pe.stats())})
    return looks, vals


def fpc_value(mode, subnormals=0, max_sat=False, min_sat=False, n_bits=3):
    return mode | subnormals << 6 | int(max_sat) << 8 | int(min_sat) << 9 | (n_bits - 1) << 10


@pytest.mark.parametrize("mode", range(6))
@pytest.mark.parametrize("op", OPS, ids=[o[0] for o in OPS])
def test_each_operation_and_mode_matches_the_element_path_0680(op, mode):
    """61 elements (not a multiple of 8), contiguous, operands with specials, every mode."""
    src = program(op, 61, "apart", 1, 1, fpc_value(mode), 0x3E00 if op[4] else 0)
    (bulk, element), vals = run_both(src, op, 100 + mode)
    assert bulk == element
    # Not vacuous: the destination was written.
    assert bulk["mem"]["z"] != vals["z"].tobytes()


@pytest.mark.parametrize("op", OPS, ids=[o[0] for o in OPS])
def test_in_place_destination_equal_to_a_source_matches_the_element_path(op):
    for layout in ("inplace0", "inplace1") if op[1] == op[2] else ("inplace0",):
        for stride in (1, 2, -1):
            src = program(op, 45, layout, stride, stride, 0, 0x4100)
            (bulk, element), _ = run_both(src, op, 7, special=False)
            assert bulk == element, (layout, stride)


def test_fp16_destination_one_element_ahead_of_its_source_propagates_per_iteration():
    """z[i+1] = z[i] + 1 (faddh, SIMD 4) over an overlapping window: each iteration reads
    its 4 lanes before writing them, so values move on by one iteration at a time, never
    by a whole batch; both paths agree with that model."""
    op = OPS[0]
    n = 41
    src = program(op, n, 1, 1, 1, 0, 0)
    vals_x = (np.arange(LANES) * 8).astype(np.float16)
    looks = []
    for bulk in (True, False):
        pe = ws.pe.LonePE(bulk_vector=bulk)
        pe.load(src)
        pe.write("x", vals_x)
        pe.write("y", np.ones(LANES, np.float16))
        pe.launch("t")
        pe.run()
        looks.append((pe.read("x").tobytes(), pe.cycle, str(pe.stats())))
    assert looks[0] == looks[1]
    x = vals_x.astype(np.float64)
    for first in range(0, n, 4):
        lanes = x[64 + first:64 + min(first + 4, n)] + 1
        x[65 + first:65 + first + len(lanes)] = lanes
    assert np.array_equal(np.frombuffer(looks[0][0], np.float16), x.astype(np.float16))


@st.composite
def cases(draw):
    op = draw(st.sampled_from(OPS))
    layouts = ["apart", "apart", "inplace0", "stride0", draw(st.sampled_from([-3, -1, 1, 2, 5]))]
    if op[1] == op[2]:
        layouts.append("inplace1")
    if not op[4]:
        layouts += ["imm", "prn"]
    layout = draw(st.sampled_from(layouts))
    n = draw(st.integers(1, 60))
    st0 = draw(st.sampled_from([1, 1, 2, 3, -1]))
    st1 = draw(st.sampled_from([1, 2, -2]))
    mode = draw(st.integers(0, 5))
    flags = draw(st.sampled_from([(0, False, False)] * 4 + [(1, False, False), (2, True, False),
                                                            (0, True, True), (1, True, True)]))
    n_bits = draw(st.sampled_from([3, 3, 12, 13, 28, 29]))
    scalar = draw(st.integers(0, 2**32 - 1))
    return op, n, layout, st0, st1, fpc_value(mode, *flags, n_bits=n_bits), scalar


@settings(deadline=None, max_examples=60)
@given(cases(), st.integers(0, 2**31))
def test_random_lane_operations_match_the_element_path(case, seed):
    """Random operation, length, strides (negative, 0, > 1), in-place and overlapping
    destinations, modes, flags and stochastic widths, over values with specials."""
    op, n, layout, st0, st1, fpc, scalar = case
    src = program(op, n, layout, st0, st1, fpc, scalar)
    (bulk, element), _ = run_both(src, op, seed)
    assert bulk == element
