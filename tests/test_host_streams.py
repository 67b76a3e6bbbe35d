"""Host streams into and out of any PE's compute element (docs/fabric.md, "Host streams"):
wavelets enter a CE's input queue as if its router had sent them down the off-ramp (in
order, only while the CE does not stall the color [0329], [0330]), and what a CE sends on
a captured color goes to the host instead of its router."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import wafersim as ws

X, Y = 3, 8

# Receives n values of X into buf (a foreground vector read), then sends 2 x buf on Y.
RECEIVER = f"""
.data
buf:    .space fp16, {{n}}
fin:    .dsd fabric_in, length={{n}}, sw=1, sc=1, ch={X >> 3}, utid={X & 7}
dbuf:   .dsd mem1d, base=buf, length={{n}}, stride=2
yout:   .dsd fabric_out, color={Y}, length={{n}}, sw=1
.export buf
.code
.task main, 40
main:   block {X}
        lds1wds S1[1], fin
        lddwds  D[1], dbuf
        mov16   D[1], S1[1]
        lds0wds S0[2], dbuf
        lds1wds S1[2], dbuf
        lddwds  D[2], yout
        faddh.t D[2], S0[2], S1[2]
"""


def start(w, rect=None):
    """Launches main and lets it block X before anything arrives (X has no task)."""
    w.launch("main", rect=rect)
    w.run(max_cycles=4)


def test_stream_into_an_interior_pe_without_any_route():
    n = 20  # more than the CE's input queue holds: the stream waits for room [0329]
    w = ws.Wafer(3, 3)
    w.pe(1, 1).load(RECEIVER.format(n=n))
    w.capture(Y, rect=(1, 1))
    x = np.arange(n, dtype=np.float16) - 7
    start(w)
    assert w.stream_h2d(X, x, rect=(1, 1)) == n
    stats = w.run()
    assert np.array_equal(w.memcpy_d2h("buf", rect=(1, 1))[0, 0], x)
    assert np.array_equal(w.stream_d2h(Y, rect=(1, 1))[0, 0], x + x)
    assert stats.delivered == 0 and w.counters().link_counts.sum() == 0  # no router involved
    assert stats.pes[(1, 1)]["wavelets_in"] == n


def test_stream_fills_a_rectangle_in_row_major_order():
    n = 4
    w = ws.Wafer(3, 4)
    rect = (0, 1, 3, 3)
    w.load(RECEIVER.format(n=n), rect=rect)
    w.capture(Y, rect=rect)
    flat = np.arange(9 * n, dtype=np.float16)
    start(w)
    w.stream_h2d(X, flat, rect=rect)  # flat: PE (0, 1) gets the first n, (0, 2) the next
    w.run()
    want = flat.reshape(3, 3, n)
    assert np.array_equal(w.memcpy_d2h("buf", rect=rect), want)
    assert np.array_equal(w.stream_d2h(Y, rect=rect), want + want)
    # the same with an array shaped like the rectangle
    start(w, rect)
    w.stream_h2d(X, -want, rect=rect)
    w.run()
    assert np.array_equal(w.stream_d2h(Y, rect=rect), -(want + want))


@settings(deadline=None, max_examples=15)
@given(n=st.integers(1, 24), gap=st.integers(0, 3), depth=st.integers(2, 8))
def test_host_stream_and_router_deliveries_share_a_queue_without_overflow(n, gap, depth):
    """The router and the host feed the same color of one CE; the CE's stall covers both
    (two free entries when it is clear), so nothing is lost and each source stays in order."""
    w = ws.Wafer(1, 2, ce={"input_queue_depth": depth})
    w.pe(0, 1).load(RECEIVER.format(n=2 * n))
    w.route(X, [(0, 0), (0, 1)])
    w.capture(Y, rect=(0, 1))
    routed = np.arange(n, dtype=np.float16)
    fed = 100 + np.arange(n, dtype=np.float16)
    start(w)
    w.stream((0, 0), X, routed, cycle=w.cycle + gap * np.arange(n))
    w.stream_h2d(X, fed, rect=(0, 1))
    w.run()
    got = w.memcpy_d2h("buf", rect=(0, 1))[0, 0]
    assert np.array_equal(got[got < 100], routed)
    assert np.array_equal(got[got >= 100], fed)


def test_captured_colors_leave_the_ce_without_entering_the_router():
    n = 6
    w = ws.Wafer(2, 2)
    w.pe(0, 0).load(RECEIVER.format(n=n))
    w.route(Y, [(0, 0), (0, 1)])  # routed too: capture takes precedence while it is on
    w.capture(Y, rect=(0, 0))
    start(w)
    w.stream_h2d(X, np.ones(n), rect=(0, 0))
    w.run()
    assert len(w.collect()) == 0
    assert np.array_equal(w.stream_d2h(Y, rect=(0, 0)), np.full((1, 1, n), 2, np.float16))
    # switched off, the same program's output goes through the router again
    w.capture(Y, rect=(0, 0), on=False)
    start(w)
    w.stream_h2d(X, np.ones(n), rect=(0, 0))
    w.run()
    assert np.array_equal(w.collect((0, 1)).values(color=Y), np.full(n, 2, np.float16))


def test_stream_d2h_refuses_unequal_counts_and_takes_nothing():
    w = ws.Wafer(1, 2)
    w.pe(0, 0).load(RECEIVER.format(n=2))
    w.pe(0, 1).load(RECEIVER.format(n=3))
    w.capture(Y, rect=(0, 0, 1, 2))
    start(w)
    w.stream_h2d(X, np.ones(2), rect=(0, 0))
    w.stream_h2d(X, np.ones(3), rect=(0, 1))
    w.run()
    with pytest.raises(ws.ConfigError, match=r"PE \(0, 0\): 2, PE \(0, 1\): 3"):
        w.stream_d2h(Y, rect=(0, 0, 1, 2))
    assert w.stream_d2h(Y, rect=(0, 0)).shape == (1, 1, 2)
    assert w.stream_d2h(Y, rect=(0, 1)).shape == (1, 1, 3)
    assert w.stream_d2h(Y, rect=(0, 1)).shape == (1, 1, 0)  # taken


def test_a_stream_the_ce_never_reads_is_a_reported_deadlock():
    w = ws.Wafer(1, 1, watchdog=200)
    w.pe(0, 0).load(f".code\n.task main, 40\nmain: block {X}\n term")
    start(w)
    w.stream_h2d(X, np.arange(10), rect=(0, 0))
    waiting = r"host stream: \d+ wavelet\(s\) waiting to enter \(colors 3\)"
    with pytest.raises(ws.DeadlockError, match=waiting):
        w.run()
    with pytest.raises(ws.ConfigError, match="host streams still to enter"):
        w.pe(0, 0).load(RECEIVER.format(n=1))


def test_host_stream_errors_name_what_is_wrong():
    w = ws.Wafer(2, 2)
    w.pe(0, 0).load(RECEIVER.format(n=2))
    with pytest.raises(ws.ConfigError, match=r"PE \(1, 1\) has no program"):
        w.stream_h2d(X, [1, 2], rect=(1, 1))
    with pytest.raises(ws.ConfigError, match=r"PE \(0, 1\) has no program"):
        w.capture(Y, rect=(0, 0, 1, 2))
    with pytest.raises(ws.ConfigError, match="local color"):
        w.stream_h2d(40, [1, 2], rect=(0, 0))
    with pytest.raises(ws.ConfigError, match=r"values must have shape \(2, 2, 'n'\)"):
        w.stream_h2d(X, [1, 2, 3], rect=(0, 0, 2, 2))
    with pytest.raises(ws.ConfigError, match="index must be in 0..65535"):
        w.stream_h2d(X, [1, 2], rect=(0, 0), index=[0, 70000])
    with pytest.raises(ws.ConfigError, match="ctrl has shape"):
        w.stream_h2d(X, [1, 2], rect=(0, 0), ctrl=[0, 1, 0])
    assert w.pe(0, 0).idle  # nothing was queued by the failed calls
    # uncollected output blocks a reload, so it is not lost silently
    w.capture(Y, rect=(0, 0))
    start(w)
    w.stream_h2d(X, [1, 2], rect=(0, 0))
    w.run()
    with pytest.raises(ws.ConfigError, match=r"sent 2 wavelet\(s\) to the host that were not taken"):
        w.pe(0, 0).load(RECEIVER.format(n=2))
    w.stream_d2h(Y, rect=(0, 0))
    w.pe(0, 0).load(RECEIVER.format(n=2))  # capture lasts across the reload
    start(w)
    w.stream_h2d(X, [1, 2], rect=(0, 0))
    w.run()
    assert w.stream_d2h(Y, rect=(0, 0)).tolist() == [[[2.0, 4.0]]]
