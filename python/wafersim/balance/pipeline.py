"""The stage-level pipeline model: which step each stage fires on, batch by batch.

Rules (the seed's flow control [0155]-[0156], synchronous in steps):

* a stage fires when every input buffer holds a readable batch and every output buffer
  has room; it then takes one batch from each input and puts one into each output, which
  becomes readable ``latency`` steps later (1: the next step);
* a load fires the same way from step ``offset + 1`` on (its input, off-chip memory, is
  always ready); a stage without outputs writes to off-chip memory, which always has room;
* a buffer has room for a batch while every consumer's backlog (batches written, the one in
  flight included, and not yet read by that consumer) is below the edge's capacity (depth,
  plus an inserted buffer's depth on that edge);
* stages are evaluated downstream first, so room freed in a step is refilled in the same
  step, while data written in a step is read in a later one.

With these rules FIG. 11A's batches leave the join at steps 3, 5, 7, 9 and FIG. 11B's at
3, 4, 5, 6 [0157], [0159].
"""

from __future__ import annotations

from dataclasses import dataclass

from .._args import int_arg
from ..errors import CycleLimitError, DeadlockError
from .graph import Load, PipelineGraph, check_graph

__all__ = ["PipelineRun", "simulate", "MAX_BATCHES"]

#: The most batches one :func:`simulate` call runs (its time and memory grow with them).
MAX_BATCHES = 10**6


@dataclass(frozen=True)
class PipelineRun:
    """What :func:`simulate` observed.

    * ``fire_times[v]``: the step of each firing of node v (batch k fires k-th);
    * ``completion``: per batch, the step its last output left (latest sink firing);
    * ``interval``: steady steps per batch, measured over the second half of the batches;
    * ``stalls[b]``: steps in which b's producer had its inputs but b had no room
      (back-pressure);
    * ``peak[b]``: the most batches b held for one consumer (in flight included);
    * ``steps``: steps until every node fired for every batch.
    """

    fire_times: dict[str, list[int]]
    completion: list[int]
    interval: float
    stalls: dict[str, int]
    peak: dict[str, int]
    steps: int


def simulate(graph: PipelineGraph, batches: int = 32, max_steps: int | None = None) -> PipelineRun:
    """Run ``batches`` batches through ``graph`` under the rules of the module docstring.

    ``max_steps``: the most steps to run (default: more than the graph can need);
    :class:`~wafersim.CycleLimitError` when the batches take longer."""
    check_graph(graph)
    batches = int_arg("batches", batches, 1, MAX_BATCHES)
    max_steps = int_arg("max_steps", max_steps, 1, none_ok=True)
    limited = max_steps is not None
    if not limited:
        start = max((n.offset for n in graph.nodes.values() if isinstance(n, Load)), default=0)
        longest = sum(n.latency for n in graph.nodes.values())
        max_steps = start + (batches + 1) * (longest + 1) + 10

    # per buffer: the step each written batch becomes readable; per edge: batches read
    ready: dict[str, list[int]] = {b: [] for b in graph.buffers}
    read = {(b, c): 0 for b, c in graph.edges}
    cap = {(b, c): graph.capacity(b, c) for b, c in graph.edges}
    fire_times: dict[str, list[int]] = {v: [] for v in graph.nodes}
    stalls = {b: 0 for b in graph.buffers}
    peak = {b: 0 for b in graph.buffers}
    downstream_first = graph.order[::-1]
    start = {v: (n.offset if isinstance(n, Load) else 0) for v, n in graph.nodes.items()}
    remaining = len(graph.nodes) * batches

    step = 0
    while remaining:
        step += 1
        if step > max_steps and limited:
            raise CycleLimitError(f"{batches} batches did not get through the pipeline within "
                                  f"max_steps={max_steps} steps ({remaining} firings left)")
        if step > max_steps:
            raise DeadlockError(f"the pipeline made no progress for {max_steps} steps",
                                category="internal")
        for v in downstream_first:
            if len(fire_times[v]) == batches or step <= start[v]:
                continue
            if not all(read[(b, v)] < len(ready[b]) and ready[b][read[(b, v)]] <= step
                       for b in graph.inputs[v]):
                continue
            full = [b for b in graph.outputs[v]
                    if any(len(ready[b]) - read[(b, c)] >= cap[(b, c)]
                           for c in graph.buffers[b].consumers)]
            if full:
                for b in full:
                    stalls[b] += 1
                continue
            for b in graph.inputs[v]:
                read[(b, v)] += 1
            for b in graph.outputs[v]:
                ready[b].append(step + graph.nodes[v].latency)
                held = max(len(ready[b]) - read[(b, c)] for c in graph.buffers[b].consumers)
                peak[b] = max(peak[b], held)
            fire_times[v].append(step)
            remaining -= 1

    sinks = [v for v in graph.order if not graph.outputs[v]]
    completion = [max(fire_times[v][k] for v in sinks) for k in range(batches)]
    half = batches // 2
    interval = ((completion[-1] - completion[half]) / (batches - 1 - half)
                if batches - 1 > half else float("nan"))
    return PipelineRun(fire_times, completion, interval, stalls, peak, step)
