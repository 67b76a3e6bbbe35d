"""Coordinates are integers in range, else ConfigError: nothing truncates 0.5 to 0 and no
uint64 2**64 - 1 is read as -1 (the north edge port of (0, 0)). numpy integer scalars and
arrays are welcome everywhere."""

import numpy as np
import pytest

import wafersim as ws

COPY = """
.data
.export x
x:    .space i16, 2
.code
.task main, 40
main: term
"""

HUGE = np.uint64(2**64 - 1)


def _wafer():
    w = ws.Wafer(2, 3)
    w.route(1, [(-1, 0), (0, 0), (0, 1), (0, 2), (0, 3)])
    return w


@pytest.mark.parametrize("at", [
    np.array([[HUGE, 0]], np.uint64),         # would wrap to (-1, 0): the S edge port of (0, 0)
    np.array([[0, HUGE]], np.uint64),
    (HUGE, np.uint64(0)),
    (2**64 - 1, 0),
    (-2**63 - 1, 0),
])
def test_far_off_coordinates_are_not_edge_ports(at):
    w = _wafer()
    for call in (lambda: w.inject(at, 1, 5), lambda: w.stream(at, 1, [1.0]),
                 lambda: w.close(at, 1, 40), lambda: w.collect(at), lambda: w.set_sink(at, 1)):
        with pytest.raises(ws.ConfigError, match=r"at\[0\] = \(.*\) is neither inside the 2x3 "
                                                 r"fabric nor an edge port"):
            call()
    assert w.pending_injections == 0


@pytest.mark.parametrize("r,c", [(0.5, 0), (0, 0.5), (1.0, 0), (True, 0), ("0", 0), (None, 0),
                                 (np.float64(1), 0)])
def test_pe_and_router_refuse_what_is_not_an_integer(r, c):
    w = _wafer()
    w.load(COPY, rect=(0, 0))
    with pytest.raises(ws.ConfigError, match=r"pe must be a \(row, col\) pair of integers"):
        w.pe(r, c)
    with pytest.raises(ws.ConfigError, match=r"router must be a \(row, col\) pair of integers"):
        w.router(r, c)


def test_routes_refuse_fractional_points_without_half_applying():
    w = ws.Wafer(3, 3)
    with pytest.raises(ws.ConfigError, match=r"path\[1\] must be a \(row, col\) pair of integers, "
                                             r"got \(0.5, 1\)"):
        w.route(2, [(0, 0), (0.5, 1)])
    with pytest.raises(ws.ConfigError, match="src must be a"):
        w.route_tree(2, (0, 0.5), [(1, 1)])
    with pytest.raises(ws.ConfigError, match=r"dsts\[1\] must be a"):
        w.route_tree(2, (0, 0), [(1, 1), (2, 1.5)])
    with pytest.raises(ws.ConfigError, match="dsts must be a"):
        w.route_tree(2, (0, 0), 7)
    assert all(w.router(r, c).route(2) == ([], []) for r in range(3) for c in range(3))


def test_host_ports_refuse_fractional_points():
    w = _wafer()
    for at in [(0.5, -1), [(0, -1), (0, 0.5)], np.array([[0.0, -1.0]])]:
        with pytest.raises(ws.ConfigError, match="at"):
            w.inject(at, 1, 5)
        with pytest.raises(ws.ConfigError, match="at"):
            w.stream(at, 1, [1.0])
    assert w.pending_injections == 0


@pytest.mark.parametrize("rect,match", [
    ((0, 0.5), "rect must be a Rect"),
    ((0, 0, 1.0, 1), "rect must be a Rect"),
    ((0, 0, True, 1), "rect must be a Rect"),
    ((np.uint64(2**64 - 1), 0, 1, 1), "reaches outside"),
])
def test_memcpy_rects_are_integers_in_range(rect, match):
    w = ws.Wafer(2, 3)
    w.load(COPY)
    with pytest.raises(ws.ConfigError, match=match):
        w.memcpy_h2d("x", [1, 2], rect=rect)
    with pytest.raises(ws.ConfigError, match=match):
        w.memcpy_d2h("x", rect=rect)
    with pytest.raises(ws.ConfigError, match=match):
        w.launch("main", rect=rect)


def test_rect_fields_are_integers():
    with pytest.raises(ws.ConfigError, match="Rect row must be an integer, got 0.5"):
        ws.Rect(0.5, 0)
    with pytest.raises(ws.ConfigError, match="Rect width must be an integer, got '2'"):
        ws.Rect(0, 0, 1, "2")
    r = ws.Rect(np.int64(1), np.uint8(2), np.int32(1), np.uint64(1))
    assert r == ws.Rect(1, 2) and all(type(v) is int for v in (r.row, r.col, r.height, r.width))


def test_lone_pe_position_is_an_integer_pair():
    with pytest.raises(ws.ConfigError, match="position must be a"):
        ws.pe.LonePE(position=(0.5, 0))
    with pytest.raises(ws.ConfigError, match="position row must be an integer in 0..65535"):
        ws.pe.LonePE(position=(2**40, 0))
    assert ws.pe.LonePE(position=(np.int64(3), 4)).config.row == 3


def test_numpy_integer_coordinates_work_everywhere():
    w = ws.Wafer(2, 3)
    i64, u64, u8 = np.int64, np.uint64, np.uint8
    w.load(COPY, rect=(u8(1), i64(0), u64(1), i64(2)))
    assert w.pe(i64(1), u64(1)).loaded and w.router(u8(1), u64(2)).row == 1
    w.memcpy_h2d("x", [5, 6], rect=ws.Rect(u64(1), i64(1)))
    assert w.memcpy_d2h("x", rect=(i64(1), u8(1))).tolist() == [[[5, 6]]]
    w.route(1, [(u64(0), i64(0)), (0, 1), (0, 2), (u8(0), 3)])
    w.route(5, [(-1, u64(2)), (0, 2), (1, 2), (2, u8(2))])
    w.route_tree(3, (u8(0), u8(0)), (i64(1), u64(0)))
    assert w.router(1, 0).route(3) == (["S"], ["RAMP"])
    assert w.inject(np.array([[0, 0]], np.uint64), 1, 7) == 1
    assert w.stream((-1, u64(2)), 5, [1.5]) == 1  # (Python int, uint64): two integers, not floats
    w.run()
    assert w.collect((i64(0), u64(3))).data.tolist() == [7]
    assert w.collect((u64(2), 2)).values("fp16").tolist() == [1.5]
