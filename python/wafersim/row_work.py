"""How a run's work is spread over the rows, and what sharing whole rows between threads
can gain from it.

``Wafer.record_row_work = True`` makes the cycle loop time every row's phase A and phase B
(the units the threads share out, docs/fabric.md "Threads"); ``Wafer.row_work()`` returns
them as a :class:`RowWork`. From one run on one thread, :func:`whole_row_bound` gives the
most that n threads could gain if each row's phases stay in one thread (a cycle takes at
least its heaviest row, and at least its work over n), and :func:`chunk_model` what the
cycle loop's own schedule would gain (``sim/row_chunks.cpp``: the active rows cut into
chunks of equal active routers, ``Wafer.chunks_per_thread`` per thread, taken by the team
as ``sim/row_team.cpp`` hands them out) if each row took on n threads what it took on one: no cache, memory or
waking costs. docs/scale.md, "What whole rows allow", has what they said about the issue's
runs.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

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
        cycles, at = np.unique(self.cycle, return_inverse=True)
        time = np.zeros((cycles.size, self.rows))
        np.add.at(time, (at, self.row), self.ns.astype(np.float64))
        routers = np.zeros((cycles.size, self.rows), dtype=np.int64)
        a = self.phase == 0
        routers[at[a], self.row[a]] = self.routers[a]
        return cycles, time, routers


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
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ConfigError(f"threads must be a whole number of at least 1, got {threads!r}")
    return int(threads)


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


def _team_makespan(costs: list[float], threads: int) -> float:
    """When the last of `costs` (in order) ends, handed out as RowTeam::run does: static
    blocks, each thread from its block's front, then from the back of the next threads'."""
    c = len(costs)
    q, r = divmod(c, threads)
    blocks, first = [], 0
    for k in range(threads):
        end = first + q + (1 if k < r else 0)
        blocks.append([first, end])
        first = end
    ready = [(0.0, k) for k in range(threads)]
    finish = 0.0
    while ready:
        now, k = heapq.heappop(ready)
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
        heapq.heappush(ready, (now + costs[item], k))
    return finish


def chunk_model(work: RowWork, threads: int, chunks_per_thread: int = _CHUNKS_PER_THREAD,
                min_routers: int = 0) -> float:
    """What the cycle loop's chunks of rows would gain on `threads` threads over one, each
    row taking what it took when recorded (record on one thread). A chunk's edge rows are
    counted in their chunk. Cycles with fewer than `min_routers` active routers, or one
    active row, run in one thread (the loop's floor: ``Wafer.parallel_min_routers``)."""
    n = _threads(threads)
    if chunks_per_thread < 1:
        raise ConfigError(f"chunks_per_thread must be at least 1, got {chunks_per_thread!r}")
    if min_routers < 0:
        raise ConfigError(f"min_routers must be at least 0, got {min_routers!r}")
    _, time, routers = work.per_cycle()
    total = time.sum()
    if total == 0:
        return float(n)
    span = 0.0
    for t in range(time.shape[0]):
        active = int(np.count_nonzero(routers[t]))
        c = min(active, chunks_per_thread * n)
        if c <= 1 or routers[t].sum() < min_routers:
            span += time[t].sum()
            continue
        csum = np.concatenate(([0.0], np.cumsum(time[t])))
        costs = [csum[hi] - csum[lo] for lo, hi in _chunk_bounds(routers[t], c, work.rows)]
        span += _team_makespan(costs, n)
    return float(total / span)
