"""Why a graph cannot be balanced under the given options, named by node.

Without the block rows the level formulation is a system of difference constraints
(lo <= p_i - p_j <= hi). Such a system has no solution exactly when its constraint graph
has a negative cycle (Bellman-Ford finds one); the cycle runs through the paths that
cannot agree, and the last node on it in topological order is where they meet.
"""

from __future__ import annotations

from .errors import InfeasibleError
from .formulation import LevelProblem
from .graph import PipelineGraph
from .options import BalanceOptions

__all__ = ["negative_cycle", "explain_infeasible"]

_ZERO = ("zero",)


def _constraint_graph(prob: LevelProblem) -> tuple[list, list[tuple[int, int, float]]]:
    """Vertices (variable keys) and edges j -> i of weight w for p_i <= p_j + w. Every row
    of the problem built without block rows is such a difference; only the time origin has
    bounds, and a difference system does not need them."""
    keys = [None] * len(prob.var_lb)
    for k, i in prob.index.items():
        keys[i] = k
    edges = []

    def bound(i: int, j: int, lo: float, hi: float) -> None:  # lo <= p_i - p_j <= hi
        if hi != float("inf"):
            edges.append((j, i, hi))
        if lo != float("-inf"):
            edges.append((i, j, -lo))

    for terms, lo, hi in zip(prob.rows, prob.lb, prob.ub):
        (a, ca), (b, cb) = terms
        i, j = (a, b) if ca > 0 else (b, a)
        bound(i, j, lo, hi)
    return keys, edges


def negative_cycle(prob: LevelProblem) -> list | None:
    """Variable keys on a negative cycle of the constraint graph, or None if feasible."""
    keys, edges = _constraint_graph(prob)
    n = len(keys)
    dist = [0.0] * n  # a virtual source reaches every vertex at distance 0
    pred = [-1] * n
    last = -1
    for _ in range(n):
        last = -1
        for j, i, w in edges:
            if dist[j] + w < dist[i] - 1e-9:
                dist[i] = dist[j] + w
                pred[i] = j
                last = i
        if last < 0:
            return None
    v = last
    for _ in range(n):  # step back onto the cycle
        v = pred[v]
    cycle, u = [v], pred[v]
    while u != v:
        cycle.append(u)
        u = pred[u]
    return [keys[i] for i in cycle]


def explain_infeasible(graph: PipelineGraph, options: BalanceOptions) -> None:
    """Raise :class:`InfeasibleError` naming the node where the paths cannot agree (does
    nothing if the options do allow a balancing)."""
    prob = LevelProblem(graph, options, objective="tidy")
    cycle = negative_cycle(prob)
    if cycle is None:
        return
    pos = {v: i for i, v in enumerate(graph.order)}
    nodes = [k[1] for k in cycle if k[0] == "tau"]
    joins = [v for v in nodes if len(graph.inputs[v]) >= 2]
    node = max(joins or nodes, key=pos.__getitem__)
    buffers = sorted({k[1] for k in cycle if k[0] in ("x", "y")})
    loads = sorted({v for v in nodes if not graph.inputs[v]})
    if _ZERO in cycle:
        loads = sorted(set(loads) | {v for v in nodes if v in graph.loads})
    involved = tuple(buffers + loads)
    what = "join" if node in joins else "node"
    goal = ("its input paths cannot reach the same total depth" if options.mode == "equal"
            else "its input paths cannot get capacity covering each other's latency")
    hints = []
    fixed = [b for b in buffers if not graph.buffers[b].tunable]
    if not options.tune:
        hints.append("tune=False")
    elif fixed:
        hints.append(f"fixed buffer(s) {', '.join(fixed)}")
    if not options.insert:
        hints.append("insert=False")
    if loads and options.mode == "equal" and not options.delay_loads:
        hints.append(f"load(s) {', '.join(loads)} at fixed times (delay_loads=False)")
    because = f" with {'; '.join(hints)}" if hints else ""
    raise InfeasibleError(
        f"cannot balance {what} {node!r}: {goal}{because}; the constraints on "
        f"{', '.join(involved) or 'its inputs'} contradict each other", node=node,
        involved=involved)
