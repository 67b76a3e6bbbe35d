"""Speed of the cycle loop, and memory of a very large fabric.

1. Simulated router-cycles per second (rows x cols x cycles / wall time of ``run``) on a
   64x64 mesh under uniform random traffic (packet mode, XY routing) at injection 0.05
   and 0.3 packets per node per cycle, with 1 and 2 OpenMP threads. Baseline: the aim of
   10 million router-cycles per second on one core; ratios are printed against it, and
   the 2-thread speed-up against 1 thread.
2. Sparse activity: the same 64x64 fabric carrying a few routes, where idle routers cost
   nothing (active set): router-cycles per second grow with the idle fraction. And the
   color pass at saturation: every row streams east and every column north, one wavelet
   per link per cycle (colors without runtime switches).
3. A 1024x1024 fabric with a handful of routes builds and runs 10,000 cycles; peak RSS is
   measured in a child process and compared with the 4 GB budget.

Run: python benchmarks/bench_fabric.py [--size 64] [--cycles 1000] [--repeat 3] [--quick]
Numbers are the best of ``--repeat`` runs (the machine may be shared).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # keep numpy's BLAS threads off the cores

import numpy as np  # noqa: E402

import wafersim as ws  # noqa: E402

AIM = 10e6  # router-cycles per second on one core at injection 0.05


def uniform_run_seconds(size: int, rate: float, cycles: int, threads: int, seed: int) -> float:
    traffic = ws.noc.bernoulli("uniform", size, size, rate, cycles, seed=seed)
    w = ws.Wafer(size, size, mode="packets", threads=threads)
    w.inject(traffic.src, 0, data=np.arange(len(traffic)) & 0xFFFFFFFF, dest=traffic.dst,
             cycle=traffic.cycle)
    t0 = time.perf_counter()
    stats = w.run(cycles)
    dt = time.perf_counter() - t0
    assert stats.cycles == cycles
    return dt


def sparse_run_seconds(size: int, cycles: int, threads: int) -> tuple[float, float]:
    w = ws.Wafer(size, size, threads=threads)
    for color in range(4):
        row = color * (size // 4)
        w.route(color, path=[(row, c) for c in range(size)])
        w.inject((row, 0), color, data=np.arange(cycles))
    t0 = time.perf_counter()
    stats = w.run(cycles)
    dt = time.perf_counter() - t0
    return dt, stats.router_cycles / (size * size * stats.cycles)


def saturated_colors_seconds(size: int, cycles: int, threads: int) -> float:
    w = ws.Wafer(size, size, threads=threads)
    for i in range(size):
        w.route(0, path=[(i, c) for c in range(size)])  # row i, eastward
        w.route(1, path=[(r, i) for r in range(size)])  # column i, northward
        w.inject((i, 0), 0, data=np.arange(cycles))
        w.inject((0, i), 1, data=np.arange(cycles))
    t0 = time.perf_counter()
    w.run(cycles)
    return time.perf_counter() - t0


def best(fn, repeat: int):
    return min(fn(i) for i in range(repeat))


BIG = textwrap.dedent("""
    import resource, time, numpy as np, wafersim as ws
    n = {n}
    t0 = time.perf_counter()
    w = ws.Wafer(n, n, "mesh+diag")
    w.route(0, path=[(0, c) for c in range(n)])
    w.route(1, path=[(r, 5) for r in range(n)])
    w.route(2, path=[(i, i) for i in range(n)])
    w.route_tree(3, (n // 2, n // 2), [(0, 0), (n - 1, n - 1), (0, n - 1), (n - 1, 0)],
                 "diag_first")
    # releases spread over the run, so the fabric is busy for all {cycles} cycles
    release = np.linspace(0, {cycles} - 1, 2000).astype(np.int64)
    for color, src in [(0, (0, 0)), (1, (0, 5)), (2, (0, 0)), (3, (n // 2, n // 2))]:
        w.inject(src, color, data=np.arange(2000), cycle=release)
    t1 = time.perf_counter()
    s = w.run({cycles})
    t2 = time.perf_counter()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{{t1 - t0:.2f}} {{t2 - t1:.2f}} {{s.cycles}} {{s.delivered}} {{rss:.0f}}")
""")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--cycles", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--big", type=int, default=1024, help="side of the memory-check fabric")
    ap.add_argument("--big-cycles", type=int, default=10_000)
    ap.add_argument("--quick", action="store_true", help="small sizes (for tests)")
    args = ap.parse_args()
    if args.quick:
        args.size, args.cycles, args.repeat, args.big, args.big_cycles = 16, 200, 1, 128, 500

    n = args.size
    work = n * n * args.cycles
    print(f"wafersim {ws.__version__}: {n}x{n} mesh, uniform random traffic (packet mode, XY), "
          f"{args.cycles} cycles, best of {args.repeat}")
    print(f"baseline: the aim of {AIM / 1e6:.0f} M router-cycles/s on one core at injection 0.05")
    for rate in (0.05, 0.3):
        rates = {}
        for threads in (1, 2):
            dt = best(lambda i: uniform_run_seconds(n, rate, args.cycles, threads, seed=i), args.repeat)
            rates[threads] = work / dt
            print(f"  injection {rate:<4}  threads {threads}: {rates[threads] / 1e6:7.2f} M router-cycles/s"
                  f"   ratio to aim {rates[threads] / AIM:5.2f}")
        print(f"  injection {rate:<4}  speed-up 2 threads / 1 thread: {rates[2] / rates[1]:.2f}")

    dt, busy = min(sparse_run_seconds(n, args.cycles, 1) for _ in range(args.repeat))
    print(f"sparse activity (4 streaming routes, {100 * busy:.1f}% of routers busy per cycle), "
          f"1 thread: {work / dt / 1e6:.1f} M simulated router-cycles/s")

    for threads in (1, 2):
        dt = min(saturated_colors_seconds(n, args.cycles, threads) for _ in range(args.repeat))
        print(f"color routes at saturation (every row east, every column north), {threads} "
              f"thread(s): {work / dt / 1e6:.1f} M router-cycles/s")

    code = BIG.format(n=args.big, cycles=args.big_cycles)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    build, run, cycles, delivered, rss = out.stdout.split()
    verdict = "within" if float(rss) < 4096 else "OVER"
    print(f"{args.big}x{args.big} mesh+diag, 4 routes: build {build} s, {cycles} cycles in {run} s, "
          f"{delivered} wavelets delivered, peak RSS {rss} MB ({verdict} the 4 GB budget; "
          f"ratio to budget {float(rss) / 4096:.2f})")


if __name__ == "__main__":
    main()
