"""How a run's work is spread over the rows, and what sharing whole rows between threads
can gain from it.

``Wafer.record_row_work = True`` makes the cycle loop time every row's phase A and phase B
(the units the threads share out, docs/fabric.md "Threads"); ``Wafer.row_work()`` returns
them as a :class:`RowWork`. From one run on one thread, :func:`whole_row_bound` gives the
most that n threads could gain if each row's phases stay in one thread (a cycle takes at
least its heaviest row, and at least its work over n), and :func:`chunk_model` what the
cycle loop's own schedule would gain (``sim/row_chunks.cpp``: the active rows cut into
chunks of equal active routers, ``Wafer.chunks_per_thread`` per thread, taken by the team
as ``sim/row_team.cpp`` hands them out, a chunk's edge rows getting phase B once the
neighbouring chunk is done) if each row phase took on n threads what it took on one: no
cache, memory, page-fault or waking costs. docs/scale.md, "What whole rows allow", has
what they said about the issue's runs.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from ._args import int_arg
from .domains import deal_rows
from .errors import ConfigError

_CHUNKS_PER_THREAD = 4  # Wafer.chunks_per_thread's default


@dataclass(frozen=True)
class RowWork:
    """Row phases of a run, one entry each, in (cycle, row, phase) order: the cycle, the
    row, the phase (0: A, 1: B), the routers (phase A: the row's active routers; phase B:
    the routers it processed) and the phase's wall time in nanoseconds."""

    cycle: np.ndarray
    row: np.ndarray
    phase: np.ndarray
    routers: np.ndarray
    ns: np.ndarray
    rows: int  #: rows of the wafer

    def __len__(self) -> int:
        return int(self.cycle.size)

    def seconds(self) -> float:
        """The time of all row phases together (one thread's time in them)."""
        return float(self.ns.sum()) / 1e9

    def per_cycle(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(cycles, time, routers): the cycles that had a row phase, ascending, and for
        each a (cycles x rows) array of nanoseconds in the row's phases A and B together,
        and one of the row's active routers in its phase A (0 without phase A)."""
        cycles, a_time, b_time, routers = self._phases()
        return cycles, a_time + b_time, routers

    def _phases(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """per_cycle with the nanoseconds of phase A and of phase B apart."""
        cycles, at = np.unique(self.cycle, return_inverse=True)
        a = self.phase == 0
        times = []
        for which in (a, ~a):
            time = np.zeros((cycles.size, self.rows))
            np.add.at(time, (at[which], self.row[which]), self.ns[which].astype(np.float64))
            times.append(time)
        routers = np.zeros((cycles.size, self.rows), dtype=np.int64)
        routers[at[a], self.row[a]] = self.routers[a]
        return cycles, times[0], times[1], routers


def fastest(works: list[RowWork]) -> RowWork:
    """Each phase's least time over several recordings of the same run (which run the same
    phases, whatever the threads): a phase slowed once by the machine (another process, an
    interrupt) no longer counts as a heavy row."""
    if not works:
        raise ConfigError("fastest needs at least one recording")
    first = works[0]
    for w in works[1:]:
        same = w.rows == first.rows and len(w) == len(first) and all(
            np.array_equal(getattr(w, f), getattr(first, f))
            for f in ("cycle", "row", "phase", "routers"))
        if not same:
            raise ConfigError("fastest: the recordings are not of the same run "
                              "(their cycles, rows, phases or routers differ)")
    ns = np.minimum.reduce([w.ns for w in works])
    return RowWork(cycle=first.cycle, row=first.row, phase=first.phase,
                   routers=first.routers, ns=ns, rows=first.rows)


def _threads(threads: int) -> int:
    return int_arg("threads", threads, 1)


def whole_row_bound(work: RowWork, threads: int) -> float:
    """The most `threads` threads could gain over one if no row's phases were split: each
    cycle takes at least its heaviest row and at least its total over the threads."""
    n = _threads(threads)
    _, time, _ = work.per_cycle()
    total = time.sum()
    if total == 0:
        return float(n)
    least = np.maximum(time.sum(axis=1) / n, time.max(axis=1)).sum()
    return float(total / least)


def _chunk_bounds(routers: np.ndarray, c: int, rows: int) -> list[tuple[int, int]]:
    """The rows [lo, hi) of each chunk, cut as Simulator::run_rows_in_chunks cuts them."""
    active = np.nonzero(routers)[0]
    n = active.size
    total = int(routers[active].sum())
    starts = [0]
    before = 0
    i = 1
    for j in range(1, n):
        if i >= c:
            break
        before += int(routers[active[j - 1]])
        if before * c >= total * i or n - j == c - i:
            starts.append(j)
            i += 1
    lo = [0] + [int(active[s]) for s in starts[1:]]
    hi = lo[1:] + [rows]
    return list(zip(lo, hi))


def _cycle_span(chunks: list[tuple[int, int]], a_time: np.ndarray, b_time: np.ndarray,
                threads: int) -> float:
    """When a chunked cycle ends (Simulator::run_rows_in_chunks, run_chunk): each chunk
    runs its rows' phases A and its inner rows' phases B; a chunk's first and last rows
    (next to another chunk) get phase B from the thread that finishes the last chunk
    holding one of rows q-1..q+1, right then. Chunks are handed out as RowTeam::run hands
    out items: static blocks, each thread from its block's front, then from the back of
    the next threads' blocks."""
    c = len(chunks)
    wait = {}  # edge row -> chunks still to finish
    own, edges = [], []
    for i, (lo, hi) in enumerate(chunks):
        first, last = i > 0, i + 1 < c
        inner = [q for q in range(lo, hi)
                 if not ((q == lo and first) or (q == hi - 1 and last))]
        own.append(a_time[lo:hi].sum() + b_time[inner].sum())
        mine = []
        if first:
            mine += [lo, lo - 1]
        if last:
            if not (first and hi - 1 == lo):
                mine.append(hi - 1)
            mine.append(hi)
        edges.append(mine)
        for q in mine:
            wait[q] = wait.get(q, 0) + 1
    q_, r = divmod(c, threads)
    blocks, start = [], 0
    for k in range(threads):
        end = start + q_ + (1 if k < r else 0)
        blocks.append([start, end])
        start = end
    ready = [(0.0, k, -1) for k in range(threads)]  # (time, thread, chunk it just ran)
    finish = 0.0
    while ready:
        now, k, done = heapq.heappop(ready)
        if done >= 0:  # the edge rows this chunk was the last to wait for
            extra = 0.0
            for q in edges[done]:
                wait[q] -= 1
                if wait[q] == 0:
                    extra += b_time[q]
            if extra > 0:
                heapq.heappush(ready, (now + extra, k, -1))
                continue
        item = None
        if blocks[k][0] < blocks[k][1]:
            item = blocks[k][0]
            blocks[k][0] += 1
        else:
            for d in range(1, threads):
                j = (k + d) % threads
                if blocks[j][0] < blocks[j][1]:
                    blocks[j][1] -= 1
                    item = blocks[j][1]
                    break
        if item is None:
            finish = max(finish, now)
            continue
        heapq.heappush(ready, (now + own[item], k, item))
    return finish


def chunk_model(work: RowWork, threads: int, chunks_per_thread: int = _CHUNKS_PER_THREAD,
                min_routers: int = 0) -> float:
    """What the cycle loop's chunks of rows would gain on `threads` threads over one, each
    row phase taking what it took when recorded (record on one thread). A chunk's edge
    rows get phase B when their neighbouring chunks are done, from the thread that
    finishes the last of them (_cycle_span). Cycles with fewer than `min_routers` active
    routers, or one active row, run in one thread (the loop's floor:
    ``Wafer.parallel_min_routers``)."""
    n = _threads(threads)
    chunks_per_thread = int_arg("chunks_per_thread", chunks_per_thread, 1)
    min_routers = int_arg("min_routers", min_routers, 0)
    _, a_time, b_time, routers = work._phases()
    total = a_time.sum() + b_time.sum()
    if total == 0:
        return float(n)
    span = 0.0
    for t in range(a_time.shape[0]):
        active = int(np.count_nonzero(routers[t]))
        c = min(active, chunks_per_thread * n)
        if c <= 1 or routers[t].sum() < min_routers:
            span += a_time[t].sum() + b_time[t].sum()
            continue
        span += _cycle_span(_chunk_bounds(routers[t], c, work.rows), a_time[t], b_time[t], n)
    return float(total / span)


def domain_model(work: RowWork, processes: int, blocks: int) -> float:
    """What splitting the wafer over `processes` MPI processes could gain over one from the
    balance of the rows' work alone: each process holds the blocks of rows that
    ``wafersim.domains.deal_rows(rows, processes, blocks)`` deals it, and since the
    processes meet every cycle (docs/scale.md, "The per-cycle exchange") a cycle takes the
    largest process's share of it. No exchange, border-row, memory or machine costs: a
    measured speed-up can only be lower."""
    n = int_arg("processes", processes, 1)
    parts = deal_rows(work.rows, n, int_arg("blocks", blocks, 1))
    _, time, _ = work.per_cycle()
    total = time.sum()
    if total == 0:
        return float(n)
    cumulative = np.concatenate([np.zeros((time.shape[0], 1)), time.cumsum(axis=1)], axis=1)
    share = np.zeros((time.shape[0], n))
    for k, part in enumerate(parts):
        for lo, hi in part:
            share[:, k] += cumulative[:, hi] - cumulative[:, lo]
    return float(total / share.max(axis=1).sum())
