"""The static routes of a mapping [0293], [0323]: for every color, each router's source
(Src) and destination (Dest) directions [0318]. Built as plain sets, checked for two
sources of one color at a router, then written to the wafer.
"""

from __future__ import annotations

from collections import defaultdict

from ..errors import RouteError
from .placement import LayerBlock, branch_blocks
from .recompute_trigger import trigger_routes

__all__ = ["RouteTable", "mapping_routes"]

_STEP_DIR = {(0, 1): ("E", "W"), (0, -1): ("W", "E"), (1, 0): ("N", "S"), (-1, 0): ("S", "N")}


class RouteTable:
    """color -> router -> (rx set, tx set), with a note of which role put each entry."""

    def __init__(self):
        self.table: dict[int, dict[tuple[int, int], tuple[set, set]]] = defaultdict(dict)
        self.roles: dict[int, str] = {}

    def _entry(self, color: int, p: tuple[int, int]) -> tuple[set, set]:
        return self.table[color].setdefault(p, (set(), set()))

    def line(self, color: int, role: str, points: list[tuple[int, int]], enter: str,
             deliver=(), leave: str | None = None) -> None:
        """``color`` enters ``points[0]`` from ``enter`` (a direction or "RAMP") and runs
        along ``points`` (adjacent routers); it goes off the ramp at every point in
        ``deliver`` and out of the last point through ``leave`` if given."""
        self.roles[color] = role
        deliver = set(deliver)
        for k, p in enumerate(points):
            rx, tx = self._entry(color, p)
            if k == 0:
                rx.add(enter)
            else:
                prev = points[k - 1]
                rx.add(_STEP_DIR[(p[0] - prev[0], p[1] - prev[1])][1])
            if k + 1 < len(points):
                nxt = points[k + 1]
                tx.add(_STEP_DIR[(nxt[0] - p[0], nxt[1] - p[1])][0])
            elif leave is not None:
                tx.add(leave)
            if p in deliver:
                tx.add("RAMP")

    def check(self) -> None:
        for color, routers in self.table.items():
            for p, (rx, tx) in routers.items():
                if len(rx) != 1:
                    raise RouteError(f"mapping: color {color} ({self.roles[color]}) would enter "
                                     f"router {p} from {sorted(rx)}: two sources [0302]")
                if not tx:
                    raise RouteError(f"mapping: color {color} ({self.roles[color]}) reaches "
                                     f"router {p} and goes nowhere")

    def routers(self) -> set[tuple[int, int]]:
        return {p for routers in self.table.values() for p in routers}

    def apply(self, wafer) -> None:
        """Adds the routes to ``wafer`` (RouteError if a router already routes one of these
        colors from another direction)."""
        self.check()
        for color, routers in sorted(self.table.items()):
            points = list(routers)
            wafer.add_routes(color, points, rx=[set(routers[p][0]) for p in points],
                             tx=[set(routers[p][1]) for p in points])


def _row(r: int, c0: int, c1: int) -> list[tuple[int, int]]:
    step = 1 if c1 >= c0 else -1
    return [(r, c) for c in range(c0, c1 + step, step)]


def _col(c: int, r0: int, r1: int) -> list[tuple[int, int]]:
    step = 1 if r1 >= r0 else -1
    return [(r, c) for r in range(r0, r1 + step, step)]


def mapping_routes(blocks: list[LayerBlock], colors: dict[str, int], wafer_cols: int,
                   head=None, keeps=None) -> RouteTable:
    """Every route of a mapping (docs/training.md, "Routes"). ``head``: the loss lowering
    when it puts a column of PEs east of the output layer (it routes the outputs and the
    targets there); ``keeps``: a reverse checkpoint's policy (per layer, it keeps its
    activations), whose recompute triggers go on color RC (recompute_trigger.py)."""
    t = RouteTable()
    L = len(blocks)
    first = blocks[0]
    branches = branch_blocks([b.dense for b in blocks])
    forks = {p - 1: (p, s) for p, s, _ in branches}      # fork layer -> (f's first, g's first)
    f_lasts = {s - 1 for _, s, _ in branches}            # their finalizers send to the join
    g_firsts = {s: p for p, s, _ in branches}            # g's first layer -> f's first
    # activations into layer 0: from the west edge along each row, to every PE of the row
    for r in range(first.rows):
        row = first.row0 + r
        pts = _row(row, 0, first.col0 + first.cols - 1)
        t.line(colors["A0"], "activations in", pts, "W", deliver=first.points())
    for b in blocks:
        a_out = colors[f"A{(b.index + 1) % 2}"]
        nxt = blocks[b.index + 1] if b.index + 1 < L else None
        for c in range(b.cols):
            fr, fc = b.finalizer(c)
            if b.index in forks:
                # a two-branch fork: one stream along row c through branch f's blocks into
                # both branches' first layers
                f0, g0 = (blocks[k] for k in forks[b.index])
                t.line(colors["X"], "two-branch inputs", _row(fr, fc, g0.col0 + g0.cols - 1),
                       "RAMP", deliver=f0.points() + g0.points())
            elif b.index in f_lasts:
                pass   # branch f's output goes to the join on S (below)
            elif nxt is not None:
                # F_c's activations east along row c into the next block's row c [0408]
                end = nxt.col0 + nxt.cols - 1
                t.line(a_out, "activations", _row(fr, fc, end), "RAMP", deliver=nxt.points())
            elif head is not None and head.has_head:
                pass   # the loss's head column routes the outputs and targets (below)
            else:
                # the output layer: to the host at the east edge; targets come back the same way
                t.line(a_out, "outputs", _row(fr, fc, wafer_cols - 1), "RAMP", leave="E")
                t.line(colors[f"J{L % 2}"], "targets", _row(fr, wafer_cols - 1, fc), "E",
                       deliver=[(fr, fc)])
            # forward partial sums toward F_c: rows below go north, rows above south [0412]
            for r in range(b.rows):
                if r == c:
                    continue
                a = b.at(r, c)
                if r < c:
                    color, to = colors[f"P{r % 2}"], b.at(r + 1, c)
                else:
                    color, to = colors[f"P{1 - r % 2}"], b.at(r - 1, c)
                t.line(color, "partial sums", [a, to], "RAMP", deliver=[to])
            # deltas from F_c down (and up) its column [0409]
            if b.rows > 1:
                col_pts = [b.at(r, c) for r in range(b.rows) if r != c]
                if c > 0:
                    t.line(colors["D"], "deltas", _col(b.col0 + c, fr, b.row0), "RAMP",
                           deliver=col_pts)
                if c < b.rows - 1:
                    t.line(colors["D"], "deltas", _col(b.col0 + c, fr, b.row0 + b.rows - 1),
                           "RAMP", deliver=col_pts)
        if b.index > 0:
            prev = blocks[b.index - 1]
            for r in range(b.rows):
                # delta partial sums west along row r, hop by hop
                for k in range(b.cols - 1, 0, -1):
                    t.line(colors[f"H{k % 2}"], "delta sums", [b.at(r, k), b.at(r, k - 1)],
                           "RAMP", deliver=[b.at(r, k - 1)])
                if b.index in g_firsts:
                    # branch g's dL/dx starts the row of branch f's first layer at its east end
                    f0 = blocks[g_firsts[b.index]]
                    er, ec = f0.at(r, f0.cols - 1)
                    t.line(colors["G"], "branch g's dL/dx", _row(er, b.col0, ec), "RAMP",
                           deliver=[(er, ec)])
                    continue
                # ... and from column 0 to the previous layer's finalizer of column r
                fr, fc = prev.finalizer(r)
                t.line(colors[f"J{b.index % 2}"], "delta sums", _row(fr, b.col0, fc), "RAMP",
                       deliver=[(fr, fc)])
    for p, s, j in branches:
        f_last, join = blocks[s - 1], blocks[j]
        for c in range(join.cols):
            # f(x) from branch f's last finalizers east to the join's FIFO, and dL/dy back
            jr, jc = join.finalizer(c)
            fr, fc = f_last.finalizer(c)
            t.line(colors["S"], "skips", _row(fr, fc, jc), "RAMP", deliver=[(jr, jc)])
            t.line(colors["K"], "two-branch dL/dy", _row(jr, jc, fc), "RAMP", deliver=[(fr, fc)])
    if head is not None and head.has_head:
        head.head_routes(t, blocks[-1], colors, wafer_cols, colors[f"A{L % 2}"],
                         colors[f"J{L % 2}"])
    split_joins = {j for _, _, j in branches}
    for join in blocks:
        p = join.dense.skip_from
        if p is None or join.index in split_joins:
            continue
        source, first = blocks[p - 1], blocks[p]
        for c in range(join.cols):
            # the residual's input x, from the fork (F_c of layer p - 1) east to the join's
            # F_c; and dL/dy from there west to the east end of the first layer's row c
            jr, jc = join.finalizer(c)
            sr, sc = source.finalizer(c)
            t.line(colors["S"], "skips", _row(sr, sc, jc), "RAMP", deliver=[(jr, jc)])
            er, ec = first.at(c, first.cols - 1)
            t.line(colors["B"], "skip deltas", _row(jr, jc, ec), "RAMP", deliver=[(er, ec)])
    if keeps is not None and "RC" in colors:
        trigger_routes(t, blocks, keeps, colors["RC"])
    return t
