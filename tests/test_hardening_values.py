"""Values the host sends or writes are never wrapped, truncated or overflowed in silence:
every path that turns user values into wavelets or memory words (Wafer.inject and stream,
LonePE.inject and inject_wavelets, memcpy_h2d and write) raises ConfigError (a ValueError)
naming the value and the range."""

import re

import numpy as np
import pytest

import wafersim as ws

HOLDER = """
.data
.export y, h
y:    .space i16, 3
h:    .space fp16, 3
.code
.task main, 40
main: term
"""


def _wafer():
    w = ws.Wafer(1, 2)
    w.route(1, [(0, -1), (0, 0), (0, 1), (0, 2)])
    return w


@pytest.mark.parametrize("values,dtype,bad,rng", [
    ([1, 70000], "i16", "70000 at index 1", "-32768..32767"),
    ([-40000], "i16", "-40000 at index 0", "-32768..32767"),
    ([1.7], "i16", "1.7 at index 0", "-32768..32767"),
    ([-1], "u16", "-1 at index 0", "0..65535"),
    ([2**32], "u32", "4294967296 at index 0", "0..4294967295"),
    ([np.nan], "i32", "nan at index 0", "-2147483648..2147483647"),
])
def test_stream_refuses_integer_values_that_would_wrap_or_truncate(values, dtype, bad, rng):
    w = _wafer()
    with pytest.raises(ws.ConfigError, match=f"{bad} is not exactly representable .*{rng}") as err:
        w.stream((0, -1), 1, values, dtype=dtype)
    assert isinstance(err.value, ValueError)
    assert w.pending_injections == 0


def test_stream_takes_whole_floats_as_integers_and_rounds_floats_to_nearest():
    w = _wafer()
    assert w.stream((0, -1), 1, [3.0, -2.0, 32767.0], dtype="i16") == 3
    assert w.stream((0, -1), 1, [0.1, 65504.0], dtype="fp16") == 2
    w.run()
    got = w.collect()
    assert got.values("i16")[:3].tolist() == [3, -2, 32767]
    assert got.values("fp16")[3:].tolist() == [np.float16(0.1), np.float16(65504.0)]


@pytest.mark.parametrize("dtype,value,limit", [("fp16", 1e6, "65504"), ("fp16", -70000, "65504"),
                                               ("fp32", 1e39, "3.40282e+38")])
def test_float_overflow_to_inf_is_an_error_unless_asked_for(dtype, value, limit):
    w = _wafer()
    with pytest.raises(ws.ConfigError, match=f"overflows float.*{re.escape(limit)}.*overflow='inf'"):
        w.stream((0, -1), 1, [1.0, value], dtype=dtype)
    assert w.pending_injections == 0
    assert w.stream((0, -1), 1, [1.0, value], dtype=dtype, overflow="inf") == 2
    w.run()
    assert w.collect().values(dtype).tolist() == [1.0, np.copysign(np.inf, value)]


def test_infinities_and_nans_the_user_gives_are_sent_as_they_are():
    w = _wafer()
    w.stream((0, -1), 1, [np.inf, -np.inf, np.nan], dtype="fp16")
    w.run()
    got = w.collect().values("fp16")
    assert np.isposinf(got[0]) and np.isneginf(got[1]) and np.isnan(got[2])


def test_unknown_overflow_policy_is_refused():
    with pytest.raises(ws.ConfigError, match="overflow must be one of error, inf"):
        _wafer().stream((0, -1), 1, [1.0], overflow="saturate")


def test_lone_pe_inject_refuses_what_would_wrap():
    pe = ws.pe.LonePE()
    with pytest.raises(ws.ConfigError, match="index must be in 0..65535, got 70000"):
        pe.inject(3, [1.0], index=70000)
    with pytest.raises(ws.ConfigError, match="index must be in 0..65535, got -1"):
        pe.inject(3, [1.0, 2.0], index=[0, -1])
    with pytest.raises(ws.ConfigError, match="70000 at index 0 is not exactly representable as int16"):
        pe.inject(3, [70000], dtype="i16")
    with pytest.raises(ws.ConfigError, match="overflows float16"):
        pe.inject(3, [1e6])
    assert pe.pending_injections(3) == 0
    assert pe.inject(3, [1e6], overflow="inf") == 1


@pytest.mark.parametrize("data,match", [
    (2**33 + 5, "data must be in 0..4294967295, got 8589934597"),
    ([-1], "data must be in 0..4294967295, got -1 at index 0"),
    ([2**70], "data must be in 0..4294967295, got 1180591620717411303424"),
    ([1.5], "data must be integers, got dtype float64"),
])
def test_inject_wavelets_refuses_data_words_beyond_32_bits(data, match):
    pe = ws.pe.LonePE()
    with pytest.raises(ws.ConfigError, match=match):
        pe.inject_wavelets(3, data)
    assert pe.pending_injections(3) == 0


def test_inject_wavelets_checks_index_and_ctrl_too():
    pe = ws.pe.LonePE()
    with pytest.raises(ws.ConfigError, match="index must be in 0..65535, got 65536"):
        pe.inject_wavelets(3, [1], index=[65536])
    with pytest.raises(ws.ConfigError, match="ctrl must be in 0..1, got 2"):
        pe.inject_wavelets(3, [1], ctrl=[2])
    assert pe.inject_wavelets(3, [0, 2**32 - 1], index=65535, ctrl=[True, False]) == 2


def test_memcpy_and_write_name_the_value_its_position_and_the_range():
    w = ws.Wafer(1, 2)
    w.load(HOLDER)
    with pytest.raises(ws.ConfigError, match=r"write\('y'\): values: 40000 at index \(0, 1, 2\) is "
                                             r"not exactly representable as int16, which holds "
                                             r"whole numbers in -32768..32767"):
        w.memcpy_h2d("y", [[[1, 2, 3], [4, 5, 40000]]], rect=(0, 0, 1, 2))
    with pytest.raises(ws.ConfigError, match=r"0.1 at index 1 is not exactly representable as "
                                             r"float16 \(finite range -65504..65504"):
        w.pe(0, 1).write("h", [1.0, 0.1, 2.0])
    with pytest.raises(ws.ConfigError, match=r"1000000.0 at index 0 is not exactly representable"):
        w.memcpy_h2d("h", [1e6, 0, 0])
    assert w.memcpy_d2h("y").sum() == 0 and w.memcpy_d2h("h").sum() == 0  # nothing written


def test_every_path_refuses_the_same_value_with_the_same_rule():
    """One helper for all: the same out-of-range i16 value fails the same way everywhere."""
    w = _wafer()
    w.load(HOLDER, rect=(0, 1))
    pe = ws.pe.LonePE()
    pe.load(HOLDER)
    paths = {
        "Wafer.stream": lambda v: w.stream((0, -1), 1, v, dtype="i16"),
        "LonePE.inject": lambda v: pe.inject(3, v, dtype="i16"),
        "memcpy_h2d": lambda v: w.memcpy_h2d("y", v, rect=(0, 1)),
        "WaferPE.write": lambda v: w.pe(0, 1).write("y", v),
        "LonePE.write": lambda v: pe.write("y", v),
    }
    for name, send in paths.items():
        with pytest.raises(ws.ConfigError, match="-40000 at index 2 is not exactly representable "
                                                 "as int16, which holds whole numbers in "
                                                 "-32768..32767"):
            send([1, 2, -40000])
        send([1, 2, -32768])  # the range's own ends go through
