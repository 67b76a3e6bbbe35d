"""The seed's own test of balance: do all paths into a join have the same total depth?

Path totals are counted as in [0146] and [0180]: the load time where the path starts plus
the depths of the stage buffers (and inserted buffers) along it. The minimum and maximum
total over all paths into a node come from one pass in topological order, so no path is
enumerated and the check stays linear in the graph's size.
"""

from __future__ import annotations

from .graph import PipelineGraph, check_graph

__all__ = ["path_totals", "unbalanced_joins"]


def path_totals(graph: PipelineGraph) -> dict[str, tuple[int, int]]:
    """(smallest, largest) total depth over the paths from any load into each node."""
    check_graph(graph)
    span: dict[str, tuple[int, int]] = {}
    for v in graph.order:
        if not graph.inputs[v]:
            span[v] = (graph.nodes[v].offset, graph.nodes[v].offset)
            continue
        arrivals = [(span[graph.producer(b)][0] + graph.capacity(b, v),
                     span[graph.producer(b)][1] + graph.capacity(b, v)) for b in graph.inputs[v]]
        span[v] = (min(a for a, _ in arrivals), max(b for _, b in arrivals))
    return span


def unbalanced_joins(graph: PipelineGraph) -> list[str]:
    """Joins some of whose input paths differ in total depth, in topological order."""
    span = path_totals(graph)
    return [v for v in graph.joins if span[v][0] != span[v][1]]
