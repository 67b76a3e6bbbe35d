"""Carrying point-to-point flows on the statically color-routed fabric (seed 000).

A color has one fixed route [0293] and one buffer per router, with one active source at a
time [0302], so a set of (source, destination) flows maps onto the fabric by giving each
flow its own route on a color that no other flow uses at any router of that route. Colors
are reused between flows whose routes share no router. ``assign_colors`` does this
greedily, in the order given (deterministic); a flow that finds no free color does not fit.

This carries permutation traffic (transpose, bit-complement, neighbour, corner) faithfully.
It cannot carry uniform random or hotspot traffic at scale: every source-destination pair
would need its own color at every router it crosses. For those, NoC studies use packet
mode (docs/noc.md).
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from ..layout import Topology, path

__all__ = ["default_algorithm", "assign_colors", "route_flows"]


def default_algorithm(topology: Topology) -> str:
    return "diag_first" if topology.has_diagonals else "xy"


def assign_colors(topology: Topology, src, dst, colors: int, algorithm: str | None = None):
    """Greedy colors for flows src[i] -> dst[i]: returns (color per flow, -1 if it does not
    fit, and the path of each flow)."""
    algorithm = algorithm or default_algorithm(topology)
    src = np.asarray(src, np.int64).reshape(-1, 2)
    dst = np.asarray(dst, np.int64).reshape(-1, 2)
    used: list[set] = [set() for _ in range(colors)]
    out = np.full(len(src), -1, np.int64)
    paths = []
    for i, (s, d) in enumerate(zip(map(tuple, src), map(tuple, dst))):
        p = path(topology, s, d, algorithm)
        paths.append(p)
        routers = set(p)
        for color in range(colors):
            if used[color].isdisjoint(routers):
                used[color] |= routers
                out[i] = color
                break
    return out, paths


def route_flows(w, src, dst, algorithm: str | None = None) -> np.ndarray:
    """Routes one color per flow on wafer ``w``; returns the color of each flow.

    Raises ``ConfigError`` when the flows need more colors than the fabric has.
    """
    colors, paths = assign_colors(w.topology, src, dst, w.colors, algorithm)
    if np.any(colors < 0):
        i = int(np.flatnonzero(colors < 0)[0])
        raise ConfigError(f"flow {i} ({tuple(paths[i][0])} -> {tuple(paths[i][-1])}) finds no free "
                          f"color: these flows need more than the fabric's {w.colors} colors "
                          "at some router (use packet mode for this traffic)")
    for color, p in zip(colors, paths):
        w.route(int(color), p)
    return colors
