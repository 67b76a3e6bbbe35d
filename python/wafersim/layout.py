"""Where PEs are and how routes run between them: directions, topologies, paths.

Coordinates are ``(row, col)``. North is +row and east is +col, as in both sources: seed
000 calls Y+ "North" [0314] and seed 003 lets y grow north [0039], so the patent example
(0,0)->(3,3) is a north-east diagonal here too. Plots use ``origin="lower"``.

A point one step outside the fabric next to a border router, such as ``(r, -1)`` (west of
``(r, 0)``) or ``(rows, c)`` (north of ``(rows-1, c)``), names the *edge port* on that
border coupling (the I/O couplings of seed 000 [0285]).

Route generators (``path``) implement the two dimension-order rules of seed 003:
``"xy"`` goes east/west first, then north/south [0061]; ``"diag_first"`` goes diagonally
while both coordinates differ, then straight [0036], [0039]. With only one diagonal
family, the diagonal is used when the signs match that family and XY otherwise (a rule the
seed does not give; digest 003 section 4.3 checked that its channel dependencies are
acyclic).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
    "direction_index",
    "path",
    "ROUTING_ALGORITHMS",
]

#: Router ports in the order of the C++ core (``wafersim._core.fabric.DIRECTIONS``).
DIRECTIONS = ("E", "W", "N", "S", "NE", "SW", "NW", "SE", "SKIP_E", "SKIP_W", "RAMP")
DIR_INDEX = {name: i for i, name in enumerate(DIRECTIONS)}
OPPOSITE = {d: (d if d == "RAMP" else DIRECTIONS[DIR_INDEX[d] ^ 1]) for d in DIRECTIONS}
#: (row, col) step of the mesh and diagonal directions.
STEP = {"E": (0, 1), "W": (0, -1), "N": (1, 0), "S": (-1, 0),
        "NE": (1, 1), "SW": (-1, -1), "NW": (1, -1), "SE": (-1, 1)}
_ALIASES = {"X+": "E", "X-": "W", "Y+": "N", "Y-": "S", "SKIPX+": "SKIP_E",
            "SKIPX-": "SKIP_W", "SKIPE": "SKIP_E", "SKIPW": "SKIP_W"}

#: topology name -> (NE/SW family, NW/SE family) [0032].
TOPOLOGIES = {
    "mesh": (False, False),
    "mesh+diag": (True, True),
    "mesh+diag_ne": (True, False),
    "mesh+diag_nw": (False, True),
}
ROUTING_ALGORITHMS = ("xy", "diag_first")


def direction_index(name, field: str = "direction") -> int:
    """Index of a direction name (case-insensitive; seed 000's X+/Y-/skipX+ also work)."""
    if isinstance(name, str):
        key = name.strip().upper()
        key = _ALIASES.get(key.replace(" ", ""), key)
        if key in DIR_INDEX:
            return DIR_INDEX[key]
    raise ConfigError(f"{field} must be one of {', '.join(DIRECTIONS)}, got {name!r}")


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


@dataclass(frozen=True)
class Topology:
    """The links of a fabric; mirrors ``src/wafersim/fabric/topology.hpp``."""

    rows: int
    cols: int
    diag_ne: bool = False
    diag_nw: bool = False
    skip: int = 0
    loop: bool = False
    diag_hop_cycles: int = 1

    @classmethod
    def named(cls, rows: int, cols: int, topology: str = "mesh", **kw) -> "Topology":
        if topology not in TOPOLOGIES:
            raise ConfigError(f"topology must be one of {', '.join(TOPOLOGIES)}, got {topology!r}")
        ne, nw = TOPOLOGIES[topology]
        return cls(rows, cols, ne, nw, **kw)

    @property
    def has_diagonals(self) -> bool:
        return self.diag_ne or self.diag_nw

    def family_enabled(self, d: str) -> bool:
        return self.diag_ne if d in ("NE", "SW") else self.diag_nw if d in ("NW", "SE") else False

    def inside(self, r: int, c: int) -> bool:
        return 0 <= r < self.rows and 0 <= c < self.cols

    def neighbour(self, r: int, c: int, d: str):
        """The router across link ``d`` from (r, c), or None."""
        if d == "N":
            return (r + 1, c) if r + 1 < self.rows else ((0, c) if self.loop else None)
        if d == "S":
            return (r - 1, c) if r > 0 else ((self.rows - 1, c) if self.loop else None)
        if d in ("SKIP_E", "SKIP_W"):
            if self.skip <= 0 or c % self.skip:
                return None
            cc = c + self.skip if d == "SKIP_E" else c - self.skip
            return (r, cc) if 0 <= cc < self.cols else None
        if d == "RAMP":
            return None
        if d in ("NE", "SW", "NW", "SE") and not self.family_enabled(d):
            return None
        dr, dc = STEP[d]
        return (r + dr, c + dc) if self.inside(r + dr, c + dc) else None

    def is_edge(self, r: int, c: int, d: str) -> bool:
        """A border N/S/E/W coupling with no router behind it (an edge port)."""
        return d in ("E", "W", "N", "S") and self.neighbour(r, c, d) is None

    def edge_port(self, point) -> tuple[tuple[int, int], str] | None:
        """(router, direction) of the edge port an outside point names, else None."""
        r, c = point
        if 0 <= r < self.rows and c in (-1, self.cols):
            router, d = (r, 0 if c == -1 else self.cols - 1), "W" if c == -1 else "E"
        elif 0 <= c < self.cols and r in (-1, self.rows):
            router, d = (0 if r == -1 else self.rows - 1, c), "S" if r == -1 else "N"
        else:
            return None
        return (router, d) if self.is_edge(*router, d) else None

    def link_between(self, a, b) -> str | None:
        """The direction of a link from router a to router b (mesh links preferred)."""
        for d in DIRECTIONS[:-1]:
            if self.neighbour(a[0], a[1], d) == tuple(b):
                return d
        return None

    def hop_cycles(self, d: str) -> int:
        return self.diag_hop_cycles if d in ("NE", "SW", "NW", "SE") else 1


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


def _next_dir(topo: Topology, algorithm: str, r: int, c: int, dst) -> str:
    """One step of XY or diagonal-first routing (matches fabric/packet_routing.hpp)."""
    dy, dx = dst[0] - r, dst[1] - c
    if dx == 0 and dy == 0:
        return "RAMP"
    if algorithm == "diag_first" and dx != 0 and dy != 0:
        d = ("NE" if dx > 0 else "NW") if dy > 0 else ("SE" if dx > 0 else "SW")
        if topo.family_enabled(d):
            return d
    if dx != 0:
        return "E" if dx > 0 else "W"
    return "N" if dy > 0 else "S"


def path(topo: Topology, src, dst, algorithm: str = "xy") -> list[tuple[int, int]]:
    """The routers a wavelet visits from src to dst (both included) under ``algorithm``."""
    if algorithm not in ROUTING_ALGORITHMS:
        raise ConfigError(f"algorithm must be one of {', '.join(ROUTING_ALGORITHMS)}, got {algorithm!r}")
    if algorithm == "diag_first" and not topo.has_diagonals:
        raise RouteError("algorithm 'diag_first' needs diagonal links; this fabric is a plain mesh")
    src, dst = as_point(src, "src"), as_point(dst, "dst")
    for name, p in (("src", src), ("dst", dst)):
        if not topo.inside(*p):
            raise RouteError(f"{name} {p} is outside the {topo.rows}x{topo.cols} fabric")
    out = [src]
    r, c = src
    while True:
        d = _next_dir(topo, algorithm, r, c, dst)
        if d == "RAMP":
            return out
        r, c = r + STEP[d][0], c + STEP[d][1]
        out.append((r, c))
