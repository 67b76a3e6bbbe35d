"""Speed of compute elements on the wafer: conformance program 3 (y = A x on a grid of PEs,
examples/kernels/matvec_wafer.py) on 16 x 16 PEs with 1 and 2 OpenMP threads.

Prints simulated PE-cycles per second (PEs x cycles / wall time of ``Wafer.run``) and vector
element operations per second, as ratios to a named baseline: the lone-PE bench
(``ws.pe.LonePE``, no fabric) running the same per-PE program on one block, i.e. what one
compute element costs without routers, host ports and the wafer's cycle loop.
Best of --repeat runs (the machine is shared: numbers are noisy).

``--scale``: one run of program 3 tiled over every PE of a 757 x 996 wafer (753,972 PEs, the
size of the largest wafer-scale chip), with blocks of 4 x 4 by default: the run's length is
set by the reduction of partial sums along 996 columns (about 4 cycles a hop, whatever the
block: 8 x 8 blocks take 1 % more cycles than 4 x 4 on a 4 x 996 grid), so small blocks keep
every PE's program, traffic pattern and task structure while keeping the host's copy of A
small (12 M elements instead of 193 M at the kernel's default of 16), so that the resident
memory measured is the emulator's. Prints the setup time (wafer, programs, routes, A),
resident memory after setup and at its peak, simulated cycles per second and PE-cycles per
second. It needs about 16 GB: it refuses to start with less than 18 GB available.

``--preset cs2`` / ``--preset cs3``: a wafer preset (``ws.Wafer.preset``: 757 x 996 or
762 x 1172 PEs, 48 KiB per PE) with a small kernel on every PE (one load of the whole
wafer, 32 bytes copied into each PE, a task launched and run to the end): the resident
memory each stage adds, per PE, and the peak. It refuses to start without the memory it
will need (about 15 KB per PE, measured at 256 x 256).

Run: python benchmarks/bench_pe.py [--size 16 | --grid 64] [--block 32] [--repeat 5]
     python benchmarks/bench_pe.py --scale [--block 4]
     python benchmarks/bench_pe.py --preset cs3
"""

from __future__ import annotations

import argparse
import importlib.util
import resource
import time
from pathlib import Path

import numpy as np

import wafersim as ws

KERNEL = Path(__file__).resolve().parent.parent / "examples" / "kernels" / "matvec_wafer.py"


def _kernel():
    spec = importlib.util.spec_from_file_location("matvec_wafer", KERNEL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def lone_pe_baseline(mod, block: int, repeat: int, chunks: int = 200) -> tuple[float, float]:
    """(CE cycles/s, element-ops/s) of one block's program on the lone-PE bench, fed the
    block's chunk of x ``chunks`` times so that the run is long enough to time."""
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (block, block)).astype(np.float16)
    x = rng.uniform(-1, 1, block).astype(np.float16)
    best = (0.0, 0.0)
    for _ in range(repeat):
        pe = ws.pe.LonePE()
        pe.load(mod.program(block, block, "only", 0, "fp16", bias=False))
        pe.write("a", a.T.ravel())
        pe.launch("main")
        pe.inject(mod.X, np.tile(x, chunks), index=np.tile(np.arange(block), chunks))
        pe.close(mod.X, mod.FINISH, start=block * chunks)
        t0 = time.perf_counter()
        s = pe.run()
        dt = time.perf_counter() - t0
        best = max(best, (s["cycles"] / dt, s["element_ops"] / dt))
    return best


def wafer_rate(mod, size: int, block: int, threads: int, repeat: int) -> dict:
    best = None
    for _ in range(repeat):
        r = mod.run_grid(size, block, threads=threads, check=False, seed=1)
        s = r["stats"]
        res = {"seconds": r["seconds"], "cycles": s.cycles,
               "pe_cycles": size * size * s.cycles / r["seconds"],
               "ce_steps": s.pes.total("cycles") / r["seconds"],
               "ops": s.pes.total("element_ops") / r["seconds"],
               "parallel": s.parallel_phases, "y": r["y"]}
        if best is None or res["seconds"] < best["seconds"]:
            best = res
    return best


SCALE_ROWS, SCALE_COLS = 757, 996  # PEs of the largest wafer-scale chip
SCALE_NEEDS_GB = 18


def _meminfo_gb(field: str) -> float:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 2**20
    return float("nan")


def _rss_gb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 2**20
    return float("nan")


def scale_run(mod, block: int) -> None:
    """Program 3 over every PE of a 757 x 996 wafer, once."""
    avail = _meminfo_gb("MemAvailable")
    if not avail >= SCALE_NEEDS_GB:
        raise SystemExit(f"--scale needs {SCALE_NEEDS_GB} GB of available memory; "
                         f"{avail:.1f} GB are available")
    R, C = SCALE_ROWS, SCALE_COLS
    print(f"program 3 on {R} x {C} = {R * C} PEs, blocks of {block} x {block} "
          f"(A is {R * block} x {C * block} fp16)", flush=True)
    t0 = time.perf_counter()
    r = mod.run_grid(C, block, rows=R, check=False, seed=1)
    total = time.perf_counter() - t0
    s = r["stats"]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"  setup and results (everything but Wafer.run): {total - r['seconds']:7.1f} s")
    print(f"  Wafer.run: {s.cycles} cycles in {r['seconds']:7.1f} s = "
          f"{s.cycles / r['seconds']:6.1f} cycles/s = "
          f"{R * C * s.cycles / r['seconds'] / 1e6:6.2f} M PE-cycles/s; "
          f"{s.pes.total('element_ops')} element operations")
    print(f"  resident memory: {_rss_gb():5.2f} GiB now, {peak:5.2f} GiB at the peak "
          f"({peak * 2**30 / (R * C):6.0f} bytes per PE)")


SMALL_KERNEL = """
.data
.export x
x:    .space fp16, 16
.code
.task main, 40
main: movi r1, 1
      movi r2, 2
      term
"""
PRESET_BYTES_PER_PE = 15_000   # measured: 256 x 256 PEs with the small kernel


def _rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def preset_run(name: str) -> None:
    """A preset wafer with the small kernel on every PE: resident bytes per PE by stage."""
    p = ws.presets.preset(name)
    need_gb = p.pes * PRESET_BYTES_PER_PE * 1.2 / 2**30 + 1.0
    avail = _meminfo_gb("MemAvailable")
    if not avail >= need_gb:
        raise SystemExit(f"--preset {p.name} needs about {need_gb:.1f} GB of available memory; "
                         f"{avail:.1f} GB are available")
    print(f"preset {p.name}: {p.describe()}; a small kernel on every PE", flush=True)
    stages = []
    base = _rss_bytes()
    t0 = time.perf_counter()

    def stage(what: str) -> None:
        stages.append((what, _rss_bytes(), time.perf_counter()))

    w = ws.Wafer.preset(p.name)
    stage("wafer built (routers)")
    w.load(SMALL_KERNEL)
    stage("kernel loaded on every PE")
    w.memcpy_h2d("x", np.arange(16, dtype=np.float16))
    w.launch("main")
    s = w.run()
    stage(f"32 bytes copied in, launched, run ({s.cycles} cycles)")
    assert s.quiescent and len(s.pes) == p.pes and s.pes[(p.rows - 1, p.cols - 1)]["busy_cycles"] > 0
    before, t_before = base, t0
    for what, rss, t in stages:
        print(f"  {what:<50} +{(rss - before) / p.pes:7.0f} bytes per PE  {t - t_before:6.1f} s")
        before, t_before = rss, t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"  total: {(stages[-1][1] - base) / 2**30:5.2f} GiB resident "
          f"({(stages[-1][1] - base) / p.pes:6.0f} bytes per PE); peak of the process "
          f"{peak / 2**30:5.2f} GiB ({(peak - base) / p.pes:6.0f} bytes per PE above the "
          f"{base / 2**20:.0f} MiB of an idle interpreter); {w.describe_time()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", "--grid", dest="size", type=int, default=16,
                    help="PEs per side (--grid 64: the 64 x 64 run)")
    ap.add_argument("--block", type=int, default=None,
                    help="rows and columns of A per PE (default 32; 4 with --scale)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scale", action="store_true",
                    help=f"one run on a {SCALE_ROWS} x {SCALE_COLS} wafer (about 16 GB)")
    ap.add_argument("--preset", choices=sorted(ws.presets.PRESETS),
                    help="a preset wafer with a small kernel on every PE: memory per PE")
    args = ap.parse_args()
    if args.preset:
        preset_run(args.preset)
        return
    mod = _kernel()
    if args.scale:
        scale_run(mod, args.block or 4)
        return
    args.block = args.block or 32
    base_cycles, base_ops = lone_pe_baseline(mod, args.block, args.repeat)
    print(f"baseline lone-PE bench, one {args.block} x {args.block} block: "
          f"{base_cycles / 1e6:6.2f} M CE-cycles/s, {base_ops / 1e6:6.2f} M element-ops/s")
    n = args.size * args.block
    print(f"program 3: y = A x, {n} x {n} fp16 on {args.size} x {args.size} PEs "
          f"(blocks of {args.block} x {args.block})")
    results = {}
    for threads in (1, 2):
        r = wafer_rate(mod, args.size, args.block, threads, args.repeat)
        results[threads] = r
        print(f"  {threads} thread(s): {r['cycles']} cycles in {r['seconds'] * 1e3:7.1f} ms = "
              f"{r['pe_cycles'] / 1e6:6.2f} M PE-cycles/s ({r['pe_cycles'] / base_cycles:5.2f} x "
              f"baseline), {r['ce_steps'] / 1e6:6.2f} M CE-steps/s, {r['ops'] / 1e6:6.2f} M "
              f"element-ops/s ({r['ops'] / base_ops:5.2f} x baseline); "
              f"{r['parallel']} parallel phases")
    same = np.array_equal(results[1]["y"].view(np.uint16), results[2]["y"].view(np.uint16))
    print(f"  2 threads / 1 thread: {results[1]['seconds'] / results[2]['seconds']:.2f} x; "
          f"identical results and cycles: {same and results[1]['cycles'] == results[2]['cycles']}")


if __name__ == "__main__":
    main()
