"""Splitting the level formulation into independent pieces: its biconnected blocks.

Every row of the formulation ties two levels (plus, for a block row, a pmu variable no
other row uses), and every cost is a cost on a row's level *difference*. Two blocks of the
undirected graph of levels share at most one level (a cut vertex), and shifting all
levels of one side by a constant changes no difference. So each block can be solved on
its own with one level (its *anchor*: where the block hangs off the rest, the time origin
for the first blocks) fixed at 0, and the answers glued back by shifting each block to
agree with its parent at the anchor. The optimum of the whole is the sum of the blocks'.

A chain of stages with skip connections falls apart into one piece per reconvergent
region, and the solver sees many small problems instead of one large one: HiGHS's MIP
slows down sharply with size on this formulation, while the pieces are quick.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix

from .formulation import LevelProblem

__all__ = ["Piece", "split", "Batch", "batches", "glue"]


@dataclass
class Piece:
    """One block: its rows, its variables (levels, then private ones) and its anchor."""

    rows: list[int]
    vars: list[int]
    anchor: int


def _level_pairs(prob: LevelProblem) -> list[tuple[int, int]]:
    """The two levels each row ties."""
    pairs = []
    for terms in prob.rows:
        lv = [i for i, _ in terms if i not in prob.private]
        pairs.append((min(lv), max(lv)))
    return pairs


def _blocks(n: int, edges: list[tuple[int, int]]) -> list[list[int]]:
    """Biconnected blocks (lists of edge ids) of an undirected graph, by Tarjan's
    low-point method, iterative so that long chains do not hit the recursion limit."""
    adj: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for e, (a, b) in enumerate(edges):
        adj[a].append((b, e))
        adj[b].append((a, e))
    disc = [-1] * n
    low = [0] * n
    clock = 0
    stack_e: list[int] = []
    out: list[list[int]] = []
    for start in range(n):
        if disc[start] >= 0:
            continue
        disc[start] = low[start] = clock
        clock += 1
        walk = [(start, -1, 0)]
        while walk:
            v, parent_edge, i = walk[-1]
            if i < len(adj[v]):
                walk[-1] = (v, parent_edge, i + 1)
                w, e = adj[v][i]
                if e == parent_edge:
                    continue
                if disc[w] < 0:
                    stack_e.append(e)
                    disc[w] = low[w] = clock
                    clock += 1
                    walk.append((w, e, 0))
                elif disc[w] < disc[v]:
                    stack_e.append(e)
                    low[v] = min(low[v], disc[w])
                continue
            walk.pop()
            if walk:
                u = walk[-1][0]
                low[u] = min(low[u], low[v])
                if low[v] >= disc[u]:
                    block = []
                    while True:
                        e = stack_e.pop()
                        block.append(e)
                        if e == parent_edge:
                            break
                    out.append(block)
    return out


def split(prob: LevelProblem) -> list[Piece]:
    """The pieces of ``prob``, parents before children (breadth first from the origin)."""
    pairs = _level_pairs(prob)
    edge_id: dict[tuple[int, int], int] = {}
    rows_of: list[list[int]] = []
    for r, p in enumerate(pairs):
        if p not in edge_id:
            edge_id[p] = len(rows_of)
            rows_of.append([])
        rows_of[edge_id[p]].append(r)
    edges = list(edge_id)
    blocks = _blocks(len(prob.var_lb), edges)
    verts = [sorted({v for e in blk for v in edges[e]}) for blk in blocks]
    blocks_at: dict[int, list[int]] = {}
    for k, vs in enumerate(verts):
        for v in vs:
            blocks_at.setdefault(v, []).append(k)
    origin = prob.index[("zero",)]
    pieces: list[Piece] = []
    seen = [False] * len(blocks)
    queue = deque((k, origin) for k in blocks_at.get(origin, []))
    for k, _ in queue:
        seen[k] = True
    while queue:
        k, anchor = queue.popleft()
        rows = sorted(r for e in blocks[k] for r in rows_of[e])
        private = [i for r in rows for i, _ in prob.rows[r] if i in prob.private]
        pieces.append(Piece(rows, verts[k] + private, anchor))
        for v in verts[k]:
            if v == anchor:
                continue
            for k2 in blocks_at[v]:
                if not seen[k2]:
                    seen[k2] = True
                    queue.append((k2, v))
    if not all(seen):  # every level reaches the origin through some row
        raise AssertionError("a block of the formulation is not connected to the time origin")
    return pieces


@dataclass
class Batch:
    """Several pieces as one block-diagonal problem, each with its own copy of its levels."""

    prob: LevelProblem
    pieces: list[Piece]

    def __post_init__(self):
        self.slices: list[slice] = []  # where each piece's variables sit in the batch
        n = 0
        for p in self.pieces:
            self.slices.append(slice(n, n + len(p.vars)))
            n += len(p.vars)
        self.n = n

    def arrays(self):
        """(cost, matrix, row lb, row ub, var lb, var ub) of the batch; each piece's
        anchor level is fixed at 0. A cost on a row's difference goes to that piece's
        copies of the row's levels. Gathered with numpy from the whole problem's matrix."""
        A, lb, ub, var_lb, var_ub, cost, weight, private = self.prob.arrays()
        nvars = A.shape[1]
        rows = np.concatenate([np.asarray(p.rows) for p in self.pieces])
        owner = np.repeat(np.arange(len(self.pieces)), [len(p.rows) for p in self.pieces])
        cols = np.concatenate([np.asarray(p.vars) for p in self.pieces])
        col_owner = np.repeat(np.arange(len(self.pieces)), [len(p.vars) for p in self.pieces])
        # the nonzeros of the chosen rows, row by row
        starts, lengths = A.indptr[rows], A.indptr[rows + 1] - A.indptr[rows]
        first = np.repeat(np.cumsum(lengths) - lengths, lengths)
        nz = np.arange(lengths.sum()) - first + np.repeat(starts, lengths)
        # each nonzero's column, renumbered into its own piece's copy of that variable
        keys = col_owner * nvars + cols
        order = np.argsort(keys)
        wanted = np.repeat(owner, lengths) * nvars + A.indices[nz]
        local = order[np.searchsorted(keys[order], wanted)]
        M = csr_matrix((A.data[nz], (np.repeat(np.arange(len(rows)), lengths), local)),
                       shape=(len(rows), len(cols)))
        c = cost[cols] + M.T @ weight[rows]
        vlb = np.where(private[cols], var_lb[cols], -np.inf)
        vub = np.where(private[cols], var_ub[cols], np.inf)
        for p, sl in zip(self.pieces, self.slices):
            k = sl.start + p.vars.index(p.anchor)
            vlb[k] = vub[k] = 0.0
        return c, M, lb[rows], ub[rows], vlb, vub

    def private_mask(self) -> np.ndarray:
        """True for the batch's variables private to one row (the block counts)."""
        private = self.prob.arrays()[-1]
        return np.concatenate([private[np.array(p.vars)] for p in self.pieces])

    def answers(self, x: np.ndarray) -> list[np.ndarray]:
        """Each piece's part of the batch's answer (in the piece's own variable order)."""
        return [x[sl] for sl in self.slices]


def batches(pieces: list[Piece], prob: LevelProblem, max_rows: int) -> list[tuple[list[int], Batch]]:
    """The pieces grouped, in order, into batches of about ``max_rows`` rows; each with the
    indices of its pieces."""
    out = []
    group: list[int] = []
    size = 0
    for k, p in enumerate(pieces):
        if group and size + len(p.rows) > max_rows:
            out.append((group, Batch(prob, [pieces[i] for i in group])))
            group, size = [], 0
        group.append(k)
        size += len(p.rows)
    if group:
        out.append((group, Batch(prob, [pieces[i] for i in group])))
    return out


def glue(prob: LevelProblem, pieces: list[Piece], answers: list[np.ndarray]) -> np.ndarray:
    """The full answer: each piece shifted to agree, at its anchor, with the levels its
    parent (solved earlier in ``pieces``'s order) already set."""
    out = np.zeros(len(prob.var_lb))
    for p, x in zip(pieces, answers):
        shift = out[p.anchor] - x[p.vars.index(p.anchor)]
        for v, xv in zip(p.vars, x):
            if v != p.anchor:
                out[v] = xv + (0.0 if v in prob.private else shift)
    return out
