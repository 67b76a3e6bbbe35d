"""A switched color holds a sender instead of failing (docs/fabric.md, "Switches").

A wavelet whose direction is a source (Src [0322]) of its color only in another position
of the router's switch is not taken in: its sender sees the color stalled, as if the
queue were full [0333], [0334], until a control wavelet moves the switch to a position
that takes it. A direction that no position takes still raises RouteError, and a color
still has one active source at a time [0302]. Seed 000 routes statically; the switches
and this rule are ours.
"""

import numpy as np
import pytest
from repo_scripts import load_script

import wafersim as ws

C, D = 6, 9


def test_four_pe_row_bus_takes_turns_without_a_token_against_numpy():
    r = load_script("examples/kernels/gather_bus.py").run(pes=4, rounds=3, n=5, seed=1)
    assert np.array_equal(r["y"], r["numpy"])
    assert r["senders"] == [0, 1, 2, 3] * 3
    # PE 1 was held at its ramp from the start: its first value entered the fabric two
    # cycles after PE 0's first control wavelet did (one hop to router 1, where it moved
    # the switch; one cycle for the hold to lift)
    a = r["arrivals"]
    assert a.injected[~a.ctrl][5] == a.injected[a.ctrl][0] + 2


@pytest.mark.parametrize("pes,rounds,n", [(2, 1, 1), (5, 2, 9), (7, 4, 3)])
def test_row_bus_of_other_sizes_against_numpy(pes, rounds, n):
    r = load_script("examples/kernels/gather_bus.py").run(pes, rounds, n, seed=pes)
    assert np.array_equal(r["y"], r["numpy"])
    assert r["senders"] == r["want_senders"]


@pytest.mark.parametrize("rows,cols,n", [(3, 4, 6), (4, 3, 17), (1, 5, 3), (2, 2, 1)])
def test_stencil_over_switched_buses_in_both_directions_against_numpy(rows, cols, n):
    r = load_script("examples/kernels/stencil_bus.py").run(rows, cols, n, seed=rows * cols)
    assert np.array_equal(r["y"], r["numpy"])


def test_stencil_is_bit_identical_with_one_and_two_threads():
    st = load_script("examples/kernels/stencil_bus.py")
    one = st.run(4, 4, 8, seed=3, threads=1)
    two = st.run(4, 4, 8, seed=3, threads=2, parallel_min_routers=0)
    assert two["stats"].parallel_phases > 0
    assert np.array_equal(one["y"], two["y"]) and np.array_equal(one["y"], one["numpy"])
    assert one["stats"].cycles == two["stats"].cycles


def _three_routers(rx_first):
    """(0, 0) and (0, 2) send color C toward (0, 1), whose switch takes C from W in
    position 0 and from E in position 1 (down its ramp in both)."""
    w = ws.Wafer(1, 3, watchdog=300)
    w.router(0, 0).set_route(C, rx=["RAMP"], tx=["E"])
    w.router(0, 2).set_route(C, rx=["RAMP"], tx=["W"])
    w.router(0, 1).set_route(C, rx=[rx_first], tx=["RAMP"])
    w.router(0, 1).set_switch(C, [{"rx": ["E" if rx_first == "W" else "W"]}])
    return w


def test_held_link_sender_moves_one_cycle_after_the_control_wavelet_is_queued_0333():
    """By hand, from the cycle contract: the control wavelet is offered at (0, 0) in cycle
    0, queued there at the end of 0, sent east in 1 and queued at (0, 1) at the end of 1,
    where it moves the arrival position to 1. (0, 2) has held its first value since cycle
    1; it sees the new position in cycle 2, like a stall bit one cycle late [0333], and
    sends it. (0, 1) sends the control wavelet down its ramp in 2 and the values in 3, 4,
    5, one per cycle."""
    w = _three_routers("W")
    w.inject((0, 2), C, data=[100, 101, 102])
    w.send_control((0, 0), C, ["nop", "advance"])
    w.run(max_cycles=2)  # cycles 0 and 1
    sw = w.router(0, 1).switch(C)
    assert sw["arrival_position"] == 1 and sw["held"] == ["W"]
    assert w.router(0, 2).occupancy(C) == 2  # held: nothing left (0, 2) yet
    w.run()
    a = w.collect((0, 1))
    assert a.ctrl.tolist() == [True, False, False, False]
    assert (a.data[1:]).tolist() == [100, 101, 102]
    assert a.arrived.tolist() == [2, 3, 4, 5]
    assert w.router(0, 1).switch_position(C) == 1


def test_held_ramp_sender_offers_the_cycle_after_the_switch_takes_the_ramp():
    """The host port at (0, 1) holds its value from cycle 0: RAMP is a source of C there
    only in position 1. The control wavelet, released at (0, 0) in cycle 10, is queued at
    (0, 1) at the end of 11; the port offers in 12 (its queue holds one wavelet, no
    stall), (0, 1) sends the control wavelet east in 12 and the value in 13; (0, 2)
    delivers them in 13 and 14."""
    w = ws.Wafer(1, 3)
    w.router(0, 0).set_route(C, rx=["RAMP"], tx=["E"])
    w.router(0, 1).set_route(C, rx=["W"], tx=["E"])
    w.router(0, 1).set_switch(C, [{"rx": ["RAMP"]}])
    w.router(0, 2).set_route(C, rx=["W"], tx=["RAMP"])
    w.inject((0, 1), C, data=7)
    w.send_control((0, 0), C, ["nop", "advance"], cycle=10)
    w.run(max_cycles=12)  # cycles 0..11
    assert w.router(0, 1).switch(C)["held"] == ["W"]
    assert len(w.collect()) == 0
    w.run()
    a = w.collect((0, 2))
    assert a.ctrl.tolist() == [True, False] and a.data[1] == 7
    assert a.arrived.tolist() == [13, 14]
    assert a.latency[1] == 14  # the wait at the source counts: released at 0


def test_a_held_color_leaves_the_link_to_others_and_joins_the_round_robin_when_released_0320():
    """(0, 1) sends color C (from (0, 0)) and color D (from its own ramp) east. C is held
    by (0, 2)'s switch until the control wavelet released at (0, 2) in cycle 5 is queued
    there (end of 5); until then D goes east every cycle. From cycle 6 the east scheduler
    of (0, 1) has both and alternates, C first (its pointer is at D) [0320]."""
    w = ws.Wafer(1, 3)
    w.router(0, 0).set_route(C, rx=["RAMP"], tx=["E"])
    w.router(0, 1).set_route(C, rx=["W"], tx=["E"])
    w.router(0, 2).set_route(C, rx=["RAMP"], tx=["E"])  # to the east edge port
    w.router(0, 2).set_switch(C, [{"rx": ["W"]}])
    w.route(D, [(0, 1), (0, 2)])
    w.inject((0, 0), C, data=np.arange(6))
    w.inject((0, 1), D, data=np.arange(10))
    w.send_control((0, 2), C, ["advance"], cycle=5)
    w.run()
    c = w.collect((0, 3))
    d = w.collect((0, 2))
    c_arrived = c.arrived[~c.ctrl].tolist()
    # a wavelet (0, 1) sends in cycle s arrives in s + 1 at either end
    assert d.arrived.tolist()[:5] == [2, 3, 4, 5, 6]
    assert c_arrived[:5] == [7, 9, 11, 13, 15]
    assert d.arrived.tolist()[5:] == [8, 10, 12, 14, 16]
    assert c_arrived[5:] == [17]
    assert c.arrived[c.ctrl].tolist() == [6]


SEND_ONE_C = f"""
.data
dout: .dsd fabric_out, color={C}, length=1, sw=1
.code
.task main, 40
main: lddwds D[0], dout
      li r8, 3
      mov16.t D[0], r8
"""


def test_a_direction_that_no_position_takes_still_raises_route_error():
    def wafer():
        w = ws.Wafer(1, 3)
        w.router(0, 0).set_route(C, rx=["RAMP"], tx=["E"])
        w.router(0, 1).set_route(C, rx=["W"], tx=["RAMP"])
        w.router(0, 1).set_switch(C, [{"tx": ["E"]}])  # RAMP is a source in no position
        w.router(0, 2).set_route(C, rx=["W"], tx=["RAMP"])
        return w
    w = wafer()
    w.inject((0, 1), C, data=1)  # a host port: refused before the run
    with pytest.raises(ws.RouteError, match=r"ramp of router \(0, 1\), but color 6 has no "
                                            r"route from there"):
        w.run()
    w = wafer()  # a compute element: refused when its wavelet arrives
    w.pe(0, 1).load(SEND_ONE_C)
    w.launch("main")
    with pytest.raises(ws.RouteError, match=r"\(0, 1\) from RAMP, which is not a source \(Src\) "
                                            r"of that color there in any position of its switch"):
        w.run()


def test_two_sources_in_one_cycle_still_raise_on_a_switched_color_0302():
    """W and RAMP are both sources of C at (0, 1) in position 0 (position 1 keeps only W).
    A control wavelet from W and a value from the ramp arrive in cycle 1; the control
    wavelet, taken first, moves the switch, but the two arrivals are two active sources
    in one cycle, as on any color [0302]."""
    w = ws.Wafer(1, 3)
    w.router(0, 0).set_route(C, rx=["RAMP"], tx=["E"])
    w.router(0, 1).set_route(C, rx=["W", "RAMP"], tx=["E"])
    w.router(0, 1).set_switch(C, [{"rx": ["W"]}])
    w.router(0, 2).set_route(C, rx=["W"], tx=["RAMP"])
    w.send_control((0, 0), C, ["nop", "advance"])  # queued at (0, 1) at the end of 1
    w.inject((0, 1), C, data=5, cycle=1)              # offered in 1
    with pytest.raises(ws.RouteError, match=r"two wavelets of color 6 arrived at router "
                                            r"\(0, 1\) in the same cycle, from W and from RAMP"):
        w.run()


def test_a_switch_moving_away_under_a_two_cycle_link_raises_route_error():
    """A sender sees a switch move one cycle late; a 2-cycle diagonal link can hold a
    wavelet sent just before. Both leave in cycle 1: the control wavelet from (0, 1)
    reaches (1, 1) in 1 and takes SW out of its sources; the value from (0, 0) arrives
    in 2."""
    w = ws.Wafer(2, 2, "mesh+diag", diag_hop_cycles=2)
    w.router(0, 0).set_route(C, rx=["RAMP"], tx=["NE"])
    w.router(0, 1).set_route(C, rx=["RAMP"], tx=["N"])
    w.router(1, 1).set_route(C, rx=["SW", "S"], tx=["RAMP"])
    w.router(1, 1).set_switch(C, [{"rx": ["S"]}])
    w.inject((0, 0), C, data=1)
    w.send_control((0, 1), C, ["nop", "advance"])
    with pytest.raises(ws.RouteError, match=r"\(1, 1\) from SW, which its switch's position 1 "
                                            r"does not take .* 2-cycle link"):
        w.run()


def test_deadlock_report_names_the_held_sender_router_color_direction_and_position_0306():
    w = _three_routers("W")
    w.inject((0, 2), C, data=[1, 2, 3])  # no control wavelet ever comes
    with pytest.raises(ws.DeadlockError) as err:
        w.run()
    rep = err.value.report
    assert ("router (0, 2) color 6: 2/2 queued (stalling its sources); head waits for\n"
            "    W -> router (0, 1), which holds it: its switch on color 6 is in position 0, "
            "whose sources are {W}; E is a source in position(s) 1") in rep
    assert ("senders held by a switch position" in rep and
            "  router (0, 1) color 6 from E: router (0, 2)'s queue (2/2 queued) waits to send "
            "it W; its switch on color 6 is in position 0, whose sources are {W}; E is a "
            "source in position(s) 1\n") in rep


SEND_C = f"""
; sends 8 values on color {C} (its router holds the ramp), then one on color {D}
.data
x:    .space i16, 8
dx:   .dsd mem1d, base=x, length=8, stride=2
dc:   .dsd fabric_out, color={C}, length=8, sw=1
dd:   .dsd fabric_out, color={D}, length=1, sw=1
.code
.task main, 40
main: lds1wds S1[0], dx
      lddwds D[0], dc
      mov16 D[0], S1[0]
      lddwds D[1], dd
      mov16.t D[1], S1[0]
"""

WAIT_D_THEN_CONTROL = f"""
; waits for a value on color {D}, then sends the control wavelet that would free the bus
.data
x:    .space i16, 1
dx:   .dsd mem1d, base=x, length=1, stride=2
din:  .dsd fabric_in, length=1, sw=1, sc=1, ch={D >> 3}, utid={D & 7}
dctl: .dsd fabric_out, color={C}, length=1, sw=1, c=1, index=33
.code
.task main, 40
main: block {D}
      lddwds D[0], dx
      lds1wds S1[0], din
      mov16 D[0], S1[0]
      lddwds D[1], dctl
      li r8, 0
      li r9, switch_cmds(nop, adv, switch_only=1)
      mov32.t D[1], r8
"""


def test_deadlock_report_finds_a_wait_cycle_through_a_switch_hold():
    """PE (0, 1) may send on C only once PE (0, 0)'s control wavelet moves its router's
    switch to the ramp; PE (0, 0) sends it only after a value on D, which PE (0, 1) sends
    after C: a cycle of waits through the switch."""
    w = ws.Wafer(1, 2, watchdog=300)
    w.pe(0, 0).load(WAIT_D_THEN_CONTROL)
    w.pe(0, 1).load(SEND_C)
    w.router(0, 0).set_route(C, rx=["RAMP"], tx=["E"])
    w.router(0, 1).set_route(C, rx=["W"], tx=["E"])
    w.router(0, 1).set_switch(C, [{"rx": ["RAMP"]}])
    w.route(D, [(0, 1), (0, 0)])
    w.launch("main")
    with pytest.raises(ws.DeadlockError) as err:
        w.run()
    rep = err.value.report
    assert "router (0, 1) color 6 from RAMP: the ramp endpoint (compute element" in rep
    assert "waits to send it; its switch on color 6 is in position 0, whose sources are {W}; " \
           "RAMP is a source in position(s) 1" in rep
    cycle = rep[rep.index("wait cycle"):]
    assert "waits for color 9, which PE (0, 1) sends" in cycle
    assert ("waits to send color 6, which router (0, 1)'s switch holds until a control "
            "wavelet of color 6 moves it, which PE (0, 0) sends") in cycle


def test_a_multicast_head_goes_out_its_other_directions_while_one_is_held_0319():
    """(0, 1) copies color C east and north [0318]; (0, 2)'s switch holds the east copy
    until the control wavelet released at (0, 2) in cycle 20 is queued there. The north
    copies leave at once; the head stays (Sent [0319]) until its east copy leaves too, so
    the second wavelet follows only then."""
    w = ws.Wafer(2, 3)
    w.router(0, 0).set_route(C, rx=["RAMP"], tx=["E"])
    w.router(0, 1).set_route(C, rx=["W"], tx=["E", "N"])
    w.router(1, 1).set_route(C, rx=["S"], tx=["RAMP"])
    w.router(0, 2).set_route(C, rx=["RAMP"], tx=["RAMP"])
    w.router(0, 2).set_switch(C, [{"rx": ["W"]}])
    w.inject((0, 0), C, data=[1, 2])
    w.send_control((0, 2), C, ["advance"], switch_only=True, cycle=20)
    w.run()
    north, east = w.collect((1, 1)), w.collect((0, 2))
    # 1 is queued at (0, 1) at the end of 1 and goes north in 2 (delivered at (1, 1) in 3);
    # its east copy goes in 21, after the switch moved at the end of 20; 2 follows in 22
    assert north.data.tolist() == [1, 2] and north.arrived.tolist() == [3, 23]
    assert east.data.tolist() == [1, 2] and east.arrived.tolist() == [22, 23]
