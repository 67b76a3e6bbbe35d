"""The topology and the routes as the core describes them, and the wafer's public members
for tools that work out their own routes (add_routes, routed_colors) and read the compute
elements' configuration (ce_config, ce_trace, ce_profile)."""

import pickle

import numpy as np
import pytest

import wafersim as ws
from wafersim.layout import DIRECTIONS, Topology, direction_mask

COUNT = """
.code
.task main, 40
main: movi r1, 3
      movi r2, 4
      term
"""


def test_topology_is_the_cores_bound_by_keyword_and_immutable():
    t = Topology.named(3, 4, "mesh+diag_ne", skip=2, loop=True)
    assert (t.rows, t.cols, t.diag_ne, t.diag_nw, t.skip, t.loop) == (3, 4, True, False, 2, True)
    assert t.kind == "mesh+diag_ne" and t.describe() == "3x4 mesh+diag_ne, skip 2, loop"
    assert isinstance(t, ws._extension.core.fabric.Topology)
    assert t == Topology(3, 4, True, False, 2, True) and hash(t) == hash(Topology(3, 4, True, False, 2, True))
    assert t != Topology(3, 4, True, False, 2, False)
    assert pickle.loads(pickle.dumps(t)) == t
    with pytest.raises(AttributeError):
        t.rows = 5
    assert ws.Wafer(3, 4, "mesh+diag_ne", skip=2, loop=True).topology == t


@pytest.mark.parametrize("kwargs,match", [
    (dict(rows=0, cols=3), "rows must be in 1..65536, got 0"),
    (dict(rows="3", cols=3), "rows must be an integer"),
    (dict(rows=3, cols=3, skip=1), "skip must be 0"),
    (dict(rows=3, cols=3, loop="yes"), "loop must be True or False"),
    (dict(rows=1, cols=3, loop=True), "loop links need at least 2 rows"),
    (dict(rows=3, cols=3, diag_hop_cycles=3), "diag_hop_cycles must be 1 or 2"),
])
def test_a_bad_topology_raises_a_config_error_naming_the_field(kwargs, match):
    with pytest.raises(ws.ConfigError, match=match):
        Topology(**kwargs)


def test_names_of_topologies_and_algorithms_come_from_the_core():
    with pytest.raises(ws.ConfigError, match=r"topology must be one of mesh, mesh\+diag, "
                                             r"mesh\+diag_ne, mesh\+diag_nw, got 'torus'"):
        Topology.named(2, 2, "torus")
    with pytest.raises(ws.ConfigError, match="packet_routing must be one of xy, diag_first, "
                                             "got 'west_first'"):
        ws.Wafer(2, 2, mode="packets", packet_routing="west_first")
    with pytest.raises(ws.ConfigError, match="packet_routing must be one of"):
        ws.Wafer(2, 2, packet_routing=3)
    assert ws.Wafer(4, 4, "mesh+diag", mode="packets").packet_routing == "diag_first"
    assert ws.Wafer(4, 4, mode="packets").packet_routing == "xy"
    assert ws.Wafer(4, 4, "mesh+diag").packet_routing is None      # colors mode
    assert ws.layout.ROUTING_ALGORITHMS == ("xy", "diag_first")
    assert set(ws.layout.TOPOLOGIES) == {"mesh", "mesh+diag", "mesh+diag_ne", "mesh+diag_nw"}


def test_directions_opposites_and_steps_come_from_the_core_0314_0033():
    assert DIRECTIONS == ("E", "W", "N", "S", "NE", "SW", "NW", "SE", "SKIP_E", "SKIP_W", "RAMP")
    for d, step in ws.layout.STEP.items():   # a link and its opposite step back
        back = ws.layout.STEP[ws.layout.OPPOSITE[d]]
        assert (step[0] + back[0], step[1] + back[1]) == (0, 0)
    assert ws.layout.STEP["N"] == (1, 0) and ws.layout.STEP["NE"] == (1, 1)   # north is +row
    assert ws.layout.OPPOSITE["RAMP"] == "RAMP"
    assert direction_mask(["E", "RAMP"]) == 1 | 1 << 10


def test_an_edge_port_joins_only_its_own_border_router_0285():
    """(-1, 0) is the south edge port of (0, 0): a path may not jump from it to (0, 1)."""
    w = ws.Wafer(3, 3)
    with pytest.raises(ws.RouteError, match=r"no link from \(-1, 0\) to \(0, 1\)"):
        w.route(1, [(-1, 0), (0, 1), (0, 2)])
    with pytest.raises(ws.RouteError, match=r"no link from \(2, 1\) to \(3, 2\)"):
        w.route(1, [(2, 0), (2, 1), (3, 2)])
    assert w.routed_colors() == []
    w.route(1, [(-1, 0), (0, 0), (0, 1)])  # the port below (0, 0)
    assert w.router(0, 0).route(1) == (["S"], ["E"])


def test_far_off_path_points_are_refused_without_wrapping():
    w = ws.Wafer(2, 2)
    with pytest.raises(ws.RouteError, match="leaves the 2x2 fabric"):
        w.route(1, [(0, 0), (2**70, 0)])
    with pytest.raises(ws.RouteError, match="outside the 2x2 fabric"):
        ws.layout.path(w.topology, (0, 0), (2**64 - 1, 0))


def test_add_routes_builds_a_route_from_masks_at_many_routers():
    """Row 0 of a 2 x 3 wafer from the ramp of (0, 0) to the east edge port, given as
    per-router masks [0318], [0322]; wavelets reach the port over 2 router-to-router hops."""
    w = ws.Wafer(2, 3)
    e, west, ramp = (direction_mask(d) for d in ("E", "W", "RAMP"))
    w.add_routes(5, np.array([[0, 0], [0, 1], [0, 2]]), rx=[ramp, west, west], tx=e)
    assert [w.router(0, c).route(5) for c in range(3)] == [(["RAMP"], ["E"]), (["W"], ["E"]),
                                                             (["W"], ["E"])]
    w.inject((0, 0), 5, data=[7, 8])
    w.run()
    a = w.collect((0, 3))
    assert list(a.data) == [7, 8] and list(a.hops) == [2, 2]
    assert w.routed_colors() == [5] and w.routed_colors([(1, 0)]) == []
    w2 = ws.Wafer(2, 3)   # the same with names, the same for several routers
    w2.add_routes(5, (0, 0), rx="RAMP", tx="E")
    w2.add_routes(5, [(0, 1), (0, 2)], rx=["W"], tx=["E"])
    assert all(w2.router(0, c).route(5) == w.router(0, c).route(5) for c in range(3))
    w3 = ws.Wafer(2, 3)   # ... and with one set of names per router
    w3.add_routes(5, [(0, 0), (0, 1), (0, 2)], rx=[{"RAMP"}, ["W"], ("W",)], tx="E")
    assert all(w3.router(0, c).route(5) == w.router(0, c).route(5) for c in range(3))
    with pytest.raises(ws.ConfigError, match="rx lists 2 sets of directions for 3 router"):
        w3.add_routes(6, [(0, 0), (0, 1), (0, 2)], rx=[{"RAMP"}, {"W"}], tx="E")


def test_add_routes_refuses_a_second_source_unless_shared_0302():
    w = ws.Wafer(2, 2)
    w.add_routes(3, [(0, 1)], rx="W", tx="RAMP")
    with pytest.raises(ws.RouteError, match=r"color 3 at router \(0, 1\) already comes from "
                                            r"\['W'\]; this route adds \['S'\]: two active "
                                            r"sources for one color \[0302\]"):
        w.add_routes(3, [(0, 0), (0, 1)], rx="S", tx="E")
    assert w.router(0, 0).route(3) == ([], [])               # nothing was added
    w.add_routes(3, (0, 1), rx="S", tx="RAMP", allow_shared_source=True)
    assert w.router(0, 1).route(3) == (["W", "S"], ["RAMP"])


def test_add_routes_is_all_or_nothing():
    w = ws.Wafer(2, 2)
    with pytest.raises(ws.RouteError, match=r"NE.*do not exist"):
        w.add_routes(2, [(0, 0), (1, 1)], rx="RAMP", tx=[direction_mask("E"), direction_mask("NE")])
    with pytest.raises(ws.RouteError, match=r"routers\[1\] = \(2, 0\) is outside the 2x2 fabric"):
        w.add_routes(2, [(0, 0), (2, 0)], rx="RAMP", tx="E")
    assert w.routed_colors() == []
    with pytest.raises(ws.ConfigError, match="tx must be in 0..2047"):
        w.add_routes(2, [(0, 0)], rx="RAMP", tx=4096)
    with pytest.raises(ws.ConfigError, match="rx has shape"):
        w.add_routes(2, [(0, 0), (0, 1)], rx=[1, 2, 3], tx=0)
    with pytest.raises(ws.ConfigError, match="tx must be one of E, W"):
        w.add_routes(2, [(0, 0)], rx="RAMP", tx="UP")
    with pytest.raises(ws.ConfigError, match="local color"):
        w.add_routes(40, [(0, 0)], rx="RAMP", tx="E")
    with pytest.raises(ws.ConfigError, match="packet mode"):
        ws.Wafer(2, 2, mode="packets").add_routes(1, [(0, 0)], rx="RAMP", tx="E")


def test_the_compute_elements_configuration_trace_and_profile_are_public():
    w = ws.Wafer(1, 2, ce={"memory_bytes": 32 * 1024, "code_bytes": 8 * 1024, "microthreads": 4})
    cfg = w.ce_config
    assert (cfg.data_bytes, cfg.microthreads, cfg.input_queue_depth) == (24 * 1024, 4, 6)
    assert cfg.max_instructions > 0
    assert not w.ce_trace and not w.ce_profile
    w.load(COUNT, rect=(0, 0))
    w.ce_profile = True
    w.ce_trace = True
    w.launch("main")
    s = w.run()
    assert w.ce_profile and w.ce_trace and w.ce_config.trace
    pe = s.pes[(0, 0)]
    assert pe["busy_by_pc"].sum() == pe["busy_cycles"] > 0      # profile: busy cycles per pc
    assert [span[0] for span in pe["task_spans"]] == [w.pe(0, 0).program.tasks["main"]]
    w.ce_trace = False
    assert not w.ce_config.trace
    with pytest.raises(ws.ConfigError, match="ce_trace must be True or False, got 'yes'"):
        w.ce_trace = "yes"
