"""Runtime route switches driven by control wavelets (docs/fabric.md, "Switches").

Seed 000 routes every color statically (Dest / Src [0318], [0322]); the switch positions,
their commands and encoding are ours (docs/fabric.md). A control wavelet starts the task
its low index bits name [0371], with its data in r2 / r3 and its index in r4 [0346].
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import wafersim as ws
from wafersim.switches import commands_word, control_data, decode

C = 6          # the switched color
CTL = 33       # the neighbours' control task
CENTRE = (1, 1)
NEIGHBOURS = {"E": (1, 2), "N": (2, 1), "W": (1, 0), "S": (0, 1)}  # north is +row

NEIGHBOUR_SOURCE = f"""
.data
buf:    .space fp16, 16
got:    .i16 0                  ; the argument of the last control wavelet
ctls:   .i16 0                  ; control tasks started
dbuf:   .dsd mem1d, base=buf, length=1, stride=2, wli=1
.export buf, got, ctls
.code
.task main, 40
.task recv, {C}
.task ctl, {CTL}
main:   lddwds D[1], dbuf
        li r5, 0
        term
recv:   mov16 r4, r5            ; buf[r5 / 2] = the element
        mov16 D[1], r2
        addi r5, 2
        term
ctl:    st16 r2, got
        ld16 r6, ctls
        addi r6, 1
        st16 r6, ctls
        term
"""


def centre_source(mode: str, n: int) -> str:
    """The centre PE sends four chunks, one per neighbour, on color C. ``data``: each chunk
    is followed by a switch-only control wavelet that advances its own router's switch;
    ``payload``: each neighbour gets one control wavelet whose argument is its value."""
    lines = [".data", f"vals: .space fp16, {4 * n}"]
    for k in range(4):
        lines.append(f"d{k}: .dsd mem1d, base=vals + {2 * n * k}, length={n}, stride=2")
    lines += [f"dout: .dsd fabric_out, color={C}, length={n}, sw=1",
              f"dctl: .dsd fabric_out, color={C}, length=1, sw=1, c=1, index={CTL}",
              ".export vals", ".code", ".task main, 40",
              "main: lddwds D[2], dout", "      lddwds D[3], dctl",
              f"      li r9, {commands_word(['advance'], switch_only=mode == 'data')}"]
    for k in range(4):
        if mode == "data":
            lines += [f"      lds1wds S1[1], d{k}", "      mov16 D[2], S1[1]", "      li r8, 0"]
        else:
            lines.append(f"      li r8, {100 + k}")
        lines.append("      mov32 D[3], r8")
    lines.append("      term")
    return "\n".join(lines)


def centre_wafer(mode: str, n: int = 5, start: int = 0):
    w = ws.Wafer(3, 3)
    w.pe(*CENTRE).load(centre_source(mode, n))
    for d, (r, c) in NEIGHBOURS.items():
        w.pe(r, c).load(NEIGHBOUR_SOURCE)
        opposite = {"E": "W", "W": "E", "N": "S", "S": "N"}[d]
        w.router(r, c).set_route(C, rx=[opposite], tx=["RAMP"])
    centre = w.router(*CENTRE)
    centre.set_route(C, rx=["RAMP"], tx=["E"])
    centre.set_switch(C, [{"tx": "N"}, {"tx": ["W"]}, ("tx", ["S"])], ring=True, start=start)
    return w


def test_centre_pe_reaches_four_neighbours_with_data_after_switch_only_commands():
    n = 5
    w = centre_wafer("data", n)
    vals = np.arange(1, 4 * n + 1, dtype=np.float16)
    w.memcpy_h2d("vals", vals, rect=CENTRE)
    w.launch(40)
    assert w.router(*CENTRE).switch_position(C) == 0
    w.run()
    for k, (r, c) in enumerate(NEIGHBOURS.values()):  # E, N, W, S: positions 0..3
        got = w.memcpy_d2h("buf", rect=(r, c))[0, 0]
        assert np.array_equal(got[:n], vals[k * n:(k + 1) * n]), (r, c)
        assert not got[n:].any()
        # the switch-only control wavelets reached no compute element
        assert w.memcpy_d2h("ctls", rect=(r, c))[0, 0, 0] == 0
    # four advances in a ring of four positions: back where it started
    assert w.router(*CENTRE).switch_position(C) == 0
    counts = w.counters().link_color_counts(C)[1, 1]
    for d in NEIGHBOURS:  # each direction carried one chunk and its control wavelet
        assert counts[ws.layout.DIR_INDEX[d]] == n + 1


def test_centre_pe_reaches_four_neighbours_with_payload_in_the_control_wavelet_0371():
    w = centre_wafer("payload", start=1)  # starts at N: N, W, S, E
    w.launch(40)
    w.run()
    order = ["N", "W", "S", "E"]
    for d, (r, c) in NEIGHBOURS.items():
        # each control wavelet starts the neighbour's control task with its argument in r2
        assert w.memcpy_d2h("got", rect=(r, c))[0, 0, 0] == 100 + order.index(d)
        assert w.memcpy_d2h("ctls", rect=(r, c))[0, 0, 0] == 1
        assert w.pe(r, c).gpr(3) == commands_word(["advance"])  # the command word in r3
        assert w.pe(r, c).gpr(4) == CTL                          # the index in r4 [0346]
    assert w.router(*CENTRE).switch_position(C) == 1


def row_of_switches(cols=6, color=C):
    """Routers 0..cols-2 pass ``color`` east in position 0 and take it down the ramp in
    position 1; the last router takes it. Host ports at every ramp collect."""
    w = ws.Wafer(1, cols)
    for j in range(cols):
        rt = w.router(0, j)
        if j < cols - 1:
            rt.set_route(color, rx=["W"], tx=["E"])
            rt.set_switch(color, [{"tx": ["RAMP"]}])
        else:
            rt.set_route(color, rx=["W"], tx=["RAMP"])
    return w


def test_multi_hop_command_list_sets_the_switches_it_names():
    w = row_of_switches()
    # hop 0 is the router the host port feeds: (0, 0); commands for hops 1 and 3
    w.send_control((0, -1), C, ["nop", "advance", "nop", "advance"], switch_only=True)
    w.run()
    assert [w.router(0, j).switch_position(C) for j in range(5)] == [0, 1, 0, 1, 0]
    assert len(w.collect()) == 0  # switch-only: no endpoint receives it
    # data now stops at router 1
    w.inject((0, -1), C, data=[7, 8])
    w.run()
    a = w.collect()
    assert a.col.tolist() == [1, 1] and a.data.tolist() == [7, 8]
    # a control wavelet is forwarded with the position in force when it arrives: this one
    # goes down router 1's ramp (with its argument), then resets router 1 to position 0
    w.send_control((0, -1), C, ["nop", "reset"], arg=42, task=5)
    w.inject((0, -1), C, data=9)
    w.run()
    a = w.collect()
    assert a.col.tolist() == [1, 3]
    assert a.ctrl.tolist() == [True, False]
    assert a.index[0] == 5 and a.data[0] == control_data(["nop", "reset"], 42)
    assert a.data[1] == 9 and a.hops[1] == 3
    assert [w.router(0, j).switch_position(C) for j in range(5)] == [0, 0, 0, 1, 0]


def test_wavelets_behind_a_control_wavelet_in_one_queue_see_the_new_position():
    w = row_of_switches(3)
    # one burst: data, advance at hop 0, data; the second datum waits behind the control
    # wavelet and leaves with the position it sets
    w.inject((0, -1), C, data=1)
    w.send_control((0, -1), C, ["advance"])
    w.inject((0, -1), C, data=2)
    w.run()
    far, near = w.collect((0, 2)), w.collect((0, 0))
    assert far.ctrl.tolist() == [False, True] and far.data[0] == 1
    assert near.data.tolist() == [2] and not near.ctrl.any()


def test_ring_mode_wraps_and_without_it_the_switch_stays_at_the_last_position():
    for ring, want in ((True, [1, 2, 0, 1, 2]), (False, [1, 2, 2, 2, 2])):
        w = ws.Wafer(2, 2)
        w.router(0, 0).set_route(C, rx=["RAMP"], tx=["E"])
        w.router(0, 1).set_route(C, rx=["W"], tx=["RAMP"])
        w.router(1, 0).set_route(C, rx=["S"], tx=["RAMP"])
        w.router(0, 0).set_switch(C, [{"tx": ["N"]}, {"tx": ["N", "E"]}], ring=ring)
        seen = []
        for _ in range(5):
            w.send_control((0, 0), C, ["advance"], switch_only=True)
            w.run()
            seen.append(w.router(0, 0).switch_position(C))
        assert seen == want, ring


def test_positions_accumulate_one_field_at_a_time():
    w = ws.Wafer(3, 3)
    w.router(1, 1).set_route(C, rx=["W"], tx=["E"])
    w.router(1, 1).set_switch(C, [{"rx": ["S"]}, {"tx": ["N", "RAMP"]}, {"rx": "E"}])
    sw = w.router(1, 1).switch(C)
    assert sw["routes"] == [(["W"], ["E"]), (["S"], ["E"]), (["S"], ["N", "RAMP"]),
                            (["E"], ["N", "RAMP"])]
    assert sw["ring"] is False and sw["start"] == 0 and sw["position"] == 0
    assert w.router(1, 1).route(C) == (["W"], ["E"])  # the route stays position 0


def test_an_rx_position_changes_where_the_color_may_come_from():
    w = ws.Wafer(1, 3)
    w.router(0, 0).set_route(C, rx=["RAMP"], tx=["E"])
    w.router(0, 2).set_route(C, rx=["RAMP"], tx=["W"])
    w.router(0, 1).set_route(C, rx=["W"], tx=["RAMP"])
    w.router(0, 1).set_switch(C, [{"rx": ["E"]}], ring=True)
    w.inject((0, 0), C, data=1)
    w.send_control((0, 0), C, ["nop", "advance"])       # hop 1: the middle router
    w.inject((0, 2), C, data=2, cycle=20)              # from the east, after the switch
    w.run()
    a = w.collect((0, 1))
    assert (a.data & 0xFFFF).tolist() == [1, 0, 2] and a.ctrl.tolist() == [False, True, False]
    assert w.router(0, 1).switch_position(C) == 1
    # the west is a source only in position 0 now: its sender is held, not refused
    # (tests/test_switch_hold.py)
    w.inject((0, 0), C, data=3)
    with pytest.raises(ws.DeadlockError, match=r"router \(0, 1\) color 6 from W: router \(0, 0\)"):
        w.run()


def test_the_reserved_command_raises_route_error_naming_router_and_hop():
    w = row_of_switches(3)
    w.inject((0, -1), C, data=(3 << 18) | (1 << 16), ctrl=True)  # hop 0 advance, hop 1: 3
    with pytest.raises(ws.RouteError, match=r"reserved switch command 3 .* router \(0, 1\) \(hop 1"):
        w.run()


def test_control_wavelets_of_colors_without_switches_keep_their_data_and_delivery():
    w = ws.Wafer(1, 3)
    w.route(1, [(0, -1), (0, 0), (0, 1), (0, 2)])
    w.route(C, [(0, -1), (0, 0)])
    w.router(0, 0).set_switch(C, [{"tx": ["RAMP"]}])  # C is switched; color 1 is not
    data = control_data(["advance", "reset"], 5, switch_only=True)
    w.inject((0, -1), 1, data=data, index=3, ctrl=True)
    w.run()
    a = w.collect()
    assert a.data.tolist() == [data] and a.ctrl.tolist() == [True] and a.col.tolist() == [2]


def test_routes_are_checked_over_every_switch_position_0304():
    w = ws.Wafer(2, 2)
    w.router(0, 0).set_route(C, rx=["RAMP"], tx=["E"])
    w.router(0, 1).set_route(C, rx=["W"], tx=["RAMP"])
    w.router(0, 0).set_switch(C, [{"tx": ["N"]}])
    with pytest.raises(ws.RouteError, match=r"\(0, 0\) -N-> \(1, 0\) but that router does not take"):
        w.check_routes()
    w.router(1, 0).set_route(C, rx=["S"], tx=["RAMP"])
    w.check_routes()
    # a loop closed only through a switch position is still a dependency cycle
    w2 = ws.Wafer(1, 2)
    w2.router(0, 0).set_route(C, rx=["E", "RAMP"], tx=["E"])
    w2.router(0, 1).set_route(C, rx=["W"], tx=["RAMP"])
    w2.router(0, 1).set_switch(C, [{"tx": ["W"]}])
    with pytest.raises(ws.RouteError, match="dependency cycle on color 6"):
        w2.check_routes()


def test_switch_configuration_errors_name_what_is_wrong():
    w = ws.Wafer(2, 2)
    rt = w.router(0, 0)
    with pytest.raises(ws.RouteError, match="has no route there; set its route"):
        rt.set_switch(C, [{"tx": ["N"]}])
    rt.set_route(C, rx=["RAMP"], tx=["E"])
    with pytest.raises(ws.ConfigError, match="give 1..4 positions"):
        rt.set_switch(C, [])
    with pytest.raises(ws.ConfigError, match="give 1..4 positions"):
        rt.set_switch(C, [{"tx": "N"}] * 5)
    with pytest.raises(ws.ConfigError, match=r"positions\[0\] must name one field"):
        rt.set_switch(C, [{"tx": "N", "rx": "E"}])
    with pytest.raises(ws.ConfigError, match=r"positions\[1\] must name one field"):
        rt.set_switch(C, [{"tx": "N"}, {"via": "N"}])
    with pytest.raises(ws.ConfigError, match="position 1 sets rx to no direction"):
        rt.set_switch(C, [{"rx": []}])
    with pytest.raises(ws.RouteError, match=r"direction\(s\) \{NE\} that lead off the fabric"):
        rt.set_switch(C, [{"tx": ["NE"]}])
    with pytest.raises(ws.ConfigError, match="start must be a position 0..1"):
        rt.set_switch(C, [{"tx": "N"}], start=2)
    with pytest.raises(ws.ConfigError, match="local color"):
        rt.set_switch(40, [{"tx": "N"}])
    with pytest.raises(ws.ConfigError, match="has no switch"):
        rt.switch_position(C)
    assert rt.switch(C) is None
    rt.set_switch(C, [{"tx": "N"}], start=1)
    assert rt.route(C) == (["RAMP"], ["E"]) and rt.switch_position(C) == 1
    rt.clear_switch(C)
    assert rt.switch(C) is None
    w.clear_routes(C)
    p = ws.Wafer(2, 2, mode="packets")
    with pytest.raises(ws.RouteError, match="packet mode"):
        p.router(0, 0).set_switch(C, [{"tx": "N"}])


def test_switches_change_only_between_runs_on_empty_queues():
    w = row_of_switches(3)
    w.inject((0, -1), C, data=np.arange(10))
    w.run(max_cycles=3)
    assert w.router(0, 0).occupancy(C) > 0
    with pytest.raises(ws.RouteError, match="queued"):
        w.router(0, 0).set_switch(C, [{"tx": ["RAMP"]}])
    with pytest.raises(ws.RouteError, match="queued"):
        w.router(0, 0).clear_switch(C)
    with pytest.raises(ws.RouteError, match="queued"):
        w.router(0, 0).set_route(C, rx=["W"], tx=["RAMP"])
    w.run()
    assert len(w.collect()) == 10


def test_removing_a_route_removes_its_switch_and_switch_only_delivery_follows_it():
    w = row_of_switches(2)
    w.router(0, 0).set_route(C, rx=[], tx=[])
    assert w.router(0, 0).switch(C) is None
    w.router(0, 0).set_route(C, rx=["W"], tx=["E"])
    w.send_control((0, -1), C, ["advance"], switch_only=True)
    w.run()
    # C has no switch left at all: the wavelet is an ordinary control wavelet again
    assert w.collect().ctrl.tolist() == [True]


def _model(last, ring, start, commands):
    pos = start
    for cmd in commands:
        if cmd == "reset":
            pos = 0
        elif cmd == "advance":
            pos = pos + 1 if pos < last else (0 if ring else last)
    return pos


@settings(deadline=None, max_examples=25)
@given(last=st.integers(1, 4), ring=st.booleans(), data=st.data(),
       commands=st.lists(st.sampled_from(["advance", "reset", "nop"]), min_size=1, max_size=8))
def test_switch_position_follows_its_commands(last, ring, data, commands):
    start = data.draw(st.integers(0, last))
    w = ws.Wafer(1, 2)
    w.router(0, 0).set_route(C, rx=["RAMP"], tx=["E"])
    w.router(0, 1).set_route(C, rx=["W"], tx=["RAMP"])
    w.router(0, 0).set_switch(C, [{"tx": ["E"]}] * last, ring=ring, start=start)
    for k, cmd in enumerate(commands):  # one burst: every command queues behind the last
        w.send_control((0, 0), C, [cmd], arg=k, switch_only=k % 2 == 0)
    w.run()
    assert w.router(0, 0).switch_position(C) == _model(last, ring, start, commands)
    assert w.collect().data.tolist() == [control_data([c], k) for k, c in enumerate(commands)
                                         if k % 2]


def test_switched_bus_is_bit_identical_with_one_and_two_threads():
    from repo_scripts import load_script
    bus = load_script("examples/kernels/window_bus.py")
    one = bus.run(pes=7, k=3, n=6, seed=2, rows=4, threads=1)
    two = bus.run(pes=7, k=3, n=6, seed=2, rows=4, threads=2, parallel_min_routers=0)
    assert one["stats"].parallel_phases == 0 and two["stats"].parallel_phases > 0
    assert np.array_equal(one["acc"], one["numpy"])
    assert np.array_equal(one["acc"], two["acc"])
    assert one["stats"].cycles == two["stats"].cycles
    assert np.array_equal(one["delivered_per_pe"], two["delivered_per_pe"])


def test_command_encoding_round_trips_and_rejects_bad_input():
    data = control_data(["adv", "nop", "rst", "advance"], 0xBEEF, switch_only=True)
    assert data == (1 << 31) | (1 << 16) | (2 << 20) | (1 << 22) | 0xBEEF
    assert decode(data) == (["advance", "nop", "reset", "advance"], True, 0xBEEF)
    assert decode(3 << 16) == (["reserved"], False, 0)
    with pytest.raises(ws.ConfigError, match="at most 7 hops"):
        commands_word(["nop"] * 8)
    with pytest.raises(ws.ConfigError, match=r"commands\[1\] must be one of"):
        commands_word(["advance", "jump"])
    with pytest.raises(ws.ConfigError, match=r"arg must be an integer in 0\.\.65535, got 70000"):
        control_data([], 70000)
    with pytest.raises(ws.ConfigError, match="task id 0..63"):
        ws.Wafer(1, 1).send_control((0, 0), C, task=64)


def test_assembler_builds_control_words_with_switch_cmds():
    prog = ws.asm.assemble(".code\nmain: li r9, switch_cmds(adv, nop, rst, switch_only=1)\n"
                           "      li r8, switch_cmds()\n      term\n.task main, 40")
    pe = ws.pe.LonePE()
    pe.load(prog)
    pe.launch("main")
    pe.run()
    assert pe.gpr(9) == commands_word(["advance", "nop", "reset"], switch_only=True)
    assert pe.gpr(8) == 0
    with pytest.raises(ws.ProgramError, match="switch_cmds.. takes command names"):
        ws.asm.assemble("li r9, switch_cmds(jump)")
    with pytest.raises(ws.ProgramError, match="at most 7 hops"):
        ws.asm.assemble("li r9, switch_cmds(nop, nop, nop, nop, nop, nop, nop, adv)")
    with pytest.raises(ws.ProgramError, match="only the keyword switch_only"):
        ws.asm.assemble("li r9, switch_cmds(adv, ring=1)")


@pytest.mark.parametrize("pes,k,n", [(6, 3, 8), (7, 1, 4), (5, 2, 3), (8, 6, 5), (3, 4, 2)])
def test_program_7_window_bus_delivers_each_chunk_to_the_next_k_pes(pes, k, n):
    from repo_scripts import load_script
    r = load_script("examples/kernels/window_bus.py").run(pes, k, n, seed=pes + k)
    assert np.array_equal(r["acc"], r["numpy"])
    windows = np.array([min(j, k) for j in range(pes)])
    # exactly the window: each chunk and its control wavelet, nothing more
    assert r["delivered_per_pe"].tolist() == ((n + 1) * windows).tolist()


@pytest.mark.parametrize("pes,n", [(5, 6), (7, 3), (1, 4), (2, 1)])
def test_program_8_switch_scatter_and_streams_out_of_every_pe(pes, n):
    from repo_scripts import load_script
    r = load_script("examples/kernels/switch_scatter.py").run(pes, n, seed=n)
    assert np.array_equal(r["y"], r["numpy"])
    assert r["positions"] == [1] * (pes - 1)
    assert r["stats"].delivered == pes * n  # the switch-only wavelets reached no CE
