"""What a run reports: plain dataclasses of numpy arrays, never one object per wavelet.

* :class:`RunStats` - one ``Wafer.run`` call: cycles, moves, latency counts
  (:class:`LatencyHistogram`), the hop histogram, and the per-PE statistics of the compute
  elements (:class:`PeStats`).
* :class:`Arrivals` - what reached host ports (``Wafer.collect``), one array per field.
* :class:`FabricCounters` - per link, color and router counters since the last reset
  (``Wafer.counters``), and an energy estimate from ASSUMED per-event energies: the source
  documents give no energy figures (seed 003 only says energy falls with router traversals
  and wire length [0002], [0087]).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .layout import DIR_INDEX, DIRECTIONS, Topology

from .errors import ConfigError

__all__ = ["RunStats", "LatencyHistogram", "PeStats", "Arrivals", "FabricCounters",
           "EnergyReport"]


def _hist_mean(hist: np.ndarray) -> float:
    n = int(hist.sum())
    return float(np.dot(np.arange(len(hist)), hist) / n) if n else math.nan


class LatencyHistogram:
    """Wavelets counted by latency in cycles, in a bounded number of bins (docs/fabric.md,
    "Latency counters"): one bin per latency below :attr:`exact_below` (4096 cycles) and,
    above, 256 bins per power of two (a bin spans at most 1/256 of the latencies in it).
    The count, the sum (so the mean) and the largest latency are exact. The counts stay in
    the core until a method asks for them, so a run's statistics cost the same whatever
    its latencies."""

    def __init__(self, counts):
        self._c = counts  # a wafersim._core.fabric.LatencyCounts

    @property
    def exact_below(self) -> int:
        """Latencies below this have a bin each."""
        return int(self._c.EXACT)

    @property
    def count(self) -> int:
        return int(self._c.count)

    @property
    def total(self) -> int:
        """The sum of all latencies (exact)."""
        return int(self._c.sum)

    @property
    def mean(self) -> float:
        """Mean latency (exact; NaN when nothing was counted)."""
        n = self.count
        return self.total / n if n else math.nan

    @property
    def max(self) -> int:
        """The largest latency (exact; 0 when nothing was counted)."""
        return int(self._c.max)

    def bins(self) -> dict:
        """The bins in use, as arrays: ``low`` and ``high`` (the smallest and largest latency
        a bin holds, equal below :attr:`exact_below`) and ``count``; bins with no count are
        left out."""
        counts = self._c.bins()
        low, high = self._c.edges(len(counts))
        keep = counts != 0
        return {"low": low[keep], "high": high[keep], "count": counts[keep]}

    def percentile(self, q: float) -> int:
        """Smallest latency L with at least ``q`` percent of the counted wavelets at or below
        L: exact when L is below :attr:`exact_below`, else the top of L's bin (at most 1/256
        above it) or the largest latency, whichever is smaller."""
        if not isinstance(q, (int, float, np.integer, np.floating)) or isinstance(q, bool) \
                or not 0 <= q <= 100:
            raise ConfigError(f"percentile q must be a number in 0..100, got {q!r}")
        counts = self._c.bins()
        cum = np.cumsum(counts)
        if not len(cum) or cum[-1] == 0:
            return 0
        b = int(np.searchsorted(cum, q / 100.0 * cum[-1]))
        return min(int(self._c.bin_high(b)), self.max)

    def dense(self) -> np.ndarray:
        """[k] = wavelets with latency k, up to the largest (uint64; empty when nothing was
        counted). Only when every latency is below :attr:`exact_below`: ``ConfigError``
        otherwise (use :meth:`bins`, :meth:`percentile`, :attr:`mean`)."""
        if self.count == 0:
            return np.zeros(0, dtype=np.uint64)
        if self.max >= self.exact_below:
            raise ConfigError(
                f"a dense latency histogram needs every latency below {self.exact_below} "
                f"cycles, and this run's longest is {self.max}: read its bins with "
                f"latency.bins(), or latency.percentile() / .mean / .max")
        return self._c.bins()[:self.max + 1]

    def __repr__(self) -> str:
        return (f"LatencyHistogram(count={self.count}, mean={self.mean:.1f}, max={self.max}, "
                f"{self._c.nbins} bins)")


class PeStats(Mapping):
    """Statistics of the compute elements over one ``Wafer.run``: ``stats[(r, c)]`` is the
    dict ``LonePE.stats()`` returns (cycles stepped, busy cycles per task, tasks started,
    instructions by opcode, stalls by cause, microthread waits, vector iterations and
    element operations, wavelets in / out, queue high-water marks, trace spans), counted
    from the start of the run, for every PE that had a program when it started.

    A wafer keeps each PE's counters packed (a few hundred bytes, where the dict takes
    kilobytes) and builds the dict when asked: ``by_pe`` values are dicts, or bytes that
    ``unpack`` turns into one."""

    def __init__(self, rows: int, cols: int, by_pe: dict, unpack=None):
        self.rows, self.cols = rows, cols
        self._by_pe = by_pe
        self._unpack = unpack

    def __getitem__(self, pe):
        s = self._by_pe[tuple(int(v) for v in pe)]
        return self._unpack(s) if isinstance(s, bytes) else s

    def __iter__(self):
        return iter(self._by_pe)

    def __len__(self) -> int:
        return len(self._by_pe)

    def __repr__(self) -> str:
        return f"PeStats({len(self)} PEs, {self.total('element_ops')} element operations)"

    def total(self, key: str):
        """A counter summed over PEs: a number, or a dict summed key by key (e.g.
        ``total("instructions")`` -> instructions by opcode over the whole wafer)."""
        values = [self[pe][key] for pe in self._by_pe]
        if values and isinstance(values[0], dict):
            out: dict = {}
            for v in values:
                for k, n in v.items():
                    out[k] = out.get(k, 0) + n
            return dict(sorted(out.items(), key=lambda kv: str(kv[0])))
        return sum(values)

    def array(self, key: str) -> np.ndarray:
        """(rows, cols) array of a numeric counter (0 where a PE has no program)."""
        out = np.zeros((self.rows, self.cols), dtype=np.int64)
        for r, c in self._by_pe:
            out[r, c] = self[r, c][key]
        return out


@dataclass(frozen=True)
class RunStats:
    """Result of one ``Wafer.run``; latencies count from the release at the source (a host
    port's ``inject`` cycle, or the cycle a compute element put the wavelet on its on-ramp)
    to the delivery at an off-ramp or edge port, so waiting at the source is part of them.
    ``latency`` holds their counts (``latency_histogram`` the dense form, while every
    latency is below 4096 cycles); ``queue_delay`` counts how long the wavelets that entered
    from host ports in this run waited there."""

    start_cycle: int
    cycles: int
    quiescent: bool          #: stopped because no work was left
    moves: int               #: wavelet moves on any port, ramps included
    injected: int            #: wavelets that entered the fabric
    delivered: int           #: wavelets handed to a ramp or edge endpoint
    router_cycles: int       #: routers processed, summed over cycles (active-set work)
    latency: LatencyHistogram = field(repr=False)  #: delivered wavelets by latency
    hop_histogram: np.ndarray = field(repr=False)  #: [k] = delivered after k hops
    pes: PeStats | None = field(default=None, repr=False)  #: the compute elements' statistics
    parallel_phases: int = 0  #: phases the cycle loop ran in several OpenMP threads
    #: with ``run(trace=...)``: the run's Chrome/Perfetto trace events (docs/compute_element.md)
    trace: list | None = field(default=None, repr=False)
    #: compute-element cycles counted in bulk while the CE slept (simulator work saved;
    #: ``Wafer.endpoint_sleep``)
    slept_cycles: int = 0
    #: wavelets that entered the fabric from host ports in this run, by the cycles they
    #: waited there from their release (exact at any length)
    queue_delay: LatencyHistogram | None = field(default=None, repr=False)

    @property
    def end_cycle(self) -> int:
        return self.start_cycle + self.cycles

    @property
    def latency_histogram(self) -> np.ndarray:
        """[k] = delivered with latency k (``latency.dense()``: ``ConfigError`` when a
        latency reaches 4096 cycles; ``latency`` has the counts of any run)."""
        return self.latency.dense()

    @property
    def mean_latency(self) -> float:
        return self.latency.mean

    @property
    def mean_hops(self) -> float:
        return _hist_mean(self.hop_histogram)

    @property
    def max_latency(self) -> int:
        return self.latency.max

    def latency_percentile(self, q: float) -> int:
        """Smallest latency L with at least q percent of deliveries at or below L (exact
        below 4096 cycles; see ``LatencyHistogram.percentile``)."""
        return self.latency.percentile(q)


@dataclass
class Arrivals:
    """Wavelets that arrived at host ports, ordered by arrival cycle then port."""

    row: np.ndarray
    col: np.ndarray
    port: np.ndarray      #: direction index: DIR_INDEX["RAMP"] or the edge port's direction
    color: np.ndarray
    data: np.ndarray      #: uint32: dense 2 x 16 bits or 1 x 32 bits; sparse uses bits 15:0
    index: np.ndarray     #: uint16 sparse index
    ctrl: np.ndarray      #: bool control bit [0425]
    hops: np.ndarray      #: router-to-router links traversed
    #: cycle the wavelet was released at its source (a wait at a host port beyond 2^31
    #: cycles counts as 2^31 here: docs/fabric.md, "Latency counters")
    injected: np.ndarray
    arrived: np.ndarray   #: cycle it was handed to the host port

    def __len__(self) -> int:
        return len(self.data)

    def values(self, dtype: str = "fp16", sw: int = 1, *, color: int | None = None,
               include_control: bool = False) -> np.ndarray:
        """The element values the wavelets carry (of one ``color``, control wavelets left
        out by default), decoded as ``dtype`` with SIMD width ``sw`` [0502]: the numpy end
        of a stream a program sends to an edge port."""
        from .ce_access import decode_values

        keep = np.ones(len(self.data), dtype=bool) if color is None else self.color == color
        if not include_control:
            keep &= ~self.ctrl
        return decode_values(self.data[keep], dtype, sw)

    @property
    def latency(self) -> np.ndarray:
        return (self.arrived - self.injected).astype(np.int64)

    @property
    def port_name(self) -> np.ndarray:
        return np.array(DIRECTIONS, dtype=object)[self.port]

    @property
    def at_ramp(self) -> np.ndarray:
        return self.port == DIR_INDEX["RAMP"]


@dataclass(frozen=True)
class EnergyReport:
    """Energy in the units of the assumed parameters (no seed gives values)."""

    router: float
    wire: float
    e_router: float
    e_wire_per_pitch: float

    @property
    def total(self) -> float:
        return self.router + self.wire


@dataclass
class FabricCounters:
    """Counters since the last ``reset_counters`` (docs/fabric.md, "Counters")."""

    topology: Topology
    cycles: int                  #: cycles the counters cover
    link_counts: np.ndarray      #: (rows, cols, 11): wavelets sent on each output direction
    router_traversals: np.ndarray  #: (rows, cols): wavelets each router enqueued
    occupancy_sum: np.ndarray    #: (rows, cols): queued wavelets summed over cycles
    occupancy_max: np.ndarray    #: (rows, cols): most wavelets queued at once
    color_traffic: dict = field(repr=False)  #: row, col, dir, color, count (non-zero only)

    @property
    def occupancy_mean(self) -> np.ndarray:
        return self.occupancy_sum / max(self.cycles, 1)

    def link_utilization(self) -> np.ndarray:
        """Wavelets per cycle on each output direction (1.0 = busy every cycle [0315])."""
        return self.link_counts / max(self.cycles, 1)

    def link_color_counts(self, color: int) -> np.ndarray:
        """(rows, cols, 11): wavelets of one color on each output direction."""
        t = self.color_traffic
        out = np.zeros_like(self.link_counts)
        sel = t["color"] == color
        np.add.at(out, (t["row"][sel], t["col"][sel], t["dir"][sel]), t["count"][sel])
        return out

    def wire_pitches(self, diag_wire: str = "straight", loop_wire: str = "folded") -> np.ndarray:
        """(rows, cols, 11) length of each output link in PE pitches.

        Mesh and edge links 1; diagonals sqrt(2) when straight or 2 when zig-zag (seed 003
        claims 3 and 4, [0027]); skip links span ``skip`` PEs; loop links about 2 PEs when
        folded [0297] or the whole column otherwise; the ramp has no wire.
        """
        t = self.topology
        diag = {"straight": math.sqrt(2.0), "zigzag": 2.0}[diag_wire]
        out = np.zeros((t.rows, t.cols, len(DIRECTIONS)))
        for d in ("E", "W", "N", "S"):
            out[:, :, DIR_INDEX[d]] = 1.0
        if t.loop:
            span = 2.0 if loop_wire == "folded" else float(t.rows - 1)
            out[t.rows - 1, :, DIR_INDEX["N"]] = span
            out[0, :, DIR_INDEX["S"]] = span
        for d in ("NE", "SW", "NW", "SE"):
            out[:, :, DIR_INDEX[d]] = diag
        out[:, :, DIR_INDEX["SKIP_E"]] = out[:, :, DIR_INDEX["SKIP_W"]] = float(t.skip)
        return out

    def energy(self, e_router: float = 1.0, e_wire_per_pitch: float = 1.0,
               diag_wire: str = "straight", loop_wire: str = "folded") -> EnergyReport:
        """E = e_router * router traversals + e_wire_per_pitch * wire pitches travelled.

        Both energies are ASSUMED parameters (defaults 1.0: equal weight, the weighting
        under which seed 003's "about 20% / 40%" figures come out of a zero-load model).
        """
        wire = float(np.sum(self.link_counts * self.wire_pitches(diag_wire, loop_wire)))
        router = float(self.router_traversals.sum())
        return EnergyReport(e_router * router, e_wire_per_pitch * wire, e_router, e_wire_per_pitch)
