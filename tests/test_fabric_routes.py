"""Static color routes: paths, multicast trees, XY and diagonal-first generators, checks."""

import itertools

import numpy as np
import pytest

import wafersim as ws
from wafersim.layout import OPPOSITE, STEP, Topology, path

# Seed 003 Table 2 [0041]: the output ports each input port can reach (L = local/ramp).
TABLE_2 = {
    "L": {"L", "SE", "NE", "SW", "NW", "E", "W", "N", "S"},
    "NE": {"SW", "S", "W", "L"},
    "SW": {"NE", "N", "E", "L"},
    "NW": {"SE", "S", "E", "L"},
    "SE": {"NW", "N", "W", "L"},
    "E": {"W", "L"},
    "W": {"E", "L"},
    "N": {"S", "L"},
    "S": {"N", "L"},
}


def moves(p):
    out = []
    for a, b in zip(p, p[1:]):
        step = (b[0] - a[0], b[1] - a[1])
        out.append(next(d for d, s in STEP.items() if s == step))
    return out


def turns(topo, algorithm):
    """(input port, output port) pairs used by all routes, as in Tables 1-2 of seed 003."""
    used = set()
    cells = list(itertools.product(range(topo.rows), range(topo.cols)))
    for src, dst in itertools.product(cells, cells):
        m = moves(path(topo, src, dst, algorithm))
        ins = ["L"] + [OPPOSITE[d] for d in m]   # a packet moving SW enters at the NE port
        outs = m + ["L"]
        used.update(zip(ins, outs))
    return used


@pytest.mark.parametrize("shape", [(4, 4), (5, 7), (8, 8)])
def test_diagonal_first_uses_exactly_the_turns_of_table_2_0040_0041(shape):
    topo = Topology.named(*shape, "mesh+diag")
    used = turns(topo, "diag_first")
    table = {(i, o) for i, outs in TABLE_2.items() for o in outs}
    assert used == table


def test_xy_routing_turns_from_the_west_input_0061():
    topo = Topology.named(5, 5, "mesh")
    used = turns(topo, "xy")
    assert {o for i, o in used if i == "W"} == {"E", "N", "S", "L"}   # [0061]
    assert {o for i, o in used if i == "N"} == {"S", "L"}             # no Y -> X turns


@pytest.mark.parametrize("shape", [(4, 4), (5, 7), (8, 8)])
def test_hops_are_chebyshev_with_diagonals_and_manhattan_without_0039(shape):
    mesh, diag = Topology.named(*shape, "mesh"), Topology.named(*shape, "mesh+diag")
    cells = list(itertools.product(range(shape[0]), range(shape[1])))
    for (r0, c0), (r1, c1) in itertools.product(cells, cells):
        dr, dc = abs(r1 - r0), abs(c1 - c0)
        assert len(path(mesh, (r0, c0), (r1, c1), "xy")) - 1 == dr + dc
        p = path(diag, (r0, c0), (r1, c1), "diag_first")
        assert len(p) - 1 == max(dr, dc)
        first_is_diagonal = len(p) > 1 and moves(p)[0] in ("NE", "NW", "SE", "SW")
        assert first_is_diagonal == (dr != 0 and dc != 0)   # diagonal first [0036]


def test_one_family_uses_the_diagonal_only_when_the_signs_match():
    ne = Topology.named(6, 6, "mesh+diag_ne")
    assert moves(path(ne, (0, 0), (3, 3), "diag_first")) == ["NE"] * 3
    assert moves(path(ne, (0, 3), (3, 0), "diag_first")) == ["W"] * 3 + ["N"] * 3   # XY


def test_route_tree_multicasts_to_every_destination_once_0301():
    w = ws.Wafer(4, 4)
    everyone = list(itertools.product(range(4), range(4)))
    w.route_tree(2, (0, 0), everyone, "xy")
    w.inject((0, 0), 2, data=np.arange(5))
    w.run()
    a = w.collect()
    assert len(a) == 16 * 5
    for r, c in everyone:
        here = a.data[(a.row == r) & (a.col == c)]
        assert list(here) == [0, 1, 2, 3, 4]
        assert np.all(a.hops[(a.row == r) & (a.col == c)] == r + c)   # XY paths are minimal
    # an XY tree over 16 routers has 15 links, each carrying every wavelet once
    links = w.counters().link_counts
    assert links[:, :, :10].sum() == 15 * 5


def test_route_tree_diag_first_reaches_each_destination_in_chebyshev_hops_0039():
    w = ws.Wafer(5, 5, "mesh+diag")
    dsts = [(4, 4), (4, 1), (2, 4), (0, 3), (3, 0)]
    w.route_tree(4, (0, 0), dsts, "diag_first")
    w.inject((0, 0), 4, data=1)
    w.run()
    a = w.collect()
    for r, c, h in zip(a.row, a.col, a.hops):
        assert h == max(r, c)


def test_route_paths_add_masks_so_several_calls_build_a_tree():
    w = ws.Wafer(2, 3)
    w.route(1, path=[(0, 0), (0, 1), (0, 2)])
    w.route(1, path=[(0, 0), (0, 1), (1, 1)])          # same source: a branch, not a merge
    assert w.router(0, 1).route(1) == (["W"], ["E", "N"])
    assert w.router(0, 0).route(1) == (["RAMP"], ["E"])
    w.clear_routes(1)
    assert w.router(0, 1).route(1) == ([], [])


def test_a_single_point_path_is_local_loopback_0093():
    w = ws.Wafer(2, 2)
    w.route(3, path=[(1, 1)])
    assert w.router(1, 1).route(3) == (["RAMP"], ["RAMP"])
    w.inject((1, 1), 3, data=5)
    w.run()
    a = w.collect()
    assert list(a.data) == [5] and a.latency[0] == 1 and a.hops[0] == 0


def test_check_routes_reports_a_dependent_loop_with_its_color_and_links_0304():
    w = ws.Wafer(3, 2, loop=True)
    for r in range(3):
        w.router(r, 0).set_route(1, rx=["S"], tx=["N"])
    w.route(2, path=[(0, 1), (1, 1)])                   # a good color alongside
    with pytest.raises(ws.RouteError) as err:
        w.check_routes()
    msg = str(err.value)
    assert "dependency cycle on color 1" in msg and "color 2" not in msg
    assert "(0, 0) -N-> (1, 0) -N-> (2, 0) -N-> (0, 0)" in msg
    with pytest.raises(ws.RouteError, match="dependency cycle"):
        w.run()                                         # run() checks routes first


def test_check_routes_requires_the_receiver_to_list_the_link_as_a_source_0322():
    w = ws.Wafer(1, 3)
    w.router(0, 0).set_route(4, rx=["RAMP"], tx=["E"])
    w.router(0, 1).set_route(4, rx=["N"], tx=["E"])    # N does not exist ... edge port
    w.router(0, 2).set_route(4, rx=["W"], tx=["RAMP"])
    with pytest.raises(ws.RouteError, match=r"color 4: \(0, 0\) -E-> \(0, 1\) but that router "
                                            r"does not take color 4 from W"):
        w.check_routes()


def test_check_routes_flags_a_color_with_sources_but_no_destination():
    w = ws.Wafer(1, 2)
    w.router(0, 0).set_route(4, rx=["RAMP"], tx=["E"])
    w.router(0, 1).set_route(4, rx=["W"], tx=[])
    with pytest.raises(ws.RouteError, match="sources but no destination"):
        w.check_routes()


def test_bad_routes_raise_route_errors_naming_the_problem():
    w = ws.Wafer(4, 4)
    with pytest.raises(ws.RouteError, match=r"\(0, 9\).*leaves the 4x4 fabric"):
        w.route(1, path=[(0, 0), (0, 9), (0, 2)])
    with pytest.raises(ws.RouteError, match=r"no link from \(0, 0\) to \(1, 1\)"):
        w.route(1, path=[(0, 0), (1, 1)])                # no diagonals in a mesh
    with pytest.raises(ws.RouteError, match="twice"):
        w.route(1, path=[(0, 0), (0, 1), (0, 0)])
    with pytest.raises(ws.RouteError, match="outside"):
        w.route_tree(1, (0, 0), [(4, 4)])
    with pytest.raises(ws.RouteError, match="diagonal"):
        w.route_tree(1, (0, 0), [(2, 2)], algorithm="diag_first")
    with pytest.raises(ws.ConfigError, match="algorithm"):
        w.route_tree(1, (0, 0), [(2, 2)], algorithm="west_first")
    with pytest.raises(ws.RouteError, match=r"NE.*lead off the fabric or do not exist"):
        w.router(1, 1).set_route(1, rx=["RAMP"], tx=["NE"])
    with pytest.raises(ws.RouteError, match="SKIP_E"):
        w.router(0, 0).set_route(1, rx=["RAMP"], tx=["SKIP_E"])
    with pytest.raises(ws.ConfigError, match="tx must be one of"):
        w.router(1, 1).set_route(1, rx=["RAMP"], tx=["UP"])
    with pytest.raises(ws.ConfigError, match="color must be in 0..63"):
        w.route(64, path=[(0, 0)])
    with pytest.raises(ws.ConfigError, match=r"local color.*\[0096\]"):
        w.route(30, path=[(0, 0), (0, 1)])               # 24 fabric colors by default
    with pytest.raises(ws.ConfigError, match="router"):
        w.router(4, 0)
    assert w.router(1, 1).route(1) == ([], [])           # nothing half-applied
