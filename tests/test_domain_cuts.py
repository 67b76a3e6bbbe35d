"""Links that cross the cut between two domains of a split wafer (docs/scale.md, "The
per-cycle exchange"): runtime switches whose holds change during the run, 2-cycle diagonal
links, loop links and packet mode. The domains run as threads of one process
(tests/test_domains.py); every result, cycle count, statistic and arrival is compared with
the same script run undivided, the independent reference."""
import numpy as np
import pytest

import wafersim as ws
from repo_scripts import load_script
from test_domains import _same_stats, _split

C = 6
SPLITS = [(2, 1), (3, 1), (9, 1), (2, 3), (3, 2)]  # (domains, blocks of rows per domain)
ARRIVALS = ("row", "col", "port", "color", "data", "index", "ctrl", "hops", "injected",
            "arrived")


def _same_arrivals(a, b):
    for k in ARRIVALS:
        assert np.array_equal(getattr(a, k), getattr(b, k)), k


def _column_bus(pause=None):
    """Rows 0, 2, 4 and 6 of column 1 send color C north to (8, 1), each five values and
    then a control wavelet that advances its own router's switch (hop 0): router (r, 1)
    for r = 2, 4, 6 takes C from its ramp in position 0 and from the south in position 1,
    so it holds what comes from below (on the link, across a cut when rows r - 1 and r lie
    in two domains) until its own values have gone [0333]. Returns the run's statistics
    and arrivals and the switches' state (read on the domain that holds each router;
    None elsewhere)."""
    w = ws.Wafer(9, 3, watchdog=400)
    w.route(C, path=[(r, 1) for r in range(9)])  # rx S, tx N on the way, RAMP at both ends
    for r in (2, 4, 6):
        w.router(r, 1).set_route(C, rx=["RAMP"], tx=["N"])
        w.router(r, 1).set_switch(C, [{"rx": ["S"]}])
    for k, r in enumerate((0, 2, 4, 6)):
        w.inject((r, 1), C, data=np.arange(5) + 100 * k, cycle=3 * k)
        w.send_control((r, 1), C, ["advance"], cycle=3 * k)
    if pause is not None:
        w.run(max_cycles=pause)  # a run that stops mid-way: the holds carry over
    s = w.run()
    a = w.collect()
    mine = w._domain.owns if w._domain is not None else (lambda r: True)
    held = {r: w.router(r, 1).switch(C) if mine(r) else None for r in (2, 4, 6)}
    return s, a, held


@pytest.mark.parametrize("n,blocks", SPLITS)
def test_switch_holds_cross_the_cuts_and_the_run_is_bit_identical_in_domains(n, blocks):
    """A sender below a cut reads the hold of the switch above it (QueueSlot::hold) at
    the end of the previous cycle, like a stall bit [0333]: the holds of the border rows'
    switched slots cross every cut after phase B (docs/fabric.md, "Switches")."""
    ref_s, ref_a, ref_held = _column_bus()
    assert all(st["position"] == st["arrival_position"] == 1 for st in ref_held.values())
    # by hand: each sender's values pass only after every sender above it has gone
    assert ref_a.data[~ref_a.ctrl].tolist() == [v + 100 * k for k in (3, 2, 1, 0)
                                                for v in range(5)]
    assert ref_a.ctrl.tolist() == ([False] * 5 + [True]) * 4
    seen = set()
    for (s, a, held), err in _split(n, _column_bus, blocks):
        assert err is None
        _same_stats(s, ref_s)
        _same_arrivals(a, ref_a)
        for r, st in held.items():  # a switch's state on the domain that holds it
            if st is not None:
                assert st == ref_held[r]
                seen.add(r)
    assert seen == {2, 4, 6}


def test_switch_holds_cross_the_cuts_across_a_paused_run():
    ref_s, ref_a, _ = _column_bus(pause=7)
    for (s, a, _), err in _split(3, lambda: _column_bus(pause=7)):
        assert err is None
        _same_stats(s, ref_s)
        _same_arrivals(a, ref_a)


def _held_column():
    """Column 1 carries color C north from (0, 1); router (3, 1) switches C from its route
    (position 0: from S) to position 1 (from RAMP only) when the control wavelet sent after
    three values passes it (its commands: hop 3 advances). The three values after it wait
    below (3, 1), held by the switch, and its PE never sends: a deadlock whose report
    quotes the switch's position. Returns the message, the report and the switch as read
    on this domain."""
    w = ws.Wafer(6, 3, watchdog=100)
    w.route(C, path=[(r, 1) for r in range(6)])
    w.router(3, 1).set_switch(C, [{"rx": ["RAMP"]}])
    w.inject((0, 1), C, data=np.arange(3))
    w.send_control((0, 1), C, ["nop", "nop", "nop", "advance"])
    w.inject((0, 1), C, data=np.arange(3) + 10)
    with pytest.raises(ws.DeadlockError) as e:
        w.run()
    return e.value.args[0], e.value.report, w.router(3, 1).switch(C)


@pytest.mark.parametrize("n,blocks", [(2, 1), (3, 1), (6, 1), (2, 3), (3, 2)])
def test_a_switch_reads_alike_on_every_domain_after_a_run_and_in_a_deadlock_report(n, blocks):
    """Every domain writes the switches of the others' rows as they stand after a run
    (Domain.share_switches): the report line of router (2, 1), held by the switch of
    (3, 1) in another domain's rows (rows 2 and 3 lie in two domains in every split but 3
    domains of one block), quotes the position the switch
    moved to, and no domain finds a wait cycle through the position it was configured in.
    Its state reads as one process's on every domain, not only on the one holding it."""
    message, report, switch = _held_column()
    # by hand: the switch moved once, and holds what comes from S
    assert switch["position"] == switch["arrival_position"] == 1 and switch["held"] == ["S"]
    assert ("N -> router (3, 1), which holds it: its switch on color 6 is in position 1, "
            "whose sources are {RAMP}") in report
    assert "wait cycle" not in report  # the PE at (3, 1) could still send: no cycle
    for got, err in _split(n, _held_column, blocks):
        assert err is None
        assert got == (message, report, switch)


def test_switch_states_from_another_configuration_are_refused():
    """A domain's copy takes only the switches it configured itself: words that name
    another switch, color or position, or a cut-short list, raise WaferError and never
    write elsewhere."""
    w = ws.Wafer(6, 3)
    w.route(C, path=[(r, 1) for r in range(6)])
    w.router(3, 1).set_switch(C, [{"rx": ["RAMP"]}])
    core = w._core
    good = core.export_switch_states()  # no domain: every row is this wafer's
    assert good.size == 8 and good[1] == 3 * 3 + 1  # router id of (3, 1)
    core.import_switch_states(good)  # its own state: nothing changes
    assert w.router(3, 1).switch(C)["position"] == 0
    moved = good.copy()
    moved[2] |= 1 << 16  # position 1 for forwarding
    core.import_switch_states(moved)
    assert w.router(3, 1).switch(C)["position"] == 1
    assert w.router(3, 1).switch(C)["arrival_position"] == 0
    for bad in (good[:7], np.concatenate([good, good[:1]])):
        with pytest.raises(ws.WaferError, match="words of switch state"):
            core.import_switch_states(bad)
    for k, value in ((0, 1), (1, 0), (2, C + 1), (2, C | (2 << 8))):
        bad = good.copy()
        bad[k] = value
        with pytest.raises(ws.WaferError, match="runtime switches differ"):
            core.import_switch_states(bad)
    assert w.router(3, 1).switch(C)["position"] == 1  # (refused before writing)


@pytest.mark.parametrize("n,blocks,threads", [(2, 1, 1), (3, 1, 1), (2, 2, 1), (2, 1, 2)])
def test_switched_stencil_on_compute_elements_is_bit_identical_in_domains(n, blocks, threads):
    """Conformance program 10 (examples/kernels/stencil_bus.py): N and S buses of switches
    that hold every sender, their links crossing the cuts; the result against numpy and
    every statistic against one process."""
    st = load_script("examples/kernels/stencil_bus.py")

    def script():
        r = st.run(6, 3, 4, seed=5, threads=threads,
                   parallel_min_routers=0 if threads > 1 else None)
        return r["y"], r["numpy"], r["stats"]

    y, want, ref = script()
    assert np.array_equal(y, want)
    for (yy, _, s), err in _split(n, script, blocks):
        assert err is None
        assert np.array_equal(yy.view(np.uint16), y.view(np.uint16))
        _same_stats(s, ref)
        assert (s.parallel_phases > 0) == (threads > 1)
        for pe in ref.pes:
            a, b = s.pes[pe], ref.pes[pe]
            assert (a["cycles"], a["busy_cycles"], a["instructions"]) == \
                   (b["cycles"], b["busy_cycles"], b["instructions"])


def _traffic(diag_hop_cycles=1, loop=False, threads=1):
    """Host traffic on 9 x 7 with both diagonal families: a diagonal-first tree, a path
    down a diagonal, a column stream into a slow sink (backpressure across the cuts), and
    with loop links a stream that wraps from the last row to row 0 into a slow sink.
    ``threads`` > 1: every cycle in several threads (a domain then steps in two sweeps)."""
    w = ws.Wafer(9, 7, "mesh+diag", queue_depth=2, diag_hop_cycles=diag_hop_cycles,
                 loop=loop, threads=threads)
    if threads > 1:
        w.parallel_min_routers = 0
    w.route_tree(3, (0, 0), [(8, 6), (8, 0), (4, 3)], "diag_first")
    w.route(4, path=[(8, 6), (7, 5), (6, 4), (5, 3), (4, 2), (3, 1), (2, 0)])
    w.route(5, path=[(8, 2), (7, 2), (6, 2), (5, 2), (4, 2), (3, 2), (2, 2), (1, 2)])
    w.set_sink((1, 2), capacity=1, drain_period=3)
    w.inject((0, 0), 3, data=np.arange(60))
    w.inject((8, 6), 4, data=np.arange(40) + 100)
    w.inject((8, 2), 5, data=np.arange(30) + 500, cycle=5)
    if loop:
        w.route(6, path=[(6, 5), (7, 5), (8, 5), (0, 5), (1, 5), (2, 5)])
        w.set_sink((2, 5), capacity=1, drain_period=2)
        w.inject((6, 5), 6, data=np.arange(25) + 900, cycle=2)
        w.route(7, path=[(1, 6), (0, 6), (8, 6), (7, 6)])  # southward over the wrap
        w.inject((1, 6), 7, data=np.arange(12) + 700)
    s = w.run()
    return s, w.collect()


@pytest.mark.parametrize("n,blocks", SPLITS)
def test_two_cycle_diagonal_links_are_bit_identical_in_domains_0294(n, blocks):
    """A wavelet on a 2-cycle diagonal link [0294] is posted for the cycle after it was
    sent: the cut carries it then, with the output register of the cycle it was sent in."""
    ref_s, ref_a = _traffic(2)
    one_cycle, _ = _traffic(1)
    assert ref_s.latency.total > one_cycle.latency.total  # the slow diagonals took longer
    for (s, a), err in _split(n, lambda: _traffic(2), blocks):
        assert err is None
        _same_stats(s, ref_s)
        _same_arrivals(a, ref_a)


@pytest.mark.parametrize("n,blocks", SPLITS)
@pytest.mark.parametrize("diag_hop_cycles", [1, 2])
def test_loop_links_are_bit_identical_in_domains_0297(n, blocks, diag_hop_cycles):
    """Loop links join each column's last row and row 0 [0297]: with the rows dealt to
    domains that cut always lies between the last domain and the first."""
    ref_s, ref_a = _traffic(diag_hop_cycles, loop=True)
    assert np.any(ref_a.color == 6) and np.any(ref_a.color == 7)
    for (s, a), err in _split(n, lambda: _traffic(diag_hop_cycles, loop=True), blocks):
        assert err is None
        _same_stats(s, ref_s)
        _same_arrivals(a, ref_a)


@pytest.mark.parametrize("n,blocks", [(2, 1), (3, 2)])
@pytest.mark.parametrize("diag_hop_cycles,loop", [(2, False), (1, True), (2, True)])
def test_slow_diagonals_and_loop_links_with_two_threads_per_domain(n, blocks, diag_hop_cycles,
                                                                   loop):
    def script():
        return _traffic(diag_hop_cycles, loop, threads=2)

    ref_s, ref_a = _traffic(diag_hop_cycles, loop)
    for (s, a), err in _split(n, script, blocks):
        assert err is None
        assert s.parallel_phases > 0
        _same_stats(s, ref_s)
        _same_arrivals(a, ref_a)


def test_a_pe_failing_on_a_loop_wafer_raises_one_process_error_in_domains():
    """With loop links one process steps phase A of every row, then phase B of every row;
    the domains agree on the first failing step in that order."""
    from test_wafer_deadlock import FAIL

    def script():
        w = ws.Wafer(8, 3, loop=True)
        w.load(FAIL.format(delay=20))
        for r in (6, 1):
            w.pe(r, 1).load(FAIL.format(delay=3))
        w.launch("main")
        w.run()

    with pytest.raises(ws.MemoryAccessError) as ref:
        script()
    for n, blocks in ((2, 1), (3, 1), (2, 3)):
        for _, err in _split(n, script, blocks):
            assert type(err) is ws.MemoryAccessError and err.args[0] == ref.value.args[0]


def _packets(topology="mesh", routing="xy", diag_hop_cycles=1, threads=1, pause=None):
    """Uniform random packet traffic (wafersim.noc.traffic) on 9 x 8 routers, with a slow
    sink at (4, 3) and (8, 7) (backpressure across the cuts)."""
    from wafersim.noc import traffic

    tr = traffic.bernoulli("uniform", 9, 8, 0.12, 120, seed=5)
    w = ws.Wafer(9, 8, topology, mode="packets", packet_routing=routing,
                 diag_hop_cycles=diag_hop_cycles, threads=threads)
    if threads > 1:
        w.parallel_min_routers = 0
    w.inject(tr.src, 0, data=np.arange(len(tr)), dest=tr.dst, cycle=tr.cycle)
    w.set_sink((4, 3), capacity=2, drain_period=3)
    w.set_sink((8, 7), capacity=1, drain_period=2)
    if pause is not None:
        w.run(max_cycles=pause)
    s = w.run()
    return s, w.collect()


@pytest.mark.parametrize("n,blocks", SPLITS)
@pytest.mark.parametrize("topology,routing,diag_hop_cycles", [
    ("mesh", "xy", 1), ("mesh+diag", "diag_first", 1), ("mesh+diag", "diag_first", 2)])
def test_packet_mode_is_bit_identical_in_domains(n, blocks, topology, routing,
                                                 diag_hop_cycles):
    """Packet mode (docs/noc.md): a split wafer runs the general packet pass (the bit-plane
    pass writes into the receiving row's queues), and its cut carries the sending row's
    LinkSends block and output registers; one process (on bit planes) is the reference."""
    def script():
        return _packets(topology, routing, diag_hop_cycles)

    ref_s, ref_a = script()
    assert ref_s.delivered > 100
    for (s, a), err in _split(n, script, blocks):
        assert err is None
        _same_stats(s, ref_s)
        _same_arrivals(a, ref_a)


@pytest.mark.parametrize("n,blocks", [(2, 1), (3, 2)])
def test_packet_mode_with_two_threads_and_a_pause_is_bit_identical_in_domains(n, blocks):
    ref_s, ref_a = _packets("mesh+diag", "diag_first", 2, pause=40)
    for (s, a), err in _split(n, lambda: _packets("mesh+diag", "diag_first", 2, threads=2,
                                                   pause=40), blocks):
        assert err is None
        assert s.parallel_phases > 0
        _same_stats(s, ref_s)
        _same_arrivals(a, ref_a)


def test_what_a_cut_cannot_carry_is_refused_on_every_domain():
    """Loop links on 2 rows (both rows' N and S links join the same two rows) stay refused
    with a ConfigError naming them."""
    for _, err in _split(2, lambda: ws.Wafer(2, 3, loop=True)):
        assert isinstance(err, ws.ConfigError)
        assert "loop=True split into domains needs at least 3 rows, got 2" in str(err)
