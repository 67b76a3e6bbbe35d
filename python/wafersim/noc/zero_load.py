"""Zero-load latency of a mesh with and without diagonal channels (seed 003).

The delay model is the one seed 003's own example uses [0002], [0026]: a packet pays one
router delay per router it traverses (hops + 1: source and destination count, "four
compared with seven") and one wire delay per pitch of wire (an orthogonal hop is 1 pitch,
a straight diagonal sqrt(2) ~ "1.4", a zig-zag diagonal 2 [0027]):

    L = t_router * (hops + 1) + t_wire * wire

Routing is XY on the plain mesh [0061] and diagonal-first with diagonals [0039] (with one
diagonal family: the diagonal when the signs match it, else XY). Averages weight every
source/destination pair of a pattern equally, single packets, no contention. With
t_router = t_wire this reproduces the patent's "about 20% on average and about 40% for
diagonal traffic" [0002]: -19.2% (uniform 4x4), -21.5% (uniform 8x8), -36.6% (transpose
8x8 and the (0,0)->(3,3) corner), -39.0% (corner 16x16) (digest 003, section 7).

``fabric_cycles`` gives the same quantity for wafersim's cycle-level fabric, where a
router takes one cycle and wire delay is folded into it (diagonal hops 1 or 2 cycles).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from ..layout import TOPOLOGIES
from .traffic import pairs

__all__ = ["ZeroLoad", "Comparison", "hop_split", "zero_load", "compare", "fabric_cycles",
           "patent_table", "sensitivity"]

_DIAG_WIRE = {"straight": math.sqrt(2.0), "zigzag": 2.0}


def hop_split(src: np.ndarray, dst: np.ndarray, topology: str = "mesh") -> tuple[np.ndarray, np.ndarray]:
    """(diagonal hops, straight hops) of each pair's route on ``topology``."""
    if topology not in TOPOLOGIES:
        raise ConfigError(f"topology must be one of {', '.join(TOPOLOGIES)}, got {topology!r}")
    ne, nw = TOPOLOGIES[topology]
    d = np.asarray(dst, np.int64) - np.asarray(src, np.int64)
    dr, dc = d[..., 0], d[..., 1]
    same_sign = np.sign(dr) == np.sign(dc)          # NE/SW family: (+,+) and (-,-)
    both = (dr != 0) & (dc != 0)
    usable = both & ((same_sign & ne) | (~same_sign & nw))
    diag = np.where(usable, np.minimum(abs(dr), abs(dc)), 0)
    straight = abs(dr) + abs(dc) - 2 * diag
    return diag, straight


@dataclass(frozen=True)
class ZeroLoad:
    """Mean zero-load quantities over the pairs of a pattern."""

    topology: str
    pattern: str
    rows: int
    cols: int
    pairs: int
    hops: float      #: links traversed
    routers: float   #: routers traversed (hops + 1)
    wire: float      #: wire length in PE pitches
    latency: float   #: t_router * routers + t_wire * wire


def zero_load(pattern: str, rows: int, cols: int | None = None, topology: str = "mesh", *,
              t_router: float = 1.0, t_wire: float = 1.0, diag_wire: str = "straight") -> ZeroLoad:
    """Zero-load averages of ``pattern`` on a ``rows x cols`` fabric (seed 003 model)."""
    cols = rows if cols is None else cols
    if diag_wire not in _DIAG_WIRE:
        raise ConfigError(f"diag_wire must be 'straight' or 'zigzag', got {diag_wire!r}")
    src, dst = pairs(pattern, rows, cols)
    diag, straight = hop_split(src, dst, topology)
    hops = diag + straight
    wire = straight + _DIAG_WIRE[diag_wire] * diag
    routers = hops + 1
    return ZeroLoad(topology, pattern, rows, cols, len(src), float(hops.mean()),
                    float(routers.mean()), float(wire.mean()),
                    float((t_router * routers + t_wire * wire).mean()))


def fabric_cycles(pattern: str, rows: int, cols: int | None = None, topology: str = "mesh", *,
                  diag_hop_cycles: int = 1) -> float:
    """Mean zero-load latency in cycles on wafersim's fabric: one cycle per router
    traversed, a diagonal hop costing ``diag_hop_cycles`` (on-ramp offer to off-ramp)."""
    cols = rows if cols is None else cols
    src, dst = pairs(pattern, rows, cols)
    diag, straight = hop_split(src, dst, topology)
    return float((straight + diag_hop_cycles * diag + 1).mean())


@dataclass(frozen=True)
class Comparison:
    """A mesh against the same mesh with diagonal channels; cuts are fractions (0.2 = 20%)."""

    mesh: ZeroLoad
    diag: ZeroLoad

    @property
    def hop_cut(self) -> float:
        return 1.0 - self.diag.hops / self.mesh.hops

    @property
    def wire_cut(self) -> float:
        return 1.0 - self.diag.wire / self.mesh.wire

    @property
    def latency_cut(self) -> float:
        return 1.0 - self.diag.latency / self.mesh.latency


def compare(pattern: str, rows: int, cols: int | None = None, *, topology: str = "mesh+diag",
            t_router: float = 1.0, t_wire: float = 1.0, diag_wire: str = "straight") -> Comparison:
    kw = dict(t_router=t_router, t_wire=t_wire, diag_wire=diag_wire)
    return Comparison(zero_load(pattern, rows, cols, "mesh", **kw),
                      zero_load(pattern, rows, cols, topology, **kw))


#: The rows of digest 003 section 7 (pattern, side) and the patent's claims they test.
PATENT_CASES = [("uniform", 4), ("uniform", 8), ("uniform", 16), ("transpose", 8),
                ("corner", 4), ("corner", 16), ("bit_complement", 8), ("neighbour", 8)]


def patent_table(t_router: float = 1.0, t_wire: float = 1.0, diag_wire: str = "straight") -> list[dict]:
    """One dict per case: mean hops with and without diagonals and the three cuts."""
    out = []
    for pattern, n in PATENT_CASES:
        c = compare(pattern, n, t_router=t_router, t_wire=t_wire, diag_wire=diag_wire)
        out.append({"pattern": pattern, "n": n, "mesh_hops": c.mesh.hops, "diag_hops": c.diag.hops,
                    "hop_cut": c.hop_cut, "wire_cut": c.wire_cut, "latency_cut": c.latency_cut,
                    "mesh_latency": c.mesh.latency, "diag_latency": c.diag.latency})
    return out


def sensitivity(pattern: str, n: int, ratios, diag_wire: str = "straight") -> np.ndarray:
    """Latency cut for each router-to-wire delay ratio t_router / t_wire (inf: routers only)."""
    out = []
    for x in ratios:
        if math.isinf(x):
            out.append(compare(pattern, n, t_router=1.0, t_wire=0.0, diag_wire=diag_wire).latency_cut)
        else:
            out.append(compare(pattern, n, t_router=float(x), t_wire=1.0, diag_wire=diag_wire).latency_cut)
    return np.array(out)
