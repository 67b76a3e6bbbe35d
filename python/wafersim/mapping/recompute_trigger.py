"""The trigger of a reverse checkpoint's recompute pass on the fabric (seed 000 FIG. 28D-E,
[0653]): when a sample's backward pass reaches a segment (kept layer k, discarding layers
k+1 .. m-1), kept layer k must replay its forward pass of the sample and the discarding
layers must take the replayed activations in (program/recompute.py).

The first PE that knows is F_0, the finalizer of column 0 of layer m - 1, when it takes
the sample's delta sums (or, at the output layer, its targets): ``j_first``. It sends one
wavelet of the trigger color RC, which starts a task of that color [0371] on every other
PE of the segment (``r_replay`` in layer k, ``r_mode`` in k+1 .. m-1), and starts its own
``r_mode`` with a local activation (a router cannot turn a PE's wavelet back to it).

The route is a "comb" with F_0's router as its only source: along the blocks' row 0 west
to layer k's column 0 and east to layer m - 1's last column, and from every row-0 router
of those columns south to the bottom of its block, delivered to every PE on the way (the
blocks start on the same row). Every router of it has one source [0302]; the segments
occupy disjoint columns, so every segment uses the same color.
"""

from __future__ import annotations

from .checkpoint import recompute_segments

__all__ = ["trigger_roles", "trigger_routes"]


def trigger_roles(keeps) -> dict[tuple[int, int], str]:
    """(layer, role) per layer of a segment: "replay" (kept layer k), "pass" (k+1 .. m-2)
    or "end" (m - 1); layers outside every segment are absent."""
    out = {}
    for k, gone in recompute_segments(keeps):
        out[k] = "replay"
        for l in gone:
            out[l] = "end" if l == gone[-1] else "pass"
    return out


def trigger_routes(table, blocks, keeps, color: int) -> None:
    """Adds every segment's comb to ``table`` (routes.RouteTable) on ``color``."""
    for k, gone in recompute_segments(keeps):
        first, end = blocks[k], blocks[gone[-1]]
        src = end.at(0, 0)                       # F_0 of layer m - 1
        r0, c_west = first.row0, first.col0
        c_east = end.col0 + end.cols - 1
        depth = {}                               # wafer column -> rows of its block below row 0
        for b in blocks[k:gone[-1] + 1]:
            for c in range(b.cols):
                depth[b.col0 + c] = b.rows - 1
        # row 0: west and east of the source, each point delivering to its PE
        west = [(r0, c) for c in range(src[1], c_west - 1, -1)]
        east = [(r0, c) for c in range(src[1], c_east + 1)]
        for line in (west, east):
            if len(line) > 1:
                table.line(color, "recompute triggers", line, "RAMP", deliver=line[1:])
        # down every column from row 0
        for c, d in depth.items():
            if d == 0:
                continue
            pts = [(r0 + r, c) for r in range(d + 1)]
            enter = "RAMP" if (r0, c) == src else ("E" if c < src[1] else "W")
            table.line(color, "recompute triggers", pts, enter, deliver=pts[1:])
