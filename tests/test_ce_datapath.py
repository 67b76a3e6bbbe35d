"""Vector operations of the data path [0552]-[0569], [0702]: every floating-point result
is checked against exact rational arithmetic rounded once, integer results against
numpy, stochastic rounding against the numerics module."""

from fractions import Fraction

import numpy as np
import pytest
from fp_reference import round_exact

import wafersim as ws

DT = {"fp16": np.float16, "fp32": np.float32, "i16": np.int16, "u16": np.uint16}


def run_op(line, a, b=None, *, src="fp16", dst=None, scalar=None, fpc=None, seed=0, extra=""):
    """Runs `line` (e.g. "faddh.t D[1], S0[1], S1[2]") once over memory vectors a, b -> c."""
    dst = dst or src
    n = len(a)
    sz = np.dtype(DT[src]).itemsize
    dsz = np.dtype(DT[dst]).itemsize
    setup = []
    if scalar is not None:
        bits = int(np.array(scalar, dtype=DT[src]).view(np.uint16 if sz == 2 else np.uint32))
        setup += [f"li r2, {bits & 0xFFFF}", f"li r3, {bits >> 16}"]
    if fpc is not None:
        setup += [f"li r1, {fpc}", "setfpc r1"]
    body = "\n   ".join(setup)
    source = f"""
    .data
    a: .space {src}, {n}
    b: .space {src}, {n}
    c: .space {dst}, {n}
    da: .dsd mem1d, base=a, length={n}, stride={sz}
    db: .dsd mem1d, base=b, length={n}, stride={sz}
    dc: .dsd mem1d, base=c, length={n}, stride={dsz}
    .export a, b, c
    .code
    .task t, 20
    t: {body}
       lds0wds S0[1], da
       lds1wds S1[2], db
       lddwds D[1], dc
       {extra}
       {line}
    """
    pe = ws.pe.LonePE(rng_seed=seed)
    pe.load(source)
    pe.write("a", np.asarray(a, DT[src]))
    if b is not None:
        pe.write("b", np.asarray(b, DT[src]))
    pe.launch("t")
    pe.run()
    return pe.read("c"), pe


def finite_values(dtype, n, seed, lo=-4.0, hi=4.0):
    rng = np.random.default_rng(seed)
    v = rng.uniform(lo, hi, n).astype(dtype)
    v[v == 0] = dtype(0.5)
    return v


def exact(x):
    return Fraction(float(x))


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
@pytest.mark.parametrize("op", ["fadd", "fsub", "fmul"])
def test_fp_add_sub_mul_round_once_to_nearest_even(op, dtype):
    t = DT[dtype]
    a, b = finite_values(t, 64, 1), finite_values(t, 64, 2)
    a[:4] = [t(60000 if dtype == "fp16" else 3e38), t(1e-7), t(-2.5), t(65504 if dtype == "fp16" else 1e30)]
    b[:4] = [t(60000 if dtype == "fp16" else 3e38), t(3e-8), t(2.5), t(-1)]
    m = op + ("h" if dtype == "fp16" else "s")
    got, _ = run_op(f"{m}.t D[1], S0[1], S1[2]", a, b, src=dtype)
    f = {"fadd": lambda x, y: x + y, "fsub": lambda x, y: x - y, "fmul": lambda x, y: x * y}[op]
    want = np.array([round_exact(f(exact(x), exact(y)), t) for x, y in zip(a, b)], dtype=t)
    assert np.array_equal(got.view(np.uint16 if t == np.float16 else np.uint32),
                          want.view(np.uint16 if t == np.float16 else np.uint32))


@pytest.mark.parametrize("dtype", ["fp16", "fp32"])
def test_fmac_is_fused_with_one_rounding_0675(dtype):
    t = DT[dtype]
    a, b = finite_values(t, 48, 3), finite_values(t, 48, 4)
    s = t(1.0009765625) if dtype == "fp16" else t(1.0000001)
    m = "fmach" if dtype == "fp16" else "fmacs"
    got, _ = run_op(f"{m}.t D[1], S0[1], S1[2]", a, b, src=dtype, scalar=s)
    want = np.array([round_exact(exact(x) + exact(y) * exact(s), t) for x, y in zip(a, b)], dtype=t)
    assert np.array_equal(got, want)
    # A fused result differs from a product rounded first somewhere in this data.
    two_step = (a.astype(np.float64) + (b * s).astype(t).astype(np.float64)).astype(t)
    assert dtype == "fp32" or not np.array_equal(two_step, want)


def test_mixed_fmac_accumulates_fp16_products_in_fp32():
    a = finite_values(np.float32, 32, 5)
    b = finite_values(np.float16, 32, 6)
    s = np.float16(0.333)
    source_line = "fmachs.t D[1], S0[1], S1[2]"
    # a and c are fp32, b is fp16: build the program by hand.
    pe = ws.pe.LonePE()
    pe.load(f"""
    .data
    a: .space fp32, 32
    b: .space fp16, 32
    c: .space fp32, 32
    da: .dsd mem1d, base=a, length=32, stride=4
    db: .dsd mem1d, base=b, length=32, stride=2
    dc: .dsd mem1d, base=c, length=32, stride=4
    .export a, b, c
    .code
    .task t, 20
    t: li r2, {int(np.array(s).view(np.uint16))}
       lds0wds S0[1], da
       lds1wds S1[2], db
       lddwds D[1], dc
       {source_line}
    """)
    pe.write("a", a)
    pe.write("b", b)
    pe.launch("t")
    pe.run()
    want = np.array([round_exact(exact(x) + exact(y) * exact(s), np.float32) for x, y in zip(a, b)],
                    dtype=np.float32)
    assert np.array_equal(pe.read("c"), want)


def test_max_min_neg_abs():
    a = np.array([1, -2, np.nan, 5, -0.0, np.inf], np.float16)
    b = np.array([3, -4, 7, np.nan, 2, 1], np.float16)
    got, _ = run_op("fmaxh.t D[1], S0[1], S1[2]", a, b)
    assert np.array_equal(got, np.fmax(a, b))
    got, _ = run_op("fminh.t D[1], S0[1], S1[2]", a, b)
    assert np.array_equal(got, np.fmin(a, b))
    got, _ = run_op("fnegh.t D[1], S1[2]", b, b)
    assert np.array_equal(got.view(np.uint16), (b.view(np.uint16) ^ 0x8000))
    got, _ = run_op("fabss.t D[1], S1[2]", b.astype(np.float32), b.astype(np.float32), src="fp32")
    assert np.array_equal(got, np.abs(b.astype(np.float32)), equal_nan=True)


def test_max_orders_signed_zeros():
    got, _ = run_op("fmaxh.t D[1], S0[1], S1[2]", np.array([-0.0, 0.0], np.float16),
                    np.array([0.0, -0.0], np.float16))
    assert list(got.view(np.uint16)) == [0, 0]
    got, _ = run_op("fminh.t D[1], S0[1], S1[2]", np.array([-0.0, 0.0], np.float16),
                    np.array([0.0, -0.0], np.float16))
    assert list(got.view(np.uint16)) == [0x8000, 0x8000]


def test_conversions_between_fp16_and_fp32():
    x = np.array([1.5, -0.1, 65504, 1e-7, np.inf, 70000.0, 3.14159], np.float32)
    got, _ = run_op("fs2h.t D[1], S1[2]", x, x, src="fp32", dst="fp16")
    with np.errstate(over="ignore"):
        assert np.array_equal(got, x.astype(np.float16))  # numpy rounds to nearest even
    h = np.array([1.5, -2.0, 6e-8, 65504], np.float16)
    got, _ = run_op("fh2s.t D[1], S1[2]", h, h, src="fp16", dst="fp32")
    assert np.array_equal(got, h.astype(np.float32))


def test_integer_conversions_round_and_saturate():
    h = np.array([1.5, 2.5, -1.5, 1e4, -np.inf, 0.49], np.float16)
    got, _ = run_op("h2i.t D[1], S1[2]", h, h, src="fp16", dst="i16")
    assert list(got) == [2, 2, -2, 10000, -32768, 0]  # ties to even, saturating
    i = np.array([1, -3, 2049, 32767], np.int16)
    got, _ = run_op("i2h.t D[1], S1[2]", i, i, src="i16", dst="fp16")
    assert np.array_equal(got, i.astype(np.float16))


def test_activation_functions_0493():
    x = np.array([-3, -0.5, -0.0, 0, 0.25, 2, 11, np.nan], np.float16)
    got, _ = run_op("reluh.t D[1], S1[2]", x, x)
    want = np.where(x > 0, x, np.float16(0))
    want[-1] = np.nan
    assert np.array_equal(got, want, equal_nan=True) and not np.signbit(got[2])
    got, _ = run_op("dreluh.t D[1], S1[2]", x, x)
    assert list(got) == [0, 0, 0, 0, 1, 1, 1, 0]
    y = np.linspace(-6, 6, 41).astype(np.float16)
    from scipy.special import expit

    got, _ = run_op("sigmoidh.t D[1], S1[2]", y, y)
    assert np.array_equal(got, expit(y.astype(np.float64)).astype(np.float16))
    got, _ = run_op("tanhh.t D[1], S1[2]", y, y)
    assert np.array_equal(got, np.tanh(y.astype(np.float64)).astype(np.float16))


@pytest.mark.parametrize("op,fn", [
    ("add16", lambda a, b: a + b), ("sub16", lambda a, b: a - b), ("and16", lambda a, b: a & b),
    ("or16", lambda a, b: a | b), ("xor16", lambda a, b: a ^ b), ("mul16", lambda a, b: a * b),
    ("shl16", lambda a, b: a << (b & 15)), ("shr16", lambda a, b: (a.view(np.uint16) >> (b & 15).astype(np.uint16)).view(np.int16)),
    ("sar16", lambda a, b: a >> (b & 15)),
])
def test_integer_operations_wrap_like_int16(op, fn):
    rng = np.random.default_rng(7)
    a = rng.integers(-32768, 32767, 40).astype(np.int16)
    b = rng.integers(-32768, 32767, 40).astype(np.int16)
    if op in ("shl16", "shr16", "sar16"):
        b = rng.integers(0, 40, 40).astype(np.int16)
    got, _ = run_op(f"{op}.t D[1], S0[1], S1[2]", a, b, src="i16")
    with np.errstate(over="ignore"):
        assert np.array_equal(got, fn(a, b).astype(np.int16))


def test_compare_sets_the_flag_for_every_element_and_branches_read_it_0556():
    src = """
    .data
    a: .i16 1, 2, 3
    b: .i16 2, 3, 4
    da: .dsd mem1d, base=a, length=3, stride=2
    db: .dsd mem1d, base=b, length=3, stride=2
    .code
    .task t, 20
    t:  lds0wds S0[0], da
        lds1wds S1[0], db
        lt16 S0[0], S1[0]
        bf no
        li r9, 1
    no: lds0wds S0[1], db
        lds1wds S1[1], da
        lt16 S0[1], S1[1]
        bt yes
        lt16 r4, #0
        bt yes
        li r10, 1
        term
    yes: li r10, 2
        term
    """
    pe = ws.pe.LonePE()
    pe.load(src)
    pe.set_gpr(4, 5)
    pe.launch("t")
    pe.run()
    # every a < b: flag set; not every b < a, and 5 < 0 is false: no branch taken
    assert pe.gpr(9) == 1 and pe.gpr(10) == 1


def test_register_destination_accumulates_every_element():
    """dst = src0 = r5 with a vector source: one element per iteration, a dot product."""
    x = finite_values(np.float16, 20, 8, -1, 1)
    s = np.float16(0.5)
    _, pe = run_op("fmach.t r5, r5, S1[2]", x, x, scalar=s)
    acc = np.float16(0)
    for v in x:
        acc = round_exact(exact(acc) + exact(v) * exact(s), np.float16)
    assert pe.gpr(5) == int(np.array(acc).view(np.uint16))
    assert pe.stats()["iterations"] == 20


def test_immediates_and_memory_at_gpr6_sources_0591_0594():
    x = np.array([1, 2, 3], np.float16)
    got, _ = run_op("faddh.t D[1], S0[1], #-1.0", x, x)
    assert list(got) == [0, 1, 2]
    got, pe = run_op("fmulh.t D[1], S0[1], [r6]", x, x, extra="li r6, b + 2")
    assert list(got) == [2, 4, 6]  # every element times b[1] = 2


def test_prn_immediate_draws_from_the_selected_lfsr_0593():
    _, pe = run_op("mov16.t r7, #prn", np.zeros(1, np.int16), src="i16", seed=42)
    bank = ws.numerics.LfsrBank(4, 42)
    assert pe.gpr(7) == bank.next_bits(0, 16)


def test_stochastic_rounding_uses_the_numerics_module_0672():
    x = np.linspace(0.1, 3.7, 64).astype(np.float32)
    mode_bits = 5 | (2 << 10)  # stochastic, N = 3
    got, _ = run_op("fs2h.t D[1], S1[2]", x, x, src="fp32", dst="fp16", fpc=mode_bits, seed=9)
    want = ws.numerics.round_fp16(x, "stochastic", rng=ws.numerics.LfsrBank(4, 9), n_bits=3)
    assert np.array_equal(got, want)
    rne, _ = run_op("fs2h.t D[1], S1[2]", x, x, src="fp32", dst="fp16")
    assert not np.array_equal(got, rne)


def test_saturation_flag_of_the_fp_control_register_0681():
    big = np.array([60000, -60000], np.float16)
    got, _ = run_op("fmulh.t D[1], S0[1], S1[2]", big, np.array([2, 2], np.float16))
    assert np.all(np.isinf(got))
    got, _ = run_op("fmulh.t D[1], S0[1], S1[2]", big, np.array([2, 2], np.float16), fpc=1 << 8)
    assert list(got) == [65504, -65504]


def test_setfpc_rejects_invalid_fields():
    with pytest.raises(ws.ProgramError, match="invalid rounding mode"):
        run_op("nop.t", np.zeros(1, np.float16), fpc=7)


@pytest.mark.parametrize("op,fn", [
    ("lt16", lambda a, b: np.int16(a) < np.int16(b)), ("le16", lambda a, b: np.int16(a) <= np.int16(b)),
    ("eq16", lambda a, b: a == b), ("ltu16", lambda a, b: np.uint16(a) < np.uint16(b)),
    ("tst16", lambda a, b: (a & b) != 0),
])
def test_integer_comparisons_set_the_flag(op, fn):
    rng = np.random.default_rng(11)
    for a, b in rng.integers(0, 65536, (30, 2)):
        a, b = int(a), int(b)
        pe = ws.pe.LonePE()
        pe.load(f".task t, 1\nt: {op}.t r1, r2")
        pe.set_gpr(1, a)
        pe.set_gpr(2, b)
        pe.launch("t")
        pe.run()
        assert pe.flag == bool(fn(np.uint16(a).view(np.uint16), np.uint16(b))), (op, a, b)


@pytest.mark.parametrize("op,fn", [("flth", np.less), ("fleh", np.less_equal), ("feqh", np.equal)])
def test_fp_comparisons_are_false_on_nan(op, fn):
    vals = np.array([-1.5, 0.0, -0.0, 2.0, np.inf, np.nan], np.float16)
    for a in vals:
        for b in vals:
            pe = ws.pe.LonePE()
            pe.load(f".task t, 1\nt: {op}.t r1, r2")
            pe.set_gpr(1, int(np.array(a).view(np.uint16)))
            pe.set_gpr(2, int(np.array(b).view(np.uint16)))
            pe.launch("t")
            pe.run()
            assert pe.flag == bool(fn(a, b)), (op, a, b)


def test_setrng_selects_and_seedrng_reseeds_the_random_resource_0668_0671():
    src = """
    .task t, 1
    t: setrng #2
       mov16 r7, #prn
       li r1, 1234
       seedrng r1
       mov16.t r8, #prn
    """
    pes = []
    for seed in (5, 6):
        pe = ws.pe.LonePE(rng_seed=seed)
        pe.load(src)
        pe.launch("t")
        pe.run()
        pes.append(pe)
    assert pes[0].gpr(7) == ws.numerics.LfsrBank(4, 5).next_bits(2, 16)  # resource 2
    assert pes[0].gpr(7) != pes[1].gpr(7)  # different machine seeds
    assert pes[0].gpr(8) == pes[1].gpr(8)  # the same program seed: the same draws
    with pytest.raises(ws.ProgramError, match="random-number resource 5 does not exist"):
        run_op("setrng.t #5", np.zeros(1, np.float16))
