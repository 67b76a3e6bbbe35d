"""Two threads against one, on a quiet and on a busy machine: how long the cycle loop's
threads spin before they sleep (``Wafer.spin_wait``, docs/fabric.md "Threads").

A packet-mode wafer (32 x 32 by default) at injection 0.3 (every router active, so every
phase runs in parallel) runs 2,000 cycles with 1 and with 2 threads, each run in a child
process, for each spin time (microseconds; 0: sleep at once; 50: the default) on the
machine as it is (``idle``) and beside as many busy processes as there are cores
(``loaded``; started and stopped by this script). Runs alternate between the thread
counts, so both see the same minutes of a shared machine. Printed: min / median / max
seconds, and the ratio of the 2-thread median to the 1-thread median (the baseline).
Every child also prints a digest of what arrived: they must all agree.

Run: python benchmarks/bench_threads.py [--repeat 5] [--cycles 2000] [--size 32]
     [--spins 0,50,1000] [--loads idle,loaded] [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent("""
    import hashlib, time, numpy as np, wafersim as ws
    tr = ws.noc.bernoulli("uniform", {n}, {n}, 0.3, {cycles}, seed=1)
    w = ws.Wafer({n}, {n}, mode="packets", threads={threads})
    w.spin_wait = {spin}
    w.inject(tr.src, 0, data=np.arange(len(tr)) & 0xFFFFFFFF, dest=tr.dst, cycle=tr.cycle)
    t0 = time.perf_counter()
    s = w.run({cycles})
    dt = time.perf_counter() - t0
    a = w.collect()
    h = hashlib.sha256()
    for col in (a.row, a.col, a.data, a.arrived, a.hops):
        h.update(np.ascontiguousarray(col).tobytes())
    print(dt, s.parallel_phases, h.hexdigest()[:16])
""")

def child_run(n: int, cycles: int, threads: int, spin: int) -> tuple[float, int, str]:
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    code = CHILD.format(n=n, cycles=cycles, threads=threads, spin=spin)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env).stdout.split()
    return float(out[0]), int(out[1]), out[2]


def start_load(count: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def stop_load(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.kill()
        p.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--cycles", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--spins", default="0,50,1000",
                    help="spin times to compare, microseconds (Wafer.spin_wait)")
    ap.add_argument("--loads", default="idle,loaded")
    ap.add_argument("--busy", type=int, default=os.cpu_count() or 2,
                    help="busy processes for the loaded runs (default: one per core)")
    ap.add_argument("--quick", action="store_true", help="small sizes (for tests)")
    args = ap.parse_args()
    if args.quick:
        args.cycles, args.repeat, args.spins, args.loads = 200, 1, "50", "idle"

    print(f"{args.size}x{args.size} packet mode, injection 0.3, {args.cycles} cycles, "
          f"{args.repeat} alternating runs per cell; baseline: 1 thread, same spin and load")
    digests = set()
    for load in args.loads.split(","):
        procs = start_load(args.busy) if load == "loaded" else []
        try:
            for spin in (int(v) for v in args.spins.split(",")):
                policy = f"spin {spin}"
                times = {1: [], 2: []}
                for _ in range(args.repeat):
                    for threads in (1, 2):
                        dt, phases, digest = child_run(args.size, args.cycles, threads, spin)
                        times[threads].append(dt)
                        digests.add(digest)
                        if threads == 2 and phases == 0:
                            raise SystemExit("the 2-thread run ran no phase in parallel")
                for threads in (1, 2):
                    t = times[threads]
                    print(f"  {load:<6} {policy:<10} threads {threads}: min {min(t):7.3f} s  "
                          f"median {statistics.median(t):7.3f} s  max {max(t):7.3f} s")
                ratio = statistics.median(times[2]) / statistics.median(times[1])
                print(f"  {load:<6} {policy:<10} ratio 2 threads / 1 thread (medians): {ratio:.2f}")
        finally:
            stop_load(procs)
    same = "identical" if len(digests) == 1 else f"DIFFERENT ({len(digests)} digests)"
    print(f"arrivals of every run: {same}")
    if len(digests) != 1:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
