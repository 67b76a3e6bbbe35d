"""Predicted initiation interval (steps per batch) of the stage-level pipeline model.

In the model of :mod:`.pipeline` a buffer edge u -> v is a pair of places of a timed
marked graph: data going forward (delay = u's latency, no token at the start) and free
slots going back (delay 0: room freed in a step is refilled in the same step; tokens = the
edge's capacity). A stage fires at most once per step. The steady interval is the largest
ratio, over the cycles of that graph, of the forward delays to the free slots: for a
fork and a join, the latency of the long path over the capacity of the short one,
max(1, D_long / D_short) (digest section 3).

* :func:`steady_interval` is exact for the whole graph (a linear program);
* :func:`join_intervals` gives, per join, the worst ratio over pairs of paths from a
  common ancestor that meet at it (what that join alone would impose). A cycle through
  several joins (two loads crossing into two joins) counts in the steady interval only;
* :func:`full_rate` checks a certificate: levels with latency <= level difference <=
  capacity on every edge prove that no cycle is slower than one batch per step.
"""

from __future__ import annotations

import numbers
from fractions import Fraction

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import csr_matrix

from ..errors import WaferError
from .._args import mapping_arg, show
from ..errors import ConfigError
from .graph import PipelineGraph, check_graph

__all__ = ["steady_interval", "join_intervals", "full_rate"]


def full_rate(graph: PipelineGraph, levels: dict[str, int]) -> bool:
    """True when ``levels`` (every node's level, an integer) prove an interval of one step
    at every join."""
    check_graph(graph)
    mapping_arg("levels", levels, "node -> level")
    for v in graph.nodes:
        if v not in levels:
            raise ConfigError(f"levels has no level for node {v!r}")
        if isinstance(levels[v], bool) or not isinstance(levels[v], numbers.Integral):
            raise ConfigError(f"levels[{v!r}] must be an integer, got {show(levels[v])}")
    for b, v in graph.edges:
        u = graph.producer(b)
        if not graph.latency(u) <= levels[v] - levels[u] <= graph.capacity(b, v):
            return False
    return True


def join_intervals(graph: PipelineGraph) -> dict[str, Fraction]:
    """Per join: max(1, worst latency of a path into it / smallest capacity of another
    path from the same ancestor). Quadratic in the graph's size; for analysis."""
    check_graph(graph)
    worst = {v: Fraction(1) for v in graph.joins}
    pos = {v: i for i, v in enumerate(graph.order)}
    for w in graph.order:
        lat = {w: 0}
        cap = {w: 0}
        for v in graph.order[pos[w] + 1:]:
            ins = [(graph.producer(b), b) for b in graph.inputs[v] if graph.producer(b) in lat]
            if not ins:
                continue
            lat[v] = max(lat[u] + graph.latency(u) for u, _ in ins)
            cap[v] = min(cap[u] + graph.capacity(b, v) for u, b in ins)
            if v in worst:
                worst[v] = max(worst[v], Fraction(lat[v], cap[v]))
    return worst


def steady_interval(graph: PipelineGraph) -> float:
    """The steady interval of the whole pipeline: the smallest lambda for which levels p
    exist with latency_u <= p_v - p_u <= lambda * capacity on every edge."""
    check_graph(graph)
    n = len(graph.order)
    idx = {v: i for i, v in enumerate(graph.order)}
    lam = n
    data, ri, ci, ub = [], [], [], []
    for r, (b, v) in enumerate(graph.edges):
        u = graph.producer(b)
        # latency: p_u - p_v <= -lat
        ri += [2 * r, 2 * r]
        ci += [idx[u], idx[v]]
        data += [1.0, -1.0]
        ub.append(-graph.latency(u))
        # capacity: p_v - p_u - cap * lambda <= 0
        ri += [2 * r + 1] * 3
        ci += [idx[v], idx[u], lam]
        data += [1.0, -1.0, -float(graph.capacity(b, v))]
        ub.append(0.0)
    if not ub:
        return 1.0
    A = csr_matrix((data, (ri, ci)), shape=(len(ub), n + 1))
    c = np.zeros(n + 1)
    c[lam] = 1.0
    bounds = [(None, None)] * n + [(1.0, None)]
    res = linprog(c, A_ub=A, b_ub=np.array(ub), bounds=bounds, method="highs")
    if res.status != 0:
        raise WaferError(f"steady_interval: the LP failed ({res.message})", category="internal")
    return float(res.x[lam])
