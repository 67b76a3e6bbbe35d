"""A wafer split into domains of rows (docs/scale.md, "One wafer over several processes"):
the domains run here as threads of one process, joined by an in-memory link, each building
the same wafer as a script under mpiexec would; every result is compared with the same
wafer run undivided."""
import threading

import numpy as np
import pytest

import wafersim as ws
from wafersim.domains import auto_blocks, deal_rows, split_over, split_rows
from repo_scripts import load_script


class _Hub:
    def __init__(self, n):
        self.box, self.slots = {}, [None] * n
        self.barrier = threading.Barrier(n, timeout=60)  # a hang fails the test


class _ThreadLink:
    def __init__(self, hub, i):
        self.hub, self.i = hub, i

    def start_swap(self, pairs):
        for nb, send, _ in pairs:
            self.hub.box[(self.i, nb)] = send.copy()

    def finish_swap(self, pairs):
        self.hub.barrier.wait()
        for nb, _, recv in pairs:
            sent = self.hub.box[(nb, self.i)]
            recv[:len(sent)] = sent
        self.hub.barrier.wait()

    def allgather_obj(self, obj):
        self.hub.slots[self.i] = obj
        self.hub.barrier.wait()
        out = list(self.hub.slots)
        self.hub.barrier.wait()
        return out

    def allgather_array(self, values):
        every = self.allgather_obj(values.copy())
        at = np.concatenate([[0], np.cumsum([len(v) for v in every])]).astype(np.int64)
        return np.concatenate(every), at

    def allgather(self, values):
        return np.stack(self.allgather_obj(values.copy()))


def _split(n, script, blocks=1):
    """script() in n threads, each one domain (``blocks`` blocks of rows each, dealt
    round-robin); returns [(result, exception)] by domain."""
    hub = _Hub(n)
    out = [None] * n

    def go(i):
        with split_over(_ThreadLink(hub, i), i, n, blocks):
            try:
                out[i] = (script(), None)
            except Exception as e:  # noqa: BLE001 (compared by the test)
                out[i] = (None, e)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert all(o is not None for o in out), "a domain did not finish"
    return out


def test_split_rows_gives_contiguous_blocks_and_refuses_more_parts_than_rows():
    assert split_rows(7, 3) == [(0, 3), (3, 5), (5, 7)]
    assert split_rows(4, 4) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    with pytest.raises(ws.ConfigError, match="7 rows splits into 1..7 domains.*got 8"):
        split_rows(7, 8)


def test_deal_rows_deals_blocks_round_robin_and_lowers_the_count_to_fit():
    assert deal_rows(7, 3) == [[(0, 3)], [(3, 5)], [(5, 7)]]
    assert deal_rows(10, 2, 3) == [[(0, 2), (4, 6), (8, 9)], [(2, 4), (6, 8), (9, 10)]]
    assert deal_rows(5, 2, 4) == [[(0, 2), (3, 4)], [(2, 3), (4, 5)]]  # 2 blocks each
    with pytest.raises(ws.ConfigError, match="integer >= 1, got 0"):
        deal_rows(7, 2, 0)


def test_auto_blocks_deal_blocks_of_about_twelve_rows():
    """Without WAFERSIM_MPI_BLOCKS a wafer picks blocks of about 12 rows (measured,
    docs/scale.md), at least one per domain."""
    assert auto_blocks(757, 2) == 31 and auto_blocks(128, 2) == 5
    assert auto_blocks(47, 2) == 1 and auto_blocks(48, 2) == 2 and auto_blocks(5, 3) == 1
    blocks = deal_rows(757, 2, auto_blocks(757, 2))
    sizes = [hi - lo for d in blocks for lo, hi in d]
    assert len(sizes) == 62 and set(sizes) == {12, 13} and sum(sizes) == 757


def _wide_backpressure():
    """Backpressure up a column past the 64th (the second word of a row's stall bitmap)
    and along a row, across the cuts."""
    w = ws.Wafer(50, 70, queue_depth=2)
    w.route(2, path=[(r, 66) for r in range(50)])
    w.route(3, path=[(49, c) for c in range(60, 70)] + [(r, 69) for r in range(48, -1, -1)])
    w.set_sink((49, 66), capacity=1, drain_period=4)
    w.set_sink((0, 69), capacity=1, drain_period=3)
    w.inject((0, 66), 2, data=np.arange(80))
    w.inject((49, 60), 3, data=np.arange(50) + 1000, cycle=3)
    s = w.run()
    return s, w.collect()


@pytest.mark.parametrize("n,blocks", [(2, None), (2, 25), (3, 4)])
def test_stall_bits_past_the_first_64_columns_cross_the_cuts_exactly(n, blocks):
    """The stall bits after phase B travel sparse (a bitmap of the nonzero words, then the
    words; sim/cut_messages.hpp): a wafer of 70 columns whose queues back up across many
    cuts gives one process's arrivals, cycles and latencies (blocks None: the default,
    2 blocks of 12-13 rows per domain here; 25: blocks of 1 row)."""
    ref_stats, ref_arr = _wide_backpressure()
    assert ref_stats.cycles > 150  # the sinks held the senders back
    for (s, a), err in _split(n, _wide_backpressure, blocks):
        assert err is None
        _same_stats(s, ref_stats)
        for k in ("row", "col", "data", "arrived", "hops"):
            assert np.array_equal(getattr(a, k), getattr(ref_arr, k)), k


def test_cut_messages_refuse_short_or_foreign_buffers():
    """What the transport hands the core is checked before it is read: a message cut
    short raises WaferError, never a read past the buffer."""
    from wafersim._extension import core

    w = ws.Wafer(4, 70)
    msgs = core.fabric.CutMessages(w._core, [[(1, 2)]])
    n = msgs.sends_capacity(0)
    assert n > 1  # a flag byte and one cut's sends
    with pytest.raises(ws.WaferError, match="cut short"):
        msgs.write_sends(0, 0, np.zeros(n - 1, np.uint8))
    flagged = np.zeros(n, np.uint8)
    flagged[0] = 1  # says the cut's sends follow, but none do
    with pytest.raises(ws.WaferError, match="cut short"):
        msgs.read_sends(0, 0, flagged[:10])
    msgs.read_sends(0, 0, np.zeros(1, np.uint8))  # nothing crossed: one flag byte
    m = msgs.border_capacity(0)
    out = np.zeros(m, np.uint64)
    used = msgs.write_borders(0, out)
    assert used == 2  # no stall bits: row 1's bitmap of 2 words, nothing after it
    msgs.read_borders(0, out[:used])
    bad = np.zeros(2, np.uint64)
    bad[1] = 0b101  # two stall words announced, none given
    with pytest.raises(ws.WaferError, match="cut short"):
        msgs.read_borders(0, bad)
    with pytest.raises(ws.ConfigError, match="neighbour 1 of 1"):
        msgs.border_capacity(1)
    with pytest.raises(ws.ConfigError, match="neighbouring rows"):
        core.fabric.CutMessages(w._core, [[(0, 2)]])


def _traffic():
    w = ws.Wafer(9, 7, "mesh+diag", queue_depth=2)
    w.route_tree(3, (0, 0), [(8, 6), (8, 0), (4, 3)], "diag_first")
    w.route(4, path=[(8, 6), (7, 5), (6, 4), (5, 3), (4, 2), (3, 1), (2, 0)])
    w.route(5, path=[(8, 2), (7, 2), (6, 2), (5, 2), (4, 2), (3, 2), (2, 2), (1, 2)])
    w.set_sink((1, 2), capacity=1, drain_period=3)  # backpressure across the cuts
    w.inject((0, 0), 3, data=np.arange(60))
    w.inject((8, 6), 4, data=np.arange(40) + 100)
    w.inject((8, 2), 5, data=np.arange(30) + 500, cycle=5)
    s = w.run()
    a = w.collect()
    return s, a, w.counters().link_counts


def _same_stats(a, b):
    for k in ("cycles", "quiescent", "moves", "injected", "delivered", "router_cycles"):
        assert getattr(a, k) == getattr(b, k), k
    assert a.latency.count == b.latency.count and a.latency.total == b.latency.total
    assert a.latency.max == b.latency.max
    assert np.array_equal(a.hop_histogram, b.hop_histogram)


@pytest.mark.parametrize("n,blocks", [(2, 1), (3, 1), (9, 1), (2, 3), (3, 2)])
def test_host_traffic_with_backpressure_is_bit_identical_in_domains(n, blocks):
    ref_stats, ref_arr, _ = _traffic()
    for (s, a, _), err in _split(n, _traffic, blocks):
        assert err is None
        _same_stats(s, ref_stats)
        for k in ("row", "col", "port", "color", "data", "index", "ctrl", "hops", "injected",
                  "arrived"):
            assert np.array_equal(getattr(a, k), getattr(ref_arr, k)), k


@pytest.mark.parametrize("n,threads,blocks", [(2, 1, 1), (3, 1, 1), (2, 2, 1), (2, 1, 2),
                                              (2, 2, 2)])
def test_program_3_on_compute_elements_is_bit_identical_in_domains(n, threads, blocks):
    """One thread per domain steps the border rows first and the inner rows interleaved;
    two threads (forced on every cycle) step the domain in two sweeps; a domain of
    several blocks of rows has border rows in each."""
    mod = load_script("examples/kernels/matvec_wafer.py")

    def script():
        return mod.run_grid(6, 4, "fp16", density=0.8, rows=5, seed=3, check=False,
                            threads=threads, parallel_min_routers=1 if threads > 1 else None)

    ref = script()
    for r, err in _split(n, script, blocks):
        assert err is None
        assert np.array_equal(r["y"].view(np.uint16), ref["y"].view(np.uint16))
        _same_stats(r["stats"], ref["stats"])
        assert (r["stats"].parallel_phases > 0) == (threads > 1)
        assert sorted(r["stats"].pes) == sorted(ref["stats"].pes)
        for pe in ref["stats"].pes:
            a, b = r["stats"].pes[pe], ref["stats"].pes[pe]
            assert (a["cycles"], a["busy_cycles"], a["instructions"], a["tasks_started"]) == \
                   (b["cycles"], b["busy_cycles"], b["instructions"], b["tasks_started"])


def test_a_deadlock_ends_every_domain_with_the_same_message_0306():
    def script():
        w = ws.Wafer(4, 2, watchdog=50)
        w.route(1, path=[(0, 0), (1, 0), (2, 0), (3, 0)])
        w.set_sink((3, 0), capacity=1)  # never drained: the stream stops for good
        w.inject((0, 0), 1, data=np.arange(10))
        w.run()

    ref = None
    try:
        script()
    except ws.DeadlockError as e:
        ref = e.args[0]
    assert ref is not None
    for _, err in _split(2, script):
        assert isinstance(err, ws.DeadlockError) and err.args[0] == ref


def test_different_wafers_on_the_domains_are_refused_on_every_one():
    widths, lock = iter([3, 4]), threading.Lock()

    def script():
        with lock:
            cols = next(widths)
        return ws.Wafer(4, cols)

    for _, err in _split(2, script):
        assert isinstance(err, ws.ConfigError) and "built different wafers" in str(err)


def test_loop_links_on_two_rows_are_refused_when_split():
    """(More rows split with loop links: tests/test_domain_cuts.py.)"""
    for _, err in _split(2, lambda: ws.Wafer(2, 3, loop=True)):
        assert isinstance(err, ws.ConfigError) and "loop" in str(err)


def test_the_first_failing_pe_is_raised_on_every_domain_as_in_one_process():
    """The error of the domain whose PE fails first in the one-thread order reaches every
    domain: the same class and message as one process raises (tests/test_wafer_deadlock.py)."""
    from test_wafer_deadlock import FAIL

    def script():
        w = ws.Wafer(8, 8)
        w.load(FAIL.format(delay=20), rect=(1, 0, 7, 8))
        w.pe(6, 5).load(FAIL.format(delay=3))  # fails first, in the last domain
        w.launch("main")
        w.run()

    with pytest.raises(ws.MemoryAccessError) as ref:
        script()
    for _, err in _split(3, script):
        assert type(err) is ws.MemoryAccessError
        assert err.args[0] == ref.value.args[0] and str(err).startswith("PE(6,5) pc")


@pytest.mark.parametrize("busy", [(4,), (1, 4), (3, 4)])
def test_a_load_over_a_busy_pe_raises_one_process_error_on_every_domain(busy):
    """reset_ces checks every PE before changing one: one process raises the ConfigError
    of the first busy PE (router order) and keeps every program. Split over 2 domains
    (rows 0-2 and 3-5, or rows dealt in blocks of one: 0, 2, 4 and 1, 3, 5), every domain
    raises that error, also when the first busy PE lies on the other domain and a later
    one on its own, and no domain loads anything."""
    from test_wafer_pe import COPY

    def script():
        w = ws.Wafer(6, 2)
        first = w.load(COPY, rect=(0, 0, 6, 1))
        for r in busy:
            w.launch("main", rect=(r, 0, 1, 1))  # an active task: not idle
        try:
            w.load(COPY, rect=(0, 0, 6, 1))  # assembled again: another Program
            return None
        except ws.ConfigError as e:
            return str(e), all(w.pe(r, 0).program is first for r in range(6))

    message, kept = script()
    assert message.startswith(f"PE ({busy[0]}, 0) is still busy") and kept
    for blocks in (1, 3):
        for got, err in _split(2, script, blocks):
            assert err is None
            assert got == (message, True)


def test_each_domain_holds_only_its_rows_pes_and_host_copies_reach_every_domain():
    """A split wafer keeps a PE's compute element and memory on the process of its row
    only; memcpy_h2d / stream_h2d / capture write there, and memcpy_d2h / stream_d2h give
    every domain the whole rectangle, equal to one process's (tests/test_host_streams.py)."""
    from test_host_streams import RECEIVER, X, Y, start

    n, rect = 3, (0, 1, 5, 3)

    def script():
        w = ws.Wafer(5, 4)
        w.load(RECEIVER.format(n=n), rect=rect)
        w.capture(Y, rect=rect)
        start(w, rect)
        x = (np.arange(5 * 3 * n) - 20).astype(np.float16).reshape(5, 3, n)
        w.stream_h2d(X, x, rect=rect)
        stats = w.run()
        held = sorted(int(i) // 4 for i in w._core.ce_ids())
        held_rows = (held[0], held[-1]) if held else None
        try:
            w.pe(4, 2).stats()
            refused = None
        except ws.ConfigError as e:
            refused = str(e)
        return (w.memcpy_d2h("buf", rect=rect), w.stream_d2h(Y, rect=rect), w.loaded_pes,
                stats.pes[(4, 2)]["wavelets_in"], held_rows, refused)

    buf, out, loaded, fed, _, _ = script()
    assert np.array_equal(out, buf + buf) and fed == n  # the kernel did run
    for i, ((b, o, lp, f, held_rows, refused), err) in enumerate(_split(2, script)):
        assert err is None
        assert np.array_equal(b, buf) and np.array_equal(o, out) and lp == loaded and f == fed
        lo, hi = split_rows(5, 2)[i]
        assert held_rows == (lo, hi - 1)
        if i == 0:
            assert "(4, 2) is held by process 1 of 2 (this is process 0)" in refused
        else:
            assert refused is None
    # Blocks dealt round-robin: rows 0-1, 3 on process 0, rows 2, 4 on process 1.
    for i, ((b, o, lp, f, held_rows, refused), err) in enumerate(_split(2, script, 2)):
        assert err is None
        assert np.array_equal(b, buf) and np.array_equal(o, out) and lp == loaded and f == fed
        assert held_rows == [(0, 3), (2, 4)][i]
        assert (refused is None) == (i == 1)


@pytest.mark.parametrize("rows_failing", [(2, 3), (3, 4), (0, 3), (4, 7)])
def test_pes_failing_in_the_same_cycle_on_border_and_inner_rows_raise_one_process_error(
        rows_failing):
    """A domain steps its border rows' phase A first; when PEs of several rows fail in one
    cycle every domain still raises the error of the first row in the one-thread order."""
    from test_wafer_deadlock import FAIL

    def script():
        w = ws.Wafer(8, 3)
        w.load(FAIL.format(delay=20))
        for r in rows_failing:
            w.pe(r, 1).load(FAIL.format(delay=3))
        w.launch("main")
        w.run()

    with pytest.raises(ws.MemoryAccessError) as ref:
        script()
    assert str(ref.value).startswith(f"PE({rows_failing[0]},1) pc")
    for n, blocks in ((2, 1), (3, 1), (2, 3)):
        for _, err in _split(n, script, blocks):
            assert type(err) is ws.MemoryAccessError and err.args[0] == ref.value.args[0]


@pytest.mark.parametrize("n,blocks", [(2, 1), (3, 2)])
def test_the_cycle_limit_error_names_every_domains_running_pes_as_in_one_process(n, blocks):
    """CycleLimitError lists the PEs still running on the whole wafer (gathered from the
    processes that hold them), in one process's order (tests/test_hardening_run.py)."""
    loop = ".code\n.task main, 40\nmain: jmp main\n"

    def script():
        w = ws.Wafer(6, 3, cycle_limit=300)
        for pe in ((0, 1), (2, 2), (3, 0), (5, 1)):
            w.pe(*pe).load(loop)
        w.launch(40)
        w.run()

    with pytest.raises(ws.CycleLimitError) as ref:
        script()
    assert str(ref.value).count("task main (40) at pc") == 4
    for _, err in _split(n, script, blocks):
        assert type(err) is ws.CycleLimitError and err.args[0] == ref.value.args[0]
