"""Speed and quality of buffer balancing (seed 004) on graphs of 10 to 10,000 stages.

Two families of section cuts with many reconvergent joins, one load each:

* "residual": what mapped networks look like: residual blocks (a skip buffer around two to
  four stages), attention-like blocks (three branches of different lengths into one join)
  and, now and then, a long skip over several blocks;
* "random": ``ws.balance.random_graph``: every stage joins, with probability 1/2, a node
  up to four places back; a dense, hard case.

Each graph is balanced (equal mode) with two memory models:

* linear: one batch per block (bytes per batch = block bytes), where the LP is exact and
  both solvers apply: prints both times and the gap MIP blocks - LP blocks (must be 0);
* rounded: 1-4 bytes per batch in 4-byte blocks (4, 2, 1.33 or 1 batches per block): the
  MIP; the LP's answer (which ignores rounding) is printed as a gap above the MIP.

Times are wall-clock seconds of the whole pass (build, solve, clean-up, verification),
best of --repeat runs, with the process CPU seconds beside them (the machine may be
shared); "aim" is the ratio to the aims of 1 s at 1,000 stages and 10 s at 10,000.
The baseline for quality is the greedy pairwise pass of FIG. 12: its blocks and how many
joins it leaves unbalanced (up to 1,000 stages; it is quadratic).

Run: python benchmarks/bench_balance.py [--sizes 10,100,1000,10000] [--repeat 3]
                                        [--family residual,random] [--time-limit 120]
"""

from __future__ import annotations

import argparse
import random
import time

import wafersim as ws
from wafersim.balance import Buffer, Load, PipelineGraph, Stage

from timing import best_of  # noqa: E402  (benchmarks/timing.py)

AIM = {1000: 1.0, 10000: 10.0}
GREEDY_MAX = 1000   # the greedy pass recomputes path depths per join: quadratic


def residual_network(stages: int, seed: int, bytes_per_batch: tuple[int, ...]) -> PipelineGraph:
    """A chain of residual and attention-like blocks with occasional long skips."""
    rng = random.Random(seed)
    nodes: list = [Load("in")]
    buffers: list[Buffer] = []

    def buf(u: str, v: str) -> None:
        buffers.append(Buffer(f"b{len(buffers)}", u, (v,), rng.randint(1, 4),
                              rng.choice(bytes_per_batch)))

    def chain(start: str, length: int, tag: str) -> str:
        prev = start
        for i in range(length):
            name = f"{tag}.{i}"
            nodes.append(Stage(name, latency=rng.choice((1, 1, 2))))
            buf(prev, name)
            prev = name
        return prev

    last, block, marks = "in", 0, ["in"]
    while len(nodes) - 1 < stages:
        tag = f"k{block}"
        if rng.random() < 0.3:                      # attention-like: Q, K, V of 1..3 stages
            ends = [chain(last, rng.randint(1, 3), f"{tag}{p}") for p in "qkv"]
            nodes.append(Stage(f"{tag}.join"))
            for e in ends:
                buf(e, f"{tag}.join")
            buf(last, f"{tag}.join")                # and the residual around it
        else:                                       # residual: 2..4 stages and a skip
            end = chain(last, rng.randint(2, 4), tag)
            nodes.append(Stage(f"{tag}.join"))
            buf(end, f"{tag}.join")
            buf(last, f"{tag}.join")
        if len(marks) > 4 and rng.random() < 0.15:  # a long skip from a few blocks back
            nodes.append(Stage(f"{tag}.long"))
            buf(f"{tag}.join", f"{tag}.long")
            buf(marks[-4], f"{tag}.long")
            last = f"{tag}.long"
        else:
            last = f"{tag}.join"
        marks.append(last)
        block += 1
    return PipelineGraph(nodes, buffers)


def build(family: str, stages: int, bytes_per_batch: tuple[int, ...]) -> PipelineGraph:
    if family == "residual":
        return residual_network(stages, seed=stages, bytes_per_batch=bytes_per_batch)
    return ws.balance.random_graph(stages, seed=stages, bytes_per_batch=bytes_per_batch)


def timed(fn, repeat: int):
    """(best wall seconds, CPU seconds of that run's process, result)."""
    out = {}

    def once():
        c0 = time.process_time()
        out["r"] = fn()
        out["cpu"] = time.process_time() - c0
    wall = best_of(once, repeat)
    return wall, out["cpu"], out["r"]


def aim(stages: int, wall: float) -> str:
    return f"{wall / AIM[stages]:.2f}x aim" if stages in AIM else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10,100,1000,10000")
    ap.add_argument("--family", default="residual,random")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=120.0)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    tl = args.time_limit
    for family in args.family.split(","):
        print(f"\n== {family} ==")
        print(f"{'stages':>7} {'joins':>6} | {'linear: LP s (cpu)':>20} {'MIP s':>7} {'gap':>4} "
              f"{'aim':>10} | {'rounded: MIP s (cpu)':>21} {'status':>10} {'aim':>10} "
              f"{'blocks+':>8} {'LP+':>7} | {'greedy+':>8} {'unbal':>6}")
        for n in sizes:
            repeat = args.repeat if n <= 1000 else 1
            lin = build(family, n, (4,))
            t_lp, c_lp, r_lp = timed(lambda: ws.balance.balance(lin, block_bytes=4, solver="lp",
                                                                time_limit=tl), repeat)
            t_mip, _, r_mip = timed(lambda: ws.balance.balance(
                lin, block_bytes=4, solver="milp", cross_check=False, time_limit=tl), repeat)
            gap = r_mip.blocks_after - r_lp.blocks_after
            rnd = build(family, n, (1, 2, 3, 4))
            t_r, c_r, r_r = timed(lambda: ws.balance.balance(rnd, block_bytes=4, time_limit=tl),
                                  repeat)
            r_h = ws.balance.balance(rnd, block_bytes=4, solver="lp", time_limit=tl)
            lp_gap = (r_h.blocks_added - r_r.blocks_added) / max(1, r_r.blocks_added)
            gr = ws.balance.greedy(rnd, block_bytes=4) if n <= GREEDY_MAX else None
            print(f"{n:>7} {len(lin.joins):>6} | {t_lp:>12.3f} ({c_lp:5.2f}) {t_mip:>7.3f} "
                  f"{gap:>4} {aim(n, t_lp):>10} | {t_r:>13.3f} ({c_r:5.2f}) {r_r.status:>10} "
                  f"{aim(n, t_r):>10} {r_r.blocks_added:>8} {lp_gap:>+6.1%} | "
                  f"{gr.blocks_added if gr else '-':>8} {len(gr.unbalanced) if gr else '-':>6}",
                  flush=True)
    print("\nblocks+: blocks the MIP adds; LP+: how many more the LP's answer adds; greedy+ and "
          "unbal: the greedy baseline's blocks and the joins it leaves unbalanced.")


if __name__ == "__main__":
    main()
