"""The cycle loop: watchdog, counters, determinism across threads, active set, host I/O."""

import math

import numpy as np
import pytest

import wafersim as ws
from wafersim.layout import DIR_INDEX


def blocked_chain(watchdog):
    w = ws.Wafer(1, 4, watchdog=watchdog)
    w.route(2, path=[(0, 0), (0, 1), (0, 2), (0, 3)])
    w.set_sink((0, 3), capacity=1)                     # never drains
    w.inject((0, 0), 2, data=np.arange(12))
    return w


def test_watchdog_raises_deadlock_error_listing_every_stuck_router_0306():
    w = blocked_chain(watchdog=40)
    with pytest.raises(ws.DeadlockError) as err:
        w.run()
    e = err.value
    assert "nothing moved for 40 cycles" in str(e) and "[0306]" in str(e)
    rep = e.report
    for c in range(3):
        assert (f"router (0, {c}) color 2: 2/2 queued (stalling its sources); head waits for\n"
                f"    E -> router (0, {c + 1}), which stalls it: its color 2 holds 2/2") in rep
    assert "router (0, 3) color 2: 2/2 queued" in rep
    assert "RAMP: the ramp endpoint stalls color 2" in rep and "sink full (capacity 1)" in rep
    assert "PE (0, 0) ramp: host port: 3 wavelet(s) waiting to enter (colors 2)" in rep
    # the state is consistent: collecting unblocks the sink and the run completes
    w.collect()
    w.set_sink((0, 3), capacity=None)
    assert w.run().quiescent
    assert len(w.collect()) == 11


def test_watchdog_waits_for_the_configured_number_of_idle_cycles():
    w = blocked_chain(watchdog=500)
    with pytest.raises(ws.DeadlockError):
        w.run()
    # 12 wavelets: one reaches the sink after 4 cycles, the chain is full a few cycles later
    assert 500 <= w.cycle <= 500 + 20
    w2 = blocked_chain(watchdog=10**6)
    assert not w2.run(2000).quiescent                  # below the window: no error


def test_scheduled_injections_are_progress_not_deadlock():
    w = ws.Wafer(2, 2, watchdog=50)
    w.route(1, path=[(0, 0), (0, 1)])
    w.inject((0, 0), 1, data=1, cycle=5000)
    s = w.run()
    assert s.quiescent and s.delivered == 1
    a = w.collect()
    assert a.injected[0] == 5000 and a.arrived[0] == 5002


def test_counters_count_links_colors_router_traversals_and_latency():
    w = ws.Wafer(3, 3)
    w.route(1, path=[(0, 0), (0, 1), (0, 2), (1, 2)])
    w.route(2, path=[(0, 1), (0, 2), (1, 2), (2, 2)])
    w.inject((0, 0), 1, data=np.arange(4))
    w.inject((0, 1), 2, data=np.arange(3))
    s = w.run()
    c = w.counters()
    E, N, RAMP = DIR_INDEX["E"], DIR_INDEX["N"], DIR_INDEX["RAMP"]
    assert c.link_counts[0, 0, E] == 4 and c.link_counts[0, 1, E] == 7
    assert c.link_counts[0, 2, N] == 7 and c.link_counts[1, 2, N] == 3
    assert c.link_counts[1, 2, RAMP] == 4 and c.link_counts[2, 2, RAMP] == 3
    assert c.link_color_counts(1)[0, 1, E] == 4 and c.link_color_counts(2)[0, 1, E] == 3
    assert c.link_color_counts(2)[0, 0].sum() == 0
    # router traversals: each wavelet is enqueued once per router on its path
    assert c.router_traversals.sum() == 4 * 4 + 3 * 4
    assert s.injected == s.delivered == 7
    # hop histogram: 4 wavelets of 3 hops and 3 of 3 hops
    assert s.hop_histogram[3] == 7 and s.mean_hops == 3
    lat = w.collect().latency
    assert np.array_equal(np.bincount(lat, minlength=len(s.latency_histogram)),
                          s.latency_histogram)
    assert s.mean_latency == pytest.approx(lat.mean())


def test_occupancy_counters_see_the_distributed_queue_0300():
    w = blocked_chain(watchdog=10**6)
    w.run(300)
    c = w.counters()
    assert list(c.occupancy_max[0]) == [2, 2, 2, 2]
    assert np.all(c.occupancy_mean[0] > 1.9)            # full for almost all 300 cycles
    w.reset_counters()
    w.run(100)
    c = w.counters()
    assert c.cycles == 100 and c.link_counts.sum() == 0
    assert c.occupancy_mean[0] == pytest.approx([2, 2, 2, 2])


def test_energy_counts_router_traversals_and_wire_pitches_with_assumed_weights():
    # The patent's corner example at equal router and wire weight: 7 + 6 = 13 units on the
    # mesh, 4 + 3*sqrt(2) on diagonals [0002], [0026]; 4 + 3*2 for zig-zag wires [0027].
    mesh = ws.Wafer(4, 4)
    mesh.route_tree(1, (0, 0), [(3, 3)])
    diag = ws.Wafer(4, 4, "mesh+diag")
    diag.route_tree(1, (0, 0), [(3, 3)], "diag_first")
    for w in (mesh, diag):
        w.inject((0, 0), 1, data=0)
        w.run()
    assert mesh.counters().energy().total == pytest.approx(13.0)
    d = diag.counters()
    assert d.energy().total == pytest.approx(4 + 3 * math.sqrt(2))
    assert d.energy(diag_wire="zigzag").total == pytest.approx(10.0)
    e = d.energy(e_router=2.0, e_wire_per_pitch=0.5)
    assert e.router == pytest.approx(8.0) and e.wire == pytest.approx(1.5 * math.sqrt(2))


def traffic_wafer(threads, mode):
    # Big and busy enough that the phases run in parallel (at least 512 active routers).
    rng = np.random.default_rng(5)
    if mode == "packets":
        w = ws.Wafer(32, 32, "mesh+diag", mode="packets", threads=threads)
        n = 30000
        src = rng.integers(0, 32, (n, 2))
        dst = rng.integers(0, 32, (n, 2))
        w.inject(src, 0, data=np.arange(n), dest=dst, cycle=rng.integers(0, 300, n))
    else:
        w = ws.Wafer(32, 32, "mesh+diag", threads=threads)
        for color in range(24):
            src = (int(rng.integers(32)), int(rng.integers(32)))
            dsts = [tuple(p) for p in rng.integers(0, 32, (40, 2))]
            w.route_tree(color, src, dsts, "diag_first")
            w.inject(src, color, data=np.arange(400), cycle=rng.integers(0, 300, 400))
    return w


@pytest.mark.parametrize("mode", ["packets", "colors"])
def test_results_and_cycle_counts_are_identical_for_one_and_two_threads(mode):
    runs = []
    for threads in (1, 2):
        w = traffic_wafer(threads, mode)
        assert w.threads == threads
        s = w.run()
        assert s.router_cycles / s.cycles > 512          # the parallel path was taken
        runs.append((s, w.collect(), w.counters()))
    (s1, a1, c1), (s2, a2, c2) = runs
    assert s1.cycles == s2.cycles and s1.moves == s2.moves and s1.delivered == s2.delivered
    assert np.array_equal(s1.latency_histogram, s2.latency_histogram)
    for f in ("row", "col", "color", "data", "hops", "injected", "arrived"):
        assert np.array_equal(getattr(a1, f), getattr(a2, f)), f
    assert np.array_equal(c1.link_counts, c2.link_counts)
    assert np.array_equal(c1.occupancy_sum, c2.occupancy_sum)


def test_idle_routers_cost_nothing_active_set():
    w = ws.Wafer(64, 64)
    w.route(1, path=[(0, c) for c in range(64)])
    w.inject((0, 0), 1, data=1)
    s = w.run()
    # 64 routers handle the wavelet, each for a cycle or two; 4096 * 65 if all ran
    assert s.cycles == 65 and s.router_cycles <= 3 * 64


def test_packet_mode_routes_each_wavelet_by_its_destination():
    w = ws.Wafer(5, 6, "mesh+diag", mode="packets")
    assert w.packet_routing == "diag_first"
    src = [(0, 0), (4, 5), (2, 3), (1, 1)]
    dst = [(4, 5), (0, 0), (2, 3), (3, 0)]
    w.inject(src, 0, data=np.arange(4), dest=dst, cycle=[0, 100, 200, 300])
    w.run()
    a = w.collect()
    for i, (s, d) in enumerate(zip(src, dst)):
        k = np.flatnonzero(a.data == i)[0]
        assert (a.row[k], a.col[k]) == d
        hops = max(abs(d[0] - s[0]), abs(d[1] - s[1]))   # Chebyshev [0039]
        assert a.hops[k] == hops and a.latency[k] == hops + 1
    xy = ws.Wafer(5, 6, "mesh+diag", mode="packets", packet_routing="xy")
    xy.inject((0, 0), 0, data=1, dest=(4, 5))
    xy.run()
    assert xy.collect().hops[0] == 9


def test_packet_mode_delivers_every_packet_under_heavy_uniform_load():
    w = ws.Wafer(8, 8, "mesh", mode="packets")
    rng = np.random.default_rng(1)
    n = 5000
    src = rng.integers(0, 8, (n, 2))
    dst = rng.integers(0, 8, (n, 2))
    release = rng.integers(0, 100, n)
    w.inject(src, 0, data=np.arange(n), dest=dst, cycle=release)
    s = w.run()
    a = w.collect()
    assert s.delivered == n and sorted(a.data) == list(range(n))
    by_data = np.argsort(a.data)
    assert np.array_equal(np.stack([a.row, a.col], 1)[by_data], dst)
    # deterministic routing keeps each (source, destination) pair in order
    arrived = a.arrived[by_data]
    key = (src[:, 0] * 8 + src[:, 1]) * 64 + dst[:, 0] * 8 + dst[:, 1]
    checked = 0
    for k in np.unique(key):
        idx = np.flatnonzero(key == k)
        if len(idx) < 2:
            continue
        idx = idx[np.lexsort((idx, release[idx]))]     # the source's FIFO order
        assert np.all(np.diff(arrived[idx]) > 0)
        checked += 1
    assert checked > 500


def test_inject_validates_arrays_and_names_the_field():
    w = ws.Wafer(4, 4)
    w.route(1, path=[(0, 0), (0, 1)])
    with pytest.raises(ws.ConfigError, match=r"at must be .*shape \(2, 3\)"):
        w.inject(np.zeros((2, 3), int), 1)
    with pytest.raises(ws.ConfigError, match="at must be"):
        w.inject(np.zeros((2, 2)), 1)                     # floats are not coordinates
    with pytest.raises(ws.ConfigError, match=r"at\[0\] = \(7, 7\) is neither inside"):
        w.inject((7, 7), 1)
    with pytest.raises(ws.ConfigError, match="data must be in 0..4294967295"):
        w.inject((0, 0), 1, data=2**32)
    with pytest.raises(ws.ConfigError, match="data must be integers"):
        w.inject((0, 0), 1, data=1.5)
    with pytest.raises(ws.ConfigError, match="index must be in 0..65535"):
        w.inject((0, 0), 1, index=-1)
    with pytest.raises(ws.ConfigError, match="one length"):
        w.inject([(0, 0), (0, 0)], 1, data=[1, 2, 3])
    with pytest.raises(ws.ConfigError, match=r"color 30 is not a fabric color"):
        w.inject((0, 0), 30)
    with pytest.raises(ws.ConfigError, match="dest is only for mode='packets'"):
        w.inject((0, 0), 1, dest=(1, 1))
    assert w.pending_injections == 0                     # nothing half-injected
    w.inject((1, 1), 2, data=3)                          # no route takes color 2 there
    with pytest.raises(ws.RouteError, match=r"color 2 wait at the ramp of router \(1, 1\)"):
        w.run()
    p = ws.Wafer(4, 4, mode="packets")
    with pytest.raises(ws.ConfigError, match="needs dest"):
        p.inject((0, 0), 0)
    with pytest.raises(ws.ConfigError, match="route"):
        p.route(1, path=[(0, 0), (0, 1)])


@pytest.mark.parametrize("kwargs,match", [
    (dict(rows=0, cols=4), "rows must be in"),
    (dict(rows=4, cols=4, topology="torus"), "topology must be one of"),
    (dict(rows=4, cols=4, colors=5), r"colors .* must be in 8..32"),
    (dict(rows=4, cols=4, queue_depth=0), "queue_depth must be in"),
    (dict(rows=4, cols=4, diag_hop_cycles=3), "diag_hop_cycles must be in"),
    (dict(rows=4, cols=4, scheduler="fifo"), "scheduler must be"),
    (dict(rows=4, cols=4, skip=1), "skip must be"),
    (dict(rows=1, cols=4, loop=True), "loop links need"),
    (dict(rows=4, cols=4, threads=0), "threads must be in"),
    (dict(rows=4, cols=4, watchdog=0), "watchdog must be in"),
    (dict(rows=4, cols=4, mode="packets", packet_routing="diag_first"), "needs diagonal links"),
    (dict(rows=4, cols=4, mode="packets", skip=2), "skip=0"),
    (dict(rows=4, cols=4, mode="wormhole"), "mode must be one of"),
    (dict(rows=4.0, cols=4), "rows must be an integer"),
])
def test_bad_wafer_configurations_raise_config_error(kwargs, match):
    with pytest.raises(ws.ConfigError, match=match):
        ws.Wafer(**kwargs)
