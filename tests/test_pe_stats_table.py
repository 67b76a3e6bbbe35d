"""The compact table of per-PE statistics that processes of a split wafer swap
(docs/scale.md, "What each rank holds"): it maps (row, col) to what a dict of the same
pairs would, whatever order the processes' parts come in."""
import numpy as np
import pytest

from wafersim.pe_stats_table import PackedPeStats


def test_joined_parts_map_every_pe_like_a_dict_in_router_order():
    cols = 5
    rng = np.random.default_rng(0)
    pairs = []
    for rid in sorted(rng.choice(40, 17, replace=False).tolist()):
        if rid % 7 == 3:  # a PE with trace spans: its stats stay a dict
            pairs.append((rid, {"cycles": rid, "task_spans": [(0, rid)]}))
        else:
            pairs.append((rid, bytes(rng.integers(0, 256, rid % 4 * 10, np.uint8))))
    want = {(rid // cols, rid % cols): s for rid, s in pairs}
    # Two processes holding interleaved blocks of rows (0-2, 5-7 and 3-4), process 1's
    # part first: the join still comes out in router order.
    rows_of = [lambda r: r < 3 or r >= 5, lambda r: 3 <= r < 5]
    parts = [PackedPeStats.from_rows(cols, [p for p in pairs if rows_of[k](p[0] // cols)])
             for k in (1, 0)]
    table = PackedPeStats.join([PackedPeStats(*p.parts()) for p in parts])
    assert list(table) == sorted(want)
    assert len(table) == len(want)
    for pe, s in want.items():
        assert table[pe] == s
    missing = next((r, c) for r in range(8) for c in range(cols) if (r, c) not in want)
    with pytest.raises(KeyError):
        table[missing]
    with pytest.raises(KeyError):
        table[(0, cols)]  # not a PE of this wafer (the id of (1, 0))


@pytest.mark.parametrize("trace", [False, True])
def test_the_cores_table_holds_what_ce_run_stats_gives(trace):
    """Wafer.ce_run_stats_table (one C++ pass) against ce_run_stats(packed=True) pairs:
    packed counters, or the full dict when the run traced the PEs."""
    from wafersim.kernels.matvec import run_grid

    w = run_grid(3, 4, "fp16", rows=2, seed=1, check=False)["wafer"]
    w._core.set_ce_trace(trace)
    w.launch("main")
    w.run()
    pairs = w._core.ce_run_stats(packed=True)
    ids, ends, blob, full = w._core.ce_run_stats_table()
    table = PackedPeStats(3, ids, ends - np.diff(ends, prepend=0), ends, blob, full)
    want = {(int(rid) // 3, int(rid) % 3): s for rid, s in pairs}
    assert len(want) == 6 and list(table) == sorted(want)
    assert all(isinstance(s, dict) == trace for s in want.values())
    for pe, s in want.items():
        assert table[pe] == s


def same_stats(a, b) -> bool:
    """Statistics dicts (some values numpy arrays) or packed bytes, equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("profile", [False, True])
def test_the_table_is_the_same_built_by_one_or_several_threads(profile):
    """Wafer::ce_run_stats_table packs contiguous ranges of PEs in the wafer's threads (at
    least 4,096 PEs each) and joins them in router order: 9,216 PEs give two ranges with 3
    threads. The ids, offsets, bytes and the whole statistics of profiled PEs equal one
    thread's table and what ce_run_stats gives one PE at a time."""
    from wafersim.kernels.matvec import run_grid

    tables = []
    for threads in (1, 3):
        w = run_grid(96, 2, "fp16", seed=1, check=False, threads=threads)["wafer"]
        if profile:  # busy cycles by pc: these statistics stay whole (dicts)
            w._core.set_ce_profile(True)
            w.launch("main")
            w.run()
        ids, ends, blob, whole = w._core.ce_run_stats_table()
        assert len(ids) == 96 * 96 and len(whole) == (96 * 96 if profile else 0)
        pairs = w._core.ce_run_stats(packed=True)
        table = PackedPeStats(96, ids, ends - np.diff(ends, prepend=0), ends, blob, whole)
        want = {(int(rid) // 96, int(rid) % 96): s for rid, s in pairs}
        assert list(table) == sorted(want)
        for pe, s in want.items():
            assert same_stats(table[pe], s)
        tables.append((ids, ends, bytes(blob), whole))
    (ids1, ends1, blob1, whole1), (ids3, ends3, blob3, whole3) = tables
    assert np.array_equal(ids1, ids3) and np.array_equal(ends1, ends3) and blob1 == blob3
    assert whole1.keys() == whole3.keys()
    assert all(same_stats(whole1[k], whole3[k]) for k in whole1)
    assert profile or ends1[-1] > 96 * 96 * 8  # every PE counted something
