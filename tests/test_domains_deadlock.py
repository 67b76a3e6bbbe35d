"""The deadlock report of a wafer split into domains of rows (docs/scale.md, "What each
rank reports on a deadlock"): every domain raises DeadlockError with the report one
process gives for the same wafer [0306], its message and its ``report`` alike: stuck
queues whose head waits for a router of another domain, waiting PEs, host ports, held
senders and the wait-cycle search over the whole wafer, with the entry limits applied to
the whole wafer's lists. The domains run as threads of one process (tests/test_domains.py);
the reference is the same script run undivided, whose report tests/test_wafer_deadlock.py
and tests/test_switch_hold.py check by hand."""
import numpy as np
import pytest
from deadlock_programs import SEND_THEN_RECEIVE
from repo_scripts import load_script
from test_ce_block_microthreads import CONSUMER, FORWARDER
from test_domains import _split

import wafersim as ws

C = 6  # the switched color of tests/test_switch_hold.py

RECEIVE = """
; waits for {n} values on color {color}
.data
x:    .space i16, {n}
dx:   .dsd mem1d, base=x, length={n}, stride=2
din:  .dsd fabric_in, length={n}, sw=1, sc=1, utid={color}
.code
.task main, 40
main: block {color}
      lddwds D[0], dx
      lds1wds S1[0], din
      mov16.t D[0], S1[0]
"""


def exchange_over_rows(rows):
    """Two PEs on the first and last row each send 20 values to the other before reading
    any: a wait cycle through both PEs and the queues of every row between them, so it
    crosses every cut."""
    w = ws.Wafer(rows, 2, watchdog=200)
    n = str(20 + 4 * rows)  # more than the queues on the way hold
    w.pe(0, 0).load(SEND_THEN_RECEIVE.format(out=1, inp=2).replace("20", n))
    w.pe(rows - 1, 0).load(SEND_THEN_RECEIVE.format(out=2, inp=1).replace("20", n))
    w.route(1, [(r, 0) for r in range(rows)])
    w.route(2, [(r, 0) for r in reversed(range(rows))])
    w.launch("main")
    w.run()


def sink_jam(rows):
    """Host wavelets down column 0 into a sink that takes one and never drains: full
    queues in every row, each stalled by the router below, and the host port with work
    left."""
    w = ws.Wafer(rows, 2, watchdog=50)
    w.route(1, path=[(r, 0) for r in range(rows)])
    w.set_sink((rows - 1, 0), capacity=1)
    w.inject((0, 0), 1, data=np.arange(4 * rows))
    w.run()


def waiting_for_the_host(rows):
    """The last row's PE sends 3 values to the first row's PE, then waits for values the
    host streams in at the first row's west edge port, one short; the first row's PE
    waits for 6 values: two dead ends, one at a host port of another domain's rows, one at
    a PE of another domain that is stuck itself."""
    last = rows - 1
    w = ws.Wafer(rows, 1, watchdog=100)
    w.pe(last, 0).load(SEND_THEN_RECEIVE.format(out=1, inp=2).replace("20", "3"))
    w.pe(0, 0).load(RECEIVE.format(n=6, color=1))
    w.route(1, [(r, 0) for r in reversed(range(rows))])
    w.route(2, [(0, -1)] + [(r, 0) for r in range(rows)])
    w.launch("main")
    w.stream((0, -1), 2, [1, 2], dtype="i16")
    w.run()


def many_dead_ends(rows):
    """Every PE of columns 1..3 waits for color 2, which PE (r, 0) of its row could send
    but never does: more dead ends than the report lists (20), spread over every
    domain."""
    w = ws.Wafer(rows, 4, watchdog=100)
    w.load(".code\n.task main, 40\nmain: term\n", rect=(0, 0, rows, 1))
    w.load(RECEIVE.format(n=3, color=2), rect=(0, 1, rows, 3))
    for r in range(rows):
        w.router(r, 0).set_route(2, rx=["RAMP"], tx=["E"])
        w.router(r, 1).set_route(2, rx=["W"], tx=["RAMP", "E"])
        w.router(r, 2).set_route(2, rx=["W"], tx=["RAMP", "E"])
        w.router(r, 3).set_route(2, rx=["W"], tx=["RAMP"])
    w.launch("main")
    w.run()


def held_by_a_switch(rows):
    """tests/test_switch_hold.py's held sender turned north: rows m - 1 and m + 1 send
    color C toward row m, whose switch takes C from S (row m - 1) in position 0 and from N
    in position 1; no control wavelet comes, so row m + 1's queue waits for row m."""
    m = rows // 2
    w = ws.Wafer(rows, 1, watchdog=300)
    w.router(m - 1, 0).set_route(C, rx=["RAMP"], tx=["N"])
    w.router(m + 1, 0).set_route(C, rx=["RAMP"], tx=["S"])
    w.router(m, 0).set_route(C, rx=["S"], tx=["RAMP"])
    w.router(m, 0).set_switch(C, [{"rx": ["N"]}])
    w.inject((m + 1, 0), C, data=[1, 2, 3])
    w.run()


def held_microthread(rows):
    """tests/test_ce_block_microthreads.py's forwarder under the literal reading of [0390],
    its slow consumer on the last row: the forwarder's send waits in a microthread that
    its own blocked id holds."""
    w = ws.Wafer(rows, 1, watchdog=300, ce={"block_holds_microthreads": True})
    w.pe(0, 0).load(FORWARDER)
    w.pe(rows - 1, 0).load(CONSUMER)
    w.route(5, [(0, -1), (0, 0)])
    w.route(7, [(r, 0) for r in range(rows)])
    w.stream((0, -1), 5, list(range(10, 250, 10)), dtype="u16")
    w.run()


def fig11_ring(rows):
    """The FIG. 11 partial-sum ring beyond its buffering (tests/test_wafer_deadlock.py):
    its ring spans the wafer's two rows."""
    assert rows == 2
    load_script("examples/kernels/forward_layer_fig11.py").run_wafer(20, 200, density=1.0,
                                                                     ring_cols=2)


def many_stuck_queues(rows, cols=2510):
    """sink_jam in every column: rows x cols stuck queues, more than the report lists in
    full (10,000)."""
    w = ws.Wafer(rows, cols, watchdog=20)
    for c in range(cols):
        w.route(1, path=[(r, c) for r in range(rows)])
        w.set_sink((rows - 1, c), capacity=1)
        w.inject((0, c), 1, data=np.arange(3 * rows))
    w.run()


def _one_process(script, rows):
    with pytest.raises(ws.DeadlockError) as err:
        script(rows)
    return err.value


def _assert_every_domain_reports_as_one_process(script, rows, parts, blocks=1):
    ref = _one_process(script, rows)
    for _, err in _split(parts, lambda: script(rows), blocks):
        assert isinstance(err, ws.DeadlockError), err
        assert err.args[0] == ref.args[0]
        assert err.report == ref.report
    return ref.report


@pytest.mark.parametrize("parts,blocks", [(2, 1), (3, 1), (9, 1), (2, 2), (3, 3)])
def test_a_wait_cycle_across_every_cut_is_found_by_every_domain_0306(parts, blocks):
    rep = _assert_every_domain_reports_as_one_process(exchange_over_rows, 9, parts, blocks)
    cycle = rep[rep.index("wait cycle"):].splitlines()[1:]
    # PE (0, 0) -> its queue -> each row's queue up to (8, 0) -> PE (8, 0) -> back: 2 PEs and
    # the 9 queues of each color on the way (they all hold wavelets)
    assert len(cycle) == 2 + 2 * 9, rep
    assert "PE (0, 0) task 40" in rep and "PE (8, 0) task 40" in rep
    assert "router (4, 0) color 1 (2/2 queued): its head waits to go N to router (5, 0), " \
           "which stalls color 1" in rep


@pytest.mark.parametrize("parts", [2, 3, 9])
def test_stuck_queues_waiting_for_a_router_of_another_domain_show_its_queue_0306(parts):
    rep = _assert_every_domain_reports_as_one_process(sink_jam, 9, parts)
    # each queue waits for the one below, full (2/2) whatever domain holds it
    for r in range(8):
        assert (f"router ({r}, 0) color 1: 2/2 queued (stalling its sources); head waits for\n"
                f"    N -> router ({r + 1}, 0), which stalls it: its color 1 holds 2/2") in rep
    assert "PE (0, 0) ramp: host port: 17 wavelet(s) waiting to enter (colors 1)" in rep


@pytest.mark.parametrize("parts", [2, 3, 9])
def test_dead_ends_at_a_host_port_and_a_stuck_pe_of_another_domain_0306(parts):
    rep = _assert_every_domain_reports_as_one_process(waiting_for_the_host, 9, parts)
    assert ("waits for color 2: which the host sends through edge port W of router (0, 0) "
            "(nothing left to inject there)") in rep
    assert "src1 waits for color 1: which PE (8, 0) sends (it is stuck itself)" in rep


@pytest.mark.parametrize("parts,blocks", [(2, 1), (3, 1), (9, 1), (3, 2)])
def test_the_dead_end_limit_applies_to_the_whole_wafer_0306(parts, blocks):
    rep = _assert_every_domain_reports_as_one_process(many_dead_ends, 9, parts, blocks)
    dead = rep[rep.index("no wait cycle"):].splitlines()[1:]
    assert len(dead) == 21 and dead[-1] == "  ... and 7 more"  # 27 PEs wait, 20 listed
    assert "PE (6, 2) task 40" in dead[-2]  # in router order: rows 0..6 of 3 columns


@pytest.mark.parametrize("parts", [3, 9])
def test_a_sender_held_by_a_switch_in_another_domain_0306(parts):
    rep = _assert_every_domain_reports_as_one_process(held_by_a_switch, 9, parts)
    assert ("router (5, 0) color 6: 2/2 queued (stalling its sources); head waits for\n"
            "    S -> router (4, 0), which holds it: its switch on color 6 is in position 0, "
            "whose sources are {S}; N is a source in position(s) 1") in rep
    assert ("  router (4, 0) color 6 from N: router (5, 0)'s queue (2/2 queued) waits to send "
            "it S;") in rep


def test_a_part_cut_short_is_a_clear_error_not_garbage():
    """What the domains swap is bytes (the exchange does not look inside); bytes that do
    not decode (a domain of another build) raise ConfigError instead of a wrong report."""
    core = ws.Wafer(2, 2)._core
    part = core.deadlock_part([core.deadlock_facts()])
    assert "deadlock report at cycle 0 (2x2 mesh" in core.merge_deadlock_report([part], 0)
    with pytest.raises(ws.ConfigError, match="cut short"):
        core.merge_deadlock_report([part[:-3]], 0)
    with pytest.raises(ws.ConfigError, match="trailing bytes"):
        core.merge_deadlock_report([part + b"\0"], 0)
    with pytest.raises(ws.ConfigError, match="cut short"):
        core.deadlock_part([b"\1" + bytes(7)])


@pytest.mark.parametrize("parts", [3, 9])
def test_microthreads_held_by_a_blocked_id_are_listed_by_every_domain_0390(parts):
    rep = _assert_every_domain_reports_as_one_process(held_microthread, 9, parts)
    assert ("microthreads held by a blocked id (block_holds_microthreads; an unblock of the "
            "id lets them resume):\n  PE (0, 0) microthread 1 (task 5 pc 260 mov16) is held: "
            "its task id 5 is blocked [0390]\n") in rep


def test_the_fig11_ring_split_over_its_two_rows_gives_one_process_report_0412():
    rep = _assert_every_domain_reports_as_one_process(fig11_ring, 2, 2)
    assert "wait cycle" in rep


def test_the_stuck_queue_limit_applies_to_the_whole_wafer_0306():
    """4 x 2,510 = 10,040 stuck queues over 2 domains of 5,020 each: the report lists the
    first 10,000 in router order, the last 40 (of row 3) are counted."""
    rep = _assert_every_domain_reports_as_one_process(many_stuck_queues, 4, 2)
    assert rep.endswith("... and 40 more stuck queue(s)\n")
    assert "router (3, 2469) color 1: 2/2 queued" in rep
    assert "router (3, 2470) color 1" not in rep
