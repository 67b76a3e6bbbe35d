"""The emulated wafer: a fabric of routers, its routes, host I/O and the cycle loop.

``Wafer`` composes the C++ core (``wafersim._core.fabric.Wafer``); the compute elements on
the PEs' ramps (``w.pe(r, c)``, ``load``, ``memcpy_h2d``, ``launch``, ...) come from
:class:`wafersim.wafer_pes.PeHost`. See docs/fabric.md and docs/compute_element.md.
"""

from __future__ import annotations

import numbers
from pathlib import Path

import numpy as np

from . import _core
from .blas_threads import quiet_blas
from .defaults import DEFAULTS
from .ce_access import check_trace_path, ids_of, write_chrome_trace
from .errors import ConfigError, CycleLimitError, RouteError
from .layout import (DIR_INDEX, DIRECTIONS, OPPOSITE, ROUTING_ALGORITHMS, TOPOLOGIES, Topology,
                     as_point, direction_index)
from .layout import path as layout_path
from .stats import Arrivals, FabricCounters, LatencyHistogram, RunStats
from .values import first_outside, integers, is_integer
from .wafer_pes import PeHost

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


def _point_list(points, name: str) -> list:
    """One (row, col) point, or an iterable of them, as a list of points (checked later)."""
    try:
        single = len(points) == 2 and all(is_integer(v) for v in points)
        return [points] if single else list(points)
    except TypeError:
        raise ConfigError(f"{name} must be a (row, col) point or a list of them, got "
                          f"{points!r}") from None


def _mask(names, field: str) -> int:
    if isinstance(names, str):
        names = [names]
    m = 0
    for n in names:
        m |= 1 << direction_index(n, field)
    return m


def _names(mask: int) -> list[str]:
    return [d for i, d in enumerate(DIRECTIONS) if mask >> i & 1]


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
        if isinstance(positions, (str, bytes, dict)) or not hasattr(positions, "__iter__"):
            raise ConfigError("positions must be a list of {'rx': dirs} or {'tx': dirs}, "
                              f"got {positions!r}")
        rx, masks = [], []
        for i, p in enumerate(positions):
            pair = next(iter(p.items())) if isinstance(p, dict) and len(p) == 1 else p
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and pair[0] in ("rx", "tx")):
                raise ConfigError(f"positions[{i}] must name one field, {{'rx': dirs}} or "
                                  f"{{'tx': dirs}}, got {p!r}")
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
        ``ring``, ``start``, the ``position`` the next forwarded wavelet uses, and the
        (rx, tx) of every position (``routes``, position 0 first)."""
        st = self._w._core.switch_state(self._id, self._w._fabric_color(color))
        if st is None:
            return None
        positions = [{"rx" if r else "tx": _names(m)} for r, m in zip(st["rx"], st["masks"])]
        return {"positions": positions, "ring": bool(st["ring"]), "start": int(st["start"]),
                "position": int(st["position"]),
                "routes": [(_names(s), _names(d)) for d, s in zip(st["dest"], st["src"])]}

    def switch_position(self, color: int) -> int:
        """The current position of the switch of ``color`` here (the one the next
        forwarded wavelet uses); ConfigError without a switch."""
        st = self.switch(color)
        if st is None:
            raise ConfigError(f"color {color} has no switch at router {(self.row, self.col)}")
        return st["position"]


class Wafer(PeHost):
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
        diag_ne, diag_nw = TOPOLOGIES[topology]
        rows = _int(rows, "rows", 1, _MAX_SIDE)
        cols = _int(cols, "cols", 1, _MAX_SIDE)
        skip = _int(0 if skip is None else skip, "skip", 0, _MAX_SIDE)
        dhc = _int(DEFAULTS["diag_hop_cycles"] if diag_hop_cycles is None else diag_hop_cycles,
                   "diag_hop_cycles", 1, 2)
        if packet_routing is None:
            packet_routing = "diag_first" if (diag_ne or diag_nw) else "xy"
        if packet_routing not in ROUTING_ALGORITHMS:
            raise ConfigError(f"packet_routing must be one of {', '.join(ROUTING_ALGORITHMS)}, "
                              f"got {packet_routing!r}")
        self.topology_name = topology
        self.mode = mode
        self.packet_routing = packet_routing if mode == "packets" else None
        self.topology = Topology(rows, cols, diag_ne, diag_nw, skip, bool(loop), dhc)
        self._core = _core.fabric.Wafer(
            rows, cols, diag_ne, diag_nw, skip, bool(loop), dhc,
            _int(DEFAULTS["fabric_colors"] if colors is None else colors,
                 "colors (routable fabric colors)", 8, 32),
            _int(DEFAULTS["router_queue_depth"] if queue_depth is None else queue_depth,
                 "queue_depth", 1, 64),
            DEFAULTS["router_scheduler"] if scheduler is None else str(scheduler),
            _int(DEFAULTS["priority_split"] if priority_split is None else priority_split,
                 "priority_split", 0, 32),
            mode == "packets", packet_routing,
            0 if threads is None else _int(threads, "threads", 1, _MAX_THREADS),
            _int(DEFAULTS["watchdog_cycles"] if watchdog is None else watchdog, "watchdog", 1,
                 _FOREVER))
        self.colors = int(DEFAULTS["fabric_colors"] if colors is None else colors)
        self.cycle_limit = DEFAULTS["run_cycle_limit"] if cycle_limit is None else cycle_limit
        self.endpoint_sleep = endpoint_sleep
        self._init_pes(ce, tensor_unit)

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
        if not isinstance(on, (bool, np.bool_)):
            raise ConfigError(f"endpoint_sleep must be True or False, got {on!r}")
        self._core.endpoint_sleep = bool(on)

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
            points = [as_point(p, f"{name}[{i}]") for i, p in enumerate(_point_list(at, name))]
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
            edge = self.topology.edge_port((int(r[i]), int(c[i])))
            if edge is None:
                raise not_a_port(i)
            (er, ec), d = edge
            ids[i], ports[i] = er * self.cols + ec, DIR_INDEX[d]
        return ids, ports

    # --- routes --------------------------------------------------------------------------
    def router(self, r: int, c: int) -> RouterView:
        r, c = self._router((r, c), error=ConfigError)
        return RouterView(self, r, c)

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
        pts = [as_point(p, f"path[{i}]") for i, p in enumerate(_point_list(path, "path"))] \
            if path is not None else []
        if not pts:
            raise RouteError("path must list at least one (row, col) point")
        first, last = pts[0], pts[-1]
        src_port = dst_port = "RAMP"
        if not self.topology.inside(*first) and len(pts) > 1:
            edge = self.topology.edge_port(first)
            if edge is None:
                raise RouteError(f"path[0] = {first} is outside the fabric and not an edge port")
            src_port, pts = edge[1], pts[1:]
        if not self.topology.inside(*last) and len(pts) > 1:
            edge = self.topology.edge_port(last)
            if edge is None:
                raise RouteError(f"path[-1] = {last} is outside the fabric and not an edge port")
            dst_port, pts = edge[1], pts[:-1]
        for i, p in enumerate(pts):
            if not self.topology.inside(*p):
                raise RouteError(f"path point {p} (color {color}) leaves the "
                                 f"{self.rows}x{self.cols} fabric")
        if len(set(pts)) != len(pts):
            twice = next(p for p in pts if pts.count(p) > 1)
            raise RouteError(f"path of color {color} visits router {twice} twice (a loop)")
        masks: dict[tuple[int, int], list[int]] = {p: [0, 0] for p in pts}
        masks[pts[0]][1] |= 1 << DIR_INDEX[src_port]
        masks[pts[-1]][0] |= 1 << DIR_INDEX[dst_port]
        for a, b in zip(pts, pts[1:]):
            d = self.topology.link_between(a, b)
            if d is None:
                raise RouteError(f"path of color {color}: no link from {a} to {b} in this "
                                 f"{self.topology_name} fabric")
            masks[a][0] |= 1 << DIR_INDEX[d]
            masks[b][1] |= 1 << DIR_INDEX[OPPOSITE[d]]
        self._add_masks(color, masks, allow_shared_source)

    def route_tree(self, color: int, src, dsts, algorithm: str = "xy") -> None:
        """Multicast ``color`` from ``src`` to every router in ``dsts`` [0301].

        Each branch follows ``algorithm``: ``"xy"`` [0061] or ``"diag_first"`` [0039];
        skip and loop links are only used by explicit ``route`` paths.
        """
        color = self._fabric_color(color)
        self._require_colors_mode("route_tree")
        src = as_point(src, "src")  # every point is a pair of integers before any is placed
        dst_list = [as_point(d, f"dsts[{i}]") for i, d in enumerate(_point_list(dsts, "dsts"))]
        src = self._router(src, "src")
        if not dst_list:
            raise RouteError("route_tree needs at least one destination")
        masks: dict[tuple[int, int], list[int]] = {src: [0, 1 << _RAMP]}
        entered: dict[tuple[int, int], str] = {}
        for i, dst in enumerate(dst_list):
            dst = self._router(dst, f"dsts[{i}]")
            hops = layout_path(self.topology, src, dst, algorithm)
            for a, b in zip(hops, hops[1:]):
                d = self.topology.link_between(a, b)
                if entered.setdefault(b, d) != d:
                    raise RouteError(f"route_tree of color {color}: branches reach {b} from two "
                                     "directions")
                masks.setdefault(a, [0, 0])[0] |= 1 << DIR_INDEX[d]
                masks.setdefault(b, [0, 0])[1] |= 1 << DIR_INDEX[OPPOSITE[d]]
            masks[dst][0] |= 1 << _RAMP
        self._add_masks(color, masks, False)

    def _require_colors_mode(self, what: str) -> None:
        if self.mode != "colors":
            raise ConfigError(f"{what}: in packet mode each wavelet is steered by its destination; "
                              "color routes are for mode='colors'")

    def _add_masks(self, color: int, masks: dict, allow_shared_source: bool) -> None:
        if not allow_shared_source:
            for (r, c), (_, src) in masks.items():
                _, old_src = self._core.route(r * self.cols + c, color)
                if old_src and src & ~old_src:
                    raise RouteError(
                        f"color {color} at router {(r, c)} already comes from {_names(old_src)}; "
                        f"this route adds {_names(src & ~old_src)}: two active sources for one "
                        "color [0302] (pass allow_shared_source=True if only one is active at a time)")
        ids = np.array([r * self.cols + c for r, c in masks], np.uint32)
        dest = np.array([m[0] for m in masks.values()], np.uint16)
        src = np.array([m[1] for m in masks.values()], np.uint16)
        self._core.add_routes(color, ids, dest, src)

    def clear_routes(self, color: int | None = None) -> None:
        """Removes the routes of one color, or of all colors."""
        self._core.clear_routes(-1 if color is None else self._fabric_color(color))

    def check_routes(self) -> None:
        """Raises ``RouteError`` naming the colors and links of any dependency cycle [0304],
        or of a link whose receiver does not list it as a source; ``run`` calls it."""
        self._core.check_routes()

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
                    r = self._core.run(cycles, _CHECK_SECONDS)
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
            prog = self._programs.get((r, c))
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
            busy.append(f"  PE ({r}, {c}): {what}")
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
