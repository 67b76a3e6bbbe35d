"""Row work: the cycle loop's record of each row phase (Wafer.record_row_work), and what
wafersim.row_work computes from it, checked against hand-counted cases."""

import numpy as np
import pytest

import wafersim as ws
from wafersim import row_work
from wafersim.kernels.matvec import run_grid
from wafersim.row_work import RowWork, chunk_model, fastest, whole_row_bound


def row_route_wafer():
    """One wavelet stream along row 2 of a 4 x 6 wafer: only row 2 has work."""
    w = ws.Wafer(4, 6)
    w.route(1, path=[(2, c) for c in range(6)])
    w.inject((2, 0), 1, data=np.arange(10))
    return w


def test_off_by_default_and_records_nothing():
    w = row_route_wafer()
    assert w.record_row_work is False
    w.run()
    assert len(w.row_work()) == 0


def test_records_the_phases_the_cycle_loop_ran():
    w = row_route_wafer()
    w.record_row_work = True
    s = w.run()
    work = w.row_work()
    a, b = work.phase == 0, work.phase == 1
    # Phase A runs on rows with active routers: only row 2 carries the stream.
    assert set(work.row[a].tolist()) == {2}
    # Phase B runs on row 2 (and on rows next to a row that sent on a link); its routers
    # are the routers processed, which the run counts as router_cycles.
    assert set(work.row[b].tolist()) <= {1, 2, 3} and 2 in set(work.row[b].tolist())
    assert int(work.routers[b].sum()) == s.router_cycles
    assert work.cycle.min() >= s.start_cycle and work.cycle.max() < s.start_cycle + s.cycles
    keys = list(zip(work.cycle.tolist(), work.row.tolist(), work.phase.tolist()))
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert (work.ns > 0).all()
    assert len(w.row_work()) == 0  # taken: forgotten


def test_recording_changes_no_result():
    plain = row_route_wafer()
    plain.run()
    recorded = row_route_wafer()
    recorded.record_row_work = True
    recorded.run()
    a, b = plain.collect(), recorded.collect()
    for f in ("row", "col", "data", "arrived"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f


def test_the_same_phases_are_recorded_on_one_and_two_threads(monkeypatch):
    """The chunked cycles of several threads record each row phase once, as one thread
    does (only the times differ)."""
    taken = []
    real_run = ws.Wafer.run

    def run(self, *args, **kwargs):
        self.record_row_work = True
        self.parallel_min_routers = 0  # every cycle in the threads
        out = real_run(self, *args, **kwargs)
        taken.append(self.row_work())
        return out

    monkeypatch.setattr(ws.Wafer, "run", run)
    stats = [run_grid(16, 4, rows=16, seed=3, check=False, threads=t)["stats"] for t in (1, 2)]
    assert stats[0].parallel_phases == 0 and stats[1].parallel_phases > 0
    one, two = taken
    for f in ("cycle", "row", "phase", "routers"):
        assert np.array_equal(getattr(one, f), getattr(two, f)), f


def test_record_row_work_refuses_what_is_not_a_bool():
    w = ws.Wafer(2, 2)
    with pytest.raises(ws.ConfigError, match="record_row_work"):
        w.record_row_work = 1


def made(rows, phases):
    """A RowWork from (cycle, row, routers, ns) phases A."""
    c, r, n, t = (np.array(x) for x in zip(*phases))
    return RowWork(cycle=c, row=r, phase=np.zeros(len(c), np.uint8), routers=n, ns=t, rows=rows)


EVEN = made(4, [(0, 0, 1, 10), (0, 1, 1, 10), (0, 2, 1, 10), (0, 3, 1, 10)])
HEAVY = made(4, [(0, 0, 1, 30), (0, 1, 1, 10), (0, 2, 1, 10), (0, 3, 1, 10)])


def test_whole_row_bound_by_hand():
    # Four rows of 10: n threads take max(40 / n, 10).
    assert whole_row_bound(EVEN, 2) == pytest.approx(2.0)
    assert whole_row_bound(EVEN, 4) == pytest.approx(4.0)
    assert whole_row_bound(EVEN, 8) == pytest.approx(4.0)
    # A row of 30 among rows of 10: no cycle takes under 30 of its 60.
    assert whole_row_bound(HEAVY, 2) == pytest.approx(2.0)
    assert whole_row_bound(HEAVY, 4) == pytest.approx(2.0)
    # Two cycles add their least times: (60 / 2 = 30) + (40 / 2 = 20).
    both = made(4, [(0, 0, 1, 30), (0, 1, 1, 10), (0, 2, 1, 10), (0, 3, 1, 10),
                    (1, 0, 1, 10), (1, 1, 1, 10), (1, 2, 1, 10), (1, 3, 1, 10)])
    assert whole_row_bound(both, 2) == pytest.approx(100 / 50)


def test_chunk_model_by_hand():
    # Two threads, four one-row chunks (8 allowed, 4 active rows): blocks {0, 1}, {2, 3}.
    assert chunk_model(EVEN, 2) == pytest.approx(2.0)
    # Thread 0 runs row 0 (30); thread 1 rows 2 and 3 (to 20), then takes row 1 from the
    # back of thread 0's block (20 to 30): 60 in 30. Without taking it, 40.
    assert chunk_model(HEAVY, 2) == pytest.approx(2.0)
    # One chunk per thread: the routers cut rows {0, 1} and {2, 3}: 40 against 20.
    assert chunk_model(HEAVY, 2, chunks_per_thread=1) == pytest.approx(60 / 40)
    # Chunks cut at equal routers: row 0 holds 3 of 6 routers, so it is a chunk alone.
    skewed = made(4, [(0, 0, 3, 30), (0, 1, 1, 10), (0, 2, 1, 10), (0, 3, 1, 10)])
    assert chunk_model(skewed, 2, chunks_per_thread=1) == pytest.approx(60 / 30)
    # Below the loop's floor a cycle runs in one thread.
    assert chunk_model(EVEN, 2, min_routers=5) == pytest.approx(1.0)


def test_chunk_model_gives_edge_rows_phase_b_after_both_chunks():
    """Two chunks of two rows, one per thread, phases A and B of 10 on every row: each
    chunk runs its rows' phases A and its outer row's phase B (30); rows 1 and 2, next to
    the cut, get phase B from the thread that finishes last, after both: 50 for 80."""
    entries = sorted([(0, r, 1, 10, p) for r in range(4) for p in (0, 1)],
                     key=lambda e: (e[0], e[1], e[4]))
    c, r, n, t, p = (np.array(x) for x in zip(*entries))
    work = RowWork(cycle=c, row=r, phase=p.astype(np.uint8), routers=n, ns=t, rows=4)
    assert chunk_model(work, 2, chunks_per_thread=1) == pytest.approx(80 / 50)
    # One-row chunks: every row is an edge row, and each thread's last chunk completes
    # two of them (40 each): 80 in 40.
    assert chunk_model(work, 2) == pytest.approx(2.0)
    assert whole_row_bound(work, 2) == pytest.approx(2.0)


def test_domain_model_by_hand():
    # Two processes, one block each: rows {0, 1} and {2, 3}.
    assert row_work.domain_model(EVEN, 2, 1) == pytest.approx(2.0)
    assert row_work.domain_model(HEAVY, 2, 1) == pytest.approx(60 / 40)
    assert row_work.domain_model(EVEN, 1, 1) == pytest.approx(1.0)
    # A wave two rows deep: rows 0-1 work in cycle 0, rows 2-3 in cycle 1. One block per
    # process puts each cycle's work on one process (40 in 40); two blocks of one row each
    # (rows 0, 2 and 1, 3) share every cycle (40 in 20).
    wave = made(4, [(0, 0, 1, 10), (0, 1, 1, 10), (1, 2, 1, 10), (1, 3, 1, 10)])
    assert row_work.domain_model(wave, 2, 1) == pytest.approx(1.0)
    assert row_work.domain_model(wave, 2, 2) == pytest.approx(2.0)
    # More blocks than the rows allow are lowered, as deal_rows lowers them.
    assert row_work.domain_model(wave, 2, 9) == pytest.approx(2.0)
    with pytest.raises(ws.ConfigError, match="processes"):
        row_work.domain_model(EVEN, 0, 1)
    with pytest.raises(ws.ConfigError, match="blocks"):
        row_work.domain_model(EVEN, 2, 0)


def test_analysis_refuses_bad_thread_counts():
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ws.ConfigError, match="threads"):
            whole_row_bound(EVEN, bad)
        with pytest.raises(ws.ConfigError, match="threads"):
            row_work.chunk_model(EVEN, bad)
    with pytest.raises(ws.ConfigError, match="chunks_per_thread"):
        chunk_model(EVEN, 2, chunks_per_thread=0)


def test_fastest_takes_each_phase_least_time_and_refuses_other_runs():
    slow = made(4, [(0, 0, 1, 90), (0, 1, 1, 10), (0, 2, 1, 10), (0, 3, 1, 10)])
    other = made(4, [(0, 0, 1, 10), (0, 1, 1, 40), (0, 2, 1, 10), (0, 3, 1, 10)])
    assert fastest([slow, other]).ns.tolist() == [10, 10, 10, 10]
    assert fastest([HEAVY]).ns.tolist() == [30, 10, 10, 10]
    moved = made(4, [(0, 0, 1, 10), (0, 1, 1, 10), (0, 2, 2, 10), (0, 3, 1, 10)])
    with pytest.raises(ws.ConfigError, match="not of the same run"):
        fastest([EVEN, moved])
    with pytest.raises(ws.ConfigError, match="at least one"):
        fastest([])
