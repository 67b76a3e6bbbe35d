"""One processing element's compute element, on a test bench of its own.

:class:`LonePE` runs a program on a single compute element exactly as the fabric will run
it (the same C++ object and cycle contract), with a minimal router around it: you inject
wavelets per color from numpy arrays, choose colors that loop from the CE's output back to
its input (the on-ramp -> off-ramp route of seed 000 [0092]-[0093] that self-waking tasks
use [0413]), and collect what it sends on every other color. It is the kernel writer's
unit-test tool; see docs/compute_element.md.

    pe = ws.pe.LonePE(loopback=[5])
    pe.load(ws.asm.assemble(source))
    pe.write("w", weights)
    pe.inject(3, x, dtype="fp16", index=np.arange(len(x)))
    pe.launch("main")
    stats = pe.run()
    y = pe.output_values(7, "fp16")
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from . import _core
from .asm import Program, assemble, disassemble
from .defaults import DEFAULTS
from .errors import ConfigError, MemoryAccessError, WaferError

__all__ = ["LonePE", "PICKER_POLICIES", "load_program", "write_symbol", "read_symbol"]

_p = _core.pe

#: Picker policies [0375]: "round_robin" and "pick_from_last".
PICKER_POLICIES = {"round_robin": _p.PickerPolicy.round_robin,
                   "pick_from_last": _p.PickerPolicy.pick_from_last}

_ELEM = {"fp16": np.float16, "i16": np.int16, "u16": np.uint16,
         "fp32": np.float32, "i32": np.int32, "u32": np.uint32}


def _int_arg(name, value, lo, hi):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        raise ConfigError(f"{name} must be an integer in {lo}..{hi}, got {value!r}")
    return int(value)


def _mask(colors, name: str) -> int:
    m = 0
    for c in colors:
        m |= 1 << _int_arg(f"{name} color", c, 0, 63)
    return m


def _ids(mask: int) -> set[int]:
    return {i for i in range(64) if (mask >> i) & 1}


class LonePE:
    """A compute element with a loopback/injection/sink bench around it.

    Parameters default to :data:`wafersim.DEFAULTS`. ``loopback`` lists fabric colors
    routed from the CE's on ramp back to its off ramp through a router queue of
    ``router_queue_depth`` entries; every other fabric color the CE sends is collected
    (see :meth:`output`). ``picker`` is ``"round_robin"`` or ``"pick_from_last"``
    [0375]; ``task_start_latency`` is the cycles from a pick to the task's first issue.
    ``trace=True`` records task spans for :meth:`write_trace`.
    """

    def __init__(self, *, fabric_colors: int | None = None, memory_bytes: int | None = None,
                 code_bytes: int | None = None, input_queue_depth: int | None = None,
                 output_queue_depth: int | None = None, microthreads: int | None = None,
                 task_start_latency: int | None = None, picker: str = "round_robin",
                 loopback=(), router_queue_depth: int | None = None, rng_seed: int = 0,
                 rng_resources: int | None = None, trace: bool = False,
                 position: tuple[int, int] = (0, 0)):
        cfg = _p.CeConfig()
        d = DEFAULTS

        def pick(v, key):
            return d[key] if v is None else v

        cfg.fabric_colors = _int_arg("fabric_colors", pick(fabric_colors, "fabric_colors"), 1, 32)
        cfg.memory_bytes = _int_arg("memory_bytes", pick(memory_bytes, "pe_memory_bytes"), 16, 1 << 20)
        cfg.code_bytes = _int_arg("code_bytes", pick(code_bytes, "pe_code_bytes"), 8, 1 << 20)
        cfg.input_queue_depth = _int_arg("input_queue_depth",
                                         pick(input_queue_depth, "ce_input_queue_depth"), 2, 255)
        cfg.output_queue_depth = _int_arg("output_queue_depth",
                                          pick(output_queue_depth, "ce_output_queue_depth"), 1, 255)
        cfg.microthreads = _int_arg("microthreads", pick(microthreads, "microthreads"), 1, 8)
        cfg.task_start_latency = _int_arg("task_start_latency",
                                          pick(task_start_latency, "task_start_latency"), 1, 64)
        cfg.rng_resources = _int_arg("rng_resources", pick(rng_resources, "rng_resources"), 1, 7)
        cfg.rng_seed = _int_arg("rng_seed", rng_seed, 0, 2**64 - 1)
        if picker not in PICKER_POLICIES:
            raise ConfigError(f"picker must be one of {', '.join(PICKER_POLICIES)}, got {picker!r}")
        cfg.picker = PICKER_POLICIES[picker]
        cfg.trace = bool(trace)
        cfg.row, cfg.col = (int(position[0]), int(position[1]))
        depth = _int_arg("router_queue_depth", pick(router_queue_depth, "router_queue_depth"), 1, 64)
        self._pe = _p.LonePe(cfg, _mask(loopback, "loopback"), depth)
        self.config = cfg
        self.program: Program | None = None

    # ---- program and memory -------------------------------------------------------------
    def load(self, program: Program | str) -> Program:
        """Loads code, initial data and the Base register; a string is assembled first."""
        self.program = load_program(self._pe, program, self.config.data_bytes)
        return self.program

    def _program(self) -> Program:
        if self.program is None:
            raise ConfigError("no program loaded: call load() first")
        return self.program

    def write(self, name: str, values) -> None:
        """Copies ``values`` into the exported data symbol ``name`` (host -> device)."""
        write_symbol(self._pe, self._program(), name, values)

    def read(self, name: str) -> np.ndarray:
        """A copy of the exported data symbol ``name`` (device -> host)."""
        return read_symbol(self._pe, self._program(), name)

    def write_memory(self, address: int, data) -> None:
        buf = np.frombuffer(bytes(data), dtype=np.uint8).copy() if isinstance(data, (bytes, bytearray)) \
            else np.ascontiguousarray(data).view(np.uint8).ravel().copy()
        self._pe.write_memory(_int_arg("address", address, 0, 2**32 - 1), buf)

    def read_memory(self, address: int, nbytes: int) -> np.ndarray:
        return self._pe.read_memory(_int_arg("address", address, 0, 2**32 - 1),
                                    _int_arg("nbytes", nbytes, 0, 2**32 - 1))

    def disassemble(self, first: int = 0, count: int = 16) -> str:
        """A listing of the instructions in PE memory (what the CE will fetch)."""
        words = [self._pe.fetch_word(i) for i in range(first, first + count)]
        return disassemble(words, first)

    # ---- tasks and wavelets -------------------------------------------------------------
    def launch(self, task) -> None:
        """Starts a task: sets the Active bit of its id (a name from the program, or 0..63)."""
        tid = self._program().task_id(task) if isinstance(task, str) else _int_arg("task", task, 0, 63)
        self._pe.activate(tid)

    def inject(self, color: int, values, *, dtype: str = "fp16", sw: int = 1, index=None,
               ctrl=None, start: int = 0, interval: int = 1) -> int:
        """Queues wavelets carrying ``values`` on ``color``; returns how many.

        16-bit types with ``sw=1`` send one element per (sparse) wavelet with ``index``;
        ``sw=2``/``4`` pack two elements per (dense) wavelet [0502]; 32-bit types send one
        element per wavelet. The k-th wavelet is due at ``start + k * interval``.
        """
        if dtype not in _ELEM:
            raise ConfigError(f"dtype must be one of {', '.join(_ELEM)}, got {dtype!r}")
        if sw not in (1, 2, 4):
            raise ConfigError(f"sw must be 1, 2 or 4, got {sw!r}")
        arr = np.asarray(values)
        if arr.dtype.kind not in "fiub":
            raise ConfigError(f"values must be numbers, got dtype {arr.dtype}")
        elems = arr.astype(_ELEM[dtype]).ravel()
        if np.dtype(_ELEM[dtype]).itemsize == 4:
            data = elems.view(np.uint32).astype(np.uint32)
        else:
            bits = elems.view(np.uint16).astype(np.uint32)
            if sw == 1:
                data = bits
            else:
                if bits.size % 2:
                    bits = np.append(bits, np.uint32(0))
                data = bits[0::2] | (bits[1::2] << 16)
        return self.inject_wavelets(color, data, index=index, ctrl=ctrl, start=start,
                                    interval=interval)

    def inject_wavelets(self, color: int, data, *, index=None, ctrl=None, start: int = 0,
                        interval: int = 1) -> int:
        """Queues raw wavelets: 32-bit ``data``, optional 16-bit ``index`` and ``ctrl`` bits."""
        data = np.ascontiguousarray(np.asarray(data, dtype=np.uint64).astype(np.uint32))
        n = data.size

        def per_wavelet(v, dt, name):
            if v is None:
                return np.zeros(0, dtype=dt)
            a = np.asarray(v)
            if a.ndim == 0:
                a = np.full(n, a)
            if a.size != n:
                raise ConfigError(f"{name} must be a scalar or have one entry per wavelet ({n}), "
                                  f"got shape {a.shape}")
            return np.ascontiguousarray(a.astype(dt))

        self._pe.inject(_int_arg("color", color, 0, 63), data, per_wavelet(index, np.uint16, "index"),
                        per_wavelet(ctrl, np.uint8, "ctrl"), _int_arg("start", start, 0, 2**63),
                        _int_arg("interval", interval, 1, 2**31))
        return n

    def pending_injections(self, color: int) -> int:
        """Injected wavelets on ``color`` the CE has not accepted yet (backpressure holds
        them at the producer)."""
        return self._pe.pending_injections(_int_arg("color", color, 0, 63))

    def close(self, color: int, index: int, *, start: int = 0) -> None:
        """Queues a control (closeout) wavelet whose index starts task ``index & 63`` [0371]."""
        self.inject_wavelets(color, [0], index=[_int_arg("index", index, 0, 65535)], ctrl=[1],
                             start=start)

    def stall_output(self, color: int, stalled: bool = True) -> None:
        """Makes the sink refuse ``color`` so the CE's output queue fills [0337]."""
        self._pe.set_sink_stalled(_int_arg("color", color, 0, 63), bool(stalled))

    def output(self, color: int) -> dict:
        """Everything the CE sent on ``color`` (not looped back): arrays ``cycle``, ``data``,
        ``index``, ``ctrl``."""
        return self._pe.sink(_int_arg("color", color, 0, 63))

    def output_values(self, color: int, dtype: str = "fp16", sw: int = 1, *,
                      include_control: bool = False) -> np.ndarray:
        """The element values sent on ``color`` (control wavelets left out by default)."""
        if dtype not in _ELEM:
            raise ConfigError(f"dtype must be one of {', '.join(_ELEM)}, got {dtype!r}")
        out = self.output(color)
        data = out["data"] if include_control else out["data"][~out["ctrl"]]
        if np.dtype(_ELEM[dtype]).itemsize == 4:
            return data.view(_ELEM[dtype]).copy()
        lo = (data & 0xFFFF).astype(np.uint16)
        if sw == 1:
            return lo.view(_ELEM[dtype])
        hi = (data >> 16).astype(np.uint16)
        return np.stack([lo, hi], axis=1).ravel().view(_ELEM[dtype])

    # ---- running ------------------------------------------------------------------------
    def run(self, cycles: int | None = None, *, max_cycles: int = 1_000_000,
            watchdog: int = 10_000, trace: str | Path | None = None) -> dict:
        """Runs ``cycles`` cycles, or (by default) until the CE is idle and nothing is in
        flight. Returns :meth:`stats`. Raises :class:`wafersim.DeadlockError` (with a
        report of what waits on what) when nothing moved for ``watchdog`` cycles, and
        :class:`wafersim.WaferError` when ``max_cycles`` pass without finishing.
        ``trace`` writes a Chrome/Perfetto trace of the task spans."""
        if cycles is not None:
            self._pe.run(_int_arg("cycles", cycles, 0, 2**63))
        else:
            done = self._pe.run_until_idle(_int_arg("max_cycles", max_cycles, 0, 2**63),
                                           _int_arg("watchdog", watchdog, 0, 2**63))
            if not done:
                raise WaferError(f"the PE did not finish within {max_cycles} cycles; "
                                 f"pass cycles= to run a fixed number\n{self.describe_wait()}")
        if trace is not None:
            self.write_trace(trace)
        return self.stats()

    @property
    def cycle(self) -> int:
        return self._pe.cycle

    @property
    def idle(self) -> bool:
        return self._pe.idle and not self._pe.in_flight

    def stats(self) -> dict:
        """Cycles busy per task, instructions by opcode, stalls by cause, wavelets in and
        out, vector element operations, microthread activity, queue high-water marks."""
        s = self._pe.stats()
        s["cycle"] = self._pe.cycle
        return s

    def reset_stats(self) -> None:
        self._pe.reset_stats()

    def write_trace(self, path: str | Path) -> Path:
        """Writes the recorded task and microthread spans as a Chrome/Perfetto trace."""
        if not self.config.trace:
            raise ConfigError("tracing is off: create the LonePE with trace=True")
        s = self._pe.stats()
        names = {tid: name for name, tid in (self.program.tasks.items() if self.program else [])}
        events = [{"name": "process_name", "ph": "M", "pid": 0,
                   "args": {"name": f"PE({self.config.row},{self.config.col})"}}]
        for tid, how, start, end in s["task_spans"]:
            events.append({"name": f"task {names.get(tid, tid)}", "cat": how, "ph": "X",
                           "ts": start, "dur": end - start + 1, "pid": 0, "tid": 0,
                           "args": {"id": tid, "start": how}})
        for slot, owner, pc, start, end in s["microthread_spans"]:
            events.append({"name": f"microthread {slot} (task {names.get(owner, owner)})",
                           "ph": "X", "ts": start, "dur": end - start + 1, "pid": 0,
                           "tid": 1 + slot, "args": {"pc": pc}})
        path = Path(path)
        path.write_text(json.dumps({"traceEvents": events, "displayTimeUnit": "ns",
                                    "otherData": {"time unit": "1 us = 1 cycle"}}))
        return path

    # ---- state --------------------------------------------------------------------------
    def gpr(self, r: int) -> int:
        return self._pe.gpr(_int_arg("register", r, 0, 15))

    def set_gpr(self, r: int, value: int) -> None:
        self._pe.set_gpr(_int_arg("register", r, 0, 15), _int_arg("value", value, 0, 65535))

    def dsr(self, kind: str, n: int) -> int:
        """The raw 48-bit descriptor in DSR ``kind`` ("s0", "s1", "d") number ``n``."""
        return self._pe.dsr(kind, _int_arg("DSR", n, 0, 63))

    def xdsr(self, n: int) -> int:
        return self._pe.xdsr(_int_arg("XDSR", n, 0, 63))

    def stride_register(self, n: int) -> int:
        return self._pe.stride_reg(_int_arg("stride register", n, 0, 63))

    @property
    def flag(self) -> bool:
        return self._pe.flag

    @property
    def blocked(self) -> set[int]:
        """Ids whose Block bit is set [0397]."""
        return _ids(self._pe.blocked_ids)

    @property
    def active(self) -> set[int]:
        """Ids whose Active bit is set [0385]."""
        return _ids(self._pe.active_ids)

    def input_queue(self, color: int) -> int:
        return self._pe.input_queue_size(_int_arg("color", color, 0, 63))

    def output_queue(self, color: int) -> int:
        return self._pe.output_queue_size(_int_arg("color", color, 0, 63))

    @property
    def running_task(self) -> int | None:
        t = self._pe.running_task
        return None if t < 0 else t

    @property
    def pc(self) -> int:
        return self._pe.pc

    @property
    def microthreads_in_use(self) -> int:
        return self._pe.microthreads_in_use

    def describe_wait(self) -> str:
        """What the CE is doing and what each waiting part waits on."""
        return self._pe.describe_wait()


# ---- program images: shared with the wafer's per-PE handles ---------------------------
# `target` is any binding object with `base`, `load_code(first, words)`,
# `write_memory(addr, bytes)` and `read_memory(addr, n)` (the lone-PE bench, and later a
# PE of a wafer).

def load_program(target, program: Program | str, data_bytes: int) -> Program:
    """Writes a program's code, initial data and Base register into a compute element."""
    if isinstance(program, str):
        program = assemble(program)
    if not isinstance(program, Program):
        raise ConfigError(f"load() takes a Program or assembly text, got {type(program).__name__}")
    first, words = program.code_array()
    target.base = program.base
    target.load_code(first, words)
    for addr, data in program.data:
        if addr + len(data) > data_bytes:
            raise MemoryAccessError(
                f"program data at bytes {addr}..{addr + len(data)} does not fit the "
                f"{data_bytes} bytes of data memory")
        target.write_memory(addr, np.frombuffer(data, dtype=np.uint8).copy())
    return program


def _data_symbol(program: Program, name: str):
    sym = program.exported(name)
    if sym.kind != "data":
        raise ConfigError(f"symbol {name!r} is a task, not data")
    return sym


def write_symbol(target, program: Program, name: str, values) -> None:
    """Copies values into an exported data symbol, refusing wrong sizes and values the
    symbol's type cannot hold exactly."""
    sym = _data_symbol(program, name)
    arr = np.asarray(values)
    if arr.dtype.kind not in "fiub":
        raise ConfigError(f"write({name!r}): values must be numbers, got dtype {arr.dtype}")
    if arr.size != sym.count:
        raise ConfigError(f"write({name!r}): the symbol holds {sym.count} {sym.dtype.name} "
                          f"elements, got an array of shape {arr.shape}")
    with np.errstate(all="ignore"):
        conv = arr.astype(sym.dtype).ravel()
    back = conv.astype(arr.dtype) if arr.dtype != sym.dtype else conv
    flat = arr.ravel()
    same = back == flat
    if arr.dtype.kind == "f":
        same |= np.isnan(back) & np.isnan(flat)
    if not np.all(same):
        raise ConfigError(f"write({name!r}): values are not exactly representable as "
                          f"{sym.dtype.name} (convert them first, e.g. with "
                          f"wafersim.numerics.round_fp16)")
    target.write_memory(sym.address, conv.view(np.uint8).copy())


def read_symbol(target, program: Program, name: str) -> np.ndarray:
    """A copy of an exported data symbol."""
    sym = _data_symbol(program, name)
    return target.read_memory(sym.address, sym.nbytes).view(sym.dtype).copy()
