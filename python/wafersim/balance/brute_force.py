"""A pure-Python exhaustive search: the oracle the solver is tested against.

It tries every level of every node within a window above the level the node's inputs
force, and for every buffer every split of the level difference into tuning and inserted
buffers on any of its consumer edges. It shares no code with the solver except the cost
of a buffer (:func:`.memory.block_count`) and the checks of its options. A branch is
dropped once its blocks reach the best complete answer (costs only grow), which keeps
small graphs (up to about 8 nodes) fast.

Searching is complete within the window: a cheaper answer with some level more than
``window`` above what its inputs force would be missed, so tests pass a window that also
covers the solver's answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._args import int_arg, show
from ..errors import ConfigError
from .graph import Load, PipelineGraph, check_graph
from .memory import block_count
from .options import BalanceOptions

__all__ = ["BruteForce", "brute_force", "MAX_WINDOW"]

#: The widest search window: the search grows as (window + 1) ** nodes.
MAX_WINDOW = 256


@dataclass(frozen=True)
class BruteForce:
    """The cheapest answer found: blocks added, node levels, final depths and inserted
    depths per (buffer, consumer) edge."""

    blocks_added: int
    levels: dict[str, int]
    depths: dict[str, int]
    inserted: dict[tuple[str, str], int]


def brute_force(graph: PipelineGraph, *, mode: str = "equal", block_bytes: int = 1,
                tune: bool = True, insert: bool = True, delay_loads: bool = False,
                window: int | dict[str, int] = 4, below: int | None = None) -> BruteForce | None:
    """The fewest blocks that balance ``graph`` (same options as ``balance``), or None.

    ``window``: how far above what its inputs force (a load: above its offset) each
    node's level is searched; one number for all, or a number per node.
    ``below``: search only answers cheaper than this many added blocks (a known answer's
    cost plus one prunes much harder; the verdict stays the search's own: a cheaper
    answer is still found, and None says nothing cheaper exists in the window)."""
    check_graph(graph)
    opts = BalanceOptions(mode=mode, block_bytes=block_bytes, tune=tune, insert=insert,
                          delay_loads=delay_loads)
    mode, block_bytes, tune, insert, delay_loads = (
        opts.mode, opts.block_bytes, opts.tune, opts.insert, opts.delay_loads)
    window = _window(window, graph)
    below = int_arg("below", below, 0, none_ok=True)
    equal = mode == "equal"
    order = list(graph.order)
    pos = {v: i for i, v in enumerate(order)}
    # a buffer is costed as soon as its producer and every consumer have a level
    done_at: dict[str, list[str]] = {v: [] for v in order}
    for b in graph.buffers.values():
        last = max((b.producer, *b.consumers), key=pos.__getitem__)
        done_at[last].append(b.name)
    base = {b.name: block_count(b.depth, b.bytes_per_batch, block_bytes)
            for b in graph.buffers.values()}

    def buffer_cost(bn: str, level: dict[str, int]):
        """Cheapest (added blocks, depth, {consumer: inserted}) for buffer bn, or None."""
        b = graph.buffers[bn]
        u = level[b.producer]
        lat = graph.latency(b.producer)
        need = {}
        for c in b.consumers:
            if level[c] - u < lat:
                return None
            need[c] = level[c] - u - graph.inserted_depth(bn, c)  # depth the edge must add up to
        can_tune = tune and b.tunable
        top = max(need.values()) if not equal else min(need.values())
        candidates = range(b.depth, max(b.depth, top) + 1) if can_tune else [b.depth]
        best = None
        for depth in candidates:
            extra = {}
            for c in b.consumers:
                gap = need[c] - depth
                if equal and gap < 0:
                    break
                gap = max(gap, 0)
                if gap and not (insert and (bn, c) not in graph.inserts):
                    break
                extra[c] = gap
            else:
                cost = block_count(depth, b.bytes_per_batch, block_bytes) - base[bn]
                cost += sum(block_count(g, b.bytes_per_batch, block_bytes) for g in extra.values())
                if best is None or cost < best[0]:
                    best = (cost, depth, extra)
        return best

    def choices(v: str, level: dict[str, int]) -> range:
        n = graph.nodes[v]
        w = window[v]
        if isinstance(n, Load):
            if not equal:
                return range(0, w + 1)
            return range(n.offset, n.offset + (w if delay_loads else 0) + 1)
        # depths only grow, so in equal mode an edge adds at least its capacity today
        low = max(level[graph.producer(b)] + max(graph.latency(graph.producer(b)),
                                                  graph.capacity(b, v) if equal else 0)
                  for b in graph.inputs[v])
        return range(low, low + w + 1)

    best: list = [None]
    level: dict[str, int] = {}
    picks: dict[str, tuple] = {}

    def search(i: int, cost: int) -> None:
        if (best[0] is not None and cost >= best[0][0]) or (below is not None and cost >= below):
            return
        if i == len(order):
            best[0] = (cost, dict(level), dict(picks))
            return
        v = order[i]
        for t in choices(v, level):
            level[v] = t
            added, ok = 0, True
            for bn in done_at[v]:
                c = buffer_cost(bn, level)
                if c is None:
                    ok = False
                    break
                picks[bn] = c
                added += c[0]
            if ok:
                search(i + 1, cost + added)
        level.pop(v, None)

    search(0, 0)
    if best[0] is None:
        return None
    cost, lv, pk = best[0]
    return BruteForce(cost, lv, {bn: p[1] for bn, p in pk.items()},
                      {(bn, c): g for bn, p in pk.items() for c, g in p[2].items() if g})


def _window(window, graph: PipelineGraph) -> dict[str, int]:
    """The search window of every node: one number for all, or a dict naming every node."""
    if not isinstance(window, dict):
        w = int_arg("window", window, 0, MAX_WINDOW)
        return {v: w for v in graph.nodes}
    unknown = [v for v in window if v not in graph.nodes]
    missing = [v for v in graph.nodes if v not in window]
    if unknown or missing:
        raise ConfigError(f"window must give every node a number and name no other: "
                          f"{'unknown ' + show(unknown) if unknown else ''}"
                          f"{'; ' if unknown and missing else ''}"
                          f"{'missing ' + show(missing) if missing else ''}")
    return {v: int_arg(f"window[{v!r}]", window[v], 0, MAX_WINDOW) for v in graph.nodes}
