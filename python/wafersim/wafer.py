"""The emulated wafer: a fabric of routers, its routes, host I/O and the cycle loop.

``Wafer`` composes the C++ core (``wafersim._core.fabric.Wafer``); the compute elements on
the PEs' ramps (``w.pe(r, c)``, ``load``, ``memcpy_h2d``, ``launch``, ...) come from
:class:`wafersim.wafer_pes.PeHost`, the routes (``route``, ``route_tree``, ``add_routes``,
...) from :class:`wafersim.wafer_routes.RouteHost`. See docs/fabric.md and docs/compute_element.md.
"""

from __future__ import annotations

import numbers
from pathlib import Path

import numpy as np

from ._extension import core
from . import domains, presets, row_work
from ._args import bool_arg, items_arg, show
from .blas_threads import quiet_blas
from .defaults import DEFAULTS
from .ce_access import check_trace_path, ids_of, write_chrome_trace
from .errors import ConfigError, CycleLimitError, RouteError
from .layout import (DIR_INDEX, ROUTING_ALGORITHMS, TOPOLOGIES, Topology, as_point,
                     direction_index, direction_mask, direction_names, point_list)
from .stats import Arrivals, FabricCounters, LatencyHistogram, RunStats
from .values import first_outside, integers
from .wafer_pes import PeHost
from .wafer_routes import RouteHost

__all__ = ["Wafer", "RouterView"]

_RAMP = DIR_INDEX["RAMP"]
_MODES = ("colors", "packets")
_FOREVER = 1 << 62
_MAX_SIDE = 1 << 16    # rows, cols (src/wafersim/fabric/topology.cpp)
_MAX_THREADS = 1024    # OpenMP threads (src/wafersim/sim/simulator.cpp)
# Wall-clock seconds between two looks at Ctrl-C (Python's signal handlers) during a run.
_CHECK_SECONDS = 0.1


def _int(value, name: str, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        raise ConfigError(f"{name} must be in {rng}, got {v}")
    return v


_mask = direction_mask
_names = direction_names


class RouterView:
    """One router's static route table (Dest/Src per color [0318], [0322]) and queues."""

    def __init__(self, wafer: "Wafer", r: int, c: int):
        self._w, self.row, self.col = wafer, r, c
        self._id = r * wafer.cols + c

    def __repr__(self) -> str:
        return f"RouterView({self.row}, {self.col})"

    def set_route(self, color: int, rx=(), tx=()) -> None:
        """Replaces the Src (``rx``) and Dest (``tx``) directions of ``color`` here.

        Several sources are legal as long as only one is active at a time [0302]; an
        empty ``rx`` and ``tx`` remove the color from this router.
        """
        color = self._w._fabric_color(color)
        self._w._core.set_route(self._id, color, _mask(tx, "tx"), _mask(rx, "rx"))

    def route(self, color: int) -> tuple[list[str], list[str]]:
        """(rx, tx) direction names of ``color`` here."""
        color = self._w._fabric_color(color)
        dest, src = self._w._core.route(self._id, color)
        return _names(src), _names(dest)

    def occupancy(self, color: int) -> int:
        """Wavelets of ``color`` queued here (packet mode: pass an input direction name)."""
        key = direction_index(color, "port") if isinstance(color, str) else _int(color, "color", 0, 63)
        return int(self._w._core.router_state(self._id)["occupancy"].get(key, 0))

    def stalled(self, color: int) -> bool:
        """Whether this router stalls ``color`` toward its sources (end of last cycle) [0333]."""
        key = direction_index(color, "port") if isinstance(color, str) else _int(color, "color", 0, 63)
        return bool(self._w._core.router_state(self._id)["stall_out"] >> key & 1)

    def queue(self, color: int) -> list[tuple[int, bool, int, int]]:
        """Queued wavelets of ``color``, oldest first, as (color, ctrl, index, data)."""
        return list(self._w._core.queue(self._id, _int(color, "color", 0, 63)))

    # --- runtime switches (docs/fabric.md, "Switches"; commands in wafersim.switches) ----
    def set_switch(self, color: int, positions, *, ring: bool = False, start: int = 0) -> None:
        """Gives ``color`` here up to four switch positions beside its route (position 0).

        Each position is ``{"rx": dirs}`` or ``{"tx": dirs}`` (or a pair ``("tx", dirs)``):
        it replaces where the color comes from or where it goes and keeps the other field
        from the position before. Control wavelets of the color move the switch (advance,
        reset to 0); ``ring`` wraps from the last position to 0, else the switch stays at
        the last. ``start``: the position it begins in. Set the route first.
        """
        color = self._w._fabric_color(color)
        rx, masks = [], []
        for i, p in enumerate(items_arg("positions", positions, "{'rx': dirs} or {'tx': dirs}")):
            pair = next(iter(p.items())) if isinstance(p, dict) and len(p) == 1 else p
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2
                    and isinstance(pair[0], str) and pair[0] in ("rx", "tx")):
                raise ConfigError(f"positions[{i}] must name one field, {{'rx': dirs}} or "
                                  f"{{'tx': dirs}}, got {show(p)}")
            rx.append(pair[0] == "rx")
            masks.append(_mask(pair[1], f"positions[{i}].{pair[0]}"))
        if not isinstance(ring, (bool, np.bool_)):
            raise ConfigError(f"ring must be True or False, got {ring!r}")
        self._w._core.set_switch(self._id, color, np.array(rx, np.uint8),
                                 np.array(masks, np.uint16), bool(ring), _int(start, "start", 0, 4))

    def clear_switch(self, color: int) -> None:
        """Removes the switch of ``color`` here; the color keeps its route (position 0)."""
        self._w._core.clear_switch(self._id, self._w._fabric_color(color))

    def switch(self, color: int) -> dict | None:
        """The switch of ``color`` here (None without one): its ``positions`` as given,
        ``ring``, ``start``, the ``position`` the next forwarded wavelet uses, the
        ``arrival_position`` that decides where wavelets may come from, the directions
        ``held`` now (a source in another position, not in the arrival position: their
        senders wait), and the (rx, tx) of every position (``routes``, position 0 first)."""
        st = self._w._core.switch_state(self._id, self._w._fabric_color(color))
        if st is None:
            return None
        positions = [{"rx" if r else "tx": _names(m)} for r, m in zip(st["rx"], st["masks"])]
        return {"positions": positions, "ring": bool(st["ring"]), "start": int(st["start"]),
                "position": int(st["position"]),
                "arrival_position": int(st["arrival_position"]), "held": _names(st["held"]),
                "routes": [(_names(s), _names(d)) for d, s in zip(st["dest"], st["src"])]}

    def switch_position(self, color: int) -> int:
        """The current position of the switch of ``color`` here (the one the next
        forwarded wavelet uses); ConfigError without a switch."""
        st = self.switch(color)
        if st is None:
            raise ConfigError(f"color {color} has no switch at router {(self.row, self.col)}")
        return st["position"]


class Wafer(PeHost, RouteHost):
    """A wafer of ``rows x cols`` PEs joined by a wavelet fabric.

    Parameters (defaults from ``wafersim.DEFAULTS``):

    * ``topology``: ``"mesh"``, ``"mesh+diag"`` (both diagonal families), ``"mesh+diag_ne"``
      or ``"mesh+diag_nw"`` (one family) [0032];
    * ``skip``: horizontal skip links joining columns c and c+skip when c % skip == 0
      [0294]-[0296]; ``loop``: vertical wrap links [0297];
    * ``colors``: routable fabric colors (8..32) [0292]; ``queue_depth``: router queue
      entries per color [0317]; ``diag_hop_cycles``: 1 or 2 cycles per diagonal hop;
    * ``scheduler``: ``"round_robin"`` or ``"priority"`` (colors below ``priority_split``
      first) [0320]; ``watchdog``: cycles without progress before ``DeadlockError`` [0306];
      ``cycle_limit``: cycles a :meth:`run` without ``max_cycles`` may take before
      ``CycleLimitError`` (a livelock); ``threads``: OpenMP threads (None: OpenMP's default);
    * ``mode``: ``"colors"`` (the color-routed fabric of seed 000) or ``"packets"`` (NoC
      studies: each wavelet is steered by its destination with ``packet_routing`` ``"xy"``
      or ``"diag_first"``, one queue per input port; docs/noc.md);
    * ``ce``: options of the compute elements that loaded programs get (a dict with the
      keyword arguments of :class:`wafersim.pe.LonePE`: ``memory_bytes``, ``code_bytes``,
      ``input_queue_depth``, ``output_queue_depth``, ``microthreads``,
      ``task_start_latency``, ``picker``, ``rng_seed`` (PE (r, c) uses rng_seed + r * cols
      + c), ``rng_resources``, ``block_holds_microthreads``, ``bulk_vector``, ``trace``,
      ``profile``).
      ``Wafer(ce={"trace": True})`` records every run's trace events (task and microthread
      spans, block / unblock / activate events; docs/compute_element.md), read per PE with
      ``w.pe(r, c).stats()`` or written by :meth:`run` with ``trace=``;
    * ``tensor_unit``: a :class:`wafersim.TensorUnitConfig` (or True) gives every PE with a
      program a tensor unit, created on its first tensor instruction (docs/tensor.md);
    * ``endpoint_sleep``: compute elements that only count cycles for a while sleep
      (:attr:`endpoint_sleep`; True). The same results either way, faster asleep.
    """

    def __init__(self, rows: int, cols: int, topology: str = "mesh", *, skip: int | None = None,
                 loop: bool = False, colors: int | None = None, queue_depth: int | None = None,
                 diag_hop_cycles: int | None = None, scheduler: str | None = None,
                 priority_split: int | None = None, watchdog: int | None = None,
                 threads: int | None = None, mode: str = "colors",
                 packet_routing: str | None = None, ce: dict | None = None,
                 tensor_unit=None, cycle_limit: int | None = None, endpoint_sleep: bool = True):
        if not isinstance(topology, str) or topology not in TOPOLOGIES:
            raise ConfigError(f"topology must be one of {', '.join(TOPOLOGIES)}, got {topology!r}")
        if mode not in _MODES:
            raise ConfigError(f"mode must be one of {', '.join(_MODES)}, got {mode!r}")
        rows = _int(rows, "rows", 1, _MAX_SIDE)
        cols = _int(cols, "cols", 1, _MAX_SIDE)
        skip = _int(0 if skip is None else skip, "skip", 0, _MAX_SIDE)
        dhc = _int(DEFAULTS["diag_hop_cycles"] if diag_hop_cycles is None else diag_hop_cycles,
                   "diag_hop_cycles", 1, 2)
        if packet_routing is not None and not isinstance(packet_routing, str):
            raise ConfigError(f"packet_routing must be one of {', '.join(ROUTING_ALGORITHMS)}, "
                              f"got {packet_routing!r}")
        self.topology_name = topology
        self.mode = mode
        self.topology = Topology.named(rows, cols, topology, skip=skip, loop=bool(loop),
                                       diag_hop_cycles=dhc)
        self._core = core.fabric.Wafer(
            self.topology,
            colors=_int(DEFAULTS["fabric_colors"] if colors is None else colors,
                        "colors (routable fabric colors)", 8, 32),
            queue_depth=_int(DEFAULTS["router_queue_depth"] if queue_depth is None else queue_depth,
                             "queue_depth", 1, 64),
            scheduler=DEFAULTS["router_scheduler"] if scheduler is None else str(scheduler),
            priority_split=_int(DEFAULTS["priority_split"] if priority_split is None
                                else priority_split, "priority_split", 0, 32),
            packet_mode=mode == "packets", packet_routing=packet_routing,
            threads=0 if threads is None else _int(threads, "threads", 1, _MAX_THREADS),
            watchdog=_int(DEFAULTS["watchdog_cycles"] if watchdog is None else watchdog,
                          "watchdog", 1, _FOREVER))
        #: "xy" or "diag_first" in packet mode (default: diagonal-first where the fabric
        #: has diagonals), else None.
        self.packet_routing = self._core.packet_routing
        self.colors = int(DEFAULTS["fabric_colors"] if colors is None else colors)
        self._clock_hz: float | None = None
        self._preset: presets.Preset | None = None
        self.cycle_limit = DEFAULTS["run_cycle_limit"] if cycle_limit is None else cycle_limit
        self.endpoint_sleep = endpoint_sleep
        self._init_pes(ce, tensor_unit)
        # Under mpiexec (or a test's split_over), this process steps one domain of rows.
        self._domain = domains.join(self, self._core)

    @classmethod
    def preset(cls, name: str, **options) -> "Wafer":
        """A wafer the size of a published system: ``"cs2"`` (757 x 996 PEs) or ``"cs3"``
        (762 x 1172 PEs), 48 KiB of memory per PE, and its clock (:attr:`clock_hz`, 850
        MHz), used only to print emulated time (:meth:`describe_time`). ``options`` are the
        other keyword arguments of ``Wafer`` (``threads``, ``ce``, ...; ``ce={"memory_bytes":
        ...}`` overrides the preset's memory). ``wafersim info`` lists the presets;
        docs/scale.md ("Presets") gives their sources and what they cost here."""
        p = presets.preset(name)
        fixed = sorted({"rows", "cols"} & set(options))
        if fixed:
            raise ConfigError(f"Wafer.preset({p.name!r}) sets {' and '.join(fixed)}; "
                              f"use Wafer(rows, cols, ...) for another size")
        ce = options.pop("ce", None)
        if ce is not None and not isinstance(ce, dict):
            raise ConfigError(f"ce must be a dict of compute-element options, got {ce!r}")
        ce = dict(ce or {})
        ce.setdefault("memory_bytes", p.memory_bytes)
        w = cls(p.rows, p.cols, ce=ce, **options)
        w.clock_hz = p.clock_hz
        w._preset = p
        return w

    @property
    def preset_name(self) -> str | None:
        """The name of the preset this wafer was built from (:meth:`preset`), or None."""
        return None if self._preset is None else self._preset.name

    @property
    def clock_hz(self) -> float | None:
        """The clock used to print emulated time (:meth:`describe_time`): the preset's, or
        None; settable. Nothing the emulator computes depends on it."""
        return self._clock_hz

    @clock_hz.setter
    def clock_hz(self, hz) -> None:
        if hz is not None and (isinstance(hz, bool) or not isinstance(hz, numbers.Real)
                               or not 0 < hz < float("inf")):
            raise ConfigError(f"clock_hz must be a positive number of hertz or None, got {hz!r}")
        self._clock_hz = None if hz is None else float(hz)

    def describe_time(self, cycles: int | None = None) -> str:
        """``"4,777 cycles = 5.62 us at 850 MHz"``: ``cycles`` (default: all simulated so
        far, :attr:`cycle`) as emulated time at :attr:`clock_hz`."""
        if self._clock_hz is None:
            raise ConfigError("this wafer has no clock: build it with Wafer.preset(...) or set "
                              "clock_hz (e.g. w.clock_hz = 850e6)")
        cycles = self.cycle if cycles is None else _int(cycles, "cycles", 0, _FOREVER)
        return presets.describe_time(cycles, self._clock_hz)

    # --- shape and properties ----------------------------------------------------------
    @property
    def rows(self) -> int:
        return self.topology.rows

    @property
    def cols(self) -> int:
        return self.topology.cols

    @property
    def cycle(self) -> int:
        """Cycles simulated so far."""
        return int(self._core.cycle)

    @property
    def queued(self) -> int:
        """Wavelets in router queues now."""
        return int(self._core.queued)

    @property
    def pending_injections(self) -> int:
        return int(self._core.pending_injections)

    @property
    def threads(self) -> int:
        return int(self._core.threads)

    @threads.setter
    def threads(self, n: int | None) -> None:
        self._core.threads = 0 if n is None else _int(n, "threads", 1, _MAX_THREADS)

    @property
    def parallel_min_routers(self) -> int:
        """A phase with fewer active routers runs in one thread (512; 256 once the wafer has
        compute elements): a parallel region costs more than a small phase. Results do not
        depend on it; tune it for machines with many cores."""
        return int(self._core.parallel_min_routers)

    @parallel_min_routers.setter
    def parallel_min_routers(self, n: int) -> None:
        self._core.parallel_min_routers = _int(n, "parallel_min_routers", 0, _FOREVER)

    @property
    def chunks_per_thread(self) -> int:
        """Chunks of consecutive rows per thread in a cycle run by several threads (4): a
        thread done with its own takes whole chunks from another's end. More even out
        uneven rows, fewer keep more rows' two phases together in one thread's cache.
        Results do not depend on it (docs/fabric.md, "Chunked cycles")."""
        return int(self._core.chunks_per_thread)

    @chunks_per_thread.setter
    def chunks_per_thread(self, n: int) -> None:
        self._core.chunks_per_thread = _int(n, "chunks_per_thread", 1, 64)

    @property
    def spin_wait(self) -> int:
        """Microseconds a thread waiting for the next phase of a cycle spins before it
        sleeps (50): a short spin saves the wake-up of a sleeping thread (about 100 us on
        a virtual machine) between phases that follow each other closely, and costs at
        most that much on a machine busy with other work. 0 sleeps at once. Results do not
        depend on it (docs/fabric.md, "Threads")."""
        return int(self._core.spin_wait)

    @spin_wait.setter
    def spin_wait(self, us: int) -> None:
        self._core.spin_wait = _int(us, "spin_wait", 0, 1_000_000)

    @property
    def endpoint_sleep(self) -> bool:
        """Whether a compute element that will only count cycles for a while (its task
        stalled on an empty input queue, or a bulk vector operation) sleeps: the cycle loop
        stops stepping it and its router may leave the active set, and its counts are made
        up when it wakes (True). Results, cycle counts and statistics do not depend on it
        (docs/fabric.md, "Sleeping endpoints"); False is for comparing."""
        return bool(self._core.endpoint_sleep)

    @endpoint_sleep.setter
    def endpoint_sleep(self, on: bool) -> None:
        self._core.endpoint_sleep = bool_arg("endpoint_sleep", on)

    @property
    def record_row_work(self) -> bool:
        """Whether runs time every row's phase A and phase B (False): the units the threads
        share out. :meth:`row_work` returns what was recorded; results do not depend on it
        (``wafersim.row_work``; docs/scale.md, "What whole rows allow")."""
        return bool(self._core.record_row_work)

    @record_row_work.setter
    def record_row_work(self, on: bool) -> None:
        self._core.record_row_work = bool_arg("record_row_work", on)

    def row_work(self) -> "row_work.RowWork":
        """The row phases recorded since the last call (:attr:`record_row_work`), as a
        ``wafersim.row_work.RowWork``, and forgets them. On a wafer split over MPI
        processes, each process returns the phases of its own rows."""
        d = self._core.take_row_work()
        return row_work.RowWork(cycle=d["cycle"], row=d["row"], phase=d["phase"],
                                routers=d["routers"], ns=d["ns"], rows=self.rows)

    @property
    def watchdog(self) -> int:
        return int(self._core.watchdog)

    @watchdog.setter
    def watchdog(self, cycles: int) -> None:
        self._core.watchdog = _int(cycles, "watchdog", 1, _FOREVER)

    @property
    def cycle_limit(self) -> int:
        """Cycles a :meth:`run` without ``max_cycles`` may take before it raises
        ``CycleLimitError`` (default ``DEFAULTS["run_cycle_limit"]``); raise it for longer runs."""
        return self._cycle_limit

    @cycle_limit.setter
    def cycle_limit(self, cycles: int) -> None:
        self._cycle_limit = _int(cycles, "cycle_limit", 1, _FOREVER)

    def __repr__(self) -> str:
        extra = f", skip={self.topology.skip}" if self.topology.skip else ""
        extra += ", loop=True" if self.topology.loop else ""
        return (f"Wafer({self.rows}x{self.cols}, {self.topology_name}{extra}, mode={self.mode}, "
                f"cycle={self.cycle})")

    # --- validation helpers --------------------------------------------------------------
    def _fabric_color(self, color) -> int:
        color = _int(color, "color", 0, 63)
        if color >= self.colors:
            raise ConfigError(f"color {color} is a local color (ids {self.colors}..63 never enter "
                              f"the router [0096]); routable colors are 0..{self.colors - 1}")
        return color

    def _router(self, point, name: str = "router", error=RouteError) -> tuple[int, int]:
        r, c = as_point(point, name)
        if not self.topology.inside(r, c):
            raise error(f"{name} {(r, c)} is outside the {self.rows}x{self.cols} fabric")
        return r, c

    def _ports(self, at, name: str = "at") -> tuple[np.ndarray, np.ndarray]:
        """Router ids and port indices of ramps (inside points) or edge ports (outside)."""
        if isinstance(at, np.ndarray):
            pts = at.reshape(1, -1) if at.ndim == 1 else at
            if pts.ndim != 2 or pts.shape[1] != 2 or not np.issubdtype(pts.dtype, np.integer):
                raise ConfigError(f"{name} must be a (row, col) pair or an (n, 2) integer array, "
                                  f"got shape {at.shape} and dtype {at.dtype}")
        else:  # Python ints stay exact (numpy would make (uint64, int) pairs floats)
            points = [as_point(p, f"{name}[{i}]") for i, p in enumerate(point_list(at, name))]
            pts = np.array(points, dtype=object).reshape(-1, 2)

        def not_a_port(i):
            return ConfigError(f"{name}[{i}] = {tuple(int(v) for v in pts[i])} is neither inside "
                               f"the {self.rows}x{self.cols} fabric nor an edge port next to a "
                               "border router")

        # Far-off points (uint64 2**64 - 1 is one) are refused before int64 could wrap them.
        far = first_outside(pts, -1, max(self.rows, self.cols))
        if far is not None:
            raise not_a_port(far // 2)
        r, c = pts[:, 0].astype(np.int64), pts[:, 1].astype(np.int64)
        inside = (r >= 0) & (r < self.rows) & (c >= 0) & (c < self.cols)
        ids = np.where(inside, r * self.cols + c, 0).astype(np.uint32)
        ports = np.full(len(pts), _RAMP, np.uint8)
        for i in np.flatnonzero(~inside):
            edge = self.topology.edge_port_at(int(r[i]), int(c[i]))
            if edge is None:
                raise not_a_port(i)
            (er, ec), d = edge
            ids[i], ports[i] = er * self.cols + ec, d
        return ids, ports

    # --- routes --------------------------------------------------------------------------
    def router(self, r: int, c: int) -> RouterView:
        r, c = self._router((r, c), error=ConfigError)
        return RouterView(self, r, c)

    # --- host I/O ------------------------------------------------------------------------
    def inject(self, at, color, data=0, *, index=0, ctrl=False, cycle=None, dest=None) -> int:
        """Queues wavelets at host ports; returns how many.

        ``at``: (row, col) or an (n, 2) array: a router's on-ramp, or an edge port when the
        point lies just outside the border. ``color``, ``data`` (uint32: dense 2 x 16 or
        1 x 32 bits [0427]-[0430]), ``index`` (uint16 sparse index [0424]), ``ctrl`` [0425]
        and ``cycle`` (release cycle; None: now) broadcast against ``at``. Packet mode
        needs ``dest``: the destination (row, col) of each wavelet.
        """
        ids, ports = self._ports(at)
        sizes = {len(ids)} | {np.size(v) for v in (color, data, index, ctrl, cycle) if v is not None}
        sizes.discard(1)
        if len(sizes) > 1:
            raise ConfigError(f"inject: at, color, data, index, ctrl and cycle must have one "
                              f"length (or length 1), got lengths {sorted(sizes)}")
        n = sizes.pop() if sizes else 1
        if len(ids) == 1 and n != 1:  # one point takes every wavelet (none, for empty data)
            ids, ports = np.repeat(ids, n), np.repeat(ports, n)

        def column(value, name, dtype, lo, hi):
            arr = integers(value, name, lo, hi, dtype, bools=name == "ctrl")
            try:
                return np.ascontiguousarray(np.broadcast_to(arr, (n,)))
            except ValueError:
                raise ConfigError(f"{name} has shape {np.shape(value)}, which does not match "
                                  f"{n} injection point(s)") from None

        colors = column(color, "color", np.uint8, 0, 63)
        if n and colors.max() >= self.colors:
            raise ConfigError(f"color {int(colors.max())} is not a fabric color (0..{self.colors - 1})")
        cols = [colors, column(data, "data", np.uint32, 0, 2**32 - 1),
                column(index, "index", np.uint16, 0, 2**16 - 1),
                column(ctrl, "ctrl", np.uint8, 0, 1),
                column(-1 if cycle is None else cycle, "cycle", np.int64, -1, _FOREVER)]
        dest_ids = None
        if self.mode == "packets":
            if dest is None:
                raise ConfigError("packet mode needs dest: the (row, col) each wavelet goes to")
            d_ids, d_ports = self._ports(dest, "dest")
            if np.any(d_ports != _RAMP):
                raise RouteError("dest must be routers inside the fabric")
            if len(d_ids) == 1:
                d_ids = np.repeat(d_ids, n)
            elif len(d_ids) != n:
                raise ConfigError(f"dest has {len(d_ids)} points for {n} wavelets")
            dest_ids = np.ascontiguousarray(d_ids, dtype=np.uint32)
        elif dest is not None:
            raise ConfigError("dest is only for mode='packets'; color routes steer wavelets here")
        self._core.inject(ids, ports, *cols, dest_ids)
        return n

    def set_sink(self, at, capacity: int | None, drain_period: int = 0) -> None:
        """Limits what the host port at ``at`` holds per color; it stalls the router on a
        full color [0330] and frees one wavelet per color every ``drain_period`` cycles
        (0: only when collected). ``capacity=None``: unlimited."""
        ids, ports = self._ports(at)
        if len(ids) != 1:
            raise ConfigError("set_sink takes one port")
        cap = 0 if capacity is None else _int(capacity, "capacity", 1, 2**31)
        self._core.set_sink(int(ids[0]), int(ports[0]), cap, _int(drain_period, "drain_period", 0, 2**31))

    def collect(self, at=None) -> Arrivals:
        """Takes what arrived at host ports (all, or the one at ``at``) since the last call."""
        if at is None:
            raw = self._core.collect(-1, -1)
        else:
            ids, ports = self._ports(at)
            if len(ids) != 1:
                raise ConfigError("collect takes one port, or None for all")
            raw = self._core.collect(int(ids[0]), int(ports[0]))
        if self._domain is not None:
            raw = self._domain.merge_collected(raw)
        router = raw["router"].astype(np.int64)
        return Arrivals(row=router // self.cols, col=router % self.cols, port=raw["port"],
                        color=raw["color"], data=raw["data"], index=raw["index"],
                        ctrl=raw["ctrl"].astype(bool), hops=raw["hops"],
                        injected=raw["injected"], arrived=raw["arrived"])

    # --- running -------------------------------------------------------------------------
    def run(self, max_cycles: int | None = None, *, trace: str | Path | bool | None = None) -> RunStats:
        """Runs until no work is left (or ``max_cycles``); checks routes first.

        Returns the fabric's statistics of this run and, in ``.pes``, each compute
        element's (cycles busy per task, instructions by opcode, stalls by cause, ...).
        ``trace=True`` records the run's trace events (task and microthread spans, block /
        unblock / activate events; docs/compute_element.md) into ``stats.trace``;
        ``trace="run.json"`` also writes them as a Chrome/Perfetto trace, one process per
        PE (also when the run ends in an error); its folder is checked before the run.
        ``Wafer(ce={"trace": True})`` records every run's spans instead.
        Raises ``DeadlockError`` (with a report of
        stuck queues, waiting PEs and any wait cycle) when work is pending and nothing
        moved for ``watchdog`` cycles [0306], ``RouteError`` for bad routes or for two
        wavelets of one color arriving at a router in the same cycle [0302], and the
        ``ProgramError`` / ``MemoryAccessError`` of the first failing PE (lowest id).

        With ``max_cycles`` the run stops there and returns (``.quiescent`` says whether it
        finished). Without it, a run that has not finished after :attr:`cycle_limit` cycles
        raises ``CycleLimitError`` naming the PEs still running and their pcs: a task that
        loops forever keeps the watchdog quiet. Ctrl-C (SIGINT) stops a run within about
        0.1 s with a ``KeyboardInterrupt`` naming the cycle reached; the wafer stays
        consistent at that cycle, to be inspected and run further.
        """
        limited = max_cycles is None
        cycles = self.cycle_limit if limited else _int(max_cycles, "max_cycles", 0, _FOREVER)
        tracing = trace is not None and trace is not False
        path = None if trace is True or not tracing else check_trace_path(trace)
        if tracing:
            was = self._core.ce_config.trace
            self._core.set_ce_trace(True)
        try:
            try:
                with quiet_blas():
                    if self._domain is None:
                        r = self._core.run(cycles, _CHECK_SECONDS)
                    else:
                        r = self._domain.run(lambda: self._core.run(cycles, _CHECK_SECONDS))
            except KeyboardInterrupt as e:
                why = f" ({e})" if str(e) else ""
                raise KeyboardInterrupt(
                    f"Wafer.run interrupted at cycle {self.cycle}{why}; the wafer stopped "
                    "there and can be inspected or run further") from None
            if limited and not r["quiescent"]:
                raise CycleLimitError(self._still_running(cycles))
        except BaseException:
            if path is not None:  # the trace shows where a failed run stopped
                self._write_trace(path, self._pe_run_stats())
            raise
        finally:
            if tracing:
                self._core.set_ce_trace(was)
        pes = self._pe_run_stats()
        events = self._trace_events(pes) if tracing else None
        if path is not None:
            write_chrome_trace(path, events)
        return RunStats(r["start_cycle"], r["cycles"], r["quiescent"], r["moves"], r["injected"],
                        r["delivered"], r["router_cycles"], LatencyHistogram(r["latency"]),
                        r["hop_hist"], pes, r["parallel_phases"], events,
                        slept_cycles=r["slept_cycles"],
                        queue_delay=LatencyHistogram(r["queue_delay"]))

    def _still_running(self, cycles: int, shown: int = 16) -> str:
        """The CycleLimitError message: what still runs after ``cycles`` cycles."""
        busy = []
        for rid in self._core.ce_ids():
            ce = self._core.ce(int(rid))
            if ce.idle:
                continue
            r, c = divmod(int(rid), self.cols)
            prog = self._programs.at(int(rid))
            names = {tid: n for n, tid in prog.tasks.items()} if prog else {}
            if ce.task_running:
                tid = ce.running_task
                what = f"task {names[tid]} ({tid})" if tid in names else f"task {tid}"
                what += f" at pc {ce.pc}"
            else:
                what = "no task running"
            if ce.microthreads_in_use:
                what += f", {ce.microthreads_in_use} microthread(s) waiting"
            if ce.active_ids:
                what += f", active ids {sorted(ids_of(ce.active_ids))}"
            busy.append((int(rid), f"  PE ({r}, {c}): {what}"))
        if self._domain is not None:  # every process's PEs, in router order
            busy = sorted(b for part in self._domain.link.allgather_obj(busy) for b in part)
        busy = [line for _, line in busy]
        head = (f"Wafer.run did not finish within {cycles} cycles (the cycle limit; now at cycle "
                f"{self.cycle}): a livelock, or a longer run than expected (raise w.cycle_limit "
                f"or pass max_cycles=).")
        if not busy:
            return (f"{head} No PE is running; {self.queued} wavelet(s) in router queues, "
                    f"{self.pending_injections} injection(s) still to come.")
        more = [f"  ... and {len(busy) - shown} more"] if len(busy) > shown else []
        return "\n".join([f"{head} Still running:"] + busy[:shown] + more)

    def counters(self) -> FabricCounters:
        """Per-link, per-color and per-router counters since the last reset."""
        occ_sum, occ_max = self._core.occupancy()
        t = self._core.color_traffic()
        router = t["router"].astype(np.int64)
        traffic = {"row": router // self.cols, "col": router % self.cols, "dir": t["dir"],
                   "color": t["color"], "count": t["count"]}
        return FabricCounters(self.topology, self.cycle - int(self._core.counters_since),
                              self._core.link_counts(), self._core.router_traversals(),
                              occ_sum, occ_max, traffic)

    def reset_counters(self) -> None:
        self._core.reset_counters()
