"""Two threads against one, on a quiet and on a busy machine: how long the cycle loop's
threads spin before they sleep (``Wafer.spin_wait``, docs/fabric.md "Threads").

A packet-mode wafer (32 x 32 by default) at injection 0.3 (every router active, so every
phase runs in parallel) runs 2,000 cycles with 1 and with 2 threads, each run in a child
process, for each spin time (microseconds; 0: sleep at once; 50: the default) on the
machine as it is (``idle``) and beside as many busy processes as there are cores
(``loaded``; started and stopped by this script). Runs alternate between the thread
counts, so both see the same minutes of a shared machine. Printed: min / median / max
seconds, and the ratio of the 2-thread median to the 1-thread median (the baseline).
Every child also prints a digest of what arrived: they must all agree. The 2-thread runs
set ``parallel_min_routers = 0``: every cycle runs in parallel (no measuring which mode
is faster, docs/fabric.md "One thread or several"), so the team itself is timed.

``--break-even``: where two threads start to pay on this machine, as it is. For packets
(injection 0.3, 1,000 cycles) and program 3 (16 x 16 blocks) on square wafers of growing
size, 1 thread against 2 threads forced on every cycle, alternating, as the machine is
and beside busy processes (``--loads``); prints the routers processed per cycle and the
ratio of the medians (below 1: two threads are faster).

Run: python benchmarks/bench_threads.py [--repeat 5] [--cycles 2000] [--size 32]
     [--spins 0,50,1000] [--loads idle,loaded] [--quick]
     python benchmarks/bench_threads.py --break-even [--repeat 5] [--sizes 8,16,32,64]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import textwrap

from timing import ARRIVALS_DIGEST  # benchmarks/timing.py

CHILD = textwrap.dedent("""
    import hashlib, time, numpy as np, wafersim as ws
    tr = ws.noc.bernoulli("uniform", {n}, {n}, 0.3, {cycles}, seed=1)
    w = ws.Wafer({n}, {n}, mode="packets", threads={threads})
    w.parallel_min_routers = 0
    w.spin_wait = {spin}
    w.inject(tr.src, 0, data=np.arange(len(tr)) & 0xFFFFFFFF, dest=tr.dst, cycle=tr.cycle)
    t0 = time.perf_counter()
    s = w.run({cycles})
    dt = time.perf_counter() - t0
""") + ARRIVALS_DIGEST + """
print(dt, s.parallel_phases, digest.hexdigest()[:16])
"""

def child_run(n: int, cycles: int, threads: int, spin: int) -> tuple[float, int, str]:
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    code = CHILD.format(n=n, cycles=cycles, threads=threads, spin=spin)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env).stdout.split()
    return float(out[0]), int(out[1]), out[2]


BREAK_EVEN_CHILD = textwrap.dedent("""
    import time, numpy as np, wafersim as ws
    from wafersim.kernels import matvec
    if "{kind}" == "packets":
        tr = ws.noc.bernoulli("uniform", {n}, {n}, 0.3, 1000, seed=1)
        w = ws.Wafer({n}, {n}, mode="packets", threads={threads})
        w.parallel_min_routers = 0
        w.inject(tr.src, 0, data=np.arange(len(tr)) & 0xFFFFFFFF, dest=tr.dst, cycle=tr.cycle)
        t0 = time.perf_counter()
        s = w.run(1000)
        dt = time.perf_counter() - t0
    else:
        r = matvec.run_grid({n}, 16, threads={threads}, check=False, seed=1,
                            parallel_min_routers=0)
        s, dt = r["stats"], r["seconds"]
    print(dt, s.cycles, s.router_cycles)
""")


def break_even(sizes: list[int], repeat: int, load: str) -> None:
    print(f"{load}: 1 thread against 2 threads on every cycle, seconds per cycle (medians "
          f"of {repeat} alternating runs); ratio below 1: two threads faster")
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    for kind in ("packets", "program 3"):
        for n in sizes:
            times = {1: [], 2: []}
            for k in range(repeat):
                for threads in ((1, 2) if k % 2 == 0 else (2, 1)):
                    code = BREAK_EVEN_CHILD.format(kind=kind, n=n, threads=threads)
                    out = subprocess.run([sys.executable, "-c", code], capture_output=True,
                                         text=True, check=True, env=env).stdout.split()
                    dt, cycles, routers = float(out[0]), int(out[1]), int(out[2])
                    times[threads].append(dt / cycles)
            one, two = statistics.median(times[1]), statistics.median(times[2])
            print(f"  {kind:<9} {n:3d} x {n:<3d} {routers / cycles:7.0f} routers/cycle  "
                  f"1 thread {one * 1e6:8.1f} us  2 threads {two * 1e6:8.1f} us  "
                  f"ratio {two / one:.2f}", flush=True)


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
    ap.add_argument("--break-even", action="store_true",
                    help="sizes at which two threads start to pay on this machine")
    ap.add_argument("--sizes", default="8,12,16,24,32,48,64",
                    help="--break-even: wafer sides to try")
    args = ap.parse_args()
    if args.break_even:
        for load in args.loads.split(","):
            procs = start_load(args.busy) if load == "loaded" else []
            try:
                break_even([int(v) for v in args.sizes.split(",")], args.repeat, load)
            finally:
                stop_load(procs)
        return
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
