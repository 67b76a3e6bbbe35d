"""The compute elements of a wafer, from the host: programs, symbols, memory copies over
rectangles of PEs, task launches, streams through edge ports and straight into and out of
any PE's compute element, statistics and traces.

A PE gets a compute element when a program is loaded there (``w.pe(r, c).load(prog)`` or
``w.load(prog, rect)``); until then its ramp is free for host ports. ``Wafer`` inherits
:class:`PeHost`; ``w.pe(r, c)`` returns a :class:`WaferPE`, which has the accessors of
:class:`wafersim.pe.LonePE` (both inherit :class:`wafersim.ce_access.CeAccess`).

    w = ws.Wafer(4, 4)
    w.load(program, rect=(0, 0, 4, 4))               # one program on 16 PEs
    w.memcpy_h2d("a", blocks, rect=(0, 0, 4, 4))      # blocks.shape == (4, 4, n)
    w.launch("main")
    stats = w.run(trace="run.json")                   # stats.pes[(r, c)]: per-PE counters
    y = w.memcpy_d2h("y", rect=(0, 3, 4, 1))          # shape (4, 1, m)
"""

from __future__ import annotations

import numbers
from pathlib import Path

import numpy as np

from ._extension import core
from .asm import Program, assemble
from .ce_access import (CE_OPTIONS, CeAccess, ce_config, data_symbol, decode_values,
                        encode_values, load_program, symbol_values, trace_events,
                        write_chrome_trace)
from .errors import ConfigError
from .layout import Rect
from .pe_stats_table import PackedPeStats
from .program_table import ProgramTable
from .stats import PeStats
from .switches import control_data

__all__ = ["WaferPE", "PeHost"]


def _flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ConfigError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _task_id(task) -> int:
    if isinstance(task, bool) or not isinstance(task, numbers.Integral) or not 0 <= task <= 63:
        raise ConfigError(f"task must be a task id 0..63, got {task!r}")
    return int(task)


class WaferPE(CeAccess):
    """The compute element of PE (row, col) of a wafer (a handle: cheap to create)."""

    def __init__(self, wafer: "PeHost", row: int, col: int):
        self._w, self.row, self.col = wafer, row, col
        self._id = row * wafer.cols + col

    def __repr__(self) -> str:
        loaded = "loaded" if self.loaded else "no program"
        return f"WaferPE({self.row}, {self.col}, {loaded})"

    @property
    def _ce(self):
        return self._w._ce_at(self._id)  # ConfigError when no program is loaded

    @property
    def loaded(self) -> bool:
        return self._w._has_ce(self._id)

    @property
    def program(self) -> Program | None:
        return self._w._programs.at(self._id)

    def _program(self) -> Program:
        p = self.program
        if p is None:
            raise ConfigError(f"PE ({self.row}, {self.col}) has no program: load one first")
        return p

    def load(self, program: Program | str) -> Program:
        """Gives this PE a fresh compute element running ``program`` (assembled first when
        it is text): code, initial data and Base. Replaces an earlier program if the PE is
        idle."""
        return self._w.load(program, Rect(self.row, self.col))

    @property
    def config(self):
        return self._ce.config

    @property
    def idle(self) -> bool:
        return bool(self._ce.idle)

    def stats(self) -> dict:
        """Counters since the program was loaded or :meth:`reset_stats` (``Wafer.run``
        reports each run's share)."""
        return self._ce.stats()

    def reset_stats(self) -> None:
        self._w._reset_ce_stats(self._id)


class _Group:
    """Some of a wafer's compute elements as one `target` of ce_access.load_program."""

    def __init__(self, wafer_core, ids: np.ndarray):
        self._target, self._ids = wafer_core, ids

    def _set_base(self, value: int) -> None:
        self._base = int(value)

    base = property(None, _set_base)  # written with the code (load_program sets it first)

    def load_code(self, first: int, words) -> None:
        self._target.load_code(self._ids, self._base, int(first),
                               np.ascontiguousarray(words, np.uint32))

    def write_memory(self, addr: int, data) -> None:
        self._target.write_memory(self._ids, int(addr), np.ascontiguousarray(data, np.uint8))

    # Load-time task state of the program (.block, .activate, .filter), PE by PE.
    def block(self, tid: int) -> None:
        for i in self._ids:
            self._target.ce(int(i)).block(tid)

    def activate(self, tid: int) -> None:
        self._target.activate(self._ids, tid)

    def set_filter(self, color: int, lo: int, hi: int) -> None:
        for i in self._ids:
            self._target.ce(int(i)).set_filter(color, lo, hi)


class PeHost:
    """The host side of a wafer's compute elements (a base of :class:`wafersim.Wafer`)."""

    def _init_pes(self, ce: dict | None, tensor_unit=None) -> None:
        self._programs = ProgramTable(self.rows, self.cols)
        opts = dict(ce or {})
        if tensor_unit is not None:
            opts["tensor_unit"] = tensor_unit
        unknown = sorted(set(opts) - set(CE_OPTIONS) - {"trace"})
        if unknown or "fabric_colors" in opts:
            bad = unknown or ["fabric_colors"]
            raise ConfigError(f"ce: unknown option(s) {', '.join(bad)}; valid: "
                              f"{', '.join(o for o in CE_OPTIONS if o != 'fabric_colors')} "
                              "(the fabric's colors set fabric_colors)")
        self._core.ce_config = ce_config(fabric_colors=self.colors, **opts)

    # ---- the compute elements' configuration ------------------------------------------------
    @property
    def ce_config(self):
        """The configuration every loaded program's compute element gets (a copy: set it
        with ``Wafer(ce={...})``): ``memory_bytes``, ``code_bytes``, ``data_bytes`` (memory
        below the code), ``max_instructions``, ``input_queue_depth``,
        ``output_queue_depth``, ``microthreads``, ``trace``, ``profile``, ..."""
        return self._core.ce_config

    @property
    def ce_trace(self) -> bool:
        """Whether the compute elements record trace events in every run (task and
        microthread spans, block / unblock / activate; docs/compute_element.md), as
        ``Wafer(ce={"trace": True})`` sets; settable, for the loaded CEs and later loads."""
        return bool(self._core.ce_config.trace)

    @ce_trace.setter
    def ce_trace(self, on: bool) -> None:
        self._core.set_ce_trace(_flag(on, "ce_trace"))

    @property
    def ce_profile(self) -> bool:
        """Whether the compute elements count busy cycles per instruction address (the
        ``busy_by_pc`` of their statistics); settable, for the loaded CEs and later loads."""
        return bool(self._core.ce_config.profile)

    @ce_profile.setter
    def ce_profile(self, on: bool) -> None:
        self._core.set_ce_profile(_flag(on, "ce_profile"))

    # Used by WaferPE (this module) only.
    def _ce_at(self, rid: int):
        if self._domain is not None and not self._domain.owns(rid // self.cols):
            r, c = divmod(rid, self.cols)
            d = self._domain
            raise ConfigError(f"PE ({r}, {c}) is held by process {d.owner(r)} of {d.parts} (this "
                              f"is process {d.index}): a wafer split over processes keeps each "
                              "PE's compute element on one process only; use memcpy_h2d, "
                              "memcpy_d2h or run statistics, which every process calls")
        return self._core.ce(rid)

    def _has_ce(self, rid: int) -> bool:
        if self._domain is not None and not self._domain.owns(rid // self.cols):
            return self._programs.has(rid)
        return bool(self._core.has_ce(rid))

    def _reset_ce_stats(self, rid: int) -> None:
        if self._domain is None or self._domain.owns(rid // self.cols):
            self._core.reset_ce_stats(rid)

    def _held(self, ids: np.ndarray) -> np.ndarray:
        """The router ids of ``ids`` whose compute elements this process holds: all of them,
        or on a wafer split over processes those in this process's rows (docs/scale.md)."""
        return ids if self._domain is None else ids[self._domain.mine(ids)]

    def _check_programs(self, rect: Rect, what: str) -> None:
        """On a split wafer, the error the core raises for a PE without a program, raised
        alike on every process (each one holds only its own rows' compute elements)."""
        if self._domain is None:
            return
        p = self._programs.first_missing(rect)
        if p is not None:
            raise ConfigError(f"{what}: PE ({p[0]}, {p[1]}) has no program: load one first")

    # ---- PEs and rectangles -----------------------------------------------------------------
    def pe(self, r: int, c: int) -> WaferPE:
        """The compute element of PE (r, c) (load a program there first)."""
        r, c = self._router((r, c), "pe", error=ConfigError)
        return WaferPE(self, r, c)

    def rect(self, rect=None) -> Rect:
        """``rect`` as a :class:`wafersim.layout.Rect` inside this wafer (None: all of it)."""
        return Rect.of(rect, self.rows, self.cols)

    @property
    def loaded_pes(self) -> list[tuple[int, int]]:
        """PEs that have a program, in router order."""
        # On a split wafer every process knows every PE's program, not every PE's CE.
        ids = self._programs.loaded_ids() if self._domain is not None else self._core.ce_ids()
        return [(int(i) // self.cols, int(i) % self.cols) for i in ids]

    def _programs_over(self, rect: Rect, what: str) -> list[tuple[Program, np.ndarray]]:
        """Programs of the PEs of ``rect`` grouped by program: (program, positions in rect
        order), in the order the programs first appear. ConfigError names a PE without a
        program."""
        p = self._programs.first_missing(rect)
        if p is not None:
            raise ConfigError(f"{what}: PE {p} in rect {rect.describe()} has no program")
        return self._programs.groups(rect)

    # ---- programs -------------------------------------------------------------------------
    def load(self, program: Program | str, rect=None) -> Program:
        """Loads ``program`` (assembled once if it is text) into every PE of ``rect`` (None:
        the whole wafer), each getting a fresh compute element. ConfigError if a PE there is
        still busy; ProgramError if the code does not fit instruction memory."""
        rect = self.rect(rect)
        if isinstance(program, str):
            program = assemble(program)
        if not isinstance(program, Program):
            raise ConfigError(f"load() takes a Program or assembly text, got {type(program).__name__}")
        every = rect.ids(self.cols)
        ids = self._held(every)  # a split wafer: this process's rows only
        if self._domain is not None:  # every process raises the first PE's error, or none
            first = int(self._core.first_unresettable_ce(ids))
            self._domain.raise_first(first, None if first < 0 else
                                     lambda: self._core.check_reset_ces(np.array([first], np.uint32)))
        self._core.reset_ces(ids)
        self._programs.clear(every)  # the old programs are gone even if loading fails below
        load_program(_Group(self._core, ids), program, self._core.ce_config.data_bytes)
        self._programs.set(every, program)
        return program

    def launch(self, task, rect=None) -> int:
        """Starts ``task`` (a name, or an id 0..63) by setting its Active bit in every PE of
        ``rect``; with ``rect=None``, in every PE whose program has that task. Returns the
        number of PEs."""
        return self._set_bits(task, rect, "launch", self._core.activate)

    def block(self, task, rect=None) -> int:
        """Sets the Block bit of ``task`` (a name, or an id 0..63) in every PE of ``rect``
        (None: every PE whose program has that task), as :meth:`launch` sets Active bits.
        A blocked id starts no task until unblocked [0390]."""
        return self._set_bits(task, rect, "block", self._per_ce("block"))

    def unblock(self, task, rect=None) -> int:
        """Clears the Block bit of ``task`` in every PE of ``rect`` (see :meth:`block`)."""
        return self._set_bits(task, rect, "unblock", self._per_ce("unblock"))

    def _per_ce(self, method: str):
        def apply(ids, tid):
            for i in ids:
                getattr(self._core.ce(int(i)), method)(tid)
        return apply

    def _set_bits(self, task, rect, what: str, apply_all) -> int:
        def apply(ids, tid):  # on a split wafer, to the compute elements held here
            apply_all(self._held(ids), tid)

        if rect is None:
            by_id = isinstance(task, numbers.Integral) and not isinstance(task, bool)
            groups = self._programs.ids_with(lambda prog: by_id or task in prog.tasks)
            if not groups:
                raise ConfigError(f"{what}: no loaded program has a task {task!r}")
            for prog, ids in groups:
                apply(ids.astype(np.uint32), prog.task_id(task))
            return sum(len(ids) for _, ids in groups)
        rect = self.rect(rect)
        ids = rect.ids(self.cols)
        for prog, ks in self._programs_over(rect, f"{what}({task!r})"):
            try:
                tid = prog.task_id(task)
            except ConfigError as e:
                p = rect.points()[ks[0]]
                raise ConfigError(f"{what}: PE {p}: {e}") from None
            apply(ids[ks], tid)
        return len(ids)

    # ---- memory copies ----------------------------------------------------------------------
    def _symbol_over(self, name: str, rect: Rect, what: str):
        """(symbol of the first group, [(addresses' ids, symbol)] per group)."""
        groups = []
        ids = rect.ids(self.cols)
        for prog, ks in self._programs_over(rect, what):
            try:
                sym = data_symbol(prog, name)
            except ConfigError as e:
                raise ConfigError(f"{what}: PE {rect.points()[ks[0]]}: {e}") from None
            groups.append((np.asarray(ks), ids[ks], sym))
        first = groups[0][2]
        for _, _, sym in groups[1:]:
            if (sym.count, sym.dtype) != (first.count, first.dtype):
                raise ConfigError(f"{what}: symbol {name!r} has different shapes across "
                                  f"{rect.describe()}: {first.count} x {first.dtype.name} and "
                                  f"{sym.count} x {sym.dtype.name}")
        return first, groups

    def memcpy_h2d(self, name: str, array, rect=None) -> None:
        """Copies ``array`` into the exported data symbol ``name`` of every PE of ``rect``.

        ``array`` has shape ``(height, width, n)`` (PE ``(row + i, col + j)`` gets
        ``array[i, j]``; ``(height, width)`` when n = 1) or ``(n,)`` (every PE gets the same
        values), where n is the symbol's element count. Values must be exactly
        representable in the symbol's type (else ConfigError: convert them first)."""
        rect = self.rect(rect)
        what = f"memcpy_h2d({name!r})"
        sym, groups = self._symbol_over(name, rect, what)
        arr = np.asarray(array)
        per_pe = arr.ndim >= 2 and arr.shape[:2] == rect.shape
        if per_pe:
            conv = symbol_values(sym, name, arr, per=rect.shape).reshape(rect.height * rect.width, -1)
        else:
            if arr.ndim > 1 or arr.size != sym.count:
                raise ConfigError(f"{what}: expected shape {rect.shape + (sym.count,)} (one "
                                  f"{sym.count}-element {sym.dtype.name} symbol per PE of "
                                  f"{rect.describe()}) or ({sym.count},) (the same for every PE), "
                                  f"got {arr.shape}")
            conv = symbol_values(sym, name, arr)
        for ks, ids, s in groups:
            if self._domain is not None:  # a split wafer: the PEs of this process's rows
                held = self._domain.mine(ids)
                ks, ids = ks[held], ids[held]
            if per_pe:
                data = np.ascontiguousarray(conv[ks]).view(np.uint8).reshape(len(ks), -1)
            else:
                data = np.ascontiguousarray(conv).view(np.uint8).ravel()
            self._core.write_memory(ids, s.address, data)

    def memcpy_d2h(self, name: str, rect=None) -> np.ndarray:
        """The exported data symbol ``name`` of every PE of ``rect`` as an array of shape
        ``(height, width, n)`` in the symbol's type. On a wafer split over processes every
        process calls it and gets the whole array (each reads its own rows)."""
        rect = self.rect(rect)
        sym, groups = self._symbol_over(name, rect, f"memcpy_d2h({name!r})")
        out = np.zeros((rect.height * rect.width, sym.count), dtype=sym.dtype)
        for ks, ids, s in groups:
            if self._domain is not None:
                held = self._domain.mine(ids)
                ks, ids = ks[held], ids[held]
            raw = self._core.read_memory(ids, s.address, s.nbytes)
            out[ks] = raw.view(sym.dtype).reshape(len(ks), sym.count)
        if self._domain is not None:  # the other processes' rows
            held = self._domain.mine(rect.ids(self.cols))
            self._domain.gather_rows(held, out[held], out)
        return out.reshape(rect.height, rect.width, sym.count)

    # ---- streams through edge ports -----------------------------------------------------------
    def stream(self, at, color: int, values, *, dtype: str = "fp16", sw: int = 1, index=None,
               ctrl=None, cycle=None, overflow: str = "error") -> int:
        """Sends ``values`` on ``color`` from the host port ``at`` (an edge port: a point just
        outside the border), encoded as ``dtype`` wavelets (16-bit types one per sparse
        wavelet with ``index`` when ``sw=1``, two per dense wavelet otherwise [0502]).
        Values the type cannot hold raise ``ConfigError``: integer types take whole numbers
        in their range; fp16/fp32 round to nearest, and a finite value beyond their range
        becomes inf only with ``overflow="inf"``. Returns the number of wavelets; read the
        other end with ``w.collect(at).values(dtype, color=...)``."""
        data = encode_values(values, dtype, sw, overflow=overflow)
        return self.inject(at, color, data, index=0 if index is None else index,
                           ctrl=False if ctrl is None else ctrl, cycle=cycle)

    def close(self, at, color: int, index: int, *, cycle=None) -> None:
        """Sends a control (closeout) wavelet on ``color`` whose index starts task
        ``index & 63`` at the receiving PE [0371], [0419]."""
        self.inject(at, color, 0, index=index, ctrl=True, cycle=cycle)

    def send_control(self, at, color: int, commands=(), *, arg: int = 0, task: int = 0,
                     switch_only: bool = False, cycle=None) -> None:
        """Sends a control wavelet on ``color`` from the host port ``at`` carrying switch
        ``commands`` (``commands[h]`` for the router h hops on; hop 0 is the router of
        ``at``), the 16-bit ``arg`` (r2 of the control task ``task`` it starts at the
        receiving CE), or, with ``switch_only``, for the routers only
        (:mod:`wafersim.switches`, docs/fabric.md)."""
        data = control_data(commands, arg, switch_only=switch_only)
        self.inject(at, color, data, index=_task_id(task), ctrl=True, cycle=cycle)

    # ---- streams into and out of any PE's compute element ---------------------------------------
    def stream_h2d(self, color: int, values, rect=None, *, dtype: str = "fp16", sw: int = 1,
                   index=None, ctrl=None) -> int:
        """Streams ``values`` on ``color`` straight into the input queues of the compute
        elements of ``rect``, as if their routers sent them down the off-ramp: at most one
        wavelet per PE and cycle, in order, only while the CE does not stall the color.

        ``values`` has shape ``(height, width, n)`` (PE ``(row + i, col + j)`` gets
        ``values[i, j]``) or is flat, filling the rectangle's PEs in row-major order, n
        each. They are encoded as for :meth:`stream`; ``index`` and ``ctrl`` broadcast
        against ``(height, width, wavelets)``. Returns the wavelets per PE."""
        color = self._fabric_color(color)
        rect = self.rect(rect)
        npe = rect.height * rect.width
        arr = np.asarray(values)
        if arr.ndim >= 2 and arr.shape[:2] == rect.shape:
            per_pe = arr.reshape(npe, -1)
        elif arr.ndim == 1 and arr.size % npe == 0:
            per_pe = arr.reshape(npe, -1)
        else:
            raise ConfigError(f"stream_h2d: values must have shape {rect.shape + ('n',)} or be "
                              f"flat with a multiple of {npe} elements (the PEs of "
                              f"{rect.describe()}), got shape {arr.shape}")
        data = np.stack([encode_values(v, dtype, sw) for v in per_pe]) if per_pe.size else \
            np.zeros((npe, 0), np.uint32)
        k = data.shape[1]

        def column(value, name, hi):
            a = np.asarray(0 if value is None else value)
            if not (np.issubdtype(a.dtype, np.integer) or a.dtype == bool):
                raise ConfigError(f"stream_h2d: {name} must be integers, got dtype {a.dtype}")
            if a.ndim >= 2 and a.shape[:2] == rect.shape:
                a = a.reshape(npe, -1)
            try:
                a = np.broadcast_to(a, (npe, k))
            except ValueError:
                raise ConfigError(f"stream_h2d: {name} has shape {np.shape(value)}, which does "
                                  f"not match {k} wavelet(s) per PE of {rect.describe()}") from None
            if a.size and (a.min() < 0 or a.max() > hi):
                raise ConfigError(f"stream_h2d: {name} must be in 0..{hi}")
            return np.ascontiguousarray(a, np.uint16 if hi > 1 else np.uint8).ravel()

        idx, ctl = column(index, "index", 0xFFFF), column(ctrl, "ctrl", 1)
        ids = rect.ids(self.cols)
        if self._domain is not None:  # a split wafer: the PEs of this process's rows
            self._check_programs(rect, "stream_h2d")
            held = self._domain.mine(ids)
            ids, data = ids[held], data[held]
            idx, ctl = idx.reshape(npe, k)[held].ravel(), ctl.reshape(npe, k)[held].ravel()
        self._core.feed_ces(ids, color, np.ascontiguousarray(data).ravel(), idx, ctl)
        return k

    def capture(self, color: int, rect=None, *, on: bool = True) -> None:
        """From now on (``on=False``: no longer), what the compute elements of ``rect``
        send on ``color`` goes to the host instead of their routers (one wavelet per cycle,
        never stalled); read it with :meth:`stream_d2h`. Lasts across program loads."""
        color = self._fabric_color(color)
        rect = self.rect(rect)
        self._check_programs(rect, "capture")
        self._core.set_ce_capture(self._held(rect.ids(self.cols)), color, bool(on))

    def stream_d2h(self, color: int, rect=None, *, dtype: str = "fp16", sw: int = 1,
                   include_control: bool = False) -> np.ndarray:
        """Takes the values the compute elements of ``rect`` sent on ``color`` to the host
        (see :meth:`capture`) as an array of shape ``(height, width, n)``, oldest first.
        Every PE must have sent the same number (else ConfigError, and nothing is taken:
        take them one PE at a time). Control wavelets are left out unless
        ``include_control``."""
        color = self._fabric_color(color)
        rect = self.rect(rect)
        ids = rect.ids(self.cols)
        self._check_programs(rect, "stream_d2h")
        held = self._held(ids)
        raw = self._core.captured(held, color, False)
        if self._domain is not None:  # every process's rows, in router order
            raw = self._domain.merge_rows(dict(raw))
        keep = np.ones(len(raw["data"]), bool) if include_control else raw["ctrl"] == 0
        # a rectangle's ids ascend, and what comes back is grouped PE by PE in that order
        counts = np.bincount(np.searchsorted(ids, raw["router"][keep]), minlength=len(ids))
        if len(set(counts.tolist())) > 1:
            pts = rect.points()
            detail = ", ".join(f"PE {pts[i]}: {int(c)}" for i, c in enumerate(counts[:8]))
            more = ", ..." if len(pts) > 8 else ""
            raise ConfigError(f"stream_d2h(color {color}): the PEs of {rect.describe()} sent "
                              f"different numbers of wavelets ({detail}{more}); take them one "
                              "PE at a time (rect=(row, col))")
        self._core.captured(held, color, True)
        vals = decode_values(raw["data"][keep], dtype, sw)
        return vals.reshape(rect.height, rect.width, -1)

    # ---- statistics and traces ----------------------------------------------------------------
    def _pe_run_stats(self) -> PeStats:
        table = self._core.ce_run_stats_table()
        if self._domain is not None:  # each process ran the PEs of its rows
            by_pe = self._domain.merge_pe_stats(table)
        else:
            ids, ends, blob, full = table
            by_pe = PackedPeStats(self.cols, ids, ends - np.diff(ends, prepend=0), ends, blob,
                                  full)
        return PeStats(self.rows, self.cols, by_pe, unpack=core.ce_stats_unpack)

    def _trace_events(self, pes: PeStats) -> list[dict]:
        events = []
        for (r, c), s in pes.items():
            prog = self._programs.at(r * self.cols + c)
            names = {tid: n for n, tid in prog.tasks.items()} if prog else {}
            events += trace_events(s, r * self.cols + c, f"PE({r},{c})", names)
        return events

    def _write_trace(self, path, pes: PeStats) -> Path:
        return write_chrome_trace(path, self._trace_events(pes))
