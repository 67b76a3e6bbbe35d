"""Chunked cycles (docs/fabric.md, "Threads"): with several threads, a cycle's two phases
run as one job of chunks of consecutive rows, each chunk in the interleaved order of one
thread, a chunk's edge rows getting their phase B once the neighbouring chunks are done.
Everything must be what one thread computes, for any thread count (so any chunking, down
to chunks of one row): arrivals, counters and statistics in color and packet mode, over
1- and 2-cycle diagonal links, with rows that are idle between busy ones, with compute
elements, and the error a failing cycle raises. One thread is the reference: it runs the
interleaved order without chunks. Chunks are cut at equal shares of the active routers, so
a row that holds most of them ("skewed" traffic) is a chunk of its own and the rows after
it are shared out one or two at a time."""

import numpy as np
import pytest

import wafersim as ws
from wafersim.kernels import matvec


def _traffic(threads, mode, hop, sparse, chunks=None):
    """Random traffic on a 23 x 9 mesh with diagonals (more rows than 5 threads have
    chunks, so chunks of one and two rows); `sparse`: only a few rows send and receive;
    "skewed": nine in ten wavelets start and end on row 3."""
    rng = np.random.default_rng(11)
    rows, cols = 23, 9
    w = ws.Wafer(rows, cols, "mesh+diag", mode=mode, threads=threads, diag_hop_cycles=hop)
    w.parallel_min_routers = 0  # every cycle with two or more busy rows is chunked
    if chunks is not None:
        w.chunks_per_thread = chunks
    if sparse == "skewed":
        pick = lambda n: np.where(rng.random(n) < 0.9, 3, rng.integers(0, rows, n))  # noqa: E731
    elif sparse:
        pick = lambda n: rng.choice([2, 3, 11, 19], n)  # noqa: E731
    else:
        pick = lambda n: rng.integers(0, rows, n)  # noqa: E731
    if mode == "packets":
        n = 3000
        src = np.stack([pick(n), rng.integers(0, cols, n)], 1)
        dst = np.stack([pick(n), rng.integers(0, cols, n)], 1)
        w.inject(src, 0, data=np.arange(n), dest=dst, cycle=rng.integers(0, 200, n))
    else:
        for color in range(24):
            src = (int(pick(1)[0]), int(rng.integers(cols)))
            dsts = [(int(r), int(c)) for r, c in zip(pick(12), rng.integers(0, cols, 12))]
            w.route_tree(color, src, dsts, "diag_first")
            w.inject(src, color, data=np.arange(60), cycle=rng.integers(0, 200, 60))
    s = w.run()
    a = w.collect()
    c = w.counters()
    view = (s.cycles, s.moves, s.injected, s.delivered, s.router_cycles,
            tuple(s.latency_histogram), tuple(s.hop_histogram),
            tuple(getattr(a, f).tobytes() for f in ("row", "col", "color", "data", "hops",
                                                    "injected", "arrived")),
            c.link_counts.tobytes(), c.occupancy_sum.tobytes(), c.router_traversals.tobytes())
    return view, s.parallel_phases


@pytest.mark.parametrize("sparse", [False, True, "skewed"])
@pytest.mark.parametrize("hop", [1, 2])
@pytest.mark.parametrize("mode", ["colors", "packets"])
def test_chunked_cycles_compute_what_one_thread_computes(mode, hop, sparse):
    one, parallel = _traffic(1, mode, hop, sparse)
    assert parallel == 0
    for threads in (2, 3, 5):
        view, parallel = _traffic(threads, mode, hop, sparse)
        assert parallel > 0  # the chunked cycles ran
        assert view == one, threads


@pytest.mark.parametrize("sparse", [False, "skewed"])
def test_any_number_of_chunks_per_thread_computes_what_one_thread_computes(sparse):
    """Wafer.chunks_per_thread (a tuning knob) changes only how the rows are cut: one
    chunk per thread, and more chunks than busy rows (then one row each)."""
    one, _ = _traffic(1, "colors", 1, sparse)
    for chunks in (1, 2, 64):
        view, parallel = _traffic(2, "colors", 1, sparse, chunks)
        assert parallel > 0
        assert view == one, chunks


def test_chunks_per_thread_mistakes_are_refused():
    w = ws.Wafer(4, 4)
    assert w.chunks_per_thread == 4
    w.chunks_per_thread = 8
    assert w.chunks_per_thread == 8
    for bad in (0, 65, 2.5, "4", True):
        with pytest.raises(ws.ConfigError, match="chunks_per_thread"):
            w.chunks_per_thread = bad


@pytest.mark.parametrize("threads", [2, 3, 7])
def test_program_3_on_chunks_is_bit_identical_to_one_thread(threads):
    """Compute elements: bulk operations that sleep and wake in phase A, partial sums
    that wake their receivers in phase B, on chunks of one to three rows."""
    def run(t):
        r = matvec.run_grid(11, 4, threads=t, seed=3, rows=13, check=False,
                            parallel_min_routers=0)
        s = r["stats"]
        pes = {pe: {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in s.pes[pe].items()}
               for pe in sorted(s.pes)}
        return (r["y"].tobytes(), s.cycles, s.router_cycles, s.delivered, pes), s.parallel_phases

    one, _ = run(1)
    many, parallel = run(threads)
    assert parallel > 0 and many == one


FAIL = """
.data
x:    .space i16, 4
bad:  .dsd mem1d, base=32760, length=8, stride=2     ; runs off the 32 KiB of data memory
dx:   .dsd mem1d, base=x, length=8, stride=2
.code
.task main, 40
main: li r1, 12
spin: addi r1, -1
      eq16 r1, #0
      bf spin
      lds1wds S1[0], bad
      lddwds D[0], dx
      mov16.t D[0], S1[0]
"""


def _failing_wafer(threads, a_row, b_row, b_cycle):
    """A compute element at (a_row, 0) fails in phase A (a memory error); at (b_row, 4) two
    wavelets of color 5 arrive from W and E in phase B of b_cycle (a RouteError); compute
    elements in rows 0 and 7 loop forever."""
    w = ws.Wafer(8, 6, threads=threads)
    w.pe(a_row, 0).load(FAIL)
    for r in (0, 7):  # busy rows: two or more active rows in every cycle, so chunked cycles
        w.pe(r, 2).load(".code\n.task main, 40\nmain: jmp main\n")
    w.parallel_min_routers = 0  # (after the load, which sets the threshold for CEs)
    w.launch("main")
    if b_row is not None:
        w.route(5, path=[(b_row, 3), (b_row, 4), (b_row + 1, 4)])
        w.route(5, path=[(b_row, 5), (b_row, 4), (b_row + 1, 4)], allow_shared_source=True)
        w.inject((b_row, 3), 5, data=1, cycle=b_cycle - 1)
        w.inject((b_row, 5), 5, data=2, cycle=b_cycle - 1)
    return w


def _error(threads, a_row, b_row, b_cycle):
    w = _failing_wafer(threads, a_row, b_row, b_cycle)
    with pytest.raises((ws.MemoryAccessError, ws.RouteError)) as err:
        w.run()
    return type(err.value).__name__, str(err.value), w.cycle


@pytest.mark.parametrize("b_offset", [-3, -2, -1, 0, 1])
def test_a_cycle_that_fails_in_both_phases_raises_the_error_one_thread_meets_first(b_offset):
    """One thread stops at the first failure of A(0) A(1) B(0) A(2) B(1) ...: a phase-B
    failure two or more rows above the phase-A one comes first, a nearer or lower one
    after it. Chunked cycles raise the same error."""
    a_row = 4
    # The cycle the compute element fails in, alone.
    _, _, fail_cycle = _error(1, a_row, None, 0)
    b_row = a_row + b_offset
    want = _error(1, a_row, b_row, fail_cycle)
    assert want[0] == ("RouteError" if b_offset <= -2 else "MemoryAccessError")
    for threads in (2, 3):
        assert _error(threads, a_row, b_row, fail_cycle) == want
    w = _failing_wafer(2, a_row, b_row, fail_cycle)
    assert w.run(max_cycles=fail_cycle).parallel_phases > 0  # chunked cycles ran


# ---- one thread or several ---------------------------------------------------------------

def test_a_threshold_the_user_sets_survives_program_loads():
    """Loading programs lowers the floor for sharing a cycle (compute elements do more work
    per router) unless the user set the threshold, which also turns off the measuring."""
    prog = ".code\n.task main, 40\nmain: term\n"
    w = ws.Wafer(4, 4)
    assert w.parallel_min_routers == 512
    w.pe(0, 0).load(prog)
    assert w.parallel_min_routers == 256
    w = ws.Wafer(4, 4)
    w.parallel_min_routers = 7
    w.load(prog)
    assert w.parallel_min_routers == 7
