"""Where PEs are and how routes run between them: directions, topologies, paths.

Coordinates are ``(row, col)``. North is +row and east is +col, as in both sources: seed
000 calls Y+ "North" [0314] and seed 003 lets y grow north [0039], so the patent example
(0,0)->(3,3) is a north-east diagonal here too. Plots use ``origin="lower"``.

A point one step outside the fabric next to a border router, such as ``(r, -1)`` (west of
``(r, 0)``) or ``(rows, c)`` (north of ``(rows-1, c)``), names the *edge port* on that
border coupling (the I/O couplings of seed 000 [0285]).

The topology, the directions and the routing rules are the C++ core's
(``src/wafersim/fabric/topology.hpp``, ``route_paths.hpp``): this module reads them from
there and only turns names into indices and router ids into (row, col). Route generators
(``path``) follow the two dimension-order rules of seed 003: ``"xy"`` goes east/west
first, then north/south [0061]; ``"diag_first"`` goes diagonally while both coordinates
differ, then straight [0036], [0039]. With only one diagonal family, the diagonal is used
when the signs match that family and XY otherwise (a rule the seed does not give; digest
003 section 4.3 checked that its channel dependencies are acyclic).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ._extension import core
from .errors import ConfigError, RouteError
from .values import is_integer

__all__ = [
    "DIRECTIONS",
    "DIR_INDEX",
    "OPPOSITE",
    "STEP",
    "TOPOLOGIES",
    "Topology",
    "Rect",
    "as_point",
    "point_list",
    "direction_index",
    "direction_mask",
    "path",
    "ROUTING_ALGORITHMS",
]

_f = core.fabric
#: Router ports in the order of their index (a bit of a Dest / Src mask).
DIRECTIONS: tuple[str, ...] = _f.DIRECTIONS
DIR_INDEX = {name: i for i, name in enumerate(DIRECTIONS)}
#: The port a link leaves by -> the port it enters by (the ramp is its own opposite).
OPPOSITE = {d: DIRECTIONS[o] for d, o in zip(DIRECTIONS, _f.OPPOSITE)}
#: (row, col) step of the mesh and diagonal directions.
STEP = {d: tuple(s) for d, s in zip(DIRECTIONS, _f.STEPS) if s != (0, 0)}
_ALIASES = {"X+": "E", "X-": "W", "Y+": "N", "Y-": "S", "SKIPX+": "SKIP_E",
            "SKIPX-": "SKIP_W", "SKIPE": "SKIP_E", "SKIPW": "SKIP_W"}

#: topology name -> (NE/SW family, NW/SE family) [0032].
TOPOLOGIES: dict[str, tuple[bool, bool]] = dict(_f.TOPOLOGIES)
ROUTING_ALGORITHMS: tuple[str, ...] = _f.ROUTING_ALGORITHMS


def direction_index(name, field: str = "direction") -> int:
    """Index of a direction name (case-insensitive; seed 000's X+/Y-/skipX+ also work)."""
    if isinstance(name, str):
        key = name.strip().upper()
        key = _ALIASES.get(key.replace(" ", ""), key)
        if key in DIR_INDEX:
            return DIR_INDEX[key]
    raise ConfigError(f"{field} must be one of {', '.join(DIRECTIONS)}, got {name!r}")


def direction_mask(names, field: str = "direction") -> int:
    """A Dest / Src mask of direction names (one name or several): bit
    ``DIR_INDEX[name]`` for each."""
    if isinstance(names, str):
        names = [names]
    # a mapping would give its keys and bytes its codes: neither is a list of names (a set
    # is: the order of a mask's bits does not matter)
    bad = isinstance(names, (bytes, Mapping)) or (isinstance(names, np.ndarray) and names.ndim == 0)
    try:
        items = None if bad else list(names)
    except TypeError:
        items = None
    if items is None:
        raise ConfigError(f"{field} must be a list of direction names (or one name), "
                          f"got {names!r}")
    m = 0
    for n in items:
        m |= 1 << direction_index(n, field)
    return m


def direction_names(mask: int) -> list[str]:
    """The direction names of a Dest / Src mask, in index order."""
    return [d for i, d in enumerate(DIRECTIONS) if int(mask) >> i & 1]


def _integers_of(value, sizes: tuple[int, ...]) -> tuple[int, ...] | None:
    """``value`` as Python ints if it holds one of ``sizes`` integers, else None.
    Coordinates are integers (numpy integer scalars welcome): a float, boolean or string is
    not, even 1.0, so nothing is truncated."""
    try:
        parts = tuple(value)
    except TypeError:
        return None
    if len(parts) not in sizes or not all(is_integer(v) for v in parts):
        return None
    return tuple(int(v) for v in parts)


def as_point(value, name: str = "point") -> tuple[int, int]:
    """``value`` as a (row, col) pair of Python ints, else ConfigError."""
    point = _integers_of(value, (2,))
    if point is None:
        raise ConfigError(f"{name} must be a (row, col) pair of integers, got {value!r}")
    return point


def _flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ConfigError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _side(value, name: str) -> int:
    if not is_integer(value) or not -2**31 <= value < 2**31:
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    return int(value)


class Topology(_f.Topology):
    """The links of a fabric: the C++ core's ``Topology`` (``fabric/topology.hpp``), read
    with direction names and (row, col) points. Immutable; equal when the fields are."""

    FIELDS = ("rows", "cols", "diag_ne", "diag_nw", "skip", "loop", "diag_hop_cycles")

    def __init__(self, rows: int, cols: int, diag_ne: bool = False, diag_nw: bool = False,
                 skip: int = 0, loop: bool = False, diag_hop_cycles: int = 1):
        super().__init__(rows=_side(rows, "rows"), cols=_side(cols, "cols"),
                         diag_ne=_flag(diag_ne, "diag_ne"), diag_nw=_flag(diag_nw, "diag_nw"),
                         skip=_side(skip, "skip"), loop=_flag(loop, "loop"),
                         diag_hop_cycles=_side(diag_hop_cycles, "diag_hop_cycles"))

    @classmethod
    def named(cls, rows: int, cols: int, topology: str = "mesh", **kw) -> "Topology":
        """A fabric of the named kind (a key of :data:`TOPOLOGIES`)."""
        if not isinstance(topology, str) or topology not in TOPOLOGIES:
            raise ConfigError(f"topology must be one of {', '.join(TOPOLOGIES)}, got {topology!r}")
        ne, nw = TOPOLOGIES[topology]
        return cls(rows, cols, ne, nw, **kw)

    def _fields(self) -> tuple:
        return tuple(getattr(self, f) for f in self.FIELDS)

    def __eq__(self, other) -> bool:
        return isinstance(other, _f.Topology) and self._fields() == Topology._fields(other)

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"Topology({', '.join(f'{f}={getattr(self, f)!r}' for f in self.FIELDS)})"

    def __reduce__(self):
        return (Topology, self._fields())

    def family_enabled(self, d: str) -> bool:
        return self.family_enabled_at(direction_index(d))

    def inside(self, r: int, c: int) -> bool:
        return 0 <= r < self.rows and 0 <= c < self.cols

    def neighbour(self, r: int, c: int, d: str):
        """The router across link ``d`` from (r, c), or None."""
        return self.neighbour_at(r, c, direction_index(d)) if self.inside(r, c) else None

    def is_edge(self, r: int, c: int, d: str) -> bool:
        """A border N/S/E/W coupling with no router behind it (an edge port)."""
        return d in ("E", "W", "N", "S") and self.neighbour(r, c, d) is None

    def edge_port(self, point) -> tuple[tuple[int, int], str] | None:
        """(router, direction) of the edge port an outside point names, else None."""
        r, c = point
        if not (-1 <= r <= self.rows and -1 <= c <= self.cols):
            return None
        edge = self.edge_port_at(int(r), int(c))
        return None if edge is None else (edge[0], DIRECTIONS[edge[1]])

    def link_between(self, a, b) -> str | None:
        """The direction of a link from router a to router b (mesh links preferred)."""
        if not (self.inside(*a) and self.inside(*b)):
            return None
        d = self.link_direction(int(a[0]), int(a[1]), int(b[0]), int(b[1]))
        return None if d is None else DIRECTIONS[d]

    def hop_cycles(self, d: str) -> int:
        return self.hop_cycles_at(direction_index(d))

    def path(self, src, dst, algorithm: str = "xy") -> list[tuple[int, int]]:
        """The routers a wavelet visits from src to dst (both included) under ``algorithm``."""
        if not isinstance(algorithm, str):
            raise ConfigError(f"algorithm must be one of {', '.join(ROUTING_ALGORITHMS)}, "
                              f"got {algorithm!r}")
        src, dst = as_point(src, "src"), as_point(dst, "dst")
        for name, p in (("src", src), ("dst", dst)):
            if not self.inside(*p):  # before the core: a Python int may not fit its int64
                raise RouteError(f"{name} {p} is outside the {self.rows}x{self.cols} fabric")
        return self.dimension_order_path(*src, *dst, algorithm)


def point_list(points, name: str = "points") -> list:
    """One (row, col) point, or an iterable of them, as a list of points (each checked
    later, with :func:`as_point`)."""
    try:
        single = len(points) == 2 and all(is_integer(v) for v in points)
        return [points] if single else list(points)
    except TypeError:
        raise ConfigError(f"{name} must be a (row, col) point or a list of them, got "
                          f"{points!r}") from None


@dataclass(frozen=True)
class Rect:
    """A rectangle of PEs: rows ``row .. row+height-1``, columns ``col .. col+width-1``.

    Host operations over many PEs (``Wafer.load``, ``memcpy_h2d``, ``memcpy_d2h``,
    ``launch``) take one, as a ``Rect``, a ``(row, col, height, width)`` tuple, a single
    ``(row, col)`` PE, or None for the whole wafer. Arrays over a rectangle have shape
    ``(height, width, ...)``, row-major like the PEs: ``a[i, j]`` belongs to PE
    ``(row + i, col + j)``.
    """

    row: int
    col: int
    height: int = 1
    width: int = 1

    def __post_init__(self):
        for field in ("row", "col", "height", "width"):
            v = getattr(self, field)
            if not is_integer(v):
                raise ConfigError(f"Rect {field} must be an integer, got {v!r}")
            object.__setattr__(self, field, int(v))  # numpy integers become Python ints

    @classmethod
    def of(cls, value, rows: int, cols: int) -> "Rect":
        """``value`` as a Rect inside a rows x cols wafer (ConfigError names it otherwise)."""
        if value is None:
            return cls(0, 0, rows, cols)
        if isinstance(value, Rect):
            rect = value
        else:
            parts = _integers_of(value, (2, 4))
            if parts is None:
                raise ConfigError(f"rect must be a Rect, (row, col, height, width) or (row, col) "
                                  f"of integers, got {value!r}")
            rect = cls(*parts)
        if rect.height < 1 or rect.width < 1:
            raise ConfigError(f"rect {rect.describe()} is empty (height and width must be >= 1)")
        if not (0 <= rect.row and rect.row + rect.height <= rows and 0 <= rect.col
                and rect.col + rect.width <= cols):
            raise ConfigError(f"rect {rect.describe()} reaches outside the {rows}x{cols} wafer")
        return rect

    @property
    def shape(self) -> tuple[int, int]:
        return (self.height, self.width)

    def points(self) -> list[tuple[int, int]]:
        """The PEs of the rectangle, row by row."""
        return [(self.row + i, self.col + j) for i in range(self.height) for j in range(self.width)]

    def ids(self, cols: int) -> np.ndarray:
        """Router ids (row * cols + col) of the PEs, row by row."""
        r = np.arange(self.row, self.row + self.height, dtype=np.int64)[:, None]
        c = np.arange(self.col, self.col + self.width, dtype=np.int64)[None, :]
        return (r * cols + c).ravel().astype(np.uint32)

    def describe(self) -> str:
        return (f"({self.row}, {self.col}) + {self.height}x{self.width}")


def path(topo: Topology, src, dst, algorithm: str = "xy") -> list[tuple[int, int]]:
    """The routers a wavelet visits from src to dst (both included) under ``algorithm``
    (:meth:`Topology.path`)."""
    return topo.path(src, dst, algorithm)
