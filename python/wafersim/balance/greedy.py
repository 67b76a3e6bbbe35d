"""The greedy pairwise baseline the seed argues against (FIG. 12, [0170]).

Joins are taken one at a time in a given order; at each, every input path shallower than
the deepest is raised to it by tuning its buffer next to the join ("increase the lesser
total depth", [0163]). A buffer shared by two joins is raised for one and may leave the
other unbalanced: with joins (J2, J1) on FIG. 12, b2 goes 3 -> 4 -> 5 and J2 keeps b3 at 4.

Like the pass, it first deepens every buffer shallower than its producer's latency (a
buffer holds the batches in flight), so that the two spend blocks on the same model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .._args import int_arg, items_arg, show
from ..errors import ConfigError
from .graph import MAX_COUNT, PipelineGraph, check_graph
from .memory import graph_blocks
from .paths import unbalanced_joins

__all__ = ["GreedyResult", "greedy"]


@dataclass(frozen=True)
class GreedyResult:
    """Final depths, the rewritten graph, blocks added and the joins left unbalanced."""

    graph: PipelineGraph
    depths: dict[str, int]
    blocks_added: int
    unbalanced: list[str]


def greedy(graph: PipelineGraph, order: Sequence[str] | None = None, *,
           block_bytes: int = 1) -> GreedyResult:
    """Balance joins one by one in ``order`` (join names; default: topological) by tuning
    input buffers."""
    check_graph(graph)
    block_bytes = int_arg("block_bytes", block_bytes, 1, MAX_COUNT)
    if order is None:
        order = graph.joins
    elif isinstance(order, str):
        order = [order]
    order = items_arg("order", order, "join names")
    for j in order:
        if not isinstance(j, str) or j not in graph.joins:
            raise ConfigError(f"greedy: order names {show(j)}, which is not a join of the graph "
                              f"(joins: {', '.join(graph.joins) or 'none'})")
    depths = {b: max(buf.depth, graph.latency(buf.producer)) if buf.tunable else buf.depth
              for b, buf in graph.buffers.items()}
    for j in order:
        hi = _latest_arrivals(graph, depths)
        arrivals = {b: hi[graph.producer(b)] + depths[b] + graph.inserted_depth(b, j)
                    for b in graph.inputs[j]}
        top = max(arrivals.values())
        for b, a in arrivals.items():
            if a < top and graph.buffers[b].tunable:
                depths[b] += top - a
    g = graph.rewritten(depths=depths)
    return GreedyResult(g, depths, graph_blocks(g, block_bytes) - graph_blocks(graph, block_bytes),
                        unbalanced_joins(g))


def _latest_arrivals(graph: PipelineGraph, depths: dict[str, int]) -> dict[str, int]:
    """The largest total depth over the paths into each node, with the given depths."""
    hi: dict[str, int] = {}
    for v in graph.order:
        hi[v] = max((hi[graph.producer(b)] + depths[b] + graph.inserted_depth(b, v)
                     for b in graph.inputs[v]), default=getattr(graph.nodes[v], "offset", 0))
    return hi
