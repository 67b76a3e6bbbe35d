"""Injecting no data at one point injects nothing and returns 0 (no "all columns must have
the same length" error), after checking the point and the lengths as usual."""

import numpy as np
import pytest

import wafersim as ws


def test_inject_and_stream_of_no_data_at_one_point_inject_nothing():
    w = ws.Wafer(2, 2)
    w.route(1, [(0, -1), (0, 0)])
    assert w.inject((0, 0), 1, []) == 0
    assert w.inject((0, -1), 1, np.array([], np.uint32), index=[]) == 0
    assert w.stream((0, -1), 1, []) == 0
    assert w.stream((0, -1), 1, np.zeros(0, np.float16), dtype="fp16", sw=2) == 0
    assert w.pending_injections == 0
    assert w.run().quiescent


def test_empty_data_still_checks_the_point_and_the_lengths():
    w = ws.Wafer(2, 2)
    with pytest.raises(ws.ConfigError, match=r"at\[0\] = \(5, 5\) is neither inside"):
        w.stream((5, 5), 1, [])
    with pytest.raises(ws.ConfigError, match="one length"):
        w.inject([(0, 0), (1, 1)], 1, [])


def test_packet_mode_inject_of_no_data_injects_nothing():
    w = ws.Wafer(2, 2, mode="packets")
    assert w.inject((0, 0), 0, [], dest=(1, 1)) == 0
    with pytest.raises(ws.ConfigError, match="dest has 2 points for 3 wavelets"):
        w.inject((0, 0), 0, [1, 2, 3], dest=[(1, 1), (0, 1)])
