"""Sleeping compute elements (docs/fabric.md, "Sleeping endpoints"): a CE whose task stalls
on an empty input queue, or that runs a bulk vector operation, only counts cycles until a
wavelet reaches it (or the operation's counted cycles end); the cycle loop stops stepping
it, its router may leave the active set, and its counts are made up when it wakes.

Everything a user sees must be the same asleep or awake: results, cycle counts, every
per-PE statistic, the fabric's statistics (router_cycles included), trace spans, the
watchdog's verdict and its cycle, and what a run that stops mid-sleep leaves to read.
Each test runs the same thing with ``endpoint_sleep`` on and off and compares."""

import signal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wafersim as ws
from ce_bench import doubling_program
from wafersim.errors import ConfigError, WaferError
from wafersim.kernels import matvec


def _plain(stats):
    """A PE's statistics as comparable plain values (arrays to lists)."""
    out = {}
    for k, v in stats.items():
        if isinstance(v, np.ndarray):
            v = v.tolist()
        elif isinstance(v, dict):
            v = {kk: (vv.tolist() if isinstance(vv, np.ndarray) else vv) for kk, vv in v.items()}
        out[k] = v
    return out


def _run_view(s):
    return (s.cycles, s.quiescent, s.moves, s.injected, s.delivered, s.router_cycles,
            tuple(s.latency_histogram), tuple(s.hop_histogram))


def _pes_view(s):
    return {pe: _plain(s.pes[pe]) for pe in sorted(s.pes)}


def _both(f, must_sleep=True):
    """f(sleep) -> (what the user sees, slept cycles): the views asleep and awake, after
    checking that the CEs did sleep (and did not when told not to)."""
    asleep, slept = f(True)
    awake, none = f(False)
    assert none == 0 and (slept > 0 or not must_sleep)
    return asleep, awake


@pytest.mark.parametrize("size,block,threads", [(6, 4, 1), (6, 4, 2), (4, 8, 1)])
def test_program_3_is_identical_asleep_and_awake(size, block, threads):
    """y = A x on a grid: x's column broadcast, bulk multiply-adds and the row reduction
    of partial sums, where most PEs wait on their west neighbour (untimed sleeps) or
    count a bulk operation (timed sleeps)."""
    def one(sleep):
        r = matvec.run_grid(size, block, threads=threads, seed=5, endpoint_sleep=sleep,
                            parallel_min_routers=0)
        s = r["stats"]
        return (r["y"].tobytes(), _run_view(s), _pes_view(s)), s.slept_cycles

    asleep, awake = _both(one)
    assert asleep == awake
    assert asleep[1][5] > 0


@pytest.mark.parametrize("threads", [1, 2])
def test_a_ce_woken_during_a_timed_sleep_that_sleeps_again_until_the_same_cycle(threads):
    """Program 2 on two PEs with fp32 blocks of 8: a wavelet wakes a CE in the middle of a
    bulk operation's timed sleep, and it falls asleep again until the same cycle (the
    operation's end). Its wake at that cycle is counted once: the run ends when the work
    does, with the same cycles and statistics as awake."""
    def one(sleep):
        r = matvec.run_row(8, 16, 2, "fp32", 1.0, seed=0, endpoint_sleep=sleep,
                           threads=threads, cycle_limit=20_000)
        s = r["stats"]
        return (r["y"].tobytes(), _run_view(s), _pes_view(s)), s.slept_cycles

    asleep, awake = _both(one)
    assert asleep == awake
    assert asleep[1][1] and asleep[1][0] < 1000  # quiescent, long before the limit


@settings(max_examples=12, deadline=None)
@given(rows=st.integers(1, 4), cols=st.integers(1, 5), block=st.sampled_from([2, 4, 8]),
       density=st.sampled_from([0.3, 1.0]), dtype=st.sampled_from(["fp16", "fp32"]),
       threads=st.sampled_from([1, 2]), seed=st.integers(0, 99))
def test_random_grids_and_rows_are_identical_asleep_and_awake(rows, cols, block, density,
                                                               dtype, threads, seed):
    """Programs 3 and 2 over random shapes, sparsities and types (sparse x: fewer
    wavelets, longer waits)."""
    def one(sleep):
        g = matvec.run_grid(cols, block, dtype, density, seed=seed, rows=rows, check=False,
                            threads=threads, parallel_min_routers=0, endpoint_sleep=sleep)
        r = matvec.run_row(block, block * cols, cols, dtype, density, seed=seed,
                           endpoint_sleep=sleep)
        views = [(x["y"].tobytes(), _run_view(x["stats"]), _pes_view(x["stats"])) for x in (g, r)]
        return views, g["stats"].slept_cycles + r["stats"].slept_cycles

    asleep, awake = _both(one, must_sleep=False)   # (a 1 x 1 grid may have no wait)
    assert asleep == awake


def test_program_3_result_is_right_with_sleep():
    """An independent check beside the comparison: the exact reference of program 3."""
    r = matvec.run_grid(5, 4, seed=2)
    assert np.array_equal(r["y"], r["reference"])


def _waiting_pe(w, at):
    """A PE whose task reads 8 values of color 2 into memory, then ends."""
    p = w.pe(*at)
    p.load("""
    .data
    x:   .space i16, 8
    dx:  .dsd mem1d, base=x, length=8, stride=2
    din: .dsd fabric_in, length=8, sw=1, sc=1, utid=2
    .export x
    .code
    .task main, 40
    main: block 2
          lddwds D[0], dx
          lds1wds S1[0], din
          mov16.t D[0], S1[0]
    """)
    p.launch("main")
    return p


def test_a_pe_woken_by_wavelets_after_a_long_wait_counts_the_wait():
    """The PE stalls 300 cycles before the first of its wavelets arrives (injected at
    cycle 300): asleep, it must still count those stall cycles, and take each wavelet."""
    def one(sleep):
        w = ws.Wafer(1, 3, endpoint_sleep=sleep)
        p = _waiting_pe(w, (0, 2))
        w.route(2, [(0, 0), (0, 1), (0, 2)])
        w.inject((0, 0), 2, list(range(10, 18)), cycle=300)
        s = w.run()
        return (p.read("x").tolist(), _run_view(s), _pes_view(s)), s.slept_cycles

    asleep, awake = _both(one)
    assert asleep == awake
    assert asleep[0] == list(range(10, 18))
    pe = asleep[2][(0, 2)]
    assert pe["stall_cycles"] > 290 and pe["cycles"] > 300   # (the wavelets take a few hops)


def test_a_pe_that_waits_forever_deadlocks_at_the_same_cycle_with_the_same_report():
    """Nothing ever comes on color 2: the untimed sleeper makes no progress, so the
    watchdog fires exactly when it fires awake, and its report reads the same PE."""
    def one(sleep):
        w = ws.Wafer(1, 2, watchdog=150, endpoint_sleep=sleep)
        _waiting_pe(w, (0, 1))
        first = w.run(max_cycles=100)   # asleep by then
        with pytest.raises(ws.DeadlockError) as err:
            w.run()
        view = (_run_view(first), str(err.value), err.value.report, w.cycle,
                _plain(w.pe(0, 1).stats()))
        return view, first.slept_cycles

    asleep, awake = _both(one)
    assert asleep == awake
    assert "nothing moved for 150 cycles" in asleep[1]
    assert "compute element: task 40 running" in asleep[2]


LONG_BULK = doubling_program(6000)


def _bulk_wafer(sleep, watchdog=10_000, **ce):
    w = ws.Wafer(1, 2, watchdog=watchdog, endpoint_sleep=sleep,
                 ce=dict(memory_bytes=48 * 1024, **ce))
    for c in range(2):
        w.pe(0, c).load(LONG_BULK)
        w.pe(0, c).write("x", np.full(6000, 0.25 * (c + 1), np.float16))
        w.pe(0, c).launch("t")
    return w


def test_a_timed_sleep_longer_than_the_watchdog_is_progress():
    """1500 counted iterations with a 40-cycle watchdog and nothing else on the wafer:
    the timed sleep's cycles are work, as the iterations are awake."""
    def one(sleep):
        w = _bulk_wafer(sleep, watchdog=40)
        s = w.run()
        view = [w.pe(0, c).read("x").tobytes() for c in range(2)], _run_view(s), _pes_view(s)
        return view, s.slept_cycles

    asleep, awake = _both(one)
    assert asleep == awake
    assert asleep[1][0] > 1500 and asleep[1][1]
    assert np.all(np.frombuffer(asleep[0][1], np.float16) == np.float16(1.0))


@pytest.mark.parametrize("cut", [1, 2, 7, 500, 1499])
def test_a_run_that_stops_mid_sleep_leaves_everything_up_to_date(cut):
    """run(max_cycles=cut) ends inside the sleep: statistics and memory read then are
    those of that cycle, and the rest of the run goes on as one run would."""
    def one(sleep):
        w = _bulk_wafer(sleep, profile=True)
        first = w.run(max_cycles=cut)
        looks = [_run_view(first), _pes_view(first),
                 [w.pe(0, c).read("x").tobytes() for c in range(2)],
                 [_plain(w.pe(0, c).stats()) for c in range(2)]]
        rest = w.run()
        looks += [_run_view(rest), _pes_view(rest)]
        return looks, first.slept_cycles + rest.slept_cycles

    asleep, awake = _both(one)
    assert asleep == awake


def test_trace_spans_are_the_same_asleep():
    def one(sleep):
        w = ws.Wafer(1, 3, endpoint_sleep=sleep, ce={"trace": True})
        _waiting_pe(w, (0, 2))
        w.route(2, [(0, 0), (0, 1), (0, 2)])
        w.inject((0, 0), 2, list(range(8)), cycle=40)
        s = w.run(trace=True)
        return s.trace, s.slept_cycles

    asleep, awake = _both(one)
    assert asleep == awake and len(asleep) > 0


def test_pauses_of_a_run_change_nothing():
    """A run pauses (for Ctrl-C checks) whenever its time slice ends; a slice of 0 s
    pauses at every clock check. Sleepers sleep on through a pause; the run goes on as an
    unpaused one."""
    def one(sleep):
        w = _bulk_wafer(sleep)
        r = w._core.run(100_000, 0.0)
        r.pop("parallel_phases")
        slept = r.pop("slept_cycles")
        view = ({k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in r.items()},
                [w.pe(0, c).read("x").tobytes() for c in range(2)],
                [_plain(w.pe(0, c).stats()) for c in range(2)])
        return view, slept

    asleep, awake = _both(one)
    assert asleep == awake


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs setitimer")
def test_a_signal_handler_reading_a_pe_mid_run_sees_its_counts_up_to_date():
    """During a pause Python's signal handlers run, and may read a PE that sleeps: the
    wafer wakes it first, so its counts are those of the cycle the run paused at. The PE
    waits forever (from cycle 0, never idle), so each of its cycles so far is counted."""
    w = ws.Wafer(1, 2, watchdog=50_000_000)
    _waiting_pe(w, (0, 1))
    seen = []

    class Enough(Exception):
        pass

    def look(signum, frame):
        st = w.pe(0, 1).stats()
        seen.append((w.cycle, st["cycles"], st["stall_cycles"]))
        if len(seen) == 3:
            raise Enough

    old = signal.signal(signal.SIGALRM, look)
    signal.setitimer(signal.ITIMER_REAL, 0.15, 0.15)
    try:
        with pytest.raises(Enough):
            w.run(max_cycles=10**9)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert len(seen) == 3 and seen[0][0] > 1000     # (it ran a while before each look)
    for cycle, cycles, stalls in seen:
        assert cycles == cycle and 0 < stalls < cycles
    st = w.pe(0, 1).stats()                          # and after the run stopped
    assert st["cycles"] == w.cycle


def test_endpoint_sleep_setting():
    w = ws.Wafer(2, 2)
    assert w.endpoint_sleep is True
    w.endpoint_sleep = False
    assert w.endpoint_sleep is False and ws.Wafer(2, 2, endpoint_sleep=False).endpoint_sleep is False
    for bad in (1, "yes", None):
        with pytest.raises(ConfigError, match="endpoint_sleep"):
            w.endpoint_sleep = bad
    assert issubclass(ConfigError, WaferError)
