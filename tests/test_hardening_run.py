"""Runs that never end: a program that loops forever keeps the CE's progress counter (and so
the watchdog) quiet. Wafer.run stops such a livelock at its cycle limit with an error naming
the PEs still running and their pcs, and Ctrl-C (SIGINT) stops any run within about 0.1 s,
leaving the wafer consistent at a cycle boundary: it can be inspected and run further. A run
pauses (to look at signals) without changing its results."""

import os
import signal
import threading
import time

import numpy as np
import pytest
from deadlock_programs import SEND_THEN_RECEIVE

import wafersim as ws
import wafersim.wafer as wafer_module
from wafersim.noc import traffic

LOOP = ".code\n.task main, 40\nmain: jmp main\n"
REACTIVATE = ".code\n.task again, 41\nagain: activate.t #41\n"


def _livelock(program=LOOP, **kw):
    w = ws.Wafer(2, 2, **kw)
    w.pe(0, 1).load(program)
    w.launch(40 if program == LOOP else 41)
    return w


def test_a_task_looping_forever_ends_at_the_cycle_limit_naming_pe_task_and_pc():
    w = _livelock(cycle_limit=5000)
    with pytest.raises(ws.CycleLimitError, match="did not finish within 5000 cycles") as err:
        w.run()
    assert r"PE (0, 1): task main (40) at pc 256" in str(err.value)
    assert "w.cycle_limit" in str(err.value) and "max_cycles=" in str(err.value)
    assert isinstance(err.value, ws.WaferError) and w.cycle == 5000
    # Raising the limit lets the next run go on from there.
    w.cycle_limit = 7000
    with pytest.raises(ws.CycleLimitError, match="within 7000 cycles"):
        w.run()
    assert w.cycle == 12000


def test_a_task_that_reactivates_itself_ends_at_the_cycle_limit():
    w = _livelock(REACTIVATE)
    w.cycle_limit = 3000
    with pytest.raises(ws.CycleLimitError) as err:
        w.run()
    # Between two runs of the task: its id is active again, nothing else is pending.
    assert str(err.value).endswith("Still running:\n  PE (0, 1): no task running, active ids [41]")


def test_an_explicit_max_cycles_still_returns_without_error():
    w = _livelock(cycle_limit=100)
    stats = w.run(max_cycles=1000)  # explicit: stop there and report, as before
    assert stats.cycles == 1000 and not stats.quiescent and w.cycle == 1000


def test_the_default_cycle_limit_is_documented_and_configurable():
    assert ws.Wafer(1, 1).cycle_limit == ws.DEFAULTS["run_cycle_limit"] >= 10**8
    assert ws.Wafer(1, 1, cycle_limit=10).cycle_limit == 10
    for bad in (0, -1, 2**63, 1.5, True):
        with pytest.raises(ws.ConfigError, match="cycle_limit"):
            ws.Wafer(1, 1, cycle_limit=bad)
    w = ws.Wafer(1, 1)
    with pytest.raises(ws.ConfigError, match="cycle_limit"):
        w.cycle_limit = 0


def test_lone_pe_livelock_raises_the_same_error_class():
    pe = ws.pe.LonePE()
    pe.load(LOOP)
    pe.launch("main")
    with pytest.raises(ws.CycleLimitError, match="did not finish within 2000 cycles"):
        pe.run(max_cycles=2000)


def _interrupt_after(seconds: float) -> threading.Timer:
    t = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    t.start()
    return t


@pytest.fixture(autouse=True)
def _ctrl_c_raises():
    """Python's own Ctrl-C handler for these tests: a process started in the background by
    a non-interactive shell ignores SIGINT from birth, and Python then keeps ignoring it."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_stops_a_livelock_and_leaves_the_wafer_inspectable_and_runnable(threads):
    w = _livelock(threads=threads)  # default limit: far more than this test waits
    w.parallel_min_routers = 0  # with 2 threads, every phase runs in parallel
    timer = _interrupt_after(0.3)
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt, match=r"interrupted at cycle \d+") as err:
            w.run()
    finally:
        timer.cancel()
    waited = time.monotonic() - start - 0.3
    assert waited < 2.0  # the run looks at signals every 0.1 s of wall time
    stopped = w.cycle
    assert stopped > 0 and f"cycle {stopped}" in str(err.value)
    pe = w.pe(0, 1)
    assert pe.running_task == 40 and pe.pc == 256 and not pe.idle
    assert "task 40 running at pc 256" in pe.describe_wait()
    stats = w.run(max_cycles=500)  # and it runs further from where it stopped
    assert stats.start_cycle == stopped and w.cycle == stopped + 500
    assert stats.pes[(0, 1)]["instructions"] == {"jmp": 500}  # one jmp per cycle


def test_other_signal_handlers_run_during_a_run_and_their_exceptions_end_it():
    class Stop(Exception):
        pass

    calls = []

    def handler(signum, frame):
        calls.append(signum)
        if len(calls) == 3:
            raise Stop

    w = _livelock()
    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.05, 0.05)
    try:
        with pytest.raises(Stop):
            w.run()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert len(calls) == 3 and w.cycle > 0
    assert w.run(max_cycles=10).cycles == 10


def test_a_signal_handler_cannot_start_a_second_run_of_the_same_wafer():
    w = _livelock()
    errors = []

    def handler(signum, frame):
        try:
            w.run(max_cycles=10)
        except ws.WaferError as e:
            errors.append(str(e))
            raise

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    try:
        with pytest.raises(ws.WaferError, match="already running"):
            w.run()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert len(errors) == 1
    assert w.run(max_cycles=10).cycles == 10  # the interrupted run is closed


# ---- a paused run gives the results of an uninterrupted one --------------------------------

def _pause_often(monkeypatch):
    """Makes every run pause as often as it can (every few hundred cycles) and counts the
    pauses through a signal handler that fires every millisecond."""
    monkeypatch.setattr(wafer_module, "_CHECK_SECONDS", 0.0)
    seen = []
    old = signal.signal(signal.SIGALRM, lambda *_: seen.append(1))
    signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)

    def stop():
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        return len(seen)

    return stop


def _summary(stats):
    return (stats.start_cycle, stats.cycles, stats.quiescent, stats.moves, stats.injected,
            stats.delivered, stats.router_cycles, stats.parallel_phases,
            stats.latency_histogram.tolist(), stats.hop_histogram.tolist())


def _packets():
    # long enough (about 60 ms) that the millisecond timer fires several times during it
    tr = traffic.bernoulli("uniform", 16, 16, 0.2, 2000, seed=3)
    w = ws.Wafer(16, 16, "mesh+diag", mode="packets", diag_hop_cycles=2)
    w.inject(tr.src, 0, data=np.arange(len(tr)), dest=tr.dst, cycle=tr.cycle)
    return w


def test_a_run_that_pauses_often_gives_identical_results_packets(monkeypatch):
    whole = _packets()
    a = whole.run()
    stop = _pause_often(monkeypatch)
    try:
        paused = _packets()
        b = paused.run()
    finally:
        pauses = stop()
    assert pauses > 3, "the run did not pause"
    assert _summary(a) == _summary(b)
    assert np.array_equal(whole.counters().link_counts, paused.counters().link_counts)
    ca, cb = whole.collect(), paused.collect()
    assert np.array_equal(ca.data, cb.data) and np.array_equal(ca.arrived, cb.arrived)




def _deadlock():
    w = ws.Wafer(1, 2, watchdog=3000)  # the watchdog window spans many pauses
    w.pe(0, 0).load(SEND_THEN_RECEIVE.format(out=1, inp=2))
    w.pe(0, 1).load(SEND_THEN_RECEIVE.format(out=2, inp=1))
    w.route(1, [(0, 0), (0, 1)])
    w.route(2, [(0, 1), (0, 0)])
    w.launch("main")
    return w


def test_the_watchdog_counts_across_pauses(monkeypatch):
    whole = _deadlock()
    with pytest.raises(ws.DeadlockError) as a:
        whole.run()
    stop = _pause_often(monkeypatch)
    try:
        paused = _deadlock()
        with pytest.raises(ws.DeadlockError) as b:
            paused.run()
    finally:
        stop()
    assert whole.cycle == paused.cycle > 3000
    assert str(a.value) == str(b.value)


def _exchanges():
    """Four rows of PE pairs swapping 8 values each, next to a livelocked PE: wavelets,
    tasks and microthreads on every row, run by two threads."""
    w = ws.Wafer(4, 3, threads=2)
    exchange = SEND_THEN_RECEIVE.replace("20", "8")
    for r in range(4):
        w.pe(r, 0).load(exchange.format(out=1, inp=2))
        w.pe(r, 1).load(exchange.format(out=2, inp=1))
        w.route(1, [(r, 0), (r, 1)])
        w.route(2, [(r, 1), (r, 0)])
    w.pe(2, 2).load(LOOP)
    w.memcpy_h2d("x", np.arange(64, dtype=np.int16).reshape(4, 2, 8), rect=(0, 0, 4, 2))
    w.launch(40)
    w.parallel_min_routers = 0  # after the loads, which set their own default
    return w


def test_a_run_that_pauses_often_gives_identical_results_compute_elements(monkeypatch):
    whole = _exchanges()
    a = whole.run(max_cycles=30000)
    stop = _pause_often(monkeypatch)
    try:
        paused = _exchanges()
        b = paused.run(max_cycles=30000)
    finally:
        pauses = stop()
    assert pauses > 3, "the run did not pause"
    assert a.parallel_phases > 0 and a.delivered == 64
    assert _summary(a) == _summary(b)
    assert dict(a.pes.items()) == dict(b.pes.items())
    got = whole.memcpy_d2h("x", rect=(0, 0, 4, 2))
    assert np.array_equal(got, paused.memcpy_d2h("x", rect=(0, 0, 4, 2)))
    assert np.array_equal(got[:, 0], np.arange(64).reshape(4, 2, 8)[:, 1])  # swapped
