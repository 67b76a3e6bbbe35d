"""Synthetic traffic for NoC studies: who sends to whom, and when.

Patterns (``(row, col)`` nodes on a ``rows x cols`` fabric):

* ``uniform`` - each packet to a node drawn uniformly among the others;
* ``transpose`` - (r, c) -> (c, r) (square fabrics; diagonal nodes send nothing);
* ``bit_complement`` - (r, c) -> (rows-1-r, cols-1-c), the bitwise complement of each
  coordinate when the sides are powers of two;
* ``hotspot`` - a fraction of packets to a few hot nodes (the four corners by default, like
  memory controllers), the rest uniform;
* ``neighbour`` - (r, c) -> (r, c+1), the last column to (r, c-1): one hop each;
* ``corner`` - zero-load only: the patent's single pair (0, 0) -> (rows-1, cols-1) [0002].

None of these comes from the source documents (seed 003 names only "diagonal traffic" and
"average" [0002]); they are the usual NoC-study set.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._args import int_arg
from ..errors import ConfigError

__all__ = ["PATTERNS", "Traffic", "destinations", "pairs", "bernoulli"]

PATTERNS = ("uniform", "transpose", "bit_complement", "hotspot", "neighbour")
_ZERO_LOAD_PATTERNS = ("uniform", "transpose", "bit_complement", "neighbour", "corner")


def _check(pattern: str, rows: int, cols: int, allowed=PATTERNS) -> None:
    int_arg("rows", rows, 1, 65536)
    int_arg("cols", cols, 1, 65536)
    if pattern not in allowed:
        raise ConfigError(f"pattern must be one of {', '.join(allowed)}, got {pattern!r}")
    if rows < 1 or cols < 1 or rows * cols < 2:
        raise ConfigError(f"traffic needs at least 2 nodes, got {rows}x{cols}")
    if pattern == "transpose" and rows != cols:
        raise ConfigError(f"transpose traffic needs a square fabric, got {rows}x{cols}")


def destinations(pattern: str, rows: int, cols: int, src: np.ndarray,
                 rng: np.random.Generator | None = None, *, hotspots=None,
                 hotspot_fraction: float = 0.25) -> np.ndarray:
    """Destination (n, 2) of packets leaving the (n, 2) sources ``src``."""
    _check(pattern, rows, cols)
    src = np.asarray(src, dtype=np.int64).reshape(-1, 2)
    r, c = src[:, 0], src[:, 1]
    if pattern == "transpose":
        return np.stack([c, r], 1)
    if pattern == "bit_complement":
        return np.stack([rows - 1 - r, cols - 1 - c], 1)
    if pattern == "neighbour":
        return np.stack([r, np.where(c + 1 < cols, c + 1, c - 1)], 1)
    rng = rng if rng is not None else np.random.default_rng()
    n_nodes = rows * cols
    me = r * cols + c
    other = rng.integers(0, n_nodes - 1, len(src))
    other = other + (other >= me)                # uniform among the other nodes
    dst = np.stack([other // cols, other % cols], 1)
    if pattern == "hotspot":
        hot = np.asarray(hotspots if hotspots is not None else
                         [(0, 0), (0, cols - 1), (rows - 1, 0), (rows - 1, cols - 1)],
                         dtype=np.int64).reshape(-1, 2)
        if not 0.0 <= hotspot_fraction <= 1.0:
            raise ConfigError(f"hotspot_fraction must be in 0..1, got {hotspot_fraction}")
        pick = rng.random(len(src)) < hotspot_fraction
        dst[pick] = hot[rng.integers(0, len(hot), int(pick.sum()))]
    return dst


def pairs(pattern: str, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (source, destination) pair of a pattern, equally weighted (zero-load averages).

    ``uniform`` is all ordered pairs of distinct nodes; pairs with source == destination
    are left out of every pattern.
    """
    _check(pattern, rows, cols, _ZERO_LOAD_PATTERNS)
    if pattern == "corner":
        return np.array([[0, 0]]), np.array([[rows - 1, cols - 1]])
    nodes = np.stack(np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij"), -1).reshape(-1, 2)
    if pattern == "uniform":
        i, j = np.meshgrid(np.arange(len(nodes)), np.arange(len(nodes)), indexing="ij")
        keep = i != j
        return nodes[i[keep]], nodes[j[keep]]
    dst = destinations(pattern, rows, cols, nodes)
    keep = np.any(dst != nodes, axis=1)
    return nodes[keep], dst[keep]


@dataclass
class Traffic:
    """Packets to inject: source, destination and release cycle, sorted by cycle."""

    src: np.ndarray    #: (n, 2)
    dst: np.ndarray    #: (n, 2)
    cycle: np.ndarray  #: (n,)
    rate: float        #: injection probability per node and cycle
    cycles: int        #: length of the injection window
    nodes: int         #: nodes on the fabric

    def __len__(self) -> int:
        return len(self.cycle)

    @property
    def offered(self) -> float:
        """Packets per node per cycle actually offered."""
        return len(self) / (self.nodes * self.cycles) if self.cycles else 0.0


def bernoulli(pattern: str, rows: int, cols: int, rate: float, cycles: int, seed: int = 0,
              **kw) -> Traffic:
    """Each node injects a packet with probability ``rate`` in each of ``cycles`` cycles.

    Nodes the pattern maps to themselves (transpose diagonal) inject nothing.
    """
    _check(pattern, rows, cols)
    if not 0.0 <= rate <= 1.0:
        raise ConfigError(f"rate (packets per node per cycle) must be in 0..1, got {rate}")
    cycles = int_arg("cycles", cycles, 0, 2**40)
    seed = int_arg("seed", seed, 0, 2**64 - 1)
    rng = np.random.default_rng(seed)
    nodes = rows * cols
    when, who = np.nonzero(rng.random((cycles, nodes)) < rate)
    src = np.stack([who // cols, who % cols], 1)
    dst = destinations(pattern, rows, cols, src, rng, **kw)
    keep = np.any(dst != src, axis=1)
    return Traffic(src[keep], dst[keep], when[keep], rate, cycles, nodes)
