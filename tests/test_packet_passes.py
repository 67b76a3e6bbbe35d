"""Packet mode has two cycle passes (docs/fabric.md, "Packet mode"): a general one, and one on
bit planes for the default queues (depth 2, no skid entry), which schedules a whole row with
word operations. They are written independently; on the same traffic they must agree on
everything a user can see: every arrival and its cycle, the run statistics, the counters,
and the queues and stall bits between runs (which the bit-plane pass keeps in its own form
during a run). Round-robin pointers and queue positions carry over from one pass to the
other when a simulation switches between them.
"""

import numpy as np
import pytest

import wafersim as ws
from wafersim.noc import traffic


def _snapshot(w):
    """Everything observable between runs, as plain Python values."""
    a = w.collect()
    arrivals = sorted(zip(*(np.asarray(getattr(a, k)).tolist() for k in
                            ("row", "col", "color", "data", "hops", "injected", "arrived"))))
    c = w.counters()
    routers = []
    for r in range(w.rows):
        for col in range(w.cols):
            rid = r * w.cols + col
            state = w._core.router_state(rid)
            queues = {k: list(w._core.queue(rid, k)) for k in sorted(state["occupancy"])}
            routers.append((dict(state["occupancy"]), state["stall_out"], queues))
    return {
        "arrivals": arrivals,
        "links": np.asarray(c.link_counts).tolist(),
        "traversals": np.asarray(c.router_traversals).tolist(),
        "occupancy": [np.asarray(x).tolist() for x in w._core.occupancy()],
        "routers": routers,
        "cycle": w.cycle,
        "queued": w.queued,
    }


def _stats(s):
    return (s.start_cycle, s.cycles, s.quiescent, s.moves, s.injected, s.delivered,
            s.router_cycles, s.latency_histogram.tolist(), s.hop_histogram.tolist())


def _simulate(planes, rows, cols, topo, routing, pattern, rate, cycles, runs, sinks=(),
              threads=1, switch=False):
    """Runs `runs` (cycle counts; None: to the end) and snapshots after each."""
    tr = traffic.bernoulli(pattern, rows, cols, rate, cycles, seed=11) if pattern != "mixed" \
        else traffic.bernoulli("uniform", rows, cols, rate, cycles, seed=11)
    w = ws.Wafer(rows, cols, topo, mode="packets", packet_routing=routing, threads=threads)
    used = w._core.set_packet_bit_planes(planes)
    color = np.arange(len(tr)) % 3 if pattern == "mixed" else 0
    if pattern == "mixed":
        for k in range(3):
            sel = color == k
            w.inject(tr.src[sel], k, data=np.flatnonzero(sel), dest=tr.dst[sel],
                     cycle=tr.cycle[sel])
    else:
        w.inject(tr.src, 0, data=np.arange(len(tr)), dest=tr.dst, cycle=tr.cycle)
    for at, capacity, drain in sinks:
        w.set_sink(at, capacity=capacity, drain_period=drain)
    out = []
    for i, n in enumerate(runs):
        if switch:
            w._core.set_packet_bit_planes(i % 2 == 0)
        out.append((_stats(w.run(n) if n is not None else w.run()), _snapshot(w)))
    return used, out


CASES = {
    # name: rows, cols, topology, routing, pattern, rate, cycles, runs, sinks
    "mesh_xy_light": (16, 16, "mesh", "xy", "uniform", 0.05, 300, [120, 90, None], ()),
    "mesh_xy_saturated": (16, 16, "mesh", "xy", "uniform", 0.3, 150, [60, 100], ()),
    "mesh_transpose": (12, 12, "mesh", "xy", "transpose", 0.2, 120, [80, None], ()),
    "diag_first": (12, 12, "mesh+diag", "diag_first", "uniform", 0.15, 200, [75, None], ()),
    "one_family": (9, 12, "mesh+diag_ne", "diag_first", "uniform", 0.15, 200, [75, None], ()),
    "diag_fabric_xy": (10, 10, "mesh+diag", "xy", "hotspot", 0.1, 150, [None], ()),
    # rows of 130 routers: three words per plane, the last one partly used
    "wide_rows": (5, 130, "mesh", "xy", "uniform", 0.08, 150, [70, None], ()),
    "wide_rows_diag": (4, 70, "mesh+diag", "diag_first", "uniform", 0.1, 120, [50, None], ()),
    # sinks that hold wavelets stall the off-ramp by color [0330]; three colors share it
    "slow_sinks": (8, 8, "mesh", "xy", "mixed", 0.2, 150,
                   [40, 70, None], (((3, 3), 1, 4), ((5, 1), 2, 3), ((0, 7), 1, 9))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bit_plane_pass_matches_the_general_pass(name):
    rows, cols, topo, routing, pattern, rate, cycles, runs, sinks = CASES[name]
    args = (rows, cols, topo, routing, pattern, rate, cycles, runs, sinks)
    used, planes = _simulate(True, *args)
    unused, general = _simulate(False, *args)
    assert used and not unused
    assert planes[-1][1]["arrivals"], "the case must carry traffic"
    for i, (p, g) in enumerate(zip(planes, general)):
        assert p[0] == g[0], f"run {i}: statistics differ"
        for key in g[1]:
            assert p[1][key] == g[1][key], f"run {i}: {key} differs"


@pytest.mark.parametrize("threads", [1, 2])
def test_switching_passes_between_runs_carries_queues_and_round_robin_over(threads):
    # Saturated traffic keeps queues full and schedulers choosing at every switch.
    args = (12, 12, "mesh+diag", "diag_first", "uniform", 0.3, 200, [30, 25, 40, 35, None], ())
    _, switched = _simulate(True, *args, threads=threads, switch=True)
    _, general = _simulate(False, *args, threads=threads)
    assert [s for s, _ in switched] == [s for s, _ in general]
    assert [snap for _, snap in switched] == [snap for _, snap in general]


def test_bit_plane_pass_applies_to_the_default_queues_only():
    # A skid entry (2-cycle diagonals) or another depth keeps the general pass.
    assert ws.Wafer(4, 4, mode="packets")._core.set_packet_bit_planes(True)
    assert not ws.Wafer(4, 4, mode="packets", queue_depth=3)._core.set_packet_bit_planes(True)
    assert not ws.Wafer(4, 4, "mesh+diag", mode="packets",
                        diag_hop_cycles=2)._core.set_packet_bit_planes(True)
    assert not ws.Wafer(4, 4)._core.set_packet_bit_planes(True)  # color routing


def test_both_passes_report_the_same_deadlock():
    # A sink that drains only when the host collects fills up and stalls the fabric; the
    # watchdog's report reads the queues, which the bit-plane pass writes back first.
    reports = []
    for planes in (True, False):
        tr = traffic.bernoulli("uniform", 6, 6, 0.2, 100, seed=2)
        w = ws.Wafer(6, 6, mode="packets", watchdog=50)
        w._core.set_packet_bit_planes(planes)
        w.inject(tr.src, 0, data=np.arange(len(tr)), dest=tr.dst, cycle=tr.cycle)
        w.set_sink((2, 3), capacity=1, drain_period=0)
        with pytest.raises(ws.DeadlockError) as err:
            w.run()
        reports.append((str(err.value), w.cycle, _snapshot(w)))
    assert "(2, 3)" in reports[0][0]
    assert reports[0] == reports[1]
