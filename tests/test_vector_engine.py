"""The vector engine: loads, dequeues, ALU semantics and the Fig. 9 pipeline."""

from fractions import Fraction

import numpy as np
import pytest

import wafersim as ws

VE = ws.tensor.VectorEngine


def test_masked_dequeue_changes_only_selected_lanes_0082():
    ve = VE(lanes=96)
    ve.set_reg("RD0", np.full(96, 0xAAAAAAAA, dtype=np.uint32))
    ve.execute("MASKMOV M0, " + hex(int("01" * 48, 2)))  # odd... bit i = lane i: even lanes set
    ve.push_row(np.arange(96) + 0x100)
    ve.execute("DEQM.B RB0")
    rd0 = ve.reg("RD0")
    even = np.arange(0, 96, 2)
    odd = np.arange(1, 96, 2)
    np.testing.assert_array_equal(rd0[odd], 0xAAAAAAAA)
    np.testing.assert_array_equal(rd0[even], 0xAAAAAA00 | ((even + 0x100) & 0xFF))


def test_dequeue_takes_the_low_bits_of_each_lane_0080():
    ve = VE(lanes=4)
    ve.push_row(np.array([-1, 0x12345678, 7, 0x8000], dtype=np.int64))
    ve.execute("DEQ.H RW1")
    np.testing.assert_array_equal(ve.reg("RW1"), [0xFFFF, 0x5678, 7, 0x8000])
    assert ve.queued_rows == 0


def test_dequeue_on_empty_queue_stalls_then_proceeds_0037_0061():
    ve = VE(lanes=4)
    ve.load("DEQ.W RD0 | ADD.U RD1, RD0, 1 | ST.W RD1")
    before = ve.reg("RD1").copy()
    assert ve.run() is False and ve.pc == 0          # blocked on dequeue-ready
    np.testing.assert_array_equal(ve.reg("RD1"), before)
    assert ve.counters["bundles"] == 0
    ve.push_row(np.array([1, 2, 3, 4]), cycle=10)    # latched in cycle 10
    assert ve.run() is True
    np.testing.assert_array_equal(ve.reg("RD1"), [2, 3, 4, 5])
    c = ve.counters
    assert c["stall_dequeue"] == 9                   # issue moves from cycle 2 to cycle 11
    assert c["last_retire"] == 14                    # S stage = issue + 3
    with pytest.raises(ws.ProgramError, match="empty input queue"):
        ve.execute("DEQ.W RD0")                       # functional execution cannot wait


def _quant_ref(x, scale, shift, zp, unsigned, relu):
    x = max(x, 0) if relu else x
    p = Fraction(x * scale, 2**shift)
    r = int(np.floor(p + Fraction(1, 2)))
    lo, hi = (0, 255) if unsigned else (-128, 127)
    return min(max(r + zp, lo), hi)


@pytest.mark.parametrize("op", ["QNT.S8", "QNT.U8", "RELUQ.S8", "RELUQ.U8"])
def test_saturating_quantization_at_the_boundaries_0027(op):
    shift, scale, zp = 4, 1, 3
    xs = [-2**31, 2**31 - 1, 0, -1, 1, 127 * 16 + 8, -(128 * 16) - 8, 8, -8, 7, -9, 24, -24,
          int(127.5 * 16), -int(127.5 * 16), 255 * 16, 256 * 16]
    lanes = len(xs)
    ve = VE(lanes=lanes)
    ve.set_reg("RD0", np.array(xs, dtype=np.int64))
    ve.execute(f"{op} RB4, RD0, scale={scale}, shift={shift}, zp={zp}")
    got = ve.reg("RB4").astype(np.int64)
    unsigned, relu = op.endswith("U8"), op.startswith("RELUQ")
    want = [_quant_ref(x, scale, shift, zp, unsigned, relu) & 0xFF for x in xs]
    np.testing.assert_array_equal(got, want)
    hi = 255 if unsigned else 127
    assert got[1] == hi                                  # 2^31 - 1 saturates high
    if relu:
        assert got[0] == zp and got[3] == zp             # negatives clamp to 0 first
    else:
        assert got[0] == (0 if unsigned else 0x80)       # -2^31 saturates low (-128 or 0)


def test_quantization_with_negative_scale_and_zero_point():
    ve = VE(lanes=3)
    ve.set_reg("RW0", np.array([100, -100, 3]))
    ve.execute("QNT.S8 RB8, RW0, scale=-3, shift=2, zp=-5")
    want = [_quant_ref(x, -3, 2, -5, False, False) & 0xFF for x in (100, -100, 3)]
    np.testing.assert_array_equal(ve.reg("RB8"), want)


@pytest.mark.parametrize("file,bits", [("RB", 8), ("RW", 16), ("RD", 32)])
def test_integer_wrap_carry_and_borrow_0059(file, bits):
    rng = np.random.default_rng(bits)
    m = (1 << bits) - 1
    a = rng.integers(0, m + 1, 96, dtype=np.uint64)
    b = rng.integers(0, m + 1, 96, dtype=np.uint64)
    a[:4] = [m, m, 0, 1 << (bits - 1)]
    b[:4] = [1, m, 1, 1 << (bits - 1)]
    ve = VE(lanes=96)
    ve.set_reg(f"{file}1", a)
    ve.set_reg(f"{file}2", b)
    ai, bi = [int(v) for v in a], [int(v) for v in b]
    sx = lambda v: v - (1 << bits) if v >> (bits - 1) else v  # noqa: E731
    ve.execute(f"ADD.U {file}3, {file}1, {file}2")
    assert list(ve.reg(f"{file}3")) == [(x + y) & m for x, y in zip(ai, bi)]
    assert list(ve.carry) == [x + y > m for x, y in zip(ai, bi)]
    ve.execute(f"SUB.U {file}3, {file}1, {file}2")
    assert list(ve.reg(f"{file}3")) == [(x - y) & m for x, y in zip(ai, bi)]
    assert list(ve.carry) == [x < y for x, y in zip(ai, bi)]
    ve.execute(f"ADD.S {file}3, {file}1, {file}2")
    assert list(ve.carry) == [not -(1 << (bits - 1)) <= sx(x) + sx(y) < (1 << (bits - 1)) for x, y in zip(ai, bi)]
    ve.execute(f"MUL.S {file}3, {file}1, {file}2")
    assert list(ve.reg(f"{file}3")) == [(x * y) & m for x, y in zip(ai, bi)]
    ve.execute(f"CMPLT.S M1, {file}1, {file}2 | NOP | NOP")
    assert list(ve.mask(1)) == [sx(x) < sx(y) for x, y in zip(ai, bi)]
    ve.execute(f"CMPLT.U M2, {file}1, {file}2")
    assert list(ve.mask(2)) == [x < y for x, y in zip(ai, bi)]
    ve.execute(f"ABS {file}4, {file}1")
    assert list(ve.reg(f"{file}4")) == [abs(sx(x)) & m for x in ai]  # INT_MIN stays INT_MIN
    assert int(ve.reg(f"{file}4")[3]) == 1 << (bits - 1)


def test_immediates_logic_shifts_select_and_predication_0092():
    ve = VE(lanes=4)
    ve.set_reg("RD0", np.array([-8, 8, 0x0F0F, -1], dtype=np.int64))
    ve.execute("MOVI RD1, 0x1234")                 # V=1 broadcast
    assert (ve.reg("RD1") == 0x1234).all()
    ve.execute("AND RD2, RD0, 0xFF")               # M=1: immediate bit mask
    np.testing.assert_array_equal(ve.reg("RD2"), [0xF8, 8, 0x0F, 0xFF])
    ve.execute("SHR.S RD3, RD0, 2")
    np.testing.assert_array_equal(ve.reg("RD3").view(np.int32), [-2, 2, 0x3C3, -1])
    ve.execute("SHR.U RD3, RD0, 28")
    np.testing.assert_array_equal(ve.reg("RD3"), [15, 0, 0, 15])
    ve.execute("CMPLT.S M0, RD0, 0")               # lanes 0 and 3 negative
    ve.execute("SEL RD4, RD1, RD2, M0")
    np.testing.assert_array_equal(ve.reg("RD4"), [0x1234, 8, 0x0F, 0x1234])
    ve.execute("MOVI RD5, 7 @M0")                  # predicated write-back
    assert list(ve.reg("RD5")) == [7, 0, 0, 7]
    ve.execute("MAD RD6, RD0, RD0, RD1")
    np.testing.assert_array_equal(ve.reg("RD6"), [64 + 0x1234, 64 + 0x1234, (0x0F0F**2 + 0x1234) & 0xFFFFFFFF, 1 + 0x1234])
    ve.execute("RELU RD7, RD0")
    np.testing.assert_array_equal(ve.reg("RD7"), [0, 8, 0x0F0F, 0])


def _f32(x):
    return np.float32(x)


SPECIALS = np.array([0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, 3.4e38, -3.4e38, 1e-45,
                     1.17549435e-38, 1e-20, 1e20, 0.1, 7.0, -2.5e-39], dtype=np.float32)


def _exact(v):
    return Fraction(float(v))


@pytest.mark.parametrize("op", ["FADD", "FSUB", "FMUL"])
def test_fp32_matches_ieee_including_specials_0077_0059(op):
    rng = np.random.default_rng(3)
    a = np.concatenate([np.repeat(SPECIALS, len(SPECIALS)), rng.normal(size=200).astype(np.float32)])
    b = np.concatenate([np.tile(SPECIALS, len(SPECIALS)), (rng.normal(size=200) * 1e-3).astype(np.float32)])
    ref = {"FADD": np.add, "FSUB": np.subtract, "FMUL": np.multiply}[op]
    with np.errstate(all="ignore"):
        want = ref(a, b).astype(np.float32)
    flags = {"invalid": False, "overflow": False, "underflow": False, "inexact": False}
    for x, y, r in zip(a, b, want):
        if np.isnan(r):
            flags["invalid"] |= not (np.isnan(x) or np.isnan(y))
            continue
        if not (np.isfinite(x) and np.isfinite(y)):
            continue
        e = {"FADD": lambda: _exact(x) + _exact(y), "FSUB": lambda: _exact(x) - _exact(y),
             "FMUL": lambda: _exact(x) * _exact(y)}[op]()
        if np.isinf(r):
            flags["overflow"] = flags["inexact"] = True
        elif _exact(r) != e:
            flags["inexact"] = True
            flags["underflow"] |= abs(e) < _exact(np.finfo(np.float32).tiny)
    ve = VE(lanes=len(a))
    ve.set_reg("RD1", a)
    ve.set_reg("RD2", b)
    ve.execute(f"{op} RD3, RD1, RD2")
    got = ve.reg("RD3").view(np.float32)
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all()
    np.testing.assert_array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))
    assert (ve.reg("RD3")[nan] == 0x7FC00000).all()  # canonical NaN
    assert ve.fp_status == flags
    assert flags["invalid"] and flags["inexact"]


def test_fp_status_is_sticky_and_clearable_0059():
    ve = VE(lanes=2)
    ve.set_reg("RD0", np.array([1.0, 2.0], dtype=np.float32))
    ve.execute("FADD RD1, RD0, RD0")
    assert not any(ve.fp_status.values())
    ve.set_reg("RD2", np.array([np.inf, 1.0], dtype=np.float32))
    ve.execute("FSUB RD1, RD2, RD2")                # inf - inf
    ve.execute("FADD RD1, RD0, RD0")
    assert ve.fp_status["invalid"]
    ve.clear_fp_status()
    assert not ve.fp_status["invalid"]


def test_sigmoid_and_fp_relu_claim16():
    x = np.array([-3.0, 0.0, 2.5, -0.0, 40.0], dtype=np.float32)
    ve = VE(lanes=5)
    ve.set_reg("RD0", x)
    ve.execute("SIGM RD1, RD0\nRELU.F RD2, RD0")
    want = (1.0 / (1.0 + np.exp(-x.astype(np.float64)))).astype(np.float32)
    np.testing.assert_array_equal(ve.reg("RD1").view(np.float32), want)
    np.testing.assert_array_equal(ve.reg("RD2").view(np.float32), [0.0, 0.0, 2.5, -0.0, 40.0])


def test_in_bundle_order_is_load_alu_store_0113():
    prog = "DEQ.W RD0 | ADD.S RD1, RD0, RD2 | ST.W RD1"
    seq = "DEQ.W RD0\nADD.S RD1, RD0, RD2\nST.W RD1"
    results = []
    for text in (prog, seq):
        ve = VE(lanes=4)
        ve.set_reg("RD2", np.array([10, 20, 30, 40]))
        ve.set_reg("RD1", np.array([5, 5, 5, 5]))
        for r in range(3):
            ve.push_row(np.array([1, 2, 3, 4]) * (r + 1))
        ve.load("\n".join([text] * 3) if text == prog else "\n".join([seq] * 3))
        assert ve.run()
        results.append((ve.reg("RD1").copy(), ve.read_sram(0, 48).copy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    np.testing.assert_array_equal(results[0][1][:16].view(np.uint32), [11, 22, 33, 44])


def test_parallel_mode_reads_the_state_before_the_triad_0115():
    ve = VE(lanes=2, pipeline="parallel")
    ve.set_reg("RD0", np.array([7, 7]))
    ve.push_row(np.array([1, 2]))
    ve.execute("DEQ.W RD0 | ADD.S RD1, RD0, RD0 | ST.W RD0")
    np.testing.assert_array_equal(ve.reg("RD1"), [14, 14])           # old RD0
    np.testing.assert_array_equal(ve.read_sram(0, 8).view(np.uint32), [7, 7])
    np.testing.assert_array_equal(ve.reg("RD0"), [1, 2])


def test_fig9_three_independent_triads_finish_in_8_cycles_0113():
    ve = VE(lanes=4)
    ve.load("ADD.S RD1, RD2, RD3\nADD.S RD4, RD5, RD6\nADD.S RD7, RD0, RD0")
    assert ve.run()
    c = ve.counters
    assert c["cycles"] == 8 and c["last_retire"] == 7  # S stages in cycles 5, 6, 7
    ve = VE(lanes=4)
    ve.load("\n".join(["NOP | ADD.S RD1, RD2, RD3 | NOP"] * 100))
    ve.run()
    assert ve.counters["cycles"] == 100 + 5          # one triad per clock [0114]
    ve = VE(lanes=4, pipeline="parallel")
    ve.load("NOP\nNOP\nNOP")
    ve.run()
    assert ve.counters["cycles"] == 6                # F D I X, one per clock


def test_load_after_store_waits_for_the_sram_port():
    ve = VE(lanes=4)
    ve.load("NOP | NOP | ST.W RD0\nNOP\nLD.W RD1")   # S of bundle 0 and L of bundle 2 collide
    ve.run()
    c = ve.counters
    assert c["stall_sram_port"] == 1 and c["cycles"] == 9


def test_loads_stores_and_masks_from_sram_0084_0090():
    ve = VE(lanes=8)
    ve.write_sram(0, np.arange(32, dtype=np.uint8))
    ve.write_sram(32, np.array([0b10100101], dtype=np.uint8))
    ve.execute("LD.H RW1\nLD.B RB0")
    np.testing.assert_array_equal(ve.reg("RW1"), np.arange(16, dtype=np.uint8).view(np.uint16))
    np.testing.assert_array_equal(ve.reg("RB0"), np.arange(16, 24))
    assert ve.read_pointer == 24
    ve.read_pointer = 32
    ve.execute("LDMSK M0")
    assert list(ve.mask(0)) == [1, 0, 1, 0, 0, 1, 0, 1]
    ve.write_pointer = 100
    ve.execute("NOP | NOP | ST.H RW1\nNOP | NOP | OUT.B RB0")
    np.testing.assert_array_equal(ve.read_sram(100, 16), np.arange(16))
    (row,) = ve.pop_output()
    np.testing.assert_array_equal(row, np.arange(16, 24))
    ve.write_pointer = 64 * 1024 - 4
    with pytest.raises(ws.MemoryAccessError, match="leaves the vector-engine SRAM"):
        ve.execute("NOP | NOP | ST.W RD0")
