"""What whole rows allow: the runs of issue 24's table (bench_scaling.py's --runs) on one
thread with ``Wafer.record_row_work`` on, --repeat times, each row phase's least time over
the repeats (a phase the machine slowed once is not a heavy row), and from those, per
thread count (``wafersim.row_work``):

* bound: the most the threads could gain over one if no row's phases were split (a cycle
  takes at least its heaviest row and at least its work over the threads);
* chunks: what the cycle loop's own schedule (chunks of rows cut at equal active routers,
  --chunks-per-thread of them per thread (default 4, the loop's), taken from each other's
  ends, a chunk's edge rows getting phase B once the neighbouring chunk is done) would
  gain, each row phase taking the time it took here, the loop's floor
  (``parallel_min_routers``) applied; no cache, memory, page-fault or waking costs.

Also printed: the seconds of the row phases and of the run (the rest is work between
cycles, serial), and the share of the row work in cycles where one row holds more than
1/16 of the cycle's work. A measured speed-up far below "chunks" is lost outside the
schedule (memory, faults, waits); "bound" under an aim means the aim needs rows split.

``--processes 2,3`` adds, per process count N, what splitting the wafer over N MPI processes
(blocks of rows dealt round-robin, ``wafersim.domains.deal_rows``) could gain from the
balance of the rows' work alone (``row_work.domain_model``): at the default blocks per
process (``domains.auto_blocks``) and at the best count of blocks, each cycle taking the
largest process's share. A measured speed-up lies below it by the exchange and border-row
costs and what the processes cost each other on the machine.

Run: python benchmarks/bench_row_bound.py [--runs p3-256,full] [--threads 2,4,8,16]
     [--repeat 3] [--chunks-per-thread 4,8] [--processes 2,3,4]
"""

from __future__ import annotations

import argparse
import hashlib
import time

import numpy as np

import wafersim as ws
from wafersim import domains, row_work
from bench_scaling import RUNS  # benchmarks/bench_scaling.py


def record(run: str) -> tuple[row_work.RowWork, float, int]:
    """One run on one thread: its row work, the run's seconds, the loop's floor."""
    _, body, args = RUNS[run]
    got = {}
    plain_run = ws.Wafer.run

    def recording_run(self, *a, **k):
        self.record_row_work = True
        t0 = time.perf_counter()
        out = plain_run(self, *a, **k)
        got.update(seconds=time.perf_counter() - t0, work=self.row_work(),
                   floor=self.parallel_min_routers)
        return out

    ws.Wafer.run = recording_run
    try:
        exec(body.format(threads=1, **args), {"ws": ws, "np": np, "time": time,
                                              "hashlib": hashlib})
    finally:
        ws.Wafer.run = plain_run
    return got["work"], got["seconds"], got["floor"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", default="p3-256,p3-128,p3-64,pk-256,pk-64")
    ap.add_argument("--threads", default="2,4,8,16")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--chunks-per-thread", default="4",
                    help="comma separated: one chunk model per value")
    ap.add_argument("--processes", default="",
                    help="comma separated: MPI process counts for the domain model")
    a = ap.parse_args()
    threads = [int(t) for t in a.threads.split(",")]
    per_thread = [int(k) for k in a.chunks_per_thread.split(",")]
    processes = [int(n) for n in a.processes.split(",") if n]
    for run in a.runs.split(","):
        if run not in RUNS:
            raise SystemExit(f"unknown run {run!r}; known: {', '.join(RUNS)}")
        recorded = [record(run) for _ in range(a.repeat)]
        work = row_work.fastest([w for w, _, _ in recorded])
        seconds = min(s for _, s, _ in recorded)
        floor = recorded[0][2]
        _, time_rc, _ = work.per_cycle()
        per_cycle = time_rc.sum(axis=1)
        heavy = time_rc.max(axis=1) > per_cycle / 16
        share = 100 * per_cycle[heavy].sum() / max(per_cycle.sum(), 1)
        print(f"{run} ({RUNS[run][0]}): fastest run {seconds:.3f} s, row phases "
              f"{work.seconds():.3f} s (least of each); {share:.0f} % of the row work in "
              f"cycles where one row holds over 1/16")
        for n in threads:
            bound = row_work.whole_row_bound(work, n)
            models = ", ".join(
                f"{k} chunks per thread {row_work.chunk_model(work, n, k, min_routers=floor):5.2f}x"
                for k in per_thread)
            print(f"  {n:3d} threads: bound {bound:5.2f}x; {models}")
        for n in processes:
            auto = domains.auto_blocks(work.rows, n)
            gains = {k: row_work.domain_model(work, n, k) for k in range(1, work.rows // n + 1)}
            best = max(gains, key=gains.get)
            print(f"  {n:3d} processes: {auto} block{'s' * (auto > 1)} each (default, "
                  f"{work.rows / (n * auto):.1f} "
                  f"rows) {gains[auto]:5.2f}x; best {best} blocks ({work.rows / (n * best):.1f} "
                  f"rows) {gains[best]:5.2f}x; one block {gains[1]:5.2f}x")


if __name__ == "__main__":
    main()
