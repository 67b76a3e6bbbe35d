"""The routes of a wafer's colors, from the host: paths, multicast trees and masks given
router by router (a base of :class:`wafersim.Wafer`, as :class:`wafersim.wafer_pes.PeHost`
is for the compute elements). The routes themselves are worked out in the C++ core
(``src/wafersim/fabric/route_paths.hpp``); this side checks and converts the arguments.
See docs/fabric.md, "Routes".
"""

from __future__ import annotations

import numpy as np

from .errors import ConfigError, RouteError
from .layout import DIR_INDEX, ROUTING_ALGORITHMS, as_point, direction_mask, point_list
from .values import first_outside, integers

__all__ = ["RouteHost"]

_FAR = 1 << 62   # beyond any fabric; the core's coordinates are int64


def _are_names(value) -> bool:
    """Direction names (one, or a list of them; an empty list too), not integer masks."""
    if isinstance(value, str):
        return True
    return isinstance(value, (list, tuple, set, frozenset)) and all(isinstance(v, str) for v in value)


class RouteHost:
    """The routes of a wafer (a base of :class:`wafersim.Wafer`)."""

    def route(self, color: int, path, *, allow_shared_source: bool = False) -> None:
        """Routes ``color`` along ``path``, a list of adjacent (row, col) routers.

        The first point's on-ramp is the source and the last point's off-ramp the
        destination; an outside first or last point names an edge port instead. Masks are
        added to what the color already has, so several calls build a multicast tree
        [0301]. A path that would give a router a second source for the color raises
        ``RouteError`` unless ``allow_shared_source`` (the caller then guarantees one active
        source at a time [0302]).
        """
        color = self._fabric_color(color)
        self._require_colors_mode("route")
        pts = [as_point(p, f"path[{i}]") for i, p in enumerate(point_list(path, "path"))] \
            if path is not None else []
        for p in pts:  # far beyond any fabric: refused before the core's int64 could wrap it
            if not all(-_FAR <= v <= _FAR for v in p):
                raise RouteError(f"path point {p} (color {color}) leaves the "
                                 f"{self.rows}x{self.cols} fabric")
        self._core.route_path(color, np.array(pts, np.int64).reshape(-1, 2),
                              allow_shared_source=bool(allow_shared_source))

    def route_tree(self, color: int, src, dsts, algorithm: str = "xy") -> None:
        """Multicast ``color`` from ``src`` to every router in ``dsts`` [0301].

        Each branch follows ``algorithm``: ``"xy"`` [0061] or ``"diag_first"`` [0039];
        skip and loop links are only used by explicit ``route`` paths.
        """
        color = self._fabric_color(color)
        self._require_colors_mode("route_tree")
        src = as_point(src, "src")  # every point is a pair of integers before any is placed
        dst_list = [as_point(d, f"dsts[{i}]") for i, d in enumerate(point_list(dsts, "dsts"))]
        src = self._router(src, "src")
        dst_list = [self._router(d, f"dsts[{i}]") for i, d in enumerate(dst_list)]
        if not isinstance(algorithm, str):
            raise ConfigError(f"algorithm must be one of {', '.join(ROUTING_ALGORITHMS)}, "
                              f"got {algorithm!r}")
        self._core.route_tree(color, *src, np.array(dst_list, np.int64).reshape(-1, 2), algorithm)

    def add_routes(self, color: int, routers, *, rx=(), tx=(),
                   allow_shared_source: bool = False) -> None:
        """Adds Src (``rx``) and Dest (``tx``) directions of ``color`` at many routers at
        once, to what the color already has there (:meth:`RouterView.set_route` replaces
        them at one router): the static routes of [0318]-[0322] for tools that work out
        their own routes (a mapping, a kernel tiled over a million PEs).

        ``routers``: a (row, col) point, a list of them, or an (n, 2) integer array.
        ``rx`` and ``tx``: direction names (one or a list), the same at every router; a
        list with one collection of names per router (``[{"W"}, {"RAMP", "N"}]``); or
        integer masks, bit ``i`` for ``ws.layout.DIRECTIONS[i]``
        (``ws.layout.direction_mask``), one for all or one per router. All or nothing:
        every router is checked before any changes. A router that would get a second source
        for the color raises ``RouteError`` unless ``allow_shared_source`` (the caller then
        guarantees one active source at a time [0302]), as for :meth:`route`.
        """
        color = self._fabric_color(color)
        self._require_colors_mode("add_routes")
        ids = self._router_ids(routers, "routers")
        dest, src = (self._masks(v, name, len(ids)) for v, name in ((tx, "tx"), (rx, "rx")))
        self._core.add_routes(color, ids, dest, src, allow_shared_source=bool(allow_shared_source))

    def routed_colors(self, routers=None) -> list[int]:
        """The fabric colors that have a route at any of ``routers`` (points or an (n, 2)
        integer array; None: anywhere on the wafer), ascending."""
        ids = (np.arange(self.rows * self.cols, dtype=np.uint32) if routers is None
               else self._router_ids(routers, "routers"))
        mask = int(self._core.routed_colors(ids))
        return [k for k in range(self.colors) if mask >> k & 1]

    def _router_ids(self, routers, name: str) -> np.ndarray:
        """Router ids of points inside the fabric: one point, a list, or an (n, 2) array."""
        if isinstance(routers, np.ndarray):
            pts = routers.reshape(1, -1) if routers.ndim == 1 else routers
            if pts.ndim != 2 or pts.shape[1] != 2 or not np.issubdtype(pts.dtype, np.integer):
                raise ConfigError(f"{name} must be a (row, col) pair or an (n, 2) integer array, "
                                  f"got shape {routers.shape} and dtype {routers.dtype}")
        else:
            points = [as_point(p, f"{name}[{i}]") for i, p in enumerate(point_list(routers, name))]
            pts = np.array(points, dtype=object).reshape(-1, 2)
        for k, hi in ((0, self.rows - 1), (1, self.cols - 1)):
            bad = first_outside(pts[:, k], 0, hi)
            if bad is not None:
                raise RouteError(f"{name}[{bad}] = {tuple(int(v) for v in pts[bad])} is outside "
                                 f"the {self.rows}x{self.cols} fabric")
        r, c = pts[:, 0].astype(np.int64), pts[:, 1].astype(np.int64)
        return np.ascontiguousarray(r * self.cols + c, dtype=np.uint32)

    @staticmethod
    def _masks(value, name: str, n: int) -> np.ndarray:
        """Direction names or integer masks as one uint16 mask per router."""
        if _are_names(value):
            return np.full(n, direction_mask(value, name), np.uint16)
        if isinstance(value, (list, tuple)) and value and all(_are_names(v) for v in value):
            if len(value) != n:
                raise ConfigError(f"{name} lists {len(value)} sets of directions for {n} router(s)")
            return np.array([direction_mask(v, f"{name}[{i}]") for i, v in enumerate(value)],
                            np.uint16)
        masks = integers(value, name, 0, (1 << len(DIR_INDEX)) - 1, np.uint16)
        try:
            return np.ascontiguousarray(np.broadcast_to(masks, (n,)))
        except ValueError:
            raise ConfigError(f"{name} has shape {np.shape(value)}, which does not match "
                              f"{n} router(s)") from None

    def _require_colors_mode(self, what: str) -> None:
        if self.mode != "colors":
            raise ConfigError(f"{what}: in packet mode each wavelet is steered by its destination; "
                              "color routes are for mode='colors'")

    def clear_routes(self, color: int | None = None) -> None:
        """Removes the routes of one color, or of all colors."""
        self._core.clear_routes(-1 if color is None else self._fabric_color(color))

    def check_routes(self) -> None:
        """Raises ``RouteError`` naming the colors and links of any dependency cycle [0304],
        or of a link whose receiver does not list it as a source; ``run`` calls it."""
        self._core.check_routes()
