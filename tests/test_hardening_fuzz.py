"""Fuzz of every public entry point that takes coordinates or values: each accepts exactly
what is valid (checked against oracles written here, independent of the implementation:
Python integer comparisons and the struct module's IEEE packing) and refuses the rest with
ConfigError or RouteError, leaving nothing half done. Bounded so it runs in the sanitizer
job too."""

import math
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wafersim as ws

ROWS, COLS = 2, 3
SETTINGS = settings(max_examples=80, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
NP_INTS = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)

HOLDER = """
.data
.export y, h
y:    .space i16, 2
h:    .space fp16, 2
.code
.task main, 40
main: term
"""

# ---- coordinates -----------------------------------------------------------------------------
_near = st.integers(-3, 5)
_np_near = st.sampled_from(NP_INTS).flatmap(
    lambda t: st.integers(max(-3, int(np.iinfo(t).min)), 5).map(t))
_np_any = st.sampled_from(NP_INTS).flatmap(
    lambda t: st.integers(int(np.iinfo(t).min), int(np.iinfo(t).max)).map(t))
_not_integer = st.one_of(st.floats(-4, 6), st.floats(allow_nan=True, allow_infinity=True),
                         st.sampled_from([0.5, 1.0, True, False, np.bool_(True), "1", None,
                                          np.float32(1.0), np.float64(0.0)]))
coordinate = st.one_of(_near, _np_near, _near, _np_any, st.integers(-2**70, 2**70), _not_integer)


def is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def inside(r, c) -> bool:
    return 0 <= int(r) < ROWS and 0 <= int(c) < COLS


def host_port(r, c) -> bool:
    """Inside, or one step outside a border router of this plain mesh (an edge port)."""
    r, c = int(r), int(c)
    return inside(r, c) or (0 <= r < ROWS and c in (-1, COLS)) or (0 <= c < COLS and r in (-1, ROWS))


@SETTINGS
@given(r=coordinate, c=coordinate)
def test_pe_and_router_take_exactly_the_integer_points_inside(r, c):
    w = ws.Wafer(ROWS, COLS)
    w.load(HOLDER)
    if is_int(r) and is_int(c) and inside(r, c):
        assert (w.pe(r, c).row, w.pe(r, c).col) == (int(r), int(c))
        assert (w.router(r, c).row, w.router(r, c).col) == (int(r), int(c))
    else:
        with pytest.raises(ws.ConfigError):
            w.pe(r, c)
        with pytest.raises(ws.ConfigError):
            w.router(r, c)


@SETTINGS
@given(r=coordinate, c=coordinate, array_type=st.sampled_from([None, np.int64, np.uint64, np.int8]))
def test_host_ports_take_exactly_the_integer_points_inside_or_on_an_edge(r, c, array_type):
    at = (r, c)
    if array_type is not None and is_int(r) and is_int(c):
        info = np.iinfo(array_type)
        if all(info.min <= int(v) <= info.max for v in at):
            at = np.array([[int(r), int(c)]], dtype=array_type)
    valid = is_int(r) and is_int(c) and host_port(r, c)
    w = ws.Wafer(ROWS, COLS)
    calls = [lambda: w.inject(at, 1, 5), lambda: w.stream(at, 1, [1.0]),
             lambda: w.close(at, 1, 40), lambda: w.collect(at), lambda: w.set_sink(at, 2)]
    for call in calls:
        if valid:
            call()
        else:
            with pytest.raises(ws.ConfigError):
                call()
    assert w.pending_injections == (3 if valid else 0)


@SETTINGS
@given(points=st.lists(st.tuples(st.one_of(_near, _near, _np_near, coordinate),
                                 st.one_of(_near, _near, _np_near, coordinate)),
                       min_size=1, max_size=4))
def test_routes_refuse_non_integer_points_and_raise_only_route_errors(points):
    w = ws.Wafer(ROWS, COLS)
    all_int = all(is_int(v) for p in points for v in p)
    for call in (lambda: w.route(1, points), lambda: w.route_tree(2, points[0], points[1:] or points)):
        if not all_int:
            with pytest.raises(ws.ConfigError):
                call()
            continue
        try:
            call()
        except ws.RouteError:
            pass
    for color in (1, 2):  # whatever was accepted lies on routers inside the fabric
        for rr in range(ROWS):
            for cc in range(COLS):
                w.router(rr, cc).route(color)
    if not all_int:
        assert all(w.router(rr, cc).route(k) == ([], []) for rr in range(ROWS)
                   for cc in range(COLS) for k in (1, 2))


@SETTINGS
@given(rect=st.tuples(*[st.one_of(_near, _np_near, coordinate)] * 4))
def test_rects_take_exactly_integer_rectangles_inside(rect):
    w = ws.Wafer(ROWS, COLS)
    w.load(HOLDER)
    row, col, h, wd = rect
    ints = all(is_int(v) for v in rect)
    valid = ints and int(h) >= 1 and int(wd) >= 1 and inside(row, col) and \
        int(row) + int(h) <= ROWS and int(col) + int(wd) <= COLS
    if valid:
        assert w.memcpy_d2h("y", rect=rect).shape == (int(h), int(wd), 2)
        assert w.launch("main", rect=rect) == int(h) * int(wd)
        w.memcpy_h2d("y", [1, 2], rect=rect)
    else:
        for call in (lambda: w.memcpy_d2h("y", rect=rect), lambda: w.launch("main", rect=rect),
                     lambda: w.memcpy_h2d("y", [1, 2], rect=rect)):
            with pytest.raises(ws.ConfigError):
                call()
        assert w.memcpy_d2h("y").sum() == 0
    if ints:
        assert ws.Rect(*rect) == ws.Rect(*(int(v) for v in rect))
    else:
        with pytest.raises(ws.ConfigError):
            ws.Rect(*rect)


# ---- values ----------------------------------------------------------------------------------
INT_RANGE = {"i16": (-2**15, 2**15 - 1), "u16": (0, 2**16 - 1),
             "i32": (-2**31, 2**31 - 1), "u32": (0, 2**32 - 1)}
PACK = {"fp16": "<e", "fp32": "<f"}

number = st.one_of(
    st.integers(-5, 70000), st.integers(-2**40, 2**40),
    st.floats(allow_nan=True, allow_infinity=True), st.floats(-70000, 70000),
    st.sampled_from([0.5, 1.7, -1.0, 65504.0, 65519.0, 65520.0, 1e6, 3.4028235e38, 1e39]),
    st.integers(-2**15, 2**15 - 1).map(np.int16), st.integers(0, 2**32 - 1).map(np.uint32),
    st.floats(width=32, allow_nan=False).map(np.float32))


def representable(v, dtype: str, overflow: str) -> bool:
    """Whether ``v`` may be sent as ``dtype`` (an integer type: a whole number in range; a
    float type: anything but a finite value that packs to inf, unless overflow="inf")."""
    if dtype in INT_RANGE:
        lo, hi = INT_RANGE[dtype]
        f = float(v)
        return math.isfinite(f) and f == int(f) and lo <= int(f) <= hi
    try:
        struct.pack(PACK[dtype], float(v))
        return True
    except OverflowError:
        return overflow == "inf"


def expected_bits(v, dtype: str) -> int:
    if dtype in INT_RANGE:
        return int(float(v)) & (0xFFFF if "16" in dtype else 0xFFFFFFFF)
    try:
        packed = struct.pack(PACK[dtype], float(v))
    except OverflowError:
        packed = struct.pack(PACK[dtype], math.copysign(math.inf, float(v)))
    return int.from_bytes(packed, "little")


def same_bits(got: int, want: int, dtype: str) -> bool:
    if dtype == "fp16" and (want & 0x7C00) == 0x7C00 and want & 0x3FF:  # NaN: any NaN
        return (got & 0x7C00) == 0x7C00 and bool(got & 0x3FF)
    if dtype == "fp32" and (want & 0x7F800000) == 0x7F800000 and want & 0x7FFFFF:
        return (got & 0x7F800000) == 0x7F800000 and bool(got & 0x7FFFFF)
    return got == want


@SETTINGS
@given(values=st.lists(number, min_size=1, max_size=6),
       dtype=st.sampled_from(sorted(INT_RANGE) + sorted(PACK)),
       overflow=st.sampled_from(["error", "inf"]))
def test_stream_sends_exactly_the_values_its_type_holds(values, dtype, overflow):
    w = ws.Wafer(1, 1)
    w.route(1, [(0, -1), (0, 0), (0, 1)])
    valid = all(representable(v, dtype, overflow) for v in values)
    if not valid:
        with pytest.raises(ws.ConfigError):
            w.stream((0, -1), 1, values, dtype=dtype, overflow=overflow)
        assert w.pending_injections == 0
        return
    assert w.stream((0, -1), 1, values, dtype=dtype, overflow=overflow) == len(values)
    w.run()
    got = w.collect().data.tolist()
    assert len(got) == len(values)
    mask = 0xFFFF if dtype in ("i16", "u16", "fp16") else 0xFFFFFFFF
    assert all(same_bits(g & mask, expected_bits(v, dtype), dtype) for g, v in zip(got, values))


@SETTINGS
@given(values=st.lists(number, min_size=1, max_size=6),
       dtype=st.sampled_from(sorted(INT_RANGE) + sorted(PACK)),
       index=st.one_of(st.integers(-2, 70000), st.integers(0, 65535).map(np.uint16)))
def test_lone_pe_inject_queues_exactly_what_fits(values, dtype, index):
    pe = ws.pe.LonePE()
    valid = all(representable(v, dtype, "error") for v in values) and 0 <= int(index) <= 65535
    if valid:
        assert pe.inject(3, values, dtype=dtype, index=index) == len(values)
    else:
        with pytest.raises(ws.ConfigError):
            pe.inject(3, values, dtype=dtype, index=index)
    assert pe.pending_injections(3) == (len(values) if valid else 0)


@SETTINGS
@given(data=st.lists(st.one_of(st.integers(-2, 2**33), st.integers(-2**70, 2**70),
                               st.integers(0, 2**64 - 1).map(np.uint64), st.floats(0, 9)),
                     min_size=1, max_size=5),
       index=st.one_of(st.none(), st.integers(-1, 65536)),
       ctrl=st.one_of(st.none(), st.integers(-1, 2), st.booleans()))
def test_raw_wavelets_take_exactly_32_bit_data_16_bit_index_and_one_ctrl_bit(data, index, ctrl):
    valid = (all(is_int(v) and 0 <= int(v) < 2**32 for v in data)
             and (index is None or 0 <= index <= 65535) and (ctrl is None or 0 <= int(ctrl) <= 1))
    pe = ws.pe.LonePE()
    w = ws.Wafer(1, 1)
    w.route(1, [(0, -1), (0, 0), (0, 1)])
    calls = [lambda: pe.inject_wavelets(3, data, index=index, ctrl=ctrl),
             lambda: w.inject((0, -1), 1, data, index=0 if index is None else index,
                              ctrl=False if ctrl is None else ctrl)]
    for call in calls:
        if valid:
            assert call() == len(data)
        else:
            with pytest.raises(ws.ConfigError):
                call()
    assert pe.pending_injections(3) == w.pending_injections == (len(data) if valid else 0)
    if valid:
        w.run()
        assert w.collect().data.tolist() == [int(v) for v in data]


@SETTINGS
@given(y=st.lists(number, min_size=2, max_size=2), h=st.lists(number, min_size=2, max_size=2))
def test_memory_writes_take_exactly_the_values_the_symbol_holds(y, h):
    """memcpy_h2d and write need exact values: a whole number in range for i16, a value
    fp16 packs without rounding for fp16."""
    def exact_fp16(v):
        try:
            back = struct.unpack("<e", struct.pack("<e", float(v)))[0]
        except OverflowError:
            return False
        return back == float(v) or (math.isnan(back) and math.isnan(float(v)))

    w = ws.Wafer(1, 2)
    w.load(HOLDER)
    pe = ws.pe.LonePE()
    pe.load(HOLDER)
    cases = [("y", y, all(representable(v, "i16", "error") for v in y)),
             ("h", h, all(exact_fp16(v) for v in h))]
    for name, values, valid in cases:
        for call in (lambda: w.memcpy_h2d(name, values), lambda: w.pe(0, 1).write(name, values),
                     lambda: pe.write(name, values)):
            if valid:
                call()
            else:
                with pytest.raises(ws.ConfigError):
                    call()
        want = [float(v) for v in values] if valid else [0.0, 0.0]
        got = w.memcpy_d2h(name)[0, 0].astype(np.float64).tolist()
        assert all(g == x or (math.isnan(g) and math.isnan(x)) for g, x in zip(got, want))
        assert np.array_equal(pe.read(name), w.pe(0, 1).read(name), equal_nan=True)
