"""Seeded random section cuts with many reconvergent joins, for tests and benchmarks."""

from __future__ import annotations

import random

from .._args import int_arg, items_arg, real_arg
from ..errors import ConfigError
from .graph import MAX_COUNT, Buffer, Load, PipelineGraph, Stage

__all__ = ["random_graph", "MAX_STAGES"]

#: The most stages (and loads) of a random graph.
MAX_STAGES = 100_000


def random_graph(stages: int, *, seed: int = 0, loads: int = 1, max_depth: int = 6,
                 bytes_per_batch: tuple[int, ...] = (1,), join_prob: float = 0.5,
                 fanout_prob: float = 0.3, reach: int = 4, max_latency: int = 1) -> PipelineGraph:
    """``loads`` loads and ``stages`` stages in a chain; each stage reads its predecessor
    and, with probability ``join_prob``, one more node up to ``reach`` places back (a
    reconvergent join); an input reuses an existing buffer of its producer with probability
    ``fanout_prob`` (a fan-out buffer). Depths are uniform in 1..max_depth, bytes per batch
    drawn from ``bytes_per_batch``, stage latencies uniform in 1..max_latency."""
    stages = int_arg("stages", stages, 1, MAX_STAGES)
    loads = int_arg("loads", loads, 1, MAX_STAGES)
    seed = int_arg("seed", seed, 0)
    max_depth = int_arg("max_depth", max_depth, 1, MAX_COUNT)
    max_latency = int_arg("max_latency", max_latency, 1, MAX_COUNT)
    reach = int_arg("reach", reach, 0, MAX_STAGES)
    join_prob = real_arg("join_prob", join_prob, 0, 1)
    fanout_prob = real_arg("fanout_prob", fanout_prob, 0, 1)
    sizes = items_arg("bytes_per_batch", bytes_per_batch, "byte counts")
    if not sizes:
        raise ConfigError("bytes_per_batch must list at least one byte count, got an empty list")
    sizes = [int_arg(f"bytes_per_batch[{i}]", b, 1, MAX_COUNT) for i, b in enumerate(sizes)]
    rng = random.Random(seed)
    nodes: list[Load | Stage] = [Load(f"L{i}") for i in range(loads)]
    outs: dict[str, list[dict]] = {n.name: [] for n in nodes}
    buffers: list[dict] = []

    def connect(u: str, v: str) -> None:
        reusable = [b for b in outs[u] if v not in b["consumers"]]
        if reusable and rng.random() < fanout_prob:
            rng.choice(reusable)["consumers"].append(v)
            return
        b = {"name": f"b{len(buffers)}", "producer": u, "consumers": [v],
             "depth": rng.randint(1, max_depth), "bytes": rng.choice(sizes)}
        buffers.append(b)
        outs[u].append(b)

    for i in range(stages):
        name = f"S{i}"
        earlier = [n.name for n in nodes]
        first = earlier[-1] if i else "L0"
        inputs = [first]
        pool = [u for u in earlier[-reach - 1:] if u != first]
        if pool and rng.random() < join_prob:
            inputs.append(rng.choice(pool))
        nodes.append(Stage(name, latency=rng.randint(1, max_latency)))
        outs[name] = []
        for u in inputs:
            connect(u, name)
    stage_names = [n.name for n in nodes if isinstance(n, Stage)]
    for load in [n.name for n in nodes if isinstance(n, Load)]:
        if not outs[load]:
            connect(load, rng.choice(stage_names))
    return PipelineGraph(nodes, [Buffer(b["name"], b["producer"], tuple(b["consumers"]),
                                        b["depth"], b["bytes"]) for b in buffers])
