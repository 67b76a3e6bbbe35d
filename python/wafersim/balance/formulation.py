"""The level formulation of buffer balancing, as matrices for scipy's HiGHS solvers.

The seed writes one equality per pair of paths into a join [0180]; on a DAG with many
reconvergent paths the pairs grow exponentially. Giving every point of the graph a
*level* (its arrival time in batch steps) states all of them at once, with one row per
buffer and per edge:

* ``zero``    the time origin; a load's level minus zero is its load time: its offset, or
  more when delaying loads is allowed ([0176]: free, so delays cost nothing);
* ``tau[v]``  level of node v;
* ``x[b]``    level at the end of buffer b: ``x[b] - tau[u] = depth_b + tune_b``, tune >= 0;
* ``y[e]``    level at the end of an inserted buffer on edge e = (b, v):
  ``y[e] - x[b] = new_e >= 0`` (only on edges where inserting can pay, see below);
* equal mode: ``tau[v] - y[e] = existing inserted depth`` on every edge, so every path
  into v has the same total depth: the seed's constraint for every join at once, global by
  construction (FIG. 12's order problem cannot occur);
* capacity mode: ``tau[v] - y[e] <= existing inserted depth``: the edge holds at least
  the level difference, which is at least the latency (next row), so no cycle of the
  pipeline runs slower than one batch per step;
* both modes: ``tau[v] - tau[u] >= latency_u`` (a buffer holds every batch its producer
  has in flight; in equal mode only binding when a stage takes more than one step);
* blocks: ``block_bytes * pmu_b >= bytes_b * (x[b] - tau[u])`` and the same for inserted
  buffers, with integer pmu; the objective is the sum of pmu [0181], [0186].

Inserting on an edge only pays where the buffer cannot be tuned instead, or feeds several
consumers: for a single consumer, tuning gives the same levels and costs no more blocks
(ceil(a + b) <= ceil(a) + ceil(b)), so those edges get no insertion variables.

Without the block rows, with the cost linear in added depth, the matrix is a network
matrix (every row a difference of two levels, plus bounds): totally unimodular, so the LP
optimum at a vertex is integral. It is the dual of a min-cost flow, as in retiming.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import csr_matrix

from .graph import PipelineGraph
from .memory import block_count
from .options import BalanceOptions

__all__ = ["LevelProblem", "Levels", "actions", "linear_cost"]

INF = np.inf


@dataclass
class Levels:
    """A solution in levels: what the decoder turns into depths, insertions and delays."""

    tau: dict[str, int]
    x: dict[str, int]
    y: dict[tuple[str, str], int]


@dataclass
class LevelProblem:
    """The variables and rows of one solve.

    ``objective``: "blocks" (integer pmu variables, the MIP), "bytes" (linear cost of
    added depth in fractional blocks, the LP) or "tidy" (added depth plus load delays,
    with ``caps`` bounding each buffer's depth: the clean-up after the cost is fixed).
    """

    graph: PipelineGraph
    options: BalanceOptions
    objective: str = "blocks"
    caps: dict | None = None
    index: dict = field(default_factory=dict)
    rows: list = field(default_factory=list)
    lb: list = field(default_factory=list)
    ub: list = field(default_factory=list)
    var_lb: list = field(default_factory=list)
    var_ub: list = field(default_factory=list)
    cost: list = field(default_factory=list)
    private: dict = field(default_factory=dict)
    row_cost: dict = field(default_factory=dict)
    _arrays: tuple | None = None

    def __post_init__(self):
        self.tunable, self.insertable = actions(self.graph, self.options)
        self._build()

    # ---- variables and rows -------------------------------------------------------------
    def _var(self, key, lo=-INF, hi=INF, cost=0.0) -> int:
        self.index[key] = len(self.var_lb)
        self.var_lb.append(lo)
        self.var_ub.append(hi)
        self.cost.append(cost)
        return self.index[key]

    def _row(self, terms: list[tuple[int, float]], lo: float, hi: float) -> None:
        self.rows.append(terms)
        self.lb.append(lo)
        self.ub.append(hi)

    def _build(self) -> None:
        g, o = self.graph, self.options
        equal = o.mode == "equal"
        zero = self._var(("zero",), 0.0, 0.0)  # the time origin
        for v in g.order:
            self._var(("tau", v))
        for b in g.buffers.values():
            self._var(("x", b.name))
        for e in self.insertable:
            self._var(("y",) + e)
        tunable = {b.name for b in self.tunable}
        weight = {b.name: b.bytes_per_batch / o.block_bytes for b in g.buffers.values()}
        blocks_vars = self.objective == "blocks"

        for s in g.loads:
            ts, off = self.index[("tau", s)], g.nodes[s].offset
            if equal and not o.delay_loads:
                self._row([(ts, 1.0), (zero, -1.0)], off, off)
            else:  # a delay in equal mode; any start in capacity mode (pulled to 0 by tidy)
                self._row([(ts, 1.0), (zero, -1.0)], off if equal else 0.0, INF)
                if self._tidy:
                    self.row_cost[len(self.rows) - 1] = 1.0
        for b in g.buffers.values():
            tu, xb = self.index[("tau", b.producer)], self.index[("x", b.name)]
            if b.name in tunable:
                hi = INF if self.caps is None else self.caps[b.name]
                self._row([(xb, 1.0), (tu, -1.0)], b.depth, hi)
                self._charge(b.name, [(xb, 1.0), (tu, -1.0)], weight[b.name], blocks_vars,
                             least=block_count(b.depth, b.bytes_per_batch, o.block_bytes))
            else:
                self._row([(xb, 1.0), (tu, -1.0)], b.depth, b.depth)
        for (bn, c) in self.insertable:
            ye, xb = self.index[("y", bn, c)], self.index[("x", bn)]
            hi = INF if self.caps is None else self.caps[(bn, c)]
            self._row([(ye, 1.0), (xb, -1.0)], 0.0, hi)
            self._charge((bn, c), [(ye, 1.0), (xb, -1.0)], weight[bn], blocks_vars)

        for (bn, c) in g.edges:
            b = g.buffers[bn]
            tv, tu = self.index[("tau", c)], self.index[("tau", b.producer)]
            end = self.index.get(("y", bn, c), self.index[("x", bn)])
            ext = g.inserted_depth(bn, c)
            self._row([(tv, 1.0), (end, -1.0)], ext if equal else -INF, ext)
            lat = g.latency(b.producer)
            if not equal or lat > b.depth + ext:
                self._row([(tv, 1.0), (tu, -1.0)], lat, INF)

    @property
    def _tidy(self) -> bool:
        return self.objective == "tidy"

    def _charge(self, key, diff: list[tuple[int, float]], weight: float, blocks_vars: bool,
                least: int = 0) -> None:
        """The cost of a buffer whose depth is the level difference of the row just added
        (``least``: the blocks it has already, a bound that keeps the relaxation integral
        where the depth does not change)."""
        if blocks_vars:
            p = self._var(("pmu", key), float(least), INF, 1.0)
            self.private[p] = len(self.rows)  # the block row below is its only row
            bytes_, block = weight * self.options.block_bytes, self.options.block_bytes
            self._row([(p, float(block))] + [(i, -a * bytes_) for i, a in diff], 0.0, INF)
        else:  # "bytes": fractional blocks; "tidy": added depth, unweighted
            self.row_cost[len(self.rows) - 1] = weight if self.objective == "bytes" else 1.0

    # ---- matrices -----------------------------------------------------------------------
    def objective_vector(self) -> np.ndarray:
        """Costs of the variables: the private pmu costs plus, per row with a cost, that
        cost times the row's level difference (kept per row so that a cost follows its row
        when the problem is split, see :mod:`.decompose`)."""
        c = np.array(self.cost, dtype=float)
        for r, w in self.row_cost.items():
            for i, a in self.rows[r]:
                if i not in self.private:
                    c[i] += a * w
        return c

    def matrix(self) -> csr_matrix:
        data, ri, ci = [], [], []
        for r, terms in enumerate(self.rows):
            for i, a in terms:
                ri.append(r)
                ci.append(i)
                data.append(a)
        return csr_matrix((data, (ri, ci)), shape=(len(self.rows), len(self.var_lb)))

    def arrays(self) -> tuple:
        """(matrix, row lb, row ub, var lb, var ub, private var costs, cost per row
        difference, private mask) as numpy arrays, built once."""
        if self._arrays is None:
            weight = np.zeros(len(self.rows))
            for r, w in self.row_cost.items():
                weight[r] = w
            private = np.zeros(len(self.var_lb), bool)
            private[list(self.private)] = True
            self._arrays = (self.matrix(), np.array(self.lb), np.array(self.ub),
                            np.array(self.var_lb), np.array(self.var_ub), np.array(self.cost),
                            weight, private)
        return self._arrays

    def decode(self, values: np.ndarray) -> Levels:
        """Levels from a solver's vector (rounded; the caller verifies them)."""
        r = np.rint(values).astype(np.int64)
        r = r - r[self.index[("zero",)]]
        tau = {k[1]: int(r[i]) for k, i in self.index.items() if k[0] == "tau"}
        x = {k[1]: int(r[i]) for k, i in self.index.items() if k[0] == "x"}
        y = {(k[1], k[2]): int(r[i]) for k, i in self.index.items() if k[0] == "y"}
        return Levels(tau, x, y)

    def pmu(self, values: np.ndarray) -> dict:
        """Blocks per tunable buffer and insertable edge (objective "blocks")."""
        return {k[1]: int(round(values[i])) for k, i in self.index.items() if k[0] == "pmu"}

    def linear(self) -> bool:
        return linear_cost(self.graph, self.options)


def actions(graph: PipelineGraph, options: BalanceOptions) -> tuple[list, list]:
    """The buffers that may be tuned, and the (buffer, consumer) edges that get an
    insertion variable (see the module docstring for why not all of them)."""
    o = options
    tunable = [b for b in graph.buffers.values() if o.tune and b.tunable]
    insertable = [(b.name, c) for b in graph.buffers.values() for c in b.consumers
                  if o.insert and (b.name, c) not in graph.inserts
                  and (len(b.consumers) > 1 or not (o.tune and b.tunable))]
    return tunable, insertable


def linear_cost(graph: PipelineGraph, options: BalanceOptions) -> bool:
    """True when the cost in blocks is linear in added depth: every batch that may be
    added fills whole blocks, so the LP's cost in bytes is exactly blocks."""
    tunable, insertable = actions(graph, options)
    touched = {b.name for b in tunable} | {bn for bn, _ in insertable}
    return all(graph.buffers[b].bytes_per_batch % options.block_bytes == 0 for b in touched)
