"""Thread scaling of the cycle loop: the runs of issue 24's table at several thread counts.

Each run is a child process that builds its wafer, times ``Wafer.run`` alone, and prints
the seconds, the cycle count, how many cycles ran in parallel, its peak memory and a digest
of the results (y for program 3, the arrivals for packets). Around ``Wafer.run`` it also
takes the process's CPU seconds (user and system), minor page faults and voluntary context
switches (a thread that slept: waiting for work, or for a lock), which say where a run that
scales badly loses its time; they go to the per-run lines and to --json. Printed per run and thread
count: median [min, max] seconds over --repeat runs and the ratio of the 1-thread median
to this median (the speed-up; the baseline is 1 thread of the same build). Every thread
count must give the same digest and cycle count: the script exits non-zero otherwise.

Runs (--runs, comma separated):
  full    program 3, 757 x 996 PEs, 4 x 4 blocks (4,777 cycles; about 12 GiB)
  p3-256  program 3, 256 x 256 PEs, 8 x 8 blocks
  p3-128  program 3, 128 x 128 PEs, 16 x 16 blocks
  p3-64   program 3, 64 x 64 PEs, 32 x 32 blocks
  pk-256  uniform packets at injection 0.02, 256 x 256, 500 cycles
  pk-64   uniform packets at injection 0.05, 64 x 64, 2,000 cycles

``--build NAME=DIR`` (repeatable) compares installed builds: each child runs with DIR
first on PYTHONPATH (e.g. ``pip install --target DIR .`` of another commit); the builds
alternate within each repeat, so they see the same minutes of the machine. Without it the
interpreter's own wafersim runs.

``--spin US`` sets ``Wafer.spin_wait`` (how long a waiting thread spins before it sleeps)
for every run; without it each wafer keeps its default. ``--chunks 4,8`` runs each build
with each ``Wafer.chunks_per_thread`` (chunks of rows per thread), alternated like builds
and named "BUILD cN" (the schedule only: every variant must give the same results).
``--env NAME:VAR=VALUE[,VAR=VALUE]`` (repeatable) adds, for each build, a variant run with
those environment variables, named "BUILD NAME", alternated with the plain one: e.g.
``--env pad:MALLOC_TOP_PAD_=67108864`` (glibc's heaps grown 64 MiB at a time, so threads
that fault in fresh pages wait less for the heap's growth, docs/scale.md).

Run: python benchmarks/bench_scaling.py [--runs p3-256,pk-256] [--threads 1,2,4,8,16]
     [--repeat 3] [--build old=/tmp/old --build new=/tmp/new] [--spin 50] [--chunks 4,8]
     [--env pad:MALLOC_TOP_PAD_=67108864] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap

from timing import ARRIVALS_DIGEST  # benchmarks/timing.py

PROGRAM3 = textwrap.dedent("""
    from wafersim.kernels.matvec import run_grid
    r = run_grid({cols}, {block}, rows={rows}, check=False, seed=1, threads={threads})
    s, seconds = r["stats"], r["seconds"]
    digest = hashlib.sha256(np.ascontiguousarray(r["y"]).view(np.uint16).tobytes())
""")

PACKETS = textwrap.dedent("""
    tr = ws.noc.bernoulli("uniform", {rows}, {cols}, {rate}, {cycles}, seed=1)
    w = ws.Wafer({rows}, {cols}, mode="packets", threads={threads})
    w.inject(tr.src, 0, data=np.arange(len(tr)) & 0xFFFFFFFF, dest=tr.dst, cycle=tr.cycle)
    t0 = time.perf_counter()
    s = w.run({cycles})
    seconds = time.perf_counter() - t0
""") + ARRIVALS_DIGEST

CHILD = textwrap.dedent("""
    import hashlib, json, resource, time
    import numpy as np
    import wafersim as ws
    spin, chunks, usage, plain_run = {spin}, {chunks}, {{}}, ws.Wafer.run
    def run(self, *args, **kwargs):  # Wafer.run, with the knobs and the process's usage
        if spin is not None:
            self.spin_wait = spin
        if chunks is not None:
            if not hasattr(type(self), "chunks_per_thread"):
                raise SystemExit("--chunks: this build has no Wafer.chunks_per_thread")
            self.chunks_per_thread = chunks
        u0 = resource.getrusage(resource.RUSAGE_SELF)
        out = plain_run(self, *args, **kwargs)
        u1 = resource.getrusage(resource.RUSAGE_SELF)
        usage.update(user=u1.ru_utime - u0.ru_utime, sys=u1.ru_stime - u0.ru_stime,
                     faults=u1.ru_minflt - u0.ru_minflt, vcsw=u1.ru_nvcsw - u0.ru_nvcsw)
        return out
    ws.Wafer.run = run
    {body}
    print(json.dumps({{"seconds": seconds, "cycles": int(s.cycles),
                      "parallel": int(s.parallel_phases), "digest": digest.hexdigest()[:16],
                      "peak_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
                      **usage}}))
""")

RUNS = {
    "full": ("program 3, 757 x 996, 4 x 4 blocks", PROGRAM3, dict(rows=757, cols=996, block=4)),
    "p3-256": ("program 3, 256 x 256, 8 x 8 blocks", PROGRAM3, dict(rows=256, cols=256, block=8)),
    "p3-128": ("program 3, 128 x 128, 16 x 16 blocks", PROGRAM3,
               dict(rows=128, cols=128, block=16)),
    "p3-64": ("program 3, 64 x 64, 32 x 32 blocks", PROGRAM3, dict(rows=64, cols=64, block=32)),
    "pk-256": ("uniform packets 0.02, 256 x 256, 500 cycles", PACKETS,
               dict(rows=256, cols=256, rate=0.02, cycles=500)),
    "pk-64": ("uniform packets 0.05, 64 x 64, 2,000 cycles", PACKETS,
              dict(rows=64, cols=64, rate=0.05, cycles=2000)),
}


def child(run: str, threads: int, path: str | None, spin: int | None = None,
          chunks: int | None = None, extra_env: dict | None = None) -> dict:
    _, body, args = RUNS[run]
    code = CHILD.format(body=body.format(threads=threads, **args), spin=spin, chunks=chunks)
    env = dict(os.environ, **(extra_env or {}))
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    if path:
        env["PYTHONPATH"] = path + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{run} with {threads} threads failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", default="p3-256,p3-128,p3-64,pk-256,pk-64",
                    help=f"comma separated, of: {', '.join(RUNS)}")
    ap.add_argument("--threads", default="1,2,4,8,16")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--build", action="append", default=[], metavar="NAME=DIR",
                    help="an installed build to compare (DIR goes first on PYTHONPATH)")
    ap.add_argument("--spin", type=int, help="Wafer.spin_wait for every run, microseconds")
    ap.add_argument("--chunks", help="Wafer.chunks_per_thread values to compare, e.g. 4,8")
    ap.add_argument("--env", action="append", default=[], metavar="NAME:VAR=VALUE,...",
                    help="a variant of each build run with these environment variables")
    ap.add_argument("--json", help="also write every run's numbers to this file")
    args = ap.parse_args()
    runs = args.runs.split(",")
    for run in runs:
        if run not in RUNS:
            raise SystemExit(f"unknown run {run!r}; choose from {', '.join(RUNS)}")
    counts = [int(t) for t in args.threads.split(",")]
    if 1 not in counts:
        raise SystemExit("--threads must include 1 (the baseline of the ratios)")
    builds = [b.split("=", 1) for b in args.build] or [["this", None]]
    chunk_values = [int(c) for c in args.chunks.split(",")] if args.chunks else [None]
    envs = [("", {})]
    for spec in args.env:
        label, _, assignments = spec.partition(":")
        pairs = [a.split("=", 1) for a in assignments.split(",") if a]
        if not label or not pairs or any(len(p) != 2 or not p[0] for p in pairs):
            raise SystemExit(f"--env {spec!r}: write NAME:VAR=VALUE[,VAR=VALUE]")
        envs.append((label, dict(pairs)))
    builds = [(" ".join(x for x in (name, "" if c is None else f"c{c}", label) if x),
               path, c, env)
              for name, path in builds for c in chunk_values for label, env in envs]
    records, bad = [], False
    for run in runs:
        title = RUNS[run][0]
        times = {(b, t): [] for b, _, _, _ in builds for t in counts}
        seen = {}
        for k in range(args.repeat):
            order = builds if k % 2 == 0 else builds[::-1]
            for t in counts:
                for name, path, chunks, env in order:
                    r = child(run, t, path, args.spin, chunks, env)
                    times[name, t].append(r["seconds"])
                    seen.setdefault((r["digest"], r["cycles"]), []).append((name, t))
                    records.append({"run": run, "build": name, "threads": t, **r})
                    print(f"    {run} {name} {t:2d} threads: {r['seconds']:8.3f} s, "
                          f"{r['cycles']} cycles, {r['parallel']} parallel, "
                          f"{r['peak_gib']:.2f} GiB; cpu {r['user']:.2f} user "
                          f"{r['sys']:.2f} sys, {r['faults']} faults, "
                          f"{r['vcsw']} sleeps", flush=True)
        print(f"{title}: seconds of Wafer.run, median [min, max] of {args.repeat}; "
              f"speed-up over 1 thread of the same build")
        for name, _, _, _ in builds:
            base = statistics.median(times[name, 1])
            for t in counts:
                v = times[name, t]
                med = statistics.median(v)
                print(f"  {name:>10} {t:2d} threads {med:8.3f} [{min(v):.3f}, {max(v):.3f}] "
                      f"{base / med:6.2f}x", flush=True)
        if len(seen) != 1:
            bad = True
            print(f"  DIFFERENT results: {sorted(seen)}")
        else:
            print(f"  every run gave digest {next(iter(seen))[0]}, {next(iter(seen))[1]} cycles")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)
    if bad:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
