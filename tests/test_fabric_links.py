"""Links and their timing: mesh, skip, loop and diagonal links, edge ports (seeds 000, 003)."""

import itertools

import numpy as np
import pytest

import wafersim as ws
from wafersim.layout import DIRECTIONS


def one_wavelet_latency(w, path, color=1):
    w.route(color, path=path)
    w.inject(path[0], color, data=7)
    w.run()
    a = w.collect()
    assert len(a) == 1
    return int(a.latency[0]), int(a.hops[0])


def test_every_mesh_hop_takes_one_cycle_0294():
    for n in (1, 2, 5, 9):
        w = ws.Wafer(1, 10)
        lat, hops = one_wavelet_latency(w, [(0, c) for c in range(n + 1)])
        # on-ramp offer -> one cycle per router traversed -> off-ramp: hops + 1
        assert (lat, hops) == (n + 1, n)
    w = ws.Wafer(6, 1)
    assert one_wavelet_latency(w, [(r, 0) for r in range(6)]) == (6, 5)


def test_skip_links_join_columns_skip_apart_in_one_cycle_0294_0296():
    w = ws.Wafer(1, 9, skip=4)
    assert one_wavelet_latency(w, [(0, 0), (0, 4), (0, 8)]) == (3, 2)
    # only every skip-th column has skip links
    w = ws.Wafer(1, 9, skip=4)
    with pytest.raises(ws.RouteError, match=r"no link from \(0, 1\) to \(0, 5\)"):
        w.route(1, path=[(0, 1), (0, 5)])


def test_skip_overhead_is_entry_plus_exit_hops_as_in_the_0296_example():
    # [0296]: with skips of N PEs, entering the first skip and leaving the last cost at most
    # N-1 hops each. A 1x21 row with skip=5, from column 1 to column 19:
    # 4 hops east to column 5, skips 5->10->15, 4 hops to 19: 10 hops, 11 cycles.
    w = ws.Wafer(1, 21, skip=5)
    p = [(0, c) for c in range(1, 6)] + [(0, 10), (0, 15)] + [(0, c) for c in range(16, 20)]
    lat, hops = one_wavelet_latency(w, p)
    assert hops == 4 + 2 + 4 and lat == hops + 1
    assert lat - 1 - 2 <= 2 * (5 - 1)                 # the overhead bound of [0296]


def test_loop_links_join_the_bottom_and_top_of_each_column_in_one_cycle_0297():
    w = ws.Wafer(4, 2, loop=True)
    assert w.topology.neighbour(3, 1, "N") == (0, 1)
    assert w.topology.neighbour(0, 1, "S") == (3, 1)
    assert one_wavelet_latency(w, [(3, 1), (0, 1)]) == (2, 1)
    # a ring broken at one router: down the column through the loop link
    w = ws.Wafer(4, 1, loop=True)
    assert one_wavelet_latency(w, [(2, 0), (3, 0), (0, 0), (1, 0)]) == (4, 3)


def test_diagonal_links_cut_the_patent_corner_example_to_3_hops_and_4_routers_0002_0026():
    mesh = ws.Wafer(4, 4)
    lat_m, hops_m = one_wavelet_latency(mesh, ws.layout.path(mesh.topology, (0, 0), (3, 3), "xy"))
    diag = ws.Wafer(4, 4, "mesh+diag")
    lat_d, hops_d = one_wavelet_latency(diag, [(0, 0), (1, 1), (2, 2), (3, 3)])
    assert (hops_m, lat_m) == (6, 7)      # 6 hops, 7 routers traversed
    assert (hops_d, lat_d) == (3, 4)      # 3 diagonal hops, 4 routers [0002]
    # (0,0)->(2,2): two diagonal hops instead of four [0027]
    w = ws.Wafer(4, 4, "mesh+diag")
    assert one_wavelet_latency(w, [(0, 0), (1, 1), (2, 2)])[1] == 2


def test_two_cycle_diagonal_hops_cost_one_extra_cycle_each():
    w = ws.Wafer(4, 4, "mesh+diag", diag_hop_cycles=2)
    assert one_wavelet_latency(w, [(0, 0), (1, 1), (2, 2), (3, 3)]) == (3 * 2 + 1, 3)
    w = ws.Wafer(4, 4, "mesh+diag", diag_hop_cycles=2)
    assert one_wavelet_latency(w, [(0, 0), (1, 1), (1, 2), (1, 3)]) == (2 + 1 + 1 + 1, 3)


@pytest.mark.parametrize("step", [1, 2, 3, 5])
def test_a_wavelet_on_a_two_cycle_diagonal_link_survives_the_end_of_a_run(step):
    # Runs of a few cycles at a time must give the same arrival as one long run: a wavelet
    # still on a 2-cycle link when a run ends arrives in the next run (3 hops: 3 * 2 + 1).
    w = ws.Wafer(4, 4, "mesh+diag", diag_hop_cycles=2)
    w.route(2, path=[(0, 0), (1, 1), (2, 2), (3, 3)])
    w.inject((0, 0), 2, data=5)
    for _ in range(20):
        s = w.run(step)
        if s.quiescent:
            break
    a = w.collect()
    assert list(a.data) == [5] and list(a.arrived) == [7] and list(a.hops) == [3]
    assert w.counters().router_traversals.sum() == 4


def test_one_diagonal_family_only_0032():
    ne = ws.Wafer(3, 3, "mesh+diag_ne")
    assert ne.topology.neighbour(0, 0, "NE") == (1, 1)
    assert ne.topology.neighbour(0, 1, "NW") is None
    with pytest.raises(ws.RouteError, match="no link"):
        ne.route(1, path=[(0, 1), (1, 0)])
    nw = ws.Wafer(3, 3, "mesh+diag_nw")
    assert nw.topology.neighbour(0, 1, "NW") == (1, 0)
    assert nw.topology.neighbour(0, 0, "NE") is None


def test_two_cycle_diagonals_get_a_skid_entry_and_never_overflow():
    w = ws.Wafer(4, 4, "mesh+diag", diag_hop_cycles=2)
    assert w._core.capacity == 3 and w._core.stall_threshold == 1
    assert ws.Wafer(4, 4, "mesh+diag")._core.capacity == 2
    # Stream over two 2-cycle links into a sink that takes one wavelet per 3 cycles: queues
    # fill to depth+1 at most, nothing is lost or reordered.
    w.route(2, path=[(0, 0), (1, 1), (2, 2)])
    w.set_sink((2, 2), capacity=1, drain_period=3)
    w.inject((0, 0), 2, data=np.arange(60))
    w.run()
    got = w.collect((2, 2))
    assert list(got.data) == list(range(60))
    assert w.counters().occupancy_max.max() <= 3


def test_two_cycle_diagonal_links_still_stream_one_wavelet_per_cycle():
    w = ws.Wafer(4, 4, "mesh+diag", diag_hop_cycles=2)
    w.route(2, path=[(0, 0), (1, 1), (2, 2), (3, 3)])
    w.inject((0, 0), 2, data=np.arange(30))
    w.run()
    a = w.collect((3, 3))
    assert a.arrived[0] == 7 and np.all(np.diff(a.arrived) == 1)


def test_edge_ports_inject_and_collect_at_the_border_0285_0095():
    w = ws.Wafer(2, 4)
    w.route(2, path=[(0, -1), (0, 0), (0, 1), (0, 2), (0, 3), (0, 4)])   # west edge -> east edge
    w.inject((0, -1), 2, data=np.arange(3))
    w.run()
    a = w.collect((0, 4))
    assert list(a.data) == [0, 1, 2]
    assert list(a.port_name) == ["E"] * 3 and list(a.row) == [0] * 3 and list(a.col) == [3] * 3
    assert a.latency[0] == 4 and a.hops[0] == 3          # 4 routers traversed
    assert w.router(0, 0).route(2) == (["W"], ["E"])
    # north edge of a 2-row fabric is next to row 1
    w.route(3, path=[(1, 2), (2, 2)])
    w.inject((1, 2), 3, data=9)
    w.run()
    assert list(w.collect((2, 2)).port_name) == ["N"]


def test_loop_links_replace_the_north_and_south_edge_ports():
    w = ws.Wafer(3, 3, loop=True)
    with pytest.raises(ws.ConfigError, match="edge port"):
        w.inject((3, 0), 1, data=1)
    assert w.topology.edge_port((0, -1)) == ((0, 0), "W")


def _expected_neighbour(rows, cols, ne, nw, skip, loop, r, c, d):
    """The link rules written out independently: mesh [0294], skip links between columns c
    and c + skip when c % skip == 0 [0296], vertical wrap links [0297], diagonal families
    [0032]."""
    steps = {"E": (0, 1), "W": (0, -1), "N": (1, 0), "S": (-1, 0),
             "NE": (1, 1), "SW": (-1, -1), "NW": (1, -1), "SE": (-1, 1)}
    if d == "RAMP":
        return None
    if d in ("SKIP_E", "SKIP_W"):
        cc = c + skip if d == "SKIP_E" else c - skip
        return (r, cc) if skip and c % skip == 0 and 0 <= cc < cols else None
    if d in ("NE", "SW") and not ne or d in ("NW", "SE") and not nw:
        return None
    rr, cc = r + steps[d][0], c + steps[d][1]
    if d in ("N", "S") and loop:
        rr %= rows
    return (rr, cc) if 0 <= rr < rows and 0 <= cc < cols else None


@pytest.mark.parametrize("topology,skip,loop", [("mesh", 0, False), ("mesh+diag", 3, True),
                                                ("mesh+diag_ne", 0, True), ("mesh+diag_nw", 2, False)])
def test_the_core_topology_links_as_the_seeds_describe_0032_0294_0297(topology, skip, loop):
    w = ws.Wafer(5, 7, topology, skip=skip, loop=loop)
    ne, nw = ws.layout.TOPOLOGIES[topology]
    for r, c in itertools.product(range(5), range(7)):
        for d in DIRECTIONS:
            expect = _expected_neighbour(5, 7, ne, nw, skip, loop, r, c, d)
            assert w.topology.neighbour(r, c, d) == expect, (r, c, d)