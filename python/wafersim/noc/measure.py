"""NoC measurements on the cycle-level fabric (our extension of seed 003's claims).

Two ways to move per-packet traffic (docs/noc.md):

* ``scheme="packets"``: packet mode; each wavelet carries its destination and every
  router steers it by XY or diagonal-first routing, one 2-entry queue per input port,
  the same schedulers, stall rules and cycle contract as the color fabric.
* ``scheme="colors"``: the statically color-routed fabric of seed 000; each flow gets
  its own color and static route (``flows.route_flows``). Permutation patterns only.

Latency counts from the cycle a packet is released at its source (so waiting at the source
counts, as in BookSim-style studies) to the cycle its destination's host port takes it;
at zero load that is one cycle per router traversed (diagonals: ``diag_hop_cycles``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..defaults import DEFAULTS
from ..errors import ConfigError
from ..wafer import Wafer
from .flows import assign_colors
from .traffic import bernoulli, pairs

__all__ = ["MeasuredZeroLoad", "LoadPoint", "LoadCurve", "measure_zero_load", "load_sweep"]

_SCHEMES = ("packets", "colors")


def _check_scheme(scheme: str) -> None:
    if scheme not in _SCHEMES:
        raise ConfigError(f"scheme must be one of {', '.join(_SCHEMES)}, got {scheme!r}")


@dataclass
class MeasuredZeroLoad:
    """Latency and hops of single packets, one per source/destination pair, no contention."""

    pattern: str
    topology: str
    scheme: str
    diag_hop_cycles: int
    latency: np.ndarray = field(repr=False)   #: cycles, per pair (in ``pairs`` order)
    hops: np.ndarray = field(repr=False)

    @property
    def mean_latency(self) -> float:
        return float(self.latency.mean())

    @property
    def mean_hops(self) -> float:
        return float(self.hops.mean())


def measure_zero_load(pattern: str, rows: int, cols: int | None = None, topology: str = "mesh", *,
                      scheme: str = "packets", diag_hop_cycles: int = 1) -> MeasuredZeroLoad:
    """Sends one packet per pair of ``pattern``, spaced so no two ever meet, and measures."""
    _check_scheme(scheme)
    cols = rows if cols is None else cols
    src, dst = pairs(pattern, rows, cols)
    n = len(src)
    gap = (rows + cols) * diag_hop_cycles + 2          # longer than any zero-load latency
    latency = np.zeros(n, np.int64)
    hops = np.zeros(n, np.int64)
    # The releases alone take n * gap cycles: a large fabric may need more than the default.
    limit = max(int(DEFAULTS["run_cycle_limit"]), 2 * n * gap)
    if scheme == "packets":
        w = Wafer(rows, cols, topology, mode="packets", diag_hop_cycles=diag_hop_cycles,
                  cycle_limit=limit)
        w.inject(src, 0, data=np.arange(n), dest=dst, cycle=np.arange(n) * gap)
        w.run()
        a = w.collect()
        latency[a.data], hops[a.data] = a.latency, a.hops
    else:
        w = Wafer(rows, cols, topology, diag_hop_cycles=diag_hop_cycles, cycle_limit=limit)
        todo = np.arange(n)
        while len(todo):                               # batches of flows that fit the colors
            colors, paths = assign_colors(w.topology, src[todo], dst[todo], w.colors)
            fit = colors >= 0
            w.clear_routes()
            for color, p, ok in zip(colors, paths, fit):
                if ok:
                    w.route(int(color), p)
            batch = todo[fit]
            w.inject(src[batch], colors[fit], data=batch,
                     cycle=w.cycle + np.arange(len(batch)) * gap)
            w.run()
            a = w.collect()
            latency[a.data], hops[a.data] = a.latency, a.hops
            todo = todo[~fit]
    return MeasuredZeroLoad(pattern, topology, scheme, diag_hop_cycles, latency, hops)


@dataclass
class LoadPoint:
    rate: float                #: injection probability per node and cycle
    offered: float             #: packets per node per cycle offered (sources that send)
    accepted: float            #: packets per node per cycle delivered in the window
    mean_latency: float        #: of packets released in the window; NaN when saturated
    delivered_fraction: float  #: of packets released in the window, delivered by the end


@dataclass
class LoadCurve:
    """Latency against offered load for one configuration (our extension, not seed data)."""

    pattern: str
    topology: str
    scheme: str
    rows: int
    cols: int
    diag_hop_cycles: int
    points: list = field(default_factory=list)

    @property
    def offered(self) -> np.ndarray:
        return np.array([p.offered for p in self.points])

    @property
    def accepted(self) -> np.ndarray:
        return np.array([p.accepted for p in self.points])

    @property
    def latency(self) -> np.ndarray:
        return np.array([p.mean_latency for p in self.points])

    @property
    def saturation_throughput(self) -> float:
        """Highest accepted throughput seen (packets per node per cycle)."""
        return float(self.accepted.max()) if self.points else float("nan")

    @property
    def label(self) -> str:
        plural = "s" if self.diag_hop_cycles > 1 else ""
        d = f", diagonal hop {self.diag_hop_cycles} cycle{plural}" if "diag" in self.topology else ""
        return f"{self.topology} ({self.scheme}{d})"


def load_sweep(pattern: str, rows: int, cols: int | None = None, topology: str = "mesh",
               rates=(0.02, 0.05, 0.1, 0.15, 0.2, 0.3), *, scheme: str = "packets",
               warmup: int = 200, window: int = 600, drain: int | None = None, seed: int = 0,
               diag_hop_cycles: int = 1, threads: int | None = None, **traffic_kw) -> LoadCurve:
    """Latency and accepted throughput at each injection rate.

    Packets are released during ``warmup + window`` cycles; those released in the window
    are measured. The run continues for ``drain`` more cycles (default: 8 zero-load
    diameters); a point is saturated (latency NaN) when fewer than 99% of the measured
    packets arrived.
    """
    _check_scheme(scheme)
    cols = rows if cols is None else cols
    drain = 8 * (rows + cols) * diag_hop_cycles + 50 if drain is None else drain
    curve = LoadCurve(pattern, topology, scheme, rows, cols, diag_hop_cycles)
    nodes = rows * cols
    if scheme == "colors":
        if pattern in ("uniform", "hotspot"):
            raise ConfigError(f"{pattern} traffic needs per-packet routing on a color-routed fabric "
                              "(every pair would need its own color): use scheme='packets'")
    for k, rate in enumerate(rates):
        t = bernoulli(pattern, rows, cols, float(rate), warmup + window, seed=seed + k, **traffic_kw)
        if scheme == "packets":
            w = Wafer(rows, cols, topology, mode="packets", diag_hop_cycles=diag_hop_cycles,
                      threads=threads)
            w.inject(t.src, 0, data=np.arange(len(t)), dest=t.dst, cycle=t.cycle)
        else:
            w = Wafer(rows, cols, topology, diag_hop_cycles=diag_hop_cycles, threads=threads)
            fsrc, fdst = pairs(pattern, rows, cols)
            colors, paths = assign_colors(w.topology, fsrc, fdst, w.colors)
            if np.any(colors < 0):
                raise ConfigError(f"{pattern} flows need more than {w.colors} colors on this "
                                  "fabric; use scheme='packets'")
            for color, p in zip(colors, paths):
                w.route(int(color), p)
            flow_color = np.full(nodes, -1, np.int64)
            flow_color[fsrc[:, 0] * cols + fsrc[:, 1]] = colors
            w.inject(t.src, flow_color[t.src[:, 0] * cols + t.src[:, 1]], data=np.arange(len(t)),
                     cycle=t.cycle)
        w.run(warmup + window + drain)
        a = w.collect()
        in_window = (t.cycle >= warmup) & (t.cycle < warmup + window)
        measured = in_window[a.data]
        n_window = int(in_window.sum())
        frac = float(measured.sum()) / n_window if n_window else 1.0
        lat = float(a.latency[measured].mean()) if measured.any() and frac >= 0.99 else float("nan")
        arrived_in_window = int(((a.arrived >= warmup) & (a.arrived < warmup + window)).sum())
        curve.points.append(LoadPoint(float(rate), n_window / (nodes * window),
                                      arrived_in_window / (nodes * window), lat, frac))
    return curve
